/* libFuzzer target: ONNX models (enpu_onnx_parse), then what `inspect` and
 * `run-float` do with an accepted model: the layer table and, for small
 * graphs, one float32 reference run on zero inputs. */
#include <stdint.h>

#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"
#include "fuzz_common.h"
#include "report/model_table.h"

/* Graphs whose tensors hold more than this many elements in all are not run
 * (a valid model may legitimately need gigabytes). */
#define FUZZ_RUN_MAX_ELEMS (1 << 20)

static void run_float(const enpu_graph *g) {
    int64_t total = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        int64_t n = enpu_tensor_numel(&g->tensors[i]);
        if (n > FUZZ_RUN_MAX_ELEMS) return;
        total += n;
        if (total > FUZZ_RUN_MAX_ELEMS) return;
    }
    enpu_err err = {0};
    enpu_fexec *ex = NULL;
    int rc = enpu_fexec_new(g, &ex, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        return;
    }
    enpu_buf *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    FUZZ_CHECK(in != NULL);
    int ok = 1;
    for (int i = 0; i < g->n_inputs && ok; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i]];
        if (enpu_buf_alloc(&in[i], ENPU_DT_FLOAT32, t->rank, t->dims, &err)) ok = 0;
    }
    if (ok) {
        rc = enpu_fexec_run_n(ex, g->n_inputs, in, &err);
        if (rc) fuzz_check_error(rc, &err);
        for (int i = 0; i < g->n_outputs && rc == 0; i++) {
            enpu_buf out = {0};
            rc = enpu_fexec_output(ex, i, &out, &err);
            if (rc) fuzz_check_error(rc, &err);
            enpu_buf_free(&out);
        }
    }
    for (int i = 0; i < g->n_inputs; i++) enpu_buf_free(&in[i]);
    free(in);
    enpu_fexec_free(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_graph *g = (enpu_graph *)(uintptr_t)1;
    int rc = enpu_onnx_parse(data, size, "fuzz.onnx", &g, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        FUZZ_CHECK(g == NULL);
        return 0;
    }
    FUZZ_CHECK(g != NULL);
    enpu_report_model_table(fuzz_sink(), g);
    run_float(g);
    enpu_graph_free(g);
    return 0;
}
