/* What int8 costs, measured on a data set (`easynpu eval`, docs/eval.md).
 *
 * Every input set of a data set (quant.h: enpu_dataset) runs through the
 * float reference (when there is a float graph) and the golden int8
 * reference (bit-exact with the NPU; its fast kernels by default), on
 * several threads, each with its own executors.  Per input: the top classes
 * of the first output for both, its SQNR (int8 against float) and the SQNR
 * of every int8 activation that has a float twin (the tensor of the same
 * name).  Over the set: top-1/top-5 accuracy against labels, top-1
 * agreement, the SQNR distribution, and per layer the mean and worst SQNR
 * and the noise the layer itself adds.
 * Per-input figures are stored by input index and summed in index order
 * after the threads are done, so the result does not depend on the number of
 * threads, bit for bit. */
#ifndef EASYNPU_EVAL_H
#define EASYNPU_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_EVAL_TOPK 5
#define ENPU_EVAL_MAX_THREADS 256
/* Largest labels file read. */
#define ENPU_MAX_LABELS_FILE_BYTES ((size_t)1 << 26)

/* Labels of a data set from `spec`, one file or a comma-separated list read
 * in order.  A file holds one entry per line ('#' starts a comment, blank
 * lines are skipped), all of one form:
 *   CLASS        the class index of the next input set, in data set order
 *                (the files' entries together must cover every input set:
 *                exactly as many, or more when ds->truncated);
 *   NAME CLASS   the class of the input sets NAME names: an input set whose
 *                name (enpu_dataset) equals NAME, ends with "/NAME" or
 *                ":NAME", or has NAME as a folder of its path (a
 *                test_data_set_N).  Input sets no entry names have no label;
 *                two entries giving one input set different classes is an
 *                error.
 * CLASS is a decimal integer in 0..2^31-1.  *labels gets ds->n_samples
 * entries (-1: no label; free()), *n_labelled how many have one.  Errors
 * name the file and line (ENPU_E_FORMAT), or the input set (ENPU_E_INVALID). */
int enpu_labels_load(const char *spec, const enpu_dataset *ds, int **labels, int *n_labelled,
                     enpu_err *err);

/* Called after each input set, under the evaluation's lock (from any
 * thread): `done` of `total` finished. */
typedef void (*enpu_eval_progress)(void *ctx, int done, int total);

typedef struct enpu_eval_opts {
    int threads;                /* worker threads; 0: one per online CPU */
    enpu_gexec_kernels kernels; /* the golden's kernels (ENPU_GK_FAST) */
    enpu_eval_progress progress;
    void *ctx;
} enpu_eval_opts;

void enpu_eval_opts_default(enpu_eval_opts *o);

/* One input set. */
typedef struct enpu_eval_sample {
    int label;                 /* -1: none */
    int64_t top_float[ENPU_EVAL_TOPK], top_int8[ENPU_EVAL_TOPK]; /* best classes first
                                                                    (classes only; -1 past
                                                                    the class count) */
    bool tie_float, tie_int8;  /* several classes share the top score (enpu_top1): no decision */
    double sqnr_db;            /* first output, int8 vs float: +INFINITY equal, NAN no float */
    double max_abs_err;        /* first output, largest |int8 - float| (NAN: no float) */
} enpu_eval_sample;

/* One row of the per-layer table: a graph input (the input's quantization)
 * or a node of the quantized graph. */
typedef struct enpu_eval_layer {
    const char *name;   /* node name, or the graph input's name (points into the graph) */
    const char *op;     /* enpu_q_layer_op of the node, or "input" */
    int node;           /* node index in the quantized graph, -1 for a graph input */
    bool compared;      /* its output has a float twin */
    double mean_db;     /* mean over the input sets whose SQNR is finite; +INFINITY when
                           every one is exact */
    double worst_db;    /* lowest over the set (-INFINITY: a zero float tensor with error) */
    int worst_sample;   /* where the lowest was (-1: every one exact) */
    int n_exact;        /* input sets where the layer's output equals float exactly */
    double pooled_db;   /* over the whole set: 10 log10(sum float^2 / sum (int8 - float)^2) */
    double added_db;    /* the noise this layer adds, as an SQNR: -10 log10(NSR_out -
                           NSR_in), NSR = pooled noise / signal, NSR_in that of its noisiest
                           activation input (0 for a graph input); +INFINITY when it adds
                           none (moves, saturating clamps), NAN when not compared */
} enpu_eval_layer;

typedef struct enpu_eval_result {
    int n_samples;
    int n_labelled;
    bool have_float;       /* a float graph was given */
    bool classes;          /* the first output is a class vector (enpu_is_class_vector) */
    int64_t n_classes;
    const char *output;    /* name of the first output */
    /* counts over the labelled input sets */
    int top1_float, top5_float, top1_int8, top5_int8;
    int agree;             /* top-1 float == top-1 int8, over all input sets (a tie at the
                              top, in either, is never agreement nor a right top-1) */
    int ties_float, ties_int8; /* input sets with a tie at the top */
    double sqnr_mean_db, sqnr_median_db, sqnr_worst_db; /* first output, over the set (mean
                                                            over finite values; median: the
                                                            lower middle one) */
    int n_exact;           /* input sets whose first output equals float exactly */
    enpu_eval_sample *samples;      /* n_samples */
    int n_layers;
    enpu_eval_layer *layers;        /* graph inputs, then nodes in order */
    int threads;
    const char *kernels;            /* enpu_gexec_kernels_name of the golden */
    double seconds;                 /* wall time of the evaluation */
    double float_ms, int8_ms;       /* CPU time per input set: float reference, golden */
} enpu_eval_result;

void enpu_eval_result_free(enpu_eval_result *r);

/* Evaluates checked quantized graph qg against float graph g (NULL: int8
 * alone, no SQNR or float accuracy) on every input set of ds, with labels
 * (ds->n_samples entries, -1 = none; NULL: no labels).  Labels need a class
 * vector output, and each must be below the class count (ENPU_E_INVALID
 * naming the input set).  A run error stops the evaluation with the error of
 * the first failing input set (in data set order), named.  opts may be NULL
 * (the defaults). */
int enpu_eval_run(const enpu_graph *g, const enpu_graph *qg, const enpu_dataset *ds,
                  const int *labels, const enpu_eval_opts *opts, enpu_eval_result *r,
                  enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
