/* .qjson save/load: a quantized graph with every kind of node survives
 * save -> load with identical golden values on every tensor, saving again
 * gives the same bytes, and corrupted files are rejected with the field
 * named. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "testutil.h"

typedef struct rng {
    uint64_t s;
} rng;
static double nrand(rng *r) {
    double u[2];
    for (int i = 0; i < 2; i++) {
        uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        u[i] = ((double)((z ^ (z >> 31)) >> 11) + 1) / 9007199254740993.0;
    }
    return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    assert_true(t >= 0);
    return t;
}

static int rconst(enpu_graph *g, const char *name, int rank, const int64_t *dims, rng *r,
                  double sd) {
    int t = tensor(g, name, rank, dims);
    int64_t n = enpu_tensor_numel(&g->tensors[t]);
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) v[i] = (float)(sd * nrand(r));
    enpu_tensor_set_data(&g->tensors[t], v);
    return t;
}

static int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in) {
    enpu_err err = {0};
    char o[64];
    snprintf(o, sizeof o, "%s_out", name);
    int out = tensor(g, o, -1, NULL);
    int k = enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err);
    assert_true(k >= 0);
    return out;
}

static enpu_node *last(enpu_graph *g) { return &g->nodes[g->n_nodes - 1]; }

/* conv+relu, maxpool, sigmoid table, mul, add, transpose, concat (forced and
 * rescaled inputs), pad, avgpool, gemm, softmax (host, float output). */
static enpu_graph *all_kinds(rng *r) {
    enpu_graph *g = enpu_graph_new("all");
    enpu_err err = {0};
    int64_t xd[] = {1, 4, 6, 6}, wd[] = {5, 4, 3, 3}, bd[] = {5}, w2[] = {4, 4, 1, 1};
    int x = tensor(g, "x", 4, xd);
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    int in3[3] = {x, rconst(g, "w", 4, wd, r, 0.3), rconst(g, "b", 1, bd, r, 0.2)};
    int c = node(g, "conv", ENPU_OP_CONV, 3, in3);
    for (int i = 0; i < 4; i++) last(g)->attr.conv.w.pads[i] = 1;
    int rl = node(g, "relu", ENPU_OP_RELU, 1, &c);
    int mp = node(g, "mp", ENPU_OP_MAXPOOL, 1, &rl);
    enpu_pool_attr *pa = &last(g)->attr.pool;
    pa->w.kernel[0] = pa->w.kernel[1] = 2;
    pa->w.stride[0] = pa->w.stride[1] = 2;
    int sg = node(g, "sig", ENPU_OP_SIGMOID, 1, &mp);
    int mi[2] = {mp, sg};
    int ml = node(g, "mul", ENPU_OP_MUL, 2, mi);
    int ai[2] = {ml, mp};
    int ad = node(g, "add", ENPU_OP_ADD, 2, ai);
    int tr = node(g, "tr", ENPU_OP_TRANSPOSE, 1, &ad);
    last(g)->attr.shape.n_axes = 4;
    int perm[4] = {0, 1, 3, 2};
    memcpy(last(g)->attr.shape.axes, perm, sizeof perm);
    int pin[2] = {x, rconst(g, "w2", 4, w2, r, 0.5)};
    int c2 = node(g, "conv2", ENPU_OP_CONV, 2, pin);
    last(g)->attr.conv.w.stride[0] = last(g)->attr.conv.w.stride[1] = 2;
    int ci[3] = {tr, c2, sg};
    int cat = node(g, "cat", ENPU_OP_CONCAT, 3, ci);
    last(g)->attr.shape.axis = 1;
    int pd = node(g, "pad", ENPU_OP_PAD, 1, &cat);
    last(g)->attr.pad.n_pads = 8;
    int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
    memcpy(last(g)->attr.pad.pads, pads, sizeof pads);
    int gap = node(g, "gap", ENPU_OP_GLOBAL_AVGPOOL, 1, &pd);
    int fl = node(g, "flat", ENPU_OP_FLATTEN, 1, &gap);
    last(g)->attr.shape.axis = 1;
    int64_t gw[] = {14, 3};
    int gi[2] = {fl, rconst(g, "gw", 2, gw, r, 0.4)};
    int mm = node(g, "fc", ENPU_OP_MATMUL, 2, gi);
    int sm = node(g, "sm", ENPU_OP_SOFTMAX, 1, &mm);
    last(g)->attr.shape.axis = 1;
    assert_int_equal(enpu_graph_add_output(g, sm, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) ||
        enpu_graph_validate(g, &err))
        fail_msg("%s", err.msg);
    return g;
}

static enpu_buf *samples(const enpu_graph *g, int n, rng *r) {
    enpu_err err = {0};
    enpu_buf *b = calloc((size_t)n, sizeof *b);
    for (int i = 0; i < n; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[0]];
        assert_int_equal(enpu_buf_alloc(&b[i], ENPU_DT_FLOAT32, t->rank, t->dims, &err), 0);
        for (int64_t k = 0; k < enpu_buf_numel(&b[i]); k++) ((float *)b[i].data)[k] = (float)nrand(r);
    }
    return b;
}

/* Every tensor of a and b (same names) has identical golden values. */
static void same_golden(const enpu_graph *a, const enpu_graph *b, const enpu_buf *in, int n) {
    enpu_err err = {0};
    enpu_gexec *ga, *gb;
    if (enpu_gexec_new(a, &ga, &err) || enpu_gexec_new(b, &gb, &err)) fail_msg("%s", err.msg);
    assert_int_equal(a->n_tensors, b->n_tensors);
    for (int s = 0; s < n; s++) {
        assert_int_equal(enpu_gexec_run(ga, &in[s], &err), 0);
        assert_int_equal(enpu_gexec_run(gb, &in[s], &err), 0);
        for (int t = 0; t < a->n_tensors; t++) {
            int tb = enpu_graph_find_tensor(b, a->tensors[t].name);
            assert_true(tb >= 0);
            const int8_t *va = enpu_gexec_value_i8(ga, t), *vb = enpu_gexec_value_i8(gb, tb);
            assert_true((va == NULL) == (vb == NULL));
            if (va) assert_memory_equal(va, vb, (size_t)enpu_tensor_numel(&a->tensors[t]));
        }
        enpu_buf oa, ob;
        assert_int_equal(enpu_gexec_output(ga, 0, &oa, &err), 0);
        assert_int_equal(enpu_gexec_output(gb, 0, &ob, &err), 0);
        assert_memory_equal(oa.data, ob.data, (size_t)enpu_buf_numel(&oa) * sizeof(float));
        enpu_buf_free(&oa);
        enpu_buf_free(&ob);
    }
    enpu_gexec_free(ga);
    enpu_gexec_free(gb);
}

static char *slurp(const char *path, size_t *n) {
    uint8_t *d;
    enpu_err err = {0};
    if (enpu_file_read(path, 1u << 30, &d, n, &err)) fail_msg("%s", err.msg);
    return (char *)d;
}

static char tmpdir[64];
static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/enpu_qio_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void roundtrip(const enpu_graph *qg, const enpu_buf *in, int n, const char *name) {
    enpu_err err = {0};
    char p1[128], p2[128];
    snprintf(p1, sizeof p1, "%s/%s.qjson", tmpdir, name);
    snprintf(p2, sizeof p2, "%s/%s_again.qjson", tmpdir, name);
    if (enpu_qgraph_save(p1, qg, &err)) fail_msg("%s", err.msg);
    enpu_graph *lg = NULL;
    if (enpu_qgraph_load(p1, &lg, &err)) fail_msg("%s", err.msg);
    same_golden(qg, lg, in, n);
    if (enpu_qgraph_save(p2, lg, &err)) fail_msg("%s", err.msg);
    size_t n1, n2;
    char *a = slurp(p1, &n1), *b = slurp(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1); /* saving is a fixed point */
    printf("%s: %d nodes, %zu bytes of .qjson, round trip identical\n", name, qg->n_nodes, n1);
    free(a);
    free(b);
    enpu_graph_free(lg);
}

static enpu_graph *quantized_all(rng *r, enpu_buf **cal) {
    enpu_graph *g = all_kinds(r);
    *cal = samples(g, 6, r);
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    enpu_graph *qg;
    enpu_err err = {0};
    if (enpu_quantize_graph(g, *cal, 6, &o, &qg, NULL, &err)) fail_msg("%s", err.msg);
    enpu_graph_free(g);
    return qg;
}

static void test_roundtrip_all_kinds(void **state) {
    (void)state;
    rng r = {5};
    enpu_buf *cal;
    enpu_graph *qg = quantized_all(&r, &cal);
    bool kinds[ENPU_Q_HOST + 1] = {false};
    for (int i = 0; i < qg->n_nodes; i++) kinds[qg->nodes[i].q->kind] = true;
    for (int k = ENPU_Q_CONV; k <= ENPU_Q_HOST; k++)
        if (!kinds[k]) fail_msg("kind %s missing from the test graph", enpu_qkind_name((enpu_qkind)k));
    roundtrip(qg, cal, 6, "all_kinds");
    enpu_calib_free(cal, 6);
    enpu_graph_free(qg);
}

static void test_roundtrip_kws(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_graph *g = NULL, *qg = NULL;
    if (enpu_onnx_load("models/kws_cnn.onnx", &g, &err)) fail_msg("%s", err.msg);
    enpu_buf *cal;
    int n;
    if (enpu_calib_load(g, "models/kws_cnn/calib", &cal, &n, &err)) fail_msg("%s", err.msg);
    if (enpu_quantize_graph(g, cal, n, NULL, &qg, NULL, &err)) fail_msg("%s", err.msg);
    roundtrip(qg, cal, n < 8 ? n : 8, "kws_cnn");
    enpu_calib_free(cal, n);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

/* --- corruption --------------------------------------------------------------- */

static json_t *find_by_name(json_t *root, const char *arr, const char *name) {
    json_t *a = json_object_get(root, arr), *v;
    size_t i;
    json_array_foreach(a, i, v) if (!strcmp(json_string_value(json_object_get(v, "name")), name)) return v;
    fail_msg("no %s entry '%s'", arr, name);
    return NULL;
}

typedef void (*mutator)(json_t *root);

static void expect_reject(const char *text, mutator m, enpu_status code, const char *field) {
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    m(root);
    char *s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    enpu_graph *g = NULL;
    enpu_err err = {0};
    int rc = enpu_qgraph_parse(s, strlen(s), "bad.qjson", &g, &err);
    free(s);
    if (rc != (int)code || !strstr(err.msg, field) || !strstr(err.msg, "bad.qjson"))
        fail_msg("expected %s naming '%s', got %s: %s", enpu_status_name(code), field,
                 enpu_status_name((enpu_status)rc), err.msg);
    printf("rejected [%s]: %s\n", enpu_status_name(code), err.msg);
    assert_null(g);
}

static void m_format(json_t *r) { json_object_set_new(r, "format", json_string("onnx")); }
static void m_version(json_t *r) { json_object_set_new(r, "version", json_integer(2)); }
static void m_unknown(json_t *r) {
    json_object_set_new(find_by_name(r, "nodes", "conv"), "stride", json_integer(1));
}
static void m_dtype(json_t *r) {
    json_object_set_new(find_by_name(r, "tensors", "x"), "dtype", json_string("int9"));
}
static void m_dims(json_t *r) {
    json_array_set_new(json_object_get(find_by_name(r, "tensors", "x"), "dims"), 1, json_integer(-4));
}
static void m_scale(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "tensors", "x"), "quant");
    json_array_set_new(json_object_get(q, "scale"), 0, json_real(-0.5));
}
static void m_zp_count(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "tensors", "x"), "quant");
    json_array_append_new(json_object_get(q, "zero_point"), json_integer(0));
}
static void m_shift(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "nodes", "conv"), "q");
    json_array_set_new(json_object_get(q, "S"), 2, json_integer(70));
}
static void m_mult(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "nodes", "conv"), "q");
    json_array_set_new(json_object_get(q, "M"), 0, json_integer(1ll << 32));
}
static void m_m_count(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "nodes", "conv"), "q");
    json_array_remove(json_object_get(q, "M"), 0);
}
static void m_zp_out(json_t *r) {
    json_object_set_new(json_object_get(find_by_name(r, "nodes", "add"), "q"), "zp_out",
                        json_integer(200));
}
static void m_kind(json_t *r) {
    json_object_set_new(json_object_get(find_by_name(r, "nodes", "mp"), "q"), "kind",
                        json_string("pool"));
}
static void m_op(json_t *r) {
    json_object_set_new(find_by_name(r, "nodes", "mp"), "op", json_string("MaxPool3D"));
}
static void m_input_name(json_t *r) {
    json_array_set_new(json_object_get(find_by_name(r, "nodes", "mp"), "inputs"), 0,
                       json_string("nowhere"));
}
static void m_b64_char(json_t *r) {
    json_t *t = find_by_name(r, "tensors", "w");
    char *d = strdup(json_string_value(json_object_get(t, "data")));
    d[3] = '!';
    json_object_set_new(t, "data", json_string(d));
    free(d);
}
static void m_b64_len(json_t *r) {
    json_t *t = find_by_name(r, "tensors", "w");
    char *d = strdup(json_string_value(json_object_get(t, "data")));
    d[strlen(d) - 4] = 0;
    json_object_set_new(t, "data", json_string(d));
    free(d);
}
static void m_table(json_t *r) {
    json_object_del(json_object_get(find_by_name(r, "nodes", "sig"), "q"), "table");
}
static void m_table_seg(json_t *r) {
    json_t *t = json_object_get(json_object_get(find_by_name(r, "nodes", "sig"), "q"), "table");
    json_object_set_new(t, "segments", json_integer(3));
}
static void m_attr(json_t *r) {
    json_t *a = json_object_get(find_by_name(r, "nodes", "conv"), "attr");
    json_array_set_new(json_object_get(a, "kernel"), 0, json_integer(0));
}
static void m_group(json_t *r) {
    json_object_set_new(json_object_get(find_by_name(r, "nodes", "conv"), "attr"), "group",
                        json_integer(3));
}
/* Semantics (valid fields, wrong graph): caught by enpu_qgraph_check. */
static void m_move_scale(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "tensors", "tr_out"), "quant");
    json_array_set_new(json_object_get(q, "scale"), 0, json_real(0.123));
}
static void m_acc(json_t *r) {
    json_t *q = json_object_get(find_by_name(r, "nodes", "add"), "q");
    json_array_set_new(json_object_get(q, "A"), 0, json_integer(2000000000));
}
static void m_missing_output(json_t *r) {
    json_array_set_new(json_object_get(r, "outputs"), 0, json_string("sm_nothing"));
}
static void m_w_size(json_t *r) {
    /* q.w given explicitly but too short for 5 channels of 36 weights */
    json_object_set_new(json_object_get(find_by_name(r, "nodes", "conv"), "q"), "w",
                        json_string("AAAA"));
}

static void test_corrupt(void **state) {
    (void)state;
    rng r = {5};
    enpu_buf *cal;
    enpu_graph *qg = quantized_all(&r, &cal);
    enpu_err err = {0};
    char path[128];
    snprintf(path, sizeof path, "%s/good.qjson", tmpdir);
    assert_int_equal(enpu_qgraph_save(path, qg, &err), 0);
    size_t n;
    char *text = slurp(path, &n);
    expect_reject(text, m_format, ENPU_E_FORMAT, "format");
    expect_reject(text, m_version, ENPU_E_FORMAT, "version");
    expect_reject(text, m_unknown, ENPU_E_FORMAT, "nodes[0] 'conv': stride: unknown field");
    expect_reject(text, m_dtype, ENPU_E_FORMAT, "'x': dtype");
    expect_reject(text, m_dims, ENPU_E_FORMAT, "'x': dims[1]");
    expect_reject(text, m_scale, ENPU_E_FORMAT, "'x': quant.scale[0]");
    expect_reject(text, m_zp_count, ENPU_E_FORMAT, "quant.scale/zero_point");
    expect_reject(text, m_shift, ENPU_E_FORMAT, "'conv': q.S[2]: 70 is outside 0..63");
    expect_reject(text, m_mult, ENPU_E_FORMAT, "'conv': q.M[0]");
    expect_reject(text, m_m_count, ENPU_E_FORMAT, "'conv': q.M");
    expect_reject(text, m_zp_out, ENPU_E_FORMAT, "'add': q.zp_out");
    expect_reject(text, m_kind, ENPU_E_FORMAT, "'mp': q.kind");
    expect_reject(text, m_op, ENPU_E_FORMAT, "'mp': op");
    expect_reject(text, m_input_name, ENPU_E_INVALID, "'mp': inputs[0]: no tensor named 'nowhere'");
    expect_reject(text, m_b64_char, ENPU_E_FORMAT, "'w': data: not valid base64");
    expect_reject(text, m_b64_len, ENPU_E_FORMAT, "'w': data");
    expect_reject(text, m_table, ENPU_E_FORMAT, "'sig': q.table");
    expect_reject(text, m_table_seg, ENPU_E_FORMAT, "'sig': q.table.a: 16 entries, 3 expected");
    expect_reject(text, m_attr, ENPU_E_FORMAT, "'conv': attr.kernel[0]");
    expect_reject(text, m_group, ENPU_E_INVALID, "'conv'");
    expect_reject(text, m_move_scale, ENPU_E_INVALID, "node 'tr'");
    expect_reject(text, m_acc, ENPU_E_INVALID, "node 'add': accumulator");
    expect_reject(text, m_missing_output, ENPU_E_INVALID, "outputs[0]");
    expect_reject(text, m_w_size, ENPU_E_INVALID, "q.w");
    /* not JSON at all, truncated, empty, duplicate keys */
    enpu_graph *g = NULL;
    assert_int_equal(enpu_qgraph_parse(text, n / 2, "half.qjson", &g, &err), ENPU_E_FORMAT);
    assert_non_null(strstr(err.msg, "half.qjson"));
    enpu_err_clear(&err);
    assert_int_equal(enpu_qgraph_parse("", 0, "empty.qjson", &g, &err), ENPU_E_FORMAT);
    enpu_err_clear(&err);
    const char *dup = "{\"format\": \"easynpu-qgraph\", \"format\": \"x\"}";
    assert_int_equal(enpu_qgraph_parse(dup, strlen(dup), "dup.qjson", &g, &err), ENPU_E_FORMAT);
    enpu_err_clear(&err);
    assert_int_equal(enpu_qgraph_load("/nonexistent/x.qjson", &g, &err), ENPU_E_IO);
    assert_null(g);
    /* 2000 random mutations (a byte replaced, a span deleted, a digit changed):
     * each either loads into a graph the checker accepts or fails with an
     * error; never a crash (this runs under ASan/UBSan with make test
     * SANITIZE=1). */
    uint64_t st = 42;
    int loaded = 0, refused = 0;
    char *mut = malloc(n + 1);
    static const char pool[] = "0123456789-\"{}[],:.eAZaz=+/ ";
    for (int it = 0; it < 2000; it++) {
        memcpy(mut, text, n);
        size_t len = n;
        for (int k = 0; k < 1 + it % 3; k++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            size_t pos = (size_t)(st >> 33) % len;
            int what = (int)((st >> 20) % 3);
            if (what == 0) {
                mut[pos] = pool[(st >> 40) % (sizeof pool - 1)];
            } else if (what == 1 && len > 10) {
                size_t del = 1 + (st >> 45) % 8;
                if (pos + del > len) del = len - pos;
                memmove(mut + pos, mut + pos + del, len - pos - del);
                len -= del;
            } else if (mut[pos] >= '0' && mut[pos] <= '9') {
                mut[pos] = (char)('0' + (mut[pos] - '0' + 1 + (st >> 50) % 9) % 10);
            }
        }
        enpu_err e = {0};
        enpu_graph *mg = NULL;
        if (enpu_qgraph_parse(mut, len, "mut.qjson", &mg, &e) == 0) {
            enpu_gexec *gx = NULL;
            if (enpu_gexec_new(mg, &gx, &e)) fail_msg("loaded but not runnable: %s", e.msg);
            if (enpu_gexec_run(gx, cal, &e) == 0) loaded++;
            enpu_gexec_free(gx);
            enpu_graph_free(mg);
        } else {
            assert_null(mg);
            assert_true(e.msg[0] != 0);
            refused++;
        }
    }
    free(mut);
    printf("mutations: %d loaded and ran, %d refused with an error\n", loaded, refused);
    /* a good file loads */
    assert_int_equal(enpu_qgraph_parse(text, n, "good.qjson", &g, &err), 0);
    enpu_graph_free(g);
    free(text);
    enpu_calib_free(cal, 6);
    enpu_graph_free(qg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_kinds),
        cmocka_unit_test(test_roundtrip_kws),
        cmocka_unit_test(test_corrupt),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
