/* Float reference kernels of the pooling ops: MaxPool, AveragePool and
 * GlobalAveragePool, following the ONNX reference semantics. */
#include <math.h>
#include <stdio.h>

#include "ref/fref_internal.h"

/* Output extent of one pooled axis for floor (ceil = false) or ceil mode;
 * -1 when the kernel does not fit the padded input. */
static int64_t pool_extent(int64_t in, int pa, int pb, int k, int s, int d, bool ceil) {
    int64_t span = in + pa + pb - ((int64_t)d * (k - 1) + 1);
    if (span < 0) return -1;
    return (ceil ? (span + s - 1) / s : span / s) + 1;
}

int enpu_fref_check_pool(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    if (x->rank != 3 && x->rank != 4)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: input '%s' has rank %d; the float reference pools 1-D and 2-D "
                         "inputs only",
                         what, x->name, x->rank);
    const enpu_pool_attr *pa = &n->attr.pool;
    int kh = x->rank == 4 ? pa->w.kernel[0] : 1, kw = pa->w.kernel[1];
    enpu_fref_geom q;
    int rc = enpu_fref_geom_init(g, n, &pa->w, kh, kw, &q, err);
    if (rc) return rc;
    /* Shape inference may or may not drop a last ceil-mode window that would
     * start in the right padding; both extents are acceptable here. */
    int64_t lo_h = pool_extent(q.h, q.pt, q.pb, q.kh, q.sh, q.dh, false);
    int64_t lo_w = pool_extent(q.w, q.pl, q.pr, q.kw, q.sw, q.dw, false);
    int64_t hi_h = pool_extent(q.h, q.pt, q.pb, q.kh, q.sh, q.dh, pa->ceil_mode);
    int64_t hi_w = pool_extent(q.w, q.pl, q.pr, q.kw, q.sw, q.dw, pa->ceil_mode);
    int64_t od[4] = {q.n, q.c, hi_h, hi_w};
    if (x->rank == 3) od[2] = od[3];
    if (lo_h < 1 || lo_w < 1)
        return enpu_fail(err, ENPU_E_INVALID, "%s: kernel larger than the padded input '%s'",
                         what, x->name);
    if (y->rank != x->rank || q.oc != q.c || y->dims[0] != q.n || q.oh < lo_h || q.oh > hi_h ||
        q.ow < lo_w || q.ow > hi_w)
        return enpu_fref_bad_shape(n, y, x->rank, od, err);
    return 0;
}

void enpu_fref_pool(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    const enpu_pool_attr *pa = &n->attr.pool;
    int kh = x->rank == 4 ? pa->w.kernel[0] : 1, kw = pa->w.kernel[1];
    enpu_fref_geom q;
    enpu_fref_geom_init(g, n, &pa->w, kh, kw, &q, NULL);
    bool is_max = n->op == ENPU_OP_MAXPOOL;
    for (int64_t p = 0; p < q.n * q.c; p++) {
        const float *xp = in[0] + p * q.h * q.w;
        float *yp = out[0] + p * q.oh * q.ow;
        for (int64_t oy = 0; oy < q.oh; oy++)
            for (int64_t ox = 0; ox < q.ow; ox++) {
                int64_t y0 = oy * q.sh - q.pt, x0 = ox * q.sw - q.pl;
                double sum = 0.0;
                float best = -INFINITY;
                int64_t n_in = 0, n_padded = 0;
                for (int ky = 0; ky < q.kh; ky++) {
                    int64_t iy = y0 + (int64_t)ky * q.dh;
                    bool pad_y = iy >= -q.pt && iy < q.h + q.pb, in_y = iy >= 0 && iy < q.h;
                    for (int kx = 0; kx < q.kw; kx++) {
                        int64_t ix = x0 + (int64_t)kx * q.dw;
                        if (pad_y && ix >= -q.pl && ix < q.w + q.pr) n_padded++;
                        if (!in_y || ix < 0 || ix >= q.w) continue;
                        float v = xp[iy * q.w + ix];
                        n_in++;
                        sum += v;
                        if (v > best || isnan(v)) best = v;
                    }
                }
                /* A window wholly outside the input (possible only at a
                 * ceil-mode edge) has no value; 0 keeps NaN out. */
                float r;
                if (n_in == 0)
                    r = 0.0f;
                else if (is_max)
                    r = best;
                else
                    r = (float)(sum / (double)(pa->count_include_pad ? n_padded : n_in));
                yp[oy * q.ow + ox] = r;
            }
    }
}

int enpu_fref_check_global_avgpool(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    if (x->rank < 3)
        return enpu_fail(err, ENPU_E_INVALID, "%s: input '%s' must have rank >= 3", what,
                         x->name);
    int64_t od[ENPU_MAX_RANK];
    for (int d = 0; d < x->rank; d++) od[d] = d < 2 ? x->dims[d] : 1;
    if (!enpu_fref_same_shape(y, x->rank, od)) return enpu_fref_bad_shape(n, y, x->rank, od, err);
    return 0;
}

void enpu_fref_global_avgpool(const enpu_graph *g, const enpu_node *n, const float *const *in,
                              float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    int64_t inner = 1;
    for (int d = 2; d < x->rank; d++) inner *= x->dims[d];
    for (int64_t p = 0; p < x->dims[0] * x->dims[1]; p++) {
        double sum = 0.0;
        for (int64_t i = 0; i < inner; i++) sum += in[0][p * inner + i];
        out[0][p] = inner ? (float)(sum / (double)inner) : 0.0f;
    }
}
