/* The row-stationary engine's fast-forward (docs/rowstat.md "Fast-forward")
 * against its per-cycle path: enpu_test_assert_ff_equal runs each program
 * both ways (no record, 64-bit sums for 8-bit data too, a trace, VCD
 * windows) and compares the status, every statistic of every instruction,
 * the outputs, the DRAM and its write cycles, the trace and VCD files.  On
 * the default model (presets rowstat and eyeriss, 8 and 16 bits, where the
 * fast path must carry the compute) and the repository's imported models.
 * AlexNet's layers: test_rowstat_fastfwd_alexnet.c; random layers on random
 * engines: tests/unit/test_rowstat_random.c; the passes it refuses:
 * tests/unit/test_rowstat_ff_refusals.c. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/quant.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel

/* Program qg compiled for arch_name, run both ways on input (`once`: one
 * run each way, without a record); `most`: the fast path must carry the
 * compute (a pass is fast-forwarded from its start to its last psum), so
 * that a change that disabled it fails. */
static void both(const char *name, const enpu_graph *qg, const char *input, const char *arch_name, int bits,
                 bool most, bool once) {
    enpu_err err = {0};
    enpu_arch a = enpu_test_preset(arch_name);
    enpu_program p;
    enpu_buf in;
    if (enpu_compile(qg, &a, NULL, &p, NULL, &err) || enpu_tensor_read(input, &in, &err) ||
        enpu_buf_to_f32(&in, &err))
        fail_msg("%s: %s", name, err.msg);
    char what[128];
    snprintf(what, sizeof what, "%s (%d-bit)", name, bits);
    uint64_t compute = 0, ff = 0;
    uint64_t cycles = once ? enpu_test_assert_ff_equal_once(what, &p, &a, &in, NULL, 1, &ff, &compute)
                           : enpu_test_assert_ff_equal(what, &p, &a, &in, NULL, 1, true, &ff, &compute);
    fprintf(stderr, "%s on %s: %llu cycles (%llu compute), the same with and without fast-forward; %llu "
                    "fast-forwarded\n",
            what, a.name, (unsigned long long)cycles, (unsigned long long)compute, (unsigned long long)ff);
    if (most) assert_true(ff * 10 > compute * 9);
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

/* The default model, quantized once per width: the two presets quantize
 * alike (the same multiplier, accumulator, tables and psum width). */
static void test_kws(void **state) {
    (void)state;
    enpu_arch rs = enpu_test_preset("rowstat"), ey = enpu_test_preset("eyeriss");
    enpu_quant_opts qa, qb;
    enpu_compile_quant_opts(&rs, &qa);
    enpu_compile_quant_opts(&ey, &qb);
    assert_true(qa.mult_bits == qb.mult_bits && qa.acc_bits == qb.acc_bits && qa.act_segments == qb.act_segments &&
                qa.wide_acc_bits == qb.wide_acc_bits && qa.host_kinds == qb.host_kinds);
    for (int bits = 8; bits <= 16; bits += 8) {
        enpu_graph *qg = enpu_test_quantize_bits(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &rs, bits);
        both("kws_cnn", qg, REPO("models/kws_cnn/sample_0.npy"), "rowstat", bits, true, false);
        both("kws_cnn", qg, REPO("models/kws_cnn/sample_0.npy"), "eyeriss", bits, true, false);
        enpu_graph_free(qg);
    }
}

/* models/import on rowstat: host ops between the layers (Mul with an
 * Expand, HardSwish, Resize, Concat, LayerNorm, GELU; QDQ and QLinear
 * parameters; tests/models/test_engines_import.c), all but audio1d (a
 * dilated convolution, which the engine refuses); dethead, the slowest on
 * the per-cycle path, once each way */
static void test_import(void **state) {
    (void)state;
    static const char *const names[] = {"mbv3", "lngelu", "qdq", "qlinear", "dethead"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char onnx[512], calib[512], input[512];
        snprintf(onnx, sizeof onnx, REPO("models/import/%s.onnx"), names[i]);
        snprintf(calib, sizeof calib, REPO("models/import/%s/calib"), names[i]);
        snprintf(input, sizeof input, REPO("models/import/%s/sample_0.npy"), names[i]);
        enpu_arch a = enpu_test_preset("rowstat");
        enpu_graph *qg = enpu_test_quantize_bits(onnx, calib, &a, 8);
        both(names[i], qg, input, "rowstat", 8, false, !strcmp(names[i], "dethead"));
        enpu_graph_free(qg);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kws),
        cmocka_unit_test(test_import),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
