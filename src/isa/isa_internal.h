/* Private helpers of src/isa: a growable byte/string buffer and small
 * integer utilities shared by the arch, ISA, program and listing code. */
#ifndef ENPU_ISA_INTERNAL_H
#define ENPU_ISA_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* A growable buffer.  After an allocation failure `oom` is set and further
 * appends are ignored, so callers check once at the end. */
typedef struct enpu_sb {
    char *s;
    size_t len, cap;
    int oom;
} enpu_sb;

void enpu_sb_put(enpu_sb *b, const void *data, size_t n);
void enpu_sb_puts(enpu_sb *b, const char *s);
void enpu_sb_printf(enpu_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends n zero bytes. */
void enpu_sb_zero(enpu_sb *b, size_t n);
/* Appends s as a double-quoted string: '"' and '\\' escaped with a
 * backslash, bytes outside 0x20..0x7e as \xHH. */
void enpu_sb_quote(enpu_sb *b, const char *s);
/* Returns the NUL-terminated contents (ownership to the caller) and resets
 * b; NULL if an allocation failed. */
char *enpu_sb_take(enpu_sb *b);
void enpu_sb_free(enpu_sb *b);

/* enpu_arch_from_json for the canonical form (a program's ARCH section, a
 * listing's .arch): every key is there but lane_groups_max 1, which
 * enpu_arch_to_json leaves out; an absent key is not inherited from the
 * base preset as in a user's file. */
struct enpu_arch;
struct enpu_err;
int enpu_arch_from_canonical_json(const char *text, size_t n, const char *what, struct enpu_arch *out,
                                  struct enpu_err *err);

/* Number of bits needed to hold v >= 0 (0 for v == 0). */
static inline int enpu_bitlen(uint64_t v) {
    int n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

static inline int64_t enpu_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Shortest "%.{15,16,17}g" spelling of d that reads back exactly. */
void enpu_fmt_double(char *buf, size_t n, double d);

#endif
