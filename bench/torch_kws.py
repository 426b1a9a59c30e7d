#!/usr/bin/python3
"""PyTorch on the default model, single thread: the yardstick of bench_golden.

    torch_kws.py MODEL.onnx CALIB_DIR SAMPLE.npy ROUND_SECONDS

Builds the network of scripts/make_kws_model.py, loads the weights of
MODEL.onnx into it (by initializer name), and prepares float32 and int8
versions: post-training static quantization in FX graph mode (Conv+BatchNorm
fused, per-engine default qconfig, calibrated on CALIB_DIR), one for every
quantized engine this torch has.  It then prints "ready" and, for every line
"round" it reads on stdin, times one round of ROUND_SECONDS of back-to-back
inferences on SAMPLE for each version and prints the mean time per
inference, then "end":

    fp32 MS
    int8 ENGINE MS
    end

so that bench_golden interleaves these rounds with its own (the machine's
other work then weighs on every variant alike).  "skip: WHY" when torch or
onnx is missing.
"""
import copy
import glob
import os
import sys
import time


def main():
    try:
        import numpy as np
        import onnx
        import torch
        from onnx import numpy_helper
        from torch.ao.quantization import get_default_qconfig_mapping
        from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    except ImportError as e:
        print(f"skip: {e}")
        return 0
    import warnings
    warnings.filterwarnings("ignore")
    model_path, calib_dir, sample = sys.argv[1:4]
    round_s = float(sys.argv[4]) if len(sys.argv) > 4 else 0.15
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    import make_kws_model as mk

    torch.set_num_threads(1)
    net = mk.KwsCnn()
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(model_path).graph.initializer}
    state = net.state_dict()
    for k in state:
        if k in inits:
            state[k] = torch.from_numpy(inits[k].copy())
        elif not k.endswith("num_batches_tracked"):
            print(f"skip: {model_path} has no initializer {k}")
            return 0
    net.load_state_dict(state)
    net.eval()
    x = torch.from_numpy(np.load(sample))
    calib = [torch.from_numpy(np.load(f)) for f in sorted(glob.glob(os.path.join(calib_dir, "*.npy")))]

    versions = [("fp32", None, net)]
    for engine in torch.backends.quantized.supported_engines:
        if engine == "none":
            continue
        try:
            torch.backends.quantized.engine = engine
            q = prepare_fx(copy.deepcopy(net), get_default_qconfig_mapping(engine), (x,))
            with torch.no_grad():
                for c in calib:
                    q(c)
                q = convert_fx(q)
                for _ in range(20):
                    q(x)
            versions.append((f"int8 {engine}", engine, q))
        except Exception as e:  # an engine this CPU or build cannot run
            print(f"skip: engine {engine}: {e}".splitlines()[0])
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        with torch.no_grad():
            for label, engine, f in versions:
                if engine:
                    torch.backends.quantized.engine = engine
                n, t0 = 0, time.perf_counter()
                while True:
                    f(x)
                    n += 1
                    t = time.perf_counter() - t0
                    if t >= round_s:
                        break
                print(f"{label} {t / n * 1e3:.6f}")
        print("end", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
