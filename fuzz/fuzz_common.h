/* Shared pieces of the libFuzzer targets: the invariants every reader keeps
 * on failure (a category, a one-line message, nothing returned) and a sink
 * for printed output.  A broken invariant aborts, which libFuzzer reports as
 * a crash with the input that caused it. */
#ifndef ENPU_FUZZ_COMMON_H
#define ENPU_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/error.h"

#define FUZZ_CHECK(x)                                                                  \
    do {                                                                               \
        if (!(x)) {                                                                    \
            fprintf(stderr, "fuzz invariant failed: %s:%d: %s\n", __FILE__, __LINE__, #x); \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* A failed call returned a negative category, recorded the same category and
 * a non-empty one-line message. */
static inline void fuzz_check_error(int rc, const enpu_err *err) {
    FUZZ_CHECK(rc < 0);
    FUZZ_CHECK(err->code == rc);
    FUZZ_CHECK(err->msg[0] != '\0');
    FUZZ_CHECK(strchr(err->msg, '\n') == NULL);
    FUZZ_CHECK(err->code != ENPU_E_NOMEM); /* inputs are small: no allocation may fail */
}

/* /dev/null, opened once, for the printers the CLI runs on what it read. */
static inline FILE *fuzz_sink(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    FUZZ_CHECK(f != NULL);
    return f;
}

/* The .npy and .pb targets: a tensor file parsed, then converted as
 * run-float converts its inputs. */
#ifdef EASYNPU_TENSOR_IO_H
static inline int fuzz_tensor_file(int (*parse)(const uint8_t *, size_t, enpu_buf *, enpu_err *),
                                   const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_buf b;
    memset(&b, 0xa5, sizeof b);
    int rc = parse(data, size, &b, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        FUZZ_CHECK(b.data == NULL && b.name == NULL);
        return 0;
    }
    int64_t n = enpu_buf_numel(&b);
    FUZZ_CHECK(n >= 0 && n <= ENPU_MAX_ELEMS);
    FUZZ_CHECK(b.rank >= 0 && b.rank <= ENPU_MAX_RANK);
    rc = enpu_buf_to_f32(&b, &err);
    if (rc) fuzz_check_error(rc, &err);
    enpu_buf_free(&b);
    return 0;
}
#endif

#endif
