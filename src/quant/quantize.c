/* Post-training quantization: float graph -> int8 graph (quant.h).
 *
 * 1. A copy of the float graph is rewritten (passes.c).
 * 2. Activation ranges are observed on the float reference (calib.c).
 * 3. Every node gets a kind (classify): NPU kinds where the semantics of
 *    quant.h can express the op, HOST otherwise (with the reason); a
 *    Relu/Clip whose producer requantizes and has no other reader is folded
 *    into the producer's clamp.
 * 4. Every int8 tensor gets (scale, zero point) (assign_params): from its
 *    observed range, or its input's for MaxPool and data movement; Concat
 *    inputs are forced onto the output's parameters when their producer can
 *    requantize to them, otherwise a RESCALE node is inserted.
 * 5. The int8 graph is built node by node with the integer parameters of
 *    each (weights, biases with the zero-point correction, M/S, add
 *    multipliers, PWL tables), proving every accumulator fits acc_bits. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "quant/passes.h"
#include "quant/qinternal.h"

void enpu_quant_opts_default(enpu_quant_opts *o) {
    memset(o, 0, sizeof *o);
    o->method = ENPU_CALIB_MINMAX;
    o->percentile = 99.99;
    o->mult_bits = ENPU_MULT_BITS_DEFAULT;
    o->acc_bits = ENPU_ACC_BITS_DEFAULT;
    o->act_segments = ENPU_PWL_SEGMENTS_DEFAULT;
    o->quiet = false;
    o->bits = 8;
    o->wide_acc_bits = ENPU_ACC_BITS_WIDE_MAX;
}

void enpu_quant_opts_for_arch(enpu_quant_opts *o, const enpu_arch *a) {
    enpu_quant_opts_default(o);
    o->mult_bits = (int)a->mult_bits;
    o->acc_bits = (int)a->acc_bits;
    o->act_segments = (int)a->act_segments;
}

void enpu_qnode_free(enpu_qnode *q) {
    if (!q) return;
    free(q->w);
    free(q->w16);
    free(q->bias);
    free(q->M);
    free(q->S);
    free(q->table);
    free(q->fused);
    free(q);
}

static void qnode_free_hook(struct enpu_qnode *q) { enpu_qnode_free(q); }

static enpu_qnode *qnode_new(enpu_qkind kind) {
    enpu_qnode *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->kind = kind;
    q->lo = -128;
    q->hi = 127;
    return q;
}

static char *xstrdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* --- context ------------------------------------------------------------------- */

typedef struct plan {
    enpu_qkind kind;
    enpu_qorigin origin;
    bool absorbed;   /* a Relu/Clip folded into its producer */
    int out;         /* fg tensor the node writes in the int8 graph */
    double clip_lo, clip_hi;
    char *names;     /* float nodes merged into this one, "+"-joined */
    char *note;      /* why HOST, ... */
} plan;

typedef struct rescale {
    int node, input;
} rescale;

typedef struct qctx {
    const enpu_graph *fg;
    const enpu_qp_info *info;
    const enpu_quant_opts *o;
    enpu_err *err;
    enpu_qrange *rng;
    plan *pl;
    int *eff;        /* fg tensor -> fg node that writes it in the int8 graph */
    bool *npu_read;  /* read by an NPU (non-HOST) node */
    bool *is_float;  /* HOST output left float32 */
    bool *has;       /* params assigned */
    float *s;
    int32_t *z;
    rescale *rs;
    int n_rs;
    int n_forced;
    int n_given;     /* tensors with the model's own parameters */
    int n_given_w;   /* weight tensors with the model's own scales */
    enpu_graph *qg;
    int *qt;         /* fg tensor -> qg tensor */
    char **notes;    /* per qg node */
    int cap_notes;
} qctx;

static const char *fname(const qctx *c, int t) { return c->fg->tensors[t].name; }

static bool is_act(const enpu_graph *g, int t) {
    return t >= 0 && !(g->tensors[t].flags & ENPU_T_CONST);
}

static bool single_use(const enpu_graph *g, int t) {
    if (t < 0 || (g->tensors[t].flags & ENPU_T_OUTPUT)) return false;
    int cnt = 0;
    enpu_graph_consumer(g, t, &cnt);
    return cnt == 1;
}

static bool same_shape_as(const enpu_graph *g, int a, int b) {
    const enpu_tensor *x = &g->tensors[a], *y = &g->tensors[b];
    if (x->rank != y->rank) return false;
    for (int d = 0; d < x->rank; d++)
        if (x->dims[d] != y->dims[d]) return false;
    return true;
}

static int append_names(qctx *c, plan *p, const char *more) {
    char *s = xprintf("%s+%s", p->names, more);
    if (!s) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    free(p->names);
    p->names = s;
    return 0;
}

static void set_host(plan *p, char *note) {
    p->kind = ENPU_Q_HOST;
    free(p->note);
    p->note = note;
}

/* --- 3. kinds ---------------------------------------------------------------- */

/* AveragePool with the same divisor at every output position (so 1/N can go
 * into M): N = kh*kw counts every tap, padding included when
 * count_include_pad, only real input positions otherwise. */
static bool avgpool_uniform(const enpu_graph *g, const enpu_node *n) {
    const enpu_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
    if ((x->rank != 3 && x->rank != 4) || y->rank != x->rank) return false;
    const enpu_pool_attr *a = &n->attr.pool;
    bool two = x->rank == 4;
    int kh = two ? a->w.kernel[0] : 1, kw = a->w.kernel[1];
    int sh = two ? a->w.stride[0] : 1, sw = a->w.stride[1];
    int dh = two ? a->w.dilation[0] : 1, dw = a->w.dilation[1];
    int pt = two ? a->w.pads[0] : 0, pb = two ? a->w.pads[2] : 0, pl = a->w.pads[1],
        pr = a->w.pads[3];
    int64_t h = two ? x->dims[2] : 1, w = x->dims[x->rank - 1];
    int64_t oh = two ? y->dims[2] : 1, ow = y->dims[y->rank - 1];
    /* Output size must be the floor-mode one (a ceil-mode extra window runs
     * past the padded input). */
    int64_t eh = h + pt + pb - ((int64_t)dh * (kh - 1) + 1), ew = w + pl + pr - ((int64_t)dw * (kw - 1) + 1);
    if (eh < 0 || ew < 0 || oh != eh / sh + 1 || ow != ew / sw + 1) return false;
    if (a->count_include_pad) return true;
    /* Not counting padding: every window must lie inside the input. */
    for (int64_t oy = 0; oy < oh; oy++) {
        int64_t y0 = oy * sh - pt, y1 = y0 + (int64_t)dh * (kh - 1);
        if (y0 < 0 || y1 >= h) return false;
    }
    for (int64_t ox = 0; ox < ow; ox++) {
        int64_t x0 = ox * sw - pl, x1 = x0 + (int64_t)dw * (kw - 1);
        if (x0 < 0 || x1 >= w) return false;
    }
    return true;
}

/* The kinds that go to the host: the target engine's, and with 16-bit data
 * every kind but CONV and MOVE (docs/numerics.md §12). */
static unsigned host_kinds(const qctx *c) {
    unsigned k = c->o->host_kinds;
    if (c->o->bits == 16)
        k |= 1u << ENPU_Q_ADD | 1u << ENPU_Q_MUL | 1u << ENPU_Q_TABLE | 1u << ENPU_Q_MAXPOOL;
    return k;
}

/* Is an input of n from index `first` on (a parameter the NPU needs as a
 * constant: Clip's bounds, Pad's value) computed by the graph? */
static bool runtime_param(const enpu_graph *g, const enpu_node *n, int first) {
    for (int k = first; k < n->n_in; k++)
        if (n->in[k] >= 0 && !(g->tensors[n->in[k]].flags & ENPU_T_CONST)) return true;
    return false;
}

/* Does window node n (Conv, pools, a reduction over the map) fit the
 * target's instruction fields (opts->npu_max)?  When not, *why says which
 * value.  A stride whose window applies once along its axis does not count
 * (the compiler shrinks it, docs/compiler.md §1). */
static bool npu_fits(const qctx *c, const enpu_graph *g, const enpu_node *n, const plan *p, char *why,
                     size_t nwhy) {
    const enpu_npu_max *m = &c->o->npu_max;
    if (!m->kernel || p->kind == ENPU_Q_HOST) return true;
    const enpu_tensor *x = n->n_in > 0 && n->in[0] >= 0 ? &g->tensors[n->in[0]] : NULL;
    const enpu_tensor *y = &g->tensors[n->out[0]];
    if (!x || x->rank < 3 || y->rank < 3) return true;
    bool two = x->rank == 4;
    int64_t hi = two ? x->dims[2] : 1, wi = x->dims[x->rank - 1], ho = two ? y->dims[2] : 1,
            wo = y->dims[y->rank - 1];
    int64_t dims[6] = {hi, wi, x->dims[1], ho, wo, y->dims[1]};
    for (int k = 0; k < 6; k++)
        if (dims[k] > m->dim) {
            snprintf(why, nwhy, "a dimension of %lld, over the instruction's %lld", (long long)dims[k],
                     (long long)m->dim);
            return false;
        }
    const enpu_window *w = NULL;
    int64_t kh = 1, kw = 1;
    if (n->op == ENPU_OP_CONV) {
        const enpu_tensor *wt = n->n_in > 1 && n->in[1] >= 0 ? &g->tensors[n->in[1]] : NULL;
        if (!wt || wt->rank < 3) return true;
        kh = wt->rank == 4 ? wt->dims[2] : 1, kw = wt->dims[wt->rank - 1];
        w = &n->attr.conv.w;
    } else if (n->op == ENPU_OP_MAXPOOL || n->op == ENPU_OP_AVGPOOL) {
        w = &n->attr.pool.w;
        kh = two ? w->kernel[0] : 1, kw = w->kernel[1];
    } else if (p->kind == ENPU_Q_CONV && p->origin == ENPU_QO_AVGPOOL) {
        kh = hi, kw = wi; /* a mean over the whole map: one window */
    }
    if (kh > m->kernel || kw > m->kernel) {
        snprintf(why, nwhy, "kernel %lldx%lld, over the instruction's %lld", (long long)kh, (long long)kw,
                 (long long)m->kernel);
        return false;
    }
    if (!w) return true;
    for (int a = two ? 0 : 1; a < 2; a++) {
        int64_t out = a ? wo : ho;
        if (w->stride[a] > m->stride && out > 1) {
            snprintf(why, nwhy, "stride %d, over the instruction's %lld", w->stride[a], (long long)m->stride);
            return false;
        }
        if (w->dilation[a] > m->dilation) {
            snprintf(why, nwhy, "dilation %d, over the instruction's %lld", w->dilation[a], (long long)m->dilation);
            return false;
        }
    }
    for (int k = 0; k < 4; k++)
        if (w->pads[k] > m->pad) {
            snprintf(why, nwhy, "padding %d, over the instruction's %lld", w->pads[k], (long long)m->pad);
            return false;
        }
    return true;
}

static int classify(qctx *c) {
    const enpu_graph *g = c->fg;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        plan *p = &c->pl[i];
        p->out = n->out[0];
        p->clip_lo = -INFINITY;
        p->clip_hi = INFINITY;
        p->kind = ENPU_Q_HOST;
        p->names = xstrdup(c->info->fused[i] ? c->info->fused[i] : n->name);
        if (!p->names) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        int x = n->n_in > 0 ? n->in[0] : -1;
        /* Add/Mul may have the constant first: x is then the other operand */
        if ((n->op == ENPU_OP_ADD || n->op == ENPU_OP_MUL) && n->n_in == 2 && !is_act(g, x))
            x = n->in[1];
        const enpu_tensor *xt = x >= 0 ? &g->tensors[x] : NULL;
        bool xact = is_act(g, x) && xt->dtype == ENPU_DT_FLOAT32;
        if (!xact) {
            set_host(p, xprintf("input 0 is not an activation"));
            continue;
        }
        if (n->op == ENPU_OP_LSTM || n->op == ENPU_OP_GRU || n->op == ENPU_OP_RNN) {
            /* every output (Y, the final states) is the host's */
            set_host(p, xprintf("%s: the host runs the recurrence (gates and state, every step)",
                                enpu_op_name(n->op)));
            continue;
        }
        for (int k = 1; k < n->n_out; k++) {
            int cnt = 0;
            if (n->out[k] >= 0) enpu_graph_consumer(g, n->out[k], &cnt);
            if (cnt || (n->out[k] >= 0 && (g->tensors[n->out[k]].flags & ENPU_T_OUTPUT)))
                return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                                 "node '%s' (%s): output #%d is used; only output 0 is quantized",
                                 n->name, enpu_op_name(n->op), k);
        }
        switch (n->op) {
        case ENPU_OP_CONV: {
            bool wc = n->n_in > 1 && n->in[1] >= 0 &&
                      (g->tensors[n->in[1]].flags & ENPU_T_CONST) &&
                      g->tensors[n->in[1]].dtype == ENPU_DT_FLOAT32;
            bool bc = n->n_in < 3 || n->in[2] < 0 || (g->tensors[n->in[2]].flags & ENPU_T_CONST);
            if (!wc || !bc || (xt->rank != 3 && xt->rank != 4))
                set_host(p, xprintf("Conv weights or bias are not constant, or not 1-D/2-D"));
            else
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_CONV;
            break;
        }
        case ENPU_OP_GEMM:
            if (enpu_qp_gemm_canonical(g, n))
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_FC;
            else
                set_host(p, xprintf("Gemm with transA or a non-constant B/C (not an FC)"));
            break;
        case ENPU_OP_AVGPOOL:
            if (avgpool_uniform(g, n))
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_AVGPOOL;
            else
                set_host(p, xprintf("AveragePool divisor varies per position "
                                    "(count_include_pad=0 with padding, or a ceil-mode edge "
                                    "window); 1/N cannot be one multiplier"));
            break;
        case ENPU_OP_GLOBAL_AVGPOOL:
            if (xt->rank >= 3)
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_AVGPOOL;
            else
                set_host(p, xprintf("GlobalAveragePool of rank %d", xt->rank));
            break;
        case ENPU_OP_REDUCE_MEAN:
        case ENPU_OP_REDUCE_SUM:
            /* over the whole map: a global average pool (ReduceSum: without
             * the 1/N) */
            if (enpu_qp_reduces_map(g, n))
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_AVGPOOL;
            else
                set_host(p, xprintf("%s over axes other than the whole map of a rank-3/4 tensor",
                                    enpu_op_name(n->op)));
            break;
        case ENPU_OP_FLOOR:
        case ENPU_OP_CEIL:
            /* a staircase: one table segment per step, and a calibrated
             * range spans far more than 16 steps (9-10 LSB off with 16
             * segments, docs/numerics.md §11); the host is exact */
            set_host(p, xprintf("%s is a staircase no table of %d segments follows",
                                enpu_op_name(n->op), c->o->act_segments));
            break;
        case ENPU_OP_POW: {
            const enpu_tensor *e = n->n_in > 1 && n->in[1] >= 0 ? &g->tensors[n->in[1]] : NULL;
            if (e && (e->flags & ENPU_T_CONST) && e->dtype == ENPU_DT_FLOAT32 && enpu_tensor_numel(e) == 1 &&
                same_shape_as(g, n->in[0], n->out[0]))
                p->kind = ENPU_Q_TABLE;
            else
                set_host(p, xprintf("Pow with an exponent that is not one constant"));
            break;
        }
        case ENPU_OP_RESIZE:
            if (n->attr.resize.mode == ENPU_RESIZE_NEAREST)
                p->kind = ENPU_Q_MOVE;
            else
                set_host(p, xprintf("Resize %s interpolates", n->attr.resize.mode == ENPU_RESIZE_LINEAR
                                                                 ? "linear"
                                                                 : "cubic"));
            break;
        case ENPU_OP_GATHER: {
            const enpu_tensor *ix = &g->tensors[n->in[1]];
            if (ix->flags & ENPU_T_CONST)
                p->kind = ENPU_Q_MOVE;
            else
                set_host(p, xprintf("Gather of computed indices"));
            break;
        }
        case ENPU_OP_BATCHNORM: {
            bool ok = xt->rank >= 2;
            for (int k = 1; k < 5 && ok; k++)
                ok = n->in[k] >= 0 && (g->tensors[n->in[k]].flags & ENPU_T_CONST) &&
                     g->tensors[n->in[k]].dtype == ENPU_DT_FLOAT32;
            if (ok)
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_BN;
            else
                set_host(p, xprintf("BatchNormalization with non-constant parameters"));
            break;
        }
        case ENPU_OP_RELU:
        case ENPU_OP_CLIP: {
            if (runtime_param(g, n, 1)) {
                set_host(p, xprintf("Clip bounds computed by the graph: the host clips with each "
                                    "run's value"));
                break;
            }
            double lo = n->op == ENPU_OP_RELU ? 0.0 : n->attr.act.min;
            double hi = n->op == ENPU_OP_RELU ? INFINITY : n->attr.act.max;
            int pn = c->eff[x];
            if (pn >= 0 && !c->pl[pn].absorbed && c->pl[pn].out == x && single_use(g, x) &&
                (c->pl[pn].kind == ENPU_Q_CONV || c->pl[pn].kind == ENPU_Q_ADD ||
                 c->pl[pn].kind == ENPU_Q_MUL || c->pl[pn].kind == ENPU_Q_MAXPOOL)) {
                plan *pp = &c->pl[pn];
                pp->out = n->out[0];
                c->eff[n->out[0]] = pn;
                if (lo > pp->clip_lo) pp->clip_lo = lo;
                if (hi < pp->clip_hi) pp->clip_hi = hi;
                int rc = append_names(c, pp, p->names);
                if (rc) return rc;
                p->absorbed = true;
            } else {
                p->kind = ENPU_Q_CONV;
                p->origin = ENPU_QO_RELU;
                p->clip_lo = lo;
                p->clip_hi = hi;
            }
            break;
        }
        case ENPU_OP_MAXPOOL:
            if (xt->rank == 3 || xt->rank == 4)
                p->kind = ENPU_Q_MAXPOOL;
            else
                set_host(p, xprintf("MaxPool of rank %d", xt->rank));
            break;
        case ENPU_OP_ADD:
        case ENPU_OP_MUL: {
            int b = n->n_in > 1 ? n->in[1 - (x == n->in[1])] : -1;
            if (b >= 0 && g->tensors[b].dtype == ENPU_DT_FLOAT32 && g->tensors[b].rank >= 0)
                p->kind = n->op == ENPU_OP_ADD ? ENPU_Q_ADD : ENPU_Q_MUL;
            else
                set_host(p, xprintf("operand is not float32"));
            break;
        }
        case ENPU_OP_CONCAT: {
            bool ok = true;
            for (int k = 0; k < n->n_in; k++)
                if (!is_act(g, n->in[k])) ok = false;
            if (ok)
                p->kind = ENPU_Q_MOVE;
            else
                set_host(p, xprintf("Concat with a constant input"));
            break;
        }
        case ENPU_OP_PAD:
            if (runtime_param(g, n, 2))
                set_host(p, xprintf("Pad value computed by the graph: the host pads with each "
                                    "run's value"));
            else if (n->attr.pad.value == 0.0f || n->attr.pad.mode != ENPU_PADMODE_CONSTANT)
                p->kind = ENPU_Q_MOVE;
            else
                set_host(p, xprintf("Pad with value %g (a MOVE pads with the zero point)",
                                    (double)n->attr.pad.value));
            break;
        default:
            if (enpu_q_is_table_op(n->op))
                p->kind = ENPU_Q_TABLE;
            else if (enpu_q_is_move_op(n->op))
                p->kind = ENPU_Q_MOVE;
            else
                set_host(p, xprintf("no NPU kernel for %s", enpu_op_name(n->op)));
            break;
        }
        char why[160];
        if (!p->absorbed && !npu_fits(c, g, n, p, why, sizeof why))
            set_host(p, xprintf("%s: the host computes it", why));
        if (!p->absorbed && p->kind != ENPU_Q_HOST && (host_kinds(c) & (1u << p->kind)))
            set_host(p, xprintf("the target has no %s kernel%s", enpu_qkind_name(p->kind),
                                c->o->bits == 16 ? " for 16-bit data" : ""));
        if (!p->absorbed && p->kind == ENPU_Q_HOST && !p->note) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    return 0;
}

/* --- 4. parameters ---------------------------------------------------------------- */

/* A pre-quantized model's own parameters for tensor t (QDQ, QLinear*; the
 * importer keeps them on the float tensor): per tensor, int8 already. */
static bool given_params(const qctx *c, int t, float *s, int32_t *z) {
    const enpu_quant *q = c->fg->tensors[t].quant;
    if (!q || q->count != 1 || !(q->scale[0] > 0) || q->zero_point[0] < -128 || q->zero_point[0] > 127)
        return false;
    *s = q->scale[0];
    *z = q->zero_point[0];
    return true;
}

static int params_from_range(qctx *c, int t) {
    if (given_params(c, t, &c->s[t], &c->z[t])) {
        c->has[t] = true;
        c->n_given++;
        return 0;
    }
    if (!c->rng[t].seen)
        return enpu_fail(c->err, ENPU_E_INVALID,
                         "tensor '%s' has no finite value on any calibration sample",
                         fname(c, t));
    int rc;
    if (c->o->bits == 16) {
        c->z[t] = 0;
        rc = enpu_choose_scale16(c->rng[t].lo, c->rng[t].hi, c->o->pow2, &c->s[t], c->err);
    } else {
        rc = enpu_choose_qparams(c->rng[t].lo, c->rng[t].hi, -128, 127, &c->s[t], &c->z[t], c->err);
    }
    if (rc) return enpu_err_prefix(c->err, "tensor '%s'", fname(c, t));
    c->has[t] = true;
    return 0;
}

static void copy_params(qctx *c, int dst, int src) {
    c->s[dst] = c->s[src];
    c->z[dst] = c->z[src];
    c->has[dst] = true;
}

/* Makes the chain of single-use tensors ending in Concat input t take
 * (s, z), walking back through MaxPool and single-input moves to a node
 * that requantizes.  False if there is none. */
static bool force_params(qctx *c, int t, float s, int32_t z) {
    const enpu_graph *g = c->fg;
    int chain[256], n = 0, cur = t;
    for (;;) {
        if (n >= 256 || !single_use(g, cur) || !c->has[cur]) return false;
        int pn = c->eff[cur];
        if (pn < 0) return false;
        const plan *p = &c->pl[pn];
        const enpu_node *node = &g->nodes[pn];
        chain[n++] = cur;
        if (p->kind == ENPU_Q_MAXPOOL ||
            (p->kind == ENPU_Q_MOVE && node->op != ENPU_OP_CONCAT)) {
            cur = node->in[0];
            continue;
        }
        if (p->kind == ENPU_Q_CONV || p->kind == ENPU_Q_ADD || p->kind == ENPU_Q_MUL ||
            p->kind == ENPU_Q_TABLE || (p->kind == ENPU_Q_HOST && !c->is_float[cur]))
            break;
        return false;
    }
    for (int i = 0; i < n; i++) {
        c->s[chain[i]] = s;
        c->z[chain[i]] = z;
    }
    return true;
}

/* Table-aware input ranges, for a tensor whose only reader is a TABLE and
 * whose parameters come from its own range (not inherited through a move):
 *  - Sigmoid / Tanh / HardSigmoid are flat beyond a point; inputs past it
 *    all give the saturated output (Sigmoid beyond +-10 is within 5e-5 of
 *    0/1, Tanh beyond +-5.5 within 4e-5 of +-1: far below half an output
 *    LSB), so the range is clipped there, which only refines the input
 *    scale;
 *  - LeakyRelu's kink (real 0 = zp_in) is moved onto a segment boundary by
 *    widening the range slightly (at most one segment), so each segment is
 *    linear and the table exact up to slope rounding. */
static void table_input_ranges(qctx *c) {
    const enpu_graph *g = c->fg;
    for (int i = 0; i < g->n_nodes; i++) {
        const plan *p = &c->pl[i];
        const enpu_node *n = &g->nodes[i];
        if (p->absorbed || p->kind != ENPU_Q_TABLE) continue;
        int x = n->in[0];
        if (!single_use(g, x) || !c->rng[x].seen) continue;
        int pn = c->eff[x];
        if (pn >= 0 && (c->pl[pn].kind == ENPU_Q_MOVE || c->pl[pn].kind == ENPU_Q_MAXPOOL))
            continue;
        enpu_qrange *r = &c->rng[x];
        double lim_lo = -INFINITY, lim_hi = INFINITY;
        if (n->op == ENPU_OP_SIGMOID) lim_lo = -10.0, lim_hi = 10.0;
        if (n->op == ENPU_OP_TANH) lim_lo = -5.5, lim_hi = 5.5;
        if (n->op == ENPU_OP_HARD_SIGMOID && n->attr.act.alpha > 0) {
            lim_lo = -(double)n->attr.act.beta / n->attr.act.alpha;
            lim_hi = (1.0 - n->attr.act.beta) / n->attr.act.alpha;
        }
        /* a range wholly in the flat part keeps its nearest end, not an
         * empty interval */
        if (r->lo < lim_lo && lim_lo < 0) r->lo = (float)fmin(lim_lo, r->hi);
        if (r->hi > lim_hi && lim_hi > 0) r->hi = (float)fmax(lim_hi, r->lo);
        int width = 256 / c->o->act_segments;
        if (n->op == ENPU_OP_LEAKY_RELU && width >= 2 && r->lo < 0 && r->hi > 0) {
            double best = INFINITY;
            int best_k = 0;
            for (int k = 1; k * width < 255; k++) {
                double s = fmax(-(double)r->lo / (k * width), (double)r->hi / (255 - k * width));
                if (s < best) best = s, best_k = k;
            }
            if (best_k && isfinite(best)) {
                r->lo = (float)(-(double)best_k * width * best);
                r->hi = (float)((255.0 - best_k * width) * best);
            }
        }
    }
}

static int assign_params(qctx *c) {
    const enpu_graph *g = c->fg;
    int rc;
    table_input_ranges(c);
    for (int i = 0; i < g->n_nodes; i++) {
        const plan *p = &c->pl[i];
        if (p->absorbed || p->kind == ENPU_Q_HOST) continue;
        const enpu_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (is_act(g, n->in[k])) c->npu_read[n->in[k]] = true;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (c->pl[i].absorbed || c->pl[i].kind != ENPU_Q_HOST) continue;
        if (!c->npu_read[c->pl[i].out]) c->is_float[c->pl[i].out] = true;
        /* a host node's further outputs (a recurrent op's final states) */
        const enpu_node *n = &g->nodes[i];
        for (int k = 1; k < n->n_out; k++)
            if (n->out[k] >= 0 && !c->npu_read[n->out[k]]) c->is_float[n->out[k]] = true;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if ((rc = params_from_range(c, g->inputs[i]))) return rc;
    for (int i = 0; i < g->n_nodes; i++) {
        const plan *p = &c->pl[i];
        const enpu_node *n = &g->nodes[i];
        if (p->absorbed) continue;
        int out = p->out, x = n->in[0];
        switch (p->kind) {
        case ENPU_Q_MAXPOOL:
            copy_params(c, out, x);
            break;
        case ENPU_Q_MOVE:
            if (n->op != ENPU_OP_CONCAT) {
                copy_params(c, out, x);
                break;
            }
            if ((rc = params_from_range(c, out))) return rc;
            for (int k = 0; k < n->n_in; k++) {
                int t = n->in[k];
                if (c->s[t] == c->s[out] && c->z[t] == c->z[out]) continue;
                if (force_params(c, t, c->s[out], c->z[out])) {
                    c->n_forced++;
                    continue;
                }
                rescale *nr = realloc(c->rs, (size_t)(c->n_rs + 1) * sizeof *nr);
                if (!nr) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
                c->rs = nr;
                c->rs[c->n_rs++] = (rescale){i, k};
            }
            break;
        case ENPU_Q_HOST:
            if (!c->is_float[out] && (rc = params_from_range(c, out))) return rc;
            for (int k = 1; k < n->n_out; k++)
                if (n->out[k] >= 0 && !c->is_float[n->out[k]] && (rc = params_from_range(c, n->out[k])))
                    return rc;
            break;
        default:
            if ((rc = params_from_range(c, out))) return rc;
            break;
        }
    }
    return 0;
}

/* --- 5. building the int8 graph ---------------------------------------------------- */

static int set_note(qctx *c, int qnode, char *note) {
    if (qnode >= c->cap_notes) {
        int cap = c->cap_notes ? c->cap_notes * 2 : 64;
        while (cap <= qnode) cap *= 2;
        char **nn = realloc(c->notes, (size_t)cap * sizeof *nn);
        if (!nn) {
            free(note);
            return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        }
        memset(nn + c->cap_notes, 0, (size_t)(cap - c->cap_notes) * sizeof *nn);
        c->notes = nn;
        c->cap_notes = cap;
    }
    free(c->notes[qnode]);
    c->notes[qnode] = note;
    return 0;
}

static int add_qtensor_named(qctx *c, const char *base, enpu_dtype dt, int rank,
                             const int64_t *dims) {
    char *name = enpu_qp_unique_name(c->qg, base);
    if (!name) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    int t = enpu_graph_add_tensor(c->qg, name, dt, rank, dims, c->err);
    free(name);
    return t;
}

/* The int8-graph tensor of float-graph tensor t (created on first use). */
static int qtensor(qctx *c, int t) {
    if (c->qt[t] >= 0) return c->qt[t];
    const enpu_tensor *ft = &c->fg->tensors[t];
    int rc;
    if (ft->flags & ENPU_T_CONST) {
        int q = add_qtensor_named(c, ft->name, ft->dtype, ft->rank, ft->dims);
        if (q < 0) return q;
        size_t nb = enpu_tensor_nbytes(ft);
        void *data = malloc(nb ? nb : 1);
        if (!data) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        if (nb) memcpy(data, ft->data, nb);
        enpu_tensor_set_data(&c->qg->tensors[q], data);
        c->qg->tensors[q].layout = ft->layout;
        return c->qt[t] = q;
    }
    bool fl = c->is_float[t];
    if (!fl && !c->has[t])
        return enpu_fail(c->err, ENPU_E_INVALID, "internal: tensor '%s' has no parameters",
                         ft->name);
    enpu_dtype qdt = c->o->bits == 16 ? ENPU_DT_INT16 : ENPU_DT_INT8;
    int q = enpu_graph_add_tensor(c->qg, ft->name, fl ? ENPU_DT_FLOAT32 : qdt, ft->rank, ft->dims,
                                  c->err);
    if (q < 0) return q;
    c->qg->tensors[q].layout = ft->layout;
    if (!fl && (rc = enpu_tensor_set_quant(&c->qg->tensors[q], -1, 1, &c->s[t], &c->z[t], c->err)))
        return rc;
    return c->qt[t] = q;
}

/* Adds a node to qg owning q (freed on failure); returns its index. */
static int add_qnode_n(qctx *c, const char *name, enpu_op op, int n_in, const int *in, int n_out,
                       const int *out, const enpu_attr *attr, enpu_qnode *q, char *note) {
    int k = enpu_graph_add_node(c->qg, name, op, n_in, in, n_out, out, c->err);
    if (k < 0) {
        enpu_qnode_free(q);
        free(note);
        return k;
    }
    if (attr) c->qg->nodes[k].attr = *attr;
    c->qg->nodes[k].q = q;
    c->qg->nodes[k].host = q->kind == ENPU_Q_HOST;
    int rc = set_note(c, k, note);
    return rc ? rc : k;
}

static int add_qnode(qctx *c, const char *name, enpu_op op, int n_in, const int *in, int out,
                     const enpu_attr *attr, enpu_qnode *q, char *note) {
    return add_qnode_n(c, name, op, n_in, in, 1, &out, attr, q, note);
}

static void clamp_of(double lo, double hi, float s, int32_t z, int32_t *qlo, int32_t *qhi) {
    *qlo = -128;
    *qhi = 127;
    if (lo > -INFINITY) *qlo = lo >= INFINITY ? 127 : enpu_quantize((float)lo, s, z, -128, 127);
    if (hi < INFINITY) *qhi = hi <= -INFINITY ? -128 : enpu_quantize((float)hi, s, z, -128, 127);
    if (*qlo > *qhi) *qlo = *qhi;
}

typedef struct convspec {
    const float *wf; /* co * k float weights, NULL: every weight is 1 */
    const float *sw; /* the model's own per-channel weight scales (co), or NULL */
    const float *bf; /* co float biases, NULL: 0 */
    int64_t co, k;
    double div;      /* average pooling's N (1 otherwise) */
    float s_in, s_out;
    int32_t z_in, z_out;
    double clip_lo, clip_hi;
} convspec;

/* The CONV node of cs with its arrays allocated (weights of es bytes: w, or
 * w16 when es is 2; bias, M, S per output channel) and the per-channel
 * weight scales sw; the outputs (*out, *sw_out, *note) cleared.  Nothing is
 * left allocated on failure. */
static int conv_q_alloc(qctx *c, const convspec *cs, int es, enpu_qnode **out, float **sw_out, char **note,
                        enpu_qnode **qp, float **swp) {
    *out = NULL;
    *sw_out = NULL;
    *note = NULL;
    enpu_qnode *q = qnode_new(ENPU_Q_CONV);
    float *sw = malloc((size_t)cs->co * sizeof(float));
    if (q && sw && cs->co <= INT32_MAX) {
        q->n_ch = (int)cs->co;
        q->n_w = cs->co * cs->k;
        void *w = malloc((size_t)(q->n_w ? q->n_w : 1) * (size_t)es);
        if (es == 2) q->w16 = w;
        else q->w = w;
        q->bias = malloc((size_t)cs->co * sizeof(int32_t));
        q->M = malloc((size_t)cs->co * sizeof(uint32_t));
        q->S = malloc((size_t)cs->co);
        if (w && q->bias && q->M && q->S) {
            *qp = q, *swp = sw;
            return 0;
        }
    }
    enpu_qnode_free(q);
    free(sw);
    return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
}

/* Integer parameters of one CONV-kind node.  *sw gets the per-channel weight
 * scales (malloc'd), *note a remark or NULL. */
static int build_conv_q16(qctx *c, const char *layer, const convspec *cs, enpu_qnode **out,
                          float **sw_out, char **note);

static int build_conv_q(qctx *c, const char *layer, const convspec *cs, enpu_qnode **out,
                        float **sw_out, char **note) {
    if (c->o->bits == 16) return build_conv_q16(c, layer, cs, out, sw_out, note);
    enpu_qnode *q;
    float *sw;
    int rc0 = conv_q_alloc(c, cs, 1, out, sw_out, note, &q, &sw);
    if (rc0) return rc0;
    q->zp_in[0] = cs->z_in;
    q->zp_out = cs->z_out;
    clamp_of(cs->clip_lo, cs->clip_hi, cs->s_out, cs->z_out, &q->lo, &q->hi);
    const int acc_bits = c->o->acc_bits;
    int max_raised = 0, n_raised = 0, rc = 0;
    double worst_rel = 0;
    char what[ENPU_MAX_NAME + 64];
    for (int64_t ch = 0; ch < cs->co && !rc; ch++) {
        const float *row = cs->wf ? cs->wf + ch * cs->k : NULL;
        int8_t *w = q->w + ch * cs->k;
        float s_w = row ? enpu_symmetric_scale(enpu_max_abs(row, cs->k, 1), 127) : 1.0f;
        if (row && cs->sw) s_w = cs->sw[ch]; /* the weights are int8 at these already */
        snprintf(what, sizeof what, "layer '%s' channel %lld", layer, (long long)ch);
        int raised = 0;
        int64_t corr = 0;
        for (;; raised++) {
            int64_t sumw = 0;
            for (int64_t j = 0; j < cs->k; j++) {
                w[j] = row ? (int8_t)enpu_quantize(row[j], s_w, 0, -127, 127) : 1;
                sumw += w[j];
            }
            int64_t lo, hi;
            if (raised == 0) {
                /* The products alone must fit: raising the scale is only a
                 * remedy for a large bias. */
                enpu_acc_range(w, cs->k, 1, -128, 127, 0, &lo, &hi);
                if ((rc = enpu_acc_check(what, lo, hi, acc_bits, c->err))) break;
            }
            bool ok = true;
            int32_t bq = 0;
            if (cs->bf) {
                enpu_err e = {0};
                int brc = enpu_quantize_bias(cs->bf[ch], (double)cs->s_in * s_w, what, &bq, &e);
                if (brc == ENPU_E_LIMIT) ok = false;
                else if (brc) {
                    rc = enpu_fail(c->err, (enpu_status)brc, "%s", e.msg);
                    break;
                }
            }
            corr = (int64_t)bq - (int64_t)cs->z_in * sumw;
            if (ok && corr >= INT32_MIN && corr <= INT32_MAX) {
                enpu_acc_range(w, cs->k, 1, -128, 127, corr, &lo, &hi);
                if (enpu_acc_fits(lo, acc_bits) && enpu_acc_fits(hi, acc_bits)) break;
            }
            if (!row || raised >= 40) {
                enpu_acc_range(w, cs->k, 1, -128, 127, corr, &lo, &hi);
                rc = enpu_acc_check(what, lo, hi, acc_bits, c->err);
                if (!rc) rc = enpu_fail(c->err, ENPU_E_NOFIT, "%s: bias does not fit", what);
                break;
            }
            s_w *= 2.0f; /* the bias is too large for the accumulator at this scale */
        }
        if (rc) break;
        if (raised) {
            n_raised++;
            if (raised > max_raised) max_raised = raised;
        }
        sw[ch] = s_w;
        q->bias[ch] = (int32_t)corr;
        double real = (double)cs->s_in * s_w / (cs->div * cs->s_out);
        uint32_t M;
        int S;
        double rel = 0;
        if ((rc = enpu_quantize_multiplier(real, c->o->mult_bits, &M, &S, &rel, c->err))) {
            enpu_err_prefix(c->err, "%s", what);
            break;
        }
        if (rel > worst_rel) worst_rel = rel;
        q->M[ch] = M;
        q->S[ch] = (int8_t)S;
        enpu_rq rq = {M, S, cs->z_out, q->lo, q->hi};
        if ((rc = enpu_rq_check(what, &rq, c->o->mult_bits, c->err))) break;
    }
    if (rc) {
        enpu_qnode_free(q);
        free(sw);
        return rc;
    }
    if (n_raised)
        *note = xprintf("weight scale of %d channel(s) raised up to x%d so the bias fits the "
                        "%d-bit accumulator",
                        n_raised, 1 << (max_raised > 30 ? 30 : max_raised), acc_bits);
    else if (worst_rel > 0.01) /* a tiny multiplier capped at S = 63 (numerics.md §3) */
        *note = xprintf("requantization multiplier off by up to %.1f%% (scale below "
                        "2^(mult_bits-64))",
                        100 * worst_rel);
    *out = q;
    *sw_out = sw;
    return 0;
}

/* 16-bit data (docs/numerics.md §12) ------------------------------------------------- */

static void clamp_of16(double lo, double hi, float s, int32_t *qlo, int32_t *qhi) {
    *qlo = -ENPU_I16_QMAX - 1;
    *qhi = ENPU_I16_QMAX;
    if (lo > -INFINITY)
        *qlo = lo >= INFINITY ? ENPU_I16_QMAX : enpu_quantize((float)lo, s, 0, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX);
    if (hi < INFINITY)
        *qhi = hi <= -INFINITY ? -ENPU_I16_QMAX - 1
                               : enpu_quantize((float)hi, s, 0, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX);
    if (*qlo > *qhi) *qlo = *qhi;
}

/* build_conv_q for a 16-bit graph: int16 weights symmetric per channel (a
 * power-of-two scale with pow2), zero points 0, so the int32 bias is the
 * float bias alone (its weight scale raised while it does not fit), and the
 * accumulator proven to fit wide_acc_bits. */
static int build_conv_q16(qctx *c, const char *layer, const convspec *cs, enpu_qnode **out,
                          float **sw_out, char **note) {
    enpu_qnode *q;
    float *sw;
    int rc0 = conv_q_alloc(c, cs, 2, out, sw_out, note, &q, &sw);
    if (rc0) return rc0;
    clamp_of16(cs->clip_lo, cs->clip_hi, cs->s_out, &q->lo, &q->hi);
    int max_raised = 0, n_raised = 0, rc = 0;
    char what[ENPU_MAX_NAME + 64];
    for (int64_t ch = 0; ch < cs->co && !rc; ch++) {
        const float *row = cs->wf ? cs->wf + ch * cs->k : NULL;
        int16_t *w = q->w16 + ch * cs->k;
        float s_w = row ? enpu_weight_scale16(enpu_max_abs(row, cs->k, 1), c->o->pow2) : 1.0f;
        snprintf(what, sizeof what, "layer '%s' channel %lld", layer, (long long)ch);
        int32_t bq = 0;
        int raised = 0;
        for (;; raised++) {
            for (int64_t j = 0; j < cs->k; j++)
                w[j] = row ? (int16_t)enpu_quantize(row[j], s_w, 0, -ENPU_I16_QMAX, ENPU_I16_QMAX) : 1;
            if (!cs->bf) break;
            enpu_err e = {0};
            int brc = enpu_quantize_bias(cs->bf[ch], (double)cs->s_in * s_w, what, &bq, &e);
            if (!brc) break;
            if (brc != ENPU_E_LIMIT || !row || raised >= 40) {
                rc = enpu_fail(c->err, (enpu_status)brc, "%s", e.msg);
                break;
            }
            s_w *= 2.0f; /* the bias does not fit int32 at this scale */
        }
        if (rc) break;
        if (raised) {
            n_raised++;
            if (raised > max_raised) max_raised = raised;
        }
        int64_t lo, hi;
        enpu_acc_range16(w, cs->k, 1, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX, bq, &lo, &hi);
        if ((rc = enpu_acc_check_wide(what, lo, hi, c->o->wide_acc_bits, c->err))) break;
        sw[ch] = s_w;
        q->bias[ch] = bq;
        double real = (double)cs->s_in * s_w / (cs->div * cs->s_out);
        uint32_t M;
        int S;
        if ((rc = enpu_quantize_multiplier(real, c->o->mult_bits, &M, &S, NULL, c->err))) {
            enpu_err_prefix(c->err, "%s", what);
            break;
        }
        q->M[ch] = M;
        q->S[ch] = (int8_t)S;
        enpu_rq rq = {M, S, 0, q->lo, q->hi};
        if ((rc = enpu_rq_check(what, &rq, c->o->mult_bits, c->err))) break;
    }
    if (rc) {
        enpu_qnode_free(q);
        free(sw);
        return rc;
    }
    if (n_raised)
        *note = xprintf("weight scale of %d channel(s) raised up to x%d so the bias fits int32",
                        n_raised, 1 << (max_raised > 30 ? 30 : max_raised));
    *out = q;
    *sw_out = sw;
    return 0;
}

/* Conv/Gemm: int8 weight and int32 bias constant inputs equal to q->w/q->bias. */
static int add_weight_tensors(qctx *c, const enpu_node *n, const enpu_qnode *q, const float *sw,
                              float s_in, int *wq, int *bq) {
    const enpu_tensor *wt = &c->fg->tensors[n->in[1]];
    int rc;
    bool w16 = q->w16 != NULL; /* a 16-bit graph */
    *wq = add_qtensor_named(c, wt->name, w16 ? ENPU_DT_INT16 : ENPU_DT_INT8, wt->rank, wt->dims);
    if (*wq < 0) return *wq;
    size_t wbytes = (size_t)q->n_w * (w16 ? sizeof(int16_t) : 1);
    void *wd = malloc(wbytes ? wbytes : 1);
    if (!wd) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    if (wbytes) memcpy(wd, w16 ? (const void *)q->w16 : (const void *)q->w, wbytes);
    enpu_tensor_set_data(&c->qg->tensors[*wq], wd);
    int32_t *zeros = calloc((size_t)q->n_ch, sizeof(int32_t));
    float *bs = malloc((size_t)q->n_ch * sizeof(float));
    if (!zeros || !bs) {
        free(zeros);
        free(bs);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    for (int ch = 0; ch < q->n_ch; ch++) bs[ch] = (float)((double)s_in * sw[ch]);
    rc = enpu_tensor_set_quant(&c->qg->tensors[*wq], 0, q->n_ch, sw, zeros, c->err);
    char base[ENPU_MAX_NAME + 16];
    if (n->n_in > 2 && n->in[2] >= 0)
        snprintf(base, sizeof base, "%s", c->fg->tensors[n->in[2]].name);
    else
        snprintf(base, sizeof base, "%s_bias", n->name);
    int64_t nb = q->n_ch;
    if (!rc) {
        *bq = add_qtensor_named(c, base, ENPU_DT_INT32, 1, &nb);
        if (*bq < 0) rc = *bq;
    }
    if (!rc) {
        int32_t *bd = malloc((size_t)q->n_ch * sizeof(int32_t));
        if (!bd) rc = enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        else {
            memcpy(bd, q->bias, (size_t)q->n_ch * sizeof(int32_t));
            enpu_tensor_set_data(&c->qg->tensors[*bq], bd);
            rc = enpu_tensor_set_quant(&c->qg->tensors[*bq], 0, q->n_ch, bs, zeros, c->err);
        }
    }
    free(zeros);
    free(bs);
    return rc;
}

static int build_conv_node(qctx *c, int i) {
    const enpu_graph *g = c->fg;
    const enpu_node *n = &g->nodes[i];
    const plan *p = &c->pl[i];
    int x = n->in[0], y = p->out, rc;
    const enpu_tensor *xt = &g->tensors[x];
    convspec cs = {.div = 1.0, .s_in = c->s[x], .s_out = c->s[y], .z_in = c->z[x],
                   .z_out = c->z[y], .clip_lo = p->clip_lo, .clip_hi = p->clip_hi};
    float *bn_w = NULL, *bn_b = NULL;
    switch (p->origin) {
    case ENPU_QO_CONV:
    case ENPU_QO_FC: {
        const enpu_tensor *wt = &g->tensors[n->in[1]];
        cs.co = wt->dims[0];
        cs.k = enpu_tensor_numel(wt) / cs.co;
        cs.wf = wt->data;
        cs.bf = (n->n_in > 2 && n->in[2] >= 0) ? g->tensors[n->in[2]].data : NULL;
        /* a pre-quantized model's weights: symmetric per output channel */
        const enpu_quant *wq = wt->quant;
        bool sym = wq && wq->count == cs.co && (wq->axis == 0 || cs.co == 1);
        for (int64_t ch = 0; sym && ch < cs.co; ch++) sym = wq->zero_point[ch] == 0 && wq->scale[ch] > 0;
        if (sym) {
            cs.sw = wq->scale;
            c->n_given_w++;
        }
        break;
    }
    case ENPU_QO_AVGPOOL:
        cs.co = xt->dims[1];
        if (n->op == ENPU_OP_AVGPOOL) {
            cs.k = (int64_t)(xt->rank == 4 ? n->attr.pool.w.kernel[0] : 1) * n->attr.pool.w.kernel[1];
        } else {
            cs.k = 1;
            for (int d = 2; d < xt->rank; d++) cs.k *= xt->dims[d];
        }
        /* a ReduceSum is the pool without the 1/N */
        cs.div = n->op == ENPU_OP_REDUCE_SUM ? 1.0 : (double)cs.k;
        break;
    case ENPU_QO_BN: {
        cs.co = xt->dims[1];
        cs.k = 1;
        bn_w = malloc((size_t)cs.co * sizeof(float));
        bn_b = malloc((size_t)cs.co * sizeof(float));
        if (!bn_w || !bn_b) {
            free(bn_w);
            free(bn_b);
            return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        }
        const float *sc = g->tensors[n->in[1]].data, *be = g->tensors[n->in[2]].data;
        const float *mu = g->tensors[n->in[3]].data, *var = g->tensors[n->in[4]].data;
        for (int64_t ch = 0; ch < cs.co; ch++) {
            double m = sc[ch] / sqrt((double)var[ch] + n->attr.bn.epsilon);
            bn_w[ch] = (float)m;
            bn_b[ch] = (float)(be[ch] - mu[ch] * m);
        }
        cs.wf = bn_w;
        cs.bf = bn_b;
        break;
    }
    default: /* RELU */
        cs.co = xt->rank >= 2 ? xt->dims[1] : 1;
        cs.k = 1;
        break;
    }
    enpu_qnode *q;
    float *sw;
    char *note;
    rc = build_conv_q(c, n->name, &cs, &q, &sw, &note);
    free(bn_w);
    free(bn_b);
    if (rc) return rc;
    q->origin = p->origin;
    q->fused = xstrdup(p->names);
    int ins[5] = {-1, -1, -1, -1, -1}, n_in = 1;
    if ((ins[0] = qtensor(c, x)) < 0) rc = ins[0];
    if (!rc && (p->origin == ENPU_QO_CONV || p->origin == ENPU_QO_FC)) {
        rc = add_weight_tensors(c, n, q, sw, cs.s_in, &ins[1], &ins[2]);
        n_in = 3;
    } else if (!rc && p->origin == ENPU_QO_BN) {
        for (int k = 1; k < 5 && !rc; k++)
            if ((ins[k] = qtensor(c, n->in[k])) < 0) rc = ins[k];
        n_in = 5;
    }
    free(sw);
    int out = rc ? -1 : qtensor(c, y);
    if (!rc && out < 0) rc = out;
    if (rc) {
        enpu_qnode_free(q);
        free(note);
        return rc;
    }
    rc = add_qnode(c, n->name, n->op, n_in, ins, out, &n->attr, q, note);
    return rc < 0 ? rc : 0;
}

/* An operand of an Add/Mul: the activation's tensor, or the constant
 * quantized per tensor (asymmetric, from its own min/max). */
static int binary_operand(qctx *c, int t, float *s, int32_t *z) {
    const enpu_graph *g = c->fg;
    if (is_act(g, t)) {
        *s = c->s[t];
        *z = c->z[t];
        return qtensor(c, t);
    }
    const enpu_tensor *ft = &g->tensors[t];
    int64_t n = enpu_tensor_numel(ft);
    const float *v = ft->data;
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "constant '%s' holds a non-finite value",
                             ft->name);
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    int rc = enpu_choose_qparams(lo, hi, -128, 127, s, z, c->err);
    if (rc) return rc;
    char base[ENPU_MAX_NAME + 8];
    snprintf(base, sizeof base, "%s_q", ft->name);
    int q = add_qtensor_named(c, base, ENPU_DT_INT8, ft->rank, ft->dims);
    if (q < 0) return q;
    int8_t *d = malloc((size_t)(n ? n : 1));
    if (!d) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) d[i] = (int8_t)enpu_quantize(v[i], *s, *z, -128, 127);
    enpu_tensor_set_data(&c->qg->tensors[q], d);
    rc = enpu_tensor_set_quant(&c->qg->tensors[q], -1, 1, s, z, c->err);
    return rc ? rc : q;
}

static int build_binary_node(qctx *c, int i) {
    const enpu_node *n = &c->fg->nodes[i];
    const plan *p = &c->pl[i];
    float s[2];
    int32_t z[2];
    int ins[2], rc;
    for (int k = 0; k < 2; k++)
        if ((ins[k] = binary_operand(c, n->in[k], &s[k], &z[k])) < 0) return ins[k];
    int y = p->out;
    float so = c->s[y];
    int32_t zo = c->z[y];
    enpu_qnode *q = qnode_new(p->kind);
    if (!q) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    q->n_ch = 1;
    q->M = malloc(sizeof(uint32_t));
    q->S = malloc(1);
    q->fused = xstrdup(p->names);
    if (!q->M || !q->S || !q->fused) {
        enpu_qnode_free(q);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    q->zp_in[0] = z[0];
    q->zp_in[1] = z[1];
    q->zp_out = zo;
    clamp_of(p->clip_lo, p->clip_hi, so, zo, &q->lo, &q->hi);
    char what[ENPU_MAX_NAME + 16];
    snprintf(what, sizeof what, "layer '%s'", n->name);
    const int acc_bits = c->o->acc_bits;
    if (p->kind == ENPU_Q_ADD) {
        /* The largest shift whose multipliers fit mult_bits and whose
         * accumulator fits acc_bits: the most precise A[i]/2^S = s_i/s_out. */
        double r0 = (double)s[0] / so, r1 = (double)s[1] / so;
        double lim = ldexp(1.0, c->o->mult_bits);
        int found = -1;
        for (int S = ENPU_SHIFT_MAX; S >= 0 && found < 0; S--) {
            double a0 = floor(ldexp(r0, S) + 0.5), a1 = floor(ldexp(r1, S) + 0.5);
            if (a0 >= lim || a1 >= lim) continue;
            int64_t A0 = (int64_t)a0, A1 = (int64_t)a1;
            int64_t lo = A0 * (-128 - z[0]) + A1 * (-128 - z[1]);
            int64_t hi = A0 * (127 - z[0]) + A1 * (127 - z[1]);
            if (!enpu_acc_fits(lo, acc_bits) || !enpu_acc_fits(hi, acc_bits)) continue;
            if (A0 == 0 && A1 == 0) break;
            q->A[0] = (uint32_t)A0;
            q->A[1] = (uint32_t)A1;
            found = S;
        }
        if (found < 0) {
            enpu_qnode_free(q);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "%s: no add multipliers fit %d bits with a %d-bit accumulator "
                             "(scales %g, %g -> %g)",
                             what, c->o->mult_bits, acc_bits, (double)s[0], (double)s[1],
                             (double)so);
        }
        q->M[0] = 1;
        q->S[0] = (int8_t)found;
    } else {
        uint32_t M;
        int S;
        rc = enpu_quantize_multiplier((double)s[0] * s[1] / so, c->o->mult_bits, &M, &S, NULL,
                                      c->err);
        if (rc) {
            enpu_qnode_free(q);
            return enpu_err_prefix(c->err, "%s", what);
        }
        q->M[0] = M;
        q->S[0] = (int8_t)S;
    }
    int out = qtensor(c, y);
    if (out < 0) {
        enpu_qnode_free(q);
        return out;
    }
    rc = add_qnode(c, n->name, n->op, 2, ins, out, &n->attr, q, NULL);
    if (rc < 0) return rc;
    int64_t lo, hi;
    enpu_q_acc_range(c->qg, &c->qg->nodes[rc], &lo, &hi);
    return enpu_acc_check(what, lo, hi, acc_bits, c->err);
}

static int build_table_node(qctx *c, int i) {
    const enpu_node *n = &c->fg->nodes[i];
    const plan *p = &c->pl[i];
    int x = n->in[0], y = p->out, rc;
    enpu_pwl_params par;
    const void *ctx;
    /* Pow: the table is x^e of its constant exponent, kept in the
     * attributes (the node keeps the constant as input 1) */
    enpu_node tn = *n;
    const bool pow_op = n->op == ENPU_OP_POW;
    if (pow_op) {
        memset(&tn.attr, 0, sizeof tn.attr);
        tn.attr.act.alpha = ((const float *)c->fg->tensors[n->in[1]].data)[0];
    }
    enpu_pwl_fn fn = enpu_q_table_fn(&tn, &par, &ctx);
    enpu_qnode *q = qnode_new(ENPU_Q_TABLE);
    if (!q || !(q->table = calloc(1, sizeof *q->table)) || !(q->fused = xstrdup(p->names))) {
        enpu_qnode_free(q);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    q->zp_in[0] = c->z[x];
    q->zp_out = c->z[y];
    char what[ENPU_MAX_NAME + 16];
    snprintf(what, sizeof what, "layer '%s'", n->name);
    /* EasyNPU's table unit has the windowed segment index (docs/numerics.md
     * §8.4): with 16 segments it keeps tanh/sigmoid/SiLU within 1 LSB where
     * uniform segments lose up to 5. */
    enpu_pwl_opts po = {.segments = c->o->act_segments, .mult_bits = c->o->mult_bits,
                        .window = 1, .acc_bits = c->o->acc_bits};
    rc = enpu_pwl_fit_opts(fn, ctx, c->s[x], c->z[x], c->s[y], c->z[y], &po, q->table, c->err);
    if (!rc) rc = enpu_pwl_check_acc(what, q->table, c->o->acc_bits, c->err);
    if (rc) {
        enpu_qnode_free(q);
        return rc == ENPU_E_NOFIT ? rc : enpu_err_prefix(c->err, "%s", what);
    }
    int ins[2] = {qtensor(c, x), -1};
    if (pow_op && ins[0] >= 0) ins[1] = qtensor(c, n->in[1]);
    int out = ins[0] < 0 ? ins[0] : ins[1] < -1 ? ins[1] : qtensor(c, y);
    if (ins[0] < 0 || out < 0) {
        enpu_qnode_free(q);
        return ins[0] < 0 ? ins[0] : out;
    }
    rc = add_qnode(c, n->name, n->op, pow_op ? 2 : 1, ins, out, &tn.attr, q, NULL);
    return rc < 0 ? rc : 0;
}

/* A RESCALE node bringing Concat input t to the Concat's parameters. */
static int build_rescale(qctx *c, int concat, int k, int t, int *out_t) {
    const enpu_node *n = &c->fg->nodes[concat];
    int y = c->pl[concat].out;
    convspec cs = {.div = 1.0, .s_in = c->s[t], .s_out = c->s[y], .z_in = c->z[t],
                   .z_out = c->z[y], .clip_lo = -INFINITY, .clip_hi = INFINITY, .k = 1};
    const enpu_tensor *ft = &c->fg->tensors[t];
    cs.co = ft->rank >= 2 ? ft->dims[1] : 1;
    enpu_qnode *q;
    float *sw;
    char *note;
    int rc = build_conv_q(c, n->name, &cs, &q, &sw, &note);
    if (rc) return rc;
    free(sw);
    free(note);
    q->origin = ENPU_QO_RESCALE;
    char *nname = xprintf("%s/rescale_%d", n->name, k);
    char *tname = xprintf("%s_rescaled", ft->name);
    int in = qtensor(c, t), o = -1;
    if (nname && tname && in >= 0) {
        o = add_qtensor_named(c, tname, ENPU_DT_INT8, ft->rank, ft->dims);
        if (o >= 0) rc = enpu_tensor_set_quant(&c->qg->tensors[o], -1, 1, &c->s[y], &c->z[y], c->err);
        else rc = o;
    } else {
        rc = in < 0 ? in : enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    if (!rc) q->fused = xstrdup(nname);
    if (rc) {
        enpu_qnode_free(q);
        free(nname);
        free(tname);
        return rc;
    }
    rc = add_qnode(c, nname, ENPU_OP_IDENTITY, 1, &in, o, NULL, q,
                   xprintf("inserted: Concat input '%s' has other parameters than the output",
                           ft->name));
    free(nname);
    free(tname);
    *out_t = o;
    return rc < 0 ? rc : 0;
}

static int build_plain_node(qctx *c, int i) {
    const enpu_node *n = &c->fg->nodes[i];
    const plan *p = &c->pl[i];
    int ins[64], rc = 0;
    if (n->n_in > 64)
        return enpu_fail(c->err, ENPU_E_LIMIT, "node '%s': more than 64 inputs", n->name);
    for (int k = 0; k < n->n_in && !rc; k++) {
        ins[k] = -1;
        if (n->in[k] < 0) continue;
        bool resc = false;
        for (int r = 0; r < c->n_rs; r++)
            if (c->rs[r].node == i && c->rs[r].input == k) resc = true;
        if (resc) rc = build_rescale(c, i, k, n->in[k], &ins[k]);
        else if ((ins[k] = qtensor(c, n->in[k])) < 0) rc = ins[k];
    }
    if (rc) return rc;
    int out = qtensor(c, p->out);
    if (out < 0) return out;
    enpu_qnode *q = qnode_new(p->kind);
    if (!q || !(q->fused = xstrdup(p->names))) {
        enpu_qnode_free(q);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    if (c->o->bits == 16) q->lo = -ENPU_I16_QMAX - 1, q->hi = ENPU_I16_QMAX;
    for (int k = 0, a = 0; k < n->n_in && a < 2; k++)
        if (ins[k] >= 0 && c->qg->tensors[ins[k]].dtype == ENPU_DT_INT8 &&
            c->qg->tensors[ins[k]].quant)
            q->zp_in[a++] = c->qg->tensors[ins[k]].quant->zero_point[0];
    if (c->qg->tensors[out].quant) q->zp_out = c->qg->tensors[out].quant->zero_point[0];
    /* a Relu/Clip folded into a MaxPool (classify) is its clamp */
    if (p->kind == ENPU_Q_MAXPOOL && c->qg->tensors[out].quant)
        clamp_of(p->clip_lo, p->clip_hi, c->qg->tensors[out].quant->scale[0], q->zp_out, &q->lo,
                 &q->hi);
    char *note = p->note ? xstrdup(p->note) : NULL;
    /* a host node writes every output of its float node */
    int outs[8] = {out}, n_out = 1;
    if (p->kind == ENPU_Q_HOST && n->n_out > 1 && n->n_out <= 8) {
        n_out = n->n_out;
        for (int k = 1; k < n_out; k++)
            if ((outs[k] = n->out[k] >= 0 ? qtensor(c, n->out[k]) : -1) < -1) {
                enpu_qnode_free(q);
                free(note);
                return outs[k];
            }
    }
    rc = add_qnode_n(c, n->name, n->op, n->n_in, ins, n_out, outs, &n->attr, q, note);
    return rc < 0 ? rc : 0;
}

static int build_graph(qctx *c) {
    const enpu_graph *g = c->fg;
    int rc = 0;
    for (int i = 0; i < g->n_inputs && !rc; i++) {
        int q = qtensor(c, g->inputs[i]);
        rc = q < 0 ? q : enpu_graph_add_input(c->qg, q, c->err);
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const plan *p = &c->pl[i];
        if (p->absorbed) continue;
        switch (p->kind) {
        case ENPU_Q_CONV: rc = build_conv_node(c, i); break;
        case ENPU_Q_ADD:
        case ENPU_Q_MUL: rc = build_binary_node(c, i); break;
        case ENPU_Q_TABLE: rc = build_table_node(c, i); break;
        default: rc = build_plain_node(c, i); break;
        }
    }
    for (int i = 0; i < g->n_outputs && !rc; i++) {
        int t = g->outputs[i];
        if (c->qt[t] < 0 || (c->qg->tensors[c->qt[t]].producer < 0 &&
                             !(c->qg->tensors[c->qt[t]].flags & ENPU_T_INPUT)))
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "graph output '%s' is a constant; nothing to quantize", fname(c, t));
        rc = enpu_graph_add_output(c->qg, c->qt[t], c->err);
    }
    return rc;
}

/* --- driver ------------------------------------------------------------------------ */

static int check_opts(const enpu_quant_opts *o, enpu_err *err) {
    if (o->mult_bits < 2 || o->mult_bits > ENPU_MULT_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "multiplier width %d bits is outside 2..%d",
                         o->mult_bits, ENPU_MULT_BITS_MAX);
    if (o->acc_bits < ENPU_ACC_BITS_MIN || o->acc_bits > ENPU_ACC_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "accumulator width %d bits is outside %d..%d",
                         o->acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX);
    int s = o->act_segments;
    if (s < 1 || s > ENPU_PWL_SEGMENTS_MAX || (s & (s - 1)))
        return enpu_fail(err, ENPU_E_USAGE, "%d table segments: a power of two in 1..%d needed",
                         s, ENPU_PWL_SEGMENTS_MAX);
    if (o->method == ENPU_CALIB_PERCENTILE && !(o->percentile > 50.0 && o->percentile <= 100.0))
        return enpu_fail(err, ENPU_E_USAGE, "percentile %g is outside (50, 100]", o->percentile);
    if (o->method != ENPU_CALIB_MINMAX && o->method != ENPU_CALIB_PERCENTILE)
        return enpu_fail(err, ENPU_E_USAGE, "unknown calibration method %d", (int)o->method);
    if (o->bits != 8 && o->bits != 16)
        return enpu_fail(err, ENPU_E_USAGE, "%d-bit quantization: 8 or 16 bits", o->bits);
    if (o->pow2 && o->bits != 16)
        return enpu_fail(err, ENPU_E_USAGE, "power-of-two (Q-format) scales are for 16-bit data");
    if (o->bits == 16 && (o->wide_acc_bits < ENPU_ACC_BITS_MIN || o->wide_acc_bits > ENPU_ACC_BITS_WIDE_MAX))
        return enpu_fail(err, ENPU_E_USAGE, "accumulator width %d bits is outside %d..%d",
                         o->wide_acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_WIDE_MAX);
    return 0;
}

static void ctx_free(qctx *c) {
    if (c->pl)
        for (int i = 0; i < c->fg->n_nodes; i++) {
            free(c->pl[i].names);
            free(c->pl[i].note);
        }
    free(c->pl);
    free(c->rng);
    free(c->eff);
    free(c->npu_read);
    free(c->is_float);
    free(c->has);
    free(c->s);
    free(c->z);
    free(c->rs);
    free(c->qt);
    if (c->notes)
        for (int i = 0; i < c->cap_notes; i++) free(c->notes[i]);
    free(c->notes);
}

/* The int8 path computes on float tensors: a computed or graph-input tensor
 * of an integer dtype (which the float reference carries, e.g. for the ONNX
 * conformance tests) is refused, naming it. */
static int check_float_values(const enpu_graph *g, enpu_err *err) {
    for (int t = 0; t < g->n_tensors; t++) {
        const enpu_tensor *x = &g->tensors[t];
        if (x->dtype == ENPU_DT_FLOAT32 || x->dtype == ENPU_DT_UNDEFINED) continue;
        int p = x->producer;
        bool input = (x->flags & ENPU_T_INPUT) != 0;
        if (!input && (p < 0 || g->nodes[p].dead)) continue; /* a constant, or unused */
        if (input)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "graph input '%s' is %s; the int8 compiler takes float32 inputs "
                             "(run-float computes it)",
                             x->name, enpu_dtype_name(x->dtype));
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "node '%s' (%s): output '%s' is %s; the int8 compiler computes on "
                         "float32 tensors only (run-float computes it)",
                         g->nodes[p].name, enpu_op_name(g->nodes[p].op), x->name,
                         enpu_dtype_name(x->dtype));
    }
    return 0;
}

int enpu_quantize_graph(const enpu_graph *g, const enpu_buf *calib, int n_samples,
                        const enpu_quant_opts *opts, enpu_graph **out, enpu_qreport *report,
                        enpu_err *err) {
    if (!g || !out) return enpu_fail(err, ENPU_E_USAGE, "enpu_quantize_graph: NULL argument");
    *out = NULL;
    if (report) memset(report, 0, sizeof *report);
    enpu_quant_opts def;
    if (!opts) {
        enpu_quant_opts_default(&def);
        opts = &def;
    }
    int rc = check_opts(opts, err);
    if (!rc) rc = check_float_values(g, err);
    if (rc) return rc;
    enpu_qnode_free_hook = qnode_free_hook;
    enpu_graph *fg = NULL;
    enpu_qp_info info = {0};
    enpu_buf *synth = NULL;
    int n_rewrites = 0;
    qctx c = {0};
    if ((rc = enpu_qp_clone(g, &fg, err))) return rc;
    if ((rc = enpu_qp_rewrite(fg, &info, &n_rewrites, err))) goto done;
    bool fallback = !calib || n_samples <= 0;
    if (fallback) {
        n_samples = ENPU_CALIB_FALLBACK_SAMPLES;
        if ((rc = enpu_calib_synthetic(fg, n_samples, ENPU_CALIB_FALLBACK_SEED, &synth, err)))
            goto done;
        calib = synth;
        if (!opts->quiet)
            fprintf(stderr,
                    "easynpu: warning: %s: no calibration data; using %d synthetic N(0,1) "
                    "inputs (seed 0x%X): scales will not match real data, give --calib\n",
                    g->name && g->name[0] ? g->name : "model", n_samples,
                    (unsigned)ENPU_CALIB_FALLBACK_SEED);
    }
    c.fg = fg;
    c.info = &info;
    c.o = opts;
    c.err = err;
    size_t nt = (size_t)(fg->n_tensors ? fg->n_tensors : 1);
    size_t nn = (size_t)(fg->n_nodes ? fg->n_nodes : 1);
    c.rng = calloc(nt, sizeof *c.rng);
    c.pl = calloc(nn, sizeof *c.pl);
    c.eff = malloc(nt * sizeof *c.eff);
    c.npu_read = calloc(nt, sizeof *c.npu_read);
    c.is_float = calloc(nt, sizeof *c.is_float);
    c.has = calloc(nt, sizeof *c.has);
    c.s = calloc(nt, sizeof *c.s);
    c.z = calloc(nt, sizeof *c.z);
    c.qt = malloc(nt * sizeof *c.qt);
    if (!c.rng || !c.pl || !c.eff || !c.npu_read || !c.is_float || !c.has || !c.s || !c.z || !c.qt) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    for (int t = 0; t < fg->n_tensors; t++) {
        c.eff[t] = fg->tensors[t].producer;
        c.qt[t] = -1;
    }
    if ((rc = enpu_calib_ranges(fg, calib, n_samples, opts, c.rng, err))) goto done;
    if ((rc = classify(&c)) || (rc = assign_params(&c))) goto done;
    c.qg = enpu_graph_new(g->name);
    if (!c.qg) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    c.qg->opset = g->opset;
    if ((rc = build_graph(&c))) goto done;
    if ((rc = enpu_qgraph_check(c.qg, err))) {
        enpu_err_prefix(err, "internal: the quantized graph does not check");
        goto done;
    }
    if (report) {
        enpu_qreport *r = report;
        r->method = opts->method;
        r->percentile = opts->percentile;
        r->acc_bits = opts->bits == 16 ? opts->wide_acc_bits : opts->acc_bits;
        r->bits = opts->bits;
        r->pow2 = opts->pow2;
        r->mult_bits = opts->mult_bits;
        r->act_segments = opts->act_segments;
        r->n_calib = n_samples;
        r->calib_fallback = fallback;
        if ((rc = enpu_qreport_init_layers(c.qg, r, err))) goto done;
        for (int i = 0; i < r->n_layers && i < c.cap_notes; i++) {
            r->layers[i].note = c.notes[i];
            c.notes[i] = NULL;
        }
        if (fallback)
            enpu_qreport_add_note(r, "no calibration data: %d synthetic N(0,1) inputs (seed "
                                  "0x%X); scales are not representative",
                                  n_samples, (unsigned)ENPU_CALIB_FALLBACK_SEED);
        enpu_qreport_add_note(r, "%d float rewrite(s) before quantization (constant folding, "
                              "bias/BN folding, MatMul/Gemm to FC, ...)",
                              n_rewrites);
        if (c.n_forced)
            enpu_qreport_add_note(r, "%d Concat input(s) requantized by their producer to the "
                                  "Concat's parameters",
                                  c.n_forced);
        if (c.n_given || c.n_given_w)
            enpu_qreport_add_note(r, "pre-quantized model: %d tensor(s) and the weights of %d "
                                  "layer(s) keep the model's own int8 parameters (not calibrated)",
                                  c.n_given, c.n_given_w);
        if (c.n_rs)
            enpu_qreport_add_note(r, "%d RESCALE node(s) inserted before Concat inputs", c.n_rs);
        if ((rc = enpu_qreport_eval(g, c.qg, calib, n_samples, r, err))) goto done;
    }
    *out = c.qg;
    c.qg = NULL;
done:
    if (rc && report) enpu_qreport_free(report);
    enpu_graph_free(c.qg);
    ctx_free(&c);
    if (synth) enpu_calib_free(synth, ENPU_CALIB_FALLBACK_SAMPLES * fg->n_inputs);
    enpu_qp_info_free(&info);
    enpu_graph_free(fg);
    return rc;
}
