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
    if (snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args) >= (int)sizeof cmd)
        fail_msg("command line over %zu bytes: %s", sizeof cmd, args);
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
    assert_non_null(strstr(out, "3914280 MACs"));
    free(out);
    json_error_t jerr;
    json_t *root = json_load_file(json_path, 0, &jerr);
    assert_non_null(root);
    /* SPEC 6: the keyword-spotting CNN has 3,914,280 MACs (convs and FCs);
     * BatchNormalization is no reduction and counts 0 (docs/microarch.md "MACs") */
    json_int_t total = json_integer_value(json_object_get(root, "total_macs"));
    json_int_t conv_fc = 0, bn = 0;
    json_t *layers = json_object_get(root, "layers");
    for (size_t i = 0; i < json_array_size(layers); i++) {
        json_t *l = json_array_get(layers, i);
        const char *op = json_string_value(json_object_get(l, "op"));
        json_int_t m = json_integer_value(json_object_get(l, "macs"));
        if (strcmp(op, "BatchNormalization") == 0) bn += m;
        if (strcmp(op, "Conv") == 0 || strcmp(op, "Gemm") == 0) conv_fc += m;
    }
    assert_int_equal(bn, 0);
    assert_int_equal(conv_fc, 3914280);
    assert_int_equal(total, 3914280);
    json_decref(root);
    /* The JSON output must never overwrite the model given as input. */
    out = run("inspect models/kws_cnn.onnx --json models/kws_cnn.onnx", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "refusing to overwrite"));
    free(out);
    unlink(json_path);
}

static void write_f32(const char *path, int rank, const int64_t *dims, const float *v, int n) {
    enpu_buf b = {0};
    enpu_err err = {0};
    if (enpu_buf_alloc(&b, ENPU_DT_FLOAT32, rank, dims, &err)) fail_msg("%s", err.msg);
    memcpy(b.data, v, (size_t)n * sizeof *v);
    if (enpu_tensor_write(path, &b, &err)) fail_msg("%s", err.msg);
    enpu_buf_free(&b);
}

/* --bind NAME=FILE: a Clip whose min and max are graph inputs runs once
 * they are bound; every command that imports an ONNX model documents it. */
static void test_bind(void **state) {
    (void)state;
    static const char *const cmds[] = {"inspect", "run-float", "quantize", "compile", "run"};
    int st;
    char *out;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        out = run(args, &st);
        if (st != 0 || !strstr(out, "--bind NAME=FILE")) fail_msg("%s --help:\n%s", cmds[i], out);
        free(out);
    }
    char dir[] = "/tmp/enpu_bind_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char lo[64], hi[64], x[64], y[64], args[1024];
    snprintf(lo, sizeof lo, "%s/lo.npy", dir);
    snprintf(hi, sizeof hi, "%s/hi.pb", dir); /* .pb works too */
    snprintf(x, sizeof x, "%s/x.npy", dir);
    snprintf(y, sizeof y, "%s/y.npy", dir);
    write_f32(lo, 0, NULL, (float[]){-0.5f}, 1);
    write_f32(hi, 0, NULL, (float[]){2.0f}, 1);
    write_f32(x, 2, (int64_t[]){1, 4}, (float[]){-1.0f, 0.25f, 3.0f, 1.5f}, 4);
    const char *m = "tests/bad/onnx/bad_clip_dynamic.onnx";
    snprintf(args, sizeof args, "run-float %s --bind lo=%s --bind hi=%s --input %s --output %s", m,
             lo, hi, x, y);
    out = run(args, &st);
    if (st != 0) fail_msg("%s", out);
    free(out);
    enpu_buf got = {0};
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(y, &got, &err), 0);
    assert_int_equal(enpu_buf_numel(&got), 4);
    assert_memory_equal(got.data, ((float[]){-0.5f, 0.25f, 2.0f, 1.5f}), 4 * sizeof(float));
    enpu_buf_free(&got);
    /* Bound inputs are no longer --input. */
    snprintf(args, sizeof args, "run-float %s --bind lo=%s --bind hi=%s", m, lo, hi);
    out = run(args, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "has 1 input(s), 0 --input given"));
    free(out);
    /* The main job: bit-exact against the golden reference. */
    snprintf(args, sizeof args, "run %s --bind lo=%s --bind hi=%s --input %s --quiet", m, lo, hi, x);
    out = run(args, &st);
    if (st != 0 || !strstr(out, "bit-exact: yes")) fail_msg("run: status %d\n%s", st, out);
    free(out);
    /* A bound file is an input: never an output. */
    snprintf(args, sizeof args, "run-float %s --bind lo=%s --bind hi=%s --input %s --output %s", m,
             lo, hi, x, lo);
    out = run(args, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "is also an input"));
    free(out);
    assert_int_equal(enpu_tensor_read(lo, &got, &err), 0);
    assert_true(got.dtype == ENPU_DT_FLOAT32 && ((float *)got.data)[0] == -0.5f);
    enpu_buf_free(&got);
    /* A malformed --bind is a usage error. */
    out = run("inspect tests/bad/onnx/bad_clip_dynamic.onnx --bind lo", &st);
    assert_int_equal(st, 2);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "--bind 'lo': expected NAME=FILE"));
    free(out);
    /* A .qjson or a program takes no --bind. */
    out = run("compile models/kws_cnn.qjson --bind lo=x.npy", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "--bind is for an .onnx model"));
    free(out);
    unlink(lo);
    unlink(hi);
    unlink(x);
    unlink(y);
    rmdir(dir);
}

static void test_run_float_mnist(void **state) {
    (void)state;
    const char *model = enpu_test_shared_model("mnist-8/model.onnx");
    assert_non_null(model);
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

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_inspect_json),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_run_float_mnist),
        cmocka_unit_test(test_bind),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
