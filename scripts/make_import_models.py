#!/usr/bin/python3
"""Builds the small real models that exercise what the ONNX importer folds,
recognises and places on the host (docs/ops.md), each trained briefly on a
synthetic task with PyTorch (seeded, deterministic, CPU; about a minute in
all) and exported the way PyTorch exports such layers:

  mbv3     a MobileNetV3-style net on a 3x32x32 image, 10 classes: hard-swish
           written as x * relu6(x + 3) / 6 and as nn.Hardswish (opset 13:
           HardSigmoid * x), inverted residual blocks with depthwise convs and
           squeeze-excite (mean over the map, 1x1 convs, hard-sigmoid, a Mul
           broadcast over the map), global average pool, FC.
  dethead  a detector head on a 3x64x64 image: three feature maps (16x16,
           8x8, 4x4), a top-down path with a bilinear (4->8) and a nearest
           (8->16) Resize, per-level class and box convs reshaped and
           transposed to [1, cells*anchors, k] and concatenated across
           levels, Softmax over the classes.
  audio1d  1-D convolutions over 40 MFCC features x T frames (T symbolic in
           the model: fix it with --input-shape x=1x40x98), dilated
           depthwise conv, a slice to an even length computed from the input's
           shape (Shape, Gather, Div, Mul, Slice), mean over time, FC to 12
           keywords.
  lngelu   a transformer-style block on 16 tokens of 32 features:
           LayerNorm, Linear, GELU, Linear, residual Add, LayerNorm, mean over
           the tokens, Linear to 5 classes; exported at opset 13, where
           LayerNorm is ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add and
           GELU Div/Erf/Add/Mul/Mul.
  qdq      a pre-quantized CNN on 1x28x28 in the QDQ format (QuantizeLinear
           -> DequantizeLinear around every activation, uint8 activations,
           int8 per-channel weights and int32 biases through DequantizeLinear)
           with the scales of the model itself (min/max of the trained float
           net on its calibration set).
  qlinear  the same kind of parameters in the operator form: QuantizeLinear,
           two QLinearConv, DequantizeLinear, Reshape, QuantizeLinear,
           QLinearMatMul, DequantizeLinear.

Outputs (committed): models/import/<name>.onnx, <name>/calib/calib_NN.npy
(16), <name>/sample_0.npy.

Run with Debian's python: /usr/bin/python3 scripts/make_import_models.py
"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

SEED = 20261124
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "import")
N_CALIB = 16


def save_npy(path, a):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))


def save_inputs(name, calib, sample):
    for i, c in enumerate(calib):
        save_npy(os.path.join(ROOT, name, "calib", f"calib_{i:02d}.npy"), c[None])
    save_npy(os.path.join(ROOT, name, "sample_0.npy"), sample[None])


def train(net, data, steps, lr=3e-3):
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    for _ in range(steps):
        x, y = data(32)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    x, y = data(256)
    with torch.no_grad():
        return (net(x).argmax(1) == y).float().mean().item()


def templates(g, k, shape):
    """k smooth class templates: the synthetic tasks' classes."""
    t = torch.randn(k, *shape, generator=g)
    for _ in range(2):  # smooth along the last axes
        t = (t + torch.roll(t, 1, -1) + torch.roll(t, -1, -1)) / 3
        if len(shape) > 2:
            t = (t + torch.roll(t, 1, -2) + torch.roll(t, -1, -2)) / 3
    return t * 1.5


def class_data(g, tpl, noise=0.6):
    def data(n):
        y = torch.randint(0, tpl.shape[0], (n,), generator=g)
        x = tpl[y] + noise * torch.randn(n, *tpl.shape[1:], generator=g)
        return x, y
    return data


def export(net, x, name, opset=13, dynamic=None):
    torch.onnx.export(net, x, os.path.join(ROOT, name + ".onnx"), input_names=["x"],
                      output_names=["y"] if not isinstance(net, DetHead) else ["scores", "boxes"],
                      opset_version=opset, dynamic_axes=dynamic, do_constant_folding=True)


# ---- mbv3 ---------------------------------------------------------------------------


def hswish(x):
    return x * F.relu6(x + 3) / 6


class SE(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.fc2 = nn.Conv2d(c // r, c, 1)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * self.gate(self.fc2(F.relu(self.fc1(s))))


class Bneck(nn.Module):
    def __init__(self, cin, cexp, cout, stride, act):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(cin, cexp, 1, bias=False), nn.BatchNorm2d(cexp))
        self.dw = nn.Sequential(nn.Conv2d(cexp, cexp, 3, stride, 1, groups=cexp, bias=False),
                                nn.BatchNorm2d(cexp))
        self.se = SE(cexp)
        self.project = nn.Sequential(nn.Conv2d(cexp, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.act = act
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.act(self.expand(x))
        y = self.act(self.dw(y))
        y = self.project(self.se(y))
        return x + y if self.res else y


class MbV3(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16))
        self.b1 = Bneck(16, 32, 16, 1, F.relu)
        self.b2 = Bneck(16, 48, 24, 2, nn.Hardswish())
        self.b3 = Bneck(24, 64, 24, 1, nn.Hardswish())
        self.head = nn.Sequential(nn.Conv2d(24, 64, 1, bias=False), nn.BatchNorm2d(64), nn.Hardswish())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = hswish(self.stem(x))
        x = self.b3(self.b2(self.b1(x)))
        x = self.pool(self.head(x))
        return self.fc(torch.flatten(x, 1))


def make_mbv3(g):
    tpl = templates(g, 10, (3, 32, 32))
    data = class_data(g, tpl)
    net = MbV3()
    acc = train(net, data, 150)
    x, _ = data(N_CALIB + 1)
    save_inputs("mbv3", x[:N_CALIB].numpy(), x[N_CALIB].numpy())
    export(net, x[:1], "mbv3")
    print(f"mbv3: accuracy {acc:.3f}")


# ---- dethead -------------------------------------------------------------------------

A, C = 2, 3  # anchors per cell, classes


class DetHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, 2, 1)
        self.c2 = nn.Conv2d(16, 32, 3, 2, 1)   # 16x16
        self.c3 = nn.Conv2d(32, 48, 3, 2, 1)   # 8x8
        self.c4 = nn.Conv2d(48, 64, 3, 2, 1)   # 4x4
        self.l3 = nn.Conv2d(32, 32, 1)
        self.l4 = nn.Conv2d(48, 32, 1)
        self.l5 = nn.Conv2d(64, 32, 1)
        self.smooth = nn.Conv2d(32, 32, 3, 1, 1)
        self.cls = nn.ModuleList(nn.Conv2d(32, A * C, 3, 1, 1) for _ in range(3))
        self.box = nn.ModuleList(nn.Conv2d(32, A * 4, 3, 1, 1) for _ in range(3))

    def levels(self, x):
        p3 = F.relu(self.c2(F.relu(self.c1(x))))
        p4 = F.relu(self.c3(p3))
        p5 = F.relu(self.c4(p4))
        n5 = self.l5(p5)
        n4 = self.l4(p4) + F.interpolate(n5, scale_factor=2, mode="bilinear", align_corners=False)
        n3 = self.smooth(self.l3(p3) + F.interpolate(n4, scale_factor=2, mode="nearest"))
        return [n3, n4, n5]

    def forward(self, x):
        scores, boxes = [], []
        for i, f in enumerate(self.levels(x)):
            c = self.cls[i](f).permute(0, 2, 3, 1).reshape(1, -1, C)
            b = self.box[i](f).permute(0, 2, 3, 1).reshape(1, -1, 4)
            scores.append(c)
            boxes.append(b)
        return torch.softmax(torch.cat(scores, 1), -1), torch.cat(boxes, 1)

    def logits(self, x):
        # training view: per cell of the finest level, the class of the blob there
        return self.cls[0](self.levels(x)[0])


def det_data(g, n):
    """A coloured square (class = colour) somewhere; every cell of the 16x16
    level it covers should say its class, the others class 0."""
    x = 0.3 * torch.randn(n, 3, 64, 64, generator=g)
    y = torch.zeros(n, 16, 16, dtype=torch.long)
    for i in range(n):
        k = int(torch.randint(1, C, (1,), generator=g))
        r, c = (int(v) for v in torch.randint(0, 48, (2,), generator=g))
        x[i, k, r:r + 16, c:c + 16] += 2.0
        y[i, r // 4:(r + 16) // 4, c // 4:(c + 16) // 4] = k
    return x, y


def make_dethead(g):
    net = DetHead()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(120):
        x, y = det_data(g, 16)
        lg = net.logits(x).reshape(x.shape[0], A, C, 16, 16)
        loss = sum(F.cross_entropy(lg[:, a], y) for a in range(A))
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    x, y = det_data(g, 64)
    with torch.no_grad():
        acc = (net.logits(x).reshape(64, A, C, 16, 16)[:, 0].argmax(1) == y).float().mean().item()
    x, _ = det_data(g, N_CALIB + 1)
    save_inputs("dethead", x[:N_CALIB].numpy(), x[N_CALIB].numpy())
    export(net, x[:1], "dethead")
    print(f"dethead: cell accuracy {acc:.3f}")


# ---- audio1d -------------------------------------------------------------------------


class Audio1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv1d(40, 32, 3, 1, 1, bias=False), nn.BatchNorm1d(32), nn.ReLU())
        self.dw = nn.Sequential(nn.Conv1d(32, 32, 5, 1, 4, dilation=2, groups=32, bias=False),
                                nn.BatchNorm1d(32), nn.ReLU())
        self.pw = nn.Sequential(nn.Conv1d(32, 48, 1, bias=False), nn.BatchNorm1d(48), nn.ReLU())
        self.c2 = nn.Sequential(nn.Conv1d(48, 48, 3, 2, 1, bias=False), nn.BatchNorm1d(48), nn.ReLU())
        self.fc = nn.Linear(48, 12)

    def forward(self, x):
        x = self.pw(self.dw(self.c1(x)))
        x = x[:, :, : x.shape[2] // 2 * 2]  # an even number of frames: computed from the shape
        x = self.c2(x)
        return self.fc(x.mean(2))


def make_audio1d(g):
    tpl = templates(g, 12, (40, 98))
    data = class_data(g, tpl, 0.5)
    net = Audio1d()
    acc = train(net, data, 150)
    x, _ = data(N_CALIB + 1)
    save_inputs("audio1d", x[:N_CALIB].numpy(), x[N_CALIB].numpy())
    export(net, x[:1], "audio1d", dynamic={"x": {2: "T"}})
    print(f"audio1d: accuracy {acc:.3f}")


# ---- lngelu --------------------------------------------------------------------------


class LnGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(32)
        self.fc1 = nn.Linear(32, 64)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(64, 32)
        self.ln2 = nn.LayerNorm(32)
        self.out = nn.Linear(32, 5)

    def forward(self, x):
        x = x + self.fc2(self.act(self.fc1(self.ln1(x))))
        return self.out(self.ln2(x).mean(1))


def make_lngelu(g):
    tpl = templates(g, 5, (16, 32))
    data = class_data(g, tpl, 0.7)
    net = LnGelu()
    acc = train(net, data, 200)
    x, _ = data(N_CALIB + 1)
    save_inputs("lngelu", x[:N_CALIB].numpy(), x[N_CALIB].numpy())
    export(net, x[:1], "lngelu")
    print(f"lngelu: accuracy {acc:.3f}")


# ---- pre-quantized: qdq and qlinear ---------------------------------------------------


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3, 1, 1)
        self.c2 = nn.Conv2d(8, 16, 3, 1, 1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def acts(self, x):
        a1 = F.relu(self.c1(x))
        p1 = F.max_pool2d(a1, 2)
        a2 = F.relu(self.c2(p1))
        p2 = F.max_pool2d(a2, 2)
        y = self.fc(torch.flatten(p2, 1))
        return a1, a2, y

    def forward(self, x):
        return self.acts(x)[2]


def act_params(lo, hi):
    """uint8 asymmetric parameters of a range, as ONNX Runtime's quantizer
    chooses them (range widened to include 0)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    s = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.round(-lo / s), 0, 255))
    return np.float32(s), np.uint8(zp)


def weight_params(w):
    """int8 symmetric per output channel in [-127, 127]."""
    m = np.abs(w.reshape(w.shape[0], -1)).max(1)
    s = np.where(m > 0, m / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.round(w / s.reshape(-1, *([1] * (w.ndim - 1)))), -127, 127).astype(np.int8)
    return q, s


def small_cnn(g):
    tpl = templates(g, 10, (1, 28, 28))
    data = class_data(g, tpl, 0.5)
    net = SmallCnn()
    acc = train(net, data, 150)
    x, _ = data(N_CALIB + 1)
    with torch.no_grad():
        a1, a2, y = net.acts(x[:N_CALIB])
    ranges = {"x": (x[:N_CALIB].min(), x[:N_CALIB].max()), "a1": (a1.min(), a1.max()),
              "a2": (a2.min(), a2.max()), "y": (y.min(), y.max())}
    p = {k: act_params(*v) for k, v in ranges.items()}
    return net, acc, x, p


def make_qdq(net, acc, x, p):
    nodes, inits = [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    made = set()

    def qdq(t, key):
        s, zp = p[key]
        if key not in made:
            made.add(key)
            init(f"{key}_scale", np.array(s, np.float32))
            init(f"{key}_zp", np.array(zp, np.uint8))
        nodes.append(helper.make_node("QuantizeLinear", [t, f"{key}_scale", f"{key}_zp"], [t + "_q"],
                                      name=f"{t}_QuantizeLinear"))
        nodes.append(helper.make_node("DequantizeLinear", [t + "_q", f"{key}_scale", f"{key}_zp"],
                                      [t + "_dq"], name=f"{t}_DequantizeLinear"))
        return t + "_dq"

    def weights(name, w, b, s_in, axis):
        q, s = weight_params(w)
        init(name + "_q", q)
        init(name + "_scale", s)
        init(name + "_zp", np.zeros(s.shape, np.int8))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"],
                                      [name], name=name + "_DequantizeLinear", axis=axis))
        bs = (s * s_in).astype(np.float32)
        init(name + "_b_q", np.round(b / bs).astype(np.int32))
        init(name + "_b_scale", bs)
        init(name + "_b_zp", np.zeros(bs.shape, np.int32))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_b_q", name + "_b_scale", name + "_b_zp"],
                                      [name + "_b"], name=name + "_b_DequantizeLinear", axis=0))

    sd = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    t = qdq("x", "x")
    weights("c1_w", sd["c1.weight"], sd["c1.bias"], p["x"][0], 0)
    nodes.append(helper.make_node("Conv", [t, "c1_w", "c1_w_b"], ["c1"], name="c1", pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["a1"], name="relu1"))
    t = qdq("a1", "a1")
    nodes.append(helper.make_node("MaxPool", [t], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]))
    t = qdq("p1", "a1")
    weights("c2_w", sd["c2.weight"], sd["c2.bias"], p["a1"][0], 0)
    nodes.append(helper.make_node("Conv", [t, "c2_w", "c2_w_b"], ["c2"], name="c2", pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c2"], ["a2"], name="relu2"))
    t = qdq("a2", "a2")
    nodes.append(helper.make_node("MaxPool", [t], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]))
    t = qdq("p2", "a2")
    nodes.append(helper.make_node("Flatten", [t], ["f"], name="flatten"))
    t = qdq("f", "a2")
    weights("fc_w", sd["fc.weight"], sd["fc.bias"], p["a2"][0], 0)
    nodes.append(helper.make_node("Gemm", [t, "fc_w", "fc_w_b"], ["y_f"], name="fc", transB=1))
    t = qdq("y_f", "y")
    nodes.append(helper.make_node("Identity", [t], ["y"], name="out"))
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_import_models")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(ROOT, "qdq.onnx"))
    save_inputs("qdq", x[:N_CALIB].numpy(), x[N_CALIB].numpy())
    print(f"qdq: float accuracy {acc:.3f}")


def make_qlinear(net, x, p):
    """x -> QuantizeLinear -> QLinearConv -> QLinearConv -> DequantizeLinear
    -> Reshape -> QuantizeLinear -> QLinearMatMul -> DequantizeLinear: the two
    convs of the small CNN with stride 2 (no pooling: the QLinear operators'
    outputs feed each other directly) and a matmul of the flattened map."""
    sd = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    inits, nodes = [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    with torch.no_grad():
        a1 = F.relu(F.conv2d(x[:N_CALIB], net.c1.weight, net.c1.bias, 2, 1))
        a2 = F.relu(F.conv2d(a1, net.c2.weight, net.c2.bias, 2, 1))
    s2, z2 = act_params(a2.min(), a2.max())
    sx, zx = p["x"]
    s1, z1 = p["a1"]
    g = torch.Generator().manual_seed(SEED + 7)
    wm = (torch.randn(16 * 7 * 7, 10, generator=g) * 0.05).numpy()
    with torch.no_grad():
        ym = torch.flatten(a2, 1).numpy() @ wm
    sy, zy = act_params(ym.min(), ym.max())
    for n, v in [("sx", sx), ("s1", s1), ("s2", s2), ("sy", sy)]:
        init(n, np.array(v, np.float32))
    for n, v in [("zx", zx), ("z1", z1), ("z2", z2), ("zy", zy)]:
        init(n, np.array(v, np.uint8))
    for k, (wname, bname, s_in) in enumerate([("c1.weight", "c1.bias", sx), ("c2.weight", "c2.bias", s1)]):
        q, s = weight_params(sd[wname])
        init(f"w{k}", q)
        init(f"ws{k}", s)
        init(f"wz{k}", np.zeros(s.shape, np.int8))
        init(f"b{k}", np.round(sd[bname] / (s * s_in)).astype(np.int32))
    # QLinearMatMul's B: per-tensor (the operator takes a scalar b_scale)
    mq = np.clip(np.round(wm / (np.abs(wm).max() / 127)), -127, 127).astype(np.int8)
    init("wm", mq)
    init("wms", np.array(np.abs(wm).max() / 127, np.float32))
    init("wmz", np.array(0, np.int8))
    init("shape", np.array([1, 16 * 7 * 7], np.int64))
    nodes += [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="quantize_x"),
        helper.make_node("QLinearConv", ["xq", "sx", "zx", "w0", "ws0", "wz0", "s1", "z1", "b0"], ["a1q"],
                         name="qconv1", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("QLinearConv", ["a1q", "s1", "z1", "w1", "ws1", "wz1", "s2", "z2", "b1"], ["a2q"],
                         name="qconv2", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("DequantizeLinear", ["a2q", "s2", "z2"], ["a2"], name="dequantize_a2"),
        helper.make_node("Reshape", ["a2", "shape"], ["f"], name="flatten"),
        helper.make_node("QuantizeLinear", ["f", "s2", "z2"], ["fq"], name="quantize_f"),
        helper.make_node("QLinearMatMul", ["fq", "s2", "z2", "wm", "wms", "wmz", "sy", "zy"], ["yq"],
                         name="qmatmul"),
        helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"], name="dequantize_y"),
    ]
    graph = helper.make_graph(nodes, "qlinear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_import_models")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(ROOT, "qlinear.onnx"))
    save_inputs("qlinear", x[:N_CALIB].numpy(), x[N_CALIB].numpy())
    print("qlinear: written")


def main():
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    os.makedirs(ROOT, exist_ok=True)
    g = torch.Generator().manual_seed(SEED)
    make_mbv3(g)
    make_dethead(g)
    make_audio1d(g)
    make_lngelu(g)
    net, acc, x, p = small_cnn(g)
    make_qdq(net, acc, x, p)
    make_qlinear(net, x, p)


if __name__ == "__main__":
    main()
