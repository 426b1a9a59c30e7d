/* TFLite's integer arithmetic (requant "tflite", docs/numerics.md §10)
 * against values derived by hand at the rounding edges: ties of both signs,
 * double rounding, saturation, flushed multipliers.  The same primitives
 * against an independent implementation (Debian's gemmlowp headers) are in
 * test_tfl_gemmlowp.cpp. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "easynpu/numerics.h"

static void test_srdhm_ties_and_saturation(void **state) {
    (void)state;
    /* a*b / 2^31, ties toward +infinity */
    assert_int_equal(enpu_tfl_srdhm(1 << 30, 1 << 30), 1 << 29);  /* exact */
    assert_int_equal(enpu_tfl_srdhm(1 << 15, 1 << 15), 1);        /* 0.5 -> 1 */
    assert_int_equal(enpu_tfl_srdhm(-(1 << 15), 1 << 15), 0);     /* -0.5 -> 0 */
    assert_int_equal(enpu_tfl_srdhm(3 << 15, 1 << 15), 2);        /* 1.5 -> 2 */
    assert_int_equal(enpu_tfl_srdhm(-(3 << 15), 1 << 15), -1);    /* -1.5 -> -1 */
    assert_int_equal(enpu_tfl_srdhm(-(5 << 14), 1 << 15), -1);    /* -1.25 -> -1 */
    assert_int_equal(enpu_tfl_srdhm(-(7 << 14), 1 << 15), -2);    /* -1.75 -> -2 */
    /* the one overflow saturates; the other extreme does not */
    assert_int_equal(enpu_tfl_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
    assert_int_equal(enpu_tfl_srdhm(INT32_MIN, INT32_MAX), -2147483647);
    assert_int_equal(enpu_tfl_srdhm(INT32_MAX, INT32_MAX), 2147483646);
}

static void test_rdbpot_ties_away(void **state) {
    (void)state;
    /* the EasyNPU table of docs/numerics.md §2.2, in TFLite's rule */
    assert_int_equal(enpu_tfl_rdbpot(5, 1), 3);   /* 2.5 */
    assert_int_equal(enpu_tfl_rdbpot(-5, 1), -3); /* -2.5: EasyNPU gives -2 */
    assert_int_equal(enpu_tfl_rdbpot(3, 1), 2);
    assert_int_equal(enpu_tfl_rdbpot(-3, 1), -2); /* -1.5: EasyNPU -1 */
    assert_int_equal(enpu_tfl_rdbpot(-1, 1), -1); /* -0.5: EasyNPU 0 */
    assert_int_equal(enpu_tfl_rdbpot(-7, 2), -2); /* -1.75 */
    assert_int_equal(enpu_tfl_rdbpot(-5, 2), -1); /* -1.25 */
    assert_int_equal(enpu_tfl_rdbpot(-6, 2), -2); /* -1.5 */
    assert_int_equal(enpu_tfl_rdbpot(6, 2), 2);   /* 1.5 */
    assert_int_equal(enpu_tfl_rdbpot(17, 0), 17);
    assert_int_equal(enpu_tfl_rdbpot(INT32_MIN, 31), -1);
    assert_int_equal(enpu_tfl_rdbpot(INT32_MAX, 31), 1);
}

static void test_requant_double_rounding(void **state) {
    (void)state;
    /* real 0.5 = (2^30, S 31): SRDHM alone, its ties toward +infinity */
    assert_int_equal(enpu_requant_tfl(5, 1u << 30, 31, 0, -128, 127), 3);   /* 2.5 */
    assert_int_equal(enpu_requant_tfl(-5, 1u << 30, 31, 0, -128, 127), -2); /* -2.5 */
    /* real 0.25 = (2^30, S 32): SRDHM then RDBPOT by 1, rounding twice:
     * 1 * 0.25 = 0.25 is 1 (0.5 -> 1, then 0.5 -> 1), not 0 */
    assert_int_equal(enpu_requant_tfl(1, 1u << 30, 32, 0, -128, 127), 1);
    assert_int_equal(enpu_requant(1, 1u << 20, 22, 0, -128, 127), 0); /* EasyNPU: once */
    assert_int_equal(enpu_requant_tfl(-1, 1u << 30, 32, 0, -128, 127), 0); /* -0.5 -> 0 -> 0 */
    assert_int_equal(enpu_requant_tfl(-3, 1u << 30, 32, 0, -128, 127), -1); /* -1.5 -> -1 -> -0.5 -> -1 */
    assert_int_equal(enpu_requant_tfl(-5, 1u << 30, 32, 0, -128, 127), -1); /* -2.5 -> -2 -> -1 */
    assert_int_equal(enpu_requant_tfl(3, 1u << 30, 32, 0, -128, 127), 1);   /* 0.75 */
    /* left shift (real 2 = (2^30, S 29)), zero point after the rounding,
     * clamp last */
    assert_int_equal(enpu_requant_tfl(3, 1u << 30, 29, 0, -128, 127), 6);
    assert_int_equal(enpu_requant_tfl(-100, 1u << 30, 29, 10, -128, 127), -128);
    assert_int_equal(enpu_requant_tfl(5, 1u << 30, 32, -128, -128, 127), -126); /* 1.25 -> 3 -> 2 */
    assert_int_equal(enpu_requant_tfl(1000, 1u << 30, 31, 0, -20, 20), 20);
    /* S 0 is the bypass (max pool's M 1, S 0): no shift, no rounding */
    assert_int_equal(enpu_requant_tfl(-7, 1, 0, 3, -128, 127), -4);
    assert_int_equal(enpu_requant_as(ENPU_REQUANT_TFLITE, -3, 1u << 30, 32, 0, -128, 127), -1);
    assert_int_equal(enpu_requant_as(ENPU_REQUANT_EASYNPU, -3, 1, 2, 0, -128, 127), -1);
    /* MultiplyByQuantizedMultiplier in TFLite's (q, shift) convention */
    assert_int_equal(enpu_tfl_mbqm(-3, 1 << 30, -1), -1);
    assert_int_equal(enpu_tfl_mbqm(3, 1 << 30, 2), 6);
    /* a flushed multiplier (M 0) gives the zero point */
    assert_int_equal(enpu_requant_tfl(123456, 0, 31, -7, -128, 127), -7);
}

static void test_quantize_multiplier(void **state) {
    (void)state;
    uint32_t M;
    int S;
    int32_t q;
    int sh;
    enpu_err err = {0};
    assert_int_equal(enpu_tfl_multiplier(0.5, "t", &M, &S, &err), 0);
    assert_int_equal(M, 1u << 30);
    assert_int_equal(S, 31);
    assert_int_equal(enpu_tfl_multiplier(1.0, "t", &M, &S, &err), 0);
    assert_int_equal(M, 1u << 30);
    assert_int_equal(S, 30);
    assert_int_equal(enpu_tfl_multiplier(0.1, "t", &M, &S, &err), 0);
    assert_int_equal(M, 1717986918u); /* round(0.8 * 2^31) */
    assert_int_equal(S, 34);
    /* ties away from zero: 0.5 + 2^-32 -> f * 2^31 = 2^30 + 0.5 -> 2^30 + 1 */
    assert_int_equal(enpu_tfl_multiplier(0.5 + ldexp(1, -32), "t", &M, &S, &err), 0);
    assert_int_equal(M, (1u << 30) + 1);
    /* rounding carries to 2^31: renormalized with one bit less of shift */
    assert_int_equal(enpu_tfl_quantize_multiplier(1.0 - ldexp(1, -33), "t", &q, &sh, &err), 0);
    assert_int_equal(q, 1 << 30);
    assert_int_equal(sh, 1);
    /* shift -31 is the last kept; below, flushed to zero */
    assert_int_equal(enpu_tfl_multiplier(ldexp(1, -32), "t", &M, &S, &err), 0);
    assert_int_equal(M, 1u << 30);
    assert_int_equal(S, 62);
    assert_int_equal(enpu_tfl_multiplier(ldexp(1, -33), "t", &M, &S, &err), 0);
    assert_int_equal(M, 0);
    assert_int_equal(S, 31);
    assert_int_equal(enpu_tfl_multiplier(0.0, "t", &M, &S, &err), 0);
    assert_int_equal(M, 0);
    assert_int_equal(enpu_tfl_multiplier(-1.0, "t", &M, &S, &err), ENPU_E_INVALID);
    enpu_err_clear(&err);
    assert_int_equal(enpu_tfl_multiplier(NAN, "t", &M, &S, &err), ENPU_E_INVALID);
    enpu_err_clear(&err);
    assert_int_equal(enpu_tfl_multiplier(ldexp(1, 31), "conv1", &M, &S, &err), ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "conv1"));
}

static void test_quantize_and_act_range(void **state) {
    (void)state;
    /* float -> int8: ties away from zero (ONNX rounds half to even) */
    assert_int_equal(enpu_tfl_quantize(0.5f, 1.0f, 0), 1);
    assert_int_equal(enpu_quantize(0.5f, 1.0f, 0, -128, 127), 0);
    assert_int_equal(enpu_tfl_quantize(-0.5f, 1.0f, 0), -1);
    assert_int_equal(enpu_tfl_quantize(2.5f, 1.0f, 0), 3);
    assert_int_equal(enpu_tfl_quantize(-2.5f, 1.0f, 3), 0);
    assert_int_equal(enpu_tfl_quantize(1000.0f, 1.0f, 0), 127);
    assert_int_equal(enpu_tfl_quantize(-1e30f, 1.0f, 0), -128);
    assert_int_equal(enpu_tfl_quantize(NAN, 1.0f, 5), 5);
    int32_t lo, hi;
    enpu_err err = {0};
    assert_int_equal(enpu_tfl_act_range(0, 0.05f, -10, "t", &lo, &hi, &err), 0);
    assert_int_equal(lo, -128);
    assert_int_equal(hi, 127);
    assert_int_equal(enpu_tfl_act_range(1, 0.05f, -10, "t", &lo, &hi, &err), 0); /* RELU */
    assert_int_equal(lo, -10);
    assert_int_equal(hi, 127);
    assert_int_equal(enpu_tfl_act_range(3, 0.05f, -10, "t", &lo, &hi, &err), 0); /* RELU6 */
    assert_int_equal(lo, -10);
    assert_int_equal(hi, 110);
    assert_int_equal(enpu_tfl_act_range(2, 0.05f, -10, "t", &lo, &hi, &err), 0); /* N1_TO_1 */
    assert_int_equal(lo, -30);
    assert_int_equal(hi, 10);
    /* +-1 / 2 = +-0.5: ties away from zero (half to even would give 0..0) */
    assert_int_equal(enpu_tfl_act_range(2, 2.0f, 0, "t", &lo, &hi, &err), 0);
    assert_int_equal(lo, -1);
    assert_int_equal(hi, 1);
    assert_int_equal(enpu_tfl_act_range(3, 0.01f, -128, "t", &lo, &hi, &err), 0);
    assert_int_equal(lo, -128);
    assert_int_equal(hi, 127); /* 6 / 0.01 = 600 saturates */
    assert_int_equal(enpu_tfl_act_range(4, 0.01f, 0, "op7", &lo, &hi, &err), ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "op7"));
}

static void test_add_rule(void **state) {
    (void)state;
    uint32_t A[2], M;
    int SA[2], S;
    enpu_err err = {0};
    assert_int_equal(enpu_tfl_add_params(0.5f, 0.25f, 1.0f, "t", A, SA, &M, &S, &err), 0);
    /* common scale 2 * 0.5: multipliers 0.5 and 0.25; output 1 / 2^20 */
    assert_int_equal(A[0], 1u << 30);
    assert_int_equal(SA[0], 31);
    assert_int_equal(A[1], 1u << 30);
    assert_int_equal(SA[1], 32);
    assert_int_equal(M, 1u << 30);
    assert_int_equal(S, 50);
#define ADD(x0, x1) \
    enpu_requant_tfl(enpu_tfl_add_term(x0, A[0], SA[0]) + enpu_tfl_add_term(x1, A[1], SA[1]), M, S, 0, -128, 127)
    assert_int_equal(enpu_tfl_add_term(3, A[0], SA[0]), 3 << 19);
    assert_int_equal(enpu_tfl_add_term(1, A[1], SA[1]), 1 << 18);
    assert_int_equal(ADD(3, 1), 2);   /* 1.5 + 0.25 = 1.75 */
    assert_int_equal(ADD(1, 0), 1);   /* 0.5: the output rounds ties away from zero */
    assert_int_equal(ADD(-1, 0), -1); /* -0.5 */
    assert_int_equal(ADD(0, 2), 1);   /* 0.5 */
    assert_int_equal(ADD(0, -2), -1); /* -0.5 */
    assert_int_equal(ADD(0, -1), 0);  /* -0.25 */
    assert_int_equal(ADD(127, 127), 95);
    assert_int_equal(ADD(-128, -128), -96);
#undef ADD
    assert_int_equal(enpu_tfl_add_params(0.5f, 0.0f, 1.0f, "t", A, SA, &M, &S, &err), ENPU_E_INVALID);
}

static void test_avgpool_rule(void **state) {
    (void)state;
    /* TFLite's rounding division */
    assert_int_equal(enpu_tfl_avg_round(5, 2), 3);
    assert_int_equal(enpu_tfl_avg_round(-5, 2), -3);
    assert_int_equal(enpu_tfl_avg_round(7, 4), 2);
    assert_int_equal(enpu_tfl_avg_round(-6, 4), -2);
    assert_int_equal(enpu_tfl_avg_round(-7, 4), -2);
    assert_int_equal(enpu_tfl_avg_round(4, 3), 1);
    assert_int_equal(enpu_tfl_avg_round(-5, 3), -2);
    assert_int_equal(enpu_tfl_avg_round(0, 9), 0);
    /* the requantizer with enpu_tfl_avgpool_multiplier computes exactly that:
     * every sum of n int8 values for every n up to 300, and the largest n */
    enpu_err err = {0};
    uint32_t M;
    int S;
    for (int n = 1; n <= 300; n++) {
        assert_int_equal(enpu_tfl_avgpool_multiplier(n, "t", &M, &S, &err), 0);
        for (int32_t sum = -128 * n; sum <= 127 * n; sum++)
            if (enpu_requant_tfl(sum, M, S, 0, INT32_MIN, INT32_MAX) != enpu_tfl_avg_round(sum, n))
                fail_msg("n=%d sum=%d: %d, TFLite %d", n, sum,
                         enpu_requant_tfl(sum, M, S, 0, INT32_MIN, INT32_MAX),
                         enpu_tfl_avg_round(sum, n));
    }
    static const int big[] = {512, 1024, 2048, 2025, 2895, ENPU_TFL_AVGPOOL_MAX_N};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        int n = big[i];
        assert_int_equal(enpu_tfl_avgpool_multiplier(n, "t", &M, &S, &err), 0);
        for (int32_t sum = -128 * n; sum <= 127 * n; sum++)
            if (enpu_requant_tfl(sum, M, S, 0, INT32_MIN, INT32_MAX) != enpu_tfl_avg_round(sum, n))
                fail_msg("n=%d sum=%d", n, sum);
    }
    /* 64 is a power of two: M = 2^31/64 exactly would round -(j + 1/2) to
     * -j; one more ulp sends every negative tie away from zero */
    assert_int_equal(enpu_tfl_avgpool_multiplier(64, "t", &M, &S, &err), 0);
    assert_int_equal(M, (1u << 25) + 1);
    assert_int_equal(enpu_requant_tfl(-32, M, S, 0, -128, 127), -1);
    assert_int_equal(enpu_requant_tfl(32, M, S, 0, -128, 127), 1);
    assert_int_equal(enpu_requant_tfl(-32, 1u << 25, S, 0, -128, 127), 0); /* the exact one fails */
    assert_int_equal(enpu_tfl_avgpool_multiplier(ENPU_TFL_AVGPOOL_MAX_N + 1, "pool", &M, &S, &err),
                     ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "pool"));
}

static void test_mean_multiplier(void **state) {
    (void)state;
    uint32_t M;
    int S;
    enpu_err err = {0};
    /* same scales, 64 elements: 2^30 / 2^36 = 1/64 */
    assert_int_equal(enpu_tfl_mean_multiplier(0.1f, 0.1f, 64, "t", &M, &S, &err), 0);
    assert_int_equal(M, 1u << 30);
    assert_int_equal(S, 36);
    /* 3 elements: (2^30 << 1) / 3 truncated, no extra shift */
    assert_int_equal(enpu_tfl_mean_multiplier(0.1f, 0.1f, 3, "t", &M, &S, &err), 0);
    assert_int_equal(M, 715827882u);
    assert_int_equal(S, 31);
    /* mean of (1, 2, 2) - zp: 5/3 -> 2 */
    assert_int_equal(enpu_requant_tfl(5, M, S, 0, -128, 127), 2);
    assert_int_equal(enpu_requant_tfl(-4, M, S, 0, -128, 127), -1); /* -1.33 */
}

static void test_kernels_edges(void **state) {
    (void)state;
    enpu_tfl_kparams p;
    enpu_err err = {0};
    /* logistic(0) = 0.5 = (0 + 128) / 256 */
    assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_LOGISTIC, 0.1f, 3, 1.0f / 256, -128, "t", &p,
                                             &err), 0);
    assert_int_equal(enpu_tfl_kernel_eval(&p, 3), 0);
    assert_int_equal(enpu_tfl_kernel_eval(&p, 127), 127);   /* 12.4: saturated */
    assert_int_equal(enpu_tfl_kernel_eval(&p, -128), -128);
    assert_int_equal(enpu_tfl_logistic_q(0, 4), 1 << 30);
    /* tanh(0) = 0 */
    assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_TANH, 0.1f, -5, 1.0f / 128, 0, "t", &p, &err),
                     0);
    assert_int_equal(enpu_tfl_kernel_eval(&p, -5), 0);
    assert_int_equal(enpu_tfl_kernel_eval(&p, 127), 127);
    assert_int_equal(enpu_tfl_kernel_eval(&p, -128), -128);
    assert_int_equal(enpu_tfl_tanh_q(0, 4), 0);
    assert_int_equal(enpu_tfl_exp_on_negative_values(0, 5), INT32_MAX);
    /* hard swish(0) = 0 */
    assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_HARD_SWISH, 0.05f, 7, 0.03f, -20, "t", &p,
                                             &err), 0);
    assert_int_equal(enpu_tfl_kernel_eval(&p, 7), -20);
    /* softmax: one value far above the rest takes everything (saturates to
     * 127), the others are below diff_min (-128); four equal values 1/4 */
    assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_SOFTMAX, 1.0f, 0, 1.0f / 256, -128, "t", &p,
                                             &err), 0);
    int8_t x[4] = {127, -128, -128, -128}, y[4];
    enpu_tfl_softmax(&p, x, y, 4, 1);
    assert_int_equal(y[0], 127);
    assert_int_equal(y[1], -128);
    int8_t e[4] = {9, 9, 9, 9};
    enpu_tfl_softmax(&p, e, y, 4, 1);
    for (int i = 0; i < 4; i++) assert_int_equal(y[i], -64);
    /* strided: the same row spread over every other element */
    int8_t s[8] = {9, 1, 9, 1, 9, 1, 9, 1}, t[8] = {0};
    enpu_tfl_softmax(&p, s, t, 4, 2);
    assert_int_equal(t[0], -64);
    assert_int_equal(t[6], -64);
    assert_int_equal(t[1], 0);
    /* what TFLite refuses */
    assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_SOFTMAX, 1.0f, 0, 1.0f / 128, -128, "sm", &p,
                                             &err), ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "sm"));
    enpu_err_clear(&err);
    assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_LOGISTIC, 0.1f, 0, 1.0f / 256, 0, "lg", &p,
                                             &err), ENPU_E_UNSUPPORTED);
}

static void test_requant_names(void **state) {
    (void)state;
    assert_string_equal(enpu_requant_name(ENPU_REQUANT_EASYNPU), "easynpu");
    assert_string_equal(enpu_requant_name(ENPU_REQUANT_TFLITE), "tflite");
    assert_int_equal(enpu_requant_parse("tflite"), ENPU_REQUANT_TFLITE);
    assert_int_equal(enpu_requant_parse("TFLite"), -1);
    assert_int_equal(enpu_requant_parse(NULL), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_srdhm_ties_and_saturation),
        cmocka_unit_test(test_rdbpot_ties_away),
        cmocka_unit_test(test_requant_double_rounding),
        cmocka_unit_test(test_quantize_multiplier),
        cmocka_unit_test(test_quantize_and_act_range),
        cmocka_unit_test(test_add_rule),
        cmocka_unit_test(test_avgpool_rule),
        cmocka_unit_test(test_mean_multiplier),
        cmocka_unit_test(test_kernels_edges),
        cmocka_unit_test(test_requant_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
