/* The EasyNPU cycle engine: one global per-cycle loop in which the fetch
 * unit and the decoder (docs/microarch.md §11.2, §13.3), the DMA engines,
 * the DRAM channel and the instruction prefetcher (dma.c, sim/dram.c; §13.4,
 * §13.5) and the datapath (a chain's units stepped once per cycle in the
 * order of core.h, or a sync or `end` waiting and running) advance together,
 * in the order of §13.6; cycle attribution (§11.10, §13.7) and the
 * observation taps (trace spans, signal samples).
 *
 * Speed: while a chain executes, steps (1)-(4) of §13.6 run only in the
 * cycles where they can change something (`wake`, the earliest such cycle
 * the front end and the DMA side know of); a program without DMA never runs
 * the DMA side at all. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/easynpu/core.h"
#include "sim/easynpu/dma.h"
#include "sim/engine.h"

enum { DP_IDLE = 0, DP_HELD, DP_EXEC, DP_SYNC };
/* Waits shown on the top controller's track (§13.7 rules 2, 4, 5). */
enum { RUN_NONE = 0, RUN_FETCH, RUN_TOKENS, RUN_QUEUE };

/* The fetch unit and the decoder (§13.3). */
typedef struct frontend {
    int next_fetch;              /* next instruction to fetch */
    int buf;                     /* in (or being fetched into) the buffer; -1: empty */
    uint64_t fetch_start, buf_ready;
    int dec;                     /* instruction decoded last (-1: none) */
    uint64_t dec_end;            /* the cycle after its last decode cycle */
    bool collecting;             /* it has fuse_next: a chain is being collected */
    int head;                    /* head of that chain */
} frontend;

/* What the datapath holds: a decoded chain, sync or end, waiting or running. */
typedef struct datapath {
    int state;                   /* DP_* */
    int instr;                   /* chain head, sync or end */
    uint64_t from;               /* may start from (the cycle after its last decode cycle) */
    uint64_t t0, sync_done;
    uint64_t sync_host;          /* the sync's last cycles: its host op on the host CPU */
} datapath;

#define MAX_SIG 64

typedef struct cyc_state {
    core k;
    sim_enpu x;                  /* the decoder and the check's buffers (chain.h) */
    sim_chain chain;
    sim_dma dma;
    bool offchip;                /* the program has a dma or is fetched from DRAM */
    frontend fe;
    datapath dp;
    uint64_t wake;               /* while a chain executes: next cycle for steps (1)-(4) */
    /* the watchdog (sim_internal.h): its last progress is the last cycle
     * something happened outside a chain (a fetch, a decode, a DMA step, a
     * sync, a chain's end); a chain's own is k.stall_guard (its units'
     * issues and writes) */
    sim_wd wd;
    sim_access acc[SIM_CHAIN_MAX_ACCESS]; /* the executing chain's words (race checks) */
    int n_acc;
    int run, run_row;            /* the current wait on the top controller's track */
    uint64_t run_start;
    int n_sig;
    const char *sig_name[MAX_SIG];
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

/* The unit step (§13.6) that records a track's spans: a fast-forward span
 * replays its records in this order within a cycle. */
static int track_step(int track) {
    switch (track) {
    case TRK_LOAD: return 2;
    case TRK_WBUS: return 3;
    case TRK_PE: return 4;
    case TRK_BUS: return 5;
    default: return 6;
    }
}

/* Records a span recorded in cycle `at` (or holds it back during a span). */
static void emit_at(core *k, int track, int label, int64_t unit, uint64_t start, uint64_t end,
                    uint64_t at) {
    if (!k->trace || end <= start) return;
    if (label >= 0 && track != TRK_PE && label == BUS_IDLE) return;
    if (label < -1) return;
    ffstate *f = &k->ff;
    if (f->buffering) {
        if (f->n_rec == f->cap_rec) {
            size_t cap = f->cap_rec ? 2 * f->cap_rec : 1024;
            ff_rec *r = realloc(f->rec, cap * sizeof *r);
            if (!r) {
                f->rec_oom = true;
                return;
            }
            f->rec = r;
            f->cap_rec = cap;
        }
        f->rec[f->n_rec++] = (ff_rec){at * 8 + (uint64_t)track_step(track), start, end, track, label,
                                      unit};
        return;
    }
    if (label == -1) {
        char nm[64];
        snprintf(nm, sizeof nm, "unit %lld", (long long)unit);
        sim_obs_span(k->sim->obs, track, nm, start, end, NULL, NULL);
        return;
    }
    const char *name = track == TRK_PE ? enpu_activity_name((enpu_activity)label) : bus_label(label);
    sim_obs_span(k->sim->obs, track, name, start, end, NULL, NULL);
}

static void emit_run(core *k, int track, int label, uint64_t start, uint64_t end) {
    if (label < 0) return;
    emit_at(k, track, label, 0, start, end, end);
}

void sim_core_emit(core *k, int track, int label, int64_t unit, uint64_t start, uint64_t end) {
    emit_at(k, track, label, unit, start, end, end - 1);
}

void sim_core_track_at(core *k, int track, int label, uint64_t x) {
    if (!k->trace) return;
    trk_run *r = &k->trk[track];
    if (r->label == label) return;
    if (r->label >= 0) emit_at(k, track, r->label, 0, r->start, x, x);
    r->label = label;
    r->start = x;
}

void sim_core_track(core *k, int track, int label) { sim_core_track_at(k, track, label, k->t); }

static void row_touch(enpu_layer_stats *st, uint64_t start, uint64_t n) {
    if (st->start_cycle == NEVER || start < st->start_cycle) st->start_cycle = start;
    if (start + n > st->end_cycle) st->end_cycle = start + n;
}

void sim_core_count(core *k, int row, enpu_activity a, uint64_t n, uint64_t start) {
    enpu_layer_stats *st = &k->sim->rows[row];
    st->activity[a] += n;
    st->cycles += n;
    row_touch(st, start, n);
    sim_own(k->sim, row, start, n);
}

void sim_core_account(core *k, int row, enpu_activity a, uint64_t n, uint64_t start) {
    sim_core_count(k, row, a, n, start);
    if (!k->trace) return;
    if (n == 1 && start == k->t) sim_core_track(k, TRK_PE, (int)a);
    else emit_run(k, TRK_PE, (int)a, start, start + n);
}

static void flush_run(cyc_state *es, enpu_sim *sim, uint64_t t) {
    static const char *const names[] = {"", "wait for fetch", "wait for tokens", "queue full"};
    if (es->run != RUN_NONE) {
        bool end = es->run == RUN_TOKENS && sim->prog->instr[es->run_row].opcode == ENPU_OPC_END;
        sim_obs_span(sim->obs, TRK_TOP, end ? "wait for DMA engines" : names[es->run], es->run_start,
                     t, "layer", sim->rows[es->run_row].name);
    }
    es->run = RUN_NONE;
}

/* Cycles [t, t + n) in which no chain executes and nothing changes (§13.7
 * rules 2-5). */
static void attribute(cyc_state *es, enpu_sim *sim, uint64_t t, uint64_t n) {
    const frontend *f = &es->fe;
    const datapath *dp = &es->dp;
    const enpu_program *p = sim->prog;
    int row, run = RUN_NONE;
    enpu_activity a = ENPU_ACT_CONTROLLER;
    uint64_t host_n = 0; /* of the n cycles, those of a host op */
    if (dp->state == DP_HELD && t >= dp->from) {
        row = dp->instr, a = ENPU_ACT_DMA_WAIT, run = RUN_TOKENS;
    } else if (dp->state == DP_SYNC) {
        row = dp->instr;
        /* the handover (controller), then the host op itself (host, §13.11) */
        uint64_t hs = dp->sync_done - dp->sync_host;
        if (t + n > hs) host_n = t >= hs ? n : t + n - hs;
    } else if (t < f->dec_end) {
        row = f->dec;
    } else if (f->buf >= 0 && t >= f->buf_ready && p->instr[f->buf].opcode == ENPU_OPC_DMA) {
        row = f->buf, a = ENPU_ACT_DMA_WAIT, run = RUN_QUEUE; /* the decoder could not take it */
    } else {
        row = f->buf >= 0 ? f->buf : f->next_fetch, run = RUN_FETCH;
        if (row >= p->n_instr) row = p->n_instr - 1;
    }
    enpu_layer_stats *st = &sim->rows[row];
    st->activity[a] += n - host_n;
    st->activity[ENPU_ACT_HOST] += host_n;
    st->cycles += n;
    row_touch(st, t, n);
    sim_own(sim, row, t, n);
    if (!sim->obs || !sim->obs->trace) return;
    if (es->run == run && es->run_row == row) return;
    flush_run(es, sim, t);
    es->run = run;
    es->run_row = row;
    es->run_start = t;
}

/* ---- observation: tracks and the control signals (docs/microarch.md §1) ---- */

static const char *const sig_names[] = {
    "pe_ps_addr",   "if_hw_addr",     "if_ch_addr",     "w_och_gcnt",    "fuse_stage",
    "pe_valid",     "pe_ps_outer_en", "pe_ps_back_en",  "pe_maxpool_en", "pe_byp_mul_en",
    "if_bus_valid", "if_bus_ready",   "of_bus_valid",   "of_bus_ready",  "w_bus_valid",
    "w_bus_ready",  "skip_bus_valid", "skip_bus_ready", "op2_valid",     "op2_ready"};
#define N_SIG ((int)(sizeof sig_names / sizeof sig_names[0]))
/* The off-chip signals, in sim_dma_signals' order. */
static const char *const dma_sig_names[4][3] = {{"dma0_busy", "dma0_valid", "dma0_ready"},
                                                {"dma1_busy", "dma1_valid", "dma1_ready"},
                                                {"dma2_busy", "dma2_valid", "dma2_ready"},
                                                {"dma3_busy", "dma3_valid", "dma3_ready"}};

static int bits_for(int64_t n) { /* bits to index 0..n-1 */
    int b = 1;
    while (b < 62 && ((int64_t)1 << b) < n) b++;
    return b;
}

static void core_values(const sim_signals *s, int64_t *v) {
    const int64_t c[N_SIG] = {
        s->ps_addr,     s->if_hw_addr, s->if_ch_addr, s->w_och_gcnt, s->stage,    s->pe_valid,
        s->ps_outer_en, s->ps_back_en, s->maxpool_en, s->byp_mul_en, s->if_valid, s->if_ready,
        s->of_valid,    s->of_ready,   s->w_valid,    s->w_ready,    s->sk_valid, s->sk_ready,
        s->op2_valid,   s->op2_ready};
    memcpy(v, c, sizeof c);
}

static const sim_signals idle_signals;

static void sample(sim_obs *o, uint64_t t, const sim_signals *s) {
    if (!o || !o->vcd) return;
    int64_t v[N_SIG];
    core_values(s, v);
    sim_obs_sample(o, t, v);
}

/* Programs with off-chip traffic: every cycle, the core's and the DMA side's. */
static void sample_all(cyc_state *es, sim_obs *o, uint64_t t, const sim_signals *s) {
    if (!o || !o->vcd || t < o->from || t >= o->to) return;
    int64_t v[MAX_SIG];
    core_values(s, v);
    sim_dma_signals(&es->dma, t, v + N_SIG);
    sim_obs_sample(o, t, v);
}

static void k_observe_start(cyc_state *es, enpu_sim *sim) {
    core *k = &es->k;
    const enpu_arch *a = &sim->arch;
    k->trace = sim->obs && sim->obs->trace;
    if (!sim->obs) return;
    static const char *const tracks[] = {NULL,        "top controller: decode", "PE array",
                                         "scheduler: ifmap loads", "DTCM bus", "weight bus",
                                         "skip port", "layers",  "ITCM fetch"};
    for (int i = 1; i < 9; i++) sim_obs_track(sim->obs, i, tracks[i]);
    int w[MAX_SIG];
    int n = 0;
    for (; n < N_SIG; n++) es->sig_name[n] = sig_names[n], w[n] = 1;
    w[0] = bits_for(a->psum_depth);
    w[1] = bits_for(a->ifmap_pad_depth);
    w[2] = bits_for(a->ifmap_pads);
    w[3] = bits_for(a->weight_pad_depth);
    w[4] = 4;
    if (es->offchip) {
        sim_dma_observe_start(&es->dma);
        for (int e = 0; e < es->dma.E; e++)
            for (int j = 0; j < 3; j++) es->sig_name[n] = dma_sig_names[e][j], w[n++] = 1;
        es->sig_name[n] = "dram_busy", w[n++] = 1;
        if (es->dma.pf) {
            es->sig_name[n] = "ifetch_valid", w[n++] = 1;
            es->sig_name[n] = "ifetch_ready", w[n++] = 1;
        }
    }
    es->n_sig = n;
    sim_obs_signals(sim->obs, "easynpu", n, es->sig_name, w);
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
    sim_ff_free(k);
    free(k->pc.hw_base);
    sim_dma_free(&es->dma);
    sim_enpu_free(&es->x);
    free(es);
}

static int cyc_create(enpu_sim *sim, void **out, enpu_err *err) {
    cyc_state *es = calloc(1, sizeof *es);
    if (!es) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    core *k = &es->k;
    const enpu_arch *a = &sim->arch;
    const enpu_program *p = sim->prog;
    int rc = sim_enpu_init(&es->x, sim, err);
    if (rc) {
        free(es);
        return rc;
    }
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
    es->offchip = enpu_program_dram_instr_words(p) > 0;
    for (int i = 0; i < p->n_instr; i++) es->offchip |= p->instr[i].opcode == ENPU_OPC_DMA;
    int64_t max_taps = 1;
    for (int i = 0; i < p->n_instr; i++)
        if (p->instr[i].hk * p->instr[i].wk > max_taps) max_taps = p->instr[i].hk * p->instr[i].wk;
    if ((rc = sim_ifpad_init(&k->pad, a, err)) || (rc = sim_ff_init(k, max_taps, err)) ||
        (rc = sim_wfifo_init(&k->wpad, (int)a->weight_pad_depth, k->P, err)) ||
        (rc = sim_wfifo_init(&k->op2, op2_depth, k->P, err)) ||
        (rc = sim_pe_init(&k->pe, a, es->x.dec.max_lanes, err)) || (rc = sim_sched_init(k, err)) ||
        (es->offchip && (rc = sim_dma_init(&es->dma, sim, err)))) {
        cyc_destroy(es);
        return rc;
    }
    k->pc.hw_base = calloc((size_t)(a->psum_depth * a->pe_rows * a->lane_groups_max), sizeof(int64_t));
    if (!k->pc.hw_base) {
        cyc_destroy(es);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    }
    *out = es;
    return 0;
}

/* ---- the datapath: chains -------------------------------------------------------------- */

static uint64_t max_cycles(const enpu_sim *sim) {
    return sim->opts.max_cycles ? sim->opts.max_cycles : ((uint64_t)1 << 40);
}

static bool is_chain(const enpu_program *p, int i) {
    return enpu_opcode_class(p->instr[i].opcode) != ENPU_CLASS_CTRL;
}

static int chain_start(cyc_state *es, enpu_sim *sim, uint64_t t0, enpu_err *err) {
    const enpu_program *p = sim->prog;
    const int head = es->dp.instr;
    flush_run(es, sim, t0);
    /* decoded now: a dma may have loaded the chain's parameters (§13.3) */
    int rc = sim_decode_chain(&es->x.dec, p, &sim->mem, head, &es->chain, err);
    if (rc) return rc;
    sim_rows_of_chain(sim, &es->chain);
    if (es->offchip) {
        es->n_acc = sim_chain_accesses(p, head, es->chain.n_instr, es->acc);
        if ((rc = sim_dma_race(&es->dma, t0, head, es->acc, es->n_acc, err))) return rc;
        sim_tok_take(&es->dma.tok, p->instr[head].pop, ENPU_QUEUE_COMPUTE);
    }
    sim_chain_begin(sim, &es->x, &es->chain);
    core *k = &es->k;
    k->ch = &es->chain;
    k->t0 = k->t = t0;
    sim_ifpad_reset(&k->pad, k->ch->dbuf);
    for (int i = 0; i < 8; i++) k->trk[i] = (trk_run){-1, t0};
    memset(&k->sig, 0, sizeof k->sig);
    sim_sched_start(k);
    sim_pectl_start(k);
    sim_ff_chain(k);
    k->stall_guard = t0;
    es->dp.state = DP_EXEC;
    es->dp.t0 = t0;
    return 0;
}

/* The chain's last write was in t_end: it completes at t_end + 1 (§13.2),
 * which nothing before step (1) of that cycle can observe. */
static int chain_finish(cyc_state *es, enpu_sim *sim, uint64_t t_end, enpu_err *err) {
    core *k = &es->k;
    const int head = es->dp.instr;
    sim_pectl_resolve_wait(k);
    k->t = t_end + 1;
    for (int i = 0; i < 8; i++) {
        if (k->trk[i].label >= 0) emit_run(k, i, k->trk[i].label, k->trk[i].start, k->t);
        k->trk[i].label = -1;
    }
    sim->cycle = t_end + 1;
    if (!es->offchip) sample(sim->obs, t_end + 1, &idle_signals);
    if (sim->obs) {
        char nm[300];
        snprintf(nm, sizeof nm, "%s%s", sim->rows[head].name,
                 es->chain.n_instr > 1 ? " (fused chain)" : "");
        sim_obs_span(sim->obs, TRK_LAYERS, nm, sim->rows[head].start_cycle, t_end + 1, "op",
                     sim->rows[head].op);
    }
    es->dp.state = DP_IDLE;
    sim_wd_progress(&es->wd, t_end);
    if (es->offchip) sim_tok_push(&es->dma.tok, sim->prog->instr[head].push, ENPU_QUEUE_COMPUTE);
    return sim_chain_done(sim, &es->x, &es->chain, err);
}

/* ---- the top controller: fetch, decode, dispatch (§13.3) --------------------------------- */

/* The decoder takes instruction i (in the buffer) in cycle t. */
static void take(cyc_state *es, enpu_sim *sim, uint64_t t) {
    frontend *f = &es->fe;
    const enpu_program *p = sim->prog;
    const uint64_t Dc = (uint64_t)sim->arch.decode_cycles;
    const int i = f->buf;
    const enpu_instr *in = &p->instr[i];
    sim_obs_span(sim->obs, TRK_FETCH, "fetch", f->fetch_start, f->buf_ready, "layer", sim->rows[i].name);
    if (es->run_row == i) flush_run(es, sim, t); /* its wait ends; not another's */
    sim_obs_span(sim->obs, TRK_TOP, "decode", t, t + Dc, "layer", sim->rows[i].name);
    f->buf = -1;
    f->dec = i;
    f->dec_end = t + Dc;
    sim_wd_progress(&es->wd, t);
    if (in->opcode == ENPU_OPC_DMA) {
        sim_dma_enqueue(&es->dma, i, t + Dc);
        return;
    }
    if (!f->collecting) f->head = i;
    f->collecting = in->fuse_next != 0;
    if (f->collecting) return;
    es->dp.state = DP_HELD;
    es->dp.instr = is_chain(p, i) ? f->head : i;
    es->dp.from = t + Dc;
}

/* Step (2): the decoder, then the fetch unit (a fetch starts in the cycle
 * the decoder frees the buffer). */
static void frontend_step(cyc_state *es, enpu_sim *sim, uint64_t t) {
    frontend *f = &es->fe;
    const enpu_program *p = sim->prog;
    if (f->buf >= 0 && t >= f->buf_ready && t >= f->dec_end) {
        const enpu_instr *in = &p->instr[f->buf];
        bool ok = in->opcode == ENPU_OPC_DMA ? sim_dma_room(&es->dma, (int)in->dma_engine)
                                             : f->collecting || es->dp.state == DP_IDLE;
        if (ok) take(es, sim, t);
    }
    if (f->buf < 0 && f->next_fetch < p->n_instr &&
        (!es->offchip || !es->dma.pf || es->dma.itcm_ready[f->next_fetch] <= t)) {
        const enpu_arch *a = &sim->arch;
        const uint64_t F = (uint64_t)a->instr_fetch_cycles;
        int i = f->next_fetch++;
        f->buf = i;
        f->fetch_start = t;
        f->buf_ready = t + F;
        sim->rows[i].reads[ENPU_MEM_ITCM] += (uint64_t)((ENPU_INSTR_BITS + a->bus_bits - 1) / a->bus_bits);
        if (es->offchip) sim_dma_fetched(&es->dma, i, t + F);
        sim_wd_progress(&es->wd, t);
    }
}

/* A sync's host op runs between cycles t - 1 and t and the sync completes
 * at t (§13.2). */
static int sync_complete(cyc_state *es, enpu_sim *sim, uint64_t t, enpu_err *err) {
    const int i = es->dp.instr;
    int rc;
    if (es->offchip) {
        sim_access acc[ENPU_HOSTOP_MAX_IO];
        int n = sim_hostop_accesses(sim->prog, i, acc);
        if ((rc = sim_dma_race(&es->dma, t, i, acc, n, err))) return rc;
    }
    sim->cycle = t;
    if ((rc = sim_host_op(sim, i, err))) return rc;
    if (es->offchip) sim_tok_push(&es->dma.tok, sim->prog->instr[i].push, ENPU_QUEUE_COMPUTE);
    es->dp.state = DP_IDLE;
    sim_wd_progress(&es->wd, t);
    return 0;
}

/* A held sync or `end` starts in t when its tokens are there (`end`: and
 * every DMA engine is idle); *ended when `end` starts.  Evaluated right after
 * step (1) -- the decision reads only tokens and engines, which only step (1)
 * changes, and a sync of host_sync_cycles = 0 completes as it starts, so the
 * decoder may take the next instruction in the same cycle -- and again in
 * step (5) for one that step (2) has just decoded (decode_cycles = 0). */
static int ctrl_start(cyc_state *es, enpu_sim *sim, uint64_t t, bool *ended, enpu_err *err) {
    const enpu_program *p = sim->prog;
    datapath *dp = &es->dp;
    if (dp->state != DP_HELD || t < dp->from || is_chain(p, dp->instr)) return 0;
    const enpu_instr *in = &p->instr[dp->instr];
    if (es->offchip && !(sim_tok_ready(&es->dma.tok, in->pop, ENPU_QUEUE_COMPUTE) &&
                         (in->opcode == ENPU_OPC_SYNC || sim_dma_idle(&es->dma))))
        return 0;
    flush_run(es, sim, t);
    if (es->offchip) sim_tok_take(&es->dma.tok, in->pop, ENPU_QUEUE_COMPUTE);
    if (in->opcode == ENPU_OPC_END) {
        *ended = true;
        return 0;
    }
    const uint64_t H = (uint64_t)enpu_sync_cycles(p, dp->instr);
    sim_obs_span(sim->obs, TRK_TOP, "host sync", t, t + H, "layer", sim->rows[dp->instr].name);
    dp->state = DP_SYNC;
    dp->sync_done = t + H;
    dp->sync_host = (uint64_t)enpu_sync_host_cycles(p, dp->instr);
    sim_wd_progress(&es->wd, t);
    return H == 0 ? sync_complete(es, sim, t, err) : 0;
}

/* Steps (1)-(4) of §13.6 in cycle t; *ended when `end` starts in t. */
static int top_steps(cyc_state *es, enpu_sim *sim, uint64_t t, bool *ended, enpu_err *err) {
    datapath *dp = &es->dp;
    int rc;
    /* (1) completions: commands first (a host op sees their words), then a sync */
    if (es->offchip) {
        es->dma.progress = false;
        if ((rc = sim_dma_complete(&es->dma, t, err))) return rc;
    }
    if (dp->state == DP_SYNC && t == dp->sync_done && (rc = sync_complete(es, sim, t, err))) return rc;
    if ((rc = ctrl_start(es, sim, t, ended, err)) || *ended) return rc;
    /* (2) fetch unit and decoder */
    frontend_step(es, sim, t);
    /* (3) DMA engines, (4) the DRAM channel */
    if (es->offchip) {
        bool exec = dp->state == DP_EXEC;
        if ((rc = sim_dma_start(&es->dma, t, exec ? es->acc : NULL, exec ? es->n_acc : 0, dp->instr,
                                dp->t0, err)))
            return rc;
        sim_dma_grant(&es->dma, t);
        if (es->dma.progress) sim_wd_progress(&es->wd, t);
    }
    return 0;
}

/* The earliest cycle after t in which steps (1)-(4) can do anything while
 * the datapath executes a chain (whose end is an event of its own). */
static uint64_t next_wake(const cyc_state *es, uint64_t t) {
    const frontend *f = &es->fe;
    if (es->k.sim->step_every_cycle) return t + 1;
    uint64_t w = NEVER;
    if (f->buf >= 0) {
        uint64_t x = f->buf_ready > f->dec_end ? f->buf_ready : f->dec_end;
        if (x > t) w = x;
    } else if (es->offchip && es->dma.pf && f->next_fetch < es->k.sim->prog->n_instr) {
        uint64_t r = es->dma.itcm_ready[f->next_fetch];
        if (r != SIM_NEVER && r > t) w = r;
    }
    if (es->offchip) {
        uint64_t d = sim_dma_wake(&es->dma, t);
        if (d < w) w = d;
    }
    return w;
}

/* ---- the watchdog ------------------------------------------------------------------------ */

/* ENPU_E_INTERNAL for a run without progress up to cycle t (sim_wd_fail),
 * naming the units with work left. */
static int wd_fail(const cyc_state *es, const enpu_sim *sim, uint64_t t, int instr, enpu_err *err) {
    const core *k = &es->k;
    char busy[256] = "";
    if (es->dp.state == DP_EXEC) {
        if (!k->pe_done) sim_wd_busy(busy, sizeof busy, "PE array");
        if (k->ld_busy) sim_wd_busy(busy, sizeof busy, "loader");
        if (k->ws_on && !k->ws_done) sim_wd_busy(busy, sizeof busy, "weight reader");
        if (k->wq[0].count) sim_wd_busy(busy, sizeof busy, "main write queue");
        if (k->wq[1].count) sim_wd_busy(busy, sizeof busy, "skip write queue");
    }
    if (es->dp.state == DP_HELD) sim_wd_busy(busy, sizeof busy, "top controller (instruction held)");
    if (es->dp.state == DP_SYNC) sim_wd_busy(busy, sizeof busy, "host op");
    if (es->fe.buf >= 0) sim_wd_busy(busy, sizeof busy, "fetch unit");
    if (es->offchip && !sim_dma_idle(&es->dma)) sim_wd_busy(busy, sizeof busy, "DMA engines");
    return sim_wd_fail(sim, &es->wd, t, instr < 0 ? 0 : instr, busy, err);
}

/* ---- the executing chain ---------------------------------------------------------------- */

/* Steps (1)-(4) of cycle t for a fast-forward span (sim_ff_span). */
static int ff_top(void *ctx, uint64_t t, uint64_t *wake, enpu_err *err) {
    cyc_state *es = ctx;
    bool ended = false; /* `end` cannot start: the datapath is busy */
    int rc = top_steps(es, es->k.sim, t, &ended, err);
    if (!rc) *wake = es->wake = next_wake(es, t);
    return rc;
}

/* Runs the executing chain from cycle *tp (whose steps (1)-(4) have run)
 * through its last cycle, one cycle at a time: its units in the order of
 * core.h, and steps (1)-(4) of the cycles in which they can change anything
 * (`wake`).  *tp is then the cycle after the chain's last write. */
static int chain_run(cyc_state *es, enpu_sim *sim, uint64_t *tp, enpu_err *err) {
    core *k = &es->k;
    const uint64_t limit = max_cycles(sim);
    const bool offchip = es->offchip;
    const sim_obs *vcd = sim->obs && sim->obs->vcd ? sim->obs : NULL;
    uint64_t t = *tp, wake = es->wake;
    for (;;) {
        k->t = t;
        int rc;
        uint64_t adv = 0;
        if (k->ff.chain_ok) {
            /* fast-forward, never into the VCD window (it is sampled cycle
             * by cycle) */
            uint64_t end = limit;
            if (vcd && t < vcd->to) end = t >= vcd->from ? t : (vcd->from < end ? vcd->from : end);
            rc = sim_ff_span(k, end, &wake, ff_top, es, &adv, err);
            sim->ff_cycles += adv;
            if (rc) return rc;
            t = k->t;
        }
        if (!adv) {
            sim_sched_writers(k);
            sim_sched_op2(k);
            sim_sched_loader(k);
            sim_sched_weights(k);
            if ((rc = sim_pectl_step(k, err))) return rc;
            if (k->trace) {
                sim_core_track(k, TRK_BUS, k->main_use);
                sim_core_track(k, TRK_SKIP, k->skip_use);
            }
            if (sim->obs) {
                if (offchip) sample_all(es, sim->obs, t, &k->sig);
                else sample(sim->obs, t, &k->sig);
            }
            if (sim->cycle_hook) sim->cycle_hook(sim->hook_ctx, t, k);
        }
        /* a holding chain writes nothing: it ends when its last sum is in
         * the psum file, D cycles after its last issue (ISA 8) */
        if (k->pe_done && sim_sched_queues_empty(k) &&
            (!k->ch->ps_hold || t >= k->last_issue + (uint64_t)k->D)) {
            *tp = t + 1;
            return chain_finish(es, sim, t, err);
        }
        if (t - k->stall_guard > es->wd.bound) {
            sim_wd_progress(&es->wd, k->stall_guard);
            if (sim_wd_expired(&es->wd, t)) return wd_fail(es, sim, t, k->cur_row, err);
        }
        if (++t >= limit)
            return enpu_fail(err, ENPU_E_LIMIT,
                             "simulation stopped at cycle %" PRIu64 " (max_cycles) in instruction %d",
                             t, k->cur_row);
        if (t >= wake) {
            bool ended = false; /* `end` cannot start: the datapath is busy */
            if ((rc = top_steps(es, sim, t, &ended, err))) return rc;
            wake = es->wake = next_wake(es, t);
        }
    }
}

/* ---- the program ------------------------------------------------------------------------- */

static int cyc_run(cyc_state *es, enpu_sim *sim, enpu_err *err) {
    const enpu_program *p = sim->prog;
    memset(&es->fe, 0, sizeof es->fe);
    memset(&es->dp, 0, sizeof es->dp);
    es->fe.buf = es->fe.dec = -1;
    es->wake = 0;
    /* the longest wait inside a chain: a word through the DTCM's and the
     * weight memory's read ports, the PE pipeline and the requantizer, with
     * the pads and the psum buffer filled or drained an entry a cycle */
    const enpu_arch *a = &sim->arch;
    sim_wd_start(&es->wd, sim,
                 (uint64_t)(a->dtcm_read_latency + a->weight_mem_latency + a->pe_pipeline_depth +
                            a->requant_latency + a->ifmap_pad_depth + a->weight_pad_depth + a->psum_depth));
    es->run = RUN_NONE;
    es->k.ff.on = !sim->opts.per_cycle && !sim->step_every_cycle && !sim->cycle_hook;
    es->k.ff.portable = sim->ff_portable;
    sim->ff_cycles = 0;
    if (es->offchip) sim_dma_reset(&es->dma);
    k_observe_start(es, sim);
    if (!es->offchip) sample(sim->obs, 0, &idle_signals);
    const uint64_t limit = max_cycles(sim);
    uint64_t t = 0;
    for (;;) {
        if (t >= limit)
            return enpu_fail(err, ENPU_E_LIMIT, "simulation stopped at cycle %" PRIu64
                             " (max_cycles) in instruction %d",
                             t, es->fe.dec < 0 ? 0 : es->fe.dec);
        /* a cycle in which no chain executes at its start */
        bool ended = false;
        int rc = top_steps(es, sim, t, &ended, err);
        if (!rc && !ended) rc = ctrl_start(es, sim, t, &ended, err);
        if (rc) return rc;
        if (ended) break;
        es->wake = next_wake(es, t);
        if (es->dp.state == DP_HELD && t >= es->dp.from && is_chain(p, es->dp.instr) &&
            (!es->offchip || sim_tok_ready(&es->dma.tok, p->instr[es->dp.instr].pop, ENPU_QUEUE_COMPUTE))) {
            if ((rc = chain_start(es, sim, t, err)) || (rc = chain_run(es, sim, &t, err))) return rc;
            continue;
        }
        /* nothing changes before the next event: the cycles until then are
         * attributed at once (not with a VCD, whose samples are per cycle) */
        uint64_t next = es->wake;
        const datapath *dp = &es->dp;
        if (dp->state == DP_SYNC && dp->sync_done < next) next = dp->sync_done;
        if (dp->state == DP_HELD && dp->from > t && dp->from < next) next = dp->from;
        if (es->fe.dec_end > t && es->fe.dec_end < next) next = es->fe.dec_end;
        if (next == NEVER || next > limit || (sim->obs && sim->obs->vcd)) next = t + 1;
        /* no skip past the watchdog's deadline: a hang is reported where it
         * is one, not wherever the next event lies */
        if (next > sim_wd_deadline(&es->wd) && sim_wd_deadline(&es->wd) > t) next = sim_wd_deadline(&es->wd);
        attribute(es, sim, t, next - t);
        if (es->offchip && sim->obs) sample_all(es, sim->obs, t, &idle_signals);
        if (sim_wd_expired(&es->wd, next))
            return wd_fail(es, sim, next, es->dp.state != DP_IDLE ? es->dp.instr : es->fe.dec, err);
        t = next;
    }
    flush_run(es, sim, t);
    if (es->offchip) sim_dma_observe_end(&es->dma);
    sim->cycle = t;
    return 0;
}

static int cyc_run_entry(void *es, enpu_sim *sim, enpu_err *err) {
    return cyc_run(es, sim, err);
}

const enpu_sim_engine sim_engine_easynpu_cycle = {
    "easynpu", ENPU_ENGINE_EASYNPU, ENPU_SIM_CYCLE, cyc_create, cyc_destroy, cyc_run_entry,
};
