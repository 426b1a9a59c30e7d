/* The central control unit (the design's CCU): fetches and decodes
 * instructions, walks each one's units in its loop order and starts them on
 * the array (docs/systolic.md "Timing"):
 *
 *   FETCH   the first instruction, or the one after a host op, from the ITCM
 *   CFG     the configuration handshake (CfgVld/CfgRdy) before a unit that
 *           starts a new skewed block
 *   WAIT    until the output MUXes can take the unit's results (ActRdy), its input
 *           words are written and its output words free (the scoreboard),
 *           and at most one other instruction is still in flight
 *   STREAM  the unit's K steps enter the array (row 0's reads are issued)
 *   TAIL    the skewed block's tail enters (rows - 1 more cycles for the
 *           activations, columns - 1 for the weights) unless the next unit
 *           continues the stream (the scheme, sya_scheme)
 *   DRAIN   before a host op or the end: until every result is written
 *   HOST    a host op (sync): host_sync_cycles of handover, then the host
 *           CPU's time for the op (enpu_sync_cycles: every engine's host)
 *
 * Every cycle is attributed to one instruction's row and one activity:
 * STREAM compute, TAIL pipeline_fill, FETCH/CFG and HOST's handover
 * controller, HOST's host CPU time host, WAIT
 * ofmap_drain while the MUXes are busy then ifmap_load (inputs not written)
 * or bus_conflict (outputs still read or written, or two instructions in
 * flight), DRAIN pipeline_drain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/observe.h"
#include "sim/systolic/sya.h"

enum { S_FETCH = SYA_S_FETCH, S_CFG = SYA_S_CFG, S_WAIT = SYA_S_WAIT, S_STREAM = SYA_S_STREAM,
       S_TAIL = SYA_S_TAIL, S_DRAIN = SYA_S_DRAIN, S_HOST = SYA_S_HOST, S_DONE = SYA_S_DONE };
static const char *const state_name[] = {"fetch", "configure", "wait", "stream", "tail", "drain", "host", "done"};

sya_job *sya_job_of(sya_engine *e, int32_t seq) { return &e->jobs[seq % e->njobs_cap]; }

bool sya_ccu_done(const sya_engine *e) { return e->state == S_DONE; }

static void attribute(sya_engine *e, int row, enpu_activity a, int64_t t) {
    enpu_layer_stats *st = &e->sim->rows[row];
    if (st->cycles == 0 || (uint64_t)t < st->start_cycle) st->start_cycle = (uint64_t)t;
    st->activity[a]++;
    st->cycles++;
}

static void set_state(sya_engine *e, int s, int64_t t) {
    if (e->sim->obs && s != e->state && t > e->state_start)
        sim_obs_span(e->sim->obs, SYA_TRK_CCU, state_name[e->state], (uint64_t)e->state_start, (uint64_t)t, NULL,
                     NULL);
    if (s != e->state) e->state_start = t;
    e->state = s;
}

static bool is_sya(const enpu_program *p, int i) {
    return i >= 0 && i < p->n_instr && enpu_opcode_class(p->instr[i].opcode) == ENPU_CLASS_SYA;
}

/* The unit after (pc, unit): in the same instruction or the first of the
 * next systolic one; false before a sync or the end. */
static bool next_unit(const sya_engine *e, int pc, int64_t unit, int *npc, int64_t *nunit) {
    if (unit + 1 < e->lay[pc].s.units) {
        *npc = pc, *nunit = unit + 1;
        return true;
    }
    if (!is_sya(e->sim->prog, pc + 1)) return false;
    *npc = pc + 1, *nunit = 0;
    return true;
}

static int64_t cfg_first(const sya_engine *e) {
    int64_t sc = e->a->sya_scheme;
    return sc == 1 || sc == 4 ? e->a->sya_cfg_cycles : 0;
}

/* The ITCM words an instruction is fetched in (ENPU_INSTR_BITS over the
 * SRAM word, as the energy model prices an ITCM access). */
static uint64_t itcm_words(const sya_engine *e) {
    return (uint64_t)((ENPU_INSTR_BITS + e->a->bus_bits - 1) / e->a->bus_bits);
}

/* Starts unit (pc, unit) at issue cycle t. */
static int issue(sya_engine *e, int64_t t) {
    enpu_sim *sim = e->sim;
    const enpu_program *p = sim->prog;
    const int pc = e->pc;
    const enpu_instr *in = &p->instr[pc];
    sya_layer *L = &e->lay[pc];
    enpu_layer_stats *st = &sim->rows[pc];
    if (!L->started) {
        L->started = true;
        L->first_issue = (uint64_t)t;
        /* the configuration: the bias and requantization parameters of
         * every output channel, read once */
        const int64_t wb = e->wb;
        st->reads[ENPU_MEM_WEIGHT_MEM] += (uint64_t)((in->co * 4 + wb - 1) / wb + (in->co * 8 + wb - 1) / wb);
        /* the check's reference runs in program order, ahead of the array */
        if (sim->have_shadow) {
            int rc = sya_func_exec(sim, pc, L, &sim->shadow, e->err);
            if (rc) return rc;
        }
    }
    if (e->jobs_n == e->njobs_cap)
        return enpu_fail(e->err, ENPU_E_LIMIT, "systolic controller: more than %d units in flight", e->njobs_cap);
    int32_t seq = e->next_seq++;
    ENPU_ASSERT((e->jobs_head + e->jobs_n) % e->njobs_cap == seq % e->njobs_cap);
    sya_job *j = &e->jobs[seq % e->njobs_cap];
    uint8_t *buf = j->buf;
    memset(j, 0, sizeof *j);
    j->buf = buf;
    j->instr = pc, j->seq = seq;
    enpu_sya_unit_at(&L->s, e->unit, &j->u);
    j->T = t + e->L, j->K = L->s.K;
    j->writes_left = j->u.rows * sya_out_words(e, pc, &j->u);
    e->jobs_n++;
    int64_t lw = sya_board_commit(e, pc, &j->u, j->T);
    if (lw > L->sched_last) L->sched_last = lw;
    L->units_issued++;
    /* the rows' MUXes hand on this unit's results from t + K on, one column
     * per cycle: a later unit's first result may not come before they are
     * through (its K may be shorter) */
    e->mux_free = t + j->K + (j->u.cols < e->NC ? j->u.cols : e->NC);
    /* what the streams do after this unit: continue into the next one
     * (merge) or finish their skewed block first */
    int npc;
    int64_t nunit;
    bool has_next = next_unit(e, pc, e->unit, &npc, &nunit), same = false;
    if (has_next && npc == pc) {
        enpu_sya_unit nu;
        enpu_sya_unit_at(&L->s, nunit, &nu);
        same = enpu_sya_same_tile(&j->u, &nu);
    }
    switch (e->a->sya_scheme) {
    case 0: e->merge_a = e->merge_w = false; break;
    case 1: e->merge_a = false, e->merge_w = same; break;
    case 3: e->merge_a = e->merge_w = true; break;
    default: e->merge_a = e->merge_w = same; break;
    }
    e->tail_until = e->a->sya_scheme == 0 ? t + j->K + e->R + e->C - 2 : t;
    e->last_instr = pc, e->last_u = j->u, e->last_tau = t;
    return 0;
}

int sya_job_retire(sya_engine *e, sya_job *j, int64_t t) {
    enpu_sim *sim = e->sim;
    sya_layer *L = &e->lay[j->instr];
    int instr = j->instr;
    j->writes_left = -1; /* done */
    while (e->jobs_n > 0 && e->jobs[e->jobs_head].writes_left < 0) {
        e->jobs_head = (e->jobs_head + 1) % e->njobs_cap;
        e->jobs_n--;
    }
    if (L->units_issued < L->s.units) return 0;
    for (int n = 0; n < e->jobs_n; n++)
        if (e->jobs[(e->jobs_head + n) % e->njobs_cap].instr == instr &&
            e->jobs[(e->jobs_head + n) % e->njobs_cap].writes_left >= 0)
            return 0;
    /* the instruction's last write */
    L->complete = true;
    enpu_layer_stats *st = &sim->rows[instr];
    st->end_cycle = (uint64_t)t + 1;
    ENPU_ASSERT(t == L->sched_last);
    if (sim->obs) {
        const enpu_instr *in = &sim->prog->instr[instr];
        sim_obs_span(sim->obs, SYA_TRK_LAYERS, st->name, L->first_issue, (uint64_t)t + 1, "op",
                     enpu_opcode_mnemonic(in->opcode));
    }
    int rc;
    if (sim->have_shadow) {
        const enpu_instr *in = &sim->prog->instr[instr];
        sim->checked = true;
        if (!sim_compare_block(sim, ENPU_MEM_MAIN, in->ofmap_addr, 0, in->ho, in->wo, in->co, instr, "ofmap"))
            return sim_mismatch_fail(sim, e->err);
    }
    if (sim->opts.on_layer && (rc = sim->opts.on_layer(sim->opts.cb_ctx, instr, st, sim, e->err))) return rc;
    return 0;
}

/* The instruction issued before the previous one must be complete (two
 * layers in flight at most). */
static bool ctx_free(const sya_engine *e) {
    const enpu_program *p = e->sim->prog;
    int prev = -1;
    for (int i = e->pc - 1; i >= 0 && is_sya(p, i); i--) {
        if (!e->lay[i].started) continue;
        if (prev < 0 && i != e->pc) {
            prev = i;
            continue;
        }
        return e->lay[i].complete;
    }
    return true;
}

/* What WAIT decides on for unit (pc, unit): the scoreboard's earliest
 * entry cycles for its inputs (*raw) and outputs (*war), and whether a
 * third layer may start (*ctx).  Returns the unit's layer. */
static const sya_layer *wait_inputs(const sya_engine *e, int64_t *raw, int64_t *war, bool *ctx) {
    const sya_layer *L = &e->lay[e->pc];
    enpu_sya_unit u;
    enpu_sya_unit_at(&L->s, e->unit, &u);
    sya_board_ready(e, e->pc, &u, raw, war);
    *ctx = ctx_free(e);
    return L;
}

int sya_ccu_step(sya_engine *e, int64_t t) {
    enpu_sim *sim = e->sim;
    const enpu_program *p = sim->prog;
    e->stall_sig = 0;
    for (;;) {
        switch (e->state) {
        case S_FETCH:
            if (e->cnt > 0) {
                e->cnt--;
                attribute(e, e->pc, ENPU_ACT_CONTROLLER, t);
                return 0;
            }
            sim->rows[e->pc].reads[ENPU_MEM_ITCM] += itcm_words(e);
            if (p->instr[e->pc].opcode == ENPU_OPC_END) {
                set_state(e, S_DONE, t);
                return 0;
            }
            if (p->instr[e->pc].opcode == ENPU_OPC_SYNC) {
                int rc = sim_host_op(sim, e->pc, e->err);
                if (rc) return rc;
                if (sim->have_shadow) sim_mem_copy_fmaps(&sim->shadow, &sim->mem, false);
                e->cnt = enpu_sync_cycles(sim->prog, e->pc);
                e->host_cnt = enpu_sync_host_cycles(sim->prog, e->pc);
                set_state(e, S_HOST, t);
                if (sim->obs && e->cnt > 0)
                    sim_obs_span(sim->obs, SYA_TRK_STALL, "host op", (uint64_t)t, (uint64_t)(t + e->cnt), "layer",
                                 sim->rows[e->pc].name);
                continue;
            }
            e->unit = 0;
            e->cnt = cfg_first(e);
            set_state(e, S_CFG, t);
            continue;
        case S_CFG:
            if (e->cnt > 0) {
                e->cnt--;
                e->sig[SIG_CFG_VLD] = 1;
                attribute(e, e->pc, ENPU_ACT_CONTROLLER, t);
                return 0;
            }
            e->sig[SIG_CFG_VLD] = 0;
            set_state(e, S_WAIT, t);
            continue;
        case S_WAIT: {
            int64_t raw, war;
            bool ctx;
            const sya_layer *L = wait_inputs(e, &raw, &war, &ctx);
            bool mux = t + L->s.K >= e->mux_free;
            if (mux && ctx && t + e->L >= raw && t + e->L >= war) {
                int rc = issue(e, t);
                if (rc) return rc;
                e->cnt = e->lay[e->pc].s.K;
                set_state(e, S_STREAM, t);
                continue;
            }
            if (!mux) {
                attribute(e, e->last_instr, ENPU_ACT_OFMAP_DRAIN, t);
                e->stall_sig = 1;
            } else if (ctx && t + e->L < raw) {
                attribute(e, e->pc, ENPU_ACT_IFMAP_LOAD, t);
                e->stall_sig = 2;
            } else {
                attribute(e, e->pc, ENPU_ACT_BUS_CONFLICT, t);
                e->stall_sig = 3;
            }
            return 0;
        }
        case S_STREAM:
            if (e->cnt > 0) {
                e->cnt--;
                attribute(e, e->last_instr, ENPU_ACT_COMPUTE, t);
                return 0;
            }
            set_state(e, S_TAIL, t);
            continue;
        case S_TAIL: {
            const int64_t K = e->lay[e->last_instr].s.K, tau = e->last_tau;
            bool wait = t < e->tail_until;
            /* the feeders still inject the block's last rows / columns */
            if (!e->merge_a && t < tau + K + e->last_u.rows - 1) wait = true;
            if (!e->merge_w && t < tau + K + e->last_u.cols - 1) wait = true;
            if (wait) {
                attribute(e, e->last_instr, ENPU_ACT_PIPELINE_FILL, t);
                return 0;
            }
            int npc;
            int64_t nunit;
            if (next_unit(e, e->last_instr, e->unit, &npc, &nunit)) {
                bool same = false;
                if (npc == e->pc) {
                    enpu_sya_unit nu;
                    enpu_sya_unit_at(&e->lay[npc].s, nunit, &nu);
                    same = enpu_sya_same_tile(&e->last_u, &nu);
                }
                if (npc != e->pc) sim->rows[npc].reads[ENPU_MEM_ITCM] += itcm_words(e);
                e->pc = npc, e->unit = nunit;
                int64_t sc = e->a->sya_scheme;
                e->cnt = sc == 1 || (sc == 4 && !same) ? e->a->sya_cfg_cycles : 0;
                set_state(e, S_CFG, t);
            } else {
                set_state(e, S_DRAIN, t);
            }
            continue;
        }
        case S_DRAIN:
            if (e->jobs_n > 0) {
                attribute(e, e->last_instr, ENPU_ACT_PIPELINE_DRAIN, t);
                return 0;
            }
            e->pc = e->last_instr + 1;
            e->cnt = sim->arch.decode_cycles;
            set_state(e, S_FETCH, t);
            continue;
        case S_HOST:
            if (e->cnt > 0) {
                /* the handover, then the host CPU's last host_cnt cycles */
                attribute(e, e->pc, e->cnt > e->host_cnt ? ENPU_ACT_CONTROLLER : ENPU_ACT_HOST, t);
                e->cnt--;
                return 0;
            }
            e->pc++;
            e->cnt = sim->arch.decode_cycles;
            set_state(e, S_FETCH, t);
            continue;
        default: return 0;
        }
    }
}

/* ---- the fast-forward's view of the controller (sya.h) -------------------
 * Each case restates the branch of sya_ccu_step above in which the state
 * stays and only one cycle is attributed, with the cycle from which that
 * branch is no longer taken: a countdown's end, the TAIL's last waiting
 * cycle, WAIT's phases.  What else those branches read changes only when a
 * unit is issued (the scoreboard, mux_free: only in an acting cycle) or
 * retires (`complete` in ctx_free, jobs_n: the fast-forward ends a stretch
 * there), so the branch is the same in every cycle up to `end`.  Keep the
 * two in step: the fast-forward tests compare them cycle for cycle. */

void sya_ccu_quiet(sya_engine *e, int64_t t, sya_quiet *q) {
    q->end = t, q->row = e->pc, q->act = ENPU_ACT_CONTROLLER, q->stall = 0;
    switch (e->state) {
    case S_FETCH:
    case S_CFG:
        if (e->cnt > 0) q->end = t + e->cnt;
        return;
    case S_STREAM:
        if (e->cnt > 0) q->end = t + e->cnt, q->row = e->last_instr, q->act = ENPU_ACT_COMPUTE;
        return;
    case S_TAIL: {
        const int64_t K = e->lay[e->last_instr].s.K, tau = e->last_tau;
        int64_t until = e->tail_until;
        if (!e->merge_a && tau + K + e->last_u.rows - 1 > until) until = tau + K + e->last_u.rows - 1;
        if (!e->merge_w && tau + K + e->last_u.cols - 1 > until) until = tau + K + e->last_u.cols - 1;
        if (t < until) q->end = until, q->row = e->last_instr, q->act = ENPU_ACT_PIPELINE_FILL;
        return;
    }
    case S_DRAIN:
        if (e->jobs_n > 0) q->end = INT64_MAX, q->row = e->last_instr, q->act = ENPU_ACT_PIPELINE_DRAIN;
        return;
    case S_HOST:
        /* the handover, then the host CPU's last host_cnt cycles: one phase
         * at a time */
        if (e->cnt > e->host_cnt) q->end = t + e->cnt - (e->host_cnt > 0 ? e->host_cnt : 0);
        else if (e->cnt > 0) q->end = t + e->cnt, q->act = ENPU_ACT_HOST;
        return;
    case S_WAIT: {
        int64_t raw, war;
        bool ctx;
        const sya_layer *L = wait_inputs(e, &raw, &war, &ctx);
        if (t + L->s.K < e->mux_free) { /* the MUXes: until mux_free - K */
            q->end = e->mux_free - L->s.K, q->row = e->last_instr, q->act = ENPU_ACT_OFMAP_DRAIN, q->stall = 1;
        } else if (ctx && t + e->L < raw) { /* inputs: until raw - L */
            q->end = raw - e->L, q->act = ENPU_ACT_IFMAP_LOAD, q->stall = 2;
        } else if (!ctx || t + e->L < war) { /* outputs, or until a layer completes */
            q->end = ctx ? war - e->L : INT64_MAX, q->act = ENPU_ACT_BUS_CONFLICT, q->stall = 3;
        }
        return;
    }
    default: return;
    }
}

void sya_ccu_idle(sya_engine *e, const sya_quiet *q, int64_t t, int64_t n) {
    if (n <= 0) return;
    enpu_layer_stats *st = &e->sim->rows[q->row];
    if (st->cycles == 0 || (uint64_t)t < st->start_cycle) st->start_cycle = (uint64_t)t;
    st->activity[q->act] += (uint64_t)n;
    st->cycles += (uint64_t)n;
    if (e->state == S_FETCH || e->state == S_CFG || e->state == S_STREAM || e->state == S_HOST) e->cnt -= n;
    if (e->state == S_CFG) e->sig[SIG_CFG_VLD] = 1;
    e->stall_sig = q->stall;
}
