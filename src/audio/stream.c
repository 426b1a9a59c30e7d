/* A recording as a stream of overlapping clips (audio.h): what a device
 * listening continuously computes, each frame once. */
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"

struct enpu_feature_stream {
    enpu_frontend *f;
    const enpu_frontend_desc *d;
    int64_t n_frames, n_windows, hop_frames;
    double *mel;          /* n_frames x n_mel */
    double *block_peak;   /* the largest sample of each stride block */
    int64_t n_blocks;
    double short_peak;    /* a recording shorter than a clip: its peak */
    bool is_short;
};

int enpu_feature_stream_new(enpu_frontend *f, const enpu_audio *a, int hop_samples,
                            enpu_feature_stream **out, enpu_err *err) {
    *out = NULL;
    const enpu_frontend_desc *d = enpu_frontend_desc_of(f);
    if (hop_samples <= 0 || hop_samples % d->stride_samples)
        return enpu_fail(err, ENPU_E_USAGE, "hop of %d samples: a positive multiple of the front "
                         "end's stride (%d samples) expected", hop_samples, d->stride_samples);
    if (d->clip_samples % d->stride_samples)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "front end '%s': a clip is not a whole number of "
                         "strides", d->name);
    enpu_feature_stream *s = calloc(1, sizeof *s);
    if (!s) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    s->f = f;
    s->d = d;
    s->hop_frames = hop_samples / d->stride_samples;
    s->is_short = a->n < d->clip_samples;
    int64_t n = s->is_short ? d->clip_samples : a->n;
    s->n_frames = 1 + (n - d->window_samples) / d->stride_samples;
    s->n_windows = 1 + (n - d->clip_samples) / hop_samples;
    s->n_blocks = n / d->stride_samples;
    s->mel = malloc((size_t)s->n_frames * (size_t)d->n_mel * sizeof(double));
    s->block_peak = malloc((size_t)(s->n_blocks ? s->n_blocks : 1) * sizeof(double));
    float *pad = s->is_short ? calloc((size_t)d->clip_samples, sizeof(float)) : NULL;
    if (!s->mel || !s->block_peak || (s->is_short && !pad)) {
        int64_t frames = s->n_frames;
        free(pad);
        enpu_feature_stream_free(s);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory for %lld frames", (long long)frames);
    }
    const float *x = a->x;
    if (pad) {
        memcpy(pad, a->x, (size_t)a->n * sizeof(float));
        x = pad;
        s->short_peak = a->x[0];
        for (int64_t i = 1; i < a->n; i++)
            if (a->x[i] > s->short_peak) s->short_peak = a->x[i];
    } else {
        for (int64_t b = 0; b < s->n_blocks; b++) {
            const float *p = x + b * d->stride_samples;
            double m = p[0];
            for (int i = 1; i < d->stride_samples; i++)
                if (p[i] > m) m = p[i];
            s->block_peak[b] = m;
        }
    }
    for (int64_t t = 0; t < s->n_frames; t++)
        enpu_frontend_frame_mel(f, x + t * d->stride_samples, &s->mel[(size_t)t * d->n_mel]);
    free(pad);
    *out = s;
    return 0;
}

void enpu_feature_stream_free(enpu_feature_stream *s) {
    if (!s) return;
    free(s->mel);
    free(s->block_peak);
    free(s);
}

int64_t enpu_feature_stream_windows(const enpu_feature_stream *s) { return s->n_windows; }
int64_t enpu_feature_stream_frames(const enpu_feature_stream *s) { return s->n_frames; }

void enpu_feature_stream_window(enpu_feature_stream *s, int64_t w, double *feat, int64_t *start) {
    const enpu_frontend_desc *d = s->d;
    ENPU_ASSERT(w >= 0 && w < s->n_windows);
    int64_t t0 = w * s->hop_frames;
    double peak = s->short_peak;
    if (!s->is_short) {
        /* the clip's peak: the first block's, then the larger ones, as
         * enpu_frontend_features scans the samples in order */
        int64_t nb = d->clip_samples / d->stride_samples;
        peak = s->block_peak[t0];
        for (int64_t b = 1; b < nb; b++)
            if (s->block_peak[t0 + b] > peak) peak = s->block_peak[t0 + b];
    }
    enpu_frontend_clip_features(s->f, &s->mel[(size_t)t0 * d->n_mel], peak, feat);
    *start = t0 * d->stride_samples;
}
