#!/usr/bin/python3
"""Checks the output-stationary cycle formula docs/systolic.md uses against
SCALE-Sim v2 itself: runs SCALE-Sim (a checkout of its source, given as the
first argument; it needs numpy, tqdm and pandas: Debian's python3-numpy,
python3-tqdm, python3-pandas) on seeded random layers with SRAMs too large to
stall, and compares its reported total cycles with

    ceil(Sr / R) * ceil(Sc / C) * (T + R + C - 2)

(Sr output pixels as SCALE-Sim counts them, ceil((H - k + s) / s) per axis;
Sc filters; T = k * k * channels).  SCALE-Sim prints the index of the last
cycle, so its total is the formula minus one.  The engine's scheme 0 equals
the formula (tests/unit/test_systolic.c).

Usage: /usr/bin/python3 scripts/scalesim_check.py SCALESIM_DIR [ROWS COLS ...]
       (default arrays 8x6 16x16 3x11)
Exit status 0 when every layer agrees.
"""
import csv
import math
import os
import random
import sys
import tempfile


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.path.insert(0, sys.argv[1])
    from scalesim.scale_sim import scalesim  # noqa: E402 (the checkout given)
    dims = [int(x) for x in sys.argv[2:]] or [8, 6, 16, 16, 3, 11]
    bad = total = 0
    work = tempfile.mkdtemp(prefix="scalesim_check_")
    for R, C in zip(dims[0::2], dims[1::2]):
        rng = random.Random(2024)
        layers = []
        for i in range(12):
            k, s = rng.randint(1, 3), rng.randint(1, 2)
            layers.append(("L%d" % i, rng.randint(k, 12), rng.randint(k, 12), k, k, rng.randint(1, 16),
                           rng.randint(1, 40), s))
        cfg = os.path.join(work, "c.cfg")
        with open(cfg, "w") as f:
            f.write("[general]\nrun_name = chk\n\n[architecture_presets]\nArrayHeight: %d\nArrayWidth: %d\n"
                    "IfmapSramSzkB: 65536\nFilterSramSzkB: 65536\nOfmapSramSzkB: 65536\nIfmapOffset: 0\n"
                    "FilterOffset: 10000000\nOfmapOffset: 20000000\nBandwidth : 1000\nDataflow : os\n"
                    "MemoryBanks: 1\n\n[run_presets]\nInterfaceBandwidth: USER\n" % (R, C))
        topo = os.path.join(work, "t.csv")
        with open(topo, "w") as f:
            f.write("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                    "Strides,\n")
            for l in layers:
                f.write(", ".join(str(x) for x in l) + ",\n")
        s = scalesim(save_disk_space=True, verbose=False, config=cfg, topology=topo)
        s.run_scale(top_path=os.path.join(work, "out"))
        rows = list(csv.reader(open(os.path.join(work, "out", "chk", "COMPUTE_REPORT.csv"))))[1:]
        for (name, H, W, kh, kw, ch, F, st), row in zip(layers, rows):
            oh, ow = -((kh - H - st) // st), -((kw - W - st) // st)
            formula = math.ceil(oh * ow / R) * math.ceil(F / C) * (kh * kw * ch + R + C - 2)
            got = int(row[1].strip())
            ok = got == formula - 1
            bad += not ok
            total += 1
            print("%dx%d %s Sr=%d Sc=%d T=%d: SCALE-Sim %d, formula %d %s" %
                  (R, C, name, oh * ow, F, kh * kw * ch, got, formula, "" if ok else "DIFFERS"))
    print("%d layers, %d differ" % (total, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
