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
/* Refuses (returns nonzero after printing) if `out` names the same file as any
 * of the n inputs: outputs never overwrite what the user gave. */
int enpu_cli_check_output(const char *cmd, const char *out, const char *const *inputs, int n);
/* The same against every item of a comma-separated list of files (--calib). */
int enpu_cli_check_output_list(const char *cmd, const char *out, const char *list);
/* The file an --arch option reads (a path or *.json, as enpu_arch_load
 * decides), so that outputs are checked against it too; NULL for a preset
 * name or no option. */
const char *enpu_cli_arch_file(const char *arch);

#endif
