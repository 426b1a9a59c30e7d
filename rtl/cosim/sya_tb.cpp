// Co-simulation of the systolic engine's RTL (rtl/systolic/sya_top.v)
// against the C simulator (src/sim/systolic/), cycle by cycle
// (docs/rtl.md).
//
// The C simulator runs a compiled program in cycle mode with its own
// functional replay check; after every cycle its hook (include/easynpu/
// cosim.h) hands this testbench the engine's state.  The testbench plays
// the controller and the SRAMs for the RTL: it issues the units the C
// controller issued, in the same cycle (their configuration registers by
// tag), presents each step's addresses unskewed (the address generator:
// enpu_sya_act_at / enpu_sya_wgt_at), answers the read ports from the C
// simulator's memories LA / LW cycles later and checks the write ports
// against the words the C re-shaping unit wrote.  Then it clocks the RTL
// once and compares every unit's registers with the C engine's after the
// same cycle.  The first difference stops the case with the cycle, the
// unit, the signal and both values; the case is then run again to dump a
// VCD window around that cycle.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "Vsya_top.h"
#include "bits.h"
#include "params.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

#include "easynpu/arch.h"
#include "easynpu/compiler.h"
#include "easynpu/cosim.h"
#include "easynpu/ir.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"
#include "easynpu/systolic.h"
#include "easynpu/tensor_io.h"

#include "sya_gen.h"
#include "tb_args.h"
#include "tb_common.h"

namespace {

constexpr int R = SYA_NR * SYA_BR, C = SYA_NC * SYA_BC, NM = R * SYA_BC, TW = SYA_TW;
constexpr int NTAG = 1 << SYA_TW, WB = SYA_WB, RQS = SYA_RQ > 0 ? SYA_RQ : 1;
constexpr int DW = SYA_ACC_W + SYA_TW + 20; // a PE's debug word
constexpr int SW = SYA_TW + SYA_CGW + 9;    // a requantizer stage

struct Desc {
    int instr = -1;
    int32_t seq = -1;
    int64_t T = 0, K = 0;
    enpu_sya_unit u{};
    int64_t og0 = 0, lane0 = 0, addr0 = 0, wpp = 0;
    int zp_in = 0, zp_out = 0, lo = 0, hi = 0;
};

struct Tb : TbModel<Vsya_top> {
    const enpu_program *prog = nullptr;
    const enpu_arch *arch = nullptr;
    enpu_sim *sim = nullptr;
    enpu_cosim_sya_dims d{};
    Desc desc[NTAG];
    std::vector<int32_t> streaming; // units whose addresses are still presented
    int32_t seen = 0;
    // SRAM read data in flight: [slot][row][word bytes]
    std::vector<uint8_t> adata, wdata;
    std::vector<bool> aval, wval;
    uint64_t cycles = 0;
};

// The configuration and parameter registers the RTL reads this cycle (by
// the tags on its ports), from the testbench's table of issued units.
void answer_cfg(Tb &tb, const void *eng) {
    Vsya_top *p = tb.top.get();
    for (int r = 0; r < R; r++) {
        const Desc &ds = tb.desc[bits::get(p->zp_tag, TW * r, TW)];
        bits::put(p->zp_val, 8 * r, 8, (uint8_t)ds.zp_in);
    }
    for (int m = 0; m < NM; m++) {
        const Desc &q = tb.desc[bits::get(p->rq_cfg_tag, TW * m, TW)];
        bits::put(p->rq_cfg_instr, SYA_IW * m, SYA_IW, (uint64_t)(q.instr < 0 ? 0 : q.instr));
        bits::put(p->rq_cfg_og0, SYA_OW * m, SYA_OW, (uint64_t)q.og0);
        bits::put(p->rq_cfg_zp, 8 * m, 8, (uint8_t)q.zp_out);
        bits::put(p->rq_cfg_lo, 8 * m, 8, (uint8_t)q.lo);
        bits::put(p->rq_cfg_hi, 8 * m, 8, (uint8_t)q.hi);
        const Desc &s = tb.desc[bits::get(p->sh_cfg_tag, TW * m, TW)];
        bits::put(p->sh_cfg_lane0, SYA_LBW * m, SYA_LBW, (uint64_t)s.lane0);
        bits::put(p->sh_cfg_addr0, SYA_AW * m, SYA_AW, (uint64_t)s.addr0);
        bits::put(p->sh_cfg_wpp, SYA_AW * m, SYA_AW, (uint64_t)s.wpp);
        bits::put(p->sh_cfg_cols, SYA_CGW * m, SYA_CGW, (uint64_t)s.u.cols);
    }
    p->eval();
    for (int m = 0; m < NM; m++) {
        int instr = (int)bits::get(p->prm_instr, SYA_IW * m, SYA_IW);
        int64_t ch = (int64_t)bits::get(p->prm_ch, SYA_OW * m, SYA_OW);
        int32_t bias = 0;
        uint32_t M = 0;
        int S = 0;
        const enpu_sya_shape *sh = enpu_cosim_sya_shape(eng, instr);
        if (sh && ch < tb.prog->instr[instr].co) enpu_cosim_sya_param(eng, instr, ch, &bias, &M, &S);
        bits::put(p->prm_bias, 32 * m, 32, (uint32_t)bias);
        bits::put(p->prm_m, SYA_MB * m, SYA_MB, M);
        bits::put(p->prm_s, 6 * m, 6, (uint64_t)S);
    }
    p->eval();
}

// The units the C controller issued in cycle t: their configuration
// registers, and the issue pulse of the ActRdy handshake.
void issue(Tb &tb, const void *eng, const enpu_cosim_sya_ctl &ctl, uint64_t t) {
    Vsya_top *p = tb.top.get();
    p->iss_vld = 0;
    for (; tb.seen < ctl.next_seq; tb.seen++) {
        enpu_cosim_sya_job j;
        if (!enpu_cosim_sya_job_of(eng, tb.seen, &j)) {
            fail(tb, t, "unit ccu: unit %d issued but not in flight", (int)tb.seen);
            return;
        }
        const enpu_instr *in = &tb.prog->instr[j.instr];
        const enpu_sya_shape *s = enpu_cosim_sya_shape(eng, j.instr);
        Desc &ds = tb.desc[j.seq % NTAG];
        ds.instr = j.instr, ds.seq = j.seq, ds.T = j.T, ds.K = j.K, ds.u = j.u;
        ds.og0 = enpu_sya_out_channel(s, &j.u, 0);
        ds.wpp = (in->co + WB - 1) / WB;
        ds.lane0 = ds.og0 % WB;
        ds.addr0 = in->ofmap_addr + j.u.p0 * ds.wpp + ds.og0 / WB;
        ds.zp_in = (int)in->zp_in, ds.zp_out = (int)in->zp_out;
        ds.lo = (int)in->clamp_lo, ds.hi = (int)in->clamp_hi;
        tb.streaming.push_back(j.seq);
        p->iss_vld = 1;
        p->iss_k = (uint32_t)j.K;
        p->iss_cols = (uint32_t)j.u.cols;
    }
}

// The address generator: every row's and column's request of this cycle's
// step, unskewed (row r of step k at T - LA + k, column c at T - LW + k).
void present(Tb &tb, uint64_t t) {
    Vsya_top *p = tb.top.get();
    bits::clear(p->rq_a_vld), bits::clear(p->rq_w_vld);
    std::vector<int32_t> keep;
    for (int32_t seq : tb.streaming) {
        const Desc &ds = tb.desc[seq % NTAG];
        const enpu_instr *in = &tb.prog->instr[ds.instr];
        const enpu_sya_shape *s = nullptr;
        enpu_sya_shape sh;
        enpu_sya_shape_of(in, &sh);
        s = &sh;
        int64_t ka = (int64_t)t - (ds.T - SYA_LA), kw = (int64_t)t - (ds.T - SYA_LW);
        if (ka < ds.K || kw < ds.K) keep.push_back(seq);
        if (ka >= 0 && ka < ds.K)
            for (int r = 0; r < ds.u.rows; r++) {
                int64_t word;
                int lane;
                enpu_sya_act_at(tb.arch, in, s, &ds.u, r, ka, &word, &lane);
                bits::put(p->rq_a_vld, r, 1, 1);
                bits::put(p->rq_a_addr, SYA_AW * r, SYA_AW, word < 0 ? 0 : (uint64_t)word);
                bits::put(p->rq_a_lane, SYA_LBW * r, SYA_LBW, word < 0 ? 0 : (uint64_t)lane);
                bits::put(p->rq_a_pad, r, 1, word < 0);
                bits::put(p->rq_a_first, r, 1, ka == 0);
                bits::put(p->rq_a_last, r, 1, ka == ds.K - 1);
                bits::put(p->rq_a_tag, TW * r, TW, (uint64_t)(seq % NTAG));
            }
        if (kw >= 0 && kw < ds.K)
            for (int c = 0; c < ds.u.cols; c++) {
                int64_t b = enpu_sya_wgt_at(tb.arch, in, s, &ds.u, kw, c);
                bits::put(p->rq_w_vld, c, 1, 1);
                bits::put(p->rq_w_addr, SYA_WAW * c, SYA_WAW, (uint64_t)(b / WB));
                bits::put(p->rq_w_lane, SYA_LBW * c, SYA_LBW, (uint64_t)(b % WB));
            }
    }
    tb.streaming.swap(keep);
}

// The SRAMs' read data of this cycle: what the RTL asked for LA (LW) cycles
// ago, read from the C simulator's memories then.
void read_data(Tb &tb, uint64_t t) {
    Vsya_top *p = tb.top.get();
    const size_t as = (size_t)((t + 1) % (SYA_LA + 1)), ws = (size_t)((t + 1) % (SYA_LW + 1));
    for (int r = 0; r < R; r++)
        for (int b = 0; b < WB; b++)
            bits::put(p->act_rdata, 8 * (WB * r + b), 8, tb.adata[(as * R + r) * WB + b]);
    for (int c = 0; c < C; c++)
        for (int b = 0; b < WB; b++)
            bits::put(p->wgt_rdata, 8 * (WB * c + b), 8, tb.wdata[(ws * C + c) * WB + b]);
}

void take_reads(Tb &tb, uint64_t t, const enpu_cosim_mem &mem) {
    Vsya_top *p = tb.top.get();
    const size_t as = (size_t)(t % (SYA_LA + 1)), ws = (size_t)(t % (SYA_LW + 1));
    for (int r = 0; r < R; r++) {
        uint8_t *dst = &tb.adata[(as * R + r) * WB];
        int64_t a = (int64_t)bits::get(p->act_rd_addr, SYA_AW * r, SYA_AW);
        if (bits::get(p->act_rd_en, r, 1) && a < mem.main_words) std::memcpy(dst, mem.main + a * WB, WB);
        else std::memset(dst, 0, WB);
    }
    for (int c = 0; c < C; c++) {
        uint8_t *dst = &tb.wdata[(ws * C + c) * WB];
        int64_t a = (int64_t)bits::get(p->wgt_rd_addr, SYA_WAW * c, SYA_WAW);
        if (bits::get(p->wgt_rd_en, c, 1) && a < mem.w_words) std::memcpy(dst, mem.wmem + a * WB, WB);
        else std::memset(dst, 0, WB);
    }
}

// The combinational outputs of cycle t: the array's edges, the MUXes'
// hand-over, the words written, the handshake.
void check_comb(Tb &tb, const void *eng, const enpu_cosim_sya_ctl &ctl, bool issued, uint64_t t,
                const enpu_cosim_mem &mem) {
    Vsya_top *p = tb.top.get();
    for (int r = 0; r < R; r++) {
        enpu_cosim_sya_tok w;
        enpu_cosim_sya_edge_at(eng, t, true, r, &w);
        uint64_t v = bits::get(p->dbg_west, (TW + 11) * r, TW + 11);
        bool vld = v & 1;
        char where[64];
        std::snprintf(where, sizeof where, "glb (row %d, west edge)", r);
        EXPECT(tb, t, vld == (w.seq >= 0), where, "a_vld", vld, w.seq >= 0);
        if (!vld) continue;
        EXPECT(tb, t, (int8_t)(v >> 1) == w.v, where, "a_v", (int8_t)(v >> 1), w.v);
        EXPECT(tb, t, ((v >> 9) & 1) == (w.k == 0), where, "a_first", (v >> 9) & 1, w.k == 0);
        EXPECT(tb, t, ((v >> 10) & 1) == w.last, where, "a_last", (v >> 10) & 1, w.last);
        EXPECT(tb, t, (v >> 11) == (uint64_t)(w.seq % NTAG), where, "a_tag", v >> 11, w.seq % NTAG);
    }
    for (int c = 0; c < C; c++) {
        enpu_cosim_sya_tok w;
        enpu_cosim_sya_edge_at(eng, t, false, c, &w);
        uint64_t v = bits::get(p->dbg_north, 9 * c, 9);
        char where[64];
        std::snprintf(where, sizeof where, "glb (column %d, north edge)", c);
        EXPECT(tb, t, (v & 1) == (w.seq >= 0), where, "w_vld", v & 1, w.seq >= 0);
        if (v & 1) EXPECT(tb, t, (int8_t)(v >> 1) == w.v, where, "w_v", (int8_t)(v >> 1), w.v);
    }
    int emits = 0, writes = 0;
    for (int m = 0; m < NM; m++) emits += (int)bits::get(p->mux_emit, m, 1);
    EXPECT(tb, t, emits == ctl.mux_out, "pe_row (output MUXes)", "results handed on", emits, ctl.mux_out);
    EXPECT(tb, t, !p->mux_err, "pe_row (output MUXes)", "mux_err", p->mux_err, 0);
    for (int m = 0; m < NM; m++) {
        if (!bits::get(p->wr_en, m, 1)) continue;
        writes++;
        int64_t a = (int64_t)bits::get(p->wr_addr, SYA_AW * m, SYA_AW);
        char where[96];
        std::snprintf(where, sizeof where, "sync_shape (row %d, bank column %d)", m / SYA_BC, m % SYA_BC);
        EXPECT(tb, t, a < mem.main_words && mem.main_wc && mem.main_wc[a] == t + 1, where,
               "write address (C: cycle of that word's last write + 1)", a,
               a < mem.main_words && mem.main_wc ? (int64_t)mem.main_wc[a] : -1);
        for (int b = 0; b < WB; b++) {
            if (!bits::get(p->wr_be, WB * m + b, 1)) continue;
            uint8_t rv = (uint8_t)bits::get(p->wr_data, 8 * (WB * m + b), 8), cv = mem.main[a * WB + b];
            char sig[64];
            std::snprintf(sig, sizeof sig, "write data (word %" PRId64 ", lane %d)", a, b);
            EXPECT(tb, t, rv == cv, where, sig, (int8_t)rv, (int8_t)cv);
        }
    }
    EXPECT(tb, t, writes == ctl.ofm_words, "sync_shape", "words written", writes, ctl.ofm_words);
    // ActRdy: the controller issued (it saw the MUXes ready) or waits
    if (issued) EXPECT(tb, t, p->act_rdy, "sya_top (handshake)", "act_rdy at issue", p->act_rdy, 1);
    else if (ctl.state == 2)
        EXPECT(tb, t, p->act_rdy == (ctl.stall != 1), "sya_top (handshake)", "act_rdy while waiting",
               p->act_rdy, ctl.stall != 1);
}

// The registers after cycle t.
void check_regs(Tb &tb, const void *eng, uint64_t t) {
    Vsya_top *p = tb.top.get();
    char where[96];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            enpu_cosim_sya_pe pe;
            enpu_cosim_sya_pe_at(eng, r, c, &pe);
            const int o = DW * (r * C + c);
            std::snprintf(where, sizeof where, "pe (%d,%d)", r, c);
            bool av = bits::get(p->dbg_pe, o, 1);
            EXPECT(tb, t, av == (pe.a.seq >= 0), where, "a_vld", av, pe.a.seq >= 0);
            if (av) {
                int8_t v = (int8_t)bits::get(p->dbg_pe, o + 1, 8);
                EXPECT(tb, t, v == pe.a.v, where, "a_v", v, pe.a.v);
                uint64_t f = bits::get(p->dbg_pe, o + 9, 1), l = bits::get(p->dbg_pe, o + 10, 1);
                EXPECT(tb, t, f == (pe.a.k == 0), where, "a_first", f, pe.a.k == 0);
                EXPECT(tb, t, l == pe.a.last, where, "a_last", l, pe.a.last);
                uint64_t tag = bits::get(p->dbg_pe, o + 11, TW);
                EXPECT(tb, t, tag == (uint64_t)(pe.a.seq % NTAG), where, "a_tag", tag, pe.a.seq % NTAG);
            }
            bool wv = bits::get(p->dbg_pe, o + 11 + TW, 1);
            EXPECT(tb, t, wv == (pe.w.seq >= 0), where, "w_vld", wv, pe.w.seq >= 0);
            if (wv) {
                int8_t v = (int8_t)bits::get(p->dbg_pe, o + 12 + TW, 8);
                EXPECT(tb, t, v == pe.w.v, where, "w_v", v, pe.w.v);
            }
            int64_t acc = bits::sext(bits::get(p->dbg_pe, o + 20 + TW, SYA_ACC_W), SYA_ACC_W);
            EXPECT(tb, t, acc == pe.acc, where, "acc", acc, pe.acc);
        }
    for (int r = 0; r < R; r++)
        for (int bc = 0; bc < SYA_BC; bc++) {
            const int m = r * SYA_BC + bc;
            enpu_cosim_sya_res res;
            bool has = enpu_cosim_sya_mux_at(eng, r, bc, &res);
            std::snprintf(where, sizeof where, "pe_row (row %d, bank column %d: output MUX)", r, bc);
            bool v = bits::get(p->dbg_mux_vld, m, 1);
            EXPECT(tb, t, v == has, where, "mux_vld", v, has);
            if (!has) continue;
            int64_t c = (int64_t)bits::get(p->dbg_mux_c, SYA_CW * m, SYA_CW) + bc * SYA_NC;
            EXPECT(tb, t, c == res.c, where, "mux_c", c, res.c);
            int64_t acc = bits::sext(bits::get(p->dbg_mux_acc, SYA_ACC_W * m, SYA_ACC_W), SYA_ACC_W);
            EXPECT(tb, t, acc == res.acc, where, "mux_acc", acc, res.acc);
            uint64_t tag = bits::get(p->dbg_mux_tag, TW * m, TW);
            EXPECT(tb, t, tag == (uint64_t)(res.seq % NTAG), where, "mux_tag", tag, res.seq % NTAG);
        }
    for (int j = 1; j <= SYA_RQ; j++)
        for (int r = 0; r < R; r++)
            for (int bc = 0; bc < SYA_BC; bc++) {
                const int m = r * SYA_BC + bc, o = SW * (RQS * m + j - 1);
                enpu_cosim_sya_res res;
                bool has = enpu_cosim_sya_rq_at(eng, t, j, r, bc, &res);
                std::snprintf(where, sizeof where, "requant (row %d, bank column %d, stage %d)", r, bc, j);
                bool v = bits::get(p->dbg_rq, o, 1);
                EXPECT(tb, t, v == has, where, "vld", v, has);
                if (!has) continue;
                int8_t q = (int8_t)bits::get(p->dbg_rq, o + 1, 8);
                EXPECT(tb, t, q == res.q, where, "q", q, res.q);
                int64_t c = (int64_t)bits::get(p->dbg_rq, o + 9, SYA_CGW);
                EXPECT(tb, t, c == res.c, where, "c", c, res.c);
                uint64_t tag = bits::get(p->dbg_rq, o + 9 + SYA_CGW, TW);
                EXPECT(tb, t, tag == (uint64_t)(res.seq % NTAG), where, "tag", tag, res.seq % NTAG);
            }
}

void hook(void *vctx, uint64_t t, const void *eng) {
    Tb &tb = *static_cast<Tb *>(vctx);
    if (tb.failed) return;
    Vsya_top *p = tb.top.get();
    enpu_cosim_sya_ctl ctl;
    enpu_cosim_sya_ctl_of(eng, &ctl);
    enpu_cosim_mem mem;
    enpu_cosim_mem_of(tb.sim, &mem);
    const int32_t before = tb.seen;
    issue(tb, eng, ctl, t);
    if (tb.failed) return;
    const bool issued = tb.seen > before;
    p->req_k = issued ? p->iss_k : (uint32_t)ctl.wait_k;
    present(tb, t);
    read_data(tb, t);
    p->clk = 0;
    p->rst = 0;
    p->eval();
    answer_cfg(tb, eng);
    tb.dump(2 * t);
    check_comb(tb, eng, ctl, issued, t, mem);
    take_reads(tb, t, mem);
    p->clk = 1;
    p->eval();
    tb.dump(2 * t + 1);
    if (!tb.failed) check_regs(tb, eng, t);
    tb.cycles = t + 1;
}

struct CaseResult {
    bool ok = false, ran = false;
    uint64_t cycles = 0, sim_cycles = 0, checks = 0;
    uint64_t fail_cycle = 0;
    std::string msg;
};

// Runs program prog on arch a with input x through the C simulator and the
// RTL side by side; a VCD of cycles [vcd_from, vcd_to] when vcd_path.
CaseResult cosim(const enpu_program *prog, const enpu_arch *a, const enpu_buf *x, int nx, const char *vcd_path,
                 uint64_t vcd_from, uint64_t vcd_to) {
    CaseResult cr;
    Tb tb;
    tb.prog = prog, tb.arch = a;
    tb.open(vcd_path, vcd_from, vcd_to);
    tb.adata.assign((size_t)(SYA_LA + 1) * R * WB, 0);
    tb.wdata.assign((size_t)(SYA_LW + 1) * C * WB, 0);
    // reset
    Vsya_top *p = tb.top.get();
    p->rst = 1;
    for (int i = 0; i < 2; i++) {
        p->clk = 0, p->eval();
        p->clk = 1, p->eval();
    }
    p->rst = 0;
    enpu_sim_opts o{};
    o.mode = ENPU_SIM_CYCLE;
    o.check = true;
    enpu_err err{};
    if (enpu_sim_new(prog, a, &o, &tb.sim, &err)) {
        cr.msg = std::string("simulator: ") + err.msg;
        return cr;
    }
    enpu_cosim_attach(tb.sim, hook, &tb);
    enpu_sim_result res{};
    int rc = enpu_sim_run(tb.sim, x, nx, &res, &err);
    cr.ran = true;
    cr.sim_cycles = res.total_cycles;
    if (rc) {
        cr.msg = std::string("C simulator: ") + err.msg;
    } else if (tb.failed) {
        cr.msg = tb.msg;
        cr.fail_cycle = tb.fail_cycle;
    } else if (tb.cycles != res.total_cycles) {
        // the RTL is clocked once per simulated cycle
        cr.msg = "the C simulator ran " + std::to_string(res.total_cycles) + " cycles, the RTL " +
                 std::to_string(tb.cycles);
    } else {
        cr.ok = true;
    }
    cr.cycles = tb.cycles;
    cr.checks = tb.checks;
    enpu_sim_result_free(&res);
    enpu_sim_free(tb.sim);
    tb.close();
    return cr;
}

bool structural_match(const enpu_arch *a, std::string &why) {
    const int64_t want[][2] = {{a->sya_rows, SYA_NR},        {a->sya_cols, SYA_NC},
                               {a->sya_bank_rows, SYA_BR},   {a->sya_banks / a->sya_bank_rows, SYA_BC},
                               {a->sya_acc_bits, SYA_ACC_W}, {a->bus_bits / 8, SYA_WB},
                               {a->dtcm_read_latency, SYA_LA}, {a->weight_mem_latency, SYA_LW},
                               {a->requant_latency, SYA_RQ}, {a->mult_bits, SYA_MB}};
    for (auto &w : want)
        if (w[0] != w[1]) {
            why = "arch does not match the RTL's parameters (regenerate them: scripts/rtl_params.py)";
            return false;
        }
    return true;
}

struct Totals {
    int cases = 0, equal = 0, differ = 0;
    uint64_t cycles = 0, checks = 0;
};

void report(Totals &tot, const char *cfg, const std::string &name, const CaseResult &cr, const enpu_program *prog,
            const enpu_arch *a, const enpu_buf *x, int nx, const char *vcd_dir, bool verbose) {
    tot.cases++;
    tot.cycles += cr.cycles;
    tot.checks += cr.checks;
    if (cr.ok) {
        tot.equal++;
        if (verbose) std::printf("rtl-sya %s: %s: equal, %" PRIu64 " cycles\n", cfg, name.c_str(), cr.sim_cycles);
        return;
    }
    tot.differ++;
    std::printf("rtl-sya %s: %s: DIFFER: %s\n", cfg, name.c_str(), cr.msg.c_str());
    if (!cr.ran) return;
    tb_vcd_window("rtl-sya", cfg, vcd_dir, tot.cases, cr.fail_cycle, [&](const char *path, uint64_t from, uint64_t to) {
        cosim(prog, a, x, nx, path, from, to);
    });
}

} // namespace

int main(int argc, char **argv) {
    TbArgs args;
    if (!tb_parse_args(argc, argv, "sya_tb", &args)) return 2;
    const char *arch_path = args.arch_path, *vcd_dir = args.vcd_dir;
    const int n_random = args.n_random;
    const uint64_t seed = args.seed;
    const bool verbose = args.verbose;
    enpu_err err{};
    enpu_arch base;
    if (enpu_arch_load(arch_path, &base, &err)) {
        std::fprintf(stderr, "sya_tb: %s\n", err.msg);
        return 2;
    }
    std::string why;
    if (!structural_match(&base, why)) {
        std::fprintf(stderr, "sya_tb: %s: %s\n", arch_path, why.c_str());
        return 2;
    }
    const char *cfg = base.name;
    Totals tot;
    int bad = tb_each_model(args, &base, "rtl-sya", [&](const char *name, const enpu_program *prog, const enpu_buf *x) {
        CaseResult cr = cosim(prog, &base, x, 1, nullptr, 0, 0);
        report(tot, cfg, name, cr, prog, &base, x, 1, vcd_dir, true);
    });
    tot.cases += bad, tot.differ += bad;
    sya_rng rng(seed);
    int layers = 0;
    for (int i = 0; i < n_random; i++) {
        enpu_arch a = sya_gen_vary(rng, base);
        enpu_program prog{};
        enpu_buf x{};
        std::string name, e;
        if (sya_gen_random(rng, &a, &prog, &x, name, e)) {
            std::printf("rtl-sya %s: random %d: cannot compile: %s\n", cfg, i, e.c_str());
            tot.cases++, tot.differ++;
            continue;
        }
        for (int k = 0; k < prog.n_instr; k++) layers += enpu_opcode_class(prog.instr[k].opcode) == ENPU_CLASS_SYA;
        CaseResult cr = cosim(&prog, &a, &x, 1, nullptr, 0, 0);
        report(tot, cfg, "random " + std::to_string(i) + " (" + name + ")", cr, &prog, &a, &x, 1, vcd_dir, verbose);
        enpu_buf_free(&x);
        enpu_program_free(&prog);
    }
    std::printf("rtl-sya %s: %d cases (%d random, %d array layers in them), %d equal, %d differ, %" PRIu64
                " cycles, %" PRIu64 " comparisons\n",
                cfg, tot.cases, n_random, layers, tot.equal, tot.differ, tot.cycles, tot.checks);
    return tot.differ ? 1 : 0;
}
