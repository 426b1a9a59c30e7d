/* What the commands say when the input is not what they expected, or when
 * there is nothing to say: one rule for input shapes in run, sim, eval and
 * --calib, each naming the file and both shapes; a tensor or a program
 * given where a model is expected, and a model where a program is, named
 * with the command that takes it; functional mode saying that it has no
 * time; a 16-bit run's warning about int16 ranges; export --hex naming
 * every file it writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/tensor_io.h"
#include "testutil.h"

#define KWS_Q "models/kws_cnn.onnx --calib models/kws_cnn/calib"
static char dir[64];

static char *cli(const char *args, int *st) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    *st = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void expect(const char *args, int want, const char *line) {
    int st;
    char *out = cli(args, &st);
    if (st != want) fail_msg("%s: exit %d, expected %d:\n%s", args, st, want, out);
    if (line && !strstr(out, line)) fail_msg("%s: missing \"%s\" in:\n%s", args, line, out);
    free(out);
}

/* the default model's input, reshaped */
static void write_input(const char *name, int rank, const int64_t *dims) {
    enpu_buf in, out;
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read("models/kws_cnn/sample_0.npy", &in, &err), 0);
    assert_int_equal(enpu_buf_alloc(&out, in.dtype, rank, dims, &err), 0);
    assert_int_equal(enpu_buf_numel(&out), enpu_buf_numel(&in));
    memcpy(out.data, in.data, (size_t)enpu_buf_numel(&in) * sizeof(float));
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(enpu_tensor_write(path, &out, &err), 0);
    enpu_buf_free(&in);
    enpu_buf_free(&out);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_msg_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    int64_t t[4] = {1, 1, 49, 26}, r2[2] = {26, 49};
    write_input("t.npy", 4, t);
    write_input("r2.npy", 2, r2);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/cal_t %s/cal_r2 && cp %s/t.npy %s/cal_t/ && cp %s/r2.npy %s/cal_r2/ && "
             "%s compile " KWS_Q " -o %s/k.enpu --quiet > /dev/null",
             dir, dir, dir, dir, dir, dir, ENPU_CLI, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

/* One rule (enpu_shape_fits: equal but for leading 1s) everywhere: a
 * transposed input is refused by all four, naming the file and both
 * shapes; a [26,49] input for [1,1,26,49] is taken by all four. */
static void test_input_shapes(void **state) {
    (void)state;
    char a[1024], want[512];
    snprintf(want, sizeof want, "%s/t.npy: input 'mfcc': shape 1x1x49x26 does not match the model's 1x1x26x49", dir);
    snprintf(a, sizeof a, "run " KWS_Q " --input %s/t.npy", dir);
    expect(a, 2, want);
    snprintf(a, sizeof a, "sim %s/k.enpu --input %s/t.npy", dir, dir);
    expect(a, 2, want);
    snprintf(a, sizeof a, "eval " KWS_Q " --data %s/t.npy --no-cycles", dir);
    expect(a, 2, want);
    snprintf(a, sizeof a, "quantize models/kws_cnn.onnx --calib %s/cal_t -o %s/q.qjson", dir, dir);
    snprintf(want, sizeof want, "%s/cal_t/t.npy: input 'mfcc': shape 1x1x49x26 does not match the model's 1x1x26x49",
             dir);
    expect(a, 2, want);
    snprintf(a, sizeof a, "run " KWS_Q " --input %s/r2.npy", dir);
    expect(a, 0, "bit-exact: yes");
    snprintf(a, sizeof a, "sim %s/k.enpu --input %s/r2.npy", dir, dir);
    expect(a, 0, "bit-exact with the functional reference");
    snprintf(a, sizeof a, "eval " KWS_Q " --data %s/r2.npy --no-cycles", dir);
    expect(a, 0, "1 of 1 (100.0%)");
    snprintf(a, sizeof a, "quantize models/kws_cnn.onnx --calib %s/cal_r2 -o %s/q.qjson --quiet", dir, dir);
    expect(a, 0, NULL);
}

static void test_wrong_kind(void **state) {
    (void)state;
    char a[1024], want[512];
    expect("run models/kws_cnn/sample_0.npy", 2,
           "models/kws_cnn/sample_0.npy is a tensor (.npy), not a model: give it as --input (or --calib)");
    snprintf(a, sizeof a, "compile %s/k.enpu", dir);
    snprintf(want, sizeof want, "%s/k.enpu is an EasyNPU program (.enpu), not a model: `easynpu sim %s/k.enpu --input "
             "FILE` runs it", dir, dir);
    expect(a, 2, want);
    expect("inspect models/kws_cnn/calib/calib_00.npy", 2, "is a tensor (.npy), not a model");
    expect("sim models/kws_cnn.onnx --input models/kws_cnn/sample_0.npy", 2,
           "not an EasyNPU program but another file (an ONNX model?); `easynpu run` takes a model");
    expect("disasm models/kws_cnn/sample_0.npy", 2, "not an EasyNPU program but a tensor (.npy)");
}

static void test_functional_says_no_time(void **state) {
    (void)state;
    int st;
    char *out = cli("run " KWS_Q " --input models/kws_cnn/sample_0.npy --mode functional", &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "mode functional, arch easynpu: 3914280 MACs on 16 MAC units; cycles, utilization, "
                                "memory traffic and energy are not modelled in functional mode"));
    assert_non_null(strstr(out, "  1 /features/f..ures.3/Conv conv           2927232     182952\n"));
    assert_null(strstr(out, "0 cycles"));
    assert_null(strstr(out, "utilization 0.0%"));
    free(out);
}

static void test_int16_warning(void **state) {
    (void)state;
    expect("run models/kws_cnn.onnx --calib models/kws_cnn/sample_0.npy --input models/kws_cnn/sample_0.npy "
           "--arch rowstat --bits 16 --mode functional",
           0, "warning: calibration used 1 input(s), fewer than 8: the int16 ranges may not cover other inputs");
}

static void test_export_lists_files(void **state) {
    (void)state;
    char a[512];
    snprintf(a, sizeof a, "export %s/k.enpu --hex %s/hex", dir, dir);
    int st;
    char *out = cli(a, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    for (int i = 0; enpu_hex_files[i]; i++) {
        char line[300], path[256];
        snprintf(path, sizeof path, "%s/hex/%s", dir, enpu_hex_files[i]);
        snprintf(line, sizeof line, "wrote %s\n", path);
        if (!strstr(out, line)) fail_msg("missing \"%s\" in:\n%s", line, out);
        assert_int_equal(access(path, R_OK), 0);
    }
    assert_non_null(strstr(out, "dram.hex"));
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_shapes),       cmocka_unit_test(test_wrong_kind),
        cmocka_unit_test(test_functional_says_no_time), cmocka_unit_test(test_int16_warning),
        cmocka_unit_test(test_export_lists_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
