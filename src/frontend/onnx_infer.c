/* After the nodes are added: shapes inferred node by node, which the
 * legacy broadcasts of opsets < 7 and Split's default sizes need to be
 * resolved, and QuantizeLinear/DequantizeLinear pairs turned into the
 * scales of the tensors between them. */
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
    int64_t sizes[OI_MAX_NODE_IO], dim = x->dims[axis], sum = 0;
    const enpu_tensor *st = enpu_node_input(g, n, 1);
    if (st) {
        if (st->rank != 1 || st->dims[0] != m ||
            (st->dtype != ENPU_DT_INT64 && st->dtype != ENPU_DT_INT32))
            return lfail(im, n, ENPU_E_INVALID, "input 'split' must be %d int64 values", m);
        for (int k = 0; k < m; k++) {
            sizes[k] = oi_const_i64_at(st, k);
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
    int xin = n->in[0], outs[OI_MAX_NODE_IO];
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
int oi_infer_shapes(imp *im) {
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
int oi_resolve_qdq(imp *im) {
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
