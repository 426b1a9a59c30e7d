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
#include "easynpu/ir.h"

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

/* v as a value of integer dtype dt (carried in float32): truncated toward
 * zero (Cast from float to an integer type, integer Div), wrapped into 8-
 * and 16-bit ranges as C's integer arithmetic does (uint8 Add/Sub/Mul),
 * bool as 0 or 1.  32- and 64-bit values are only truncated: beyond 2^24
 * float32 is not exact anyway; NaN and magnitudes over 1e18 (undefined in
 * ONNX) pass through.  The one rule the float reference, the golden
 * reference's host nodes and the simulator's host ops all follow, so a Cast
 * of a dequantized int8 value gives the same integer everywhere. */
float enpu_int_value(enpu_dtype dt, float v);

/* Bias quantization: *q = round_half_even(b / scale) in double (scale =
 * s_in * s_w[c], given in double so the product is not rounded to float).
 * ENPU_E_LIMIT naming `what` when the result is outside int32;
 * ENPU_E_INVALID for NaN/inf or scale <= 0. */
int enpu_quantize_bias(double b, double scale, const char *what, int32_t *q, enpu_err *err);

/* ---- imported quantization parameters (pre-quantized models) ------------ */

/* The int8 parameters of a tensor that an ONNX QuantizeLinear /
 * DequantizeLinear pair (or a QLinearConv / QLinearMatMul) quantizes with
 * `scale` and zero point `zp`, unsigned (uint8: 0..255) or signed (int8):
 * *s = scale and *z = zp - 128 for uint8, zp for int8.  Exact: for every
 * real value the uint8 code is the int8 code + 128 (the same rounding of
 * x / scale, both ranges clamped alike), so the model's own quantization
 * is kept bit for bit (docs/numerics.md §11).  ENPU_E_INVALID naming `what`
 * for a scale that is not positive and finite (or below ENPU_QSCALE_MIN)
 * or a zero point outside its type. */
int enpu_qparams_import(const char *what, double scale, int64_t zp, int is_unsigned, float *s,
                        int32_t *z, enpu_err *err);
/* ---- 16-bit data (docs/numerics.md §12) ----------------------------------
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

/* ==== TFLite's integer arithmetic (requant "tflite", docs/numerics.md §10) ====
 *
 * The second requantizer of the numerics contract: what TensorFlow Lite (and
 * TFLite Micro, whose reference kernels a microcontroller runs) computes for
 * int8 models, bit for bit.  An architecture selects it with `requant:
 * "tflite"` (arch.h); a quantized graph says which one its integer
 * parameters are for (enpu_graph.requant).  The golden reference and the
 * simulator call the functions below and nothing else for it.
 *
 * (M, S) keep their meaning "real multiplier ~ M / 2^S" in both modes.  A
 * TFLite quantized multiplier (q, shift), real ~ q * 2^(shift - 31) with q
 * in [2^30, 2^31), is stored as M = q, S = 31 - shift:
 *   S == 0       bypass: acc * M (no shift, no rounding: max pool, moves)
 *   1 <= S <= 31 SRDHM(acc * 2^(31-S), M)          (TFLite's left shift)
 *   32 <= S      RDBPOT(SRDHM(acc, M), S - 31)     (TFLite's right shift)
 * SRDHM is gemmlowp's SaturatingRoundingDoublingHighMul (a*b/2^31 rounded,
 * ties toward +infinity), RDBPOT its RoundingDivideByPOT (ties away from
 * zero): TFLite's MultiplyByQuantizedMultiplier with its default double
 * rounding. */

/* The requantizers an architecture can have: X(ID, "json name"). */
#define ENPU_REQUANT_LIST(X) \
    X(EASYNPU, "easynpu")    \
    X(TFLITE, "tflite")

typedef enum enpu_requant_mode {
#define ENPU_X_RQ(id, name) ENPU_REQUANT_##id,
    ENPU_REQUANT_LIST(ENPU_X_RQ)
#undef ENPU_X_RQ
    ENPU_REQUANT_COUNT
} enpu_requant_mode;

/* "easynpu", "tflite" ("unknown" otherwise); enpu_requant_parse: -1 if unknown. */
const char *enpu_requant_name(int mode);
int enpu_requant_parse(const char *s);

/* int64 -> int32 keeping the low 32 bits (two's complement wrap), without
 * the implementation-defined conversion of an out-of-range value. */
static inline int32_t enpu_wrap32u(uint64_t v) {
    uint32_t u = (uint32_t)v;
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}
static inline int32_t enpu_wrap32(int64_t v) { return enpu_wrap32u((uint64_t)v); }

/* gemmlowp's SaturatingRoundingDoublingHighMul: round(a * b / 2^31) with
 * the nudge 2^30 (1 - 2^30 for a negative product) and a truncating
 * division, i.e. ties toward +infinity; INT32_MIN * INT32_MIN saturates to
 * INT32_MAX.  b may be any value in [INT32_MIN, 2^31) (an int64 so that an
 * unsigned multiplier M < 2^31 passes unchanged). */
static inline int32_t enpu_tfl_srdhm(int32_t a, int64_t b) {
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* gemmlowp's RoundingDivideByPOT: round(x / 2^e), ties away from zero,
 * 0 <= e <= 62 (TFLite uses e <= 31; the same formula beyond). */
static inline int64_t enpu_tfl_rdbpot(int64_t x, int e) {
    if (e <= 0) return x;
    int64_t q = enpu_asr64(x, e);              /* floor(x / 2^e) */
    int64_t rem = x - q * ((int64_t)1 << e);   /* x & mask, in [0, 2^e) */
    int64_t threshold = ((((int64_t)1 << e) - 1) >> 1) + (x < 0 ? 1 : 0);
    return q + (rem > threshold ? 1 : 0);
}

/* The tflite requantizer's scaling of v by (M, S) (encoding above), before
 * the zero point and the clamp.  M < 2^31.  The left shift is TFLite's
 * int32 multiply: a value it pushes out of int32 wraps as it does there
 * (the importer proves it never happens: enpu_qgraph_check). */
static inline int64_t enpu_tfl_scale(int64_t v, uint32_t M, int S) {
    if (S <= 0) return v * (int64_t)M;
    int32_t a = S < 31 ? enpu_wrap32u((uint64_t)v << (31 - S)) : enpu_wrap32(v);
    int32_t h = enpu_tfl_srdhm(a, (int64_t)M);
    return S > 31 ? enpu_tfl_rdbpot(h, S - 31) : h;
}

/* y = clamp(scale(acc, M, S) + zp, lo, hi): the tflite requantizer. */
static inline int32_t enpu_requant_tfl(int64_t acc, uint32_t M, int S, int32_t zp, int32_t lo,
                                       int32_t hi) {
    return (int32_t)enpu_clamp64(enpu_tfl_scale(acc, M, S) + zp, lo, hi);
}

/* The requantizer of `mode` (enpu_requant_mode): the one entry point the
 * golden reference and the simulator use. */
static inline int32_t enpu_requant_as(int mode, int64_t acc, uint32_t M, int S, int32_t zp,
                                        int32_t lo, int32_t hi) {
    return mode == ENPU_REQUANT_TFLITE ? enpu_requant_tfl(acc, M, S, zp, lo, hi)
                                       : enpu_requant(acc, M, S, zp, lo, hi);
}

/* TFLite's MultiplyByQuantizedMultiplier(x, q, shift), shift <= 30. */
static inline int32_t enpu_tfl_mbqm(int32_t x, int32_t q, int shift) {
    return (int32_t)enpu_tfl_scale(x, (uint32_t)q, 31 - shift);
}

/* TFLite's int8 ADD: both inputs are scaled to a common scale with 20 bits
 * of headroom (d << 20, d = x - zp), each by its own (A, SA), and summed;
 * the sum is requantized by the node's output (M, S).  This is one input's
 * term. */
#define ENPU_TFL_ADD_LEFT_SHIFT 20
static inline int64_t enpu_tfl_add_term(int32_t d, uint32_t A, int SA) {
    return enpu_tfl_scale((int64_t)d * ((int64_t)1 << ENPU_TFL_ADD_LEFT_SHIFT), A, SA);
}

/* TFLite's QuantizeMultiplier: q = round(f * 2^31) (ties away from zero)
 * for real = f * 2^shift, f in [0.5, 1) (frexp); q == 2^31 becomes 2^30
 * with shift + 1; shift < -31 flushes to q = 0, shift = 0; real == 0 gives
 * 0, 0.  ENPU_E_INVALID for a negative, NaN or infinite real naming `what`;
 * ENPU_E_UNSUPPORTED when shift > 30 (real >= 2^30: no int8 model has it). */
int enpu_tfl_quantize_multiplier(double real, const char *what, int32_t *q, int *shift,
                                 enpu_err *err);
/* The same as (M, S) = (q, 31 - shift). */
int enpu_tfl_multiplier(double real, const char *what, uint32_t *M, int *S, enpu_err *err);

/* TFLite's float -> int8: clamp(round(x / scale) + zp, -128, 127), the
 * division in float and ties away from zero (TfLiteRound); NaN maps to zp. */
int32_t enpu_tfl_quantize(float x, float scale, int32_t zp);

/* Fused activation clamp (TFLite's CalculateActivationRangeQuantized) for
 * ActivationFunctionType `act` (0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6)
 * on an int8 output (scale, zp); ENPU_E_UNSUPPORTED for others, naming
 * `what`. */
int enpu_tfl_act_range(int act, float scale, int32_t zp, const char *what, int32_t *lo,
                       int32_t *hi, enpu_err *err);

/* ADD parameters exactly as TFLite prepares them: twice the larger input
 * scale as the common scale, A[i] / 2^SA[i] = s_i / (2 max(s0, s1)), M /
 * 2^S = 2 max(s0, s1) / (2^20 s_out). */
int enpu_tfl_add_params(float s0, float s1, float s_out, const char *what, uint32_t A[2],
                        int SA[2], uint32_t *M, int *S, enpu_err *err);

/* AVERAGE_POOL_2D: TFLite divides the window's raw sum by its element count
 * n rounding half away from zero, (sum +- n/2) / n in C.  This is that rule;
 * enpu_tfl_avgpool_multiplier gives the (M, S) with which the tflite
 * requantizer computes exactly the same for every sum of n int8 values
 * (docs/numerics.md §10.5 proves it; n <= ENPU_TFL_AVGPOOL_MAX_N). */
#define ENPU_TFL_AVGPOOL_MAX_N 2896
static inline int32_t enpu_tfl_avg_round(int32_t sum, int32_t n) {
    return sum > 0 ? (sum + n / 2) / n : (sum - n / 2) / n;
}
int enpu_tfl_avgpool_multiplier(int64_t n, const char *what, uint32_t *M, int *S, enpu_err *err);

/* MEAN over n elements (TFLite Micro's QuantizedMeanOrSum): the multiplier
 * of s_in / s_out with 1/n folded in, applied to sum - n * zp_in. */
int enpu_tfl_mean_multiplier(float s_in, float s_out, int64_t n, const char *what, uint32_t *M,
                             int *S, enpu_err *err);

/* gemmlowp fixed point on raw int32 values with `ibits` integer bits
 * (Q(ibits).(31-ibits)), as TFLite's softmax, logistic and tanh use it:
 * exp(a) for a <= 0 (result Q0.31), 1/(1+a) and (1-a)/(1+a) for a in [0, 1)
 * (Q0.31), logistic and tanh (Q0.31).  0 <= ibits <= 30. */
int32_t enpu_tfl_exp_on_negative_values(int32_t a, int ibits);
int32_t enpu_tfl_one_over_one_plus_x(int32_t a);
int32_t enpu_tfl_one_minus_x_over_one_plus_x(int32_t a);
int32_t enpu_tfl_logistic_q(int32_t a, int ibits);
int32_t enpu_tfl_tanh_q(int32_t a, int ibits);

/* The host kernels of TFLite's int8 ops that have no NPU datapath: SOFTMAX
 * (beta 1, output 1/256, -128), LOGISTIC (output zero point -128), TANH
 * (output zero point 0) and HARD_SWISH.  Prepare from the tensors'
 * parameters exactly as TFLite Micro does (ENPU_E_UNSUPPORTED naming `what`
 * for parameters TFLite refuses or that would overflow its arithmetic);
 * run on int8 values. */
typedef enum enpu_tfl_kernel {
    ENPU_TFL_SOFTMAX = 0,
    ENPU_TFL_LOGISTIC,
    ENPU_TFL_TANH,
    ENPU_TFL_HARD_SWISH
} enpu_tfl_kernel;

typedef struct enpu_tfl_kparams {
    enpu_tfl_kernel kernel;
    int32_t zp_in, zp_out;
    int32_t mult;        /* softmax: input_multiplier; logistic/tanh: input_multiplier */
    int shift;           /* softmax/logistic/tanh: input_left_shift */
    int32_t limit;       /* softmax: diff_min; logistic/tanh: input_range_radius */
    int16_t out_mult16, relu_mult16; /* hard swish: output and "reluish" multipliers */
    int out_exp, relu_exp;           /* their exponents */
} enpu_tfl_kparams;

int enpu_tfl_kernel_prepare(enpu_tfl_kernel k, float s_in, int32_t zp_in, float s_out,
                            int32_t zp_out, const char *what, enpu_tfl_kparams *p,
                            enpu_err *err);
/* One element of LOGISTIC, TANH or HARD_SWISH. */
int8_t enpu_tfl_kernel_eval(const enpu_tfl_kparams *p, int8_t x);
/* SOFTMAX over n values x[i * stride], written to y[i * stride]. */
void enpu_tfl_softmax(const enpu_tfl_kparams *p, const int8_t *x, int8_t *y, int64_t n,
                      int64_t stride);

#ifdef __cplusplus
}
#endif
#endif
