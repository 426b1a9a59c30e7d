/* The golden reference's fast kernels (golden.c uses them unless told to run
 * the reference loops).  They compute exactly what the reference loops of
 * golden.c compute, bit for bit: the same integer terms are summed (in int32,
 * which the graph check proves wide enough for every partial sum in any
 * order, so the order does not matter) and every output goes through the
 * same numerics.h requantization, in the graph's requant mode (easynpu, or
 * TFLite's rules and its ADD).  Only the data layout and the order of the
 * sums change:
 *
 *  - CONV, dense or grouped with several input channels per group (conv, FC):
 *    the input is copied once into a zero-point-padded NHWC int16 image, the
 *    weights once (at preparation) into rows of int16 runs, each run the
 *    weights that meet one contiguous stretch of that image (a whole kernel
 *    row kw*ci for a dense conv, cpg channels of one tap otherwise), padded
 *    with zero weights to a multiple of 16.  A microkernel then forms the dot
 *    products of 4 output channels with 3 (or 1) output pixels at once
 *    (gf_simd.dot4: SIMD int16 x int16 -> int32 multiply-adds where the CPU
 *    has them, plain C otherwise).  Reads past the end of a run meet zero
 *    weights, so they add nothing.
 *  - CONV with one input channel per group (depthwise, average pooling):
 *    per channel a padded int16 plane and rows of int32 accumulators
 *    (gf_simd.axpy).
 *  - CONV 1x1 per channel (BatchNormalization, Relu/Clip, rescale, a 1x1
 *    depthwise conv) and TABLE: lookup tables of all 256 int8 inputs, filled
 *    at preparation by the very functions the reference calls.
 *  - MAXPOOL: a plane padded with -128, which never wins over an input
 *    value, windows with no input position handled as the reference does.
 *  - ADD/MUL without broadcasting: one flat loop.
 * Everything else (MOVE, HOST, broadcasting ADD/MUL, shapes whose padded
 * copies would be too large) runs the reference loops. */
#ifndef ENPU_REF_GFAST_H
#define ENPU_REF_GFAST_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/quant.h"

/* Microkernels, one table per instruction set. */
typedef struct gf_simd {
    const char *name; /* "portable", "avx2", "vnni256" */
    /* out[p*4 + c] = sum over runs r < nr and j < rp of
     *   w[c*ws + r*rp + j] * x[base[p] + roff[r] + j]
     * for c < 4 and p < np (np in 1..3); rp is a multiple of 16. */
    void (*dot4)(const int16_t *w, int64_t ws, const int16_t *x, const int64_t *base, int np,
                 const int64_t *roff, int nr, int rp, int32_t *out);
    /* acc[i] += w * x[i] for i < n. */
    void (*axpy)(int32_t *acc, const int16_t *x, int32_t w, int64_t n);
} gf_simd;

extern const gf_simd gf_simd_portable;
/* The x86 tables (gfast_x86.c), NULL when this CPU (or build) lacks them:
 * AVX2 (vpmaddwd) and AVX-512 VNNI on 256-bit registers (vpdpwssd). */
const gf_simd *gf_simd_avx2_table(void);
const gf_simd *gf_simd_vnni_table(void);

/* Prepared state of one node; NULL means "run the reference loops". */
typedef struct gf_node gf_node;

/* Prepares node n of checked graph qg for the fast kernels with microkernels
 * `simd`: *out = NULL (and 0 returned) when the node has no fast kernel;
 * ENPU_E_NOMEM when memory runs out. */
int gf_prepare(const enpu_graph *qg, const enpu_node *n, const gf_simd *simd, gf_node **out,
               enpu_err *err);
void gf_free(gf_node *f);
/* Runs a prepared node: x = the int8 values of its inputs (in node input
 * order), y = its int8 output. */
void gf_run(gf_node *f, const int8_t *const *x, int8_t *y);

#endif
