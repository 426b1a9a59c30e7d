/* The systolic engine end to end on real models, on its three bank
 * arrangements (presets systolic = 2x2, systolic-1x4, systolic-4x1):
 * import -> quantize -> compile -> simulate in both modes, every layer output
 * compared with the golden int8 reference right after the layer ran, the
 * outputs bit for bit, and the cost model equal to the simulator (every
 * instruction, activity and memory word).  The cycle counts are the ones
 * docs/systolic.md reports.  The default model always; mnist-8, alibaba-kws
 * and mlperf-vww-float in the part :shared, skipped without their folder. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static const char *const archs[3] = {"systolic", "systolic-1x4", "systolic-4x1"};

/* Runs the model on the three arrangements; want[i]: the cycles on archs[i]. */
static void run_model(const char *name, const char *onnx, const char *calib, const char *input,
                      const uint64_t want[3]) {
    for (int i = 0; i < 3; i++) {
        enpu_err err = {0};
        enpu_arch arch;
        assert_int_equal(enpu_arch_preset(archs[i], &arch, &err), 0);
        enpu_test_e2e_result r;
        uint64_t cycles = enpu_test_e2e(name, onnx, calib, input, &arch, NULL, &r);
        assert_int_equal((int64_t)cycles, r.modelled);
        if (cycles != want[i])
            fail_msg("%s on %s: %llu cycles, docs/systolic.md says %llu", name, archs[i],
                     (unsigned long long)cycles, (unsigned long long)want[i]);
    }
}

#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void test_kws_cnn(void **state) {
    (void)state;
    static const uint64_t want[3] = {8461, 13999, 9573};
    run_model("kws_cnn", ENPU_SOURCE_DIR "/models/kws_cnn.onnx", ENPU_SOURCE_DIR "/models/kws_cnn/calib",
              ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy", want);
}

static void test_mnist(void **state) {
    (void)state;
    static const uint64_t want[3] = {24987, 26787, 24087};
    run_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), want);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    static const uint64_t want[3] = {25875, 31219, 24168};
    run_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), want);
}

static void test_vww(void **state) {
    (void)state;
    static const uint64_t want[3] = {146600, 169376, 136318};
    run_model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
              SM("mlperf-vww-float/test_data_set_1/input_0.pb"), want);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_cnn),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
