/* The 1,080-configuration sweep of the default model that docs/energy.md
 * shows: run as documented, its Pareto front table is the one in the doc
 * and its picture is docs/sweep_kws_pareto.svg, byte for byte, which
 * renders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "testutil.h"

static char *slurp(const char *path) {
    uint8_t *b = NULL;
    size_t n = 0;
    enpu_err err = {0};
    if (enpu_file_read(path, (size_t)1 << 24, &b, &n, &err)) fail_msg("%s", err.msg);
    return (char *)b;
}

static void test_documented_sweep(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_sweepdoc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[2048];
#if defined(__SANITIZE_ADDRESS__)
    /* Under ASan+UBSan the 1,080 points take most of an hour (each compile
     * searches every lane-group and row count): a seeded sample of 48 of
     * them goes through the same code; the Release and clang builds check
     * the documented front and picture. */
    snprintf(cmd, sizeof cmd,
             "%s sweep models/kws_cnn.onnx --calib models/kws_cnn/calib --space examples/sweep_kws.json "
             "--random 48 --seed 7 -o %s/kws.csv --svg %s/kws.svg",
             ENPU_CLI, dir, dir);
    char *sout = NULL;
    int sst = enpu_test_run(cmd, &sout);
    if (sst != 0) fail_msg("exit %d:\n%s", sst, sout);
    assert_non_null(strstr(sout, "48 point(s) x 1 model(s)"));
    assert_non_null(strstr(sout, "Pareto front of latency, energy and area: "));
    free(sout);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return;
#endif
    snprintf(cmd, sizeof cmd,
             "%s sweep models/kws_cnn.onnx --calib models/kws_cnn/calib --space examples/sweep_kws.json "
             "-o %s/kws.csv --svg %s/kws.svg",
             ENPU_CLI, dir, dir);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    char *doc = slurp("docs/energy.md");
    assert_non_null(strstr(out, "results (point x model): ok 720 nofit 360"));
    assert_non_null(strstr(doc, "720 configurations fit; 360 do not"));
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
    char path[128];
    snprintf(path, sizeof path, "%s/kws.svg", dir);
    char *svg = slurp(path), *committed = slurp("docs/sweep_kws_pareto.svg");
    if (strcmp(svg, committed) != 0)
        fail_msg("docs/sweep_kws_pareto.svg is not the picture the documented sweep draws: "
                 "regenerate it (%s)", cmd);
    /* and it renders (librsvg, scripts/deps.sh): a PNG of the SVG's 1160 x 520 */
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
    assert_int_equal((uint32_t)png[20] << 24 | (uint32_t)png[21] << 16 | (uint32_t)png[22] << 8 | png[23], 520);
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
