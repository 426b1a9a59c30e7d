/* The systolic engine's cycle mode: the clock loop over its units (sya.h).
 * Each cycle: the controller decides (ccu.c), the SRAMs are read for the
 * units entering L cycles later (glb.c), the array steps and its MUXes
 * hand results to the requantizer (pe_array.c), then the re-shaping unit
 * writes what arrives (sync_shape.c): reads see the writes of earlier
 * cycles only.  Cycles in which nothing but a countdown
 * runs (a host op, an empty array) are skipped in one step.  Unless
 * opts.per_cycle (or a cycle hook) asks for this reference path, fastfwd.c
 * replaces the SRAM reads, the array and the re-shaping unit by whole units
 * and advances the controller's quiet stretches in one go (docs/systolic.md
 * "Fast-forward"): the same run, every counter and record equal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/observe.h"
#include "sim/systolic/sya.h"

static void sya_free(void *st) {
    sya_engine *e = st;
    if (!e) return;
    if (e->lay && e->sim)
        for (int i = 0; i < e->sim->prog->n_instr; i++) sya_layer_free(&e->lay[i]);
    free(e->lay);
    sya_board_free(&e->board);
    free(e->pe), free(e->edge_a), free(e->edge_w), free(e->mux_pend), free(e->mux_has);
    free(e->pipe), free(e->pipe_n);
    sya_ff_free(e);
    if (e->jobs)
        for (int i = 0; i < e->njobs_cap; i++) free(e->jobs[i].buf);
    free(e->jobs);
    free(e);
}

int sya_decode_all(sya_engine *e, enpu_err *err) {
    const enpu_program *p = e->sim->prog;
    for (int i = 0; i < p->n_instr; i++) {
        if (enpu_opcode_class(p->instr[i].opcode) != ENPU_CLASS_SYA) continue;
        sya_layer_free(&e->lay[i]);
        int rc = sya_decode_layer(e->sim, &e->sim->mem, i, &e->lay[i], err);
        if (rc) return rc;
    }
    return 0;
}

static int sya_create(enpu_sim *sim, void **out, enpu_err *err) {
    const enpu_arch *a = &sim->arch;
    sya_engine *e = calloc(1, sizeof *e);
    if (!e) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    e->sim = sim, e->a = &sim->arch;
    e->NR = (int)a->sya_rows, e->NC = (int)a->sya_cols;
    e->BR = (int)a->sya_bank_rows, e->BC = (int)(a->sya_banks / a->sya_bank_rows);
    e->R = e->NR * e->BR, e->C = e->NC * e->BC;
    e->wb = (int)enpu_arch_word_bytes(a);
    e->La = (int)a->dtcm_read_latency, e->Lw = (int)a->weight_mem_latency;
    e->L = e->La > e->Lw ? e->La : e->Lw;
    e->rq = (int)a->requant_latency;
    e->acc_lo = -((int64_t)1 << (a->sya_acc_bits - 1));
    e->acc_hi = ((int64_t)1 << (a->sya_acc_bits - 1)) - 1;
    size_t RC = (size_t)e->R * (size_t)e->C, RB = (size_t)e->R * (size_t)e->BC;
    e->lay = calloc((size_t)sim->prog->n_instr, sizeof *e->lay);
    e->pe = calloc(RC, sizeof *e->pe);
    e->edge_a = calloc((size_t)(e->La + 1) * (size_t)e->R, sizeof *e->edge_a);
    e->edge_w = calloc((size_t)(e->Lw + 1) * (size_t)e->C, sizeof *e->edge_w);
    e->mux_pend = calloc(RB, sizeof *e->mux_pend);
    e->mux_has = calloc(RB, sizeof *e->mux_has);
    e->pipe = calloc((size_t)(e->rq + 1) * RB, sizeof *e->pipe);
    e->pipe_n = calloc((size_t)(e->rq + 1), sizeof *e->pipe_n);
    /* a unit stays in flight from its issue to its last write: at most
     * L + K + rows + columns + rq cycles, and one is issued per K >= 1 cycles */
    e->njobs_cap = e->L + e->R + e->C + e->rq + 8;
    e->jobs = calloc((size_t)e->njobs_cap, sizeof *e->jobs);
    int rc = 0;
    if (!e->lay || !e->pe || !e->edge_a || !e->edge_w || !e->mux_pend || !e->mux_has || !e->pipe ||
        !e->pipe_n || !e->jobs)
        rc = enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the systolic array");
    for (int i = 0; i < e->njobs_cap && !rc; i++)
        if (!(e->jobs[i].buf = calloc((size_t)e->R * (size_t)e->wb, 1)))
            rc = enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the systolic array");
    if (!rc) rc = sya_board_init(&e->board, sim->mem.main_words, err);
    /* the parameter blocks, checked now so that a bad program is refused
     * before it runs */
    if (!rc) {
        sim_mem_reset(&sim->mem, sim->prog);
        rc = sya_decode_all(e, err);
    }
    if (rc) {
        sya_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

static void sya_reset(sya_engine *e) {
    size_t RC = (size_t)e->R * (size_t)e->C, RB = (size_t)e->R * (size_t)e->BC;
    for (size_t i = 0; i < RC; i++) e->pe[i].a.seq = e->pe[i].w.seq = -1, e->pe[i].acc = 0;
    for (int i = 0; i < (e->La + 1) * e->R; i++) e->edge_a[i].seq = -1;
    for (int i = 0; i < (e->Lw + 1) * e->C; i++) e->edge_w[i].seq = -1;
    memset(e->mux_has, 0, RB * sizeof *e->mux_has);
    memset(e->pipe_n, 0, (size_t)(e->rq + 1) * sizeof *e->pipe_n);
    e->last_inject = -(int64_t)(e->R + e->C) - 2;
    e->tally = (sya_tally){-1, 0, 0, 0, 0};
    e->jobs_head = e->jobs_n = 0;
    e->next_seq = 0;
    sya_board_reset(&e->board);
    const enpu_program *p = e->sim->prog;
    for (int i = 0; i < p->n_instr; i++) {
        sya_layer *L = &e->lay[i];
        L->sched_last = -1, L->units_issued = 0, L->first_issue = 0;
        L->started = L->complete = false;
    }
    e->state = SYA_S_FETCH;
    e->pc = 0;
    e->unit = 0;
    e->cnt = e->a->instr_fetch_cycles + e->a->decode_cycles;
    e->mux_free = 0;
    e->last_instr = -1;
    e->state_start = 0;
    memset(e->sig, 0, sizeof e->sig);
}

static void observe_init(sya_engine *e) {
    sim_obs *o = e->sim->obs;
    if (!o) return;
    sim_obs_track(o, SYA_TRK_CCU, "controller (CCU)");
    sim_obs_track(o, SYA_TRK_LAYERS, "layers (first unit to last write)");
    sim_obs_track(o, SYA_TRK_STALL, "host ops");
    static const char *const names[SIG_COUNT] = {"ccu_state", "pc", "unit", "cfg_vld", "act_vld",
                                                 "wgt_vld", "mux_out", "ofm_words", "units_in_flight",
                                                 "stall"};
    static const int widths[SIG_COUNT] = {3, 20, 24, 1, 1, 1, 12, 8, 10, 2};
    sim_obs_signals(o, "systolic", SIG_COUNT, names, widths);
}

/* After the cycle before t: nothing in flight and the controller counting
 * down, the cycles but the countdown's last are attributed at once (both
 * paths skip here alike, so that they also stop alike at max_cycles). */
static void idle_skip(sya_engine *e, int64_t *tp) {
    enpu_sim *sim = e->sim;
    int64_t t = *tp;
    if (e->jobs_n == 0 && (e->state == SYA_S_FETCH || e->state == SYA_S_CFG || e->state == SYA_S_HOST) && e->cnt > 1 &&
        !sim->step_every_cycle && !sim->obs && !sim->cycle_hook && t > e->last_inject + e->R + e->C + 1) {
        int64_t n = e->cnt - 1;
        enpu_layer_stats *row = &sim->rows[e->pc];
        if (row->cycles == 0) row->start_cycle = (uint64_t)t;
        /* a host op's countdown ends with the host CPU's host_cnt cycles */
        int64_t host = 0;
        if (e->state == SYA_S_HOST) {
            int64_t ctl = e->cnt - e->host_cnt;
            host = n - (ctl < 0 ? 0 : ctl > n ? n : ctl);
        }
        row->activity[ENPU_ACT_CONTROLLER] += (uint64_t)(n - host);
        row->activity[ENPU_ACT_HOST] += (uint64_t)host;
        row->cycles += (uint64_t)n;
        e->cnt -= n;
        *tp = t + n;
    }
}

/* White-box tests (sim_internal.h sim_fault): one count of one instruction
 * off by delta, as a miscounting unit would leave it, so that a test can
 * show that the cost model's comparison catches it.  Never set outside
 * tests. */
static void inject_fault(enpu_sim *sim) {
    const sim_fault *f = &sim->fault;
    if (f->kind == SIM_FAULT_NONE || f->instr < 0 || f->instr >= sim->prog->n_instr) return;
    enpu_layer_stats *row = &sim->rows[f->instr];
    uint64_t d = (uint64_t)f->delta;
    switch (f->kind) {
    case SIM_FAULT_READS: row->reads[f->index] += d; break;
    case SIM_FAULT_WRITES: row->writes[f->index] += d; break;
    case SIM_FAULT_UOPS: row->uops[f->index] += d; break;
    default: row->activity[f->index] += d, row->activity[ENPU_ACT_CONTROLLER] -= d; break;
    }
}

/* The longest wait of the engine's own with no progress: a unit's reads
 * through the SRAMs (L), its K steps and its skew through the array (rows +
 * columns) and the requantizer (rq) before its first word is written, and
 * a configuration handshake. */
static uint64_t pipeline(const sya_engine *e) {
    int64_t K = 0;
    const enpu_program *p = e->sim->prog;
    for (int i = 0; i < p->n_instr; i++)
        if (enpu_opcode_class(p->instr[i].opcode) == ENPU_CLASS_SYA && e->lay[i].s.K > K) K = e->lay[i].s.K;
    return (uint64_t)(e->L + K + e->R + e->C + e->rq + e->a->sya_cfg_cycles);
}

int sya_wd_fail(const sya_engine *e, int64_t t, enpu_err *err) {
    static const char *const state[] = {"fetch", "configure", "wait", "stream", "tail", "drain", "host", "done"};
    char busy[256] = "", what[96];
    snprintf(what, sizeof what, "controller (%s)", state[e->state]);
    sim_wd_busy(busy, sizeof busy, what);
    if (e->jobs_n) {
        snprintf(what, sizeof what, "array (%d units in flight)", e->jobs_n);
        sim_wd_busy(busy, sizeof busy, what);
    }
    int instr = e->jobs_n ? e->jobs[e->jobs_head].instr : e->pc;
    return sim_wd_fail(e->sim, &e->wd, (uint64_t)t, instr, busy, err);
}

static int sya_run(void *st, enpu_sim *sim, enpu_err *err) {
    sya_engine *e = st;
    e->err = err;
    sya_reset(e);
    /* the check's reference starts from the memories as the host left them */
    if (sim->have_shadow) sim_mem_copy_fmaps(&sim->shadow, &sim->mem, false);
    observe_init(e);
    sim->ff_cycles = 0;
    sim_wd_start(&e->wd, sim, pipeline(e));
    bool ff = false;
    int rc = sya_ff_begin(e, &ff);
    if (rc) return rc;
    const uint64_t max = sim->opts.max_cycles ? sim->opts.max_cycles : (uint64_t)1 << 40;
    int64_t t = 0;
    for (;;) {
        if ((uint64_t)t >= max) {
            /* the counts of the units in flight as the per-cycle path has them */
            if (ff) sya_ff_settle(e, t, false, 0);
            return enpu_fail(err, ENPU_E_LIMIT, "simulation stopped at the cycle limit of %llu",
                             (unsigned long long)max);
        }
        if (ff) {
            int64_t n = 0;
            rc = sya_ff_stretch(e, t, (int64_t)max, &n);
            sim->ff_cycles += (uint64_t)n;
            if (rc) return rc;
            if (n) {
                t += n;
                if (sim_wd_expired(&e->wd, (uint64_t)t)) return sya_wd_fail(e, t, err);
                idle_skip(e, &t);
                continue;
            }
        }
        e->t = t;
        e->mux_out = e->ofm_words = 0;
        const int s0 = e->state, pc0 = e->pc;
        if ((rc = sya_ccu_step(e, t))) {
            if (ff) sya_ff_settle(e, t, false, 0);
            return rc;
        }
        if (sya_ccu_done(e)) break;
        if (ff) {
            if ((rc = sya_ff_cycle(e, t))) return rc;
        } else {
            sya_glb_step(e, t);
            if ((rc = sya_array_step(e, t))) return rc;
            if ((rc = sya_shape_step(e, t))) return rc;
        }
        /* a new instruction is progress even where the state reads the same:
         * with decode_cycles 0 one host op hands over to the next within a
         * cycle (HOST -> FETCH -> HOST) */
        if (e->ofm_words || e->state != s0 || e->pc != pc0 || e->state == SYA_S_STREAM)
            sim_wd_progress(&e->wd, (uint64_t)t);
        else if (sim_wd_expired(&e->wd, (uint64_t)t)) return sya_wd_fail(e, t, err);
        if (sim->obs) {
            e->sig[SIG_STATE] = e->state, e->sig[SIG_PC] = e->pc, e->sig[SIG_UNIT] = e->unit;
            e->sig[SIG_MUX_OUT] = e->mux_out, e->sig[SIG_OFM_WORDS] = e->ofm_words;
            e->sig[SIG_JOBS] = e->jobs_n, e->sig[SIG_STALL] = e->stall_sig;
            sim_obs_sample(sim->obs, (uint64_t)t, e->sig);
        }
        if (sim->cycle_hook) sim->cycle_hook(sim->hook_ctx, (uint64_t)t, e);
        t++;
        idle_skip(e, &t);
    }
    sim->cycle = (uint64_t)t;
    for (int i = 0; i < sim->prog->n_instr; i++) {
        enpu_layer_stats *row = &sim->rows[i];
        const enpu_program *p = sim->prog;
        const uint64_t units = (uint64_t)enpu_arch_mac_units(&sim->arch);
        row->macs = (uint64_t)p->layers[i].macs;
        row->ideal_cycles = (row->macs + units - 1) / units;
        if (enpu_opcode_class(p->instr[i].opcode) == ENPU_CLASS_SYA)
            row->compute_model = (uint64_t)(e->lay[i].s.units * e->lay[i].s.K);
        if (row->end_cycle == 0 && row->cycles) row->end_cycle = row->start_cycle + row->cycles;
    }
    inject_fault(sim);
    return 0;
}

const enpu_sim_engine sim_engine_systolic_cycle = {
    "systolic", ENPU_ENGINE_SYSTOLIC, ENPU_SIM_CYCLE, sya_create, sya_free, sya_run,
};
