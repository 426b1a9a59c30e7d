/* The access counts and estimates of the engines other than EasyNPU's
 * (energy.h enpu_access_counts, enpu_estimate_program dispatch to them by
 * the arch's engine); private to src/energy/. */
#ifndef ENPU_ENERGY_ACCESS_ENGINES_H
#define ENPU_ENERGY_ACCESS_ENGINES_H

#include "easynpu/energy.h"

/* The systolic engine (access_systolic.c): its cost model's counts
 * (enpu_sya_model_program, docs/systolic.md "Statistics"), equal to the
 * simulator's per instruction; the same contracts as enpu_access_counts and
 * enpu_estimate_program. */
int enpu_energy_sya_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err);
int enpu_energy_sya_estimate(const enpu_program *p, enpu_layer_stats **rows, enpu_layer_stats *total,
                             enpu_err *err);

#endif
