/* easynpu run: the main job.  One command from a model to a verified, timed
 * run: quantize (an .onnx), compile for each --arch, simulate, check every
 * layer bit-exact against the golden int8 reference, measure int8 against
 * the float reference, print the outputs and where the cycles went. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/accuracy.h"
#include "cli/audio_in.h"
#include "cli/bind.h"
#include "cli/cli.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "easynpu/compiler.h"
#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/sim.h"
#include "easynpu/tflite.h"
#include "report/sim_report.h"
#include "report/energy_compare.h"
#include "report/svg_chart.h"

static const char *HELP =
    "usage: easynpu run MODEL.onnx|MODEL.tflite|MODEL.qjson|PROG.enpu [--input FILE...]\n"
    "                   [--output FILE...]\n"
    "                   [--arch A [--arch B...]] [--calib DIR|FILES] [--mode cycle|functional]\n"
    "                   [--json FILE] [--trace FILE] [--vcd FILE [--window A:B]] [--svg FILE]\n"
    "                   [--bits 8|16 [--qformat]] [--bind NAME=FILE...]\n"
    "                   [--input-shape NAME=D0xD1x...] [--per-cycle]\n"
    "                   [--min-sqnr DB] [--require-top1]\n"
    "       easynpu run MODEL.tflite|MODEL.onnx --wav FILE.wav [--features NAME] [--labels FILE] ...\n"
    "\n"
    "The main job.  An .onnx model is quantized to int8 (on --calib inputs; without\n"
    "them on the quantizer's synthetic fallback, with a warning), compiled for the\n"
    "architecture, and run on the simulated EasyNPU; every layer output is checked\n"
    "element by element against the golden int8 reference, and the int8 outputs\n"
    "are compared with the float32 reference on the same input.  It prints the\n"
    "outputs (the top classes with their scores when an output is a class vector),\n"
    "the per-layer table (cycles, ideal cycles = MACs / PEs, utilization, ratio\n"
    "to ideal, cycles by activity, psum use), the totals, and the energy per\n"
    "inference by unit, average power and area (docs/energy.md).  A .qjson is taken\n"
    "as already quantized (no float comparison).  A .tflite (an int8 TFLite model,\n"
    "docs/tflite.md) is imported with its own scales and runs with requant\n"
    "\"tflite\" (TFLite's integer rules, bit-exact with TFLite Micro's kernels);\n"
    "its inputs are int8 .raw files (NHWC, TFLite's order) or .npy (int8, or\n"
    "float quantized with TFLite's rule), its outputs printed and written as\n"
    "int8 in TFLite's order.  A .enpu program is simulated\n"
    "with the simulator's own layer-by-layer replay check (for the golden check\n"
    "give the model instead, or use `easynpu sim --golden`).\n"
    "\n"
    "  --input FILE     one per model input, in order (.npy or .pb; .raw for a\n"
    "                   .tflite); default: the first calibration input\n"
    "  --output FILE    one per model output: the simulated outputs, dequantized\n"
    "  --arch A         preset (easynpu, large, systolic, systolic-1x4,\n"
    "                   systolic-4x1, rowstat, eyeriss) or JSON file; default\n"
    "                   easynpu.  Given several times, the model runs on each and\n"
    "                   tables compare the per-layer cycles, utilization,\n"
    "                   memory traffic (also at every level) and energy side by\n"
    "                   side, with each arch's pJ/MAC, power, EDP and area\n"
    "  --bits N         quantize to 8 (default) or 16 bits (16: the row-stationary\n"
    "                   engine, docs/rowstat.md)\n"
    "  --qformat        with --bits 16: power-of-two scales (Q-format fixed point)\n"
    "  --calib SPEC     calibration inputs: a folder or comma-separated files\n"
    "  --mode M         cycle (default) or functional (same outputs, no timing)\n"
    "  --json FILE      the run as JSON: \"bit_exact\", \"total\" {cycles,\n"
    "                   ideal_cycles, macs, utilization, energy_pj, ...}, \"area\",\n"
    "                   \"layers\" [... energy_pj per layer],\n"
    "                   \"float_vs_int8\", and \"archs\" when comparing\n"
    "  --trace FILE     Chrome trace-event JSON of every unit (first arch)\n"
    "  --vcd FILE       VCD of the PE control signals (first arch), cycles\n"
    "                   --window A:B (default 0:100000)\n"
    "  --svg FILE       per-layer chart: cycles split by activity, utilization;\n"
    "                   one chart per --arch, one below the other, and with\n"
    "                   several, the cycles and the energy by level of all on\n"
    "                   one scale\n"
    "  --quiet          no quantizer warnings\n"
    "  --per-cycle      cycle mode: step every unit in every cycle, no\n"
    "                   fast-forward (docs/microarch.md §15; same results, slower)\n"
    "  --min-sqnr DB    accuracy gate: every output's SQNR (int8 against float)\n"
    "                   must be at least DB, else exit 3 (an .onnx model)\n"
    "  --require-top1   accuracy gate: every class-vector output's int8 top-1 must\n"
    "                   be the float top-1 (a tie at the top is not), else exit 3\n"
    "  --wav FILE       the input from sound (docs/audio.md): a mono 16-bit WAV\n"
    "                   (another rate is resampled), its first clip through the\n"
    "                   feature front end, quantized to the model's input; prints\n"
    "                   what was heard by class name and adds the front end's\n"
    "                   time on the host CPU to the cycles\n"
    "  --features NAME  the front end (default mlperf-tiny-kws)\n"
    "  --labels FILE    class names, one per line (default: the front end's when\n"
    "                   the model has as many classes)\n"
    ENPU_CLI_BIND_HELP
    ENPU_CLI_SHAPE_HELP
    "                     A batch (NAME=Nx..., N > 1) is N images through the same\n"
    "                     program one after the other: each --input holds N\n"
    "                     images, each is checked against the golden reference,\n"
    "                     the outputs are the N results and the time is N runs;\n"
    "                     on a row-stationary arch one program computes the N\n"
    "                     images (rs_conv of several images per pass): the\n"
    "                     batch's cycles and the cycles per image\n"
    "\n"
    "Exit status: 0 bit-exact and every check passed; 1 a mismatch or failed\n"
    "check; 2 bad input or usage (including a model that does not fit); 3\n"
    "bit-exact, but an accuracy gate (--min-sqnr, --require-top1) is missed\n"
    "(category `accuracy`); 4 an internal error (category `internal`: a bug in\n"
    "EasyNPU, e.g. the simulator's watchdog saw it stop making progress).\n";

#define MAX_FILES 64

typedef struct run_ctx {
    enpu_golden_check *golden; /* NULL: no golden check */
    enpu_progress progress;
    const enpu_program *prog;
} run_ctx;

static int on_layer(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim,
                    enpu_err *err) {
    run_ctx *r = ctx;
    enpu_progress_step(&r->progress, layer + 1, st->name);
    return r->golden ? enpu_golden_check_layer(r->golden, layer, st, sim, err) : 0;
}

/* Outputs: a class vector (enpu_is_class_vector: [N] or [1,N]) prints its
 * top classes with the int8 run's and the float reference's scores; any
 * other output its first values. */
static void print_output(FILE *text, const enpu_buf *b, const enpu_buf *fref, int bits) {
    int64_t n = enpu_buf_numel(b);
    const float *v = b->data, *f = fref ? fref->data : NULL;
    fprintf(text, "output %s [", b->name ? b->name : "");
    for (int i = 0; i < b->rank; i++) fprintf(text, i ? ",%lld" : "%lld", (long long)b->dims[i]);
    fprintf(text, "]");
    if (enpu_is_class_vector(b->rank, b->dims)) {
        int k = n < 5 ? (int)n : 5;
        int64_t top[5];
        for (int j = 0; j < k; j++) {
            int64_t best = -1;
            for (int64_t i = 0; i < n; i++) {
                bool taken = false;
                for (int q = 0; q < j; q++) taken |= top[q] == i;
                if (!taken && (best < 0 || v[i] > v[best])) best = i;
            }
            top[j] = best;
        }
        fprintf(text, ": top-%d class (int%d score%s):", k, bits, f ? " / float score" : "");
        for (int j = 0; j < k; j++) {
            if (f)
                fprintf(text, " %lld (%.4g / %.4g)", (long long)top[j], v[top[j]], f[top[j]]);
            else
                fprintf(text, " %lld (%.4g)", (long long)top[j], v[top[j]]);
        }
        fprintf(text, "\n");
        return;
    }
    for (int64_t i = 0; i < n && i < 8; i++) fprintf(text, i ? " %.5g" : " = %.5g", v[i]);
    fprintf(text, n > 8 ? " ...\n" : "\n");
}


static void arch_run_free(arch_run *a) {
    enpu_graph_free(a->qg);
    enpu_qreport_free(&a->qrep);
    if (a->have_prog) enpu_program_free(&a->prog);
    enpu_sim_result_free(&a->res);
}

/* Quantize (if needed), compile, simulate and check one architecture. */
static int sim_one(arch_run *a, const enpu_buf *ins, const int8_t *const *ins8, int n_in,
                   enpu_sim_mode mode, const enpu_sim_opts *base, bool observe, enpu_sim_result *res,
                   enpu_err *err);

/* Outputs of image k of a batch appended to the batch's: dimension 0 of
 * each grows by one image. */
static int append_outputs(enpu_sim_result *all, const enpu_sim_result *one, enpu_err *err) {
    for (int i = 0; i < all->n_outputs && i < one->n_outputs; i++) {
        enpu_buf *b = &all->outputs[i];
        const enpu_buf *o = &one->outputs[i];
        int64_t n0 = enpu_buf_numel(b), n1 = enpu_buf_numel(o);
        if (b->rank < 1 || o->rank != b->rank || b->dtype != ENPU_DT_FLOAT32)
            return enpu_fail(err, ENPU_E_INVALID, "output '%s': a batch needs outputs with a batch "
                             "dimension", b->name ? b->name : "");
        float *d = realloc(b->data, (size_t)(n0 + n1) * sizeof(float));
        if (!d) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        memcpy(d + n0, o->data, (size_t)n1 * sizeof(float));
        b->data = d;
        b->dims[0] += o->dims[0];
    }
    return 0;
}

static int run_arch(arch_run *a, const enpu_model *m, const char *prog_path, const enpu_buf *ins,
                    const int8_t *const *ins8, int n_in, int batch, enpu_sim_mode mode,
                    const enpu_sim_opts *base, bool quiet, bool report, enpu_err *err) {
    int rc;
    if (prog_path) {
        rc = enpu_program_read(prog_path, &a->arch, &a->prog, err);
        if (rc) return rc;
        a->have_prog = true;
    } else {
        rc = enpu_compile_arch_check(&a->arch, err);
        if (rc) {
            const char *file = enpu_cli_arch_file(a->spec);
            return file ? enpu_err_prefix(err, "%s", file) : rc;
        }
        /* the quantizer's per-layer SQNR names the layers that lose most */
        rc = enpu_model_quantize(m, &a->arch, quiet, &a->qg, report ? &a->qrep : NULL, err);
        if (!rc) rc = enpu_model_fit_requant(a->qg, &a->arch, a->note, err);
        if (rc) return rc;
        enpu_compile_opts co;
        enpu_compile_opts_default(&co);
        enpu_program_init(&a->prog, &a->arch);
        a->have_prog = true;
        rc = enpu_compile(a->qg, &a->arch, &co, &a->prog, NULL, err);
        if (rc) return enpu_err_prefix(err, "%s", m->path);
    }
    /* a batch: the same program, image after image (the first one observed
     * and reported in full); or one program of the whole batch (batch 1
     * here, a->batched) */
    rc = sim_one(a, ins, ins8, n_in, mode, base, true, &a->res, err);
    a->batch_cycles = a->res.total_cycles;
    for (int k = 1; k < batch && !rc; k++) {
        enpu_sim_result r;
        memset(&r, 0, sizeof r);
        int golden_layers = a->golden_layers;
        rc = sim_one(a, ins + (size_t)k * n_in, NULL, n_in, mode, base, false, &r, err);
        a->golden_layers += golden_layers;
        a->batch_cycles += r.total_cycles;
        if (!rc) rc = append_outputs(&a->res, &r, err);
        if (rc == ENPU_E_MISMATCH) a->res.bit_exact = false;
        enpu_sim_result_free(&r);
    }
    return rc;
}

/* One image through the program (compiled, a->prog), with the golden
 * check when there is a quantized graph. */
static int sim_one(arch_run *a, const enpu_buf *ins, const int8_t *const *ins8, int n_in,
                   enpu_sim_mode mode, const enpu_sim_opts *base, bool observe, enpu_sim_result *res,
                   enpu_err *err) {
    int rc;
    enpu_golden_check gc = {0};
    run_ctx rctx = {0};
    if (a->qg) {
        rc = enpu_gexec_new(a->qg, &gc.ex, err);
        if (!rc) rc = ins8 ? enpu_gexec_run_i8(gc.ex, ins8, err) : enpu_gexec_run(gc.ex, ins, err);
        if (rc) {
            enpu_gexec_free(gc.ex);
            return rc;
        }
        gc.qg = a->qg;
        rctx.golden = &gc;
    }
    enpu_sim_opts o = *base;
    if (!observe) o.trace = o.vcd = false;
    o.mode = mode;
    o.on_layer = on_layer;
    o.cb_ctx = &rctx;
    /* The simulator's own replay check (functional model vs cycle model) is
     * only needed when there is no golden reference: the golden check already
     * compares every stored layer output of this run, with its write cycle. */
    o.check = mode == ENPU_SIM_CYCLE && !a->qg;
    rctx.prog = &a->prog;
    enpu_progress_start(&rctx.progress, a->prog.n_instr);
    enpu_sim *sim = NULL;
    rc = enpu_sim_new(&a->prog, &a->arch, &o, &sim, err);
    if (!rc)
        rc = ins8 ? enpu_sim_run_i8(sim, ins8, n_in, res, err) : enpu_sim_run(sim, ins, n_in, res, err);
    enpu_progress_end(&rctx.progress);
    bool ran = rc == 0 || rc == ENPU_E_MISMATCH;
    if (observe) a->ran = ran;
    /* the trace and VCD of a mismatching run are what one debugs it with */
    if (observe && ran && a->trace) {
        int r2 = enpu_report_trace(sim, a->trace, rc ? NULL : err);
        if (!rc) rc = r2;
    }
    if (observe && ran && a->vcd) {
        int r2 = enpu_report_vcd(sim, a->vcd, rc ? NULL : err);
        if (!rc) rc = r2;
    }
    if (!rc && a->qg) rc = enpu_golden_check_outputs(&gc, res, err);
    a->golden_layers = gc.compared;
    a->golden_checked = a->qg && rc == 0 && (observe || a->golden_checked);
    if (rc == ENPU_E_MISMATCH) res->bit_exact = false;
    enpu_gexec_free(gc.ex);
    enpu_sim_free(sim);
    return rc;
}

static int split_list(char *arg, const char **out, int *n, int max) {
    for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
        if (*n >= max) return -1;
        out[(*n)++] = tok;
    }
    return 0;
}

int enpu_cmd_run(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {
        {"input", required_argument, 0, 'i'}, {"output", required_argument, 0, 'o'},
        {"arch", required_argument, 0, 'a'},  {"calib", required_argument, 0, 'c'},
        {"mode", required_argument, 0, 'm'},  {"json", required_argument, 0, 'j'},
        {"trace", required_argument, 0, 't'}, {"vcd", required_argument, 0, 'v'},
        {"window", required_argument, 0, 'w'}, {"svg", required_argument, 0, 's'},
        {"quiet", no_argument, 0, 'q'},       {"bind", required_argument, 0, 'b'},
        {"input-shape", required_argument, 0, 'S'}, {"bits", required_argument, 0, 'B'},
        {"qformat", no_argument, 0, 'Q'},           {"per-cycle", no_argument, 0, 'p'},
        {"min-sqnr", required_argument, 0, 'G'},    {"require-top1", no_argument, 0, 'T'},
        {"wav", required_argument, 0, 'W'},         {"features", required_argument, 0, 'F'},
        {"labels", required_argument, 0, 'L'},      {0, 0, 0, 0}};
    enpu_model bits = {0}, mb = {0}; /* mb: the model at batch N (enpu_model_load_batch) */
    enpu_cli_binds binds = {0}, bshapes = {0};
    const char *ins[MAX_FILES], *outs[MAX_FILES], *archs[MAX_ARCHS];
    int n_in = 0, n_out = 0, n_arch = 0, c, mode = ENPU_SIM_CYCLE;
    const char *calib = NULL, *json = NULL, *trace = NULL, *vcd = NULL, *window = NULL, *svg = NULL;
    bool quiet = false, per_cycle = false, require_top1 = false;
    double min_sqnr = NAN;
    const char *wav = NULL, *features = NULL, *labels = NULL;
    enpu_cli_audio audio = {0};
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (split_list(optarg, ins, &n_in, MAX_FILES)) return enpu_cli_usage("run", "too many inputs");
            break;
        case 'o':
            if (split_list(optarg, outs, &n_out, MAX_FILES)) return enpu_cli_usage("run", "too many outputs");
            break;
        case 'a':
            if (n_arch >= MAX_ARCHS) return enpu_cli_usage("run", "at most %d --arch", MAX_ARCHS);
            archs[n_arch++] = optarg;
            break;
        case 'c': calib = optarg; break;
        case 'm':
            mode = enpu_sim_mode_parse(optarg);
            if (mode < 0) return enpu_cli_usage("run", "--mode '%s': expected cycle or functional", optarg);
            break;
        case 'j': json = optarg; break;
        case 't': trace = optarg; break;
        case 'v': vcd = optarg; break;
        case 'w': window = optarg; break;
        case 's': svg = optarg; break;
        case 'q': quiet = true; break;
        case 'p': per_cycle = true; break;
        case 'T': require_top1 = true; break;
        case 'G': {
            char *end;
            min_sqnr = strtod(optarg, &end);
            if (end == optarg || *end || !isfinite(min_sqnr))
                return enpu_cli_usage("run", "--min-sqnr '%s': a number of dB expected", optarg);
            break;
        }
        case 'b':
            if (enpu_cli_bind_add("run", &binds, optarg)) return 2;
            break;
        case 'S':
            if (enpu_cli_shape_add("run", &binds, optarg)) return 2;
            break;
        case 'B':
            if (enpu_model_bits_arg(&bits, "run", optarg)) return 2;
            break;
        case 'Q': bits.pow2 = true; break;
        case 'W': wav = optarg; break;
        case 'F': features = optarg; break;
        case 'L': labels = optarg; break;
        default: return enpu_cli_usage("run", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return enpu_cli_usage("run", "expected one MODEL.onnx, MODEL.tflite, MODEL.qjson or PROG.enpu");
    const char *model = argv[optind];
    if ((require_top1 || !isnan(min_sqnr)) && strcmp(enpu_path_ext(model), ".onnx") != 0)
        return enpu_cli_usage("run", "%s: --%s compares the int8 run with the float reference, which "
                              "only an .onnx model has", model, require_top1 ? "require-top1" : "min-sqnr");
    if (n_arch == 0) archs[n_arch++] = "easynpu";
    int64_t batch = enpu_cli_batch("run", &binds);
    if (batch < 0) return 2;
    if (batch > 1 && n_in == 0)
        return enpu_cli_usage("run", "a batch of %lld images needs --input files holding them",
                              (long long)batch);
    /* the program computes one image; a batch is N runs of it, or on the
     * row-stationary engine one program of the batch (bshapes: its shapes) */
    bshapes = binds;
    enpu_cli_one_image(&binds);
    uint64_t w0 = 0, w1 = 100000;
    if (window) {
        char *end;
        unsigned long long a = strtoull(window, &end, 10), b;
        if (end == window || *end != ':' || (b = strtoull(end + 1, &end, 10), *end) || b <= a)
            return enpu_cli_usage("run", "--window '%s': expected A:B with A < B (cycles)", window);
        w0 = a;
        w1 = b;
        if (!vcd) return enpu_cli_usage("run", "--window needs --vcd");
    }
    if ((features || labels) && !wav) return enpu_cli_usage("run", "--features and --labels go with --wav");
    if (wav && (n_in || batch > 1))
        return enpu_cli_usage("run", "--wav is the model's input: no --input, no batch");
    if (mode == ENPU_SIM_FUNCTIONAL && (trace || vcd || svg))
        return enpu_cli_usage("run", "--trace, --vcd and --svg need --mode cycle (functional mode has no time)");
    /* checked now, not after a long run */
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, model);
    for (int i = 0; i < n_in; i++) enpu_cli_io_in(&io, ins[i]);
    for (int a = 0; a < n_arch; a++) enpu_cli_io_in(&io, enpu_cli_arch_file(archs[a]));
    enpu_cli_io_in(&io, wav);
    enpu_cli_io_in(&io, labels);
    enpu_cli_io_list(&io, calib);
    enpu_cli_bind_inputs(&binds, &io);
    for (int i = 0; i < n_out; i++) enpu_cli_io_out(&io, outs[i]);
    enpu_cli_io_out(&io, json);
    enpu_cli_io_out(&io, trace);
    enpu_cli_io_out(&io, vcd);
    enpu_cli_io_out(&io, svg);
    if (enpu_cli_check_io("run", &io)) return 2;
    FILE *text = enpu_cli_text(&io);

    enpu_err err = {0};
    bool is_prog = strcmp(enpu_path_ext(model), ".enpu") == 0;
    enpu_model m;
    memset(&m, 0, sizeof m);
    arch_run runs[MAX_ARCHS];
    memset(runs, 0, sizeof runs);
    enpu_buf bufs[MAX_FILES];
    int8_t *ins8[MAX_FILES] = {0};
    enpu_buf *imgs = NULL; /* a batch: n_in buffers per image */
    int loaded = 0, rc = 0;
    enpu_fexec *fx = NULL;
    enpu_buf fouts[MAX_FILES];
    int n_fouts = 0, n_acc = 0;
    enpu_accuracy acc[MAX_FILES];

    for (int a = 0; a < n_arch; a++) {
        runs[a].spec = archs[a];
        if (enpu_arch_load(archs[a], &runs[a].arch, &err)) {
            rc = enpu_cli_fail("run", &err);
            goto done;
        }
    }
    if (wav && enpu_cli_audio_open(&audio, wav, features, labels, text, &err)) {
        rc = enpu_cli_fail("run", &err);
        goto done;
    }
    if (is_prog && (calib || binds.n || binds.n_shapes)) {
        rc = enpu_cli_usage("run", "--%s is for a model, not a compiled program",
                            calib ? "calib" : binds.n ? "bind" : "input-shape");
        goto done;
    }
    if (bits.pow2 && bits.bits != 16) {
        rc = enpu_cli_usage("run", "--qformat needs --bits 16");
        goto done;
    }
    if (!is_prog && enpu_model_load(&m, model, calib, &binds, &err)) {
        rc = enpu_cli_fail("run", &err);
        goto done;
    }
    m.bits = bits.bits, m.pow2 = bits.pow2;
    if (m.tfl && binds.n_shapes) {
        rc = enpu_cli_usage("run", "--input-shape is for an ONNX model; %s has static shapes", model);
        goto done;
    }
    int want_in = 0;
    if (m.g) want_in = m.g->n_inputs;
    else if (m.tfl) want_in = m.tfl->n_inputs;
    else if (is_prog || m.is_qjson) want_in = n_in; /* checked by the simulator */
    if (wav) {
        if (enpu_cli_audio_model_input(&audio, model, m.tfl, m.g, &ins8[0], &bufs[0], text, &err)) {
            rc = enpu_cli_fail("run", &err);
            goto done;
        }
        n_in = 1;
        loaded = m.tfl ? 0 : 1;
    } else if (n_in == 0 && m.g && m.n_calib > 0) {
        /* No --input: the first calibration sample, so `run MODEL --calib DIR` works. */
        for (; loaded < m.g->n_inputs; loaded++) {
            const enpu_buf *src = &m.calib[loaded];
            if (enpu_buf_alloc(&bufs[loaded], src->dtype, src->rank, src->dims, &err)) {
                rc = enpu_cli_fail("run", &err);
                goto done;
            }
            memcpy(bufs[loaded].data, src->data,
                   (size_t)enpu_buf_numel(src) * enpu_dtype_size(src->dtype));
        }
        n_in = loaded;
        fprintf(text, "input: the first calibration sample (no --input given)\n");
    } else {
        if (n_in != want_in || n_in == 0) {
            rc = enpu_cli_usage("run", "%s needs %d --input file(s), %d given", model,
                                want_in ? want_in : 1, n_in);
            goto done;
        }
        for (int i = 0; m.tfl && i < n_in; i++)
            if (run_tflite_input(m.tfl, i, ins[i], &ins8[i], &err)) {
                rc = enpu_cli_fail("run", &err);
                goto done;
            }
        for (; loaded < n_in && !m.tfl; loaded++)
            if (enpu_tensor_read(ins[loaded], &bufs[loaded], &err)) {
                rc = enpu_cli_fail("run", &err);
                goto done;
            }
        /* each file against its model input, named (a batch is split below) */
        for (int i = 0; batch == 1 && m.g && !m.tfl && i < n_in; i++) {
            const enpu_tensor *t = &m.g->tensors[m.g->inputs[i]];
            if (!enpu_shape_fits(bufs[i].rank, bufs[i].dims, t->rank, t->dims)) {
                enpu_shape_error(&err, ins[i], t->name, bufs[i].rank, bufs[i].dims, t->rank, t->dims);
                rc = enpu_cli_fail("run", &err);
                goto done;
            }
        }
        if (batch > 1 && (rc = run_split_batch(bufs, n_in, batch, ins, &imgs, &err))) {
            rc = enpu_cli_fail("run", &err);
            goto done;
        }
    }
    const enpu_buf *images = imgs ? imgs : bufs;
    bool any_batched = false;
    for (int a = 0; a < n_arch; a++) any_batched |= enpu_model_batched_arch(&runs[a].arch, batch);
    if (any_batched && m.g && !m.tfl && enpu_model_load_batch(&m, model, &bshapes, batch, &mb, &err)) {
        /* a model that fixes batch 1 (a Reshape to [1, ...]) runs image by image */
        fprintf(text, "note: batch %lld: the model does not take the batch (%s); its images run through the "
                      "one-image program one after the other\n", (long long)batch, err.msg);
        enpu_model_free(&mb);
        memset(&err, 0, sizeof err);
    }
    /* The float reference on the same input: the yardstick of the int8 run
     * (a batch: image after image, the outputs one after the other). */
    if (m.g) {
        if (enpu_fexec_new(m.g, &fx, &err)) {
            rc = enpu_cli_fail("run", &err);
            goto done;
        }
        for (int64_t k = 0; k < batch; k++) {
            if (enpu_fexec_run(fx, images + k * n_in, &err)) {
                rc = enpu_cli_fail("run", &err);
                goto done;
            }
            for (int o = 0; o < m.g->n_outputs; o++) {
                enpu_buf one;
                if (enpu_fexec_output(fx, o, k ? &one : &fouts[o], &err)) {
                    rc = enpu_cli_fail("run", &err);
                    goto done;
                }
                if (k == 0) {
                    n_fouts++;
                    continue;
                }
                rc = run_append_buf(&fouts[o], &one, &err);
                enpu_buf_free(&one);
                if (rc) {
                    rc = enpu_cli_fail("run", &err);
                    goto done;
                }
            }
        }
    }

    enpu_sim_opts base = {0};
    base.per_cycle = per_cycle;
    int worst = 0;
    for (int a = 0; a < n_arch; a++) {
        runs[a].trace = a == 0 ? trace : NULL;
        runs[a].vcd = a == 0 ? vcd : NULL;
        base.trace = runs[a].trace != NULL;
        base.vcd = runs[a].vcd != NULL;
        base.vcd_from = w0;
        base.vcd_to = w1;
        enpu_err e = {0};
        runs[a].note = a == 0 ? text : NULL;
        /* the whole batch in one program: the unsplit input files */
        runs[a].batched = mb.g && enpu_model_batched_arch(&runs[a].arch, batch);
        int st = run_arch(&runs[a], runs[a].batched ? &mb : &m, is_prog ? model : NULL,
                          runs[a].batched ? bufs : images, m.tfl ? (const int8_t *const *)ins8 : NULL, n_in,
                          runs[a].batched ? 1 : (int)batch, (enpu_sim_mode)mode, &base, quiet || a > 0,
                          a == 0 && m.g, &e);
        runs[a].status = st;
        if (st) {
            snprintf(runs[a].error, sizeof runs[a].error, "error [%s]: %s", enpu_status_name(e.code), e.msg);
            if (n_arch == 1 || st == ENPU_E_MISMATCH) fprintf(stderr, "easynpu run: %s\n", runs[a].error);
            int code = enpu_exit_code(e.code);
            /* A mismatch (1) is the worst news; otherwise keep the first failure. */
            if (code == 1 || !worst) worst = code;
        }
    }
    if (!runs[0].ran) {
        rc = worst ? worst : 2;
        if (n_arch > 1) run_print_comparison(text, runs, n_arch);
        goto done;
    }
    const arch_run *r0 = &runs[0];
    fprintf(text, "model %s on arch '%s' (%s mode)\n", model, r0->arch.name, enpu_sim_mode_name((enpu_sim_mode)mode));
    enpu_report_sim_table(text, &r0->arch, &r0->res);
    const int qbits = r0->qg ? enpu_qgraph_bits(r0->qg) : 8;
    if (batch > 1)
        fprintf(text, "batch: %lld images %s: %llu cycles = %.3f us at %g MHz (%llu per image)\n",
                (long long)batch,
                r0->batched ? "in one program (rs_conv of several images per pass)"
                            : "through the program one after the other",
                (unsigned long long)r0->batch_cycles, (double)r0->batch_cycles / r0->arch.clock_mhz,
                r0->arch.clock_mhz, (unsigned long long)(r0->batch_cycles / (uint64_t)batch));
    if (r0->golden_checked)
        fprintf(text, "bit-exact: yes (%d layer outputs and %d model output(s) equal the golden int%d "
               "reference, element by element)\n",
               r0->golden_layers, r0->res.n_outputs, qbits);
    else if (r0->status == ENPU_E_MISMATCH)
        fprintf(text, "bit-exact: NO (%s)\n", r0->error);
    else if (r0->res.checked)
        fprintf(text, "bit-exact: yes against the simulator's functional replay (no golden reference for a "
               "compiled program; give the model to check against it)\n");
    else
        fprintf(text, "bit-exact: not checked\n");
    for (int i = 0; i < r0->res.n_outputs; i++) {
        print_output(text, &r0->res.outputs[i], i < n_fouts ? &fouts[i] : NULL, qbits);
        if (m.tfl && r0->res.raw_outputs && i < m.tfl->n_outputs)
            run_tflite_output(text, m.tfl, i, &r0->res.raw_outputs[i], NULL, &err);
    }
    /* every output against the float reference (an .onnx model only) */
    for (; n_acc < n_fouts && n_acc < r0->res.n_outputs; n_acc++) {
        acc[n_acc] = enpu_accuracy_of(&fouts[n_acc], &r0->res.outputs[n_acc]);
        acc[n_acc].bits = qbits;
        enpu_accuracy_print(text, &acc[n_acc]);
    }
    if (n_acc > 0) enpu_accuracy_warn(text, acc, n_acc, r0->qg, &r0->qrep, m.calib, m.n_calib);
    if (wav) enpu_cli_audio_report(text, &audio, &r0->arch, &r0->res);
    if (n_arch > 1) run_print_comparison(text, runs, n_arch);
    if (n_out && n_out != r0->res.n_outputs) {
        rc = enpu_cli_usage("run", "%s has %d output(s), %d --output given", model, r0->res.n_outputs, n_out);
        goto done;
    }
    for (int i = 0; i < n_out; i++) {
        if (m.tfl ? run_tflite_output(text, m.tfl, i, r0->res.raw_outputs ? &r0->res.raw_outputs[i] : NULL,
                                  outs[i], &err)
                  : enpu_tensor_write(outs[i], &r0->res.outputs[i], &err)) {
            rc = enpu_cli_fail("run", &err);
            goto done;
        }
        fprintf(text, "wrote %s\n", outs[i]);
    }
    if (json && run_write_json(json, model, runs, n_arch, (int)batch, acc, n_acc,
                           wav ? enpu_cli_audio_json(&audio, &r0->arch, &r0->res) : NULL, &err)) {
        rc = enpu_cli_fail("run", &err);
        goto done;
    }
    if (svg) {
        /* one chart per architecture that ran, one below the other */
        char titles[MAX_ARCHS][512];
        const char *tp[MAX_ARCHS];
        const enpu_arch *ap[MAX_ARCHS];
        const enpu_sim_result *rp[MAX_ARCHS];
        int nc = 0;
        for (int a = 0; a < n_arch; a++) {
            if (!runs[a].ran) continue;
            snprintf(titles[nc], sizeof titles[nc], "%s on %s", model, runs[a].arch.name);
            tp[nc] = titles[nc], ap[nc] = &runs[a].arch, rp[nc] = &runs[a].res;
            nc++;
        }
        if (enpu_svg_chart_write_multi(svg, tp, ap, rp, nc, &err)) {
            rc = enpu_cli_fail("run", &err);
            goto done;
        }
    }
    for (int i = 0; i < 4; i++) {
        const char *w = (const char *[]){json, trace, vcd, svg}[i];
        if (w) fprintf(text, "wrote %s\n", w);
    }
    rc = worst;
    /* the gates, after every output was written: bit-exactness (1) first */
    if (!rc && enpu_accuracy_gate(acc, n_acc, min_sqnr, require_top1, &err)) rc = enpu_cli_fail("run", &err);
done:
    for (int a = 0; a < n_arch; a++) arch_run_free(&runs[a]);
    for (int i = 0; i < loaded; i++) enpu_buf_free(&bufs[i]);
    for (int i = 0; i < MAX_FILES; i++) free(ins8[i]);
    if (imgs)
        for (int64_t i = 0; i < batch * n_in; i++) enpu_buf_free(&imgs[i]);
    free(imgs);
    for (int i = 0; i < n_fouts; i++) enpu_buf_free(&fouts[i]);
    enpu_fexec_free(fx);
    enpu_model_free(&m);
    enpu_model_free(&mb);
    enpu_cli_binds_free(&binds);
    enpu_cli_binds_free(&bshapes);
    enpu_cli_audio_close(&audio);
    return rc;
}
