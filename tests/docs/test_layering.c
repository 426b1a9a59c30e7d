/* Imports run one way (DEVELOPERS.md "Floors").  Every source file of the
 * library sits on a floor; a file may use what lies on its own floor in its
 * own folder or on a floor below, never above and never sideways into
 * another folder of its floor.  Checked twice: on the symbols each compiled
 * object takes from the others (nm), which is what the code really calls,
 * and on the private headers each file includes (types and inline functions
 * leave no symbol).  The simulator's shared core (the files directly in src/sim) thus calls no
 * engine, and no engine another; the one way up is the engine table
 * (src/sim/engine.c), which the core looks engines up in. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

/* Bottom to top.  A folder not listed fails the test: a new stage takes a
 * floor knowingly. */
static const struct {
    const char *folder;
    int floor;
} floors[] = {
    {"common", 0},      {"ir", 1},           {"tensor", 2},       {"numerics", 3},
    {"ref", 4},         {"quant", 5},        {"isa", 6},          {"sim", 7},
    {"sim/easynpu", 8}, {"sim/systolic", 8}, {"sim/rowstat", 8},  {"sim/table", 9},
    {"compiler", 10},   {"energy", 11},      {"frontend", 11},    {"eval", 11},
    {"audio", 11},      {"report", 12},      {"cli", 13},
};

/* The only upward edges, each for a reason. */
static const struct {
    const char *from, *to, *symbol;
} allowed_up[] = {
    /* the core looks an engine up by the arch's name and the mode */
    {"sim", "sim/table", "sim_engine_find"},
};

#define MAX_FILES 512
#define MAX_SYMS 16384

typedef struct file_t {
    char rel[160];   /* path under src/, e.g. "sim/driver.c" */
    char folder[64]; /* its unit: "sim", "sim/easynpu", "sim/table" */
    int floor;
} file_t;

static file_t files[MAX_FILES];
static int n_files;

static struct {
    char *name;
    int file;
} defs[MAX_SYMS];
static int n_defs;

static int floor_of(const char *folder) {
    for (size_t i = 0; i < sizeof floors / sizeof floors[0]; i++)
        if (!strcmp(floors[i].folder, folder)) return floors[i].floor;
    return -1;
}

/* The unit of a source path under src/: its folder, with the simulator's
 * engines apart and the engine table on its own floor. */
static void unit_of(const char *rel, char *out, size_t n) {
    if (!strcmp(rel, "sim/engine.c")) {
        snprintf(out, n, "sim/table");
        return;
    }
    const char *s1 = strchr(rel, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    size_t len = (size_t)(s1 ? s1 - rel : (ptrdiff_t)strlen(rel));
    if (s2 && !strncmp(rel, "sim/", 4)) len = (size_t)(s2 - rel);
    snprintf(out, n, "%.*s", (int)len, rel);
}

static void walk(const char *root, const char *sub) {
    char path[768];
    snprintf(path, sizeof path, "%s/%s", root, sub);
    DIR *d = opendir(path);
    if (!d) fail_msg("cannot open %s", path);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char rel[160], full[768];
        if (snprintf(rel, sizeof rel, "%s%s%s", sub, sub[0] ? "/" : "", e->d_name) >= (int)sizeof rel)
            fail_msg("src/%s/%s: path too long for the test", sub, e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, rel);
        struct stat st;
        if (stat(full, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            walk(root, rel);
            continue;
        }
        size_t l = strlen(rel);
        if (l < 3 || strcmp(rel + l - 2, ".c")) continue;
        assert_true(n_files < MAX_FILES);
        file_t *f = &files[n_files++];
        snprintf(f->rel, sizeof f->rel, "%s", rel);
        unit_of(rel, f->folder, sizeof f->folder);
        f->floor = floor_of(f->folder);
        if (f->floor < 0)
            fail_msg("src/%s: its folder '%s' has no floor in tests/docs/test_layering.c", rel, f->folder);
    }
    closedir(d);
}

static int by_rel(const void *a, const void *b) { return strcmp(((const file_t *)a)->rel, ((const file_t *)b)->rel); }

static bool edge_ok(const file_t *from, const file_t *to, const char *sym) {
    if (!strcmp(from->folder, to->folder)) return true;
    if (to->floor < from->floor) return true;
    for (size_t i = 0; i < sizeof allowed_up / sizeof allowed_up[0]; i++)
        if (!strcmp(allowed_up[i].from, from->folder) && !strcmp(allowed_up[i].to, to->folder) &&
            (!sym || !strcmp(allowed_up[i].symbol, sym)))
            return true;
    return false;
}

/* The external symbols of every object, from one nm run each: defined
 * ones into defs, the undefined ones each object takes into uses. */
static struct {
    char *name;
    int file;
} uses[4 * MAX_SYMS];
static int n_uses;

static void symbols(int i) {
    char obj[768], cmd[900];
    if (!strncmp(files[i].rel, "cli/", 4)) return; /* the CLI: its own target, the top floor */
    snprintf(obj, sizeof obj, "%s/CMakeFiles/easynpu.dir/src/%s.o", ENPU_BINARY_DIR, files[i].rel);
    struct stat st;
    if (stat(obj, &st)) fail_msg("src/%s: no object %s (build the library first)", files[i].rel, obj);
    snprintf(cmd, sizeof cmd, "nm -P '%s'", obj);
    FILE *p = popen(cmd, "r");
    if (!p) fail_msg("cannot run nm");
    char line[512];
    while (fgets(line, sizeof line, p)) {
        char name[256], kind[8];
        if (sscanf(line, "%255s %7s", name, kind) != 2) continue;
        if (strchr("TDBR", kind[0])) {
            assert_true(n_defs < MAX_SYMS);
            defs[n_defs].name = strdup(name);
            assert_non_null(defs[n_defs].name);
            defs[n_defs++].file = i;
        } else if (kind[0] == 'U') {
            assert_true(n_uses < 4 * MAX_SYMS);
            uses[n_uses].name = strdup(name);
            assert_non_null(uses[n_uses].name);
            uses[n_uses++].file = i;
        }
    }
    assert_int_equal(pclose(p), 0);
}

static void load(void) {
    if (n_files) return;
    walk(ENPU_SOURCE_DIR "/src", "");
    qsort(files, (size_t)n_files, sizeof *files, by_rel);
    for (int i = 0; i < n_files; i++) symbols(i);
}

static void test_symbols_run_down(void **state) {
    (void)state;
    load();
    assert_true(n_files > 100);
    assert_true(n_defs > 500);
    int bad = 0;
    for (int u = 0; u < n_uses; u++)
        for (int k = 0; k < n_defs; k++) {
            if (strcmp(defs[k].name, uses[u].name)) continue;
            const file_t *from = &files[uses[u].file], *to = &files[defs[k].file];
            if (!edge_ok(from, to, uses[u].name)) {
                print_message("src/%s (%s, floor %d) uses %s of src/%s (%s, floor %d)\n", from->rel, from->folder,
                              from->floor, uses[u].name, to->rel, to->folder, to->floor);
                bad++;
            }
            break;
        }
    assert_int_equal(bad, 0);
}

static void test_headers_run_down(void **state) {
    (void)state;
    load();
    int bad = 0;
    for (int i = 0; i < n_files; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/src/%.160s", ENPU_SOURCE_DIR, files[i].rel);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char inc[256];
            if (sscanf(line, " #include \"%255[^\"]\"", inc) != 1) continue;
            if (!strncmp(inc, "easynpu/", 8)) continue; /* the public API */
            char hdr[300];
            snprintf(hdr, sizeof hdr, "%s/src/%s", ENPU_SOURCE_DIR, inc);
            struct stat st;
            if (stat(hdr, &st)) continue; /* generated (onnx.pb-c.h) or beside the file */
            file_t h = {0};
            snprintf(h.rel, sizeof h.rel, "%.159s", inc);
            unit_of(inc, h.folder, sizeof h.folder);
            if (!strcmp(inc, "sim/engine.h")) snprintf(h.folder, sizeof h.folder, "sim"); /* the table's contract */
            h.floor = floor_of(h.folder);
            if (!edge_ok(&files[i], &h, NULL)) {
                print_message("src/%s (%s, floor %d) includes %s (%s, floor %d)\n", files[i].rel,
                              files[i].folder, files[i].floor, inc, h.folder, h.floor);
                bad++;
            }
        }
        fclose(f);
    }
    assert_int_equal(bad, 0);
}

/* The rule itself: what it must refuse. */
static void test_rule(void **state) {
    (void)state;
    file_t core = {"sim/driver.c", "sim", 7}, eng = {"sim/easynpu/dma.c", "sim/easynpu", 8},
           sys = {"sim/systolic/pe.c", "sim/systolic", 8}, table = {"sim/engine.c", "sim/table", 9},
           quant = {"quant/calib.c", "quant", 5}, ref = {"ref/golden.c", "ref", 4};
    assert_false(edge_ok(&core, &eng, "sim_dma_copy"));
    assert_false(edge_ok(&eng, &sys, "sya_pe_step"));
    assert_false(edge_ok(&ref, &quant, "enpu_calibrate"));
    assert_true(edge_ok(&quant, &ref, "enpu_fexec_new"));
    assert_true(edge_ok(&eng, &core, "sim_host_op"));
    assert_true(edge_ok(&core, &table, "sim_engine_find"));
    assert_false(edge_ok(&core, &table, "sim_engine_easynpu_cycle"));
    char u[64];
    unit_of("sim/rowstat/pe.c", u, sizeof u);
    assert_string_equal(u, "sim/rowstat");
    unit_of("compiler/rowstat/map.c", u, sizeof u);
    assert_string_equal(u, "compiler");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_symbols_run_down),
        cmocka_unit_test(test_headers_run_down),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < n_defs; i++) free(defs[i].name);
    for (int i = 0; i < n_uses; i++) free(uses[i].name);
    return rc;
}
