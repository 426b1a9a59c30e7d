/* The compile report as a text table and as JSON. */
#include "report/compile_report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "report/model_table.h"

static const char *kind_name(enpu_move_kind k) {
    switch (k) {
    case ENPU_MOVE_REMAP: return "remap";
    case ENPU_MOVE_COPY: return "copy";
    case ENPU_MOVE_HOST: return "host";
    }
    return "?";
}

static void addr_str(int64_t a, char *buf, size_t n) {
    if (a < 0) snprintf(buf, n, "-");
    else snprintf(buf, n, "%" PRId64, a);
}

/* The row-stationary back end's table: every layer in DRAM, its mapping in
 * its note (docs/rowstat.md "The compiler"). */
static void print_rowstat(FILE *f, const enpu_compile_report *r) {
    fprintf(f, "Mapping on arch '%s' (row-stationary: %d x %d PEs): %d instruction(s)\n", r->arch_name,
            r->pe_rows, r->pes, r->n_instr);
    fprintf(f, "%3s %-24s %-8s %-12s %-12s %-7s %-6s %10s %10s %6s %5s %15s\n", "#", "layer", "op", "in HxWxC",
            "out HxWxC", "kernel", "stride", "modelled", "ideal", "ratio", "util", "DRAM KB rd/wr");
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_layer_report *l = &r->layers[i];
        char name[32], ins[72] = "-", outs[72] = "-", k[32] = "-", st[32] = "-", rs[32] = "-", us[32] = "-", dk[48];
        enpu_fit(l->name, 24, name, sizeof name);
        if (l->strips) {
            snprintf(ins, sizeof ins, "%" PRId64 "x%" PRId64 "x%" PRId64, l->in[0], l->in[1], l->in[2]);
            snprintf(outs, sizeof outs, "%" PRId64 "x%" PRId64 "x%" PRId64, l->out[0], l->out[1], l->out[2]);
            snprintf(k, sizeof k, "%" PRId64 "x%" PRId64, l->kernel[0], l->kernel[1]);
            snprintf(st, sizeof st, "%" PRId64 ",%" PRId64, l->stride[0], l->stride[1]);
        }
        if (l->ideal_cycles) snprintf(rs, sizeof rs, "%.3f", (double)l->modelled_cycles / (double)l->ideal_cycles);
        if (l->macs && l->modelled_cycles)
            snprintf(us, sizeof us, "%.0f%%",
                     100.0 * (double)l->macs / ((double)r->pes * r->pe_rows * (double)l->modelled_cycles));
        snprintf(dk, sizeof dk, "%.1f/%.1f", (double)l->dram_read_bytes / 1024, (double)l->dram_write_bytes / 1024);
        fprintf(f, "%3d %-24s %-8s %-12s %-12s %-7s %-6s %10" PRId64 " %10" PRId64 " %6s %5s %15s\n", i, name,
                l->op, ins, outs, k, st, l->modelled_cycles, l->ideal_cycles, rs, us, dk);
    }
    char host[64] = "";
    if (r->host_macs) snprintf(host, sizeof host, " (+%" PRId64 " computed by the host)", r->host_macs);
    fprintf(f, "total: %" PRId64 " MACs%s, ideal %" PRId64 " cycles, modelled %" PRId64 " cycles (ratio %.3f, "
               "utilization %.1f%%)\n",
            r->total_macs, host, r->total_ideal, r->total_modelled,
            r->total_ideal ? (double)r->total_modelled / (double)r->total_ideal : 0,
            r->total_modelled ? 100.0 * (double)r->total_macs / ((double)r->pes * r->pe_rows * (double)r->total_modelled)
                              : 0.0);
    fprintf(f, "DRAM traffic: %" PRId64 " bytes read, %" PRId64 " bytes written (every layer reads its input and "
               "weights from DRAM and writes its output there)\n",
            r->total_dram_read_bytes, r->total_dram_write_bytes);
    fprintf(f, "cycles by activity:");
    for (int k = 0; k < ENPU_ACT_COUNT; k++)
        fprintf(f, " %s %" PRId64 "%s", enpu_activity_name((enpu_activity)k), r->total_activity[k],
                k + 1 < ENPU_ACT_COUNT ? "," : "\n");
    fprintf(f, "DRAM: tensors %" PRId64 " bytes, weights and (bias, M, S) %" PRId64 " bytes, of %" PRId64
               "; ITCM %d of %d instructions\n",
            r->main_peak_bytes, r->weight_used_bytes - r->main_peak_bytes, r->weight_bytes, r->n_instr, r->itcm_instr);
    for (int i = 0; i < r->n_hostops; i++) fprintf(f, "host op %d: %s\n", i, r->hostops[i]);
    for (int i = 0; i < r->n_layers; i++)
        if (r->layers[i].note[0]) fprintf(f, "note %d %s: %s\n", i, r->layers[i].name, r->layers[i].note);
}

void enpu_compile_report_print(FILE *f, const enpu_compile_report *r) {
    if (r->engine == ENPU_ENGINE_ROWSTAT) {
        print_rowstat(f, r);
        return;
    }
    const bool sya = r->engine == ENPU_ENGINE_SYSTOLIC;
    if (sya)
        fprintf(f, "Mapping on arch '%s' (systolic array, %d MAC units; tile: points x filters per unit): %d "
                   "instruction(s)\n", r->arch_name, r->pes, r->n_instr);
    else
        fprintf(f, "Mapping on arch '%s' (%d PEs x %d row(s)): %d instruction(s)\n", r->arch_name, r->pes,
                r->pe_rows, r->n_instr);
    fprintf(f, "%3s %-24s %-16s %-12s %-12s %-14s %-8s %-5s %-3s %-15s %10s %10s %6s %5s", "#", "layer",
            "op", "in HxWxC", "out HxWxC", "tile x,y x',y'", "zs/z", "band", "mc", "addr in/out/w",
            "modelled", "ideal", "ratio", "util");
    if (r->offchip) fprintf(f, " %6s %15s", "instrs", "DRAM KB rd/wr");
    else if (r->total_dram_read_bytes + r->total_dram_write_bytes) fprintf(f, " %15s", "DRAM KB rd/wr");
    fprintf(f, "\n");
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_layer_report *l = &r->layers[i];
        char name[32], op[80], ins[72], outs[72], tile[96], zs[48], band[24], addr[96], a1[24], a2[24], a3[24];
        enpu_fit(l->name, 24, name, sizeof name);
        if (l->fused[0]) snprintf(op, sizeof op, "%s+%s", l->op, l->fused);
        else snprintf(op, sizeof op, "%s%s", l->chain_head != i ? "  " : "", l->op);
        char opf[24];
        enpu_fit(op, 16, opf, sizeof opf);
        if (l->mode < 0) {
            snprintf(ins, sizeof ins, "-"), snprintf(outs, sizeof outs, "-"), snprintf(tile, sizeof tile, "-");
            snprintf(zs, sizeof zs, "-"), snprintf(band, sizeof band, "-"), snprintf(addr, sizeof addr, "-");
        } else {
            snprintf(ins, sizeof ins, "%" PRId64 "x%" PRId64 "x%" PRId64, l->in[0], l->in[1], l->in[2]);
            snprintf(outs, sizeof outs, "%" PRId64 "x%" PRId64 "x%" PRId64, l->out[0], l->out[1], l->out[2]);
            if (sya) snprintf(tile, sizeof tile, "%" PRId64 " x %" PRId64, l->tile_x, l->tile_y);
            else
                snprintf(tile, sizeof tile, "%" PRId64 ",%" PRId64 " %" PRId64 ",%" PRId64 "%s", l->tile_x,
                         l->tile_y, l->tile_xi, l->tile_yi, l->double_buffered ? "" : " sb");
            if (l->z) snprintf(zs, sizeof zs, "%" PRId64 "/%" PRId64, l->zs, l->z);
            else snprintf(zs, sizeof zs, "%" PRId64, l->zs);
            if (l->band_h) snprintf(band, sizeof band, "%" PRId64, l->band_h);
            else snprintf(band, sizeof band, "-");
            if (sya) snprintf(zs, sizeof zs, "-");
            addr_str(l->ifmap_addr, a1, sizeof a1), addr_str(l->ofmap_addr, a2, sizeof a2);
            addr_str(l->weight_addr, a3, sizeof a3);
            snprintf(addr, sizeof addr, "%s/%s/%s", a1, a2, a3);
        }
        double ratio = l->ideal_cycles ? (double)l->modelled_cycles / (double)l->ideal_cycles : 0;
        double util = enpu_utilization((uint64_t)l->macs, (uint64_t)r->pes * (uint64_t)r->pe_rows,
                                       (uint64_t)l->modelled_cycles);
        char rs[32], us[32];
        if (l->ideal_cycles) snprintf(rs, sizeof rs, "%.3f", ratio);
        else snprintf(rs, sizeof rs, "-");
        if (l->macs) snprintf(us, sizeof us, "%.0f%%", 100 * util);
        else snprintf(us, sizeof us, "-");
        fprintf(f, "%3d %-24s %-16s %-12s %-12s %-14s %-8s %-5s %-3s %-15s %10" PRId64 " %10" PRId64 " %6s %5s",
                i, name, opf, ins, outs, tile, zs, band, l->mode < 0 || sya ? "-" : l->mode ? "m" : "b", addr,
                l->modelled_cycles, l->ideal_cycles, rs, us);
        char dk[48];
        snprintf(dk, sizeof dk, "%.1f/%.1f", (double)l->dram_read_bytes / 1024, (double)l->dram_write_bytes / 1024);
        if (r->offchip) fprintf(f, " %6d %15s", l->n_instr, dk);
        else if (r->total_dram_read_bytes + r->total_dram_write_bytes) fprintf(f, " %15s", dk);
        fprintf(f, "\n");
    }
    double util = enpu_utilization((uint64_t)r->total_macs, (uint64_t)r->pes * (uint64_t)r->pe_rows,
                                   (uint64_t)r->total_modelled);
    char host[64] = "";
    if (r->host_macs) snprintf(host, sizeof host, " (+%" PRId64 " computed by the host)", r->host_macs);
    fprintf(f, "total: %" PRId64 " MACs%s, ideal %" PRId64 " cycles, modelled %" PRId64 " cycles (ratio %.3f, "
               "utilization %.1f%%)\n",
            r->total_macs, host, r->total_ideal, r->total_modelled,
            r->total_ideal ? (double)r->total_modelled / (double)r->total_ideal : 0, 100 * util);
    if (r->total_dram_read_bytes + r->total_dram_write_bytes)
        fprintf(f, "DRAM traffic: %" PRId64 " bytes read, %" PRId64 " bytes written%s\n", r->total_dram_read_bytes,
                r->total_dram_write_bytes,
                r->offchip ? " (the model does not fit on chip: see the off-chip notes)"
                           : " (the graph's inputs and outputs; everything else stays on chip)");
    fprintf(f, "cycles by activity:");
    for (int k = 0; k < ENPU_ACT_COUNT; k++)
        fprintf(f, " %s %" PRId64 "%s", enpu_activity_name((enpu_activity)k), r->total_activity[k],
                k + 1 < ENPU_ACT_COUNT ? "," : "\n");
    fprintf(f, "memory (%s): main DTCM %" PRId64 " of %" PRId64 " bytes, skip DTCM %" PRId64 " of %" PRId64
               " bytes, weight memory %" PRId64 " of %" PRId64 " bytes, ITCM %d of %d instructions%s\n",
            r->offchip ? "highest address used" : "most live at once", r->main_peak_bytes, r->main_bytes,
            r->skip_peak_bytes, r->skip_bytes, r->weight_used_bytes, r->weight_bytes, r->n_instr, r->itcm_instr,
            r->n_instr > r->itcm_instr ? " (the rest fetched from DRAM)" : "");
    for (int i = 0; i < r->n_moves; i++)
        fprintf(f, "move %s '%s': %s -- %s\n", r->moves[i].op, r->moves[i].name, kind_name(r->moves[i].kind),
                r->moves[i].how);
    for (int i = 0; i < r->n_hostops; i++) fprintf(f, "host op %d: %s\n", i, r->hostops[i]);
    for (int i = 0; i < r->n_layers; i++)
        if (r->layers[i].note[0]) fprintf(f, "note %d %s: %s\n", i, r->layers[i].name, r->layers[i].note);
    for (int i = 0; i < r->n_notes; i++) fprintf(f, "note: %s\n", r->notes[i]);
}

static json_t *triple(const int64_t v[3]) {
    json_t *a = json_array();
    for (int i = 0; i < 3; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *activity_obj(const int64_t *act) {
    json_t *o = json_object();
    for (int k = 0; k < ENPU_ACT_COUNT; k++)
        json_object_set_new(o, enpu_activity_name((enpu_activity)k), json_integer(act[k]));
    return o;
}

static json_t *addr_json(int64_t a) { return a < 0 ? json_null() : json_integer(a); }

char *enpu_compile_report_json(const enpu_compile_report *r) {
    json_t *root = json_object(), *layers = json_array();
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_layer_report *l = &r->layers[i];
        json_t *o = json_object(), *t = json_object(), *ad = json_object();
        json_object_set_new(o, "name", json_string(l->name));
        json_object_set_new(o, "op", json_string(l->op));
        json_object_set_new(o, "src", json_string(l->src));
        json_object_set_new(o, "fused", json_string(l->fused));
        json_object_set_new(o, "chain_head", json_integer(l->chain_head));
        json_object_set_new(o, "in", triple(l->in));
        json_object_set_new(o, "out", triple(l->out));
        json_object_set_new(o, "macs", json_integer(l->macs));
        json_object_set_new(o, "ideal_cycles", json_integer(l->ideal_cycles));
        json_object_set_new(o, "modelled_cycles", json_integer(l->modelled_cycles));
        json_object_set_new(o, "compute_cycles", json_integer(l->compute_cycles));
        json_object_set_new(o, "instructions", json_integer(l->n_instr));
        json_object_set_new(o, "dram_read_bytes", json_integer(l->dram_read_bytes));
        json_object_set_new(o, "dram_write_bytes", json_integer(l->dram_write_bytes));
        json_object_set_new(o, "activity", activity_obj(l->activity));
        json_object_set_new(t, "x", json_integer(l->tile_x));
        json_object_set_new(t, "y", json_integer(l->tile_y));
        json_object_set_new(t, "xi", json_integer(l->tile_xi));
        json_object_set_new(t, "yi", json_integer(l->tile_yi));
        json_object_set_new(t, "zs", json_integer(l->zs));
        json_object_set_new(t, "z", json_integer(l->z));
        json_object_set_new(t, "band_h", json_integer(l->band_h));
        json_object_set_new(t, "double_buffered", json_boolean(l->double_buffered));
        json_object_set_new(o, "tile", t);
        json_object_set_new(o, "mode", json_string(l->mode < 0 ? "control" : l->mode ? "multicast" : "broadcast"));
        json_object_set_new(ad, "ifmap", addr_json(l->ifmap_addr));
        json_object_set_new(ad, "ofmap", addr_json(l->ofmap_addr));
        json_object_set_new(ad, "op2", addr_json(l->op2_addr));
        json_object_set_new(ad, "op2_mem", l->op2_mem < 0 ? json_null() : json_string(l->op2_mem ? "skip" : "main"));
        json_object_set_new(ad, "skip", addr_json(l->skip_addr));
        json_object_set_new(ad, "weights", addr_json(l->weight_addr));
        json_object_set_new(ad, "weight_words", json_integer(l->weight_words));
        json_object_set_new(ad, "param_words", json_integer(l->param_words));
        json_object_set_new(o, "addr", ad);
        json_object_set_new(o, "note", json_string(l->note));
        json_array_append_new(layers, o);
    }
    json_object_set_new(root, "arch", json_string(r->arch_name));
    json_object_set_new(root, "engine", json_string(enpu_engine_name(r->engine)));
    json_object_set_new(root, "pes", json_integer(r->pes));
    json_object_set_new(root, "pe_rows", json_integer(r->pe_rows));
    json_object_set_new(root, "layers", layers);
    json_t *tot = json_object();
    json_object_set_new(tot, "macs", json_integer(r->total_macs));
    json_object_set_new(tot, "host_macs", json_integer(r->host_macs));
    json_object_set_new(tot, "ideal_cycles", json_integer(r->total_ideal));
    json_object_set_new(tot, "modelled_cycles", json_integer(r->total_modelled));
    json_object_set_new(tot, "utilization",
                        json_real(r->total_modelled ? (double)r->total_macs /
                                                          ((double)r->pes * r->pe_rows * (double)r->total_modelled)
                                                    : 0.0));
    json_object_set_new(tot, "activity", activity_obj(r->total_activity));
    json_object_set_new(tot, "dram_read_bytes", json_integer(r->total_dram_read_bytes));
    json_object_set_new(tot, "dram_write_bytes", json_integer(r->total_dram_write_bytes));
    json_object_set_new(root, "total", tot);
    json_object_set_new(root, "offchip", json_boolean(r->offchip));
    json_t *hs = json_array();
    for (int i = 0; i < r->n_hostops; i++) json_array_append_new(hs, json_string(r->hostops[i]));
    json_object_set_new(root, "host_ops", hs);
    json_t *mv = json_array();
    for (int i = 0; i < r->n_moves; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(r->moves[i].name));
        json_object_set_new(o, "op", json_string(r->moves[i].op));
        json_object_set_new(o, "kind", json_string(kind_name(r->moves[i].kind)));
        json_object_set_new(o, "how", json_string(r->moves[i].how));
        json_array_append_new(mv, o);
    }
    json_object_set_new(root, "moves", mv);
    json_t *mem = json_object();
    json_object_set_new(mem, "main_dtcm_used", json_integer(r->main_peak_bytes));
    json_object_set_new(mem, "main_dtcm_bytes", json_integer(r->main_bytes));
    json_object_set_new(mem, "skip_dtcm_used", json_integer(r->skip_peak_bytes));
    json_object_set_new(mem, "skip_dtcm_bytes", json_integer(r->skip_bytes));
    json_object_set_new(mem, "weight_mem_used", json_integer(r->weight_used_bytes));
    json_object_set_new(mem, "weight_mem_bytes", json_integer(r->weight_bytes));
    json_object_set_new(mem, "instructions", json_integer(r->n_instr));
    json_object_set_new(mem, "itcm_instructions", json_integer(r->itcm_instr));
    json_object_set_new(root, "memory", mem);
    json_t *notes = json_array();
    for (int i = 0; i < r->n_notes; i++) json_array_append_new(notes, json_string(r->notes[i]));
    json_object_set_new(root, "notes", notes);
    char *text = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return text;
}

int enpu_compile_report_save_json(const char *path, const enpu_compile_report *r, enpu_err *err) {
    char *text = enpu_compile_report_json(r);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "out of memory writing the compile report");
    size_t n = strlen(text);
    text[n] = '\n';
    int rc = enpu_file_write_atomic(path, text, n + 1, err);
    free(text);
    return rc;
}
