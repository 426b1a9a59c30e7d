#!/usr/bin/python3
"""Builds AlexNet's five convolution layers (Krizhevsky et al. 2012, the
shapes Eyeriss reports them with, Chen et al. JSSC 2017) as five ONNX files,
each one Conv (with its bias) + Relu, for the row-stationary engine's
comparison with the Eyeriss chip (docs/rowstat.md "AlexNet on the
Eyeriss-sized engine"):

  conv1  3x227x227   -> 96  x55x55, 11x11 stride 4
  conv2  96x27x27    -> 256 x27x27, 5x5 pad 2, 2 groups (48 channels each)
  conv3  256x13x13   -> 384 x13x13, 3x3 pad 1
  conv4  384x13x13   -> 384 x13x13, 3x3 pad 1, 2 groups (192 channels each)
  conv5  384x13x13   -> 256 x13x13, 3x3 pad 1, 2 groups

The timing does not depend on the weights' values, so the files stay small
(about 4 to 20 KB instead of AlexNet's 9 MB of float weights): each filter
bank is W[m,c,r,s] = u[m] * v[c,r,s] + x[m,r] * y[c,s], built in the graph from
four small constant tensors by Mul and Add, which the quantizer folds into one
constant before it quantizes.  Seeded, deterministic; needs only numpy and
onnx.

Outputs (committed): models/alexnet/conv1.onnx ... conv5.onnx

Run with Debian's python: /usr/bin/python3 scripts/make_alexnet_convs.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20161231
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "alexnet")

# name, input C, H (= W), filters M, kernel R, stride, pad, groups
LAYERS = [
    ("conv1", 3, 227, 96, 11, 4, 0, 1),
    ("conv2", 96, 27, 256, 5, 1, 2, 2),
    ("conv3", 256, 13, 384, 3, 1, 1, 1),
    ("conv4", 384, 13, 384, 3, 1, 1, 2),
    ("conv5", 384, 13, 256, 3, 1, 1, 2),
]


def const(name, a):
    return numpy_helper.from_array(a.astype(np.float32), name)


def layer(rng, name, C, H, M, R, stride, pad, groups):
    cpg = C // groups
    E = (H + 2 * pad - R) // stride + 1
    # He-like scale so the outputs stay in a sensible range
    sd = np.sqrt(2.0 / (cpg * R * R))
    u = rng.normal(1.0, 0.3, (M, 1, 1, 1))
    v = rng.normal(0.0, sd, (1, cpg, R, R))
    x = rng.normal(0.0, 0.5, (M, 1, R, 1))
    y = rng.normal(0.0, sd, (1, cpg, 1, R))
    b = rng.normal(0.0, 0.05, (M,))
    inits = [const("u", u), const("v", v), const("x", x), const("y", y), const("b", b)]
    nodes = [
        helper.make_node("Mul", ["u", "v"], ["uv"], name="w_uv"),
        helper.make_node("Mul", ["x", "y"], ["xy"], name="w_xy"),
        helper.make_node("Add", ["uv", "xy"], ["w"], name="w"),
        helper.make_node("Conv", ["in", "w", "b"], ["conv"], name=name, kernel_shape=[R, R],
                         strides=[stride, stride], pads=[pad] * 4, group=groups),
        helper.make_node("Relu", ["conv"], ["out"], name=name + "_relu"),
    ]
    g = helper.make_graph(
        nodes, "alexnet_" + name,
        [helper.make_tensor_value_info("in", TensorProto.FLOAT, [1, C, H, H])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, M, E, E])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="easynpu")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    rng = np.random.default_rng(SEED)
    os.makedirs(ROOT, exist_ok=True)
    for spec in LAYERS:
        m = layer(rng, *spec)
        path = os.path.join(ROOT, spec[0] + ".onnx")
        onnx.save(m, path)
        print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
