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

#include "easynpu/file.h"
#include "frontend/onnx_tensor.h"

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
