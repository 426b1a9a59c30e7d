// Co-simulation of EasyNPU's PE array RTL with its PE controller, loader,
// weight reader and writer
// (rtl/easynpu/enpu_top.v) against the C simulator's EasyNPU engine
// (src/sim/easynpu/), cycle by cycle (docs/rtl.md).
//
// The C simulator runs a compiled program in cycle mode with its own
// functional replay check; after every cycle of a chain its hook
// (include/easynpu/cosim.h) hands this testbench the engine's core.  The
// testbench plays what is outside the RTL: the decoded instruction's fields
// (configuration at the chain's start), the scheduler's unit cursor (the
// next unit's registers, advanced when the RTL's PE controller takes it),
// on cursors of their own the loader's and the weight reader's next units,
// the DTCM's and the weight memory's read ports (answered from the C
// model's memories) and the parameter registers (answered for the psum word
// the RTL's controller names).  It clocks the RTL once and compares each
// unit: the loader's bus use and pad writes (loader), the weight reader's
// reads, pushes and addresses (weight_reader), the PE controller's decision
// (issue or the stall reason) and its issue's registers against the C
// controller's (pe_ctrl),
// the pad words the PE array reads and the banks' valid bits (ifmap_pad),
// the weight pad's head, its handshake and occupancy (weight_pad), every
// psum written and every requantized output (pe, requant), the entries'
// ready bits (pe_array), the DTCM writes and the write queue's occupancy
// (writer).  The first difference stops the case with the cycle, the unit,
// the signal and both values; the case is then run again to dump a VCD
// window around that cycle.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "Venpu_top.h"
#include "bits.h"
#include "params.h"
#include "verilated.h"
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

constexpr int P = ENPU_P, ROWS = ENPU_ROWS, NV = ENPU_ROWS * ENPU_LGMAX, ACC = ENPU_ACC_W;
constexpr int K_CONV = 0, K_DW = 1; // sim_kind (src/sim/easynpu/chain.h)

struct Tb : TbModel<Venpu_top> {
    uint64_t now = 0; // the cycle being clocked
    uint64_t chain_t0 = UINT64_MAX;
    uint64_t last_t = 0;
    bool have_prev = false; // prev / nxt hold the state after cycle last_t
    enpu_cosim_enpu_state prev{};
    enpu_cosim_enpu_issue nxt{};
    bool unsupported = false;
    uint64_t cycles = 0, issues = 0, chains = 0, writes = 0, masked = 0;
    uint64_t why[8]{};                       // cycles per PE controller decision
    enpu_cosim_enpu_chain ch{};
    enpu_cosim_enpu_unit cur{}, lcur{}, wcur{}; // the scheduler's next unit, next load unit, next weight unit
    enpu_cosim_mem mem{};                    // the C model's memories
    int wq_n = 0;                            // ... its write queue: count and head
    enpu_cosim_enpu_wqe wq_head{};
    int8_t wq_data[256]{};
};

void clock(Tb &tb, bool rst) {
    Venpu_top *p = tb.top.get();
    p->rst = rst;
    p->clk = 0;
    p->eval();
    if (!rst) tb.dump(2 * tb.now); // a chain's reset edge is not a cycle
    p->clk = 1;
    p->eval();
    if (!rst) tb.dump(2 * tb.now + 1);
    p->rst = 0;
}

// The scheduler's next unit onto the PE controller's nu_* inputs.
void drive_unit(Tb &tb) {
    Venpu_top *p = tb.top.get();
    const enpu_cosim_enpu_unit &u = tb.cur;
    p->nu_done = u.done;
    if (u.done) return;
    p->nu_u = (uint32_t)(u.u & ((1 << ENPU_UW) - 1));
    p->nu_bank = (uint32_t)u.bank;
    p->nu_q = (uint32_t)u.q, p->nu_npos = (uint32_t)u.npos, p->nu_x = (uint32_t)u.x, p->nu_xi = (uint32_t)u.xi;
    p->nu_qx = (uint32_t)u.qx, p->nu_qr = (uint32_t)u.qr;
    p->nu_zse = (uint32_t)u.zse, p->nu_nch = (uint32_t)u.nch, p->nu_lane0 = (uint32_t)u.lane0;
    p->nu_nkh = (uint32_t)u.nkh;
    p->nu_first = u.tile_first, p->nu_last = u.tile_last;
    p->nu_zk = (uint32_t)u.zk;
    p->nu_c0w = (uint32_t)(u.c0 / P), p->nu_c0l = (uint32_t)(u.c0 % P);
    p->nu_wdx0 = (uint32_t)u.wdx0;
    p->nu_obase = (uint32_t)u.obase;
}

// The scheduler's next unit for the weight reader onto its nw_* inputs.
void drive_weight_unit(Tb &tb) {
    Venpu_top *p = tb.top.get();
    const enpu_cosim_enpu_unit &u = tb.wcur;
    p->nw_done = u.done;
    if (u.done) return;
    p->nw_wb0 = (uint32_t)u.wb0;
    p->nw_nch = (uint32_t)u.nch, p->nw_nkh = (uint32_t)u.nkh, p->nw_zse = (uint32_t)u.zse;
}

// A new chain: the C model resets its weight pad, loader, banks, write
// queues and entries' ready times at the chain's start (sim_sched_start,
// sim_pectl_start); the RTL takes a reset edge (the top controller's chain
// start) with the instruction's fields and the first unit on its inputs.
void chain_start(Tb &tb, uint64_t t, const void *eng, const enpu_arch *a) {
    tb.chains++;
    tb.have_prev = false;
    tb.prev = enpu_cosim_enpu_state{};
    tb.prev.ld_unit = 0, tb.prev.ld_j = 0, tb.prev.ld_busy = false;
    tb.prev.w_head = 0, tb.prev.w_count = 0;
    enpu_cosim_enpu_state s;
    enpu_cosim_enpu_state_of(eng, &s);
    tb.prev.bank_size = s.bank_size, tb.prev.ld_bank = 0;
    tb.chain_t0 = s.chain_t0;
    tb.wq_n = 0;
    enpu_cosim_enpu_chain_of(eng, &tb.ch);
    const enpu_cosim_enpu_chain &c = tb.ch;
    if (!c.covered) {
        // fused stages, op2, skip writes, reshape at store, max pool, channel-wise heads
        tb.unsupported = true;
        fail(tb, t, "unit pe_ctrl: a chain the RTL does not cover (fused stages, op2, skip or remapped writes, "
                    "or a head other than conv, fc, dwconv, avgpool)");
        return;
    }
    Venpu_top *p = tb.top.get();
    p->cfg_bcast = c.bcast;
    p->cfg_sh = (uint32_t)c.sh, p->cfg_sw = (uint32_t)c.sw, p->cfg_dh = (uint32_t)c.dh, p->cfg_dw = (uint32_t)c.dw;
    p->cfg_wk = (uint32_t)c.wk;
    p->cfg_rows = (uint32_t)c.rows;
    int lgsel = 0;
    while ((1 << lgsel) < c.lg) lgsel++;
    p->cfg_lgsel = (uint32_t)lgsel;
    p->cfg_L = (uint32_t)c.L;
    p->cfg_npar = (uint32_t)c.n_par;
    p->cfg_bank_size = (uint32_t)c.bank_size;
    p->cfg_ld = (uint32_t)a->dtcm_read_latency;
    p->cfg_wo = (uint32_t)c.wo, p->cfg_owpp = (uint32_t)c.owpp;
    p->cfg_co_w = (uint32_t)(c.co / P), p->cfg_co_l = (uint32_t)(c.co % P);
    p->cfg_fc = c.fc;
    p->cfg_hi = (uint32_t)c.hi, p->cfg_wi = (uint32_t)c.wi, p->cfg_wpp = (uint32_t)c.istride;
    p->cfg_iword = (uint32_t)c.iword;
    p->cfg_ifmap = (uint32_t)c.ifmap_addr;
    p->cfg_pad = (uint8_t)c.pad_value;
    p->cfg_wtap = (uint32_t)c.w_tap, p->cfg_wch = (uint32_t)c.w_ch;
    enpu_cosim_enpu_unit_first(eng, &tb.cur);
    enpu_cosim_enpu_unit_first(eng, &tb.lcur);
    enpu_cosim_enpu_unit_first(eng, &tb.wcur);
    // the weight reader before the chain's first cycle: every parameter
    // word to read, unit 0's first word next
    tb.prev.w_par_left = c.n_par, tb.prev.w_done = tb.wcur.done, tb.prev.w_addr = tb.wcur.wb0;
    drive_unit(tb);
    drive_weight_unit(tb);
    clock(tb, true);
    enpu_cosim_enpu_unit_next(eng, &tb.cur);
    enpu_cosim_enpu_unit_next(eng, &tb.wcur);
}

// The scheduler's next load unit onto the loader's nl_* inputs.
void drive_load_unit(Tb &tb) {
    Venpu_top *p = tb.top.get();
    const enpu_cosim_enpu_unit &u = tb.lcur;
    p->nl_done = u.done;
    if (u.done) return;
    p->nl_u0 = u.u == 0;
    p->nl_u = (uint32_t)(u.u & ((1 << ENPU_UW) - 1));
    p->nl_bank = (uint32_t)u.bank;
    p->nl_xi = (uint32_t)u.xi, p->nl_nw = (uint32_t)(u.xi * u.yi);
    p->nl_iy0 = (uint32_t)u.iy0 & ((1u << (ENPU_CW + 1)) - 1);
    p->nl_ix0 = (uint32_t)u.ix0 & ((1u << (ENPU_CW + 1)) - 1);
    p->nl_kz = (uint32_t)u.kz;
}

// Before the edge of cycle t: the loader's bus request and grant against
// the C loader's (if_valid, if_ready); the DTCM's read port answered from the
// C model's memory; its pad write (entry, padding mark, word) against the
// one the C loader made in cycle t (seen as its cursor's move: the entry
// and its contents after the cycle).
void check_loader(Tb &tb, uint64_t t, const void *eng, const enpu_cosim_enpu_state &s) {
    Venpu_top *p = tb.top.get();
    p->eval();
    EXPECT(tb, t, (bool)p->rd_req == s.if_valid, "loader", std::string("bus request (if_valid)"), p->rd_req,
           s.if_valid);
    EXPECT(tb, t, (bool)p->rd_en == s.if_ready, "loader", std::string("bus grant (if_ready)"), p->rd_en, s.if_ready);
    if (p->rd_en) {
        int64_t addr = (int64_t)p->rd_addr;
        if (addr < 0 || addr >= tb.mem.main_words) {
            fail(tb, t, "unit loader, signal read address: rtl %" PRId64 " outside the main DTCM", addr);
            return;
        }
        for (int i = 0; i < P; i++) bits::put(p->rd_data, 8 * i, 8, tb.mem.main[addr * tb.mem.wb + i]);
        p->eval();
    }
    const enpu_cosim_enpu_state &b = tb.prev;
    bool wrote = !b.ld_done && (b.ld_busy ? (s.ld_unit != b.ld_unit || s.ld_j != b.ld_j)
                                          : (s.ld_unit != b.ld_unit || (s.ld_busy && s.ld_j > 0)));
    EXPECT(tb, t, (bool)p->pad_we == wrote, "loader", std::string("pad write"), p->pad_we, wrote);
    if (!wrote) return;
    int64_t entry = (int64_t)b.ld_bank * b.bank_size + (b.ld_busy ? b.ld_j : 0);
    EXPECT(tb, t, (int64_t)p->pad_waddr == entry, "loader", std::string("pad entry"), p->pad_waddr, entry);
    bool mark = false;
    const int8_t *w = enpu_cosim_enpu_pad(eng, entry, &mark);
    EXPECT(tb, t, (bool)p->pad_wmark == mark, "loader", "padding mark of entry " + std::to_string(entry),
           p->pad_wmark, mark);
    for (int i = 0; i < P; i++) {
        int8_t r = (int8_t)bits::get(p->pad_wdata, 8 * i, 8);
        EXPECT(tb, t, r == w[i], "loader", "pad word (entry " + std::to_string(entry) + "), lane " + std::to_string(i),
               r, w[i]);
    }
}

// Before the edge of cycle t: the weight reader's weight-bus read
// (parameter or weight word) against the C reader's (w_valid), its push
// into the weight pad against the C pad's (its occupancy grew by more than
// the pops) and the word's address against the one the C reader's cursor
// named before the cycle; the weight memory's read port answered from the
// C model's weight memory.
void check_weights(Tb &tb, uint64_t t, const enpu_cosim_enpu_state &s, const enpu_arch *a) {
    const enpu_cosim_enpu_state &b = tb.prev;
    const int dw = (int)a->weight_pad_depth;
    int pops = ((s.w_head - b.w_head) % dw + dw) % dw;
    int pushes = s.w_count - b.w_count + pops;
    if (pushes < 0 || pushes > 1) {
        fail(tb, t, "unit weight_pad, signal count: the C model pushed %d words in one cycle", pushes);
        return;
    }
    Venpu_top *p = tb.top.get();
    p->eval();
    EXPECT(tb, t, (bool)p->wm_rd == s.w_rd, "weight_reader", std::string("weight bus read (w_valid)"), p->wm_rd,
           s.w_rd);
    EXPECT(tb, t, (bool)p->wm_par == (b.w_par_left > 0), "weight_reader", std::string("parameter word read"),
           p->wm_par, b.w_par_left > 0);
    EXPECT(tb, t, (int)p->w_push == pushes, "weight_reader", std::string("weight pad push"), p->w_push, pushes);
    if (!pushes) return;
    int64_t addr = (int64_t)p->wm_addr;
    EXPECT(tb, t, addr == b.w_addr, "weight_reader", std::string("weight memory address"), addr, b.w_addr);
    if (addr < 0 || addr >= tb.mem.w_words) {
        fail(tb, t, "unit weight_reader, signal weight memory address: rtl %" PRId64 " outside the weight memory",
             addr);
        return;
    }
    for (int i = 0; i < P; i++) bits::put(p->wm_data, 8 * i, 8, tb.mem.wmem[addr * tb.mem.wb + i]);
    p->eval();
}

const char *why_name(int w) {
    static const char *n[] = {"issue", "fill", "wait unit", "wait op2", "weight", "ofmap", "psum", "done"};
    return w >= 0 && w < 8 ? n[w] : "?";
}

// Before the edge of cycle t: the PE controller's decision against the C
// controller's (s.why) and, when both issue, its registers against those the
// C controller held before the cycle (tb.nxt); the parameter registers of
// the psum word it names; then the pads' and the weight pad's outputs the
// array reads.
void check_ctrl(Tb &tb, uint64_t t, const void *eng, const enpu_cosim_enpu_state &s) {
    const enpu_cosim_enpu_issue &n = tb.nxt;
    Venpu_top *p = tb.top.get();
    p->eval();
    if ((int)p->pc_why != s.why)
        fail(tb, t, "unit pe_ctrl, signal decision: rtl %d (%s), C %d (%s)", (int)p->pc_why, why_name(p->pc_why),
             s.why, why_name(s.why));
    if (tb.failed) return;
    tb.checks++;
    tb.why[s.why & 7]++;
    bool c_done = false;
    for (int b = 0; b < 2; b++) {
        enpu_cosim_enpu_bank now;
        enpu_cosim_enpu_bank_of(eng, b, &now);
        c_done |= now.done_at == t;
    }
    EXPECT(tb, t, (bool)p->pc_bank_done == c_done, "pe_ctrl", std::string("bank done (the unit's last pad read)"),
           p->pc_bank_done, c_done);
    if (!s.pe_valid) return;
    if (!tb.have_prev || !n.valid) {
        fail(tb, t, "unit pe_ctrl, signal pe_valid: the C model issued without a pending pass");
        return;
    }
    EXPECT(tb, t, (int64_t)p->pc_e == n.e, "pe_ctrl", std::string("ps_addr (entry)"), p->pc_e, n.e);
    EXPECT(tb, t, (int64_t)p->pc_lane == n.lane, "pe_ctrl", std::string("if_ch_addr (lane)"), p->pc_lane, n.lane);
    EXPECT(tb, t, (bool)p->pc_first == n.first, "pe_ctrl", std::string("first pass (ps_outer_en)"), p->pc_first,
           n.first);
    EXPECT(tb, t, (bool)p->pc_final == n.final, "pe_ctrl", std::string("final pass"), p->pc_final, n.final);
    EXPECT(tb, t, (int)p->pc_nrows == n.nrows, "pe_ctrl", std::string("active virtual rows"), p->pc_nrows, n.nrows);
    for (int v = 0; v < n.nrows; v++) {
        int64_t r = (int64_t)bits::get(p->pc_entry, ENPU_AW * v, ENPU_AW);
        EXPECT(tb, t, r == n.entry[v], "pe_ctrl", "if_hw_addr of virtual row " + std::to_string(v), r, n.entry[v]);
    }
    EXPECT(tb, t, (int)p->pc_nval == n.nval, "pe_ctrl", std::string("lanes with a channel"), p->pc_nval, n.nval);
    EXPECT(tb, t, (int64_t)p->pc_wdx == n.wdx, "pe_ctrl", std::string("psum word (parameter registers)"), p->pc_wdx,
           n.wdx);
    EXPECT(tb, t, (bool)p->pc_wpop == n.pops_weight, "pe_ctrl", std::string("weight pad pop"), p->pc_wpop,
           n.pops_weight);
    int32_t zp = 0, lo = 0, hi = 0;
    for (int i = 0; i < P; i++) {
        int32_t bias;
        uint32_t M;
        int S;
        enpu_cosim_enpu_lane(eng, 0, (int64_t)p->pc_wdx, i, &bias, &M, &S, &zp, &lo, &hi);
        bits::put(p->prm_bias, 32 * i, 32, (uint32_t)bias);
        bits::put(p->prm_m, ENPU_MB * i, ENPU_MB, M);
        bits::put(p->prm_s, 6 * i, 6, (uint64_t)S);
    }
    p->prm_zp = (uint8_t)zp, p->prm_lo = (uint8_t)lo, p->prm_hi = (uint8_t)hi;
    p->eval();
    // what the array reads: the pad word of each virtual row, the weight word
    for (int v = 0; v < n.nrows; v++) {
        bool mark = false;
        const int8_t *w = enpu_cosim_enpu_pad(eng, n.entry[v], &mark);
        for (int i = 0; i < P; i++) {
            int8_t r = (int8_t)bits::get(p->pad_word, 8 * (P * v + i), 8);
            EXPECT(tb, t, r == w[i], "ifmap_pad",
                   ("word of row " + std::to_string(v) + " (entry " + std::to_string(n.entry[v]) + "), lane " +
                    std::to_string(i)),
                   r, w[i]);
        }
    }
    if (n.weighted) {
        EXPECT(tb, t, p->w_head_rdy, "weight_pad", std::string("head ready (w_valid)"), p->w_head_rdy, 1);
        uint64_t ready = 0;
        const int8_t *w = enpu_cosim_enpu_wslot(eng, tb.prev.w_head, &ready);
        for (int i = 0; i < P; i++) {
            int8_t r = (int8_t)bits::get(p->w_head, 8 * i, 8);
            EXPECT(tb, t, r == w[i], "weight_pad", "head word (w_och_gcnt " + std::to_string(tb.prev.w_head) +
                                                       "), lane " + std::to_string(i),
                   r, w[i]);
        }
    }
}

// Before the edge of cycle t: the writer's DTCM write against the C writer's
// (its queue's head after the cycle before, written in cycle t when of_valid).
void check_writer(Tb &tb, uint64_t t, const enpu_cosim_enpu_state &s) {
    Venpu_top *p = tb.top.get();
    EXPECT(tb, t, (bool)p->wr_en == s.of_valid, "writer", std::string("DTCM write (of_valid)"), p->wr_en,
           s.of_valid);
    if (!s.of_valid) return;
    tb.writes++;
    const enpu_cosim_enpu_wqe &e = tb.wq_head;
    if (e.dst != 0 || e.len != P) tb.masked++;
    EXPECT(tb, t, (int64_t)p->wr_addr == e.addr, "writer", std::string("write address"), p->wr_addr, e.addr);
    for (int i = 0; i < P; i++) {
        bool be = bits::get(p->wr_be, i, 1), c = i >= e.dst && i < e.dst + e.len;
        EXPECT(tb, t, be == c, "writer", "byte enable of lane " + std::to_string(i), be, c);
        if (!c) continue;
        int8_t r = (int8_t)bits::get(p->wr_data, 8 * i, 8);
        EXPECT(tb, t, r == tb.wq_data[i], "writer",
               "write data (word " + std::to_string(e.addr) + ", lane " + std::to_string(i) + ")", r, tb.wq_data[i]);
    }
}

// After the edge: every psum and requantized value the issue wrote.
void check_issue(Tb &tb, uint64_t t, const void *eng) {
    const enpu_cosim_enpu_issue &n = tb.nxt;
    Venpu_top *p = tb.top.get();
    p->dbg_e = (uint32_t)n.e;
    p->eval();
    for (int v = 0; v < n.nrows; v++) {
        int row = v / n.lg, off = (v % n.lg) * n.L, lanes = n.kind == K_DW ? P : n.L;
        const int8_t *sv = nullptr;
        const int64_t *ps = enpu_cosim_enpu_psum(eng, row, n.e, &sv);
        for (int i = off; i < off + lanes; i++) {
            int64_t r = bits::sext(bits::get(p->dbg_ps, ACC * (P * row + i), ACC), ACC);
            int64_t c = bits::sext((uint64_t)ps[i], ACC); // the RTL's adder is ACC bits wide
            EXPECT(tb, t, r == c, "pe",
                   "psum (row " + std::to_string(row) + ", lane " + std::to_string(i) + ", entry " +
                       std::to_string(n.e) + ")",
                   r, c);
            if (!n.final) continue;
            int8_t q = (int8_t)bits::get(p->dbg_sv, 8 * (P * row + i), 8);
            EXPECT(tb, t, q == sv[i], "requant",
                   "output (row " + std::to_string(row) + ", lane " + std::to_string(i) + ", entry " +
                       std::to_string(n.e) + ")",
                   q, sv[i]);
        }
    }
}

// After the edge: the weight pad's occupancy and head, the entries' ready
// bits, for the next cycle.
void check_state(Tb &tb, uint64_t t, const void *eng, const enpu_cosim_enpu_state &s, const enpu_arch *a) {
    Venpu_top *p = tb.top.get();
    EXPECT(tb, t, (int)p->w_head_idx == s.w_head, "weight_pad", std::string("head (w_och_gcnt)"), p->w_head_idx,
           s.w_head);
    EXPECT(tb, t, (int)p->w_count == s.w_count, "weight_pad", std::string("count"), p->w_count, s.w_count);
    uint64_t ready = 0;
    if (s.w_count) enpu_cosim_enpu_wslot(eng, s.w_head, &ready);
    bool c_rdy = s.w_count > 0 && ready <= t + 1;
    EXPECT(tb, t, (bool)p->w_head_rdy == c_rdy, "weight_pad", std::string("head ready next cycle"), p->w_head_rdy,
           c_rdy);
    for (int d = 0; d < (int)a->psum_depth; d++) {
        bool r = bits::get(p->ps_ready, d, 1);
        bool c = enpu_cosim_enpu_ready(eng, d) <= t + 1;
        EXPECT(tb, t, r == c, "pe_array", "ready of entry " + std::to_string(d) + " next cycle", r, c);
    }
    for (int b = 0; b < 2; b++) {
        enpu_cosim_enpu_bank c;
        enpu_cosim_enpu_bank_of(eng, b, &c);
        bool r = bits::get(p->bk_valid, b, 1), cv = c.loaded && c.valid_at <= t + 1;
        EXPECT(tb, t, r == cv, "ifmap_pad", "bank " + std::to_string(b) + " valid next cycle", r, cv);
        int64_t ru = (int64_t)bits::get(p->bk_unit, ENPU_UW * b, ENPU_UW), cu = c.unit & ((1 << ENPU_UW) - 1);
        if (c.unit >= 0) EXPECT(tb, t, ru == cu, "ifmap_pad", "bank " + std::to_string(b) + " unit", ru, cu);
    }
    enpu_cosim_enpu_issue nx;
    enpu_cosim_enpu_next(eng, &nx);
    EXPECT(tb, t, (bool)p->pc_done == !nx.valid, "pe_ctrl", std::string("every pass issued"), p->pc_done, !nx.valid);
    EXPECT(tb, t, (bool)p->wr_done == s.w_done, "weight_reader", std::string("every weight word pushed"), p->wr_done,
           s.w_done);
    int n = enpu_cosim_enpu_wq(eng, 0, 0, &tb.wq_head);
    EXPECT(tb, t, (int)p->wq_count == n, "writer", std::string("write queue words"), p->wq_count, n);
    tb.wq_n = n;
    if (n) std::memcpy(tb.wq_data, tb.wq_head.data, (size_t)P);
}

struct HookCtx {
    Tb *tb;
    const enpu_arch *a;
};

void hook(void *ctx, uint64_t t, const void *eng) {
    HookCtx *h = (HookCtx *)ctx;
    Tb &tb = *h->tb;
    if (tb.failed) return;
    tb.now = t;
    enpu_cosim_enpu_state s;
    enpu_cosim_enpu_state_of(eng, &s);
    if (s.chain_t0 != tb.chain_t0) chain_start(tb, t, eng, h->a); // a chain's first cycle
    else if (t != tb.last_t + 1) {
        fail(tb, t, "unit pe_ctrl: the C model skipped cycles %" PRIu64 "..%" PRIu64 " of a chain", tb.last_t + 1,
             t - 1);
        return;
    }
    if (tb.failed) return;
    drive_unit(tb);
    drive_load_unit(tb);
    drive_weight_unit(tb);
    check_weights(tb, t, s, h->a);
    if (!tb.failed) check_loader(tb, t, eng, s);
    if (!tb.failed) check_ctrl(tb, t, eng, s);
    if (!tb.failed) check_writer(tb, t, s);
    if (tb.failed) return;
    Venpu_top *p = tb.top.get();
    bool took = p->pc_unit_next, ltook = p->ld_unit_next, wtook = p->wr_unit_next;
    if (s.pe_valid) tb.issues++;
    clock(tb, false);
    if (took) enpu_cosim_enpu_unit_next(eng, &tb.cur);
    if (ltook) enpu_cosim_enpu_unit_next(eng, &tb.lcur);
    if (wtook) enpu_cosim_enpu_unit_next(eng, &tb.wcur);
    if (s.pe_valid) check_issue(tb, t, eng);
    if (!tb.failed) check_state(tb, t, eng, s, h->a);
    tb.cycles++;
    tb.prev = s;
    enpu_cosim_enpu_next(eng, &tb.nxt);
    tb.have_prev = true;
    tb.last_t = t;
}

struct CaseResult {
    bool ok = false, unsupported = false;
    uint64_t cycles = 0, sim_cycles = 0, checks = 0, issues = 0, chains = 0, fail_cycle = 0, writes = 0, masked = 0;
    uint64_t why[8]{};
    std::string msg;
};

// Runs program prog on arch a with input x through the C simulator and the
// RTL side by side; a VCD of cycles [vcd_from, vcd_to] when vcd_path.
CaseResult cosim(const enpu_program *prog, const enpu_arch *a, const enpu_buf *x, const char *vcd_path = nullptr,
                 uint64_t vcd_from = 0, uint64_t vcd_to = 0) {
    CaseResult cr;
    Tb tb;
    tb.open(vcd_path, vcd_from, vcd_to);
    clock(tb, true);
    clock(tb, true);
    enpu_sim_opts o{};
    o.mode = ENPU_SIM_CYCLE;
    o.check = true;
    enpu_err err{};
    enpu_sim *sim = nullptr;
    if (enpu_sim_new(prog, a, &o, &sim, &err)) {
        cr.msg = std::string("simulator: ") + err.msg;
        return cr;
    }
    HookCtx h{&tb, a};
    enpu_cosim_mem_of(sim, &tb.mem);
    enpu_cosim_attach(sim, hook, &h);
    enpu_sim_result res{};
    int rc = enpu_sim_run(sim, x, 1, &res, &err);
    cr.sim_cycles = res.total_cycles;
    if (tb.failed) {
        cr.msg = tb.msg;
        cr.unsupported = tb.unsupported;
        cr.fail_cycle = tb.fail_cycle;
    } else if (rc) {
        cr.msg = std::string("C simulator: ") + err.msg;
    } else if (tb.issues == 0) {
        cr.msg = "the PE array never issued";
    } else {
        cr.ok = true;
    }
    cr.cycles = tb.cycles, cr.checks = tb.checks, cr.issues = tb.issues, cr.chains = tb.chains;
    cr.writes = tb.writes, cr.masked = tb.masked;
    for (int w = 0; w < 8; w++) cr.why[w] = tb.why[w];
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    tb.close();
    return cr;
}

bool structural_match(const enpu_arch *a) {
    const int64_t want[][2] = {{a->pes, ENPU_P},
                               {a->pe_rows, ENPU_ROWS},
                               {a->lane_groups_max, ENPU_LGMAX},
                               {a->acc_bits, ENPU_ACC_W},
                               {a->psum_depth, ENPU_DEPTH},
                               {a->ifmap_pad_depth, ENPU_DIF},
                               {a->weight_pad_depth, ENPU_DW},
                               {a->weight_mem_latency, ENPU_LW},
                               {a->mult_bits, ENPU_MB},
                               {a->pe_pipeline_depth + a->requant_latency, ENPU_LAT}};
    for (auto &w : want)
        if (w[0] != w[1]) return false;
    return true;
}

// The top controller's timing drawn anew (the RTL's structure stays).
enpu_arch vary(sya_rng &r, const enpu_arch &base) {
    enpu_arch a = base;
    a.instr_fetch_cycles = r.rr(1, 4), a.decode_cycles = r.rr(0, 2);
    a.dtcm_read_latency = r.rr(1, 3);
    return a;
}

struct Totals {
    int cases = 0, equal = 0, differ = 0, unsupported = 0;
    uint64_t cycles = 0, checks = 0, issues = 0, writes = 0, masked = 0, why[8]{};
};

void report(Totals &tot, const char *cfg, const std::string &name, const CaseResult &cr, const enpu_program *prog,
            const enpu_arch *a, const enpu_buf *x, const char *vcd_dir, bool verbose) {
    tot.cycles += cr.cycles, tot.checks += cr.checks, tot.issues += cr.issues;
    tot.writes += cr.writes, tot.masked += cr.masked;
    for (int w = 0; w < 8; w++) tot.why[w] += cr.why[w];
    if (cr.unsupported) {
        // not a case of the RTL: said, not counted
        tot.unsupported++;
        std::printf("rtl-enpu %s: %s: not covered: %s\n", cfg, name.c_str(), cr.msg.c_str());
        return;
    }
    tot.cases++;
    if (cr.ok) {
        tot.equal++;
        if (verbose)
            std::printf("rtl-enpu %s: %s: equal, %" PRIu64 " chain cycles (%" PRIu64 " issues, %" PRIu64
                        " chains) of %" PRIu64 "\n",
                        cfg, name.c_str(), cr.cycles, cr.issues, cr.chains, cr.sim_cycles);
        return;
    }
    tot.differ++;
    std::printf("rtl-enpu %s: %s: DIFFER: %s\n", cfg, name.c_str(), cr.msg.c_str());
    tb_vcd_window("rtl-enpu", cfg, vcd_dir, tot.cases, cr.fail_cycle, [&](const char *path, uint64_t from, uint64_t to) {
        cosim(prog, a, x, path, from, to);
    });
}

} // namespace

int main(int argc, char **argv) {
    TbArgs args;
    if (!tb_parse_args(argc, argv, "enpu_tb", &args)) return 2;
    const char *arch_path = args.arch_path, *vcd_dir = args.vcd_dir;
    const int n_random = args.n_random;
    const uint64_t seed = args.seed;
    const bool verbose = args.verbose;
    enpu_err err{};
    enpu_arch base;
    if (enpu_arch_load(arch_path, &base, &err)) {
        std::fprintf(stderr, "enpu_tb: %s\n", err.msg);
        return 2;
    }
    if (!structural_match(&base)) {
        std::fprintf(stderr, "enpu_tb: %s: arch does not match the RTL's parameters (scripts/rtl_params.py)\n",
                     arch_path);
        return 2;
    }
    const char *cfg = base.name;
    Totals tot;
    int bad = tb_each_model(args, &base, "rtl-enpu", [&](const char *name, const enpu_program *prog, const enpu_buf *x) {
        report(tot, cfg, name, cosim(prog, &base, x), prog, &base, x, vcd_dir, true);
    });
    tot.cases += bad, tot.differ += bad;
    // input-channel blocks (docs/offchip.md): each --model again on a weight
    // memory of 8 KiB, where the default model's fc1 runs in blocks whose
    // sums stay in the psum file from one instruction to the next (ps_hold,
    // ps_cont: the first-pass flag pe.v takes), and of 2 KiB, where its
    // conv2 and conv3 run in blocks of one kernel row x one channel word,
    // each reading one word of every pixel (ifmap_wpp / ifmap_word: the
    // loader's address); a configuration the model does not fit that way is
    // said, not counted
    for (int64_t wmem : {8192, 2048}) {
        enpu_arch small = base;
        small.weight_mem_bytes = wmem;
        std::string on = " on weight_mem_bytes " + std::to_string(wmem);
        for (auto &m : args.models) {
            enpu_program prog{};
            enpu_buf x{};
            std::string e;
            if (sya_gen_model(m[0], m[1], m[2], &small, &prog, &x, e)) {
                std::printf("rtl-enpu %s: %s%s: not covered: %s\n", cfg, m[0], on.c_str(), e.c_str());
                tot.unsupported++;
                continue;
            }
            int held = 0, words = 0;
            for (int i = 0; i < prog.n_instr; i++)
                held += prog.instr[i].ps_hold != 0, words += prog.instr[i].ifmap_wpp != 0;
            report(tot, cfg,
                   std::string(m[0]) + on + " (" + std::to_string(held) + " holding, " + std::to_string(words) +
                       " reading some channel words)",
                   cosim(&prog, &small, &x), &prog, &small, &x, vcd_dir, true);
            enpu_buf_free(&x);
            enpu_program_free(&prog);
        }
    }
    sya_rng rng(seed);
    // a layer the compiler refuses on this arch (its weights do not fit a
    // small weight memory) is drawn again, and counted
    int redrawn = 0;
    for (int i = 0; i < n_random; i++) {
        enpu_arch a = vary(rng, base);
        enpu_program prog{};
        enpu_buf x{};
        std::string name, e;
        if (sya_gen_random(rng, &a, &prog, &x, name, e)) {
            if (verbose) std::printf("rtl-enpu %s: random %d: drawn again: %s\n", cfg, i, e.c_str());
            if (++redrawn > n_random) {
                std::printf("rtl-enpu %s: random %d: cannot compile: %s\n", cfg, i, e.c_str());
                tot.cases++, tot.differ++;
                continue;
            }
            i--;
            continue;
        }
        report(tot, cfg, "random " + std::to_string(i) + " (" + name + ")", cosim(&prog, &a, &x), &prog, &a, &x,
               vcd_dir, verbose);
        enpu_buf_free(&x);
        enpu_program_free(&prog);
    }
    // how often each decision and each kind of write was compared (before
    // the summary, which scripts/rtl.sh reads as the last line)
    std::printf("rtl-enpu %s: PE controller decisions:", cfg);
    for (int w = 0; w < 8; w++) std::printf(" %s %" PRIu64 "%s", why_name(w), tot.why[w], w < 7 ? "," : "");
    std::printf("; %" PRIu64 " DTCM writes, %" PRIu64 " of them byte-masked\n", tot.writes, tot.masked);
    std::printf("rtl-enpu %s: %d cases (%d random), %d equal, %d differ, %d not covered, %" PRIu64
                " cycles, %" PRIu64 " issues, %" PRIu64 " comparisons, %d random layers drawn again\n",
                cfg, tot.cases, n_random, tot.equal, tot.differ, tot.unsupported, tot.cycles, tot.issues,
                tot.checks, redrawn);
    return tot.differ ? 1 : 0;
}
