#!/usr/bin/python3
"""Builds VGG-16's conv3_1 layer (Simonyan & Zisserman 2015) as one ONNX
file, Conv (with its bias) + Relu, for the row-stationary mapper's
comparison with Timeloop's Eyeriss-like example (docs/rowstat.md "VGG
conv3_1 beside Timeloop"):

  conv3_1  128x56x56 -> 256x56x56, 3x3 pad 1 stride 1 (924.8 M MACs)

As scripts/make_alexnet_convs.py does, the filter bank is built in the graph
from small constant tensors (W[m,c,r,s] = u[m] * v[c,r,s] + x[m,r] * y[c,s],
folded by the quantizer), so the file stays a few KB instead of 1.2 MB of
float weights: the timing does not depend on the weights' values.  Seeded,
deterministic; needs only numpy and onnx.

Output (committed): models/vgg/conv3_1.onnx

Run with Debian's python: /usr/bin/python3 scripts/make_vgg_conv3_1.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20150410
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "vgg")
C, H, M, R = 128, 56, 256, 3


def const(name, a):
    return numpy_helper.from_array(a.astype(np.float32), name)


def main():
    rng = np.random.default_rng(SEED)
    sd = np.sqrt(2.0 / (C * R * R))
    inits = [
        const("u", rng.normal(1.0, 0.3, (M, 1, 1, 1))),
        const("v", rng.normal(0.0, sd, (1, C, R, R))),
        const("x", rng.normal(0.0, 0.5, (M, 1, R, 1))),
        const("y", rng.normal(0.0, sd, (1, C, 1, R))),
        const("b", rng.normal(0.0, 0.05, (M,))),
    ]
    nodes = [
        helper.make_node("Mul", ["u", "v"], ["uv"], name="w_uv"),
        helper.make_node("Mul", ["x", "y"], ["xy"], name="w_xy"),
        helper.make_node("Add", ["uv", "xy"], ["w"], name="w"),
        helper.make_node("Conv", ["in", "w", "b"], ["conv"], name="conv3_1", kernel_shape=[R, R],
                         strides=[1, 1], pads=[1] * 4, group=1),
        helper.make_node("Relu", ["conv"], ["out"], name="conv3_1_relu"),
    ]
    g = helper.make_graph(
        nodes, "vgg16_conv3_1",
        [helper.make_tensor_value_info("in", TensorProto.FLOAT, [1, C, H, H])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, M, H, H])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="easynpu")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(ROOT, exist_ok=True)
    path = os.path.join(ROOT, "conv3_1.onnx")
    onnx.save(m, path)
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
