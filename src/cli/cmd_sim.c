/* easynpu sim PROG.enpu --input FILE... [--output FILE...] [--arch A]
 *             [--mode cycle|functional] [--json FILE] [--trace FILE]
 *             [--vcd FILE [--window A:B]] [--no-check] [--per-cycle] */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "easynpu/file.h"
#include "easynpu/program.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"
#include "easynpu/tensor_io.h"
#include "report/sim_report.h"

static const char *HELP =
    "usage: easynpu sim PROG.enpu --input FILE [--input FILE...] [--output FILE...]\n"
    "                   [--arch A] [--mode cycle|functional] [--json FILE]\n"
    "                   [--trace FILE] [--vcd FILE [--window A:B]] [--no-check]\n"
    "                   [--golden MODEL.qjson] [--per-cycle]\n"
    "\n"
    "Runs a compiled program on the simulated EasyNPU (docs/microarch.md) and\n"
    "prints the per-layer table: cycles, ideal cycles (MACs / MAC units),\n"
    "utilization, ratio to ideal, cycles by activity (compute, controller,\n"
    "pipeline fill, ifmap load, bus conflict, weight load, ofmap drain,\n"
    "pipeline drain), psum entries used; then the totals, the time at the\n"
    "arch's clock and the traffic of every memory and pad.\n"
    "\n"
    "Inputs are float tensors (.npy or ONNX .pb) in the model's order and\n"
    "shape, quantized with the program's input descriptors; outputs are\n"
    "written dequantized (float32), in the program's output order.\n"
    "\n"
    "  --input FILE      one per program input (repeat, or a comma-separated list)\n"
    "  --output FILE     one per program output (never an input file)\n"
    "  --arch A          the arch the program must have been compiled for\n"
    "                    (preset or JSON; default: the program's own)\n"
    "  --mode M          cycle (default): every unit advanced per clock;\n"
    "                    functional: same outputs, no timing\n"
    "  --no-check        cycle mode: skip the layer-by-layer check against the\n"
    "                    functional model (on by default: a mismatch names the\n"
    "                    layer, tensor coordinate, both values and the cycle)\n"
    "  --golden QJSON    also run the golden int8 reference (enpu_gexec) on the\n"
    "                    quantized graph the program was compiled from, and\n"
    "                    compare every layer output the program stores with\n"
    "                    the golden tensor of the same name, right after the\n"
    "                    layer ran, and the outputs\n"
    "  --json FILE       the report as JSON (\"bit_exact\", \"total\", \"area\",\n"
    "                    \"layers\"; energy_pj per layer and in total in cycle mode)\n"
    "  --trace FILE      Chrome trace-event JSON, one track per unit (open in\n"
    "                    https://ui.perfetto.dev or chrome://tracing)\n"
    "  --vcd FILE        VCD of the PE control signals (ps_addr, if_hw_addr,\n"
    "                    if_ch_addr, w_och_gcnt, ...) and bus valid/ready\n"
    "  --window A:B      cycles [A, B) dumped to the VCD (default 0:100000)\n"
    "  --per-cycle       cycle mode: step every unit in every cycle instead of\n"
    "                    fast-forwarding the stretches where the PE array\n"
    "                    provably computes (docs/microarch.md §15): the same\n"
    "                    results, slower; a debug switch\n"
    "\n"
    "Exit status: 0 success; 1 the check found a mismatch; 2 bad input or usage;\n"
    "4 an internal error (category `internal`: a bug in EasyNPU, e.g. the\n"
    "simulator's watchdog saw it stop making progress).\n";

#define MAX_FILES 64

static int split_list(char *arg, const char **out, int *n) {
    for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
        if (*n >= MAX_FILES) return -1;
        out[(*n)++] = tok;
    }
    return 0;
}

static int parse_window(const char *s, uint64_t *a, uint64_t *b) {
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end != ':') return -1;
    const char *t = end + 1;
    unsigned long long y = strtoull(t, &end, 10);
    if (end == t || *end || y <= x) return -1;
    *a = x;
    *b = y;
    return 0;
}

static void print_output(FILE *f, const enpu_buf *b) {
    int64_t n = enpu_buf_numel(b);
    fprintf(f, "output %s: [", b->name ? b->name : "");
    for (int i = 0; i < b->rank; i++) fprintf(f, i ? ",%lld" : "%lld", (long long)b->dims[i]);
    fprintf(f, "]");
    const float *v = b->data;
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i < 12) fprintf(f, i ? " %.6g" : " = %.6g", v[i]);
        if (v[i] > v[best]) best = i;
    }
    if (n > 12) fprintf(f, " ...");
    if (n > 1) fprintf(f, "  (argmax %lld)", (long long)best);
    fprintf(f, "\n");
}

int enpu_cmd_sim(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {
        {"input", required_argument, 0, 'i'}, {"output", required_argument, 0, 'o'},
        {"arch", required_argument, 0, 'a'},  {"mode", required_argument, 0, 'm'},
        {"json", required_argument, 0, 'j'},  {"trace", required_argument, 0, 't'},
        {"vcd", required_argument, 0, 'v'},   {"window", required_argument, 0, 'w'},
        {"no-check", no_argument, 0, 'n'},    {"golden", required_argument, 0, 'g'},
        {"per-cycle", no_argument, 0, 'p'},   {0, 0, 0, 0}};
    const char *ins[MAX_FILES], *outs[MAX_FILES];
    int n_in = 0, n_out = 0, c;
    const char *arch_spec = NULL, *json = NULL, *trace = NULL, *vcd = NULL, *window = NULL;
    const char *golden = NULL;
    int mode = ENPU_SIM_CYCLE;
    bool check = true, per_cycle = false;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (split_list(optarg, ins, &n_in)) return enpu_cli_usage("sim", "too many inputs");
            break;
        case 'o':
            if (split_list(optarg, outs, &n_out)) return enpu_cli_usage("sim", "too many outputs");
            break;
        case 'a': arch_spec = optarg; break;
        case 'm':
            mode = enpu_sim_mode_parse(optarg);
            if (mode < 0) return enpu_cli_usage("sim", "--mode '%s': expected cycle or functional", optarg);
            break;
        case 'j': json = optarg; break;
        case 't': trace = optarg; break;
        case 'v': vcd = optarg; break;
        case 'w': window = optarg; break;
        case 'n': check = false; break;
        case 'g': golden = optarg; break;
        case 'p': per_cycle = true; break;
        default: return enpu_cli_usage("sim", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1) return enpu_cli_usage("sim", "expected one PROG.enpu");
    const char *prog_path = argv[optind];
    uint64_t w0 = 0, w1 = 100000;
    if (window && parse_window(window, &w0, &w1))
        return enpu_cli_usage("sim", "--window '%s': expected A:B with A < B (cycles)", window);
    if (window && !vcd) return enpu_cli_usage("sim", "--window needs --vcd");
    if (mode == ENPU_SIM_FUNCTIONAL && (trace || vcd))
        return enpu_cli_usage("sim", "--trace and --vcd need --mode cycle (functional mode has no time)");
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, prog_path);
    for (int i = 0; i < n_in; i++) enpu_cli_io_in(&io, ins[i]);
    enpu_cli_io_in(&io, golden);
    enpu_cli_io_in(&io, enpu_cli_arch_file(arch_spec));
    for (int i = 0; i < n_out; i++) enpu_cli_io_out(&io, outs[i]);
    enpu_cli_io_out(&io, json);
    enpu_cli_io_out(&io, trace);
    enpu_cli_io_out(&io, vcd);
    if (enpu_cli_check_io("sim", &io)) return 2;
    FILE *text = enpu_cli_text(&io);
    enpu_err err = {0};
    enpu_arch arch;
    bool have_arch = false;
    if (arch_spec) {
        if (enpu_arch_load(arch_spec, &arch, &err)) return enpu_cli_fail("sim", &err);
        have_arch = true;
    }
    enpu_program prog;
    /* exit 2 for a bad file and for a program of another arch (incompatible) */
    if (enpu_program_read(prog_path, have_arch ? &arch : NULL, &prog, &err))
        return enpu_cli_fail("sim", &err);
    if (!have_arch) arch = prog.arch;
    int rc = 0, loaded = 0, want_in = 0, want_out = 0;
    enpu_buf bufs[MAX_FILES];
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    memset(&res, 0, sizeof res);
    enpu_graph *qg = NULL;
    enpu_golden_check gc = {0};
    for (int i = 0; i < prog.n_io; i++) {
        want_in += prog.io[i].dir == ENPU_IO_INPUT;
        want_out += prog.io[i].dir == ENPU_IO_OUTPUT;
    }
    if (n_in != want_in) {
        rc = enpu_cli_usage("sim", "%s has %d input(s), %d --input given", prog_path, want_in, n_in);
        goto done;
    }
    if (n_out && n_out != want_out) {
        rc = enpu_cli_usage("sim", "%s has %d output(s), %d --output given", prog_path, want_out, n_out);
        goto done;
    }
    for (; loaded < n_in; loaded++)
        if (enpu_tensor_read(ins[loaded], &bufs[loaded], &err)) {
            rc = enpu_cli_fail("sim", &err);
            goto done;
        }
    /* each file against its program input, named (an NHWC input may come
     * in the memory's order, which the simulator takes too) */
    for (int i = 0, k = 0; i < prog.n_io; i++) {
        const enpu_io_desc *d = &prog.io[i];
        if (d->dir != ENPU_IO_INPUT) continue;
        int64_t dims[ENPU_MAX_RANK];
        enpu_io_user_dims(d, dims);
        const enpu_buf *b = &bufs[k];
        if (!enpu_shape_fits(b->rank, b->dims, d->rank, dims) &&
            !(d->layout == ENPU_LAYOUT_NHWC && enpu_shape_fits(b->rank, b->dims, d->rank, d->dims))) {
            enpu_shape_error(&err, ins[k], d->name, b->rank, b->dims, d->rank, dims);
            rc = enpu_cli_fail("sim", &err);
            goto done;
        }
        k++;
    }
    if (golden) {
        if (enpu_qgraph_load(golden, &qg, &err) || enpu_gexec_new(qg, &gc.ex, &err)) {
            rc = enpu_cli_fail("sim", &err);
            goto done;
        }
        gc.qg = qg;
        /* another model's .qjson is bad input, said before the run (not a
         * layer "mismatch" found during it) */
        if (enpu_golden_check_match(qg, &prog, &err)) {
            enpu_err_prefix(&err, "%s", golden);
            rc = enpu_cli_fail("sim", &err);
            goto done;
        }
        if (qg->n_inputs != n_in) {
            rc = enpu_cli_usage("sim", "%s has %d input(s), the program %d", golden, qg->n_inputs, n_in);
            goto done;
        }
        if (enpu_gexec_run(gc.ex, bufs, &err)) {
            enpu_err_prefix(&err, "%s", golden);
            rc = enpu_cli_fail("sim", &err);
            goto done;
        }
    }
    enpu_sim_opts o = {0};
    o.mode = (enpu_sim_mode)mode;
    if (golden) {
        o.on_layer = enpu_golden_check_layer;
        o.cb_ctx = &gc;
    }
    o.check = check && mode == ENPU_SIM_CYCLE;
    o.trace = trace != NULL;
    o.vcd = vcd != NULL;
    o.vcd_from = w0;
    o.vcd_to = w1;
    o.per_cycle = per_cycle;
    if (enpu_sim_new(&prog, &arch, &o, &sim, &err)) {
        rc = enpu_cli_fail("sim", &err);
        goto done;
    }
    int st = enpu_sim_run(sim, bufs, n_in, &res, &err);
    if (st && st != ENPU_E_MISMATCH) {
        rc = enpu_cli_fail("sim", &err);
        goto done;
    }
    /* written on a mismatch too: they are what one debugs it with */
    enpu_err oerr = {0};
    if ((trace && enpu_report_trace(sim, trace, &oerr)) || (vcd && enpu_report_vcd(sim, vcd, &oerr))) {
        rc = enpu_cli_fail("sim", &oerr);
        goto done;
    }
    fprintf(text, "program %s on arch '%s'\n", prog_path, arch.name);
    enpu_report_sim_table(text, &arch, &res);
    if (st == ENPU_E_MISMATCH) {
        rc = enpu_cli_fail("sim", &err);
    } else {
        for (int i = 0; i < res.n_outputs; i++) print_output(text, &res.outputs[i]);
    }
    if (golden && st == 0) {
        /* the outputs too (float outputs of host ops included) */
        if (enpu_golden_check_outputs(&gc, &res, &err)) {
            res.bit_exact = false;
            rc = enpu_cli_fail("sim", &err);
        }
        if (!rc) {
            fprintf(text, "golden: %d layer outputs and %d output(s) bit-exact with the golden reference "
                   "(%s)\n", gc.compared, res.n_outputs, golden);
            if (mode == ENPU_SIM_FUNCTIONAL) res.bit_exact = res.checked = true;
        }
    }
    if (st == ENPU_E_MISMATCH) res.bit_exact = false;
    if (json && enpu_report_sim_json(json, prog_path, &arch, &res, &err)) {
        rc = enpu_cli_fail("sim", &err);
        goto done;
    }
    if (st == 0)
        for (int i = 0; i < n_out; i++)
            if (enpu_tensor_write(outs[i], &res.outputs[i], &err)) {
                rc = enpu_cli_fail("sim", &err);
                goto done;
            }
done:
    enpu_gexec_free(gc.ex);
    enpu_graph_free(qg);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    for (int i = 0; i < loaded; i++) enpu_buf_free(&bufs[i]);
    enpu_program_free(&prog);
    return rc;
}
