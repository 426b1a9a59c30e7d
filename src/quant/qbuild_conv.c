/* Step 5 of quantization for conv-kind nodes (conv, fc, depthwise, pools
 * as convs; 8- and 16-bit): int8 weights with per-channel scales, int32
 * biases with the zero-point correction, the requantization pairs (M, S)
 * and the clamp, every accumulator proven to fit acc_bits. */
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

void qc_clamp_of(double lo, double hi, float s, int32_t z, int32_t *qlo, int32_t *qhi) {
    *qlo = -128;
    *qhi = 127;
    if (lo > -INFINITY) *qlo = lo >= INFINITY ? 127 : enpu_quantize((float)lo, s, z, -128, 127);
    if (hi < INFINITY) *qhi = hi <= -INFINITY ? -128 : enpu_quantize((float)hi, s, z, -128, 127);
    if (*qlo > *qhi) *qlo = *qhi;
}

/* The CONV node of cs with its arrays allocated (weights of es bytes: w, or
 * w16 when es is 2; bias, M, S per output channel) and the per-channel
 * weight scales sw; the outputs (*out, *sw_out, *note) cleared.  Nothing is
 * left allocated on failure. */
static int conv_q_alloc(qctx *c, const convspec *cs, int es, enpu_qnode **out, float **sw_out, char **note,
                        enpu_qnode **qp, float **swp) {
    *out = NULL;
    *sw_out = NULL;
    *note = NULL;
    enpu_qnode *q = qc_qnode_new(ENPU_Q_CONV);
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

int qc_build_conv_q(qctx *c, const char *layer, const convspec *cs, enpu_qnode **out,
                        float **sw_out, char **note) {
    if (c->o->bits == 16) return build_conv_q16(c, layer, cs, out, sw_out, note);
    enpu_qnode *q;
    float *sw;
    int rc0 = conv_q_alloc(c, cs, 1, out, sw_out, note, &q, &sw);
    if (rc0) return rc0;
    q->zp_in[0] = cs->z_in;
    q->zp_out = cs->z_out;
    qc_clamp_of(cs->clip_lo, cs->clip_hi, cs->s_out, cs->z_out, &q->lo, &q->hi);
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
        *note = qc_xprintf("weight scale of %d channel(s) raised up to x%d so the bias fits the "
                        "%d-bit accumulator",
                        n_raised, 1 << (max_raised > 30 ? 30 : max_raised), acc_bits);
    else if (worst_rel > 0.01) /* a tiny multiplier capped at S = 63 (numerics.md §3) */
        *note = qc_xprintf("requantization multiplier off by up to %.1f%% (scale below "
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
        *note = qc_xprintf("weight scale of %d channel(s) raised up to x%d so the bias fits int32",
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
    *wq = qc_add_qtensor_named(c, wt->name, w16 ? ENPU_DT_INT16 : ENPU_DT_INT8, wt->rank, wt->dims);
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
        *bq = qc_add_qtensor_named(c, base, ENPU_DT_INT32, 1, &nb);
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

int qc_build_conv_node(qctx *c, int i) {
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
    rc = qc_build_conv_q(c, n->name, &cs, &q, &sw, &note);
    free(bn_w);
    free(bn_b);
    if (rc) return rc;
    q->origin = p->origin;
    q->fused = qc_xstrdup(p->names);
    int ins[5] = {-1, -1, -1, -1, -1}, n_in = 1;
    if ((ins[0] = qc_qtensor(c, x)) < 0) rc = ins[0];
    if (!rc && (p->origin == ENPU_QO_CONV || p->origin == ENPU_QO_FC)) {
        rc = add_weight_tensors(c, n, q, sw, cs.s_in, &ins[1], &ins[2]);
        n_in = 3;
    } else if (!rc && p->origin == ENPU_QO_BN) {
        for (int k = 1; k < 5 && !rc; k++)
            if ((ins[k] = qc_qtensor(c, n->in[k])) < 0) rc = ins[k];
        n_in = 5;
    }
    free(sw);
    int out = rc ? -1 : qc_qtensor(c, y);
    if (!rc && out < 0) rc = out;
    if (rc) {
        enpu_qnode_free(q);
        free(note);
        return rc;
    }
    rc = qc_add_qnode(c, n->name, n->op, n_in, ins, out, &n->attr, q, note);
    return rc < 0 ? rc : 0;
}

/* An operand of an Add/Mul: the activation's tensor, or the constant
 * quantized per tensor (asymmetric, from its own min/max). */
