#!/usr/bin/python3
"""An independent numpy implementation of the MLPerf Tiny keyword-spotting
front end (docs/audio.md), the yardstick of EasyNPU's C front end
(src/audio/frontend.c).

Written from the MLPerf Tiny training code's description of the pipeline
(mlcommons/tiny benchmark/training/keyword_spotting: kws_util.py defaults,
keras_model.py prepare_model_settings, get_dataset.py
prepare_processing_graph) and TensorFlow's documented tf.signal operations,
in float64 and vectorized, the other way round from the C code: the clip is
normalized first (as TensorFlow does), frames are cut with strides,
np.fft.rfft instead of FFTW, a dense mel matrix, the DCT as one matrix
product.

    /usr/bin/python3 scripts/kws_features_ref.py OUT_DIR WAV...

writes, for each WAV, OUT_DIR/<name>.mfcc.npy (float64 [49, 10]) and
OUT_DIR/<name>.int8.npy (int8 [49, 10], quantized with the reference
DS-CNN's input scale and zero point by TFLite's rule).  For a recording
longer than 1 s, --windows HOP_SAMPLES writes the features of every window
of 16000 samples at that hop, stacked: [windows, 49, 10].

Run with Debian's python3-numpy (/usr/bin/python3); nothing of EasyNPU's
product needs Python.
"""
import argparse
import os
import sys
import wave

import numpy as np

RATE = 16000
CLIP = 16000         # clip_duration_ms 1000
WINDOW = 480         # window_size_ms 30
STRIDE = 320         # window_stride_ms 20
FFT = 512            # fft_length=None: next power of two of 480
N_MEL = 40
LOW_HZ, HIGH_HZ = 20.0, 4000.0
LOG_OFFSET = 1e-6
N_COEFFS = 10
N_FRAMES = 1 + (CLIP - WINDOW) // STRIDE
# kws_ref_model.tflite's input tensor (the C test checks the model has them)
INPUT_SCALE = np.float32(0.584702909)
INPUT_ZERO_POINT = 83


def read_wav(path):
    with wave.open(path, "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"{path}: mono 16-bit PCM expected")
        if w.getframerate() != RATE:
            sys.exit(f"{path}: {w.getframerate()} Hz, {RATE} expected")
        data = w.readframes(w.getnframes())
    return np.frombuffer(data, dtype="<i2").astype(np.float64)


def hz_to_mel(f):
    return 1127.0 * np.log1p(np.asarray(f, dtype=np.float64) / 700.0)


def mel_matrix():
    """tf.signal.linear_to_mel_weight_matrix, [bins, mels]."""
    bins = FFT // 2 + 1
    freqs = np.linspace(0.0, RATE / 2.0, bins)
    mel = hz_to_mel(freqs)[:, None]
    edges = np.linspace(hz_to_mel(LOW_HZ), hz_to_mel(HIGH_HZ), N_MEL + 2)
    lower, center, upper = edges[:-2][None, :], edges[1:-1][None, :], edges[2:][None, :]
    rising = (mel - lower) / (center - lower)
    falling = (upper - mel) / (upper - center)
    w = np.maximum(0.0, np.minimum(rising, falling))
    w[0, :] = 0.0  # the DC bin is excluded
    return w


def dct_matrix():
    """mfccs_from_log_mel_spectrograms: TensorFlow's DCT-II scaled by 1/sqrt(2N), [mels, coeffs]."""
    n = np.arange(N_MEL)[:, None]
    k = np.arange(N_COEFFS)[None, :]
    return 2.0 * np.cos(np.pi * k * (2 * n + 1) / (2 * N_MEL)) / np.sqrt(2.0 * N_MEL)


MEL = mel_matrix()
DCT = dct_matrix()
HANN = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(WINDOW) / WINDOW)


def features(x):
    """The [49, 10] MFCCs of one clip (the first 16000 samples, zero-padded)."""
    x = np.asarray(x[:CLIP], dtype=np.float64)
    peak = np.max(x)
    x = x / abs(peak) if peak != 0 else x  # tf.reduce_max; 0 (digital silence): left as is
    x = np.pad(x, (0, CLIP - len(x)))
    idx = np.arange(N_FRAMES)[:, None] * STRIDE + np.arange(WINDOW)[None, :]
    frames = x[idx] * HANN[None, :]
    spec = np.abs(np.fft.rfft(frames, n=FFT, axis=1))
    logmel = np.log(spec @ MEL + LOG_OFFSET)
    return logmel @ DCT


def quantize(f):
    """TFLite's rule: round(float32(v) / scale) + zp, ties away from zero, clamped."""
    v = (f.astype(np.float32) / INPUT_SCALE).astype(np.float64)
    r = np.sign(v) * np.floor(np.abs(v) + 0.5)
    return np.clip(r + INPUT_ZERO_POINT, -128, 127).astype(np.int8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("wavs", nargs="+")
    ap.add_argument("--windows", type=int, default=0, metavar="HOP_SAMPLES",
                    help="every 1 s window at this hop, stacked")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for path in a.wavs:
        x = read_wav(path)
        if a.windows:
            starts = range(0, max(len(x) - CLIP, 0) + 1, a.windows)
            f = np.stack([features(x[s:s + CLIP]) for s in starts])
        else:
            f = features(x)
        name = os.path.splitext(os.path.basename(path))[0]
        np.save(os.path.join(a.out_dir, name + ".mfcc.npy"), f)
        np.save(os.path.join(a.out_dir, name + ".int8.npy"), quantize(f))
        print(f"{path}: {f.shape} features, range {f.min():.3f} .. {f.max():.3f}")


if __name__ == "__main__":
    main()
