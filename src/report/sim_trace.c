/* The observation record of a run (sim/observe.h) as files: a Chrome
 * trace-event JSON (one track per hardware unit, for Perfetto or
 * chrome://tracing) and a VCD of the engine's control signals within its
 * cycle window (for GTKWave). */
#include <math.h>
#include <stdlib.h>

#include "easynpu/file.h"
#include "isa/isa_internal.h"
#include "report/sim_report.h"
#include "sim/observe.h"
#include "sim/sim_internal.h"

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

/* The record of sim, or a status: nothing recorded, or recording ran out of
 * memory. */
static int obs_of(const enpu_sim *sim, const char *path, const sim_obs **out, enpu_err *err) {
    const sim_obs *o = sim->obs;
    if (!o || !sim->ran)
        return enpu_fail(err, ENPU_E_USAGE, "%s: the simulation recorded nothing (cycle mode only)", path);
    if (o->oom) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory while recording", path);
    *out = o;
    return 0;
}

int enpu_report_trace(const enpu_sim *sim, const char *path, enpu_err *err) {
    const sim_obs *o = NULL;
    int st = obs_of(sim, path, &o, err);
    if (st) return st;
    if (!o->trace) return enpu_fail(err, ENPU_E_USAGE, "%s: no trace was recorded", path);
    enpu_sb sb = {0};
    enpu_sb_puts(&sb, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    enpu_sb_puts(&sb, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    json_str(&sb, o->engine);
    enpu_sb_puts(&sb, "}}");
    for (int t = 1; t < SIM_OBS_MAX_TRACKS; t++) {
        if (!o->track_name[t]) continue;
        enpu_sb_printf(&sb, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":", t);
        json_str(&sb, sim_obs_str(o, o->track_name[t]));
        enpu_sb_printf(&sb, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                            "\"args\":{\"sort_index\":%d}}", t, t);
    }
    const double mhz = o->clock_mhz;
    for (size_t i = 0; i < o->n_spans; i++) {
        const sim_span *s = &o->spans[i];
        enpu_sb_puts(&sb, ",\n{\"name\":");
        json_str(&sb, sim_obs_str(o, s->name));
        enpu_sb_printf(&sb, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f", s->track,
                       (double)s->start / mhz, (double)(s->end - s->start) / mhz);
        enpu_sb_printf(&sb, ",\"args\":{\"cycle\":%llu,\"cycles\":%llu", (unsigned long long)s->start,
                       (unsigned long long)(s->end - s->start));
        if (s->key) {
            enpu_sb_puts(&sb, ",");
            json_str(&sb, sim_obs_str(o, s->key));
            enpu_sb_puts(&sb, ":");
            json_str(&sb, sim_obs_str(o, s->val));
        }
        enpu_sb_puts(&sb, "}}");
    }
    enpu_sb_printf(&sb, "\n],\"otherData\":{\"generator\":\"easynpu sim\",\"events\":%zu,"
                        "\"truncated\":%s}}\n",
                   o->n_spans, o->truncated ? "true" : "false");
    int rc = sb.oom ? enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory building the trace", path)
                    : enpu_file_write_atomic(path, sb.s, sb.len, err);
    enpu_sb_free(&sb);
    return rc;
}

/* VCD identifier of signal i: letters (no '$', which starts keywords). */
static char vid(int i) { return (char)(i < 26 ? 'A' + i : 'a' + i - 26); }

static void vcd_value(enpu_sb *sb, int w, int i, int64_t val) {
    if (w == 1) {
        enpu_sb_printf(sb, "%d%c\n", (int)(val & 1), vid(i));
        return;
    }
    char bits[70];
    int n = 0;
    for (int b = w - 1; b >= 0; b--) bits[n++] = (char)('0' + ((val >> b) & 1));
    bits[n] = 0;
    const char *p = bits;
    while (p[0] == '0' && p[1]) p++;
    enpu_sb_printf(sb, "b%s %c\n", p, vid(i));
}

int enpu_report_vcd(const enpu_sim *sim, const char *path, enpu_err *err) {
    const sim_obs *o = NULL;
    int st = obs_of(sim, path, &o, err);
    if (st) return st;
    if (!o->vcd) return enpu_fail(err, ENPU_E_USAGE, "%s: no VCD was recorded", path);
    double psd = 1e6 / o->clock_mhz;
    uint64_t period = psd < 1 ? 1 : (uint64_t)llround(psd);
    enpu_sb sb = {0};
    enpu_sb_printf(&sb, "$date easynpu sim $end\n$version easynpu cycle-accurate simulator $end\n"
                        "$comment arch %s, clock %g MHz, cycles [%llu, %llu); one time step = 1 ps "
                        "$end\n$timescale 1ps $end\n$scope module %s $end\n",
                   sim->arch.name, o->clock_mhz, (unsigned long long)o->from,
                   (unsigned long long)o->to, o->scope[0] ? o->scope : o->engine);
    for (int i = 0; i < o->n_sig; i++)
        enpu_sb_printf(&sb, "$var wire %d %c %s $end\n", o->sig_width[i], vid(i), o->sig_name[i]);
    enpu_sb_puts(&sb, "$upscope $end\n$enddefinitions $end\n");
    size_t i = 0;
    if (o->n_ch > 0) {
        /* the first sample holds every signal: $dumpvars */
        uint64_t t0 = o->ch[0].t;
        enpu_sb_printf(&sb, "#%llu\n$dumpvars\n", (unsigned long long)(t0 * period));
        for (; i < o->n_ch && o->ch[i].t == t0 && (int)i < o->n_sig; i++)
            vcd_value(&sb, o->sig_width[o->ch[i].sig], o->ch[i].sig, o->ch[i].val);
        enpu_sb_puts(&sb, "$end\n");
    }
    uint64_t stamp = UINT64_MAX;
    for (; i < o->n_ch; i++) {
        const sim_change *c = &o->ch[i];
        if (c->t != stamp) {
            enpu_sb_printf(&sb, "#%llu\n", (unsigned long long)(c->t * period));
            stamp = c->t;
        }
        vcd_value(&sb, o->sig_width[c->sig], c->sig, c->val);
    }
    int rc = sb.oom ? enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory building the VCD", path)
                    : enpu_file_write_atomic(path, sb.s, sb.len, err);
    enpu_sb_free(&sb);
    return rc;
}
