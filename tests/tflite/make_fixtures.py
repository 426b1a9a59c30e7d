#!/usr/bin/python3
"""Writes the small int8 TFLite models of tests/tflite/ (committed), one per
operator and rounding situation the importer handles, with an int8 input
(<name>.in.npy, TFLite's NHWC order) and, for the integer-arithmetic
operators, the expected int8 output (<name>.out.npy) computed here by an
independent Python implementation of TFLite's integer rules (exact integers,
written from the rules of docs/numerics.md §10, not from EasyNPU's C).  The
transcendental kernels (SOFTMAX, LOGISTIC, TANH, HARD_SWISH) have no .out.npy:
tests/unit/test_tfl_gemmlowp.cpp checks them against gemmlowp instead.

The FlatBuffers are built field by field from the TFLite schema's field
numbers (a second, independent encoding of the numbers the C reader uses),
with python3-flatbuffers' Builder; no generated schema code.

    /usr/bin/python3 tests/tflite/make_fixtures.py

Deterministic; needs python3-flatbuffers and python3-numpy (Debian).
"""
import math
import os

import flatbuffers
import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32

# TensorType, BuiltinOperator, BuiltinOptions
INT8, INT32, FLOAT32 = 9, 2, 0
OPS = dict(ADD=0, AVERAGE_POOL_2D=1, CONCATENATION=2, CONV_2D=3, DEPTHWISE_CONV_2D=4,
           DEQUANTIZE=6, FULLY_CONNECTED=9, LOGISTIC=14, MAX_POOL_2D=17, MUL=18, RESHAPE=22,
           SOFTMAX=25, TANH=28, PAD=34, MEAN=40, QUANTIZE=114, HARD_SWISH=117)
OPT = dict(CONV=1, DWCONV=2, POOL=5, FC=8, SOFTMAX=9, CONCAT=10, ADD=11, RESHAPE=17, MUL=21,
           PAD=22, REDUCER=27)
SAME, VALID = 0, 1
NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3


class Model:
    """Tensors, buffers and operators of one subgraph."""

    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [b""], [], []
        self.version, self.custom = 3, {}

    def tensor(self, name, shape, ttype=INT8, scale=None, zp=None, qdim=0, data=None,
               variable=False):
        buf = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(data).tobytes())
            buf = len(self.buffers) - 1
        if scale is not None:
            scale = [float(s) for s in np.atleast_1d(scale)]
            zp = [int(z) for z in np.atleast_1d(zp if zp is not None else 0)]
            if len(zp) == 1 and len(scale) > 1:
                zp = zp * len(scale)
        self.tensors.append(dict(name=name, shape=list(shape), type=ttype, scale=scale, zp=zp,
                                 qdim=qdim, buffer=buf, variable=variable))
        return len(self.tensors) - 1

    def op(self, name, ins, outs, opt_type=0, opt=()):
        """name: a BuiltinOperator name, a code (int), or "custom:NAME"."""
        if isinstance(name, str) and name.startswith("custom:"):
            code = 10000 + len(self.custom)
            self.custom[code] = name[7:]
        else:
            code = OPS[name] if isinstance(name, str) else name
        if code not in self.codes:
            self.codes.append(code)
        self.ops.append(dict(code=self.codes.index(code), ins=ins, outs=outs, opt_type=opt_type,
                             opt=list(opt)))

    def build(self, inputs, outputs):
        b = flatbuffers.Builder(1024)

        def vec_i32(v):
            return b.CreateNumpyVector(np.array(v, np.int32))

        def vec_tables(offs):
            b.StartVector(4, len(offs), 4)
            for o in reversed(offs):
                b.PrependUOffsetTRelative(o)
            return b.EndVector()

        bufs = []
        for data in self.buffers:
            d = b.CreateNumpyVector(np.frombuffer(data, np.uint8)) if data else None
            b.StartObject(3)
            if d is not None:
                b.PrependUOffsetTRelativeSlot(0, d, 0)  # Buffer.data
            bufs.append(b.EndObject())
        tens = []
        for t in self.tensors:
            name = b.CreateString(t["name"])
            shape = vec_i32(t["shape"])
            q = None
            if t["scale"] is not None:
                sc = b.CreateNumpyVector(np.array(t["scale"], np.float32))
                zp = b.CreateNumpyVector(np.array(t["zp"], np.int64))
                b.StartObject(7)
                b.PrependUOffsetTRelativeSlot(2, sc, 0)  # scale
                b.PrependUOffsetTRelativeSlot(3, zp, 0)  # zero_point
                b.PrependInt32Slot(6, t["qdim"], 0)      # quantized_dimension
                q = b.EndObject()
            b.StartObject(10)
            b.PrependUOffsetTRelativeSlot(0, shape, 0)   # shape
            b.PrependInt8Slot(1, t["type"], 0)           # type
            b.PrependUint32Slot(2, t["buffer"], 0)       # buffer
            b.PrependUOffsetTRelativeSlot(3, name, 0)    # name
            if t["variable"]:
                b.PrependBoolSlot(5, True, False)        # is_variable
            if q is not None:
                b.PrependUOffsetTRelativeSlot(4, q, 0)   # quantization
            tens.append(b.EndObject())
        ops = []
        for o in self.ops:
            ins, outs = vec_i32(o["ins"]), vec_i32(o["outs"])
            opt = None
            if o["opt_type"]:
                b.StartObject(8)
                for slot, kind, v in o["opt"]:
                    if kind == "i32":
                        b.PrependInt32Slot(slot, v, -12345)
                    elif kind == "u8":
                        b.PrependUint8Slot(slot, v, 255)
                    elif kind == "f32":
                        b.PrependFloat32Slot(slot, v, -1.0)
                opt = b.EndObject()
            b.StartObject(14)
            b.PrependUint32Slot(0, o["code"], 0xFFFFFFFF)  # opcode_index
            b.PrependUOffsetTRelativeSlot(1, ins, 0)
            b.PrependUOffsetTRelativeSlot(2, outs, 0)
            if opt is not None:
                b.PrependUint8Slot(3, o["opt_type"], 0)      # builtin_options_type
                b.PrependUOffsetTRelativeSlot(4, opt, 0)     # builtin_options
            ops.append(b.EndObject())
        sg_t, sg_o = vec_tables(tens), vec_tables(ops)
        sg_i, sg_out = vec_i32(inputs), vec_i32(outputs)
        sg_name = b.CreateString("main")
        b.StartObject(6)
        b.PrependUOffsetTRelativeSlot(0, sg_t, 0)
        b.PrependUOffsetTRelativeSlot(1, sg_i, 0)
        b.PrependUOffsetTRelativeSlot(2, sg_out, 0)
        b.PrependUOffsetTRelativeSlot(3, sg_o, 0)
        b.PrependUOffsetTRelativeSlot(4, sg_name, 0)
        sg = b.EndObject()
        codes = []
        for c in self.codes:
            cname = b.CreateString(self.custom[c]) if c in self.custom else None
            b.StartObject(4)
            if cname is not None:
                b.PrependInt8Slot(0, 32, 0)                # CUSTOM
                b.PrependUOffsetTRelativeSlot(1, cname, 0)  # custom_code
            else:
                b.PrependInt8Slot(0, min(c, 127), 0)  # deprecated_builtin_code
                b.PrependInt32Slot(3, c, 0)           # builtin_code
            codes.append(b.EndObject())
        v_codes, v_sgs, v_bufs = vec_tables(codes), vec_tables([sg]), vec_tables(bufs)
        desc = b.CreateString("EasyNPU test fixture")
        b.StartObject(5)
        b.PrependUint32Slot(0, self.version, 0)  # version
        b.PrependUOffsetTRelativeSlot(1, v_codes, 0)
        b.PrependUOffsetTRelativeSlot(2, v_sgs, 0)
        b.PrependUOffsetTRelativeSlot(3, desc, 0)
        b.PrependUOffsetTRelativeSlot(4, v_bufs, 0)
        b.Finish(b.EndObject(), file_identifier=b"TFL3")
        return bytes(b.Output())


# ---- TFLite's integer rules, independently (exact Python integers) ----------

def srdhm(a, b):
    """a * b / 2^31, nudge 2^30 (1 - 2^30 below zero), truncated."""
    if a == b == -(1 << 31):
        return (1 << 31) - 1
    p = a * b + ((1 << 30) if a * b >= 0 else 1 - (1 << 30))
    return p // (1 << 31) if p >= 0 else -((-p) // (1 << 31))


def rdbpot(x, e):
    """x / 2^e rounded half away from zero."""
    if e == 0:
        return x
    q, r = x >> e, x & ((1 << e) - 1)
    return q + (1 if r > ((1 << e) - 1) // 2 + (1 if x < 0 else 0) else 0)


def round_away(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def quant_mult(real):
    if real == 0:
        return 0, 0
    f, e = math.frexp(real)
    q = round_away(f * (1 << 31))
    if q == 1 << 31:
        q, e = q // 2, e + 1
    if e < -31:
        return 0, 0
    return q, e


def mbqm(x, q, shift):
    return rdbpot(srdhm(x * (1 << max(shift, 0)), q), max(-shift, 0))


def act_range(act, scale, zp):
    def q(f):
        return zp + int(round_away(float(F32(f) / F32(scale))))
    lo, hi = -128, 127
    if act in (RELU, RELU6):
        lo = max(lo, q(0.0))
    if act == RELU6:
        hi = min(hi, q(6.0))
    if act == RELU_N1_TO_1:
        lo, hi = max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi


def f64(x):
    return float(F32(x))


def pads(padding, n, k, s, d, out):
    ek = (k - 1) * d + 1
    return max((out - 1) * s + ek - n, 0) // 2 if padding == SAME else 0


def conv_ref(x, w, bias, zi, si, sw, so, zo, stride, dil, padding, act, out_hw, dw=False, mult=1):
    n, h, wd, c = x.shape
    kh, kw = w.shape[1], w.shape[2]
    co = w.shape[3] if dw else w.shape[0]
    oh, ow = out_hw
    pt, pl = pads(padding, h, kh, stride[0], dil[0], oh), pads(padding, wd, kw, stride[1], dil[1], ow)
    y = np.zeros((n, oh, ow, co), np.int64)
    lo, hi = act_range(act, so, zo)
    mults = [quant_mult(f64(si) * f64(sw[ch if len(sw) > 1 else 0]) / f64(so)) for ch in range(co)]
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for ch in range(co):
                    acc = int(bias[ch]) if bias is not None else 0
                    for ky in range(kh):
                        iy = oy * stride[0] - pt + ky * dil[0]
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            ix = ox * stride[1] - pl + kx * dil[1]
                            if ix < 0 or ix >= wd:
                                continue
                            if dw:
                                acc += (int(x[b, iy, ix, ch // mult]) - zi) * int(w[0, ky, kx, ch])
                            else:
                                acc += int(np.dot(x[b, iy, ix, :].astype(np.int64) - zi,
                                                  w[ch, ky, kx, :].astype(np.int64)))
                    q, e = mults[ch]
                    y[b, oy, ox, ch] = min(max(mbqm(acc, q, e) + zo, lo), hi)
    return y.astype(np.int8)


rng = np.random.default_rng(20261123)


def rand_i8(shape, lo=-128, hi=127):
    return rng.integers(lo, hi + 1, size=shape).astype(np.int8)


def save(name, model, inputs, outputs, x, y=None, extra=None):
    with open(os.path.join(OUT, name + ".tflite"), "wb") as f:
        f.write(model.build(inputs, outputs))
    np.save(os.path.join(OUT, name + ".in.npy"), x)
    if y is not None:
        np.save(os.path.join(OUT, name + ".out.npy"), np.asarray(y, np.int8))
    for suffix, arr in (extra or {}).items():
        np.save(os.path.join(OUT, name + suffix), arr)


# ---- the fixtures --------------------------------------------------------------

def conv_same_relu6():
    """CONV_2D 3x3 stride 2 SAME (asymmetric padding), per-channel, RELU6."""
    m = Model()
    si, zi, so, zo = 0.05, 3, 0.04, -20
    sw = np.array([0.01, 0.02, 0.005, 0.0125], np.float32)
    w = rand_i8((4, 3, 3, 2), -127, 127)
    bias = rng.integers(-300, 300, 4).astype(np.int32)
    x_t = m.tensor("x", [1, 7, 6, 2], scale=si, zp=zi)
    w_t = m.tensor("w", [4, 3, 3, 2], scale=sw, zp=0, qdim=0, data=w)
    b_t = m.tensor("b", [4], INT32, scale=si * sw, zp=0, data=bias)
    y_t = m.tensor("y", [1, 4, 3, 4], scale=so, zp=zo)
    m.op("CONV_2D", [x_t, w_t, b_t], [y_t], OPT["CONV"],
         [(0, "u8", SAME), (1, "i32", 2), (2, "i32", 2), (3, "u8", RELU6)])
    x = rand_i8((1, 7, 6, 2))
    y = conv_ref(x, w, bias, zi, si, sw, so, zo, (2, 2), (1, 1), SAME, RELU6, (4, 3))
    save("conv_same_relu6", m, [x_t], [y_t], x, y)


def dwconv_mult2():
    """DEPTHWISE_CONV_2D, depth multiplier 2, VALID, dilation 2, RELU; no bias."""
    m = Model()
    si, zi, so, zo = 0.1, -7, 0.08, -128
    sw = np.array([0.02, 0.01, 0.03, 0.015, 0.025, 0.0075], np.float32)
    w = rand_i8((1, 2, 2, 6), -127, 127)
    x_t = m.tensor("x", [1, 6, 5, 3], scale=si, zp=zi)
    w_t = m.tensor("w", [1, 2, 2, 6], scale=sw, zp=0, qdim=3, data=w)
    y_t = m.tensor("y", [1, 4, 3, 6], scale=so, zp=zo)
    m.op("DEPTHWISE_CONV_2D", [x_t, w_t, -1], [y_t], OPT["DWCONV"],
         [(0, "u8", VALID), (1, "i32", 1), (2, "i32", 1), (3, "i32", 2), (4, "u8", RELU),
          (5, "i32", 2), (6, "i32", 2)])
    x = rand_i8((1, 6, 5, 3))
    y = conv_ref(x, w, None, zi, si, sw, so, zo, (1, 1), (2, 2), VALID, RELU, (4, 3), dw=True, mult=2)
    save("dwconv_mult2", m, [x_t], [y_t], x, y)


def fc_flatten():
    """FULLY_CONNECTED on a 4-D input (TFLite flattens NHWC order), per-tensor."""
    m = Model()
    si, zi, sw, so, zo = 0.03, 10, 0.004, 0.05, -3
    w = rand_i8((5, 12), -127, 127)
    bias = rng.integers(-2000, 2000, 5).astype(np.int32)
    x_t = m.tensor("x", [1, 2, 3, 2], scale=si, zp=zi)
    w_t = m.tensor("w", [5, 12], scale=sw, zp=0, data=w)
    b_t = m.tensor("b", [5], INT32, scale=si * sw, zp=0, data=bias)
    y_t = m.tensor("y", [1, 5], scale=so, zp=zo)
    m.op("FULLY_CONNECTED", [x_t, w_t, b_t], [y_t], OPT["FC"], [(0, "u8", NONE)])
    x = rand_i8((1, 2, 3, 2))
    q, e = quant_mult(f64(si) * f64(sw) / f64(so))
    xf = x.reshape(1, 12).astype(np.int64) - zi
    acc = xf @ w.astype(np.int64).T + bias
    y = np.array([[min(max(mbqm(int(a), q, e) + zo, -128), 127) for a in acc[0]]])
    save("fc_flatten", m, [x_t], [y_t], x, y)


def add_ref(a, b, s1, z1, s2, z2, so, zo, act):
    tm = 2 * f64(max(F32(s1), F32(s2)))
    q1, e1 = quant_mult(f64(s1) / tm)
    q2, e2 = quant_mult(f64(s2) / tm)
    qo, eo = quant_mult(tm / ((1 << 20) * f64(so)))
    lo, hi = act_range(act, so, zo)
    out = np.zeros(np.broadcast(a, b).shape, np.int64)
    aa, bb = np.broadcast_arrays(a, b)
    for i in np.ndindex(out.shape):
        t1 = rdbpot(srdhm((int(aa[i]) - z1) << 20, q1), -e1)
        t2 = rdbpot(srdhm((int(bb[i]) - z2) << 20, q2), -e2)
        out[i] = min(max(rdbpot(srdhm(t1 + t2, qo), -eo) + zo, lo), hi)
    return out.astype(np.int8)


def add_ties():
    """ADD of two activations whose scales are in the ratio 1:4 (terms of
    exact multiples; many output ties), RELU; then ADD of a broadcast
    constant [C]."""
    m = Model()
    s1, z1, s2, z2, so, zo = 0.02, -5, 0.08, 7, 0.04, -128
    sc, zc, so2, zo2 = 0.01, 3, 0.05, 0
    c = rand_i8((3,))
    a_t = m.tensor("a", [1, 4, 4, 3], scale=s1, zp=z1)
    b_t = m.tensor("b", [1, 4, 4, 3], scale=s2, zp=z2)
    y_t = m.tensor("y", [1, 4, 4, 3], scale=so, zp=zo)
    c_t = m.tensor("c", [3], scale=sc, zp=zc, data=c)
    y2_t = m.tensor("y2", [1, 4, 4, 3], scale=so2, zp=zo2)
    m.op("ADD", [a_t, b_t], [y_t], OPT["ADD"], [(0, "u8", RELU)])
    m.op("ADD", [y_t, c_t], [y2_t], OPT["ADD"], [(0, "u8", NONE)])
    a, b = rand_i8((1, 4, 4, 3)), rand_i8((1, 4, 4, 3))
    y = add_ref(a, b, s1, z1, s2, z2, so, zo, RELU)
    y2 = add_ref(y, c.reshape(1, 1, 1, 3), so, zo, sc, zc, so2, zo2, NONE)
    save("add_ties", m, [a_t, b_t], [y2_t], a, y2, {".in1.npy": b})


def mul_relu():
    m = Model()
    s1, z1, s2, z2, so, zo = 0.05, 2, 0.1, -9, 0.02, -30
    a_t = m.tensor("a", [1, 3, 3, 4], scale=s1, zp=z1)
    b_t = m.tensor("b", [1, 3, 3, 4], scale=s2, zp=z2)
    y_t = m.tensor("y", [1, 3, 3, 4], scale=so, zp=zo)
    m.op("MUL", [a_t, b_t], [y_t], OPT["MUL"], [(0, "u8", RELU_N1_TO_1)])
    a, b = rand_i8((1, 3, 3, 4)), rand_i8((1, 3, 3, 4))
    q, e = quant_mult(f64(s1) * f64(s2) / f64(so))
    lo, hi = act_range(RELU_N1_TO_1, so, zo)
    y = np.zeros(a.shape, np.int64)
    for i in np.ndindex(a.shape):
        y[i] = min(max(mbqm((int(a[i]) - z1) * (int(b[i]) - z2), q, e) + zo, lo), hi)
    save("mul_relu", m, [a_t, b_t], [y_t], a, y, {".in1.npy": b})


def avg_round(s, n):
    return (s + n // 2) // n if s > 0 else -((-(s - n // 2)) // n)


def pools():
    """AVERAGE_POOL_2D 2x2 stride 2 (4 elements: ties of both signs), then
    MAX_POOL_2D 3x3 stride 1 SAME with RELU, then a global 2x2 average."""
    m = Model()
    s, z = 0.1, -4
    x_t = m.tensor("x", [1, 8, 6, 5], scale=s, zp=z)
    a_t = m.tensor("avg", [1, 4, 3, 5], scale=s, zp=z)
    p_t = m.tensor("max", [1, 4, 3, 5], scale=s, zp=z)
    g_t = m.tensor("gap", [1, 1, 1, 5], scale=s, zp=z)
    m.op("AVERAGE_POOL_2D", [x_t], [a_t], OPT["POOL"],
         [(0, "u8", VALID), (1, "i32", 2), (2, "i32", 2), (3, "i32", 2), (4, "i32", 2), (5, "u8", NONE)])
    m.op("MAX_POOL_2D", [a_t], [p_t], OPT["POOL"],
         [(0, "u8", SAME), (1, "i32", 1), (2, "i32", 1), (3, "i32", 3), (4, "i32", 3), (5, "u8", RELU)])
    m.op("AVERAGE_POOL_2D", [p_t], [g_t], OPT["POOL"],
         [(0, "u8", VALID), (1, "i32", 1), (2, "i32", 1), (3, "i32", 3), (4, "i32", 4), (5, "u8", NONE)])
    x = rand_i8((1, 8, 6, 5))
    av = np.zeros((1, 4, 3, 5), np.int64)
    for oy in range(4):
        for ox in range(3):
            for c in range(5):
                av[0, oy, ox, c] = avg_round(int(x[0, 2 * oy:2 * oy + 2, 2 * ox:2 * ox + 2, c].astype(np.int64).sum()), 4)
    lo, _ = act_range(RELU, s, z)
    mx = np.zeros_like(av)
    for oy in range(4):
        for ox in range(3):
            win = av[0, max(oy - 1, 0):oy + 2, max(ox - 1, 0):ox + 2, :]
            mx[0, oy, ox, :] = np.maximum(win.max(axis=(0, 1)), lo)
    gp = np.array([[[[avg_round(int(mx[0, :, :, c].sum()), 12) for c in range(5)]]]])
    save("pools", m, [x_t], [g_t], x, gp)


def mean_reshape():
    """MEAN over H, W without keep_dims (TFLite Micro's QuantizedMeanOrSum),
    other output scale; 3x5 = 15 elements."""
    m = Model()
    si, zi, so, zo = 0.07, 9, 0.03, -2
    x_t = m.tensor("x", [1, 3, 5, 4], scale=si, zp=zi)
    ax_t = m.tensor("axes", [2], INT32, data=np.array([1, 2], np.int32))
    y_t = m.tensor("y", [1, 4], scale=so, zp=zo)
    m.op("MEAN", [x_t, ax_t], [y_t], OPT["REDUCER"], [(0, "u8", 0)])
    x = rand_i8((1, 3, 5, 4))
    q, e = quant_mult(f64(si) / f64(so))
    n = 15
    k = min(n.bit_length() - 1, 32, 31 + e)
    q2, e2 = (q << k) // n, e - k
    y = np.array([[min(max(mbqm(int(x[0, :, :, c].astype(np.int64).sum()) - zi * n, q2, e2) + zo, -128), 127)
                   for c in range(4)]])
    save("mean_reshape", m, [x_t], [y_t], x, y)


def pad_concat_reshape():
    """PAD (H and W) into a CONV_2D, CONCATENATION on channels, then a
    RESHAPE whose row-major order differs between NHWC and NCHW, then
    QUANTIZE int8 -> int8 (requantize by exactly 0.25: double rounding)."""
    m = Model()
    s, z = 0.05, -10
    x_t = m.tensor("x", [1, 4, 4, 2], scale=s, zp=z)
    pads_t = m.tensor("pads", [4, 2], INT32, data=np.array([[0, 0], [1, 1], [2, 0], [0, 0]], np.int32))
    p_t = m.tensor("padded", [1, 6, 6, 2], scale=s, zp=z)
    y2_t = m.tensor("y2", [1, 4, 4, 3], scale=s, zp=z)
    w = rand_i8((1, 3, 3, 2), -127, 127)
    w_t = m.tensor("w", [1, 3, 3, 2], scale=0.02, zp=0, data=w)
    c_t = m.tensor("conv", [1, 4, 4, 1], scale=s, zp=z)
    r_t = m.tensor("flat", [1, 8, 6], scale=s, zp=z)
    q_t = m.tensor("q", [1, 8, 6], scale=4 * s, zp=3)
    m.op("PAD", [x_t, pads_t], [p_t], OPT["PAD"], [])
    m.op("CONV_2D", [p_t, w_t, -1], [c_t], OPT["CONV"],
         [(0, "u8", VALID), (1, "i32", 1), (2, "i32", 1), (3, "u8", NONE)])
    m.op("CONCATENATION", [x_t, c_t], [y2_t], OPT["CONCAT"], [(0, "i32", 3), (1, "u8", NONE)])
    m.op("RESHAPE", [y2_t], [r_t], 0, [])
    m.op("QUANTIZE", [r_t], [q_t], 0, [])
    x = rand_i8((1, 4, 4, 2))
    xp = np.full((1, 6, 6, 2), z, np.int8)
    xp[0, 1:5, 2:6, :] = x[0]
    cv = conv_ref(xp, w, None, z, s, [0.02], s, z, (1, 1), (1, 1), VALID, NONE, (4, 4))
    cat = np.concatenate([x, cv], axis=3).reshape(1, 8, 6)
    qq, e = quant_mult(f64(s) / f64(F32(4 * s)))
    y = np.array([min(max(mbqm(int(v) - z, qq, e) + 3, -128), 127) for v in cat.reshape(-1)]).reshape(1, 8, 6)
    save("pad_concat_reshape", m, [x_t], [q_t], x, y)


def float_io():
    """A float input QUANTIZEd and a float output DEQUANTIZEd (the edges are
    the host's): the int8 graph between is one ADD."""
    m = Model()
    xf_t = m.tensor("xf", [1, 2, 2, 3], FLOAT32)
    x_t = m.tensor("x", [1, 2, 2, 3], scale=0.5, zp=0)
    y_t = m.tensor("y", [1, 2, 2, 3], scale=1.0, zp=1)
    yf_t = m.tensor("yf", [1, 2, 2, 3], FLOAT32)
    m.op("QUANTIZE", [xf_t], [x_t], 0, [])
    m.op("ADD", [x_t, x_t], [y_t], OPT["ADD"], [(0, "u8", NONE)])
    m.op("DEQUANTIZE", [y_t], [yf_t], 0, [])
    xf = (np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3) - 6.0) * np.float32(0.25)
    xq = np.array([min(max(round_away(float(F32(v) / F32(0.5))), -128), 127) for v in xf.reshape(-1)])
    y = add_ref(xq.reshape(1, 2, 2, 3), xq.reshape(1, 2, 2, 3), 0.5, 0, 0.5, 0, 1.0, 1, NONE)
    save("float_io", m, [xf_t], [yf_t], xf, y)


def kernels():
    """The four host kernels over all 256 inputs (one row of 256 values for
    softmax): LOGISTIC, TANH, HARD_SWISH, SOFTMAX, each after a QUANTIZE to
    the same parameters (an identity on the NPU, so that the program has an
    NPU layer the simulator checks)."""
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    for name, op, shape, si, zi, so, zo in (
            ("logistic", "LOGISTIC", [1, 256], 0.045, -6, 1 / 256, -128),
            ("tanh", "TANH", [1, 256], 0.045, -6, 1 / 128, 0),
            ("hard_swish", "HARD_SWISH", [1, 256], 0.045, -6, 0.025, -60),
            ("softmax", "SOFTMAX", [1, 4, 64], 0.06, 11, 1 / 256, -128)):
        m = Model()
        x_t = m.tensor("x", shape, scale=si, zp=zi)
        q_t = m.tensor("xq", shape, scale=si, zp=zi)
        y_t = m.tensor("y", shape, scale=so, zp=zo)
        m.op("QUANTIZE", [x_t], [q_t], 0, [])
        if op == "SOFTMAX":
            m.op(op, [q_t], [y_t], OPT["SOFTMAX"], [(0, "f32", 1.0)])
        else:
            m.op(op, [q_t], [y_t], 0, [])
        save(name, m, [x_t], [y_t], x.reshape(shape))


if __name__ == "__main__":
    conv_same_relu6()
    dwconv_mult2()
    fc_flatten()
    add_ties()
    mul_relu()
    pools()
    mean_reshape()
    pad_concat_reshape()
    float_io()
    kernels()
