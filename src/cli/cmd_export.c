/* easynpu export PROG.enpu --hex DIR [--arch A] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "easynpu/program.h"

static const char *HELP =
    "usage: easynpu export PROG.enpu --hex DIR [--arch A]\n"
    "\n"
    "Writes the program's memory images as $readmemh files for an RTL testbench\n"
    "into DIR (created if needed): itcm.hex (each 512-bit instruction as 4 lines\n"
    "of 128 bits, bits [127:0] first), weights.hex, dtcm.hex and skip.hex (one\n"
    "bus word per line, word 0 first; each line's hex digits are the word's bytes\n"
    "from the most significant down) and manifest.json (widths, depths, arch).\n"
    "Memory beyond an image is zero.  The program file is never overwritten.\n"
    "\n"
    "  --hex DIR   output directory\n"
    "  --arch A    refuse the program unless it was compiled for arch A\n";

int enpu_cmd_export(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {{"hex", required_argument, 0, 'x'},
                                         {"arch", required_argument, 0, 'a'},
                                         {0, 0, 0, 0}};
    const char *dir = NULL, *arch = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'x') dir = optarg;
        else if (c == 'a') arch = optarg;
        else return enpu_cli_usage("export", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1) return enpu_cli_usage("export", "expected one PROG.enpu");
    if (!dir) return enpu_cli_usage("export", "--hex DIR is required");
    const char *in = argv[optind];
    enpu_err err = {0};
    enpu_arch a;
    if (arch && enpu_arch_load(arch, &a, &err)) return enpu_cli_fail("export", &err);
    enpu_program p;
    if (enpu_program_read(in, arch ? &a : NULL, &p, &err)) return enpu_cli_fail("export", &err);
    const char *inputs[2] = {in, enpu_cli_arch_file(arch)};
    int rc = enpu_program_export_hex(&p, dir, inputs, 2, &err);
    enpu_program_free(&p);
    if (rc) return enpu_cli_fail("export", &err);
    for (int i = 0; enpu_hex_files[i]; i++) printf("wrote %s/%s\n", dir, enpu_hex_files[i]);
    return 0;
}
