/* The row-stationary fast-forward's refusals (docs/rowstat.md
 * "Fast-forward"): a pass whose schedule shows an error -- an input FIFO or
 * filter loop buffer overflowing, the output network falling behind a PE
 * column -- runs per cycle, which stops the run in the same cycle with the
 * same message as the per-cycle path does.  The validator refuses programs
 * that would do this, so the engine is made smaller under a valid program
 * (white-box: the PEs' buffers, the output network's width). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "sim/rowstat/rs_sim.h"
#include "testutil.h"

/* A 3x3 convolution of one channel into 12 over a 20x16 input, for arch
 * rowstat: every PE's window is 3 values, so its 24 columns produce a psum
 * each every few cycles. */
static void program(enpu_program *p, enpu_buf *in) { enpu_test_conv_program("rowstat", 1, 12, 20, 16, 3, 1, p, in); }

enum { NARROW_PSUM_NET, SHALLOW_FIFO, SHALLOW_FILTER_LB, UNCHANGED };

typedef struct outcome {
    int rc;
    char msg[ENPU_ERR_MSG_MAX];
    uint64_t cycles, ff;
} outcome;

/* A run of p with the engine made smaller as `how` says (to `n` FIFO or
 * filter entries, or psums a cycle). */
static void run(const enpu_program *p, const enpu_buf *in, bool per_cycle, int how, int64_t n, outcome *o) {
    enpu_err err = {0};
    enpu_sim_opts opt = {0};
    opt.per_cycle = per_cycle;
    enpu_sim *sim = NULL;
    assert_int_equal(enpu_sim_new(p, &p->arch, &opt, &sim, &err), 0);
    rs_eng *e = sim->es;
    for (int64_t i = 0; i < sim->arch.rs_rows * sim->arch.rs_cols; i++) {
        if (how == SHALLOW_FIFO) e->pe[i].fifo_cap = n;
        if (how == SHALLOW_FILTER_LB) e->pe[i].flb_cap = n;
    }
    if (how == NARROW_PSUM_NET) sim->arch.rs_psum_net_values = n; /* e->a is &sim->arch */
    enpu_sim_result res;
    o->rc = enpu_sim_run(sim, in, 1, &res, &err);
    snprintf(o->msg, sizeof o->msg, "%s", o->rc ? err.msg : "");
    o->cycles = res.total_cycles;
    o->ff = sim->ff_cycles;
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
}

static void test_refusals(void **state) {
    (void)state;
    enpu_program p;
    enpu_buf in;
    program(&p, &in);
    static const char *const want[] = {"the output network fell behind", "input FIFO or filter loop buffer overflow",
                                       "input FIFO or filter loop buffer overflow", ""};
    for (int how = 0; how <= UNCHANGED; how++) {
        outcome x, y;
        run(&p, &in, true, how, how == NARROW_PSUM_NET ? 1 : 2, &x);
        run(&p, &in, false, how, how == NARROW_PSUM_NET ? 1 : 2, &y);
        fprintf(stderr, "case %d: per-cycle '%s', fast-forward '%s' (%llu cycles fast-forwarded)\n", how, x.msg,
                y.msg, (unsigned long long)y.ff);
        assert_int_equal(x.rc, y.rc);
        assert_string_equal(x.msg, y.msg);
        assert_non_null(strstr(x.msg, want[how]));
        assert_int_equal(x.ff, 0);
        if (how == UNCHANGED) {
            assert_int_equal(x.rc, 0);
            assert_int_equal(x.cycles, y.cycles);
            assert_true(y.ff > 0);
        } else {
            assert_int_equal(x.rc, ENPU_E_INVALID);
            assert_int_equal(y.ff, 0); /* the failing pass is the first: it ran per cycle */
        }
    }
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

/* Every depth of the FIFO and filter loop buffer up to the program's need,
 * every width of the output network up to the array's columns: the same
 * run both ways, whether it fails or not (the checks' boundaries); both
 * outcomes occur. */
static void test_boundaries(void **state) {
    (void)state;
    enpu_program p;
    enpu_buf in;
    program(&p, &in);
    for (int how = NARROW_PSUM_NET; how <= SHALLOW_FILTER_LB; how++) {
        int ran = 0, failed = 0;
        const int64_t top = how == NARROW_PSUM_NET ? p.arch.rs_cols : how == SHALLOW_FIFO ? 24 : 40;
        for (int64_t n = 1; n <= top; n++) {
            outcome x, y;
            run(&p, &in, true, how, n, &x);
            run(&p, &in, false, how, n, &y);
            if (x.rc != y.rc || strcmp(x.msg, y.msg) || x.cycles != y.cycles)
                fail_msg("case %d, %lld: per-cycle %d '%s' %llu cycles, fast-forward %d '%s' %llu cycles", how,
                         (long long)n, x.rc, x.msg, (unsigned long long)x.cycles, y.rc, y.msg,
                         (unsigned long long)y.cycles);
            if (x.rc) failed++;
            else ran++, assert_true(y.ff > 0);
        }
        fprintf(stderr, "case %d: %d runs failed, %d ran, the same both ways\n", how, failed, ran);
        assert_true(failed > 0 && ran > 0);
    }
    enpu_buf_free(&in);
    enpu_program_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_boundaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
