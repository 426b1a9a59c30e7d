/* The sweeps of the systolic and row-stationary engines that docs/energy.md
 * "Every engine" shows: each runs as documented (array shape, buffer or
 * scratchpad sizes, the SRAM word or DRAM and network bandwidth), every line
 * of its Pareto front is in the doc, its picture is the committed SVG byte
 * for byte and renders, the points it quotes have its figures, and the
 * preset's own point has those of `easynpu run --arch systolic|eyeriss`
 * (8461 cycles, 11.177 uJ; 51751 cycles, 50.178 uJ: test_rowstat_cli). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "testutil.h"

#define KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib"

/* a point's CSV fields from its status to its energy (the figures the
 * doc quotes), exactly */
typedef struct point_row {
    int point;
    const char *fields;
} point_row;

typedef struct sweep_case {
    const char *name, *args, *svg; /* svg: the committed picture */
    const char *counts;            /* the summary's line of statuses */
    int front;                     /* configurations on the front */
    int width, height;             /* of the picture */
    point_row rows[4];             /* the first: the --arch preset's own point */
} sweep_case;

static const sweep_case cases[] = {
    {"systolic",
     "--arch systolic --param sya_rows=8,16,32 --param sya_cols=8,16,32 --param main_dtcm_bytes=65536,1048576 "
     "--param weight_mem_bytes=65536,524288 --param pes=16,32",
     "docs/sweep_systolic_pareto.svg",
     "results (point x model): ok 72",
     4,
     1160,
     606,
     {{39, ",ok,8461,3914280,84.61,0.4517833663278572,11176964.04151722,"},
      {33, ",ok,8461,3914280,84.61,0.4517833663278572,5165960.842928314,"},
      {40, ",ok,8461,3914280,84.61,0.2258916831639286,4595751.730770427,"}}},
    {"rowstat",
     "--arch eyeriss --param rs_rows=6,12 --param rs_cols=7,14 --param rs_glb_bytes=55296,110592 "
     "--param rs_psum_depth=12,24 --param rs_filter_net_values=1,4 --param dram_bytes_per_cycle=2,8",
     "docs/sweep_rowstat_pareto.svg",
     "results (point x model): ok 64",
     11,
     1160,
     697,
     {{63, ",ok,51751,3914280,258.755,0.4502190433863252,50177583.99785835,"},
      {51, ",ok,51751,3914280,258.755,0.4502190433863252,45580023.87039876,"},
      {59, ",ok,51751,3914280,258.755,0.4502190433863252,46908347.71016933,"},
      {62, ",ok,77882,3914280,389.41,0.2991613686639495,48048636.09246901,"}}},
};

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* The rendered picture is a PNG of the SVG's size (librsvg's rsvg-convert). */
static void assert_renders(const char *svg, const char *dir, int w, int h) {
    char cmd[512], path[128];
    snprintf(path, sizeof path, "%s/front.png", dir);
    snprintf(cmd, sizeof cmd, "rsvg-convert -o %s %s 2>&1", path, svg);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("rsvg-convert could not render %s (exit %d):\n%s", svg, st, out);
    free(out);
    uint8_t *png = NULL;
    size_t n = 0;
    enpu_err err = {0};
    if (enpu_file_read(path, (size_t)1 << 26, &png, &n, &err)) fail_msg("%s", err.msg);
    assert_true(n > 24 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8) && !memcmp(png + 12, "IHDR", 4));
    if (be32(png + 16) != (uint32_t)w || be32(png + 20) != (uint32_t)h)
        fail_msg("%s renders %u x %u, not %d x %d", svg, be32(png + 16), be32(png + 20), w, h);
    free(png);
}

static void run_case(const sweep_case *c) {
    char dir[] = "/tmp/enpu_sweepeng_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[2048], path[128];
    snprintf(cmd, sizeof cmd, "%s sweep " KWS " %s -o %s/s.csv --svg %s/s.svg --jobs 1", ENPU_CLI, c->args, dir, dir);
    char *out = NULL, *doc = enpu_test_slurp("docs/energy.md");
    int st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("%s: exit %d:\n%s", c->name, st, out);
    if (!strstr(out, c->counts)) fail_msg("%s: no '%s' in:\n%s", c->name, c->counts, out);
    char want[128];
    snprintf(want, sizeof want, "Pareto front of latency, energy and area: %d configuration(s)", c->front);
    if (!strstr(out, want)) fail_msg("%s: no '%s' in:\n%s", c->name, want, out);
    /* the front's table, header and every configuration, is in the doc */
    const char *t = strstr(out, "     point ");
    assert_non_null(t);
    for (int k = 0; k <= c->front; k++) {
        const char *nl = strchr(t, '\n');
        assert_non_null(nl);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(nl - t), t);
        if (!strstr(doc, line)) fail_msg("docs/energy.md lacks the %s front's line:\n%s", c->name, line);
        t = nl + 1;
    }
    /* the points the doc quotes, the preset's first (the run's cycles and
     * energy) */
    snprintf(path, sizeof path, "%s/s.csv", dir);
    char *csv = enpu_test_slurp(path);
    for (int i = 0; i < 4 && c->rows[i].fields; i++) {
        const char *row = NULL;
        for (const char *p = strchr(csv, '\n'); p && !row; p = strchr(p + 1, '\n')) {
            const char *f = strchr(p + 1, ',');
            if (f && atoi(f + 1) == c->rows[i].point && f[1 + strspn(f + 1, "0123456789")] == ',') row = p + 1;
        }
        if (!row) fail_msg("%s: no point %d in the results", c->name, c->rows[i].point);
        const char *f = strstr(row, ",ok,");
        if (!f || strncmp(f, c->rows[i].fields, strlen(c->rows[i].fields)) != 0)
            fail_msg("%s: point %d is\n%.*s\nnot ...%s", c->name, c->rows[i].point, (int)strcspn(row, "\n"), row,
                     c->rows[i].fields);
    }
    /* the picture is the committed one, and it renders */
    snprintf(path, sizeof path, "%s/s.svg", dir);
    char *svg = enpu_test_slurp(path), *committed = enpu_test_slurp(c->svg);
    if (strcmp(svg, committed) != 0)
        fail_msg("%s is not the picture the documented sweep draws: regenerate it (%s)", c->svg, cmd);
    assert_renders(c->svg, dir, c->width, c->height);
    free(svg), free(committed), free(csv), free(doc), free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_systolic(void **state) {
    (void)state;
    run_case(&cases[0]);
}

static void test_rowstat(void **state) {
    (void)state;
    run_case(&cases[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_systolic), cmocka_unit_test(test_rowstat)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
