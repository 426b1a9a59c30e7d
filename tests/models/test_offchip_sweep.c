/* The figures of docs/offchip.md "What it costs": the modelled cycles of
 * each model against the DRAM bandwidth (1..16 bytes per cycle: they never
 * increase with it), and the list schedule against the serial one (the list
 * is faster on every model).  The model equals the simulator on these
 * programs (test_offchip.c asserts it at the default bandwidth, the graph
 * fuzzer on random DRAM timings).
 *
 * Repository part (never skipped): the default model, mlp1m and det320
 * (det320's sweep not under ASan+UBSan, where quantizing its 320x240 inputs
 * takes minutes: CI runs it in the Release and clang builds).  Shared part:
 * mnist-8, alibaba-kws and mlperf-vww-float. */
#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>

#include "easynpu/compiler.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel
#define SM(rel) ENPU_SHARED_MODELS "/" rel

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

/* Cycles against DRAM bytes per cycle (docs/offchip.md "What it costs"):
 * never more with more bandwidth; the list schedule beats the serial one. */
static void sweep(const char *name, const char *onnx, const char *calib, const int64_t list[5],
                  const int64_t serial8) {
    enpu_arch d = enpu_test_preset("easynpu");
    enpu_graph *qg = enpu_test_quantize(onnx, calib, &d);
    static const int bpc[5] = {1, 2, 4, 8, 16};
    int64_t prev = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        enpu_arch a = enpu_test_preset("easynpu");
        a.dram_bytes_per_cycle = bpc[i];
        int64_t c = modelled(qg, &a, false);
        fprintf(stderr, "%s at %d DRAM bytes per cycle: %lld cycles\n", name, bpc[i], (long long)c);
        assert_int_equal(c, list[i]);
        assert_true(c <= prev);
        prev = c;
    }
    enpu_arch a = enpu_test_preset("easynpu");
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
#if !defined(__SANITIZE_ADDRESS__)
    sweep("det320", REPO("models/offchip/det320.onnx"), REPO("models/offchip/det320/calib"), det, 8725095);
#else
    (void)det;
#endif
}

/* ---- the real test models -------------------------------------------------------- */

static void test_sweep_vww(void **state) {
    (void)state;
    static const int64_t vww[5] = {943949, 666202, 554053, 523277, 517634};
    sweep("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"), SM("mlperf-vww-float/test_data_set_0"), vww,
          593100);
    /* on `large` it fits on chip (docs/compiler.md §8) */
    enpu_arch l = enpu_test_preset("large");
    enpu_graph *qg = enpu_test_quantize(SM("mlperf-vww-float/model.onnx"), NULL, &l);
    assert_int_equal(modelled(qg, &l, false), 513850);
    enpu_graph_free(qg);
}

static void test_sweep_mnist_alibaba(void **state) {
    (void)state;
    static const int64_t mn[5] = {62284, 61380, 60928, 60714, 60565};
    sweep("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"), mn, 62254);
    static const int64_t ali[5] = {53312, 52664, 52300, 52062, 51921};
    sweep("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"), ali, 52886);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_sweep_repo),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_sweep_vww),
        cmocka_unit_test(test_sweep_mnist_alibaba),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
