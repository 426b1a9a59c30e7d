/* Issue 26's five failures, each reproduced by a small model of
 * models/fallback/ (scripts/make_fallback_models.py), end to end on the
 * default preset: compiled, run in cycle and functional mode bit-exact with
 * the golden reference layer by layer, the cost model equal to the
 * simulator (enpu_test_e2e).  Before the host fallback and the complete
 * spill each of them was refused:
 *
 *   gather_head   "its element order is not one the NPU's reshape can copy"
 *   clip_runtime  "input 'min' (tensor ...) is not a constant"
 *   if_lstm       "unsupported operator" (If, LSTM)
 *   skip_spill    "skip DTCM: tensor ... does not fit beside the constants"
 *   mbv2_dw       "even with its tensors in DRAM and one output row per
 *                 strip ... need at least 67584 bytes of main DTCM"
 *
 * Each case asserts what now happens instead: the nodes the NPU cannot run
 * are host ops (named in the compile report with the reason), what does
 * not fit streams through DRAM. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"

#define M(rel) ENPU_SOURCE_DIR "/models/fallback/" rel

typedef struct want {
    int host_ops;
    bool offchip;
    uint64_t cycles; /* docs/ops.md "Host fallback" */
} want;

static void e2e(const char *name, const enpu_onnx_opts *io, const char *input, want w,
                enpu_test_e2e_result *r) {
    enpu_arch a = enpu_test_preset("easynpu");
    char onnx[512], calib[512], in[1024];
    snprintf(onnx, sizeof onnx, M("%s.onnx"), name);
    snprintf(calib, sizeof calib, M("%s/calib"), name);
    if (input) snprintf(in, sizeof in, "%s", input);
    else snprintf(in, sizeof in, M("%s/sample_0.npy"), name);
    enpu_test_e2e_opts(name, onnx, io, calib, in, &a, NULL, r);
    fprintf(stderr, "%s: %llu cycles, %d host op(s), %llu host CPU cycles, NPU %.1f%% of the MACs, "
                    "%.1f%% of the time, DRAM %llu/%llu words, %s\n",
            name, (unsigned long long)r->cycles, r->share.host_ops, (unsigned long long)r->share.host_cycles,
            100 * r->share.npu_macs, 100 * r->share.npu_time, (unsigned long long)r->dram_read,
            (unsigned long long)r->dram_written, r->offchip ? "off-chip plan" : "on chip");
    assert_int_equal(r->modelled, r->cycles);
    assert_int_equal(r->share.host_ops, w.host_ops);
    assert_int_equal(r->offchip, w.offchip);
    assert_int_equal(r->cycles, w.cycles);
}

/* Reshape [1,18,8,8] -> [1,3,6,64] splits the channels into two axes: the
 * NPU's reshape cannot copy that order, so the Reshape and the Transpose
 * after it are host copies (and the two Gathers, as always). */
static void test_gather_head(void **state) {
    (void)state;
    enpu_test_e2e_result r;
    e2e("gather_head", NULL, NULL, (want){4, false, 70210}, &r);
}

/* log(mel) clamped from below at its maximum - 8: the Clip's min is the
 * graph's, so the Clip runs on the host with each run's value (as does the
 * ReduceMax over all of [1,1,40,49], which keeps its dims). */
static void test_clip_runtime(void **state) {
    (void)state;
    enpu_test_e2e_result r;
    e2e("clip_runtime", NULL, NULL, (want){2, false, 57511}, &r);
}

/* If(sr == 16000) with sr bound: the then branch (a 16 kHz conv front end)
 * is inlined; the LSTM over its 16 frames runs on the host (one host op:
 * X, W, R, B, initial_h and initial_c in, Y, Y_h, Y_c out, sequence_lens
 * omitted), the classifier on the NPU. */
static void test_if_lstm(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_buf sr;
    assert_int_equal(enpu_tensor_read(M("if_lstm/sr.npy"), &sr, &err), 0);
    enpu_onnx_bind b = {"sr", M("if_lstm/sr.npy"), &sr};
    enpu_onnx_opts io = {0, &b, 1};
    enpu_test_e2e_result r;
    e2e("if_lstm", &io, M("if_lstm/sample_x.npy") "," M("if_lstm/sample_h0.npy") "," M("if_lstm/sample_c0.npy"),
        (want){1, false, 33398}, &r);
    assert_int_equal(r.host_macs, 16 * 4 * 24 * (16 + 24)); /* T * gates * H * (I + H) */
    enpu_buf_free(&sr);
}

/* The input normalisation (x - mean) / std is a Sub and a Div of
 * per-channel constants: their second operand, expanded over the 128x128
 * map, is a 256 KiB constant for the 16 KiB skip DTCM.  It stays in DRAM
 * and streams a row strip at a time, as the residual adds' kept tensors
 * do. */
static void test_skip_spill(void **state) {
    (void)state;
    enpu_test_e2e_result r;
    e2e("skip_spill", NULL, NULL, (want){0, true, 3272224}, &r);
}

/* MobileNetV2 (width 0.5, 128x128): around the first 64x64x48 depthwise
 * layer, the strips of the layers before and after it took the room its
 * one-row strips need; they are cut lower instead. */
static void test_mbv2_dw(void **state) {
    (void)state;
    enpu_test_e2e_result r;
    e2e("mbv2_dw", NULL, NULL, (want){0, true, 943731}, &r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_head),
        cmocka_unit_test(test_clip_runtime),
        cmocka_unit_test(test_if_lstm),
        cmocka_unit_test(test_skip_spill),
        cmocka_unit_test(test_mbv2_dw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
