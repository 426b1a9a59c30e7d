/* The analytic access counts (energy.h enpu_estimate_program) against a
 * cycle simulation of the same program, exactly (docs/energy.md "Counting
 * without simulating"): per instruction the PE array's counts (ifmap and
 * weight pads read, psum, datapath operations) and the ITCM's, per fused
 * chain every memory's reads and writes, the totals, and so the energy bit
 * for bit; with `cycles`, also the schedule model's cycles and activities
 * per instruction.  Fails the cmocka test naming the first difference
 * (include after testutil.h). */
#ifndef ENPU_TEST_ENERGY_CHECK_H
#define ENPU_TEST_ENERGY_CHECK_H

#include <stdbool.h>
#include <stdio.h>

#include "easynpu/energy.h"
#include "easynpu/isa.h"
#include "easynpu/sim.h"

/* Compares the counts of the simulator (sim) and the estimate (est) of one
 * program; prints the first difference and fails. */
static inline void enpu_check_counts(const char *name, const enpu_program *prog,
                                     const enpu_sim_result *sim, const enpu_layer_stats *est,
                                     const enpu_layer_stats *tot, bool cycles) {
    int n = prog->n_instr;
    assert_int_equal(sim->n_layers, n);
    char what[256] = "";
    for (int i = 0; i < n && !what[0]; i++) {
        const enpu_layer_stats *s = &sim->layers[i], *e = &est[i];
        if (cycles && s->cycles != e->cycles) snprintf(what, sizeof what, "instr %d cycles", i);
        for (int a = 0; cycles && a < ENPU_ACT_COUNT && !what[0]; a++)
            if (s->activity[a] != e->activity[a])
                snprintf(what, sizeof what, "instr %d activity %s", i, enpu_activity_name(a));
        for (int o = 0; o < ENPU_UOP_COUNT && !what[0]; o++)
            if (s->uops[o] != e->uops[o])
                snprintf(what, sizeof what, "instr %d %s: sim %llu, analytic %llu", i,
                         enpu_unit_op_name(o), (unsigned long long)s->uops[o],
                         (unsigned long long)e->uops[o]);
        static const int pe_side[] = {ENPU_MEM_IFMAP_PAD, ENPU_MEM_PSUM, ENPU_MEM_ITCM};
        for (int k = 0; k < 3 && !what[0]; k++) {
            int m = pe_side[k];
            if (s->reads[m] != e->reads[m] || (m == ENPU_MEM_PSUM && s->writes[m] != e->writes[m]))
                snprintf(what, sizeof what, "instr %d %s: sim %llu/%llu, analytic %llu/%llu", i,
                         enpu_memory_name(m), (unsigned long long)s->reads[m],
                         (unsigned long long)s->writes[m], (unsigned long long)e->reads[m],
                         (unsigned long long)e->writes[m]);
        }
        if (s->reads[ENPU_MEM_WEIGHT_PAD] != e->reads[ENPU_MEM_WEIGHT_PAD])
            snprintf(what, sizeof what, "instr %d weight_pad reads", i);
    }
    /* per chain: everything */
    for (int i = 0; i < n && !what[0];) {
        int k = i + 1;
        while (k < n && sim->layers[k].chain_head == i && i != k) k++;
        if (!(enpu_opcode_class(prog->instr[i].opcode) == ENPU_CLASS_CONV ||
              enpu_opcode_class(prog->instr[i].opcode) == ENPU_CLASS_CW ||
              enpu_opcode_class(prog->instr[i].opcode) == ENPU_CLASS_MOVE))
            k = i + 1;
        uint64_t sr[ENPU_MEM_COUNT] = {0}, sw[ENPU_MEM_COUNT] = {0}, er[ENPU_MEM_COUNT] = {0},
                 ew[ENPU_MEM_COUNT] = {0};
        for (int j = i; j < k; j++)
            for (int m = 0; m < ENPU_MEM_COUNT; m++) {
                sr[m] += sim->layers[j].reads[m], sw[m] += sim->layers[j].writes[m];
                er[m] += est[j].reads[m], ew[m] += est[j].writes[m];
            }
        for (int m = 0; m < ENPU_MEM_COUNT && !what[0]; m++)
            if (sr[m] != er[m] || sw[m] != ew[m])
                snprintf(what, sizeof what, "chain at %d (%s) %s: sim %llu/%llu, analytic %llu/%llu",
                         i, sim->layers[i].name, enpu_memory_name(m), (unsigned long long)sr[m],
                         (unsigned long long)sw[m], (unsigned long long)er[m],
                         (unsigned long long)ew[m]);
        i = k;
    }
    for (int m = 0; m < ENPU_MEM_COUNT && !what[0]; m++)
        if (sim->reads[m] != tot->reads[m] || sim->writes[m] != tot->writes[m])
            snprintf(what, sizeof what, "total %s", enpu_memory_name(m));
    if (cycles && !what[0] && sim->total_cycles != tot->cycles) snprintf(what, sizeof what, "total cycles");
    if (what[0]) fail_msg("%s: %s", name, what);
    /* the same counts give the same energy, bit for bit */
    enpu_energy_costs c;
    enpu_energy_costs_of(&prog->arch, &c);
    enpu_energy es, ee;
    enpu_energy_of(&c, sim->reads, sim->writes, sim->uops, &es);
    enpu_energy_of(&c, tot->reads, tot->writes, tot->uops, &ee);
    assert_memory_equal(&es, &ee, sizeof es);
    assert_true(es.total_pj > 0);
    if (cycles)
        fprintf(stderr, "%s on %s: %llu cycles, %.1f nJ, counts equal the simulator's\n", name,
                prog->arch.name, (unsigned long long)tot->cycles, es.total_pj / 1000.0);
}

#endif
