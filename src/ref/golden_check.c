/* The checker of quantized graphs: every node's kind, types, zero points,
 * requantization pairs and accumulator range proven to be what the golden
 * reference (golden.c) and the compiler rely on, so that a .qjson from
 * elsewhere is refused with the node and field named rather than computed
 * wrongly; 16-bit graphs (docs/numerics.md §12) likewise. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "ref/qrules.h"
#include "ref/gfast.h"
#include "ref/golden_internal.h"

/* --- checking a quantized graph ------------------------------------------------------------ */


/* An int8 tensor with valid per-tensor parameters. */
static int check_i8(const enpu_node *n, const enpu_tensor *t, const char *role, bool allow_const,
                    enpu_err *err) {
    if (t->dtype != ENPU_DT_INT8)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' is %s, not int8", gd_name(n), role,
                         t->name, enpu_dtype_name(t->dtype));
    if (!allow_const && !gd_is_act(t))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' must not be a constant", gd_name(n),
                         role, t->name);
    if (!t->quant || t->quant->count != 1 || !t->quant->scale || !t->quant->zero_point)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': %s '%s' needs per-tensor quantization parameters", gd_name(n),
                         role, t->name);
    float s = t->quant->scale[0];
    int32_t z = t->quant->zero_point[0];
    if (!(s > 0) || !isfinite(s))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s': scale %g is not positive",
                         gd_name(n), role, t->name, (double)s);
    if (z < -128 || z > 127)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': %s '%s': zero point %d is outside -128..127", gd_name(n), role,
                         t->name, (int)z);
    if (t->rank < 0 || (!gd_is_act(t) && !t->data))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' has no shape or data", gd_name(n),
                         role, t->name);
    return 0;
}


static int check_clamp(const enpu_node *n, const enpu_qnode *q, enpu_err *err) {
    if (q->lo < -128 || q->hi > 127 || q->lo > q->hi)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.lo/q.hi %d..%d not within -128..127",
                         gd_name(n), (int)q->lo, (int)q->hi);
    return 0;
}

static int check_rq(const enpu_node *n, const enpu_qnode *q, enpu_err *err) {
    if (!q->M || !q->S)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M/q.S missing", gd_name(n));
    for (int c = 0; c < q->n_ch; c++) {
        if (q->M[c] > (uint32_t)INT32_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M[%d] = %u does not fit 31 bits",
                             gd_name(n), c, (unsigned)q->M[c]);
        if (q->S[c] < 0 || q->S[c] > ENPU_SHIFT_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.S[%d] = %d is outside 0..%d",
                             gd_name(n), c, (int)q->S[c], ENPU_SHIFT_MAX);
    }
    return check_clamp(n, q, err);
}

static bool acc32(int64_t lo, int64_t hi) { return lo >= INT32_MIN && hi <= INT32_MAX; }

void enpu_q_acc_range(const enpu_graph *qg, const enpu_node *n, int64_t *lo, int64_t *hi) {
    const enpu_qnode *q = n->q;
    *lo = *hi = 0;
    if (!q) return;
    if (q->kind == ENPU_Q_CONV && q->n_ch > 0 && q->w && q->bias) {
        int64_t k = q->n_w / q->n_ch;
        for (int c = 0; c < q->n_ch; c++) {
            int64_t l, h;
            enpu_acc_range(q->w + (int64_t)c * k, k, 1, -128, 127, q->bias[c], &l, &h);
            if (c == 0 || l < *lo) *lo = l;
            if (c == 0 || h > *hi) *hi = h;
        }
    } else if (q->kind == ENPU_Q_ADD || q->kind == ENPU_Q_MUL) {
        int32_t z0 = q->zp_in[0], z1 = q->zp_in[1];
        int64_t a0 = -128 - z0, b0 = 127 - z0, a1 = -128 - z1, b1 = 127 - z1;
        if (q->kind == ENPU_Q_ADD && qg->requant == ENPU_REQUANT_TFLITE) {
            /* each term is non-decreasing in its operand */
            *lo = enpu_tfl_add_term((int32_t)a0, q->A[0], q->SA[0]) +
                  enpu_tfl_add_term((int32_t)a1, q->A[1], q->SA[1]);
            *hi = enpu_tfl_add_term((int32_t)b0, q->A[0], q->SA[0]) +
                  enpu_tfl_add_term((int32_t)b1, q->A[1], q->SA[1]);
        } else if (q->kind == ENPU_Q_ADD) {
            *lo = a0 * (int64_t)q->A[0] + a1 * (int64_t)q->A[1];
            *hi = b0 * (int64_t)q->A[0] + b1 * (int64_t)q->A[1];
        } else {
            int64_t p[4] = {a0 * a1, a0 * b1, b0 * a1, b0 * b1};
            *lo = *hi = p[0];
            for (int i = 1; i < 4; i++) {
                if (p[i] < *lo) *lo = p[i];
                if (p[i] > *hi) *hi = p[i];
            }
        }
    }
}

/* requant tflite: TFLite's left shift (S < 31) is an int32 multiply; the
 * accumulator range [lo, hi] of what it shifts must keep it inside int32,
 * so the wrap of enpu_tfl_scale never happens. */
static int tfl_shift_ok(const enpu_node *n, const char *what, int64_t lo, int64_t hi, int S,
                        enpu_err *err) {
    if (S < 1 || S >= 31) return 0;
    int64_t f = (int64_t)1 << (31 - S);
    if (lo >= (int64_t)INT32_MIN / f && hi <= (int64_t)INT32_MAX / f) return 0;
    return enpu_fail(err, ENPU_E_INVALID,
                     "node '%s': %s: [%lld, %lld] shifted left by %d leaves int32 (requant tflite)",
                     n->name ? n->name : "", what, (long long)lo, (long long)hi, 31 - S);
}

/* numpy broadcast of a and b equals y. */
static bool bcast_ok(const enpu_tensor *a, const enpu_tensor *b, const enpu_tensor *y) {
    int r = a->rank > b->rank ? a->rank : b->rank;
    if (y->rank != r) return false;
    for (int d = 0; d < r; d++) {
        int64_t da = d - (r - a->rank) >= 0 ? a->dims[d - (r - a->rank)] : 1;
        int64_t db = d - (r - b->rank) >= 0 ? b->dims[d - (r - b->rank)] : 1;
        if (da != db && da != 1 && db != 1) return false;
        if (y->dims[d] != (da == 1 ? db : da)) return false;
    }
    return true;
}

static int check_conv(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    const enpu_qnode *q = n->q;
    enpu_qorigin want;
    switch (n->op) {
    case ENPU_OP_CONV: want = ENPU_QO_CONV; break;
    case ENPU_OP_GEMM: want = ENPU_QO_FC; break;
    case ENPU_OP_AVGPOOL: case ENPU_OP_GLOBAL_AVGPOOL: case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_SUM: want = ENPU_QO_AVGPOOL; break;
    case ENPU_OP_BATCHNORM: want = ENPU_QO_BN; break;
    case ENPU_OP_RELU: case ENPU_OP_CLIP: want = ENPU_QO_RELU; break;
    case ENPU_OP_IDENTITY: want = ENPU_QO_RESCALE; break;
    default:
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind conv", gd_name(n),
                         enpu_op_name(n->op));
    }
    if (q->origin != want)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.origin %s does not fit op %s",
                         gd_name(n), enpu_qorigin_name(q->origin), enpu_op_name(n->op));
    enpu_qconv_geom geo;
    int rc = enpu_qconv_geom_of(qg, n, &geo, err);
    if (rc) return rc;
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    if ((rc = check_i8(n, x, "input", false, err)) || (rc = check_i8(n, y, "output", false, err)))
        return rc;
    if (q->n_ch != geo.co)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.n_ch %d is not the %lld channels",
                         gd_name(n), q->n_ch, (long long)geo.co);
    if (!q->w || !q->bias || q->n_w != geo.co * geo.k)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': q.w has %lld values, %lld channels x %lld expected", gd_name(n),
                         (long long)q->n_w, (long long)geo.co, (long long)geo.k);
    /* TFLite's AVERAGE_POOL_2D averages the stored values (output and input
     * share their parameters): its requantization adds no zero point */
    bool tfl_avg = qg->requant == ENPU_REQUANT_TFLITE && n->op == ENPU_OP_AVGPOOL;
    if (q->zp_in[0] != gd_zp(x) || q->zp_out != (tfl_avg ? 0 : gd_zp(y)))
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': q.zp_in[0]/q.zp_out %d/%d differ from the tensors' %d/%d",
                         gd_name(n), (int)q->zp_in[0], (int)q->zp_out, (int)gd_zp(x),
                         (int)(tfl_avg ? 0 : gd_zp(y)));
    if (tfl_avg && (gd_scale(x) != gd_scale(y) || gd_zp(x) != gd_zp(y)))
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': a TFLite average pool's input and output must share scale "
                         "and zero point",
                         gd_name(n));
    if ((rc = check_rq(n, q, err))) return rc;
    for (int c = 0; c < q->n_ch; c++) {
        int64_t lo, hi;
        enpu_acc_range(q->w + (int64_t)c * geo.k, geo.k, 1, -128, 127, q->bias[c], &lo, &hi);
        if (!acc32(lo, hi))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': channel %d: accumulator may reach [%lld, %lld], "
                             "beyond 32 bits",
                             gd_name(n), c, (long long)lo, (long long)hi);
        if (qg->requant == ENPU_REQUANT_TFLITE &&
            (rc = tfl_shift_ok(n, "accumulator", lo, hi, q->S[c], err)))
            return rc;
        if (tfl_avg && q->bias[c] != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': q.bias[%d] of a TFLite average pool must be 0", gd_name(n), c);
    }
    /* Conv/Gemm constant inputs, when present, hold exactly q->w and q->bias. */
    if (n->op == ENPU_OP_CONV || n->op == ENPU_OP_GEMM) {
        const enpu_tensor *w = enpu_node_input(qg, n, 1), *b = enpu_node_input(qg, n, 2);
        if (!w || w->dtype != ENPU_DT_INT8 || !w->data || enpu_tensor_numel(w) != q->n_w ||
            memcmp(w->data, q->w, (size_t)q->n_w) != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input 1 must be an int8 constant equal to q.w", gd_name(n));
        if (b && (b->dtype != ENPU_DT_INT32 || !b->data || enpu_tensor_numel(b) != q->n_ch ||
                  memcmp(b->data, q->bias, (size_t)q->n_ch * sizeof(int32_t)) != 0))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input 2 must be an int32 constant equal to q.bias",
                             gd_name(n));
    }
    return 0;
}


/* A move the golden runs through its float kernel on a one-node twin, as a
 * host op: every output element is one input element (or, for a Pad of
 * mode edge/reflect, a copy of one), so dequantizing, copying and
 * quantizing with the same parameters gives back the int8 values exactly. */
bool gd_move_by_twin(const enpu_node *n) {
    switch (n->op) {
    case ENPU_OP_SLICE: case ENPU_OP_GATHER: case ENPU_OP_EXPAND: case ENPU_OP_RESIZE: return true;
    case ENPU_OP_PAD: return n->attr.pad.mode != ENPU_PADMODE_CONSTANT;
    default: return false;
    }
}

static int check_move(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    if (!enpu_q_is_move_op(n->op))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind move", gd_name(n),
                         enpu_op_name(n->op));
    if (n->op == ENPU_OP_RESIZE && n->attr.resize.mode != ENPU_RESIZE_NEAREST)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': a move Resize is a nearest one", gd_name(n));
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    int rc;
    if (!x || !y) return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input", gd_name(n));
    if ((rc = check_i8(n, x, "input", false, err)) || (rc = check_i8(n, y, "output", false, err)))
        return rc;
    int n_act = n->op == ENPU_OP_CONCAT ? n->n_in : 1;
    for (int i = 0; i < n_act; i++) {
        const enpu_tensor *xi = enpu_node_input(qg, n, i);
        if (!xi) return enpu_fail(err, ENPU_E_INVALID, "node '%s': input %d missing", gd_name(n), i);
        if ((rc = check_i8(n, xi, "input", false, err))) return rc;
        if (gd_scale(xi) != gd_scale(y) || gd_zp(xi) != gd_zp(y))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input '%s' and output '%s' must share scale and zero "
                             "point",
                             gd_name(n), xi->name, y->name);
    }
    if (n->q->zp_out != gd_zp(y) || n->q->zp_in[0] != gd_zp(x))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.zp_in[0]/q.zp_out differ from the "
                         "tensors'", gd_name(n));
    if (gd_move_by_twin(n)) return gd_check_twin(qg, n, err);
    switch (n->op) {
    case ENPU_OP_TRANSPOSE: {
        const enpu_shape_attr *a = &n->attr.shape;
        if (a->n_axes != x->rank || y->rank != x->rank)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': perm has %d axes for rank %d",
                             gd_name(n), a->n_axes, x->rank);
        bool used[ENPU_MAX_RANK] = {false};
        for (int d = 0; d < x->rank; d++) {
            int p = a->axes[d];
            if (p < 0 || p >= x->rank || used[p])
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': perm is not a permutation",
                                 gd_name(n));
            used[p] = true;
            if (y->dims[d] != x->dims[p]) return gd_bad_out(n, y, "transposed input", err);
        }
        return 0;
    }
    case ENPU_OP_CONCAT: {
        int ax = n->attr.shape.axis;
        if (ax < 0 || ax >= x->rank || y->rank != x->rank)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': axis %d for rank %d", gd_name(n), ax,
                             x->rank);
        int64_t sum = 0;
        for (int i = 0; i < n->n_in; i++) {
            const enpu_tensor *xi = enpu_node_input(qg, n, i);
            if (xi->rank != x->rank)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': inputs of different ranks",
                                 gd_name(n));
            for (int d = 0; d < x->rank; d++)
                if (d != ax && xi->dims[d] != y->dims[d])
                    return gd_bad_out(n, y, "concatenated inputs", err);
            sum += xi->dims[ax];
        }
        if (sum != y->dims[ax]) return gd_bad_out(n, y, "concatenated inputs", err);
        return 0;
    }
    case ENPU_OP_PAD: {
        const enpu_pad_attr *a = &n->attr.pad;
        if (a->n_pads != 2 * x->rank || y->rank != x->rank)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': %d pads for rank %d", gd_name(n),
                             a->n_pads, x->rank);
        if (a->value != 0.0f || a->mode != ENPU_PADMODE_CONSTANT)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': a MOVE Pad fills with 0 only (value %g)", gd_name(n),
                             (double)a->value);
        for (int d = 0; d < x->rank; d++)
            if (y->dims[d] != x->dims[d] + a->pads[d] + a->pads[d + x->rank])
                return gd_bad_out(n, y, "padded input", err);
        return 0;
    }
    default:
        if (enpu_tensor_numel(x) != enpu_tensor_numel(y))
            return gd_bad_out(n, y, "same element count as the input", err);
        return 0;
    }
}

static int check_node(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    const enpu_qnode *q = n->q;
    if (!q) return enpu_fail(err, ENPU_E_INVALID, "node '%s': no quantization block (q)", gd_name(n));
    if (n->n_out < 1 || n->out[0] < 0)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': no output", gd_name(n));
    int need_ch = q->kind == ENPU_Q_ADD || q->kind == ENPU_Q_MUL ? 1 : 0;
    if (q->kind != ENPU_Q_CONV && q->n_ch != need_ch)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.n_ch is %d, %d expected for kind %s",
                         gd_name(n), q->n_ch, need_ch, enpu_qkind_name(q->kind));
    if (q->kind != ENPU_Q_CONV && (q->w || q->n_w))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.w given for kind %s", gd_name(n),
                         enpu_qkind_name(q->kind));
    int rc;
    const enpu_tensor *y = enpu_node_output(qg, n, 0);
    switch (q->kind) {
    case ENPU_Q_CONV: return check_conv(qg, n, err);
    case ENPU_Q_MAXPOOL: {
        if (n->op != ENPU_OP_MAXPOOL)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind maxpool",
                             gd_name(n), enpu_op_name(n->op));
        enpu_qconv_geom geo;
        if ((rc = gd_maxpool_geom(qg, n, &geo, err))) return rc;
        const enpu_tensor *x = enpu_node_input(qg, n, 0);
        if ((rc = check_i8(n, x, "input", false, err)) ||
            (rc = check_i8(n, y, "output", false, err)))
            return rc;
        if (gd_scale(x) != gd_scale(y) || gd_zp(x) != gd_zp(y) || q->zp_in[0] != gd_zp(x) || q->zp_out != gd_zp(y))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input and output must share scale and zero point",
                             gd_name(n));
        return check_clamp(n, q, err);
    }
    case ENPU_Q_ADD:
    case ENPU_Q_MUL: {
        enpu_op want = q->kind == ENPU_Q_ADD ? ENPU_OP_ADD : ENPU_OP_MUL;
        if (n->op != want || n->n_in != 2)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind %s",
                             gd_name(n), enpu_op_name(n->op), enpu_qkind_name(q->kind));
        const enpu_tensor *a = enpu_node_input(qg, n, 0), *b = enpu_node_input(qg, n, 1);
        if (!a || !b) return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input", gd_name(n));
        if ((rc = check_i8(n, a, "input", true, err)) || (rc = check_i8(n, b, "input", true, err)) ||
            (rc = check_i8(n, y, "output", false, err)))
            return rc;
        if (!bcast_ok(a, b, y))
            return gd_bad_out(n, y, "numpy broadcast of the inputs", err);
        if (q->zp_in[0] != gd_zp(a) || q->zp_in[1] != gd_zp(b) || q->zp_out != gd_zp(y))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': q zero points differ from the tensors'", gd_name(n));
        if ((rc = check_rq(n, q, err))) return rc;
        bool tfl = qg->requant == ENPU_REQUANT_TFLITE;
        if (q->kind == ENPU_Q_ADD && tfl) {
            for (int i = 0; i < 2; i++) {
                int32_t z = q->zp_in[i];
                int64_t d = (int64_t)1 << ENPU_TFL_ADD_LEFT_SHIFT;
                if (q->A[i] > (uint32_t)INT32_MAX || q->SA[i] < 0 || q->SA[i] > ENPU_SHIFT_MAX)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "node '%s': q.A[%d]/q.SA[%d] = %u/%d out of range", gd_name(n), i,
                                     i, (unsigned)q->A[i], (int)q->SA[i]);
                if ((rc = tfl_shift_ok(n, "add input", (-128 - z) * d, (127 - z) * d, q->SA[i], err)))
                    return rc;
            }
        } else if (q->kind == ENPU_Q_ADD) {
            if (q->SA[0] || q->SA[1])
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': q.SA is for requant tflite only", gd_name(n));
            if (q->M[0] != 1)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M[0] of an add must be 1",
                                 gd_name(n));
            for (int i = 0; i < 2; i++)
                if (q->A[i] > (uint32_t)INT32_MAX)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "node '%s': q.A[%d] = %u does not fit 31 bits", gd_name(n), i,
                                     (unsigned)q->A[i]);
        }
        int64_t lo, hi;
        enpu_q_acc_range(qg, n, &lo, &hi);
        if (!acc32(lo, hi))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': accumulator may reach [%lld, %lld], beyond 32 bits",
                             gd_name(n), (long long)lo, (long long)hi);
        return tfl ? tfl_shift_ok(n, "accumulator", lo, hi, q->S[0], err) : 0;
    }
    case ENPU_Q_TABLE: {
        if (qg->requant == ENPU_REQUANT_TFLITE)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': a table activation has no requant tflite rule (TFLite's "
                             "kernels run as host nodes)",
                             gd_name(n));
        if (!enpu_q_is_table_op(n->op))
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind table",
                             gd_name(n), enpu_op_name(n->op));
        const enpu_tensor *x = enpu_node_input(qg, n, 0);
        if (!x) return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input", gd_name(n));
        if ((rc = check_i8(n, x, "input", false, err)) ||
            (rc = check_i8(n, y, "output", false, err)))
            return rc;
        if (enpu_tensor_numel(x) != enpu_tensor_numel(y))
            return gd_bad_out(n, y, "same as the input", err);
        if (!q->table) return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.table missing", gd_name(n));
        char what[ENPU_MAX_NAME + 32];
        snprintf(what, sizeof what, "node '%s': q.table", gd_name(n));
        if ((rc = enpu_pwl_validate(what, q->table, ENPU_MULT_BITS_MAX, 1, err))) return rc;
        if (q->table->zp_out != gd_zp(y) || q->zp_out != gd_zp(y) || q->zp_in[0] != gd_zp(x))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': table/q zero points differ from the tensors'", gd_name(n));
        return 0;
    }
    case ENPU_Q_MOVE: return check_move(qg, n, err);
    case ENPU_Q_HOST: {
        if (qg->requant == ENPU_REQUANT_TFLITE) {
            /* TFLite's integer kernel: int8 in, int8 out, parameters it accepts */
            const enpu_tensor *x = enpu_node_input(qg, n, 0);
            if (n->n_in != 1 || n->n_out != 1 || !x)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': a host node has one input "
                                 "and one output", gd_name(n));
            if ((rc = check_i8(n, x, "input", false, err)) ||
                (rc = check_i8(n, y, "output", false, err)))
                return rc;
            int k = enpu_tfl_kernel_of(n->op);
            if (k < 0)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': host op %s has no TFLite integer kernel (requant "
                                 "tflite)", gd_name(n), enpu_op_name(n->op));
            if (enpu_tensor_numel(x) != enpu_tensor_numel(y) || x->rank != y->rank)
                return gd_bad_out(n, y, "same as the input", err);
            if (n->op == ENPU_OP_SOFTMAX && (n->attr.shape.axis < 0 || n->attr.shape.axis >= x->rank ||
                                             x->dims[n->attr.shape.axis] >= 4096))
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': softmax axis %d of rank %d: TFLite's kernel sums at "
                                 "most 4095 values", gd_name(n), n->attr.shape.axis, x->rank);
            enpu_tfl_kparams p;
            char what[ENPU_MAX_NAME + 16];
            snprintf(what, sizeof what, "node '%s'", gd_name(n));
            return enpu_tfl_kernel_prepare((enpu_tfl_kernel)k, gd_scale(x), gd_zp(x), gd_scale(y), gd_zp(y), what,
                                           &p, err);
        }
        /* what the float reference would refuse at run time is refused here */
        if ((rc = gd_check_twin(qg, n, err))) return rc;
        for (int i = 0; i < n->n_out; i++) {
            const enpu_tensor *t = enpu_node_output(qg, n, i);
            if (!t) continue;
            if (gd_unquantized(t)) continue;
            if ((rc = check_i8(n, t, "output", false, err))) return rc;
        }
        for (int i = 0; i < n->n_in; i++) {
            const enpu_tensor *t = enpu_node_input(qg, n, i);
            if (t && t->dtype == ENPU_DT_INT8 && (rc = check_i8(n, t, "input", true, err)))
                return rc;
        }
        return 0;
    }
    }
    return enpu_fail(err, ENPU_E_INVALID, "node '%s': unknown q.kind %d", gd_name(n), (int)q->kind);
}

static int check_graph16(const enpu_graph *qg, enpu_err *err);

int enpu_qgraph_check(const enpu_graph *qg, enpu_err *err) {
    if (!qg) return enpu_fail(err, ENPU_E_USAGE, "enpu_qgraph_check: NULL graph");
    int rc = enpu_graph_validate(qg, err);
    if (rc) return rc;
    if (enpu_qgraph_bits(qg) == 16) return check_graph16(qg, err);
    for (int i = 0; i < qg->n_inputs; i++) {
        const enpu_tensor *t = &qg->tensors[qg->inputs[i]];
        enpu_node fake = {.name = "graph input"};
        if ((rc = check_i8(&fake, t, "tensor", false, err))) return rc;
    }
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        if ((rc = check_node(qg, n, err))) return rc;
        /* A float32 activation may only feed host nodes. */
        if (n->q->kind != ENPU_Q_HOST)
            for (int k = 0; k < n->n_in; k++) {
                const enpu_tensor *t = enpu_node_input(qg, n, k);
                if (t && gd_is_act(t) && t->dtype != ENPU_DT_INT8)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "node '%s': input '%s' is %s; NPU nodes read int8", gd_name(n),
                                     t->name, enpu_dtype_name(t->dtype));
            }
    }
    for (int i = 0; i < qg->n_outputs; i++) {
        const enpu_tensor *t = &qg->tensors[qg->outputs[i]];
        if (t->dtype != ENPU_DT_INT8 && t->dtype != ENPU_DT_FLOAT32)
            return enpu_fail(err, ENPU_E_INVALID, "graph output '%s' is %s", t->name,
                             enpu_dtype_name(t->dtype));
        if (t->dtype == ENPU_DT_INT8 && (!t->quant || t->quant->count != 1))
            return enpu_fail(err, ENPU_E_INVALID, "graph output '%s' has no quantization",
                             t->name);
    }
    return 0;
}

/* --- 16-bit graphs (docs/numerics.md §12) ---------------------------------------------------- */

int enpu_qgraph_bits(const enpu_graph *qg) {
    for (int i = 0; qg && i < qg->n_inputs; i++)
        if (qg->tensors[qg->inputs[i]].dtype == ENPU_DT_INT16) return 16;
    return 8;
}

/* An int16 activation with one scale and zero point 0. */
static int check_i16(const enpu_node *n, const enpu_tensor *t, const char *role, enpu_err *err) {
    if (t->dtype != ENPU_DT_INT16 || !gd_is_act(t))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' is %s%s, not an int16 activation "
                         "(a 16-bit graph)", gd_name(n), role, t->name, enpu_dtype_name(t->dtype),
                         gd_is_act(t) ? "" : " constant");
    if (!t->quant || t->quant->count != 1 || !(t->quant->scale[0] > 0) ||
        !isfinite(t->quant->scale[0]) || t->quant->zero_point[0] != 0 || t->rank < 0)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': %s '%s' needs one positive scale and zero point 0", gd_name(n),
                         role, t->name);
    return 0;
}

static int check_node16(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    const enpu_qnode *q = n->q;
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    int rc;
    if (!q) return enpu_fail(err, ENPU_E_INVALID, "node '%s': no quantization block (q)", gd_name(n));
    if (!y) return enpu_fail(err, ENPU_E_INVALID, "node '%s': no output", gd_name(n));
    if (q->w)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': int8 q.w in a 16-bit graph", gd_name(n));
    switch (q->kind) {
    case ENPU_Q_CONV: {
        enpu_qconv_geom geo;
        if ((rc = enpu_qconv_geom_of(qg, n, &geo, err))) return rc;
        if ((rc = check_i16(n, x, "input", err)) || (rc = check_i16(n, y, "output", err))) return rc;
        if (q->n_ch != geo.co || !q->w16 || !q->bias || q->n_w != geo.co * geo.k)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': q.w16 has %lld values, %lld channels x %lld expected", gd_name(n),
                             (long long)q->n_w, (long long)geo.co, (long long)geo.k);
        if (q->zp_in[0] || q->zp_out)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': zero points must be 0", gd_name(n));
        if (!q->M || !q->S) return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M/q.S missing", gd_name(n));
        for (int c = 0; c < q->n_ch; c++)
            if (q->M[c] > (uint32_t)INT32_MAX || q->S[c] < 0 || q->S[c] > ENPU_SHIFT_MAX)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M/q.S[%d] = %u/%d out of range",
                                 gd_name(n), c, (unsigned)q->M[c], (int)q->S[c]);
        if (q->lo < -ENPU_I16_QMAX - 1 || q->hi > ENPU_I16_QMAX || q->lo > q->hi)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.lo/q.hi %d..%d not within int16",
                             gd_name(n), (int)q->lo, (int)q->hi);
        for (int c = 0; c < q->n_ch; c++) {
            int64_t lo, hi;
            enpu_acc_range16(q->w16 + (int64_t)c * geo.k, geo.k, 1, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX,
                             q->bias[c], &lo, &hi);
            if (lo == INT64_MIN || hi == INT64_MAX)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': channel %d: accumulator beyond 64 bits", gd_name(n), c);
        }
        if (n->op == ENPU_OP_CONV || n->op == ENPU_OP_GEMM) {
            const enpu_tensor *w = enpu_node_input(qg, n, 1), *b = enpu_node_input(qg, n, 2);
            if (!w || w->dtype != ENPU_DT_INT16 || !w->data || enpu_tensor_numel(w) != q->n_w ||
                memcmp(w->data, q->w16, (size_t)q->n_w * sizeof(int16_t)) != 0)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': input 1 must be an int16 constant equal to q.w16", gd_name(n));
            if (b && (b->dtype != ENPU_DT_INT32 || !b->data || enpu_tensor_numel(b) != q->n_ch ||
                      memcmp(b->data, q->bias, (size_t)q->n_ch * sizeof(int32_t)) != 0))
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': input 2 must be an int32 constant equal to q.bias", gd_name(n));
        }
        return 0;
    }
    case ENPU_Q_MOVE:
    case ENPU_Q_HOST: {
        /* computed on the float reference's twin: what it refuses is refused here */
        host_twin h;
        memset(&h, 0, sizeof h);
        rc = gd_build_twin(qg, n, &h, err);
        gd_twin_free(&h);
        if (rc) return rc;
        for (int i = 0; i < n->n_in; i++) {
            const enpu_tensor *t = enpu_node_input(qg, n, i);
            if (t && gd_is_act(t) && !gd_unquantized(t) && (rc = check_i16(n, t, "input", err)))
                return rc;
        }
        if (n->n_out != 1 && q->kind != ENPU_Q_HOST)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': one output expected", gd_name(n));
        for (int i = 0; i < n->n_out; i++) {
            const enpu_tensor *t = enpu_node_output(qg, n, i);
            if (t && !gd_unquantized(t) && (rc = check_i16(n, t, "output", err))) return rc;
        }
        if (q->kind == ENPU_Q_MOVE && (y->dtype != ENPU_DT_INT16 || x->dtype != ENPU_DT_INT16 ||
                                       gd_scale(x) != gd_scale(y)))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': a move keeps its input's int16 values and scale", gd_name(n));
        return 0;
    }
    default:
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': kind %s in a 16-bit graph (the host runs it)",
                         gd_name(n), enpu_qkind_name(q->kind));
    }
}

/* enpu_qgraph_check of a 16-bit graph: int16 activations throughout. */
static int check_graph16(const enpu_graph *qg, enpu_err *err) {
    int rc;
    enpu_node fake = {.name = "graph input"};
    for (int i = 0; i < qg->n_inputs; i++)
        if ((rc = check_i16(&fake, &qg->tensors[qg->inputs[i]], "tensor", err))) return rc;
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        if ((rc = check_node16(qg, n, err))) return rc;
        if (n->q->kind != ENPU_Q_HOST)
            for (int k = 0; k < n->n_in; k++) {
                const enpu_tensor *t = enpu_node_input(qg, n, k);
                if (t && gd_is_act(t) && t->dtype != ENPU_DT_INT16)
                    return enpu_fail(err, ENPU_E_INVALID, "node '%s': input '%s' is %s; a 16-bit "
                                     "graph's NPU nodes read int16", gd_name(n), t->name,
                                     enpu_dtype_name(t->dtype));
            }
    }
    for (int i = 0; i < qg->n_outputs; i++) {
        const enpu_tensor *t = &qg->tensors[qg->outputs[i]];
        if (t->dtype != ENPU_DT_INT16 && t->dtype != ENPU_DT_FLOAT32)
            return enpu_fail(err, ENPU_E_INVALID, "graph output '%s' is %s", t->name,
                             enpu_dtype_name(t->dtype));
    }
    return 0;
}
