/* easynpu eval: what int8 costs on a data set.  Quantizes the model (or
 * loads a .qjson), runs every input set through the float reference and the
 * golden int8 reference (bit-exact with the NPU) on all cores, and reports
 * accuracy against labels, float/int8 agreement, the SQNR distribution and
 * per layer, and the cycles of one inference on the simulator. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bind.h"
#include "cli/cli.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "easynpu/compiler.h"
#include "easynpu/eval.h"
#include "easynpu/file.h"
#include "easynpu/sim.h"

static const char *HELP =
    "usage: easynpu eval MODEL.onnx|MODEL.qjson --data SPEC [--labels FILE[,FILE...]]\n"
    "                    [--arch A] [--calib SPEC] [--limit N] [--threads N] [--worst N]\n"
    "                    [--kernels K] [--no-cycles] [--json FILE]\n"
    "                    [--quiet] [--bind NAME=FILE...] [--input-shape NAME=D0xD1x...]\n"
    "                    [--min-top1 PCT] [--min-agreement PCT] [--min-sqnr DB]\n"
    "\n"
    "What int8 costs, on a data set.  The model is quantized for the architecture\n"
    "(on --calib inputs; an .onnx without them uses the quantizer's synthetic\n"
    "fallback, with a warning) or loaded as it is (.qjson); every input set of the\n"
    "data set then runs through the float32 reference and the golden int8\n"
    "reference (bit-exact with the NPU), in parallel on all cores.  It prints:\n"
    "top-1 and top-5 accuracy against the labels for float and int8, the top-1\n"
    "agreement of float and int8, the SQNR of the first output (int8 against\n"
    "float) over the set with the worst input sets by name, the SQNR of every\n"
    "layer over the set (mean, worst, and the loss: how much lower it is than\n"
    "the layer's input's), and the cycles of one inference on the cycle-accurate\n"
    "simulator, checked bit-exact against the golden reference (the first input\n"
    "set, and the last: the EasyNPU's timing does not depend on the data, and\n"
    "this shows it).  A .qjson has no float graph: int8 accuracy only.\n"
    "\n"
    "  --data SPEC        input sets: comma-separated files and folders; a folder\n"
    "                     gives its .npy/.npz/.pb files sorted by name (only\n"
    "                     input_* ones if any), or those of its subfolders (ONNX\n"
    "                     test_data_set_N); an array is one input or a stack [N, ...]\n"
    "                     of N; an .npz gives each of its arrays\n"
    "  --labels SPEC      class labels: text files of one 'CLASS' per line (one per\n"
    "                     input set, in order) or 'NAME CLASS' (NAME: a file, an\n"
    "                     .npz member or a folder of the input set); '#' comments\n"
    "  --arch A           preset or JSON file (default easynpu): quantization widths\n"
    "                     and the cycle count\n"
    "  --calib SPEC       calibration inputs of an .onnx (as --data)\n"
    "  --limit N          the first N input sets only\n"
    "  --threads N        worker threads (default: one per CPU); the figures do not\n"
    "                     depend on it\n"
    "  --worst N          input sets listed by lowest SQNR (default 5)\n"
    "  --kernels K        the golden's kernels: fast (default: the best SIMD this\n"
    "                     CPU has), portable (the same in plain C), avx2, vnni256\n"
    "                     (vpdpwssd on int16 in 256-bit registers; avx512vnni: the same),\n"
    "                     or reference (the loops that define the numerics); all give\n"
    "                     the same values\n"
    "  --no-cycles        do not compile and simulate\n"
    "  --json FILE        the report as JSON, with a record per input set ('-':\n"
    "                     standard output; the text report then goes to stderr)\n"
    "  --quiet            no quantizer warnings\n"
    "  --min-top1 PCT     accuracy gate: int8 top-1 accuracy against --labels of at\n"
    "                     least PCT %% of the labelled input sets, else exit 3\n"
    "  --min-agreement PCT  accuracy gate: int8 top-1 equal to float top-1 on at\n"
    "                     least PCT %% of the input sets (an .onnx), else exit 3\n"
    "  --min-sqnr DB      accuracy gate: the mean SQNR of the first output (int8\n"
    "                     against float) at least DB (an .onnx), else exit 3\n"
    ENPU_CLI_BIND_HELP ENPU_CLI_SHAPE_HELP
    "                     (dimension 0 is 1: each input set is one image)\n"
    "\n"
    "A progress bar is drawn on stderr when it is a terminal.  Exit status: 0 done;\n"
    "1 the simulator differed from the golden reference; 2 bad input or usage; 3 an\n"
    "accuracy gate missed (category `accuracy`); 4 an internal error (category\n"
    "`internal`: a bug in EasyNPU, e.g. the simulator's watchdog).\n";

static int parse_count(const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static void on_progress(void *ctx, int done, int total) {
    (void)total;
    enpu_progress_step(ctx, done, "input sets");
}

static void fmt_db(char *buf, size_t n, double v) {
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "exact" : "-inf");
    else snprintf(buf, n, "%.1f", v);
}

static double pct(int a, int b) { return b ? 100.0 * a / b : 0.0; }

/* name cut in the middle to at most w characters */
static void elide(const char *name, char *buf, size_t n, int w) {
    int len = (int)strlen(name);
    if (len <= w) snprintf(buf, n, "%s", name);
    else snprintf(buf, n, "%.*s..%s", w / 2 - 2, name, name + len - (w - w / 2));
}

/* Cycles of one inference (cycle mode), checked layer by layer against the
 * golden reference run on the same input. */
typedef struct cycle_run {
    bool ran, fits;
    uint64_t cycles[2];
    int checked_layers;
    char why[ENPU_ERR_MSG_MAX + 64];
    double clock_mhz;
} cycle_run;

static int simulate_one(const enpu_graph *qg, const enpu_arch *arch, const enpu_program *prog,
                        const enpu_buf *in, uint64_t *cycles, int *layers, enpu_err *err) {
    enpu_golden_check gc = {.qg = qg};
    enpu_sim_opts o = {0};
    o.mode = ENPU_SIM_CYCLE;
    o.on_layer = enpu_golden_check_layer;
    o.cb_ctx = &gc;
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    memset(&res, 0, sizeof res);
    int rc = enpu_gexec_new(qg, &gc.ex, err);
    if (!rc) rc = enpu_gexec_run(gc.ex, in, err);
    if (!rc) rc = enpu_sim_new(prog, arch, &o, &sim, err);
    if (!rc) rc = enpu_sim_run(sim, in, qg->n_inputs, &res, err);
    if (!rc) rc = enpu_golden_check_outputs(&gc, &res, err);
    *cycles = res.total_cycles;
    *layers = gc.compared;
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    enpu_gexec_free(gc.ex);
    return rc;
}

/* The program for arch, then the first and the last input set. */
static int cycles_of(const enpu_graph *qg, const enpu_arch *arch, const enpu_dataset *ds,
                     cycle_run *cr, enpu_err *err) {
    memset(cr, 0, sizeof *cr);
    cr->clock_mhz = arch->clock_mhz;
    enpu_program prog;
    enpu_program_init(&prog, arch);
    enpu_err e = {0};
    int rc = enpu_compile(qg, arch, NULL, &prog, NULL, &e);
    if (rc) {
        /* a model that does not fit is a finding of the evaluation, not a failure */
        snprintf(cr->why, sizeof cr->why, "error [%s]: %s", enpu_status_name(e.code), e.msg);
        enpu_program_free(&prog);
        return 0;
    }
    cr->fits = true;
    int last = ds->n_samples - 1, layers = 0;
    for (int k = 0; k < (last > 0 ? 2 : 1) && !rc; k++) {
        int s = k ? last : 0;
        rc = simulate_one(qg, arch, &prog, ds->bufs + (size_t)s * ds->n_inputs, &cr->cycles[k],
                          &layers, err);
        if (rc) enpu_err_prefix(err, "simulating input set %d (%s)", s, ds->names[s]);
        if (!k) cr->checked_layers = layers;
    }
    if (last == 0) cr->cycles[1] = cr->cycles[0];
    cr->ran = rc == 0;
    enpu_program_free(&prog);
    return rc;
}

/* Input sets by increasing SQNR of the first output (index order on ties,
 * NaN last). */
typedef struct by_sqnr {
    double db;
    int i;
} by_sqnr;

static int cmp_sqnr(const void *a, const void *b) {
    const by_sqnr *x = a, *y = b;
    bool nx = isnan(x->db), ny = isnan(y->db);
    if (nx != ny) return nx ? 1 : -1;
    if (!nx && x->db != y->db) return x->db < y->db ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int *worst_order(const enpu_eval_result *r) {
    by_sqnr *v = malloc((size_t)r->n_samples * sizeof *v);
    int *ord = malloc((size_t)r->n_samples * sizeof *ord);
    if (v && ord) {
        for (int i = 0; i < r->n_samples; i++) v[i] = (by_sqnr){r->samples[i].sqnr_db, i};
        qsort(v, (size_t)r->n_samples, sizeof *v, cmp_sqnr);
        for (int i = 0; i < r->n_samples; i++) ord[i] = v[i].i;
    } else {
        free(ord);
        ord = NULL;
    }
    free(v);
    return ord;
}

static void print_report(FILE *out, const char *model, const char *data, const char *labels,
                         const enpu_dataset *ds, const enpu_eval_result *r, const enpu_arch *arch,
                         int n_calib, bool is_qjson, const cycle_run *cr, const int *worst,
                         int n_worst) {
    fprintf(out, "eval %s on %d input set(s) from %s", model, r->n_samples, data);
    if (ds->truncated) fprintf(out, " (--limit)");
    fprintf(out, "\n");
    if (is_qjson)
        fprintf(out, "int8: %s as quantized (no float graph: int8 figures only)\n", model);
    else
        fprintf(out, "int8: quantized for arch '%s' on %d calibration input set(s)%s\n", arch->name,
               n_calib, n_calib ? "" : " (SYNTHETIC FALLBACK)");
    fprintf(out, "golden int8 reference (bit-exact with the NPU), %s kernels, %d thread(s)\n\n",
           r->kernels, r->threads);
    if (r->classes && r->n_labelled) {
        fprintf(out, "accuracy on output '%s' (%lld classes), %d labelled input set(s) (%s)\n", r->output,
               (long long)r->n_classes, r->n_labelled, labels);
        fprintf(out, "  %-8s %16s %16s\n", "", r->have_float ? "float" : "", "int8");
        char f1[32] = "", f5[32] = "", i1[32], i5[32];
        if (r->have_float) {
            snprintf(f1, sizeof f1, "%d (%.1f%%)", r->top1_float, pct(r->top1_float, r->n_labelled));
            snprintf(f5, sizeof f5, "%d (%.1f%%)", r->top5_float, pct(r->top5_float, r->n_labelled));
        }
        snprintf(i1, sizeof i1, "%d (%.1f%%)", r->top1_int8, pct(r->top1_int8, r->n_labelled));
        snprintf(i5, sizeof i5, "%d (%.1f%%)", r->top5_int8, pct(r->top5_int8, r->n_labelled));
        fprintf(out, "  %-8s %16s %16s\n", "top-1", f1, i1);
        fprintf(out, "  %-8s %16s %16s\n", "top-5", f5, i5);
    } else if (r->classes) {
        fprintf(out, "no labels: accuracy not measured\n");
    } else {
        fprintf(out, "output '%s' is not a class vector ([N] or [1, N]): no accuracy, no agreement\n",
                r->output);
    }
    if (r->classes && (r->ties_int8 || r->ties_float))
        fprintf(out, "ties of the top score (no decision: never agreement nor a right top-1): "
                     "float %d, int8 %d input set(s)\n",
                r->ties_float, r->ties_int8);
    if (r->have_float) {
        if (r->classes)
            fprintf(out, "top-1 agreement, float vs int8: %d of %d (%.1f%%)\n", r->agree, r->n_samples,
                   pct(r->agree, r->n_samples));
        char m[16], md[16], w[16];
        fmt_db(m, sizeof m, r->sqnr_mean_db);
        fmt_db(md, sizeof md, r->sqnr_median_db);
        fmt_db(w, sizeof w, r->sqnr_worst_db);
        fprintf(out, "SQNR of output '%s', int8 vs float (dB): mean %s, median %s, worst %s", r->output, m,
               md, w);
        if (r->n_exact) fprintf(out, "; exact on %d input set(s)", r->n_exact);
        fprintf(out, "\n");
        if (worst && n_worst > 0) {
            fprintf(out, "  worst input sets: %8s %6s %6s %6s  %s\n", "SQNR dB", "float", "int8", "label",
                   "input set");
            for (int i = 0; i < n_worst && i < r->n_samples; i++) {
                const enpu_eval_sample *s = &r->samples[worst[i]];
                char v[16], f[24] = "-", q[24] = "-", l[24] = "-";
                fmt_db(v, sizeof v, s->sqnr_db);
                if (r->classes) {
                    snprintf(f, sizeof f, "%lld", (long long)s->top_float[0]);
                    snprintf(q, sizeof q, "%lld", (long long)s->top_int8[0]);
                }
                if (s->label >= 0) snprintf(l, sizeof l, "%d", s->label);
                fprintf(out, "  %16s %8s %6s %6s %6s  %s\n", "", v, f, q, l, ds->names[worst[i]]);
            }
        }
        fprintf(out, "\nper-layer SQNR over the set, dB: mean over the input sets, the worst one, how many\n"
               "are exact, and 'added': the noise the layer itself adds, as an SQNR\n");
        fprintf(out, "%4s %-32s %-8s %7s %7s %6s %7s\n", "#", "layer", "op", "mean", "worst", "exact",
               "added");
        int most = -1;
        for (int i = 0; i < r->n_layers; i++) {
            const enpu_eval_layer *l = &r->layers[i];
            char name[40], mean[16], wo[16], add[16], idx[12];
            elide(l->name, name, sizeof name, 32);
            fmt_db(mean, sizeof mean, l->mean_db);
            fmt_db(wo, sizeof wo, l->worst_db);
            if (isinf(l->added_db) && l->added_db > 0) snprintf(add, sizeof add, "none");
            else fmt_db(add, sizeof add, l->added_db);
            if (l->node < 0) snprintf(idx, sizeof idx, "-");
            else snprintf(idx, sizeof idx, "%d", l->node);
            if (!l->compared)
                fprintf(out, "%4s %-32s %-8s %7s %7s %6s %7s\n", idx, name, l->op, "-", "-", "-", "-");
            else
                fprintf(out, "%4s %-32s %-8s %7s %7s %6d %7s\n", idx, name, l->op, mean, wo, l->n_exact, add);
            if (isfinite(l->added_db) && (most < 0 || l->added_db < r->layers[most].added_db)) most = i;
        }
        if (most >= 0) {
            char name[80];
            elide(r->layers[most].name, name, sizeof name, 60);
            fprintf(out, "adds the most noise: %s (%s), %.1f dB\n", name, r->layers[most].op,
                   r->layers[most].added_db);
        }
    }
    fprintf(out, "\n");
    if (!cr) {
        fprintf(out, "cycles: not simulated (--no-cycles)\n");
    } else if (!cr->fits) {
        fprintf(out, "cycles: the model does not run on arch '%s': %s\n", arch->name, cr->why);
    } else if (cr->ran) {
        fprintf(out, "cycles on arch '%s' (cycle-accurate simulator): %llu per inference = %.3f us at "
               "%g MHz\n",
               arch->name, (unsigned long long)cr->cycles[0],
               (double)cr->cycles[0] / cr->clock_mhz, cr->clock_mhz);
        if (r->n_samples > 1 && cr->cycles[0] == cr->cycles[1])
            fprintf(out, "  the same on the first and the last input set (%s, %s);", ds->names[0],
                   ds->names[r->n_samples - 1]);
        else if (r->n_samples > 1)
            fprintf(out, "  DIFFERENT on the first and the last input set (%s: %llu, %s: %llu);",
                   ds->names[0], (unsigned long long)cr->cycles[0], ds->names[r->n_samples - 1],
                   (unsigned long long)cr->cycles[1]);
        else
            fprintf(out, "  on %s;", ds->names[0]);
        fprintf(out, " every layer output bit-exact with the golden reference (%d per run)\n",
               cr->checked_layers);
    }
    fprintf(out, "time: %d input set(s) in %.2f s on %d thread(s); CPU time per input set: ",
           r->n_samples, r->seconds, r->threads);
    if (r->have_float) fprintf(out, "float reference %.3f ms, ", r->float_ms);
    fprintf(out, "int8 golden %.3f ms\n", r->int8_ms);
}

static json_t *jdb(double v) { return isfinite(v) ? json_real(v) : (isnan(v) ? json_null() : json_string(v > 0 ? "inf" : "-inf")); }

static json_t *jtop(const int64_t *t) {
    json_t *a = json_array();
    for (int q = 0; q < ENPU_EVAL_TOPK && t[q] >= 0; q++) json_array_append_new(a, json_integer(t[q]));
    return a;
}

static int write_json(const char *path, const char *model, const enpu_dataset *ds,
                      const enpu_eval_result *r, const enpu_arch *arch, const cycle_run *cr,
                      enpu_err *err) {
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("easynpu-eval"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "model", json_string(model));
    json_object_set_new(root, "arch", json_string(arch->name));
    json_object_set_new(root, "input_sets", json_integer(r->n_samples));
    json_object_set_new(root, "labelled", json_integer(r->n_labelled));
    json_object_set_new(root, "output", json_string(r->output));
    json_object_set_new(root, "classes", r->classes ? json_integer(r->n_classes) : json_null());
    json_object_set_new(root, "kernels", json_string(r->kernels));
    json_object_set_new(root, "threads", json_integer(r->threads));
    if (r->n_labelled && r->classes) {
        json_t *acc = json_object();
        if (r->have_float) {
            json_object_set_new(acc, "top1_float", json_real((double)r->top1_float / r->n_labelled));
            json_object_set_new(acc, "top5_float", json_real((double)r->top5_float / r->n_labelled));
        }
        json_object_set_new(acc, "top1_int8", json_real((double)r->top1_int8 / r->n_labelled));
        json_object_set_new(acc, "top5_int8", json_real((double)r->top5_int8 / r->n_labelled));
        json_object_set_new(root, "accuracy", acc);
    }
    if (r->classes)
        json_object_set_new(root, "ties", json_pack("{s:i,s:i}", "float", r->ties_float, "int8",
                                                    r->ties_int8));
    if (r->have_float) {
        if (r->classes) json_object_set_new(root, "top1_agreement", json_real((double)r->agree / r->n_samples));
        json_t *sq = json_object();
        json_object_set_new(sq, "mean_db", jdb(r->sqnr_mean_db));
        json_object_set_new(sq, "median_db", jdb(r->sqnr_median_db));
        json_object_set_new(sq, "worst_db", jdb(r->sqnr_worst_db));
        json_object_set_new(sq, "exact", json_integer(r->n_exact));
        json_object_set_new(root, "output_sqnr", sq);
        json_t *layers = json_array();
        for (int i = 0; i < r->n_layers; i++) {
            const enpu_eval_layer *l = &r->layers[i];
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(l->name));
            json_object_set_new(o, "op", json_string(l->op));
            json_object_set_new(o, "node", l->node >= 0 ? json_integer(l->node) : json_null());
            json_object_set_new(o, "compared", json_boolean(l->compared));
            if (l->compared) {
                json_object_set_new(o, "mean_sqnr_db", jdb(l->mean_db));
                json_object_set_new(o, "worst_sqnr_db", jdb(l->worst_db));
                json_object_set_new(o, "worst_input_set",
                                    l->worst_sample >= 0 ? json_string(ds->names[l->worst_sample]) : json_null());
                json_object_set_new(o, "exact", json_integer(l->n_exact));
                json_object_set_new(o, "pooled_sqnr_db", jdb(l->pooled_db));
                json_object_set_new(o, "added_sqnr_db", jdb(l->added_db));
            }
            json_array_append_new(layers, o);
        }
        json_object_set_new(root, "layers", layers);
    }
    json_t *sets = json_array();
    for (int s = 0; s < r->n_samples; s++) {
        const enpu_eval_sample *sm = &r->samples[s];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(ds->names[s]));
        json_object_set_new(o, "label", sm->label >= 0 ? json_integer(sm->label) : json_null());
        if (r->classes) {
            if (r->have_float) json_object_set_new(o, "top_float", jtop(sm->top_float));
            json_object_set_new(o, "top_int8", jtop(sm->top_int8));
            if (sm->tie_float) json_object_set_new(o, "tie_float", json_true());
            if (sm->tie_int8) json_object_set_new(o, "tie_int8", json_true());
        }
        if (r->have_float) {
            json_object_set_new(o, "sqnr_db", jdb(sm->sqnr_db));
            json_object_set_new(o, "max_abs_err", jdb(sm->max_abs_err));
        }
        json_array_append_new(sets, o);
    }
    json_object_set_new(root, "input_set_results", sets);
    if (cr && cr->ran) {
        json_t *c = json_object();
        json_object_set_new(c, "cycles", json_integer((json_int_t)cr->cycles[0]));
        json_object_set_new(c, "cycles_last_input_set", json_integer((json_int_t)cr->cycles[1]));
        json_object_set_new(c, "time_us", json_real((double)cr->cycles[0] / cr->clock_mhz));
        json_object_set_new(c, "bit_exact", json_true());
        json_object_set_new(c, "layers_compared", json_integer(cr->checked_layers));
        json_object_set_new(root, "simulation", c);
    } else if (cr && !cr->fits) {
        json_object_set_new(root, "simulation", json_pack("{s:s}", "error", cr->why));
    }
    json_t *t = json_object();
    json_object_set_new(t, "seconds", json_real(r->seconds));
    json_object_set_new(t, "float_ms_per_input_set", r->have_float ? json_real(r->float_ms) : json_null());
    json_object_set_new(t, "int8_ms_per_input_set", json_real(r->int8_ms));
    json_object_set_new(root, "time", t);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    int rc = enpu_file_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

/* The accuracy gates the user set (NAN: none): int8 top-1 against the
 * labels, float/int8 agreement (percent of the input sets), the mean SQNR
 * of the first output.  ENPU_E_ACCURACY naming the first one missed. */
static int gates(const enpu_eval_result *r, double top1, double agree, double sqnr, enpu_err *err) {
    if (!isnan(top1)) {
        if (!r->classes || !r->n_labelled)
            return enpu_fail(err, ENPU_E_USAGE, "--min-top1: the first output is not a class vector with "
                             "labelled input sets");
        double got = pct(r->top1_int8, r->n_labelled);
        if (!(got >= top1))
            return enpu_fail(err, ENPU_E_ACCURACY, "int8 top-1 accuracy %.2f%% (%d of %d labelled input sets) "
                             "is below --min-top1 %g", got, r->top1_int8, r->n_labelled, top1);
    }
    if (!isnan(agree)) {
        if (!r->classes)
            return enpu_fail(err, ENPU_E_USAGE, "--min-agreement: the first output is not a class vector");
        double got = pct(r->agree, r->n_samples);
        if (!(got >= agree))
            return enpu_fail(err, ENPU_E_ACCURACY, "float/int8 top-1 agreement %.2f%% (%d of %d input sets) "
                             "is below --min-agreement %g", got, r->agree, r->n_samples, agree);
    }
    if (!isnan(sqnr) && !(r->sqnr_mean_db >= sqnr))
        return enpu_fail(err, ENPU_E_ACCURACY, "the mean SQNR of output %s over the set, %.1f dB, is below "
                         "--min-sqnr %g", r->output ? r->output : "0", r->sqnr_mean_db, sqnr);
    return 0;
}

int enpu_cmd_eval(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},    {"labels", required_argument, 0, 'l'},
        {"arch", required_argument, 0, 'a'},    {"calib", required_argument, 0, 'c'},
        {"limit", required_argument, 0, 'n'},   {"threads", required_argument, 0, 't'},
        {"worst", required_argument, 0, 'w'},   {"kernels", required_argument, 0, 'k'},
        {"no-cycles", no_argument, 0, 'C'},     {"json", required_argument, 0, 'j'},
        {"quiet", no_argument, 0, 'q'},         {"bind", required_argument, 0, 'b'},
        {"input-shape", required_argument, 0, 'S'}, {"min-top1", required_argument, 0, '1'},
        {"min-agreement", required_argument, 0, 'A'}, {"min-sqnr", required_argument, 0, 'G'},
        {0, 0, 0, 0}};
    enpu_cli_binds binds = {0};
    const char *data = NULL, *labels = NULL, *arch_spec = "easynpu", *calib = NULL, *json = NULL;
    long limit = 0, threads = 0, n_worst = 5;
    bool quiet = false, cycles = true;
    double g_top1 = NAN, g_agree = NAN, g_sqnr = NAN; /* the gates (NAN: none) */
    enpu_eval_opts eo;
    enpu_eval_opts_default(&eo);
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': data = optarg; break;
        case 'l': labels = optarg; break;
        case 'a': arch_spec = optarg; break;
        case 'c': calib = optarg; break;
        case 'j': json = optarg; break;
        case 'q': quiet = true; break;
        case 'C': cycles = false; break;
        case 'n':
            if (parse_count(optarg, 1, ENPU_DATASET_MAX_SAMPLES, &limit))
                return enpu_cli_usage("eval", "--limit '%s': an integer in 1..%d expected", optarg,
                                      ENPU_DATASET_MAX_SAMPLES);
            break;
        case 't':
            if (parse_count(optarg, 1, ENPU_EVAL_MAX_THREADS, &threads))
                return enpu_cli_usage("eval", "--threads '%s': an integer in 1..%d expected", optarg,
                                      ENPU_EVAL_MAX_THREADS);
            break;
        case 'w':
            if (parse_count(optarg, 0, 1000000, &n_worst))
                return enpu_cli_usage("eval", "--worst '%s': an integer in 0..1000000 expected", optarg);
            break;
        case 'k': {
            int k = enpu_gexec_kernels_parse(optarg);
            if (k < 0)
                return enpu_cli_usage("eval", "--kernels '%s': expected fast, portable, reference, "
                                      "avx2 or vnni256", optarg);
            eo.kernels = (enpu_gexec_kernels)k;
            break;
        }
        case 'b':
            if (enpu_cli_bind_add("eval", &binds, optarg)) return 2;
            break;
        case 'S':
            if (enpu_cli_shape_add("eval", &binds, optarg)) return 2;
            break;
        case '1':
        case 'A':
        case 'G': {
            char *end;
            double v = strtod(optarg, &end);
            bool pctv = c != 'G';
            if (end == optarg || *end || !isfinite(v) || (pctv && (v < 0 || v > 100)))
                return enpu_cli_usage("eval", "--%s '%s': %s expected",
                                      c == '1' ? "min-top1" : c == 'A' ? "min-agreement" : "min-sqnr", optarg,
                                      pctv ? "a percentage in 0..100" : "a number of dB");
            *(c == '1' ? &g_top1 : c == 'A' ? &g_agree : &g_sqnr) = v;
            break;
        }
        default: return enpu_cli_usage("eval", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1) return enpu_cli_usage("eval", "expected one MODEL.onnx or MODEL.qjson");
    const char *model = argv[optind];
    if (!data) return enpu_cli_usage("eval", "--data SPEC is required");
    if (!isnan(g_top1) && !labels) return enpu_cli_usage("eval", "--min-top1 needs --labels");
    if ((!isnan(g_agree) || !isnan(g_sqnr)) && strcmp(enpu_path_ext(model), ".onnx") != 0)
        return enpu_cli_usage("eval", "%s: --%s compares int8 with the float reference, which only an "
                              ".onnx model has", model, !isnan(g_agree) ? "min-agreement" : "min-sqnr");
    /* a TFLite model's data sets would be in TFLite's NHWC order and its
     * arch's requant switched as `run` does; eval does neither yet */
    if (strcmp(enpu_path_ext(model), ".tflite") == 0) {
        enpu_err e = {0};
        enpu_fail(&e, ENPU_E_UNSUPPORTED, "%s: eval takes an .onnx or .qjson model; run a TFLite "
                  "model with `easynpu run MODEL.tflite --input x.raw|x.npy`", model);
        enpu_cli_binds_free(&binds);
        return enpu_cli_fail("eval", &e);
    }
    int64_t batch = enpu_cli_batch("eval", &binds);
    if (batch != 1) enpu_cli_binds_free(&binds);
    if (batch < 0) return 2;
    if (batch > 1)
        return enpu_cli_usage("eval", "--input-shape gives a batch of %lld: eval runs one image per "
                              "input set (a stacked array [N, ...] is N input sets); give dimension 0 as 1",
                              (long long)batch);
    if (strcmp(enpu_path_ext(model), ".enpu") == 0)
        return enpu_cli_usage("eval", "%s is a compiled program, which has no golden reference; give "
                              "the .onnx or .qjson it was compiled from", model);
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, model);
    enpu_cli_io_in(&io, enpu_cli_arch_file(arch_spec));
    enpu_cli_io_list(&io, data);
    enpu_cli_io_list(&io, labels);
    enpu_cli_io_list(&io, calib);
    enpu_cli_bind_inputs(&binds, &io);
    enpu_cli_io_out(&io, json);
    if (enpu_cli_check_io("eval", &io)) return 2;
    FILE *text = enpu_cli_text(&io);
    eo.threads = (int)threads;

    enpu_err err = {0};
    enpu_arch arch;
    enpu_model m;
    memset(&m, 0, sizeof m);
    enpu_graph *qg = NULL;
    enpu_dataset ds;
    memset(&ds, 0, sizeof ds);
    enpu_eval_result r;
    memset(&r, 0, sizeof r);
    int *lab = NULL, n_lab = 0, rc = 0, *worst = NULL;
    cycle_run cr;
    enpu_progress prog;
    if (enpu_arch_load(arch_spec, &arch, &err) || enpu_model_load(&m, model, calib, &binds, &err) ||
        enpu_model_quantize(&m, &arch, quiet, &qg, NULL, &err) ||
        enpu_dataset_load(m.g ? m.g : qg, data, (int)limit, &ds, &err) ||
        (labels && enpu_labels_load(labels, &ds, &lab, &n_lab, &err))) {
        rc = enpu_cli_fail("eval", &err);
        goto done;
    }
    eo.progress = on_progress;
    eo.ctx = &prog;
    enpu_progress_start(&prog, ds.n_samples);
    rc = enpu_eval_run(m.g, qg, &ds, lab, &eo, &r, &err);
    enpu_progress_end(&prog);
    if (rc) {
        rc = enpu_cli_fail("eval", &err);
        goto done;
    }
    if (cycles && cycles_of(qg, &arch, &ds, &cr, &err)) {
        rc = enpu_cli_fail("eval", &err);
        goto done;
    }
    worst = r.have_float ? worst_order(&r) : NULL;
    print_report(text, model, data, labels, &ds, &r, &arch, m.n_calib, m.is_qjson,
                 cycles ? &cr : NULL, worst, (int)n_worst);
    if (json) {
        if (write_json(json, model, &ds, &r, &arch, cycles ? &cr : NULL, &err)) {
            rc = enpu_cli_fail("eval", &err);
            goto done;
        }
        if (strcmp(json, "-") != 0) fprintf(text, "wrote %s\n", json);
    }
    if (gates(&r, g_top1, g_agree, g_sqnr, &err)) rc = enpu_cli_fail("eval", &err);
done:
    free(worst);
    free(lab);
    enpu_eval_result_free(&r);
    enpu_dataset_free(&ds);
    enpu_graph_free(qg);
    enpu_model_free(&m);
    enpu_cli_binds_free(&binds);
    return rc;
}
