/* Graph IR: building, topological order, shape inference, validation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/ir.h"
#include "testutil.h"

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    assert_true(t >= 0);
    return t;
}

static int const_f32(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    int t = tensor(g, name, rank, dims);
    enpu_tensor_set_data(&g->tensors[t], calloc((size_t)enpu_tensor_numel(&g->tensors[t]), 4));
    return t;
}

static int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in, int out) {
    enpu_err err = {0};
    int n = enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err);
    assert_true(n >= 0);
    return n;
}

static void test_numel_limits(void **state) {
    (void)state;
    enpu_err err = {0};
    int64_t n = 0;
    int64_t ok[] = {2, 3, 4};
    assert_int_equal(enpu_shape_numel(3, ok, &n, "t", &err), 0);
    assert_int_equal(n, 24);
    int64_t big[] = {1 << 20, 1 << 20, 1 << 20};
    assert_int_equal(enpu_shape_numel(3, big, &n, "huge", &err), ENPU_E_LIMIT);
    assert_non_null(strstr(err.msg, "huge"));
    enpu_err_clear(&err);
    int64_t neg[] = {2, -1};
    assert_int_equal(enpu_shape_numel(2, neg, &n, "neg", &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "negative"));
    enpu_err_clear(&err);
    int64_t zero[] = {0, 5};
    assert_int_equal(enpu_shape_numel(2, zero, &n, "z", &err), 0);
    assert_int_equal(n, 0);
}

static void test_duplicate_tensor(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    int64_t d[] = {1};
    tensor(g, "a", 1, d);
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_tensor(g, "a", ENPU_DT_FLOAT32, 1, d, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "'a'"));
    /* The name index survives growth past its initial capacity. */
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "t%d", i);
        tensor(g, name, 1, d);
    }
    assert_int_equal(enpu_graph_find_tensor(g, "t777"), 778);
    assert_int_equal(enpu_graph_find_tensor(g, "nope"), -1);
    enpu_graph_free(g);
}

/* conv (SAME_UPPER, stride 2) -> relu -> reshape(0,-1) declared out of order. */
static void test_toposort_and_shapes(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    enpu_err err = {0};
    int64_t xd[] = {1, 3, 7, 8}, wd[] = {4, 3, 3, 3}, sd[] = {2};
    int x = tensor(g, "x", 4, xd);
    int w = const_f32(g, "w", 4, wd);
    int c = tensor(g, "c", -1, NULL), r = tensor(g, "r", -1, NULL), y = tensor(g, "y", -1, NULL);
    int s = enpu_graph_add_tensor(g, "s", ENPU_DT_INT64, 1, sd, &err);
    int64_t *sv = malloc(16);
    sv[0] = 0;
    sv[1] = -1;
    enpu_tensor_set_data(&g->tensors[s], sv);
    int in_reshape[] = {r, s}, in_relu[] = {c}, in_conv[] = {x, w};
    node(g, "reshape", ENPU_OP_RESHAPE, 2, in_reshape, y);
    node(g, "relu", ENPU_OP_RELU, 1, in_relu, r);
    int cn = node(g, "conv", ENPU_OP_CONV, 2, in_conv, c);
    g->nodes[cn].attr.conv.w.stride[0] = g->nodes[cn].attr.conv.w.stride[1] = 2;
    g->nodes[cn].attr.conv.w.auto_pad = ENPU_PAD_SAME_UPPER;
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    /* Before sorting the reshape reads a tensor nobody produced yet. */
    assert_int_equal(enpu_graph_validate(g, &err), ENPU_E_INVALID);
    enpu_err_clear(&err);
    assert_int_equal(enpu_graph_toposort(g, &err), 0);
    assert_string_equal(g->nodes[0].name, "conv");
    assert_string_equal(g->nodes[1].name, "relu");
    assert_string_equal(g->nodes[2].name, "reshape");
    assert_int_equal(g->tensors[y].producer, 2);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    const enpu_tensor *ct = &g->tensors[c];
    assert_int_equal(ct->rank, 4);
    assert_int_equal(ct->dims[1], 4);
    assert_int_equal(ct->dims[2], 4); /* ceil(7/2) */
    assert_int_equal(ct->dims[3], 4); /* ceil(8/2) */
    const enpu_window *win = &g->nodes[0].attr.conv.w;
    /* H: total pad (4-1)*2+3-7 = 2 -> 1,1; W: (4-1)*2+3-8 = 1 -> 0 before, 1 after */
    assert_int_equal(win->pads[0], 1);
    assert_int_equal(win->pads[2], 1);
    assert_int_equal(win->pads[1], 0);
    assert_int_equal(win->pads[3], 1);
    assert_int_equal(win->auto_pad, ENPU_PAD_NOTSET);
    assert_int_equal(g->tensors[y].rank, 2);
    assert_int_equal(g->tensors[y].dims[0], 1);
    assert_int_equal(g->tensors[y].dims[1], 64);
    assert_int_equal(enpu_graph_validate(g, &err), 0);
    assert_int_equal(enpu_node_macs(g, &g->nodes[0]), 4 * 4 * 4 * 27);
    enpu_graph_free(g);
}

static void test_cycle(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    enpu_err err = {0};
    int64_t d[] = {1, 4};
    int x = tensor(g, "x", 2, d), a = tensor(g, "a", -1, NULL), b = tensor(g, "b", -1, NULL);
    int in_a[] = {x, b}, in_b[] = {a};
    node(g, "first", ENPU_OP_ADD, 2, in_a, a);
    node(g, "second", ENPU_OP_RELU, 1, in_b, b);
    enpu_graph_add_input(g, x, &err);
    enpu_graph_add_output(g, b, &err);
    assert_int_equal(enpu_graph_toposort(g, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "cycle"));
    assert_non_null(strstr(err.msg, "'first'"));
    enpu_graph_free(g);
}

static void test_dangling_and_double_producer(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    enpu_err err = {0};
    int64_t d[] = {2, 2};
    int x = tensor(g, "x", 2, d), ghost = tensor(g, "ghost", 2, d), y = tensor(g, "y", -1, NULL);
    int in[] = {x, ghost};
    node(g, "add", ENPU_OP_ADD, 2, in, y);
    enpu_graph_add_input(g, x, &err);
    enpu_graph_add_output(g, y, &err);
    assert_int_equal(enpu_graph_toposort(g, &err), 0);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    assert_int_equal(enpu_graph_validate(g, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "node 'add'"));
    assert_non_null(strstr(err.msg, "'ghost'"));
    enpu_err_clear(&err);
    int in2[] = {x};
    int out = y;
    assert_int_equal(enpu_graph_add_node(g, "again", ENPU_OP_RELU, 1, in2, 1, &out, &err),
                     ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "'add'"));
    assert_non_null(strstr(err.msg, "'again'"));
    enpu_graph_free(g);
}

static void test_shape_errors_name_node(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    enpu_err err = {0};
    int64_t a[] = {2, 3}, b[] = {4, 3};
    int x = tensor(g, "x", 2, a), z = tensor(g, "z", 2, b), y = tensor(g, "y", -1, NULL);
    int in[] = {x, z};
    node(g, "badadd", ENPU_OP_ADD, 2, in, y);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "'badadd'"));
    assert_non_null(strstr(err.msg, "broadcast"));
    enpu_graph_free(g);
}

static void test_pool_ceil_and_broadcast(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    enpu_err err = {0};
    int64_t xd[] = {1, 2, 5, 5}, bd[] = {2, 1, 1};
    int x = tensor(g, "x", 4, xd), p = tensor(g, "p", -1, NULL);
    int bias = const_f32(g, "b", 3, bd), y = tensor(g, "y", -1, NULL);
    int in_p[] = {x}, in_a[] = {p, bias};
    int pn = node(g, "pool", ENPU_OP_MAXPOOL, 1, in_p, p);
    enpu_pool_attr *pa = &g->nodes[pn].attr.pool;
    pa->w.kernel[0] = pa->w.kernel[1] = 2;
    pa->w.stride[0] = pa->w.stride[1] = 2;
    pa->ceil_mode = true;
    node(g, "add", ENPU_OP_ADD, 2, in_a, y);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    assert_int_equal(g->tensors[p].dims[2], 3); /* ceil((5-2)/2)+1 */
    assert_int_equal(g->tensors[y].rank, 4);
    assert_int_equal(g->tensors[y].dims[1], 2);
    assert_int_equal(g->tensors[y].dims[3], 3);
    enpu_graph_free(g);
}

/* A tensor whose dims are another tensor's, added when the tensor array is
 * full and moves (the quantizer's BN folding does this: the graph fuzzer
 * found the read after free under ASan). */
static void test_add_tensor_dims_from_graph(void **state) {
    (void)state;
    enpu_graph *g = enpu_graph_new("g");
    int64_t d[4] = {7, 3, 5, 2};
    char nm[16];
    tensor(g, "t0", 4, d);
    for (int i = 1; g->n_tensors < g->cap_tensors; i++) {
        snprintf(nm, sizeof nm, "t%d", i);
        tensor(g, nm, 1, d);
    }
    int t = tensor(g, "copy", g->tensors[0].rank, g->tensors[0].dims);
    assert_int_equal(g->tensors[t].rank, 4);
    assert_memory_equal(g->tensors[t].dims, d, sizeof d);
    enpu_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numel_limits),
        cmocka_unit_test(test_duplicate_tensor),
        cmocka_unit_test(test_toposort_and_shapes),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_dangling_and_double_producer),
        cmocka_unit_test(test_shape_errors_name_node),
        cmocka_unit_test(test_pool_ceil_and_broadcast),
        cmocka_unit_test(test_add_tensor_dims_from_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
