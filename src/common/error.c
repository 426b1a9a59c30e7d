#include "easynpu/error.h"

#include <stdio.h>
#include <string.h>

/* Messages quote names and tokens taken from input files, which may hold any
 * byte: control characters (a newline, an escape sequence) are written as
 * \xHH so that an error stays one line and cannot drive the terminal. */
static void escape_controls(char *msg, size_t cap) {
    size_t n = strlen(msg), extra = 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f) extra += 3;
    if (extra == 0) return;
    char tmp[ENPU_ERR_MSG_MAX];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < sizeof tmp; i++) {
        unsigned char c = (unsigned char)msg[i];
        if (c < 0x20 || c == 0x7f) {
            if (o + 5 > sizeof tmp) break;
            snprintf(tmp + o, 5, "\\x%02x", c);
            o += 4;
        } else {
            tmp[o++] = (char)c;
        }
    }
    tmp[o] = '\0';
    snprintf(msg, cap, "%s", tmp);
}

int enpu_fail(enpu_err *err, enpu_status code, const char *fmt, ...) {
    if (err && err->code == ENPU_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        escape_controls(err->msg, sizeof err->msg);
        err->code = code;
    }
    return code;
}

int enpu_err_prefix(enpu_err *err, const char *fmt, ...) {
    if (!err) return ENPU_E_USAGE;
    char prefix[ENPU_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* Truncation is acceptable: the message keeps its head, which names the file. */
    char tmp[2 * ENPU_ERR_MSG_MAX + 4];
    snprintf(tmp, sizeof tmp, "%s: %s", prefix, err->msg);
    size_t n = strlen(tmp);
    if (n >= sizeof err->msg) n = sizeof err->msg - 1;
    memcpy(err->msg, tmp, n);
    err->msg[n] = '\0';
    escape_controls(err->msg, sizeof err->msg);
    return err->code;
}

void enpu_err_clear(enpu_err *err) {
    if (!err) return;
    err->code = ENPU_OK;
    err->msg[0] = '\0';
}

const char *enpu_status_name(enpu_status code) {
    switch (code) {
    case ENPU_OK: return "ok";
    case ENPU_E_IO: return "io";
    case ENPU_E_FORMAT: return "format";
    case ENPU_E_UNSUPPORTED: return "unsupported";
    case ENPU_E_INVALID: return "invalid";
    case ENPU_E_LIMIT: return "limit";
    case ENPU_E_NOMEM: return "nomem";
    case ENPU_E_USAGE: return "usage";
    case ENPU_E_MISMATCH: return "mismatch";
    case ENPU_E_NOFIT: return "nofit";
    case ENPU_E_INCOMPATIBLE: return "incompatible";
    case ENPU_E_ACCURACY: return "accuracy";
    case ENPU_E_INTERNAL: return "internal";
    }
    return "unknown";
}

int enpu_exit_code(enpu_status code) {
    if (code == ENPU_OK) return 0;
    if (code == ENPU_E_MISMATCH) return 1;
    if (code == ENPU_E_ACCURACY) return 3;
    if (code == ENPU_E_INTERNAL) return 4;
    return 2;
}
