/* easynpu arch [NAME|FILE] [--json | --isa-table | --param-table | --systolic-table |
 *                           --cost-table] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "easynpu/arch.h"
#include "easynpu/isa.h"
#include "report/energy_report.h"

static const char *HELP =
    "usage: easynpu arch [NAME|FILE] [--json | --isa-table | --param-table |\n"
    "                    --systolic-table | --cost-table]\n"
    "\n"
    "Prints the resolved architecture description: every parameter with its unit\n"
    "and meaning, and derived figures (MAC units, peak rate, memory words, bits of\n"
    "the instruction used), then the cost figures and what they give: the energy of\n"
    "one action of every unit and the area of every unit (docs/energy.md).  NAME is\n"
    "a preset (easynpu, large, systolic, systolic-1x4, systolic-4x1, rowstat,\n"
    "eyeriss; default easynpu),\n"
    "FILE a JSON description (docs/arch.md): keys absent from it come from the\n"
    "preset named by its \"base\" key.\n"
    "\n"
    "  --json         the canonical JSON (its CRC32 is the fingerprint programs carry)\n"
    "  --isa-table    the opcode and instruction-field tables (markdown) for this arch,\n"
    "                 with widths and bit positions, as in docs/isa.md\n"
    "  --param-table  the parameter table of docs/arch.md (markdown)\n"
    "  --systolic-table  the systolic engine's parameters and presets, as in\n"
    "                 docs/systolic.md (markdown)\n"
    "  --cost-table   the cost-figure table of docs/arch.md, with sources (markdown)\n";

int enpu_cmd_arch(int argc, char **argv) {
    if (enpu_cli_wants_help(argc, argv)) {
        fputs(HELP, stdout);
        return 0;
    }
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"isa-table", no_argument, 0, 'i'},
                                         {"param-table", no_argument, 0, 'p'},
                                         {"systolic-table", no_argument, 0, 's'},
                                         {"cost-table", no_argument, 0, 'c'},
                                         {0, 0, 0, 0}};
    int mode = 0, c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == '?') return enpu_cli_usage("arch", "unknown option '%s'", argv[optind - 1]);
        if (mode && mode != c) return enpu_cli_usage("arch", "give one of --json, --isa-table, --param-table, --systolic-table, --cost-table");
        mode = c;
    }
    if (argc - optind > 1) return enpu_cli_usage("arch", "expected at most one NAME or FILE");
    if (mode == 'p' || mode == 's') {
        char *t = mode == 'p' ? enpu_arch_param_table_md() : enpu_arch_sya_table_md();
        if (!t) {
            enpu_err e = {ENPU_E_NOMEM, "out of memory"};
            return enpu_cli_fail("arch", &e);
        }
        fputs(t, stdout);
        free(t);
        return 0;
    }
    enpu_err err = {0};
    enpu_arch a;
    if (enpu_arch_load(argc > optind ? argv[optind] : "easynpu", &a, &err)) return enpu_cli_fail("arch", &err);
    if (mode == 'j') {
        char *j = enpu_arch_to_json(&a, 1);
        if (!j) {
            enpu_fail(&err, ENPU_E_NOMEM, "out of memory");
            return enpu_cli_fail("arch", &err);
        }
        fputs(j, stdout);
        free(j);
    } else if (mode == 'i') {
        char *t = enpu_isa_table_md(&a, &err);
        if (!t) return enpu_cli_fail("arch", &err);
        fputs(t, stdout);
        free(t);
    } else if (mode == 'c') {
        char *t = enpu_arch_cost_table_md();
        if (!t) {
            enpu_fail(&err, ENPU_E_NOMEM, "out of memory");
            return enpu_cli_fail("arch", &err);
        }
        fputs(t, stdout);
        free(t);
    } else {
        enpu_arch_print(&a, stdout);
        enpu_report_energy_costs(stdout, &a);
    }
    return 0;
}
