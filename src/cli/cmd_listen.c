/* easynpu listen: keyword spotting over a recording, as a device listening
 * continuously would do it.  The model runs on the simulated NPU on every
 * window (every layer checked against the golden int8 reference), its
 * scores are smoothed over time as TFLite Micro's micro_speech does, and
 * each detection is printed with its time; the report gives the NPU's duty
 * cycle and energy per second of audio (docs/audio.md). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/audio_in.h"
#include "cli/cli.h"
#include "cli/pipeline.h"
#include "easynpu/compiler.h"
#include "easynpu/energy.h"
#include "easynpu/file.h"
#include "easynpu/sim.h"
#include "easynpu/tflite.h"

static const char *HELP =
    "usage: easynpu listen MODEL.tflite --wav FILE.wav [--features NAME] [--labels FILE]\n"
    "                      [--arch A] [--hop MS] [--average-ms MS] [--threshold N]\n"
    "                      [--suppression-ms MS] [--min-count N] [--mode cycle|functional]\n"
    "                      [--scores FILE.csv] [--json FILE]\n"
    "\n"
    "Keyword spotting over a recording (docs/audio.md).  The front end's clip\n"
    "(1 s for mlperf-tiny-kws) slides over the WAV every --hop; each window's\n"
    "features (every frame computed once) go through the int8 model on the\n"
    "simulated NPU, every layer checked against the golden int8 reference;\n"
    "the scores are smoothed as TFLite Micro's micro_speech recognizer does\n"
    "(the average over the last --average-ms; a class is detected when its\n"
    "average passes --threshold and it is new, or --suppression-ms have\n"
    "passed).  Prints each keyword detected with its time (the end of the\n"
    "window, as micro_speech stamps it), then the inferences, the NPU's busy\n"
    "cycles and duty cycle per second of audio at the arch's clock, the\n"
    "energy per second of audio, and the front end's load on the host CPU.\n"
    "\n"
    "  --wav FILE         mono 16-bit WAV (another rate is resampled)\n"
    "  --features NAME    the front end (default mlperf-tiny-kws)\n"
    "  --labels FILE      class names, one per line (default: the front end's)\n"
    "  --arch A           preset or JSON (default easynpu)\n"
    "  --hop MS           between windows (default: the front end's stride, 20 ms;\n"
    "                     a multiple of it)\n"
    "  --average-ms MS    smoothing window (default 1000)\n"
    "  --threshold N      detection threshold on the averaged score 0..255\n"
    "                     (default 120; micro_speech's is 200, docs/audio.md)\n"
    "  --suppression-ms MS  no second detection of the same class sooner\n"
    "                     (default 1500)\n"
    "  --min-count N      results needed in the window (default 3)\n"
    "  --mode M           cycle (default) or functional (no cycles, no energy)\n"
    "  --scores FILE      every window's int8 scores and the smoothed top class, CSV\n"
    "  --json FILE        detections and figures as JSON\n"
    "\n"
    "Exit status: 0 every window bit-exact; 1 a mismatch; 2 bad input or usage;\n"
    "4 an internal error (category `internal`: a bug in EasyNPU).\n";

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out) {
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return enpu_cli_usage("listen", "--%s '%s': an integer %d..%d expected", opt, v, lo, hi);
    *out = (int)x;
    return 0;
}

/* What the run measured, for the report and the JSON. */
typedef struct listen_stats {
    int64_t windows, detections;
    uint64_t cycles, cycles_min, cycles_max;
    double energy_pj;
    int golden_layers;
    double audio_s;
    enpu_frontend_cost fe;
} listen_stats;

typedef struct listen_run {
    enpu_cli_audio audio;
    const char *model;
    enpu_model m;
    enpu_graph *qg;
    enpu_arch arch;
    enpu_program prog;
    bool have_prog;
    enpu_golden_check gc;   /* the simulator's layer callback compares with it */
    enpu_sim *sim;
    enpu_feature_stream *stream;
    enpu_recognizer_opts ro;
    enpu_recognizer *rec;
    int silence, unknown;   /* the front end's classes that are no keyword (-1: none) */
    int hop_samples;
    bool scores_header;     /* the CSV's header is still to write (it names the classes) */
    FILE *scores;
    json_t *dets;
    listen_stats st;
} listen_run;

static int on_layer(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim,
                    enpu_err *err) {
    return enpu_golden_check_layer(ctx, layer, st, sim, err);
}

static void note_detection(listen_run *L, int64_t end_ms, int64_t start, const enpu_recognition *r,
                           int n, FILE *text) {
    const enpu_frontend_desc *fe = L->audio.fe;
    char b[16];
    const char *name = enpu_cli_audio_label(&L->audio, r->top, n, b);
    fprintf(text, "%9.3f s  %-10s score %3d  (window %.3f-%.3f s)\n", (double)end_ms / 1000.0, name,
            r->score, (double)start / fe->sample_rate, (double)end_ms / 1000.0);
    json_t *d = json_object();
    json_object_set_new(d, "time_s", json_real((double)end_ms / 1000.0));
    json_object_set_new(d, "label", json_string(name));
    json_object_set_new(d, "class", json_integer(r->top));
    json_object_set_new(d, "score", json_integer(r->score));
    json_array_append_new(L->dets, d);
    L->st.detections++;
}

/* One window through the NPU (checked against the golden reference) and
 * the recognizer. */
static int one_window(listen_run *L, int64_t w, enpu_sim_mode mode, FILE *text, enpu_err *err) {
    const enpu_frontend_desc *fe = L->audio.fe;
    listen_stats *st = &L->st;
    double feat[4096];
    int64_t start, clamped;
    ENPU_ASSERT((int64_t)fe->n_frames * fe->n_coeffs <= 4096);
    enpu_feature_stream_window(L->stream, w, feat, &start);
    int8_t *q = NULL;
    int rc = enpu_cli_audio_input_i8(L->qg, feat, &q, &clamped, err);
    if (rc) return rc;
    const int8_t *ins[1] = {q};
    enpu_sim_result res;
    memset(&res, 0, sizeof res);
    L->gc.compared = 0;
    rc = enpu_gexec_run_i8(L->gc.ex, ins, err);
    if (!rc) rc = enpu_sim_run_i8(L->sim, ins, 1, &res, err);
    if (!rc) rc = enpu_golden_check_outputs(&L->gc, &res, err);
    free(q);
    if (rc) {
        enpu_sim_result_free(&res);
        return enpu_err_prefix(err, "window at %.3f s", (double)start / fe->sample_rate);
    }
    st->golden_layers = L->gc.compared;
    if (mode == ENPU_SIM_CYCLE) {
        st->cycles += res.total_cycles;
        if (st->windows == 0 || res.total_cycles < st->cycles_min) st->cycles_min = res.total_cycles;
        if (res.total_cycles > st->cycles_max) st->cycles_max = res.total_cycles;
        enpu_energy_costs c;
        enpu_energy e;
        enpu_energy_costs_of(&L->arch, &c);
        enpu_energy_of(&c, res.reads, res.writes, res.uops, &e);
        st->energy_pj += e.total_pj;
    }
    st->windows++;
    /* the scores: int8 as the model gives them (a class vector: the same
     * order in TFLite and the IR) */
    const enpu_buf *raw = res.raw_outputs ? &res.raw_outputs[0] : NULL;
    int n = raw && raw->data && raw->dtype == ENPU_DT_INT8 ? (int)enpu_buf_numel(raw) : 0;
    int8_t scores[ENPU_FRONTEND_MAX_LABELS];
    if (n >= 1 && n <= ENPU_FRONTEND_MAX_LABELS) memcpy(scores, raw->data, (size_t)n);
    enpu_sim_result_free(&res);
    if (n < 1 || n > ENPU_FRONTEND_MAX_LABELS)
        return enpu_fail(err, ENPU_E_INCOMPATIBLE, "%s: output 0 is not a vector of 1..%d int8 class "
                         "scores", L->model, ENPU_FRONTEND_MAX_LABELS);
    int64_t end_ms = (start + fe->clip_samples) * 1000 / fe->sample_rate;
    if (!L->rec) {
        bool fe_classes = !L->audio.names && n == fe->n_labels;
        L->silence = fe_classes ? fe->silence_label : -1;
        L->unknown = fe_classes ? fe->unknown_label : -1;
        rc = enpu_recognizer_new(&L->ro, n, L->silence, &L->rec, err);
        if (rc) return rc;
    }
    enpu_recognition r;
    rc = enpu_recognizer_push(L->rec, end_ms, scores, &r, err);
    if (rc) return rc;
    if (L->scores) {
        char b[16];
        if (L->scores_header) {
            fprintf(L->scores, "start_s,end_s");
            for (int i = 0; i < n; i++) fprintf(L->scores, ",%s", enpu_cli_audio_label(&L->audio, i, n, b));
            fprintf(L->scores, ",smoothed_top,smoothed_score,new\n");
            L->scores_header = false;
        }
        fprintf(L->scores, "%.3f,%.3f", (double)start / fe->sample_rate, (double)end_ms / 1000.0);
        for (int i = 0; i < n; i++) fprintf(L->scores, ",%d", scores[i]);
        fprintf(L->scores, ",%s,%d,%d\n", r.top >= 0 ? enpu_cli_audio_label(&L->audio, r.top, n, b) : "",
                r.score, r.is_new);
    }
    if (r.is_new && r.top >= 0 && r.top != L->silence && r.top != L->unknown)
        note_detection(L, end_ms, start, &r, n, text);
    return 0;
}

/* Model to program: imported, requant fitted, compiled for the arch. */
static int prepare(listen_run *L, const char *arch, enpu_sim_mode mode, FILE *text, enpu_err *err) {
    int rc = enpu_arch_load(arch, &L->arch, err);
    if (!rc) rc = enpu_model_load(&L->m, L->model, NULL, NULL, err);
    if (!rc && !L->m.tfl)
        rc = enpu_fail(err, ENPU_E_USAGE, "listen takes an int8 .tflite model, not %s", L->model);
    if (!rc) rc = enpu_cli_audio_fits(&L->audio, L->model, L->m.tfl, NULL, err);
    if (!rc) rc = enpu_compile_arch_check(&L->arch, err);
    if (!rc) rc = enpu_model_quantize(&L->m, &L->arch, true, &L->qg, NULL, err);
    if (!rc) rc = enpu_model_fit_requant(L->qg, &L->arch, text, err);
    if (rc) return rc;
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    enpu_program_init(&L->prog, &L->arch);
    L->have_prog = true;
    rc = enpu_compile(L->qg, &L->arch, &co, &L->prog, NULL, err);
    if (rc) return enpu_err_prefix(err, "%s", L->model);
    rc = enpu_gexec_new(L->qg, &L->gc.ex, err);
    if (rc) return rc;
    L->gc.qg = L->qg;
    enpu_sim_opts o = {0};
    o.mode = mode;
    o.on_layer = on_layer;
    o.cb_ctx = &L->gc;
    return enpu_sim_new(&L->prog, &L->arch, &o, &L->sim, err);
}

static void report(const listen_run *L, enpu_sim_mode mode, FILE *text) {
    const listen_stats *st = &L->st;
    const enpu_arch *a = &L->arch;
    const enpu_frontend_desc *fe = L->audio.fe;
    double rate = (double)fe->sample_rate / L->hop_samples; /* inferences per second, listening */
    fprintf(text, "\n%lld window(s) of %.3f s every %.3f s over %.3f s of audio (listening: %.2f "
            "inferences per second of audio); %lld keyword detection(s)\n", (long long)st->windows,
            (double)fe->clip_samples / fe->sample_rate, (double)L->hop_samples / fe->sample_rate,
            st->audio_s, rate, (long long)st->detections);
    fprintf(text, "bit-exact: yes (every window: %d layer outputs and the output equal the golden int8 "
            "reference, element by element)\n", st->golden_layers);
    if (mode == ENPU_SIM_CYCLE && st->windows > 0) {
        double per = (double)st->cycles / (double)st->windows, busy = per * rate;
        fprintf(text, "NPU: %llu cycles per inference", (unsigned long long)st->cycles_min);
        if (st->cycles_max != st->cycles_min)
            fprintf(text, " (..%llu)", (unsigned long long)st->cycles_max);
        fprintf(text, " on arch '%s'; busy %.0f cycles per second of audio = duty cycle %.2f%% at %g "
                "MHz\n", a->name, busy, 100.0 * busy / (a->clock_mhz * 1e6), a->clock_mhz);
        fprintf(text, "NPU energy: %.3f uJ per inference, %.1f uJ per second of audio = %.3f mW "
                    "average (%g nm, %g V; dynamic, counted actions)\n",
                    st->energy_pj / (double)st->windows / 1e6,
                    st->energy_pj / (double)st->windows * rate / 1e6,
                    st->energy_pj / (double)st->windows * rate / 1e9, a->tech_nm, a->vdd_v);
    }
    fprintf(text, "front end '%s' on the host CPU (%lld MHz): %llu host cycles per inference (%d new "
            "frame(s) and a clip), %.0f per second of audio = %.2f%% of its time\n", fe->name,
            (long long)a->hostcpu_mhz, (unsigned long long)st->fe.host_cycles,
            L->hop_samples / fe->stride_samples, (double)st->fe.host_cycles * rate,
            100.0 * (double)st->fe.host_cycles * rate / ((double)a->hostcpu_mhz * 1e6));
    fprintf(text, "(per second of audio: one inference every %.3f s, as a device listening "
            "continuously runs them)\n", 1.0 / rate);
}

static int write_json(const char *path, const listen_run *L, enpu_sim_mode mode, enpu_err *err) {
    const listen_stats *st = &L->st;
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(L->model));
    json_object_set_new(o, "wav", json_string(L->audio.path));
    json_object_set_new(o, "arch", json_string(L->arch.name));
    json_object_set_new(o, "frontend", json_string(L->audio.fe->name));
    json_object_set_new(o, "audio_s", json_real(st->audio_s));
    json_object_set_new(o, "hop_s", json_real((double)L->hop_samples / L->audio.fe->sample_rate));
    json_object_set_new(o, "windows", json_integer(st->windows));
    json_object_set_new(o, "bit_exact", json_true());
    json_object_set_new(o, "detections", json_incref(L->dets));
    double rate = (double)L->audio.fe->sample_rate / L->hop_samples;
    json_object_set_new(o, "inferences_per_audio_s", json_real(rate));
    if (mode == ENPU_SIM_CYCLE && st->windows > 0) {
        double per = (double)st->cycles / (double)st->windows;
        json_object_set_new(o, "cycles_per_inference", json_integer((json_int_t)st->cycles_max));
        json_object_set_new(o, "busy_cycles_per_audio_s", json_real(per * rate));
        json_object_set_new(o, "duty_cycle", json_real(per * rate / (L->arch.clock_mhz * 1e6)));
        json_object_set_new(o, "energy_uj_per_inference", json_real(st->energy_pj / (double)st->windows / 1e6));
        json_object_set_new(o, "energy_uj_per_audio_s",
                            json_real(st->energy_pj / (double)st->windows * rate / 1e6));
    }
    json_object_set_new(o, "frontend_host_cycles_per_inference", json_integer((json_int_t)st->fe.host_cycles));
    json_object_set_new(o, "frontend_host_cycles_per_audio_s", json_real((double)st->fe.host_cycles * rate));
    char *text = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    int rc = enpu_file_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

int enpu_cmd_listen(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {
        {"wav", required_argument, 0, 'W'},       {"features", required_argument, 0, 'F'},
        {"labels", required_argument, 0, 'L'},    {"arch", required_argument, 0, 'a'},
        {"hop", required_argument, 0, 'h'},       {"average-ms", required_argument, 0, 'A'},
        {"threshold", required_argument, 0, 'T'}, {"suppression-ms", required_argument, 0, 'S'},
        {"min-count", required_argument, 0, 'C'}, {"mode", required_argument, 0, 'm'},
        {"scores", required_argument, 0, 's'},    {"json", required_argument, 0, 'j'},
        {0, 0, 0, 0}};
    const char *wav = NULL, *features = NULL, *labels = NULL, *arch = "easynpu", *scores = NULL,
               *json = NULL;
    int hop_ms = -1, mode = ENPU_SIM_CYCLE, c;
    listen_run L;
    memset(&L, 0, sizeof L);
    enpu_recognizer_opts_default(&L.ro);
    /* micro_speech's threshold is 200 for a model trained with +-100 ms of
     * time shift, whose scores stay high while a word crosses the window;
     * MLPerf Tiny's DS-CNN was trained without (get_dataset.py shifts by a
     * fixed 2 samples, padded and sliced back), so a word tops its scores
     * for 0.2-0.6 s of the 1 s average (docs/audio.md "Streaming") */
    L.ro.threshold = 120;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'W': wav = optarg; break;
        case 'F': features = optarg; break;
        case 'L': labels = optarg; break;
        case 'a': arch = optarg; break;
        case 's': scores = optarg; break;
        case 'j': json = optarg; break;
        case 'h':
            if (parse_int("hop", optarg, 1, 60000, &hop_ms)) return 2;
            break;
        case 'A':
            if (parse_int("average-ms", optarg, 1, 60000, &L.ro.average_ms)) return 2;
            break;
        case 'T':
            if (parse_int("threshold", optarg, 0, 255, &L.ro.threshold)) return 2;
            break;
        case 'S':
            if (parse_int("suppression-ms", optarg, 0, 3600000, &L.ro.suppression_ms)) return 2;
            break;
        case 'C':
            if (parse_int("min-count", optarg, 1, 100000, &L.ro.min_count)) return 2;
            break;
        case 'm':
            mode = enpu_sim_mode_parse(optarg);
            if (mode < 0) return enpu_cli_usage("listen", "--mode '%s': expected cycle or functional", optarg);
            break;
        default: return enpu_cli_usage("listen", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1) return enpu_cli_usage("listen", "expected one MODEL.tflite");
    if (!wav) return enpu_cli_usage("listen", "--wav FILE is required");
    L.model = argv[optind];
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, L.model);
    enpu_cli_io_in(&io, wav);
    enpu_cli_io_in(&io, labels);
    enpu_cli_io_in(&io, enpu_cli_arch_file(arch));
    enpu_cli_io_out(&io, scores);
    enpu_cli_io_out(&io, json);
    if (enpu_cli_check_io("listen", &io)) return 2;
    FILE *text = enpu_cli_text(&io);
    enpu_err err = {0};
    int rc = enpu_cli_audio_open(&L.audio, wav, features, labels, text, &err);
    const enpu_frontend_desc *fe = L.audio.fe;
    if (!rc) {
        int stride_ms = fe ? fe->stride_samples * 1000 / fe->sample_rate : 1;
        if (hop_ms < 0) hop_ms = stride_ms;
        L.hop_samples = (int)((int64_t)hop_ms * fe->sample_rate / 1000);
        if (hop_ms % stride_ms || (int64_t)L.hop_samples * 1000 != (int64_t)hop_ms * fe->sample_rate)
            rc = enpu_fail(&err, ENPU_E_USAGE, "--hop %d: a multiple of the front end's stride (%d ms) "
                           "expected", hop_ms, stride_ms);
    }
    if (!rc) rc = prepare(&L, arch, (enpu_sim_mode)mode, text, &err);
    if (!rc) rc = enpu_feature_stream_new(L.audio.f, &L.audio.audio, L.hop_samples, &L.stream, &err);
    L.dets = json_array();
    if (!rc && scores) {
        /* written whole at the end, atomically, like every output */
        L.scores = tmpfile();
        if (!L.scores) rc = enpu_fail(&err, ENPU_E_IO, "%s: cannot make a temporary file", scores);
        else L.scores_header = true;
    }
    if (!rc) {
        L.st.audio_s = (double)L.audio.audio.n / fe->sample_rate;
        if (L.st.audio_s < (double)fe->clip_samples / fe->sample_rate)
            L.st.audio_s = (double)fe->clip_samples / fe->sample_rate;
        fprintf(text, "listening to %s (%.3f s) with %s on arch '%s' (%s mode); keywords heard:\n", wav,
                (double)L.audio.audio.n / fe->sample_rate, L.model, L.arch.name,
                enpu_sim_mode_name((enpu_sim_mode)mode));
    }
    int64_t nw = rc ? 0 : enpu_feature_stream_windows(L.stream);
    for (int64_t w = 0; w < nw && !rc; w++) rc = one_window(&L, w, (enpu_sim_mode)mode, text, &err);
    if (!rc) {
        /* per inference, listening: the new frames of one hop, one clip,
         * the peaks of the hop's blocks and of the clip's blocks */
        enpu_frontend_host_cost(fe, &L.arch, L.hop_samples / fe->stride_samples, 1,
                                L.hop_samples + fe->clip_samples / fe->stride_samples, &L.st.fe);
        if (L.st.detections == 0) fprintf(text, "  (none)\n");
        report(&L, (enpu_sim_mode)mode, text);
    }
    if (!rc && scores) {
        long len = ftell(L.scores);
        char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
        rewind(L.scores);
        if (!buf || fread(buf, 1, (size_t)len, L.scores) != (size_t)len)
            rc = enpu_fail(&err, ENPU_E_IO, "%s: cannot read back the scores", scores);
        else rc = enpu_file_write_atomic(scores, buf, (size_t)len, &err);
        free(buf);
        if (!rc) fprintf(text, "wrote %s\n", scores);
    }
    if (!rc && json) {
        rc = write_json(json, &L, (enpu_sim_mode)mode, &err);
        if (!rc) fprintf(text, "wrote %s\n", json);
    }
    int code = rc ? enpu_cli_fail("listen", &err) : 0;
    if (L.scores) fclose(L.scores);
    json_decref(L.dets);
    enpu_recognizer_free(L.rec);
    enpu_feature_stream_free(L.stream);
    enpu_sim_free(L.sim);
    enpu_gexec_free(L.gc.ex);
    if (L.have_prog) enpu_program_free(&L.prog);
    enpu_graph_free(L.qg);
    enpu_model_free(&L.m);
    enpu_cli_audio_close(&L.audio);
    return code;
}
