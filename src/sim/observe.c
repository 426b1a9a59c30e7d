/* The observation record (observe.h): a string arena, spans and signal
 * changes, grown by doubling; a failed allocation sets `oom` and drops the
 * record (the report writer then refuses to write a partial file). */
#include "sim/observe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

static size_t intern(sim_obs *o, const char *s) {
    if (!s || !*s) return 0;
    size_t n = strlen(s) + 1;
    if (!grow((void **)&o->arena, &o->arena_cap, o->arena_len + n, 1)) {
        o->oom = true;
        return 0;
    }
    memcpy(o->arena + o->arena_len, s, n);
    o->arena_len += n;
    return o->arena_len - n;
}

sim_obs *sim_obs_new(const char *engine, double clock_mhz, bool trace, bool vcd, uint64_t from,
                     uint64_t to) {
    sim_obs *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    snprintf(o->engine, sizeof o->engine, "%s", engine ? engine : "engine");
    o->clock_mhz = clock_mhz;
    o->trace = trace;
    o->vcd = vcd;
    o->from = from;
    o->to = to;
    o->arena = malloc(1);
    if (!o->arena) {
        free(o);
        return NULL;
    }
    o->arena[0] = 0;
    o->arena_len = o->arena_cap = 1;
    return o;
}

void sim_obs_free(sim_obs *o) {
    if (!o) return;
    free(o->arena);
    free(o->spans);
    free(o->ch);
    free(o);
}

void sim_obs_track(sim_obs *o, int tid, const char *name) {
    if (!o || !o->trace || tid <= 0 || tid >= SIM_OBS_MAX_TRACKS) return;
    o->track_name[tid] = intern(o, name);
}

void sim_obs_span(sim_obs *o, int tid, const char *name, uint64_t start, uint64_t end,
                  const char *key, const char *val) {
    if (!o || !o->trace || end <= start) return;
    if (o->n_spans >= SIM_OBS_MAX_SPANS) {
        o->truncated = true;
        return;
    }
    if (!grow((void **)&o->spans, &o->cap_spans, o->n_spans + 1, sizeof *o->spans)) {
        o->oom = true;
        return;
    }
    sim_span *s = &o->spans[o->n_spans++];
    s->start = start;
    s->end = end;
    s->track = tid;
    s->name = intern(o, name);
    s->key = key && val ? intern(o, key) : 0;
    s->val = key && val ? intern(o, val) : 0;
}

void sim_obs_signals(sim_obs *o, const char *scope, int n, const char *const *names,
                     const int *widths) {
    if (!o) return;
    if (n > SIM_OBS_MAX_SIGNALS) n = SIM_OBS_MAX_SIGNALS;
    snprintf(o->scope, sizeof o->scope, "%s", scope);
    o->n_sig = n;
    for (int i = 0; i < n; i++) {
        o->sig_name[i] = names[i];
        o->sig_width[i] = widths[i] < 1 ? 1 : widths[i] > 63 ? 63 : widths[i];
    }
}

static void change(sim_obs *o, uint64_t t, int i, int64_t v) {
    if (!grow((void **)&o->ch, &o->cap_ch, o->n_ch + 1, sizeof *o->ch)) {
        o->oom = true;
        return;
    }
    o->ch[o->n_ch++] = (sim_change){t, i, v};
}

void sim_obs_sample(sim_obs *o, uint64_t t, const int64_t *vals) {
    if (!o || !o->vcd || t < o->from || t >= o->to) return;
    for (int i = 0; i < o->n_sig; i++) {
        int w = o->sig_width[i];
        int64_t v = vals[i] & (((int64_t)1 << w) - 1);
        if (o->started && v == o->last[i]) continue;
        change(o, t, i, v);
        o->last[i] = v;
    }
    o->started = true;
}
