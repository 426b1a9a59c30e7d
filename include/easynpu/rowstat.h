/* The row-stationary engine's instruction contract (docs/rowstat.md).
 *
 * One `rs_conv` instruction is a whole convolution (a fully connected layer
 * is a convolution whose kernel covers its input) from DRAM to DRAM on the
 * PE array of the arch's rs_ parameters.  Its mapping fields (rs_e, rs_p,
 * rs_q, rs_r, rs_t, rs_hf, rs_gpar, rs_dbuf) fix everything the engine's
 * controller does: the passes over the array, what the global buffer holds,
 * the DMA commands between DRAM and the global buffer and their order, and
 * the layout of the weights in DRAM.  This header derives those from the
 * instruction, once, for the validator, the compiler (which chooses the
 * mapping and lays the weights out) and the simulator (whose controller runs
 * them); the timing of all of it is the simulator's, and the compiler's
 * model of it (src/compiler/rowstat/).
 *
 * Terms (Eyeriss's, Chen et al., ISCA 2016): a PE computes a 1-D
 * convolution of one filter row with one ifmap row; a PE set of hf rows x
 * e columns computes e output rows of one (filter, channel) pair, the
 * psums running down each column.  The array holds r sets down its columns
 * on different channels (their psums chained through) and t sets side by
 * side on different filters (or, with rs_gpar, different groups).  Each PE
 * interleaves p filters and q channels.  A pass is one use of the array:
 * output rows [y0, y0+ne), up to p*t filters, up to q*r channels, kernel
 * rows [k0, k0+nk) (a fold: ceil(hk/hf) folds when hk > hf).
 *
 * The global buffer holds the ifmap as loads: with rs_ict = 0 a strip's
 * input rows with every channel (one load per strip); with rs_ict > 0 a
 * tile of those rows with rs_ict channel blocks of one group, loaded for
 * each output block (strip, group block, filter block) again, since the
 * psums of one output block at a time fit the buffer, not the strip's
 * channels: the layers whose strips do not fit can still take full-height
 * PE sets.
 *
 * Images (rs_n = n > 1, the Eyeriss paper's N per pass): a pass runs n
 * images with the same filters in the PEs' filter loop buffers, so each
 * filter load (from DRAM and into the PEs) serves n images.  The ifmap of
 * the n images streams through the pass one after the other: a PE's output
 * columns are the n images' columns (n * wo units per filter), its window
 * refilled at each image's first column (the last unit of the image before
 * replaces the whole window, as a stride wider than the kernel does).  The
 * ifmap and ofmap in DRAM hold the n images one after the other (image i at
 * i * ifmap_img_words), an ifmap load holds the n images' rows (image i at
 * i * ifmap_img_bytes in its buffer), and the psum and output buffers hold
 * every psum of the block for each image: row, then image, then column. */
#ifndef EASYNPU_ROWSTAT_H
#define EASYNPU_ROWSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per output channel, after the filters: int64 bias, uint32 M, int32 S
 * (little-endian). */
#define ENPU_RS_PARAM_BYTES 16

/* What an rs_conv instruction implies (enpu_rs_geom_of). */
typedef struct enpu_rs_geom {
    int64_t es;                 /* bytes per value: 1 (int8) or 2 (int16) */
    int64_t wb;                 /* bytes per DRAM word */
    int64_t G, cpg, opg;        /* groups, input and output channels per group */
    int64_t wpp_in, wpp_out;    /* DRAM words per pixel of the ifmap and the ofmap */
    int64_t wi_p;               /* padded input width pl + wi + pr */
    int64_t ncols;              /* padded input columns some window uses, per image */
    int64_t n;                  /* images per pass: rs_n, 1 when 0 */
    int64_t nwo;                /* a pass's output columns per PE row: n * wo */
    /* mapping */
    int64_t e, p, q, r, t, hf;
    bool gpar;
    int64_t fb_size;            /* filters of a group per output block: p*t (p with rs_gpar) */
    int64_t cb_size;            /* channels of a group per pass: q*r */
    int64_t n_strips;           /* ceil(ho / e) */
    int64_t n_gb;               /* group blocks: G, or ceil(G / t) with rs_gpar */
    int64_t n_fb;               /* filter blocks per group block: ceil(opg / fb_size) */
    int64_t n_cb;               /* channel blocks: ceil(cpg / cb_size) */
    int64_t n_fold;             /* kernel folds: ceil(hk / hf) */
    int64_t n_blocks;           /* output blocks: n_strips * n_gb * n_fb */
    int64_t n_passes;           /* n_blocks * n_cb * n_fold */
    int64_t n_fblocks;          /* filter blocks in DRAM: n_gb * n_fb * n_cb * n_fold */
    int64_t block_ch;           /* output channels of a full output block: fb_size (x t with gpar) */
    int64_t strip_rows;         /* input rows a strip loads, at most */
    int64_t ict;                /* channel blocks per ifmap tile (0: the strip, every channel) */
    int64_t n_ct;               /* ifmap tiles per output block: ceil(n_cb / ict), 1 when ict = 0 */
    int64_t tile_ch;            /* channels of an ifmap load's pixel in the buffer: ci, or ict*cb_size */
    int64_t pix_bytes;          /* buffer bytes per pixel of an ifmap load */
    int64_t ifmap_img_bytes;    /* buffer bytes of one image's share of an ifmap load */
    int64_t n_iloads;           /* ifmap loads: n_strips, or n_blocks * n_ct */
    int64_t psum_bytes;         /* bytes of one psum in the global buffer (rs_psum_bits / 8) */
    bool multi;                 /* more than one pass per output block (psums kept in the buffer) */
    /* global buffer: regions, byte offsets (buffer 1 = buffer 0 when single) */
    int64_t ifmap_buf, filt_buf, psum_buf, out_buf;      /* bytes of one buffer of each */
    int64_t ifmap_off[2], filt_off[2], psum_off, out_off[2];
    int64_t glb_used;
    /* DRAM words: of the n images, and of one */
    int64_t ifmap_words, ofmap_words;
    int64_t ifmap_img_words, ofmap_img_words;
    int64_t filt_words;         /* the filter blocks */
    int64_t param_words;        /* the (bias, M, S) blocks */
    int64_t weight_words;       /* filt_words + param_words */
} enpu_rs_geom;

/* One pass (enpu_rs_pass_of).  Sets: horizontal set h < tu holds filters
 * (normal) or a group (rs_gpar); vertical set v < ru channels. */
typedef struct enpu_rs_pass {
    int64_t index;
    int64_t strip, block;       /* block = (strip * n_gb + gb) * n_fb + fb */
    int64_t gb, fb, cb, fold;
    int64_t fblock;             /* filter block in DRAM: ((gb*n_fb + fb)*n_cb + cb)*n_fold + fold */
    int64_t y0, ne;             /* output rows [y0, y0 + ne) */
    int64_t g0, ng;             /* groups [g0, g0 + ng): 1 group, or the rs_gpar sets' */
    int64_t f0, nf;             /* filters [f0, f0 + nf) of each group */
    int64_t c0, nc;             /* channels [c0, c0 + nc) of each group */
    int64_t k0, nk;             /* kernel rows [k0, k0 + nk) */
    int64_t tu, ru;             /* horizontal and vertical sets used */
    int64_t iload;              /* the ifmap load it reads (its strip when rs_ict = 0) */
    int ibuf;                   /* that load's buffer (0 or 1) */
    bool first, final;          /* first / last pass of its output block */
    bool strip_first, strip_last;
} enpu_rs_pass;

/* Derives *g from an rs_conv instruction.  Checks only what it needs not to
 * divide by zero (enpu_rs_validate checks the rest): ENPU_E_INVALID naming
 * the field. */
int enpu_rs_geom_of(const enpu_arch *a, const enpu_instr *in, enpu_rs_geom *g, enpu_err *err);

/* Semantic checks of an rs_conv instruction against the arch (docs/rowstat.md
 * "Validation"): geometry, mapping within the array and every buffer (loop
 * buffers, psum RAM, input FIFO, global buffer), the output network keeping
 * up, the DRAM blocks inside the DRAM and not overlapping, numerics in range.
 * ENPU_E_INVALID naming the field, its value and the limit. */
int enpu_rs_validate(const enpu_arch *a, const enpu_instr *in, enpu_err *err);

/* Whether the PE's filter loop buffer works as two banks for instruction
 * `in` (docs/rowstat.md "Filter banks"): on an arch with rs_filter_banks,
 * when a pass's filters fill at most half of it (2 * rs_p * rs_q * wk <=
 * rs_filter_lb_depth), the filter network streams the next pass's filters
 * into the other half while the current pass computes from this one.  The
 * same storage, split: no more entries, so no more area; it is the
 * controller's rule, not an instruction field. */
bool enpu_rs_filter_banked(const enpu_arch *a, const enpu_instr *in, const enpu_rs_geom *g);
/* The same rule from the fields it depends on (p = rs_p, q = rs_q, the
 * kernel's width wk): what the mapping search asks of a PE-set shape
 * before it has an instruction. */
bool enpu_rs_banks_fit(const enpu_arch *a, int64_t p, int64_t q, int64_t wk);

/* Pass k (0 <= k < n_passes) in the controller's order: strips, then group
 * blocks, filter blocks, channel blocks, kernel folds. */
void enpu_rs_pass_of(const enpu_rs_geom *g, const enpu_instr *in, int64_t k, enpu_rs_pass *out);

/* Filters of horizontal set h, channels of vertical set v, in pass ps. */
int64_t enpu_rs_set_filters(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t h);
int64_t enpu_rs_set_channels(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t v);
/* Output channel of filter m of set h; input channel of channel c of set
 * (h, v) (channels of the whole layer). */
int64_t enpu_rs_out_channel(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t h, int64_t m);
int64_t enpu_rs_in_channel(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t h, int64_t v,
                           int64_t c);
/* Output channels of an output block (the pass's block): count and the
 * channel of its i-th psum (the order of the psum and output buffers). */
int64_t enpu_rs_block_channels(const enpu_rs_geom *g, const enpu_rs_pass *ps);
int64_t enpu_rs_block_channel(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t i);

/* Values of filter block fb (a pass's filters, in the filter network's
 * order: v, kernel row, h, filter, column, channel) and its first DRAM word
 * relative to rs_weight_addr; the (bias, M, S) block of output block group
 * (gb, fb) the same way (its channels in enpu_rs_block_channel order). */
int64_t enpu_rs_fblock_values(const enpu_rs_geom *g, const enpu_instr *in, int64_t fblock);
int64_t enpu_rs_fblock_word(const enpu_rs_geom *g, const enpu_instr *in, int64_t fblock);
int64_t enpu_rs_param_word(const enpu_rs_geom *g, const enpu_instr *in, int64_t gb, int64_t fb);

/* The weight block's layout, value by value in DRAM order (the one
 * definition the compiler writes and the functional model reads): fw(ctx,
 * byte, idx) for each filter value, at byte offset `byte` from
 * rs_weight_addr's first byte, which is weight idx of the quantized node
 * (oc*K + (ic*hk + kernel row)*wk + column, K = (ci/groups)*hk*wk, ic within
 * the group); then fp(ctx, byte, ch) for each (bias, M, S) entry of
 * ENPU_RS_PARAM_BYTES, output channel ch. */
void enpu_rs_weight_layout(const enpu_rs_geom *g, const enpu_instr *in,
                           void (*fw)(void *ctx, int64_t byte, int64_t idx),
                           void (*fp)(void *ctx, int64_t byte, int64_t ch), void *ctx);

/* The pass whose filter block is fblock with strip 0 (the layout is the
 * same for every strip). */
void enpu_rs_fblock_pass(const enpu_rs_geom *g, const enpu_instr *in, int64_t fblock,
                         enpu_rs_pass *out);

/* Byte offset in the global buffer of input value (row, col, channel ch of
 * the layer) of image img (< n) for pass ps: in its ifmap load's buffer
 * (the image's share, row within its strip's rows, ch within its tile). */
int64_t enpu_rs_ifmap_byte(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_pass *ps,
                           int64_t img, int64_t row, int64_t col, int64_t ch);

/* The passes [*k0, *k1) that read ifmap load i. */
void enpu_rs_iload_passes(const enpu_rs_geom *g, int64_t i, int64_t *k0, int64_t *k1);

/* Input rows strip s loads: [*r0, *r1) of the unpadded input (clipped). */
void enpu_rs_strip_rows(const enpu_rs_geom *g, const enpu_instr *in, int64_t s, int64_t *r0,
                        int64_t *r1);

/* ---- DMA commands (docs/rowstat.md "The controller") ---------------------- */

typedef enum enpu_rs_cmd_kind {
    ENPU_RS_LOAD_IFMAP = 0,     /* an ifmap load: a strip's input rows, every channel or a
                                   tile of them (rs_ict) -> ifmap buffer */
    ENPU_RS_LOAD_FILTERS,       /* a pass's filter block (+ its block's params on the block's
                                   first pass) -> filter buffer */
    ENPU_RS_STORE               /* an output block -> the ofmap in DRAM */
} enpu_rs_cmd_kind;

typedef struct enpu_rs_cmd {
    enpu_rs_cmd_kind kind;
    int64_t what;               /* ifmap load, pass or output block */
    int64_t dep;                /* the pass that must be done before it starts, -1 none */
    int64_t need;               /* the first pass that waits for it (n_passes: the layer's end) */
    int buf;                    /* global-buffer region (0 or 1) */
} enpu_rs_cmd;

/* The DMA command queue of the instruction, in issue order (malloc'd, *n
 * commands; NULL and ENPU_E_NOMEM when out of memory). */
enpu_rs_cmd *enpu_rs_commands(const enpu_rs_geom *g, const enpu_instr *in, int64_t *n,
                              enpu_err *err);

/* One contiguous piece of a command: bytes [dram, dram + bytes) of the DRAM
 * (byte addresses) and the global buffer's [glb, glb + bytes). */
typedef struct enpu_rs_run {
    int64_t dram, glb, bytes;
} enpu_rs_run;

/* Calls fn(ctx, run) for every run of command c, in order; the runs of a
 * store are byte-masked writes of a block's channels. */
void enpu_rs_cmd_runs(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_cmd *c,
                      void (*fn)(void *ctx, const enpu_rs_run *run), void *ctx);

/* The pass that is the last of output block o. */
int64_t enpu_rs_block_last_pass(const enpu_rs_geom *g, int64_t o);

/* MACs of an rs_conv (the model's: ho*wo*co*(ci/groups)*hk*wk, times its
 * images). */
int64_t enpu_rs_macs(const enpu_instr *in);

#ifdef __cplusplus
}
#endif
#endif
