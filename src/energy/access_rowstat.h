/* The row-stationary engine's counts without simulating (access_rowstat.c),
 * behind enpu_access_counts and enpu_estimate_program (energy.h), which
 * hand a rowstat program over to these. */
#ifndef ENPU_ENERGY_ACCESS_ROWSTAT_H
#define ENPU_ENERGY_ACCESS_ROWSTAT_H

#include "easynpu/energy.h"

/* enpu_access_counts for a rowstat program: adds every instruction's reads
 * and writes of every memory but the DRAM, and its datapath operations, to
 * rows[0 .. p->n_instr), from the cost model (enpu_rs_model_stats: equal
 * to the simulator's, instruction by instruction).  ENPU_E_NOMEM only. */
int enpu_rs_access_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err);

/* enpu_estimate_program for a rowstat program: *rows (malloc'd, p->n_instr,
 * freed by the caller) get what a cycle-mode run's rows have -- name, op,
 * instr, chain head, group, cycles and activities, MACs and ideal cycles,
 * every memory's reads and writes, the DRAM's included, and the datapath
 * operations -- from the cost model, without simulating; *total their sums
 * (name "total").  ENPU_E_NOMEM only. */
int enpu_rs_estimate_program(const enpu_program *p, enpu_layer_stats **rows, enpu_layer_stats *total,
                             enpu_err *err);

#endif
