/* Defects found with real, unseen models (issue 11 section 5), each pinned
 * by the command that showed it.  The models are small fixtures in
 * tests/models/defects/ (scripts/make_defect_models.py). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "easynpu/arch.h"
#include "easynpu/file.h"
#include "testutil.h"

#define DEF "tests/models/defects/"
#define MODEL(m) DEF m ".onnx --calib " DEF m "/calib --input " DEF m "/x_0.npy"

static char dir[64];

static char *cli(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *cli(int *status, const char *fmt, ...) {
    char args[4096], cmd[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void expect(const char *out, const char *want) {
    if (!strstr(out, want)) fail_msg("missing \"%s\" in:\n%s", want, out);
}

/* 1. A Concat run by the host over views of conv outputs (SSD's head):
 * the host op must see the operands' logical shapes [1,128,8] and [1,32,8],
 * not the storage grids [1,8,8,16] and [1,4,4,16] they are views of. */
static void test_host_concat_of_views(void **state) {
    (void)state;
    int st;
    char *out = cli(&st, "run " MODEL("detector_head"));
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "bit-exact: yes (5 layer outputs and 1 model output(s)");
    expect(out, "output y [1,160,8]");
    free(out);
    /* the same through compile + sim --golden */
    out = cli(&st, "quantize " DEF "detector_head.onnx --calib " DEF "detector_head/calib -o %s/det.qjson",
              dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    out = cli(&st, "compile %s/det.qjson -o %s/det.enpu", dir, dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    out = cli(&st, "sim %s/det.enpu --input " DEF "detector_head/x_0.npy --golden %s/det.qjson", dir, dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "golden: 5 layer outputs and 1 output(s) bit-exact");
    expect(out, "output y: [1,160,8]");
    free(out);
}

/* 2. A rank-3 input read through Flatten by a Gemm: the program's input
 * descriptor carries the graph input's shape [1,130,13] (stored as one row
 * of 1690 elements), so the model's own input is accepted. */
static void test_rank3_input(void **state) {
    (void)state;
    int st;
    char *out = cli(&st, "run " MODEL("rank3_fc"));
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "bit-exact: yes (1 layer outputs and 1 model output(s)");
    free(out);
    out = cli(&st, "compile " DEF "rank3_fc.onnx --calib " DEF "rank3_fc/calib -o %s/r3.enpu", dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    out = cli(&st, "disasm %s/r3.enpu", dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, ".io input name=\"x\" dtype=int8 layout=any shape=1x130x13 row=1690 ");
    free(out);
    out = cli(&st, "sim %s/r3.enpu --input " DEF "rank3_fc/x_0.npy", dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "output y: [1,12]");
    free(out);
}

/* The integer at the path of keys (NULL-terminated) in a JSON file. */
static long long json_int_at(const char *path, ...) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) fail_msg("%s: %s", path, je.text);
    va_list ap;
    va_start(ap, path);
    json_t *v = root;
    for (const char *k; v && (k = va_arg(ap, const char *));) v = json_object_get(v, k);
    va_end(ap);
    if (!json_is_integer(v)) fail_msg("%s: no such integer", path);
    long long x = json_integer_value(v);
    json_decref(root);
    return x;
}

/* 3. One definition of MACs (docs/microarch.md "MACs"): inspect, quantize,
 * compile, sim and run count the same for a model with a BatchNormalization
 * of its own (kws_cnn) and one with a residual Add and an AveragePool. */
static void macs_everywhere(const char *model, const char *calib, const char *input, long long want) {
    char f[5][160];
    const char *names[] = {"inspect.json", "quant.json", "compile.json", "sim.json", "run.json"};
    for (int i = 0; i < 5; i++) snprintf(f[i], sizeof f[i], "%s/%s", dir, names[i]);
    int st;
    char *out = cli(&st, "inspect %s --json %s", model, f[0]);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "quantize %s --calib %s -o %s/m.qjson --json %s", model, calib, dir, f[1]);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "compile %s/m.qjson -o %s/m.enpu --json %s", dir, dir, f[2]);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "sim %s/m.enpu --input %s --json %s", dir, input, f[3]);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "run %s --calib %s --input %s --json %s", model, calib, input, f[4]);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "MACs on 16 MAC units");
    free(out);
    assert_int_equal(json_int_at(f[0], "total_macs", NULL), want);
    assert_int_equal(json_int_at(f[1], "total_macs", NULL), want);
    assert_int_equal(json_int_at(f[2], "total", "macs", NULL), want);
    assert_int_equal(json_int_at(f[3], "total", "macs", NULL), want);
    assert_int_equal(json_int_at(f[4], "total", "macs", NULL), want);
}

static void test_macs_one_definition(void **state) {
    (void)state;
    macs_everywhere("models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy", 3914280);
    /* conv 13824 + 36864, AveragePool 8*4*4*2*2 = 512, Gemm 128*10 = 1280 */
    macs_everywhere(DEF "residual.onnx", DEF "residual/calib", DEF "residual/x_0.npy", 52480);
}

/* Exactly one line, on stderr's side of the output. */
static void one_line(const char *out) {
    const char *nl = strchr(out, '\n');
    if (!nl || nl[1]) fail_msg("not one line:\n%s", out);
}

/* 4. Inputs that do not belong together are bad input (exit 2, one line
 * naming what does not match), not a failed check (exit 1). */
static void test_incompatible_inputs(void **state) {
    (void)state;
    int st;
    char *out = cli(&st, "compile models/kws_cnn.onnx --calib models/kws_cnn/calib -o %s/kws.enpu", dir);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "quantize " DEF "residual.onnx --calib " DEF "residual/calib -o %s/res.qjson", dir);
    assert_int_equal(st, 0);
    free(out);
    /* a program of another arch */
    out = cli(&st, "sim %s/kws.enpu --input models/kws_cnn/sample_0.npy --arch large", dir);
    assert_int_equal(st, 2);
    one_line(out);
    expect(out, "easynpu sim: error [incompatible]: ");
    enpu_arch small, large;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &small, &err), 0);
    assert_int_equal(enpu_arch_preset("large", &large, &err), 0);
    char want[256];
    snprintf(want, sizeof want, "kws.enpu: arch mismatch: the program was compiled for arch 'easynpu' "
             "(fingerprint 0x%08x) but arch 'large' (fingerprint 0x%08x) is selected\n",
             (unsigned)enpu_arch_fingerprint(&small), (unsigned)enpu_arch_fingerprint(&large));
    expect(out, want);
    free(out);
    out = cli(&st, "disasm %s/kws.enpu --arch large", dir);
    assert_int_equal(st, 2);
    expect(out, "easynpu disasm: error [incompatible]: ");
    free(out);
    /* --golden with the .qjson of another model: said before the run, no
     * layer table, no fake layer mismatch */
    out = cli(&st, "sim %s/kws.enpu --input models/kws_cnn/sample_0.npy --golden %s/res.qjson", dir, dir);
    assert_int_equal(st, 2);
    one_line(out);
    expect(out, "easynpu sim: error [incompatible]: ");
    expect(out, "res.qjson: the program's input 'mfcc' [1,1,26,49] is not a tensor of this model "
                "(was the program compiled from it?)\n");
    free(out);
    /* same tensor names and shapes, other quantization: the .qjson of the
     * same model calibrated on other data */
    out = cli(&st, "quantize models/kws_cnn.onnx --calib models/kws_cnn/sample_0.npy -o %s/kws1.qjson", dir);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "sim %s/kws.enpu --input models/kws_cnn/sample_0.npy --golden %s/kws1.qjson", dir, dir);
    assert_int_equal(st, 2);
    one_line(out);
    expect(out, "easynpu sim: error [incompatible]: ");
    expect(out, "kws1.qjson: tensor 'mfcc' has scale ");
    expect(out, " in this model but scale ");
    expect(out, "in the program (was the program compiled from it?)\n");
    free(out);
}

/* 7. The accuracy verdict of `run`: SQNR and max error for every output;
 * top-k only for class vectors ([N] or [1,N], N >= 2); a tie at the top of
 * the int8 scores is a tie; few calibration inputs and a low SQNR are said,
 * with the layers that lose most. */
static void test_accuracy_verdict(void **state) {
    (void)state;
    int st;
    /* a reconstruction [1,1,8,8]: no classes */
    char *out = cli(&st, "run " MODEL("autoencoder"));
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "float vs int8 (this input), output y [1,1,8,8]: max |error| 0.001853, SQNR 55.1 dB\n");
    assert_null(strstr(out, "top-"));
    assert_null(strstr(out, "agrees"));
    assert_null(strstr(out, "warning"));
    free(out);
    /* the quantizer's report: no top-1 agreement for it either */
    out = cli(&st, "quantize " DEF "autoencoder.onnx --calib " DEF "autoencoder/calib -o %s/ae.qjson", dir);
    assert_int_equal(st, 0);
    expect(out, "End to end over 8 calibration sample(s), first output: SQNR ");
    assert_null(strstr(out, "top-1"));
    free(out);
    /* two outputs, one a class vector */
    out = cli(&st, "run " MODEL("residual") " --json %s/res.json", dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "output y [1,10]: top-5 class (int8 score / float score): 3 (0.4688 / 0.469)");
    expect(out, "float vs int8 (this input), output y [1,10]: max |error| 0.01642, SQNR 35.0 dB, "
                "top-1 agrees (float 3, int8 3)\n");
    expect(out, "float vs int8 (this input), output features [1,8,4,4]: max |error| ");
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/res.json", dir);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    json_t *fv = json_object_get(root, "float_vs_int8");
    assert_int_equal(json_array_size(fv), 2);
    json_t *o0 = json_array_get(fv, 0), *o1 = json_array_get(fv, 1);
    assert_string_equal(json_string_value(json_object_get(o0, "output")), "y");
    assert_true(json_is_true(json_object_get(o0, "class_vector")));
    assert_true(json_is_true(json_object_get(o0, "top1_agree")));
    assert_int_equal(json_integer_value(json_object_get(o0, "top1_int8")), 3);
    assert_string_equal(json_string_value(json_object_get(o1, "output")), "features");
    assert_true(json_is_false(json_object_get(o1, "class_vector")));
    assert_null(json_object_get(o1, "top1_agree"));
    assert_true(json_is_real(json_object_get(o1, "sqnr_db")));
    json_decref(root);
    /* saturated int8 scores: a tie, not an agreement; 4 calibration inputs;
     * SQNR below 20 dB, and the layer that loses it */
    out = cli(&st, "run " MODEL("saturating_fc"));
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "float vs int8 (this input), output y [1,6]: max |error| 8.583, SQNR 0.6 dB, top-1 TIE: "
                "int8 classes 0, 5 share the top score 0.4898 (float top-1 5)\n");
    expect(out, "warning: calibration used 4 input(s), fewer than 8: the int8 ranges may not cover "
                "other inputs (give more with --calib)\n");
    expect(out, "warning: output y: SQNR 0.6 dB, below 20 dB; the layers that lose most (SQNR over "
                "the calibration set, drop from their input): /Gemm ");
    free(out);
    /* the default model: no warning */
    out = cli(&st, "run models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy");
    assert_int_equal(st, 0);
    expect(out, "float vs int8 (this input), output logits [1,12]: max |error| 0.02538, SQNR 42.5 dB, "
                "top-1 agrees (float 1, int8 1)\n");
    assert_null(strstr(out, "warning"));
    free(out);
}

/* stdout of a shell command line alone (its stderr dropped); *status its exit. */
static char *sh_stdout(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *sh_stdout(int *status, const char *fmt, ...) {
    char line[4096], cmd[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "{ %s 2>/dev/null; }", line);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

/* 5. '-' is stdout for an output (then the report goes to stderr, so
 * stdout is the data alone) and stdin for an input; outputs are checked
 * before any work. */
static void test_dash_and_early_checks(void **state) {
    (void)state;
    int st;
    char *out = sh_stdout(&st, "%s inspect models/kws_cnn.onnx --json -", ENPU_CLI);
    assert_int_equal(st, 0);
    json_error_t je;
    json_t *root = json_loads(out, 0, &je);
    if (!root) fail_msg("stdout is not JSON (%s):\n%s", je.text, out);
    assert_int_equal(json_integer_value(json_object_get(root, "total_macs")), 3914280);
    json_decref(root);
    free(out);
    assert_int_equal(access("-", F_OK), -1); /* no file named '-' */
    /* the run's JSON on stdout, its table on stderr */
    out = sh_stdout(&st, "%s run " MODEL("rank3_fc") " --json -", ENPU_CLI);
    assert_int_equal(st, 0);
    root = json_loads(out, 0, &je);
    if (!root) fail_msg("stdout is not JSON (%s):\n%s", je.text, out);
    assert_true(json_is_true(json_object_get(root, "bit_exact")));
    json_decref(root);
    free(out);
    st = enpu_test_run("{ " ENPU_CLI " run " MODEL("rank3_fc") " --json - >/dev/null; }", &out);
    assert_int_equal(st, 0);
    expect(out, "bit-exact: yes");
    free(out);
    /* stdin: a model and an input; quantize -o - | compile - -o - | sim - */
    out = cli(&st, "inspect - < models/kws_cnn.onnx");
    assert_int_equal(st, 0);
    expect(out, "total: 16 nodes, 38206 parameters, 3914280 MACs");
    free(out);
    out = sh_stdout(&st, "%s quantize " DEF "rank3_fc.onnx --calib " DEF "rank3_fc/calib -o - > %s/r3.qjson",
                    ENPU_CLI, dir);
    assert_int_equal(st, 0);
    free(out);
    out = cli(&st, "compile %s/r3.qjson -o - | %s sim - --input - < " DEF "rank3_fc/x_0.npy", dir, ENPU_CLI);
    assert_int_equal(st, 2);
    one_line(out);
    expect(out, "easynpu sim: '-' (stdin) is given for two inputs; see 'easynpu sim --help'\n");
    free(out);
    out = cli(&st, "compile %s/r3.qjson -o - | %s sim - --input " DEF "rank3_fc/x_0.npy --golden %s/r3.qjson",
              dir, ENPU_CLI, dir);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "golden: 1 layer outputs and 1 output(s) bit-exact");
    free(out);
    out = cli(&st, "run-float " DEF "rank3_fc.onnx --input - --output %s/y.npy < " DEF "rank3_fc/x_0.npy", dir);
    assert_int_equal(st, 0);
    free(out);
    /* outputs checked before the work: a missing folder, a folder, '-' twice */
    const char *bad[][2] = {
        {"--json /nonexistent/run.json", "easynpu run: error [io]: output '/nonexistent/run.json': cannot "
                                         "write in '/nonexistent': No such file or directory\n"},
        {"--json /tmp", "easynpu run: error [io]: output '/tmp' is a directory\n"},
        {"--json - --svg -", "easynpu run: output '-' (stdout) is given twice"},
        {"--json " DEF "rank3_fc/calib/x.json", "is inside the input folder"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        out = cli(&st, "run " MODEL("rank3_fc") " %s", bad[i][0]);
        assert_int_equal(st, 2);
        one_line(out); /* nothing ran: no table, no quantizer warning */
        expect(out, bad[i][1]);
        free(out);
    }
    out = cli(&st, "compile " DEF "rank3_fc.onnx --calib " DEF "rank3_fc/calib -o /nonexistent/p.enpu");
    assert_int_equal(st, 2);
    one_line(out);
    expect(out, "output '/nonexistent/p.enpu': cannot write in '/nonexistent'");
    free(out);
}

/* 6. pe_rows > 1: the compiler uses every row (docs/microarch.md §16): the
 * default model on two rows runs bit-exact in about half the cycles, and
 * the compile report says which layers use the rows. */
static void test_pe_rows_used(void **state) {
    (void)state;
    char arch[128];
    snprintf(arch, sizeof arch, "%s/rows2.json", dir);
    FILE *f = fopen(arch, "w");
    assert_non_null(f);
    fputs("{\"base\": \"easynpu\", \"name\": \"rows2\", \"pe_rows\": 2, \"lane_groups_max\": 4}\n", f);
    fclose(f);
    int st;
    char *out = cli(&st, "compile models/kws_cnn.onnx --calib models/kws_cnn/calib --arch %s -o %s/k.enpu",
                    arch, dir);
    assert_int_equal(st, 0);
    expect(out, "Mapping on arch 'rows2' (16 PEs x 2 row(s))");
    expect(out, "note 1 /features/features.3/Conv: mapping: 2 PE row(s) x 2 lane group(s) of 8 PEs");
    free(out);
    out = cli(&st, "run models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy "
                   "--arch %s", arch);
    assert_int_equal(st, 0);
    expect(out, "mode cycle, arch rows2: 124872 cycles");
    expect(out, "3914280 MACs on 32 MAC units, utilization 98.0%");
    expect(out, "bit-exact: yes");
    free(out);
}

/* 8. The large preset also doubles the clock: `arch` and the comparison
 * table say so, since time columns change while cycles do not. */
static void test_large_clock_said(void **state) {
    (void)state;
    int st;
    char *out = cli(&st, "arch large");
    assert_int_equal(st, 0);
    expect(out, "\nvs preset 'easynpu': main_dtcm_bytes 524288 (easynpu 65536), skip_dtcm_bytes 262144 "
                "(easynpu 16384), weight_mem_bytes 524288 (easynpu 65536), itcm_bytes 16384 (easynpu "
                "4096), ");
    expect(out, ", clock_mhz 200 (easynpu 100)\n");
    expect(out, "note: clock_mhz 200 is 2x easynpu's 100: the same cycles take 0.5x the time\n");
    free(out);
    out = cli(&st, "arch easynpu");
    assert_int_equal(st, 0);
    assert_null(strstr(out, "vs preset"));
    free(out);
    out = cli(&st, "run " MODEL("rank3_fc") " --arch easynpu --arch large");
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "\nclock (MHz)                                           100                          200\n");
    expect(out, "note: the clocks differ: time compares clock and cycles, the cycle rows the "
                "microarchitecture alone\n");
    free(out);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_defects_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_concat_of_views),
        cmocka_unit_test(test_rank3_input),
        cmocka_unit_test(test_macs_one_definition),
        cmocka_unit_test(test_incompatible_inputs),
        cmocka_unit_test(test_accuracy_verdict),
        cmocka_unit_test(test_dash_and_early_checks),
        cmocka_unit_test(test_pe_rows_used),
        cmocka_unit_test(test_large_clock_said),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
