/* Gathers whose indices the graph computes (models/rtgather.onnx,
 * scripts/make_rtgather_model.py): ArgMax / ArgMin -> Gather and
 * Cast(Floor(Clip(...))) -> Gather.  Before, the import refused them
 * ("input 'indices' (tensor ...) is not a constant; only a constant indices
 * is supported") and ArgMax / ArgMin were unsupported operators.  Now the
 * float reference equals numpy's outputs (committed by the generator), and
 * the int8 path runs end to end on the default preset with the indices
 * carried unquantized (int64) between host ops: bit-exact with the golden
 * reference layer by layer in cycle and functional mode, the cost model
 * equal to the simulator (enpu_test_e2e). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"

#define M(rel) ENPU_SOURCE_DIR "/models/" rel

/* The float reference on the sample against numpy's outputs: the same
 * indices picked (any other choice would differ by whole maps), the
 * values within float32 rounding of numpy's float64 convolution. */
static void test_float_reference(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_graph *g = NULL;
    enpu_fexec *ex = NULL;
    enpu_buf x, y, want;
    assert_int_equal(enpu_onnx_load(M("rtgather.onnx"), &g, &err), 0);
    assert_int_equal(enpu_tensor_read(M("rtgather/sample_0.npy"), &x, &err), 0);
    assert_int_equal(enpu_fexec_new(g, &ex, &err), 0);
    assert_int_equal(enpu_fexec_run(ex, &x, &err), 0);
    static const char *const exp[] = {M("rtgather/expect_y1.npy"), M("rtgather/expect_y2.npy")};
    for (int o = 0; o < 2; o++) {
        assert_int_equal(enpu_fexec_output(ex, o, &y, &err), 0);
        assert_int_equal(enpu_tensor_read(exp[o], &want, &err), 0);
        int64_t n = enpu_buf_numel(&y);
        assert_int_equal(n, enpu_buf_numel(&want));
        const float *a = y.data, *b = want.data;
        for (int64_t i = 0; i < n; i++) assert_true(fabsf(a[i] - b[i]) <= 1e-5f * (1 + fabsf(b[i])));
        enpu_buf_free(&y);
        enpu_buf_free(&want);
    }
    enpu_buf_free(&x);
    enpu_fexec_free(ex);
    enpu_graph_free(g);
}

/* Nine host ops: ReduceMean over [0,2,3], ArgMax, ArgMin, the three
 * Gathers, the Sub of the gathered maps, Floor, Cast; the convolutions,
 * the map mean, Mul and Add on the NPU (docs/ops.md "Host fallback"). */
static void test_int8_end_to_end(void **state) {
    (void)state;
    enpu_arch a = enpu_test_preset("easynpu");
    enpu_test_e2e_result r;
    enpu_test_e2e_opts("rtgather", M("rtgather.onnx"), NULL, M("rtgather/calib"), M("rtgather/sample_0.npy"), &a,
                       NULL, &r);
    fprintf(stderr, "rtgather: %llu cycles, %d host op(s), %llu host CPU cycles, %.1f%% of the time\n",
            (unsigned long long)r.cycles, r.share.host_ops, (unsigned long long)r.share.host_cycles,
            100 * (1 - r.share.npu_time));
    assert_int_equal(r.modelled, r.cycles);
    assert_int_equal(r.share.host_ops, 9);
    assert_int_equal(r.cycles, 7693);
    assert_int_equal(r.share.host_cycles, 5954);
}

/* A computed index outside the data's axis is refused when the node runs,
 * naming it (the kernel itself cannot fail). */
static void test_index_out_of_range(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_graph *g = NULL;
    enpu_fexec *ex = NULL;
    enpu_buf x;
    assert_int_equal(enpu_onnx_load(M("rtgather.onnx"), &g, &err), 0);
    assert_int_equal(enpu_tensor_read(M("rtgather/sample_0.npy"), &x, &err), 0);
    /* the Clip's upper bound 7 -> 70: the rows index past the 8 rows */
    bool found = false;
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, "clip") == 0) g->nodes[i].attr.act.max = 70.0f, found = true;
    assert_true(found);
    float *v = x.data;
    for (int i = 0; i < 256; i++) v[i] = 10.0f;
    assert_int_equal(enpu_fexec_new(g, &ex, &err), 0);
    assert_int_equal(enpu_fexec_run(ex, &x, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "node 'gather_rows' (Gather): computed index 33 (element 0 of 'rows') is "
                                    "outside -8..7"));
    enpu_buf_free(&x);
    enpu_fexec_free(ex);
    enpu_graph_free(g);
}

/* ArgMax / ArgMin on the float reference (and so on the host): the first
 * extreme, the last with select_last_index, a NaN the extreme (numpy's
 * rule).  On the int8 path the host sees dequantized int8 values, whose
 * order and ties are the int8 codes'. */
static void arg_case(enpu_op op, bool last, const float *v, float want) {
    enpu_err err = {0};
    enpu_graph *g = enpu_graph_new("arg");
    int64_t d[2] = {1, 5};
    int x = enpu_graph_add_tensor(g, "x", ENPU_DT_FLOAT32, 2, d, &err);
    int y = enpu_graph_add_tensor(g, "y", ENPU_DT_UNDEFINED, -1, NULL, &err);
    int k = enpu_graph_add_node(g, "arg", op, 1, &x, 1, &y, &err);
    assert_true(x >= 0 && y >= 0 && k >= 0);
    g->nodes[k].attr.reduce = (enpu_reduce_attr){.n_axes = 1, .axes = {-1}, .keepdims = true, .select_last = last};
    assert_int_equal(enpu_infer_node(g, k, &err), 0);
    assert_int_equal(g->tensors[y].dtype, ENPU_DT_INT64);
    assert_int_equal(g->tensors[y].rank, 2); /* keepdims */
    float out = -1;
    float *outs[1] = {&out};
    const float *ins[1] = {v};
    assert_int_equal(enpu_fref_node(g, &g->nodes[k], ins, outs, &err), 0);
    assert_true(out == want);
    enpu_graph_free(g);
}

static void test_argmax_argmin(void **state) {
    (void)state;
    const float ties[5] = {1, 3, 3, 0, 0}, nan[5] = {1, NAN, 3, NAN, 0};
    arg_case(ENPU_OP_ARGMAX, false, ties, 1);
    arg_case(ENPU_OP_ARGMAX, true, ties, 2);
    arg_case(ENPU_OP_ARGMIN, false, ties, 3);
    arg_case(ENPU_OP_ARGMIN, true, ties, 4);
    arg_case(ENPU_OP_ARGMAX, false, nan, 1);
    arg_case(ENPU_OP_ARGMIN, true, nan, 1);
}

/* The compile report names each host op with the quantizer's reason. */
static void test_compile_report(void **state) {
    (void)state;
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s compile %s --calib %s 2>&1", ENPU_CLI, M("rtgather.onnx"), M("rtgather/calib"));
    int st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    static const char *const want[] = {
        "note 3 argmax: host op (ArgMax to int64: integers stay unquantized on the host)\n",
        "note 4 argmin: host op (ArgMin to int64: integers stay unquantized on the host)\n",
        "note 5 gather_max: host op (Gather of computed indices: the host gathers with each run's indices)\n",
        "note 12 cast: host op (Cast to int64: integers stay unquantized on the host)\n",
        "note 13 gather_rows: host op (Gather of computed indices: the host gathers with each run's indices)\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i])) fail_msg("missing '%s' in:\n%s", want[i], out);
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_reference),
        cmocka_unit_test(test_int8_end_to_end),
        cmocka_unit_test(test_index_out_of_range),
        cmocka_unit_test(test_compile_report),
        cmocka_unit_test(test_argmax_argmin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
