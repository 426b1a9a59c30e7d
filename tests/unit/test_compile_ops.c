/* The compiler on every op: tiny float graphs (seeded shapes and weights),
 * quantized with the fallback calibration, compiled for the default arch.
 * For each: the program validates and survives a write/read round trip, the
 * lowering made the expected decisions (opcode, fusion, remap / copy / host
 * for moves, host ops), and -- the real check -- every instruction's output,
 * computed by a small independent interpreter of the ISA as docs/isa.md
 * defines it (weights in their documented layouts, padding with zp_in, the
 * table header, concat at store, fused chains), equals the golden
 * reference's tensor of the name the program gives, bit for bit.  The cycle
 * simulator runs every program too, and the cost model must equal its
 * cycles exactly, instruction by instruction, activity by activity, on
 * every chain it models: all of them but a copy layer that does not keep
 * whole words (test_copy_layer). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "easynpu/compiler.h"
#include "easynpu/numerics.h"
#include "easynpu/quant.h"
#include "report/compile_report.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

/* ---- random and graph building ------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;
static uint64_t next(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double urand(rng *r) { return (double)(next(r) >> 11) / 9007199254740992.0; }
static double nrand(rng *r) {
    double u = urand(r) + 1e-12, v = urand(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static rng R;

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    if (t < 0) fail_msg("%s", err.msg);
    return t;
}
static int input(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = tensor(g, name, rank, dims);
    assert_int_equal(enpu_graph_add_input(g, t, &err), 0);
    return t;
}
static int rconst(enpu_graph *g, const char *name, int rank, const int64_t *dims, double sd, double mean) {
    int t = tensor(g, name, rank, dims);
    int64_t n = enpu_tensor_numel(&g->tensors[t]);
    float *v = malloc((size_t)n * sizeof(float) + 4);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(mean + sd * nrand(&R));
    enpu_tensor_set_data(&g->tensors[t], v);
    return t;
}
static int iconst(enpu_graph *g, const char *name, int n, const int64_t *vals) {
    enpu_err err = {0};
    int64_t d = n;
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_INT64, 1, &d, &err);
    if (t < 0) fail_msg("%s", err.msg);
    int64_t *v = malloc((size_t)n * sizeof *v + 8);
    memcpy(v, vals, (size_t)n * sizeof *v);
    enpu_tensor_set_data(&g->tensors[t], v);
    return t;
}
static int nd(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in) {
    enpu_err err = {0};
    char o[128];
    snprintf(o, sizeof o, "%s_out", name);
    int out = tensor(g, o, -1, NULL);
    int k = enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err);
    if (k < 0) fail_msg("%s", err.msg);
    return out;
}
static enpu_node *last_node(enpu_graph *g) { return &g->nodes[g->n_nodes - 1]; }

static int conv(enpu_graph *g, const char *name, int x, int ci, int co, int k, int s, int p, int d,
                int group) {
    int64_t wd[4] = {co, ci / group, k, k}, bd[1] = {co};
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s_w", name), snprintf(bn, sizeof bn, "%s_b", name);
    int in[3] = {x, rconst(g, wn, 4, wd, 0.3, 0), rconst(g, bn, 1, bd, 0.1, 0)};
    int y = nd(g, name, ENPU_OP_CONV, 3, in);
    enpu_conv_attr *a = &last_node(g)->attr.conv;
    a->w.kernel[0] = a->w.kernel[1] = k;
    a->w.stride[0] = a->w.stride[1] = s;
    a->w.dilation[0] = a->w.dilation[1] = d;
    for (int i = 0; i < 4; i++) a->w.pads[i] = p;
    a->group = group;
    return y;
}
static int unary(enpu_graph *g, const char *name, enpu_op op, int x) {
    int in[1] = {x};
    int y = nd(g, name, op, 1, in);
    if (op == ENPU_OP_RELU) last_node(g)->attr.act.min = 0, last_node(g)->attr.act.max = INFINITY;
    return y;
}
static int binary(enpu_graph *g, const char *name, enpu_op op, int a, int b) {
    int in[2] = {a, b};
    return nd(g, name, op, 2, in);
}
static int pool(enpu_graph *g, const char *name, enpu_op op, int x, int k, int s, int p) {
    int in[1] = {x};
    int y = nd(g, name, op, 1, in);
    enpu_pool_attr *a = &last_node(g)->attr.pool;
    a->w.kernel[0] = a->w.kernel[1] = k;
    a->w.stride[0] = a->w.stride[1] = s;
    a->w.dilation[0] = a->w.dilation[1] = 1;
    for (int i = 0; i < 4; i++) a->w.pads[i] = p;
    a->count_include_pad = true;
    return y;
}
static int gemm(enpu_graph *g, const char *name, int x, int k, int n) {
    int64_t wd[2] = {n, k}, bd[1] = {n};
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s_w", name), snprintf(bn, sizeof bn, "%s_b", name);
    int in[3] = {x, rconst(g, wn, 2, wd, 0.1, 0), rconst(g, bn, 1, bd, 0.1, 0)};
    int y = nd(g, name, ENPU_OP_GEMM, 3, in);
    enpu_gemm_attr *a = &last_node(g)->attr.gemm;
    a->alpha = a->beta = 1, a->trans_b = true;
    return y;
}
static int bnorm(enpu_graph *g, const char *name, int x, int c) {
    int64_t d[1] = {c};
    char n1[64], n2[64], n3[64], n4[64];
    snprintf(n1, 64, "%s_s", name), snprintf(n2, 64, "%s_b", name), snprintf(n3, 64, "%s_m", name),
        snprintf(n4, 64, "%s_v", name);
    int in[5] = {x, rconst(g, n1, 1, d, 0.3, 1), rconst(g, n2, 1, d, 0.2, 0), rconst(g, n3, 1, d, 0.2, 0),
                 rconst(g, n4, 1, d, 0.1, 1)};
    int y = nd(g, name, ENPU_OP_BATCHNORM, 5, in);
    last_node(g)->attr.bn.epsilon = 1e-5f;
    return y;
}

#include "isa_interp.h"

/* ---- the harness ------------------------------------------------------------------ */

typedef struct result {
    enpu_program prog;
    enpu_compile_report rep;
    enpu_graph *qg;
    int checked;
    int outside; /* instructions outside the cost model (enpu_cost_exact) */
} result;

/* Quantizes g (freed here), compiles, round-trips the file, interprets. */
static bool no_fuse;

static void compile_check(enpu_graph *g, int y, result *r, const char *arch) {
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) || enpu_graph_validate(g, &err))
        fail_msg("%s", err.msg);
    /* one definition of MACs: the float graph's count is the program's */
    int64_t macs = 0;
    for (int i = 0; i < g->n_nodes; i++) macs += enpu_node_macs(g, &g->nodes[i]);
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.quiet = true;
    enpu_qreport qr;
    memset(&qr, 0, sizeof qr);
    if (enpu_quantize_graph(g, NULL, 0, &qo, &r->qg, &qr, &err)) fail_msg("quantize: %s", err.msg);
    enpu_graph_free(g);
    assert_int_equal(qr.total_macs, macs);
    enpu_qreport_free(&qr);
    enpu_arch a;
    assert_int_equal(enpu_arch_preset(arch, &a, &err), 0);
    /* the lowering and fusion decisions on chip; the off-chip path (DMA of
     * the inputs and outputs, row strips) has its own tests */
    a.dram_bytes = 0;
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    co.no_fuse = no_fuse;
    if (enpu_compile(r->qg, &a, &co, &r->prog, &r->rep, &err)) fail_msg("compile: %s", err.msg);
    if (r->rep.total_macs + r->rep.host_macs != macs)
        fail_msg("MACs: graph %lld, program %lld + host %lld", (long long)macs,
                 (long long)r->rep.total_macs, (long long)r->rep.host_macs);
    /* ENPU_TEST_DUMP=DIR keeps the programs and graphs (DIR/N.enpu, N.qjson)
     * for a look with the simulator */
    const char *dump = getenv("ENPU_TEST_DUMP");
    if (dump) {
        static int seq;
        char f[512];
        snprintf(f, sizeof f, "%s/%d.enpu", dump, seq);
        assert_int_equal(enpu_program_write(f, &r->prog, &err), 0);
        snprintf(f, sizeof f, "%s/%d.qjson", dump, seq++);
        assert_int_equal(enpu_qgraph_save(f, r->qg, &err), 0);
    }
    /* file round trip */
    char path[] = "/tmp/enpu_test_compile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(enpu_program_write(path, &r->prog, &err), 0);
    enpu_program q;
    if (enpu_program_read(path, &a, &q, &err)) fail_msg("read back: %s", err.msg);
    unlink(path);
    assert_int_equal(q.n_instr, r->prog.n_instr);
    for (int i = 0; i < q.n_instr; i++) assert_memory_equal(&q.instr[i], &r->prog.instr[i], sizeof q.instr[i]);
    /* golden on seeded inputs, then the interpreter */
    enpu_gexec *ex;
    if (enpu_gexec_new(r->qg, &ex, &err)) fail_msg("gexec: %s", err.msg);
    enpu_buf *in = calloc((size_t)r->qg->n_inputs, sizeof *in);
    for (int k = 0; k < r->qg->n_inputs; k++) {
        const enpu_tensor *t = &r->qg->tensors[r->qg->inputs[k]];
        assert_int_equal(enpu_buf_alloc(&in[k], ENPU_DT_FLOAT32, t->rank, t->dims, &err), 0);
        float *v = in[k].data;
        for (int64_t e = 0; e < enpu_buf_numel(&in[k]); e++) v[e] = (float)nrand(&R);
    }
    if (enpu_gexec_run(ex, in, &err)) fail_msg("golden: %s", err.msg);
    r->checked = run_check(&q, r->qg, ex);
    /* the cycle simulator on the same inputs: bit-exact with its own replay,
     * and its cycles are the cost model's, every instruction and activity,
     * on every chain the model covers (r->outside counts the others) */
    enpu_sim_opts so = {0};
    so.mode = ENPU_SIM_CYCLE;
    so.check = true;
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    if (enpu_sim_new(&q, &a, &so, &sim, &err)) fail_msg("sim: %s", err.msg);
    if (enpu_sim_run(sim, in, r->qg->n_inputs, &res, &err)) fail_msg("sim: %s", err.msg);
    assert_true(res.bit_exact);
    char what[64];
    snprintf(what, sizeof what, "program of '%s' on %s", q.layers[0].name, arch);
    r->outside = enpu_test_assert_cost_exact(what, &q, &res);
    /* and the fast-forward changes nothing (docs/microarch.md §15) */
    assert_int_equal(enpu_test_assert_ff_equal(what, &q, &a, in, NULL, r->qg->n_inputs, true, NULL, NULL),
                     res.total_cycles);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    for (int k = 0; k < r->qg->n_inputs; k++) enpu_buf_free(&in[k]);
    free(in);
    enpu_gexec_free(ex);
    enpu_program_free(&q);
}

static void result_free(result *r) {
    enpu_program_free(&r->prog);
    enpu_compile_report_free(&r->rep);
    enpu_graph_free(r->qg);
}

static int count_op(const enpu_program *p, int op) {
    int n = 0;
    for (int i = 0; i < p->n_instr; i++) n += p->instr[i].opcode == op;
    return n;
}

static enpu_graph *newg(void) { return enpu_graph_new("t"); }

/* ---- the ops ------------------------------------------------------------------------ */

static void test_conv_variants(void **state) {
    (void)state;
    R.s = 1;
    struct {
        int ci, co, h, w, k, s, p, d, g;
    } cases[] = {
        {1, 28, 14, 17, 3, 1, 0, 1, 1},  {8, 16, 12, 12, 5, 1, 2, 1, 1}, {24, 20, 11, 9, 3, 2, 1, 1, 1},
        {16, 40, 9, 9, 3, 1, 2, 2, 1},   {32, 32, 8, 8, 3, 1, 1, 1, 2},  {6, 12, 8, 8, 3, 1, 1, 1, 3},
        {20, 20, 10, 10, 3, 2, 1, 1, 20}, {3, 8, 20, 20, 7, 2, 3, 1, 1}, {17, 33, 6, 7, 1, 1, 0, 1, 1},
        {4, 300, 3, 3, 1, 1, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enpu_graph *g = newg();
        int64_t d[4] = {1, cases[i].ci, cases[i].h, cases[i].w};
        int x = input(g, "x", 4, d);
        int y = conv(g, "c", x, cases[i].ci, cases[i].co, cases[i].k, cases[i].s, cases[i].p, cases[i].d,
                     cases[i].g);
        result r;
        memset(&r, 0, sizeof r);
        compile_check(g, y, &r, "easynpu");
        assert_int_equal(r.checked, 1);
        int want = cases[i].g == cases[i].ci && cases[i].g == cases[i].co ? ENPU_OPC_DWCONV : -1;
        if (want >= 0) assert_int_equal(r.prog.instr[0].opcode, want);
        else assert_int_equal(enpu_opcode_class(r.prog.instr[0].opcode), ENPU_CLASS_CONV);
        assert_int_equal(r.rep.n_layers, 1);
        result_free(&r);
    }
}

static void test_fc_flatten(void **state) {
    (void)state;
    R.s = 2;
    /* conv -> flatten -> fc -> relu -> fc: the flatten is free */
    enpu_graph *g = newg();
    int64_t d[4] = {1, 3, 9, 8};
    int x = input(g, "x", 4, d);
    int c = conv(g, "c", x, 3, 12, 3, 1, 0, 1, 1);
    int f = unary(g, "flat", ENPU_OP_FLATTEN, c);
    last_node(g)->attr.shape.axis = 1;
    int h = gemm(g, "fc1", f, 12 * 7 * 6, 30);
    int hr = unary(g, "r", ENPU_OP_RELU, h);
    int y = gemm(g, "fc2", hr, 30, 10);
    result r;
    memset(&r, 0, sizeof r);
    compile_check(g, y, &r, "easynpu");
    assert_int_equal(count_op(&r.prog, ENPU_OPC_FC), 2);
    assert_int_equal(count_op(&r.prog, ENPU_OPC_RESHAPE), 0);
    assert_int_equal(r.rep.n_moves, 1);
    assert_int_equal(r.rep.moves[0].kind, ENPU_MOVE_REMAP);
    assert_int_equal(r.checked, 3);
    result_free(&r);
}

static void test_pools_bn(void **state) {
    (void)state;
    R.s = 3;
    enpu_graph *g = newg();
    int64_t d[4] = {1, 20, 13, 11};
    int x = input(g, "x", 4, d);
    int b = bnorm(g, "bn", x, 20); /* standalone: nothing to fold into */
    int m = pool(g, "mp", ENPU_OP_MAXPOOL, b, 3, 2, 1);
    int a = pool(g, "ap", ENPU_OP_AVGPOOL, m, 2, 1, 0);
    int y = unary(g, "gap", ENPU_OP_GLOBAL_AVGPOOL, a);
    result r;
    memset(&r, 0, sizeof r);
    compile_check(g, y, &r, "easynpu");
    assert_int_equal(r.prog.instr[0].opcode, ENPU_OPC_BN);
    assert_int_equal(r.prog.instr[1].opcode, ENPU_OPC_MAXPOOL);
    assert_int_equal(r.prog.instr[2].opcode, ENPU_OPC_AVGPOOL);
    assert_int_equal(r.prog.instr[3].opcode, ENPU_OPC_AVGPOOL);
    for (int i = 0; i < 4; i++) assert_int_equal(r.prog.instr[i].cast_mode, ENPU_CAST_MULTICAST);
    assert_int_equal(r.checked, 4);
    result_free(&r);
}

static void test_fusion(void **state) {
    (void)state;
    R.s = 4;
    /* conv -> sigmoid (table) fused; conv(+act) + shortcut fused as add with
     * the shortcut in the skip DTCM; a longer skip added by a plain add */
    enpu_graph *g = newg();
    int64_t d[4] = {1, 16, 8, 8};
    int x = input(g, "x", 4, d);
    int c0 = conv(g, "c0", x, 16, 16, 3, 1, 1, 1, 1);
    int s0 = unary(g, "sig", ENPU_OP_SIGMOID, c0);           /* fused into c0 */
    int c1 = conv(g, "c1", s0, 16, 16, 3, 1, 1, 1, 1);
    int a1 = binary(g, "add1", ENPU_OP_ADD, c1, s0);          /* shortcut over one layer: fused */
    int c2 = conv(g, "c2", a1, 16, 16, 1, 1, 0, 1, 1);
    int t2 = unary(g, "tanh", ENPU_OP_TANH, c2);
    int c3 = conv(g, "c3", t2, 16, 16, 3, 1, 1, 1, 1);
    int m3 = binary(g, "mul", ENPU_OP_MUL, c3, t2);
    int y = binary(g, "add2", ENPU_OP_ADD, a1, m3);           /* long skip: a1 kept */
    result r;
    memset(&r, 0, sizeof r);
    compile_check(g, y, &r, "easynpu");
    const enpu_program *p = &r.prog;
    /* conv0 + act fused */
    assert_true(p->instr[0].fuse_next);
    assert_int_equal(p->instr[0].fuse_act, ENPU_ACT_TABLE);
    assert_int_equal(p->instr[1].opcode, ENPU_OPC_ACT);
    int fused_add = 0, skip_stores = 0;
    for (int i = 0; i < p->n_instr; i++) {
        if (p->instr[i].opcode == ENPU_OPC_ADD && i > 0 && p->instr[i - 1].fuse_next) fused_add++;
        skip_stores += (int)p->instr[i].store_skip;
    }
    assert_true(fused_add >= 1);
    assert_true(skip_stores >= 2);
    assert_true(r.checked >= 6);
    assert_int_equal(p->n_tables, 2);
    result_free(&r);
    /* conv -> table act -> BN: one chain, activation before bn */
    g = newg();
    x = input(g, "x", 4, d);
    int c = conv(g, "c", x, 16, 24, 3, 1, 1, 1, 1);
    int s = unary(g, "sig", ENPU_OP_SIGMOID, c);
    int bn = bnorm(g, "bn", s, 24);
    memset(&r, 0, sizeof r);
    compile_check(g, bn, &r, "easynpu");
    assert_int_equal(r.prog.n_instr, 4);
    assert_int_equal(r.prog.instr[0].fuse_act, ENPU_ACT_TABLE);
    assert_int_equal(r.prog.instr[0].fuse_bn, 1);
    assert_int_equal(r.prog.instr[0].fuse_order, ENPU_ORDER_ACT_BN);
    assert_int_equal(r.prog.instr[2].opcode, ENPU_OPC_BN);
    assert_non_null(strstr(r.rep.layers[0].fused, "act+bn"));
    assert_int_equal(r.checked, 3);
    result_free(&r);
    /* without fusion: three instructions, the same values */
    g = newg();
    x = input(g, "x", 4, d);
    c = conv(g, "c", x, 16, 24, 3, 1, 1, 1, 1);
    s = unary(g, "sig", ENPU_OP_SIGMOID, c);
    memset(&r, 0, sizeof r);
    no_fuse = true;
    compile_check(g, s, &r, "easynpu");
    no_fuse = false;
    assert_int_equal(r.prog.n_instr, 3);
    assert_int_equal(r.prog.instr[0].fuse_next, 0);
    assert_int_equal(r.checked, 2);
    result_free(&r);
}

static void test_moves_host(void **state) {
    (void)state;
    R.s = 5;
    /* a graph input reshaped (written directly by the host), a channel
     * concat at store, a transpose needing a copy layer, a softmax on the
     * host */
    enpu_graph *g = newg();
    int64_t d[4] = {1, 12, 10, 1};
    int x = input(g, "x", 4, d);
    int64_t shp[4] = {1, 1, 12, 10};
    int xin[2] = {x, iconst(g, "shape", 4, shp)};
    int xr = nd(g, "rs", ENPU_OP_RESHAPE, 2, xin);
    int a = conv(g, "ca", xr, 1, 16, 3, 1, 1, 1, 1);
    int b = conv(g, "cb", xr, 1, 16, 3, 1, 1, 1, 1);
    int cat_in[2] = {a, b};
    int cat = nd(g, "cat", ENPU_OP_CONCAT, 2, cat_in);
    last_node(g)->attr.shape.axis = 1;
    int c = conv(g, "cc", cat, 32, 8, 3, 1, 1, 1, 1);
    int tr = unary(g, "tr", ENPU_OP_TRANSPOSE, c); /* NCHW -> NCWH: a copy layer */
    enpu_shape_attr *sa = &last_node(g)->attr.shape;
    sa->n_axes = 4, sa->axes[0] = 0, sa->axes[1] = 1, sa->axes[2] = 3, sa->axes[3] = 2;
    int e = conv(g, "ce", tr, 8, 8, 1, 1, 0, 1, 1);
    int f = unary(g, "flat", ENPU_OP_FLATTEN, e);
    last_node(g)->attr.shape.axis = 1;
    int h = gemm(g, "fc", f, 8 * 10 * 12, 5);
    int y = unary(g, "sm", ENPU_OP_SOFTMAX, h);
    last_node(g)->attr.shape.axis = 1;
    result r;
    memset(&r, 0, sizeof r);
    compile_check(g, y, &r, "easynpu");
    const enpu_program *p = &r.prog;
    assert_int_equal(count_op(p, ENPU_OPC_SYNC), 1);
    assert_int_equal(count_op(p, ENPU_OPC_RESHAPE), 1);
    assert_int_equal(r.rep.n_hostops, 1);
    assert_non_null(strstr(r.rep.hostops[0], "Softmax"));
    int remap = 0, copy = 0;
    for (int i = 0; i < r.rep.n_moves; i++) remap += r.rep.moves[i].kind == ENPU_MOVE_REMAP;
    for (int i = 0; i < r.rep.n_layers; i++) copy += strcmp(r.rep.layers[i].op, "reshape") == 0;
    assert_int_equal(remap, 4); /* input reshape, concat, transpose (at store), flatten */
    assert_int_equal(copy, 1);
    /* the transpose's copy is fused into the producing conv: reshape at store */
    bool at_store = false;
    for (int i = 0; i < r.rep.n_moves; i++)
        if (!strcmp(r.rep.moves[i].op, "Transpose")) at_store = strstr(r.rep.moves[i].how, "reshape at store") != NULL;
    assert_true(at_store);
    for (int i = 0; i < p->n_instr; i++)
        if (p->instr[i].opcode == ENPU_OPC_RESHAPE) assert_true(i > 0 && p->instr[i - 1].fuse_next);
    /* the concat: the two producers write word 0 and word 1 of 2-word pixels */
    int wpp2 = 0;
    for (int i = 0; i < p->n_instr; i++) wpp2 += p->instr[i].ofmap_wpp == 2;
    assert_int_equal(wpp2, 2);
    assert_int_equal(r.checked, 4); /* cc, the copy, ce, fc (the concat parts have no descriptor) */
    result_free(&r);
}

/* A reduction the host computes (MatMul of two computed tensors) counts its
 * MACs apart: the program's plus the host's are the graph's. */
static void test_host_macs(void **state) {
    (void)state;
    R.s = 9;
    enpu_graph *g = newg();
    int64_t d[4] = {1, 1, 4, 8};
    int x = input(g, "x", 4, d);
    int c = conv(g, "c", x, 1, 2, 3, 1, 1, 1, 1);
    int t = unary(g, "t", ENPU_OP_TRANSPOSE, c);
    enpu_shape_attr *sa = &last_node(g)->attr.shape;
    sa->n_axes = 4, sa->axes[0] = 0, sa->axes[1] = 1, sa->axes[2] = 3, sa->axes[3] = 2;
    int mm_in[2] = {c, t};
    int y = nd(g, "mm", ENPU_OP_MATMUL, 2, mm_in);
    result r;
    memset(&r, 0, sizeof r);
    compile_check(g, y, &r, "easynpu");
    assert_int_equal(r.rep.total_macs, 4 * 8 * 2 * 9); /* the conv */
    assert_int_equal(r.rep.host_macs, 2 * 4 * 4 * 8);  /* [1,2,4,8] x [1,2,8,4] */
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    enpu_compile_report_print(f, &r.rep);
    fclose(f);
    assert_non_null(strstr(text, "total: 576 MACs (+256 computed by the host), ideal 36 cycles"));
    free(text);
    result_free(&r);
}

/* A transpose of C and H: a standalone copy layer whose output words are
 * written in byte-masked pieces, the one thing the compiler emits that its
 * cost model does not predict to the cycle (docs/microarch.md §14); the
 * rest of the program still is. */
static void test_copy_layer(void **state) {
    (void)state;
    R.s = 8;
    enpu_graph *g = newg();
    int64_t d[4] = {1, 8, 6, 5};
    int x = input(g, "x", 4, d);
    int c = conv(g, "c1", x, 8, 20, 3, 1, 1, 1, 1);
    int tr = unary(g, "tr", ENPU_OP_TRANSPOSE, c);
    enpu_shape_attr *sa = &last_node(g)->attr.shape;
    sa->n_axes = 4, sa->axes[0] = 0, sa->axes[1] = 2, sa->axes[2] = 1, sa->axes[3] = 3;
    int y = conv(g, "c2", tr, 6, 8, 1, 1, 0, 1, 1);
    result r;
    memset(&r, 0, sizeof r);
    compile_check(g, y, &r, "easynpu");
    assert_int_equal(r.checked, 3);
    assert_int_equal(r.prog.n_instr, 4); /* c1, the copy, c2, end */
    assert_int_equal(r.prog.instr[1].opcode, ENPU_OPC_RESHAPE);
    assert_false(r.prog.instr[0].fuse_next);
    assert_false(enpu_cost_exact(&r.prog.arch, &r.prog.instr[1], 1));
    assert_int_equal(r.outside, 1);
    result_free(&r);
}

/* A model that does not fit: the error names the layer, the need, the arch
 * and what would fit. */
static void test_nofit(void **state) {
    (void)state;
    R.s = 6;
    enpu_graph *g = newg();
    int64_t d[4] = {1, 16, 48, 48};
    int x = input(g, "x", 4, d);
    int y = conv(g, "conv3", x, 16, 64, 3, 1, 1, 1, 1);
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err)) fail_msg("%s", err.msg);
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.quiet = true;
    enpu_graph *qg;
    assert_int_equal(enpu_quantize_graph(g, NULL, 0, &qo, &qg, NULL, &err), 0);
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_program p;
    enpu_compile_report rep;
    /* with its DRAM the model streams; without, it does not fit */
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, &rep, &err), 0);
    assert_true(rep.offchip);
    enpu_compile_report_free(&rep);
    enpu_program_free(&p);
    a.dram_bytes = 0;
    int rc = enpu_compile(qg, &a, NULL, &p, &rep, &err);
    assert_int_equal(rc, ENPU_E_NOFIT);
    assert_non_null(strstr(err.msg, "layer 'conv3': output 'conv3_out' 1x64x48x48 needs 147456 bytes of main DTCM"));
    assert_non_null(strstr(err.msg, "with its input 1x16x48x48 (36864 bytes)"));
    assert_non_null(strstr(err.msg, "arch 'easynpu' has 65536"));
    assert_non_null(strstr(err.msg, "use --arch large (524288) or main_dtcm_bytes >= 184320"));
    enpu_program_free(&p);
    /* and it fits the large preset on chip */
    assert_int_equal(enpu_arch_preset("large", &a, &err), 0);
    a.dram_bytes = 0;
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, &rep, &err), 0);
    enpu_program_free(&p);
    enpu_compile_report_free(&rep);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

/* The command: table, program and JSON; refusals with one line and exit 2. */
static void test_cli(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_test_compile_cli_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s compile models/kws_cnn.onnx --calib models/kws_cnn/calib -o %s/k.enpu --json %s/k.json",
             ENPU_CLI, dir, dir);
    int rc = enpu_test_run(cmd, &out);
    if (rc != 0) fail_msg("%s", out);
    assert_non_null(strstr(out, "/features/features.3/Conv"));
    assert_non_null(strstr(out, "utilization 99.5%"));
    assert_non_null(strstr(out, "move Flatten '/Flatten': remap"));
    free(out);
    char path[512];
    snprintf(path, sizeof path, "%s/k.json", dir);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    assert_non_null(j);
    json_t *layers = json_object_get(j, "layers");
    assert_int_equal(json_array_size(layers), 6);
    json_t *l1 = json_array_get(layers, 1);
    static const char *const keys[] = {"name", "op", "macs", "ideal_cycles", "modelled_cycles", "tile"};
    for (size_t k = 0; k < 6; k++) assert_non_null(json_object_get(l1, keys[k]));
    assert_int_equal(json_integer_value(json_object_get(l1, "macs")), 2927232);
    assert_int_equal(json_integer_value(json_object_get(l1, "ideal_cycles")), 182952);
    assert_non_null(json_object_get(json_object_get(l1, "tile"), "zs"));
    json_t *tot = json_object_get(j, "total");
    assert_int_equal(json_integer_value(json_object_get(tot, "macs")), 3914280);
    assert_int_equal(json_integer_value(json_object_get(tot, "ideal_cycles")), 244643);
    assert_true(json_integer_value(json_object_get(tot, "modelled_cycles")) < 244643 * 100 / 75);
    assert_true(json_is_array(json_object_get(j, "host_ops")));
    json_t *mv = json_array_get(json_object_get(j, "moves"), 0);
    assert_string_equal(json_string_value(json_object_get(mv, "kind")), "remap");
    json_decref(j);
    snprintf(path, sizeof path, "%s/k.enpu", dir);
    enpu_program p;
    enpu_err err = {0};
    assert_int_equal(enpu_program_read(path, NULL, &p, &err), 0);
    /* the input in 6 row strips, each loaded by a dma ahead of its strip of
     * the first convolution; 5 more layers; the output stored; end */
    int ops[256] = {0};
    for (int i = 0; i < p.n_instr; i++) ops[p.instr[i].opcode & 255]++;
    assert_int_equal(p.n_instr, 19);
    assert_int_equal(ops[ENPU_OPC_DMA], 7);
    assert_int_equal(ops[ENPU_OPC_CONV], 6 + 3);
    assert_int_equal(ops[ENPU_OPC_FC], 2);
    assert_int_equal(ops[ENPU_OPC_END], 1);
    enpu_program_free(&p);
    /* never overwrite an input; usage errors */
    snprintf(cmd, sizeof cmd, "%s compile models/kws_cnn.onnx -o models/kws_cnn.onnx", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s compile", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s compile --help", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    /* architectures the model cannot be compiled for (tests/bad/compile) */
    static const struct {
        const char *file, *cat, *sub;
    } bad[] = {
        {"tiny_main_dtcm.json", "nofit", "they need at least 12256 bytes of main DTCM; arch 'tiny-main' has 8192"},
        {"tiny_weight_mem_512.json", "nofit", "layer '/features/features.3/Conv': one word of 16 input channels of one kernel row (48 inputs) for one block of 16 output channels (one per PE) needs 960 bytes of weights and parameters; arch 'tiny-weights-512' has weight_mem_bytes 512; use weight_mem_bytes >= 960"},
        {"no_dram_tiny_main.json", "nofit", "graph input 'mfcc' 1x1x26x49 needs 20384 bytes of main DTCM"},
        {"tiny_dram.json", "nofit", "DRAM: the program needs 20400 bytes of DRAM (instructions, weights, inputs, outputs and the tensors kept there); arch 'tiny-dram' has 4096; use dram_bytes >= 20400"},
        {"narrow_ifmap_pad.json", "nofit", "use ifmap_pad_depth >= 3"},
        {"slow_weight_mem.json", "unsupported", "weight_mem_latency 16 >= weight_pad_depth 16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s compile models/kws_cnn.onnx --quiet --arch tests/bad/compile/%s -o %s/x.enpu",
                 ENPU_CLI, bad[i].file, dir);
        out = NULL;
        assert_int_equal(enpu_test_run(cmd, &out), 2);
        char want[160];
        snprintf(want, sizeof want, "easynpu compile: error [%s]: models/kws_cnn.onnx: ", bad[i].cat);
        if (!strstr(out, want) || !strstr(out, bad[i].sub)) fail_msg("%s: %s", bad[i].file, out);
        free(out);
        snprintf(path, sizeof path, "%s/x.enpu", dir);
        assert_int_equal(access(path, F_OK), -1); /* no partial output */
    }
    /* an fc cut into input-channel blocks down to one input word, which
     * still does not fit; and the fixtures that once could not be split
     * now compile (their runs: tests/models/test_icblocks.c) */
    snprintf(cmd, sizeof cmd, "%s compile models/offchip/mlp1m.onnx --quiet --arch tests/bad/compile/weight_mem_256.json -o %s/x.enpu",
             ENPU_CLI, dir);
    out = NULL;
    assert_int_equal(enpu_test_run(cmd, &out), 2);
    if (!strstr(out, "easynpu compile: error [nofit]: models/offchip/mlp1m.onnx: layer '/fc1/Gemm': one input word (16 "
                     "inputs) for one block of 16 output channels (one per PE) needs 448 bytes of weights and "
                     "parameters; arch 'weights-256' has weight_mem_bytes 256; use weight_mem_bytes >= 448"))
        fail_msg("weight_mem_256.json: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s compile models/kws_cnn.onnx --quiet --arch tests/bad/compile/tiny_weight_mem.json -o %s/x.enpu",
             ENPU_CLI, dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s compile models/kws_cnn.onnx --quiet --arch tests/bad/compile/tiny_weight_mem_1k.json -o %s/x.enpu",
             ENPU_CLI, dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_variants), cmocka_unit_test(test_fc_flatten),
        cmocka_unit_test(test_pools_bn),      cmocka_unit_test(test_fusion),
        cmocka_unit_test(test_moves_host),    cmocka_unit_test(test_host_macs),
        cmocka_unit_test(test_copy_layer),    cmocka_unit_test(test_nofit),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
