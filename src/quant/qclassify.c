/* Step 3 of quantization (quantize.c): every float node gets a kind, an
 * NPU kind where quant.h's semantics express the op and the arch's
 * instruction can hold it, HOST otherwise, with the reason the compile
 * report prints; a Relu/Clip whose producer requantizes and has no other
 * reader is folded into the producer's clamp. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "quant/passes.h"
#include "quant/qinternal.h"
#include "quant/qctx.h"

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

int qc_classify(qctx *c) {
    const enpu_graph *g = c->fg;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        plan *p = &c->pl[i];
        p->out = n->out[0];
        p->clip_lo = -INFINITY;
        p->clip_hi = INFINITY;
        p->kind = ENPU_Q_HOST;
        p->names = qc_xstrdup(c->info->fused[i] ? c->info->fused[i] : n->name);
        if (!p->names) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        int x = n->n_in > 0 ? n->in[0] : -1;
        /* Add/Mul may have the constant first: x is then the other operand */
        if ((n->op == ENPU_OP_ADD || n->op == ENPU_OP_MUL) && n->n_in == 2 && !qc_is_act(g, x))
            x = n->in[1];
        const enpu_tensor *xt = x >= 0 ? &g->tensors[x] : NULL;
        bool xact = qc_is_act(g, x) && xt->dtype == ENPU_DT_FLOAT32;
        if (!xact) {
            qc_set_host(p, qc_xprintf("input 0 is not an activation"));
            continue;
        }
        if (n->op == ENPU_OP_LSTM || n->op == ENPU_OP_GRU || n->op == ENPU_OP_RNN) {
            /* every output (Y, the final states) is the host's */
            qc_set_host(p, qc_xprintf("%s: the host runs the recurrence (gates and state, every step)",
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
                qc_set_host(p, qc_xprintf("Conv weights or bias are not constant, or not 1-D/2-D"));
            else
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_CONV;
            break;
        }
        case ENPU_OP_GEMM:
            if (enpu_qp_gemm_canonical(g, n))
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_FC;
            else
                qc_set_host(p, qc_xprintf("Gemm with transA or a non-constant B/C (not an FC)"));
            break;
        case ENPU_OP_AVGPOOL:
            if (avgpool_uniform(g, n))
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_AVGPOOL;
            else
                qc_set_host(p, qc_xprintf("AveragePool divisor varies per position "
                                    "(count_include_pad=0 with padding, or a ceil-mode edge "
                                    "window); 1/N cannot be one multiplier"));
            break;
        case ENPU_OP_GLOBAL_AVGPOOL:
            if (xt->rank >= 3)
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_AVGPOOL;
            else
                qc_set_host(p, qc_xprintf("GlobalAveragePool of rank %d", xt->rank));
            break;
        case ENPU_OP_REDUCE_MEAN:
        case ENPU_OP_REDUCE_SUM:
            /* over the whole map: a global average pool (ReduceSum: without
             * the 1/N) */
            if (enpu_qp_reduces_map(g, n))
                p->kind = ENPU_Q_CONV, p->origin = ENPU_QO_AVGPOOL;
            else
                qc_set_host(p, qc_xprintf("%s over axes other than the whole map of a rank-3/4 tensor",
                                    enpu_op_name(n->op)));
            break;
        case ENPU_OP_FLOOR:
        case ENPU_OP_CEIL:
            /* a staircase: one table segment per step, and a calibrated
             * range spans far more than 16 steps (9-10 LSB off with 16
             * segments, docs/numerics.md §11); the host is exact */
            qc_set_host(p, qc_xprintf("%s is a staircase no table of %d segments follows",
                                enpu_op_name(n->op), c->o->act_segments));
            break;
        case ENPU_OP_POW: {
            const enpu_tensor *e = n->n_in > 1 && n->in[1] >= 0 ? &g->tensors[n->in[1]] : NULL;
            if (e && (e->flags & ENPU_T_CONST) && e->dtype == ENPU_DT_FLOAT32 && enpu_tensor_numel(e) == 1 &&
                qc_same_shape_as(g, n->in[0], n->out[0]))
                p->kind = ENPU_Q_TABLE;
            else
                qc_set_host(p, qc_xprintf("Pow with an exponent that is not one constant"));
            break;
        }
        case ENPU_OP_RESIZE:
            if (n->attr.resize.mode == ENPU_RESIZE_NEAREST)
                p->kind = ENPU_Q_MOVE;
            else
                qc_set_host(p, qc_xprintf("Resize %s interpolates", n->attr.resize.mode == ENPU_RESIZE_LINEAR
                                                                 ? "linear"
                                                                 : "cubic"));
            break;
        case ENPU_OP_GATHER: {
            const enpu_tensor *ix = &g->tensors[n->in[1]];
            if (ix->flags & ENPU_T_CONST)
                p->kind = ENPU_Q_MOVE;
            else
                qc_set_host(p, qc_xprintf("Gather of computed indices: the host gathers with each "
                                          "run's indices"));
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
                qc_set_host(p, qc_xprintf("BatchNormalization with non-constant parameters"));
            break;
        }
        case ENPU_OP_RELU:
        case ENPU_OP_CLIP: {
            if (runtime_param(g, n, 1)) {
                qc_set_host(p, qc_xprintf("Clip bounds computed by the graph: the host clips with each "
                                    "run's value"));
                break;
            }
            double lo = n->op == ENPU_OP_RELU ? 0.0 : n->attr.act.min;
            double hi = n->op == ENPU_OP_RELU ? INFINITY : n->attr.act.max;
            int pn = c->eff[x];
            if (pn >= 0 && !c->pl[pn].absorbed && c->pl[pn].out == x && qc_single_use(g, x) &&
                (c->pl[pn].kind == ENPU_Q_CONV || c->pl[pn].kind == ENPU_Q_ADD ||
                 c->pl[pn].kind == ENPU_Q_MUL || c->pl[pn].kind == ENPU_Q_MAXPOOL)) {
                plan *pp = &c->pl[pn];
                pp->out = n->out[0];
                c->eff[n->out[0]] = pn;
                if (lo > pp->clip_lo) pp->clip_lo = lo;
                if (hi < pp->clip_hi) pp->clip_hi = hi;
                int rc = qc_append_names(c, pp, p->names);
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
                qc_set_host(p, qc_xprintf("MaxPool of rank %d", xt->rank));
            break;
        case ENPU_OP_ADD:
        case ENPU_OP_MUL: {
            int b = n->n_in > 1 ? n->in[1 - (x == n->in[1])] : -1;
            if (b >= 0 && g->tensors[b].dtype == ENPU_DT_FLOAT32 && g->tensors[b].rank >= 0)
                p->kind = n->op == ENPU_OP_ADD ? ENPU_Q_ADD : ENPU_Q_MUL;
            else
                qc_set_host(p, qc_xprintf("operand is not float32"));
            break;
        }
        case ENPU_OP_CONCAT: {
            bool ok = true;
            for (int k = 0; k < n->n_in; k++)
                if (!qc_is_act(g, n->in[k])) ok = false;
            if (ok)
                p->kind = ENPU_Q_MOVE;
            else
                qc_set_host(p, qc_xprintf("Concat with a constant input"));
            break;
        }
        case ENPU_OP_PAD:
            if (runtime_param(g, n, 2))
                qc_set_host(p, qc_xprintf("Pad value computed by the graph: the host pads with each "
                                    "run's value"));
            else if (n->attr.pad.value == 0.0f || n->attr.pad.mode != ENPU_PADMODE_CONSTANT)
                p->kind = ENPU_Q_MOVE;
            else
                qc_set_host(p, qc_xprintf("Pad with value %g (a MOVE pads with the zero point)",
                                    (double)n->attr.pad.value));
            break;
        default:
            if (enpu_q_is_table_op(n->op))
                p->kind = ENPU_Q_TABLE;
            else if (enpu_q_is_move_op(n->op))
                p->kind = ENPU_Q_MOVE;
            else
                qc_set_host(p, qc_xprintf("no NPU kernel for %s", enpu_op_name(n->op)));
            break;
        }
        /* integer results (ArgMax's indices, a Cast to int64) are not
         * activations: they stay unquantized on the host, as do the nodes
         * that read them */
        const enpu_tensor *yt = &g->tensors[n->out[0]];
        if (yt->dtype != ENPU_DT_FLOAT32)
            qc_set_host(p, qc_xprintf("%s to %s: integers stay unquantized on the host",
                                      enpu_op_name(n->op), enpu_dtype_name(yt->dtype)));
        for (int k = 0; k < n->n_in && p->kind != ENPU_Q_HOST; k++)
            if (qc_is_act(g, n->in[k]) && g->tensors[n->in[k]].dtype != ENPU_DT_FLOAT32)
                qc_set_host(p, qc_xprintf("input %d is %s: integers stay unquantized on the host", k,
                                          enpu_dtype_name(g->tensors[n->in[k]].dtype)));
        char why[160];
        if (!p->absorbed && !npu_fits(c, g, n, p, why, sizeof why))
            qc_set_host(p, qc_xprintf("%s: the host computes it", why));
        if (!p->absorbed && p->kind != ENPU_Q_HOST && (host_kinds(c) & (1u << p->kind)))
            qc_set_host(p, qc_xprintf("the target has no %s kernel%s", enpu_qkind_name(p->kind),
                                c->o->bits == 16 ? " for 16-bit data" : ""));
        if (!p->absorbed && p->kind == ENPU_Q_HOST && !p->note) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    return 0;
}
