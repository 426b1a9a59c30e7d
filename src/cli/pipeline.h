/* The steps the commands share: a model file (.onnx or .qjson) to the
 * quantized graph for an architecture. */
#ifndef ENPU_PIPELINE_H
#define ENPU_PIPELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/bind.h"
#include "easynpu/arch.h"
#include "easynpu/quant.h"

typedef struct enpu_model {
    const char *path;
    bool is_qjson;
    bool is_tflite;      /* a .tflite: imported straight to a quantized graph */
    enpu_graph *g;       /* float graph (NULL for a .qjson or .tflite) */
    enpu_graph *tfl;     /* a .tflite's quantized graph, as imported (its inputs/outputs) */
    enpu_buf *calib;     /* n_calib * g->n_inputs buffers */
    int n_calib;
    int bits;            /* quantize to 8 (0: default) or 16 bits (docs/numerics.md §12) */
    bool pow2;           /* 16-bit: power-of-two scales (the Q-format) */
} enpu_model;

/* Loads `path` (.onnx: imported with the --bind values of `binds`, which may
 * be NULL; .tflite: imported (docs/tflite.md); .qjson: nothing to do until
 * quantization) and, for an .onnx, the
 * calibration inputs named by `calib` (may be NULL).  Errors name the file. */
int enpu_model_load(enpu_model *m, const char *path, const char *calib, enpu_cli_binds *binds,
                    enpu_err *err);
void enpu_model_free(enpu_model *m);

/* Parses the --bits value of `cmd` into m->bits (8 or 16); a usage error
 * (exit status 2) otherwise. */
int enpu_model_bits_arg(enpu_model *m, const char *cmd, const char *arg);

/* The quantized graph for `arch` (its multiplier/accumulator widths and
 * table segments, the kinds its host runs, and m->bits): a .qjson is loaded
 * as it is, an .onnx is quantized on the
 * calibration inputs (without them: the quantizer's documented fallback,
 * warned on stderr unless quiet).  *rep gets the quantization report when
 * non-NULL (an .onnx only). */
int enpu_model_quantize(const enpu_model *m, const enpu_arch *arch, bool quiet, enpu_graph **qg,
                        enpu_qreport *rep, enpu_err *err);

/* The quantized graph's integer parameters fix the requantizer: a graph
 * for requant "tflite" (a .tflite, or its .qjson) runs on `arch` with its
 * requant switched to tflite, said in one line on `note` (may be NULL); an
 * easynpu graph on a tflite arch is ENPU_E_INCOMPATIBLE. */
int enpu_model_fit_requant(const enpu_graph *qg, enpu_arch *arch, FILE *note, enpu_err *err);

/* Whether a batch of `batch` images runs on arch a as one program (the
 * row-stationary engine, whose rs_conv take several images per pass)
 * rather than image after image through a one-image program. */
bool enpu_model_batched_arch(const enpu_arch *a, int64_t batch);

/* The .onnx model m (loaded for one image) at batch N for such archs: path
 * imported again with `shapes` (the --input-shape values with the batch; its
 * bound values are read into it), each calibration sample of m repeated N
 * times along dimension 0, bits as m's.  Free with enpu_model_free.  Fails
 * (naming the file) when the model does not load at batch N or an output's
 * dimension 0 is not N (its images would be mixed): the caller then runs
 * the one-image model. */
int enpu_model_load_batch(const enpu_model *m, const char *path, enpu_cli_binds *shapes, int64_t batch, enpu_model *out,
                    enpu_err *err);

#endif
