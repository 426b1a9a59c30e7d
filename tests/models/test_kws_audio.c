/* Keyword spotting from sound with the MLPerf Tiny DS-CNN
 * (kws_ref_model.tflite; docs/audio.md): the figures the docs give.
 *
 * shared: `easynpu run --wav` on the committed clips (the class heard, the
 * cycles with the front end), `easynpu listen` on the committed recording
 * (every keyword found once, at a time whose window holds the word; duty
 * cycle and energy per second of audio);
 * long-shared: top-1 accuracy on the synthesized set
 * (scripts/make_kws_speech.sh, 360 clips made at test time), per keyword
 * and per voice, the model on the NPU (cycle mode) with its output equal
 * to the golden reference's on every clip. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"
#include "easynpu/quant.h"
#include "easynpu/tflite.h"

#define MODEL "mlperf-tiny-int8/kws_ref_model.tflite"

/* The input tensor's parameters tests/unit/test_audio.c and
 * scripts/kws_features_ref.py quantize with. */
static void test_model_input(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model(MODEL);
    assert_non_null(m);
    enpu_graph *g;
    enpu_err err = {0};
    assert_int_equal(enpu_tflite_load(m, &g, &err), 0);
    const enpu_tensor *t = &g->tensors[g->inputs[0]];
    assert_true(t->quant->scale[0] == 0.584702909f);
    assert_int_equal(t->quant->zero_point[0], 83);
    enpu_graph_free(g);
}

static char *run_cli(const char *args, int want_status) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    int st = enpu_test_run(cmd, &out);
    if (st != want_status) fail_msg("%s: exit %d\n%s", cmd, st, out);
    return out;
}

static void test_run_wav(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model(MODEL);
    static const char *const clips[][2] = {{"yes_en-us", "yes"},   {"left_en-gb", "left"},
                                           {"right_en-us-f3", "right"}, {"no_en-029", "no"},
                                           {"silence", "silence"},  {"yes_en-us_22k", "yes"}};
    for (int i = 0; i < 6; i++) {
        char args[512], heard[64];
        snprintf(args, sizeof args, "run %s --wav tests/audio/%s.wav", m, clips[i][0]);
        char *out = run_cli(args, 0);
        snprintf(heard, sizeof heard, "\nheard: %s ", clips[i][1]);
        if (!strstr(out, heard)) fail_msg("%s: not heard as '%s':\n%s", clips[i][0], clips[i][1], out);
        assert_non_null(strstr(out, "bit-exact: yes (12 layer outputs and 1 model output(s)"));
        assert_non_null(strstr(out, "168322 cycles = 1683.220 us at 100 MHz"));
        assert_non_null(strstr(out, "front end 'mlperf-tiny-kws' on the host CPU (400 MHz): 1284238 host "
                                    "cycles = 3210.6 us = 321060 NPU cycles"));
        assert_non_null(strstr(out, "with the front end: 489382 cycles = 4893.820 us at 100 MHz"));
        if (i == 5)
            assert_non_null(strstr(out, "note: tests/audio/yes_en-us_22k.wav is 22050 Hz; resampled to "
                                        "the front end's 16000 Hz"));
        free(out);
    }
}

/* The recording's words (tests/audio/long.tsv) each detected once, with
 * the right name, by a window that holds part of the word. */
static void test_listen(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model(MODEL);
    char json[256], args[768];
    snprintf(json, sizeof json, "%s/listen_long.json", ENPU_BINARY_DIR);
    snprintf(args, sizeof args, "listen %s --wav tests/audio/long.wav --json %s", m, json);
    char *out = run_cli(args, 0);
    printf("%s", out);
    free(out);
    json_error_t je;
    json_t *o = json_load_file(json, 0, &je);
    assert_non_null(o);
    static const struct { const char *w; double a, b; } words[] = {
        {"yes", 1.000, 1.420}, {"left", 2.720, 3.166}, {"right", 4.466, 4.848}, {"no", 6.148, 6.544}};
    json_t *d = json_object_get(o, "detections");
    assert_int_equal(json_array_size(d), 4);
    for (int i = 0; i < 4; i++) {
        json_t *e = json_array_get(d, (size_t)i);
        double t = json_real_value(json_object_get(e, "time_s"));
        assert_string_equal(json_string_value(json_object_get(e, "label")), words[i].w);
        if (!(t > words[i].a && t - 1.0 < words[i].b))
            fail_msg("'%s' detected at %.3f s: its window does not hold the word (%.3f-%.3f s)", words[i].w,
                     t, words[i].a, words[i].b);
    }
    assert_int_equal(json_integer_value(json_object_get(o, "windows")), 343);
    assert_int_equal(json_integer_value(json_object_get(o, "cycles_per_inference")), 168322);
    assert_true(json_real_value(json_object_get(o, "inferences_per_audio_s")) == 50.0);
    assert_true(fabs(json_real_value(json_object_get(o, "duty_cycle")) - 0.0841610) < 1e-12);
    double e = json_real_value(json_object_get(o, "energy_uj_per_inference"));
    assert_true(fabs(e - 9.393) < 5e-4);
    assert_true(fabs(json_real_value(json_object_get(o, "energy_uj_per_audio_s")) - 50 * e) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(o, "frontend_host_cycles_per_inference")), 149302);
    json_decref(o);
    remove(json);
}

/* ---- the synthesized set (long tier) ---------------------------------------------- */

#define MAX_VOICES 8
static const char *const WORDS[12] = {"down", "go", "left", "no", "off", "on", "right", "stop",
                                      "up", "yes", "silence", "unknown"};
static const char *const VOICES[] = {"en-us", "en-us+f3", "en-gb", "en-gb+f2", "en-gb-scotland", "en-029"};

static void test_synthesized_set(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model(MODEL);
    char dir[400], cmd[1024];
    snprintf(dir, sizeof dir, "%s/kws_speech", ENPU_BINARY_DIR);
    snprintf(cmd, sizeof cmd, "rm -rf %s && sh scripts/make_kws_speech.sh set %s", dir, dir);
    char *out = NULL;
    if (enpu_test_run(cmd, &out) != 0) fail_msg("%s:\n%s", cmd, out);
    free(out);
    enpu_err err = {0};
    enpu_graph *g;
    assert_int_equal(enpu_tflite_load(m, &g, &err), 0);
    enpu_arch arch = enpu_test_preset("easynpu");
    arch.requant = ENPU_REQUANT_TFLITE;
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    enpu_program p;
    enpu_program_init(&p, &arch);
    assert_int_equal(enpu_compile(g, &arch, &co, &p, NULL, &err), 0);
    enpu_sim *sim;
    assert_int_equal(enpu_sim_new(&p, &arch, NULL, &sim, &err), 0);
    enpu_gexec *gx;
    assert_int_equal(enpu_gexec_new(g, &gx, &err), 0);
    enpu_frontend *f;
    assert_int_equal(enpu_frontend_new(enpu_frontend_default(), &f, &err), 0);
    const enpu_tensor *ti = &g->tensors[g->inputs[0]];
    int right[12][MAX_VOICES] = {{0}}, total[12][MAX_VOICES] = {{0}}, ties = 0, clips = 0;
    char path[1536], line[512];
    snprintf(path, sizeof path, "%s/set.tsv", dir);
    FILE *tsv = fopen(path, "r");
    assert_non_null(tsv);
    assert_non_null(fgets(line, sizeof line, tsv));
    while (fgets(line, sizeof line, tsv)) {
        char file[256], word[64], voice[64];
        int label, speed, pitch, v = -1;
        assert_int_equal(sscanf(line, "%255s %63s %d %63s %d %d", file, word, &label, voice, &speed, &pitch), 6);
        for (int k = 0; k < 6; k++)
            if (strcmp(voice, VOICES[k]) == 0) v = k;
        assert_true(v >= 0 && label >= 0 && label < 12);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        enpu_audio a;
        if (enpu_wav_read(path, &a, &err)) fail_msg("%s", err.msg);
        double feat[490];
        int8_t q[490], qi[490];
        enpu_frontend_features(f, a.x, a.n, feat);
        enpu_audio_free(&a);
        enpu_features_quantize(feat, 490, ti->quant->scale[0], ti->quant->zero_point[0], q);
        enpu_tflite_to_ir(ti, q, qi);
        const int8_t *ins[1] = {qi};
        enpu_sim_result res;
        memset(&res, 0, sizeof res);
        assert_int_equal(enpu_gexec_run_i8(gx, ins, &err), 0);
        assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &res, &err), 0);
        const int8_t *gold = enpu_gexec_value_i8(gx, g->outputs[0]);
        const int8_t *npu = res.raw_outputs[0].data;
        assert_memory_equal(gold, npu, 12);
        int best = 0, n_best = 1;
        for (int c = 1; c < 12; c++) {
            if (npu[c] > npu[best]) best = c, n_best = 1;
            else if (npu[c] == npu[best]) n_best++;
        }
        enpu_sim_result_free(&res);
        /* a tie at the top is no answer */
        ties += n_best > 1;
        right[label][v] += n_best == 1 && best == label;
        total[label][v]++;
        clips++;
    }
    fclose(tsv);
    /* the table of docs/audio.md */
    printf("%-8s", "word");
    for (int v = 0; v < 6; v++) printf(" %14s", VOICES[v]);
    printf("    all\n");
    int col[6] = {0}, coln[6] = {0}, all = 0, kw = 0;
    int by_word[12];
    for (int w = 0; w < 12; w++) {
        int r = 0, t = 0;
        printf("%-8s", WORDS[w]);
        for (int v = 0; v < 6; v++) {
            printf(" %11d/%-2d", right[w][v], total[w][v]);
            r += right[w][v], t += total[w][v];
            if (w < 10) col[v] += right[w][v], coln[v] += total[w][v];
        }
        printf(" %3d/%d\n", r, t);
        by_word[w] = r;
        all += r;
        if (w < 10) kw += r;
    }
    printf("%-8s", "keywords");
    for (int v = 0; v < 6; v++) printf(" %11d/%-2d", col[v], coln[v]);
    printf(" %3d/240\nall %d/%d clips right, %d ties at the top\n", kw, all, clips, ties);
    assert_int_equal(clips, 360);
    static const int want_word[12] = {20, 14, 20, 17, 24, 24, 24, 15, 20, 20, 24, 92};
    static const int want_voice[6] = {36, 37, 36, 36, 29, 24};
    for (int w = 0; w < 12; w++) assert_int_equal(by_word[w], want_word[w]);
    for (int v = 0; v < 6; v++) assert_int_equal(col[v], want_voice[v]);
    assert_int_equal(kw, 198);
    assert_int_equal(all, 314);
    assert_int_equal(ties, 1);
    enpu_frontend_free(f);
    enpu_gexec_free(gx);
    enpu_sim_free(sim);
    enpu_program_free(&p);
    enpu_graph_free(g);
}

int main(int argc, char **argv) {
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_model_input),
        cmocka_unit_test(test_run_wav),
        cmocka_unit_test(test_listen),
    };
    const struct CMUnitTest long_shared[] = {
        cmocka_unit_test(test_synthesized_set),
    };
    return ENPU_TEST_MAIN_TIERS(argc, argv, ENPU_NO_TESTS, shared, ENPU_NO_TESTS, long_shared);
}
