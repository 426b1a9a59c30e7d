/* The row-stationary engine's access counts and estimate without
 * simulating (docs/energy.md "Counting without simulating"): the cost
 * model of src/compiler/rowstat/cost.c predicts every count the simulator
 * makes, instruction by instruction (docs/rowstat.md "Statistics"; the
 * tests hold the two equal: enpu_rs_model_diff), so the energy of a
 * compiled program is the model's counts times the costs -- what `easynpu
 * sweep` evaluates for a rowstat point.  EasyNPU's counts are access.c's. */
#include "energy/access_engines.h"

#include <stdio.h>
#include <stdlib.h>

#include "easynpu/compiler.h"
#include "easynpu/isa.h"

int enpu_rs_access_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err) {
    enpu_layer_stats *m = calloc((size_t)(p->n_instr > 0 ? p->n_instr : 1), sizeof *m);
    if (!m || enpu_rs_model_stats(p, m) < 0) {
        free(m);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory counting accesses");
    }
    /* the DRAM words are the schedule model's (enpu_access_counts' contract) */
    for (int i = 0; i < p->n_instr; i++) {
        for (int k = 0; k < ENPU_MEM_COUNT; k++) {
            if (k == ENPU_MEM_OFFCHIP) continue;
            rows[i].reads[k] += m[i].reads[k];
            rows[i].writes[k] += m[i].writes[k];
        }
        for (int o = 0; o < ENPU_UOP_COUNT; o++) rows[i].uops[o] += m[i].uops[o];
    }
    free(m);
    return 0;
}

void enpu_energy_finish_rows(const enpu_program *p, enpu_layer_stats *rows, enpu_layer_stats *total) {
    const uint64_t units = (uint64_t)enpu_arch_mac_units(&p->arch);
    for (int i = 0; i < p->n_instr; i++) {
        /* the fields the simulator's driver gives every row (no fused
         * chains on these engines: each instruction is its own head) */
        enpu_layer_stats *r = &rows[i];
        const enpu_layer_info *li = &p->layers[i];
        const char *mn = enpu_opcode_mnemonic(p->instr[i].opcode);
        snprintf(r->name, sizeof r->name, "%s", li->name ? li->name : "");
        snprintf(r->op, sizeof r->op, "%s", mn ? mn : "?");
        r->instr = r->chain_head = i;
        r->group = li->group;
        r->n_instr = 1;
        r->host = p->instr[i].opcode == ENPU_OPC_SYNC;
        r->macs = r->host ? 0 : (uint64_t)li->macs;
        r->ideal_cycles = (r->macs + units - 1) / units;
    }
    enpu_energy_total_of(rows, p->n_instr, units, total);
}

int enpu_rs_estimate_program(const enpu_program *p, enpu_layer_stats **rows_out, enpu_layer_stats *total,
                             enpu_err *err) {
    *rows_out = NULL;
    enpu_layer_stats *rows = calloc((size_t)(p->n_instr > 0 ? p->n_instr : 1), sizeof *rows);
    if (!rows || enpu_rs_model_stats(p, rows) < 0) {
        free(rows);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory estimating the program");
    }
    enpu_energy_finish_rows(p, rows, total);
    *rows_out = rows;
    return 0;
}
