/* PWL activation tables: built-in functions, targets, fitting, checks.
 *
 * Fitting is exact over the integers.  For a fixed shared requantization
 * (M, S), the output y(v) = requant(v) is non-decreasing in the accumulator
 * v, so for every input x and error budget E the accumulators that give
 * |y - q(x)| <= E form one interval [vlo, vhi].  A segment's (a, b) is then
 * feasible at E iff b lies in the intersection over its inputs of
 * [vlo - a*x, vhi - a*x]: for each int8 slope a this gives the smallest E and
 * the whole set of b that reach it, with no approximation.  The outer loop
 * tries a grid of output steps R = M/2^S. */
#include "easynpu/pwl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- built-in functions ------------------------------------------------- */

static double param_alpha(const void *ctx, double dflt) {
    return ctx ? ((const enpu_pwl_params *)ctx)->alpha : dflt;
}

double enpu_pwl_sigmoid(double x, const void *ctx) {
    (void)ctx;
    /* Two branches so exp never overflows. */
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

double enpu_pwl_tanh(double x, const void *ctx) {
    (void)ctx;
    return tanh(x);
}

double enpu_pwl_hard_sigmoid(double x, const void *ctx) {
    double alpha = ctx ? ((const enpu_pwl_params *)ctx)->alpha : 0.2;
    double beta = ctx ? ((const enpu_pwl_params *)ctx)->beta : 0.5;
    double v = alpha * x + beta;
    return v < 0 ? 0 : (v > 1 ? 1 : v);
}

double enpu_pwl_hard_swish(double x, const void *ctx) {
    (void)ctx;
    double v = x / 6.0 + 0.5;
    return x * (v < 0 ? 0 : (v > 1 ? 1 : v));
}

double enpu_pwl_leaky_relu(double x, const void *ctx) {
    return x >= 0 ? x : param_alpha(ctx, 0.01) * x;
}

double enpu_pwl_silu(double x, const void *ctx) {
    return x * enpu_pwl_sigmoid(x, ctx);
}

double enpu_pwl_gelu(double x, const void *ctx) {
    (void)ctx;
    return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}

double enpu_pwl_gelu_tanh(double x, const void *ctx) {
    (void)ctx;
    const double k = 0.79788456080286535588; /* sqrt(2/pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

double enpu_pwl_elu(double x, const void *ctx) {
    return x > 0 ? x : param_alpha(ctx, 1.0) * expm1(x);
}

double enpu_pwl_softplus(double x, const void *ctx) {
    (void)ctx;
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

double enpu_pwl_mish(double x, const void *ctx) {
    return x * tanh(enpu_pwl_softplus(x, ctx));
}

/* ---- the ONNX math ops as tables (docs/numerics.md §11) ---------------- */

/* Every int8 input must map to a number (enpu_pwl_targets refuses NaN), so
 * each function is extended where the float op has no real value: those
 * inputs are outside any range the float model produces (calibration sees
 * only real values), so the extension only fixes what an out-of-range int8
 * code means. */

double enpu_pwl_sqrt(double x, const void *ctx) {
    (void)ctx;
    return x > 0 ? sqrt(x) : 0.0; /* sqrt of a negative: 0 */
}

double enpu_pwl_exp(double x, const void *ctx) {
    (void)ctx;
    return exp(x);
}

double enpu_pwl_log(double x, const void *ctx) {
    (void)ctx;
    return x > 0 ? log(x) : -INFINITY; /* log(x <= 0): -inf, the lowest code */
}

double enpu_pwl_erf(double x, const void *ctx) {
    (void)ctx;
    return erf(x);
}

double enpu_pwl_neg(double x, const void *ctx) {
    (void)ctx;
    return -x;
}

double enpu_pwl_abs(double x, const void *ctx) {
    (void)ctx;
    return fabs(x);
}

double enpu_pwl_reciprocal(double x, const void *ctx) {
    (void)ctx;
    return x != 0 ? 1.0 / x : INFINITY; /* 1/0: +inf, the highest code */
}

double enpu_pwl_floor(double x, const void *ctx) {
    (void)ctx;
    return floor(x);
}

double enpu_pwl_ceil(double x, const void *ctx) {
    (void)ctx;
    return ceil(x);
}

double enpu_pwl_pow(double x, const void *ctx) {
    const enpu_pwl_params *p = ctx;
    double e = p ? p->alpha : 1.0;
    if (x < 0 && e != floor(e)) return 0.0; /* a negative base, fractional exponent: 0 */
    if (x == 0 && e < 0) return INFINITY;
    return pow(x, e);
}

enpu_pwl_fn enpu_pwl_builtin(const char *name) {
    static const struct {
        const char *name;
        enpu_pwl_fn fn;
    } tab[] = {
        {"Sigmoid", enpu_pwl_sigmoid},   {"Tanh", enpu_pwl_tanh},
        {"HardSigmoid", enpu_pwl_hard_sigmoid}, {"HardSwish", enpu_pwl_hard_swish},
        {"LeakyRelu", enpu_pwl_leaky_relu}, {"Silu", enpu_pwl_silu},
        {"Swish", enpu_pwl_silu},        {"Gelu", enpu_pwl_gelu},
        {"GeluTanh", enpu_pwl_gelu_tanh}, {"Elu", enpu_pwl_elu},
        {"Softplus", enpu_pwl_softplus}, {"Mish", enpu_pwl_mish},
        {"Sqrt", enpu_pwl_sqrt}, {"Exp", enpu_pwl_exp}, {"Log", enpu_pwl_log},
        {"Erf", enpu_pwl_erf}, {"Neg", enpu_pwl_neg}, {"Abs", enpu_pwl_abs},
        {"Reciprocal", enpu_pwl_reciprocal}, {"Floor", enpu_pwl_floor},
        {"Ceil", enpu_pwl_ceil}, {"Pow", enpu_pwl_pow},
    };
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(tab[i].name, name) == 0) return tab[i].fn;
    return NULL;
}

/* ---- targets ------------------------------------------------------------ */

int enpu_pwl_targets(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float s_out,
                     int zp_out, int32_t q[256], enpu_err *err) {
    if (!fn) return enpu_fail(err, ENPU_E_USAGE, "PWL: no function given");
    if (!(s_in > 0) || !(s_out > 0) || isinf(s_in) || isinf(s_out))
        return enpu_fail(err, ENPU_E_INVALID,
                         "PWL: scales in %g / out %g must be positive and finite", (double)s_in,
                         (double)s_out);
    if (zp_in < -128 || zp_in > 127 || zp_out < -128 || zp_out > 127)
        return enpu_fail(err, ENPU_E_INVALID, "PWL: zero points in %d / out %d outside int8",
                         zp_in, zp_out);
    for (int x = -128; x <= 127; x++) {
        double r = (double)(x - zp_in) * (double)s_in;
        double f = fn(r, ctx);
        if (isnan(f))
            return enpu_fail(err, ENPU_E_INVALID, "PWL: function is NaN at input %d (real %g)",
                             x, r);
        double v = enpu_round_half_even(f / (double)s_out) + zp_out;
        q[x + 128] = v < -128 ? -128 : (v > 127 ? 127 : (int32_t)v);
    }
    return 0;
}

/* ---- fitting ------------------------------------------------------------ */

#define LEVELS 256 /* error budgets 0..255 LSB; 255 is always feasible */

typedef struct fit_ctx {
    const int32_t *q;
    uint32_t M;
    int S;
    int32_t zp;
    int64_t acc_limit;             /* |a*x + b| <= acc_limit */
    int n_levels;                  /* levels computed so far */
    int64_t (*vlo)[256], (*vhi)[256]; /* [E][x + 128] */
} fit_ctx;

static int32_t rq(const fit_ctx *c, int64_t v) {
    return enpu_requant(v, c->M, c->S, c->zp, -128, 127);
}

/* Smallest v in [-L, L + 1] with rq(v) >= T (L + 1: none).  A double
 * estimate from the inverse of the requant formula, then corrected exactly
 * with rq itself, which is non-decreasing in v. */
static int64_t first_at_least(const fit_ctx *c, int32_t T) {
    const int64_t L = c->acc_limit;
    if (T <= -128) return -L;
    if (T > 127) return L + 1;
    double g = ((double)T - c->zp - (c->S > 0 ? 0.5 : 0.0)) * ldexp(1.0, c->S) / c->M;
    int64_t v = g < -(double)L ? -L : (g > (double)L ? L + 1 : (int64_t)ceil(g));
    while (v > -L && rq(c, v - 1) >= T) v--;
    while (v <= L && rq(c, v) < T) v++;
    return v;
}

/* Accumulator intervals giving |y - q| <= E for every x, for E < need. */
static void ensure_levels(fit_ctx *c, int need) {
    for (; c->n_levels < need; c->n_levels++) {
        int E = c->n_levels;
        for (int k = 0; k < 256; k++) {
            c->vlo[E][k] = first_at_least(c, c->q[k] - E);
            c->vhi[E][k] = first_at_least(c, c->q[k] + E + 1) - 1;
        }
    }
}

typedef struct score {
    int max_err;
    int n_err;
    int64_t sum_err;
} score;

static int score_less(score x, score y) {
    if (x.max_err != y.max_err) return x.max_err < y.max_err;
    if (x.n_err != y.n_err) return x.n_err < y.n_err;
    return x.sum_err < y.sum_err;
}

/* Is some b within budget E for slope a on inputs x0..x0+n-1?  On success
 * [*Lb, *Ub] is the set of such b. */
static int feasible(fit_ctx *c, int E, int x0, int n, int a, int64_t *Lb, int64_t *Ub) {
    ensure_levels(c, E + 1);
    int64_t lb = INT64_MIN, ub = INT64_MAX;
    for (int j = 0; j < n && lb <= ub; j++) {
        int x = x0 + j;
        int64_t l = c->vlo[E][x + 128] - (int64_t)a * x;
        int64_t h = c->vhi[E][x + 128] - (int64_t)a * x;
        if (l > lb) lb = l;
        if (h < ub) ub = h;
    }
    *Lb = lb;
    *Ub = ub;
    return lb <= ub;
}

static int cmp_i64(const void *pa, const void *pb) {
    int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
    return (x > y) - (x < y);
}

/* Best (a, b) for inputs x0 .. x0+n-1 under c's (M, S) among those with a
 * worst-case error <= cap; returns its score (max_err = cap + 1 when none). */
static score fit_segment(fit_ctx *c, int x0, int n, int cap, int8_t *a_out, int32_t *b_out) {
    /* Least-squares slope of the targets, in accumulator units, orders the
     * slope search so the best budget is found early and bounds the rest. */
    double mx = 0, my = 0;
    for (int j = 0; j < n; j++) {
        mx += x0 + j;
        my += c->q[x0 + j + 128];
    }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0;
    for (int j = 0; j < n; j++) {
        sxy += (x0 + j - mx) * (c->q[x0 + j + 128] - my);
        sxx += (x0 + j - mx) * (x0 + j - mx);
    }
    double R = ldexp((double)c->M, -c->S);
    double a_ls = sxx > 0 ? (sxy / sxx) / R : 0;
    int a0 = a_ls > 127 ? 127 : (a_ls < -128 ? -128 : (int)lround(a_ls));

    score best = {cap + 1, n + 1, INT64_MAX};
    int best_a = 0;
    int64_t best_b = 0;
    /* For a fixed budget E the feasible slopes form an interval (b exists iff
     * min_x(vhi - a x) - max_x(vlo - a x) >= 0, a concave function of a), so
     * the smallest budget is quasi-convex in a: walking outward from a0, a
     * direction can stop at the first slope that needs more than the best
     * budget so far, and no optimum is lost. */
    int open_dir[2] = {1, 1}, have_best = 0;
    for (int step = 0; step < 512 && (open_dir[0] || open_dir[1]); step++) {
        /* a0, a0+1, a0-1, a0+2, ... clipped to int8 */
        int dir = step & 1;
        int a = a0 + (dir ? (step + 1) / 2 : -(step / 2));
        if (step > 0 && !open_dir[dir]) continue;
        if (a < -128 || a > 127) {
            open_dir[dir] = 0;
            continue;
        }
        /* Smallest budget E <= min(best, cap) that some b meets.  Once a
         * best is known, test that budget first (most slopes fail it and
         * are pruned by one pass), then bisect: feasibility is monotone in E. */
        int64_t Lb, Ub;
        int top = best.max_err < cap ? best.max_err : cap, E;
        if (!have_best) {
            for (E = 0; E <= top; E++)
                if (feasible(c, E, x0, n, a, &Lb, &Ub)) break;
        } else if (!feasible(c, top, x0, n, a, &Lb, &Ub)) {
            E = top + 1;
        } else {
            int lo = 0, hi = top;
            while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                if (feasible(c, mid, x0, n, a, &Lb, &Ub)) hi = mid;
                else lo = mid + 1;
            }
            E = lo;
            feasible(c, E, x0, n, a, &Lb, &Ub);
        }
        if (E > top) {
            /* The sublevel interval is only located once a slope within
             * the budget is known; before that, keep walking both ways. */
            if (step > 0 && have_best) open_dir[dir] = 0;
            continue;
        }
        /* Within [Lb, Ub], the b hitting the most exact targets: the point
         * covered by the most level-0 intervals (a sweep over their sorted
         * ends); the run [p_best, r_best] where that coverage holds follows. */
        int64_t ls[256], hs[256];
        int m = 0;
        for (int j = 0; j < n; j++) {
            int x = x0 + j;
            int64_t l = c->vlo[0][x + 128] - (int64_t)a * x;
            int64_t h = c->vhi[0][x + 128] - (int64_t)a * x;
            if (l < Lb) l = Lb;
            if (h > Ub) h = Ub;
            if (l <= h) {
                ls[m] = l;
                hs[m] = h;
                m++;
            }
        }
        qsort(ls, (size_t)m, sizeof ls[0], cmp_i64);
        qsort(hs, (size_t)m, sizeof hs[0], cmp_i64);
        int cov_best = 0;
        int64_t p_best = Lb;
        for (int i = 0, k = 0; i < m; i++) {
            if (i + 1 < m && ls[i + 1] == ls[i]) continue; /* last of equal starts */
            while (k < m && hs[k] < ls[i]) k++;
            int cov = (i + 1) - k; /* started at or before ls[i], not yet ended */
            if (cov > cov_best) {
                cov_best = cov;
                p_best = ls[i];
            }
        }
        int64_t r_best = Ub;
        for (int j = 0; j < n && cov_best > 0; j++) {
            int x = x0 + j;
            int64_t l = c->vlo[0][x + 128] - (int64_t)a * x;
            int64_t h = c->vhi[0][x + 128] - (int64_t)a * x;
            if (l <= p_best && p_best <= h && h < r_best) r_best = h;
        }
        /* Every b in [p_best, r_best] is exact on the same inputs; take the
         * one with the smallest accumulator magnitude over the segment (the
         * centre -a*x_mid, clipped), so saturated segments do not drift to
         * the accumulator limit. */
        int64_t b = -(int64_t)a * (2 * (int64_t)x0 + n - 1) / 2;
        if (b < p_best) b = p_best;
        if (b > r_best) b = r_best;
        /* b is exact on exactly cov_best inputs (an interval starting inside
         * (p_best, b] would have raised the coverage), so the sum of errors
         * is only needed when the first two criteria tie or win. */
        score s = {E, n - cov_best, 0};
        have_best = 1;
        if (s.max_err > best.max_err || (s.max_err == best.max_err && s.n_err > best.n_err))
            continue;
        s.n_err = 0;
        for (int j = 0; j < n; j++) {
            int x = x0 + j;
            int d = rq(c, (int64_t)a * x + b) - c->q[x + 128];
            if (d < 0) d = -d;
            if (d) s.n_err++;
            s.sum_err += d;
        }
        if (score_less(s, best)) {
            best = s;
            best_a = a;
            best_b = b;
            if (best.max_err == 0 && best.n_err == 0) break; /* exact: cannot improve */
        }
    }
    *a_out = (int8_t)best_a;
    *b_out = (int32_t)best_b;
    return best;
}

void enpu_pwl_measure(enpu_pwl_table *t, const int32_t q[256]) {
    int max_err = 0, n_err = 0;
    int64_t amin = INT64_MAX, amax = INT64_MIN;
    for (int x = -128; x <= 127; x++) {
        int i = enpu_pwl_segment(t, (int8_t)x);
        int64_t acc = (int64_t)t->a[i] * x + t->b[i];
        if (acc < amin) amin = acc;
        if (acc > amax) amax = acc;
        int d = enpu_pwl_eval(t, (int8_t)x) - q[x + 128];
        if (d < 0) d = -d;
        if (d > max_err) max_err = d;
        if (d) n_err++;
    }
    t->max_err_lsb = max_err;
    t->n_err = n_err;
    t->acc_min = amin;
    t->acc_max = amax;
}

static int log2_pow2(int v) {
    if (v < 1 || (v & (v - 1))) return -1;
    int k = 0;
    while ((1 << k) < v) k++;
    return k;
}

/* Inputs of segment i: [*x0, *x0 + *n) (the end segments absorb the inputs
 * outside the window). */
static void seg_range(int segs, int base, int shift, int i, int *x0, int *n) {
    int lo = base + (i << shift), hi = base + ((i + 1) << shift) - 1;
    if (i == 0) lo = -128;
    if (i == segs - 1) hi = 127;
    *x0 = lo;
    *n = hi - lo + 1;
}

/* Steepest least-squares slope of the targets over any segment, in output
 * LSB per input LSB. */
static double max_slope(const int32_t q[256], int segs, int base, int shift) {
    double smax = 0;
    for (int i = 0; i < segs; i++) {
        int x0, n;
        seg_range(segs, base, shift, i, &x0, &n);
        if (n < 2) continue;
        double mx = 0, my = 0, sxy = 0, sxx = 0;
        for (int j = 0; j < n; j++) {
            mx += x0 + j;
            my += q[x0 + j + 128];
        }
        mx /= n;
        my /= n;
        for (int j = 0; j < n; j++) {
            sxy += (x0 + j - mx) * (q[x0 + j + 128] - my);
            sxx += (x0 + j - mx) * (x0 + j - mx);
        }
        double sl = fabs(sxy / sxx);
        if (sl > smax) smax = sl;
    }
    return smax;
}

/* Fits every segment of one window under c's (M, S) into *t; gives up (and
 * returns max_err > cap, *t incomplete) once a segment cannot meet cap. */
static score fit_all(fit_ctx *c, int segs, int base, int shift, int cap, enpu_pwl_table *t) {
    memset(t, 0, sizeof *t);
    t->segments = segs;
    t->x_base = base;
    t->seg_shift = shift;
    t->M = c->M;
    t->S = c->S;
    t->zp_out = c->zp;
    t->lo = -128;
    t->hi = 127;
    score tot = {0, 0, 0};
    for (int i = 0; i < segs; i++) {
        int x0, n;
        seg_range(segs, base, shift, i, &x0, &n);
        score s = fit_segment(c, x0, n, cap, &t->a[i], &t->b[i]);
        if (s.max_err > tot.max_err) tot.max_err = s.max_err;
        if (s.max_err > cap) return tot; /* s carries sentinel counts */
        tot.n_err += s.n_err;
        tot.sum_err += s.sum_err;
    }
    enpu_pwl_measure(t, c->q);
    return tot;
}

static int64_t acc_mag(const enpu_pwl_table *t) {
    return t->acc_max > -t->acc_min ? t->acc_max : -t->acc_min;
}

/* Best table for one window over a grid of output steps R = M/2^S: from 1/2
 * of the step that lets the steepest segment's least-squares slope be 127
 * (the minimax slope may be smaller) up to 8x it, in steps of 2^(1/8).
 * k_lo..k_hi select part of the grid (screening uses one point).  Only
 * tables with a worst-case error <= cap count; returns 0 if none. */
static int fit_window(fit_ctx *c, int segs, int base, int shift, int mult_bits, int k_lo,
                      int k_hi, int cap, enpu_pwl_table *best, score *best_s) {
    double R0 = max_slope(c->q, segs, base, shift) / 127.0;
    /* Floor: fine enough for any intercept, coarse enough that an output
     * 256 LSB away from zp_out stays within the accumulator limit. */
    double floor_R = 256.0 / (double)c->acc_limit;
    if (floor_R < ldexp(1.0, -12)) floor_R = ldexp(1.0, -12);
    if (R0 < floor_R) R0 = floor_R;
    enpu_pwl_table cur;
    uint32_t prev_M = 0;
    int prev_S = -1, found = 0;
    for (int k = k_lo; k <= k_hi; k++) {
        uint32_t M;
        int S;
        if (enpu_quantize_multiplier(R0 * exp2(k / 8.0), mult_bits, &M, &S, NULL, NULL) != 0)
            continue;
        if (M == prev_M && S == prev_S) continue;
        prev_M = M;
        prev_S = S;
        c->M = M;
        c->S = S;
        c->n_levels = 0;
        score tot = fit_all(c, segs, base, shift, found ? best_s->max_err : cap, &cur);
        if (tot.max_err > cap) continue;
        if (!found || score_less(tot, *best_s) ||
            (!score_less(*best_s, tot) && acc_mag(&cur) < acc_mag(best))) {
            *best = cur;
            *best_s = tot;
            found = 1;
        }
        if (tot.max_err == 0 && tot.n_err == 0) break; /* exact */
    }
    return found;
}

int enpu_pwl_fit_targets(const int32_t q[256], int zp_out, const enpu_pwl_opts *opts,
                         enpu_pwl_table *t, enpu_err *err) {
    int segs = opts && opts->segments ? opts->segments : ENPU_PWL_SEGMENTS_DEFAULT;
    int mult_bits = opts && opts->mult_bits ? opts->mult_bits : ENPU_MULT_BITS_DEFAULT;
    int acc_bits = opts && opts->acc_bits ? opts->acc_bits : ENPU_ACC_BITS_MAX;
    if (acc_bits < ENPU_ACC_BITS_MIN || acc_bits > ENPU_ACC_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "PWL: accumulator width %d bits outside [%d, %d]",
                         acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX);
    int lg = log2_pow2(segs);
    if (lg < 0 || segs > ENPU_PWL_SEGMENTS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "PWL: %d segments is not a power of two in [1, %d]",
                         segs, ENPU_PWL_SEGMENTS_MAX);
    if (mult_bits < 1 || mult_bits > ENPU_MULT_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "PWL: multiplier width %d bits outside [1, %d]",
                         mult_bits, ENPU_MULT_BITS_MAX);
    if (zp_out < -128 || zp_out > 127)
        return enpu_fail(err, ENPU_E_INVALID, "PWL: output zero point %d outside int8", zp_out);
    for (int k = 0; k < 256; k++)
        if (q[k] < -128 || q[k] > 127)
            return enpu_fail(err, ENPU_E_INVALID, "PWL: target %d at input %d outside int8",
                             (int)q[k], k - 128);

    fit_ctx c = {0};
    c.q = q;
    c.zp = zp_out;
    c.acc_limit = ((int64_t)1 << (acc_bits - 1)) - 1;
    if (c.acc_limit > ENPU_PWL_ACC_LIMIT) c.acc_limit = ENPU_PWL_ACC_LIMIT;
    c.vlo = malloc(sizeof(int64_t[LEVELS][256]));
    c.vhi = malloc(sizeof(int64_t[LEVELS][256]));
    if (!c.vlo || !c.vhi) {
        free(c.vlo);
        free(c.vhi);
        return enpu_fail(err, ENPU_E_NOMEM, "PWL: out of memory fitting a table");
    }
    const int full_shift = 8 - lg;
    enpu_pwl_table best;
    score best_s = {LEVELS + 1, 0, 0};
    int found =
        fit_window(&c, segs, -128, full_shift, mult_bits, -4, 24, LEVELS - 1, &best, &best_s);
    if (found && opts && opts->window && best_s.max_err + best_s.n_err > 0) {
        /* Narrower windows: screen every segment-aligned placement with one
         * output step, then run the full grid on the best few. */
        enum { KEEP = 4 };
        int keep_base[KEEP], keep_shift[KEEP], n_keep = 0;
        score keep_s[KEEP];
        for (int sh = 0; sh < full_shift; sh++) {
            int W = segs << sh, step = 1 << sh;
            for (int base = -128; base <= 128 - W; base += step) {
                enpu_pwl_table cand;
                score s;
                int cap = n_keep == KEEP ? keep_s[KEEP - 1].max_err : best_s.max_err;
                if (!fit_window(&c, segs, base, sh, mult_bits, 0, 0, cap, &cand, &s)) continue;
                /* insert into the keep list, sorted best first */
                int pos = n_keep;
                while (pos > 0 && score_less(s, keep_s[pos - 1])) pos--;
                if (pos >= KEEP) continue;
                if (n_keep < KEEP) n_keep++;
                for (int j = n_keep - 1; j > pos; j--) {
                    keep_s[j] = keep_s[j - 1];
                    keep_base[j] = keep_base[j - 1];
                    keep_shift[j] = keep_shift[j - 1];
                }
                keep_s[pos] = s;
                keep_base[pos] = base;
                keep_shift[pos] = sh;
            }
        }
        for (int j = 0; j < n_keep; j++) {
            enpu_pwl_table cand;
            score s;
            if (!fit_window(&c, segs, keep_base[j], keep_shift[j], mult_bits, -4, 24,
                            best_s.max_err, &cand, &s))
                continue;
            if (score_less(s, best_s)) {
                best = cand;
                best_s = s;
            }
        }
    }
    free(c.vlo);
    free(c.vhi);
    if (!found)
        return enpu_fail(err, ENPU_E_LIMIT,
                         "PWL: no output step is representable with a %d-bit multiplier",
                         mult_bits);
    *t = best;
    return 0;
}

int enpu_pwl_fit(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float s_out,
                 int zp_out, int segments, int mult_bits, enpu_pwl_table *t, enpu_err *err) {
    enpu_pwl_opts o = {segments, mult_bits, 0, 0};
    return enpu_pwl_fit_opts(fn, ctx, s_in, zp_in, s_out, zp_out, &o, t, err);
}

int enpu_pwl_fit_opts(enpu_pwl_fn fn, const void *ctx, float s_in, int zp_in, float s_out,
                      int zp_out, const enpu_pwl_opts *opts, enpu_pwl_table *t, enpu_err *err) {
    int32_t q[256];
    int rc = enpu_pwl_targets(fn, ctx, s_in, zp_in, s_out, zp_out, q, err);
    if (rc) return rc;
    return enpu_pwl_fit_targets(q, zp_out, opts, t, err);
}

int enpu_pwl_is_uniform(const enpu_pwl_table *t) {
    int lg = log2_pow2(t->segments);
    return lg >= 0 && t->segments <= ENPU_PWL_SEGMENTS_MAX && t->x_base == -128 &&
           t->seg_shift == 8 - lg;
}

int enpu_pwl_validate(const char *what, const enpu_pwl_table *t, int mult_bits,
                      int allow_window, enpu_err *err) {
    const char *w = what ? what : "PWL table";
    int lg = log2_pow2(t->segments);
    if (lg < 0 || t->segments > ENPU_PWL_SEGMENTS_MAX)
        return enpu_fail(err, ENPU_E_INVALID, "%s: %d segments is not a power of two in [1, %d]",
                         w, t->segments, ENPU_PWL_SEGMENTS_MAX);
    if (t->seg_shift < 0 || t->seg_shift > 8 - lg || t->x_base < -128 ||
        t->x_base + (t->segments << t->seg_shift) > 128)
        return enpu_fail(err, ENPU_E_INVALID,
                         "%s: segment window base %d, shift %d does not lie inside [-128, 127] "
                         "with %d segments",
                         w, t->x_base, t->seg_shift, t->segments);
    if (!allow_window && !enpu_pwl_is_uniform(t))
        return enpu_fail(err, ENPU_E_INVALID,
                         "%s: segment window base %d, shift %d needs the windowed index unit "
                         "(uniform: base -128, shift %d)",
                         w, t->x_base, t->seg_shift, 8 - lg);
    if (t->zp_out < -128 || t->zp_out > 127 || t->lo < -128 || t->hi > 127)
        return enpu_fail(err, ENPU_E_INVALID, "%s: zero point %d or clamp [%d, %d] outside int8",
                         w, (int)t->zp_out, (int)t->lo, (int)t->hi);
    enpu_rq r = {t->M, t->S, t->zp_out, t->lo, t->hi};
    return enpu_rq_check(w, &r, mult_bits, err);
}

int enpu_pwl_check_acc(const char *what, const enpu_pwl_table *t, int acc_bits, enpu_err *err) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int x = -128; x <= 127; x++) {
        int i = enpu_pwl_segment(t, (int8_t)x);
        int64_t acc = (int64_t)t->a[i] * x + t->b[i];
        if (acc < lo) lo = acc;
        if (acc > hi) hi = acc;
    }
    return enpu_acc_check(what ? what : "PWL table", lo, hi, acc_bits, err);
}
