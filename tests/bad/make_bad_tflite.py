#!/usr/bin/python3
"""Writes the bad TFLite models of tests/bad/tflite/ (committed), each listed
in tests/bad/MANIFEST with the error it must give: broken FlatBuffers
(truncated, offsets and vtables outside the file, strings without their NUL)
and well-formed models the importer must refuse (schema version, custom and
unknown operators, float tensors, inconsistent shapes and references,
parameters TFLite refuses, the documented limits).

    /usr/bin/python3 tests/bad/make_bad_tflite.py

Deterministic; needs python3-flatbuffers and python3-numpy (Debian).
"""
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tflite"))
from make_fixtures import (INT8, INT32, FLOAT32, OPT, SAME, VALID, Model)  # noqa: E402

OUT = os.path.join(HERE, "tflite")


def write(name, data):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def conv_model(**kw):
    """A one-CONV_2D model with knobs for what to break."""
    m = Model()
    x = m.tensor("x", kw.get("xshape", [1, 4, 4, 2]), kw.get("xtype", INT8), scale=0.1, zp=0)
    wdata = kw.get("wdata", np.ones((3, 1, 1, 2), np.int8))
    w = m.tensor("w", [3, 1, 1, 2], INT8, scale=[0.01] * 3, zp=kw.get("wzp", 0), data=wdata)
    y = m.tensor("y", kw.get("yshape", [1, 4, 4, 3]), scale=0.2, zp=0)
    m.op("CONV_2D", kw.get("ins", [x, w, -1]), [y], OPT["CONV"],
         [(0, "u8", VALID), (1, "i32", 1), (2, "i32", 1), (3, "u8", kw.get("act", 0))])
    return m, x, y


def main():
    m, x, y = conv_model()
    good = m.build([x], [y])
    write("good_conv.tflite", good)
    write("empty.tflite", b"")
    write("not_tflite.tflite", b"This is not a FlatBuffer at all, just some text.\n")
    write("truncated.tflite", good[: len(good) // 2])
    # root offset past the end
    write("bad_root.tflite", struct.pack("<I", 0x7FFFFFF0) + good[4:])
    # the root table's vtable offset pointing before the file
    root = struct.unpack_from("<I", good, 0)[0]
    bad = bytearray(good)
    struct.pack_into("<i", bad, root, root + 1000)
    write("bad_vtable.tflite", bytes(bad))
    # a tensor name whose NUL terminator is overwritten
    bad = bytearray(good)
    bad[good.index(b"\x01\x00\x00\x00w\x00") + 5] = ord("!")
    write("name_no_nul.tflite", bytes(bad))

    m, x, y = conv_model()
    m.version = 2
    write("schema_v2.tflite", m.build([x], [y]))

    m = Model()
    a = m.tensor("a", [1, 4], scale=0.1, zp=0)
    b = m.tensor("b", [1, 4], scale=0.1, zp=0)
    m.op("custom:MyOp", [a], [b])
    write("custom_op.tflite", m.build([a], [b]))

    m = Model()
    a = m.tensor("a", [1, 4], scale=0.1, zp=0)
    b = m.tensor("b", [1, 4], scale=0.1, zp=0)
    m.op(41, [a], [b])  # SUB: not supported
    write("unsupported_op.tflite", m.build([a], [b]))

    m, x, y = conv_model(xtype=FLOAT32)
    write("float_conv.tflite", m.build([x], [y]))

    m, x, y = conv_model()
    m.ops[0]["code"] = 5
    write("bad_opcode_index.tflite", m.build([x], [y]))

    m, x, y = conv_model(ins=[0, 1, 77])
    write("bad_tensor_index.tflite", m.build([x], [y]))

    m, x, y = conv_model(yshape=[1, 3, 4, 3])
    write("conv_bad_output.tflite", m.build([x], [y]))

    m, x, y = conv_model(wdata=np.ones(5, np.int8))
    write("short_buffer.tflite", m.build([x], [y]))

    m, x, y = conv_model(wzp=3)
    write("weight_zero_point.tflite", m.build([x], [y]))

    m, x, y = conv_model(act=4)
    write("fused_tanh.tflite", m.build([x], [y]))

    # stride 0 (the mutation sweep's first find: a division by zero)
    m, x, y = conv_model()
    m.ops[0]["opt"][1] = (1, "i32", 0)
    write("conv_stride0.tflite", m.build([x], [y]))

    m, x, y = conv_model(xshape=[1, 4, 65536, 65536 * 16], yshape=[1, 4, 65536, 3])
    write("huge_dims.tflite", m.build([x], [y]))

    m, x, y = conv_model(xshape=[1, 4, -1, 2])
    write("dynamic_dim.tflite", m.build([x], [y]))

    m, x, y = conv_model(xshape=[1] * 9)
    write("rank9.tflite", m.build([x], [y]))

    m = Model()
    a = m.tensor("a", [1, 5, 5, 2], scale=0.1, zp=0)
    b = m.tensor("b", [1, 3, 3, 2], scale=0.1, zp=0)
    m.op("AVERAGE_POOL_2D", [a], [b], OPT["POOL"],
         [(0, "u8", SAME), (1, "i32", 2), (2, "i32", 2), (3, "i32", 2), (4, "i32", 2), (5, "u8", 0)])
    write("avgpool_same_pad.tflite", m.build([a], [b]))

    m = Model()
    a = m.tensor("a", [1, 8], scale=0.1, zp=0)
    b = m.tensor("b", [1, 8], scale=1 / 256, zp=-128)
    m.op("SOFTMAX", [a], [b], OPT["SOFTMAX"], [(0, "f32", 2.0)])
    write("softmax_beta2.tflite", m.build([a], [b]))

    m = Model()
    a = m.tensor("a", [1, 8], scale=0.1, zp=0)
    b = m.tensor("b", [1, 8], scale=1 / 256, zp=0)
    m.op("LOGISTIC", [a], [b])
    write("logistic_zp0.tflite", m.build([a], [b]))

    m = Model()
    a = m.tensor("a", [1, 2, 2, 2], scale=0.1, zp=0)
    c = m.tensor("c", [1, 2, 2, 2], scale=0.3, zp=0)
    b = m.tensor("b", [1, 2, 2, 4], scale=0.1, zp=0)
    m.op("CONCATENATION", [a, c], [b], OPT["CONCAT"], [(0, "i32", 3), (1, "u8", 0)])
    write("concat_scales.tflite", m.build([a, c], [b]))

    m = Model()
    a = m.tensor("a", [1, 2, 2, 3], scale=0.1, zp=0)
    ax = m.tensor("axes", [1], INT32, data=np.array([3], np.int32))
    b = m.tensor("b", [1, 2, 2], scale=0.1, zp=0)
    m.op("MEAN", [a, ax], [b], OPT["REDUCER"], [(0, "u8", 0)])
    write("mean_channels.tflite", m.build([a], [b]))

    # an operator reading what a later one produces
    m = Model()
    a = m.tensor("a", [1, 4], scale=0.1, zp=0)
    b = m.tensor("b", [1, 4], scale=0.1, zp=0)
    c = m.tensor("c", [1, 4], scale=0.1, zp=0)
    m.op("RESHAPE", [b], [c])
    m.op("RESHAPE", [a], [b])
    write("use_before_def.tflite", m.build([a], [c]))

    # an operator writing the graph input
    m = Model()
    a = m.tensor("a", [1, 4], scale=0.1, zp=0)
    b = m.tensor("b", [1, 4], scale=0.1, zp=0)
    m.op("RESHAPE", [b], [a])
    write("writes_input.tflite", m.build([a], [a]))

    m = Model()
    a = m.tensor("a", [1, 4], scale=0.1, zp=0, variable=True)
    b = m.tensor("b", [1, 4], scale=0.1, zp=0)
    m.op("RESHAPE", [a], [b])
    write("variable_tensor.tflite", m.build([a], [b]))

    # a 64 KiB weight buffer read by 40 convolutions: more constant data than
    # twice the file (the amplification limit)
    m = Model()
    x = m.tensor("x", [1, 1, 1, 256], scale=0.1, zp=0)
    w = m.tensor("w", [256, 1, 1, 256], INT8, scale=0.01, zp=0,
                 data=np.ones((256, 1, 1, 256), np.int8))
    prev = x
    for k in range(40):
        y = m.tensor("y%d" % k, [1, 1, 1, 256], scale=0.1, zp=0)
        m.op("CONV_2D", [prev, w, -1], [y], OPT["CONV"],
             [(0, "u8", VALID), (1, "i32", 1), (2, "i32", 1), (3, "u8", 0)])
        prev = y
    write("shared_weights_amplify.tflite", m.build([x], [prev]))

    # the fuzzer's first find (tests/bad/regress/): an activation whose
    # buffer table has a vtable of size 0; the error of that probe was lost
    # and another one returned
    m = Model()
    a = m.tensor("a", [1, 4], scale=0.1, zp=0, data=np.zeros(0, np.int8))
    b = m.tensor("b", [1, 4], scale=0.1, zp=0)
    m.op("RESHAPE", [a], [b])
    d = bytearray(m.build([a], [b]))
    u32 = lambda p: struct.unpack_from("<I", d, p)[0]  # noqa: E731
    root = u32(0)
    vt = root - struct.unpack_from("<i", d, root)[0]
    f = root + struct.unpack_from("<H", d, vt + 4 + 2 * 4)[0]  # Model.buffers
    e = f + u32(f) + 4 + 4 * 1                                    # buffers[1]
    tab = e + u32(e)
    struct.pack_into("<i", d, tab, tab - len(d))                 # vtable: 4 zero bytes
    d += b"\0\0\0\0"
    with open(os.path.join(HERE, "regress", "tflite_buffer_vtable.tflite"), "wb") as fh:
        fh.write(bytes(d))


if __name__ == "__main__":
    main()
