/* easynpu sweep MODEL... (--param KEY=VALUES... | --space FILE) -o RESULTS.csv
 *
 * The design-space sweep of docs/energy.md: one coordinator (the main
 * thread of the process, or of MPI rank 0) owns the results, hands out
 * chunks of points, writes the results file every few seconds and draws the
 * progress bar; the points are evaluated by the engine's threads (a compute
 * thread on the coordinator's side, and every other MPI rank).  Under
 * `mpirun -np N` (a build with MPI: ENPU_HAVE_MPI) the ranks ask rank 0 for
 * chunks and send their results back as the results file's CSV rows, so
 * every way of running a sweep writes the same bytes. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifdef ENPU_HAVE_MPI
#include <mpi.h>
#endif

#include "cli/cli.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "easynpu/file.h"
#include "easynpu/sweep.h"
#include "isa/isa_internal.h"
#include "report/sweep_report.h"

static const char *HELP =
    "usage: easynpu sweep MODEL... (--param KEY=VALUES... | --space FILE.json)\n"
    "                     -o RESULTS.csv [--json FILE] [--svg FILE] [--arch A]\n"
    "                     [--calib DIR...] [--random N [--seed S]] [--simulate [--input FILE...]]\n"
    "                     [--jobs N] [--checkpoint SECONDS] [--fresh]\n"
    "\n"
    "Evaluates every point of a grid (or a seeded random sample of it) over fields\n"
    "of the architecture description, on every model: cycles, utilization, energy\n"
    "per inference (by unit), average power, energy-delay product and area, or why\n"
    "the point does not fit; then the Pareto front of latency, energy and area\n"
    "(docs/energy.md).  A point is evaluated with the compiler's schedule model and\n"
    "the analytic access counts (equal to the simulator's; about 2.5 ms a point for\n"
    "the default model: layers are tiled once per distinct set of the parameters\n"
    "they depend on, the model quantized once per numeric widths), or\n"
    "with the cycle simulator (--simulate).\n"
    "\n"
    "  --param KEY=VALUES  a field of the arch (easynpu arch lists them) and its\n"
    "                      values: a,b,c or lo:hi (step 1) or lo:hi:+step or\n"
    "                      lo:hi:xfactor; repeatable, the first varies slowest.\n"
    "                      bus_bits, ifmap_pads and weight_pad_groups follow pes\n"
    "                      unless swept themselves\n"
    "  --space FILE.json   {\"params\": {\"pes\": [8,16,32], \"psum_depth\": \"16:256:x2\"},\n"
    "                      \"random\": N, \"seed\": S} (before any --param)\n"
    "  --arch A            the base every point starts from (default easynpu)\n"
    "  --calib DIR         calibration inputs of the .onnx models: once for all, or\n"
    "                      once per model in order\n"
    "  --random N          N distinct points drawn from the grid (--seed, default 1)\n"
    "  --simulate          the cycle simulator instead of the schedule model; inputs\n"
    "                      from --input FILE (once per model) or zeros (timing and\n"
    "                      accesses do not depend on the values)\n"
    "  --jobs N            threads (default: every core; under MPI, the cores of the\n"
    "                      node shared by its ranks)\n"
    "  -o FILE             the results, CSV, one row per point and model; written\n"
    "                      every few seconds: run the same command again after an\n"
    "                      interruption and it resumes from this file\n"
    "  --checkpoint S      write FILE every S seconds (default 5)\n"
    "  --fresh             start over when FILE holds another sweep's results\n"
    "  --json FILE         the results, the sweep and the Pareto front as JSON\n"
    "  --svg FILE          energy and area against latency, the front highlighted\n"
    "\n"
    "Under MPI: mpirun -np N easynpu sweep ... (rank 0 writes the files; a build\n"
    "without MPI sweeps on one machine).  Exit status: 0 done (points that do not\n"
    "fit are results, not errors); 2 bad usage or input; 4 an internal error (a\n"
    "bug in EasyNPU, e.g. a simulated point that stopped making progress); 130\n"
    "interrupted (resume by running the same command again).\n";

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap_ms(int ms) {
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- models ------------------------------------------------------------------ */

typedef struct sweep_cli {
    int n_models;
    const char *paths[ENPU_SWEEP_MAX_MODELS];
    const char *calib[ENPU_SWEEP_MAX_MODELS];
    enpu_model models[ENPU_SWEEP_MAX_MODELS];
    enpu_buf inputs[ENPU_SWEEP_MAX_MODELS];
    enpu_sweep_model sm[ENPU_SWEEP_MAX_MODELS];
} sweep_cli;

static int quantize_cb(void *ctx, int model, const enpu_arch *a, enpu_graph **qg, enpu_err *err) {
    sweep_cli *c = ctx;
    return enpu_model_quantize(&c->models[model], a, true, qg, NULL, err);
}

/* ---- the run: results, the work queue, checkpoints ---------------------------- */

typedef struct run {
    const enpu_sweep_space *space;
    enpu_sweep_info info;
    enpu_sweeper *engine;
    int n_models;
    pthread_mutex_t mu;           /* guards everything below */
    enpu_point_result *results;   /* n_points * n_models, by point order then model */
    uint64_t *todo, n_todo, next_todo;
    uint64_t done_items, total_items;
    bool local_done;
    int chunk;                    /* points per chunk of the local engine */
    const char *out;
    double last_write;
} run;

/* Position of grid point `point` in the evaluation order, or UINT64_MAX. */
static uint64_t point_pos(const enpu_sweep_space *s, uint64_t point) {
    if (!s->sample) return point < s->n_grid ? point : UINT64_MAX;
    uint64_t lo = 0, hi = s->n_points;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->sample[mid] < point) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n_points && s->sample[lo] == point ? lo : UINT64_MAX;
}

static enpu_point_result *slot_of(void *ctx, uint64_t point, int model) {
    run *r = ctx;
    uint64_t k = point_pos(r->space, point);
    if (k == UINT64_MAX || model < 0 || model >= r->n_models) return NULL;
    return &r->results[k * (uint64_t)r->n_models + (uint64_t)model];
}

/* Up to max points not yet handed out (none once stopped); under r->mu. */
static uint64_t take_chunk(run *r, uint64_t *pts, uint64_t max) {
    uint64_t n = 0;
    while (n < max && r->next_todo < r->n_todo && !g_stop) pts[n++] = r->todo[r->next_todo++];
    return n;
}

/* Copies finished results into their slots; under r->mu. */
static void store(run *r, const enpu_point_result *res, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        if (res[i].status == ENPU_PT_PENDING) continue;
        enpu_point_result *s = slot_of(r, res[i].point, res[i].model);
        if (!s || s->status != ENPU_PT_PENDING) continue;
        *s = res[i];
        r->done_items++;
    }
}

/* Writes the results file (the rows finished so far, in point order). */
static int checkpoint(run *r, enpu_err *err) {
    pthread_mutex_lock(&r->mu);
    char *text = enpu_sweep_csv_text(&r->info, r->results, r->space->n_points * (uint64_t)r->n_models);
    pthread_mutex_unlock(&r->mu);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory writing the results", r->out);
    int rc = enpu_file_write_atomic(r->out, text, strlen(text), err);
    free(text);
    r->last_write = now_s();
    return rc;
}

static void *local_compute(void *arg) {
    run *r = arg;
    uint64_t *pts = malloc((size_t)r->chunk * sizeof *pts);
    enpu_point_result *res = malloc((size_t)r->chunk * (size_t)r->n_models * sizeof *res);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        uint64_t n = pts && res ? take_chunk(r, pts, (uint64_t)r->chunk) : 0;
        pthread_mutex_unlock(&r->mu);
        if (!n) break;
        enpu_err err = {0};
        if (enpu_sweep_eval(r->engine, pts, n, res, &err)) break;
        pthread_mutex_lock(&r->mu);
        store(r, res, n * (uint64_t)r->n_models);
        pthread_mutex_unlock(&r->mu);
    }
    free(pts);
    free(res);
    pthread_mutex_lock(&r->mu);
    r->local_done = true;
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

#ifdef ENPU_HAVE_MPI
enum { TAG_REQUEST = 1, TAG_WORK = 2 };

/* Rank 0: a request is a uint64 (points wanted) and the CSV rows of the
 * requester's last chunk; the answer the next chunk (empty: stop). */
static int serve_requests(run *r, int *active, enpu_err *err) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return 0;
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    char *buf = malloc((size_t)count + 1);
    if (!buf) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    MPI_Recv(buf, count, MPI_CHAR, st.MPI_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    uint64_t want = 0;
    int rc = 0;
    if (count >= 8) memcpy(&want, buf, 8);
    if (count > 8) {
        uint64_t rows = 0;
        pthread_mutex_lock(&r->mu);
        rc = enpu_sweep_csv_read(&r->info, buf + 8, (size_t)count - 8, "results from an MPI rank",
                                 slot_of, r, &rows, err);
        r->done_items += rows;
        pthread_mutex_unlock(&r->mu);
    }
    free(buf);
    if (rc) return rc;
    if (want > 4096) want = 4096;
    uint64_t pts[4096];
    pthread_mutex_lock(&r->mu);
    uint64_t n = take_chunk(r, pts, want);
    pthread_mutex_unlock(&r->mu);
    MPI_Send(pts, (int)n, MPI_UINT64_T, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
    if (!n) --*active;
    return 1;
}

/* Ranks above 0: ask for chunks until an empty one comes. */
static int mpi_worker(enpu_sweeper *engine, const enpu_sweep_info *info, int n_models, int chunk,
                      enpu_err *err) {
    uint64_t *pts = malloc((size_t)chunk * sizeof *pts);
    enpu_point_result *res = malloc((size_t)chunk * (size_t)n_models * sizeof *res);
    uint64_t n = 0;
    int rc = 0;
    if (!pts || !res) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    for (; !rc;) {
        enpu_sb b = {0};
        uint64_t want = (uint64_t)chunk;
        enpu_sb_put(&b, &want, 8);
        for (uint64_t i = 0; i < n * (uint64_t)n_models; i++) enpu_sweep_csv_row(&b, info, &res[i]);
        if (b.oom) {
            enpu_sb_free(&b);
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            break;
        }
        MPI_Send(b.s, (int)b.len, MPI_CHAR, 0, TAG_REQUEST, MPI_COMM_WORLD);
        enpu_sb_free(&b);
        MPI_Status st;
        int got = 0;
        MPI_Recv(pts, chunk, MPI_UINT64_T, 0, TAG_WORK, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_UINT64_T, &got);
        if (got <= 0) break;
        n = (uint64_t)got;
        rc = enpu_sweep_eval(engine, pts, n, res, err);
    }
    free(pts);
    free(res);
    return rc;
}
#endif

/* ---- the command ------------------------------------------------------------- */

static uint32_t file_crc(const char *path, uint32_t crc) {
    uint8_t *buf = NULL;
    size_t n = 0;
    enpu_err e = {0};
    if (enpu_file_read(path, (size_t)1 << 31, &buf, &n, &e)) return crc;
    crc = (uint32_t)crc32(crc, buf, (uInt)n);
    free(buf);
    return crc;
}

/* The sweep id: the CRC32 of everything a result depends on (the space,
 * each model's bytes and calibration, the mode). */
static int sweep_id(const enpu_sweep_space *s, const sweep_cli *c, bool simulate, char id[9],
                    enpu_err *err) {
    char *t = enpu_sweep_space_text(s);
    if (!t) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)t, (uInt)strlen(t));
    free(t);
    for (int m = 0; m < c->n_models; m++) {
        char line[4200];
        snprintf(line, sizeof line, "model %s calib %s\n", c->paths[m], c->calib[m] ? c->calib[m] : "-");
        crc = (uint32_t)crc32(crc, (const Bytef *)line, (uInt)strlen(line));
        crc = file_crc(c->paths[m], crc);
    }
    crc = (uint32_t)crc32(crc, (const Bytef *)(simulate ? "simulate" : "model"), simulate ? 8 : 5);
    snprintf(id, 9, "%08" PRIx32, crc);
    return 0;
}

/* Reads an existing results file of this sweep (fresh: ignores it). */
static int resume(run *r, bool fresh, uint64_t *resumed, enpu_err *err) {
    *resumed = 0;
    if (access(r->out, F_OK) != 0 || fresh) return 0;
    uint8_t *buf = NULL;
    size_t n = 0;
    int rc = enpu_file_read(r->out, (size_t)1 << 34, &buf, &n, err);
    if (rc) return rc;
    enpu_sb h = {0};
    enpu_sweep_csv_header(&h, &r->info);
    char *hdr = enpu_sb_take(&h);
    if (!hdr) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    else if (n < strlen(hdr) || memcmp(buf, hdr, strlen(hdr)) != 0)
        rc = enpu_fail(err, ENPU_E_USAGE,
                       "%s: exists and is not a results file of a sweep over these parameters (its "
                       "header differs); give another -o, or --fresh to start over",
                       r->out);
    else {
        size_t hl = strlen(hdr);
        rc = enpu_sweep_csv_read(&r->info, (const char *)buf + hl, n - hl, r->out, slot_of, r, resumed, err);
        if (rc && strstr(err->msg, "not of this sweep"))
            enpu_err_prefix(err, "resuming (give another -o, or --fresh to start over)");
    }
    free(hdr);
    free(buf);
    return rc;
}

typedef struct opts {
    const char *out, *json, *svg, *arch, *space_file;
    const char *params[ENPU_SWEEP_MAX_PARAMS + 1];
    int n_params;
    const char *calib[ENPU_SWEEP_MAX_MODELS], *input[ENPU_SWEEP_MAX_MODELS];
    int n_calib, n_input;
    uint64_t random, seed;
    bool have_random, have_seed, simulate, fresh;
    int jobs;
    double checkpoint;
} opts;

static int parse_u64(const char *s, uint64_t *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || errno || *s == '-') return -1;
    *v = x;
    return 0;
}

static int parse_opts(int argc, char **argv, opts *o, sweep_cli *c) {
    static const struct option lo[] = {
        {"output", required_argument, 0, 'o'}, {"json", required_argument, 0, 'j'},
        {"svg", required_argument, 0, 'S'},    {"arch", required_argument, 0, 'A'},
        {"space", required_argument, 0, 's'},  {"param", required_argument, 0, 'p'},
        {"calib", required_argument, 0, 'c'},  {"input", required_argument, 0, 'i'},
        {"random", required_argument, 0, 'r'}, {"seed", required_argument, 0, 'e'},
        {"simulate", no_argument, 0, 'm'},     {"jobs", required_argument, 0, 'J'},
        {"fresh", no_argument, 0, 'f'},        {"checkpoint", required_argument, 0, 'k'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->arch = "easynpu";
    o->seed = 1;
    o->checkpoint = 5;
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
        uint64_t v;
        switch (ch) {
        case 'o': o->out = optarg; break;
        case 'j': o->json = optarg; break;
        case 'S': o->svg = optarg; break;
        case 'A': o->arch = optarg; break;
        case 's': o->space_file = optarg; break;
        case 'p':
            if (o->n_params == ENPU_SWEEP_MAX_PARAMS)
                return enpu_cli_usage("sweep", "more than %d --param", ENPU_SWEEP_MAX_PARAMS);
            o->params[o->n_params++] = optarg;
            break;
        case 'c':
        case 'i':
            if ((ch == 'c' ? o->n_calib : o->n_input) == ENPU_SWEEP_MAX_MODELS)
                return enpu_cli_usage("sweep", "more than %d --%s", ENPU_SWEEP_MAX_MODELS,
                                      ch == 'c' ? "calib" : "input");
            if (ch == 'c') o->calib[o->n_calib++] = optarg;
            else o->input[o->n_input++] = optarg;
            break;
        case 'r':
            if (parse_u64(optarg, &o->random) || o->random == 0)
                return enpu_cli_usage("sweep", "--random '%s': a positive number of points", optarg);
            o->have_random = true;
            break;
        case 'e':
            if (parse_u64(optarg, &o->seed)) return enpu_cli_usage("sweep", "--seed '%s': a non-negative integer", optarg);
            o->have_seed = true;
            break;
        case 'k': {
            char *end;
            o->checkpoint = strtod(optarg, &end);
            if (*end || !(o->checkpoint > 0 && o->checkpoint <= 86400))
                return enpu_cli_usage("sweep", "--checkpoint '%s': seconds in (0, 86400]", optarg);
            break;
        }
        case 'm': o->simulate = true; break;
        case 'f': o->fresh = true; break;
        case 'J':
            if (parse_u64(optarg, &v) || v < 1 || v > 1024)
                return enpu_cli_usage("sweep", "--jobs '%s': 1..1024 threads", optarg);
            o->jobs = (int)v;
            break;
        default: return enpu_cli_usage("sweep", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    c->n_models = argc - optind;
    if (c->n_models < 1) return enpu_cli_usage("sweep", "expected one or more models (.onnx or .qjson)");
    if (c->n_models > ENPU_SWEEP_MAX_MODELS) return enpu_cli_usage("sweep", "at most %d models", ENPU_SWEEP_MAX_MODELS);
    if (!o->out) return enpu_cli_usage("sweep", "-o RESULTS.csv is required (the results and the resume point)");
    if (!o->n_params && !o->space_file) return enpu_cli_usage("sweep", "give --param KEY=VALUES or --space FILE.json");
    if (o->n_calib > 1 && o->n_calib != c->n_models)
        return enpu_cli_usage("sweep", "%d --calib for %d models: give one for all, or one per model",
                              o->n_calib, c->n_models);
    if (o->n_input && (!o->simulate || o->n_input != c->n_models))
        return enpu_cli_usage("sweep", "--input is for --simulate, one per model");
    if (o->have_seed && !o->have_random) return enpu_cli_usage("sweep", "--seed goes with --random");
    for (int m = 0; m < c->n_models; m++) {
        c->paths[m] = argv[optind + m];
        for (int k = 0; k < m; k++)
            if (strcmp(c->paths[k], c->paths[m]) == 0)
                return enpu_cli_usage("sweep", "model '%s' given twice", c->paths[m]);
        c->calib[m] = o->n_calib == 1 ? o->calib[0] : o->n_calib ? o->calib[m] : NULL;
        if (strcmp(enpu_path_ext(c->paths[m]), ".qjson") == 0) c->calib[m] = NULL;
    }
    return 0;
}

/* Everything before the run; each MPI rank does it (same files, same
 * space).  Returns an exit code, 0 when ready. */
static int setup(const opts *o, sweep_cli *c, enpu_sweep_space *space, char id[9], bool loud) {
    enpu_cli_io io = {0};
    for (int m = 0; m < c->n_models; m++) {
        enpu_cli_io_in(&io, c->paths[m]);
        enpu_cli_io_list(&io, c->calib[m]);
        enpu_cli_io_in(&io, o->n_input ? o->input[m] : NULL);
    }
    enpu_cli_io_in(&io, enpu_cli_arch_file(o->arch));
    enpu_cli_io_in(&io, o->space_file);
    enpu_cli_io_out(&io, o->out);
    enpu_cli_io_out(&io, o->json);
    enpu_cli_io_out(&io, o->svg);
    /* only rank 0 writes, so only it checks (and says) what it will write */
    if (loud && enpu_cli_check_io("sweep", &io)) return 2;
    enpu_err err = {0};
    enpu_arch base;
    int rc = enpu_arch_load(o->arch, &base, &err);
    enpu_sweep_space_init(space, &base);
    if (!rc && o->space_file) {
        uint8_t *buf = NULL;
        size_t n = 0;
        rc = enpu_file_read(o->space_file, (size_t)1 << 20, &buf, &n, &err);
        if (!rc) rc = enpu_sweep_space_from_json(space, (const char *)buf, n, o->space_file, &err);
        free(buf);
    }
    for (int i = 0; !rc && i < o->n_params; i++) rc = enpu_sweep_space_add_arg(space, o->params[i], &err);
    if (!rc && o->have_random) {
        if (space->sample) rc = enpu_fail(&err, ENPU_E_USAGE, "--random and a \"random\" in %s", o->space_file);
        else rc = enpu_sweep_space_sample(space, o->random, o->seed, &err);
    }
    if (!rc && space->n_points > ENPU_SWEEP_MAX_POINTS)
        rc = enpu_fail(&err, ENPU_E_USAGE,
                       "the grid has %" PRIu64 " points, more than %d: sample it with --random N",
                       space->n_points, ENPU_SWEEP_MAX_POINTS);
    for (int m = 0; !rc && m < c->n_models; m++) {
        rc = enpu_model_load(&c->models[m], c->paths[m], c->calib[m], NULL, &err);
        if (!rc && o->n_input) {
            rc = enpu_tensor_read(o->input[m], &c->inputs[m], &err);
            if (!rc) rc = enpu_buf_to_f32(&c->inputs[m], &err);
        }
        c->sm[m].name = c->paths[m];
        c->sm[m].inputs = o->n_input ? &c->inputs[m] : NULL;
        c->sm[m].n_inputs = o->n_input ? 1 : 0;
    }
    if (!rc) rc = sweep_id(space, c, o->simulate, id, &err);
    if (rc) return loud ? enpu_cli_fail("sweep", &err) : enpu_exit_code(err.code);
    return 0;
}

static void teardown(sweep_cli *c, enpu_sweep_space *space) {
    for (int m = 0; m < c->n_models; m++) {
        enpu_model_free(&c->models[m]);
        enpu_buf_free(&c->inputs[m]);
    }
    enpu_sweep_space_free(space);
}

static int write_outputs(run *r, const opts *o, FILE *text, enpu_err *err) {
    const uint64_t n = r->space->n_points * (uint64_t)r->n_models;
    enpu_sweep_config *cf = calloc((size_t)(r->space->n_points ? r->space->n_points : 1), sizeof *cf);
    if (!cf) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    enpu_sweep_pareto(r->results, n, r->n_models, cf);
    int rc = checkpoint(r, err);
    if (!rc && o->json) {
        char *t = enpu_sweep_json_text(&r->info, r->results, n, cf);
        rc = t ? enpu_file_write_atomic(o->json, t, strlen(t), err)
               : enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        free(t);
    }
    if (!rc && o->svg) {
        char *t = enpu_sweep_svg_text(&r->info, cf, r->space->n_points);
        rc = t ? enpu_file_write_atomic(o->svg, t, strlen(t), err)
               : enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        free(t);
    }
    if (!rc) enpu_sweep_print_summary(text, &r->info, r->results, n, cf, 20);
    free(cf);
    return rc;
}

int enpu_cmd_sweep(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    int rank = 0, size = 1, local = 1;
#ifdef ENPU_HAVE_MPI
    /* only under a launcher: a plain `easynpu sweep` never touches MPI */
    bool mpi = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
    if (mpi) {
        int prov = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
#define FINISH(code) (mpi ? (MPI_Finalize(), (code)) : (code))
#else
    const char *ws = getenv("OMPI_COMM_WORLD_SIZE");
    if (ws && atoi(ws) > 1) {
        fprintf(stderr, "easynpu sweep: error [usage]: started by mpirun with %s ranks, but this "
                        "build has no MPI (install libopenmpi-dev and rebuild); every rank would "
                        "run the whole sweep\n", ws);
        return 2;
    }
#define FINISH(code) (code)
#endif
    opts o;
    sweep_cli *c = calloc(1, sizeof *c);
    enpu_sweep_space *space = calloc(1, sizeof *space);
    if (!c || !space) {
        free(c);
        free(space);
        fprintf(stderr, "easynpu sweep: error [nomem]: out of memory\n");
        return FINISH(1);
    }
    char id[9] = "";
    int code = parse_opts(argc, argv, &o, c);
    if (!code) code = setup(&o, c, space, id, rank == 0);
#ifdef ENPU_HAVE_MPI
    if (mpi) { /* all ranks go on, or none */
        int worst = code;
        MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        code = worst;
    }
#endif
    if (code) {
        teardown(c, space);
        free(c);
        free(space);
        return FINISH(code);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = o.jobs ? o.jobs : (int)((cores > 0 ? cores : 1) / local);
    if (threads < 1) threads = 1;
    enpu_sweep_opts so = {0};
    so.simulate = o.simulate;
    so.threads = threads;
    so.quantize = quantize_cb;
    so.quantize_ctx = c;
    so.stop = &g_stop;
    enpu_sweeper *engine = NULL;
    enpu_err err = {0};
    const char *names[ENPU_SWEEP_MAX_MODELS];
    for (int m = 0; m < c->n_models; m++) names[m] = c->paths[m];
    run r;
    memset(&r, 0, sizeof r);
    r.space = space;
    r.info = (enpu_sweep_info){space, names, c->n_models, id, o.simulate};
    r.n_models = c->n_models;
    r.chunk = 16 * threads;
    r.out = o.out;
    pthread_mutex_init(&r.mu, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = enpu_sweeper_new(space, c->sm, c->n_models, &so, &engine, &err);
    r.engine = engine;
#ifdef ENPU_HAVE_MPI
    if (!rc && rank > 0) {
        rc = mpi_worker(engine, &r.info, c->n_models, r.chunk, &err);
        if (rc) {
            enpu_cli_fail("sweep", &err);
            MPI_Abort(MPI_COMM_WORLD, enpu_exit_code(err.code));
        }
        enpu_sweeper_free(engine);
        teardown(c, space);
        free(c);
        free(space);
        pthread_mutex_destroy(&r.mu);
        return FINISH(0);
    }
#endif
    FILE *text = stdout;
    const uint64_t n_items = space->n_points * (uint64_t)c->n_models;
    uint64_t resumed = 0;
    r.results = rc ? NULL : calloc((size_t)(n_items ? n_items : 1), sizeof *r.results);
    r.todo = rc ? NULL : malloc((size_t)(space->n_points ? space->n_points : 1) * sizeof *r.todo);
    if (!rc && (!r.results || !r.todo)) rc = enpu_fail(&err, ENPU_E_NOMEM, "out of memory for %" PRIu64 " results", n_items);
    for (uint64_t k = 0; !rc && k < space->n_points; k++)
        for (int m = 0; m < c->n_models; m++) {
            enpu_point_result *s = &r.results[k * (uint64_t)c->n_models + (uint64_t)m];
            s->point = enpu_sweep_point_index(space, k);
            s->model = m;
        }
    if (!rc) rc = resume(&r, o.fresh, &resumed, &err);
    for (uint64_t k = 0; !rc && k < space->n_points; k++) {
        bool pending = false;
        for (int m = 0; m < c->n_models; m++)
            pending |= r.results[k * (uint64_t)c->n_models + (uint64_t)m].status == ENPU_PT_PENDING;
        if (pending) r.todo[r.n_todo++] = enpu_sweep_point_index(space, k);
    }
    r.done_items = resumed;
    if (!rc) {
        fprintf(text, "sweep %s: %" PRIu64 " point(s) x %d model(s) (%s%" PRIu64 " in the grid), %s, "
                      "%d rank(s) x %d thread(s)\n",
                id, space->n_points, c->n_models, space->sample ? "sampled from " : "", space->n_grid,
                o.simulate ? "cycle simulator" : "schedule model and analytic counts", size, threads);
        if (resumed)
            fprintf(text, "resuming from %s: %" PRIu64 " of %" PRIu64 " results already there, %" PRIu64
                          " point(s) to go\n",
                    o.out, resumed, n_items, r.n_todo);
        fflush(text);
    }
    double t0 = now_s();
    int active = size - 1;
    pthread_t th;
    bool have_thread = false;
    enpu_progress bar;
    enpu_progress_start(&bar, (int)(n_items > 0x7fffffff ? 0x7fffffff : n_items));
    if (!rc) {
        r.last_write = t0;
        have_thread = pthread_create(&th, NULL, local_compute, &r) == 0;
        if (!have_thread) rc = enpu_fail(&err, ENPU_E_NOMEM, "cannot start the compute thread");
    }
    uint64_t shown = UINT64_MAX;
    while (!rc) {
        bool busy = false;
#ifdef ENPU_HAVE_MPI
        if (mpi && active > 0) {
            int s = serve_requests(&r, &active, &err);
            if (s < 0) rc = s;
            busy = s > 0;
        }
#endif
        pthread_mutex_lock(&r.mu);
        bool finished = r.local_done && active == 0;
        uint64_t done = r.done_items;
        pthread_mutex_unlock(&r.mu);
        if (done != shown) {
            /* the rate of this run's points and the time the rest takes at it */
            char lbl[64];
            double el = now_s() - t0, rate = el > 0 ? (double)(done - resumed) / el / c->n_models : 0;
            double left = rate > 0 ? (double)(n_items - done) / c->n_models / rate : 0;
            if (done > resumed)
                snprintf(lbl, sizeof lbl, "%.1f s, %.1f points/s, %.0f s left", el, rate, left);
            else
                snprintf(lbl, sizeof lbl, "%.1f s", el);
            enpu_progress_step(&bar, (int)(done > 0x7fffffff ? 0x7fffffff : done), lbl);
            shown = done;
        }
        if (finished) break;
        if (!rc && now_s() - r.last_write > o.checkpoint) rc = checkpoint(&r, &err);
        if (!busy) nap_ms(2);
    }
    if (have_thread) {
        if (rc) g_stop = 1;
        pthread_join(th, NULL);
    }
    enpu_progress_end(&bar);
    double wall = now_s() - t0;
    if (!rc) rc = write_outputs(&r, &o, text, &err);
    int exit_code = 0;
    if (rc) {
        exit_code = enpu_cli_fail("sweep", &err);
#ifdef ENPU_HAVE_MPI
        if (mpi && active > 0) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
    } else {
        uint64_t evaluated = r.done_items - resumed, pts = evaluated / (uint64_t)c->n_models;
        fprintf(text, "evaluated %" PRIu64 " point(s) in %.2f s wall: %.1f points/s (%d rank(s) x %d "
                      "thread(s))\n",
                pts, wall, wall > 0 ? (double)pts / wall : 0.0, size, threads);
        fprintf(text, "wrote %s%s%s%s%s\n", o.out, o.json ? ", " : "", o.json ? o.json : "",
                o.svg ? ", " : "", o.svg ? o.svg : "");
        if (g_stop && r.done_items < n_items) {
            fprintf(stderr, "easynpu sweep: interrupted: %" PRIu64 " of %" PRIu64
                            " results in %s; run the same command again to resume\n",
                    r.done_items, n_items, o.out);
            exit_code = 130;
        }
    }
    free(r.results);
    free(r.todo);
    enpu_sweeper_free(engine);
    teardown(c, space);
    free(c);
    free(space);
    pthread_mutex_destroy(&r.mu);
    return FINISH(exit_code);
}
