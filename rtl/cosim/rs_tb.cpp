// Co-simulation of the row-stationary array's RTL (rtl/rowstat/rs_top.v:
// the PEs and the two multicast networks) against the C simulator's
// row-stationary engine (src/sim/rowstat/), cycle by cycle (docs/rtl.md).
//
// The C simulator runs a compiled program in cycle mode with its own
// functional replay check; after every cycle of a pass its hook
// (include/easynpu/cosim.h) hands this testbench the engine.  The
// testbench plays what is outside the RTL: the controller's configuration
// of a pass (the PE registers and node IDs, loaded by one cfg edge before
// the pass's first cycle), the global buffer's reads onto the networks in
// cycle t (the networks' first stage after t), the filters-in signal `go`,
// and the output network's takes (a bottom PE's link that held a psum after
// t - 1 and no longer holds it, or holds the next unit).  It clocks the RTL
// once a cycle and compares, before the edge, every value a network
// delivers (with the C PE's FIFO or filter buffer entry it filled), every
// MAC, every loop-buffer and psum-scratchpad write (with the C PE's entry);
// after the edge, every PE's cursors and link and both networks' stages.
// The first difference stops the case with the cycle, the unit, the signal
// and both values; the case is then run again to dump a VCD window.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "Vrs_top.h"
#include "bits.h"
#include "params.h"
#include "verilated.h"
#include "verilated_syms.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

#include "easynpu/arch.h"
#include "easynpu/compiler.h"
#include "easynpu/cosim.h"
#include "easynpu/sim.h"
#include "easynpu/tensor_io.h"

#include "sya_gen.h"
#include "tb_args.h"
#include "tb_common.h"

namespace {

constexpr int ROWS = RS_ROWS, COLS = RS_COLS, NPE = RS_ROWS * RS_COLS, NVI = RS_NVI, NVF = RS_NVF;
constexpr int DW = RS_DW, PSW = RS_PSW, CW = RS_CW, UW = RS_UW, TW = RS_TW;

// A PE register or wire (public_flat_rd in pe.v), read through Verilator's
// scope table: its storage and C type.
struct Sig {
    const void *p = nullptr;
    int type = 0;
    uint64_t get() const {
        switch (type) {
        case VLVT_UINT8: return *(const CData *)p;
        case VLVT_UINT16: return *(const SData *)p;
        case VLVT_UINT32: return *(const IData *)p;
        default: return *(const QData *)p;
        }
    }
};

// What the testbench reads of one PE.
struct PeSigs {
    Sig mac, lb_we, lb_wa, lb_wd, ps_we, ps_wa, ps_wd, if_dlv, fl_dlv, ovf;
    Sig fh, fn, lb_head, lb_n, flb_n, filled, done, u, k, xo, m;
    Sig out_full, out_unit, out_val, out_rdy;
};

// One case's RTL model and what the testbench keeps between cycles.
struct Tb : TbModel<Vrs_top> {
    uint64_t now = 0; // the cycle being clocked
    uint64_t last_t = 0;
    bool in_pass = false;
    int64_t chain = 0;
    std::vector<enpu_cosim_rs_pe> prev; // every PE after the last cycle (or the configuration)
    std::vector<PeSigs> pe;
    uint64_t cycles = 0, passes = 0, macs = 0, values = 0;
};

// The unit name of PE n (row-major) in a difference's report.
std::string pe_name(int n) { return "pe (" + std::to_string(n / COLS) + ", " + std::to_string(n % COLS) + ")"; }
// Every PE's signals, found by name once per model; false (and *missing
// names the first) when the model lacks one.
bool find_sigs(Tb &tb, std::string *missing) {
    tb.pe.assign(NPE, PeSigs{});
    for (int n = 0; n < NPE; n++) {
        std::string sc = std::string(tb.top->name()) + ".rs_top.g_row[" + std::to_string(n / COLS) + "].g_col[" +
                         std::to_string(n % COLS) + "].u_pe";
        const VerilatedScope *scope = tb.ctx->scopeFind(sc.c_str());
        if (!scope) {
            *missing = sc;
            return false;
        }
        PeSigs &g = tb.pe[n];
        const std::pair<Sig *, const char *> want[] = {
            {&g.mac, "mac"}, {&g.lb_we, "lb_we"}, {&g.lb_wa, "lb_wa"}, {&g.lb_wd, "lb_wd"},
            {&g.ps_we, "ps_we"}, {&g.ps_wa, "ps_wa"}, {&g.ps_wd, "ps_wd"}, {&g.if_dlv, "if_dlv"},
            {&g.fl_dlv, "fl_dlv"}, {&g.ovf, "ovf"}, {&g.fh, "fh"}, {&g.fn, "fn"}, {&g.lb_head, "lb_head"},
            {&g.lb_n, "lb_n"}, {&g.flb_n, "flb_n"}, {&g.filled, "filled"}, {&g.done, "done"}, {&g.u, "u"},
            {&g.k, "k"}, {&g.xo, "xo"}, {&g.m, "m"}, {&g.out_full, "out_full"}, {&g.out_unit, "out_unit"},
            {&g.out_val, "out_val"}, {&g.out_rdy, "out_rdy"}};
        for (auto &w : want) {
            const VerilatedVar *v = scope->varFind(w.second);
            if (!v || v->vltype() == VLVT_WDATA) {
                *missing = sc + "." + w.second;
                return false;
            }
            w.first->p = v->datap();
            w.first->type = v->vltype();
        }
    }
    return true;
}

// The unit name of network net (0 ifmap, 1 filter).
const char *net_name(int net) { return net ? "noc (filter)" : "noc (ifmap)"; }

// One clock edge; cfg: the configuration edge before a pass (not a cycle
// of the C model, not dumped).
void clock(Tb &tb, bool cfg) {
    Vrs_top *p = tb.top.get();
    p->cfg = cfg;
    p->clk = 0;
    p->eval();
    if (!cfg) tb.dump(2 * tb.now);
    p->clk = 1;
    p->eval();
    if (!cfg) tb.dump(2 * tb.now + 1);
    p->cfg = 0;
}

// A node ID or a tag as the RTL holds it; false when it does not fit TW.
bool tag_fits(int64_t v) { return v >= -1 && v < (int64_t)1 << TW; }

// The pass's configuration: every PE's registers and both networks' IDs,
// loaded by one cfg edge; the C model's state after it is its empty PEs.
void configure(Tb &tb, uint64_t t, const void *eng, const enpu_cosim_rs_pass &ps) {
    Vrs_top *p = tb.top.get();
    enpu_cosim_rs_dims d;
    enpu_cosim_rs_dims_of(eng, &d);
    tb.prev.assign(NPE, enpu_cosim_rs_pe{});
    for (int n = 0; n < NPE; n++) {
        enpu_cosim_rs_pe pe;
        enpu_cosim_rs_pe_at(eng, n / COLS, n % COLS, &pe);
        bits::put(p->cfg_used, n, 1, pe.used);
        bits::put(p->cfg_L, CW * n, CW, (uint64_t)pe.L);
        bits::put(p->cfg_p, CW * n, CW, (uint64_t)pe.p);
        bits::put(p->cfg_wo, UW * n, UW, (uint64_t)pe.wo);
        bits::put(p->cfg_R, CW * n, CW, (uint64_t)pe.R);
        if (pe.wo * pe.p >= (int64_t)1 << UW) {
            fail(tb, t, "unit pe: %" PRId64 " units in a pass do not fit the RTL's UW = %d bits", pe.wo * pe.p, UW);
            return;
        }
        enpu_cosim_rs_pe &b = tb.prev[n];
        b = pe; // the registers; the cursors and the link as the configuration leaves them
        b.fh = b.fn = b.lb_head = b.lb_n = b.flb_n = 0;
        b.filled = false, b.done = !pe.used;
        b.u = b.k = b.xo = b.m = 0;
        b.out_full = false;
    }
    p->cfg_D = (uint32_t)d.D;
    for (int net = 0; net < 2; net++) {
        auto &rid = net ? p->cfg_fl_row_id : p->cfg_if_row_id;
        auto &cid = net ? p->cfg_fl_col_id : p->cfg_if_col_id;
        for (int r = 0; r < ROWS; r++) {
            int32_t id = enpu_cosim_rs_row_id(eng, net, r);
            if (!tag_fits(id)) return fail(tb, t, "unit %s: row ID %d does not fit TW", net_name(net), id);
            bits::put(rid, (TW + 1) * r, TW + 1, id < 0 ? 0 : (1ull << TW) | (uint64_t)id);
            for (int c = 0; c < COLS; c++) {
                int32_t ci = enpu_cosim_rs_col_id(eng, net, r, c);
                if (!tag_fits(ci)) return fail(tb, t, "unit %s: column ID %d does not fit TW", net_name(net), ci);
                bits::put(cid, (TW + 1) * (r * COLS + c), TW + 1, ci < 0 ? 0 : (1ull << TW) | (uint64_t)ci);
            }
        }
    }
    clock(tb, true);
    tb.passes++;
    tb.in_pass = true;
    tb.chain = ps.chain;
}

// The global buffer's reads of cycle t onto network net: the C network's
// first stage after t.
void drive_net(Tb &tb, uint64_t t, const void *eng, int net) {
    Vrs_top *p = tb.top.get();
    enpu_cosim_rs_pkt pk[64];
    int n = enpu_cosim_rs_stage(eng, net, 0, pk, nullptr);
    const int nv = net ? NVF : NVI;
    if (n > nv) return fail(tb, t, "unit %s: the C model sent %d values in one cycle", net_name(net), n);
    uint32_t vld = 0;
    for (int i = 0; i < nv; i++) {
        const enpu_cosim_rs_pkt q = i < n ? pk[i] : enpu_cosim_rs_pkt{0, 0, 0};
        if (!tag_fits(q.row_tag) || !tag_fits(q.col_tag))
            return fail(tb, t, "unit %s: a tag does not fit TW", net_name(net));
        if (i < n) vld |= 1u << i;
        if (net) {
            bits::put(p->fl_in_val, DW * i, DW, (uint64_t)(uint32_t)q.value);
            bits::put(p->fl_in_rtag, TW * i, TW, (uint64_t)q.row_tag);
            bits::put(p->fl_in_ctag, TW * i, TW, (uint64_t)q.col_tag);
        } else {
            bits::put(p->if_in_val, DW * i, DW, (uint64_t)(uint32_t)q.value);
            bits::put(p->if_in_rtag, TW * i, TW, (uint64_t)q.row_tag);
            bits::put(p->if_in_ctag, TW * i, TW, (uint64_t)q.col_tag);
        }
    }
    if (net) p->fl_in_vld = vld;
    else p->if_in_vld = vld;
}

// An n-bit RTL value as the signed number the C model holds.
int64_t sx(uint64_t v, int n) { return bits::sext(v, n); }

// Before the edge: what each network delivers to each PE (the C PE's FIFO
// or filter buffer entries it appended in cycle t), each PE's MAC and its
// loop-buffer and scratchpad writes.
void check_cycle(Tb &tb, uint64_t t, const std::vector<enpu_cosim_rs_pe> &now) {
    Vrs_top *p = tb.top.get();
    for (int n = 0; n < NPE; n++) {
        const enpu_cosim_rs_pe &b = tb.prev[n], &c = now[n];
        const PeSigs &g = tb.pe[n];
        // the C PE's deliveries: its FIFO grew by them less its pop (at most
        // one a cycle), its filter buffer by them
        int ri = 0, rf = 0;
        for (int i = 0; i < NVI; i++) ri += (int)(g.if_dlv.get() >> i & 1);
        for (int i = 0; i < NVF; i++) rf += (int)(g.fl_dlv.get() >> i & 1);
        const int64_t ci = c.fn - b.fn + (c.fh - b.fh + RS_FD) % RS_FD, cf = c.flb_n - b.flb_n;
        EXPECT(tb, t, ri == ci, "noc (ifmap)", pe_name(n) + " deliveries", ri, ci);
        EXPECT(tb, t, rf == cf, "noc (filter)", pe_name(n) + " deliveries", rf, cf);
        int j = 0;
        for (int i = 0; i < NVI; i++) {
            if (!(g.if_dlv.get() >> i & 1)) continue;
            int64_t r = sx(bits::get(p->if_dlv_val, DW * i, DW), DW);
            int64_t cv = c.fifo[(b.fh + b.fn + j) % (int64_t)RS_FD];
            EXPECT(tb, t, r == cv, "noc (ifmap)", pe_name(n) + " delivery " + std::to_string(j) + " (FIFO entry)", r, cv);
            j++, tb.values++;
        }
        j = 0;
        for (int i = 0; i < NVF; i++) {
            if (!(g.fl_dlv.get() >> i & 1)) continue;
            int64_t r = sx(bits::get(p->fl_dlv_val, DW * i, DW), DW);
            int64_t cv = c.flb[b.flb_n + j];
            EXPECT(tb, t, r == cv, "noc (filter)", pe_name(n) + " delivery " + std::to_string(j) + " (filter buffer entry)", r,
                   cv);
            j++, tb.values++;
        }
        const bool cmac = c.last_mac == (int64_t)t;
        const bool rmac = g.mac.get();
        EXPECT(tb, t, rmac == cmac, pe_name(n), "mac", rmac, cmac);
        tb.macs += cmac;
        // the C PE wrote its loop buffer: a window value (the first window)
        // or a replaced one (the last filter of an output column)
        const bool cpull = cmac && b.m == b.p - 1 && b.xo < b.wo - 1 && b.k < b.R;
        const bool clb = c.lb_n != b.lb_n || cpull;
        const bool rlb = g.lb_we.get();
        EXPECT(tb, t, rlb == clb, pe_name(n), "loop buffer write", rlb, clb);
        if (rlb) {
            int64_t a = (int64_t)g.lb_wa.get();
            int64_t r = sx(g.lb_wd.get(), DW);
            EXPECT(tb, t, a < RS_LBD, pe_name(n), "loop buffer write address", a, RS_LBD - 1);
            EXPECT(tb, t, r == c.lb[a], pe_name(n), "loop buffer entry " + std::to_string(a), r, c.lb[a]);
        }
        const bool cps = cmac && b.k != b.L - 1;
        const bool rps = g.ps_we.get();
        EXPECT(tb, t, rps == cps, pe_name(n), "psum scratchpad write", rps, cps);
        if (rps) {
            int64_t a = (int64_t)g.ps_wa.get();
            EXPECT(tb, t, a == b.m, pe_name(n), "psum scratchpad write address", a, b.m);
            int64_t r = sx(g.ps_wd.get(), PSW), cv = sx((uint64_t)c.psum[a], PSW);
            EXPECT(tb, t, r == cv, pe_name(n), "psum scratchpad entry " + std::to_string(a), r, cv);
        }
    }
}

// After the edge: every PE's cursors and link, both networks' stages.
void check_state(Tb &tb, uint64_t t, const void *eng, const std::vector<enpu_cosim_rs_pe> &now) {
    Vrs_top *p = tb.top.get();
    for (int n = 0; n < NPE; n++) {
        const enpu_cosim_rs_pe &c = now[n];
        const PeSigs &g = tb.pe[n];
        const int64_t cur[][2] = {{(int64_t)g.fh.get(), c.fh},
                                  {(int64_t)g.fn.get(), c.fn},
                                  {(int64_t)g.lb_head.get(), c.lb_head},
                                  {(int64_t)g.lb_n.get(), c.lb_n},
                                  {(int64_t)g.flb_n.get(), c.flb_n},
                                  {(int64_t)g.filled.get(), c.filled},
                                  {(int64_t)g.done.get(), c.done},
                                  {(int64_t)g.u.get(), c.u},
                                  {(int64_t)g.k.get(), c.k},
                                  {(int64_t)g.xo.get(), c.xo},
                                  {(int64_t)g.m.get(), c.m},
                                  {(int64_t)g.out_full.get(), c.out_full},
                                  {(int64_t)g.ovf.get(), 0}};
        static const char *const names[] = {"FIFO head", "FIFO count", "loop buffer head", "loop buffer fill",
                                            "filter buffer count", "filled", "done", "unit", "MAC in unit",
                                            "output column", "filter", "link full", "overflow"};
        for (size_t i = 0; i < sizeof cur / sizeof cur[0]; i++) EXPECT(tb, t, cur[i][0] == cur[i][1], pe_name(n), names[i], cur[i][0], cur[i][1]);
        if (!c.out_full) continue;
        int64_t r = (int64_t)g.out_unit.get();
        EXPECT(tb, t, r == c.out_unit, pe_name(n), "link unit", r, c.out_unit);
        r = sx(g.out_val.get(), PSW);
        int64_t cv = sx((uint64_t)c.out_value, PSW);
        EXPECT(tb, t, r == cv, pe_name(n), "link psum", r, cv);
        bool rr = g.out_rdy.get(), cr = c.out_ready <= (int64_t)t + 1;
        EXPECT(tb, t, rr == cr, pe_name(n), "link ready next cycle", rr, cr);
    }
    for (int net = 0; net < 2; net++) {
        enpu_cosim_rs_pkt pk[64];
        bool pass[64 * 64];
        const char *nn = net_name(net);
        const int nv = net ? NVF : NVI;
        int n0 = enpu_cosim_rs_stage(eng, net, 0, pk, nullptr);
        uint32_t v0 = net ? p->fl_s0_vld : p->if_s0_vld, v1 = net ? p->fl_s1_vld : p->if_s1_vld;
        for (int i = 0; i < nv; i++) {
            EXPECT(tb, t, (v0 >> i & 1) == (i < n0), nn, "stage 0 slot " + std::to_string(i) + " valid", v0 >> i & 1,
                   i < n0);
            if (i >= n0) continue;
            int64_t val = sx(net ? bits::get(p->fl_s0_val, DW * i, DW) : bits::get(p->if_s0_val, DW * i, DW), DW);
            int64_t rt = (int64_t)(net ? bits::get(p->fl_s0_rtag, TW * i, TW) : bits::get(p->if_s0_rtag, TW * i, TW));
            int64_t ct = (int64_t)(net ? bits::get(p->fl_s0_ctag, TW * i, TW) : bits::get(p->if_s0_ctag, TW * i, TW));
            EXPECT(tb, t, val == pk[i].value, nn, "stage 0 slot " + std::to_string(i) + " value", val, pk[i].value);
            EXPECT(tb, t, rt == pk[i].row_tag, nn, "stage 0 slot " + std::to_string(i) + " row tag", rt, pk[i].row_tag);
            EXPECT(tb, t, ct == pk[i].col_tag, nn, "stage 0 slot " + std::to_string(i) + " column tag", ct,
                   pk[i].col_tag);
        }
        int n1 = enpu_cosim_rs_stage(eng, net, 1, pk, pass);
        for (int i = 0; i < nv; i++) {
            EXPECT(tb, t, (v1 >> i & 1) == (i < n1), nn, "stage 1 slot " + std::to_string(i) + " valid", v1 >> i & 1,
                   i < n1);
            if (i >= n1) continue;
            int64_t ct = (int64_t)(net ? bits::get(p->fl_s1_ctag, TW * i, TW) : bits::get(p->if_s1_ctag, TW * i, TW));
            EXPECT(tb, t, ct == pk[i].col_tag, nn, "stage 1 slot " + std::to_string(i) + " column tag", ct,
                   pk[i].col_tag);
            for (int r = 0; r < ROWS; r++) {
                bool rp = net ? bits::get(p->fl_s1_pass, i * ROWS + r, 1) : bits::get(p->if_s1_pass, i * ROWS + r, 1);
                EXPECT(tb, t, rp == pass[i * ROWS + r], nn,
                       "stage 1 slot " + std::to_string(i) + " passed row node " + std::to_string(r), rp,
                       pass[i * ROWS + r]);
            }
        }
    }
}

// The C engine's hook after cycle t of a pass (ctx: the Tb): a pass's
// first cycle configures the RTL, every cycle drives its inputs, checks it
// before the edge, clocks it and checks it after.
void hook(void *ctx, uint64_t t, const void *eng) {
    Tb &tb = *(Tb *)ctx;
    if (tb.failed) return;
    enpu_cosim_rs_pass ps;
    enpu_cosim_rs_pass_of(eng, t, &ps);
    if (!ps.active) return fail(tb, t, "unit ctrl: the hook ran outside a pass");
    if (ps.t0 == (int64_t)t) configure(tb, t, eng, ps); // a pass's first cycle
    else if (!tb.in_pass || t != tb.last_t + 1)
        return fail(tb, t, "unit ctrl: the C model skipped cycles %" PRIu64 "..%" PRIu64 " of a pass",
                    tb.last_t + 1, t - 1);
    if (tb.failed) return;
    tb.now = t;
    std::vector<enpu_cosim_rs_pe> now(NPE);
    for (int n = 0; n < NPE; n++) enpu_cosim_rs_pe_at(eng, n / COLS, n % COLS, &now[n]);
    drive_net(tb, t, eng, 0);
    drive_net(tb, t, eng, 1);
    if (tb.failed) return;
    Vrs_top *p = tb.top.get();
    p->go = ps.go;
    // the output network's takes: the bottom PE of each chain whose psum
    // left its link in cycle t (it may hold the next unit already)
    for (int n = 0; n < NPE; n++) {
        const enpu_cosim_rs_pe &b = tb.prev[n], &c = now[n];
        bool take = n / COLS == ps.chain - 1 && b.out_full && (!c.out_full || c.out_unit != b.out_unit);
        bits::put(p->ctake, n, 1, take);
        if (take && !(tb.pe[n].out_full.get() && tb.pe[n].out_rdy.get()))
            return fail(tb, t, "unit %s, signal link ready: the output network took a psum the RTL does not offer",
                        pe_name(n).c_str());
    }
    p->clk = 0;
    p->eval();
    check_cycle(tb, t, now);
    if (tb.failed) return;
    clock(tb, false);
    check_state(tb, t, eng, now);
    tb.prev.swap(now);
    tb.cycles++;
    tb.last_t = t;
}

// One case: equal or its first difference, and its counts.
struct CaseResult {
    bool ok = false, no_pass = false;
    uint64_t cycles = 0, sim_cycles = 0, checks = 0, passes = 0, macs = 0, values = 0, fail_cycle = 0;
    std::string msg;
};

// Runs program prog on arch a with input x through the C simulator and the
// RTL side by side; a VCD of cycles [vcd_from, vcd_to] when vcd_path.
CaseResult cosim(const enpu_program *prog, const enpu_arch *a, const enpu_buf *x, const char *vcd_path = nullptr,
                 uint64_t vcd_from = 0, uint64_t vcd_to = 0) {
    CaseResult cr;
    Tb tb;
    tb.open(vcd_path, vcd_from, vcd_to);
    std::string missing;
    if (!find_sigs(tb, &missing)) {
        cr.msg = "the RTL model has no " + missing + " (pe.v's public_flat_rd signals)";
        return cr;
    }
    enpu_sim_opts o{};
    o.mode = ENPU_SIM_CYCLE;
    o.check = true;
    enpu_err err{};
    enpu_sim *sim = nullptr;
    if (enpu_sim_new(prog, a, &o, &sim, &err)) {
        cr.msg = std::string("simulator: ") + err.msg;
        return cr;
    }
    enpu_cosim_attach(sim, hook, &tb);
    enpu_sim_result res{};
    int rc = enpu_sim_run(sim, x, 1, &res, &err);
    cr.sim_cycles = res.total_cycles;
    if (tb.failed) {
        cr.msg = tb.msg;
        cr.fail_cycle = tb.fail_cycle;
    } else if (rc) {
        cr.msg = std::string("C simulator: ") + err.msg;
    } else if (tb.passes == 0) {
        cr.no_pass = true;
        cr.msg = "no layer ran on the array";
    } else {
        cr.ok = true;
    }
    cr.cycles = tb.cycles, cr.checks = tb.checks, cr.passes = tb.passes, cr.macs = tb.macs, cr.values = tb.values;
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    tb.close();
    return cr;
}

// The arch has the structure the RTL was built for (params.h).
bool structural_match(const enpu_arch *a) {
    const int64_t want[][2] = {{a->rs_rows, RS_ROWS},
                               {a->rs_cols, RS_COLS},
                               {a->rs_ifmap_net_values, RS_NVI},
                               {a->rs_filter_net_values, RS_NVF},
                               {a->rs_psum_bits, RS_PSW},
                               {a->rs_fifo_depth, RS_FD},
                               {a->rs_ifmap_lb_depth, RS_LBD},
                               {a->rs_filter_lb_depth, RS_FLD},
                               {a->rs_psum_depth, RS_PD}};
    for (auto &w : want)
        if (w[0] != w[1]) return false;
    return a->rs_pe_pipeline < (int64_t)1 << RS_DPW;
}

// The controller's and the output network's timing drawn anew (the RTL's
// structure stays).
enpu_arch vary(sya_rng &r, const enpu_arch &base) {
    enpu_arch a = base;
    a.instr_fetch_cycles = r.rr(1, 4), a.decode_cycles = r.rr(0, 2);
    a.rs_config_cycles = r.rr(1, 40);
    a.requant_latency = r.rr(0, 3);
    return a;
}

// A configuration's cases summed (its last line).
struct Totals {
    int cases = 0, equal = 0, differ = 0;
    uint64_t cycles = 0, checks = 0, passes = 0, macs = 0, values = 0;
};

// Counts case `name`'s result and says a difference (with its VCD window
// when vcd_dir), an equal case only when verbose.
void report(Totals &tot, const char *cfg, const std::string &name, const CaseResult &cr, const enpu_program *prog,
            const enpu_arch *a, const enpu_buf *x, const char *vcd_dir, bool verbose) {
    tot.cycles += cr.cycles, tot.checks += cr.checks, tot.passes += cr.passes, tot.macs += cr.macs;
    tot.values += cr.values;
    tot.cases++;
    if (cr.ok) {
        tot.equal++;
        if (verbose)
            std::printf("rtl-rs %s: %s: equal, %" PRIu64 " pass cycles (%" PRIu64 " passes, %" PRIu64 " MACs) of %" PRIu64
                        "\n",
                        cfg, name.c_str(), cr.cycles, cr.passes, cr.macs, cr.sim_cycles);
        return;
    }
    tot.differ++;
    std::printf("rtl-rs %s: %s: DIFFER: %s\n", cfg, name.c_str(), cr.msg.c_str());
    tb_vcd_window("rtl-rs", cfg, vcd_dir, tot.cases, cr.fail_cycle, [&](const char *path, uint64_t from, uint64_t to) {
        cosim(prog, a, x, path, from, to);
    });
}

} // namespace

// rs_tb --arch ARCH.json [--model ...] [--random N] [--seed S]: the models'
// cases, then N random ones; exit 1 when a case differs, 2 on bad arguments.
int main(int argc, char **argv) {
    TbArgs args;
    if (!tb_parse_args(argc, argv, "rs_tb", &args)) return 2;
    enpu_err err{};
    enpu_arch base;
    if (enpu_arch_load(args.arch_path, &base, &err)) {
        std::fprintf(stderr, "rs_tb: %s\n", err.msg);
        return 2;
    }
    if (!structural_match(&base)) {
        std::fprintf(stderr, "rs_tb: %s: arch does not match the RTL's parameters (scripts/rtl_params.py)\n",
                     args.arch_path);
        return 2;
    }
    // the RTL's PE has one filter loop buffer, no banks (docs/rtl.md): the
    // C engine co-simulates as that engine, every program compiled for it
    base.rs_filter_banks = 0;
    const char *cfg = base.name;
    Totals tot;
    int bad = tb_each_model(args, &base, "rtl-rs", [&](const char *name, const enpu_program *prog, const enpu_buf *x) {
        report(tot, cfg, name, cosim(prog, &base, x), prog, &base, x, args.vcd_dir, true);
    });
    tot.cases += bad, tot.differ += bad;
    sya_rng rng(args.seed);
    // a layer the compiler refuses on this arch, or whose layers all run on
    // the host, is drawn again, and counted
    int redrawn = 0;
    for (int i = 0; i < args.n_random; i++) {
        enpu_arch a = vary(rng, base);
        enpu_program prog{};
        enpu_buf x{};
        std::string name, e;
        CaseResult cr;
        // every other case 16-bit (docs/numerics.md §12): the DW-bit datapath's other half
        const int bits = i % 2 ? 16 : 8;
        bool drawn = !sya_gen_random(rng, &a, &prog, &x, name, e, bits);
        if (bits == 16) name += ", 16-bit";
        if (drawn) {
            cr = cosim(&prog, &a, &x);
            if (cr.no_pass) drawn = false, e = cr.msg;
        }
        if (!drawn) {
            if (args.verbose) std::printf("rtl-rs %s: random %d: drawn again: %s\n", cfg, i, e.c_str());
            enpu_buf_free(&x);
            enpu_program_free(&prog);
            if (++redrawn > 4 * args.n_random) {
                std::printf("rtl-rs %s: random %d: cannot draw a layer for the array: %s\n", cfg, i, e.c_str());
                tot.cases++, tot.differ++;
                continue;
            }
            i--;
            continue;
        }
        report(tot, cfg, "random " + std::to_string(i) + " (" + name + ")", cr, &prog, &a, &x, args.vcd_dir,
               args.verbose);
        enpu_buf_free(&x);
        enpu_program_free(&prog);
    }
    std::printf("rtl-rs %s: %d cases (%d random), %d equal, %d differ, %" PRIu64 " cycles, %" PRIu64
                " passes, %" PRIu64 " MACs, %" PRIu64 " values delivered, %" PRIu64
                " comparisons, %d random layers drawn again\n",
                cfg, tot.cases, args.n_random, tot.equal, tot.differ, tot.cycles, tot.passes, tot.macs, tot.values,
                tot.checks, redrawn);
    return tot.differ ? 1 : 0;
}
