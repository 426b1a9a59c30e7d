/* Bounds-checked FlatBuffers reader (tflite_fb.h).  Wire format: a table
 * starts with an int32 soffset to its vtable (vtable = table - soffset); the
 * vtable holds uint16 vtable size, uint16 table size and one uint16 offset
 * per field (0: absent, the schema default applies); offset fields (tables,
 * vectors, strings) hold a uint32 relative to their own position; a vector
 * is a uint32 count followed by its elements; a string is a byte vector
 * followed by a NUL. */
#include "frontend/tflite_fb.h"

#include <string.h>

static uint64_t rd(const uint8_t *p, unsigned size) {
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int oob(fb_buf *b, const char *path, uint64_t at, uint64_t len) {
    return enpu_fail(b->err, ENPU_E_FORMAT,
                     "%s: %s: %llu bytes at offset %llu run past the end of the file (%zu bytes)",
                     b->what, path, (unsigned long long)len, (unsigned long long)at, b->n);
}

/* [at, at + len) inside the buffer. */
static bool inside(const fb_buf *b, uint64_t at, uint64_t len) {
    return at <= b->n && len <= b->n - at;
}

static int table_at(fb_buf *b, uint64_t pos, const char *path, fb_table *out) {
    if (!inside(b, pos, 4)) return oob(b, path, pos, 4);
    int64_t so = (int32_t)(uint32_t)rd(b->p + pos, 4);
    int64_t vt = (int64_t)pos - so;
    if (vt < 0 || !inside(b, (uint64_t)vt, 4))
        return enpu_fail(b->err, ENPU_E_FORMAT, "%s: %s: the table at offset %llu has its vtable "
                         "outside the file", b->what, path, (unsigned long long)pos);
    unsigned vsize = (unsigned)rd(b->p + vt, 2), tsize = (unsigned)rd(b->p + vt + 2, 2);
    if (vsize < 4 || vsize % 2 || !inside(b, (uint64_t)vt, vsize))
        return enpu_fail(b->err, ENPU_E_FORMAT, "%s: %s: vtable at offset %lld has size %u",
                         b->what, path, (long long)vt, vsize);
    if (tsize < 4 || !inside(b, pos, tsize))
        return enpu_fail(b->err, ENPU_E_FORMAT, "%s: %s: table at offset %llu of %u bytes runs "
                         "past the end of the file", b->what, path, (unsigned long long)pos, tsize);
    out->pos = (size_t)pos;
    out->vt = (size_t)vt;
    out->n_fields = (vsize - 4) / 2;
    return 0;
}

int fb_root(fb_buf *b, const char *ident, fb_table *out) {
    if (b->n < 8)
        return enpu_fail(b->err, ENPU_E_FORMAT, "%s: %zu bytes is too short for a FlatBuffer",
                         b->what, b->n);
    if (ident && memcmp(b->p + 4, ident, 4) != 0)
        return enpu_fail(b->err, ENPU_E_FORMAT,
                         "%s: not a TFLite model (file identifier '%.4s' expected at byte 4)",
                         b->what, ident);
    return table_at(b, rd(b->p, 4), "root table", out);
}

/* Position of field id, or 0 when absent; its `size` bytes must be inside. */
static int field_pos(fb_buf *b, const fb_table *t, unsigned id, unsigned size, const char *path,
                     uint64_t *pos) {
    *pos = 0;
    if (id >= t->n_fields) return 0;
    unsigned off = (unsigned)rd(b->p + t->vt + 4 + 2 * id, 2);
    if (!off) return 0;
    uint64_t at = (uint64_t)t->pos + off;
    if (!inside(b, at, size)) return oob(b, path, at, size);
    *pos = at;
    return 0;
}

int fb_scalar(fb_buf *b, const fb_table *t, unsigned id, unsigned size, const char *path,
              uint64_t *v, bool *present) {
    uint64_t at;
    int rc = field_pos(b, t, id, size, path, &at);
    *v = at ? rd(b->p + at, size) : 0;
    *present = at != 0;
    return rc;
}

int fb_i32(fb_buf *b, const fb_table *t, unsigned id, int32_t dflt, const char *path, int32_t *v) {
    uint64_t x;
    bool p;
    int rc = fb_scalar(b, t, id, 4, path, &x, &p);
    *v = p ? (int32_t)(uint32_t)x : dflt;
    return rc;
}

int fb_u32(fb_buf *b, const fb_table *t, unsigned id, uint32_t dflt, const char *path,
           uint32_t *v) {
    uint64_t x;
    bool p;
    int rc = fb_scalar(b, t, id, 4, path, &x, &p);
    *v = p ? (uint32_t)x : dflt;
    return rc;
}

int fb_u8(fb_buf *b, const fb_table *t, unsigned id, uint8_t dflt, const char *path, uint8_t *v) {
    uint64_t x;
    bool p;
    int rc = fb_scalar(b, t, id, 1, path, &x, &p);
    *v = p ? (uint8_t)x : dflt;
    return rc;
}

int fb_f32(fb_buf *b, const fb_table *t, unsigned id, float dflt, const char *path, float *v) {
    uint64_t x;
    bool p;
    int rc = fb_scalar(b, t, id, 4, path, &x, &p);
    uint32_t u = (uint32_t)x;
    float f;
    memcpy(&f, &u, 4);
    *v = p ? f : dflt;
    return rc;
}

/* Target of the uoffset field id (0 when absent); at least 4 bytes there. */
static int target(fb_buf *b, const fb_table *t, unsigned id, const char *path, uint64_t *to) {
    uint64_t at;
    int rc = field_pos(b, t, id, 4, path, &at);
    *to = 0;
    if (rc || !at) return rc;
    uint64_t dest = at + rd(b->p + at, 4);
    if (!inside(b, dest, 4)) return oob(b, path, dest, 4);
    *to = dest;
    return 0;
}

int fb_table_field(fb_buf *b, const fb_table *t, unsigned id, const char *path, fb_table *out,
                   bool *present) {
    uint64_t to;
    int rc = target(b, t, id, path, &to);
    *present = false;
    if (rc || !to) return rc;
    *present = true;
    return table_at(b, to, path, out);
}

static int vec_at(fb_buf *b, uint64_t at, unsigned elem, const char *path, fb_vec *out) {
    uint64_t len = rd(b->p + at, 4);
    if (!inside(b, at + 4, len * elem)) return oob(b, path, at + 4, len * elem);
    out->pos = (size_t)(at + 4);
    out->len = (uint32_t)len;
    out->elem = elem;
    return 0;
}

int fb_vec_field(fb_buf *b, const fb_table *t, unsigned id, unsigned elem, const char *path,
                 fb_vec *out, bool *present) {
    uint64_t to;
    memset(out, 0, sizeof *out);
    out->elem = elem;
    int rc = target(b, t, id, path, &to);
    *present = false;
    if (rc || !to) return rc;
    *present = true;
    return vec_at(b, to, elem, path, out);
}

int fb_string_field(fb_buf *b, const fb_table *t, unsigned id, const char *path, const char **s,
                    uint32_t *len) {
    fb_vec v;
    bool present;
    *s = "";
    *len = 0;
    int rc = fb_vec_field(b, t, id, 1, path, &v, &present);
    if (rc || !present) return rc;
    if (!inside(b, (uint64_t)v.pos + v.len, 1) || b->p[v.pos + v.len] != 0)
        return enpu_fail(b->err, ENPU_E_FORMAT, "%s: %s: string is not NUL-terminated", b->what,
                         path);
    if (memchr(b->p + v.pos, 0, v.len))
        return enpu_fail(b->err, ENPU_E_FORMAT, "%s: %s: string holds a NUL byte", b->what, path);
    *s = (const char *)(b->p + v.pos);
    *len = v.len;
    return 0;
}

int fb_vec_table(fb_buf *b, const fb_vec *v, uint32_t i, const char *path, fb_table *out) {
    uint64_t at = (uint64_t)v->pos + 4ull * i;
    uint64_t dest = at + rd(b->p + at, 4);
    return table_at(b, dest, path, out);
}

int32_t fb_vec_i32(const fb_buf *b, const fb_vec *v, uint32_t i) {
    return (int32_t)(uint32_t)rd(b->p + v->pos + 4ull * i, 4);
}

int64_t fb_vec_i64(const fb_buf *b, const fb_vec *v, uint32_t i) {
    uint64_t u = rd(b->p + v->pos + 8ull * i, 8);
    int64_t r;
    memcpy(&r, &u, 8);
    return r;
}

float fb_vec_f32(const fb_buf *b, const fb_vec *v, uint32_t i) {
    uint32_t u = (uint32_t)rd(b->p + v->pos + 4ull * i, 4);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

const uint8_t *fb_vec_bytes(const fb_buf *b, const fb_vec *v) { return b->p + v->pos; }
