/* Piecewise-linear (PWL) activation tables: the PE's table activation.
 *
 * The PE evaluates y = requant(a[i] * x + b[i]) on the int8 input x, the
 * segment i picked by the top bits of x: uniform segments over -128..127,
 * i = (x + 128) >> seg_shift.  a[i] is an int8 weight (the PE's 8x8
 * multiplier), b[i] an int32 bias (the accumulate path), and one shared
 * requantization (M, S, zp_out, lo, hi) per table turns the accumulator into
 * the int8 output: exactly the conv datapath, so a table activation costs one
 * MAC per element.  The input zero point is folded into b (x is raw int8).
 *
 * The compiler fits a table to any pointwise function of one input with
 * enpu_pwl_fit; its worst-case error against the exactly quantized function,
 * over all 256 inputs, is in max_err_lsb.  docs/numerics.md §8 has the rules,
 * the fitting method and measured errors. */
#ifndef EASYNPU_PWL_H
#define EASYNPU_PWL_H

#include <stdint.h>

#include "easynpu/error.h"
#include "easynpu/numerics.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_PWL_SEGMENTS_DEFAULT 16
#define ENPU_PWL_SEGMENTS_MAX 256
/* Every fitted table keeps |a[i]*x + b[i]| <= this (a 24-bit accumulator),
 * or less with enpu_pwl_opts.acc_bits < 24; enpu_pwl_check_acc proves the
 * exact range of any table against any width. */
#define ENPU_PWL_ACC_LIMIT ((int64_t)(1 << 23) - 1)

typedef struct enpu_pwl_table {
    int segments;  /* power of two, 1..256 (architecture parameter, default 16) */
    /* Segment window: i = clamp((x - x_base) >> seg_shift, 0, segments - 1).
     * Uniform tables (the base hardware): x_base = -128, seg_shift =
     * log2(256 / segments), i.e. i = (x + 128) >> seg_shift.  Windowed
     * tables (opt-in, enpu_pwl_opts.window) use a narrower window and let the
     * two end segments extend to -128 and 127. */
    int x_base;
    int seg_shift;
    int8_t a[ENPU_PWL_SEGMENTS_MAX];  /* slope per segment (int8 weight) */
    int32_t b[ENPU_PWL_SEGMENTS_MAX]; /* intercept per segment (int32 bias, zp_in folded in) */
    uint32_t M;                       /* shared requantization of the table */
    int S;
    int32_t zp_out;
    int32_t lo, hi; /* output clamp, within [-128, 127] (fits: -128 / 127) */
    /* Filled by the fit and by enpu_pwl_measure: */
    double max_err_lsb;       /* max over all 256 x of |eval(x) - target(x)|, output LSB */
    int n_err;                /* how many of the 256 inputs differ from the target */
    int64_t acc_min, acc_max; /* range of a[i]*x + b[i] over all 256 x */
} enpu_pwl_table;

/* Fitting options; zero fields take the defaults. */
typedef struct enpu_pwl_opts {
    int segments;  /* 0: ENPU_PWL_SEGMENTS_DEFAULT */
    int mult_bits; /* 0: ENPU_MULT_BITS_DEFAULT */
    int window;    /* 1: also try narrower segment windows, keeping one only if
                      strictly better (needs the windowed index unit,
                      docs/numerics.md §8.4); 0: uniform tables only */
    int acc_bits;  /* 0: 32; the fit keeps |a*x + b| <= min(2^(acc_bits-1) - 1,
                      ENPU_PWL_ACC_LIMIT) so the table fits the accumulator */
} enpu_pwl_opts;

/* A pointwise real function; ctx is passed through (may be NULL). */
typedef double (*enpu_pwl_fn)(double x, const void *ctx);

/* ctx of the built-ins that take parameters (NULL = the ONNX defaults):
 * hard_sigmoid alpha=0.2 beta=0.5, leaky_relu alpha=0.01, elu alpha=1. */
typedef struct enpu_pwl_params {
    double alpha, beta;
} enpu_pwl_params;

double enpu_pwl_sigmoid(double x, const void *ctx);
double enpu_pwl_tanh(double x, const void *ctx);
double enpu_pwl_hard_sigmoid(double x, const void *ctx); /* max(0, min(1, alpha*x + beta)) */
double enpu_pwl_hard_swish(double x, const void *ctx);   /* x * max(0, min(1, x/6 + 1/2)) */
double enpu_pwl_leaky_relu(double x, const void *ctx);   /* x >= 0 ? x : alpha*x */
double enpu_pwl_silu(double x, const void *ctx);         /* x * sigmoid(x) (swish) */
double enpu_pwl_gelu(double x, const void *ctx);         /* x/2 * (1 + erf(x/sqrt 2)) */
double enpu_pwl_gelu_tanh(double x, const void *ctx);    /* tanh approximation of GELU */
double enpu_pwl_elu(double x, const void *ctx);          /* x > 0 ? x : alpha*(e^x - 1) */
double enpu_pwl_softplus(double x, const void *ctx);     /* log(1 + e^x) */
double enpu_pwl_mish(double x, const void *ctx);         /* x * tanh(softplus(x)) */

/* The ONNX math ops, defined on every input (docs/numerics.md §11): where the
 * float op has no real value the table takes sqrt(x < 0) = 0, log(x <= 0) =
 * -inf, 1/0 = +inf, pow(x < 0, fractional e) = 0, pow(0, e < 0) = +inf
 * (infinities saturate to -128 / 127).  enpu_pwl_pow's exponent is
 * ctx->alpha. */
double enpu_pwl_sqrt(double x, const void *ctx);
double enpu_pwl_exp(double x, const void *ctx);
double enpu_pwl_log(double x, const void *ctx);
double enpu_pwl_erf(double x, const void *ctx);
double enpu_pwl_neg(double x, const void *ctx);
double enpu_pwl_abs(double x, const void *ctx);
double enpu_pwl_reciprocal(double x, const void *ctx);
double enpu_pwl_floor(double x, const void *ctx);
double enpu_pwl_ceil(double x, const void *ctx);
double enpu_pwl_pow(double x, const void *ctx);

/* Built-in by ONNX op name ("Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
 * "LeakyRelu", "Gelu", "Elu", "Softplus", "Mish", "Sqrt", "Exp", "Log",
 * "Erf", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Pow"), plus
 * "Silu"/"Swish" and "GeluTanh" (Gelu with approximate="tanh"); NULL when
 * unknown. */
enpu_pwl_fn enpu_pwl_builtin(const char *name);

/* The exactly quantized function the table approximates, for all 256 inputs:
 * q[x + 128] = clamp(round_half_even(f((x - zp_in) * s_in) / s_out) + zp_out,
 *                    -128, 127), evaluated in double.
 * ENPU_E_USAGE without a function; ENPU_E_INVALID if f returns NaN (naming
 * the input), for non-positive or non-finite scales, or zero points outside
 * [-128, 127]. */
int enpu_pwl_targets(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float s_out,
                     int zp_out, int32_t q[256], enpu_err *err);

/* Fits a table to integer targets q[x + 128] (each in [-128, 127]; any int8
 * -> int8 map, not only a real function).  For each output step R = M/2^S
 * of a grid, every segment's (a, b) is the exact integer optimum of, in
 * order: its worst-case error, the number of inputs that differ, the sum of
 * errors; the table (R, and with opts->window the segment window) that is
 * best by the same order wins, ties going to the smaller accumulator range.
 * lo/hi are -128/127; |a*x + b| <= ENPU_PWL_ACC_LIMIT (and the opts'
 * accumulator).  Fills max_err_lsb, n_err, acc_min/acc_max.  opts may be
 * NULL (defaults).  ENPU_E_USAGE for segments not a power of two in [1, 256],
 * mult_bits outside [1, 31] or acc_bits outside [16, 32];
 * ENPU_E_INVALID for targets or zp_out outside int8. */
int enpu_pwl_fit_targets(const int32_t q[256], int zp_out, const enpu_pwl_opts *opts,
                         enpu_pwl_table *t, enpu_err *err);

/* enpu_pwl_targets + enpu_pwl_fit_targets with options. */
int enpu_pwl_fit_opts(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float s_out,
                      int zp_out, const enpu_pwl_opts *opts, enpu_pwl_table *t, enpu_err *err);

/* The same with uniform segments (window off): the base hardware. */
int enpu_pwl_fit(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float s_out,
                 int zp_out, int segments, int mult_bits, enpu_pwl_table *t, enpu_err *err);

/* Segment of input x (see x_base above).  For a uniform table the clamp
 * never acts and this is (x + 128) >> seg_shift. */
static inline int enpu_pwl_segment(const enpu_pwl_table *t, int8_t x) {
    int d = (int)x - t->x_base;
    if (d < 0) return 0;
    d >>= t->seg_shift;
    return d < t->segments ? d : t->segments - 1;
}

/* THE evaluation, shared by the golden reference and the simulator: one MAC
 * a[i]*x + b[i] on the conv datapath, then the table's requantization. */
static inline int8_t enpu_pwl_eval(const enpu_pwl_table *t, int8_t x) {
    int i = enpu_pwl_segment(t, x);
    int64_t acc = (int64_t)t->a[i] * x + t->b[i];
    return (int8_t)enpu_requant(acc, t->M, t->S, t->zp_out, t->lo, t->hi);
}

/* Recomputes max_err_lsb, n_err, acc_min and acc_max of t against q. */
void enpu_pwl_measure(enpu_pwl_table *t, const int32_t q[256]);

/* True if t uses the base hardware's uniform segment index. */
int enpu_pwl_is_uniform(const enpu_pwl_table *t);

/* Checks a table (e.g. read back from a program file): segments a power of
 * two in [1, 256]; the window inside [-128, 127] (exactly the uniform one
 * unless allow_window); M < 2^mult_bits, S in [0, 63]; -128 <= lo <= hi <=
 * 127 and zp_out in int8.  ENPU_E_INVALID naming `what`. */
int enpu_pwl_validate(const char *what, const enpu_pwl_table *t, int mult_bits,
                      int allow_window, enpu_err *err);

/* Proves a*x + b of every segment and input fits an acc_bits accumulator
 * (ENPU_E_NOFIT naming `what` otherwise). */
int enpu_pwl_check_acc(const char *what, const enpu_pwl_table *t, int acc_bits, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
