/* .npy and .pb tensor files: round trips for every dtype, the exact bytes
 * numpy writes, hand-made headers of every accepted form, and every kind of
 * broken file (exact category, message naming the file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/tensor_io.h"
#include "testutil.h"

static char tmpdir[64];

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/enpu_tio_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static int contains(const uint8_t *d, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(d + i, needle, k) == 0) return 1;
    return 0;
}

static uint8_t *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)len + 1);
    assert_non_null(d);
    assert_int_equal(fread(d, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return d;
}

/* A .npy file with the given header dict (format 1.0) and data bytes. */
static void write_npy(const char *path, const char *dict, const void *data, size_t n) {
    size_t hl = strlen(dict);
    uint8_t *buf = malloc(10 + hl + n + 1);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hl & 0xff);
    buf[9] = (uint8_t)(hl >> 8);
    memcpy(buf + 10, dict, hl);
    if (n) memcpy(buf + 10 + hl, data, n);
    write_bytes(path, buf, 10 + hl + n);
    free(buf);
}

static void expect_error(const char *path, enpu_status code, const char *needle) {
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(path, &b, &err), code);
    assert_int_equal(err.code, code);
    assert_null(b.data);
    if (strncmp(err.msg, path, strlen(path)) != 0) fail_msg("message does not start with the path: %s", err.msg);
    if (needle && !strstr(err.msg, needle)) fail_msg("'%s' not in message: %s", needle, err.msg);
}

/* --- round trips --------------------------------------------------------- */

static void fill(enpu_buf *b) {
    int64_t n = enpu_buf_numel(b);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (i * 37 + 11) % 251 - 125; /* fits every signed/unsigned type mod 256 */
        switch (b->dtype) {
        case ENPU_DT_FLOAT32: ((float *)b->data)[i] = (float)v * 0.25f - 1e-3f; break;
        case ENPU_DT_FLOAT64: ((double *)b->data)[i] = (double)v * 1e-7 + 1e10; break;
        case ENPU_DT_INT8: ((int8_t *)b->data)[i] = (int8_t)v; break;
        case ENPU_DT_UINT8: ((uint8_t *)b->data)[i] = (uint8_t)(v + 125); break;
        case ENPU_DT_INT16: ((int16_t *)b->data)[i] = (int16_t)(v * 200); break;
        case ENPU_DT_UINT16: ((uint16_t *)b->data)[i] = (uint16_t)((v + 125) * 250); break;
        case ENPU_DT_INT32: ((int32_t *)b->data)[i] = (int32_t)(v * 1000003); break;
        case ENPU_DT_UINT32: ((uint32_t *)b->data)[i] = (uint32_t)(v + 125) * 17000000u; break;
        case ENPU_DT_INT64: ((int64_t *)b->data)[i] = v * 1000000000007LL; break;
        case ENPU_DT_UINT64: ((uint64_t *)b->data)[i] = (uint64_t)(v + 125) << 55; break;
        case ENPU_DT_BOOL: ((uint8_t *)b->data)[i] = (uint8_t)(v & 1); break;
        default: fail();
        }
    }
}

static void check_same(const enpu_buf *a, const enpu_buf *b) {
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int i = 0; i < a->rank; i++) assert_int_equal(a->dims[i], b->dims[i]);
    size_t nbytes = (size_t)enpu_buf_numel(a) * enpu_dtype_size(a->dtype);
    if (nbytes) assert_memory_equal(a->data, b->data, nbytes);
}

static const struct {
    enpu_dtype dt;
    int rank;
    int64_t dims[4];
} cases[] = {
    {ENPU_DT_FLOAT32, 2, {2, 3}},     {ENPU_DT_FLOAT64, 0, {0}},       {ENPU_DT_INT8, 1, {17}},
    {ENPU_DT_UINT8, 3, {2, 3, 5}},    {ENPU_DT_INT16, 2, {4, 1}},      {ENPU_DT_UINT16, 1, {9}},
    {ENPU_DT_INT32, 4, {1, 2, 3, 4}}, {ENPU_DT_UINT32, 1, {3}},        {ENPU_DT_INT64, 2, {3, 2}},
    {ENPU_DT_UINT64, 1, {2}},         {ENPU_DT_BOOL, 1, {7}},          {ENPU_DT_FLOAT32, 2, {0, 4}},
    {ENPU_DT_FLOAT32, 1, {1}},
};

static void round_trip(const char *ext) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        enpu_buf b, r;
        enpu_err err = {0};
        assert_int_equal(enpu_buf_alloc(&b, cases[c].dt, cases[c].rank, cases[c].dims, &err), 0);
        fill(&b);
        char name[64];
        snprintf(name, sizeof name, "rt_%zu%s", c, ext);
        const char *path = tmp_path(name);
        if (strcmp(ext, ".pb") == 0) {
            b.name = malloc(16);
            snprintf(b.name, 16, "t%zu", c);
        }
        assert_int_equal(enpu_tensor_write(path, &b, &err), 0);
        assert_int_equal(enpu_tensor_read(path, &r, &err), 0);
        check_same(&b, &r);
        if (b.name) assert_string_equal(b.name, r.name);
        else assert_null(r.name);
        enpu_buf_free(&b);
        enpu_buf_free(&r);
        assert_null(b.data);
    }
}

static void test_npy_round_trip(void **state) {
    (void)state;
    round_trip(".npy");
}

static void test_pb_round_trip(void **state) {
    (void)state;
    round_trip(".pb");
}

/* The bytes numpy 1.x writes for np.save(f, np.zeros((2, 3), np.float32)). */
static void test_npy_bytes_match_numpy(void **state) {
    (void)state;
    int64_t dims[] = {2, 3};
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT32, 2, dims, &err), 0);
    const char *path = tmp_path("zeros.npy");
    assert_int_equal(enpu_tensor_write(path, &b, &err), 0);
    size_t n;
    uint8_t *d = read_bytes(path, &n);
    assert_int_equal(n, 152);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    assert_memory_equal(d, "\x93NUMPY\x01\x00\x76\x00", 10);
    assert_memory_equal(d + 10, dict, strlen(dict));
    for (size_t i = 10 + strlen(dict); i < 127; i++) assert_int_equal(d[i], ' ');
    assert_int_equal(d[127], '\n');
    for (size_t i = 128; i < n; i++) assert_int_equal(d[i], 0);
    free(d);
    /* Scalars and 1-D shapes use Python's tuple spelling. */
    enpu_buf_free(&b);
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_BOOL, 1, (int64_t[]){3}, &err), 0);
    path = tmp_path("b.npy");
    assert_int_equal(enpu_tensor_write(path, &b, &err), 0);
    d = read_bytes(path, &n);
    assert_int_equal(n, 131);
    assert_true(contains(d, n, "'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"));
    free(d);
    enpu_buf_free(&b);
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT64, 0, NULL, &err), 0);
    path = tmp_path("s.npy");
    assert_int_equal(enpu_tensor_write(path, &b, &err), 0);
    d = read_bytes(path, &n);
    assert_int_equal(n, 136);
    assert_true(contains(d, n, "'shape': (), }"));
    free(d);
    enpu_buf_free(&b);
}

/* --- accepted .npy header forms ------------------------------------------ */

static void test_npy_header_forms(void **state) {
    (void)state;
    const int16_t v[6] = {1, -2, 3, -4, 5, -32768};
    const char *dicts[] = {
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{\"descr\": \"=i2\", \"fortran_order\": False, \"shape\": (2,3)}",
        "{ 'shape' : ( 2 , 3 , ) , 'fortran_order' : False , 'descr' : '<i2' }   \n",
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 3L), }\n",
    };
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        const char *path = tmp_path("forms.npy");
        write_npy(path, dicts[i], v, sizeof v);
        enpu_buf b;
        enpu_err err = {0};
        if (enpu_tensor_read(path, &b, &err)) fail_msg("header %zu: %s", i, err.msg);
        assert_int_equal(b.dtype, ENPU_DT_INT16);
        assert_int_equal(b.rank, 2);
        assert_int_equal(b.dims[0], 2);
        assert_int_equal(b.dims[1], 3);
        assert_memory_equal(b.data, v, sizeof v);
        enpu_buf_free(&b);
    }
    /* 1-byte types with any byte-order mark, bools normalized, scalar. */
    const uint8_t raw[3] = {0, 1, 2};
    const char *path = tmp_path("u1.npy");
    write_npy(path, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", raw, 3);
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(path, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_UINT8);
    assert_memory_equal(b.data, raw, 3);
    enpu_buf_free(&b);
    write_npy(path, "{'descr': '<b1', 'fortran_order': False, 'shape': (3,), }", raw, 3);
    assert_int_equal(enpu_tensor_read(path, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_BOOL);
    assert_memory_equal(b.data, "\0\1\1", 3);
    enpu_buf_free(&b);
    const double pi = 3.25;
    write_npy(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &pi, 8);
    assert_int_equal(enpu_tensor_read(path, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_FLOAT64);
    assert_int_equal(b.rank, 0);
    assert_true(*(double *)b.data == 3.25);
    enpu_buf_free(&b);
}

/* Versions 2.0 and 3.0 have a 4-byte header length. */
static void test_npy_v2_v3(void **state) {
    (void)state;
    const char *dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
    const int32_t v[2] = {-7, 123456789};
    for (int major = 2; major <= 3; major++) {
        size_t hl = strlen(dict);
        uint8_t buf[256];
        memcpy(buf, "\x93NUMPY", 6);
        buf[6] = (uint8_t)major;
        buf[7] = 0;
        buf[8] = (uint8_t)hl;
        buf[9] = buf[10] = buf[11] = 0;
        memcpy(buf + 12, dict, hl);
        memcpy(buf + 12 + hl, v, sizeof v);
        enpu_buf b;
        enpu_err err = {0};
        assert_int_equal(enpu_npy_parse(buf, 12 + hl + sizeof v, &b, &err), 0);
        assert_int_equal(b.dtype, ENPU_DT_INT32);
        assert_int_equal(b.rank, 1);
        assert_int_equal(b.dims[0], 2);
        assert_memory_equal(b.data, v, sizeof v);
        enpu_buf_free(&b);
    }
}

/* --- broken .npy --------------------------------------------------------- */

#define NPY_F4(shape) "{'descr': '<f4', 'fortran_order': False, 'shape': " shape ", }"

static void test_npy_errors(void **state) {
    (void)state;
    /* A header dict followed by `n` zero bytes of data. */
    static const struct {
        const char *dict;
        size_t n;
        enpu_status code;
        const char *needle;
    } hdr[] = {
        {NPY_F4("(2, 3)"), 20, ENPU_E_FORMAT, "expected 24 bytes, found 20"},
        {NPY_F4("(2, 3)"), 28, ENPU_E_FORMAT, "expected 24 bytes, found 28"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, ENPU_E_UNSUPPORTED,
         "fortran_order"},
        {NPY_F4("(4294967296, 2)"), 24, ENPU_E_LIMIT, "dimension 0"},
        {NPY_F4("(99999999999999999999999999,)"), 24, ENPU_E_LIMIT, "over the limit"},
        {NPY_F4("(100000, 100000, 100000)"), 24, ENPU_E_LIMIT, "overflows"},
        {NPY_F4("(1,1,1,1,1,1,1,1,1)"), 4, ENPU_E_LIMIT, "more than 8 dimensions"},
        {NPY_F4("(-1, 3)"), 24, ENPU_E_FORMAT, "malformed .npy header"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24, ENPU_E_UNSUPPORTED,
         "big-endian"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", 24, ENPU_E_UNSUPPORTED,
         "'<c8'"},
        {"{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 6, ENPU_E_UNSUPPORTED,
         "'<f2'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", 12,
         ENPU_E_UNSUPPORTED, "structured"},
        {"{'fortran_order': False, 'shape': (3,), }", 12, ENPU_E_FORMAT, "missing"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, ", 12, ENPU_E_FORMAT,
         "malformed"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", 12, ENPU_E_FORMAT,
         "unknown key"},
        {NPY_F4("(3,)") " junk", 12, ENPU_E_FORMAT, "trailing"},
    };
    static const uint8_t zeros[32] = {0};
    for (size_t i = 0; i < sizeof hdr / sizeof hdr[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "hdr_%zu.npy", i);
        const char *p = tmp_path(name);
        write_npy(p, hdr[i].dict, zeros, hdr[i].n);
        expect_error(p, hdr[i].code, hdr[i].needle);
    }
    /* Raw files that do not get as far as the dict. */
    static const struct {
        const char *bytes;
        size_t n;
        enpu_status code;
        const char *needle;
    } raw[] = {
        {"\x93NUMPX\x01\x00\x10\x00{}", 12, ENPU_E_FORMAT, "bad magic"},
        {"\x93NU", 3, ENPU_E_FORMAT, "bad magic"},
        {"\x93NUMPY\x01\x00\xff\x7f{'descr'", 18, ENPU_E_FORMAT, "header length 32767"},
        {"\x93NUMPY\x04\x00\x02\x00{}", 12, ENPU_E_UNSUPPORTED, "version 4.0"},
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "raw_%zu.npy", i);
        const char *p = tmp_path(name);
        write_bytes(p, raw[i].bytes, raw[i].n);
        expect_error(p, raw[i].code, raw[i].needle);
    }

    expect_error(tmp_path("does_not_exist.npy"), ENPU_E_IO, "cannot open");

    /* The in-memory entry point names its source. */
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_npy_parse((const uint8_t *)"nope", 4, &b, &err), ENPU_E_FORMAT);
    assert_non_null(strstr(err.msg, "<memory>"));
    /* NULL err is allowed. */
    assert_int_equal(enpu_npy_parse((const uint8_t *)"nope", 4, &b, NULL), ENPU_E_FORMAT);
}

static void test_bad_extension(void **state) {
    (void)state;
    const char *p = tmp_path("tensor.txt");
    write_bytes(p, "x", 1);
    expect_error(p, ENPU_E_USAGE, ".npy, .pb");
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT32, 1, (int64_t[]){2}, &err), 0);
    const char *q = tmp_path("out.npz");
    assert_int_equal(enpu_tensor_write(q, &b, &err), ENPU_E_USAGE);
    assert_non_null(strstr(err.msg, q));
    assert_int_equal(access(q, F_OK), -1);
    enpu_buf_free(&b);
}

/* --- .pb by hand (protobuf wire format) ---------------------------------- */

typedef struct pbw {
    uint8_t b[512];
    size_t n;
} pbw;

static void varint(pbw *w, uint64_t v) {
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        w->b[w->n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
}

static void field_varint(pbw *w, int field, uint64_t v) {
    varint(w, (uint64_t)field << 3);
    varint(w, v);
}

static void field_bytes(pbw *w, int field, const void *d, size_t n) {
    varint(w, (uint64_t)field << 3 | 2);
    varint(w, n);
    memcpy(w->b + w->n, d, n);
    w->n += n;
}

/* TensorProto fields: 1 dims, 2 data_type, 4 float_data, 5 int32_data,
 * 7 int64_data, 8 name, 9 raw_data, 10 double_data, 11 uint64_data,
 * 13 external_data, 14 data_location. */
static void test_pb_typed_fields(void **state) {
    (void)state;
    enpu_buf b;
    enpu_err err = {0};
    /* float_data (packed) */
    pbw w = {{0}, 0};
    field_varint(&w, 1, 3);
    field_varint(&w, 2, 1);
    const float f[3] = {1.5f, -2.0f, 1e-30f};
    field_bytes(&w, 4, f, sizeof f);
    field_bytes(&w, 8, "ff", 2);
    assert_int_equal(enpu_pb_parse(w.b, w.n, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_FLOAT32);
    assert_int_equal(b.rank, 1);
    assert_int_equal(b.dims[0], 3);
    assert_memory_equal(b.data, f, sizeof f);
    assert_string_equal(b.name, "ff");
    enpu_buf_free(&b);
    /* int32_data carrying int8 values (packed varints, negative as 10 bytes) */
    w.n = 0;
    field_varint(&w, 1, 2);
    field_varint(&w, 1, 2);
    field_varint(&w, 2, 3);
    pbw vals = {{0}, 0};
    const int32_t i8[4] = {-128, 127, 0, -1};
    for (int i = 0; i < 4; i++) varint(&vals, (uint64_t)(int64_t)i8[i]);
    field_bytes(&w, 5, vals.b, vals.n);
    assert_int_equal(enpu_pb_parse(w.b, w.n, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_INT8);
    assert_int_equal(b.rank, 2);
    assert_memory_equal(b.data, "\x80\x7f\x00\xff", 4);
    enpu_buf_free(&b);
    /* int64_data */
    w.n = 0;
    field_varint(&w, 1, 2);
    field_varint(&w, 2, 7);
    vals.n = 0;
    varint(&vals, (uint64_t)-5LL);
    varint(&vals, 1ull << 40);
    field_bytes(&w, 7, vals.b, vals.n);
    assert_int_equal(enpu_pb_parse(w.b, w.n, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_INT64);
    assert_int_equal(((int64_t *)b.data)[0], -5);
    assert_int_equal(((int64_t *)b.data)[1], 1LL << 40);
    enpu_buf_free(&b);
    /* double_data, scalar */
    w.n = 0;
    field_varint(&w, 2, 11);
    const double d = -0.125;
    field_bytes(&w, 10, &d, 8);
    assert_int_equal(enpu_pb_parse(w.b, w.n, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_FLOAT64);
    assert_int_equal(b.rank, 0);
    assert_true(*(double *)b.data == -0.125);
    enpu_buf_free(&b);
    /* uint64_data carrying uint32 */
    w.n = 0;
    field_varint(&w, 1, 1);
    field_varint(&w, 2, 12);
    vals.n = 0;
    varint(&vals, 4000000000u);
    field_bytes(&w, 11, vals.b, vals.n);
    assert_int_equal(enpu_pb_parse(w.b, w.n, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_UINT32);
    assert_int_equal(((uint32_t *)b.data)[0], 4000000000u);
    enpu_buf_free(&b);
}

/* Starts a TensorProto in w: dims then data_type (0 = none). */
static void pb_start(pbw *w, int n_dims, const uint64_t *dims, int dtype) {
    w->n = 0;
    for (int i = 0; i < n_dims; i++) field_varint(w, 1, dims[i]);
    if (dtype) field_varint(w, 2, (uint64_t)dtype);
}

/* Writes w (less its last `cut` bytes) to `name` and expects the error. */
static void expect_pb_error(const char *name, const pbw *w, size_t cut, enpu_status code,
                            const char *needle) {
    const char *p = tmp_path(name);
    write_bytes(p, w->b, w->n - cut);
    expect_error(p, code, needle);
}

static void test_pb_errors(void **state) {
    (void)state;
    static const char zeros[16] = {0};
    pbw w;
    pb_start(&w, 1, (uint64_t[]){4}, 1);
    field_bytes(&w, 9, zeros, 12);
    expect_pb_error("short.pb", &w, 0, ENPU_E_FORMAT, "raw_data holds 12 bytes");
    pb_start(&w, 1, (uint64_t[]){3}, 1);
    field_bytes(&w, 4, zeros, 4);
    expect_pb_error("typed.pb", &w, 0, ENPU_E_FORMAT, "float_data holds 1 values");
    /* truncated: a length-delimited field running past the end */
    pb_start(&w, 1, (uint64_t[]){4}, 1);
    field_bytes(&w, 9, zeros, 16);
    expect_pb_error("truncated.pb", &w, 5, ENPU_E_FORMAT, "protobuf parse failed");
    pb_start(&w, 0, NULL, 0);
    expect_pb_error("empty.pb", &w, 0, ENPU_E_FORMAT, "empty");
    pb_start(&w, 1, (uint64_t[]){1}, 0);
    expect_pb_error("nodtype.pb", &w, 0, ENPU_E_FORMAT, "no data_type");
    pb_start(&w, 0, NULL, 10);
    expect_pb_error("half.pb", &w, 0, ENPU_E_UNSUPPORTED, "float16");
    /* overflowing dims, checked before any allocation */
    pb_start(&w, 1, (uint64_t[]){1ull << 40}, 1);
    expect_pb_error("bigdim.pb", &w, 0, ENPU_E_LIMIT, "dimension 0");
    pb_start(&w, 3, (uint64_t[]){1u << 20, 1u << 20, 1u << 20}, 1);
    expect_pb_error("numel.pb", &w, 0, ENPU_E_LIMIT, "overflows");
    pb_start(&w, 1, (uint64_t[]){(uint64_t)-1LL}, 1);
    expect_pb_error("negdim.pb", &w, 0, ENPU_E_LIMIT, "-1");
    /* external data: never opened */
    pb_start(&w, 1, (uint64_t[]){2}, 1);
    field_bytes(&w, 8, "ext", 3);
    pbw e = {{0}, 0};
    field_bytes(&e, 1, "location", 8);
    field_bytes(&e, 2, "elsewhere.bin", 13);
    field_bytes(&w, 13, e.b, e.n);
    field_varint(&w, 14, 1);
    expect_pb_error("external.pb", &w, 0, ENPU_E_UNSUPPORTED, "'elsewhere.bin'");
}

/* A real file of the ONNX backend tests (Conv example input: arange(35)). */
static void test_pb_onnx_testdata(void **state) {
    (void)state;
    const char *p = ENPU_ONNX_NODE_TESTS "/test_basic_conv_without_padding/test_data_set_0/input_0.pb";
    if (access(p, R_OK) != 0) fail_msg("%s absent: install libonnx-testdata (make deps)", p);
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(p, &b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_FLOAT32);
    assert_int_equal(b.rank, 4);
    int64_t want[4] = {1, 1, 5, 5};
    for (int i = 0; i < 4; i++) assert_int_equal(b.dims[i], want[i]);
    for (int i = 0; i < 25; i++) assert_true(((float *)b.data)[i] == (float)i);
    enpu_buf_free(&b);
}

/* Every prefix and many byte mutations of valid files: a buffer or a clean
 * error, never a crash (ASan/UBSan builds check the memory side). */
static void test_corrupted_files(void **state) {
    (void)state;
    int64_t dims[3] = {2, 3, 4};
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_INT16, 3, dims, &err), 0);
    fill(&b);
    b.name = malloc(8);
    snprintf(b.name, 8, "name");
    const char *ext[2] = {".npy", ".pb"};
    for (int e = 0; e < 2; e++) {
        char fname[32];
        snprintf(fname, sizeof fname, "corrupt%s", ext[e]);
        const char *p = tmp_path(fname);
        assert_int_equal(enpu_tensor_write(p, &b, &err), 0);
        size_t n;
        uint8_t *d = read_bytes(p, &n);
        for (size_t len = 0; len <= n; len++) {
            enpu_buf r;
            int rc = e ? enpu_pb_parse(d, len, &r, &err) : enpu_npy_parse(d, len, &r, &err);
            assert_true(rc <= 0);
            assert_true((rc == 0) == (len == n));
            enpu_buf_free(&r);
        }
        uint8_t *m = malloc(n);
        uint32_t seed = 99;
        for (int iter = 0; iter < 3000; iter++) {
            memcpy(m, d, n);
            seed = seed * 1103515245u + 12345u;
            size_t pos = (seed >> 8) % (e ? n : 128); /* npy: mutate the header */
            seed = seed * 1103515245u + 12345u;
            m[pos] = (uint8_t)(seed >> 16);
            enpu_buf r;
            int rc = e ? enpu_pb_parse(m, n, &r, &err) : enpu_npy_parse(m, n, &r, &err);
            assert_true(rc <= 0);
            enpu_buf_free(&r);
        }
        free(m);
        free(d);
    }
    enpu_buf_free(&b);
}

static void test_buf_helpers(void **state) {
    (void)state;
    enpu_buf b;
    enpu_err err = {0};
    int64_t dims[2] = {2, 2};
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_INT8, 2, dims, &err), 0);
    assert_int_equal(enpu_buf_numel(&b), 4);
    int8_t v[4] = {-128, -1, 0, 127};
    memcpy(b.data, v, 4);
    assert_int_equal(enpu_buf_to_f32(&b, &err), 0);
    assert_int_equal(b.dtype, ENPU_DT_FLOAT32);
    const float want[4] = {-128.0f, -1.0f, 0.0f, 127.0f};
    assert_memory_equal(b.data, want, sizeof want);
    assert_int_equal(enpu_buf_to_f32(&b, &err), 0); /* no-op */
    enpu_buf_free(&b);
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_INT64, 1, (int64_t[]){3}, &err), 0);
    ((int64_t *)b.data)[0] = -7;
    ((int64_t *)b.data)[1] = 1 << 20;
    assert_int_equal(enpu_buf_to_f32(&b, &err), 0);
    assert_true(((float *)b.data)[0] == -7.0f && ((float *)b.data)[1] == 1048576.0f);
    enpu_buf_free(&b);
    int64_t huge[3] = {1 << 20, 1 << 20, 1 << 20};
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT32, 3, huge, &err), ENPU_E_LIMIT);
    assert_null(b.data);
    enpu_err_clear(&err);
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_UNDEFINED, 1, dims, &err), ENPU_E_USAGE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_round_trip),   cmocka_unit_test(test_pb_round_trip),
        cmocka_unit_test(test_npy_bytes_match_numpy), cmocka_unit_test(test_npy_header_forms),
        cmocka_unit_test(test_npy_v2_v3),        cmocka_unit_test(test_npy_errors),
        cmocka_unit_test(test_bad_extension),    cmocka_unit_test(test_pb_typed_fields),
        cmocka_unit_test(test_pb_errors),        cmocka_unit_test(test_pb_onnx_testdata),
        cmocka_unit_test(test_corrupted_files), cmocka_unit_test(test_buf_helpers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
