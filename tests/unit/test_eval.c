/* Evaluation over a data set (eval.h): .npz archives, the forms of a data
 * set (folders, test_data_set subfolders, stacked arrays, .npz members,
 * --limit), labels files and their errors, and enpu_eval_run on the default
 * model: the same figures, bit for bit, whatever the thread count and the
 * golden's kernels, each per-input figure equal to a direct run of the two
 * references. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "easynpu/eval.h"
#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "testutil.h"

static char tmpdir[64];

static const char *tmp_path(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_text(const char *path, const char *text) {
    enpu_err err = {0};
    assert_int_equal(enpu_file_write_atomic(path, text, strlen(text), &err), 0);
}

static enpu_buf read_f32(const char *path) {
    enpu_buf b;
    enpu_err err = {0};
    if (enpu_tensor_read(path, &b, &err) || enpu_buf_to_f32(&b, &err)) fail_msg("%s", err.msg);
    return b;
}

static void expect_same_values(const enpu_buf *a, const float *want, int64_t n) {
    assert_int_equal(enpu_buf_numel(a), n);
    assert_memory_equal(a->data, want, (size_t)n * sizeof(float));
}

/* ---- .npz ---------------------------------------------------------------------------- */

static void check_kws_npz(const char *path) {
    enpu_buf *arr = NULL;
    int n = 0;
    enpu_err err = {0};
    if (enpu_npz_read(path, &arr, &n, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    assert_string_equal(arr[0].name, "a");
    assert_string_equal(arr[1].name, "b");
    assert_int_equal(arr[1].rank, 4);
    assert_int_equal(arr[1].dims[0], 3);
    enpu_buf s0 = read_f32("models/kws_cnn/sample_0.npy");
    expect_same_values(&arr[0], s0.data, enpu_buf_numel(&s0));
    for (int i = 0; i < 3; i++) {
        char p[128];
        snprintf(p, sizeof p, "models/kws_cnn/calib/calib_%02d.npy", i);
        enpu_buf c = read_f32(p);
        int64_t k = enpu_buf_numel(&c);
        assert_memory_equal((const float *)arr[1].data + i * k, c.data, (size_t)k * sizeof(float));
        enpu_buf_free(&c);
    }
    enpu_buf_free(&s0);
    for (int i = 0; i < n; i++) enpu_buf_free(&arr[i]);
    free(arr);
}

/* numpy.savez (stored, zip64 extras) and savez_compressed (deflated); every
 * truncation of an archive is a clean FORMAT error. */
static void test_npz(void **state) {
    (void)state;
    check_kws_npz("tests/data/npz/kws_stored.npz");
    check_kws_npz("tests/data/npz/kws_deflated.npz");
    uint8_t *data = NULL;
    size_t n = 0;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read("tests/data/npz/kws_deflated.npz", 1 << 24, &data, &n, &err), 0);
    for (size_t cut = 0; cut < n; cut += cut < 64 ? 1 : 97) {
        enpu_buf *arr = NULL;
        int k = 0;
        enpu_err e = {0};
        assert_int_equal(enpu_npz_parse(data, cut, &arr, &k, &e), ENPU_E_FORMAT);
        assert_null(arr);
        assert_non_null(strstr(e.msg, "<memory>"));
    }
    free(data);
}

/* ---- data sets ------------------------------------------------------------------------- */

static enpu_graph *kws_graph(void) {
    enpu_graph *g = NULL;
    enpu_err err = {0};
    if (enpu_onnx_load("models/kws_cnn.onnx", &g, &err)) fail_msg("%s", err.msg);
    return g;
}

static void test_dataset_forms(void **state) {
    (void)state;
    enpu_graph *g = kws_graph();
    enpu_err err = {0};
    enpu_dataset ds;
    /* an .npz (one array, then a stack of 3) and a folder of 4 files */
    if (enpu_dataset_load(g, "tests/data/npz/kws_stored.npz,models/kws_cnn", 0, &ds, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(ds.n_samples, 8);
    assert_int_equal(ds.n_inputs, 1);
    assert_false(ds.truncated);
    const char *want[8] = {"tests/data/npz/kws_stored.npz:a",    "tests/data/npz/kws_stored.npz:b[0]",
                           "tests/data/npz/kws_stored.npz:b[1]", "tests/data/npz/kws_stored.npz:b[2]",
                           "models/kws_cnn/sample_0.npy",        "models/kws_cnn/sample_1.npy",
                           "models/kws_cnn/sample_2.npy",        "models/kws_cnn/sample_3.npy"};
    for (int i = 0; i < 8; i++) assert_string_equal(ds.names[i], want[i]);
    enpu_buf c1 = read_f32("models/kws_cnn/calib/calib_01.npy");
    expect_same_values(&ds.bufs[2], c1.data, enpu_buf_numel(&c1));
    assert_int_equal(ds.bufs[2].rank, 4); /* the graph input's shape */
    enpu_dataset_free(&ds);

    /* a stacked .npy and --limit */
    enpu_buf st;
    int64_t d5[4] = {5, 1, 26, 49};
    assert_int_equal(enpu_buf_alloc(&st, ENPU_DT_FLOAT32, 4, d5, &err), 0);
    for (int64_t i = 0; i < enpu_buf_numel(&st); i++) ((float *)st.data)[i] = (float)(i % 97) * 0.01f;
    assert_int_equal(enpu_tensor_write(tmp_path("stack.npy"), &st, &err), 0);
    if (enpu_dataset_load(g, tmp_path("stack.npy"), 3, &ds, &err)) fail_msg("%s", err.msg);
    assert_int_equal(ds.n_samples, 3);
    assert_true(ds.truncated);
    char name[300];
    snprintf(name, sizeof name, "%s[2]", tmp_path("stack.npy"));
    assert_string_equal(ds.names[2], name);
    expect_same_values(&ds.bufs[2], (const float *)st.data + 2 * 26 * 49, 26 * 49);
    enpu_dataset_free(&ds);

    /* a model folder of test_data_set_N subfolders: their input_* files */
    char sub[256];
    for (int i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "%s/sets/test_data_set_%d", tmpdir, i);
        char parent[256];
        snprintf(parent, sizeof parent, "%s/sets", tmpdir);
        mkdir(parent, 0700);
        mkdir(sub, 0700);
        char f[300];
        snprintf(f, sizeof f, "%s/input_0.npy", sub);
        enpu_buf one = st;
        one.dims[0] = 1;
        one.data = (float *)st.data + (4 - i) * 26 * 49;
        assert_int_equal(enpu_tensor_write(f, &one, &err), 0);
        snprintf(f, sizeof f, "%s/output_0.npy", sub); /* not an input */
        assert_int_equal(enpu_tensor_write(f, &one, &err), 0);
    }
    write_text(tmp_path("sets/README.txt"), "not a tensor\n");
    if (enpu_dataset_load(g, tmp_path("sets"), 0, &ds, &err)) fail_msg("%s", err.msg);
    assert_int_equal(ds.n_samples, 2);
    snprintf(name, sizeof name, "%s/sets/test_data_set_1/input_0.npy", tmpdir);
    assert_string_equal(ds.names[1], name);
    expect_same_values(&ds.bufs[1], (const float *)st.data + 3 * 26 * 49, 26 * 49);
    enpu_dataset_free(&ds);

    /* a shape that is neither the input nor a stack of it */
    int64_t bad[3] = {2, 26, 50};
    enpu_buf b;
    assert_int_equal(enpu_buf_alloc(&b, ENPU_DT_FLOAT32, 3, bad, &err), 0);
    assert_int_equal(enpu_tensor_write(tmp_path("bad.npy"), &b, &err), 0);
    enpu_err e = {0};
    assert_int_equal(enpu_dataset_load(g, tmp_path("bad.npy"), 0, &ds, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "bad.npy: input 'mfcc': shape 2x26x50 does not match the model's "
                                  "1x1x26x49, nor a stack [N, ...] of it"));
    assert_int_equal(ds.n_samples, 0);
    memset(&e, 0, sizeof e);
    mkdir(tmp_path("empty"), 0700);
    assert_int_equal(enpu_dataset_load(g, tmp_path("empty"), 0, &ds, &e), ENPU_E_USAGE);
    assert_non_null(strstr(e.msg, "empty: no .npy, .npz or .pb files"));
    enpu_buf_free(&b);
    enpu_buf_free(&st);
    enpu_buf_free(&c1);
    enpu_graph_free(g);
}

/* ---- labels ----------------------------------------------------------------------------- */

static void fake_set(enpu_dataset *ds, int n, const char *const *names) {
    memset(ds, 0, sizeof *ds);
    ds->n_samples = n;
    ds->n_inputs = 1;
    ds->names = (char **)names;
}

static int labels_err(const char *spec, const enpu_dataset *ds, enpu_err *e) {
    int *l = NULL, n = -1;
    memset(e, 0, sizeof *e);
    int rc = enpu_labels_load(spec, ds, &l, &n, e);
    assert_null(l);
    assert_int_equal(n, 0);
    return rc;
}

static void test_labels(void **state) {
    (void)state;
    const char *names[5] = {"d/calib/calib_00.npy", "d/sample_0.npy", "x.npz:b[1]",
                            "m/test_data_set_2/input_0.pb", "other.npy"};
    enpu_dataset ds;
    fake_set(&ds, 5, names);
    int *lab = NULL, n = 0;
    enpu_err err = {0};
    /* NAME CLASS: a file, a suffix, an .npz member, a folder; comments */
    write_text(tmp_path("named.txt"), "# names\ncalib_00.npy 3\n\n  d/sample_0.npy   7  # ok\n"
                                      "b[1] 2\ntest_data_set_2 9\nunused.npy 1\n");
    if (enpu_labels_load(tmp_path("named.txt"), &ds, &lab, &n, &err)) fail_msg("%s", err.msg);
    int want[5] = {3, 7, 2, 9, -1};
    assert_memory_equal(lab, want, sizeof want);
    assert_int_equal(n, 4);
    free(lab);
    /* CLASS per line, over two files in order */
    write_text(tmp_path("i1.txt"), "4\n0\n");
    write_text(tmp_path("i2.txt"), "1\n11\n5\n");
    char spec[600];
    snprintf(spec, sizeof spec, "%s,%s", tmp_path("i1.txt"), tmp_path("i2.txt"));
    if (enpu_labels_load(spec, &ds, &lab, &n, &err)) fail_msg("%s", err.msg);
    int want2[5] = {4, 0, 1, 11, 5};
    assert_memory_equal(lab, want2, sizeof want2);
    assert_int_equal(n, 5);
    free(lab);

    enpu_err e;
    /* too few class indices; more are fine only for a truncated set */
    assert_int_equal(labels_err(tmp_path("i2.txt"), &ds, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "i2.txt: 3 class index(es) for 5 input set(s)"));
    enpu_dataset two;
    fake_set(&two, 2, names);
    assert_int_equal(labels_err(tmp_path("i2.txt"), &two, &e), ENPU_E_INVALID);
    two.truncated = true;
    assert_int_equal(enpu_labels_load(tmp_path("i2.txt"), &two, &lab, &n, &err), 0);
    assert_int_equal(lab[1], 11);
    free(lab);
    /* bad lines, named by file and line */
    write_text(tmp_path("bad1.txt"), "1\n2\nthree\n");
    assert_int_equal(labels_err(tmp_path("bad1.txt"), &ds, &e), ENPU_E_FORMAT);
    assert_non_null(strstr(e.msg, "bad1.txt: line 3: 'three' is not a class index"));
    write_text(tmp_path("bad2.txt"), "a.npy 1\n2\n");
    assert_int_equal(labels_err(tmp_path("bad2.txt"), &ds, &e), ENPU_E_FORMAT);
    assert_non_null(strstr(e.msg, "bad2.txt: line 2: mixes 'CLASS' and 'NAME CLASS' lines"));
    write_text(tmp_path("bad3.txt"), "a.npy -1\n");
    assert_int_equal(labels_err(tmp_path("bad3.txt"), &ds, &e), ENPU_E_FORMAT);
    assert_non_null(strstr(e.msg, "bad3.txt: line 1: '-1' is not a class index"));
    write_text(tmp_path("bad4.txt"), "# nothing\n\n");
    assert_int_equal(labels_err(tmp_path("bad4.txt"), &ds, &e), ENPU_E_FORMAT);
    assert_non_null(strstr(e.msg, "bad4.txt: no labels"));
    /* two classes for one input set */
    write_text(tmp_path("bad5.txt"), "sample_0.npy 1\nd/sample_0.npy 2\n");
    assert_int_equal(labels_err(tmp_path("bad5.txt"), &ds, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "input set 'd/sample_0.npy' has two labels"));
    /* names that match nothing */
    write_text(tmp_path("bad6.txt"), "nope.npy 1\n");
    assert_int_equal(labels_err(tmp_path("bad6.txt"), &ds, &e), ENPU_E_INVALID);
    assert_non_null(strstr(e.msg, "no entry names an input set"));
    snprintf(spec, sizeof spec, "%s,%s", tmp_path("i1.txt"), tmp_path("named.txt"));
    assert_int_equal(labels_err(spec, &ds, &e), ENPU_E_FORMAT);
    assert_int_equal(labels_err(tmp_path("missing.txt"), &ds, &e), ENPU_E_IO);
}

/* ---- the evaluation ----------------------------------------------------------------------- */

typedef struct kws {
    enpu_graph *g, *qg;
    enpu_dataset ds;
    int *labels;
} kws;

static void kws_setup(kws *k) {
    enpu_err err = {0};
    k->g = kws_graph();
    enpu_buf *cal = NULL;
    int n_cal = 0;
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    o.quiet = true;
    if (enpu_calib_load(k->g, "models/kws_cnn/calib", &cal, &n_cal, &err) ||
        enpu_quantize_graph(k->g, cal, n_cal, &o, &k->qg, NULL, &err) ||
        enpu_dataset_load(k->g, "models/kws_cnn/calib,models/kws_cnn", 0, &k->ds, &err))
        fail_msg("%s", err.msg);
    enpu_calib_free(cal, n_cal);
    int n = 0;
    if (enpu_labels_load("models/kws_cnn/calib_labels.txt,models/kws_cnn/sample_labels.txt", &k->ds,
                         &k->labels, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 36);
}

static void kws_free(kws *k) {
    free(k->labels);
    enpu_dataset_free(&k->ds);
    enpu_graph_free(k->qg);
    enpu_graph_free(k->g);
}

static void same_bits(double a, double b, const char *what, int i) {
    if (memcmp(&a, &b, sizeof a) != 0) fail_msg("%s %d: %.17g vs %.17g", what, i, a, b);
}

static void expect_same_result(const enpu_eval_result *a, const enpu_eval_result *b) {
    assert_int_equal(a->n_samples, b->n_samples);
    assert_int_equal(a->top1_float, b->top1_float);
    assert_int_equal(a->top1_int8, b->top1_int8);
    assert_int_equal(a->top5_int8, b->top5_int8);
    assert_int_equal(a->agree, b->agree);
    assert_int_equal(a->n_exact, b->n_exact);
    same_bits(a->sqnr_mean_db, b->sqnr_mean_db, "mean", 0);
    same_bits(a->sqnr_median_db, b->sqnr_median_db, "median", 0);
    same_bits(a->sqnr_worst_db, b->sqnr_worst_db, "worst", 0);
    for (int s = 0; s < a->n_samples; s++) {
        const enpu_eval_sample *x = &a->samples[s], *y = &b->samples[s];
        assert_memory_equal(x->top_int8, y->top_int8, sizeof x->top_int8);
        assert_memory_equal(x->top_float, y->top_float, sizeof x->top_float);
        same_bits(x->sqnr_db, y->sqnr_db, "sample sqnr", s);
        same_bits(x->max_abs_err, y->max_abs_err, "sample max err", s);
        assert_int_equal(x->label, y->label);
    }
    assert_int_equal(a->n_layers, b->n_layers);
    for (int i = 0; i < a->n_layers; i++) {
        const enpu_eval_layer *x = &a->layers[i], *y = &b->layers[i];
        same_bits(x->mean_db, y->mean_db, "layer mean", i);
        same_bits(x->worst_db, y->worst_db, "layer worst", i);
        same_bits(x->pooled_db, y->pooled_db, "layer pooled", i);
        same_bits(x->added_db, y->added_db, "layer added", i);
        assert_int_equal(x->worst_sample, y->worst_sample);
        assert_int_equal(x->n_exact, y->n_exact);
    }
}

static int progress_calls;
static void count_progress(void *ctx, int done, int total) {
    (void)ctx;
    assert_true(done >= 1 && done <= total);
    progress_calls++;
}

static void test_eval_threads(void **state) {
    (void)state;
    kws k;
    kws_setup(&k);
    enpu_err err = {0};
    enpu_eval_opts o;
    enpu_eval_opts_default(&o);
    o.threads = 1;
    o.progress = count_progress;
    enpu_eval_result one;
    if (enpu_eval_run(k.g, k.qg, &k.ds, k.labels, &o, &one, &err)) fail_msg("%s", err.msg);
    assert_int_equal(progress_calls, 36);
    assert_int_equal(one.threads, 1);
    /* the default model on its own 36 inputs: every label right, float and int8 agree */
    assert_true(one.classes);
    assert_int_equal(one.n_classes, 12);
    assert_int_equal(one.n_labelled, 36);
    assert_int_equal(one.top1_float, 36);
    assert_int_equal(one.top1_int8, 36);
    assert_int_equal(one.top5_int8, 36);
    assert_int_equal(one.agree, 36);
    assert_int_equal(one.n_layers, 1 + 7); /* the input, 4 convs, Flatten, 2 FCs */
    assert_string_equal(one.layers[0].op, "input");
    assert_string_equal(one.layers[5].op, "Flatten");
    assert_true(isinf(one.layers[5].added_db)); /* a move adds no noise */
    printf("kws_cnn on 36 inputs: output SQNR mean %.2f, median %.2f, worst %.2f dB\n",
           one.sqnr_mean_db, one.sqnr_median_db, one.sqnr_worst_db);
    assert_true(one.sqnr_worst_db > 40.0 && one.sqnr_mean_db > one.sqnr_worst_db);

    /* every per-input figure equals a direct run of the two references */
    enpu_fexec *fx = NULL;
    enpu_gexec *gx = NULL;
    assert_int_equal(enpu_fexec_new(k.g, &fx, &err), 0);
    assert_int_equal(enpu_gexec_new(k.qg, &gx, &err), 0);
    assert_int_equal(enpu_gexec_set_kernels(gx, ENPU_GK_REFERENCE, &err), 0);
    for (int s = 0; s < k.ds.n_samples; s += 7) {
        assert_int_equal(enpu_fexec_run(fx, &k.ds.bufs[s], &err), 0);
        assert_int_equal(enpu_gexec_run(gx, &k.ds.bufs[s], &err), 0);
        float q[12];
        assert_int_equal(enpu_gexec_value_f32(gx, k.qg->outputs[0], q, &err), 0);
        const float *f = enpu_fexec_value(fx, k.g->outputs[0]);
        double sig = 0, noi = 0;
        int bq = 0, bf = 0;
        for (int i = 0; i < 12; i++) {
            double d = (double)q[i] - f[i];
            sig += (double)f[i] * f[i];
            noi += d * d;
            if (q[i] > q[bq]) bq = i;
            if (f[i] > f[bf]) bf = i;
        }
        same_bits(one.samples[s].sqnr_db, 10.0 * log10(sig / noi), "direct sqnr", s);
        assert_int_equal(one.samples[s].top_int8[0], bq);
        assert_int_equal(one.samples[s].top_float[0], bf);
        assert_int_equal(one.samples[s].label, k.labels[s]);
    }
    enpu_fexec_free(fx);
    enpu_gexec_free(gx);

    /* more threads (more than there are CPUs), other kernels: the same bits */
    const int threads[3] = {2, 7, 3};
    const enpu_gexec_kernels kern[3] = {ENPU_GK_FAST, ENPU_GK_FAST, ENPU_GK_REFERENCE};
    for (int t = 0; t < 3; t++) {
        o.threads = threads[t];
        o.kernels = kern[t];
        o.progress = NULL;
        enpu_eval_result r;
        if (enpu_eval_run(k.g, k.qg, &k.ds, k.labels, &o, &r, &err)) fail_msg("%s", err.msg);
        assert_int_equal(r.threads, threads[t]);
        assert_string_equal(r.kernels, kern[t] == ENPU_GK_REFERENCE ? "reference"
                                                                    : one.kernels);
        expect_same_result(&one, &r);
        enpu_eval_result_free(&r);
    }
    /* int8 alone (a .qjson has no float graph) */
    o.threads = 2;
    enpu_eval_result q8;
    assert_int_equal(enpu_eval_run(NULL, k.qg, &k.ds, k.labels, &o, &q8, &err), 0);
    assert_false(q8.have_float);
    assert_int_equal(q8.top1_int8, 36);
    assert_int_equal(q8.agree, 0);
    assert_true(isnan(q8.sqnr_mean_db));
    assert_false(q8.layers[1].compared);
    enpu_eval_result_free(&q8);
    enpu_eval_result_free(&one);
    kws_free(&k);
}

static void test_eval_errors(void **state) {
    (void)state;
    kws k;
    kws_setup(&k);
    enpu_err err = {0};
    enpu_eval_result r;
    k.labels[5] = 12;
    assert_int_equal(enpu_eval_run(k.g, k.qg, &k.ds, k.labels, NULL, &r, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "input set 5 (models/kws_cnn/calib/calib_05.npy): label 12 is "
                                    "outside the 12 classes of output 'logits'"));
    enpu_eval_opts o;
    enpu_eval_opts_default(&o);
    o.threads = ENPU_EVAL_MAX_THREADS + 1;
    memset(&err, 0, sizeof err);
    assert_int_equal(enpu_eval_run(k.g, k.qg, &k.ds, NULL, &o, &r, &err), ENPU_E_USAGE);
    /* an input set of the wrong shape fails in its worker, named */
    o.threads = 2;
    enpu_buf keep = k.ds.bufs[9];
    enpu_buf wrong;
    int64_t d[4] = {1, 1, 26, 48};
    assert_int_equal(enpu_buf_alloc(&wrong, ENPU_DT_FLOAT32, 4, d, &err), 0);
    k.ds.bufs[9] = wrong;
    memset(&err, 0, sizeof err);
    assert_int_equal(enpu_eval_run(k.g, k.qg, &k.ds, NULL, &o, &r, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "input set 9 (models/kws_cnn/calib/calib_09.npy)"));
    assert_null(r.samples);
    k.ds.bufs[9] = keep;
    enpu_buf_free(&wrong);
    kws_free(&k);
}

/* A tie at the top is no decision: [x0, x0, x2] through a Relu, where the
 * first two classes are equal in float and in int8, counts neither as
 * agreement nor as a right top-1, whatever the label; top-5 still counts. */
static void test_eval_ties(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_graph *g = enpu_graph_new("tie");
    int64_t d[2] = {1, 3};
    int x = enpu_graph_add_tensor(g, "x", ENPU_DT_FLOAT32, 2, d, &err), y;
    assert_int_equal(enpu_graph_add_input(g, x, &err), 0);
    y = enpu_graph_add_tensor(g, "y", ENPU_DT_FLOAT32, -1, NULL, &err);
    assert_true(enpu_graph_add_node(g, "relu", ENPU_OP_RELU, 1, &x, 1, &y, &err) >= 0);
    assert_int_equal(enpu_graph_add_output(g, y, &err), 0);
    assert_int_equal(enpu_graph_infer_shapes(g, &err), 0);
    enpu_dataset ds = {0};
    const float v[3][3] = {{2, 2, 1}, {1, 2, 3}, {3, 1, 0}};
    static char n0[] = "tie", n1[] = "two", n2[] = "zero";
    char *names[3] = {n0, n1, n2};
    ds.n_samples = 3;
    ds.n_inputs = 1;
    ds.names = names;
    ds.bufs = calloc(3, sizeof *ds.bufs);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(enpu_buf_alloc(&ds.bufs[i], ENPU_DT_FLOAT32, 2, d, &err), 0);
        memcpy(ds.bufs[i].data, v[i], sizeof v[i]);
    }
    enpu_quant_opts o;
    enpu_quant_opts_default(&o);
    o.quiet = true;
    enpu_graph *qg = NULL;
    assert_int_equal(enpu_quantize_graph(g, ds.bufs, 3, &o, &qg, NULL, &err), 0);
    int labels[3] = {0, 2, 0};
    enpu_eval_result r;
    if (enpu_eval_run(g, qg, &ds, labels, NULL, &r, &err)) fail_msg("%s", err.msg);
    assert_true(r.samples[0].tie_float && r.samples[0].tie_int8);
    assert_false(r.samples[1].tie_int8);
    assert_int_equal(r.ties_float, 1);
    assert_int_equal(r.ties_int8, 1);
    assert_int_equal(r.agree, 2);      /* not the tie */
    assert_int_equal(r.top1_float, 2); /* label 0 is one of the tied best: not counted */
    assert_int_equal(r.top1_int8, 2);
    assert_int_equal(r.top5_int8, 3);
    enpu_eval_result_free(&r);
    for (int i = 0; i < 3; i++) enpu_buf_free(&ds.bufs[i]);
    free(ds.bufs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/enpu_eval_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npz),          cmocka_unit_test(test_dataset_forms),
        cmocka_unit_test(test_labels),       cmocka_unit_test(test_eval_threads),
        cmocka_unit_test(test_eval_errors),  cmocka_unit_test(test_eval_ties),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
