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

/* Where energy goes: X(id, name, level, engines), `engines` the mask of the
 * engines that have the unit (sim.h ENPU_ENG_*).  One part per datapath
 * operation (sim.h ENPU_UNIT_OP_LIST; mac16 goes to mac), per counted
 * memory, pad and transfer (ENPU_MEMORY_LIST), and the wires: the bus
 * words between the SRAMs and the PE array, the systolic array's hops from
 * PE to PE.  Levels, as Eyeriss and Timeloop break energy down: datapath,
 * register file (pads, scratchpads, PE registers), global buffer (the
 * on-chip SRAMs), network (buses, multicast networks, PE links, MUXes),
 * dram. */
#define ENPU_ENERGY_PART_LIST(X)                                                   \
    X(MAC, "mac", "datapath", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)                 \
    X(ALU, "alu", "datapath", ENPU_ENG_E | ENPU_ENG_R)                             \
    X(REQUANT, "requant", "datapath", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)         \
    X(LOOKUP, "lookup", "datapath", ENPU_ENG_E)                                    \
    X(IFMAP_PAD, "ifmap_pad", "register file", ENPU_ENG_E)                         \
    X(WEIGHT_PAD, "weight_pad", "register file", ENPU_ENG_E)                       \
    X(PSUM, "psum", "register file", ENPU_ENG_E | ENPU_ENG_R)                      \
    X(PE_FIFO, "pe_fifo", "register file", ENPU_ENG_R)                             \
    X(IFMAP_LB, "ifmap_lb", "register file", ENPU_ENG_R)                           \
    X(FILTER_LB, "filter_lb", "register file", ENPU_ENG_R)                         \
    X(PE_REG, "pe_reg", "register file", ENPU_ENG_S)                               \
    X(ACC, "acc", "register file", ENPU_ENG_S)                                     \
    X(SHAPE, "shape", "register file", ENPU_ENG_S)                                 \
    X(MAIN_DTCM, "main_dtcm", "global buffer", ENPU_ENG_E | ENPU_ENG_S)            \
    X(SKIP_DTCM, "skip_dtcm", "global buffer", ENPU_ENG_E)                         \
    X(WEIGHT_MEM, "weight_mem", "global buffer", ENPU_ENG_E | ENPU_ENG_S)          \
    X(GLB, "glb", "global buffer", ENPU_ENG_R)                                     \
    X(ITCM, "itcm", "global buffer", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)          \
    X(BUS, "bus", "network", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)                  \
    X(NOC, "noc", "network", ENPU_ENG_R)                                           \
    X(PSUM_LINK, "psum_link", "network", ENPU_ENG_R)                               \
    X(PSUM_NET, "psum_net", "network", ENPU_ENG_R)                                 \
    X(PE_LINK, "pe_link", "network", ENPU_ENG_S)                                   \
    X(MUX, "mux", "network", ENPU_ENG_S)                                           \
    X(DRAM, "dram", "dram", ENPU_ENG_E | ENPU_ENG_R)

typedef enum enpu_energy_part {
#define ENPU_X_EP(id, name, level, eng) ENPU_EP_##id,
    ENPU_ENERGY_PART_LIST(ENPU_X_EP)
#undef ENPU_X_EP
    ENPU_EP_COUNT
} enpu_energy_part;

const char *enpu_energy_part_name(enpu_energy_part p);
/* "datapath", "register file", "global buffer", "network", "dram". */
const char *enpu_energy_part_level(enpu_energy_part p);
/* The levels in that order (NULL-terminated). */
extern const char *const enpu_energy_levels[];
/* Whether engine e has part p (the reports list only those). */
bool enpu_energy_part_of_engine(enpu_energy_part p, enpu_engine e);

/* Area by unit: X(id, name, engines). */
#define ENPU_AREA_PART_LIST(X)                                      \
    X(MAC, "mac", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)             \
    X(REQUANT, "requant", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)     \
    X(PSUM, "psum", ENPU_ENG_E | ENPU_ENG_R)                        \
    X(IFMAP_PAD, "ifmap_pad", ENPU_ENG_E)                           \
    X(WEIGHT_PAD, "weight_pad", ENPU_ENG_E)                         \
    X(PARAM_REGS, "param_regs", ENPU_ENG_E)                         \
    X(PE_FIFO, "pe_fifo", ENPU_ENG_R)                               \
    X(IFMAP_LB, "ifmap_lb", ENPU_ENG_R)                             \
    X(FILTER_LB, "filter_lb", ENPU_ENG_R)                           \
    X(PE_REG, "pe_reg", ENPU_ENG_S)                                 \
    X(ACC, "acc", ENPU_ENG_S)                                       \
    X(SHAPE, "shape", ENPU_ENG_S)                                   \
    X(MAIN_DTCM, "main_dtcm", ENPU_ENG_E | ENPU_ENG_S)              \
    X(SKIP_DTCM, "skip_dtcm", ENPU_ENG_E)                           \
    X(WEIGHT_MEM, "weight_mem", ENPU_ENG_E | ENPU_ENG_S)            \
    X(GLB, "glb", ENPU_ENG_R)                                       \
    X(ITCM, "itcm", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)

typedef enum enpu_area_part {
#define ENPU_X_AP(id, name, eng) ENPU_AP_##id,
    ENPU_AREA_PART_LIST(ENPU_X_AP)
#undef ENPU_X_AP
    ENPU_AP_COUNT
} enpu_area_part;

const char *enpu_area_part_name(enpu_area_part p);
bool enpu_area_part_of_engine(enpu_area_part p, enpu_engine e);

/* The energy of one action of every kind, for one arch (pJ), and the
 * technology factors applied to the 45 nm figures. */
typedef struct enpu_energy_costs {
    enpu_engine engine;
    double uop_pj[ENPU_UOP_COUNT];  /* one datapath operation, one lane */
    double read_pj[ENPU_MEM_COUNT]; /* one counted read (the unit's count: docs/energy.md) */
    double write_pj[ENPU_MEM_COUNT];
    double bus_word_pj;             /* one bus word between an SRAM and the PE array */
    double hop_pj;                  /* systolic: one operand value from a PE to its neighbour */
    double pe_pitch_mm;             /* the side of one PE (the square root of its area) */
    double energy_scale;            /* logic and storage: tech_nm, vdd_v vs 45 nm, 0.9 V */
    double wire_scale;              /* wires: (vdd_v / 0.9)^2 */
    double area_scale;              /* tech_nm vs 45 nm */
} enpu_energy_costs;

/* Derives the per-action energies of arch a (valid) by the rules of
 * docs/energy.md. */
void enpu_energy_costs_of(const enpu_arch *a, enpu_energy_costs *c);

/* Energy of one set of counts (one layer, or a whole run), by part. */
typedef struct enpu_energy {
    double part_pj[ENPU_EP_COUNT];
    double total_pj;
} enpu_energy;

/* out = the counts times the costs.  Bus words are the accesses of the
 * main and skip DTCM, the weight memory and the ITCM; the systolic array's
 * PE links carry every value latched into an operand register. */
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

/* pJ per MAC of a run: its energy over the model's MACs (0 without MACs). */
static inline double enpu_energy_per_mac(double pj, uint64_t macs) { return macs ? pj / (double)macs : 0.0; }

/* Adds the access counts of program p (reads, writes per memory; uops) to
 * rows[0 .. p->n_instr), computed from the instruction fields by the rules
 * the simulator executes (docs/microarch.md §11, §12; docs/energy.md
 * "Counting without simulating"): per fused chain they equal the
 * simulator's counts exactly; per instruction so do the counts of the PE
 * array (pads read, psum, datapath operations) and the ITCM, while the
 * loader's, weight reader's and writers' counts of a chain go to its head
 * (loads, weights) and to the stage that writes (the simulator gives them
 * to the stage the PE array is in at that cycle).  DRAM words are not
 * counted here (the schedule model has them).  For a systolic or
 * row-stationary program every count comes from its engine's cost model,
 * equal to the simulator's per instruction (src/energy/access_systolic.c,
 * access_rowstat.c).  The program must be valid (enpu_program_validate).
 * ENPU_E_NOMEM only. */
int enpu_access_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err);

/* The whole run without simulating: *rows (malloc'd, p->n_instr, freed by
 * the caller) get the name, op, instr, chain_head, cycles, activities and
 * DRAM words of the schedule model (enpu_model_program: equal to the
 * simulator's), the MACs of the program's LAYERS and the access counts;
 * *total the sums (name "total").  A systolic or row-stationary program's
 * rows are its engine's cost model's (enpu_sya_model_program,
 * enpu_rs_model_stats).  The program must be valid. */
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
