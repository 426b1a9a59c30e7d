/* The main job exactly as the README gives it: `make demo`, run against this
 * build, must succeed with a bit-exact, timed run of the default model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "testutil.h"

/* The README names the main job in a shell block: "make demo". */
static void test_readme_names_make_demo(void **state) {
    (void)state;
    uint8_t *text = NULL;
    size_t n = 0;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(ENPU_SOURCE_DIR "/README.md", 1 << 20, &text, &n, &err), 0);
    assert_non_null(strstr((char *)text, "\nmake demo "));
    assert_non_null(strstr((char *)text, "\nmake test "));
    free(text);
}

static void test_make_demo(void **state) {
    (void)state;
    /* This build directory stands in for the default one, so the test checks
     * the very binaries under test (ASan ones in CI) without building twice. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C %s demo BUILD=%s",
             ENPU_SOURCE_DIR, ENPU_BINARY_DIR);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    assert_non_null(out);
    if (st != 0) fail_msg("make demo exited %d:\n%s", st, out);
    /* the layer table, its totals and the verdicts */
    const char *want[] = {
        "model models/kws_cnn.onnx on arch 'easynpu' (cycle mode)",
        "# layer",
        "    total                                  245819     244643   99.5",
        "3914280 MACs on 16 MAC units, utilization 99.5%",
        "energy per inference 23.619 uJ (45 nm, 0.9 V; dynamic, counted actions), 6.034 pJ/MAC, "
        "average power 9.608 mW at 100 MHz, EDP 5.806e-08 J*s, area 1.835 mm2",
        "bit-exact: yes (6 layer outputs and 1 model output(s) equal the golden int8 reference",
        ("float vs int8 (this input), output logits [1,12]: max |error| 0.02538, SQNR 42.5 dB, top-1 "
         "agrees (float 1, int8 1)\n"),
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i])) fail_msg("missing \"%s\" in:\n%s", want[i], out);
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_names_make_demo),
        cmocka_unit_test(test_make_demo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
