/* Float reference kernels of the elementwise ops: broadcasting binary ops
 * (Add, Sub, Mul, Div, PRelu), activations, and Softmax. */
#include <math.h>
#include <stdio.h>

#include "ref/fref_internal.h"

/* --- binary, numpy multidirectional broadcasting ---------------------------- */

int enpu_fref_check_binary(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *a = enpu_node_input(g, n, 0), *b = enpu_node_input(g, n, 1);
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    int ro;
    int64_t od[ENPU_MAX_RANK];
    if (!enpu_fref_bcast_shape(a->rank, a->dims, b->rank, b->dims, &ro, od))
        return enpu_fail(err, ENPU_E_INVALID, "%s: shapes of '%s' and '%s' do not broadcast",
                         what, a->name, b->name);
    if (!enpu_fref_same_shape(y, ro, od)) return enpu_fref_bad_shape(n, y, ro, od, err);
    return 0;
}

static inline float binop(enpu_op op, float a, float b) {
    switch (op) {
    case ENPU_OP_ADD: return a + b;
    case ENPU_OP_SUB: return a - b;
    case ENPU_OP_MUL: return a * b;
    case ENPU_OP_DIV: return a / b;
    case ENPU_OP_PRELU: return a < 0.0f ? a * b : a;
    default: ENPU_ASSERT(!"not a binary op"); return 0.0f;
    }
}

void enpu_fref_binary(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *a = enpu_node_input(g, n, 0), *b = enpu_node_input(g, n, 1);
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    int64_t total = enpu_tensor_numel(y);
    const float *av = in[0], *bv = in[1];
    float *yv = out[0];
    enpu_op op = n->op;
    if (enpu_fref_same_shape(a, y->rank, y->dims) && enpu_fref_same_shape(b, y->rank, y->dims)) {
        for (int64_t i = 0; i < total; i++) yv[i] = binop(op, av[i], bv[i]);
        return;
    }
    enpu_fref_iter it = {.rank = y->rank, .dims = y->dims};
    enpu_fref_bcast_strides(a->rank, a->dims, y->rank, y->dims, 1, it.st[0]);
    enpu_fref_bcast_strides(b->rank, b->dims, y->rank, y->dims, 1, it.st[1]);
    for (int64_t i = 0; i < total; i++, enpu_fref_iter_next(&it))
        yv[i] = binop(op, av[it.off[0]], bv[it.off[1]]);
}

/* --- activations -------------------------------------------------------------- */

int enpu_fref_check_unary(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    if (!enpu_fref_same_shape(y, x->rank, x->dims))
        return enpu_fref_bad_shape(n, y, x->rank, x->dims, err);
    if (n->op == ENPU_OP_CLIP)
        for (int i = 1; i < 3; i++) {
            const enpu_tensor *b = enpu_node_input(g, n, i);
            if (b && enpu_tensor_numel(b) != 1)
                return enpu_fail(err, ENPU_E_INVALID, "%s: bound '%s' must be a scalar", what,
                                 b->name);
        }
    return 0;
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

void enpu_fref_unary(const enpu_graph *g, const enpu_node *n, const float *const *in,
                     float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    int64_t total = enpu_tensor_numel(x);
    const enpu_act_attr *at = &n->attr.act;
    const float *xv = in[0];
    float *yv = out[0];
    /* Clip's bounds given as inputs (possibly computed at run time) win over
     * the attribute copy the importer made of constant ones. */
    float lo = at->min, hi = at->max;
    if (n->op == ENPU_OP_CLIP) {
        if (n->n_in > 1 && n->in[1] >= 0 && in[1]) lo = in[1][0];
        if (n->n_in > 2 && n->in[2] >= 0 && in[2]) hi = in[2][0];
    }
    for (int64_t i = 0; i < total; i++) {
        float v = xv[i], r;
        switch (n->op) {
        case ENPU_OP_RELU: r = v < 0.0f ? 0.0f : v; break;
        case ENPU_OP_CLIP:
            r = v < lo ? lo : v;
            r = r > hi ? hi : r;
            break;
        case ENPU_OP_LEAKY_RELU: r = v < 0.0f ? at->alpha * v : v; break;
        case ENPU_OP_SIGMOID: r = (float)sigmoid(v); break;
        case ENPU_OP_TANH: r = (float)tanh(v); break;
        case ENPU_OP_HARD_SIGMOID: {
            double h = (double)at->alpha * v + at->beta;
            r = (float)(h < 0.0 ? 0.0 : h > 1.0 ? 1.0 : h);
            break;
        }
        case ENPU_OP_HARD_SWISH: {
            double h = (double)v / 6.0 + 0.5;
            r = (float)(v * (h < 0.0 ? 0.0 : h > 1.0 ? 1.0 : h));
            break;
        }
        case ENPU_OP_SILU: r = (float)(v * sigmoid(v)); break;
        default: ENPU_ASSERT(!"not a unary op"); r = 0.0f;
        }
        yv[i] = r;
    }
}

/* --- Softmax ------------------------------------------------------------------ */

int enpu_fref_check_softmax(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    int axis = n->attr.shape.axis;
    if (x->rank < 1 || axis < 0 || axis >= x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d out of range for input '%s' of rank %d",
                         what, axis, x->name, x->rank);
    if (!enpu_fref_same_shape(y, x->rank, x->dims))
        return enpu_fref_bad_shape(n, y, x->rank, x->dims, err);
    return 0;
}

/* Normalizes `len` values spaced `stride` apart, subtracting the maximum
 * first so exp never overflows. */
static void softmax_line(const float *x, float *y, int64_t len, int64_t stride) {
    float mx = -INFINITY;
    for (int64_t i = 0; i < len; i++)
        if (x[i * stride] > mx) mx = x[i * stride];
    double sum = 0.0;
    for (int64_t i = 0; i < len; i++) sum += exp((double)x[i * stride] - mx);
    for (int64_t i = 0; i < len; i++)
        y[i * stride] = (float)(exp((double)x[i * stride] - mx) / sum);
}

void enpu_fref_softmax(const enpu_graph *g, const enpu_node *n, const float *const *in,
                       float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    int axis = n->attr.shape.axis;
    int64_t outer = 1, len = x->dims[axis], inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    if (n->attr.shape.softmax_legacy) {
        /* opset < 13: the input is read as [outer, len * inner] */
        len *= inner;
        inner = 1;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            softmax_line(in[0] + o * len * inner + i, out[0] + o * len * inner + i, len, inner);
}
