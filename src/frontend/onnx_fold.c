/* Shape folding at import: the subgraphs model exporters emit to compute
 * shapes (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range,
 * ConstantOfShape, arithmetic on sizes, Cast, Equal/Where on shapes ...)
 * depend only on constants and static shapes, so the importer computes them
 * here and the graph the later stages see is static.
 *
 * A node is folded when every input is a constant (or, for Shape and Size,
 * when its input's shape is known): its outputs become constants holding
 * the result and the node is marked dead.  Values keep their dtype: integer
 * arithmetic is done in int64 (C division, truncating), floating point in
 * double, converted to the output dtype at the end; data movement copies
 * elements whatever their type.  Float32 ops this file does not know are
 * computed by the float reference (enpu_fref_node) when every input is a
 * float32 constant. */
#include "frontend/onnx_fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/numerics.h"

#define FAIL(code, ...) enpu_fail(err, code, __VA_ARGS__)

static bool is_const_t(const enpu_tensor *t) {
    return t && (t->flags & ENPU_T_CONST) && t->rank >= 0 && (t->data || enpu_tensor_numel(t) == 0);
}

static bool is_int_dt(enpu_dtype dt) {
    switch (dt) {
    case ENPU_DT_UINT8: case ENPU_DT_INT8: case ENPU_DT_UINT16: case ENPU_DT_INT16:
    case ENPU_DT_INT32: case ENPU_DT_INT64: case ENPU_DT_BOOL: case ENPU_DT_UINT32:
    case ENPU_DT_UINT64:
        return true;
    default:
        return false;
    }
}

static bool is_float_dt(enpu_dtype dt) { return dt == ENPU_DT_FLOAT32 || dt == ENPU_DT_FLOAT64; }

/* Element i of constant data of dtype dt, as double / as int64. */
static double get_f(enpu_dtype dt, const void *d, int64_t i) { return enpu_dtype_value_at(dt, d, i); }

static int64_t get_i(enpu_dtype dt, const void *d, int64_t i) {
    switch (dt) {
    case ENPU_DT_INT64: return ((const int64_t *)d)[i];
    case ENPU_DT_UINT64: {
        uint64_t u = ((const uint64_t *)d)[i];
        return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    case ENPU_DT_INT32: return ((const int32_t *)d)[i];
    case ENPU_DT_UINT32: return ((const uint32_t *)d)[i];
    case ENPU_DT_INT16: return ((const int16_t *)d)[i];
    case ENPU_DT_UINT16: return ((const uint16_t *)d)[i];
    case ENPU_DT_INT8: return ((const int8_t *)d)[i];
    case ENPU_DT_UINT8: return ((const uint8_t *)d)[i];
    case ENPU_DT_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: {
        double v = get_f(dt, d, i);
        if (!(v == v)) return 0;
        if (v >= 9.2e18) return INT64_MAX;
        if (v <= -9.2e18) return INT64_MIN;
        return (int64_t)v; /* ONNX Cast truncates toward zero */
    }
    }
}

/* Stores v (double) / iv (int64, used for integer dtypes when `exact`) as
 * element i of dtype dt, converting as ONNX Cast does (wrapping integers). */
static void put(enpu_dtype dt, void *d, int64_t i, double v, int64_t iv, bool exact) {
    if (!exact && is_int_dt(dt)) {
        if (dt == ENPU_DT_BOOL) {
            ((uint8_t *)d)[i] = v != 0;
            return;
        }
        iv = !(v == v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
    }
    switch (dt) {
    case ENPU_DT_FLOAT32: ((float *)d)[i] = (float)(exact ? (double)iv : v); break;
    case ENPU_DT_FLOAT64: ((double *)d)[i] = exact ? (double)iv : v; break;
    case ENPU_DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)iv; break;
    case ENPU_DT_INT8: ((int8_t *)d)[i] = (int8_t)(uint8_t)iv; break;
    case ENPU_DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)iv; break;
    case ENPU_DT_INT16: ((int16_t *)d)[i] = (int16_t)(uint16_t)iv; break;
    case ENPU_DT_INT32: ((int32_t *)d)[i] = (int32_t)(uint32_t)iv; break;
    case ENPU_DT_INT64: ((int64_t *)d)[i] = iv; break;
    case ENPU_DT_BOOL: ((uint8_t *)d)[i] = iv != 0; break;
    case ENPU_DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)iv; break;
    case ENPU_DT_UINT64: ((uint64_t *)d)[i] = (uint64_t)iv; break;
    case ENPU_DT_UNDEFINED: break;
    }
}

/* Row-major strides of dims, elements. */
static void strides(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) st[d] = s, s *= dims[d];
}

/* Offset in tensor t (read broadcast to the output shape y) of output
 * element with multi-index idx. */
static int64_t bcast_off(const enpu_tensor *t, const enpu_tensor *y, const int64_t *idx) {
    int64_t st[ENPU_MAX_RANK], off = 0;
    strides(t->rank, t->dims, st);
    for (int d = 0; d < t->rank; d++) {
        int yd = d + y->rank - t->rank;
        if (t->dims[d] != 1) off += idx[yd] * st[d];
    }
    return off;
}

static void next_idx(int rank, const int64_t *dims, int64_t *idx) {
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d]) return;
        idx[d] = 0;
    }
}

typedef struct fold {
    enpu_graph *g;
    enpu_node *n;
    enpu_tensor *y;
    void *out;
    int64_t total;
    size_t esz;
    enpu_err *err;
} fold;

/* --- elementwise ------------------------------------------------------------- */

static double unary_f(enpu_op op, double v) {
    switch (op) {
    case ENPU_OP_NEG: return -v;
    case ENPU_OP_ABS: return fabs(v);
    case ENPU_OP_FLOOR: return floor(v);
    case ENPU_OP_CEIL: return ceil(v);
    case ENPU_OP_SQRT: return sqrt(v);
    case ENPU_OP_EXP: return exp(v);
    case ENPU_OP_LOG: return log(v);
    case ENPU_OP_RECIPROCAL: return 1.0 / v;
    case ENPU_OP_ERF: return erf(v);
    case ENPU_OP_RELU: return v < 0 ? 0 : v;
    case ENPU_OP_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case ENPU_OP_TANH: return tanh(v);
    default: return v; /* Cast, Identity, Dropout */
    }
}

static int64_t unary_i(enpu_op op, int64_t v) {
    switch (op) {
    case ENPU_OP_NEG: return v == INT64_MIN ? v : -v;
    case ENPU_OP_ABS: return v < 0 && v != INT64_MIN ? -v : v;
    case ENPU_OP_RELU: return v < 0 ? 0 : v;
    default: return v; /* Floor, Ceil, Cast, Identity, Dropout */
    }
}

static bool unary_int_ok(enpu_op op) {
    return op == ENPU_OP_NEG || op == ENPU_OP_ABS || op == ENPU_OP_RELU || op == ENPU_OP_FLOOR ||
           op == ENPU_OP_CEIL || op == ENPU_OP_CAST || op == ENPU_OP_IDENTITY ||
           op == ENPU_OP_DROPOUT;
}

static int fold_unary(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0);
    bool ints = is_int_dt(x->dtype) && unary_int_ok(f->n->op);
    /* Cast between integer types wraps; from float it truncates */
    for (int64_t i = 0; i < f->total; i++) {
        if (ints && is_int_dt(f->y->dtype))
            put(f->y->dtype, f->out, i, 0, unary_i(f->n->op, get_i(x->dtype, x->data, i)), true);
        else
            put(f->y->dtype, f->out, i, unary_f(f->n->op, get_f(x->dtype, x->data, i)), 0, false);
    }
    return 0;
}

static int64_t idiv(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (a == INT64_MIN && b == -1) return INT64_MIN;
    return a / b;
}

static int fold_binary(fold *f) {
    const enpu_graph *g = f->g;
    const enpu_node *n = f->n;
    enpu_op op = n->op;
    bool ints = true;
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && !is_int_dt(g->tensors[n->in[k]].dtype)) ints = false;
    if (op == ENPU_OP_POW && ints) ints = false; /* computed in double, as ONNX does */
    int64_t idx[ENPU_MAX_RANK] = {0};
    for (int64_t i = 0; i < f->total; i++, next_idx(f->y->rank, f->y->dims, idx)) {
        double acc = 0;
        int64_t iacc = 0;
        for (int k = 0; k < n->n_in; k++) {
            const enpu_tensor *t = enpu_node_input(g, n, k);
            int64_t off = bcast_off(t, f->y, idx);
            double v = get_f(t->dtype, t->data, off);
            int64_t iv = ints ? get_i(t->dtype, t->data, off) : 0;
            if (k == 0) {
                acc = v, iacc = iv;
                continue;
            }
            switch (op) {
            case ENPU_OP_ADD: acc += v, iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv); break;
            case ENPU_OP_SUB: acc -= v, iacc = (int64_t)((uint64_t)iacc - (uint64_t)iv); break;
            case ENPU_OP_MUL: acc *= v, iacc = (int64_t)((uint64_t)iacc * (uint64_t)iv); break;
            case ENPU_OP_DIV: acc /= v, iacc = idiv(iacc, iv); break;
            case ENPU_OP_POW: acc = pow(acc, v); break;
            case ENPU_OP_MAX: acc = v > acc ? v : acc, iacc = iv > iacc ? iv : iacc; break;
            case ENPU_OP_MIN: acc = v < acc ? v : acc, iacc = iv < iacc ? iv : iacc; break;
            case ENPU_OP_EQUAL: acc = ints ? (iacc == iv) : (acc == v), iacc = (int64_t)acc; break;
            default: break;
            }
        }
        if (op == ENPU_OP_EQUAL) put(ENPU_DT_BOOL, f->out, i, acc, iacc, ints);
        else put(f->y->dtype, f->out, i, acc, iacc, ints && is_int_dt(f->y->dtype));
    }
    return 0;
}

static int fold_where(fold *f) {
    const enpu_graph *g = f->g;
    const enpu_tensor *c = enpu_node_input(g, f->n, 0), *a = enpu_node_input(g, f->n, 1),
                      *b = enpu_node_input(g, f->n, 2);
    if (a->dtype != f->y->dtype || b->dtype != f->y->dtype)
        return enpu_fail(f->err, ENPU_E_INVALID, "node '%s' (Where): X and Y differ in dtype",
                         f->n->name);
    int64_t idx[ENPU_MAX_RANK] = {0};
    for (int64_t i = 0; i < f->total; i++, next_idx(f->y->rank, f->y->dims, idx)) {
        bool take = get_i(c->dtype, c->data, bcast_off(c, f->y, idx)) != 0;
        const enpu_tensor *s = take ? a : b;
        memcpy((char *)f->out + i * (int64_t)f->esz,
               (const char *)s->data + bcast_off(s, f->y, idx) * (int64_t)f->esz, f->esz);
    }
    return 0;
}

/* --- data movement (element copies of any dtype) ------------------------------ */

static int fold_copy(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0);
    if (x->dtype != f->y->dtype || enpu_tensor_numel(x) != f->total)
        return enpu_fail(f->err, ENPU_E_INVALID, "node '%s' (%s): output does not match the input",
                         f->n->name, enpu_op_name(f->n->op));
    if (f->total) memcpy(f->out, x->data, (size_t)f->total * f->esz);
    return 0;
}

static int fold_expand(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0);
    int64_t idx[ENPU_MAX_RANK] = {0};
    for (int64_t i = 0; i < f->total; i++, next_idx(f->y->rank, f->y->dims, idx))
        memcpy((char *)f->out + i * (int64_t)f->esz,
               (const char *)x->data + bcast_off(x, f->y, idx) * (int64_t)f->esz, f->esz);
    return 0;
}

static int fold_transpose(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0);
    int64_t xs[ENPU_MAX_RANK], idx[ENPU_MAX_RANK] = {0};
    strides(x->rank, x->dims, xs);
    const int *perm = f->n->attr.shape.axes;
    for (int64_t i = 0; i < f->total; i++, next_idx(f->y->rank, f->y->dims, idx)) {
        int64_t off = 0;
        for (int d = 0; d < f->y->rank; d++) off += idx[d] * xs[perm[d]];
        memcpy((char *)f->out + i * (int64_t)f->esz, (const char *)x->data + off * (int64_t)f->esz,
               f->esz);
    }
    return 0;
}

static int fold_concat(fold *f) {
    int ax = f->n->attr.shape.axis;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++) outer *= f->y->dims[d];
    for (int d = ax + 1; d < f->y->rank; d++) inner *= f->y->dims[d];
    char *o = f->out;
    for (int k = 0; k < f->n->n_in; k++)
        if (f->g->tensors[f->n->in[k]].dtype != f->y->dtype)
            return enpu_fail(f->err, ENPU_E_INVALID, "node '%s' (Concat): inputs differ in dtype",
                             f->n->name);
    for (int64_t q = 0; q < outer; q++)
        for (int k = 0; k < f->n->n_in; k++) {
            const enpu_tensor *t = &f->g->tensors[f->n->in[k]];
            size_t chunk = (size_t)(t->dims[ax] * inner) * f->esz;
            if (chunk) memcpy(o, (const char *)t->data + (size_t)q * chunk, chunk);
            o += chunk;
        }
    return 0;
}

static int fold_slice(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0);
    const enpu_slice_attr *a = &f->n->attr.slice;
    int64_t xs[ENPU_MAX_RANK], idx[ENPU_MAX_RANK] = {0};
    strides(x->rank, x->dims, xs);
    for (int64_t i = 0; i < f->total; i++, next_idx(f->y->rank, f->y->dims, idx)) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) off += (a->starts[d] + idx[d] * a->steps[d]) * xs[d];
        memcpy((char *)f->out + i * (int64_t)f->esz, (const char *)x->data + off * (int64_t)f->esz,
               f->esz);
    }
    return 0;
}

static int fold_gather(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0), *ix = enpu_node_input(f->g, f->n, 1);
    int ax = f->n->attr.shape.axis;
    int64_t outer = 1, inner = 1, n_ix = enpu_tensor_numel(ix), dim = x->dims[ax];
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    char *o = f->out;
    size_t chunk = (size_t)inner * f->esz;
    for (int64_t q = 0; q < outer; q++)
        for (int64_t j = 0; j < n_ix; j++) {
            int64_t k = get_i(ix->dtype, ix->data, j);
            if (k < 0) k += dim;
            if (k < 0 || k >= dim)
                return enpu_fail(f->err, ENPU_E_INVALID,
                                 "node '%s' (Gather): index %lld is outside 0..%lld", f->n->name,
                                 (long long)get_i(ix->dtype, ix->data, j), (long long)dim - 1);
            if (chunk) memcpy(o, (const char *)x->data + (size_t)(q * dim + k) * chunk, chunk);
            o += chunk;
        }
    return 0;
}

/* --- generators --------------------------------------------------------------- */

static int fold_shape(fold *f) {
    const enpu_tensor *x = enpu_node_input(f->g, f->n, 0);
    int64_t *o = f->out;
    if (f->n->op == ENPU_OP_SIZE) {
        o[0] = enpu_tensor_numel(x);
        return 0;
    }
    for (int64_t i = 0; i < f->total; i++) o[i] = x->dims[f->n->attr.misc.start + i];
    return 0;
}

static int fold_range(fold *f) {
    const enpu_tensor *t[3];
    for (int i = 0; i < 3; i++) t[i] = enpu_node_input(f->g, f->n, i);
    bool ints = is_int_dt(f->y->dtype);
    for (int64_t i = 0; i < f->total; i++) {
        if (ints)
            put(f->y->dtype, f->out, i, 0,
                get_i(t[0]->dtype, t[0]->data, 0) + i * get_i(t[2]->dtype, t[2]->data, 0), true);
        else
            put(f->y->dtype, f->out, i,
                get_f(t[0]->dtype, t[0]->data, 0) + (double)i * get_f(t[2]->dtype, t[2]->data, 0),
                0, false);
    }
    return 0;
}

static int fold_const_of_shape(fold *f) {
    const enpu_misc_attr *a = &f->n->attr.misc;
    for (int64_t i = 0; i < f->total; i++)
        put(f->y->dtype, f->out, i, a->value, (int64_t)a->value, is_int_dt(f->y->dtype));
    return 0;
}

/* --- quantization ------------------------------------------------------------- */

/* Per-axis parameter index of element i of x for a scale of `cnt` values. */
static int64_t q_index(const enpu_tensor *x, int axis, int64_t cnt, int64_t i) {
    if (cnt <= 1) return 0;
    int64_t inner = 1;
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    return (i / inner) % x->dims[axis];
}

static int fold_qdq(fold *f) {
    const enpu_graph *g = f->g;
    const enpu_tensor *x = enpu_node_input(g, f->n, 0), *s = enpu_node_input(g, f->n, 1),
                      *z = enpu_node_input(g, f->n, 2);
    int64_t cnt = enpu_tensor_numel(s);
    int axis = f->n->attr.misc.axis;
    if (axis < 0) axis += x->rank;
    if (cnt > 1 && (axis < 0 || axis >= x->rank || x->dims[axis] != cnt))
        return enpu_fail(f->err, ENPU_E_INVALID, "node '%s' (%s): %lld scales along axis %d of "
                         "'%s'", f->n->name, enpu_op_name(f->n->op), (long long)cnt,
                         f->n->attr.misc.axis, x->name);
    for (int64_t i = 0; i < f->total; i++) {
        int64_t c = q_index(x, axis, cnt, i);
        double sc = get_f(s->dtype, s->data, c);
        int64_t zp = z ? get_i(z->dtype, z->data, c) : 0;
        if (f->n->op == ENPU_OP_DEQUANTIZE_LINEAR) {
            put(f->y->dtype, f->out, i,
                (double)enpu_dequantize((int32_t)(get_i(x->dtype, x->data, i) - zp), (float)sc, 0), 0,
                false);
        } else {
            int32_t lo = f->y->dtype == ENPU_DT_INT8 ? -128 : 0, hi = f->y->dtype == ENPU_DT_INT8 ? 127 : 255;
            put(f->y->dtype, f->out, i, 0,
                enpu_quantize((float)get_f(x->dtype, x->data, i), (float)sc, (int32_t)zp, lo, hi),
                true);
        }
    }
    return 0;
}

/* --- driver --------------------------------------------------------------------- */

typedef int (*fold_fn)(fold *f);

static fold_fn fold_of(enpu_op op) {
    switch (op) {
    case ENPU_OP_NEG: case ENPU_OP_ABS: case ENPU_OP_FLOOR: case ENPU_OP_CEIL: case ENPU_OP_SQRT:
    case ENPU_OP_EXP: case ENPU_OP_LOG: case ENPU_OP_RECIPROCAL: case ENPU_OP_ERF:
    case ENPU_OP_CAST: case ENPU_OP_RELU: case ENPU_OP_SIGMOID: case ENPU_OP_TANH:
        return fold_unary;
    case ENPU_OP_ADD: case ENPU_OP_SUB: case ENPU_OP_MUL: case ENPU_OP_DIV: case ENPU_OP_POW:
    case ENPU_OP_MAX: case ENPU_OP_MIN: case ENPU_OP_EQUAL:
        return fold_binary;
    case ENPU_OP_WHERE: return fold_where;
    case ENPU_OP_RESHAPE: case ENPU_OP_FLATTEN: case ENPU_OP_SQUEEZE: case ENPU_OP_UNSQUEEZE:
    case ENPU_OP_IDENTITY: case ENPU_OP_DROPOUT:
        return fold_copy;
    case ENPU_OP_EXPAND: return fold_expand;
    case ENPU_OP_TRANSPOSE: return fold_transpose;
    case ENPU_OP_CONCAT: return fold_concat;
    case ENPU_OP_SLICE: return fold_slice;
    case ENPU_OP_GATHER: return fold_gather;
    case ENPU_OP_SHAPE: case ENPU_OP_SIZE: return fold_shape;
    case ENPU_OP_RANGE: return fold_range;
    case ENPU_OP_CONSTANT_OF_SHAPE: return fold_const_of_shape;
    case ENPU_OP_QUANTIZE_LINEAR: case ENPU_OP_DEQUANTIZE_LINEAR: return fold_qdq;
    default: return NULL;
    }
}

/* Float32 ops the float reference computes (Conv of constant weights, ...). */
static int fold_fref(enpu_graph *g, enpu_node *n, void *out, enpu_err *err, bool *done) {
    *done = false;
    const float *ins[64];
    if (n->n_in > 64 || n->n_out != 1) return 0;
    for (int k = 0; k < n->n_in; k++) {
        const enpu_tensor *t = enpu_node_input(g, n, k);
        ins[k] = t ? t->data : NULL;
        if (t && t->dtype != ENPU_DT_FLOAT32 && n->op != ENPU_OP_RESHAPE) return 0;
    }
    float *outs[1] = {out};
    enpu_err e = {0};
    if (enpu_fref_node(g, n, ins, outs, &e)) return e.code == ENPU_E_NOMEM ? enpu_fail(err, e.code, "%s", e.msg) : 0;
    *done = true;
    return 0;
}

int enpu_onnx_fold_node(enpu_graph *g, int node, bool *folded, enpu_err *err) {
    enpu_node *n = &g->nodes[node];
    *folded = false;
    if (n->dead || n->n_out < 1) return 0;
    bool shape_only = n->op == ENPU_OP_SHAPE || n->op == ENPU_OP_SIZE;
    for (int k = 0; k < n->n_in; k++) {
        const enpu_tensor *t = enpu_node_input(g, n, k);
        if (!t) continue;
        if (shape_only ? t->rank < 0 : !is_const_t(t)) return 0;
    }
    if (n->n_in == 0 && n->op != ENPU_OP_CONSTANT_OF_SHAPE) return 0;
    /* only output 0 is computed: an op with more live outputs stays */
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0) {
            int cnt = 0;
            enpu_graph_consumer(g, n->out[k], &cnt);
            if (cnt || (g->tensors[n->out[k]].flags & ENPU_T_OUTPUT)) return 0;
        }
    enpu_tensor *y = enpu_node_output(g, n, 0);
    if (!y || y->rank < 0 || enpu_dtype_size(y->dtype) == 0) return 0;
    fold f = {g, n, y, NULL, enpu_tensor_numel(y), enpu_dtype_size(y->dtype), err};
    fold_fn fn = fold_of(n->op);
    if (!fn && y->dtype != ENPU_DT_FLOAT32) return 0;
    /* Float data the model computes from constants can be big (a weight
     * transposed at run time); integer results are shapes and indices. */
    f.out = calloc(f.total > 0 ? (size_t)f.total : 1, f.esz);
    if (!f.out) return FAIL(ENPU_E_NOMEM, "node '%s': out of memory folding constants", n->name);
    int rc = 0;
    if (fn) {
        if (fn == fold_unary || fn == fold_binary) {
            for (int k = 0; k < n->n_in && !rc; k++) {
                const enpu_tensor *t = enpu_node_input(g, n, k);
                if (t && !is_int_dt(t->dtype) && !is_float_dt(t->dtype))
                    rc = 1; /* strings etc.: leave it */
            }
            if (rc) {
                free(f.out);
                return 0;
            }
        }
        rc = fn(&f);
    } else {
        bool done;
        rc = fold_fref(g, n, f.out, err, &done);
        if (!rc && !done) {
            free(f.out);
            return 0;
        }
    }
    if (rc) {
        free(f.out);
        return rc;
    }
    enpu_tensor_set_data(y, f.out);
    y->producer = -1;
    if (n->op == ENPU_OP_DEQUANTIZE_LINEAR) {
        /* the values are int8/uint8 with these parameters: the quantizer
         * keeps them (weights of a pre-quantized model) */
        rc = enpu_onnx_qdq_annotate(g, n, y, err);
        if (rc) return rc;
    }
    n->dead = true;
    *folded = true;
    return 0;
}

int enpu_onnx_qdq_annotate(enpu_graph *g, const enpu_node *n, enpu_tensor *t, enpu_err *err) {
    const enpu_tensor *s = enpu_node_input(g, n, 1), *z = enpu_node_input(g, n, 2);
    /* the integer side: DequantizeLinear's input, QuantizeLinear's output */
    const enpu_tensor *q = n->op == ENPU_OP_DEQUANTIZE_LINEAR ? enpu_node_input(g, n, 0)
                                                              : enpu_node_output(g, n, 0);
    if (!s || !q || (q->dtype != ENPU_DT_INT8 && q->dtype != ENPU_DT_UINT8)) return 0;
    if (!is_const_t(s) || (z && !is_const_t(z)))
        return FAIL(ENPU_E_UNSUPPORTED, "node '%s' (%s): scale or zero point is not a constant",
                    n->name, enpu_op_name(n->op));
    int64_t cnt = enpu_tensor_numel(s);
    if (cnt < 1 || cnt > INT32_MAX || (z && enpu_tensor_numel(z) != cnt))
        return FAIL(ENPU_E_INVALID, "node '%s' (%s): %lld scales and %lld zero points", n->name,
                    enpu_op_name(n->op), (long long)cnt, (long long)(z ? enpu_tensor_numel(z) : 0));
    int axis = n->attr.misc.axis;
    if (axis < 0) axis += t->rank;
    if (cnt > 1 && (axis < 0 || axis >= t->rank || t->dims[axis] != cnt))
        return FAIL(ENPU_E_INVALID, "node '%s' (%s): %lld scales for axis %d of '%s'", n->name,
                    enpu_op_name(n->op), (long long)cnt, n->attr.misc.axis, t->name);
    float *sc = malloc((size_t)cnt * sizeof *sc);
    int32_t *zp = malloc((size_t)cnt * sizeof *zp);
    int rc = (!sc || !zp) ? FAIL(ENPU_E_NOMEM, "out of memory") : 0;
    char what[ENPU_MAX_NAME + 64];
    snprintf(what, sizeof what, "node '%s' (%s)", n->name, enpu_op_name(n->op));
    for (int64_t c = 0; c < cnt && !rc; c++)
        rc = enpu_qparams_import(what, get_f(s->dtype, s->data, c),
                                 z ? get_i(z->dtype, z->data, c) : 0, q->dtype == ENPU_DT_UINT8,
                                 &sc[c], &zp[c], err);
    if (!rc) rc = enpu_tensor_set_quant(t, cnt > 1 ? axis : -1, (int)cnt, sc, zp, err);
    free(sc);
    free(zp);
    return rc;
}
