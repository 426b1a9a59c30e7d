/* AlexNet's five convolution layers (models/alexnet/, built by
 * scripts/make_alexnet_convs.py) on the Eyeriss-sized row-stationary engine
 * (preset eyeriss: 12 x 14 PEs, 108 KB global buffer, 16-bit data), beside
 * the figures the Eyeriss paper publishes for the same layers (Chen et al.,
 * JSSC 2017, Table V, batch of 4 at 200 MHz: divided by 4 here, one image),
 * read from tests/data/published/eyeriss_alexnet.csv (the published numbers
 * as printed, with their source and units; README.md beside it).  Every
 * layer: quantized to 16 bits, compiled, run in cycle mode against the golden
 * reference element by element with the cost model exact; the tables of
 * docs/rowstat.md (the run, and its energy by level) are what this test
 * prints, our figures are asserted
 * exactly, and against the chip's, the bands docs/rowstat.md states:
 *
 * - MACs: ours x 4 are the table's (0.01 G, as it rounds): the same layers;
 * - PEs: the mapping uses the chip's PEs on every layer but conv2 (154 and
 *   156), and at most 5 more there (140 for 135);
 * - cycles: within -17% .. +17.5% of the chip's latency at 200 MHz;
 * - DRAM bytes: more than the chip's on every layer (no batch, no
 *   compression, the ifmap tiles loaded again per filter block), at most
 *   5.5 times;
 * - global-buffer bytes: 1.9 to 3.7 times the chip's (our psums are 64
 *   bits), 0.65 to 2.2 times with the psums counted at the chip's 16 bits.
 *
 * test_alexnet_batch4 (long) runs them at the chip's batch of 4.
 *
 * Its energy per layer beside the chip's (power x latency), the model at the
 * chip's 65 nm and 1 V without its DRAM, within 0.85x..1.6x; test_levels
 * the cost of a level beside the paper's normalised ladder (ISCA 2016).
 *
 * test_published checks the fixtures themselves: the table's total row and
 * the paper's abstract agree with its layers (a transcription error would
 * show), and preset eyeriss is the chip of its Table IV
 * (tests/data/published/eyeriss_chip.csv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/energy.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/rowstat.h"
#include "testutil.h"

#define PUBLISHED ENPU_SOURCE_DIR "/tests/data/published/"

/* ---- the fixtures: CSV, '#' comment lines, a header row --------------------- */

#define MAX_COLS 12
#define MAX_LINES 40
typedef struct table {
    const char *path;
    int n_cols, n_rows;
    char cols[MAX_COLS][40];
    char cell[MAX_LINES][MAX_COLS][48];
} table;

static void table_load(table *t, const char *path) {
    memset(t, 0, sizeof *t);
    t->path = path;
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("%s: cannot open", path);
    char line[512];
    int lineno = 0;
    bool header = true;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == '#' || line[0] == 0) continue;
        if (!header && t->n_rows == MAX_LINES) fail_msg("%s:%d: more than %d rows", path, lineno, MAX_LINES);
        int n = 0;
        for (char *p = line, *q;; p = q + 1) {
            q = strchr(p, ',');
            if (q) *q = 0;
            if (n == MAX_COLS) fail_msg("%s:%d: more than %d columns", path, lineno, MAX_COLS);
            char *dst = header ? t->cols[n] : t->cell[t->n_rows][n];
            if (strlen(p) >= 40) fail_msg("%s:%d: field '%s' too long", path, lineno, p);
            strcpy(dst, p);
            n++;
            if (!q) break;
        }
        if (header) t->n_cols = n, header = false;
        else if (n != t->n_cols) fail_msg("%s:%d: %d fields, the header has %d", path, lineno, n, t->n_cols);
        else t->n_rows++;
    }
    fclose(f);
}

static int table_col(const table *t, const char *col) {
    for (int c = 0; c < t->n_cols; c++)
        if (!strcmp(t->cols[c], col)) return c;
    fail_msg("%s: no column '%s'", t->path, col);
    return -1;
}

/* The number in column `col` of the row whose column `key_col` is `key`. */
static double table_get(const table *t, const char *key_col, const char *key, const char *col) {
    int k = table_col(t, key_col), c = table_col(t, col);
    for (int r = 0; r < t->n_rows; r++)
        if (!strcmp(t->cell[r][k], key)) {
            char *end;
            double v = strtod(t->cell[r][c], &end);
            if (end == t->cell[r][c] || *end) fail_msg("%s: %s %s: '%s' is not a number", t->path, key, col, t->cell[r][c]);
            return v;
        }
    fail_msg("%s: no row '%s'", t->path, key);
    return 0;
}

static const char *const layer_names[5] = {"conv1", "conv2", "conv3", "conv4", "conv5"};

/* Table V: the chip's figures for a batch of 4 at 200 MHz. */
static double chip(const table *t, int l, const char *col) { return table_get(t, "layer", layer_names[l], col); }

/* What this engine does on them (asserted: the table in docs/rowstat.md):
 * cycles, PEs its mapping uses, DRAM and global-buffer bytes, values the
 * array's networks deliver into the PEs and entries of the PEs' local
 * buffers. */
typedef struct ours {
    uint64_t cycles;
    int pes;
    uint64_t dram, glb, noc, local;
    uint64_t fill;     /* cycles before each pass's first MAC (its filters coming in) */
    uint64_t psum_glb; /* global-buffer bytes of the psums kept across a block's passes */
} ours;
static const ours expect[5] = {{869864, 154, 1651872, 16606272, 11804760, 434075400, 69984, 9292800},
                               {1846135, 140, 2609456, 37994752, 10704960, 866531520, 153888, 32845824},
                               {1224502, 156, 3289856, 38768128, 13897728, 566931456, 221696, 32188416},
                               {917263, 156, 2501376, 20577792, 10423296, 437658624, 166144, 15575040},
                               {614608, 156, 1762224, 13891584, 7098624, 292221696, 110784, 10383360}};

/* The energy model's figures for each layer (docs/rowstat.md "Energy"):
 * pJ per MAC, and the energy by level in uJ (datapath, register file,
 * global buffer, network, DRAM), printed "%.3f". */
static const char *const expect_energy[5] = {
    "9.201 pJ/MAC, 969.935 uJ: 104.068 384.137 76.269 137.032 268.429",
    "7.645 pJ/MAC, 1712.146 uJ: 219.514 786.551 174.502 107.542 424.037",
    "9.807 pJ/MAC, 1466.414 uJ: 146.447 499.200 178.054 108.112 534.602",
    "9.480 pJ/MAC, 1063.107 uJ: 109.793 393.475 94.510 58.855 406.474",
    "9.710 pJ/MAC, 725.941 uJ: 73.196 262.524 63.801 40.058 286.361"};

/* The model's energy on chip at the chip's 65 nm and 1 V beside the chip's
 * measured energy per image (docs/rowstat.md "AlexNet beside the chip"). */
static const char *const expect_chip[5] = {
    "1098.0 uJ on chip at 65 nm, 1 V (DRAM 268.4); the chip 1734.7 uJ: 1.58x",
    "2025.6 uJ on chip at 65 nm, 1 V (DRAM 424.0); the chip 3016.8 uJ: 1.49x",
    "1463.5 uJ on chip at 65 nm, 1 V (DRAM 534.6); the chip 1569.4 uJ: 1.07x",
    "1032.3 uJ on chip at 65 nm, 1 V (DRAM 406.5); the chip 1081.0 uJ: 1.05x",
    "691.0 uJ on chip at 65 nm, 1 V (DRAM 286.4); the chip 619.5 uJ: 0.90x"};

static uint64_t rng_s = 20161231;
static double nrand(void) {
    rng_s = rng_s * 6364136223846793005ull + 1442695040888963407ull;
    double u = ((double)(rng_s >> 11) + 1) / 9007199254740993.0;
    rng_s = rng_s * 6364136223846793005ull + 1442695040888963407ull;
    double v = (double)(rng_s >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* conv1 beside Timeloop + Accelergy's Eyeriss-like example on the same
 * layer (tests/data/published/timeloop_eyeriss_like_alexnet_conv1.csv,
 * docs/rowstat.md "Beside Timeloop"): pJ/MAC by level, the model's (lv:
 * pJ by level, pj its total) asserted exactly, its total within 0.8..1.25x
 * Timeloop's. */
static void timeloop_conv1(const double *lv, double pj, double macs, double dram_bytes) {
    static table tl;
    table_load(&tl, PUBLISHED "timeloop_eyeriss_like_alexnet_conv1.csv");
#define TL(item) table_get(&tl, "item", item, "value")
    assert_true(TL("macs") == macs); /* the same layer */
    /* the fixture adds up: its levels to its total, as printed */
    const double theirs[6] = {TL("mac"), TL("psum_spad") + TL("weights_spad") + TL("ifmap_spad"), TL("shared_glb"),
                              TL("network"), TL("dram"), TL("total")};
    assert_true(fabs(theirs[0] + theirs[1] + theirs[2] + theirs[3] + theirs[4] - theirs[5]) < 0.015);
    assert_true(fabs(TL("energy") * 1e6 / macs - theirs[5]) < 0.005);
    const double tl_dram = TL("dram_weight_reads") + TL("dram_input_reads") + TL("dram_output_writes");
    assert_true(fabs(tl_dram * TL("dram_energy_per_access") / macs - theirs[4]) < 0.005);
    /* its mapping moves 3.17 times the model's 16-bit values through DRAM
     * (it fetches the weights once per output column) */
    char r[16];
    snprintf(r, sizeof r, "%.2f", tl_dram / (dram_bytes / 2));
    assert_string_equal(r, "3.17");
#undef TL
    static const char *const names[6] = {"datapath", "register file", "global buffer", "network", "dram", "total"};
    char line[320] = "", cell[64];
    for (int k = 0; k < 6; k++) {
        snprintf(cell, sizeof cell, "%s%s %.2f (%.2f)", k ? ", " : "", names[k], (k < 5 ? lv[k] : pj) / macs,
                 theirs[k]);
        strncat(line, cell, sizeof line - strlen(line) - 1);
    }
    fprintf(stderr, "\nconv1, pJ/MAC, the model (Timeloop's Eyeriss-like example): %s\n", line);
    assert_string_equal(line, "datapath 0.99 (2.20), register file 3.64 (2.38), global buffer 0.72 (0.46), "
                              "network 1.30 (0.00), dram 2.55 (3.18), total 9.20 (8.22)");
    double ratio = pj / macs / theirs[5];
    if (ratio < 0.8 || ratio > 1.25) fail_msg("conv1: %.2f pJ/MAC, %.2fx Timeloop's %.2f", pj / macs, ratio, theirs[5]);
}

/* Layer l's graph g (from path) quantized to 16 bits on the quantizer's
 * synthetic inputs, compiled for a, run in cycle mode on a post-ReLU-like
 * input (half zeros, as AlexNet's own layers see) bit-exact against the
 * golden reference element by element, the cost model exact: *qg, *p and
 * *res for the caller to free, *geo its first instruction's geometry.
 * Returns the PEs the mapping keeps busy (its first pass). */
static int run_layer(const char *path, int l, const enpu_arch *a, enpu_graph *g, enpu_graph **qg, enpu_program *p,
                     enpu_sim_result *res, enpu_rs_geom *geo) {
    enpu_err err = {0};
    enpu_quant_opts qo;
    enpu_compile_quant_opts(a, &qo);
    qo.bits = 16;
    qo.quiet = true;
    assert_int_equal(enpu_quantize_graph(g, NULL, 0, &qo, qg, NULL, &err), 0);
    if (enpu_compile(*qg, a, NULL, p, NULL, &err)) fail_msg("%s: %s", path, err.msg);
    const enpu_tensor *xt = &g->tensors[g->inputs[0]];
    enpu_buf in;
    assert_int_equal(enpu_buf_alloc(&in, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err), 0);
    for (int64_t i = 0; i < enpu_buf_numel(&in); i++) {
        double v = nrand();
        ((float *)in.data)[i] = (float)(v > 0 ? v : 0);
    }
    assert_int_equal(enpu_test_run_golden(path, p, a, *qg, &in, res), 1);
    enpu_test_assert_cost_exact(layer_names[l], p, res);
    enpu_buf_free(&in);
    assert_int_equal(enpu_rs_geom_of(a, &p->instr[0], geo, &err), 0);
    enpu_rs_pass ps;
    enpu_rs_pass_of(geo, &p->instr[0], 0, &ps);
    return (int)(ps.ne * ps.tu * ps.ru * ps.nk);
}

static void test_alexnet(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("eyeriss", &a, &err), 0);
    /* the chip's controller streams each pass's filters before its MACs:
     * no filter banks (docs/rowstat.md "Filter banks"), the engine this
     * comparison was made on */
    a.rs_filter_banks = 0;
    static table tv, spec;
    table_load(&tv, PUBLISHED "eyeriss_alexnet.csv");
    table_load(&spec, PUBLISHED "eyeriss_chip.csv");
    /* Table V's conditions: a batch of 4 at the preset's 200 MHz */
    const double batch = table_get(&spec, "item", "alexnet_batch", "value"), mhz = (double)a.clock_mhz;
    assert_true(batch == 4 && mhz == 200);
    fprintf(stderr, "\nAlexNet conv layers, 16-bit, on arch eyeriss (one image; Eyeriss: JSSC 2017, batch 4 / 4)\n");
    fprintf(stderr, "%-6s %10s %10s %6s %6s %9s | %9s %6s %7s %7s %7s | %9s %6s %6s %7s %7s\n", "layer", "MACs",
            "cycles", "fill%", "util%", "PEs used", "DRAM MB", "GLB MB", "psum MB", "NoC M", "local M", "Eyeriss",
            "util%", "PEs", "GLB MB", "DRAM MB");
    enpu_energy_costs costs, costs65;
    enpu_energy_costs_of(&a, &costs);
    /* the model at the chip's node and voltage (65 nm, 1 V: Table IV, Table V) */
    enpu_arch a65 = a;
    a65.tech_nm = table_get(&spec, "item", "technology", "value");
    a65.vdd_v = 1.0;
    enpu_energy_costs_of(&a65, &costs65);
    char energy_line[5][256], chip_line[5][256];
    double conv1_lv[5] = {0}, conv1_pj = 0, conv1_macs = 0, conv1_dram = 0; /* for Timeloop's conv1 */
    double vs[5][5]; /* against the chip: cycles, PEs, DRAM, global buffer, the same with 16-bit psums */
    for (int l = 0; l < 5; l++) {
        char path[512];
        snprintf(path, sizeof path, ENPU_SOURCE_DIR "/models/alexnet/%s.onnx", layer_names[l]);
        enpu_graph *g = NULL, *qg = NULL;
        assert_int_equal(enpu_onnx_load(path, &g, &err), 0);
        enpu_program p;
        enpu_sim_result res;
        enpu_rs_geom geo;
        const int pes = run_layer(path, l, &a, g, &qg, &p, &res, &geo);
        const enpu_layer_stats *st = &res.layers[0];
        uint64_t local = st->reads[ENPU_MEM_PE_FIFO] + st->writes[ENPU_MEM_PE_FIFO] + st->reads[ENPU_MEM_IFMAP_LB] +
                         st->writes[ENPU_MEM_IFMAP_LB] + st->reads[ENPU_MEM_FILTER_LB] +
                         st->writes[ENPU_MEM_FILTER_LB] + st->reads[ENPU_MEM_PSUM] + st->writes[ENPU_MEM_PSUM];
        /* values the networks deliver into the PEs' FIFOs and filter loop buffers */
        uint64_t noc = st->writes[ENPU_MEM_PE_FIFO] + st->writes[ENPU_MEM_FILTER_LB];
        uint64_t dram_b = (st->reads[ENPU_MEM_OFFCHIP] + st->writes[ENPU_MEM_OFFCHIP]) * (uint64_t)enpu_arch_word_bytes(&a);
        uint64_t glb_b = st->reads[ENPU_MEM_GLB] + st->writes[ENPU_MEM_GLB];
        double dram = (double)dram_b / 1e6, glb = (double)glb_b / 1e6;
        /* every output but the first pass of its block writes its psum to the
         * buffer and the next pass reads it back, rs_psum_bits wide */
        const enpu_instr *ci = &p.instr[0];
        uint64_t psum_glb = (uint64_t)(2 * (geo.n_cb * geo.n_fold - 1) * geo.psum_bytes * ci->ho * ci->wo * ci->co);
        uint64_t fill = st->activity[ENPU_ACT_PIPELINE_FILL];
        /* the chip's, per image: cycles at the clock, bytes */
        double e_cycles = chip(&tv, l, "latency_ms") * 1e-3 * mhz * 1e6 / batch;
        double e_glb = chip(&tv, l, "glb_accesses_mb") / batch, e_dram = chip(&tv, l, "dram_accesses_mb") / batch;
        int e_pes = (int)chip(&tv, l, "active_pes");
        fprintf(stderr,
                "%-6s %10llu %10llu %6.1f %6.1f %5d/168 | %9.2f %6.1f %7.1f %7.2f %7.1f | %9.0f %6.1f %2d/168 %7.2f %7.2f\n",
                layer_names[l], (unsigned long long)res.total_macs, (unsigned long long)res.total_cycles,
                100.0 * (double)fill / (double)res.total_cycles, 100.0 * res.utilization, pes, dram, glb,
                (double)psum_glb / 1e6, (double)noc / 1e6, (double)local / 1e6,
                e_cycles, 100.0 * (double)res.total_macs / (e_cycles * 168), e_pes, e_glb, e_dram);
        const ours *x = &expect[l];
        assert_int_equal(res.total_cycles, x->cycles);
        assert_int_equal(pes, x->pes);
        assert_int_equal(dram_b, x->dram);
        assert_int_equal(glb_b, x->glb);
        assert_int_equal(noc, x->noc);
        assert_int_equal(local, x->local);
        assert_int_equal(fill, x->fill);
        assert_int_equal(psum_glb, x->psum_glb);
        /* the energy of the run (the layer and the `end`), by level */
        enpu_energy en;
        enpu_energy_of(&costs, res.reads, res.writes, res.uops, &en);
        double lv[5] = {0};
        for (int pt = 0; pt < ENPU_EP_COUNT; pt++)
            for (int k = 0; k < 5; k++)
                if (!strcmp(enpu_energy_part_level((enpu_energy_part)pt), enpu_energy_levels[k])) lv[k] += en.part_pj[pt];
        if (l == 0) {
            memcpy(conv1_lv, lv, sizeof lv);
            conv1_pj = en.total_pj, conv1_macs = (double)res.total_macs, conv1_dram = (double)dram_b;
        }
        snprintf(energy_line[l], sizeof energy_line[l], "%.3f pJ/MAC, %.3f uJ: %.3f %.3f %.3f %.3f %.3f",
                 enpu_energy_per_mac(en.total_pj, res.total_macs), en.total_pj / 1e6, lv[0] / 1e6, lv[1] / 1e6,
                 lv[2] / 1e6, lv[3] / 1e6, lv[4] / 1e6);

        /* beside the chip's energy per image, power x latency / batch (mW x
         * ms = uJ): the model's on-chip part at 65 nm and 1 V -- the chip's
         * power leaves DRAM out */
        enpu_energy e65;
        enpu_energy_of(&costs65, res.reads, res.writes, res.uops, &e65);
        double ours65 = (e65.total_pj - e65.part_pj[ENPU_EP_DRAM]) / 1e6;
        double chip_uj = chip(&tv, l, "power_mw") * chip(&tv, l, "latency_ms") / batch;
        snprintf(chip_line[l], sizeof chip_line[l], "%.1f uJ on chip at 65 nm, 1 V (DRAM %.1f); the chip %.1f uJ: %.2fx",
                 ours65, e65.part_pj[ENPU_EP_DRAM] / 1e6, chip_uj, chip_uj / ours65);
        if (chip_uj < 0.85 * ours65 || chip_uj > 1.6 * ours65)
            fail_msg("%s: the chip's %.1f uJ is %.2fx the model's %.1f uJ on chip, outside 0.85x..1.6x", layer_names[l],
                     chip_uj, chip_uj / ours65, ours65);

        /* against the chip, the bands docs/rowstat.md states */
        char what[64];
        snprintf(what, sizeof what, "%s against Eyeriss (JSSC 2017, Table V)", layer_names[l]);
        if (fabs((double)res.total_macs * batch - chip(&tv, l, "macs_g") * 1e9) > 0.005e9 + 1e-6)
            fail_msg("%s: %llu MACs x %.0f, the table's %.2f G", what, (unsigned long long)res.total_macs, batch,
                     chip(&tv, l, "macs_g"));
        if (l == 1 ? pes < e_pes || pes > e_pes + 5 : pes != e_pes)
            fail_msg("%s: %d PEs, the chip %d", what, pes, e_pes);
        double dc = (double)res.total_cycles / e_cycles - 1;
        if (dc < -0.17 || dc >= 0.175) fail_msg("%s: cycles %+.1f%% of the chip's, outside -17%%..+17.5%%", what, 100 * dc);
        if (dram <= e_dram || dram > 5.5 * e_dram) fail_msg("%s: DRAM %.2f MB, the chip %.3f MB", what, dram, e_dram);
        double glb16 = glb - (double)psum_glb / 1e6 * (1 - 2.0 / (double)geo.psum_bytes);
        if (glb < 1.9 * e_glb || glb > 3.7 * e_glb || glb16 < 0.65 * e_glb || glb16 > 2.2 * e_glb)
            fail_msg("%s: global buffer %.2f MB (%.2f with 16-bit psums), the chip %.3f MB", what, glb, glb16, e_glb);
        vs[l][0] = 100 * dc, vs[l][1] = pes - e_pes, vs[l][2] = dram / e_dram, vs[l][3] = glb / e_glb;
        vs[l][4] = glb16 / e_glb;
        enpu_sim_result_free(&res);
        enpu_program_free(&p);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    fprintf(stderr, "\nenergy (45 nm, 0.9 V; uJ by level: datapath, register file, global buffer, network, DRAM)\n");
    for (int l = 0; l < 5; l++) {
        fprintf(stderr, "%-6s %s\n", layer_names[l], energy_line[l]);
        assert_string_equal(energy_line[l], expect_energy[l]);
    }
    fprintf(stderr, "\nenergy beside the chip's (JSSC 2017 Table V: power x latency / 4, one image)\n");
    for (int l = 0; l < 5; l++) fprintf(stderr, "%-6s %s\n", layer_names[l], chip_line[l]);
    for (int l = 0; l < 5; l++) assert_string_equal(chip_line[l], expect_chip[l]);
    timeloop_conv1(conv1_lv, conv1_pj, conv1_macs, conv1_dram);
    fprintf(stderr, "\nagainst the chip: %-6s %8s %5s %7s %7s %16s\n", "layer", "cycles", "PEs", "DRAM", "GLB",
            "GLB, 16-bit psums");
    for (int l = 0; l < 5; l++)
        fprintf(stderr, "%18s%-6s %+7.1f%% %+5.0f %6.2fx %6.2fx %15.2fx\n", "", layer_names[l], vs[l][0], vs[l][1],
                vs[l][2], vs[l][3], vs[l][4]);
}

/* ---- a batch of 4, as the chip runs them ------------------------------------------------ */

/* The five layers at the chip's batch of 4 (docs/rowstat.md "Batches"):
 * each compiled into rs_conv of n images per pass (n the search's: the
 * filters in the PEs serve n images); its time per image and its PE
 * activity beside Table V's, on two engines:
 *
 * - the chip's: preset eyeriss without filter banks (the chip's controller
 *   streams each pass's filters before its MACs, as in test_alexnet).
 *   Timed by the cost model (equal to the simulator: every run of this
 *   file and tests/unit/test_rowstat_random.c check that), so that the
 *   long tier simulates the batch once.  The target: time per image within
 *   10% of the chip's processing latency on every layer (+5.4 .. -9.9%;
 *   its latency also counts its time outside processing, which this
 *   engine does not model: -16.8 .. +0.4% of it), PEs at least the chip's,
 *   MAC utilisation at least 99% of it (conv5's 84.4% beside 84.8%).
 * - preset eyeriss as it is, with filter banks (the next pass's filters
 *   stream in during this pass's MACs): simulated, bit-exact against the
 *   golden reference, the cost model exact.  Faster than the chip: -21% ..
 *   +1% of its latency, within 13% of its processing latency; PEs at least
 *   the chip's, utilisation above it on every layer (conv5's 88.3%).
 *
 * Asserted exactly: n, the batch's cycles, its fill, the PEs the
 * mapping uses; and those bands (docs/rowstat.md says why they are what
 * they are). */
typedef struct batch_ours {
    int64_t n;          /* images per pass */
    uint64_t cycles;    /* the batch's */
    uint64_t fill;      /* cycles before each pass's first MAC */
    int pes;
} batch_ours;
static const batch_ours expect_b4[2][5] = {{{1, 3479437, 279936, 154},
                                            {2, 7061347, 308256, 140},
                                            {4, 4186467, 222208, 156},
                                            {4, 3162235, 166656, 156},
                                            {4, 2108785, 111120, 156}},
                                           {{1, 3310037, 107176, 154},
                                            {1, 6877721, 88500, 140},
                                            {4, 3973111, 39305, 168},
                                            {4, 2990183, 29577, 168},
                                            {2, 2016393, 30258, 168}}};
/* the bands: time per image against the latency (lo, hi) and the
 * processing latency (|x| at most) */
static const double band_b4[2][3] = {{-0.17, 0.01, 0.10}, {-0.21, 0.01, 0.13}};

/* Layer l at batch 4 on arch a: compiled, then simulated against the
 * golden reference (sim) or timed by the cost model; the figures into *got. */
static void batch_layer(int l, const enpu_arch *a, bool sim, batch_ours *got, int *ninstr, uint64_t *macs) {
    enpu_err err = {0};
    char path[512], spec[128];
    snprintf(path, sizeof path, ENPU_SOURCE_DIR "/models/alexnet/%s.onnx", layer_names[l]);
    /* the layer's input at batch 4: its one-image shape, dimension 0 four */
    enpu_graph *g1 = NULL, *g = NULL, *qg = NULL;
    assert_int_equal(enpu_onnx_load(path, &g1, &err), 0);
    const enpu_tensor *x1 = &g1->tensors[g1->inputs[0]];
    int k = snprintf(spec, sizeof spec, "%s=4", x1->name);
    for (int d = 1; d < x1->rank; d++) k += snprintf(spec + k, sizeof spec - (size_t)k, "x%lld", (long long)x1->dims[d]);
    enpu_graph_free(g1);
    enpu_onnx_input_shape shape;
    assert_int_equal(enpu_onnx_parse_input_shape(spec, &shape, &err), 0);
    enpu_onnx_opts oo = {0, NULL, 0, &shape, 1};
    assert_int_equal(enpu_onnx_load_opts(path, &oo, &g, &err), 0);
    assert_int_equal(g->tensors[g->inputs[0]].dims[0], 4);
    enpu_program p;
    enpu_rs_geom geo;
    if (sim) {
        enpu_sim_result res;
        const int pes = run_layer(path, l, a, g, &qg, &p, &res, &geo);
        uint64_t fill = 0;
        for (int i = 0; i < p.n_instr; i++) fill += res.layers[i].activity[ENPU_ACT_PIPELINE_FILL];
        *got = (batch_ours){geo.n, res.total_cycles, fill, pes};
        *macs = res.total_macs;
        enpu_sim_result_free(&res);
    } else {
        enpu_quant_opts qo;
        enpu_compile_quant_opts(a, &qo);
        qo.bits = 16;
        qo.quiet = true;
        assert_int_equal(enpu_quantize_graph(g, NULL, 0, &qo, &qg, NULL, &err), 0);
        if (enpu_compile(qg, a, NULL, &p, NULL, &err)) fail_msg("%s: %s", path, err.msg);
        int64_t *act = calloc((size_t)p.n_instr * ENPU_ACT_COUNT, sizeof *act);
        assert_non_null(act);
        const int64_t t = enpu_rs_model_program(&p, act, NULL, NULL);
        assert_true(t > 0);
        uint64_t fill = 0;
        for (int i = 0; i < p.n_instr; i++) fill += (uint64_t)act[(size_t)i * ENPU_ACT_COUNT + ENPU_ACT_PIPELINE_FILL];
        free(act);
        assert_int_equal(enpu_rs_geom_of(a, &p.instr[0], &geo, &err), 0);
        enpu_rs_pass ps;
        enpu_rs_pass_of(&geo, &p.instr[0], 0, &ps);
        *got = (batch_ours){geo.n, (uint64_t)t, fill, (int)(ps.ne * ps.tu * ps.ru * ps.nk)};
        /* the layer's MACs: N images of ho x wo x co outputs, each ci/groups x hk x wk */
        const enpu_instr *in = &p.instr[0];
        *macs = 4 * (uint64_t)(in->ho * in->wo * in->co * (in->ci / in->groups) * in->hk * in->wk);
    }
    *ninstr = p.n_instr;
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static void test_alexnet_batch4(void **state) {
    (void)state;
    enpu_err err = {0};
    static table tv;
    table_load(&tv, PUBLISHED "eyeriss_alexnet.csv");
    static const char *const engines[2] = {"the chip's engine (eyeriss, rs_filter_banks 0; cost model)",
                                           "preset eyeriss (filter banks; simulated)"};
    for (int cfg = 0; cfg < 2; cfg++) {
        enpu_arch a;
        assert_int_equal(enpu_arch_preset("eyeriss", &a, &err), 0);
        if (cfg == 0) a.rs_filter_banks = 0;
        const double batch = 4, mhz = (double)a.clock_mhz;
        batch_ours got[5];
        int ninstr[5], e_pess[5];
        double dcs[5], dps[5], utils[5], e_utils[5];
        fprintf(stderr, "\nAlexNet conv layers, 16-bit, a batch of 4 on %s (Eyeriss: JSSC 2017, Table V)\n",
                engines[cfg]);
        fprintf(stderr, "%-6s %2s %10s %10s %8s %6s %6s %8s | %9s %8s %8s %6s %4s\n", "layer", "n", "cycles",
                "per image", "fill", "fill%", "util%", "PEs", "Eyeriss", "vs", "vs proc", "util%", "PEs");
        for (int l = 0; l < 5; l++) {
            uint64_t macs;
            batch_layer(l, &a, cfg == 1, &got[l], &ninstr[l], &macs);
            const double per = (double)got[l].cycles / batch;
            const double e_cycles = chip(&tv, l, "latency_ms") * 1e-3 * mhz * 1e6 / batch;
            const double e_proc = chip(&tv, l, "processing_latency_ms") * 1e-3 * mhz * 1e6 / batch;
            const double util = (double)macs / ((double)got[l].cycles * 168);
            const double e_util = (double)macs / (e_cycles * batch * 168);
            const int e_pes = (int)chip(&tv, l, "active_pes");
            dcs[l] = per / e_cycles - 1, dps[l] = per / e_proc - 1, utils[l] = util, e_utils[l] = e_util;
            e_pess[l] = e_pes;
            fprintf(stderr, "%-6s %2lld %10llu %10.0f %8llu %6.1f %6.1f %4d/168 | %9.0f %+7.1f%% %+7.1f%% %6.1f %4d\n",
                    layer_names[l], (long long)got[l].n, (unsigned long long)got[l].cycles, per,
                    (unsigned long long)got[l].fill, 100.0 * (double)got[l].fill / (double)got[l].cycles, 100 * util,
                    got[l].pes, e_cycles, 100 * dcs[l], 100 * dps[l], 100 * e_util, e_pes);
        }
        /* every layer printed first, then the figures */
        for (int l = 0; l < 5; l++) {
            const batch_ours *x = &expect_b4[cfg][l];
            const double dc = dcs[l], dp = dps[l], util = utils[l], e_util = e_utils[l];
            const int pes = got[l].pes, e_pes = e_pess[l];
            assert_int_equal(got[l].n, x->n);
            assert_int_equal(ninstr[l] - 1, 4 / x->n); /* and the end */
            assert_int_equal(got[l].cycles, x->cycles);
            assert_int_equal(got[l].fill, x->fill);
            assert_int_equal(pes, x->pes);
            char what[128];
            snprintf(what, sizeof what, "%s at batch 4 on %s against Eyeriss (JSSC 2017, Table V)", layer_names[l],
                     engines[cfg]);
            const double *b = band_b4[cfg];
            if (dc < b[0] || dc > b[1])
                fail_msg("%s: %+.1f%% of the chip's time per image, outside %+.0f%%..%+.0f%%", what, 100 * dc,
                         100 * b[0], 100 * b[1]);
            if (fabs(dp) > b[2])
                fail_msg("%s: %+.1f%% of the chip's processing time per image, past %.0f%%", what, 100 * dp,
                         100 * b[2]);
            if (pes < e_pes || util < 0.99 * e_util)
                fail_msg("%s: %d PEs, %.1f%% busy; the chip's %d, %.1f%%", what, pes, 100 * util, e_pes, 100 * e_util);
        }
    }
}

/* The cost of one 16-bit value at each level of preset eyeriss, relative
 * to its 16-bit MAC, beside Eyeriss's normalised access energies (ISCA
 * 2016, Table IV: tests/data/published/eyeriss_energy_levels.csv); the
 * model's ratios are asserted exactly and docs/rowstat.md "The cost of a
 * level" explains each difference.  The levels, in the model's units: a
 * filter-scratchpad read (224 entries, 448 bytes: the paper's register file
 * is 0.5-1.0 kB), a value multicast over the array (down the column of row
 * nodes and along one row: the paper's inter-PE transfer), two bytes of the
 * global buffer, two bytes of a DRAM word. */
static void test_levels(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("eyeriss", &a, &err), 0);
    enpu_energy_costs c;
    enpu_energy_costs_of(&a, &c);
    static table lv;
    table_load(&lv, PUBLISHED "eyeriss_energy_levels.csv");
    const double mac = c.uop_pj[ENPU_UOP_MAC16];
    const double model[5] = {1.0, c.read_pj[ENPU_MEM_FILTER_LB] / mac,
                            (c.read_pj[ENPU_MEM_NOC] + c.write_pj[ENPU_MEM_NOC]) / mac, 2 * c.read_pj[ENPU_MEM_GLB] / mac,
                            c.read_pj[ENPU_MEM_OFFCHIP] * 2 / (double)enpu_arch_word_bytes(&a) / mac};
    static const char *const levels[5] = {"mac", "rf", "array_inter_pe", "global_buffer", "dram"};
    char line[256] = "", cell[48];
    for (int k = 0; k < 5; k++) {
        double paper = table_get(&lv, "level", levels[k], "value");
        snprintf(cell, sizeof cell, "%s%s %.2f (%g)", k ? ", " : "", levels[k], model[k], paper);
        strncat(line, cell, sizeof line - strlen(line) - 1);
    }
    fprintf(stderr, "x a 16-bit MAC (%.3f pJ), the model (the paper): %s\n", mac, line);
    assert_string_equal(line, "mac 1.00 (1), rf 0.60 (1), array_inter_pe 7.02 (2), global_buffer 9.42 (6), "
                              "dram 333.33 (200)");
    /* the nearest to the paper's neighbour transfer: a psum one PE down */
    snprintf(cell, sizeof cell, "%.2f", c.read_pj[ENPU_MEM_PSUM_LINK] / mac);
    assert_string_equal(cell, "1.07");
}

/* The fixtures against themselves and the preset: Table V's total row and
 * the abstract agree with its layers (35 frames/s, 278 mW, 0.0029 DRAM
 * accesses of 16 bits per MAC, MB = 10^6 bytes), and preset eyeriss is the
 * chip of Table IV (168 PEs, 108 KB global buffer, scratch pads of 224
 * filter weights, 12 feature-map values and 24 psums of 16 bits, a clock in
 * its range; KB = 1024 bytes: 108 KB + 168 x 448 B = 181.5 KB of SRAM). */
static void test_published(void **state) {
    (void)state;
    static table tv, spec;
    table_load(&tv, PUBLISHED "eyeriss_alexnet.csv");
    table_load(&spec, PUBLISHED "eyeriss_chip.csv");
    assert_int_equal(tv.n_rows, 6);
    double lat = 0, proc = 0, macs = 0, glb = 0, dram = 0, energy = 0, pe_time = 0;
    for (int l = 0; l < 5; l++) {
        double t = chip(&tv, l, "latency_ms");
        assert_true(chip(&tv, l, "processing_latency_ms") <= t);
        lat += t, proc += chip(&tv, l, "processing_latency_ms"), macs += chip(&tv, l, "macs_g");
        glb += chip(&tv, l, "glb_accesses_mb"), dram += chip(&tv, l, "dram_accesses_mb");
        energy += chip(&tv, l, "power_mw") * t, pe_time += chip(&tv, l, "active_pes") * t;
    }
    const char *T = "total";
    /* the total row: sums to the table's rounding, power and PEs weighted by time */
    assert_true(fabs(lat - table_get(&tv, "layer", T, "latency_ms")) < 0.05);
    assert_true(fabs(proc - table_get(&tv, "layer", T, "processing_latency_ms")) < 0.05);
    assert_true(fabs(macs - table_get(&tv, "layer", T, "macs_g")) <= 0.025);
    assert_true(fabs(glb - table_get(&tv, "layer", T, "glb_accesses_mb")) <= 0.25);
    assert_true(fabs(dram - table_get(&tv, "layer", T, "dram_accesses_mb")) <= 0.25);
    assert_true(fabs(energy / lat - table_get(&tv, "layer", T, "power_mw")) < 0.5);
    assert_true(fabs(pe_time / lat - table_get(&tv, "layer", T, "active_pes")) < 0.5);
    /* the abstract */
    double batch = table_get(&spec, "item", "alexnet_batch", "value");
    double fps = batch / (table_get(&tv, "layer", T, "latency_ms") * 1e-3);
    assert_true(fabs(fps - table_get(&spec, "item", "alexnet_conv_frames_per_s", "value")) < 0.5);
    assert_true(table_get(&spec, "item", "alexnet_conv_power", "value") == table_get(&tv, "layer", T, "power_mw"));
    double per_mac = table_get(&tv, "layer", T, "dram_accesses_mb") * 1e6 / 2 / (table_get(&tv, "layer", T, "macs_g") * 1e9);
    assert_true(fabs(per_mac - table_get(&spec, "item", "alexnet_conv_dram_accesses_per_mac", "value")) < 0.00005);
    /* Table IV and the preset */
    enpu_arch a = enpu_test_preset("eyeriss");
    double pes = table_get(&spec, "item", "pes", "value"), kb = 1024;
    double bits = table_get(&spec, "item", "arithmetic_precision", "value"), vb = bits / 8;
    assert_true((double)(a.rs_rows * a.rs_cols) == pes);
    assert_true((double)a.rs_glb_bytes == table_get(&spec, "item", "global_buffer", "value") * kb);
    assert_true((double)a.rs_filter_lb_depth * vb == table_get(&spec, "item", "spad_filter_weights", "value"));
    assert_true((double)a.rs_ifmap_lb_depth * vb == table_get(&spec, "item", "spad_feature_maps", "value"));
    assert_true((double)a.rs_psum_depth * vb == table_get(&spec, "item", "spad_partial_sums", "value"));
    assert_true(table_get(&spec, "item", "global_buffer", "value") * kb +
                    pes * table_get(&spec, "item", "spad_filter_weights", "value") ==
                table_get(&spec, "item", "on_chip_sram", "value") * kb);
    double lo = table_get(&spec, "item", "core_clock_min", "value"), hi = table_get(&spec, "item", "core_clock_max", "value");
    assert_true((double)a.clock_mhz >= lo && (double)a.clock_mhz <= hi);
    assert_true(fabs(pes * lo / 1e3 - table_get(&spec, "item", "peak_throughput_min", "value")) < 0.05);
    assert_true(fabs(pes * hi / 1e3 - table_get(&spec, "item", "peak_throughput_max", "value")) < 0.05);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {cmocka_unit_test(test_published), cmocka_unit_test(test_levels),
                                      cmocka_unit_test(test_alexnet)};
    const struct CMUnitTest slow[] = {cmocka_unit_test(test_alexnet_batch4)};
    return ENPU_TEST_MAIN_TIERS(argc, argv, repo, ENPU_NO_TESTS, slow, ENPU_NO_TESTS);
}
