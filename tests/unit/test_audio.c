/* The audio front end (docs/audio.md): the C features against an
 * independent numpy implementation (scripts/kws_features_ref.py, whose
 * output is committed in tests/audio/ref/, so no Python is needed here),
 * float within 1e-5 relative and int8 equal except at rounding ties,
 * counted; a stream's windows equal the clip path bit for bit; the
 * resampler; the host cost; micro_speech's recognizer by hand; class
 * names.  The WAV reader's bad inputs are in tests/bad/test_bad_wav.c. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "easynpu/audio.h"
#include "easynpu/file.h"
#include "easynpu/tensor_io.h"

/* kws_ref_model.tflite's input (the models test checks the model has them) */
#define KWS_SCALE 0.584702909f
#define KWS_ZP 83

static const char *const CLIPS[] = {"yes_en-us", "left_en-gb", "right_en-us-f3", "no_en-029", "silence"};
#define N_CLIPS 5

typedef struct agreement {
    double max_rel;      /* max |c - n| / |n| over elements with |n| >= 1e-3 */
    double max_abs;      /* max |c - n| */
    int64_t elems, int8_diff, ties;
} agreement;

/* c (C front end) against n (numpy, float64) and q (numpy's int8): every
 * int8 difference must be a rounding tie of numpy's value (within 1e-6 of
 * .5 after the scale), counted. */
static void compare(const double *c, const double *n, const int8_t *q, int64_t count, agreement *a) {
    int8_t mine[4096];
    for (int64_t off = 0; off < count; off += 490) {
        int64_t len = count - off < 490 ? count - off : 490;
        enpu_features_quantize(c + off, len, KWS_SCALE, KWS_ZP, mine);
        for (int64_t i = 0; i < len; i++) {
            double d = fabs(c[off + i] - n[off + i]);
            if (d > a->max_abs) a->max_abs = d;
            if (fabs(n[off + i]) >= 1e-3 && d / fabs(n[off + i]) > a->max_rel)
                a->max_rel = d / fabs(n[off + i]);
            /* 1e-5 relative, or 1e-9 absolute near 0 */
            if (d > 1e-5 * fabs(n[off + i]) + 1e-9)
                fail_msg("element %lld: C %.17g numpy %.17g", (long long)(off + i), c[off + i], n[off + i]);
            if (mine[i] != q[off + i]) {
                double v = n[off + i] / (double)KWS_SCALE;
                double frac = v - floor(v);
                if (fabs(frac - 0.5) > 1e-6)
                    fail_msg("element %lld: int8 %d vs numpy %d, not a tie (%.9f)", (long long)(off + i),
                             mine[i], q[off + i], v);
                a->ties++;
                a->int8_diff++;
            }
        }
    }
    a->elems += count;
}

static enpu_buf load_npy(const char *name, const char *kind) {
    char path[256];
    snprintf(path, sizeof path, "tests/audio/ref/%s.%s.npy", name, kind);
    enpu_buf b;
    enpu_err err = {0};
    if (enpu_tensor_read(path, &b, &err)) fail_msg("%s", err.msg);
    return b;
}

static enpu_audio load_wav(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "tests/audio/%s.wav", name);
    enpu_audio a;
    enpu_err err = {0};
    if (enpu_wav_read(path, &a, &err)) fail_msg("%s", err.msg);
    return a;
}

static void test_clips_equal_numpy(void **state) {
    (void)state;
    enpu_frontend *f;
    enpu_err err = {0};
    assert_int_equal(enpu_frontend_new(enpu_frontend_find("mlperf-tiny-kws"), &f, &err), 0);
    agreement ag = {0};
    for (int k = 0; k < N_CLIPS; k++) {
        enpu_audio a = load_wav(CLIPS[k]);
        assert_int_equal(a.rate, 16000);
        assert_int_equal(a.n, 16000);
        double feat[490];
        enpu_frontend_features(f, a.x, a.n, feat);
        enpu_buf n = load_npy(CLIPS[k], "mfcc"), q = load_npy(CLIPS[k], "int8");
        assert_int_equal(n.dtype, ENPU_DT_FLOAT64);
        assert_int_equal(q.dtype, ENPU_DT_INT8);
        assert_int_equal(enpu_buf_numel(&n), 490);
        compare(feat, n.data, q.data, 490, &ag);
        enpu_buf_free(&n);
        enpu_buf_free(&q);
        enpu_audio_free(&a);
    }
    enpu_frontend_free(f);
    printf("5 clips, %lld features: max relative difference %.3g, max absolute %.3g; int8: %lld "
           "differ, all at ties\n", (long long)ag.elems, ag.max_rel, ag.max_abs, (long long)ag.int8_diff);
    assert_int_equal(ag.elems, 2450);
    assert_int_equal(ag.int8_diff, 0);
    assert_true(ag.max_rel < 1e-9);
}

/* long.wav as a stream at a hop of 200 ms: every window against numpy's
 * features of that clip, and against the clip path bit for bit. */
static void test_stream_equals_numpy_and_clips(void **state) {
    (void)state;
    enpu_frontend *f;
    enpu_err err = {0};
    assert_int_equal(enpu_frontend_new(enpu_frontend_default(), &f, &err), 0);
    enpu_audio a = load_wav("long");
    assert_int_equal(a.n, 125497);
    enpu_feature_stream *s;
    assert_int_equal(enpu_feature_stream_new(f, &a, 3200, &s, &err), 0);
    assert_int_equal(enpu_feature_stream_windows(s), 35);
    assert_int_equal(enpu_feature_stream_frames(s), 391);
    enpu_buf n = load_npy("long", "mfcc"), q = load_npy("long", "int8");
    assert_int_equal(n.rank, 3);
    assert_int_equal(n.dims[0], 35);
    static double all[35 * 490];
    for (int64_t w = 0; w < 35; w++) {
        int64_t start;
        double clip[490];
        enpu_feature_stream_window(s, w, &all[w * 490], &start);
        assert_int_equal(start, w * 3200);
        enpu_frontend_features(f, a.x + start, a.n - start, clip);
        assert_memory_equal(clip, &all[w * 490], sizeof clip);
    }
    agreement ag = {0};
    compare(all, n.data, q.data, 35 * 490, &ag);
    printf("long.wav, 35 windows, %lld features: max relative difference %.3g; int8: %lld differ, all "
           "at ties\n", (long long)ag.elems, ag.max_rel, (long long)ag.int8_diff);
    assert_int_equal(ag.int8_diff, 0);
    /* a hop that is no multiple of the stride */
    enpu_feature_stream *bad;
    assert_int_equal(enpu_feature_stream_new(f, &a, 100, &bad, &err), ENPU_E_USAGE);
    assert_non_null(strstr(err.msg, "multiple of the front end's stride (320 samples)"));
    enpu_buf_free(&n);
    enpu_buf_free(&q);
    enpu_feature_stream_free(s);
    enpu_audio_free(&a);
    enpu_frontend_free(f);
}

/* Short recordings are zero-padded; digital silence takes scale 1 (where
 * TensorFlow divides 0 by 0); a negative peak normalizes by its size. */
static void test_padding_and_silence(void **state) {
    (void)state;
    enpu_frontend *f;
    enpu_err err = {0};
    assert_int_equal(enpu_frontend_new(enpu_frontend_default(), &f, &err), 0);
    enpu_audio a = load_wav("yes_en-us");
    double full[490], part[490], padded[490];
    float *x = calloc(16000, sizeof *x);
    memcpy(x, a.x, 8000 * sizeof *x);
    enpu_frontend_features(f, a.x, 8000, part);
    enpu_frontend_features(f, x, 16000, padded);
    assert_memory_equal(part, padded, sizeof part);
    /* the stream of a short recording: one window, the same features */
    enpu_audio half = {.rate = 16000, .n = 8000, .x = a.x};
    enpu_feature_stream *s;
    int64_t start;
    assert_int_equal(enpu_feature_stream_new(f, &half, 320, &s, &err), 0);
    assert_int_equal(enpu_feature_stream_windows(s), 1);
    enpu_feature_stream_window(s, 0, full, &start);
    assert_memory_equal(full, part, sizeof part);
    enpu_feature_stream_free(s);
    /* digital silence: log(1e-6) in every band; c0 = 40 log(1e-6) sqrt(2/40) */
    memset(x, 0, 16000 * sizeof *x);
    enpu_frontend_features(f, x, 16000, full);
    assert_true(fabs(full[0] - 40.0 * log(1e-6) * sqrt(2.0 / 40.0)) < 1e-9);
    assert_true(fabs(full[1]) < 1e-9);
    int8_t q[490];
    /* c0: round(-123.57 / 0.5847) + 83 = -211 + 83, the bottom of int8 */
    assert_int_equal(enpu_features_quantize(full, 490, KWS_SCALE, KWS_ZP, q), 0);
    assert_int_equal(q[0], -128);
    assert_int_equal(q[1], KWS_ZP);
    /* a clip whose largest sample is negative is divided by it as
     * TensorFlow does: the magnitudes see its size */
    for (int i = 0; i < 16000; i++) x[i] = -64.0f;
    x[100] = -32.0f;
    enpu_frontend_features(f, x, 16000, full);
    for (int i = 0; i < 16000; i++) x[i] = x[i] / 32.0f;
    enpu_frontend_features(f, x, 16000, part); /* peak -1: scale 1 */
    for (int i = 0; i < 490; i++) assert_true(fabs(full[i] - part[i]) <= 1e-9 * fabs(part[i]) + 1e-12);
    free(x);
    enpu_audio_free(&a);
    enpu_frontend_free(f);
}

/* The 22,050 Hz copy of yes_en-us (sox) resampled back: 16,000 samples,
 * features close to the original's. */
static void test_resample(void **state) {
    (void)state;
    enpu_audio a22 = load_wav("yes_en-us_22k"), a = load_wav("yes_en-us"), r;
    enpu_err err = {0};
    assert_int_equal(a22.rate, 22050);
    assert_int_equal(a22.n, 22050);
    assert_int_equal(enpu_audio_resample(&a22, 16000, &r, &err), 0);
    assert_int_equal(r.rate, 16000);
    assert_int_equal(r.n, 16000);
    enpu_frontend *f;
    assert_int_equal(enpu_frontend_new(enpu_frontend_default(), &f, &err), 0);
    double f0[490], f1[490];
    enpu_frontend_features(f, a.x, a.n, f0);
    enpu_frontend_features(f, r.x, r.n, f1);
    double worst = 0;
    for (int i = 0; i < 490; i++) worst = fmax(worst, fabs(f0[i] - f1[i]));
    printf("22,050 -> 16,000 Hz: features within %.3f of the original's\n", worst);
    assert_true(worst < 0.5);
    enpu_audio same;
    assert_int_equal(enpu_audio_resample(&a, 16000, &same, &err), 0);
    assert_memory_equal(same.x, a.x, 16000 * sizeof(float));
    enpu_audio_free(&same);
    enpu_frontend_free(f);
    enpu_audio_free(&r);
    enpu_audio_free(&a);
    enpu_audio_free(&a22);
}

static void test_description_and_cost(void **state) {
    (void)state;
    const enpu_frontend_desc *d = enpu_frontend_find("mlperf-tiny-kws");
    assert_ptr_equal(d, enpu_frontend_default());
    assert_null(enpu_frontend_find("micro-speech"));
    assert_int_equal(d->sample_rate, 16000);
    assert_int_equal(d->window_samples, 480);
    assert_int_equal(d->stride_samples, 320);
    assert_int_equal(d->fft_length, 512);
    assert_int_equal(d->n_mel, 40);
    assert_int_equal(d->n_coeffs, 10);
    assert_int_equal(d->n_frames, 49);
    assert_string_equal(d->labels[9], "yes");
    assert_string_equal(d->labels[d->silence_label], "silence");
    assert_string_equal(d->labels[d->unknown_label], "unknown");
    /* the host time of one clip on the default preset (docs/audio.md) */
    enpu_arch a = enpu_test_preset("easynpu");
    enpu_frontend_cost c;
    enpu_frontend_host_cost(d, &a, 49, 1, 16000, &c);
    assert_int_equal(c.host_cycles, 1284238);
    assert_int_equal(c.npu_cycles, 321060);
    /* listening: one new frame, one clip, the peaks of one hop and 50 blocks */
    enpu_frontend_host_cost(d, &a, 1, 1, 320 + 50, &c);
    assert_int_equal(c.host_cycles, 149302);
}

static void test_recognizer(void **state) {
    (void)state;
    enpu_recognizer_opts o;
    enpu_recognizer_opts_default(&o);
    assert_int_equal(o.average_ms, 1000);
    assert_int_equal(o.threshold, 200);
    assert_int_equal(o.suppression_ms, 1500);
    assert_int_equal(o.min_count, 3);
    enpu_recognizer *r;
    enpu_err err = {0};
    assert_int_equal(enpu_recognizer_new(&o, 3, 0, &r, &err), 0);
    int8_t yes[3] = {-128, 127, -128}, sil[3] = {127, -128, -128}, half[3] = {-128, 0, -128};
    enpu_recognition x;
    /* too few results, then too short a span (< 250 ms) */
    assert_int_equal(enpu_recognizer_push(r, 0, yes, &x, &err), 0);
    assert_false(x.is_new);
    assert_int_equal(x.score, 0);
    enpu_recognizer_push(r, 100, yes, &x, &err);
    enpu_recognizer_push(r, 200, yes, &x, &err);
    assert_false(x.is_new); /* 200 ms < 250 */
    enpu_recognizer_push(r, 300, yes, &x, &err);
    assert_true(x.is_new);
    assert_int_equal(x.top, 1);
    assert_int_equal(x.score, 255);
    /* the same class again: suppressed until 1500 ms have passed */
    enpu_recognizer_push(r, 1000, yes, &x, &err);
    assert_false(x.is_new);
    enpu_recognizer_push(r, 1500, yes, &x, &err);
    assert_false(x.is_new); /* the window [500, 1500] holds 2 results */
    enpu_recognizer_push(r, 1801, yes, &x, &err);
    assert_true(x.is_new); /* 1000, 1500, 1801; 1501 ms after the last */
    enpu_recognizer_push(r, 2000, yes, &x, &err);
    assert_false(x.is_new);
    /* the average, integer division: (255 + 255 + 128) / 3 = 212 over 1801, 2000, 2700 */
    enpu_recognizer_push(r, 2700, half, &x, &err);
    assert_int_equal(x.top, 1);
    assert_int_equal(x.score, 212);
    assert_false(x.is_new);
    /* silence in between resets the suppression */
    enpu_recognizer_push(r, 4000, sil, &x, &err);
    enpu_recognizer_push(r, 4200, sil, &x, &err);
    enpu_recognizer_push(r, 4300, sil, &x, &err);
    assert_true(x.is_new);
    assert_int_equal(x.top, 0);
    enpu_recognizer_push(r, 5400, yes, &x, &err);
    enpu_recognizer_push(r, 5500, yes, &x, &err);
    enpu_recognizer_push(r, 5700, yes, &x, &err);
    assert_true(x.is_new);
    assert_int_equal(x.top, 1);
    /* time going back */
    assert_int_equal(enpu_recognizer_push(r, 5000, yes, &x, &err), ENPU_E_USAGE);
    enpu_recognizer_free(r);
    o.threshold = 300;
    assert_int_equal(enpu_recognizer_new(&o, 3, 0, &r, &err), ENPU_E_USAGE);
}

static void test_labels(void **state) {
    (void)state;
    char path[] = "/tmp/enpu_labels_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# MLPerf order\n  down \n\ngo\r\n", f);
    fclose(f);
    char **v;
    int n;
    enpu_err err = {0};
    assert_int_equal(enpu_labels_read(path, &v, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(v[0], "down");
    assert_string_equal(v[1], "go");
    free(v);
    f = fopen(path, "w");
    for (int i = 0; i < 40; i++) fprintf(f, "c%d\n", i);
    fclose(f);
    assert_int_equal(enpu_labels_read(path, &v, &n, &err), ENPU_E_LIMIT);
    assert_non_null(strstr(err.msg, "line 33: more than 32 class names"));
    remove(path);
}

static void test_wav_roundtrip(void **state) {
    (void)state;
    enpu_audio a = load_wav("no_en-029"), b;
    enpu_err err = {0};
    char path[] = "/tmp/enpu_wav_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(enpu_wav_write(path, a.x, a.n, a.rate, &err), 0);
    assert_int_equal(enpu_wav_read(path, &b, &err), 0);
    assert_int_equal(b.n, a.n);
    assert_memory_equal(a.x, b.x, (size_t)a.n * sizeof(float));
    /* the file is byte for byte sox's */
    uint8_t *x, *y;
    size_t nx, ny;
    assert_int_equal(enpu_file_read(path, 1 << 20, &x, &nx, &err), 0);
    assert_int_equal(enpu_file_read("tests/audio/no_en-029.wav", 1 << 20, &y, &ny, &err), 0);
    assert_int_equal(nx, ny);
    assert_memory_equal(x, y, nx);
    free(x);
    free(y);
    remove(path);
    enpu_audio_free(&a);
    enpu_audio_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clips_equal_numpy),
        cmocka_unit_test(test_stream_equals_numpy_and_clips),
        cmocka_unit_test(test_padding_and_silence),
        cmocka_unit_test(test_resample),
        cmocka_unit_test(test_description_and_cost),
        cmocka_unit_test(test_recognizer),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_wav_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
