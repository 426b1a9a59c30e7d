/* The real models of models/import (scripts/make_import_models.py: PyTorch
 * exports of the patterns docs/ops.md lists) end to end on the default
 * preset: imported (shape folding, --input-shape, decomposed activations and
 * LayerNorm, QDQ and QLinear parameters), quantized, compiled with their
 * host ops, run in cycle and functional mode bit-exact with the golden
 * reference layer by layer, the cost model equal to the simulator
 * (enpu_test_e2e).  The figures of docs/ops.md -- cycles, host ops, the
 * host CPU's cycles and the NPU's share of MACs and time -- are asserted. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/onnx.h"
#include "easynpu/quant.h"

#define M(rel) ENPU_SOURCE_DIR "/models/import/" rel

typedef struct want {
    uint64_t cycles, host_cycles, npu_macs, host_macs;
    int host_ops;
    int macs_permille, time_permille; /* the NPU's share, as docs/ops.md rounds it */
} want;

static void e2e(const char *name, const enpu_onnx_opts *io, want w) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    char onnx[512], calib[512], input[512];
    snprintf(onnx, sizeof onnx, M("%s.onnx"), name);
    snprintf(calib, sizeof calib, M("%s/calib"), name);
    snprintf(input, sizeof input, M("%s/sample_0.npy"), name);
    enpu_test_e2e_result r;
    enpu_test_e2e_opts(name, onnx, io, calib, input, &a, NULL, &r);
    fprintf(stderr, "%s: %llu cycles, %d host op(s), %llu host CPU cycles, NPU %llu MACs (host %llu): "
                    "%.1f%% of the MACs, %.1f%% of the time\n",
            name, (unsigned long long)r.cycles, r.share.host_ops, (unsigned long long)r.share.host_cycles,
            (unsigned long long)r.npu_macs, (unsigned long long)r.host_macs, 100 * r.share.npu_macs,
            100 * r.share.npu_time);
    assert_int_equal(r.cycles, w.cycles);
    assert_int_equal(r.modelled, r.cycles); /* the compiler's cost model, host time included */
    assert_int_equal(r.share.host_ops, w.host_ops);
    assert_int_equal(r.share.host_cycles, w.host_cycles);
    assert_int_equal(r.npu_macs, w.npu_macs);
    assert_int_equal(r.host_macs, w.host_macs);
    assert_int_equal(lround(1000 * r.share.npu_macs), w.macs_permille);
    assert_int_equal(lround(1000 * r.share.npu_time), w.time_permille);
}

static void test_mbv3(void **state) {
    (void)state;
    e2e("mbv3", NULL, (want){87370, 9180, 1100032, 0, 3, 1000, 895});
}

static void test_dethead(void **state) {
    (void)state;
    e2e("dethead", NULL, (want){588984, 35732, 7056384, 0, 5, 1000, 939});
}

/* the time axis is symbolic in the model: fixed at 98 frames */
static void test_audio1d(void **state) {
    (void)state;
    enpu_onnx_input_shape s = {"x", 3, {1, 40, 98}};
    enpu_onnx_opts io = {0, NULL, 0, &s, 1};
    e2e("audio1d", &io, (want){56250, 0, 884144, 0, 0, 1000, 1000});
}

static void test_lngelu(void **state) {
    (void)state;
    e2e("lngelu", NULL, (want){21657, 13820, 65696, 512, 3, 992, 362});
}

static void test_qdq(void **state) {
    (void)state;
    e2e("qdq", NULL, (want){23633, 0, 290080, 0, 0, 1000, 1000});
}

static void test_qlinear(void **state) {
    (void)state;
    e2e("qlinear", NULL, (want){6528, 0, 78400, 0, 0, 1000, 1000});
}

/* ---- what the import and the quantizer made of them ------------------------------- */

static enpu_graph *quantized(const char *name, const enpu_onnx_opts *io, enpu_graph **fg) {
    enpu_err err = {0};
    char onnx[512], calib[512];
    snprintf(onnx, sizeof onnx, M("%s.onnx"), name);
    snprintf(calib, sizeof calib, M("%s/calib"), name);
    enpu_graph *g = NULL, *qg = NULL;
    if (enpu_onnx_load_opts(onnx, io, &g, &err)) fail_msg("%s", err.msg);
    enpu_buf *cal = NULL;
    int n = 0;
    if (enpu_calib_load(g, calib, &cal, &n, &err)) fail_msg("%s", err.msg);
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.quiet = true;
    if (enpu_quantize_graph(g, cal, n, &qo, &qg, NULL, &err)) fail_msg("%s", err.msg);
    enpu_calib_free(cal, n * g->n_inputs);
    if (fg) *fg = g;
    else enpu_graph_free(g);
    return qg;
}

static int count(const enpu_graph *g, enpu_op op, int kind) {
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++)
        k += g->nodes[i].op == op && (kind < 0 || (g->nodes[i].q && (int)g->nodes[i].q->kind == kind));
    return k;
}

/* HardSwish as x*relu6(x+3)/6 (the stem) and as x*HardSigmoid(x) (opset 13's
 * nn.Hardswish) become 6 tables; each squeeze-excite Mul is the NPU's, its
 * gate expanded over the map on the host. */
static void test_mbv3_forms(void **state) {
    (void)state;
    enpu_graph *qg = quantized("mbv3", NULL, NULL);
    assert_int_equal(count(qg, ENPU_OP_HARD_SWISH, ENPU_Q_TABLE), 6);
    assert_int_equal(count(qg, ENPU_OP_HARD_SIGMOID, ENPU_Q_TABLE), 3); /* the SE gates */
    assert_int_equal(count(qg, ENPU_OP_MUL, ENPU_Q_MUL), 3);
    assert_int_equal(count(qg, ENPU_OP_EXPAND, ENPU_Q_MOVE), 3);
    assert_int_equal(count(qg, ENPU_OP_REDUCE_MEAN, ENPU_Q_CONV), 3); /* SE means: avgpool */
    assert_int_equal(count(qg, ENPU_OP_DIV, -1) + count(qg, ENPU_OP_CLIP, -1), 0);
    enpu_graph_free(qg);
}

/* LayerNorm (9 nodes each at opset 13) -> LayerNormalization on the host,
 * GELU (5 nodes) -> one table, each Linear a 1x1 conv between transposes. */
static void test_lngelu_forms(void **state) {
    (void)state;
    enpu_graph *fg = NULL, *qg = quantized("lngelu", NULL, &fg);
    assert_int_equal(count(fg, ENPU_OP_REDUCE_MEAN, -1), 5); /* as imported: 2 x 2 + the mean over tokens */
    assert_int_equal(count(fg, ENPU_OP_ERF, -1), 1);
    assert_int_equal(count(qg, ENPU_OP_LAYER_NORM, ENPU_Q_HOST), 2);
    assert_int_equal(count(qg, ENPU_OP_GELU, ENPU_Q_TABLE), 1);
    assert_int_equal(count(qg, ENPU_OP_CONV, ENPU_Q_CONV), 2);
    assert_int_equal(count(qg, ENPU_OP_ERF, -1) + count(qg, ENPU_OP_POW, -1) + count(qg, ENPU_OP_SQRT, -1), 0);
    enpu_graph_free(qg);
    enpu_graph_free(fg);
}

/* The QDQ model keeps its own parameters: the input's uint8 (scale, zero
 * point) as int8 (zp - 128), each conv's per-channel weight scales. */
static void test_qdq_params(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_graph *raw = NULL;
    assert_int_equal(enpu_onnx_load_ex(M("qdq.onnx"), ENPU_ONNX_NO_INFER, &raw, &err), 0);
    const enpu_tensor *xs = &raw->tensors[enpu_graph_find_tensor(raw, "x_scale")];
    const enpu_tensor *xz = &raw->tensors[enpu_graph_find_tensor(raw, "x_zp")];
    const enpu_tensor *ws = &raw->tensors[enpu_graph_find_tensor(raw, "c1_w_scale")];
    enpu_graph *qg = quantized("qdq", NULL, NULL);
    const enpu_tensor *x = &qg->tensors[qg->inputs[0]];
    assert_true(x->quant->scale[0] == ((const float *)xs->data)[0]);
    assert_int_equal(x->quant->zero_point[0], ((const uint8_t *)xz->data)[0] - 128);
    const enpu_node *c1 = NULL;
    for (int i = 0; i < qg->n_nodes; i++)
        if (qg->nodes[i].op == ENPU_OP_CONV) {
            c1 = &qg->nodes[i];
            break;
        }
    assert_non_null(c1);
    const enpu_tensor *w = enpu_node_input(qg, c1, 1);
    assert_int_equal(w->quant->count, 8);
    for (int c = 0; c < 8; c++) assert_true(w->quant->scale[c] == ((const float *)ws->data)[c]);
    enpu_graph_free(qg);
    enpu_graph_free(raw);
}

/* The symbolic time axis: refused with the option to give; fixed by it, the
 * slice computed from the input's shape folds away. */
static void test_audio1d_shape(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_graph *g = NULL;
    assert_int_equal(enpu_onnx_load(M("audio1d.onnx"), &g, &err), ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "graph input 'x': dimension 2 ('T') is symbolic; give its static "
                                    "shape with --input-shape x=1x40x<T>"));
    enpu_onnx_input_shape s = {"x", 3, {1, 40, 98}};
    enpu_onnx_opts io = {0, NULL, 0, &s, 1};
    err = (enpu_err){0};
    assert_int_equal(enpu_onnx_load_opts(M("audio1d.onnx"), &io, &g, &err), 0);
    assert_int_equal(count(g, ENPU_OP_SHAPE, -1) + count(g, ENPU_OP_GATHER, -1) + count(g, ENPU_OP_DIV, -1), 0);
    assert_int_equal(g->n_nodes, 11);
    assert_int_equal(g->tensors[g->outputs[0]].dims[1], 12);
    enpu_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mbv3),   cmocka_unit_test(test_dethead), cmocka_unit_test(test_audio1d),
        cmocka_unit_test(test_lngelu), cmocka_unit_test(test_qdq),     cmocka_unit_test(test_qlinear),
        cmocka_unit_test(test_mbv3_forms), cmocka_unit_test(test_lngelu_forms),
        cmocka_unit_test(test_qdq_params), cmocka_unit_test(test_audio1d_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
