#include "cli/bind.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "easynpu/file.h"

int enpu_cli_bind_add(const char *cmd, enpu_cli_binds *b, char *arg) {
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return enpu_cli_usage(cmd, "--bind '%s': expected NAME=FILE (a graph input and a .npy or "
                              ".pb file)", arg);
    if (b->n == ENPU_CLI_MAX_BINDS)
        return enpu_cli_usage(cmd, "at most %d --bind", ENPU_CLI_MAX_BINDS);
    /* The first '=' splits: input names with '=' are rarer than such paths.
     * The name is cut in place, so nothing is allocated before the files are
     * read and a command may return early. */
    *eq = '\0';
    b->name[b->n] = arg;
    b->file[b->n] = eq + 1;
    b->n++;
    return 0;
}

void enpu_cli_bind_inputs(const enpu_cli_binds *b, enpu_cli_io *io) {
    for (int i = 0; i < b->n; i++) enpu_cli_io_in(io, b->file[i]);
}

/* A file given as an ONNX model that its bytes say is something else: what
 * it is and which command or option takes it. */
static int not_onnx(const char *model, enpu_err *err) {
    uint8_t *d = NULL;
    size_t n = 0;
    enpu_err e = {0};
    if (strcmp(model, "-") == 0 || enpu_file_read(model, (size_t)1 << 31, &d, &n, &e)) return 0;
    const char *k = enpu_file_kind(d, n);
    int rc = 0;
    if (k && strstr(k, "program"))
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s is %s, not a model: `easynpu sim %s --input FILE` runs it "
                       "(`run` takes the model it was compiled from)", model, k, model);
    else if (k && strstr(k, "tensor"))
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s is %s, not a model: give it as --input (or --calib)", model, k);
    else if (k && strstr(k, "TFLite"))
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s is %s: name it .tflite (its extension says how it is read)",
                       model, k);
    else if (k)
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s is %s, not an ONNX model: a quantized model must be named "
                       ".qjson, an arch is given with --arch", model, k);
    free(d);
    return rc;
}

int enpu_cli_onnx_load(const char *model, enpu_cli_binds *b, enpu_graph **g, enpu_err *err) {
    *g = NULL;
    int rc = not_onnx(model, err);
    if (rc) return rc;
    for (int i = 0; i < b->n; i++) {
        enpu_buf_free(&b->value[i]);
        if (enpu_tensor_read(b->file[i], &b->value[i], err))
            return enpu_err_prefix(err, "%s: binding of input '%s'", model, b->name[i]);
        b->b[i] = (enpu_onnx_bind){b->name[i], b->file[i], &b->value[i]};
    }
    enpu_onnx_opts o = {0, b->b, b->n, b->shapes, b->n_shapes};
    return enpu_onnx_load_opts(model, &o, g, err);
}

int enpu_cli_shape_add(const char *cmd, enpu_cli_binds *b, char *arg) {
    if (b->n_shapes == ENPU_CLI_MAX_BINDS)
        return enpu_cli_usage(cmd, "at most %d --input-shape", ENPU_CLI_MAX_BINDS);
    enpu_err err = {0};
    if (enpu_onnx_parse_input_shape(arg, &b->shapes[b->n_shapes], &err))
        return enpu_cli_usage(cmd, "%s", err.msg);
    for (int i = 0; i < b->n_shapes; i++)
        if (strcmp(b->shapes[i].name, b->shapes[b->n_shapes].name) == 0)
            return enpu_cli_usage(cmd, "--input-shape %s given twice", b->shapes[i].name);
    b->n_shapes++;
    return 0;
}

int64_t enpu_cli_batch(const char *cmd, const enpu_cli_binds *b) {
    int64_t batch = 1;
    for (int i = 0; i < b->n_shapes; i++) {
        const enpu_onnx_input_shape *s = &b->shapes[i];
        if (s->rank < 1 || s->dims[0] <= 1) continue;
        if (batch > 1 && s->dims[0] != batch) {
            enpu_cli_usage(cmd, "--input-shape: batches %lld and %lld differ (a batch is N images "
                           "of every input)", (long long)batch, (long long)s->dims[0]);
            return -1;
        }
        batch = s->dims[0];
    }
    return batch;
}

void enpu_cli_one_image(enpu_cli_binds *b) {
    for (int i = 0; i < b->n_shapes; i++)
        if (b->shapes[i].rank >= 1) b->shapes[i].dims[0] = 1;
}

int enpu_cli_one_image_note(const char *cmd, enpu_cli_binds *b, FILE *text, const char *built) {
    int64_t batch = enpu_cli_batch(cmd, b);
    if (batch < 0) return 2;
    if (batch > 1) {
        enpu_cli_one_image(b);
        fprintf(text, "note: batch %lld: %s for one image (`easynpu run` runs the %lld images "
                      "through it one after the other)\n", (long long)batch, built, (long long)batch);
    }
    return 0;
}

void enpu_cli_binds_free(enpu_cli_binds *b) {
    for (int i = 0; i < b->n; i++) enpu_buf_free(&b->value[i]);
    memset(b, 0, sizeof *b);
}
