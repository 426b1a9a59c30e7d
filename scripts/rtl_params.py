#!/usr/bin/env python3
"""Writes the RTL parameters of an architecture (docs/rtl.md).

    rtl_params.py ARCH.json OUTDIR            the arch as `easynpu arch NAME --json` prints it
    rtl_params.py --random SEED BASE.json OUTDIR
                                              a random arch of BASE's engine (systolic,
                                              easynpu or rowstat) drawn from SEED around BASE

OUTDIR gets arch.json (the description the testbench compiles for),
vflags (Verilator -G parameters of the engine's top), chparam.ys (the same
for Yosys) and params.h (the same as C macros for the testbench).  Every
width is derived here, once, from the description: the tools and the
testbench see the same numbers."""
import json
import os
import random
import sys


def clog2(n):
    return max(1, (int(n) - 1).bit_length())


def random_arch(seed, base):
    # the structural fields the RTL is built for; the rest (scheme, handshake
    # and controller cycles) the testbench varies per case
    r = random.Random(seed)
    a = dict(base)
    a["name"] = "sya-rand-%d" % seed
    a["sya_rows"], a["sya_cols"] = r.randint(1, 6), r.randint(1, 6)
    a["sya_banks"] = r.choice([1, 2, 4, 6])
    a["sya_bank_rows"] = r.choice([d for d in range(1, a["sya_banks"] + 1) if a["sya_banks"] % d == 0])
    a["sya_acc_bits"] = r.choice([22, 26, 32])
    a["dtcm_read_latency"], a["weight_mem_latency"] = r.randint(1, 3), r.randint(1, 3)
    a["requant_latency"] = r.randint(0, 3)
    a["bus_bits"] = 8 * r.choice([4, 8, 12, 16, 32])
    a["pes"] = a["ifmap_pads"] = a["weight_pad_groups"] = a["bus_bits"] // 8
    # every memory a whole number of words
    for k in ("main_dtcm_bytes", "skip_dtcm_bytes", "weight_mem_bytes"):
        a[k] -= a[k] % a["pes"]
    return a


def random_enpu_arch(seed, base):
    # the PE array's structure; the top controller's timing the testbench
    # varies per case
    r = random.Random(seed)
    a = dict(base)
    a["name"] = "enpu-rand-%d" % seed
    p = r.choice([4, 8, 12, 16, 32])
    a["bus_bits"] = 8 * p
    a["pes"] = a["ifmap_pads"] = a["weight_pad_groups"] = p
    a["pe_rows"] = r.randint(1, 3)
    a["lane_groups_max"] = r.choice([g for g in (1, 2, 4) if p % g == 0])
    a["psum_depth"] = r.choice([32, 64, 128])
    a["ifmap_pad_depth"] = r.choice([32, 64, 128])
    a["weight_pad_depth"] = r.choice([2, 5, 16])
    # the weight pad must hide the weight memory's latency (the compiler's rule)
    a["weight_mem_latency"] = r.randint(1, min(3, a["weight_pad_depth"] - 1))
    a["pe_pipeline_depth"] = r.randint(1, 3)
    a["requant_latency"] = r.randint(0, 3)
    for k in ("main_dtcm_bytes", "skip_dtcm_bytes", "weight_mem_bytes"):
        a[k] -= a[k] % p
    return a


def random_rs_arch(seed, base):
    # the array's structure; the controller's timing the testbench varies
    # per case
    r = random.Random(seed)
    a = dict(base)
    a["name"] = "rs-rand-%d" % seed
    a["rs_rows"], a["rs_cols"] = r.randint(2, 6), r.randint(3, 10)
    a["rs_ifmap_lb_depth"] = r.choice([12, 32, 64])
    a["rs_filter_lb_depth"] = r.choice([224, 512])
    a["rs_fifo_depth"] = r.choice([64, 256])
    a["rs_psum_depth"] = r.choice([16, 24, 64])
    a["rs_ifmap_net_values"], a["rs_filter_net_values"] = r.randint(1, 4), r.randint(1, 4)
    a["rs_psum_net_values"] = r.randint(1, 4)
    a["rs_pe_pipeline"] = r.randint(1, 3)
    return a


def rs_params(a):
    deepest = max(a["rs_fifo_depth"], a["rs_ifmap_lb_depth"], a["rs_filter_lb_depth"], a["rs_psum_depth"])
    return {
        "ROWS": a["rs_rows"], "COLS": a["rs_cols"],
        "NVI": a["rs_ifmap_net_values"], "NVF": a["rs_filter_net_values"],
        "DW": 16, "PSW": a["rs_psum_bits"],
        "FD": a["rs_fifo_depth"], "LBD": a["rs_ifmap_lb_depth"],
        "FLD": a["rs_filter_lb_depth"], "PD": a["rs_psum_depth"],
        "CW": clog2(deepest + 1), "UW": 24, "TW": 16,
        "DPW": clog2(a["rs_pe_pipeline"] + 1),
    }


def enpu_params(a):
    p, lg = a["pes"], a["lane_groups_max"]
    nlg = lg.bit_length()  # lg = 1, 2, 4, ...: log2(lg) + 1 choices
    return {
        "P": p, "ROWS": a["pe_rows"], "LGMAX": lg, "NLG": nlg, "LGSW": clog2(nlg),
        "ACC_W": a["acc_bits"],
        "DEPTH": a["psum_depth"], "EW": clog2(a["psum_depth"]),
        "DIF": a["ifmap_pad_depth"], "AW": clog2(a["ifmap_pad_depth"]),
        "DW": a["weight_pad_depth"], "SW": clog2(a["weight_pad_depth"]),
        "LW": a["weight_mem_latency"], "MB": a["mult_bits"], "LBW": clog2(p),
        "VW": (a["pe_rows"] * lg).bit_length(),
        "LAT": a["pe_pipeline_depth"] + a["requant_latency"],
        # the PE controller's loop counters, the main DTCM's word addresses,
        # unit indices (a bank holds the PE controller's unit, the next one or
        # one at most two before it: a few bits tell them apart), the write
        # queue's word count (psum_depth words and one cycle's pushes, two per
        # row)
        "CW": 16, "MAW": clog2(a["main_dtcm_bytes"] // p), "UW": 4,
        "QW": clog2(a["psum_depth"] + 2 * a["pe_rows"] * lg + 1),
        "WAW": clog2(a["weight_mem_bytes"] // p),
    }


def sya_params(a):
    nr, nc = a["sya_rows"], a["sya_cols"]
    br = a["sya_bank_rows"]
    bc = a["sya_banks"] // br
    R, C = nr * br, nc * bc
    wb = a["bus_bits"] // 8
    la, lw, rq = a["dtcm_read_latency"], a["weight_mem_latency"], a["requant_latency"]
    njobs = max(la, lw) + R + C + rq + 8  # the C model's units in flight at most
    return {
        "NR": nr, "NC": nc, "BR": br, "BC": bc,
        "ACC_W": a["sya_acc_bits"],
        "TW": clog2(njobs),
        "AW": clog2(a["main_dtcm_bytes"] // wb),
        "WAW": clog2(a["weight_mem_bytes"] // wb),
        "WB": wb, "LBW": clog2(wb),
        "LA": la, "LW": lw, "MB": a["mult_bits"],
        "IW": 16, "OW": 16, "RQ": rq, "KW": 32,
        "CW": clog2(nc), "CGW": C.bit_length(),
    }


def main(argv):
    if len(argv) == 4 and argv[0] == "--random":
        with open(argv[2]) as f:
            b = json.load(f)
        gen = {"easynpu": random_enpu_arch, "rowstat": random_rs_arch}.get(b.get("engine"), random_arch)
        a = gen(int(argv[1]), b)
        out = argv[3]
    elif len(argv) == 2:
        with open(argv[0]) as f:
            a = json.load(f)
        out = argv[1]
    else:
        sys.exit(__doc__)
    eng = a.get("engine")
    if eng not in ("systolic", "easynpu", "rowstat"):
        sys.exit("rtl_params: %s: no RTL of the %s engine is parameterised here" % (a.get("name"), eng))
    p = {"systolic": sya_params, "easynpu": enpu_params, "rowstat": rs_params}[eng](a)
    top, pre = {"systolic": ("sya_top", "SYA_"), "easynpu": ("enpu_top", "ENPU_"), "rowstat": ("rs_top", "RS_")}[eng]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "arch.json"), "w") as f:
        json.dump(a, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "vflags"), "w") as f:
        f.write(" ".join("-G%s=%d" % kv for kv in p.items()) + "\n")
    with open(os.path.join(out, "chparam.ys"), "w") as f:
        f.write("chparam %s %s\n" % (" ".join("-set %s %d" % kv for kv in p.items()), top))
    with open(os.path.join(out, "params.h"), "w") as f:
        f.write("/* generated by scripts/rtl_params.py for arch '%s' */\n" % a["name"])
        for k, v in p.items():
            f.write("#define %s%s %d\n" % (pre, k, v))
    print(a["name"], " ".join("%s=%d" % kv for kv in p.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
