/* Float reference executor: exact values of hand-built graphs, and the
 * executor's error reporting. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/ir.h"
#include "testutil.h"

/* --- building helpers ------------------------------------------------------- */

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    assert_true(t >= 0);
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
    float *data = malloc(n * sizeof(float) + 1);
    assert_non_null(data);
    memcpy(data, vals, n * sizeof(float));
    enpu_tensor_set_data(&g->tensors[t], data);
    return t;
}

/* Adds node `name` (op) with the given inputs and one new output tensor,
 * returning the node; *out gets the output tensor. */
static enpu_node *node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in,
                       int *out) {
    enpu_err err = {0};
    char oname[64];
    snprintf(oname, sizeof oname, "%s_out", name);
    *out = tensor(g, oname, -1, NULL);
    int n = enpu_graph_add_node(g, name, op, n_in, in, 1, out, &err);
    assert_true(n >= 0);
    return &g->nodes[n];
}

/* Finishes g (output y), runs it on the given float inputs and checks y's
 * shape and values (within tol). */
static void run_check(enpu_graph *g, int y, int n_inputs, const float *const *vals, int rank,
                      const int64_t *dims, const float *want, float tol) {
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    assert_int_equal(enpu_graph_toposort(g, &err), 0);
    if (enpu_graph_infer_shapes(g, &err) || enpu_graph_validate(g, &err)) fail_msg("%s", err.msg);
    const enpu_tensor *yt = &g->tensors[y];
    assert_int_equal(yt->rank, rank);
    for (int d = 0; d < rank; d++) assert_int_equal(yt->dims[d], dims[d]);
    enpu_buf bufs[4];
    memset(bufs, 0, sizeof bufs);
    assert_true(n_inputs == g->n_inputs && n_inputs <= 4);
    for (int i = 0; i < n_inputs; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i]];
        bufs[i].dtype = ENPU_DT_FLOAT32;
        bufs[i].rank = t->rank;
        memcpy(bufs[i].dims, t->dims, sizeof t->dims);
        bufs[i].data = (void *)vals[i];
    }
    enpu_fexec *ex = NULL;
    if (enpu_fexec_new(g, &ex, &err)) fail_msg("%s", err.msg);
    if (enpu_fexec_run_n(ex, n_inputs, bufs, &err)) fail_msg("%s", err.msg);
    const float *got = enpu_fexec_value(ex, y);
    assert_non_null(got);
    int64_t n = enpu_tensor_numel(yt);
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tol))
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, got[i], want[i]);
    enpu_fexec_free(ex);
}

static void iota(float *v, int n, float start) {
    for (int i = 0; i < n; i++) v[i] = start + (float)i;
}

/* --- Conv --------------------------------------------------------------------- */

/* The ONNX Conv examples: 5x5 ramp, 3x3 ones. */
static void conv_case(int sh, int sw, const int pads[4], int oh, int ow, const float *want) {
    enpu_graph *g = enpu_graph_new("conv");
    int64_t xd[] = {1, 1, 5, 5}, wd[] = {1, 1, 3, 3};
    float xv[25], ones[9];
    iota(xv, 25, 0.0f);
    for (int i = 0; i < 9; i++) ones[i] = 1.0f;
    int in[] = {input(g, "x", 4, xd), constant(g, "w", 4, wd, ones)}, y;
    enpu_node *n = node(g, "conv", ENPU_OP_CONV, 2, in, &y);
    n->attr.conv.w.stride[0] = sh;
    n->attr.conv.w.stride[1] = sw;
    memcpy(n->attr.conv.w.pads, pads, sizeof n->attr.conv.w.pads);
    const float *vals[] = {xv};
    int64_t yd[] = {1, 1, oh, ow};
    run_check(g, y, 1, vals, 4, yd, want, 0.0f);
    enpu_graph_free(g);
}

static void test_conv_padding_stride(void **state) {
    (void)state;
    const int p1[] = {1, 1, 1, 1}, asym[] = {1, 0, 1, 0};
    const float pad1[] = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108,
                          117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
    conv_case(1, 1, p1, 5, 5, pad1);
    const float stride2[] = {12, 27, 24, 63, 108, 81, 72, 117, 84};
    conv_case(2, 2, p1, 3, 3, stride2);
    const float asym2[] = {21, 33, 99, 117, 111, 123};
    conv_case(2, 2, asym, 3, 2, asym2);
}

/* Group 2 (depthwise), dilation 2, bias:
 * ch0 = x0[y][x] - x0[y+2][x+2] + 1 = -9; ch1 = x1[y][x+2] + x1[y+2][x] - 1. */
static void test_conv_group_dilation(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("dw");
    int64_t xd[] = {1, 2, 4, 4}, wd[] = {2, 1, 2, 2}, bd[] = {2};
    float xv[32];
    iota(xv, 16, 0.0f);
    iota(xv + 16, 16, 100.0f);
    const float wv[] = {1, 0, 0, -1, 0, 1, 1, 0}, bv[] = {1, -1};
    int in[] = {input(g, "x", 4, xd), constant(g, "w", 4, wd, wv), constant(g, "b", 1, bd, bv)};
    int y;
    enpu_node *n = node(g, "conv", ENPU_OP_CONV, 3, in, &y);
    n->attr.conv.group = 2;
    n->attr.conv.w.dilation[0] = n->attr.conv.w.dilation[1] = 2;
    const float *vals[] = {xv};
    int64_t yd[] = {1, 2, 2, 2};
    const float want[] = {-9, -9, -9, -9, 209, 211, 217, 219};
    run_check(g, y, 1, vals, 4, yd, want, 0.0f);
    enpu_graph_free(g);
}

/* Rank-3 input: a 1-D convolution along W, stride 2, pads 1 left / 0 right. */
static void test_conv_1d(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("conv1d");
    int64_t xd[] = {1, 1, 6}, wd[] = {2, 1, 3};
    float xv[6];
    iota(xv, 6, 1.0f);
    const float wv[] = {1, 2, 3, -1, 0, 1};
    int in[] = {input(g, "x", 3, xd), constant(g, "w", 3, wd, wv)}, y;
    enpu_node *n = node(g, "conv", ENPU_OP_CONV, 2, in, &y);
    n->attr.conv.w.stride[1] = 2;
    n->attr.conv.w.pads[1] = 1;
    /* windows over [0 1 2 3 4 5 6] (leading 0 = pad): (0,1,2) (2,3,4) (4,5,6) */
    const float want[] = {0 + 2 + 6, 2 + 6 + 12, 4 + 10 + 18, 2, 2, 2};
    const float *vals[] = {xv};
    int64_t yd[] = {1, 2, 3};
    run_check(g, y, 1, vals, 3, yd, want, 0.0f);
    enpu_graph_free(g);
}

/* --- pooling ------------------------------------------------------------------ */

static void avgpool_case(const int64_t *xd, const float *xv, int k0, int k1, int s,
                         const int pads[4], bool ceil, bool cip, const int64_t *yd,
                         const float *want) {
    enpu_graph *g = enpu_graph_new("pool");
    int in[] = {input(g, "x", 4, xd)}, y;
    enpu_node *n = node(g, "pool", ENPU_OP_AVGPOOL, 1, in, &y);
    n->attr.pool.w.kernel[0] = k0;
    n->attr.pool.w.kernel[1] = k1;
    n->attr.pool.w.stride[0] = n->attr.pool.w.stride[1] = s;
    memcpy(n->attr.pool.w.pads, pads, sizeof n->attr.pool.w.pads);
    n->attr.pool.ceil_mode = ceil;
    n->attr.pool.count_include_pad = cip;
    const float *vals[] = {xv};
    run_check(g, y, 1, vals, 4, yd, want, 1e-6f);
    enpu_graph_free(g);
}

static void test_avgpool_count_include_pad(void **state) {
    (void)state;
    /* 3x3 ramp 1..9, 2x2 windows, stride 1, one pixel of padding all round. */
    int64_t xd[] = {1, 1, 3, 3}, yd[] = {1, 1, 4, 4};
    float xv[9];
    iota(xv, 9, 1.0f);
    const int p1[] = {1, 1, 1, 1};
    const float excl[] = {1, 1.5f, 2.5f, 3, 2.5f, 3, 4, 4.5f, 5.5f, 6, 7, 7.5f, 7, 7.5f, 8.5f, 9};
    avgpool_case(xd, xv, 2, 2, 1, p1, false, false, yd, excl);
    const float incl[] = {0.25f, 0.75f, 1.25f, 0.75f, 1.25f, 3, 4, 2.25f,
                          2.75f, 6, 7,     3.75f, 1.75f, 3.75f, 4.25f, 2.25f};
    avgpool_case(xd, xv, 2, 2, 1, p1, false, true, yd, incl);
    /* ceil_mode: W 5, right pad 1, kernel 3, stride 2 -> 3 windows, the last
     * covering x[4], the pad and one column past the padded input. */
    int64_t xd2[] = {1, 1, 1, 5}, yd2[] = {1, 1, 1, 3};
    const int pr[] = {0, 0, 0, 1};
    float xv2[5];
    iota(xv2, 5, 1.0f);
    const float ceil_excl[] = {2, 4, 5}, ceil_incl[] = {2, 4, 2.5f};
    avgpool_case(xd2, xv2, 1, 3, 2, pr, true, false, yd2, ceil_excl);
    avgpool_case(xd2, xv2, 1, 3, 2, pr, true, true, yd2, ceil_incl);
}

static void test_maxpool_global(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("pools");
    int64_t xd[] = {1, 2, 3, 3};
    float xv[18];
    for (int i = 0; i < 18; i++) xv[i] = (float)((i * 7) % 18) - 9.0f;
    int in[] = {input(g, "x", 4, xd)}, p, y;
    enpu_node *n = node(g, "max", ENPU_OP_MAXPOOL, 1, in, &p);
    n->attr.pool.w.kernel[0] = n->attr.pool.w.kernel[1] = 2;
    n->attr.pool.w.pads[2] = n->attr.pool.w.pads[3] = 1; /* padding never wins over negatives */
    n->attr.pool.w.stride[0] = n->attr.pool.w.stride[1] = 2;
    int in2[] = {p};
    node(g, "gap", ENPU_OP_GLOBAL_AVGPOOL, 1, in2, &y);
    /* ch0: -9 -2 5 / -6 1 8 / -3 4 -7 -> 2x2 window maxima 1, 8, 4, -7 -> mean 1.5
     * ch1: 0 7 -4 / 3 -8 6 / -5 -1 2 -> 7, 6, -1, 2 -> mean 3.5 */
    const float *vals[] = {xv};
    int64_t yd[] = {1, 2, 1, 1};
    const float want[] = {1.5f, 3.5f};
    run_check(g, y, 1, vals, 4, yd, want, 0.0f);
    enpu_graph_free(g);
}

/* --- Softmax ------------------------------------------------------------------- */

static void softmax_case(bool legacy, const float *want) {
    enpu_graph *g = enpu_graph_new("softmax");
    int64_t xd[] = {1, 2, 2};
    const float xv[] = {logf(1), logf(2), logf(3), logf(4)};
    int in[] = {input(g, "x", 3, xd)}, y;
    enpu_node *n = node(g, "sm", ENPU_OP_SOFTMAX, 1, in, &y);
    n->attr.shape.axis = 1;
    n->attr.shape.softmax_legacy = legacy;
    const float *vals[] = {xv};
    run_check(g, y, 1, vals, 3, xd, want, 1e-6f);
    enpu_graph_free(g);
}

static void test_softmax_legacy_vs_axis(void **state) {
    (void)state;
    /* legacy: [1, 4] rows; opset 13: along axis 1 only (pairs 1,3 and 2,4) */
    const float legacy[] = {0.1f, 0.2f, 0.3f, 0.4f};
    const float axis[] = {0.25f, 2.0f / 6, 0.75f, 4.0f / 6};
    softmax_case(true, legacy);
    softmax_case(false, axis);
}

/* --- broadcasting and matrix ops --------------------------------------------- */

static void test_broadcast_add_sub_prelu(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("bcast");
    int64_t ad[] = {2, 1, 3}, bd[] = {4, 1}, sd[] = {3};
    float av[6], bv[4];
    iota(av, 6, 0.0f);
    for (int j = 0; j < 4; j++) bv[j] = -10.0f * (float)j;
    const float slope[] = {0.5f, 1.0f, 2.0f};
    int in[] = {input(g, "a", 3, ad), input(g, "b", 2, bd)}, s, y;
    node(g, "add", ENPU_OP_ADD, 2, in, &s);
    int in2[] = {s, constant(g, "slope", 1, sd, slope)};
    node(g, "prelu", ENPU_OP_PRELU, 2, in2, &y);
    float want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) {
                float v = av[i * 3 + k] + bv[j];
                want[(i * 4 + j) * 3 + k] = v < 0 ? v * slope[k] : v;
            }
    const float *vals[] = {av, bv};
    int64_t yd[] = {2, 4, 3};
    run_check(g, y, 2, vals, 3, yd, want, 0.0f);
    enpu_graph_free(g);
}

/* [2,1,2,3] @ [3,3,2] -> [2,3,2,2]; and a vector on the left. */
static void test_matmul_batch_and_vector(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("matmul");
    int64_t ad[] = {2, 1, 2, 3}, bd[] = {3, 3, 2};
    float av[12], bv[18];
    iota(av, 12, 1.0f);
    for (int i = 0; i < 18; i++) bv[i] = (float)(i % 5) - 2.0f;
    int in[] = {input(g, "a", 4, ad), input(g, "b", 3, bd)}, y;
    node(g, "mm", ENPU_OP_MATMUL, 2, in, &y);
    float want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int m = 0; m < 2; m++)
                for (int n = 0; n < 2; n++) {
                    float acc = 0;
                    for (int k = 0; k < 3; k++)
                        acc += av[(i * 2 + m) * 3 + k] * bv[(j * 3 + k) * 2 + n];
                    want[((i * 3 + j) * 2 + m) * 2 + n] = acc;
                }
    const float *vals[] = {av, bv};
    int64_t yd[] = {2, 3, 2, 2};
    run_check(g, y, 2, vals, 4, yd, want, 0.0f);
    enpu_graph_free(g);

    g = enpu_graph_new("vecmat");
    int64_t vd[] = {3}, md[] = {2, 3, 2};
    int in2[] = {input(g, "v", 1, vd), input(g, "m", 3, md)};
    node(g, "mm", ENPU_OP_MATMUL, 2, in2, &y);
    const float v[] = {1, 2, 3};
    float want2[4];
    for (int b = 0; b < 2; b++)
        for (int n = 0; n < 2; n++) {
            float acc = 0;
            for (int k = 0; k < 3; k++) acc += v[k] * bv[(b * 3 + k) * 2 + n];
            want2[b * 2 + n] = acc;
        }
    const float *vals2[] = {v, bv};
    int64_t yd2[] = {2, 2};
    run_check(g, y, 2, vals2, 2, yd2, want2, 0.0f);
    enpu_graph_free(g);
}

/* Gemm with both transposes, alpha/beta and a column C broadcast over N. */
static void test_gemm(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("gemm");
    int64_t ad[] = {3, 2}, bd[] = {4, 3}, cd[] = {2, 1};
    float av[6], bv[12];
    iota(av, 6, 1.0f);
    iota(bv, 12, -6.0f);
    const float cv[] = {100, 200};
    int in[] = {input(g, "a", 2, ad), input(g, "b", 2, bd), constant(g, "c", 2, cd, cv)}, y;
    enpu_node *n = node(g, "gemm", ENPU_OP_GEMM, 3, in, &y);
    n->attr.gemm.trans_a = n->attr.gemm.trans_b = true;
    n->attr.gemm.alpha = 0.5f;
    n->attr.gemm.beta = 2.0f;
    float want[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            float acc = 0;
            for (int k = 0; k < 3; k++) acc += av[k * 2 + i] * bv[j * 3 + k];
            want[i * 4 + j] = 0.5f * acc + 2.0f * cv[i];
        }
    const float *vals[] = {av, bv};
    int64_t yd[] = {2, 4};
    run_check(g, y, 2, vals, 2, yd, want, 0.0f);
    enpu_graph_free(g);
}

/* --- data movement and activations ------------------------------------------- */

static void test_transpose_concat_pad(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("layout");
    int64_t xd[] = {2, 3};
    float xv[6];
    iota(xv, 6, 1.0f);
    int x = input(g, "x", 2, xd), t, c, y;
    int in1[] = {x};
    enpu_node *n = node(g, "tr", ENPU_OP_TRANSPOSE, 1, in1, &t); /* [3,2] */
    n->attr.shape.n_axes = 2;
    n->attr.shape.axes[0] = 1;
    n->attr.shape.axes[1] = 0;
    int in2[] = {t, t};
    n = node(g, "cat", ENPU_OP_CONCAT, 2, in2, &c); /* [3,4] */
    n->attr.shape.axis = 1;
    int in3[] = {c};
    n = node(g, "pad", ENPU_OP_PAD, 1, in3, &y); /* crop a row, pad a column on the left */
    n->attr.pad.n_pads = 4;
    n->attr.pad.pads[0] = -1; /* begin axis 0 */
    n->attr.pad.pads[1] = 1;  /* begin axis 1 */
    n->attr.pad.value = 9.0f;
    const float want[] = {9, 2, 5, 2, 5, 9, 3, 6, 3, 6};
    const float *vals[] = {xv};
    int64_t yd[] = {2, 5};
    run_check(g, y, 1, vals, 2, yd, want, 0.0f);
    enpu_graph_free(g);
}

static void test_activations(void **state) {
    (void)state;
    const enpu_op ops[] = {ENPU_OP_RELU,        ENPU_OP_CLIP,         ENPU_OP_LEAKY_RELU,
                           ENPU_OP_SIGMOID,     ENPU_OP_TANH,         ENPU_OP_HARD_SIGMOID,
                           ENPU_OP_HARD_SWISH,  ENPU_OP_SILU};
    const float xv[] = {-4.0f, -1.0f, 0.0f, 0.5f, 3.5f};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        enpu_graph *g = enpu_graph_new("act");
        int64_t xd[] = {5};
        int in[] = {input(g, "x", 1, xd)}, y;
        enpu_node *n = node(g, "act", ops[k], 1, in, &y);
        if (ops[k] == ENPU_OP_CLIP) {
            n->attr.act.min = -0.5f;
            n->attr.act.max = 1.0f;
        }
        float want[5];
        for (int i = 0; i < 5; i++) {
            double x = xv[i], s = 1.0 / (1.0 + exp(-x));
            switch (ops[k]) {
            case ENPU_OP_RELU: want[i] = (float)fmax(x, 0); break;
            case ENPU_OP_CLIP: want[i] = (float)fmin(fmax(x, -0.5), 1.0); break;
            case ENPU_OP_LEAKY_RELU: want[i] = (float)(x < 0 ? 0.01f * x : x); break;
            case ENPU_OP_SIGMOID: want[i] = (float)s; break;
            case ENPU_OP_TANH: want[i] = (float)tanh(x); break;
            case ENPU_OP_HARD_SIGMOID: want[i] = (float)fmin(fmax(0.2f * x + 0.5, 0), 1); break;
            case ENPU_OP_HARD_SWISH: want[i] = (float)(x * fmin(fmax(x / 6 + 0.5, 0), 1)); break;
            default: want[i] = (float)(x * s); break;
            }
        }
        const float *vals[] = {xv};
        run_check(g, y, 1, vals, 1, xd, want, 1e-6f);
        enpu_graph_free(g);
    }
}

static void test_batchnorm(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("bn");
    int64_t xd[] = {1, 2, 1, 2}, cd[] = {2};
    const float xv[] = {1, 2, 3, 4}, scale[] = {2, 1}, bias[] = {0, 10}, mean[] = {1, 3},
                var[] = {4, 0.25f};
    int in[] = {input(g, "x", 4, xd), constant(g, "s", 1, cd, scale), constant(g, "b", 1, cd, bias),
                constant(g, "m", 1, cd, mean), constant(g, "v", 1, cd, var)};
    int y;
    enpu_node *n = node(g, "bn", ENPU_OP_BATCHNORM, 5, in, &y);
    n->attr.bn.epsilon = 0.0f;
    const float want[] = {0, 1, 10, 12};
    const float *vals[] = {xv};
    run_check(g, y, 1, vals, 4, xd, want, 1e-6f);
    enpu_graph_free(g);
}

/* --- errors ------------------------------------------------------------------- */

static void test_run_errors(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("errs");
    enpu_err err = {0};
    int64_t xd[] = {1, 4};
    int in[] = {input(g, "x", 2, xd)}, y;
    node(g, "relu", ENPU_OP_RELU, 1, in, &y);
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    enpu_fexec *ex = NULL;
    assert_int_equal(enpu_fexec_new(g, &ex, &err), 0);
    int16_t raw[5] = {-2, -1, 0, 1, 2};
    enpu_buf b = {.dtype = ENPU_DT_FLOAT32, .rank = 2, .dims = {1, 5}, .data = raw};
    assert_int_equal(enpu_fexec_run_n(ex, 2, &b, &err), ENPU_E_USAGE);
    assert_non_null(strstr(err.msg, "1 input"));
    enpu_err_clear(&err);
    assert_int_equal(enpu_fexec_run_n(ex, 1, &b, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "'x'"));
    assert_non_null(strstr(err.msg, "1x5"));
    assert_non_null(strstr(err.msg, "1x4"));
    enpu_err_clear(&err);
    /* An int16 buffer of the right shape is converted. */
    b.dtype = ENPU_DT_INT16;
    b.dims[1] = 4;
    assert_int_equal(enpu_fexec_run_n(ex, 1, &b, &err), 0);
    const float *v = enpu_fexec_value(ex, y);
    assert_true(v[0] == 0.0f && v[1] == 0.0f && v[2] == 0.0f && v[3] == 1.0f);
    enpu_buf o;
    assert_int_equal(enpu_fexec_output(ex, 0, &o, &err), 0);
    assert_int_equal(o.dtype, ENPU_DT_FLOAT32);
    assert_int_equal(o.rank, 2);
    assert_true(((float *)o.data)[3] == 1.0f);
    enpu_buf_free(&o);
    assert_int_equal(enpu_fexec_output(ex, 1, &o, &err), ENPU_E_USAGE);
    assert_null(enpu_fexec_value(ex, 99));
    enpu_fexec_free(ex);
    enpu_graph_free(g);
}

/* Integer tensors are carried in float32 and rounded to their dtype after
 * each node: truncation toward zero, 8- and 16-bit wrap-around. */
static void test_integer_values(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("u8");
    enpu_err err = {0};
    int64_t d4[] = {4}, d2[] = {2};
    int in[] = {input(g, "a", 1, d4), input(g, "b", 1, d4)}, y;
    g->tensors[in[0]].dtype = g->tensors[in[1]].dtype = ENPU_DT_UINT8;
    node(g, "add", ENPU_OP_ADD, 2, in, &y);
    g->tensors[y].dtype = ENPU_DT_UNDEFINED; /* inferred: input 0's */
    float av[] = {200, 1, 255, 0}, bv[] = {100, 2, 1, 0}, want[] = {44, 3, 0, 0};
    const float *vals[] = {av, bv};
    run_check(g, y, 2, vals, 1, d4, want, 0.0f);
    assert_int_equal(g->tensors[y].dtype, ENPU_DT_UINT8);
    enpu_graph_free(g);

    g = enpu_graph_new("i32");
    int in2[] = {input(g, "p", 1, d2), input(g, "q", 1, d2)};
    g->tensors[in2[0]].dtype = g->tensors[in2[1]].dtype = ENPU_DT_INT32;
    node(g, "div", ENPU_OP_DIV, 2, in2, &y);
    g->tensors[y].dtype = ENPU_DT_UNDEFINED;
    float pv[] = {7, -7}, qv[] = {2, 2}, want2[] = {3, -3};
    const float *vals2[] = {pv, qv};
    run_check(g, y, 2, vals2, 1, d2, want2, 0.0f);
    enpu_graph_free(g);

    g = enpu_graph_new("cast");
    int x = input(g, "x", 1, d2);
    node(g, "cast", ENPU_OP_CAST, 1, &x, &y);
    g->nodes[g->n_nodes - 1].attr.misc.to = ENPU_DT_INT8;
    float xv[] = {300.7f, -1.9f}, want3[] = {44, -1};
    const float *vals3[] = {xv};
    run_check(g, y, 1, vals3, 1, d2, want3, 0.0f);
    enpu_graph_free(g);
    enpu_err_clear(&err);

    /* An int64 shape operand is not a value: Reshape runs. */
    g = enpu_graph_new("reshape");
    int64_t ad[] = {2, 3}, sd[] = {2};
    x = input(g, "x", 2, ad);
    int s = enpu_graph_add_tensor(g, "shape", ENPU_DT_INT64, 1, sd, &err);
    int64_t *sv = malloc(2 * sizeof(int64_t));
    sv[0] = 3;
    sv[1] = -1;
    enpu_tensor_set_data(&g->tensors[s], sv);
    int in4[] = {x, s};
    node(g, "rs", ENPU_OP_RESHAPE, 2, in4, &y);
    float xv6[6];
    iota(xv6, 6, 0.0f);
    const float *vals4[] = {xv6};
    int64_t yd[] = {3, 2};
    run_check(g, y, 1, vals4, 2, yd, xv6, 0.0f);
    enpu_graph_free(g);
}

/* A shape inconsistent with the op is caught before any kernel reads it. */
static void test_inconsistent_shape_rejected(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("bad");
    enpu_err err = {0};
    int64_t xd[] = {1, 1, 4, 4}, wd[] = {1, 1, 3, 3};
    float w[9] = {0};
    int in[] = {input(g, "x", 4, xd), constant(g, "w", 4, wd, w)}, y;
    node(g, "conv", ENPU_OP_CONV, 2, in, &y);
    enpu_graph_add_output(g, y, &err);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    g->tensors[y].dims[3] = 3; /* should be 2 */
    enpu_fexec *ex = NULL;
    assert_int_equal(enpu_fexec_new(g, &ex, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "'conv'"));
    assert_non_null(strstr(err.msg, "1x1x2x3"));
    enpu_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_padding_stride),
        cmocka_unit_test(test_conv_group_dilation),
        cmocka_unit_test(test_conv_1d),
        cmocka_unit_test(test_avgpool_count_include_pad),
        cmocka_unit_test(test_maxpool_global),
        cmocka_unit_test(test_softmax_legacy_vs_axis),
        cmocka_unit_test(test_broadcast_add_sub_prelu),
        cmocka_unit_test(test_matmul_batch_and_vector),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_transpose_concat_pad),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_run_errors),
        cmocka_unit_test(test_integer_values),
        cmocka_unit_test(test_inconsistent_shape_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
