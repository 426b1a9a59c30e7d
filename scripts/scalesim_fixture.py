#!/usr/bin/python3
"""Regenerates tests/data/scalesim/scalesim_os.csv: SCALE-Sim v2's own
figures for the layers tests/models/test_scalesim.c compares the systolic
engine with (docs/systolic.md "Against SCALE-Sim").

SCALE-Sim is run as its README says (`python3 -m scalesim.scale -c CFG -t
TOPOLOGY -p LOGDIR [-i gemm]`), once per array configuration and topology
file of tests/data/scalesim/ (our inputs: output stationary, one memory
bank, SRAMs of 64 MiB and 1000 words a cycle of DRAM bandwidth, so that its
memory never stalls), and its per-layer COMPUTE_REPORT.csv and
DETAILED_ACCESS_REPORT.csv figures are copied, as SCALE-Sim printed them,
into the fixture beside the layer's topology row.

Usage: /usr/bin/python3 scripts/scalesim_fixture.py SCALESIM [OUT [WORK]]
  SCALESIM  a SCALE-Sim v2 checkout, or a git directory of its repository
            (e.g. a mirror without a work tree: HEAD is extracted)
  OUT       default tests/data/scalesim/scalesim_os.csv
  WORK      a folder for SCALE-Sim's logs, kept; a run whose reports are
            already there is not run again (AlexNet on 16x16 takes about
            an hour: an interrupted regeneration resumes)
SCALE-Sim needs numpy, pandas, absl-py and tqdm (Debian: python3-numpy
python3-pandas python3-absl python3-tqdm).  The tests never run this.
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "tests", "data", "scalesim")

# (configuration, topology, SCALE-Sim input type): AlexNet on the two square
# arrays, the other shapes and GEMMs on all four.
RUNS = [(cfg, topo, kind)
        for cfg in ("os_16x16.cfg", "os_32x32.cfg", "os_8x24.cfg", "os_13x6.cfg")
        for topo, kind in (("alexnet.csv", "conv"), ("shapes.csv", "conv"), ("gemm.csv", "gemm"))
        if topo != "alexnet.csv" or cfg in ("os_16x16.cfg", "os_32x32.cfg")]


def checkout(src, work):
    """A directory holding SCALE-Sim's sources, and the commit (or '')."""
    if os.path.isdir(os.path.join(src, "scalesim")):
        try:
            c = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
            return src, c.stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return src, ""
    commit = subprocess.run(["git", "--git-dir", src, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    dst = os.path.join(work, "scale-sim-v2")
    if os.path.isdir(os.path.join(dst, "scalesim")):  # extracted by an earlier, interrupted run
        return dst, commit
    tar = os.path.join(work, "scalesim.tar")
    with open(tar, "wb") as f:
        subprocess.run(["git", "--git-dir", src, "archive", "HEAD", "scalesim", "LICENSE"], stdout=f, check=True)
    os.makedirs(dst, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", dst, "-f", tar], check=True)
    return dst, commit


def rows(path, skip_header=True):
    with open(path) as f:
        r = [[x.strip() for x in line if x.strip() != ""] for line in csv.reader(f)]
    return [x for x in r[1 if skip_header else 0:] if x]


def cfg_dims(path):
    d = {}
    for line in open(path):
        if ":" in line:
            k, v = line.split(":", 1)
            d[k.strip()] = v.strip()
    return int(d["ArrayHeight"]), int(d["ArrayWidth"])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(DATA, "scalesim_os.csv")
    if len(sys.argv) > 3:
        work = os.path.abspath(sys.argv[3])
        os.makedirs(work, exist_ok=True)
    else:
        work = tempfile.mkdtemp(prefix="scalesim_fixture_")
    src, commit = checkout(os.path.abspath(sys.argv[1]), work)
    env = dict(os.environ, PYTHONPATH=src)
    lines = []
    for cfg, topo, kind in RUNS:
        logdir = os.path.join(work, "%s_%s" % (cfg[:-4], topo[:-4]))
        cmd = [sys.executable, "-m", "scalesim.scale", "-c", os.path.join(DATA, cfg), "-t",
               os.path.join(DATA, topo), "-p", logdir, "-i", kind]
        done = os.path.isdir(logdir) and os.listdir(logdir) and os.path.exists(
            os.path.join(logdir, os.listdir(logdir)[0], "DETAILED_ACCESS_REPORT.csv"))
        if not done:
            t0 = time.time()
            if os.path.isdir(logdir):
                shutil.rmtree(logdir)  # an interrupted run's partial reports
            with open(logdir + ".log", "w") as log:  # its progress bars
                if subprocess.run(cmd, cwd=src, env=env, stdout=log, stderr=subprocess.STDOUT).returncode:
                    sys.exit("%s failed: see %s.log" % (" ".join(cmd), logdir))
            print("%s %s: %.0f s" % (cfg, topo, time.time() - t0), file=sys.stderr)
        R, C = cfg_dims(os.path.join(DATA, cfg))
        run = os.path.join(logdir, os.listdir(logdir)[0])
        comp = rows(os.path.join(run, "COMPUTE_REPORT.csv"))
        det = rows(os.path.join(run, "DETAILED_ACCESS_REPORT.csv"))
        layers = rows(os.path.join(DATA, topo))
        assert len(comp) == len(det) == len(layers), (cfg, topo)
        for layer, c, d in zip(layers, comp, det):
            if kind == "gemm":  # SCALE-Sim's own mapping of M, N, K (topology_utils.load_arrays_gemm)
                name, m, n, k = layer[:4]
                geom = [m, k, "1", k, "1", n, "1"]
            else:
                name, geom = layer[0], layer[1:8]
            # COMPUTE_REPORT: cycles, stalls, overall util %, mapping efficiency %, compute util %;
            # DETAILED_ACCESS_REPORT: SRAM IFMAP reads, Filter reads, OFMAP writes
            lines.append(["%dx%d" % (R, C), topo[:-4], kind, name] + geom + c[1:6] + [d[3], d[6], d[9]])
    with open(out + ".tmp", "w") as f:
        f.write("# SCALE-Sim v2 (github.com/scalesim-project/scale-sim-v2, MIT licence), commit %s,\n" %
                (commit or "unknown"))
        f.write("# output stationary; regenerate: /usr/bin/python3 scripts/scalesim_fixture.py SCALESIM\n")
        f.write("# (each run: python3 -m scalesim.scale -c tests/data/scalesim/<array cfg> "
                "-t tests/data/scalesim/<topology> -p LOGDIR -i <kind>; see tests/data/scalesim/README.md)\n")
        f.write("# geometry as SCALE-Sim takes it (a gemm M,N,K as ifmap M x K, filter 1 x K, 1 channel, N filters);\n")
        f.write("# figures copied from COMPUTE_REPORT.csv and DETAILED_ACCESS_REPORT.csv as SCALE-Sim printed them\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["array", "topology", "kind", "layer", "ifmap_h", "ifmap_w", "filter_h", "filter_w", "channels",
                    "filters", "stride", "total_cycles", "stall_cycles", "overall_util_pct", "mapping_eff_pct",
                    "compute_util_pct", "sram_ifmap_reads", "sram_filter_reads", "sram_ofmap_writes"])
        w.writerows(lines)
    os.replace(out + ".tmp", out)
    print("%s: %d layers" % (out, len(lines)), file=sys.stderr)


if __name__ == "__main__":
    main()
