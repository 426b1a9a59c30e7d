/* Private state of the systolic engine's compiler back end (docs/systolic.md
 * "Compiler"), one file per phase:
 *   lower.c   quantized nodes -> layers: sya_conv / sya_dwconv / sya_fc with
 *             their weights in the engine's layout, host ops for what the
 *             array cannot do, data movement as views where it is free;
 *   tile.c    per layer, the unit size and loop order that minimise the
 *             cost model;
 *   cost.c    the cost model: the controller's timing rules unit by unit;
 *   hazard.c  its hazard scoreboard;
 *   traffic.c its counts of every read, write and operation, closed form;
 *   plan.c    main DTCM (by lifetime) and weight memory;
 *   emit.c    the program;
 *   compile.c the driver and the mapping report.
 * enpu_compile (src/compiler/compile.c) hands an arch whose engine is
 * "systolic" to sya_compile. */
#ifndef ENPU_SYA_CC_H
#define ENPU_SYA_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/compiler.h"
#include "easynpu/quant.h"
#include "easynpu/systolic.h"

enum { SC_SYA = 0, SC_HOST };

/* A feature map in the main DTCM: [h][w][c], c folded into words. */
typedef struct sc_store {
    int64_t h, w, c, words;
    int tensor;           /* the tensor whose natural layout it is */
    int def, last;        /* step writing it (-1: the host, before the run), last step reading it */
    bool keep;            /* a graph output: live to the end */
    int64_t addr;         /* first word, -1 before the plan */
} sc_store;

/* Where a tensor's elements are: a storage and, per element, its position in
 * the storage's [h][w][c] order (NULL: the natural position). */
typedef struct sc_view {
    int store;            /* -1: not in the main DTCM (a float host tensor, or unused) */
    int64_t *pos;
} sc_view;

typedef struct sc_layer {
    int kind;             /* SC_SYA or SC_HOST */
    int node;             /* the quantized node */
    enpu_instr ins;       /* SC_SYA: geometry, numerics, unit sizes; addresses by plan.c */
    int in_store, out_store;
    int out;              /* the output tensor it computes (-1) */
    int8_t *w;            /* weights in the engine's layout, w_bytes */
    int64_t w_bytes;
    int32_t *bias;        /* [co] */
    uint32_t *M;
    int8_t *S;
    int64_t macs;         /* the model's (enpu_node_macs) */
    char *note;
} sc_layer;

typedef struct sc {
    const enpu_graph *g;
    const enpu_arch *a;
    const enpu_compile_opts *o;
    enpu_err *err;
    int64_t wb;           /* SRAM word bytes */
    sc_layer *L;
    int nl, capl;
    sc_store *S;
    int ns, caps;
    sc_view *tv;          /* per tensor */
    enpu_move_report *mv;
    int nmv, capmv;
    char **notes;
    int nnotes;
    int64_t main_peak;    /* words */
    uint8_t *wimg;        /* weight-memory image */
    size_t wlen;
} sc;

/* lower.c */
/* The quantized kinds the array has no kernel for (bit 1 << enpu_qkind):
 * element-wise Add and Mul, table activations and max pooling.  The quantizer leaves them
 * to the host, so the golden reference computes them as the host will. */
unsigned sya_host_kinds(void);
int sc_lower(sc *c);
int sc_note(sc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* tile.c */
int sc_tile(sc *c);
/* The cycles of one instruction's units on their own (issue of the first to
 * the last write), by the controller's rules without hazards: the tiling
 * search's objective. */
int64_t sc_cost_layer(const enpu_arch *a, const enpu_instr *in);
/* hazard.c: the cost model's scoreboard (the controller's rule, docs/systolic.md
 * "Timing" step 4; the simulator keeps its own).  sc_board_ready: the
 * earliest cycles unit u of instruction `instr` may enter the array, *raw
 * for its inputs (their last write by another instruction +
 * dtcm_read_latency + 1), *war for its outputs (their last read or write
 * by another instruction - K - requant_latency + 1), -1: none.
 * sc_board_commit books u entering at T (its reads at its last read cycle,
 * T + rows + K - 2 - dtcm_read_latency; row r's word completed by column c
 * at T + K + r + c + requant_latency) and returns its last write's cycle.
 * sc_board_init: -1 when out of memory. */
typedef struct sc_board {
    int64_t n;
    int64_t *rd, *wr;
    int32_t *rd_by, *wr_by;
} sc_board;
int sc_board_init(sc_board *b, int64_t words);
void sc_board_free(sc_board *b);
void sc_board_ready(const sc_board *b, const enpu_arch *a, const enpu_instr *in, int instr,
                    const enpu_sya_shape *s, const enpu_sya_unit *u, int64_t *raw, int64_t *war);
int64_t sc_board_commit(sc_board *b, const enpu_arch *a, const enpu_instr *in, int instr,
                        const enpu_sya_shape *s, const enpu_sya_unit *u, int64_t T);
/* traffic.c: adds systolic instruction in's counts (docs/systolic.md
 * "Statistics") to rd, wr (ENPU_MEM_COUNT) and uops (ENPU_UOP_COUNT), its
 * fetch aside; sc_itcm_words: the ITCM words one instruction is fetched in. */
void sc_count_instr(const enpu_arch *a, const enpu_instr *in, int64_t *rd, int64_t *wr, int64_t *uops);
int64_t sc_itcm_words(const enpu_arch *a);
/* plan.c */
int sc_plan(sc *c);
/* emit.c */
int sc_emit(sc *c, enpu_program *p);
/* compile.c */
int sya_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                enpu_program *prog, enpu_compile_report *rep, enpu_err *err);

#endif
