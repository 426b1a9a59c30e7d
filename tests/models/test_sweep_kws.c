/* The 1,080-configuration sweep of the default model that docs/energy.md
 * shows: run as documented, its Pareto front table is the one in the doc
 * and its picture is docs/sweep_kws_pareto.svg, byte for byte, which
 * renders; and every point's status, cycles, energy and area are those of
 * tests/data/sweep_kws_points.csv, which the compiler wrote before its
 * tiling search became a branch and bound with a cache shared across the
 * points (docs/compiler.md "The tiling search"): the fast search loses
 * nothing on any of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "testutil.h"

/* The fields of a CSV line, up to n (the last, a reason, may hold commas:
 * it is never split). */
static int fields(char *line, char **f, int n) {
    int k = 0;
    f[k++] = line;
    for (char *p = line; *p && k < n; p++)
        if (*p == ',') *p = 0, f[k++] = p + 1;
    return k;
}

static int column(char **hdr, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return i;
    fail_msg("the sweep's CSV has no column '%s'", name);
    return -1;
}

/* Every point of results.csv against the fixture, field by field. */
static void compare_points(const char *results) {
    char *got = enpu_test_slurp(results), *want = enpu_test_slurp("tests/data/sweep_kws_points.csv");
    char *gs = NULL, *ws = NULL;
    char *gl = strtok_r(got, "\n", &gs), *wl = strtok_r(want, "\n", &ws);
    char *hdr[64], *wf[8];
    int nh = fields(gl, hdr, 64);
    int cp = column(hdr, nh, "point"), cs = column(hdr, nh, "status"), cc = column(hdr, nh, "cycles");
    int ce = column(hdr, nh, "energy_pj"), ca = column(hdr, nh, "area_um2");
    int n = 0;
    while ((gl = strtok_r(NULL, "\n", &gs)) && (wl = strtok_r(NULL, "\n", &ws))) {
        char *g[64];
        fields(gl, g, nh);
        fields(wl, wf, 5);
        const char *gv[5] = {g[cp], g[cs], g[cc], g[ce], g[ca]};
        static const char *const names[5] = {"point", "status", "cycles", "energy_pj", "area_um2"};
        for (int k = 0; k < 5; k++)
            if (strcmp(gv[k], wf[k]) != 0)
                fail_msg("point %s: %s %s, tests/data/sweep_kws_points.csv has %s", wf[0], names[k], gv[k], wf[k]);
        n++;
    }
    assert_int_equal(n, 1080);
    free(got);
    free(want);
}

static void test_documented_sweep(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_sweepdoc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s sweep models/kws_cnn.onnx --calib models/kws_cnn/calib --space examples/sweep_kws.json "
             "-o %s/kws.csv --svg %s/kws.svg",
             ENPU_CLI, dir, dir);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    char *doc = enpu_test_slurp("docs/energy.md");
    assert_non_null(strstr(out, "results (point x model): ok 1032 nofit 48"));
    char path[128];
    snprintf(path, sizeof path, "%s/kws.csv", dir);
    compare_points(path);
    /* the CSV's bytes are the ones docs/energy.md gives the SHA-256 of */
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    char *sha = NULL;
    assert_int_equal(enpu_test_run(cmd, &sha), 0);
    if (strncmp(sha, "e054b7dbe62f1770", 16) != 0) fail_msg("the sweep's CSV has SHA-256 %.64s", sha);
    assert_non_null(strstr(doc, "`e054b7dbe62f1770…` since a convolution's kernel-row blocks"));
    free(sha);
    assert_non_null(strstr(doc, "1,032 configurations fit; 48 do not"));
    /* every line of the front's table is in the doc */
    const char *t = strstr(out, "     point ");
    assert_non_null(t);
    for (int k = 0; k < 7; k++) {
        const char *nl = strchr(t, '\n');
        assert_non_null(nl);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(nl - t), t);
        if (!strstr(doc, line)) fail_msg("docs/energy.md lacks the front's line:\n%s", line);
        t = nl + 1;
    }
    snprintf(path, sizeof path, "%s/kws.svg", dir);
    char *svg = enpu_test_slurp(path), *committed = enpu_test_slurp("docs/sweep_kws_pareto.svg");
    if (strcmp(svg, committed) != 0)
        fail_msg("docs/sweep_kws_pareto.svg is not the picture the documented sweep draws: "
                 "regenerate it (%s)", cmd);
    /* and it renders (librsvg, scripts/deps.sh): a PNG of the SVG's 1160 x 1126
     * (the panels, then the front's 44 points listed one per line) */
    snprintf(cmd, sizeof cmd, "rsvg-convert -o %s/kws.png docs/sweep_kws_pareto.svg 2>&1", dir);
    char *rout = NULL;
    st = enpu_test_run(cmd, &rout);
    if (st != 0) fail_msg("rsvg-convert could not render docs/sweep_kws_pareto.svg (exit %d):\n%s", st, rout);
    free(rout);
    snprintf(path, sizeof path, "%s/kws.png", dir);
    uint8_t *png = NULL;
    size_t npng = 0;
    enpu_err err = {0};
    if (enpu_file_read(path, (size_t)1 << 26, &png, &npng, &err)) fail_msg("%s", err.msg);
    assert_true(npng > 24 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8) && !memcmp(png + 12, "IHDR", 4));
    assert_int_equal((uint32_t)png[16] << 24 | (uint32_t)png[17] << 16 | (uint32_t)png[18] << 8 | png[19], 1160);
    assert_int_equal((uint32_t)png[20] << 24 | (uint32_t)png[21] << 16 | (uint32_t)png[22] << 8 | png[23], 1126);
    free(png);
    free(svg);
    free(committed);
    free(doc);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_documented_sweep)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
