/* easynpu quantize MODEL.onnx [--calib SPEC] [...] -o MODEL.qjson [--json REPORT.json]
 *                  [--bind NAME=FILE...] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bind.h"
#include "cli/cli.h"
#include "easynpu/file.h"
#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/tflite.h"

static const char *HELP =
    "usage: easynpu quantize MODEL.onnx|MODEL.tflite -o MODEL.qjson [--calib DIR|FILES]\n"
    "                        [--percentile P]\n"
    "                        [--acc-bits N] [--mult-bits N] [--segments N] [--arch A]\n"
    "                        [--bits 8|16 [--qformat]]\n"
    "                        [--test DIR|FILES ...] [--json REPORT.json] [--bind NAME=FILE...]\n"
    "                        [--input-shape NAME=D0xD1x...]\n"
    "\n"
    "Post-training int8 quantization (docs/quantization.md): rewrites the float\n"
    "graph (constant folding, bias/BatchNorm folding, MatMul/Gemm to FC), observes\n"
    "activation ranges on the float reference, and writes the int8 graph the NPU\n"
    "runs (.qjson).  Prints the report: per layer its scales and zero points, the\n"
    "SQNR of its output against the float reference, table errors in LSB; end to\n"
    "end the SQNR, max error and top-1 agreement of the first output.\n"
    "\n"
    "  -o, --output FILE  the quantized graph (.qjson); never an input file\n"
    "  --calib SPEC       calibration inputs: a folder (its .npy/.pb files sorted by\n"
    "                     name; only input_* ones if any, as in an ONNX\n"
    "                     test_data_set_N) or comma-separated files and folders.\n"
    "                     Without it: 8 synthetic N(0,1) inputs, with a warning\n"
    "  --percentile P     clip each activation range to its P-th percentile\n"
    "                     (e.g. 99.99) instead of min/max\n"
    "  --acc-bits N       accumulator width to prove against (16..32, default 32)\n"
    "  --mult-bits N      requantization multiplier width (2..31, default 20)\n"
    "  --segments N       PWL table segments (power of two, default 16)\n"
    "  --arch A           take the widths above from an architecture (preset or\n"
    "                     JSON file), and the ops its engine leaves to the host\n"
    "                     (rowstat, eyeriss: add, mul, tables, max pooling)\n"
    "  --bits N           8 (default) or 16: int16 activations and weights,\n"
    "                     symmetric (docs/numerics.md, 16-bit data)\n"
    "  --qformat          with --bits 16: power-of-two scales (Q-format fixed point)\n"
    "  --test SPEC...     compute the report's figures on these inputs instead of\n"
    "                     the calibration set (repeatable; further arguments after\n"
    "                     the model are taken as more test specs)\n"
    "  --json FILE        also write the report as JSON\n"
    "  --quiet            no warning on stderr (the report still says it)\n"
    ENPU_CLI_BIND_HELP
    ENPU_CLI_SHAPE_HELP
    "                     (a batch N > 1: the graph is quantized for one image;\n"
    "                     `easynpu run` runs N images through it)\n";

#define MAX_SPECS 256

static int parse_int(const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int enpu_cmd_quantize(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"calib", required_argument, 0, 'c'},
                                         {"percentile", required_argument, 0, 'p'},
                                         {"acc-bits", required_argument, 0, 'a'},
                                         {"mult-bits", required_argument, 0, 'm'},
                                         {"segments", required_argument, 0, 's'},
                                         {"test", required_argument, 0, 't'},
                                         {"json", required_argument, 0, 'j'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"bind", required_argument, 0, 'b'},
                                         {"input-shape", required_argument, 0, 'S'},
                                         {"arch", required_argument, 0, 'A'},
                                         {"bits", required_argument, 0, 'B'},
                                         {"qformat", no_argument, 0, 'Q'},
                                         {0, 0, 0, 0}};
    enpu_cli_binds binds = {0};
    const char *arch_spec = NULL;
    bool widths = false; /* --acc-bits, --mult-bits or --segments given */
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    const char *out = NULL, *calib = NULL, *json = NULL, *tests[MAX_SPECS];
    int n_tests = 0, c;
    long v;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'c': calib = optarg; break;
        case 'j': json = optarg; break;
        case 'q': qo.quiet = true; break;
        case 'b':
            if (enpu_cli_bind_add("quantize", &binds, optarg)) return 2;
            break;
        case 'S':
            if (enpu_cli_shape_add("quantize", &binds, optarg)) return 2;
            break;
        case 'A': arch_spec = optarg; break;
        case 'B':
            if (strcmp(optarg, "8") && strcmp(optarg, "16"))
                return enpu_cli_usage("quantize", "--bits '%s': 8 or 16 expected", optarg);
            qo.bits = atoi(optarg);
            break;
        case 'Q': qo.pow2 = true; break;
        case 't':
            if (n_tests >= MAX_SPECS) return enpu_cli_usage("quantize", "too many --test specs");
            tests[n_tests++] = optarg;
            break;
        case 'p': {
            char *end;
            double p = strtod(optarg, &end);
            if (end == optarg || *end || !(p > 50.0 && p <= 100.0))
                return enpu_cli_usage("quantize", "--percentile '%s': a number in (50, 100] expected",
                                      optarg);
            qo.method = ENPU_CALIB_PERCENTILE;
            qo.percentile = p;
            break;
        }
        case 'a':
            if (parse_int(optarg, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX, &v))
                return enpu_cli_usage("quantize", "--acc-bits '%s': an integer in %d..%d expected",
                                      optarg, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX);
            qo.acc_bits = (int)v;
            widths = true;
            break;
        case 'm':
            if (parse_int(optarg, 2, ENPU_MULT_BITS_MAX, &v))
                return enpu_cli_usage("quantize", "--mult-bits '%s': an integer in 2..%d expected",
                                      optarg, ENPU_MULT_BITS_MAX);
            qo.mult_bits = (int)v;
            widths = true;
            break;
        case 's':
            if (parse_int(optarg, 1, ENPU_PWL_SEGMENTS_MAX, &v) || (v & (v - 1)))
                return enpu_cli_usage("quantize", "--segments '%s': a power of two in 1..%d expected",
                                      optarg, ENPU_PWL_SEGMENTS_MAX);
            qo.act_segments = (int)v;
            widths = true;
            break;
        default:
            return enpu_cli_usage("quantize", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind < 1) return enpu_cli_usage("quantize", "expected MODEL.onnx");
    const char *model = argv[optind++];
    if (argc - optind > 0 && n_tests == 0)
        return enpu_cli_usage("quantize", "unexpected argument '%s'", argv[optind]);
    for (; optind < argc; optind++) {
        if (n_tests >= MAX_SPECS) return enpu_cli_usage("quantize", "too many --test specs");
        tests[n_tests++] = argv[optind];
    }
    if (!out) return enpu_cli_usage("quantize", "-o MODEL.qjson is required");
    if (qo.pow2 && qo.bits != 16) return enpu_cli_usage("quantize", "--qformat needs --bits 16");
    if (arch_spec && widths)
        return enpu_cli_usage("quantize", "--arch gives the widths: no --acc-bits, --mult-bits or --segments");
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, model);
    enpu_cli_io_list(&io, calib);
    for (int k = 0; k < n_tests; k++) enpu_cli_io_list(&io, tests[k]);
    enpu_cli_bind_inputs(&binds, &io);
    enpu_cli_io_out(&io, out);
    enpu_cli_io_out(&io, json);
    if (enpu_cli_check_io("quantize", &io)) return 2;
    FILE *text = enpu_cli_text(&io);

    enpu_err err = {0};
    if (arch_spec) {
        enpu_arch arch;
        if (enpu_arch_load(arch_spec, &arch, &err)) return enpu_cli_fail("quantize", &err);
        /* what the arch decides (widths, host kinds); the options given stay */
        enpu_quant_opts aq;
        enpu_compile_quant_opts(&arch, &aq);
        qo.mult_bits = aq.mult_bits, qo.acc_bits = aq.acc_bits, qo.act_segments = aq.act_segments;
        qo.wide_acc_bits = aq.wide_acc_bits, qo.host_kinds = aq.host_kinds;
    }
    enpu_graph *g = NULL, *qg = NULL;
    if (strcmp(enpu_path_ext(model), ".tflite") == 0) {
        /* already int8: the import is the quantized graph (docs/tflite.md) */
        bool extra = calib || n_tests || binds.n;
        enpu_cli_binds_free(&binds);
        if (extra)
            return enpu_cli_usage("quantize", "%s carries its own int8 parameters: --calib, --test "
                                  "and --bind are for an .onnx model", model);
        if (enpu_tflite_load(model, &qg, &err) || enpu_qgraph_save(out, qg, &err)) {
            enpu_graph_free(qg);
            return enpu_cli_fail("quantize", &err);
        }
        fprintf(text, "wrote %s: the TFLite model's own int8 parameters (requant tflite; nothing "
                "calibrated)\n", out);
        enpu_graph_free(qg);
        return 0;
    }
    enpu_buf *cal = NULL, *test = NULL;
    int n_cal = 0, n_test = 0, rc = 0;
    enpu_qreport rep;
    memset(&rep, 0, sizeof rep);
    if (enpu_cli_one_image_note("quantize", &binds, text, "quantized")) {
        enpu_cli_binds_free(&binds);
        return 2;
    }
    if (enpu_cli_onnx_load(model, &binds, &g, &err)) {
        enpu_cli_binds_free(&binds);
        return enpu_cli_fail("quantize", &err);
    }
    if (calib && enpu_calib_load(g, calib, &cal, &n_cal, &err)) {
        rc = enpu_cli_fail("quantize", &err);
        goto done;
    }
    for (int k = 0; k < n_tests; k++)
        if (enpu_calib_append(g, tests[k], &test, &n_test, &err)) {
            rc = enpu_cli_fail("quantize", &err);
            goto done;
        }
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, &rep, &err)) {
        enpu_err_prefix(&err, "%s", model);
        rc = enpu_cli_fail("quantize", &err);
        goto done;
    }
    if (enpu_qgraph_save(out, qg, &err)) {
        rc = enpu_cli_fail("quantize", &err);
        goto done;
    }
    if (n_test > 0) {
        rep.on_test_set = true;
        if (enpu_qreport_eval(g, qg, test, n_test, &rep, &err)) {
            rc = enpu_cli_fail("quantize", &err);
            goto done;
        }
    }
    enpu_qreport_print(text, &rep);
    if (json && enpu_qreport_save_json(json, &rep, &err)) {
        rc = enpu_cli_fail("quantize", &err);
        goto done;
    }
    fprintf(text, "wrote %s%s%s\n", out, json ? " and " : "", json ? json : "");
done:
    enpu_qreport_free(&rep);
    enpu_calib_free(cal, n_cal * (g ? g->n_inputs : 0));
    enpu_calib_free(test, n_test * (g ? g->n_inputs : 0));
    enpu_graph_free(qg);
    enpu_graph_free(g);
    enpu_cli_binds_free(&binds);
    return rc;
}
