/* fuzz_graphs: the random-graph differential fuzzer for a time budget (CI).
 *
 *   fuzz_graphs [--seconds S] [--seed N] [--timeout T] [--verbose]
 *   fuzz_graphs --replay SEED...
 *
 * Runs seeds N, N+1, ... (graphgen.h) until S seconds (default 60) have
 * passed, each in a child process so that a crash, a sanitizer report or a
 * hang (T seconds, default 60) is a failure naming its seed rather than the
 * end of the run.  Prints one line per failure, `FAIL seed N [stage]:
 * message | case`, then how many graphs ran, passed, were refused (by
 * category) and failed.  Exit 0 when nothing failed, 1 otherwise, 2 on
 * usage.  --replay runs the given seeds in this process and prints each
 * outcome with its case (and with ENPU_FUZZ_DUMP=DIR writes DIR/seedN.qjson,
 * .arch.json and .input0.npy, to rerun the case with `easynpu run`). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "graphgen.h"

/* What a child sends back. */
typedef struct wire {
    int verdict;
    char stage[16];
    char why[64];
    char msg[ENPU_ERR_MSG_MAX + 160];
    char desc[GG_DESC_MAX];
    double sqnr_db, err_frac;
} wire;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void to_wire(uint64_t seed, wire *w) {
    gg_outcome o;
    memset(w, 0, sizeof *w);
    gg_run_seed(seed, &o, w->desc, sizeof w->desc);
    w->verdict = (int)o.verdict;
    snprintf(w->stage, sizeof w->stage, "%s", o.stage);
    snprintf(w->why, sizeof w->why, "%s", o.why);
    snprintf(w->msg, sizeof w->msg, "%s", o.msg);
    w->sqnr_db = o.sqnr_db;
    w->err_frac = o.err_frac;
}

/* Runs one seed in a child; a child that dies or times out is a failure. */
static void run_child(uint64_t seed, unsigned timeout, wire *w) {
    int fd[2];
    memset(w, 0, sizeof *w);
    if (pipe(fd) != 0) {
        w->verdict = GG_FAIL;
        snprintf(w->msg, sizeof w->msg, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        w->verdict = GG_FAIL;
        snprintf(w->msg, sizeof w->msg, "fork: %s", strerror(errno));
        close(fd[0]), close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        alarm(timeout);
        wire cw;
        to_wire(seed, &cw);
        const char *p = (const char *)&cw;
        size_t left = sizeof cw;
        while (left > 0) {
            ssize_t k = write(fd[1], p, left);
            if (k <= 0) _exit(3);
            p += k, left -= (size_t)k;
        }
        close(fd[1]);
        exit(0); /* not _exit: LeakSanitizer checks at exit */
    }
    close(fd[1]);
    char *p = (char *)w;
    size_t got = 0;
    while (got < sizeof *w) {
        ssize_t k = read(fd[0], p + got, sizeof *w - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (got == sizeof *w && WIFEXITED(st) && WEXITSTATUS(st) == 0) return;
    memset(w, 0, sizeof *w);
    w->verdict = GG_FAIL;
    snprintf(w->stage, sizeof w->stage, "crash");
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
        snprintf(w->msg, sizeof w->msg, "no result after %u s (a hang?)", timeout);
    else if (WIFSIGNALED(st))
        snprintf(w->msg, sizeof w->msg, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(w->msg, sizeof w->msg, "exited with status %d (a sanitizer report or an assert: "
                 "replay the seed)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

typedef struct cat {
    char name[64];
    int n;
} cat;

static void count_cat(cat *cats, int *ncat, const char *name) {
    for (int i = 0; i < *ncat; i++)
        if (strcmp(cats[i].name, name) == 0) {
            cats[i].n++;
            return;
        }
    if (*ncat < 64) {
        snprintf(cats[*ncat].name, sizeof cats[*ncat].name, "%s", name);
        cats[(*ncat)++].n = 1;
    }
}

static int usage(const char *msg) {
    fprintf(stderr, "fuzz_graphs: %s\nusage: fuzz_graphs [--seconds S] [--seed N] [--timeout T] "
                    "[--verbose] | --replay SEED...\n", msg);
    return 2;
}

static int parse_u64(const char *s, uint64_t *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *v = x;
    return 0;
}

int main(int argc, char **argv) {
    uint64_t seconds = 60, seed = 1, timeout = 60;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--replay") == 0) {
            if (i + 1 >= argc) return usage("--replay needs at least one seed");
            int bad = 0;
            const char *dump = getenv("ENPU_FUZZ_DUMP");
            for (int k = i + 1; k < argc; k++) {
                uint64_t s;
                if (parse_u64(argv[k], &s)) return usage("a seed is a non-negative integer");
                if (dump) { /* ENPU_FUZZ_DUMP=DIR: the case as files, for the CLI */
                    gg_case c;
                    enpu_err err = {0};
                    char prefix[4096];
                    snprintf(prefix, sizeof prefix, "%s/seed%" PRIu64, dump, s);
                    if (gg_generate(s, &c, &err) || gg_dump(&c, prefix, &err))
                        fprintf(stderr, "fuzz_graphs: dump: %s\n", err.msg);
                    else
                        printf("wrote %s.qjson, .arch.json, .input*.npy\n", prefix);
                    gg_case_free(&c);
                }
                wire w;
                to_wire(s, &w);
                static const char *const V[] = {"PASS", "REFUSED", "FAIL"};
                printf("%s seed %" PRIu64 "%s%s%s: %s\n  case: %s\n", V[w.verdict], s,
                       w.stage[0] ? " [" : "", w.stage, w.stage[0] ? "]" : "", w.msg, w.desc);
                bad += w.verdict == GG_FAIL;
            }
            return bad ? 1 : 0;
        }
        uint64_t *dst = strcmp(a, "--seconds") == 0 ? &seconds
                        : strcmp(a, "--seed") == 0   ? &seed
                        : strcmp(a, "--timeout") == 0 ? &timeout
                                                      : NULL;
        if (strcmp(a, "--verbose") == 0) {
            verbose = true;
            continue;
        }
        if (!dst) return usage("unknown option");
        if (i + 1 >= argc || parse_u64(argv[++i], dst)) return usage("option needs a number");
    }
    if (timeout < 1 || timeout > 100000) return usage("--timeout must be 1..100000");
    printf("fuzz_graphs: seeds from %" PRIu64 " for %" PRIu64 " s (replay one: fuzz_graphs --replay "
           "SEED)\n", seed, seconds);
    double t0 = now_s();
    int ran = 0, passed = 0, refused = 0, failed = 0, ncat = 0;
    int tfl_ran = 0, tfl_passed = 0; /* requant tflite cases (gg_seed_tflite) */
    int eng_ran = 0, eng_passed = 0; /* systolic and row-stationary cases (gg_seed_engine) */
    cat cats[64];
    uint64_t s = seed;
    while (ran == 0 || now_s() - t0 < (double)seconds) {
        wire w;
        run_child(s, (unsigned)timeout, &w);
        ran++;
        bool tfl = gg_seed_tflite(s), eng = gg_seed_engine(s);
        tfl_ran += tfl, eng_ran += eng;
        if (w.verdict == GG_PASS) passed++, tfl_passed += tfl, eng_passed += eng;
        else if (w.verdict == GG_REFUSED) {
            refused++;
            count_cat(cats, &ncat, w.why);
        } else {
            failed++;
            printf("FAIL seed %" PRIu64 " [%s]: %s | %s\n", s, w.stage, w.msg, w.desc);
        }
        if (verbose && w.verdict != GG_FAIL)
            printf("%s seed %" PRIu64 ": %s%s%s (int8 vs float: %.1f dB, %.3f of the range)\n",
                   w.verdict == GG_PASS ? "pass" : "refused", s, w.why, w.why[0] ? ": " : "", w.msg,
                   w.sqnr_db, w.err_frac);
        fflush(stdout);
        s++;
    }
    printf("fuzz_graphs: %d graphs run (seeds %" PRIu64 "..%" PRIu64 ") in %.0f s: %d passed, %d "
           "refused, %d failed; requant tflite: %d run, %d passed; systolic or row-stationary: %d run, %d "
           "passed\n", ran, seed, s - 1, now_s() - t0, passed, refused, failed, tfl_ran, tfl_passed, eng_ran,
           eng_passed);
    for (int i = 0; i < ncat; i++) printf("  refused: %4d  %s\n", cats[i].n, cats[i].name);
    return failed ? 1 : 0;
}
