/* Numerics: requantization, rounding, saturation, accumulator bounds,
 * multiplier conversion and quantization parameters, with exact values. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/numerics.h"

/* Deterministic PRNG (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static double rng_unit(void) { return (double)(rng() >> 11) * 0x1.0p-53; }

/* Reference requant written independently: quotient and remainder of
 * acc*M by 2^S, then "round half up" decided by comparing 2*rem with 2^S. */
static int64_t ref_round_half_up(int64_t p, int S) {
    if (S == 0) return p;
    if (S == 63) /* |p| < 2^62 here: p / 2^63 lies in (-1/2, 1/2) */
        return 0;
    int64_t D = (int64_t)1 << S;
    int64_t q = p / D, r = p % D; /* truncating; make it floor */
    if (r < 0) {
        q -= 1;
        r += D;
    }
    return (r >= D - r) ? q + 1 : q; /* remainder >= half: up */
}

static void test_requant_ties_both_signs(void **state) {
    (void)state;
    /* x = acc*M / 2^S; ties go toward +infinity for both signs */
    assert_int_equal(enpu_requant(5, 1, 1, 0, -1000, 1000), 3);    /* 2.5 -> 3 */
    assert_int_equal(enpu_requant(-5, 1, 1, 0, -1000, 1000), -2);  /* -2.5 -> -2 */
    assert_int_equal(enpu_requant(3, 1, 1, 0, -1000, 1000), 2);    /* 1.5 -> 2 */
    assert_int_equal(enpu_requant(-3, 1, 1, 0, -1000, 1000), -1);  /* -1.5 -> -1 */
    assert_int_equal(enpu_requant(1, 1, 1, 0, -1000, 1000), 1);    /* 0.5 -> 1 */
    assert_int_equal(enpu_requant(-1, 1, 1, 0, -1000, 1000), 0);   /* -0.5 -> 0 */
    assert_int_equal(enpu_requant(10, 3, 2, 0, -1000, 1000), 8);   /* 7.5 -> 8 */
    assert_int_equal(enpu_requant(-10, 3, 2, 0, -1000, 1000), -7); /* -7.5 -> -7 */
    /* not ties: nearest */
    assert_int_equal(enpu_requant(-7, 1, 2, 0, -1000, 1000), -2); /* -1.75 */
    assert_int_equal(enpu_requant(-5, 1, 2, 0, -1000, 1000), -1); /* -1.25 */
    assert_int_equal(enpu_requant(7, 1, 2, 0, -1000, 1000), 2);   /* 1.75 */
    assert_int_equal(enpu_requant(5, 1, 2, 0, -1000, 1000), 1);   /* 1.25 */
    /* a realistic tie: acc*M = 3 * 2^19 exactly at S = 20 -> 1.5 -> 2 */
    assert_int_equal(enpu_requant(3, 1u << 19, 20, 0, -128, 127), 2);
    assert_int_equal(enpu_requant(-3, 1u << 19, 20, 0, -128, 127), -1);
    /* zero point is added after the rounding */
    assert_int_equal(enpu_requant(5, 1, 1, -128, -128, 127), -125);
    assert_int_equal(enpu_requant(-5, 1, 1, 10, -128, 127), 8);
}

static void test_requant_shift_limits(void **state) {
    (void)state;
    /* S = 0: no rounding term, plain product */
    assert_int_equal(enpu_requant(-7, 3, 0, 0, -1000, 1000), -21);
    assert_int_equal(enpu_requant(7, 3, 0, 5, -1000, 1000), 26);
    assert_int_equal(enpu_rshift_round(-7, 0), -7);
    /* the extremes of the int64 contract: |acc| <= 2^31, M = 2^31 - 1 */
    const uint32_t Mmax31 = 0x7FFFFFFFu;
    /* S = 62: (-2^62 + 2^31 + 2^61) >> 62 = -1; (2^62 - 2^32 + 1 + 2^61) >> 62 = 1 */
    assert_int_equal(enpu_requant(INT32_MIN, Mmax31, 62, 0, INT32_MIN, INT32_MAX), -1);
    assert_int_equal(enpu_requant(INT32_MAX, Mmax31, 62, 0, INT32_MIN, INT32_MAX), 1);
    /* S = 63: |acc*M| < 2^62, so everything rounds to 0 without overflow */
    assert_int_equal(enpu_requant(INT32_MIN, Mmax31, 63, 0, INT32_MIN, INT32_MAX), 0);
    assert_int_equal(enpu_requant(INT32_MAX, Mmax31, 63, 7, INT32_MIN, INT32_MAX), 7);
    assert_int_equal(enpu_rshift_round(-((int64_t)1 << 62), 63), 0);  /* -0.5 -> 0 */
    assert_int_equal(enpu_rshift_round(((int64_t)1 << 62) - 1, 63), 0); /* 0.4999 -> 0 */
    assert_int_equal(enpu_rshift_round(-((int64_t)1 << 62) - 1, 63), -1);
    /* M at its maximum for the default 20-bit multiplier */
    const uint32_t Mmax20 = (1u << 20) - 1;
    assert_int_equal(enpu_requant(1000, Mmax20, 20, 0, INT32_MIN, INT32_MAX), 1000);
    assert_int_equal(enpu_requant(-1000, Mmax20, 20, 0, INT32_MIN, INT32_MAX), -1000);
    /* 2^31-1 * (2^20-1) / 2^20 = 2147481599.000976 -> 2147481599 */
    assert_int_equal(enpu_requant(INT32_MAX, Mmax20, 20, 0, INT32_MIN, INT32_MAX), 2147481599);
    assert_int_equal(enpu_requant(INT32_MIN, Mmax20, 20, 0, INT32_MIN, INT32_MAX), -2147481600);
}

static void test_requant_saturation_and_clamps(void **state) {
    (void)state;
    assert_int_equal(enpu_requant(1000000, 1u << 19, 20, 0, -128, 127), 127);
    assert_int_equal(enpu_requant(-1000000, 1u << 19, 20, 0, -128, 127), -128);
    assert_int_equal(enpu_requant(INT32_MAX, (1u << 20) - 1, 0, 127, -128, 127), 127);
    assert_int_equal(enpu_requant(INT32_MIN, (1u << 20) - 1, 0, -128, -128, 127), -128);
    /* fused ReLU: lo = zp_out; ReLU6 with s_out = 6/255, zp = -128: hi = 127 */
    assert_int_equal(enpu_requant(-50, 1, 0, -20, -20, 127), -20);
    assert_int_equal(enpu_requant(50, 1, 0, -20, -20, 127), 30);
    /* bounded clamp [0, 100] */
    assert_int_equal(enpu_requant(250, 1, 1, 0, 0, 100), 100);
    assert_int_equal(enpu_requant(199, 1, 1, 0, 0, 100), 100);
    assert_int_equal(enpu_requant(198, 1, 1, 0, 0, 100), 99);
    assert_int_equal(enpu_requant(-1, 1, 1, 0, 0, 100), 0);
    enpu_rq rq = {3, 2, 1, -5, 5};
    assert_int_equal(enpu_requant_rq(10, &rq), 5);  /* 7.5 -> 8, +1 -> 9 -> 5 */
    assert_int_equal(enpu_requant_rq(-2, &rq), 0);  /* -1.5 -> -1, +1 -> 0 */
}

static void test_requant_random_vs_reference(void **state) {
    (void)state;
    for (int it = 0; it < 200000; it++) {
        int64_t acc = (int64_t)(int32_t)(uint32_t)rng();
        if (it & 1) acc /= (int64_t)1 << (rng() % 31); /* small magnitudes too */
        int mb = 1 + (int)(rng() % 31);
        uint32_t M = (uint32_t)(rng() & ((1ull << mb) - 1));
        int S = (int)(rng() % 64);
        int64_t want = ref_round_half_up(acc * (int64_t)M, S) + 3;
        int64_t lo = INT32_MIN, hi = INT32_MAX;
        if (want < lo) want = lo;
        if (want > hi) want = hi;
        int32_t got = enpu_requant(acc, M, S, 3, INT32_MIN, INT32_MAX);
        if (got != want) {
            fprintf(stderr, "acc=%lld M=%u S=%d: got %d want %lld\n", (long long)acc,
                    (unsigned)M, S, got, (long long)want);
            fail();
        }
    }
}

static void test_shift_and_division_helpers(void **state) {
    (void)state;
    assert_int_equal(enpu_asr64(-1, 1), -1);
    assert_int_equal(enpu_asr64(-3, 1), -2);
    assert_int_equal(enpu_asr64(3, 1), 1);
    assert_true(enpu_asr64(INT64_MIN, 63) == -1);
    assert_true(enpu_asr64(INT64_MAX, 63) == 0);
    assert_int_equal(enpu_floor_div(-7, 2), -4);
    assert_int_equal(enpu_floor_div(7, 2), 3);
    assert_int_equal(enpu_floor_div(-8, 2), -4);
    assert_int_equal(enpu_div_round(5, 2), 3);    /* 2.5 */
    assert_int_equal(enpu_div_round(-5, 2), -2);  /* -2.5 */
    assert_int_equal(enpu_div_round(7, 2), 4);    /* 3.5 */
    assert_int_equal(enpu_div_round(-7, 2), -3);  /* -3.5 */
    assert_int_equal(enpu_div_round(-1, 3), 0);   /* -0.33 */
    assert_int_equal(enpu_div_round(-2, 3), -1);  /* -0.67 */
    assert_int_equal(enpu_div_round(2, 3), 1);
    assert_int_equal(enpu_div_round(-9, 9), -1);
    for (int a = -50; a <= 50; a++)
        for (int b = 1; b <= 9; b++)
            assert_int_equal(enpu_div_round(a, b), (int64_t)floor((double)a / b + 0.5));
}

static void test_saturation_helpers(void **state) {
    (void)state;
    assert_int_equal(enpu_sat_i8(200), 127);
    assert_int_equal(enpu_sat_i8(-200), -128);
    assert_int_equal(enpu_sat_i8(-128), -128);
    assert_int_equal(enpu_sat_i8(127), 127);
    assert_int_equal(enpu_sat_u8(-1), 0);
    assert_int_equal(enpu_sat_u8(256), 255);
    assert_int_equal(enpu_sat_i32((int64_t)1 << 40), INT32_MAX);
    assert_int_equal(enpu_sat_i32(-((int64_t)1 << 40)), INT32_MIN);
    assert_int_equal(enpu_sat_add_i32(INT32_MAX, 1), INT32_MAX);
    assert_int_equal(enpu_sat_add_i32(INT32_MIN, -1), INT32_MIN);
    assert_int_equal(enpu_sat_add_i32(INT32_MAX, INT32_MIN), -1);
    assert_int_equal(enpu_sat_bits((int64_t)1 << 30, 26), (1 << 25) - 1);
    assert_int_equal(enpu_sat_bits(-((int64_t)1 << 30), 26), -(1 << 25));
    assert_int_equal(enpu_clamp64(5, -3, 3), 3);
}

static void test_acc_width(void **state) {
    (void)state;
    const int64_t lim = (int64_t)1 << 25;
    assert_true(enpu_acc_fits(lim - 1, 26));
    assert_false(enpu_acc_fits(lim, 26));
    assert_true(enpu_acc_fits(-lim, 26));
    assert_false(enpu_acc_fits(-lim - 1, 26));
    assert_true(enpu_acc_fits(INT32_MIN, 32));
    assert_false(enpu_acc_fits((int64_t)INT32_MAX + 1, 32));

    /* 2048 terms of 128*128 = 2^25: one past a 26-bit accumulator */
    assert_true(enpu_acc_bound(2048, 128, 128, 0) == lim);
    enpu_err e = {0};
    assert_int_equal(enpu_acc_check_bound("conv3", 2048, 128, 128, 0, 26, &e), ENPU_E_NOFIT);
    assert_non_null(strstr(e.msg, "conv3"));
    assert_non_null(strstr(e.msg, "26-bit"));
    /* exactly at the limit: 2047*2^14 + 16383 = 2^25 - 1 passes */
    enpu_err_clear(&e);
    assert_true(enpu_acc_bound(2047, 128, 128, 16383) == lim - 1);
    assert_int_equal(enpu_acc_check_bound("fc1", 2047, 128, 128, 16383, 26, &e), 0);
    assert_int_equal(enpu_acc_check_bound("fc1", 2047, 128, 128, 16384, 26, &e), ENPU_E_NOFIT);
    enpu_err_clear(&e);
    assert_int_equal(enpu_acc_check("x", -lim, lim - 1, 26, &e), 0);
    assert_int_equal(enpu_acc_check("x", -lim - 1, 0, 26, &e), ENPU_E_NOFIT);
    enpu_err_clear(&e);
    assert_int_equal(enpu_acc_check("x", 0, 0, 8, &e), ENPU_E_USAGE);
    /* saturating, never overflowing */
    assert_true(enpu_acc_bound(INT64_MAX, 128, 128, INT64_MAX) == INT64_MAX);
    assert_true(enpu_acc_bound(-5, 128, 128, 7) == 7);

    /* exact range from the weights */
    const int8_t w[4] = {127, -128, 0, 5};
    int64_t lo, hi;
    enpu_acc_range(w, 4, 1, -128, 127, 100, &lo, &hi);
    assert_true(lo == -16256 - 16256 - 640);  /* 127*-128, -128*127, 5*-128 */
    assert_true(hi == 100 + 16129 + 16384 + 635);
    /* brute force over all partial sums of a small case, both bias orders */
    const int8_t w2[3] = {3, -2, 1};
    int64_t blo = 0, bhi = 0;
    for (int x0 = -2; x0 <= 1; x0++)
        for (int x1 = -2; x1 <= 1; x1++)
            for (int x2 = -2; x2 <= 1; x2++) {
                int64_t terms[3] = {3 * x0, -2 * x1, x2};
                for (int mask = 0; mask < 16; mask++) { /* subset incl. bias bit 3 */
                    int64_t sum = (mask & 8) ? -4 : 0;
                    for (int k = 0; k < 3; k++)
                        if (mask & (1 << k)) sum += terms[k];
                    if (sum < blo) blo = sum;
                    if (sum > bhi) bhi = sum;
                }
            }
    enpu_acc_range(w2, 3, 1, -2, 1, -4, &lo, &hi);
    assert_true(lo == blo);
    assert_true(hi == bhi);
    /* strided access (weights [Ci][Co] layout, one column) */
    const int8_t w3[6] = {1, 100, 2, 100, 3, 100};
    enpu_acc_range(w3, 3, 2, 0, 10, 0, &lo, &hi);
    assert_true(lo == 0 && hi == 60);
}

static void test_multiplier_exact_cases(void **state) {
    (void)state;
    uint32_t M;
    int S;
    double rel;
    enpu_err e = {0};
    assert_int_equal(enpu_quantize_multiplier(0.5, 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 1u << 19);
    assert_int_equal(S, 20);
    assert_true(rel == 0);
    assert_int_equal(enpu_quantize_multiplier(1.0, 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 1u << 19);
    assert_int_equal(S, 19);
    assert_int_equal(enpu_quantize_multiplier(0.75, 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 786432u);
    assert_int_equal(S, 20);
    assert_int_equal(enpu_quantize_multiplier(3.0, 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 786432u);
    assert_int_equal(S, 18);
    /* rounding carries into bit 20 at S = 20: one bit less of shift */
    assert_int_equal(enpu_quantize_multiplier(1.0 - ldexp(1, -30), 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 1u << 19);
    assert_int_equal(S, 19);
    /* 0.1 = 0x1.999...p-4: M = round(0.1 * 2^23) = 838861 */
    assert_int_equal(enpu_quantize_multiplier(0.1, 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 838861u);
    assert_int_equal(S, 23);
    assert_true(rel < ldexp(1, -20));
    /* the largest representable: S = 0, M = 2^20 - 1 */
    assert_int_equal(enpu_quantize_multiplier(1048575.4, 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, (1u << 20) - 1);
    assert_int_equal(S, 0);
    assert_int_equal(enpu_quantize_multiplier(1048575.5, 20, &M, &S, &rel, &e), ENPU_E_LIMIT);
    assert_non_null(strstr(e.msg, "1.04858e+06"));
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(1e7, 20, &M, &S, &rel, &e), ENPU_E_LIMIT);
    assert_non_null(strstr(e.msg, "1e+07"));
    /* tiny: S capped at 63 */
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(ldexp(1, -50), 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 8192u);
    assert_int_equal(S, 63);
    assert_true(rel == 0);
    assert_int_equal(enpu_quantize_multiplier(1.4 * ldexp(1, -64), 20, &M, &S, &rel, &e), 0);
    assert_int_equal(M, 1u);
    assert_int_equal(S, 63);
    assert_true(fabs(rel - 0.6 / 1.4) < 1e-12); /* reported, large */
    assert_int_equal(enpu_quantize_multiplier(ldexp(1, -70), 20, &M, &S, &rel, &e),
                     ENPU_E_LIMIT);
    /* invalid */
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(0, 20, &M, &S, &rel, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(-1, 20, &M, &S, &rel, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(NAN, 20, &M, &S, &rel, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(INFINITY, 20, &M, &S, &rel, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(0.5, 0, &M, &S, &rel, &e), ENPU_E_USAGE);
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_multiplier(0.5, 32, &M, &S, &rel, &e), ENPU_E_USAGE);
    /* widest multiplier */
    assert_int_equal(enpu_quantize_multiplier(0.1, 31, &M, &S, NULL, NULL), 0);
    assert_true(M < (1u << 31) && M >= (1u << 30));
}

static void test_multiplier_bounds_random(void **state) {
    (void)state;
    static const int widths[] = {1, 2, 8, 12, 16, 20, 24, 31};
    for (int it = 0; it < 100000; it++) {
        int mb = widths[it % 8];
        double real = ldexp(0.5 + 0.5 * rng_unit(), (int)(rng() % 70) - 60); /* 2^-61..2^9 */
        uint32_t M;
        int S;
        double rel;
        enpu_err e = {0};
        int rc = enpu_quantize_multiplier(real, mb, &M, &S, &rel, &e);
        if (rc == ENPU_E_LIMIT) {
            /* only when real is outside what (M, S) can hold */
            assert_true(real >= ldexp(1, mb) - 0.5 || real < ldexp(1, -64));
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(M >= 1 && (uint64_t)M < ((uint64_t)1 << mb));
        assert_true(S >= 0 && S <= 63);
        /* |M - real*2^S| <= 1/2 (both sides exact in double) */
        double scaled = ldexp(real, S);
        assert_true(fabs((double)M - scaled) <= 0.5);
        assert_true(fabs(ldexp(M, -S) - real) <= ldexp(1, -(S + 1)));
        assert_true(fabs(rel - fabs(ldexp(M, -S) - real) / real) <= 1e-15);
        if (S < 63) {
            /* S is the largest: one more bit of shift would not fit */
            assert_true(floor(ldexp(real, S + 1) + 0.5) >= ldexp(1, mb));
            assert_true((uint64_t)M >= ((uint64_t)1 << (mb - 1)));
            assert_true(rel <= ldexp(1, -(mb - 1)));
            assert_true(rel <= ldexp(1, -mb) * (1 + 1e-15));
        }
    }
}

static void test_rq_check(void **state) {
    (void)state;
    enpu_err e = {0};
    enpu_rq ok = {(1u << 20) - 1, 63, -128, -128, 127};
    assert_int_equal(enpu_rq_check("conv1: channel 3", &ok, 20, &e), 0);
    enpu_rq big = {1u << 20, 10, 0, -128, 127};
    assert_int_equal(enpu_rq_check("conv1: channel 3", &big, 20, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "conv1: channel 3"));
    enpu_err_clear(&e);
    enpu_rq sh = {1, 64, 0, -128, 127};
    assert_int_equal(enpu_rq_check("x", &sh, 20, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    enpu_rq cl = {1, 1, 0, 5, 4};
    assert_int_equal(enpu_rq_check("x", &cl, 20, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_rq_check("x", &ok, 40, &e), ENPU_E_USAGE);
}

static void test_round_half_even(void **state) {
    (void)state;
    assert_true(enpu_round_half_even(0.5) == 0);
    assert_true(enpu_round_half_even(1.5) == 2);
    assert_true(enpu_round_half_even(2.5) == 2);
    assert_true(enpu_round_half_even(-0.5) == 0);
    assert_true(enpu_round_half_even(-1.5) == -2);
    assert_true(enpu_round_half_even(-2.5) == -2);
    assert_true(enpu_round_half_even(2.4999999) == 2);
    assert_true(enpu_round_half_even(-2.5000001) == -3);
    assert_true(enpu_round_half_even(4503599627370497.0) == 4503599627370497.0);
    /* quantize: x / scale in float, then half-even, + zp, clamp */
    assert_int_equal(enpu_quantize(2.5f, 1.0f, 0, -128, 127), 2);
    assert_int_equal(enpu_quantize(3.5f, 1.0f, 0, -128, 127), 4);
    assert_int_equal(enpu_quantize(-2.5f, 1.0f, 0, -128, 127), -2);
    assert_int_equal(enpu_quantize(-3.5f, 1.0f, 0, -128, 127), -4);
    assert_int_equal(enpu_quantize(0.375f, 0.25f, -128, -128, 127), -126); /* 1.5 -> 2 */
    assert_int_equal(enpu_quantize(1000.f, 0.25f, 0, -128, 127), 127);
    assert_int_equal(enpu_quantize(-1000.f, 0.25f, 0, -128, 127), -128);
    assert_int_equal(enpu_quantize(INFINITY, 0.25f, 0, -128, 127), 127);
    assert_int_equal(enpu_quantize(NAN, 0.25f, 7, -128, 127), 7);
    assert_true(enpu_dequantize(-126, 0.25f, -128) == 0.5f);
}

static void test_choose_qparams(void **state) {
    (void)state;
    float s;
    int32_t zp;
    enpu_err e = {0};
    /* width 255/128 -> scale 1/128 exactly */
    assert_int_equal(enpu_choose_qparams(-1.0f, 0.9921875f, -128, 127, &s, &zp, &e), 0);
    assert_true(s == 0.0078125f);
    assert_int_equal(zp, 0);
    assert_int_equal(enpu_choose_qparams(-0.5f, 1.4921875f, -128, 127, &s, &zp, &e), 0);
    assert_true(s == 0.0078125f);
    assert_int_equal(zp, -64);
    /* ReLU6 output: zero at qmin */
    assert_int_equal(enpu_choose_qparams(0.0f, 6.0f, -128, 127, &s, &zp, &e), 0);
    assert_true(s == (float)(6.0 / 255.0));
    assert_int_equal(zp, -128);
    /* range widened to include 0 */
    assert_int_equal(enpu_choose_qparams(1.0f, 2.0f, -128, 127, &s, &zp, &e), 0);
    assert_true(s == (float)(2.0 / 255.0));
    assert_int_equal(zp, -128);
    assert_int_equal(enpu_choose_qparams(-3.0f, -1.0f, -128, 127, &s, &zp, &e), 0);
    assert_int_equal(zp, 127);
    /* uint8 */
    assert_int_equal(enpu_choose_qparams(-1.0f, 0.9921875f, 0, 255, &s, &zp, &e), 0);
    assert_int_equal(zp, 128);
    /* degenerate */
    assert_int_equal(enpu_choose_qparams(0.0f, 0.0f, -128, 127, &s, &zp, &e), 0);
    assert_true(s == 1.0f);
    assert_int_equal(zp, 0);
    assert_int_equal(enpu_choose_qparams(0.0f, 0.0f, 1, 255, &s, &zp, &e), 0);
    assert_int_equal(zp, 1);
    /* tiny range: scale floored */
    assert_int_equal(enpu_choose_qparams(0.0f, 1e-20f, -128, 127, &s, &zp, &e), 0);
    assert_true(s == (float)ENPU_QSCALE_MIN);
    assert_int_equal(zp, -128);
    /* errors */
    assert_int_equal(enpu_choose_qparams(NAN, 1.0f, -128, 127, &s, &zp, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_choose_qparams(2.0f, 1.0f, -128, 127, &s, &zp, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_choose_qparams(0.0f, 1.0f, 5, 5, &s, &zp, &e), ENPU_E_USAGE);
    /* property: 0.0 is always exact, the range is covered to within a step */
    for (int it = 0; it < 20000; it++) {
        float lo = (float)(-10 * rng_unit() * rng_unit());
        float hi = (float)(10 * rng_unit() * rng_unit());
        if (it % 3 == 0) lo = hi * 0.01f; /* range not containing 0 */
        assert_int_equal(enpu_choose_qparams(lo, hi, -128, 127, &s, &zp, NULL), 0);
        assert_true(zp >= -128 && zp <= 127);
        assert_int_equal(enpu_quantize(0.0f, s, zp, -128, 127), zp);
        float rlo = enpu_dequantize(-128, s, zp), rhi = enpu_dequantize(127, s, zp);
        assert_true(rlo <= (lo < 0 ? lo : 0) + s);
        assert_true(rhi >= (hi > 0 ? hi : 0) - s);
    }
}

static void test_weight_and_bias_helpers(void **state) {
    (void)state;
    const float w[6] = {0.5f, -1.27f, NAN, 1.0f, 0.25f, -3.0f};
    assert_true(enpu_max_abs(w, 6, 1) == 3.0f);
    assert_true(enpu_max_abs(w, 3, 2) == 0.5f); /* 0.5, NaN (skipped), 0.25 */
    assert_true(enpu_max_abs(w, 0, 1) == 0.0f);
    assert_true(enpu_symmetric_scale(1.27f, 127) == 1.27f / 127.0f);
    assert_true(enpu_symmetric_scale(0.0f, 127) == 1.0f / 127.0f);
    assert_true(enpu_symmetric_scale(NAN, 127) == 1.0f / 127.0f);
    float sw = enpu_symmetric_scale(1.27f, 127);
    assert_int_equal(enpu_quantize(-1.27f, sw, 0, -127, 127), -127);
    assert_int_equal(enpu_quantize(1.27f, sw, 0, -127, 127), 127);

    int32_t q;
    enpu_err e = {0};
    assert_int_equal(enpu_quantize_bias(-2.5, 1.0, "b", &q, &e), 0);
    assert_int_equal(q, -2);
    assert_int_equal(enpu_quantize_bias(0.3, 0.001, "b", &q, &e), 0);
    assert_int_equal(q, 300);
    assert_int_equal(enpu_quantize_bias(1.0, 1e-12, "conv1 bias[3]", &q, &e), ENPU_E_LIMIT);
    assert_non_null(strstr(e.msg, "conv1 bias[3]"));
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_bias(NAN, 1.0, "b", &q, &e), ENPU_E_INVALID);
    enpu_err_clear(&e);
    assert_int_equal(enpu_quantize_bias(1.0, 0.0, "b", &q, &e), ENPU_E_INVALID);
    assert_int_equal(enpu_quantize_bias(2147483647.0, 1.0, "b", &q, NULL), 0);
    assert_int_equal(q, INT32_MAX);
    assert_int_equal(enpu_quantize_bias(2147483648.0, 1.0, "b", &q, NULL), ENPU_E_LIMIT);
}


int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requant_ties_both_signs),
        cmocka_unit_test(test_requant_shift_limits),
        cmocka_unit_test(test_requant_saturation_and_clamps),
        cmocka_unit_test(test_requant_random_vs_reference),
        cmocka_unit_test(test_shift_and_division_helpers),
        cmocka_unit_test(test_saturation_helpers),
        cmocka_unit_test(test_acc_width),
        cmocka_unit_test(test_multiplier_exact_cases),
        cmocka_unit_test(test_multiplier_bounds_random),
        cmocka_unit_test(test_rq_check),
        cmocka_unit_test(test_round_half_even),
        cmocka_unit_test(test_choose_qparams),
        cmocka_unit_test(test_weight_and_bias_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
