/* AlexNet's five convolution layers (models/alexnet/, built by
 * scripts/make_alexnet_convs.py) on the Eyeriss-sized row-stationary engine
 * (preset eyeriss: 12 x 14 PEs, 108 KB global buffer, 16-bit data), beside
 * the figures the Eyeriss paper publishes for the same layers (Chen et al.,
 * JSSC 2017, batch of 4 at 200 MHz: divided by 4 here, one image).  Every
 * layer: quantized to 16 bits, compiled, run in cycle mode against the golden
 * reference element by element with the cost model exact; the tables of
 * docs/rowstat.md (the run, and its energy by level) are what this test
 * prints, and their figures are asserted. */
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

typedef struct eyeriss_row {
    const char *name;
    double latency_ms;   /* batch of 4, 200 MHz */
    int active_pes;      /* of 168 */
    double glb_mb, dram_mb; /* batch of 4 */
} eyeriss_row;

/* JSSC 2017, the table of AlexNet's CONV layers measured on the chip. */
static const eyeriss_row eyeriss[5] = {
    {"conv1", 20.9, 154, 18.5, 5.0}, {"conv2", 41.9, 135, 77.6, 4.0}, {"conv3", 23.6, 156, 50.2, 3.0},
    {"conv4", 18.4, 156, 37.4, 2.1}, {"conv5", 10.5, 156, 24.9, 1.3}};

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
                               {1948437, 140, 1899248, 39762496, 17133120, 885816000, 155760, 32845824},
                               {1285035, 156, 2027088, 39114240, 16743168, 575467776, 222304, 32188416},
                               {1134672, 168, 2946048, 30822144, 12220416, 430589952, 332544, 23881728},
                               {767812, 168, 2030176, 13439488, 8671104, 301092480, 221496, 7614464}};

/* The energy model's figures for each layer (docs/rowstat.md "Energy"):
 * pJ per MAC, and the energy by level in uJ (datapath, register file,
 * global buffer, network, DRAM), printed "%.3f". */
static const char *const expect_energy[5] = {
    "9.201 pJ/MAC, 969.935 uJ: 104.068 384.137 76.269 137.032 268.429",
    "7.367 pJ/MAC, 1649.870 uJ: 219.514 795.456 182.621 143.651 308.628",
    "8.576 pJ/MAC, 1282.348 uJ: 146.447 503.142 179.644 123.714 329.402",
    "10.648 pJ/MAC, 1194.020 uJ: 109.897 376.890 141.560 86.941 478.733",
    "10.464 pJ/MAC, 782.286 uJ: 73.161 271.061 61.725 46.435 329.904"};

static uint64_t rng_s = 20161231;
static double nrand(void) {
    rng_s = rng_s * 6364136223846793005ull + 1442695040888963407ull;
    double u = ((double)(rng_s >> 11) + 1) / 9007199254740993.0;
    rng_s = rng_s * 6364136223846793005ull + 1442695040888963407ull;
    double v = (double)(rng_s >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static void test_alexnet(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("eyeriss", &a, &err), 0);
    fprintf(stderr, "\nAlexNet conv layers, 16-bit, on arch eyeriss (one image; Eyeriss: JSSC 2017, batch 4 / 4)\n");
    fprintf(stderr, "%-6s %10s %10s %6s %6s %9s | %9s %6s %7s %7s %7s | %9s %6s %6s %7s %7s\n", "layer", "MACs",
            "cycles", "fill%", "util%", "PEs used", "DRAM MB", "GLB MB", "psum MB", "NoC M", "local M", "Eyeriss",
            "util%", "PEs", "GLB MB", "DRAM MB");
    enpu_energy_costs costs;
    enpu_energy_costs_of(&a, &costs);
    char energy_line[5][256];
    for (int l = 0; l < 5; l++) {
        char path[512];
        snprintf(path, sizeof path, ENPU_SOURCE_DIR "/models/alexnet/%s.onnx", eyeriss[l].name);
        enpu_graph *g = NULL, *qg = NULL;
        assert_int_equal(enpu_onnx_load(path, &g, &err), 0);
        enpu_quant_opts qo;
        enpu_compile_quant_opts(&a, &qo);
        qo.bits = 16;
        qo.quiet = true;
        /* calibrated on the quantizer's synthetic inputs; run on a
         * post-ReLU-like one (half zeros), as AlexNet's own layers see */
        assert_int_equal(enpu_quantize_graph(g, NULL, 0, &qo, &qg, NULL, &err), 0);
        enpu_program p;
        if (enpu_compile(qg, &a, NULL, &p, NULL, &err)) fail_msg("%s: %s", path, err.msg);
        const enpu_tensor *xt = &g->tensors[g->inputs[0]];
        enpu_buf in;
        assert_int_equal(enpu_buf_alloc(&in, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err), 0);
        for (int64_t i = 0; i < enpu_buf_numel(&in); i++) {
            double v = nrand();
            ((float *)in.data)[i] = (float)(v > 0 ? v : 0);
        }
        enpu_gexec *ex = NULL;
        assert_int_equal(enpu_gexec_new(qg, &ex, &err), 0);
        assert_int_equal(enpu_gexec_run(ex, &in, &err), 0);
        enpu_golden_check gc = {qg, ex, 0};
        enpu_sim_opts o = {0};
        o.mode = ENPU_SIM_CYCLE;
        o.on_layer = enpu_golden_check_layer;
        o.cb_ctx = &gc;
        enpu_sim *sim = NULL;
        enpu_sim_result res;
        if (enpu_sim_new(&p, &a, &o, &sim, &err) || enpu_sim_run(sim, &in, 1, &res, &err))
            fail_msg("%s: %s", path, err.msg);
        assert_int_equal(gc.compared, 1);
        assert_int_equal(enpu_golden_check_outputs(&gc, &res, &err), 0);
        enpu_test_assert_cost_exact(eyeriss[l].name, &p, &res);
        /* the PEs the layer's mapping keeps busy (its first pass) */
        enpu_rs_geom geo;
        assert_int_equal(enpu_rs_geom_of(&a, &p.instr[0], &geo, &err), 0);
        enpu_rs_pass ps;
        enpu_rs_pass_of(&geo, &p.instr[0], 0, &ps);
        int pes = (int)(ps.ne * ps.tu * ps.ru * ps.nk);
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
        const eyeriss_row *e = &eyeriss[l];
        fprintf(stderr,
                "%-6s %10llu %10llu %6.1f %6.1f %5d/168 | %9.2f %6.1f %7.1f %7.2f %7.1f | %9.0f %6.1f %2d/168 %7.2f %7.2f\n",
                e->name, (unsigned long long)res.total_macs, (unsigned long long)res.total_cycles,
                100.0 * (double)fill / (double)res.total_cycles, 100.0 * res.utilization, pes, dram, glb,
                (double)psum_glb / 1e6, (double)noc / 1e6, (double)local / 1e6,
                e->latency_ms * 1e-3 * 200e6 / 4,
                100.0 * (double)res.total_macs / (e->latency_ms * 1e-3 * 200e6 / 4 * 168), e->active_pes,
                e->glb_mb / 4, e->dram_mb / 4);
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
        snprintf(energy_line[l], sizeof energy_line[l], "%.3f pJ/MAC, %.3f uJ: %.3f %.3f %.3f %.3f %.3f",
                 enpu_energy_per_mac(en.total_pj, res.total_macs), en.total_pj / 1e6, lv[0] / 1e6, lv[1] / 1e6,
                 lv[2] / 1e6, lv[3] / 1e6, lv[4] / 1e6);
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
        enpu_gexec_free(ex);
        enpu_buf_free(&in);
        enpu_program_free(&p);
        enpu_graph_free(qg);
        enpu_graph_free(g);
    }
    fprintf(stderr, "\nenergy (45 nm, 0.9 V; uJ by level: datapath, register file, global buffer, network, DRAM)\n");
    for (int l = 0; l < 5; l++) {
        fprintf(stderr, "%-6s %s\n", eyeriss[l].name, energy_line[l]);
        assert_string_equal(energy_line[l], expect_energy[l]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_alexnet)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
