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


/* "WHAT: node 'NAME' (op 'OP'): message" (without "WHAT: " when what is NULL). */
int oi_node_vfail(enpu_err *err, const char *what, const char *node, const char *op,
                      enpu_status code, const char *fmt, va_list ap) {
    char msg[ENPU_ERR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return enpu_fail(err, code, "%s%snode '%s' (op '%s'): %s", what ? what : "",
                     what ? ": " : "", node, op, msg);
}

int oi_nfail(const nctx *c, enpu_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = oi_node_vfail(c->im->err, c->im->what, c->name, c->op_type, code, fmt, ap);
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
        int tmp[OI_MAX_NODE_IO];
        memcpy(tmp, in, (size_t)n_in * sizeof *in);
        tmp[1] = in[b];
        if ((rc = oi_parse_window(c, tmp, &cat.conv.w))) return rc;
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
    int64_t v[OI_MAX_NODE_IO];
    int n, rc;
    if ((rc = oi_a_ints(c, "split", OI_MAX_NODE_IO, v, &n))) return rc;
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
    oi_arity(op, im->opset, &lo, &hi);
    if ((int64_t)np->n_input < lo || (int64_t)np->n_input > hi)
        return oi_nfail(c, ENPU_E_INVALID, "has %zu inputs, expected %d..%d (opset %d)",
                     np->n_input, lo, hi, im->opset);
    int in[OI_MAX_NODE_IO];
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
    int rc = oi_map_attrs(c, op, in, &n_in, &at);
    if (rc) return rc;
    if (op == ENPU_OP_SPLIT && n_in < 2 && (rc = split_attr_to_input(c, in, &n_in))) return rc;
    int outs[OI_MAX_NODE_IO], n_out = 1;
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
        if (np->n_input > OI_MAX_NODE_IO || np->n_output > OI_MAX_NODE_IO)
            return oi_nfail(&c, ENPU_E_LIMIT, "%zu inputs and %zu outputs, over the limit of %d",
                         np->n_input, np->n_output, OI_MAX_NODE_IO);
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
    if ((rc = oi_import_inputs(im))) return rc;
    if ((rc = oi_check_binds(im))) return rc;
    if ((rc = import_nodes(im))) return rc;
    if ((rc = import_outputs(im))) return rc;
    layout_hints(im->g);
    if (enpu_graph_toposort(im->g, im->err)) return enpu_err_prefix(im->err, "%s", im->what);
    if (im->flags & ENPU_ONNX_NO_INFER) return im->n_problems ? fail_problems(im) : 0;
    if ((rc = oi_infer_shapes(im))) return rc;
    if ((rc = oi_resolve_qdq(im))) return rc;
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
                rc = oi_bfail(&im, i, ENPU_E_USAGE, "the input is bound twice");
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
