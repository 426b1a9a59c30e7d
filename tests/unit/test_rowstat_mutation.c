/* The row-stationary cost model's equality check catches a wrong
 * simulator (docs/rowstat.md "Timing"): with a fault planted in the engine
 * (rs_fault, a white-box switch nothing but a test sets) -- one count too
 * many of one unit or datapath operation in one instruction, or one DRAM burst of an instruction
 * one cycle late -- enpu_rs_model_diff, which enpu_test_assert_cost_exact,
 * the random layers and the graph fuzzer use, must report a difference
 * naming that instruction and that unit (for the late burst, the activity
 * whose cycles moved).  Without a fault it reports none, on both paths of
 * the cycle engine. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "sim/rowstat/rs_sim.h"
#include "sim/sim_internal.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel

static enpu_program prog;
static enpu_buf input;
static int target; /* the instruction the faults hit: the second rs_conv */

static int setup(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_arch a = enpu_test_preset("rowstat");
    enpu_graph *qg = enpu_test_quantize(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &a);
    if (enpu_compile(qg, &a, NULL, &prog, NULL, &err) ||
        enpu_tensor_read(REPO("models/kws_cnn/sample_0.npy"), &input, &err) || enpu_buf_to_f32(&input, &err))
        fail_msg("%s", err.msg);
    enpu_graph_free(qg);
    target = -1;
    for (int i = 0, n = 0; i < prog.n_instr && target < 0; i++)
        if (prog.instr[i].opcode == ENPU_OPC_RS_CONV && n++ == 1) target = i;
    assert_true(target > 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    enpu_program_free(&prog);
    enpu_buf_free(&input);
    return 0;
}

/* Runs the program in cycle mode with fault f; returns the number of
 * figures enpu_rs_model_diff finds different, its message in msg. */
static int run_diff(const rs_fault *f, bool per_cycle, char *msg, size_t n) {
    enpu_err err = {0};
    enpu_sim_opts o = {0};
    o.mode = ENPU_SIM_CYCLE;
    o.per_cycle = per_cycle;
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    if (enpu_sim_new(&prog, &prog.arch, &o, &sim, &err)) fail_msg("%s", err.msg);
    ((rs_eng *)sim->es)->fault = *f;
    if (enpu_sim_run(sim, &input, 1, &res, &err)) fail_msg("%s", err.msg);
    int d = enpu_rs_model_diff(&prog, res.layers, res.total_cycles, msg, n);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    return d;
}

static void has(const char *msg, const char *s) {
    if (!strstr(msg, s)) fail_msg("no '%s' in the check's message: %s", s, msg);
}

static void test_no_fault(void **state) {
    (void)state;
    char msg[512];
    rs_fault none = {0};
    for (int pc = 0; pc < 2; pc++)
        if (run_diff(&none, pc, msg, sizeof msg)) fail_msg("%s", msg);
}

/* One more read, write or operation of every unit the engine counts: the
 * check names the instruction, the unit and both figures. */
static void test_miscounts(void **state) {
    (void)state;
    char msg[512], inst[64], what[64];
    snprintf(inst, sizeof inst, "instruction %d '", target);
    int n = 0;
    for (int m = 0; m < ENPU_MEM_COUNT; m++) {
        if (!enpu_memory_of_engine((enpu_memory)m, ENPU_ENGINE_ROWSTAT)) continue;
        for (int w = 0; w < 2; w++) {
            rs_fault f = {w ? RS_FAULT_WRITE : RS_FAULT_READ, target, m, 0};
            /* the fast-forward and the per-cycle path count alike, faults too */
            int d = run_diff(&f, m == ENPU_MEM_PSUM_LINK, msg, sizeof msg);
            if (d != 1) fail_msg("%s %s + 1: %d figures differ (%s)", enpu_memory_name((enpu_memory)m),
                                 w ? "writes" : "reads", d, msg);
            snprintf(what, sizeof what, "%s %s: simulated ", enpu_memory_name((enpu_memory)m),
                     w ? "writes" : "reads");
            has(msg, inst);
            has(msg, what);
            n++;
        }
    }
    static const int ops[] = {ENPU_UOP_MAC, ENPU_UOP_REQUANT, ENPU_UOP_MAC16, ENPU_UOP_ALU};
    for (int k = 0; k < 4; k++) {
        rs_fault f = {RS_FAULT_UOP, target, ops[k], 0};
        assert_int_equal(run_diff(&f, false, msg, sizeof msg), 1);
        snprintf(what, sizeof what, "%s: simulated ", enpu_unit_op_name((enpu_unit_op)ops[k]));
        has(msg, inst);
        has(msg, what);
        n++;
    }
    assert_int_equal(n, 2 * 10 + 4); /* itcm, psum, dram and the 7 row-stationary units; 4 operations */
}

/* A DRAM burst one cycle late: the first burst of the target instruction
 * (its input strip's first load, which its first pass waits for) moves the
 * instruction's cycles by one, named by the activity that took it. */
static void test_late_burst(void **state) {
    (void)state;
    char msg[512], inst[64];
    snprintf(inst, sizeof inst, "instruction %d '", target);
    for (int pc = 0; pc < 2; pc++) {
        rs_fault f = {RS_FAULT_DRAM_LATE, target, 0, 0};
        int d = run_diff(&f, pc, msg, sizeof msg);
        if (d < 1) fail_msg("a late burst went unnoticed");
        has(msg, inst);
        has(msg, "dma_wait: simulated ");
    }
    /* a burst of another instruction moves that one */
    int first = -1;
    for (int i = 0; i < prog.n_instr && first < 0; i++)
        if (prog.instr[i].opcode == ENPU_OPC_RS_CONV) first = i;
    rs_fault f = {RS_FAULT_DRAM_LATE, first, 0, 0};
    assert_true(run_diff(&f, false, msg, sizeof msg) >= 1);
    char want[64];
    snprintf(want, sizeof want, "instruction %d '", first);
    has(msg, want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_fault),
        cmocka_unit_test(test_miscounts),
        cmocka_unit_test(test_late_burst),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
