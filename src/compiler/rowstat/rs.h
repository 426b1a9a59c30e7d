/* The compiler back end of the row-stationary engine (docs/rowstat.md):
 *   compile.c the quantized graph -> rs_conv instructions, host ops and the
 *            DRAM plan (tensors, weights) with their IO descriptors; the
 *            weight blocks, the program and its mapping report;
 *   map.c    per convolution, the mapping (rs_e, rs_p, rs_q, rs_r, rs_t,
 *            rs_hf, rs_gpar, rs_dbuf) with the fewest modelled cycles that
 *            fits the array and every buffer;
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

/* ---- the mapping search (map.c) -------------------------------------------------- */

/* Fills the mapping fields of *in (geometry, addresses and numerics set) with
 * the mapping of fewest modelled cycles; *cycles gets them.  ENPU_E_NOFIT
 * naming `what` when no mapping fits the arch. */
int rs_map_layer(const enpu_arch *a, enpu_instr *in, const char *what, int64_t *cycles,
                 enpu_err *err);

#endif
