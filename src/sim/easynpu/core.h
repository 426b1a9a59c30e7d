/* State of the cycle-accurate EasyNPU core while it executes one chain
 * (docs/microarch.md §11).  One struct per hardware unit, each advanced once
 * per clock by its own file:
 *
 *   scheduler.c   unit cursor (outer loops), ifmap loader with padding and
 *                 dilation, weight stream, op2 stream, ofmap/skip write
 *                 queues, DTCM bus and skip port arbitration (writes win)
 *   ifmap_pad.c   P pads x Dif entries, banks, valid bits
 *   weight_pad.c  the weight pad: a circular buffer of Dw words (also the
 *                 op2 FIFO at the PE's bias port)
 *   pe_ctrl.c     inner loops (passes, cycles), issue conditions, stalls,
 *                 cycle attribution
 *   pe.c          PE array: MAC / compare / bypass, psum file, requantizer
 *                 output stage, fused-stage feedback
 *   cycle.c       top controller timing (fetch, decode, dispatch, chains,
 *                 sync, end) and the global per-cycle loop (§13.6)
 *   dma.c         DMA engines, dependency tokens, instruction prefetcher,
 *                 race checks (§13; dma.h), over the DRAM channel
 *                 (sim/dram.c)
 *
 * Evaluation order inside a cycle (all decisions use start-of-cycle state,
 * §11.1): writers, op2 reader, loader, weight reader, PE controller.  Every
 * buffer is allocated once per simulator (sized by the arch and program):
 * nothing is allocated per cycle. */
#ifndef ENPU_SIM_CORE_H
#define ENPU_SIM_CORE_H

#include "sim/easynpu/chain.h"
#include "sim/observe.h"

#define NEVER UINT64_MAX

/* ---- outer-loop cursor (scheduler.c) -------------------------------------- */

typedef struct unit_cur {
    int64_t u;                   /* unit index in the chain */
    int64_t blk, g, k;           /* output-channel block = g*nbk + k (§12.3) */
    int64_t zse;                 /* psum words per position in this block */
    int64_t ty, tx, kz, band;    /* tile row, tile column, input word, kernel row band */
    int64_t kz_lo, kz_hi;        /* words of the block (inclusive) */
    int64_t kh0, nkh;            /* kernel rows of the band */
    int64_t x, y, xi, yi;        /* tile size, input tile size */
    int64_t q, npos;             /* cycles per psum word, positions x*y */
    int64_t oy0, ox0;            /* output origin of the tile */
    int64_t iy0, ix0;            /* input origin (may be negative: padding) */
    int64_t c_lo, c_hi;          /* BasicConv: channels of word kz in the block */
    bool tile_first, tile_last;  /* first / last unit of its tile (BasicConv) or
                                    channel group (channel-wise) */
    bool done;                   /* past the last unit */
} unit_cur;

void sim_unit_first(const sim_chain *c, unit_cur *u);
void sim_unit_next(const sim_chain *c, unit_cur *u);
/* Pad-reading passes of a unit. */
int64_t sim_unit_passes(const sim_chain *c, const unit_cur *u);

/* Registers of pad-reading pass p of a unit. */
typedef struct pass_info {
    int64_t c;                   /* input channel (BasicConv) */
    int64_t kh, kw;              /* kernel tap */
    int64_t lane;                /* broadcast lane (if_ch_addr) */
    int64_t wbase;               /* weight word of ozi = 0 */
} pass_info;

void sim_pass_info(const sim_chain *c, const unit_cur *u, int64_t p, pass_info *pi);

/* ---- ifmap pads (ifmap_pad.c) ---------------------------------------------- */

typedef struct pad_bank {
    int64_t unit;                /* unit held (-1: none yet) */
    bool loaded;                 /* every word issued */
    uint64_t valid_at;           /* usable from (after loaded) */
    uint64_t done_at;            /* last pad-reading cycle of the unit (NEVER: not yet) */
    int64_t denied;              /* bus requests of this unit denied */
    uint64_t start;              /* first issue cycle */
} pad_bank;

typedef struct ifpad {
    int P, depth, bank_size, nbanks;
    int8_t *data;                /* [depth][P] */
    uint8_t *mark;               /* [depth] padding word */
    pad_bank bank[2];
} ifpad;

int sim_ifpad_init(ifpad *p, const enpu_arch *a, enpu_err *err);
void sim_ifpad_free(ifpad *p);
void sim_ifpad_reset(ifpad *p, bool dbuf);
static inline int sim_ifpad_bank_of(const ifpad *p, int64_t unit) {
    return p->nbanks == 2 ? (int)(unit & 1) : 0;
}

/* ---- word FIFO: the weight pad and the op2 FIFO (weight_pad.c) -------------- */

typedef struct wfifo {
    int depth, P;
    int head, count;             /* count = held + in flight */
    int8_t *data;                /* [depth][P] */
    uint64_t *ready;             /* [depth] usable from */
} wfifo;

int sim_wfifo_init(wfifo *f, int depth, int P, enpu_err *err);
void sim_wfifo_free(wfifo *f);
static inline void sim_wfifo_reset(wfifo *f) { f->head = f->count = 0; }
/* Reserves the tail slot for a word usable from `ready`; returns its data. */
static inline int8_t *sim_wfifo_push(wfifo *f, uint64_t ready) {
    int s = (f->head + f->count) % f->depth;
    f->ready[s] = ready;
    f->count++;
    return f->data + (size_t)s * (size_t)f->P;
}
static inline int sim_wfifo_slot(const wfifo *f, int k) { return (f->head + k) % f->depth; }
static inline bool sim_wfifo_ready(const wfifo *f, int k, uint64_t t) {
    return k < f->count && f->ready[sim_wfifo_slot(f, k)] <= t;
}
static inline const int8_t *sim_wfifo_at(const wfifo *f, int k) {
    return f->data + (size_t)sim_wfifo_slot(f, k) * (size_t)f->P;
}
static inline void sim_wfifo_pop(wfifo *f, int n) {
    f->head = (f->head + n) % f->depth;
    f->count -= n;
}

/* ---- write queues (scheduler.c) -------------------------------------------- */

typedef struct wq_entry {
    int64_t addr;
    uint64_t ready;
    uint64_t wt;                 /* fast-forward: the cycle its writer writes it */
    int dst, len;                /* lanes written: [dst, dst+len) (incl. zero fill) */
} wq_entry;

typedef struct wqueue {
    int mem;                     /* ENPU_MEM_MAIN or _SKIP */
    int cap;                     /* words (§11.8) */
    int ring;                    /* entries allocated (>= cap, >= the largest cycle) */
    int head, count;
    wq_entry *e;
    int8_t *data;                /* [ring][P] */
} wqueue;

/* ---- PE array (pe.c) -------------------------------------------------------- */

typedef struct pe_array {
    int P, rows, depth;
    int64_t *psum;               /* [rows][depth][P] */
    int8_t *sval;                /* [rows][depth][P] requantized value fed back */
    uint64_t *ready;             /* [depth] stage output ready at (all rows alike) */
    int32_t *bias;               /* [n_words][P] head bias per lane (0: none) */
    int *nval;                   /* [n_words] lanes holding a channel (a prefix) */
} pe_array;

int sim_pe_init(pe_array *pe, const enpu_arch *a, int64_t max_lanes, enpu_err *err);
void sim_pe_free(pe_array *pe);

/* ---- PE controller (pe_ctrl.c) ----------------------------------------------- */

typedef struct pectl {
    unit_cur u;                  /* current unit */
    int64_t n_conv, n_pass;      /* pad-reading passes, all passes of the unit */
    int64_t pass;                /* current pass */
    int64_t k, len;              /* cycle in the pass, pass length */
    int stage;
    /* registers of the current pass */
    int64_t tap_off, lane, bank_base;
    bool first, final, reads_pad, weighted, op2, writes_main, writes_skip;
    int64_t *hw_base;            /* [rows*depth] entry of position p at tap 0 */
    int why;                     /* the last cycle's decision (PC_*: the RTL's
                                    co-simulation compares it, docs/rtl.md) */
} pectl;

/* What the PE controller decided in a cycle: issued, or the first stall
 * reason of sim_pectl_step (include/easynpu/cosim.h numbers them alike). */
enum { PC_ISSUE = 0, PC_FILL, PC_WAIT_UNIT, PC_WAIT_OP2, PC_WEIGHT, PC_OFMAP, PC_PSUM, PC_DONE };

enum { WAIT_NONE = 0, WAIT_UNIT, WAIT_OP2 };

/* Per-cycle control signals (VCD, docs/microarch.md §1 and the seed's
 * control-signal table). */
typedef struct sim_signals {
    int64_t ps_addr, if_hw_addr, if_ch_addr, w_och_gcnt, stage;
    int pe_valid, ps_outer_en, ps_back_en, maxpool_en, byp_mul_en;
    int if_valid, if_ready, of_valid, of_ready, w_valid, w_ready, sk_valid, sk_ready;
    int op2_valid, op2_ready;
} sim_signals;

/* Trace track labels. */
enum { TRK_TOP = 1, TRK_PE, TRK_LOAD, TRK_BUS, TRK_WBUS, TRK_SKIP, TRK_LAYERS, TRK_FETCH };
enum { BUS_IDLE = 0, BUS_WRITE, BUS_OP2, BUS_LOAD, BUS_PARAM, BUS_WEIGHT };

typedef struct trk_run {
    int label;                   /* -1: none */
    uint64_t start;
} trk_run;

/* A trace record held back during a fast-forward span (fastfwd.c): spans are
 * recorded in the order the per-cycle loop records them, by `key` (cycle *
 * 8 + the step of the unit that records it, §13.6). */
typedef struct ff_rec {
    uint64_t key, start, end;
    int track, label;            /* label -1: the loader's "unit N" span */
    int64_t unit;
} ff_rec;

/* Fast-forward (fastfwd.c, docs/microarch.md §15). */
typedef struct ffstate {
    bool on;                     /* the run may fast-forward (not opts.per_cycle, ...) */
    bool chain_ok;               /* the executing chain qualifies (sim_ff_chain) */
    int32_t *ps;                 /* [psum_depth][P] 32-bit psums of row 0 during a span */
    int64_t *hw;                 /* [psum_depth] pad entry of tile position j at tap 0 */
    int64_t *hwb;                /* [psum_depth] the same in bytes (entry * P) */
    int64_t *toff, *wtap;        /* [max taps] pad offset and weight word offset of a tap */
    int64_t max_taps;
    bool geo_ok;                 /* hw, hwb, toff, wtap hold the tile shape geo[] */
    int64_t geo[5];              /* x, xi, npos, kh0, nkh */
    uint64_t last_wt[2];         /* write cycle of the last entry of each write queue */
    int bus_lbl[3];              /* label of the last event cycle: DTCM bus, weight bus, skip port */
    uint64_t bus_last[3];        /* that cycle */
    bool buffering;              /* trace records go to rec (a span is running) */
    ff_rec *rec;
    size_t n_rec, cap_rec;
    bool rec_oom;
    /* the datapath of whole passes: operand pairs and repacked weights */
    bool portable;               /* the portable kernels even where SSE2 is there */
    int64_t max_pairs;           /* pass pairs of a unit, at most */
    int16_t *x2;                 /* [psum_depth][max_pairs][2] operand pairs */
    int16_t *w2;                 /* a unit's weights, pass pairs interleaved per lane */
    size_t w2_n, w2_cap;         /* int16s used, allocated */
    int64_t *w2_at;              /* [w2_keys] where a weight set starts in w2 (-1: not yet) */
    int64_t w2_keys, w2_keys_cap;
} ffstate;

typedef struct core {
    enpu_sim *sim;
    const sim_chain *ch;
    const enpu_arch *a;
    sim_mem *mem;
    int P;
    int64_t D, Rq, Ld, Lw, Dw;
    uint64_t t, t0;
    /* units */
    ifpad pad;
    wfifo wpad;                  /* weight pad */
    wfifo op2;                   /* op2 FIFO */
    pe_array pe;
    wqueue wq[2];                /* main, skip */
    /* parameters */
    int64_t par_left;
    uint64_t par_ready;
    /* loader */
    unit_cur ld;
    bool ld_busy;
    int64_t ld_j;
    uint64_t ld_prev_issued;     /* cycle the previous unit's last word issued */
    /* weight stream: its own walk over the units and passes */
    bool ws_on, ws_done;
    unit_cur ws;
    int64_t ws_p, ws_np, ws_o;
    pass_info ws_pi;
    /* op2 stream */
    unit_cur os;
    int os_stage;                /* index into the chain's stages; -1: next unit */
    int64_t os_k, os_r;
    bool os_done;
    int64_t op2_denied;          /* since the stage last consumed an op2 word */
    /* PE controller */
    pectl pc;
    bool started, pe_done;
    uint64_t last_issue;
    int wait_kind;
    uint64_t wait_start;
    int64_t wait_W;
    int wait_row;
    int cur_row;
    /* per-cycle bus use (scheduler.c) */
    bool main_busy, skip_busy;
    int main_use, skip_use;      /* BUS_* label of this cycle's access */
    /* scratch for writes of one cycle */
    sim_run *runs;               /* [rows*P*2] */
    /* observation */
    sim_signals sig;
    trk_run trk[8];
    bool trace;                  /* spans are recorded */
    uint64_t stall_guard;        /* last cycle anything progressed */
    ffstate ff;
} core;

/* scheduler.c */
int sim_sched_init(core *k, enpu_err *err);
void sim_sched_free(core *k);
void sim_sched_start(core *k);   /* chain start: cursors, streams, queues */
void sim_sched_writers(core *k); /* cycle step 1 */
void sim_sched_op2(core *k);     /* cycle step 2 */
void sim_sched_loader(core *k);  /* cycle step 3 */
void sim_sched_weights(core *k); /* cycle step 4 */
bool sim_sched_queues_empty(const core *k);
/* Room in write queue q for n more words (§11.8). */
bool sim_wq_room(const core *k, int q, int n);
/* Appends a write of lanes [r->dst, r->dst+len) (+ zero fill) of one word
 * whose lane values are vals[r->src ..], ready at `ready`. */
void sim_wq_push(core *k, int q, const sim_run *r, const int8_t *vals, uint64_t ready);

/* pe_ctrl.c */
void sim_pectl_start(core *k);
/* Cycle step 5: issue or stall; attributes the cycle.  Returns 0 or an
 * error (accumulator overflow). */
int sim_pectl_step(core *k, enpu_err *err);
/* Closes a pending wait (called at chain end too). */
void sim_pectl_resolve_wait(core *k);

/* pe.c: one issued cycle of the current pass for every active row. */
int sim_pe_issue(core *k, enpu_err *err);
/* Words the issue would produce into queue q (for the room check). */
int sim_pe_count_writes(core *k, int q);

/* pe.c: the requantizer's output word from the accumulators of n lanes
 * (channels chan[i]; a max pool's empty accumulator gives 0), zero past n;
 * an accumulator outside acc_bits is the run's error (output (oy, ox)). */
int sim_pe_output(const core *k, const sim_stage *s, const int32_t *chan, int n,
                  const int64_t *acc, int64_t oy, int64_t ox, int8_t *out, enpu_err *err);
/* pe.c: the write runs stage s produces into queue q at output (oy, ox)
 * for psum word wdx (lane table), into out; returns their count. */
int sim_pe_runs(const core *k, int q, int s, int64_t oy, int64_t ox, int64_t wdx, sim_run *out);

/* pe_ctrl.c: puts the PE controller on pass `pass`, cycle kk of its
 * current unit (pc.u) as the per-cycle steps would have left it. */
void sim_pectl_seek(core *k, int64_t pass, int64_t kk);
/* pe_ctrl.c: the psum entries unit u uses, into every stage row's peak. */
void sim_pectl_peak(core *k, const unit_cur *u);

/* Attribution helpers (cycle.c) */
void sim_core_account(core *k, int row, enpu_activity a, uint64_t n, uint64_t start);
/* Counts n cycles of activity a from `start` on a row, without a trace record. */
void sim_core_count(core *k, int row, enpu_activity a, uint64_t n, uint64_t start);
void sim_core_track(core *k, int track, int label);
/* sim_core_track with the label changing at cycle x (x >= the run's start). */
void sim_core_track_at(core *k, int track, int label, uint64_t x);
/* Records a span of a track's label (the loader's unit spans: label -1,
 * named after `unit`) now, or into the fast-forward buffer. */
void sim_core_emit(core *k, int track, int label, int64_t unit, uint64_t start, uint64_t end);

/* ---- fast-forward (fastfwd.c) ------------------------------------------------ */

int sim_ff_init(core *k, int64_t max_taps, enpu_err *err);
void sim_ff_free(core *k);
/* At chain start: whether the chain can be fast-forwarded at all. */
void sim_ff_chain(core *k);
/* Steps (1)-(4) of §13.6 in cycle t (the top controller, the DMA side);
 * *wake gets the next cycle they may act in. */
typedef int (*sim_ff_top)(void *ctx, uint64_t t, uint64_t *wake, enpu_err *err);
/* From cycle k->t (none of its steps run yet), advances every unit of the
 * executing chain through the cycles [k->t, k->t + *adv) exactly as the
 * per-cycle steps would, when the state proves that the PE array issues in
 * each of them; *adv = 0 when it does not (or the stretch would be short).
 * Never past `end` (exclusive); in each cycle t = *wake on the way it runs
 * top(ctx, t, wake) first, as the per-cycle loop does.  Returns 0 or an
 * error (accumulator overflow, or top's). */
int sim_ff_span(core *k, uint64_t end, uint64_t *wake, sim_ff_top top, void *ctx, uint64_t *adv,
                enpu_err *err);

#endif
