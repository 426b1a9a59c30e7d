/* The energy and area model (docs/energy.md): the case computed by hand
 * (one fc layer: every count and every part of its energy from the rules
 * and the published figures), the derived per-action energies and unit
 * areas of the default arch, the technology scaling, the cost figures in
 * the arch description (JSON, validation, not in the fingerprint), and the
 * sweep's space, sample, Pareto front and CSV rows. */
#include "testutil.h"

#include <math.h>

#include "easynpu/energy.h"
#include "easynpu/file.h"
#include "easynpu/sweep.h"
#include "energy_check.h"
#include "isa/isa_internal.h"
#include "report/sweep_report.h"
#include "sim_prog.h"

static void near(double a, double b, int line) {
    if (!(fabs(a - b) <= 1e-9 * fabs(b) + 1e-12)) fail_msg("line %d: %.17g, want %.17g", line, a, b);
}
#define NEAR(a, b) near((double)(a), (double)(b), __LINE__)

/* ---- the hand-checked case ------------------------------------------------------ */

/* fc 30 -> 12 on the default arch (16 PEs): the last layer of the default
 * model, alone.  By hand (docs/energy.md "A case by hand"): the input is 2
 * words (channels 0-15, 16-29), so 2 load units of 1 word; 16 + 14 = 30
 * passes of 1 cycle, each reading 1 pad entry (broadcast), 1 weight word
 * (16 pad entries), doing 16 MACs into 16 psum entries (read back except in
 * the first pass); the final pass requantizes 16 lanes and writes 1 word. */
static void test_hand_case(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 7);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_FC;
    in.hi = in.wi = 1, in.ci = 30, in.co = 12;
    tp_defaults(&in);
    in.ho = in.wo = 1;
    int8_t w[12 * 30], x[30];
    int32_t bias[12];
    uint32_t M[12];
    int8_t S[12];
    for (int i = 0; i < 12 * 30; i++) w[i] = (int8_t)(i % 7 - 3);
    for (int i = 0; i < 30; i++) x[i] = (int8_t)(i - 15);
    for (int i = 0; i < 12; i++) bias[i] = i, M[i] = 1 << 18, S[i] = 20;
    tp_fc_weights(&t, &in, w);
    tp_params(&t, &in, bias, M, S);
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = 100;
    tp_add(&t, &in, "fc");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 30, 0, ENPU_MEM_MAIN, 0.1f, 0);
    tp_io(&t, ENPU_IO_OUTPUT, "y", 1, 1, 12, 100, ENPU_MEM_MAIN, 0.1f, 0);
    assert_int_equal(tp_finish(&t), 0);

    enpu_err err = {0};
    enpu_layer_stats *rows = NULL, tot;
    assert_int_equal(enpu_estimate_program(&t.p, &rows, &tot, &err), 0);
    const enpu_layer_stats *r = &rows[0];
    assert_int_equal(r->reads[ENPU_MEM_MAIN_DTCM], 2);      /* the 2 input words */
    assert_int_equal(r->writes[ENPU_MEM_MAIN_DTCM], 1);     /* the output word */
    assert_int_equal(r->reads[ENPU_MEM_WEIGHT_MEM], 9 + 30); /* bias 3 + quant 6 words, 30 weight words */
    assert_int_equal(r->writes[ENPU_MEM_IFMAP_PAD], 2 * 16);
    assert_int_equal(r->reads[ENPU_MEM_IFMAP_PAD], 30);
    assert_int_equal(r->writes[ENPU_MEM_WEIGHT_PAD], 30 * 16);
    assert_int_equal(r->reads[ENPU_MEM_WEIGHT_PAD], 30 * 16);
    assert_int_equal(r->writes[ENPU_MEM_PSUM], 30 * 16);
    assert_int_equal(r->reads[ENPU_MEM_PSUM], 29 * 16);
    assert_int_equal(r->uops[ENPU_UOP_MAC], 30 * 16);
    assert_int_equal(r->uops[ENPU_UOP_REQUANT], 16);
    assert_int_equal(r->uops[ENPU_UOP_ALU] + r->uops[ENPU_UOP_LOOKUP], 0);
    assert_int_equal(r->reads[ENPU_MEM_ITCM], 4);           /* 512 bits in 128-bit words */
    assert_int_equal(tot.reads[ENPU_MEM_ITCM], 8);          /* and the end instruction's */
    /* the simulator counts the same */
    int8_t xc[30];
    memcpy(xc, x, sizeof xc);
    enpu_sim_result res;
    assert_int_equal(tp_run(&t, ENPU_SIM_CYCLE, true, xc, 1, NULL, 0, &res, &err), 0);
    enpu_check_counts("hand case", &t.p, &res, rows, &tot, false);

    /* every part of the energy from the figures (45 nm, 0.9 V): a w-bit
     * access of a C-byte memory is 10 pJ * w/64 * sqrt(C/8192) */
    const double pad = 10 * 8 / 64.0 * sqrt(64 / 8192.0);    /* 64-entry ifmap pad */
    const double wpad = 10 * 8 / 64.0 * sqrt(16 / 8192.0);   /* 16-entry weight pad */
    const double psum = 10 * 32 / 64.0 * sqrt(256 / 8192.0); /* 64 x 32-bit psum file */
    const double dtcm = 10 * 128 / 64.0 * sqrt(65536 / 8192.0);
    const double itcm = 10 * 128 / 64.0 * sqrt(4096 / 8192.0);
    const double mac = 0.2 + 0.1, requant = 3.1 * (32 * 20) / 1024.0 + 0.1 + 2 * 0.03;
    const double bus = 0.121 * 1 * 128;
    enpu_energy_costs c;
    enpu_energy e;
    enpu_energy_costs_of(&t.arch, &c);
    enpu_energy_of(&c, tot.reads, tot.writes, tot.uops, &e);
    NEAR(e.part_pj[ENPU_EP_MAC], 480 * mac);                /* 144 pJ */
    NEAR(e.part_pj[ENPU_EP_REQUANT], 16 * requant);         /* 33.56 pJ */
    NEAR(e.part_pj[ENPU_EP_IFMAP_PAD], (32 + 30) * pad);    /* 6.85 pJ */
    NEAR(e.part_pj[ENPU_EP_WEIGHT_PAD], (480 + 480) * wpad); /* 53.03 pJ */
    NEAR(e.part_pj[ENPU_EP_PSUM], (464 + 480) * psum);      /* 834.39 pJ */
    NEAR(e.part_pj[ENPU_EP_MAIN_DTCM], 3 * dtcm);           /* 169.71 pJ */
    NEAR(e.part_pj[ENPU_EP_WEIGHT_MEM], 39 * dtcm);         /* 2206.17 pJ */
    NEAR(e.part_pj[ENPU_EP_ITCM], 8 * itcm);                /* 113.14 pJ */
    NEAR(e.part_pj[ENPU_EP_BUS], (3 + 39 + 8) * bus);       /* 774.40 pJ */
    NEAR(e.part_pj[ENPU_EP_DRAM] + e.part_pj[ENPU_EP_SKIP_DTCM] + e.part_pj[ENPU_EP_ALU], 0);
    NEAR(e.total_pj, 4335.2449771085);
    /* and the summary: 45 cycles at 100 MHz */
    enpu_energy_summary s;
    enpu_energy_summarize(&t.arch, 45, e.total_pj, &s);
    NEAR(s.time_us, 0.45);
    NEAR(s.power_mw, e.total_pj / 0.45 / 1000);
    NEAR(s.edp_js, e.total_pj * 1e-12 * 0.45e-6);
    enpu_sim_result_free(&res);
    free(rows);
    tp_free(&t);
}

/* ---- per-action energies, areas, scaling ---------------------------------------- */

static void test_costs_and_area(void **state) {
    (void)state;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_energy_costs c;
    enpu_energy_costs_of(&a, &c);
    NEAR(c.energy_scale, 1);
    NEAR(c.wire_scale, 1);
    NEAR(c.area_scale, 1);
    NEAR(c.uop_pj[ENPU_UOP_MAC], 0.3);
    NEAR(c.uop_pj[ENPU_UOP_ALU], 0.03);
    NEAR(c.uop_pj[ENPU_UOP_REQUANT], 2.0975);
    /* 16-entry table of 8 + 32 bits: 80 bytes, 40-bit read */
    NEAR(c.uop_pj[ENPU_UOP_LOOKUP], 0.03 + 10 * 40 / 64.0 * sqrt(80 / 8192.0));
    NEAR(c.read_pj[ENPU_MEM_SKIP_DTCM], 20 * sqrt(2));
    NEAR(c.read_pj[ENPU_MEM_OFFCHIP], 162.5 * 16); /* a 16-byte word */
    NEAR(c.write_pj[ENPU_MEM_PSUM], c.read_pj[ENPU_MEM_PSUM]);
    NEAR(c.bus_word_pj, 15.488);
    enpu_area ar;
    enpu_area_of(&a, &ar);
    NEAR(ar.part_um2[ENPU_AP_MAC], 16 * (282 + 137));
    NEAR(ar.part_um2[ENPU_AP_REQUANT], 16 * (3495 * 0.625 + 137 + 72));
    NEAR(ar.part_um2[ENPU_AP_PSUM], 16 * 64 * 32 * 4.522);
    NEAR(ar.part_um2[ENPU_AP_IFMAP_PAD], 16 * 64 * 8 * 4.522);
    NEAR(ar.part_um2[ENPU_AP_WEIGHT_PAD], 16 * 16 * 8 * 4.522);
    NEAR(ar.part_um2[ENPU_AP_PARAM_REGS], 16 * (16 * (32 + 20 + 6 + 8) + 16 * 40) * 4.522);
    NEAR(ar.part_um2[ENPU_AP_MAIN_DTCM], 65536 * 8 * 1.215);
    NEAR(ar.part_um2[ENPU_AP_ITCM], 4096 * 8 * 1.215);
    NEAR(ar.total_um2, 1835274.608);
    /* more PEs cost area in the array, bigger pads in the pads */
    enpu_arch b = a;
    b.pes = 32, b.bus_bits = 256, b.ifmap_pads = b.weight_pad_groups = 32;
    enpu_area br;
    enpu_area_of(&b, &br);
    NEAR(br.part_um2[ENPU_AP_MAC], 2 * ar.part_um2[ENPU_AP_MAC]);
    NEAR(br.part_um2[ENPU_AP_MAIN_DTCM], ar.part_um2[ENPU_AP_MAIN_DTCM]);
    /* scaling: Stillmaker-Baas at the table's nodes, linear between them */
    a.tech_nm = 7;
    enpu_energy_costs_of(&a, &c);
    NEAR(c.energy_scale, (0.1776 * 0.81 - 0.09097 * 0.9 + 0.02447) / (1.103 * 0.81 - 0.362 * 0.9 + 0.2767));
    NEAR(c.area_scale, 0.059);
    NEAR(c.uop_pj[ENPU_UOP_MAC], 0.3 * c.energy_scale);
    NEAR(c.read_pj[ENPU_MEM_OFFCHIP], 162.5 * 16); /* DRAM is not scaled */
    a.tech_nm = 28;
    enpu_energy_costs_of(&a, &c);
    NEAR(c.area_scale, 0.46 * 2 / 3 + 0.21 / 3);
    a.tech_nm = 45, a.vdd_v = 0.8;
    enpu_energy_costs_of(&a, &c);
    NEAR(c.wire_scale, (0.8 / 0.9) * (0.8 / 0.9));
    NEAR(c.energy_scale, (1.103 * 0.64 - 0.362 * 0.8 + 0.2767) / (1.103 * 0.81 - 0.362 * 0.9 + 0.2767));
}

/* ---- cost figures in the description ------------------------------------------- */

static void test_arch_costs(void **state) {
    (void)state;
    enpu_arch a, b;
    enpu_err err = {0};
    const char *t = "{\"base\": \"easynpu\", \"name\": \"easynpu\", \"tech_nm\": 28, \"vdd_v\": 0.8, \"dram_pj\": 40}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "t.json", &a, &err), 0);
    assert_true(a.tech_nm == 28 && a.vdd_v == 0.8 && a.dram_pj == 40 && a.mult8_pj == 0.2);
    /* the figures do not enter the fingerprint: a program for easynpu runs here */
    assert_int_equal(enpu_arch_preset("easynpu", &b, &err), 0);
    assert_int_equal(enpu_arch_fingerprint(&a), enpu_arch_fingerprint(&b));
    char *m = enpu_arch_machine_json(&a), *full = enpu_arch_to_json(&a, 0);
    assert_null(strstr(m, "tech_nm"));
    assert_non_null(strstr(full, "\"tech_nm\":28,\"vdd_v\":0.8,"));
    assert_int_equal(enpu_arch_from_json(full, strlen(full), "full", &b, &err), 0);
    assert_memory_equal(&a, &b, sizeof a);
    free(m);
    free(full);
    const char *bad[][2] = {
        {"{\"tech_nm\": 3}", "field 'tech_nm': value 3 out of range 7..130 nm"},
        {"{\"vdd_v\": 2}", "field 'vdd_v': value 2 out of range 0.3..1.5 V"},
        {"{\"sram_pj\": -1}", "field 'sram_pj': value -1 out of range"},
        {"{\"ff_um2\": \"big\"}", "field 'ff_um2': must be a number (um2/bit)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = (enpu_err){0};
        int rc = enpu_arch_from_json(bad[i][0], strlen(bad[i][0]), "x.json", &a, &err);
        if (rc != ENPU_E_INVALID || !strstr(err.msg, bad[i][1]))
            fail_msg("%s: want '%s', got %s", bad[i][0], bad[i][1], err.msg);
    }
    /* the table in docs/arch.md and docs/energy.md is the generated one */
    char *tab = enpu_arch_cost_table_md();
    for (int d = 0; d < 2; d++) {
        const char *path = d ? "docs/energy.md" : "docs/arch.md";
        uint8_t *doc;
        size_t n;
        assert_int_equal(enpu_file_read(path, 1 << 20, &doc, &n, &err), 0);
        if (!strstr((char *)doc, tab))
            fail_msg("%s does not contain the output of `easynpu arch --cost-table`: regenerate it", path);
        free(doc);
    }
    free(tab);
}

/* ---- the sweep's space ------------------------------------------------------------ */

static void expect_space_error(const char *arg, const char *sub) {
    enpu_arch a;
    enpu_err err = {0};
    enpu_sweep_space s;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_sweep_space_init(&s, &a);
    int rc = enpu_sweep_space_add_arg(&s, arg, &err);
    if (rc != ENPU_E_USAGE || !strstr(err.msg, sub)) fail_msg("%s: want '%s', got '%s'", arg, sub, err.msg);
    enpu_sweep_space_free(&s);
}

static void test_space(void **state) {
    (void)state;
    enpu_arch a, p;
    enpu_err err = {0};
    enpu_sweep_space s;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_sweep_space_init(&s, &a);
    assert_int_equal(enpu_sweep_space_add_arg(&s, "pes=8,16,32", &err), 0);
    assert_int_equal(enpu_sweep_space_add_arg(&s, "psum_depth=16:256:x2", &err), 0);
    assert_int_equal(enpu_sweep_space_add_arg(&s, "ifmap_pad_depth=16:64:+24", &err), 0);
    assert_int_equal(enpu_sweep_space_add_arg(&s, "clock_mhz=100:102", &err), 0);
    assert_int_equal(enpu_sweep_space_add_arg(&s, "tech_nm=45,7", &err), 0);
    assert_int_equal(s.params[1].n, 5); /* 16 32 64 128 256 */
    assert_true(s.params[2].values[2] == 64 && s.params[2].n == 3);
    assert_int_equal(s.params[3].n, 3);
    assert_int_equal(s.n_grid, 3 * 5 * 3 * 3 * 2);
    /* the first parameter varies slowest */
    uint64_t idx = (((2 * 5 + 1) * 3 + 2) * 3 + 0) * 2 + 1; /* pes 32, psum 32, pad 64, 100 MHz, 7 nm */
    enpu_sweep_point_arch(&s, idx, &p);
    assert_int_equal(p.pes, 32);
    assert_int_equal(p.bus_bits, 256); /* follows pes */
    assert_int_equal(p.ifmap_pads, 32);
    assert_int_equal(p.weight_pad_groups, 32);
    assert_int_equal(p.psum_depth, 32);
    assert_int_equal(p.ifmap_pad_depth, 64);
    assert_true(p.clock_mhz == 100 && p.tech_nm == 7);
    assert_string_equal(p.name, "p211");
    assert_int_equal(enpu_arch_validate(&p, &err), 0);
    /* a sample: distinct, ascending, the same for the same seed */
    assert_int_equal(enpu_sweep_space_sample(&s, 50, 42, &err), 0);
    assert_int_equal(s.n_points, 50);
    uint64_t first[50];
    for (int i = 0; i < 50; i++) {
        first[i] = enpu_sweep_point_index(&s, (uint64_t)i);
        assert_true(first[i] < s.n_grid);
        if (i) assert_true(first[i] > first[i - 1]);
    }
    assert_int_equal(enpu_sweep_space_sample(&s, 50, 42, &err), 0);
    for (int i = 0; i < 50; i++) assert_int_equal(enpu_sweep_point_index(&s, (uint64_t)i), first[i]);
    assert_int_equal(enpu_sweep_space_sample(&s, 50, 43, &err), 0);
    int same = 0;
    for (int i = 0; i < 50; i++) same += enpu_sweep_point_index(&s, (uint64_t)i) == first[i];
    assert_true(same < 50);
    assert_int_equal(enpu_sweep_space_sample(&s, 100000, 1, &err), 0); /* more than the grid: all */
    assert_null(s.sample);
    assert_int_equal(s.n_points, s.n_grid);
    enpu_sweep_space_free(&s);
    /* from JSON, in the object's order */
    enpu_sweep_space_init(&s, &a);
    const char *j = "{\"params\": {\"weight_pad_depth\": [8, 16], \"psum_depth\": \"32:64:x2\"}, "
                    "\"random\": 3, \"seed\": 9}";
    assert_int_equal(enpu_sweep_space_from_json(&s, j, strlen(j), "s.json", &err), 0);
    assert_string_equal(s.params[0].key, "weight_pad_depth");
    assert_int_equal(s.n_grid, 4);
    assert_int_equal(s.n_points, 3);
    enpu_sweep_space_free(&s);
    enpu_sweep_space_init(&s, &a);
    j = "{\"params\": {\"psum_depth\": [1.5]}}";
    assert_int_equal(enpu_sweep_space_from_json(&s, j, strlen(j), "s.json", &err), ENPU_E_USAGE);
    assert_non_null(strstr(err.msg, "s.json: --param psum_depth: value 1.5 is not an integer"));
    enpu_sweep_space_free(&s);
    expect_space_error("frobnicate=1,2", "--param frobnicate: not a field of the architecture description");
    expect_space_error("name=1", "--param name: not a numeric field");
    expect_space_error("pes", "expected KEY=VALUES");
    expect_space_error("pes=8,x", "'x' is not a number");
    expect_space_error("pes=8,8", "value 8 given twice");
    expect_space_error("pes=32:8", "range 32:8 is empty");
    expect_space_error("pes=8:32:x1", "a factor above 1");
    expect_space_error("pes=0:9000", "more than 4096 values");
}

/* ---- Pareto front and CSV rows -------------------------------------------------------- */

static enpu_point_result *slot6(void *ctx, uint64_t point, int model) {
    return point < 6 && model == 0 ? &((enpu_point_result *)ctx)[point] : NULL;
}

static void test_pareto_and_rows(void **state) {
    (void)state;
    /* (time, energy, area) of 6 configs; 4 fails */
    const double f[6][3] = {{1, 5, 5}, {2, 2, 5}, {2, 3, 5}, {3, 1, 1}, {0.5, 9, 9}, {1, 5, 5}};
    enpu_point_result r[6];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 6; i++) {
        r[i].point = (uint64_t)i;
        r[i].status = i == 4 ? ENPU_PT_NOFIT : ENPU_PT_OK;
        r[i].time_us = f[i][0], r[i].energy_pj = f[i][1], r[i].area_um2 = f[i][2];
    }
    snprintf(r[4].reason, sizeof r[4].reason, "weights: 41688 bytes, \"big\", do not fit");
    enpu_sweep_config cf[6];
    assert_int_equal(enpu_sweep_pareto(r, 6, 1, cf), 4);
    /* 0 and 5 are equal (neither dominates), 2 is dominated by 1, 4 failed */
    const bool want[6] = {true, true, false, true, false, true};
    for (int i = 0; i < 6; i++) assert_int_equal(cf[i].pareto, want[i]);
    /* two models: a config sums them and fits only if both do */
    assert_int_equal(enpu_sweep_pareto(r, 6, 2, cf), 2);
    assert_true(cf[0].ok && cf[0].time_us == 3 && cf[0].energy_pj == 7);
    assert_false(cf[2].ok);
    /* rows back and forth, the same bytes */
    enpu_arch a;
    enpu_err err = {0};
    enpu_sweep_space s;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_sweep_space_init(&s, &a);
    assert_int_equal(enpu_sweep_space_add_arg(&s, "psum_depth=16,32,64,128,256,512", &err), 0);
    const char *models[1] = {"m,odel \"1\".onnx"};
    enpu_sweep_info in = {&s, models, 1, "0badc0de", false};
    r[1].part_pj[ENPU_EP_PSUM] = 0.1 + 0.2;
    r[1].cycles = 123456789012ull;
    char *t1 = enpu_sweep_csv_text(&in, r, 6);
    assert_non_null(t1);
    enpu_point_result back[6];
    memset(back, 0, sizeof back);
    uint64_t nrows = 0;
    const char *body = strchr(t1, '\n') + 1;
    assert_int_equal(enpu_sweep_csv_read(&in, body, strlen(body), "t.csv", slot6, back, &nrows, &err), 0);
    assert_int_equal(nrows, 6);
    char *t2 = enpu_sweep_csv_text(&in, back, 6);
    assert_string_equal(t1, t2);
    assert_true(back[1].part_pj[ENPU_EP_PSUM] == 0.1 + 0.2 && back[1].cycles == 123456789012ull);
    assert_string_equal(back[4].reason, r[4].reason);
    /* rows of another sweep, another point's values, twice */
    memset(back, 0, sizeof back);
    char *other = strdup(body);
    memcpy(other, "0badc0df", 8);
    assert_int_equal(enpu_sweep_csv_read(&in, other, strlen(other), "t.csv", slot6, back, &nrows, &err),
                     ENPU_E_FORMAT);
    assert_non_null(strstr(err.msg, "t.csv: line 1: row of sweep 0badc0df, not of this sweep (0badc0de)"));
    /* point 2's row with point 3's psum_depth */
    char *wrong = strdup(strstr(body, "0badc0de,2,64,"));
    memcpy(wrong + 11, "65", 2);
    memset(back, 0, sizeof back);
    err = (enpu_err){0};
    assert_int_equal(enpu_sweep_csv_read(&in, wrong, strlen(wrong), "t.csv", slot6, back, &nrows, &err),
                     ENPU_E_FORMAT);
    assert_non_null(strstr(err.msg, "t.csv: line 1: psum_depth = '65' is not the value of point 2"));
    free(wrong);
    memset(back, 0, sizeof back);
    err = (enpu_err){0};
    size_t line = (size_t)(strchr(body, '\n') - body) + 1;
    char *twice = malloc(2 * line + 1);
    memcpy(twice, body, line);
    memcpy(twice + line, body, line);
    twice[2 * line] = 0;
    assert_int_equal(enpu_sweep_csv_read(&in, twice, strlen(twice), "t.csv", slot6, back, &nrows, &err),
                     ENPU_E_FORMAT);
    assert_non_null(strstr(err.msg, "line 2: point 0 on model 'm,odel \"1\".onnx' appears twice"));
    /* a last line cut by an interruption is not a row */
    memset(back, 0, sizeof back);
    assert_int_equal(enpu_sweep_csv_read(&in, body, line + 10, "t.csv", slot6, back, &nrows, &err), 0);
    assert_int_equal(nrows, 1);
    free(twice);
    free(other);
    free(t2);
    free(t1);
    enpu_sweep_space_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_case),      cmocka_unit_test(test_costs_and_area),
        cmocka_unit_test(test_arch_costs),     cmocka_unit_test(test_space),
        cmocka_unit_test(test_pareto_and_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
