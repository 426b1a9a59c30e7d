/* easynpu run-float MODEL.onnx --input FILE... --output FILE... [--bind NAME=FILE...]
 *                   [--input-shape NAME=DIMS...] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bind.h"
#include "cli/cli.h"
#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/tensor_io.h"

static const char *HELP =
    "usage: easynpu run-float MODEL.onnx --input FILE [--input FILE...] [--output FILE...]\n"
    "                         [--bind NAME=FILE...] [--input-shape NAME=D0xD1x...]\n"
    "\n"
    "Runs the float32 reference executor on the model: the yardstick the int8\n"
    "path is measured against.  Inputs and outputs are given in the graph's order;\n"
    "each file is .npy or an ONNX TensorProto .pb, chosen by extension.  Without\n"
    "--output the outputs are printed (shape and the first values).\n"
    "\n"
    "  --input FILE    one per graph input not bound by --bind, in order\n"
    "  --output FILE   one per graph output, in order (never an input file)\n"
    ENPU_CLI_BIND_HELP
    ENPU_CLI_SHAPE_HELP
    "A batch (--input-shape NAME=Nx...) runs the N images of each input at once.\n";

#define MAX_FILES 64

static void print_output(FILE *f, const char *name, const enpu_buf *b) {
    int64_t n = enpu_buf_numel(b);
    fprintf(f, "output %s: [", name);
    for (int i = 0; i < b->rank; i++) fprintf(f, i ? ",%lld" : "%lld", (long long)b->dims[i]);
    fprintf(f, "]");
    const float *v = b->data;
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i < 16) fprintf(f, i ? " %.6g" : " = %.6g", v[i]);
        if (v[i] > v[best]) best = i;
    }
    if (n > 16) fprintf(f, " ...");
    if (n > 1) fprintf(f, "  (argmax %lld)", (long long)best);
    fprintf(f, "\n");
}

/* "1x26x49" (or "scalar") for a buffer's shape. */
static void buf_shape_str(const enpu_buf *b, char *buf, size_t n) {
    size_t o = 0;
    buf[0] = 0;
    if (b->rank == 0) snprintf(buf, n, "scalar");
    for (int i = 0; i < b->rank && o < n; i++) {
        int k = snprintf(buf + o, n - o, i ? "x%lld" : "%lld", (long long)b->dims[i]);
        if (k < 0) break;
        o += (size_t)k;
    }
}

int enpu_cmd_run_float(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {{"input", required_argument, 0, 'i'},
                                         {"output", required_argument, 0, 'o'},
                                         {"bind", required_argument, 0, 'b'},
                                         {"input-shape", required_argument, 0, 'S'},
                                         {0, 0, 0, 0}};
    const char *ins[MAX_FILES], *outs[MAX_FILES];
    int n_in = 0, n_out = 0, c, rc = 0;
    enpu_cli_binds binds = {0};
    enpu_err err = {0};
    enpu_graph *g = NULL;
    enpu_buf bufs[MAX_FILES];
    int loaded = 0;
    enpu_fexec *ex = NULL;
    const char *model = NULL;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'i' && n_in < MAX_FILES) ins[n_in++] = optarg;
        else if (c == 'o' && n_out < MAX_FILES) outs[n_out++] = optarg;
        else if (c == 'b') {
            if ((rc = enpu_cli_bind_add("run-float", &binds, optarg))) goto done;
        } else if (c == 'S') {
            if ((rc = enpu_cli_shape_add("run-float", &binds, optarg))) goto done;
        } else {
            rc = enpu_cli_usage("run-float", "unknown or incomplete option '%s'", argv[optind - 1]);
            goto done;
        }
    }
    if (argc - optind != 1) {
        rc = enpu_cli_usage("run-float", "expected one MODEL.onnx");
        goto done;
    }
    model = argv[optind];
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, model);
    for (int i = 0; i < n_in; i++) enpu_cli_io_in(&io, ins[i]);
    enpu_cli_bind_inputs(&binds, &io);
    for (int i = 0; i < n_out; i++) enpu_cli_io_out(&io, outs[i]);
    if (enpu_cli_check_io("run-float", &io)) {
        rc = 2;
        goto done;
    }
    FILE *text = enpu_cli_text(&io);
    if (enpu_cli_onnx_load(model, &binds, &g, &err)) {
        rc = enpu_cli_fail("run-float", &err);
        goto done;
    }
    if (n_in != g->n_inputs) {
        rc = enpu_cli_usage("run-float", "%s has %d input(s), %d --input given", model, g->n_inputs, n_in);
        goto done;
    }
    if (n_out && n_out != g->n_outputs) {
        rc = enpu_cli_usage("run-float", "%s has %d output(s), %d --output given", model, g->n_outputs, n_out);
        goto done;
    }
    for (; loaded < n_in; loaded++)
        if (enpu_tensor_read(ins[loaded], &bufs[loaded], &err)) {
            rc = enpu_cli_fail("run-float", &err);
            goto done;
        }
    /* A shape mismatch is the input file's fault: name it. */
    for (int i = 0; i < n_in; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i]];
        int same = bufs[i].rank == t->rank;
        for (int k = 0; same && k < t->rank; k++) same = bufs[i].dims[k] == t->dims[k];
        if (!same) {
            char want[128], have[128];
            buf_shape_str(&bufs[i], have, sizeof have);
            enpu_shape_str(t, want, sizeof want);
            enpu_fail(&err, ENPU_E_INVALID, "%s: shape %s does not match input #%d '%s' of %s (%s)",
                      ins[i], have, i, t->name, model, want);
            rc = enpu_cli_fail("run-float", &err);
            goto done;
        }
    }
    if (enpu_fexec_new(g, &ex, &err) || enpu_fexec_run(ex, bufs, &err)) {
        rc = enpu_cli_fail("run-float", &err);
        goto done;
    }
    for (int i = 0; i < g->n_outputs && !rc; i++) {
        enpu_buf o = {0};
        if (enpu_fexec_output(ex, i, &o, &err)) {
            rc = enpu_cli_fail("run-float", &err);
            break;
        }
        if (n_out) {
            if (enpu_tensor_write(outs[i], &o, &err)) rc = enpu_cli_fail("run-float", &err);
            else fprintf(text, "wrote %s\n", outs[i]);
        } else {
            print_output(text, g->tensors[g->outputs[i]].name, &o);
        }
        enpu_buf_free(&o);
    }
done:
    for (int i = 0; i < loaded; i++) enpu_buf_free(&bufs[i]);
    enpu_fexec_free(ex);
    enpu_graph_free(g);
    enpu_cli_binds_free(&binds);
    return rc;
}
