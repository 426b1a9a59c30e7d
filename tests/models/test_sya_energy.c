/* The systolic engine's counts and energy (docs/systolic.md "Statistics",
 * "Energy"):
 *  - the cost model (enpu_sya_model_program: closed forms and its own
 *    scoreboard) equals the simulator instruction by instruction -- cycles,
 *    every activity, every memory's reads and writes, every datapath
 *    operation -- on the default model on every preset and scheme, on the
 *    fast path and the per-cycle path;
 *  - that comparison is not vacuous: the simulator made to miscount one
 *    figure of one instruction by one (the white-box fault switch,
 *    sim_internal.h sim_fault) fails it, naming the figure and the
 *    instruction, for every figure the engine counts;
 *  - the estimate without simulating (enpu_estimate_program) gives the
 *    simulator's counts and energy;
 *  - the energy of the default model on the three presets, by unit and
 *    level, and per layer: the figures docs/systolic.md "Energy" quotes. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/energy.h"
#include "energy_check.h"
#include "report/energy_report.h"
#include "sim/sim_internal.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel

static const char *const presets[3] = {"systolic", "systolic-1x4", "systolic-4x1"};

/* The default model compiled for a, and its input. */
static void kws(const enpu_graph *qg, const enpu_arch *a, enpu_program *p, enpu_buf *in) {
    enpu_err err = {0};
    if (enpu_compile(qg, a, NULL, p, NULL, &err) || enpu_tensor_read(REPO("models/kws_cnn/sample_0.npy"), in, &err) ||
        enpu_buf_to_f32(in, &err))
        fail_msg("%s", err.msg);
}

/* A cycle-mode run of p (fast path unless per_cycle), with fault f. */
static void simulate(const enpu_program *p, const enpu_arch *a, const enpu_buf *in, bool per_cycle,
                     const sim_fault *f, enpu_sim_result *res) {
    enpu_err err = {0};
    enpu_sim_opts o = {0};
    o.per_cycle = per_cycle;
    enpu_sim *sim = NULL;
    if (enpu_sim_new(p, a, &o, &sim, &err)) fail_msg("%s", err.msg);
    if (f) sim->fault = *f;
    if (enpu_sim_run(sim, in, 1, res, &err)) fail_msg("%s", err.msg);
    enpu_sim_free(sim);
}

static enpu_graph *kws_graph(void) {
    enpu_arch a = enpu_test_preset("systolic");
    /* the presets differ in the array only: one quantized graph */
    return enpu_test_quantize(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &a);
}

/* Every preset and scheme, both paths: the cost model is the simulator, and
 * the estimate's counts and energy are the simulator's. */
static void test_model_equals_simulator(void **state) {
    (void)state;
    static const int schemes[4] = {0, 1, 3, 4};
    enpu_graph *qg = kws_graph();
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 4; s++) {
            enpu_arch a = enpu_test_preset(presets[i]);
            a.sya_scheme = schemes[s];
            enpu_program p;
            enpu_buf in;
            kws(qg, &a, &p, &in);
            for (int pc = 0; pc < 2; pc++) {
                char what[96];
                snprintf(what, sizeof what, "kws_cnn on %s, scheme %d%s", presets[i], schemes[s],
                         pc ? ", per cycle" : "");
                enpu_sim_result res;
                simulate(&p, &a, &in, pc, NULL, &res);
                enpu_test_assert_cost_exact(what, &p, &res);
                enpu_layer_stats *est = NULL, tot;
                enpu_err err = {0};
                assert_int_equal(enpu_estimate_program(&p, &est, &tot, &err), 0);
                enpu_check_counts(what, &p, &res, est, &tot, true);
                free(est);
                enpu_sim_result_free(&res);
            }
            enpu_buf_free(&in);
            enpu_program_free(&p);
        }
    enpu_graph_free(qg);
}

/* The mutation test: each figure the systolic engine counts, miscounted by
 * one on one instruction, is caught by the comparison, which names it. */
static void test_miscount_caught(void **state) {
    (void)state;
    enpu_graph *qg = kws_graph();
    enpu_arch a = enpu_test_preset("systolic");
    enpu_program p;
    enpu_buf in;
    kws(qg, &a, &p, &in);
    enpu_sim_result res;
    simulate(&p, &a, &in, false, NULL, &res);
    char first[512];
    assert_int_equal(enpu_test_sya_cost_diff("no fault", &p, &res, first, sizeof first), 0);
    enpu_sim_result_free(&res);
    static const struct {
        sim_fault_kind kind;
        int index;
        const char *name;
    } figs[] = {
        {SIM_FAULT_READS, ENPU_MEM_MAIN_DTCM, "main_dtcm reads"},
        {SIM_FAULT_WRITES, ENPU_MEM_MAIN_DTCM, "main_dtcm writes"},
        {SIM_FAULT_READS, ENPU_MEM_WEIGHT_MEM, "weight_mem reads"},
        {SIM_FAULT_READS, ENPU_MEM_ITCM, "itcm reads"},
        {SIM_FAULT_READS, ENPU_MEM_PE_REG, "pe_reg reads"},
        {SIM_FAULT_WRITES, ENPU_MEM_PE_REG, "pe_reg writes"},
        {SIM_FAULT_READS, ENPU_MEM_ACC, "acc reads"},
        {SIM_FAULT_WRITES, ENPU_MEM_ACC, "acc writes"},
        {SIM_FAULT_READS, ENPU_MEM_MUX, "mux reads"},
        {SIM_FAULT_READS, ENPU_MEM_SHAPE, "shape reads"},
        {SIM_FAULT_WRITES, ENPU_MEM_SHAPE, "shape writes"},
        {SIM_FAULT_UOPS, ENPU_UOP_MAC, "mac operations"},
        {SIM_FAULT_UOPS, ENPU_UOP_REQUANT, "requant operations"},
        /* a controller cycle attributed to another activity: two figures,
         * the controller's named first */
        {SIM_FAULT_ACTIVITY, ENPU_ACT_COMPUTE, "activity controller"},
        {SIM_FAULT_ACTIVITY, ENPU_ACT_PIPELINE_FILL, "activity controller"},
    };
    int n = (int)(sizeof figs / sizeof figs[0]);
    for (int k = 0; k < n; k++) {
        /* a different instruction each time, one more or one less */
        sim_fault f = {figs[k].kind, k % p.n_instr, figs[k].index, k % 2 ? -1 : 1};
        /* instruction 0 has controller cycles (the fetch) to give away */
        if (f.kind == SIM_FAULT_ACTIVITY) f.instr = 0, f.delta = 1;
        while (enpu_opcode_class(p.instr[f.instr].opcode) != ENPU_CLASS_SYA && f.index != ENPU_MEM_ITCM)
            f.instr = (f.instr + 1) % p.n_instr;
        simulate(&p, &a, &in, k % 3 == 0, &f, &res);
        char what[128], want[400];
        snprintf(what, sizeof what, "fault: %s of instr %d %+lld (an expected failure)", figs[k].name, f.instr,
                 (long long)f.delta);
        int bad = enpu_test_sya_cost_diff(what, &p, &res, first, sizeof first);
        assert_int_equal(bad, f.kind == SIM_FAULT_ACTIVITY ? 2 : 1);
        snprintf(want, sizeof want, "instr %d '%s' (%s) %s", f.instr, res.layers[f.instr].name,
                 res.layers[f.instr].op, figs[k].name);
        if (!strstr(first, want)) fail_msg("%s: the comparison said '%s', not '%s...'", what, first, want);
        enpu_sim_result_free(&res);
    }
    fprintf(stderr, "%d miscounts (each figure the systolic engine counts, one instruction, by one), each "
                    "caught and named by the comparison with the cost model\n", n);
    enpu_buf_free(&in);
    enpu_program_free(&p);
    enpu_graph_free(qg);
}

/* A whole text file, NUL-terminated. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    return b;
}

/* The next number of a table row from *p ("1,100.9": thousands separators),
 * *p moved past it. */
static double cell(const char **p) {
    const char *s = *p;
    while (*s && *s != '\n' && !(*s >= '0' && *s <= '9')) s++;
    char buf[64];
    size_t n = 0;
    while ((*s >= '0' && *s <= '9') || *s == ',' || *s == '.') {
        if (*s != ',' && n + 1 < sizeof buf) buf[n++] = *s;
        s++;
    }
    buf[n] = 0;
    if (!n) fail_msg("docs/systolic.md: a number expected at \"%.40s\"", *p);
    *p = s;
    return strtod(buf, NULL);
}

/* A table's first row after its header line `head` and the rule. */
static const char *table(const char *sec, const char *head) {
    const char *t = strstr(sec, head);
    if (!t) fail_msg("docs/systolic.md \"Energy\": no table \"%s\"", head);
    return strchr(strchr(t, '\n') + 1, '\n') + 1;
}

/* "%.1f" of pJ in nJ, as the doc's tables print it. */
static void same_nj(const char *what, double doc_nj, double pj) {
    char want[32], got[32];
    snprintf(want, sizeof want, "%.1f", doc_nj);
    snprintf(got, sizeof got, "%.1f", pj / 1000.0);
    if (strcmp(want, got)) fail_msg("docs/systolic.md: %s is %s nJ, the simulator's counts give %s", what, want, got);
}

/* docs/systolic.md "Energy": the energy lines of the default model on the
 * three presets as easynpu run prints them, the table by unit, the table
 * per layer on preset systolic, and the counts its text quotes. */
static void test_doc_figures(void **state) {
    (void)state;
    static const double want_pj[3] = {11176964.04151722, 13116457.41751722, 16365542.093903793};
    char *doc = slurp(REPO("docs/systolic.md"));
    char *sec = strstr(doc, "\n## Energy\n");
    assert_non_null(sec);
    char *end = strstr(sec + 1, "\n## ");
    assert_non_null(end);
    *end = 0;
    enpu_graph *qg = kws_graph();
    enpu_energy e[3];
    enpu_sim_result res[3];
    for (int i = 0; i < 3; i++) {
        enpu_arch a = enpu_test_preset(presets[i]);
        enpu_program p;
        enpu_buf in;
        kws(qg, &a, &p, &in);
        simulate(&p, &a, &in, false, NULL, &res[i]);
        enpu_energy_costs c;
        enpu_energy_costs_of(&a, &c);
        enpu_energy_of(&c, res[i].reads, res[i].writes, res[i].uops, &e[i]);
        if (fabs(e[i].total_pj - want_pj[i]) > 1e-3)
            fail_msg("kws_cnn on %s: %.17g pJ, not %.17g", presets[i], e[i].total_pj, want_pj[i]);
        char *text = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&text, &n);
        fprintf(f, "%s:\n", presets[i]);
        enpu_report_energy_lines(f, &a, &e[i], res[i].total_cycles, res[i].total_macs);
        fclose(f);
        if (!strstr(sec, text)) fail_msg("docs/systolic.md \"Energy\" does not hold the lines:\n%s", text);
        free(text);
        enpu_buf_free(&in);
        enpu_program_free(&p);
    }
    /* by unit: the three presets' parts and totals */
    int rows = 0;
    for (const char *r = table(sec, "| unit | level | systolic |"); !strncmp(r, "| ", 2); r = strchr(r, '\n') + 1) {
        const char *name = r + 2;
        int part = -1;
        for (int k = 0; k < ENPU_EP_COUNT; k++) {
            char key[40];
            snprintf(key, sizeof key, "`%s` |", enpu_energy_part_name((enpu_energy_part)k));
            if (!strncmp(name, key, strlen(key))) part = k;
        }
        if (part < 0 && strncmp(name, "total |", 7)) fail_msg("docs/systolic.md: unknown unit in \"%.30s\"", name);
        const char *p = strchr(strchr(name, '|') + 1, '|') + 1;
        for (int i = 0; i < 3; i++) {
            char what[96];
            snprintf(what, sizeof what, "%s on %s", part < 0 ? "the total" : enpu_energy_part_name((enpu_energy_part)part),
                     presets[i]);
            same_nj(what, cell(&p), part < 0 ? e[i].total_pj : e[i].part_pj[part]);
        }
        rows++;
    }
    assert_int_equal(rows, 12);
    /* per layer on preset systolic */
    enpu_arch a = enpu_test_preset("systolic");
    enpu_energy_costs c;
    enpu_energy_costs_of(&a, &c);
    rows = 0;
    for (const char *r = table(sec, "| layer | cycles | energy |"); !strncmp(r, "| ", 2); r = strchr(r, '\n') + 1, rows++) {
        const enpu_layer_stats *l = &res[0].layers[rows];
        enpu_energy le;
        enpu_energy_of(&c, l->reads, l->writes, l->uops, &le);
        const char *p = strchr(r + 2, '|') + 1;
        if (cell(&p) != (double)l->cycles) fail_msg("docs/systolic.md: %s's cycles", l->name);
        double array = le.part_pj[ENPU_EP_MAC] + le.part_pj[ENPU_EP_REQUANT] + le.part_pj[ENPU_EP_PE_REG] +
                       le.part_pj[ENPU_EP_ACC] + le.part_pj[ENPU_EP_PE_LINK] + le.part_pj[ENPU_EP_MUX] +
                       le.part_pj[ENPU_EP_SHAPE];
        const double want[5] = {le.total_pj, le.part_pj[ENPU_EP_MAIN_DTCM], le.part_pj[ENPU_EP_WEIGHT_MEM],
                                le.part_pj[ENPU_EP_BUS], array};
        for (int k = 0; k < 5; k++) same_nj(l->name, cell(&p), want[k]);
    }
    assert_int_equal(rows, 6);
    /* the counts the text quotes */
    assert_int_equal(res[0].layers[0].reads[ENPU_MEM_MAIN_DTCM], 5184);
    assert_int_equal(res[0].layers[1].reads[ENPU_MEM_WEIGHT_MEM], 4041);
    const uint64_t wt[3] = {7080, 12606, 7152}, rd[3] = {12061, 12061, 21673}, wr[3] = {1334, 1334, 2395};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(res[i].reads[ENPU_MEM_WEIGHT_MEM], wt[i]);
        assert_int_equal(res[i].reads[ENPU_MEM_MAIN_DTCM], rd[i]);
        assert_int_equal(res[i].writes[ENPU_MEM_MAIN_DTCM], wr[i]);
        enpu_sim_result_free(&res[i]);
    }
    enpu_graph_free(qg);
    free(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_equals_simulator),
        cmocka_unit_test(test_miscount_caught),
        cmocka_unit_test(test_doc_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
