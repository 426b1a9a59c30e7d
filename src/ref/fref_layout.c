/* Float reference kernels of the data-movement ops: the copies (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference), Transpose,
 * Concat and constant Pad. */
#include <stdio.h>
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
            int64_t c = idx[d] - pa->pads[d];
            inside = c >= 0 && c < x->dims[d];
            off += c * xs[d];
        }
        out[0][i] = inside ? in[0][off] : value;
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
}
