#!/usr/bin/python3
"""Builds models/real/: eleven small models with the architectures of
public real ones, of the kinds an edge NPU meets (issue 26), each exported
the way PyTorch (or, for the If, onnx.helper) writes such a model:

  resnet8        MLPerf Tiny image classification: ResNet-8 on 32x32x3
                 (residual adds, a 1x1 projection shortcut), 10 classes.
  dscnn_kws      MLPerf Tiny keyword spotting: DS-CNN (S) on 49x10 MFCCs,
                 a 10x4 stride-2 conv, four depthwise-separable blocks.
  ad_autoencoder MLPerf Tiny anomaly detection: the FC autoencoder on 640
                 log-mel features (128 x 4, 8, 128 x 4, 640).
  vww_mbv1       MLPerf Tiny visual wake words: MobileNetV1 (width 0.25)
                 on 96x96x3, two classes.
  yolo_tiny      a YOLO-style detector on 128x128x3: two levels, each head
                 reshaped to [1, A, 5+C, cells], transposed, its boxes,
                 objectness and classes decoded (sigmoid, exp).
  face_slim      the Ultra-Light-Fast face detector's slim backbone on
                 120x160x3, its input normalisation (x - 127) / 128 inside,
                 three levels of score (Softmax) and box heads concatenated.
  unet_small     a U-Net for segmentation on 64x64x3: three levels, max
                 pool down, nearest and bilinear Resize up, skip Concats.
  logmel_cnn     an audio front end in the graph: an STFT as a strided 1-D
                 conv (n_fft 256, hop 128) of cosine and sine kernels,
                 power, a mel filter bank (MatMul), log, the top_db clamp
                 (a Clip whose min is the map's max - 8), then a CNN.
  vad_lstm       a Silero-style voice-activity detector: an If on the
                 sample rate (bound) choosing the front end, an LSTM (64
                 hidden) whose state is a graph input and output, a sigmoid.
  crnn_gru       a keyword spotter with a recurrent layer: a conv over 40 x
                 49 MFCCs, then a GRU (32 hidden) over the frames, FC.
  vit_block      a transformer encoder block on 16 tokens of 32: LayerNorm,
                 two-head self-attention (QK^T, Softmax, AV), GELU MLP,
                 residuals, mean over tokens, a classifier.

Weights are seeded random numbers; the classifiers and the autoencoder are
then trained briefly on synthetic tasks (smooth class templates plus
noise; reconstruction), the others keep their random weights, and every
net's BatchNormalization statistics are set by forward passes on its
calibration-like inputs (so activations have realistic ranges); every run
writes the same bytes (about a minute on two cores).  Each model gets its
calibration inputs (models/real/<name>/calib/) and a sample
(models/real/<name>/sample_0.npy; vad_lstm one file per input and sr.npy).

Run with Debian's python (python3-torch, python3-onnx):
    /usr/bin/python3 scripts/make_real_models.py
"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

SEED = 20260126
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "real")


def save_npy(path, a, dtype=np.float32):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.asarray(a, dtype=dtype))


def save_inputs(name, xs):
    """xs: [n + 1, ...]: n calibration inputs then the sample."""
    for i in range(len(xs) - 1):
        save_npy(os.path.join(ROOT, name, "calib", f"calib_{i:02d}.npy"), xs[i][None])
    save_npy(os.path.join(ROOT, name, "sample_0.npy"), xs[-1][None])


def settle_bn(net, xs, batched):
    """BatchNorm statistics of the inputs (a cumulative average over the
    batch, or over one input at a time for a net written for batch 1),
    then eval."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d) or isinstance(m, nn.BatchNorm1d):
            m.reset_running_stats()
            m.momentum = None
    net.train()
    with torch.no_grad():
        for x in ([xs] if batched else [x[None] for x in xs]):
            net(x)
    net.eval()


def export(net, x, name, inputs=("x",), outputs=("y",), opset=13):
    torch.onnx.export(net, x, os.path.join(ROOT, name + ".onnx"), input_names=list(inputs),
                      output_names=list(outputs), opset_version=opset, do_constant_folding=True)


def images(g, n, c, h, w):
    """Smooth random images (low-frequency structure, as photos have)."""
    x = torch.randn(n, c, h // 4, w // 4, generator=g)
    x = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False)
    return x + 0.2 * torch.randn(n, c, h, w, generator=g)


def cbr(ci, co, k=3, s=1, groups=1, act=True):
    layers = [nn.Conv2d(ci, co, k, s, k // 2 if isinstance(k, int) else (k[0] // 2, k[1] // 2),
                        groups=groups, bias=False), nn.BatchNorm2d(co)]
    if act:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


# ---- classification --------------------------------------------------------------------


class Res(nn.Module):
    def __init__(self, ci, co, s):
        super().__init__()
        self.a = cbr(ci, co, 3, s)
        self.b = cbr(co, co, 3, 1, act=False)
        self.sc = cbr(ci, co, 1, s, act=False) if s != 1 or ci != co else None

    def forward(self, x):
        return F.relu(self.b(self.a(x)) + (self.sc(x) if self.sc is not None else x))


class ResNet8(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = cbr(3, 16)
        self.s = nn.Sequential(Res(16, 16, 1), Res(16, 32, 2), Res(32, 64, 2))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.s(self.stem(x)), 1), 1))


def dw_sep(ci, co, s):
    return nn.Sequential(cbr(ci, ci, 3, s, groups=ci), cbr(ci, co, 1))


class DsCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = cbr(1, 64, (10, 4), 2)
        self.blocks = nn.Sequential(*[dw_sep(64, 64, 1) for _ in range(4)])
        self.fc = nn.Linear(64, 12)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class MbV1(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = [(8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2)] + \
              [(128, 128, 1)] * 5 + [(128, 256, 2), (256, 256, 1)]
        self.stem = cbr(3, 8, 3, 2)
        self.blocks = nn.Sequential(*[dw_sep(a, b, s) for a, b, s in cfg])
        self.fc = nn.Linear(256, 2)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class AutoEnc(nn.Module):
    def __init__(self):
        super().__init__()
        def fc(a, b):
            return [nn.Linear(a, b), nn.BatchNorm1d(b), nn.ReLU()]
        layers = fc(640, 128) + fc(128, 128) * 1
        layers = []
        dims = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
        for a, b in zip(dims, dims[1:]):
            layers += fc(a, b)
        layers.append(nn.Linear(128, 640))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


# ---- detection and segmentation ------------------------------------------------------------


class YoloTiny(nn.Module):
    A, C = 3, 4

    def __init__(self):
        super().__init__()
        self.b = nn.Sequential(cbr(3, 16, 3, 2), cbr(16, 32, 3, 2), cbr(32, 32, 3, 2), cbr(32, 64, 3, 2))  # 8x8
        self.b2 = cbr(64, 64, 3, 2)  # 4x4
        self.h1 = nn.Conv2d(64, self.A * (5 + self.C), 1)
        self.h2 = nn.Conv2d(64, self.A * (5 + self.C), 1)

    def decode(self, p):
        n, _, h, w = p.shape
        p = p.reshape(1, self.A, 5 + self.C, h * w).permute(0, 1, 3, 2)  # [1, A, cells, 5+C]
        xy = torch.sigmoid(p[..., 0:2])
        wh = torch.exp(p[..., 2:4])
        rest = torch.sigmoid(p[..., 4:])
        return torch.cat([xy, wh, rest], -1).reshape(1, -1, 5 + self.C)

    def forward(self, x):
        f1 = self.b(x)
        f2 = self.b2(f1)
        return torch.cat([self.decode(self.h1(f1)), self.decode(self.h2(f2))], 1)


class FaceSlim(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Sequential(cbr(3, 16, 3, 2), dw_sep(16, 32, 1), dw_sep(32, 32, 2), dw_sep(32, 32, 1),
                                dw_sep(32, 64, 2), dw_sep(64, 64, 1))      # 15x20
        self.l2 = nn.Sequential(dw_sep(64, 128, 2), dw_sep(128, 128, 1))   # 8x10
        self.l3 = nn.Sequential(dw_sep(128, 256, 2))                       # 4x5
        self.cls = nn.ModuleList(nn.Conv2d(c, 2 * a, 3, 1, 1) for c, a in ((64, 3), (128, 2), (256, 3)))
        self.box = nn.ModuleList(nn.Conv2d(c, 4 * a, 3, 1, 1) for c, a in ((64, 3), (128, 2), (256, 3)))

    def forward(self, x):
        x = (x - 127.0) / 128.0
        f1 = self.l1(x)
        f2 = self.l2(f1)
        f3 = self.l3(f2)
        sc, bx = [], []
        for f, c, b in zip((f1, f2, f3), self.cls, self.box):
            sc.append(c(f).permute(0, 2, 3, 1).reshape(1, -1, 2))
            bx.append(b(f).permute(0, 2, 3, 1).reshape(1, -1, 4))
        return F.softmax(torch.cat(sc, 1), -1), torch.cat(bx, 1)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.e1 = nn.Sequential(cbr(3, 16), cbr(16, 16))
        self.e2 = nn.Sequential(cbr(16, 32), cbr(32, 32))
        self.e3 = nn.Sequential(cbr(32, 64), cbr(64, 64))
        self.d2 = nn.Sequential(cbr(64 + 32, 32), cbr(32, 32))
        self.d1 = nn.Sequential(cbr(32 + 16, 16), cbr(16, 16))
        self.out = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(F.max_pool2d(a, 2))
        c = self.e3(F.max_pool2d(b, 2))
        u2 = self.d2(torch.cat([F.interpolate(c, scale_factor=2, mode="nearest"), b], 1))
        u1 = self.d1(torch.cat([F.interpolate(u2, scale_factor=2, mode="bilinear", align_corners=False), a], 1))
        return self.out(u1)


# ---- audio ------------------------------------------------------------------------------------


def mel_bank(n_mels, n_bins, sr=16000):
    def hz2mel(f):
        return 2595 * np.log10(1 + f / 700.0)
    mels = np.linspace(hz2mel(20), hz2mel(sr / 2), n_mels + 2)
    hz = 700 * (10 ** (mels / 2595) - 1)
    bins = np.floor((n_bins - 1) * 2 * hz / sr).astype(int)
    fb = np.zeros((n_mels, n_bins), np.float32)
    for m in range(1, n_mels + 1):
        a, b, c = bins[m - 1], bins[m], bins[m + 1]
        for k in range(a, b):
            fb[m - 1, k] = (k - a) / max(b - a, 1)
        for k in range(b, c):
            fb[m - 1, k] = (c - k) / max(c - b, 1)
    return fb


class LogMelCnn(nn.Module):
    NFFT, HOP, MELS = 256, 128, 40

    def __init__(self):
        super().__init__()
        n = np.arange(self.NFFT)
        win = 0.5 - 0.5 * np.cos(2 * np.pi * n / self.NFFT)
        k = np.arange(self.NFFT // 2 + 1)[:, None]
        cos = (np.cos(2 * np.pi * k * n / self.NFFT) * win).astype(np.float32)
        sin = (-np.sin(2 * np.pi * k * n / self.NFFT) * win).astype(np.float32)
        self.stft = nn.Conv1d(1, 2 * len(k), self.NFFT, self.HOP, bias=False)
        self.stft.weight.data = torch.from_numpy(np.concatenate([cos, sin])[:, None, :])
        self.register_buffer("mel", torch.from_numpy(mel_bank(self.MELS, len(k))))
        self.cnn = nn.Sequential(cbr(1, 16, 3, 2), cbr(16, 32, 3, 2), cbr(32, 32, 3, 1))
        self.fc = nn.Linear(32, 12)

    def forward(self, x):
        s = self.stft(x)                                   # [1, 2K, T]
        re, im = s[:, :s.shape[1] // 2], s[:, s.shape[1] // 2:]
        p = re * re + im * im                              # power
        m = torch.matmul(self.mel, p)                      # [1, MELS, T]
        lm = torch.log(m + 1e-6)
        lm = torch.clamp(lm, min=lm.max() - 8.0)           # top_db: the graph computes the min
        y = self.cnn(lm.unsqueeze(1))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


class CrnnGru(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = cbr(1, 16, 3, (2, 1))  # [1, 16, 20, 49]
        self.proj = nn.Conv2d(16, 4, 1)     # [1, 4, 20, 49]
        self.gru = nn.GRU(80, 32)
        self.fc = nn.Linear(32, 12)

    def forward(self, x):
        y = self.proj(self.conv(x))                         # [1, 4, 20, 49]
        seq = y.reshape(1, 80, 49).permute(2, 0, 1)         # [49, 1, 80]
        _, h = self.gru(seq)
        return self.fc(h[0])


class VitBlock(nn.Module):
    D, H, T = 32, 2, 16

    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(self.D)
        self.qkv = nn.Linear(self.D, 3 * self.D)
        self.proj = nn.Linear(self.D, self.D)
        self.ln2 = nn.LayerNorm(self.D)
        self.mlp = nn.Sequential(nn.Linear(self.D, 64), nn.GELU(), nn.Linear(64, self.D))
        self.cls = nn.Linear(self.D, 5)

    def forward(self, x):                                   # [1, T, D]
        h = self.ln1(x)
        q, k, v = self.qkv(h).split(self.D, -1)
        dh = self.D // self.H
        q = q.reshape(1, self.T, self.H, dh).transpose(1, 2)
        k = k.reshape(1, self.T, self.H, dh).transpose(1, 2)
        v = v.reshape(1, self.T, self.H, dh).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / dh ** 0.5, -1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(1, self.T, self.D)
        x = x + self.proj(o)
        x = x + self.mlp(self.ln2(x))
        return self.cls(x.mean(1))


# ---- the VAD: an If (onnx.helper) around a PyTorch-exported LSTM front end -------------------


def vad_lstm(g):
    HID, T = 64, 16
    rng = np.random.default_rng(SEED + 9)

    def conv(name, ci, co, k, s, inp, nodes, inits, relu=True, pad=None):
        p = k // 2 if pad is None else pad
        w = (rng.standard_normal((co, ci, k)) * np.sqrt(2.0 / (ci * k))).astype(np.float32)
        b = (rng.standard_normal(co) * 0.05).astype(np.float32)
        inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
        nodes.append(helper.make_node("Conv", [inp, name + "_w", name + "_b"], [name + "_c"], name=name,
                                      kernel_shape=[k], strides=[s], pads=[p, p]))
        if relu:
            nodes.append(helper.make_node("Relu", [name + "_c"], [name + "_o"], name=name + "_relu"))
            return name + "_o"
        return name + "_c"

    def branch(tag, k0):
        """512 samples: 16 kHz frames of 8 samples (64), 8 kHz ones of 4
        samples every 8 (the even samples' frames); then two stride-2 convs:
        16 steps."""
        nodes, inits = [], []
        y = conv(tag + "_c1", 1, 32, k0, 8, "audio", nodes, inits, pad=0)
        y = conv(tag + "_c2", 32, 32, 3, 2, y, nodes, inits)
        y = conv(tag + "_c3", 32, 32, 3, 2, y, nodes, inits)
        nodes.append(helper.make_node("Identity", [y], [tag + "_feat"], name=tag + "_out"))
        return helper.make_graph(nodes, tag, [], [helper.make_tensor_value_info(tag + "_feat", TensorProto.FLOAT,
                                                                                [1, 32, T])], initializer=inits)

    then_g = branch("sr16k", 8)
    else_g = branch("sr8k", 4)
    nodes, inits = [], []
    inits.append(numpy_helper.from_array(np.array(16000, np.int64), "sr16000"))
    nodes.append(helper.make_node("Equal", ["sr", "sr16000"], ["is16k"], name="is16k"))
    nodes.append(helper.make_node("If", ["is16k"], ["feat"], name="frontend", then_branch=then_g,
                                  else_branch=else_g))
    nodes.append(helper.make_node("Transpose", ["feat"], ["seq"], name="to_seq", perm=[2, 0, 1]))
    W = (rng.standard_normal((1, 4 * HID, 32)) * 0.15).astype(np.float32)
    R = (rng.standard_normal((1, 4 * HID, HID)) * 0.15).astype(np.float32)
    B = (rng.standard_normal((1, 8 * HID)) * 0.05).astype(np.float32)
    inits += [numpy_helper.from_array(W, "lstm_W"), numpy_helper.from_array(R, "lstm_R"),
              numpy_helper.from_array(B, "lstm_B")]
    nodes.append(helper.make_node("LSTM", ["seq", "lstm_W", "lstm_R", "lstm_B", "", "h", "c"],
                                  ["lstm_y", "hn", "cn"], name="lstm", hidden_size=HID))
    inits.append(numpy_helper.from_array(np.array([0], np.int64), "ax0"))
    nodes.append(helper.make_node("Squeeze", ["hn", "ax0"], ["last"], name="last"))
    wo = (rng.standard_normal((1, HID)) * 0.2).astype(np.float32)
    inits += [numpy_helper.from_array(wo, "out_w"), numpy_helper.from_array(np.zeros(1, np.float32), "out_b")]
    nodes.append(helper.make_node("Gemm", ["last", "out_w", "out_b"], ["logit"], name="out", transB=1))
    nodes.append(helper.make_node("Sigmoid", ["logit"], ["prob"], name="prob"))
    F32 = TensorProto.FLOAT
    gr = helper.make_graph(nodes, "vad_lstm",
                           [helper.make_tensor_value_info("audio", F32, [1, 1, 512]),
                            helper.make_tensor_value_info("sr", TensorProto.INT64, []),
                            helper.make_tensor_value_info("h", F32, [1, 1, HID]),
                            helper.make_tensor_value_info("c", F32, [1, 1, HID])],
                           [helper.make_tensor_value_info("prob", F32, [1, 1]),
                            helper.make_tensor_value_info("hn", F32, [1, 1, HID]),
                            helper.make_tensor_value_info("cn", F32, [1, 1, HID])], initializer=inits)
    m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", 14)], producer_name="make_real_models")
    m.ir_version = 8
    with open(os.path.join(ROOT, "vad_lstm.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    d = os.path.join(ROOT, "vad_lstm")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "sr.npy"), np.array(16000, np.int64))
    xs, hs, cs = [], [], []
    for i in range(9):
        r = np.random.default_rng(SEED + 900 + i)
        t = np.arange(512) / 16000.0
        speech = i % 2 == 0
        a = 0.3 * np.sin(2 * np.pi * r.uniform(120, 300) * t) * (1 + 0.5 * np.sin(2 * np.pi * 4 * t)) if speech else 0
        xs.append((a + 0.02 * r.standard_normal(512))[None, None])
        hs.append(np.tanh(r.standard_normal((1, 1, HID)) * 0.3))
        cs.append(r.standard_normal((1, 1, HID)) * 0.3)
    for k, (nm, v) in enumerate((("audio", xs), ("h", hs), ("c", cs))):
        save_npy(os.path.join(d, "calib", f"{k}_{nm}.npy"), np.stack(v[:8]))
        save_npy(os.path.join(d, f"sample_{nm}.npy"), v[8])


def train_cls(net, g, shape, k, steps=80, batched=True):
    """A few steps of Adam on k smooth class templates plus noise: a
    classifier whose logits mean something (int8 against float is then a
    real comparison)."""
    tpl = images(g, k, *shape) * 1.5 if len(shape) == 3 else torch.randn(k, *shape, generator=g)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    net.train()
    for _ in range(steps):
        y = torch.randint(0, k, (16,), generator=g)
        x = tpl[y] + 0.6 * torch.randn(16, *shape, generator=g)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    return tpl


def train_ae(net, g, steps=150):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.train()
    for _ in range(steps):
        x = torch.randn(32, 640, generator=g).cumsum(1) / 10 - 5  # smooth spectra
        loss = F.mse_loss(net(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()


def main():
    os.makedirs(ROOT, exist_ok=True)
    torch.manual_seed(SEED)
    g = torch.Generator().manual_seed(SEED)

    def make(name, net, xs, batched=False, **kw):
        settle_bn(net, xs[:-1], batched)
        save_inputs(name, xs.numpy())
        export(net, xs[:1], name, **kw)
        print(name, "exported")

    def cls_inputs(tpl, n):
        y = torch.randint(0, tpl.shape[0], (n,), generator=g)
        return tpl[y] + 0.6 * torch.randn(n, *tpl.shape[1:], generator=g)

    net = ResNet8()
    make("resnet8", net, cls_inputs(train_cls(net, g, (3, 32, 32), 10), 9))
    net = DsCnn()
    make("dscnn_kws", net, cls_inputs(train_cls(net, g, (1, 49, 10), 12), 9))
    net = AutoEnc()
    train_ae(net, g)
    make("ad_autoencoder", net, torch.randn(9, 640, generator=g).cumsum(1) / 10 - 5, batched=True)
    net = MbV1()
    make("vww_mbv1", net, cls_inputs(train_cls(net, g, (3, 96, 96), 2, steps=40), 5))
    make("yolo_tiny", YoloTiny(), images(g, 5, 3, 128, 128), outputs=("detections",))
    make("face_slim", FaceSlim(), 127 + 60 * images(g, 5, 3, 120, 160), outputs=("scores", "boxes"))
    make("unet_small", UNet(), images(g, 5, 3, 64, 64), outputs=("mask",))
    t = torch.arange(4000) / 16000.0
    aud = torch.stack([0.3 * torch.sin(2 * np.pi * f * t) + 0.03 * torch.randn(4000, generator=g)
                       for f in np.linspace(200, 3000, 9)])[:, None, :]
    make("logmel_cnn", LogMelCnn(), aud)
    make("crnn_gru", CrnnGru(), torch.randn(9, 1, 40, 49, generator=g), opset=14)
    make("vit_block", VitBlock(), torch.randn(9, 16, 32, generator=g), opset=17)
    vad_lstm(g)


if __name__ == "__main__":
    main()
