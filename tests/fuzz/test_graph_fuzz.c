/* The random-graph differential fuzzer (tests/fuzz/graphgen.h) in the test
 * suite: a fixed seed set (every graph bit-exact with the golden reference in
 * cycle and functional mode, its simulated cycles equal to the cost model's,
 * or refused cleanly), the review's regression case (../shared/regress,
 * skipped when absent) and small hand-made cases of what the fuzzer found,
 * each through the same check. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/graphgen.h"

/* ---- the review's regression case ------------------------------------------------- */

/* ../shared/regress/residual_tile: a fused add after a kernel-row-banded
 * depthwise conv read its second operand once per band instead of once per
 * tile in cycle mode (fixed in src/sim/easynpu/scheduler.c op2_stage_from). */
static void test_regress_residual_tile(void **state) {
    (void)state;
    const char *dir = ENPU_SHARED_MODELS "/../regress/residual_tile";
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "SKIP: %s is absent; the review's regression case needs ../shared/regress\n", dir);
        skip();
    }
    static const char *const ARCHS[] = {"easynpu", "large"};
    for (int a = 0; a < 2; a++) {
        gg_case c;
        enpu_err err = {0};
        if (gg_case_from_files(ENPU_SHARED_MODELS "/../regress/residual_tile/model.onnx",
                               ENPU_SHARED_MODELS "/../regress/residual_tile/calib",
                               ENPU_SHARED_MODELS "/../regress/residual_tile/input.npy", ARCHS[a], &c,
                               &err))
            fail_msg("%s", err.msg);
        gg_outcome o;
        gg_check(&c, &o);
        if (o.verdict != GG_PASS) fail_msg("residual_tile on %s [%s]: %s", ARCHS[a], o.stage, o.msg);
        assert_true(o.compared >= 8);
        gg_case_free(&c);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regress_residual_tile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
