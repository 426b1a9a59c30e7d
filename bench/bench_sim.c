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
#include "bench_common.h"

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
    bench_engine_header();
    int rc = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *base = models[i].in_repo ? root : shared;
        char p[3][1200];
        snprintf(p[0], sizeof p[0], "%s/%s", base, models[i].onnx);
        snprintf(p[1], sizeof p[1], "%s/%s", base, models[i].calib);
        snprintf(p[2], sizeof p[2], "%s/%s", base, models[i].input);
        rc |= bench_engine(models[i].name, p[0], p[1], p[2], models[i].arch, models[i].bits);
    }
    printf("speed-up: host time of the per-cycle path over this mode's, same run\n");
    return rc;
}
