/* The comparison panels of `run --arch A --arch B ... --svg` (svg_compare.c):
 * cycles per layer and energy by level, every architecture on one scale. */
#ifndef ENPU_SVG_COMPARE_H
#define ENPU_SVG_COMPARE_H

#include "easynpu/sim.h"
#include "report/svg.h"

#define ENPU_MAX_ARCH_CMP 16 /* architectures a comparison draws */

/* Draws the panels of runs res[0..n) (n >= 2; res[0]'s layers name the
 * groups) into b from y0; returns their height and widens *width to fit. */
int enpu_svg_compare(svg_buf *b, const enpu_arch *const *archs, const enpu_sim_result *const *res, int n, int y0,
                     int *width);

#endif
