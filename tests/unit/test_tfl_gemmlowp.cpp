/* TFLite's integer arithmetic of EasyNPU (numerics.h, requant "tflite")
 * against an independent implementation: Debian's gemmlowp headers, the
 * fixed-point library TFLite itself includes (fixedpoint/fixedpoint.h).
 *
 * Repository part: the primitives (SaturatingRoundingDoublingHighMul,
 * RoundingDivideByPOT, MultiplyByQuantizedMultiplier, exp, 1/(1+x),
 * logistic, tanh) over edge values and millions of random ones; the int8
 * kernels (LOGISTIC, TANH, HARD_SWISH, SOFTMAX) composed here from gemmlowp
 * over every int8 input and a set of scales; and the golden reference on
 * the kernel fixtures of tests/tflite/.
 *
 * Shared part: an executor of TFLite's int8 kernels written here on
 * gemmlowp (convolution with the zero point subtracted and padding skipped,
 * the add with its 20-bit headroom, the average pool's rounding division,
 * softmax, multipliers from TFLite's QuantizeMultiplier re-implemented
 * here) runs the three MLPerf Tiny models on their test vectors; every
 * layer output of EasyNPU's golden reference equals it, element by element.
 * So where GOLDEN_armnn.txt differs (docs/tflite.md), EasyNPU computes
 * TFLite's rule. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fixedpoint/fixedpoint.h"

extern "C" {
#include "testutil.h"
#include "easynpu/file.h"
#include "easynpu/quant.h"
#include "easynpu/tflite.h"
}

using gemmlowp::FixedPoint;
using gemmlowp::RoundingDivideByPOT;
using gemmlowp::SaturatingRoundingDoublingHighMul;

/* Deterministic PRNG (xorshift64*). */
static uint64_t rng_state = 0x5DEECE66DULL;
static uint64_t rng() {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
static int32_t rng_i32() { return (int32_t)(uint32_t)rng(); }

static const int32_t edges[] = {INT32_MIN, INT32_MIN + 1, -(1 << 30) - 1, -(1 << 30), -(1 << 30) + 1,
                                -65536, -32769, -32768, -3, -2, -1, 0, 1, 2, 3, 32767, 32768,
                                65535, (1 << 30) - 1, 1 << 30, (1 << 30) + 1, INT32_MAX - 1,
                                INT32_MAX};

/* ---- TFLite's formulas composed from gemmlowp ------------------------------ */

/* TFLite's QuantizeMultiplier (frexp, round, renormalize, flush), again. */
static void quantize_multiplier(double real, int32_t *q, int *shift) {
    if (real == 0) {
        *q = 0, *shift = 0;
        return;
    }
    int e;
    double f = std::frexp(real, &e);
    int64_t qf = (int64_t)std::round(f * (double)(1LL << 31));
    if (qf == (1LL << 31)) qf /= 2, ++e;
    if (e < -31) e = 0, qf = 0;
    *q = (int32_t)qf, *shift = e;
}

/* TFLite's MultiplyByQuantizedMultiplier (double rounding). */
static int32_t mbqm(int32_t x, int32_t q, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul((int32_t)(x * (1LL << left)), q), right);
}

static int radius(int ibits, int left_shift) {
    double m = 1.0 * ((1 << ibits) - 1) * (double)(1LL << (31 - ibits)) / (double)(1LL << left_shift);
    return (int)std::floor(m);
}

static int8_t sat8(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }

/* LOGISTIC / TANH int8, as TFLite Micro's kernels. */
static int8_t ref_logistic_tanh(bool tanh, int8_t x, float s_in, int32_t zp_in) {
    int shift;
    double f = std::frexp((double)s_in * (double)(1 << 27), &shift);
    int32_t mult = (int32_t)std::round(f * (double)(1LL << 31));
    int r = radius(4, shift);
    int32_t in = (int32_t)x - zp_in;
    if (in <= -r) return -128;
    if (in >= r) return 127;
    int32_t q4 = mbqm(in, mult, shift);
    typedef FixedPoint<int32_t, 4> F4;
    if (tanh) return sat8(RoundingDivideByPOT(gemmlowp::tanh(F4::FromRaw(q4)).raw(), 24));
    return sat8(RoundingDivideByPOT(gemmlowp::logistic(F4::FromRaw(q4)).raw(), 23) - 128);
}

static int16_t down16(int32_t m) {
    if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
    return (int16_t)((m + (1 << 15)) >> 16);
}

static int16_t sat_lshift16(int16_t v, int n) {
    int64_t r = (int64_t)v * (1LL << n);
    return (int16_t)(r < INT16_MIN ? INT16_MIN : r > INT16_MAX ? INT16_MAX : r);
}

/* HARD_SWISH int8 (TFLite's reference, int16 fixed point). */
static int8_t ref_hard_swish(int8_t x, float s_in, int32_t zp_in, float s_out, int32_t zp_out) {
    const float hires = (1.0f / 128.0f) * s_in, reluish = 3.0f / 32768.0f;
    int32_t m32;
    int out_exp, relu_exp;
    quantize_multiplier((double)(hires / s_out), &m32, &out_exp);
    int16_t out16 = down16(m32);
    quantize_multiplier((double)(hires / reluish), &m32, &relu_exp);
    int16_t relu16 = down16(m32);
    int16_t v = (int16_t)((int32_t)x - zp_in);
    int16_t hv = (int16_t)(v * 128);
    int16_t pre_out = SaturatingRoundingDoublingHighMul(hv, out16);
    int16_t r = hv;
    if (relu_exp > 0) r = sat_lshift16(r, relu_exp - 1);
    r = SaturatingRoundingDoublingHighMul(r, relu16);
    if (relu_exp > 0) r = sat_lshift16(r, 1);
    if (relu_exp < 0) r = RoundingDivideByPOT(r, -relu_exp);
    r = (int16_t)((r + (1 << 15)) >> 1);
    /* SaturatingDoublingHighMul: no rounding */
    int16_t pre = (r == INT16_MIN && pre_out == INT16_MIN) ? INT16_MAX
                                                           : (int16_t)(((int32_t)r * pre_out) / (1 << 15));
    int16_t o = RoundingDivideByPOT(pre, -out_exp);
    o = (int16_t)(o + zp_out);
    return sat8(o);
}

/* SOFTMAX int8 (beta 1, output 1/256, -128) over x[0..n). */
static void ref_softmax(const int8_t *x, int8_t *y, int n, float s_in) {
    typedef FixedPoint<int32_t, 5> F5;
    typedef FixedPoint<int32_t, 12> F12;
    typedef FixedPoint<int32_t, 0> F0;
    double real = (double)s_in * (double)(1 << 26);
    if (real > (double)INT32_MAX) real = (double)INT32_MAX;
    int32_t mult;
    int shift;
    quantize_multiplier(real, &mult, &shift);
    int diff_min = -radius(5, shift);
    int mx = -128;
    for (int i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    F12 sum = F12::Zero();
    for (int i = 0; i < n; i++) {
        int32_t d = x[i] - mx;
        if (d < diff_min) continue;
        int32_t r = SaturatingRoundingDoublingHighMul((int32_t)(d * (1LL << shift)), mult);
        sum = sum + gemmlowp::Rescale<12>(gemmlowp::exp_on_negative_values(F5::FromRaw(r)));
    }
    uint32_t s = (uint32_t)sum.raw();
    int hp1 = __builtin_clz(s);
    int over = 12 - hp1;
    F0 scale = gemmlowp::one_over_one_plus_x_for_x_in_0_1(
        F0::FromRaw((int32_t)((s << hp1) - (1u << 31))));
    int e = over + 31 - 8;
    for (int i = 0; i < n; i++) {
        int32_t d = x[i] - mx;
        if (d < diff_min) {
            y[i] = -128;
            continue;
        }
        int32_t r = SaturatingRoundingDoublingHighMul((int32_t)(d * (1LL << shift)), mult);
        F0 ex = gemmlowp::exp_on_negative_values(F5::FromRaw(r));
        y[i] = sat8(RoundingDivideByPOT((scale * ex).raw(), e) - 128);
    }
}

/* ---- repository part ------------------------------------------------------------ */

static void test_srdhm_rdbpot(void **state) {
    (void)state;
    for (int32_t a : edges)
        for (int32_t b : edges)
            assert_int_equal(enpu_tfl_srdhm(a, b), SaturatingRoundingDoublingHighMul(a, b));
    for (int i = 0; i < 2000000; i++) {
        int32_t a = rng_i32(), b = rng_i32() >> (rng() % 32);
        if (enpu_tfl_srdhm(a, b) != SaturatingRoundingDoublingHighMul(a, b))
            fail_msg("SRDHM(%d, %d)", a, b);
    }
    for (int e = 0; e <= 31; e++) {
        for (int32_t x : edges) assert_int_equal(enpu_tfl_rdbpot(x, e), RoundingDivideByPOT(x, e));
        for (int i = 0; i < 100000; i++) {
            int32_t x = rng_i32() >> (rng() % 32);
            if (enpu_tfl_rdbpot(x, e) != RoundingDivideByPOT(x, e)) fail_msg("RDBPOT(%d, %d)", x, e);
        }
    }
}

static void test_requantizer(void **state) {
    (void)state;
    for (int i = 0; i < 1000000; i++) {
        /* a real multiplier over 2^-40 .. 2^8 and an accumulator whose left
         * shift stays inside int32 (what the importer proves) */
        double real = std::ldexp(0.5 + (double)(rng() % 1000000) / 2000000.0, (int)(rng() % 48) - 40);
        int32_t q;
        int shift;
        quantize_multiplier(real, &q, &shift);
        int32_t qe;
        int se;
        enpu_err err = {};
        assert_int_equal(enpu_tfl_quantize_multiplier(real, "t", &qe, &se, &err), 0);
        assert_int_equal(qe, q);
        assert_int_equal(se, shift);
        /* at most 31: a larger shift of an int32 is undefined (UBSan) */
        int sh = (int)(rng() % 32) + (shift > 0 ? shift : 0);
        int32_t acc = rng_i32() >> (sh < 31 ? sh : 31);
        int32_t want = mbqm(acc, q, shift);
        if (enpu_tfl_scale(acc, (uint32_t)q, 31 - shift) != want)
            fail_msg("MBQM(%d, %d, %d): %lld, TFLite %d", acc, q, shift,
                     (long long)enpu_tfl_scale(acc, (uint32_t)q, 31 - shift), want);
        int32_t zp = (int32_t)(rng() % 256) - 128;
        assert_int_equal(enpu_requant_tfl(acc, (uint32_t)q, 31 - shift, zp, -128, 127),
                         sat8(want + zp));
    }
}

static void test_fixed_point_functions(void **state) {
    (void)state;
    for (int i = 0; i < 400000; i++) {
        int32_t a = i < 200000 ? -(int32_t)((int64_t)i * 10737) : -(int32_t)(rng() & 0x7FFFFFFF);
        assert_int_equal(enpu_tfl_exp_on_negative_values(a, 5),
                         gemmlowp::exp_on_negative_values(FixedPoint<int32_t, 5>::FromRaw(a)).raw());
        assert_int_equal(enpu_tfl_exp_on_negative_values(a, 4),
                         gemmlowp::exp_on_negative_values(FixedPoint<int32_t, 4>::FromRaw(a)).raw());
        assert_int_equal(enpu_tfl_exp_on_negative_values(a, 7),
                         gemmlowp::exp_on_negative_values(FixedPoint<int32_t, 7>::FromRaw(a)).raw());
        int32_t p = (int32_t)(rng() & 0x7FFFFFFF);
        assert_int_equal(enpu_tfl_one_over_one_plus_x(p),
                         gemmlowp::one_over_one_plus_x_for_x_in_0_1(FixedPoint<int32_t, 0>::FromRaw(p)).raw());
        assert_int_equal(enpu_tfl_one_minus_x_over_one_plus_x(p),
                         gemmlowp::one_minus_x_over_one_plus_x_for_x_in_0_1(
                             FixedPoint<int32_t, 0>::FromRaw(p)).raw());
        int32_t s = rng_i32() >> (rng() % 8);
        if (s == INT32_MIN) s++;
        assert_int_equal(enpu_tfl_logistic_q(s, 4), gemmlowp::logistic(FixedPoint<int32_t, 4>::FromRaw(s)).raw());
        assert_int_equal(enpu_tfl_tanh_q(s, 4), gemmlowp::tanh(FixedPoint<int32_t, 4>::FromRaw(s)).raw());
    }
}

static void test_kernels_all_inputs(void **state) {
    (void)state;
    static const float scales[] = {0.001f, 0.0078125f, 0.02f, 0.045f, 0.1f, 0.25f, 1.0f, 3.7f};
    static const int32_t zps[] = {-128, -6, 0, 17, 127};
    enpu_err err = {};
    for (float s : scales)
        for (int32_t z : zps) {
            enpu_tfl_kparams lp, tp, hp;
            assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_LOGISTIC, s, z, 1.0f / 256, -128, "t", &lp, &err), 0);
            assert_int_equal(enpu_tfl_kernel_prepare(ENPU_TFL_TANH, s, z, 1.0f / 128, 0, "t", &tp, &err), 0);
            int hs = enpu_tfl_kernel_prepare(ENPU_TFL_HARD_SWISH, s, z, 4 * s, -60, "t", &hp, &err);
            enpu_err_clear(&err);
            for (int v = -128; v <= 127; v++) {
                int8_t x = (int8_t)v;
                assert_int_equal(enpu_tfl_kernel_eval(&lp, x), ref_logistic_tanh(false, x, s, z));
                assert_int_equal(enpu_tfl_kernel_eval(&tp, x), ref_logistic_tanh(true, x, s, z));
                if (!hs) assert_int_equal(enpu_tfl_kernel_eval(&hp, x), ref_hard_swish(x, s, z, 4 * s, -60));
            }
        }
    for (int k = 0; k < 3000; k++) {
        int n = 1 + (int)(rng() % 300);
        float s = scales[rng() % (sizeof scales / sizeof scales[0])] * (1.0f + (float)(rng() % 100) / 50);
        std::vector<int8_t> x((size_t)n), a((size_t)n), b((size_t)n);
        for (int i = 0; i < n; i++) x[(size_t)i] = (int8_t)(rng() % 256);
        enpu_tfl_kparams p;
        if (enpu_tfl_kernel_prepare(ENPU_TFL_SOFTMAX, s, 0, 1.0f / 256, -128, "t", &p, &err)) {
            enpu_err_clear(&err);
            continue;
        }
        enpu_tfl_softmax(&p, x.data(), a.data(), n, 1);
        ref_softmax(x.data(), b.data(), n, s);
        for (int i = 0; i < n; i++)
            if (a[(size_t)i] != b[(size_t)i]) fail_msg("softmax n=%d s=%g element %d: %d, gemmlowp %d", n, (double)s, i, a[(size_t)i], b[(size_t)i]);
    }
}

/* The golden reference on tests/tflite/<name> equals the gemmlowp kernel. */
static void kernel_fixture(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/tflite/%s.tflite", ENPU_SOURCE_DIR, name);
    enpu_err err = {};
    enpu_graph *g = NULL;
    if (enpu_tflite_load(path, &g, &err)) fail_msg("%s", err.msg);
    const enpu_tensor *x = &g->tensors[g->inputs[0]], *y = &g->tensors[g->outputs[0]];
    int64_t n = enpu_tensor_numel(x), dims[ENPU_MAX_RANK];
    enpu_tflite_dims(x, dims);
    int64_t depth = dims[x->rank - 1];
    /* every int8 value, in TFLite's order (softmax: rows along the last axis) */
    std::vector<int8_t> tfl((size_t)n), in((size_t)n), want((size_t)n), got((size_t)n);
    for (int64_t i = 0; i < n; i++) tfl[(size_t)i] = (int8_t)(i % 256 - 128);
    enpu_tflite_to_ir(x, tfl.data(), in.data());
    enpu_gexec *ex = NULL;
    assert_int_equal(enpu_gexec_new(g, &ex, &err), 0);
    const int8_t *ins[1] = {in.data()};
    assert_int_equal(enpu_gexec_run_i8(ex, ins, &err), 0);
    enpu_tflite_from_ir(y, enpu_gexec_value_i8(ex, g->outputs[0]), got.data());
    float si = x->quant->scale[0], so = y->quant->scale[0];
    int32_t zi = x->quant->zero_point[0], zo = y->quant->zero_point[0];
    bool softmax = !strcmp(name, "softmax");
    for (int64_t r = 0; softmax && r < n / depth; r++)
        ref_softmax(&tfl[(size_t)(r * depth)], &want[(size_t)(r * depth)], (int)depth, si);
    for (int64_t i = 0; i < n && !softmax; i++)
        want[(size_t)i] = !strcmp(name, "hard_swish") ? ref_hard_swish(tfl[(size_t)i], si, zi, so, zo)
                                                      : ref_logistic_tanh(!strcmp(name, "tanh"), tfl[(size_t)i], si, zi);
    for (int64_t i = 0; i < n; i++)
        if (got[(size_t)i] != want[(size_t)i])
            fail_msg("%s: element %lld: %d, gemmlowp %d", name, (long long)i, got[(size_t)i], want[(size_t)i]);
    enpu_gexec_free(ex);
    enpu_graph_free(g);
}

static void test_kernel_fixtures(void **state) {
    (void)state;
    kernel_fixture("logistic");
    kernel_fixture("tanh");
    kernel_fixture("hard_swish");
    kernel_fixture("softmax");
}

/* ---- shared part: the MLPerf models on a gemmlowp executor ---------------------- */

/* TFLite's kernels over the imported graph (IR layout), tensors by index. */
struct refexec {
    const enpu_graph *g;
    std::vector<std::vector<int32_t>> v;
};

static float tsc(const enpu_tensor *t) { return t->quant->scale[0]; }
static int32_t tzp(const enpu_tensor *t) { return t->quant->zero_point[0]; }

static void ref_node(refexec *r, const enpu_node *n) {
    const enpu_graph *g = r->g;
    const enpu_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
    const std::vector<int32_t> &xv = r->v[(size_t)n->in[0]];
    std::vector<int32_t> &yv = r->v[(size_t)n->out[0]];
    yv.assign((size_t)enpu_tensor_numel(y), 0);
    const enpu_qnode *q = n->q;
    enpu_err err = {};
    switch (n->op) {
    case ENPU_OP_CONV:
    case ENPU_OP_GEMM: {
        enpu_qconv_geom geo;
        assert_int_equal(enpu_qconv_geom_of(g, n, &geo, &err), 0);
        const enpu_tensor *wt = &g->tensors[n->in[1]];
        const int8_t *w = (const int8_t *)wt->data;
        int64_t cpg = geo.ci / geo.group, opg = geo.co / geo.group;
        for (int64_t co = 0; co < geo.co; co++) {
            /* the file's bias: the fold undone (bias' = bias - zp * sum w) */
            int64_t sw = 0;
            for (int64_t k = 0; k < geo.k; k++) sw += w[co * geo.k + k];
            int32_t bias = (int32_t)(q->bias[co] + (int64_t)tzp(x) * sw);
            int32_t qm;
            int shift;
            quantize_multiplier((double)tsc(x) * (double)wt->quant->scale[co] / (double)tsc(y), &qm, &shift);
            for (int64_t oy = 0; oy < geo.oh; oy++)
                for (int64_t ox = 0; ox < geo.ow; ox++) {
                    int32_t acc = bias;
                    for (int64_t ci = 0; ci < cpg; ci++)
                        for (int ky = 0; ky < geo.kh; ky++)
                            for (int kx = 0; kx < geo.kw; kx++) {
                                int64_t iy = oy * geo.sh - geo.pt + ky * geo.dh, ix = ox * geo.sw - geo.pl + kx * geo.dw;
                                if (iy < 0 || iy >= geo.h || ix < 0 || ix >= geo.w) continue; /* padding: skipped */
                                int64_t c = (co / opg) * cpg + ci;
                                acc += (xv[(size_t)((c * geo.h + iy) * geo.w + ix)] - tzp(x)) *
                                       w[((co * cpg + ci) * geo.kh + ky) * geo.kw + kx];
                            }
                    int32_t o = mbqm(acc, qm, shift) + tzp(y);
                    yv[(size_t)((co * geo.oh + oy) * geo.ow + ox)] = o < q->lo ? q->lo : o > q->hi ? q->hi : o;
                }
        }
        return;
    }
    case ENPU_OP_AVGPOOL:
    case ENPU_OP_GLOBAL_AVGPOOL: {
        enpu_qconv_geom geo;
        assert_int_equal(enpu_qconv_geom_of(g, n, &geo, &err), 0);
        int32_t nn = geo.kh * geo.kw, qm = 0;
        int shift = 0;
        if (n->op == ENPU_OP_GLOBAL_AVGPOOL) { /* MEAN: TFLite Micro's QuantizedMeanOrSum */
            quantize_multiplier((double)tsc(x) / (double)tsc(y), &qm, &shift);
            int k = 0;
            while ((2LL << k) <= nn) k++;
            if (k > 31 + shift) k = 31 + shift;
            qm = (int32_t)(((int64_t)qm << k) / nn);
            shift -= k;
        }
        for (int64_t c = 0; c < geo.co; c++)
            for (int64_t oy = 0; oy < geo.oh; oy++)
                for (int64_t ox = 0; ox < geo.ow; ox++) {
                    int32_t acc = 0;
                    for (int ky = 0; ky < geo.kh; ky++)
                        for (int kx = 0; kx < geo.kw; kx++)
                            acc += xv[(size_t)((c * geo.h + oy * geo.sh + ky) * geo.w + ox * geo.sw + kx)];
                    int32_t o;
                    if (n->op == ENPU_OP_AVGPOOL) /* TFLite's rounding division of the raw sum */
                        o = acc > 0 ? (acc + nn / 2) / nn : (acc - nn / 2) / nn;
                    else
                        o = mbqm(acc - tzp(x) * nn, qm, shift) + tzp(y);
                    yv[(size_t)((c * geo.oh + oy) * geo.ow + ox)] = o < q->lo ? q->lo : o > q->hi ? q->hi : o;
                }
        return;
    }
    case ENPU_OP_ADD: {
        const enpu_tensor *b = &g->tensors[n->in[1]];
        const std::vector<int32_t> &bv = r->v[(size_t)n->in[1]];
        double twice = 2 * (double)std::max(tsc(x), tsc(b));
        int32_t q1, q2, qo;
        int s1, s2, so;
        quantize_multiplier((double)tsc(x) / twice, &q1, &s1);
        quantize_multiplier((double)tsc(b) / twice, &q2, &s2);
        quantize_multiplier(twice / ((1 << 20) * (double)tsc(y)), &qo, &so);
        assert_int_equal(xv.size(), bv.size());
        for (size_t i = 0; i < yv.size(); i++) {
            int32_t a1 = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul((xv[i] - tzp(x)) * (1 << 20), q1), -s1);
            int32_t a2 = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul((bv[i] - tzp(b)) * (1 << 20), q2), -s2);
            int32_t o = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(a1 + a2, qo), -so) + tzp(y);
            yv[i] = o < q->lo ? q->lo : o > q->hi ? q->hi : o;
        }
        return;
    }
    case ENPU_OP_RESHAPE:
    case ENPU_OP_IDENTITY:
        if (n->op == ENPU_OP_IDENTITY) { /* QUANTIZE int8 -> int8: Requantize */
            int32_t qm;
            int shift;
            quantize_multiplier((double)tsc(x) / (double)tsc(y), &qm, &shift);
            for (size_t i = 0; i < yv.size(); i++) yv[i] = sat8(mbqm(xv[i] - tzp(x), qm, shift) + tzp(y));
        } else {
            yv = xv;
        }
        return;
    case ENPU_OP_SOFTMAX: {
        int64_t depth = x->dims[x->rank - 1];
        assert_int_equal(n->attr.shape.axis, x->rank - 1);
        std::vector<int8_t> in8(xv.size()), out8(xv.size());
        for (size_t i = 0; i < xv.size(); i++) in8[i] = (int8_t)xv[i];
        for (size_t o = 0; o < xv.size(); o += (size_t)depth) ref_softmax(&in8[o], &out8[o], (int)depth, tsc(x));
        for (size_t i = 0; i < xv.size(); i++) yv[i] = out8[i];
        return;
    }
    default:
        fail_msg("node '%s': %s is not in this reference", n->name, enpu_op_name(n->op));
    }
}

static void test_mlperf_layer_by_layer(void **state) {
    (void)state;
    static const char *const runs[][2] = {
        {"kws_ref_model.tflite", "kws_input_0_int8_49x10.raw"},
        {"pretrainedResnet_quant.tflite", "cifar10_pic2_s8_32x32x3.raw"},
        {"pretrainedResnet_quant.tflite", "cifar10_pic7_s8_32x32x3.raw"},
        {"vww_96_int8.tflite", "vww_person1_s8_96x96x3.raw"},
        {"vww_96_int8.tflite", "vww_noperson1_s8_96x96x3.raw"},
    };
    for (auto &run : runs) {
        char model[1024], vec[1024];
        snprintf(model, sizeof model, "%s/mlperf-tiny-int8/%s", enpu_test_shared_model(""), run[0]);
        snprintf(vec, sizeof vec, "%s/mlperf-tiny-int8/test_vectors/%s", enpu_test_shared_model(""), run[1]);
        enpu_err err = {};
        enpu_graph *g = NULL;
        if (enpu_tflite_load(model, &g, &err)) fail_msg("%s", err.msg);
        const enpu_tensor *xt = &g->tensors[g->inputs[0]];
        int64_t n = enpu_tensor_numel(xt);
        uint8_t *raw;
        size_t len;
        assert_int_equal(enpu_file_read(vec, (size_t)n + 1, &raw, &len, &err), 0);
        assert_int_equal(len, (size_t)n);
        std::vector<int8_t> in((size_t)n);
        enpu_tflite_to_ir(xt, (const int8_t *)raw, in.data());
        free(raw);
        refexec r;
        r.g = g;
        r.v.resize((size_t)g->n_tensors);
        r.v[(size_t)g->inputs[0]].assign(in.begin(), in.end());
        enpu_gexec *ex = NULL;
        assert_int_equal(enpu_gexec_new(g, &ex, &err), 0);
        const int8_t *ins[1] = {in.data()};
        assert_int_equal(enpu_gexec_run_i8(ex, ins, &err), 0);
        for (int i = 0; i < g->n_nodes; i++) {
            const enpu_node *nd = &g->nodes[i];
            ref_node(&r, nd);
            const int8_t *got = enpu_gexec_value_i8(ex, nd->out[0]);
            const std::vector<int32_t> &want = r.v[(size_t)nd->out[0]];
            for (size_t e = 0; e < want.size(); e++)
                if (got[e] != want[e])
                    fail_msg("%s on %s: layer '%s' element %zu: EasyNPU %d, TFLite on gemmlowp %d",
                             run[0], run[1], nd->name, e, got[e], want[e]);
        }
        fprintf(stderr, "%s on %s: %d layers equal TFLite's kernels on gemmlowp, element by element\n",
                run[0], run[1], g->n_nodes);
        enpu_gexec_free(ex);
        enpu_graph_free(g);
    }
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_srdhm_rdbpot),
        cmocka_unit_test(test_requantizer),
        cmocka_unit_test(test_fixed_point_functions),
        cmocka_unit_test(test_kernels_all_inputs),
        cmocka_unit_test(test_kernel_fixtures),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mlperf_layer_by_layer),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
