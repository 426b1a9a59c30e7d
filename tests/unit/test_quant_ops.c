/* Every supported op quantized on its own: tiny float graphs with random
 * (seeded) shapes and weights, quantized on a random calibration set, then
 * for fresh random inputs the golden int8 output of each node is compared
 * with "the float op of the node applied to its dequantized int8 inputs and
 * dequantized weights, quantized with the output's parameters" (the float
 * reference, enpu_fref_node, an independent implementation of the geometry):
 * at most 1 output LSB for every non-table op (0 for max pooling and data
 * movement), at most 2 LSB for table activations.  The report's SQNR against
 * the true float weights is printed and checked against a floor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

/* --- random -------------------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double urand(rng *r) { return (double)(next(r) >> 11) / 9007199254740992.0; }
static int irand(rng *r, int lo, int hi) { return lo + (int)(next(r) % (uint64_t)(hi - lo + 1)); }
static double nrand(rng *r) {
    double u = urand(r) + 1e-12, v = urand(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* --- building -------------------------------------------------------------------- */

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    if (t < 0) fail_msg("%s", err.msg);
    return t;
}

static int input(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = tensor(g, name, rank, dims);
    assert_int_equal(enpu_graph_add_input(g, t, &err), 0);
    return t;
}

static int constant(enpu_graph *g, const char *name, int rank, const int64_t *dims,
                    const float *vals) {
    int t = tensor(g, name, rank, dims);
    size_t n = (size_t)enpu_tensor_numel(&g->tensors[t]);
    float *d = malloc(n * sizeof(float) + 1);
    assert_non_null(d);
    memcpy(d, vals, n * sizeof(float));
    enpu_tensor_set_data(&g->tensors[t], d);
    return t;
}

static int rand_const(enpu_graph *g, const char *name, int rank, const int64_t *dims, rng *r,
                      double sd, double mean) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *v = malloc((size_t)n * sizeof(float) + 1);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(mean + sd * nrand(r));
    int t = constant(g, name, rank, dims, v);
    free(v);
    return t;
}

/* Node with a new output tensor "<name>_out"; returns the node index. */
static int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in, int *out) {
    enpu_err err = {0};
    char o[128];
    snprintf(o, sizeof o, "%s_out", name);
    *out = tensor(g, o, -1, NULL);
    int k = enpu_graph_add_node(g, name, op, n_in, in, 1, out, &err);
    if (k < 0) fail_msg("%s", err.msg);
    return k;
}

static void finish(enpu_graph *g, int y) {
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) ||
        enpu_graph_validate(g, &err))
        fail_msg("%s", err.msg);
}

/* n samples of every graph input: mean + sd * N(0,1) (sd/mean per sample
 * jittered a little so ranges differ between calibration and test). */
static enpu_buf *samples(const enpu_graph *g, int n, rng *r, double mean, double sd) {
    enpu_err err = {0};
    enpu_buf *b = calloc((size_t)n * g->n_inputs, sizeof *b);
    for (int i = 0; i < n * g->n_inputs; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i % g->n_inputs]];
        assert_int_equal(enpu_buf_alloc(&b[i], ENPU_DT_FLOAT32, t->rank, t->dims, &err), 0);
        float *v = b[i].data;
        double m = mean * (1 + 0.1 * (i % g->n_inputs)), s = sd * (1 + 0.2 * (i % g->n_inputs));
        for (int64_t k = 0; k < enpu_buf_numel(&b[i]); k++) v[k] = (float)(m + s * nrand(r));
    }
    return b;
}

/* --- the dequantized twin of a quantized node ----------------------------------------- */

static const enpu_tensor *qin(const enpu_graph *qg, const enpu_node *n, int i) {
    return enpu_node_input(qg, n, i);
}

static float *dequant_copy(const enpu_tensor *t) {
    int64_t n = enpu_tensor_numel(t);
    float *d = malloc((size_t)(n ? n : 1) * sizeof(float));
    const int8_t *v = t->data;
    const enpu_quant *q = t->quant;
    int64_t inner = 1, ax = 1;
    if (q->count > 1) {
        for (int k = q->axis + 1; k < t->rank; k++) inner *= t->dims[k];
        ax = t->dims[q->axis];
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t c = q->count > 1 ? (i / inner) % ax : 0;
        d[i] = (float)(v[i] - q->zero_point[c]) * q->scale[c];
    }
    return d;
}

/* A float graph holding node n of qg with every int8 input dequantized:
 * int8 constants (weights) as float, the int32 bias as the real bias (zero
 * point correction undone), BN as y = x * (w_q * s_w) + b. */
static enpu_graph *twin_of(const enpu_graph *qg, const enpu_node *n) {
    enpu_err err = {0};
    enpu_graph *tg = enpu_graph_new("twin");
    int ins[64];
    const enpu_qnode *q = n->q;
    for (int k = 0; k < n->n_in; k++) {
        const enpu_tensor *t = qin(qg, n, k);
        ins[k] = -1;
        if (!t) continue;
        int have = enpu_graph_find_tensor(tg, t->name);
        if (have >= 0) {
            ins[k] = have;
            continue;
        }
        bool flt = t->dtype == ENPU_DT_INT8 || t->dtype == ENPU_DT_INT32 || t->dtype == ENPU_DT_FLOAT32;
        int idx = enpu_graph_add_tensor(tg, t->name, flt ? ENPU_DT_FLOAT32 : t->dtype, t->rank,
                                        t->dims, &err);
        assert_true(idx >= 0);
        ins[k] = idx;
        if (!(t->flags & ENPU_T_CONST)) {
            assert_int_equal(enpu_graph_add_input(tg, idx, &err), 0);
            continue;
        }
        int64_t cnt = enpu_tensor_numel(t);
        void *data;
        if (t->dtype == ENPU_DT_INT8) {
            data = dequant_copy(t);
        } else if (t->dtype == ENPU_DT_INT32 && k == 2) {
            /* bias: b[c] = (bias[c] + zp_in * sum_k w[c,k]) * s_in * s_w[c] */
            const enpu_tensor *w = qin(qg, n, 1), *x = qin(qg, n, 0);
            float *b = malloc((size_t)cnt * sizeof(float));
            int64_t kk = enpu_tensor_numel(w) / cnt;
            for (int64_t c = 0; c < cnt; c++) {
                int64_t sum = 0;
                for (int64_t j = 0; j < kk; j++) sum += ((const int8_t *)w->data)[c * kk + j];
                b[c] = (float)(((double)q->bias[c] + (double)q->zp_in[0] * sum) *
                               x->quant->scale[0] * w->quant->scale[c]);
            }
            data = b;
        } else {
            size_t nb = enpu_tensor_nbytes(t);
            data = malloc(nb ? nb : 1);
            memcpy(data, t->data, nb);
        }
        enpu_tensor_set_data(&tg->tensors[idx], data);
    }
    if (n->op == ENPU_OP_BATCHNORM) {
        /* scale' = w_q * s_w, B' = b_real, mean 0, var 1 - eps */
        const enpu_tensor *x = qin(qg, n, 0);
        float *sc = tg->tensors[ins[1]].data, *be = tg->tensors[ins[2]].data;
        float *mu = tg->tensors[ins[3]].data, *var = tg->tensors[ins[4]].data;
        for (int c = 0; c < q->n_ch; c++) {
            double m = sc[c] / sqrt((double)var[c] + n->attr.bn.epsilon);
            float s_w = enpu_symmetric_scale(fabsf((float)m), 127);
            double bq = (double)q->bias[c] + (double)q->zp_in[0] * q->w[c];
            sc[c] = (float)(q->w[c] * s_w);
            be[c] = (float)(bq * x->quant->scale[0] * s_w);
            mu[c] = 0.0f;
            var[c] = 1.0f - n->attr.bn.epsilon;
        }
    }
    const enpu_tensor *y = enpu_node_output(qg, n, 0);
    int o = enpu_graph_add_tensor(tg, y->name, ENPU_DT_FLOAT32, y->rank, y->dims, &err);
    assert_true(o >= 0);
    int k = enpu_graph_add_node(tg, n->name, n->op, n->n_in, ins, 1, &o, &err);
    assert_true(k >= 0);
    tg->nodes[k].attr = n->attr;
    assert_int_equal(enpu_graph_add_output(tg, o, &err), 0);
    return tg;
}

typedef struct cmp {
    int max_diff;        /* LSB */
    int64_t n_diff, n;   /* elements that differ / compared */
} cmp;

/* Runs the golden on the samples and compares every node of qg with its twin. */
static cmp compare_nodes(const enpu_graph *qg, const enpu_buf *s, int n_samples) {
    enpu_err err = {0};
    enpu_gexec *gx = NULL;
    if (enpu_gexec_new(qg, &gx, &err)) fail_msg("%s", err.msg);
    cmp c = {0, 0, 0};
    enpu_graph **tw = calloc((size_t)qg->n_nodes, sizeof *tw);
    for (int i = 0; i < qg->n_nodes; i++) tw[i] = twin_of(qg, &qg->nodes[i]);
    for (int smp = 0; smp < n_samples; smp++) {
        if (enpu_gexec_run(gx, s + (size_t)smp * qg->n_inputs, &err)) fail_msg("%s", err.msg);
        for (int i = 0; i < qg->n_nodes; i++) {
            const enpu_node *n = &qg->nodes[i];
            const enpu_tensor *y = enpu_node_output(qg, n, 0);
            const float *ins[64];
            float *bufs[64] = {0};
            for (int k = 0; k < n->n_in; k++) {
                const enpu_tensor *t = qin(qg, n, k);
                ins[k] = NULL;
                if (!t) continue;
                if (t->flags & ENPU_T_CONST) {
                    ins[k] = tw[i]->tensors[enpu_graph_find_tensor(tw[i], t->name)].data;
                    continue;
                }
                bufs[k] = malloc((size_t)enpu_tensor_numel(t) * sizeof(float) + 4);
                assert_int_equal(enpu_gexec_value_f32(gx, n->in[k], bufs[k], &err), 0);
                ins[k] = bufs[k];
            }
            int64_t cnt = enpu_tensor_numel(y);
            float *ref = malloc((size_t)cnt * sizeof(float) + 4);
            float *outs[1] = {ref};
            if (enpu_fref_node(tw[i], &tw[i]->nodes[0], ins, outs, &err)) fail_msg("%s", err.msg);
            if (y->dtype == ENPU_DT_FLOAT32) {
                /* HOST output left float: the same float op on the same values */
                float *got = malloc((size_t)cnt * sizeof(float) + 4);
                assert_int_equal(enpu_gexec_value_f32(gx, n->out[0], got, &err), 0);
                for (int64_t e = 0; e < cnt; e++)
                    if (got[e] != ref[e]) fail_msg("%s: host output differs at %lld", n->name, (long long)e);
                c.n += cnt;
                free(got);
            } else {
                const int8_t *got = enpu_gexec_value_i8(gx, n->out[0]);
                float sc = y->quant->scale[0];
                int32_t zp = y->quant->zero_point[0];
                bool clamp = n->q->kind == ENPU_Q_CONV || n->q->kind == ENPU_Q_ADD ||
                             n->q->kind == ENPU_Q_MUL || n->q->kind == ENPU_Q_MAXPOOL;
                for (int64_t e = 0; e < cnt; e++) {
                    int32_t want = enpu_quantize(ref[e], sc, zp, -128, 127);
                    if (clamp) want = (int32_t)enpu_clamp64(want, n->q->lo, n->q->hi);
                    int d = abs(want - got[e]);
                    if (d > c.max_diff) c.max_diff = d;
                    if (d) c.n_diff++;
                    c.n++;
                }
            }
            free(ref);
            for (int k = 0; k < n->n_in; k++) free(bufs[k]);
        }
    }
    for (int i = 0; i < qg->n_nodes; i++) enpu_graph_free(tw[i]);
    free(tw);
    enpu_gexec_free(gx);
    return c;
}

/* Quantizes g on n_cal samples, then compares on n_test fresh ones; returns
 * the comparison and the report (caller frees).  mean/sd: input distribution. */
static cmp run_case(enpu_graph *g, rng *r, double mean, double sd, const enpu_quant_opts *o,
                    enpu_graph **qg_out, enpu_qreport *rep) {
    enpu_err err = {0};
    enpu_buf *cal = samples(g, 6, r, mean, sd), *test = samples(g, 3, r, mean, sd);
    enpu_graph *qg = NULL;
    if (enpu_quantize_graph(g, cal, 6, o, &qg, rep, &err)) fail_msg("%s", err.msg);
    cmp c = compare_nodes(qg, test, 3);
    enpu_calib_free(cal, 6 * g->n_inputs);
    enpu_calib_free(test, 3 * g->n_inputs);
    if (qg_out)
        *qg_out = qg;
    else
        enpu_graph_free(qg);
    return c;
}

static const enpu_node *find_node(const enpu_graph *qg, const char *name) {
    for (int i = 0; i < qg->n_nodes; i++)
        if (!strcmp(qg->nodes[i].name, name)) return &qg->nodes[i];
    fail_msg("no node '%s'", name);
    return NULL;
}

static double layer_sqnr(const enpu_qreport *rep, const char *name) {
    for (int i = 0; i < rep->n_layers; i++)
        if (!strcmp(rep->layers[i].name, name)) return rep->layers[i].sqnr_db;
    return NAN;
}

static enpu_quant_opts quiet_opts(void) {
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    o.quiet = true;
    return o;
}

/* --- conv ---------------------------------------------------------------------------- */

static void test_conv_random(void **state) {
    (void)state;
    rng r = {1234};
    enpu_quant_opts o = quiet_opts();
    int worst = 0, n_dw = 0, n_grp = 0, n_1d = 0, n_relu = 0;
    double min_sqnr = INFINITY;
    int64_t total = 0, differ = 0;
    for (int it = 0; it < 60; it++) {
        bool one_d = it % 7 == 3;
        int ci = irand(&r, 1, 20), co = irand(&r, 1, 20), group = 1;
        int kind = irand(&r, 0, 3);
        if (kind == 1) { /* depthwise */
            group = ci;
            co = ci * irand(&r, 1, 2);
            n_dw++;
        } else if (kind == 2) {
            int gs[] = {2, 3, 4};
            group = gs[irand(&r, 0, 2)];
            ci = group * irand(&r, 1, 5);
            co = group * irand(&r, 1, 5);
            n_grp++;
        }
        int kh = one_d ? 1 : irand(&r, 1, 5), kw = irand(&r, 1, 5);
        int h = one_d ? 1 : irand(&r, kh + 2, 14), w = irand(&r, kw + 2, 14);
        enpu_graph *g = enpu_graph_new("conv");
        int64_t xd4[] = {1, ci, h, w}, xd3[] = {1, ci, w};
        int x = input(g, "x", one_d ? 3 : 4, one_d ? xd3 : xd4);
        int64_t wd4[] = {co, ci / group, kh, kw}, wd3[] = {co, ci / group, kw}, bd[] = {co};
        int in[3] = {x, rand_const(g, "w", one_d ? 3 : 4, one_d ? wd3 : wd4, &r, 0.3, 0.0),
                     rand_const(g, "b", 1, bd, &r, 0.5, 0.0)};
        int y, k = node(g, "conv", ENPU_OP_CONV, irand(&r, 0, 3) ? 3 : 2, in, &y);
        enpu_conv_attr *a = &g->nodes[k].attr.conv;
        a->group = group;
        for (int d = 0; d < 2; d++) {
            a->w.stride[d] = irand(&r, 1, 3);
            a->w.dilation[d] = irand(&r, 1, 2);
        }
        for (int d = 0; d < 4; d++) a->w.pads[d] = irand(&r, 0, 2);
        if (one_d) a->w.pads[0] = a->w.pads[2] = 0, a->w.stride[0] = a->w.dilation[0] = 1;
        /* keep the dilated kernel inside the padded input */
        if ((kh - 1) * a->w.dilation[0] + 1 > h + a->w.pads[0] + a->w.pads[2]) a->w.dilation[0] = 1;
        if ((kw - 1) * a->w.dilation[1] + 1 > w + a->w.pads[1] + a->w.pads[3]) a->w.dilation[1] = 1;
        int act = irand(&r, 0, 2), yy = y;
        if (act) {
            int ri = y, rk = node(g, "act", act == 1 ? ENPU_OP_RELU : ENPU_OP_CLIP, 1, &ri, &yy);
            if (act == 2) {
                g->nodes[rk].attr.act.min = 0.0f;
                g->nodes[rk].attr.act.max = 6.0f;
            }
            n_relu++;
        }
        finish(g, yy);
        enpu_graph *qg;
        enpu_qreport rep;
        /* two draws in sequence (as arguments their order would be the
         * compiler's: gcc and clang differ, and so would the cases) */
        double sd = 1.0 + urand(&r);
        int mean = irand(&r, -1, 2);
        cmp c = run_case(g, &r, mean, sd, &o, &qg, &rep);
        assert_int_equal(qg->n_nodes, 1); /* Relu/Clip folded into the conv's clamp */
        const enpu_node *qn = find_node(qg, "conv");
        assert_int_equal(qn->q->kind, ENPU_Q_CONV);
        assert_int_equal(qn->q->origin, ENPU_QO_CONV);
        if (act) assert_int_equal(qn->q->lo, qg->tensors[qn->out[0]].quant->zero_point[0]);
        if (c.max_diff > 1)
            fail_msg("conv case %d (ci %d co %d g %d k %dx%d): %d LSB", it, ci, co, group, kh, kw,
                     c.max_diff);
        if (c.max_diff > worst) worst = c.max_diff;
        total += c.n;
        differ += c.n_diff;
        if (one_d) n_1d++;
        double s = layer_sqnr(&rep, "conv");
        if (s < min_sqnr) min_sqnr = s;
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    printf("conv: 60 cases (%d depthwise, %d grouped, %d 1-D, %d with fused Relu/Clip): "
           "max %d LSB vs the dequantized twin, %lld of %lld outputs off by 1; "
           "worst SQNR vs float weights %.1f dB\n",
           n_dw, n_grp, n_1d, n_relu, worst, (long long)differ, (long long)total, min_sqnr);
    assert_true(min_sqnr > 25.0);
    /* Measured, deterministic (seeded): the golden equals the correctly
     * rounded fake-quant result on every one of these outputs (M's 2^-20
     * relative error never crosses a rounding boundary here). */
    assert_int_equal(worst, 0);
    assert_int_equal(differ, 0);
}

/* --- FC ----------------------------------------------------------------------------- */

static void test_fc_random(void **state) {
    (void)state;
    rng r = {99};
    enpu_quant_opts o = quiet_opts();
    int worst = 0;
    double min_sqnr = INFINITY;
    for (int it = 0; it < 24; it++) {
        int kdim = irand(&r, 1, 70), ndim = irand(&r, 1, 33);
        enpu_graph *g = enpu_graph_new("fc");
        int64_t xd[] = {1, kdim};
        int x = input(g, "x", 2, xd), y, yy;
        int variant = it % 4;
        if (variant == 3) { /* MatMul + Add(bias) */
            int64_t wd[] = {kdim, ndim}, bd[] = {1, ndim};
            int in[2] = {x, rand_const(g, "W", 2, wd, &r, 0.2, 0)};
            node(g, "fc", ENPU_OP_MATMUL, 2, in, &y);
            int in2[2] = {y, rand_const(g, "B", 2, bd, &r, 0.3, 0)};
            node(g, "bias", ENPU_OP_ADD, 2, in2, &yy);
        } else {
            bool tb = variant != 1;
            int64_t wd[] = {tb ? ndim : kdim, tb ? kdim : ndim}, bd[] = {ndim}, sd[] = {1};
            int in[3] = {x, rand_const(g, "W", 2, wd, &r, 0.2, 0),
                         variant == 2 ? rand_const(g, "C", 1, sd, &r, 0.3, 0)
                                      : rand_const(g, "C", 1, bd, &r, 0.3, 0)};
            int k = node(g, "fc", ENPU_OP_GEMM, 3, in, &y);
            g->nodes[k].attr.gemm.trans_b = tb;
            g->nodes[k].attr.gemm.alpha = variant == 2 ? 0.5f : 1.0f;
            g->nodes[k].attr.gemm.beta = variant == 2 ? 2.0f : 1.0f;
            yy = y;
        }
        finish(g, yy);
        enpu_graph *qg;
        enpu_qreport rep;
        cmp c = run_case(g, &r, 0.5, 1.0, &o, &qg, &rep);
        assert_int_equal(qg->n_nodes, 1);
        assert_int_equal(qg->nodes[0].op, ENPU_OP_GEMM);
        assert_int_equal(qg->nodes[0].q->origin, ENPU_QO_FC);
        assert_int_equal(qg->nodes[0].q->n_w, (int64_t)kdim * ndim);
        if (c.max_diff > 1) fail_msg("fc case %d (K %d N %d): %d LSB", it, kdim, ndim, c.max_diff);
        assert_true(rep.out_sqnr_db > 25.0);
        if (c.max_diff > worst) worst = c.max_diff;
        if (rep.out_sqnr_db < min_sqnr) min_sqnr = rep.out_sqnr_db;
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    printf("fc: 24 cases, max %d LSB vs the dequantized twin, worst SQNR vs float %.1f dB\n", worst,
           min_sqnr);
    assert_int_equal(worst, 0); /* measured, deterministic */
}

/* --- pooling ------------------------------------------------------------------------- */

static void test_avgpool(void **state) {
    (void)state;
    rng r = {7};
    enpu_quant_opts o = quiet_opts();
    int worst = 0, n_host = 0;
    for (int it = 0; it < 30; it++) {
        int c = irand(&r, 1, 19), h = irand(&r, 4, 12), w = irand(&r, 4, 12);
        enpu_graph *g = enpu_graph_new("pool");
        int64_t xd[] = {1, c, h, w};
        int x = input(g, "x", 4, xd), y;
        bool global = it % 5 == 4, host = false;
        if (global) {
            node(g, "pool", ENPU_OP_GLOBAL_AVGPOOL, 1, &x, &y);
        } else {
            int k = node(g, "pool", ENPU_OP_AVGPOOL, 1, &x, &y);
            enpu_pool_attr *a = &g->nodes[k].attr.pool;
            a->w.kernel[0] = irand(&r, 1, 4);
            a->w.kernel[1] = irand(&r, 1, 4);
            a->w.stride[0] = irand(&r, 1, 3);
            a->w.stride[1] = irand(&r, 1, 3);
            bool pads = it % 3 != 0;
            for (int d = 0; d < 4; d++) a->w.pads[d] = pads ? irand(&r, 0, a->w.kernel[d % 2] - 1) : 0;
            a->count_include_pad = it % 2 == 0;
            bool any_pad = a->w.pads[0] || a->w.pads[1] || a->w.pads[2] || a->w.pads[3];
            host = !a->count_include_pad && any_pad;
        }
        finish(g, y);
        enpu_graph *qg;
        enpu_qreport rep;
        cmp cm = run_case(g, &r, 0.3, 1.0, &o, &qg, &rep);
        const enpu_node *qn = find_node(qg, "pool");
        if (host) {
            /* The divisor varies at the borders: a HOST op, said in the report. */
            if (qn->q->kind == ENPU_Q_HOST) {
                assert_non_null(rep.layers[0].note);
                assert_non_null(strstr(rep.layers[0].note, "divisor"));
            }
        } else {
            assert_int_equal(qn->q->kind, ENPU_Q_CONV);
            assert_int_equal(qn->q->origin, ENPU_QO_AVGPOOL);
        }
        if (cm.max_diff > 1) fail_msg("avgpool case %d: %d LSB", it, cm.max_diff);
        if (cm.max_diff > worst) worst = cm.max_diff;
        if (qn->q->kind == ENPU_Q_HOST) n_host++;
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    printf("avgpool: 30 cases (%d on the host: varying divisor), max %d LSB vs the twin\n",
           n_host, worst);
    assert_true(worst <= 1);
}

static void test_maxpool_exact(void **state) {
    (void)state;
    rng r = {8};
    enpu_quant_opts o = quiet_opts();
    int64_t total = 0;
    for (int it = 0; it < 30; it++) {
        int c = irand(&r, 1, 19), h = irand(&r, 5, 12), w = irand(&r, 5, 12);
        enpu_graph *g = enpu_graph_new("pool");
        int64_t xd[] = {1, c, h, w};
        int x = input(g, "x", 4, xd), y, yy;
        int k = node(g, "pool", ENPU_OP_MAXPOOL, 1, &x, &y);
        enpu_pool_attr *a = &g->nodes[k].attr.pool;
        for (int d = 0; d < 2; d++) {
            a->w.kernel[d] = irand(&r, 1, 3);
            a->w.stride[d] = irand(&r, 1, 3);
            a->w.dilation[d] = irand(&r, 1, 2);
        }
        for (int d = 0; d < 4; d++) a->w.pads[d] = irand(&r, 0, a->w.kernel[d % 2] - 1);
        a->ceil_mode = it % 2;
        yy = y;
        if (it % 3 == 0) node(g, "relu", ENPU_OP_RELU, 1, &y, &yy);
        finish(g, yy);
        enpu_graph *qg;
        enpu_qreport rep;
        cmp cm = run_case(g, &r, 0.0, 1.0, &o, &qg, &rep);
        assert_int_equal(qg->n_nodes, 1);
        assert_int_equal(qg->nodes[0].q->kind, ENPU_Q_MAXPOOL);
        assert_int_equal(cm.max_diff, 0); /* max pooling is exact */
        total += cm.n;
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    printf("maxpool: 30 cases, %lld outputs, all exact\n", (long long)total);
}

/* --- add / mul ------------------------------------------------------------------------ */

static void binary_case(enpu_op op, rng *r, int it, const enpu_quant_opts *o, int *worst) {
    int c = irand(r, 1, 19), h = irand(r, 1, 6), w = irand(r, 1, 6);
    enpu_graph *g = enpu_graph_new("bin");
    int64_t ad[] = {1, c, h, w}, bd_full[] = {1, c, h, w}, bd_ch[] = {1, c, 1, 1}, bd_w[] = {w};
    int a = input(g, "a", 4, ad), b;
    int form = it % 4;
    if (form == 0) b = input(g, "b", 4, bd_full);
    else if (form == 1) b = input(g, "b", 4, bd_ch);
    else if (form == 2) b = input(g, "b", 1, bd_w);
    else b = rand_const(g, "k", 4, bd_ch, r, 1.0, 0.5); /* constant operand */
    int in[2] = {a, b}, y, yy;
    if (it % 5 == 1 && op != ENPU_OP_SUB) {
        in[0] = b;
        in[1] = a;
    }
    node(g, "op", op, 2, in, &y);
    yy = y;
    if (it % 3 == 0) node(g, "relu", ENPU_OP_RELU, 1, &y, &yy);
    finish(g, yy);
    enpu_graph *qg;
    enpu_qreport rep;
    cmp cm = run_case(g, r, 0.2, 1.0, o, &qg, &rep);
    const enpu_node *qn = find_node(qg, "op");
    assert_int_equal(qn->q->kind, op == ENPU_OP_MUL ? ENPU_Q_MUL : ENPU_Q_ADD);
    /* a computed operand broadcast to the output is expanded first (an
     * exact copy on the host), the NPU's add/mul reading two full maps */
    const enpu_tensor *bt = &g->tensors[b], *yt = &g->tensors[y];
    bool bcast = form != 3 && (bt->rank != yt->rank ||
                               memcmp(bt->dims, yt->dims, (size_t)yt->rank * sizeof(int64_t)) != 0);
    assert_int_equal(qg->n_nodes, bcast ? 2 : 1);
    if (bcast) assert_int_equal(qg->nodes[0].op, ENPU_OP_EXPAND);
    if (cm.max_diff > 1) fail_msg("%s case %d: %d LSB", enpu_op_name(op), it, cm.max_diff);
    if (cm.max_diff > *worst) *worst = cm.max_diff;
    assert_true(rep.out_sqnr_db > 30.0);
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void test_add_mul(void **state) {
    (void)state;
    rng r = {11};
    enpu_quant_opts o = quiet_opts();
    int wa = 0, wm = 0;
    for (int it = 0; it < 24; it++) binary_case(ENPU_OP_ADD, &r, it, &o, &wa);
    for (int it = 0; it < 24; it++) binary_case(ENPU_OP_MUL, &r, it, &o, &wm);
    /* Sub of a constant is an add of its negation */
    for (int it = 0; it < 8; it++) binary_case(ENPU_OP_SUB, &r, 3 + 4 * it, &o, &wa);
    printf("add/sub: max %d LSB, mul: max %d LSB vs the dequantized twin\n", wa, wm);
    /* measured, deterministic: exact on every output of these cases */
    assert_int_equal(wa, 0);
    assert_int_equal(wm, 0);
    /* the narrow accumulator of the systolic note still fits an add */
    o.acc_bits = 26;
    binary_case(ENPU_OP_ADD, &r, 0, &o, &wa);
}

/* --- BN, Relu, moves, host ------------------------------------------------------------ */

static void test_bn_standalone(void **state) {
    (void)state;
    rng r = {12};
    enpu_quant_opts o = quiet_opts();
    for (int it = 0; it < 10; it++) {
        int c = irand(&r, 1, 21);
        enpu_graph *g = enpu_graph_new("bn");
        int64_t xd[] = {1, c, irand(&r, 1, 7), irand(&r, 1, 7)}, pd[] = {c};
        int in[5] = {input(g, "x", 4, xd), rand_const(g, "s", 1, pd, &r, 0.5, 1.0),
                     rand_const(g, "b", 1, pd, &r, 0.5, 0.0), rand_const(g, "m", 1, pd, &r, 0.3, 0.0),
                     0};
        float *var = malloc((size_t)c * sizeof(float));
        for (int k = 0; k < c; k++) var[k] = (float)(0.2 + urand(&r));
        in[4] = constant(g, "v", 1, pd, var);
        free(var);
        int y;
        node(g, "bn", ENPU_OP_BATCHNORM, 5, in, &y);
        finish(g, y);
        enpu_graph *qg;
        enpu_qreport rep;
        cmp cm = run_case(g, &r, 0.5, 1.0, &o, &qg, &rep);
        assert_int_equal(qg->nodes[0].q->origin, ENPU_QO_BN);
        assert_int_equal(qg->nodes[0].q->n_w, c);
        if (cm.max_diff > 1) fail_msg("bn case %d: %d LSB", it, cm.max_diff);
        printf("bn case %d: %d channels, max %d LSB vs the twin, SQNR vs float %.1f dB\n", it, c,
               cm.max_diff, rep.out_sqnr_db);
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
}

static void test_relu_standalone_and_bn_fold(void **state) {
    (void)state;
    rng r = {13};
    enpu_quant_opts o = quiet_opts();
    /* Relu on a graph input: nothing to fold into -> depthwise 1x1 weight 1 */
    enpu_graph *g = enpu_graph_new("relu");
    int64_t xd[] = {1, 5, 4, 3};
    int x = input(g, "x", 4, xd), y;
    node(g, "relu", ENPU_OP_RELU, 1, &x, &y);
    finish(g, y);
    enpu_graph *qg;
    enpu_qreport rep;
    cmp cm = run_case(g, &r, 0.0, 1.0, &o, &qg, &rep);
    assert_int_equal(qg->nodes[0].q->origin, ENPU_QO_RELU);
    assert_true(cm.max_diff <= 1);
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    /* Conv -> BN -> Clip(0, 1): one node, BN folded, clamp folded */
    g = enpu_graph_new("cbr");
    int64_t wd[] = {6, 5, 3, 3}, pd[] = {6};
    x = input(g, "x", 4, xd);
    int in[3] = {x, rand_const(g, "w", 4, wd, &r, 0.2, 0)}, c1, c2, c3;
    int k = node(g, "conv", ENPU_OP_CONV, 2, in, &c1);
    g->nodes[k].attr.conv.w.pads[0] = g->nodes[k].attr.conv.w.pads[1] = 1;
    g->nodes[k].attr.conv.w.pads[2] = g->nodes[k].attr.conv.w.pads[3] = 1;
    float ones[6] = {1, 1, 1, 1, 1, 1};
    int bn_in[5] = {c1, rand_const(g, "s", 1, pd, &r, 0.3, 1), rand_const(g, "b", 1, pd, &r, 0.3, 0),
                    rand_const(g, "m", 1, pd, &r, 0.3, 0), constant(g, "v", 1, pd, ones)};
    node(g, "bn", ENPU_OP_BATCHNORM, 5, bn_in, &c2);
    k = node(g, "clip", ENPU_OP_CLIP, 1, &c2, &c3);
    g->nodes[k].attr.act.min = 0.0f;
    g->nodes[k].attr.act.max = 1.0f;
    finish(g, c3);
    cm = run_case(g, &r, 0.0, 1.0, &o, &qg, &rep);
    assert_int_equal(qg->n_nodes, 1);
    assert_string_equal(qg->nodes[0].q->fused, "conv+bn+clip");
    assert_true(cm.max_diff <= 1);
    assert_true(rep.out_sqnr_db > 30.0);
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void test_moves_and_concat(void **state) {
    (void)state;
    rng r = {14};
    enpu_quant_opts o = quiet_opts();
    /* conv_a -> Transpose ; conv_b -> Reshape ; Concat(a', b', input) -> Pad -> Flatten */
    enpu_graph *g = enpu_graph_new("moves");
    int64_t xd[] = {1, 3, 4, 4}, wd[] = {3, 3, 1, 1};
    int x = input(g, "x", 4, xd);
    int ia[2] = {x, rand_const(g, "wa", 4, wd, &r, 1.0, 0)}, ib[2] = {x, rand_const(g, "wb", 4, wd, &r, 0.1, 0)};
    int a, b, at, cc, pd, fl;
    node(g, "conv_a", ENPU_OP_CONV, 2, ia, &a);
    node(g, "conv_b", ENPU_OP_CONV, 2, ib, &b);
    int k = node(g, "tr", ENPU_OP_TRANSPOSE, 1, &a, &at);
    g->nodes[k].attr.shape.n_axes = 4;
    int perm[] = {0, 1, 3, 2};
    memcpy(g->nodes[k].attr.shape.axes, perm, sizeof perm);
    int cin[3] = {at, b, x};
    k = node(g, "cat", ENPU_OP_CONCAT, 3, cin, &cc);
    g->nodes[k].attr.shape.axis = 1;
    k = node(g, "pad", ENPU_OP_PAD, 1, &cc, &pd);
    g->nodes[k].attr.pad.n_pads = 8;
    int64_t pads[8] = {0, 0, 1, 0, 0, 0, 0, 2};
    memcpy(g->nodes[k].attr.pad.pads, pads, sizeof pads);
    k = node(g, "flat", ENPU_OP_FLATTEN, 1, &pd, &fl);
    g->nodes[k].attr.shape.axis = 1;
    finish(g, fl);
    enpu_graph *qg;
    enpu_qreport rep;
    cmp cm = run_case(g, &r, 0.0, 1.0, &o, &qg, &rep);
    /* conv_a/conv_b requantize straight to the Concat's parameters (forced);
     * the graph input cannot, so a RESCALE node is inserted for it. */
    const enpu_tensor *cat_out = &qg->tensors[find_node(qg, "cat")->out[0]];
    const enpu_tensor *a_out = &qg->tensors[find_node(qg, "conv_a")->out[0]];
    assert_true(a_out->quant->scale[0] == cat_out->quant->scale[0]);
    const enpu_node *rs = find_node(qg, "cat/rescale_2");
    assert_int_equal(rs->q->origin, ENPU_QO_RESCALE);
    assert_int_equal(rs->op, ENPU_OP_IDENTITY);
    assert_true(cm.max_diff <= 1);
    /* moves alone are exact */
    for (int i = 0; i < qg->n_nodes; i++)
        if (qg->nodes[i].q->kind == ENPU_Q_MOVE)
            assert_true(qg->tensors[qg->nodes[i].out[0]].quant->scale[0] ==
                        qg->tensors[qg->nodes[i].in[0]].quant->scale[0]);
    printf("moves/concat: %d nodes, max %d LSB (%lld of %lld off by one, from the convs and "
           "the rescale)\n",
           qg->n_nodes, cm.max_diff, (long long)cm.n_diff, (long long)cm.n);
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void test_host_softmax(void **state) {
    (void)state;
    rng r = {15};
    enpu_quant_opts o = quiet_opts();
    enpu_graph *g = enpu_graph_new("host");
    int64_t xd[] = {1, 10}, wd[] = {7, 10}, bd[] = {7};
    int x = input(g, "x", 2, xd);
    int in[3] = {x, rand_const(g, "W", 2, wd, &r, 0.3, 0), rand_const(g, "C", 1, bd, &r, 0.1, 0)};
    int y, s, s2;
    int k = node(g, "fc", ENPU_OP_GEMM, 3, in, &y);
    g->nodes[k].attr.gemm.trans_b = true;
    k = node(g, "sm", ENPU_OP_SOFTMAX, 1, &y, &s);
    g->nodes[k].attr.shape.axis = 1;
    /* a host op in the middle: its output feeds an NPU node, so it is int8 */
    int din[2] = {y, rand_const(g, "d", 1, bd, &r, 0.2, 1.0)}, dv;
    node(g, "div", ENPU_OP_SUB, 2, din, &dv); /* Sub(x, const) becomes an NPU add */
    int m2[2] = {dv, s};
    node(g, "mul", ENPU_OP_MUL, 2, m2, &s2);
    int sm2;
    k = node(g, "sm2", ENPU_OP_SOFTMAX, 1, &s2, &sm2);
    g->nodes[k].attr.shape.axis = 1;
    finish(g, sm2);
    enpu_graph *qg;
    enpu_qreport rep;
    cmp cm = run_case(g, &r, 0.0, 1.0, &o, &qg, &rep);
    const enpu_node *h1 = find_node(qg, "sm"), *h2 = find_node(qg, "sm2");
    assert_int_equal(h1->q->kind, ENPU_Q_HOST);
    assert_true(h1->host);
    assert_int_equal(qg->tensors[h1->out[0]].dtype, ENPU_DT_INT8);  /* read by the mul */
    assert_int_equal(qg->tensors[h2->out[0]].dtype, ENPU_DT_FLOAT32); /* final: left float */
    assert_int_equal(find_node(qg, "div")->q->kind, ENPU_Q_ADD);
    assert_int_equal(rep.n_host, 2);
    assert_true(cm.max_diff <= 1);
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

/* --- table activations ------------------------------------------------------------------ */

typedef struct act_case {
    const char *name;
    enpu_op op;
    float alpha, beta;
} act_case;

/* segs: the table segments (architecture parameter).  The golden is held to
 * 2 LSB against the float twin and to the table's own exhaustive error + 1
 * (the float twin rounds at slightly different points than the double
 * targets).  Without the quantizer's table-aware input ranges (saturation
 * clipping of Sigmoid/Tanh inputs, LeakyRelu's kink on a segment boundary)
 * the 16-segment tanh of variant 2 would be 7 LSB and LeakyRelu 3 LSB. */
static void tables_case(int segs, int *worst_fit, int *worst_twin) {
    rng r = {16};
    enpu_quant_opts o = quiet_opts();
    o.act_segments = segs;
    const act_case cases[] = {{"sigmoid", ENPU_OP_SIGMOID, 0, 0},
                              {"tanh", ENPU_OP_TANH, 0, 0},
                              {"hardsigmoid", ENPU_OP_HARD_SIGMOID, 0.2f, 0.5f},
                              {"hardsigmoid_b", ENPU_OP_HARD_SIGMOID, 0.3f, 0.4f},
                              {"hardswish", ENPU_OP_HARD_SWISH, 0, 0},
                              {"leakyrelu", ENPU_OP_LEAKY_RELU, 0.1f, 0},
                              {"prelu", ENPU_OP_PRELU, 0.25f, 0},
                              {"silu", ENPU_OP_MUL, 0, 0}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const act_case *ac = &cases[ci];
        for (int var = 0; var < 3; var++) {
            enpu_graph *g = enpu_graph_new("act");
            int64_t xd[] = {1, 3, 5, 7}, sd[] = {1};
            int x = input(g, "x", 4, xd), y, k;
            if (ac->op == ENPU_OP_MUL) { /* x * Sigmoid(x) */
                int s;
                node(g, "sig", ENPU_OP_SIGMOID, 1, &x, &s);
                int in[2] = {x, s};
                k = node(g, "act", ENPU_OP_MUL, 2, in, &y);
            } else if (ac->op == ENPU_OP_PRELU) {
                int in[2] = {x, constant(g, "slope", 1, sd, &ac->alpha)};
                k = node(g, "act", ENPU_OP_PRELU, 2, in, &y);
            } else {
                k = node(g, "act", ac->op, 1, &x, &y);
                g->nodes[k].attr.act.alpha = ac->alpha;
                g->nodes[k].attr.act.beta = ac->beta;
            }
            finish(g, y);
            enpu_graph *qg;
            enpu_qreport rep;
            double mean = var == 0 ? 0.0 : (var == 1 ? -1.0 : 1.5), sd_ = 1.0 + var;
            cmp cm = run_case(g, &r, mean, sd_, &o, &qg, &rep);
            assert_int_equal(qg->n_nodes, 1);
            const enpu_node *qn = &qg->nodes[0];
            assert_int_equal(qn->q->kind, ENPU_Q_TABLE);
            const enpu_pwl_table *t = qn->q->table;
            assert_true(rep.layers[0].table_err_lsb == t->max_err_lsb);
            /* Exhaustive: all 256 int8 inputs against the exactly quantized
             * function, in double (the table's own yardstick). */
            const enpu_tensor *xt = &qg->tensors[qn->in[0]], *yt = &qg->tensors[qn->out[0]];
            enpu_pwl_params par;
            const void *ctx = NULL;
            enpu_pwl_fn fn = NULL;
            switch (qn->op) {
            case ENPU_OP_SIGMOID: fn = enpu_pwl_sigmoid; break;
            case ENPU_OP_TANH: fn = enpu_pwl_tanh; break;
            case ENPU_OP_HARD_SWISH: fn = enpu_pwl_hard_swish; break;
            case ENPU_OP_SILU: fn = enpu_pwl_silu; break;
            case ENPU_OP_HARD_SIGMOID:
                par.alpha = qn->attr.act.alpha, par.beta = qn->attr.act.beta, ctx = &par;
                fn = enpu_pwl_hard_sigmoid;
                break;
            case ENPU_OP_LEAKY_RELU:
                par.alpha = qn->attr.act.alpha, par.beta = 0, ctx = &par;
                fn = enpu_pwl_leaky_relu;
                break;
            default: fail_msg("unexpected op %s", enpu_op_name(qn->op));
            }
            int32_t tq[256];
            enpu_err err = {0};
            assert_int_equal(enpu_pwl_targets(fn, ctx, xt->quant->scale[0], xt->quant->zero_point[0],
                                              yt->quant->scale[0], yt->quant->zero_point[0], tq,
                                              &err),
                             0);
            int worst = 0;
            enpu_gexec *gx;
            assert_int_equal(enpu_gexec_new(qg, &gx, &err), 0);
            int8_t all[105];
            for (int base = -128; base < 128; base += 105) {
                for (int i = 0; i < 105; i++) all[i] = (int8_t)(base + i > 127 ? 127 : base + i);
                const int8_t *ins[1] = {all};
                assert_int_equal(enpu_gexec_run_i8(gx, ins, &err), 0);
                const int8_t *out = enpu_gexec_value_i8(gx, qn->out[0]);
                for (int i = 0; i < 105; i++) {
                    int d = abs(out[i] - tq[all[i] + 128]);
                    if (d > worst) worst = d;
                }
            }
            enpu_gexec_free(gx);
            assert_int_equal(worst, (int)t->max_err_lsb); /* exact figure */
            if (cm.max_diff > (int)t->max_err_lsb + 1 || cm.max_diff > 2)
                fail_msg("%s variant %d, %d segments: %d LSB (table %g)", ac->name, var, segs,
                         cm.max_diff, t->max_err_lsb);
            if (t->max_err_lsb > *worst_fit) *worst_fit = (int)t->max_err_lsb;
            if (cm.max_diff > *worst_twin) *worst_twin = cm.max_diff;
            printf("%2d segments: ", segs);
            printf("table %-13s (%s): fitted error %g LSB (%d of 256 inputs off), "
                       "vs twin on random data max %d LSB\n",
                       ac->name, enpu_op_name(qn->op), t->max_err_lsb, t->n_err, cm.max_diff);
            enpu_qreport_free(&rep);
            enpu_graph_free(qg);
            enpu_graph_free(g);
        }
    }
}

static void test_tables(void **state) {
    (void)state;
    int fit16 = 0, twin16 = 0, fit64 = 0, twin64 = 0;
    tables_case(16, &fit16, &twin16);
    tables_case(64, &fit64, &twin64);
    printf("tables: 16 segments worst fit %d LSB (golden vs twin %d); 64 segments %d (%d)\n",
           fit16, twin16, fit64, twin64);
    assert_true(fit16 <= 2 && twin16 <= 2);
    assert_true(fit64 <= 1 && twin64 <= 1);
}

/* The ONNX math ops as tables (docs/numerics.md §11): each quantizes to one
 * TABLE node whose golden output equals, on all 256 int8 inputs, the exactly
 * quantized function within the table's fitted error, asserted per function
 * at 16 segments (the default). */
static void test_math_tables(void **state) {
    (void)state;
    static const struct {
        const char *name; /* enpu_pwl_builtin's */
        enpu_op op;
        float param;      /* Pow's exponent, Gelu's approximate */
        double mean, sd;  /* the calibration data */
        int err_lsb, n_err;
    } cases[] = {
        {"Sqrt", ENPU_OP_SQRT, 0, 2.0, 0.7, 4, 28},
        {"Exp", ENPU_OP_EXP, 0, 0.0, 1.0, 2, 37},
        {"Log", ENPU_OP_LOG, 0, 2.0, 0.5, 3, 25},
        {"Erf", ENPU_OP_ERF, 0, 0.0, 1.0, 1, 39},
        {"Neg", ENPU_OP_NEG, 0, 0.0, 1.0, 0, 0},
        {"Abs", ENPU_OP_ABS, 0, 0.0, 1.0, 0, 0},
        {"Reciprocal", ENPU_OP_RECIPROCAL, 0, 3.0, 0.5, 1, 8},
        {"Gelu", ENPU_OP_GELU, 0, 0.0, 1.5, 1, 14},
        {"GeluTanh", ENPU_OP_GELU, 1, 0.0, 1.5, 1, 16},
        {"Pow", ENPU_OP_POW, 2.0f, 0.0, 1.0, 1, 32},
        {"Pow", ENPU_OP_POW, 0.5f, 2.0, 0.5, 6, 101},
    };
    rng r = {31};
    enpu_quant_opts o = quiet_opts();
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        enpu_graph *g = enpu_graph_new("math");
        int64_t xd[] = {1, 3, 5, 7}, sd[] = {1};
        int x = input(g, "x", 4, xd), y, k;
        if (cases[ci].op == ENPU_OP_POW) {
            int in[2] = {x, constant(g, "e", 1, sd, &cases[ci].param)};
            k = node(g, "f", ENPU_OP_POW, 2, in, &y);
        } else {
            k = node(g, "f", cases[ci].op, 1, &x, &y);
            g->nodes[k].attr.misc.approximate = (int)cases[ci].param;
        }
        finish(g, y);
        enpu_graph *qg;
        enpu_qreport rep;
        cmp cm = run_case(g, &r, cases[ci].mean, cases[ci].sd, &o, &qg, &rep);
        assert_int_equal(qg->n_nodes, 1);
        const enpu_node *qn = &qg->nodes[0];
        assert_int_equal(qn->q->kind, ENPU_Q_TABLE);
        const enpu_pwl_table *t = qn->q->table;
        enpu_pwl_params par = {.alpha = cases[ci].param};
        enpu_pwl_fn fn = enpu_pwl_builtin(cases[ci].name);
        assert_non_null(fn);
        const enpu_tensor *xt = &qg->tensors[qn->in[0]], *yt = &qg->tensors[qn->out[0]];
        int32_t tq[256];
        enpu_err err = {0};
        assert_int_equal(enpu_pwl_targets(fn, &par, xt->quant->scale[0], xt->quant->zero_point[0],
                                          yt->quant->scale[0], yt->quant->zero_point[0], tq, &err),
                         0);
        enpu_gexec *gx;
        assert_int_equal(enpu_gexec_new(qg, &gx, &err), 0);
        int8_t all[105]; /* the input's 1x3x5x7 elements: 256 codes in three runs */
        int worst = 0, off = 0;
        for (int base = -128; base < 128; base += 105) {
            for (int i = 0; i < 105; i++) all[i] = (int8_t)(base + i > 127 ? 127 : base + i);
            const int8_t *ins[1] = {all};
            assert_int_equal(enpu_gexec_run_i8(gx, ins, &err), 0);
            const int8_t *out = enpu_gexec_value_i8(gx, qn->out[0]);
            for (int i = 0; i < 105 && base + i < 128; i++) {
                int d = abs(out[i] - tq[all[i] + 128]);
                if (d > worst) worst = d;
                off += d != 0;
            }
        }
        enpu_gexec_free(gx);
        printf("table %-10s (%s %g): fitted error %d LSB (%d of 256 inputs off), vs the float op on "
               "random data %d LSB\n",
               cases[ci].name, enpu_op_name(qn->op), (double)cases[ci].param, worst, off, cm.max_diff);
        assert_int_equal(worst, (int)t->max_err_lsb);
        assert_int_equal(worst, cases[ci].err_lsb);
        assert_int_equal(off, cases[ci].n_err);
        assert_true(cm.max_diff <= worst);
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    /* Floor and Ceil are staircases (9 and 10 LSB off as 16-segment tables
     * on N(0, 2) data): the host computes them, exactly */
    for (int f = 0; f < 2; f++) {
        enpu_graph *g = enpu_graph_new("stairs");
        int64_t xd[] = {1, 3, 5, 7};
        int x = input(g, "x", 4, xd), y;
        node(g, "f", f ? ENPU_OP_CEIL : ENPU_OP_FLOOR, 1, &x, &y);
        finish(g, y);
        enpu_graph *qg;
        cmp cm = run_case(g, &r, 0.0, 2.0, &o, &qg, NULL);
        assert_int_equal(qg->nodes[0].q->kind, ENPU_Q_HOST);
        assert_int_equal(cm.max_diff, 0);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
}

/* --- accumulator proofs, bias saturation, calibration options --------------------------- */

static void test_acc_check_fails(void **state) {
    (void)state;
    rng r = {17};
    enpu_graph *g = enpu_graph_new("big");
    int64_t xd[] = {1, 64, 5, 5}, wd[] = {4, 64, 5, 5};
    int in[2] = {input(g, "x", 4, xd), rand_const(g, "w", 4, wd, &r, 1.0, 0)}, y;
    node(g, "wide_conv", ENPU_OP_CONV, 2, in, &y);
    finish(g, y);
    enpu_buf *cal = samples(g, 2, &r, 0, 1);
    enpu_quant_opts o = quiet_opts();
    o.acc_bits = 20; /* 1600 terms of 127*128 need 25 bits */
    enpu_graph *qg = NULL;
    enpu_err err = {0};
    assert_int_equal(enpu_quantize_graph(g, cal, 2, &o, &qg, NULL, &err), ENPU_E_NOFIT);
    assert_null(qg);
    assert_non_null(strstr(err.msg, "wide_conv"));
    assert_non_null(strstr(err.msg, "20-bit"));
    enpu_err_clear(&err);
    o.acc_bits = 26;
    assert_int_equal(enpu_quantize_graph(g, cal, 2, &o, &qg, NULL, &err), 0);
    enpu_graph_free(qg);
    enpu_calib_free(cal, 2);
    enpu_graph_free(g);
}

static void test_bias_saturation(void **state) {
    (void)state;
    rng r = {18};
    enpu_graph *g = enpu_graph_new("bias");
    int64_t xd[] = {1, 4, 4, 4}, wd[] = {3, 4, 1, 1}, bd[] = {3};
    float bias[3] = {0.1f, 4.0e4f, -0.2f}; /* channel 1: bias far beyond the accumulator */
    int in[3] = {input(g, "x", 4, xd), rand_const(g, "w", 4, wd, &r, 1e-4, 0),
                 constant(g, "b", 1, bd, bias)},
        y;
    node(g, "conv", ENPU_OP_CONV, 3, in, &y);
    finish(g, y);
    enpu_quant_opts o = quiet_opts();
    o.acc_bits = 24;
    enpu_graph *qg;
    enpu_qreport rep;
    cmp cm = run_case(g, &r, 0, 1, &o, &qg, &rep);
    assert_non_null(rep.layers[0].note);
    assert_non_null(strstr(rep.layers[0].note, "raised"));
    assert_true(cm.max_diff <= 1);
    assert_true(rep.layers[0].acc_hi < (1 << 23) && rep.layers[0].acc_lo >= -(1 << 23));
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void test_fallback_and_percentile(void **state) {
    (void)state;
    rng r = {19};
    enpu_graph *g = enpu_graph_new("cal");
    int64_t xd[] = {1, 2000};
    int x = input(g, "x", 2, xd), y;
    node(g, "relu", ENPU_OP_RELU, 1, &x, &y);
    finish(g, y);
    enpu_quant_opts o = quiet_opts();
    enpu_graph *qg;
    enpu_qreport rep;
    enpu_err err = {0};
    assert_int_equal(enpu_quantize_graph(g, NULL, 0, &o, &qg, &rep, &err), 0);
    assert_true(rep.calib_fallback);
    assert_int_equal(rep.n_calib, ENPU_CALIB_FALLBACK_SAMPLES);
    assert_true(rep.n_notes >= 1 && strstr(rep.notes[0], "synthetic"));
    float s_minmax = qg->tensors[qg->inputs[0]].quant->scale[0];
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    o.method = ENPU_CALIB_PERCENTILE;
    o.percentile = 99.0;
    assert_int_equal(enpu_quantize_graph(g, NULL, 0, &o, &qg, &rep, &err), 0);
    float s_pct = qg->tensors[qg->inputs[0]].quant->scale[0];
    /* N(0,1): min/max of 16000 values is ~+-4, the 1%/99% points ~+-2.3 */
    printf("input scale: min/max %.5f, 99th percentile %.5f\n", (double)s_minmax, (double)s_pct);
    assert_true(s_pct < 0.75f * s_minmax && s_pct > 0.4f * s_minmax);
    enpu_qreport_free(&rep);
    enpu_graph_free(qg);
    (void)r;
    enpu_graph_free(g);
}

static void test_calib_load(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("cl");
    int64_t xd[] = {1, 1, 2, 3};
    int x = input(g, "x", 4, xd), y;
    node(g, "relu", ENPU_OP_RELU, 1, &x, &y);
    finish(g, y);
    char dir[] = "/tmp/enpu_calib_XXXXXX";
    assert_non_null(mkdtemp(dir));
    enpu_err err = {0};
    enpu_buf b = {0};
    int64_t d2[] = {2, 3}, bad[] = {3, 2};
    char path[256];
    /* b_*.npy: shape 2x3 (leading 1s dropped: accepted); a file in between */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT32, 2, d2, &err), 0);
        ((float *)b.data)[0] = (float)i;
        snprintf(path, sizeof path, "%s/b_%d.npy", dir, 2 - i);
        assert_int_equal(enpu_tensor_write(path, &b, &err), 0);
        enpu_buf_free(&b);
    }
    snprintf(path, sizeof path, "%s/readme.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("not a tensor\n", f);
    fclose(f);
    enpu_buf *cal;
    int n;
    assert_int_equal(enpu_calib_load(g, dir, &cal, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(cal[0].rank, 4);                 /* reshaped to the graph input */
    assert_true(((float *)cal[0].data)[0] == 2.0f);   /* sorted by name: b_0 first */
    enpu_calib_free(cal, n);
    /* a file of the wrong shape: the error names it */
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT32, 2, bad, &err), 0);
    snprintf(path, sizeof path, "%s/c_bad.npy", dir);
    assert_int_equal(enpu_tensor_write(path, &b, &err), 0);
    enpu_buf_free(&b);
    assert_int_equal(enpu_calib_load(g, dir, &cal, &n, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "c_bad.npy"));
    assert_non_null(strstr(err.msg, "'x'"));
    enpu_err_clear(&err);
    assert_int_equal(enpu_calib_load(g, "/nonexistent/dir", &cal, &n, &err), ENPU_E_IO);
    enpu_err_clear(&err);
    /* comma-separated files */
    char list[600];
    snprintf(list, sizeof list, "%s/b_1.npy,%s/b_0.npy", dir, dir);
    assert_int_equal(enpu_calib_load(g, list, &cal, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_true(((float *)cal[0].data)[0] == 1.0f);
    enpu_calib_free(cal, n);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    enpu_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_random),
        cmocka_unit_test(test_fc_random),
        cmocka_unit_test(test_avgpool),
        cmocka_unit_test(test_maxpool_exact),
        cmocka_unit_test(test_add_mul),
        cmocka_unit_test(test_bn_standalone),
        cmocka_unit_test(test_relu_standalone_and_bn_fold),
        cmocka_unit_test(test_moves_and_concat),
        cmocka_unit_test(test_host_softmax),
        cmocka_unit_test(test_tables), cmocka_unit_test(test_math_tables),
        cmocka_unit_test(test_acc_check_fails),
        cmocka_unit_test(test_bias_saturation),
        cmocka_unit_test(test_fallback_and_percentile),
        cmocka_unit_test(test_calib_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
