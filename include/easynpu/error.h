/* EasyNPU error reporting.
 *
 * Every fallible library function takes an `enpu_err *` last and returns 0 on
 * success or a negative enpu_status.  The error carries a category (tests
 * assert it) and one line of text that names the file, node, field or section
 * at fault.  Internal invariants use ENPU_ASSERT, which prints file and line:
 * a failed assert is a bug in EasyNPU, never a user error. */
#ifndef EASYNPU_ERROR_H
#define EASYNPU_ERROR_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum enpu_status {
    ENPU_OK = 0,
    ENPU_E_IO = -1,          /* cannot open/read/write a file */
    ENPU_E_FORMAT = -2,      /* file is not what it claims (bad magic, truncated, corrupt) */
    ENPU_E_UNSUPPORTED = -3, /* valid input we do not handle (op, dtype, attribute value) */
    ENPU_E_INVALID = -4,     /* malformed model/graph/program (dangling name, cycle, bad shape) */
    ENPU_E_LIMIT = -5,       /* exceeds a documented limit (size, rank, dimension, memory) */
    ENPU_E_NOMEM = -6,       /* allocation failed */
    ENPU_E_USAGE = -7,       /* bad command-line usage or API argument */
    ENPU_E_MISMATCH = -8,    /* a check failed: outputs differ, not bit-exact */
    ENPU_E_NOFIT = -9,       /* model does not fit the architecture */
    ENPU_E_INCOMPATIBLE = -10, /* inputs that do not belong together: a program compiled for
                                  another arch, the .qjson of another model */
    ENPU_E_ACCURACY = -11,    /* bit-exact, but int8 misses an accuracy gate the user set
                                 (--min-sqnr, --require-top1, --min-top1, --min-agreement) */
    ENPU_E_INTERNAL = -12     /* a bug in EasyNPU that it caught: a simulator that stopped
                                 making progress (its watchdog, docs/hardening.md) */
} enpu_status;

#define ENPU_ERR_MSG_MAX 2048 /* room for an importer error listing every problem */

typedef struct enpu_err {
    enpu_status code;
    char msg[ENPU_ERR_MSG_MAX];
} enpu_err;

/* Records an error (if err is non-NULL and holds none yet, so the innermost,
 * most specific message wins) and returns `code` for `return enpu_fail(...)`. */
int enpu_fail(enpu_err *err, enpu_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the message already in err with "prefix: ", for context such as the
 * file name, and returns err->code. */
int enpu_err_prefix(enpu_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void enpu_err_clear(enpu_err *err);

/* Stable short name of a category ("io", "format", ...) for messages and tests. */
const char *enpu_status_name(enpu_status code);

/* Process exit code for a status: 0 ok, 1 a failed check (not bit-exact),
 * 2 bad input/usage, 3 an accuracy gate missed, 4 an internal error (a bug
 * in EasyNPU, not in the input: worth a report). */
int enpu_exit_code(enpu_status code);

#define ENPU_ASSERT(x)                                                                    \
    do {                                                                                  \
        if (!(x)) {                                                                       \
            fprintf(stderr, "EasyNPU internal error: %s:%d: assertion failed: %s\n",     \
                    __FILE__, __LINE__, #x);                                              \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
