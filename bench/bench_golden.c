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
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* The clock of the first CPU as /proc/cpuinfo says it (MHz), 0 if it does not. */
static double cpu_mhz(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[256];
    double mhz = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "cpu MHz : %lf", &mhz) == 1 || sscanf(line, "cpu MHz\t: %lf", &mhz) == 1) break;
    fclose(f);
    return mhz;
}

/* The golden's kernel sets first (the fastest this CPU has is the yardstick). */
typedef enum { V_VNNI, V_AVX2, V_PORTABLE, V_REFERENCE, V_FUNCTIONAL, V_FLOAT, V_COUNT } variant;
#define N_GOLDEN 4
static const enpu_gexec_kernels vkern[N_GOLDEN] = {ENPU_GK_VNNI256, ENPU_GK_AVX2,
                                                   ENPU_GK_PORTABLE, ENPU_GK_REFERENCE};
static const char *const vname[V_COUNT] = {
    "golden, fast kernels, vnni256", "golden, fast kernels, AVX2",
    "golden, fast kernels, portable C", "golden, reference loops (slow path)",
    "functional simulator", "float32 reference (easynpu)"};

typedef struct bench_ctx {
    enpu_gexec *gx[N_GOLDEN]; /* NULL: kernels this CPU lacks */
    enpu_sim *sim;
    enpu_fexec *fx;
    const enpu_buf *in;
    enpu_err err;
} bench_ctx;

static int run_once(bench_ctx *b, variant v) {
    switch (v) {
    case V_VNNI:
    case V_AVX2:
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

/* PyTorch, as a co-process (bench/torch_kws.py): one round of each of its
 * versions per request, interleaved with ours. */
#define TORCH_MAX 8
typedef struct torch_proc {
    pid_t pid;
    FILE *to, *from;
    int n;
    char label[TORCH_MAX][48];
    double best_ms[TORCH_MAX];
} torch_proc;

static void torch_stop(torch_proc *t) {
    if (t->to) fclose(t->to);
    if (t->from) fclose(t->from);
    if (t->pid > 0) waitpid(t->pid, NULL, 0);
    t->to = t->from = NULL;
    t->pid = 0;
}

/* 0 when PyTorch is ready; -1 (said why) otherwise. */
static int torch_start(const char *root, torch_proc *t) {
    memset(t, 0, sizeof *t);
    if (!exists("/usr/bin/python3")) {
        printf("PyTorch: not measured (no /usr/bin/python3)\n");
        return -1;
    }
    char script[1024], onnx[1024], calib[1024], sample[1024], secs[32];
    snprintf(script, sizeof script, "%s/bench/torch_kws.py", root);
    snprintf(onnx, sizeof onnx, "%s/models/kws_cnn.onnx", root);
    snprintf(calib, sizeof calib, "%s/models/kws_cnn/calib", root);
    snprintf(sample, sizeof sample, "%s/models/kws_cnn/sample_0.npy", root);
    snprintf(secs, sizeof secs, "%g", ROUND_SECONDS);
    int in[2], out[2];
    if (pipe(in) || pipe(out)) return -1;
    fflush(stdout);
    t->pid = fork();
    if (t->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) dup2(nul, 2);
        close(in[1]);
        close(out[0]);
        execl("/usr/bin/python3", "python3", script, onnx, calib, sample, secs, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (t->pid < 0) {
        close(in[1]);
        close(out[0]);
        return -1;
    }
    t->to = fdopen(in[1], "w");
    t->from = fdopen(out[0], "r");
    char line[256];
    while (t->from && fgets(line, sizeof line, t->from)) {
        if (strncmp(line, "ready", 5) == 0) return 0;
        if (strncmp(line, "skip", 4) == 0) printf("PyTorch: %s", line);
    }
    printf("PyTorch: not measured (/usr/bin/python3 without torch and onnx)\n");
    torch_stop(t);
    return -1;
}

/* One round of every PyTorch version; keeps the best per version. */
static int torch_round(torch_proc *t) {
    char line[256];
    fprintf(t->to, "round\n");
    fflush(t->to);
    while (fgets(line, sizeof line, t->from)) {
        if (strncmp(line, "end", 3) == 0) return 0;
        char *sp = strrchr(line, ' ');
        if (!sp) continue;
        double ms = atof(sp + 1);
        *sp = 0;
        int k = 0;
        while (k < t->n && strcmp(t->label[k], line) != 0) k++;
        if (k == t->n) {
            if (t->n == TORCH_MAX) continue;
            snprintf(t->label[t->n], sizeof t->label[0], "%.47s", line);
            t->best_ms[t->n++] = 1e30;
        }
        if (ms > 0 && ms < t->best_ms[k]) t->best_ms[k] = ms;
    }
    return -1;
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
    int fast = -1; /* the fastest set this CPU has */
    for (int k = 0; k < N_GOLDEN; k++) {
        if (enpu_gexec_new(qg, &b.gx[k], &b.err)) {
            fprintf(stderr, "bench_golden: %s\n", b.err.msg);
            return 1;
        }
        int rc = enpu_gexec_set_kernels(b.gx[k], vkern[k], &b.err);
        if (rc == ENPU_E_UNSUPPORTED) {
            enpu_gexec_free(b.gx[k]);
            b.gx[k] = NULL;
            continue;
        }
        if (rc) {
            fprintf(stderr, "bench_golden: %s\n", b.err.msg);
            return 1;
        }
        if (fast < 0) fast = k;
    }
    b.in = &in;
    /* MACs of the int8 network (BatchNormalization folded, as PyTorch's int8 has it) */
    int64_t macs = 0;
    for (int i = 0; i < qg->n_nodes; i++) macs += enpu_node_macs(qg, &qg->nodes[i]);

    /* every kernel set must give the reference loops' output, element by element */
    int out_t = qg->outputs[0];
    int64_t n_out = enpu_tensor_numel(&qg->tensors[out_t]);
    for (int k = 0; k < N_GOLDEN; k++)
        if (b.gx[k] && run_once(&b, (variant)k)) {
            fprintf(stderr, "bench_golden: %s\n", b.err.msg);
            return 1;
        }
    for (int k = 0; k < N_GOLDEN - 1; k++)
        if (b.gx[k] && memcmp(enpu_gexec_value_i8(b.gx[k], out_t),
                              enpu_gexec_value_i8(b.gx[V_REFERENCE], out_t), (size_t)n_out) != 0) {
            fprintf(stderr, "bench_golden: %s kernels differ from the reference loops\n",
                    enpu_gexec_kernels_name(b.gx[k]));
            return 1;
        }

    torch_proc tp;
    bool torch = use_torch && torch_start(root, &tp) == 0;
    double best[V_COUNT];
    for (int v = 0; v < V_COUNT; v++) best[v] = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        for (int v = 0; v < V_COUNT; v++) {
            double t;
            if (v < N_GOLDEN && !b.gx[v]) continue;
            if (round_time(&b, (variant)v, &t)) {
                fprintf(stderr, "bench_golden: %s\n", b.err.msg);
                return 1;
            }
            if (t < best[v]) best[v] = t;
        }
        if (torch && torch_round(&tp)) {
            printf("PyTorch: its process stopped; not measured\n");
            torch_stop(&tp);
            torch = false;
        }
    }
    if (torch) torch_stop(&tp);

    printf("default model %s: %lld MACs, int8 for arch %s, one input, single thread, best of %d "
           "interleaved rounds of %g s\n",
           onnx, (long long)macs, arch.name, ROUNDS, ROUND_SECONDS);
    printf("fast kernels: %s (the fastest this CPU has: the yardstick)\n\n",
           enpu_gexec_kernels_name(b.gx[fast]));
    /* the core's peak for a kernel set: its MACs per instruction (16 int16
     * products in 256 bits: vpmaddwd for AVX2, vpdpwssd for vnni256) times
     * two such instructions a cycle (two vector multiply ports, as on
     * Skylake and Zen) times the clock /proc/cpuinfo reports */
    double mhz = cpu_mhz();
    printf("core peak (16 int16 MACs an instruction, 2 instructions a cycle, %.0f MHz): %.1f G MAC/s for "
           "avx2 and vnni256\n\n", mhz, 32.0 * mhz / 1e3);
    printf("%-40s %12s %10s %8s %12s\n", "", "ms/inference", "G MAC/s", "of peak", "vs fast");
    for (int v = 0; v < V_COUNT; v++) {
        if (v < N_GOLDEN && !b.gx[v]) {
            printf("%-40s %12s\n", vname[v], "(not on this CPU)");
            continue;
        }
        double gmacs = (double)macs / best[v] / 1e9;
        char pk[16] = "";
        if ((v == V_VNNI || v == V_AVX2) && mhz > 0) snprintf(pk, sizeof pk, "%.1f%%", 100 * gmacs / (32.0 * mhz / 1e3));
        printf("%-40s %12.4f %10.2f %8s %11.2fx\n", vname[v], best[v] * 1e3, gmacs, pk, best[v] / best[fast]);
    }
    for (int k = 0; torch && k < tp.n; k++) {
        char label[64];
        snprintf(label, sizeof label, "PyTorch %s", tp.label[k]);
        double s_inf = tp.best_ms[k] * 1e-3;
        printf("%-40s %12.4f %10.2f %11.2fx\n", label, tp.best_ms[k], (double)macs / s_inf / 1e9,
               s_inf / best[fast]);
    }
    printf("\n(\"vs fast\": time / the fast kernels' time; above 1 is slower than the fast kernels)\n");
    printf("speed-up of the fast kernels over the reference loops: %.1fx\n",
           best[V_REFERENCE] / best[fast]);

    for (int k = 0; k < N_GOLDEN; k++) enpu_gexec_free(b.gx[k]);
    enpu_sim_free(b.sim);
    enpu_fexec_free(b.fx);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
    return 0;
}
