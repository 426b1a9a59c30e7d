/* ONNX conformance: the backend tests of Debian's libonnx-testdata (node,
 * pytorch-converted and pytorch-operator suites) through the importer and the
 * float reference executor, counted per operator.
 *
 * Every test folder gets exactly one verdict:
 *   passed: every data set's outputs match the reference within 1e-4
 *     (relative above 1; integer outputs exactly, with the reference's dtype);
 *   not supported: a node's operator is not one EasyNPU implements (or is in
 *     another domain), a graph input or output is of a type the float
 *     reference does not carry (it computes float32 and carries integers,
 *     bools and float64 in it: float16, bfloat16 and strings are not, nor
 *     are 32/64-bit integers over 2^24), or the test is listed in `expected[]`
 *     below with the reason (training mode, a form we refuse) and
 *     the importer refuses it with that reason;
 *   failed: anything else.  A test whose operators are all supported is never
 *     "skipped": an ENPU_E_UNSUPPORTED error it is not listed for is a
 *     failure, and so is a listed test that stops being refused (update the
 *     list).
 *
 * The inputs a model leaves to run time but that parameterize an operator
 * (Clip's min/max, Reshape's shape, Pad's pads, Squeeze/Unsqueeze's axes,
 * Dropout's ratio/training_mode) are bound to the data set's own input_N.pb
 * at import (enpu_onnx_bind), as `easynpu ... --bind NAME=FILE` does.
 *
 * A second table counts each implemented operator over every test that uses
 * it, and holds each to MIN_SHARE passed (short_ops[]: the exceptions).
 *
 * The per-operator table and the totals end the output (ctest -V, or
 * --output-on-failure when something fails).  ENPU_ONNX_NODE_ONLY=substring
 * runs a subset, ENPU_ONNX_NODE_VERBOSE=1 also lists the passes. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

/* Passing tests measured when this count was last raised (no regressions). */
#define MIN_PASSED 516

/* Every implemented operator must pass at least this share of the tests that
 * use it (float types: the tests refused for a float16, bfloat16 or string
 * tensor are not counted; a refused form or training mode counts against
 * it) -- except the operators below, whose shortfall is a form EasyNPU
 * refuses on purpose; their figures are asserted exactly, so the list stays
 * true. */
#define MIN_SHARE 0.95
static const struct {
    const char *op;
    int passed, counted;
    const char *why;
} short_ops[] = {
    {"AveragePool", 16, 20, "3-D windows"},
    {"BatchNormalization", 7, 9, "training mode"},
    {"Conv", 26, 33, "3-D windows"},
    {"ConvTranspose", 12, 13, "3-D windows"},
    {"Dropout", 4, 12, "training mode, output 'mask'"},
    {"Identity", 1, 3, "a sequence, an optional"},
    {"If", 1, 3, "a branch building a sequence or an optional"},
    {"Loop", 3, 5, "a sequence or an optional carried"},
    {"MaxPool", 18, 24, "3-D windows, output 'Indices'"},
};
#define N_SHORT (sizeof short_ops / sizeof short_ops[0])

#define TOL 1e-4
#define MAX_IO 16

typedef enum { R_PASS, R_FAIL, R_NOTSUP } result;

/* Why a test is not supported (the table's last columns). */
typedef enum { WHY_OP, WHY_DTYPE, WHY_TRAINING, WHY_FORM, WHY_COUNT } why_kind;
/* "form": an attribute value or input/output form of an implemented operator
 * that EasyNPU refuses (3-D windows, Pad modes other than constant, MaxPool's
 * Indices, Dropout's mask, sequence or optional inputs). */
static const char *const why_names[WHY_COUNT] = {"operator", "dtype", "training mode", "form"};

/* Tests of supported operators that are refused on purpose: the importer's
 * message must contain `needle`. */
static const struct {
    const char *test;
    why_kind why;
    const char *needle;
} expected[] = {
    {"test_averagepool_3d_default", WHY_FORM, "3-D windows are not supported"},
    {"test_maxpool_3d_default", WHY_FORM, "3-D windows are not supported"},
    {"test_AvgPool3d", WHY_FORM, "3-D windows are not supported"},
    {"test_AvgPool3d_stride", WHY_FORM, "3-D windows are not supported"},
    {"test_AvgPool3d_stride1_pad0_gpu_input", WHY_FORM, "3-D windows are not supported"},
    {"test_MaxPool3d", WHY_FORM, "3-D windows are not supported"},
    {"test_MaxPool3d_stride", WHY_FORM, "3-D windows are not supported"},
    {"test_MaxPool3d_stride_padding", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d", WHY_FORM, "3-D windows are not supported"},
    {"test_convtranspose_3d", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d_dilated", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d_dilated_strided", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d_groups", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d_no_bias", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d_stride", WHY_FORM, "3-D windows are not supported"},
    {"test_Conv3d_stride_padding", WHY_FORM, "3-D windows are not supported"},
    {"test_maxpool_with_argmax_2d_precomputed_pads", WHY_FORM, "output 'Indices'"},
    {"test_maxpool_with_argmax_2d_precomputed_strides", WHY_FORM, "output 'Indices'"},
    {"test_identity_opt", WHY_FORM, "is not a tensor"},
    {"test_if_opt", WHY_FORM, "(op 'SequenceConstruct'): unsupported operator"},
    {"test_if_seq", WHY_FORM, "(op 'SequenceConstruct'): unsupported operator"},
    {"test_loop13_seq", WHY_FORM, "is not a tensor"},
    {"test_loop16_seq_none", WHY_FORM, "is not a tensor"},
    {"test_identity_sequence", WHY_FORM, "is not a tensor"},
    {"test_dropout_default_mask", WHY_FORM, "output 'mask'"},
    {"test_dropout_default_mask_ratio", WHY_FORM, "output 'mask'"},
    {"test_training_dropout", WHY_TRAINING, "training-mode Dropout"},
    {"test_training_dropout_default", WHY_TRAINING, "training-mode Dropout"},
    {"test_training_dropout_zero_ratio", WHY_TRAINING, "training-mode Dropout"},
    {"test_training_dropout_mask", WHY_TRAINING, "output 'mask'"},
    {"test_training_dropout_default_mask", WHY_TRAINING, "output 'mask'"},
    {"test_training_dropout_zero_ratio_mask", WHY_TRAINING, "output 'mask'"},
    {"test_batchnorm_epsilon_training_mode", WHY_TRAINING, "only inference BatchNormalization"},
    {"test_batchnorm_example_training_mode", WHY_TRAINING, "only inference BatchNormalization"},
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

typedef struct outcome {
    result r;
    why_kind why;
    char msg[ENPU_ERR_MSG_MAX + 160];
} outcome;

static result set(outcome *o, result r, why_kind why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static result set(outcome *o, result r, why_kind why, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->msg, sizeof o->msg, fmt, ap);
    va_end(ap);
    o->why = why;
    return o->r = r;
}

/* snprintf into a path buffer; a path too long for it is a test bug. */
static void pathf(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap);
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* --- op types of a model, read straight from the protobuf wire format so the
 * classification does not depend on the importer under test. ------------ */

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* Calls fn(field, data, len) for each length-delimited field of a message. */
static bool each_bytes_field(const uint8_t *p, const uint8_t *end,
                             bool (*fn)(int field, const uint8_t *d, size_t n, void *ctx),
                             void *ctx) {
    while (p < end) {
        uint64_t key, v;
        if (!varint(&p, end, &key)) return false;
        switch (key & 7) {
        case 0:
            if (!varint(&p, end, &v)) return false;
            break;
        case 1:
            p += 8;
            break;
        case 5:
            p += 4;
            break;
        case 2:
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p)) return false;
            if (!fn((int)(key >> 3), p, (size_t)v, ctx)) return false;
            p += v;
            break;
        default: return false;
        }
        if (p > end) return false;
    }
    return true;
}

/* The operators of a model and the one its test is counted under: the
 * single operator (Constant aside), else the first unsupported one, else
 * the supported ones joined with '+'. */
typedef struct op_scan {
    bool all_supported;
    char key[600];
    char unsupported[300];
    char op[128], domain[128];
} op_scan;

static void copy_str(char *dst, size_t cap, const uint8_t *d, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, d, n);
    dst[n] = '\0';
}

static bool node_field(int field, const uint8_t *d, size_t n, void *ctx) {
    op_scan *s = ctx;
    if (field == 4) copy_str(s->op, sizeof s->op, d, n);
    if (field == 7) copy_str(s->domain, sizeof s->domain, d, n);
    return true;
}

/* Appends `op` to the '+'-joined key unless already there. */
static void key_add(op_scan *s, const char *op) {
    char tok[310];
    snprintf(tok, sizeof tok, "+%s+", op);
    char cur[610];
    snprintf(cur, sizeof cur, "+%s+", s->key);
    if (strstr(cur, tok)) return;
    size_t len = strlen(s->key);
    snprintf(s->key + len, sizeof s->key - len, "%s%s", len ? "+" : "", op);
}

static bool graph_field(int field, const uint8_t *d, size_t n, void *ctx) {
    op_scan *s = ctx;
    if (field != 1) return true; /* GraphProto.node */
    s->op[0] = s->domain[0] = '\0';
    if (!each_bytes_field(d, d + n, node_field, s)) return false;
    bool dflt = s->domain[0] == '\0' || strcmp(s->domain, "ai.onnx") == 0;
    if (dflt && strcmp(s->op, "Constant") == 0) return true;
    char full[300];
    snprintf(full, sizeof full, "%s%s%s", dflt ? "" : s->domain, dflt ? "" : ".", s->op);
    bool ok = dflt && enpu_op_from_onnx(s->op) != ENPU_OP_NONE;
    if (!ok && s->all_supported) {
        s->all_supported = false;
        snprintf(s->unsupported, sizeof s->unsupported, "%s", full);
    }
    key_add(s, full);
    return true;
}

static bool model_field(int field, const uint8_t *d, size_t n, void *ctx) {
    return field == 7 ? each_bytes_field(d, d + n, graph_field, ctx) : true; /* ModelProto.graph */
}

static void scan_ops(const char *model, op_scan *s) {
    memset(s, 0, sizeof *s);
    s->all_supported = true;
    uint8_t *buf = NULL;
    size_t n = 0;
    enpu_err err = {0};
    if (enpu_file_read(model, ENPU_MAX_MODEL_BYTES, &buf, &n, &err) ||
        !each_bytes_field(buf, buf + n, model_field, s)) {
        s->all_supported = false;
        snprintf(s->unsupported, sizeof s->unsupported, "(unreadable model)");
    }
    free(buf);
    if (!s->all_supported) snprintf(s->key, sizeof s->key, "%s", s->unsupported);
    else if (!s->key[0]) snprintf(s->key, sizeof s->key, "Constant");
}

/* --- one data set ------------------------------------------------------------- */

static int find_expected(const char *test) {
    for (size_t i = 0; i < N_EXPECTED; i++)
        if (strcmp(expected[i].test, test) == 0) return (int)i;
    return -1;
}

/* An import/inference/execution error of a test whose operators are all
 * supported: "not supported" only as listed in expected[]. */
static result refused(outcome *o, const char *test, const char *step, const enpu_err *err) {
    int e = find_expected(test);
    /* a tensor of a type EasyNPU does not compute on (float16, string, ...) */
    if (err->code == ENPU_E_UNSUPPORTED &&
        (strstr(err->msg, ": data type ") || strstr(err->msg, "): Cast to ")))
        return set(o, R_NOTSUP, WHY_DTYPE, "%s", err->msg);
    if (err->code == ENPU_E_UNSUPPORTED && e >= 0 && strstr(err->msg, expected[e].needle))
        return set(o, R_NOTSUP, expected[e].why, "%s", err->msg);
    if (err->code == ENPU_E_UNSUPPORTED && e < 0)
        return set(o, R_FAIL, WHY_OP, "%s refused a test of supported operators: %s", step,
                   err->msg);
    return set(o, R_FAIL, WHY_OP, "%s (%s): %s", step, enpu_status_name(err->code), err->msg);
}

/* The float reference computes in float32; an integer or bool tensor is run
 * through it when float32 holds it exactly (|v| <= 2^24, checked on the
 * data), a float64 one rounded to float32 (compared within TOL). */
static bool exact_dtype(enpu_dtype dt) { return enpu_fref_carries(dt); }

/* b converted in place to float32 if every value is exact there; false (b
 * unchanged) otherwise. */
static bool to_f32_exact(enpu_buf *b) {
    if (b->dtype == ENPU_DT_FLOAT32) return true;
    if (!exact_dtype(b->dtype)) return false;
    int64_t n = enpu_buf_numel(b);
    for (int64_t i = 0; i < n; i++) {
        double v;
        switch (b->dtype) {
        case ENPU_DT_INT32: v = ((const int32_t *)b->data)[i]; break;
        case ENPU_DT_UINT32: v = ((const uint32_t *)b->data)[i]; break;
        case ENPU_DT_INT64: v = (double)((const int64_t *)b->data)[i]; break;
        case ENPU_DT_UINT64: v = (double)((const uint64_t *)b->data)[i]; break;
        default: v = 0; break; /* 8- and 16-bit values and bools are exact */
        }
        if (fabs(v) > 16777216.0) return false;
    }
    enpu_err err = {0};
    return enpu_buf_to_f32(b, &err) == 0;
}

/* A graph input or output whose dtype float32 cannot carry, or NULL. */
static const enpu_tensor *non_float_io(const enpu_graph *g) {
    for (int i = 0; i < g->n_inputs; i++)
        if (!exact_dtype(g->tensors[g->inputs[i]].dtype)) return &g->tensors[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++) {
        const enpu_tensor *t = &g->tensors[g->outputs[i]];
        if (!exact_dtype(t->dtype) && t->dtype != ENPU_DT_UNDEFINED) return t;
    }
    return NULL;
}

static result compare(const char *name, const enpu_tensor *t, const float *got,
                      enpu_buf *want, outcome *o) {
    if (want->dtype != t->dtype && t->dtype != ENPU_DT_UNDEFINED && exact_dtype(want->dtype))
        return set(o, R_FAIL, WHY_OP, "output '%s': inferred dtype %s, reference %s", name,
                   enpu_dtype_name(t->dtype), enpu_dtype_name(want->dtype));
    enpu_dtype want_dt = want->dtype;
    if (!to_f32_exact(want))
        return set(o, R_NOTSUP, WHY_DTYPE, "reference output '%s' is %s", name,
                   enpu_dtype_name(want->dtype));
    bool same = want->rank == t->rank;
    for (int d = 0; same && d < t->rank; d++) same = want->dims[d] == t->dims[d];
    if (!same) {
        char a[128], b[128];
        enpu_shape_str(t, a, sizeof a);
        enpu_tensor ref = {.rank = want->rank};
        memcpy(ref.dims, want->dims, sizeof ref.dims);
        enpu_shape_str(&ref, b, sizeof b);
        return set(o, R_FAIL, WHY_OP, "output '%s': inferred shape %s, reference %s", name, a, b);
    }
    if (!got) return set(o, R_FAIL, WHY_OP, "output '%s' was not computed", name);
    const float *ref = want->data;
    int64_t n = enpu_buf_numel(want);
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = got[i];
        if (isnan(r) && isnan(v)) continue;
        if (r == v) continue; /* also equal infinities */
        if (want_dt != ENPU_DT_FLOAT32 && want_dt != ENPU_DT_FLOAT64) /* integers are exact */
            return set(o, R_FAIL, WHY_OP, "output '%s' element %lld: got %.9g, reference %.9g",
                       name, (long long)i, v, r);
        if (!(fabs(v - r) <= TOL * fmax(1.0, fabs(r))))
            return set(o, R_FAIL, WHY_OP, "output '%s' element %lld: got %.9g, reference %.9g",
                       name, (long long)i, v, r);
    }
    return R_PASS;
}

typedef struct data_set {
    enpu_buf in[MAX_IO];
    char path[MAX_IO][4200];
    int n_in;
} data_set;

static void data_set_free(data_set *d) {
    for (int k = 0; k < MAX_IO; k++) enpu_buf_free(&d->in[k]);
}

static result run_data_set(const char *dir, const char *test, const char *model, const char *ds,
                           outcome *o) {
    enpu_err err = {0};
    enpu_graph *g0 = NULL, *g = NULL;
    enpu_fexec *ex = NULL;
    data_set d;
    memset(&d, 0, sizeof d);
    enpu_onnx_bind binds[MAX_IO];
    enpu_buf run_in[MAX_IO];
    int n_binds = 0;
    result r = R_PASS;

    /* Which inputs are parameters: an import without inference says. */
    if (enpu_onnx_load_ex(model, ENPU_ONNX_NO_INFER, &g0, &err)) {
        r = refused(o, test, "import", &err);
        goto done;
    }
    for (;; d.n_in++) {
        char path[4200];
        pathf(path, sizeof path, "%s/%s/input_%d.pb", dir, ds, d.n_in);
        if (!exists(path)) break;
        if (d.n_in == MAX_IO) {
            r = set(o, R_FAIL, WHY_OP, "%s: more than %d inputs", ds, MAX_IO);
            goto done;
        }
        memcpy(d.path[d.n_in], path, sizeof path);
        if (enpu_tensor_read(path, &d.in[d.n_in], &err)) {
            r = set(o, R_FAIL, WHY_OP, "%s", err.msg);
            goto done;
        }
    }
    if (d.n_in != g0->n_inputs) {
        r = set(o, R_FAIL, WHY_OP, "%s has %d inputs, the graph %d", ds, d.n_in, g0->n_inputs);
        goto done;
    }
    for (int k = 0; k < d.n_in; k++) {
        const enpu_tensor *in = &g0->tensors[g0->inputs[k]];
        if (enpu_onnx_is_param_input(g0, g0->inputs[k]))
            binds[n_binds++] = (enpu_onnx_bind){in->name, d.path[k], &d.in[k]};
        else if (!to_f32_exact(&d.in[k])) {
            r = set(o, R_NOTSUP, WHY_DTYPE, "%s (input '%s')", enpu_dtype_name(in->dtype), in->name);
            goto done;
        }
    }
    enpu_onnx_opts opts = {0, binds, n_binds};
    if (enpu_onnx_load_opts(model, &opts, &g, &err)) {
        r = refused(o, test, "import", &err);
        goto done;
    }
    const enpu_tensor *nf = non_float_io(g);
    if (nf) {
        r = set(o, R_NOTSUP, WHY_DTYPE, "%s (tensor '%s')", enpu_dtype_name(nf->dtype), nf->name);
        goto done;
    }
    if (enpu_fexec_new(g, &ex, &err)) {
        r = refused(o, test, "executor", &err);
        goto done;
    }
    /* The remaining graph inputs, by name among the data set's. */
    for (int j = 0; j < g->n_inputs; j++) {
        const char *nm = g->tensors[g->inputs[j]].name;
        int k = 0;
        while (k < d.n_in && strcmp(g0->tensors[g0->inputs[k]].name, nm) != 0) k++;
        ENPU_ASSERT(k < d.n_in);
        run_in[j] = d.in[k];
    }
    if (enpu_fexec_run_n(ex, g->n_inputs, run_in, &err)) {
        r = refused(o, test, "run", &err);
        goto done;
    }
    int n_out = 0;
    for (;; n_out++) {
        char path[4200];
        pathf(path, sizeof path, "%s/%s/output_%d.pb", dir, ds, n_out);
        if (!exists(path)) break;
    }
    if (n_out != g->n_outputs) {
        r = set(o, R_FAIL, WHY_OP, "%s has %d outputs, the graph %d", ds, n_out, g->n_outputs);
        goto done;
    }
    for (int k = 0; k < n_out && r == R_PASS; k++) {
        enpu_buf want = {0};
        char path[4200];
        pathf(path, sizeof path, "%s/%s/output_%d.pb", dir, ds, k);
        if (enpu_tensor_read(path, &want, &err)) {
            r = set(o, R_FAIL, WHY_OP, "%s", err.msg);
            break;
        }
        const enpu_tensor *t = &g->tensors[g->outputs[k]];
        r = compare(t->name, t, enpu_fexec_value(ex, g->outputs[k]), &want, o);
        enpu_buf_free(&want);
    }
    if (r == R_FAIL) {
        char tmp[sizeof o->msg + 80];
        snprintf(tmp, sizeof tmp, "%s: %s", ds, o->msg);
        memcpy(o->msg, tmp, sizeof o->msg - 1);
        o->msg[sizeof o->msg - 1] = '\0';
    }
done:
    data_set_free(&d);
    enpu_fexec_free(ex);
    enpu_graph_free(g);
    enpu_graph_free(g0);
    return r;
}

static result run_one_test(const char *dir, const char *test, const op_scan *ops, outcome *o) {
    char model[4200], ds[64], path[4300];
    pathf(model, sizeof model, "%s/model.onnx", dir);
    o->r = R_PASS;
    o->msg[0] = '\0';
    if (!ops->all_supported)
        return set(o, R_NOTSUP, WHY_OP, "operator %s is not implemented", ops->unsupported);
    int n_ds = 0;
    for (;; n_ds++) {
        pathf(path, sizeof path, "%s/test_data_set_%d", dir, n_ds);
        if (!exists(path)) break;
        snprintf(ds, sizeof ds, "test_data_set_%d", n_ds);
        result r = run_data_set(dir, test, model, ds, o);
        if (r != R_PASS) return r;
    }
    if (n_ds == 0) return set(o, R_FAIL, WHY_OP, "no test_data_set");
    if (find_expected(test) >= 0)
        return set(o, R_FAIL, WHY_OP, "listed as not supported (%s) but passes: update expected[]",
                   expected[find_expected(test)].needle);
    return R_PASS;
}

/* --- the suite ------------------------------------------------------------ */

typedef struct op_row {
    char key[600];
    int passed, failed, notsup[WHY_COUNT];
} op_row;

typedef struct tally {
    op_row *rows;
    int n_rows, cap_rows;
    op_row *ops; /* one row per operator: every test that uses it (all implemented) */
    int n_ops, cap_ops;
    int total, passed, failed, notsup[WHY_COUNT];
    int sup_tests, sup_passed, sup_failed, sup_notsup; /* tests of supported operators */
    int ran_expected[N_EXPECTED];
} tally;

static op_row *row_in(op_row **rows, int *n_rows, int *cap_rows, const char *key) {
    for (int i = 0; i < *n_rows; i++)
        if (strcmp((*rows)[i].key, key) == 0) return &(*rows)[i];
    if (*n_rows == *cap_rows) {
        *cap_rows = *cap_rows ? 2 * *cap_rows : 256;
        *rows = realloc(*rows, (size_t)*cap_rows * sizeof **rows);
        assert_non_null(*rows);
    }
    op_row *r = &(*rows)[(*n_rows)++];
    memset(r, 0, sizeof *r);
    snprintf(r->key, sizeof r->key, "%s", key);
    return r;
}

static op_row *row_for(tally *t, const char *key) { return row_in(&t->rows, &t->n_rows, &t->cap_rows, key); }

/* Counts a test of implemented operators under each operator of its '+'-joined key. */
static void count_ops(tally *t, const char *key, result r, why_kind why) {
    char buf[600];
    snprintf(buf, sizeof buf, "%s", key);
    char *save = NULL;
    for (char *op = strtok_r(buf, "+", &save); op; op = strtok_r(NULL, "+", &save)) {
        op_row *row = row_in(&t->ops, &t->n_ops, &t->cap_ops, op);
        if (r == R_PASS) row->passed++;
        else if (r == R_FAIL) row->failed++;
        else row->notsup[why]++;
    }
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every test_* folder of `root`/`suite`; returns how many there were. */
static int run_suite(const char *root, const char *suite, tally *t, bool verbose,
                     const char *only) {
    char base[4096];
    pathf(base, sizeof base, "%s/%s", root, suite);
    DIR *d = opendir(base);
    if (!d) {
        printf("note: %s is absent\n", base);
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "test_", 5) != 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            names = realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        names[n] = strdup(e->d_name);
        assert_non_null(names[n++]);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        if (only && !strstr(names[i], only)) {
            free(names[i]);
            continue;
        }
        char dir[4200], model[4300];
        pathf(dir, sizeof dir, "%s/%s", base, names[i]);
        pathf(model, sizeof model, "%s/model.onnx", dir);
        op_scan ops;
        scan_ops(model, &ops);
        outcome o;
        result r = run_one_test(dir, names[i], &ops, &o);
        op_row *row = row_for(t, ops.key);
        count++;
        t->total++;
        if (ops.all_supported) t->sup_tests++;
        int e = find_expected(names[i]);
        if (e >= 0) t->ran_expected[e]++;
        if (ops.all_supported) count_ops(t, ops.key, r, o.why);
        switch (r) {
        case R_PASS:
            row->passed++;
            t->passed++;
            t->sup_passed++;
            if (verbose) printf("PASS %s/%s\n", suite, names[i]);
            break;
        case R_FAIL:
            row->failed++;
            t->failed++;
            t->sup_failed += ops.all_supported;
            printf("FAIL %s/%s [%s]: %s\n", suite, names[i], ops.key, o.msg);
            break;
        case R_NOTSUP:
            row->notsup[o.why]++;
            t->notsup[o.why]++;
            t->sup_notsup += ops.all_supported;
            printf("NOT SUPPORTED %s/%s [%s] (%s): %s\n", suite, names[i], ops.key,
                   why_names[o.why], o.msg);
            break;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

static int cmp_row(const void *a, const void *b) {
    return strcmp(((const op_row *)a)->key, ((const op_row *)b)->key);
}

/* Only "operator not implemented" verdicts: listed compactly. */
static bool unimplemented(const op_row *r) {
    return !r->passed && !r->failed && !r->notsup[WHY_DTYPE] && !r->notsup[WHY_TRAINING] &&
           !r->notsup[WHY_FORM];
}

static void print_summary(tally *t) {
    qsort(t->rows, (size_t)t->n_rows, sizeof *t->rows, cmp_row);
    printf("\nONNX conformance per operator (libonnx-testdata node, pytorch-converted, "
           "pytorch-operator; a test of several operators under their '+'-joined names):\n");
    printf("  %-34s %6s %6s %13s  %s\n", "operator", "passed", "failed", "not supported",
           "(why)");
    for (int i = 0; i < t->n_rows; i++) {
        const op_row *r = &t->rows[i];
        if (unimplemented(r)) continue;
        int ns = 0;
        char why[160] = "";
        size_t w = 0;
        for (int k = 0; k < WHY_COUNT; k++) {
            ns += r->notsup[k];
            if (r->notsup[k] && w < sizeof why)
                w += (size_t)snprintf(why + w, sizeof why - w, "%s%s %d", w ? ", " : "",
                                      why_names[k], r->notsup[k]);
        }
        printf("  %-34s %6d %6d %13d  %s%s%s\n", r->key, r->passed, r->failed, ns,
               ns ? "(" : "", why, ns ? ")" : "");
    }
    int n_ops = 0, col = 0;
    for (int i = 0; i < t->n_rows; i++) n_ops += unimplemented(&t->rows[i]);
    printf("not supported, operator not implemented (%d operators; tests):\n ", n_ops);
    for (int i = 0; i < t->n_rows; i++) {
        const op_row *r = &t->rows[i];
        if (!unimplemented(r)) continue;
        char item[700];
        int len = snprintf(item, sizeof item, " %s %d", r->key, r->notsup[WHY_OP]);
        if (col + len > 96) {
            printf("\n ");
            col = 0;
        }
        fputs(item, stdout);
        col += len;
    }
    printf("\n");
    printf("onnx conformance: %d tests: %d passed, %d failed, %d not supported (operator %d, "
           "dtype %d, training mode %d, form %d)\n",
           t->total, t->passed, t->failed,
           t->notsup[WHY_OP] + t->notsup[WHY_DTYPE] + t->notsup[WHY_TRAINING] + t->notsup[WHY_FORM],
           t->notsup[WHY_OP], t->notsup[WHY_DTYPE], t->notsup[WHY_TRAINING], t->notsup[WHY_FORM]);
    printf("onnx conformance, tests whose operators are all implemented: %d: %d passed, %d "
           "failed, %d not supported (dtype, training mode, form)\n",
           t->sup_tests, t->sup_passed, t->sup_failed, t->sup_notsup);
    fflush(stdout);
}

/* The share of each implemented operator's tests that pass (MIN_SHARE,
 * short_ops[]); returns how many operators break the rule. */
static int check_shares(tally *t) {
    qsort(t->ops, (size_t)t->n_ops, sizeof *t->ops, cmp_row);
    printf("\nONNX conformance per implemented operator, every test that uses it (float types: "
           "dtype refusals not counted):\n");
    printf("  %-20s %6s %7s %7s  %s\n", "operator", "passed", "counted", "share", "(short of 95%: why)");
    int bad = 0, n_ok = 0;
    bool seen[N_SHORT] = {0};
    for (int i = 0; i < t->n_ops; i++) {
        const op_row *r = &t->ops[i];
        int counted = r->passed + r->failed + r->notsup[WHY_TRAINING] + r->notsup[WHY_FORM];
        if (!counted) continue;
        double share = (double)r->passed / counted;
        int k = -1;
        for (size_t j = 0; j < N_SHORT; j++)
            if (!strcmp(short_ops[j].op, r->key)) k = (int)j;
        printf("  %-20s %6d %7d %6.1f%%  %s%s%s\n", r->key, r->passed, counted, 100.0 * share,
               k >= 0 ? "(" : "", k >= 0 ? short_ops[k].why : "", k >= 0 ? ")" : "");
        if (k >= 0) {
            seen[k] = true;
            if (r->passed != short_ops[k].passed || counted != short_ops[k].counted) {
                printf("FAIL %s: %d of %d pass, short_ops[] says %d of %d: update it\n", r->key, r->passed,
                       counted, short_ops[k].passed, short_ops[k].counted);
                bad++;
            }
        } else if (share < MIN_SHARE) {
            printf("FAIL %s: %.1f%% of its tests pass, under %.0f%%\n", r->key, 100.0 * share,
                   100.0 * MIN_SHARE);
            bad++;
        } else {
            n_ok++;
        }
    }
    for (size_t j = 0; j < N_SHORT; j++)
        if (!seen[j]) {
            printf("FAIL short_ops[] lists %s, which no test counts\n", short_ops[j].op);
            bad++;
        }
    printf("onnx conformance per operator: %d of %d implemented operators pass >= %.0f%% of their "
           "tests; %d short of it by forms refused on purpose\n",
           n_ok, n_ok + (int)N_SHORT, 100.0 * MIN_SHARE, (int)N_SHORT);
    return bad;
}

static void test_onnx_conformance(void **state) {
    (void)state;
    /* ENPU_ONNX_NODE_TESTS is the node suite; its siblings are the others. */
    char root[4096];
    pathf(root, sizeof root, "%s", ENPU_ONNX_NODE_TESTS);
    char *slash = strrchr(root, '/');
    assert_non_null(slash);
    *slash = '\0';
    const char *only = getenv("ENPU_ONNX_NODE_ONLY");
    bool verbose = getenv("ENPU_ONNX_NODE_VERBOSE") != NULL;
    tally t;
    memset(&t, 0, sizeof t);
    int node = run_suite(root, slash + 1, &t, verbose, only);
    run_suite(root, "pytorch-converted", &t, verbose, only);
    run_suite(root, "pytorch-operator", &t, verbose, only);
    print_summary(&t);
    if (!only) t.failed += check_shares(&t);
    for (size_t i = 0; i < N_EXPECTED && !only; i++)
        if (!t.ran_expected[i]) {
            printf("FAIL expected[] lists %s, which is not in the test data\n", expected[i].test);
            t.failed++;
        }
    free(t.rows);
    free(t.ops);
    assert_int_equal(t.failed, 0);
    if (!only) {
        assert_true(node > 0);
        assert_true(t.passed >= MIN_PASSED);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a crash still shows which test was last */
    struct stat st;
    if (stat(ENPU_ONNX_NODE_TESTS, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "SKIP: %s is absent; install libonnx-testdata for the ONNX node tests\n",
                ENPU_ONNX_NODE_TESTS);
        return ENPU_SKIP;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_onnx_conformance)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
