/* libFuzzer target: TFLite models (enpu_tflite_parse), then what `inspect`
 * and `run` do with an accepted model before compiling: the layer table and,
 * for small graphs, one golden int8 run (TFLite's integer kernels) on zero
 * inputs. */
#include <stdint.h>

#include "easynpu/quant.h"
#include "easynpu/tflite.h"
#include "fuzz_common.h"
#include "report/model_table.h"

/* Graphs whose tensors hold more than this many elements in all are not run. */
#define FUZZ_RUN_MAX_ELEMS (1 << 16)

static void run_golden(const enpu_graph *g) {
    int64_t total = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        total += enpu_tensor_numel(&g->tensors[i]);
        if (total > FUZZ_RUN_MAX_ELEMS) return;
    }
    enpu_err err = {0};
    enpu_gexec *ex = NULL;
    int rc = enpu_gexec_new(g, &ex, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        return;
    }
    int8_t **in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    FUZZ_CHECK(in != NULL);
    for (int i = 0; i < g->n_inputs; i++) {
        in[i] = calloc((size_t)enpu_tensor_numel(&g->tensors[g->inputs[i]]) + 1, 1);
        FUZZ_CHECK(in[i] != NULL);
    }
    rc = enpu_gexec_run_i8(ex, (const int8_t *const *)in, &err);
    if (rc) fuzz_check_error(rc, &err);
    for (int i = 0; i < g->n_inputs; i++) free(in[i]);
    free(in);
    enpu_gexec_free(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_graph *g = (enpu_graph *)(uintptr_t)1;
    int rc = enpu_tflite_parse(data, size, "fuzz.tflite", &g, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        FUZZ_CHECK(g == NULL);
        return 0;
    }
    FUZZ_CHECK(g != NULL);
    FUZZ_CHECK(g->requant == ENPU_REQUANT_TFLITE);
    enpu_report_model_table(fuzz_sink(), g);
    run_golden(g);
    enpu_graph_free(g);
    return 0;
}
