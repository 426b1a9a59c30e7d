/* libFuzzer target: WAV files (enpu_wav_parse), then what `run --wav`
 * does with an accepted one: resampling to the front end's rate and its
 * features and int8 quantization (short inputs only: the fuzzer's time
 * goes to the reader). */
#include "easynpu/audio.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_audio a;
    memset(&a, 0xa5, sizeof a);
    int rc = enpu_wav_parse(data, size, "fuzz.wav", &a, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        FUZZ_CHECK(a.x == NULL && a.n == 0);
        return 0;
    }
    FUZZ_CHECK(a.n >= 1 && (size_t)a.n * 2 <= size);
    FUZZ_CHECK(a.rate >= ENPU_WAV_MIN_RATE && a.rate <= ENPU_WAV_MAX_RATE);
    const enpu_frontend_desc *d = enpu_frontend_default();
    if (a.n <= 4096) {
        enpu_audio r;
        rc = enpu_audio_resample(&a, d->sample_rate, &r, &err);
        FUZZ_CHECK(rc == 0);
        enpu_frontend *f;
        FUZZ_CHECK(enpu_frontend_new(d, &f, &err) == 0);
        double feat[490];
        int8_t q[490];
        enpu_frontend_features(f, r.x, r.n, feat);
        enpu_features_quantize(feat, 490, 0.584702909f, 83, q);
        for (int i = 0; i < 490; i++) FUZZ_CHECK(feat[i] == feat[i]); /* never NaN */
        enpu_frontend_free(f);
        enpu_audio_free(&r);
    }
    enpu_audio_free(&a);
    return 0;
}
