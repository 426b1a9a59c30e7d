/* libFuzzer target: assembler listings (enpu_program_asm).  An accepted
 * listing must serialize, read back, and disassemble. */
#include "easynpu/program.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_program p, q;
    int rc = enpu_program_asm((const char *)data, size, "fuzz.s", NULL, &p, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        return 0;
    }
    uint8_t *b = NULL;
    size_t n = 0;
    rc = enpu_program_serialize(&p, &b, &n, &err);
    if (rc) fprintf(stderr, "serialize: %s\n", err.msg);
    FUZZ_CHECK(rc == 0);
    rc = enpu_program_read_mem(b, n, "serialized", NULL, &q, &err);
    if (rc) fprintf(stderr, "read back: %s\n", err.msg);
    FUZZ_CHECK(rc == 0);
    char *listing = enpu_program_disasm(&q, &err);
    FUZZ_CHECK(listing != NULL);
    free(listing);
    free(b);
    enpu_program_free(&q);
    enpu_program_free(&p);
    return 0;
}
