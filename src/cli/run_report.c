/* easynpu run's report of several architectures side by side and its JSON
 * file (cli/run.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run.h"
#include "easynpu/file.h"
#include "report/energy_compare.h"
#include "report/sim_report.h"

/* Per-layer memory traffic of every architecture at every level of its
 * hierarchy (enpu_report_levels): what each dataflow reuses where. */
static void print_levels(FILE *text, const arch_run *runs, int n, const enpu_layer_stats *brows, int nb) {
    static const char *const lv[] = {"DRAM KB", "buf KB", "array k", "local k"};
    fprintf(text, "\nmemory traffic by level (DRAM and the on-chip buffer in KB; the array's networks and "
                  "the PEs' local buffers in thousands of values)\n%-28s", "layer");
    for (int a = 0; a < n; a++) fprintf(text, " | %-35.35s", runs[a].arch.name);
    fprintf(text, "\n%-28s", "");
    for (int a = 0; a < n; a++) {
        fprintf(text, " |");
        for (int l = 0; l < ENPU_LEVEL_COUNT; l++) fprintf(text, " %8s", lv[l]);
    }
    fprintf(text, "\n");
    for (int i = 0; i <= nb; i++) {
        const char *nm = i < nb ? brows[i].name : "total";
        if (i < nb && strcmp(brows[i].op, "end") == 0) continue;
        char name[32];
        snprintf(name, sizeof name, "%.27s", nm);
        fprintf(text, "%-28s", name);
        for (int a = 0; a < n; a++) {
            const enpu_layer_stats *m = NULL;
            int na = 0;
            const enpu_layer_stats *arows = runs[a].ran ? enpu_sim_result_rows(&runs[a].res, &na) : NULL;
            for (int k = 0; k < na && !m && i < nb; k++)
                if (strcmp(arows[k].name, nm) == 0) m = &arows[k];
            double lvl[ENPU_LEVEL_COUNT];
            if (i == nb && runs[a].ran) enpu_report_levels(&runs[a].arch, runs[a].res.reads, runs[a].res.writes, lvl);
            else if (m && !m->host) enpu_report_levels(&runs[a].arch, m->reads, m->writes, lvl);
            else {
                fprintf(text, " | %35s", !runs[a].ran ? "n/a" : m ? "host" : "-");
                continue;
            }
            fprintf(text, " | %8.1f %8.1f %8.1f %8.1f", lvl[0] / 1024, lvl[1] / 1024, lvl[2] / 1000, lvl[3] / 1000);
        }
        fprintf(text, "\n");
    }
}

/* Per-layer cycles of the same model on several architectures. */
/* On-chip and DRAM memory traffic of a row in KiB: the words read and
 * written of the main and skip DTCM, the weight memory and the DRAM, at the
 * arch's word width (pads and psum are registers inside an engine). */
static double traffic_kib(const enpu_arch *a, const uint64_t *reads, const uint64_t *writes) {
    static const enpu_memory mems[] = {ENPU_MEM_MAIN_DTCM, ENPU_MEM_SKIP_DTCM, ENPU_MEM_WEIGHT_MEM, ENPU_MEM_OFFCHIP};
    uint64_t words = 0;
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++) words += reads[mems[i]] + writes[mems[i]];
    return (double)words * (double)enpu_arch_word_bytes(a) / 1024.0;
}

/* Per-layer cycles, utilization and memory traffic of the same model on
 * several architectures (engines too), matched by layer name. */
void run_print_comparison(FILE *text, const arch_run *runs, int n) {
    fprintf(text, "\ncomparison across architectures (per layer: cycles, utilization, memory traffic in KiB "
                  "read + written)\n");
    fprintf(text, "%-28s", "layer");
    for (int a = 0; a < n; a++) fprintf(text, " %28.28s", runs[a].arch.name);
    fprintf(text, "\n");
    const arch_run *base = NULL;
    for (int a = 0; a < n && !base; a++)
        if (runs[a].ran) base = &runs[a];
    if (!base) return;
    int nb = 0;
    const enpu_layer_stats *brows = enpu_sim_result_rows(&base->res, &nb);
    for (int i = 0; i < nb; i++) {
        const enpu_layer_stats *l = &brows[i];
        char name[32];
        snprintf(name, sizeof name, "%.27s", l->name);
        fprintf(text, "%-28s", name);
        for (int a = 0; a < n; a++) {
            const enpu_layer_stats *m = NULL;
            int na = 0;
            const enpu_layer_stats *arows = runs[a].ran ? enpu_sim_result_rows(&runs[a].res, &na) : NULL;
            for (int k = 0; k < na && !m; k++)
                if (strcmp(arows[k].name, l->name) == 0) m = &arows[k];
            if (!m) fprintf(text, " %28s", runs[a].ran ? "-" : "n/a");
            else if (m->host) fprintf(text, " %12llu %15s", (unsigned long long)m->cycles, "host");
            else
                fprintf(text, " %12llu %5.1f%% %7.1fK", (unsigned long long)m->cycles,
                        100.0 * enpu_utilization(m->macs, (uint64_t)enpu_arch_mac_units(&runs[a].arch), m->cycles),
                        traffic_kib(&runs[a].arch, m->reads, m->writes));
        }
        fprintf(text, "\n");
    }
    fprintf(text, "%-28s", "total");
    for (int a = 0; a < n; a++) {
        if (!runs[a].ran) fprintf(text, " %28s", "does not run");
        else
            fprintf(text, " %12llu %5.1f%% %7.1fK", (unsigned long long)runs[a].res.total_cycles,
                    100.0 * runs[a].res.utilization,
                    traffic_kib(&runs[a].arch, runs[a].res.reads, runs[a].res.writes));
    }
    fprintf(text, "\n%-28s", "engine, MAC units");
    for (int a = 0; a < n; a++) {
        char e[48];
        snprintf(e, sizeof e, "%s, %lld", enpu_engine_name(runs[a].arch.engine),
                 (long long)enpu_arch_mac_units(&runs[a].arch));
        fprintf(text, " %28s", e);
    }
    fprintf(text, "\n%-28s", "cycles: speed-up vs first");
    for (int a = 0; a < n; a++) {
        if (runs[a].ran && runs[0].ran && runs[a].res.total_cycles)
            fprintf(text, " %27.2fx", (double)runs[0].res.total_cycles / (double)runs[a].res.total_cycles);
        else fprintf(text, " %28s", "-");
    }
    /* time = cycles / clock: a preset with another clock (large: 200 MHz)
     * changes the time rows at the same cycles */
    bool clocks_differ = false;
    fprintf(text, "\n%-28s", "clock (MHz)");
    for (int a = 0; a < n; a++) {
        fprintf(text, " %28g", runs[a].arch.clock_mhz);
        clocks_differ |= runs[a].arch.clock_mhz != runs[0].arch.clock_mhz;
    }
    fprintf(text, "\n%-28s", "time at clock (us)");
    for (int a = 0; a < n; a++) {
        if (runs[a].ran) fprintf(text, " %28.2f", runs[a].res.time_us);
        else fprintf(text, " %28s", "-");
    }
    fprintf(text, "\n%-28s", "time: speed-up vs first");
    for (int a = 0; a < n; a++) {
        if (runs[a].ran && runs[0].ran && runs[a].res.time_us > 0)
            fprintf(text, " %27.2fx", runs[0].res.time_us / runs[a].res.time_us);
        else fprintf(text, " %28s", "-");
    }
    fprintf(text, "\n");
    if (clocks_differ)
        fprintf(text, "note: the clocks differ: time compares clock and cycles, the cycle rows the "
               "microarchitecture alone\n");
    for (int a = 0; a < n; a++)
        if (!runs[a].ran) fprintf(text, "%s: %s\n", runs[a].spec, runs[a].error);
    print_levels(text, runs, n, brows, nb);
    const enpu_arch *archs[MAX_ARCHS];
    const enpu_sim_result *res[MAX_ARCHS];
    for (int a = 0; a < n; a++) archs[a] = &runs[a].arch, res[a] = runs[a].ran ? &runs[a].res : NULL;
    enpu_report_energy_compare(text, archs, res, n);
}

int run_write_json(const char *path, const char *model, const arch_run *runs, int n, int batch,
                      const enpu_accuracy *acc, int n_acc, json_t *frontend, enpu_err *err) {
    char *text = enpu_report_sim_json_text(model, &runs[0].arch, &runs[0].res);
    json_error_t je;
    json_t *root = text ? json_loads(text, 0, &je) : NULL;
    free(text);
    if (!root) {
        json_decref(frontend);
        return enpu_fail(err, ENPU_E_NOMEM, "%s: cannot build the JSON report", path);
    }
    if (frontend) json_object_set_new(root, "frontend", frontend);
    json_object_set_new(root, "golden_checked", json_boolean(runs[0].golden_checked));
    if (runs[0].golden_checked) {
        json_object_set_new(root, "checked", json_true());
        json_object_set_new(root, "bit_exact", json_true());
    }
    json_object_set_new(root, "golden_layers_compared", json_integer(runs[0].golden_layers));
    if (batch > 1) {
        json_t *b = json_object();
        json_object_set_new(b, "images", json_integer(batch));
        json_object_set_new(b, "cycles", json_integer((json_int_t)runs[0].batch_cycles));
        json_object_set_new(b, "cycles_per_image", json_integer((json_int_t)(runs[0].batch_cycles / (uint64_t)batch)));
        /* one program of the whole batch (the row-stationary engine), or the
         * one-image program run image after image */
        json_object_set_new(b, "one_program", json_boolean(runs[0].batched));
        json_object_set_new(root, "batch", b);
    }
    if (n_acc > 0) {
        json_t *f = json_array();
        for (int i = 0; i < n_acc; i++) json_array_append_new(f, enpu_accuracy_json(&acc[i]));
        json_object_set_new(root, "float_vs_int8", f);
    }
    if (n > 1) {
        json_t *archs = json_array();
        for (int a = 0; a < n; a++) {
            json_t *o = NULL;
            if (runs[a].ran) {
                char *t = enpu_report_sim_json_text(model, &runs[a].arch, &runs[a].res);
                o = t ? json_loads(t, 0, &je) : NULL;
                free(t);
            }
            if (!o) {
                o = json_object();
                json_object_set_new(o, "error", json_string(runs[a].error));
            }
            json_object_set_new(o, "arch_name", json_string(runs[a].arch.name));
            json_object_set_new(o, "golden_checked", json_boolean(runs[a].golden_checked));
            if (runs[a].golden_checked) {
                json_object_set_new(o, "checked", json_true());
                json_object_set_new(o, "bit_exact", json_true());
            }
            json_array_append_new(archs, o);
        }
        json_object_set_new(root, "archs", archs);
    }
    char *out = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    if (!out) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    int rc = enpu_file_write_atomic(path, out, strlen(out), err);
    free(out);
    return rc;
}

