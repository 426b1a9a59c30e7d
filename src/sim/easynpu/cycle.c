/* The EasyNPU cycle engine's main loop: the top controller's fetch/decode
 * timing (docs/microarch.md §11.2), chain execution one clock at a time
 * (every unit stepped once per cycle in the order of core.h), cycle
 * attribution and the observation taps (trace spans, signal samples). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/easynpu/core.h"
#include "sim/engine.h"

/* A chain that makes no progress for this many cycles is a simulator bug. */
#define DEADLOCK_CYCLES 1000000u

typedef struct cyc_state {
    core k;
    sim_chain chain;
} cyc_state;

/* ---- attribution ------------------------------------------------------------- */

static const char *bus_label(int l) {
    switch (l) {
    case BUS_WRITE: return "ofmap write";
    case BUS_OP2: return "op2 read";
    case BUS_LOAD: return "ifmap read";
    case BUS_PARAM: return "parameters";
    case BUS_WEIGHT: return "weights";
    default: return "idle";
    }
}

static void emit_run(core *k, int track, int label, uint64_t start, uint64_t end) {
    if (!k->trace || label < 0 || end <= start) return;
    if (track != TRK_PE && label == BUS_IDLE) return;
    const char *name = track == TRK_PE ? enpu_activity_name((enpu_activity)label) : bus_label(label);
    sim_obs_span(k->sim->obs, track, name, start, end, NULL, NULL);
}

void sim_core_track(core *k, int track, int label) {
    if (!k->trace) return;
    trk_run *r = &k->trk[track];
    if (r->label == label) return;
    emit_run(k, track, r->label, r->start, k->t);
    r->label = label;
    r->start = k->t;
}

static void row_touch(enpu_layer_stats *st, uint64_t start, uint64_t n) {
    if (st->start_cycle == NEVER || start < st->start_cycle) st->start_cycle = start;
    if (start + n > st->end_cycle) st->end_cycle = start + n;
}

void sim_core_account(core *k, int row, enpu_activity a, uint64_t n, uint64_t start) {
    enpu_layer_stats *st = &k->sim->rows[row];
    st->activity[a] += n;
    st->cycles += n;
    row_touch(st, start, n);
    if (!k->trace) return;
    if (n == 1 && start == k->t) sim_core_track(k, TRK_PE, (int)a);
    else emit_run(k, TRK_PE, (int)a, start, start + n);
}

static void account_ctrl(enpu_sim *sim, int row, uint64_t start, uint64_t n, const char *what) {
    if (n == 0) return;
    enpu_layer_stats *st = &sim->rows[row];
    st->activity[ENPU_ACT_CONTROLLER] += n;
    st->cycles += n;
    row_touch(st, start, n);
    sim_obs_span(sim->obs, TRK_TOP, what, start, start + n, "layer", sim->rows[row].name);
}

/* ---- observation: tracks and the control signals (docs/microarch.md §1) ---- */

static const char *const sig_names[] = {
    "pe_ps_addr",   "if_hw_addr",     "if_ch_addr",     "w_och_gcnt",    "fuse_stage",
    "pe_valid",     "pe_ps_outer_en", "pe_ps_back_en",  "pe_maxpool_en", "pe_byp_mul_en",
    "if_bus_valid", "if_bus_ready",   "of_bus_valid",   "of_bus_ready",  "w_bus_valid",
    "w_bus_ready",  "skip_bus_valid", "skip_bus_ready", "op2_valid",     "op2_ready"};
#define N_SIG ((int)(sizeof sig_names / sizeof sig_names[0]))

static int bits_for(int64_t n) { /* bits to index 0..n-1 */
    int b = 1;
    while (b < 62 && ((int64_t)1 << b) < n) b++;
    return b;
}

static void sample(sim_obs *o, uint64_t t, const sim_signals *s) {
    if (!o || !o->vcd) return;
    const int64_t v[N_SIG] = {
        s->ps_addr,     s->if_hw_addr, s->if_ch_addr, s->w_och_gcnt, s->stage,    s->pe_valid,
        s->ps_outer_en, s->ps_back_en, s->maxpool_en, s->byp_mul_en, s->if_valid, s->if_ready,
        s->of_valid,    s->of_ready,   s->w_valid,    s->w_ready,    s->sk_valid, s->sk_ready,
        s->op2_valid,   s->op2_ready};
    sim_obs_sample(o, t, v);
}

static void k_observe_start(core *k, enpu_sim *sim) {
    const enpu_arch *a = &sim->arch;
    k->trace = sim->obs && sim->obs->trace;
    if (!sim->obs) return;
    static const char *const tracks[] = {NULL,        "top controller: decode", "PE array",
                                         "scheduler: ifmap loads", "DTCM bus", "weight bus",
                                         "skip port", "layers",  "ITCM fetch"};
    for (int i = 1; i < 9; i++) sim_obs_track(sim->obs, i, tracks[i]);
    int w[N_SIG];
    for (int i = 0; i < N_SIG; i++) w[i] = 1;
    w[0] = bits_for(a->psum_depth);
    w[1] = bits_for(a->ifmap_pad_depth);
    w[2] = bits_for(a->ifmap_pads);
    w[3] = bits_for(a->weight_pad_depth);
    w[4] = 4;
    sim_obs_signals(sim->obs, "easynpu", N_SIG, sig_names, w);
}

/* ---- creation ---------------------------------------------------------------------- */

static void cyc_destroy(void *state) {
    cyc_state *es = state;
    if (!es) return;
    core *k = &es->k;
    sim_ifpad_free(&k->pad);
    sim_wfifo_free(&k->wpad);
    sim_wfifo_free(&k->op2);
    sim_pe_free(&k->pe);
    sim_sched_free(k);
    free(k->pc.hw_base);
    free(es);
}

static int cyc_create(enpu_sim *sim, void **out, enpu_err *err) {
    cyc_state *es = calloc(1, sizeof *es);
    if (!es) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    core *k = &es->k;
    const enpu_arch *a = &sim->arch;
    k->sim = sim;
    k->a = a;
    k->mem = &sim->mem;
    k->P = (int)a->pes;
    k->D = a->pe_pipeline_depth;
    k->Rq = a->requant_latency;
    k->Ld = a->dtcm_read_latency;
    k->Lw = a->weight_mem_latency;
    k->Dw = a->weight_pad_depth;
    int op2_depth = (int)(a->weight_pad_depth > a->pe_rows ? a->weight_pad_depth : a->pe_rows);
    int rc;
    if ((rc = sim_ifpad_init(&k->pad, a, err)) ||
        (rc = sim_wfifo_init(&k->wpad, (int)a->weight_pad_depth, k->P, err)) ||
        (rc = sim_wfifo_init(&k->op2, op2_depth, k->P, err)) ||
        (rc = sim_pe_init(&k->pe, a, sim->dec.max_lanes, err)) || (rc = sim_sched_init(k, err))) {
        cyc_destroy(es);
        return rc;
    }
    k->pc.hw_base = calloc((size_t)(a->psum_depth * a->pe_rows), sizeof(int64_t));
    if (!k->pc.hw_base) {
        cyc_destroy(es);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    }
    *out = es;
    return 0;
}

/* ---- one chain ------------------------------------------------------------------------- */

static uint64_t max_cycles(const enpu_sim *sim) {
    return sim->opts.max_cycles ? sim->opts.max_cycles : ((uint64_t)1 << 40);
}

static int exec_chain(cyc_state *es, enpu_sim *sim, uint64_t t0, uint64_t *t_end,
                      enpu_err *err) {
    core *k = &es->k;
    k->ch = &es->chain;
    k->t0 = k->t = t0;
    sim_ifpad_reset(&k->pad, k->ch->dbuf);
    for (int i = 0; i < 8; i++) k->trk[i] = (trk_run){-1, t0};
    memset(&k->sig, 0, sizeof k->sig);
    sim_sched_start(k);
    sim_pectl_start(k);
    k->stall_guard = t0;
    const uint64_t limit = max_cycles(sim);
    for (;;) {
        sim_sched_writers(k);
        sim_sched_op2(k);
        sim_sched_loader(k);
        sim_sched_weights(k);
        int rc = sim_pectl_step(k, err);
        if (rc) return rc;
        if (k->trace) {
            sim_core_track(k, TRK_BUS, k->main_use);
            sim_core_track(k, TRK_SKIP, k->skip_use);
        }
        if (sim->obs) sample(sim->obs, k->t, &k->sig);
        if (sim->cycle_hook) sim->cycle_hook(sim->hook_ctx, k->t, &k->sig);
        if (k->pe_done && sim_sched_queues_empty(k)) break;
        if (k->t - k->stall_guard > DEADLOCK_CYCLES)
            return enpu_fail(err, ENPU_E_INVALID,
                             "simulator internal error: no progress for %u cycles at cycle %" PRIu64
                             " in instruction %d (a bug in src/sim)",
                             DEADLOCK_CYCLES, k->t, k->cur_row);
        if (++k->t >= limit)
            return enpu_fail(err, ENPU_E_LIMIT,
                             "simulation stopped at cycle %" PRIu64 " (max_cycles) in instruction %d",
                             k->t, k->cur_row);
    }
    sim_pectl_resolve_wait(k);
    k->t++;
    for (int i = 0; i < 8; i++) {
        if (k->trk[i].label >= 0) emit_run(k, i, k->trk[i].label, k->trk[i].start, k->t);
        k->trk[i].label = -1;
    }
    *t_end = k->t - 1;
    return 0;
}

/* ---- the program: top controller ----------------------------------------------------------- */

static int cyc_run(cyc_state *es, enpu_sim *sim, enpu_err *err) {
    const enpu_program *p = sim->prog;
    const enpu_arch *a = &sim->arch;
    const uint64_t F = (uint64_t)a->instr_fetch_cycles, Dc = (uint64_t)a->decode_cycles;
    const uint64_t itcm_words = (uint64_t)((ENPU_INSTR_BITS + a->bus_bits - 1) / a->bus_bits);
    static const sim_signals idle;
    uint64_t now = 0, fetch_start = 0, ready = F;
    sim->rows[0].reads[ENPU_MEM_ITCM] += itcm_words;
    k_observe_start(&es->k, sim);
    sample(sim->obs, 0, &idle);
    int pc = 0;
    for (;;) {
        int64_t op = p->instr[pc].opcode;
        enpu_opclass cls = enpu_opcode_class(op);
        int n = cls == ENPU_CLASS_CTRL ? 1 : sim_chain_len(p, pc);
        for (int m = 0; m < n; m++) {
            int i = pc + m;
            uint64_t s = now > ready ? now : ready;
            sim_obs_span(sim->obs, TRK_FETCH, "fetch", fetch_start, ready, "layer",
                         sim->rows[i].name);
            account_ctrl(sim, i, now, s - now, "wait for fetch");
            account_ctrl(sim, i, s, Dc, "decode");
            if (i + 1 < p->n_instr) {
                fetch_start = s;
                ready = s + F;
                sim->rows[i + 1].reads[ENPU_MEM_ITCM] += itcm_words;
            }
            now = s + Dc;
            if (now >= max_cycles(sim))
                return enpu_fail(err, ENPU_E_LIMIT, "simulation stopped at cycle %" PRIu64
                                 " (max_cycles)", now);
        }
        if (op == ENPU_OPC_END) break;
        if (op == ENPU_OPC_SYNC) {
            account_ctrl(sim, pc, now, (uint64_t)a->host_sync_cycles, "host sync");
            now += (uint64_t)a->host_sync_cycles;
            sim->cycle = now;
            int rc = sim_host_op(sim, pc, err);
            if (rc) return rc;
            pc++;
            continue;
        }
        int rc = sim_decode_chain(&sim->dec, p, &sim->mem, pc, &es->chain, err);
        if (rc) return rc;
        sim_rows_of_chain(sim, &es->chain);
        sim_chain_begin(sim, &es->chain);
        uint64_t t_end = now;
        if ((rc = exec_chain(es, sim, now, &t_end, err))) return rc;
        now = t_end + 1;
        sim->cycle = now;
        sample(sim->obs, now, &idle);
        if (sim->obs) {
            char nm[300];
            snprintf(nm, sizeof nm, "%s%s", sim->rows[pc].name, n > 1 ? " (fused chain)" : "");
            sim_obs_span(sim->obs, TRK_LAYERS, nm, sim->rows[pc].start_cycle, now, "op",
                           sim->rows[pc].op);
        }
        if ((rc = sim_chain_done(sim, &es->chain, err))) return rc;
        pc += n;
    }
    sim->cycle = now;
    return 0;
}

static int cyc_run_entry(void *es, enpu_sim *sim, enpu_err *err) {
    return cyc_run(es, sim, err);
}

const enpu_sim_engine sim_engine_easynpu_cycle = {
    "easynpu", ENPU_ENGINE_EASYNPU, ENPU_SIM_CYCLE, cyc_create, cyc_destroy, cyc_run_entry,
};
