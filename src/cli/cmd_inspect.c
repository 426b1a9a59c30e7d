/* easynpu inspect MODEL.onnx|MODEL.tflite [--json FILE] [--bind NAME=FILE...] [--input-shape NAME=DIMS...] */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/bind.h"
#include "cli/cli.h"
#include "easynpu/file.h"
#include "easynpu/onnx.h"
#include "easynpu/tflite.h"
#include "report/model_table.h"

static const char *HELP =
    "usage: easynpu inspect MODEL.onnx|MODEL.tflite [--json FILE] [--bind NAME=FILE...]\n"
    "                       [--input-shape NAME=D0xD1x...]\n"
    "\n"
    "Imports an ONNX model (or an int8 TFLite model, as the quantized graph it\n"
    "becomes, docs/tflite.md) and prints its layer table: node name, op, input and\n"
    "output shapes, parameter count, multiply-accumulates (MACs) and attributes\n"
    "(k=kernel, s=stride, p=pads top,left,bottom,right, d=dilation, g=group),\n"
    "then the totals and the graph's inputs and outputs.\n"
    "\n"
    "  --json FILE   also write the table as JSON (top-level \"total_macs\",\n"
    "                \"total_params\", \"layers\": [{name, op, inputs, output_shape,\n"
    "                params, macs, attributes}])\n"
    ENPU_CLI_BIND_HELP
    ENPU_CLI_SHAPE_HELP;

int enpu_cmd_inspect(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {
        {"json", required_argument, 0, 'j'}, {"bind", required_argument, 0, 'b'},
        {"input-shape", required_argument, 0, 'S'}, {0, 0, 0, 0}};
    const char *json = NULL;
    enpu_cli_binds binds = {0};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j') json = optarg;
        else if (c == 'b') {
            if (enpu_cli_bind_add("inspect", &binds, optarg)) return 2;
        } else if (c == 'S') {
            if (enpu_cli_shape_add("inspect", &binds, optarg)) return 2;
        } else return enpu_cli_usage("inspect", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1) return enpu_cli_usage("inspect", "expected one MODEL.onnx or MODEL.tflite");
    const char *model = argv[optind];
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, model);
    enpu_cli_bind_inputs(&binds, &io);
    enpu_cli_io_out(&io, json);
    if (enpu_cli_check_io("inspect", &io)) return 2;
    FILE *out = enpu_cli_text(&io);
    enpu_err err = {0};
    enpu_graph *g = NULL;
    bool tfl = strcmp(enpu_path_ext(model), ".tflite") == 0;
    int load = tfl && binds.n ? enpu_fail(&err, ENPU_E_USAGE, "--bind is for an .onnx model, not %s",
                                          model)
               : tfl ? enpu_tflite_load(model, &g, &err)
                     : enpu_cli_onnx_load(model, &binds, &g, &err);
    enpu_cli_binds_free(&binds);
    if (load) return enpu_cli_fail("inspect", &err);
    if (tfl) fprintf(out, "model %s (TFLite int8, requant tflite; IR order NCHW)\n", model);
    else fprintf(out, "model %s (opset %d)\n", model, g->opset);
    enpu_report_model_table(out, g);
    int rc = 0;
    if (json && enpu_report_model_json(json, model, g, &err)) rc = enpu_cli_fail("inspect", &err);
    enpu_graph_free(g);
    return rc;
}
