/* Off-chip memory end to end (docs/offchip.md): models whose tensors or
 * weights do not fit on chip run through DRAM on the default preset,
 * bit-exact with the golden reference layer by layer, and the compiler's
 * model of the scheduled program equals the simulator per instruction, per
 * activity and per DRAM word (enpu_test_e2e), with the cycles, instructions
 * and DRAM words docs/offchip.md and docs/compiler.md state (the bandwidth
 * sweep and the schedules: test_offchip_sweep.c).
 *
 * Repository part (never skipped): the default model (fits: only its input
 * and output go through DRAM), models/offchip/mlp1m (1.06 M parameters) and
 * models/offchip/det320 (320x240x3 input, residual add).  Shared part:
 * mnist-8, alibaba-kws and mlperf-vww-float on the default preset. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel
#define SM(rel) ENPU_SHARED_MODELS "/" rel

/* The model end to end on the default preset: cycles, whether it streams,
 * DRAM words read and written, all exact. */
static void e2e(const char *name, const char *onnx, const char *calib, const char *input, int n_instr,
                uint64_t cycles, bool offchip, uint64_t dram_rd, uint64_t dram_wr) {
    enpu_arch a = enpu_test_preset("easynpu");
    enpu_test_e2e_result r;
    enpu_test_e2e(name, onnx, calib, input, &a, NULL, &r);
    fprintf(stderr, "%s: %llu cycles, %s, DRAM words read %llu, written %llu, %d instructions\n", name,
            (unsigned long long)r.cycles, r.offchip ? "streams" : "fits on chip",
            (unsigned long long)r.dram_read, (unsigned long long)r.dram_written, r.n_instr);
    assert_int_equal(r.n_instr, n_instr);
    assert_int_equal(r.cycles, cycles);
    assert_int_equal(r.offchip, offchip);
    assert_int_equal(r.dram_read, dram_rd);
    assert_int_equal(r.dram_written, dram_wr);
}

/* The default model fits: the program differs from a DRAM-less one by the
 * DMA of its input (8 row strips, mostly hidden) and output. */
static void test_kws_fits(void **state) {
    (void)state;
    e2e("kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), REPO("models/kws_cnn/sample_0.npy"), 23,
        310511, false, 1274, 1);
    enpu_arch a = enpu_test_preset("easynpu");
    a.dram_bytes = 0;
    enpu_test_e2e_result r;
    enpu_test_e2e("kws_cnn without DRAM", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"),
                  REPO("models/kws_cnn/sample_0.npy"), &a, NULL, &r);
    assert_int_equal(r.cycles, 309763);
    assert_int_equal(r.dram_read + r.dram_written, 0);
}

static void test_mlp1m(void **state) {
    (void)state;
    e2e("mlp1m", REPO("models/offchip/mlp1m.onnx"), REPO("models/offchip/mlp1m/calib"),
        REPO("models/offchip/mlp1m/sample_0.npy"), 121, 140782, true, 68156, 1);
}

static void test_det320(void **state) {
    (void)state;
    e2e("det320", REPO("models/offchip/det320.onnx"), REPO("models/offchip/det320/calib"),
        REPO("models/offchip/det320/sample_0.npy"), 1091, 8136583, true, 230160, 56401);
}

/* ---- the real test models -------------------------------------------------------- */

static void test_vww(void **state) {
    (void)state;
    e2e("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
        SM("mlperf-vww-float/test_data_set_1/input_0.pb"), 173, 523277, true, 33035, 4608);
}

static void test_mnist(void **state) {
    (void)state;
    e2e("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"), SM("mnist-8/test_data_set_1/input_0.pb"), 25,
        60714, false, 784, 1);
}

static void test_alibaba(void **state) {
    (void)state;
    e2e("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
        SM("alibaba-kws/test_data_set_0/input_0.pb"), 22, 52062, false, 490, 1);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_fits),
        cmocka_unit_test(test_mlp1m),
        cmocka_unit_test(test_det320),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_vww),
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
