/* easynpu run / inspect on a TFLite model (docs/tflite.md): the requant
 * switch is said, the run is bit-exact, the int8 outputs are printed and
 * written in TFLite's order (.raw and .npy), float .npy inputs are quantized
 * with TFLite's rule, and the MLPerf keyword-spotting model gives the
 * oracle's output through the real command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

static char *run(const char *args, int *status) {
    char cmd[4096];
    if (snprintf(cmd, sizeof cmd, "%s %s 2>&1", ENPU_CLI, args) >= (int)sizeof cmd)
        fail_msg("command line over %zu bytes: %s", sizeof cmd, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void expect(const char *out, const char *sub) {
    if (!strstr(out, sub)) fail_msg("expected '%s' in:\n%s", sub, out);
}

static void test_run_fixture(void **state) {
    (void)state;
    int st;
    char args[1024];
    const char *raw = ENPU_BINARY_DIR "/cli_tflite_out.raw", *npy = ENPU_BINARY_DIR "/cli_tflite_out.npy";
    remove(raw);
    remove(npy);
    snprintf(args, sizeof args,
             "run tests/tflite/add_ties.tflite --input tests/tflite/add_ties.in.npy "
             "--input tests/tflite/add_ties.in1.npy --output %s",
             raw);
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    expect(out, "note: arch 'easynpu' runs this model with requant \"tflite\"");
    expect(out, "bit-exact: yes (3 layer outputs and 1 model output(s) equal the golden int8 reference");
    expect(out, "output y2 int8 (TFLite order):");
    free(out);
    /* the .raw output holds exactly the expected int8 values */
    uint8_t *got;
    size_t n;
    enpu_err err = {0};
    enpu_buf want;
    assert_int_equal(enpu_file_read(raw, 1 << 20, &got, &n, &err), 0);
    assert_int_equal(enpu_tensor_read("tests/tflite/add_ties.out.npy", &want, &err), 0);
    assert_int_equal(n, (size_t)enpu_buf_numel(&want));
    assert_memory_equal(got, want.data, n);
    free(got);
    /* .npy output: int8, TFLite's shape */
    snprintf(args, sizeof args,
             "run tests/tflite/add_ties.tflite --input tests/tflite/add_ties.in.npy "
             "--input tests/tflite/add_ties.in1.npy --output %s",
             npy);
    out = run(args, &st);
    assert_int_equal(st, 0);
    free(out);
    enpu_buf b;
    assert_int_equal(enpu_tensor_read(npy, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_INT8);
    assert_int_equal(b.rank, 4);
    assert_int_equal(b.dims[3], 3); /* NHWC */
    assert_memory_equal(b.data, want.data, (size_t)enpu_buf_numel(&want));
    enpu_buf_free(&b);
    enpu_buf_free(&want);
    remove(raw);
    remove(npy);
}

static void test_float_input(void **state) {
    (void)state;
    int st;
    const char *path = ENPU_BINARY_DIR "/cli_tflite_float.raw";
    char args[1024];
    snprintf(args, sizeof args, "run tests/tflite/float_io.tflite --input tests/tflite/float_io.in.npy --output %s",
             path);
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    free(out);
    uint8_t *got;
    size_t n;
    enpu_err err = {0};
    enpu_buf want;
    assert_int_equal(enpu_file_read(path, 1 << 20, &got, &n, &err), 0);
    assert_int_equal(enpu_tensor_read("tests/tflite/float_io.out.npy", &want, &err), 0);
    assert_int_equal(n, 12);
    assert_memory_equal(got, want.data, n);
    free(got);
    enpu_buf_free(&want);
    remove(path);
}

/* quantize MODEL.tflite writes the imported graph (requant tflite, the
 * add's SA) as .qjson; run on it is bit-exact and gives the same outputs */
static void test_qjson_round_trip(void **state) {
    (void)state;
    int st;
    const char *qj = ENPU_BINARY_DIR "/cli_tflite.qjson", *raw = ENPU_BINARY_DIR "/cli_tflite_q.raw";
    char args[1024];
    snprintf(args, sizeof args, "quantize tests/tflite/add_ties.tflite -o %s", qj);
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    expect(out, "requant tflite; nothing calibrated");
    free(out);
    uint8_t *text;
    size_t n;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(qj, 1 << 24, &text, &n, &err), 0);
    text = realloc(text, n + 1);
    text[n] = 0;
    assert_non_null(strstr((char *)text, "\"requant\":\"tflite\""));
    assert_non_null(strstr((char *)text, "\"SA\""));
    free(text);
    /* the .qjson compiles, for the requant it says */
    snprintf(args, sizeof args, "compile %s -o %s/cli_tflite_q.enpu", qj, ENPU_BINARY_DIR);
    out = run(args, &st);
    assert_int_equal(st, 0);
    expect(out, "note: arch 'easynpu' runs this model with requant \"tflite\"");
    free(out);
    remove(qj);
    remove(raw);
    snprintf(args, sizeof args, "%s/cli_tflite_q.enpu", ENPU_BINARY_DIR);
    remove(args);
}

static void test_inspect(void **state) {
    (void)state;
    int st;
    char *out = run("inspect tests/tflite/fc_flatten.tflite", &st);
    assert_int_equal(st, 0);
    expect(out, "(TFLite int8, requant tflite; IR order NCHW)");
    expect(out, "op0_fully_connected");
    expect(out, "Transpose");
    free(out);
}

static void test_mlperf_kws(void **state) {
    (void)state;
    int st;
    char args[2048];
    snprintf(args, sizeof args, "run %s/mlperf-tiny-int8/kws_ref_model.tflite --input "
             "%s/mlperf-tiny-int8/test_vectors/kws_input_0_int8_49x10.raw",
             ENPU_SHARED_MODELS, ENPU_SHARED_MODELS);
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    expect(out, "output Identity int8 (TFLite order): -128 -128 -128 -128 -128 127 -128 -128 -128 -128 -128 -128");
    expect(out, "mode cycle, arch easynpu: 168322 cycles");
    free(out);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_run_fixture),
        cmocka_unit_test(test_float_input),
        cmocka_unit_test(test_qjson_round_trip),
        cmocka_unit_test(test_inspect),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mlperf_kws),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
