#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"

static int sb_reserve(enpu_sb *b, size_t extra) {
    if (b->oom) return -1;
    if (extra > SIZE_MAX - b->len - 1) {
        b->oom = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void enpu_sb_put(enpu_sb *b, const void *data, size_t n) {
    if (sb_reserve(b, n) != 0) return;
    if (n) memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = 0;
}

void enpu_sb_puts(enpu_sb *b, const char *s) { enpu_sb_put(b, s, strlen(s)); }

void enpu_sb_zero(enpu_sb *b, size_t n) {
    if (sb_reserve(b, n) != 0) return;
    memset(b->s + b->len, 0, n);
    b->len += n;
    b->s[b->len] = 0;
}

void enpu_sb_printf(enpu_sb *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)k < sizeof small) {
        enpu_sb_put(b, small, (size_t)k);
        return;
    }
    if (sb_reserve(b, (size_t)k) != 0) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

void enpu_sb_quote(enpu_sb *b, const char *s) {
    enpu_sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            enpu_sb_put(b, e, 2);
        } else if (*p < 0x20 || *p > 0x7e) {
            enpu_sb_printf(b, "\\x%02x", *p);
        } else {
            enpu_sb_put(b, p, 1);
        }
    }
    enpu_sb_put(b, "\"", 1);
}

char *enpu_sb_take(enpu_sb *b) {
    if (b->oom) {
        enpu_sb_free(b);
        return NULL;
    }
    if (!b->s) {
        char *e = calloc(1, 1);
        return e;
    }
    char *s = b->s;
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void enpu_sb_free(enpu_sb *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

void enpu_fmt_double(char *buf, size_t n, double d) {
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}
