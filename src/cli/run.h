/* What `easynpu run` (cmd_run.c) shares with its two helpers: run_report.c,
 * the comparison of several architectures and the JSON report, and
 * run_io.c, the TFLite model's inputs and outputs and batches. */
#ifndef ENPU_CLI_RUN_H
#define ENPU_CLI_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/accuracy.h"
#include "easynpu/compiler.h"
#include "easynpu/sim.h"

#define MAX_ARCHS 8

/* One architecture's run. */
typedef struct arch_run {
    const char *spec;
    enpu_arch arch;
    enpu_graph *qg;
    enpu_qreport qrep;        /* the quantizer's report (first arch, an .onnx) */
    enpu_program prog;
    bool have_prog;
    enpu_sim_result res;
    bool ran;
    int status;       /* 0, or the enpu_status that stopped this arch */
    char error[ENPU_ERR_MSG_MAX + 32];
    int golden_layers;
    bool golden_checked;
    FILE *note;               /* where a requant switch is said (the first arch), or NULL */
    uint64_t batch_cycles;    /* all the images of a batch (= res.total_cycles for one) */
    bool batched;             /* the batch ran as one program (enpu_model_batched_arch), not image by image */
    const char *trace, *vcd;  /* observation files to write after the run */
} arch_run;

/* The architectures side by side: cycles, energy, traffic by level
 * (runs that did not run are left out). */
void run_print_comparison(FILE *text, const arch_run *runs, int n);

/* The --json report at path: the first architecture's run in full, the
 * others' summaries, the batch, the accuracy and the front end's record
 * (frontend: NULL, or a JSON object this call does not keep). */
int run_write_json(const char *path, const char *model, const arch_run *runs, int n, int batch,
                   const enpu_accuracy *acc, int n_acc, json_t *frontend, enpu_err *err);

/* Input i of a .tflite model from path into IR order (*out malloc'd). */
int run_tflite_input(const enpu_graph *qg, int i, const char *path, int8_t **out, enpu_err *err);

/* Prints output i of a .tflite model in TFLite's order and, with path, writes it. */
int run_tflite_output(FILE *text, const enpu_graph *qg, int i, const enpu_buf *raw, const char *path,
                      enpu_err *err);

/* b grows by the images of more along dimension 0. */
int run_append_buf(enpu_buf *b, const enpu_buf *more, enpu_err *err);

/* A batch of N images split into N * n_in buffers of batch 1 (*out). */
int run_split_batch(const enpu_buf *files, int n_in, int64_t batch, const char *const *names, enpu_buf **out,
                    enpu_err *err);

#endif
