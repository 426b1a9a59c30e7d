#!/usr/bin/python3
"""Writes the small seed models of fuzz/corpus/onnx/ (committed): one tiny
ONNX model per supported operator and attribute form, so that the ONNX fuzzer
starts from inputs that reach every importer, shape-inference and float
reference path while staying a few hundred bytes (the real models, which
fuzz/run.sh also seeds, are 30-160 KB and slow every mutation down).

    /usr/bin/python3 fuzz/make_seeds.py

Deterministic; needs python3-onnx and python3-numpy (Debian).
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "onnx")
F = TensorProto.FLOAT
rng = np.random.default_rng(7)


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def w(name, shape, dtype=np.float32):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(dtype), name)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, np.int64), name)


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "seed_" + name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset >= 13 else 6
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def n(op, ins, outs, name=None, **attrs):
    return helper.make_node(op, ins, outs, name=name or op.lower() + "0", **attrs)


X4 = [1, 2, 5, 5]


def main():
    save("conv_pads", [n("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 0, 1, 2],
                         strides=[2, 1], dilations=[1, 2])],
         [vi("x", X4)], [vi("y", None)], [w("w", [3, 2, 3, 3]), w("b", [3])])
    save("conv_group_same", [n("Conv", ["x", "w"], ["y"], group=2, auto_pad="SAME_UPPER", kernel_shape=[3, 3])],
         [vi("x", X4)], [vi("y", None)], [w("w", [4, 1, 3, 3])])
    save("conv1d", [n("Conv", ["x", "w"], ["y"], kernel_shape=[3], auto_pad="VALID")],
         [vi("x", [1, 2, 7])], [vi("y", None)], [w("w", [2, 2, 3])], opset=11)
    save("gemm", [n("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
         [vi("x", [2, 6])], [vi("y", None)], [w("w", [4, 6]), w("c", [4])])
    save("matmul_add", [n("MatMul", ["x", "w"], ["m"]), n("Add", ["m", "b"], ["y"])],
         [vi("x", [1, 3, 6])], [vi("y", None)], [w("w", [6, 4]), w("b", [4])])
    for op in ("Sub", "Mul", "Div"):
        save("bcast_" + op.lower(), [n(op, ["x", "c"], ["y"])], [vi("x", X4)], [vi("y", None)],
             [w("c", [2, 1, 1])])
    save("add_two_inputs", [n("Add", ["a", "b"], ["y"])], [vi("a", [1, 3]), vi("b", [2, 1])], [vi("y", None)])
    for op in ("Relu", "Sigmoid", "Tanh", "Identity"):
        save("act_" + op.lower(), [n(op, ["x"], ["y"])], [vi("x", X4)], [vi("y", None)])
    save("act_leaky", [n("LeakyRelu", ["x"], ["y"], alpha=0.2)], [vi("x", X4)], [vi("y", None)])
    save("act_hardsigmoid", [n("HardSigmoid", ["x"], ["y"], alpha=0.3, beta=0.4)], [vi("x", X4)], [vi("y", None)])
    save("act_hardswish", [n("HardSwish", ["x"], ["y"])], [vi("x", X4)], [vi("y", None)], opset=14)
    save("act_prelu", [n("PRelu", ["x", "s"], ["y"])], [vi("x", X4)], [vi("y", None)], [w("s", [2, 1, 1])])
    save("clip_inputs", [n("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", X4)], [vi("y", None)],
         [numpy_helper.from_array(np.array(0, np.float32), "lo"),
          numpy_helper.from_array(np.array(1, np.float32), "hi")], opset=11)
    save("clip_attrs", [n("Clip", ["x"], ["y"], min=-1.0, max=6.0)], [vi("x", X4)], [vi("y", None)], opset=7)
    save("batchnorm", [n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
         [vi("x", X4)], [vi("y", None)], [w("s", [2]), w("b", [2]), w("m", [2]),
                                           numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "v")])
    save("maxpool_ceil", [n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
         [vi("x", X4)], [vi("y", None)])
    save("avgpool_pads", [n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                            count_include_pad=1)], [vi("x", X4)], [vi("y", None)])
    save("gap", [n("GlobalAveragePool", ["x"], ["y"])], [vi("x", X4)], [vi("y", None)])
    save("reshape", [n("Reshape", ["x", "s"], ["y"])], [vi("x", X4)], [vi("y", None)], [i64("s", [0, -1])])
    save("flatten", [n("Flatten", ["x"], ["y"], axis=2)], [vi("x", X4)], [vi("y", None)])
    save("squeeze13", [n("Squeeze", ["x", "a"], ["y"])], [vi("x", [1, 3, 1, 2])], [vi("y", None)], [i64("a", [0, 2])])
    save("squeeze11", [n("Squeeze", ["x"], ["y"], axes=[-2])], [vi("x", [1, 3, 1, 2])], [vi("y", None)], opset=11)
    save("unsqueeze13", [n("Unsqueeze", ["x", "a"], ["y"])], [vi("x", [3, 2])], [vi("y", None)], [i64("a", [0, -1])])
    save("transpose", [n("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], [vi("x", X4)], [vi("y", None)])
    save("concat", [n("Concat", ["a", "b"], ["y"], axis=-1)], [vi("a", [1, 2, 3]), vi("b", [1, 2, 1])], [vi("y", None)])
    save("pad11", [n("Pad", ["x", "p", "v"], ["y"])], [vi("x", X4)], [vi("y", None)],
         [i64("p", [0, 0, 1, 2, 0, 0, 2, 1]), numpy_helper.from_array(np.array(0.5, np.float32), "v")], opset=11)
    save("pad2", [n("Pad", ["x"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1], value=1.0)], [vi("x", X4)], [vi("y", None)], opset=7)
    save("softmax13", [n("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 5])], [vi("y", None)])
    save("softmax11", [n("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 3, 4])], [vi("y", None)], opset=11)
    save("dropout", [n("Dropout", ["x"], ["y", "mask"])], [vi("x", X4)], [vi("y", None)], opset=12)
    save("constant_chain", [n("Constant", [], ["c"], value=w("cv", [2, 1, 1])),
                            n("Constant", [], ["k"], name="k0", value_ints=[1, 2]),
                            n("Mul", ["x", "c"], ["y"])], [vi("x", X4)], [vi("y", None)])
    # a small CNN shaped like the default model: conv-bn-clip, pool, flatten, gemm, softmax
    save("small_cnn", [
        n("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "s", "b", "m", "v"], ["bn"]),
        n("Clip", ["bn", "lo", "hi"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Flatten", ["p1"], ["f"]),
        n("Gemm", ["f", "w2", "b2"], ["g"], transB=1),
        n("Softmax", ["g"], ["y"], axis=1)],
        [vi("x", [1, 1, 6, 6])], [vi("y", None)],
        [w("w1", [2, 1, 3, 3]), w("b1", [2]), w("s", [2]), w("b", [2]), w("m", [2]),
         numpy_helper.from_array(np.ones(2, np.float32), "v"),
         numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(1, np.float32), "hi"),
         w("w2", [3, 18]), w("b2", [3])])


if __name__ == "__main__":
    main()
