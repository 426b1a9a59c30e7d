/* Numerics that are not on the simulator's hot path: bounds, parameter
 * selection and float<->int conversion.  The rules are in docs/numerics.md. */
#include "easynpu/numerics.h"

#include <math.h>
#include <stdint.h>

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

void enpu_acc_range(const int8_t *w, int64_t n, int64_t stride, int xmin, int xmax,
                    int64_t bias, int64_t *lo, int64_t *hi) {
    /* Every partial sum is bias-or-not plus a subset of the terms; with
     * xmin <= 0 <= xmax every term's range straddles 0, so the extreme
     * partial sums take each term at its own extreme (or skip it). */
    int64_t l = bias < 0 ? bias : 0, h = bias > 0 ? bias : 0;
    if (xmin > 0) xmin = 0;
    if (xmax < 0) xmax = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t wk = w[k * stride];
        int64_t p1 = wk * xmin, p2 = wk * xmax;
        l += p1 < p2 ? p1 : p2;
        h += p1 < p2 ? p2 : p1;
    }
    if (lo) *lo = l;
    if (hi) *hi = h;
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
