/* End to end on real models: import -> quantize -> compile -> simulate in
 * both modes -> every layer output the program stores (its LAYERS probe)
 * compared with the golden int8 reference (enpu_gexec) right after the layer
 * ran, element by element; the outputs too.  And the compiler's cost model
 * (enpu_cost_program) equals the simulated cycles exactly, every instruction,
 * every activity (docs/microarch.md: a one-cycle change in either fails).
 * Models: the default models/kws_cnn.onnx (always), and of the real test
 * models mnist-8, alibaba-kws and mlperf-vww-float (arch large), in the
 * part test_sim_models:shared, skipped when their folder is absent. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

static void run_model(const char *name, const char *onnx, const char *calib, const char *input,
                      const char *arch_name) {
    enpu_err err = {0};
    enpu_arch arch;
    assert_int_equal(enpu_arch_load(arch_name, &arch, &err), 0);
    assert_true(enpu_test_e2e(name, onnx, calib, input, &arch, NULL, NULL) > 0);
}

#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void test_kws_cnn(void **state) {
    (void)state;
    run_model("kws_cnn", ENPU_SOURCE_DIR "/models/kws_cnn.onnx", ENPU_SOURCE_DIR "/models/kws_cnn/calib",
              ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy", "easynpu");
}

static void test_mnist(void **state) {
    (void)state;
    run_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "easynpu");
}

static void test_alibaba_kws(void **state) {
    (void)state;
    run_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "easynpu");
}

static void test_vww(void **state) {
    (void)state;
    run_model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"),
              SM("mlperf-vww-float/test_data_set_0"), SM("mlperf-vww-float/test_data_set_1/input_0.pb"),
              "large");
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
