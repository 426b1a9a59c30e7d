/* Simulation reports: per-layer text table, JSON report, Chrome trace-event
 * JSON (one track per hardware unit, for Perfetto / chrome://tracing) and a
 * VCD of the control signals of note 000 (ps_addr, if_hw_addr, if_ch_addr,
 * w_och_gcnt, the PE enables and the valid/ready of the buses) within a
 * cycle window, for GTKWave. */
#include "report/sim_report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "isa/isa_internal.h"
#include "report/energy_report.h"
#include "report/model_table.h"

/* ---- text table ------------------------------------------------------------------- */

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void enpu_report_roofline(const enpu_arch *a, const enpu_layer_stats *st, enpu_roofline *out) {
    int64_t wb = enpu_arch_word_bytes(a);
    int64_t bpc = a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb;
    uint64_t units = (uint64_t)enpu_arch_mac_units(a);
    out->dram_read_bytes = st->reads[ENPU_MEM_OFFCHIP] * (uint64_t)wb;
    out->dram_write_bytes = st->writes[ENPU_MEM_OFFCHIP] * (uint64_t)wb;
    /* the bytes the channel moved in the layer's own cycles where the
     * engine measured them (a layer whose transfers ran during the layers
     * before it did not wait for them: they are those layers' traffic);
     * else its transfers' */
    double bytes = st->dram_spanned ? st->dram_span_bytes
                                    : (double)(out->dram_read_bytes + out->dram_write_bytes);
    out->bytes = bytes;
    out->intensity = bytes > 0 ? (double)st->macs / bytes : INFINITY;
    double compute = (double)st->macs / (double)units, dram = bpc > 0 ? (double)bytes / (double)bpc : 0;
    out->dram_bound = bytes > 0 && dram > compute;
    /* the roof: min(MAC units, intensity x bytes per cycle) MACs per cycle */
    out->roof = bytes ? fmin((double)units, out->intensity * (double)bpc) : (double)units;
    out->achieved = st->cycles ? (double)st->macs / (double)st->cycles : 0;
}

void enpu_report_levels(const enpu_arch *a, const uint64_t *rd, const uint64_t *wr,
                        double out[ENPU_LEVEL_COUNT]) {
    const double wb = (double)enpu_arch_word_bytes(a);
    out[ENPU_LEVEL_DRAM] = (double)(rd[ENPU_MEM_OFFCHIP] + wr[ENPU_MEM_OFFCHIP]) * wb;
    if (a->engine == ENPU_ENGINE_ROWSTAT) {
        out[ENPU_LEVEL_BUFFER] = (double)(rd[ENPU_MEM_GLB] + wr[ENPU_MEM_GLB]);
        /* the values the networks deliver into the PEs (noc counts values
         * sent and row buses driven, docs/rowstat.md "Statistics") */
        out[ENPU_LEVEL_ARRAY] = (double)(wr[ENPU_MEM_PE_FIFO] + wr[ENPU_MEM_FILTER_LB]);
        out[ENPU_LEVEL_LOCAL] = (double)(rd[ENPU_MEM_PE_FIFO] + wr[ENPU_MEM_PE_FIFO] + rd[ENPU_MEM_IFMAP_LB] +
                                         wr[ENPU_MEM_IFMAP_LB] + rd[ENPU_MEM_FILTER_LB] + wr[ENPU_MEM_FILTER_LB] +
                                         rd[ENPU_MEM_PSUM] + wr[ENPU_MEM_PSUM]);
        return;
    }
    if (a->engine == ENPU_ENGINE_SYSTOLIC) {
        /* the array: operand values latched, each over one PE link; local:
         * what the PEs read of their operand registers and accumulators */
        out[ENPU_LEVEL_BUFFER] = (double)(rd[ENPU_MEM_MAIN_DTCM] + wr[ENPU_MEM_MAIN_DTCM] + rd[ENPU_MEM_WEIGHT_MEM] +
                                          wr[ENPU_MEM_WEIGHT_MEM]) * wb;
        out[ENPU_LEVEL_ARRAY] = (double)wr[ENPU_MEM_PE_REG];
        out[ENPU_LEVEL_LOCAL] = (double)(rd[ENPU_MEM_PE_REG] + rd[ENPU_MEM_ACC] + wr[ENPU_MEM_ACC]);
        return;
    }
    out[ENPU_LEVEL_BUFFER] = (double)(rd[ENPU_MEM_MAIN_DTCM] + wr[ENPU_MEM_MAIN_DTCM] + rd[ENPU_MEM_SKIP_DTCM] +
                                      wr[ENPU_MEM_SKIP_DTCM] + rd[ENPU_MEM_WEIGHT_MEM] + wr[ENPU_MEM_WEIGHT_MEM]) * wb;
    out[ENPU_LEVEL_ARRAY] = (double)(wr[ENPU_MEM_IFMAP_PAD] + wr[ENPU_MEM_WEIGHT_PAD]);
    out[ENPU_LEVEL_LOCAL] = (double)(rd[ENPU_MEM_IFMAP_PAD] + rd[ENPU_MEM_WEIGHT_PAD] + rd[ENPU_MEM_PSUM] +
                                     wr[ENPU_MEM_PSUM]);
}

/* Functional mode has no time: the layers with their MACs and ideal
 * cycles, and a line saying so rather than a table of zeros. */
static void functional_table(FILE *f, const enpu_arch *a, const enpu_sim_result *r) {
    const uint64_t units = (uint64_t)enpu_arch_mac_units(a);
    char nb[64];
    fprintf(f, "%3s %-24s %-9s %12s %10s\n", "#", "layer", "op", "MACs", "ideal");
    int nrows;
    const enpu_layer_stats *rows = enpu_sim_result_rows(r, &nrows);
    for (int i = 0; i < nrows; i++) {
        const enpu_layer_stats *st = &rows[i];
        if (st->macs == 0 && strcmp(st->op, "end") == 0) continue;
        fprintf(f, "%3d %-24s %-9s %12llu %10llu%s\n", i, enpu_fit(st->name, 24, nb, sizeof nb), st->op,
                (unsigned long long)st->macs, (unsigned long long)st->ideal_cycles, st->host ? "  (host op)" : "");
    }
    fprintf(f, "%3s %-24s %-9s %12llu %10llu\n\n", "", "total", "", (unsigned long long)r->total_macs,
            (unsigned long long)r->total_ideal_cycles);
    fprintf(f, "mode functional, arch %s: %llu MACs on %llu MAC units; cycles, utilization, memory traffic "
               "and energy are not modelled in functional mode (--mode cycle gives them)\n",
            a->name, (unsigned long long)r->total_macs, (unsigned long long)units);
}

void enpu_report_sim_table(FILE *f, const enpu_arch *a, const enpu_sim_result *r) {
    if (r->mode == ENPU_SIM_FUNCTIONAL) {
        functional_table(f, a, r);
        return;
    }
    const uint64_t units = (uint64_t)enpu_arch_mac_units(a);
    static const int all[] = {ENPU_ACT_COMPUTE,      ENPU_ACT_CONTROLLER,  ENPU_ACT_PIPELINE_FILL,
                              ENPU_ACT_IFMAP_LOAD,   ENPU_ACT_BUS_CONFLICT, ENPU_ACT_WEIGHT_LOAD,
                              ENPU_ACT_OFMAP_DRAIN,  ENPU_ACT_PIPELINE_DRAIN, ENPU_ACT_DMA_WAIT,
                              ENPU_ACT_HOST};
    static const char *const all_hdr[] = {"compute", "ctrl", "fill", "ifmap", "busconf", "wload",
                                          "odrain", "pdrain", "dmawait", "host"};
    /* the dma_wait column only for a run that used the DRAM, host for one
     * with host ops */
    const bool offchip = r->activity[ENPU_ACT_DMA_WAIT] || r->reads[ENPU_MEM_OFFCHIP] ||
                         r->writes[ENPU_MEM_OFFCHIP];
    bool hosted = r->activity[ENPU_ACT_HOST] > 0;
    for (int i = 0; i < r->n_layers && !hosted; i++) hosted = r->layers[i].host;
    int acts[sizeof all / sizeof all[0]];
    const char *hdr[sizeof all / sizeof all[0]];
    size_t n_acts = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if ((all[i] == ENPU_ACT_DMA_WAIT && !offchip) || (all[i] == ENPU_ACT_HOST && !hosted)) continue;
        acts[n_acts] = all[i];
        hdr[n_acts++] = all_hdr[i];
    }
    char nb[64];
    fprintf(f, "%3s %-24s %-9s %10s %10s %6s %6s", "#", "layer", "op", "cycles", "ideal", "util%",
            "x ideal");
    for (size_t i = 0; i < n_acts; i++) fprintf(f, " %9s", hdr[i]);
    fprintf(f, " %5s", "psum");
    if (offchip) fprintf(f, " %6s %14s %8s", "instrs", "DRAM KB rd/wr", "bound");
    fprintf(f, "\n");
    int nrows;
    const enpu_layer_stats *rows = enpu_sim_result_rows(r, &nrows);
    for (int i = 0; i < nrows; i++) {
        const enpu_layer_stats *st = &rows[i];
        if (st->cycles == 0 && st->macs == 0 && strcmp(st->op, "end") == 0 && r->mode != ENPU_SIM_CYCLE)
            continue;
        double util = 100.0 * enpu_utilization(st->macs, units, st->cycles);
        fprintf(f, "%3d %-24s %-9s %10llu %10llu %6.1f", i, enpu_fit(st->name, 24, nb, sizeof nb),
                st->op, (unsigned long long)st->cycles, (unsigned long long)st->ideal_cycles, util);
        if (st->ideal_cycles) fprintf(f, " %6.2f", ratio(st->cycles, st->ideal_cycles));
        else fprintf(f, " %6s", "-");
        for (size_t k = 0; k < n_acts; k++)
            fprintf(f, " %9llu", (unsigned long long)st->activity[acts[k]]);
        fprintf(f, " %5d", st->psum_peak);
        if (offchip) {
            enpu_roofline rl;
            enpu_report_roofline(a, st, &rl);
            char dk[48];
            snprintf(dk, sizeof dk, "%.1f/%.1f", (double)rl.dram_read_bytes / 1024, (double)rl.dram_write_bytes / 1024);
            fprintf(f, " %6d %14s %8s", st->n_instr, dk,
                    rl.dram_read_bytes + rl.dram_write_bytes == 0 ? "-" : rl.dram_bound ? "DRAM" : "compute");
        }
        fprintf(f, "%s\n", st->host ? "  (host op)" : "");
    }
    fprintf(f, "%3s %-24s %-9s %10llu %10llu %6.1f", "", "total", "",
            (unsigned long long)r->total_cycles, (unsigned long long)r->total_ideal_cycles,
            100.0 * r->utilization);
    if (r->total_ideal_cycles) fprintf(f, " %6.2f", ratio(r->total_cycles, r->total_ideal_cycles));
    else fprintf(f, " %6s", "-");
    for (size_t k = 0; k < n_acts; k++)
        fprintf(f, " %9llu", (unsigned long long)r->activity[acts[k]]);
    fprintf(f, "\n\n");
    char host[64] = "";
    if (r->host_macs) snprintf(host, sizeof host, " (+%llu computed by the host)", (unsigned long long)r->host_macs);
    fprintf(f, "mode %s, arch %s: %llu cycles = %.3f us at %g MHz, %llu MACs%s on %llu MAC units, "
               "utilization %.1f%%\n",
            enpu_sim_mode_name(r->mode), a->name, (unsigned long long)r->total_cycles, r->time_us,
            a->clock_mhz, (unsigned long long)r->total_macs, host, (unsigned long long)units,
            100.0 * r->utilization);
    if (hosted) {
        enpu_npu_share sh;
        enpu_sim_npu_share(r, &sh);
        fprintf(f, "host ops: %d, %llu cycles on the host CPU (%.1f%% of the time), %llu MACs; NPU: "
                   "%.1f%% of the MACs, %.1f%% of the time\n",
                sh.host_ops, (unsigned long long)sh.host_cycles, 100.0 * (1.0 - sh.npu_time),
                (unsigned long long)r->host_macs, 100.0 * sh.npu_macs, 100.0 * sh.npu_time);
    }
    if (r->mode == ENPU_SIM_CYCLE) {
        fprintf(f, "memory traffic (%s):", a->engine == ENPU_ENGINE_ROWSTAT
                                              ? "dram, itcm: words; glb: bytes; noc: values sent/passed "
                                                "by a row node; the PE's fifo, loop buffers and psum RAM: "
                                                "entries; psum_link, psum_net: psums"
                                          : a->engine == ENPU_ENGINE_SYSTOLIC
                                              ? "the SRAMs and itcm: words; pe_reg: operand values; acc: "
                                                "entries; mux: results; shape: words read, bytes written"
                                              : "words; pads and psum: entries");
        for (int m = 0; m < ENPU_MEM_COUNT; m++)
            if (enpu_memory_of_engine((enpu_memory)m, a->engine))
                fprintf(f, " %s %llu/%llu", enpu_memory_name((enpu_memory)m),
                    (unsigned long long)r->reads[m], (unsigned long long)r->writes[m]);
        fprintf(f, " (read/written)\n");
        enpu_energy_costs c;
        enpu_energy e;
        enpu_energy_costs_of(a, &c);
        enpu_energy_of(&c, r->reads, r->writes, r->uops, &e);
        enpu_report_energy_lines(f, a, &e, r->total_cycles, r->total_macs);
    }
    if (r->checked)
        fprintf(f, "check: %s\n", r->bit_exact ? "bit-exact with the functional reference, layer by layer"
                                                : "MISMATCH");
}

/* ---- JSON report -------------------------------------------------------------------- */

static json_t *counts(const uint64_t *v, int n, const char *(*name)(int)) {
    json_t *o = json_object();
    for (int i = 0; i < n; i++) json_object_set_new(o, name(i), json_integer((json_int_t)v[i]));
    return o;
}
static const char *act_name(int i) { return enpu_activity_name((enpu_activity)i); }
static const char *mem_name(int i) { return enpu_memory_name((enpu_memory)i); }
static const char *uop_name(int i) { return enpu_unit_op_name((enpu_unit_op)i); }

/* "energy_pj" and its parts "energy_parts_pj" of one set of counts. */
static void put_energy(json_t *o, const enpu_energy_costs *c, const uint64_t *reads,
                       const uint64_t *writes, const uint64_t *uops) {
    enpu_energy e;
    enpu_energy_of(c, reads, writes, uops, &e);
    json_object_set_new(o, "energy_pj", json_real(e.total_pj));
    json_object_set_new(o, "energy_parts_pj", enpu_energy_parts_json(&e, c->engine));
    json_object_set_new(o, "energy_levels_pj", enpu_energy_levels_json(&e));
}

static json_t *layer_array(const enpu_arch *a, const enpu_layer_stats *v, int n, bool rows,
                           bool counted);

char *enpu_report_sim_json_text(const char *program, const enpu_arch *a, const enpu_sim_result *r) {
    const uint64_t units = (uint64_t)enpu_arch_mac_units(a);
    json_t *root = json_object();
    json_object_set_new(root, "program", json_string(program ? program : ""));
    json_object_set_new(root, "arch", json_string(a->name));
    json_object_set_new(root, "mode", json_string(enpu_sim_mode_name(r->mode)));
    json_object_set_new(root, "clock_mhz", json_real(a->clock_mhz));
    json_object_set_new(root, "mac_units", json_integer((json_int_t)units));
    json_object_set_new(root, "checked", json_boolean(r->checked));
    json_object_set_new(root, "bit_exact", json_boolean(r->bit_exact));
    if (r->mismatch.found) {
        const enpu_sim_mismatch *m = &r->mismatch;
        json_t *mm = json_object();
        json_object_set_new(mm, "layer", json_string(m->layer_name));
        json_object_set_new(mm, "instr", json_integer(m->layer));
        json_object_set_new(mm, "tensor", json_string(m->tensor));
        json_object_set_new(mm, "h", json_integer(m->h));
        json_object_set_new(mm, "w", json_integer(m->w));
        json_object_set_new(mm, "c", json_integer(m->c));
        json_object_set_new(mm, "got", json_integer(m->got));
        json_object_set_new(mm, "want", json_integer(m->want));
        json_object_set_new(mm, "cycle", json_integer((json_int_t)m->cycle));
        json_object_set_new(root, "mismatch", mm);
    }
    json_t *tot = json_object();
    json_object_set_new(tot, "cycles", json_integer((json_int_t)r->total_cycles));
    json_object_set_new(tot, "ideal_cycles", json_integer((json_int_t)r->total_ideal_cycles));
    json_object_set_new(tot, "macs", json_integer((json_int_t)r->total_macs));
    json_object_set_new(tot, "host_macs", json_integer((json_int_t)r->host_macs));
    json_object_set_new(tot, "utilization", json_real(r->utilization));
    json_object_set_new(tot, "ratio_to_ideal", json_real(ratio(r->total_cycles, r->total_ideal_cycles)));
    json_object_set_new(tot, "time_us", json_real(r->time_us));
    json_object_set_new(tot, "activities", counts(r->activity, ENPU_ACT_COUNT, act_name));
    json_object_set_new(tot, "reads", counts(r->reads, ENPU_MEM_COUNT, mem_name));
    json_object_set_new(tot, "writes", counts(r->writes, ENPU_MEM_COUNT, mem_name));
    json_object_set_new(tot, "uops", counts(r->uops, ENPU_UOP_COUNT, uop_name));
    int64_t wb = enpu_arch_word_bytes(a);
    json_object_set_new(tot, "dram_read_bytes", json_integer((json_int_t)(r->reads[ENPU_MEM_OFFCHIP] * (uint64_t)wb)));
    json_object_set_new(tot, "dram_write_bytes", json_integer((json_int_t)(r->writes[ENPU_MEM_OFFCHIP] * (uint64_t)wb)));
    const bool counted = r->mode == ENPU_SIM_CYCLE;
    if (counted) {
        enpu_energy_costs ec;
        enpu_energy e;
        enpu_energy_summary es;
        enpu_energy_costs_of(a, &ec);
        enpu_energy_of(&ec, r->reads, r->writes, r->uops, &e);
        enpu_energy_summarize(a, r->total_cycles, e.total_pj, &es);
        put_energy(tot, &ec, r->reads, r->writes, r->uops);
        json_object_set_new(tot, "energy_per_inference_uj", json_real(es.energy_pj / 1e6));
        json_object_set_new(tot, "pj_per_mac", json_real(enpu_energy_per_mac(es.energy_pj, r->total_macs)));
        json_object_set_new(tot, "avg_power_mw", json_real(es.power_mw));
        json_object_set_new(tot, "edp_js", json_real(es.edp_js));
    }
    json_object_set_new(root, "total", tot);
    json_object_set_new(root, "area", enpu_area_json(a));
    int nrows;
    const enpu_layer_stats *rows = enpu_sim_result_rows(r, &nrows);
    json_object_set_new(root, "layers", layer_array(a, rows, nrows, true, counted));
    json_object_set_new(root, "instructions", layer_array(a, r->layers, r->n_layers, false, counted));
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}

/* Per-layer (rows) or per-instruction entries of the JSON report; with
 * their energy when the run counted its accesses (cycle mode). */
static json_t *layer_array(const enpu_arch *a, const enpu_layer_stats *v, int n, bool rows,
                           bool counted) {
    const uint64_t units = (uint64_t)enpu_arch_mac_units(a);
    enpu_energy_costs ec;
    enpu_energy_costs_of(a, &ec);
    json_t *layers = json_array();
    for (int i = 0; i < n; i++) {
        const enpu_layer_stats *st = &v[i];
        json_t *l = json_object();
        json_object_set_new(l, "name", json_string(st->name));
        json_object_set_new(l, "op", json_string(st->op));
        json_object_set_new(l, "instr", json_integer(st->instr));
        json_object_set_new(l, "chain_head", json_integer(st->chain_head));
        json_object_set_new(l, "start_cycle", json_integer((json_int_t)st->start_cycle));
        json_object_set_new(l, "cycles", json_integer((json_int_t)st->cycles));
        json_object_set_new(l, "ideal_cycles", json_integer((json_int_t)st->ideal_cycles));
        json_object_set_new(l, "compute_model", json_integer((json_int_t)st->compute_model));
        json_object_set_new(l, "macs", json_integer((json_int_t)st->macs));
        json_object_set_new(l, "utilization",
                            json_real(st->cycles ? (double)st->macs / ((double)units * (double)st->cycles)
                                                 : 0.0));
        json_object_set_new(l, "ratio_to_ideal", json_real(ratio(st->cycles, st->ideal_cycles)));
        json_object_set_new(l, "psum_peak", json_integer(st->psum_peak));
        json_object_set_new(l, "host", json_boolean(st->host));
        json_object_set_new(l, "activities", counts(st->activity, ENPU_ACT_COUNT, act_name));
        json_object_set_new(l, "reads", counts(st->reads, ENPU_MEM_COUNT, mem_name));
        json_object_set_new(l, "writes", counts(st->writes, ENPU_MEM_COUNT, mem_name));
        json_object_set_new(l, "uops", counts(st->uops, ENPU_UOP_COUNT, uop_name));
        if (counted) put_energy(l, &ec, st->reads, st->writes, st->uops);
        enpu_roofline rl;
        enpu_report_roofline(a, st, &rl);
        json_object_set_new(l, "dram_read_bytes", json_integer((json_int_t)rl.dram_read_bytes));
        json_object_set_new(l, "dram_write_bytes", json_integer((json_int_t)rl.dram_write_bytes));
        if (rows) {
            json_object_set_new(l, "instructions", json_integer(st->n_instr));
            json_object_set_new(l, "dma_transfers", json_integer(st->n_dma));
            /* the roofline point: the DRAM bytes moved in the layer's own
             * cycles, MACs per such byte, and what bounds the layer */
            json_object_set_new(l, "roofline_dram_bytes", json_real(rl.bytes));
            json_object_set_new(l, "arith_intensity", isinf(rl.intensity) ? json_null() : json_real(rl.intensity));
            json_object_set_new(l, "bound", json_string(rl.dram_read_bytes + rl.dram_write_bytes == 0 ? "none"
                                                        : rl.dram_bound ? "dram" : "compute"));
        }
        json_array_append_new(layers, l);
    }
    return layers;
}

int enpu_report_sim_json(const char *path, const char *program, const enpu_arch *a,
                         const enpu_sim_result *r, enpu_err *err) {
    char *s = enpu_report_sim_json_text(program, a, r);
    if (!s) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory building the JSON report", path);
    size_t n = strlen(s);
    s[n] = '\n';
    int rc = enpu_file_write_atomic(path, s, n + 1, err);
    free(s);
    return rc;
}

