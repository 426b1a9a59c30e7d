/* Simulator speed: simulated MACs per second and simulated cycles per
 * second of wall time, in both modes, on the default model
 * (models/kws_cnn.onnx, arch easynpu) and on mlperf-vww-float (arch large,
 * from ../shared/models when present).  Each model is imported, quantized
 * on its calibration inputs and compiled; the simulation alone is timed
 * (best of several runs).  Run from the project root:
 *
 *   build/bench_sim [ROOT]        ROOT: project root (default ".")
 *
 * Functional mode has no time of its own: its "cycles/s" is the cycle-mode
 * cycle count of the same run divided by the functional wall time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static int bench(const char *name, const char *onnx, const char *calib, const char *input,
                 const char *arch_name) {
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
    enpu_quant_opts_for_arch(&qo, &arch);
    qo.quiet = true;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &err) ||
        enpu_compile(qg, &arch, NULL, &prog, NULL, &err) || enpu_tensor_read(input, &in, &err) ||
        enpu_buf_to_f32(&in, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    uint64_t cycles = 0, macs = 0;
    for (int mode = 0; mode < 2 && !rc; mode++) {
        enpu_sim_opts o = {0};
        o.mode = mode ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        enpu_sim *sim = NULL;
        if (enpu_sim_new(&prog, &arch, &o, &sim, &err)) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            rc = 1;
            break;
        }
        double best = 1e30;
        int runs = 0;
        double start = now_s();
        while (runs < 3 || (now_s() - start < 1.0 && runs < 50)) {
            enpu_sim_result res;
            double t0 = now_s();
            if (enpu_sim_run(sim, &in, 1, &res, &err)) {
                fprintf(stderr, "%s: %s\n", name, err.msg);
                rc = 1;
                break;
            }
            double dt = now_s() - t0;
            if (dt < best) best = dt;
            if (mode == 0) cycles = res.total_cycles;
            macs = res.total_macs;
            enpu_sim_result_free(&res);
            runs++;
        }
        if (!rc)
            printf("%-18s %-7s %-10s %12.1f M simulated MACs/s %12.2f M simulated cycles/s  "
                   "(%llu cycles, %llu MACs, %.2f ms per inference, best of %d)\n",
                   name, arch.name, enpu_sim_mode_name(o.mode), (double)macs / best / 1e6,
                   (double)cycles / best / 1e6, (unsigned long long)cycles,
                   (unsigned long long)macs, best * 1e3, runs);
        enpu_sim_free(sim);
    }
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    return rc;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    char a[4][1024], b[4][1024];
    snprintf(a[0], sizeof a[0], "%s/models/kws_cnn.onnx", root);
    snprintf(a[1], sizeof a[1], "%s/models/kws_cnn/calib", root);
    snprintf(a[2], sizeof a[2], "%s/models/kws_cnn/sample_0.npy", root);
    snprintf(b[0], sizeof b[0], "%s/../shared/models/mlperf-vww-float/model.onnx", root);
    snprintf(b[1], sizeof b[1], "%s/../shared/models/mlperf-vww-float/test_data_set_0", root);
    snprintf(b[2], sizeof b[2], "%s/../shared/models/mlperf-vww-float/test_data_set_1/input_0.pb", root);
    printf("easynpu simulator speed (wall time of enpu_sim_run only)\n");
    int rc = bench("kws_cnn (default)", a[0], a[1], a[2], "easynpu");
    rc |= bench("mlperf-vww-float", b[0], b[1], b[2], "large");
    return rc;
}
