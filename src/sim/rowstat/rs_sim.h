/* The row-stationary engine (docs/rowstat.md), one file per hardware unit:
 *   pe.c        the PE: input FIFO, ifmap loop buffer (the sliding window,
 *               with the note's "if trash" replacement), filter loop buffer,
 *               psum RAM, the MAC and the psum link to the PE below;
 *   noc.c       the multicast networks: a row node per PE row and a column
 *               node per PE, each with a configurable ID, passing a value
 *               only when the bus tag matches;
 *   glb.c       the global buffer and its read streams onto the networks;
 *   dma.c       the DMA engine between DRAM and the global buffer;
 *   collector.c the output network from the bottom PE row and the
 *               requantizer into the global buffer;
 *   ctrl.c      the controller: instructions, passes, the layer's DMA queue,
 *               statistics (the cycle engine);
 *   fastfwd.c   the cycle engine's fast-forward: a pass computed in one go
 *               when its schedule proves it raises no error (docs/rowstat.md
 *               "Fast-forward");
 *   functional.c the same results without time.
 * The timing rules are those of the compiler's cost model
 * (src/compiler/rowstat/cost.c), which must predict every cycle. */
#ifndef ENPU_SIM_ROWSTAT_H
#define ENPU_SIM_ROWSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/rowstat.h"
#include "sim/dram.h"
#include "sim/sim_internal.h"

#define RS_NET_LAT 2 /* global-buffer read to the PE: row node, column node (cycles) */

/* ---- the PE (pe.c) ---------------------------------------------------------------- */

/* The psum register between a PE and the one below (or the output network). */
typedef struct rs_link {
    bool full;
    int64_t unit;
    int64_t value;
    int64_t ready;     /* usable from this cycle */
    int64_t col;       /* PE column (the output network's order) */
} rs_link;

typedef struct rs_pe {
    /* the pass's registers (the controller loads them) */
    bool used;
    int64_t q, p, wk, wo, L, U, R;  /* channels, filters, window L = q*wk, units n*wo*p, replaced R */
    int64_t n;                      /* images (rs_n): the window refills at each image's first column */
    int64_t D;                      /* rs_pe_pipeline */
    /* input FIFO (values and the cycle each can be popped) */
    int32_t *fifo;
    int64_t *fifo_at;
    int64_t fifo_cap, fh, fn;
    /* ifmap loop buffer: a circular window of L values */
    int32_t *lb;
    int64_t lb_cap, lb_head, lb_n;
    /* filter loop buffer: p filters x wk columns x q channels */
    int32_t *flb;
    int64_t flb_cap, flb_n;
    /* psum RAM: one psum per filter */
    int64_t *psum;
    int64_t psum_cap;
    /* progress */
    bool filled;
    int64_t fill_at;   /* cycle of the window's last value */
    int64_t u, k;      /* next MAC: unit, MAC within the unit */
    int64_t xo, m;     /* the unit's output column (of the n images' n*wo) and filter (u = xo*p + m) */
    bool done;
    int64_t first_mac, last_mac;
    rs_link out;       /* to the PE below; the bottom PE's goes to the output network */
} rs_pe;

typedef struct rs_stats {
    uint64_t reads[ENPU_MEM_COUNT], writes[ENPU_MEM_COUNT];
    uint64_t uops[ENPU_UOP_COUNT];
} rs_stats;

int rs_pe_alloc(rs_pe *pe, const enpu_arch *a, enpu_err *err);
void rs_pe_free(rs_pe *pe);
/* Loads a pass's registers and empties the PE. */
void rs_pe_config(rs_pe *pe, bool used, int64_t q, int64_t p, int64_t wk, int64_t wo, int64_t n, int64_t sw,
                  int64_t D);
/* The network delivers an ifmap value (poppable from cycle `at`) or a
 * filter value into the PE's buffers; false when the buffer is full. */
bool rs_pe_push_ifmap(rs_pe *pe, int32_t v, int64_t at);
bool rs_pe_push_filter(rs_pe *pe, int32_t v);
/* One cycle of the PE: a window value into the loop buffer, or one MAC when
 * its operands and psum link allow (docs/rowstat.md "A PE").  in: the link
 * from the PE above (NULL at the top of the chain); go: the pass's filters
 * are all in.  Returns 1 when it issued a MAC, -1 when its last MAC waits
 * for the link below to be taken, 0 otherwise. */
int rs_pe_step(rs_pe *pe, int64_t t, rs_link *in, bool go, rs_stats *st);

/* ---- the networks (noc.c) ---------------------------------------------------------- */

typedef struct rs_packet {
    int32_t value;
    int32_t row_tag, col_tag;
    int64_t at;        /* cycle it reaches the PEs */
} rs_packet;

/* One network: a row node per PE row (its ID), a column node per PE (its
 * ID), and the two register stages a value crosses (docs/rowstat.md "The
 * multicast network"). */
typedef struct rs_noc {
    int rows, cols;
    int32_t *row_id;   /* [rows]; -1: the row takes nothing */
    int32_t *col_id;   /* [rows][cols]; -1: the PE takes nothing */
    rs_packet *stage[2];
    int n_stage[2];
    int cap;           /* packets per cycle */
    /* per row, the packets that passed its row node (stage 2 per row) */
    bool *row_pass;    /* [cap][rows] */
} rs_noc;

int rs_noc_init(rs_noc *n, int rows, int cols, int per_cycle, enpu_err *err);
void rs_noc_free(rs_noc *n);
/* Every node takes nothing (before a pass sets the IDs). */
void rs_noc_clear(rs_noc *n);
/* One cycle: the packets of two cycles ago reach the PEs whose row and
 * column IDs both match (deliver(ctx, row, col, value, at) for each), those
 * of last cycle pass the row nodes whose ID matches (*passed counts each
 * row a packet passes: its row bus is driven), and `sent` (n packets read
 * from the global buffer this cycle) enter. */
void rs_noc_step(rs_noc *n, int64_t t, const rs_packet *sent, int n_sent,
                 void (*deliver)(void *ctx, int row, int col, int32_t value, int64_t at), void *ctx,
                 uint64_t *passed);
bool rs_noc_empty(const rs_noc *n);

/* ---- the global buffer and its streams (glb.c) ---------------------------------------- */

/* The ifmap or filter stream of a pass: values in the network's order. */
typedef struct rs_stream {
    int64_t n, total;  /* next value, values */
    int64_t per_cycle;
} rs_stream;

/* The engine's state (ctrl.c), shared by the units. */
typedef struct rs_eng rs_eng;

/* Reads value `idx` of the pass's ifmap (filter) stream: its value and tags;
 * *pad when it is padding (generated, no global-buffer read). */
void rs_glb_ifmap_value(const rs_eng *e, int64_t idx, rs_packet *pk, bool *pad);
void rs_glb_filter_value(const rs_eng *e, int64_t idx, rs_packet *pk);
/* Little-endian access to the global buffer. */
int64_t rs_glb_get(const uint8_t *glb, int64_t off, int bytes);
void rs_glb_put(uint8_t *glb, int64_t off, int bytes, int64_t v);

/* ---- the DMA engine (dma.c) -------------------------------------------------------------- */

typedef struct rs_dma {
    sim_dram dram;
    const enpu_rs_cmd *cmd;
    int64_t ncmd, ci;          /* queue, next command */
    /* the command issuing: its runs and the next burst */
    enpu_rs_run *runs;
    int64_t nruns, run_cap, ri, off;
    bool issuing;
    int64_t words;             /* DRAM words the command touches */
    int64_t chan;              /* the engine may grant its next burst from this cycle */
    int64_t *done_at;          /* per command: completion cycle, -1 pending */
    int64_t last_grant_end;
    int64_t bursts;            /* bursts granted for the layer (rs_fault) */
} rs_dma;

int rs_dma_init(rs_dma *d, const enpu_arch *a, enpu_err *err);
void rs_dma_free(rs_dma *d);
/* The layer's queue (the controller's); the channel state persists. */
void rs_dma_start(rs_dma *d, const enpu_rs_cmd *cmd, int64_t ncmd, int64_t t, int64_t *done_at);
/* One cycle: completions (data copied) at t, then at most one burst grant
 * when the head command's pass is done (pass_done(dep) <= t). */
int rs_dma_step(rs_dma *d, rs_eng *e, int64_t t, enpu_err *err);
/* The next cycle anything can happen in the DMA engine (INT64_MAX: nothing). */
int64_t rs_dma_next(const rs_dma *d, const rs_eng *e, int64_t t);

/* ---- the output network and the requantizer (collector.c) ----------------------------------- */

/* One cycle: up to rs_psum_net_values psums from the bottom PEs' output
 * registers, oldest first, into the global buffer (accumulated, or
 * requantized on the pass that completes them). */
void rs_collect_step(rs_eng *e, int64_t t);

/* The requantizer (docs/numerics.md §12): psum plus bias `acc` to an output
 * value of the instruction's width. */
static inline int32_t rs_requant(const enpu_instr *in, int64_t es, int64_t acc, uint32_t M, int S) {
    return es == 2 ? enpu_requant_wide(acc, M, S, (int32_t)in->rs_zp_out, (int32_t)in->rs_lo, (int32_t)in->rs_hi)
                   : enpu_requant(acc, M, S, (int32_t)in->rs_zp_out, (int32_t)in->rs_lo, (int32_t)in->rs_hi);
}

/* ---- the fast-forward (fastfwd.c) ---------------------------------------------------------------- */

/* The schedule of a pass shape and filter arrival, relative to the pass's
 * start (a layer's passes of one such key share it: nothing in it depends
 * on the data, the start cycle or which output block the pass is in). */
typedef struct rs_ff_shape {
    int64_t ne, nc, nf, ng, nk;    /* the key: enpu_rs_pass's shape */
    int64_t tf;                    /* and the cycle its filters are all in (from its start) */
    bool ok;                       /* no error in the pass: it may be fast-forwarded */
    int64_t tc, tl, ts;            /* first MAC, last MAC, last psum served */
} rs_ff_shape;

#define RS_FF_MEMO 32

typedef struct rs_ff {
    bool on;                       /* the run fast-forwards (not opts.per_cycle, ...) */
    bool portable;                 /* sim->ff_portable: 64-bit sums for 8-bit data too */
    int64_t done_at;               /* the pass running was fast-forwarded: its last psum's cycle; -1 */
    rs_ff_shape memo[RS_FF_MEMO];  /* the instruction's shapes */
    int nmemo;
    /* scratch, grown as needed */
    int64_t *rd;                   /* per psum: the cycle it is ready for the output network */
    int64_t *srv;                  /* per psum: the cycle the output network takes it */
    int16_t *x;                    /* the ifmap stream's rows */
    int16_t *w;                    /* per horizontal set: its filters, a column's chain end to end */
    int16_t *v;                    /* per output column: the chain's windows end to end */
    int64_t *par;                  /* per block channel: bias, M, S (final passes) */
    size_t rd_cap, srv_cap, x_cap, w_cap, v_cap, par_cap;
} rs_ff;

void rs_ff_free(rs_ff *f);
/* Pass e->k, just started in cycle t (pass_start), in one go: returns the
 * cycle its last psum reaches the global buffer (the per-cycle path's
 * `done` cycle), everything up to then done -- the global buffer's psums
 * and outputs, every statistic of the pass, the engine's pass state --
 * except the DMA engine's cycles, which the controller still steps; or -1,
 * changing nothing, when the pass must run per cycle (docs/rowstat.md
 * "Fast-forward"). */
int64_t rs_ff_pass(rs_eng *e, int64_t t);

/* ---- the functional model (functional.c) ------------------------------------------------------- */

/* rs_conv `in` computed directly on the DRAM image `dram` (the program's
 * footprint): the functional mode's, and the cycle mode's check. */
int rs_func_conv(const enpu_arch *a, const enpu_instr *in, uint8_t *dram, enpu_err *err);

/* ---- fault injection (white-box tests only) ------------------------------------------------------ */

/* A fault a test plants in the engine (rs_eng.fault, through the
 * simulator's engine state) to check that the cost model's equality check
 * catches it: one count too many in one instruction, or one burst of an
 * instruction's DMA granted for one cycle more than the channel's rules
 * say (its data and the channel's next grant one cycle late).  Nothing
 * else sets it: all zero, the engine is the one specified. */
typedef enum rs_fault_kind {
    RS_FAULT_NONE = 0,
    RS_FAULT_READ,       /* reads[what] + 1 */
    RS_FAULT_WRITE,      /* writes[what] + 1 */
    RS_FAULT_UOP,        /* uops[what] + 1 */
    RS_FAULT_DRAM_LATE,  /* burst `burst` of the instruction one cycle late */
    RS_FAULT_MCAST_STRIDE /* the ifmap network's column IDs ignore the stride
                             (j + i for j*stride + i): PEs wait for rows never
                             sent (test_watchdog.c; per-cycle path only) */
} rs_fault_kind;

typedef struct rs_fault {
    rs_fault_kind kind;
    int instr;           /* the instruction it hits */
    int what;            /* enpu_memory or enpu_unit_op */
    int64_t burst;       /* the instruction's bursts counted from 0 */
} rs_fault;

/* ---- the controller (ctrl.c) ----------------------------------------------------------------- */

struct rs_eng {
    enpu_sim *sim;
    const enpu_arch *a;
    uint8_t *glb;
    rs_pe *pe;                 /* [rs_rows][rs_cols] */
    rs_noc ifmap_net, filter_net;
    rs_dma dma;
    /* the instruction running */
    const enpu_instr *in;
    int instr;
    enpu_rs_geom g;
    enpu_rs_cmd *cmd;
    int64_t ncmd;
    int64_t *cmd_done;         /* per command */
    int64_t *pass_done;        /* per pass: its PD, INT64_MAX while pending */
    /* the pass running */
    bool active;
    int64_t k;                 /* pass */
    enpu_rs_pass ps;
    int64_t t0, tf;            /* start; filters all in (TF) */
    int64_t filt_last;         /* cycle the last filter value was sent, -1 */
    bool banked;               /* the filter loop buffers are two banks (enpu_rs_filter_banked) */
    int64_t fl_start;          /* cycle the pass's filter stream starts: its start, or earlier
                                  into the other bank (docs/rowstat.md "Filter banks") */
    int64_t prev_filt_last;    /* the previous pass's filt_last */
    int64_t *fload;            /* per pass: its filter load's command, -1 */
    rs_stream ifs, fls;
    int64_t nK, kidx[4096];    /* the strip's ifmap rows the PEs take (k -> index), -1 */
    int64_t klist[4096];
    int64_t qv[64], qpre[65], ph[64];
    int64_t chain;             /* PEs down a column */
    int64_t psums_left;        /* psums not yet written to the global buffer */
    int64_t last_write;
    int64_t first_mac, last_mac;
    int64_t rq_pending;        /* writes in the requantizer pipeline */
    rs_stats st;               /* the instruction's */
    int overflow;              /* 1 + the PE a network could not deliver to this cycle, 0 */
    uint8_t *shadow;           /* opts.check: the DRAM replayed functionally */
    /* samples of the PE activity for the trace */
    uint64_t busy_cycles;
    rs_ff ff;                  /* the fast-forward's state */
    rs_fault fault;            /* white-box tests: a planted fault (none) */
    /* the watchdog (sim_internal.h); progress: a DRAM burst or a command
     * done, a pass configured, a value sent, delivered or moved in a PE, a
     * MAC, a psum written; a fast-forwarded pass is progress to its end */
    sim_wd wd;
};

/* The PE at array row `row` and column `col`. */
static inline rs_pe *rs_pe_at(rs_eng *e, int64_t row, int64_t col) {
    return &e->pe[row * e->a->rs_cols + col];
}

#endif
