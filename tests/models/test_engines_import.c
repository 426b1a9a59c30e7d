/* The repository's imported real models (models/import) on the systolic
 * and row-stationary engines, end to end (import -> quantize for the engine
 * -> compile -> simulate in both modes, every layer output compared with the
 * golden reference right after it ran, the outputs bit for bit, the cost
 * model equal to the simulator).  What they need from the engines' host:
 *   mbv3     squeeze-excite Mul (an Expand with a constant shape) and
 *            HardSwish: element-wise and table kinds the arrays lack;
 *   dethead  Resize and Concat: data movement the engines have no unit for;
 *   lngelu   LayerNormalization (constant scale and bias) and GELU.
 * The cycle counts are the ones docs/systolic.md and docs/rowstat.md quote. */
#include "testutil.h"

#include <stdio.h>

#define IMP ENPU_SOURCE_DIR "/models/import/"

static void run(const char *model, const char *arch_name, uint64_t want) {
    char onnx[512], calib[512], input[512];
    snprintf(onnx, sizeof onnx, IMP "%s.onnx", model);
    snprintf(calib, sizeof calib, IMP "%s/calib", model);
    snprintf(input, sizeof input, IMP "%s/sample_0.npy", model);
    enpu_err err = {0};
    enpu_arch arch;
    assert_int_equal(enpu_arch_preset(arch_name, &arch, &err), 0);
    enpu_test_e2e_result r;
    uint64_t cycles = enpu_test_e2e(model, onnx, calib, input, &arch, NULL, &r);
    assert_int_equal((int64_t)cycles, r.modelled);
    assert_true(r.compared > 0);
    if (cycles != want)
        fail_msg("%s on %s: %llu cycles, the docs say %llu", model, arch_name, (unsigned long long)cycles,
                 (unsigned long long)want);
}

static void test_systolic(void **state) {
    (void)state;
    run("mbv3", "systolic", 239062);
    run("dethead", "systolic", 100642);
    run("lngelu", "systolic", 32132);
}

static void test_rowstat(void **state) {
    (void)state;
    run("mbv3", "rowstat", 303382);
    run("dethead", "rowstat", 306958);
    run("lngelu", "rowstat", 38354);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_systolic),
        cmocka_unit_test(test_rowstat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
