/* TFLite int8 models end to end (docs/tflite.md): import, compile for the
 * default preset with requant "tflite", run in cycle and functional mode,
 * every stored layer output bit-exact with the golden reference, the cost
 * model equal to the simulator (enpu_test_e2e_q), and the int8 outputs
 * equal to what TFLite's integer kernels compute.
 *
 * Repository part (never skipped): the per-operator fixtures of
 * tests/tflite/ (make_fixtures.py), whose expected outputs come from an
 * independent Python implementation of TFLite's integer rules.  Shared part:
 * the three MLPerf Tiny int8 models with their test vectors, against the
 * oracle outputs of GOLDEN_armnn.txt: equal where that oracle follows
 * TFLite's rules, and the documented differences where it does not (it
 * requantizes in float; test_tfl_gemmlowp.cpp shows layer by layer that ours
 * are TFLite's), and the cycles docs/tflite.md states. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/file.h"
#include "easynpu/quant.h"
#include "easynpu/tflite.h"

#define FIX(rel) ENPU_SOURCE_DIR "/tests/tflite/" rel

static enpu_arch tflite_arch(void) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    a.requant = ENPU_REQUANT_TFLITE;
    return a;
}

/* Input i of qg from a .npy (TFLite order; int8, or float quantized with
 * TFLite's rule) or a .raw (int8 bytes), in the IR's order. */
static int8_t *load_input(const enpu_graph *qg, int i, const char *path) {
    const enpu_tensor *t = &qg->tensors[qg->inputs[i]];
    int64_t n = enpu_tensor_numel(t);
    int8_t *tfl = malloc((size_t)n), *ir = malloc((size_t)n);
    assert_non_null(tfl);
    assert_non_null(ir);
    enpu_err err = {0};
    size_t len = strlen(path);
    if (len > 4 && strcmp(path + len - 4, ".raw") == 0) {
        uint8_t *buf;
        size_t got;
        assert_int_equal(enpu_file_read(path, (size_t)n + 1, &buf, &got, &err), 0);
        assert_int_equal(got, (size_t)n);
        memcpy(tfl, buf, (size_t)n);
        free(buf);
    } else {
        enpu_buf b;
        assert_int_equal(enpu_tensor_read(path, &b, &err), 0);
        assert_int_equal(enpu_buf_numel(&b), n);
        if (b.dtype == ENPU_DT_INT8) {
            memcpy(tfl, b.data, (size_t)n);
        } else {
            assert_int_equal(enpu_buf_to_f32(&b, &err), 0);
            for (int64_t e = 0; e < n; e++)
                tfl[e] = (int8_t)enpu_tfl_quantize(((float *)b.data)[e], t->quant->scale[0],
                                                   t->quant->zero_point[0]);
        }
        enpu_buf_free(&b);
    }
    enpu_tflite_to_ir(t, tfl, ir);
    free(tfl);
    return ir;
}

/* The golden reference's fast kernels (as compiled, and portable) give what
 * its reference loops give on every int8 tensor of qg: the fast kernels
 * must follow the graph's requant mode (they once requantized with the
 * easynpu rule whatever the mode). */
static void check_kernels(const char *name, const enpu_graph *qg, const int8_t *const *ins) {
    static const enpu_gexec_kernels ks[3] = {ENPU_GK_REFERENCE, ENPU_GK_PORTABLE, ENPU_GK_FAST};
    enpu_gexec *ex[3] = {0};
    enpu_err err = {0};
    for (int k = 0; k < 3; k++)
        if (enpu_gexec_new(qg, &ex[k], &err) || enpu_gexec_set_kernels(ex[k], ks[k], &err) ||
            enpu_gexec_run_i8(ex[k], ins, &err))
            fail_msg("%s (%s kernels): %s", name, enpu_gexec_kernels_label(ks[k]), err.msg);
    int compared = 0;
    for (int t = 0; t < qg->n_tensors; t++) {
        const int8_t *want = enpu_gexec_value_i8(ex[0], t);
        if (!want || qg->tensors[t].rank < 0) continue;
        int64_t n = enpu_tensor_numel(&qg->tensors[t]);
        for (int k = 1; k < 3; k++) {
            const int8_t *got = enpu_gexec_value_i8(ex[k], t);
            assert_non_null(got);
            for (int64_t e = 0; e < n; e++)
                if (got[e] != want[e])
                    fail_msg("%s: tensor '%s' element %lld: %s kernels %d, reference loops %d", name,
                             qg->tensors[t].name, (long long)e, enpu_gexec_kernels_name(ex[k]), got[e],
                             want[e]);
        }
        compared++;
    }
    assert_true(compared > qg->n_inputs);
    for (int k = 0; k < 3; k++) enpu_gexec_free(ex[k]);
}

/* Fast-forward and the per-cycle path agree on qg (requant tflite) in
 * everything (enpu_test_assert_ff_equal; trace when `trace`). */
static void check_ff(const char *name, const enpu_graph *qg, const int8_t *const *ins,
                     const enpu_arch *arch, bool trace) {
    enpu_err err = {0};
    enpu_program p;
    if (enpu_compile(qg, arch, NULL, &p, NULL, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_test_assert_ff_equal(name, &p, arch, NULL, ins, qg->n_inputs, trace, NULL, NULL);
    enpu_program_free(&p);
}

/* Runs model on its inputs; returns the cycles and output 0 in TFLite order
 * (out8, n elements).  The golden's kernels are compared with each other on
 * every run, fast-forward with the per-cycle path when `ff`. */
static uint64_t run_model(const char *name, const char *model, const char *const *inputs,
                          int8_t *out8, int64_t *n_out, bool ff, bool trace) {
    enpu_err err = {0};
    enpu_graph *qg = NULL;
    if (enpu_tflite_load(model, &qg, &err)) fail_msg("%s: %s", name, err.msg);
    assert_int_equal(qg->requant, ENPU_REQUANT_TFLITE);
    int8_t *ins[4] = {0};
    assert_true(qg->n_inputs <= 4);
    for (int i = 0; i < qg->n_inputs; i++) ins[i] = load_input(qg, i, inputs[i]);
    enpu_arch arch = tflite_arch();
    enpu_test_e2e_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    uint64_t cycles = enpu_test_e2e_q(name, qg, (const int8_t *const *)ins, &arch, NULL, r);
    check_kernels(name, qg, (const int8_t *const *)ins);
    if (ff) check_ff(name, qg, (const int8_t *const *)ins, &arch, trace);
    const enpu_tensor *y = &qg->tensors[qg->outputs[0]];
    *n_out = enpu_tensor_numel(y);
    assert_int_equal(r->n_out8[0], *n_out);
    enpu_tflite_from_ir(y, r->out8[0], out8);
    for (int i = 0; i < qg->n_inputs; i++) free(ins[i]);
    free(r);
    enpu_graph_free(qg);
    return cycles;
}

/* ---- repository part: the per-operator fixtures ------------------------------ */

static void fixture(const char *name, int n_in, bool expected) {
    char model[512], in0[512], in1[512], out[512];
    snprintf(model, sizeof model, FIX("%s.tflite"), name);
    snprintf(in0, sizeof in0, FIX("%s.in.npy"), name);
    snprintf(in1, sizeof in1, FIX("%s.in1.npy"), name);
    snprintf(out, sizeof out, FIX("%s.out.npy"), name);
    const char *ins[2] = {in0, in1};
    (void)n_in;
    int8_t got[4096];
    int64_t n;
    run_model(name, model, ins, got, &n, true, true);
    if (!expected) return;
    enpu_buf want;
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(out, &want, &err), 0);
    assert_int_equal(want.dtype, ENPU_DT_INT8);
    assert_int_equal(enpu_buf_numel(&want), n);
    for (int64_t e = 0; e < n; e++)
        if (got[e] != ((int8_t *)want.data)[e])
            fail_msg("%s: element %lld: %d, TFLite's rule %d", name, (long long)e, got[e],
                     ((int8_t *)want.data)[e]);
    enpu_buf_free(&want);
}

static void test_conv(void **s) { (void)s; fixture("conv_same_relu6", 1, true); }
static void test_dwconv(void **s) { (void)s; fixture("dwconv_mult2", 1, true); }
static void test_fc(void **s) { (void)s; fixture("fc_flatten", 1, true); }
static void test_add(void **s) { (void)s; fixture("add_ties", 2, true); }
static void test_mul(void **s) { (void)s; fixture("mul_relu", 2, true); }
static void test_pools(void **s) { (void)s; fixture("pools", 1, true); }
static void test_mean(void **s) { (void)s; fixture("mean_reshape", 1, true); }
static void test_pad_concat_reshape(void **s) { (void)s; fixture("pad_concat_reshape", 1, true); }
static void test_float_io(void **s) { (void)s; fixture("float_io", 1, true); }
/* their values against gemmlowp: test_tfl_gemmlowp.cpp */
static void test_kernels(void **s) {
    (void)s;
    fixture("logistic", 1, false);
    fixture("tanh", 1, false);
    fixture("hard_swish", 1, false);
    fixture("softmax", 1, false);
}

/* ---- shared part: MLPerf Tiny ------------------------------------------------- */

typedef struct mlperf_case {
    const char *model, *vector;
    int n;
    int8_t ours[12];     /* TFLite's integer rules */
    uint64_t cycles;     /* default preset, requant tflite */
    int oracle_diff;     /* elements that differ from GOLDEN_armnn.txt */
    bool ff;             /* also fast-forward against the per-cycle path */
} mlperf_case;

static const mlperf_case cases[] = {
    {"kws_ref_model.tflite", "kws_input_0_int8_49x10.raw", 12,
     {-128, -128, -128, -128, -128, 127, -128, -128, -128, -128, -128, -128}, 168322, 0, true},
    {"pretrainedResnet_quant.tflite", "cifar10_pic2_s8_32x32x3.raw", 10,
     {-128, -128, 127, -128, -128, -128, -128, -128, -128, -128}, 791886, 0, true},
    {"pretrainedResnet_quant.tflite", "cifar10_pic7_s8_32x32x3.raw", 10,
     {-122, -121, -128, -126, -112, -124, -128, 76, -128, -110}, 791886, 6, false},
    {"vww_96_int8.tflite", "vww_person1_s8_96x96x3.raw", 2, {-76, 76}, 523314, 2, true},
    {"vww_96_int8.tflite", "vww_noperson1_s8_96x96x3.raw", 2, {8, -8}, 523314, 0, false},
};

/* The oracle's int8 outputs for model/vector from GOLDEN_armnn.txt. */
static int oracle(const char *model, const char *vector, int8_t *out) {
    const char *path = enpu_test_shared_model("mlperf-tiny-int8/GOLDEN_armnn.txt");
    assert_non_null(path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int n = -1;
    while (n < 0 && fgets(line, sizeof line, f)) {
        char m[256], v[256];
        int at = 0;
        if (sscanf(line, "%255s | test_vectors/%255s | %n", m, v, &at) < 2 || !at) continue;
        if (strcmp(m, model) || strcmp(v, vector)) continue;
        n = 0;
        for (char *p = line + at; n < 16;) {
            char *end;
            long x = strtol(p, &end, 10);
            if (end == p) break;
            out[n++] = (int8_t)x;
            p = end;
        }
    }
    fclose(f);
    return n;
}

static void test_mlperf(void **state) {
    (void)state;
    int total = 0, differ = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const mlperf_case *c = &cases[k];
        char model[512], vec[512];
        snprintf(model, sizeof model, "%s", enpu_test_shared_model(""));
        snprintf(model + strlen(model), sizeof model - strlen(model), "/mlperf-tiny-int8/%s", c->model);
        snprintf(vec, sizeof vec, "%s/mlperf-tiny-int8/test_vectors/%s", enpu_test_shared_model(""),
                 c->vector);
        const char *ins[1] = {vec};
        int8_t got[64], want[16];
        int64_t n;
        uint64_t cycles = run_model(c->vector, model, ins, got, &n, c->ff, false);
        fprintf(stderr, "%s on %s: %llu cycles\n", c->model, c->vector, (unsigned long long)cycles);
        assert_int_equal(n, c->n);
        for (int i = 0; i < c->n; i++)
            if (got[i] != c->ours[i]) fail_msg("%s: output %d: %d, expected %d", c->vector, i, got[i], c->ours[i]);
        assert_int_equal(cycles, c->cycles);
        assert_int_equal(oracle(c->model, c->vector, want), c->n);
        int diff = 0;
        for (int i = 0; i < c->n; i++) diff += got[i] != want[i];
        fprintf(stderr, "  %d of %d outputs differ from GOLDEN_armnn.txt\n", diff, c->n);
        assert_int_equal(diff, c->oracle_diff);
        total += c->n;
        differ += diff;
    }
    /* 28 of the 36 oracle elements agree; the 8 others are the oracle's
     * float requantization (docs/tflite.md, test_tfl_gemmlowp.cpp) */
    assert_int_equal(total, 36);
    assert_int_equal(differ, 8);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_conv),  cmocka_unit_test(test_dwconv),
        cmocka_unit_test(test_fc),    cmocka_unit_test(test_add),
        cmocka_unit_test(test_mul),   cmocka_unit_test(test_pools),
        cmocka_unit_test(test_mean),  cmocka_unit_test(test_pad_concat_reshape),
        cmocka_unit_test(test_float_io), cmocka_unit_test(test_kernels),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mlperf),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
