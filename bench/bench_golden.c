/* Speed of the bit-exact int8 path: per-inference wall time of the golden
 * reference's fast kernels (the best instruction set of this CPU, and the
 * portable C ones), its reference loops (the slow path), the functional
 * simulator, and the float32 reference, on the default model
 * (models/kws_cnn.onnx, quantized on its calibration inputs for arch
 * easynpu), single thread; and, where /usr/bin/python3 has torch (and onnx),
 * PyTorch on the same network with the same weights (bench/torch_kws.py):
 * float32 and int8 (post-training static quantization, FX graph mode, each
 * quantized engine torch has), single thread.  All in one run, with ratios.
 * Run from the project root:
 *
 *   build/bench_golden [ROOT] [--no-torch]
 *
 * Each figure is the best (smallest) mean time per inference over several
 * rounds of back-to-back inferences, the rounds of the variants interleaved,
 * so that other work on the machine inflates no variant more than another.
 * Every variant's int8 output is checked equal to the reference loops'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "easynpu/compiler.h"
#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

#define ROUNDS 7
#define ROUND_SECONDS 0.15

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef enum { V_FAST, V_PORTABLE, V_REFERENCE, V_FUNCTIONAL, V_FLOAT, V_COUNT } variant;
static const char *const vname[V_COUNT] = {
    "golden, fast kernels", "golden, fast kernels, portable C", "golden, reference loops (slow path)",
    "functional simulator", "float32 reference (easynpu)"};

typedef struct bench_ctx {
    enpu_gexec *gx[3];
    enpu_sim *sim;
    enpu_fexec *fx;
    const enpu_buf *in;
    enpu_err err;
} bench_ctx;

static int run_once(bench_ctx *b, variant v) {
    switch (v) {
    case V_FAST:
    case V_PORTABLE:
    case V_REFERENCE: return enpu_gexec_run(b->gx[v], b->in, &b->err);
    case V_FUNCTIONAL: {
        enpu_sim_result res;
        int rc = enpu_sim_run(b->sim, b->in, 1, &res, &b->err);
        enpu_sim_result_free(&res);
        return rc;
    }
    case V_FLOAT: return enpu_fexec_run(b->fx, b->in, &b->err);
    default: return -1;
    }
}

/* Mean seconds per inference of one round of about ROUND_SECONDS. */
static int round_time(bench_ctx *b, variant v, double *out) {
    int n = 0;
    double t0 = now_s(), t;
    do {
        if (run_once(b, v)) return -1;
        n++;
        t = now_s() - t0;
    } while (t < ROUND_SECONDS);
    *out = t / n;
    return 0;
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* PyTorch's figures from bench/torch_kws.py: lines "fp32 MS" and
 * "int8 ENGINE MS"; returns how many int8 engines were read. */
static int torch_figures(const char *root, double *fp32, char engines[][32], double *int8,
                         int max) {
    if (!exists("/usr/bin/python3")) {
        printf("PyTorch: skipped (no /usr/bin/python3)\n");
        return -1;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/bench/torch_kws.py %s/models/kws_cnn.onnx %s/models/kws_cnn/calib "
             "%s/models/kws_cnn/sample_0.npy %d %g 2>/dev/null",
             root, root, root, root, ROUNDS, ROUND_SECONDS);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[256];
    int n = 0;
    *fp32 = 0;
    while (fgets(line, sizeof line, p)) {
        char eng[32];
        double ms;
        if (sscanf(line, "fp32 %lf", &ms) == 1) *fp32 = ms;
        else if (n < max && sscanf(line, "int8 %31s %lf", eng, &ms) == 2) {
            snprintf(engines[n], 32, "%s", eng);
            int8[n++] = ms;
        } else if (strncmp(line, "skip", 4) == 0) {
            printf("PyTorch: %s", line);
        }
    }
    pclose(p);
    return *fp32 > 0 ? n : -1;
}

int main(int argc, char **argv) {
    const char *root = ".";
    int use_torch = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-torch") == 0) use_torch = 0;
        else root = argv[i];
    }
    char onnx[1024], calib[1024], input[1024];
    snprintf(onnx, sizeof onnx, "%s/models/kws_cnn.onnx", root);
    snprintf(calib, sizeof calib, "%s/models/kws_cnn/calib", root);
    snprintf(input, sizeof input, "%s/models/kws_cnn/sample_0.npy", root);
    bench_ctx b;
    memset(&b, 0, sizeof b);
    enpu_arch arch;
    enpu_graph *g = NULL, *qg = NULL;
    enpu_buf *cal = NULL, in;
    int n_cal = 0;
    enpu_program prog;
    memset(&prog, 0, sizeof prog);
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.quiet = true;
    if (enpu_arch_load("easynpu", &arch, &b.err) || enpu_onnx_load(onnx, &g, &b.err) ||
        enpu_calib_load(g, calib, &cal, &n_cal, &b.err) || enpu_tensor_read(input, &in, &b.err) ||
        enpu_buf_to_f32(&in, &b.err)) {
        fprintf(stderr, "bench_golden: %s\n", b.err.msg);
        return 1;
    }
    qo.mult_bits = (int)arch.mult_bits;
    qo.acc_bits = (int)arch.acc_bits;
    qo.act_segments = (int)arch.act_segments;
    enpu_sim_opts so = {0};
    so.mode = ENPU_SIM_FUNCTIONAL;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &b.err) ||
        enpu_compile(qg, &arch, NULL, &prog, NULL, &b.err) ||
        enpu_sim_new(&prog, &arch, &so, &b.sim, &b.err) || enpu_fexec_new(g, &b.fx, &b.err)) {
        fprintf(stderr, "bench_golden: %s\n", b.err.msg);
        return 1;
    }
    const enpu_gexec_kernels kk[3] = {ENPU_GK_FAST, ENPU_GK_PORTABLE, ENPU_GK_REFERENCE};
    for (int k = 0; k < 3; k++)
        if (enpu_gexec_new(qg, &b.gx[k], &b.err) || enpu_gexec_set_kernels(b.gx[k], kk[k], &b.err)) {
            fprintf(stderr, "bench_golden: %s\n", b.err.msg);
            return 1;
        }
    b.in = &in;
    /* MACs of the int8 network (BatchNormalization folded, as PyTorch's int8 has it) */
    int64_t macs = 0;
    for (int i = 0; i < qg->n_nodes; i++) macs += enpu_node_macs(qg, &qg->nodes[i]);

    /* the three golden variants must agree on every element of the output */
    for (int k = 0; k < 3; k++)
        if (run_once(&b, (variant)k)) {
            fprintf(stderr, "bench_golden: %s\n", b.err.msg);
            return 1;
        }
    int out_t = qg->outputs[0];
    int64_t n_out = enpu_tensor_numel(&qg->tensors[out_t]);
    for (int k = 0; k < 2; k++)
        if (memcmp(enpu_gexec_value_i8(b.gx[k], out_t), enpu_gexec_value_i8(b.gx[2], out_t),
                   (size_t)n_out) != 0) {
            fprintf(stderr, "bench_golden: %s kernels differ from the reference loops\n",
                    enpu_gexec_kernels_name(b.gx[k]));
            return 1;
        }

    double best[V_COUNT];
    for (int v = 0; v < V_COUNT; v++) best[v] = 1e30;
    for (int r = 0; r < ROUNDS; r++)
        for (int v = 0; v < V_COUNT; v++) {
            double t;
            if (round_time(&b, (variant)v, &t)) {
                fprintf(stderr, "bench_golden: %s\n", b.err.msg);
                return 1;
            }
            if (t < best[v]) best[v] = t;
        }
    double tf = 0, ti8[4];
    char eng[4][32];
    int n_eng = use_torch ? torch_figures(root, &tf, eng, ti8, 4) : -1;

    printf("default model %s: %lld MACs, int8 for arch %s, one input, single thread\n", onnx,
           (long long)macs, arch.name);
    printf("fast kernels: %s\n\n", enpu_gexec_kernels_name(b.gx[0]));
    printf("%-40s %12s %10s %12s\n", "", "ms/inference", "G MAC/s", "vs fast");
    for (int v = 0; v < V_COUNT; v++)
        printf("%-40s %12.4f %10.2f %11.2fx\n", vname[v], best[v] * 1e3, (double)macs / best[v] / 1e9,
               best[v] / best[V_FAST]);
    if (n_eng >= 0) {
        printf("%-40s %12.4f %10.2f %11.2fx\n", "PyTorch float32", tf, (double)macs / (tf * 1e-3) / 1e9,
               tf * 1e-3 / best[V_FAST]);
        for (int e = 0; e < n_eng; e++) {
            char label[64];
            snprintf(label, sizeof label, "PyTorch int8 (%s)", eng[e]);
            printf("%-40s %12.4f %10.2f %11.2fx\n", label, ti8[e],
                   (double)macs / (ti8[e] * 1e-3) / 1e9, ti8[e] * 1e-3 / best[V_FAST]);
        }
    } else if (use_torch) {
        printf("PyTorch: not measured (/usr/bin/python3 without torch and onnx)\n");
    }
    printf("\n(\"vs fast\": time / the fast kernels' time; above 1 is slower than the fast kernels)\n");
    printf("speed-up of the fast kernels over the reference loops: %.1fx\n",
           best[V_REFERENCE] / best[V_FAST]);

    for (int k = 0; k < 3; k++) enpu_gexec_free(b.gx[k]);
    enpu_sim_free(b.sim);
    enpu_fexec_free(b.fx);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    return 0;
}
