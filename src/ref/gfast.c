/* The golden reference's fast kernels: preparation (packing weights, lookup
 * tables) and execution per node.  gfast.h says what each kernel computes
 * and why it equals the reference loops of golden.c. */
#include "ref/gfast.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Padded copies and packed weights may be at most this many elements more
 * than what they copy; beyond it (huge pads, tiny groups) a node keeps the
 * reference loops, which need no copy. */
#define GF_SLACK_ELEMS ((int64_t)1 << 22)
/* Over-read past the end of the padded image: a run's last 16-element block
 * may reach 15 elements past its end. */
#define GF_TAIL 16
#define GF_NP 3 /* output pixels per microkernel call */
#define GF_NC 4 /* output channels per microkernel call */

typedef enum gf_kind { GF_DOT = 1, GF_DW, GF_LUT_CH, GF_LUT, GF_MAXPOOL, GF_BINARY } gf_kind;

struct gf_node {
    gf_kind kind;
    const gf_simd *simd;
    const enpu_qnode *q;
    int rqmode;       /* the graph's requant (enpu_requant_mode): the reference's rule */
    enpu_qconv_geom g;
    int64_t cpg, opg;
    /* GF_DOT */
    int16_t *wp;      /* [group][opg_pad][nr][rp] */
    int64_t opg_pad, ws;
    int nr, rp;
    int64_t *roff;    /* [nr] offset of each run from a pixel's base */
    int64_t *base;    /* [n*oh*ow] pixel base in xp */
    int32_t *dots;    /* [co][n*oh*ow] the dot products, requantized per channel */
    /* GF_DOT: padded NHWC image of all batches; GF_DW: one padded plane */
    int16_t *xp;
    int64_t hp, wpd;  /* padded height and width */
    int32_t *acc;     /* GF_DW: the output plane, rows wq apart */
    int16_t *phase;   /* GF_DW with stride sw > 1: the plane split by column mod sw */
    int64_t wq;       /* GF_DW: row length of a phase (of the plane when sw == 1) */
    int8_t *lut;      /* GF_LUT_CH: [n_ch][256]; GF_LUT: [256] */
    int8_t *plane;    /* GF_MAXPOOL: padded plane */
    int8_t *mrow;     /* GF_MAXPOOL: one output row of maxima */
    bool *row_ok, *col_ok; /* GF_MAXPOOL: the window meets the input */
    int64_t total;    /* GF_LUT, GF_BINARY: elements */
};

void gf_free(gf_node *f) {
    if (!f) return;
    free(f->wp);
    free(f->roff);
    free(f->base);
    free(f->dots);
    free(f->xp);
    free(f->acc);
    free(f->phase);
    free(f->lut);
    free(f->plane);
    free(f->mrow);
    free(f->row_ok);
    free(f->col_ok);
    free(f);
}

/* ---- portable microkernels ------------------------------------------------------ */

static void dot4_portable(const int16_t *w, int64_t ws, const int16_t *x, const int64_t *base,
                          int np, const int64_t *roff, int nr, int rp, int32_t *out) {
    for (int p = 0; p < np; p++)
        for (int c = 0; c < GF_NC; c++) {
            const int16_t *wc = w + c * ws;
            int32_t acc = 0;
            for (int r = 0; r < nr; r++) {
                const int16_t *xr = x + base[p] + roff[r], *wr = wc + (int64_t)r * rp;
                for (int j = 0; j < rp; j++) acc += (int32_t)wr[j] * xr[j];
            }
            out[p * GF_NC + c] = acc;
        }
}

static void axpy_portable(int32_t *acc, const int16_t *x, int32_t w, int64_t n) {
    for (int64_t i = 0; i < n; i++) acc[i] += w * x[i];
}

const gf_simd gf_simd_portable = {"portable", dot4_portable, axpy_portable};

/* ---- preparation -------------------------------------------------------------------- */

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static void *xmalloc(int64_t n, size_t size) {
    if (n < 1) n = 1;
    return calloc((size_t)n, size);
}

static int nomem(gf_node *f, enpu_err *err) {
    gf_free(f);
    return enpu_fail(err, ENPU_E_NOMEM, "golden reference: out of memory for the fast kernels");
}

/* Dense or grouped conv / FC with cpg > 1 (or a dense conv on one channel). */
static int prepare_dot(gf_node *f) {
    const enpu_qconv_geom *g = &f->g;
    const enpu_qnode *q = f->q;
    f->hp = g->pt + g->h + g->pb;
    f->wpd = g->pl + g->w + g->pr;
    bool rows = g->group == 1 && g->dw == 1; /* a whole kernel row is contiguous */
    int64_t run = rows ? (int64_t)g->kw * g->ci : f->cpg;
    f->nr = rows ? g->kh : g->kh * g->kw;
    f->rp = (int)round_up(run, 16);
    f->opg_pad = round_up(f->opg, GF_NC);
    f->ws = (int64_t)f->nr * f->rp;
    int64_t n_wp = g->group * f->opg_pad * f->ws;
    int64_t n_xp = g->n * f->hp * f->wpd * g->ci;
    int64_t n_pix = g->n * g->oh * g->ow;
    if (n_wp > 16 * q->n_w + GF_SLACK_ELEMS || n_xp > 4 * g->n * g->ci * g->h * g->w + GF_SLACK_ELEMS ||
        f->rp > INT_MAX / 2)
        return 1; /* the reference loops, without copies */
    f->wp = xmalloc(n_wp, sizeof *f->wp);
    f->xp = xmalloc(n_xp + GF_TAIL, sizeof *f->xp);
    f->roff = xmalloc(f->nr, sizeof *f->roff);
    f->base = xmalloc(n_pix, sizeof *f->base);
    f->dots = xmalloc(g->co * n_pix, sizeof *f->dots);
    if (!f->wp || !f->xp || !f->roff || !f->base || !f->dots) return -1;
    for (int ky = 0; ky < g->kh; ky++)
        for (int kx = 0; kx < (rows ? 1 : g->kw); kx++)
            f->roff[rows ? ky : ky * g->kw + kx] =
                ((int64_t)ky * g->dh * f->wpd + (int64_t)kx * g->dw) * g->ci;
    for (int64_t gi = 0; gi < g->group; gi++)
        for (int64_t ol = 0; ol < f->opg; ol++) {
            int64_t co = gi * f->opg + ol;
            int16_t *row = f->wp + (gi * f->opg_pad + ol) * f->ws;
            for (int64_t cl = 0; cl < f->cpg; cl++)
                for (int ky = 0; ky < g->kh; ky++)
                    for (int kx = 0; kx < g->kw; kx++) {
                        int8_t v = q->w[co * g->k + (cl * g->kh + ky) * g->kw + kx];
                        int64_t at = rows ? (int64_t)ky * f->rp + kx * g->ci + cl
                                          : (int64_t)(ky * g->kw + kx) * f->rp + cl;
                        row[at] = v;
                    }
        }
    int64_t p = 0;
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++, p++)
                f->base[p] = ((b * f->hp + oy * g->sh) * f->wpd + ox * g->sw) * g->ci;
    return 0;
}

/* One input channel per group: depthwise conv, average pooling. */
static int prepare_dw(gf_node *f) {
    const enpu_qconv_geom *g = &f->g;
    f->hp = g->pt + g->h + g->pb;
    f->wpd = g->pl + g->w + g->pr;
    f->wq = (f->wpd + g->sw - 1) / g->sw;
    if (f->hp * f->wq * g->sw > 4 * g->h * g->w + GF_SLACK_ELEMS) return 1;
    f->xp = xmalloc(f->hp * f->wpd + GF_TAIL, sizeof *f->xp);
    if (g->sw > 1) f->phase = xmalloc(g->sw * f->hp * f->wq + GF_TAIL, sizeof *f->phase);
    f->acc = xmalloc(g->oh * f->wq, sizeof *f->acc);
    return f->xp && f->acc && (g->sw == 1 || f->phase) ? 0 : -1;
}

/* A 1x1 per-channel node: the output of channel c is a function of one input
 * value, so all 256 are tabulated. */
static bool per_channel_1x1(const enpu_qconv_geom *g, int64_t cpg, int64_t opg) {
    return cpg == 1 && opg == 1 && g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 &&
           g->pt == 0 && g->pl == 0 && g->pb == 0 && g->pr == 0 && g->oh == g->h &&
           g->ow == g->w && g->co <= 65536;
}

static int prepare_lut_ch(gf_node *f) {
    const enpu_qnode *q = f->q;
    f->lut = xmalloc(f->g.co * 256, 1);
    if (!f->lut) return -1;
    for (int64_t c = 0; c < f->g.co; c++)
        for (int x = -128; x < 128; x++)
            f->lut[c * 256 + x + 128] = (int8_t)enpu_requant_as(
                f->rqmode, (int64_t)q->bias[c] + (int64_t)x * q->w[c], q->M[c], q->S[c], q->zp_out,
                q->lo, q->hi);
    return 0;
}

static int prepare_conv(const enpu_graph *qg, const enpu_node *n, gf_node *f, enpu_err *err) {
    if (enpu_qconv_geom_of(qg, n, &f->g, err)) return -2;
    f->cpg = f->g.ci / f->g.group;
    f->opg = f->g.co / f->g.group;
    if (per_channel_1x1(&f->g, f->cpg, f->opg)) {
        f->kind = GF_LUT_CH;
        return prepare_lut_ch(f);
    }
    if (f->cpg == 1 && f->g.group > 1) {
        f->kind = GF_DW;
        return prepare_dw(f);
    }
    f->kind = GF_DOT;
    return prepare_dot(f);
}

/* MaxPool geometry as golden.c checks it (ceil-mode extents allowed). */
static int prepare_maxpool(const enpu_graph *qg, const enpu_node *n, gf_node *f) {
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    enpu_win2d w;
    if (enpu_window_2d(n, &n->attr.pool.w, x->rank, n->attr.pool.w.kernel[0],
                       n->attr.pool.w.kernel[1], &w, NULL))
        return 1;
    enpu_qconv_geom *g = &f->g;
    g->kh = w.kh, g->kw = w.kw, g->sh = w.sh, g->sw = w.sw, g->dh = w.dh, g->dw = w.dw;
    g->pt = w.pt, g->pl = w.pl, g->pb = w.pb, g->pr = w.pr;
    g->n = x->dims[0];
    g->ci = g->co = x->dims[1];
    g->h = x->rank == 4 ? x->dims[2] : 1;
    g->w = x->dims[x->rank - 1];
    g->oh = y->rank == 4 ? y->dims[2] : 1;
    g->ow = y->dims[y->rank - 1];
    /* ceil mode: the last windows may reach past the bottom/right padding */
    f->hp = g->pt + g->h + g->pb;
    f->wpd = g->pl + g->w + g->pr;
    int64_t need_h = (g->oh - 1) * g->sh + (int64_t)(g->kh - 1) * g->dh + 1;
    int64_t need_w = (g->ow - 1) * g->sw + (int64_t)(g->kw - 1) * g->dw + 1;
    if (need_h > f->hp) f->hp = need_h;
    if (need_w > f->wpd) f->wpd = need_w;
    if (f->hp * f->wpd > 4 * g->h * g->w + GF_SLACK_ELEMS) return 1;
    f->plane = xmalloc(f->hp * f->wpd, 1);
    f->mrow = xmalloc(g->ow, 1);
    f->row_ok = xmalloc(g->oh, sizeof *f->row_ok);
    f->col_ok = xmalloc(g->ow, sizeof *f->col_ok);
    if (!f->plane || !f->mrow || !f->row_ok || !f->col_ok) return -1;
    for (int64_t oy = 0; oy < g->oh; oy++)
        for (int k = 0; k < g->kh && !f->row_ok[oy]; k++) {
            int64_t iy = oy * g->sh - g->pt + (int64_t)k * g->dh;
            f->row_ok[oy] = iy >= 0 && iy < g->h;
        }
    for (int64_t ox = 0; ox < g->ow; ox++)
        for (int k = 0; k < g->kw && !f->col_ok[ox]; k++) {
            int64_t ix = ox * g->sw - g->pl + (int64_t)k * g->dw;
            f->col_ok[ox] = ix >= 0 && ix < g->w;
        }
    return 0;
}

static bool same_shape(const enpu_tensor *a, const enpu_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

int gf_prepare(const enpu_graph *qg, const enpu_node *n, const gf_simd *simd, gf_node **out,
               enpu_err *err) {
    *out = NULL;
    const enpu_qnode *q = n->q;
    if (!q || n->dead) return 0;
    gf_node *f = calloc(1, sizeof *f);
    if (!f) return nomem(NULL, err);
    f->simd = simd;
    f->q = q;
    f->rqmode = qg->requant;
    int rc = 1;
    switch (q->kind) {
    case ENPU_Q_CONV: rc = prepare_conv(qg, n, f, err); break;
    case ENPU_Q_MAXPOOL:
        f->kind = GF_MAXPOOL;
        rc = prepare_maxpool(qg, n, f);
        break;
    case ENPU_Q_TABLE:
        f->kind = GF_LUT;
        f->total = enpu_tensor_numel(enpu_node_output(qg, n, 0));
        f->lut = xmalloc(256, 1);
        rc = f->lut ? 0 : -1;
        for (int x = -128; x < 128 && !rc; x++) f->lut[x + 128] = enpu_pwl_eval(q->table, (int8_t)x);
        break;
    case ENPU_Q_ADD:
    case ENPU_Q_MUL: {
        const enpu_tensor *a = enpu_node_input(qg, n, 0), *b = enpu_node_input(qg, n, 1);
        const enpu_tensor *y = enpu_node_output(qg, n, 0);
        if (same_shape(a, y) && same_shape(b, y)) {
            f->kind = GF_BINARY;
            f->total = enpu_tensor_numel(y);
            rc = 0;
        }
        break;
    }
    default: break;
    }
    if (rc == -2) {
        gf_free(f);
        return err ? err->code : ENPU_E_INVALID;
    }
    if (rc < 0) return nomem(f, err);
    if (rc > 0) {
        gf_free(f);
        return 0;
    }
    *out = f;
    return 0;
}

/* ---- execution --------------------------------------------------------------------------- */

/* Fills the borders of an hp x wpd image of `ch` interleaved channels
 * (ch = 1: a plane) around an h x w interior at (pt, pl) with v. */
static void fill_border(int16_t *img, int64_t hp, int64_t wpd, int64_t ch, int64_t pt, int64_t pl,
                        int64_t h, int64_t w, int16_t v) {
    for (int64_t yy = 0; yy < hp; yy++) {
        int16_t *row = img + yy * wpd * ch;
        if (yy < pt || yy >= pt + h) {
            for (int64_t i = 0; i < wpd * ch; i++) row[i] = v;
            continue;
        }
        for (int64_t i = 0; i < pl * ch; i++) row[i] = v;
        for (int64_t i = (pl + w) * ch; i < wpd * ch; i++) row[i] = v;
    }
}

static void run_dot(gf_node *f, const int8_t *x, int8_t *y) {
    const enpu_qconv_geom *g = &f->g;
    const enpu_qnode *q = f->q;
    const int64_t img = f->hp * f->wpd * g->ci, plane = g->h * g->w;
    for (int64_t b = 0; b < g->n; b++) {
        int16_t *xb = f->xp + b * img;
        fill_border(xb, f->hp, f->wpd, g->ci, g->pt, g->pl, g->h, g->w, (int16_t)q->zp_in[0]);
        for (int64_t c = 0; c < g->ci; c++) {
            const int8_t *xc = x + (b * g->ci + c) * plane;
            for (int64_t iy = 0; iy < g->h; iy++) {
                int16_t *dst = xb + ((iy + g->pt) * f->wpd + g->pl) * g->ci + c;
                const int8_t *src = xc + iy * g->w;
                for (int64_t ix = 0; ix < g->w; ix++) dst[ix * g->ci] = src[ix];
            }
        }
    }
    const int64_t n_pix = g->n * g->oh * g->ow, oplane = g->oh * g->ow;
    int32_t out[GF_NP * GF_NC];
    for (int64_t p0 = 0; p0 < n_pix; p0 += GF_NP) {
        int np = n_pix - p0 < GF_NP ? (int)(n_pix - p0) : GF_NP;
        for (int64_t gi = 0; gi < g->group; gi++)
            for (int64_t cb = 0; cb < f->opg; cb += GF_NC) {
                f->simd->dot4(f->wp + (gi * f->opg_pad + cb) * f->ws, f->ws, f->xp + gi * f->cpg,
                              f->base + p0, np, f->roff, f->nr, f->rp, out);
                int nc = f->opg - cb < GF_NC ? (int)(f->opg - cb) : GF_NC;
                int32_t *d = f->dots + (gi * f->opg + cb) * n_pix + p0;
                for (int c = 0; c < nc; c++)
                    for (int p = 0; p < np; p++) d[c * n_pix + p] = out[p * GF_NC + c];
            }
    }
    /* requantization channel by channel, its parameters held in registers */
    for (int64_t co = 0; co < g->co; co++) {
        const int64_t bias = q->bias[co];
        const uint32_t m = q->M[co];
        const int sh = q->S[co];
        const int32_t zo = q->zp_out, lo = q->lo, hi = q->hi;
        for (int64_t b = 0; b < g->n; b++) {
            const int32_t *d = f->dots + co * n_pix + b * oplane;
            int8_t *yc = y + (b * g->co + co) * oplane;
            for (int64_t p = 0; p < oplane; p++)
                yc[p] = (int8_t)enpu_requant_as(f->rqmode, bias + d[p], m, sh, zo, lo, hi);
        }
    }
}

/* Depthwise: per channel, every tap is one axpy over the whole output (rows
 * wq apart, the columns between them computed and dropped) when sh == 1, or
 * one per output row.  A column stride sw > 1 reads the plane split into sw
 * phases (column j*sw + k of the plane is column j of phase k), so that
 * every tap reads contiguous values. */
static void run_dw(gf_node *f, const int8_t *x, int8_t *y) {
    const enpu_qconv_geom *g = &f->g;
    const enpu_qnode *q = f->q;
    const int64_t plane = g->h * g->w, oplane = g->oh * g->ow, wq = f->wq, hp = f->hp;
    const int16_t *src = g->sw > 1 ? f->phase : f->xp;
    for (int64_t b = 0; b < g->n; b++) {
        int64_t loaded = -1;
        for (int64_t c = 0; c < g->co; c++) {
            int64_t ic = c / f->opg;
            if (ic != loaded) {
                fill_border(f->xp, hp, f->wpd, 1, g->pt, g->pl, g->h, g->w, (int16_t)q->zp_in[0]);
                const int8_t *xc = x + (b * g->ci + ic) * plane;
                for (int64_t iy = 0; iy < g->h; iy++) {
                    int16_t *dst = f->xp + (iy + g->pt) * f->wpd + g->pl;
                    for (int64_t ix = 0; ix < g->w; ix++) dst[ix] = xc[iy * g->w + ix];
                }
                for (int64_t k = 0; k < g->sw && g->sw > 1; k++)
                    for (int64_t yy = 0; yy < hp; yy++) {
                        int16_t *ph = f->phase + (k * hp + yy) * wq;
                        const int16_t *row = f->xp + yy * f->wpd;
                        for (int64_t j = 0; j < wq; j++)
                            ph[j] = j * g->sw + k < f->wpd ? row[j * g->sw + k] : 0;
                    }
                loaded = ic;
            }
            const int8_t *wc = q->w + c * g->k;
            memset(f->acc, 0, (size_t)(g->oh * wq) * sizeof *f->acc);
            for (int ky = 0; ky < g->kh; ky++)
                for (int kx = 0; kx < g->kw; kx++) {
                    int32_t wv = wc[ky * g->kw + kx];
                    if (!wv) continue; /* adds nothing */
                    int64_t c0 = (int64_t)kx * g->dw;
                    const int16_t *tap = src + (c0 % g->sw) * hp * wq + c0 / g->sw +
                                         (int64_t)ky * g->dh * wq;
                    if (g->sh == 1) {
                        f->simd->axpy(f->acc, tap, wv, (g->oh - 1) * wq + g->ow);
                    } else {
                        for (int64_t oy = 0; oy < g->oh; oy++)
                            f->simd->axpy(f->acc + oy * wq, tap + oy * g->sh * wq, wv, g->ow);
                    }
                }
            const int64_t bias = q->bias[c];
            const uint32_t m = q->M[c];
            const int sh = q->S[c];
            int8_t *yc = y + (b * g->co + c) * oplane;
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++)
                    yc[oy * g->ow + ox] = (int8_t)enpu_requant_as(
                        f->rqmode, bias + f->acc[oy * wq + ox], m, sh, q->zp_out, q->lo, q->hi);
        }
    }
}

static void run_lut_ch(gf_node *f, const int8_t *x, int8_t *y) {
    const enpu_qconv_geom *g = &f->g;
    const int64_t plane = g->h * g->w;
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t c = 0; c < g->co; c++) {
            const int8_t *lut = f->lut + c * 256 + 128;
            const int8_t *xc = x + (b * g->ci + c) * plane;
            int8_t *yc = y + (b * g->co + c) * plane;
            for (int64_t i = 0; i < plane; i++) yc[i] = lut[xc[i]];
        }
}

static void run_maxpool(gf_node *f, const int8_t *x, int8_t *y) {
    const enpu_qconv_geom *g = &f->g;
    const enpu_qnode *q = f->q;
    const int64_t plane = g->h * g->w, oplane = g->oh * g->ow;
    for (int64_t p = 0; p < g->n * g->ci; p++) {
        memset(f->plane, -128, (size_t)(f->hp * f->wpd));
        const int8_t *xp = x + p * plane;
        for (int64_t iy = 0; iy < g->h; iy++)
            memcpy(f->plane + (iy + g->pt) * f->wpd + g->pl, xp + iy * g->w, (size_t)g->w);
        int8_t *yp = y + p * oplane;
        for (int64_t oy = 0; oy < g->oh; oy++) {
            memset(f->mrow, -128, (size_t)g->ow);
            for (int ky = 0; ky < g->kh; ky++)
                for (int kx = 0; kx < g->kw; kx++) {
                    const int8_t *row =
                        f->plane + (oy * g->sh + (int64_t)ky * g->dh) * f->wpd + (int64_t)kx * g->dw;
                    for (int64_t ox = 0; ox < g->ow; ox++) {
                        int8_t v = row[ox * g->sw];
                        if (v > f->mrow[ox]) f->mrow[ox] = v;
                    }
                }
            for (int64_t ox = 0; ox < g->ow; ox++) {
                int64_t v = f->row_ok[oy] && f->col_ok[ox] ? f->mrow[ox] : q->zp_in[0];
                yp[oy * g->ow + ox] = (int8_t)enpu_clamp64(v, q->lo, q->hi);
            }
        }
    }
}

static void run_binary(gf_node *f, const int8_t *a, const int8_t *b, int8_t *y) {
    const enpu_qnode *q = f->q;
    const int64_t z0 = q->zp_in[0], z1 = q->zp_in[1];
    if (q->kind == ENPU_Q_ADD && f->rqmode == ENPU_REQUANT_TFLITE) {
        for (int64_t i = 0; i < f->total; i++) {
            int64_t acc = enpu_tfl_add_term((int32_t)(a[i] - z0), q->A[0], q->SA[0]) +
                          enpu_tfl_add_term((int32_t)(b[i] - z1), q->A[1], q->SA[1]);
            y[i] = (int8_t)enpu_requant_tfl(acc, q->M[0], q->S[0], q->zp_out, q->lo, q->hi);
        }
    } else if (q->kind == ENPU_Q_ADD) {
        const int64_t a0 = q->A[0], a1 = q->A[1];
        for (int64_t i = 0; i < f->total; i++)
            y[i] = (int8_t)enpu_requant((a[i] - z0) * a0 + (b[i] - z1) * a1, 1, q->S[0], q->zp_out,
                                        q->lo, q->hi);
    } else {
        for (int64_t i = 0; i < f->total; i++)
            y[i] = (int8_t)enpu_requant_as(f->rqmode, (a[i] - z0) * (b[i] - z1), q->M[0], q->S[0],
                                           q->zp_out, q->lo, q->hi);
    }
}

void gf_run(gf_node *f, const int8_t *const *x, int8_t *y) {
    switch (f->kind) {
    case GF_DOT: run_dot(f, x[0], y); break;
    case GF_DW: run_dw(f, x[0], y); break;
    case GF_LUT_CH: run_lut_ch(f, x[0], y); break;
    case GF_LUT:
        for (int64_t i = 0; i < f->total; i++) y[i] = f->lut[x[0][i] + 128];
        break;
    case GF_MAXPOOL: run_maxpool(f, x[0], y); break;
    case GF_BINARY: run_binary(f, x[0], x[1], y); break;
    }
}
