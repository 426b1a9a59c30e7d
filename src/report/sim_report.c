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
#include "report/model_table.h"
#include "sim/core.h"

/* ---- text table ------------------------------------------------------------------- */

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void enpu_report_sim_table(FILE *f, const enpu_arch *a, const enpu_sim_result *r) {
    const uint64_t units = (uint64_t)(a->pes * a->pe_rows);
    static const int acts[] = {ENPU_ACT_COMPUTE,      ENPU_ACT_CONTROLLER,  ENPU_ACT_PIPELINE_FILL,
                               ENPU_ACT_IFMAP_LOAD,   ENPU_ACT_BUS_CONFLICT, ENPU_ACT_WEIGHT_LOAD,
                               ENPU_ACT_OFMAP_DRAIN,  ENPU_ACT_PIPELINE_DRAIN};
    static const char *const hdr[] = {"compute", "ctrl", "fill", "ifmap", "busconf", "wload",
                                      "odrain", "pdrain"};
    char nb[64];
    fprintf(f, "%3s %-24s %-9s %10s %10s %6s %6s", "#", "layer", "op", "cycles", "ideal", "util%",
            "x ideal");
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) fprintf(f, " %9s", hdr[i]);
    fprintf(f, " %5s\n", "psum");
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_layer_stats *st = &r->layers[i];
        if (st->cycles == 0 && st->macs == 0 && strcmp(st->op, "end") == 0 && r->mode != ENPU_SIM_CYCLE)
            continue;
        double util = st->cycles ? 100.0 * (double)st->macs / ((double)units * (double)st->cycles) : 0;
        fprintf(f, "%3d %-24s %-9s %10llu %10llu %6.1f", i, enpu_fit(st->name, 24, nb, sizeof nb),
                st->op, (unsigned long long)st->cycles, (unsigned long long)st->ideal_cycles, util);
        if (st->ideal_cycles) fprintf(f, " %6.2f", ratio(st->cycles, st->ideal_cycles));
        else fprintf(f, " %6s", "-");
        for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++)
            fprintf(f, " %9llu", (unsigned long long)st->activity[acts[k]]);
        fprintf(f, " %5d%s\n", st->psum_peak, st->host ? "  (host op)" : "");
    }
    fprintf(f, "%3s %-24s %-9s %10llu %10llu %6.1f", "", "total", "",
            (unsigned long long)r->total_cycles, (unsigned long long)r->total_ideal_cycles,
            100.0 * r->utilization);
    if (r->total_ideal_cycles) fprintf(f, " %6.2f", ratio(r->total_cycles, r->total_ideal_cycles));
    else fprintf(f, " %6s", "-");
    for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++)
        fprintf(f, " %9llu", (unsigned long long)r->activity[acts[k]]);
    fprintf(f, "\n\n");
    fprintf(f, "mode %s, arch %s: %llu cycles = %.3f us at %g MHz, %llu MACs on %llu MAC units, "
               "utilization %.1f%%\n",
            enpu_sim_mode_name(r->mode), a->name, (unsigned long long)r->total_cycles, r->time_us,
            a->clock_mhz, (unsigned long long)r->total_macs, (unsigned long long)units,
            100.0 * r->utilization);
    if (r->mode == ENPU_SIM_CYCLE) {
        fprintf(f, "memory traffic (words; pads and psum: entries):");
        for (int m = 0; m < ENPU_MEM_COUNT; m++)
            fprintf(f, " %s %llu/%llu", enpu_memory_name((enpu_memory)m),
                    (unsigned long long)r->reads[m], (unsigned long long)r->writes[m]);
        fprintf(f, " (read/written)\n");
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

char *enpu_report_sim_json_text(const char *program, const enpu_arch *a, const enpu_sim_result *r) {
    const uint64_t units = (uint64_t)(a->pes * a->pe_rows);
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
    json_object_set_new(tot, "utilization", json_real(r->utilization));
    json_object_set_new(tot, "ratio_to_ideal", json_real(ratio(r->total_cycles, r->total_ideal_cycles)));
    json_object_set_new(tot, "time_us", json_real(r->time_us));
    json_object_set_new(tot, "activities", counts(r->activity, ENPU_ACT_COUNT, act_name));
    json_object_set_new(tot, "reads", counts(r->reads, ENPU_MEM_COUNT, mem_name));
    json_object_set_new(tot, "writes", counts(r->writes, ENPU_MEM_COUNT, mem_name));
    json_object_set_new(root, "total", tot);
    json_t *layers = json_array();
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_layer_stats *st = &r->layers[i];
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
        json_array_append_new(layers, l);
    }
    json_object_set_new(root, "layers", layers);
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
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

/* ---- Chrome trace events ------------------------------------------------------------------- */

#define TRACE_MAX_EVENTS 2000000

struct sim_trace {
    double mhz;
    enpu_sb sb;
    long events;
    bool truncated;
};

static void json_str(enpu_sb *b, const char *s) {
    enpu_sb_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') enpu_sb_printf(b, "\\%c", c);
        else if (c < 0x20) enpu_sb_printf(b, "\\u%04x", c);
        else enpu_sb_put(b, s, 1);
    }
    enpu_sb_puts(b, "\"");
}

struct sim_trace *sim_trace_new(double clock_mhz) {
    struct sim_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->mhz = clock_mhz;
    enpu_sb_puts(&t->sb, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    static const char *const names[] = {NULL,        "top controller: decode", "PE array",
                                        "scheduler: ifmap loads", "DTCM bus", "weight bus",
                                        "skip port", "layers",  "ITCM fetch"};
    enpu_sb_puts(&t->sb, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
                         "\"args\":{\"name\":\"EasyNPU\"}}");
    for (int i = 1; i < 9; i++) sim_trace_track(t, i, names[i]);
    return t;
}

void sim_trace_free(struct sim_trace *t) {
    if (!t) return;
    enpu_sb_free(&t->sb);
    free(t);
}

void sim_trace_track(struct sim_trace *t, int tid, const char *name) {
    if (!t) return;
    enpu_sb_printf(&t->sb, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":",
                   tid);
    json_str(&t->sb, name);
    enpu_sb_printf(&t->sb, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                           "\"args\":{\"sort_index\":%d}}",
                   tid, tid);
}

void sim_trace_span(struct sim_trace *t, int tid, const char *name, uint64_t start, uint64_t end,
                    const char *arg_key, const char *arg_val) {
    if (!t || end <= start) return;
    if (t->events >= TRACE_MAX_EVENTS) {
        t->truncated = true;
        return;
    }
    t->events++;
    enpu_sb_puts(&t->sb, ",\n{\"name\":");
    json_str(&t->sb, name);
    enpu_sb_printf(&t->sb, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f", tid,
                   (double)start / t->mhz, (double)(end - start) / t->mhz);
    enpu_sb_printf(&t->sb, ",\"args\":{\"cycle\":%llu,\"cycles\":%llu", (unsigned long long)start,
                   (unsigned long long)(end - start));
    if (arg_key && arg_val) {
        enpu_sb_puts(&t->sb, ",");
        json_str(&t->sb, arg_key);
        enpu_sb_puts(&t->sb, ":");
        json_str(&t->sb, arg_val);
    }
    enpu_sb_puts(&t->sb, "}}");
}

int sim_trace_write(struct sim_trace *t, const char *path, enpu_err *err) {
    enpu_sb_printf(&t->sb, "\n],\"otherData\":{\"generator\":\"easynpu sim\",\"events\":%ld,"
                           "\"truncated\":%s}}\n",
                   t->events, t->truncated ? "true" : "false");
    if (t->sb.oom) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory building the trace", path);
    return enpu_file_write_atomic(path, t->sb.s, t->sb.len, err);
}

/* ---- VCD ------------------------------------------------------------------------------------ */

enum {
    V_PS_ADDR, V_IF_HW, V_IF_CH, V_W_GCNT, V_STAGE, V_PE_VALID, V_OUTER, V_BACK, V_MAXPOOL,
    V_BYPASS, V_IF_VALID, V_IF_READY, V_OF_VALID, V_OF_READY, V_W_VALID, V_W_READY, V_SK_VALID,
    V_SK_READY, V_OP2_VALID, V_OP2_READY, V_COUNT
};

static const char *const vnames[V_COUNT] = {
    "pe_ps_addr",   "if_hw_addr",    "if_ch_addr",   "w_och_gcnt",     "fuse_stage",
    "pe_valid",     "pe_ps_outer_en", "pe_ps_back_en", "pe_maxpool_en", "pe_byp_mul_en",
    "if_bus_valid", "if_bus_ready",  "of_bus_valid", "of_bus_ready",   "w_bus_valid",
    "w_bus_ready",  "skip_bus_valid", "skip_bus_ready", "op2_valid",    "op2_ready"};

struct sim_vcd {
    uint64_t from, to;
    uint64_t period_ps;
    int width[V_COUNT];
    int64_t last[V_COUNT];
    bool started;
    enpu_sb sb;
};

/* VCD identifier of signal i: letters (no '$', which starts keywords). */
static char vid(int i) { return (char)(i < 26 ? 'A' + i : 'a' + i - 26); }

static int bits_for(int64_t n) { /* bits to index 0..n-1 */
    int b = 1;
    while (b < 62 && ((int64_t)1 << b) < n) b++;
    return b;
}

struct sim_vcd *sim_vcd_new(const enpu_arch *a, uint64_t from, uint64_t to) {
    struct sim_vcd *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->from = from;
    v->to = to;
    double ps = 1e6 / a->clock_mhz;
    v->period_ps = ps < 1 ? 1 : (uint64_t)llround(ps);
    for (int i = 0; i < V_COUNT; i++) v->width[i] = 1;
    v->width[V_PS_ADDR] = bits_for(a->psum_depth);
    v->width[V_IF_HW] = bits_for(a->ifmap_pad_depth);
    v->width[V_IF_CH] = bits_for(a->ifmap_pads);
    v->width[V_W_GCNT] = bits_for(a->weight_pad_depth);
    v->width[V_STAGE] = 4;
    enpu_sb_printf(&v->sb, "$date easynpu sim $end\n$version easynpu cycle-accurate simulator $end\n"
                           "$comment arch %s, clock %g MHz, cycles [%llu, %llu); one time step = 1 ps "
                           "$end\n$timescale 1ps $end\n$scope module easynpu $end\n",
                   a->name, a->clock_mhz, (unsigned long long)from, (unsigned long long)to);
    for (int i = 0; i < V_COUNT; i++)
        enpu_sb_printf(&v->sb, "$var wire %d %c %s $end\n", v->width[i], vid(i), vnames[i]);
    enpu_sb_puts(&v->sb, "$upscope $end\n$enddefinitions $end\n");
    return v;
}

void sim_vcd_free(struct sim_vcd *v) {
    if (!v) return;
    enpu_sb_free(&v->sb);
    free(v);
}

static void vcd_value(struct sim_vcd *v, int i, int64_t val) {
    int w = v->width[i];
    if (w < 63) val &= ((int64_t)1 << w) - 1;
    if (w == 1) {
        enpu_sb_printf(&v->sb, "%d%c\n", (int)(val & 1), vid(i));
        return;
    }
    char bits[70];
    int n = 0;
    for (int b = w - 1; b >= 0; b--) bits[n++] = (char)('0' + ((val >> b) & 1));
    bits[n] = 0;
    const char *p = bits;
    while (p[0] == '0' && p[1]) p++;
    enpu_sb_printf(&v->sb, "b%s %c\n", p, vid(i));
}

void sim_vcd_sample(struct sim_vcd *v, uint64_t t, const struct sim_signals *s) {
    if (!v || t < v->from || t >= v->to) return;
    int64_t val[V_COUNT] = {
        s->ps_addr,  s->if_hw_addr, s->if_ch_addr, s->w_och_gcnt, s->stage,    s->pe_valid,
        s->ps_outer_en, s->ps_back_en, s->maxpool_en, s->byp_mul_en, s->if_valid, s->if_ready,
        s->of_valid, s->of_ready,   s->w_valid,    s->w_ready,    s->sk_valid, s->sk_ready,
        s->op2_valid, s->op2_ready};
    if (!v->started) {
        v->started = true;
        enpu_sb_printf(&v->sb, "#%llu\n$dumpvars\n", (unsigned long long)(t * v->period_ps));
        for (int i = 0; i < V_COUNT; i++) {
            vcd_value(v, i, val[i]);
            v->last[i] = val[i];
        }
        enpu_sb_puts(&v->sb, "$end\n");
        return;
    }
    bool stamped = false;
    for (int i = 0; i < V_COUNT; i++) {
        if (val[i] == v->last[i]) continue;
        if (!stamped) {
            enpu_sb_printf(&v->sb, "#%llu\n", (unsigned long long)(t * v->period_ps));
            stamped = true;
        }
        vcd_value(v, i, val[i]);
        v->last[i] = val[i];
    }
}

int sim_vcd_write(struct sim_vcd *v, const char *path, enpu_err *err) {
    if (v->sb.oom) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory building the VCD", path);
    return enpu_file_write_atomic(path, v->sb.s, v->sb.len, err);
}
