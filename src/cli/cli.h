/* Shared pieces of the easynpu subcommands. */
#ifndef ENPU_CLI_H
#define ENPU_CLI_H

#include <stdbool.h>

#include "easynpu/error.h"

#define X(name, fn, summary) int fn(int argc, char **argv);
#include "cli/commands.def"
#undef X

/* Prints "easynpu CMD: message" for err to stderr and returns the exit code. */
int enpu_cli_fail(const char *cmd, const enpu_err *err);
/* Prints a usage error ("easynpu CMD: msg; see easynpu CMD --help") and returns 2. */
int enpu_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True if any argument is -h or --help. */
bool enpu_cli_wants_help(int argc, char **argv);
#include <stdio.h>

#define ENPU_CLI_MAX_IO 80

/* What a command reads and writes, for enpu_cli_check_io.  NULL entries are
 * skipped, so optional options can be added as they are. */
typedef struct enpu_cli_io {
    const char *out[ENPU_CLI_MAX_IO]; /* files written ("-": standard output) */
    const char *in[ENPU_CLI_MAX_IO];  /* files read ("-": standard input) */
    const char *lists[8];             /* comma-separated files and folders read (--calib, --test) */
    int n_out, n_in, n_lists;
} enpu_cli_io;

void enpu_cli_io_out(enpu_cli_io *io, const char *path);
void enpu_cli_io_in(enpu_cli_io *io, const char *path);
void enpu_cli_io_list(enpu_cli_io *io, const char *list);

/* Checks what a command will write before it does any work, so that a long
 * run never ends in "cannot write": every output is "-" (standard output,
 * once) or a path that is not a folder, whose folder exists and is
 * writable, that names no input (outputs never overwrite what the user
 * gave), no file or folder of a list (an output inside --calib DIR could
 * replace an input or join the set) and no other output; "-" is given for
 * one input at most.  Prints the one-line error and returns 2, else 0. */
int enpu_cli_check_io(const char *cmd, const enpu_cli_io *io);
/* Where a command prints its report: stdout, or stderr when an output is
 * "-" (standard output then carries that output alone). */
FILE *enpu_cli_text(const enpu_cli_io *io);
/* The file an --arch option reads (a path or *.json, as enpu_arch_load
 * decides), so that outputs are checked against it too; NULL for a preset
 * name or no option. */
const char *enpu_cli_arch_file(const char *arch);

#endif
