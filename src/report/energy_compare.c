/* Energy of several architectures side by side (energy_compare.h). */
#include "report/energy_compare.h"

#include <string.h>

#include "easynpu/energy.h"
#include "report/energy_report.h"

/* a run that counted its actions: only cycle mode does */
static bool counted(const enpu_sim_result *r) { return r && r->mode == ENPU_SIM_CYCLE; }

static double energy_pj(const enpu_arch *a, const uint64_t *rd, const uint64_t *wr, const uint64_t *uops,
                        enpu_energy *e) {
    enpu_energy_costs c;
    enpu_energy_costs_of(a, &c);
    enpu_energy_of(&c, rd, wr, uops, e);
    return e->total_pj;
}

static void cell(FILE *f, const char *s) { fprintf(f, " %14s", s); }

void enpu_report_energy_compare(FILE *f, const enpu_arch *const *archs, const enpu_sim_result *const *res, int n) {
    const enpu_sim_result *base = NULL;
    for (int a = 0; a < n && !base; a++)
        if (counted(res[a])) base = res[a];
    if (!base) return;
    fprintf(f, "\nenergy per layer and in total (uJ; dynamic, counted actions, each arch at its own node, "
               "voltage and clock)\n%-28s", "layer");
    for (int a = 0; a < n; a++) fprintf(f, " %14.14s", archs[a]->name);
    fprintf(f, "\n");
    int nb = 0;
    const enpu_layer_stats *brows = enpu_sim_result_rows(base, &nb);
    char s[40];
    for (int i = 0; i < nb; i++) {
        fprintf(f, "%-28.27s", brows[i].name);
        for (int a = 0; a < n; a++) {
            int na = 0;
            const enpu_layer_stats *rows = counted(res[a]) ? enpu_sim_result_rows(res[a], &na) : NULL, *m = NULL;
            for (int k = 0; k < na && !m; k++)
                if (strcmp(rows[k].name, brows[i].name) == 0) m = &rows[k];
            enpu_energy e;
            if (m && m->host) cell(f, "host");
            else if (!m) cell(f, "-");
            else fprintf(f, " %14.3f", energy_pj(archs[a], m->reads, m->writes, m->uops, &e) / 1e6);
        }
        fprintf(f, "\n");
    }
    /* the totals: what each figure of the per-arch energy lines is, side by side */
    static const char *const what[] = {"total (uJ)", "pJ/MAC", "average power (mW)", "EDP (J*s)", "area (mm2)"};
    for (int w = 0; w < 5; w++) {
        fprintf(f, "%-28s", what[w]);
        for (int a = 0; a < n; a++) {
            if (!counted(res[a])) {
                cell(f, "-");
                continue;
            }
            enpu_energy e;
            enpu_energy_summary sum;
            enpu_area ar;
            double pj = energy_pj(archs[a], res[a]->reads, res[a]->writes, res[a]->uops, &e);
            enpu_energy_summarize(archs[a], res[a]->total_cycles, pj, &sum);
            enpu_area_of(archs[a], &ar);
            double v[] = {pj / 1e6, enpu_energy_per_mac(pj, res[a]->total_macs), sum.power_mw, sum.edp_js,
                          ar.total_um2 / 1e6};
            if (w == 3) snprintf(s, sizeof s, "%.4g", v[w]);
            else snprintf(s, sizeof s, "%.3f", v[w]);
            cell(f, s);
        }
        fprintf(f, "\n");
    }
    for (int l = 0; enpu_energy_levels[l]; l++) {
        snprintf(s, sizeof s, "%s (uJ)", enpu_energy_levels[l]);
        fprintf(f, "%-28s", s);
        for (int a = 0; a < n; a++) {
            enpu_energy e;
            double lv[8];
            if (!counted(res[a])) {
                cell(f, "-");
                continue;
            }
            energy_pj(archs[a], res[a]->reads, res[a]->writes, res[a]->uops, &e);
            enpu_energy_by_level(&e, lv);
            fprintf(f, " %14.3f", lv[l] / 1e6);
        }
        fprintf(f, "\n");
    }
}
