/* A small bounds-checked reader of FlatBuffers binaries, enough for TFLite
 * models (docs/tflite.md "The reader").  Debian has no FlatBuffers library
 * for C (flatbuffers is C++, flatcc is not packaged), so this reads the wire
 * format directly: every offset, vtable, vector and string is checked
 * against the buffer before it is touched, in 64-bit arithmetic, and any
 * violation is an ENPU_E_FORMAT error naming the file and the field path.
 * Alignment is not required (values are read with memcpy-like byte loads,
 * little-endian).  The reader never recurses: callers walk the schema, whose
 * depth is fixed. */
#ifndef ENPU_FRONTEND_TFLITE_FB_H
#define ENPU_FRONTEND_TFLITE_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "easynpu/error.h"

typedef struct fb_buf {
    const uint8_t *p;
    size_t n;
    const char *what; /* file name for messages */
    enpu_err *err;
} fb_buf;

/* A table: its position and its vtable's. */
typedef struct fb_table {
    size_t pos, vt;
    unsigned n_fields; /* fields the vtable lists */
} fb_table;

/* A vector: position of its first element and the element count. */
typedef struct fb_vec {
    size_t pos;
    uint32_t len;
    uint32_t elem; /* bytes per element */
} fb_vec;

/* The root table; `ident` (4 bytes) must follow the root offset when non-NULL. */
int fb_root(fb_buf *b, const char *ident, fb_table *out);
/* Field `id` as a scalar of `size` bytes (1, 2, 4, 8): *present false and 0
 * when absent (the caller applies the schema default). */
int fb_scalar(fb_buf *b, const fb_table *t, unsigned id, unsigned size, const char *path,
              uint64_t *v, bool *present);
int fb_i32(fb_buf *b, const fb_table *t, unsigned id, int32_t dflt, const char *path, int32_t *v);
int fb_u32(fb_buf *b, const fb_table *t, unsigned id, uint32_t dflt, const char *path, uint32_t *v);
int fb_u8(fb_buf *b, const fb_table *t, unsigned id, uint8_t dflt, const char *path, uint8_t *v);
int fb_f32(fb_buf *b, const fb_table *t, unsigned id, float dflt, const char *path, float *v);
/* A sub-table, vector or string field; *present false when absent. */
int fb_table_field(fb_buf *b, const fb_table *t, unsigned id, const char *path, fb_table *out,
                   bool *present);
int fb_vec_field(fb_buf *b, const fb_table *t, unsigned id, unsigned elem, const char *path,
                 fb_vec *out, bool *present);
/* A string (NUL-terminated in the buffer, as FlatBuffers writes it): *s
 * points into the buffer; "" when absent. */
int fb_string_field(fb_buf *b, const fb_table *t, unsigned id, const char *path, const char **s,
                    uint32_t *len);
/* Element i (< v->len) of a vector of tables, of scalars (little-endian). */
int fb_vec_table(fb_buf *b, const fb_vec *v, uint32_t i, const char *path, fb_table *out);
int32_t fb_vec_i32(const fb_buf *b, const fb_vec *v, uint32_t i);
int64_t fb_vec_i64(const fb_buf *b, const fb_vec *v, uint32_t i);
float fb_vec_f32(const fb_buf *b, const fb_vec *v, uint32_t i);
const uint8_t *fb_vec_bytes(const fb_buf *b, const fb_vec *v);

#endif
