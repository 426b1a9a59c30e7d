/* Parameter inputs folded into attributes: where a later opset turned an
 * attribute into an input (Clip's min/max, Pad's pads, Squeeze's axes,
 * Slice's starts..., Resize's scales, Dropout's training_mode), a constant
 * value is read back into the node's attribute so no later stage sees the
 * opset difference; a value the graph computes leaves the node to run on
 * the host with each run's value (docs/ops.md), or is refused where the
 * output's shape would depend on it. */
#include "easynpu/onnx.h"
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/file.h"
#include "easynpu/numerics.h"
#include "frontend/onnx_fold.h"
#include "frontend/onnx_imp.h"
#include "tensor/onnx_tensor.h"
#include "onnx.pb-c.h"

bool oi_is_const(const enpu_graph *g, int t) {
    return t >= 0 && (g->tensors[t].flags & ENPU_T_CONST) && g->tensors[t].data &&
           g->tensors[t].rank >= 0;
}

static int64_t const_numel(const enpu_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

/* Element i of a constant as double (any numeric dtype). */
double oi_const_at(const enpu_tensor *t, int64_t i) { return enpu_dtype_value_at(t->dtype, t->data, i); }

int64_t oi_const_i64_at(const enpu_tensor *t, int64_t i) {
    if (t->dtype == ENPU_DT_INT64) return ((const int64_t *)t->data)[i];
    if (t->dtype == ENPU_DT_INT32) return ((const int32_t *)t->data)[i];
    return (int64_t)oi_const_at(t, i);
}

/* Where a fold error is reported: `what` is the file, NULL after import. */
typedef struct fold_ctx {
    const char *what; /* may be NULL */
    const enpu_node *n;
    enpu_err *err;
} fold_ctx;

static int ffail(const fold_ctx *f, enpu_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int ffail(const fold_ctx *f, enpu_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = oi_node_vfail(f->err, f->what, f->n->name, enpu_op_name(f->n->op), code, fmt, ap);
    va_end(ap);
    return rc;
}

/* Integer list from the constant tensor t (scalar or 1-D, integer dtype). */
static int fold_ints(const fold_ctx *f, const enpu_graph *g, int t, const char *role, int max,
                     int64_t *v, int *n) {
    const enpu_tensor *ct = &g->tensors[t];
    if (ct->dtype != ENPU_DT_INT64 && ct->dtype != ENPU_DT_INT32)
        return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') has dtype %s, expected int64",
                     role, ct->name, enpu_dtype_name(ct->dtype));
    if (ct->rank > 1)
        return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') has rank %d, expected 1", role,
                     ct->name, ct->rank);
    int64_t cnt = const_numel(ct);
    if (cnt > max)
        return ffail(f, ENPU_E_LIMIT,
                     "input '%s' (tensor '%s') has %lld values, over the limit of %d", role,
                     ct->name, (long long)cnt, max);
    for (int64_t i = 0; i < cnt; i++) v[i] = oi_const_i64_at(ct, i);
    *n = (int)cnt;
    return 0;
}

static int fold_scalar(const fold_ctx *f, const enpu_graph *g, int t, const char *role,
                       float *v) {
    const enpu_tensor *ct = &g->tensors[t];
    if (const_numel(ct) != 1)
        return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') has %lld values, expected 1",
                     role, ct->name, (long long)const_numel(ct));
    double d = oi_const_at(ct, 0);
    if (isnan(d))
        return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') is NaN", role, ct->name);
    *v = (float)d;
    return 0;
}

static int check_axes(const fold_ctx *f, const char *role, const int64_t *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i] < -ENPU_MAX_RANK || v[i] >= ENPU_MAX_RANK)
            return ffail(f, ENPU_E_INVALID, "%s value %lld is outside -%d..%d", role,
                         (long long)v[i], ENPU_MAX_RANK, ENPU_MAX_RANK - 1);
    return 0;
}

/* Dropout's training_mode (input 2) must be a constant false; the ratio
 * (input 1) does not matter in inference.  Both are dropped. */
static int fold_dropout(const fold_ctx *f, enpu_graph *g, enpu_node *n, bool strict) {
    int t = n->n_in > 2 ? n->in[2] : -1;
    if (t >= 0 && !oi_is_const(g, t)) {
        if (!strict) return 0;
        return ffail(f, ENPU_E_UNSUPPORTED,
                     "input 'training_mode' (tensor '%s') is not a constant; only inference "
                     "Dropout is supported (bind it to false)",
                     g->tensors[t].name);
    }
    if (t >= 0) {
        const enpu_tensor *ct = &g->tensors[t];
        if (const_numel(ct) != 1)
            return ffail(f, ENPU_E_INVALID,
                         "input 'training_mode' (tensor '%s') has %lld values, expected 1",
                         ct->name, (long long)const_numel(ct));
        if (oi_const_at(ct, 0) != 0)
            return ffail(f, ENPU_E_UNSUPPORTED,
                         "input 'training_mode' (tensor '%s') is true: training-mode Dropout is "
                         "not supported",
                         ct->name);
    }
    n->n_in = 1;
    return 0;
}

/* The name of parameter input i of an op whose parameters stay on the node
 * (NULL: a value input). */
static const char *param_role(enpu_op op, int i) {
    switch (op) {
    case ENPU_OP_WHERE: return i == 0 ? "condition" : NULL;
    case ENPU_OP_EQUAL: return i == 0 ? "A" : "B";
    case ENPU_OP_EXPAND: return i == 1 ? "shape" : NULL;
    case ENPU_OP_QUANTIZE_LINEAR:
    case ENPU_OP_DEQUANTIZE_LINEAR: return i == 1 ? "scale" : i == 2 ? "zero point" : NULL;
    case ENPU_OP_RANGE: return i == 0 ? "start" : i == 1 ? "limit" : "delta";
    case ENPU_OP_CONSTANT_OF_SHAPE: return "input";
    case ENPU_OP_SPLIT: return i == 1 ? "split" : NULL;
    default: return NULL;
    }
}

/* Slice of opset 10+: starts, ends, axes, steps inputs into the attributes. */
static int fold_slice_inputs(const fold_ctx *f, const enpu_graph *g, enpu_node *n, bool strict) {
    static const char *const roles[] = {"data", "starts", "ends", "axes", "steps"};
    for (int i = 1; i < n->n_in; i++) {
        int t = n->in[i];
        if (t < 0 || oi_is_const(g, t)) continue;
        if (!strict) return 0;
        return ffail(f, ENPU_E_UNSUPPORTED,
                     "input '%s' (tensor '%s') is not a constant; only constant %s inputs are "
                     "supported (bind it to a value)",
                     roles[i], g->tensors[t].name, roles[i]);
    }
    enpu_slice_attr *a = &n->attr.slice;
    int64_t v[4][ENPU_MAX_RANK];
    int cnt[4] = {0, 0, -1, -1}, rc;
    for (int i = 1; i < n->n_in && i < 5; i++)
        if (n->in[i] >= 0 &&
            (rc = fold_ints(f, g, n->in[i], roles[i], ENPU_MAX_RANK, v[i - 1], &cnt[i - 1])))
            return rc;
    if (cnt[1] != cnt[0] || (cnt[2] >= 0 && cnt[2] != cnt[0]) || (cnt[3] >= 0 && cnt[3] != cnt[0]))
        return ffail(f, ENPU_E_INVALID, "inputs 'starts', 'ends', 'axes' and 'steps' differ in length");
    if (cnt[2] >= 0 && (rc = check_axes(f, "axes", v[2], cnt[2]))) return rc;
    a->n = cnt[0];
    for (int i = 0; i < cnt[0]; i++) {
        a->starts[i] = v[0][i];
        a->ends[i] = v[1][i];
        a->axes[i] = cnt[2] >= 0 ? (int)v[2][i] : i;
        a->steps[i] = cnt[3] >= 0 ? v[3][i] : 1;
    }
    n->n_in = 1;
    return 0;
}

/* Float list from constant t (any numeric dtype). */
static int fold_floats(const fold_ctx *f, const enpu_graph *g, int t, const char *role, int max,
                       float *v, int *n) {
    const enpu_tensor *ct = &g->tensors[t];
    int64_t cnt = const_numel(ct);
    if (ct->rank > 1)
        return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') has rank %d, expected 1", role,
                     ct->name, ct->rank);
    if (cnt > max)
        return ffail(f, ENPU_E_LIMIT, "input '%s' (tensor '%s') has %lld values, over the limit of %d",
                     role, ct->name, (long long)cnt, max);
    for (int64_t i = 0; i < cnt; i++) {
        double d = oi_const_at(ct, i);
        if (!isfinite(d))
            return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') holds %g", role, ct->name, d);
        v[i] = (float)d;
    }
    *n = (int)cnt;
    return 0;
}

/* Resize's roi, scales and sizes inputs into the attributes (opset 10: the
 * scales are input 1). */
static int fold_resize_inputs(const fold_ctx *f, const enpu_graph *g, enpu_node *n, bool strict) {
    static const char *const roles[] = {"X", "roi", "scales", "sizes"};
    bool v10 = g->opset < 11;
    for (int i = 1; i < n->n_in; i++) {
        int t = n->in[i];
        if (t < 0 || oi_is_const(g, t)) continue;
        if (!strict) return 0;
        const char *r = v10 ? "scales" : roles[i];
        return ffail(f, ENPU_E_UNSUPPORTED,
                     "input '%s' (tensor '%s') is not a constant; only constant %s inputs are "
                     "supported (bind it to a value)",
                     r, g->tensors[t].name, r);
    }
    enpu_resize_attr *a = &n->attr.resize;
    int rc;
    int sc = v10 ? 1 : 2;
    if (!v10 && n->n_in > 1 && n->in[1] >= 0 && a->ctm == ENPU_CTM_TF_CROP_AND_RESIZE &&
        (rc = fold_floats(f, g, n->in[1], "roi", 2 * ENPU_MAX_RANK, a->roi, &a->n_roi)))
        return rc;
    if (n->n_in > sc && n->in[sc] >= 0 &&
        (rc = fold_floats(f, g, n->in[sc], "scales", ENPU_MAX_RANK, a->scales, &a->n_scales)))
        return rc;
    if (!v10 && n->n_in > 3 && n->in[3] >= 0) {
        int64_t sz[ENPU_MAX_RANK];
        int cnt = 0;
        if ((rc = fold_ints(f, g, n->in[3], "sizes", ENPU_MAX_RANK, sz, &cnt))) return rc;
        if (cnt && a->n_scales)
            return ffail(f, ENPU_E_INVALID, "both 'scales' and 'sizes' are given");
        a->n_sizes = cnt;
        for (int i = 0; i < cnt; i++) a->sizes[i] = sz[i];
    }
    if (a->n_scales == 0 && a->n_sizes == 0)
        return ffail(f, ENPU_E_INVALID, "neither 'scales' nor 'sizes' is given");
    n->n_in = 1;
    return 0;
}

/* Folds the constant parameter inputs of node ni into its attributes and
 * drops them from the node.  With `strict` a non-constant parameter input is
 * ENPU_E_UNSUPPORTED; otherwise the node is left as it is (an introspection
 * import: the caller learns which inputs to bind). */
int oi_fold_node(enpu_graph *g, int ni, const char *what, bool strict, enpu_err *err) {
    enpu_node *n = &g->nodes[ni];
    fold_ctx f = {what, n, err};
    static const char *const clip_roles[] = {"input", "min", "max"};
    static const char *const pad_roles[] = {"data", "pads", "constant_value", "axes"};
    /* Which parameter inputs must be constant for this op. */
    int first = 1, last;
    const char *const *roles;
    switch (n->op) {
    case ENPU_OP_CLIP: last = 2; roles = clip_roles; break;
    case ENPU_OP_PAD: last = 3; roles = pad_roles; break;
    case ENPU_OP_SQUEEZE:
    case ENPU_OP_UNSQUEEZE: last = 1; roles = NULL; break;
    case ENPU_OP_DROPOUT: return fold_dropout(&f, g, n, strict);
    case ENPU_OP_SLICE:
        if (n->n_in <= 1) return 0; /* opset < 10: attributes */
        return fold_slice_inputs(&f, g, n, strict);
    case ENPU_OP_RESIZE: return fold_resize_inputs(&f, g, n, strict);
    case ENPU_OP_REDUCE_SUM: {
        int t = n->n_in > 1 ? n->in[1] : -1;
        if (t < 0) return 0;
        if (!oi_is_const(g, t))
            return strict ? ffail(&f, ENPU_E_UNSUPPORTED,
                                  "input 'axes' (tensor '%s') is not a constant; only constant "
                                  "axes inputs are supported (bind it to a value)",
                                  g->tensors[t].name)
                          : 0;
        int64_t ax[ENPU_MAX_RANK];
        int cnt = 0;
        int rc = fold_ints(&f, g, t, "axes", ENPU_MAX_RANK, ax, &cnt);
        if (!rc) rc = check_axes(&f, "axes", ax, cnt);
        if (rc) return rc;
        for (int i = 0; i < cnt; i++) n->attr.reduce.axes[i] = (int)ax[i];
        n->attr.reduce.n_axes = cnt;
        n->n_in = 1;
        return 0;
    }
    case ENPU_OP_GATHER: {
        /* computed indices stay an input: the output's shape is theirs, not
         * their values', so the Gather runs on the host with each run's
         * indices (a constant one is read when the node is lowered) */
        const enpu_tensor *ix = n->n_in > 1 && n->in[1] >= 0 ? &g->tensors[n->in[1]] : NULL;
        if (ix && !oi_is_const(g, n->in[1]) && ix->dtype != ENPU_DT_UNDEFINED &&
            ix->dtype != ENPU_DT_INT64 && ix->dtype != ENPU_DT_INT32)
            return ffail(&f, ENPU_E_INVALID, "input 'indices' (tensor '%s') is %s, not int64/int32",
                         ix->name, enpu_dtype_name(ix->dtype));
        return 0;
    }
    case ENPU_OP_WHERE:
    case ENPU_OP_EQUAL:
    case ENPU_OP_EXPAND:
    case ENPU_OP_QUANTIZE_LINEAR:
    case ENPU_OP_DEQUANTIZE_LINEAR:
    case ENPU_OP_RANGE:
    case ENPU_OP_CONSTANT_OF_SHAPE:
    case ENPU_OP_SPLIT: {
        /* parameter inputs that stay on the node, read when it runs or is
         * folded: they must be constants by then */
        for (int i = 0; i < n->n_in && strict; i++) {
            int t = n->in[i];
            if (t < 0 || oi_is_const(g, t) || !param_role(n->op, i)) continue;
            return ffail(&f, ENPU_E_UNSUPPORTED,
                         "input '%s' (tensor '%s') is not a constant; only a constant %s is "
                         "supported (bind it to a value)",
                         param_role(n->op, i), g->tensors[t].name, param_role(n->op, i));
        }
        return 0;
    }
    case ENPU_OP_RESHAPE: {
        int t = n->n_in > 1 ? n->in[1] : -1;
        if (t >= 0 && oi_is_const(g, t)) {
            int64_t v[ENPU_MAX_RANK];
            int cnt = 0;
            int rc = fold_ints(&f, g, t, "shape", ENPU_MAX_RANK, v, &cnt);
            if (rc) return rc;
            n->attr.shape.n_shape = cnt;
            for (int i = 0; i < cnt; i++) n->attr.shape.shape[i] = v[i];
        } else {
            n->attr.shape.n_shape = -1; /* read from input 1 once known */
        }
        return 0;
    }
    default: return 0;
    }
    if (n->n_in <= 1) return 0;
    for (int i = first; i <= last && i < n->n_in; i++) {
        int t = n->in[i];
        if (t < 0 || oi_is_const(g, t)) continue;
        /* a Clip bound or a Pad value computed by the graph stays an input:
         * the node runs with the value of each run (on the host) */
        if (n->op == ENPU_OP_CLIP || (n->op == ENPU_OP_PAD && i == 2)) continue;
        if (!strict) return 0;
        if (n->op == ENPU_OP_PAD && i == 1)
            return ffail(&f, ENPU_E_UNSUPPORTED,
                         "input 'pads' (tensor '%s') is not a constant: the output's shape would "
                         "depend on its value, and a program has static shapes (bind it to a value)",
                         g->tensors[t].name);
        return ffail(&f, ENPU_E_UNSUPPORTED,
                     "input '%s' (tensor '%s') is not a constant; only constant %s inputs are "
                     "supported (bind it to a value)",
                     roles ? roles[i] : "axes", g->tensors[t].name, roles ? roles[i] : "axes");
    }
    int rc = 0;
    bool runtime = false; /* a bound or value input is computed: the node keeps its inputs */
    switch (n->op) {
    case ENPU_OP_CLIP:
        for (int i = 1; i < 3 && i < n->n_in && !rc; i++) {
            if (n->in[i] < 0) continue;
            if (!oi_is_const(g, n->in[i])) runtime = true;
            else rc = fold_scalar(&f, g, n->in[i], clip_roles[i], i == 1 ? &n->attr.act.min : &n->attr.act.max);
        }
        break;
    case ENPU_OP_PAD: {
        if (n->n_in > 3 && n->in[3] >= 0)
            return ffail(&f, ENPU_E_UNSUPPORTED, "the 'axes' input (opset 18) is not supported");
        if (n->in[1] < 0) return ffail(&f, ENPU_E_INVALID, "input 'pads' is missing");
        int cnt = 0;
        rc = fold_ints(&f, g, n->in[1], "pads", 2 * ENPU_MAX_RANK, n->attr.pad.pads, &cnt);
        if (rc) return rc;
        if (cnt % 2)
            return ffail(&f, ENPU_E_INVALID, "input 'pads' has %d values, expected an even count",
                         cnt);
        n->attr.pad.n_pads = cnt;
        if (n->n_in > 2 && n->in[2] >= 0 && !oi_is_const(g, n->in[2])) runtime = true;
        else if (n->n_in > 2 && n->in[2] >= 0)
            rc = fold_scalar(&f, g, n->in[2], "constant_value", &n->attr.pad.value);
        break;
    }
    default: { /* Squeeze, Unsqueeze */
        if (n->in[1] < 0) break;
        int cnt = 0;
        int64_t ax[ENPU_MAX_RANK];
        rc = fold_ints(&f, g, n->in[1], "axes", ENPU_MAX_RANK, ax, &cnt);
        if (!rc) rc = check_axes(&f, "axes", ax, cnt);
        if (rc) return rc;
        for (int i = 0; i < cnt; i++) n->attr.shape.axes[i] = (int)ax[i];
        n->attr.shape.n_axes = cnt;
        break;
    }
    }
    if (rc) return rc;
    if (!runtime) n->n_in = 1;
    return 0;
}

bool enpu_onnx_is_param_input(const enpu_graph *g, int t) {
    /* a value an If's condition or a Loop's trip count or condition is
     * computed from decides the program's control flow */
    if ((g->tensors[t].flags & ENPU_T_INPUT) && oi_ctl_reads(g, t)) return true;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        switch (n->op) {
        case ENPU_OP_CLIP:
        case ENPU_OP_PAD:
        case ENPU_OP_SQUEEZE:
        case ENPU_OP_UNSQUEEZE:
        case ENPU_OP_RESHAPE:
        case ENPU_OP_DROPOUT:
        case ENPU_OP_SLICE:
        case ENPU_OP_RESIZE:
        case ENPU_OP_REDUCE_SUM:
            for (int k = 1; k < n->n_in; k++)
                if (n->in[k] == t) return true;
            break;
        case ENPU_OP_IF:
        case ENPU_OP_LOOP:
            /* the condition and the trip count choose what is inlined */
            for (int k = 0; k < (n->op == ENPU_OP_IF ? 1 : 2) && k < n->n_in; k++)
                if (n->in[k] == t) return true;
            break;
        case ENPU_OP_LSTM:
        case ENPU_OP_GRU:
        case ENPU_OP_RNN:
            /* the weights, biases, lengths and peepholes: the model's constants */
            for (int k = 1; k < n->n_in; k++)
                if (n->in[k] == t && k != 5 && k != 6) return true;
            break;
        default:
            for (int k = 0; k < n->n_in; k++)
                if (n->in[k] == t && param_role(n->op, k)) return true;
            break;
        }
    }
    return false;
}
