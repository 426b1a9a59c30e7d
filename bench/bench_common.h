/* What the benchmarks share: CPU time, file presence, and one simulator
 * speed row set (bench_engine: a model on an engine in cycle mode, its
 * per-cycle path and functional mode, alternated in one run).  A header of
 * static functions: each bench/ program is one executable. */
#ifndef ENPU_BENCH_COMMON_H
#define ENPU_BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

enum { V_FAST, V_PER_CYCLE, V_FUNCTIONAL, N_VARIANT };
static const char *const variant_name[N_VARIANT] = {"cycle", "cycle --per-cycle", "functional"};

/* One model on arch_name: a row per mode (cycle, its per-cycle path,
 * functional), printed under bench_engine_header's columns. */
static int bench_engine(const char *name, const char *onnx, const char *calib, const char *input,
                 const char *arch_name, int bits) {
    if (!exists(onnx)) {
        printf("%-18s skipped: %s is absent\n", name, onnx);
        return 0;
    }
    enpu_err err = {0};
    enpu_arch arch;
    enpu_graph *g = NULL, *qg = NULL;
    enpu_buf *cal = NULL, in;
    int n_cal = 0, rc = 0;
    enpu_program prog;
    memset(&prog, 0, sizeof prog);
    if (enpu_arch_load(arch_name, &arch, &err) || enpu_onnx_load(onnx, &g, &err) ||
        enpu_calib_load(g, calib, &cal, &n_cal, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    enpu_quant_opts qo;
    enpu_compile_quant_opts(&arch, &qo); /* the engine's host kinds and widths */
    qo.bits = bits;
    qo.quiet = true;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &err) ||
        enpu_compile(qg, &arch, NULL, &prog, NULL, &err) || enpu_tensor_read(input, &in, &err) ||
        enpu_buf_to_f32(&in, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    enpu_sim *sim[N_VARIANT] = {NULL};
    double best[N_VARIANT];
    uint64_t cycles = 0, macs = 0;
    for (int v = 0; v < N_VARIANT && !rc; v++) {
        enpu_sim_opts o = {0};
        o.mode = v == V_FUNCTIONAL ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        o.per_cycle = v == V_PER_CYCLE;
        best[v] = 1e30;
        if (enpu_sim_new(&prog, &arch, &o, &sim[v], &err)) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            rc = 1;
        }
    }
    /* rounds of one run of each variant, until each has had 3 runs and 2 s
     * of CPU have passed (at most 50 rounds) */
    double start = cpu_s();
    for (int round = 0; !rc && (round < 3 || (cpu_s() - start < 2.0 && round < 50)); round++)
        for (int v = 0; v < N_VARIANT && !rc; v++) {
            enpu_sim_result res;
            double t0 = cpu_s();
            if (enpu_sim_run(sim[v], &in, 1, &res, &err)) {
                fprintf(stderr, "%s (%s): %s\n", name, variant_name[v], err.msg);
                rc = 1;
                break;
            }
            double dt = cpu_s() - t0;
            if (dt < best[v]) best[v] = dt;
            if (v == V_FAST) cycles = res.total_cycles, macs = res.total_macs;
            if (v == V_PER_CYCLE && res.total_cycles != cycles) {
                fprintf(stderr, "%s: %llu cycles per cycle, %llu fast-forwarded\n", name,
                        (unsigned long long)res.total_cycles, (unsigned long long)cycles);
                rc = 1;
            }
            enpu_sim_result_free(&res);
        }
    double units = (double)enpu_arch_mac_units(&arch);
    char an[ENPU_ARCH_NAME_MAX + 8];
    snprintf(an, sizeof an, "%s%s", arch.name, bits == 16 ? " int16" : "");
    for (int v = 0; v < N_VARIANT && !rc; v++) {
        if (v == V_FUNCTIONAL) {
            printf("%-18s %-14s %-8s %-18s %9.3f %12s %14s %9s   %.1f G MAC/s of the model\n", name, an,
                   enpu_engine_name(arch.engine), variant_name[v], best[v] * 1e3, "-", "-", "-",
                   (double)macs / best[v] / 1e9);
            continue;
        }
        char up[32];
        snprintf(up, sizeof up, "%.1fx", best[V_PER_CYCLE] / best[v]);
        printf("%-18s %-14s %-8s %-18s %9.3f %12.2f %14.1f %9s\n", name, an, enpu_engine_name(arch.engine),
               variant_name[v], best[v] * 1e3, (double)cycles / best[v] / 1e6,
               (double)cycles * units / best[v] / 1e6, up);
    }
    for (int v = 0; v < N_VARIANT; v++) enpu_sim_free(sim[v]);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    return rc;
}

static void bench_engine_header(void) {
    printf("%-18s %-14s %-8s %-18s %9s %12s %14s %9s\n", "model", "arch", "engine", "mode",
           "ms/inf", "M cycles/s", "M PE-cycles/s", "speed-up");
}

#endif
