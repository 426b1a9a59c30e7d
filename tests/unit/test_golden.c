/* Golden int8 reference: hand-computed tiny quantized graphs with exact
 * expected int8 outputs (each expected value is derived in the comments). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/quant.h"
#include "testutil.h"

static void qnode_hook(struct enpu_qnode *q) { enpu_qnode_free(q); }

static int act(enpu_graph *g, const char *name, int rank, const int64_t *dims, float s, int zp) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_INT8, rank, dims, &err);
    assert_true(t >= 0);
    int32_t z = zp;
    assert_int_equal(enpu_tensor_set_quant(&g->tensors[t], -1, 1, &s, &z, &err), 0);
    return t;
}

static int input(enpu_graph *g, const char *name, int rank, const int64_t *dims, float s, int zp) {
    enpu_err err = {0};
    int t = act(g, name, rank, dims, s, zp);
    assert_int_equal(enpu_graph_add_input(g, t, &err), 0);
    return t;
}

static enpu_qnode *qnew(enpu_qkind kind, int n_ch) {
    enpu_qnode *q = calloc(1, sizeof *q);
    q->kind = kind;
    q->n_ch = n_ch;
    q->lo = -128;
    q->hi = 127;
    if (n_ch) {
        q->M = calloc((size_t)n_ch, sizeof(uint32_t));
        q->S = calloc((size_t)n_ch, 1);
    }
    return q;
}

static int add(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in, int out,
               enpu_qnode *q) {
    enpu_err err = {0};
    int k = enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err);
    assert_true(k >= 0);
    g->nodes[k].q = q;
    return k;
}

/* Conv node with weights w (co x k, also given as the int8 input 1) and bias. */
static int conv(enpu_graph *g, const char *name, int x, int y, int rank, const int64_t *wdims,
                const int8_t *w, const int32_t *bias, uint32_t M, int S, int lo, int hi) {
    enpu_err err = {0};
    int64_t co = wdims[0], n = 1;
    for (int i = 0; i < rank; i++) n *= wdims[i];
    char wn[64];
    snprintf(wn, sizeof wn, "%s_w", name);
    int wt = enpu_graph_add_tensor(g, wn, ENPU_DT_INT8, rank, wdims, &err);
    int8_t *wd = malloc((size_t)n);
    memcpy(wd, w, (size_t)n);
    enpu_tensor_set_data(&g->tensors[wt], wd);
    float *ones = malloc((size_t)co * sizeof(float));
    for (int64_t c = 0; c < co; c++) ones[c] = 1.0f;
    assert_int_equal(enpu_tensor_set_quant(&g->tensors[wt], 0, (int)co, ones, NULL, &err), 0);
    free(ones);
    enpu_qnode *q = qnew(ENPU_Q_CONV, (int)co);
    q->origin = ENPU_QO_CONV;
    q->n_w = n;
    q->w = malloc((size_t)n);
    memcpy(q->w, w, (size_t)n);
    q->bias = malloc((size_t)co * sizeof(int32_t));
    memcpy(q->bias, bias, (size_t)co * sizeof(int32_t));
    for (int64_t c = 0; c < co; c++) {
        q->M[c] = M;
        q->S[c] = (int8_t)S;
    }
    q->zp_in[0] = g->tensors[x].quant->zero_point[0];
    q->zp_out = g->tensors[y].quant->zero_point[0];
    q->lo = lo;
    q->hi = hi;
    int in[2] = {x, wt};
    return add(g, name, ENPU_OP_CONV, 2, in, y, q);
}

/* Runs g on int8 inputs and checks output tensor y against want. */
static void run_expect(enpu_graph *g, int y, const int8_t *const *ins, const int8_t *want, int n) {
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    enpu_gexec *ex = NULL;
    if (enpu_gexec_new(g, &ex, &err)) fail_msg("%s", err.msg);
    if (enpu_gexec_run_i8(ex, ins, &err)) fail_msg("%s", err.msg);
    const int8_t *got = enpu_gexec_value_i8(ex, y);
    assert_non_null(got);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("element %d: got %d, want %d", i, got[i], want[i]);
    enpu_gexec_free(ex);
}

/* 3x3 input 1..9 with zp_in 2, 3x3 kernel of ones, pads 1: padding reads
 * zp_in, and the bias b - zp_in * sum(w) = 0 - 2*9 = -18 makes each output
 * the real sum of (x - 2) over the valid taps, x - 2 = [-1 0 1; 2 3 4; 5 6 7]:
 *   4  9  8 / 15 27 21 / 16 27 20.
 * M/2^S = 3/4, zp_out -5: round_half_up(acc * 3/4) - 5:
 *   3 -> -2, 6.75 -> 2, 6 -> 1, 11.25 -> 6, 20.25 -> 15, 15.75 -> 11,
 *   12 -> 7, 20.25 -> 15, 15 -> 10. */
static void test_conv_zero_point_padding(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("conv");
    int64_t xd[] = {1, 1, 3, 3}, wd[] = {1, 1, 3, 3};
    int x = input(g, "x", 4, xd, 0.5f, 2), y = act(g, "y", 4, xd, 1.0f, -5);
    int8_t w[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    int32_t b[1] = {-18};
    int k = conv(g, "conv", x, y, 4, wd, w, b, 3, 2, -128, 127);
    for (int i = 0; i < 4; i++) g->nodes[k].attr.conv.w.pads[i] = 1;
    const int8_t xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int8_t *ins[1] = {xv};
    const int8_t want[9] = {-2, 2, 1, 6, 15, 11, 7, 15, 10};
    run_expect(g, y, ins, want, 9);
    enpu_graph_free(g);
}

/* 1x1 conv, weight 1, bias 0, M = 1, S = 1: y = round_half_up(x / 2):
 * ties go toward +infinity for both signs: -2.5 -> -2, -1.5 -> -1,
 * -0.5 -> 0, 0.5 -> 1, 1.5 -> 2, 2.5 -> 3.  The same with a folded clamp
 * lo = -1, hi = 2 (a bounded ReLU): -1 -1 0 1 2 2. */
static void test_negative_ties_and_clamp(void **state) {
    (void)state;
    for (int clampit = 0; clampit < 2; clampit++) {
        enpu_graph *g = enpu_graph_new("ties");
        int64_t xd[] = {1, 1, 1, 6}, wd[] = {1, 1, 1, 1};
        int x = input(g, "x", 4, xd, 1.0f, 0), y = act(g, "y", 4, xd, 2.0f, 0);
        int8_t w[1] = {1};
        int32_t b[1] = {0};
        conv(g, "conv", x, y, 4, wd, w, b, 1, 1, clampit ? -1 : -128, clampit ? 2 : 127);
        const int8_t xv[6] = {-5, -3, -1, 1, 3, 5};
        const int8_t *ins[1] = {xv};
        const int8_t want[2][6] = {{-2, -1, 0, 1, 2, 3}, {-1, -1, 0, 1, 2, 2}};
        run_expect(g, y, ins, want[clampit], 6);
        enpu_graph_free(g);
    }
}

/* Depthwise (group 2) with stride 2 and dilation: channel c reads only its
 * own input channel.  x0 = 0..15 (4x4), x1 = 10 * (0..15) clipped; kernel 2x2
 * dilation 2, stride 2, no pad: the window of output (0,0) is x[0], x[2],
 * x[8], x[10]; channel 0 weights 1,0,0,1 -> 0+10 = 10; channel 1 weights
 * 0,1,1,0 -> x1[2] + x1[8] = 20 + 80 = 100 (x1 saturated at 127 beyond 12).
 * M = 1, S = 0: outputs exact. */
static void test_depthwise_dilation(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("dw");
    int64_t xd[] = {1, 2, 4, 4}, yd[] = {1, 2, 1, 1}, wd[] = {2, 1, 2, 2};
    int x = input(g, "x", 4, xd, 1.0f, 0), y = act(g, "y", 4, yd, 1.0f, 0);
    int8_t w[8] = {1, 0, 0, 1, 0, 1, 1, 0};
    int32_t b[2] = {0, 0};
    int k = conv(g, "dw", x, y, 4, wd, w, b, 1, 0, -128, 127);
    g->nodes[k].attr.conv.group = 2;
    g->nodes[k].attr.conv.w.dilation[0] = g->nodes[k].attr.conv.w.dilation[1] = 2;
    g->nodes[k].attr.conv.w.stride[0] = g->nodes[k].attr.conv.w.stride[1] = 2;
    int8_t xv[32];
    for (int i = 0; i < 16; i++) {
        xv[i] = (int8_t)i;
        xv[16 + i] = (int8_t)(10 * i > 127 ? 127 : 10 * i);
    }
    const int8_t *ins[1] = {xv};
    const int8_t want[2] = {10, 100};
    run_expect(g, y, ins, want, 2);
    enpu_graph_free(g);
}

/* Tensor add: acc = (x0 - 4) * 3 + (x1 + 2) * 5, y = round_half_up(acc / 4) + 1
 *   e0: 6*3 + 5*5 = 43 -> 10.75 -> 11 -> 12
 *   e1: -24*3 + 9*5 = -27 -> -6.75 -> -7 -> -6
 *   e2: 96*3 - 126*5 = -342 -> -85.5 -> -85 (tie up) -> -84
 * and with x1 broadcast (shape [1], value 7, (7+2)*5 = 45):
 *   63 -> 15.75 -> 16 -> 17;  -27 -> -6;  333 -> 83.25 -> 83 -> 84. */
static void test_add_rescale(void **state) {
    (void)state;
    for (int bc = 0; bc < 2; bc++) {
        enpu_graph *g = enpu_graph_new("add");
        int64_t d[] = {1, 3}, d1[] = {1};
        int a = input(g, "a", 2, d, 0.75f, 4), b = input(g, "b", bc ? 1 : 2, bc ? d1 : d, 1.25f, -2);
        int y = act(g, "y", 2, d, 1.0f, 1);
        enpu_qnode *q = qnew(ENPU_Q_ADD, 1);
        q->A[0] = 3;
        q->A[1] = 5;
        q->M[0] = 1;
        q->S[0] = 2;
        q->zp_in[0] = 4;
        q->zp_in[1] = -2;
        q->zp_out = 1;
        int in[2] = {a, b};
        add(g, "add", ENPU_OP_ADD, 2, in, y, q);
        const int8_t av[3] = {10, -20, 100}, bv[3] = {3, 7, -128}, bs[1] = {7};
        const int8_t *ins[2] = {av, bc ? bs : bv};
        const int8_t want[2][3] = {{12, -6, -84}, {17, -6, 84}};
        run_expect(g, y, ins, want[bc], 3);
        enpu_graph_free(g);
    }
}

/* Mul: acc = (x0 - 0) * (x1 - 1) = 10*2 = 20, -20*2 = -40; M/2^S = 3/8:
 * 7.5 -> 8, -15 -> -15; zp_out -1: 7, -16. */
static void test_mul(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("mul");
    int64_t d[] = {2};
    int a = input(g, "a", 1, d, 0.5f, 0), b = input(g, "b", 1, d, 0.5f, 1);
    int y = act(g, "y", 1, d, 0.25f, -1);
    enpu_qnode *q = qnew(ENPU_Q_MUL, 1);
    q->M[0] = 3;
    q->S[0] = 3;
    q->zp_in[1] = 1;
    q->zp_out = -1;
    int in[2] = {a, b};
    add(g, "mul", ENPU_OP_MUL, 2, in, y, q);
    const int8_t av[2] = {10, -20}, bv[2] = {3, 3};
    const int8_t *ins[2] = {av, bv};
    const int8_t want[2] = {7, -16};
    run_expect(g, y, ins, want, 2);
    enpu_graph_free(g);
}

/* Max pool 2x2, stride 1, pads 1 around [-100 -90; -80 -70] with zp 0:
 * padding never wins although 0 > every input: each output is the max of
 * its valid taps: -100 -90 -90 / -80 -70 -70 / -80 -70 -70. */
static void test_maxpool_padding_never_wins(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("mp");
    int64_t xd[] = {1, 1, 2, 2}, yd[] = {1, 1, 3, 3};
    int x = input(g, "x", 4, xd, 1.0f, 0), y = act(g, "y", 4, yd, 1.0f, 0);
    enpu_qnode *q = qnew(ENPU_Q_MAXPOOL, 0);
    int k = add(g, "mp", ENPU_OP_MAXPOOL, 1, &x, y, q);
    enpu_pool_attr *a = &g->nodes[k].attr.pool;
    a->w.kernel[0] = a->w.kernel[1] = 2;
    a->w.stride[0] = a->w.stride[1] = 1;
    a->w.dilation[0] = a->w.dilation[1] = 1;
    for (int i = 0; i < 4; i++) a->w.pads[i] = 1;
    const int8_t xv[4] = {-100, -90, -80, -70};
    const int8_t *ins[1] = {xv};
    const int8_t want[9] = {-100, -90, -90, -80, -70, -70, -80, -70, -70};
    run_expect(g, y, ins, want, 9);
    enpu_graph_free(g);
}

/* Average pool 2x2 over [1 2; 3 4] (zp 0) as a depthwise conv with weights
 * 1 and 1/4 in M (M = 1, S = 2): acc 10 -> 2.5 -> 3 (tie up). */
static void test_avgpool_as_conv(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("ap");
    int64_t xd[] = {1, 1, 2, 2}, yd[] = {1, 1, 1, 1};
    int x = input(g, "x", 4, xd, 1.0f, 0), y = act(g, "y", 4, yd, 1.0f, 0);
    enpu_qnode *q = qnew(ENPU_Q_CONV, 1);
    q->origin = ENPU_QO_AVGPOOL;
    q->n_w = 4;
    q->w = malloc(4);
    memset(q->w, 1, 4);
    q->bias = calloc(1, sizeof(int32_t));
    q->M[0] = 1;
    q->S[0] = 2;
    int k = add(g, "ap", ENPU_OP_AVGPOOL, 1, &x, y, q);
    enpu_pool_attr *a = &g->nodes[k].attr.pool;
    a->w.kernel[0] = a->w.kernel[1] = 2;
    a->w.stride[0] = a->w.stride[1] = 1;
    a->w.dilation[0] = a->w.dilation[1] = 1;
    const int8_t xv[4] = {1, 2, 3, 4};
    const int8_t *ins[1] = {xv};
    const int8_t want[1] = {3};
    run_expect(g, y, ins, want, 1);
    enpu_graph_free(g);
}

/* One-segment table a = 2, b = 10, M = 1, S = 1: y = round((2x + 10) / 2)
 * = x + 5, clamped to 127: -128 -> -123, 0 -> 5, 122 -> 127, 127 -> 127. */
static void test_table_and_pad(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("tp");
    int64_t xd[] = {1, 4}, pd[] = {1, 6};
    int x = input(g, "x", 2, xd, 1.0f, 0), y = act(g, "y", 2, xd, 1.0f, 0);
    int z = act(g, "z", 2, pd, 1.0f, 0);
    enpu_qnode *q = qnew(ENPU_Q_TABLE, 0);
    q->table = calloc(1, sizeof *q->table);
    enpu_pwl_table *t = q->table;
    t->segments = 1;
    t->x_base = -128;
    t->seg_shift = 8;
    t->a[0] = 2;
    t->b[0] = 10;
    t->M = 1;
    t->S = 1;
    t->lo = -128;
    t->hi = 127;
    add(g, "sig", ENPU_OP_SIGMOID, 1, &x, y, q);
    /* Pad [1, 4] by one column each side with the zero point (0 here). */
    enpu_qnode *qp = qnew(ENPU_Q_MOVE, 0);
    int k = add(g, "pad", ENPU_OP_PAD, 1, &y, z, qp);
    g->nodes[k].attr.pad.n_pads = 4;
    int64_t pads[4] = {0, 1, 0, 1};
    memcpy(g->nodes[k].attr.pad.pads, pads, sizeof pads);
    const int8_t xv[4] = {-128, 0, 122, 127};
    const int8_t *ins[1] = {xv};
    const int8_t want[6] = {0, -123, 5, 127, 127, 0};
    run_expect(g, z, ins, want, 6);
    enpu_graph_free(g);
}

/* Float inputs are quantized with the input's parameters (round half to
 * even: 2.5 / 1 -> 2, 3.5 -> 4, -2.5 -> -2, saturating), and graph outputs
 * dequantized. */
static void test_float_io(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("io");
    int64_t d[] = {1, 5};
    int x = input(g, "x", 2, d, 1.0f, 0), y = act(g, "y", 2, d, 1.0f, 0);
    enpu_qnode *q = qnew(ENPU_Q_MOVE, 0);
    add(g, "id", ENPU_OP_RESHAPE, 1, &x, y, q);
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    g->nodes[0].attr.shape.n_shape = -1;
    enpu_gexec *ex;
    if (enpu_gexec_new(g, &ex, &err)) fail_msg("%s", err.msg);
    float v[5] = {2.5f, 3.5f, -2.5f, 1000.0f, -1000.0f};
    enpu_buf b = {.dtype = ENPU_DT_FLOAT32, .rank = 2, .dims = {1, 5}, .data = v};
    assert_int_equal(enpu_gexec_run(ex, &b, &err), 0);
    const int8_t want[5] = {2, 4, -2, 127, -128};
    const int8_t *got = enpu_gexec_value_i8(ex, y);
    for (int i = 0; i < 5; i++) assert_int_equal(got[i], want[i]);
    enpu_buf o;
    assert_int_equal(enpu_gexec_output(ex, 0, &o, &err), 0);
    assert_true(((float *)o.data)[3] == 127.0f);
    assert_string_equal(o.name, "y");
    enpu_buf_free(&o);
    enpu_gexec_free(ex);
    enpu_graph_free(g);
}

/* The checker refuses what the golden would misread. */
static void test_check_rejects(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("bad");
    int64_t xd[] = {1, 1, 1, 6}, wd[] = {1, 1, 1, 1};
    int x = input(g, "x", 4, xd, 1.0f, 0), y = act(g, "y", 4, xd, 2.0f, 0);
    int8_t w[1] = {1};
    int32_t b[1] = {0};
    int k = conv(g, "conv", x, y, 4, wd, w, b, 1, 1, -128, 127);
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    assert_int_equal(enpu_qgraph_check(g, &err), 0);
    enpu_qnode *q = g->nodes[k].q;
    q->S[0] = 64;
    assert_int_equal(enpu_qgraph_check(g, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "q.S[0]"));
    q->S[0] = 1;
    enpu_err_clear(&err);
    q->zp_out = 3;
    assert_int_equal(enpu_qgraph_check(g, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "zp_out"));
    q->zp_out = 0;
    enpu_err_clear(&err);
    q->w[0] = 2; /* differs from input 1 */
    assert_int_equal(enpu_qgraph_check(g, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "q.w"));
    q->w[0] = 1;
    enpu_err_clear(&err);
    q->lo = 5;
    q->hi = 4;
    assert_int_equal(enpu_qgraph_check(g, &err), ENPU_E_INVALID);
    enpu_graph_free(g);
}

int main(void) {
    enpu_qnode_free_hook = qnode_hook;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_zero_point_padding),
        cmocka_unit_test(test_negative_ties_and_clamp),
        cmocka_unit_test(test_depthwise_dilation),
        cmocka_unit_test(test_add_rescale),
        cmocka_unit_test(test_mul),
        cmocka_unit_test(test_maxpool_padding_never_wins),
        cmocka_unit_test(test_avgpool_as_conv),
        cmocka_unit_test(test_table_and_pad),
        cmocka_unit_test(test_float_io),
        cmocka_unit_test(test_check_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
