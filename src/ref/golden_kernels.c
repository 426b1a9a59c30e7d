/* The golden reference's per-kind kernels, in integer arithmetic only
 * (numerics.h): conv (also fc, depthwise, pools as convs), maxpool, the
 * 16-bit conv, elementwise binaries with broadcast, table lookups and data
 * movements.  The executor (golden.c) calls one per node, or the fast
 * kernels (gfast.c) where they apply, which must equal these. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "ref/qrules.h"
#include "ref/gfast.h"
#include "ref/golden_internal.h"

/* --- kernels ----------------------------------------------------------------------------------- */

void gd_run_conv(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    enpu_qconv_geom g;
    enpu_qconv_geom_of(ex->qg, n, &g, NULL);
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t cpg = g.ci / g.group, opg = g.co / g.group;
    const int32_t zin = q->zp_in[0];
    for (int64_t b = 0; b < g.n; b++)
        for (int64_t co = 0; co < g.co; co++) {
            int64_t grp = co / opg;
            const int8_t *wc = q->w + co * g.k;
            int8_t *yc = y + (b * g.co + co) * g.oh * g.ow;
            for (int64_t oy = 0; oy < g.oh; oy++)
                for (int64_t ox = 0; ox < g.ow; ox++) {
                    int64_t acc = q->bias[co];
                    int64_t iy0 = oy * g.sh - g.pt, ix0 = ox * g.sw - g.pl;
                    for (int64_t ci = 0; ci < cpg; ci++) {
                        const int8_t *xc = x + (b * g.ci + grp * cpg + ci) * g.h * g.w;
                        const int8_t *wk = wc + ci * g.kh * g.kw;
                        for (int ky = 0; ky < g.kh; ky++) {
                            int64_t iy = iy0 + (int64_t)ky * g.dh;
                            bool row = iy >= 0 && iy < g.h;
                            for (int kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ix0 + (int64_t)kx * g.dw;
                                int32_t v = (row && ix >= 0 && ix < g.w) ? xc[iy * g.w + ix]
                                                                         : zin;
                                acc += (int64_t)v * wk[ky * g.kw + kx];
                            }
                        }
                    }
                    yc[oy * g.ow + ox] = (int8_t)enpu_requant_as(
                        ex->qg->requant, acc, q->M[co], q->S[co], q->zp_out, q->lo, q->hi);
                }
        }
}

void gd_run_maxpool(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    enpu_qconv_geom g;
    gd_maxpool_geom(ex->qg, n, &g, NULL);
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    for (int64_t p = 0; p < g.n * g.ci; p++) {
        const int8_t *xp = x + p * g.h * g.w;
        int8_t *yp = y + p * g.oh * g.ow;
        for (int64_t oy = 0; oy < g.oh; oy++)
            for (int64_t ox = 0; ox < g.ow; ox++) {
                int64_t iy0 = oy * g.sh - g.pt, ix0 = ox * g.sw - g.pl;
                int best = INT_MIN;
                for (int ky = 0; ky < g.kh; ky++) {
                    int64_t iy = iy0 + (int64_t)ky * g.dh;
                    if (iy < 0 || iy >= g.h) continue;
                    for (int kx = 0; kx < g.kw; kx++) {
                        int64_t ix = ix0 + (int64_t)kx * g.dw;
                        if (ix < 0 || ix >= g.w) continue;
                        if (xp[iy * g.w + ix] > best) best = xp[iy * g.w + ix];
                    }
                }
                if (best == INT_MIN) best = q->zp_in[0];
                yp[oy * g.ow + ox] = (int8_t)enpu_clamp64(best, q->lo, q->hi);
            }
    }
}

/* run_conv on a 16-bit graph: int16 data, a 64-bit accumulator, the product
 * with M formed exactly (enpu_requant_wide); zero points are 0. */
void gd_run_conv16(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    enpu_qconv_geom g;
    enpu_qconv_geom_of(ex->qg, n, &g, NULL);
    const int16_t *x = ex->v16[n->in[0]];
    int16_t *y = ex->v16[n->out[0]];
    int64_t cpg = g.ci / g.group, opg = g.co / g.group;
    for (int64_t b = 0; b < g.n; b++)
        for (int64_t co = 0; co < g.co; co++) {
            int64_t grp = co / opg;
            const int16_t *wc = q->w16 + co * g.k;
            int16_t *yc = y + (b * g.co + co) * g.oh * g.ow;
            for (int64_t oy = 0; oy < g.oh; oy++)
                for (int64_t ox = 0; ox < g.ow; ox++) {
                    int64_t acc = q->bias[co];
                    int64_t iy0 = oy * g.sh - g.pt, ix0 = ox * g.sw - g.pl;
                    for (int64_t ci = 0; ci < cpg; ci++) {
                        const int16_t *xc = x + (b * g.ci + grp * cpg + ci) * g.h * g.w;
                        const int16_t *wk = wc + ci * g.kh * g.kw;
                        for (int ky = 0; ky < g.kh; ky++) {
                            int64_t iy = iy0 + (int64_t)ky * g.dh;
                            if (iy < 0 || iy >= g.h) continue; /* padding reads 0 */
                            for (int kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ix0 + (int64_t)kx * g.dw;
                                if (ix >= 0 && ix < g.w) acc += (int64_t)xc[iy * g.w + ix] * wk[ky * g.kw + kx];
                            }
                        }
                    }
                    yc[oy * g.ow + ox] =
                        (int16_t)enpu_requant_wide(acc, q->M[co], q->S[co], 0, q->lo, q->hi);
                }
        }
}

/* Element strides of t read as broadcast to y (0 along broadcast dims). */
static void bcast_strides(const enpu_tensor *t, const enpu_tensor *y, int64_t *st) {
    int64_t s = 1;
    for (int d = y->rank - 1; d >= 0; d--) {
        int sd = d - (y->rank - t->rank);
        if (sd < 0) {
            st[d] = 0;
            continue;
        }
        st[d] = (t->dims[sd] == 1 && y->dims[d] != 1) ? 0 : s;
        s *= t->dims[sd];
    }
}

void gd_run_binary(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    const enpu_graph *qg = ex->qg;
    const enpu_tensor *ta = &qg->tensors[n->in[0]], *tb = &qg->tensors[n->in[1]];
    const enpu_tensor *ty = &qg->tensors[n->out[0]];
    const int8_t *a = ex->v8[n->in[0]], *b = ex->v8[n->in[1]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t sa[ENPU_MAX_RANK], sb[ENPU_MAX_RANK], idx[ENPU_MAX_RANK] = {0};
    bcast_strides(ta, ty, sa);
    bcast_strides(tb, ty, sb);
    int64_t total = enpu_tensor_numel(ty), oa = 0, ob = 0;
    const int64_t z0 = q->zp_in[0], z1 = q->zp_in[1];
    const bool tfl = qg->requant == ENPU_REQUANT_TFLITE;
    for (int64_t i = 0; i < total; i++) {
        int64_t d0 = a[oa] - z0, d1 = b[ob] - z1, acc;
        if (q->kind == ENPU_Q_ADD && tfl) {
            acc = enpu_tfl_add_term((int32_t)d0, q->A[0], q->SA[0]) +
                  enpu_tfl_add_term((int32_t)d1, q->A[1], q->SA[1]);
            y[i] = (int8_t)enpu_requant_tfl(acc, q->M[0], q->S[0], q->zp_out, q->lo, q->hi);
        } else if (q->kind == ENPU_Q_ADD) {
            acc = d0 * (int64_t)q->A[0] + d1 * (int64_t)q->A[1];
            y[i] = (int8_t)enpu_requant(acc, 1, q->S[0], q->zp_out, q->lo, q->hi);
        } else {
            acc = d0 * d1;
            y[i] = (int8_t)enpu_requant_as(qg->requant, acc, q->M[0], q->S[0], q->zp_out, q->lo,
                                             q->hi);
        }
        for (int d = ty->rank - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < ty->dims[d]) break;
            oa -= sa[d] * ty->dims[d];
            ob -= sb[d] * ty->dims[d];
            idx[d] = 0;
        }
    }
}

void gd_run_table(enpu_gexec *ex, const enpu_node *n) {
    const enpu_pwl_table *t = n->q->table;
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t total = enpu_tensor_numel(&ex->qg->tensors[n->out[0]]);
    for (int64_t i = 0; i < total; i++) y[i] = enpu_pwl_eval(t, x[i]);
}

static void strides_of(const enpu_tensor *t, int64_t *st) {
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->dims[d];
    }
}

void gd_run_move(enpu_gexec *ex, const enpu_node *n) {
    const enpu_graph *qg = ex->qg;
    const enpu_tensor *tx = &qg->tensors[n->in[0]], *ty = &qg->tensors[n->out[0]];
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t total = enpu_tensor_numel(ty), idx[ENPU_MAX_RANK] = {0}, xs[ENPU_MAX_RANK];
    switch (n->op) {
    case ENPU_OP_TRANSPOSE: {
        strides_of(tx, xs);
        int64_t st[ENPU_MAX_RANK];
        for (int d = 0; d < ty->rank; d++) st[d] = xs[n->attr.shape.axes[d]];
        int64_t off = 0;
        for (int64_t i = 0; i < total; i++) {
            y[i] = x[off];
            for (int d = ty->rank - 1; d >= 0; d--) {
                off += st[d];
                if (++idx[d] < ty->dims[d]) break;
                off -= st[d] * ty->dims[d];
                idx[d] = 0;
            }
        }
        return;
    }
    case ENPU_OP_CONCAT: {
        int ax = n->attr.shape.axis;
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < ax; d++) outer *= ty->dims[d];
        for (int d = ax + 1; d < ty->rank; d++) inner *= ty->dims[d];
        int64_t pos = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int k = 0; k < n->n_in; k++) {
                const enpu_tensor *tk = &qg->tensors[n->in[k]];
                int64_t chunk = tk->dims[ax] * inner;
                memcpy(y + pos, ex->v8[n->in[k]] + o * chunk, (size_t)chunk);
                pos += chunk;
            }
        return;
    }
    case ENPU_OP_PAD: {
        strides_of(tx, xs);
        const int64_t *pads = n->attr.pad.pads;
        int r = ty->rank;
        for (int64_t i = 0; i < total; i++) {
            int64_t off = 0;
            bool in = true;
            for (int d = 0; d < r; d++) {
                int64_t s = idx[d] - pads[d];
                if (s < 0 || s >= tx->dims[d]) in = false;
                off += s * xs[d];
            }
            y[i] = in ? x[off] : (int8_t)n->q->zp_out;
            for (int d = r - 1; d >= 0; d--) {
                if (++idx[d] < ty->dims[d]) break;
                idx[d] = 0;
            }
        }
        return;
    }
    default:
        if (total) memcpy(y, x, (size_t)total);
        return;
    }
}
