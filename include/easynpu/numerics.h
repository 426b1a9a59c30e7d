/* EasyNPU numerics: the single source of truth for integer arithmetic.
 *
 * The golden int8 reference and the cycle-accurate simulator both call these
 * functions, so that every op is bit-exact between them by construction.  The
 * hot ones (requantization, saturation, shifts) are `static inline` so the
 * simulator's inner loop pays no call.  The rules, their bit widths and the
 * proofs of the bounds quoted here are in docs/numerics.md.
 *
 * Rounding, in one line each:
 *  - integer requantization (hardware): round half UP, i.e. toward +infinity
 *    on ties for both signs (-2.5 -> -2, 2.5 -> 3);
 *  - float -> int quantization (compile time, enpu_quantize*): round half to
 *    EVEN (2.5 -> 2, 3.5 -> 4, -2.5 -> -2), as ONNX QuantizeLinear. */
#ifndef EASYNPU_NUMERICS_H
#define EASYNPU_NUMERICS_H

#include <stdint.h>

#include "easynpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Architecture limits of the requantizer (docs/numerics.md §2). */
#define ENPU_MULT_BITS_DEFAULT 20 /* M < 2^20 */
#define ENPU_MULT_BITS_MAX 31     /* M < 2^31: keeps acc*M + round inside int64 */
#define ENPU_SHIFT_MAX 63         /* S in [0, 63] */
#define ENPU_ACC_BITS_DEFAULT 32
#define ENPU_ACC_BITS_MIN 16
#define ENPU_ACC_BITS_MAX 32 /* acc*M cannot overflow int64 for acc_bits <= 32 */
/* Smallest scale enpu_choose_qparams/enpu_symmetric_scale return (2^-32):
 * keeps every derived real multiplier far from S > 63. */
#define ENPU_QSCALE_MIN 2.3283064365386963e-10

/* Requantization parameters of one output channel (or one PWL table). */
typedef struct enpu_rq {
    uint32_t M;  /* unsigned multiplier, M < 2^mult_bits */
    int S;       /* right shift, 0..63; 0 means no rounding term */
    int32_t zp;  /* output zero point, added after the shift */
    int32_t lo;  /* output clamp (fused ReLU/ReLU6 live here), lo <= hi */
    int32_t hi;
} enpu_rq;

/* ---- shifts and division (exact, no floating point) -------------------- */

/* floor(v / 2^s) for 0 <= s <= 63: an arithmetic right shift.  Written
 * without `>>` on a negative value (implementation-defined in C) so it is
 * portable; compilers emit one `sar`. */
static inline int64_t enpu_asr64(int64_t v, int s) {
    return v >= 0 ? (v >> s) : ~((~v) >> s);
}

/* round(v / 2^s) with ties toward +infinity (round half up) for 0 <= s <= 63;
 * s == 0 returns v.  The caller guarantees v + 2^(s-1) does not overflow
 * (true for every acc*M the requantizer forms, docs/numerics.md §2.3). */
static inline int64_t enpu_rshift_round(int64_t v, int s) {
    if (s <= 0) return v;
    return enpu_asr64(v + ((int64_t)1 << (s - 1)), s);
}

/* floor(a / b) for b > 0 (C's `/` truncates toward zero). */
static inline int64_t enpu_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* round(a / b) for b > 0, ties toward +infinity (same rule as requant). */
static inline int64_t enpu_div_round(int64_t a, int64_t b) {
    /* floor((2a + b) / 2b) without forming 2a: split a = q*b + r, 0 <= r < b. */
    int64_t q = enpu_floor_div(a, b);
    int64_t r = a - q * b;
    return (r >= b - r) ? q + 1 : q; /* 2r >= b  <=>  frac >= 1/2 */
}

/* ---- saturation -------------------------------------------------------- */

static inline int64_t enpu_clamp64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}
static inline int8_t enpu_sat_i8(int64_t v) { return (int8_t)enpu_clamp64(v, -128, 127); }
static inline uint8_t enpu_sat_u8(int64_t v) { return (uint8_t)enpu_clamp64(v, 0, 255); }
static inline int32_t enpu_sat_i32(int64_t v) {
    return (int32_t)enpu_clamp64(v, INT32_MIN, INT32_MAX);
}
/* a + b saturated to int32 (never wraps). */
static inline int32_t enpu_sat_add_i32(int32_t a, int32_t b) {
    return enpu_sat_i32((int64_t)a + (int64_t)b);
}
/* v saturated to a signed `bits`-wide integer, 2 <= bits <= 63. */
static inline int64_t enpu_sat_bits(int64_t v, int bits) {
    int64_t hi = ((int64_t)1 << (bits - 1)) - 1;
    return enpu_clamp64(v, -hi - 1, hi);
}

/* ---- requantization (docs/numerics.md §2) ------------------------------- */

/* y = clamp(((acc * M + 2^(S-1)) >> S) + zp, lo, hi), all in int64, the
 * shift arithmetic (floor), so ties round toward +infinity for both signs.
 * S == 0: y = clamp(acc * M + zp, lo, hi).
 * Preconditions (checked once per layer by enpu_rq_check, not here):
 * acc fits int32 (acc_bits <= 32), M < 2^31, 0 <= S <= 63, lo <= hi.  Under
 * them no intermediate overflows int64 (docs/numerics.md §2.3). */
static inline int32_t enpu_requant(int64_t acc, uint32_t M, int S, int32_t zp, int32_t lo,
                                   int32_t hi) {
    int64_t v = enpu_rshift_round(acc * (int64_t)M, S) + zp;
    return (int32_t)enpu_clamp64(v, lo, hi);
}

static inline int32_t enpu_requant_rq(int64_t acc, const enpu_rq *rq) {
    return enpu_requant(acc, rq->M, rq->S, rq->zp, rq->lo, rq->hi);
}

/* ---- accumulator width -------------------------------------------------- */

/* True if acc is representable in a signed acc_bits-wide accumulator
 * (-2^(acc_bits-1) <= acc <= 2^(acc_bits-1) - 1), 2 <= acc_bits <= 63. */
static inline int enpu_acc_fits(int64_t acc, int acc_bits) {
    int64_t hi = ((int64_t)1 << (acc_bits - 1)) - 1;
    return acc >= -hi - 1 && acc <= hi;
}

/* Worst-case |acc| of  bias + sum_{k<n_terms} x_k * w_k  with |x_k| <=
 * max_abs_x, |w_k| <= max_abs_w, |bias| <= max_abs_bias, for EVERY partial
 * sum in any order (each partial sum is a sub-sum of the same terms).
 * Saturates at INT64_MAX instead of overflowing; negative inputs count as 0.
 * For the int8 datapath with the zero-point correction folded into the bias
 * (docs/numerics.md §5) max_abs_x = 128 and max_abs_w = 127 (or 128). */
int64_t enpu_acc_bound(int64_t n_terms, int max_abs_x, int max_abs_w, int64_t max_abs_bias);

/* Exact interval [*lo, *hi] containing every partial sum of
 * bias + sum_k x_k * w[k*stride] over inputs x_k in [xmin, xmax] (xmin <= 0 <=
 * xmax), in any accumulation order and with the bias added first or last.
 * Tighter than enpu_acc_bound because it uses the actual weights; the
 * compiler calls it per output channel.  n up to 2^40 terms. */
void enpu_acc_range(const int8_t *w, int64_t n, int64_t stride, int xmin, int xmax,
                    int64_t bias, int64_t *lo, int64_t *hi);

/* Proves no accumulator overflow for one layer: fails with ENPU_E_NOFIT,
 * naming `layer`, the bound and the width, when [lo, hi] does not fit a
 * signed acc_bits-wide accumulator; ENPU_E_USAGE for acc_bits outside
 * [ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX]. */
int enpu_acc_check(const char *layer, int64_t lo, int64_t hi, int acc_bits, enpu_err *err);

/* enpu_acc_bound + enpu_acc_check in one call (worst case over all weights). */
int enpu_acc_check_bound(const char *layer, int64_t n_terms, int max_abs_x, int max_abs_w,
                         int64_t max_abs_bias, int acc_bits, enpu_err *err);

/* ---- real multiplier -> (M, S) ------------------------------------------ */

/* Converts a positive real scale to M / 2^S with M = round(real * 2^S) <
 * 2^mult_bits, choosing the LARGEST S in [0, 63] that allows it (most
 * precision).  Guarantees |M/2^S - real| <= 2^-(S+1) and, whenever S < 63,
 * M >= 2^(mult_bits-1) so that the relative error is <= 2^-mult_bits
 * (docs/numerics.md §3 proves it).  For real < 2^(mult_bits-1-63)
 * S is capped at 63 and M is small: the (possibly large) relative error is
 * reported in *rel_err (may be NULL) and the call succeeds while M >= 1.
 * Errors: ENPU_E_INVALID for real <= 0, NaN or infinite; ENPU_E_LIMIT when
 * real is too large (round(real) >= 2^mult_bits even at S = 0) or too small
 * (M would be 0 at S = 63); ENPU_E_USAGE for mult_bits outside [1, 31].
 * The message names the value. */
int enpu_quantize_multiplier(double real_scale, int mult_bits, uint32_t *M, int *S,
                             double *rel_err, enpu_err *err);

/* Validates requantization parameters against the architecture (M <
 * 2^mult_bits, 0 <= S <= 63, lo <= hi, zp/lo/hi inside [-2^31, 2^31-1]);
 * ENPU_E_INVALID naming `what` (e.g. "conv1: channel 3"). */
int enpu_rq_check(const char *what, const enpu_rq *rq, int mult_bits, enpu_err *err);

/* ---- float <-> int quantization (compile time) -------------------------- */

/* Round half to even of a double (no dependence on the FP rounding mode). */
double enpu_round_half_even(double v);

/* Asymmetric per-tensor parameters for a real range [min, max] mapped onto
 * [qmin, qmax]: the range is first widened to include 0 (so 0.0 is exactly
 * representable: zero padding and ReLU are exact); scale = (max - min) /
 * (qmax - qmin), at least ENPU_QSCALE_MIN; zp = round_half_even(qmin -
 * min/scale) clamped to [qmin, qmax] (the "nudge").  min == max (== 0 after
 * widening) gives scale 1 and zp = 0 clamped into [qmin, qmax].
 * ENPU_E_INVALID for NaN/infinite bounds or min > max; ENPU_E_USAGE for
 * qmin >= qmax. */
int enpu_choose_qparams(float min, float max, int qmin, int qmax, float *scale, int32_t *zp,
                        enpu_err *err);

/* Largest |v[k*stride]| for k < n (0 for n == 0; NaN entries are skipped). */
float enpu_max_abs(const float *v, int64_t n, int64_t stride);

/* Symmetric scale for weights quantized to [-qmax, qmax] (qmax = 127 for
 * int8: -128 is never used so negation stays in range): max_abs / qmax.  An
 * all-zero channel (max_abs <= 0 or below qmax*ENPU_QSCALE_MIN) gets 1/qmax,
 * as if its range were [-1, 1]; all its weights quantize to 0 anyway. */
float enpu_symmetric_scale(float max_abs, int qmax);

/* q = clamp(round_half_even(x / scale) + zp, qmin, qmax), the division in
 * float32 exactly as ONNX QuantizeLinear; NaN maps to zp.  scale > 0. */
int32_t enpu_quantize(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax);

/* (q - zp) * scale in float32, as ONNX DequantizeLinear. */
static inline float enpu_dequantize(int32_t q, float scale, int32_t zp) {
    return (float)(q - zp) * scale;
}

/* Bias quantization: *q = round_half_even(b / scale) in double (scale =
 * s_in * s_w[c], given in double so the product is not rounded to float).
 * ENPU_E_LIMIT naming `what` when the result is outside int32;
 * ENPU_E_INVALID for NaN/inf or scale <= 0. */
int enpu_quantize_bias(double b, double scale, const char *what, int32_t *q, enpu_err *err);

/* ---- 16-bit data (docs/numerics.md §10) ----------------------------------
 * The row-stationary engine computes on 16-bit activations and weights, as
 * its design note does (Q-format fixed point), with 64-bit psums.  The
 * 16-bit contract: activations int16, symmetric per tensor (zero point 0,
 * values in [-32768, 32767], scales from +-max|x| onto +-32767, or powers of
 * two in the note's Q-format); weights int16 symmetric per output channel in
 * [-32767, 32767]; the accumulator int64; the same (M, S) requantization,
 * its product formed exactly (enpu_requant_wide). */

#define ENPU_I16_QMAX 32767
/* Accumulator of 16-bit data: the note's 64-bit psum adder. */
#define ENPU_ACC_BITS_WIDE_MAX 64

/* y = clamp(floor((acc * M + 2^(S-1)) / 2^S) + zp, lo, hi) for ANY int64
 * acc: acc * M is formed exactly (96 bits, no overflow), so the result is
 * enpu_requant's wherever that one is defined.  M < 2^31, 0 <= S <= 63,
 * lo <= hi. */
int32_t enpu_requant_wide(int64_t acc, uint32_t M, int S, int32_t zp, int32_t lo, int32_t hi);

/* enpu_acc_range for int16 weights: every partial sum of bias + sum_k x_k *
 * w[k*stride], x_k in [xmin, xmax] (xmin <= 0 <= xmax); the sums saturate at
 * INT64_MIN / INT64_MAX (which enpu_acc_check_wide then refuses). */
void enpu_acc_range16(const int16_t *w, int64_t n, int64_t stride, int xmin, int xmax,
                      int64_t bias, int64_t *lo, int64_t *hi);

/* enpu_acc_check for accumulators of ENPU_ACC_BITS_MIN..ENPU_ACC_BITS_WIDE_MAX
 * bits (a saturated bound never fits 64 bits): ENPU_E_NOFIT naming layer. */
int enpu_acc_check_wide(const char *layer, int64_t lo, int64_t hi, int acc_bits, enpu_err *err);

/* Symmetric per-tensor scale of 16-bit activations whose real range is
 * [min, max]: max(|min|, |max|) / 32767 (at least ENPU_QSCALE_MIN; 1/32767
 * for an all-zero range), or with pow2 the smallest power of two at least
 * that (the note's Q-format: 2^-f, f fractional bits).  ENPU_E_INVALID for
 * a non-finite range. */
int enpu_choose_scale16(float min, float max, int pow2, float *scale, enpu_err *err);

/* Symmetric per-channel weight scale for int16: enpu_symmetric_scale(max_abs,
 * 32767), rounded up to a power of two with pow2. */
float enpu_weight_scale16(float max_abs, int pow2);

/* ---- helpers for ops that are not plain conv ----------------------------- */


#ifdef __cplusplus
}
#endif
#endif
