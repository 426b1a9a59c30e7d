/* Sweep results: CSV rows out and back in, the JSON report, the SVG
 * scatter with the Pareto front, the text summary (docs/energy.md). */
#include "report/sweep_report.h"
#include "report/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The numeric columns after "status", in order. */
#define FIXED_COLS 8
static const char *const fixed_cols[FIXED_COLS] = {"cycles",    "macs",     "time_us", "utilization",
                                                   "energy_pj", "power_mw", "edp_js",  "area_um2"};

static void put_num(enpu_sb *b, double v) {
    char d[40];
    enpu_fmt_double(d, sizeof d, v);
    enpu_sb_puts(b, d);
}

/* A quoted CSV field: '"' doubled, line breaks as spaces (a row is a line). */
static void put_quoted(enpu_sb *b, const char *s) {
    enpu_sb_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"') enpu_sb_puts(b, "\"\"");
        else if (*s == '\n' || *s == '\r') enpu_sb_puts(b, " ");
        else enpu_sb_put(b, s, 1);
    }
    enpu_sb_puts(b, "\"");
}

void enpu_sweep_csv_header(enpu_sb *b, const enpu_sweep_info *in) {
    enpu_sb_puts(b, "sweep,point");
    for (int i = 0; i < in->space->n_params; i++) enpu_sb_printf(b, ",%s", in->space->params[i].key);
    enpu_sb_puts(b, ",model,status");
    for (int i = 0; i < FIXED_COLS; i++) enpu_sb_printf(b, ",%s", fixed_cols[i]);
    for (int p = 0; p < ENPU_EP_COUNT; p++)
        enpu_sb_printf(b, ",energy_%s_pj", enpu_energy_part_name((enpu_energy_part)p));
    enpu_sb_puts(b, ",reason\n");
}

void enpu_sweep_csv_row(enpu_sb *b, const enpu_sweep_info *in, const enpu_point_result *r) {
    if (r->status == ENPU_PT_PENDING) return;
    enpu_sb_printf(b, "%s,%" PRIu64, in->id, r->point);
    for (int i = 0; i < in->space->n_params; i++) {
        enpu_sb_puts(b, ",");
        put_num(b, enpu_sweep_point_value(in->space, r->point, i));
    }
    enpu_sb_puts(b, ",");
    put_quoted(b, in->models[r->model]);
    enpu_sb_printf(b, ",%s", enpu_point_status_name(r->status));
    const bool ok = r->status == ENPU_PT_OK;
    const double fixed[FIXED_COLS] = {(double)r->cycles, (double)r->macs, r->time_us, r->utilization,
                                      r->energy_pj,      r->power_mw,     r->edp_js,  r->area_um2};
    for (int i = 0; i < FIXED_COLS; i++) {
        enpu_sb_puts(b, ",");
        if (!ok) continue;
        if (i < 2) enpu_sb_printf(b, "%" PRIu64, i ? r->macs : r->cycles);
        else put_num(b, fixed[i]);
    }
    for (int p = 0; p < ENPU_EP_COUNT; p++) {
        enpu_sb_puts(b, ",");
        if (ok) put_num(b, r->part_pj[p]);
    }
    enpu_sb_puts(b, ",");
    put_quoted(b, ok ? "" : r->reason);
    enpu_sb_puts(b, "\n");
}

char *enpu_sweep_csv_text(const enpu_sweep_info *in, const enpu_point_result *results, uint64_t n) {
    enpu_sb b = {0};
    enpu_sweep_csv_header(&b, in);
    for (uint64_t i = 0; i < n; i++) enpu_sweep_csv_row(&b, in, &results[i]);
    return enpu_sb_take(&b);
}

/* ---- reading rows back ------------------------------------------------------ */

#define MAX_FIELDS (2 + ENPU_SWEEP_MAX_PARAMS + 2 + FIXED_COLS + ENPU_EP_COUNT + 1)

/* Splits one line (modified in place) into fields; quoted fields unquoted.
 * Returns the count, -1 for a malformed quote. */
static int split_csv(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return -1;
        if (*p == '"') {
            char *o = ++p, *start = p;
            for (;;) {
                if (!*p) return -1;
                if (*p == '"') {
                    if (p[1] == '"') {
                        *o++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *o++ = *p++;
            }
            *o = 0;
            f[n++] = start;
            if (*p == ',') {
                p++;
                continue;
            }
            return *p ? -1 : n;
        }
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) return n;
        *c = 0;
        p = c + 1;
    }
}

static bool num_field(const char *s, double *v) {
    if (!*s) {
        *v = 0;
        return true;
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *end == 0 && errno == 0 && isfinite(*v);
}

static bool u64_field(const char *s, uint64_t *v) {
    if (!*s) {
        *v = 0;
        return true;
    }
    if (*s < '0' || *s > '9') return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    *v = x;
    return *end == 0 && errno == 0;
}

static int read_row(const enpu_sweep_info *in, char *line, enpu_sweep_slot_fn slot, void *ctx,
                    const char *what, uint64_t lineno, enpu_err *err) {
    char *f[MAX_FIELDS + 1];
    const int np = in->space->n_params;
    const int want = 2 + np + 2 + FIXED_COLS + ENPU_EP_COUNT + 1;
    int n = split_csv(line, f, MAX_FIELDS + 1);
#define BAD(...) enpu_fail(err, ENPU_E_FORMAT, __VA_ARGS__)
    if (n != want)
        return BAD("%s: line %" PRIu64 ": %d fields, a row of this sweep has %d", what, lineno, n, want);
    if (strcmp(f[0], in->id) != 0)
        return BAD("%s: line %" PRIu64 ": row of sweep %s, not of this sweep (%s)", what, lineno, f[0],
                   in->id);
    uint64_t point;
    if (!u64_field(f[1], &point) || !*f[1] || point >= in->space->n_grid)
        return BAD("%s: line %" PRIu64 ": point '%s' is not a point of this sweep", what, lineno, f[1]);
    for (int i = 0; i < np; i++) {
        double v;
        if (!num_field(f[2 + i], &v) || v != enpu_sweep_point_value(in->space, point, i))
            return BAD("%s: line %" PRIu64 ": %s = '%s' is not the value of point %" PRIu64, what,
                       lineno, in->space->params[i].key, f[2 + i], point);
    }
    int model = -1;
    for (int m = 0; m < in->n_models && model < 0; m++)
        if (strcmp(f[2 + np], in->models[m]) == 0) model = m;
    if (model < 0) return BAD("%s: line %" PRIu64 ": model '%s' is not one of this sweep", what, lineno, f[2 + np]);
    int st = enpu_point_status_parse(f[3 + np]);
    if (st <= ENPU_PT_PENDING)
        return BAD("%s: line %" PRIu64 ": unknown status '%s'", what, lineno, f[3 + np]);
    enpu_point_result *r = slot(ctx, point, model);
    if (!r) return BAD("%s: line %" PRIu64 ": point %" PRIu64 " is not in this sweep's sample", what, lineno, point);
    if (r->status != ENPU_PT_PENDING)
        return BAD("%s: line %" PRIu64 ": point %" PRIu64 " on model '%s' appears twice", what, lineno,
                   point, in->models[model]);
    memset(r, 0, sizeof *r);
    r->point = point;
    r->model = model;
    r->status = (enpu_point_status)st;
    double fx[FIXED_COLS];
    const char *const *fv = (const char *const *)&f[4 + np];
    bool ok = u64_field(fv[0], &r->cycles) && u64_field(fv[1], &r->macs);
    for (int i = 2; i < FIXED_COLS && ok; i++) ok = num_field(fv[i], &fx[i]);
    for (int p = 0; p < ENPU_EP_COUNT && ok; p++) ok = num_field(fv[FIXED_COLS + p], &r->part_pj[p]);
    if (!ok) {
        r->status = ENPU_PT_PENDING;
        return BAD("%s: line %" PRIu64 ": a number field is not a number", what, lineno);
    }
    r->time_us = fx[2], r->utilization = fx[3], r->energy_pj = fx[4];
    r->power_mw = fx[5], r->edp_js = fx[6], r->area_um2 = fx[7];
    snprintf(r->reason, sizeof r->reason, "%.*s", (int)sizeof r->reason - 1, f[want - 1]);
#undef BAD
    return 0;
}

int enpu_sweep_csv_read(const enpu_sweep_info *in, const char *text, size_t n, const char *what,
                        enpu_sweep_slot_fn slot, void *ctx, uint64_t *rows_read, enpu_err *err) {
    *rows_read = 0;
    char *buf = malloc(n + 1);
    if (!buf) return enpu_fail(err, ENPU_E_NOMEM, "out of memory reading %s", what);
    memcpy(buf, text, n);
    buf[n] = 0;
    int rc = 0;
    uint64_t lineno = 1;
    for (char *p = buf; *p && !rc; lineno++) {
        char *nl = strchr(p, '\n');
        if (!nl) break; /* a last line without its newline was cut off by an interruption */
        *nl = 0;
        if (nl > p && nl[-1] == '\r') nl[-1] = 0;
        if (*p) {
            rc = read_row(in, p, slot, ctx, what, lineno, err);
            if (!rc) ++*rows_read;
        }
        p = nl + 1;
    }
    free(buf);
    return rc;
}

/* ---- JSON ------------------------------------------------------------------- */

static json_t *params_json(const enpu_sweep_info *in, uint64_t point) {
    json_t *o = json_object();
    for (int i = 0; i < in->space->n_params; i++) {
        double v = enpu_sweep_point_value(in->space, point, i);
        json_object_set_new(o, in->space->params[i].key,
                            in->space->params[i].is_double ? json_real(v) : json_integer((json_int_t)v));
    }
    return o;
}

char *enpu_sweep_json_text(const enpu_sweep_info *in, const enpu_point_result *results,
                           uint64_t n_results, const enpu_sweep_config *configs) {
    const enpu_sweep_space *s = in->space;
    json_t *root = json_object();
    json_object_set_new(root, "sweep", json_string(in->id));
    json_object_set_new(root, "mode", json_string(in->simulate ? "simulate" : "model"));
    char *base = enpu_arch_to_json(&s->base, 0);
    json_t *jb = base ? json_loads(base, 0, NULL) : NULL;
    free(base);
    json_object_set_new(root, "base", jb ? jb : json_null());
    json_t *params = json_array();
    for (int i = 0; i < s->n_params; i++) {
        json_t *p = json_object(), *vals = json_array();
        json_object_set_new(p, "key", json_string(s->params[i].key));
        for (int k = 0; k < s->params[i].n; k++)
            json_array_append_new(vals, s->params[i].is_double ? json_real(s->params[i].values[k])
                                                               : json_integer((json_int_t)s->params[i].values[k]));
        json_object_set_new(p, "values", vals);
        json_array_append_new(params, p);
    }
    json_object_set_new(root, "params", params);
    json_object_set_new(root, "grid_points", json_integer((json_int_t)s->n_grid));
    json_object_set_new(root, "points", json_integer((json_int_t)s->n_points));
    if (s->sample) {
        json_t *smp = json_object();
        json_object_set_new(smp, "n", json_integer((json_int_t)s->n_points));
        json_object_set_new(smp, "seed", json_integer((json_int_t)s->seed));
        json_object_set_new(root, "sample", smp);
    }
    json_t *models = json_array();
    for (int m = 0; m < in->n_models; m++) json_array_append_new(models, json_string(in->models[m]));
    json_object_set_new(root, "models", models);
    uint64_t cnt[ENPU_PT_ERROR + 1] = {0};
    for (uint64_t i = 0; i < n_results; i++) cnt[results[i].status]++;
    json_t *counts = json_object();
    for (int st = 0; st <= ENPU_PT_ERROR; st++)
        json_object_set_new(counts, enpu_point_status_name((enpu_point_status)st), json_integer((json_int_t)cnt[st]));
    json_object_set_new(root, "counts", counts);
    json_t *res = json_array();
    for (uint64_t i = 0; i < n_results; i++) {
        const enpu_point_result *r = &results[i];
        if (r->status == ENPU_PT_PENDING) continue;
        json_t *o = json_object();
        json_object_set_new(o, "point", json_integer((json_int_t)r->point));
        json_object_set_new(o, "params", params_json(in, r->point));
        json_object_set_new(o, "model", json_string(in->models[r->model]));
        json_object_set_new(o, "status", json_string(enpu_point_status_name(r->status)));
        json_object_set_new(o, "fits", json_boolean(r->status == ENPU_PT_OK));
        if (r->status == ENPU_PT_OK) {
            json_object_set_new(o, "cycles", json_integer((json_int_t)r->cycles));
            json_object_set_new(o, "macs", json_integer((json_int_t)r->macs));
            json_object_set_new(o, "time_us", json_real(r->time_us));
            json_object_set_new(o, "utilization", json_real(r->utilization));
            json_object_set_new(o, "energy_pj", json_real(r->energy_pj));
            json_object_set_new(o, "power_mw", json_real(r->power_mw));
            json_object_set_new(o, "edp_js", json_real(r->edp_js));
            json_object_set_new(o, "area_um2", json_real(r->area_um2));
            json_t *parts = json_object();
            for (int p = 0; p < ENPU_EP_COUNT; p++)
                json_object_set_new(parts, enpu_energy_part_name((enpu_energy_part)p), json_real(r->part_pj[p]));
            json_object_set_new(o, "energy_parts_pj", parts);
        } else {
            json_object_set_new(o, "reason", json_string(r->reason));
        }
        json_array_append_new(res, o);
    }
    json_object_set_new(root, "results", res);
    json_t *front = json_array();
    uint64_t nc = n_results / (uint64_t)in->n_models;
    for (uint64_t k = 0; k < nc; k++) {
        const enpu_sweep_config *c = &configs[k];
        if (!c->pareto) continue;
        json_t *o = json_object();
        json_object_set_new(o, "point", json_integer((json_int_t)c->point));
        json_object_set_new(o, "params", params_json(in, c->point));
        json_object_set_new(o, "time_us", json_real(c->time_us));
        json_object_set_new(o, "energy_pj", json_real(c->energy_pj));
        json_object_set_new(o, "area_um2", json_real(c->area_um2));
        json_array_append_new(front, o);
    }
    json_object_set_new(root, "pareto", front);
    char *out = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    return out;
}

/* ---- SVG -------------------------------------------------------------------- */

typedef struct axis {
    double lo, hi;
    bool log;
} axis;

static axis make_axis(double lo, double hi) {
    axis a = {lo, hi, false};
    if (lo > 0 && hi / lo > 30) {
        a.log = true;
        a.lo = pow(10, floor(log10(lo)));
        a.hi = pow(10, ceil(log10(hi)));
    } else {
        double span = hi - lo > 0 ? hi - lo : (hi > 0 ? hi : 1);
        a.lo = lo - 0.05 * span;
        a.hi = hi + 0.05 * span;
        if (a.lo < 0 && lo >= 0) a.lo = 0;
    }
    return a;
}

static double frac(const axis *a, double v) {
    if (a->log) return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    return (v - a->lo) / (a->hi - a->lo);
}

static void sb_xml(enpu_sb *b, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': enpu_sb_puts(b, "&lt;"); break;
        case '>': enpu_sb_puts(b, "&gt;"); break;
        case '&': enpu_sb_puts(b, "&amp;"); break;
        case '"': enpu_sb_puts(b, "&quot;"); break;
        default: enpu_sb_put(b, s, 1);
        }
    }
}

/* One panel: y (energy or area) against latency at (x0, y0); a front
 * point is marked with its number in `label` (its rank by latency), which
 * the list under the panels explains. */
static void panel(enpu_sb *b, const enpu_sweep_info *in, const enpu_sweep_config *cf, uint64_t n,
                  const int *label, int x0, int y0, int w, int h, bool energy) {
    double xl = INFINITY, xh = 0, yl = INFINITY, yh = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!cf[i].ok) continue;
        double y = energy ? cf[i].energy_pj / 1e6 : cf[i].area_um2 / 1e6;
        if (cf[i].time_us < xl) xl = cf[i].time_us;
        if (cf[i].time_us > xh) xh = cf[i].time_us;
        if (y < yl) yl = y;
        if (y > yh) yh = y;
    }
    if (xh <= 0) xl = 0, xh = 1, yl = 0, yh = 1;
    axis ax = make_axis(xl, xh), ay = make_axis(yl, yh);
    enpu_sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                   x0, y0, w, h);
    /* ticks: decades on a log axis, 1, 2 or 5 times a power of ten on a
     * linear one */
    for (int t = 0; t < 2; t++) {
        const axis *a = t ? &ay : &ax;
        double step = 0, first = 0;
        int steps;
        if (a->log) {
            steps = (int)lround(log10(a->hi / a->lo));
        } else {
            double raw = (a->hi - a->lo) / 5, mag = pow(10, floor(log10(raw)));
            step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
            first = ceil(a->lo / step) * step;
            steps = (int)floor((a->hi - first) / step + 1e-9);
        }
        for (int k = 0; k <= steps; k++) {
            double v = a->log ? a->lo * pow(10, k) : first + step * k;
            double f = frac(a, v);
            char lbl[32];
            svg_fmt(lbl, sizeof lbl, fabs(v) < 1e-12 * (a->hi - a->lo) ? 0.0 : v);
            if (t == 0) {
                double x = x0 + f * w;
                enpu_sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                                  "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                               x, y0, x, y0 + h, x, y0 + h + 14, lbl);
            } else {
                double y = y0 + h - f * h;
                enpu_sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                                  "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                               x0, y, x0 + w, y, x0 - 4, y + 4, lbl);
            }
        }
    }
    enpu_sb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">latency (us%s%s)</text>\n",
                   x0 + w / 2, y0 + h + 32, in->n_models > 1 ? ", sum over models" : "",
                   ax.log ? ", log scale" : "");
    enpu_sb_printf(b, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\" text-anchor=\"middle\">"
                      "%s%s</text>\n",
                   x0 - 48, y0 + h / 2, x0 - 48, y0 + h / 2,
                   energy ? (in->n_models > 1 ? "energy (uJ, sum over models)" : "energy per inference (uJ)")
                          : "area (mm2)",
                   ay.log ? ", log scale" : "");
    /* the others first, the front on top */
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < n; i++) {
            const enpu_sweep_config *c = &cf[i];
            if (!c->ok || c->pareto != (pass == 1)) continue;
            double y = energy ? c->energy_pj / 1e6 : c->area_um2 / 1e6;
            double px = x0 + frac(&ax, c->time_us) * w, py = y0 + h - frac(&ay, y) * h;
            if (!pass) {
                enpu_sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#3182bd\" "
                                  "fill-opacity=\"0.45\"/>\n",
                               px, py);
                continue;
            }
            enpu_sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#d62728\" stroke=\"black\" "
                              "stroke-width=\"0.8\"><title>point %" PRIu64 ":",
                           px, py, c->point);
            for (int k = 0; k < in->space->n_params; k++) {
                enpu_sb_printf(b, " %s=", in->space->params[k].key);
                char d[40];
                enpu_fmt_double(d, sizeof d, enpu_sweep_point_value(in->space, c->point, k));
                sb_xml(b, d);
            }
            enpu_sb_printf(b, "; %.4g us, %.4g uJ, %.4g mm2</title></circle>\n", c->time_us,
                           c->energy_pj / 1e6, c->area_um2 / 1e6);
            enpu_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">%d</text>\n", px + 5, py - 4,
                           label[i]);
        }
}

static int cmp_time(const void *a, const void *b);

char *enpu_sweep_svg_text(const enpu_sweep_info *in, const enpu_sweep_config *configs,
                          uint64_t n_configs) {
    enpu_sb b = {0};
    const int W = 1160, pw = 450, ph = 360, top = 90, left = 90, gap = 120;
    uint64_t n_ok = 0, n_front = 0;
    for (uint64_t i = 0; i < n_configs; i++) n_ok += configs[i].ok, n_front += configs[i].pareto;
    /* the front numbered by latency, so the picture itself says which
     * parameters each red point has: a list under the panels */
    int *label = calloc(n_configs + 1, sizeof *label);
    const enpu_sweep_config **front = calloc(n_front + 1, sizeof *front);
    if (!label || !front) {
        free(label), free(front);
        return NULL;
    }
    uint64_t nf = 0;
    for (uint64_t i = 0; i < n_configs; i++)
        if (configs[i].ok && configs[i].pareto) front[nf++] = &configs[i];
    qsort(front, nf, sizeof *front, cmp_time);
    for (uint64_t k = 0; k < nf; k++) label[front[k] - configs] = (int)k + 1;
    const int ly = top + ph + 70, H = ly + 34 + 13 * (int)nf;
    enpu_sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                       "font-family=\"sans-serif\" font-size=\"11\">\n"
                       "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                   W, H);
    enpu_sb_printf(&b, "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">EasyNPU sweep %s: ",
                   left, in->id);
    for (int m = 0; m < in->n_models; m++) {
        if (m) enpu_sb_puts(&b, ", ");
        sb_xml(&b, in->models[m]);
    }
    enpu_sb_printf(&b, "</text>\n<text x=\"%d\" y=\"42\">%" PRIu64 " configurations (%s), %" PRIu64
                       " fit every model.  Red: the %" PRIu64 " on the Pareto front of latency, energy and "
                       "area, numbered by latency (listed below); blue: the others.</text>\n",
                   left, n_configs, in->simulate ? "simulated" : "schedule model and analytic counts",
                   n_ok, n_front);
    /* the swept parameters, wrapped */
    int line = 0, col = 0;
    enpu_sb_printf(&b, "<text x=\"%d\" y=\"58\">Swept:", left);
    for (int k = 0; k < in->space->n_params; k++) {
        char item[80];
        int len = snprintf(item, sizeof item, " %s (%d values)%s", in->space->params[k].key,
                           in->space->params[k].n, k + 1 < in->space->n_params ? "," : ".");
        if (col + len > 150 && line < 1) {
            enpu_sb_printf(&b, "</text>\n<text x=\"%d\" y=\"%d\">", left + 40, 58 + 14 * ++line);
            col = 0;
        }
        enpu_sb_puts(&b, item);
        col += len;
    }
    enpu_sb_puts(&b, "</text>\n");
    panel(&b, in, configs, n_configs, label, left, top, pw, ph, true);
    panel(&b, in, configs, n_configs, label, left + pw + gap, top, pw, ph, false);
    /* a table: the number, each swept parameter, the three figures */
    /* a narrow first column for the number, the others share the width */
    const int ncol = in->space->n_params + 4, colw = (W - left - 50) / (ncol - 1);
#define COLX(c) (left + ((c) ? 30 + ((c) - 1) * colw : 0))
    enpu_sb_printf(&b, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">The front by latency</text>\n", left,
                   ly);
    for (int c = 0; c < ncol; c++) {
        const char *h = c == 0 ? "#" : c <= in->space->n_params ? in->space->params[c - 1].key
                      : c == ncol - 3 ? "latency us" : c == ncol - 2 ? "energy uJ" : "area mm2";
        enpu_sb_printf(&b, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\" font-size=\"9\">", COLX(c),
                       ly + 16);
        sb_xml(&b, h);
        enpu_sb_puts(&b, "</text>\n");
    }
    for (uint64_t k = 0; k < nf; k++) {
        const enpu_sweep_config *c = front[k];
        int y = ly + 30 + 13 * (int)k;
        enpu_sb_printf(&b, "<text x=\"%d\" y=\"%d\">%" PRIu64 "</text>", left, y, k + 1);
        for (int p = 0; p < in->space->n_params; p++) {
            char d[40];
            enpu_fmt_double(d, sizeof d, enpu_sweep_point_value(in->space, c->point, p));
            enpu_sb_printf(&b, "<text x=\"%d\" y=\"%d\">", COLX(p + 1), y);
            sb_xml(&b, d);
            enpu_sb_puts(&b, "</text>");
        }
        enpu_sb_printf(&b, "<text x=\"%d\" y=\"%d\">%.4g</text><text x=\"%d\" y=\"%d\">%.4g</text><text "
                           "x=\"%d\" y=\"%d\">%.4g</text>\n",
                       COLX(ncol - 3), y, c->time_us, COLX(ncol - 2), y, c->energy_pj / 1e6, COLX(ncol - 1), y,
                       c->area_um2 / 1e6);
    }
#undef COLX
    free(label), free(front);
    enpu_sb_puts(&b, "</svg>\n");
    return enpu_sb_take(&b);
}

/* ---- text summary ----------------------------------------------------------- */

static int cmp_time(const void *a, const void *b) {
    const enpu_sweep_config *x = *(enpu_sweep_config *const *)a, *y = *(enpu_sweep_config *const *)b;
    if (x->time_us != y->time_us) return x->time_us < y->time_us ? -1 : 1;
    return x->point < y->point ? -1 : x->point > y->point;
}

void enpu_sweep_print_summary(FILE *f, const enpu_sweep_info *in, const enpu_point_result *results,
                              uint64_t n_results, const enpu_sweep_config *configs, int max_rows) {
    uint64_t cnt[ENPU_PT_ERROR + 1] = {0};
    for (uint64_t i = 0; i < n_results; i++) cnt[results[i].status]++;
    fprintf(f, "results (point x model):");
    for (int st = ENPU_PT_OK; st <= ENPU_PT_ERROR; st++)
        if (cnt[st]) fprintf(f, " %s %" PRIu64, enpu_point_status_name((enpu_point_status)st), cnt[st]);
    if (cnt[ENPU_PT_PENDING]) fprintf(f, " pending %" PRIu64, cnt[ENPU_PT_PENDING]);
    fprintf(f, "\n");
    /* the first failure of each status, as an example of why */
    for (int st = ENPU_PT_INVALID; st <= ENPU_PT_ERROR; st++)
        for (uint64_t i = 0; i < n_results; i++)
            if (results[i].status == (enpu_point_status)st) {
                fprintf(f, "  e.g. point %" PRIu64 " (%s): %s\n", results[i].point,
                        enpu_point_status_name((enpu_point_status)st), results[i].reason);
                break;
            }
    uint64_t nc = n_results / (uint64_t)in->n_models, nf = 0;
    const enpu_sweep_config **front = malloc((size_t)(nc ? nc : 1) * sizeof *front);
    if (!front) return;
    for (uint64_t k = 0; k < nc; k++)
        if (configs[k].pareto) front[nf++] = &configs[k];
    qsort(front, (size_t)nf, sizeof *front, cmp_time);
    fprintf(f, "Pareto front of latency, energy and area: %" PRIu64 " configuration(s)%s\n", nf,
            (uint64_t)max_rows < nf ? " (the fastest shown)" : "");
    int wk[ENPU_SWEEP_MAX_PARAMS];
    for (int k = 0; k < in->space->n_params; k++) {
        int len = (int)strlen(in->space->params[k].key);
        wk[k] = len > 8 ? len : 8;
    }
    if (nf) {
        fprintf(f, "  %8s", "point");
        for (int k = 0; k < in->space->n_params; k++) fprintf(f, " %*s", wk[k], in->space->params[k].key);
        fprintf(f, " %12s %12s %10s\n", "latency_us", "energy_uJ", "area_mm2");
    }
    for (uint64_t i = 0; i < nf && i < (uint64_t)max_rows; i++) {
        fprintf(f, "  %8" PRIu64, front[i]->point);
        for (int k = 0; k < in->space->n_params; k++)
            fprintf(f, " %*.10g", wk[k], enpu_sweep_point_value(in->space, front[i]->point, k));
        fprintf(f, " %12.3f %12.4f %10.4f\n", front[i]->time_us, front[i]->energy_pj / 1e6,
                front[i]->area_um2 / 1e6);
    }
    free(front);
}
