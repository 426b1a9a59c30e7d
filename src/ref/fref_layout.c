/* Float reference kernels of the data-movement ops: the copies (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference, Cast to
 * float32), Transpose, Concat, Pad (constant, edge, reflect), Slice, Gather
 * of constant indices, Expand and Resize. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/fref_internal.h"

int enpu_fref_check_copy(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    if (enpu_tensor_numel(x) != enpu_tensor_numel(y))
        return enpu_fail(err, ENPU_E_INVALID, "%s: output '%s' has %lld elements, input '%s' %lld",
                         what, y->name, (long long)enpu_tensor_numel(y), x->name,
                         (long long)enpu_tensor_numel(x));
    return 0;
}

void enpu_fref_copy(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    int64_t total = enpu_tensor_numel(x);
    if (total > 0 && out[0] != in[0]) memcpy(out[0], in[0], (size_t)total * sizeof(float));
}

int enpu_fref_check_transpose(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_shape_attr *at = &n->attr.shape;
    bool seen[ENPU_MAX_RANK] = {false};
    if (at->n_axes != x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: perm has %d axes, input '%s' has rank %d",
                         what, at->n_axes, x->name, x->rank);
    int64_t od[ENPU_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        int p = at->axes[d];
        if (p < 0 || p >= x->rank || seen[p])
            return enpu_fail(err, ENPU_E_INVALID, "%s: perm is not a permutation of 0..%d", what,
                             x->rank - 1);
        seen[p] = true;
        od[d] = x->dims[p];
    }
    if (!enpu_fref_same_shape(y, x->rank, od)) return enpu_fref_bad_shape(n, y, x->rank, od, err);
    return 0;
}

void enpu_fref_transpose(const enpu_graph *g, const enpu_node *n, const float *const *in,
                         float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    int r = x->rank;
    int64_t xs[ENPU_MAX_RANK], s = 1;
    for (int d = r - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x->dims[d];
    }
    enpu_fref_iter it = {.rank = r, .dims = y->dims};
    for (int d = 0; d < r; d++) it.st[0][d] = xs[n->attr.shape.axes[d]];
    int64_t total = enpu_tensor_numel(y);
    for (int64_t i = 0; i < total; i++, enpu_fref_iter_next(&it)) out[0][i] = in[0][it.off[0]];
}

int enpu_fref_check_concat(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x0 = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    int axis = n->attr.shape.axis;
    if (axis < 0 || axis >= x0->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d out of range for rank %d", what, axis,
                         x0->rank);
    int64_t od[ENPU_MAX_RANK];
    memcpy(od, x0->dims, sizeof od);
    od[axis] = 0;
    for (int i = 0; i < n->n_in; i++) {
        const enpu_tensor *x = enpu_node_input(g, n, i);
        bool ok = x->rank == x0->rank;
        for (int d = 0; ok && d < x->rank; d++) ok = d == axis || x->dims[d] == x0->dims[d];
        if (!ok)
            return enpu_fail(err, ENPU_E_INVALID,
                             "%s: input '%s' does not match '%s' outside axis %d", what, x->name,
                             x0->name, axis);
        od[axis] += x->dims[axis];
    }
    if (!enpu_fref_same_shape(y, x0->rank, od)) return enpu_fref_bad_shape(n, y, x0->rank, od, err);
    return 0;
}

void enpu_fref_concat(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    int axis = n->attr.shape.axis;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= y->dims[d];
    for (int d = axis + 1; d < y->rank; d++) inner *= y->dims[d];
    int64_t row = y->dims[axis] * inner, at = 0;
    for (int i = 0; i < n->n_in; i++) {
        int64_t chunk = enpu_node_input(g, n, i)->dims[axis] * inner;
        for (int64_t o = 0; o < outer && chunk > 0; o++)
            memcpy(out[0] + o * row + at, in[i] + o * chunk, (size_t)chunk * sizeof(float));
        at += chunk;
    }
}

int enpu_fref_check_pad(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_tensor *v = enpu_node_input(g, n, 2);
    const enpu_pad_attr *pa = &n->attr.pad;
    if (pa->n_pads != 2 * x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: %d pads for input '%s' of rank %d", what,
                         pa->n_pads, x->name, x->rank);
    if (v && enpu_tensor_numel(v) != 1)
        return enpu_fail(err, ENPU_E_INVALID, "%s: constant_value '%s' must be a scalar", what,
                         v->name);
    int64_t od[ENPU_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        int64_t b = pa->pads[d], e = pa->pads[x->rank + d];
        if (b < -ENPU_MAX_DIM || b > ENPU_MAX_DIM || e < -ENPU_MAX_DIM || e > ENPU_MAX_DIM)
            return enpu_fail(err, ENPU_E_LIMIT, "%s: pad of axis %d out of range", what, d);
        od[d] = x->dims[d] + b + e;
        if (od[d] < 0)
            return enpu_fail(err, ENPU_E_INVALID, "%s: pads crop axis %d below zero", what, d);
    }
    if (!enpu_fref_same_shape(y, x->rank, od)) return enpu_fref_bad_shape(n, y, x->rank, od, err);
    return 0;
}

void enpu_fref_pad(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_pad_attr *pa = &n->attr.pad;
    float value = pa->value;
    if (n->n_in > 2 && n->in[2] >= 0 && in[2]) value = in[2][0];
    int r = x->rank;
    int64_t xs[ENPU_MAX_RANK], idx[ENPU_MAX_RANK] = {0}, s = 1;
    for (int d = r - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x->dims[d];
    }
    int64_t total = enpu_tensor_numel(y);
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < r && inside; d++) {
            int64_t c = idx[d] - pa->pads[d], dim = x->dims[d];
            if (pa->mode == ENPU_PADMODE_EDGE) c = c < 0 ? 0 : c >= dim ? dim - 1 : c;
            else if (pa->mode == ENPU_PADMODE_REFLECT && dim > 1) {
                /* mirror about the edge elements, which are not repeated */
                int64_t period = 2 * (dim - 1);
                c %= period;
                if (c < 0) c += period;
                if (c >= dim) c = period - c;
            } else if (pa->mode == ENPU_PADMODE_REFLECT) {
                c = 0;
            }
            inside = c >= 0 && c < dim;
            off += c * xs[d];
        }
        out[0][i] = inside ? in[0][off] : value;
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* --- Slice ------------------------------------------------------------------------ */

int enpu_fref_check_slice(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_slice_attr *a = &n->attr.slice;
    if (a->n != x->rank || y->rank != x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: slice of %d axes for rank %d (shapes not "
                         "inferred?)", what, a->n, x->rank);
    for (int d = 0; d < x->rank; d++) {
        if (y->dims[d] == 0) continue;
        int64_t last = a->starts[d] + (y->dims[d] - 1) * a->steps[d];
        if (a->steps[d] == 0 || a->starts[d] < 0 || a->starts[d] >= x->dims[d] || last < 0 ||
            last >= x->dims[d])
            return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d reads outside the input", what, d);
    }
    return 0;
}

void enpu_fref_slice(const enpu_graph *g, const enpu_node *n, const float *const *in,
                     float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_slice_attr *a = &n->attr.slice;
    int64_t xs[ENPU_MAX_RANK], s = 1, base = 0;
    for (int d = x->rank - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
    enpu_fref_iter it = {.rank = y->rank, .dims = y->dims};
    for (int d = 0; d < y->rank; d++) {
        it.st[0][d] = a->steps[d] * xs[d];
        base += a->starts[d] * xs[d];
    }
    int64_t total = enpu_tensor_numel(y);
    for (int64_t i = 0; i < total; i++, enpu_fref_iter_next(&it)) out[0][i] = in[0][base + it.off[0]];
}

/* --- Gather ------------------------------------------------------------------------ */

/* The indices are a value input: a constant's are checked here, computed
 * ones on each run (enpu_fref_check_gather_values). */
static int gather_range(const char *what, int64_t k, int64_t dim, enpu_err *err) {
    if (k >= -dim && k < dim) return 0;
    return enpu_fail(err, ENPU_E_INVALID, "%s: index %lld is outside %lld..%lld", what, (long long)k,
                     (long long)-dim, (long long)dim - 1);
}

int enpu_fref_check_gather(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *ix = enpu_node_input(g, n, 1);
    if (!ix || ((ix->flags & ENPU_T_CONST) && !ix->data && enpu_tensor_numel(ix)) ||
        (ix->dtype != ENPU_DT_INT64 && ix->dtype != ENPU_DT_INT32))
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: the indices must be an int64/int32 tensor", what);
    int ax = n->attr.shape.axis;
    if (ax < 0 || ax >= x->rank) return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d", what, ax);
    int64_t cnt = enpu_tensor_numel(ix);
    for (int64_t i = 0; (ix->flags & ENPU_T_CONST) && i < cnt; i++) {
        int64_t k = (int64_t)enpu_dtype_value_at(ix->dtype, ix->data, i);
        int rc = gather_range(what, k, x->dims[ax], err);
        if (rc) return rc;
    }
    int64_t od[ENPU_MAX_RANK];
    int r = 0;
    for (int d = 0; d < ax; d++) od[r++] = x->dims[d];
    for (int d = 0; d < ix->rank; d++) od[r++] = ix->dims[d];
    for (int d = ax + 1; d < x->rank; d++) od[r++] = x->dims[d];
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    if (r > ENPU_MAX_RANK || !enpu_fref_same_shape(y, r, od)) return enpu_fref_bad_shape(n, y, r, od, err);
    return 0;
}

int enpu_fref_check_gather_values(const enpu_graph *g, const enpu_node *n, const float *ix,
                                  enpu_err *err) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *it = enpu_node_input(g, n, 1);
    int64_t cnt = enpu_tensor_numel(it), dim = x->dims[n->attr.shape.axis];
    for (int64_t i = 0; i < cnt; i++)
        if (!(ix[i] >= -(float)dim && ix[i] < (float)dim)) {
            char what[ENPU_MAX_NAME + 64];
            enpu_fref_what(n, what, sizeof what);
            return enpu_fail(err, ENPU_E_INVALID, "%s: computed index %g (element %lld of '%s') is "
                             "outside %lld..%lld", what, (double)ix[i], (long long)i, it->name,
                             (long long)-dim, (long long)dim - 1);
        }
    return 0;
}

void enpu_fref_gather(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *ix = enpu_node_input(g, n, 1);
    int ax = n->attr.shape.axis;
    int64_t outer = 1, inner = 1, dim = x->dims[ax], cnt = enpu_tensor_numel(ix);
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    float *o = out[0];
    for (int64_t q = 0; q < outer; q++)
        for (int64_t j = 0; j < cnt; j++) {
            int64_t k = (int64_t)in[1][j]; /* an integer, carried in float32 */
            if (k < 0) k += dim;
            if (inner) memcpy(o, in[0] + (q * dim + k) * inner, (size_t)inner * sizeof(float));
            o += inner;
        }
}

/* --- Expand ------------------------------------------------------------------------- */

int enpu_fref_check_expand(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    int ro;
    int64_t od[ENPU_MAX_RANK];
    if (!enpu_fref_bcast_shape(x->rank, x->dims, y->rank, y->dims, &ro, od) ||
        !enpu_fref_same_shape(y, ro, od))
        return enpu_fref_bad_shape(n, y, x->rank, x->dims, err);
    return 0;
}

void enpu_fref_expand(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    enpu_fref_iter it = {.rank = y->rank, .dims = y->dims};
    enpu_fref_bcast_strides(x->rank, x->dims, y->rank, y->dims, 1, it.st[0]);
    int64_t total = enpu_tensor_numel(y);
    for (int64_t i = 0; i < total; i++, enpu_fref_iter_next(&it)) out[0][i] = in[0][it.off[0]];
}

/* --- Resize ------------------------------------------------------------------------- */

/* One axis of a resize: for output index o, `n` input taps from index
 * base[o] (clamped into the input: the ONNX reference pads by the edge) with
 * weights w[o * n + k]; out[o] true when tf_crop_and_resize falls outside
 * the input (the element is the extrapolation value). */
typedef struct resize_axis {
    int n;
    int64_t *base;
    double *w;
    bool *outside;
} resize_axis;

static void cubic_coeffs(double r, double A, double *c) {
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
    c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
}

/* The coordinate transform and taps of ONNX's reference implementation
 * (onnx/backend/test/case/node/resize.py), per output index. */
static void resize_axis_fill(const enpu_resize_attr *a, int d, int rank, int64_t in, int64_t out_n,
                             resize_axis *ax) {
    double scale = a->scales[d];
    double out_w = scale * (double)in; /* the reference's (fractional) output width */
    for (int64_t o = 0; o < out_n; o++) {
        double x = (double)o, xo;
        ax->outside[o] = false;
        switch (a->ctm) {
        case ENPU_CTM_ALIGN_CORNERS: xo = out_w == 1 ? 0.0 : x * (double)(in - 1) / (out_w - 1); break;
        case ENPU_CTM_ASYMMETRIC: xo = x / scale; break;
        case ENPU_CTM_TF_CROP_AND_RESIZE: {
            double r0 = a->roi[d], r1 = a->roi[rank + d];
            xo = out_w == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (out_w - 1);
            xo += r0 * (double)(in - 1);
            ax->outside[o] = xo < 0 || xo > (double)(in - 1);
            break;
        }
        case ENPU_CTM_PYTORCH_HALF_PIXEL: xo = out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
        case ENPU_CTM_TF_HALF_PIXEL_FOR_NN: xo = (x + 0.5) / scale; break;
        default: xo = (x + 0.5) / scale - 0.5; break; /* half_pixel */
        }
        double fl = floor(xo);
        bool integral = xo == fl;
        double ratio = integral ? 1.0 : xo - fl;
        double *w = ax->w + o * ax->n;
        int n = ax->n;
        /* the n nearest indices, preferring the lower ones: ratio in (0, 1] */
        int64_t base = (int64_t)fl - (n / 2 - 1) - (integral ? 1 : 0);
        if (a->mode == ENPU_RESIZE_NEAREST) {
            double c1;
            if (integral) c1 = 1;
            else if (a->nearest == ENPU_NEAREST_ROUND_PREFER_FLOOR) c1 = ratio > 0.5;
            else if (a->nearest == ENPU_NEAREST_ROUND_PREFER_CEIL) c1 = ratio >= 0.5;
            else if (a->nearest == ENPU_NEAREST_FLOOR) c1 = 0;
            else c1 = 1;
            w[0] = 1 - c1, w[1] = c1;
        } else if (a->mode == ENPU_RESIZE_LINEAR) {
            w[0] = 1 - ratio, w[1] = ratio;
        } else {
            cubic_coeffs(ratio, a->cubic_a, w);
        }
        if (a->exclude_outside) {
            double sum = 0;
            for (int k = 0; k < n; k++) {
                int64_t i = base + k;
                if (i < 0 || i >= in) w[k] = 0;
                sum += w[k];
            }
            for (int k = 0; k < n && sum != 0; k++) w[k] /= sum;
        }
        ax->base[o] = base;
    }
}

int enpu_fref_check_resize(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_resize_attr *a = &n->attr.resize;
    if (y->rank != x->rank || a->n_scales != x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: %d scales for rank %d (shapes not inferred?)",
                         what, a->n_scales, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (!(a->scales[d] > 0) || (x->dims[d] == 0 && y->dims[d] != 0))
            return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d: scale %g, sizes %lld -> %lld", what,
                             d, (double)a->scales[d], (long long)x->dims[d], (long long)y->dims[d]);
    if (a->ctm == ENPU_CTM_TF_CROP_AND_RESIZE && a->n_roi != 2 * x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: %d roi values for rank %d", what, a->n_roi, x->rank);
    return 0;
}

void enpu_fref_resize(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_resize_attr *a = &n->attr.resize;
    int r = x->rank;
    int taps = a->mode == ENPU_RESIZE_CUBIC ? 4 : 2;
    resize_axis ax[ENPU_MAX_RANK];
    bool ok = true;
    for (int d = 0; d < r; d++) {
        int64_t on = y->dims[d] ? y->dims[d] : 1;
        ax[d].n = taps;
        ax[d].base = malloc((size_t)on * sizeof(int64_t));
        ax[d].w = malloc((size_t)on * (size_t)taps * sizeof(double));
        ax[d].outside = malloc((size_t)on * sizeof(bool));
        ok = ok && ax[d].base && ax[d].w && ax[d].outside;
        if (ok) resize_axis_fill(a, d, r, x->dims[d], y->dims[d], &ax[d]);
    }
    ENPU_ASSERT(ok); /* a few bytes per output index: the executor's own buffers are far larger */
    int64_t xs[ENPU_MAX_RANK], s = 1;
    for (int d = r - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
    int64_t total = enpu_tensor_numel(y), idx[ENPU_MAX_RANK] = {0};
    for (int64_t i = 0; i < total; i++) {
        bool outside = false;
        for (int d = 0; d < r; d++) outside |= ax[d].outside[idx[d]];
        double acc = 0;
        if (!outside) {
            /* every combination of the axes' taps, zero weights skipped */
            int k[ENPU_MAX_RANK] = {0};
            for (;;) {
                double w = 1;
                int64_t off = 0;
                for (int d = 0; d < r && w != 0; d++) {
                    w *= ax[d].w[idx[d] * taps + k[d]];
                    int64_t c = ax[d].base[idx[d]] + k[d];
                    c = c < 0 ? 0 : c >= x->dims[d] ? x->dims[d] - 1 : c;
                    off += c * xs[d];
                }
                if (w != 0) acc += w * in[0][off];
                int d = r - 1;
                for (; d >= 0; d--) {
                    if (++k[d] < taps) break;
                    k[d] = 0;
                }
                if (d < 0) break;
            }
        }
        out[0][i] = outside ? a->extrapolation : (float)acc;
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
    for (int d = 0; d < r; d++) {
        free(ax[d].base);
        free(ax[d].w);
        free(ax[d].outside);
    }
}
