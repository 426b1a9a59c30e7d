/* ONNX ModelProto -> enpu_graph.
 *
 * The model is untrusted: every count, name, dimension and attribute value is
 * checked before anything is allocated from it, and every error names the
 * file and the node/tensor/attribute at fault.  Attributes are normalized here
 * (ONNX defaults filled in, opset differences resolved) so that no later stage
 * sees ONNX spelling.
 *
 * Graph inputs given a value by the caller (enpu_onnx_bind) become constants
 * as they are read.  Then three passes over the nodes: (A) Constant nodes
 * become constant tensors and every other node's outputs are declared, so
 * that node inputs can be resolved whatever the file order (toposort fixes
 * the order afterwards); (B) nodes are added with their attributes, old-opset
 * forms normalized; constant "parameter" inputs (Clip min/max, Pad pads,
 * Squeeze/Unsqueeze axes, Dropout training_mode) are folded into the
 * attributes; (C) graph outputs and layout hints.  Shape inference then
 * resolves the legacy broadcasts of opsets < 7, which need the input shapes. */
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

#define OPSET_MIN 1
#define OPSET_MAX 17
#define MAX_NODE_IO OI_MAX_NODE_IO


/* "WHAT: node 'NAME' (op 'OP'): message" (without "WHAT: " when what is NULL). */
static int node_vfail(enpu_err *err, const char *what, const char *node, const char *op,
                      enpu_status code, const char *fmt, va_list ap) {
    char msg[ENPU_ERR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return enpu_fail(err, code, "%s%snode '%s' (op '%s'): %s", what ? what : "",
                     what ? ": " : "", node, op, msg);
}

int oi_nfail(const nctx *c, enpu_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = node_vfail(c->im->err, c->im->what, c->name, c->op_type, code, fmt, ap);
    va_end(ap);
    return rc;
}

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* --- problems: everything a user must fix, collected and reported at once -- */

/* Records message `msg` (a "WHAT: " prefix naming the file is dropped: the
 * final error names the file once).  Returns 0, or ENPU_E_NOMEM. */
int oi_add_problem(imp *im, const char *msg) {
    size_t wl = strlen(im->what);
    if (strncmp(msg, im->what, wl) == 0 && msg[wl] == ':' && msg[wl + 1] == ' ') msg += wl + 2;
    char **np = realloc(im->problems, (size_t)(im->n_problems + 1) * sizeof *np);
    if (!np) return enpu_fail(im->err, ENPU_E_NOMEM, "%s: out of memory", im->what);
    im->problems = np;
    size_t n = strlen(msg) + 1;
    char *c = malloc(n);
    if (!c) return enpu_fail(im->err, ENPU_E_NOMEM, "%s: out of memory", im->what);
    memcpy(c, msg, n);
    im->problems[im->n_problems++] = c;
    return 0;
}

bool oi_poisoned(const imp *im, int t) { return t >= 0 && t < im->cap_poison && im->poison[t]; }

int oi_set_poison(imp *im, int t) {
    if (t < 0) return 0;
    if (t >= im->cap_poison) {
        int cap = im->g->n_tensors > t + 1 ? im->g->n_tensors : t + 1;
        bool *np = realloc(im->poison, (size_t)cap * sizeof *np);
        if (!np) return enpu_fail(im->err, ENPU_E_NOMEM, "%s: out of memory", im->what);
        memset(np + im->cap_poison, 0, (size_t)(cap - im->cap_poison) * sizeof *np);
        im->poison = np;
        im->cap_poison = cap;
    }
    im->poison[t] = true;
    return 0;
}

/* Runs step(im, ctx) with a fresh error: an ENPU_E_UNSUPPORTED failure
 * becomes a problem (*skipped set), any other is returned. */
int oi_as_problem(imp *im, int rc, const enpu_err *e, bool *skipped) {
    *skipped = false;
    if (!rc) return 0;
    if (e->code == ENPU_E_UNSUPPORTED) {
        *skipped = true;
        return oi_add_problem(im, e->msg);
    }
    if (im->err && im->err->code == ENPU_OK) *im->err = *e;
    return rc;
}

/* The one error listing every problem: the problem itself when there is
 * one (as it always read), otherwise "WHAT: N problems ...: p1; p2; ...",
 * cut at the message limit with how many are left out. */
static int fail_problems(imp *im) {
    if (im->n_problems == 1)
        return enpu_fail(im->err, ENPU_E_UNSUPPORTED, "%s: %s", im->what, im->problems[0]);
    char buf[ENPU_ERR_MSG_MAX];
    int o = snprintf(buf, sizeof buf, "%s: %d problems (unsupported operators and forms, "
                     "unresolved shapes): ", im->what, im->n_problems);
    int i = 0;
    for (; i < im->n_problems && o >= 0 && (size_t)o < sizeof buf; i++) {
        char tail[48];
        snprintf(tail, sizeof tail, "; ... and %d more", im->n_problems - i - 1);
        size_t need = strlen(im->problems[i]) + 2 + (i + 1 < im->n_problems ? strlen(tail) : 0);
        if ((size_t)o + need >= sizeof buf) break;
        o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%s", i ? "; " : "", im->problems[i]);
    }
    if (i < im->n_problems && (size_t)o < sizeof buf)
        snprintf(buf + o, sizeof buf - (size_t)o, "; ... and %d more", im->n_problems - i);
    return enpu_fail(im->err, ENPU_E_UNSUPPORTED, "%s", buf);
}

/* --- attributes ---------------------------------------------------------- */

attr_type oi_attr_type_of(const Onnx__AttributeProto *a) {
    if (a->has_type) return a->type;
    /* IR version 1 models have no type discriminator: infer it. */
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

const char *oi_attr_type_name(attr_type t) {
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
    }
}

/* The attribute `name` of the node if present (*out NULL otherwise); a present
 * attribute of another type than `want` is ENPU_E_INVALID. */
int oi_get_attr(const nctx *c, const char *name, attr_type want,
                    const Onnx__AttributeProto **out) {
    *out = NULL;
    for (size_t i = 0; i < c->np->n_attribute; i++) {
        const Onnx__AttributeProto *a = c->np->attribute[i];
        if (!a || !a->name || strcmp(a->name, name) != 0) continue;
        attr_type t = oi_attr_type_of(a);
        if (t != want)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' has type %s, expected %s", name,
                         oi_attr_type_name(t), oi_attr_type_name(want));
        *out = a;
        return 0;
    }
    return 0;
}

/* INT attribute in [lo, hi] (default `def` when absent). */
int oi_a_int(const nctx *c, const char *name, int64_t def, int64_t lo, int64_t hi,
                 int64_t *v) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a);
    if (rc) return rc;
    *v = a ? a->i : def;
    if (*v < lo || *v > hi)
        return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is %lld, expected %lld..%lld", name,
                     (long long)*v, (long long)lo, (long long)hi);
    return 0;
}

int oi_a_bool(const nctx *c, const char *name, bool *v) {
    int64_t i = 0;
    int rc = oi_a_int(c, name, 0, 0, 1, &i);
    *v = i != 0;
    return rc;
}

int oi_a_float(const nctx *c, const char *name, float def, float *v) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, &a);
    if (rc) return rc;
    *v = a ? a->f : def;
    if (isnan(*v)) return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is NaN", name);
    return 0;
}

/* INTS attribute of at most `max` values; *n = -1 when absent. */
int oi_a_ints(const nctx *c, const char *name, int max, int64_t *v, int *n) {
    const Onnx__AttributeProto *a;
    *n = -1;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a);
    if (rc || !a) return rc;
    if (a->n_ints > (size_t)max)
        return oi_nfail(c, ENPU_E_LIMIT, "attribute '%s' has %zu values, over the limit of %d",
                     name, a->n_ints, max);
    for (size_t i = 0; i < a->n_ints; i++) v[i] = a->ints[i];
    *n = (int)a->n_ints;
    return 0;
}

/* STRING attribute into buf (NUL-terminated; longer values are invalid). */
int oi_a_string(const nctx *c, const char *name, const char *def, char *buf, size_t n) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, &a);
    if (rc) return rc;
    if (!a) {
        snprintf(buf, n, "%s", def);
        return 0;
    }
    /* An empty string may come with no data at all (NULL). */
    if (a->s.len >= n || (a->s.len && memchr(a->s.data, 0, a->s.len)))
        return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is not a recognized value", name);
    if (a->s.len) memcpy(buf, a->s.data, a->s.len);
    buf[a->s.len] = 0;
    return 0;
}

/* --- constant inputs ----------------------------------------------------- */

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
static double const_at(const enpu_tensor *t, int64_t i) { return enpu_dtype_value_at(t->dtype, t->data, i); }

static int64_t const_i64_at(const enpu_tensor *t, int64_t i) {
    if (t->dtype == ENPU_DT_INT64) return ((const int64_t *)t->data)[i];
    if (t->dtype == ENPU_DT_INT32) return ((const int32_t *)t->data)[i];
    return (int64_t)const_at(t, i);
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
    int rc = node_vfail(f->err, f->what, f->n->name, enpu_op_name(f->n->op), code, fmt, ap);
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
    for (int64_t i = 0; i < cnt; i++) v[i] = const_i64_at(ct, i);
    *n = (int)cnt;
    return 0;
}

static int fold_scalar(const fold_ctx *f, const enpu_graph *g, int t, const char *role,
                       float *v) {
    const enpu_tensor *ct = &g->tensors[t];
    if (const_numel(ct) != 1)
        return ffail(f, ENPU_E_INVALID, "input '%s' (tensor '%s') has %lld values, expected 1",
                     role, ct->name, (long long)const_numel(ct));
    double d = const_at(ct, 0);
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
        if (const_at(ct, 0) != 0)
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
    case ENPU_OP_GATHER: return i == 1 ? "indices" : NULL;
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
        double d = const_at(ct, i);
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
    case ENPU_OP_GATHER:
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

/* --- windows (Conv, MaxPool, AveragePool) -------------------------------- */

static int window_values(const nctx *c, const char *name, const int64_t *v, int n, int64_t lo) {
    for (int i = 0; i < n; i++) {
        if (v[i] < lo)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' value %lld is below %lld", name,
                         (long long)v[i], (long long)lo);
        if (v[i] > INT_MAX / 2)
            return oi_nfail(c, ENPU_E_LIMIT, "attribute '%s' value %lld is over the limit of %d",
                         name, (long long)v[i], INT_MAX / 2);
    }
    return 0;
}

static int parse_window(const nctx *c, const int *in, enpu_window *w) {
    const enpu_graph *g = c->im->g;
    int64_t k[8], s[8], d[8], p[16];
    int nk, ns, nd, np, rc;
    if ((rc = oi_a_ints(c, "kernel_shape", 8, k, &nk))) return rc;
    bool from_weights = false; /* the kernel is the weights', known after inference */
    if (nk < 0) {
        const enpu_tensor *wt = c->np->n_input > 1 && in[1] >= 0 ? &g->tensors[in[1]] : NULL;
        if (strcmp(c->op_type, "Conv") != 0 && strcmp(c->op_type, "ConvTranspose") != 0 &&
            strcmp(c->op_type, "QLinearConv") != 0)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'kernel_shape' is absent and the weight's "
                         "shape is unknown");
        if (!wt || wt->rank < 0) {
            /* weights computed in the model (a DequantizeLinear of int8
             * ones): the other attributes say how many spatial axes */
            int64_t tmp[16];
            int n1, n2, n3;
            if ((rc = oi_a_ints(c, "strides", 8, tmp, &n1)) || (rc = oi_a_ints(c, "dilations", 8, tmp, &n2)) ||
                (rc = oi_a_ints(c, "pads", 16, tmp, &n3)))
                return rc;
            nk = n1 >= 0 ? n1 : n2 >= 0 ? n2 : n3 >= 0 ? n3 / 2 : 2;
            for (int i = 0; i < nk && i < 8; i++) k[i] = 1;
            from_weights = true;
        } else if (wt->rank < 3)
            return oi_nfail(c, ENPU_E_INVALID, "weight '%s' has rank %d, expected at least 3",
                         wt->name, wt->rank);
        else {
            nk = wt->rank - 2;
            for (int i = 0; i < nk; i++) k[i] = wt->dims[2 + i];
        }
    }
    if (nk == 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'kernel_shape' is empty");
    if (nk > 2)
        return oi_nfail(c, ENPU_E_UNSUPPORTED,
                     "%d-D windows are not supported (only 1-D and 2-D)", nk);
    if ((rc = oi_a_ints(c, "strides", 8, s, &ns))) return rc;
    if ((rc = oi_a_ints(c, "dilations", 8, d, &nd))) return rc;
    if ((rc = oi_a_ints(c, "pads", 16, p, &np))) return rc;
    if (ns >= 0 && ns != nk)
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'strides' has %d values, expected %d", ns, nk);
    if (nd >= 0 && nd != nk)
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'dilations' has %d values, expected %d", nd,
                     nk);
    if (np >= 0 && np != 2 * nk)
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'pads' has %d values, expected %d", np,
                     2 * nk);
    for (int i = 0; i < nk; i++) {
        if (ns < 0) s[i] = 1;
        if (nd < 0) d[i] = 1;
        if (np < 0) p[i] = p[nk + i] = 0;
    }
    if ((rc = window_values(c, "kernel_shape", k, nk, 1))) return rc;
    if ((rc = window_values(c, "strides", s, nk, 1))) return rc;
    if ((rc = window_values(c, "dilations", d, nk, 1))) return rc;
    if ((rc = window_values(c, "pads", p, 2 * nk, 0))) return rc;
    char ap[32];
    if ((rc = oi_a_string(c, "auto_pad", "NOTSET", ap, sizeof ap))) return rc;
    if (strcmp(ap, "NOTSET") == 0) w->auto_pad = ENPU_PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0) w->auto_pad = ENPU_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) w->auto_pad = ENPU_PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) w->auto_pad = ENPU_PAD_VALID;
    else
        return oi_nfail(c, ENPU_E_INVALID,
                     "attribute 'auto_pad' is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or "
                     "VALID",
                     ap);
    if (nk == 2) {
        for (int i = 0; i < 2; i++) {
            w->kernel[i] = (int)k[i];
            w->stride[i] = (int)s[i];
            w->dilation[i] = (int)d[i];
        }
        w->pads[0] = (int)p[0]; /* top */
        w->pads[1] = (int)p[1]; /* left */
        w->pads[2] = (int)p[2]; /* bottom */
        w->pads[3] = (int)p[3]; /* right */
    } else { /* 1-D: the single spatial axis is the window's W */
        w->kernel[0] = w->stride[0] = w->dilation[0] = 1;
        w->kernel[1] = (int)k[0];
        w->stride[1] = (int)s[0];
        w->dilation[1] = (int)d[0];
        w->pads[0] = w->pads[2] = 0;
        w->pads[1] = (int)p[0];
        w->pads[3] = (int)p[1];
    }
    if (from_weights) {
        w->kernel[1] = 0;
        w->kernel[0] = nk == 2 ? 0 : 1;
    }
    return 0;
}

/* --- per-op attribute mapping -------------------------------------------- */

/* ONNX arity (before folding) of each op: min..max inputs, the first `min`
 * being required. */
static void arity(enpu_op op, int opset, int *lo, int *hi) {
    *lo = 1;
    *hi = 1;
    switch (op) {
    case ENPU_OP_CONV:
    case ENPU_OP_GEMM: *lo = 2; *hi = 3; break;
    case ENPU_OP_MATMUL:
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
    case ENPU_OP_PRELU: *lo = 2; *hi = 2; break;
    case ENPU_OP_RESHAPE: *lo = *hi = opset < 5 ? 1 : 2; break;
    case ENPU_OP_CLIP: *hi = opset < 11 ? 1 : 3; break;
    case ENPU_OP_BATCHNORM: *lo = 5; *hi = 5; break;
    case ENPU_OP_SQUEEZE: *hi = opset < 13 ? 1 : 2; break;
    case ENPU_OP_UNSQUEEZE: *lo = *hi = opset < 13 ? 1 : 2; break;
    case ENPU_OP_CONCAT: *hi = MAX_NODE_IO; break;
    case ENPU_OP_PAD:
        if (opset >= 11) {
            *lo = 2;
            *hi = 4;
        }
        break;
    case ENPU_OP_DROPOUT: *hi = opset < 12 ? 1 : 3; break;
    case ENPU_OP_SLICE:
        if (opset >= 10) *lo = 3, *hi = 5;
        break;
    case ENPU_OP_SPLIT: *hi = 2; break;
    case ENPU_OP_RESIZE:
        if (opset < 11) *lo = *hi = 2;
        else *hi = 4;
        break;
    case ENPU_OP_CONV_TRANSPOSE: *lo = 2; *hi = 3; break;
    case ENPU_OP_REDUCE_SUM: *hi = opset < 13 ? 1 : 2; break;
    case ENPU_OP_MAX: case ENPU_OP_MIN: *hi = MAX_NODE_IO; break;
    case ENPU_OP_POW: case ENPU_OP_GATHER: case ENPU_OP_EQUAL: case ENPU_OP_EXPAND:
        *lo = *hi = 2;
        break;
    case ENPU_OP_LAYER_NORM: *lo = 2; *hi = 3; break;
    case ENPU_OP_WHERE: case ENPU_OP_RANGE: *lo = *hi = 3; break;
    case ENPU_OP_QUANTIZE_LINEAR: case ENPU_OP_DEQUANTIZE_LINEAR: *lo = 2; *hi = 3; break;
    case ENPU_OP_QLINEAR_CONV: *lo = 8; *hi = 9; break;
    case ENPU_OP_QLINEAR_MATMUL: *lo = *hi = 8; break;
    case ENPU_OP_LSTM: *lo = 3; *hi = 8; break;
    case ENPU_OP_GRU: case ENPU_OP_RNN: *lo = 3; *hi = 6; break;
    case ENPU_OP_LOOP: *lo = 2; *hi = MAX_NODE_IO; break;
    case ENPU_OP_SCAN: *lo = opset < 9 ? 0 : 1; *hi = MAX_NODE_IO; break; /* opset 8: sequence_lens first, optional */
    default: break;
    }
}

/* Records a legacy broadcast of the node (opset < 7) for resolve_legacy. */
static int push_legacy(const nctx *c, legacy_bcast lb) {
    imp *im = c->im;
    if (im->n_legacy == im->cap_legacy) {
        int cap = im->cap_legacy ? 2 * im->cap_legacy : 16;
        legacy_bcast *nl = realloc(im->legacy, (size_t)cap * sizeof *nl);
        if (!nl) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
        im->legacy = nl;
        im->cap_legacy = cap;
    }
    lb.out = enpu_graph_find_tensor(im->g, c->np->output[0]);
    ENPU_ASSERT(lb.out >= 0);
    im->legacy[im->n_legacy++] = lb;
    return 0;
}

/* BatchNormalization and Dropout of opset < 7: is_test = 0 is training mode.
 * An absent is_test is taken as inference, as ONNX's own version converter
 * does when it drops the attribute (6 -> 7). */
static int refuse_training(const nctx *c) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, "is_test", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a);
    if (rc) return rc;
    if (a && a->i == 0)
        return oi_nfail(c, ENPU_E_UNSUPPORTED,
                     "attribute 'is_test' is 0 (training mode, opset %d); only inference is "
                     "supported",
                     c->im->opset);
    return 0;
}

/* Reshape of opset 1-4: the target is the `shape` attribute; it becomes a
 * constant input 1, the form of opset 5 and later. */
static int reshape_attr_to_input(const nctx *c, int *in, int *n_in) {
    imp *im = c->im;
    int64_t v[ENPU_MAX_RANK];
    int n, rc;
    if ((rc = oi_a_ints(c, "shape", ENPU_MAX_RANK, v, &n))) return rc;
    if (n < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'shape' is required (opset %d)", im->opset);
    char name[ENPU_MAX_NAME + 32];
    snprintf(name, sizeof name, "%s:shape", c->np->output[0]);
    for (int k = 2; enpu_graph_find_tensor(im->g, name) >= 0; k++)
        snprintf(name, sizeof name, "%s:shape%d", c->np->output[0], k);
    int64_t dim = n;
    int t = enpu_graph_add_tensor(im->g, name, ENPU_DT_INT64, 1, &dim, im->err);
    if (t < 0) return enpu_err_prefix(im->err, "%s", im->what);
    int64_t *data = malloc(n ? (size_t)n * sizeof *data : 1);
    if (!data) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
    if (n) memcpy(data, v, (size_t)n * sizeof *data);
    enpu_tensor_set_data(&im->g->tensors[t], data);
    in[1] = t;
    *n_in = 2;
    return 0;
}

/* Slice of opset 1-9: starts, ends and axes are attributes. */
static int slice_attrs(const nctx *c, enpu_slice_attr *a) {
    int64_t st[ENPU_MAX_RANK], en[ENPU_MAX_RANK], ax[ENPU_MAX_RANK];
    int ns, ne, na, rc;
    if ((rc = oi_a_ints(c, "starts", ENPU_MAX_RANK, st, &ns)) ||
        (rc = oi_a_ints(c, "ends", ENPU_MAX_RANK, en, &ne)) ||
        (rc = oi_a_ints(c, "axes", ENPU_MAX_RANK, ax, &na)))
        return rc;
    if (ns < 0 || ne < 0) return oi_nfail(c, ENPU_E_INVALID, "attributes 'starts' and 'ends' are required");
    if (ns != ne || (na >= 0 && na != ns))
        return oi_nfail(c, ENPU_E_INVALID, "'starts', 'ends' and 'axes' have %d, %d and %d values", ns,
                     ne, na);
    a->n = ns;
    for (int i = 0; i < ns; i++) {
        a->starts[i] = st[i], a->ends[i] = en[i], a->steps[i] = 1;
        a->axes[i] = na >= 0 ? (int)(ax[i] < -ENPU_MAX_RANK ? -ENPU_MAX_RANK - 1 : ax[i] > ENPU_MAX_RANK ? ENPU_MAX_RANK : ax[i]) : i;
    }
    return 0;
}

static int resize_attrs(const nctx *c, enpu_resize_attr *a) {
    char buf[40];
    int rc;
    int64_t v;
    memset(a, 0, sizeof *a);
    if ((rc = oi_a_string(c, "mode", "nearest", buf, sizeof buf))) return rc;
    if (!strcmp(buf, "nearest")) a->mode = ENPU_RESIZE_NEAREST;
    else if (!strcmp(buf, "linear")) a->mode = ENPU_RESIZE_LINEAR;
    else if (!strcmp(buf, "cubic") && c->im->opset >= 11) a->mode = ENPU_RESIZE_CUBIC;
    else return oi_nfail(c, ENPU_E_INVALID, "attribute 'mode' is '%s'", buf);
    if (c->im->opset < 11) {
        /* Resize-10: x_original = x_resized / scale, nearest rounds down */
        a->ctm = ENPU_CTM_ASYMMETRIC;
        a->nearest = ENPU_NEAREST_FLOOR;
        a->cubic_a = -0.75f;
        return 0;
    }
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if ((rc = oi_a_string(c, "coordinate_transformation_mode", "half_pixel", buf, sizeof buf))) return rc;
    a->ctm = -1;
    for (int i = 0; i < 6; i++)
        if (!strcmp(buf, ctms[i])) a->ctm = i;
    if (a->ctm < 0)
        return oi_nfail(c, ENPU_E_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported",
                     buf);
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    if ((rc = oi_a_string(c, "nearest_mode", "round_prefer_floor", buf, sizeof buf))) return rc;
    a->nearest = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(buf, nms[i])) a->nearest = i;
    if (a->nearest < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'nearest_mode' is '%s'", buf);
    if ((rc = oi_a_float(c, "cubic_coeff_a", -0.75f, &a->cubic_a))) return rc;
    if ((rc = oi_a_int(c, "exclude_outside", 0, 0, 1, &v))) return rc;
    a->exclude_outside = v != 0;
    return oi_a_float(c, "extrapolation_value", 0.0f, &a->extrapolation);
}

static int conv_transpose_attrs(const nctx *c, const int *in, enpu_conv_attr *a) {
    int rc;
    int64_t v, op[4], os[4];
    int nop, nos;
    memset(a, 0, sizeof *a);
    if ((rc = parse_window(c, in, &a->w))) return rc;
    if ((rc = oi_a_int(c, "group", 1, 1, INT_MAX / 2, &v))) return rc;
    a->group = (int)v;
    if ((rc = oi_a_ints(c, "output_padding", 4, op, &nop)) || (rc = oi_a_ints(c, "output_shape", 4, os, &nos)))
        return rc;
    if (nop > 2 || nos > 2)
        return oi_nfail(c, ENPU_E_UNSUPPORTED, "3-D windows are not supported (only 1-D and 2-D)");
    for (int i = 0; i < nop; i++) {
        if (op[i] < 0 || op[i] > 65535)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'output_padding' value %lld", (long long)op[i]);
        a->out_pad[nop == 1 ? 1 : i] = (int)op[i];
    }
    if (nos > 0) {
        a->n_out_shape = nos;
        for (int i = 0; i < nos; i++) {
            if (os[i] < 0 || os[i] > ENPU_MAX_DIM)
                return oi_nfail(c, ENPU_E_INVALID, "attribute 'output_shape' value %lld", (long long)os[i]);
            a->out_shape[i] = os[i];
        }
    }
    return 0;
}

static int reduce_attrs(const nctx *c, enpu_op op, enpu_reduce_attr *a) {
    int rc;
    int64_t v, ax[ENPU_MAX_RANK];
    int n;
    memset(a, 0, sizeof *a);
    if ((rc = oi_a_int(c, "keepdims", 1, 0, 1, &v))) return rc;
    a->keepdims = v != 0;
    if (op == ENPU_OP_REDUCE_SUM && c->im->opset >= 13) {
        if ((rc = oi_a_int(c, "noop_with_empty_axes", 0, 0, 1, &v))) return rc;
        a->noop_with_empty_axes = v != 0;
        return 0; /* axes: input 1, folded later */
    }
    if ((rc = oi_a_ints(c, "axes", ENPU_MAX_RANK, ax, &n))) return rc;
    a->n_axes = n < 0 ? 0 : n;
    for (int i = 0; i < a->n_axes; i++) {
        if (ax[i] < -ENPU_MAX_RANK || ax[i] >= ENPU_MAX_RANK)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'axes' value %lld is outside -%d..%d",
                         (long long)ax[i], ENPU_MAX_RANK, ENPU_MAX_RANK - 1);
        a->axes[i] = (int)ax[i];
    }
    return 0;
}

/* ConstantOfShape's `value`: a one-element tensor (default float32 0). */
static int const_of_shape_attrs(const nctx *c, enpu_misc_attr *a) {
    const Onnx__AttributeProto *at;
    int rc = oi_get_attr(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, &at);
    if (rc) return rc;
    a->to = ENPU_DT_FLOAT32;
    a->value = 0;
    if (!at) return 0;
    if (!at->t) return oi_nfail(c, ENPU_E_INVALID, "attribute 'value' has type TENSOR but no tensor");
    enpu_pb_tensor t;
    if ((rc = enpu_onnx_decode_tensor(at->t, c->im->what, c->name, ENPU_E_INVALID, &t, c->im->err)))
        return rc;
    if (t.numel != 1) {
        free(t.data);
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'value' has %lld elements, expected 1",
                     (long long)t.numel);
    }
    enpu_tensor tmp = {.dtype = t.dtype, .rank = 0, .data = t.data};
    a->to = t.dtype;
    a->value = t.dtype == ENPU_DT_INT64 ? (double)const_i64_at(&tmp, 0) : const_at(&tmp, 0);
    free(t.data);
    return 0;
}

static int map_attrs(const nctx *c, enpu_op op, int *in, int *n_in, enpu_attr *at) {
    imp *im = c->im;
    int opset = im->opset, rc = 0;
    int64_t v = 0;
    memset(at, 0, sizeof *at);
    switch (op) {
    case ENPU_OP_CONV:
        if ((rc = parse_window(c, in, &at->conv.w))) return rc;
        if ((rc = oi_a_int(c, "group", 1, 1, INT_MAX / 2, &v))) return rc;
        at->conv.group = (int)v;
        return 0;
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        if (op == ENPU_OP_AVGPOOL && c->np->n_attribute) {
            const Onnx__AttributeProto *a;
            if ((rc = oi_get_attr(c, "dilations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a)))
                return rc;
            if (a)
                for (size_t i = 0; i < a->n_ints; i++)
                    if (a->ints[i] != 1)
                        return oi_nfail(c, ENPU_E_UNSUPPORTED,
                                     "attribute 'dilations' (opset 19) is not supported");
        }
        if ((rc = parse_window(c, in, &at->pool.w))) return rc;
        if ((rc = oi_a_bool(c, "ceil_mode", &at->pool.ceil_mode))) return rc;
        if (op == ENPU_OP_AVGPOOL && (rc = oi_a_bool(c, "count_include_pad", &at->pool.count_include_pad)))
            return rc;
        /* MaxPool's storage_order only concerns the Indices output, refused. */
        return 0;
    case ENPU_OP_GEMM:
        if (opset < 7) {
            /* broadcast = 0: C has the output's shape, checked once known. */
            if ((rc = oi_a_int(c, "broadcast", 0, 0, 1, &v))) return rc;
            if (!v && *n_in > 2 && in[2] >= 0 &&
                (rc = push_legacy(c, (legacy_bcast){.gemm = true})))
                return rc;
        }
        if ((rc = oi_a_float(c, "alpha", 1.0f, &at->gemm.alpha))) return rc;
        if ((rc = oi_a_float(c, "beta", 1.0f, &at->gemm.beta))) return rc;
        if ((rc = oi_a_bool(c, "transA", &at->gemm.trans_a))) return rc;
        return oi_a_bool(c, "transB", &at->gemm.trans_b);
    case ENPU_OP_RELU:
        at->act.min = 0.0f;
        at->act.max = INFINITY;
        return 0;
    case ENPU_OP_CLIP:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        if (opset < 11) {
            if ((rc = oi_a_float(c, "min", -INFINITY, &at->act.min))) return rc;
            return oi_a_float(c, "max", INFINITY, &at->act.max);
        }
        return 0; /* min/max inputs are folded after the node is added */
    case ENPU_OP_LEAKY_RELU:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        return oi_a_float(c, "alpha", 0.01f, &at->act.alpha);
    case ENPU_OP_HARD_SIGMOID:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        if ((rc = oi_a_float(c, "alpha", 0.2f, &at->act.alpha))) return rc;
        return oi_a_float(c, "beta", 0.5f, &at->act.beta);
    case ENPU_OP_HARD_SWISH: /* y = x * clamp(alpha*x + beta, 0, 1), fixed by ONNX */
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        at->act.alpha = 1.0f / 6.0f;
        at->act.beta = 0.5f;
        return 0;
    case ENPU_OP_PRELU:
    case ENPU_OP_SIGMOID:
    case ENPU_OP_TANH:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        if (op == ENPU_OP_PRELU && opset < 7)
            return push_legacy(c, (legacy_bcast){.prelu = true, .broadcast = true});
        return 0;
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
    case ENPU_OP_POW:
    case ENPU_OP_EQUAL: {
        if (opset >= 7) return 0;
        legacy_bcast lb = {0};
        if ((rc = oi_a_int(c, "broadcast", 0, 0, 1, &v))) return rc;
        lb.broadcast = v != 0;
        const Onnx__AttributeProto *a;
        if ((rc = oi_get_attr(c, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a))) return rc;
        if (a) {
            if ((rc = oi_a_int(c, "axis", 0, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
            lb.has_axis = true;
            lb.axis = (int)v;
        }
        return push_legacy(c, lb);
    }
    case ENPU_OP_BATCHNORM:
        if ((rc = oi_a_float(c, "epsilon", 1e-5f, &at->bn.epsilon))) return rc;
        if (at->bn.epsilon < 0)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'epsilon' is negative (%g)",
                         (double)at->bn.epsilon);
        if ((rc = oi_a_int(c, "training_mode", 0, 0, 1, &v))) return rc;
        if (v) return oi_nfail(c, ENPU_E_UNSUPPORTED, "training_mode=1 is not supported");
        if (opset < 7 && (rc = refuse_training(c))) return rc;
        if (opset < 9) {
            if ((rc = oi_a_int(c, "spatial", 1, 0, 1, &v))) return rc;
            if (!v) return oi_nfail(c, ENPU_E_UNSUPPORTED, "spatial=0 is not supported");
        }
        return 0;
    case ENPU_OP_RESHAPE:
        if (opset < 5) return reshape_attr_to_input(c, in, n_in);
        return oi_a_bool(c, "allowzero", &at->shape.allowzero);
    case ENPU_OP_FLATTEN:
        if ((rc = oi_a_int(c, "axis", 1, -ENPU_MAX_RANK, ENPU_MAX_RANK, &v))) return rc;
        at->shape.axis = (int)v;
        return 0;
    case ENPU_OP_CONCAT: {
        const Onnx__AttributeProto *a;
        if ((rc = oi_get_attr(c, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a))) return rc;
        if (!a && opset >= 4) return oi_nfail(c, ENPU_E_INVALID, "attribute 'axis' is required");
        /* Opset 1-3: the axis defaults to 1. */
        if ((rc = oi_a_int(c, "axis", 1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->shape.axis = (int)v;
        return 0;
    }
    case ENPU_OP_SOFTMAX:
        at->shape.softmax_legacy = opset < 13;
        if ((rc = oi_a_int(c, "axis", opset < 13 ? 1 : -1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v)))
            return rc;
        at->shape.axis = (int)v;
        return 0;
    case ENPU_OP_SQUEEZE:
    case ENPU_OP_UNSQUEEZE: {
        if (opset >= 13) return 0; /* axes input folded after the node is added */
        int n;
        int64_t ax[ENPU_MAX_RANK];
        if ((rc = oi_a_ints(c, "axes", ENPU_MAX_RANK, ax, &n))) return rc;
        if (n < 0 && op == ENPU_OP_UNSQUEEZE)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'axes' is required");
        at->shape.n_axes = n < 0 ? 0 : n;
        for (int i = 0; i < at->shape.n_axes; i++) {
            if (ax[i] < -ENPU_MAX_RANK || ax[i] >= ENPU_MAX_RANK)
                return oi_nfail(c, ENPU_E_INVALID, "attribute 'axes' value %lld is outside -%d..%d",
                             (long long)ax[i], ENPU_MAX_RANK, ENPU_MAX_RANK - 1);
            at->shape.axes[i] = (int)ax[i];
        }
        return 0;
    }
    case ENPU_OP_TRANSPOSE: {
        int64_t p[ENPU_MAX_RANK];
        int n;
        if ((rc = oi_a_ints(c, "perm", ENPU_MAX_RANK, p, &n))) return rc;
        if (n < 0) {
            /* Default: reverse the axes.  Needs the input rank; when it is
             * not known yet n_axes stays 0 (= reverse) for shape inference. */
            const enpu_tensor *t = &im->g->tensors[in[0]];
            n = t->rank >= 0 ? t->rank : 0;
            for (int i = 0; i < n; i++) p[i] = n - 1 - i;
        }
        bool seen[ENPU_MAX_RANK] = {false};
        for (int i = 0; i < n; i++) {
            if (p[i] < 0 || p[i] >= n || seen[p[i]])
                return oi_nfail(c, ENPU_E_INVALID, "attribute 'perm' is not a permutation of 0..%d",
                             n - 1);
            seen[p[i]] = true;
            at->shape.axes[i] = (int)p[i];
        }
        at->shape.n_axes = n;
        return 0;
    }
    case ENPU_OP_PAD: {
        char mode[32];
        if ((rc = oi_a_string(c, "mode", "constant", mode, sizeof mode))) return rc;
        if (strcmp(mode, "constant") == 0) at->pad.mode = ENPU_PADMODE_CONSTANT;
        else if (strcmp(mode, "edge") == 0) at->pad.mode = ENPU_PADMODE_EDGE;
        else if (strcmp(mode, "reflect") == 0) at->pad.mode = ENPU_PADMODE_REFLECT;
        else
            return oi_nfail(c, ENPU_E_UNSUPPORTED,
                         "mode '%s' is not supported (constant, edge and reflect are)", mode);
        if (opset >= 11) return 0; /* pads/constant_value inputs folded later */
        int n;
        const char *pname = opset < 2 ? "paddings" : "pads"; /* renamed in opset 2 */
        if ((rc = oi_a_ints(c, pname, 2 * ENPU_MAX_RANK, at->pad.pads, &n))) return rc;
        if (n < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is required", pname);
        if (n % 2)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' has %d values, expected an even "
                         "count", pname, n);
        at->pad.n_pads = n;
        return oi_a_float(c, "value", 0.0f, &at->pad.value);
    }
    case ENPU_OP_DROPOUT:
        /* ratio and training_mode (opset 12) are folded after the node is
         * added; before, is_test (opset < 7) says training or inference. */
        return opset < 7 ? refuse_training(c) : 0;
    case ENPU_OP_SLICE:
        return opset < 10 ? slice_attrs(c, &at->slice) : 0; /* later: inputs, folded */
    case ENPU_OP_SPLIT:
    case ENPU_OP_GATHER:
        if ((rc = oi_a_int(c, "axis", 0, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->shape.axis = (int)v;
        return 0;
    case ENPU_OP_RESIZE:
        return resize_attrs(c, &at->resize);
    case ENPU_OP_CONV_TRANSPOSE:
        return conv_transpose_attrs(c, in, &at->conv);
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_MAX:
    case ENPU_OP_REDUCE_SUM:
        return reduce_attrs(c, op, &at->reduce);
    case ENPU_OP_LAYER_NORM:
        if ((rc = oi_a_int(c, "axis", -1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->norm.axis = (int)v;
        if ((rc = oi_a_float(c, "epsilon", 1e-5f, &at->norm.epsilon))) return rc;
        if (!(at->norm.epsilon >= 0))
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'epsilon' is negative (%g)",
                         (double)at->norm.epsilon);
        if ((rc = oi_a_int(c, "stash_type", 1, INT64_MIN, INT64_MAX, &v))) return rc;
        if (v != 1)
            return oi_nfail(c, ENPU_E_UNSUPPORTED, "stash_type %lld is not supported (1: float)",
                         (long long)v);
        return 0;
    case ENPU_OP_SHAPE:
        if ((rc = oi_a_int(c, "start", 0, INT64_MIN, INT64_MAX, &at->misc.start))) return rc;
        return oi_a_int(c, "end", INT64_MAX, INT64_MIN, INT64_MAX, &at->misc.end);
    case ENPU_OP_CAST: {
        if ((rc = oi_a_int(c, "to", -1, 0, INT32_MAX, &v))) return rc;
        if (v < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'to' is required");
        enpu_dtype dt = enpu_onnx_dtype(v);
        if (dt == ENPU_DT_UNDEFINED)
            return oi_nfail(c, ENPU_E_UNSUPPORTED, "Cast to %s is not supported",
                         enpu_onnx_dtype_name(v));
        at->misc.to = dt;
        return 0;
    }
    case ENPU_OP_CONSTANT_OF_SHAPE:
        return const_of_shape_attrs(c, &at->misc);
    case ENPU_OP_QUANTIZE_LINEAR:
    case ENPU_OP_DEQUANTIZE_LINEAR:
        if ((rc = oi_a_int(c, "axis", 1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->misc.axis = (int)v;
        return 0;
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN:
        return oi_rnn_attrs(c, op, at);
    case ENPU_OP_GELU: {
        char ap[16];
        if ((rc = oi_a_string(c, "approximate", "none", ap, sizeof ap))) return rc;
        if (strcmp(ap, "none") && strcmp(ap, "tanh"))
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'approximate' is '%s'", ap);
        at->misc.approximate = strcmp(ap, "tanh") == 0;
        return 0;
    }
    default:
        return 0;
    }
}

/* --- graph building ------------------------------------------------------ */

int oi_node_name(const Onnx__NodeProto *np, size_t idx, char *buf, size_t n) {
    if (np->name && np->name[0]) {
        if (strlen(np->name) > ENPU_MAX_NAME) return -1;
        snprintf(buf, n, "%s", np->name);
    } else {
        snprintf(buf, n, "%s_%zu", str_or_empty(np->op_type), idx);
    }
    return 0;
}

bool oi_is_default_domain(const char *d) {
    return !d || !d[0] || strcmp(d, "ai.onnx") == 0;
}

/* True if some node input or graph output is named `name`. */
static bool name_used(const Onnx__GraphProto *gp, const char *name) {
    for (size_t i = 0; i < gp->n_node; i++)
        for (size_t k = 0; k < gp->node[i]->n_input; k++)
            if (gp->node[i]->input[k] && strcmp(gp->node[i]->input[k], name) == 0) return true;
    for (size_t i = 0; i < gp->n_output; i++)
        if (gp->output[i]->name && strcmp(gp->output[i]->name, name) == 0) return true;
    return false;
}

int oi_add_const(imp *im, const char *name, enpu_pb_tensor *t) {
    int idx = enpu_graph_add_tensor(im->g, name, t->dtype, t->rank, t->dims, im->err);
    if (idx < 0) {
        free(t->data);
        return enpu_err_prefix(im->err, "%s", im->what);
    }
    enpu_tensor_set_data(&im->g->tensors[idx], t->data);
    t->data = NULL;
    return 0;
}

static int import_initializers(imp *im) {
    const Onnx__GraphProto *gp = im->gp;
    if (gp->n_sparse_initializer)
        return enpu_fail(im->err, ENPU_E_UNSUPPORTED, "%s: sparse initializers are not supported",
                         im->what);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !tp->name[0])
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: initializer %zu has no name", im->what,
                             i);
        if (strlen(tp->name) > ENPU_MAX_NAME)
            return enpu_fail(im->err, ENPU_E_LIMIT,
                             "%s: initializer %zu: name of %zu bytes is over the limit of %d",
                             im->what, i, strlen(tp->name), ENPU_MAX_NAME);
        if (enpu_graph_find_tensor(im->g, tp->name) >= 0)
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: initializer '%s' is defined twice",
                             im->what, tp->name);
        enpu_pb_tensor t;
        int rc = enpu_onnx_decode_tensor(tp, im->what, tp->name, ENPU_E_INVALID, &t, im->err);
        if (rc) return rc;
        if ((rc = oi_add_const(im, tp->name, &t))) return rc;
    }
    return 0;
}

static int find_bind(const imp *im, const char *name) {
    for (int i = 0; i < im->n_binds; i++)
        if (strcmp(im->binds[i].name, name) == 0) return i;
    return -1;
}

/* "WHAT: binding of input 'NAME' (SOURCE): message" */
static int bfail(const imp *im, int b, enpu_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bfail(const imp *im, int b, enpu_status code, const char *fmt, ...) {
    char msg[ENPU_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const enpu_onnx_bind *bd = &im->binds[b];
    return enpu_fail(im->err, code, "%s: binding of input '%s'%s%s%s: %s", im->what, bd->name,
                     bd->source ? " (" : "", bd->source ? bd->source : "", bd->source ? ")" : "",
                     msg);
}

static void dims_str(int rank, const int64_t *d, char *buf, size_t n) {
    enpu_tensor t = {.rank = rank};
    memcpy(t.dims, d, (size_t)rank * sizeof *d);
    enpu_shape_str(&t, buf, n);
}

/* Graph input vi, bound to binding b: a constant holding a copy of the
 * value, after checking it against the declared type and shape. */
static int bind_input(imp *im, const Onnx__ValueInfoProto *vi, int b) {
    const enpu_buf *v = im->binds[b].value;
    const Onnx__TypeProto *tp = vi->type;
    im->bound[b] = true;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return bfail(im, b, ENPU_E_UNSUPPORTED, "the input is not a tensor");
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    enpu_dtype dt = enpu_onnx_dtype(tt->elem_type);
    if (dt == ENPU_DT_UNDEFINED)
        return bfail(im, b, ENPU_E_UNSUPPORTED, "the input's data type %s (%d) is not supported",
                     enpu_onnx_dtype_name(tt->elem_type), (int)tt->elem_type);
    if (v->dtype != dt)
        return bfail(im, b, ENPU_E_INVALID, "the value is %s, the input %s",
                     enpu_dtype_name(v->dtype), enpu_dtype_name(dt));
    if (v->rank < 0 || v->rank > ENPU_MAX_RANK)
        return bfail(im, b, ENPU_E_LIMIT, "rank %d is outside 0..%d", v->rank, ENPU_MAX_RANK);
    char have[256], want[256];
    dims_str(v->rank, v->dims, have, sizeof have);
    if (tt->shape) {
        bool same = tt->shape->n_dim == (size_t)v->rank;
        for (size_t k = 0; same && k < tt->shape->n_dim; k++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
            /* A symbolic dimension takes the value's size. */
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                same = d->dim_value == v->dims[k];
        }
        if (!same) {
            size_t o = 0;
            want[0] = 0;
            for (size_t k = 0; k < tt->shape->n_dim && o < sizeof want - 24; k++) {
                const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
                int w = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                            ? snprintf(want + o, sizeof want - o, "%s%lld", k ? "x" : "",
                                       (long long)d->dim_value)
                            : snprintf(want + o, sizeof want - o, "%s?", k ? "x" : "");
                if (w > 0) o += (size_t)w;
            }
            if (tt->shape->n_dim == 0) snprintf(want, sizeof want, "scalar");
            return bfail(im, b, ENPU_E_INVALID, "the value has shape %s, the input %s", have,
                         want);
        }
    }
    int64_t numel;
    enpu_err e = {0};
    if (enpu_shape_numel(v->rank, v->dims, &numel, vi->name, &e))
        return bfail(im, b, e.code, "%s", e.msg);
    size_t nbytes = (size_t)numel * enpu_dtype_size(dt);
    void *data = malloc(nbytes ? nbytes : 1);
    if (!data) return bfail(im, b, ENPU_E_NOMEM, "out of memory");
    if (nbytes) memcpy(data, v->data, nbytes);
    int idx = enpu_graph_add_tensor(im->g, vi->name, dt, v->rank, v->dims, im->err);
    if (idx < 0) {
        free(data);
        return enpu_err_prefix(im->err, "%s", im->what);
    }
    enpu_tensor_set_data(&im->g->tensors[idx], data);
    return 0;
}

/* Every binding must have met its graph input. */
static int check_binds(imp *im) {
    for (int b = 0; b < im->n_binds; b++) {
        if (im->bound[b]) continue;
        if (enpu_graph_find_tensor(im->g, im->binds[b].name) >= 0)
            return bfail(im, b, ENPU_E_USAGE,
                         "'%s' is an initializer or a node output, not a graph input",
                         im->binds[b].name);
        char list[256];
        size_t o = 0;
        list[0] = 0;
        for (size_t i = 0; i < im->gp->n_input && o < sizeof list - 8; i++) {
            const char *nm = im->gp->input[i]->name;
            int t = nm ? enpu_graph_find_tensor(im->g, nm) : -1;
            if (t < 0 || (im->g->tensors[t].flags & ENPU_T_CONST && find_bind(im, nm) < 0))
                continue; /* initializers are not inputs to bind */
            int w = snprintf(list + o, sizeof list - o, "%s'%s'", o ? ", " : "", nm);
            if (w > 0) o += (size_t)w;
        }
        return bfail(im, b, ENPU_E_USAGE, "the model has no graph input '%s' (its inputs: %s)",
                     im->binds[b].name, o ? list : "none");
    }
    return 0;
}

static int import_inputs(imp *im) {
    const Onnx__GraphProto *gp = im->gp;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = vi->name;
        if (!name || !name[0])
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: graph input %zu has no name", im->what,
                             i);
        if (strlen(name) > ENPU_MAX_NAME)
            return enpu_fail(im->err, ENPU_E_LIMIT,
                             "%s: graph input %zu: name of %zu bytes is over the limit of %d",
                             im->what, i, strlen(name), ENPU_MAX_NAME);
        int existing = enpu_graph_find_tensor(im->g, name);
        if (existing >= 0) {
            if (im->g->tensors[existing].flags & ENPU_T_CONST) continue; /* has an initializer */
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: graph input '%s' is listed twice",
                             im->what, name);
        }
        const Onnx__TypeProto *tp = vi->type;
        int b = find_bind(im, name);
        if (b >= 0) {
            int rc = bind_input(im, vi, b);
            if (rc) return rc;
            continue;
        }
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
            return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                             "%s: graph input '%s' is not a tensor (sequences, maps, optionals "
                             "and sparse tensors are not supported)",
                             im->what, name);
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        enpu_dtype dt = enpu_onnx_dtype(tt->elem_type);
        if (dt == ENPU_DT_UNDEFINED)
            return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                             "%s: graph input '%s': data type %s (%d) is not supported", im->what,
                             name, enpu_onnx_dtype_name(tt->elem_type), (int)tt->elem_type);
        if (!tt->shape)
            return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                             "%s: graph input '%s' has no shape (unknown rank)", im->what, name);
        if (tt->shape->n_dim > ENPU_MAX_RANK)
            return enpu_fail(im->err, ENPU_E_LIMIT,
                             "%s: graph input '%s': rank %zu is over the limit of %d", im->what,
                             name, tt->shape->n_dim, ENPU_MAX_RANK);
        int64_t dims[ENPU_MAX_RANK];
        const enpu_onnx_input_shape *fix = NULL;
        for (int k = 0; k < im->n_shapes; k++)
            if (strcmp(im->shapes[k].name, name) == 0) {
                fix = &im->shapes[k];
                im->shaped[k] = true;
            }
        if (fix && (size_t)fix->rank != tt->shape->n_dim)
            return enpu_fail(im->err, ENPU_E_USAGE,
                             "%s: --input-shape %s: %d dimensions, the graph input has %zu",
                             im->what, name, fix->rank, tt->shape->n_dim);
        bool unresolved = false;
        char symb[256] = "";
        int n_sym = 0;
        for (size_t k = 0; k < tt->shape->n_dim; k++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
                if (d->dim_value < 0 || d->dim_value > ENPU_MAX_DIM)
                    return enpu_fail(im->err, ENPU_E_LIMIT,
                                     "%s: graph input '%s': dimension %zu is %lld, outside "
                                     "0..%lld",
                                     im->what, name, k, (long long)d->dim_value,
                                     (long long)ENPU_MAX_DIM);
                dims[k] = d->dim_value;
                /* the batch (dimension 0) may be changed: N images */
                if (fix && fix->dims[k] != d->dim_value && k != 0)
                    return enpu_fail(im->err, ENPU_E_USAGE,
                                     "%s: --input-shape %s: dimension %zu is %lld, the model fixes "
                                     "it to %lld",
                                     im->what, name, k, (long long)fix->dims[k],
                                     (long long)d->dim_value);
                if (fix) dims[k] = fix->dims[k];
                continue;
            }
            const char *sym =
                d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                        d->dim_param
                    ? d->dim_param
                    : "?";
            if (fix) {
                dims[k] = fix->dims[k];
                continue;
            }
            dims[k] = 1;
            if (k != 0) {
                /* one problem per input, naming every symbolic dimension */
                size_t o = strlen(symb);
                if (o < sizeof symb - 64)
                    snprintf(symb + o, sizeof symb - o, "%s%zu ('%.40s')", o ? ", " : "", k, sym);
                n_sym++;
                continue;
            }
            fprintf(stderr,
                    "easynpu: warning: %s: graph input '%s': dimension 0 is symbolic ('%s'); "
                    "taking 1 (--input-shape %s=... sets it)\n",
                    im->what, name, sym, name);
        }
        if (n_sym) {
            /* the option to give, the model's own dimensions filled in */
            char hint[512];
            size_t o = 0;
            for (size_t j = 0; j < tt->shape->n_dim && o < sizeof hint - 40; j++) {
                const Onnx__TensorShapeProto__Dimension *dj = tt->shape->dim[j];
                int w = dj->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                            ? snprintf(hint + o, sizeof hint - o, "%s%lld", j ? "x" : "",
                                       (long long)dj->dim_value)
                            : snprintf(hint + o, sizeof hint - o, "%s<%.20s>", j ? "x" : "",
                                       dj->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                                               dj->dim_param
                                           ? dj->dim_param
                                           : "?");
                if (w > 0) o += (size_t)w;
            }
            char msg[ENPU_MAX_NAME + 900];
            snprintf(msg, sizeof msg,
                     "graph input '%s': dimension%s %s %s symbolic; give its static shape with "
                     "--input-shape %s=%s",
                     name, n_sym > 1 ? "s" : "", symb, n_sym > 1 ? "are" : "is", name, hint);
            int rc = oi_add_problem(im, msg);
            if (rc) return rc;
            unresolved = true;
        }
        int idx = enpu_graph_add_tensor(im->g, name, dt, (int)tt->shape->n_dim, dims, im->err);
        if (idx < 0) return enpu_err_prefix(im->err, "%s", im->what);
        int rc = enpu_graph_add_input(im->g, idx, im->err);
        if (rc) return enpu_err_prefix(im->err, "%s", im->what);
        if (unresolved && (rc = oi_set_poison(im, idx))) return rc;
    }
    for (int k = 0; k < im->n_shapes; k++)
        if (!im->shaped[k])
            return enpu_fail(im->err, ENPU_E_USAGE,
                             "%s: --input-shape %s: the model has no graph input '%s'", im->what,
                             im->shapes[k].name, im->shapes[k].name);
    return 0;
}

/* Constant node -> constant tensor. */
int oi_import_constant(imp *im, const nctx *c) {
    const Onnx__NodeProto *np = c->np;
    if (np->n_input != 0 || np->n_output != 1 || !np->output[0] || !np->output[0][0])
        return oi_nfail(c, ENPU_E_INVALID, "expected no inputs and one named output");
    const char *out = np->output[0];
    if (enpu_graph_find_tensor(im->g, out) >= 0)
        return oi_nfail(c, ENPU_E_INVALID, "output '%s' is already defined", out);
    if (np->n_attribute != 1 || !np->attribute[0]->name)
        return oi_nfail(c, ENPU_E_INVALID, "expected exactly one value attribute");
    const Onnx__AttributeProto *a = np->attribute[0];
    const char *an = a->name;
    attr_type t = oi_attr_type_of(a);
    enpu_pb_tensor pt;
    memset(&pt, 0, sizeof pt);
    int rc;
    if (strcmp(an, "value") == 0) {
        if (t != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'value' has type %s, expected TENSOR",
                         oi_attr_type_name(t));
        if ((rc = enpu_onnx_decode_tensor(a->t, im->what, out, ENPU_E_INVALID, &pt, im->err)))
            return rc;
    } else if (strcmp(an, "value_float") == 0 || strcmp(an, "value_int") == 0) {
        bool is_f = an[6] == 'f';
        attr_type want = is_f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
                              : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        if (t != want)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' has type %s, expected %s", an,
                         oi_attr_type_name(t), oi_attr_type_name(want));
        pt.dtype = is_f ? ENPU_DT_FLOAT32 : ENPU_DT_INT64;
        pt.rank = 0;
        pt.data = malloc(8);
        if (!pt.data) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
        if (is_f) *(float *)pt.data = a->f;
        else *(int64_t *)pt.data = a->i;
    } else if (strcmp(an, "value_floats") == 0 || strcmp(an, "value_ints") == 0) {
        bool is_f = an[6] == 'f';
        attr_type want = is_f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
                              : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        /* An empty list has no type discriminator to infer in IR v1 models. */
        if (t != want && !(a->has_type == 0 && t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED))
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' has type %s, expected %s", an,
                         oi_attr_type_name(t), oi_attr_type_name(want));
        size_t cnt = is_f ? a->n_floats : a->n_ints;
        if (cnt > (size_t)ENPU_MAX_ELEMS)
            return oi_nfail(c, ENPU_E_LIMIT, "attribute '%s' has too many values", an);
        pt.dtype = is_f ? ENPU_DT_FLOAT32 : ENPU_DT_INT64;
        pt.rank = 1;
        pt.dims[0] = (int64_t)cnt;
        size_t nbytes = cnt * (is_f ? sizeof(float) : sizeof(int64_t));
        pt.data = malloc(nbytes ? nbytes : 1);
        if (!pt.data) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
        if (nbytes) memcpy(pt.data, is_f ? (void *)a->floats : (void *)a->ints, nbytes);
    } else {
        return oi_nfail(c, ENPU_E_UNSUPPORTED, "attribute '%s' is not supported (value, value_float, "
                     "value_floats, value_int, value_ints are)", an);
    }
    return oi_add_const(im, out, &pt);
}

/* The first opset of the default domain that has the op. */
int oi_op_since(enpu_op op) {
    switch (op) {
    case ENPU_OP_HARD_SWISH: return 14;
    case ENPU_OP_GELU: return 20;
    case ENPU_OP_LAYER_NORM: return 17;
    case ENPU_OP_RANGE: return 11;
    case ENPU_OP_RESIZE: case ENPU_OP_QUANTIZE_LINEAR: case ENPU_OP_DEQUANTIZE_LINEAR:
    case ENPU_OP_QLINEAR_CONV: case ENPU_OP_QLINEAR_MATMUL:
        return 10;
    case ENPU_OP_CONSTANT_OF_SHAPE: case ENPU_OP_WHERE: case ENPU_OP_ERF: return 9;
    case ENPU_OP_EXPAND: return 8;
    default: return 1;
    }
}

/* Ops whose every output is a tensor of the graph. */
static bool multi_out(enpu_op op) {
    return op == ENPU_OP_LSTM || op == ENPU_OP_GRU || op == ENPU_OP_RNN || oi_ctl_is(op);
}

/* Pass A for one non-Constant node: checks its op and declares its outputs. */
int oi_declare_outputs(imp *im, const nctx *c, enpu_op op) {
    const Onnx__NodeProto *np = c->np;
    size_t n_out = np->n_output;
    /* the recurrent ops may leave Y out (only the final states used) */
    bool rnn = op == ENPU_OP_LSTM || op == ENPU_OP_GRU || op == ENPU_OP_RNN;
    if (op != ENPU_OP_NONE && (n_out == 0 || ((!np->output[0] || !np->output[0][0]) && !rnn)))
        return oi_nfail(c, ENPU_E_INVALID, "output 0 is missing");
    /* Only output 0 becomes a tensor: the optional extra outputs of Dropout,
     * MaxPool and BatchNormalization are refused or dropped here. */
    switch (op) {
    case ENPU_OP_DROPOUT:
        if (n_out > 2) return oi_nfail(c, ENPU_E_INVALID, "has %zu outputs, expected 1 or 2", n_out);
        if (n_out == 2 && np->output[1] && np->output[1][0] && name_used(im->gp, np->output[1]))
            return oi_nfail(c, ENPU_E_UNSUPPORTED,
                         "output 'mask' ('%s') is used; only inference Dropout is supported",
                         np->output[1]);
        break;
    case ENPU_OP_MAXPOOL:
        if (n_out > 2) return oi_nfail(c, ENPU_E_INVALID, "has %zu outputs, expected 1 or 2", n_out);
        if (n_out == 2 && np->output[1] && np->output[1][0])
            return oi_nfail(c, ENPU_E_UNSUPPORTED, "output 'Indices' is not supported");
        break;
    case ENPU_OP_BATCHNORM:
        if (n_out > 5) return oi_nfail(c, ENPU_E_INVALID, "has %zu outputs, expected 1 to 5", n_out);
        for (size_t i = 1; i < n_out; i++)
            if (np->output[i] && np->output[i][0])
                return oi_nfail(c, ENPU_E_UNSUPPORTED,
                             "has %zu outputs; only inference BatchNormalization (1 output) is "
                             "supported",
                             n_out);
        break;
    case ENPU_OP_LAYER_NORM:
        if (n_out > 3) return oi_nfail(c, ENPU_E_INVALID, "has %zu outputs, expected 1 to 3", n_out);
        break;
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN:
        if (n_out > (op == ENPU_OP_LSTM ? 3u : 2u))
            return oi_nfail(c, ENPU_E_INVALID, "has %zu outputs, expected at most %d", n_out,
                            op == ENPU_OP_LSTM ? 3 : 2);
        break;
    case ENPU_OP_SPLIT:
    case ENPU_OP_IF:
    case ENPU_OP_LOOP:
    case ENPU_OP_SCAN:
    case ENPU_OP_NONE: /* an unknown operator: its outputs exist, unresolved */
        break;
    default:
        if (n_out > 1) return oi_nfail(c, ENPU_E_INVALID, "has %zu outputs, expected 1", n_out);
        break;
    }
    bool all = op == ENPU_OP_SPLIT || op == ENPU_OP_LAYER_NORM || op == ENPU_OP_NONE || multi_out(op);
    for (size_t i = 0; i < (all ? n_out : 1); i++) {
        const char *out = np->output[i];
        if (!out || !out[0]) continue;
        if (strlen(out) > ENPU_MAX_NAME)
            return oi_nfail(c, ENPU_E_LIMIT, "output name of %zu bytes is over the limit of %d",
                         strlen(out), ENPU_MAX_NAME);
        if (enpu_graph_find_tensor(im->g, out) >= 0)
            return oi_nfail(c, ENPU_E_INVALID,
                         "output '%s' is already defined (by a graph input, an initializer or "
                         "another node)",
                         out);
        int t = enpu_graph_add_tensor(im->g, out, ENPU_DT_UNDEFINED, -1, NULL, im->err);
        if (t < 0) return enpu_err_prefix(im->err, "%s", im->what);
        if (op == ENPU_OP_NONE && oi_set_poison(im, t)) return ENPU_E_NOMEM;
    }
    return 0;
}

/* A fresh tensor "<base>:<suffix>" (numbered when taken). */
int oi_new_tensor(imp *im, const char *base, const char *suffix) {
    char name[ENPU_MAX_NAME + 48];
    snprintf(name, sizeof name, "%s:%s", base, suffix);
    for (int k = 2; enpu_graph_find_tensor(im->g, name) >= 0; k++)
        snprintf(name, sizeof name, "%s:%s%d", base, suffix, k);
    int t = enpu_graph_add_tensor(im->g, name, ENPU_DT_UNDEFINED, -1, NULL, im->err);
    return t < 0 ? enpu_err_prefix(im->err, "%s", im->what) : t;
}

/* A node named "<node>/<suffix>" of op with attributes at. */
int oi_new_node(imp *im, const char *node, const char *suffix, enpu_op op, int n_in,
                    const int *in, int out, const enpu_attr *at) {
    char name[ENPU_MAX_NAME + 48];
    snprintf(name, sizeof name, "%s/%s", node, suffix);
    int k = enpu_graph_add_node(im->g, name, op, n_in, in, 1, &out, im->err);
    if (k < 0) return enpu_err_prefix(im->err, "%s", im->what);
    if (at) im->g->nodes[k].attr = *at;
    return k;
}

/* QLinearConv / QLinearMatMul as the float graph they mean: each quantized
 * input dequantized (DequantizeLinear; the weights' fold at import into
 * float constants that keep their int8 parameters), the float Conv / MatMul
 * (bias dequantized at x_scale * w_scale), the output quantized
 * (QuantizeLinear).  The Q/DQ pairs between such ops then give every
 * tensor the model's own parameters (resolve_qdq). */
static int expand_qlinear(const nctx *c, enpu_op op, const int *in, int n_in) {
    imp *im = c->im;
    const char *out_name = c->np->output[0];
    int y = enpu_graph_find_tensor(im->g, out_name);
    ENPU_ASSERT(y >= 0);
    bool conv = op == ENPU_OP_QLINEAR_CONV;
    const int b = 3; /* w (conv) or b (matmul) */
    enpu_attr dq = {0}, cat = {0};
    int rc, win[3];
    if (conv) {
        int tmp[MAX_NODE_IO];
        memcpy(tmp, in, (size_t)n_in * sizeof *in);
        tmp[1] = in[b];
        if ((rc = parse_window(c, tmp, &cat.conv.w))) return rc;
        int64_t v;
        if ((rc = oi_a_int(c, "group", 1, 1, INT_MAX / 2, &v))) return rc;
        cat.conv.group = (int)v;
    }
    int tx = oi_new_tensor(im, out_name, "x_float");
    int tw = tx < 0 ? tx : oi_new_tensor(im, out_name, conv ? "w_float" : "b_float");
    int ty = tw < 0 ? tw : oi_new_tensor(im, out_name, "y_float");
    if (ty < 0) return ty;
    dq.misc.axis = 1;
    win[0] = in[0], win[1] = in[1], win[2] = in[2];
    if ((rc = oi_new_node(im, c->name, "dequantize_x", ENPU_OP_DEQUANTIZE_LINEAR, 3, win, tx, &dq)) < 0)
        return rc;
    dq.misc.axis = conv ? 0 : -1; /* per output channel: W's axis 0, B's last axis */
    win[0] = in[b], win[1] = in[b + 1], win[2] = in[b + 2];
    if ((rc = oi_new_node(im, c->name, conv ? "dequantize_w" : "dequantize_b",
                       ENPU_OP_DEQUANTIZE_LINEAR, 3, win, tw, &dq)) < 0)
        return rc;
    int ins[3] = {tx, tw, -1}, n = 2;
    if (conv && n_in > 8 && in[8] >= 0) {
        int tbs = oi_new_tensor(im, out_name, "bias_scale");
        int tb = tbs < 0 ? tbs : oi_new_tensor(im, out_name, "bias_float");
        if (tb < 0) return tb;
        int m[2] = {in[1], in[4]};
        if ((rc = oi_new_node(im, c->name, "bias_scale", ENPU_OP_MUL, 2, m, tbs, NULL)) < 0) return rc;
        dq.misc.axis = 0;
        int bi[2] = {in[8], tbs};
        if ((rc = oi_new_node(im, c->name, "dequantize_bias", ENPU_OP_DEQUANTIZE_LINEAR, 2, bi, tb, &dq)) < 0)
            return rc;
        ins[2] = tb, n = 3;
    }
    if ((rc = oi_new_node(im, c->name, conv ? "conv" : "matmul", conv ? ENPU_OP_CONV : ENPU_OP_MATMUL,
                       n, ins, ty, &cat)) < 0)
        return rc;
    dq.misc.axis = 1;
    int qi[3] = {ty, in[6], in[7]};
    int k = enpu_graph_add_node(im->g, c->name, ENPU_OP_QUANTIZE_LINEAR, 3, qi, 1, &y, im->err);
    if (k < 0) return enpu_err_prefix(im->err, "%s", im->what);
    im->g->nodes[k].attr = dq;
    return 0;
}

/* Split of opsets 2-12: the `split` attribute becomes a constant input 1
 * (the form of opset 13); without it the parts are equal. */
static int split_attr_to_input(const nctx *c, int *in, int *n_in) {
    imp *im = c->im;
    int64_t v[MAX_NODE_IO];
    int n, rc;
    if ((rc = oi_a_ints(c, "split", MAX_NODE_IO, v, &n))) return rc;
    if (n < 0) return 0;
    int t = oi_new_tensor(im, c->np->output[0], "split");
    if (t < 0) return t;
    int64_t dim = n;
    enpu_tensor *tt = &im->g->tensors[t];
    tt->dtype = ENPU_DT_INT64;
    tt->rank = 1;
    tt->dims[0] = dim;
    int64_t *data = malloc(n ? (size_t)n * sizeof *data : 1);
    if (!data) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
    if (n) memcpy(data, v, (size_t)n * sizeof *data);
    enpu_tensor_set_data(tt, data);
    in[1] = t;
    *n_in = 2;
    return 0;
}

int oi_import_node(imp *im, const nctx *c, enpu_op op) {
    const Onnx__NodeProto *np = c->np;
    int lo, hi;
    arity(op, im->opset, &lo, &hi);
    if ((int64_t)np->n_input < lo || (int64_t)np->n_input > hi)
        return oi_nfail(c, ENPU_E_INVALID, "has %zu inputs, expected %d..%d (opset %d)",
                     np->n_input, lo, hi, im->opset);
    int in[MAX_NODE_IO];
    int n_in = (int)np->n_input;
    for (int i = 0; i < n_in; i++) {
        const char *name = np->input[i];
        if (!name || !name[0]) {
            if (i < lo) return oi_nfail(c, ENPU_E_INVALID, "required input %d is empty", i);
            in[i] = -1;
            continue;
        }
        in[i] = enpu_graph_find_tensor(im->g, name);
        if (in[i] < 0)
            return oi_nfail(c, ENPU_E_INVALID,
                         "input '%s' is not a graph input, initializer or node output", name);
    }
    /* Trailing omitted optional inputs carry no information. */
    while (n_in > lo && in[n_in - 1] < 0) n_in--;
    if (op == ENPU_OP_QLINEAR_CONV || op == ENPU_OP_QLINEAR_MATMUL) return expand_qlinear(c, op, in, n_in);
    if (oi_ctl_is(op)) return oi_ctl_placeholder(im, c, op, in, n_in);
    enpu_attr at;
    int rc = map_attrs(c, op, in, &n_in, &at);
    if (rc) return rc;
    if (op == ENPU_OP_SPLIT && n_in < 2 && (rc = split_attr_to_input(c, in, &n_in))) return rc;
    int outs[MAX_NODE_IO], n_out = 1;
    bool all = op == ENPU_OP_SPLIT || op == ENPU_OP_LAYER_NORM || multi_out(op);
    if (all) {
        n_out = (int)np->n_output;
        for (int i = 0; i < n_out; i++)
            outs[i] = np->output[i] && np->output[i][0] ? enpu_graph_find_tensor(im->g, np->output[i]) : -1;
        /* a recurrent op without Y: a tensor of its own, which nothing reads */
        if (outs[0] < 0 && op != ENPU_OP_SPLIT && (outs[0] = oi_new_tensor(im, c->name, "Y")) < 0)
            return outs[0];
    } else {
        outs[0] = enpu_graph_find_tensor(im->g, np->output[0]);
    }
    ENPU_ASSERT(outs[0] >= 0 || op == ENPU_OP_SPLIT);
    int ni = enpu_graph_add_node(im->g, c->name, op, n_in, in, n_out, outs, im->err);
    if (ni < 0) return enpu_err_prefix(im->err, "%s", im->what);
    im->g->nodes[ni].attr = at;
    return oi_fold_node(im->g, ni, im->what, false, im->err);
}

static int import_nodes(imp *im) {
    const Onnx__GraphProto *gp = im->gp;
    char name[ENPU_MAX_NAME + 32];
    /* Pass A: ops, Constant nodes, output tensors. */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (oi_node_name(np, i, name, sizeof name))
            return enpu_fail(im->err, ENPU_E_LIMIT,
                             "%s: node %zu: name of %zu bytes is over the limit of %d", im->what,
                             i, strlen(np->name), ENPU_MAX_NAME);
        nctx c = {im, np, name, str_or_empty(np->op_type)};
        if (!np->op_type || !np->op_type[0]) return oi_nfail(&c, ENPU_E_INVALID, "no op_type");
        if (np->n_input > MAX_NODE_IO || np->n_output > MAX_NODE_IO)
            return oi_nfail(&c, ENPU_E_LIMIT, "%zu inputs and %zu outputs, over the limit of %d",
                         np->n_input, np->n_output, MAX_NODE_IO);
        int rc;
        if (strcmp(np->op_type, "Constant") == 0) {
            rc = oi_import_constant(im, &c);
        } else {
            enpu_op op = oi_is_default_domain(np->domain) ? enpu_op_from_onnx(np->op_type) : ENPU_OP_NONE;
            char msg[ENPU_MAX_NAME + 256];
            msg[0] = 0;
            if (!oi_is_default_domain(np->domain))
                snprintf(msg, sizeof msg, "node '%s' (op '%s'): operator domain '%s' is not supported",
                         name, np->op_type, np->domain);
            else if (op == ENPU_OP_NONE)
                snprintf(msg, sizeof msg, "node '%s' (op '%s'): unsupported operator", name,
                         np->op_type);
            else if (im->opset < oi_op_since(op))
                snprintf(msg, sizeof msg,
                         "node '%s' (op '%s'): the operator does not exist in opset %d (it was "
                         "added in opset %d)",
                         name, np->op_type, im->opset, oi_op_since(op));
            if (msg[0]) {
                /* reported with every other problem; its outputs stay unknown */
                if ((rc = oi_add_problem(im, msg))) return rc;
                op = ENPU_OP_NONE;
            }
            rc = oi_declare_outputs(im, &c, op);
        }
        if (rc) return rc;
    }
    /* Pass B: nodes with attributes; an unsupported form of a known operator
     * is a problem, and the node is left out (its outputs unresolved). */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (strcmp(np->op_type, "Constant") == 0) continue;
        enpu_op op = oi_is_default_domain(np->domain) ? enpu_op_from_onnx(np->op_type) : ENPU_OP_NONE;
        if (op == ENPU_OP_NONE || im->opset < oi_op_since(op)) continue; /* already a problem */
        oi_node_name(np, i, name, sizeof name);
        nctx c = {im, np, name, np->op_type};
        enpu_err e = {0};
        enpu_err *saved = im->err;
        im->err = &e;
        int rc = oi_import_node(im, &c, op);
        im->err = saved;
        bool skipped;
        if ((rc = oi_as_problem(im, rc, &e, &skipped))) return rc;
        if (!skipped) continue;
        for (size_t k = 0; k < np->n_output; k++) {
            int t = np->output[k] ? enpu_graph_find_tensor(im->g, np->output[k]) : -1;
            if (t >= 0 && im->g->tensors[t].producer < 0 && (rc = oi_set_poison(im, t))) return rc;
        }
    }
    return 0;
}

static int import_outputs(imp *im) {
    const Onnx__GraphProto *gp = im->gp;
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i]->name;
        if (!name || !name[0])
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: graph output %zu has no name",
                             im->what, i);
        int t = enpu_graph_find_tensor(im->g, name);
        if (t < 0)
            return enpu_fail(im->err, ENPU_E_INVALID,
                             "%s: graph output '%s' is not produced by any node, input or "
                             "initializer",
                             im->what, name);
        if (enpu_graph_add_output(im->g, t, im->err))
            return enpu_err_prefix(im->err, "%s", im->what);
    }
    if (gp->n_output == 0)
        return enpu_fail(im->err, ENPU_E_INVALID, "%s: graph has no outputs", im->what);
    return 0;
}

/* Layout hints for graph inputs: straight into a Conv means NCHW; into a
 * Transpose(0,3,1,2) means the model takes NHWC and converts. */
static void layout_hints(enpu_graph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->n_in < 1 || n->in[0] < 0) continue;
        enpu_tensor *t = &g->tensors[n->in[0]];
        if (!(t->flags & ENPU_T_INPUT)) continue;
        if (n->op == ENPU_OP_CONV) t->layout = ENPU_LAYOUT_NCHW;
        const enpu_shape_attr *s = &n->attr.shape;
        if (n->op == ENPU_OP_TRANSPOSE && s->n_axes == 4 && s->axes[0] == 0 && s->axes[1] == 3 &&
            s->axes[2] == 1 && s->axes[3] == 2)
            t->layout = ENPU_LAYOUT_NHWC;
    }
}

static int find_opset(imp *im, const Onnx__ModelProto *m) {
    int64_t v = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (oi_is_default_domain(o->domain) && o->version > v) v = o->version;
    }
    if (v < 0)
        return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                         "%s: the model imports no opset of the default ONNX domain", im->what);
    if (v < OPSET_MIN || v > OPSET_MAX)
        return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                         "%s: opset %lld of the default domain is not supported (%d to %d are)",
                         im->what, (long long)v, OPSET_MIN, OPSET_MAX);
    im->opset = (int)v;
    return 0;
}

/* "WHAT: node 'N' (op 'OP', opset K): message" for the legacy rules. */
static int lfail(const imp *im, const enpu_node *n, enpu_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int lfail(const imp *im, const enpu_node *n, enpu_status code, const char *fmt, ...) {
    char msg[ENPU_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return enpu_fail(im->err, code, "%s: node '%s' (op '%s', opset %d): %s", im->what, n->name,
                     enpu_op_name(n->op), im->opset, msg);
}

/* Turns the legacy broadcast of node ni (opset < 7: B broadcast to A, its
 * dims starting at `axis` of A's) into numpy broadcasting, which aligns
 * trailing dims: B gets as many trailing 1s as A has dims after B's.  A
 * constant B is replaced by a reshaped copy; any other B goes through an
 * Unsqueeze node (appended: *added tells the caller to sort again).  The
 * shapes of both inputs are known here (the nodes before ni were inferred). */
static int resolve_legacy(imp *im, int ni, const legacy_bcast *lb, bool *added) {
    enpu_graph *g = im->g;
    const enpu_node *n = &g->nodes[ni];
    const enpu_tensor *a = enpu_node_input(g, n, 0), *b = enpu_node_input(g, n, 1);
    if (lb->gemm || !a || !b || a->rank < 0 || b->rank < 0) return 0; /* inference says */
    char as[128], bs[128];
    enpu_shape_str(a, as, sizeof as);
    enpu_shape_str(b, bs, sizeof bs);
    int axis;
    if (lb->prelu) {
        /* A slope of C values is per channel (as the exporters of that time
         * meant it); otherwise it broadcasts as from opset 7 on. */
        if (!(b->rank == 1 && a->rank > 2 && b->dims[0] == a->dims[1])) return 0;
        axis = 1;
    } else if (!lb->broadcast) {
        bool same = a->rank == b->rank;
        for (int i = 0; same && i < a->rank; i++) same = a->dims[i] == b->dims[i];
        if (!same)
            return lfail(im, n, ENPU_E_INVALID,
                         "broadcast is 0 but the inputs have shapes %s and %s", as, bs);
        return 0;
    } else {
        if (b->rank > a->rank)
            return lfail(im, n, ENPU_E_INVALID,
                         "input B (%s) has more dimensions than A (%s); the legacy broadcast "
                         "only broadcasts B to A", bs, as);
        axis = lb->has_axis ? (lb->axis < 0 ? lb->axis + a->rank : lb->axis) : a->rank - b->rank;
        if (axis < 0 || axis > a->rank - b->rank)
            return lfail(im, n, ENPU_E_INVALID,
                         "attribute 'axis' is %d; for inputs %s and %s it must be in 0..%d",
                         lb->axis, as, bs, a->rank - b->rank);
    }
    for (int i = 0; i < b->rank; i++)
        if (b->dims[i] != 1 && b->dims[i] != a->dims[axis + i])
            return lfail(im, n, ENPU_E_INVALID,
                         "input B (%s) does not broadcast to A (%s) from axis %d", bs, as, axis);
    int trail = a->rank - axis - b->rank;
    if (trail == 0) return 0;
    /* B with `trail` trailing 1s. */
    int bt = n->in[1], rank = b->rank + trail;
    int64_t dims[ENPU_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = i < b->rank ? b->dims[i] : 1;
    char name[ENPU_MAX_NAME + 32];
    snprintf(name, sizeof name, "%s:bcast", g->tensors[bt].name);
    for (int k = 2; enpu_graph_find_tensor(g, name) >= 0; k++)
        snprintf(name, sizeof name, "%s:bcast%d", g->tensors[bt].name, k);
    enpu_dtype dt = g->tensors[bt].dtype;
    bool constant = oi_is_const(g, bt);
    int nt = enpu_graph_add_tensor(g, name, dt, constant ? rank : -1, dims, im->err);
    if (nt < 0) return enpu_err_prefix(im->err, "%s", im->what);
    if (constant) {
        size_t nbytes = enpu_tensor_nbytes(&g->tensors[bt]);
        void *data = malloc(nbytes ? nbytes : 1);
        if (!data) return lfail(im, &g->nodes[ni], ENPU_E_NOMEM, "out of memory");
        if (nbytes) memcpy(data, g->tensors[bt].data, nbytes);
        enpu_tensor_set_data(&g->tensors[nt], data);
    } else {
        int un = enpu_graph_add_node(g, name, ENPU_OP_UNSQUEEZE, 1, &bt, 1, &nt, im->err);
        if (un < 0) return enpu_err_prefix(im->err, "%s", im->what);
        enpu_shape_attr *sa = &g->nodes[un].attr.shape;
        sa->n_axes = trail;
        for (int i = 0; i < trail; i++) sa->axes[i] = b->rank + i;
        if (enpu_infer_node(g, un, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
        *added = true;
    }
    g->nodes[ni].in[1] = nt;
    return 0;
}

/* Infers node i, resolving its legacy broadcast (lb, may be NULL) first and
 * checking Gemm's after. */
static int infer_node_legacy(imp *im, int i, const legacy_bcast *lb, bool *added) {
    enpu_graph *g = im->g;
    int rc = lb ? resolve_legacy(im, i, lb, added) : 0;
    if (rc) return rc;
    if (enpu_infer_node(g, i, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
    const enpu_node *n = &g->nodes[i];
    const enpu_tensor *cc = enpu_node_input(g, n, 2), *y = enpu_node_output(g, n, 0);
    if (!lb || !lb->gemm || !cc || !y) return 0;
    bool same = cc->rank == y->rank;
    for (int k = 0; same && k < y->rank; k++) same = cc->dims[k] == y->dims[k];
    char cs[128], ys[128];
    if (!same)
        return lfail(im, n, ENPU_E_INVALID, "broadcast is 0 but C has shape %s, not the output's %s",
                     enpu_shape_str(cc, cs, sizeof cs), enpu_shape_str(y, ys, sizeof ys));
    return 0;
}

/* Shape inference in topological order, resolving the legacy broadcasts
 * just before their nodes. */
/* Split (node i, its parameters checked) as one Slice per output: node i
 * becomes the first, the others are appended and inferred at once (*added:
 * the graph is sorted again at the end). */
static int expand_split(imp *im, int i, bool *added) {
    enpu_graph *g = im->g;
    enpu_node *n = &g->nodes[i];
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    char nm[ENPU_MAX_NAME]; /* a node name fits ENPU_MAX_NAME */
    snprintf(nm, sizeof nm, "%s", n->name);
    if (!x || x->rank < 0) return lfail(im, n, ENPU_E_INVALID, "input shape unknown");
    int axis = n->attr.shape.axis;
    if (axis < -x->rank || axis >= x->rank)
        return lfail(im, n, ENPU_E_INVALID, "axis %d is out of range for rank %d", axis, x->rank);
    if (axis < 0) axis += x->rank;
    int m = n->n_out;
    int64_t sizes[MAX_NODE_IO], dim = x->dims[axis], sum = 0;
    const enpu_tensor *st = enpu_node_input(g, n, 1);
    if (st) {
        if (st->rank != 1 || st->dims[0] != m ||
            (st->dtype != ENPU_DT_INT64 && st->dtype != ENPU_DT_INT32))
            return lfail(im, n, ENPU_E_INVALID, "input 'split' must be %d int64 values", m);
        for (int k = 0; k < m; k++) {
            sizes[k] = const_i64_at(st, k);
            if (sizes[k] < 0) return lfail(im, n, ENPU_E_INVALID, "split size %lld", (long long)sizes[k]);
            sum += sizes[k];
        }
        if (sum != dim)
            return lfail(im, n, ENPU_E_INVALID, "split sizes add up to %lld, the axis has %lld",
                         (long long)sum, (long long)dim);
    } else {
        if (dim % m)
            return lfail(im, n, ENPU_E_INVALID, "%lld elements do not split into %d equal parts",
                         (long long)dim, m);
        for (int k = 0; k < m; k++) sizes[k] = dim / m;
    }
    int xin = n->in[0], outs[MAX_NODE_IO];
    memcpy(outs, n->out, (size_t)m * sizeof *outs);
    enpu_attr a;
    memset(&a, 0, sizeof a);
    a.slice.n = 1;
    a.slice.axes[0] = axis;
    a.slice.steps[0] = 1;
    int64_t off = 0;
    for (int k = 0; k < m; k++) {
        a.slice.starts[0] = off;
        a.slice.ends[0] = off + sizes[k];
        off += sizes[k];
        if (k == 0) {
            n = &g->nodes[i];
            n->op = ENPU_OP_SLICE;
            n->n_in = 1;
            n->n_out = 1;
            n->attr = a;
            for (int j = 1; j < m; j++)
                if (outs[j] >= 0) g->tensors[outs[j]].producer = -1;
            if (outs[0] < 0) n->dead = true; /* an unused first part */
            continue;
        }
        if (outs[k] < 0) continue;
        char sn[ENPU_MAX_NAME + 80];
        snprintf(sn, sizeof sn, "%s/split_%d", nm, k);
        int ni = enpu_graph_add_node(g, sn, ENPU_OP_SLICE, 1, &xin, 1, &outs[k], im->err);
        if (ni < 0) return enpu_err_prefix(im->err, "%s", im->what);
        g->nodes[ni].attr = a;
        if (enpu_infer_node(g, ni, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
        bool folded;
        int rc = enpu_onnx_fold_node(g, ni, &folded, im->err);
        if (rc) return enpu_err_prefix(im->err, "%s", im->what);
        *added = true;
    }
    return 0;
}

int oi_poison_outputs(imp *im, int i) {
    const enpu_node *n = &im->g->nodes[i];
    for (int k = 0; k < n->n_out; k++) {
        int rc = oi_set_poison(im, n->out[k]);
        if (rc) return rc;
    }
    return 0;
}

/* Node i: its parameter inputs folded (now that the nodes before it are
 * folded, they must be constants), Split expanded, its shapes inferred
 * (legacy broadcast resolved first), and folded when it can be computed
 * now. */
int oi_infer_one(imp *im, int i, const legacy_bcast *lb, bool *added) {
    int rc = oi_fold_node(im->g, i, im->what, true, im->err);
    if (!rc && im->g->nodes[i].op == ENPU_OP_SPLIT) rc = expand_split(im, i, added);
    if (rc || im->g->nodes[i].dead) return rc;
    if ((rc = infer_node_legacy(im, i, lb, added))) return rc;
    bool folded;
    rc = enpu_onnx_fold_node(im->g, i, &folded, im->err);
    return rc ? enpu_err_prefix(im->err, "%s", im->what) : 0;
}

/* Shape inference and folding in topological order.  A node whose input
 * is unresolved is skipped (its outputs unresolved too); an unsupported form
 * or an input that must be a constant and is not is a problem. */
static int infer_shapes(imp *im) {
    enpu_graph *g = im->g;
    bool added = false;
    int n_nodes = g->n_nodes; /* nodes appended on the way are inferred when added */
    /* The legacy record of each output tensor, found in constant time: a
     * model may have as many legacy nodes as nodes. */
    int *at = NULL, n_at = g->n_tensors;
    if (im->n_legacy) {
        at = malloc((size_t)n_at * sizeof *at);
        if (!at) return enpu_fail(im->err, ENPU_E_NOMEM, "%s: out of memory", im->what);
        for (int t = 0; t < n_at; t++) at[t] = -1;
        for (int k = 0; k < im->n_legacy; k++) at[im->legacy[k].out] = k;
    }
    int rc = 0;
    for (int i = 0; i < n_nodes && !rc; i++) {
        const enpu_node *n0 = &g->nodes[i];
        if (n0->dead) continue;
        bool bad = false;
        for (int k = 0; k < n0->n_in; k++) bad |= oi_poisoned(im, n0->in[k]);
        if (bad) {
            rc = oi_poison_outputs(im, i);
            continue;
        }
        int o = n0->n_out > 0 ? n0->out[0] : -1;
        const legacy_bcast *lb = at && o >= 0 && o < n_at && at[o] >= 0 ? &im->legacy[at[o]] : NULL;
        enpu_err e = {0};
        enpu_err *saved = im->err;
        im->err = &e;
        if (oi_ctl_is(n0->op)) {
            rc = oi_ctl_expand(im, i);
            added = true;
        } else {
            rc = oi_infer_one(im, i, lb, &added);
        }
        im->err = saved;
        bool skipped;
        rc = oi_as_problem(im, rc, &e, &skipped);
        if (!rc && skipped) rc = oi_poison_outputs(im, i);
    }
    free(at);
    if (rc) return rc;
    if (added && enpu_graph_toposort(g, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
    return 0;
}

/* Pre-quantized models.  A QuantizeLinear -> DequantizeLinear pair on a
 * float tensor x is the model saying "x is int8 with these parameters": x
 * gets them (enpu_onnx_qdq_annotate) and the pair goes, the DequantizeLinear's
 * readers reading x (a graph output keeps its name through an Identity).
 * The DequantizeLinear of a constant was folded with the parameters kept on
 * the result.  Any other QuantizeLinear / DequantizeLinear (an integer graph
 * input or output) stays a node: the float reference computes it, the int8
 * compiler refuses its integer tensor (enpu_quantize_graph). */
static int resolve_qdq(imp *im) {
    enpu_graph *g = im->g;
    int *remap = malloc((size_t)(g->n_tensors ? g->n_tensors : 1) * sizeof *remap);
    if (!remap) return enpu_fail(im->err, ENPU_E_NOMEM, "%s: out of memory", im->what);
    for (int t = 0; t < g->n_tensors; t++) remap[t] = t;
    int rc = 0;
    bool any = false;
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || n->op != ENPU_OP_DEQUANTIZE_LINEAR || oi_poisoned(im, n->out[0])) continue;
        int q = n->in[0], p = g->tensors[q].producer;
        const enpu_node *qn = p >= 0 ? &g->nodes[p] : NULL;
        char msg[ENPU_MAX_NAME * 2 + 200];
        if (!qn || qn->dead || qn->op != ENPU_OP_QUANTIZE_LINEAR) continue; /* stays */
        for (int k = 1; k < 3 && !rc; k++) {
            const enpu_tensor *a = enpu_node_input(g, n, k), *b = enpu_node_input(g, qn, k);
            bool same = (!a && !b) || (a && b && a->rank >= 0 && b->rank >= 0 && a->data && b->data &&
                                       enpu_tensor_nbytes(a) == enpu_tensor_nbytes(b) &&
                                       a->dtype == b->dtype &&
                                       memcmp(a->data, b->data, enpu_tensor_nbytes(a)) == 0);
            if (!same) {
                snprintf(msg, sizeof msg,
                         "node '%s' (op 'DequantizeLinear'): its %s differs from that of "
                         "QuantizeLinear '%s': not supported",
                         n->name, k == 1 ? "scale" : "zero point", qn->name);
                rc = oi_add_problem(im, msg);
                q = -1;
            }
        }
        if (rc || q < 0) continue;
        int x = qn->in[0];
        if ((rc = enpu_onnx_qdq_annotate(g, qn, &g->tensors[x], im->err))) {
            enpu_err_prefix(im->err, "%s", im->what);
            break;
        }
        int y = n->out[0];
        any = true;
        /* The pair saturates at the ends of the code range (a QLinearConv
         * with zero point 0 is a ReLU): after an op that computes (and then
         * requantizes, folding the clamp for free) the pair becomes that
         * Clip, so the float reference saturates as the int8 model does. */
        int px = g->tensors[x].producer, cnt = 0;
        enpu_graph_consumer(g, x, &cnt);
        enpu_op pop = px >= 0 ? g->nodes[px].op : ENPU_OP_NONE;
        const enpu_quant *xq = g->tensors[x].quant;
        if (cnt == 1 && xq && xq->count == 1 &&
            (pop == ENPU_OP_CONV || pop == ENPU_OP_GEMM || pop == ENPU_OP_MATMUL ||
             pop == ENPU_OP_ADD || pop == ENPU_OP_MUL || pop == ENPU_OP_CONV_TRANSPOSE)) {
            n->op = ENPU_OP_CLIP;
            n->in[0] = x;
            n->n_in = 1;
            memset(&n->attr, 0, sizeof n->attr);
            n->attr.act.min = enpu_dequantize(-128, xq->scale[0], xq->zero_point[0]);
            n->attr.act.max = enpu_dequantize(127, xq->scale[0], xq->zero_point[0]);
            if ((rc = enpu_tensor_set_quant(&g->tensors[y], -1, 1, xq->scale, xq->zero_point, im->err)))
                break;
            continue;
        }
        if (g->tensors[y].flags & ENPU_T_OUTPUT) {
            n->op = ENPU_OP_IDENTITY;
            n->in[0] = x;
            n->n_in = 1;
            memset(&n->attr, 0, sizeof n->attr);
        } else {
            remap[y] = x;
            g->tensors[y].producer = -1;
            n->dead = true;
        }
    }
    if (any)
        for (int i = 0; i < g->n_nodes; i++) {
            enpu_node *n = &g->nodes[i];
            if (n->dead) continue;
            for (int k = 0; k < n->n_in; k++)
                if (n->in[k] >= 0) n->in[k] = remap[n->in[k]];
        }
    free(remap);
    /* QuantizeLinear nodes nobody dequantizes any more go; others stay */
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || n->op != ENPU_OP_QUANTIZE_LINEAR || oi_poisoned(im, n->out[0])) continue;
        int cnt = 0, y = n->out[0];
        enpu_graph_consumer(g, y, &cnt);
        if (!cnt && !(g->tensors[y].flags & ENPU_T_OUTPUT)) {
            g->tensors[y].producer = -1;
            n->dead = true;
        }
    }
    return rc;
}

static int import_model(imp *im, const Onnx__ModelProto *m) {
    const Onnx__GraphProto *gp = m->graph;
    if (!gp) return enpu_fail(im->err, ENPU_E_FORMAT, "%s: ONNX model has no graph", im->what);
    im->gp = gp;
    int rc = find_opset(im, m);
    if (rc) return rc;
    if (gp->n_node > ENPU_MAX_NODES)
        return enpu_fail(im->err, ENPU_E_LIMIT, "%s: %zu nodes, over the limit of %d", im->what,
                         gp->n_node, ENPU_MAX_NODES);
    if (gp->n_initializer + gp->n_input + gp->n_node > (size_t)ENPU_MAX_TENSORS)
        return enpu_fail(im->err, ENPU_E_LIMIT, "%s: more than %d tensors", im->what,
                         ENPU_MAX_TENSORS);
    if (gp->name && strlen(gp->name) > ENPU_MAX_NAME)
        return enpu_fail(im->err, ENPU_E_LIMIT, "%s: graph name is over the limit of %d bytes",
                         im->what, ENPU_MAX_NAME);
    im->g = enpu_graph_new(str_or_empty(gp->name));
    if (!im->g) return enpu_fail(im->err, ENPU_E_NOMEM, "%s: out of memory", im->what);
    im->g->opset = im->opset;
    if ((rc = import_initializers(im))) return rc;
    if ((rc = import_inputs(im))) return rc;
    if ((rc = check_binds(im))) return rc;
    if ((rc = import_nodes(im))) return rc;
    if ((rc = import_outputs(im))) return rc;
    layout_hints(im->g);
    if (enpu_graph_toposort(im->g, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
    if (im->flags & ENPU_ONNX_NO_INFER) return im->n_problems ? fail_problems(im) : 0;
    if ((rc = infer_shapes(im))) return rc;
    if ((rc = resolve_qdq(im))) return rc;
    if (im->n_problems) return fail_problems(im);
    enpu_graph_compact(im->g);
    if (enpu_graph_validate(im->g, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
    return 0;
}

int enpu_onnx_parse_opts(const uint8_t *data, size_t n, const char *what,
                         const enpu_onnx_opts *opts, enpu_graph **out, enpu_err *err) {
    enpu_err e = {0};
    imp im;
    memset(&im, 0, sizeof im);
    im.what = what ? what : "<memory>";
    im.err = &e;
    if (opts) {
        im.flags = opts->flags;
        im.binds = opts->binds;
        im.n_binds = opts->n_binds > 0 ? opts->n_binds : 0;
        im.shapes = opts->shapes;
        im.n_shapes = opts->shapes && opts->n_shapes > 0 ? opts->n_shapes : 0;
    }
    *out = NULL;
    int rc = 0;
    if (im.n_binds) {
        im.bound = calloc((size_t)im.n_binds, sizeof *im.bound);
        if (!im.bound) rc = enpu_fail(&e, ENPU_E_NOMEM, "%s: out of memory", im.what);
    }
    if (!rc && im.n_shapes) {
        im.shaped = calloc((size_t)im.n_shapes, sizeof *im.shaped);
        if (!im.shaped) rc = enpu_fail(&e, ENPU_E_NOMEM, "%s: out of memory", im.what);
    }
    for (int i = 0; !rc && i < im.n_binds; i++) {
        if (!im.binds[i].name || !im.binds[i].value)
            rc = enpu_fail(&e, ENPU_E_USAGE, "%s: binding %d has no name or no value", im.what, i);
        for (int k = 0; !rc && k < i; k++)
            if (strcmp(im.binds[k].name, im.binds[i].name) == 0)
                rc = bfail(&im, i, ENPU_E_USAGE, "the input is bound twice");
    }
    if (!rc && n == 0) {
        rc = enpu_fail(&e, ENPU_E_FORMAT, "%s: empty file, not an ONNX model", im.what);
    } else if (!rc) {
        Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, data);
        if (!m) {
            rc = enpu_fail(&e, ENPU_E_FORMAT,
                           "%s: not a valid ONNX model (protobuf parse failed)", im.what);
        } else {
            rc = import_model(&im, m);
            onnx__model_proto__free_unpacked(m, NULL);
        }
    }
    oi_ctl_free(&im);
    free(im.legacy);
    free(im.bound);
    free(im.shaped);
    free(im.poison);
    for (int i = 0; i < im.n_problems; i++) free(im.problems[i]);
    free(im.problems);
    if (rc) {
        enpu_graph_free(im.g);
        if (err && err->code == ENPU_OK) *err = e;
        return rc;
    }
    *out = im.g;
    return 0;
}

int enpu_onnx_parse_input_shape(char *spec, enpu_onnx_input_shape *out, enpu_err *err) {
    memset(out, 0, sizeof *out);
    char *eq = spec ? strrchr(spec, '=') : NULL;
    if (!eq || eq == spec)
        return enpu_fail(err, ENPU_E_USAGE, "--input-shape '%s': expected NAME=D0xD1x... (e.g. "
                         "x=1x40x98)", spec ? spec : "");
    *eq = 0;
    out->name = spec;
    const char *p = eq + 1;
    while (*p) {
        if (out->rank == ENPU_MAX_RANK)
            return enpu_fail(err, ENPU_E_USAGE, "--input-shape %s: more than %d dimensions", spec,
                             ENPU_MAX_RANK);
        char *end;
        if (*p < '0' || *p > '9')
            return enpu_fail(err, ENPU_E_USAGE, "--input-shape %s=%s: '%s' is not a dimension", spec,
                             eq + 1, p);
        unsigned long long v = strtoull(p, &end, 10);
        if (v > (unsigned long long)ENPU_MAX_DIM)
            return enpu_fail(err, ENPU_E_USAGE, "--input-shape %s: dimension %llu is over %lld", spec,
                             v, (long long)ENPU_MAX_DIM);
        out->dims[out->rank++] = (int64_t)v;
        p = end;
        if (*p == 'x' && p[1]) p++;
        else if (*p)
            return enpu_fail(err, ENPU_E_USAGE, "--input-shape %s=%s: expected 'x' between "
                             "dimensions at '%s'", spec, eq + 1, p);
    }
    return 0;
}

int enpu_onnx_parse_ex(const uint8_t *data, size_t n, const char *what, unsigned flags,
                       enpu_graph **out, enpu_err *err) {
    enpu_onnx_opts o = {flags, NULL, 0, NULL, 0};
    return enpu_onnx_parse_opts(data, n, what, &o, out, err);
}

int enpu_onnx_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                    enpu_err *err) {
    return enpu_onnx_parse_opts(data, n, what, NULL, out, err);
}

int enpu_onnx_load_opts(const char *path, const enpu_onnx_opts *opts, enpu_graph **out,
                        enpu_err *err) {
    *out = NULL;
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = enpu_file_read(path, ENPU_MAX_MODEL_BYTES, &data, &n, err);
    if (rc) return rc;
    rc = enpu_onnx_parse_opts(data, n, path, opts, out, err);
    free(data);
    return rc;
}

int enpu_onnx_load_ex(const char *path, unsigned flags, enpu_graph **out, enpu_err *err) {
    enpu_onnx_opts o = {flags, NULL, 0, NULL, 0};
    return enpu_onnx_load_opts(path, &o, out, err);
}

int enpu_onnx_load(const char *path, enpu_graph **out, enpu_err *err) {
    return enpu_onnx_load_opts(path, NULL, out, err);
}
