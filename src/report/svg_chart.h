/* Per-layer SVG chart of a simulated run: one stacked bar per layer (cycles
 * split by activity) with the layer's utilization drawn over it, and a legend;
 * for a run that moved data through DRAM, a roofline below it (each layer's
 * MACs per cycle against its MACs per DRAM byte, under the roof
 * min(MAC units, intensity x DRAM bytes per cycle)).  A self-contained SVG
 * 1.1 file that any browser opens. */
#ifndef ENPU_SVG_CHART_H
#define ENPU_SVG_CHART_H

#include "easynpu/sim.h"

/* Writes the chart of `res` to `path` (atomically).  `title` is shown on top
 * (the model and architecture, say). */
int enpu_svg_chart_write(const char *path, const char *title, const enpu_arch *a,
                         const enpu_sim_result *res, enpu_err *err);

/* The same chart as a malloc'd string (for tests). */
char *enpu_svg_chart_string(const char *title, const enpu_arch *a, const enpu_sim_result *res);

/* The charts of n runs (the same model on several architectures, say) in
 * one SVG: for n > 1 first the panels that put every architecture on one
 * scale (cycles per layer, energy by level: svg_compare.h), then each run's
 * chart with its title, one below the other; to path (atomically) or as a
 * malloc'd string. */
int enpu_svg_chart_write_multi(const char *path, const char *const *titles, const enpu_arch *const *archs,
                               const enpu_sim_result *const *res, int n, enpu_err *err);
char *enpu_svg_chart_string_multi(const char *const *titles, const enpu_arch *const *archs,
                                  const enpu_sim_result *const *res, int n);

#endif
