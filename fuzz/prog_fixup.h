/* Recomputing the checksums of a .enpu program file (docs/program.md), for
 * the program fuzzer (so that mutations reach the section decoders behind
 * the CRCs) and for tests/bad/test_bad_corpus.c (which derives bad programs
 * from a good one).  Header-only, static functions. */
#ifndef ENPU_FUZZ_PROG_FIXUP_H
#define ENPU_FUZZ_PROG_FIXUP_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "easynpu/program.h"

static inline uint32_t fx_rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t fx_rd64(const uint8_t *p) { return fx_rd32(p) | (uint64_t)fx_rd32(p + 4) << 32; }
static inline void fx_wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void fx_wr64(uint8_t *p, uint64_t v) {
    fx_wr32(p, (uint32_t)v);
    fx_wr32(p + 4, (uint32_t)(v >> 32));
}

/* The section table entry of section `id` in d (n bytes), NULL if absent or
 * the table does not fit. */
static inline uint8_t *fx_entry(uint8_t *d, size_t n, int id) {
    if (n < ENPU_PROG_HEADER_BYTES) return NULL;
    uint32_t count = fx_rd32(d + 12);
    if (count > ENPU_PROG_MAX_SECTIONS || ENPU_PROG_HEADER_BYTES + (size_t)count * ENPU_PROG_ENTRY_BYTES > n)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *e = d + ENPU_PROG_HEADER_BYTES + (size_t)i * ENPU_PROG_ENTRY_BYTES;
        if ((int)fx_rd32(e) == id) return e;
    }
    return NULL;
}

/* The header CRC (bytes 0..23, 28..end of the section table); the table must
 * fit in the file. */
static inline void fx_fix_header_crc(uint8_t *d) {
    size_t end = ENPU_PROG_HEADER_BYTES + (size_t)fx_rd32(d + 12) * ENPU_PROG_ENTRY_BYTES;
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, d, 24);
    c = crc32(c, d + 28, (uInt)(end - 28));
    fx_wr32(d + 24, (uint32_t)c);
}

/* Recomputes the file size, the CRC of every section inside the file, the
 * arch fingerprint (the CRC of the ARCH section) and the header CRC.  Does
 * nothing when the header or the table does not fit: the reader must refuse
 * such a file on its own. */
static inline void fx_fix_checksums(uint8_t *d, size_t n) {
    if (n < ENPU_PROG_HEADER_BYTES) return;
    uint32_t count = fx_rd32(d + 12);
    if (count > ENPU_PROG_MAX_SECTIONS || ENPU_PROG_HEADER_BYTES + (size_t)count * ENPU_PROG_ENTRY_BYTES > n)
        return;
    fx_wr64(d + 16, n);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *e = d + ENPU_PROG_HEADER_BYTES + (size_t)i * ENPU_PROG_ENTRY_BYTES;
        uint64_t off = fx_rd64(e + 8), len = fx_rd64(e + 16);
        if (off > n || len > n - off) continue;
        uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), d + off, (uInt)len);
        fx_wr32(e + 4, c);
        if (fx_rd32(e) == ENPU_SEC_ARCH) fx_wr32(d + 8, c);
    }
    fx_fix_header_crc(d);
}

#endif
