/* The co-simulation hook (include/easynpu/cosim.h, docs/rtl.md) without the
 * RTL: on the default model on preset systolic, the hook sees every cycle
 * the simulator runs, every unit at the cycle it is issued (entering the
 * array L cycles later), and what it reads agrees with the engine's rules:
 * an accumulator that finished sits in its row's MUX register the cycle
 * after, the words counted as written in a cycle are those whose
 * write-cycle entry says so, and attaching changes no result.  On preset
 * easynpu: the hook sees a chain's cycles one after the other, and every
 * issue of the PE array is the one enpu_cosim_enpu_next read from the
 * state after the cycle before (its psum entry; a weighted pass with a word
 * in the weight pad).  On preset eyeriss (row-stationary): the hook sees
 * each pass's cycles one after the other, the PEs the pass uses, every MAC
 * once, and attaching it (the fast-forward off) changes no result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/cosim.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

/* The default model compiled for preset `preset`, and its input. */
static void default_model(const char *preset, enpu_arch *a, enpu_graph **qg, enpu_program *prog, enpu_buf *in) {
    enpu_err err = {0};
    *a = enpu_test_preset(preset);
    *qg = enpu_test_quantize("models/kws_cnn.onnx", "models/kws_cnn/calib", a);
    assert_int_equal(enpu_compile(*qg, a, NULL, prog, NULL, &err), 0);
    assert_int_equal(enpu_tensor_read("models/kws_cnn/sample_0.npy", in, &err), 0);
}

/* A simulator of the program in cycle mode with the functional check. */
static enpu_sim *cycle_sim(const enpu_program *prog, const enpu_arch *a) {
    enpu_err err = {0};
    enpu_sim_opts o = {0};
    o.mode = ENPU_SIM_CYCLE, o.check = true;
    enpu_sim *sim = NULL;
    assert_int_equal(enpu_sim_new(prog, a, &o, &sim, &err), 0);
    return sim;
}

/* Runs sim on the input; its result must be bit exact. */
static void run_checked(enpu_sim *sim, const enpu_buf *in, enpu_sim_result *res) {
    enpu_err err = {0};
    if (enpu_sim_run(sim, in, 1, res, &err)) fail_msg("%s", err.msg);
    assert_true(res->bit_exact);
}

typedef struct watch {
    enpu_sim *sim;
    uint64_t calls, next_t;
    int32_t seen;
    int64_t issued, muxed, written;
    int bad;
    enpu_cosim_sya_res prev_mux[64 * 4];
    bool prev_has[64 * 4];
} watch;

static void hook(void *ctx, uint64_t t, const void *eng) {
    watch *w = ctx;
    enpu_cosim_sya_dims d;
    enpu_cosim_sya_dims_of(eng, &d);
    enpu_cosim_sya_ctl c;
    enpu_cosim_sya_ctl_of(eng, &c);
    if (t != w->next_t) w->bad++;
    w->next_t = t + 1;
    w->calls++;
    for (; w->seen < c.next_seq; w->seen++) {
        enpu_cosim_sya_job j;
        if (!enpu_cosim_sya_job_of(eng, w->seen, &j) || j.T != (int64_t)t + d.L) w->bad++;
        w->issued++;
    }
    /* the MUX registers of the last cycle are handed on in this one */
    int64_t had = 0;
    for (int m = 0; m < d.R * d.BC; m++) had += w->prev_has[m];
    if (had != c.mux_out) w->bad++;
    w->muxed += c.mux_out;
    for (int r = 0; r < d.R; r++)
        for (int bc = 0; bc < d.BC; bc++) {
            int m = r * d.BC + bc;
            w->prev_has[m] = enpu_cosim_sya_mux_at(eng, r, bc, &w->prev_mux[m]);
            if (w->prev_has[m]) {
                /* the PE that finished holds the same accumulator */
                enpu_cosim_sya_pe pe;
                enpu_cosim_sya_pe_at(eng, r, w->prev_mux[m].c, &pe);
                if (pe.acc != w->prev_mux[m].acc || !pe.a.last) w->bad++;
            }
        }
    enpu_cosim_mem mem;
    enpu_cosim_mem_of(w->sim, &mem);
    w->written += c.ofm_words;
}

static void test_hook_default_model(void **state) {
    (void)state;
    enpu_arch a;
    enpu_graph *qg;
    enpu_program prog;
    enpu_buf in;
    default_model("systolic", &a, &qg, &prog, &in);
    uint64_t cycles[2];
    for (int with = 0; with < 2; with++) {
        enpu_sim *sim = cycle_sim(&prog, &a);
        watch *w = calloc(1, sizeof *w);
        w->sim = sim;
        if (with) enpu_cosim_attach(sim, hook, w);
        enpu_sim_result res;
        run_checked(sim, &in, &res);
        cycles[with] = res.total_cycles;
        if (with) {
            /* every cycle, none skipped */
            assert_int_equal(w->calls, res.total_cycles);
            assert_int_equal(w->bad, 0);
            assert_true(w->issued > 0 && w->muxed > 0 && w->written > 0);
            fprintf(stderr, "cosim hook: %llu cycles, %lld units issued, %lld results, %lld words written\n",
                    (unsigned long long)w->calls, (long long)w->issued, (long long)w->muxed, (long long)w->written);
        }
        free(w);
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
    }
    assert_int_equal(cycles[0], cycles[1]);
    assert_int_equal(cycles[0], 8461);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_graph_free(qg);
}

typedef struct ewatch {
    uint64_t calls, issues, t0, last_t;
    bool have;
    enpu_cosim_enpu_issue nxt;
    int w_count;
    int bad;
} ewatch;

static void ehook(void *ctx, uint64_t t, const void *eng) {
    ewatch *w = ctx;
    enpu_cosim_enpu_state s;
    enpu_cosim_enpu_state_of(eng, &s);
    if (w->calls && s.chain_t0 == w->t0 && t != w->last_t + 1) w->bad++;
    if (!w->calls || s.chain_t0 != w->t0) w->have = false;
    w->calls++;
    if (s.pe_valid) {
        const enpu_cosim_enpu_issue *n = &w->nxt;
        w->issues++;
        if (!w->have || !n->valid || n->e != s.ps_addr || n->nrows < 1) w->bad++;
        /* a weighted pass reads the weight pad's head: it held a word */
        else if (n->weighted && w->w_count < 1) w->bad++;
    }
    enpu_cosim_enpu_next(eng, &w->nxt);
    w->w_count = s.w_count;
    w->have = true;
    w->t0 = s.chain_t0;
    w->last_t = t;
}

static void test_hook_easynpu(void **state) {
    (void)state;
    enpu_arch a;
    enpu_graph *qg;
    enpu_program prog;
    enpu_buf in;
    default_model("easynpu", &a, &qg, &prog, &in);
    uint64_t cycles[2];
    for (int with = 0; with < 2; with++) {
        enpu_sim *sim = cycle_sim(&prog, &a);
        ewatch *w = calloc(1, sizeof *w);
        if (with) enpu_cosim_attach(sim, ehook, w);
        enpu_sim_result res;
        run_checked(sim, &in, &res);
        cycles[with] = res.total_cycles;
        if (with) {
            assert_int_equal(w->bad, 0);
            /* the PE array issues in the compute cycles `easynpu compile` reports */
            assert_int_equal(w->issues, 244758);
            assert_true(w->calls > w->issues && w->calls < res.total_cycles);
        }
        free(w);
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
    }
    assert_int_equal(cycles[0], cycles[1]);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_graph_free(qg);
}

typedef struct rwatch {
    uint64_t calls, passes, macs, last_t;
    int bad;
} rwatch;

static void rhook(void *ctx, uint64_t t, const void *eng) {
    rwatch *w = ctx;
    enpu_cosim_rs_pass ps;
    enpu_cosim_rs_pass_of(eng, t, &ps);
    enpu_cosim_rs_dims d;
    enpu_cosim_rs_dims_of(eng, &d);
    if (!ps.active) w->bad++;
    if (ps.t0 == (int64_t)t) w->passes++;
    else if (t != w->last_t + 1) w->bad++; /* a pass's cycles, one after the other */
    w->calls++;
    for (int r = 0; r < d.rows; r++)
        for (int c = 0; c < d.cols; c++) {
            enpu_cosim_rs_pe pe;
            enpu_cosim_rs_pe_at(eng, r, c, &pe);
            w->macs += pe.last_mac == (int64_t)t;
            /* a PE outside the pass's chains and columns does nothing */
            if (pe.used != (r < ps.chain && c < ps.ncol)) w->bad++;
        }
    /* the networks carry at most their values a cycle */
    for (int net = 0; net < 2; net++) {
        enpu_cosim_rs_pkt pk[64];
        bool pass[64 * 64];
        if (enpu_cosim_rs_stage(eng, net, 0, pk, NULL) > d.nv[net]) w->bad++;
        if (enpu_cosim_rs_stage(eng, net, 1, pk, pass) > d.nv[net]) w->bad++;
    }
    w->last_t = t;
}

/* The row-stationary engine: the hook sees each pass's cycles one after the
 * other from its first, every MAC the PEs count once, and attaching it (the
 * fast-forward off) changes neither the cycles nor the outputs. */
static void test_hook_rowstat(void **state) {
    (void)state;
    enpu_arch a;
    enpu_graph *qg;
    enpu_program prog;
    enpu_buf in;
    default_model("eyeriss", &a, &qg, &prog, &in);
    uint64_t cycles[2];
    for (int with = 0; with < 2; with++) {
        enpu_sim *sim = cycle_sim(&prog, &a);
        rwatch *w = calloc(1, sizeof *w);
        if (with) enpu_cosim_attach(sim, rhook, w);
        enpu_sim_result res;
        run_checked(sim, &in, &res);
        cycles[with] = res.total_cycles;
        if (with) {
            assert_int_equal(w->bad, 0);
            assert_int_equal(w->macs, res.uops[ENPU_UOP_MAC] + res.uops[ENPU_UOP_MAC16]);
            assert_true(w->passes > 0 && w->calls < res.total_cycles);
            fprintf(stderr, "cosim hook (rowstat): %llu pass cycles, %llu passes, %llu MACs\n",
                    (unsigned long long)w->calls, (unsigned long long)w->passes, (unsigned long long)w->macs);
        }
        free(w);
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
    }
    assert_int_equal(cycles[0], cycles[1]);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_graph_free(qg);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hook_default_model),
                                       cmocka_unit_test(test_hook_easynpu),
                                       cmocka_unit_test(test_hook_rowstat)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
