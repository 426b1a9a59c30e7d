/* Input-channel blocks (docs/offchip.md "Input-channel blocks"): a step
 * (an fc, or an ungrouped conv) one of whose output-channel blocks of pes
 * channels does not fit the weight memory is cut into blocks over its
 * input, each an instruction over that part of the input for the same
 * output channels, the sums held in the psum file from block to block
 * (ps_hold / ps_cont, ISA 8).
 *
 * An fc's unit is an input row of its map (a pixel, a word for smaller
 * maps): its part of the input is a sub-map at an offset.  A conv's unit is
 * a kernel row with every input channel: the block is the conv with those
 * kernel rows only (hk cut, the input rows it reads, the padding where they
 * fall outside the map), so the instruction reads whole pixels and needs no
 * new field.  Its output is one psum tile, so the planner cuts the conv into
 * strips of at most icrows output rows.
 *
 * When even one kernel row with every input channel does not fit half the
 * weight memory (a 1x1 pointwise conv, a wide kernel over many channels),
 * the block is kernel rows [k0, k1) x channel words [w0, w1) (icu 4): the
 * instruction reads those words of each pixel through ifmap_wpp (the map's
 * words per pixel) and ifmap_word (ISA 9), its ci the block's channels. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/offchip.h"

static const char *const icu_name[] = {"input row", "input pixel", "input word", "kernel row", "kernel row"};

const char *cc_icb_units(const ost *st, char *buf, size_t n) {
    if (st->icu == 4)
        snprintf(buf, n, "%" PRId64 " kernel row(s) x %" PRId64 " channel word(s)", st->icper, st->icwper);
    else
        snprintf(buf, n, "%" PRId64 " %s(s)", st->icper, icu_name[st->icu]);
    return buf;
}

/* icu 4: block ib's kernel rows [k0, k1) and channel words [w0, w1), the
 * word blocks of a kernel-row block one after the other. */
static void icb_range(const ost *st, int64_t ib, int64_t *k0, int64_t *k1, int64_t *w0, int64_t *w1) {
    int64_t nwb = cdiv(st->icwn, st->icwper), kb = ib / nwb, wb = ib % nwb;
    *k0 = kb * st->icper, *k1 = min64(st->icn, *k0 + st->icper);
    *w0 = wb * st->icwper, *w1 = min64(st->icwn, *w0 + st->icwper);
}

/* The conv h with kernel rows [u0, u1) only; wpp: the map's words per pixel. */
static void cut_kernel_rows(enpu_instr *h, int64_t u0, int64_t u1, int64_t wpp, int64_t *woff) {
    /* output row 0 reads input row u0*dil_h - pad_top first (cc_in_rows
     * with the kernel moved down by u0 rows) */
    int64_t lo = u0 * h->dil_h - h->pad_top;
    int64_t hi = (h->ho - 1) * h->stride_h + lo + (u1 - u0 - 1) * h->dil_h + 1;
    int64_t a = max64(lo, 0), b = min64(hi, h->hi);
    *woff = a * h->wi * wpp;
    h->hk = u1 - u0;
    h->band_h = 0;
    h->hi = b - a; /* < 1: the block reads only padding */
    h->pad_top = a - lo, h->pad_bottom = hi - b;
}

void cc_icb_cut(const ost *st, int P, int ib, enpu_instr *h, int64_t *r0, int64_t *r1, int64_t *woff) {
    int64_t u0 = (int64_t)ib * st->icper, u1 = min64(st->icn, u0 + st->icper);
    int64_t wpp = cdiv(h->ci, P);
    if (st->icu == 0) {
        *r0 = u0 * h->wi * h->ci, *r1 = u1 * h->wi * h->ci, *woff = u0 * h->wi * wpp;
        h->hi = u1 - u0;
    } else if (st->icu == 1) {
        /* pixels of the flattened map (of its one row, or across rows) */
        *r0 = u0 * h->ci, *r1 = u1 * h->ci, *woff = u0 * wpp;
        h->hi = 1, h->wi = u1 - u0;
    } else if (st->icu == 2) {
        *r0 = u0 * P, *r1 = min64(h->ci, u1 * P), *woff = u0;
        h->ci = *r1 - *r0;
    } else if (st->icu == 3) {
        *r0 = u0, *r1 = u1;
        cut_kernel_rows(h, u0, u1, wpp, woff);
    } else {
        int64_t k0, k1, w0, w1;
        icb_range(st, ib, &k0, &k1, &w0, &w1);
        *r0 = ib, *r1 = ib + 1;
        cut_kernel_rows(h, k0, k1, wpp, woff);
        /* words [w0, w1) of each pixel of a map of wpp words a pixel */
        h->ifmap_wpp = wpp, h->ifmap_word = w0;
        h->ci = min64(h->ci, w1 * P) - w0 * P;
    }
}

bool cc_icb_reads(const ost *st, int P, int ib, const enpu_instr *h) {
    enpu_instr in = *h;
    int64_t r0, r1, woff;
    cc_icb_cut(st, P, ib, &in, &r0, &r1, &woff);
    return in.hi >= 1;
}

/* icu 4: block ib's first channel, channels and kernel rows */
static void icb_chans(const ost *st, const enpu_instr *whole, int64_t ib, int64_t *c0, int64_t *nc,
                      int64_t *k0, int64_t *nk) {
    int64_t k1, w0, w1;
    icb_range(st, ib, k0, &k1, &w0, &w1);
    *c0 = w0 * st->icwc, *nc = min64(whole->ci, w1 * st->icwc) - *c0, *nk = k1 - *k0;
}

int64_t cc_icb_nrows(const ost *st, const enpu_instr *whole, int64_t r0, int64_t r1) {
    if (st->icu == 4) {
        int64_t c0, nc, k0, nk;
        icb_chans(st, whole, r0, &c0, &nc, &k0, &nk);
        return nc * nk * whole->wk;
    }
    return st->icu == 3 ? whole->ci * (r1 - r0) * whole->wk : r1 - r0;
}

int64_t cc_icb_row(const ost *st, const enpu_instr *whole, int64_t r0, int64_t r1, int64_t r) {
    if (st->icu == 4) {
        /* the block's [nc][nk][wk] of the layer's [ci][hk][wk] */
        int64_t c0, nc, k0, nk;
        icb_chans(st, whole, r0, &c0, &nc, &k0, &nk);
        int64_t kb = nk * whole->wk;
        return (c0 + r / kb) * whole->hk * whole->wk + k0 * whole->wk + r % kb;
    }
    if (st->icu != 3) return r0 + r;
    /* a conv's rows are [ci][hk][wk] (lower.c): the block's [ci][r1-r0][wk] */
    int64_t kb = (r1 - r0) * whole->wk;
    return (r / kb) * whole->hk * whole->wk + r0 * whole->wk + r % kb;
}

/* The last block requantizes and runs the chain's fused stages. */
int cc_icb_nj(const ost *st, int ib) { return ib == st->nicb - 1 ? st->n : 1; }

/* Weight-memory words of the parameters of input-channel block ib of one
 * output-channel block of P channels. */
static int64_t icb_words(const plan *pl, const ost *st, int ib) {
    const cc *c = pl->c;
    int64_t per = 0, r0, r1, woff;
    int nj = cc_icb_nj(st, ib);
    for (int j = 0; j < nj; j++) {
        enpu_instr in = c->L[st->lay[j]].ins;
        in.co = min64(in.co, c->P);
        if (j > 0) in.ci = in.co;
        else cc_icb_cut(st, c->P, ib, &in, &r0, &r1, &woff);
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(c->a, &in, j > 0, b);
        for (int q = 0; q < nb; q++)
            if (b[q].mem == ENPU_MEM_WEIGHT) per += b[q].words;
    }
    return per;
}

/* A conv's most output rows per instruction: its output (the whole width,
 * P output channels) one tile that the tiler accepts with held sums, for
 * the block of the most kernel rows.  0 when not even one row is. */
static int64_t conv_rows(plan *pl, const ost *st) {
    cc *c = pl->c;
    for (int64_t r = st->ho; r >= 1; r--) {
        enpu_instr in = c->L[st->head].ins;
        in.co = min64(in.co, c->P);
        /* a strip in the middle of the map (the tiling does not depend on
         * the rows it reads, only on their being a valid conv) */
        int64_t m0 = (st->ho - r) / 2;
        if (r < st->ho) cc_cut_rows(&in, 1, m0, m0 + r);
        int64_t r0, r1, woff;
        cc_icb_cut(st, c->P, 0, &in, &r0, &r1, &woff);
        if (in.hi < 1) continue;
        in.ps_hold = 1;
        enpu_err e = {0};
        if (cc_tile_search(NULL, c->a, &in, 1, false, ENPU_SEARCH_FAST, c->L[st->head].name, NULL, &e) == 0)
            return r;
    }
    return 0;
}

/* The largest block's weight and parameter words. */
static int64_t icb_most(const plan *pl, const ost *st) {
    /* the blocks before the last are alike or smaller (block 0 has the
     * most kernel rows and words); the last carries the fused stages'
     * parameters */
    return max64(icb_words(pl, st, 0), icb_words(pl, st, st->nicb - 1));
}

/* The most units per block (icu and icn set) whose largest block fits
 * `limit` words (0: not one); *worst the words of a block of one unit. */
static int64_t icb_units(const plan *pl, ost *st, int64_t limit, int64_t *worst) {
    int64_t best = 0;
    for (int64_t u = 1; u <= st->icn; u++) {
        st->icper = u, st->nicb = (int)cdiv(st->icn, u);
        int64_t most = icb_most(pl, st);
        if (u == 1) *worst = most;
        if (most > limit) break;
        best = u;
    }
    return best;
}

/* A conv's blocks of kernel rows x channel words (icu 4) of the fewest
 * blocks whose largest fits `limit` words; false when not even one word of
 * one kernel row does.  All the words of a pixel make it icu 3. */
static bool plan_words(const plan *pl, ost *st, int64_t limit) {
    int64_t bestn = 0, bk = 0, bw = 0;
    st->icu = 4;
    for (int64_t w = st->icwn; w >= 1; w--) {
        int64_t kmax = 0;
        for (int64_t k = 1; k <= st->icn; k++) {
            st->icper = k, st->icwper = w;
            st->nicb = (int)(cdiv(st->icn, k) * cdiv(st->icwn, w));
            if (icb_most(pl, st) > limit) break;
            kmax = k;
        }
        int64_t n = cdiv(st->icn, max64(kmax, 1)) * cdiv(st->icwn, w);
        if (kmax > 0 && (bestn == 0 || n < bestn)) bestn = n, bk = kmax, bw = w;
    }
    if (bestn == 0) return false;
    st->icper = bk, st->icwper = bw, st->nicb = (int)bestn;
    if (bw == st->icwn) st->icu = 3;
    return true;
}

/* The most units (fc: input rows, else pixels (of its one row, or of the
 * flattened map when one row does not fit the whole memory), else words of
 * its one pixel; conv: kernel rows) per block whose slice fits half the
 * memory; for a conv one of whose kernel rows does not, blocks of kernel
 * rows x channel words (plan_words) that fit half the memory, else the
 * whole; else one unit in the whole memory; nofit when one unit (a conv's:
 * one channel word of one kernel row) does not fit, or a conv's output row
 * is not one tile. */
int cc_icb_plan(plan *pl, ost *st) {
    cc *c = pl->c;
    const enpu_arch *a = c->a;
    const cc_layer *h = &c->L[st->head];
    int64_t W = enpu_arch_words(a, a->weight_mem_bytes), half = W / 2, wb = enpu_arch_word_bytes(a);
    bool conv = h->ins.opcode != ENPU_OPC_FC;
    st->icu = conv ? 3 : h->ins.hi > 1 ? 0 : h->ins.wi > 1 ? 1 : 2;
    st->icn = conv ? h->ins.hk : st->icu == 0 ? h->ins.hi : st->icu == 1 ? h->ins.wi : cdiv(h->ins.ci, c->P);
    st->icwc = c->P, st->icwn = cdiv(h->ins.ci, c->P), st->icwper = st->icwn;
    int64_t worst = 0, best = icb_units(pl, st, half, &worst);
    if (!conv && st->icu == 0 && best == 0 && worst > W && h->ins.wi > 1) {
        /* not even one input row fits: pixels of the flattened map, any
         * run of which is a 1 x n map of whole words */
        st->icu = 1, st->icn = h->ins.hi * h->ins.wi;
        best = icb_units(pl, st, half, &worst);
    }
    if (conv && best == 0 && st->icwn > 1) {
        /* one kernel row with every input channel does not fit half the
         * memory: cut its channel words too (ISA 9's ifmap_wpp) */
        if (h->ins.lane_split)
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': its input channels must be cut into words (ifmap_wpp), "
                             "which lane groups do not allow", h->name);
        if (!plan_words(pl, st, half) && !plan_words(pl, st, W)) {
            st->icu = 4, st->icper = st->icwper = 1, st->nicb = (int)(st->icn * st->icwn);
            int64_t need = icb_most(pl, st) * wb;
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': one word of %d input channels of one kernel row (%" PRId64
                             " inputs) for one block of %d output channels (one per PE) needs %" PRId64
                             " bytes of weights and parameters; arch '%s' has weight_mem_bytes %" PRId64
                             "; use weight_mem_bytes >= %" PRId64,
                             h->name, c->P, (int64_t)c->P * h->ins.wk, (int)min64(h->ins.co, c->P), need,
                             a->name, a->weight_mem_bytes, need);
        }
        best = st->icper;
    }
    if (best == 0 && worst <= W) best = 1;
    if (best == 0 || (st->icn < 2 && st->icu != 4)) {
        /* one unit per block: the first and the last (with the fused stages) */
        st->icper = 1, st->nicb = (int)st->icn;
        int64_t need = icb_most(pl, st) * wb;
        int64_t ins = conv ? h->ins.ci * h->ins.wk
                           : st->icu == 0 ? h->ins.wi * h->ins.ci : st->icu == 1 ? h->ins.ci : min64(h->ins.ci, c->P);
        return enpu_fail(c->err, ENPU_E_NOFIT,
                         "layer '%s': one %s (%" PRId64 " inputs) for one block of %d output "
                         "channels (one per PE) needs %" PRId64 " bytes of weights and parameters; arch '%s' has "
                         "weight_mem_bytes %" PRId64 "; use weight_mem_bytes >= %" PRId64,
                         h->name, icu_name[st->icu], ins, (int)min64(h->ins.co, c->P), need, a->name,
                         a->weight_mem_bytes, need);
    }
    if (st->icu != 4) st->icper = best, st->nicb = (int)cdiv(st->icn, best);
    st->icbytes = icb_most(pl, st) * wb;
    st->cob = min64(h->ins.co, c->P);
    st->ncob = (int)cdiv(h->ins.co, st->cob);
    st->icrows = 0;
    if (conv) {
        st->icrows = conv_rows(pl, st);
        if (st->icrows < 1 || (st->icrows < st->ho && !st->strip_ok))
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': its kernel rows are cut into blocks whose sums stay in the psum "
                             "file, so each instruction's output (%s, %" PRId64 " pixels wide, %d channels) "
                             "must be one tile; arch '%s' (psum_depth %" PRId64 ", ifmap_pad_depth %" PRId64
                             ") takes %s",
                             h->name, st->strip_ok ? "a strip of whole rows" : "the whole map", h->ins.wo,
                             (int)st->cob, a->name, a->psum_depth, a->ifmap_pad_depth,
                             st->icrows < 1 ? "not even one output row" : "only a strip of it, and it cannot be cut in strips");
    }
    return 0;
}
