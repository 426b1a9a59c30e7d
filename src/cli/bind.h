/* --bind NAME=FILE and --input-shape NAME=D0xD1x...: the commands that
 * import an ONNX model (inspect, run-float, quantize, compile, run) can give
 * a graph input a fixed value at import, read from a .npy or .pb file
 * (enpu_onnx_bind), or a static shape that fixes its symbolic dimensions
 * (enpu_onnx_input_shape). */
#ifndef ENPU_CLI_BIND_H
#define ENPU_CLI_BIND_H

#include <stdio.h>

#include "cli/cli.h"
#include "easynpu/onnx.h"

#define ENPU_CLI_MAX_BINDS 64

#define ENPU_CLI_BIND_HELP                                                              \
    "  --bind NAME=FILE   give graph input NAME the value in FILE (.npy or .pb) at\n"   \
    "                     import: it becomes a constant, e.g. a Clip min/max, a\n"      \
    "                     Reshape shape or Pad pads the model takes as an input;\n"     \
    "                     repeatable.  The value must have the input's dtype and\n"     \
    "                     shape; the bound input is no longer an --input\n"

#define ENPU_CLI_SHAPE_HELP                                                             \
    "  --input-shape NAME=D0xD1x...\n"                                                  \
    "                     the static shape of graph input NAME: fixes its symbolic\n"    \
    "                     dimensions (a time axis, the batch); repeatable.  A model's\n" \
    "                     shape computations are folded at import with it\n"

typedef struct enpu_cli_binds {
    int n;
    const char *name[ENPU_CLI_MAX_BINDS]; /* into the argument, cut at '=' */
    const char *file[ENPU_CLI_MAX_BINDS];
    enpu_buf value[ENPU_CLI_MAX_BINDS];
    enpu_onnx_bind b[ENPU_CLI_MAX_BINDS];
    int n_shapes;
    enpu_onnx_input_shape shapes[ENPU_CLI_MAX_BINDS];
} enpu_cli_binds;

/* Records one --input-shape NAME=D0xD1x... (cut in place: the argument must
 * stay alive); a malformed one is a usage error: prints it, returns 2. */
int enpu_cli_shape_add(const char *cmd, enpu_cli_binds *b, char *arg);
/* The batch the --input-shape options ask for: the largest dimension 0 given
 * (1 without any).  Two inputs given different batches > 1 is a usage error
 * (returns -1 after printing it). */
int64_t enpu_cli_batch(const char *cmd, const enpu_cli_binds *b);
/* Sets dimension 0 of every --input-shape to 1: the shapes of one image. */
void enpu_cli_one_image(enpu_cli_binds *b);
/* quantize and compile: a batch builds the one-image artefact (`built`:
 * "quantized", "compiled"), said in a note on text; returns 2 after a usage
 * error (enpu_cli_batch), else 0. */
int enpu_cli_one_image_note(const char *cmd, enpu_cli_binds *b, FILE *text, const char *built);

/* Records the argument of one --bind (cut in place at its '=': it must stay
 * alive); a malformed one ("NAME=FILE" with both parts non-empty) or one too
 * many is a usage error: prints it and returns 2.  Nothing is allocated
 * until enpu_cli_onnx_load reads the files. */
int enpu_cli_bind_add(const char *cmd, enpu_cli_binds *b, char *arg);
/* Adds the bound files to what a command reads (enpu_cli_check_io refuses an
 * output that names one). */
void enpu_cli_bind_inputs(const enpu_cli_binds *b, enpu_cli_io *io);
/* Reads the bound files and imports `model` with them.  A file that cannot
 * be read is an error naming the model, the input and the file; the
 * importer's binding errors name them too. */
int enpu_cli_onnx_load(const char *model, enpu_cli_binds *b, enpu_graph **g, enpu_err *err);
/* Frees what enpu_cli_bind_add and enpu_cli_onnx_load allocated. */
void enpu_cli_binds_free(enpu_cli_binds *b);

#endif
