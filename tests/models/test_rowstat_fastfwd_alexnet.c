/* The row-stationary engine's fast-forward (docs/rowstat.md "Fast-forward")
 * against its per-cycle path on AlexNet's five convolution layers
 * (models/alexnet, as tests/models/test_rowstat_alexnet.c runs them: 16-bit
 * on preset eyeriss) on a smaller input: their channels, kernels, strides,
 * padding and groups, fewer rows and columns (the per-cycle path takes half
 * a minute on the full ones).  conv1 through enpu_test_assert_ff_equal (no
 * record, a trace, VCD windows); conv2-conv5, whose filters take most of
 * their cycles whatever the input (~0.3 s a run on the per-cycle path),
 * once each way without a record. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel

/* AlexNet's conv layer `name` with an h x w input (its channels, kernel,
 * strides, padding and groups), 16-bit on eyeriss, on a post-ReLU-like
 * input (half zeros), as tests/models/test_rowstat_alexnet.c runs them. */
static void alexnet(const char *name, int64_t h, int64_t w, bool once) {
    enpu_err err = {0};
    enpu_arch a = enpu_test_preset("eyeriss");
    char path[512];
    snprintf(path, sizeof path, REPO("models/alexnet/%s.onnx"), name);
    enpu_graph *g = NULL, *qg = NULL;
    assert_int_equal(enpu_onnx_load(path, &g, &err), 0);
    enpu_tensor *xt = &g->tensors[g->inputs[0]];
    xt->dims[2] = h, xt->dims[3] = w;
    for (int i = 0; i < g->n_tensors; i++)
        if (i != g->inputs[0] && !g->tensors[i].data) g->tensors[i].rank = -1; /* inferred again */
    if (enpu_graph_infer_shapes(g, &err) || enpu_graph_validate(g, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_quant_opts qo;
    enpu_compile_quant_opts(&a, &qo);
    qo.bits = 16;
    qo.quiet = true;
    assert_int_equal(enpu_quantize_graph(g, NULL, 0, &qo, &qg, NULL, &err), 0);
    enpu_program p;
    if (enpu_compile(qg, &a, NULL, &p, NULL, &err)) fail_msg("%s: %s", name, err.msg);
    enpu_buf in;
    assert_int_equal(enpu_buf_alloc(&in, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err), 0);
    uint64_t s = 20161231;
    for (int64_t i = 0; i < enpu_buf_numel(&in); i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ((float *)in.data)[i] = (s >> 63) ? (float)((s >> 40) & 0xFFFF) / 16384.0f : 0.0f;
    }
    char what[128];
    snprintf(what, sizeof what, "AlexNet %s at %lldx%lld (16-bit)", name, (long long)h, (long long)w);
    uint64_t compute = 0, ff = 0;
    uint64_t cycles = once ? enpu_test_assert_ff_equal_once(what, &p, &a, &in, NULL, 1, &ff, &compute)
                           : enpu_test_assert_ff_equal(what, &p, &a, &in, NULL, 1, true, &ff, &compute);
    fprintf(stderr, "%s: %llu cycles (%llu compute), the same with and without fast-forward; %llu "
                    "fast-forwarded\n",
            what, (unsigned long long)cycles, (unsigned long long)compute, (unsigned long long)ff);
    assert_true(ff * 10 > compute * 9);
    enpu_buf_free(&in);
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

/* Under ASan+UBSan (about five times slower, the longest test of that
 * suite) conv1 and conv5 only: conv2-conv4 take the same code paths (groups,
 * several passes, banks) and run in every Release suite. */
static void test_alexnet(void **state) {
    (void)state;
    alexnet("conv1", 39, 43, false);
#if !defined(__SANITIZE_ADDRESS__)
    alexnet("conv2", 5, 6, true);
    alexnet("conv3", 3, 4, true);
    alexnet("conv4", 4, 3, true);
#endif
    alexnet("conv5", 3, 3, true);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_alexnet)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
