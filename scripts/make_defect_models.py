#!/usr/bin/python3
"""Builds the small ONNX fixtures of tests/models/defects/ (committed, so the
tests need no Python): model shapes that real, unseen models had and that
broke the toolchain (issue 11 section 5).  Run from the project root with
Debian's python3-torch and python3-onnx:

    /usr/bin/python3 scripts/make_defect_models.py

detector_head.onnx  a detector head (SSD's): two conv outputs [1,16,H,W]
                    transposed to [1,H,W,16], reshaped to [1,H*W*2,8] and
                    concatenated on axis 1 (the Concat runs on the host: its
                    operands are views of the conv outputs' storage)
rank3_fc.onnx       a rank-3 input [1,130,13] (a spectrogram without a channel
                    dim), Flatten, Gemm 1690->12
autoencoder.onnx    a tiny dense autoencoder of 8x8 images: its output
                    [1,1,8,8] is a reconstruction, not a class vector
residual.onnx       conv+BN+ReLU, conv+BN, a residual Add, ReLU, AvgPool,
                    Flatten, Gemm to 10 classes: every op whose MACs one
                    could count differently (BN, Add, AvgPool); a second
                    output, the pooled features [1,8,4,4]
saturating_fc.onnx  Gemm 16->6 calibrated on 4 small inputs: its x_0.npy is
                    10x larger, so several int8 scores saturate at the top
                    of the output range (a tie the float model does not have)
Each gets an input x_0.npy (and calib/ with 8 inputs) beside it.  Weights are
seeded random (these are shape fixtures, not trained networks).
"""
import os

import numpy as np
import torch
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models", "defects")


class DetectorHead(nn.Module):
    """Two scales, 2 anchors, 3 classes (8 values per anchor)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.down = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.head0 = nn.Conv2d(8, 16, 1)  # 2 anchors x 8
        self.head1 = nn.Conv2d(8, 16, 1)

    @staticmethod
    def flat(y):
        # SSD's layout: [N, A*K, H, W] -> [N, H, W, A*K] -> [N, H*W*A, K]
        n = y.shape[0]
        return y.permute(0, 2, 3, 1).reshape(n, -1, 8)

    def forward(self, x):
        a = torch.relu(self.stem(x))
        b = torch.relu(self.down(a))
        return torch.cat([self.flat(self.head0(a)), self.flat(self.head1(b))], dim=1)


class Rank3Fc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(130 * 13, 12)

    def forward(self, x):
        return self.fc(torch.flatten(x, 1))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.b2 = nn.BatchNorm2d(8)
        self.pool = nn.AvgPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        a = torch.relu(self.b1(self.c1(x)))
        b = torch.relu(self.b2(self.c2(a)) + a)
        p = self.pool(b)
        return self.fc(torch.flatten(p, 1)), p


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, 8)
        self.dec = nn.Linear(8, 64)

    def forward(self, x):
        y = torch.sigmoid(self.dec(torch.relu(self.enc(torch.flatten(x, 1)))))
        return y.reshape(1, 1, 8, 8)


def export(name, model, shape, make_input, outputs=("y",), n_calib=8, make_calib=None):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "calib"), exist_ok=True)
    model.eval()
    x = make_input(0)
    assert x.shape == shape
    torch.onnx.export(model, torch.from_numpy(x), os.path.join(OUT, name + ".onnx"),
                      input_names=["x"], output_names=list(outputs), opset_version=13,
                      do_constant_folding=True)
    np.save(os.path.join(d, "x_0.npy"), x)
    for i in range(n_calib):
        np.save(os.path.join(d, "calib", "calib_%d.npy" % i), (make_calib or make_input)(100 + i))


def main():
    torch.manual_seed(11)
    with torch.no_grad():
        det = DetectorHead()
        export("detector_head", det, (1, 3, 16, 16),
               lambda s: np.random.default_rng(s).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
        r3 = Rank3Fc()
        export("rank3_fc", r3, (1, 130, 13),
               lambda s: np.random.default_rng(s).normal(0, 1, (1, 130, 13)).astype(np.float32))
        res = Residual()
        for bn in (res.b1, res.b2):  # non-trivial statistics, as after training
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)
        export("residual", res, (1, 3, 8, 8),
               lambda s: np.random.default_rng(s).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32),
               outputs=("y", "features"))
        ae = AutoEncoder()
        export("autoencoder", ae, (1, 1, 8, 8),
               lambda s: np.random.default_rng(s).uniform(0, 1, (1, 1, 8, 8)).astype(np.float32))
        sat = nn.Linear(16, 6)
        export("saturating_fc", sat, (1, 16),
               lambda s: np.full((1, 16), 10.0, np.float32),
               n_calib=4,
               make_calib=lambda s: np.random.default_rng(s).uniform(0, 1, (1, 16)).astype(np.float32))


if __name__ == "__main__":
    main()
