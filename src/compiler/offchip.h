/* The off-chip plan's private types and the functions its phases share:
 * offchip.c (the entry point: steps, DRAM, notes), offchip_weights.c (1:
 * weights and their blocks), offchip_mem.c (2-4: residency, strips,
 * memory), offchip_items.c (5: items), icblocks.c (input-channel blocks). */
#ifndef ENPU_COMPILER_OFFCHIP_H
#define ENPU_COMPILER_OFFCHIP_H

#include "compiler/cc.h"

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

#define OOM() enpu_fail(c->err, ENPU_E_NOMEM, "out of memory")

/* The storage that holds storage s: the one it is a part of (a concat's
 * part), else s itself (-1 stays -1). */
static inline int target(const cc *c, int s) { return s >= 0 && c->S[s].into >= 0 ? c->S[s].into : s; }

typedef struct ost {
    int head;                 /* head layer (host layer for a host step) */
    bool host;
    int n, lay[16];           /* chain layers, head first */
    int in_s, op2_s, out_s;   /* storages read as ifmap / op2 and written (-1) */
    int skip_s;               /* storage whose skip copy it writes (-1) */
    bool strip_ok;            /* may be cut in row strips */
    int64_t ho;               /* output rows */
    int64_t rows;             /* output rows per strip */
    int nstrip;
    int shrink;               /* halvings of its share of the DTCM */
    int64_t inw, outw, opw;   /* words of one input / output / op2 buffer */
    int nbuf;                 /* buffers of each kind (1, or 2 for several strips) */
    int64_t inb[2], outb[2], opb[2];
    /* weights */
    int64_t wlo, whi;         /* its parameter words in the weight image */
    int ncob;                 /* output-channel blocks (1: none) */
    int64_t cob;              /* channels per block */
    int64_t *blo, *bwords;    /* per block: its parameters in the DRAM image */
    int64_t (*baddr)[4];      /* per block and chain instruction: weight, bias, quant, table */
    /* input-channel blocks (an fc whose one output-channel block does not
     * fit): each output-channel block is nicb instructions over parts of
     * the input, the sums held in the psum file between them (ISA 8) */
    int nicb;                 /* input-channel blocks (1: none) */
    int icu;                  /* the unit cut: 0 input rows, 1 pixels of a row, 2 words of a pixel
                               * (fc); 3 kernel rows (conv, every input channel); 4 kernel rows x
                               * channel words (conv: icper rows, icwper words a block) */
    int64_t icrows;           /* a conv's most output rows per instruction (one tile); 0: any */
    int64_t icn, icper;       /* units in the input, units per block */
    int64_t icwn, icwper;     /* icu 4: channel words of a pixel, words per block */
    int64_t icwc;             /* channels of a word (pes) */
    int64_t icbytes;          /* bytes of the largest block's weights and parameters */
    int64_t icfull;           /* bytes of one output-channel block with the whole input */
    int64_t *cost;            /* per strip height: modelled cycles of a strip (0: not yet) */
} ost;

typedef struct plan {
    cc *c;
    int *dstep;
    int nst;
    ost *st;
    int *step_of_layer;       /* layer -> step */
    bool *res, *sres;         /* per storage: resident in main / skip DTCM */
    bool *moved;              /* moved to DRAM by the plan (not a graph input/output) */
    int64_t *t0, *t1;         /* per storage: first and last step it is live in main */
    bool wstream;             /* weights streamed from DRAM */
    int wflip;                /* the weight-memory half the next load goes to */
    int64_t wdram;            /* DRAM word of the weight image */
    wbuf wimg;                /* the weight image (every layer, program order) */
    wbuf dimg;                /* DRAM image: weights, then output-channel block slices */
} plan;

/* ---- weights (offchip_weights.c) ---- */

void cc_off_step_weights(plan *pl);
int cc_off_weight_buffers(plan *pl);
int cc_off_cob_slices(plan *pl);

/* ---- residency, strips and memory (offchip_mem.c) ---- */

int cc_off_plan_memory(plan *pl);
void cc_off_live_range(const plan *pl, int s, int64_t *a, int64_t *b);

/* ---- items (offchip_items.c) ---- */

int cc_off_host_items(plan *pl, const ost *st);
int cc_off_chain_items(plan *pl, int k);

/* ---- input-channel blocks (icblocks.c) ---- */

/* A block's units in notes ("3 kernel row(s)", "1 kernel row(s) x 2
 * channel word(s)"), into buf of n bytes. */
const char *cc_icb_units(const ost *st, char *buf, size_t n);
/* Cuts head h to input-channel block ib of st (the whole layer's or a
 * strip's instruction): its geometry, its weight rows (cc_icb_row: units
 * [r0, r1); for icu 4 r0 = ib, r1 = ib + 1) and its first input word
 * relative to h's (*woff); icu 4 also its channel words (ifmap_wpp,
 * ifmap_word, ci).  A conv block of a strip at the
 * map's edge may fall only on padding (h->hi < 1): cc_icb_reads, which the
 * strip heights avoid (offchip_mem.c strips_read). */
void cc_icb_cut(const ost *st, int P, int ib, enpu_instr *h, int64_t *r0, int64_t *r1, int64_t *woff);
bool cc_icb_reads(const ost *st, int P, int ib, const enpu_instr *h);
/* Weight rows of block [r0, r1) of layer instruction whole, and the layer's
 * row of the block's row r. */
int64_t cc_icb_nrows(const ost *st, const enpu_instr *whole, int64_t r0, int64_t r1);
int64_t cc_icb_row(const ost *st, const enpu_instr *whole, int64_t r0, int64_t r1, int64_t r);
/* Chain instructions whose parameters block ib carries. */
int cc_icb_nj(const ost *st, int ib);
/* Plans the blocks of step st (fc or conv) whose one output-channel block
 * does not fit the weight memory; nofit when one unit does not. */
int cc_icb_plan(plan *pl, ost *st);

#endif
