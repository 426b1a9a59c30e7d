/* The comparison of one model on several architectures (`run --arch A
 * --arch B ... --svg`), drawn so that the eye compares like with like: one
 * shared scale for every architecture.  Two panels: per layer, one bar per
 * architecture (cycles; a log scale when they span more than 30x, since an
 * array of 1,024 MACs and one of 16 differ by orders of magnitude), and per
 * architecture its energy per inference stacked by level (datapath,
 * register file, global buffer, network, DRAM) on one linear scale. */
#include "report/svg_compare.h"

#include <math.h>
#include <string.h>

#include "easynpu/energy.h"
#include "report/energy_report.h"

static const char *const arch_color[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#17becf"};
static const char *const level_color[] = {"#2ca02c", "#9467bd", "#1f77b4", "#ff7f0e", "#d62728"};

/* The row of layer `name` in res, or NULL. */
static const enpu_layer_stats *row_of(const enpu_sim_result *res, const char *name) {
    int n = 0;
    const enpu_layer_stats *rows = enpu_sim_result_rows(res, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

/* y of value v on the panel's axis: [0, top] linear, or [lo, top] log. */
typedef struct axis {
    bool log;
    double lo, top;
    int y0, h;
} axis;

static double ypos(const axis *a, double v) {
    if (a->log) {
        if (v < a->lo) v = a->lo;
        return a->y0 + a->h - a->h * (log10(v) - log10(a->lo)) / (log10(a->top) - log10(a->lo));
    }
    return a->y0 + a->h - a->h * v / a->top;
}

static void draw_axis(svg_buf *b, const axis *a, int left, int width, const char *label) {
    char t[32];
    if (a->log) {
        for (double d = log10(a->lo); d <= log10(a->top) + 1e-9; d += 1) {
            double v = pow(10, d), y = ypos(a, v);
            svg_fmt(t, sizeof t, v);
            svg_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" "
                          "y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                       left, y, left + width, y, left - 6, y + 4, t);
        }
    } else {
        double step = svg_nice_step(a->top, 4);
        for (double v = 0; v <= a->top * (1 + 1e-9); v += step) {
            double y = ypos(a, v);
            svg_fmt(t, sizeof t, v);
            svg_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" "
                          "y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                       left, y, left + width, y, left - 6, y + 4, t);
        }
    }
    svg_printf(b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">%s</text>\n",
               a->y0 + a->h / 2, a->y0 + a->h / 2, label);
}

/* The per-layer panel at y0; returns its height. */
static int layers_panel(svg_buf *b, const enpu_arch *const *archs, const enpu_sim_result *const *res, int n,
                        int y0, int *width) {
    const int left = 80, plot_h = 260, label_h = 140;
    int nb = 0;
    const enpu_layer_stats *base = enpu_sim_result_rows(res[0], &nb);
    double hi = 1, lo = 1e300;
    for (int i = 0; i < nb; i++)
        for (int a = 0; a < n; a++) {
            const enpu_layer_stats *r = row_of(res[a], base[i].name);
            if (!r || !r->cycles) continue;
            if ((double)r->cycles > hi) hi = (double)r->cycles;
            if ((double)r->cycles < lo) lo = (double)r->cycles;
        }
    if (lo > hi) lo = 1;
    axis ax = {hi / lo > 30, 1, 0, y0 + 40, plot_h};
    if (ax.log) ax.lo = pow(10, floor(log10(lo))), ax.top = pow(10, ceil(log10(hi)));
    else ax.top = svg_nice_step(hi, 4) * ceil(hi / svg_nice_step(hi, 4));
    int bar = n > 4 ? 8 : 14, group = n * bar + 12;
    int plot_w = nb * group + 12;
    if (plot_w < 480) plot_w = 480;
    svg_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">Cycles per layer, every "
                  "architecture on one %s scale</text>\n",
               left, y0 + 20, ax.log ? "logarithmic" : "linear");
    draw_axis(b, &ax, left, plot_w, "cycles");
    for (int i = 0; i < nb; i++) {
        int gx = left + 12 + i * group;
        for (int a = 0; a < n; a++) {
            const enpu_layer_stats *r = row_of(res[a], base[i].name);
            if (!r || !r->cycles) continue;
            double y = ypos(&ax, (double)r->cycles), yb = ypos(&ax, ax.log ? ax.lo : 0);
            svg_printf(b, "<g><title>");
            svg_text(b, base[i].name, 80);
            svg_printf(b, " on %s: %llu cycles</title><rect x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" "
                          "fill=\"%s\"/></g>\n",
                       archs[a]->name, (unsigned long long)r->cycles, gx + a * bar, y, bar, yb - y,
                       arch_color[a % 8]);
        }
        int cx = gx + n * bar / 2, ly = ax.y0 + plot_h + 12;
        svg_printf(b, "<text x=\"%d\" y=\"%d\" transform=\"rotate(60 %d %d)\">", cx, ly, cx, ly);
        svg_text(b, base[i].name, 22);
        svg_printf(b, "</text>\n");
    }
    int lx = left + plot_w + 20;
    for (int a = 0; a < n; a++)
        svg_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" "
                      "y=\"%d\">%s (%llu cycles)</text>\n",
                   lx, ax.y0 + 18 * a, arch_color[a % 8], lx + 18, ax.y0 + 18 * a + 10, archs[a]->name,
                   (unsigned long long)res[a]->total_cycles);
    if (lx + 260 > *width) *width = lx + 260;
    return 40 + plot_h + label_h;
}

/* The energy panel at y0 (the architectures run in cycle mode: the others
 * counted nothing); returns its height, 0 when none was. */
static int energy_panel(svg_buf *b, const enpu_arch *const *archs, const enpu_sim_result *const *res, int n,
                        int y0, int *width) {
    const int left = 80, plot_h = 220, bar = 48, gap = 40;
    double lv[ENPU_MAX_ARCH_CMP][8] = {{0}}, hi = 0;
    bool any = false;
    for (int a = 0; a < n && a < ENPU_MAX_ARCH_CMP; a++) {
        if (res[a]->mode != ENPU_SIM_CYCLE) continue;
        enpu_energy_costs c;
        enpu_energy e;
        enpu_energy_costs_of(archs[a], &c);
        enpu_energy_of(&c, res[a]->reads, res[a]->writes, res[a]->uops, &e);
        enpu_energy_by_level(&e, lv[a]);
        double sum = 0;
        for (int l = 0; enpu_energy_levels[l]; l++) sum += lv[a][l] / 1e6;
        if (sum > hi) hi = sum;
        any = true;
    }
    if (!any) return 0;
    double step = svg_nice_step(hi, 4);
    axis ax = {false, 0, step * ceil(hi / step), y0 + 40, plot_h};
    int plot_w = n * (bar + gap) + gap;
    svg_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">Energy per inference by "
                  "level, one scale (uJ; dynamic energy of the counted actions)</text>\n",
               left, y0 + 20);
    draw_axis(b, &ax, left, plot_w, "uJ");
    for (int a = 0; a < n && a < ENPU_MAX_ARCH_CMP; a++) {
        int x = left + gap + a * (bar + gap);
        double acc = 0;
        bool drawn = false;
        for (int l = 0; enpu_energy_levels[l]; l++) {
            double v = lv[a][l] / 1e6;
            if (v <= 0) continue;
            double y1 = ypos(&ax, acc + v), y2 = ypos(&ax, acc);
            svg_printf(b, "<g><title>%s: %s %.3f uJ</title><rect x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" "
                          "fill=\"%s\"/></g>\n",
                       archs[a]->name, enpu_energy_levels[l], v, x, y1, bar, y2 - y1, level_color[l % 5]);
            acc += v;
            drawn = true;
        }
        char t[32];
        if (drawn) svg_fmt(t, sizeof t, acc);
        else snprintf(t, sizeof t, "not counted");
        svg_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x + bar / 2,
                   ypos(&ax, acc) - 4, t);
        svg_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", x + bar / 2, ax.y0 + plot_h + 16);
        svg_text(b, archs[a]->name, 16);
        svg_printf(b, "</text>\n");
    }
    int lx = left + plot_w + 20;
    for (int l = 0; enpu_energy_levels[l]; l++)
        svg_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" "
                      "y=\"%d\">%s</text>\n",
                   lx, ax.y0 + 18 * l, level_color[l % 5], lx + 18, ax.y0 + 18 * l + 10, enpu_energy_levels[l]);
    if (lx + 200 > *width) *width = lx + 200;
    return 40 + plot_h + 40;
}

int enpu_svg_compare(svg_buf *b, const enpu_arch *const *archs, const enpu_sim_result *const *res, int n, int y0,
                     int *width) {
    int h = layers_panel(b, archs, res, n, y0, width);
    h += energy_panel(b, archs, res, n, y0 + h, width);
    svg_printf(b, "<text x=\"80\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">Each architecture in detail, "
                  "on its own scale</text>\n",
               y0 + h + 24);
    return h + 40;
}
