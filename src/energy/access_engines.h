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

/* The row-stationary engine (access_rowstat.c). enpu_access_counts for a
 * rowstat program: adds every instruction's reads and writes of every
 * memory but the DRAM, and its datapath operations, to rows[0 ..
 * p->n_instr), from the cost model (enpu_rs_model_stats: equal to the
 * simulator's, instruction by instruction).  ENPU_E_NOMEM only. */
int enpu_rs_access_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err);

/* enpu_estimate_program for a rowstat program: *rows (malloc'd, p->n_instr,
 * freed by the caller) get what a cycle-mode run's rows have -- name, op,
 * instr, chain head, group, cycles and activities, MACs and ideal cycles,
 * every memory's reads and writes, the DRAM's included, and the datapath
 * operations -- from the cost model, without simulating; *total their sums
 * (name "total").  ENPU_E_NOMEM only. */
int enpu_rs_estimate_program(const enpu_program *p, enpu_layer_stats **rows, enpu_layer_stats *total,
                             enpu_err *err);

/* What the simulator's driver gives every row of an engine whose
 * instructions are each a chain of their own (systolic, row-stationary):
 * rows[0 .. p->n_instr) already hold the model's cycles, activities and
 * counts; this adds name, op, instr, chain head, group, MACs and ideal
 * cycles, and sets *total to their sums (name "total").  access_rowstat.c. */
void enpu_energy_finish_rows(const enpu_program *p, enpu_layer_stats *rows, enpu_layer_stats *total);

/* *total (name "total") = the sums of rows[0 .. n): cycles, MACs,
 * activities, every count; its ideal cycles those of its MACs on `units`
 * MAC units.  access.c. */
void enpu_energy_total_of(const enpu_layer_stats *rows, int n, uint64_t units, enpu_layer_stats *total);

#endif
