/* The fast tiling search against the exhaustive one on every model of the
 * tests (docs/compiler.md "The tiling search"): the programs are the same,
 * instruction for instruction and byte for byte of every memory image, so
 * the cycles are too.  Then every model again through one compile cache
 * shared by all of them and by several archs, as a sweep shares it: equal
 * to a compile with a fresh cache.  The repository's models always; the
 * real models in the shared part; det320, whose exhaustive search takes
 * seconds, in the long tier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/tflite.h"
#include "testutil.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel

typedef struct mdl {
    const char *name, *onnx, *calib;
    bool shape; /* audio1d: the time axis fixed at 98 frames */
    bool shared, tflite;
} mdl;

static void assert_same_program(const char *what, const enpu_program *a, const enpu_program *b) {
    if (a->n_instr != b->n_instr) fail_msg("%s: %d instructions vs %d", what, a->n_instr, b->n_instr);
    for (int i = 0; i < a->n_instr; i++)
        if (memcmp(&a->instr[i], &b->instr[i], sizeof a->instr[i]) != 0)
            fail_msg("%s: instruction %d ('%s') differs", what, i, a->layers[i].name);
    if (a->weights_len != b->weights_len ||
        (a->weights_len && memcmp(a->weights, b->weights, a->weights_len) != 0))
        fail_msg("%s: weight memory images differ", what);
    if (a->skip_init_len != b->skip_init_len ||
        (a->skip_init_len && memcmp(a->skip_init, b->skip_init, a->skip_init_len) != 0))
        fail_msg("%s: skip DTCM images differ", what);
    if (a->dram_init_len != b->dram_init_len ||
        (a->dram_init_len && memcmp(a->dram_init, b->dram_init, a->dram_init_len) != 0))
        fail_msg("%s: DRAM images differ", what);
    assert_int_equal(enpu_cost_program(a, NULL, NULL), enpu_cost_program(b, NULL, NULL));
}

static enpu_graph *load(const mdl *m, const enpu_arch *a, char *path, size_t n) {
    snprintf(path, n, "%s", m->onnx);
    if (m->shared) {
        const char *p = enpu_test_shared_model(m->onnx);
        if (!p) return NULL;
        snprintf(path, n, "%s", p);
    }
    if (m->tflite) {
        enpu_graph *qg = NULL;
        enpu_err err = {0};
        if (enpu_tflite_load(path, &qg, &err)) fail_msg("%s: %s", path, err.msg);
        return qg;
    }
    if (!m->shape) return enpu_test_quantize(path, m->calib, a);
    enpu_onnx_input_shape s = {"x", 3, {1, 40, 98}}; /* audio1d's symbolic time axis */
    enpu_onnx_opts io = {0, NULL, 0, &s, 1};
    return enpu_test_quantize_opts(path, &io, m->calib, a);
}

/* Fast = exhaustive on archs `archs`, then through the shared cache. */
static void check(const mdl *ms, size_t nm, const char *const *archs, int na) {
    enpu_compile_cache *shared = enpu_compile_cache_new(0);
    assert_non_null(shared);
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < nm; k++)
            for (int ai = 0; ai < na; ai++) {
                const mdl *m = &ms[k];
                enpu_arch a = enpu_test_preset(archs[ai]);
                if (m->tflite) a.requant = ENPU_REQUANT_TFLITE;
                char path[4096], what[256];
                enpu_graph *qg = load(m, &a, path, sizeof path);
                assert_non_null(qg);
                snprintf(what, sizeof what, "%s on %s", m->name, a.name);
                enpu_compile_opts fast, exh;
                enpu_compile_opts_default(&fast);
                enpu_compile_opts_default(&exh);
                exh.search = ENPU_SEARCH_EXHAUSTIVE;
                enpu_program pf, pe;
                enpu_err err = {0};
                if (enpu_compile(qg, &a, &fast, &pf, NULL, &err)) fail_msg("%s: %s", what, err.msg);
                if (pass == 0) {
                    if (enpu_compile(qg, &a, &exh, &pe, NULL, &err)) fail_msg("%s exhaustive: %s", what, err.msg);
                    assert_same_program(what, &pf, &pe);
                    fprintf(stderr, "%s: fast = exhaustive, %d instructions, %lld cycles\n", what, pf.n_instr,
                            (long long)enpu_cost_program(&pf, NULL, NULL));
                } else {
                    /* every model and arch through one cache: its second
                     * pass meets the entries of all the others */
                    enpu_compile_opts sc = fast;
                    sc.cache = shared;
                    if (enpu_compile(qg, &a, &sc, &pe, NULL, &err)) fail_msg("%s cached: %s", what, err.msg);
                    assert_same_program(what, &pf, &pe);
                }
                enpu_program_free(&pf);
                enpu_program_free(&pe);
                enpu_graph_free(qg);
            }
    uint64_t hits = 0;
    enpu_compile_cache_stats(shared, &hits, NULL, NULL);
    enpu_compile_cache_free(shared);
    assert_true(hits > 0);
}

static void test_repo_models(void **state) {
    (void)state;
    static const mdl ms[] = {
        {"kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), false, false, false},
        {"pruned_cnn", REPO("models/pruned_cnn.onnx"), REPO("models/pruned_cnn/calib"), false, false, false},
        {"mlp1m", REPO("models/offchip/mlp1m.onnx"), REPO("models/offchip/mlp1m/calib"), false, false, false},
        {"mbv3", REPO("models/import/mbv3.onnx"), REPO("models/import/mbv3/calib"), false, false, false},
        {"dethead", REPO("models/import/dethead.onnx"), REPO("models/import/dethead/calib"), false, false, false},
        {"audio1d", REPO("models/import/audio1d.onnx"), REPO("models/import/audio1d/calib"), true, false, false},
        {"lngelu", REPO("models/import/lngelu.onnx"), REPO("models/import/lngelu/calib"), false, false, false},
        {"qdq", REPO("models/import/qdq.onnx"), REPO("models/import/qdq/calib"), false, false, false},
        {"qlinear", REPO("models/import/qlinear.onnx"), REPO("models/import/qlinear/calib"), false, false, false},
    };
    static const char *const archs[] = {"easynpu", "large"};
    check(ms, sizeof ms / sizeof ms[0], archs, 2);
}

static void test_shared_models(void **state) {
    (void)state;
    static const mdl ms[] = {
        {"mlperf-vww-float", "mlperf-vww-float/model.onnx", NULL, false, true, false},
        {"mnist-8", "mnist-8/model.onnx", NULL, false, true, false},
        {"alibaba-kws", "alibaba-kws/model.onnx", NULL, false, true, false},
        {"ds-cnn int8", "mlperf-tiny-int8/kws_ref_model.tflite", NULL, false, true, true},
        {"resnet-8 int8", "mlperf-tiny-int8/pretrainedResnet_quant.tflite", NULL, false, true, true},
        {"vww int8", "mlperf-tiny-int8/vww_96_int8.tflite", NULL, false, true, true},
    };
    static const char *const archs[] = {"easynpu", "large"};
    check(ms, sizeof ms / sizeof ms[0], archs, 2);
}

static void test_det320(void **state) {
    (void)state;
    static const mdl ms[] = {
        {"det320", REPO("models/offchip/det320.onnx"), REPO("models/offchip/det320/calib"), false, false, false},
    };
    static const char *const archs[] = {"easynpu"};
    check(ms, 1, archs, 1);
}

int main(int argc, char **argv) {
    static const struct CMUnitTest repo[] = {cmocka_unit_test(test_repo_models)};
    static const struct CMUnitTest shared[] = {cmocka_unit_test(test_shared_models)};
    static const struct CMUnitTest slow[] = {cmocka_unit_test(test_det320)};
    return ENPU_TEST_MAIN_TIERS(argc, argv, repo, shared, slow, ENPU_NO_TESTS);
}
