/* The compile report (`easynpu compile`): the per-layer mapping table --
 * op, shapes, fused ops, tiling (x, y, x', y', zs, z, band), broadcast or
 * multicast, double buffering, memory addresses, modelled and ideal cycles
 * and their ratio -- with totals, memory use, how each data movement was
 * realised and the host ops; as text or JSON. */
#ifndef ENPU_COMPILE_REPORT_H
#define ENPU_COMPILE_REPORT_H

#include <stdio.h>

#include "easynpu/compiler.h"

/* The table and totals as text. */
void enpu_compile_report_print(FILE *f, const enpu_compile_report *r);
/* The report as JSON (atomic write): {"arch", "pes", "layers": [{"name",
 * "op", "src", "fused", "in", "out", "macs", "ideal_cycles",
 * "modelled_cycles", "compute_cycles", "activity", "tile": {"x", "y", "xi",
 * "yi", "zs", "z", "band_h", "double_buffered"}, "mode", "addr", "note"}],
 * "total": {"macs", "ideal_cycles", "modelled_cycles", "utilization",
 * "activity"}, "host_ops", "moves": [{"name", "op", "kind", "how"}],
 * "memory", "notes"}. */
int enpu_compile_report_save_json(const char *path, const enpu_compile_report *r, enpu_err *err);
/* Same JSON text (malloc'd), NULL when out of memory. */
char *enpu_compile_report_json(const enpu_compile_report *r);

#endif
