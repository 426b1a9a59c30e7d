/* Float reference kernels of the elementwise ops: broadcasting binary ops
 * (Add, Sub, Mul, Div, PRelu, Pow), variadic Max/Min, Where, activations
 * and pointwise functions, Softmax, LayerNormalization and the reductions. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/numerics.h"
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
    case ENPU_OP_POW: return powf(a, b);
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
        case ENPU_OP_SQRT: r = sqrtf(v); break;
        case ENPU_OP_EXP: r = (float)exp(v); break;
        case ENPU_OP_LOG: r = (float)log(v); break;
        case ENPU_OP_ERF: r = (float)erf(v); break;
        case ENPU_OP_NEG: r = -v; break;
        case ENPU_OP_ABS: r = fabsf(v); break;
        case ENPU_OP_RECIPROCAL: r = 1.0f / v; break;
        case ENPU_OP_FLOOR: r = floorf(v); break;
        case ENPU_OP_CEIL: r = ceilf(v); break;
        case ENPU_OP_GELU:
            r = n->attr.misc.approximate
                    ? (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * (double)v * v * v))))
                    : (float)(0.5 * v * (1.0 + erf(v / 1.4142135623730951)));
            break;
        case ENPU_OP_CAST: r = v; break; /* float32 to float32 */
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

/* --- Max, Min: variadic, broadcasting ----------------------------------------- */

int enpu_fref_check_variadic(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    int ro = 0;
    int64_t od[ENPU_MAX_RANK];
    for (int i = 0; i < n->n_in; i++) {
        const enpu_tensor *x = enpu_node_input(g, n, i);
        int64_t t[ENPU_MAX_RANK];
        int rt;
        if (!enpu_fref_bcast_shape(ro, od, x->rank, x->dims, &rt, t))
            return enpu_fail(err, ENPU_E_INVALID, "%s: '%s' does not broadcast", what, x->name);
        ro = rt;
        memcpy(od, t, sizeof od);
    }
    if (!enpu_fref_same_shape(y, ro, od)) return enpu_fref_bad_shape(n, y, ro, od, err);
    return 0;
}

void enpu_fref_variadic(const enpu_graph *g, const enpu_node *n, const float *const *in,
                        float *const *out) {
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    int64_t total = enpu_tensor_numel(y);
    bool mx = n->op == ENPU_OP_MAX;
    for (int k = 0; k < n->n_in; k++) {
        const enpu_tensor *x = enpu_node_input(g, n, k);
        enpu_fref_iter it = {.rank = y->rank, .dims = y->dims};
        enpu_fref_bcast_strides(x->rank, x->dims, y->rank, y->dims, 1, it.st[0]);
        for (int64_t i = 0; i < total; i++, enpu_fref_iter_next(&it)) {
            float v = in[k][it.off[0]];
            /* NaN propagates, as in numpy's maximum */
            if (k == 0 || isnan(v) || (mx ? v > out[0][i] : v < out[0][i])) out[0][i] = v;
        }
    }
}

/* --- Where (constant condition) ------------------------------------------------ */

int enpu_fref_check_where(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *c = enpu_node_input(g, n, 0);
    if (!(c->flags & ENPU_T_CONST) || (!c->data && enpu_tensor_numel(c)) ||
        enpu_dtype_size(c->dtype) != 1)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: the condition '%s' must be a constant "
                         "bool tensor", what, c->name);
    return enpu_fref_check_variadic(g, n, err);
}

void enpu_fref_where(const enpu_graph *g, const enpu_node *n, const float *const *in,
                     float *const *out) {
    const enpu_tensor *c = enpu_node_input(g, n, 0), *a = enpu_node_input(g, n, 1),
                      *b = enpu_node_input(g, n, 2), *y = enpu_node_output(g, n, 0);
    int64_t total = enpu_tensor_numel(y);
    const uint8_t *cv = c->data;
    enpu_fref_iter it = {.rank = y->rank, .dims = y->dims}, ic = {.rank = y->rank, .dims = y->dims};
    enpu_fref_bcast_strides(a->rank, a->dims, y->rank, y->dims, 1, it.st[0]);
    enpu_fref_bcast_strides(b->rank, b->dims, y->rank, y->dims, 1, it.st[1]);
    enpu_fref_bcast_strides(c->rank, c->dims, y->rank, y->dims, 1, ic.st[0]);
    for (int64_t i = 0; i < total; i++, enpu_fref_iter_next(&it), enpu_fref_iter_next(&ic))
        out[0][i] = cv[ic.off[0]] ? in[1][it.off[0]] : in[2][it.off[1]];
}

/* --- LayerNormalization --------------------------------------------------------- */

int enpu_fref_check_layer_norm(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    int ax = n->attr.norm.axis;
    if (ax < 0 || ax >= x->rank) return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d", what, ax);
    if (!enpu_fref_same_shape(y, x->rank, x->dims)) return enpu_fref_bad_shape(n, y, x->rank, x->dims, err);
    for (int i = 1; i < 3; i++) {
        const enpu_tensor *p = enpu_node_input(g, n, i);
        int ro;
        int64_t od[ENPU_MAX_RANK];
        if (p && (!enpu_fref_bcast_shape(x->rank, x->dims, p->rank, p->dims, &ro, od) ||
                  !enpu_fref_same_shape(x, ro, od)))
            return enpu_fail(err, ENPU_E_INVALID, "%s: '%s' does not broadcast to the input", what,
                             p->name);
    }
    int64_t sd[ENPU_MAX_RANK];
    memcpy(sd, x->dims, sizeof sd);
    for (int d = ax; d < x->rank; d++) sd[d] = 1;
    for (int i = 1; i < 3; i++) {
        const enpu_tensor *o = enpu_node_output(g, n, i);
        if (o && !enpu_fref_same_shape(o, x->rank, sd)) return enpu_fref_bad_shape(n, o, x->rank, sd, err);
    }
    return 0;
}

void enpu_fref_layer_norm(const enpu_graph *g, const enpu_node *n, const float *const *in,
                          float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *sc = enpu_node_input(g, n, 1),
                      *bi = enpu_node_input(g, n, 2);
    int ax = n->attr.norm.axis;
    int64_t outer = 1, len = 1;
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax; d < x->rank; d++) len *= x->dims[d];
    enpu_fref_iter is = {.rank = x->rank, .dims = x->dims};
    enpu_fref_bcast_strides(sc->rank, sc->dims, x->rank, x->dims, 1, is.st[0]);
    if (bi) enpu_fref_bcast_strides(bi->rank, bi->dims, x->rank, x->dims, 1, is.st[1]);
    const float *xv = in[0];
    for (int64_t o = 0; o < outer; o++) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < len; i++) sum += xv[o * len + i];
        double mean = len ? sum / (double)len : 0;
        for (int64_t i = 0; i < len; i++) {
            double dv = xv[o * len + i] - mean;
            sq += dv * dv;
        }
        double inv = 1.0 / sqrt((len ? sq / (double)len : 0) + n->attr.norm.epsilon);
        for (int64_t i = 0; i < len; i++, enpu_fref_iter_next(&is)) {
            double v = (xv[o * len + i] - mean) * inv * in[1][is.off[0]];
            if (bi) v += in[2][is.off[1]];
            out[0][o * len + i] = (float)v;
        }
        if (n->n_out > 1 && out[1]) out[1][o] = (float)mean;
        if (n->n_out > 2 && out[2]) out[2][o] = (float)inv;
    }
}

/* --- ReduceMean, ReduceMax, ReduceSum ------------------------------------------ */

int enpu_fref_check_reduce(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_reduce_attr *a = &n->attr.reduce;
    bool red[ENPU_MAX_RANK] = {false};
    for (int i = 0; i < a->n_axes; i++) {
        if (a->axes[i] < 0 || a->axes[i] >= x->rank) {
            char what[ENPU_MAX_NAME + 64];
            return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d", enpu_fref_what(n, what, sizeof what),
                             a->axes[i]);
        }
        red[a->axes[i]] = true;
    }
    int64_t od[ENPU_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!red[d]) od[r++] = x->dims[d];
        else if (a->keepdims) od[r++] = 1;
    if (!enpu_fref_same_shape(y, r, od)) return enpu_fref_bad_shape(n, y, r, od, err);
    return 0;
}

void enpu_fref_reduce(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_reduce_attr *a = &n->attr.reduce;
    bool red[ENPU_MAX_RANK] = {false};
    for (int i = 0; i < a->n_axes; i++) red[a->axes[i]] = true;
    /* output strides of the input's axes (0 along a reduced one) */
    int64_t os[ENPU_MAX_RANK], s = 1, cnt = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        os[d] = red[d] ? 0 : s;
        if (!red[d]) s *= x->dims[d];
        else cnt *= x->dims[d];
    }
    int64_t ny = enpu_tensor_numel(y), nx = enpu_tensor_numel(x);
    bool mx = n->op == ENPU_OP_REDUCE_MAX;
    double *acc = calloc((size_t)(ny ? ny : 1), sizeof *acc);
    ENPU_ASSERT(acc); /* as large as the output, which the executor could allocate */
    for (int64_t i = 0; i < ny; i++) acc[i] = mx ? -INFINITY : 0.0;
    enpu_fref_iter it = {.rank = x->rank, .dims = x->dims};
    memcpy(it.st[0], os, sizeof os);
    for (int64_t i = 0; i < nx; i++, enpu_fref_iter_next(&it)) {
        double v = in[0][i];
        if (mx) {
            if (v > acc[it.off[0]] || isnan(v)) acc[it.off[0]] = v;
        } else {
            acc[it.off[0]] += v;
        }
    }
    for (int64_t i = 0; i < ny; i++)
        out[0][i] = (float)(n->op == ENPU_OP_REDUCE_MEAN ? acc[i] / (double)cnt : acc[i]);
    free(acc);
}

/* --- ArgMax, ArgMin -------------------------------------------------------------- */

/* The axis is axes[0] (shape inference normalised it); the output holds the
 * index of the first extreme along it, or the last with select_last_index.
 * A NaN counts as the extreme (numpy's argmax), the first one met. */
int enpu_fref_check_arg(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    const enpu_tensor *y = enpu_node_output(g, n, 0);
    if (n->attr.reduce.n_axes != 1 || (y->dtype != ENPU_DT_INT64 && y->dtype != ENPU_DT_INT32)) {
        char what[ENPU_MAX_NAME + 64];
        return enpu_fail(err, ENPU_E_INVALID, "%s: expected one axis and an int64 output",
                         enpu_fref_what(n, what, sizeof what));
    }
    return enpu_fref_check_reduce(g, n, err);
}

void enpu_fref_arg(const enpu_graph *g, const enpu_node *n, const float *const *in, float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    const enpu_reduce_attr *a = &n->attr.reduce;
    int ax = a->axes[0];
    int64_t outer = 1, inner = 1, dim = x->dims[ax];
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    bool mx = n->op == ENPU_OP_ARGMAX;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *v = in[0] + o * dim * inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < dim; k++) {
                float b = v[best * inner], c = v[k * inner];
                if (isnan(b)) break;
                bool take = isnan(c) || (mx ? c > b : c < b) || (a->select_last && c == b);
                if (take) best = k;
            }
            out[0][o * inner + i] = (float)best;
        }
}

/* --- QuantizeLinear / DequantizeLinear ------------------------------------------ */

/* Element i of the constant t (scale or zero point, any numeric dtype). */
static double const_elem(const enpu_tensor *t, int64_t i) { return enpu_dtype_value_at(t->dtype, t->data, i); }

int enpu_fref_check_qdq(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    enpu_fref_what(n, what, sizeof what);
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_tensor *s = enpu_node_input(g, n, 1), *z = enpu_node_input(g, n, 2);
    if (!enpu_fref_same_shape(y, x->rank, x->dims)) return enpu_fref_bad_shape(n, y, x->rank, x->dims, err);
    const enpu_tensor *q = n->op == ENPU_OP_QUANTIZE_LINEAR ? y : x;
    if (q->dtype != ENPU_DT_INT8 && q->dtype != ENPU_DT_UINT8)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: '%s' is %s; only int8 and uint8 codes are "
                         "supported", what, q->name, enpu_dtype_name(q->dtype));
    for (int k = 1; k < 3; k++) {
        const enpu_tensor *c = k == 1 ? s : z;
        if (!c) continue;
        if (!(c->flags & ENPU_T_CONST) || !c->data ||
            (c->dtype != ENPU_DT_FLOAT32 && c->dtype != ENPU_DT_UINT8 && c->dtype != ENPU_DT_INT8 &&
             c->dtype != ENPU_DT_INT32 && c->dtype != ENPU_DT_INT64))
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: %s '%s' must be a numeric constant", what,
                             k == 1 ? "scale" : "zero point", c->name);
    }
    int64_t cnt = enpu_tensor_numel(s);
    int axis = n->attr.misc.axis < 0 ? n->attr.misc.axis + x->rank : n->attr.misc.axis;
    if ((z && enpu_tensor_numel(z) != cnt) ||
        (cnt > 1 && (axis < 0 || axis >= x->rank || x->dims[axis] != cnt)))
        return enpu_fail(err, ENPU_E_INVALID, "%s: %lld scales do not fit axis %d of '%s'", what,
                         (long long)cnt, n->attr.misc.axis, x->name);
    return 0;
}

/* y = saturate(round_half_even(x / scale) + zero_point) (Quantize),
 * y = (x - zero_point) * scale (Dequantize), per tensor or along `axis`:
 * the numerics contract's enpu_quantize / enpu_dequantize. */
void enpu_fref_qdq(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    const enpu_tensor *s = enpu_node_input(g, n, 1), *z = enpu_node_input(g, n, 2);
    int64_t cnt = enpu_tensor_numel(s), total = enpu_tensor_numel(x), inner = 1;
    int axis = n->attr.misc.axis < 0 ? n->attr.misc.axis + x->rank : n->attr.misc.axis;
    if (cnt > 1)
        for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    bool s8 = y->dtype == ENPU_DT_INT8;
    for (int64_t i = 0; i < total; i++) {
        int64_t c = cnt > 1 ? (i / inner) % cnt : 0;
        float sc = (float)const_elem(s, c);
        int32_t zp = z ? (int32_t)const_elem(z, c) : 0;
        if (n->op == ENPU_OP_QUANTIZE_LINEAR)
            out[0][i] = (float)enpu_quantize(in[0][i], sc, zp, s8 ? -128 : 0, s8 ? 127 : 255);
        else
            out[0][i] = enpu_dequantize((int32_t)in[0][i], sc, zp);
    }
}
