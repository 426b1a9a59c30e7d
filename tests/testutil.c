#include "testutil.h"

#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <unistd.h>

#include "easynpu/compiler.h"
#include "easynpu/file.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "energy_check.h"
#include "report/sim_report.h"
#include "sim/sim_internal.h"

int enpu_test_have_shared_models(void) {
    struct stat st;
    if (stat(ENPU_SHARED_MODELS, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
    fprintf(stderr, "SKIP: %s is absent: these cases need the real test models "
                    "(cmake -DENPU_SHARED_MODELS=DIR)\n", ENPU_SHARED_MODELS);
    return 0;
}

int enpu_test_main_parts(int argc, char **argv, const struct CMUnitTest *repo, size_t n_repo,
                         const struct CMUnitTest *shared, size_t n_shared,
                         CMFixtureFunction setup, CMFixtureFunction teardown) {
    const char *part = argc > 1 ? argv[1] : "";
    bool run_repo = !strcmp(part, "repo") || !part[0], run_shared = !strcmp(part, "shared") || !part[0];
    if (!run_repo && !run_shared) {
        fprintf(stderr, "%s: unknown part '%s' (repo or shared)\n", argv[0], part);
        return 2;
    }
    int failed = 0;
    if (run_repo) failed += _cmocka_run_group_tests("repo", repo, n_repo, setup, teardown);
    if (run_shared) {
        if (!enpu_test_have_shared_models()) return part[0] ? ENPU_SKIP : failed;
        failed += _cmocka_run_group_tests("shared", shared, n_shared, setup, teardown);
    }
    return failed;
}

static void no_test(void **state) {
    (void)state;
    fail_msg("ENPU_NO_TESTS is a marker, not a test");
}
const struct CMUnitTest enpu_no_tests[1] = {cmocka_unit_test(no_test)};

int enpu_test_main_tiers(int argc, char **argv, const struct CMUnitTest *repo, size_t n_repo,
                         const struct CMUnitTest *shared, size_t n_shared,
                         const struct CMUnitTest *long_repo, size_t n_long_repo,
                         const struct CMUnitTest *long_shared, size_t n_long_shared) {
    const char *part = argc > 1 ? argv[1] : "";
    static const char *const names[4] = {"repo", "shared", "long", "long-shared"};
    const struct CMUnitTest *lists[4] = {repo, shared, long_repo, long_shared};
    for (int i = 0; i < 4; i++)
        if (lists[i] == enpu_no_tests) lists[i] = NULL;
    size_t ns[4] = {n_repo, n_shared, n_long_repo, n_long_shared};
    int which = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(part, names[i])) which = i;
    if (part[0] && (which < 0 || !lists[which])) {
        fprintf(stderr, "%s: no part '%s' (this program has:", argv[0], part);
        for (int i = 0; i < 4; i++)
            if (lists[i]) fprintf(stderr, " %s", names[i]);
        fprintf(stderr, ")\n");
        return 2;
    }
    int failed = 0;
    for (int i = 0; i < 4; i++) {
        if ((which >= 0 && which != i) || !lists[i]) continue;
        if ((i & 1) && !enpu_test_have_shared_models()) {
            if (which >= 0) return ENPU_SKIP;
            continue;
        }
        failed += _cmocka_run_group_tests(names[i], lists[i], ns[i], NULL, NULL);
    }
    return failed;
}

const char *enpu_test_shared_model(const char *rel) {
    static char buf[4096];
    if (!enpu_test_have_shared_models()) return NULL;
    snprintf(buf, sizeof buf, "%s/%s", ENPU_SHARED_MODELS, rel);
    return buf;
}

char *enpu_test_slurp(const char *path) {
    uint8_t *b = NULL;
    size_t n = 0;
    enpu_err err = {0};
    if (enpu_file_read(path, (size_t)1 << 24, &b, &n, &err)) fail_msg("%s", err.msg);
    return (char *)b;
}

int enpu_test_run(const char *cmd, char **out) {
    char *full = malloc(strlen(cmd) + 8);
    if (!full) return -1;
    sprintf(full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int c;
    while (buf && (c = fgetc(p)) != EOF) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
        }
        buf[n++] = (char)c;
    }
    if (buf) buf[n] = 0;
    int st = pclose(p);
    if (out) *out = buf; else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int assert_sya_cost_exact(const char *what, const enpu_program *p, const enpu_sim_result *res) {
    char first[512];
    int bad = enpu_test_sya_cost_diff(what, p, res, first, sizeof first);
    if (bad) fail_msg("%s: the systolic cost model differs from the simulator in %d figure(s), first: %s", what,
                      bad, first);
    return 0;
}

void enpu_test_assert_under_roof(const char *what, const enpu_arch *a, const enpu_sim_result *res) {
    int n = 0;
    const enpu_layer_stats *rows = enpu_sim_result_rows(res, &n);
    for (int i = 0; i < n; i++) {
        enpu_roofline r;
        enpu_report_roofline(a, &rows[i], &r);
        if (r.achieved > r.roof * (1 + 1e-9))
            fail_msg("%s: layer '%s' lies above the roof: %.4g MACs per cycle over %.0f DRAM bytes in %llu "
                     "cycles, the roof is %.4g", what, rows[i].name, r.achieved, r.bytes,
                     (unsigned long long)rows[i].cycles, r.roof);
    }
}

/* The row-stationary engine's: its model covers every instruction, its
 * cycles, activities, every memory's reads and writes and every datapath
 * operation (enpu_rs_model_diff). */
static int assert_rs_cost_exact(const char *what, const enpu_program *p, const enpu_sim_result *res) {
    char msg[512];
    int bad = enpu_rs_model_diff(p, res->layers, res->total_cycles, msg, sizeof msg);
    if (bad) fail_msg("%s: the row-stationary cost model differs from the simulator in %d figure(s), the first: %s",
                      what, bad, msg);
    return 0;
}

int enpu_test_assert_cost_exact(const char *what, const enpu_program *p, const enpu_sim_result *res) {
    assert_int_equal(res->mode, ENPU_SIM_CYCLE);
    assert_int_equal(res->n_layers, p->n_instr);
    if (p->arch.engine == ENPU_ENGINE_SYSTOLIC) return assert_sya_cost_exact(what, p, res);
    if (p->arch.engine == ENPU_ENGINE_ROWSTAT) return assert_rs_cost_exact(what, p, res);
    size_t n = (size_t)p->n_instr;
    int64_t *act = calloc(n * ENPU_ACT_COUNT, sizeof *act);
    assert_non_null(act);
    int64_t *rd = calloc(n, sizeof *rd), *wr = calloc(n, sizeof *wr);
    assert_true(rd && wr);
    int64_t total = enpu_cost_program(p, NULL, act);
    enpu_model_program(p, act, rd, wr); /* the same activities, with the DRAM words */
    int bad = 0, rows = 0, outside = 0;
    /* DRAM traffic per instruction (a dma's rows, an instruction fetched
     * from DRAM): equal for every instruction */
    for (size_t i = 0; i < n; i++) {
        const enpu_layer_stats *l = &res->layers[i];
        if ((uint64_t)rd[i] == l->reads[ENPU_MEM_OFFCHIP] && (uint64_t)wr[i] == l->writes[ENPU_MEM_OFFCHIP])
            continue;
        if (!bad++) fprintf(stderr, "%s: the model's DRAM traffic is not the simulator's:\n", what);
        fprintf(stderr, "  %4zu %-28.28s %-8s DRAM words read %llu / %lld, written %llu / %lld "
                        "(simulated / modelled)\n", i, l->name, l->op,
                (unsigned long long)l->reads[ENPU_MEM_OFFCHIP], (long long)rd[i],
                (unsigned long long)l->writes[ENPU_MEM_OFFCHIP], (long long)wr[i]);
        rows++;
    }
    for (size_t i = 0; i < n;) {
        size_t len = 1; /* the chain, split as enpu_cost_program does */
        while (i + len - 1 < n - 1 && p->instr[i + len - 1].fuse_next) len++;
        if (!enpu_cost_exact(&p->arch, &p->instr[i], (int)len)) {
            outside += (int)len;
            i += len;
            continue;
        }
        for (size_t e = i + len; i < e; i++) {
            const enpu_layer_stats *l = &res->layers[i];
            int row_bad = bad;
            for (int k = 0; k < ENPU_ACT_COUNT; k++) {
                int64_t m = act[i * ENPU_ACT_COUNT + (size_t)k];
                if ((uint64_t)m == l->activity[k]) continue;
                if (!bad++)
                    fprintf(stderr, "%s: the cost model is not the simulator:\n  %4s %-28s %-8s "
                                    "%-15s %10s %10s\n", what, "#", "layer", "op", "activity",
                            "simulated", "modelled");
                fprintf(stderr, "  %4zu %-28.28s %-8s %-15s %10llu %10lld\n", i, l->name, l->op,
                        enpu_activity_name((enpu_activity)k), (unsigned long long)l->activity[k],
                        (long long)m);
            }
            rows += bad > row_bad; /* equal activities make equal cycles (their sum) */
        }
    }
    if (!bad && !outside && res->total_cycles != (uint64_t)total) {
        bad++, rows++;
        fprintf(stderr, "%s: %llu simulated cycles in all, %lld modelled\n", what,
                (unsigned long long)res->total_cycles, (long long)total);
    }
    free(act), free(rd), free(wr);
    if (bad)
        fail_msg("%s: the cost model differs from the simulator on %d instruction(s), %d "
                 "activity figure(s)", what, rows, bad);
    return outside;
}

/* ---- end to end on a model ------------------------------------------------------- */

typedef struct e2e_ctx {
    const enpu_graph *qg;
    enpu_gexec *ex;
    int compared;
    const char *model;
} e2e_ctx;

/* enpu_test_e2e: called after every chain and host op: compares the stored outputs of its
 * instructions with the golden tensors of the same names. */
static int e2e_check_layer(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim,
                       enpu_err *err) {
    (void)st;
    e2e_ctx *m = ctx;
    const enpu_program *p = enpu_sim_program(sim);
    int n = 1;
    if (enpu_opcode_class(p->instr[layer].opcode) != ENPU_CLASS_CTRL)
        while (p->instr[layer + n - 1].fuse_next) n++;
    for (int i = layer; i < layer + n; i++) {
        const enpu_layer_info *li = &p->layers[i];
        if (li->io < 0 || !li->tensor || !li->tensor[0]) continue;
        const enpu_io_desc *d = &p->io[li->io];
        if (d->mem == ENPU_MEM_HOST || (d->dtype != ENPU_DT_INT8 && d->dtype != ENPU_DT_INT16)) continue;
        int t = enpu_graph_find_tensor(m->qg, li->tensor);
        if (t < 0)
            return enpu_fail(err, ENPU_E_INVALID, "%s: layer %d: tensor '%s' not in the graph",
                             m->model, i, li->tensor);
        const int8_t *want8 = enpu_gexec_value_i8(m->ex, t);
        const int16_t *want16 = enpu_gexec_value_i16(m->ex, t);
        int64_t numel = enpu_tensor_numel(&m->qg->tensors[t]);
        int64_t n_d = 1;
        for (int k = 0; k < d->rank; k++) n_d *= d->dims[k];
        if ((d->dtype == ENPU_DT_INT8 ? !want8 : !want16) || n_d != numel)
            return enpu_fail(err, ENPU_E_INVALID, "%s: layer %d: tensor '%s' has %lld elements, its "
                             "descriptor %lld", m->model, i, li->tensor, (long long)numel,
                             (long long)n_d);
        int32_t *got = malloc((size_t)(numel ? numel : 1) * sizeof *got);
        int rc = enpu_sim_read_tensor_i32(sim, d, got, numel, err);
        for (int64_t e = 0; !rc && e < numel; e++) {
            int32_t want = d->dtype == ENPU_DT_INT8 ? want8[e] : want16[e];
            if (got[e] == want) continue;
            /* coordinate in the NCHW user order */
            const enpu_tensor *tt = &m->qg->tensors[t];
            int64_t W = tt->rank >= 4 ? tt->dims[3] : 1, H = tt->rank >= 4 ? tt->dims[2] : 1;
            int64_t C = tt->rank >= 2 ? tt->dims[1] : 1;
            int64_t w = tt->rank >= 4 ? e % W : e, h = tt->rank >= 4 ? (e / W) % H : 0;
            int64_t c = tt->rank >= 4 ? (e / (W * H)) % C : 0;
            rc = enpu_fail(err, ENPU_E_MISMATCH,
                           "%s: layer %d '%s' (%s): tensor '%s' element %lld (c=%lld, h=%lld, "
                           "w=%lld): simulator %d, golden %d, written at cycle %llu",
                           m->model, i, li->name, enpu_opcode_mnemonic(p->instr[i].opcode),
                           li->tensor, (long long)e, (long long)c, (long long)h, (long long)w,
                           (int)got[e], (int)want,
                           (unsigned long long)enpu_sim_write_cycle(sim, d, e));
        }
        free(got);
        if (rc) return rc;
        m->compared++;
    }
    return 0;
}

enpu_arch enpu_test_preset(const char *name) {
    enpu_err err = {0};
    enpu_arch a;
    if (enpu_arch_preset(name, &a, &err)) fail_msg("%s", err.msg);
    return a;
}

enpu_graph *enpu_test_quantize(const char *onnx, const char *calib, const enpu_arch *a) {
    return enpu_test_quantize_full(onnx, NULL, calib, a, 8);
}

enpu_graph *enpu_test_quantize_opts(const char *onnx, const struct enpu_onnx_opts *io,
                                    const char *calib, const enpu_arch *a) {
    return enpu_test_quantize_full(onnx, io, calib, a, 8);
}

enpu_graph *enpu_test_quantize_bits(const char *onnx, const char *calib, const enpu_arch *a, int bits) {
    return enpu_test_quantize_full(onnx, NULL, calib, a, bits);
}

enpu_graph *enpu_test_quantize_full(const char *onnx, const struct enpu_onnx_opts *io,
                                    const char *calib, const enpu_arch *a, int bits) {
    enpu_err err = {0};
    enpu_graph *g = NULL, *qg = NULL;
    if (enpu_onnx_load_opts(onnx, io, &g, &err)) fail_msg("%s", err.msg);
    enpu_buf *cal = NULL;
    int n_cal = 0;
    if (calib && enpu_calib_load(g, calib, &cal, &n_cal, &err)) fail_msg("%s", err.msg);
    enpu_quant_opts qo;
    enpu_compile_quant_opts(a, &qo); /* the arch's numerics and host kinds */
    qo.bits = bits;
    qo.quiet = true;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &err)) fail_msg("quantize %s: %s", onnx, err.msg);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(g);
    return qg;
}

/* Compile, simulate in both modes and check against the golden reference:
 * the common part of enpu_test_e2e and enpu_test_e2e_q, on float inputs
 * (in_f) or int8 ones (in8). */
static uint64_t e2e_run(const char *name, const enpu_graph *qg, const enpu_buf *in_f,
                        const int8_t *const *in8, int n_in, const enpu_arch *arch_in,
                        const enpu_compile_opts *co, enpu_test_e2e_result *out) {
    enpu_err err = {0};
    enpu_arch arch = *arch_in;
    enpu_program prog;
    enpu_compile_report rep;
    if (enpu_compile(qg, &arch, co, &prog, &rep, &err)) {
        fprintf(stderr, "%s: compile: %s\n", name, err.msg);
        fail();
    }
    /* the golden reference on the same input */
    e2e_ctx m = {qg, NULL, 0, name};
    assert_int_equal(enpu_gexec_new(qg, &m.ex, &err), 0);
    if (in8 ? enpu_gexec_run_i8(m.ex, in8, &err) : enpu_gexec_run(m.ex, in_f, &err)) {
        fprintf(stderr, "%s: golden: %s\n", name, err.msg);
        fail();
    }
    int64_t model_total;
    if (arch.engine == ENPU_ENGINE_SYSTOLIC) {
        int64_t *act = calloc((size_t)prog.n_instr * ENPU_ACT_COUNT, sizeof *act);
        assert_non_null(act);
        model_total = enpu_sya_model_program(&prog, act, NULL, NULL, NULL);
        free(act);
    } else {
        model_total = enpu_cost_program(&prog, NULL, NULL);
    }
    if (out) {
        memset(out, 0, sizeof *out);
        out->modelled = model_total;
        out->offchip = rep.offchip;
        out->n_instr = prog.n_instr;
    }
    enpu_compile_report_free(&rep);
    uint64_t sim_cycles = 0;
    for (int mode = 0; mode < 2; mode++) {
        enpu_sim_opts o = {0};
        o.mode = mode ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        o.check = mode == 0;
        o.on_layer = e2e_check_layer;
        o.cb_ctx = &m;
        m.compared = 0;
        enpu_sim *sim = NULL;
        enpu_sim_result res;
        if (enpu_sim_new(&prog, &arch, &o, &sim, &err)) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            fail();
        }
        if (in8 ? enpu_sim_run_i8(sim, in8, n_in, &res, &err)
                : enpu_sim_run(sim, in_f, n_in, &res, &err)) {
            fprintf(stderr, "%s (%s mode): %s\n", name, enpu_sim_mode_name(o.mode), err.msg);
            fail();
        }
        assert_true(m.compared > 0);
        /* outputs equal the golden's, bit for bit (floats of a host op too) */
        assert_int_equal(res.n_outputs, qg->n_outputs);
        for (int i = 0; i < res.n_outputs; i++) {
            enpu_buf gold;
            assert_int_equal(enpu_gexec_output(m.ex, i, &gold, &err), 0);
            int64_t n = enpu_buf_numel(&gold);
            assert_int_equal(enpu_buf_numel(&res.outputs[i]), n);
            assert_memory_equal(gold.data, res.outputs[i].data, (size_t)n * sizeof(float));
            if (out && mode == 0 && i < ENPU_TEST_E2E_OUTPUTS && res.raw_outputs &&
                res.raw_outputs[i].data && n <= ENPU_TEST_E2E_OUTPUT_MAX) {
                memcpy(out->out8[i], res.raw_outputs[i].data, (size_t)n);
                out->n_out8[i] = n;
            }
            enpu_buf_free(&gold);
        }
        if (mode == 0) {
            assert_true(res.bit_exact);
            sim_cycles = res.total_cycles;
            fprintf(stderr, "%s on %s: %llu cycles (modelled %lld), utilization %.1f%%, %d layer "
                            "outputs bit-exact with the golden reference\n",
                    name, arch.name, (unsigned long long)res.total_cycles, (long long)model_total,
                    100.0 * res.utilization, m.compared);
            enpu_test_assert_cost_exact(name, &prog, &res);
            enpu_test_assert_under_roof(name, &arch, &res);
            /* and the energy model counts, without simulating, what the
             * simulator counted (docs/energy.md) */
            enpu_layer_stats *est = NULL, tot;
            assert_int_equal(enpu_estimate_program(&prog, &est, &tot, &err), 0);
            enpu_check_counts(name, &prog, &res, est, &tot, true);
            free(est);
            if (out) {
                enpu_energy_costs c;
                enpu_energy es, ee;
                enpu_energy_costs_of(&arch, &c);
                enpu_energy_of(&c, res.reads, res.writes, res.uops, &es);
                enpu_energy_of(&c, tot.reads, tot.writes, tot.uops, &ee);
                out->energy_pj = es.total_pj, out->estimate_pj = ee.total_pj;
            }
            if (out) {
                enpu_sim_npu_share(&res, &out->share);
                out->npu_macs = res.total_macs;
                out->host_macs = res.host_macs;
                out->cycles = res.total_cycles;
                out->compared = m.compared;
                out->dram_read = res.reads[ENPU_MEM_OFFCHIP];
                out->dram_written = res.writes[ENPU_MEM_OFFCHIP];
            }
        } else {
            assert_int_equal(res.total_cycles, 0);
        }
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
    }
    assert_true(sim_cycles > 0);
    enpu_gexec_free(m.ex);
    enpu_program_free(&prog);
    return sim_cycles;
}

uint64_t enpu_test_e2e(const char *name, const char *onnx, const char *calib, const char *input,
                       const enpu_arch *arch_in, const enpu_compile_opts *co, enpu_test_e2e_result *out) {
    return enpu_test_e2e_opts(name, onnx, NULL, calib, input, arch_in, co, out);
}

uint64_t enpu_test_e2e_opts(const char *name, const char *onnx, const struct enpu_onnx_opts *io,
                            const char *calib, const char *input, const enpu_arch *arch_in,
                            const enpu_compile_opts *co, enpu_test_e2e_result *out) {
    return enpu_test_e2e_full(name, onnx, io, calib, input, arch_in, co, 8, out);
}

uint64_t enpu_test_e2e_bits(const char *name, const char *onnx, const char *calib, const char *input,
                            const enpu_arch *arch_in, const enpu_compile_opts *co, int bits,
                            enpu_test_e2e_result *out) {
    return enpu_test_e2e_full(name, onnx, NULL, calib, input, arch_in, co, bits, out);
}

uint64_t enpu_test_e2e_full(const char *name, const char *onnx, const struct enpu_onnx_opts *io,
                            const char *calib, const char *input, const enpu_arch *arch_in,
                            const enpu_compile_opts *co, int bits, enpu_test_e2e_result *out) {
    enpu_err err = {0};
    enpu_graph *qg = enpu_test_quantize_full(onnx, io, calib, arch_in, bits);
    /* one file per graph input, comma-separated */
    enpu_buf in[8];
    int n_in = 0;
    char list[4096];
    snprintf(list, sizeof list, "%s", input);
    for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        assert_true(n_in < 8);
        assert_int_equal(enpu_tensor_read(f, &in[n_in], &err), 0);
        assert_int_equal(enpu_buf_to_f32(&in[n_in++], &err), 0);
    }
    uint64_t sim_cycles = e2e_run(name, qg, in, NULL, n_in, arch_in, co, out);
    for (int k = 0; k < n_in; k++) enpu_buf_free(&in[k]);
    enpu_graph_free(qg);
    return sim_cycles;
}

uint64_t enpu_test_e2e_q(const char *name, const enpu_graph *qg, const int8_t *const *inputs,
                         const enpu_arch *arch, const enpu_compile_opts *co,
                         enpu_test_e2e_result *out) {
    return e2e_run(name, qg, NULL, inputs, qg->n_inputs, arch, co, out);
}

/* ---- fast-forward against the per-cycle path ------------------------------------------ */

typedef struct ff_run {
    int rc;
    char msg[ENPU_ERR_MSG_MAX];
    enpu_sim_result res;
    uint8_t *mem[4];
    int64_t mem_n[4];
    uint64_t *wc[3];
    int64_t wc_n[3];
    char *trace, *vcd;
    size_t trace_n, vcd_n;
    uint64_t ff;                     /* cycles fast-forwarded */
} ff_run;

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[len] = 0;
    *n = (size_t)len;
    return b;
}

static void ff_one(const enpu_program *p, const enpu_arch *a, const enpu_buf *in_f,
                   const int8_t *const *in_i8, int n_in, bool per_cycle, bool portable, int obs,
                   uint64_t from, uint64_t to, ff_run *r) {
    memset(r, 0, sizeof *r);
    enpu_err err = {0};
    enpu_sim_opts o = {0};
    o.per_cycle = per_cycle;
    o.trace = obs == 1;
    o.vcd = obs == 2;
    o.vcd_from = from;
    o.vcd_to = to;
    enpu_sim *sim = NULL;
    if (enpu_sim_new(p, a, &o, &sim, &err)) fail_msg("enpu_sim_new: %s", err.msg);
    sim->ff_portable = portable;
    r->rc = in_f ? enpu_sim_run(sim, in_f, n_in, &r->res, &err) : enpu_sim_run_i8(sim, in_i8, n_in, &r->res, &err);
    snprintf(r->msg, sizeof r->msg, "%s", r->rc ? err.msg : "");
    r->ff = sim->ff_cycles;
    static const int mems[4] = {ENPU_MEM_MAIN, ENPU_MEM_SKIP, ENPU_MEM_WEIGHT, ENPU_MEM_DRAM};
    for (int m = 0; m < 4; m++) {
        const uint8_t *d = enpu_sim_memory(sim, mems[m], &r->mem_n[m]);
        if (!d) r->mem_n[m] = 0;
        r->mem[m] = malloc((size_t)r->mem_n[m] + 1);
        if (d) memcpy(r->mem[m], d, (size_t)r->mem_n[m]);
    }
    const sim_mem *sm = &sim->mem;
    const uint64_t *wc[3] = {sm->main_wc, sm->skip_wc, sm->dram_wc};
    const int64_t wn[3] = {sm->main_words, sm->skip_words, sm->dram_words};
    for (int m = 0; m < 3; m++) {
        r->wc_n[m] = wc[m] ? wn[m] : 0;
        r->wc[m] = malloc((size_t)r->wc_n[m] * sizeof(uint64_t) + 1);
        if (wc[m]) memcpy(r->wc[m], wc[m], (size_t)r->wc_n[m] * sizeof(uint64_t));
    }
    if (obs && r->rc == 0) {
        char path[] = "/tmp/enpu_test_ff_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        int rc = obs == 1 ? enpu_report_trace(sim, path, &err) : enpu_report_vcd(sim, path, &err);
        if (rc) fail_msg("writing the %s: %s", obs == 1 ? "trace" : "VCD", err.msg);
        if (obs == 1) r->trace = slurp(path, &r->trace_n);
        else r->vcd = slurp(path, &r->vcd_n);
        unlink(path);
    }
    enpu_sim_free(sim);
}

static void ff_free(ff_run *r) {
    enpu_sim_result_free(&r->res);
    for (int m = 0; m < 4; m++) free(r->mem[m]);
    for (int m = 0; m < 3; m++) free(r->wc[m]);
    free(r->trace);
    free(r->vcd);
}

static bool same_stats(const char *what, const char *kind, int i, const enpu_layer_stats *x,
                       const enpu_layer_stats *y) {
    bool same = !strcmp(x->name, y->name) && !strcmp(x->op, y->op) && x->instr == y->instr &&
                x->chain_head == y->chain_head && x->start_cycle == y->start_cycle &&
                x->end_cycle == y->end_cycle && x->cycles == y->cycles && x->macs == y->macs &&
                x->ideal_cycles == y->ideal_cycles && x->compute_model == y->compute_model &&
                x->psum_peak == y->psum_peak && x->host == y->host && x->group == y->group &&
                x->chain_pos == y->chain_pos && x->n_instr == y->n_instr && x->n_dma == y->n_dma &&
                !memcmp(x->activity, y->activity, sizeof x->activity) &&
                !memcmp(x->reads, y->reads, sizeof x->reads) &&
                !memcmp(x->writes, y->writes, sizeof x->writes) &&
                !memcmp(x->uops, y->uops, sizeof x->uops);
    if (!same) {
        fprintf(stderr, "%s: %s %d (%s) differs between the per-cycle path and fast-forward:\n", what,
                kind, i, x->name);
        fprintf(stderr, "  cycles %llu / %llu, start %llu / %llu, end %llu / %llu, psum_peak %d / %d\n",
                (unsigned long long)x->cycles, (unsigned long long)y->cycles,
                (unsigned long long)x->start_cycle, (unsigned long long)y->start_cycle,
                (unsigned long long)x->end_cycle, (unsigned long long)y->end_cycle, x->psum_peak,
                y->psum_peak);
        for (int k = 0; k < ENPU_ACT_COUNT; k++)
            if (x->activity[k] != y->activity[k])
                fprintf(stderr, "  %s %llu / %llu\n", enpu_activity_name((enpu_activity)k),
                        (unsigned long long)x->activity[k], (unsigned long long)y->activity[k]);
        for (int m = 0; m < ENPU_MEM_COUNT; m++)
            if (x->reads[m] != y->reads[m] || x->writes[m] != y->writes[m])
                fprintf(stderr, "  %s reads %llu / %llu, writes %llu / %llu\n",
                        enpu_memory_name((enpu_memory)m), (unsigned long long)x->reads[m],
                        (unsigned long long)y->reads[m], (unsigned long long)x->writes[m],
                        (unsigned long long)y->writes[m]);
        for (int o = 0; o < ENPU_UOP_COUNT; o++)
            if (x->uops[o] != y->uops[o])
                fprintf(stderr, "  %s operations %llu / %llu\n", enpu_unit_op_name((enpu_unit_op)o),
                        (unsigned long long)x->uops[o], (unsigned long long)y->uops[o]);
    }
    return same;
}

/* The first difference of two byte strings, reported with its context. */
static bool same_bytes(const char *what, const char *kind, const void *x, size_t nx, const void *y,
                       size_t ny) {
    if (nx == ny && (nx == 0 || !memcmp(x, y, nx))) return true;
    size_t i = 0, n = nx < ny ? nx : ny;
    const unsigned char *a = x, *b = y;
    while (i < n && a[i] == b[i]) i++;
    fprintf(stderr, "%s: %s differs between the per-cycle path and fast-forward at byte %zu "
                    "(%zu / %zu bytes)\n", what, kind, i, nx, ny);
    if (!strcmp(kind, "trace") || !strcmp(kind, "VCD")) {
        size_t lo = i > 120 ? i - 120 : 0;
        fprintf(stderr, "  per-cycle: ...%.*s...\n  fast:      ...%.*s...\n",
                (int)((i + 120 < nx ? i + 120 : nx) - lo), a + lo,
                (int)((i + 120 < ny ? i + 120 : ny) - lo), b + lo);
    }
    return false;
}

static bool same_runs(const char *what, const ff_run *x, const ff_run *y) {
    bool ok = true;
    if (x->rc != y->rc || strcmp(x->msg, y->msg)) {
        fprintf(stderr, "%s: per-cycle path: status %d '%s'; fast-forward: status %d '%s'\n", what,
                x->rc, x->msg, y->rc, y->msg);
        return false;
    }
    const enpu_sim_result *a = &x->res, *b = &y->res;
    if (a->total_cycles != b->total_cycles || a->n_layers != b->n_layers || a->n_rows != b->n_rows ||
        a->n_outputs != b->n_outputs || a->bit_exact != b->bit_exact) {
        fprintf(stderr, "%s: per-cycle path %llu cycles, fast-forward %llu\n", what,
                (unsigned long long)a->total_cycles, (unsigned long long)b->total_cycles);
        return false;
    }
    for (int i = 0; i < a->n_layers; i++) ok &= same_stats(what, "instruction", i, &a->layers[i], &b->layers[i]);
    for (int i = 0; i < a->n_rows; i++) ok &= same_stats(what, "row", i, &a->rows[i], &b->rows[i]);
    for (int i = 0; i < a->n_outputs; i++) {
        ok &= same_bytes(what, "output", a->outputs[i].data, (size_t)enpu_buf_numel(&a->outputs[i]) * 4,
                         b->outputs[i].data, (size_t)enpu_buf_numel(&b->outputs[i]) * 4);
        if (a->raw_outputs && a->raw_outputs[i].data)
            ok &= same_bytes(what, "raw output", a->raw_outputs[i].data,
                             (size_t)enpu_buf_numel(&a->raw_outputs[i]), b->raw_outputs[i].data,
                             (size_t)enpu_buf_numel(&b->raw_outputs[i]));
    }
    static const char *const mn[4] = {"main DTCM", "skip DTCM", "weight memory", "DRAM"};
    for (int m = 0; m < 4; m++) ok &= same_bytes(what, mn[m], x->mem[m], (size_t)x->mem_n[m], y->mem[m], (size_t)y->mem_n[m]);
    static const char *const wn[3] = {"main DTCM write cycles", "skip DTCM write cycles", "DRAM write cycles"};
    for (int m = 0; m < 3; m++)
        ok &= same_bytes(what, wn[m], x->wc[m], (size_t)x->wc_n[m] * 8, y->wc[m], (size_t)y->wc_n[m] * 8);
    ok &= same_bytes(what, "trace", x->trace, x->trace_n, y->trace, y->trace_n);
    ok &= same_bytes(what, "VCD", x->vcd, x->vcd_n, y->vcd, y->vcd_n);
    return ok;
}

uint64_t enpu_test_assert_ff_equal(const char *what, const enpu_program *p, const enpu_arch *a,
                                   const enpu_buf *in_f32, const int8_t *const *in_i8, int n_in,
                                   bool trace, uint64_t *ff_cycles, uint64_t *compute_cycles) {
    ff_run x, y;
    bool ok = true;
    uint64_t cycles = 0;
    /* no record (the fast path's datapath as compiled, then its portable
     * one), a trace, then VCD windows: the start, one in the middle of the
     * run (so that spans end at it and resume after it) */
    for (int obs = 0; obs < 5 && ok; obs++) {
        uint64_t from = 0, to = 0;
        int rec = obs < 2 ? 0 : obs == 2 ? 1 : 2;
        if (obs == 2 && !trace) continue;
        if (obs == 3) from = 0, to = 700;
        if (obs == 4) from = cycles / 2, to = cycles / 2 + 1500;
        ff_one(p, a, in_f32, in_i8, n_in, true, false, rec, from, to, &x);
        ff_one(p, a, in_f32, in_i8, n_in, false, obs == 1, rec, from, to, &y);
        char w[300];
        static const char *const on[5] = {"", " (portable datapath)", " (trace)", " (VCD at 0)",
                                          " (VCD in the middle)"};
        snprintf(w, sizeof w, "%s%s", what, on[obs]);
        ok = same_runs(w, &x, &y);
        assert_int_equal(x.ff, 0);
        if (obs == 0) {
            cycles = x.res.total_cycles;
            if (ff_cycles) *ff_cycles = y.ff;
            if (compute_cycles) *compute_cycles = x.res.activity[ENPU_ACT_COMPUTE];
        }
        ff_free(&x);
        ff_free(&y);
    }
    assert_true(ok);
    return cycles;
}

uint64_t enpu_test_assert_ff_equal_once(const char *what, const enpu_program *p, const enpu_arch *a,
                                        const enpu_buf *in_f32, const int8_t *const *in_i8, int n_in,
                                        uint64_t *ff_cycles, uint64_t *compute_cycles) {
    ff_run x, y;
    ff_one(p, a, in_f32, in_i8, n_in, true, false, 0, 0, 0, &x);
    ff_one(p, a, in_f32, in_i8, n_in, false, false, 0, 0, 0, &y);
    bool ok = same_runs(what, &x, &y);
    uint64_t cycles = x.res.total_cycles;
    assert_int_equal(x.ff, 0);
    if (ff_cycles) *ff_cycles = y.ff;
    if (compute_cycles) *compute_cycles = x.res.activity[ENPU_ACT_COMPUTE];
    ff_free(&x);
    ff_free(&y);
    assert_true(ok);
    return cycles;
}

/* ---- a run stopped early, on both paths ---------------------------------------------- */

typedef struct stop_ctx {
    int calls, stop_at;          /* the callback fails at call stop_at (0: never) */
} stop_ctx;

static int stop_cb(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim, enpu_err *err) {
    (void)st, (void)sim;
    stop_ctx *c = ctx;
    if (++c->calls == c->stop_at) return enpu_fail(err, ENPU_E_MISMATCH, "stopped by the test at layer %d", layer);
    return 0;
}

static int stopped_run(const enpu_program *p, const enpu_arch *a, const enpu_buf *in, int n_in, bool per_cycle,
                       uint64_t max_cycles, int stop_at, enpu_sim_result *res, char *msg, size_t n) {
    enpu_err err = {0};
    enpu_sim_opts o = {0};
    stop_ctx c = {0, stop_at};
    o.per_cycle = per_cycle;
    o.max_cycles = max_cycles;
    o.on_layer = stop_cb;
    o.cb_ctx = &c;
    enpu_sim *sim = NULL;
    if (enpu_sim_new(p, a, &o, &sim, &err)) fail_msg("enpu_sim_new: %s", err.msg);
    int rc = enpu_sim_run(sim, in, n_in, res, &err);
    snprintf(msg, n, "%s", rc ? err.msg : "");
    enpu_sim_free(sim);
    return rc ? rc : c.calls;
}

int enpu_test_assert_ff_stops(const char *what, const enpu_program *p, const enpu_arch *a, const enpu_buf *in,
                              int n_in, const uint64_t *limits, int n_limits) {
    int stops = 0, calls = -1;
    for (int k = 0; calls < 0 || k <= n_limits + calls; k++) {
        /* first a whole run (its callbacks counted), then each limit, then
         * a callback failing at each of its calls */
        uint64_t max = k == 0 ? 0 : k <= n_limits ? limits[k - 1] : 0;
        int stop_at = k > n_limits ? k - n_limits : 0;
        enpu_sim_result x, y;
        char mx[ENPU_ERR_MSG_MAX], my[ENPU_ERR_MSG_MAX], w[300];
        int rx = stopped_run(p, a, in, n_in, true, max, stop_at, &x, mx, sizeof mx);
        int ry = stopped_run(p, a, in, n_in, false, max, stop_at, &y, my, sizeof my);
        snprintf(w, sizeof w, "%s, %s %llu", what, stop_at ? "callback failing at call" : "cycle limit",
                 (unsigned long long)(stop_at ? (uint64_t)stop_at : max));
        if (rx != ry || strcmp(mx, my)) fail_msg("%s: per-cycle path %d '%s', fast-forward %d '%s'", w, rx, mx, ry, my);
        if (k == 0) {
            if (rx < 0) fail_msg("%s: the whole run failed: %s", w, mx);
            calls = rx;
        } else {
            stops += rx < 0;
        }
        bool ok = x.total_cycles == y.total_cycles && x.n_layers == y.n_layers;
        for (int i = 0; ok && i < x.n_layers; i++) ok = same_stats(w, "instruction", i, &x.layers[i], &y.layers[i]);
        if (!ok) fail_msg("%s: the statistics differ between the per-cycle path and fast-forward", w);
        enpu_sim_result_free(&x);
        enpu_sim_result_free(&y);
    }
    return stops;
}

void enpu_test_conv_program(const char *arch, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t k,
                            int64_t s, enpu_program *p, enpu_buf *in) {
    enpu_err err = {0};
    enpu_graph *g = enpu_graph_new("conv");
    int64_t xd[] = {1, ci, h, w}, wd[] = {co, ci, k, k}, bd[] = {co};
    int x = enpu_graph_add_tensor(g, "x", ENPU_DT_FLOAT32, 4, xd, &err);
    int wt = enpu_graph_add_tensor(g, "w", ENPU_DT_FLOAT32, 4, wd, &err);
    int b = enpu_graph_add_tensor(g, "b", ENPU_DT_FLOAT32, 1, bd, &err);
    int y = enpu_graph_add_tensor(g, "y", ENPU_DT_FLOAT32, -1, NULL, &err);
    assert_true(x >= 0 && wt >= 0 && b >= 0 && y >= 0);
    const int64_t nw = co * ci * k * k;
    float *wv = malloc((size_t)nw * sizeof *wv), *bv = malloc((size_t)co * sizeof *bv);
    assert_true(wv && bv);
    for (int64_t i = 0; i < nw; i++) wv[i] = (float)((i * 37) % 17 - 8) / 16.0f;
    for (int64_t i = 0; i < co; i++) bv[i] = (float)(i % 5 - 2) / 8.0f;
    enpu_tensor_set_data(&g->tensors[wt], wv);
    enpu_tensor_set_data(&g->tensors[b], bv);
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    int ins[3] = {x, wt, b};
    int n = enpu_graph_add_node(g, "conv", ENPU_OP_CONV, 3, ins, 1, &y, &err);
    assert_true(n >= 0);
    enpu_conv_attr *a = &g->nodes[n].attr.conv;
    a->group = 1;
    for (int d = 0; d < 2; d++) a->w.stride[d] = s, a->w.dilation[d] = 1;
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    if (enpu_graph_toposort(g, &err) || enpu_graph_infer_shapes(g, &err) || enpu_graph_validate(g, &err))
        fail_msg("%s", err.msg);
    enpu_arch ar = enpu_test_preset(arch);
    enpu_quant_opts qo;
    enpu_compile_quant_opts(&ar, &qo);
    qo.quiet = true;
    enpu_graph *qg = NULL;
    assert_int_equal(enpu_quantize_graph(g, NULL, 0, &qo, &qg, NULL, &err), 0);
    if (enpu_compile(qg, &ar, NULL, p, NULL, &err)) fail_msg("%s", err.msg);
    assert_int_equal(enpu_buf_alloc(in, ENPU_DT_FLOAT32, 4, xd, &err), 0);
    for (int64_t i = 0; i < enpu_buf_numel(in); i++) ((float *)in->data)[i] = (float)((i * 7) % 23 - 11) / 8.0f;
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

int enpu_test_run_golden(const char *what, const enpu_program *p, const enpu_arch *a, const enpu_graph *qg,
                         const enpu_buf *in, enpu_sim_result *res) {
    enpu_err err = {0};
    enpu_gexec *ex = NULL;
    assert_int_equal(enpu_gexec_new(qg, &ex, &err), 0);
    if (enpu_gexec_run(ex, in, &err)) fail_msg("%s: golden reference: %s", what, err.msg);
    enpu_golden_check gc = {qg, ex, 0};
    enpu_sim_opts o = {0};
    o.mode = ENPU_SIM_CYCLE;
    o.on_layer = enpu_golden_check_layer;
    o.cb_ctx = &gc;
    enpu_sim *sim = NULL;
    if (enpu_sim_new(p, a, &o, &sim, &err) || enpu_sim_run(sim, in, 1, res, &err)) fail_msg("%s: %s", what, err.msg);
    if (enpu_golden_check_outputs(&gc, res, &err)) fail_msg("%s: outputs: %s", what, err.msg);
    enpu_sim_free(sim);
    enpu_gexec_free(ex);
    return gc.compared;
}
