#!/usr/bin/python3
"""Builds models/rtgather.onnx: Gathers whose indices the graph computes.

  x [1,4,8,8] -> Conv 3x3 (8 ch) + Relu -> a
  s = ReduceMean(a, axes [2,3], keepdims 0)            [1,8]
  ArgMax(s, axis 1, keepdims 0) -> Gather(a, axis 1)   the strongest map
  ArgMin(s, axis 1, keepdims 0, select_last_index 1) -> Gather(a, axis 1)
  their difference -> Conv 1x1 (2 ch)                   -> y1 [1,2,8,8]
  r = ReduceMean(x, axes [0,2,3], keepdims 0) * 3 + 3.5  [4]
  Cast(Floor(Clip(r, 0, 7)), int64) -> Gather(a, axis 2) rows of a
  -> Conv 1x1 (4 ch)                                    -> y2 [1,4,4,8]

Seeded weights and inputs; 8 calibration inputs, a sample and the float
outputs numpy computes for it (models/rtgather/expect_y1.npy, expect_y2.npy).
Run with Debian's python: /usr/bin/python3 scripts/make_rtgather_model.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20261128
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
F = TensorProto.FLOAT


def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((n, o, h, wd), np.float64)
    for i in range(k):
        for j in range(k):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return (y + b[None, :, None, None]).astype(np.float32)


def reference(x, w0, b0, w1, b1, w2, b2):
    a = np.maximum(conv(x, w0, b0, 1), 0)
    s = a.mean(axis=(2, 3))
    imax = np.argmax(s, axis=1)
    imin = s.shape[1] - 1 - np.argmin(s[:, ::-1], axis=1)
    d = np.take(a, imax, axis=1) - np.take(a, imin, axis=1)
    y1 = conv(d, w1, b1, 0)
    r = x.mean(axis=(0, 2, 3)) * np.float32(3) + np.float32(3.5)
    idx = np.floor(np.clip(r, 0, 7)).astype(np.int64)
    y2 = conv(np.take(a, idx, axis=2), w2, b2, 0)
    return y1, y2


def main():
    rng = np.random.default_rng(SEED)
    w0 = rng.normal(0, 0.3, (8, 4, 3, 3)).astype(np.float32)
    b0 = rng.normal(0, 0.1, 8).astype(np.float32)
    w1 = rng.normal(0, 0.5, (2, 1, 1, 1)).astype(np.float32)
    b1 = rng.normal(0, 0.1, 2).astype(np.float32)
    w2 = rng.normal(0, 0.3, (4, 8, 1, 1)).astype(np.float32)
    b2 = rng.normal(0, 0.1, 4).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in
             dict(w0=w0, b0=b0, w1=w1, b1=b1, w2=w2, b2=b2).items()]
    inits += [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in
              dict(three=3.0, half=3.5, lo=0.0, hi=7.0).items()]
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["a"], name="relu0"),
        helper.make_node("ReduceMean", ["a"], ["s"], name="mean_a", axes=[2, 3], keepdims=0),
        helper.make_node("ArgMax", ["s"], ["imax"], name="argmax", axis=1, keepdims=0),
        helper.make_node("ArgMin", ["s"], ["imin"], name="argmin", axis=1, keepdims=0,
                         select_last_index=1),
        helper.make_node("Gather", ["a", "imax"], ["gmax"], name="gather_max", axis=1),
        helper.make_node("Gather", ["a", "imin"], ["gmin"], name="gather_min", axis=1),
        helper.make_node("Sub", ["gmax", "gmin"], ["d"], name="sub"),
        helper.make_node("Conv", ["d", "w1", "b1"], ["y1"], name="conv1"),
        helper.make_node("ReduceMean", ["x"], ["rm"], name="mean_x", axes=[0, 2, 3], keepdims=0),
        helper.make_node("Mul", ["rm", "three"], ["r3"], name="mul"),
        helper.make_node("Add", ["r3", "half"], ["r"], name="add"),
        helper.make_node("Clip", ["r", "lo", "hi"], ["rc"], name="clip"),
        helper.make_node("Floor", ["rc"], ["rf"], name="floor"),
        helper.make_node("Cast", ["rf"], ["rows"], name="cast", to=TensorProto.INT64),
        helper.make_node("Gather", ["a", "rows"], ["g2"], name="gather_rows", axis=2),
        helper.make_node("Conv", ["g2", "w2", "b2"], ["y2"], name="conv2"),
    ]
    graph = helper.make_graph(nodes, "rtgather", [helper.make_tensor_value_info("x", F, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y1", F, [1, 2, 8, 8]),
                               helper.make_tensor_value_info("y2", F, [1, 4, 4, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(ROOT, "rtgather", "calib"), exist_ok=True)
    onnx.save(model, os.path.join(ROOT, "rtgather.onnx"))
    for i in range(8):
        c = rng.normal(0, 1, (1, 4, 8, 8)).astype(np.float32)
        np.save(os.path.join(ROOT, "rtgather", "calib", f"calib_{i:02d}.npy"), c)
    x = rng.normal(0, 1, (1, 4, 8, 8)).astype(np.float32)
    np.save(os.path.join(ROOT, "rtgather", "sample_0.npy"), x)
    y1, y2 = reference(x, w0, b0, w1, b1, w2, b2)
    np.save(os.path.join(ROOT, "rtgather", "expect_y1.npy"), y1)
    np.save(os.path.join(ROOT, "rtgather", "expect_y2.npy"), y2)


if __name__ == "__main__":
    main()
