#include "cli/bind.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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

int enpu_cli_onnx_load(const char *model, enpu_cli_binds *b, enpu_graph **g, enpu_err *err) {
    *g = NULL;
    for (int i = 0; i < b->n; i++) {
        enpu_buf_free(&b->value[i]);
        if (enpu_tensor_read(b->file[i], &b->value[i], err))
            return enpu_err_prefix(err, "%s: binding of input '%s'", model, b->name[i]);
        b->b[i] = (enpu_onnx_bind){b->name[i], b->file[i], &b->value[i]};
    }
    enpu_onnx_opts o = {0, b->b, b->n};
    return enpu_onnx_load_opts(model, &o, g, err);
}

void enpu_cli_binds_free(enpu_cli_binds *b) {
    for (int i = 0; i < b->n; i++) enpu_buf_free(&b->value[i]);
    memset(b, 0, sizeof *b);
}
