/* Audio in: a checked WAV reader, resampling, and the keyword-spotting
 * feature front ends (docs/audio.md).
 *
 * A front end turns one clip of speech into the feature matrix a keyword
 * spotter was trained on (frames x coefficients), in float (the reference)
 * and quantized to the model's int8 input.  Each front end is one
 * description (enpu_frontend_desc), found by name; every parameter says
 * where it comes from.  The features of a clip are computed in two steps
 * so that a stream shares the expensive one between its windows: each
 * frame's mel energies of the raw samples (window, FFT, magnitude, mel
 * bank), then, per clip, the clip's normalization, the log and the DCT.  A
 * clip and a window of a stream therefore give bit-identical features.
 *
 * The streaming recognizer (enpu_recognizer) smooths the model's scores
 * over time the way TFLite Micro's micro_speech example does. */
#ifndef EASYNPU_AUDIO_H
#define EASYNPU_AUDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- WAV files (src/audio/wav.c) ------------------------------------------------- */

#define ENPU_MAX_WAV_BYTES ((size_t)256 << 20) /* 256 MiB: over two hours at 16 kHz */
#define ENPU_WAV_MIN_RATE 1000
#define ENPU_WAV_MAX_RATE 384000

/* Mono audio: n samples at `rate` Hz, in 16-bit PCM units (-32768 ..
 * 32767; resampled audio holds the fractional values in between). */
typedef struct enpu_audio {
    int rate;
    int64_t n;
    float *x;
} enpu_audio;

void enpu_audio_free(enpu_audio *a);

/* Parses a RIFF/WAVE file held in memory (`what` names it in messages):
 * mono 16-bit PCM (format tag 1, or WAVE_FORMAT_EXTENSIBLE with the PCM
 * sub-format) at ENPU_WAV_MIN_RATE..ENPU_WAV_MAX_RATE Hz, at least one
 * sample; chunks other than "fmt " and "data" are skipped.  Errors, one
 * line naming `what` and the field: ENPU_E_FORMAT (not a RIFF/WAVE file,
 * truncated, a chunk past the end, a data size that is not a whole number
 * of samples, no "fmt " before "data"), ENPU_E_UNSUPPORTED (stereo, 8-,
 * 24- or 32-bit, float, compressed; the message says how to convert with
 * sox), ENPU_E_INVALID (no samples, a rate out of range).  On success *out
 * owns the samples; on failure it is empty. */
int enpu_wav_parse(const uint8_t *data, size_t n, const char *what, enpu_audio *out,
                   enpu_err *err);
/* The same from a file ("-": standard input), at most ENPU_MAX_WAV_BYTES
 * (ENPU_E_LIMIT, checked before reading). */
int enpu_wav_read(const char *path, enpu_audio *out, enpu_err *err);
/* Writes x (n samples, rounded and clamped to int16) as a mono 16-bit PCM
 * WAV at `rate`, atomically (enpu_file_write_atomic). */
int enpu_wav_write(const char *path, const float *x, int64_t n, int rate, enpu_err *err);

/* in resampled to `rate` Hz into *out (libsamplerate, best-quality sinc
 * converter; n_out = round(n * rate / in->rate)).  The same rate copies. */
int enpu_audio_resample(const enpu_audio *in, int rate, enpu_audio *out, enpu_err *err);

/* ---- Front ends (src/audio/frontend.c) ------------------------------------------- */

typedef enum enpu_window_kind {
    ENPU_WINDOW_HANN_PERIODIC = 0, /* 0.5 - 0.5 cos(2 pi n / L): tf.signal.hann_window */
} enpu_window_kind;

typedef enum enpu_normalize {
    ENPU_NORM_PEAK = 0, /* the clip divided by its largest sample (tf.reduce_max) */
} enpu_normalize;

#define ENPU_FRONTEND_MAX_LABELS 32

/* Every parameter of a front end (docs/audio.md gives each one's source). */
typedef struct enpu_frontend_desc {
    const char *name;        /* "mlperf-tiny-kws" */
    const char *source;      /* where the parameters come from, one line */
    int sample_rate;         /* Hz */
    int clip_samples;        /* one clip: the model's input */
    int window_samples;      /* one frame */
    int stride_samples;      /* between frames */
    int fft_length;          /* the frame zero-padded to this (a power of two) */
    enpu_window_kind window;
    enpu_normalize normalize;
    int n_mel;               /* mel bands */
    double mel_low_hz, mel_high_hz; /* the lower edge of the first band, the upper of the last */
    double log_offset;       /* log(mel + offset) */
    int n_coeffs;            /* DCT coefficients kept */
    int n_frames;            /* 1 + (clip - window) / stride */
    int n_labels;            /* the class names of the models trained on these features */
    const char *labels[ENPU_FRONTEND_MAX_LABELS];
    int silence_label;       /* index of the silence class (-1: none) */
    int unknown_label;       /* index of the unknown-word class (-1: none) */
} enpu_frontend_desc;

/* The description called `name` (NULL: none).  enpu_frontend_names lists
 * them, comma-separated, for messages. */
const enpu_frontend_desc *enpu_frontend_find(const char *name);
const char *enpu_frontend_names(void);
/* The default front end (the MLPerf Tiny keyword-spotting one). */
const enpu_frontend_desc *enpu_frontend_default(void);

typedef struct enpu_frontend enpu_frontend;

/* A front end for description d: its window, mel bank and DCT tables and
 * an FFT plan (FFTW).  Freed with enpu_frontend_free. */
int enpu_frontend_new(const enpu_frontend_desc *d, enpu_frontend **out, enpu_err *err);
void enpu_frontend_free(enpu_frontend *f);
const enpu_frontend_desc *enpu_frontend_desc_of(const enpu_frontend *f);

/* Step 1, one frame: the mel energies (d->n_mel) of the window_samples
 * raw samples at x (not normalized: the clip's scale is applied in step 2,
 * which is exact because the magnitude spectrum and the mel bank are
 * linear in a positive scale). */
void enpu_frontend_frame_mel(enpu_frontend *f, const float *x, double *mel);
/* Step 2, one clip: the features (d->n_frames x d->n_coeffs, row-major)
 * from its frames' mel energies (d->n_frames x d->n_mel) and its peak (the
 * largest sample of the clip, before padding): log(mel * s + log_offset),
 * s = 1 / |peak| (1 when peak is 0: digital silence, where TensorFlow's
 * division gives NaN), then the DCT. */
void enpu_frontend_clip_features(enpu_frontend *f, const double *mel, double peak, double *feat);
/* Both steps on a clip of n samples at d->sample_rate: the first
 * clip_samples, zero-padded at the end when shorter (as the MLPerf Tiny
 * pipeline pads).  feat: d->n_frames x d->n_coeffs. */
void enpu_frontend_features(enpu_frontend *f, const float *x, int64_t n, double *feat);

/* Features quantized to a model's int8 input: TFLite's rule,
 * clamp(round(float(v) / scale) + zp, -128, 127), ties away from zero
 * (enpu_tfl_quantize).  Returns how many values were clamped. */
int64_t enpu_features_quantize(const double *feat, int64_t n, float scale, int32_t zp, int8_t *q);

/* What the front end costs on the host CPU the arch describes
 * (hostcpu_*; docs/microarch.md §13.11), in host CPU cycles: `frames` new
 * frames (step 1) and `clips` clips (step 2 and the quantization), and the
 * peak search over `peak_samples` samples.  docs/audio.md gives the
 * operation counts. */
typedef struct enpu_frontend_cost {
    uint64_t host_cycles;  /* at hostcpu_mhz */
    uint64_t npu_cycles;   /* the same time in NPU cycles: ceil(host * clock / hostcpu_mhz) */
    double time_us;
} enpu_frontend_cost;

void enpu_frontend_host_cost(const enpu_frontend_desc *d, const enpu_arch *a, int64_t frames,
                             int64_t clips, int64_t peak_samples, enpu_frontend_cost *out);

/* Class names from a labels file: one name per line (blank lines and
 * lines starting with '#' skipped, surrounding blanks trimmed), at most
 * ENPU_FRONTEND_MAX_LABELS of at most 63 bytes.  *names is one allocation
 * (free it), (*names)[i] the i-th name. */
int enpu_labels_read(const char *path, char ***names, int *n, enpu_err *err);

/* ---- A recording as a stream of clips (src/audio/stream.c) ------------------------ */

/* The windows of one clip each, every hop_samples, over a recording: each
 * frame's mel energies are computed once and shared by the windows that
 * contain it, each window is normalized by its own peak (the largest of
 * the per-stride block peaks it covers), so window w's features equal
 * enpu_frontend_features of the clip that starts at sample w * hop, bit for
 * bit.  A recording shorter than a clip is one window, zero-padded. */
typedef struct enpu_feature_stream enpu_feature_stream;

/* hop_samples: a positive multiple of the front end's stride
 * (ENPU_E_USAGE otherwise).  The stream reads a->x until it is freed. */
int enpu_feature_stream_new(enpu_frontend *f, const enpu_audio *a, int hop_samples,
                            enpu_feature_stream **out, enpu_err *err);
void enpu_feature_stream_free(enpu_feature_stream *s);
int64_t enpu_feature_stream_windows(const enpu_feature_stream *s);
/* Frames computed, each once. */
int64_t enpu_feature_stream_frames(const enpu_feature_stream *s);
/* Window w's features (n_frames x n_coeffs) into feat; its first sample. */
void enpu_feature_stream_window(enpu_feature_stream *s, int64_t w, double *feat, int64_t *start);

/* ---- Streaming recognition (src/audio/recognize.c) -------------------------------- */

/* micro_speech's RecognizeCommands: the scores (int8 + 128, 0..255) of
 * the results of the last average_ms are averaged (integer division); the
 * top class is a new detection when its average is above `threshold` and
 * it differs from the previous top class or suppression_ms have passed
 * since it (always, after the silence class); no detection before
 * min_count results spanning a quarter of the window. */
typedef struct enpu_recognizer_opts {
    int average_ms;      /* 1000 */
    int threshold;       /* 200 */
    int suppression_ms;  /* 1500 */
    int min_count;       /* 3 */
} enpu_recognizer_opts;

void enpu_recognizer_opts_default(enpu_recognizer_opts *o);

typedef struct enpu_recognizer enpu_recognizer;

/* A recognizer of n_classes classes (1..ENPU_FRONTEND_MAX_LABELS), of which
 * silence is `silence` (-1: none).  ENPU_E_USAGE for bad options. */
int enpu_recognizer_new(const enpu_recognizer_opts *o, int n_classes, int silence,
                        enpu_recognizer **out, enpu_err *err);
void enpu_recognizer_free(enpu_recognizer *r);

typedef struct enpu_recognition {
    int top;           /* the averaged top class (-1 while too few results) */
    int score;         /* its average score, 0..255 (0 while too few results) */
    bool is_new;       /* a new detection */
} enpu_recognition;

/* Adds the int8 scores of one inference whose audio ends at time_ms
 * (non-decreasing; ENPU_E_USAGE otherwise) and says what is recognized. */
int enpu_recognizer_push(enpu_recognizer *r, int64_t time_ms, const int8_t *scores,
                         enpu_recognition *out, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
