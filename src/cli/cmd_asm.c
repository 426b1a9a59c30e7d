/* easynpu asm LISTING.s -o PROG.enpu [--arch A] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "easynpu/file.h"
#include "easynpu/program.h"

static const char *HELP =
    "usage: easynpu asm LISTING.s -o PROG.enpu [--arch A]\n"
    "\n"
    "Assembles a listing (the format 'easynpu disasm' prints, docs/program.md)\n"
    "into a program file.  Every instruction and descriptor is validated against\n"
    "the arch; errors name the file, the line and the field.\n"
    "\n"
    "  -o FILE     the program to write (required; never the listing itself)\n"
    "  --arch A    the arch when the listing has no .arch directive (default\n"
    "              easynpu); if the listing has one, the two must agree\n";

#define ASM_MAX_BYTES ((size_t)4 << 30)

int enpu_cmd_asm(int argc, char **argv) {
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
        else return enpu_cli_usage("asm", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1) return enpu_cli_usage("asm", "expected one LISTING.s");
    if (!out) return enpu_cli_usage("asm", "-o PROG.enpu is required");
    const char *in = argv[optind];
    enpu_cli_io io = {0};
    enpu_cli_io_in(&io, in);
    enpu_cli_io_in(&io, enpu_cli_arch_file(arch));
    enpu_cli_io_out(&io, out);
    if (enpu_cli_check_io("asm", &io)) return 2;
    enpu_err err = {0};
    enpu_arch a;
    if (arch && enpu_arch_load(arch, &a, &err)) return enpu_cli_fail("asm", &err);
    uint8_t *text;
    size_t n;
    if (enpu_file_read(in, ASM_MAX_BYTES, &text, &n, &err)) return enpu_cli_fail("asm", &err);
    enpu_program p;
    int rc = enpu_program_asm((const char *)text, n, in, arch ? &a : NULL, &p, &err);
    free(text);
    if (rc) return enpu_cli_fail("asm", &err);
    rc = enpu_program_write(out, &p, &err);
    enpu_program_free(&p);
    if (rc) return enpu_cli_fail("asm", &err);
    return 0;
}
