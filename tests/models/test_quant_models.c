/* End to end on real models: quantize with calibration on the models' own
 * test inputs, then the golden int8 reference must predict the same class
 * as the float reference on every test set, and the end-to-end SQNR of the
 * first output must stay above a floor set a few dB under the measured
 * figure (printed).  The default model models/kws_cnn.onnx runs always;
 * the real test models run in the part test_quant_models:shared, skipped
 * (saying why) when their folder is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "testutil.h"

static int64_t argmax(const float *v, int64_t n) {
    int64_t b = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[b]) b = i;
    return b;
}

/* calib: spec for enpu_calib_load; test: spec of the evaluation inputs
 * (may equal calib).  floor_db: the SQNR floor asserted. */
static void check_model(const char *name, const char *model, const char *calib, const char *test,
                        const enpu_quant_opts *o, double floor_db) {
    enpu_err err = {0};
    enpu_graph *g = NULL, *qg = NULL;
    if (enpu_onnx_load(model, &g, &err)) fail_msg("%s", err.msg);
    enpu_buf *cal = NULL, *tst = NULL;
    int n_cal = 0, n_tst = 0;
    if (enpu_calib_load(g, calib, &cal, &n_cal, &err)) fail_msg("%s", err.msg);
    if (enpu_calib_load(g, test, &tst, &n_tst, &err)) fail_msg("%s", err.msg);
    enpu_qreport rep;
    if (enpu_quantize_graph(g, cal, n_cal, o, &qg, &rep, &err)) fail_msg("%s", err.msg);
    rep.on_test_set = true;
    if (enpu_qreport_eval(g, qg, tst, n_tst, &rep, &err)) fail_msg("%s", err.msg);
    enpu_fexec *fx;
    enpu_gexec *gx;
    if (enpu_fexec_new(g, &fx, &err) || enpu_gexec_new(qg, &gx, &err)) fail_msg("%s", err.msg);
    int agree = 0;
    for (int s = 0; s < n_tst; s++) {
        const enpu_buf *in = tst + (size_t)s * g->n_inputs;
        if (enpu_fexec_run_n(fx, g->n_inputs, in, &err) || enpu_gexec_run(gx, in, &err))
            fail_msg("%s", err.msg);
        enpu_buf fo, qo;
        assert_int_equal(enpu_fexec_output(fx, 0, &fo, &err), 0);
        assert_int_equal(enpu_gexec_output(gx, 0, &qo, &err), 0);
        int64_t n = enpu_buf_numel(&fo);
        int64_t fc = argmax(fo.data, n), qc = argmax(qo.data, n);
        double sig = 0, noise = 0, mx = 0;
        for (int64_t i = 0; i < n; i++) {
            double f = ((float *)fo.data)[i], d = ((float *)qo.data)[i] - f;
            sig += f * f;
            noise += d * d;
            if (fabs(d) > mx) mx = fabs(d);
        }
        printf("%s sample %d: float class %lld, int8 class %lld, SQNR %.1f dB, max |err| %.4g\n",
               name, s, (long long)fc, (long long)qc, 10 * log10(sig / noise), mx);
        if (fc == qc) agree++;
        assert_int_equal(fc, qc);
        enpu_buf_free(&fo);
        enpu_buf_free(&qo);
    }
    int n_tables = 0;
    double worst_table = 0;
    for (int i = 0; i < rep.n_layers; i++)
        if (!strcmp(rep.layers[i].kind, "table")) {
            n_tables++;
            if (rep.layers[i].table_err_lsb > worst_table) worst_table = rep.layers[i].table_err_lsb;
        }
    printf("%s: %d layers (%d host, %d tables, worst table error %g LSB), calibration %d "
           "sample(s); over %d test sample(s): SQNR %.1f dB, max |err| %.4g, top-1 agreement "
           "%d/%d\n",
           name, rep.n_layers, rep.n_host, n_tables, worst_table, n_cal, n_tst, rep.out_sqnr_db,
           rep.max_abs_err, agree, n_tst);
    assert_true(rep.top1_agree == 1.0);
    if (!(rep.out_sqnr_db >= floor_db))
        fail_msg("%s: SQNR %.1f dB under the floor %.1f dB", name, rep.out_sqnr_db, floor_db);
    enpu_fexec_free(fx);
    enpu_gexec_free(gx);
    enpu_qreport_free(&rep);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_calib_free(tst, n_tst * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void shared_path(char *buf, size_t n, const char *rel) {
    const char *p = enpu_test_shared_model(rel);
    assert_non_null(p);
    snprintf(buf, n, "%s", p);
}

/* Comma-separated list of folder/test_data_set_k for k in 0..n-1. */
static void sets_spec(char *buf, size_t size, const char *folder, int n) {
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < n && at < size; k++) {
        char rel[256];
        snprintf(rel, sizeof rel, "%s/test_data_set_%d", folder, k);
        at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? "," : "", enpu_test_shared_model(rel));
    }
}

static void test_kws_cnn(void **state) {
    (void)state;
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    check_model("kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib",
                "models/kws_cnn/sample_0.npy,models/kws_cnn/sample_1.npy,"
                "models/kws_cnn/sample_2.npy,models/kws_cnn/sample_3.npy",
                &o, 38.0);
    /* The systolic note's 26-bit accumulator: every layer still proven. */
    o.acc_bits = 26;
    check_model("kws_cnn (26-bit accumulator)", "models/kws_cnn.onnx", "models/kws_cnn/calib",
                "models/kws_cnn/sample_0.npy,models/kws_cnn/sample_1.npy,"
                "models/kws_cnn/sample_2.npy,models/kws_cnn/sample_3.npy",
                &o, 38.0);
}

static void test_mnist(void **state) {
    (void)state;
    char model[4096], sets[8192];
    shared_path(model, sizeof model, "mnist-8/model.onnx");
    sets_spec(sets, sizeof sets, "mnist-8", 3);
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    check_model("mnist-8", model, sets, sets, &o, 35.0);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    char model[4096], sets[8192];
    shared_path(model, sizeof model, "alibaba-kws/model.onnx");
    sets_spec(sets, sizeof sets, "alibaba-kws", 1);
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    check_model("alibaba-kws", model, sets, sets, &o, 24.0);
}

static void test_vww(void **state) {
    (void)state;
    char model[4096], sets[8192];
    shared_path(model, sizeof model, "mlperf-vww-float/model.onnx");
    sets_spec(sets, sizeof sets, "mlperf-vww-float", 2);
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    check_model("mlperf-vww-float", model, sets, sets, &o, 20.0);
    o.method = ENPU_CALIB_PERCENTILE;
    o.percentile = 99.99;
    check_model("mlperf-vww-float (percentile 99.99)", model, sets, sets, &o, 24.0);
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
