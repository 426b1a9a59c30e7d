/* Energy and area lines and JSON fields (docs/energy.md). */
#include "report/energy_report.h"

#include <string.h>

void enpu_report_energy_lines(FILE *f, const enpu_arch *a, const enpu_energy *e, uint64_t cycles,
                              uint64_t macs) {
    enpu_energy_summary s;
    enpu_energy_summarize(a, cycles, e->total_pj, &s);
    enpu_area ar;
    enpu_area_of(a, &ar);
    fprintf(f, "energy per inference %.3f uJ (%g nm, %g V; dynamic, counted actions), %.3f pJ/MAC, "
               "average power %.3f mW at %g MHz, EDP %.4g J*s, area %.3f mm2\n",
            s.energy_pj / 1e6, a->tech_nm, a->vdd_v, enpu_energy_per_mac(s.energy_pj, macs), s.power_mw,
            a->clock_mhz, s.edp_js, ar.total_um2 / 1e6);
    double tot = e->total_pj > 0 ? e->total_pj : 1;
    fprintf(f, "energy by unit (uJ):");
    for (int p = 0; p < ENPU_EP_COUNT; p++)
        if (e->part_pj[p] > 0)
            fprintf(f, " %s %.3f (%.1f%%)", enpu_energy_part_name((enpu_energy_part)p),
                    e->part_pj[p] / 1e6, 100.0 * e->part_pj[p] / tot);
    fprintf(f, "\nenergy by level (uJ):");
    double lv[8];
    enpu_energy_by_level(e, lv);
    for (int l = 0; enpu_energy_levels[l]; l++)
        fprintf(f, " %s %.3f (%.1f%%)", enpu_energy_levels[l], lv[l] / 1e6, 100.0 * lv[l] / tot);
    fprintf(f, "\n");
}

void enpu_energy_by_level(const enpu_energy *e, double *out) {
    for (int l = 0; enpu_energy_levels[l]; l++) {
        out[l] = 0;
        for (int p = 0; p < ENPU_EP_COUNT; p++)
            if (strcmp(enpu_energy_part_level((enpu_energy_part)p), enpu_energy_levels[l]) == 0)
                out[l] += e->part_pj[p];
    }
}

json_t *enpu_energy_parts_json(const enpu_energy *e, enpu_engine eng) {
    json_t *o = json_object();
    for (int p = 0; p < ENPU_EP_COUNT; p++)
        if (enpu_energy_part_of_engine((enpu_energy_part)p, eng))
            json_object_set_new(o, enpu_energy_part_name((enpu_energy_part)p), json_real(e->part_pj[p]));
    return o;
}

json_t *enpu_energy_levels_json(const enpu_energy *e) {
    json_t *o = json_object();
    double lv[8];
    enpu_energy_by_level(e, lv);
    for (int l = 0; enpu_energy_levels[l]; l++) json_object_set_new(o, enpu_energy_levels[l], json_real(lv[l]));
    return o;
}

json_t *enpu_area_json(const enpu_arch *a) {
    enpu_area ar;
    enpu_area_of(a, &ar);
    json_t *o = json_object(), *parts = json_object();
    json_object_set_new(o, "total_um2", json_real(ar.total_um2));
    json_object_set_new(o, "total_mm2", json_real(ar.total_um2 / 1e6));
    for (int p = 0; p < ENPU_AP_COUNT; p++)
        if (enpu_area_part_of_engine((enpu_area_part)p, a->engine))
            json_object_set_new(parts, enpu_area_part_name((enpu_area_part)p), json_real(ar.part_um2[p]));
    json_object_set_new(o, "parts_um2", parts);
    return o;
}

/* What one count of memory m is (docs/energy.md "What is counted"). */
static const char *count_unit(enpu_memory m) {
    switch (m) {
    case ENPU_MEM_IFMAP_PAD:
    case ENPU_MEM_WEIGHT_PAD:
    case ENPU_MEM_PSUM:
    case ENPU_MEM_PE_FIFO:
    case ENPU_MEM_IFMAP_LB:
    case ENPU_MEM_FILTER_LB:
    case ENPU_MEM_ACC: return "entry";
    case ENPU_MEM_GLB: return "byte";
    case ENPU_MEM_PE_REG:
    case ENPU_MEM_NOC: return "value";
    case ENPU_MEM_MUX: return "result";
    case ENPU_MEM_PSUM_LINK:
    case ENPU_MEM_PSUM_NET: return "psum";
    default: return "word";
    }
}

void enpu_report_energy_costs(FILE *f, const enpu_arch *a) {
    enpu_energy_costs c;
    enpu_energy_costs_of(a, &c);
    fprintf(f, "energy per action at %g nm, %g V (x%.4g logic and storage, x%.4g wires vs 45 nm, "
               "0.9 V; docs/energy.md), engine '%s':\n",
            a->tech_nm, a->vdd_v, c.energy_scale, c.wire_scale, enpu_engine_name(a->engine));
    for (int o = 0; o < ENPU_UOP_COUNT; o++) {
        /* the operations the engine performs */
        bool has = a->engine == ENPU_ENGINE_EASYNPU ? o != ENPU_UOP_MAC16
                   : o == ENPU_UOP_MAC || o == ENPU_UOP_REQUANT ||
                         (a->engine == ENPU_ENGINE_ROWSTAT && (o == ENPU_UOP_MAC16 || o == ENPU_UOP_ALU));
        if (has) fprintf(f, "  %-20s %12.4f  pJ per lane\n", enpu_unit_op_name((enpu_unit_op)o), c.uop_pj[o]);
    }
    for (int m = 0; m < ENPU_MEM_COUNT; m++) {
        if (!enpu_memory_of_engine((enpu_memory)m, a->engine)) continue;
        const char *u = count_unit((enpu_memory)m);
        if (m == ENPU_MEM_SHAPE) /* the systolic re-shaping unit's buffer */
            fprintf(f, "  %-20s %12.4f  pJ per word read, %.4f per byte written\n", enpu_memory_name((enpu_memory)m),
                    c.read_pj[m], c.write_pj[m]);
        else if (m == ENPU_MEM_MUX)
            fprintf(f, "  %-20s %12.4f  pJ per result passed to the requantizer\n", enpu_memory_name((enpu_memory)m),
                    c.read_pj[m]);
        else if (c.read_pj[m] == c.write_pj[m])
            fprintf(f, "  %-20s %12.4f  pJ per %s read or written\n", enpu_memory_name((enpu_memory)m),
                    c.read_pj[m], u);
        else
            fprintf(f, "  %-20s %12.4f  pJ per %s read (sent), %.4f written (received)\n",
                    enpu_memory_name((enpu_memory)m), c.read_pj[m], u, c.write_pj[m]);
    }
    fprintf(f, "  %-20s %12.4f  pJ per bus word moved (%g mm)\n", "bus", c.bus_word_pj, a->bus_mm);
    if (a->engine == ENPU_ENGINE_SYSTOLIC)
        fprintf(f, "  %-20s %12.4f  pJ per operand value moved one PE (%.4f mm)\n", "pe_link", c.hop_pj,
                c.pe_pitch_mm);
    if (a->engine == ENPU_ENGINE_ROWSTAT) /* the wires of noc, psum_link, psum_net are measured in it */
        fprintf(f, "  %-20s %12.4f  mm, the side of a PE (its area's square root)\n", "pe_pitch", c.pe_pitch_mm);
    enpu_area ar;
    enpu_area_of(a, &ar);
    fprintf(f, "area at %g nm (x%.4g vs 45 nm): %.4f mm2\n", a->tech_nm, c.area_scale,
            ar.total_um2 / 1e6);
    for (int p = 0; p < ENPU_AP_COUNT; p++)
        if (enpu_area_part_of_engine((enpu_area_part)p, a->engine))
            fprintf(f, "  %-20s %12.0f  um2 (%.1f%%)\n", enpu_area_part_name((enpu_area_part)p),
                    ar.part_um2[p], 100.0 * ar.part_um2[p] / ar.total_um2);
}
