/* The keyword-spotting feature front ends (audio.h, docs/audio.md): their
 * descriptions, the float features, the int8 quantization and what they
 * cost on the host CPU.  The FFT is FFTW's (Debian's libfftw3). */
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"
#include "easynpu/numerics.h"

#define PI 3.14159265358979323846 /* M_PI is not C11 */

/* MLPerf Tiny's keyword-spotting pipeline, as its training code computes the
 * features the reference DS-CNN (kws_ref_model.tflite) was trained and
 * calibrated on: benchmark/training/keyword_spotting, kws_util.py (the
 * defaults of the flags), keras_model.py (prepare_model_settings: samples,
 * frames) and get_dataset.py (prepare_processing_graph, feature_type
 * "mfcc"), with TensorFlow's tf.signal.stft, hann_window,
 * linear_to_mel_weight_matrix and mfccs_from_log_mel_spectrograms.  The
 * class order is get_dataset.py's word_labels. */
static const enpu_frontend_desc FRONTENDS[] = {
    {.name = "mlperf-tiny-kws",
     .source = "MLPerf Tiny keyword spotting (mlcommons/tiny benchmark/training/keyword_spotting: "
               "kws_util.py, keras_model.py, get_dataset.py)",
     .sample_rate = 16000,   /* --sample_rate 16000 */
     .clip_samples = 16000,  /* --clip_duration_ms 1000 */
     .window_samples = 480,  /* --window_size_ms 30 */
     .stride_samples = 320,  /* --window_stride_ms 20 */
     .fft_length = 512,      /* tf.signal.stft fft_length=None: the next power of two */
     .window = ENPU_WINDOW_HANN_PERIODIC, /* window_fn=tf.signal.hann_window (periodic) */
     .normalize = ENPU_NORM_PEAK,         /* wav / tf.reduce_max(wav) */
     .n_mel = 40,                         /* num_mel_bins */
     .mel_low_hz = 20.0,                  /* lower_edge_hertz */
     .mel_high_hz = 4000.0,               /* upper_edge_hertz */
     .log_offset = 1e-6,                  /* tf.math.log(mel + 1e-6) */
     .n_coeffs = 10,                      /* --dct_coefficient_count 10 */
     .n_frames = 49,                      /* 1 + (16000 - 480) / 320 */
     .n_labels = 12,
     .labels = {"down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence",
                "unknown"},
     .silence_label = 10,
     .unknown_label = 11},
};
#define N_FRONTENDS ((int)(sizeof FRONTENDS / sizeof FRONTENDS[0]))

const enpu_frontend_desc *enpu_frontend_find(const char *name) {
    for (int i = 0; name && i < N_FRONTENDS; i++)
        if (strcmp(FRONTENDS[i].name, name) == 0) return &FRONTENDS[i];
    return NULL;
}

const char *enpu_frontend_names(void) { return "mlperf-tiny-kws"; }

const enpu_frontend_desc *enpu_frontend_default(void) { return &FRONTENDS[0]; }

struct enpu_frontend {
    const enpu_frontend_desc *d;
    double *window;     /* window_samples */
    int n_bins;         /* fft_length / 2 + 1 */
    int *band_lo;       /* n_mel: the first bin of each band's non-zero weights */
    int *band_n;        /* n_mel: how many */
    double *band_w;     /* n_mel * n_bins: the weights of band m from band_lo[m] */
    int64_t mel_weights; /* non-zero weights in all (the mel bank's multiply-adds) */
    int bin_lo, bin_hi; /* the bins any band reads: only their magnitudes are computed */
    double *dct;        /* n_coeffs * n_mel */
    double *fft_in;     /* fft_length */
    fftw_complex *fft_out; /* n_bins */
    fftw_plan plan;
    double *mel_scratch; /* n_frames * n_mel, for enpu_frontend_features */
};

/* FFTW's planner is not thread-safe (its execution is): front ends may be
 * made by the threads of a data set run. */
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;

/* TensorFlow's mel scale (mel_ops.py, HTK's): 1127 ln(1 + f / 700). */
static double hz_to_mel(double hz) { return 1127.0 * log(1.0 + hz / 700.0); }

/* The triangular mel bank of tf.signal.linear_to_mel_weight_matrix: bins at
 * linspace(0, rate / 2, n_bins), the DC bin excluded; band edges at
 * linspace(mel(low), mel(high), n_mel + 2) (band m: edges m, m+1, m+2); the
 * weight of bin k in band m is max(0, min(rising, falling)) with both slopes
 * linear in mel. */
static void mel_bank(enpu_frontend *f) {
    const enpu_frontend_desc *d = f->d;
    double lo = hz_to_mel(d->mel_low_hz), hi = hz_to_mel(d->mel_high_hz);
    f->mel_weights = 0;
    for (int m = 0; m < d->n_mel; m++) {
        double l = lo + (hi - lo) * m / (d->n_mel + 1);
        double c = lo + (hi - lo) * (m + 1) / (d->n_mel + 1);
        double u = lo + (hi - lo) * (m + 2) / (d->n_mel + 1);
        f->band_lo[m] = 0;
        f->band_n[m] = 0;
        for (int k = 1; k < f->n_bins; k++) {
            double mel = hz_to_mel(0.5 * d->sample_rate * k / (f->n_bins - 1));
            double w = fmin((mel - l) / (c - l), (u - mel) / (u - c));
            if (w <= 0) continue;
            if (f->band_n[m] == 0) f->band_lo[m] = k;
            /* the weights of a band are contiguous: zero bins inside a
             * band do not occur (both slopes are monotonic) */
            f->band_w[(size_t)m * f->n_bins + (size_t)(k - f->band_lo[m])] = w;
            f->band_n[m] = k - f->band_lo[m] + 1;
        }
        f->mel_weights += f->band_n[m];
        if (f->band_n[m] && (f->bin_hi == 0 || f->band_lo[m] < f->bin_lo)) f->bin_lo = f->band_lo[m];
        if (f->band_lo[m] + f->band_n[m] > f->bin_hi) f->bin_hi = f->band_lo[m] + f->band_n[m];
    }
}

int enpu_frontend_new(const enpu_frontend_desc *d, enpu_frontend **out, enpu_err *err) {
    *out = NULL;
    if (!d || d->fft_length < d->window_samples || d->n_coeffs > d->n_mel ||
        d->n_frames != 1 + (d->clip_samples - d->window_samples) / d->stride_samples)
        return enpu_fail(err, ENPU_E_USAGE, "front end '%s': inconsistent description",
                         d ? d->name : "?");
    enpu_frontend *f = calloc(1, sizeof *f);
    if (!f) return enpu_fail(err, ENPU_E_NOMEM, "front end: out of memory");
    f->d = d;
    f->n_bins = d->fft_length / 2 + 1;
    f->window = malloc((size_t)d->window_samples * sizeof(double));
    f->band_lo = calloc((size_t)d->n_mel, sizeof(int));
    f->band_n = calloc((size_t)d->n_mel, sizeof(int));
    f->band_w = calloc((size_t)d->n_mel * (size_t)f->n_bins, sizeof(double));
    f->dct = malloc((size_t)d->n_coeffs * (size_t)d->n_mel * sizeof(double));
    f->mel_scratch = malloc((size_t)d->n_frames * (size_t)d->n_mel * sizeof(double));
    f->fft_in = fftw_malloc((size_t)d->fft_length * sizeof(double));
    f->fft_out = fftw_malloc((size_t)f->n_bins * sizeof(fftw_complex));
    if (!f->window || !f->band_lo || !f->band_n || !f->band_w || !f->dct || !f->mel_scratch ||
        !f->fft_in || !f->fft_out) {
        enpu_frontend_free(f);
        return enpu_fail(err, ENPU_E_NOMEM, "front end: out of memory");
    }
    /* tf.signal.hann_window(L, periodic=True): the period is L */
    for (int i = 0; i < d->window_samples; i++)
        f->window[i] = 0.5 - 0.5 * cos(2.0 * PI * i / d->window_samples);
    mel_bank(f);
    /* mfccs_from_log_mel_spectrograms: TensorFlow's unnormalized DCT-II
     * (2 sum x_n cos(pi k (2n + 1) / 2N)) times 1 / sqrt(2N) */
    for (int k = 0; k < d->n_coeffs; k++)
        for (int n = 0; n < d->n_mel; n++)
            f->dct[(size_t)k * d->n_mel + n] =
                2.0 * cos(PI * k * (2.0 * n + 1.0) / (2.0 * d->n_mel)) / sqrt(2.0 * d->n_mel);
    pthread_mutex_lock(&plan_lock);
    f->plan = fftw_plan_dft_r2c_1d(d->fft_length, f->fft_in, f->fft_out, FFTW_ESTIMATE);
    pthread_mutex_unlock(&plan_lock);
    if (!f->plan) {
        enpu_frontend_free(f);
        return enpu_fail(err, ENPU_E_NOMEM, "front end '%s': no FFT plan of length %d", d->name,
                         d->fft_length);
    }
    *out = f;
    return 0;
}

void enpu_frontend_free(enpu_frontend *f) {
    if (!f) return;
    if (f->plan) {
        pthread_mutex_lock(&plan_lock);
        fftw_destroy_plan(f->plan);
        pthread_mutex_unlock(&plan_lock);
    }
    fftw_free(f->fft_in);
    fftw_free(f->fft_out);
    free(f->window);
    free(f->band_lo);
    free(f->band_n);
    free(f->band_w);
    free(f->dct);
    free(f->mel_scratch);
    free(f);
}

const enpu_frontend_desc *enpu_frontend_desc_of(const enpu_frontend *f) { return f->d; }

void enpu_frontend_frame_mel(enpu_frontend *f, const float *x, double *mel) {
    const enpu_frontend_desc *d = f->d;
    for (int i = 0; i < d->window_samples; i++) f->fft_in[i] = (double)x[i] * f->window[i];
    for (int i = d->window_samples; i < d->fft_length; i++) f->fft_in[i] = 0.0;
    fftw_execute(f->plan);
    /* the magnitudes overwrite the real parts: only the bins a band reads
     * (below 4 kHz: half the spectrum of the MLPerf front end) */
    for (int k = f->bin_lo; k < f->bin_hi; k++)
        f->fft_out[k][0] = hypot(f->fft_out[k][0], f->fft_out[k][1]);
    for (int m = 0; m < d->n_mel; m++) {
        const double *w = &f->band_w[(size_t)m * f->n_bins];
        double s = 0.0;
        for (int j = 0; j < f->band_n[m]; j++) s += f->fft_out[f->band_lo[m] + j][0] * w[j];
        mel[m] = s;
    }
}

void enpu_frontend_clip_features(enpu_frontend *f, const double *mel, double peak, double *feat) {
    const enpu_frontend_desc *d = f->d;
    double s = peak != 0.0 ? 1.0 / fabs(peak) : 1.0;
    double lm[256];
    ENPU_ASSERT(d->n_mel <= 256);
    for (int t = 0; t < d->n_frames; t++) {
        for (int m = 0; m < d->n_mel; m++) lm[m] = log(mel[(size_t)t * d->n_mel + m] * s + d->log_offset);
        for (int k = 0; k < d->n_coeffs; k++) {
            const double *c = &f->dct[(size_t)k * d->n_mel];
            double v = 0.0;
            for (int m = 0; m < d->n_mel; m++) v += c[m] * lm[m];
            feat[(size_t)t * d->n_coeffs + k] = v;
        }
    }
}

void enpu_frontend_features(enpu_frontend *f, const float *x, int64_t n, double *feat) {
    const enpu_frontend_desc *d = f->d;
    int64_t have = n < d->clip_samples ? n : d->clip_samples;
    double peak = 0.0;
    for (int64_t i = 0; i < have; i++)
        if (i == 0 || x[i] > peak) peak = x[i];
    float frame[8192];
    ENPU_ASSERT(d->window_samples <= 8192);
    for (int t = 0; t < d->n_frames; t++) {
        int64_t s0 = (int64_t)t * d->stride_samples;
        for (int i = 0; i < d->window_samples; i++)
            frame[i] = s0 + i < have ? x[s0 + i] : 0.0f; /* zero padding past the clip's end */
        enpu_frontend_frame_mel(f, frame, &f->mel_scratch[(size_t)t * d->n_mel]);
    }
    enpu_frontend_clip_features(f, f->mel_scratch, peak, feat);
}

int64_t enpu_features_quantize(const double *feat, int64_t n, float scale, int32_t zp, int8_t *q) {
    int64_t clamped = 0;
    for (int64_t i = 0; i < n; i++) {
        float v = (float)feat[i];
        double r = nearbyint((double)v / (double)scale); /* only to count the clamps */
        clamped += r + zp < -128 || r + zp > 127;
        q[i] = (int8_t)enpu_tfl_quantize(v, scale, zp);
    }
    return clamped;
}

/* Operation counts (docs/audio.md "Host time"), priced like a host op. */
void enpu_frontend_host_cost(const enpu_frontend_desc *d, const enpu_arch *a, int64_t frames,
                             int64_t clips, int64_t peak_samples, enpu_frontend_cost *out) {
    double N = d->fft_length, bins = 0;
    /* the mel bank's non-zero weights (what enpu_frontend_frame_mel
     * multiplies) and the bins they read */
    enpu_frontend *f = NULL;
    double melw = 0;
    if (enpu_frontend_new(d, &f, NULL) == 0) melw = (double)f->mel_weights, bins = f->bin_hi - f->bin_lo;
    enpu_frontend_free(f);
    /* a radix-2 real FFT of N points: a complex FFT of N/2 points,
     * (N/4) log2(N/2) butterflies, then N/2 split twiddles, each counted as
     * 5 multiply-adds (a complex multiply and two complex adds) */
    double fft_macs = 5.0 * (N / 4) * log2(N / 2) + 5.0 * (N / 2);
    double arith = (double)a->hostcpu_arith_cycles, mac = (double)a->hostcpu_mac_cycles;
    double transc = (double)a->hostcpu_transc_cycles, cvt = (double)a->hostcpu_cvt_cycles;
    double per_frame = arith * d->window_samples + arith * N /* window; load and pad */
                       + mac * fft_macs + transc * bins  /* |X|: a square root per bin */
                       + mac * melw;
    double per_clip = (double)a->hostcpu_op_cycles
                      + (mac + transc) * d->n_frames * d->n_mel         /* scale, log */
                      + mac * (double)d->n_frames * d->n_mel * d->n_coeffs /* DCT */
                      + cvt * (double)d->n_frames * d->n_coeffs;        /* quantize */
    double host = per_frame * (double)frames + per_clip * (double)clips + arith * (double)peak_samples;
    out->host_cycles = (uint64_t)ceil(host);
    out->npu_cycles = (uint64_t)ceil(host * a->clock_mhz / (double)a->hostcpu_mhz);
    out->time_us = host / (double)a->hostcpu_mhz;
}
