/* The real models of models/real (scripts/make_real_models.py: the
 * architectures of eleven public models, of every kind issue 26 names) end
 * to end on the default preset: imported, quantized on their calibration
 * inputs, compiled (host ops and the off-chip plan where they need them),
 * run in cycle and functional mode bit-exact with the golden reference
 * layer by layer, the cost model equal to the simulator (enpu_test_e2e).
 * Every figure of docs/ops.md's "Real models" table is asserted: cycles,
 * host ops and the host CPU's cycles, the NPU's share of MACs and time,
 * DRAM traffic and float-vs-int8 SQNR of the first output on the sample.
 * The larger models (over a second each under ASan) are the long tier. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/tensor_io.h"

#define M(rel) ENPU_SOURCE_DIR "/models/real/" rel

typedef struct want {
    uint64_t cycles, host_cycles, dram_read, dram_written;
    int host_ops;
    int macs_permille, time_permille; /* the NPU's share, as docs/ops.md rounds it */
    int sqnr_decidb;                  /* first output, float vs int8 on the sample, 0.1 dB */
} want;

/* SQNR (dB) of output 0: the float reference against the golden int8
 * reference, dequantized, on the same inputs. */
static double sqnr0(const char *onnx, const enpu_onnx_opts *io, const char *calib, const enpu_buf *in, int n_in) {
    enpu_err err = {0};
    enpu_graph *g = NULL;
    if (enpu_onnx_load_opts(onnx, io, &g, &err)) fail_msg("%s", err.msg);
    enpu_fexec *fx = NULL;
    assert_int_equal(enpu_fexec_new(g, &fx, &err), 0);
    if (enpu_fexec_run_n(fx, n_in, in, &err)) fail_msg("%s", err.msg);
    const float *f = enpu_fexec_value(fx, g->outputs[0]);
    int64_t n = enpu_tensor_numel(&g->tensors[g->outputs[0]]);
    enpu_arch a = enpu_test_preset("easynpu");
    enpu_graph *qg = enpu_test_quantize_opts(onnx, io, calib, &a);
    enpu_gexec *gx = NULL;
    assert_int_equal(enpu_gexec_new(qg, &gx, &err), 0);
    if (enpu_gexec_run(gx, in, &err)) fail_msg("%s", err.msg);
    enpu_buf q;
    assert_int_equal(enpu_gexec_output(gx, 0, &q, &err), 0);
    assert_int_equal(enpu_buf_numel(&q), n);
    double sig = 0, noise = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)f[i] - ((const float *)q.data)[i];
        sig += (double)f[i] * f[i], noise += d * d;
    }
    enpu_buf_free(&q);
    enpu_gexec_free(gx);
    enpu_graph_free(qg);
    enpu_fexec_free(fx);
    enpu_graph_free(g);
    return noise > 0 ? 10 * log10(sig / noise) : INFINITY;
}

static void e2e(const char *name, const enpu_onnx_opts *io, const char *inputs, want w) {
    enpu_arch a = enpu_test_preset("easynpu");
    char onnx[512], calib[512], in[1024];
    snprintf(onnx, sizeof onnx, M("%s.onnx"), name);
    snprintf(calib, sizeof calib, M("%s/calib"), name);
    if (inputs) snprintf(in, sizeof in, "%s", inputs);
    else snprintf(in, sizeof in, M("%s/sample_0.npy"), name);
    enpu_test_e2e_result r;
    enpu_test_e2e_opts(name, onnx, io, calib, in, &a, NULL, &r);
    /* the sample's inputs again, for the SQNR */
    enpu_buf bufs[8];
    int nb = 0;
    enpu_err err = {0};
    for (char *save = NULL, *f = strtok_r(in, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        assert_true(nb < 8);
        assert_int_equal(enpu_tensor_read(f, &bufs[nb], &err), 0);
        assert_int_equal(enpu_buf_to_f32(&bufs[nb++], &err), 0);
    }
    double sq = sqnr0(onnx, io, calib, bufs, nb);
    for (int k = 0; k < nb; k++) enpu_buf_free(&bufs[k]);
    uint64_t wb = 16; /* bytes per word of the default preset */
    fprintf(stderr, "%s: %llu cycles, %d host op(s), %llu host CPU cycles, NPU %.1f%% of the MACs, %.1f%% "
                    "of the time, DRAM %llu/%llu bytes, SQNR %.1f dB, %s\n",
            name, (unsigned long long)r.cycles, r.share.host_ops, (unsigned long long)r.share.host_cycles,
            100 * r.share.npu_macs, 100 * r.share.npu_time, (unsigned long long)(r.dram_read * wb),
            (unsigned long long)(r.dram_written * wb), sq, r.offchip ? "off-chip plan" : "on chip");
    assert_int_equal(r.cycles, w.cycles);
    assert_int_equal(r.modelled, r.cycles);
    assert_int_equal(r.share.host_ops, w.host_ops);
    assert_int_equal(r.share.host_cycles, w.host_cycles);
    assert_int_equal(r.dram_read * wb, w.dram_read);
    assert_int_equal(r.dram_written * wb, w.dram_written);
    assert_int_equal(lround(1000 * r.share.npu_macs), w.macs_permille);
    assert_int_equal(lround(1000 * r.share.npu_time), w.time_permille);
    assert_int_equal(lround(10 * sq), w.sqnr_decidb);
}

#define CASE(fn, name, ...)                                                                                     \
    static void fn(void **state) {                                                                              \
        (void)state;                                                                                            \
        e2e(name, NULL, NULL, (want){__VA_ARGS__});                                                             \
    }

/* figures: cycles, host CPU cycles, DRAM bytes read, written, host ops, NPU MACs / time permille, SQNR 0.1 dB */
CASE(test_resnet8, "resnet8", 791239, 0, 103152, 16, 0, 1000, 1000, 372)
CASE(test_dscnn_kws, "dscnn_kws", 200972, 0, 7840, 16, 0, 1000, 1000, 318)
CASE(test_ad_autoencoder, "ad_autoencoder", 39034, 0, 285920, 640, 0, 1000, 1000, 504)
CASE(test_vww_mbv1, "vww_mbv1", 491741, 0, 528560, 73744, 0, 1000, 1000, 193)
CASE(test_yolo_tiny, "yolo_tiny", 700358, 14060, 579952, 65536, 13, 1000, 980, 320)
CASE(test_face_slim, "face_slim", 1770174, 29500, 2479856, 1036800, 3, 1000, 983, 290)
CASE(test_unet_small, "unet_small", 7712519, 477136, 1373520, 425984, 4, 1000, 938, 218)
CASE(test_logmel_cnn, "logmel_cnn", 1189929, 1113282, 0, 16, 6, 350, 64, 153)
CASE(test_crnn_gru, "crnn_gru", 293169, 274772, 31360, 16, 3, 279, 63, 371)
CASE(test_vit_block, "vit_block", 53682, 39068, 512, 16, 11, 886, 272, 374)

/* the sample rate bound: the 16 kHz branch inlined */
static void test_vad_lstm(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_buf sr;
    assert_int_equal(enpu_tensor_read(M("vad_lstm/sr.npy"), &sr, &err), 0);
    enpu_onnx_bind b = {"sr", M("vad_lstm/sr.npy"), &sr};
    enpu_onnx_opts io = {0, &b, 1};
    e2e("vad_lstm", &io, M("vad_lstm/sample_audio.npy") "," M("vad_lstm/sample_h.npy") "," M("vad_lstm/sample_c.npy"),
        (want){210536, 198836, 9216, 16, 1, 294, 56, 357});
    enpu_buf_free(&sr);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_resnet8),       cmocka_unit_test(test_dscnn_kws),
        cmocka_unit_test(test_ad_autoencoder), cmocka_unit_test(test_yolo_tiny),
        cmocka_unit_test(test_crnn_gru),       cmocka_unit_test(test_vit_block),
        cmocka_unit_test(test_vad_lstm),       cmocka_unit_test(test_logmel_cnn),
    };
    const struct CMUnitTest long_repo[] = {
        cmocka_unit_test(test_vww_mbv1),
        cmocka_unit_test(test_face_slim),
        cmocka_unit_test(test_unet_small),
    };
    return ENPU_TEST_MAIN_TIERS(argc, argv, repo, ENPU_NO_TESTS, long_repo, ENPU_NO_TESTS);
}
