/* Fast-forward (docs/microarch.md §15) against the per-cycle path on every
 * model of the tests: the default model and models/offchip (always), the
 * real test models (shared part).  Each is imported, quantized and compiled
 * for its arch; then enpu_test_assert_ff_equal runs it both ways, with and
 * without a trace and with VCD windows, and compares everything. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel
#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void model(const char *name, const char *onnx, const char *calib, const char *input,
                  const char *arch_name, bool trace) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_load(arch_name, &a, &err), 0);
    enpu_graph *qg = enpu_test_quantize(onnx, calib, &a);
    enpu_program p;
    enpu_buf in;
    if (enpu_compile(qg, &a, NULL, &p, NULL, &err) || enpu_tensor_read(input, &in, &err) ||
        enpu_buf_to_f32(&in, &err))
        fail_msg("%s: %s", name, err.msg);
    uint64_t ff = 0, compute = 0;
    uint64_t cycles = enpu_test_assert_ff_equal(name, &p, &a, &in, NULL, 1, trace, &ff, &compute);
    fprintf(stderr, "%s on %s: %llu cycles (%llu compute), the same with and without fast-forward; "
                    "%llu fast-forwarded\n",
            name, a.name, (unsigned long long)cycles, (unsigned long long)compute, (unsigned long long)ff);
    /* the fast path carries the compute of these models (the rest is
     * mostly waiting for DMA, which the run skips anyway): a change that
     * disabled it fails */
    assert_true(ff * 10 > compute * 9);
    enpu_buf_free(&in);
    enpu_program_free(&p);
    enpu_graph_free(qg);
}

static void test_kws_cnn(void **state) {
    (void)state;
    model("kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"),
          REPO("models/kws_cnn/sample_0.npy"), "easynpu", true);
}

/* lane groups on every conv layer (docs/microarch.md §16) */
static void test_pruned(void **state) {
    (void)state;
    model("pruned_cnn", REPO("models/pruned_cnn.onnx"), REPO("models/pruned_cnn/calib"),
          REPO("models/pruned_cnn/sample_0.npy"), "easynpu", true);
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
        cmocka_unit_test(test_pruned),
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
