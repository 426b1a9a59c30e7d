/* The simulator's watchdog from the command line (docs/hardening.md "The
 * simulator's watchdog"): with a planted hang (easynpu_wdfault, the CLI
 * built with tests/cli/wdfault_main.c) `sim --no-check` stops at once with
 * one line of category `internal` and exit code 4, distinct from bad input
 * (2); the release binary runs the same command to the end, exit 0.  (With
 * the check, this planted bug is caught earlier as a mismatch, exit 1: the
 * lost word is wrong data before it is a hang.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include <unistd.h>

static char *cli(const char *bin, const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void test_internal_exit_code(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_wd_XXXXXX", args[512];
    assert_non_null(mkdtemp(dir));
    int st;
    snprintf(args, sizeof args, "compile models/kws_cnn.onnx --calib models/kws_cnn/calib --arch systolic -o %s/p.enpu",
             dir);
    char *out = cli(ENPU_CLI, args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    free(out);
    snprintf(args, sizeof args, "sim %s/p.enpu --input models/kws_cnn/sample_0.npy --no-check", dir);
    out = cli(ENPU_CLI_WDFAULT, args, &st);
    assert_int_equal(st, 4);
    const char *want =
        "easynpu sim: error [internal]: simulator internal error: the systolic engine made no progress for 2899 "
        "cycles (the program's longest legal wait: 2898) at cycle 8184, in instruction 0 (layer "
        "'/features/features.0/Conv'); still busy: controller (wait), array (34 units in flight) (a bug in "
        "src/sim)\n";
    if (!strstr(out, want)) fail_msg("no '%s' in:\n%s", want, out);
    free(out);
    out = cli(ENPU_CLI, args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "mode cycle, arch systolic: 8461 cycles"));
    free(out);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_internal_exit_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
