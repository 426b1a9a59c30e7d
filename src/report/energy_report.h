/* Energy and area in the reports: the lines under the run table, the JSON
 * fields of a run, and the per-action table of `easynpu arch`
 * (docs/energy.md). */
#ifndef ENPU_ENERGY_REPORT_H
#define ENPU_ENERGY_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "easynpu/energy.h"

/* The energy of a run (its total counts, macs its MACs) on arch a: per
 * inference and per MAC, by part and by level, average power at the clock,
 * energy-delay product, and the arch's area; three lines. */
void enpu_report_energy_lines(FILE *f, const enpu_arch *a, const enpu_energy *e, uint64_t cycles,
                              uint64_t macs);

/* The energy of e summed by level, in enpu_energy_levels order (out: one
 * entry per level). */
void enpu_energy_by_level(const enpu_energy *e, double *out);

/* {"part": pJ, ...} of e, the parts of engine eng in ENPU_ENERGY_PART_LIST
 * order (new reference). */
json_t *enpu_energy_parts_json(const enpu_energy *e, enpu_engine eng);
/* {"level": pJ, ...} of e (new reference). */
json_t *enpu_energy_levels_json(const enpu_energy *e);
/* {"total_um2", "total_mm2", "parts_um2": {...}} of arch a (new reference). */
json_t *enpu_area_json(const enpu_arch *a);

/* The per-action energies and per-unit areas of arch a, derived from its
 * cost figures (what `easynpu arch` prints under the parameters). */
void enpu_report_energy_costs(FILE *f, const enpu_arch *a);

#endif
