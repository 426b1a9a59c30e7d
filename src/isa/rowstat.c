/* The row-stationary engine's instruction contract (include/easynpu/rowstat.h,
 * docs/rowstat.md): what an rs_conv's mapping fields imply -- passes, the
 * global buffer's regions, the DMA command queue, the weights' DRAM layout --
 * and its validation. */
#include "easynpu/rowstat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"

#define FAIL(...) return enpu_fail(err, ENPU_E_INVALID, __VA_ARGS__)

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

int64_t enpu_rs_macs(const enpu_instr *in) {
    int64_t g = in->groups > 0 ? in->groups : 1;
    int64_t v = 1;
    const int64_t f[] = {in->ho, in->wo, in->co, in->ci / g, in->hk, in->wk, in->rs_n > 1 ? in->rs_n : 1};
    for (int i = 0; i < 7; i++) {
        if (f[i] <= 0) return 0;
        if (v > INT64_MAX / f[i]) return INT64_MAX;
        v *= f[i];
    }
    return v;
}

/* Filters, channels, kernel rows and groups of each block index. */
static int64_t nf_of(const enpu_rs_geom *g, int64_t fb) { return imin(g->fb_size, g->opg - fb * g->fb_size); }
static int64_t nc_of(const enpu_rs_geom *g, int64_t cb) { return imin(g->cb_size, g->cpg - cb * g->cb_size); }
static int64_t nk_of(const enpu_rs_geom *g, const enpu_instr *in, int64_t fold) {
    return imin(g->hf, in->hk - fold * g->hf);
}
static int64_t ng_of(const enpu_rs_geom *g, int64_t gb) { return g->gpar ? imin(g->t, g->G - gb * g->t) : 1; }

void enpu_rs_strip_rows(const enpu_rs_geom *g, const enpu_instr *in, int64_t s, int64_t *r0,
                        int64_t *r1) {
    int64_t y0 = s * g->e, ne = imin(g->e, in->ho - y0);
    int64_t a = y0 * in->stride_h - in->pad_top;
    int64_t b = (y0 + ne - 1) * in->stride_h - in->pad_top + in->hk;
    if (a < 0) a = 0;
    if (b > in->hi) b = in->hi;
    if (b < a) b = a;
    *r0 = a, *r1 = b;
}

int enpu_rs_geom_of(const enpu_arch *a, const enpu_instr *in, enpu_rs_geom *g, enpu_err *err) {
    memset(g, 0, sizeof *g);
    static const int positive[] = {ENPU_F_hi, ENPU_F_wi, ENPU_F_ci, ENPU_F_ho, ENPU_F_wo, ENPU_F_co,
                                   ENPU_F_hk, ENPU_F_wk, ENPU_F_stride_h, ENPU_F_stride_w,
                                   ENPU_F_groups, ENPU_F_rs_e, ENPU_F_rs_p, ENPU_F_rs_q, ENPU_F_rs_r,
                                   ENPU_F_rs_t, ENPU_F_rs_hf};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        if (enpu_instr_get(in, positive[i]) < 1)
            FAIL("field '%s': value %" PRId64 " must be at least 1", enpu_field_get(positive[i])->name,
                 enpu_instr_get(in, positive[i]));
    if (in->ci % in->groups != 0 || in->co % in->groups != 0)
        FAIL("field 'groups': value %" PRId64 " does not divide ci=%" PRId64 " and co=%" PRId64,
             in->groups, in->ci, in->co);
    g->es = in->rs_bits ? 2 : 1;
    g->wb = enpu_arch_word_bytes(a);
    g->G = in->groups, g->cpg = in->ci / g->G, g->opg = in->co / g->G;
    g->wpp_in = enpu_ceil_div(in->ci * g->es, g->wb);
    g->wpp_out = enpu_ceil_div(in->co * g->es, g->wb);
    g->wi_p = in->wi + in->pad_left + in->pad_right;
    g->ncols = in->stride_w <= in->wk ? (in->wo - 1) * in->stride_w + in->wk : in->wo * in->wk;
    g->n = in->rs_n > 1 ? in->rs_n : 1;
    g->nwo = g->n * in->wo;
    g->e = in->rs_e, g->p = in->rs_p, g->q = in->rs_q, g->r = in->rs_r, g->t = in->rs_t;
    g->hf = in->rs_hf, g->gpar = in->rs_gpar != 0;
    g->fb_size = g->gpar ? g->p : g->p * g->t;
    g->cb_size = g->q * g->r;
    g->n_strips = enpu_ceil_div(in->ho, g->e);
    g->n_gb = g->gpar ? enpu_ceil_div(g->G, g->t) : g->G;
    g->n_fb = enpu_ceil_div(g->opg, g->fb_size);
    g->n_cb = enpu_ceil_div(g->cpg, g->cb_size);
    g->n_fold = enpu_ceil_div(in->hk, g->hf);
    g->n_blocks = g->n_strips * g->n_gb * g->n_fb;
    g->n_passes = g->n_blocks * g->n_cb * g->n_fold;
    g->n_fblocks = g->n_gb * g->n_fb * g->n_cb * g->n_fold;
    g->multi = g->n_cb * g->n_fold > 1;
    g->psum_bytes = enpu_ceil_div(a->rs_psum_bits, 8);
    for (int64_t s = 0; s < g->n_strips; s++) { /* padding clips any of them */
        int64_t r0, r1;
        enpu_rs_strip_rows(g, in, s, &r0, &r1);
        if (r1 - r0 > g->strip_rows) g->strip_rows = r1 - r0;
    }
    /* the first block of each kind is the largest */
    g->block_ch = ng_of(g, 0) * nf_of(g, 0);
    int64_t fvals = enpu_rs_fblock_values(g, in, 0);
    g->ict = in->rs_ict;
    if (g->ict > 0) {
        /* a tile's pixel holds its channels packed; the region stays whole words */
        g->n_ct = enpu_ceil_div(g->n_cb, g->ict);
        g->tile_ch = imin(g->ict * g->cb_size, g->cpg);
        g->pix_bytes = g->tile_ch * g->es;
        g->n_iloads = g->n_blocks * g->n_ct;
        g->ifmap_img_bytes = enpu_ceil_div(g->strip_rows * in->wi * g->pix_bytes, g->wb) * g->wb;
    } else {
        g->n_ct = 1;
        g->tile_ch = in->ci;
        g->pix_bytes = g->wpp_in * g->wb;
        g->n_iloads = g->n_strips;
        g->ifmap_img_bytes = g->strip_rows * in->wi * g->pix_bytes;
    }
    g->ifmap_buf = g->n * g->ifmap_img_bytes;
    g->filt_buf = enpu_ceil_div(fvals * g->es, g->wb) * g->wb +
                  enpu_ceil_div(g->block_ch * ENPU_RS_PARAM_BYTES, g->wb) * g->wb;
    g->psum_buf = g->multi ? imin(g->e, in->ho) * g->nwo * g->block_ch * g->psum_bytes : 0;
    g->out_buf = imin(g->e, in->ho) * g->nwo * g->block_ch * g->es;
    int64_t off = 0;
    g->ifmap_off[0] = off, off += g->ifmap_buf;
    g->ifmap_off[1] = (in->rs_dbuf & 1) ? off : g->ifmap_off[0];
    if (in->rs_dbuf & 1) off += g->ifmap_buf;
    g->filt_off[0] = off, off += g->filt_buf;
    g->filt_off[1] = (in->rs_dbuf & 2) ? off : g->filt_off[0];
    if (in->rs_dbuf & 2) off += g->filt_buf;
    g->psum_off = off, off += g->psum_buf;
    g->out_off[0] = off, off += g->out_buf;
    g->out_off[1] = (in->rs_dbuf & 4) ? off : g->out_off[0];
    if (in->rs_dbuf & 4) off += g->out_buf;
    g->glb_used = off;
    g->ifmap_img_words = in->hi * in->wi * g->wpp_in;
    g->ofmap_img_words = in->ho * in->wo * g->wpp_out;
    g->ifmap_words = g->n * g->ifmap_img_words;
    g->ofmap_words = g->n * g->ofmap_img_words;
    g->filt_words = enpu_rs_fblock_word(g, in, g->n_fblocks);
    g->param_words = enpu_rs_param_word(g, in, g->n_gb, 0);
    g->weight_words = g->filt_words + g->param_words;
    return 0;
}

void enpu_rs_pass_of(const enpu_rs_geom *g, const enpu_instr *in, int64_t k, enpu_rs_pass *o) {
    memset(o, 0, sizeof *o);
    o->index = k;
    o->fold = k % g->n_fold, k /= g->n_fold;
    o->cb = k % g->n_cb, k /= g->n_cb;
    o->fb = k % g->n_fb, k /= g->n_fb;
    o->gb = k % g->n_gb;
    o->strip = k / g->n_gb;
    o->block = (o->strip * g->n_gb + o->gb) * g->n_fb + o->fb;
    o->fblock = ((o->gb * g->n_fb + o->fb) * g->n_cb + o->cb) * g->n_fold + o->fold;
    o->y0 = o->strip * g->e, o->ne = imin(g->e, in->ho - o->y0);
    o->g0 = g->gpar ? o->gb * g->t : o->gb, o->ng = ng_of(g, o->gb);
    o->f0 = o->fb * g->fb_size, o->nf = nf_of(g, o->fb);
    o->c0 = o->cb * g->cb_size, o->nc = nc_of(g, o->cb);
    o->k0 = o->fold * g->hf, o->nk = nk_of(g, in, o->fold);
    o->iload = g->ict > 0 ? o->block * g->n_ct + o->cb / g->ict : o->strip;
    o->ibuf = (in->rs_dbuf & 1) ? (int)(o->iload % 2) : 0;
    o->tu = g->gpar ? o->ng : enpu_ceil_div(o->nf, g->p);
    o->ru = enpu_ceil_div(o->nc, g->q);
    o->first = o->cb == 0 && o->fold == 0;
    o->final = o->cb == g->n_cb - 1 && o->fold == g->n_fold - 1;
    o->strip_first = o->first && o->gb == 0 && o->fb == 0;
    o->strip_last = o->final && o->gb == g->n_gb - 1 && o->fb == g->n_fb - 1;
}

int64_t enpu_rs_ifmap_byte(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_pass *ps,
                           int64_t img, int64_t row, int64_t col, int64_t ch) {
    int64_t r0, r1;
    enpu_rs_strip_rows(g, in, ps->strip, &r0, &r1);
    /* a tile holds channels [its first block's c0, ...) of the pass's group */
    int64_t c0 = g->ict > 0 ? ps->g0 * g->cpg + (ps->cb / g->ict) * g->ict * g->cb_size : 0;
    return g->ifmap_off[ps->ibuf] + img * g->ifmap_img_bytes + ((row - r0) * in->wi + col) * g->pix_bytes +
           (ch - c0) * g->es;
}

void enpu_rs_iload_passes(const enpu_rs_geom *g, int64_t i, int64_t *k0, int64_t *k1) {
    if (g->ict == 0) {
        int64_t pps = g->n_gb * g->n_fb * g->n_cb * g->n_fold;
        *k0 = i * pps, *k1 = (i + 1) * pps;
        return;
    }
    int64_t blk = i / g->n_ct, ct = i % g->n_ct;
    *k0 = (blk * g->n_cb + ct * g->ict) * g->n_fold;
    *k1 = (blk * g->n_cb + imin(g->n_cb, (ct + 1) * g->ict)) * g->n_fold;
}

void enpu_rs_fblock_pass(const enpu_rs_geom *g, const enpu_instr *in, int64_t fblock,
                         enpu_rs_pass *out) {
    /* strip 0's passes are numbered like the filter blocks */
    enpu_rs_pass_of(g, in, fblock, out);
}

void enpu_rs_weight_layout(const enpu_rs_geom *g, const enpu_instr *in,
                           void (*fw)(void *ctx, int64_t byte, int64_t idx),
                           void (*fp)(void *ctx, int64_t byte, int64_t ch), void *ctx) {
    const int64_t K = g->cpg * in->hk * in->wk;
    for (int64_t b = 0; b < g->n_fblocks; b++) {
        enpu_rs_pass ps;
        enpu_rs_fblock_pass(g, in, b, &ps);
        int64_t byte = enpu_rs_fblock_word(g, in, b) * g->wb;
        /* the filter network's order: v, kernel row, h, filter, column, channel */
        for (int64_t v = 0; v < ps.ru; v++)
            for (int64_t i = 0; i < ps.nk; i++)
                for (int64_t h = 0; h < ps.tu; h++) {
                    int64_t ph = enpu_rs_set_filters(g, &ps, h), qv = enpu_rs_set_channels(g, &ps, v);
                    for (int64_t m = 0; m < ph; m++) {
                        int64_t oc = enpu_rs_out_channel(g, &ps, h, m);
                        for (int64_t s = 0; s < in->wk; s++)
                            for (int64_t c = 0; c < qv; c++, byte += g->es) {
                                int64_t ic = enpu_rs_in_channel(g, &ps, h, v, c) % g->cpg;
                                fw(ctx, byte, oc * K + (ic * in->hk + ps.k0 + i) * in->wk + s);
                            }
                    }
                }
    }
    for (int64_t gb = 0; gb < g->n_gb; gb++)
        for (int64_t fb = 0; fb < g->n_fb; fb++) {
            enpu_rs_pass ps;
            /* the last pass of block (strip 0, gb, fb) */
            enpu_rs_pass_of(g, in, enpu_rs_block_last_pass(g, gb * g->n_fb + fb), &ps);
            int64_t byte = (g->filt_words + enpu_rs_param_word(g, in, gb, fb)) * g->wb;
            int64_t nch = enpu_rs_block_channels(g, &ps);
            for (int64_t i = 0; i < nch; i++) fp(ctx, byte + i * ENPU_RS_PARAM_BYTES, enpu_rs_block_channel(g, &ps, i));
        }
}

int64_t enpu_rs_set_filters(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t h) {
    return g->gpar ? ps->nf : imin(g->p, ps->nf - h * g->p);
}

int64_t enpu_rs_set_channels(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t v) {
    return imin(g->q, ps->nc - v * g->q);
}

int64_t enpu_rs_out_channel(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t h, int64_t m) {
    return g->gpar ? (ps->g0 + h) * g->opg + ps->f0 + m : ps->g0 * g->opg + ps->f0 + h * g->p + m;
}

int64_t enpu_rs_in_channel(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t h, int64_t v,
                           int64_t c) {
    int64_t grp = g->gpar ? ps->g0 + h : ps->g0;
    return grp * g->cpg + ps->c0 + v * g->q + c;
}

int64_t enpu_rs_block_channels(const enpu_rs_geom *g, const enpu_rs_pass *ps) {
    (void)g;
    return ps->ng * ps->nf;
}

int64_t enpu_rs_block_channel(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t i) {
    if (g->gpar) return enpu_rs_out_channel(g, ps, i / ps->nf, i % ps->nf);
    return ps->g0 * g->opg + ps->f0 + i;
}

int64_t enpu_rs_fblock_values(const enpu_rs_geom *g, const enpu_instr *in, int64_t fblock) {
    int64_t fold = fblock % g->n_fold, k = fblock / g->n_fold;
    int64_t cb = k % g->n_cb;
    k /= g->n_cb;
    int64_t fb = k % g->n_fb, gb = k / g->n_fb;
    return ng_of(g, gb) * nf_of(g, fb) * nc_of(g, cb) * nk_of(g, in, fold) * in->wk;
}

/* The blocks in DRAM are indexed by digits (gb, fb, cb, fold), and a
 * block's size depends only on which of its digits are the last of their
 * dimension: a sum over blocks is a sum over those classes.  Words of the
 * blocks whose first `lvl` digits are dig[0..lvl), of the first `nlev`
 * dimensions (4: filter blocks; 2: the (bias, M, S) blocks). */
static int64_t sum_blocks(const enpu_rs_geom *g, const enpu_instr *in, int64_t *dig, int lvl, int nlev) {
    const int64_t radix[4] = {g->n_gb, g->n_fb, g->n_cb, g->n_fold};
    if (lvl == nlev) {
        int64_t ch = ng_of(g, dig[0]) * nf_of(g, dig[1]);
        if (nlev == 2) return enpu_ceil_div(ch * ENPU_RS_PARAM_BYTES, g->wb);
        return enpu_ceil_div(ch * nc_of(g, dig[2]) * nk_of(g, in, dig[3]) * in->wk * g->es, g->wb);
    }
    int64_t keep = dig[lvl], s;
    dig[lvl] = radix[lvl] - 1;
    s = sum_blocks(g, in, dig, lvl + 1, nlev);
    if (radix[lvl] > 1) {
        dig[lvl] = 0; /* any digit but the last: all the same size */
        s += (radix[lvl] - 1) * sum_blocks(g, in, dig, lvl + 1, nlev);
    }
    dig[lvl] = keep;
    return s;
}

/* Words before block `digits` in the order of the first nlev dimensions. */
static int64_t block_prefix(const enpu_rs_geom *g, const enpu_instr *in, const int64_t *digits, int nlev) {
    int64_t dig[4] = {0, 0, 0, 0}, w = 0;
    for (int lvl = 0; lvl < nlev; lvl++) {
        if (digits[lvl] > 0) {
            dig[lvl] = 0; /* the blocks before it at this level are not the last */
            w += digits[lvl] * sum_blocks(g, in, dig, lvl + 1, nlev);
        }
        dig[lvl] = digits[lvl];
    }
    return w;
}

int64_t enpu_rs_fblock_word(const enpu_rs_geom *g, const enpu_instr *in, int64_t fblock) {
    if (fblock >= g->n_fblocks) {
        int64_t dig[4] = {0, 0, 0, 0};
        return sum_blocks(g, in, dig, 0, 4);
    }
    int64_t d[4];
    d[3] = fblock % g->n_fold, fblock /= g->n_fold;
    d[2] = fblock % g->n_cb, fblock /= g->n_cb;
    d[1] = fblock % g->n_fb, d[0] = fblock / g->n_fb;
    return block_prefix(g, in, d, 4);
}

int64_t enpu_rs_param_word(const enpu_rs_geom *g, const enpu_instr *in, int64_t gb, int64_t fb) {
    if (gb >= g->n_gb) {
        int64_t dig[4] = {0, 0, 0, 0};
        return sum_blocks(g, in, dig, 0, 2);
    }
    const int64_t d[2] = {gb, fb};
    return block_prefix(g, in, d, 2);
}

int64_t enpu_rs_block_last_pass(const enpu_rs_geom *g, int64_t o) {
    return (o + 1) * g->n_cb * g->n_fold - 1;
}

/* ---- validation --------------------------------------------------------------- */

static int64_t out_extent(int64_t in, int64_t pad, int64_t k, int64_t stride) {
    if (in + pad < k) return -1;
    return (in + pad - k) / stride + 1;
}

/* rowstat.h: the arch has filter banks and half the filter loop buffer
 * holds a full pass's filters. */
bool enpu_rs_banks_fit(const enpu_arch *a, int64_t p, int64_t q, int64_t wk) {
    return a->rs_filter_banks && 2 * p * q * wk <= a->rs_filter_lb_depth;
}

bool enpu_rs_filter_banked(const enpu_arch *a, const enpu_instr *in, const enpu_rs_geom *g) {
    return enpu_rs_banks_fit(a, g->p, g->q, in->wk);
}

int enpu_rs_validate(const enpu_arch *a, const enpu_instr *in, enpu_err *err) {
    if (a->engine != ENPU_ENGINE_ROWSTAT)
        FAIL("rs_conv: arch '%s' has engine '%s', not rowstat", a->name, enpu_engine_name(a->engine));
    if (a->dram_bytes == 0) FAIL("rs_conv: arch '%s' has no DRAM (dram_bytes = 0)", a->name);
    enpu_rs_geom g;
    int rc = enpu_rs_geom_of(a, in, &g, err);
    if (rc) return rc;
    if (in->dil_h != 1 || in->dil_w != 1)
        FAIL("field '%s': value %" PRId64 " must be 1 (the engine's windows are dense)",
             in->dil_h != 1 ? "dil_h" : "dil_w", in->dil_h != 1 ? in->dil_h : in->dil_w);
    int64_t eh = out_extent(in->hi, in->pad_top + in->pad_bottom, in->hk, in->stride_h);
    int64_t ew = out_extent(in->wi, in->pad_left + in->pad_right, in->wk, in->stride_w);
    if (eh != in->ho)
        FAIL("field 'ho': value %" PRId64 " but hi=%" PRId64 ", pad_top+pad_bottom=%" PRId64
             ", hk=%" PRId64 ", stride_h=%" PRId64 " give %" PRId64,
             in->ho, in->hi, in->pad_top + in->pad_bottom, in->hk, in->stride_h, eh);
    if (ew != in->wo)
        FAIL("field 'wo': value %" PRId64 " but wi=%" PRId64 ", pad_left+pad_right=%" PRId64
             ", wk=%" PRId64 ", stride_w=%" PRId64 " give %" PRId64,
             in->wo, in->wi, in->pad_left + in->pad_right, in->wk, in->stride_w, ew);
    /* the mapping inside the array */
    if (g.e * g.t > a->rs_cols)
        FAIL("field 'rs_e': rs_e=%" PRId64 " x rs_t=%" PRId64 " PE columns, over rs_cols=%" PRId64,
             g.e, g.t, a->rs_cols);
    if (g.r * g.hf > a->rs_rows)
        FAIL("field 'rs_hf': rs_r=%" PRId64 " x rs_hf=%" PRId64 " PE rows, over rs_rows=%" PRId64,
             g.r, g.hf, a->rs_rows);
    if (g.hf > in->hk) FAIL("field 'rs_hf': value %" PRId64 " over hk=%" PRId64, g.hf, in->hk);
    if (g.e > in->ho) FAIL("field 'rs_e': value %" PRId64 " over ho=%" PRId64, g.e, in->ho);
    if (g.q > g.cpg)
        FAIL("field 'rs_q': value %" PRId64 " over the %" PRId64 " input channels per group", g.q, g.cpg);
    if (g.p > g.opg)
        FAIL("field 'rs_p': value %" PRId64 " over the %" PRId64 " output channels per group", g.p, g.opg);
    if (g.r > enpu_ceil_div(g.cpg, g.q))
        FAIL("field 'rs_r': value %" PRId64 " but %" PRId64 " channels per group fill %" PRId64
             " sets of rs_q=%" PRId64, g.r, g.cpg, enpu_ceil_div(g.cpg, g.q), g.q);
    if (g.gpar && (g.G < 2 || g.t > g.G))
        FAIL("field 'rs_gpar': set with groups=%" PRId64 " and rs_t=%" PRId64
             " (needs at least 2 groups and rs_t <= groups)", g.G, g.t);
    if (!g.gpar && g.t > enpu_ceil_div(g.opg, g.p))
        FAIL("field 'rs_t': value %" PRId64 " but %" PRId64 " filters per group fill %" PRId64
             " sets of rs_p=%" PRId64, g.t, g.opg, enpu_ceil_div(g.opg, g.p), g.p);
    if (in->rs_ict > g.n_cb)
        FAIL("field 'rs_ict': value %" PRId64 " over the %" PRId64 " channel blocks", in->rs_ict, g.n_cb);
    if (in->rs_ict > 0 && g.gpar)
        FAIL("field 'rs_ict': value %" PRId64 " with rs_gpar (a tile holds channels of one group)", in->rs_ict);
    if (in->rs_dbuf > 7) FAIL("field 'rs_dbuf': value %" PRId64 " out of range 0..7", in->rs_dbuf);
    /* the PE's buffers */
    if (g.q * in->wk > a->rs_ifmap_lb_depth)
        FAIL("field 'rs_q': the window of rs_q=%" PRId64 " channels x wk=%" PRId64 " = %" PRId64
             " values, over rs_ifmap_lb_depth=%" PRId64, g.q, in->wk, g.q * in->wk, a->rs_ifmap_lb_depth);
    if (g.p * g.q * in->wk > a->rs_filter_lb_depth)
        FAIL("field 'rs_p': rs_p=%" PRId64 " filters x rs_q=%" PRId64 " channels x wk=%" PRId64
             " = %" PRId64 " values, over rs_filter_lb_depth=%" PRId64,
             g.p, g.q, in->wk, g.p * g.q * in->wk, a->rs_filter_lb_depth);
    if (g.p > a->rs_psum_depth)
        FAIL("field 'rs_p': value %" PRId64 " psums, over rs_psum_depth=%" PRId64, g.p, a->rs_psum_depth);
    if (g.n * g.q * g.ncols > a->rs_fifo_depth)
        FAIL("field '%s': a PE receives rs_q=%" PRId64 " x %" PRId64 " columns x rs_n=%" PRId64 " images = %" PRId64
             " values per pass, over rs_fifo_depth=%" PRId64, g.n > 1 ? "rs_n" : "rs_q", g.q, g.ncols, g.n,
             g.n * g.q * g.ncols, a->rs_fifo_depth);
    /* the output network drains a psum of every column before the bottom PE
     * of that column has its next one (docs/rowstat.md "The output network") */
    int64_t nc_last = g.cpg - (g.n_cb - 1) * g.cb_size;
    int64_t q_last = nc_last - (enpu_ceil_div(nc_last, g.q) - 1) * g.q;
    int64_t lmin = in->wk * (g.n_cb > 1 ? imin(g.q, q_last) : q_last);
    int64_t tu_max = g.gpar ? imin(g.t, g.G) : enpu_ceil_div(imin(g.fb_size, g.opg), g.p);
    int64_t cols = imin(g.e, in->ho) * tu_max;
    if (enpu_ceil_div(cols, a->rs_psum_net_values) + a->rs_pe_pipeline - 1 > lmin)
        FAIL("field 'rs_e': %" PRId64 " PE columns produce a psum every %" PRId64
             " cycles, faster than rs_psum_net_values=%" PRId64 " per cycle drain them "
             "(with rs_pe_pipeline=%" PRId64 ")",
             cols, lmin, a->rs_psum_net_values, a->rs_pe_pipeline);
    if (g.glb_used > a->rs_glb_bytes)
        FAIL("field 'rs_dbuf': the global buffer regions need %" PRId64 " bytes (ifmap %" PRId64
             ", filters %" PRId64 ", psums %" PRId64 ", outputs %" PRId64 "), over rs_glb_bytes=%" PRId64,
             g.glb_used, g.ifmap_buf, g.filt_buf, g.psum_buf, g.out_buf, a->rs_glb_bytes);
    /* numerics */
    int64_t lo = in->rs_bits ? -32768 : -128, hi = in->rs_bits ? 32767 : 127;
    static const int nums[] = {ENPU_F_rs_zp_in, ENPU_F_rs_zp_out, ENPU_F_rs_lo, ENPU_F_rs_hi};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        int64_t v = enpu_instr_get(in, nums[i]);
        if (v < lo || v > hi)
            FAIL("field '%s': value %" PRId64 " out of range %" PRId64 "..%" PRId64 " for %s data",
                 enpu_field_get(nums[i])->name, v, lo, hi, in->rs_bits ? "int16" : "int8");
    }
    if (in->rs_lo > in->rs_hi)
        FAIL("field 'rs_lo': value %" PRId64 " above rs_hi=%" PRId64, in->rs_lo, in->rs_hi);
    /* the engine runs its instructions in order: no dependency tokens */
    if (in->push || in->pop)
        FAIL("field '%s': value %" PRId64 " must be 0 (the row-stationary engine runs in order)",
             in->push ? "push" : "pop", in->push ? in->push : in->pop);
    return 0;
}

/* ---- the DMA command queue ---------------------------------------------------- */

static int cmd_cmp(const void *pa, const void *pb) {
    const enpu_rs_cmd *a = pa, *b = pb;
    if (a->need != b->need) return a->need < b->need ? -1 : 1;
    if (a->kind != b->kind) return (int)a->kind - (int)b->kind;
    return a->what < b->what ? -1 : a->what > b->what;
}

enpu_rs_cmd *enpu_rs_commands(const enpu_rs_geom *g, const enpu_instr *in, int64_t *n,
                              enpu_err *err) {
    int64_t total = g->n_iloads + g->n_passes + g->n_blocks;
    enpu_rs_cmd *c = malloc((size_t)total * sizeof *c);
    if (!c) {
        enpu_fail(err, ENPU_E_NOMEM, "out of memory for %" PRId64 " DMA commands", total);
        return NULL;
    }
    int64_t k = 0;
    int nbi = (in->rs_dbuf & 1) ? 2 : 1, nbf = (in->rs_dbuf & 2) ? 2 : 1, nbo = (in->rs_dbuf & 4) ? 2 : 1;
    /* Each command waits for the pass that frees its buffer and is issued
     * in the order the passes need them: the queue cannot deadlock, since a
     * pass needs only commands that wait for earlier passes. */
    for (int64_t i = 0; i < g->n_iloads; i++) {
        int64_t k0, k1, d0, d1;
        enpu_rs_iload_passes(g, i, &k0, &k1);
        if (i >= nbi) enpu_rs_iload_passes(g, i - nbi, &d0, &d1);
        c[k++] = (enpu_rs_cmd){ENPU_RS_LOAD_IFMAP, i, i >= nbi ? d1 - 1 : -1, k0, (int)(i % nbi)};
    }
    for (int64_t p = 0; p < g->n_passes; p++)
        c[k++] = (enpu_rs_cmd){ENPU_RS_LOAD_FILTERS, p, p >= nbf ? p - nbf : -1, p, (int)(p % nbf)};
    for (int64_t o = 0; o < g->n_blocks; o++) {
        int64_t need = o + nbo < g->n_blocks ? enpu_rs_block_last_pass(g, o + nbo) : g->n_passes;
        c[k++] = (enpu_rs_cmd){ENPU_RS_STORE, o, enpu_rs_block_last_pass(g, o), need, (int)(o % nbo)};
    }
    qsort(c, (size_t)total, sizeof *c, cmd_cmp);
    *n = total;
    return c;
}

/* Adds a run, merging it into the previous one when both sides continue. */
typedef struct run_acc {
    enpu_rs_run cur;
    bool have;
    void (*fn)(void *, const enpu_rs_run *);
    void *ctx;
} run_acc;

static void acc_add(run_acc *a, int64_t dram, int64_t glb, int64_t bytes) {
    if (bytes <= 0) return;
    if (a->have && a->cur.dram + a->cur.bytes == dram && a->cur.glb + a->cur.bytes == glb) {
        a->cur.bytes += bytes;
        return;
    }
    if (a->have) a->fn(a->ctx, &a->cur);
    a->cur = (enpu_rs_run){dram, glb, bytes};
    a->have = true;
}

static void acc_flush(run_acc *a) {
    if (a->have) a->fn(a->ctx, &a->cur);
    a->have = false;
}

void enpu_rs_cmd_runs(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_cmd *c,
                      void (*fn)(void *ctx, const enpu_rs_run *run), void *ctx) {
    run_acc acc = {.fn = fn, .ctx = ctx};
    const int64_t wb = g->wb;
    if (c->kind == ENPU_RS_LOAD_IFMAP && g->ict == 0) {
        int64_t r0, r1;
        enpu_rs_strip_rows(g, in, c->what, &r0, &r1);
        int64_t words = (r1 - r0) * in->wi * g->wpp_in;
        for (int64_t img = 0; img < g->n; img++)
            acc_add(&acc, (in->rs_ifmap_addr + img * g->ifmap_img_words + r0 * in->wi * g->wpp_in) * wb,
                    g->ifmap_off[c->buf] + img * g->ifmap_img_bytes, words * wb);
    } else if (c->kind == ENPU_RS_LOAD_IFMAP) {
        /* a tile: the same channels of every pixel of the strip's rows */
        int64_t k0, k1, r0, r1;
        enpu_rs_iload_passes(g, c->what, &k0, &k1);
        enpu_rs_pass ps;
        enpu_rs_pass_of(g, in, k0, &ps);
        enpu_rs_strip_rows(g, in, ps.strip, &r0, &r1);
        int64_t c0 = ps.g0 * g->cpg + ps.c0, nch = imin(g->tile_ch, g->cpg - ps.c0);
        for (int64_t img = 0; img < g->n; img++)
            for (int64_t pix = r0 * in->wi; pix < r1 * in->wi; pix++)
                acc_add(&acc, (in->rs_ifmap_addr + img * g->ifmap_img_words + pix * g->wpp_in) * wb + c0 * g->es,
                        g->ifmap_off[c->buf] + img * g->ifmap_img_bytes + (pix - r0 * in->wi) * g->pix_bytes,
                        nch * g->es);
    } else if (c->kind == ENPU_RS_LOAD_FILTERS) {
        enpu_rs_pass ps;
        enpu_rs_pass_of(g, in, c->what, &ps);
        int64_t fw = enpu_ceil_div(enpu_rs_fblock_values(g, in, ps.fblock) * g->es, wb);
        acc_add(&acc, (in->rs_weight_addr + enpu_rs_fblock_word(g, in, ps.fblock)) * wb,
                g->filt_off[c->buf], fw * wb);
        if (ps.final) {
            int64_t pw = enpu_ceil_div(enpu_rs_block_channels(g, &ps) * ENPU_RS_PARAM_BYTES, wb);
            acc_add(&acc, (in->rs_weight_addr + g->filt_words + enpu_rs_param_word(g, in, ps.gb, ps.fb)) * wb,
                    g->filt_off[c->buf] + fw * wb, pw * wb);
        }
    } else {
        enpu_rs_pass ps;
        enpu_rs_pass_of(g, in, enpu_rs_block_last_pass(g, c->what), &ps);
        int64_t nch = enpu_rs_block_channels(g, &ps);
        /* the buffer's order: row, image, column; the DRAM's image, row, column */
        for (int64_t j = 0; j < ps.ne; j++)
            for (int64_t X = 0; X < g->nwo; X++) {
                int64_t img = X / in->wo, x = X % in->wo;
                int64_t pix = in->rs_ofmap_addr + img * g->ofmap_img_words + ((ps.y0 + j) * in->wo + x) * g->wpp_out;
                for (int64_t i = 0; i < nch; i++)
                    acc_add(&acc, pix * wb + enpu_rs_block_channel(g, &ps, i) * g->es,
                            g->out_off[c->buf] + ((j * g->nwo + X) * nch + i) * g->es, g->es);
            }
    }
    acc_flush(&acc);
}
