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
     {"energy per inference 69.379 uJ (45 nm, 0.9 V; dynamic, counted actions), 17.725 pJ/MAC, average power "
      "62.717 mW at 100 MHz, EDP 7.675e-08 J*s, area 8.931 mm2",
      "energy by unit (uJ): mac 1.566 (2.3%) alu 0.008 (0.0%) requant 0.129 (0.2%) psum 18.486 (26.6%) pe_fifo "
      "0.732 (1.1%) ifmap_lb 2.576 (3.7%) filter_lb 7.297 (10.5%) glb 4.599 (6.6%) itcm 0.000 (0.0%) bus 0.000 "
      "(0.0%) noc 3.725 (5.4%) psum_link 0.429 (0.6%) psum_net 4.926 (7.1%) dram 24.905 (35.9%)",
      "energy by level (uJ): datapath 1.702 (2.5%) register file 29.091 (41.9%) global buffer 4.599 (6.6%) "
      "network 9.081 (13.1%) dram 24.905 (35.9%)"},
     0},
    {"rowstat", 16,
     {"energy per inference 92.689 uJ (45 nm, 0.9 V; dynamic, counted actions), 23.680 pJ/MAC, average power "
      "78.571 mW at 100 MHz, EDP 1.093e-07 J*s, area 8.931 mm2",
      "energy by unit (uJ): mac 3.816 (4.1%) alu 0.016 (0.0%) requant 0.129 (0.1%) psum 17.938 (19.4%) pe_fifo "
      "0.732 (0.8%) ifmap_lb 2.576 (2.8%) filter_lb 7.297 (7.9%) glb 8.717 (9.4%) itcm 0.000 (0.0%) bus 0.000 "
      "(0.0%) noc 3.725 (4.0%) psum_link 0.645 (0.7%) psum_net 7.419 (8.0%) dram 39.679 (42.8%)",
      "energy by level (uJ): datapath 3.960 (4.3%) register file 28.543 (30.8%) global buffer 8.717 (9.4%) "
      "network 11.790 (12.7%) dram 39.679 (42.8%)"},
     0},
    {"eyeriss", 8,
     {"energy per inference 45.861 uJ (45 nm, 0.9 V; dynamic, counted actions), 11.716 pJ/MAC, average power "
      "156.866 mW at 200 MHz, EDP 1.341e-08 J*s, area 4.206 mm2",
      "energy by unit (uJ): mac 1.566 (3.4%) alu 0.008 (0.0%) requant 0.129 (0.3%) psum 9.918 (21.6%) pe_fifo "
      "0.147 (0.3%) ifmap_lb 0.546 (1.2%) filter_lb 2.413 (5.3%) glb 4.309 (9.4%) itcm 0.000 (0.0%) bus 0.000 "
      "(0.0%) noc 1.024 (2.2%) psum_link 0.840 (1.8%) psum_net 2.046 (4.5%) dram 22.914 (50.0%)",
      "energy by level (uJ): datapath 1.703 (3.7%) register file 13.024 (28.4%) global buffer 4.309 (9.4%) "
      "network 3.911 (8.5%) dram 22.914 (50.0%)"},
     0},
    {"eyeriss", 16,
     {"energy per inference 67.350 uJ (45 nm, 0.9 V; dynamic, counted actions), 17.206 pJ/MAC, average power "
      "214.636 mW at 200 MHz, EDP 2.113e-08 J*s, area 4.206 mm2",
      "energy by unit (uJ): mac 3.816 (5.7%) alu 0.009 (0.0%) requant 0.129 (0.2%) psum 9.918 (14.7%) pe_fifo "
      "0.198 (0.3%) ifmap_lb 0.551 (0.8%) filter_lb 2.413 (3.6%) glb 5.543 (8.2%) itcm 0.000 (0.0%) bus 0.000 "
      "(0.0%) noc 1.094 (1.6%) psum_link 0.840 (1.2%) psum_net 2.050 (3.0%) dram 40.788 (60.6%)",
      "energy by level (uJ): datapath 3.953 (5.9%) register file 13.080 (19.4%) global buffer 5.544 (8.2%) "
      "network 3.985 (5.9%) dram 40.788 (60.6%)"},
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
