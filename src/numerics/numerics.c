/* Numerics that are not on the simulator's hot path: bounds, parameter
 * selection and float<->int conversion.  The rules are in docs/numerics.md. */
#include "easynpu/numerics.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* a * b for non-negative int64, saturating at INT64_MAX. */
static int64_t mul_sat(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    if (a > INT64_MAX / b) return INT64_MAX;
    return a * b;
}

static int64_t add_sat(int64_t a, int64_t b) {
    return (a > INT64_MAX - b) ? INT64_MAX : a + b;
}

int64_t enpu_acc_bound(int64_t n_terms, int max_abs_x, int max_abs_w, int64_t max_abs_bias) {
    int64_t n = n_terms > 0 ? n_terms : 0;
    int64_t x = max_abs_x > 0 ? max_abs_x : 0;
    int64_t w = max_abs_w > 0 ? max_abs_w : 0;
    int64_t b = max_abs_bias > 0 ? max_abs_bias : 0;
    return add_sat(mul_sat(n, mul_sat(x, w)), b);
}

/* a + b, saturating at both ends. */
static int64_t add_sat_s(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

/* enpu_acc_range and enpu_acc_range16: weights of es bytes (1 or 2). */
static void acc_range(const void *w, int es, int64_t n, int64_t stride, int xmin, int xmax, int64_t bias,
                      int64_t *lo, int64_t *hi) {
    /* Every partial sum is bias-or-not plus a subset of the terms; with
     * xmin <= 0 <= xmax every term's range straddles 0, so the extreme
     * partial sums take each term at its own extreme (or skip it).  A term
     * is below 2^31 in magnitude: exact; the sums saturate (int16 data on a
     * long row can pass 2^63, int8 never does). */
    int64_t l = bias < 0 ? bias : 0, h = bias > 0 ? bias : 0;
    if (xmin > 0) xmin = 0;
    if (xmax < 0) xmax = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t wk = es == 2 ? ((const int16_t *)w)[k * stride] : ((const int8_t *)w)[k * stride];
        int64_t p1 = wk * xmin, p2 = wk * xmax;
        l = add_sat_s(l, p1 < p2 ? p1 : p2);
        h = add_sat_s(h, p1 < p2 ? p2 : p1);
    }
    if (lo) *lo = l;
    if (hi) *hi = h;
}

void enpu_acc_range(const int8_t *w, int64_t n, int64_t stride, int xmin, int xmax,
                    int64_t bias, int64_t *lo, int64_t *hi) {
    acc_range(w, 1, n, stride, xmin, xmax, bias, lo, hi);
}

int enpu_acc_check(const char *layer, int64_t lo, int64_t hi, int acc_bits, enpu_err *err) {
    if (acc_bits < ENPU_ACC_BITS_MIN || acc_bits > ENPU_ACC_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "%s: accumulator width %d bits outside [%d, %d]",
                         layer ? layer : "?", acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX);
    if (!enpu_acc_fits(lo, acc_bits) || !enpu_acc_fits(hi, acc_bits))
        return enpu_fail(err, ENPU_E_NOFIT,
                         "%s: accumulator may reach [%lld, %lld], which overflows the %d-bit "
                         "accumulator [%lld, %lld]",
                         layer ? layer : "?", (long long)lo, (long long)hi, acc_bits,
                         -(1LL << (acc_bits - 1)), (1LL << (acc_bits - 1)) - 1);
    return 0;
}

int enpu_acc_check_bound(const char *layer, int64_t n_terms, int max_abs_x, int max_abs_w,
                         int64_t max_abs_bias, int acc_bits, enpu_err *err) {
    int64_t b = enpu_acc_bound(n_terms, max_abs_x, max_abs_w, max_abs_bias);
    return enpu_acc_check(layer, -b, b, acc_bits, err);
}

int enpu_quantize_multiplier(double real, int mult_bits, uint32_t *M, int *S, double *rel_err,
                             enpu_err *err) {
    if (mult_bits < 1 || mult_bits > ENPU_MULT_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "multiplier width %d bits outside [1, %d]",
                         mult_bits, ENPU_MULT_BITS_MAX);
    if (!(real > 0) || isinf(real))
        return enpu_fail(err, ENPU_E_INVALID,
                         "requantization scale %g is not a positive finite number", real);
    const double limit = ldexp(1.0, mult_bits); /* M must stay < 2^mult_bits */
    /* real = f * 2^e, f in [0.5, 1): at S = mult_bits - e, real * 2^S = f *
     * 2^mult_bits lies in [2^(mult_bits-1), 2^mult_bits), the top bit set. */
    int e;
    (void)frexp(real, &e);
    long s = (long)mult_bits - e;
    if (s > ENPU_SHIFT_MAX) s = ENPU_SHIFT_MAX;
    double m = 0;
    for (;;) {
        if (s < 0)
            return enpu_fail(err, ENPU_E_LIMIT,
                             "requantization scale %g too large: round(scale) must be < 2^%d "
                             "(shift 0 is the smallest)",
                             real, mult_bits);
        /* real * 2^s is exact (a power-of-two scaling) unless it underflows,
         * which cannot happen for s <= 63 and a normal positive double. */
        m = floor(ldexp(real, (int)s) + 0.5);
        if (m < limit) break;
        s--; /* rounding carried into bit mult_bits: one bit less of shift */
    }
    if (m < 1)
        return enpu_fail(err, ENPU_E_LIMIT,
                         "requantization scale %g too small: rounds to 0 even at the maximum "
                         "shift %d",
                         real, ENPU_SHIFT_MAX);
    *M = (uint32_t)m;
    *S = (int)s;
    if (rel_err) *rel_err = fabs(ldexp(m, -(int)s) - real) / real;
    return 0;
}

int enpu_rq_check(const char *what, const enpu_rq *rq, int mult_bits, enpu_err *err) {
    if (mult_bits < 1 || mult_bits > ENPU_MULT_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "%s: multiplier width %d bits outside [1, %d]",
                         what ? what : "?", mult_bits, ENPU_MULT_BITS_MAX);
    if ((uint64_t)rq->M >= ((uint64_t)1 << mult_bits))
        return enpu_fail(err, ENPU_E_INVALID, "%s: multiplier %u does not fit %d bits",
                         what ? what : "?", (unsigned)rq->M, mult_bits);
    if (rq->S < 0 || rq->S > ENPU_SHIFT_MAX)
        return enpu_fail(err, ENPU_E_INVALID, "%s: shift %d outside [0, %d]",
                         what ? what : "?", rq->S, ENPU_SHIFT_MAX);
    if (rq->lo > rq->hi)
        return enpu_fail(err, ENPU_E_INVALID, "%s: clamp lo %d > hi %d", what ? what : "?",
                         (int)rq->lo, (int)rq->hi);
    return 0;
}

double enpu_round_half_even(double v) {
    if (!isfinite(v)) return v;
    double f = floor(v);
    double d = v - f; /* exact for |v| < 2^52; larger doubles are integers */
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return fmod(f, 2.0) == 0 ? f : f + 1;
}

int enpu_choose_qparams(float min, float max, int qmin, int qmax, float *scale, int32_t *zp,
                        enpu_err *err) {
    if (qmin >= qmax)
        return enpu_fail(err, ENPU_E_USAGE, "quantization range [%d, %d] is empty", qmin, qmax);
    if (!isfinite(min) || !isfinite(max) || min > max)
        return enpu_fail(err, ENPU_E_INVALID, "real range [%g, %g] is not a finite interval",
                         (double)min, (double)max);
    double lo = min < 0 ? min : 0, hi = max > 0 ? max : 0;
    if (hi == lo) {
        *scale = 1.0f;
        *zp = 0 < qmin ? qmin : (0 > qmax ? qmax : 0);
        return 0;
    }
    double s = (hi - lo) / ((double)qmax - qmin);
    float sf = (float)s;
    if (!(sf >= (float)ENPU_QSCALE_MIN)) sf = (float)ENPU_QSCALE_MIN;
    double z = enpu_round_half_even((double)qmin - lo / (double)sf);
    if (z < qmin) z = qmin;
    if (z > qmax) z = qmax;
    *scale = sf;
    *zp = (int32_t)z;
    return 0;
}

float enpu_max_abs(const float *v, int64_t n, int64_t stride) {
    float m = 0;
    for (int64_t k = 0; k < n; k++) {
        float a = fabsf(v[k * stride]);
        if (a > m) m = a; /* NaN compares false: skipped */
    }
    return m;
}

float enpu_symmetric_scale(float max_abs, int qmax) {
    if (qmax < 1) qmax = 1;
    if (!(max_abs >= (float)(qmax * ENPU_QSCALE_MIN)) || isinf(max_abs)) return 1.0f / (float)qmax;
    return max_abs / (float)qmax;
}

int32_t enpu_quantize(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax) {
    if (isnan(x)) return zp < qmin ? qmin : (zp > qmax ? qmax : zp);
    float q = x / scale; /* float32 division, as ONNX QuantizeLinear */
    double r = enpu_round_half_even((double)q) + (double)zp;
    if (r < qmin) return qmin;
    if (r > qmax) return qmax;
    return (int32_t)r;
}

int enpu_quantize_bias(double b, double scale, const char *what, int32_t *q, enpu_err *err) {
    if (!isfinite(b) || !(scale > 0) || isinf(scale))
        return enpu_fail(err, ENPU_E_INVALID, "%s: bias %g or its scale %g is not finite/positive",
                         what ? what : "bias", b, scale);
    double r = enpu_round_half_even(b / scale);
    if (!(r >= (double)INT32_MIN && r <= (double)INT32_MAX))
        return enpu_fail(err, ENPU_E_LIMIT,
                         "%s: bias %g / scale %g = %.6g does not fit int32", what ? what : "bias",
                         b, scale, r);
    *q = (int32_t)r;
    return 0;
}

/* ==== TFLite's integer arithmetic (requant "tflite", docs/numerics.md §10) ==== */

const char *enpu_requant_name(int mode) {
    switch (mode) {
#define ENPU_X_RQ(id, name) \
    case ENPU_REQUANT_##id: return name;
        ENPU_REQUANT_LIST(ENPU_X_RQ)
#undef ENPU_X_RQ
    default: return "unknown";
    }
}

int enpu_requant_parse(const char *s) {
    if (!s) return -1;
    for (int m = 0; m < ENPU_REQUANT_COUNT; m++)
        if (strcmp(s, enpu_requant_name(m)) == 0) return m;
    return -1;
}

static const char *wh(const char *what) { return what ? what : "tflite"; }

int enpu_tfl_quantize_multiplier(double real, const char *what, int32_t *q, int *shift,
                                 enpu_err *err) {
    if (!(real >= 0) || isinf(real))
        return enpu_fail(err, ENPU_E_INVALID, "%s: multiplier %g is negative or not finite",
                         wh(what), real);
    *q = 0;
    *shift = 0;
    if (real == 0) return 0;
    int e;
    double f = frexp(real, &e);
    int64_t qf = (int64_t)round(f * 2147483648.0); /* TfLiteRound: ties away from zero */
    if (qf == ((int64_t)1 << 31)) {
        qf /= 2;
        e++;
    }
    if (e < -31) return 0; /* flushed to zero, as TFLite does */
    if (e > 30)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: multiplier %g is 2^30 or more (TFLite's requantizer shifts left by "
                         "at most 30)",
                         wh(what), real);
    *q = (int32_t)qf;
    *shift = e;
    return 0;
}

int enpu_tfl_multiplier(double real, const char *what, uint32_t *M, int *S, enpu_err *err) {
    int32_t q;
    int sh;
    int rc = enpu_tfl_quantize_multiplier(real, what, &q, &sh, err);
    if (rc) return rc;
    *M = (uint32_t)q;
    *S = 31 - sh;
    return 0;
}

int32_t enpu_tfl_quantize(float x, float scale, int32_t zp) {
    if (isnan(x)) return zp < -128 ? -128 : (zp > 127 ? 127 : zp);
    float r = roundf(x / scale); /* float division and TfLiteRound, as AffineQuantize */
    double v = (double)r + (double)zp;
    return v < -128 ? -128 : (v > 127 ? 127 : (int32_t)v);
}

/* zero_point + round(f / scale) as TFLite's activation-range Quantize; fails
 * where TFLite refuses (out of int32). */
static int act_q(float f, float scale, int32_t zp, const char *what, int32_t *q, enpu_err *err) {
    *q = 0; /* defined on failure too: gcc -O3 cannot see that enpu_fail is non-zero */
    float t = roundf(f / scale);
    if (!(t >= -2147483648.0f && t <= 2147483520.0f))
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: activation bound %g at scale %g does not fit int32", wh(what),
                         (double)f, (double)scale);
    *q = (int32_t)enpu_clamp64((int64_t)zp + (int64_t)t, INT32_MIN, INT32_MAX);
    return 0;
}

int enpu_tfl_act_range(int act, float scale, int32_t zp, const char *what, int32_t *lo,
                       int32_t *hi, enpu_err *err) {
    int32_t a = -128, b = 127, q;
    int rc = 0;
    switch (act) {
    case 0: break;
    case 1:
        if (!(rc = act_q(0.0f, scale, zp, what, &q, err))) a = q > a ? q : a;
        break;
    case 2:
        if (!(rc = act_q(-1.0f, scale, zp, what, &q, err))) a = q > a ? q : a;
        if (!rc && !(rc = act_q(1.0f, scale, zp, what, &q, err))) b = q < b ? q : b;
        break;
    case 3:
        if (!(rc = act_q(0.0f, scale, zp, what, &q, err))) a = q > a ? q : a;
        if (!rc && !(rc = act_q(6.0f, scale, zp, what, &q, err))) b = q < b ? q : b;
        break;
    default:
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: fused activation %d is not supported (NONE, RELU, RELU_N1_TO_1, "
                         "RELU6 are)",
                         wh(what), act);
    }
    if (rc) return rc;
    if (a > b)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: the fused activation's range %d..%d is empty at scale %g, zero "
                         "point %d",
                         wh(what), (int)a, (int)b, (double)scale, (int)zp);
    *lo = a;
    *hi = b;
    return 0;
}

int enpu_tfl_add_params(float s0, float s1, float s_out, const char *what, uint32_t A[2],
                        int SA[2], uint32_t *M, int *S, enpu_err *err) {
    if (!(s0 > 0) || !(s1 > 0) || !(s_out > 0) || isinf(s0) || isinf(s1) || isinf(s_out))
        return enpu_fail(err, ENPU_E_INVALID, "%s: ADD scales must be positive and finite",
                         wh(what));
    const double twice_max = 2 * (double)(s0 > s1 ? s0 : s1);
    const double r[2] = {(double)s0 / twice_max, (double)s1 / twice_max};
    const double ro = twice_max / ((1 << ENPU_TFL_ADD_LEFT_SHIFT) * (double)s_out);
    for (int i = 0; i < 2; i++) {
        int32_t q;
        int sh;
        int rc = enpu_tfl_quantize_multiplier(r[i], what, &q, &sh, err);
        if (rc) return rc;
        A[i] = (uint32_t)q;
        SA[i] = 31 - sh;
    }
    int32_t q;
    int sh;
    int rc = enpu_tfl_quantize_multiplier(ro, what, &q, &sh, err);
    if (rc) return rc;
    if (sh > 0)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: ADD output multiplier %g is not below 1 (TFLite requires it)",
                         wh(what), ro);
    *M = (uint32_t)q;
    *S = 31 - sh;
    return 0;
}

int enpu_tfl_avgpool_multiplier(int64_t n, const char *what, uint32_t *M, int *S, enpu_err *err) {
    if (n < 1 || n > ENPU_TFL_AVGPOOL_MAX_N)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: an average over %lld elements (the exact integer division is "
                         "proven for 1..%d)",
                         wh(what), (long long)n, ENPU_TFL_AVGPOOL_MAX_N);
    if (n == 1) {
        *M = (uint32_t)1 << 30; /* SRDHM(2 acc, 2^30) = acc */
        *S = 30;
        return 0;
    }
    /* M/2^31 = 1/n + eps with 0 < eps <= 2^-31: every tie moves away from
     * zero, nothing else moves across a rounding boundary (§10.5). */
    *M = (uint32_t)(((int64_t)1 << 31) / n + 1);
    *S = 31;
    return 0;
}

static int floor_log2_u64(uint64_t v) {
    int r = -1;
    while (v) {
        v >>= 1;
        r++;
    }
    return r;
}

int enpu_tfl_mean_multiplier(float s_in, float s_out, int64_t n, const char *what, uint32_t *M,
                             int *S, enpu_err *err) {
    if (n < 1)
        return enpu_fail(err, ENPU_E_INVALID, "%s: MEAN over %lld elements", wh(what),
                         (long long)n);
    int32_t q;
    int sh;
    int rc = enpu_tfl_quantize_multiplier((double)s_in / (double)s_out, what, &q, &sh, err);
    if (rc) return rc;
    int k = floor_log2_u64((uint64_t)n);
    if (k > 32) k = 32;
    if (k > 31 + sh) k = 31 + sh;
    q = (int32_t)(((int64_t)q * ((int64_t)1 << k)) / n);
    sh -= k;
    *M = (uint32_t)q;
    *S = 31 - sh;
    return 0;
}

/* --- gemmlowp fixed point, scalar int32 (two's complement wrapping adds, as
 * the compiled C++ does) --- */

static int32_t add32(int32_t a, int32_t b) { return enpu_wrap32((int64_t)a + b); }
static int32_t sub32(int32_t a, int32_t b) { return enpu_wrap32((int64_t)a - b); }
static int32_t neg32(int32_t a) { return enpu_wrap32(-(int64_t)a); }

/* SaturatingRoundingMultiplyByPOT<e>: saturating left shift for e > 0,
 * rounding right shift for e < 0. */
static int32_t srmpot(int32_t x, int e) {
    if (e < 0) return (int32_t)enpu_tfl_rdbpot(x, -e);
    if (e == 0) return x;
    const int32_t thr = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (x > thr) return INT32_MAX;
    if (x < -thr) return INT32_MIN;
    return (int32_t)(x * ((int64_t)1 << e));
}

static int32_t rounding_half_sum(int32_t a, int32_t b) {
    int64_t s = (int64_t)a + b;
    return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0: Taylor series around -1/8. */
static int32_t exp_quarter(int32_t a) {
    const int32_t c_term = 1895147668, c_third = 715827883; /* exp(-1/8), 1/3 */
    int32_t x = add32(a, (int32_t)1 << 28);
    int32_t x2 = enpu_tfl_srdhm(x, x), x3 = enpu_tfl_srdhm(x2, x), x4 = enpu_tfl_srdhm(x2, x2);
    int32_t x4_4 = srmpot(x4, -2);
    int32_t t = srmpot(add32(enpu_tfl_srdhm(add32(x4_4, x3), c_third), x2), -1);
    return add32(c_term, enpu_tfl_srdhm(c_term, add32(x, t)));
}

int32_t enpu_tfl_exp_on_negative_values(int32_t a, int ibits) {
    static const struct {
        int e;
        int32_t m;
    } bs[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
              {2, 39332535},    {3, 720401},      {4, 242}}; /* exp(-2^e), Q0 */
    if (ibits < 0) ibits = 0;
    if (ibits > 29) ibits = 29;
    const int fb = 31 - ibits;
    const int32_t quarter = (int32_t)1 << (fb - 2), mask = quarter - 1;
    int32_t amq = sub32((int32_t)((uint32_t)a & (uint32_t)mask), quarter);
    int32_t result = exp_quarter(srmpot(amq, ibits));
    uint32_t rem = (uint32_t)sub32(amq, a);
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        if (ibits > bs[i].e && (rem & ((uint32_t)1 << (fb + bs[i].e))))
            result = enpu_tfl_srdhm(result, bs[i].m);
    if (ibits > 5 && a < -((int32_t)1 << (36 - ibits))) result = 0; /* below -32 */
    if (a == 0) result = INT32_MAX;
    return result;
}

/* Newton-Raphson for 1 / (1 + a) / 2 in Q2 (gemmlowp's 48/17 - 32/17 x start). */
static int32_t nr_reciprocal_q2(int32_t a) {
    const int32_t c48 = 1515870810, cn32 = -1010580540; /* 48/17, -32/17 in Q2 */
    int32_t hd = rounding_half_sum(a, INT32_MAX);
    int32_t x = add32(c48, enpu_tfl_srdhm(hd, cn32));
    for (int i = 0; i < 3; i++) {
        int32_t om = sub32((int32_t)1 << 29, enpu_tfl_srdhm(hd, x));
        x = add32(x, srmpot(enpu_tfl_srdhm(x, om), 2));
    }
    return x;
}

int32_t enpu_tfl_one_over_one_plus_x(int32_t a) { return srmpot(nr_reciprocal_q2(a), 1); }

int32_t enpu_tfl_one_minus_x_over_one_plus_x(int32_t a) {
    return srmpot(sub32(nr_reciprocal_q2(a), (int32_t)1 << 29), 2);
}

int32_t enpu_tfl_logistic_q(int32_t a, int ibits) {
    int32_t ab = a > 0 ? a : neg32(a);
    int32_t rp = enpu_tfl_one_over_one_plus_x(enpu_tfl_exp_on_negative_values(neg32(ab), ibits));
    if (a == 0) return (int32_t)1 << 30;
    return a > 0 ? rp : sub32(INT32_MAX, rp);
}

int32_t enpu_tfl_tanh_q(int32_t a, int ibits) {
    int32_t n = a < 0 ? a : neg32(a);
    int32_t t = enpu_tfl_one_minus_x_over_one_plus_x(enpu_tfl_exp_on_negative_values(n, ibits + 1));
    if (a == 0) return 0;
    return a < 0 ? neg32(t) : t;
}

/* --- int8 host kernels --- */

/* TFLite's CalculateInputRadius: the largest |input| whose rescaled value
 * still fits `ibits` integer bits. */
static int32_t input_radius(int ibits, int left_shift) {
    double v = 1.0 * (double)((1 << ibits) - 1) * (double)((int64_t)1 << (31 - ibits)) /
               (double)((int64_t)1 << left_shift);
    return (int32_t)floor(v);
}

/* q = round(frexp(real) * 2^31) with its exponent, as TFLite's logistic and
 * tanh prepare their input multiplier (no renormalization). */
static int frexp_q31(double real, const char *what, int32_t *q, int *shift, enpu_err *err) {
    int e;
    double f = frexp(real, &e);
    double r = round(f * 2147483648.0);
    if (!(real > 0) || isinf(real) || r >= 2147483648.0 || e < 0 || e > 30)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: input scale gives the input multiplier %g, outside what TFLite's "
                         "integer kernel handles",
                         wh(what), real);
    *q = (int32_t)r;
    *shift = e;
    return 0;
}

static int16_t down_scale_16(int32_t m) {
    if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
    return (int16_t)((m + (1 << 15)) >> 16);
}

int enpu_tfl_kernel_prepare(enpu_tfl_kernel k, float s_in, int32_t zp_in, float s_out,
                            int32_t zp_out, const char *what, enpu_tfl_kparams *p,
                            enpu_err *err) {
    memset(p, 0, sizeof *p);
    p->kernel = k;
    p->zp_in = zp_in;
    p->zp_out = zp_out;
    if (!(s_in > 0) || !(s_out > 0) || isinf(s_in) || isinf(s_out))
        return enpu_fail(err, ENPU_E_INVALID, "%s: scales must be positive and finite", wh(what));
    int rc;
    switch (k) {
    case ENPU_TFL_SOFTMAX: {
        if (zp_out != -128 || s_out != 1.0f / 256)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "%s: an int8 SOFTMAX output must have scale 1/256 and zero point "
                             "-128 (TFLite's kernel writes that), not %g and %d",
                             wh(what), (double)s_out, (int)zp_out);
        /* input_beta_real_multiplier = beta * s_in * 2^(31 - 5), beta = 1 */
        double real = (double)s_in * (double)(1 << 26);
        if (real > 2147483647.0) real = 2147483647.0;
        if (!(real > 1.0))
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "%s: SOFTMAX input scale %g is too small for TFLite's kernel",
                             wh(what), (double)s_in);
        if ((rc = enpu_tfl_quantize_multiplier(real, what, &p->mult, &p->shift, err))) return rc;
        p->limit = -input_radius(5, p->shift); /* diff_min */
        return 0;
    }
    case ENPU_TFL_LOGISTIC:
    case ENPU_TFL_TANH:
        if (k == ENPU_TFL_LOGISTIC && zp_out != -128)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "%s: an int8 LOGISTIC output must have zero point -128, not %d",
                             wh(what), (int)zp_out);
        if ((rc = frexp_q31((double)s_in * (double)(1 << 27), what, &p->mult, &p->shift, err)))
            return rc;
        p->limit = input_radius(4, p->shift);
        return 0;
    case ENPU_TFL_HARD_SWISH: {
        const float hires = (1.0f / 128.0f) * s_in, reluish = 3.0f / 32768.0f;
        int32_t m32;
        if ((rc = enpu_tfl_quantize_multiplier((double)(hires / s_out), what, &m32, &p->out_exp,
                                               err)))
            return rc;
        p->out_mult16 = down_scale_16(m32);
        if ((rc = enpu_tfl_quantize_multiplier((double)(hires / reluish), what, &m32, &p->relu_exp,
                                               err)))
            return rc;
        p->relu_mult16 = down_scale_16(m32);
        if (p->out_exp > 0 || p->out_exp < -15 || p->relu_exp < -15)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "%s: HARD_SWISH scales %g -> %g give exponents %d/%d outside what "
                             "TFLite's int16 kernel handles",
                             wh(what), (double)s_in, (double)s_out, p->out_exp, p->relu_exp);
        return 0;
    }
    }
    return enpu_fail(err, ENPU_E_USAGE, "%s: unknown TFLite kernel %d", wh(what), (int)k);
}

static int16_t wrap16(int32_t v) {
    uint16_t u = (uint16_t)(uint32_t)v;
    return u <= INT16_MAX ? (int16_t)u : (int16_t)((int32_t)u - 65536);
}

static int16_t srdhm16(int16_t a, int16_t b, bool round) {
    if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
    int32_t ab = (int32_t)a * b;
    int32_t nudge = !round ? 0 : (ab >= 0 ? (1 << 14) : (1 - (1 << 14)));
    return (int16_t)((ab + nudge) / (1 << 15));
}

static int16_t sat_lshift16(int16_t v, int n) {
    return (int16_t)enpu_clamp64((int64_t)v * ((int64_t)1 << n), INT16_MIN, INT16_MAX);
}

int8_t enpu_tfl_kernel_eval(const enpu_tfl_kparams *p, int8_t x) {
    const int32_t in = (int32_t)x - p->zp_in;
    switch (p->kernel) {
    case ENPU_TFL_LOGISTIC:
    case ENPU_TFL_TANH: {
        if (in <= -p->limit) return -128;
        if (in >= p->limit) return 127;
        int32_t q4 = enpu_tfl_mbqm(in, p->mult, p->shift);
        if (p->kernel == ENPU_TFL_LOGISTIC)
            return enpu_sat_i8(enpu_tfl_rdbpot(enpu_tfl_logistic_q(q4, 4), 31 - 8) - 128);
        return enpu_sat_i8(enpu_tfl_rdbpot(enpu_tfl_tanh_q(q4, 4), 31 - 7));
    }
    case ENPU_TFL_HARD_SWISH: {
        const int16_t hires = (int16_t)(in * 128);
        const int16_t pre_out = srdhm16(hires, p->out_mult16, true);
        int16_t r = hires;
        if (p->relu_exp > 0) r = sat_lshift16(r, p->relu_exp - 1);
        r = srdhm16(r, p->relu_mult16, true);
        if (p->relu_exp > 0) r = sat_lshift16(r, 1);
        if (p->relu_exp < 0) r = (int16_t)enpu_tfl_rdbpot(r, -p->relu_exp);
        r = (int16_t)(((int32_t)r + (1 << 15)) >> 1); /* [-1, 1] -> [0, 1] */
        int16_t out = (int16_t)enpu_tfl_rdbpot(srdhm16(r, pre_out, false), -p->out_exp);
        return enpu_sat_i8(wrap16((int32_t)out + p->zp_out));
    }
    case ENPU_TFL_SOFTMAX: break;
    }
    return 0;
}

static int clz32(uint32_t v) {
    int n = 0;
    if (!v) return 32;
    while (!(v & 0x80000000u)) {
        v <<= 1;
        n++;
    }
    return n;
}

void enpu_tfl_softmax(const enpu_tfl_kparams *p, const int8_t *x, int8_t *y, int64_t n,
                      int64_t stride) {
    int32_t mx = -128;
    for (int64_t i = 0; i < n; i++)
        if (x[i * stride] > mx) mx = x[i * stride];
    /* exp(beta (x - max)) in Q5.26 -> Q0.31, summed in Q12.19 */
    int32_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t d = x[i * stride] - mx;
        if (d < p->limit) continue;
        int32_t r = (int32_t)enpu_tfl_scale(d, (uint32_t)p->mult, 31 - p->shift);
        sum = add32(sum, srmpot(enpu_tfl_exp_on_negative_values(r, 5), -12));
    }
    /* 1 / sum (TFLite's GetReciprocal with 12 integer digits) */
    int hp1 = clz32((uint32_t)sum);
    int over = 12 - hp1;
    int32_t scale = enpu_tfl_one_over_one_plus_x(
        enpu_wrap32u((uint64_t)(((uint32_t)sum << (hp1 & 31)) - 0x80000000u)));
    int e = over + 31 - 8;
    if (e < 0) e = 0;
    if (e > 31) e = 31;
    for (int64_t i = 0; i < n; i++) {
        int32_t d = x[i * stride] - mx;
        if (d < p->limit) {
            y[i * stride] = -128;
            continue;
        }
        int32_t r = (int32_t)enpu_tfl_scale(d, (uint32_t)p->mult, 31 - p->shift);
        int32_t ex = enpu_tfl_exp_on_negative_values(r, 5);
        y[i * stride] = enpu_sat_i8(enpu_tfl_rdbpot(enpu_tfl_srdhm(scale, ex), e) - 128);
    }
}

/* ---- imported quantization parameters ----------------------------------- */

int enpu_qparams_import(const char *what, double scale, int64_t zp, int is_unsigned, float *s,
                        int32_t *z, enpu_err *err) {
    const int64_t lo = is_unsigned ? 0 : -128, hi = is_unsigned ? 255 : 127;
    if (!(scale >= ENPU_QSCALE_MIN) || isinf(scale) || (float)scale <= 0)
        return enpu_fail(err, ENPU_E_INVALID, "%s: scale %g is not a positive finite number "
                         "(at least 2^-32)", what, scale);
    if (zp < lo || zp > hi)
        return enpu_fail(err, ENPU_E_INVALID, "%s: zero point %lld is outside %s (%lld..%lld)",
                         what, (long long)zp, is_unsigned ? "uint8" : "int8", (long long)lo,
                         (long long)hi);
    *s = (float)scale;
    *z = (int32_t)(is_unsigned ? zp - 128 : zp);
    return 0;
}

/* ---- 16-bit data ----------------------------------------------------------------- */

int32_t enpu_requant_wide(int64_t acc, uint32_t M, int S, int32_t zp, int32_t lo, int32_t hi) {
    /* acc = ah * 2^32 + al with 0 <= al < 2^32; acc*M + round = T * 2^32 + Ll
     * with 0 <= Ll < 2^32, every part inside 64 bits (M < 2^31). */
    int64_t ah = enpu_asr64(acc, 32);
    uint64_t al = (uint64_t)acc & 0xFFFFFFFFu;
    uint64_t low = al * (uint64_t)M + (S > 0 ? (uint64_t)1 << (S - 1) : 0);
    int64_t T = ah * (int64_t)M + (int64_t)(low >> 32);
    uint64_t Ll = low & 0xFFFFFFFFu;
    int64_t v;
    if (S >= 32) {
        /* floor((T*2^32 + Ll) / 2^S) = floor(T / 2^(S-32)): Ll adds less than one */
        v = enpu_asr64(T, S - 32);
    } else {
        int sh = 32 - S;
        /* |v| > 2^34 is clamped to lo or hi anyway (int32 operands): keep
         * the shift in range */
        const int64_t big = ((int64_t)1 << 34) >> sh;
        if (T > big) return hi;
        if (T < -big) return lo;
        v = T * ((int64_t)1 << sh) + (int64_t)(Ll >> S);
    }
    return (int32_t)enpu_clamp64(enpu_clamp64(v, INT32_MIN, INT32_MAX) + zp, lo, hi);
}

void enpu_acc_range16(const int16_t *w, int64_t n, int64_t stride, int xmin, int xmax,
                      int64_t bias, int64_t *lo, int64_t *hi) {
    acc_range(w, 2, n, stride, xmin, xmax, bias, lo, hi);
}

int enpu_acc_check_wide(const char *layer, int64_t lo, int64_t hi, int acc_bits, enpu_err *err) {
    if (acc_bits < ENPU_ACC_BITS_MIN || acc_bits > ENPU_ACC_BITS_WIDE_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "%s: accumulator width %d bits outside [%d, %d]",
                         layer ? layer : "?", acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_WIDE_MAX);
    bool sat = lo == INT64_MIN || hi == INT64_MAX;
    if (sat || (acc_bits < 64 && (!enpu_acc_fits(lo, acc_bits) || !enpu_acc_fits(hi, acc_bits))))
        return enpu_fail(err, ENPU_E_NOFIT,
                         "%s: accumulator may reach [%lld, %lld]%s, which overflows the %d-bit "
                         "accumulator",
                         layer ? layer : "?", (long long)lo, (long long)hi,
                         sat ? " (saturated)" : "", acc_bits);
    return 0;
}

static float pow2_up(float s) {
    int e;
    double f = frexp((double)s, &e); /* s = f * 2^e, f in [0.5, 1) */
    return (float)(f == 0.5 ? ldexp(1.0, e - 1) : ldexp(1.0, e));
}

int enpu_choose_scale16(float min, float max, int pow2, float *scale, enpu_err *err) {
    if (!isfinite(min) || !isfinite(max) || min > max)
        return enpu_fail(err, ENPU_E_INVALID, "real range [%g, %g] is not a finite interval",
                         (double)min, (double)max);
    float m = fabsf(min) > fabsf(max) ? fabsf(min) : fabsf(max);
    float s = m > 0 ? (float)((double)m / ENPU_I16_QMAX) : 1.0f / ENPU_I16_QMAX;
    if (!(s >= (float)ENPU_QSCALE_MIN)) s = (float)ENPU_QSCALE_MIN;
    *scale = pow2 ? pow2_up(s) : s;
    return 0;
}

float enpu_weight_scale16(float max_abs, int pow2) {
    float s = enpu_symmetric_scale(max_abs, ENPU_I16_QMAX);
    return pow2 ? pow2_up(s) : s;
}

float enpu_int_value(enpu_dtype dt, float v) {
    if (dt == ENPU_DT_BOOL) return v != 0.0f ? 1.0f : 0.0f;
    if (!(v == v) || v > 1e18f || v < -1e18f) return v;
    double t = (double)(int64_t)v;
    double span = dt == ENPU_DT_UINT8 || dt == ENPU_DT_INT8 ? 256.0
                  : dt == ENPU_DT_UINT16 || dt == ENPU_DT_INT16 ? 65536.0 : 0.0;
    if (span > 0) {
        t = fmod(t, span);
        if (t < 0) t += span;
        if ((dt == ENPU_DT_INT8 || dt == ENPU_DT_INT16) && t >= span / 2) t -= span;
    }
    return (float)t;
}
