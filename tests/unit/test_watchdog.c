/* The simulator's progress watchdog (docs/hardening.md "The simulator's
 * watchdog"): a planted one-line bug that leaves the engine waiting for
 * something that never comes -- a fast-forward stretch one cycle too long
 * (EasyNPU, systolic), a multicast ID that ignores the stride
 * (row-stationary) -- stops the run with ENPU_E_INTERNAL within the
 * program's bound, in well under a second, with a message naming the
 * engine, the cycle, the instruction (index and layer) and the units still
 * busy.  Without the watchdog each ran on to max_cycles (2^40: hours).
 * The faults are planted through sim_fault_hook, which nothing but tests
 * sets.  Without a fault the same runs finish with the figures the other
 * tests assert. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "easynpu/compiler.h"
#include "sim/easynpu/core.h"
#include "sim/rowstat/rs_sim.h"
#include "sim/engine.h"
#include "sim/systolic/sya.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel

static int planted; /* 1: plant the fault of the run's engine */
/* a cycle hook that plants the fault instead (EasyNPU's per-cycle path) */
static void (*hook)(void *ctx, uint64_t t, const void *signals);

/* easynpu: the cycle engine's state starts with its core (cycle.c) */
static void plant(enpu_sim *sim) {
    if (!planted) return;
    if (sim->eng->engine == ENPU_ENGINE_EASYNPU && hook) sim->cycle_hook = hook, sim->hook_ctx = sim;
    if (sim->eng->engine == ENPU_ENGINE_SYSTOLIC) ((sya_engine *)sim->es)->fault_long = true;
    if (sim->eng->engine == ENPU_ENGINE_ROWSTAT) {
        rs_eng *e = sim->es;
        e->fault.kind = RS_FAULT_MCAST_STRIDE;
        e->fault.instr = 0;
    }
}

typedef struct outcome {
    int rc;
    char msg[ENPU_ERR_MSG_MAX];
    uint64_t cycles;
    double seconds;
} outcome;

static void run(const enpu_program *p, const enpu_buf *in, bool per_cycle, bool fault, outcome *o) {
    enpu_err err = {0};
    enpu_sim_opts opt = {0};
    opt.mode = ENPU_SIM_CYCLE;
    opt.per_cycle = per_cycle;
    enpu_sim *sim = NULL;
    planted = fault;
    sim_fault_hook = plant;
    if (enpu_sim_new(p, &p->arch, &opt, &sim, &err)) fail_msg("%s", err.msg);
    enpu_sim_result res = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    o->rc = enpu_sim_run(sim, in, 1, &res, &err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    o->seconds = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    snprintf(o->msg, sizeof o->msg, "%s", o->rc ? err.msg : "");
    o->cycles = o->rc ? 0 : res.total_cycles;
    enpu_sim_result_free(&res); /* filled in part on an error too */
    enpu_sim_free(sim);
    sim_fault_hook = NULL;
    fprintf(stderr, "%s%s: rc %d in %.3f s: %s\n", fault ? "fault" : "clean", per_cycle ? " (per cycle)" : "", o->rc,
            o->seconds, o->rc ? o->msg : "ok");
}

/* The default model compiled for preset `arch`, and its sample input. */
static void kws(const char *arch, enpu_program *p, enpu_buf *in) {
    enpu_err err = {0};
    enpu_arch a = enpu_test_preset(arch);
    enpu_graph *qg = enpu_test_quantize(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &a);
    if (enpu_compile(qg, &a, NULL, p, NULL, &err) ||
        enpu_tensor_read(REPO("models/kws_cnn/sample_0.npy"), in, &err) || enpu_buf_to_f32(in, &err))
        fail_msg("%s", err.msg);
    enpu_graph_free(qg);
}

/* A 1x1 convolution of 4 channels into 8 with stride 2 over a 12x12 input
 * for arch rowstat: a PE's ifmap row is row j*2 of its strip, and the rows
 * between are never sent -- ignore the stride and half the PEs wait for one. */
static void strided(enpu_program *p, enpu_buf *in) { enpu_test_conv_program("rowstat", 4, 8, 12, 12, 1, 2, p, in); }

static void has(const char *msg, const char *s) {
    if (!strstr(msg, s)) fail_msg("no '%s' in: %s", s, msg);
}

/* The planted fault's run stops with `want` (the whole message) in well
 * under a second; the run without it finishes in `cycles`. */
static void check(const enpu_program *p, const enpu_buf *in, bool per_cycle, const char *want, uint64_t cycles) {
    outcome o;
    run(p, in, per_cycle, true, &o);
    assert_int_equal(o.rc, ENPU_E_INTERNAL);
    has(o.msg, "simulator internal error: the ");
    has(o.msg, " at cycle ");
    has(o.msg, ", in instruction ");
    has(o.msg, "; still busy: ");
    assert_string_equal(o.msg, want);
    assert_true(o.seconds < 2.0);
    run(p, in, per_cycle, false, &o);
    assert_int_equal(o.rc, 0);
    assert_int_equal(o.cycles, cycles);
}

/* EasyNPU: the fast-forward planted one cycle long loses track of its
 * last cycle; the per-cycle path (cycle hook) with a write that never
 * becomes ready, its chain never drains.  The hook makes the run per cycle. */
static void stuck_write(void *ctx, uint64_t t, const void *signals) {
    (void)signals;
    core *k = ((enpu_sim *)ctx)->es;
    wqueue *w = &k->wq[0];
    if (t >= 5000 && w->count > 0) w->e[w->head].ready = UINT64_MAX;
}

static void test_easynpu_stuck_write(void **state) {
    (void)state;
    enpu_program p;
    enpu_buf in;
    kws("easynpu", &p, &in);
    hook = stuck_write;
    check(&p, &in, true,
          "simulator internal error: the easynpu engine made no progress for 9047 cycles (the program's longest "
          "legal wait: 9046) at cycle 14219, in instruction 8 (layer '/features/features.0/Conv'); still busy: "
          "PE array, weight reader, main write queue, fetch unit (a bug in src/sim)",
          245819);
    hook = NULL;
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

static void test_systolic_ff_long(void **state) {
    (void)state;
    enpu_program p;
    enpu_buf in;
    kws("systolic", &p, &in);
    check(&p, &in, false,
          "simulator internal error: the systolic engine made no progress for 2899 cycles (the program's longest "
          "legal wait: 2898) at cycle 8184, in instruction 0 (layer '/features/features.0/Conv'); still busy: "
          "controller (wait), array (34 units in flight) (a bug in src/sim)",
          8461);
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

static void test_rowstat_mcast_stride(void **state) {
    (void)state;
    enpu_program p;
    enpu_buf in;
    strided(&p, &in);
    check(&p, &in, true,
          "simulator internal error: the rowstat engine made no progress for 2367 cycles (the program's longest "
          "legal wait: 2366) at cycle 2568, in instruction 0 (layer 'conv'); still busy: DMA engine (command 4 "
          "of 12), PE array (pass 0), output network (48 psums left) (a bug in src/sim)",
          444);
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_easynpu_stuck_write),
        cmocka_unit_test(test_systolic_ff_long),
        cmocka_unit_test(test_rowstat_mcast_stride),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
