/* The row-stationary engine's energy (docs/rowstat.md "Energy"): `easynpu
 * run` on the default model, presets rowstat and eyeriss, 8 and 16 bits,
 * prints the figures that page quotes -- energy per inference, pJ/MAC,
 * power, EDP, area, by unit and by level -- and its JSON has energy_pj per
 * layer (summing to the total's), the parts, the levels and the area; a
 * sweep of rowstat points evaluated from the cost model's counts without
 * simulating writes the same results as with --simulate, and its default
 * point the run's energy. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy"

static char dir[64];

static char *cli(const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    assert_non_null(out);
    if (st) fail_msg("%s: exit %d:\n%s", cmd, st, out);
    return out;
}

static void has(const char *out, const char *s) {
    if (!strstr(out, s)) fail_msg("no '%s' in:\n%s", s, out);
}

typedef struct figures {
    const char *arch;
    int bits;
    const char *lines[3];
    double total_pj; /* the JSON's, to 1e-3 pJ */
} figures;

static const figures expect[4] = {
    {"rowstat", 8,
     {"energy per inference 90.700 uJ (45 nm, 0.9 V; dynamic, counted actions), 23.171 pJ/MAC, average power "
      "91.173 mW at 100 MHz, EDP 9.023e-08 J*s, area 8.931 mm2",
      "energy by unit (uJ): mac 1.566 (1.7%) alu 0.038 (0.0%) requant 0.129 (0.1%) psum 16.248 (17.9%) pe_fifo "
      "0.575 (0.6%) ifmap_lb 2.548 (2.8%) filter_lb 7.297 (8.0%) glb 16.451 (18.1%) itcm 0.000 (0.0%) bus "
      "0.000 (0.0%) noc 2.323 (2.6%) psum_link 1.315 (1.4%) psum_net 15.065 (16.6%) dram 27.144 (29.9%)",
      "energy by level (uJ): datapath 1.732 (1.9%) register file 26.668 (29.4%) global buffer 16.452 (18.1%) "
      "network 18.703 (20.6%) dram 27.144 (29.9%)"},
     0},
    {"rowstat", 16,
     {"energy per inference 106.678 uJ (45 nm, 0.9 V; dynamic, counted actions), 27.253 pJ/MAC, average power "
      "104.199 mW at 100 MHz, EDP 1.092e-07 J*s, area 8.931 mm2",
      "energy by unit (uJ): mac 3.816 (3.6%) alu 0.022 (0.0%) requant 0.129 (0.1%) psum 17.415 (16.3%) pe_fifo "
      "0.844 (0.8%) ifmap_lb 2.596 (2.4%) filter_lb 7.297 (6.8%) glb 11.551 (10.8%) itcm 0.000 (0.0%) bus "
      "0.000 (0.0%) noc 2.572 (2.4%) psum_link 0.852 (0.8%) psum_net 9.784 (9.2%) dram 49.798 (46.7%)",
      "energy by level (uJ): datapath 3.967 (3.7%) register file 28.152 (26.4%) global buffer 11.551 (10.8%) "
      "network 13.209 (12.4%) dram 49.798 (46.7%)"},
     0},
    {"eyeriss", 8,
     {"energy per inference 50.178 uJ (45 nm, 0.9 V; dynamic, counted actions), 12.819 pJ/MAC, average power "
      "193.919 mW at 200 MHz, EDP 1.298e-08 J*s, area 4.206 mm2",
      "energy by unit (uJ): mac 1.566 (3.1%) alu 0.009 (0.0%) requant 0.129 (0.3%) psum 9.918 (19.8%) pe_fifo "
      "0.207 (0.4%) ifmap_lb 0.552 (1.1%) filter_lb 2.413 (4.8%) glb 4.535 (9.0%) itcm 0.000 (0.0%) bus 0.000 "
      "(0.0%) noc 0.992 (2.0%) psum_link 0.840 (1.7%) psum_net 2.057 (4.1%) dram 26.961 (53.7%)",
      "energy by level (uJ): datapath 1.703 (3.4%) register file 13.090 (26.1%) global buffer 4.536 (9.0%) "
      "network 3.888 (7.7%) dram 26.961 (53.7%)"},
     0},
    {"eyeriss", 16,
     {"energy per inference 71.529 uJ (45 nm, 0.9 V; dynamic, counted actions), 18.274 pJ/MAC, average power "
      "258.107 mW at 200 MHz, EDP 1.982e-08 J*s, area 4.206 mm2",
      "energy by unit (uJ): mac 3.816 (5.3%) alu 0.009 (0.0%) requant 0.129 (0.2%) psum 9.854 (13.8%) pe_fifo "
      "0.180 (0.3%) ifmap_lb 0.549 (0.8%) filter_lb 2.413 (3.4%) glb 5.736 (8.0%) itcm 0.000 (0.0%) bus 0.000 "
      "(0.0%) noc 0.965 (1.3%) psum_link 0.867 (1.2%) psum_net 2.094 (2.9%) dram 44.916 (62.8%)",
      "energy by level (uJ): datapath 3.954 (5.5%) register file 12.997 (18.2%) global buffer 5.736 (8.0%) "
      "network 3.926 (5.5%) dram 44.916 (62.8%)"},
     0},
};

static double eyeriss8_pj; /* the eyeriss int8 run's total, for the sweep */

static void test_runs(void **state) {
    (void)state;
    for (int i = 0; i < 4; i++) {
        const figures *f = &expect[i];
        char args[1024], path[128];
        snprintf(path, sizeof path, "%s/%s%d.json", dir, f->arch, f->bits);
        snprintf(args, sizeof args, "run " KWS " --arch %s --bits %d --json %s", f->arch, f->bits, path);
        char *out = cli(args);
        for (int k = 0; k < 3; k++) has(out, f->lines[k]);
        free(out);
        json_error_t je;
        json_t *root = json_load_file(path, 0, &je);
        if (!root) fail_msg("%s: %s", path, je.text);
        json_t *tot = json_object_get(root, "total"), *layers = json_object_get(root, "layers");
        double total = json_real_value(json_object_get(tot, "energy_pj")), sum = 0;
        assert_true(total > 0);
        for (size_t l = 0; l < json_array_size(layers); l++) {
            json_t *e = json_object_get(json_array_get(layers, l), "energy_pj");
            assert_true(json_is_real(e));
            sum += json_real_value(e);
        }
        assert_true(fabs(sum - total) < 1e-6 * total);
        /* every unit of the engine has its part, and the levels add up */
        json_t *parts = json_object_get(tot, "energy_parts_pj"), *lv = json_object_get(tot, "energy_levels_pj");
        for (const char *const *u = (const char *const[]){"mac", "alu", "requant", "psum", "pe_fifo", "ifmap_lb",
                                                          "filter_lb", "glb", "noc", "psum_link", "psum_net",
                                                          "dram", NULL};
             *u; u++)
            if (!json_is_real(json_object_get(parts, *u))) fail_msg("%s: no energy part '%s'", path, *u);
        double lsum = 0;
        const char *k;
        json_t *v;
        json_object_foreach(lv, k, v) lsum += json_real_value(v);
        assert_true(fabs(lsum - total) < 1e-6 * total);
        assert_true(json_real_value(json_object_get(json_object_get(root, "area"), "total_mm2")) > 0);
        if (i == 2) eyeriss8_pj = total;
        json_decref(root);
    }
}

/* A sweep of row-stationary points: from the counts without simulating
 * and with --simulate, the same results; the preset's own point (psum RAM
 * 24, 12 rows) has the run's energy. */
static void test_sweep(void **state) {
    (void)state;
    char args[1024], a[128], b[128];
    snprintf(a, sizeof a, "%s/est.csv", dir);
    snprintf(b, sizeof b, "%s/sim.csv", dir);
    snprintf(args, sizeof args,
             "sweep models/kws_cnn.onnx --calib models/kws_cnn/calib --arch eyeriss --param rs_psum_depth=16,24 "
             "--param rs_rows=8,12 -o %s --jobs 1",
             a);
    char *out = cli(args);
    has(out, "results (point x model): ok 4");
    free(out);
    snprintf(args, sizeof args,
             "sweep models/kws_cnn.onnx --calib models/kws_cnn/calib --arch eyeriss --param rs_psum_depth=16,24 "
             "--param rs_rows=8,12 -o %s --jobs 1 --simulate",
             b);
    free(cli(args));
    char *ta = NULL, *tb = NULL;
    snprintf(args, sizeof args, "cut -d, -f2- %s", a);
    assert_int_equal(enpu_test_run(args, &ta), 0);
    snprintf(args, sizeof args, "cut -d, -f2- %s", b);
    assert_int_equal(enpu_test_run(args, &tb), 0);
    assert_string_equal(ta, tb); /* all but the sweep's id, which names the mode */
    /* point 3: rs_psum_depth 24, rs_rows 12 -- the preset */
    const char *row = strstr(ta, "\n3,24,12,");
    assert_non_null(row);
    const char *f = row;
    for (int c = 0; c < 9; c++) f = strchr(f + 1, ','); /* point..utilization: then energy_pj */
    assert_true(fabs(strtod(f + 1, NULL) - eyeriss8_pj) < 1e-6);
    free(ta), free(tb);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_rs_energy_XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return enpu_test_run(cmd, NULL) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_runs), cmocka_unit_test(test_sweep)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
