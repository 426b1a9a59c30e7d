/* The compiler: maps a quantized network (quant.h) onto the NPU: the
 * EasyNPU engine (below), or the systolic engine when the arch says so
 * (src/compiler/systolic/, docs/systolic.md).
 *
 * Phases, one file each under src/compiler/ (docs/compiler.md):
 *   lower.c   quantized nodes -> layers: opcode choice, FC weights in the
 *             stored map's [h][w][c] order, moves as address remapping or
 *             copy layers, host ops (SYNC) for what the NPU cannot run;
 *   fuse.c    hardware fusion into chains (conv + bn / table act / add /
 *             mul / reshape at store), each stage exactly its quantized node;
 *   tile.c    per chain, the tiling (x, y, zs, band_h) that minimises the
 *             modelled cycles under the pad, psum and weight-pad limits;
 *   cost.c    the cost model: the cycle rules of docs/microarch.md §11-12,
 *             event by event (the simulator implements the same rules);
 *   memplan.c main DTCM (two-ended), skip DTCM (by lifetime), weight memory;
 *   emit.c    instructions, memory images, IO / host-op / table / layer
 *             records of the program;
 *   compile.c the driver.
 *
 * Every instruction of the program names the quantized-graph tensor it
 * computes and (when stored) an IO descriptor of where it lives, so a
 * simulator can read each layer's output back and compare it with the golden
 * reference (enpu_gexec) tensor of that name. */
#ifndef EASYNPU_COMPILER_H
#define EASYNPU_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/ir.h"
#include "easynpu/program.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The compile cache: what the cost model and the tiling search computed,
 * keyed by exactly what they read (src/compiler/cache.c).  A compile makes
 * its own when given none; a caller compiling many times (a sweep) shares
 * one, so that a layer mapped for one arch is not searched again for
 * another that differs only in what the layer does not depend on.
 * Thread-safe.  budget_bytes: the most it holds (0: the default); when
 * full it is emptied and refilled. */
typedef struct enpu_compile_cache enpu_compile_cache;
#define ENPU_COMPILE_CACHE_DEFAULT ((size_t)256 << 20)
enpu_compile_cache *enpu_compile_cache_new(size_t budget_bytes);
void enpu_compile_cache_free(enpu_compile_cache *c);
/* Lookups that found their entry, that did not, and entries held. */
void enpu_compile_cache_stats(enpu_compile_cache *c, uint64_t *hits, uint64_t *misses,
                              uint64_t *entries);

/* How the tiling search finds its tiling (docs/compiler.md "The tiling
 * search"): FAST orders the candidates by a lower bound of their cycles
 * and costs only those whose bound can still win (branch and bound; the
 * same choice, proven); EXHAUSTIVE costs every candidate, without the
 * cache: the yardstick.  LEGACY is the row-stationary engine's previous
 * mapping search (docs/rowstat.md "The mapping search"), kept to compare
 * with; the other engines take it as FAST without the cache. */
typedef enum enpu_search { ENPU_SEARCH_FAST = 0, ENPU_SEARCH_EXHAUSTIVE, ENPU_SEARCH_LEGACY } enpu_search;

typedef struct enpu_compile_opts {
    bool no_fuse;      /* keep every quantized node its own instruction */
    bool naive_tiling; /* fixed tiling instead of the search: x = y = 1 output
                          position, z = Co, the whole kernel (or the fewest
                          kernel rows that fit) -- for comparisons; the
                          systolic engine: whole units, point groups outer */
    bool no_enhance;   /* never consider the enhance-channel transform */
    bool serial_schedule; /* every instruction waits for the one before it to
                             complete (no overlap of DMA and compute): the
                             baseline of the list schedule */
    enpu_search search;   /* the tiling search (default FAST) */
    enpu_compile_cache *cache; /* shared cache, or NULL (a compile makes its own) */
} enpu_compile_opts;

void enpu_compile_opts_default(enpu_compile_opts *o);

/* How a data-movement node was realised. */
typedef enum enpu_move_kind {
    ENPU_MOVE_REMAP = 0, /* free: the consumer reads the producer's storage
                            (same words, or FC weights permuted, or concat at
                            store) */
    ENPU_MOVE_COPY,      /* a copy layer (reshape instruction) */
    ENPU_MOVE_HOST       /* copied by the host (SYNC + host op) */
} enpu_move_kind;

typedef struct enpu_move_report {
    char *name;      /* quantized node */
    char *op;        /* ONNX op: Reshape, Flatten, Transpose, Concat, Pad, ... */
    enpu_move_kind kind;
    char *how;       /* one line: why / how */
} enpu_move_report;

/* One row of the mapping table: one instruction of the program, or for a
 * layer cut in row strips or output-channel blocks, or moved with DMA
 * transfers, the instructions of its group at one position of its chain
 * (their cycles and traffic summed; geometry and tiling of the layer's
 * first instruction). */
typedef struct enpu_layer_report {
    char *name;          /* layer name (instruction) */
    char *op;            /* mnemonic */
    char *src;           /* quantized node(s) it computes, '+'-joined */
    char *fused;         /* for a chain head: the fused members' mnemonics
                            ("act", "bn+act", ...), else "" */
    int chain_head;      /* index of its chain's head row (itself for heads) */
    int64_t in[3];       /* input h, w, c */
    int64_t out[3];      /* output h, w, c */
    int64_t kernel[2], stride[2];
    int64_t tile_x, tile_y, tile_xi, tile_yi, zs, z, band_h;
    int mode;            /* ENPU_CAST_BROADCAST / MULTICAST, -1 for control */
    bool double_buffered;
    int64_t ifmap_addr, ofmap_addr, op2_addr, skip_addr, weight_addr; /* -1: none */
    int op2_mem;         /* ENPU_MEM_MAIN / SKIP, -1 none */
    int64_t weight_words, param_words;
    int64_t macs;
    int64_t ideal_cycles;    /* ceil(macs / (pes * pe_rows)) */
    int64_t modelled_cycles; /* cost model, docs/microarch.md §11 attribution */
    int64_t activity[ENPU_ACT_COUNT];
    int64_t compute_cycles;  /* = activity[COMPUTE] */
    char *note;          /* tiling / enhance-channel decision, or "" */
    int first_instr;     /* its first instruction in the program */
    int n_instr;         /* instructions summed into the row (DMA included) */
    int strips;          /* compute instructions (row strips x channel blocks) */
    int dmas;            /* DMA transfers */
    int64_t dram_read_bytes, dram_write_bytes; /* by its DMA transfers and instruction fetch */
} enpu_layer_report;

typedef struct enpu_compile_report {
    char *arch_name;
    enpu_engine engine;      /* the back end's engine (the table's columns follow it); the
                                systolic engine's rows: tile_x, tile_y = points, filters per
                                unit (docs/systolic.md); pes = its MAC units */
    int pes, pe_rows;
    int n_layers;
    enpu_layer_report *layers;
    int n_moves;
    enpu_move_report *moves;
    int n_hostops;
    char **hostops;          /* "Softmax 'name'" per host op */
    int64_t total_macs, total_ideal, total_modelled; /* MACs: of the NPU's instructions */
    int64_t host_macs;       /* MACs of the layers the host computes (sync) */
    int64_t total_activity[ENPU_ACT_COUNT];
    int64_t total_dram_read_bytes, total_dram_write_bytes;
    bool offchip;            /* the plan streams through DRAM (tensors or weights) */
    /* memory use */
    int64_t main_peak_bytes, main_bytes;
    int64_t skip_peak_bytes, skip_bytes;
    int64_t weight_used_bytes, weight_bytes;
    int n_instr, itcm_instr;
    int n_notes;
    char **notes;            /* graph-level notes */
} enpu_compile_report;

void enpu_compile_report_free(enpu_compile_report *r);

/* Sets *o to the quantizer options a model compiled for arch needs:
 * enpu_quant_opts_for_arch's (the defaults with the arch's multiplier,
 * accumulator and table widths), for the row-stationary and systolic
 * engines the kinds their hosts run, and for the row-stationary one its
 * psum width. */
void enpu_compile_quant_opts(const enpu_arch *arch, enpu_quant_opts *o);

/* Whether the compiler can map onto arch: enpu_arch_validate, and
 * ENPU_E_UNSUPPORTED naming the arch and the parameter for what it does not
 * use yet (pe_rows > 1).  enpu_compile checks it first; a caller may check
 * it before a long quantization. */
int enpu_compile_arch_check(const enpu_arch *arch, enpu_err *err);

/* Compiles quantized graph qg (enpu_qgraph_check must accept it) for arch
 * into *prog (initialised here; freed by the caller with
 * enpu_program_free, also on failure) and fills *rep when non-NULL (free
 * with enpu_compile_report_free).  o may be NULL (defaults).  The program
 * passes enpu_program_validate.  Errors: ENPU_E_NOFIT naming the tensor or
 * layer, what it needs, what the arch has and which preset or parameter
 * would fit; ENPU_E_UNSUPPORTED naming the node for what neither the NPU
 * nor the host can run, and enpu_compile_arch_check's; ENPU_E_INVALID
 * for a graph that is not a valid quantized graph. */
int enpu_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                 enpu_program *prog, enpu_compile_report *rep, enpu_err *err);

/* ---- the cost model and the tiling search, exported for tests and tools -- */

/* Modelled cycles of one chain (head instruction and its members, n >= 1)
 * executed on its own: execution cycles from the chain's first execution
 * cycle to its last write, attributed per docs/microarch.md §11.10 (no
 * controller cycles; see enpu_cost_controller).  act may be NULL.  Returns
 * the total, or -1 when the instruction is not a compute instruction. */
int64_t enpu_cost_chain(const enpu_arch *arch, const enpu_instr *chain, int n,
                        int64_t act[ENPU_ACT_COUNT]);
/* Controller cycles of a chain of n instructions (first: program start). */
int64_t enpu_cost_controller(const enpu_arch *arch, int n, bool first);
/* Whether enpu_cost_chain predicts the chain cycle for cycle, activity by
 * activity, as the simulator runs it (docs/microarch.md §14).  False for
 * what the model approximates with one write per word and the stream it
 * assumes: rows > 1, an add/mul whose second operand is in the main DTCM,
 * byte-masked writes (a reshape other than hwc/whc keeping the channel
 * count, a group conv whose outputs per group are not a multiple of pes),
 * and an arch with weight_mem_latency >= weight_pad_depth. */
bool enpu_cost_exact(const enpu_arch *arch, const enpu_instr *chain, int n);
/* Modelled cycles of a whole program (controller included); per-instruction
 * rows in cycles[] (n_instr entries) when non-NULL, activities per row in
 * act (n_instr x ENPU_ACT_COUNT) when non-NULL. */
int64_t enpu_cost_program(const enpu_program *p, int64_t *cycles, int64_t *act);

/* The schedule model of a whole program, every engine's (for a rowstat or
 * systolic arch that engine's model, below).  EasyNPU's (docs/microarch.md §13: fetch,
 * decode and dispatch, dependency tokens, DMA engines, the DRAM channel, the
 * instruction prefetcher, every chain by the cost model): the total cycles;
 * per instruction the cycles of every activity (act: n_instr x
 * ENPU_ACT_COUNT) and the DRAM words read and written (dram_rd, dram_wr:
 * n_instr each), all filled.  The program must be valid
 * (enpu_program_validate). */
int64_t enpu_model_program(const enpu_program *p, int64_t *act, int64_t *dram_rd, int64_t *dram_wr);
/* The same, every chain's cycles through cache (NULL: none). */
int64_t enpu_model_program_cached(const enpu_program *p, enpu_compile_cache *cache, int64_t *act,
                                  int64_t *dram_rd, int64_t *dram_wr);

/* The row-stationary engine's model of a program (docs/rowstat.md
 * "Timing"; enpu_model_program calls it for a rowstat arch): the total
 * cycles; per instruction its activities (act: n_instr x ENPU_ACT_COUNT)
 * and its reads and writes of every memory (rd, wr: n_instr x
 * ENPU_MEM_COUNT, in the simulator's units), each may be NULL.  -1 when out
 * of memory. */
int64_t enpu_rs_model_program(const enpu_program *p, int64_t *act, int64_t *rd, int64_t *wr);
/* The same into rows[0 .. p->n_instr) (zeroed or holding counts to add
 * to): per instruction its cycles, activities, reads and writes of every
 * memory and datapath operations (docs/rowstat.md "Statistics"), as a
 * cycle-mode run's enpu_layer_stats have them; the rest of each row is left
 * alone.  Returns the total cycles, -1 when out of memory. */
int64_t enpu_rs_model_stats(const enpu_program *p, enpu_layer_stats *rows);
/* The row-stationary cost model of p against the statistics of a
 * cycle-mode run of it (sim: one row per instruction, res->layers; its
 * total cycles): every instruction's cycles, activities, reads and writes
 * of every memory and datapath operations, and the total.  Returns the
 * number of figures that differ (0: the model is the simulator), the first
 * in msg (n bytes; "instruction 3 'conv2' (rs_conv): psum_link writes:
 * simulated 10, modelled 9"), or -1 when out of memory. */
int enpu_rs_model_diff(const enpu_program *p, const enpu_layer_stats *sim, uint64_t sim_cycles, char *msg,
                       size_t n);
/* The systolic engine's cost model of a whole program (docs/systolic.md
 * "Timing": the controller's rules unit by unit, with its own hazard
 * scoreboard; "Statistics": every count in closed form): the total cycles;
 * per instruction the cycles of every activity (act: n_instr x
 * ENPU_ACT_COUNT, filled), the reads and writes of every memory (reads,
 * writes: n_instr x ENPU_MEM_COUNT) and the datapath operations (uops:
 * n_instr x ENPU_UOP_COUNT), filled, each may be NULL; as the simulator's
 * cycle engine counts them.  The program must be valid for a systolic arch.
 * -1 when out of memory. */
int64_t enpu_sya_model_program(const enpu_program *p, int64_t *act, int64_t *reads, int64_t *writes,
                               int64_t *uops);

/* Fills the tile fields (tile_x, tile_y, tile_xi, tile_yi, zs, band_h,
 * rows) of the chain's instructions with the tiling that minimises
 * enpu_cost_chain under the arch's limits (naive: the fixed tiling of
 * enpu_compile_opts.naive_tiling).  ENPU_E_NOFIT naming `what` when no
 * tiling fits. */
int enpu_tile_chain(const enpu_arch *arch, enpu_instr *chain, int n, bool naive,
                    const char *what, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
