/* Golden int8 reference: executes a quantized graph with integer arithmetic
 * only (numerics.h, pwl.h), node by node, exactly per the per-kind semantics
 * of quant.h, keeping every tensor's value for layer-by-layer comparison.
 * HOST nodes run in float through a one-node twin graph on the float
 * reference (golden_twin.c).  Here: the names of the kinds, the geometry of
 * CONV-kind nodes and the executor; the checker of quantized graphs is
 * golden_check.c, the per-kind kernels golden_kernels.c. */
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

#define WIN_LIMIT ENPU_WIN_LIMIT


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

int gd_bad_out(const enpu_node *n, const enpu_tensor *y, const char *why, enpu_err *err) {
    return enpu_fail(err, ENPU_E_INVALID, "node '%s': output '%s' has the wrong shape (%s)",
                     gd_name(n), y->name, why);
}

int enpu_qconv_geom_of(const enpu_graph *qg, const enpu_node *n, enpu_qconv_geom *q,
                       enpu_err *err) {
    memset(q, 0, sizeof *q);
    q->kh = q->kw = q->sh = q->sw = q->dh = q->dw = q->group = 1;
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    if (!x || !y || x->rank < 0 || y->rank < 0)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': missing input or output", gd_name(n));
    int rc;
    switch (n->op) {
    case ENPU_OP_CONV: {
        const enpu_tensor *w = enpu_node_input(qg, n, 1);
        if (x->rank != 3 && x->rank != 4)
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': Conv input of rank %d", gd_name(n),
                             x->rank);
        if (!w || w->rank != x->rank || w->dims[0] < 1 || w->dims[1] < 1 ||
            w->dims[w->rank - 1] > WIN_LIMIT || (x->rank == 4 && w->dims[2] > WIN_LIMIT))
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': bad weight tensor", gd_name(n));
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
                             gd_name(n), q->group, (long long)q->ci, (long long)q->co);
        break;
    }
    case ENPU_OP_AVGPOOL:
        if (x->rank != 3 && x->rank != 4)
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': AveragePool input of rank %d",
                             gd_name(n), x->rank);
        rc = window_geom(n, &n->attr.pool.w, x->rank, n->attr.pool.w.kernel[0],
                         n->attr.pool.w.kernel[1], q, err);
        if (rc) return rc;
        q->ci = q->co = x->dims[1];
        q->group = (int)q->ci;
        break;
    case ENPU_OP_GLOBAL_AVGPOOL:
        if (x->rank < 3)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': input of rank %d", gd_name(n), x->rank);
        q->ci = q->co = x->dims[1];
        q->group = (int)q->ci;
        spatial_of(x, &q->h, &q->w);
        if (q->h > WIN_LIMIT || q->w > WIN_LIMIT || q->h < 1 || q->w < 1)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': pooled map is empty or too large",
                             gd_name(n));
        q->kh = (int)q->h;
        q->kw = (int)q->w;
        break;
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_SUM: {
        /* over the whole map: a global pooling, keepdims or not */
        const enpu_reduce_attr *a = &n->attr.reduce;
        if ((x->rank != 3 && x->rank != 4) || a->n_axes != x->rank - 2)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': a CONV-kind reduction is over the "
                             "whole map of a rank-3/4 tensor", gd_name(n));
        for (int k = 0; k < a->n_axes; k++)
            if (a->axes[k] != 2 + k)
                return enpu_fail(err, ENPU_E_INVALID, "node '%s': reduced axes are not the map's", gd_name(n));
        q->n = x->dims[0];
        q->ci = q->co = x->dims[1];
        q->group = (int)q->ci;
        spatial_of(x, &q->h, &q->w);
        if (q->h > WIN_LIMIT || q->w > WIN_LIMIT || q->h < 1 || q->w < 1 || q->ci < 1 || q->ci > INT_MAX)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': reduced map is empty or too large", gd_name(n));
        q->kh = (int)q->h, q->kw = (int)q->w;
        q->oh = q->ow = 1;
        q->k = (int64_t)q->kh * q->kw;
        bool keep = a->keepdims && y->rank == x->rank;
        for (int d = 2; keep && d < y->rank; d++) keep = y->dims[d] == 1;
        bool flat = !a->keepdims && y->rank == 2;
        if ((!keep && !flat) || y->dims[0] != q->n || y->dims[1] != q->co)
            return gd_bad_out(n, y, "the reduced map", err);
        return 0;
    }
    case ENPU_OP_GEMM:
        if (x->rank != 2 || y->rank != 2 || y->dims[0] != x->dims[0])
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': FC needs [M, K] -> [M, N]", gd_name(n));
        q->n = x->dims[0];
        q->ci = x->dims[1];
        q->co = y->dims[1];
        q->h = q->w = q->oh = q->ow = 1;
        q->k = q->ci;
        if (q->co < 1 || q->ci < 1)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': empty FC", gd_name(n));
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
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': %lld channels", gd_name(n),
                             (long long)q->ci);
        if (y->rank != x->rank || enpu_tensor_numel(y) != enpu_tensor_numel(x))
            return gd_bad_out(n, y, "must equal the input's", err);
        for (int d = 0; d < x->rank; d++)
            if (y->dims[d] != x->dims[d]) return gd_bad_out(n, y, "must equal the input's", err);
        return 0;
    default:
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': op %s cannot be a CONV-kind node",
                         gd_name(n), enpu_op_name(n->op));
    }
    /* windowed: Conv, AveragePool, GlobalAveragePool */
    if (q->ci < 1 || q->ci > INT_MAX)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %lld channels", gd_name(n), (long long)q->ci);
    q->n = x->dims[0];
    if (n->op != ENPU_OP_GLOBAL_AVGPOOL) spatial_of(x, &q->h, &q->w);
    q->oh = extent(q->h, q->pt, q->pb, q->kh, q->sh, q->dh, false);
    q->ow = extent(q->w, q->pl, q->pr, q->kw, q->sw, q->dw, false);
    if (q->oh < 1 || q->ow < 1)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': kernel larger than the padded input",
                         gd_name(n));
    q->k = (q->ci / q->group) * q->kh * q->kw;
    if (y->rank != x->rank || y->dims[0] != q->n || y->dims[1] != q->co)
        return gd_bad_out(n, y, "batch or channels", err);
    int64_t oh, ow;
    spatial_of(y, &oh, &ow);
    if (oh != q->oh || ow != q->ow) return gd_bad_out(n, y, "spatial size", err);
    return 0;
}

/* Window of a MaxPool: like the others, but ceil-mode extents are allowed. */
int gd_maxpool_geom(const enpu_graph *qg, const enpu_node *n, enpu_qconv_geom *q,
                        enpu_err *err) {
    memset(q, 0, sizeof *q);
    const enpu_tensor *x = enpu_node_input(qg, n, 0), *y = enpu_node_output(qg, n, 0);
    if (!x || !y || (x->rank != 3 && x->rank != 4))
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': MaxPool needs a rank-3/4 input",
                         gd_name(n));
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
                         gd_name(n));
    if (y->rank != x->rank || y->dims[0] != q->n || y->dims[1] != q->ci)
        return gd_bad_out(n, y, "batch or channels", err);
    spatial_of(y, &q->oh, &q->ow);
    if (q->oh < lh || q->oh > hh || q->ow < lw || q->ow > hw)
        return gd_bad_out(n, y, "spatial size", err);
    q->k = (int64_t)q->kh * q->kw;
    return 0;
}

/* --- executor -------------------------------------------------------------------------------- */


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
        for (int i = 0; i < qg->n_nodes; i++) gd_twin_free(&ex->host[i]);
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
        } else if (gd_unquantized(x)) {
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
            (n->q->kind == ENPU_Q_MOVE && (b16 || gd_move_by_twin(n))))
            rc = gd_build_twin(qg, n, &ex->host[i], err);
    }
    if (!rc) rc = enpu_gexec_set_kernels(ex, ENPU_GK_FAST, err);
    if (rc) {
        enpu_gexec_free(ex);
        return rc;
    }
    *out = ex;
    return 0;
}

static int run_nodes(enpu_gexec *ex, enpu_err *err) {
    const enpu_graph *qg = ex->qg;
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        if (ex->v16[n->out[0]]) { /* a 16-bit graph: conv, or a move or host op on the host's twin */
            int rc = n->q->kind == ENPU_Q_CONV ? (gd_run_conv16(ex, n), 0) : gd_run_host(ex, i, err);
            if (rc) return rc;
            continue;
        }
        if (ex->fast && ex->fast[i]) {
            const int8_t *ins[2] = {ex->v8[n->in[0]], n->n_in > 1 && n->in[1] >= 0 ? ex->v8[n->in[1]] : NULL};
            gf_run(ex->fast[i], ins, ex->v8[n->out[0]]);
            continue;
        }
        switch (n->q->kind) {
        case ENPU_Q_CONV: gd_run_conv(ex, n); break;
        case ENPU_Q_MAXPOOL: gd_run_maxpool(ex, n); break;
        case ENPU_Q_ADD:
        case ENPU_Q_MUL: gd_run_binary(ex, n); break;
        case ENPU_Q_TABLE: gd_run_table(ex, n); break;
        case ENPU_Q_MOVE:
            if (gd_move_by_twin(n)) {
                int rc = gd_run_host(ex, i, err);
                if (rc) return rc;
            } else {
                gd_run_move(ex, n);
            }
            break;
        case ENPU_Q_HOST: {
            int rc = gd_run_host(ex, i, err);
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
        float s = gd_scale(tt);
        int32_t z = gd_zp(tt);
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
        gd_dequant(tt, ex->v8[t], dst);
        return 0;
    }
    if (ex->v16[t]) {
        gd_dequant16(tt, ex->v16[t], dst);
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
                               gd_name(n), enpu_qkind_name(n->q->kind), qg->tensors[t].name,
                               (long long)k, kernel_labels[a], enpu_gexec_kernels_name(ea), ga,
                               kernel_labels[b], enpu_gexec_kernels_name(eb), gb);
            }
        }
    }
    enpu_gexec_free(ea);
    enpu_gexec_free(eb);
    return rc;
}
