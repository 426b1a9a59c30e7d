#include "report/svg_chart.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "report/sim_report.h"
#include "report/svg.h"
#include "report/svg_compare.h"

/* One colour per activity, in enpu_activity order; compute is green so that
 * a good run looks green. */
static const char *const act_color[] = {
    "#7f7f7f", "#2ca02c", "#9467bd", "#1f77b4", "#d62728", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22",
};
/* A new activity needs its colour here (a missing one was drawn as "(null)"). */
_Static_assert(sizeof act_color / sizeof act_color[0] == ENPU_ACT_COUNT, "one colour per activity");

/* The roofline panel at y = y0 (docs/offchip.md "What the reports show"). */
static void roofline(svg_buf *b, const enpu_arch *a, const enpu_layer_stats *rows, int n, int left, int y0,
                     int w, int h) {
    int64_t wb = enpu_arch_word_bytes(a);
    double bpc = (double)(a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb);
    double units = (double)enpu_arch_mac_units(a);
    /* log axes: intensity 10^lx0 .. 10^lx1 MACs/byte, rate 10^ly0 .. units MACs/cycle */
    double lx0 = -2, lx1 = 3, ly0 = -2, ly1 = log10(units) + 0.2;
    for (int i = 0; i < n; i++) {
        enpu_roofline r;
        enpu_report_roofline(a, &rows[i], &r);
        if (isinf(r.intensity) || r.intensity <= 0 || r.achieved <= 0) continue;
        if (log10(r.intensity) < lx0 + 0.3) lx0 = floor(log10(r.intensity)) - 1;
        if (log10(r.intensity) > lx1 - 0.3) lx1 = ceil(log10(r.intensity)) + 1;
        if (log10(r.achieved) < ly0 + 0.3) ly0 = floor(log10(r.achieved)) - 1;
    }
#define PX(v) (left + (double)w * (log10(v) - lx0) / (lx1 - lx0))
#define PY(v) (y0 + h - (double)h * (log10(v) - ly0) / (ly1 - ly0))
    svg_printf(b, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">Roofline: MACs per cycle against MACs per "
                 "DRAM byte (the roof: %g MAC units, %g DRAM bytes per cycle)</text>\n",
              left, y0 - 12, units, bpc);
    svg_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", left, y0,
              w, h);
    for (double d = ceil(lx0); d <= lx1; d += 1) {
        double x = left + (double)w * (d - lx0) / (lx1 - lx0);
        svg_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" "
                     "y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                  x, y0, x, y0 + h, x, y0 + h + 14, pow(10, d));
    }
    for (double d = ceil(ly0); d <= ly1; d += 1) {
        double y = y0 + h - (double)h * (d - ly0) / (ly1 - ly0);
        svg_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" "
                     "y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                  left, y, left + w, y, left - 6, y + 4, pow(10, d));
    }
    svg_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">MACs per DRAM byte</text>\n", left + w / 2,
              y0 + h + 30);
    svg_printf(b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">MACs per "
                 "cycle</text>\n",
              y0 + h / 2, y0 + h / 2);
    /* the roof: the DRAM slope up to the balance point, then flat */
    double knee = units / bpc, xr = pow(10, lx1);
    double ylo = pow(10, lx0) * bpc < pow(10, ly0) ? pow(10, ly0) : pow(10, lx0) * bpc;
    svg_printf(b, "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\"%.1f,%.1f "
                 "%.1f,%.1f %.1f,%.1f\"/>\n",
              PX(ylo / bpc), PY(ylo), PX(knee), PY(units), PX(xr), PY(units));
    for (int i = 0; i < n; i++) {
        enpu_roofline r;
        enpu_report_roofline(a, &rows[i], &r);
        if (isinf(r.intensity) || r.intensity <= 0 || r.achieved <= 0) continue;
        svg_printf(b, "<g><title>");
        svg_text(b, rows[i].name, 120);
        svg_printf(b, ": %.3g MACs per DRAM byte, %.3g MACs per cycle of %.3g under the roof (%s-bound)"
                     "</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/><text x=\"%.1f\" "
                     "y=\"%.1f\">%d</text></g>\n",
                  r.intensity, r.achieved, r.roof, r.dram_bound ? "DRAM" : "compute", PX(r.intensity),
                  PY(r.achieved), r.dram_bound ? "#d62728" : "#2ca02c", PX(r.intensity) + 5,
                  PY(r.achieved) - 4, i);
    }
#undef PX
#undef PY
}

/* One chart into b at vertical offset y0 (its own coordinates inside a
 * translated group); *w and *h get its size. */
static void chart(svg_buf *b, const char *title, const enpu_arch *arch, const enpu_sim_result *res, int y0,
                  int *w_out, int *h_out) {
    const int left = 80, right = 60, top = 60, plot_h = 300, label_h = 150;
    int nrows = 0;
    const enpu_layer_stats *rows = enpu_sim_result_rows(res, &nrows);
    bool dram = res->reads[ENPU_MEM_OFFCHIP] + res->writes[ENPU_MEM_OFFCHIP] > 0;
    const int roof_h = dram ? 360 : 0;
    int n = nrows > 0 ? nrows : 1;
    int bar = n > 60 ? 8 : n > 30 ? 14 : 32, gap = bar / 3 + 2;
    int plot_w = n * (bar + gap) + gap;
    if (plot_w < 480) plot_w = 480; /* room for the subtitle on small models */
    int legend_w = 200;
    int width = left + plot_w + right + legend_w, height = top + plot_h + label_h + roof_h;
    uint64_t top_c = 1;
    for (int i = 0; i < nrows; i++)
        if (rows[i].cycles > top_c) top_c = rows[i].cycles;
    /* the axis ends at a round value above the tallest bar */
    double step = svg_nice_step((double)top_c, 4);
    int nt = (int)ceil((double)top_c / step);
    double maxc = step * nt;

    *w_out = width, *h_out = height;
    svg_printf(b, "<g transform=\"translate(0 %d)\">\n<text x=\"%d\" y=\"22\" font-size=\"15\" "
                 "font-weight=\"bold\">",
              y0, left);
    svg_text(b, title ? title : "EasyNPU run", 200);
    svg_printf(b, "</text>\n<text x=\"%d\" y=\"38\">%llu cycles, %.1f%% utilization, %.2f us. "
                  "Bars: cycles per layer by activity (left axis); dots: utilization (right axis).</text>\n",
              left, (unsigned long long)res->total_cycles, 100.0 * res->utilization, res->time_us);
    /* Axes and grid. */
    for (int k = 0; k <= nt; k++) {
        int y = top + plot_h - plot_h * k / nt;
        char lab[32];
        svg_fmt(lab, sizeof lab, step * k);
        svg_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n", left, y,
                   left + plot_w, y);
        svg_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 6, y + 4, lab);
    }
    for (int k = 0; k <= 4; k++)
        svg_printf(b, "<text x=\"%d\" y=\"%d\">%d%%</text>\n", left + plot_w + 6, top + plot_h - plot_h * k / 4 + 4,
                   25 * k);
    svg_printf(b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">"
                  "cycles</text>\n",
              top + plot_h / 2, top + plot_h / 2);
    /* Bars. */
    for (int i = 0; i < nrows; i++) {
        const enpu_layer_stats *l = &rows[i];
        int x = left + gap + i * (bar + gap);
        double y = top + plot_h;
        svg_printf(b, "<g><title>");
        svg_text(b, l->name, 120);
        svg_printf(b, " (%s): %llu cycles, %llu ideal", l->op, (unsigned long long)l->cycles,
                  (unsigned long long)l->ideal_cycles);
        for (int a = 0; a < ENPU_ACT_COUNT; a++)
            if (l->activity[a])
                svg_printf(b, ", %s %llu", enpu_activity_name((enpu_activity)a),
                          (unsigned long long)l->activity[a]);
        svg_printf(b, "</title>\n");
        for (int a = 0; a < ENPU_ACT_COUNT; a++) {
            if (!l->activity[a]) continue;
            double h = (double)plot_h * (double)l->activity[a] / maxc;
            y -= h;
            svg_printf(b, "<rect x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" fill=\"%s\"/>\n", x,
                      y, bar, h, act_color[a]);
        }
        double util = enpu_utilization(l->macs, (uint64_t)enpu_arch_mac_units(arch), l->cycles);
        if (util > 1) util = 1;
        if (!l->host && l->ideal_cycles > 0) /* control instructions do no MACs */
            svg_printf(b, "<circle cx=\"%d\" cy=\"%.2f\" r=\"3\" fill=\"black\"/>\n", x + bar / 2,
                      top + plot_h - plot_h * util);
        svg_printf(b, "</g>\n<text x=\"%d\" y=\"%d\" transform=\"rotate(60 %d %d)\">", x + bar / 2,
                  top + plot_h + 12, x + bar / 2, top + plot_h + 12);
        svg_text(b, l->name, 22);
        svg_printf(b, "</text>\n");
    }
    /* Legend. */
    int lx = left + plot_w + right;
    for (int a = 0; a < ENPU_ACT_COUNT; a++) {
        int y = top + 18 * a;
        svg_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                      "<text x=\"%d\" y=\"%d\">%s</text>\n",
                  lx, y, act_color[a], lx + 18, y + 10, enpu_activity_name((enpu_activity)a));
    }
    svg_printf(b, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"black\"/><text x=\"%d\" y=\"%d\">"
                  "utilization</text>\n",
              lx + 6, top + 18 * ENPU_ACT_COUNT + 6, lx + 18, top + 18 * ENPU_ACT_COUNT + 10);
    if (dram && arch) roofline(b, arch, rows, nrows, left, top + plot_h + label_h + 30, plot_w < 600 ? 600 : plot_w, 280);
    svg_printf(b, "</g>\n");
}

char *enpu_svg_chart_string_multi(const char *const *titles, const enpu_arch *const *archs,
                                  const enpu_sim_result *const *res, int n) {
    svg_buf body = {0}, b = {0};
    int width = 0, y = 0;
    /* several architectures: first the panels that put them on one scale */
    if (n > 1) y = enpu_svg_compare(&body, archs, res, n > ENPU_MAX_ARCH_CMP ? ENPU_MAX_ARCH_CMP : n, 0, &width);
    for (int i = 0; i < n; i++) {
        int w, h;
        chart(&body, titles[i], archs[i], res[i], y, &w, &h);
        if (w > width) width = w;
        y += h;
    }
    svg_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                  "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
              width, y);
    if (body.s) svg_printf(&b, "%s", body.s);
    svg_printf(&b, "</svg>\n");
    free(body.s);
    if (b.failed || body.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *enpu_svg_chart_string(const char *title, const enpu_arch *arch, const enpu_sim_result *res) {
    return enpu_svg_chart_string_multi(&title, &arch, &res, 1);
}

int enpu_svg_chart_write_multi(const char *path, const char *const *titles, const enpu_arch *const *archs,
                               const enpu_sim_result *const *res, int n, enpu_err *err) {
    char *s = enpu_svg_chart_string_multi(titles, archs, res, n);
    if (!s) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory drawing the chart", path);
    int rc = enpu_file_write_atomic(path, s, strlen(s), err);
    free(s);
    return rc;
}

int enpu_svg_chart_write(const char *path, const char *title, const enpu_arch *a,
                         const enpu_sim_result *res, enpu_err *err) {
    char *s = enpu_svg_chart_string(title, a, res);
    if (!s) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory drawing the chart", path);
    int rc = enpu_file_write_atomic(path, s, strlen(s), err);
    free(s);
    return rc;
}
