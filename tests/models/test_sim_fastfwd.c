/* Fast-forward (docs/microarch.md §15) against the per-cycle path on every
 * model of the tests: the default model and models/offchip (always), the
 * real test models (shared part).  Each is imported, quantized and compiled
 * for its arch; then enpu_test_assert_ff_equal runs it both ways, with and
 * without a trace and with VCD windows, and compares everything. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel
#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void model(const char *name, const char *onnx, const char *calib, const char *input,
                  const char *arch_name, bool trace) {
    enpu_err err = {0};
    enpu_arch a;
    enpu_graph *g = NULL, *qg = NULL;
    if (enpu_arch_load(arch_name, &a, &err) || enpu_onnx_load(onnx, &g, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_buf *cal = NULL, in;
    int n_cal = 0;
    if (enpu_calib_load(g, calib, &cal, &n_cal, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.mult_bits = (int)a.mult_bits;
    qo.acc_bits = (int)a.acc_bits;
    qo.act_segments = (int)a.act_segments;
    qo.quiet = true;
    enpu_program p;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &err) || enpu_compile(qg, &a, NULL, &p, NULL, &err) ||
        enpu_tensor_read(input, &in, &err) || enpu_buf_to_f32(&in, &err))
        fail_msg("%s: %s", name, err.msg);
    uint64_t ff = 0, cycles = enpu_test_assert_ff_equal(name, &p, &a, &in, NULL, 1, trace, &ff);
    fprintf(stderr, "%s on %s: %llu cycles, the same with and without fast-forward (%.1f%% of them "
                    "fast-forwarded)\n",
            name, a.name, (unsigned long long)cycles, 100.0 * (double)ff / (double)cycles);
    assert_true(cycles > 0);
    enpu_buf_free(&in);
    enpu_program_free(&p);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void test_kws_cnn(void **state) {
    (void)state;
    model("kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"),
          REPO("models/kws_cnn/sample_0.npy"), "easynpu", true);
}

static void test_mlp1m(void **state) {
    (void)state;
    model("mlp1m", REPO("models/offchip/mlp1m.onnx"), REPO("models/offchip/mlp1m/calib"),
          REPO("models/offchip/mlp1m/sample_0.npy"), "easynpu", true);
}

static void test_det320(void **state) {
    (void)state;
    model("det320", REPO("models/offchip/det320.onnx"), REPO("models/offchip/det320/calib"),
          REPO("models/offchip/det320/sample_0.npy"), "easynpu", false);
}

static void test_mnist(void **state) {
    (void)state;
    model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
          SM("mnist-8/test_data_set_1/input_0.pb"), "easynpu", true);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
          SM("alibaba-kws/test_data_set_0/input_0.pb"), "easynpu", true);
}

static void test_vww(void **state) {
    (void)state;
    model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
          SM("mlperf-vww-float/test_data_set_1/input_0.pb"), "large", false);
}

static void test_vww_offchip(void **state) {
    (void)state;
    model("mlperf-vww-float (easynpu: through DRAM)", SM("mlperf-vww-float/model.onnx"),
          SM("mlperf-vww-float/test_data_set_0"), SM("mlperf-vww-float/test_data_set_1/input_0.pb"),
          "easynpu", false);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_cnn),
        cmocka_unit_test(test_mlp1m),
        cmocka_unit_test(test_det320),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
        cmocka_unit_test(test_vww_offchip),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
