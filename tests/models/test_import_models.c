/* The real models of ../shared/models import with the exact op mix, shapes,
 * attributes and layout hints they have (skips when the folder is absent). */
#include <stdio.h>
#include <string.h>

#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

typedef struct op_count {
    enpu_op op;
    int n;
} op_count;

static enpu_graph *load(const char *rel) {
    const char *path = enpu_test_shared_model(rel);
    assert_non_null(path);
    enpu_err err = {0};
    enpu_graph *g = NULL;
    if (enpu_onnx_load(path, &g, &err)) fail_msg("%s", err.msg);
    return g;
}

static void check_ops(const enpu_graph *g, const op_count *want, int n_want, int total) {
    int count[ENPU_OP_COUNT] = {0};
    for (int i = 0; i < g->n_nodes; i++) count[g->nodes[i].op]++;
    int expect[ENPU_OP_COUNT] = {0};
    for (int i = 0; i < n_want; i++) expect[want[i].op] = want[i].n;
    for (int op = 0; op < ENPU_OP_COUNT; op++)
        if (count[op] != expect[op])
            fail_msg("%s: %d nodes, expected %d", enpu_op_name((enpu_op)op), count[op], expect[op]);
    assert_int_equal(g->n_nodes, total);
}

static void check_io(const enpu_graph *g, int is_input, const char *name, int rank,
                     const int64_t *dims) {
    assert_int_equal(is_input ? g->n_inputs : g->n_outputs, 1);
    const enpu_tensor *t = &g->tensors[is_input ? g->inputs[0] : g->outputs[0]];
    assert_string_equal(t->name, name);
    assert_int_equal(t->dtype, ENPU_DT_FLOAT32);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

/* The reference input of a test data set has the graph input's shape. */
static void check_test_input(const enpu_graph *g, const char *rel) {
    const char *path = enpu_test_shared_model(rel);
    enpu_buf b;
    enpu_err err = {0};
    if (enpu_tensor_read(path, &b, &err)) fail_msg("%s", err.msg);
    const enpu_tensor *t = &g->tensors[g->inputs[0]];
    assert_int_equal(b.dtype, t->dtype);
    assert_int_equal(b.rank, t->rank);
    for (int i = 0; i < b.rank; i++) assert_int_equal(b.dims[i], t->dims[i]);
    enpu_buf_free(&b);
}

static int count_depthwise(const enpu_graph *g) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *nd = &g->nodes[i];
        if (nd->op == ENPU_OP_CONV && nd->attr.conv.group > 1 &&
            nd->attr.conv.group == enpu_node_input(g, nd, 0)->dims[1])
            n++;
    }
    return n;
}

static int count_consts(const enpu_graph *g) {
    int n = 0;
    for (int i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].flags & ENPU_T_CONST) {
            assert_non_null(g->tensors[i].data);
            n++;
        }
    return n;
}

static void test_mnist8(void **state) {
    (void)state;
    enpu_graph *g = load("mnist-8/model.onnx");
    assert_int_equal(g->opset, 8);
    /* the Reshape of the FC weight initializer is folded at import */
    const op_count ops[] = {{ENPU_OP_CONV, 2},    {ENPU_OP_ADD, 3},     {ENPU_OP_RELU, 2},
                            {ENPU_OP_MAXPOOL, 2}, {ENPU_OP_RESHAPE, 1}, {ENPU_OP_MATMUL, 1}};
    check_ops(g, ops, 6, 11);
    /* IR 3: the 8 initializers are also listed as graph inputs; only Input3 is one. */
    check_io(g, 1, "Input3", 4, (int64_t[]){1, 1, 28, 28});
    check_io(g, 0, "Plus214_Output_0", 2, (int64_t[]){1, 10});
    assert_int_equal(count_consts(g), 9); /* and the folded weight */
    assert_int_equal(g->tensors[g->inputs[0]].layout, ENPU_LAYOUT_NCHW);
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->op == ENPU_OP_CONV) {
            assert_int_equal(n->attr.conv.w.kernel[0], 5);
            assert_int_equal(n->attr.conv.w.pads[0], 2); /* SAME_UPPER resolved */
            assert_int_equal(n->attr.conv.w.pads[3], 2);
            assert_int_equal(n->attr.conv.w.auto_pad, ENPU_PAD_NOTSET);
        }
        if (strcmp(n->name, "Pooling160") == 0) {
            assert_int_equal(n->attr.pool.w.kernel[0], 3);
            assert_int_equal(n->attr.pool.w.stride[1], 3);
            assert_int_equal(enpu_node_output(g, n, 0)->dims[2], 4);
        }
    }
    enpu_graph_free(g);
}

static void test_alibaba_kws(void **state) {
    (void)state;
    enpu_graph *g = load("alibaba-kws/model.onnx");
    assert_int_equal(g->opset, 9);
    const op_count ops[] = {{ENPU_OP_CONV, 9},
                            {ENPU_OP_RELU, 9},
                            {ENPU_OP_RESHAPE, 2},
                            {ENPU_OP_AVGPOOL, 1},
                            {ENPU_OP_GEMM, 1}};
    check_ops(g, ops, 5, 22);
    check_io(g, 1, "x:0", 4, (int64_t[]){1, 49, 10, 1});
    check_io(g, 0, "Identity:0", 2, (int64_t[]){1, 12});
    assert_int_equal(count_consts(g), 22);
    assert_int_equal(count_depthwise(g), 4);
    /* NHWC input reshaped (not transposed) to NCHW: no layout hint. */
    assert_int_equal(g->tensors[g->inputs[0]].layout, ENPU_LAYOUT_ANY);
    const enpu_node *first = NULL;
    for (int i = 0; i < g->n_nodes && !first; i++)
        if (g->nodes[i].op == ENPU_OP_CONV) first = &g->nodes[i];
    assert_int_equal(first->attr.conv.w.kernel[0], 10);
    assert_int_equal(first->attr.conv.w.kernel[1], 4);
    assert_int_equal(first->attr.conv.w.stride[0], 2);
    const int64_t c1[] = {1, 32, 25, 5};
    const enpu_tensor *o = enpu_node_output(g, first, 0);
    for (int i = 0; i < 4; i++) assert_int_equal(o->dims[i], c1[i]);
    check_test_input(g, "alibaba-kws/test_data_set_0/input_0.pb");
    enpu_graph_free(g);
}

static void test_mlperf_vww_float(void **state) {
    (void)state;
    enpu_graph *g = load("mlperf-vww-float/model.onnx");
    assert_int_equal(g->opset, 11);
    const op_count ops[] = {{ENPU_OP_CONV, 27},     {ENPU_OP_RELU, 27},    {ENPU_OP_AVGPOOL, 1},
                            {ENPU_OP_TRANSPOSE, 1}, {ENPU_OP_RESHAPE, 1},  {ENPU_OP_GEMM, 1},
                            {ENPU_OP_SOFTMAX, 1}};
    check_ops(g, ops, 7, 59);
    check_io(g, 1, "input_1", 4, (int64_t[]){1, 3, 96, 96});
    check_io(g, 0, "Identity", 2, (int64_t[]){1, 2});
    assert_int_equal(count_depthwise(g), 13);
    assert_int_equal(g->tensors[g->inputs[0]].layout, ENPU_LAYOUT_NCHW);
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->op == ENPU_OP_GEMM) assert_true(n->attr.gemm.trans_b && !n->attr.gemm.trans_a);
        if (n->op == ENPU_OP_SOFTMAX) { /* opset 11: coerced to 2-D at axis -1 = 1 */
            assert_true(n->attr.shape.softmax_legacy);
            assert_int_equal(n->attr.shape.axis, 1);
        }
        if (n->op == ENPU_OP_TRANSPOSE) {
            assert_int_equal(n->attr.shape.n_axes, 4);
            assert_int_equal(n->attr.shape.axes[1], 2);
        }
    }
    check_test_input(g, "mlperf-vww-float/test_data_set_0/input_0.pb");
    check_test_input(g, "mlperf-vww-float/test_data_set_1/input_0.pb");
    enpu_graph_free(g);
}

int main(void) {
    if (!enpu_test_have_shared_models()) return ENPU_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mnist8),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_mlperf_vww_float),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
