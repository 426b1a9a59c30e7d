/* The systolic engine's counts and timing without simulating
 * (docs/energy.md "Counting without simulating"): its cost model
 * (enpu_sya_model_program: the controller's timing rules unit by unit,
 * every count in closed form per instruction, docs/systolic.md
 * "Statistics") gives each instruction's cycles, activities, reads, writes
 * and operations, equal to the simulator's (tests/models/test_sya_energy.c
 * and every end-to-end run of tests/testutil.c hold it to that); this file
 * puts them into enpu_layer_stats rows as the simulator does. */
#include <stdlib.h>

#include "easynpu/compiler.h"
#include "energy/access_engines.h"

/* The model's figures of p: act, rd, wr, uops (n_instr rows each, malloc'd
 * into *buf); the total cycles, -1 when out of memory. */
static int64_t model(const enpu_program *p, int64_t **buf, int64_t **act, int64_t **rd, int64_t **wr,
                     int64_t **uops) {
    const size_t n = (size_t)(p->n_instr > 0 ? p->n_instr : 1);
    *buf = calloc(n * (ENPU_ACT_COUNT + 2 * ENPU_MEM_COUNT + ENPU_UOP_COUNT), sizeof **buf);
    if (!*buf) return -1;
    *act = *buf, *rd = *act + n * ENPU_ACT_COUNT, *wr = *rd + n * ENPU_MEM_COUNT, *uops = *wr + n * ENPU_MEM_COUNT;
    return enpu_sya_model_program(p, *act, *rd, *wr, *uops);
}

/* Adds instruction i's counts to row r. */
static void add_counts(enpu_layer_stats *r, size_t i, const int64_t *rd, const int64_t *wr, const int64_t *uops) {
    for (int m = 0; m < ENPU_MEM_COUNT; m++) {
        r->reads[m] += (uint64_t)rd[i * ENPU_MEM_COUNT + (size_t)m];
        r->writes[m] += (uint64_t)wr[i * ENPU_MEM_COUNT + (size_t)m];
    }
    for (int o = 0; o < ENPU_UOP_COUNT; o++) r->uops[o] += (uint64_t)uops[i * ENPU_UOP_COUNT + (size_t)o];
}

int enpu_energy_sya_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err) {
    int64_t *buf = NULL, *act = NULL, *rd = NULL, *wr = NULL, *uops = NULL;
    int rc = 0;
    if (model(p, &buf, &act, &rd, &wr, &uops) < 0) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory counting accesses");
    for (int i = 0; !rc && i < p->n_instr; i++) add_counts(&rows[i], (size_t)i, rd, wr, uops);
    free(buf);
    return rc;
}

int enpu_energy_sya_estimate(const enpu_program *p, enpu_layer_stats **rows_out, enpu_layer_stats *total,
                             enpu_err *err) {
    const int n = p->n_instr;
    *rows_out = NULL;
    int64_t *buf = NULL, *act = NULL, *rd = NULL, *wr = NULL, *uops = NULL;
    enpu_layer_stats *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    if (!rows || model(p, &buf, &act, &rd, &wr, &uops) < 0) {
        free(rows), free(buf);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory estimating the program");
    }
    for (int i = 0; i < n; i++) {
        enpu_layer_stats *r = &rows[i];
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            r->activity[k] = (uint64_t)act[(size_t)i * ENPU_ACT_COUNT + (size_t)k];
            r->cycles += r->activity[k];
        }
        add_counts(r, (size_t)i, rd, wr, uops);
    }
    enpu_energy_finish_rows(p, rows, total);
    free(buf);
    *rows_out = rows;
    return 0;
}
