#!/usr/bin/python3
"""Builds EasyNPU's default model: the keyword-spotting CNN of SPEC section 6.

    Conv1 3x3x28 s(1,2) -> BN -> ReLU1   26x49x1  -> 24x24x28
    Conv2 3x3x24 s(1,1) -> BN -> ReLU1            -> 22x22x24
    Conv3 3x3x16 s(2,1) -> BN -> ReLU1            -> 10x20x16
    Conv4 3x3x12 s(1,2) -> BN -> ReLU1            -> 8x9x12
    FC1 864 -> 30 -> ReLU1,  FC2 30 -> 12          (ReLU1 = clip to [0, 1])

Weights: there is no speech corpus on this machine, so the network is trained
(seeded, deterministic, CPU, about a minute) on a synthetic 12-class task whose
inputs look like MFCC frames: each class is a fixed random smooth
spectro-temporal template; samples are the template, time-shifted, scaled and
with noise.  BatchNormalization keeps its running statistics from that
training, so BN is real (not identity) and is exported as its own node, as the
design note has it (the compiler folds or fuses it).

Outputs (committed, so the main job needs no Python):
    models/kws_cnn.onnx
    models/kws_cnn/sample_{0..3}.npy      inputs [1,1,26,49] float32
    models/kws_cnn/sample_labels.txt      the class of each sample
    models/kws_cnn/calib/calib_{00..31}.npy  calibration inputs
    models/kws_cnn/calib_labels.txt       the class of each calibration input

Run with Debian's python: /usr/bin/python3 scripts/make_kws_model.py

    --data-only      draws the data exactly as a full build does (every numpy
                     draw depends on the seed alone, not on the training),
                     checks that the committed sample and calibration inputs
                     are those draws, bit for bit, and writes the two labels
                     files; no torch needed, nothing else changes
    --test-set DIR   also writes the 512 held-out inputs the build measures
                     its accuracy on: DIR/test_inputs.npy [512,1,26,49] and
                     DIR/test_labels.txt (one class per line, in order)
"""
import os
import sys

import numpy as np

try:
    import torch
    import torch.nn as nn
except ImportError:  # --data-only needs numpy alone
    torch = nn = None

SEED = 20261121
H, W, CLASSES = 26, 49, 12
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")


class ReLU1(nn.Module if nn else object):
    def forward(self, x):
        return torch.nn.functional.hardtanh(x, 0.0, 1.0)


class KwsCnn(nn.Module if nn else object):
    def __init__(self):
        super().__init__()

        def block(ci, co, stride):
            return [nn.Conv2d(ci, co, 3, stride=stride, bias=True), nn.BatchNorm2d(co), ReLU1()]

        self.features = nn.Sequential(
            *block(1, 28, (1, 2)), *block(28, 24, (1, 1)),
            *block(24, 16, (2, 1)), *block(16, 12, (1, 2)))
        self.fc1 = nn.Linear(864, 30)
        self.act = ReLU1()
        self.fc2 = nn.Linear(30, CLASSES)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.fc2(self.act(self.fc1(x)))


def templates(rng):
    """One smooth random spectro-temporal pattern per class."""
    t = np.zeros((CLASSES, H, W), np.float32)
    for c in range(CLASSES):
        base = rng.normal(0, 1, (H // 2 + 1, W // 4 + 1))
        up = np.kron(base, np.ones((2, 4)))[:H, :W]
        t[c] = (np.cumsum(up, axis=1) / 4.0 + rng.normal(0, 0.3, (H, 1))) * 0.3
    return t


def sample(rng, tmpl, n):
    labels = rng.integers(0, CLASSES, n)
    x = np.empty((n, 1, H, W), np.float32)
    for i, c in enumerate(labels):
        shift = int(rng.integers(-4, 5))
        x[i, 0] = np.roll(tmpl[c], shift, axis=1) * rng.uniform(0.7, 1.3) + rng.normal(0, 1.2, (H, W))
    return x, labels


def draw_data(rng, tmpl, train_step=None):
    """Every numpy draw of a build after the templates, in order: 600 training
    batches (each handed to train_step), the held-out set, the samples, the
    calibration inputs."""
    for step in range(600):
        x, y = sample(rng, tmpl, 32)
        if train_step:
            train_step(step, x, y)
    return sample(rng, tmpl, 512), sample(rng, tmpl, 4), sample(rng, tmpl, 32)


def write_labels(path, names, labels):
    with open(path, "w") as f:
        for name, c in zip(names, labels):
            f.write(f"{name} {int(c)}\n")


def write_data_labels(samples, calib):
    d = os.path.join(ROOT, "kws_cnn")
    write_labels(os.path.join(d, "sample_labels.txt"), [f"sample_{i}.npy" for i in range(4)], samples[1])
    write_labels(os.path.join(d, "calib_labels.txt"), [f"calib_{i:02d}.npy" for i in range(32)], calib[1])


def data_only(test_dir):
    rng = np.random.default_rng(SEED)
    held, samples, calib = draw_data(rng, templates(rng))
    d = os.path.join(ROOT, "kws_cnn")
    for i in range(4):
        if not np.array_equal(np.load(os.path.join(d, f"sample_{i}.npy")), samples[0][i:i + 1]):
            sys.exit(f"sample_{i}.npy is not the seeded draw: rebuild the model")
    for i in range(32):
        if not np.array_equal(np.load(os.path.join(d, "calib", f"calib_{i:02d}.npy")), calib[0][i:i + 1]):
            sys.exit(f"calib_{i:02d}.npy is not the seeded draw: rebuild the model")
    write_data_labels(samples, calib)
    print("the committed inputs are the seeded draws; wrote the labels", file=sys.stderr)
    if test_dir:
        os.makedirs(test_dir, exist_ok=True)
        np.save(os.path.join(test_dir, "test_inputs.npy"), held[0])
        with open(os.path.join(test_dir, "test_labels.txt"), "w") as f:
            f.writelines(f"{int(c)}\n" for c in held[1])
        print(f"wrote {len(held[1])} held-out inputs to {test_dir}", file=sys.stderr)


def main():
    if "--data-only" in sys.argv[1:]:
        args = sys.argv[1:]
        test_dir = args[args.index("--test-set") + 1] if "--test-set" in args else None
        data_only(test_dir)
        return
    rng = np.random.default_rng(SEED)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tmpl = templates(rng)
    model = KwsCnn()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    model.train()

    def train_step(step, x, y):
        opt.zero_grad()
        loss = loss_fn(model(torch.from_numpy(x)), torch.from_numpy(y).long())
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.3f}", file=sys.stderr)

    (xt, yt), (xs, ys), (xc, yc) = draw_data(rng, tmpl, train_step)
    model.eval()
    with torch.no_grad():
        acc = (model(torch.from_numpy(xt)).argmax(1).numpy() == yt).mean()
    print(f"held-out synthetic accuracy: {acc:.3f}", file=sys.stderr)

    os.makedirs(os.path.join(ROOT, "kws_cnn", "calib"), exist_ok=True)
    path = os.path.join(ROOT, "kws_cnn.onnx")
    dummy = torch.zeros(1, 1, H, W)
    # PRESERVE keeps BatchNormalization as a node (EVAL would fold it into the
    # conv), in inference form because the module is in eval mode.
    torch.onnx.export(model, dummy, path, opset_version=13, input_names=["mfcc"],
                      output_names=["logits"], training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    for i in range(4):
        np.save(os.path.join(ROOT, "kws_cnn", f"sample_{i}.npy"), xs[i:i + 1])
    for i in range(32):
        np.save(os.path.join(ROOT, "kws_cnn", "calib", f"calib_{i:02d}.npy"), xc[i:i + 1])
    write_data_labels((xs, ys), (xc, yc))
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
