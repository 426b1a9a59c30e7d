/* libFuzzer target: quantized graphs (.qjson, enpu_qgraph_parse). */
#include "easynpu/quant.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_graph *g = (enpu_graph *)(uintptr_t)1;
    int rc = enpu_qgraph_parse((const char *)data, size, "fuzz.qjson", &g, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        FUZZ_CHECK(g == NULL);
        return 0;
    }
    FUZZ_CHECK(g != NULL);
    enpu_graph_free(g);
    return 0;
}
