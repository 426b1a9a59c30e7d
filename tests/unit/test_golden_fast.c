/* The golden reference's fast kernels against its reference loops, element
 * by element on every tensor (enpu_gexec_compare_kernels), for every op the
 * golden executes: random (seeded) float graphs of one op each — Conv
 * (dense, grouped, depthwise, 1-D, strides, dilations, pads), Gemm,
 * AveragePool, GlobalAveragePool, MaxPool (ceil mode, dilations),
 * BatchNormalization, Relu/Clip, Add/Sub/Mul (with and without
 * broadcasting), every table activation, moves, Concat with a rescale, a
 * host Softmax — quantized on random calibration inputs; in half of the cases
 * the requantization parameters are then replaced by random ones over their
 * whole legal range (M up to 2^31 - 1, S 0..63, any clamp), so the kernels
 * meet ties, saturation and every shift.  Inputs include values far outside
 * the calibration range so int8 inputs reach -128 and 127.  Every
 * set of fast kernels this CPU runs is compared: the portable C, AVX2 and
 * AVX-512 VNNI (those the CPU lacks are skipped, and said so). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/quant.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

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

static int rand_const(enpu_graph *g, const char *name, int rank, const int64_t *dims, rng *r,
                      double sd, double mean) {
    int t = tensor(g, name, rank, dims);
    int64_t n = enpu_tensor_numel(&g->tensors[t]);
    float *v = malloc((size_t)n * sizeof(float) + 1);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(mean + sd * nrand(r));
    enpu_tensor_set_data(&g->tensors[t], v);
    return t;
}

static int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in, int *out) {
    enpu_err err = {0};
    char o[128];
    snprintf(o, sizeof o, "%s_out", name);
    *out = tensor(g, o, -1, NULL);
    int k = enpu_graph_add_node(g, name, op, n_in, in, 1, out, &err);
    if (k < 0) fail_msg("%s", err.msg);
    return k;
}

/* What the cases covered, counted on the quantized graphs. */
typedef struct coverage {
    int conv, dwconv, gconv, conv1d, fc, avgpool, bn, relu, rescale, maxpool, add, mul, table,
        move, host, mutated;
    long long elements;
    int compared[ENPU_GK_COUNT]; /* comparisons run per kernel set */
} coverage;

static void count(const enpu_graph *qg, coverage *cv) {
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        const enpu_qnode *q = n->q;
        switch (q->kind) {
        case ENPU_Q_CONV:
            switch (q->origin) {
            case ENPU_QO_CONV: {
                int rank = qg->tensors[n->in[0]].rank;
                int64_t ci = qg->tensors[n->in[0]].dims[1];
                if (rank == 3) cv->conv1d++;
                if (n->attr.conv.group == 1) cv->conv++;
                else if (n->attr.conv.group == ci) cv->dwconv++;
                else cv->gconv++;
                break;
            }
            case ENPU_QO_FC: cv->fc++; break;
            case ENPU_QO_AVGPOOL: cv->avgpool++; break;
            case ENPU_QO_BN: cv->bn++; break;
            case ENPU_QO_RELU: cv->relu++; break;
            case ENPU_QO_RESCALE: cv->rescale++; break;
            }
            break;
        case ENPU_Q_MAXPOOL: cv->maxpool++; break;
        case ENPU_Q_ADD: cv->add++; break;
        case ENPU_Q_MUL: cv->mul++; break;
        case ENPU_Q_TABLE: cv->table++; break;
        case ENPU_Q_MOVE: cv->move++; break;
        case ENPU_Q_HOST: cv->host++; break;
        }
        for (int o = 0; o < n->n_out; o++) cv->elements += enpu_tensor_numel(&qg->tensors[n->out[o]]);
    }
}

/* Random requantization over the whole legal range: M in [1, 2^31 - 1]
 * (log-uniform), S in 0..63, any clamp lo <= hi. */
static void mutate(enpu_graph *qg, rng *r) {
    for (int i = 0; i < qg->n_nodes; i++) {
        enpu_qnode *q = qg->nodes[i].q;
        if (q->kind != ENPU_Q_CONV && q->kind != ENPU_Q_ADD && q->kind != ENPU_Q_MUL &&
            q->kind != ENPU_Q_MAXPOOL)
            continue;
        for (int c = 0; c < q->n_ch; c++) {
            if (q->kind != ENPU_Q_ADD) {
                uint64_t m = (uint64_t)1 << irand(r, 0, 30);
                q->M[c] = (uint32_t)(m + next(r) % m);
                if (q->M[c] > INT32_MAX) q->M[c] = INT32_MAX;
            }
            q->S[c] = (int8_t)irand(r, 0, 63);
        }
        int a = irand(r, -128, 127), b = irand(r, -128, 127);
        q->lo = a < b ? a : b;
        q->hi = a < b ? b : a;
    }
}

/* Inputs: N(mean, sd) per element, and a set 8x wider (saturating). */
static enpu_buf *samples(const enpu_graph *g, int n, rng *r, double sd) {
    enpu_err err = {0};
    enpu_buf *b = calloc((size_t)n * g->n_inputs, sizeof *b);
    assert_non_null(b);
    for (int i = 0; i < n * g->n_inputs; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i % g->n_inputs]];
        assert_int_equal(enpu_buf_alloc(&b[i], ENPU_DT_FLOAT32, t->rank, t->dims, &err), 0);
        float *v = b[i].data;
        for (int64_t k = 0; k < enpu_buf_numel(&b[i]); k++) v[k] = (float)(0.1 + sd * nrand(r));
    }
    return b;
}

/* Quantizes g (output y), maybe mutates, compares the kernels; frees g. */
static void check(enpu_graph *g, int y, rng *r, const char *what, int it, coverage *cv) {
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) ||
        enpu_graph_validate(g, &err))
        fail_msg("%s case %d: %s", what, it, err.msg);
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    o.quiet = true;
    enpu_buf *cal = samples(g, 4, r, 1.0);
    enpu_graph *qg = NULL;
    if (enpu_quantize_graph(g, cal, 4, &o, &qg, NULL, &err))
        fail_msg("%s case %d: quantize: %s", what, it, err.msg);
    if (it % 2) {
        mutate(qg, r);
        cv->mutated++;
        if (enpu_qgraph_check(qg, &err)) fail_msg("%s case %d: mutated: %s", what, it, err.msg);
    }
    count(qg, cv);
    for (int s = 0; s < 3; s++) {
        enpu_buf *in = samples(g, 1, r, s == 2 ? 8.0 : 1.0);
        for (int k = 0; k < ENPU_GK_COUNT; k++) {
            if (k == ENPU_GK_REFERENCE) continue;
            int rc = enpu_gexec_compare_kernels(qg, in, ENPU_GK_REFERENCE, (enpu_gexec_kernels)k, &err);
            if (rc == ENPU_E_UNSUPPORTED) continue; /* an instruction set this CPU lacks */
            if (rc) fail_msg("%s case %d, input %d: %s", what, it, s, err.msg);
            cv->compared[k]++;
        }
        for (int i = 0; i < g->n_inputs; i++) enpu_buf_free(&in[i]);
        free(in);
    }
    for (int i = 0; i < 4 * g->n_inputs; i++) enpu_buf_free(&cal[i]);
    free(cal);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

/* An optional Relu or Clip after y (folded into the producer's clamp). */
static int maybe_act(enpu_graph *g, rng *r, int y) {
    int a = irand(r, 0, 2), out = y;
    if (!a) return y;
    int k = node(g, "act", a == 1 ? ENPU_OP_RELU : ENPU_OP_CLIP, 1, &y, &out);
    g->nodes[k].attr.act.min = 0.0f;
    g->nodes[k].attr.act.max = 6.0f;
    return out;
}

static void conv_case(rng *r, int it, coverage *cv) {
    bool one_d = it % 6 == 5;
    int ci = irand(r, 1, 40), co = irand(r, 1, 40), group = 1, kind = irand(r, 0, 3);
    if (kind == 1) {
        group = ci;
        co = ci * irand(r, 1, 3);
    } else if (kind == 2) {
        group = irand(r, 2, 4);
        ci = group * irand(r, 1, 6);
        co = group * irand(r, 1, 7);
    }
    int kh = one_d ? 1 : irand(r, 1, 5), kw = irand(r, 1, 5);
    int h = one_d ? 1 : irand(r, kh, 20), w = irand(r, kw, 24);
    enpu_graph *g = enpu_graph_new("conv");
    int64_t xd[] = {irand(r, 1, 2), ci, h, w}, xd3[] = {xd[0], ci, w};
    int x = input(g, "x", one_d ? 3 : 4, one_d ? xd3 : xd);
    int64_t wd[] = {co, ci / group, kh, kw}, wd3[] = {co, ci / group, kw}, bd[] = {co};
    int in[3] = {x, rand_const(g, "w", one_d ? 3 : 4, one_d ? wd3 : wd, r, 0.3, 0.0),
                 rand_const(g, "b", 1, bd, r, 0.5, 0.0)};
    int y, k = node(g, "conv", ENPU_OP_CONV, irand(r, 0, 3) ? 3 : 2, in, &y);
    enpu_conv_attr *a = &g->nodes[k].attr.conv;
    a->group = group;
    for (int d = 0; d < 2; d++) {
        a->w.stride[d] = irand(r, 1, 3);
        a->w.dilation[d] = irand(r, 1, 2);
    }
    for (int d = 0; d < 4; d++) a->w.pads[d] = irand(r, 0, 2);
    if (one_d) a->w.pads[0] = a->w.pads[2] = 0, a->w.stride[0] = a->w.dilation[0] = 1;
    if ((kh - 1) * a->w.dilation[0] + 1 > h + a->w.pads[0] + a->w.pads[2]) a->w.dilation[0] = 1;
    if ((kw - 1) * a->w.dilation[1] + 1 > w + a->w.pads[1] + a->w.pads[3]) a->w.dilation[1] = 1;
    check(g, maybe_act(g, r, y), r, "conv", it, cv);
}

static void gemm_case(rng *r, int it, coverage *cv) {
    int m = irand(r, 1, 4), k = irand(r, 1, 400), n = irand(r, 1, 50);
    bool tb = irand(r, 0, 1);
    enpu_graph *g = enpu_graph_new("fc");
    int64_t xd[] = {m, k}, wd[] = {tb ? n : k, tb ? k : n}, bd[] = {n};
    int in[3] = {input(g, "x", 2, xd), rand_const(g, "W", 2, wd, r, 0.2, 0.0),
                 rand_const(g, "C", 1, bd, r, 0.3, 0.0)};
    int y, kk = node(g, "fc", ENPU_OP_GEMM, 3, in, &y);
    g->nodes[kk].attr.gemm.trans_b = tb;
    g->nodes[kk].attr.gemm.alpha = g->nodes[kk].attr.gemm.beta = 1.0f;
    check(g, maybe_act(g, r, y), r, "gemm", it, cv);
}

static void pool_case(rng *r, int it, coverage *cv, enpu_op op) {
    bool one_d = it % 5 == 4 && op != ENPU_OP_GLOBAL_AVGPOOL;
    int c = irand(r, 1, 24), kh = one_d ? 1 : irand(r, 1, 4), kw = irand(r, 1, 4);
    int h = one_d ? 1 : irand(r, kh, 18), w = irand(r, kw, 18);
    enpu_graph *g = enpu_graph_new("pool");
    int64_t xd[] = {irand(r, 1, 2), c, h, w}, xd3[] = {xd[0], c, w};
    int x = input(g, "x", one_d ? 3 : 4, one_d ? xd3 : xd), y;
    int k = node(g, "pool", op, 1, &x, &y);
    enpu_pool_attr *a = &g->nodes[k].attr.pool;
    a->w.kernel[0] = kh;
    a->w.kernel[1] = kw;
    for (int d = 0; d < 2; d++) {
        a->w.stride[d] = irand(r, 1, 3);
        a->w.dilation[d] = 1;
    }
    if (op == ENPU_OP_MAXPOOL) {
        a->ceil_mode = irand(r, 0, 1);
        for (int d = 0; d < 2; d++) a->w.dilation[d] = irand(r, 1, 2);
    } else {
        a->count_include_pad = irand(r, 0, 1);
    }
    /* pads smaller than the kernel, as ONNX requires */
    a->w.pads[0] = irand(r, 0, kh - 1);
    a->w.pads[2] = irand(r, 0, kh - 1);
    a->w.pads[1] = irand(r, 0, kw - 1);
    a->w.pads[3] = irand(r, 0, kw - 1);
    if (one_d) a->w.pads[0] = a->w.pads[2] = 0, a->w.stride[0] = a->w.dilation[0] = 1;
    if ((kh - 1) * a->w.dilation[0] + 1 > h + a->w.pads[0] + a->w.pads[2]) a->w.dilation[0] = 1;
    if ((kw - 1) * a->w.dilation[1] + 1 > w + a->w.pads[1] + a->w.pads[3]) a->w.dilation[1] = 1;
    check(g, y, r, enpu_op_name(op), it, cv);
}

/* A standalone BatchNormalization or Relu/Clip on the graph input: nothing
 * to fold into, so a depthwise 1x1 CONV. */
static void pointwise_case(rng *r, int it, coverage *cv) {
    int rank = irand(r, 2, 4), c = irand(r, 1, 20);
    int64_t xd[] = {1, c, irand(r, 1, 9), irand(r, 1, 9)}, pd[] = {c};
    enpu_graph *g = enpu_graph_new("pw");
    int x = input(g, "x", rank, xd), y;
    if (it % 2 == 0) {
        int in[5] = {x, rand_const(g, "s", 1, pd, r, 0.5, 1.0), rand_const(g, "b", 1, pd, r, 0.5, 0.0),
                     rand_const(g, "m", 1, pd, r, 0.2, 0.1), rand_const(g, "v", 1, pd, r, 0.1, 1.0)};
        float *v = g->tensors[in[4]].data;
        for (int i = 0; i < c; i++) v[i] = fabsf(v[i]) + 0.05f;
        int k = node(g, "bn", ENPU_OP_BATCHNORM, 5, in, &y);
        g->nodes[k].attr.bn.epsilon = 1e-5f;
    } else {
        int k = node(g, "relu", it % 4 == 1 ? ENPU_OP_RELU : ENPU_OP_CLIP, 1, &x, &y);
        g->nodes[k].attr.act.min = -0.5f;
        g->nodes[k].attr.act.max = 1.5f;
    }
    check(g, y, r, "pointwise", it, cv);
}

static void binary_case(rng *r, int it, coverage *cv) {
    const enpu_op ops[] = {ENPU_OP_ADD, ENPU_OP_MUL, ENPU_OP_SUB};
    enpu_op op = ops[it % 3];
    int c = irand(r, 1, 19), h = irand(r, 1, 9), w = irand(r, 1, 9);
    enpu_graph *g = enpu_graph_new("bin");
    int64_t ad[] = {1, c, h, w}, bd_ch[] = {1, c, 1, 1}, bd_w[] = {w};
    int a = input(g, "a", 4, ad), b, form = op == ENPU_OP_SUB ? 3 : (it / 3) % 4;
    if (form == 0) b = input(g, "b", 4, ad);
    else if (form == 1) b = input(g, "b", 4, bd_ch);
    else if (form == 2) b = input(g, "b", 1, bd_w);
    else b = rand_const(g, "k", 4, bd_ch, r, 1.0, 0.5);
    int in[2] = {a, b}, y;
    node(g, "op", op, 2, in, &y);
    check(g, maybe_act(g, r, y), r, enpu_op_name(op), it, cv);
}

static void table_case(rng *r, int it, coverage *cv) {
    const enpu_op ops[] = {ENPU_OP_SIGMOID,   ENPU_OP_TANH, ENPU_OP_HARD_SIGMOID,
                           ENPU_OP_HARD_SWISH, ENPU_OP_SILU, ENPU_OP_LEAKY_RELU};
    enpu_op op = ops[it % 6];
    enpu_graph *g = enpu_graph_new("table");
    int64_t xd[] = {1, irand(r, 1, 16), irand(r, 1, 12), irand(r, 1, 12)};
    int x = input(g, "x", 4, xd), y;
    int k = node(g, "act", op, 1, &x, &y);
    g->nodes[k].attr.act.alpha = op == ENPU_OP_LEAKY_RELU ? 0.1f : 0.2f;
    g->nodes[k].attr.act.beta = 0.5f;
    check(g, y, r, enpu_op_name(op), it, cv);
}

/* conv -> Transpose, conv -> Reshape, Concat with the input (a rescale), Pad,
 * Flatten, Gemm, host Softmax. */
static void moves_case(rng *r, int it, coverage *cv) {
    int c = irand(r, 1, 6), s = irand(r, 2, 6);
    enpu_graph *g = enpu_graph_new("moves");
    int64_t xd[] = {1, c, s, s}, wd[] = {c, c, 1, 1};
    int x = input(g, "x", 4, xd);
    int ia[2] = {x, rand_const(g, "wa", 4, wd, r, 1.0, 0)}, a, at, cc, pd, fl, fc, sm;
    node(g, "conv_a", ENPU_OP_CONV, 2, ia, &a);
    int k = node(g, "tr", ENPU_OP_TRANSPOSE, 1, &a, &at);
    g->nodes[k].attr.shape.n_axes = 4;
    int perm[] = {0, 1, 3, 2};
    memcpy(g->nodes[k].attr.shape.axes, perm, sizeof perm);
    int cin[2] = {at, x};
    k = node(g, "cat", ENPU_OP_CONCAT, 2, cin, &cc);
    g->nodes[k].attr.shape.axis = 1;
    k = node(g, "pad", ENPU_OP_PAD, 1, &cc, &pd);
    g->nodes[k].attr.pad.n_pads = 8;
    int64_t pads[8] = {0, 0, irand(r, 0, 2), 0, 0, 0, 0, irand(r, 0, 2)};
    memcpy(g->nodes[k].attr.pad.pads, pads, sizeof pads);
    k = node(g, "flat", ENPU_OP_FLATTEN, 1, &pd, &fl);
    g->nodes[k].attr.shape.axis = 1;
    int64_t kk = 2 * c * (s + pads[2]) * (s + pads[7]), fwd[] = {5, kk};
    int fin[2] = {fl, rand_const(g, "W", 2, fwd, r, 0.2, 0)};
    k = node(g, "fc", ENPU_OP_GEMM, 2, fin, &fc);
    g->nodes[k].attr.gemm.trans_b = true;
    g->nodes[k].attr.gemm.alpha = g->nodes[k].attr.gemm.beta = 1.0f;
    k = node(g, "sm", ENPU_OP_SOFTMAX, 1, &fc, &sm);
    g->nodes[k].attr.shape.axis = 1;
    check(g, sm, r, "moves", it, cv);
}

static void test_every_op(void **state) {
    (void)state;
    rng r = {20261119};
    coverage cv = {0};
    for (int it = 0; it < 90; it++) conv_case(&r, it, &cv);
    for (int it = 0; it < 24; it++) gemm_case(&r, it, &cv);
    for (int it = 0; it < 20; it++) pool_case(&r, it, &cv, ENPU_OP_AVGPOOL);
    for (int it = 0; it < 8; it++) pool_case(&r, it, &cv, ENPU_OP_GLOBAL_AVGPOOL);
    for (int it = 0; it < 30; it++) pool_case(&r, it, &cv, ENPU_OP_MAXPOOL);
    for (int it = 0; it < 12; it++) pointwise_case(&r, it, &cv);
    for (int it = 0; it < 30; it++) binary_case(&r, it, &cv);
    for (int it = 0; it < 18; it++) table_case(&r, it, &cv);
    for (int it = 0; it < 6; it++) moves_case(&r, it, &cv);
    printf("fast kernels compared with the reference, times 3 inputs:");
    for (int k = 0; k < ENPU_GK_COUNT; k++)
        if (k != ENPU_GK_REFERENCE)
            printf(" %s %d%s", enpu_gexec_kernels_label((enpu_gexec_kernels)k), cv.compared[k],
                   cv.compared[k] ? "" : " (not on this CPU)");
    printf("\n");
    /* every set this CPU runs was compared on every case: fast, portable and at least one SIMD
     * set on x86 with AVX2, the portable C elsewhere */
    assert_int_equal(cv.compared[ENPU_GK_FAST], 3 * 238);
    assert_int_equal(cv.compared[ENPU_GK_PORTABLE], 3 * 238);
    printf("fast = reference on every element (%lld node-output elements; "
           "%d graphs with random requantization): conv %d (1-D %d), depthwise %d, "
           "grouped %d, fc %d, avgpool %d, bn %d, relu %d, rescale %d, maxpool %d, add %d, mul %d, "
           "table %d, move %d, host %d\n",
           cv.elements, cv.mutated, cv.conv, cv.conv1d, cv.dwconv, cv.gconv, cv.fc, cv.avgpool,
           cv.bn, cv.relu, cv.rescale, cv.maxpool, cv.add, cv.mul, cv.table, cv.move, cv.host);
    /* every kind and origin the golden executes was met */
    int seen[] = {cv.conv, cv.conv1d, cv.dwconv, cv.gconv, cv.fc, cv.avgpool, cv.bn, cv.relu,
                  cv.rescale, cv.maxpool, cv.add, cv.mul, cv.table, cv.move, cv.host};
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++) assert_true(seen[i] >= 4);
}

/* Switching kernels back and forth keeps the values, and an unknown choice
 * is refused. */
static void test_set_kernels(void **state) {
    (void)state;
    rng r = {7};
    enpu_graph *g = enpu_graph_new("k");
    int64_t xd[] = {1, 8, 9, 9}, wd[] = {12, 8, 3, 3};
    int in[2] = {input(g, "x", 4, xd), rand_const(g, "w", 4, wd, &r, 0.3, 0.0)}, y;
    node(g, "conv", ENPU_OP_CONV, 2, in, &y);
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    o.quiet = true;
    enpu_buf *cal = samples(g, 2, &r, 1.0);
    enpu_graph *qg = NULL;
    assert_int_equal(enpu_quantize_graph(g, cal, 2, &o, &qg, NULL, &err), 0);
    enpu_gexec *ex = NULL;
    assert_int_equal(enpu_gexec_new(qg, &ex, &err), 0);
    assert_string_not_equal(enpu_gexec_kernels_name(ex), "reference");
    int t = qg->nodes[0].out[0];
    int64_t n = enpu_tensor_numel(&qg->tensors[t]);
    int8_t *want = malloc((size_t)n);
    assert_int_equal(enpu_gexec_set_kernels(ex, ENPU_GK_REFERENCE, &err), 0);
    assert_string_equal(enpu_gexec_kernels_name(ex), "reference");
    assert_int_equal(enpu_gexec_run(ex, cal, &err), 0);
    memcpy(want, enpu_gexec_value_i8(ex, t), (size_t)n);
    assert_int_equal(enpu_gexec_set_kernels(ex, ENPU_GK_PORTABLE, &err), 0);
    assert_string_equal(enpu_gexec_kernels_name(ex), "portable");
    assert_memory_equal(enpu_gexec_value_i8(ex, t), want, (size_t)n); /* kept */
    assert_int_equal(enpu_gexec_run(ex, cal, &err), 0);
    assert_memory_equal(enpu_gexec_value_i8(ex, t), want, (size_t)n);
    assert_int_equal(enpu_gexec_set_kernels(ex, (enpu_gexec_kernels)42, &err), ENPU_E_USAGE);
    assert_string_equal(enpu_gexec_kernels_name(ex), "portable");
    for (int k = 0; k < ENPU_GK_COUNT; k++) {
        const char *label = enpu_gexec_kernels_label((enpu_gexec_kernels)k);
        assert_int_equal(enpu_gexec_kernels_parse(label), k);
        enpu_err_clear(&err); /* enpu_fail keeps the first error: the message must be this call's */
        int rc = enpu_gexec_set_kernels(ex, (enpu_gexec_kernels)k, &err);
        if (rc == ENPU_E_UNSUPPORTED) { /* nothing changes */
            assert_non_null(strstr(err.msg, "kernels need a CPU with"));
            assert_string_equal(enpu_gexec_kernels_name(ex), "portable");
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(enpu_gexec_run(ex, cal, &err), 0);
        assert_memory_equal(enpu_gexec_value_i8(ex, t), want, (size_t)n);
        if (k >= ENPU_GK_AVX2) assert_string_equal(enpu_gexec_kernels_name(ex), label);
        assert_int_equal(enpu_gexec_set_kernels(ex, ENPU_GK_PORTABLE, &err), 0);
    }
    assert_int_equal(enpu_gexec_kernels_parse("turbo"), -1);
    assert_null(enpu_gexec_kernels_label(ENPU_GK_COUNT));
    assert_int_equal(enpu_gexec_run(ex, cal, &err), 0);
    assert_memory_equal(enpu_gexec_value_i8(ex, t), want, (size_t)n);
    free(want);
    enpu_gexec_free(ex);
    for (int i = 0; i < 2; i++) enpu_buf_free(&cal[i]);
    free(cal);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op),
        cmocka_unit_test(test_set_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
