/* The easynpu command line of the foundation: help, inspect, run-float, exit
 * codes and one-line errors on bad input. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/tensor_io.h"
#include "testutil.h"

static char *run(const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_help(void **state) {
    (void)state;
    int st;
    char *out = run("--help", &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "inspect"));
    assert_non_null(strstr(out, "run-float"));
    free(out);
    out = run("inspect --help", &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "--json"));
    free(out);
    out = run("run-float --help", &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "--input"));
    free(out);
    out = run("frobnicate", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "unknown command 'frobnicate'"));
    free(out);
    out = run("inspect", &st);
    assert_int_equal(st, 2);
    free(out);
}

/* Each bad model: exit 2, exactly one line, naming the file and the item. */
static void test_bad_inputs(void **state) {
    (void)state;
    static const struct {
        const char *file, *category, *names;
    } cases[] = {
        {"tests/bad/onnx/bad_truncated.onnx", "[format]", "bad_truncated.onnx"},
        {"tests/bad/onnx/bad_not_onnx.onnx", "[format]", "bad_not_onnx.onnx"},
        {"tests/bad/onnx/bad_unknown_op.onnx", "[unsupported]", "FancyOp"},
        {"tests/bad/onnx/bad_missing_input.onnx", "[invalid]", "bad_missing_input.onnx"},
        {"tests/bad/onnx/bad_overflow_dim.onnx", "[limit]", "bad_overflow_dim.onnx"},
        {"tests/bad/onnx/does_not_exist.onnx", "[io]", "does_not_exist.onnx"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "inspect %s", cases[i].file);
        int st;
        char *out = run(args, &st);
        if (st != 2 || count_lines(out) != 1 || !strstr(out, cases[i].category) ||
            !strstr(out, cases[i].names))
            fail_msg("%s: status %d, output:\n%s", cases[i].file, st, out);
        free(out);
    }
}

static void test_inspect_json(void **state) {
    (void)state;
    int st;
    char json_path[] = "/tmp/enpu_inspect_XXXXXX";
    int fd = mkstemp(json_path);
    assert_true(fd >= 0);
    close(fd);
    char args[512];
    snprintf(args, sizeof args, "inspect models/kws_cnn.onnx --json %s", json_path);
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "total: "));
    assert_non_null(strstr(out, "3946088 MACs")); /* 3,914,280 conv/FC + 32,808 BN */
    free(out);
    json_error_t jerr;
    json_t *root = json_load_file(json_path, 0, &jerr);
    assert_non_null(root);
    /* SPEC 6: the keyword-spotting CNN has 3,914,280 MACs (convs and FCs); BN
     * adds one multiply per element of its output, reported separately. */
    json_int_t total = json_integer_value(json_object_get(root, "total_macs"));
    json_int_t bn = 0;
    json_t *layers = json_object_get(root, "layers");
    for (size_t i = 0; i < json_array_size(layers); i++) {
        json_t *l = json_array_get(layers, i);
        if (strcmp(json_string_value(json_object_get(l, "op")), "BatchNormalization") == 0)
            bn += json_integer_value(json_object_get(l, "macs"));
    }
    assert_int_equal(bn, 24 * 24 * 28 + 22 * 22 * 24 + 10 * 20 * 16 + 8 * 9 * 12);
    assert_int_equal(total - bn, 3914280);
    json_decref(root);
    /* The JSON output must never overwrite the model given as input. */
    out = run("inspect models/kws_cnn.onnx --json models/kws_cnn.onnx", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "refusing to overwrite"));
    free(out);
    unlink(json_path);
}

static void test_run_float_mnist(void **state) {
    (void)state;
    const char *model = enpu_test_shared_model("mnist-8/model.onnx");
    if (!model) skip();
    char m[1024], in[1024], ref[1024];
    snprintf(m, sizeof m, "%s", model);
    snprintf(in, sizeof in, "%s/mnist-8/test_data_set_0/input_0.pb", ENPU_SHARED_MODELS);
    snprintf(ref, sizeof ref, "%s/mnist-8/test_data_set_0/output_0.pb", ENPU_SHARED_MODELS);
    char dir[] = "/tmp/enpu_cli_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out_path[64];
    snprintf(out_path, sizeof out_path, "%s/out.npy", dir);
    char args[4096];
    snprintf(args, sizeof args, "run-float %s --input %s --output %s", m, in, out_path);
    int st;
    char *out = run(args, &st);
    if (st != 0) fail_msg("run-float failed: %s", out);
    free(out);
    enpu_buf got = {0}, want = {0};
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(out_path, &got, &err), 0);
    assert_int_equal(enpu_tensor_read(ref, &want, &err), 0);
    assert_int_equal(enpu_buf_numel(&got), 10);
    assert_int_equal(enpu_buf_numel(&want), 10);
    for (int i = 0; i < 10; i++) {
        float a = ((float *)got.data)[i], b = ((float *)want.data)[i];
        float tol = 1e-3f * (b > 1 || b < -1 ? (b < 0 ? -b : b) : 1);
        if (a - b > tol || b - a > tol) fail_msg("logit %d: %g vs %g", i, a, b);
    }
    enpu_buf_free(&got);
    enpu_buf_free(&want);
    unlink(out_path);
    rmdir(dir);
    /* Wrong number of inputs is a usage error. */
    snprintf(args, sizeof args, "run-float %s", m);
    out = run(args, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "1 input(s), 0 --input given"));
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_inspect_json),
        cmocka_unit_test(test_run_float_mnist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
