/* The simulator: executes a compiled program (program.h) on a model of an
 * engine, cycle by cycle or functionally, and reports where time went.
 *
 * Engines.  The EasyNPU core of docs/microarch.md is one engine; an
 * output-stationary systolic array and a row-stationary PE array are meant
 * to sit beside it (their names are reserved, docs/arch.md).  An engine is a table of functions
 * (enpu_sim_engine, src/sim/engine.h: it needs the driver's internals, so it
 * is not public) chosen by the architecture description's `engine` field and
 * the mode; the driver (sim/driver.c) owns the program, memories, host ops,
 * statistics and checking, and asks the engine to execute the program up to
 * the next host hand-over, one chain of fused instructions at a time.
 *
 * Two modes, one answer: ENPU_SIM_CYCLE advances every hardware unit per
 * clock (docs/microarch.md §11 is the cycle-level contract); ENPU_SIM_FUNCTIONAL
 * computes each layer's output directly (no timing).  Both write the same
 * bytes into the same memories.  In cycle mode the driver can also replay
 * every chain functionally on a copy of the memories and compare the blocks
 * the chain wrote (opts.check): a mismatch is reported with the layer, the
 * tensor coordinate, both values and the cycle of the write.
 *
 * Host ops (`sync`): the driver builds a one-node float graph of the host
 * op's ONNX `kind` over its IO tensors (int8 DTCM tensors dequantized with
 * their descriptors, host-memory tensors as stored) and runs it with
 * enpu_fref_node, exactly as the golden reference runs a HOST node; int8
 * outputs are quantized (enpu_quantize) back into the DTCM, float outputs
 * stay in host memory.  Attributes come from the record as the compiler
 * writes them (enpu_hostop_get_attrs, docs/program.md "HOSTOPS record":
 * axes, perm, activation parameters, Gemm flags, Conv/pool windows, Pad's
 * pads and value).  Only tensor operands are passed (the compiler refuses a
 * host op with a constant operand).
 *
 * User-facing tensors (inputs, outputs, enpu_sim_read_tensor) are in the
 * graph's order: for an IO descriptor with layout NHWC and rank >= 3 the
 * user order is [N][C][spatial...] (the ONNX order) and the memory order is
 * the descriptor's dims; otherwise both are the descriptor's dims. */
#ifndef EASYNPU_SIM_H
#define EASYNPU_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/program.h"
#include "easynpu/tensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum enpu_sim_mode { ENPU_SIM_CYCLE = 0, ENPU_SIM_FUNCTIONAL } enpu_sim_mode;

/* "cycle" / "functional"; enpu_sim_mode_parse returns -1 if unknown. */
const char *enpu_sim_mode_name(enpu_sim_mode m);
int enpu_sim_mode_parse(const char *s);

/* Every cycle of a layer belongs to exactly one activity (docs/microarch.md
 * §9, §11.10). */
#define ENPU_ACTIVITY_LIST(X)          \
    X(CONTROLLER, "controller")        \
    X(COMPUTE, "compute")              \
    X(PIPELINE_FILL, "pipeline_fill")  \
    X(IFMAP_LOAD, "ifmap_load")        \
    X(BUS_CONFLICT, "bus_conflict")    \
    X(WEIGHT_LOAD, "weight_load")      \
    X(OFMAP_DRAIN, "ofmap_drain")      \
    X(PIPELINE_DRAIN, "pipeline_drain") \
    X(DMA_WAIT, "dma_wait")            \
    X(HOST, "host")

typedef enum enpu_activity {
#define ENPU_X_ACT(id, name) ENPU_ACT_##id,
    ENPU_ACTIVITY_LIST(ENPU_X_ACT)
#undef ENPU_X_ACT
    ENPU_ACT_COUNT
} enpu_activity;

const char *enpu_activity_name(enpu_activity a);

/* Memories, pads and transfers whose accesses are counted, X(id, name,
 * engines): `engines` is the mask (ENPU_ENG_*) of the engines that have
 * the unit.  EasyNPU's memories count words; its pads entries (one 8-bit
 * entry of one pad; a broadcast read is one entry, a multicast read P
 * entries); psum counts per-PE entries read and written; the ITCM counts
 * 128-bit words; DRAM counts bus words moved by the DMA engines and the
 * instruction fetch (bytes = words x bus_bits / 8). */
#define ENPU_ENG_E (1u << ENPU_ENGINE_EASYNPU)
#define ENPU_ENG_S (1u << ENPU_ENGINE_SYSTOLIC)
#define ENPU_ENG_R (1u << ENPU_ENGINE_ROWSTAT)
#define ENPU_MEMORY_LIST(X)                                  \
    X(MAIN_DTCM, "main_dtcm", ENPU_ENG_E | ENPU_ENG_S)       \
    X(SKIP_DTCM, "skip_dtcm", ENPU_ENG_E)                    \
    X(WEIGHT_MEM, "weight_mem", ENPU_ENG_E | ENPU_ENG_S)     \
    X(ITCM, "itcm", ENPU_ENG_E | ENPU_ENG_S | ENPU_ENG_R)    \
    X(IFMAP_PAD, "ifmap_pad", ENPU_ENG_E)                    \
    X(WEIGHT_PAD, "weight_pad", ENPU_ENG_E)                  \
    X(PSUM, "psum", ENPU_ENG_E | ENPU_ENG_R)                 \
    X(OFFCHIP, "dram", ENPU_ENG_E | ENPU_ENG_R)              \
    ENPU_MEMORY_LIST_ROWSTAT(X)                              \
    ENPU_MEMORY_LIST_SYSTOLIC(X)

/* The row-stationary engine's memories (docs/rowstat.md "Statistics"): the
 * global buffer counts bytes; the ifmap and filter networks (noc) count a
 * value the global buffer sends (read: it drives the network's column of
 * row nodes) and a value a row node passes onto its row (write: it latches
 * it and drives its row of column nodes); the PE input FIFOs, ifmap and
 * filter loop buffers count entries (psum counts its psum RAM's entries:
 * every MAC of a unit but the first reads it, every MAC but the last
 * writes it); psum_link counts psums latched into a PE's output register
 * (write, a unit's last MAC) and taken by the PE below (read); psum_net
 * the psums the output network carries from a column's bottom PE to the
 * collector (read: sent, write: received); dram and itcm as above. */
#define ENPU_MEMORY_LIST_ROWSTAT(X)          \
    X(GLB, "glb", ENPU_ENG_R)                \
    X(NOC, "noc", ENPU_ENG_R)                \
    X(PE_FIFO, "pe_fifo", ENPU_ENG_R)        \
    X(IFMAP_LB, "ifmap_lb", ENPU_ENG_R)      \
    X(FILTER_LB, "filter_lb", ENPU_ENG_R)    \
    X(PSUM_LINK, "psum_link", ENPU_ENG_R)    \
    X(PSUM_NET, "psum_net", ENPU_ENG_R)

/* The systolic engine's units (docs/systolic.md "Statistics"; its
 * activation/output SRAM is main_dtcm and its weight SRAM weight_mem, in
 * words): a PE's operand registers count values latched (writes: each
 * comes one hop from its neighbour or the array's edge) and values read
 * into its multiplier (reads); its accumulator an entry written per MAC and
 * read per MAC after a dot product's first and per result handed on; a
 * row's output MUX one read per result it passes to the requantizer; the
 * re-shaping unit's word buffer a byte written per result and a word read
 * per SRAM write. */
#define ENPU_MEMORY_LIST_SYSTOLIC(X)         \
    X(PE_REG, "pe_reg", ENPU_ENG_S)          \
    X(ACC, "acc", ENPU_ENG_S)                \
    X(MUX, "mux", ENPU_ENG_S)                \
    X(SHAPE, "shape", ENPU_ENG_S)

typedef enum enpu_memory {
#define ENPU_X_MEM(id, name, eng) ENPU_MEM_##id,
    ENPU_MEMORY_LIST(ENPU_X_MEM)
#undef ENPU_X_MEM
    ENPU_MEM_COUNT
} enpu_memory;

const char *enpu_memory_name(enpu_memory m);
/* Whether engine e has memory m (the reports list only those). */
bool enpu_memory_of_engine(enpu_memory m, enpu_engine e);

/* Datapath operations, counted per PE lane (all P lanes of an active PE
 * row: lanes of absent channels are not gated), for the energy model
 * (docs/energy.md): `mac` a multiply-accumulate (conv, dwconv, avgpool, and
 * the bn, act, mul stages; an add stage is 2: both inputs are scaled),
 * `alu` an 8-bit compare or subtract without the multiplier (maxpool, relu),
 * `requant` one requantized lane (a final pass or a fused stage; not the
 * reshape's bypass), `lookup` one activation-table segment lookup, `mac16`
 * a multiply-accumulate of 16-bit data (the row-stationary engine's
 * `--bits 16`).  The systolic and row-stationary engines count one `mac`
 * (`mac16`) per PE and MAC cycle and one `requant` per output value; the
 * row-stationary engine an `alu` per psum its collector adds to the one a
 * block's earlier passes kept (an add rs_psum_bits wide). */
#define ENPU_UNIT_OP_LIST(X)  \
    X(MAC, "mac")             \
    X(ALU, "alu")             \
    X(REQUANT, "requant")     \
    X(LOOKUP, "lookup")       \
    X(MAC16, "mac16")

typedef enum enpu_unit_op {
#define ENPU_X_UOP(id, name) ENPU_UOP_##id,
    ENPU_UNIT_OP_LIST(ENPU_X_UOP)
#undef ENPU_X_UOP
    ENPU_UOP_COUNT
} enpu_unit_op;

const char *enpu_unit_op_name(enpu_unit_op o);

/* Adds to uops[ENPU_UOP_COUNT] the operations of `lanes` lanes of a stage of
 * opcode `op` that computes from one operand per lane (a 1x1 channel-wise
 * head or a fused stage): bn and mul a mac, add 2 macs, act a mac and a
 * lookup, relu an alu operation, each of them a requant; nothing for the
 * others (the reshape's bypass). */
void enpu_stage_uops(int64_t op, uint64_t lanes, uint64_t *uops);

/* Utilization, the one definition every report uses (docs/microarch.md
 * "Utilization"): the model's MACs over what `units` MAC units
 * (enpu_arch_mac_units) could do in `cycles`; 0 for no cycles. */
static inline double enpu_utilization(uint64_t macs, uint64_t units, uint64_t cycles) {
    return cycles && units ? (double)macs / ((double)units * (double)cycles) : 0.0;
}

/* One row per instruction of the program (the rows of a fused chain split
 * its cycles by stage, docs/microarch.md §11.10). */
typedef struct enpu_layer_stats {
    char name[128];                  /* layer name (program LAYERS section) */
    char op[32];                     /* mnemonic */
    int instr;                       /* instruction index */
    int chain_head;                  /* index of the chain's head instruction */
    uint64_t start_cycle;            /* first cycle attributed to it */
    uint64_t end_cycle;              /* one past the last (cycle mode) */
    uint64_t cycles;                 /* sum of activity[] */
    uint64_t activity[ENPU_ACT_COUNT];
    uint64_t macs;                   /* the model's multiply-accumulates (docs/microarch.md
                                        "MACs"; the program's LAYERS macs); 0 for sync */
    uint64_t ideal_cycles;           /* ceil(macs / (pes * pe_rows)) */
    uint64_t compute_model;          /* closed-form compute cycles (§11.11) */
    uint64_t reads[ENPU_MEM_COUNT];  /* words (pads: entries) */
    uint64_t writes[ENPU_MEM_COUNT];
    uint64_t uops[ENPU_UOP_COUNT];   /* datapath operations (lanes) */
    int psum_peak;                   /* most psum entries live at once, per PE */
    bool host;                       /* a sync: a host op (its time: activity host) */
    int group, chain_pos;            /* the program's layer group; position in its chain
                                        (0: the head, and every dma) */
    double dram_span_bytes;          /* DRAM bytes the channel moved during this row's own
                                        cycles (cycle mode, engines that log them: the
                                        roofline's; reads/writes OFFCHIP are its transfers') */
    bool dram_spanned;               /* dram_span_bytes was measured */
    int n_instr, n_dma;              /* instructions summed (1 for an instruction's own row) */
} enpu_layer_stats;

/* The first difference found by a check. */
typedef struct enpu_sim_mismatch {
    bool found;
    int layer;                       /* instruction index (chain's writing stage) */
    char layer_name[128];
    char tensor[32];                 /* "ofmap" or "skip" */
    int64_t h, w, c;                 /* coordinate in the written tensor */
    int got, want;                   /* cycle-mode value, reference value */
    uint64_t cycle;                  /* cycle of the write (0 if never written) */
} enpu_sim_mismatch;

typedef struct enpu_sim_result {
    enpu_sim_mode mode;
    int n_layers;                    /* = program instructions */
    enpu_layer_stats *layers;        /* one per instruction */
    int n_rows;                      /* one per layer: the instructions of a layer group at one
                                        chain position (its row strips, channel blocks and
                                        DMA transfers) summed, named after the first compute
                                        instruction; in program order */
    enpu_layer_stats *rows;
    uint64_t total_cycles, total_macs, total_ideal_cycles; /* MACs: of the NPU's instructions */
    uint64_t host_macs;              /* MACs of the layers the host computes (sync) */
    uint64_t activity[ENPU_ACT_COUNT];
    uint64_t reads[ENPU_MEM_COUNT], writes[ENPU_MEM_COUNT];
    uint64_t uops[ENPU_UOP_COUNT];
    double utilization;              /* total_macs / (pes * pe_rows * total_cycles) */
    double time_us;                  /* total_cycles / clock_mhz */
    bool checked;                    /* the layer-by-layer check ran */
    bool bit_exact;                  /* checked and no mismatch */
    enpu_sim_mismatch mismatch;
    int n_outputs;
    enpu_buf *outputs;               /* dequantized float32 outputs (IO order), named */
    enpu_buf *raw_outputs;           /* int8 outputs as stored, user order (data NULL
                                        for float host outputs) */
} enpu_sim_result;

void enpu_sim_result_free(enpu_sim_result *r);

/* The rows a report prints: r->rows (one per layer) when the run built them,
 * else r->layers (one per instruction); *n gets their count. */
const enpu_layer_stats *enpu_sim_result_rows(const enpu_sim_result *r, int *n);

/* How a run splits between the NPU and the host (docs/microarch.md §13.11). */
typedef struct enpu_npu_share {
    int host_ops;          /* syncs that ran a host op */
    uint64_t host_cycles;  /* cycles of activity host: the host ops on the host CPU */
    double npu_macs;       /* total_macs / (total_macs + host_macs); 1 without MACs */
    double npu_time;       /* 1 - host_cycles / total_cycles; 1 for a run of 0 cycles */
} enpu_npu_share;

/* Fills *s from a run's statistics. */
void enpu_sim_npu_share(const enpu_sim_result *r, enpu_npu_share *s);

typedef struct enpu_sim enpu_sim;

/* Called after each chain (layer = the head's instruction index; st = the
 * head's row, final for the chain), after each host op, and when a dma whose
 * LAYERS record names a tensor completes (that tensor then lies in DRAM).  A
 * non-zero return stops the run with that status (the callback fills err). */
typedef int (*enpu_sim_layer_cb)(void *ctx, int layer, const enpu_layer_stats *st,
                                 const enpu_sim *sim, enpu_err *err);

typedef struct enpu_sim_opts {
    enpu_sim_mode mode;
    bool check;                      /* cycle mode: replay each chain functionally and
                                        compare what it wrote (ENPU_E_MISMATCH) */
    bool trace;                      /* record trace spans (cycle mode; written by
                                        report/: enpu_report_trace) */
    bool vcd;                        /* record the control signals in [vcd_from, vcd_to)
                                        (cycle mode; enpu_report_vcd) */
    uint64_t vcd_from, vcd_to;
    uint64_t max_cycles;             /* stop with ENPU_E_LIMIT past this (0: 2^40) */
    bool per_cycle;                  /* cycle mode: step every unit in every cycle, never
                                        fast-forward (docs/microarch.md §15; a debug switch,
                                        the same results, slower) */
    enpu_sim_layer_cb on_layer;
    void *cb_ctx;
} enpu_sim_opts;

/* Creates a simulator for prog on arch.  The program must have been
 * validated (enpu_program_read does) and compiled for arch (fingerprints
 * equal, else ENPU_E_INCOMPATIBLE naming both); it must outlive the simulator.
 * ENPU_E_UNSUPPORTED for an engine or a construct the simulator does not
 * model (naming the instruction).  opts may be NULL (cycle mode, no check). */
int enpu_sim_new(const enpu_program *prog, const enpu_arch *arch, const enpu_sim_opts *opts,
                 enpu_sim **out, enpu_err *err);
void enpu_sim_free(enpu_sim *sim);

/* Runs the whole program on float inputs (one per input descriptor, in IO
 * order, shape in user order or the descriptor's dims; quantized with the
 * descriptor's scale and zero point as enpu_quantize does) and fills *res
 * (freed with enpu_sim_result_free, also on failure).  The memories start
 * from the program's images each run.  On a check mismatch returns
 * ENPU_E_MISMATCH with res->mismatch filled. */
int enpu_sim_run(enpu_sim *sim, const enpu_buf *inputs, int n_inputs, enpu_sim_result *res,
                 enpu_err *err);
/* The same with int8 inputs as stored values (user order, one array per
 * input descriptor of its element count). */
int enpu_sim_run_i8(enpu_sim *sim, const int8_t *const *inputs, int n_inputs,
                    enpu_sim_result *res, enpu_err *err);

/* Reads a feature map from a simulated memory back into an int8 buffer of
 * `n` elements in user order (descriptor as in the program; any int8
 * descriptor in main or skip DTCM or in the DRAM the program touches, so a
 * test can read intermediate tensors by making a descriptor). */
int enpu_sim_read_tensor(const enpu_sim *sim, const enpu_io_desc *d, int8_t *dst, int64_t n,
                         enpu_err *err);
/* The same for an int8 or int16 descriptor (the row-stationary engine's
 * 16-bit data), the values widened to int32. */
int enpu_sim_read_tensor_i32(const enpu_sim *sim, const enpu_io_desc *d, int32_t *dst, int64_t n,
                             enpu_err *err);
/* Cycle at which the word holding element e of descriptor d was last
 * written (e: the flat index in the graph tensor's row-major order, as
 * enpu_sim_read_tensor returns it), 0 if never or out of range. */
uint64_t enpu_sim_write_cycle(const enpu_sim *sim, const enpu_io_desc *d, int64_t e);

/* Raw view of a simulated memory (ENPU_MEM_MAIN, _SKIP, _WEIGHT or _DRAM of
 * isa.h; DRAM: only the words the program touches) after a run: *bytes gets
 * its size. NULL for an unknown memory (or a program that touches no DRAM). */
const uint8_t *enpu_sim_memory(const enpu_sim *sim, int mem, int64_t *bytes);

/* The architecture and program the simulator runs. */
const enpu_arch *enpu_sim_arch(const enpu_sim *sim);
const enpu_program *enpu_sim_program(const enpu_sim *sim);


/* Checking against the golden int8 reference (src/sim/golden_check.c). ---- */

struct enpu_gexec;
struct enpu_graph;

typedef struct enpu_golden_check {
    const struct enpu_graph *qg;  /* the quantized graph the program was compiled from */
    struct enpu_gexec *ex;        /* golden executor, already run on the same inputs */
    int compared;                 /* layer outputs compared so far */
} enpu_golden_check;

/* An enpu_sim_layer_cb (ctx = enpu_golden_check *): compares every layer
 * output the chain just run stores with the golden tensor of the same name,
 * element by element; the first difference is ENPU_E_MISMATCH naming the
 * layer, the tensor coordinate (c, h, w), both values and the write cycle. */
int enpu_golden_check_layer(void *ctx, int layer, const enpu_layer_stats *st,
                            const struct enpu_sim *sim, enpu_err *err);
/* Whether quantized graph qg is the one prog was compiled from, checked
 * before a run: every tensor the program exchanges or checks (its IO
 * descriptors) must be a tensor of qg with the same shape and, when int8,
 * the same scale and zero point.  ENPU_E_INCOMPATIBLE naming the first
 * tensor that is not and what differs (the caller prefixes the .qjson). */
int enpu_golden_check_match(const struct enpu_graph *qg, const enpu_program *prog, enpu_err *err);
/* Compares the run's (dequantized) outputs with the golden ones, bit for bit. */
int enpu_golden_check_outputs(const enpu_golden_check *g, const enpu_sim_result *res,
                              enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
