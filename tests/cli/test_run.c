/* easynpu run: JSON report, SVG chart, comparison across architectures and
 * its errors. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "testutil.h"

#define KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy"

static char dir[64];

static char *run(const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s run %s", ENPU_CLI, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void test_json_and_svg(void **state) {
    (void)state;
    char args[1024], json[128], svg[128];
    snprintf(json, sizeof json, "%s/run.json", dir);
    snprintf(svg, sizeof svg, "%s/run.svg", dir);
    snprintf(args, sizeof args, KWS " --json %s --svg %s", json, svg);
    int st;
    char *out = run(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    json_error_t je;
    json_t *root = json_load_file(json, 0, &je);
    assert_non_null(root);
    assert_true(json_is_true(json_object_get(root, "bit_exact")));
    assert_true(json_is_true(json_object_get(root, "golden_checked")));
    json_t *total = json_object_get(root, "total");
    assert_int_equal(json_integer_value(json_object_get(total, "cycles")), 309763);
    assert_int_equal(json_integer_value(json_object_get(total, "ideal_cycles")), 244643);
    assert_int_equal(json_integer_value(json_object_get(total, "macs")), 3914280);
    json_t *layers = json_object_get(root, "layers");
    assert_int_equal(json_array_size(layers), 7); /* 4 conv, 2 fc, end */
    json_t *l1 = json_array_get(layers, 1);
    assert_int_equal(json_integer_value(json_object_get(l1, "cycles")), 243960);
    json_t *acts = json_object_get(l1, "activities");
    assert_int_equal(json_integer_value(json_object_get(acts, "compute")), 243936);
    /* energy (docs/energy.md): the layers' add up to the total, which is
     * the default model's 18.991 uJ per inference */
    double tot_e = json_real_value(json_object_get(total, "energy_pj")), sum_e = 0;
    for (size_t i = 0; i < json_array_size(layers); i++)
        sum_e += json_real_value(json_object_get(json_array_get(layers, i), "energy_pj"));
    assert_true(fabs(tot_e - 18990955.09230411) < 1e-3);
    assert_true(fabs(sum_e - tot_e) < 1e-6 * tot_e);
    assert_int_equal(json_object_size(json_object_get(total, "energy_parts_pj")), 13);
    assert_true(fabs(json_real_value(json_object_get(total, "energy_per_inference_uj")) - tot_e / 1e6) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(json_object_get(root, "area"), "total_mm2")) - 1.835274608) < 1e-9);
    json_t *fv = json_array_get(json_object_get(root, "float_vs_int8"), 0);
    assert_true(json_is_true(json_object_get(fv, "top1_agree")));
    assert_int_equal(json_integer_value(json_object_get(fv, "top1_float")), 1);
    json_decref(root);

    uint8_t *text = NULL;
    size_t n = 0;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(svg, 1 << 24, &text, &n, &err), 0);
    const char *s = (const char *)text;
    assert_non_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(s, "309763 cycles, 79.0% utilization"));
    assert_non_null(strstr(s, "/fc1/Gemm"));
    assert_non_null(strstr(s, "</svg>\n"));
    /* one green compute bar per layer that computes, and the legend's swatch */
    int bars = 0;
    for (const char *p = s; (p = strstr(p, "fill=\"#2ca02c\"/>")); p++) bars++;
    assert_int_equal(bars, 6 + 1);
    free(text);
    unlink(json);
    unlink(svg);
}

static void test_compare_archs(void **state) {
    (void)state;
    int st;
    char *out = run(KWS " --arch easynpu --arch examples/easynpu32.json", &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "comparison across architectures"));
    assert_non_null(strstr(out, "easynpu32"));
    /* 32 PEs halve the big convolution and the totals */
    assert_non_null(strstr(out, "243960 (75.0%)         121983 (75.0%)"));
    assert_non_null(strstr(out, "309763 (79.0%)         181703 (67.3%)"));
    assert_non_null(strstr(out, "1.70x"));
    free(out);
}

static void test_errors(void **state) {
    (void)state;
    int st;
    char *out = run("models/kws_cnn.onnx", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "needs 1 --input file(s), 0 given"));
    free(out);
    out = run(KWS " --mode functional --svg /tmp/x.svg", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "need --mode cycle"));
    free(out);
    out = run(KWS " --json models/kws_cnn/sample_0.npy", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "refusing to overwrite"));
    free(out);
    /* an output inside the --calib folder could replace a calibration input */
    uint8_t *before = NULL, *after = NULL;
    size_t nb = 0, na = 0;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read("models/kws_cnn/calib/calib_00.npy", 1 << 20, &before, &nb, &err), 0);
    out = run(KWS " --json models/kws_cnn/calib/calib_00.npy", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "inside the input folder"));
    free(out);
    out = run(KWS " --json models/kws_cnn/calib/new.json", &st);
    assert_int_equal(st, 2);
    free(out);
    assert_int_equal(access("models/kws_cnn/calib/new.json", F_OK), -1);
    assert_int_equal(enpu_file_read("models/kws_cnn/calib/calib_00.npy", 1 << 20, &after, &na, &err), 0);
    assert_int_equal(na, nb);
    assert_memory_equal(after, before, nb);
    free(before);
    free(after);
    const char *vww = enpu_test_shared_model("mlperf-vww-float/model.onnx");
    if (!vww) return;
    char args[2048];
    snprintf(args, sizeof args, "%s --input %s/mlperf-vww-float/test_data_set_0/input_0.pb --quiet",
             vww, ENPU_SHARED_MODELS);
    out = run(args, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "[nofit]"));
    assert_non_null(strstr(out, "use --arch large"));
    free(out);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_run_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    return rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_and_svg),
        cmocka_unit_test(test_compare_archs),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
