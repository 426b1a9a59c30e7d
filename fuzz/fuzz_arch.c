/* libFuzzer target: architecture descriptions (enpu_arch_from_json).  An
 * accepted arch must survive its canonical JSON unchanged (same fingerprint)
 * and print its table and ISA layout. */
#include "easynpu/arch.h"
#include "easynpu/isa.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_arch a, b;
    int rc = enpu_arch_from_json((const char *)data, size, "fuzz.json", &a, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        return 0;
    }
    for (int pretty = 0; pretty <= 1; pretty++) {
        char *js = enpu_arch_to_json(&a, pretty);
        FUZZ_CHECK(js != NULL);
        rc = enpu_arch_from_json(js, strlen(js), "canonical", &b, &err);
        if (rc) fprintf(stderr, "canonical JSON refused: %s\n%s\n", err.msg, js);
        FUZZ_CHECK(rc == 0);
        FUZZ_CHECK(enpu_arch_fingerprint(&a) == enpu_arch_fingerprint(&b));
        free(js);
    }
    enpu_arch_print(&a, fuzz_sink());
    char *md = enpu_isa_table_md(&a, &err);
    FUZZ_CHECK(md != NULL);
    free(md);
    return 0;
}
