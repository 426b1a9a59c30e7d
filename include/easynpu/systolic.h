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
 * added in the output path, then enpu_requant (numerics.h).
 *
 * Only what defines an instruction is here: its shape, units and addresses.
 * What a unit reads and writes, and when, the simulator counts where it
 * happens and the cost model computes by its own rules (docs/systolic.md
 * "Statistics"), each with its own hazard scoreboard, so that their
 * equality (tested) checks both. */
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

#ifdef __cplusplus
}
#endif
#endif
