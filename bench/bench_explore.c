/* Exploration speed: how long the questions of a design-space exploration
 * take, measured in one run so that the figures compare.
 *
 *  - compile: per model, the CPU milliseconds of enpu_compile with the
 *    fast tiling search (branch and bound, its own cache) and with the
 *    exhaustive one (every candidate walked in full), best of alternating
 *    runs, and the modelled cycles each chose (they must be equal);
 *  - sweep: the documented 1,080-point sweep of the default model
 *    (examples/sweep_kws.json) on one thread, schedule model and analytic
 *    counts: CPU seconds and points per second, the model quantized once
 *    per numeric widths, the compile cache shared by the points.
 *
 *   build/bench_explore [ROOT [MODELS]]   ROOT: project root (default "."),
 *                                         MODELS: the real test models
 *                                         (default $ENPU_SHARED_MODELS, else
 *                                         ROOT/../shared/models; absent ones
 *                                         are skipped)
 *  - simulate: the default model on every engine in cycle mode beside its
 *    per-cycle path (bench_sim has more models and presets).
 */
#include "bench_common.h"
#include "easynpu/file.h"
#include "easynpu/sweep.h"

/* The imported model and its calibration inputs, for the quantizer. */
typedef struct model {
    enpu_graph *g;
    enpu_buf *cal;
    int n_cal;
} model;

static int load(const char *onnx, const char *calib, model *m, enpu_err *err) {
    memset(m, 0, sizeof *m);
    if (enpu_onnx_load(onnx, &m->g, err)) return 1;
    return calib && exists(calib) && enpu_calib_load(m->g, calib, &m->cal, &m->n_cal, err);
}

static void unload(model *m) {
    enpu_calib_free(m->cal, m->n_cal * (m->g ? m->g->n_inputs : 0));
    enpu_graph_free(m->g);
}

static int quantize(const model *m, const enpu_arch *a, enpu_graph **qg, enpu_err *err) {
    enpu_quant_opts qo;
    enpu_compile_quant_opts(a, &qo);
    qo.quiet = true;
    return enpu_quantize_graph(m->g, m->cal, m->n_cal, &qo, qg, NULL, err);
}

/* Best CPU time of one compile with opts co (runs alternate with the other
 * search: see bench_compile), and the cycles it chose. */
static double compile_once(const enpu_graph *qg, const enpu_arch *a, const enpu_compile_opts *co,
                           int64_t *cycles, enpu_err *err) {
    enpu_program p;
    double t0 = cpu_s();
    int rc = enpu_compile(qg, a, co, &p, NULL, err);
    double dt = cpu_s() - t0;
    *cycles = rc ? -1 : enpu_cost_program(&p, NULL, NULL);
    enpu_program_free(&p);
    return rc ? -1 : dt;
}

static int bench_compile(const char *name, const char *onnx, const char *calib, const char *arch_name) {
    if (!exists(onnx)) {
        printf("%-22s skipped: %s is absent\n", name, onnx);
        return 0;
    }
    enpu_err err = {0};
    enpu_arch a;
    model m;
    enpu_graph *qg = NULL;
    if (enpu_arch_load(arch_name, &a, &err) || load(onnx, calib, &m, &err) || quantize(&m, &a, &qg, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    enpu_compile_opts co[2];
    enpu_compile_opts_default(&co[0]);
    enpu_compile_opts_default(&co[1]);
    co[1].search = ENPU_SEARCH_EXHAUSTIVE;
    double best[2] = {1e30, 1e30};
    int64_t cyc[2] = {0, 0};
    int rc = 0;
    /* alternate: the fast search at least 5 times and for 1 s, the
     * exhaustive one at least twice */
    double start = cpu_s();
    for (int round = 0; !rc && (round < 2 || (round < 5 && cpu_s() - start < 1.0)); round++)
        for (int s = 0; s < 2; s++) {
            int reps = s == 0 ? 5 : 1;
            for (int r = 0; r < reps; r++) {
                double dt = compile_once(qg, &a, &co[s], &cyc[s], &err);
                if (dt < 0) {
                    fprintf(stderr, "%s: %s\n", name, err.msg);
                    rc = 1;
                    break;
                }
                if (dt < best[s]) best[s] = dt;
            }
        }
    if (!rc)
        printf("%-22s %-8s %10.1f %10lld %12.1f %10lld %8.1fx %s\n", name, a.name, best[0] * 1e3,
               (long long)cyc[0], best[1] * 1e3, (long long)cyc[1], best[1] / best[0],
               cyc[0] == cyc[1] ? "equal" : "DIFFER");
    if (cyc[0] != cyc[1]) rc = 1;
    enpu_graph_free(qg);
    unload(&m);
    return rc;
}

static int sweep_quantize(void *ctx, int mi, const enpu_arch *a, enpu_graph **qg, enpu_err *err) {
    (void)mi;
    return quantize(ctx, a, qg, err);
}

static int bench_sweep(const char *root) {
    char onnx[1200], calib[1200], space_path[1200];
    snprintf(onnx, sizeof onnx, "%s/models/kws_cnn.onnx", root);
    snprintf(calib, sizeof calib, "%s/models/kws_cnn/calib", root);
    snprintf(space_path, sizeof space_path, "%s/examples/sweep_kws.json", root);
    enpu_err err = {0};
    enpu_arch base;
    model m;
    uint8_t *text = NULL;
    size_t n = 0;
    enpu_sweep_space *space = calloc(1, sizeof *space);
    if (!space || enpu_arch_load("easynpu", &base, &err) || load(onnx, calib, &m, &err) ||
        enpu_file_read(space_path, (size_t)1 << 20, &text, &n, &err)) {
        fprintf(stderr, "sweep: %s\n", err.msg);
        free(space);
        return 1;
    }
    enpu_sweep_space_init(space, &base);
    int rc = enpu_sweep_space_from_json(space, (const char *)text, n, space_path, &err);
    free(text);
    enpu_sweep_model sm = {"kws_cnn", NULL, 0};
    enpu_sweep_opts so = {0};
    so.threads = 1;
    so.quantize = sweep_quantize;
    so.quantize_ctx = &m;
    enpu_sweeper *w = NULL;
    uint64_t np = space->n_points;
    uint64_t *pts = malloc(np * sizeof *pts);
    enpu_point_result *out = calloc(np, sizeof *out);
    if (!rc && (!pts || !out)) rc = enpu_fail(&err, ENPU_E_NOMEM, "out of memory");
    if (!rc) rc = enpu_sweeper_new(space, &sm, 1, &so, &w, &err);
    double t0 = cpu_s();
    for (uint64_t k = 0; !rc && k < np; k++) pts[k] = enpu_sweep_point_index(space, k);
    if (!rc) rc = enpu_sweep_eval(w, pts, np, out, &err);
    double dt = cpu_s() - t0;
    uint64_t ok = 0;
    for (uint64_t k = 0; !rc && k < np; k++) ok += out[k].status == ENPU_PT_OK;
    if (rc) fprintf(stderr, "sweep: %s\n", err.msg);
    else
        printf("examples/sweep_kws.json: %llu points (%llu fit) in %.2f s of CPU on one thread: %.0f points/s\n",
               (unsigned long long)np, (unsigned long long)ok, dt, (double)np / dt);
    enpu_sweeper_free(w);
    free(pts);
    free(out);
    enpu_sweep_space_free(space);
    free(space);
    unload(&m);
    return rc;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    char shared[1024];
    if (argc > 2) snprintf(shared, sizeof shared, "%s", argv[2]);
    else if (getenv("ENPU_SHARED_MODELS")) snprintf(shared, sizeof shared, "%s", getenv("ENPU_SHARED_MODELS"));
    else snprintf(shared, sizeof shared, "%s/../shared/models", root);
    static const struct {
        const char *name, *onnx, *calib, *arch;
        int in_repo;
    } models[] = {
        {"kws_cnn (default)", "models/kws_cnn.onnx", "models/kws_cnn/calib", "easynpu", 1},
        {"mbv3 (imported)", "models/import/mbv3.onnx", "models/import/mbv3/calib", "easynpu", 1},
        {"det320 (off-chip)", "models/offchip/det320.onnx", "models/offchip/det320/calib", "easynpu", 1},
        {"mlperf-vww-float", "mlperf-vww-float/model.onnx", NULL, "easynpu", 0},
    };
    printf("compile time (CPU ms of enpu_compile, best of alternating runs) and the cycles chosen\n");
    printf("%-22s %-8s %10s %10s %12s %10s %9s\n", "model", "arch", "fast ms", "cycles", "exhaust. ms",
           "cycles", "speed-up");
    int rc = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *base = models[i].in_repo ? root : shared;
        char p[2][1200];
        snprintf(p[0], sizeof p[0], "%s/%s", base, models[i].onnx);
        snprintf(p[1], sizeof p[1], "%s/%s", base, models[i].calib ? models[i].calib : "-");
        rc |= bench_compile(models[i].name, p[0], models[i].calib ? p[1] : NULL, models[i].arch);
    }
    rc |= bench_sweep(root);
    printf("\nsimulator speed, the default model on every engine (CPU time of enpu_sim_run only, best of "
           "alternating runs; PE-cycles: cycles x the engine's MAC units)\n");
    bench_engine_header();
    static const char *const engines[] = {"easynpu", "systolic", "rowstat"};
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        char p[3][1200];
        snprintf(p[0], sizeof p[0], "%s/models/kws_cnn.onnx", root);
        snprintf(p[1], sizeof p[1], "%s/models/kws_cnn/calib", root);
        snprintf(p[2], sizeof p[2], "%s/models/kws_cnn/sample_0.npy", root);
        rc |= bench_engine("kws_cnn", p[0], p[1], p[2], engines[i], 8);
    }
    printf("speed-up: host time of the per-cycle path over this mode's, same run\n");
    return rc;
}
