/* The compiler back end of the row-stationary engine (docs/rowstat.md):
 *   compile.c the quantized graph -> rs_conv instructions, host ops and the
 *            DRAM plan (tensors, weights) with their IO descriptors; the
 *            weight blocks, the program and its mapping report;
 *   map.c    per convolution, the mapping (rs_e, rs_p, rs_q, rs_r, rs_t,
 *            rs_hf, rs_gpar, rs_dbuf, rs_ict) that fits the array and every
 *            buffer, by cycles first, then traffic;
 *   cost.c   the cost model: the engine's timing rules, event by event, for
 *            a pass, a layer and a whole program (the simulator,
 *            src/sim/rowstat/, implements the same rules cycle by cycle). */
#ifndef ENPU_RS_COMPILER_H
#define ENPU_RS_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/compiler.h"
#include "easynpu/rowstat.h"

/* The quantized kinds the engine has no kernel for (bit 1 << enpu_qkind):
 * the quantizer leaves them to the host. */
unsigned enpu_rs_host_kinds(void);

/* enpu_compile for an arch whose engine is rowstat (compile.c dispatches). */
int enpu_rs_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                    enpu_program *prog, enpu_compile_report *rep, enpu_err *err);

/* Writes the weight block of rs_conv `in` (the filter blocks in the order
 * of the passes that load them, each in the filter network's order, then
 * every output block's (bias, M, S)) for quantized node q into the DRAM
 * image img, at rs_weight_addr (include/easynpu/rowstat.h). */
void rs_lay_weights(const enpu_arch *a, const enpu_qnode *q, const enpu_instr *in, uint8_t *img);

/* ---- the cost model (cost.c) -------------------------------------------------- */

/* Counts of one instruction, in the units of the simulator's statistics
 * (docs/rowstat.md "Statistics"). */
typedef struct rs_counts {
    int64_t act[ENPU_ACT_COUNT];
    int64_t reads[ENPU_MEM_COUNT], writes[ENPU_MEM_COUNT];
    int64_t uops[ENPU_UOP_COUNT];
} rs_counts;

/* Cycles of a whole rowstat program from cycle 0 (enpu_model_program's
 * definition); per instruction its counts into cnt[i] (may be NULL). */
int64_t rs_model_program(const enpu_program *p, rs_counts *cnt);

/* Cycles one rs_conv takes on its own (fetch, decode and configuration
 * included, the DRAM channel idle and no row open at its start); *c gets its
 * counts (may be NULL).  -1 when it is not a valid instruction for a. */
int64_t rs_model_instr(const enpu_arch *a, const enpu_instr *in, rs_counts *c);

/* rs_model_instr, or `limit` as soon as the model proves the instruction
 * takes at least `limit` cycles (INT64_MAX: none; *c is then not its
 * counts): the mapping search only needs to know a mapping loses. */
int64_t rs_model_instr_limit(const enpu_arch *a, const enpu_instr *in, int64_t limit, rs_counts *c);

/* ---- the mapping search (map.c) -------------------------------------------------- */

/* What a search found: the chosen mapping's modelled cycles, the best
 * other mapping (its fields and cycles; alt_cycles -1 when there is none),
 * the candidates and how many the cost model timed. */
typedef struct rs_map_info {
    int64_t cycles, alt_cycles;
    enpu_instr alt;
    int64_t n_cand, n_timed;
} rs_map_info;

/* Fills the mapping fields of *in (geometry, addresses and numerics set)
 * by search `mode` (map.c): among the mappings within 1% of the fewest
 * modelled cycles, and no slower than LEGACY's choice, the one that moves
 * the fewest DRAM words, then global-buffer bytes, then cycles (LEGACY
 * itself: the fewest cycles, equal ones by that traffic); the enumeration
 * order breaks what is left.  *info says what it found (alt: the next by
 * the same rule, or the fastest outside the slack).  ENPU_E_NOFIT naming
 * `what` when no mapping fits the arch. */
int rs_map_layer(const enpu_arch *a, enpu_instr *in, enpu_search mode, const char *what,
                 rs_map_info *info, enpu_err *err);

/* A mapping in the Eyeriss paper's notation (Chen et al., JSSC 2017, Table
 * II): n images per pass, m filters whose psums the global buffer holds, e
 * output rows per PE set, p filters and q channels per PE, r sets on
 * channels, t sets on filters (or groups); then the set's shape (hf rows x
 * e), the folds, the ifmap tiles and the double buffers. */
typedef struct rs_map_text {
    char s[160];
} rs_map_text;
rs_map_text rs_map_params(const enpu_rs_geom *g, const enpu_instr *in);

/* A lower bound of rs_model_instr(a, in) for a valid rs_conv (the search's
 * branch and bound; tests check it against the model); -1 when its
 * geometry is invalid. */
int64_t rs_map_bound(const enpu_arch *a, const enpu_instr *in);

#endif
