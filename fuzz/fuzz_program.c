/* libFuzzer target: .enpu program files (enpu_program_read_mem).
 *
 * Each input is read twice: as it is (so the header, table and CRC checks
 * are fuzzed), and with its checksums, file size and arch fingerprint
 * recomputed (so mutations reach the section decoders behind the CRCs).
 * An accepted program must disassemble, and the listing must reassemble into
 * the bytes the program itself serializes to (what `easynpu disasm`
 * promises). */
#include "easynpu/program.h"
#include "fuzz_common.h"
#include "prog_fixup.h"

static void one(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_program p, q;
    int rc = enpu_program_read_mem(data, size, "fuzz.enpu", NULL, &p, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        return;
    }
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    rc = enpu_program_serialize(&p, &b1, &n1, &err);
    if (rc) fprintf(stderr, "serialize: %s\n", err.msg);
    FUZZ_CHECK(rc == 0);
    char *listing = enpu_program_disasm(&p, &err);
    FUZZ_CHECK(listing != NULL);
    rc = enpu_program_asm(listing, strlen(listing), "disasm.s", NULL, &q, &err);
    if (rc) fprintf(stderr, "reassembly: %s\n", err.msg);
    FUZZ_CHECK(rc == 0);
    rc = enpu_program_serialize(&q, &b2, &n2, &err);
    FUZZ_CHECK(rc == 0);
    FUZZ_CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0);
    free(b1);
    free(b2);
    free(listing);
    enpu_program_free(&q);
    enpu_program_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    one(data, size);
    if (size >= ENPU_PROG_HEADER_BYTES) {
        uint8_t *copy = malloc(size);
        FUZZ_CHECK(copy != NULL);
        memcpy(copy, data, size);
        fx_fix_checksums(copy, size);
        one(copy, size);
        free(copy);
    }
    return 0;
}
