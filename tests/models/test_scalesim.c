/* The systolic engine against SCALE-Sim v2 itself: the figures SCALE-Sim
 * printed for a set of layers (tests/data/scalesim/scalesim_os.csv, written
 * by scripts/scalesim_fixture.py; SCALE-Sim's commit, configurations,
 * topologies and command are in tests/data/scalesim/README.md), each layer
 * built here as an IR graph of the same geometry, compiled for the same
 * array (one bank of rows x columns, scheme 0: the controller waits for the
 * array to empty, as SCALE-Sim's folds do), run in cycle mode (the cost model
 * equal to the simulator) and compared figure by figure
 * (docs/systolic.md "Against SCALE-Sim"):
 *
 * - cycles: our compute + pipeline_fill cycles of the layer are SCALE-Sim's
 *   total + 1, exactly (SCALE-Sim reports the index of the last cycle,
 *   counting from 0), with no stall on either side;
 * - the operand matrices: our points, filters, reduction steps and units
 *   are its Sr, Sc, T and folds; our MACs its Sr * Sc * T;
 * - utilization: its compute utilization is our MACs / (rows * columns *
 *   cycles), its mapping efficiency our MACs / (rows * columns * T * units),
 *   its overall utilization MACs / (rows * columns * its total), to
 *   1e-12 (it prints Python floats);
 * - SRAM traffic, counted in elements (the arch's word is one byte): the
 *   weights read are its filter reads plus the 12 bytes of bias and
 *   requantization parameters per filter it does not have; the activations
 *   read its ifmap reads less the positions past the map's edge, which it
 *   counts as reads and we never read (its ceil-rounded output size, our
 *   end padding); the outputs written its ofmap writes less rows + columns
 *   per fold, which create_ofmap_demand_mat adds to every fold besides the
 *   outputs.
 *
 * The rows of more than 20 M MACs (AlexNet's conv1-5 on 16x16 and 32x32,
 * SCALE-Sim's own AlexNet conv1 row on the four arrays: 14 of 58) are in the
 * long tier; `make test` runs the others, which cover every case of scheme
 * 0 (test_coverage checks that they do): full and partial folds in both
 * dimensions, strides, 1x1 windows, a fully connected layer, GEMMs,
 * non-square arrays, SCALE-Sim's ceil-rounded output size. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/quant.h"
#include "easynpu/systolic.h"
#include "testutil.h"

#define FIXTURE ENPU_SOURCE_DIR "/tests/data/scalesim/scalesim_os.csv"

/* One row of the fixture: the array, the layer as SCALE-Sim takes it, and
 * what SCALE-Sim reported. */
typedef struct ss_row {
    char topo[32], kind[8], layer[40];
    int64_t R, C;
    int64_t h, w, kh, kw, ch, f, s;
    int64_t total, stalls;
    double overall, mapping, compute; /* percent */
    int64_t ifmap_reads, filter_reads, ofmap_writes;
} ss_row;

#define MAX_ROWS 256
static ss_row rows[MAX_ROWS];
static int n_rows;

static void load_fixture(void) {
    if (n_rows) return;
    FILE *f = fopen(FIXTURE, "r");
    if (!f) fail_msg("%s: cannot open", FIXTURE);
    char line[512];
    int lineno = 0;
    bool header = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (!header) { /* the column names */
            if (strncmp(line, "array,topology,kind,layer,", 26)) fail_msg("%s:%d: unexpected header", FIXTURE, lineno);
            header = true;
            continue;
        }
        if (n_rows == MAX_ROWS) fail_msg("%s: more than %d rows", FIXTURE, MAX_ROWS);
        ss_row *r = &rows[n_rows];
        memset(r, 0, sizeof *r);
        int n = sscanf(line,
                       "%" SCNd64 "x%" SCNd64 ",%31[^,],%7[^,],%39[^,],%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64
                       ",%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%lf,%lf,%lf,%" SCNd64 ",%" SCNd64
                       ",%" SCNd64,
                       &r->R, &r->C, r->topo, r->kind, r->layer, &r->h, &r->w, &r->kh, &r->kw, &r->ch, &r->f, &r->s,
                       &r->total, &r->stalls, &r->overall, &r->mapping, &r->compute, &r->ifmap_reads,
                       &r->filter_reads, &r->ofmap_writes);
        if (n != 20) fail_msg("%s:%d: %d fields of 20 read", FIXTURE, lineno, n);
        n_rows++;
    }
    fclose(f);
    if (n_rows == 0) fail_msg("%s: no rows", FIXTURE);
}

/* ---- the layer as an IR graph ------------------------------------------------ */

static uint64_t rs;
static double nrand(void) { /* splitmix64 into Box-Muller: the same everywhere */
    uint64_t z[2];
    for (int i = 0; i < 2; i++) {
        uint64_t x = (rs += 0x9E3779B97F4A7C15ull);
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        z[i] = x ^ (x >> 31);
    }
    double u = ((double)(z[0] >> 11) + 1) / 9007199254740993.0, v = (double)(z[1] >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims, double sd) {
    enpu_err err = {0};
    int t = enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
    if (t < 0) fail_msg("%s", err.msg);
    if (sd > 0) {
        int64_t n = enpu_tensor_numel(&g->tensors[t]);
        float *v = malloc((size_t)n * sizeof(float));
        for (int64_t i = 0; i < n; i++) v[i] = (float)(sd * nrand());
        enpu_tensor_set_data(&g->tensors[t], v);
    }
    return t;
}

static int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in) {
    enpu_err err = {0};
    char o[64];
    snprintf(o, sizeof o, "%s_out", name);
    int out = tensor(g, o, -1, NULL, 0);
    if (enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err) < 0) fail_msg("%s", err.msg);
    return out;
}

/* SCALE-Sim's output size of one axis, ceil((in - k + s) / s)
 * (topology_utils.topo_calc_hyperparams), and the end padding that gives a
 * convolution that size: its last windows reach past the map, where
 * SCALE-Sim's operand matrix has no address. */
static int64_t ss_out(int64_t in, int64_t k, int64_t s) { return (in - k + s + s - 1) / s; }
static int64_t end_pad(int64_t in, int64_t k, int64_t s) { return (ss_out(in, k, s) - 1) * s + k - in; }

/* The fixture's layer as SCALE-Sim sees it: a convolution (no padding but
 * the end padding above), a gemm M x N x K as a fully connected layer
 * (M = 1) or a 1x1 convolution of N filters over M points of K channels;
 * quantized for arch a (the quantizer's synthetic calibration). */
static enpu_graph *layer_graph(const ss_row *r, const enpu_arch *a, enpu_graph **qg) {
    enpu_err err = {0};
    enpu_graph *g = enpu_graph_new(r->layer);
    bool gemm = !strcmp(r->kind, "gemm");
    int64_t M = r->h, K = r->w; /* a gemm: ifmap M x K, filter 1 x K, 1 channel, N filters */
    int64_t d[4] = {1, gemm ? K : r->ch, gemm ? M : r->h, gemm ? 1 : r->w};
    int x = tensor(g, "x", 4, d, 0), y;
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    if (gemm && M == 1) {
        int in[1] = {x};
        int flat = node(g, "flat", ENPU_OP_FLATTEN, 1, in);
        g->nodes[g->n_nodes - 1].attr.shape.axis = 1;
        int64_t wd[2] = {r->f, K}, bd[1] = {r->f};
        int gin[3] = {flat, tensor(g, "fc_w", 2, wd, 1.0 / sqrt((double)K)), tensor(g, "fc_b", 1, bd, 0.1)};
        y = node(g, "fc", ENPU_OP_GEMM, 3, gin);
        enpu_gemm_attr *ga = &g->nodes[g->n_nodes - 1].attr.gemm;
        ga->alpha = ga->beta = 1, ga->trans_b = true;
    } else {
        int64_t kh = gemm ? 1 : r->kh, kw = gemm ? 1 : r->kw, s = gemm ? 1 : r->s, ci = d[1];
        int64_t wd[4] = {r->f, ci, kh, kw}, bd[1] = {r->f};
        int cin[3] = {x, tensor(g, "conv_w", 4, wd, 1.0 / sqrt((double)(kh * kw * ci))), tensor(g, "conv_b", 1, bd, 0.1)};
        y = node(g, "conv", ENPU_OP_CONV, 3, cin);
        enpu_window *wn = &g->nodes[g->n_nodes - 1].attr.conv.w;
        wn->kernel[0] = (int)kh, wn->kernel[1] = (int)kw, wn->stride[0] = wn->stride[1] = (int)s;
        wn->dilation[0] = wn->dilation[1] = 1;
        wn->pads[0] = wn->pads[1] = 0;
        wn->pads[2] = (int)end_pad(d[2], kh, s), wn->pads[3] = (int)end_pad(d[3], kw, s);
        g->nodes[g->n_nodes - 1].attr.conv.group = 1;
    }
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) || enpu_graph_validate(g, &err))
        fail_msg("%s: %s", r->layer, err.msg);
    enpu_quant_opts qo;
    enpu_compile_quant_opts(a, &qo);
    qo.quiet = true;
    if (enpu_quantize_graph(g, NULL, 0, &qo, qg, NULL, &err)) fail_msg("%s: quantize: %s", r->layer, err.msg);
    return g;
}

/* The systolic arch SCALE-Sim's configuration describes: one bank of R x C
 * PEs, scheme 0, a one-byte word (so that words are elements, as
 * SCALE-Sim counts them), memories large enough for AlexNet's layers. */
static enpu_arch ss_arch(int64_t R, int64_t C) {
    enpu_arch a = enpu_test_preset("systolic");
    a.sya_banks = a.sya_bank_rows = 1;
    a.sya_rows = R, a.sya_cols = C;
    a.sya_scheme = 0;
    a.bus_bits = 8;
    a.pes = a.ifmap_pads = a.weight_pad_groups = 1;
    a.main_dtcm_bytes = (int64_t)1 << 19;
    a.weight_mem_bytes = (int64_t)1 << 23;
    /* EasyNPU's pad and psum depths, which this engine does not use: at 1
     * their fields leave room in the 512-bit instruction for the one-byte
     * word's long addresses */
    a.psum_depth = a.ifmap_pad_depth = 1;
    snprintf(a.name, sizeof a.name, "scalesim-%" PRId64 "x%" PRId64, R, C);
    enpu_err err = {0};
    if (enpu_arch_validate(&a, &err)) fail_msg("%s", err.msg);
    return a;
}

/* Positions of the operand matrix past the map's edge (SCALE-Sim's -1
 * addresses): windows x taps x channels that fall in the end padding. */
static int64_t outside(const ss_row *r) {
    if (!strcmp(r->kind, "gemm")) return 0;
    int64_t n = 0, oh = ss_out(r->h, r->kh, r->s), ow = ss_out(r->w, r->kw, r->s);
    for (int64_t y = 0; y < oh; y++)
        for (int64_t x = 0; x < ow; x++)
            for (int64_t i = 0; i < r->kh; i++)
                for (int64_t j = 0; j < r->kw; j++) n += (y * r->s + i >= r->h || x * r->s + j >= r->w);
    return n * r->ch;
}

static bool close_to(double got, double want) { return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)); }

/* Runs one fixture row and asserts every figure; returns our cycles. */
static uint64_t check_row(const ss_row *r) {
    enpu_err err = {0};
    enpu_arch a = ss_arch(r->R, r->C);
    rs = 0x5CA1E51Dull ^ (uint64_t)(r->R * 1000 + r->C);
    enpu_graph *qg = NULL, *g = layer_graph(r, &a, &qg);
    char what[128];
    snprintf(what, sizeof what, "%s on %" PRId64 "x%" PRId64, r->layer, r->R, r->C);
    enpu_program p;
    if (enpu_compile(qg, &a, NULL, &p, NULL, &err)) fail_msg("%s: compile: %s", what, err.msg);
    const enpu_tensor *xt = &g->tensors[g->inputs[0]];
    enpu_buf in;
    assert_int_equal(enpu_buf_alloc(&in, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err), 0);
    for (int64_t i = 0; i < enpu_buf_numel(&in); i++) ((float *)in.data)[i] = (float)nrand();
    enpu_sim_opts o = {0};
    o.mode = ENPU_SIM_CYCLE;
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    if (enpu_sim_new(&p, &a, &o, &sim, &err) || enpu_sim_run(sim, &in, 1, &res, &err))
        fail_msg("%s: %s", what, err.msg);
    enpu_test_assert_cost_exact(what, &p, &res);

    /* the layer: the program's one systolic instruction */
    int li = -1;
    for (int i = 0; i < p.n_instr; i++)
        if (enpu_opcode_class(p.instr[i].opcode) == ENPU_CLASS_SYA) {
            if (li >= 0) fail_msg("%s: more than one systolic instruction", what);
            li = i;
        }
    assert_true(li >= 0);
    const enpu_layer_stats *l = &res.layers[li];
    enpu_sya_shape sh;
    enpu_sya_shape_of(&p.instr[li], &sh);

    /* SCALE-Sim's operand matrices: Sr x T (ifmap), T x Sc (filters) */
    int64_t Sr = ss_out(r->h, r->kh, r->s) * ss_out(r->w, r->kw, r->s), Sc = r->f, T = r->kh * r->kw * r->ch;
    int64_t folds = ((Sr + r->R - 1) / r->R) * ((Sc + r->C - 1) / r->C), RC = r->R * r->C;
    if (sh.G * sh.N != Sr || sh.F != Sc || sh.K != T || sh.units != folds)
        fail_msg("%s: our layer is %" PRId64 " points x %" PRId64 " filters x %" PRId64 " steps in %" PRId64
                 " units, SCALE-Sim's Sr %" PRId64 " Sc %" PRId64 " T %" PRId64 " in %" PRId64 " folds",
                 what, sh.G * sh.N, sh.F, sh.K, sh.units, Sr, Sc, T, folds);
    uint64_t macs = (uint64_t)(Sr * Sc * T);
    assert_int_equal(l->macs, macs);

    /* cycles: ours = SCALE-Sim's total + 1, no stall on either side */
    uint64_t ours = l->activity[ENPU_ACT_COMPUTE] + l->activity[ENPU_ACT_PIPELINE_FILL];
    if (r->stalls != 0) fail_msg("%s: SCALE-Sim stalled %" PRId64 " cycles (its memory must not)", what, r->stalls);
    if (ours != (uint64_t)r->total + 1)
        fail_msg("%s: SCALE-Sim's total %" PRId64 " + 1, ours %" PRIu64 " (compute %" PRIu64 ", pipeline_fill %" PRIu64
                 ")",
                 what, r->total, ours, (uint64_t)l->activity[ENPU_ACT_COMPUTE],
                 (uint64_t)l->activity[ENPU_ACT_PIPELINE_FILL]);
    assert_int_equal(ours, (uint64_t)(folds * (T + r->R + r->C - 2))); /* the formula docs/systolic.md gives */

    /* utilization, as SCALE-Sim defines its three figures */
    double util = 100.0 * (double)macs / ((double)RC * (double)ours);
    double mapping = 100.0 * (double)macs / ((double)RC * (double)T * (double)sh.units);
    double overall = 100.0 * (double)macs / ((double)RC * (double)r->total);
    if (!close_to(util, r->compute) || !close_to(mapping, r->mapping) || !close_to(overall, r->overall))
        fail_msg("%s: utilization %.15g / mapping %.15g / overall %.15g, SCALE-Sim %.15g / %.15g / %.15g", what, util,
                 mapping, overall, r->compute, r->mapping, r->overall);

    /* SRAM traffic in elements (one-byte words) */
    uint64_t act = l->reads[ENPU_MEM_MAIN_DTCM], wgt = l->reads[ENPU_MEM_WEIGHT_MEM];
    uint64_t outw = l->writes[ENPU_MEM_MAIN_DTCM];
    uint64_t want_act = (uint64_t)(r->ifmap_reads - outside(r) * ((Sc + r->C - 1) / r->C));
    uint64_t want_wgt = (uint64_t)(r->filter_reads + 12 * Sc);
    uint64_t want_out = (uint64_t)(r->ofmap_writes - folds * (r->R + r->C));
    if (act != want_act || wgt != want_wgt || outw != want_out)
        fail_msg("%s: activations read %" PRIu64 " (SCALE-Sim %" PRId64 ", less %" PRIu64 " past the edge), weights read "
                 "%" PRIu64 " (SCALE-Sim %" PRId64 " + 12 x %" PRId64 "), outputs written %" PRIu64 " (SCALE-Sim %" PRId64
                 " - %" PRId64 " folds x %" PRId64 ")",
                 what, act, r->ifmap_reads, (uint64_t)r->ifmap_reads - want_act, wgt, r->filter_reads, Sc, outw,
                 r->ofmap_writes, folds, r->R + r->C);

    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    enpu_buf_free(&in);
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    return ours;
}

/* SCALE-Sim's Sr x Sc x T of a row. */
static int64_t row_macs(const ss_row *r) {
    return ss_out(r->h, r->kh, r->s) * ss_out(r->w, r->kw, r->s) * r->f * r->kh * r->kw * r->ch;
}

/* The rows of more than LONG_MACS MACs are the long tier's. */
#define LONG_MACS 20000000

static void run_rows(bool big) {
    load_fixture();
    int n = 0;
    for (int i = 0; i < n_rows; i++) {
        const ss_row *r = &rows[i];
        if ((row_macs(r) > LONG_MACS) != big) continue;
        uint64_t c = check_row(r);
        fprintf(stderr, "%-16s %3" PRId64 "x%-3" PRId64 " SCALE-Sim %10" PRId64 " + 1, ours %10" PRIu64 "  util %6.2f%%\n",
                r->layer, r->R, r->C, r->total, c, r->compute);
        n++;
    }
    fprintf(stderr, "%d layers: cycles, operand matrices, utilization and SRAM traffic as SCALE-Sim reports them\n", n);
    assert_true(n > 0);
}

/* The fixture's rows of up to LONG_MACS MACs. */
static void test_small(void **state) {
    (void)state;
    run_rows(false);
}

/* The others: AlexNet's conv1-5 on 16x16 and 32x32, SCALE-Sim's own
 * AlexNet conv1 row (ceil_s4) on the four arrays. */
static void test_large(void **state) {
    (void)state;
    run_rows(true);
}

/* The fixture covers what the doc says it covers: every case of scheme 0. */
static void test_coverage(void **state) {
    (void)state;
    load_fixture();
    bool partial_rows = false, partial_cols = false, both = false, stride = false, pw = false, fc = false,
         gemm = false, nonsquare = false, ceil_rows = false;
    int alex = 0;
    for (int i = 0; i < n_rows; i++) {
        const ss_row *r = &rows[i];
        bool g = !strcmp(r->kind, "gemm");
        int64_t Sr = g ? r->h : ss_out(r->h, r->kh, r->s) * ss_out(r->w, r->kw, r->s);
        bool pr = Sr % r->R != 0, pc = r->f % r->C != 0;
        partial_rows |= pr, partial_cols |= pc, both |= pr && pc;
        stride |= r->s > 1, pw |= !g && r->kh == 1 && r->kw == 1, fc |= Sr == 1, gemm |= g;
        nonsquare |= r->R != r->C;
        ceil_rows |= !g && (end_pad(r->h, r->kh, r->s) > 0 || end_pad(r->w, r->kw, r->s) > 0);
        alex += !strcmp(r->topo, "alexnet");
    }
    assert_true(partial_rows && partial_cols && both && stride && pw && fc && gemm && nonsquare && ceil_rows);
    assert_int_equal(alex, 10);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {cmocka_unit_test(test_coverage), cmocka_unit_test(test_small)};
    const struct CMUnitTest long_repo[] = {cmocka_unit_test(test_large)};
    return ENPU_TEST_MAIN_TIERS(argc, argv, repo, ENPU_NO_TESTS, long_repo, ENPU_NO_TESTS);
}
