/* Simulator speed: per model, engine and mode, the host time of one
 * inference, simulated cycles and PE-cycles (cycles x the engine's MAC
 * units, enpu_arch_mac_units) per host second, and the speed-up of cycle
 * mode (each engine fast-forwards what it can prove: docs/microarch.md §15,
 * docs/systolic.md and docs/rowstat.md "Fast-forward") over its per-cycle
 * path (opts.per_cycle: every unit stepped in every cycle), measured in the
 * same run: the two are run alternately, so a change of the machine's load
 * hits both alike.  Times are CPU time of the process
 * (CLOCK_PROCESS_CPUTIME_ID) of enpu_sim_run alone, the best of several
 * runs; the model is imported, quantized and compiled before.
 *
 *   build/bench_sim [ROOT [MODELS]]   ROOT: project root (default "."),
 *                                     MODELS: the real test models
 *                                     (default $ENPU_SHARED_MODELS, else
 *                                     ROOT/../shared/models; absent ones
 *                                     are skipped)
 *
 * Functional mode simulates no time: its row gives its host time and the
 * model's MACs per host second, not a cycle rate. */
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

static int bench(const char *name, const char *onnx, const char *calib, const char *input,
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

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    char shared[1024];
    if (argc > 2) snprintf(shared, sizeof shared, "%s", argv[2]);
    else if (getenv("ENPU_SHARED_MODELS")) snprintf(shared, sizeof shared, "%s", getenv("ENPU_SHARED_MODELS"));
    else snprintf(shared, sizeof shared, "%s/../shared/models", root);
    static const struct {
        const char *name, *onnx, *calib, *input, *arch;
        int in_repo, bits;
    } models[] = {
        {"kws_cnn (default)", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy", "easynpu", 1, 8},
        {"kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy", "systolic", 1, 8},
        {"kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy", "systolic-1x4", 1, 8},
        {"kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy", "rowstat", 1, 8},
        {"kws_cnn", "models/kws_cnn.onnx", "models/kws_cnn/calib", "models/kws_cnn/sample_0.npy", "eyeriss", 1, 16},
        {"mlp1m (off-chip)", "models/offchip/mlp1m.onnx", "models/offchip/mlp1m/calib",
         "models/offchip/mlp1m/sample_0.npy", "easynpu", 1, 8},
        {"det320 (off-chip)", "models/offchip/det320.onnx", "models/offchip/det320/calib",
         "models/offchip/det320/sample_0.npy", "easynpu", 1, 8},
        {"mnist-8", "mnist-8/model.onnx", "mnist-8/test_data_set_0", "mnist-8/test_data_set_1/input_0.pb",
         "easynpu", 0, 8},
        {"alibaba-kws", "alibaba-kws/model.onnx", "alibaba-kws/test_data_set_0",
         "alibaba-kws/test_data_set_0/input_0.pb", "easynpu", 0, 8},
        {"mlperf-vww-float", "mlperf-vww-float/model.onnx", "mlperf-vww-float/test_data_set_0",
         "mlperf-vww-float/test_data_set_1/input_0.pb", "large", 0, 8},
        {"mlperf-vww-float", "mlperf-vww-float/model.onnx", "mlperf-vww-float/test_data_set_0",
         "mlperf-vww-float/test_data_set_1/input_0.pb", "systolic", 0, 8},
    };
    printf("easynpu simulator speed (CPU time of enpu_sim_run only, best of alternating runs; PE-cycles: "
           "cycles x the engine's MAC units)\n");
    printf("%-18s %-14s %-8s %-18s %9s %12s %14s %9s\n", "model", "arch", "engine", "mode",
           "ms/inf", "M cycles/s", "M PE-cycles/s", "speed-up");
    int rc = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *base = models[i].in_repo ? root : shared;
        char p[3][1200];
        snprintf(p[0], sizeof p[0], "%s/%s", base, models[i].onnx);
        snprintf(p[1], sizeof p[1], "%s/%s", base, models[i].calib);
        snprintf(p[2], sizeof p[2], "%s/%s", base, models[i].input);
        rc |= bench(models[i].name, p[0], p[1], p[2], models[i].arch, models[i].bits);
    }
    printf("speed-up: host time of the per-cycle path over this mode's, same run\n");
    return rc;
}
