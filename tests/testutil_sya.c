/* The systolic engine's cost model against its simulator, figure by figure
 * (testutil.h enpu_test_sya_cost_diff; docs/systolic.md "Statistics"). */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

/* The systolic engine's: its model covers every instruction, its cycles,
 * activities and every count (reads and writes of every memory, datapath
 * operations), and the total. */
int enpu_test_sya_cost_diff(const char *what, const enpu_program *p, const enpu_sim_result *res,
                            char *first, size_t first_n) {
    size_t n = (size_t)p->n_instr;
    int64_t *act = calloc(n * ENPU_ACT_COUNT + 1, sizeof *act);
    int64_t *rd = calloc(n * ENPU_MEM_COUNT + 1, sizeof *rd), *wr = calloc(n * ENPU_MEM_COUNT + 1, sizeof *wr);
    int64_t *op = calloc(n * ENPU_UOP_COUNT + 1, sizeof *op);
    assert_true(act && rd && wr && op);
    int64_t total = enpu_sya_model_program(p, act, rd, wr, op);
    int bad = 0;
    char line[512];
    if (first && first_n) first[0] = 0;
/* one differing figure: printed, the first one kept */
#define DIFF(...)                                                                         \
    do {                                                                                  \
        snprintf(line, sizeof line, __VA_ARGS__);                                         \
        if (!bad++) fprintf(stderr, "%s: the systolic cost model is not the simulator:\n", what); \
        fprintf(stderr, "  %s\n", line);                                                  \
        if (bad == 1 && first && first_n) snprintf(first, first_n, "%s", line);           \
    } while (0)
    for (size_t i = 0; i < n && (size_t)res->n_layers == n; i++) {
        const enpu_layer_stats *l = &res->layers[i];
        int64_t cyc = 0;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) cyc += act[i * ENPU_ACT_COUNT + (size_t)k];
        if ((uint64_t)cyc != l->cycles)
            DIFF("instr %zu '%s' (%s) cycles: simulated %llu, modelled %lld", i, l->name, l->op,
                 (unsigned long long)l->cycles, (long long)cyc);
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            int64_t m = act[i * ENPU_ACT_COUNT + (size_t)k];
            if ((uint64_t)m != l->activity[k])
                DIFF("instr %zu '%s' (%s) activity %s: simulated %llu, modelled %lld", i, l->name, l->op,
                     enpu_activity_name((enpu_activity)k), (unsigned long long)l->activity[k], (long long)m);
        }
        for (int k = 0; k < ENPU_MEM_COUNT; k++) {
            int64_t mr = rd[i * ENPU_MEM_COUNT + (size_t)k], mw = wr[i * ENPU_MEM_COUNT + (size_t)k];
            if ((uint64_t)mr != l->reads[k])
                DIFF("instr %zu '%s' (%s) %s reads: simulated %llu, modelled %lld", i, l->name, l->op,
                     enpu_memory_name((enpu_memory)k), (unsigned long long)l->reads[k], (long long)mr);
            if ((uint64_t)mw != l->writes[k])
                DIFF("instr %zu '%s' (%s) %s writes: simulated %llu, modelled %lld", i, l->name, l->op,
                     enpu_memory_name((enpu_memory)k), (unsigned long long)l->writes[k], (long long)mw);
        }
        for (int k = 0; k < ENPU_UOP_COUNT; k++) {
            int64_t m = op[i * ENPU_UOP_COUNT + (size_t)k];
            if ((uint64_t)m != l->uops[k])
                DIFF("instr %zu '%s' (%s) %s operations: simulated %llu, modelled %lld", i, l->name, l->op,
                     enpu_unit_op_name((enpu_unit_op)k), (unsigned long long)l->uops[k], (long long)m);
        }
    }
    if ((size_t)res->n_layers != n) DIFF("%d simulated rows for %zu instructions", res->n_layers, n);
    if (res->total_cycles != (uint64_t)total)
        DIFF("total: simulated %llu cycles, modelled %lld", (unsigned long long)res->total_cycles, (long long)total);
#undef DIFF
    free(act), free(rd), free(wr), free(op);
    return bad;
}
