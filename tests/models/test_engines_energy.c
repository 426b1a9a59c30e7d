/* The default model on every engine, int8 and, where the engine takes it,
 * int16 (docs/energy.md "The default model on every engine"): end to end
 * (enpu_test_e2e_bits: bit-exact with the golden reference, the cost model
 * equal to the simulator, the estimate's counts equal to the simulator's),
 * the energy of the simulator's counts equal to the estimate's to the last
 * bit, and the table's every figure -- cycles, energy, pJ/MAC, EDP, area --
 * the doc's; the engines without a 16-bit datapath refuse 16-bit data; and
 * `easynpu sim` of a compiled program reports the same energy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/energy.h"
#include "testutil.h"

#define ONNX "models/kws_cnn.onnx"
#define CALIB "models/kws_cnn/calib"
#define INPUT "models/kws_cnn/sample_0.npy"

typedef struct engine_case {
    const char *arch;
    int bits;
    uint64_t cycles;
    double energy_pj; /* the simulator's counts times the costs */
} engine_case;

/* the same figures as `easynpu run` prints and its JSON has
 * (tests/cli/test_rowstat_cli.c, test_run.c, test_rowstat_energy.c) */
static const engine_case cases[] = {
    {"easynpu", 8, 245819, 23619239.988701984}, {"systolic", 8, 8461, 11176964.04151722},
    {"rowstat", 8, 99481, 90699598.50089252},   {"rowstat", 16, 102379, 106677756.5291241},
    {"eyeriss", 8, 51751, 50177583.99785835},   {"eyeriss", 16, 55426, 71529059.7849591},
};

static void test_every_engine(void **state) {
    (void)state;
    char *doc = enpu_test_slurp("docs/energy.md");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const engine_case *c = &cases[i];
        enpu_arch a = enpu_test_preset(c->arch);
        char name[64];
        snprintf(name, sizeof name, "%s int%d", c->arch, c->bits);
        enpu_test_e2e_result r;
        uint64_t cycles = enpu_test_e2e_bits(name, ONNX, CALIB, INPUT, &a, NULL, c->bits, &r);
        /* the same counts give the same energy, bit for bit */
        if (r.energy_pj != r.estimate_pj)
            fail_msg("%s: simulated %.17g pJ, estimated %.17g pJ", name, r.energy_pj, r.estimate_pj);
        if (cycles != c->cycles || r.energy_pj < c->energy_pj - 1e-6 || r.energy_pj > c->energy_pj + 1e-6)
            fail_msg("%s: %llu cycles, %.17g pJ; want %llu, %.17g", name, (unsigned long long)cycles, r.energy_pj,
                     (unsigned long long)c->cycles, c->energy_pj);
        /* the doc's row */
        enpu_energy_summary s;
        enpu_area ar;
        enpu_energy_summarize(&a, cycles, r.energy_pj, &s);
        enpu_area_of(&a, &ar);
        char row[256];
        snprintf(row, sizeof row, "| `%s` | int%d | %llu | %.3f | %.3f | %.4g | %.3f |", c->arch, c->bits,
                 (unsigned long long)cycles, r.energy_pj / 1e6, enpu_energy_per_mac(r.energy_pj, r.npu_macs),
                 s.edp_js, ar.total_um2 / 1e6);
        if (!strstr(doc, row)) fail_msg("docs/energy.md lacks the row\n%s", row);
    }
    free(doc);
}

/* EasyNPU and the systolic array compute on int8 data only. */
static void test_int16_refused(void **state) {
    (void)state;
    static const char *const refusals[][2] = {
        {"easynpu", "the easynpu engine computes on int8 data; the model is quantized to 16 bits"},
        {"systolic", "the systolic engine computes on int8 data; the model is quantized to 16 bits"},
    };
    for (int i = 0; i < 2; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s run " ONNX " --calib " CALIB " --input " INPUT " --arch %s --bits 16", ENPU_CLI,
                 refusals[i][0]);
        char *out = NULL;
        assert_int_equal(enpu_test_run(cmd, &out), 2);
        if (!strstr(out, refusals[i][1])) fail_msg("no '%s' in:\n%s", refusals[i][1], out);
        free(out);
    }
}

/* `easynpu sim` of a compiled program prints the energy lines `run` does
 * (every engine: the same counts). */
static void test_sim_reports(void **state) {
    (void)state;
    static const char *const want[][2] = {
        {"systolic", "energy per inference 11.177 uJ (45 nm, 0.9 V; dynamic, counted actions), 2.855 pJ/MAC, average "
                     "power 132.100 mW at 100 MHz, EDP 9.457e-10 J*s, area 16.209 mm2\n"},
        {"rowstat", "energy per inference 90.700 uJ (45 nm, 0.9 V; dynamic, counted actions), 23.171 pJ/MAC, average "
                    "power 91.173 mW at 100 MHz, EDP 9.023e-08 J*s, area 8.931 mm2\n"},
    };
    char dir[] = "/tmp/enpu_engsim_XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 2; i++) {
        char cmd[1024];
        char *out = NULL;
        snprintf(cmd, sizeof cmd, "%s compile " ONNX " --calib " CALIB " --arch %s -o %s/p.enpu", ENPU_CLI, want[i][0],
                 dir);
        if (enpu_test_run(cmd, &out) != 0) fail_msg("%s:\n%s", cmd, out);
        free(out);
        snprintf(cmd, sizeof cmd, "%s sim %s/p.enpu --input " INPUT, ENPU_CLI, dir);
        if (enpu_test_run(cmd, &out) != 0) fail_msg("%s:\n%s", cmd, out);
        if (!strstr(out, want[i][1])) fail_msg("%s: no '%s' in:\n%s", cmd, want[i][1], out);
        if (!strstr(out, "energy by level (uJ): datapath ")) fail_msg("%s: no energy by level in:\n%s", cmd, out);
        free(out);
    }
    char rm[64];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    assert_int_equal(system(rm), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_engine), cmocka_unit_test(test_int16_refused),
                                       cmocka_unit_test(test_sim_reports)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
