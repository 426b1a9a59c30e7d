#!/usr/bin/python3
"""Two one-layer classifiers whose int8 run misses `--require-top1`, for the
accuracy gates' tests (tests/cli/test_accuracy_gates.c): a Gemm of 8 inputs
to 4 classes whose classes 0 and 1 have nearly the same weights, so that on
its one input the float logits of the two differ by less than int8 can
tell.  Seed 2 gives a tie at the top of the int8 result, seed 6 the other
class than float.  Run with Debian's python3-onnx and python3-numpy:

    /usr/bin/python3 scripts/make_gate_models.py

writes tests/data/gates/{near_tie,near_flip}.onnx and their inputs
{near_tie,near_flip}.npy (each model is calibrated on its own input)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "gates")


def make(seed, name):
    r = np.random.default_rng(seed)
    w = r.normal(0, 1, (4, 8)).astype(np.float32)
    w[1] = w[0] + r.normal(0, 0.01, 8).astype(np.float32)
    b = np.zeros(4, np.float32)
    x = r.normal(0, 1, (1, 8)).astype(np.float32)
    g = helper.make_graph([helper.make_node("Gemm", ["x", "W", "b"], ["y"], transB=1)], name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".npy"), x)
    print(name, "float logits", (x @ w.T + b)[0])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make(2, "near_tie")
    make(6, "near_flip")
