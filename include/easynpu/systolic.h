/* The systolic engine's instructions: the contract between its compiler
 * back end (src/compiler/systolic/) and its simulator (src/sim/systolic/),
 * docs/systolic.md.
 *
 * An instruction (sya_conv, sya_dwconv, sya_fc) is G independent matrix
 * products out[p][o] = sum_k A[p][k] * W[k][o] (p < N output points, o < F
 * filters, k < K): a convolution's im2col rows (a point's window, channels
 * innermost), G = its groups; a depthwise convolution's channels (F = 1, K =
 * the window); a fully connected layer's one point (K = the whole stored map).
 * The array computes one *unit* at a time: sya_nip points (one per row) by
 * sya_nf filters (one per column), K steps.  Units are numbered in the
 * instruction's loop order (sya_loop): for each product, point groups outer
 * and filter tiles inner, or the reverse.
 *
 * Memory layout (words of enpu_arch_word_bytes bytes, the SRAM word):
 *   ifmap  [hi][wi][ci], ci folded into ceil(ci/wb) words per pixel
 *   ofmap  [ho][wo][co], likewise
 *   weights conv/fc: [G][K][F], each row of F filters folded into
 *           ceil(F/wb) words; depthwise: [ci][K], each channel's K weights
 *           from a word boundary (ceil(K/wb) words)
 *   bias   co int32 (little-endian), from bias_addr
 *   quant  co x (uint32 M, uint32 S), from quant_addr (as EasyNPU's)
 * The accumulator of a PE holds sum_k A*W (sya_acc_bits signed); the bias is
 * added in the output path, then enpu_requant (numerics.h). */
#ifndef EASYNPU_SYSTOLIC_H
#define EASYNPU_SYSTOLIC_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/isa.h"
#include "easynpu/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An instruction seen as matrix products and units. */
typedef struct enpu_sya_shape {
    int64_t G;          /* independent products (conv groups; depthwise: channels; fc: 1) */
    int64_t N;          /* output points of each (ho * wo; fc: 1) */
    int64_t K;          /* reduction steps */
    int64_t F;          /* filters of each (co / G; depthwise: 1) */
    int64_t cpg;        /* input channels each product reads (ci / G; depthwise: 1) */
    int64_t taps;       /* window positions (hk * wk; fc: hi * wi) */
    int64_t nip, nf;    /* points and filters per unit */
    int64_t ng, nt;     /* point groups and filter tiles per product */
    int64_t units;      /* G * ng * nt */
    bool dw, fc;
    int loop;           /* 0: point groups outer, 1: filter tiles outer */
} enpu_sya_shape;

/* The shape of a validated systolic instruction. */
void enpu_sya_shape_of(const enpu_instr *in, enpu_sya_shape *s);

/* One unit: product gi, point group g, filter tile f; its rows are the
 * points [p0, p0 + rows), its columns the filters [o0, o0 + cols) of
 * product gi. */
typedef struct enpu_sya_unit {
    int64_t gi, g, f;
    int64_t p0, rows, o0, cols;
} enpu_sya_unit;

/* Unit number u (0 <= u < s->units) in loop order. */
void enpu_sya_unit_at(const enpu_sya_shape *s, int64_t u, enpu_sya_unit *out);
/* Whether two units use the same filter tile (same product and tile): the
 * weight stream can continue without a new skewed block. */
static inline bool enpu_sya_same_tile(const enpu_sya_unit *a, const enpu_sya_unit *b) {
    return a->gi == b->gi && a->f == b->f;
}

/* Where step k of row r reads its activation: the word and the byte lane in
 * the main DTCM, or -1 (word) for a padding position, which reads zp_in. */
void enpu_sya_act_at(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                     const enpu_sya_unit *u, int64_t r, int64_t k, int64_t *word, int *lane);
/* Byte offset in the weight memory of the weight of step k, column c. */
int64_t enpu_sya_wgt_at(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                        const enpu_sya_unit *u, int64_t k, int64_t c);
/* Output channel of column c of unit u (in the ofmap's co channels). */
static inline int64_t enpu_sya_out_channel(const enpu_sya_shape *s, const enpu_sya_unit *u,
                                           int64_t c) {
    return u->gi * s->F + u->o0 + c;
}

/* The words a unit reads from the main DTCM, row by row: fn(ctx, word,
 * row) for every word of every row's window (a word two rows read is
 * visited twice; padding reads none).  Returns the count visited. */
int64_t enpu_sya_unit_reads(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                            const enpu_sya_unit *u, void (*fn)(void *ctx, int64_t word, int64_t row),
                            void *ctx);
/* The words a unit writes: fn(ctx, word, row, c_last, lane0, n) for each
 * output word of each row; c_last is the column whose result completes the
 * word (the word is written when it arrives), lanes [lane0, lane0 + n) are
 * the unit's.  Returns the count visited. */
int64_t enpu_sya_unit_writes(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                             const enpu_sya_unit *u,
                             void (*fn)(void *ctx, int64_t word, int64_t row, int64_t c_last,
                                        int lane0, int n),
                             void *ctx);
/* Weight-memory words a unit's weight stream reads. */
int64_t enpu_sya_unit_wgt_words(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                                const enpu_sya_unit *u);

/* Words of an instruction's blocks (docs/isa.md "Memory blocks"). */
int64_t enpu_sya_weight_words(const enpu_arch *a, const enpu_instr *in);

/* Semantic checks of a systolic instruction (called by enpu_instr_validate
 * for class SYA): the arch's engine is systolic, geometry, groups, unit
 * sizes within the array, every block inside its memory, no ifmap/ofmap
 * overlap.  ENPU_E_INVALID naming the field. */
int enpu_sya_instr_validate(const enpu_arch *a, const enpu_instr *in, enpu_err *err);
/* Its memory blocks (enpu_instr_blocks). */
int enpu_sya_instr_blocks(const enpu_arch *a, const enpu_instr *in, enpu_mem_block *out);
/* Its MACs (enpu_instr_macs): G * N * F * K. */
int64_t enpu_sya_instr_macs(const enpu_instr *in);

/* ---- the hazard scoreboard (docs/systolic.md "Chaining") -------------------
 * The controller starts a unit only when the words it reads have been
 * written (RAW) and the words it writes are no longer read or written by an
 * earlier instruction's units (WAR, WAW).  It keeps per main-DTCM word the
 * last cycle a started unit reads it and the last cycle one writes it, with
 * the instruction; the simulator's controller and the cost model use this
 * one board. */
typedef struct enpu_sya_board {
    int64_t words;
    int64_t *rd, *wr;           /* last read / write cycle, -1: none */
    int32_t *rd_by, *wr_by;     /* the instruction of that read / write */
} enpu_sya_board;

int enpu_sya_board_init(enpu_sya_board *b, int64_t words, enpu_err *err);
void enpu_sya_board_reset(enpu_sya_board *b);
void enpu_sya_board_free(enpu_sya_board *b);

/* The earliest cycle unit u of instruction `instr` may enter the array:
 * *raw from the words it reads (their last write + dtcm_read_latency + 1),
 * *war from the words it writes (their last read or write by another
 * instruction, less the unit's first write offset K + requant_latency, + 1);
 * both -1 when nothing constrains it. */
void enpu_sya_board_ready(const enpu_sya_board *b, const enpu_arch *a, const enpu_instr *in,
                          int instr, const enpu_sya_shape *s, const enpu_sya_unit *u,
                          int64_t *raw, int64_t *war);
/* Records unit u entering the array at cycle t: its reads (the last one at
 * t + rows + K - 2 - dtcm_read_latency) and its writes (word of row r
 * completed by column c at t + K + r + c + requant_latency).  Returns the
 * cycle of its last write. */
int64_t enpu_sya_board_commit(enpu_sya_board *b, const enpu_arch *a, const enpu_instr *in,
                              int instr, const enpu_sya_shape *s, const enpu_sya_unit *u, int64_t t);

#ifdef __cplusplus
}
#endif
#endif
