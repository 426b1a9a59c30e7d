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
     {"energy per inference 83.282 uJ (45 nm, 0.9 V; dynamic, counted actions), 21.277 pJ/MAC, average "
      "power 78.155 mW at 100 MHz, EDP 8.875e-08 J*s, area 8.931 mm2",
      "energy by unit (uJ): mac 1.566 (1.9%) alu 0.016 (0.0%) requant 0.129 (0.2%) psum 17.907 (21.5%) "
      "pe_fifo 0.575 (0.7%) ifmap_lb 2.548 (3.1%) filter_lb 7.297 (8.8%) glb 7.654 (9.2%) itcm 0.000 "
      "(0.0%) bus 0.000 (0.0%) noc 2.926 (3.5%) psum_link 0.659 (0.8%) psum_net 7.535 (9.0%) dram 34.471 "
      "(41.4%)",
      "energy by level (uJ): datapath 1.710 (2.1%) register file 28.327 (34.0%) global buffer 7.654 (9.2%) "
      "network 11.120 (13.4%) dram 34.471 (41.4%)"},
     0},
    {"rowstat", 16,
     {"energy per inference 113.123 uJ (45 nm, 0.9 V; dynamic, counted actions), 28.900 pJ/MAC, average "
      "power 103.115 mW at 100 MHz, EDP 1.241e-07 J*s, area 8.931 mm2",
      "energy by unit (uJ): mac 3.816 (3.4%) alu 0.018 (0.0%) requant 0.129 (0.1%) psum 17.755 (15.7%) "
      "pe_fifo 0.575 (0.5%) ifmap_lb 2.548 (2.3%) filter_lb 7.297 (6.5%) glb 9.647 (8.5%) itcm 0.000 "
      "(0.0%) bus 0.000 (0.0%) noc 2.926 (2.6%) psum_link 0.719 (0.6%) psum_net 8.223 (7.3%) dram 59.470 "
      "(52.6%)",
      "energy by level (uJ): datapath 3.963 (3.5%) register file 28.176 (24.9%) global buffer 9.647 (8.5%) "
      "network 11.867 (10.5%) dram 59.470 (52.6%)"},
     0},
    {"eyeriss", 8,
     {"energy per inference 45.112 uJ (45 nm, 0.9 V; dynamic, counted actions), 11.525 pJ/MAC, average "
      "power 159.785 mW at 200 MHz, EDP 1.274e-08 J*s, area 4.206 mm2",
      "energy by unit (uJ): mac 1.566 (3.5%) alu 0.008 (0.0%) requant 0.129 (0.3%) psum 9.918 (22.0%) "
      "pe_fifo 0.109 (0.2%) ifmap_lb 0.541 (1.2%) filter_lb 2.413 (5.3%) glb 4.216 (9.3%) itcm 0.000 "
      "(0.0%) bus 0.000 (0.0%) noc 0.829 (1.8%) psum_link 0.840 (1.9%) psum_net 2.044 (4.5%) dram 22.498 "
      "(49.9%)",
      "energy by level (uJ): datapath 1.703 (3.8%) register file 12.982 (28.8%) global buffer 4.216 (9.3%) "
      "network 3.714 (8.2%) dram 22.498 (49.9%)"},
     0},
    {"eyeriss", 16,
     {"energy per inference 74.970 uJ (45 nm, 0.9 V; dynamic, counted actions), 19.153 pJ/MAC, average "
      "power 253.806 mW at 200 MHz, EDP 2.215e-08 J*s, area 4.206 mm2",
      "energy by unit (uJ): mac 3.816 (5.1%) alu 0.009 (0.0%) requant 0.129 (0.2%) psum 9.854 (13.1%) "
      "pe_fifo 0.180 (0.2%) ifmap_lb 0.549 (0.7%) filter_lb 2.413 (3.2%) glb 5.906 (7.9%) itcm 0.000 "
      "(0.0%) bus 0.000 (0.0%) noc 1.220 (1.6%) psum_link 0.867 (1.2%) psum_net 2.094 (2.8%) dram 47.932 "
      "(63.9%)",
      "energy by level (uJ): datapath 3.954 (5.3%) register file 12.997 (17.3%) global buffer 5.906 (7.9%) "
      "network 4.181 (5.6%) dram 47.932 (63.9%)"},
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
