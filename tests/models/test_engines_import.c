/* The repository's imported real models (models/import) on the systolic
 * and row-stationary engines, end to end (import -> quantize for the engine
 * -> compile -> simulate in both modes, every layer output compared with the
 * golden reference right after it ran, the outputs bit for bit, the cost
 * model equal to the simulator).  What they need from the engines' host:
 *   mbv3     squeeze-excite Mul (an Expand with a constant shape) and
 *            HardSwish: element-wise and table kinds the arrays lack;
 *   dethead  Resize and Concat: data movement the engines have no unit for;
 *   lngelu   LayerNormalization (constant scale and bias) and GELU.
 * The cycle counts are the ones docs/systolic.md and docs/rowstat.md quote.
 * On the systolic engine, the six of them also run with and without its
 * fast-forward (docs/systolic.md "Fast-forward"): the same run, trace and
 * VCD windows included (enpu_test_assert_ff_equal). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"

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

/* host ops between the array's layers (squeeze-excite, Resize and Concat,
 * LayerNormalization, ...): the fast path hands over to the host and back */
static void test_systolic_fastfwd(void **state) {
    (void)state;
    static const char *const names[] = {"mbv3", "dethead", "lngelu", "audio1d", "qdq", "qlinear"};
    enpu_onnx_input_shape frames = {"x", 3, {1, 40, 98}}; /* audio1d's symbolic time axis */
    enpu_onnx_opts audio = {0, NULL, 0, &frames, 1};
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("systolic", &a, &err), 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char onnx[512], calib[512], input[512];
        snprintf(onnx, sizeof onnx, IMP "%s.onnx", names[i]);
        snprintf(calib, sizeof calib, IMP "%s/calib", names[i]);
        snprintf(input, sizeof input, IMP "%s/sample_0.npy", names[i]);
        enpu_graph *qg = enpu_test_quantize_opts(onnx, strcmp(names[i], "audio1d") ? NULL : &audio, calib, &a);
        enpu_program p;
        enpu_buf in;
        if (enpu_compile(qg, &a, NULL, &p, NULL, &err) || enpu_tensor_read(input, &in, &err) ||
            enpu_buf_to_f32(&in, &err))
            fail_msg("%s: %s", names[i], err.msg);
        uint64_t ff = 0, compute = 0;
        uint64_t cycles = enpu_test_assert_ff_equal(names[i], &p, &a, &in, NULL, 1, true, &ff, &compute);
        fprintf(stderr, "%s on systolic: %llu cycles (%llu compute), the same with and without fast-forward; "
                        "%llu fast-forwarded\n",
                names[i], (unsigned long long)cycles, (unsigned long long)compute, (unsigned long long)ff);
        assert_true(ff * 10 > compute * 9);
        enpu_buf_free(&in);
        enpu_program_free(&p);
        enpu_graph_free(qg);
    }
}

static void test_rowstat(void **state) {
    (void)state;
    run("mbv3", "rowstat", 298311);
    run("dethead", "rowstat", 255815);
    run("lngelu", "rowstat", 36879);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_systolic),
        cmocka_unit_test(test_systolic_fastfwd),
        cmocka_unit_test(test_rowstat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
