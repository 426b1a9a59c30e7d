/* Audio in for the commands (`run --wav`, `listen`): a WAV read and brought
 * to the front end's rate, the model's input checked against the front
 * end's features, class names, and the front end's host time
 * (docs/audio.md). */
#ifndef ENPU_CLI_AUDIO_IN_H
#define ENPU_CLI_AUDIO_IN_H

#include <stdio.h>

#include "easynpu/audio.h"
#include "easynpu/ir.h"
#include "easynpu/sim.h"

typedef struct enpu_cli_audio {
    const char *path;
    const enpu_frontend_desc *fe;
    enpu_audio audio;        /* at fe->sample_rate */
    int file_rate;           /* the WAV's own rate */
    int64_t file_samples;
    enpu_frontend *f;
    char **names;            /* --labels, or NULL */
    int n_names;
    double *feat;            /* the clip's features (enpu_cli_audio_model_input) */
    int64_t clamped;         /* int8 features the quantization clamped */
} enpu_cli_audio;

/* Reads `wav` and takes front end `features` (NULL: the default); another
 * rate is resampled with a note on `text`.  `labels` (may be NULL) is a
 * labels file.  Errors name the file. */
int enpu_cli_audio_open(enpu_cli_audio *a, const char *wav, const char *features,
                        const char *labels, FILE *text, enpu_err *err);
void enpu_cli_audio_close(enpu_cli_audio *a);

/* Whether model input 0 of quantized graph `tfl` (a .tflite, int8) or of
 * float graph `g` (an .onnx) takes the front end's features: one input of
 * n_frames x n_coeffs elements, frames outermost (TFLite [1, 49, 10, 1],
 * or any shape whose dimensions other than 1 are those two).  The error
 * names the model, the input, its shape and what the front end makes. */
int enpu_cli_audio_fits(const enpu_cli_audio *a, const char *model, const enpu_graph *tfl,
                        const enpu_graph *g, enpu_err *err);

/* The int8 input of a .tflite in IR order (*q: numel bytes, malloc'd) from
 * features feat; *clamped gets how many values the quantization clamped. */
int enpu_cli_audio_input_i8(const enpu_graph *tfl, const double *feat, int8_t **q,
                            int64_t *clamped, enpu_err *err);

/* `run --wav`: the features of the recording's first clip (a note says so
 * on `text` when it is longer), checked against the model's input and
 * given as it takes them: a .tflite (tfl) int8 in IR order (*q, malloc'd),
 * an .onnx (g) float32 in *buf (allocated in the input's shape). */
int enpu_cli_audio_model_input(enpu_cli_audio *a, const char *model, const enpu_graph *tfl,
                               const enpu_graph *g, int8_t **q, enpu_buf *buf, FILE *text,
                               enpu_err *err);

/* `run --wav`'s report after the run: what was heard (output 0 by class
 * name) and the front end's host time added to the run's cycles. */
void enpu_cli_audio_report(FILE *text, const enpu_cli_audio *a, const enpu_arch *arch,
                           const enpu_sim_result *res);
/* The same as a JSON object ("frontend": name, host and NPU cycles, total
 * cycles with the front end, the top class by name). */
struct json_t *enpu_cli_audio_json(const enpu_cli_audio *a, const enpu_arch *arch,
                                   const enpu_sim_result *res);

/* The name of class i of a model with n classes: --labels, else the front
 * end's class names when the counts agree, else the number (in buf). */
const char *enpu_cli_audio_label(const enpu_cli_audio *a, int i, int n, char buf[16]);

/* Prints the top classes of output `out` (a class vector) by name with
 * their scores, e.g. "keyword: yes 0.9961 (then: no 0.0039, ...)". */
void enpu_cli_audio_print_top(FILE *text, const enpu_cli_audio *a, const enpu_buf *out);

#endif
