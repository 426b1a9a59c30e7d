/* docs/energy.md's figures of the default model are what `easynpu run`
 * reports for it: the three energy lines of the demo, and each row of the
 * per-layer table (cycles, energy, and every part it names) against the
 * JSON's layers. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define RUN_ARGS "run models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy"

/* A whole text file, NUL-terminated (stdio: gcc 12 sees a dangling pointer
 * through enpu_file_read's uint8_t ** once this is inlined). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("%s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    for (size_t r; (r = fread(b + n, 1, cap - 1 - n, f)) > 0;) {
        n += r;
        if (n + 1 == cap) {
            cap *= 2;
            b = realloc(b, cap);
            assert_non_null(b);
        }
    }
    fclose(f);
    b[n] = 0;
    return b;
}

/* "13,586.9" -> 13586.9 (the doc's thousands separators) */
static double number(const char *s, const char **end) {
    char buf[64];
    size_t n = 0;
    while ((*s >= '0' && *s <= '9') || *s == ',' || *s == '.') {
        if (*s != ',' && n + 1 < sizeof buf) buf[n++] = *s;
        s++;
    }
    buf[n] = 0;
    if (end) *end = s;
    if (!n) fail_msg("docs/energy.md: a number expected at \"%.30s\"", s);
    return strtod(buf, NULL);
}

/* The doc's name of a part, the JSON's key. */
static const char *part_key(const char *name, size_t n) {
    static const char *const map[][2] = {
        {"DRAM", "dram"},       {"main DTCM", "main_dtcm"}, {"psum", "psum"},
        {"weight memory", "weight_mem"}, {"MAC", "mac"},     {"bus", "bus"},
        {"requantizer", "requant"}, {"ifmap pad", "ifmap_pad"}, {"weight pad", "weight_pad"},
        {"ITCM", "itcm"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i][0]) == n && !strncmp(name, map[i][0], n)) return map[i][1];
    fail_msg("docs/energy.md: unknown part \"%.*s\" in the per-layer table", (int)n, name);
    return NULL;
}

static void test_default_model_figures(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_energydoc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024], path[128];
    snprintf(path, sizeof path, "%s/kws.json", dir);
    snprintf(cmd, sizeof cmd, "%s " RUN_ARGS " --json %s", ENPU_CLI, path);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    char *doc = slurp("docs/energy.md");

    /* the demo's energy lines, as the doc quotes them */
    const char *sec = strstr(doc, "### The default model");
    assert_non_null(sec);
    const char *blk = strstr(sec, "```\n");
    assert_non_null(blk);
    blk += 4;
    const char *blk_end = strstr(blk, "```");
    assert_non_null(blk_end);
    int lines = 0;
    for (const char *t = blk; t < blk_end; lines++) {
        const char *nl = strchr(t, '\n');
        char line[1024];
        snprintf(line, sizeof line, "%.*s\n", (int)(nl - t), t);
        if (!strstr(out, line)) fail_msg("easynpu " RUN_ARGS " does not print docs/energy.md's line:\n%s", line);
        t = nl + 1;
    }
    assert_int_equal(lines, 3);

    /* the per-layer table against the JSON */
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) fail_msg("%s: %s", path, je.text);
    json_t *layers = json_object_get(root, "layers");
    const char *row = strstr(sec, "| layer (its instructions) |");
    assert_non_null(row);
    row = strchr(strchr(row, '\n') + 1, '\n') + 1; /* past the rule */
    size_t k = 0;
    for (; !strncmp(row, "| ", 2); k++) {
        json_t *l = json_array_get(layers, k);
        assert_non_null(l);
        const char *c = strchr(row + 1, '|') + 2, *e;
        double cycles = number(c, &e);
        double nj = number(strchr(e, '|') + 2, &e);
        assert_true(cycles == (double)json_integer_value(json_object_get(l, "cycles")));
        char want[32], got[32];
        snprintf(want, sizeof want, "%.1f", nj);
        snprintf(got, sizeof got, "%.1f", json_real_value(json_object_get(l, "energy_pj")) / 1000.0);
        if (strcmp(want, got)) fail_msg("docs/energy.md: layer %zu is %s nJ, easynpu run says %s", k, want, got);
        /* its largest parts: "name value, name value, ..." */
        const char *p = strchr(e, '|') + 2, *rend = strchr(p, '\n');
        json_t *parts = json_object_get(l, "energy_parts_pj");
        int n_parts = 0;
        while (p < rend && *p != '|') {
            const char *v = p;
            while (!(*v >= '0' && *v <= '9')) v++;
            const char *key = part_key(p, (size_t)(v - 1 - p));
            snprintf(want, sizeof want, "%.1f", number(v, &e));
            snprintf(got, sizeof got, "%.1f", json_real_value(json_object_get(parts, key)) / 1000.0);
            if (strcmp(want, got))
                fail_msg("docs/energy.md: layer %zu's %s is %s nJ, easynpu run says %s", k, key, want, got);
            n_parts++;
            p = e;
            if (*p == ',') p += 2;
            else if (*p == ' ') p++;
        }
        assert_true(n_parts >= 2);
        row = rend + 1;
    }
    assert_int_equal(k, 6);
    json_decref(root);
    free(doc);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_default_model_figures)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
