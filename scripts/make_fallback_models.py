#!/usr/bin/python3
"""Builds the five small models of models/fallback/, one per cause that made
the compiler refuse a real model a CPU (or DRAM) could run (issue 26), each
reproducing the cause of the real model it stands for:

  gather_head  a detector head: a conv's [1, A*K, H, W] map reshaped to
               [1, A, K, H*W], transposed to [1, A, H*W, K] and split by
               Gather into boxes and scores -- an element order the NPU's
               reshape cannot copy (a channel split into two axes).
  clip_runtime an audio front end: log of a mel power spectrogram, clamped
               from below at (its maximum - 8), a Clip whose `min` is
               computed by the graph, then a conv stack and a classifier.
  if_lstm      a voice-activity detector: an If on the sample rate (a graph
               input the user binds) choosing between two conv front ends,
               an LSTM over the frames with its state as graph inputs and
               outputs, a sigmoid speech probability.
  skip_spill   a face-detector backbone on 3x128x128: residual blocks at
               64x64x16 whose second operands (64 KiB each) cannot all sit
               in the 16 KiB skip DTCM.
  mbv2_dw      a MobileNetV2 (width 0.5) at 128x128: its first expanded
               depthwise layers (64x64x48) need more main DTCM around them
               than the 64 KiB the default NPU has.

Weights are seeded random numbers (BatchNormalization folded as the
exporters do), so every run writes the same bytes.  Each model gets 8
calibration inputs and a sample: models/fallback/<name>/calib/calib_NN.npy
and <name>/sample_0.npy; if_lstm also its bound sample rate (sr.npy) and
state inputs.

Run with Debian's python: /usr/bin/python3 scripts/make_fallback_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20260126
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "fallback")
N_CALIB = 8
N_CALIB_BIG = 4  # 128x128x3 inputs: fewer, to keep the repository small
F = TensorProto.FLOAT


class Builder:
    """Nodes and initializers of one graph, with unique names."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.k = 0

    def name(self, base):
        self.k += 1
        return f"{base}{self.k}"

    def const(self, a, base="c"):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def node(self, op, ins, n_out=1, **attrs):
        nm = self.name(op.lower())
        outs = [f"{nm}_out{i}" if n_out > 1 else f"{nm}_out" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=nm, **attrs))
        return outs if n_out > 1 else outs[0]

    def conv(self, x, ci, co, k=3, s=1, group=1, relu=True, pad=None):
        fan = ci // group * k * k
        w = (self.rng.standard_normal((co, ci // group, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32)
        b = (self.rng.standard_normal(co) * 0.05).astype(np.float32)
        p = k // 2 if pad is None else pad
        y = self.node("Conv", [x, self.const(w, "w"), self.const(b, "b")], kernel_shape=[k, k],
                      strides=[s, s], pads=[p, p, p, p], group=group)
        return self.node("Relu", [y]) if relu else y

    def conv1d(self, x, ci, co, k=3, s=1, relu=True):
        w = (self.rng.standard_normal((co, ci, k)) * np.sqrt(2.0 / (ci * k))).astype(np.float32)
        b = (self.rng.standard_normal(co) * 0.05).astype(np.float32)
        y = self.node("Conv", [x, self.const(w, "w"), self.const(b, "b")], kernel_shape=[k],
                      strides=[s], pads=[k // 2, k // 2])
        return self.node("Relu", [y]) if relu else y

    def fc(self, x, ci, co):
        w = (self.rng.standard_normal((co, ci)) * np.sqrt(1.0 / ci)).astype(np.float32)
        b = (self.rng.standard_normal(co) * 0.05).astype(np.float32)
        return self.node("Gemm", [x, self.const(w, "w"), self.const(b, "b")], transB=1)


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def save_model(name, b, inputs, outputs, opset=13):
    g = helper.make_graph(b.nodes, name, inputs, outputs, initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_fallback_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(ROOT, exist_ok=True)
    with open(os.path.join(ROOT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def save_npy(path, a, dtype=np.float32):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.ascontiguousarray(a, dtype=dtype))


def save_inputs(name, make, n=N_CALIB):
    """make(i) -> the input array of calibration image i (i < n), the
    sample for i == n."""
    for i in range(n):
        save_npy(os.path.join(ROOT, name, "calib", f"calib_{i:02d}.npy"), make(i))
    save_npy(os.path.join(ROOT, name, "sample_0.npy"), make(n))


def gather_head(rng):
    b = Builder(rng)
    A, K, H, W = 3, 6, 8, 8
    y = b.conv("x", 3, 16, s=2)
    y = b.conv(y, 16, 32, s=2)
    y = b.conv(y, 32, 32)
    y = b.conv(y, 32, A * K, k=1, relu=False)  # [1, 18, 8, 8]
    r = b.node("Reshape", [y, b.const(np.array([1, A, K, H * W], np.int64), "shape")])
    t = b.node("Transpose", [r], perm=[0, 1, 3, 2])  # [1, A, HW, K]
    box = b.node("Gather", [t, b.const(np.array([0, 1, 2, 3], np.int64), "idx")], axis=3)
    obj = b.node("Gather", [t, b.const(np.array([4, 5], np.int64), "idx")], axis=3)
    score = b.node("Sigmoid", [obj])
    b.nodes.append(helper.make_node("Identity", [box], ["boxes"], name="boxes_out"))
    b.nodes.append(helper.make_node("Identity", [score], ["scores"], name="scores_out"))
    save_model("gather_head", b, [vi("x", [1, 3, 32, 32])],
               [vi("boxes", [1, A, H * W, 4]), vi("scores", [1, A, H * W, 2])])
    save_inputs("gather_head", lambda i: rng.standard_normal((1, 3, 32, 32)))


def clip_runtime(rng):
    b = Builder(rng)
    lg = b.node("Log", ["mel"])  # [1, 1, 40, 49]
    mx = b.node("ReduceMax", [lg], keepdims=1)  # over the whole map
    lo = b.node("Sub", [mx, b.const(np.array(8.0, np.float32), "top_db")])
    lo = b.node("Reshape", [lo, b.const(np.array([], np.int64), "scalar")])
    cl = b.node("Clip", [lg, lo])
    y = b.conv(cl, 1, 16, s=2)
    y = b.conv(y, 16, 32, s=2)
    y = b.node("GlobalAveragePool", [y])
    y = b.node("Flatten", [y])
    logits = b.fc(y, 32, 12)
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits_out"))
    save_model("clip_runtime", b, [vi("mel", [1, 1, 40, 49])], [vi("logits", [1, 12])])

    def mel(i):
        r = np.random.default_rng(SEED + i)
        # a power spectrogram: a few loud bands over a floor far below them
        m = np.exp(r.uniform(-12, -9, (1, 1, 40, 49)))
        m[0, 0, r.integers(0, 30):][:10, r.integers(0, 20):][:, :25] *= np.exp(r.uniform(6, 10))
        return m

    save_inputs("clip_runtime", mel)


def if_lstm(rng):
    """The If's branches read x from the outer scope; sr is bound."""
    T, HID = 16, 24
    # then: 16 kHz front end (stride 2), else: 8 kHz (stride 1 on half the
    # samples) -- both give [1, 16, T]
    bt = Builder(rng)
    bt.k = 100
    y = bt.conv1d("x", 1, 16, k=5, s=4)
    y = bt.conv1d(y, 16, 16, k=3, s=2)
    bt.nodes.append(helper.make_node("Identity", [y], ["feat_then"], name="then_out"))
    then_g = helper.make_graph(bt.nodes, "then_branch", [], [vi("feat_then", [1, 16, T])],
                               initializer=bt.inits)
    be = Builder(rng)
    be.k = 200
    y = be.node("Slice", ["x", be.const(np.array([0], np.int64)), be.const(np.array([64], np.int64)),
                          be.const(np.array([2], np.int64))])
    y = be.conv1d(y, 1, 16, k=3, s=4)
    be.nodes.append(helper.make_node("Identity", [y], ["feat_else"], name="else_out"))
    else_g = helper.make_graph(be.nodes, "else_branch", [], [vi("feat_else", [1, 16, T])],
                               initializer=be.inits)
    b = Builder(rng)
    cond = b.node("Equal", ["sr", b.const(np.array(16000, np.int64), "sr16k")])
    feat = b.node("If", [cond], then_branch=then_g, else_branch=else_g)
    seq = b.node("Transpose", [feat], perm=[2, 0, 1])  # [T, 1, 16]
    W = (rng.standard_normal((1, 4 * HID, 16)) * 0.3).astype(np.float32)
    R = (rng.standard_normal((1, 4 * HID, HID)) * 0.3).astype(np.float32)
    B = (rng.standard_normal((1, 8 * HID)) * 0.1).astype(np.float32)
    Y, Yh, Yc = b.node("LSTM", [seq, b.const(W, "W"), b.const(R, "R"), b.const(B, "B"), "", "h0", "c0"],
                       n_out=3, hidden_size=HID)
    last = b.node("Squeeze", [Yh, b.const(np.array([0], np.int64), "ax")])  # [1, HID]
    p = b.node("Sigmoid", [b.fc(last, HID, 1)])
    b.nodes.append(helper.make_node("Identity", [p], ["prob"], name="prob_out"))
    b.nodes.append(helper.make_node("Identity", [Yh], ["hn"], name="hn_out"))
    b.nodes.append(helper.make_node("Identity", [Yc], ["cn"], name="cn_out"))
    save_model("if_lstm", b,
               [vi("x", [1, 1, 128]), vi("sr", [], TensorProto.INT64), vi("h0", [1, 1, HID]),
                vi("c0", [1, 1, HID])],
               [vi("prob", [1, 1]), vi("hn", [1, 1, HID]), vi("cn", [1, 1, HID])], opset=14)
    d = os.path.join(ROOT, "if_lstm")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "sr.npy"), np.array(16000, np.int64))  # a scalar
    # calibration: audio-like chunks and the state a previous chunk leaves,
    # one stack per graph input (x, h0, c0 once sr is bound), in that order
    xs, hs, cs = [], [], []
    for i in range(N_CALIB + 1):
        r = np.random.default_rng(SEED + 100 + i)
        t = np.arange(128) / 16000.0
        xs.append((0.3 * np.sin(2 * np.pi * r.uniform(100, 1000) * t) + 0.05 * r.standard_normal(128))[None, None])
        hs.append(np.tanh(r.standard_normal((1, 1, HID)) * 0.5))
        cs.append(r.standard_normal((1, 1, HID)) * 0.5)
    for k, (nm, v) in enumerate((("x", xs), ("h0", hs), ("c0", cs))):
        save_npy(os.path.join(d, "calib", f"{k}_{nm}.npy"), np.stack(v[:N_CALIB]))
        save_npy(os.path.join(d, f"sample_{nm}.npy"), v[N_CALIB])


def skip_spill(rng):
    b = Builder(rng)
    # the exporter's input normalisation, (x - mean) / std per channel
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    y = b.node("Div", [b.node("Sub", ["x", b.const(mean, "mean")]), b.const(std, "std")])
    y = b.conv(y, 3, 16, s=2)  # 64x64x16
    for _ in range(2):
        r = b.conv(y, 16, 16)
        r = b.conv(r, 16, 16, relu=False)
        y = b.node("Relu", [b.node("Add", [y, r])])
    y = b.conv(y, 16, 32, s=2)  # 32x32x32
    r = b.conv(y, 32, 32, k=3, group=32)
    r = b.conv(r, 32, 32, k=1, relu=False)
    y = b.node("Relu", [b.node("Add", [y, r])])
    y = b.conv(y, 32, 32, s=2)  # 16x16x32
    cls = b.conv(y, 32, 4, k=3, relu=False)  # two anchors x (background, face)
    box = b.conv(y, 32, 8, k=3, relu=False)
    b.nodes.append(helper.make_node("Identity", [cls], ["scores"], name="scores_out"))
    b.nodes.append(helper.make_node("Identity", [box], ["boxes"], name="boxes_out"))
    save_model("skip_spill", b, [vi("x", [1, 3, 128, 128])],
               [vi("scores", [1, 4, 16, 16]), vi("boxes", [1, 8, 16, 16])])
    save_inputs("skip_spill", lambda i: np.random.default_rng(SEED + 200 + i).standard_normal((1, 3, 128, 128)),
                N_CALIB_BIG)


def mbv2_dw(rng):
    """MobileNetV2, width 0.5, 128x128 (torchvision's block structure)."""
    b = Builder(rng)

    def relu6(x):
        return b.node("Clip", [x, b.const(np.array(0.0, np.float32)), b.const(np.array(6.0, np.float32))])

    def cbr(x, ci, co, k=3, s=1, group=1, act=True):
        y = b.conv(x, ci, co, k=k, s=s, group=group, relu=False)
        return relu6(y) if act else y

    y = cbr("x", 3, 16, s=2)  # 64x64x16
    ci = 16
    # the first three stages (the layers at 64x64 and 32x32 are the cause);
    # the rest of the net would only add weights
    settings = [(1, 8, 1, 1), (6, 16, 2, 2), (6, 16, 3, 2)]
    for t, c, n, s in settings:
        for i in range(n):
            hid = ci * t
            h = cbr(y, ci, hid, k=1) if t != 1 else y
            h = cbr(h, hid, hid, s=s if i == 0 else 1, group=hid)
            h = cbr(h, hid, c, k=1, act=False)
            y = b.node("Add", [y, h]) if (i > 0 or s == 1) and ci == c else h
            ci = c
    y = cbr(y, ci, 128, k=1)
    y = b.node("GlobalAveragePool", [y])
    y = b.node("Flatten", [y])
    logits = b.fc(y, 128, 10)
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits_out"))
    save_model("mbv2_dw", b, [vi("x", [1, 3, 128, 128])], [vi("logits", [1, 10])])
    save_inputs("mbv2_dw", lambda i: np.random.default_rng(SEED + 300 + i).standard_normal((1, 3, 128, 128)),
                N_CALIB_BIG)


def main():
    rng = np.random.default_rng(SEED)
    gather_head(rng)
    clip_runtime(rng)
    if_lstm(rng)
    skip_spill(rng)
    mbv2_dw(rng)


if __name__ == "__main__":
    main()
