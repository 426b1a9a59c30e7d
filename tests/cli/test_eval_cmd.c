/* easynpu eval: the default model over its calibration and sample inputs
 * with their labels (the README's example), the JSON report, independence
 * from the thread count, the cycles (those of `easynpu run`), errors, and
 * a shared model's test sets (skipped with a message when ../shared/models
 * is absent). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define KWS_EVAL                                                                         \
    "eval models/kws_cnn.onnx --calib models/kws_cnn/calib --data "                      \
    "models/kws_cnn/calib,models/kws_cnn --labels "                                      \
    "models/kws_cnn/calib_labels.txt,models/kws_cnn/sample_labels.txt"

static char dir[64];

static char *cli(const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static json_t *load(const char *path) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) fail_msg("%s: %s", path, je.text);
    return root;
}

static void test_default_model(void **state) {
    (void)state;
    char args[2048], json[128], rjson[128];
    snprintf(json, sizeof json, "%s/eval.json", dir);
    snprintf(rjson, sizeof rjson, "%s/run.json", dir);
    snprintf(args, sizeof args, KWS_EVAL " --json %s --threads 2", json);
    int st;
    char *out = cli(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    const char *want[] = {
        "eval models/kws_cnn.onnx on 36 input set(s) from models/kws_cnn/calib,models/kws_cnn\n",
        "int8: quantized for arch 'easynpu' on 32 calibration input set(s)\n",
        "accuracy on output 'logits' (12 classes), 36 labelled input set(s)",
        "  top-1         36 (100.0%)      36 (100.0%)\n",
        "  top-5         36 (100.0%)      36 (100.0%)\n",
        "top-1 agreement, float vs int8: 36 of 36 (100.0%)\n",
        "SQNR of output 'logits', int8 vs float (dB): mean 44.8, median 44.4, worst 42.3\n",
        "     42.3     11     11     11  models/kws_cnn/calib/calib_17.npy\n",
        "   - mfcc                             input       40.0    38.7      0    40.1\n",
        "   5 /fc1/Gemm                        fc          55.3    46.5     21    none\n",
        "adds the most noise: mfcc (input), 40.1 dB\n",
        "   4 /Flatten                         Flatten     40.4    36.9      0    none\n",
        "  the same on the first and the last input set (models/kws_cnn/calib/calib_00.npy, "
        "models/kws_cnn/sample_3.npy); every layer output bit-exact with the golden reference (6 "
        "per run)\n",
        "time: 36 input set(s) in ",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i])) fail_msg("missing '%s' in:\n%s", want[i], out);
    free(out);

    /* the cycles are those `easynpu run` reports for the same model and arch */
    snprintf(args, sizeof args,
             "run models/kws_cnn.onnx --calib models/kws_cnn/calib --input "
             "models/kws_cnn/calib/calib_00.npy --json %s",
             rjson);
    out = cli(args, &st);
    if (st != 0) fail_msg("run: exit %d:\n%s", st, out);
    free(out);
    json_t *run = load(rjson), *ev = load(json);
    json_int_t cycles = json_integer_value(json_object_get(json_object_get(run, "total"), "cycles"));
    json_t *sim = json_object_get(ev, "simulation");
    assert_true(cycles > 0);
    assert_int_equal(json_integer_value(json_object_get(sim, "cycles")), cycles);
    assert_int_equal(json_integer_value(json_object_get(sim, "cycles_last_input_set")), cycles);
    assert_true(json_is_true(json_object_get(sim, "bit_exact")));
    json_decref(run);

    assert_string_equal(json_string_value(json_object_get(ev, "format")), "easynpu-eval");
    assert_int_equal(json_integer_value(json_object_get(ev, "input_sets")), 36);
    assert_int_equal(json_integer_value(json_object_get(ev, "labelled")), 36);
    assert_int_equal(json_integer_value(json_object_get(ev, "classes")), 12);
    json_t *acc = json_object_get(ev, "accuracy");
    assert_true(json_real_value(json_object_get(acc, "top1_int8")) == 1.0);
    assert_true(json_real_value(json_object_get(acc, "top1_float")) == 1.0);
    assert_true(json_real_value(json_object_get(ev, "top1_agreement")) == 1.0);
    json_t *sets = json_object_get(ev, "input_set_results");
    assert_int_equal(json_array_size(sets), 36);
    json_t *s33 = json_array_get(sets, 33);
    assert_string_equal(json_string_value(json_object_get(s33, "name")), "models/kws_cnn/sample_1.npy");
    assert_int_equal(json_integer_value(json_object_get(s33, "label")), 5);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(s33, "top_int8"), 0)), 5);
    assert_int_equal(json_array_size(json_object_get(ev, "layers")), 8);

    /* one thread: the same report but for the timing */
    snprintf(args, sizeof args, KWS_EVAL " --json %s/eval1.json --threads 1 --no-cycles", dir);
    out = cli(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "cycles: not simulated (--no-cycles)"));
    free(out);
    char p1[128];
    snprintf(p1, sizeof p1, "%s/eval1.json", dir);
    json_t *ev1 = load(p1);
    assert_int_equal(json_integer_value(json_object_get(ev1, "threads")), 1);
    const char *drop[] = {"time", "threads", "simulation"};
    for (size_t i = 0; i < 3; i++) {
        json_object_del(ev, drop[i]);
        json_object_del(ev1, drop[i]);
    }
    assert_true(json_equal(ev, ev1));
    json_decref(ev);
    json_decref(ev1);
    unlink(json);
    unlink(rjson);
    unlink(p1);
}

static void test_errors(void **state) {
    (void)state;
    int st;
    char *out = cli("eval models/kws_cnn.onnx", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "easynpu eval: --data SPEC is required"));
    free(out);
    out = cli("eval models/kws_cnn.onnx --data models/kws_cnn --labels models/kws_cnn/calib_labels.txt "
              "--quiet", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "no entry names an input set of the data set"));
    free(out);
    out = cli("eval models/kws_cnn.onnx --data models/kws_cnn --threads 0", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "--threads '0': an integer in 1..256 expected"));
    free(out);
    out = cli("eval prog.enpu --data models/kws_cnn", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "prog.enpu is a compiled program"));
    free(out);
    out = cli("eval models/kws_cnn.onnx --data models/kws_cnn --json models/kws_cnn/x.json", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "is inside the input folder 'models/kws_cnn'"));
    free(out);
}

/* A .qjson: int8 alone, the labels still count. */
static void test_qjson(void **state) {
    (void)state;
    char args[1024];
    snprintf(args, sizeof args,
             "quantize models/kws_cnn.onnx --calib models/kws_cnn/calib -o %s/kws.qjson", dir);
    int st;
    char *out = cli(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    snprintf(args, sizeof args,
             "eval %s/kws.qjson --data models/kws_cnn --labels models/kws_cnn/sample_labels.txt "
             "--no-cycles",
             dir);
    out = cli(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "(no float graph: int8 figures only)"));
    assert_non_null(strstr(out, "  top-1                           4 (100.0%)\n"));
    assert_null(strstr(out, "SQNR"));
    free(out);
    snprintf(args, sizeof args, "%s/kws.qjson", dir);
    unlink(args);
}

/* mnist-8's three ONNX test sets, found through the model folder. */
static void test_shared_mnist(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model("mnist-8");
    if (!m) skip(); /* enpu_test_main_parts skips the shared part as a whole; run by hand too */
    char args[2048], labels[128];
    /* the digits the model zoo's three test images show (a 2, a 0, a 9) */
    snprintf(labels, sizeof labels, "%s/mnist_labels.txt", dir);
    FILE *f = fopen(labels, "w");
    assert_non_null(f);
    fputs("test_data_set_0 2\ntest_data_set_1 0\ntest_data_set_2 9\n", f);
    fclose(f);
    snprintf(args, sizeof args, "eval %s/model.onnx --calib %s --data %s --labels %s --quiet", m, m, m,
             labels);
    int st;
    char *out = cli(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "on 3 input set(s)"));
    assert_non_null(strstr(out, "  top-1          3 (100.0%)       3 (100.0%)\n"));
    assert_non_null(strstr(out, "top-1 agreement, float vs int8: 3 of 3 (100.0%)"));
    assert_non_null(strstr(out, "bit-exact with the golden reference"));
    printf("%s", out);
    free(out);
    unlink(labels);
}

/* alibaba-kws (NHWC input, depthwise convs, average pooling) on its numpy
 * sample (.npz) and its ONNX test set. */
static void test_shared_alibaba(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model("alibaba-kws");
    if (!m) skip();
    char args[2048];
    snprintf(args, sizeof args,
             "eval %s/model.onnx --calib %s/test_data_set_0 --data %s/sample_input.npz,%s/test_data_set_0 "
             "--quiet --json %s/ali.json",
             m, m, m, m, dir);
    int st;
    char *out = cli(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "on 2 input set(s)"));
    assert_non_null(strstr(out, "top-1 agreement, float vs int8: 2 of 2 (100.0%)"));
    assert_non_null(strstr(out, "bit-exact with the golden reference"));
    free(out);
    snprintf(args, sizeof args, "%s/ali.json", dir);
    json_t *ev = load(args);
    json_t *sets = json_object_get(ev, "input_set_results");
    assert_int_equal(json_array_size(sets), 2);
    char want[1024];
    snprintf(want, sizeof want, "%s/sample_input.npz:x_0", m);
    assert_string_equal(json_string_value(json_object_get(json_array_get(sets, 0), "name")), want);
    /* the npz sample and the test set hold the same input: the same figures */
    json_t *a = json_array_get(sets, 0), *b = json_array_get(sets, 1);
    assert_true(json_equal(json_object_get(a, "top_int8"), json_object_get(b, "top_int8")));
    json_decref(ev);
    unlink(args);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_cli_eval_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_default_model),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_qjson),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_shared_mnist),
        cmocka_unit_test(test_shared_alibaba),
    };
    return enpu_test_main_parts(argc, argv, repo, sizeof repo / sizeof repo[0], shared,
                                sizeof shared / sizeof shared[0], setup, teardown);
}
