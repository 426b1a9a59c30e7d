// Co-simulation of EasyNPU's PE array RTL (rtl/easynpu/enpu_top.v) against
// the C simulator's EasyNPU engine (src/sim/easynpu/), cycle by cycle
// (docs/rtl.md).
//
// The C simulator runs a compiled program in cycle mode with its own
// functional replay check; after every cycle of a chain its hook
// (include/easynpu/cosim.h) hands this testbench the engine's core.  The
// testbench plays what is outside the RTL: the loader's pad write and the
// weight reader's push of that cycle (seen as the change of their cursors),
// the PE controller's issue (the registers it held before the cycle:
// enpu_cosim_enpu_next, read after the previous cycle) and the parameter
// registers.  It clocks the RTL once and compares each unit: the pad words
// the PE array reads (ifmap_pad), the weight pad's head, its handshake and
// occupancy (weight_pad), every psum written and every requantized output
// (pe, requant), the entries' ready bits (pe_array).  The first difference
// stops the case with the cycle, the unit, the signal and both values; the
// case is then run again to dump a VCD window around that cycle.
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
    uint64_t cycles = 0, issues = 0, chains = 0;
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
    p->pad_we = 0, p->w_push = 0, p->w_pop = 0, p->iss = 0;
}

// A new chain: the C model resets its weight pad, loader and entries'
// ready times at the chain's start (sim_sched_start, sim_pectl_start); the
// RTL takes a reset edge (the top controller's chain start).
void chain_start(Tb &tb, const void *eng) {
    clock(tb, true);
    tb.chains++;
    tb.have_prev = false;
    tb.prev = enpu_cosim_enpu_state{};
    tb.prev.ld_unit = 0, tb.prev.ld_j = 0, tb.prev.ld_busy = false;
    tb.prev.w_head = 0, tb.prev.w_count = 0;
    enpu_cosim_enpu_state s;
    enpu_cosim_enpu_state_of(eng, &s);
    tb.prev.bank_size = s.bank_size, tb.prev.ld_bank = 0;
    tb.chain_t0 = s.chain_t0;
}

// The loader's write of cycle t: its cursor moved.
void drive_loader(Tb &tb, const void *eng, const enpu_cosim_enpu_state &s) {
    const enpu_cosim_enpu_state &b = tb.prev;
    bool wrote = b.ld_busy ? (s.ld_unit != b.ld_unit || s.ld_j != b.ld_j)
                           : (s.ld_unit != b.ld_unit || (s.ld_busy && s.ld_j > 0));
    if (!wrote || b.ld_done) return;
    int64_t entry = (int64_t)b.ld_bank * b.bank_size + (b.ld_busy ? b.ld_j : 0);
    bool mark = false;
    const int8_t *w = enpu_cosim_enpu_pad(eng, entry, &mark);
    Venpu_top *p = tb.top.get();
    p->pad_we = 1;
    p->pad_waddr = (uint32_t)entry;
    for (int i = 0; i < P; i++) bits::put(p->pad_wdata, 8 * i, 8, (uint8_t)w[i]);
    p->pad_wmark = mark;
}

// The weight reader's push of cycle t: the occupancy grew by more than the
// pops.
void drive_weights(Tb &tb, uint64_t t, const void *eng, const enpu_cosim_enpu_state &s, const enpu_arch *a) {
    const enpu_cosim_enpu_state &b = tb.prev;
    const int dw = (int)a->weight_pad_depth;
    int pops = ((s.w_head - b.w_head) % dw + dw) % dw;
    int pushes = s.w_count - b.w_count + pops;
    if (pushes < 0 || pushes > 1) {
        fail(tb, t, "unit weight_pad, signal count: the C model pushed %d words in one cycle", pushes);
        return;
    }
    Venpu_top *p = tb.top.get();
    if (pushes) {
        uint64_t ready = 0;
        const int8_t *w = enpu_cosim_enpu_wslot(eng, (b.w_head + b.w_count) % dw, &ready);
        p->w_push = 1;
        for (int i = 0; i < P; i++) bits::put(p->w_pdata, 8 * i, 8, (uint8_t)w[i]);
    }
}

int log2i(int v) {
    int l = 0;
    while ((1 << l) < v) l++;
    return l;
}

// The PE controller's issue of cycle t, with the registers it held before
// it (tb.nxt); the pads' and the weight pad's outputs it reads are checked
// before the edge.
void drive_issue(Tb &tb, uint64_t t, const void *eng, const enpu_arch *a) {
    const enpu_cosim_enpu_issue &n = tb.nxt;
    Venpu_top *p = tb.top.get();
    if (!tb.have_prev || !n.valid) {
        fail(tb, t, "unit pe_ctrl, signal pe_valid: the C model issued without a pending pass");
        return;
    }
    if (n.stage != 0 || (n.kind != K_CONV && n.kind != K_DW)) {
        // fused stages, max pool, reshape, channel-wise heads: not in the RTL yet
        tb.unsupported = true;
        fail(tb, t, "unit pe_ctrl: stage %d of kind %d is not in the RTL", n.stage, n.kind);
        return;
    }
    p->iss = 1;
    p->iss_dw = n.kind == K_DW;
    p->iss_first = n.first, p->iss_final = n.final;
    p->iss_e = (uint32_t)n.e;
    p->iss_lane = (uint32_t)n.lane;
    p->iss_lgsel = (uint32_t)log2i(n.lg);
    p->iss_nrows = (uint32_t)n.nrows;
    p->iss_nval = (uint32_t)n.nval;
    for (int v = 0; v < NV; v++) bits::put(p->iss_entry, ENPU_AW * v, ENPU_AW, v < n.nrows ? (uint64_t)n.entry[v] : 0);
    int32_t zp = 0, lo = 0, hi = 0;
    for (int i = 0; i < P; i++) {
        int32_t bias;
        uint32_t M;
        int S;
        enpu_cosim_enpu_lane(eng, 0, n.wdx, i, &bias, &M, &S, &zp, &lo, &hi);
        bits::put(p->prm_bias, 32 * i, 32, (uint32_t)bias);
        bits::put(p->prm_m, ENPU_MB * i, ENPU_MB, M);
        bits::put(p->prm_s, 6 * i, 6, (uint64_t)S);
    }
    p->prm_zp = (uint8_t)zp, p->prm_lo = (uint8_t)lo, p->prm_hi = (uint8_t)hi;
    p->w_pop = n.pops_weight;
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
    (void)a;
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
    if (s.chain_t0 != tb.chain_t0) chain_start(tb, eng); // a chain's first cycle
    else if (t != tb.last_t + 1) {
        fail(tb, t, "unit pe_ctrl: the C model skipped cycles %" PRIu64 "..%" PRIu64 " of a chain", tb.last_t + 1,
             t - 1);
        return;
    }
    drive_loader(tb, eng, s);
    drive_weights(tb, t, eng, s, h->a);
    if (!tb.failed && s.pe_valid) {
        drive_issue(tb, t, eng, h->a);
        tb.issues++;
    }
    if (tb.failed) return;
    clock(tb, false);
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
    uint64_t cycles = 0, sim_cycles = 0, checks = 0, issues = 0, chains = 0, fail_cycle = 0;
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
    uint64_t cycles = 0, checks = 0, issues = 0;
};

void report(Totals &tot, const char *cfg, const std::string &name, const CaseResult &cr, const enpu_program *prog,
            const enpu_arch *a, const enpu_buf *x, const char *vcd_dir, bool verbose) {
    tot.cycles += cr.cycles, tot.checks += cr.checks, tot.issues += cr.issues;
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
    // ps_cont: the first-pass flag pe.v takes); a configuration the model
    // does not fit that way is said, not counted
    enpu_arch small = base;
    small.weight_mem_bytes = 8192;
    for (auto &m : args.models) {
        enpu_program prog{};
        enpu_buf x{};
        std::string e;
        if (sya_gen_model(m[0], m[1], m[2], &small, &prog, &x, e)) {
            std::printf("rtl-enpu %s: %s on weight_mem_bytes 8192: not covered: %s\n", cfg, m[0], e.c_str());
            tot.unsupported++;
            continue;
        }
        int held = 0;
        for (int i = 0; i < prog.n_instr; i++) held += prog.instr[i].ps_hold != 0;
        report(tot, cfg, std::string(m[0]) + " on weight_mem_bytes 8192 (" + std::to_string(held) + " holding)",
               cosim(&prog, &small, &x), &prog, &small, &x, vcd_dir, true);
        enpu_buf_free(&x);
        enpu_program_free(&prog);
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
    std::printf("rtl-enpu %s: %d cases (%d random), %d equal, %d differ, %d not covered, %" PRIu64
                " cycles, %" PRIu64 " issues, %" PRIu64 " comparisons, %d random layers drawn again\n",
                cfg, tot.cases, n_random, tot.equal, tot.differ, tot.unsupported, tot.cycles, tot.issues,
                tot.checks, redrawn);
    return tot.differ ? 1 : 0;
}
