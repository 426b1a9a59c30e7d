/* The TFLite importer's operators (tflite_imp.h): one converter per
 * operator, each preparing every integer parameter exactly as TFLite Micro
 * prepares it (numerics.h), and the table that names them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/tflite_imp.h"

static int opt_i32(imp *im, const opctx *o, unsigned id, int32_t dflt, int32_t *v) {
    if (!o->has_opt) {
        *v = dflt;
        return 0;
    }
    return fb_i32(&im->b, &o->opt, id, dflt, im->where, v);
}

static int opt_u8(imp *im, const opctx *o, unsigned id, uint8_t dflt, uint8_t *v) {
    if (!o->has_opt) {
        *v = dflt;
        return 0;
    }
    return fb_u8(&im->b, &o->opt, id, dflt, im->where, v);
}

/* A fused ActivationFunctionType (a byte). */
static int opt_act(imp *im, const opctx *o, unsigned id, int32_t *act) {
    uint8_t v;
    int rc = opt_u8(im, o, id, 0, &v);
    *act = v;
    return rc;
}

static int need_io(imp *im, const opctx *o, int min_in, int max_in) {
    if (o->n_in < min_in || o->n_in > max_in || o->n_out != 1) {
        char why[96];
        snprintf(why, sizeof why, "has %d inputs and %d outputs (%d..%d and 1 expected)", o->n_in,
                 o->n_out, min_in, max_in);
        return tfl_opfail(im, ENPU_E_INVALID, why);
    }
    return 0;
}

static int need_opt(imp *im, const opctx *o, int type) {
    if (o->opt_type != 0 && o->opt_type != type) {
        char why[64];
        snprintf(why, sizeof why, "options of type %d, %d expected", o->opt_type, type);
        return tfl_opfail(im, ENPU_E_INVALID, why);
    }
    return 0;
}

/* SAME/VALID padding of one axis as TFLite computes it; out must match. */
static int tfl_pad(imp *im, int padding, int64_t in, int k, int s, int d, int64_t out, int *before,
                   int *after) {
    bool ok = padding <= 1 && s >= 1 && d >= 1 && k >= 1 && k <= ENPU_WIN_LIMIT &&
              s <= ENPU_WIN_LIMIT && d <= ENPU_WIN_LIMIT;
    int64_t ek = ok ? (int64_t)(k - 1) * d + 1 : 0;
    int64_t want = !ok ? -1 : padding == 0 ? (in + s - 1) / s : (in - ek + s) / s;
    if (!ok || want != out || out < 1) {
        char why[160];
        snprintf(why, sizeof why, "padding %d, kernel %d, stride %d, dilation %d on %lld give "
                 "%lld outputs, the output tensor has %lld", padding, k, s, d, (long long)in,
                 (long long)want, (long long)out);
        return tfl_opfail(im, ENPU_E_INVALID, why);
    }
    int64_t total = (out - 1) * s + ek - in;
    if (total < 0) total = 0;
    *before = (int)(total / 2);
    *after = (int)(total - total / 2);
    return 0;
}

/* Filter scale of channel c (per-tensor: the one scale). */
static int filter_scale(imp *im, const tt *w, int64_t co, int qdim, const char *role) {
    char why[ENPU_MAX_NAME + 128];
    if (w->type != TT_INT8 || !w->has_q) {
        snprintf(why, sizeof why, "%s '%s' must be int8 with scales", role, w->name);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if (w->scale.len != 1 && (w->scale.len != co || w->qdim != qdim)) {
        snprintf(why, sizeof why, "%s '%s': %u scales along axis %d; one, or %lld along axis %d, "
                 "expected", role, w->name, w->scale.len, w->qdim, (long long)co, qdim);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    for (uint32_t c = 0; c < w->scale.len; c++)
        if (fb_vec_i64(&im->b, &w->zp, c) != 0 || !(fb_vec_f32(&im->b, &w->scale, c) >= 0)) {
            snprintf(why, sizeof why, "%s '%s': channel %u has zero point %lld / scale %g "
                     "(TFLite's int8 weights are symmetric)", role, w->name, c,
                     (long long)fb_vec_i64(&im->b, &w->zp, c),
                     (double)fb_vec_f32(&im->b, &w->scale, c));
            return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
        }
    return 0;
}

/* Conv-like node: weights already in IR order [co][k] (k per channel). */
typedef struct convspec {
    enpu_op op;
    enpu_qorigin origin;
    int x, y;                 /* IR tensors */
    const tt *tw, *tb;        /* TFLite weight/bias tensors (NULL: avgpool/mean/rescale) */
    int8_t *w;                /* owned, co * k */
    int64_t co, k;
    int64_t w_dims[4];
    int w_rank;
    int32_t *bias;            /* owned, raw (before the zero-point fold); NULL: 0 */
    bool raw_sum;             /* TFLite's average pool: no zero-point fold, no output zp */
    float *sw;                /* owned: the weights' scales per channel (conv, fc), or NULL */
    int act;
    enpu_attr attr;
} convspec;

static int conv_node(imp *im, convspec *cs, const uint32_t *M, const int *S) {
    const enpu_tensor *xt = &im->g->tensors[cs->x], *yt = &im->g->tensors[cs->y];
    float s_out = yt->quant->scale[0];
    int32_t zin = xt->quant->zero_point[0], zout = yt->quant->zero_point[0];
    enpu_qnode *q = tfl_qnode(im, ENPU_Q_CONV);
    int rc = 0;
    if (!q) {
        free(cs->w), free(cs->bias);
        return ENPU_E_NOMEM;
    }
    if (cs->act >= 0 &&
        enpu_tfl_act_range(cs->act, s_out, zout, im->where, &q->lo, &q->hi, im->err))
        rc = enpu_err_prefix(im->err, "%s", im->file);
    q->origin = cs->origin;
    q->n_ch = (int)cs->co;
    q->w = cs->w;
    q->n_w = cs->co * cs->k;
    q->bias = malloc((size_t)cs->co * sizeof *q->bias);
    q->M = malloc((size_t)cs->co * sizeof *q->M);
    q->S = malloc((size_t)cs->co);
    q->zp_in[0] = zin;
    q->zp_out = cs->raw_sum ? 0 : zout;
    cs->w = NULL;
    if (!rc && (!q->bias || !q->M || !q->S)) rc = FAIL(ENPU_E_NOMEM, "out of memory");
    for (int64_t c = 0; c < cs->co && !rc; c++) {
        int64_t sw = 0;
        for (int64_t i = 0; i < cs->k; i++) sw += q->w[c * cs->k + i];
        /* the input zero point folded into the bias (docs/numerics.md §5) */
        int64_t b = (cs->bias ? cs->bias[c] : 0) - (cs->raw_sum ? 0 : (int64_t)zin * sw);
        if (b < INT32_MIN || b > INT32_MAX) {
            char why[128];
            snprintf(why, sizeof why, "channel %lld: bias - zero point * sum(weights) = %lld does "
                     "not fit int32", (long long)c, (long long)b);
            rc = tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
        }
        q->bias[c] = (int32_t)b;
        q->M[c] = M[c];
        q->S[c] = (int8_t)S[c];
    }
    free(cs->bias);
    cs->bias = NULL;
    if (rc) {
        enpu_qnode_free(q);
        return rc;
    }
    int ins[3] = {cs->x, -1, -1}, n_in = 1;
    if (cs->op == ENPU_OP_CONV || cs->op == ENPU_OP_GEMM) {
        char base[ENPU_MAX_NAME + 16];
        snprintf(base, sizeof base, "%s", cs->tw->name);
        if ((rc = tfl_new_const(im, base, ENPU_DT_INT8, cs->w_rank, cs->w_dims, q->w, (size_t)q->n_w,
                                &ins[1])) ||
            (rc = tfl_new_const(im, cs->tb ? cs->tb->name : "bias", ENPU_DT_INT32, 1, &cs->co, q->bias,
                                (size_t)cs->co * 4, &ins[2]))) {
            enpu_qnode_free(q);
            return rc;
        }
        /* the weights keep their per-channel scales (quant.h), zero points 0 */
        int32_t *zeros = calloc((size_t)cs->co, sizeof *zeros);
        rc = zeros && cs->sw ? enpu_tensor_set_quant(&im->g->tensors[ins[1]], 0, (int)cs->co, cs->sw,
                                                     zeros, im->err)
                             : FAIL(ENPU_E_NOMEM, "out of memory");
        free(zeros);
        if (rc) {
            enpu_qnode_free(q);
            return rc;
        }
        n_in = 3;
    }
    return tfl_add_node(im, "", cs->op, n_in, ins, cs->y, q, &cs->attr);
}

/* Multipliers s_in * s_w[c] / s_out, as TFLite prepares them. */
static int conv_multipliers(imp *im, const tt *w, int64_t co, float s_in, float s_out, uint32_t *M,
                            int *S, float *scales) {
    for (int64_t c = 0; c < co; c++) {
        float sw = fb_vec_f32(&im->b, &w->scale, w->scale.len == 1 ? 0 : (uint32_t)c);
        scales[c] = sw;
        int rc = enpu_tfl_multiplier((double)s_in * (double)sw / (double)s_out, im->where, &M[c],
                                     &S[c], im->err);
        if (rc) return enpu_err_prefix(im->err, "%s", im->file);
    }
    return 0;
}

static int bias_raw(imp *im, const opctx *o, int idx, int64_t co, int32_t **out) {
    *out = NULL;
    if (o->n_in <= idx || o->in[idx] < 0) return 0;
    tt *b;
    const uint8_t *d;
    int rc = tfl_tensor_ref(im, o->in[idx], "bias", &b);
    if (rc) return rc;
    if (b->type != TT_INT32 || b->rank != 1 || b->dims[0] != co) {
        char why[ENPU_MAX_NAME + 96];
        snprintf(why, sizeof why, "bias '%s' must be int32 of %lld values", b->name, (long long)co);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if ((rc = tfl_const_data(im, b, 4, "bias", &d))) return rc;
    *out = malloc((size_t)co * 4 + 4);
    if (!*out) return FAIL(ENPU_E_NOMEM, "out of memory");
    for (int64_t c = 0; c < co; c++) (*out)[c] = tfl_rd_i32(d + 4 * c);
    return 0;
}

/* The end of a conv or fc whose weights cs->w are in IR order: the bias,
 * the per-channel multipliers, the node. */
static int weighted_node(imp *im, const opctx *o, convspec *cs, const tt *w, float s_in,
                         float s_out) {
    uint32_t *M = malloc((size_t)cs->co * sizeof *M);
    int *S = malloc((size_t)cs->co * sizeof *S);
    cs->sw = malloc((size_t)cs->co * sizeof *cs->sw);
    int rc = cs->w && M && S && cs->sw ? 0 : FAIL(ENPU_E_NOMEM, "out of memory");
    if (!rc) rc = bias_raw(im, o, 2, cs->co, &cs->bias);
    if (!rc && o->n_in > 2 && o->in[2] >= 0) cs->tb = &im->t[o->in[2]];
    if (!rc) rc = conv_multipliers(im, w, cs->co, s_in, s_out, M, S, cs->sw);
    if (!rc) rc = conv_node(im, cs, M, S);
    else free(cs->w), free(cs->bias);
    free(cs->sw);
    free(M);
    free(S);
    return rc;
}

/* A conv-kind node of weights 1 (average pool, mean, rescale) whose
 * channels share one (M, S). */
static int uniform_node(imp *im, convspec *cs, uint32_t M0, int S0) {
    uint32_t *M = malloc((size_t)cs->co * sizeof *M);
    int *S = malloc((size_t)cs->co * sizeof *S);
    cs->w = malloc((size_t)(cs->co * cs->k));
    int rc = M && S && cs->w ? 0 : FAIL(ENPU_E_NOMEM, "out of memory");
    if (!rc) {
        memset(cs->w, 1, (size_t)(cs->co * cs->k));
        for (int64_t c = 0; c < cs->co; c++) M[c] = M0, S[c] = S0;
        rc = conv_node(im, cs, M, S);
    } else {
        free(cs->w);
    }
    free(M);
    free(S);
    return rc;
}

static int imp_conv(imp *im, const opctx *o, bool depthwise) {
    int rc;
    if ((rc = need_io(im, o, 2, 3)) || (rc = need_opt(im, o, depthwise ? OPT_DWCONV : OPT_CONV)))
        return rc;
    tt *x, *w, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->in[1], "filter", &w)) ||
        (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    uint8_t padding;
    int32_t sw, sh, dw, dh, mult = 1, act;
    /* Conv2DOptions: padding 0, stride_w 1, stride_h 2, act 3, dilation_w 4, dilation_h 5;
     * DepthwiseConv2DOptions: padding 0, stride_w 1, stride_h 2, depth_multiplier 3, act 4,
     * dilation_w 5, dilation_h 6 */
    int sh_i = depthwise ? 1 : 0;
    if ((rc = opt_u8(im, o, 0, 0, &padding)) || (rc = opt_i32(im, o, 1, 1, &sw)) ||
        (rc = opt_i32(im, o, 2, 1, &sh)) ||
        (depthwise && (rc = opt_i32(im, o, 3, 1, &mult))) ||
        (rc = opt_act(im, o, 3 + (unsigned)sh_i, &act)) ||
        (rc = opt_i32(im, o, 4 + (unsigned)sh_i, 1, &dw)) || (rc = opt_i32(im, o, 5 + (unsigned)sh_i, 1, &dh)))
        return rc;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4)
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, "input, filter and output must be 4-D (NHWC)");
    int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
    int64_t co = depthwise ? w->dims[3] : w->dims[0], kh = w->dims[1], kw = w->dims[2];
    int64_t cig = depthwise ? 1 : w->dims[3];
    int64_t group = depthwise ? C : (cig > 0 && C % cig == 0 ? C / cig : 0);
    if (co < 1 || cig < 1 || group < 1 || co % group || y->dims[0] != N || y->dims[3] != co ||
        (depthwise && (w->dims[0] != 1 || co != C * (mult > 0 ? mult : 0))) || group > INT32_MAX)
        return tfl_opfail(im, ENPU_E_INVALID, "filter, input and output channels do not agree");
    int pads[4];
    if ((rc = tfl_pad(im, padding, H, (int)(kh <= ENPU_WIN_LIMIT ? kh : -1), sh, dh, y->dims[1],
                      &pads[0], &pads[2])) ||
        (rc = tfl_pad(im, padding, W, (int)(kw <= ENPU_WIN_LIMIT ? kw : -1), sw, dw, y->dims[2],
                      &pads[1], &pads[3])))
        return rc;
    if ((rc = filter_scale(im, w, co, depthwise ? 3 : 0, "filter"))) return rc;
    float s_in, s_out;
    int32_t z;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    if ((rc = tfl_act_params(im, y, "output", &s_out, &z)) || (rc = tfl_act_ir(im, x, "input", &cs.x)) ||
        (rc = tfl_act_ir(im, y, "output", &cs.y)))
        return rc;
    s_in = im->g->tensors[cs.x].quant->scale[0];
    const uint8_t *wd;
    if ((rc = tfl_const_data(im, w, 1, "filter", &wd))) return rc;
    cs.op = ENPU_OP_CONV;
    cs.origin = ENPU_QO_CONV;
    cs.tw = w;
    cs.co = co;
    cs.k = cig * kh * kw;
    cs.act = act;
    cs.w_rank = 4;
    cs.w_dims[0] = co, cs.w_dims[1] = cig, cs.w_dims[2] = kh, cs.w_dims[3] = kw;
    cs.attr.conv.group = (int)group;
    cs.attr.conv.w.kernel[0] = (int)kh, cs.attr.conv.w.kernel[1] = (int)kw;
    cs.attr.conv.w.stride[0] = sh, cs.attr.conv.w.stride[1] = sw;
    cs.attr.conv.w.dilation[0] = dh, cs.attr.conv.w.dilation[1] = dw;
    for (int i = 0; i < 4; i++) cs.attr.conv.w.pads[i] = pads[i];
    cs.w = malloc((size_t)(co * cs.k));
    /* IR weights [co][ci/group][kh][kw] from TFLite's [co][kh][kw][ci] (conv)
     * or [1][kh][kw][co] (depthwise) */
    for (int64_t c = 0; c < co && cs.w; c++)
        for (int64_t i = 0; i < cig; i++)
            for (int64_t a = 0; a < kh; a++)
                for (int64_t b = 0; b < kw; b++)
                    cs.w[((c * cig + i) * kh + a) * kw + b] =
                        (int8_t)(depthwise ? wd[(a * kw + b) * co + c]
                                           : wd[((c * kh + a) * kw + b) * cig + i]);
    return weighted_node(im, o, &cs, w, s_in, s_out);
}

static int imp_fc(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 2, 3)) || (rc = need_opt(im, o, OPT_FC))) return rc;
    tt *x, *w, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->in[1], "weights", &w)) ||
        (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    int32_t act;
    uint8_t fmt;
    if ((rc = opt_act(im, o, 0, &act)) || (rc = opt_u8(im, o, 1, 0, &fmt))) return rc;
    if (fmt != 0) return tfl_opfail(im, ENPU_E_UNSUPPORTED, "shuffled weight formats are not supported");
    if (w->rank != 2) return tfl_opfail(im, ENPU_E_INVALID, "weights must be 2-D [outputs, inputs]");
    int64_t O = w->dims[0], K = w->dims[1], nx;
    enpu_shape_numel(x->rank, x->dims, &nx, x->name, NULL);
    if (K < 1 || O < 1 || nx % K || y->rank != 2 || y->dims[0] != nx / K || y->dims[1] != O)
        return tfl_opfail(im, ENPU_E_UNSUPPORTED,
                          "input, weights and output must be [N, K] x [O, K] -> [N, O]");
    if ((rc = filter_scale(im, w, O, 0, "weights"))) return rc;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    float s_out;
    int32_t z;
    int xi;
    if ((rc = tfl_act_params(im, y, "output", &s_out, &z)) || (rc = tfl_act_ir(im, x, "input", &xi)) ||
        (rc = tfl_act_ir(im, y, "output", &cs.y)))
        return rc;
    float s_in = im->g->tensors[xi].quant->scale[0];
    cs.x = xi;
    if (x->rank != 2) { /* TFLite flattens the input to [N, K] */
        int64_t d2[2] = {nx / K, K};
        if ((rc = tfl_reshape_tfl(im, xi, x->rank, x->dims, 2, d2, -1, &cs.x))) return rc;
    }
    const uint8_t *wd;
    if ((rc = tfl_const_data(im, w, 1, "weights", &wd))) return rc;
    cs.op = ENPU_OP_GEMM;
    cs.origin = ENPU_QO_FC;
    cs.tw = w;
    cs.co = O;
    cs.k = K;
    cs.act = act;
    cs.w_rank = 2;
    cs.w_dims[0] = O, cs.w_dims[1] = K;
    cs.attr.gemm.alpha = cs.attr.gemm.beta = 1.0f;
    cs.attr.gemm.trans_b = true;
    cs.w = malloc((size_t)(O * K));
    if (cs.w) memcpy(cs.w, wd, (size_t)(O * K));
    return weighted_node(im, o, &cs, w, s_in, s_out);
}

/* Output tensor with the input's parameters (pools, moves). */
static int same_params(imp *im, int x, int y, const char *what) {
    const enpu_quant *a = im->g->tensors[x].quant, *b = im->g->tensors[y].quant;
    if (a->scale[0] != b->scale[0] || a->zero_point[0] != b->zero_point[0]) {
        char why[192];
        snprintf(why, sizeof why, "%s: input and output must share scale and zero point (%g, %d "
                 "vs %g, %d)", what, (double)a->scale[0], (int)a->zero_point[0],
                 (double)b->scale[0], (int)b->zero_point[0]);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    return 0;
}

static int imp_pool(imp *im, const opctx *o, bool avg) {
    int rc;
    if ((rc = need_io(im, o, 1, 1)) || (rc = need_opt(im, o, OPT_POOL))) return rc;
    tt *x, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    uint8_t padding;
    int32_t sw, sh, fw, fh, act;
    /* Pool2DOptions: padding 0, stride_w 1, stride_h 2, filter_width 3, filter_height 4, act 5 */
    if ((rc = opt_u8(im, o, 0, 0, &padding)) || (rc = opt_i32(im, o, 1, 1, &sw)) ||
        (rc = opt_i32(im, o, 2, 1, &sh)) || (rc = opt_i32(im, o, 3, 1, &fw)) ||
        (rc = opt_i32(im, o, 4, 1, &fh)) || (rc = opt_act(im, o, 5, &act)))
        return rc;
    if (x->rank != 4 || y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[3] != x->dims[3])
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, "input and output must be 4-D with the same N and C");
    int pads[4];
    if ((rc = tfl_pad(im, padding, x->dims[1], fh, sh, 1, y->dims[1], &pads[0], &pads[2])) ||
        (rc = tfl_pad(im, padding, x->dims[2], fw, sw, 1, y->dims[2], &pads[1], &pads[3])))
        return rc;
    int xi, yi;
    if ((rc = tfl_act_ir(im, x, "input", &xi)) || (rc = tfl_act_ir(im, y, "output", &yi)) ||
        (rc = same_params(im, xi, yi, avg ? "AVERAGE_POOL_2D" : "MAX_POOL_2D")))
        return rc;
    enpu_attr a;
    memset(&a, 0, sizeof a);
    a.pool.w.kernel[0] = fh, a.pool.w.kernel[1] = fw;
    a.pool.w.stride[0] = sh, a.pool.w.stride[1] = sw;
    a.pool.w.dilation[0] = a.pool.w.dilation[1] = 1;
    for (int i = 0; i < 4; i++) a.pool.w.pads[i] = pads[i];
    const enpu_tensor *yt = &im->g->tensors[yi];
    int32_t z = yt->quant->zero_point[0];
    if (!avg) {
        enpu_qnode *q = tfl_qnode(im, ENPU_Q_MAXPOOL);
        if (q) {
            q->zp_in[0] = q->zp_out = z;
            rc = enpu_tfl_act_range(act, yt->quant->scale[0], z, im->where, &q->lo, &q->hi, im->err);
            if (rc) {
                enpu_qnode_free(q);
                return enpu_err_prefix(im->err, "%s", im->file);
            }
        }
        return tfl_add_node(im, "", ENPU_OP_MAXPOOL, 1, &xi, yi, q, &a);
    }
    /* TFLite divides by the window's positions inside the input: one
     * divisor for every output only when no window reaches the padding */
    if (pads[0] || pads[1] || pads[2] || pads[3])
        return tfl_opfail(im, ENPU_E_UNSUPPORTED,
                          "AVERAGE_POOL_2D windows reaching SAME padding divide by a per-position count "
                          "(not supported on the NPU)");
    int64_t C = x->dims[3], n = (int64_t)fh * fw;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    cs.op = ENPU_OP_AVGPOOL;
    cs.origin = ENPU_QO_AVGPOOL;
    cs.x = xi, cs.y = yi, cs.co = C, cs.k = n, cs.act = act, cs.attr = a, cs.raw_sum = true;
    uint32_t M;
    int S;
    if ((rc = enpu_tfl_avgpool_multiplier(n, im->where, &M, &S, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    return uniform_node(im, &cs, M, S);
}

static int imp_mean(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 2, 2)) || (rc = need_opt(im, o, OPT_REDUCER))) return rc;
    tt *x, *ax, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->in[1], "axes", &ax)) ||
        (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    uint8_t keep;
    if ((rc = opt_u8(im, o, 0, 0, &keep))) return rc;
    if (ax->type != TT_INT32 || ax->rank > 1)
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, "axes must be an int32 constant vector");
    const uint8_t *ad;
    if ((rc = tfl_const_data(im, ax, 4, "axes", &ad))) return rc;
    int64_t na;
    enpu_shape_numel(ax->rank, ax->dims, &na, ax->name, NULL);
    bool seen[4] = {false};
    for (int64_t i = 0; i < na && x->rank == 4; i++) {
        int32_t a = tfl_rd_i32(ad + 4 * i);
        if (a < 0) a += 4;
        if (a >= 0 && a < 4) seen[a] = true;
        else seen[0] = true;
    }
    if (x->rank != 4 || !seen[1] || !seen[2] || seen[0] || seen[3] || na != 2)
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, "MEAN is supported over the two spatial axes of a 4-D "
                          "tensor (a global average)");
    int64_t N = x->dims[0], C = x->dims[3], n = x->dims[1] * x->dims[2];
    if ((keep && (y->rank != 4 || y->dims[0] != N || y->dims[1] != 1 || y->dims[2] != 1 ||
                  y->dims[3] != C)) ||
        (!keep && (y->rank != 2 || y->dims[0] != N || y->dims[1] != C)))
        return tfl_opfail(im, ENPU_E_INVALID, "output shape does not match the reduction");
    float s_in, s_out;
    int32_t zin, zout;
    int xi, yi;
    if ((rc = tfl_act_params(im, x, "input", &s_in, &zin)) || (rc = tfl_act_params(im, y, "output", &s_out, &zout)) ||
        (rc = tfl_act_ir(im, x, "input", &xi)) || (rc = tfl_act_ir(im, y, "output", &yi)))
        return rc;
    int gap = yi;
    if (!keep) { /* [N, C, 1, 1], then the reshape TFLite's output is */
        int64_t d[4] = {N, C, 1, 1};
        if ((rc = tfl_new_tensor(im, im->g->tensors[yi].name, ENPU_DT_INT8, 4, d, &gap)) ||
            (rc = enpu_tensor_set_quant(&im->g->tensors[gap], -1, 1, &s_out, &zout, im->err)))
            return rc;
    }
    convspec cs;
    memset(&cs, 0, sizeof cs);
    cs.op = ENPU_OP_GLOBAL_AVGPOOL;
    cs.origin = ENPU_QO_AVGPOOL;
    cs.x = xi, cs.y = gap, cs.co = C, cs.k = n, cs.act = -1;
    uint32_t M;
    int S;
    if ((rc = enpu_tfl_mean_multiplier(s_in, s_out, n, im->where, &M, &S, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    if ((rc = uniform_node(im, &cs, M, S)) || keep) return rc;
    int64_t d4[4] = {N, 1, 1, C}, d2[2] = {N, C};
    return tfl_reshape_tfl(im, gap, 4, d4, 2, d2, yi, &gap);
}

/* Operand i of ADD/MUL: an activation or an int8 constant, brought to the
 * output's rank (TFLite broadcasts align trailing dims) in IR order. */
static int eltwise_operand(imp *im, const opctx *o, int i, int rank, int *ir, float *s, int32_t *z) {
    tt *x;
    int rc = tfl_tensor_ref(im, o->in[i], "input", &x);
    if (rc) return rc;
    if ((rc = tfl_act_params(im, x, "input", s, z))) return rc;
    int64_t d[ENPU_MAX_RANK];
    int pre = rank - x->rank;
    if (pre < 0) return tfl_opfail(im, ENPU_E_INVALID, "an input has a higher rank than the output");
    for (int k = 0; k < rank; k++) d[k] = k < pre ? 1 : x->dims[k - pre];
    bool is_const;
    if ((rc = tfl_has_data(im, x, &is_const))) return rc;
    {
        const uint8_t *data = NULL;
        if (is_const) {
            if ((rc = tfl_const_data(im, x, 1, "operand", &data))) return rc;
            /* the constant in IR order: permute through a scratch tensor */
            int64_t ird[ENPU_MAX_RANK], n;
            tfl_ir_dims(rank, d, ird);
            enpu_shape_numel(rank, d, &n, x->name, NULL);
            int8_t *buf = malloc((size_t)(n ? n : 1));
            if (!buf) return FAIL(ENPU_E_NOMEM, "out of memory");
            enpu_tensor tmp;
            memset(&tmp, 0, sizeof tmp);
            tmp.rank = rank;
            memcpy(tmp.dims, ird, sizeof ird);
            enpu_tflite_to_ir(&tmp, (const int8_t *)data, buf);
            rc = tfl_new_const(im, x->name, ENPU_DT_INT8, rank, ird, buf, (size_t)n, ir);
            free(buf);
            if (!rc) rc = enpu_tensor_set_quant(&im->g->tensors[*ir], -1, 1, s, z, im->err);
            return rc;
        }
    }
    if ((rc = tfl_act_ir(im, x, "input", ir))) return rc;
    if (pre > 0) rc = tfl_reshape_tfl(im, *ir, x->rank, x->dims, rank, d, -1, ir);
    return rc;
}

static int imp_eltwise(imp *im, const opctx *o, bool add) {
    int rc;
    if ((rc = need_io(im, o, 2, 2)) || (rc = need_opt(im, o, add ? OPT_ADD : OPT_MUL))) return rc;
    tt *y;
    int32_t act;
    if ((rc = tfl_tensor_ref(im, o->out[0], "output", &y)) || (rc = opt_act(im, o, 0, &act))) return rc;
    float s[2], so;
    int32_t z[2], zo;
    int in[2], yi;
    if ((rc = tfl_act_params(im, y, "output", &so, &zo)) ||
        (rc = eltwise_operand(im, o, 0, y->rank, &in[0], &s[0], &z[0])) ||
        (rc = eltwise_operand(im, o, 1, y->rank, &in[1], &s[1], &z[1])) ||
        (rc = tfl_act_ir(im, y, "output", &yi)))
        return rc;
    enpu_qnode *q = tfl_qnode(im, add ? ENPU_Q_ADD : ENPU_Q_MUL);
    if (!q) return ENPU_E_NOMEM;
    q->n_ch = 1;
    q->M = malloc(sizeof *q->M);
    q->S = malloc(1);
    q->zp_in[0] = z[0], q->zp_in[1] = z[1], q->zp_out = zo;
    uint32_t M;
    int S, SA[2];
    if (!q->M || !q->S) rc = FAIL(ENPU_E_NOMEM, "out of memory");
    else if (add) rc = enpu_tfl_add_params(s[0], s[1], so, im->where, q->A, SA, &M, &S, im->err);
    else rc = enpu_tfl_multiplier((double)s[0] * (double)s[1] / (double)so, im->where, &M, &S, im->err);
    if (!rc) {
        q->M[0] = M, q->S[0] = (int8_t)S;
        if (add) q->SA[0] = (int8_t)SA[0], q->SA[1] = (int8_t)SA[1];
        rc = enpu_tfl_act_range(act, so, zo, im->where, &q->lo, &q->hi, im->err);
    }
    if (rc) {
        enpu_qnode_free(q);
        return rc == ENPU_E_NOMEM ? rc : enpu_err_prefix(im->err, "%s", im->file);
    }
    return tfl_add_node(im, "", add ? ENPU_OP_ADD : ENPU_OP_MUL, 2, in, yi, q, NULL);
}

static int imp_reshape(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 1, 2))) return rc;
    tt *x, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    int64_t nx, ny;
    enpu_shape_numel(x->rank, x->dims, &nx, x->name, NULL);
    enpu_shape_numel(y->rank, y->dims, &ny, y->name, NULL);
    if (nx != ny) return tfl_opfail(im, ENPU_E_INVALID, "input and output element counts differ");
    int xi, yi;
    if ((rc = tfl_act_ir(im, x, "input", &xi)) || (rc = tfl_act_ir(im, y, "output", &yi)) ||
        (rc = same_params(im, xi, yi, tfl_op_find(o->code)->name)))
        return rc;
    return tfl_reshape_tfl(im, xi, x->rank, x->dims, y->rank, y->dims, yi, &yi);
}

static int imp_pad(imp *im, const opctx *o, bool v2) {
    int rc;
    if ((rc = need_io(im, o, 2, v2 ? 3 : 2))) return rc;
    tt *x, *p, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->in[1], "paddings", &p)) ||
        (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    if (p->type != TT_INT32 || p->rank != 2 || p->dims[0] != x->rank || p->dims[1] != 2 ||
        y->rank != x->rank)
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, "paddings must be an int32 constant [rank, 2]");
    const uint8_t *pd;
    if ((rc = tfl_const_data(im, p, 4, "paddings", &pd))) return rc;
    int xi, yi;
    if ((rc = tfl_act_ir(im, x, "input", &xi)) || (rc = tfl_act_ir(im, y, "output", &yi)) ||
        (rc = same_params(im, xi, yi, tfl_op_find(o->code)->name)))
        return rc;
    int32_t z = im->g->tensors[yi].quant->zero_point[0];
    if (v2 && o->n_in > 2 && o->in[2] >= 0) {
        tt *cv;
        const uint8_t *cd;
        if ((rc = tfl_tensor_ref(im, o->in[2], "constant value", &cv)) ||
            (rc = tfl_const_data(im, cv, 1, "constant value", &cd)))
            return rc;
        if (cv->type != TT_INT8 || (int8_t)cd[0] != z)
            return tfl_opfail(im, ENPU_E_UNSUPPORTED, "PADV2 is supported with the output zero point "
                              "as its value");
    }
    enpu_attr a;
    memset(&a, 0, sizeof a);
    int r = x->rank;
    a.pad.n_pads = 2 * r;
    for (int k = 0; k < r; k++) {
        int32_t b = tfl_rd_i32(pd + 8 * k), e = tfl_rd_i32(pd + 8 * k + 4);
        if (b < 0 || e < 0 || x->dims[k] + b + e != y->dims[k])
            return tfl_opfail(im, ENPU_E_INVALID, "paddings do not give the output shape");
        a.pad.pads[tfl_ir_axis(k, r)] = b;
        a.pad.pads[r + tfl_ir_axis(k, r)] = e;
    }
    enpu_qnode *q = tfl_qnode(im, ENPU_Q_MOVE);
    if (q) q->zp_in[0] = q->zp_out = z;
    return tfl_add_node(im, "", ENPU_OP_PAD, 1, &xi, yi, q, &a);
}

static int imp_concat(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 1, MAX_OP_IO)) || (rc = need_opt(im, o, OPT_CONCAT))) return rc;
    tt *y;
    int32_t axis, act;
    if ((rc = tfl_tensor_ref(im, o->out[0], "output", &y)) || (rc = opt_i32(im, o, 0, 0, &axis)) ||
        (rc = opt_act(im, o, 1, &act)))
        return rc;
    if (act != 0) return tfl_opfail(im, ENPU_E_UNSUPPORTED, "a fused activation on CONCATENATION");
    if (axis < 0) axis += y->rank;
    if (axis < 0 || axis >= y->rank) return tfl_opfail(im, ENPU_E_INVALID, "axis out of range");
    int in[MAX_OP_IO], yi;
    if ((rc = tfl_act_ir(im, y, "output", &yi))) return rc;
    for (int i = 0; i < o->n_in; i++) {
        tt *x;
        if ((rc = tfl_tensor_ref(im, o->in[i], "input", &x)) || (rc = tfl_act_ir(im, x, "input", &in[i])) ||
            (rc = same_params(im, in[i], yi, "CONCATENATION")))
            return rc;
        if (x->rank != y->rank) return tfl_opfail(im, ENPU_E_INVALID, "inputs of different ranks");
    }
    enpu_attr a;
    memset(&a, 0, sizeof a);
    a.shape.axis = tfl_ir_axis(axis, y->rank);
    enpu_qnode *q = tfl_qnode(im, ENPU_Q_MOVE);
    if (q) q->zp_in[0] = q->zp_out = im->g->tensors[yi].quant->zero_point[0];
    return tfl_add_node(im, "", ENPU_OP_CONCAT, o->n_in, in, yi, q, &a);
}

/* QUANTIZE int8 -> int8: TFLite's Requantize, a rescale node. */
static int imp_requantize(imp *im, tt *x, tt *y) {
    int rc, xi, yi;
    if ((rc = tfl_act_ir(im, x, "input", &xi)) || (rc = tfl_act_ir(im, y, "output", &yi))) return rc;
    const enpu_tensor *xt = &im->g->tensors[xi], *yt = &im->g->tensors[yi];
    /* before the per-channel parameters are allocated for the input's
     * channels (a fuzzed file's channel count is the output's business too) */
    bool same = xt->rank == yt->rank;
    for (int k = 0; same && k < xt->rank; k++) same = xt->dims[k] == yt->dims[k];
    if (!same) return tfl_opfail(im, ENPU_E_INVALID, "QUANTIZE's output must have its input's shape");
    int64_t C = xt->rank >= 2 ? xt->dims[1] : 1;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    cs.op = ENPU_OP_IDENTITY;
    cs.origin = ENPU_QO_RESCALE;
    cs.x = xi, cs.y = yi, cs.co = C, cs.k = 1, cs.act = -1;
    uint32_t M;
    int S;
    if ((rc = enpu_tfl_multiplier((double)xt->quant->scale[0] /
                                  (double)im->g->tensors[yi].quant->scale[0],
                                  im->where, &M, &S, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    return uniform_node(im, &cs, M, S);
}

static int imp_host(imp *im, const opctx *o, enpu_op op) {
    int rc;
    if ((rc = need_io(im, o, 1, 1))) return rc;
    tt *x, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    enpu_attr a;
    memset(&a, 0, sizeof a);
    if (op == ENPU_OP_SOFTMAX) {
        float beta = 1.0f;
        if ((rc = need_opt(im, o, OPT_SOFTMAX))) return rc;
        if (o->has_opt && (rc = fb_f32(&im->b, &o->opt, 0, 0.0f, im->where, &beta))) return rc;
        if (beta != 1.0f) return tfl_opfail(im, ENPU_E_UNSUPPORTED, "SOFTMAX with beta other than 1");
        if (x->rank < 1) return tfl_opfail(im, ENPU_E_INVALID, "SOFTMAX of a scalar");
        a.shape.axis = tfl_ir_axis(x->rank - 1, x->rank);
    }
    if (y->rank != x->rank) return tfl_opfail(im, ENPU_E_INVALID, "input and output shapes differ");
    for (int d = 0; d < x->rank; d++)
        if (y->dims[d] != x->dims[d]) return tfl_opfail(im, ENPU_E_INVALID, "input and output shapes differ");
    int xi, yi;
    if ((rc = tfl_act_ir(im, x, "input", &xi)) || (rc = tfl_act_ir(im, y, "output", &yi))) return rc;
    enpu_qnode *q = tfl_qnode(im, ENPU_Q_HOST);
    if (q) q->zp_in[0] = im->g->tensors[xi].quant->zero_point[0],
           q->zp_out = im->g->tensors[yi].quant->zero_point[0];
    return tfl_add_node(im, "", op, 1, &xi, yi, q, &a);
}

/* QUANTIZE / DEQUANTIZE: int8 -> int8 is a rescale; a float graph input's
 * QUANTIZE and a float graph output's DEQUANTIZE are the host's conversions
 * (graph_io), nothing here. */
static int imp_convert(imp *im, const opctx *o, int arg) {
    (void)arg;
    int rc;
    if ((rc = need_io(im, o, 1, 1))) return rc;
    tt *x, *y;
    if ((rc = tfl_tensor_ref(im, o->in[0], "input", &x)) || (rc = tfl_tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    /* float at a graph input or output: the host's conversion (see import_graph) */
    if (o->code == OP_QUANTIZE && x->type == TT_FLOAT32 && y->graph_in) return 0;
    if (o->code == OP_DEQUANTIZE && x->type == TT_INT8 && y->type == TT_FLOAT32) return 0;
    if (o->code == OP_QUANTIZE && x->type == TT_INT8 && y->type == TT_INT8)
        return imp_requantize(im, x, y);
    return tfl_opfail(im, ENPU_E_UNSUPPORTED, "only int8 -> int8, a float graph input -> int8 and "
                      "int8 -> a float graph output are supported");
}

/* ---- the table: every TFLite operator the importer converts ------------------------ */

static int cv_conv(imp *im, const opctx *o, int arg) { return imp_conv(im, o, arg != 0); }
static int cv_fc(imp *im, const opctx *o, int arg) { (void)arg; return imp_fc(im, o); }
static int cv_pool(imp *im, const opctx *o, int arg) { return imp_pool(im, o, arg != 0); }
static int cv_eltwise(imp *im, const opctx *o, int arg) { return imp_eltwise(im, o, arg != 0); }
static int cv_mean(imp *im, const opctx *o, int arg) { (void)arg; return imp_mean(im, o); }
static int cv_reshape(imp *im, const opctx *o, int arg) { (void)arg; return imp_reshape(im, o); }
static int cv_pad(imp *im, const opctx *o, int arg) { return imp_pad(im, o, arg != 0); }
static int cv_concat(imp *im, const opctx *o, int arg) { (void)arg; return imp_concat(im, o); }
static int cv_host(imp *im, const opctx *o, int arg) { return imp_host(im, o, (enpu_op)arg); }

static const tfl_op ops[] = {
    {OP_ADD, "ADD", cv_eltwise, 1},
    {OP_AVERAGE_POOL_2D, "AVERAGE_POOL_2D", cv_pool, 1},
    {OP_CONCATENATION, "CONCATENATION", cv_concat, 0},
    {OP_CONV_2D, "CONV_2D", cv_conv, 0},
    {OP_DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", cv_conv, 1},
    {OP_DEQUANTIZE, "DEQUANTIZE", imp_convert, 0},
    {OP_FULLY_CONNECTED, "FULLY_CONNECTED", cv_fc, 0},
    {OP_LOGISTIC, "LOGISTIC", cv_host, ENPU_OP_SIGMOID},
    {OP_MAX_POOL_2D, "MAX_POOL_2D", cv_pool, 0},
    {OP_MUL, "MUL", cv_eltwise, 0},
    {OP_RESHAPE, "RESHAPE", cv_reshape, 0},
    {OP_SOFTMAX, "SOFTMAX", cv_host, ENPU_OP_SOFTMAX},
    {OP_TANH, "TANH", cv_host, ENPU_OP_TANH},
    {OP_PAD, "PAD", cv_pad, 0},
    {OP_MEAN, "MEAN", cv_mean, 0},
    {OP_SQUEEZE, "SQUEEZE", cv_reshape, 0},
    {OP_PADV2, "PADV2", cv_pad, 1},
    {OP_QUANTIZE, "QUANTIZE", imp_convert, 0},
    {OP_HARD_SWISH, "HARD_SWISH", cv_host, ENPU_OP_HARD_SWISH},
};

const tfl_op *tfl_op_find(int code) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].code == code) return &ops[i];
    return NULL;
}
