#!/usr/bin/python3
"""Builds models/pruned_cnn: a small visual-wake-words-style CNN whose layers
were pruned to channel counts that do not fill 16 PEs (4, 7 and 13 output
channels), the case lane groups are for (docs/microarch.md section 16).

    Conv1 3x3x4  s2 p1 -> ReLU   48x48x3  -> 24x24x4
    Conv2 3x3x7  s1 p1 -> ReLU            -> 24x24x7
    Conv3 3x3x13 s2 p1 -> ReLU            -> 12x12x13
    GlobalAveragePool -> Flatten -> Gemm 13 -> 2

The weights are torch's default initialisation under a fixed seed (no
training: the model is about mapping, and its int8 result is checked against
the golden reference, not against labels); inputs are seeded uniform draws.

Outputs (committed, so the tests need no Python):
    models/pruned_cnn.onnx
    models/pruned_cnn/sample_0.npy            input [1,3,48,48] float32
    models/pruned_cnn/calib/calib_{00..15}.npy calibration inputs

Run with Debian's python: /usr/bin/python3 scripts/make_pruned_model.py
"""
import os

import numpy as np
import torch
import torch.nn as nn

SEED = 20261123
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")


class Pruned(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(4, 7, 3, stride=1, padding=1), nn.ReLU(),
            nn.Conv2d(7, 13, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(13, 2)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def main():
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    model = Pruned().eval()
    out = os.path.join(ROOT, "pruned_cnn")
    os.makedirs(os.path.join(out, "calib"), exist_ok=True)
    x = rng.uniform(-1.0, 1.0, size=(1, 3, 48, 48)).astype(np.float32)
    np.save(os.path.join(out, "sample_0.npy"), x)
    for i in range(16):
        c = rng.uniform(-1.0, 1.0, size=(1, 3, 48, 48)).astype(np.float32)
        np.save(os.path.join(out, "calib", "calib_%02d.npy" % i), c)
    torch.onnx.export(model, torch.from_numpy(x), os.path.join(ROOT, "pruned_cnn.onnx"),
                      input_names=["input"], output_names=["logits"], opset_version=13,
                      do_constant_folding=True)


if __name__ == "__main__":
    main()
