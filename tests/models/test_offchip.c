/* Off-chip memory end to end (docs/offchip.md): models whose tensors or
 * weights do not fit on chip run through DRAM on the default preset,
 * bit-exact with the golden reference layer by layer, and the compiler's
 * model of the scheduled program equals the simulator per instruction, per
 * activity and per DRAM word (enpu_test_e2e).  The figures docs/offchip.md
 * states are asserted here: cycles of each model, the DRAM bandwidth sweep
 * (cycles never increase with bandwidth) and the list schedule against the
 * serial one.
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

static enpu_arch preset(const char *name) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset(name, &a, &err), 0);
    return a;
}

/* The modelled cycles of qg compiled for a (serial or list schedule). */
static int64_t modelled(const enpu_graph *qg, const enpu_arch *a, bool serial) {
    enpu_err err = {0};
    enpu_compile_opts o = {0};
    o.serial_schedule = serial;
    enpu_program p;
    if (enpu_compile(qg, a, &o, &p, NULL, &err)) fail_msg("%s", err.msg);
    int64_t c = enpu_cost_program(&p, NULL, NULL);
    enpu_program_free(&p);
    return c;
}

/* The model end to end on the default preset: cycles, whether it streams,
 * DRAM words read and written, all exact. */
static void e2e(const char *name, const char *onnx, const char *calib, const char *input, int n_instr,
                uint64_t cycles, bool offchip, uint64_t dram_rd, uint64_t dram_wr) {
    enpu_arch a = preset("easynpu");
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
    enpu_arch a = preset("easynpu");
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

/* Cycles against DRAM bytes per cycle (docs/offchip.md "What it costs"):
 * never more with more bandwidth; the list schedule beats the serial one. */
static void sweep(const char *name, const char *onnx, const char *calib, const int64_t list[5],
                  const int64_t serial8) {
    enpu_arch d = preset("easynpu");
    enpu_graph *qg = enpu_test_quantize(onnx, calib, &d);
    static const int bpc[5] = {1, 2, 4, 8, 16};
    int64_t prev = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        enpu_arch a = preset("easynpu");
        a.dram_bytes_per_cycle = bpc[i];
        int64_t c = modelled(qg, &a, false);
        fprintf(stderr, "%s at %d DRAM bytes per cycle: %lld cycles\n", name, bpc[i], (long long)c);
        assert_int_equal(c, list[i]);
        assert_true(c <= prev);
        prev = c;
    }
    enpu_arch a = preset("easynpu");
    int64_t s = modelled(qg, &a, true);
    fprintf(stderr, "%s: serial %lld, list %lld cycles (%.3fx)\n", name, (long long)s, (long long)list[3],
            (double)s / (double)list[3]);
    assert_int_equal(s, serial8);
    assert_true(s > list[3]);
    enpu_graph_free(qg);
}

static void test_sweep_repo(void **state) {
    (void)state;
    static const int64_t kws[5] = {320758, 311703, 310915, 310511, 310264};
    static const int64_t mlp[5] = {1093645, 548365, 276560, 140782, 73343};
    static const int64_t det[5] = {10060674, 8803774, 8208469, 8136583, 8125805};
    sweep("kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), kws, 312804);
    sweep("mlp1m", REPO("models/offchip/mlp1m.onnx"), REPO("models/offchip/mlp1m/calib"), mlp, 208407);
    sweep("det320", REPO("models/offchip/det320.onnx"), REPO("models/offchip/det320/calib"), det, 8725095);
}

/* ---- the real test models -------------------------------------------------------- */

static void test_vww(void **state) {
    (void)state;
    e2e("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"),
        SM("mlperf-vww-float/test_data_set_1/input_0.pb"), 173, 523277, true, 33035, 4608);
    static const int64_t vww[5] = {943949, 666202, 554053, 523277, 517634};
    sweep("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"), vww,
          593100);
    /* on `large` it fits on chip (docs/compiler.md §8) */
    enpu_arch l = preset("large");
    enpu_graph *qg = enpu_test_quantize(SM("mlperf-vww-float/model.onnx"), NULL, &l);
    assert_int_equal(modelled(qg, &l, false), 513850);
    enpu_graph_free(qg);
}

static void test_mnist(void **state) {
    (void)state;
    e2e("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"), SM("mnist-8/test_data_set_1/input_0.pb"), 25,
        60714, false, 784, 1);
    static const int64_t mn[5] = {62284, 61380, 60928, 60714, 60565};
    sweep("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"), mn, 62254);
}

static void test_alibaba(void **state) {
    (void)state;
    e2e("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
        SM("alibaba-kws/test_data_set_0/input_0.pb"), 22, 52062, false, 490, 1);
    static const int64_t ali[5] = {53312, 52664, 52300, 52062, 51921};
    sweep("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"), ali, 52886);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_fits),
        cmocka_unit_test(test_mlp1m),
        cmocka_unit_test(test_det320),
        cmocka_unit_test(test_sweep_repo),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_vww),
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
