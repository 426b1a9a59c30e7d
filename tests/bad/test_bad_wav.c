/* Bad WAV files (docs/audio.md "Bad input", docs/hardening.md): each of
 * tests/bad/wav/ (tests/bad/make_bad_wav.sh: from tests/audio/yes_en-us.wav
 * with sox, cut and patched) is refused by the reader with
 * its category and one line naming the file, and by `easynpu run --wav`
 * and `easynpu listen` with exit status 2 and that one line, before any
 * model work; the committed WAVs truncated and bit-flipped are accepted or
 * refused cleanly, never read out of bounds (ASan). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"
#include "easynpu/file.h"

typedef struct bad_case {
    const char *file;
    enpu_status code;
    const char *substring;
} bad_case;

static const bad_case CASES[] = {
    {"stereo.wav", ENPU_E_UNSUPPORTED, "2 channels; mono expected; convert it with: sox IN.wav -c 1"},
    {"8bit.wav", ENPU_E_UNSUPPORTED, "8-bit samples; 16-bit PCM expected"},
    {"24bit.wav", ENPU_E_UNSUPPORTED, "24-bit samples; 16-bit PCM expected"},
    {"float.wav", ENPU_E_UNSUPPORTED, "floating-point samples"},
    {"alaw.wav", ENPU_E_UNSUPPORTED, "format tag 6 is not PCM (1)"},
    {"truncated.wav", ENPU_E_FORMAT, "truncated: the \"data\" chunk declares 1600 bytes, the file has 956"},
    {"empty.wav", ENPU_E_FORMAT, "empty file, not a WAV"},
    {"not_a_wav.wav", ENPU_E_FORMAT, "not a WAV file (no RIFF/WAVE header)"},
    {"no_samples.wav", ENPU_E_INVALID, "no samples (empty \"data\" chunk)"},
    {"rate_500.wav", ENPU_E_INVALID, "sample rate 500 Hz outside 1000..384000"},
};
#define N_CASES (sizeof CASES / sizeof CASES[0])

static void test_reader_refuses(void **state) {
    (void)state;
    for (size_t i = 0; i < N_CASES; i++) {
        char path[128];
        snprintf(path, sizeof path, "tests/bad/wav/%s", CASES[i].file);
        enpu_audio a;
        enpu_err err = {0};
        int rc = enpu_wav_read(path, &a, &err);
        if (rc != (int)CASES[i].code || !strstr(err.msg, CASES[i].substring) || !strstr(err.msg, path))
            fail_msg("%s: got [%s] %s", path, enpu_status_name(err.code), err.msg);
        assert_null(a.x);
        assert_int_equal(a.n, 0);
    }
}

/* The real binary: one line on stderr, exit 2, for run --wav (the WAV is
 * read before the model, so the repository's default model serves) and
 * listen. */
static void test_cli_refuses(void **state) {
    (void)state;
    for (size_t i = 0; i < N_CASES; i++) {
        for (int listen = 0; listen < 2; listen++) {
            char cmd[512];
            snprintf(cmd, sizeof cmd, "%s %s models/kws_cnn.onnx --wav tests/bad/wav/%s",
                     ENPU_CLI, listen ? "listen" : "run", CASES[i].file);
            char *out = NULL;
            int st = enpu_test_run(cmd, &out);
            char want[256];
            snprintf(want, sizeof want, "easynpu %s: error [%s]: tests/bad/wav/%s: ",
                     listen ? "listen" : "run", enpu_status_name(CASES[i].code), CASES[i].file);
            size_t len = strlen(out);
            bool one_line = len > 0 && strchr(out, '\n') == out + len - 1;
            if (st != 2 || strncmp(out, want, strlen(want)) != 0 || !one_line ||
                !strstr(out, CASES[i].substring))
                fail_msg("%s: exit %d, output: %s", cmd, st, out);
            free(out);
        }
    }
    /* a good WAV for a model that does not take the features */
    char *out = NULL;
    int st = enpu_test_run(ENPU_CLI " run models/kws_cnn.onnx --wav tests/audio/yes_en-us.wav",
                           &out);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "error [incompatible]: models/kws_cnn.onnx: input 'mfcc' (1x1x26x49) does "
                                "not take front end 'mlperf-tiny-kws''s 49 frames x 10 coefficients"));
    free(out);
    st = enpu_test_run(ENPU_CLI " run models/kws_cnn.onnx --wav tests/audio/yes_en-us.wav --features mfcc",
                       &out);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "--features 'mfcc': no such front end (there are: mlperf-tiny-kws)"));
    free(out);
    st = enpu_test_run(ENPU_CLI " listen models/kws_cnn.onnx --wav tests/audio/yes_en-us.wav --hop 30",
                       &out);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "--hop 30: a multiple of the front end's stride (20 ms) expected"));
    free(out);
}

/* Every mutant is accepted (samples, a rate in range) or refused with a
 * known category and one non-empty line, nothing returned. */
static void check_mutant(const uint8_t *d, size_t n) {
    enpu_audio a;
    memset(&a, 0x5a, sizeof a);
    enpu_err err = {0};
    int rc = enpu_wav_parse(d, n, "mutant.wav", &a, &err);
    if (rc == 0) {
        assert_true(a.n >= 1 && (size_t)a.n * 2 <= n);
        assert_true(a.rate >= ENPU_WAV_MIN_RATE && a.rate <= ENPU_WAV_MAX_RATE);
        enpu_audio_free(&a);
        return;
    }
    assert_true(rc == ENPU_E_FORMAT || rc == ENPU_E_UNSUPPORTED || rc == ENPU_E_INVALID);
    assert_int_equal(err.code, rc);
    assert_true(err.msg[0] && !strchr(err.msg, '\n'));
    assert_null(a.x);
}

static void test_mutations(void **state) {
    (void)state;
    uint8_t *buf;
    size_t n;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read("tests/audio/yes_en-us.wav", 1 << 20, &buf, &n, &err), 0);
    int refused = 0;
    /* truncations: the header byte by byte, then 64 offsets into the samples */
    for (size_t cut = 0; cut < 64; cut++) {
        enpu_audio a;
        int rc = enpu_wav_parse(buf, cut, "cut.wav", &a, &err);
        assert_true(rc < 0); /* no data chunk whole: always refused */
        refused++;
        check_mutant(buf, cut);
    }
    for (int k = 1; k <= 64; k++) {
        size_t cut = 44 + (n - 44) * (size_t)k / 65;
        enpu_audio a;
        enpu_err e2 = {0};
        assert_int_equal(enpu_wav_parse(buf, cut, "cut.wav", &a, &e2), ENPU_E_FORMAT);
        assert_non_null(strstr(e2.msg, "truncated"));
    }
    /* bit flips: 512 in the header and the first samples, deterministic */
    uint8_t *m = malloc(n);
    uint32_t seed = 12345;
    for (int i = 0; i < 512; i++) {
        memcpy(m, buf, n);
        seed = seed * 1103515245u + 12345u;
        size_t at = (seed >> 8) % 64;
        m[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
        check_mutant(m, n);
    }
    printf("mutations: 64 header cuts refused, 64 sample cuts refused as truncated, 512 bit flips "
           "accepted or refused cleanly\n");
    free(m);
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_refuses),
        cmocka_unit_test(test_cli_refuses),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
