/* The row-stationary engine end to end (docs/rowstat.md): import ->
 * quantize (8 and 16 bits) -> compile for arch rowstat -> simulate in both
 * modes, every layer output compared with the golden reference element by
 * element right after the layer ran, the outputs bit for bit, and the
 * compiler's cost model equal to the simulator, instruction by instruction
 * and activity by activity. */
#include "testutil.h"

#include "easynpu/compiler.h"

static void run_model(const char *name, const char *onnx, const char *calib, const char *input,
                      const char *arch_name, int bits) {
    enpu_err err = {0};
    enpu_arch arch;
    assert_int_equal(enpu_arch_load(arch_name, &arch, &err), 0);
    assert_true(enpu_test_e2e_bits(name, onnx, calib, input, &arch, NULL, bits, NULL) > 0);
}

#define KWS ENPU_SOURCE_DIR "/models/kws_cnn"

static void test_kws_int8(void **state) {
    (void)state;
    run_model("kws_cnn int8", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "rowstat", 8);
}

static void test_kws_int16(void **state) {
    (void)state;
    run_model("kws_cnn int16", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "rowstat", 16);
}

/* The Eyeriss-sized array: 12 x 14 PEs, 4-value networks, 108 KB buffer. */
static void test_kws_eyeriss(void **state) {
    (void)state;
    run_model("kws_cnn int16 eyeriss", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "eyeriss", 16);
    run_model("kws_cnn int8 eyeriss", KWS ".onnx", KWS "/calib", KWS "/sample_0.npy", "eyeriss", 8);
}

#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void test_mnist(void **state) {
    (void)state;
    run_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "rowstat", 8);
    run_model("mnist-8 int16", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "rowstat", 16);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    run_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "rowstat", 8);
    run_model("alibaba-kws int16", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "eyeriss", 16);
}

static void test_vww(void **state) {
    (void)state;
    run_model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
              SM("mlperf-vww-float/test_data_set_1/input_0.pb"), "rowstat", 8);
    run_model("mlperf-vww-float int16", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
              SM("mlperf-vww-float/test_data_set_1/input_0.pb"), "eyeriss", 16);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_int8),
        cmocka_unit_test(test_kws_int16),
        cmocka_unit_test(test_kws_eyeriss),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
