/* The row-stationary engine end to end (docs/rowstat.md): import ->
 * quantize (8 and 16 bits) -> compile for arch rowstat -> simulate in both
 * modes, every layer output compared with the golden reference element by
 * element right after the layer ran, the outputs bit for bit, and the
 * compiler's cost model equal to the simulator, instruction by instruction
 * and activity by activity. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"

/* want: the simulated cycles docs/rowstat.md quotes */
static void run_model(const char *name, const char *onnx, const char *calib, const char *input,
                      const char *arch_name, int bits, uint64_t want) {
    enpu_err err = {0};
    enpu_arch arch;
    assert_int_equal(enpu_arch_load(arch_name, &arch, &err), 0);
    uint64_t got = enpu_test_e2e_bits(name, onnx, calib, input, &arch, NULL, bits, NULL);
    fprintf(stderr, "%s on %s: %llu cycles\n", name, arch_name, (unsigned long long)got);
    assert_int_equal(got, want);
}

#define KWS ENPU_SOURCE_DIR "/models/kws_cnn"

/* End-to-end SQNR of the first output against the float model over the
 * calibration set, quantized for arch rowstat to int8, int16 and int16 with
 * power-of-two scales (docs/rowstat.md "16-bit data": the table). */
static void sqnr_case(const char *onnx, const char *calib, double want8, double want16, double want_q) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("rowstat", &a, &err), 0);
    enpu_graph *g = NULL;
    if (enpu_onnx_load(onnx, &g, &err)) fail_msg("%s", err.msg);
    enpu_buf *cal = NULL;
    int n = 0;
    if (enpu_calib_load(g, calib, &cal, &n, &err)) fail_msg("%s", err.msg);
    const double want[3] = {want8, want16, want_q};
    for (int k = 0; k < 3; k++) {
        enpu_quant_opts qo;
        enpu_compile_quant_opts(&a, &qo);
        qo.bits = k ? 16 : 8;
        qo.pow2 = k == 2;
        qo.quiet = true;
        enpu_graph *qg = NULL;
        enpu_qreport rep;
        assert_int_equal(enpu_quantize_graph(g, cal, n, &qo, &qg, &rep, &err), 0);
        fprintf(stderr, "%s %s: SQNR %.1f dB\n", onnx, k == 0 ? "int8" : k == 1 ? "int16" : "int16 Q-format",
                rep.out_sqnr_db);
        if (fabs(rep.out_sqnr_db - want[k]) > 0.05) fail_msg("%s: SQNR %.2f, want %.1f", onnx, rep.out_sqnr_db, want[k]);
        assert_true(rep.top1_agree == 1.0);
        enpu_qreport_free(&rep);
        enpu_graph_free(qg);
    }
    enpu_calib_free(cal, n * g->n_inputs);
    enpu_graph_free(g);
}

static void test_sqnr_kws(void **state) {
    (void)state;
    sqnr_case(KWS ".onnx", KWS "/calib", 44.8, 93.1, 89.6);
}

static void test_kws_int8(void **state) {
    (void)state;
    run_model("kws_cnn int8", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "rowstat", 8, 99481);
}

static void test_kws_int16(void **state) {
    (void)state;
    run_model("kws_cnn int16", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "rowstat", 16, 102379);
}

/* The Eyeriss-sized array: 12 x 14 PEs, 4-value networks, 108 KB buffer. */
static void test_kws_eyeriss(void **state) {
    (void)state;
    run_model("kws_cnn int16 eyeriss", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "eyeriss", 16, 55426);
    run_model("kws_cnn int8 eyeriss", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "eyeriss", 8, 51751);
}

#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void test_mnist(void **state) {
    (void)state;
    run_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "rowstat", 8, 44687);
    run_model("mnist-8 int16", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "rowstat", 16, 45348);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    run_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "rowstat", 8, 65342);
    run_model("alibaba-kws int16", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "eyeriss", 16, 49248);
}

static void test_vww(void **state) {
    (void)state;
    run_model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
              SM("mlperf-vww-float/test_data_set_1/input_0.pb"), "rowstat", 8, 504790);
    run_model("mlperf-vww-float int16", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
              SM("mlperf-vww-float/test_data_set_1/input_0.pb"), "eyeriss", 16, 284321);
}

static void test_sqnr_shared(void **state) {
    (void)state;
    sqnr_case(SM("mnist-8/model.onnx"),
              SM("mnist-8/test_data_set_0") "," SM("mnist-8/test_data_set_1") "," SM("mnist-8/test_data_set_2"),
              39.6, 87.0, 82.7);
    sqnr_case(SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"), 27.1, 73.8, 69.3);
    sqnr_case(SM("mlperf-vww-float/model.onnx"),
              SM("mlperf-vww-float/test_data_set_0") "," SM("mlperf-vww-float/test_data_set_1"), 23.7, 95.8, 66.9);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_int8),
        cmocka_unit_test(test_kws_int16),
        cmocka_unit_test(test_kws_eyeriss),
        cmocka_unit_test(test_sqnr_kws),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
        cmocka_unit_test(test_sqnr_shared),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
