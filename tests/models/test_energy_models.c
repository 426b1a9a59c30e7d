/* The analytic access counts (enpu_access_counts, enpu_estimate_program)
 * against the cycle simulator's on real models, exactly: per fused chain
 * every memory's reads and writes and every datapath operation; per
 * instruction the PE array's counts (pads read, psum, operations) and the
 * ITCM; cycles and activities per instruction (the schedule model); and so
 * the energy, to the last bit.  The default model models/kws_cnn.onnx on
 * both presets and the off-chip models of models/offchip always run;
 * ../shared/models mnist-8, alibaba-kws and mlperf-vww-float (arch large)
 * skip when the folder is absent. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/energy.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"
#include "energy_check.h"

static void run_model(const char *name, const char *onnx, const char *calib, const char *input,
                      const char *arch_name) {
    enpu_err err = {0};
    enpu_graph *g = NULL, *qg = NULL;
    enpu_arch arch;
    assert_int_equal(enpu_arch_load(arch_name, &arch, &err), 0);
    if (enpu_onnx_load(onnx, &g, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_buf *cal = NULL;
    int n_cal = 0;
    if (enpu_calib_load(g, calib, &cal, &n_cal, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.mult_bits = (int)arch.mult_bits;
    qo.acc_bits = (int)arch.acc_bits;
    qo.act_segments = (int)arch.act_segments;
    qo.quiet = true;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_program prog;
    if (enpu_compile(qg, &arch, NULL, &prog, NULL, &err)) fail_msg("%s: compile: %s", name, err.msg);
    enpu_buf in;
    assert_int_equal(enpu_tensor_read(input, &in, &err), 0);
    assert_int_equal(enpu_buf_to_f32(&in, &err), 0);
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    if (enpu_sim_new(&prog, &arch, NULL, &sim, &err)) fail_msg("%s: %s", name, err.msg);
    if (enpu_sim_run(sim, &in, 1, &res, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_layer_stats *est = NULL, tot;
    assert_int_equal(enpu_estimate_program(&prog, &est, &tot, &err), 0);
    enpu_check_counts(name, &prog, &res, est, &tot, true);
    free(est);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void test_kws_cnn(void **state) {
    (void)state;
    run_model("kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy",
              "easynpu");
    run_model("kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy",
              "large");
}

/* models that stream their weights and tensors through DRAM (docs/offchip.md):
 * the DMA transfers' on-chip side and the DRAM words count the same */
static void test_offchip(void **state) {
    (void)state;
    run_model("mlp1m", "models/offchip/mlp1m.onnx", "models/offchip/mlp1m/calib",
              "models/offchip/mlp1m/sample_0.npy", "easynpu");
    run_model("det320", "models/offchip/det320.onnx", "models/offchip/det320/calib",
              "models/offchip/det320/sample_0.npy", "easynpu");
}

static void test_mnist(void **state) {
    (void)state;
    if (!enpu_test_have_shared_models()) skip();
    run_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "easynpu");
}

static void test_alibaba_kws(void **state) {
    (void)state;
    if (!enpu_test_have_shared_models()) skip();
    run_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "easynpu");
}

static void test_vww(void **state) {
    (void)state;
    if (!enpu_test_have_shared_models()) skip();
    run_model("mlperf-vww", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
              SM("mlperf-vww-float/test_data_set_1/input_0.pb"), "large");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kws_cnn),
        cmocka_unit_test(test_offchip),
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
