/* The systolic engine's fast-forward (docs/systolic.md "Fast-forward")
 * against its per-cycle path (opts.per_cycle), with enpu_test_assert_ff_equal:
 * status, cycles, every statistic of every instruction, the outputs, every
 * memory and its write cycles, the trace and two VCD windows, byte for byte.
 * The default model on the three presets under every scheme, the fast path
 * carrying nearly all of its compute; the real test models (shared part:
 * mnist-8's host pools, alibaba-kws's and mlperf-vww's depthwise layers,
 * one channel per unit) on preset systolic.  The imported models:
 * tests/models/test_engines_import.c; random networks on random arrays and
 * an accumulator the weights could overflow: tests/unit/test_systolic.c;
 * random graphs: tests/fuzz. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "easynpu/compiler.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel
#define SM(rel) ENPU_SHARED_MODELS "/" rel

/* Compiles qg for a and compares both paths on the input; returns the
 * cycles the fast path took in one piece and the compute cycles. */
static void check(const char *what, const enpu_graph *qg, const enpu_arch *a, const char *input, bool trace,
                  uint64_t *ff, uint64_t *compute) {
    enpu_err err = {0};
    enpu_program p;
    enpu_buf in;
    if (enpu_compile(qg, a, NULL, &p, NULL, &err) || enpu_tensor_read(input, &in, &err) ||
        enpu_buf_to_f32(&in, &err))
        fail_msg("%s: %s", what, err.msg);
    uint64_t cycles = enpu_test_assert_ff_equal(what, &p, a, &in, NULL, 1, trace, ff, compute);
    fprintf(stderr, "%s: %llu cycles (%llu compute), the same with and without fast-forward; %llu "
                    "fast-forwarded\n",
            what, (unsigned long long)cycles, (unsigned long long)*compute, (unsigned long long)*ff);
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

/* kws_cnn on every preset and scheme: the fast path carries at least 90% of
 * the compute cycles (a change that disabled it fails) */
static void test_kws_cnn(void **state) {
    (void)state;
    static const char *const presets[3] = {"systolic", "systolic-1x4", "systolic-4x1"};
    static const int schemes[4] = {0, 1, 3, 4};
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset(presets[0], &a, &err), 0);
    /* the presets differ in the array only: one quantized graph */
    enpu_graph *qg = enpu_test_quantize(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &a);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(enpu_arch_preset(presets[i], &a, &err), 0);
        for (int s = 0; s < 4; s++) {
            a.sya_scheme = schemes[s];
            char what[96];
            snprintf(what, sizeof what, "kws_cnn on %s, scheme %d", presets[i], schemes[s]);
            uint64_t ff = 0, compute = 0;
            check(what, qg, &a, REPO("models/kws_cnn/sample_0.npy"), true, &ff, &compute);
            assert_true(ff * 10 > compute * 9);
        }
    }
    enpu_graph_free(qg);
}

/* Runs stopped early (a cycle limit inside every layer, a callback failing
 * after each layer): the same statistics on both paths, what the units in
 * flight have counted by then included (sya_ff_settle) */
static void test_stops(void **state) {
    (void)state;
    static const char *const presets[2] = {"systolic", "systolic-1x4"};
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset(presets[0], &a, &err), 0);
    enpu_graph *qg = enpu_test_quantize(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &a);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(enpu_arch_preset(presets[i], &a, &err), 0);
        a.sya_scheme = i ? 3 : 1;
        enpu_program p;
        enpu_buf in;
        if (enpu_compile(qg, &a, NULL, &p, NULL, &err) || enpu_tensor_read(REPO("models/kws_cnn/sample_0.npy"), &in, &err) ||
            enpu_buf_to_f32(&in, &err))
            fail_msg("%s", err.msg);
        uint64_t limits[24];
        for (int k = 0; k < 24; k++) limits[k] = 5 + (uint64_t)k * 373 + (uint64_t)(k % 5);
        char what[64];
        snprintf(what, sizeof what, "kws_cnn on %s", presets[i]);
        int stops = enpu_test_assert_ff_stops(what, &p, &a, &in, 1, limits, 24);
        fprintf(stderr, "%s: %d runs stopped early, the same statistics with and without fast-forward\n", what,
                stops);
        assert_true(stops >= 24);
        enpu_buf_free(&in);
        enpu_program_free(&p);
    }
    enpu_graph_free(qg);
}

static void real_model(const char *name, const char *onnx, const char *calib, const char *input, bool trace) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("systolic", &a, &err), 0);
    enpu_graph *qg = enpu_test_quantize(onnx, calib, &a);
    uint64_t ff = 0, compute = 0;
    check(name, qg, &a, input, trace, &ff, &compute);
    assert_true(ff * 10 > compute * 9);
    enpu_graph_free(qg);
}

static void test_mnist(void **state) {
    (void)state;
    real_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
               SM("mnist-8/test_data_set_1/input_0.pb"), true);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    real_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
               SM("alibaba-kws/test_data_set_0/input_0.pb"), true);
}

/* no trace: its per-cycle runs are the longest of the suite's systolic ones */
static void test_vww(void **state) {
    (void)state;
    real_model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
               SM("mlperf-vww-float/test_data_set_1/input_0.pb"), false);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_cnn),
        cmocka_unit_test(test_stops),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
