/* ONNX backend node tests (libonnx-testdata) through the importer and the
 * float reference executor.
 *
 * Every test_* folder is classified:
 *   skipped (unsupported): the importer, shape inference or the executor
 *     says ENPU_E_UNSUPPORTED, a model uses an op we do not have, or a tensor
 *     is not float32 (int64 shape-like constants and parameter inputs aside);
 *   failed: anything else going wrong for a model whose ops we all support,
 *     or an output differing from the reference beyond 1e-4 relative;
 *   passed: every data set matches.
 * The summary line is parsed by people and scripts alike: keep its format. */
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

/* Passing tests measured when this runner was written (no regressions):
 * raise it when support grows. */
#define MIN_PASSED 138

#define TOL 1e-4

typedef enum { R_PASS, R_FAIL, R_SKIP } result;

typedef struct outcome {
    result r;
    char why[ENPU_ERR_MSG_MAX + 128];
} outcome;

static result set(outcome *o, result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static result set(outcome *o, result r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->why, sizeof o->why, fmt, ap);
    va_end(ap);
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

typedef struct op_scan {
    bool all_supported;
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

static bool graph_field(int field, const uint8_t *d, size_t n, void *ctx) {
    op_scan *s = ctx;
    if (field != 1) return true; /* GraphProto.node */
    s->op[0] = s->domain[0] = '\0';
    if (!each_bytes_field(d, d + n, node_field, s)) return false;
    bool ok = (s->domain[0] == '\0' || strcmp(s->domain, "ai.onnx") == 0) &&
              enpu_op_from_onnx(s->op) != ENPU_OP_NONE;
    if (!ok && s->all_supported) {
        s->all_supported = false;
        snprintf(s->unsupported, sizeof s->unsupported, "%s%s%s", s->domain,
                 s->domain[0] ? "." : "", s->op);
    }
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
}

/* --- one data set ------------------------------------------------------------- */

/* A non-float tensor other than an int64 constant or graph input (which
 * shape-like operands are), or NULL. */
static const enpu_tensor *non_float_tensor(const enpu_graph *g) {
    for (int t = 0; t < g->n_tensors; t++) {
        const enpu_tensor *tt = &g->tensors[t];
        /* Intermediate dtypes are known only after shape inference. */
        if (tt->dtype == ENPU_DT_FLOAT32 || tt->dtype == ENPU_DT_UNDEFINED) continue;
        if (tt->dtype == ENPU_DT_INT64 && (tt->flags & (ENPU_T_CONST | ENPU_T_INPUT))) continue;
        return tt;
    }
    return NULL;
}

static result compare(const char *name, const enpu_tensor *t, const float *got,
                      const enpu_buf *want, outcome *o) {
    if (want->dtype != ENPU_DT_FLOAT32)
        return set(o, R_SKIP, "reference output '%s' is %s", name, enpu_dtype_name(want->dtype));
    bool same = want->rank == t->rank;
    for (int d = 0; same && d < t->rank; d++) same = want->dims[d] == t->dims[d];
    if (!same) {
        char a[128], b[128];
        enpu_shape_str(t, a, sizeof a);
        enpu_tensor ref = {.rank = want->rank};
        memcpy(ref.dims, want->dims, sizeof ref.dims);
        enpu_shape_str(&ref, b, sizeof b);
        return set(o, R_FAIL, "output '%s': inferred shape %s, reference %s", name, a, b);
    }
    if (!got) return set(o, R_FAIL, "output '%s' was not computed", name);
    const float *ref = want->data;
    int64_t n = enpu_buf_numel(want);
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = got[i];
        if (isnan(r) && isnan(v)) continue;
        if (r == v) continue; /* also equal infinities */
        if (!(fabs(v - r) <= TOL * fmax(1.0, fabs(r))))
            return set(o, R_FAIL, "output '%s' element %lld: got %.9g, reference %.9g", name,
                       (long long)i, v, r);
    }
    return R_PASS;
}

/* Classifies an error from import/inference/execution. */
static result failed_step(outcome *o, const op_scan *ops, const char *step, const enpu_err *err) {
    if (err->code == ENPU_E_UNSUPPORTED || !ops->all_supported)
        return set(o, R_SKIP, "%s: %s", step, err->msg);
    return set(o, R_FAIL, "%s (%s): %s", step, enpu_status_name(err->code), err->msg);
}

static result run_data_set(const char *dir, const char *model, const char *ds, const op_scan *ops,
                           outcome *o) {
    enpu_err err = {0};
    enpu_graph *g = NULL;
    enpu_fexec *ex = NULL;
    enpu_buf in[16], *run_in = NULL;
    int n_in = 0;
    int *orig = NULL;
    char path[4096];
    result r = R_PASS;
    memset(in, 0, sizeof in);

    if (enpu_onnx_load_ex(model, ENPU_ONNX_NO_INFER, &g, &err)) {
        r = failed_step(o, ops, "import", &err);
        goto done;
    }
    const enpu_tensor *nf = non_float_tensor(g);
    if (nf) {
        r = set(o, R_SKIP, "dtype %s (tensor '%s')", enpu_dtype_name(nf->dtype), nf->name);
        goto done;
    }
    for (;; n_in++) {
        pathf(path, sizeof path, "%s/%s/input_%d.pb", dir, ds, n_in);
        if (!exists(path)) break;
        if (n_in == 16) {
            r = set(o, R_FAIL, "%s: more than 16 inputs", ds);
            goto done;
        }
        if (enpu_tensor_read(path, &in[n_in], &err)) {
            r = set(o, R_FAIL, "%s", err.msg);
            goto done;
        }
    }
    if (n_in != g->n_inputs) {
        r = set(o, R_FAIL, "%s has %d inputs, the graph %d", ds, n_in, g->n_inputs);
        goto done;
    }
    orig = malloc(sizeof(int) * (size_t)(n_in ? n_in : 1));
    run_in = calloc((size_t)(n_in ? n_in : 1), sizeof *run_in);
    if (!orig || !run_in) {
        r = set(o, R_FAIL, "out of memory");
        goto done;
    }
    if (n_in) memcpy(orig, g->inputs, sizeof(int) * (size_t)n_in);
    /* Pin shape-like and parameter inputs: the NPU compiles for fixed shapes. */
    for (int k = 0; k < n_in; k++) {
        enpu_tensor *t = &g->tensors[orig[k]];
        if (!enpu_onnx_is_param_input(g, orig[k]) && t->dtype != ENPU_DT_INT64) continue;
        if (in[k].dtype != t->dtype) {
            r = set(o, R_FAIL, "%s: input_%d.pb is %s, graph input '%s' %s", ds, k,
                    enpu_dtype_name(in[k].dtype), t->name, enpu_dtype_name(t->dtype));
            goto done;
        }
        if (t->rank < 0) {
            t->rank = in[k].rank;
            memcpy(t->dims, in[k].dims, sizeof t->dims);
        }
        void *data = in[k].data;
        if (!data) data = calloc(1, 8); /* empty tensor */
        in[k].data = NULL;
        if (enpu_graph_freeze_input(g, orig[k], data, &err)) {
            r = set(o, R_FAIL, "freeze '%s': %s", t->name, err.msg);
            goto done;
        }
    }
    if (enpu_onnx_fold_inputs(g, &err) || enpu_graph_infer_shapes(g, &err) ||
        enpu_graph_validate(g, &err)) {
        r = failed_step(o, ops, "infer/validate", &err);
        goto done;
    }
    if ((nf = non_float_tensor(g))) {
        r = set(o, R_SKIP, "dtype %s (tensor '%s')", enpu_dtype_name(nf->dtype), nf->name);
        goto done;
    }
    if (enpu_fexec_new(g, &ex, &err)) {
        r = failed_step(o, ops, "executor", &err);
        goto done;
    }
    for (int j = 0; j < g->n_inputs; j++)
        for (int k = 0; k < n_in; k++)
            if (orig[k] == g->inputs[j]) run_in[j] = in[k];
    if (enpu_fexec_run_n(ex, g->n_inputs, run_in, &err)) {
        r = set(o, R_FAIL, "%s: run: %s", ds, err.msg);
        goto done;
    }
    int n_out = 0;
    for (;; n_out++) {
        pathf(path, sizeof path, "%s/%s/output_%d.pb", dir, ds, n_out);
        if (!exists(path)) break;
    }
    if (n_out != g->n_outputs) {
        r = set(o, R_FAIL, "%s has %d outputs, the graph %d", ds, n_out, g->n_outputs);
        goto done;
    }
    for (int k = 0; k < n_out && r == R_PASS; k++) {
        enpu_buf want = {0};
        pathf(path, sizeof path, "%s/%s/output_%d.pb", dir, ds, k);
        if (enpu_tensor_read(path, &want, &err)) {
            r = set(o, R_FAIL, "%s", err.msg);
            break;
        }
        const enpu_tensor *t = &g->tensors[g->outputs[k]];
        r = compare(t->name, t, enpu_fexec_value(ex, g->outputs[k]), &want, o);
        if (r != R_PASS) {
            char tmp[sizeof o->why + 80];
            snprintf(tmp, sizeof tmp, "%s: %s", ds, o->why);
            memcpy(o->why, tmp, sizeof o->why - 1);
            o->why[sizeof o->why - 1] = '\0';
        }
        enpu_buf_free(&want);
    }
done:
    for (int k = 0; k < 16; k++) enpu_buf_free(&in[k]);
    free(orig);
    free(run_in);
    enpu_fexec_free(ex);
    enpu_graph_free(g);
    return r;
}

static result run_one_test(const char *dir, outcome *o) {
    char model[4096], ds[64], path[4200];
    pathf(model, sizeof model, "%s/model.onnx", dir);
    op_scan ops;
    scan_ops(model, &ops);
    o->r = R_PASS;
    o->why[0] = '\0';
    int n_ds = 0;
    for (;; n_ds++) {
        pathf(path, sizeof path, "%s/test_data_set_%d", dir, n_ds);
        if (!exists(path)) break;
        snprintf(ds, sizeof ds, "test_data_set_%d", n_ds);
        result r = run_data_set(dir, model, ds, &ops, o);
        if (r != R_PASS) return r;
    }
    if (n_ds == 0) {
        /* No data: import alone tells whether we support the model. */
        enpu_err err = {0};
        enpu_graph *g = NULL;
        int rc = enpu_onnx_load_ex(model, ENPU_ONNX_NO_INFER, &g, &err);
        enpu_graph_free(g);
        if (rc) return failed_step(o, &ops, "import", &err);
        return set(o, R_SKIP, "no test_data_set");
    }
    return R_PASS;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_onnx_node_suite(void **state) {
    (void)state;
    DIR *d = opendir(ENPU_ONNX_NODE_TESTS);
    assert_non_null(d);
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
    const char *only = getenv("ENPU_ONNX_NODE_ONLY"); /* substring filter for debugging */
    bool verbose = getenv("ENPU_ONNX_NODE_VERBOSE") != NULL;
    int ran = 0, passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (only && !strstr(names[i], only)) {
            free(names[i]);
            continue;
        }
        char dir[4096];
        pathf(dir, sizeof dir, "%s/%s", ENPU_ONNX_NODE_TESTS, names[i]);
        outcome o;
        switch (run_one_test(dir, &o)) {
        case R_PASS:
            ran++;
            passed++;
            if (verbose) printf("PASS %s\n", names[i]);
            break;
        case R_FAIL:
            ran++;
            failed++;
            printf("FAIL %s: %s\n", names[i], o.why);
            break;
        case R_SKIP:
            skipped++;
            printf("SKIP %s: %s\n", names[i], o.why);
            break;
        }
        free(names[i]);
    }
    free(names);
    printf("onnx node tests: %d ran, %d passed, %d failed, %d skipped (unsupported)\n", ran,
           passed, failed, skipped);
    fflush(stdout);
    assert_int_equal(failed, 0);
    if (!only) assert_true(passed >= MIN_PASSED);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a crash still shows which test was last */
    struct stat st;
    if (stat(ENPU_ONNX_NODE_TESTS, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "SKIP: %s is absent; install libonnx-testdata for the ONNX node tests\n",
                ENPU_ONNX_NODE_TESTS);
        return ENPU_SKIP;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_onnx_node_suite)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
