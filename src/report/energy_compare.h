/* The energy of one model on several architectures side by side, per layer
 * and in total (`easynpu run --arch A --arch B ...`; energy_compare.c,
 * docs/energy.md "Engines side by side"). */
#ifndef ENPU_ENERGY_COMPARE_H
#define ENPU_ENERGY_COMPARE_H

#include <stdio.h>

#include "easynpu/sim.h"

/* Prints the table of runs res[0..n) on archs[0..n) (res[a] NULL: arch a
 * did not run; a functional-mode run counted nothing and shows "-"): a row
 * per layer of the first run (matched by name in the others), its energy
 * in uJ ("host" for a layer the host CPU ran), then the totals: energy,
 * pJ/MAC, average power, EDP, area, and the energy by level. */
void enpu_report_energy_compare(FILE *f, const enpu_arch *const *archs, const enpu_sim_result *const *res, int n);

#endif
