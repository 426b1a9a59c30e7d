/* Golden int8 reference: executes a quantized graph with integer arithmetic
 * only (numerics.h, pwl.h), node by node, exactly per the per-kind semantics
 * of quant.h, keeping every tensor's value for layer-by-layer comparison.
 * HOST nodes run in float through a one-node twin graph on the float
 * reference.  Also here: the geometry of CONV-kind nodes and the checker of
 * quantized graphs, so that what the golden relies on is checked in the same
 * file that relies on it. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "ref/qrules.h"
#include "ref/gfast.h"

#define WIN_LIMIT ENPU_WIN_LIMIT

static const char *nm(const enpu_node *n) { return n->name ? n->name : ""; }

/* --- names and op classes -------------------------------------------------------- */

const char *enpu_qkind_name(enpu_qkind k) {
    switch (k) {
    case ENPU_Q_CONV: return "conv";
    case ENPU_Q_MAXPOOL: return "maxpool";
    case ENPU_Q_ADD: return "add";
    case ENPU_Q_MUL: return "mul";
    case ENPU_Q_TABLE: return "table";
    case ENPU_Q_MOVE: return "move";
    case ENPU_Q_HOST: return "host";
    }
    return "unknown";
}

const char *enpu_qorigin_name(enpu_qorigin o) {
    switch (o) {
    case ENPU_QO_CONV: return "conv";
    case ENPU_QO_FC: return "fc";
    case ENPU_QO_AVGPOOL: return "avgpool";
    case ENPU_QO_BN: return "bn";
    case ENPU_QO_RELU: return "relu";
    case ENPU_QO_RESCALE: return "rescale";
    }
    return "unknown";
}

bool enpu_q_is_table_op(enpu_op op) {
    switch (op) {
    case ENPU_OP_SIGMOID: case ENPU_OP_TANH: case ENPU_OP_HARD_SIGMOID: case ENPU_OP_HARD_SWISH:
    case ENPU_OP_SILU: case ENPU_OP_LEAKY_RELU: case ENPU_OP_GELU: case ENPU_OP_SQRT:
    case ENPU_OP_EXP: case ENPU_OP_LOG: case ENPU_OP_ERF: case ENPU_OP_NEG: case ENPU_OP_ABS:
    case ENPU_OP_RECIPROCAL: case ENPU_OP_FLOOR: case ENPU_OP_CEIL: case ENPU_OP_POW:
        return true;
    default:
        return false;
    }
}

enpu_pwl_fn enpu_q_table_fn(const enpu_node *n, enpu_pwl_params *ctx, const void **ctx_out) {
    *ctx_out = NULL;
    switch (n->op) {
    case ENPU_OP_SIGMOID: return enpu_pwl_sigmoid;
    case ENPU_OP_TANH: return enpu_pwl_tanh;
    case ENPU_OP_HARD_SWISH: return enpu_pwl_hard_swish;
    case ENPU_OP_SILU: return enpu_pwl_silu;
    case ENPU_OP_HARD_SIGMOID:
        ctx->alpha = n->attr.act.alpha;
        ctx->beta = n->attr.act.beta;
        *ctx_out = ctx;
        return enpu_pwl_hard_sigmoid;
    case ENPU_OP_LEAKY_RELU:
        ctx->alpha = n->attr.act.alpha;
        ctx->beta = 0;
        *ctx_out = ctx;
        return enpu_pwl_leaky_relu;
    case ENPU_OP_GELU: return n->attr.misc.approximate ? enpu_pwl_gelu_tanh : enpu_pwl_gelu;
    case ENPU_OP_SQRT: return enpu_pwl_sqrt;
    case ENPU_OP_EXP: return enpu_pwl_exp;
    case ENPU_OP_LOG: return enpu_pwl_log;
    case ENPU_OP_ERF: return enpu_pwl_erf;
    case ENPU_OP_NEG: return enpu_pwl_neg;
    case ENPU_OP_ABS: return enpu_pwl_abs;
    case ENPU_OP_RECIPROCAL: return enpu_pwl_reciprocal;
    case ENPU_OP_FLOOR: return enpu_pwl_floor;
    case ENPU_OP_CEIL: return enpu_pwl_ceil;
    case ENPU_OP_POW: /* the constant exponent, copied into the attributes */
        ctx->alpha = n->attr.act.alpha;
        ctx->beta = 0;
        *ctx_out = ctx;
        return enpu_pwl_pow;
    default: return NULL;
    }
}

bool enpu_q_is_move_op(enpu_op op) {
    switch (op) {
    case ENPU_OP_RESHAPE: case ENPU_OP_FLATTEN: case ENPU_OP_SQUEEZE: case ENPU_OP_UNSQUEEZE:
    case ENPU_OP_TRANSPOSE: case ENPU_OP_CONCAT: case ENPU_OP_PAD: case ENPU_OP_IDENTITY:
    case ENPU_OP_DROPOUT: case ENPU_OP_SLICE: case ENPU_OP_GATHER: case ENPU_OP_EXPAND:
    case ENPU_OP_RESIZE: case ENPU_OP_CAST:
        return true;
    default:
        return false;
    }
}

/* --- geometry -------------------------------------------------------------------------- */

/* Window of a Conv/pool on a rank-3 or rank-4 input (1-D: the W entries). */
static int window_geom(const enpu_node *n, const enpu_window *win, int rank, int kh, int kw,
                       enpu_qconv_geom *q, enpu_err *err) {
    enpu_win2d w2;
    int rc = enpu_window_2d(n, win, rank, kh, kw, &w2, err);
    if (rc) return rc;
    q->kh = w2.kh;
    q->kw = w2.kw;
    q->sh = w2.sh;
    q->sw = w2.sw;
    q->dh = w2.dh;
    q->dw = w2.dw;
    q->pt = w2.pt;
    q->pl = w2.pl;
    q->pb = w2.pb;
    q->pr = w2.pr;
    return 0;
}

/* Output extent along one axis; floor or ceil mode; -1 if the kernel does
 * not fit the padded input. */
static int64_t extent(int64_t in, int pa, int pb, int k, int s, int d, bool ceil_mode) {
    int64_t span = in + pa + pb - ((int64_t)d * (k - 1) + 1);
    if (span < 0) return -1;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static void spatial_of(const enpu_tensor *x, int64_t *h, int64_t *w) {
    if (x->rank == 4) {
        *h = x->dims[2];
        *w = x->dims[3];
        return;
    }
    *h = 1;
    *w = 1;
    for (int d = 2; d < x->rank; d++) *w *= x->dims[d];
}

static int bad_out(const enpu_node *n, const enpu_tensor *y, const char *why, enpu_err *err) {
    return enpu_fail(err, ENPU_E_INVALID, "node '%s': output '%s' has the wrong shape (%s)",
                     nm(n), y->name, why);
}

int enpu_qconv_geom_of(const enpu_graph *qg, const enpu_node *n, enpu_qconv_geom *q,
                       enpu_err *err) {
    memset(q, 0, sizeof *q);
    q->kh = q->kw = q->sh = q->sw = q->dh = q->dw = q->group = 1;
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    if (!x || !y || x->rank < 0 || y->rank < 0)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input or output", nm(n));
    int rc;
    switch (n->op) {
    case ENPU_OP_CONV: {
        const enpu_tensor *w = enpu_node_input(qg, n, 1);
        if (x->rank != 3 && x->rank != 4)
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': Conv input of rank %d", nm(n),
                             x->rank);
        if (!w || w->rank != x->rank || w->dims[0] < 1 || w->dims[1] < 1 ||
            w->dims[w->rank - 1] > WIN_LIMIT || (x->rank == 4 && w->dims[2] > WIN_LIMIT))
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': bad weight tensor", nm(n));
        rc = window_geom(n, &n->attr.conv.w, x->rank, x->rank == 4 ? (int)w->dims[2] : 1,
                         (int)w->dims[w->rank - 1], q, err);
        if (rc) return rc;
        q->group = n->attr.conv.group;
        q->co = w->dims[0];
        q->ci = x->dims[1];
        if (q->group < 1 || q->co % q->group != 0 || q->ci != w->dims[1] * q->group)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': group %d does not fit %lld input and %lld output "
                             "channels",
                             nm(n), q->group, (long long)q->ci, (long long)q->co);
        break;
    }
    case ENPU_OP_AVGPOOL:
        if (x->rank != 3 && x->rank != 4)
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': AveragePool input of rank %d",
                             nm(n), x->rank);
        rc = window_geom(n, &n->attr.pool.w, x->rank, n->attr.pool.w.kernel[0],
                         n->attr.pool.w.kernel[1], q, err);
        if (rc) return rc;
        q->ci = q->co = x->dims[1];
        q->group = (int)q->ci;
        break;
    case ENPU_OP_GLOBAL_AVGPOOL:
        if (x->rank < 3)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': input of rank %d", nm(n), x->rank);
        q->ci = q->co = x->dims[1];
        q->group = (int)q->ci;
        spatial_of(x, &q->h, &q->w);
        if (q->h > WIN_LIMIT || q->w > WIN_LIMIT || q->h < 1 || q->w < 1)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': pooled map is empty or too large",
                             nm(n));
        q->kh = (int)q->h;
        q->kw = (int)q->w;
        break;
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_SUM: {
        /* over the whole map: a global pooling, keepdims or not */
        const enpu_reduce_attr *a = &n->attr.reduce;
        if ((x->rank != 3 && x->rank != 4) || a->n_axes != x->rank - 2)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': a CONV-kind reduction is over the "
                             "whole map of a rank-3/4 tensor", nm(n));
        for (int k = 0; k < a->n_axes; k++)
            if (a->axes[k] != 2 + k)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': reduced axes are not the map's", nm(n));
        q->n = x->dims[0];
        q->ci = q->co = x->dims[1];
        q->group = (int)q->ci;
        spatial_of(x, &q->h, &q->w);
        if (q->h > WIN_LIMIT || q->w > WIN_LIMIT || q->h < 1 || q->w < 1 || q->ci < 1 || q->ci > INT_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': reduced map is empty or too large", nm(n));
        q->kh = (int)q->h, q->kw = (int)q->w;
        q->oh = q->ow = 1;
        q->k = (int64_t)q->kh * q->kw;
        bool keep = a->keepdims && y->rank == x->rank;
        for (int d = 2; keep && d < y->rank; d++) keep = y->dims[d] == 1;
        bool flat = !a->keepdims && y->rank == 2;
        if ((!keep && !flat) || y->dims[0] != q->n || y->dims[1] != q->co)
            return bad_out(n, y, "the reduced map", err);
        return 0;
    }
    case ENPU_OP_GEMM:
        if (x->rank != 2 || y->rank != 2 || y->dims[0] != x->dims[0])
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': FC needs [M, K] -> [M, N]", nm(n));
        q->n = x->dims[0];
        q->ci = x->dims[1];
        q->co = y->dims[1];
        q->h = q->w = q->oh = q->ow = 1;
        q->k = q->ci;
        if (q->co < 1 || q->ci < 1)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': empty FC", nm(n));
        return 0;
    case ENPU_OP_BATCHNORM:
    case ENPU_OP_RELU:
    case ENPU_OP_CLIP:
    case ENPU_OP_IDENTITY:
        q->n = x->rank >= 1 ? x->dims[0] : 1;
        q->ci = q->co = x->rank >= 2 ? x->dims[1] : 1;
        if (x->rank < 2) {
            q->n = 1;
            q->h = 1;
            q->w = enpu_tensor_numel(x);
        } else {
            spatial_of(x, &q->h, &q->w);
        }
        q->group = (int)q->ci;
        q->oh = q->h;
        q->ow = q->w;
        q->k = 1;
        if (q->ci < 1 || q->ci > INT_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': %lld channels", nm(n),
                             (long long)q->ci);
        if (y->rank != x->rank || enpu_tensor_numel(y) != enpu_tensor_numel(x))
            return bad_out(n, y, "must equal the input's", err);
        for (int d = 0; d < x->rank; d++)
            if (y->dims[d] != x->dims[d]) return bad_out(n, y, "must equal the input's", err);
        return 0;
    default:
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be a CONV-kind node",
                         nm(n), enpu_op_name(n->op));
    }
    /* windowed: Conv, AveragePool, GlobalAveragePool */
    if (q->ci < 1 || q->ci > INT_MAX)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %lld channels", nm(n), (long long)q->ci);
    q->n = x->dims[0];
    if (n->op != ENPU_OP_GLOBAL_AVGPOOL) spatial_of(x, &q->h, &q->w);
    q->oh = extent(q->h, q->pt, q->pb, q->kh, q->sh, q->dh, false);
    q->ow = extent(q->w, q->pl, q->pr, q->kw, q->sw, q->dw, false);
    if (q->oh < 1 || q->ow < 1)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': kernel larger than the padded input",
                         nm(n));
    q->k = (q->ci / q->group) * q->kh * q->kw;
    if (y->rank != x->rank || y->dims[0] != q->n || y->dims[1] != q->co)
        return bad_out(n, y, "batch or channels", err);
    int64_t oh, ow;
    spatial_of(y, &oh, &ow);
    if (oh != q->oh || ow != q->ow) return bad_out(n, y, "spatial size", err);
    return 0;
}

/* Window of a MaxPool: like the others, but ceil-mode extents are allowed. */
static int maxpool_geom(const enpu_graph *qg, const enpu_node *n, enpu_qconv_geom *q,
                        enpu_err *err) {
    memset(q, 0, sizeof *q);
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    if (!x || !y || (x->rank != 3 && x->rank != 4))
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': MaxPool needs a rank-3/4 input",
                         nm(n));
    int rc = window_geom(n, &n->attr.pool.w, x->rank, n->attr.pool.w.kernel[0],
                         n->attr.pool.w.kernel[1], q, err);
    if (rc) return rc;
    q->n = x->dims[0];
    q->ci = q->co = x->dims[1];
    q->group = 1;
    spatial_of(x, &q->h, &q->w);
    int64_t lh = extent(q->h, q->pt, q->pb, q->kh, q->sh, q->dh, false);
    int64_t lw = extent(q->w, q->pl, q->pr, q->kw, q->sw, q->dw, false);
    int64_t hh = extent(q->h, q->pt, q->pb, q->kh, q->sh, q->dh, n->attr.pool.ceil_mode);
    int64_t hw = extent(q->w, q->pl, q->pr, q->kw, q->sw, q->dw, n->attr.pool.ceil_mode);
    if (lh < 1 || lw < 1)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': kernel larger than the padded input",
                         nm(n));
    if (y->rank != x->rank || y->dims[0] != q->n || y->dims[1] != q->ci)
        return bad_out(n, y, "batch or channels", err);
    spatial_of(y, &q->oh, &q->ow);
    if (q->oh < lh || q->oh > hh || q->ow < lw || q->ow > hw)
        return bad_out(n, y, "spatial size", err);
    q->k = (int64_t)q->kh * q->kw;
    return 0;
}

/* --- checking a quantized graph ------------------------------------------------------------ */

static bool is_act(const enpu_tensor *t) { return !(t->flags & ENPU_T_CONST); }

/* An int8 tensor with valid per-tensor parameters. */
static int check_i8(const enpu_node *n, const enpu_tensor *t, const char *role, bool allow_const,
                    enpu_err *err) {
    if (t->dtype != ENPU_DT_INT8)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' is %s, not int8", nm(n), role,
                         t->name, enpu_dtype_name(t->dtype));
    if (!allow_const && !is_act(t))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' must not be a constant", nm(n),
                         role, t->name);
    if (!t->quant || t->quant->count != 1 || !t->quant->scale || !t->quant->zero_point)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': %s '%s' needs per-tensor quantization parameters", nm(n),
                         role, t->name);
    float s = t->quant->scale[0];
    int32_t z = t->quant->zero_point[0];
    if (!(s > 0) || !isfinite(s))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s': scale %g is not positive",
                         nm(n), role, t->name, (double)s);
    if (z < -128 || z > 127)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': %s '%s': zero point %d is outside -128..127", nm(n), role,
                         t->name, (int)z);
    if (t->rank < 0 || (!is_act(t) && !t->data))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' has no shape or data", nm(n),
                         role, t->name);
    return 0;
}

static float sc(const enpu_tensor *t) { return t->quant->scale[0]; }
static int32_t zp(const enpu_tensor *t) { return t->quant->zero_point[0]; }

static int check_clamp(const enpu_node *n, const enpu_qnode *q, enpu_err *err) {
    if (q->lo < -128 || q->hi > 127 || q->lo > q->hi)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.lo/q.hi %d..%d not within -128..127",
                         nm(n), (int)q->lo, (int)q->hi);
    return 0;
}

static int check_rq(const enpu_node *n, const enpu_qnode *q, enpu_err *err) {
    if (!q->M || !q->S)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M/q.S missing", nm(n));
    for (int c = 0; c < q->n_ch; c++) {
        if (q->M[c] > (uint32_t)INT32_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M[%d] = %u does not fit 31 bits",
                             nm(n), c, (unsigned)q->M[c]);
        if (q->S[c] < 0 || q->S[c] > ENPU_SHIFT_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.S[%d] = %d is outside 0..%d",
                             nm(n), c, (int)q->S[c], ENPU_SHIFT_MAX);
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
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind conv", nm(n),
                         enpu_op_name(n->op));
    }
    if (q->origin != want)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.origin %s does not fit op %s",
                         nm(n), enpu_qorigin_name(q->origin), enpu_op_name(n->op));
    enpu_qconv_geom geo;
    int rc = enpu_qconv_geom_of(qg, n, &geo, err);
    if (rc) return rc;
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    if ((rc = check_i8(n, x, "input", false, err)) || (rc = check_i8(n, y, "output", false, err)))
        return rc;
    if (q->n_ch != geo.co)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.n_ch %d is not the %lld channels",
                         nm(n), q->n_ch, (long long)geo.co);
    if (!q->w || !q->bias || q->n_w != geo.co * geo.k)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': q.w has %lld values, %lld channels x %lld expected", nm(n),
                         (long long)q->n_w, (long long)geo.co, (long long)geo.k);
    /* TFLite's AVERAGE_POOL_2D averages the stored values (output and input
     * share their parameters): its requantization adds no zero point */
    bool tfl_avg = qg->requant == ENPU_REQUANT_TFLITE && n->op == ENPU_OP_AVGPOOL;
    if (q->zp_in[0] != zp(x) || q->zp_out != (tfl_avg ? 0 : zp(y)))
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': q.zp_in[0]/q.zp_out %d/%d differ from the tensors' %d/%d",
                         nm(n), (int)q->zp_in[0], (int)q->zp_out, (int)zp(x),
                         (int)(tfl_avg ? 0 : zp(y)));
    if (tfl_avg && (sc(x) != sc(y) || zp(x) != zp(y)))
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': a TFLite average pool's input and output must share scale "
                         "and zero point",
                         nm(n));
    if ((rc = check_rq(n, q, err))) return rc;
    for (int c = 0; c < q->n_ch; c++) {
        int64_t lo, hi;
        enpu_acc_range(q->w + (int64_t)c * geo.k, geo.k, 1, -128, 127, q->bias[c], &lo, &hi);
        if (!acc32(lo, hi))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': channel %d: accumulator may reach [%lld, %lld], "
                             "beyond 32 bits",
                             nm(n), c, (long long)lo, (long long)hi);
        if (qg->requant == ENPU_REQUANT_TFLITE &&
            (rc = tfl_shift_ok(n, "accumulator", lo, hi, q->S[c], err)))
            return rc;
        if (tfl_avg && q->bias[c] != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': q.bias[%d] of a TFLite average pool must be 0", nm(n), c);
    }
    /* Conv/Gemm constant inputs, when present, hold exactly q->w and q->bias. */
    if (n->op == ENPU_OP_CONV || n->op == ENPU_OP_GEMM) {
        const enpu_tensor *w = enpu_node_input(qg, n, 1), *b = enpu_node_input(qg, n, 2);
        if (!w || w->dtype != ENPU_DT_INT8 || !w->data || enpu_tensor_numel(w) != q->n_w ||
            memcmp(w->data, q->w, (size_t)q->n_w) != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input 1 must be an int8 constant equal to q.w", nm(n));
        if (b && (b->dtype != ENPU_DT_INT32 || !b->data || enpu_tensor_numel(b) != q->n_ch ||
                  memcmp(b->data, q->bias, (size_t)q->n_ch * sizeof(int32_t)) != 0))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input 2 must be an int32 constant equal to q.bias",
                             nm(n));
    }
    return 0;
}

typedef struct host_twin host_twin;
static int check_twin(const enpu_graph *qg, const enpu_node *n, enpu_err *err);

/* A move the golden runs through its float kernel on a one-node twin, as a
 * host op: every output element is one input element (or, for a Pad of
 * mode edge/reflect, a copy of one), so dequantizing, copying and
 * quantizing with the same parameters gives back the int8 values exactly. */
static bool move_by_twin(const enpu_node *n) {
    switch (n->op) {
    case ENPU_OP_SLICE: case ENPU_OP_GATHER: case ENPU_OP_EXPAND: case ENPU_OP_RESIZE: return true;
    case ENPU_OP_PAD: return n->attr.pad.mode != ENPU_PADMODE_CONSTANT;
    default: return false;
    }
}

static int check_move(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    if (!enpu_q_is_move_op(n->op))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind move", nm(n),
                         enpu_op_name(n->op));
    if (n->op == ENPU_OP_RESIZE && n->attr.resize.mode != ENPU_RESIZE_NEAREST)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': a move Resize is a nearest one", nm(n));
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    int rc;
    if (!x || !y) return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input", nm(n));
    if ((rc = check_i8(n, x, "input", false, err)) || (rc = check_i8(n, y, "output", false, err)))
        return rc;
    int n_act = n->op == ENPU_OP_CONCAT ? n->n_in : 1;
    for (int i = 0; i < n_act; i++) {
        const enpu_tensor *xi = enpu_node_input(qg, n, i);
        if (!xi) return enpu_fail(err, ENPU_E_INVALID, "node '%s': input %d missing", nm(n), i);
        if ((rc = check_i8(n, xi, "input", false, err))) return rc;
        if (sc(xi) != sc(y) || zp(xi) != zp(y))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input '%s' and output '%s' must share scale and zero "
                             "point",
                             nm(n), xi->name, y->name);
    }
    if (n->q->zp_out != zp(y) || n->q->zp_in[0] != zp(x))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.zp_in[0]/q.zp_out differ from the "
                         "tensors'", nm(n));
    if (move_by_twin(n)) return check_twin(qg, n, err);
    switch (n->op) {
    case ENPU_OP_TRANSPOSE: {
        const enpu_shape_attr *a = &n->attr.shape;
        if (a->n_axes != x->rank || y->rank != x->rank)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': perm has %d axes for rank %d",
                             nm(n), a->n_axes, x->rank);
        bool used[ENPU_MAX_RANK] = {false};
        for (int d = 0; d < x->rank; d++) {
            int p = a->axes[d];
            if (p < 0 || p >= x->rank || used[p])
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': perm is not a permutation",
                                 nm(n));
            used[p] = true;
            if (y->dims[d] != x->dims[p]) return bad_out(n, y, "transposed input", err);
        }
        return 0;
    }
    case ENPU_OP_CONCAT: {
        int ax = n->attr.shape.axis;
        if (ax < 0 || ax >= x->rank || y->rank != x->rank)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': axis %d for rank %d", nm(n), ax,
                             x->rank);
        int64_t sum = 0;
        for (int i = 0; i < n->n_in; i++) {
            const enpu_tensor *xi = enpu_node_input(qg, n, i);
            if (xi->rank != x->rank)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': inputs of different ranks",
                                 nm(n));
            for (int d = 0; d < x->rank; d++)
                if (d != ax && xi->dims[d] != y->dims[d])
                    return bad_out(n, y, "concatenated inputs", err);
            sum += xi->dims[ax];
        }
        if (sum != y->dims[ax]) return bad_out(n, y, "concatenated inputs", err);
        return 0;
    }
    case ENPU_OP_PAD: {
        const enpu_pad_attr *a = &n->attr.pad;
        if (a->n_pads != 2 * x->rank || y->rank != x->rank)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': %d pads for rank %d", nm(n),
                             a->n_pads, x->rank);
        if (a->value != 0.0f || a->mode != ENPU_PADMODE_CONSTANT)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': a MOVE Pad fills with 0 only (value %g)", nm(n),
                             (double)a->value);
        for (int d = 0; d < x->rank; d++)
            if (y->dims[d] != x->dims[d] + a->pads[d] + a->pads[d + x->rank])
                return bad_out(n, y, "padded input", err);
        return 0;
    }
    default:
        if (enpu_tensor_numel(x) != enpu_tensor_numel(y))
            return bad_out(n, y, "same element count as the input", err);
        return 0;
    }
}

/* --- host nodes: a one-node float twin run by the float reference ---------------------- */

struct host_twin {
    enpu_graph *g;
    enpu_fexec *ex;
    int n_in;
    int *src;         /* qg tensor of each twin input */
    enpu_buf *bufs;   /* float inputs */
    int out;          /* twin output tensor */
};

static void twin_free(host_twin *h) {
    enpu_fexec_free(h->ex);
    enpu_graph_free(h->g);
    if (h->bufs)
        for (int i = 0; i < h->n_in; i++) enpu_buf_free(&h->bufs[i]);
    free(h->bufs);
    free(h->src);
}

/* Dequantizes constant/int8 tensor data (per-tensor or per-axis) into dst. */
static void dequant(const enpu_tensor *t, const int8_t *v, float *dst) {
    int64_t n = enpu_tensor_numel(t);
    const enpu_quant *q = t->quant;
    if (!q || q->count == 1 || q->axis < 0 || q->axis >= t->rank) {
        float s = q ? q->scale[0] : 1.0f;
        int32_t z = q ? q->zero_point[0] : 0;
        for (int64_t i = 0; i < n; i++) dst[i] = enpu_dequantize(v[i], s, z);
        return;
    }
    int64_t inner = 1;
    for (int d = q->axis + 1; d < t->rank; d++) inner *= t->dims[d];
    int64_t ax = t->dims[q->axis];
    for (int64_t i = 0; i < n; i++) {
        int64_t c = (i / inner) % ax;
        dst[i] = enpu_dequantize(v[i], q->scale[c], q->zero_point[c]);
    }
}

static int build_twin(const enpu_graph *qg, const enpu_node *n, host_twin *h, enpu_err *err) {
    h->g = enpu_graph_new(n->name);
    h->src = calloc((size_t)(n->n_in ? n->n_in : 1), sizeof(int));
    h->bufs = calloc((size_t)(n->n_in ? n->n_in : 1), sizeof(enpu_buf));
    if (!h->g || !h->src || !h->bufs) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    h->g->opset = qg->opset;
    int ins[64], rc = 0;
    if (n->n_in > 64) return enpu_fail(err, ENPU_E_LIMIT, "node '%s': too many inputs", nm(n));
    for (int k = 0; k < n->n_in && !rc; k++) {
        ins[k] = -1;
        const enpu_tensor *t = enpu_node_input(qg, n, k);
        if (!t) continue;
        int have = enpu_graph_find_tensor(h->g, t->name);
        if (have >= 0) {
            ins[k] = have;
            continue;
        }
        bool act = is_act(t);
        bool to_float = t->dtype == ENPU_DT_INT8 || t->dtype == ENPU_DT_FLOAT32 ||
                        (act && t->dtype == ENPU_DT_INT16);
        int idx = enpu_graph_add_tensor(h->g, t->name, to_float ? ENPU_DT_FLOAT32 : t->dtype,
                                        t->rank, t->dims, err);
        if (idx < 0) return idx;
        ins[k] = idx;
        if (act) {
            h->src[h->n_in] = n->in[k];
            if ((rc = enpu_buf_alloc(&h->bufs[h->n_in], ENPU_DT_FLOAT32, t->rank, t->dims, err)))
                return rc;
            h->n_in++;
            rc = enpu_graph_add_input(h->g, idx, err);
        } else {
            size_t nb = (size_t)enpu_tensor_numel(t) * (to_float ? sizeof(float) : enpu_dtype_size(t->dtype));
            void *data = malloc(nb ? nb : 1);
            if (!data) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            if (t->dtype == ENPU_DT_INT8)
                dequant(t, t->data, data);
            else if (nb)
                memcpy(data, t->data, nb);
            enpu_tensor_set_data(&h->g->tensors[idx], data);
        }
    }
    if (rc) return rc;
    const enpu_tensor *y = enpu_node_output(qg, n, 0);
    int o = enpu_graph_add_tensor(h->g, y->name, ENPU_DT_FLOAT32, y->rank, y->dims, err);
    if (o < 0) return o;
    h->out = o;
    int k = enpu_graph_add_node(h->g, n->name, n->op, n->n_in, ins, 1, &o, err);
    if (k < 0) return k;
    h->g->nodes[k].attr = n->attr;
    if ((rc = enpu_graph_add_output(h->g, o, err))) return rc;
    rc = enpu_fexec_new(h->g, &h->ex, err);
    if (rc) enpu_err_prefix(err, "host node '%s'", nm(n));
    return rc;
}

/* What the float reference would refuse at run time is refused here. */
static int check_twin(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    host_twin h;
    memset(&h, 0, sizeof h);
    int rc = build_twin(qg, n, &h, err);
    twin_free(&h);
    return rc;
}

static int check_node(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    const enpu_qnode *q = n->q;
    if (!q) return enpu_fail(err, ENPU_E_INVALID, "node '%s': no quantization block (q)", nm(n));
    if (n->n_out < 1 || n->out[0] < 0)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': no output", nm(n));
    int need_ch = q->kind == ENPU_Q_ADD || q->kind == ENPU_Q_MUL ? 1 : 0;
    if (q->kind != ENPU_Q_CONV && q->n_ch != need_ch)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.n_ch is %d, %d expected for kind %s",
                         nm(n), q->n_ch, need_ch, enpu_qkind_name(q->kind));
    if (q->kind != ENPU_Q_CONV && (q->w || q->n_w))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.w given for kind %s", nm(n),
                         enpu_qkind_name(q->kind));
    int rc;
    const enpu_tensor *y = enpu_node_output(qg, n, 0);
    switch (q->kind) {
    case ENPU_Q_CONV: return check_conv(qg, n, err);
    case ENPU_Q_MAXPOOL: {
        if (n->op != ENPU_OP_MAXPOOL)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind maxpool",
                             nm(n), enpu_op_name(n->op));
        enpu_qconv_geom geo;
        if ((rc = maxpool_geom(qg, n, &geo, err))) return rc;
        const enpu_tensor *x = enpu_node_input(qg, n, 0);
        if ((rc = check_i8(n, x, "input", false, err)) ||
            (rc = check_i8(n, y, "output", false, err)))
            return rc;
        if (sc(x) != sc(y) || zp(x) != zp(y) || q->zp_in[0] != zp(x) || q->zp_out != zp(y))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': input and output must share scale and zero point",
                             nm(n));
        return check_clamp(n, q, err);
    }
    case ENPU_Q_ADD:
    case ENPU_Q_MUL: {
        enpu_op want = q->kind == ENPU_Q_ADD ? ENPU_OP_ADD : ENPU_OP_MUL;
        if (n->op != want || n->n_in != 2)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind %s",
                             nm(n), enpu_op_name(n->op), enpu_qkind_name(q->kind));
        const enpu_tensor *a = enpu_node_input(qg, n, 0), *b = enpu_node_input(qg, n, 1);
        if (!a || !b) return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input", nm(n));
        if ((rc = check_i8(n, a, "input", true, err)) || (rc = check_i8(n, b, "input", true, err)) ||
            (rc = check_i8(n, y, "output", false, err)))
            return rc;
        if (!bcast_ok(a, b, y))
            return bad_out(n, y, "numpy broadcast of the inputs", err);
        if (q->zp_in[0] != zp(a) || q->zp_in[1] != zp(b) || q->zp_out != zp(y))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': q zero points differ from the tensors'", nm(n));
        if ((rc = check_rq(n, q, err))) return rc;
        bool tfl = qg->requant == ENPU_REQUANT_TFLITE;
        if (q->kind == ENPU_Q_ADD && tfl) {
            for (int i = 0; i < 2; i++) {
                int32_t z = q->zp_in[i];
                int64_t d = (int64_t)1 << ENPU_TFL_ADD_LEFT_SHIFT;
                if (q->A[i] > (uint32_t)INT32_MAX || q->SA[i] < 0 || q->SA[i] > ENPU_SHIFT_MAX)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "node '%s': q.A[%d]/q.SA[%d] = %u/%d out of range", nm(n), i,
                                     i, (unsigned)q->A[i], (int)q->SA[i]);
                if ((rc = tfl_shift_ok(n, "add input", (-128 - z) * d, (127 - z) * d, q->SA[i], err)))
                    return rc;
            }
        } else if (q->kind == ENPU_Q_ADD) {
            if (q->SA[0] || q->SA[1])
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': q.SA is for requant tflite only", nm(n));
            if (q->M[0] != 1)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M[0] of an add must be 1",
                                 nm(n));
            for (int i = 0; i < 2; i++)
                if (q->A[i] > (uint32_t)INT32_MAX)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "node '%s': q.A[%d] = %u does not fit 31 bits", nm(n), i,
                                     (unsigned)q->A[i]);
        }
        int64_t lo, hi;
        enpu_q_acc_range(qg, n, &lo, &hi);
        if (!acc32(lo, hi))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': accumulator may reach [%lld, %lld], beyond 32 bits",
                             nm(n), (long long)lo, (long long)hi);
        return tfl ? tfl_shift_ok(n, "accumulator", lo, hi, q->S[0], err) : 0;
    }
    case ENPU_Q_TABLE: {
        if (qg->requant == ENPU_REQUANT_TFLITE)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': a table activation has no requant tflite rule (TFLite's "
                             "kernels run as host nodes)",
                             nm(n));
        if (!enpu_q_is_table_op(n->op))
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be of kind table",
                             nm(n), enpu_op_name(n->op));
        const enpu_tensor *x = enpu_node_input(qg, n, 0);
        if (!x) return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input", nm(n));
        if ((rc = check_i8(n, x, "input", false, err)) ||
            (rc = check_i8(n, y, "output", false, err)))
            return rc;
        if (enpu_tensor_numel(x) != enpu_tensor_numel(y))
            return bad_out(n, y, "same as the input", err);
        if (!q->table) return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.table missing", nm(n));
        char what[ENPU_MAX_NAME + 32];
        snprintf(what, sizeof what, "node '%s': q.table", nm(n));
        if ((rc = enpu_pwl_validate(what, q->table, ENPU_MULT_BITS_MAX, 1, err))) return rc;
        if (q->table->zp_out != zp(y) || q->zp_out != zp(y) || q->zp_in[0] != zp(x))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': table/q zero points differ from the tensors'", nm(n));
        return 0;
    }
    case ENPU_Q_MOVE: return check_move(qg, n, err);
    case ENPU_Q_HOST: {
        if (qg->requant == ENPU_REQUANT_TFLITE) {
            /* TFLite's integer kernel: int8 in, int8 out, parameters it accepts */
            const enpu_tensor *x = enpu_node_input(qg, n, 0);
            if (n->n_in != 1 || n->n_out != 1 || !x)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': a host node has one input "
                                 "and one output", nm(n));
            if ((rc = check_i8(n, x, "input", false, err)) ||
                (rc = check_i8(n, y, "output", false, err)))
                return rc;
            int k = enpu_tfl_kernel_of(n->op);
            if (k < 0)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': host op %s has no TFLite integer kernel (requant "
                                 "tflite)", nm(n), enpu_op_name(n->op));
            if (enpu_tensor_numel(x) != enpu_tensor_numel(y) || x->rank != y->rank)
                return bad_out(n, y, "same as the input", err);
            if (n->op == ENPU_OP_SOFTMAX && (n->attr.shape.axis < 0 || n->attr.shape.axis >= x->rank ||
                                             x->dims[n->attr.shape.axis] >= 4096))
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': softmax axis %d of rank %d: TFLite's kernel sums at "
                                 "most 4095 values", nm(n), n->attr.shape.axis, x->rank);
            enpu_tfl_kparams p;
            char what[ENPU_MAX_NAME + 16];
            snprintf(what, sizeof what, "node '%s'", nm(n));
            return enpu_tfl_kernel_prepare((enpu_tfl_kernel)k, sc(x), zp(x), sc(y), zp(y), what,
                                           &p, err);
        }
        /* what the float reference would refuse at run time is refused here */
        if ((rc = check_twin(qg, n, err))) return rc;
        for (int i = 0; i < n->n_out; i++) {
            const enpu_tensor *t = enpu_node_output(qg, n, i);
            if (!t) continue;
            if (t->dtype == ENPU_DT_FLOAT32) continue;
            if ((rc = check_i8(n, t, "output", false, err))) return rc;
        }
        for (int i = 0; i < n->n_in; i++) {
            const enpu_tensor *t = enpu_node_input(qg, n, i);
            if (t && t->dtype == ENPU_DT_INT8 && (rc = check_i8(n, t, "input", true, err)))
                return rc;
        }
        if (n->n_out != 1)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': a host node has one output", nm(n));
        return 0;
    }
    }
    return enpu_fail(err, ENPU_E_INVALID, "node '%s': unknown q.kind %d", nm(n), (int)q->kind);
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
                if (t && is_act(t) && t->dtype != ENPU_DT_INT8)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "node '%s': input '%s' is %s; NPU nodes read int8", nm(n),
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
    if (t->dtype != ENPU_DT_INT16 || !is_act(t))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %s '%s' is %s%s, not an int16 activation "
                         "(a 16-bit graph)", nm(n), role, t->name, enpu_dtype_name(t->dtype),
                         is_act(t) ? "" : " constant");
    if (!t->quant || t->quant->count != 1 || !(t->quant->scale[0] > 0) ||
        !isfinite(t->quant->scale[0]) || t->quant->zero_point[0] != 0 || t->rank < 0)
        return enpu_fail(err, ENPU_E_INVALID,
                         "node '%s': %s '%s' needs one positive scale and zero point 0", nm(n),
                         role, t->name);
    return 0;
}

static int check_node16(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    const enpu_qnode *q = n->q;
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    int rc;
    if (!q) return enpu_fail(err, ENPU_E_INVALID, "node '%s': no quantization block (q)", nm(n));
    if (!y) return enpu_fail(err, ENPU_E_INVALID, "node '%s': no output", nm(n));
    if (q->w)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': int8 q.w in a 16-bit graph", nm(n));
    switch (q->kind) {
    case ENPU_Q_CONV: {
        enpu_qconv_geom geo;
        if ((rc = enpu_qconv_geom_of(qg, n, &geo, err))) return rc;
        if ((rc = check_i16(n, x, "input", err)) || (rc = check_i16(n, y, "output", err))) return rc;
        if (q->n_ch != geo.co || !q->w16 || !q->bias || q->n_w != geo.co * geo.k)
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': q.w16 has %lld values, %lld channels x %lld expected", nm(n),
                             (long long)q->n_w, (long long)geo.co, (long long)geo.k);
        if (q->zp_in[0] || q->zp_out)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': zero points must be 0", nm(n));
        if (!q->M || !q->S) return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M/q.S missing", nm(n));
        for (int c = 0; c < q->n_ch; c++)
            if (q->M[c] > (uint32_t)INT32_MAX || q->S[c] < 0 || q->S[c] > ENPU_SHIFT_MAX)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.M/q.S[%d] = %u/%d out of range",
                                 nm(n), c, (unsigned)q->M[c], (int)q->S[c]);
        if (q->lo < -ENPU_I16_QMAX - 1 || q->hi > ENPU_I16_QMAX || q->lo > q->hi)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': q.lo/q.hi %d..%d not within int16",
                             nm(n), (int)q->lo, (int)q->hi);
        for (int c = 0; c < q->n_ch; c++) {
            int64_t lo, hi;
            enpu_acc_range16(q->w16 + (int64_t)c * geo.k, geo.k, 1, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX,
                             q->bias[c], &lo, &hi);
            if (lo == INT64_MIN || hi == INT64_MAX)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': channel %d: accumulator beyond 64 bits", nm(n), c);
        }
        if (n->op == ENPU_OP_CONV || n->op == ENPU_OP_GEMM) {
            const enpu_tensor *w = enpu_node_input(qg, n, 1), *b = enpu_node_input(qg, n, 2);
            if (!w || w->dtype != ENPU_DT_INT16 || !w->data || enpu_tensor_numel(w) != q->n_w ||
                memcmp(w->data, q->w16, (size_t)q->n_w * sizeof(int16_t)) != 0)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': input 1 must be an int16 constant equal to q.w16", nm(n));
            if (b && (b->dtype != ENPU_DT_INT32 || !b->data || enpu_tensor_numel(b) != q->n_ch ||
                      memcmp(b->data, q->bias, (size_t)q->n_ch * sizeof(int32_t)) != 0))
                return enpu_fail(err, ENPU_E_INVALID,
                                 "node '%s': input 2 must be an int32 constant equal to q.bias", nm(n));
        }
        return 0;
    }
    case ENPU_Q_MOVE:
    case ENPU_Q_HOST: {
        /* computed on the float reference's twin: what it refuses is refused here */
        host_twin h;
        memset(&h, 0, sizeof h);
        rc = build_twin(qg, n, &h, err);
        twin_free(&h);
        if (rc) return rc;
        for (int i = 0; i < n->n_in; i++) {
            const enpu_tensor *t = enpu_node_input(qg, n, i);
            if (t && is_act(t) && t->dtype != ENPU_DT_FLOAT32 && (rc = check_i16(n, t, "input", err)))
                return rc;
        }
        if (n->n_out != 1)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': one output expected", nm(n));
        if (y->dtype != ENPU_DT_FLOAT32 && (rc = check_i16(n, y, "output", err))) return rc;
        if (q->kind == ENPU_Q_MOVE && (y->dtype != ENPU_DT_INT16 || x->dtype != ENPU_DT_INT16 ||
                                       sc(x) != sc(y)))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s': a move keeps its input's int16 values and scale", nm(n));
        return 0;
    }
    default:
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': kind %s in a 16-bit graph (the host runs it)",
                         nm(n), enpu_qkind_name(q->kind));
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
                if (t && is_act(t) && t->dtype != ENPU_DT_INT16)
                    return enpu_fail(err, ENPU_E_INVALID, "node '%s': input '%s' is %s; a 16-bit "
                                     "graph's NPU nodes read int16", nm(n), t->name,
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

static void dequant16(const enpu_tensor *t, const int16_t *v, float *dst) {
    int64_t n = enpu_tensor_numel(t);
    float s = t->quant ? t->quant->scale[0] : 1.0f;
    for (int64_t i = 0; i < n; i++) dst[i] = enpu_dequantize(v[i], s, 0);
}

/* --- executor -------------------------------------------------------------------------------- */

struct enpu_gexec {
    const enpu_graph *qg;
    int8_t **v8;
    float **vf;
    bool *own8, *ownf;
    host_twin *host; /* per node */
    int16_t **v16;   /* a 16-bit graph's int16 tensors */
    bool *own16;
    enpu_gexec_kernels kernels;
    const gf_simd *simd; /* NULL: the reference loops */
    gf_node **fast;      /* per node, NULL where the reference loops run */
};

static void free_fast(enpu_gexec *ex) {
    if (ex->fast)
        for (int i = 0; i < ex->qg->n_nodes; i++) gf_free(ex->fast[i]);
    free(ex->fast);
    ex->fast = NULL;
    ex->simd = NULL;
}

/* "vnni256": vpdpwssd on int16 pairs in 256-bit registers (it needs AVX-512
 * VNNI and VL, hence the old name "avx512vnni", still accepted: it is not
 * the 512-bit int8 vpdpbusd the name suggests). */
static const char *const kernel_labels[ENPU_GK_COUNT] = {"fast", "portable", "reference", "avx2",
                                                         "vnni256"};

const char *enpu_gexec_kernels_label(enpu_gexec_kernels k) {
    return (int)k >= 0 && k < ENPU_GK_COUNT ? kernel_labels[k] : NULL;
}

int enpu_gexec_kernels_parse(const char *name) {
    for (int k = 0; name && k < ENPU_GK_COUNT; k++)
        if (strcmp(name, kernel_labels[k]) == 0) return k;
    if (name && strcmp(name, "avx512vnni") == 0) return ENPU_GK_VNNI256;
    return -1;
}

/* The microkernels of k; NULL when this CPU lacks them. */
static const gf_simd *simd_of(enpu_gexec_kernels k) {
    const gf_simd *s = NULL;
    switch (k) {
    case ENPU_GK_FAST:
        s = gf_simd_vnni_table();
        if (!s) s = gf_simd_avx2_table();
        return s ? s : &gf_simd_portable;
    case ENPU_GK_AVX2: return gf_simd_avx2_table();
    case ENPU_GK_VNNI256: return gf_simd_vnni_table();
    default: return &gf_simd_portable;
    }
}

int enpu_gexec_set_kernels(enpu_gexec *ex, enpu_gexec_kernels k, enpu_err *err) {
    if (!ex) return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_set_kernels: NULL executor");
    if (!enpu_gexec_kernels_label(k))
        return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_set_kernels: unknown kernels %d", (int)k);
    const gf_simd *simd = k == ENPU_GK_REFERENCE ? NULL : simd_of(k);
    if (k != ENPU_GK_REFERENCE && !simd)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "the %s kernels need a CPU with %s",
                         kernel_labels[k], kernel_labels[k]);
    free_fast(ex);
    ex->kernels = ENPU_GK_REFERENCE;
    /* the fast kernels are int8's: a 16-bit graph runs the reference loops */
    if (k == ENPU_GK_REFERENCE || enpu_qgraph_bits(ex->qg) == 16) return 0;
    const enpu_graph *qg = ex->qg;
    ex->fast = calloc((size_t)(qg->n_nodes ? qg->n_nodes : 1), sizeof *ex->fast);
    if (!ex->fast) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    for (int i = 0; i < qg->n_nodes; i++) {
        int rc = gf_prepare(qg, &qg->nodes[i], simd, &ex->fast[i], err);
        if (rc) {
            free_fast(ex);
            return rc;
        }
    }
    ex->kernels = k;
    ex->simd = simd;
    return 0;
}

const char *enpu_gexec_kernels_name(const enpu_gexec *ex) {
    return ex && ex->simd ? ex->simd->name : "reference";
}

void enpu_gexec_free(enpu_gexec *ex) {
    if (!ex) return;
    const enpu_graph *qg = ex->qg;
    for (int t = 0; t < qg->n_tensors; t++) {
        if (ex->own8 && ex->own8[t]) free(ex->v8[t]);
        if (ex->ownf && ex->ownf[t]) free(ex->vf[t]);
        if (ex->own16 && ex->own16[t]) free(ex->v16[t]);
    }
    if (ex->host)
        for (int i = 0; i < qg->n_nodes; i++) twin_free(&ex->host[i]);
    free(ex->host);
    free_fast(ex);
    free(ex->v8);
    free(ex->vf);
    free(ex->own8);
    free(ex->ownf);
    free(ex->v16);
    free(ex->own16);
    free(ex);
}

int enpu_gexec_new(const enpu_graph *qg, enpu_gexec **out, enpu_err *err) {
    if (!out) return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_new: NULL output");
    *out = NULL;
    int rc = enpu_qgraph_check(qg, err);
    if (rc) return rc;
    enpu_gexec *ex = calloc(1, sizeof *ex);
    if (!ex) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    ex->qg = qg;
    size_t nt = (size_t)(qg->n_tensors ? qg->n_tensors : 1);
    ex->v8 = calloc(nt, sizeof *ex->v8);
    ex->vf = calloc(nt, sizeof *ex->vf);
    ex->own8 = calloc(nt, sizeof *ex->own8);
    ex->ownf = calloc(nt, sizeof *ex->ownf);
    ex->host = calloc((size_t)(qg->n_nodes ? qg->n_nodes : 1), sizeof *ex->host);
    ex->v16 = calloc(nt, sizeof *ex->v16);
    ex->own16 = calloc(nt, sizeof *ex->own16);
    if (!ex->v8 || !ex->vf || !ex->own8 || !ex->ownf || !ex->host || !ex->v16 || !ex->own16) {
        enpu_gexec_free(ex);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (int t = 0; t < qg->n_tensors && !rc; t++) {
        const enpu_tensor *x = &qg->tensors[t];
        if (x->rank < 0) continue;
        size_t n = (size_t)enpu_tensor_numel(x);
        if (x->flags & ENPU_T_CONST) {
            if (x->dtype == ENPU_DT_INT8) ex->v8[t] = x->data;
            else if (x->dtype == ENPU_DT_FLOAT32) ex->vf[t] = x->data;
            else if (x->dtype == ENPU_DT_INT16) ex->v16[t] = x->data;
            continue;
        }
        if (!(x->flags & ENPU_T_INPUT) && x->producer < 0) continue;
        if (x->dtype == ENPU_DT_INT16) {
            ex->v16[t] = calloc(n ? n : 1, sizeof(int16_t));
            ex->own16[t] = true;
            if (!ex->v16[t]) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory for '%s'", x->name);
        }
        if (x->dtype == ENPU_DT_INT8) {
            ex->v8[t] = calloc(n ? n : 1, 1);
            ex->own8[t] = true;
            if (!ex->v8[t]) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory for '%s'", x->name);
        } else if (x->dtype == ENPU_DT_FLOAT32) {
            ex->vf[t] = calloc(n ? n : 1, sizeof(float));
            ex->ownf[t] = true;
            if (!ex->vf[t]) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory for '%s'", x->name);
        }
    }
    bool b16 = enpu_qgraph_bits(qg) == 16;
    for (int i = 0; i < qg->n_nodes && !rc; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        /* requant tflite runs its host ops through TFLite's integer kernels,
         * not a twin; a 16-bit graph runs every move through its twin */
        if ((n->q->kind == ENPU_Q_HOST && qg->requant != ENPU_REQUANT_TFLITE) ||
            (n->q->kind == ENPU_Q_MOVE && (b16 || move_by_twin(n))))
            rc = build_twin(qg, n, &ex->host[i], err);
    }
    if (!rc) rc = enpu_gexec_set_kernels(ex, ENPU_GK_FAST, err);
    if (rc) {
        enpu_gexec_free(ex);
        return rc;
    }
    *out = ex;
    return 0;
}

/* --- kernels ----------------------------------------------------------------------------------- */

static void run_conv(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    enpu_qconv_geom g;
    enpu_qconv_geom_of(ex->qg, n, &g, NULL);
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t cpg = g.ci / g.group, opg = g.co / g.group;
    const int32_t zin = q->zp_in[0];
    for (int64_t b = 0; b < g.n; b++)
        for (int64_t co = 0; co < g.co; co++) {
            int64_t grp = co / opg;
            const int8_t *wc = q->w + co * g.k;
            int8_t *yc = y + (b * g.co + co) * g.oh * g.ow;
            for (int64_t oy = 0; oy < g.oh; oy++)
                for (int64_t ox = 0; ox < g.ow; ox++) {
                    int64_t acc = q->bias[co];
                    int64_t iy0 = oy * g.sh - g.pt, ix0 = ox * g.sw - g.pl;
                    for (int64_t ci = 0; ci < cpg; ci++) {
                        const int8_t *xc = x + (b * g.ci + grp * cpg + ci) * g.h * g.w;
                        const int8_t *wk = wc + ci * g.kh * g.kw;
                        for (int ky = 0; ky < g.kh; ky++) {
                            int64_t iy = iy0 + (int64_t)ky * g.dh;
                            bool row = iy >= 0 && iy < g.h;
                            for (int kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ix0 + (int64_t)kx * g.dw;
                                int32_t v = (row && ix >= 0 && ix < g.w) ? xc[iy * g.w + ix]
                                                                         : zin;
                                acc += (int64_t)v * wk[ky * g.kw + kx];
                            }
                        }
                    }
                    yc[oy * g.ow + ox] = (int8_t)enpu_requant_as(
                        ex->qg->requant, acc, q->M[co], q->S[co], q->zp_out, q->lo, q->hi);
                }
        }
}

static void run_maxpool(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    enpu_qconv_geom g;
    maxpool_geom(ex->qg, n, &g, NULL);
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    for (int64_t p = 0; p < g.n * g.ci; p++) {
        const int8_t *xp = x + p * g.h * g.w;
        int8_t *yp = y + p * g.oh * g.ow;
        for (int64_t oy = 0; oy < g.oh; oy++)
            for (int64_t ox = 0; ox < g.ow; ox++) {
                int64_t iy0 = oy * g.sh - g.pt, ix0 = ox * g.sw - g.pl;
                int best = INT_MIN;
                for (int ky = 0; ky < g.kh; ky++) {
                    int64_t iy = iy0 + (int64_t)ky * g.dh;
                    if (iy < 0 || iy >= g.h) continue;
                    for (int kx = 0; kx < g.kw; kx++) {
                        int64_t ix = ix0 + (int64_t)kx * g.dw;
                        if (ix < 0 || ix >= g.w) continue;
                        if (xp[iy * g.w + ix] > best) best = xp[iy * g.w + ix];
                    }
                }
                if (best == INT_MIN) best = q->zp_in[0];
                yp[oy * g.ow + ox] = (int8_t)enpu_clamp64(best, q->lo, q->hi);
            }
    }
}

/* run_conv on a 16-bit graph: int16 data, a 64-bit accumulator, the product
 * with M formed exactly (enpu_requant_wide); zero points are 0. */
static void run_conv16(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    enpu_qconv_geom g;
    enpu_qconv_geom_of(ex->qg, n, &g, NULL);
    const int16_t *x = ex->v16[n->in[0]];
    int16_t *y = ex->v16[n->out[0]];
    int64_t cpg = g.ci / g.group, opg = g.co / g.group;
    for (int64_t b = 0; b < g.n; b++)
        for (int64_t co = 0; co < g.co; co++) {
            int64_t grp = co / opg;
            const int16_t *wc = q->w16 + co * g.k;
            int16_t *yc = y + (b * g.co + co) * g.oh * g.ow;
            for (int64_t oy = 0; oy < g.oh; oy++)
                for (int64_t ox = 0; ox < g.ow; ox++) {
                    int64_t acc = q->bias[co];
                    int64_t iy0 = oy * g.sh - g.pt, ix0 = ox * g.sw - g.pl;
                    for (int64_t ci = 0; ci < cpg; ci++) {
                        const int16_t *xc = x + (b * g.ci + grp * cpg + ci) * g.h * g.w;
                        const int16_t *wk = wc + ci * g.kh * g.kw;
                        for (int ky = 0; ky < g.kh; ky++) {
                            int64_t iy = iy0 + (int64_t)ky * g.dh;
                            if (iy < 0 || iy >= g.h) continue; /* padding reads 0 */
                            for (int kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ix0 + (int64_t)kx * g.dw;
                                if (ix >= 0 && ix < g.w) acc += (int64_t)xc[iy * g.w + ix] * wk[ky * g.kw + kx];
                            }
                        }
                    }
                    yc[oy * g.ow + ox] =
                        (int16_t)enpu_requant_wide(acc, q->M[co], q->S[co], 0, q->lo, q->hi);
                }
        }
}

/* Element strides of t read as broadcast to y (0 along broadcast dims). */
static void bcast_strides(const enpu_tensor *t, const enpu_tensor *y, int64_t *st) {
    int64_t s = 1;
    for (int d = y->rank - 1; d >= 0; d--) {
        int sd = d - (y->rank - t->rank);
        if (sd < 0) {
            st[d] = 0;
            continue;
        }
        st[d] = (t->dims[sd] == 1 && y->dims[d] != 1) ? 0 : s;
        s *= t->dims[sd];
    }
}

static void run_binary(enpu_gexec *ex, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    const enpu_graph *qg = ex->qg;
    const enpu_tensor *ta = &qg->tensors[n->in[0]], *tb = &qg->tensors[n->in[1]];
    const enpu_tensor *ty = &qg->tensors[n->out[0]];
    const int8_t *a = ex->v8[n->in[0]], *b = ex->v8[n->in[1]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t sa[ENPU_MAX_RANK], sb[ENPU_MAX_RANK], idx[ENPU_MAX_RANK] = {0};
    bcast_strides(ta, ty, sa);
    bcast_strides(tb, ty, sb);
    int64_t total = enpu_tensor_numel(ty), oa = 0, ob = 0;
    const int64_t z0 = q->zp_in[0], z1 = q->zp_in[1];
    const bool tfl = qg->requant == ENPU_REQUANT_TFLITE;
    for (int64_t i = 0; i < total; i++) {
        int64_t d0 = a[oa] - z0, d1 = b[ob] - z1, acc;
        if (q->kind == ENPU_Q_ADD && tfl) {
            acc = enpu_tfl_add_term((int32_t)d0, q->A[0], q->SA[0]) +
                  enpu_tfl_add_term((int32_t)d1, q->A[1], q->SA[1]);
            y[i] = (int8_t)enpu_requant_tfl(acc, q->M[0], q->S[0], q->zp_out, q->lo, q->hi);
        } else if (q->kind == ENPU_Q_ADD) {
            acc = d0 * (int64_t)q->A[0] + d1 * (int64_t)q->A[1];
            y[i] = (int8_t)enpu_requant(acc, 1, q->S[0], q->zp_out, q->lo, q->hi);
        } else {
            acc = d0 * d1;
            y[i] = (int8_t)enpu_requant_as(qg->requant, acc, q->M[0], q->S[0], q->zp_out, q->lo,
                                             q->hi);
        }
        for (int d = ty->rank - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < ty->dims[d]) break;
            oa -= sa[d] * ty->dims[d];
            ob -= sb[d] * ty->dims[d];
            idx[d] = 0;
        }
    }
}

static void run_table(enpu_gexec *ex, const enpu_node *n) {
    const enpu_pwl_table *t = n->q->table;
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t total = enpu_tensor_numel(&ex->qg->tensors[n->out[0]]);
    for (int64_t i = 0; i < total; i++) y[i] = enpu_pwl_eval(t, x[i]);
}

static void strides_of(const enpu_tensor *t, int64_t *st) {
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->dims[d];
    }
}

static void run_move(enpu_gexec *ex, const enpu_node *n) {
    const enpu_graph *qg = ex->qg;
    const enpu_tensor *tx = &qg->tensors[n->in[0]], *ty = &qg->tensors[n->out[0]];
    const int8_t *x = ex->v8[n->in[0]];
    int8_t *y = ex->v8[n->out[0]];
    int64_t total = enpu_tensor_numel(ty), idx[ENPU_MAX_RANK] = {0}, xs[ENPU_MAX_RANK];
    switch (n->op) {
    case ENPU_OP_TRANSPOSE: {
        strides_of(tx, xs);
        int64_t st[ENPU_MAX_RANK];
        for (int d = 0; d < ty->rank; d++) st[d] = xs[n->attr.shape.axes[d]];
        int64_t off = 0;
        for (int64_t i = 0; i < total; i++) {
            y[i] = x[off];
            for (int d = ty->rank - 1; d >= 0; d--) {
                off += st[d];
                if (++idx[d] < ty->dims[d]) break;
                off -= st[d] * ty->dims[d];
                idx[d] = 0;
            }
        }
        return;
    }
    case ENPU_OP_CONCAT: {
        int ax = n->attr.shape.axis;
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < ax; d++) outer *= ty->dims[d];
        for (int d = ax + 1; d < ty->rank; d++) inner *= ty->dims[d];
        int64_t pos = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int k = 0; k < n->n_in; k++) {
                const enpu_tensor *tk = &qg->tensors[n->in[k]];
                int64_t chunk = tk->dims[ax] * inner;
                memcpy(y + pos, ex->v8[n->in[k]] + o * chunk, (size_t)chunk);
                pos += chunk;
            }
        return;
    }
    case ENPU_OP_PAD: {
        strides_of(tx, xs);
        const int64_t *pads = n->attr.pad.pads;
        int r = ty->rank;
        for (int64_t i = 0; i < total; i++) {
            int64_t off = 0;
            bool in = true;
            for (int d = 0; d < r; d++) {
                int64_t s = idx[d] - pads[d];
                if (s < 0 || s >= tx->dims[d]) in = false;
                off += s * xs[d];
            }
            y[i] = in ? x[off] : (int8_t)n->q->zp_out;
            for (int d = r - 1; d >= 0; d--) {
                if (++idx[d] < ty->dims[d]) break;
                idx[d] = 0;
            }
        }
        return;
    }
    default:
        if (total) memcpy(y, x, (size_t)total);
        return;
    }
}

static int run_host(enpu_gexec *ex, int node, enpu_err *err) {
    const enpu_graph *qg = ex->qg;
    const enpu_node *n = &qg->nodes[node];
    if (qg->requant == ENPU_REQUANT_TFLITE) {
        const enpu_tensor *x = &qg->tensors[n->in[0]], *y = &qg->tensors[n->out[0]];
        char what[ENPU_MAX_NAME + 16];
        snprintf(what, sizeof what, "host node '%s'", nm(n));
        return enpu_tfl_host_run(n->op, n->attr.shape.axis, x->rank, x->dims, ex->v8[n->in[0]],
                                 sc(x), zp(x), ex->v8[n->out[0]], sc(y), zp(y), what, err);
    }
    host_twin *h = &ex->host[node];
    for (int i = 0; i < h->n_in; i++) {
        int t = h->src[i];
        const enpu_tensor *tt = &qg->tensors[t];
        float *dst = h->bufs[i].data;
        int64_t cnt = enpu_tensor_numel(tt);
        if (tt->dtype == ENPU_DT_INT8)
            dequant(tt, ex->v8[t], dst);
        else if (tt->dtype == ENPU_DT_INT16)
            dequant16(tt, ex->v16[t], dst);
        else if (cnt)
            memcpy(dst, ex->vf[t], (size_t)cnt * sizeof(float));
    }
    int rc = enpu_fexec_run_n(h->ex, h->n_in, h->bufs, err);
    if (rc) return enpu_err_prefix(err, "host node '%s'", nm(n));
    const float *v = enpu_fexec_value(h->ex, h->out);
    const enpu_tensor *ty = &qg->tensors[n->out[0]];
    int64_t cnt = enpu_tensor_numel(ty);
    if (ty->dtype == ENPU_DT_INT8) {
        float s = sc(ty);
        int32_t z = zp(ty);
        for (int64_t i = 0; i < cnt; i++) ex->v8[n->out[0]][i] = (int8_t)enpu_quantize(v[i], s, z, -128, 127);
    } else if (ty->dtype == ENPU_DT_INT16) {
        float s = sc(ty);
        for (int64_t i = 0; i < cnt; i++)
            ex->v16[n->out[0]][i] = (int16_t)enpu_quantize(v[i], s, 0, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX);
    } else if (cnt) {
        memcpy(ex->vf[n->out[0]], v, (size_t)cnt * sizeof(float));
    }
    return 0;
}

static int run_nodes(enpu_gexec *ex, enpu_err *err) {
    const enpu_graph *qg = ex->qg;
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        if (ex->v16[n->out[0]]) { /* a 16-bit graph: conv, or a move or host op on the host's twin */
            int rc = n->q->kind == ENPU_Q_CONV ? (run_conv16(ex, n), 0) : run_host(ex, i, err);
            if (rc) return rc;
            continue;
        }
        if (ex->fast && ex->fast[i]) {
            const int8_t *ins[2] = {ex->v8[n->in[0]], n->n_in > 1 && n->in[1] >= 0 ? ex->v8[n->in[1]] : NULL};
            gf_run(ex->fast[i], ins, ex->v8[n->out[0]]);
            continue;
        }
        switch (n->q->kind) {
        case ENPU_Q_CONV: run_conv(ex, n); break;
        case ENPU_Q_MAXPOOL: run_maxpool(ex, n); break;
        case ENPU_Q_ADD:
        case ENPU_Q_MUL: run_binary(ex, n); break;
        case ENPU_Q_TABLE: run_table(ex, n); break;
        case ENPU_Q_MOVE:
            if (move_by_twin(n)) {
                int rc = run_host(ex, i, err);
                if (rc) return rc;
            } else {
                run_move(ex, n);
            }
            break;
        case ENPU_Q_HOST: {
            int rc = run_host(ex, i, err);
            if (rc) return rc;
            break;
        }
        }
    }
    return 0;
}

/* Graph input t from float values: int8, or int16 in a 16-bit graph. */
static void quantize_input(enpu_gexec *ex, int t, const float *v, int64_t cnt, float s, int32_t z) {
    if (ex->v16[t]) {
        for (int64_t k = 0; k < cnt; k++)
            ex->v16[t][k] = (int16_t)enpu_quantize(v[k], s, 0, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX);
        return;
    }
    for (int64_t k = 0; k < cnt; k++) ex->v8[t][k] = (int8_t)enpu_quantize(v[k], s, z, -128, 127);
}

int enpu_gexec_run(enpu_gexec *ex, const enpu_buf *inputs, enpu_err *err) {
    if (!ex || (ex->qg->n_inputs && !inputs))
        return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_run: NULL argument");
    const enpu_graph *qg = ex->qg;
    for (int i = 0; i < qg->n_inputs; i++) {
        int t = qg->inputs[i];
        const enpu_tensor *tt = &qg->tensors[t];
        const enpu_buf *b = &inputs[i];
        if (!enpu_shape_fits(b->rank, b->dims, tt->rank, tt->dims))
            return enpu_shape_error(err, NULL, tt->name, b->rank, b->dims, tt->rank, tt->dims);
        int64_t cnt = enpu_tensor_numel(tt);
        if (cnt == 0) continue;
        if (!b->data) return enpu_fail(err, ENPU_E_USAGE, "input #%d '%s': no data", i, tt->name);
        float s = sc(tt);
        int32_t z = zp(tt);
        if (b->dtype == ENPU_DT_FLOAT32) {
            const float *v = b->data;
            quantize_input(ex, t, v, cnt, s, z);
            continue;
        }
        enpu_buf tmp = *b;
        tmp.name = NULL;
        size_t esz = enpu_dtype_size(b->dtype);
        if (!esz) return enpu_fail(err, ENPU_E_UNSUPPORTED, "input #%d '%s': dtype %s", i, tt->name,
                                   enpu_dtype_name(b->dtype));
        tmp.data = malloc((size_t)cnt * esz);
        if (!tmp.data) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        memcpy(tmp.data, b->data, (size_t)cnt * esz);
        int rc = enpu_buf_to_f32(&tmp, err);
        if (!rc) quantize_input(ex, t, tmp.data, cnt, s, z);
        enpu_buf_free(&tmp);
        if (rc) return rc;
    }
    return run_nodes(ex, err);
}

int enpu_gexec_run_i8(enpu_gexec *ex, const int8_t *const *inputs, enpu_err *err) {
    if (!ex || (ex->qg->n_inputs && !inputs))
        return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_run_i8: NULL argument");
    if (enpu_qgraph_bits(ex->qg) != 8)
        return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_run_i8: a 16-bit graph takes float inputs");
    for (int i = 0; i < ex->qg->n_inputs; i++) {
        int t = ex->qg->inputs[i];
        int64_t cnt = enpu_tensor_numel(&ex->qg->tensors[t]);
        if (cnt && !inputs[i]) return enpu_fail(err, ENPU_E_USAGE, "input #%d: no data", i);
        if (cnt) memcpy(ex->v8[t], inputs[i], (size_t)cnt);
    }
    return run_nodes(ex, err);
}

const int8_t *enpu_gexec_value_i8(const enpu_gexec *ex, int t) {
    if (!ex || t < 0 || t >= ex->qg->n_tensors) return NULL;
    return ex->v8[t];
}

const int16_t *enpu_gexec_value_i16(const enpu_gexec *ex, int t) {
    if (!ex || t < 0 || t >= ex->qg->n_tensors) return NULL;
    return ex->v16[t];
}

int enpu_gexec_value_f32(const enpu_gexec *ex, int t, float *dst, enpu_err *err) {
    if (!ex || !dst || t < 0 || t >= ex->qg->n_tensors)
        return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_value_f32: bad argument");
    const enpu_tensor *tt = &ex->qg->tensors[t];
    if (ex->v8[t]) {
        dequant(tt, ex->v8[t], dst);
        return 0;
    }
    if (ex->v16[t]) {
        dequant16(tt, ex->v16[t], dst);
        return 0;
    }
    if (ex->vf[t]) {
        int64_t cnt = enpu_tensor_numel(tt);
        if (cnt) memcpy(dst, ex->vf[t], (size_t)cnt * sizeof(float));
        return 0;
    }
    return enpu_fail(err, ENPU_E_USAGE, "tensor '%s' has no value", tt->name);
}

int enpu_gexec_output(const enpu_gexec *ex, int i, enpu_buf *out, enpu_err *err) {
    if (!ex || !out) return enpu_fail(err, ENPU_E_USAGE, "enpu_gexec_output: NULL argument");
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= ex->qg->n_outputs)
        return enpu_fail(err, ENPU_E_USAGE, "output #%d does not exist (the graph has %d)", i,
                         ex->qg->n_outputs);
    int t = ex->qg->outputs[i];
    const enpu_tensor *tt = &ex->qg->tensors[t];
    int rc = enpu_buf_alloc(out, ENPU_DT_FLOAT32, tt->rank, tt->dims, err);
    if (rc) return rc;
    if ((rc = enpu_gexec_value_f32(ex, t, out->data, err))) {
        enpu_buf_free(out);
        return rc;
    }
    size_t n = strlen(tt->name) + 1;
    out->name = malloc(n);
    if (!out->name) {
        enpu_buf_free(out);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    memcpy(out->name, tt->name, n);
    return 0;
}

int enpu_gexec_compare_kernels(const enpu_graph *qg, const enpu_buf *inputs, enpu_gexec_kernels a,
                               enpu_gexec_kernels b, enpu_err *err) {
    enpu_gexec *ea = NULL, *eb = NULL;
    int rc = enpu_gexec_new(qg, &ea, err);
    if (!rc) rc = enpu_gexec_new(qg, &eb, err);
    if (!rc) rc = enpu_gexec_set_kernels(ea, a, err);
    if (!rc) rc = enpu_gexec_set_kernels(eb, b, err);
    if (!rc) rc = enpu_gexec_run(ea, inputs, err);
    if (!rc) rc = enpu_gexec_run(eb, inputs, err);
    for (int i = 0; i < qg->n_nodes && !rc; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        for (int o = 0; o < n->n_out && !rc; o++) {
            int t = n->out[o];
            if (t < 0) continue;
            int64_t cnt = enpu_tensor_numel(&qg->tensors[t]);
            const int8_t *va = ea->v8[t], *vb = eb->v8[t];
            const float *fa = ea->vf[t], *fb = eb->vf[t];
            for (int64_t k = 0; k < cnt && !rc; k++) {
                bool same = va && vb ? va[k] == vb[k]
                                     : (fa && fb ? memcmp(&fa[k], &fb[k], sizeof *fa) == 0 : true);
                if (same) continue;
                char ga[32], gb[32];
                if (va && vb) {
                    snprintf(ga, sizeof ga, "%d", va[k]);
                    snprintf(gb, sizeof gb, "%d", vb[k]);
                } else {
                    snprintf(ga, sizeof ga, "%.9g", (double)fa[k]);
                    snprintf(gb, sizeof gb, "%.9g", (double)fb[k]);
                }
                rc = enpu_fail(err, ENPU_E_MISMATCH,
                               "node '%s' (%s): output '%s' element %lld: %s kernels (%s) give "
                               "%s, %s kernels (%s) give %s",
                               nm(n), enpu_qkind_name(n->q->kind), qg->tensors[t].name,
                               (long long)k, kernel_labels[a], enpu_gexec_kernels_name(ea), ga,
                               kernel_labels[b], enpu_gexec_kernels_name(eb), gb);
            }
        }
    }
    enpu_gexec_free(ea);
    enpu_gexec_free(eb);
    return rc;
}
