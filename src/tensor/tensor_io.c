/* .npy and ONNX TensorProto .pb tensor files.
 *
 * Everything read is untrusted: header lengths are checked against the file
 * size, dims against the limits (before any allocation), and the data size
 * must match the shape exactly.  Multi-byte values are little-endian on disk
 * and in memory (EasyNPU targets little-endian hosts only). */
#include "easynpu/tensor_io.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "easynpu/file.h"
#include "tensor/onnx_tensor.h"

#define MEM_WHAT "<memory>"

/* --- enpu_buf ------------------------------------------------------------ */

int64_t enpu_buf_numel(const enpu_buf *b) {
    int64_t n = 1;
    for (int i = 0; i < b->rank; i++) n *= b->dims[i];
    return n;
}

void enpu_buf_free(enpu_buf *b) {
    if (!b) return;
    free(b->name);
    free(b->data);
    memset(b, 0, sizeof *b);
}

int enpu_buf_alloc(enpu_buf *b, enpu_dtype dt, int rank, const int64_t *dims, enpu_err *err) {
    memset(b, 0, sizeof *b);
    size_t esize = enpu_dtype_size(dt);
    if (esize == 0)
        return enpu_fail(err, ENPU_E_USAGE, "tensor buffer: unknown dtype %d", (int)dt);
    int64_t numel = 0;
    int rc = enpu_shape_numel(rank, dims, &numel, "buffer", err);
    if (rc) return rc;
    size_t nbytes = (size_t)numel * esize;
    b->data = calloc(nbytes ? nbytes : 1, 1);
    if (!b->data)
        return enpu_fail(err, ENPU_E_NOMEM, "tensor buffer: out of memory for %zu bytes", nbytes);
    b->dtype = dt;
    b->rank = rank;
    for (int i = 0; i < rank; i++) b->dims[i] = dims[i];
    return 0;
}

int enpu_buf_to_f32(enpu_buf *b, enpu_err *err) {
    if (b->dtype == ENPU_DT_FLOAT32) return 0;
    if (enpu_dtype_size(b->dtype) == 0)
        return enpu_fail(err, ENPU_E_USAGE, "tensor '%s': cannot convert dtype %s to float32",
                         b->name ? b->name : "?", enpu_dtype_name(b->dtype));
    int64_t n = enpu_buf_numel(b);
    float *f = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!f)
        return enpu_fail(err, ENPU_E_NOMEM, "tensor '%s': out of memory converting to float32",
                         b->name ? b->name : "?");
    const void *s = b->data;
    for (int64_t i = 0; i < n; i++) {
        switch (b->dtype) {
        case ENPU_DT_UINT8: f[i] = (float)((const uint8_t *)s)[i]; break;
        case ENPU_DT_INT8: f[i] = (float)((const int8_t *)s)[i]; break;
        case ENPU_DT_UINT16: f[i] = (float)((const uint16_t *)s)[i]; break;
        case ENPU_DT_INT16: f[i] = (float)((const int16_t *)s)[i]; break;
        case ENPU_DT_INT32: f[i] = (float)((const int32_t *)s)[i]; break;
        case ENPU_DT_INT64: f[i] = (float)((const int64_t *)s)[i]; break;
        case ENPU_DT_BOOL: f[i] = ((const uint8_t *)s)[i] ? 1.0f : 0.0f; break;
        case ENPU_DT_FLOAT64: f[i] = (float)((const double *)s)[i]; break;
        case ENPU_DT_UINT32: f[i] = (float)((const uint32_t *)s)[i]; break;
        case ENPU_DT_UINT64: f[i] = (float)((const uint64_t *)s)[i]; break;
        default: f[i] = 0; break;
        }
    }
    free(b->data);
    b->data = f;
    b->dtype = ENPU_DT_FLOAT32;
    return 0;
}

/* --- .npy ---------------------------------------------------------------- */

static const struct {
    char kind;
    int size;
    enpu_dtype dt;
} npy_types[] = {
    {'f', 4, ENPU_DT_FLOAT32}, {'f', 8, ENPU_DT_FLOAT64}, {'i', 1, ENPU_DT_INT8},
    {'u', 1, ENPU_DT_UINT8},   {'i', 2, ENPU_DT_INT16},   {'u', 2, ENPU_DT_UINT16},
    {'i', 4, ENPU_DT_INT32},   {'u', 4, ENPU_DT_UINT32},  {'i', 8, ENPU_DT_INT64},
    {'u', 8, ENPU_DT_UINT64},  {'b', 1, ENPU_DT_BOOL},
};

/* A cursor over the header's Python dict literal. */
typedef struct npy_cur {
    const char *p, *end;
    const char *what;
    enpu_err *err;
} npy_cur;

static void skip_ws(npy_cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int bad_header(npy_cur *c, const char *why) {
    return enpu_fail(c->err, ENPU_E_FORMAT, "%s: malformed .npy header: %s", c->what, why);
}

static int expect_char(npy_cur *c, char ch, const char *why) {
    skip_ws(c);
    if (c->p >= c->end || *c->p != ch) return bad_header(c, why);
    c->p++;
    return 0;
}

/* A quoted string ('...' or "...", no escapes) into buf. */
static int parse_str(npy_cur *c, char *buf, size_t n) {
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return bad_header(c, "expected a string");
    char q = *c->p++;
    size_t len = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || len + 1 >= n) return bad_header(c, "unexpected string");
        buf[len++] = *c->p++;
    }
    if (c->p >= c->end) return bad_header(c, "unterminated string");
    c->p++;
    buf[len] = 0;
    return 0;
}

static int parse_bool(npy_cur *c, int *v) {
    skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        *v = 1;
        c->p += 4;
    } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        *v = 0;
        c->p += 5;
    } else {
        return bad_header(c, "fortran_order is not True or False");
    }
    return 0;
}

/* Shape tuple: () | (n,) | (n, m, ...) with an optional trailing comma. */
static int parse_shape(npy_cur *c, int *rank, int64_t *dims) {
    int rc = expect_char(c, '(', "shape is not a tuple");
    if (rc) return rc;
    *rank = 0;
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == ')') {
            c->p++;
            return 0;
        }
        if (c->p >= c->end || !isdigit((unsigned char)*c->p))
            return bad_header(c, "shape holds something other than non-negative integers");
        int64_t v = 0;
        int over = 0;
        while (c->p < c->end && isdigit((unsigned char)*c->p)) {
            if (v > ENPU_MAX_DIM) over = 1; /* keep scanning; v stays bounded */
            else v = v * 10 + (*c->p - '0');
            c->p++;
        }
        if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 long */
        if (*rank >= ENPU_MAX_RANK)
            return enpu_fail(c->err, ENPU_E_LIMIT, "%s: .npy shape has more than %d dimensions",
                             c->what, ENPU_MAX_RANK);
        if (over || v > ENPU_MAX_DIM)
            return enpu_fail(c->err, ENPU_E_LIMIT,
                             "%s: .npy shape dimension %d is over the limit of %lld", c->what,
                             *rank, (long long)ENPU_MAX_DIM);
        dims[(*rank)++] = v;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == ')') continue;
        return bad_header(c, "shape tuple is not closed");
    }
}

static int npy_descr_dtype(npy_cur *c, const char *descr, enpu_dtype *dt) {
    size_t len = strlen(descr);
    if (len < 3) goto unsupported;
    char order = descr[0], kind = descr[1];
    char *endp = NULL;
    long size = strtol(descr + 2, &endp, 10);
    if (!endp || *endp || size <= 0) goto unsupported;
    if (order == '>' && size > 1)
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                         "%s: .npy dtype '%s' is big-endian; only little-endian data is "
                         "supported",
                         c->what, descr);
    if (order != '<' && order != '|' && order != '=' && order != '>') goto unsupported;
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (npy_types[i].kind == kind && npy_types[i].size == size) {
            *dt = npy_types[i].dt;
            return 0;
        }
unsupported:
    return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                     "%s: .npy dtype '%s' is not supported (accepted: f4 f8 i1 u1 i2 u2 i4 u4 "
                     "i8 u8 b1, little-endian)",
                     c->what, descr);
}

static int npy_parse_named(const uint8_t *data, size_t n, const char *what, enpu_buf *out,
                           enpu_err *err) {
    memset(out, 0, sizeof *out);
    if (n < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: not a .npy file (bad magic)", what);
    int major = data[6], minor = data[7];
    size_t hlen, hoff;
    if (major == 1) {
        hlen = (size_t)data[8] | (size_t)data[9] << 8;
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (n < 12)
            return enpu_fail(err, ENPU_E_FORMAT, "%s: truncated .npy header", what);
        hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
               (size_t)data[11] << 24;
        hoff = 12;
    } else {
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: .npy format version %d.%d is not supported (1.0, 2.0, 3.0 are)",
                         what, major, minor);
    }
    if (minor != 0)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: .npy format version %d.%d is not supported (1.0, 2.0, 3.0 are)",
                         what, major, minor);
    if (hlen > n - hoff)
        return enpu_fail(err, ENPU_E_FORMAT,
                         "%s: .npy header length %zu runs past the end of the file (%zu bytes)",
                         what, hlen, n);
    npy_cur c = {(const char *)data + hoff, (const char *)data + hoff + hlen, what, err};
    char descr[32] = "";
    int fortran = -1, rank = -1, rc;
    int64_t dims[ENPU_MAX_RANK] = {0};
    if ((rc = expect_char(&c, '{', "expected '{'"))) return rc;
    for (;;) {
        skip_ws(&c);
        if (c.p < c.end && *c.p == '}') {
            c.p++;
            break;
        }
        char key[32];
        if ((rc = parse_str(&c, key, sizeof key))) return rc;
        if ((rc = expect_char(&c, ':', "expected ':' after a key"))) return rc;
        if (strcmp(key, "descr") == 0) {
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return enpu_fail(err, ENPU_E_UNSUPPORTED,
                                 "%s: .npy structured dtypes are not supported", what);
            rc = parse_str(&c, descr, sizeof descr);
        } else if (strcmp(key, "fortran_order") == 0) {
            rc = parse_bool(&c, &fortran);
        } else if (strcmp(key, "shape") == 0) {
            rc = parse_shape(&c, &rank, dims);
        } else {
            return bad_header(&c, "unknown key");
        }
        if (rc) return rc;
        skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if (c.p < c.end && *c.p == '}') continue;
        return bad_header(&c, "expected ',' or '}'");
    }
    skip_ws(&c);
    while (c.p < c.end && *c.p == '\0') c.p++; /* some writers pad with NULs */
    if (c.p != c.end) return bad_header(&c, "trailing characters after the dict");
    if (!descr[0] || fortran < 0 || rank < 0)
        return bad_header(&c, "missing 'descr', 'fortran_order' or 'shape'");
    if (fortran)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: .npy fortran_order True is not supported (save a C-ordered array)",
                         what);
    enpu_dtype dt = ENPU_DT_UNDEFINED;
    if ((rc = npy_descr_dtype(&c, descr, &dt))) return rc;
    int64_t numel = 0;
    if ((rc = enpu_shape_numel(rank, dims, &numel, "npy", err)))
        return enpu_err_prefix(err, "%s", what);
    size_t expect = (size_t)numel * enpu_dtype_size(dt);
    size_t have = n - hoff - hlen;
    if (have < expect)
        return enpu_fail(err, ENPU_E_FORMAT,
                         "%s: truncated .npy data: expected %zu bytes, found %zu", what, expect,
                         have);
    if (have > expect)
        return enpu_fail(err, ENPU_E_FORMAT,
                         "%s: .npy data size mismatch: expected %zu bytes, found %zu", what,
                         expect, have);
    void *buf = malloc(expect ? expect : 1);
    if (!buf)
        return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory for %zu bytes", what, expect);
    if (expect) memcpy(buf, data + hoff + hlen, expect);
    if (dt == ENPU_DT_BOOL)
        for (size_t i = 0; i < expect; i++) ((uint8_t *)buf)[i] = ((uint8_t *)buf)[i] != 0;
    out->dtype = dt;
    out->rank = rank;
    for (int i = 0; i < rank; i++) out->dims[i] = dims[i];
    out->data = buf;
    return 0;
}

/* Runs with a local error so that messages can be prefixed even when the
 * caller passed err == NULL, then hands the error over. */
static int hand_over(enpu_err *err, const enpu_err *local, int rc) {
    if (rc && err && err->code == ENPU_OK) *err = *local;
    return rc;
}

int enpu_npy_parse(const uint8_t *data, size_t n, enpu_buf *out, enpu_err *err) {
    enpu_err e = {0};
    return hand_over(err, &e, npy_parse_named(data, n, MEM_WHAT, out, &e));
}

static const char *npy_descr_of(enpu_dtype dt) {
    switch (dt) {
    case ENPU_DT_FLOAT32: return "<f4";
    case ENPU_DT_FLOAT64: return "<f8";
    case ENPU_DT_INT8: return "|i1";
    case ENPU_DT_UINT8: return "|u1";
    case ENPU_DT_INT16: return "<i2";
    case ENPU_DT_UINT16: return "<u2";
    case ENPU_DT_INT32: return "<i4";
    case ENPU_DT_UINT32: return "<u4";
    case ENPU_DT_INT64: return "<i8";
    case ENPU_DT_UINT64: return "<u8";
    case ENPU_DT_BOOL: return "|b1";
    case ENPU_DT_UNDEFINED: break;
    }
    return NULL;
}

/* Version 1.0: the header (padded with spaces, ending in '\n') makes the data
 * start on a 64-byte boundary, as numpy writes it. */
static int npy_write(const char *path, const enpu_buf *b, size_t nbytes, enpu_err *err) {
    char dict[512];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                       npy_descr_of(b->dtype));
    for (int i = 0; i < b->rank; i++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, i ? ", %lld" : "%lld",
                        (long long)b->dims[i]);
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", b->rank == 1 ? "," : "");
    size_t total_hdr = 10 + (size_t)len + 1;
    size_t padded = (total_hdr + 63) / 64 * 64;
    size_t hlen = padded - 10;
    size_t size = padded + nbytes;
    uint8_t *buf = malloc(size);
    if (!buf) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)len);
    memset(buf + 10 + len, ' ', hlen - (size_t)len - 1);
    buf[padded - 1] = '\n';
    if (nbytes) memcpy(buf + padded, b->data, nbytes);
    int rc = enpu_file_write_atomic(path, buf, size, err);
    free(buf);
    return rc;
}

/* --- .pb (ONNX TensorProto) ---------------------------------------------- */

static int pb_parse_named(const uint8_t *data, size_t n, const char *what, enpu_buf *out,
                          enpu_err *err) {
    memset(out, 0, sizeof *out);
    if (n == 0) return enpu_fail(err, ENPU_E_FORMAT, "%s: empty file", what);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, n, data);
    if (!tp)
        return enpu_fail(err, ENPU_E_FORMAT,
                         "%s: not a valid ONNX TensorProto (protobuf parse failed)", what);
    const char *tname = tp->name && tp->name[0] ? tp->name : "(unnamed)";
    enpu_pb_tensor t;
    int rc = enpu_onnx_decode_tensor(tp, what, tname, ENPU_E_FORMAT, &t, err);
    if (rc == 0 && tp->name && tp->name[0]) {
        size_t len = strlen(tp->name);
        out->name = malloc(len + 1);
        if (!out->name) {
            free(t.data);
            rc = enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", what);
        } else {
            memcpy(out->name, tp->name, len + 1);
        }
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    if (rc) return rc;
    out->dtype = t.dtype;
    out->rank = t.rank;
    memcpy(out->dims, t.dims, sizeof out->dims);
    out->data = t.data;
    return 0;
}

int enpu_pb_parse(const uint8_t *data, size_t n, enpu_buf *out, enpu_err *err) {
    enpu_err e = {0};
    return hand_over(err, &e, pb_parse_named(data, n, MEM_WHAT, out, &e));
}

static int pb_write(const char *path, const enpu_buf *b, size_t nbytes, enpu_err *err) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[ENPU_MAX_RANK];
    for (int i = 0; i < b->rank; i++) dims[i] = b->dims[i];
    tp.n_dims = (size_t)b->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = (int32_t)b->dtype; /* enpu_dtype values are ONNX's */
    tp.name = b->name;
    tp.has_raw_data = 1;
    tp.raw_data.len = nbytes;
    tp.raw_data.data = b->data;
    size_t size = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    onnx__tensor_proto__pack(&tp, buf);
    int rc = enpu_file_write_atomic(path, buf, size, err);
    free(buf);
    return rc;
}

/* --- .npz (a zip archive of .npy members) ------------------------------------ */

/* The zip format (PKWARE APPNOTE 6.3): the end-of-central-directory record
 * (zip64 when a count or offset overflows 16/32 bits, as numpy writes with
 * force_zip64) gives the central directory; each of its entries gives a
 * member's method, sizes, CRC-32 and local header.  Everything is checked
 * against the archive's size before use. */
#define ZIP_EOCD 0x06054b50u
#define ZIP_EOCD64 0x06064b50u
#define ZIP_LOC64 0x07064b50u
#define ZIP_CDIR 0x02014b50u
#define ZIP_LOCAL 0x04034b50u

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static int zip_bad(enpu_err *err, const char *what, const char *why) {
    return enpu_fail(err, ENPU_E_FORMAT, "%s: not a valid .npz (zip) archive: %s", what, why);
}

/* Sizes and offset of a central-directory entry, zip64 extra applied. */
typedef struct zip_entry {
    uint32_t method, flags, crc;
    uint64_t csize, usize, local;
    char name[256];
} zip_entry;

static int zip_entry_at(const uint8_t *d, size_t n, size_t *at, const char *what, zip_entry *e,
                        enpu_err *err) {
    size_t p = *at;
    if (p > n || n - p < 46 || le32(d + p) != ZIP_CDIR)
        return zip_bad(err, what, "central directory entry truncated or missing");
    e->flags = le16(d + p + 8);
    e->method = le16(d + p + 10);
    e->crc = le32(d + p + 16);
    e->csize = le32(d + p + 20);
    e->usize = le32(d + p + 24);
    size_t nl = le16(d + p + 28), xl = le16(d + p + 30), cl = le16(d + p + 32);
    e->local = le32(d + p + 42);
    if (n - p - 46 < nl + xl + cl) return zip_bad(err, what, "central directory entry truncated");
    if (nl == 0 || nl >= sizeof e->name) return zip_bad(err, what, "member name empty or too long");
    memcpy(e->name, d + p + 46, nl);
    e->name[nl] = 0;
    if (memchr(e->name, 0, nl)) return zip_bad(err, what, "member name contains NUL");
    /* zip64 extra field: the values that overflowed, in this order */
    const uint8_t *x = d + p + 46 + nl, *xe = x + xl;
    while (xe - x >= 4) {
        uint32_t id = le16(x), len = le16(x + 2);
        if ((size_t)(xe - x - 4) < len) return zip_bad(err, what, "extra field truncated");
        if (id == 0x0001) {
            const uint8_t *v = x + 4, *ve = v + len;
            uint64_t *f[3] = {&e->usize, &e->csize, &e->local};
            for (int i = 0; i < 3; i++) {
                if (*f[i] != 0xFFFFFFFFu) continue;
                if (ve - v < 8) return zip_bad(err, what, "zip64 extra field truncated");
                *f[i] = le64(v);
                v += 8;
            }
        }
        x += 4 + len;
    }
    *at = p + 46 + nl + xl + cl;
    return 0;
}

/* The data of entry e, inflated when deflated, CRC checked: *out (owned). */
static int zip_member(const uint8_t *d, size_t n, const zip_entry *e, const char *what,
                      uint8_t **out, enpu_err *err) {
    *out = NULL;
    if (e->flags & 1)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: member '%s' is encrypted", what, e->name);
    if (e->method != 0 && e->method != 8)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: member '%s': compression method %u (only stored and deflated)", what,
                         e->name, (unsigned)e->method);
    if (e->usize > ENPU_MAX_TENSOR_FILE_BYTES)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: member '%s' is %llu bytes, over the limit %zu",
                         what, e->name, (unsigned long long)e->usize, ENPU_MAX_TENSOR_FILE_BYTES);
    if (e->local > n || n - e->local < 30 || le32(d + e->local) != ZIP_LOCAL)
        return zip_bad(err, what, "local header missing");
    uint64_t start = e->local + 30 + le16(d + e->local + 26) + le16(d + e->local + 28);
    if (start > n || n - start < e->csize) return zip_bad(err, what, "member data truncated");
    /* deflate expands at most 1032:1; a larger claim is a lie, and is refused
     * before the output buffer is allocated */
    if (e->usize > e->csize * 1032 + 64) return zip_bad(err, what, "member size larger than its data can hold");
    const uint8_t *src = d + start;
    uint8_t *buf = malloc(e->usize ? (size_t)e->usize : 1);
    if (!buf) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", what);
    if (e->method == 0) {
        if (e->csize != e->usize) {
            free(buf);
            return zip_bad(err, what, "stored member with two different sizes");
        }
        if (e->usize) memcpy(buf, src, (size_t)e->usize);
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
            free(buf);
            return enpu_fail(err, ENPU_E_NOMEM, "%s: cannot start inflating", what);
        }
        /* fed in chunks: avail_in/avail_out are 32-bit */
        uint64_t in_left = e->csize, out_left = e->usize;
        z.next_in = (Bytef *)(uintptr_t)src;
        z.next_out = buf;
        int zr = Z_OK;
        while (zr == Z_OK) {
            uInt ci = in_left > 0x40000000u ? 0x40000000u : (uInt)in_left;
            uInt co = out_left > 0x40000000u ? 0x40000000u : (uInt)out_left;
            z.avail_in = ci;
            z.avail_out = co;
            zr = inflate(&z, Z_FINISH);
            in_left -= ci - z.avail_in;
            out_left -= co - z.avail_out;
            if (zr == Z_BUF_ERROR && (ci - z.avail_in || co - z.avail_out)) zr = Z_OK;
        }
        inflateEnd(&z);
        if (zr != Z_STREAM_END || out_left != 0) {
            free(buf);
            return enpu_fail(err, ENPU_E_FORMAT, "%s: member '%s': corrupt deflate data", what,
                             e->name);
        }
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    for (uint64_t done = 0; done < e->usize;) {
        uInt step = e->usize - done > 0x40000000u ? 0x40000000u : (uInt)(e->usize - done);
        crc = crc32(crc, buf + done, step);
        done += step;
    }
    if ((uint32_t)crc != e->crc) {
        free(buf);
        return enpu_fail(err, ENPU_E_FORMAT, "%s: member '%s': CRC-32 mismatch (corrupt data)",
                         what, e->name);
    }
    *out = buf;
    return 0;
}

static int npz_parse_named(const uint8_t *d, size_t n, const char *what, enpu_buf **out,
                           int *n_out, enpu_err *err) {
    *out = NULL;
    *n_out = 0;
    if (n < 22) return zip_bad(err, what, "too short");
    size_t eocd = n - 22, lowest = n > 22 + 65535 ? n - 22 - 65535 : 0;
    while (le32(d + eocd) != ZIP_EOCD) {
        if (eocd == lowest) return zip_bad(err, what, "no end-of-central-directory record");
        eocd--;
    }
    uint64_t count = le16(d + eocd + 10), cd_size = le32(d + eocd + 12), cd_off = le32(d + eocd + 16);
    if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
        if (eocd < 20 || le32(d + eocd - 20) != ZIP_LOC64)
            return zip_bad(err, what, "zip64 locator missing");
        uint64_t z64 = le64(d + eocd - 20 + 8);
        if (z64 > n || n - z64 < 56 || le32(d + z64) != ZIP_EOCD64)
            return zip_bad(err, what, "zip64 end-of-central-directory record missing");
        count = le64(d + z64 + 32);
        cd_size = le64(d + z64 + 40);
        cd_off = le64(d + z64 + 48);
    }
    if (cd_off > n || n - cd_off < cd_size) return zip_bad(err, what, "central directory out of bounds");
    if (count == 0) return enpu_fail(err, ENPU_E_FORMAT, "%s: the archive holds no arrays", what);
    if (count > ENPU_MAX_NPZ_ARRAYS)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: %llu arrays, over the limit %d", what,
                         (unsigned long long)count, ENPU_MAX_NPZ_ARRAYS);
    if (count > (uint64_t)cd_size / 46)
        return zip_bad(err, what, "more members than the central directory can hold");
    enpu_buf *bufs = calloc((size_t)count, sizeof *bufs);
    if (!bufs) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", what);
    size_t at = (size_t)cd_off;
    int rc = 0;
    uint64_t i = 0;
    for (; i < count && !rc; i++) {
        zip_entry e;
        uint8_t *data = NULL;
        if ((rc = zip_entry_at(d, n, &at, what, &e, err))) break;
        size_t nl = strlen(e.name);
        if (nl < 5 || strcmp(e.name + nl - 4, ".npy") != 0) {
            rc = enpu_fail(err, ENPU_E_FORMAT, "%s: member '%s' is not a .npy array", what, e.name);
            break;
        }
        if ((rc = zip_member(d, n, &e, what, &data, err))) break;
        char member[512];
        snprintf(member, sizeof member, "%s: member '%s'", what, e.name);
        rc = npy_parse_named(data, (size_t)e.usize, member, &bufs[i], err);
        free(data);
        if (rc) break;
        e.name[nl - 4] = 0;
        bufs[i].name = malloc(nl - 3);
        if (!bufs[i].name) {
            rc = enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", what);
            break;
        }
        memcpy(bufs[i].name, e.name, nl - 3);
    }
    if (rc) {
        for (uint64_t k = 0; k <= i && k < count; k++) enpu_buf_free(&bufs[k]);
        free(bufs);
        return rc;
    }
    *out = bufs;
    *n_out = (int)count;
    return 0;
}

int enpu_npz_parse(const uint8_t *data, size_t n, enpu_buf **out, int *n_out, enpu_err *err) {
    enpu_err e = {0};
    return hand_over(err, &e, npz_parse_named(data, n, MEM_WHAT, out, n_out, &e));
}

int enpu_npz_read(const char *path, enpu_buf **out, int *n_out, enpu_err *err) {
    enpu_err e = {0};
    *out = NULL;
    *n_out = 0;
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = enpu_file_read(path, ENPU_MAX_NPZ_FILE_BYTES, &data, &n, &e);
    if (!rc) rc = npz_parse_named(data, n, path, out, n_out, &e);
    free(data);
    return hand_over(err, &e, rc);
}

/* --- by extension -------------------------------------------------------- */

enum { FMT_NPY = 1, FMT_PB = 2 };

static int format_of(const char *path, bool writing, enpu_err *err) {
    /* "-": stdout gets .npy; stdin is .npy by its magic, else a TensorProto */
    if (strcmp(path, "-") == 0) return writing || strcmp(enpu_path_ext(path), ".npy") == 0 ? FMT_NPY : FMT_PB;
    const char *ext = enpu_path_ext(path);
    if (strcmp(ext, ".npy") == 0) return FMT_NPY;
    if (strcmp(ext, ".pb") == 0) return FMT_PB;
    return enpu_fail(err, ENPU_E_USAGE,
                     "%s: unknown tensor file extension '%s'; accepted extensions: .npy, .pb",
                     path, ext);
}

static int tensor_read(const char *path, enpu_buf *out, enpu_err *err) {
    int fmt = format_of(path, false, err);
    if (fmt < 0) return fmt;
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = enpu_file_read(path, ENPU_MAX_TENSOR_FILE_BYTES, &data, &n, err);
    if (rc) return rc;
    rc = fmt == FMT_NPY ? npy_parse_named(data, n, path, out, err)
                        : pb_parse_named(data, n, path, out, err);
    free(data);
    return rc;
}

int enpu_tensor_read(const char *path, enpu_buf *out, enpu_err *err) {
    enpu_err e = {0};
    memset(out, 0, sizeof *out);
    return hand_over(err, &e, tensor_read(path, out, &e));
}

static int tensor_write(const char *path, const enpu_buf *b, enpu_err *err) {
    int fmt = format_of(path, true, err);
    if (fmt < 0) return fmt;
    size_t esize = enpu_dtype_size(b->dtype);
    if (esize == 0)
        return enpu_fail(err, ENPU_E_USAGE, "%s: cannot write a tensor of dtype %s", path,
                         enpu_dtype_name(b->dtype));
    int64_t numel = 0;
    int rc = enpu_shape_numel(b->rank, b->dims, &numel, b->name ? b->name : "tensor", err);
    if (rc) return enpu_err_prefix(err, "%s", path);
    size_t nbytes = (size_t)numel * esize;
    if (nbytes && !b->data)
        return enpu_fail(err, ENPU_E_USAGE, "%s: tensor has no data", path);
    return fmt == FMT_NPY ? npy_write(path, b, nbytes, err) : pb_write(path, b, nbytes, err);
}

int enpu_tensor_write(const char *path, const enpu_buf *b, enpu_err *err) {
    enpu_err e = {0};
    return hand_over(err, &e, tensor_write(path, b, &e));
}

bool enpu_shape_fits(int ra, const int64_t *a, int rb, const int64_t *b) {
    int ia = 0, ib = 0;
    while (ia < ra && a[ia] == 1) ia++;
    while (ib < rb && b[ib] == 1) ib++;
    if (ra - ia != rb - ib) return false;
    for (; ia < ra; ia++, ib++)
        if (a[ia] != b[ib]) return false;
    return true;
}

static void shape_str(int rank, const int64_t *d, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    if (rank == 0) snprintf(buf, n, "scalar");
    for (int i = 0; i < rank && k < n; i++) k += (size_t)snprintf(buf + k, n - k, i ? "x%lld" : "%lld", (long long)d[i]);
}

int enpu_shape_error(enpu_err *err, const char *file, const char *input, int ra, const int64_t *a, int rb,
                     const int64_t *b) {
    char have[200], want[200];
    shape_str(ra, a, have, sizeof have);
    shape_str(rb, b, want, sizeof want);
    return enpu_fail(err, ENPU_E_INVALID, "%s%sinput '%s': shape %s does not match the model's %s", file ? file : "",
                     file ? ": " : "", input ? input : "", have, want);
}
