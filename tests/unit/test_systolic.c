/* The systolic engine (docs/systolic.md): its presets; differential runs of
 * random small networks (fixed seeds) on random systolic archs -- every
 * layer bit-exact with the golden int8 reference in cycle mode (with the
 * simulator's own functional replay) and functional mode, the cost model
 * equal to the simulator cycle for cycle, activity by activity, word by
 * word; SCALE-Sim v2's output-stationary compute cycles on random layer
 * shapes; the fast-forward against the per-cycle path on random networks
 * and archs; and the refusals. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/file.h"
#include "easynpu/quant.h"
#include "easynpu/systolic.h"
#include "report/compile_report.h"
#include "testutil.h"

/* ---- random graphs ---------------------------------------------------------------- */

static uint64_t rs;
static uint64_t rnd(void) { /* splitmix64: the same sequence everywhere */
    uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int rr(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }
static double nrand(void) {
    double u = ((double)(rnd() >> 11) + 1) / 9007199254740993.0, v = (double)(rnd() >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    if (t < 0) fail_msg("%s", err.msg);
    return t;
}
static int rconst(enpu_graph *g, const char *name, int rank, const int64_t *dims, double sd) {
    int t = tensor(g, name, rank, dims);
    int64_t n = enpu_tensor_numel(&g->tensors[t]);
    float *v = malloc((size_t)n * sizeof(float) + 4);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(sd * nrand());
    enpu_tensor_set_data(&g->tensors[t], v);
    return t;
}
static int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in) {
    enpu_err err = {0};
    char o[64];
    snprintf(o, sizeof o, "%s_out", name);
    int out = tensor(g, o, -1, NULL);
    if (enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err) < 0) fail_msg("%s", err.msg);
    return out;
}
static void window(enpu_window *w, int k, int s, int p, int d) {
    w->kernel[0] = w->kernel[1] = k, w->stride[0] = w->stride[1] = s;
    w->dilation[0] = w->dilation[1] = d;
    for (int i = 0; i < 4; i++) w->pads[i] = p;
}
static int conv(enpu_graph *g, const char *name, int x, int ci, int co, int k, int s, int p, int d, int group) {
    int64_t wd[4] = {co, ci / group, k, k}, bd[1] = {co};
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s_w", name), snprintf(bn, sizeof bn, "%s_b", name);
    int in[3] = {x, rconst(g, wn, 4, wd, 0.3), rconst(g, bn, 1, bd, 0.1)};
    int y = node(g, name, ENPU_OP_CONV, 3, in);
    window(&g->nodes[g->n_nodes - 1].attr.conv.w, k, s, p, d);
    g->nodes[g->n_nodes - 1].attr.conv.group = group;
    return y;
}
static int pool(enpu_graph *g, const char *name, enpu_op op, int x, int k, int s, int p) {
    int in[1] = {x};
    int y = node(g, name, op, 1, in);
    window(&g->nodes[g->n_nodes - 1].attr.pool.w, k, s, p, 1);
    g->nodes[g->n_nodes - 1].attr.pool.count_include_pad = true;
    return y;
}
static int relu(enpu_graph *g, const char *name, int x) {
    int in[1] = {x};
    int y = node(g, name, ENPU_OP_RELU, 1, in);
    g->nodes[g->n_nodes - 1].attr.act.min = 0, g->nodes[g->n_nodes - 1].attr.act.max = INFINITY;
    return y;
}
static int gemm(enpu_graph *g, const char *name, int x, int k, int n) {
    int64_t wd[2] = {n, k}, bd[1] = {n};
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s_w", name), snprintf(bn, sizeof bn, "%s_b", name);
    int in[3] = {x, rconst(g, wn, 2, wd, 0.1), rconst(g, bn, 1, bd, 0.1)};
    int y = node(g, name, ENPU_OP_GEMM, 3, in);
    enpu_gemm_attr *a = &g->nodes[g->n_nodes - 1].attr.gemm;
    a->alpha = a->beta = 1, a->trans_b = true;
    return y;
}
static int flatten(enpu_graph *g, const char *name, int x) {
    int in[1] = {x};
    int y = node(g, name, ENPU_OP_FLATTEN, 1, in);
    g->nodes[g->n_nodes - 1].attr.shape.axis = 1;
    return y;
}

static int64_t out_extent(int64_t in, int k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

/* ---- the harness ---------------------------------------------------------------- */

typedef struct run {
    enpu_program prog;
    enpu_sim_result res;      /* cycle mode */
    int compared;
} run;

/* Quantizes g (output y) as every command does for arch a
 * (enpu_compile_quant_opts: the kinds the array has no kernel for go to the
 * host), or with the defaults (EasyNPU's kernels) when a is NULL. */
static enpu_graph *finish(enpu_graph *g, int y, const enpu_arch *a, enpu_graph **qg) {
    enpu_err err = {0};
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) || enpu_graph_validate(g, &err))
        fail_msg("%s", err.msg);
    enpu_quant_opts qo;
    if (a) enpu_compile_quant_opts(a, &qo);
    else enpu_quant_opts_default(&qo);
    qo.quiet = true;
    if (enpu_quantize_graph(g, NULL, 0, &qo, qg, NULL, &err)) fail_msg("quantize: %s", err.msg);
    return g;
}

/* Compiles qg for arch a, runs it in cycle mode (with the functional replay
 * check) and functional mode on a random input, each layer checked against
 * the golden reference, the outputs bit for bit, the cost model against the
 * simulator. */
static void run_check(const char *what, enpu_graph *g, enpu_graph *qg, const enpu_arch *a, run *r) {
    enpu_err err = {0};
    memset(r, 0, sizeof *r);
    if (enpu_compile(qg, a, NULL, &r->prog, NULL, &err)) fail_msg("%s: compile: %s", what, err.msg);
    const enpu_tensor *xt = &g->tensors[g->inputs[0]];
    enpu_buf in;
    assert_int_equal(enpu_buf_alloc(&in, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err), 0);
    float *x = in.data;
    for (int64_t i = 0; i < enpu_buf_numel(&in); i++) x[i] = (float)nrand();
    enpu_golden_check gc = {qg, NULL, 0};
    assert_int_equal(enpu_gexec_new(qg, &gc.ex, &err), 0);
    assert_int_equal(enpu_gexec_run(gc.ex, &in, &err), 0);
    /* a network of host ops only (a max pool) has no array output to
     * compare nor a replay; its outputs are compared all the same */
    bool array = false;
    for (int i = 0; i < r->prog.n_instr; i++) array |= enpu_opcode_class(r->prog.instr[i].opcode) == ENPU_CLASS_SYA;
    for (int mode = 0; mode < 2; mode++) {
        enpu_sim_opts o = {0};
        o.mode = mode ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        o.check = mode == 0;
        o.on_layer = enpu_golden_check_layer;
        o.cb_ctx = &gc;
        gc.compared = 0;
        enpu_sim *sim = NULL;
        enpu_sim_result res;
        if (enpu_sim_new(&r->prog, a, &o, &sim, &err)) fail_msg("%s: %s", what, err.msg);
        if (enpu_sim_run(sim, &in, 1, &res, &err)) fail_msg("%s (%s mode): %s", what, enpu_sim_mode_name(o.mode), err.msg);
        if (enpu_golden_check_outputs(&gc, &res, &err)) fail_msg("%s: outputs: %s", what, err.msg);
        assert_true(gc.compared > 0 || !array);
        if (mode == 0) {
            assert_true(res.bit_exact || !array);
            enpu_test_assert_cost_exact(what, &r->prog, &res);
            r->res = res;
            r->compared = gc.compared;
        } else {
            enpu_sim_result_free(&res);
        }
        enpu_sim_free(sim);
    }
    enpu_gexec_free(gc.ex);
    enpu_buf_free(&in);
}

static void run_free(run *r) {
    enpu_program_free(&r->prog);
    enpu_sim_result_free(&r->res);
}

static enpu_arch preset(const char *name) {
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset(name, &a, &err), 0);
    return a;
}

/* A random systolic arch: array shape, arrangement, scheme, latencies, word
 * width; validated. */
static enpu_arch random_arch(void) {
    enpu_arch a = preset("systolic");
    static const int banks[] = {1, 2, 4, 6};
    a.sya_rows = rr(1, 6), a.sya_cols = rr(1, 6);
    a.sya_banks = banks[rr(0, 3)];
    do a.sya_bank_rows = rr(1, (int)a.sya_banks);
    while (a.sya_banks % a.sya_bank_rows);
    static const int schemes[] = {0, 1, 3, 4};
    a.sya_scheme = schemes[rr(0, 3)];
    a.sya_cfg_cycles = rr(0, 2);
    a.dtcm_read_latency = rr(1, 2), a.weight_mem_latency = rr(1, 2);
    a.requant_latency = rr(0, 3);
    a.instr_fetch_cycles = rr(1, 4), a.decode_cycles = rr(0, 2);
    a.host_sync_cycles = rr(0, 20), a.hostcpu_op_cycles = rr(0, 400);
    a.bus_bits = 8 * (int64_t[]){4, 8, 16, 32}[rr(0, 3)];
    a.pes = a.ifmap_pads = a.weight_pad_groups = a.bus_bits / 8;
    snprintf(a.name, sizeof a.name, "sya-r%" PRId64 "c%" PRId64 "b%" PRId64 "x%" PRId64 "-s%" PRId64, a.sya_rows,
             a.sya_cols, a.sya_banks, a.sya_bank_rows, a.sya_scheme);
    enpu_err err = {0};
    if (enpu_arch_validate(&a, &err)) fail_msg("%s", err.msg);
    return a;
}

/* A random chain of 1..4 layers on a random input: convolutions (groups,
 * strides, padding, dilation, fused Relu), depthwise convolutions, average
 * and max pooling (a host op), residual blocks (x + conv(x), optionally
 * Relu), gates (x * Sigmoid(x)): the Add, Mul and Sigmoid host ops, and a
 * Flatten + Gemm at the end. */
static enpu_graph *random_net(int *out) {
    enpu_graph *g = enpu_graph_new("rand");
    int64_t C = rr(1, 12), H = rr(1, 10), W = rr(1, 10);
    int64_t d[4] = {1, C, H, W};
    enpu_err err = {0};
    int x = tensor(g, "x", 4, d);
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    int n = rr(1, 4);
    for (int i = 0; i < n; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "l%d", i);
        int kind = rr(0, 7);
        int k = rr(1, 3), s = rr(1, 2), dl = rr(1, 2), p = rr(0, k - 1);
        if (H + 2 * p < dl * (k - 1) + 1 || W + 2 * p < dl * (k - 1) + 1) k = 1, dl = 1, p = 0;
        if (kind <= 2) {
            int co = rr(1, 20), grp = (C % 2 == 0 && co % 2 == 0 && rr(0, 2) == 0) ? 2 : 1;
            x = conv(g, nm, x, (int)C, co, k, s, p, dl, grp);
            if (rr(0, 1)) {
                char rn[32];
                snprintf(rn, sizeof rn, "r%d", i);
                x = relu(g, rn, x);
            }
            C = co;
        } else if (kind == 3) {
            x = conv(g, nm, x, (int)C, (int)C, k, s, p, dl, (int)C);
        } else if (kind >= 6) {
            char bn[48];
            snprintf(bn, sizeof bn, "%s_%s", nm, kind == 6 ? "add" : "mul");
            int in[2] = {x, -1};
            if (kind == 6) {
                /* a same-size branch: k x k, stride 1, padding (k - 1) / 2 */
                k = 2 * rr(0, 1) + 1;
                if (H < k || W < k) k = 1;
                in[1] = conv(g, nm, x, (int)C, (int)C, k, 1, (k - 1) / 2, 1, 1);
            } else {
                int x1[1] = {x};
                in[1] = node(g, nm, ENPU_OP_SIGMOID, 1, x1);
            }
            x = node(g, bn, kind == 6 ? ENPU_OP_ADD : ENPU_OP_MUL, 2, in);
            if (kind == 6 && rr(0, 1)) {
                char rn[32];
                snprintf(rn, sizeof rn, "r%d", i);
                x = relu(g, rn, x);
            }
            continue; /* the shape is x's */
        } else {
            if (H + 2 * p < k || W + 2 * p < k || (kind == 5 && p > 0)) k = 1, p = 0;
            x = pool(g, nm, kind == 4 ? ENPU_OP_AVGPOOL : ENPU_OP_MAXPOOL, x, k, s, p);
            dl = 1;
            if (kind == 5 && rr(0, 2) == 0) { /* a clamp after the max pool (conv, pool, relu) */
                char rn[32];
                snprintf(rn, sizeof rn, "r%d", i);
                x = relu(g, rn, x);
            }
        }
        H = out_extent(H, k, s, p, dl), W = out_extent(W, k, s, p, dl);
    }
    if (rr(0, 1)) {
        x = flatten(g, "flat", x);
        x = gemm(g, "fc", x, (int)(C * H * W), rr(1, 24));
    }
    *out = x;
    return g;
}

/* ---- cases ---------------------------------------------------------------------- */

static void test_presets(void **state) {
    (void)state;
    static const struct {
        const char *name;
        int64_t R, C;
    } want[] = {{"systolic", 32, 32}, {"systolic-1x4", 16, 64}, {"systolic-4x1", 64, 16}};
    for (size_t i = 0; i < 3; i++) {
        enpu_arch a = preset(want[i].name), b;
        enpu_err err = {0};
        assert_int_equal(a.engine, ENPU_ENGINE_SYSTOLIC);
        assert_int_equal(enpu_arch_sya_rows(&a), want[i].R);
        assert_int_equal(enpu_arch_sya_cols(&a), want[i].C);
        assert_int_equal(enpu_arch_mac_units(&a), 1024);
        assert_int_equal(a.sya_acc_bits, 26);
        assert_int_equal(a.sya_scheme, 1);
        assert_int_equal(enpu_arch_word_bytes(&a), 32);
        assert_int_equal(a.dram_bytes, 0);
        char *j = enpu_arch_to_json(&a, 0);
        assert_non_null(strstr(j, "\"sya_bank_rows\":"));
        assert_int_equal(enpu_arch_from_json(j, strlen(j), "mem", &b, &err), 0);
        assert_memory_equal(&a, &b, sizeof a);
        free(j);
    }
    /* engine systolic without a base takes preset systolic's values */
    enpu_arch a;
    enpu_err err = {0};
    const char *t = "{\"engine\": \"systolic\", \"sya_scheme\": 3, \"sya_rows\": 8}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "t", &a, &err), 0);
    assert_int_equal(a.bus_bits, 256);
    assert_int_equal(enpu_arch_sya_rows(&a), 16);
    assert_int_equal(a.sya_scheme, 3);
    /* EasyNPU's JSON and fingerprint do not carry the systolic keys */
    enpu_arch e = preset("easynpu");
    char *j = enpu_arch_to_json(&e, 0);
    assert_null(strstr(j, "sya_"));
    free(j);
    assert_int_equal(enpu_arch_mac_units(&e), 16);
    /* docs/systolic.md carries the generated parameter table */
    char *tab = enpu_arch_sya_table_md();
    uint8_t *doc;
    size_t n;
    assert_int_equal(enpu_file_read("docs/systolic.md", 1 << 20, &doc, &n, &err), 0);
    if (!strstr((char *)doc, tab))
        fail_msg("docs/systolic.md does not contain `easynpu arch --systolic-table`: regenerate it");
    free(doc);
    free(tab);
    t = "{\"base\": \"systolic\", \"sya_scheme\": 2}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "t", &a, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'sya_scheme': value 2"));
}

/* The differential test: random networks on random systolic archs. */
static void test_random_networks(void **state) {
    (void)state;
    rs = 0x5157011Cull;
    int runs = 0, compared = 0;
    for (int it = 0; it < 150; it++) {
        enpu_arch a = random_arch();
        int y;
        enpu_graph *qg = NULL, *g = random_net(&y);
        finish(g, y, &a, &qg);
        char what[160];
        snprintf(what, sizeof what, "case %d on %s", it, a.name);
        run r;
        run_check(what, g, qg, &a, &r);
        compared += r.compared;
        runs++;
        run_free(&r);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    fprintf(stderr, "%d random networks on random systolic archs: %d layer outputs bit-exact, cost model = "
                    "simulator\n", runs, compared);
}

/* A random network on a random systolic arch, compiled, and a random input. */
typedef struct rcase {
    enpu_arch a;
    enpu_graph *g, *qg;
    enpu_program p;
    enpu_buf in;
    char what[160];
} rcase;

static void rcase_new(rcase *c, int it) {
    c->a = random_arch();
    int y;
    c->qg = NULL, c->g = random_net(&y);
    finish(c->g, y, &c->a, &c->qg);
    enpu_err err = {0};
    if (enpu_compile(c->qg, &c->a, NULL, &c->p, NULL, &err)) fail_msg("case %d: compile: %s", it, err.msg);
    const enpu_tensor *xt = &c->g->tensors[c->g->inputs[0]];
    assert_int_equal(enpu_buf_alloc(&c->in, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err), 0);
    float *x = c->in.data;
    for (int64_t i = 0; i < enpu_buf_numel(&c->in); i++) x[i] = (float)nrand();
    snprintf(c->what, sizeof c->what, "case %d on %s", it, c->a.name);
}

static void rcase_free(rcase *c) {
    enpu_buf_free(&c->in);
    enpu_program_free(&c->p);
    enpu_graph_free(c->qg);
    enpu_graph_free(c->g);
}

/* The fast-forward (docs/systolic.md "Fast-forward") against the per-cycle
 * path on random networks on random systolic archs: every statistic, the
 * memories and their write cycles, the trace and VCD windows
 * (enpu_test_assert_ff_equal). */
static void test_fast_forward(void **state) {
    (void)state;
    rs = 0xFF5157A1ull;
    uint64_t ff_sum = 0, compute_sum = 0;
    int runs = 0;
    for (int it = 0; it < 100; it++) {
        rcase c;
        rcase_new(&c, it);
        uint64_t ff = 0, compute = 0;
        enpu_test_assert_ff_equal(c.what, &c.p, &c.a, &c.in, NULL, 1, it % 4 == 0, &ff, &compute);
        ff_sum += ff, compute_sum += compute;
        runs++;
        rcase_free(&c);
    }
    fprintf(stderr, "%d random networks on random systolic archs: the same with and without fast-forward "
                    "(%llu cycles fast-forwarded, %llu compute cycles)\n",
            runs, (unsigned long long)ff_sum, (unsigned long long)compute_sum);
    assert_true(ff_sum > compute_sum / 2);
}

/* Runs stopped early on random networks and archs (cycle limits spread over
 * the run, a layer callback failing at each call): the same statistics with
 * and without fast-forward (enpu_test_assert_ff_stops), the counts of the
 * units in flight included. */
static void test_ff_stops(void **state) {
    (void)state;
    rs = 0x5709F0F5ull;
    int stops = 0;
    for (int it = 0; it < 40; it++) {
        rcase c;
        rcase_new(&c, it);
        int64_t *act = calloc((size_t)c.p.n_instr * ENPU_ACT_COUNT, sizeof *act);
        int64_t total = enpu_sya_model_program(&c.p, act, NULL, NULL, NULL);
        free(act);
        uint64_t limits[8];
        for (int k = 0; k < 8; k++) limits[k] = 1 + (uint64_t)rr(0, (int)(total > 1 ? total - 1 : 1));
        stops += enpu_test_assert_ff_stops(c.what, &c.p, &c.a, &c.in, 1, limits, 8);
        rcase_free(&c);
    }
    fprintf(stderr, "40 random networks on random systolic archs: %d runs stopped early, the same statistics "
                    "with and without fast-forward\n", stops);
}

/* SCALE-Sim v2's output-stationary compute cycles (scalesim/compute/
 * systolic_compute_os.py): each fold (a block of R output pixels by C
 * filters on an R x C array) is its demand matrices, skewed: T + R + C - 2
 * cycles for a window of T = hk*wk*ci values, the folds one after the other
 * (the outputs drain before the next fold starts), partial folds padded to
 * the whole array.  Our scheme 0 (the controller waits until the array is
 * empty) on one array with the ideal memory SCALE-Sim assumes: a layer's
 * compute + pipeline_fill cycles are exactly that. */
static void test_scalesim(void **state) {
    (void)state;
    rs = 0x5CA1E51Dull;
    for (int it = 0; it < 60; it++) {
        enpu_arch a = preset("systolic");
        a.sya_banks = a.sya_bank_rows = 1;
        a.sya_rows = rr(2, 16), a.sya_cols = rr(2, 16);
        a.sya_scheme = 0;
        snprintf(a.name, sizeof a.name, "scalesim-%" PRId64 "x%" PRId64, a.sya_rows, a.sya_cols);
        enpu_graph *g = enpu_graph_new("one");
        int64_t C = rr(1, 16), H = rr(1, 12), W = rr(1, 12);
        int64_t d[4] = {1, C, H, W};
        enpu_err err = {0};
        int x = tensor(g, "x", 4, d);
        assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
        int64_t Sr, Sc, T;
        int y;
        if (it % 4 == 3) {
            Sc = rr(1, 40);
            y = gemm(g, "fc", flatten(g, "flat", x), (int)(C * H * W), (int)Sc);
            Sr = 1, T = C * H * W;
        } else {
            int k = rr(1, 3), s = rr(1, 2), p = rr(0, k - 1);
            if (H + 2 * p < k || W + 2 * p < k) k = 1, p = 0;
            Sc = rr(1, 40);
            y = conv(g, "conv", x, (int)C, (int)Sc, k, s, p, 1, 1);
            Sr = out_extent(H, k, s, p, 1) * out_extent(W, k, s, p, 1), T = (int64_t)k * k * C;
        }
        enpu_graph *qg = NULL;
        finish(g, y, &a, &qg);
        run r;
        char what[96];
        snprintf(what, sizeof what, "SCALE-Sim case %d on %s", it, a.name);
        run_check(what, g, qg, &a, &r);
        const int64_t R = a.sya_rows, Cc = a.sya_cols;
        int64_t folds = ((Sr + R - 1) / R) * ((Sc + Cc - 1) / Cc), scalesim = folds * (T + R + Cc - 2);
        const enpu_layer_stats *l = &r.res.layers[0];
        int64_t ours = (int64_t)(l->activity[ENPU_ACT_COMPUTE] + l->activity[ENPU_ACT_PIPELINE_FILL]);
        if (ours != scalesim)
            fail_msg("%s: Sr=%" PRId64 " Sc=%" PRId64 " T=%" PRId64 ": SCALE-Sim %" PRId64 " cycles, ours %" PRId64,
                     what, Sr, Sc, T, scalesim, ours);
        run_free(&r);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
}

/* c1(x) + c2(x) on a [1, 4, 3, 3] input, quantized for arch a (NULL:
 * EasyNPU's kernels). */
static enpu_graph *add_net(const enpu_arch *a, enpu_graph **qg) {
    enpu_err err = {0};
    enpu_graph *g = enpu_graph_new("add");
    int64_t d[4] = {1, 4, 3, 3};
    int x = tensor(g, "x", 4, d);
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    int in[2] = {conv(g, "c1", x, 4, 4, 1, 1, 0, 1, 1), conv(g, "c2", x, 4, 4, 1, 1, 0, 1, 1)};
    return finish(g, node(g, "sum", ENPU_OP_ADD, 2, in), a, qg);
}

/* conv -> max pool -> relu on a [1, 3, 6, 6] input, quantized for arch a
 * (NULL: EasyNPU's kernels, which fuse the relu into the pool). */
static enpu_graph *pool_relu_net(const enpu_arch *a, enpu_graph **qg) {
    enpu_err err = {0};
    enpu_graph *g = enpu_graph_new("poolrelu");
    int64_t d[4] = {1, 3, 6, 6};
    int x = tensor(g, "x", 4, d);
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    int y = pool(g, "pool", ENPU_OP_MAXPOOL, conv(g, "c", x, 3, 5, 3, 1, 1, 1, 1), 2, 2, 0);
    return finish(g, relu(g, "relu", y), a, qg);
}

/* What the engine refuses, with its reason. */
static void test_refusals(void **state) {
    (void)state;
    rs = 7;
    enpu_err err = {0};
    /* an element-wise Add quantized for the engine is a host node of the
     * graph: the host runs it, timed, bit-exact with the reference */
    enpu_arch a = preset("systolic");
    enpu_graph *qg = NULL, *g = add_net(&a, &qg);
    run r;
    run_check("add quantized for systolic", g, qg, &a, &r);
    int syncs = 0;
    for (int i = 0; i < r.prog.n_instr; i++) syncs += r.prog.instr[i].opcode == ENPU_OPC_SYNC;
    assert_int_equal(syncs, 1);
    /* c1 and c2 in the main DTCM; the sum, a graph output the host made, is
     * checked with the outputs */
    assert_int_equal(r.compared, 2);
    run_free(&r);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    /* a max pool with a relu after it: quantized for the engine, the host
     * pools and the array clamps; quantized for EasyNPU (the relu fused into
     * the pool), refused */
    g = pool_relu_net(&a, &qg);
    run_check("max pool + relu quantized for systolic", g, qg, &a, &r);
    assert_int_equal(r.compared, 3); /* the conv, the pool the host wrote back for the array, the relu */
    run_free(&r);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    g = pool_relu_net(NULL, &qg);
    enpu_program p;
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, NULL, &err), ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "node 'pool' (MaxPool): the systolic engine has no max-pooling unit, and the "
                                    "host's float max pool does not apply this graph's fused clamp; quantize the "
                                    "model for arch 'systolic'"));
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    /* quantized for EasyNPU (its int8 kernel): no unit for it, and the host's
     * float add would not be the int8 reference's */
    g = add_net(NULL, &qg);
    enpu_err_clear(&err);
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, NULL, &err), ENPU_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "node 'sum' (Add): kind add has no kernel on the systolic engine, and the "
                                    "host's float op would not reproduce this graph's int8 add bit for bit; "
                                    "quantize the model for arch 'systolic'"));
    enpu_program_free(&p);
    /* a narrow accumulator: the compiler proves the dot products per channel */
    enpu_arch n = a;
    n.sya_acc_bits = 16;
    enpu_err_clear(&err);
    assert_int_equal(enpu_compile(qg, &n, NULL, &p, NULL, &err), ENPU_E_NOFIT);
    assert_non_null(strstr(err.msg, "beyond the 16-bit PE accumulator of arch 'systolic'; use sya_acc_bits >= "));
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    /* one conv compiled for 26 bits, then run with 16: both modes stop at the
     * first dot product outside the accumulator */
    g = enpu_graph_new("acc");
    int64_t d2[4] = {1, 16, 4, 4};
    int x = tensor(g, "x", 4, d2);
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    int y = conv(g, "wide", x, 16, 8, 3, 1, 1, 1, 1);
    finish(g, y, &a, &qg);
    enpu_err_clear(&err);
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, NULL, &err), 0);
    p.arch.sya_acc_bits = 16;
    n = p.arch;
    int8_t xin[256];
    for (int i = 0; i < 256; i++) xin[i] = (int8_t)(i % 2 ? 127 : -128 + i % 7);
    const int8_t *ins[1] = {xin};
    for (int mode = 0; mode < 2; mode++) {
        enpu_sim_opts o = {0};
        o.mode = mode ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        enpu_sim *sim = NULL;
        enpu_sim_result res;
        assert_int_equal(enpu_sim_new(&p, &n, &o, &sim, &err), 0);
        enpu_err_clear(&err);
        assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &res, &err), ENPU_E_INVALID);
        assert_non_null(strstr(err.msg, "layer 'wide' (instruction 0): the dot product of output point"));
        assert_non_null(strstr(err.msg, "outside the 16-bit PE accumulator (sya_acc_bits)"));
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
    }
    /* weights that could leave the accumulator keep the run on the per-cycle
     * path (docs/systolic.md "Fast-forward"): the same error either way */
    uint64_t ff = 1, compute = 0;
    enpu_test_assert_ff_equal("narrow accumulator", &p, &n, NULL, ins, 1, true, &ff, &compute);
    assert_int_equal(ff, 0);
    /* each engine runs its own instructions */
    enpu_arch e = preset("easynpu");
    enpu_instr ins0 = p.instr[0];
    enpu_err_clear(&err);
    assert_int_equal(enpu_instr_validate(&e, &ins0, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "sya_conv: arch 'easynpu' has engine 'easynpu'"));
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

/* The mapping table of a systolic program speaks of the array, not of
 * EasyNPU's PE lanes: its header names the engine and its MAC units, a
 * layer's tile is points x filters per unit, EasyNPU's zs/z and b/m are
 * "-", and the JSON report names the engine. */
static void test_compile_report(void **state) {
    (void)state;
    enpu_arch a = preset("systolic");
    enpu_graph *qg = enpu_test_quantize(ENPU_SOURCE_DIR "/models/kws_cnn.onnx",
                                        ENPU_SOURCE_DIR "/models/kws_cnn/calib", &a);
    enpu_program p;
    enpu_compile_report rep;
    enpu_err err = {0};
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, &rep, &err), 0);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    enpu_compile_report_print(f, &rep);
    fclose(f);
    assert_non_null(strstr(text, "Mapping on arch 'systolic' (systolic array, 1024 MAC units; tile: points x "
                                 "filters per unit): 7 instruction(s)\n"));
    /* features.0: 18 units of 32 points x 28 filters */
    assert_non_null(strstr(text, "sya_conv         26x49x1      24x24x28     32 x 28        -        -     -   "
                                 "0/1274/0               743        142  5.232   19%"));
    assert_non_null(strstr(text, "sya_fc           1x1x30       1x1x12       1 x 12         -        -     -"));
    assert_null(strstr(text, " sb "));
    free(text);
    char *js = enpu_compile_report_json(&rep);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"engine\": \"systolic\""));
    free(js);
    enpu_compile_report_free(&rep);
    enpu_program_free(&p);
    enpu_graph_free(qg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_random_networks),
        cmocka_unit_test(test_fast_forward),
        cmocka_unit_test(test_ff_stops),
        cmocka_unit_test(test_scalesim),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_compile_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
