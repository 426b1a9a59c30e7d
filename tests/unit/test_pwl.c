/* PWL activation tables: evaluation, fitting, measured worst-case errors of
 * the built-ins (asserted exactly, so regressions show), validation. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "easynpu/pwl.h"

/* Output qparams as a calibrator would choose them: the function's exact
 * range over the 256 representable inputs. */
static void calibrated_out(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float *s_out,
                           int32_t *zp_out) {
    double mn = INFINITY, mx = -INFINITY;
    for (int x = -128; x <= 127; x++) {
        double v = fn((x - zp_in) * (double)s_in, ctx);
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    assert_int_equal(enpu_choose_qparams((float)mn, (float)mx, -128, 127, s_out, zp_out, NULL), 0);
}

/* Worst-case and count of |eval - target| over all 256 inputs, measured here
 * independently of the fit's own bookkeeping. */
static void measure(const enpu_pwl_table *t, const int32_t q[256], int *max_err, int *n_err) {
    *max_err = 0;
    *n_err = 0;
    for (int x = -128; x <= 127; x++) {
        int d = enpu_pwl_eval(t, (int8_t)x) - q[x + 128];
        if (d < 0) d = -d;
        if (d > *max_err) *max_err = d;
        if (d) ++*n_err;
    }
}

typedef struct pwl_case {
    const char *fn;
    float s_in;
    int zp_in;
    float s_out; /* 0: calibrated from the function's range */
    int zp_out;
    int segments;
    int window;
    int max_err; /* measured, exact */
    int n_err;
} pwl_case;

/* Measured with mult_bits = 20.  Rows with s_out = 0 use calibrated output
 * qparams; the others are the fixed pairs s_out = 1/256 (zp -128) and 2/256
 * (zp 0).  See docs/numerics.md §8.5 for the same table. */
static const pwl_case cases[] = {
    {"Sigmoid", 8.0f / 128, 0, 0, 0, 16, 0, 2, 53},
    {"Sigmoid", 8.0f / 128, 0, 0, 0, 16, 1, 1, 43},
    {"Sigmoid", 4.0f / 128, 0, 0, 0, 16, 0, 1, 14},
    {"Sigmoid", 6.0f / 128, -20, 0, 0, 16, 0, 1, 30},
    {"Tanh", 8.0f / 128, 0, 0, 0, 16, 0, 5, 59},
    {"Tanh", 8.0f / 128, 0, 0, 0, 16, 1, 1, 25},
    {"Tanh", 4.0f / 128, 0, 0, 0, 16, 0, 2, 41},
    {"Tanh", 6.0f / 128, -20, 0, 0, 16, 0, 3, 58},
    {"HardSigmoid", 8.0f / 128, 0, 0, 0, 16, 0, 0, 0},
    {"HardSigmoid", 8.0f / 128, 0, 0, 0, 16, 1, 0, 0},
    {"HardSigmoid", 4.0f / 128, 0, 0, 0, 16, 0, 0, 0},
    {"HardSigmoid", 6.0f / 128, -20, 0, 0, 16, 0, 0, 0},
    {"HardSwish", 8.0f / 128, 0, 0, 0, 16, 0, 1, 18},
    {"HardSwish", 8.0f / 128, 0, 0, 0, 16, 1, 1, 5},
    {"HardSwish", 4.0f / 128, 0, 0, 0, 16, 0, 1, 13},
    {"HardSwish", 6.0f / 128, -20, 0, 0, 16, 0, 1, 12},
    {"LeakyRelu", 8.0f / 128, 0, 0, 0, 16, 0, 0, 0},
    {"LeakyRelu", 8.0f / 128, 0, 0, 0, 16, 1, 0, 0},
    {"LeakyRelu", 4.0f / 128, 0, 0, 0, 16, 0, 0, 0},
    {"LeakyRelu", 6.0f / 128, -20, 0, 0, 16, 0, 2, 9},
    {"Silu", 8.0f / 128, 0, 0, 0, 16, 0, 1, 11},
    {"Silu", 8.0f / 128, 0, 0, 0, 16, 1, 1, 11},
    {"Silu", 4.0f / 128, 0, 0, 0, 16, 0, 1, 10},
    {"Silu", 6.0f / 128, -20, 0, 0, 16, 0, 1, 12},
    {"Gelu", 8.0f / 128, 0, 0, 0, 16, 0, 1, 7},
    {"Gelu", 8.0f / 128, 0, 0, 0, 16, 1, 1, 3},
    {"Gelu", 4.0f / 128, 0, 0, 0, 16, 0, 1, 8},
    {"Gelu", 6.0f / 128, -20, 0, 0, 16, 0, 1, 8},
    {"GeluTanh", 8.0f / 128, 0, 0, 0, 16, 0, 1, 7},
    {"GeluTanh", 8.0f / 128, 0, 0, 0, 16, 1, 1, 3},
    {"GeluTanh", 4.0f / 128, 0, 0, 0, 16, 0, 1, 7},
    {"GeluTanh", 6.0f / 128, -20, 0, 0, 16, 0, 1, 8},
    {"Elu", 8.0f / 128, 0, 0, 0, 16, 0, 1, 6},
    {"Elu", 8.0f / 128, 0, 0, 0, 16, 1, 0, 0},
    {"Elu", 4.0f / 128, 0, 0, 0, 16, 0, 1, 7},
    {"Elu", 6.0f / 128, -20, 0, 0, 16, 0, 1, 10},
    {"Softplus", 8.0f / 128, 0, 0, 0, 16, 0, 1, 10},
    {"Softplus", 8.0f / 128, 0, 0, 0, 16, 1, 0, 0},
    {"Softplus", 4.0f / 128, 0, 0, 0, 16, 0, 1, 8},
    {"Softplus", 6.0f / 128, -20, 0, 0, 16, 0, 1, 3},
    {"Mish", 8.0f / 128, 0, 0, 0, 16, 0, 1, 15},
    {"Mish", 8.0f / 128, 0, 0, 0, 16, 1, 1, 14},
    {"Mish", 4.0f / 128, 0, 0, 0, 16, 0, 1, 10},
    {"Mish", 6.0f / 128, -20, 0, 0, 16, 0, 1, 12},
    {"Sigmoid", 8.0f / 128, 0, 1.0f / 256, -128, 16, 0, 2, 51},
    {"Sigmoid", 8.0f / 128, 0, 1.0f / 256, -128, 16, 1, 1, 30},
    {"Sigmoid", 8.0f / 128, 0, 1.0f / 256, -128, 32, 0, 1, 5},
    {"Sigmoid", 8.0f / 128, 0, 2.0f / 256, 0, 16, 0, 1, 16},
    {"Sigmoid", 8.0f / 128, 0, 2.0f / 256, 0, 16, 1, 1, 10},
    {"Sigmoid", 8.0f / 128, 0, 2.0f / 256, 0, 32, 0, 0, 0},
    {"Tanh", 8.0f / 128, 0, 1.0f / 256, -128, 16, 0, 9, 33},
    {"Tanh", 8.0f / 128, 0, 1.0f / 256, -128, 16, 1, 1, 2},
    {"Tanh", 8.0f / 128, 0, 1.0f / 256, -128, 32, 0, 3, 16},
    {"Tanh", 8.0f / 128, 0, 2.0f / 256, 0, 16, 0, 5, 57},
    {"Tanh", 8.0f / 128, 0, 2.0f / 256, 0, 16, 1, 1, 15},
    {"Tanh", 8.0f / 128, 0, 2.0f / 256, 0, 32, 0, 1, 25},
    {"HardSwish", 8.0f / 128, 0, 1.0f / 256, -128, 16, 0, 4, 15},
    {"HardSwish", 8.0f / 128, 0, 1.0f / 256, -128, 16, 1, 0, 0},
    {"HardSwish", 8.0f / 128, 0, 1.0f / 256, -128, 32, 0, 1, 8},
    {"HardSwish", 8.0f / 128, 0, 2.0f / 256, 0, 16, 0, 3, 48},
    {"HardSwish", 8.0f / 128, 0, 2.0f / 256, 0, 16, 1, 1, 11},
    {"HardSwish", 8.0f / 128, 0, 2.0f / 256, 0, 32, 0, 1, 11},
    {"Silu", 8.0f / 128, 0, 1.0f / 256, -128, 16, 0, 5, 14},
    {"Silu", 8.0f / 128, 0, 1.0f / 256, -128, 16, 1, 0, 0},
    {"Silu", 8.0f / 128, 0, 1.0f / 256, -128, 32, 0, 1, 10},
    {"Silu", 8.0f / 128, 0, 2.0f / 256, 0, 16, 0, 3, 39},
    {"Silu", 8.0f / 128, 0, 2.0f / 256, 0, 16, 1, 1, 14},
    {"Silu", 8.0f / 128, 0, 2.0f / 256, 0, 32, 0, 1, 10},
};

static void test_builtin_errors(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const pwl_case *c = &cases[k];
        enpu_pwl_fn fn = enpu_pwl_builtin(c->fn);
        assert_non_null(fn);
        float s_out = c->s_out;
        int32_t zp_out = c->zp_out;
        if (s_out == 0) calibrated_out(fn, NULL, c->s_in, c->zp_in, &s_out, &zp_out);
        int32_t q[256];
        enpu_err e = {0};
        assert_int_equal(enpu_pwl_targets(fn, NULL, c->s_in, c->zp_in, s_out, zp_out, q, &e), 0);
        enpu_pwl_table t;
        enpu_pwl_opts o = {c->segments, 20, c->window, 0};
        assert_int_equal(
            enpu_pwl_fit_opts(fn, NULL, c->s_in, c->zp_in, s_out, zp_out, &o, &t, &e), 0);
        int max_err, n_err;
        measure(&t, q, &max_err, &n_err);
        if (max_err != c->max_err || n_err != c->n_err || t.max_err_lsb != max_err ||
            t.n_err != n_err)
            fprintf(stderr, "%s s_in %g zp_in %d s_out %g zp_out %d segs %d window %d: "
                            "measured %d/%d, reported %g/%d, expected %d/%d\n",
                    c->fn, (double)c->s_in, c->zp_in, (double)s_out, (int)zp_out, c->segments,
                    c->window, max_err, n_err, t.max_err_lsb, t.n_err, c->max_err, c->n_err);
        assert_true((double)max_err <= t.max_err_lsb); /* reported is honest */
        assert_int_equal(max_err, (int)t.max_err_lsb);
        assert_int_equal(n_err, t.n_err);
        assert_int_equal(max_err, c->max_err);
        assert_int_equal(n_err, c->n_err);
        if (c->window) assert_true(max_err <= 1); /* windowed: <= 1 LSB in every case */
        /* the table is legal for the hardware it was fitted for */
        assert_int_equal(enpu_pwl_validate("t", &t, 20, c->window, &e), 0);
        if (!c->window) assert_true(enpu_pwl_is_uniform(&t));
        assert_int_equal(enpu_pwl_check_acc("t", &t, 24, &e), 0);
        assert_true(t.acc_max <= ENPU_PWL_ACC_LIMIT && t.acc_min >= -ENPU_PWL_ACC_LIMIT);
        assert_int_equal(t.lo, -128);
        assert_int_equal(t.hi, 127);
        assert_int_equal(t.zp_out, zp_out);
        /* the fit is deterministic (a sample of the cases, for time) */
        if (k % 8 != 0) continue;
        enpu_pwl_table t2;
        assert_int_equal(
            enpu_pwl_fit_opts(fn, NULL, c->s_in, c->zp_in, s_out, zp_out, &o, &t2, &e), 0);
        assert_memory_equal(t.a, t2.a, sizeof t.a);
        assert_memory_equal(t.b, t2.b, sizeof t.b);
        assert_true(t.M == t2.M && t.S == t2.S && t.x_base == t2.x_base);
    }
}

static void test_eval_by_hand(void **state) {
    (void)state;
    enpu_pwl_table t;
    memset(&t, 0, sizeof t);
    t.segments = 16;
    t.x_base = -128;
    t.seg_shift = 4;
    for (int i = 0; i < 16; i++) {
        t.a[i] = 1;
        t.b[i] = 2 * i;
    }
    t.M = 1u << 19; /* R = 1/2 */
    t.S = 20;
    t.zp_out = -3;
    t.lo = -128;
    t.hi = 127;
    assert_int_equal(enpu_pwl_segment(&t, -128), 0);
    assert_int_equal(enpu_pwl_segment(&t, -113), 0);
    assert_int_equal(enpu_pwl_segment(&t, -112), 1);
    assert_int_equal(enpu_pwl_segment(&t, 0), 8);
    assert_int_equal(enpu_pwl_segment(&t, 127), 15);
    assert_int_equal(enpu_pwl_eval(&t, 5), 8);    /* i 8: (5 + 16)/2 = 10.5 -> 11, -3 */
    assert_int_equal(enpu_pwl_eval(&t, -6), 1);   /* i 7: 8/2 = 4, -3 */
    assert_int_equal(enpu_pwl_eval(&t, -7), 1);   /* i 7: 3.5 -> 4 */
    assert_int_equal(enpu_pwl_eval(&t, -9), 0);   /* i 7: 2.5 -> 3 */
    assert_int_equal(enpu_pwl_eval(&t, -17), -5); /* i 6: -2.5 -> -2 */
    assert_true(enpu_pwl_is_uniform(&t));
    t.hi = 0; /* the clamp applies */
    assert_int_equal(enpu_pwl_eval(&t, 5), 0);

    /* a window of 4 segments of 4 inputs on [-10, 6), ends extended */
    t.segments = 4;
    t.x_base = -10;
    t.seg_shift = 2;
    assert_int_equal(enpu_pwl_segment(&t, -128), 0);
    assert_int_equal(enpu_pwl_segment(&t, -10), 0);
    assert_int_equal(enpu_pwl_segment(&t, -7), 0);
    assert_int_equal(enpu_pwl_segment(&t, -6), 1);
    assert_int_equal(enpu_pwl_segment(&t, 5), 3);
    assert_int_equal(enpu_pwl_segment(&t, 6), 3);
    assert_int_equal(enpu_pwl_segment(&t, 127), 3);
    assert_false(enpu_pwl_is_uniform(&t));
}

static void test_fit_exact_maps(void **state) {
    (void)state;
    int32_t q[256];
    enpu_pwl_table t;
    enpu_err e = {0};
    int max_err, n_err;
    /* identity */
    for (int x = -128; x <= 127; x++) q[x + 128] = x;
    assert_int_equal(enpu_pwl_fit_targets(q, 0, NULL, &t, &e), 0);
    measure(&t, q, &max_err, &n_err);
    assert_int_equal(max_err, 0);
    assert_int_equal(t.segments, ENPU_PWL_SEGMENTS_DEFAULT);
    /* a step on a segment boundary */
    for (int x = -128; x <= 127; x++) q[x + 128] = x < 0 ? -100 : 100;
    assert_int_equal(enpu_pwl_fit_targets(q, 5, NULL, &t, &e), 0);
    measure(&t, q, &max_err, &n_err);
    assert_int_equal(max_err, 0);
    /* one segment, a line with a half-up tie every other input */
    for (int x = -128; x <= 127; x++) q[x + 128] = (int32_t)enpu_div_round(3 * x, 4);
    enpu_pwl_opts one = {1, 20, 0, 0};
    assert_int_equal(enpu_pwl_fit_targets(q, 0, &one, &t, &e), 0);
    measure(&t, q, &max_err, &n_err);
    assert_int_equal(max_err, 0);
    assert_int_equal(t.seg_shift, 8);
    /* 256 segments: any map is exact (a table lookup) */
    uint32_t r = 12345;
    for (int k = 0; k < 256; k++) {
        r = r * 1103515245u + 12345u;
        q[k] = (int32_t)((r >> 16) & 255) - 128;
    }
    enpu_pwl_opts full = {256, 20, 0, 0};
    assert_int_equal(enpu_pwl_fit_targets(q, -7, &full, &t, &e), 0);
    measure(&t, q, &max_err, &n_err);
    assert_int_equal(max_err, 0);
    assert_int_equal(t.seg_shift, 0);
    /* a narrow multiplier still works */
    assert_int_equal(enpu_pwl_fit(enpu_pwl_sigmoid, NULL, 8.0f / 128, 0, 1.0f / 256, -128, 16, 8,
                                  &t, &e),
                     0);
    assert_true(t.M < 256);
    assert_true(t.max_err_lsb <= 2);
}

static double sqrt_fn(double x, const void *ctx) {
    (void)ctx;
    return sqrt(x);
}

static void test_fit_errors(void **state) {
    (void)state;
    int32_t q[256];
    enpu_pwl_table t;
    enpu_err e = {0};
    for (int k = 0; k < 256; k++) q[k] = 0;
    enpu_pwl_opts o = {12, 20, 0, 0};
    assert_int_equal(enpu_pwl_fit_targets(q, 0, &o, &t, &e), ENPU_E_USAGE);
    assert_non_null(strstr(e.msg, "12 segments"));
    enpu_err_clear(&e);
    o.segments = 512;
    assert_int_equal(enpu_pwl_fit_targets(q, 0, &o, &t, &e), ENPU_E_USAGE);
    enpu_err_clear(&e);
    o.segments = 16;
    o.mult_bits = 32;
    assert_int_equal(enpu_pwl_fit_targets(q, 0, &o, &t, &e), ENPU_E_USAGE);
    enpu_err_clear(&e);
    o.mult_bits = 20;
    q[3] = 128;
    assert_int_equal(enpu_pwl_fit_targets(q, 0, &o, &t, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "input -125"));
    enpu_err_clear(&e);
    q[3] = 0;
    assert_int_equal(enpu_pwl_fit_targets(q, 130, &o, &t, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_pwl_fit(sqrt_fn, NULL, 0.1f, 0, 0.1f, 0, 16, 20, &t, &e),
                     ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "input -128"));
    enpu_err_clear(&e);
    assert_int_equal(enpu_pwl_fit(enpu_pwl_tanh, NULL, 0.0f, 0, 0.1f, 0, 16, 20, &t, &e),
                     ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_pwl_fit(enpu_pwl_tanh, NULL, 0.1f, 200, 0.1f, 0, 16, 20, &t, &e),
                     ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_pwl_fit(NULL, NULL, 0.1f, 0, 0.1f, 0, 16, 20, &t, &e), ENPU_E_USAGE);
}

static void test_validate_and_acc(void **state) {
    (void)state;
    enpu_pwl_table t, bad;
    enpu_err e = {0};
    assert_int_equal(
        enpu_pwl_fit(enpu_pwl_tanh, NULL, 8.0f / 128, 0, 2.0f / 256, 0, 16, 20, &t, &e), 0);
    assert_int_equal(enpu_pwl_validate("act3", &t, 20, 0, &e), 0);
    bad = t;
    bad.segments = 12;
    assert_int_equal(enpu_pwl_validate("act3", &bad, 20, 1, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "act3"));
    enpu_err_clear(&e);
    bad = t;
    bad.seg_shift = 3; /* window of 128 at -128: legal only with the window unit */
    assert_int_equal(enpu_pwl_validate("act3", &bad, 20, 1, &e), 0);
    assert_int_equal(enpu_pwl_validate("act3", &bad, 20, 0, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    bad = t;
    bad.x_base = 0; /* window [0, 256) leaves int8 */
    assert_int_equal(enpu_pwl_validate("act3", &bad, 20, 1, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    bad = t;
    bad.M = 1u << 20;
    assert_int_equal(enpu_pwl_validate("act3", &bad, 20, 0, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    bad = t;
    bad.lo = -129;
    assert_int_equal(enpu_pwl_validate("act3", &bad, 20, 0, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    bad = t;
    bad.b[0] = 40000;
    assert_int_equal(enpu_pwl_check_acc("act3", &bad, 24, &e), 0);
    assert_int_equal(enpu_pwl_check_acc("act3", &bad, 16, &e), ENPU_E_NOFIT);
    assert_non_null(strstr(e.msg, "act3"));
}

static void test_narrow_accumulator(void **state) {
    (void)state;
    /* a 16-bit accumulator costs nothing on these tables */
    const struct {
        enpu_pwl_fn fn;
        float s_out;
        int zp_out;
    } cs[] = {{enpu_pwl_tanh, 2.0f / 256, 0},
              {enpu_pwl_sigmoid, 1.0f / 256, -128},
              {enpu_pwl_silu, 8.0f / 256, -116},
              {enpu_pwl_hard_sigmoid, 1.0f / 256, -128}};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        enpu_pwl_table wide, narrow;
        enpu_pwl_opts ow = {16, 20, 0, 0}, on = {16, 20, 0, 16};
        enpu_err e = {0};
        assert_int_equal(enpu_pwl_fit_opts(cs[k].fn, NULL, 8.0f / 128, 0, cs[k].s_out,
                                           cs[k].zp_out, &ow, &wide, &e),
                         0);
        assert_int_equal(enpu_pwl_fit_opts(cs[k].fn, NULL, 8.0f / 128, 0, cs[k].s_out,
                                           cs[k].zp_out, &on, &narrow, &e),
                         0);
        assert_true(narrow.max_err_lsb == wide.max_err_lsb);
        assert_int_equal(narrow.n_err, wide.n_err);
        assert_int_equal(enpu_pwl_check_acc("t", &narrow, 16, &e), 0);
    }
    int32_t q[256] = {0};
    enpu_pwl_opts bad = {16, 20, 0, 8};
    enpu_pwl_table t;
    enpu_err e = {0};
    assert_int_equal(enpu_pwl_fit_targets(q, 0, &bad, &t, &e), ENPU_E_USAGE);
}

static void test_builtin_functions(void **state) {
    (void)state;
    const char *names[] = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Silu",
                           "Swish", "Gelu", "GeluTanh", "Elu", "Softplus", "Mish"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        assert_non_null(enpu_pwl_builtin(names[k]));
    assert_null(enpu_pwl_builtin("Relu7"));
    assert_null(enpu_pwl_builtin(NULL));
    assert_true(enpu_pwl_builtin("Swish") == enpu_pwl_silu);
    assert_true(enpu_pwl_sigmoid(0, NULL) == 0.5);
    assert_true(enpu_pwl_sigmoid(-1000, NULL) == 0.0);
    assert_true(enpu_pwl_sigmoid(1000, NULL) == 1.0);
    assert_true(fabs(enpu_pwl_tanh(0.5, NULL) - 0.46211715726000974) < 1e-15);
    assert_true(enpu_pwl_hard_sigmoid(0, NULL) == 0.5);
    assert_true(enpu_pwl_hard_sigmoid(3, NULL) == 1.0);
    assert_true(enpu_pwl_hard_sigmoid(-3, NULL) == 0.0);
    enpu_pwl_params hs = {0.25, 0.5};
    assert_true(enpu_pwl_hard_sigmoid(1, &hs) == 0.75);
    assert_true(enpu_pwl_hard_swish(3, NULL) == 3.0);
    assert_true(enpu_pwl_hard_swish(-3, NULL) == 0.0);
    assert_true(enpu_pwl_hard_swish(1, NULL) == 1.0 * (1.0 / 6.0 + 0.5));
    assert_true(enpu_pwl_leaky_relu(-2, NULL) == -0.02);
    enpu_pwl_params lr = {0.1, 0};
    assert_true(enpu_pwl_leaky_relu(-2, &lr) == -0.2);
    assert_true(enpu_pwl_leaky_relu(2, &lr) == 2.0);
    assert_true(fabs(enpu_pwl_silu(1, NULL) - 0.7310585786300049) < 1e-15);
    assert_true(fabs(enpu_pwl_gelu(1, NULL) - 0.8413447460685429) < 1e-15);
    assert_true(fabs(enpu_pwl_gelu_tanh(1, NULL) - 0.8411919906082768) < 1e-15);
    assert_true(enpu_pwl_gelu(0, NULL) == 0.0);
    assert_true(fabs(enpu_pwl_elu(-1, NULL) - (exp(-1) - 1)) < 1e-15);
    enpu_pwl_params el = {2.0, 0};
    assert_true(fabs(enpu_pwl_elu(-1, &el) - 2 * (exp(-1) - 1)) < 1e-15);
    assert_true(fabs(enpu_pwl_softplus(0, NULL) - log(2.0)) < 1e-15);
    assert_true(enpu_pwl_softplus(1000, NULL) == 1000.0);
    assert_true(enpu_pwl_softplus(-1000, NULL) == 0.0);
    assert_true(enpu_pwl_mish(0, NULL) == 0.0);
    assert_true(fabs(enpu_pwl_mish(1, NULL) - 0.8650983882673103) < 1e-15);

    /* a parameterised built-in through the fit */
    float s_out;
    int32_t zp_out;
    calibrated_out(enpu_pwl_leaky_relu, &lr, 8.0f / 128, 0, &s_out, &zp_out);
    enpu_pwl_table t;
    enpu_err e = {0};
    assert_int_equal(
        enpu_pwl_fit(enpu_pwl_leaky_relu, &lr, 8.0f / 128, 0, s_out, zp_out, 16, 20, &t, &e), 0);
    int32_t q[256];
    assert_int_equal(enpu_pwl_targets(enpu_pwl_leaky_relu, &lr, 8.0f / 128, 0, s_out, zp_out, q,
                                      &e),
                     0);
    int max_err, n_err;
    measure(&t, q, &max_err, &n_err);
    assert_int_equal(max_err, 0); /* the kink sits on a segment boundary */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_by_hand),
        cmocka_unit_test(test_fit_exact_maps),
        cmocka_unit_test(test_fit_errors),
        cmocka_unit_test(test_validate_and_acc),
        cmocka_unit_test(test_builtin_functions),
        cmocka_unit_test(test_narrow_accumulator),
        cmocka_unit_test(test_builtin_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
