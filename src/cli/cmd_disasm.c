/* easynpu disasm PROG.enpu [-o FILE] [--arch A] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "easynpu/file.h"
#include "easynpu/program.h"

static const char *HELP =
    "usage: easynpu disasm PROG.enpu [-o FILE] [--arch A]\n"
    "\n"
    "Prints the listing of a program: the arch as a .arch directive, one line per\n"
    "instruction (mnemonic, layer name, ONNX sources, every non-zero field), the\n"
    "IO, host-op and table descriptors, then the memory images as .hex data.\n"
    "'easynpu asm' turns the listing back into a byte-identical program, so a\n"
    "listing is also the way to hand-write a test program (docs/program.md).\n"
    "\n"
    "  -o FILE     write the listing to FILE instead of stdout (never the input)\n"
    "  --arch A    refuse the program unless it was compiled for arch A (a preset\n"
    "              name or a JSON file)\n";

int enpu_cmd_disasm(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"arch", required_argument, 0, 'a'},
                                         {0, 0, 0, 0}};
    const char *out = NULL, *arch = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o') out = optarg;
        else if (c == 'a') arch = optarg;
        else return enpu_cli_usage("disasm", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1) return enpu_cli_usage("disasm", "expected one PROG.enpu");
    const char *in = argv[optind];
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, in);
    enpu_cli_io_in(&io, enpu_cli_arch_file(arch));
    enpu_cli_io_out(&io, out);
    if (enpu_cli_check_io("disasm", &io)) return 2;
    enpu_err err = {0};
    enpu_arch a;
    if (arch && enpu_arch_load(arch, &a, &err)) return enpu_cli_fail("disasm", &err);
    enpu_program p;
    if (enpu_program_read(in, arch ? &a : NULL, &p, &err)) return enpu_cli_fail("disasm", &err);
    char *text = enpu_program_disasm(&p, &err);
    enpu_program_free(&p);
    if (!text) return enpu_cli_fail("disasm", &err);
    int rc = 0;
    if (out) {
        if (enpu_file_write_atomic(out, text, strlen(text), &err)) rc = enpu_cli_fail("disasm", &err);
    } else if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
        enpu_fail(&err, ENPU_E_IO, "cannot write to stdout");
        rc = enpu_cli_fail("disasm", &err);
    }
    free(text);
    return rc;
}
