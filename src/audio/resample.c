/* Sample-rate conversion (audio.h) through libsamplerate, the well-kept
 * library Debian ships (libsamplerate0): its best sinc converter, whose
 * passband reaches 97 % of the lower Nyquist frequency, far above the
 * 4 kHz the keyword front end's mel bank stops at. */
#include <math.h>
#include <samplerate.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"

int enpu_audio_resample(const enpu_audio *in, int rate, enpu_audio *out, enpu_err *err) {
    memset(out, 0, sizeof *out);
    if (rate < ENPU_WAV_MIN_RATE || rate > ENPU_WAV_MAX_RATE || in->rate < ENPU_WAV_MIN_RATE ||
        in->rate > ENPU_WAV_MAX_RATE || in->n <= 0)
        return enpu_fail(err, ENPU_E_USAGE, "resample: %lld samples from %d Hz to %d Hz",
                         (long long)in->n, in->rate, rate);
    double ratio = (double)rate / (double)in->rate;
    int64_t n_out = (int64_t)llround((double)in->n * ratio);
    if (n_out < 1) n_out = 1;
    if ((double)n_out * sizeof(float) > (double)ENPU_MAX_WAV_BYTES * 8)
        return enpu_fail(err, ENPU_E_LIMIT, "resample: %lld samples at %d Hz is over the limit",
                         (long long)n_out, rate);
    /* one spare sample: libsamplerate may give one less than asked, never more */
    float *y = calloc((size_t)n_out + 1, sizeof *y);
    if (!y) return enpu_fail(err, ENPU_E_NOMEM, "resample: out of memory");
    if (rate == in->rate) {
        memcpy(y, in->x, (size_t)in->n * sizeof *y);
    } else {
        SRC_DATA d;
        memset(&d, 0, sizeof d);
        d.data_in = in->x;
        d.input_frames = (long)in->n;
        d.data_out = y;
        d.output_frames = (long)n_out + 1;
        d.src_ratio = ratio;
        int rc = src_simple(&d, SRC_SINC_BEST_QUALITY, 1);
        if (rc) {
            free(y);
            return enpu_fail(err, ENPU_E_INVALID, "resample %d Hz to %d Hz: %s", in->rate, rate,
                             src_strerror(rc));
        }
        /* the tail it did not produce stays 0 (calloc) */
    }
    out->x = y;
    out->n = n_out;
    out->rate = rate;
    return 0;
}
