/* easynpu compile MODEL.onnx|MODEL.qjson [--arch A] [--calib DIR] [-o PROG.enpu] [--json FILE]
 *                 [--bind NAME=FILE...] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pipeline.h"
#include "easynpu/compiler.h"
#include "easynpu/file.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "report/compile_report.h"

static const char *HELP =
    "usage: easynpu compile MODEL.onnx|MODEL.tflite|MODEL.qjson [--arch A] [--calib DIR|FILES]\n"
    "                       [-o PROG.enpu] [--json FILE] [--no-fuse] [--naive-tiling]\n"
    "                       [--schedule list|serial] [--search fast|exhaustive|legacy]\n"
    "                       [--bits 8|16 [--qformat]]\n"
    "                       [--bind NAME=FILE...] [--input-shape NAME=D0xD1x...]\n"
    "\n"
    "Maps a network onto the NPU (docs/compiler.md).  An .onnx model is first\n"
    "quantized (enpu_quantize_graph) with the arch's multiplier and accumulator\n"
    "widths and table segments -- on --calib inputs, or without them on the\n"
    "quantizer's documented fallback (8 synthetic inputs, with a warning); a\n"
    ".qjson is taken as it is.  Prints the per-layer mapping table (op and fused\n"
    "ops, input and output HxWxC, tile x,y and input tile x',y' ('sb' = single\n"
    "buffered), zs and z = output channels per block, kernel row band, b/m =\n"
    "broadcast/multicast, main-DTCM input/output and weight-memory addresses,\n"
    "modelled and ideal (MACs/PEs) cycles, their ratio and the utilization),\n"
    "the totals, memory use, how each data movement was realised (remap, copy\n"
    "layer or host) and the host ops.\n"
    "\n"
    "  --arch A           architecture: preset name (easynpu, large, rowstat,\n"
    "                     eyeriss) or JSON file (default easynpu)\n"
    "  --bits N           quantize activations and weights to 8 (default) or 16\n"
    "                     bits (16: the row-stationary engine, docs/rowstat.md)\n"
    "  --qformat          with --bits 16: power-of-two scales (Q-format fixed point)\n"
    "  --calib SPEC       calibration inputs (as for `easynpu quantize`)\n"
    "  -o, --output FILE  write the program (.enpu); never an input file\n"
    "  --json FILE        also write the report as JSON (\"layers\", \"total\",\n"
    "                     \"host_ops\", \"moves\", \"memory\")\n"
    "  --no-fuse          no hardware fusion (every node its own instruction)\n"
    "  --naive-tiling     fixed 1x1 output tiles instead of the tiling search\n"
    "                     (systolic engine: whole units, point groups outer)\n"
    "  --schedule S       list (default): DMA transfers overlap computation as far as\n"
    "                     the buffers allow; serial: every instruction waits for the\n"
    "                     one before it (the baseline the list schedule is measured against)\n"
    "  --search S         fast (default): the tiling search costs only the candidates\n"
    "                     whose lower bound can still win (branch and bound, the same\n"
    "                     choice); exhaustive: costs every candidate (the yardstick);\n"
    "                     legacy: the row-stationary engine's previous mapping search\n"
    "                     (whole-strip ifmaps, the best 12 by an estimate; others: fast)\n"
    "  --quiet            no quantizer warning on stderr\n"
    ENPU_CLI_BIND_HELP
    ENPU_CLI_SHAPE_HELP
    "                     (a batch N > 1: the program computes one image; `easynpu\n"
    "                     run` runs the N images through it one after the other;\n"
    "                     on a row-stationary arch one program computes the N images,\n"
    "                     its rs_conv several images per pass)\n"
    "\n"
    "Exit status: 0 compiled; 2 bad input, or the model does not fit the arch (the\n"
    "message says what needs how much and which preset or parameter would fit); 4\n"
    "an internal error (category `internal`: a bug in EasyNPU, e.g. a compiled\n"
    "program that its own validator rejects).\n";

int enpu_cmd_compile(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"arch", required_argument, 0, 'A'},
                                         {"calib", required_argument, 0, 'c'},
                                         {"json", required_argument, 0, 'j'},
                                         {"no-fuse", no_argument, 0, 'F'},
                                         {"naive-tiling", no_argument, 0, 'N'},
                                         {"schedule", required_argument, 0, 'S'},
                                         {"search", required_argument, 0, 'X'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"bind", required_argument, 0, 'b'},
                                         {"input-shape", required_argument, 0, 'I'},
                                         {"bits", required_argument, 0, 'B'},
                                         {"qformat", no_argument, 0, 'Q'},
                                         {0, 0, 0, 0}};
    const char *out = NULL, *arch_spec = "easynpu", *calib = NULL, *json = NULL;
    enpu_model bits = {0};
    enpu_cli_binds binds = {0};
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    bool quiet = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'A': arch_spec = optarg; break;
        case 'c': calib = optarg; break;
        case 'j': json = optarg; break;
        case 'F': co.no_fuse = true; break;
        case 'N': co.naive_tiling = true; break;
        case 'S':
            if (strcmp(optarg, "serial") == 0) co.serial_schedule = true;
            else if (strcmp(optarg, "list") != 0)
                return enpu_cli_usage("compile", "--schedule: '%s' is not list or serial", optarg);
            break;
        case 'X':
            if (strcmp(optarg, "exhaustive") == 0) co.search = ENPU_SEARCH_EXHAUSTIVE;
            else if (strcmp(optarg, "legacy") == 0) co.search = ENPU_SEARCH_LEGACY;
            else if (strcmp(optarg, "fast") != 0)
                return enpu_cli_usage("compile", "--search: '%s' is not fast, exhaustive or legacy", optarg);
            break;
        case 'q': quiet = true; break;
        case 'b':
            if (enpu_cli_bind_add("compile", &binds, optarg)) return 2;
            break;
        case 'I':
            if (enpu_cli_shape_add("compile", &binds, optarg)) return 2;
            break;
        case 'B':
            if (enpu_model_bits_arg(&bits, "compile", optarg)) return 2;
            break;
        case 'Q': bits.pow2 = true; break;
        default: return enpu_cli_usage("compile", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return enpu_cli_usage("compile", "expected one MODEL.onnx, MODEL.tflite or MODEL.qjson");
    const char *model = argv[optind];
    const char *ext = enpu_path_ext(model);
    if (strcmp(ext, ".qjson") == 0 && calib)
        return enpu_cli_usage("compile", "--calib is for an .onnx model (a .qjson is already quantized)");
    /* the --arch file is an input too ("a.json" in the current folder as well) */
    const char *arch_file = enpu_cli_arch_file(arch_spec);
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, model);
    enpu_cli_io_in(&io, arch_file);
    enpu_cli_io_list(&io, calib);
    enpu_cli_bind_inputs(&binds, &io);
    enpu_cli_io_out(&io, out);
    enpu_cli_io_out(&io, json);
    if (enpu_cli_check_io("compile", &io)) return 2;
    FILE *text = enpu_cli_text(&io);

    enpu_err err = {0};
    enpu_arch arch;
    if (enpu_arch_load(arch_spec, &arch, &err)) return enpu_cli_fail("compile", &err);
    if (enpu_compile_arch_check(&arch, &err)) {
        if (arch_file) enpu_err_prefix(&err, "%s", arch_file);
        return enpu_cli_fail("compile", &err);
    }
    enpu_model m;
    enpu_graph *qg = NULL;
    int rc = 0;
    enpu_program prog;
    enpu_program_init(&prog, &arch);
    enpu_compile_report rep;
    memset(&rep, 0, sizeof rep);
    if (bits.pow2 && bits.bits != 16) {
        enpu_cli_binds_free(&binds);
        return enpu_cli_usage("compile", "--qformat needs --bits 16");
    }
    /* a batch on the row-stationary engine: one program of the N images
     * (the model loaded again at batch N, enpu_model_load_batch) */
    const int64_t batch = enpu_cli_batch("compile", &binds);
    bool batched = batch > 1 && enpu_model_batched_arch(&arch, batch) && strcmp(enpu_path_ext(model), ".onnx") == 0;
    enpu_cli_binds bshapes = binds;
    enpu_model mb = {0};
    if (batched) {
        enpu_cli_one_image(&binds);
    } else if (enpu_cli_one_image_note("compile", &binds, text, "compiled")) {
        enpu_cli_binds_free(&binds);
        return 2;
    }
    int mrc = enpu_model_load(&m, model, calib, &binds, &err);
    m.bits = bits.bits, m.pow2 = bits.pow2;
    if (!mrc && batched && enpu_model_load_batch(&m, model, &bshapes, batch, &mb, &err)) {
        /* a model that fixes batch 1 (a Reshape to [1, ...]) compiles for one image */
        fprintf(text, "note: batch %lld: the model does not take the batch (%s); compiled for one image\n",
                (long long)batch, err.msg);
        enpu_model_free(&mb);
        memset(&err, 0, sizeof err);
        batched = false;
    } else if (!mrc && batched) {
        fprintf(text, "note: batch %lld: one program of the %lld images (rs_conv of several images per pass)\n",
                (long long)batch, (long long)batch);
    }
    if (mrc || enpu_model_quantize(batched ? &mb : &m, &arch, quiet, &qg, NULL, &err) ||
        enpu_model_fit_requant(qg, &arch, text, &err)) {
        rc = enpu_cli_fail("compile", &err);
        goto done;
    }
    if (enpu_compile(qg, &arch, &co, &prog, &rep, &err)) {
        enpu_err_prefix(&err, "%s", model);
        rc = enpu_cli_fail("compile", &err);
        goto done;
    }
    fprintf(text, "model %s\n", model);
    enpu_compile_report_print(text, &rep);
    if (out && enpu_program_write(out, &prog, &err)) {
        rc = enpu_cli_fail("compile", &err);
        goto done;
    }
    if (json && enpu_compile_report_save_json(json, &rep, &err)) {
        rc = enpu_cli_fail("compile", &err);
        goto done;
    }
    if (out || json)
        fprintf(text, "wrote %s%s%s\n", out ? out : "", out && json ? " and " : "", json ? json : "");
done:
    enpu_compile_report_free(&rep);
    enpu_program_free(&prog);
    enpu_model_free(&m);
    enpu_model_free(&mb);
    enpu_graph_free(qg);
    enpu_cli_binds_free(&binds);
    enpu_cli_binds_free(&bshapes);
    return rc;
}
