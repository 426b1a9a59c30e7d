/* Float reference kernels of the multiply-accumulate ops: Conv, Gemm, MatMul,
 * and BatchNormalization.  Sums are accumulated in double: the reference is
 * the yardstick, so its own rounding should be far below any error it is
 * used to measure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/fref_internal.h"

/* --- Conv ------------------------------------------------------------------ */

int enpu_fref_check_conv(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *w = enpu_node_input(g, n, 1);
    const enpu_tensor *b = enpu_node_input(g, n, 2);
    if (w->rank != x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: weight '%s' has rank %d, input has rank %d",
                         what, w->name, w->rank, x->rank);
    if (x->rank != 3 && x->rank != 4)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: input '%s' has rank %d; the float reference runs 1-D and 2-D "
                         "convolutions only",
                         what, x->name, x->rank);
    if (w->dims[2] > 1 << 20 || w->dims[w->rank - 1] > 1 << 20)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: kernel of weight '%s' is too large", what,
                         w->name);
    int kh = x->rank == 4 ? (int)w->dims[2] : 1, kw = (int)w->dims[w->rank - 1];
    enpu_fref_geom geo;
    int rc = enpu_fref_geom_init(g, n, &n->attr.conv.w, kh, kw, &geo, err);
    if (rc) return rc;
    int group = n->attr.conv.group;
    if (group < 1 || w->dims[0] % group != 0 || geo.c != w->dims[1] * group)
        return enpu_fail(err, ENPU_E_INVALID,
                         "%s: group %d does not fit input channels %lld and weight '%s' "
                         "[%lld, %lld, ...]",
                         what, group, (long long)geo.c, w->name, (long long)w->dims[0],
                         (long long)w->dims[1]);
    if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
        return enpu_fail(err, ENPU_E_INVALID, "%s: bias '%s' must be a vector of %lld values",
                         what, b->name, (long long)w->dims[0]);
    int64_t eh = geo.h + geo.pt + geo.pb - ((int64_t)geo.dh * (geo.kh - 1) + 1);
    int64_t ew = geo.w + geo.pl + geo.pr - ((int64_t)geo.dw * (geo.kw - 1) + 1);
    if (eh < 0 || ew < 0)
        return enpu_fail(err, ENPU_E_INVALID, "%s: kernel larger than the padded input '%s'",
                         what, x->name);
    int64_t od[4] = {geo.n, w->dims[0], eh / geo.sh + 1, ew / geo.sw + 1};
    if (x->rank == 3) od[2] = od[3];
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    if (!enpu_fref_same_shape(y, x->rank, od)) return enpu_fref_bad_shape(n, y, x->rank, od, err);
    return 0;
}

void enpu_fref_conv(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out) {
    const enpu_tensor *w = enpu_node_input(g, n, 1);
    enpu_fref_geom q;
    int kh = w->rank == 4 ? (int)w->dims[2] : 1, kw = (int)w->dims[w->rank - 1];
    enpu_fref_geom_init(g, n, &n->attr.conv.w, kh, kw, &q, NULL);
    const float *x = in[0], *wt = in[1], *bias = n->n_in > 2 ? in[2] : NULL;
    float *y = out[0];
    int64_t m_total = q.oc, mpg = m_total / n->attr.conv.group, cpg = w->dims[1];
    for (int64_t b = 0; b < q.n; b++)
        for (int64_t m = 0; m < m_total; m++) {
            int64_t grp = m / mpg;
            const float *wm = wt + m * cpg * q.kh * q.kw;
            float *ym = y + (b * m_total + m) * q.oh * q.ow;
            for (int64_t oy = 0; oy < q.oh; oy++)
                for (int64_t ox = 0; ox < q.ow; ox++) {
                    double acc = bias ? bias[m] : 0.0;
                    int64_t iy0 = oy * q.sh - q.pt, ix0 = ox * q.sw - q.pl;
                    for (int64_t ci = 0; ci < cpg; ci++) {
                        const float *xc = x + (b * q.c + grp * cpg + ci) * q.h * q.w;
                        const float *wc = wm + ci * q.kh * q.kw;
                        for (int ky = 0; ky < q.kh; ky++) {
                            int64_t iy = iy0 + (int64_t)ky * q.dh;
                            if (iy < 0 || iy >= q.h) continue;
                            for (int kx = 0; kx < q.kw; kx++) {
                                int64_t ix = ix0 + (int64_t)kx * q.dw;
                                if (ix < 0 || ix >= q.w) continue;
                                acc += (double)xc[iy * q.w + ix] * wc[ky * q.kw + kx];
                            }
                        }
                    }
                    ym[oy * q.ow + ox] = (float)acc;
                }
        }
}

/* --- Gemm ------------------------------------------------------------------ */

int enpu_fref_check_gemm(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *a = enpu_node_input(g, n, 0), *b = enpu_node_input(g, n, 1);
    const enpu_tensor *c = enpu_node_input(g, n, 2), *y = enpu_node_output(g, n, 0);
    if (a->rank != 2 || b->rank != 2)
        return enpu_fail(err, ENPU_E_INVALID, "%s: A '%s' and B '%s' must be matrices", what,
                         a->name, b->name);
    const enpu_gemm_attr *at = &n->attr.gemm;
    int64_t m = a->dims[at->trans_a ? 1 : 0], ka = a->dims[at->trans_a ? 0 : 1];
    int64_t kb = b->dims[at->trans_b ? 1 : 0], nn = b->dims[at->trans_b ? 0 : 1];
    if (ka != kb)
        return enpu_fail(err, ENPU_E_INVALID, "%s: inner dimensions differ (%lld vs %lld)", what,
                         (long long)ka, (long long)kb);
    int64_t od[2] = {m, nn};
    if (!enpu_fref_same_shape(y, 2, od)) return enpu_fref_bad_shape(n, y, 2, od, err);
    if (c) {
        int ro;
        int64_t o[ENPU_MAX_RANK];
        if (c->rank > 2 || !enpu_fref_bcast_shape(c->rank, c->dims, 2, od, &ro, o) || ro != 2 ||
            o[0] != m || o[1] != nn)
            return enpu_fail(err, ENPU_E_INVALID,
                             "%s: C '%s' does not broadcast to [%lld, %lld]", what, c->name,
                             (long long)m, (long long)nn);
    }
    return 0;
}

void enpu_fref_gemm(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out) {
    const enpu_tensor *a = enpu_node_input(g, n, 0), *c = enpu_node_input(g, n, 2);
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    const enpu_gemm_attr *at = &n->attr.gemm;
    int64_t m = y->dims[0], nn = y->dims[1], k = a->dims[at->trans_a ? 0 : 1];
    /* element (i, j) of A is A[i*sai + j*saj]; likewise B */
    int64_t sai = at->trans_a ? 1 : k, sak = at->trans_a ? m : 1;
    int64_t sbk = at->trans_b ? 1 : nn, sbj = at->trans_b ? k : 1;
    int64_t cst[2] = {0, 0};
    if (c) enpu_fref_bcast_strides(c->rank, c->dims, 2, y->dims, 1, cst);
    const float *av = in[0], *bv = in[1], *cv = c ? in[2] : NULL;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nn; j++) {
            double acc = 0.0;
            for (int64_t kk = 0; kk < k; kk++)
                acc += (double)av[i * sai + kk * sak] * bv[kk * sbk + j * sbj];
            double v = (double)at->alpha * acc;
            if (cv) v += (double)at->beta * cv[i * cst[0] + j * cst[1]];
            out[0][i * nn + j] = (float)v;
        }
}

/* --- MatMul (numpy semantics) --------------------------------------------- */

/* Batch shape (dims before the matrix) of an operand: a 1-D operand has
 * none. */
static int batch_rank(const enpu_tensor *t) { return t->rank >= 2 ? t->rank - 2 : 0; }

int enpu_fref_check_matmul(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *a = enpu_node_input(g, n, 0), *b = enpu_node_input(g, n, 1);
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    if (a->rank < 1 || b->rank < 1)
        return enpu_fail(err, ENPU_E_INVALID, "%s: MatMul operands must have rank >= 1", what);
    int64_t ka = a->dims[a->rank - 1], kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    if (ka != kb)
        return enpu_fail(err, ENPU_E_INVALID, "%s: inner dimensions differ (%lld vs %lld)", what,
                         (long long)ka, (long long)kb);
    int ro;
    int64_t od[ENPU_MAX_RANK + 2];
    if (!enpu_fref_bcast_shape(batch_rank(a), a->dims, batch_rank(b), b->dims, &ro, od))
        return enpu_fail(err, ENPU_E_INVALID, "%s: batch dimensions of '%s' and '%s' do not "
                         "broadcast", what, a->name, b->name);
    if (a->rank >= 2) od[ro++] = a->dims[a->rank - 2];
    if (b->rank >= 2) od[ro++] = b->dims[b->rank - 1];
    if (ro > ENPU_MAX_RANK || !enpu_fref_same_shape(y, ro, od))
        return enpu_fref_bad_shape(n, y, ro, od, err);
    return 0;
}

void enpu_fref_matmul(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *a = enpu_node_input(g, n, 0), *b = enpu_node_input(g, n, 1);
    int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, k = a->dims[a->rank - 1];
    int64_t nn = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int rb_a = batch_rank(a), rb_b = batch_rank(b), ro;
    int64_t bd[ENPU_MAX_RANK];
    enpu_fref_bcast_shape(rb_a, a->dims, rb_b, b->dims, &ro, bd);
    enpu_fref_iter it = {.rank = ro, .dims = bd};
    enpu_fref_bcast_strides(rb_a, a->dims, ro, bd, m * k, it.st[0]);
    enpu_fref_bcast_strides(rb_b, b->dims, ro, bd, k * nn, it.st[1]);
    int64_t batches = 1;
    for (int d = 0; d < ro; d++) batches *= bd[d];
    for (int64_t bi = 0; bi < batches; bi++, enpu_fref_iter_next(&it)) {
        const float *av = in[0] + it.off[0], *bv = in[1] + it.off[1];
        float *yv = out[0] + bi * m * nn;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                double acc = 0.0;
                for (int64_t kk = 0; kk < k; kk++) acc += (double)av[i * k + kk] * bv[kk * nn + j];
                yv[i * nn + j] = (float)acc;
            }
    }
}

/* --- BatchNormalization (inference) ---------------------------------------- */

int enpu_fref_check_batchnorm(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    if (x->rank < 2)
        return enpu_fail(err, ENPU_E_INVALID, "%s: input '%s' must have rank >= 2", what,
                         x->name);
    for (int i = 1; i < 5; i++) {
        const enpu_tensor *p = enpu_node_input(g, n, i);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            return enpu_fail(err, ENPU_E_INVALID,
                             "%s: parameter '%s' must be a vector of %lld values", what, p->name,
                             (long long)x->dims[1]);
    }
    if (!enpu_fref_same_shape(y, x->rank, x->dims))
        return enpu_fref_bad_shape(n, y, x->rank, x->dims, err);
    return 0;
}

void enpu_fref_batchnorm(const enpu_graph *g, const enpu_node *n, const float *const *in,
                         float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    int64_t c = x->dims[1], inner = 1;
    for (int d = 2; d < x->rank; d++) inner *= x->dims[d];
    const float *scale = in[1], *bias = in[2], *mean = in[3], *var = in[4];
    double eps = n->attr.bn.epsilon;
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t ch = 0; ch < c; ch++) {
            double mul = scale[ch] / sqrt((double)var[ch] + eps), mu = mean[ch];
            const float *xv = in[0] + (b * c + ch) * inner;
            float *yv = out[0] + (b * c + ch) * inner;
            for (int64_t i = 0; i < inner; i++) yv[i] = (float)((xv[i] - mu) * mul + bias[ch]);
        }
}

/* --- ConvTranspose ----------------------------------------------------------------- */

int enpu_fref_check_conv_transpose(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *w = enpu_node_input(g, n, 1);
    const enpu_tensor *b = enpu_node_input(g, n, 2), *y = enpu_node_output(g, n, 0);
    if (w->rank != x->rank || (x->rank != 3 && x->rank != 4))
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: input '%s' of rank %d, weight of rank %d: "
                         "1-D and 2-D only", what, x->name, x->rank, w->rank);
    if (w->dims[2] > 1 << 20 || w->dims[w->rank - 1] > 1 << 20)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: kernel of weight '%s' is too large", what, w->name);
    const enpu_conv_attr *a = &n->attr.conv;
    int group = a->group;
    if (group < 1 || x->dims[1] != w->dims[0] || w->dims[0] % group != 0)
        return enpu_fail(err, ENPU_E_INVALID, "%s: group %d, input channels %lld, weight '%s' "
                         "[%lld, %lld, ...] do not agree", what, group, (long long)x->dims[1], w->name,
                         (long long)w->dims[0], (long long)w->dims[1]);
    int64_t co = w->dims[1] * group;
    if (b && (b->rank != 1 || b->dims[0] != co))
        return enpu_fail(err, ENPU_E_INVALID, "%s: bias '%s' must be a vector of %lld values", what,
                         b->name, (long long)co);
    int kh = x->rank == 4 ? (int)w->dims[2] : 1, kw = (int)w->dims[w->rank - 1];
    enpu_win2d q;
    int rc = enpu_window_2d(n, &a->w, x->rank, kh, kw, &q, err);
    if (rc) return rc;
    int64_t ih = x->rank == 4 ? x->dims[2] : 1, iw = x->dims[x->rank - 1];
    int64_t oh = q.sh * (ih - 1) + a->out_pad[0] + (int64_t)q.dh * (q.kh - 1) + 1 - q.pt - q.pb;
    int64_t ow = q.sw * (iw - 1) + a->out_pad[1] + (int64_t)q.dw * (q.kw - 1) + 1 - q.pl - q.pr;
    int64_t od[4] = {x->dims[0], co, oh, ow};
    if (x->rank == 3) od[2] = ow;
    if (!enpu_fref_same_shape(y, x->rank, od)) return enpu_fref_bad_shape(n, y, x->rank, od, err);
    return 0;
}

/* Scatter form: each input element adds x * w[k] to the output positions its
 * kernel taps reach (oy = iy*s - pad + ky*d). */
void enpu_fref_conv_transpose(const enpu_graph *g, const enpu_node *n, const float *const *in,
                              float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *w = enpu_node_input(g, n, 1),
                      *y = enpu_node_output(g, n, 0);
    const enpu_conv_attr *a = &n->attr.conv;
    enpu_win2d q;
    enpu_err e = {0};
    int kh = x->rank == 4 ? (int)w->dims[2] : 1, kw = (int)w->dims[w->rank - 1];
    ENPU_ASSERT(enpu_window_2d(n, &a->w, x->rank, kh, kw, &q, &e) == 0); /* checked */
    int64_t N = x->dims[0], ci = x->dims[1], G = a->group, cig = ci / G, cog = w->dims[1];
    int64_t ih = x->rank == 4 ? x->dims[2] : 1, iw = x->dims[x->rank - 1];
    int64_t co = cog * G, oh = y->rank == 4 ? y->dims[2] : 1, ow = y->dims[y->rank - 1];
    const float *xv = in[0], *wv = in[1], *bv = n->n_in > 2 && n->in[2] >= 0 ? in[2] : NULL;
    float *yv = out[0];
    int64_t total = enpu_tensor_numel(y);
    double *acc = calloc((size_t)(total ? total : 1), sizeof *acc);
    ENPU_ASSERT(acc); /* the output's size, which the executor could allocate */
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < ci; c++) {
            int64_t gr = c / cig;
            for (int64_t iy = 0; iy < ih; iy++)
                for (int64_t ix = 0; ix < iw; ix++) {
                    double v = xv[((b * ci + c) * ih + iy) * iw + ix];
                    for (int64_t oc = 0; oc < cog; oc++) {
                        const float *wk = wv + ((c * cog + oc) * q.kh) * q.kw;
                        double *yo = acc + (b * co + gr * cog + oc) * oh * ow;
                        for (int ky = 0; ky < q.kh; ky++) {
                            int64_t oy = iy * q.sh - q.pt + (int64_t)ky * q.dh;
                            if (oy < 0 || oy >= oh) continue;
                            for (int kx = 0; kx < q.kw; kx++) {
                                int64_t ox = ix * q.sw - q.pl + (int64_t)kx * q.dw;
                                if (ox < 0 || ox >= ow) continue;
                                yo[oy * ow + ox] += v * wk[ky * q.kw + kx];
                            }
                        }
                    }
                }
        }
    for (int64_t i = 0; i < total; i++) {
        int64_t c = (i / (oh * ow)) % co;
        yv[i] = (float)(acc[i] + (bv ? bv[c] : 0.0));
    }
    free(acc);
}
