#include "testutil.h"

#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "easynpu/compiler.h"

int enpu_test_have_shared_models(void) {
    struct stat st;
    if (stat(ENPU_SHARED_MODELS, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
    fprintf(stderr, "SKIP: %s is absent: these cases need the real test models "
                    "(cmake -DENPU_SHARED_MODELS=DIR)\n", ENPU_SHARED_MODELS);
    return 0;
}

int enpu_test_main_parts(int argc, char **argv, const struct CMUnitTest *repo, size_t n_repo,
                         const struct CMUnitTest *shared, size_t n_shared,
                         CMFixtureFunction setup, CMFixtureFunction teardown) {
    const char *part = argc > 1 ? argv[1] : "";
    bool run_repo = !strcmp(part, "repo") || !part[0], run_shared = !strcmp(part, "shared") || !part[0];
    if (!run_repo && !run_shared) {
        fprintf(stderr, "%s: unknown part '%s' (repo or shared)\n", argv[0], part);
        return 2;
    }
    int failed = 0;
    if (run_repo) failed += _cmocka_run_group_tests("repo", repo, n_repo, setup, teardown);
    if (run_shared) {
        if (!enpu_test_have_shared_models()) return part[0] ? ENPU_SKIP : failed;
        failed += _cmocka_run_group_tests("shared", shared, n_shared, setup, teardown);
    }
    return failed;
}

const char *enpu_test_shared_model(const char *rel) {
    static char buf[4096];
    if (!enpu_test_have_shared_models()) return NULL;
    snprintf(buf, sizeof buf, "%s/%s", ENPU_SHARED_MODELS, rel);
    return buf;
}

int enpu_test_run(const char *cmd, char **out) {
    char *full = malloc(strlen(cmd) + 8);
    if (!full) return -1;
    sprintf(full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int c;
    while (buf && (c = fgetc(p)) != EOF) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
        }
        buf[n++] = (char)c;
    }
    if (buf) buf[n] = 0;
    int st = pclose(p);
    if (out) *out = buf; else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int enpu_test_assert_cost_exact(const char *what, const enpu_program *p, const enpu_sim_result *res) {
    assert_int_equal(res->mode, ENPU_SIM_CYCLE);
    assert_int_equal(res->n_layers, p->n_instr);
    size_t n = (size_t)p->n_instr;
    int64_t *act = calloc(n * ENPU_ACT_COUNT, sizeof *act);
    assert_non_null(act);
    int64_t total = enpu_cost_program(p, NULL, act);
    int bad = 0, rows = 0, outside = 0;
    for (size_t i = 0; i < n;) {
        size_t len = 1; /* the chain, split as enpu_cost_program does */
        while (i + len - 1 < n - 1 && p->instr[i + len - 1].fuse_next) len++;
        if (!enpu_cost_exact(&p->arch, &p->instr[i], (int)len)) {
            outside += (int)len;
            i += len;
            continue;
        }
        for (size_t e = i + len; i < e; i++) {
            const enpu_layer_stats *l = &res->layers[i];
            int row_bad = bad;
            for (int k = 0; k < ENPU_ACT_COUNT; k++) {
                int64_t m = act[i * ENPU_ACT_COUNT + (size_t)k];
                if ((uint64_t)m == l->activity[k]) continue;
                if (!bad++)
                    fprintf(stderr, "%s: the cost model is not the simulator:\n  %4s %-28s %-8s "
                                    "%-15s %10s %10s\n", what, "#", "layer", "op", "activity",
                            "simulated", "modelled");
                fprintf(stderr, "  %4zu %-28.28s %-8s %-15s %10llu %10lld\n", i, l->name, l->op,
                        enpu_activity_name((enpu_activity)k), (unsigned long long)l->activity[k],
                        (long long)m);
            }
            rows += bad > row_bad; /* equal activities make equal cycles (their sum) */
        }
    }
    if (!bad && !outside && res->total_cycles != (uint64_t)total) {
        bad++, rows++;
        fprintf(stderr, "%s: %llu simulated cycles in all, %lld modelled\n", what,
                (unsigned long long)res->total_cycles, (long long)total);
    }
    free(act);
    if (bad)
        fail_msg("%s: the cost model differs from the simulator on %d instruction(s), %d "
                 "activity figure(s)", what, rows, bad);
    return outside;
}
