/* Energy and area lines and JSON fields (docs/energy.md). */
#include "report/energy_report.h"

#include <string.h>

void enpu_report_energy_lines(FILE *f, const enpu_arch *a, const enpu_energy *e,
                              uint64_t cycles) {
    enpu_energy_summary s;
    enpu_energy_summarize(a, cycles, e->total_pj, &s);
    enpu_area ar;
    enpu_area_of(a, &ar);
    fprintf(f, "energy per inference %.3f uJ (%g nm, %g V; dynamic, counted actions), average power "
               "%.3f mW at %g MHz, EDP %.4g J*s, area %.3f mm2\n",
            s.energy_pj / 1e6, a->tech_nm, a->vdd_v, s.power_mw, a->clock_mhz, s.edp_js,
            ar.total_um2 / 1e6);
    double tot = e->total_pj > 0 ? e->total_pj : 1;
    fprintf(f, "energy by unit (uJ):");
    for (int p = 0; p < ENPU_EP_COUNT; p++)
        if (e->part_pj[p] > 0)
            fprintf(f, " %s %.3f (%.1f%%)", enpu_energy_part_name((enpu_energy_part)p),
                    e->part_pj[p] / 1e6, 100.0 * e->part_pj[p] / tot);
    fprintf(f, "\nenergy by level (uJ):");
    const char *levels[ENPU_EP_COUNT];
    int nl = 0;
    for (int p = 0; p < ENPU_EP_COUNT; p++) {
        const char *lv = enpu_energy_part_level((enpu_energy_part)p);
        int k = 0;
        while (k < nl && strcmp(levels[k], lv) != 0) k++;
        if (k < nl) continue;
        levels[nl++] = lv;
        double sum = 0;
        for (int q = 0; q < ENPU_EP_COUNT; q++)
            if (strcmp(enpu_energy_part_level((enpu_energy_part)q), lv) == 0) sum += e->part_pj[q];
        fprintf(f, " %s %.3f (%.1f%%)", lv, sum / 1e6, 100.0 * sum / tot);
    }
    fprintf(f, "\n");
}

json_t *enpu_energy_parts_json(const enpu_energy *e) {
    json_t *o = json_object();
    for (int p = 0; p < ENPU_EP_COUNT; p++)
        json_object_set_new(o, enpu_energy_part_name((enpu_energy_part)p), json_real(e->part_pj[p]));
    return o;
}

json_t *enpu_area_json(const enpu_arch *a) {
    enpu_area ar;
    enpu_area_of(a, &ar);
    json_t *o = json_object(), *parts = json_object();
    json_object_set_new(o, "total_um2", json_real(ar.total_um2));
    json_object_set_new(o, "total_mm2", json_real(ar.total_um2 / 1e6));
    for (int p = 0; p < ENPU_AP_COUNT; p++)
        json_object_set_new(parts, enpu_area_part_name((enpu_area_part)p), json_real(ar.part_um2[p]));
    json_object_set_new(o, "parts_um2", parts);
    return o;
}

void enpu_report_energy_costs(FILE *f, const enpu_arch *a) {
    enpu_energy_costs c;
    enpu_energy_costs_of(a, &c);
    fprintf(f, "energy per action at %g nm, %g V (x%.4g logic and storage, x%.4g wires vs 45 nm, "
               "0.9 V; docs/energy.md):\n",
            a->tech_nm, a->vdd_v, c.energy_scale, c.wire_scale);
    for (int o = 0; o < ENPU_UOP_COUNT; o++)
        fprintf(f, "  %-20s %12.4f  pJ per lane\n", enpu_unit_op_name((enpu_unit_op)o), c.uop_pj[o]);
    for (int m = 0; m < ENPU_MEM_COUNT; m++) {
        const char *unit = m == ENPU_MEM_IFMAP_PAD || m == ENPU_MEM_WEIGHT_PAD || m == ENPU_MEM_PSUM
                               ? "pJ per entry read or written"
                               : "pJ per word read or written";
        fprintf(f, "  %-20s %12.4f  %s\n", enpu_memory_name((enpu_memory)m), c.read_pj[m], unit);
    }
    fprintf(f, "  %-20s %12.4f  pJ per bus word moved (%g mm)\n", "bus", c.bus_word_pj, a->bus_mm);
    enpu_area ar;
    enpu_area_of(a, &ar);
    fprintf(f, "area at %g nm (x%.4g vs 45 nm): %.4f mm2\n", a->tech_nm, c.area_scale,
            ar.total_um2 / 1e6);
    for (int p = 0; p < ENPU_AP_COUNT; p++)
        fprintf(f, "  %-20s %12.0f  um2 (%.1f%%)\n", enpu_area_part_name((enpu_area_part)p),
                ar.part_um2[p], 100.0 * ar.part_um2[p] / ar.total_um2);
}
