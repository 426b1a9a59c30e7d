/* Energy and area estimates (docs/energy.md).
 *
 * Energy is counted, not guessed: every access to every memory and scratch
 * pad and every datapath operation of a run is counted (by the simulator,
 * enpu_layer_stats, or without simulating by enpu_access_counts, which gives
 * the same counts), and each count is multiplied by the energy of one such
 * action.  The per-action energies and per-unit areas are derived from the
 * cost figures of the architecture description (arch.h ENPU_ARCH_COSTS:
 * published 45 nm figures with their sources) by the rules of
 * docs/energy.md, scaled to the arch's tech_nm and vdd_v.  Dynamic energy of
 * the counted actions only: no leakage, clock tree or control logic.
 *
 * Estimates without simulation: enpu_estimate_program fills one
 * enpu_layer_stats row per instruction from the compiler's schedule model
 * (cycles, activities, DRAM words; compiler.h enpu_model_program) and the
 * analytic access counts, so the energy of a compiled program costs a few
 * milliseconds -- what `easynpu sweep` evaluates per design point. */
#ifndef EASYNPU_ENERGY_H
#define EASYNPU_ENERGY_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/program.h"
#include "easynpu/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where energy goes: X(id, name, level).  One part per datapath operation
 * (sim.h ENPU_UNIT_OP_LIST), per memory and pad (ENPU_MEMORY_LIST, DRAM
 * last), and the bus words moved between the SRAMs and the PE array. */
#define ENPU_ENERGY_PART_LIST(X)                 \
    X(MAC, "mac", "datapath")                    \
    X(ALU, "alu", "datapath")                    \
    X(REQUANT, "requant", "datapath")            \
    X(LOOKUP, "lookup", "datapath")              \
    X(IFMAP_PAD, "ifmap_pad", "register file")   \
    X(WEIGHT_PAD, "weight_pad", "register file") \
    X(PSUM, "psum", "register file")             \
    X(MAIN_DTCM, "main_dtcm", "sram")            \
    X(SKIP_DTCM, "skip_dtcm", "sram")            \
    X(WEIGHT_MEM, "weight_mem", "sram")          \
    X(ITCM, "itcm", "sram")                      \
    X(BUS, "bus", "interconnect")                \
    X(DRAM, "dram", "dram")

typedef enum enpu_energy_part {
#define ENPU_X_EP(id, name, level) ENPU_EP_##id,
    ENPU_ENERGY_PART_LIST(ENPU_X_EP)
#undef ENPU_X_EP
    ENPU_EP_COUNT
} enpu_energy_part;

const char *enpu_energy_part_name(enpu_energy_part p);
/* "datapath", "register file", "sram", "interconnect", "dram". */
const char *enpu_energy_part_level(enpu_energy_part p);

/* Area by unit: X(id, name). */
#define ENPU_AREA_PART_LIST(X)      \
    X(MAC, "mac")                   \
    X(REQUANT, "requant")           \
    X(PSUM, "psum")                 \
    X(IFMAP_PAD, "ifmap_pad")       \
    X(WEIGHT_PAD, "weight_pad")     \
    X(PARAM_REGS, "param_regs")     \
    X(MAIN_DTCM, "main_dtcm")       \
    X(SKIP_DTCM, "skip_dtcm")       \
    X(WEIGHT_MEM, "weight_mem")     \
    X(ITCM, "itcm")

typedef enum enpu_area_part {
#define ENPU_X_AP(id, name) ENPU_AP_##id,
    ENPU_AREA_PART_LIST(ENPU_X_AP)
#undef ENPU_X_AP
    ENPU_AP_COUNT
} enpu_area_part;

const char *enpu_area_part_name(enpu_area_part p);

/* The energy of one action of every kind, for one arch (pJ), and the
 * technology factors applied to the 45 nm figures. */
typedef struct enpu_energy_costs {
    double uop_pj[ENPU_UOP_COUNT];  /* one datapath operation, one lane */
    double read_pj[ENPU_MEM_COUNT]; /* one counted read (a word; pads and psum: an entry) */
    double write_pj[ENPU_MEM_COUNT];
    double bus_word_pj;             /* one bus word between an SRAM and the PE array */
    double energy_scale;            /* logic and storage: tech_nm, vdd_v vs 45 nm, 0.9 V */
    double wire_scale;              /* wires: (vdd_v / 0.9)^2 */
    double area_scale;              /* tech_nm vs 45 nm */
} enpu_energy_costs;

/* Whether the energy and area model covers arch a's engine.  Its units
 * (PE lanes, ifmap and weight pads, psum buffers, the DTCMs) are EasyNPU's;
 * another engine's runs print no energy rather than a figure that leaves
 * out its own units (docs/energy.md). */
static inline bool enpu_energy_modelled(const enpu_arch *a) { return a->engine == ENPU_ENGINE_EASYNPU; }

/* Derives the per-action energies of arch a (valid) by the rules of
 * docs/energy.md. */
void enpu_energy_costs_of(const enpu_arch *a, enpu_energy_costs *c);

/* Energy of one set of counts (one layer, or a whole run), by part. */
typedef struct enpu_energy {
    double part_pj[ENPU_EP_COUNT];
    double total_pj;
} enpu_energy;

/* out = the counts times the costs.  Bus words are the accesses of the
 * main and skip DTCM, the weight memory and the ITCM. */
void enpu_energy_of(const enpu_energy_costs *c, const uint64_t reads[ENPU_MEM_COUNT],
                    const uint64_t writes[ENPU_MEM_COUNT], const uint64_t uops[ENPU_UOP_COUNT],
                    enpu_energy *out);

/* Area of arch a by unit (um^2, scaled to its tech_nm). */
typedef struct enpu_area {
    double part_um2[ENPU_AP_COUNT];
    double total_um2;
} enpu_area;

void enpu_area_of(const enpu_arch *a, enpu_area *out);

/* The figures of one run of `cycles` cycles using energy `pj` on arch a:
 * time (us) at its clock, average power (mW), energy-delay product (J*s). */
typedef struct enpu_energy_summary {
    double energy_pj, time_us, power_mw, edp_js;
} enpu_energy_summary;

void enpu_energy_summarize(const enpu_arch *a, uint64_t cycles, double pj, enpu_energy_summary *out);

/* Adds the access counts of program p (reads, writes per memory; uops) to
 * rows[0 .. p->n_instr), computed from the instruction fields by the rules
 * the simulator executes (docs/microarch.md §11, §12; docs/energy.md
 * "Counting without simulating"): per fused chain they equal the
 * simulator's counts exactly; per instruction so do the counts of the PE
 * array (pads read, psum, datapath operations) and the ITCM, while the
 * loader's, weight reader's and writers' counts of a chain go to its head
 * (loads, weights) and to the stage that writes (the simulator gives them
 * to the stage the PE array is in at that cycle).  DRAM words are not
 * counted here (the schedule model has them).  The program must be valid
 * (enpu_program_validate).  ENPU_E_NOMEM only. */
int enpu_access_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err);

/* The whole run without simulating: *rows (malloc'd, p->n_instr, freed by
 * the caller) get the name, op, instr, chain_head, cycles, activities and
 * DRAM words of the schedule model (enpu_model_program: equal to the
 * simulator's), the MACs of the program's LAYERS and the access counts;
 * *total the sums (name "total").  The program must be valid. */
int enpu_estimate_program(const enpu_program *p, enpu_layer_stats **rows,
                          enpu_layer_stats *total, enpu_err *err);
/* The same, the chains' cycles through a compile cache (compiler.h; NULL:
 * none), as a sweep shares one across its points. */
typedef struct enpu_compile_cache enpu_compile_cache;
int enpu_estimate_program_cached(const enpu_program *p, enpu_compile_cache *cache,
                                 enpu_layer_stats **rows, enpu_layer_stats *total, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
