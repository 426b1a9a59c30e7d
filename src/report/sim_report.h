/* Reports of a simulation: the per-layer text table, the JSON report, and
 * (sim_report_hooks.h) the Chrome trace-event and VCD writers the cycle
 * engine feeds. */
#ifndef ENPU_SIM_REPORT_H
#define ENPU_SIM_REPORT_H

#include <stdio.h>

#include "easynpu/sim.h"

/* A layer's roofline point: its DRAM traffic (its transfers' bytes), the
 * bytes the roofline uses -- those the channel moved during the layer's own
 * cycles when the engine measured them (enpu_layer_stats.dram_spanned),
 * which keeps every point under the roof -- its arithmetic intensity (MACs
 * per such byte; infinite without), whether DRAM bandwidth bounds it
 * (moving those bytes at the arch's DRAM rate takes longer than its MACs on
 * every MAC unit), the roof min(MAC units, intensity x bytes per cycle) and
 * the MACs per cycle it achieved. */
typedef struct enpu_roofline {
    uint64_t dram_read_bytes, dram_write_bytes;
    double bytes;
    double intensity, roof, achieved;
    bool dram_bound;
} enpu_roofline;
void enpu_report_roofline(const enpu_arch *a, const enpu_layer_stats *st, enpu_roofline *out);

/* The memory hierarchy's levels, for comparing engines: the DRAM, the
 * on-chip buffer (EasyNPU: its DTCMs and weight memory; rowstat: the global
 * buffer; systolic: its two SRAMs), the array's networks (values delivered
 * into the PEs' scratch pads / FIFOs and loop buffers; systolic: operand
 * values latched from PE to PE) and the PEs' local buffers (pads or loop
 * buffers, FIFO, psum registers or RAM: entries read and written;
 * systolic: operand registers read, accumulator entries read and written). */
typedef enum enpu_level {
    ENPU_LEVEL_DRAM = 0, ENPU_LEVEL_BUFFER, ENPU_LEVEL_ARRAY, ENPU_LEVEL_LOCAL, ENPU_LEVEL_COUNT
} enpu_level;
/* The traffic of a row (or the totals) at each level: DRAM and buffer in
 * bytes, array and local in values (entries). */
void enpu_report_levels(const enpu_arch *a, const uint64_t *reads, const uint64_t *writes,
                        double out[ENPU_LEVEL_COUNT]);

/* Per-layer table (cycles, ideal, utilization, ratio to ideal, cycles by
 * activity; with DRAM traffic: the instructions of each layer, its DRAM
 * kilobytes and what bounds it), the totals, time at the arch's clock,
 * memory traffic and (cycle mode) the energy lines. */
void enpu_report_sim_table(FILE *f, const enpu_arch *a, const enpu_sim_result *r);

/* The JSON report as a jansson-free string (malloc'd): "program", "arch",
 * "mode", "clock_mhz", "mac_units", "checked", "bit_exact", "mismatch"
 * (when found), "total": {"cycles", "ideal_cycles", "macs", "utilization",
 * "ratio_to_ideal", "time_us", "activities", "reads", "writes", "uops",
 * and in cycle mode "energy_pj", "energy_parts_pj", "energy_per_inference_uj",
 * "avg_power_mw", "edp_js"}, "area" {"total_um2", "total_mm2", "parts_um2"},
 * "layers": [{"name", "op", "instr", "chain_head", "start_cycle", "cycles",
 * "ideal_cycles", "compute_model", "macs", "utilization", "ratio_to_ideal",
 * "psum_peak", "host", "activities", "reads", "writes", "uops", and in cycle
 * mode "energy_pj", "energy_parts_pj"}] (docs/energy.md). */
char *enpu_report_sim_json_text(const char *program, const enpu_arch *a,
                                const enpu_sim_result *r);
/* The same, written atomically to path. */
int enpu_report_sim_json(const char *path, const char *program, const enpu_arch *a,
                         const enpu_sim_result *r, enpu_err *err);

/* After a cycle-mode run with opts.trace / opts.vcd: the Chrome trace-event
 * JSON (Perfetto, chrome://tracing; one track per hardware unit, times in
 * microseconds at the clock) and the VCD of the engine's control signals in
 * the recorded window, written atomically.  ENPU_E_USAGE when nothing was
 * recorded. */
int enpu_report_trace(const enpu_sim *sim, const char *path, enpu_err *err);
int enpu_report_vcd(const enpu_sim *sim, const char *path, enpu_err *err);

#endif
