/* Results of a sweep (docs/energy.md "Sweeps"): the CSV results file (also
 * what a resumed sweep reads back and what MPI ranks send rank 0, so one
 * row format), the JSON report, the SVG scatter with the Pareto front, and
 * the text summary. */
#ifndef ENPU_SWEEP_REPORT_H
#define ENPU_SWEEP_REPORT_H

#include <stdio.h>

#include "easynpu/sweep.h"
#include "isa/isa_internal.h"

/* What the reports need besides the results. */
typedef struct enpu_sweep_info {
    const enpu_sweep_space *space;
    const char *const *models;   /* names, n_models */
    int n_models;
    const char *id;              /* the sweep id (8 hex digits) */
    bool simulate;
} enpu_sweep_info;

/* The CSV header line (with '\n'). */
void enpu_sweep_csv_header(enpu_sb *b, const enpu_sweep_info *in);
/* One result as a CSV line (with '\n'); nothing for a pending one.  Numbers
 * in their shortest exact form, so a row read back prints the same. */
void enpu_sweep_csv_row(enpu_sb *b, const enpu_sweep_info *in, const enpu_point_result *r);

/* Reads CSV rows (text without the header, n bytes) into results: each row
 * must belong to this sweep (its id, a point of the space with the values
 * of that point, one of the models); `slot(ctx, point, model)` gives the
 * result to fill (NULL: not a point of this sweep).  `what` names the
 * source in errors (ENPU_E_FORMAT naming the line). */
typedef enpu_point_result *(*enpu_sweep_slot_fn)(void *ctx, uint64_t point, int model);
int enpu_sweep_csv_read(const enpu_sweep_info *in, const char *text, size_t n, const char *what,
                        enpu_sweep_slot_fn slot, void *ctx, uint64_t *rows_read, enpu_err *err);

/* The whole results file: header and the rows of results[0..n) that are
 * not pending, in that order.  malloc'd; NULL when out of memory. */
char *enpu_sweep_csv_text(const enpu_sweep_info *in, const enpu_point_result *results, uint64_t n);

/* The JSON report: the sweep (id, mode, base arch, parameters, sample,
 * models), counts by status, every result, and the Pareto front (from
 * configs, n_results / n_models of them).  malloc'd. */
char *enpu_sweep_json_text(const enpu_sweep_info *in, const enpu_point_result *results,
                           uint64_t n_results, const enpu_sweep_config *configs);

/* The SVG scatter: energy against latency and area against latency of
 * every configuration that fits, the Pareto front highlighted.  malloc'd. */
char *enpu_sweep_svg_text(const enpu_sweep_info *in, const enpu_sweep_config *configs,
                          uint64_t n_configs);

/* Counts by status, and the front as a table (at most `max_rows` rows, by
 * latency). */
void enpu_sweep_print_summary(FILE *f, const enpu_sweep_info *in, const enpu_point_result *results,
                              uint64_t n_results, const enpu_sweep_config *configs, int max_rows);

#endif
