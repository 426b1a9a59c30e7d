/* Static shape inference.  Each op's rule follows the ONNX operator spec; the
 * rules also normalize attributes (auto_pad into explicit pads, negative axes
 * into positive ones, Reshape's 0/-1) so later stages see one spelling. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/ir.h"
#include "ir/shape_rnn.h"

#define FAIL(code, ...) enpu_fail(err, code, __VA_ARGS__)

typedef struct shape {
    int rank;
    int64_t d[ENPU_MAX_RANK];
} shape;

static int need_shape(const enpu_graph *g, const enpu_node *n, int i, shape *s, enpu_err *err) {
    const enpu_tensor *t = enpu_node_input(g, n, i);
    if (!t) return FAIL(ENPU_E_INVALID, "node '%s' (%s): input %d is missing", n->name,
                        enpu_op_name(n->op), i);
    if (t->rank < 0)
        return FAIL(ENPU_E_INVALID, "node '%s' (%s): shape of input '%s' is unknown", n->name,
                    enpu_op_name(n->op), t->name);
    s->rank = t->rank;
    memcpy(s->d, t->dims, sizeof s->d);
    return 0;
}

static int set_out(enpu_graph *g, enpu_node *n, int i, const shape *s, enpu_err *err) {
    enpu_tensor *t = enpu_node_output(g, n, i);
    if (!t) return 0;
    int rc = enpu_shape_numel(s->rank, s->d, NULL, t->name, err);
    if (rc) return enpu_err_prefix(err, "node '%s' (%s)", n->name, enpu_op_name(n->op));
    t->rank = s->rank;
    memset(t->dims, 0, sizeof t->dims);
    memcpy(t->dims, s->d, (size_t)s->rank * sizeof(int64_t));
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    if (t->dtype == ENPU_DT_UNDEFINED && x) t->dtype = x->dtype;
    return 0;
}

static int norm_axis(const enpu_node *n, int axis, int rank, enpu_err *err) {
    if (axis < -rank || axis >= (rank ? rank : 1))
        return FAIL(ENPU_E_INVALID, "node '%s' (%s): axis %d is out of range for rank %d",
                    n->name, enpu_op_name(n->op), axis, rank);
    return axis < 0 ? axis + rank : axis;
}

/* Numpy multidirectional broadcast of a and b into out. */
static int broadcast(const enpu_node *n, const shape *a, const shape *b, shape *out,
                     enpu_err *err) {
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return FAIL(ENPU_E_INVALID,
                        "node '%s' (%s): shapes do not broadcast (dimension %d: %lld vs %lld)",
                        n->name, enpu_op_name(n->op), i, (long long)da, (long long)db);
        out->d[i] = da == 1 ? db : da;
    }
    return 0;
}

/* Resolves auto_pad into explicit pads and computes spatial output sizes for
 * conv and pools.  `sp` is the number of spatial dims (1 or 2); for 1-D the
 * window's H axis is the trivial one. */
static int window_out(const enpu_node *n, enpu_window *w, int sp, const int64_t *in,
                      bool ceil_mode, int64_t *out, enpu_err *err) {
    for (int k = 0; k < 2; k++) {
        if (w->kernel[k] < 1 || w->stride[k] < 1 || w->dilation[k] < 1)
            return FAIL(ENPU_E_INVALID,
                        "node '%s' (%s): kernel %dx%d, strides %dx%d and dilations %dx%d must "
                        "all be >= 1",
                        n->name, enpu_op_name(n->op), w->kernel[0], w->kernel[1], w->stride[0],
                        w->stride[1], w->dilation[0], w->dilation[1]);
        if (w->kernel[k] > 65535 || w->stride[k] > 65535 || w->dilation[k] > 65535)
            return FAIL(ENPU_E_LIMIT, "node '%s' (%s): kernel/stride/dilation over 65535",
                        n->name, enpu_op_name(n->op));
        if (w->pads[k] < 0 || w->pads[k + 2] < 0 || w->pads[k] > 65535 || w->pads[k + 2] > 65535)
            return FAIL(ENPU_E_INVALID, "node '%s' (%s): pads must be in 0..65535", n->name,
                        enpu_op_name(n->op));
    }
    for (int k = 2 - sp; k < 2; k++) {
        int64_t x = in[k - (2 - sp)];
        int64_t eff = (int64_t)(w->kernel[k] - 1) * w->dilation[k] + 1;
        if (w->auto_pad == ENPU_PAD_SAME_UPPER || w->auto_pad == ENPU_PAD_SAME_LOWER) {
            int64_t o = (x + w->stride[k] - 1) / w->stride[k];
            int64_t total = (o - 1) * w->stride[k] + eff - x;
            if (total < 0) total = 0;
            int64_t small = total / 2, big = total - small;
            w->pads[k] = (int)(w->auto_pad == ENPU_PAD_SAME_UPPER ? small : big);
            w->pads[k + 2] = (int)(w->auto_pad == ENPU_PAD_SAME_UPPER ? big : small);
        } else if (w->auto_pad == ENPU_PAD_VALID) {
            w->pads[k] = w->pads[k + 2] = 0;
        }
        int64_t span = x + w->pads[k] + w->pads[k + 2] - eff;
        if (span < 0)
            return FAIL(ENPU_E_INVALID,
                        "node '%s' (%s): kernel extent %lld is larger than the padded input %lld",
                        n->name, enpu_op_name(n->op), (long long)eff,
                        (long long)(x + w->pads[k] + w->pads[k + 2]));
        int64_t o = ceil_mode ? (span + w->stride[k] - 1) / w->stride[k] : span / w->stride[k];
        out[k - (2 - sp)] = o + 1;
    }
    w->auto_pad = ENPU_PAD_NOTSET;
    return 0;
}

static int infer_window_op(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    if (x.rank != 3 && x.rank != 4)
        return FAIL(ENPU_E_UNSUPPORTED,
                    "node '%s' (%s): input '%s' has rank %d; only 1-D and 2-D (rank 3 or 4) "
                    "windows are supported",
                    n->name, enpu_op_name(n->op), enpu_node_input(g, n, 0)->name, x.rank);
    int sp = x.rank - 2;
    enpu_window *w = n->op == ENPU_OP_CONV ? &n->attr.conv.w : &n->attr.pool.w;
    bool ceil_mode = false;
    int64_t cout = x.d[1];
    if (n->op == ENPU_OP_CONV) {
        shape wt;
        rc = need_shape(g, n, 1, &wt, err);
        if (rc) return rc;
        int group = n->attr.conv.group;
        if (wt.rank != x.rank)
            return FAIL(ENPU_E_INVALID, "node '%s' (Conv): weight rank %d differs from input rank %d",
                        n->name, wt.rank, x.rank);
        if (group < 1 || x.d[1] % group != 0 || wt.d[0] % group != 0 || wt.d[1] * group != x.d[1])
            return FAIL(ENPU_E_INVALID,
                        "node '%s' (Conv): %lld input channels, weight %lldx%lld and group %d do "
                        "not agree",
                        n->name, (long long)x.d[1], (long long)wt.d[0], (long long)wt.d[1], group);
        for (int k = 0; k < sp; k++) {
            int64_t kd = wt.d[2 + k];
            int slot = k + (2 - sp);
            if (w->kernel[slot] == 0) w->kernel[slot] = (int)(kd > 65535 ? 65535 : kd);
            if (w->kernel[slot] != kd)
                return FAIL(ENPU_E_INVALID,
                            "node '%s' (Conv): kernel_shape %d does not match weight dimension %lld",
                            n->name, w->kernel[slot], (long long)kd);
        }
        if (sp == 1) w->kernel[0] = 1;
        const enpu_tensor *b = enpu_node_input(g, n, 2);
        if (b && (b->rank != 1 || b->dims[0] != wt.d[0]))
            return FAIL(ENPU_E_INVALID, "node '%s' (Conv): bias '%s' must have shape [%lld]",
                        n->name, b->name, (long long)wt.d[0]);
        cout = wt.d[0];
    } else {
        ceil_mode = n->attr.pool.ceil_mode;
        if (sp == 1) w->kernel[0] = 1;
    }
    o.rank = x.rank;
    o.d[0] = x.d[0];
    o.d[1] = cout;
    rc = window_out(n, w, sp, &x.d[2], ceil_mode, &o.d[2], err);
    if (rc) return rc;
    return set_out(g, n, 0, &o, err);
}

static int infer_gemm(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape a, b, o;
    int rc = need_shape(g, n, 0, &a, err);
    if (!rc) rc = need_shape(g, n, 1, &b, err);
    if (rc) return rc;
    if (a.rank != 2 || b.rank != 2)
        return FAIL(ENPU_E_INVALID, "node '%s' (Gemm): inputs must be 2-D (got rank %d and %d)",
                    n->name, a.rank, b.rank);
    int64_t m = n->attr.gemm.trans_a ? a.d[1] : a.d[0];
    int64_t ka = n->attr.gemm.trans_a ? a.d[0] : a.d[1];
    int64_t kb = n->attr.gemm.trans_b ? b.d[1] : b.d[0];
    int64_t nn = n->attr.gemm.trans_b ? b.d[0] : b.d[1];
    if (ka != kb)
        return FAIL(ENPU_E_INVALID, "node '%s' (Gemm): inner dimensions differ (%lld vs %lld)",
                    n->name, (long long)ka, (long long)kb);
    o.rank = 2;
    o.d[0] = m;
    o.d[1] = nn;
    const enpu_tensor *c = enpu_node_input(g, n, 2);
    if (c) {
        shape cs, bc;
        rc = need_shape(g, n, 2, &cs, err);
        if (rc) return rc;
        rc = broadcast(n, &o, &cs, &bc, err);
        if (rc) return rc;
        if (bc.rank != 2 || bc.d[0] != m || bc.d[1] != nn)
            return FAIL(ENPU_E_INVALID, "node '%s' (Gemm): C '%s' does not broadcast to %lldx%lld",
                        n->name, c->name, (long long)m, (long long)nn);
    }
    return set_out(g, n, 0, &o, err);
}

static int infer_matmul(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape a, b, o;
    int rc = need_shape(g, n, 0, &a, err);
    if (!rc) rc = need_shape(g, n, 1, &b, err);
    if (rc) return rc;
    if (a.rank < 1 || b.rank < 1)
        return FAIL(ENPU_E_INVALID, "node '%s' (MatMul): scalar operand", n->name);
    shape a2 = a, b2 = b;
    if (a.rank == 1) { a2.rank = 2; a2.d[0] = 1; a2.d[1] = a.d[0]; }
    if (b.rank == 1) { b2.rank = 2; b2.d[0] = b.d[0]; b2.d[1] = 1; }
    if (a2.d[a2.rank - 1] != b2.d[b2.rank - 2])
        return FAIL(ENPU_E_INVALID, "node '%s' (MatMul): inner dimensions differ (%lld vs %lld)",
                    n->name, (long long)a2.d[a2.rank - 1], (long long)b2.d[b2.rank - 2]);
    shape ba = {a2.rank - 2, {0}}, bb = {b2.rank - 2, {0}};
    memcpy(ba.d, a2.d, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.d, b2.d, (size_t)bb.rank * sizeof(int64_t));
    rc = broadcast(n, &ba, &bb, &o, err);
    if (rc) return rc;
    if (a.rank != 1) o.d[o.rank++] = a2.d[a2.rank - 2];
    if (b.rank != 1) o.d[o.rank++] = b2.d[b2.rank - 1];
    if (o.rank > ENPU_MAX_RANK) return FAIL(ENPU_E_LIMIT, "node '%s': rank too large", n->name);
    return set_out(g, n, 0, &o, err);
}

/* Reads a constant int64 (or int32) 1-D tensor into vals. */
static int const_ints(const enpu_graph *g, const enpu_node *n, int i, int64_t *vals, int max,
                      int *count, enpu_err *err) {
    const enpu_tensor *t = enpu_node_input(g, n, i);
    if (!t || !(t->flags & ENPU_T_CONST) || !t->data)
        return FAIL(ENPU_E_UNSUPPORTED,
                    "node '%s' (%s): input '%s' must be a constant (shapes are static)", n->name,
                    enpu_op_name(n->op), t ? t->name : "?");
    if (t->rank > 1 || (t->dtype != ENPU_DT_INT64 && t->dtype != ENPU_DT_INT32))
        return FAIL(ENPU_E_INVALID, "node '%s' (%s): input '%s' must be a 1-D int64 tensor",
                    n->name, enpu_op_name(n->op), t->name);
    int64_t cnt = enpu_tensor_numel(t);
    if (cnt > max)
        return FAIL(ENPU_E_LIMIT, "node '%s' (%s): input '%s' has %lld values, over rank limit %d",
                    n->name, enpu_op_name(n->op), t->name, (long long)cnt, max);
    for (int64_t k = 0; k < cnt; k++)
        vals[k] = t->dtype == ENPU_DT_INT64 ? ((const int64_t *)t->data)[k]
                                            : ((const int32_t *)t->data)[k];
    *count = (int)cnt;
    return 0;
}

static int shape_from_input(const enpu_graph *g, const enpu_node *n, int i, shape *s,
                            enpu_err *err) {
    int cnt = 0;
    int rc = const_ints(g, n, i, s->d, ENPU_MAX_RANK, &cnt, err);
    if (rc) return rc;
    for (int d = 0; d < cnt; d++)
        if (s->d[d] < 0 || s->d[d] > ENPU_MAX_DIM)
            return FAIL(ENPU_E_INVALID, "node '%s' (%s): dimension %lld in '%s'", n->name,
                        enpu_op_name(n->op), (long long)s->d[d], enpu_node_input(g, n, i)->name);
    s->rank = cnt;
    return 0;
}

static int infer_reshape(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    enpu_shape_attr *a = &n->attr.shape;
    if (n->n_in > 1 && n->in[1] >= 0) {
        rc = const_ints(g, n, 1, a->shape, ENPU_MAX_RANK, &a->n_shape, err);
        if (rc) return rc;
    }
    int64_t total = 1, known = 1;
    for (int i = 0; i < x.rank; i++) total *= x.d[i];
    int minus = -1;
    o.rank = a->n_shape;
    for (int i = 0; i < a->n_shape; i++) {
        int64_t v = a->shape[i];
        if (v == 0 && !a->allowzero) {
            if (i >= x.rank)
                return FAIL(ENPU_E_INVALID, "node '%s' (Reshape): 0 at position %d copies a "
                            "dimension the input does not have", n->name, i);
            v = x.d[i];
        }
        if (v == -1) {
            if (minus >= 0)
                return FAIL(ENPU_E_INVALID, "node '%s' (Reshape): more than one -1", n->name);
            minus = i;
            v = 1;
        } else if (v < 0) {
            return FAIL(ENPU_E_INVALID, "node '%s' (Reshape): negative dimension %lld", n->name,
                        (long long)v);
        }
        if (v > ENPU_MAX_DIM)
            return FAIL(ENPU_E_LIMIT, "node '%s' (Reshape): dimension %lld over the limit", n->name,
                        (long long)v);
        o.d[i] = v;
        if (i != minus) {
            if (v && known > ENPU_MAX_ELEMS / v)
                return FAIL(ENPU_E_LIMIT, "node '%s' (Reshape): target element count overflows",
                            n->name);
            known *= v;
        }
    }
    if (minus >= 0) {
        if (known == 0 || total % known != 0)
            return FAIL(ENPU_E_INVALID, "node '%s' (Reshape): cannot infer -1: %lld elements into "
                        "groups of %lld", n->name, (long long)total, (long long)known);
        o.d[minus] = total / known;
    } else if (known != total) {
        return FAIL(ENPU_E_INVALID, "node '%s' (Reshape): %lld elements cannot become %lld",
                    n->name, (long long)total, (long long)known);
    }
    return set_out(g, n, 0, &o, err);
}

/* Output dtype of a node whose dtype is not its input 0's. */
static void set_dtype(enpu_graph *g, enpu_node *n, enpu_dtype dt) {
    enpu_tensor *t = enpu_node_output(g, n, 0);
    if (t) t->dtype = dt;
}

/* Broadcast of inputs [first, last] (missing ones skipped) into *o. */
static int broadcast_inputs(const enpu_graph *g, const enpu_node *n, int first, int last, shape *o,
                            enpu_err *err) {
    o->rank = 0;
    for (int i = first; i <= last && i < n->n_in; i++) {
        if (n->in[i] < 0) continue;
        shape x, r;
        int rc = need_shape(g, n, i, &x, err);
        if (!rc) rc = broadcast(n, o, &x, &r, err);
        if (rc) return rc;
        *o = r;
    }
    return 0;
}

/* ONNX Slice's clamping for one axis of size dim: the effective start and
 * the element count. */
static int64_t slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *eff) {
    /* |step| beyond the dimension takes at most one element either way */
    if (step > dim + 1) step = dim + 1;
    if (step < -(dim + 1)) step = -(dim + 1);
    if (start < 0) start = start < -dim ? -1 : start + dim;
    if (end < 0) end = end < -dim ? -1 : end + dim;
    int64_t cnt;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        cnt = end > start ? (end - start + step - 1) / step : 0;
    } else {
        start = start < 0 ? -1 : start > dim - 1 ? dim - 1 : start;
        end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
        cnt = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    *eff = cnt ? start : 0;
    return cnt;
}

static int infer_slice(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    enpu_slice_attr *a = &n->attr.slice;
    int64_t st[ENPU_MAX_RANK], en[ENPU_MAX_RANK], sp[ENPU_MAX_RANK];
    bool seen[ENPU_MAX_RANK] = {false};
    for (int d = 0; d < x.rank; d++) st[d] = 0, en[d] = x.d[d], sp[d] = 1;
    if (a->n > x.rank)
        return FAIL(ENPU_E_INVALID, "node '%s' (Slice): %d axes for an input of rank %d", n->name,
                    a->n, x.rank);
    for (int i = 0; i < a->n; i++) {
        rc = norm_axis(n, a->axes[i], x.rank, err);
        if (rc < 0) return rc;
        if (seen[rc])
            return FAIL(ENPU_E_INVALID, "node '%s' (Slice): axis %d repeated", n->name, rc);
        seen[rc] = true;
        if (a->steps[i] == 0)
            return FAIL(ENPU_E_INVALID, "node '%s' (Slice): step 0 on axis %d", n->name, rc);
        st[rc] = a->starts[i], en[rc] = a->ends[i], sp[rc] = a->steps[i];
    }
    o.rank = x.rank;
    for (int d = 0; d < x.rank; d++) {
        int64_t eff;
        o.d[d] = slice_axis(x.d[d], st[d], en[d], sp[d], &eff);
        if (sp[d] > x.d[d] + 1) sp[d] = x.d[d] + 1;
        if (sp[d] < -(x.d[d] + 1)) sp[d] = -(x.d[d] + 1);
        a->axes[d] = d;
        a->starts[d] = eff;
        a->steps[d] = sp[d];
        a->ends[d] = eff + o.d[d] * sp[d];
    }
    a->n = x.rank;
    return set_out(g, n, 0, &o, err);
}

static int infer_resize(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    enpu_resize_attr *a = &n->attr.resize;
    if (a->n_sizes > 0 && a->n_sizes != x.rank)
        return FAIL(ENPU_E_INVALID, "node '%s' (Resize): %d sizes for an input of rank %d",
                    n->name, a->n_sizes, x.rank);
    if (a->n_sizes == 0 && a->n_scales != x.rank)
        return FAIL(ENPU_E_INVALID, "node '%s' (Resize): %d scales for an input of rank %d "
                    "(and no sizes)", n->name, a->n_scales, x.rank);
    if (a->ctm == ENPU_CTM_TF_CROP_AND_RESIZE && a->n_roi != 2 * x.rank)
        return FAIL(ENPU_E_INVALID, "node '%s' (Resize): tf_crop_and_resize needs %d roi values, "
                    "%d given", n->name, 2 * x.rank, a->n_roi);
    o.rank = x.rank;
    for (int d = 0; d < x.rank; d++) {
        if (a->n_sizes) {
            if (a->sizes[d] < 0 || a->sizes[d] > ENPU_MAX_DIM)
                return FAIL(ENPU_E_INVALID, "node '%s' (Resize): size %lld on axis %d", n->name,
                            (long long)a->sizes[d], d);
            o.d[d] = a->sizes[d];
            a->scales[d] = x.d[d] ? (float)((double)o.d[d] / (double)x.d[d]) : 1.0f;
        } else {
            double sc = a->scales[d];
            if (!(sc > 0) || !isfinite(sc))
                return FAIL(ENPU_E_INVALID, "node '%s' (Resize): scale %g on axis %d is not "
                            "positive", n->name, sc, d);
            double span = (double)x.d[d];
            if (a->ctm == ENPU_CTM_TF_CROP_AND_RESIZE)
                span *= (double)a->roi[x.rank + d] - (double)a->roi[d];
            double v = floor(span * sc);
            if (v < 0 || v > (double)ENPU_MAX_DIM)
                return FAIL(ENPU_E_LIMIT, "node '%s' (Resize): output size %g on axis %d", n->name,
                            v, d);
            o.d[d] = (int64_t)v;
        }
    }
    a->n_scales = x.rank;
    return set_out(g, n, 0, &o, err);
}

/* ConvTranspose: out = stride*(in-1) + output_padding + (k-1)*dil + 1 - pads;
 * output_shape and auto_pad become explicit pads here. */
static int infer_conv_transpose(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, wt, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (!rc) rc = need_shape(g, n, 1, &wt, err);
    if (rc) return rc;
    if (x.rank != 3 && x.rank != 4)
        return FAIL(ENPU_E_UNSUPPORTED,
                    "node '%s' (ConvTranspose): input '%s' has rank %d; only 1-D and 2-D (rank 3 "
                    "or 4) windows are supported",
                    n->name, enpu_node_input(g, n, 0)->name, x.rank);
    enpu_conv_attr *a = &n->attr.conv;
    enpu_window *w = &a->w;
    int sp = x.rank - 2, group = a->group;
    if (wt.rank != x.rank || group < 1 || x.d[1] % group != 0 || wt.d[0] != x.d[1])
        return FAIL(ENPU_E_INVALID,
                    "node '%s' (ConvTranspose): %lld input channels, weight %lldx%lld and group %d "
                    "do not agree",
                    n->name, (long long)x.d[1], (long long)wt.d[0], (long long)wt.d[1], group);
    const enpu_tensor *b = enpu_node_input(g, n, 2);
    if (b && (b->rank != 1 || b->dims[0] != wt.d[1] * group))
        return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): bias '%s' must have shape [%lld]",
                    n->name, b->name, (long long)(wt.d[1] * group));
    o.rank = x.rank;
    o.d[0] = x.d[0];
    o.d[1] = wt.d[1] * group;
    if (a->n_out_shape && a->n_out_shape != sp)
        return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): output_shape has %d values, "
                    "expected %d", n->name, a->n_out_shape, sp);
    for (int k = 2 - sp; k < 2; k++) {
        int64_t kd = wt.d[2 + k - (2 - sp)];
        if (w->kernel[k] == 0 || (sp == 1 && k == 1)) w->kernel[k] = (int)(kd > 65535 ? 65535 : kd);
        if (w->kernel[k] != kd)
            return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): kernel_shape %d does not match "
                        "weight dimension %lld", n->name, w->kernel[k], (long long)kd);
        if (w->stride[k] < 1 || w->dilation[k] < 1 || w->stride[k] > 65535 ||
            w->dilation[k] > 65535 || kd > 65535)
            return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): kernel/stride/dilation out of "
                        "range", n->name);
        if (a->out_pad[k] < 0 || (a->out_pad[k] >= (w->stride[k] > w->dilation[k] ? w->stride[k]
                                                                                : w->dilation[k]) &&
                                  !a->n_out_shape))
            return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): output_padding %d must be "
                        "below the stride or the dilation", n->name, a->out_pad[k]);
        int64_t in = x.d[2 + k - (2 - sp)];
        int64_t eff = (int64_t)(w->kernel[k] - 1) * w->dilation[k] + 1;
        int64_t full = w->stride[k] * (in - 1) + a->out_pad[k] + eff;
        int64_t want = -1;
        if (a->n_out_shape) want = a->out_shape[k - (2 - sp)];
        else if (w->auto_pad == ENPU_PAD_SAME_UPPER || w->auto_pad == ENPU_PAD_SAME_LOWER)
            want = in * w->stride[k];
        if (want >= 0) {
            int64_t total = full - want;
            if (total < 0) {
                /* an output larger than the kernels reach: the extra rows
                 * are bias only, as an output padding */
                if (-total > 65535)
                    return FAIL(ENPU_E_LIMIT, "node '%s' (ConvTranspose): output size %lld",
                                n->name, (long long)want);
                a->out_pad[k] += (int)-total;
                full = want;
                total = 0;
            }
            if (total > 131070)
                return FAIL(ENPU_E_UNSUPPORTED, "node '%s' (ConvTranspose): output size %lld "
                            "needs a padding of %lld", n->name, (long long)want, (long long)total);
            /* SAME_UPPER puts the odd pad at the end, as Conv does */
            int64_t small = total / 2, big = total - small;
            bool upper = w->auto_pad != ENPU_PAD_SAME_LOWER;
            w->pads[k] = (int)(upper ? small : big);
            w->pads[k + 2] = (int)(upper ? big : small);
        } else if (w->auto_pad == ENPU_PAD_VALID) {
            w->pads[k] = w->pads[k + 2] = 0;
        }
        if (w->pads[k] < 0 || w->pads[k + 2] < 0 || w->pads[k] > 65535 || w->pads[k + 2] > 65535)
            return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): pads must be in 0..65535",
                        n->name);
        int64_t od = full - w->pads[k] - w->pads[k + 2];
        if (od < 0)
            return FAIL(ENPU_E_INVALID, "node '%s' (ConvTranspose): output size %lld is negative",
                        n->name, (long long)od);
        o.d[2 + k - (2 - sp)] = od;
    }
    if (sp == 1) {
        w->kernel[0] = w->stride[0] = w->dilation[0] = 1;
        w->pads[0] = w->pads[2] = 0;
        a->out_pad[0] = 0;
    }
    w->auto_pad = ENPU_PAD_NOTSET;
    a->n_out_shape = 0;
    return set_out(g, n, 0, &o, err);
}

static int infer_reduce(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    enpu_reduce_attr *a = &n->attr.reduce;
    bool red[ENPU_MAX_RANK] = {false};
    for (int i = 0; i < a->n_axes; i++) {
        rc = norm_axis(n, a->axes[i], x.rank, err);
        if (rc < 0) return rc;
        red[rc] = true;
    }
    if (a->n_axes == 0 && !a->noop_with_empty_axes)
        for (int d = 0; d < x.rank; d++) red[d] = true;
    a->n_axes = 0;
    o.rank = 0;
    for (int d = 0; d < x.rank; d++) {
        if (red[d]) a->axes[a->n_axes++] = d;
        if (!red[d]) o.d[o.rank++] = x.d[d];
        else if (a->keepdims) o.d[o.rank++] = 1;
    }
    return set_out(g, n, 0, &o, err);
}

static int infer_layer_norm(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, s, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    rc = norm_axis(n, n->attr.norm.axis, x.rank, err);
    if (rc < 0) return rc;
    int axis = n->attr.norm.axis = rc;
    for (int i = 1; i < 3 && i < n->n_in; i++) {
        if (n->in[i] < 0) continue;
        shape r;
        if ((rc = need_shape(g, n, i, &s, err)) || (rc = broadcast(n, &x, &s, &r, err))) return rc;
        if (r.rank != x.rank || memcmp(r.d, x.d, (size_t)x.rank * sizeof(int64_t)) != 0)
            return FAIL(ENPU_E_INVALID, "node '%s' (LayerNormalization): '%s' does not broadcast to "
                        "the input", n->name, enpu_node_input(g, n, i)->name);
    }
    if ((rc = set_out(g, n, 0, &x, err))) return rc;
    o = x;
    for (int d = axis; d < x.rank; d++) o.d[d] = 1;
    for (int i = 1; i < 3 && i < n->n_out; i++) {
        if (n->out[i] < 0) continue;
        if ((rc = set_out(g, n, i, &o, err))) return rc;
        g->tensors[n->out[i]].dtype = ENPU_DT_FLOAT32;
    }
    return 0;
}

static int infer_gather(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, ix, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (!rc) rc = need_shape(g, n, 1, &ix, err);
    if (rc) return rc;
    if (x.rank < 1)
        return FAIL(ENPU_E_INVALID, "node '%s' (Gather): scalar data", n->name);
    rc = norm_axis(n, n->attr.shape.axis, x.rank, err);
    if (rc < 0) return rc;
    int axis = n->attr.shape.axis = rc;
    if (x.rank - 1 + ix.rank > ENPU_MAX_RANK)
        return FAIL(ENPU_E_LIMIT, "node '%s' (Gather): output rank over %d", n->name, ENPU_MAX_RANK);
    const enpu_tensor *it = enpu_node_input(g, n, 1);
    if (it->dtype != ENPU_DT_INT64 && it->dtype != ENPU_DT_INT32)
        return FAIL(ENPU_E_INVALID, "node '%s' (Gather): indices '%s' are %s, not int64/int32",
                    n->name, it->name, enpu_dtype_name(it->dtype));
    o.rank = 0;
    for (int d = 0; d < axis; d++) o.d[o.rank++] = x.d[d];
    for (int d = 0; d < ix.rank; d++) o.d[o.rank++] = ix.d[d];
    for (int d = axis + 1; d < x.rank; d++) o.d[o.rank++] = x.d[d];
    return set_out(g, n, 0, &o, err);
}

/* Shape whose dims come from the values of constant input i (Expand's
 * shape, ConstantOfShape's input). */
static int shape_from_input(const enpu_graph *g, const enpu_node *n, int i, shape *s,
                            enpu_err *err);

static int infer_expand(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, t, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (!rc) rc = shape_from_input(g, n, 1, &t, err);
    if (!rc) rc = broadcast(n, &x, &t, &o, err);
    return rc ? rc : set_out(g, n, 0, &o, err);
}

static int infer_shape_op(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o;
    int rc = need_shape(g, n, 0, &x, err);
    if (rc) return rc;
    o.rank = 1;
    if (n->op == ENPU_OP_SIZE) {
        o.rank = 0;
    } else {
        enpu_misc_attr *a = &n->attr.misc;
        int64_t s = a->start, e = a->end, r = x.rank;
        if (s < 0) s += r;
        if (e < 0) e += r;
        s = s < 0 ? 0 : s > r ? r : s;
        e = e < 0 ? 0 : e > r ? r : e;
        a->start = s, a->end = e;
        o.d[0] = e > s ? e - s : 0;
    }
    set_dtype(g, n, ENPU_DT_INT64);
    return set_out(g, n, 0, &o, err);
}

static int infer_range(enpu_graph *g, enpu_node *n, enpu_err *err) {
    double v[3];
    for (int i = 0; i < 3; i++) {
        const enpu_tensor *t = enpu_node_input(g, n, i);
        if (!t || !(t->flags & ENPU_T_CONST) || !t->data || t->rank < 0)
            return FAIL(ENPU_E_UNSUPPORTED,
                        "node '%s' (Range): input %d ('%s') is not a constant; the output's size "
                        "would depend on a value computed at run time",
                        n->name, i, t ? t->name : "?");
        if (enpu_tensor_numel(t) != 1)
            return FAIL(ENPU_E_INVALID, "node '%s' (Range): input '%s' is not a scalar", n->name,
                        t->name);
        switch (t->dtype) {
        case ENPU_DT_FLOAT32: v[i] = ((const float *)t->data)[0]; break;
        case ENPU_DT_FLOAT64: v[i] = ((const double *)t->data)[0]; break;
        case ENPU_DT_INT32: v[i] = ((const int32_t *)t->data)[0]; break;
        case ENPU_DT_INT64: v[i] = (double)((const int64_t *)t->data)[0]; break;
        case ENPU_DT_INT16: v[i] = ((const int16_t *)t->data)[0]; break;
        default:
            return FAIL(ENPU_E_UNSUPPORTED, "node '%s' (Range): dtype %s", n->name,
                        enpu_dtype_name(t->dtype));
        }
    }
    if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return FAIL(ENPU_E_INVALID, "node '%s' (Range): delta 0 or a non-finite bound", n->name);
    double cnt = ceil((v[1] - v[0]) / v[2]);
    if (cnt < 0) cnt = 0;
    if (cnt > (double)ENPU_MAX_DIM)
        return FAIL(ENPU_E_LIMIT, "node '%s' (Range): %g elements", n->name, cnt);
    shape o = {1, {(int64_t)cnt}};
    return set_out(g, n, 0, &o, err);
}

static int infer_node_impl(enpu_graph *g, enpu_node *n, enpu_err *err) {
    shape x, o, y;
    int rc;
    switch (n->op) {
    case ENPU_OP_CONV:
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        return infer_window_op(g, n, err);
    case ENPU_OP_GEMM:
        return infer_gemm(g, n, err);
    case ENPU_OP_MATMUL:
        return infer_matmul(g, n, err);
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
        rc = need_shape(g, n, 0, &x, err);
        if (!rc) rc = need_shape(g, n, 1, &y, err);
        if (!rc) rc = broadcast(n, &x, &y, &o, err);
        return rc ? rc : set_out(g, n, 0, &o, err);
    case ENPU_OP_PRELU:
        rc = need_shape(g, n, 0, &x, err);
        if (!rc) rc = need_shape(g, n, 1, &y, err);
        if (!rc) rc = broadcast(n, &x, &y, &o, err);
        if (rc) return rc;
        if (o.rank != x.rank || memcmp(o.d, x.d, (size_t)x.rank * sizeof(int64_t)) != 0)
            return FAIL(ENPU_E_INVALID, "node '%s' (PRelu): slope does not broadcast to the input",
                        n->name);
        return set_out(g, n, 0, &x, err);
    case ENPU_OP_RELU: case ENPU_OP_CLIP: case ENPU_OP_LEAKY_RELU: case ENPU_OP_SIGMOID:
    case ENPU_OP_TANH: case ENPU_OP_HARD_SIGMOID: case ENPU_OP_HARD_SWISH: case ENPU_OP_SILU:
    case ENPU_OP_IDENTITY: case ENPU_OP_DROPOUT:
        rc = need_shape(g, n, 0, &x, err);
        return rc ? rc : set_out(g, n, 0, &x, err);
    case ENPU_OP_BATCHNORM:
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        if (x.rank < 2)
            return FAIL(ENPU_E_INVALID, "node '%s' (BatchNormalization): input rank %d < 2",
                        n->name, x.rank);
        for (int i = 1; i <= 4; i++) {
            rc = need_shape(g, n, i, &y, err);
            if (rc) return rc;
            if (y.rank != 1 || y.d[0] != x.d[1])
                return FAIL(ENPU_E_INVALID, "node '%s' (BatchNormalization): parameter '%s' must "
                            "have shape [%lld]", n->name, enpu_node_input(g, n, i)->name,
                            (long long)x.d[1]);
        }
        return set_out(g, n, 0, &x, err);
    case ENPU_OP_SOFTMAX:
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        rc = norm_axis(n, n->attr.shape.axis, x.rank, err);
        if (rc < 0) return rc;
        n->attr.shape.axis = rc;
        return set_out(g, n, 0, &x, err);
    case ENPU_OP_GLOBAL_AVGPOOL:
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        if (x.rank < 3)
            return FAIL(ENPU_E_INVALID, "node '%s' (GlobalAveragePool): input rank %d < 3", n->name,
                        x.rank);
        for (int i = 2; i < x.rank; i++) x.d[i] = 1;
        return set_out(g, n, 0, &x, err);
    case ENPU_OP_RESHAPE:
        return infer_reshape(g, n, err);
    case ENPU_OP_FLATTEN: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        int axis = n->attr.shape.axis;
        if (axis < -x.rank || axis > x.rank)
            return FAIL(ENPU_E_INVALID, "node '%s' (Flatten): axis %d out of range for rank %d",
                        n->name, axis, x.rank);
        if (axis < 0) axis += x.rank;
        n->attr.shape.axis = axis;
        o.rank = 2;
        o.d[0] = o.d[1] = 1;
        for (int i = 0; i < x.rank; i++) o.d[i < axis ? 0 : 1] *= x.d[i];
        return set_out(g, n, 0, &o, err);
    }
    case ENPU_OP_SQUEEZE: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        enpu_shape_attr *a = &n->attr.shape;
        bool drop[ENPU_MAX_RANK] = {false};
        if (a->n_axes == 0) {
            for (int i = 0; i < x.rank; i++) drop[i] = x.d[i] == 1;
        }
        for (int i = 0; i < a->n_axes; i++) {
            rc = norm_axis(n, a->axes[i], x.rank, err);
            if (rc < 0) return rc;
            a->axes[i] = rc;
            if (x.d[rc] != 1)
                return FAIL(ENPU_E_INVALID, "node '%s' (Squeeze): dimension %d is %lld, not 1",
                            n->name, rc, (long long)x.d[rc]);
            drop[rc] = true;
        }
        o.rank = 0;
        for (int i = 0; i < x.rank; i++)
            if (!drop[i]) o.d[o.rank++] = x.d[i];
        return set_out(g, n, 0, &o, err);
    }
    case ENPU_OP_UNSQUEEZE: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        enpu_shape_attr *a = &n->attr.shape;
        int r = x.rank + a->n_axes;
        if (r > ENPU_MAX_RANK)
            return FAIL(ENPU_E_LIMIT, "node '%s' (Unsqueeze): output rank %d over %d", n->name, r,
                        ENPU_MAX_RANK);
        bool ins[ENPU_MAX_RANK] = {false};
        for (int i = 0; i < a->n_axes; i++) {
            rc = norm_axis(n, a->axes[i], r, err);
            if (rc < 0) return rc;
            if (ins[rc])
                return FAIL(ENPU_E_INVALID, "node '%s' (Unsqueeze): axis %d repeated", n->name, rc);
            a->axes[i] = rc;
            ins[rc] = true;
        }
        o.rank = r;
        for (int i = 0, k = 0; i < r; i++) o.d[i] = ins[i] ? 1 : x.d[k++];
        return set_out(g, n, 0, &o, err);
    }
    case ENPU_OP_TRANSPOSE: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        enpu_shape_attr *a = &n->attr.shape;
        if (a->n_axes == 0) {
            a->n_axes = x.rank;
            for (int i = 0; i < x.rank; i++) a->axes[i] = x.rank - 1 - i;
        }
        if (a->n_axes != x.rank)
            return FAIL(ENPU_E_INVALID, "node '%s' (Transpose): perm has %d entries for rank %d",
                        n->name, a->n_axes, x.rank);
        bool seen[ENPU_MAX_RANK] = {false};
        o.rank = x.rank;
        for (int i = 0; i < x.rank; i++) {
            rc = norm_axis(n, a->axes[i], x.rank, err);
            if (rc < 0) return rc;
            if (seen[rc])
                return FAIL(ENPU_E_INVALID, "node '%s' (Transpose): perm is not a permutation",
                            n->name);
            seen[rc] = true;
            a->axes[i] = rc;
            o.d[i] = x.d[rc];
        }
        return set_out(g, n, 0, &o, err);
    }
    case ENPU_OP_CONCAT: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        rc = norm_axis(n, n->attr.shape.axis, x.rank, err);
        if (rc < 0) return rc;
        int axis = n->attr.shape.axis = rc;
        o = x;
        for (int i = 1; i < n->n_in; i++) {
            rc = need_shape(g, n, i, &y, err);
            if (rc) return rc;
            if (y.rank != x.rank)
                return FAIL(ENPU_E_INVALID, "node '%s' (Concat): input %d has rank %d, not %d",
                            n->name, i, y.rank, x.rank);
            for (int k = 0; k < x.rank; k++)
                if (k != axis && y.d[k] != x.d[k])
                    return FAIL(ENPU_E_INVALID,
                                "node '%s' (Concat): input %d differs in dimension %d", n->name,
                                i, k);
            o.d[axis] += y.d[axis];
            if (o.d[axis] > ENPU_MAX_DIM)
                return FAIL(ENPU_E_LIMIT, "node '%s' (Concat): dimension over the limit", n->name);
        }
        return set_out(g, n, 0, &o, err);
    }
    case ENPU_OP_PAD: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        const enpu_pad_attr *a = &n->attr.pad;
        if (a->n_pads != 2 * x.rank)
            return FAIL(ENPU_E_INVALID, "node '%s' (Pad): %d pads for rank %d (need %d)", n->name,
                        a->n_pads, x.rank, 2 * x.rank);
        o.rank = x.rank;
        for (int i = 0; i < x.rank; i++) {
            int64_t b = a->pads[i], e = a->pads[i + x.rank];
            if (b > ENPU_MAX_DIM || e > ENPU_MAX_DIM || b < -ENPU_MAX_DIM || e < -ENPU_MAX_DIM)
                return FAIL(ENPU_E_LIMIT, "node '%s' (Pad): pad over the limit", n->name);
            o.d[i] = x.d[i] + b + e;
            if (o.d[i] < 0)
                return FAIL(ENPU_E_INVALID, "node '%s' (Pad): dimension %d becomes negative",
                            n->name, i);
            if ((b > 0 || e > 0) && a->mode != ENPU_PADMODE_CONSTANT &&
                (x.d[i] == 0 || (a->mode == ENPU_PADMODE_REFLECT && (b >= x.d[i] || e >= x.d[i]))))
                return FAIL(ENPU_E_INVALID, "node '%s' (Pad): %s padding of %lld/%lld on a "
                            "dimension of %lld", n->name,
                            a->mode == ENPU_PADMODE_EDGE ? "edge" : "reflect", (long long)b,
                            (long long)e, (long long)x.d[i]);
        }
        return set_out(g, n, 0, &o, err);
    }
    case ENPU_OP_SLICE:
        return infer_slice(g, n, err);
    case ENPU_OP_RESIZE:
        return infer_resize(g, n, err);
    case ENPU_OP_CONV_TRANSPOSE:
        return infer_conv_transpose(g, n, err);
    case ENPU_OP_REDUCE_MEAN: case ENPU_OP_REDUCE_MAX: case ENPU_OP_REDUCE_SUM:
        return infer_reduce(g, n, err);
    case ENPU_OP_ARGMAX: case ENPU_OP_ARGMIN:
        /* one axis, always given (the importer's default 0): indices, int64 */
        if ((rc = infer_reduce(g, n, err))) return rc;
        set_dtype(g, n, ENPU_DT_INT64);
        return 0;
    case ENPU_OP_MAX: case ENPU_OP_MIN: case ENPU_OP_POW: case ENPU_OP_EQUAL: case ENPU_OP_WHERE:
        rc = broadcast_inputs(g, n, 0, n->n_in - 1, &o, err);
        if (rc) return rc;
        if (n->op == ENPU_OP_EQUAL) set_dtype(g, n, ENPU_DT_BOOL);
        if (n->op == ENPU_OP_WHERE) {
            const enpu_tensor *xv = enpu_node_input(g, n, 1);
            if (xv) set_dtype(g, n, xv->dtype);
        }
        return set_out(g, n, 0, &o, err);
    case ENPU_OP_SQRT: case ENPU_OP_EXP: case ENPU_OP_LOG: case ENPU_OP_ERF: case ENPU_OP_NEG:
    case ENPU_OP_ABS: case ENPU_OP_RECIPROCAL: case ENPU_OP_FLOOR: case ENPU_OP_CEIL:
    case ENPU_OP_GELU:
        rc = need_shape(g, n, 0, &x, err);
        return rc ? rc : set_out(g, n, 0, &x, err);
    case ENPU_OP_CAST:
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        set_dtype(g, n, n->attr.misc.to);
        return set_out(g, n, 0, &x, err);
    case ENPU_OP_QUANTIZE_LINEAR:
    case ENPU_OP_DEQUANTIZE_LINEAR: {
        rc = need_shape(g, n, 0, &x, err);
        if (rc) return rc;
        const enpu_tensor *zt = enpu_node_input(g, n, 2);
        if (n->op == ENPU_OP_DEQUANTIZE_LINEAR) set_dtype(g, n, ENPU_DT_FLOAT32);
        else set_dtype(g, n, zt ? zt->dtype : ENPU_DT_UINT8);
        return set_out(g, n, 0, &x, err);
    }
    case ENPU_OP_LAYER_NORM:
        return infer_layer_norm(g, n, err);
    case ENPU_OP_GATHER:
        return infer_gather(g, n, err);
    case ENPU_OP_EXPAND:
        return infer_expand(g, n, err);
    case ENPU_OP_SHAPE: case ENPU_OP_SIZE:
        return infer_shape_op(g, n, err);
    case ENPU_OP_RANGE:
        return infer_range(g, n, err);
    case ENPU_OP_CONSTANT_OF_SHAPE:
        rc = shape_from_input(g, n, 0, &o, err);
        if (rc) return rc;
        set_dtype(g, n, n->attr.misc.to);
        return set_out(g, n, 0, &o, err);
    case ENPU_OP_LSTM: case ENPU_OP_GRU: case ENPU_OP_RNN:
        return enpu_infer_rnn(g, n, err);
    case ENPU_OP_SPLIT:
    case ENPU_OP_QLINEAR_CONV:
    case ENPU_OP_QLINEAR_MATMUL:
    case ENPU_OP_IF:
    case ENPU_OP_LOOP:
    case ENPU_OP_SCAN:
        /* the importer expands them into other nodes */
        return FAIL(ENPU_E_INVALID, "node '%s': %s is expanded at import", n->name,
                    enpu_op_name(n->op));
    case ENPU_OP_NONE:
    case ENPU_OP_COUNT:
        break;
    }
    return FAIL(ENPU_E_UNSUPPORTED, "node '%s': unknown op %d", n->name, (int)n->op);
}

int enpu_infer_node(enpu_graph *g, int node, enpu_err *err) {
    ENPU_ASSERT(node >= 0 && node < g->n_nodes);
    enpu_node *n = &g->nodes[node];
    if (n->dead) return 0;
    /* Layouts follow data: window ops and per-channel ops keep NCHW. */
    int rc = infer_node_impl(g, n, err);
    if (rc) return rc;
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    enpu_tensor *y = enpu_node_output(g, n, 0);
    if (x && y) {
        if (n->op == ENPU_OP_TRANSPOSE && x->rank == 4) {
            const int *p = n->attr.shape.axes;
            if (p[0] == 0 && p[1] == 3 && p[2] == 1 && p[3] == 2) y->layout = ENPU_LAYOUT_NCHW;
            else if (p[0] == 0 && p[1] == 2 && p[2] == 3 && p[3] == 1) y->layout = ENPU_LAYOUT_NHWC;
        } else if (y->rank == 4 && n->op != ENPU_OP_RESHAPE) {
            y->layout = (n->op == ENPU_OP_CONV || n->op == ENPU_OP_MAXPOOL ||
                         n->op == ENPU_OP_AVGPOOL || n->op == ENPU_OP_GLOBAL_AVGPOOL)
                            ? ENPU_LAYOUT_NCHW
                            : x->layout;
        }
    }
    return 0;
}

int enpu_graph_infer_shapes(enpu_graph *g, enpu_err *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        int rc = enpu_infer_node(g, i, err);
        if (rc) return rc;
    }
    return 0;
}

int enpu_window_2d(const enpu_node *n, const enpu_window *win, int rank, int kh, int kw,
                   enpu_win2d *q, enpu_err *err) {
    bool two_d = rank == 4;
    q->kh = two_d ? kh : 1;
    q->kw = kw;
    q->sh = two_d ? win->stride[0] : 1;
    q->sw = win->stride[1];
    q->dh = two_d ? win->dilation[0] : 1;
    q->dw = win->dilation[1];
    q->pt = two_d ? win->pads[0] : 0;
    q->pb = two_d ? win->pads[2] : 0;
    q->pl = win->pads[1];
    q->pr = win->pads[3];
    if (win->auto_pad != ENPU_PAD_NOTSET)
        return FAIL(ENPU_E_INVALID, "node '%s': auto_pad not resolved (shapes not inferred)",
                    n->name);
    int v[] = {q->kh, q->kw, q->sh, q->sw, q->dh, q->dw};
    for (size_t i = 0; i < 6; i++)
        if (v[i] < 1 || v[i] > ENPU_WIN_LIMIT)
            return FAIL(ENPU_E_INVALID,
                        "node '%s': kernel %dx%d, strides %d,%d, dilations %d,%d must be in 1..%d",
                        n->name, q->kh, q->kw, q->sh, q->sw, q->dh, q->dw, ENPU_WIN_LIMIT);
    int p[] = {q->pt, q->pl, q->pb, q->pr};
    for (size_t i = 0; i < 4; i++)
        if (p[i] < 0 || p[i] > ENPU_WIN_LIMIT)
            return FAIL(ENPU_E_INVALID, "node '%s': pads %d,%d,%d,%d must be in 0..%d", n->name,
                        q->pt, q->pl, q->pb, q->pr, ENPU_WIN_LIMIT);
    return 0;
}

int64_t enpu_node_macs(const enpu_graph *g, const enpu_node *n) {
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    if (!y || y->rank < 0 || !x || x->rank < 0) return 0;
    int64_t out = enpu_tensor_numel(y);
    switch (n->op) {
    case ENPU_OP_CONV: {
        const enpu_tensor *w = enpu_node_input(g, n, 1);
        if (!w || w->rank < 2) return 0;
        int64_t per = 1;
        for (int i = 1; i < w->rank; i++) per *= w->dims[i];
        return out * per;
    }
    case ENPU_OP_GEMM:
        return out * (n->attr.gemm.trans_a ? x->dims[0] : x->dims[1]);
    case ENPU_OP_MATMUL:
        return out * x->dims[x->rank - 1];
    case ENPU_OP_AVGPOOL:
        return out * n->attr.pool.w.kernel[0] * n->attr.pool.w.kernel[1];
    case ENPU_OP_GLOBAL_AVGPOOL:
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_SUM:
        return enpu_tensor_numel(x);
    case ENPU_OP_CONV_TRANSPOSE: {
        /* every input element meets every weight of its group */
        const enpu_tensor *w = enpu_node_input(g, n, 1);
        if (!w || w->rank < 2) return 0;
        int64_t per = 1;
        for (int i = 1; i < w->rank; i++) per *= w->dims[i];
        return enpu_tensor_numel(x) * per;
    }
    case ENPU_OP_LSTM: case ENPU_OP_GRU: case ENPU_OP_RNN:
        return enpu_rnn_macs(g, n);
    default: /* BatchNormalization, activations, Add, Mul, MaxPool, moves */
        return 0;
    }
}
