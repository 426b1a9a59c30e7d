#!/usr/bin/python3
"""Builds two models that do not fit the default NPU's on-chip memories, for
the off-chip memory path (DRAM, DMA, row strips, weight streaming):

  mlp1m   an MLP 256 -> 1024 -> ReLU -> 768 -> ReLU -> 10 (1,058,058
          parameters: 4 MB of float weights, 1 MB in int8, sixteen times
          the 64 KB weight memory), trained on a synthetic 10-class task
          (Gaussian clusters in 256 dimensions).
  det320  a small detector-style backbone on a 320x240 RGB image: conv 3x3
          s2 (16) -> BN -> ReLU; a residual block at 80x60x32 (conv 3x3 ->
          BN -> ReLU -> conv 3x3 -> BN, added to its input, ReLU); max pool;
          depthwise 3x3 + pointwise conv with hard-swish; conv 3x3 s2 (64)
          -> sigmoid; global average pool; FC to 4 classes.  Its input is
          230 KB as int8 (1.2 MB in the NPU's 16-lane words: 3 channels of 16),
          its first feature maps 600 KB and 150 KB.  Trained on a synthetic
          task: the colour of a blob somewhere in a noisy image (a global
          average pool makes the network blind to where).

Seeded and deterministic (CPU, a minute or two).  Outputs (committed):
    models/offchip/mlp1m.onnx, mlp1m/calib/*.npy (16), mlp1m/sample_*.npy (2),
    mlp1m/sample_labels.txt
    models/offchip/det320.onnx, det320/calib/*.npy (3), det320/sample_0.npy,
    det320/sample_labels.txt

Run with Debian's python: /usr/bin/python3 scripts/make_offchip_models.py
"""
import os

import numpy as np
import torch
import torch.nn as nn

SEED = 20261123
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "offchip")


def save_npy(path, a):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, a.astype(np.float32))


# ---- mlp1m ------------------------------------------------------------------------


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 1024)
        self.fc2 = nn.Linear(1024, 768)
        self.fc3 = nn.Linear(768, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def mlp_data(g, centers, n):
    y = torch.randint(0, 10, (n,), generator=g)
    x = centers[y] + 0.8 * torch.randn(n, 256, generator=g)
    return x, y


def make_mlp():
    g = torch.Generator().manual_seed(SEED)
    torch.manual_seed(SEED)
    centers = torch.randn(10, 256, generator=g) * 0.5
    net = Mlp()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(300):
        x, y = mlp_data(g, centers, 64)
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    x, y = mlp_data(g, centers, 256)
    acc = (net(x).argmax(1) == y).float().mean().item()
    print(f"mlp1m: {sum(p.numel() for p in net.parameters())} parameters, accuracy {acc:.3f}")
    out = os.path.join(ROOT, "mlp1m")
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, 256), os.path.join(ROOT, "mlp1m.onnx"), input_names=["x"],
                      output_names=["logits"], opset_version=13)
    x, y = mlp_data(g, centers, 18)
    for i in range(16):
        save_npy(os.path.join(out, "calib", f"calib_{i:02d}.npy"), x[i:i + 1].numpy())
    labels = []
    for i in range(2):
        save_npy(os.path.join(out, f"sample_{i}.npy"), x[16 + i:17 + i].numpy())
        labels.append(str(int(y[16 + i])))
    with open(os.path.join(out, "sample_labels.txt"), "w") as f:
        f.write("\n".join(labels) + "\n")


# ---- det320 ------------------------------------------------------------------------


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.c2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.r1 = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32))
        self.pool = nn.MaxPool2d(2)
        self.dw = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.BatchNorm2d(32), nn.ReLU(),
                                nn.Conv2d(32, 48, 1), nn.BatchNorm2d(48), nn.Hardswish())
        self.c3 = nn.Sequential(nn.Conv2d(48, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.Sigmoid())
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, 4)

    def forward(self, x):
        x = self.c2(self.c1(x))
        x = torch.relu(x + self.r1(x))
        x = self.c3(self.dw(self.pool(x)))
        return self.fc(torch.flatten(self.gap(x), 1))


def det_data(g, n):
    y = torch.randint(0, 4, (n,), generator=g)
    x = 0.15 * torch.randn(n, 3, 240, 320, generator=g) + 0.3
    yy, xx = torch.meshgrid(torch.arange(240.0), torch.arange(320.0), indexing="ij")
    colours = torch.tensor([[0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9], [0.8, 0.8, 0.1]])
    for i in range(n):
        cy = float(torch.randint(40, 200, (1,), generator=g))
        cx = float(torch.randint(40, 280, (1,), generator=g))
        blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * 25.0 ** 2))
        x[i] += blob.unsqueeze(0) * colours[int(y[i])].view(3, 1, 1)
    return x.clamp(0, 1), y


def make_det():
    g = torch.Generator().manual_seed(SEED + 1)
    torch.manual_seed(SEED + 1)
    net = Det()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for step in range(250):
        x, y = det_data(g, 8)
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    x, y = det_data(g, 32)
    acc = (net(x).argmax(1) == y).float().mean().item()
    print(f"det320: accuracy {acc:.3f}")
    out = os.path.join(ROOT, "det320")
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, 3, 240, 320), os.path.join(ROOT, "det320.onnx"), input_names=["image"],
                      output_names=["logits"], opset_version=13)
    x, y = det_data(g, 4)
    for i in range(3):
        save_npy(os.path.join(out, "calib", f"calib_{i}.npy"), x[i:i + 1].numpy())
    save_npy(os.path.join(out, "sample_0.npy"), x[3:4].numpy())
    with open(os.path.join(out, "sample_labels.txt"), "w") as f:
        f.write(f"{int(y[3])}\n")


if __name__ == "__main__":
    torch.set_num_threads(1)
    make_mlp()
    make_det()
