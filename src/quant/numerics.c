/* Numerics that are not on the simulator's hot path: bounds, parameter
 * selection and float<->int conversion.  The rules are in docs/numerics.md. */
#include "easynpu/numerics.h"

#include <math.h>
#include <stdbool.h>
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

static int64_t add_sat_s(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

void enpu_acc_range16(const int16_t *w, int64_t n, int64_t stride, int xmin, int xmax,
                      int64_t bias, int64_t *lo, int64_t *hi) {
    /* the same argument as enpu_acc_range: each term at its own extreme */
    int64_t l = bias < 0 ? bias : 0, h = bias > 0 ? bias : 0;
    if (xmin > 0) xmin = 0;
    if (xmax < 0) xmax = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t wk = w[k * stride];
        int64_t p1 = wk * xmin, p2 = wk * xmax; /* |.| < 2^31: exact */
        l = add_sat_s(l, p1 < p2 ? p1 : p2);
        h = add_sat_s(h, p1 < p2 ? p2 : p1);
    }
    if (lo) *lo = l;
    if (hi) *hi = h;
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
