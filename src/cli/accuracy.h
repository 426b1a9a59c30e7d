/* How far the int8 run is from the float reference, as `easynpu run` says
 * it (docs/quantization.md "Accuracy"): SQNR and max error of every output,
 * top-1 for class vectors only, a tie at the top said as a tie; warnings for
 * few calibration inputs and a low SQNR, naming the layers that lose most. */
#ifndef ENPU_ACCURACY_H
#define ENPU_ACCURACY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "easynpu/quant.h"
#include "easynpu/tensor_io.h"

#define ENPU_ACC_FEW_CALIB 8      /* fewer calibration inputs than this: said */
#define ENPU_ACC_LOW_SQNR_DB 20.0 /* an output below this SQNR: said, with its weakest layers */
#define ENPU_ACC_WEAKEST 3        /* layers named */

typedef struct enpu_accuracy {
    const char *name;             /* the output's (borrowed) */
    int rank;
    int64_t dims[ENPU_MAX_RANK];
    bool have;                    /* same sizes, compared */
    double max_err, sqnr_db;      /* sqnr_db INFINITY when equal */
    bool class_vector;            /* enpu_is_class_vector */
    int64_t top1_float, top1_int8;
    int64_t n_top_float, n_top_int8; /* values sharing the top score (> 1: a tie) */
    float top_int8;               /* the top int8 score (dequantized) */
    int64_t tied[8];              /* the first int8 classes sharing it */
    bool agree;                   /* class vector, no tie, same class */
    int bits;                     /* the quantized run's width: 8, or 16 (then said) */
} enpu_accuracy;

/* float reference output f against the int8 run's q (dequantized). */
enpu_accuracy enpu_accuracy_of(const enpu_buf *f, const enpu_buf *q);
/* "float vs int8 (this input), output NAME [dims]: max |error| ..., SQNR ... dB[, top-1 ...]" */
void enpu_accuracy_print(FILE *out, const enpu_accuracy *a);
/* {"output", "max_abs_error", "sqnr_db", "class_vector"[, "top1_float",
 * "top1_int8", "top1_agree", "top1_tie"]} */
json_t *enpu_accuracy_json(const enpu_accuracy *a);

/* The warnings: calibration on fewer than ENPU_ACC_FEW_CALIB inputs
 * (n_calib > 0; the quantizer itself warns about its synthetic fallback),
 * and for an output below ENPU_ACC_LOW_SQNR_DB the layers feeding it with
 * the largest SQNR drop from their input (over the calibration set, from
 * rep; a graph input's SQNR is that of its int8 quantization over calib).
 * rep and calib may be NULL/0 (no layer named). */
void enpu_accuracy_warn(FILE *out, const enpu_accuracy *a, int n, const enpu_graph *qg,
                        const enpu_qreport *rep, const enpu_buf *calib, int n_calib);

/* The gates of `easynpu run` (docs/quantization.md "Accuracy gates"): every
 * output compared must reach min_sqnr_db (NAN: no gate) and, with
 * require_top1, every class vector must have the float top-1 as its int8
 * top-1 (a tie is not agreement).  0 when every gate is met; else
 * ENPU_E_ACCURACY naming the first output that misses one and how, or
 * ENPU_E_USAGE for --require-top1 on a model without a class vector. */
int enpu_accuracy_gate(const enpu_accuracy *a, int n, double min_sqnr_db, bool require_top1,
                       enpu_err *err);

#endif
