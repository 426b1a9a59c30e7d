#!/usr/bin/env python3
"""Turns Yosys's cell counts into an area estimate beside the area model's
figure (docs/rtl.md "Synthesis").

    rtl_area.py STAT.txt ARCH.txt ARCH.json
    rtl_area.py --rowstat PE.stat NOC_IFMAP.stat NOC_FILTER.stat ARCH.txt ARCH.json

STAT.txt is `stat` of a hierarchical `synth` (generic cells, no liberty);
with --rowstat, the stats of the row-stationary PE and of its two networks,
each synthesized as its own top, counted rs_rows x rs_cols and once each;
ARCH.txt what `easynpu arch NAME` prints (its area lines, from
src/energy/energy.c enpu_area_of); ARCH.json the description.  Each generic
cell is given the area of the Nangate 45 nm Open Cell Library's X1 cell
that implements it (the library the area model's flip-flop figure, ff_um2
= 4.522 um2 for DFF_X1, comes from); a flip-flop with an enable or a
synchronous reset counts as DFF_X1 plus the gate in front of it.  The
estimate is scaled to the arch's technology node as the area model scales
its own (tech_nm)."""
import json
import re
import sys

# Nangate 45 nm Open Cell Library, X1 drive (um2)
INV, NAND2, NOR2, AND2, OR2, XOR2, MUX2, AOI21, AOI22, DFF = 0.532, 0.798, 0.798, 1.064, 1.064, 1.596, 1.862, 1.064, 1.330, 4.522
CELL_UM2 = {
    "$_NOT_": INV, "$_BUF_": INV, "$_AND_": AND2, "$_NAND_": NAND2, "$_OR_": OR2, "$_NOR_": NOR2,
    "$_XOR_": XOR2, "$_XNOR_": XOR2, "$_ANDNOT_": AND2, "$_ORNOT_": OR2, "$_MUX_": MUX2,
    "$_AOI3_": AOI21, "$_OAI3_": AOI21, "$_AOI4_": AOI22, "$_OAI4_": AOI22,
}


def cell_um2(t):
    if t in CELL_UM2:
        return CELL_UM2[t]
    # flip-flops: $_DFF_P_, $_DFFE_PP_ (enable), $_SDFF_PP0_ (synchronous
    # reset), $_SDFFE_PP0P_, $_SDFFCE_... (both)
    m = re.match(r"\$_(S?)DFF(C?)(E?)_", t)
    if not m:
        raise SystemExit("rtl_area: no area for cell type %s" % t)
    a = DFF
    if m.group(1):
        a += AND2  # synchronous reset: a gate on D
    if m.group(3):
        a += MUX2  # enable: a MUX on D
    return a


def parse_stat(path):
    """module -> {cell type or submodule: count}"""
    mods, cur = {}, None
    for line in open(path):
        m = re.match(r"=== (.*) ===", line.strip())
        if m:
            cur = m.group(1)
            if cur == "design hierarchy":
                cur = None
            else:
                mods[cur] = {}
            continue
        if cur is None:
            continue
        m = re.match(r"\s+(\S+)\s+(\d+)$", line)
        if m and not line.strip().startswith("Number"):
            mods[cur][m.group(1)] = int(m.group(2))
    return mods


def unit_of(mod):
    # $paramod$<hash>\pe_row or $paramod\pe\ACC_W=26... or \sya_top
    m = re.search(r"\\([a-z_]+)", mod)
    return m.group(1) if m else mod.strip("\\")


def main(stat, arch_txt, arch_json):
    mods = parse_stat(stat)
    a = json.load(open(arch_json))
    names = {m: unit_of(m) for m in mods}
    by_unit = {names[m]: m for m in mods}

    def own(m):
        cells = sum(n for t, n in mods[m].items() if t.startswith("$_"))
        um2 = sum(n * cell_um2(t) for t, n in mods[m].items() if t.startswith("$_"))
        ffs = sum(n for t, n in mods[m].items() if "DFF" in t)
        return cells, um2, ffs

    def instances(top):
        count = {top: 1}
        order = [top]
        while order:
            m = order.pop()
            for t, n in mods[m].items():
                key = None
                for mm in mods:
                    if t == mm or t == "\\" + names[mm] or t == mm.lstrip("\\"):
                        key = mm
                if key:
                    count[key] = count.get(key, 0) + count[m] * n
                    order.append(key)
        return count

    enpu = "enpu_top" in by_unit
    top = by_unit["enpu_top" if enpu else "sya_top"]
    inst = instances(top)
    scale = (45.0 / a.get("tech_nm", 45)) ** 2
    model = area_model(arch_txt)
    sfx = "" if scale == 1 else " scaled to %d nm" % a["tech_nm"]
    if enpu:
        print("synthesis of enpu_top for arch '%s' (%d PE row(s) x %d PEs, psum depth %d, pads %d / %d): "
              "Yosys generic cells, area with Nangate 45 nm X1 cells%s" % (
                  a["name"], a["pe_rows"], a["pes"], a["psum_depth"], a["ifmap_pad_depth"],
                  a["weight_pad_depth"], sfx))
        order = ["pe", "requant", "pe_array", "ifmap_pad", "weight_pad", "pe_ctrl", "writer", "loader", "weight_reader",
                 "enpu_top"]
        model_of = {
            "pe": "mac + psum = %.0f" % (model.get("mac", 0) + model.get("psum", 0)),
            "requant": "requant = %.0f" % model.get("requant", 0),
            "pe_array": "(none: the entries' ready countdowns)",
            "ifmap_pad": "ifmap_pad = %.0f" % model.get("ifmap_pad", 0),
            "weight_pad": "weight_pad = %.0f" % model.get("weight_pad", 0),
            "pe_ctrl": "(none: the model prices no controller)",
            "writer": "(none: the write queue is not priced)",
            "loader": "(none: no address generator is priced)",
            "weight_reader": "(none: no address generator is priced)",
            "enpu_top": "(wiring only)",
        }
        dp_keys = ("mac", "psum", "requant", "ifmap_pad", "weight_pad")
    else:
        R = a["sya_rows"] * a["sya_bank_rows"]
        C = a["sya_cols"] * (a["sya_banks"] // a["sya_bank_rows"])
        print("synthesis of sya_top for arch '%s' (%d x %d PEs, %d banks %dx%d): Yosys generic cells, "
              "area with Nangate 45 nm X1 cells%s" % (a["name"], R, C, a["sya_banks"], a["sya_bank_rows"],
                                                       a["sya_banks"] // a["sya_bank_rows"], sfx))
        order = ["pe", "pe_row", "pe_bank", "pe_array", "glb", "requant", "sync_shape", "sya_top"]
        model_of = {
            "pe": "mac + pe_reg + acc = %.0f" % (model.get("mac", 0) + model.get("pe_reg", 0) + model.get("acc", 0)),
            "pe_row": "(the output MUX is not counted)",
            "requant": "requant = %.0f" % model.get("requant", 0),
            "sync_shape": "shape = %.0f" % model.get("shape", 0),
            "glb": "(none: the skew registers are not counted)",
            "sya_top": "(none)",
        }
        dp_keys = ("mac", "pe_reg", "acc", "requant", "shape")
    hdr = "%-12s %9s %10s %9s %12s %12s  %s" % ("unit", "instances", "cells", "flops", "cells total", "um2 total", "area model (um2)")
    print(hdr)
    print("-" * len(hdr))
    tot_cells = tot_um2 = 0
    rows = {}
    for u in order:
        if u not in by_unit:
            continue
        m = by_unit[u]
        c, um2, ffs = own(m)
        n = inst.get(m, 0)
        rows[u] = (n, c, ffs, c * n, um2 * n * scale)
        tot_cells += c * n
        tot_um2 += um2 * n * scale
        print("%-12s %9d %10d %9d %12d %12.0f  %s" % (u, n, c, ffs, c * n, um2 * n * scale, model_of.get(u, "")))
    print("-" * len(hdr))
    dp_model = sum(model.get(k, 0) for k in dp_keys)
    print("%-12s %9s %10s %9s %12d %12.0f  datapath (%s) = %.0f" %
          ("engine", "", "", "", tot_cells, tot_um2, "+".join(dp_keys), dp_model))
    sram = sum(model.get(k, 0) for k in ("main_dtcm", "weight_mem", "itcm") + (("skip_dtcm",) if enpu else ()))
    print("%-12s %9s %10s %9s %12s %12s  SRAMs (DTCMs, weight memory, ITCM: not in the RTL) = %.0f" %
          ("", "", "", "", "", "", sram))
    print("NAND2 equivalents: %.0f (engine area / %.3f um2)" % (tot_um2 / scale / NAND2, NAND2))

    def ratio(what, rtl, mdl):
        if mdl:
            print("%s: %.2fx" % (what, rtl / mdl))
    if enpu:
        ratio("pe (MAC and psum file) against mac + psum", rows["pe"][4], model.get("mac", 0) + model.get("psum", 0))
        ratio("requant against the model's requant", rows["requant"][4], model.get("requant", 0))
        ratio("ifmap_pad against the model's", rows["ifmap_pad"][4], model.get("ifmap_pad", 0))
        ratio("weight_pad against the model's", rows["weight_pad"][4], model.get("weight_pad", 0))
        return
    pe_rtl = rows["pe"][4] + rows.get("pe_row", (0, 0, 0, 0, 0))[4]
    ratio("PE array (pe + pe_row) against mac + pe_reg + acc", pe_rtl,
          model.get("mac", 0) + model.get("pe_reg", 0) + model.get("acc", 0))
    ratio("requant against the model's requant", rows["requant"][4], model.get("requant", 0))
    ratio("sync_shape against the model's shape", rows["sync_shape"][4], model.get("shape", 0))

def area_model(arch_txt):
    """the area model's um2 per unit, from `easynpu arch`'s area lines"""
    model, in_area = {}, False
    for line in open(arch_txt):
        if line.startswith("area at"):
            in_area = True
            continue
        m = re.match(r"\s+(\w+)\s+(\d+)\s+um2", line)
        if in_area and m:
            model[m.group(1)] = float(m.group(2))
    return model


def rowstat(pe_stat, noci_stat, nocf_stat, arch_txt, arch_json):
    a = json.load(open(arch_json))
    scale = (45.0 / a.get("tech_nm", 45)) ** 2
    model = area_model(arch_txt)
    sfx = "" if scale == 1 else " scaled to %d nm" % a["tech_nm"]
    n = a["rs_rows"] * a["rs_cols"]
    print("synthesis of the row-stationary array's units for arch '%s' (%d x %d PEs; FIFO %d, ifmap LB %d, "
          "filter LB %d, psum %d entries; %d / %d network values a cycle): Yosys generic cells, area with "
          "Nangate 45 nm X1 cells%s" % (a["name"], a["rs_rows"], a["rs_cols"], a["rs_fifo_depth"],
                                         a["rs_ifmap_lb_depth"], a["rs_filter_lb_depth"], a["rs_psum_depth"],
                                         a["rs_ifmap_net_values"], a["rs_filter_net_values"], sfx))
    pe_keys = ("mac", "psum", "pe_fifo", "ifmap_lb", "filter_lb")
    units = [("pe", pe_stat, n, " + ".join(pe_keys) + " = %.0f" % sum(model.get(k, 0) for k in pe_keys)),
             ("noc (ifmap)", noci_stat, 1, "(none)"), ("noc (filter)", nocf_stat, 1, "(none)")]
    hdr = "%-12s %9s %10s %9s %12s %12s  %s" % ("unit", "instances", "cells", "flops", "cells total", "um2 total",
                                               "area model (um2)")
    print(hdr)
    print("-" * len(hdr))
    tot_cells = tot_um2 = 0
    pe_um2 = 0
    for name, path, k, mdl in units:
        mods = parse_stat(path)
        cells = um2 = ffs = 0
        for m in mods.values():
            cells += sum(c for t, c in m.items() if t.startswith("$_"))
            um2 += sum(c * cell_um2(t) for t, c in m.items() if t.startswith("$_"))
            ffs += sum(c for t, c in m.items() if "DFF" in t)
        tot_cells += cells * k
        tot_um2 += um2 * k * scale
        if name == "pe":
            pe_um2 = um2 * k * scale
        print("%-12s %9d %10d %9d %12d %12.0f  %s" % (name, k, cells, ffs, cells * k, um2 * k * scale, mdl))
    print("-" * len(hdr))
    print("%-12s %9s %10s %9s %12d %12.0f  PE array (%s) = %.0f" % (
        "array", "", "", "", tot_cells, tot_um2, "+".join(pe_keys), sum(model.get(k, 0) for k in pe_keys)))
    print("NAND2 equivalents: %.0f (array area / %.3f um2)" % (tot_um2 / scale / NAND2, NAND2))
    pm = sum(model.get(k, 0) for k in pe_keys)
    if pm:
        print("pe against the model's PE (%s): %.2fx" % (" + ".join(pe_keys), pe_um2 / pm))


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--rowstat":
        rowstat(*sys.argv[2:])
    elif len(sys.argv) == 4:
        main(*sys.argv[1:])
    else:
        sys.exit(__doc__)
