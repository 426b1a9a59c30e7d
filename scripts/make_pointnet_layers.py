#!/usr/bin/python3
"""Builds the point-cloud layers of the systolic-array note's utilization
table as small ONNX models, one per layer (docs/systolic.md "The skew"):
a point-wise convolution (a 1-D Conv with kernel 1, what a PointMLP or
PointNeXt-S MLP layer is) followed by a ReLU, on N points.

The design gives each layer's input channels C (its formula C/(C+NUM_ROW)
needs only them); the filters are chosen to agree with its values on the
1x4 arrangement (16 rows, 64 columns): 32 for conv1 (its 32/64 factor), 128
for PointMLP's conv5 (its 64/(64+64), two filter tiles), 64 -- one full
filter tile -- for the others.  N = 1024 points (PointMLP's and
PointNeXt-S's input cloud).

Seeded and deterministic; weights N(0, 0.2).  Outputs (committed):
    models/pointnet/pointmlp_conv{1..6}.onnx
    models/pointnet/pointnext_s_conv{1..8}.onnx
    models/pointnet/input_{C}.npy: one input per channel count, N(0, 1)

Run with Debian's python: /usr/bin/python3 scripts/make_pointnet_layers.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 2002
POINTS = 1024
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "pointnet")

# (network, layer, input channels C, filters)
LAYERS = [
    ("pointmlp", 1, 3, 32), ("pointmlp", 2, 32, 64), ("pointmlp", 3, 64, 64),
    ("pointmlp", 4, 16, 64), ("pointmlp", 5, 64, 128), ("pointmlp", 6, 16, 64),
    ("pointnext_s", 1, 3, 32), ("pointnext_s", 2, 32, 64), ("pointnext_s", 3, 32, 64),
    ("pointnext_s", 4, 32, 64), ("pointnext_s", 5, 64, 64), ("pointnext_s", 6, 64, 64),
    ("pointnext_s", 7, 64, 64), ("pointnext_s", 8, 128, 64),
]


def layer_model(name, c, f, rng):
    w = rng.normal(0, 0.2, size=(f, c, 1)).astype(np.float32)
    b = rng.normal(0, 0.1, size=(f,)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], name=name, kernel_shape=[1]),
        helper.make_node("Relu", ["y"], ["out"], name=name + "_relu"),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, POINTS])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, f, POINTS])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_pointnet_layers")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    rng = np.random.default_rng(SEED)
    os.makedirs(ROOT, exist_ok=True)
    for net, k, c, f in LAYERS:
        name = "%s_conv%d" % (net, k)
        onnx.save(layer_model(name, c, f, rng), os.path.join(ROOT, name + ".onnx"))
    for c in sorted({c for _, _, c, _ in LAYERS}):
        np.save(os.path.join(ROOT, "input_%d.npy" % c), rng.normal(0, 1, size=(1, c, POINTS)).astype(np.float32))


if __name__ == "__main__":
    main()
