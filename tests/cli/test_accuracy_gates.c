/* The accuracy gates of `easynpu run` (--min-sqnr, --require-top1) and
 * `easynpu eval` (--min-top1, --min-agreement, --min-sqnr): met, exit 0;
 * missed, exit 3 with one line of category `accuracy` naming the output
 * and the figures; without what they compare, a usage error.  The missed
 * top-1 cases are two one-layer classifiers whose classes 0 and 1 are
 * nearly the same (scripts/make_gate_models.py): on their one input int8
 * ties them, or picks the other one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy"
#define GATES "tests/data/gates/"
#define FLIP GATES "near_flip.onnx --calib " GATES "near_flip.npy --input " GATES "near_flip.npy"
#define TIE GATES "near_tie.onnx --calib " GATES "near_tie.npy --input " GATES "near_tie.npy"
#define EVAL_KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib --data models/kws_cnn/calib " \
                 "--labels models/kws_cnn/calib_labels.txt --no-cycles"
#define EVAL_FLIP GATES "near_flip.onnx --calib " GATES "near_flip.npy --data " GATES "near_flip.npy " \
                  "--labels " GATES "near_flip_labels.txt --no-cycles"

/* Runs `easynpu CMD ARGS --quiet`, expects exit `want` and, when `line` is
 * given, that line in the output. */
static void expect(const char *cmd, const char *args, int want, const char *line) {
    char full[4096];
    snprintf(full, sizeof full, "%s %s %s --quiet", ENPU_CLI, cmd, args);
    char *out = NULL;
    int st = enpu_test_run(full, &out);
    assert_non_null(out);
    if (st != want) fail_msg("%s: exit %d, expected %d:\n%s", full, st, want, out);
    if (line && !strstr(out, line)) fail_msg("%s: missing \"%s\" in:\n%s", full, line, out);
    free(out);
}

static void test_run_sqnr(void **state) {
    (void)state;
    /* the default model: 42.5 dB on this input */
    expect("run", KWS " --min-sqnr 40", 0, "SQNR 42.5 dB, top-1 agrees");
    expect("run", KWS " --min-sqnr 45", 3,
           "easynpu run: error [accuracy]: output logits: SQNR 42.5 dB (int8 vs float) is below --min-sqnr 45\n");
    expect("run", KWS " --min-sqnr x", 2, "--min-sqnr 'x': a number of dB expected");
}

static void test_run_top1(void **state) {
    (void)state;
    expect("run", KWS " --require-top1", 0, "top-1 agrees (float 1, int8 1)");
    expect("run", FLIP " --require-top1", 3,
           "easynpu run: error [accuracy]: output y: --require-top1: int8 chooses class 1, float 0\n");
    expect("run", TIE " --require-top1", 3,
           "error [accuracy]: output y: --require-top1: the top score is shared by 2 classes in the int8 "
           "result, so no class is chosen");
    /* without the gate the same runs pass: the verdict is only said */
    expect("run", FLIP, 0, "top-1 DIFFERS (float 0, int8 1)");
    /* a model whose output is no class vector */
    expect("run", "models/pointnet/pointmlp_conv1.onnx --input models/pointnet/input_3.npy --require-top1", 2,
           "--require-top1: no output of the model is a class vector");
}

static void test_run_needs_float(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_gates_XXXXXX", args[512], cmd[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "%s quantize models/kws_cnn.onnx --calib models/kws_cnn/calib -o %s/k.qjson --quiet",
             ENPU_CLI, dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(args, sizeof args, "%s/k.qjson --input models/kws_cnn/sample_0.npy --min-sqnr 20", dir);
    expect("run", args, 2, "--min-sqnr compares the int8 run with the float reference, which only an .onnx");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_eval_gates(void **state) {
    (void)state;
    /* the default model on its 32 calibration inputs: 100% top-1 and
     * agreement, mean SQNR 44.9 dB */
    expect("eval", EVAL_KWS " --min-top1 100 --min-agreement 100 --min-sqnr 44", 0, "mean 44.9");
    expect("eval", EVAL_KWS " --min-sqnr 45", 3,
           "easynpu eval: error [accuracy]: the mean SQNR of output logits over the set, 44.9 dB, is below "
           "--min-sqnr 45\n");
    expect("eval", EVAL_FLIP " --min-top1 50", 3,
           "error [accuracy]: int8 top-1 accuracy 0.00% (0 of 1 labelled input sets) is below --min-top1 50");
    expect("eval", EVAL_FLIP " --min-agreement 50", 3,
           "error [accuracy]: float/int8 top-1 agreement 0.00% (0 of 1 input sets) is below --min-agreement 50");
    expect("eval", EVAL_FLIP " --min-agreement 0", 0, NULL);
    expect("eval", "models/kws_cnn.onnx --data models/kws_cnn/calib --min-top1 90", 2, "--min-top1 needs --labels");
    expect("eval", EVAL_KWS " --min-top1 101", 2, "--min-top1 '101': a percentage in 0..100 expected");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_sqnr),
        cmocka_unit_test(test_run_top1),
        cmocka_unit_test(test_run_needs_float),
        cmocka_unit_test(test_eval_gates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
