/* easynpu sweep (docs/energy.md "Sweeps"): the same results file, JSON and
 * SVG on one thread, on two, under mpirun -np 2 (a build with MPI) and
 * after a resume (a cut results file, and a real SIGINT); points that do
 * not fit are rows with their reason; --simulate gives the schedule model's
 * figures; the default point's figures are those of `easynpu run`; usage
 * errors.  The model is quantized once to a .qjson, so each point is a
 * compile. */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "testutil.h"

static char dir[64], qjson[128];

/* pes x dram_bytes x weight_mem_bytes: 12 points; without a DRAM to stream
 * them from, the model's parameters (41,688 bytes) do not fit a 32 KiB
 * weight memory: 3 points do not fit */
#define SPACE "--param pes=8,16,32 --param dram_bytes=0,67108864 --param weight_mem_bytes=32768,65536"

static char *sweep(const char *args, int *status) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s sweep %s %s", ENPU_CLI, qjson, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static char *slurp(const char *path, size_t *n) {
    uint8_t *b = NULL;
    enpu_err err = {0};
    if (enpu_file_read(path, (size_t)1 << 26, &b, n, &err)) fail_msg("%s", err.msg);
    return (char *)b;
}

static void same_file(const char *a, const char *b) {
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    if (na != nb || memcmp(x, y, na) != 0) fail_msg("%s and %s differ", a, b);
    free(x);
    free(y);
}

static void run_ok(const char *args, const char *want) {
    int st;
    char *out = sweep(args, &st);
    if (st != 0) fail_msg("sweep %s: exit %d:\n%s", args, st, out);
    if (want && !strstr(out, want)) fail_msg("sweep %s: missing '%s' in:\n%s", args, want, out);
    free(out);
}

static int count(const char *s, const char *sub) {
    int n = 0;
    size_t k = strlen(sub);
    for (size_t i = 0; s[i]; i++) n += strncmp(s + i, sub, k) == 0;
    return n;
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_sweep_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(qjson, sizeof qjson, "%s/kws.qjson", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s quantize models/kws_cnn.onnx --calib models/kws_cnn/calib -o %s", ENPU_CLI, qjson);
    return enpu_test_run(cmd, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_threads_and_rows(void **state) {
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, SPACE " --jobs 1 -o %s/a.csv --json %s/a.json --svg %s/a.svg", dir, dir, dir);
    run_ok(args, "results (point x model): ok 9 nofit 3");
    snprintf(args, sizeof args, SPACE " --jobs 2 -o %s/b.csv --json %s/b.json --svg %s/b.svg", dir, dir, dir);
    run_ok(args, "1 rank(s) x 2 thread(s)");
    const char *ext[] = {"csv", "json", "svg"};
    for (int i = 0; i < 3; i++) {
        char a[128], b[128];
        snprintf(a, sizeof a, "%s/a.%s", dir, ext[i]);
        snprintf(b, sizeof b, "%s/b.%s", dir, ext[i]);
        same_file(a, b);
    }
    /* rows: the header and one per point; a point that does not fit says why */
    char path[128];
    snprintf(path, sizeof path, "%s/a.csv", dir);
    size_t n;
    char *csv = slurp(path, &n);
    assert_int_equal(count(csv, "\n"), 13);
    assert_true(strncmp(csv, "sweep,point,pes,dram_bytes,weight_mem_bytes,model,status,cycles,", 64) == 0);
    assert_int_equal(count(csv, ",nofit,"), 3);
    assert_non_null(strstr(csv, "do not fit the weight memory of arch 'p0' (32768 bytes)"));
    free(csv);
    /* the default point (pes 16, a DRAM, 64 KiB) is what `easynpu run` reports */
    snprintf(path, sizeof path, "%s/a.json", dir);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    json_t *res = json_object_get(root, "results"), *r = NULL;
    assert_int_equal(json_array_size(res), 12);
    size_t i;
    json_t *e;
    json_array_foreach(res, i, e) if (json_integer_value(json_object_get(e, "point")) == 7) r = e;
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "params"), "pes")), 16);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "params"), "dram_bytes")), 67108864);
    assert_int_equal(json_integer_value(json_object_get(r, "cycles")), 245819);
    assert_true(fabs(json_real_value(json_object_get(r, "energy_pj")) - 23619239.988701984) < 1e-3);
    assert_true(fabs(json_real_value(json_object_get(r, "area_um2")) - 1835274.608) < 1e-6);
    /* the front: the JSON's list, the SVG's red dots */
    size_t front = json_array_size(json_object_get(root, "pareto"));
    assert_true(front >= 1 && front <= 9);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "counts"), "ok")), 9);
    json_decref(root);
    snprintf(path, sizeof path, "%s/a.svg", dir);
    char *svg = slurp(path, &n);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_non_null(strstr(svg, "</svg>\n"));
    assert_int_equal(count(svg, "<circle"), 2 * 9);               /* two panels */
    assert_int_equal(count(svg, "fill=\"#d62728\""), 2 * (int)front);
    /* the front's parameters are in the picture, not only in tooltips: each
     * red point numbered in both panels, and a table of the front */
    assert_non_null(strstr(svg, ">The front by latency</text>"));
    assert_int_equal(count(svg, "font-size=\"9\">"), 2 * (int)front + 3 + 4); /* 3 parameters, #, 3 figures */
    free(svg);
}

static void test_resume(void **state) {
    (void)state;
    char args[1024], path[128], ref[128];
    snprintf(ref, sizeof ref, "%s/a.csv", dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    /* an interrupted file: the header, 4 rows and half a row */
    size_t n;
    char *csv = slurp(ref, &n);
    char *p = csv;
    for (int k = 0; k < 5; k++) p = strchr(p, '\n') + 1;
    enpu_err err = {0};
    assert_int_equal(enpu_file_write_atomic(path, csv, (size_t)(p - csv) + 20, &err), 0);
    free(csv);
    snprintf(args, sizeof args, SPACE " --jobs 2 -o %s", path);
    run_ok(args, "resuming from");
    same_file(ref, path);
    /* nothing left to do */
    run_ok(args, "12 of 12 results already there, 0 point(s) to go");
    same_file(ref, path);
    /* another sweep's file is refused, and kept */
    int st;
    snprintf(args, sizeof args, "--param pes=8,16 -o %s", path);
    char *out = sweep(args, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "is not a results file of a sweep over these parameters"));
    free(out);
    snprintf(args, sizeof args, "--param pes=8,16,32 --param dram_bytes=0,67108864 --param weight_mem_bytes=32768,98304 -o %s", path);
    out = sweep(args, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "resuming (give another -o, or --fresh to start over)"));
    free(out);
    same_file(ref, path);
    snprintf(args, sizeof args, "--param pes=8,16 -o %s --fresh", path);
    run_ok(args, "results (point x model): ok 2");
}

/* A real interruption: SIGINT while the sweep runs, exit 130, then the same
 * command finishes the file.  60 points (20 under ASan+UBSan, where each
 * compile is ten times slower: the interruption still comes at the first
 * checkpoint, long before the end). */
#if defined(__SANITIZE_ADDRESS__)
#define INT_WPD "weight_pad_depth=16"
#define INT_POINTS 20
#else
#define INT_WPD "weight_pad_depth=8,16,32"
#define INT_POINTS 60
#endif
static void test_interrupt(void **state) {
    (void)state;
    char cmd[2048], path[128], ref[128];
    snprintf(ref, sizeof ref, "%s/i_ref.csv", dir);
    snprintf(path, sizeof path, "%s/i.csv", dir);
    const char *space = "--param pes=8,16 --param psum_depth=16:256:x2 --param ifmap_pad_depth=32,64 "
                        "--param " INT_WPD;
    char args[1024], ok[32];
    snprintf(args, sizeof args, "%s --jobs 1 -o %s", space, ref);
    snprintf(ok, sizeof ok, "ok %d", INT_POINTS);
    run_ok(args, ok);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        execl(ENPU_CLI, ENPU_CLI, "sweep", qjson, "--param", "pes=8,16", "--param", "psum_depth=16:256:x2",
              "--param", "ifmap_pad_depth=32,64", "--param", INT_WPD, "--jobs", "1",
              "--checkpoint", "0.05", "-o", path, (char *)NULL);
        _exit(127);
    }
    /* wait for the first checkpoint, then interrupt */
    const struct timespec ms5 = {0, 5000000};
    for (int k = 0; k < 4000 && access(path, F_OK) != 0; k++) nanosleep(&ms5, NULL);
    kill(pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code != 130) fail_msg("interrupted sweep: exit %d, want 130", code);
    size_t n;
    char *part = slurp(path, &n);
    int rows = count(part, "\n") - 1;
    free(part);
    fprintf(stderr, "interrupted after %d of %d rows\n", rows, INT_POINTS);
    assert_true(rows < INT_POINTS);
    snprintf(cmd, sizeof cmd, "%s --jobs 2 -o %s", space, path);
    run_ok(cmd, NULL);
    same_file(ref, path);
}

static void test_mpi(void **state) {
    (void)state;
    if (!ENPU_MPIEXEC[0]) {
        fprintf(stderr, "SKIP: the CLI was built without MPI\n");
        skip();
    }
    char cmd[4096], path[128], ref[128];
    snprintf(ref, sizeof ref, "%s/a.csv", dir);
    snprintf(path, sizeof path, "%s/m.csv", dir);
    /* as root (CI), OpenMPI wants both variables; OpenMPI's own allocations
     * are not freed at MPI_Finalize, so no leak check under ASan here */
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 "
             "%s --oversubscribe -np 2 %s sweep %s " SPACE " -o %s --json %s/m.json --svg %s/m.svg",
             ENPU_MPIEXEC, ENPU_CLI, qjson, path, dir, dir);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    if (st != 0 || !strstr(out, "2 rank(s) x 1 thread(s)")) fail_msg("mpirun: exit %d:\n%s", st, out);
    free(out);
    same_file(ref, path);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/m.json", dir);
    same_file(a, b);
    snprintf(a, sizeof a, "%s/a.svg", dir);
    snprintf(b, sizeof b, "%s/m.svg", dir);
    same_file(a, b);
}

static void test_simulate_and_sample(void **state) {
    (void)state;
    char args[1024], a[128], b[128];
    snprintf(args, sizeof args, SPACE " --simulate -o %s/s.csv", dir);
    run_ok(args, "cycle simulator");
    /* the same figures as the schedule model, but for the sweep id */
    snprintf(a, sizeof a, "%s/a.csv", dir);
    snprintf(b, sizeof b, "%s/s.csv", dir);
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    assert_int_equal(na, nb);
    for (char *p = x, *q = y; *p; p = strchr(p, '\n') + 1, q = strchr(q, '\n') + 1) {
        char *pc = strchr(p, ','), *qc = strchr(q, ','), *pe = strchr(p, '\n');
        assert_memory_equal(pc, qc, (size_t)(pe - pc));
    }
    free(x);
    free(y);
    /* a seeded sample: a subset of the grid's rows */
    snprintf(args, sizeof args, SPACE " --random 5 --seed 3 -o %s/r5.csv", dir);
    run_ok(args, "5 point(s) x 1 model(s) (sampled from 12 in the grid)");
    snprintf(b, sizeof b, "%s/r5.csv", dir);
    y = slurp(b, &nb);
    assert_int_equal(count(y, "\n"), 6);
    free(y);
}

/* A sweep of the systolic engine (its arrangements and schemes): its cost
 * model's figures are the simulator's, byte for byte but for the sweep id,
 * and the default point is `easynpu run --arch systolic`'s 8461 cycles and
 * 11.177 uJ (tests/cli/test_run.c) */
static void test_systolic(void **state) {
    (void)state;
    char args[1024], a[128], b[128];
    snprintf(args, sizeof args, "--arch systolic --param sya_bank_rows=1,2,4 --param sya_scheme=1,3 -o %s/ya.csv", dir);
    run_ok(args, "results (point x model): ok 6");
    snprintf(args, sizeof args,
             "--arch systolic --param sya_bank_rows=1,2,4 --param sya_scheme=1,3 --simulate -o %s/ys.csv", dir);
    run_ok(args, "cycle simulator");
    snprintf(a, sizeof a, "%s/ya.csv", dir);
    snprintf(b, sizeof b, "%s/ys.csv", dir);
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    assert_int_equal(na, nb);
    for (char *p = x, *q = y; *p; p = strchr(p, '\n') + 1, q = strchr(q, '\n') + 1) {
        char *pc = strchr(p, ','), *qc = strchr(q, ','), *pe = strchr(p, '\n');
        assert_memory_equal(pc, qc, (size_t)(pe - pc));
    }
    /* point 2: sya_bank_rows 2, sya_scheme 1, the preset */
    assert_non_null(strstr(x, ",2,2,1,\""));
    assert_non_null(strstr(x, ",ok,8461,3914280,84.61,0.4517833663278572,11176964.04151722,"));
    free(x);
    free(y);
}

static void test_errors(void **state) {
    (void)state;
    struct {
        const char *args, *want;
    } cases[] = {
        {"--param pes=8,16", "-o RESULTS.csv is required"},
        {"-o /tmp/x.csv", "give --param KEY=VALUES or --space FILE.json"},
        {"--param frob=1 -o /tmp/x.csv", "--param frob: not a field of the architecture description"},
        {"--param pes=8 --seed 4 -o /tmp/x.csv", "--seed goes with --random"},
        {"--param pes=8 --input x.npy -o /tmp/x.csv", "--input is for --simulate, one per model"},
        {"--param pes=8 --jobs 0 -o /tmp/x.csv", "--jobs '0': 1..1024 threads"},
        {"--param pes=8 -o /nonexistent/x.csv", "/nonexistent"},
        {"models/kws_cnn.onnx models/kws_cnn.onnx --param pes=8 -o /tmp/x.csv", "given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st;
        char *out = sweep(cases[i].args, &st);
        if (st != 2 || !strstr(out, cases[i].want))
            fail_msg("sweep %s: want exit 2 and '%s', got %d:\n%s", cases[i].args, cases[i].want, st, out);
        free(out);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_and_rows), cmocka_unit_test(test_resume),
        cmocka_unit_test(test_interrupt),        cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_simulate_and_sample), cmocka_unit_test(test_systolic),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
