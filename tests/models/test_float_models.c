/* Real models from ../shared/models through the importer and the float
 * reference executor, compared element by element with the reference
 * outputs shipped with them (and on the predicted class). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

#define TOL 1e-3

static int64_t argmax(const float *v, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

/* Runs `model` on test_data_set_<k>/input_0.pb for each k in sets[] and
 * compares output_0.pb. */
static void check_model(const char *folder, const int *sets, int n_sets) {
    char rel[256];
    snprintf(rel, sizeof rel, "%s/model.onnx", folder);
    const char *p = enpu_test_shared_model(rel);
    assert_non_null(p);
    char model[4096];
    snprintf(model, sizeof model, "%s", p);
    enpu_err err = {0};
    enpu_graph *g = NULL;
    if (enpu_onnx_load(model, &g, &err)) fail_msg("%s", err.msg);
    assert_int_equal(g->n_inputs, 1);
    assert_int_equal(g->n_outputs, 1);
    enpu_fexec *ex = NULL;
    if (enpu_fexec_new(g, &ex, &err)) fail_msg("%s", err.msg);
    for (int s = 0; s < n_sets; s++) {
        char path[4096];
        enpu_buf in = {0}, want = {0}, got = {0};
        snprintf(rel, sizeof rel, "%s/test_data_set_%d/input_0.pb", folder, sets[s]);
        snprintf(path, sizeof path, "%s", enpu_test_shared_model(rel));
        if (enpu_tensor_read(path, &in, &err)) fail_msg("%s", err.msg);
        snprintf(rel, sizeof rel, "%s/test_data_set_%d/output_0.pb", folder, sets[s]);
        snprintf(path, sizeof path, "%s", enpu_test_shared_model(rel));
        if (enpu_tensor_read(path, &want, &err)) fail_msg("%s", err.msg);
        if (enpu_buf_to_f32(&want, &err)) fail_msg("%s", err.msg);
        if (enpu_fexec_run_n(ex, 1, &in, &err)) fail_msg("%s", err.msg);
        if (enpu_fexec_output(ex, 0, &got, &err)) fail_msg("%s", err.msg);
        int64_t n = enpu_buf_numel(&want);
        assert_int_equal(enpu_buf_numel(&got), n);
        const float *gv = got.data, *wv = want.data;
        double max_err = 0;
        for (int64_t i = 0; i < n; i++) {
            double e = fabs((double)gv[i] - wv[i]);
            if (e > max_err) max_err = e;
            if (!(e <= TOL * fmax(1.0, fabs(wv[i]))))
                fail_msg("%s set %d: output element %lld: got %.7g, reference %.7g", folder,
                         sets[s], (long long)i, gv[i], wv[i]);
        }
        int64_t cls = argmax(gv, n), ref_cls = argmax(wv, n);
        printf("%s test_data_set_%d: class %lld (reference %lld), max |err| %.3g over %lld "
               "outputs\n",
               folder, sets[s], (long long)cls, (long long)ref_cls, max_err, (long long)n);
        assert_int_equal(cls, ref_cls);
        enpu_buf_free(&in);
        enpu_buf_free(&want);
        enpu_buf_free(&got);
    }
    enpu_fexec_free(ex);
    enpu_graph_free(g);
}

static void test_mnist(void **state) {
    (void)state;
    const int sets[] = {0, 1, 2};
    check_model("mnist-8", sets, 3);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    const int sets[] = {0};
    check_model("alibaba-kws", sets, 1);
}

static void test_vww(void **state) {
    (void)state;
    const int sets[] = {0, 1};
    check_model("mlperf-vww-float", sets, 2);
}

int main(void) {
    if (!enpu_test_have_shared_models()) return ENPU_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
