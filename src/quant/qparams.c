/* Step 4 of quantization (quantize.c): every int8 tensor's scale and zero
 * point, from the model's own parameters, the observed range, or its
 * input's (MaxPool, data movement, tables' inputs); Concat inputs forced
 * onto the output's parameters where their producer can requantize to
 * them, a RESCALE node otherwise. */
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
                         qc_fname(c, t));
    int rc;
    if (c->o->bits == 16) {
        c->z[t] = 0;
        rc = enpu_choose_scale16(c->rng[t].lo, c->rng[t].hi, c->o->pow2, &c->s[t], c->err);
    } else {
        rc = enpu_choose_qparams(c->rng[t].lo, c->rng[t].hi, -128, 127, &c->s[t], &c->z[t], c->err);
    }
    if (rc) return enpu_err_prefix(c->err, "tensor '%s'", qc_fname(c, t));
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
        if (n >= 256 || !qc_single_use(g, cur) || !c->has[cur]) return false;
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
        if (!qc_single_use(g, x) || !c->rng[x].seen) continue;
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

int qc_assign_params(qctx *c) {
    const enpu_graph *g = c->fg;
    int rc;
    table_input_ranges(c);
    for (int i = 0; i < g->n_nodes; i++) {
        const plan *p = &c->pl[i];
        if (p->absorbed || p->kind == ENPU_Q_HOST) continue;
        const enpu_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (qc_is_act(g, n->in[k])) c->npu_read[n->in[k]] = true;
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
            /* a Gather of computed indices picks int8 codes: its output
             * keeps the data's parameters, so the host copies them as they
             * are (as a move does) */
            if (n->op == ENPU_OP_GATHER && !c->is_float[out] && c->has[x] && !c->is_float[x])
                copy_params(c, out, x);
            else if (!c->is_float[out] && (rc = params_from_range(c, out)))
                return rc;
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
