/* EasyNPU architecture description.
 *
 * One struct holds every parameter the compiler, the instruction layout and
 * the simulator depend on.  The numeric parameters are listed once, in the
 * X-macro ENPU_ARCH_PARAMS below, from which the struct members, the JSON
 * reader and writer, the range checks, the human table of `easynpu arch` and
 * the table in docs/arch.md are all generated.  Cross-parameter rules (pes ==
 * bus_bits/8, memory sizes multiples of the bus word, the instruction layout
 * fitting 512 bits) are checked in enpu_arch_validate.
 *
 * JSON form: an object whose keys are "name", "engine", "requant"
 * (optional: "easynpu" or "tflite", the requantizer's arithmetic,
 * numerics.h; "tflite" on the easynpu engine only; written only when it is
 * not "easynpu", so that the fingerprints of descriptions without it do not
 * change), "base" (optional, a preset name: the preset supplying every key
 * that is absent; default "systolic" when "engine" is "systolic", else
 * "easynpu") and the parameter names below (the sya_ ones only when the
 * engine is "systolic").  An unknown key is an error naming it.  The
 * canonical JSON (enpu_arch_to_json) has every key in table order and no
 * "base" (an arch whose engine is not rowstat leaves out the rs_
 * parameters that have their defaults); the CRC32 of its machine part
 * (without the cost figures, ENPU_ARCH_COSTS) is the arch fingerprint
 * stamped into compiled programs. */
#ifndef EASYNPU_ARCH_H
#define EASYNPU_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "easynpu/error.h"
#include "easynpu/numerics.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_ARCH_NAME_MAX 64                  /* bytes of name, with the NUL */
#define ENPU_ARCH_JSON_MAX ((size_t)1 << 20)   /* arch JSON file size limit */
#define ENPU_ARCH_MEM_MAX ((int64_t)1 << 30)   /* any one on-chip memory: 1 GiB */
#define ENPU_ARCH_DRAM_MAX ((int64_t)1 << 36)  /* off-chip DRAM: 64 GiB */

/* Compute engines: EASYNPU (docs/microarch.md), SYSTOLIC, an
 * output-stationary systolic array (docs/systolic.md), and ROWSTAT, a
 * row-stationary PE array (docs/rowstat.md). */
typedef enum enpu_engine {
    ENPU_ENGINE_EASYNPU = 0,
    ENPU_ENGINE_SYSTOLIC,
    ENPU_ENGINE_ROWSTAT
} enpu_engine;

/* X(key, unit, min, max, easynpu, large, meaning)
 * Integer parameters in JSON/table order.  `min`/`max` are the per-field
 * range; cross-field rules are in enpu_arch_validate and docs/arch.md. */
#define ENPU_ARCH_PARAMS(X)                                                                     \
    X(pes, "PEs", 1, 256, 16, 16,                                                               \
      "MAC processing elements per PE row; one per int8 lane of the bus word (= bus_bits/8)")    \
    X(pe_rows, "rows", 1, 64, 1, 1,                                                             \
      "PE rows sharing one x*y output tile; MAC units = pes * pe_rows")                         \
    X(lane_groups_max, "groups", 1, 256, 4, 4,                                                  \
      "most lane groups per PE row (power of two dividing pes): g groups of pes/g lanes compute " \
      "the same output channels at g output positions, each from its own ifmap pad read port")  \
    X(ifmap_pads, "pads", 1, 256, 16, 16,                                                       \
      "ifmap scratch pads (one per PE in multicast mode; = pes)")                               \
    X(ifmap_pad_depth, "entries", 1, 4096, 64, 64,                                              \
      "8-bit entries per ifmap pad: bounds the input tile x'*y'")                               \
    X(weight_pad_groups, "groups", 1, 256, 16, 16,                                              \
      "weight scratch pad groups (one per PE; = pes)")                                          \
    X(weight_pad_depth, "entries", 1, 4096, 16, 16,                                             \
      "8-bit entries per weight pad group (output-channel groups held, w_och_gcnt range)")      \
    X(psum_depth, "entries", 1, 4096, 64, 64,                                                   \
      "psum register file entries per PE: bounds the output tile x*y*zs")                       \
    X(bus_bits, "bits", 8, 2048, 128, 128,                                                      \
      "width of the ifmap/ofmap bus, the DTCM word and the weight-memory word (= pes*8)")       \
    X(main_dtcm_bytes, "bytes", 1, ENPU_ARCH_MEM_MAX, 65536, 524288,                            \
      "main DTCM (feature maps: input from address 0 up, output from the top down)")            \
    X(skip_dtcm_bytes, "bytes", 1, ENPU_ARCH_MEM_MAX, 16384, 262144,                            \
      "skip DTCM (tensors kept for later shortcut adds)")                                       \
    X(weight_mem_bytes, "bytes", 1, ENPU_ARCH_MEM_MAX, 65536, 524288,                           \
      "weight memory (weights, biases, requantization parameters, activation tables)")          \
    X(itcm_bytes, "bytes", 64, ENPU_ARCH_MEM_MAX, 4096, 16384,                                  \
      "instruction memory (64-byte instructions)")                                              \
    X(acc_bits, "bits", 16, 32, 32, 32, "accumulator / psum width (signed)")                    \
    X(mult_bits, "bits", 1, 31, 20, 20, "unsigned requantization multiplier width")             \
    X(act_segments, "segments", 1, 256, 16, 16,                                                 \
      "piecewise-linear activation table segments (power of two)")                              \
    X(dtcm_read_latency, "cycles", 1, 64, 1, 1,                                                 \
      "DTCM read request to data on the ifmap bus (synchronous SRAM)")                          \
    X(weight_mem_latency, "cycles", 1, 64, 1, 1,                                                \
      "weight memory read request to data on the weight bus")                                   \
    X(instr_fetch_cycles, "cycles", 1, 1024, 4, 4,                                              \
      "fetching one 512-bit instruction from the ITCM (4 x 128-bit reads)")                     \
    X(decode_cycles, "cycles", 0, 1024, 1, 1,                                                   \
      "top controller: decoding an instruction into scheduler/PE-controller registers")         \
    X(pe_pipeline_depth, "cycles", 1, 16, 2, 2,                                                 \
      "PE pipeline: operands at the PE input to psum written (multiplier + adder stages)")      \
    X(requant_latency, "cycles", 0, 16, 2, 2,                                                   \
      "psum read to requantized int8 at the PE output (multiply, shift/round/clamp)")           \
    X(host_sync_cycles, "cycles", 0, 1000000, 16, 16,                                           \
      "SYNC: handing over to the host and resuming (the host op's own time: hostcpu_*)")        \
    X(dram_bytes, "bytes", 0, ENPU_ARCH_DRAM_MAX, (int64_t)64 << 20, (int64_t)256 << 20,        \
      "off-chip DRAM (0: none; then everything must fit on chip and the host writes the "       \
      "inputs into the DTCM)")                                                                  \
    X(dram_bytes_per_cycle, "bytes", 1, 4096, 8, 16,                                            \
      "DRAM channel bandwidth per NPU clock (a DMA moves at most one bus word per cycle)")       \
    X(dram_latency, "cycles", 0, 100000, 30, 40,                                                \
      "end of a burst's service to its data in the on-chip memory (write: acknowledged)")       \
    X(dram_burst_bytes, "bytes", 1, 65536, 64, 64,                                              \
      "DRAM burst: each row of a transfer is cut into bursts of this many bytes") \
    X(dram_banks, "banks", 1, 256, 8, 8, "DRAM banks, each with one open row")                  \
    X(dram_row_bytes, "bytes", 1, (int64_t)1 << 30, 2048, 2048,                                 \
      "DRAM row (page): bank = (address / row) mod banks")                                      \
    X(dram_row_miss_cycles, "cycles", 0, 100000, 4, 6,                                          \
      "extra channel cycles of a burst whose row is not the open row of its bank")              \
    X(dma_engines, "engines", 1, 4, 2, 2,                                                       \
      "DMA engines between DRAM and the on-chip memories, each an in-order command queue")      \
    X(dma_queue_depth, "commands", 1, 256, 4, 4,                                                \
      "commands a DMA engine's queue holds (decoded, waiting for their turn)")                  \
    X(hostcpu_mhz, "MHz", 1, 100000, 400, 800,                                                  \
      "host CPU clock: a host op's CPU cycles take clock_mhz / hostcpu_mhz NPU cycles each")    \
    X(hostcpu_op_cycles, "cycles", 0, 1000000000, 2000, 2000,                                   \
      "host CPU cycles of one host op besides its elements (call, operand handling)")           \
    X(hostcpu_cvt_cycles, "cycles", 0, 1000000, 4, 4,                                           \
      "host CPU cycles per int8 element a host op dequantizes (input) or quantizes (output)")   \
    X(hostcpu_move_cycles, "cycles", 0, 1000000, 2, 2,                                          \
      "host CPU cycles per element of a data-movement op (Reshape, Slice, Concat, Resize "      \
      "nearest, ...)")                                                                          \
    X(hostcpu_arith_cycles, "cycles", 0, 1000000, 4, 4,                                         \
      "host CPU cycles per element of an arithmetic op (Add, Max, reductions, pools, Resize "   \
      "linear/cubic, ...)")                                                                     \
    X(hostcpu_transc_cycles, "cycles", 0, 1000000, 40, 40,                                      \
      "host CPU cycles per element of a transcendental op (Exp, Log, Erf, Softmax, "            \
      "LayerNormalization, Sigmoid, ...)")                                                      \
    X(hostcpu_mac_cycles, "cycles", 0, 1000000, 2, 2,                                           \
      "host CPU cycles per multiply-accumulate of a Conv, ConvTranspose, Gemm or MatMul the "   \
      "host runs")                                                                          \
    ENPU_ARCH_PARAMS_ROWSTAT(X)

/* The row-stationary engine's parameters (docs/rowstat.md), in the same
 * X(key, unit, min, max, easynpu, large, meaning) form.  Every preset
 * carries them (the easynpu engine ignores them) with the values of the
 * design note the engine follows: a 3 x 24 array, 256 / 2048 / 2048-entry
 * ifmap loop buffer, filter loop buffer and input FIFO.  The presets
 * "rowstat" and "eyeriss" select the engine (arch.c). */
#define ENPU_ARCH_PARAMS_ROWSTAT(X)                                                             \
    X(rs_rows, "PEs", 1, 64, 3, 3,                                                              \
      "row-stationary: PE rows (one filter row each; psums flow down a column)")                \
    X(rs_cols, "PEs", 1, 64, 24, 24,                                                            \
      "row-stationary: PE columns (one output row each)")                                       \
    X(rs_ifmap_lb_depth, "entries", 1, 65536, 256, 256,                                         \
      "row-stationary: ifmap loop buffer per PE (the sliding window: kernel width x channels)") \
    X(rs_filter_lb_depth, "entries", 1, 65536, 2048, 2048,                                      \
      "row-stationary: filter loop buffer per PE (filters x channels x kernel width)")          \
    X(rs_fifo_depth, "entries", 1, 65536, 2048, 2048,                                           \
      "row-stationary: input FIFO per PE (ifmap values not yet in the loop buffer)")            \
    X(rs_psum_depth, "entries", 1, 4096, 64, 64,                                                \
      "row-stationary: psum RAM per PE (one partial sum per filter of the PE)")                 \
    X(rs_psum_bits, "bits", 32, 64, 64, 64,                                                     \
      "row-stationary: psum width (PE adder, psum RAM, the chain down a column)")               \
    X(rs_glb_bytes, "bytes", 1024, ENPU_ARCH_MEM_MAX, 131072, 131072,                           \
      "row-stationary: global buffer (filters, ifmap rows, psums and outputs of a layer)")      \
    X(rs_ifmap_net_values, "values", 1, 64, 1, 1,                                              \
      "row-stationary: values per cycle on the ifmap multicast network")                        \
    X(rs_filter_net_values, "values", 1, 64, 1, 1,                                             \
      "row-stationary: values per cycle on the filter multicast network")                       \
    X(rs_psum_net_values, "values", 1, 64, 24, 24,                                             \
      "row-stationary: psums per cycle from the bottom PE row to the global buffer")            \
    X(rs_pe_pipeline, "cycles", 1, 16, 2, 2,                                                    \
      "row-stationary: MAC issue to its psum in the psum RAM or on the psum output")            \
    X(rs_config_cycles, "cycles", 0, 1000000, 32, 32,                                           \
      "row-stationary: loading a layer's node IDs and PE registers (scan chain)")              \
    X(rs_filter_banks, "flag", 0, 1, 0, 0,                                                      \
      "row-stationary: 1: the filter loop buffer works as two banks when a pass's filters "     \
      "fill at most half of it, the next pass's streaming in during this one's MACs")

/* X(key, unit, min, max, default, meaning)
 * Parameters of the systolic engine only (docs/systolic.md), in JSON/table
 * order after the shared ones.  They are part of an arch whose engine is
 * "systolic" (its JSON, table and fingerprint); any other engine holds the
 * defaults and its JSON may not name them.  The SRAM word is bus_bits wide
 * (the design's SRAM_WIDTH); the act/ofm SRAM is the main DTCM and the weight
 * SRAM the weight memory, their depths are their bytes / word bytes. */
#define ENPU_ARCH_SYA_PARAMS(X)                                                                 \
    X(sya_rows, "rows", 1, 64, 16, "PE rows of one bank (NUM_ROW)")                             \
    X(sya_cols, "columns", 1, 64, 16, "PE columns of one bank (NUM_COL)")                       \
    X(sya_banks, "banks", 1, 16, 4, "PE banks (NUM_BANK)")                                      \
    X(sya_bank_rows, "banks", 1, 16, 2,                                                         \
      "banks stacked north-south, the rest side by side (CfgMod: 2 = 2x2, 1 = 1x4, 4 = 4x1)")   \
    X(sya_acc_bits, "bits", 16, 32, 26, "PE accumulator width, signed (ACC_WIDTH)")             \
    X(sya_scheme, "scheme", 0, 4, 1,                                                            \
      "stream scheduling: 0 wait for the array to empty, 1 one skewed block per unit, "         \
      "3 blocks merged, 4 blocks merged while the filter tile stays")                           \
    X(sya_cfg_cycles, "cycles", 0, 64, 1,                                                       \
      "configuration handshake before a unit that starts a new skewed block")

/* X(key, unit, lo, hi, default, source, meaning)
 * The cost figures: what one action of a unit costs in energy and what a
 * unit costs in area, at the 45 nm reference node of their sources, and the
 * node and supply they are scaled to (tech_nm, vdd_v; the scaling rule and
 * how the per-action energies and per-unit areas are derived from these
 * figures are in docs/energy.md, implemented in src/energy/energy.c).
 * Doubles, because they are fractional; one default for both presets (they
 * describe the technology, not the machine).  They come after clock_mhz in
 * the canonical JSON and are not part of the fingerprint: a program compiled
 * for an arch runs on it whatever its cost figures. */
#define ENPU_ARCH_COSTS(X)                                                                      \
    X(tech_nm, "nm", 7, 130, 45, "Stillmaker and Baas 2017 (scaling factors)",                 \
      "technology node the 45 nm figures below are scaled to")                                 \
    X(vdd_v, "V", 0.3, 1.5, 0.9, "Horowitz 2014 (his 45 nm figures are at 0.9 V)",             \
      "supply voltage the energies are scaled to")                                             \
    X(mult8_pj, "pJ", 0, 1e6, 0.2, "Horowitz 2014", "8-bit integer multiply")                    \
    X(mult32_pj, "pJ", 0, 1e6, 3.1, "Horowitz 2014", "32-bit integer multiply")                  \
    X(add8_pj, "pJ", 0, 1e6, 0.03, "Horowitz 2014", "8-bit integer add")                         \
    X(add32_pj, "pJ", 0, 1e6, 0.1, "Horowitz 2014", "32-bit integer add")                        \
    X(sram_pj, "pJ", 0, 1e6, 10, "Horowitz 2014: 64-bit access of an 8 KB SRAM (cache)",        \
      "storage access: w bits of a C-byte memory cost sram_pj * w/64 * sqrt(C/8192)")          \
    X(wire_pj, "pJ/bit/mm", 0, 1e6, 0.121,                                                      \
      "Keckler et al. 2011 (40 nm): 310 pJ for 256 random bits over 10 mm",                    \
      "on-chip wire, per bit and mm")                                                          \
    X(bus_mm, "mm", 0, 1000, 1, "assumption",                                                   \
      "distance a bus word travels between a memory and the PE array")                         \
    X(dram_pj, "pJ/byte", 0, 1e6, 162.5,                                                        \
      "Horowitz 2014: 1.3 nJ per 64-bit DRAM access (low end of 1.3-2.6)",                     \
      "off-chip DRAM, per byte moved (another chip: not scaled)")                              \
    X(mult8_um2, "um2", 0, 1e9, 282, "Horowitz 2014", "8-bit integer multiplier")                \
    X(mult32_um2, "um2", 0, 1e9, 3495, "Horowitz 2014", "32-bit integer multiplier")             \
    X(add8_um2, "um2", 0, 1e9, 36, "Horowitz 2014", "8-bit integer adder")                       \
    X(add32_um2, "um2", 0, 1e9, 137, "Horowitz 2014", "32-bit integer adder")                    \
    X(sram_um2, "um2/bit", 0, 1e6, 1.215,                                                       \
      "Greaves (Cambridge SoC D/M notes, from CACTI): 600 F^2 per bit at F = 45 nm",           \
      "SRAM macro area per bit, periphery included")                                           \
    X(ff_um2, "um2/bit", 0, 1e6, 4.522, "Nangate 45 nm Open Cell Library, DFF_X1",              \
      "register-file bit (one flip-flop)")

typedef struct enpu_arch {
    char name[ENPU_ARCH_NAME_MAX];
    enpu_engine engine;
    enpu_requant_mode requant; /* the requantizer's integer rules (docs/numerics.md); with
                                  tflite every multiplier is a Q31 word of a quant block in
                                  the weight memory and mult_bits is unused */
#define ENPU_X_MEMBER(key, unit, lo, hi, d0, d1, doc) int64_t key;
    ENPU_ARCH_PARAMS(ENPU_X_MEMBER)
#undef ENPU_X_MEMBER
#define ENPU_X_SYA_MEMBER(key, unit, lo, hi, d, doc) int64_t key;
    ENPU_ARCH_SYA_PARAMS(ENPU_X_SYA_MEMBER)
#undef ENPU_X_SYA_MEMBER
    double clock_mhz; /* clock for time figures, > 0 (MHz) */
#define ENPU_X_COST(key, unit, lo, hi, dflt, src, doc) double key;
    ENPU_ARCH_COSTS(ENPU_X_COST)
#undef ENPU_X_COST
} enpu_arch;

/* Rows and columns of the systolic array: the banks arranged sya_bank_rows
 * high (meaningful for engine systolic only). */
static inline int64_t enpu_arch_sya_rows(const enpu_arch *a) { return a->sya_rows * a->sya_bank_rows; }
static inline int64_t enpu_arch_sya_cols(const enpu_arch *a) {
    return a->sya_cols * (a->sya_banks / (a->sya_bank_rows > 0 ? a->sya_bank_rows : 1));
}

/* Multiply-accumulate units of the engine: pes * pe_rows for EasyNPU, the
 * array's rows x columns for the systolic engine, rs_rows * rs_cols for the
 * row-stationary one.  Utilization and ideal cycles are MACs over this. */
static inline int64_t enpu_arch_mac_units(const enpu_arch *a) {
    if (a->engine == ENPU_ENGINE_SYSTOLIC) return enpu_arch_sya_rows(a) * enpu_arch_sya_cols(a);
    if (a->engine == ENPU_ENGINE_ROWSTAT) return a->rs_rows * a->rs_cols;
    return a->pes * a->pe_rows;
}

/* Bytes of one bus word (bus_bits / 8): the unit of every memory address. */
static inline int64_t enpu_arch_word_bytes(const enpu_arch *a) { return a->bus_bits / 8; }

/* Fills *out with the preset `name` (enpu_arch_preset_names: "easynpu",
 * "large", the systolic engine's "systolic", "systolic-1x4",
 * "systolic-4x1", the row-stationary engine's "rowstat", "eyeriss").  ENPU_E_USAGE
 * naming the preset and listing the known ones if unknown. */
int enpu_arch_preset(const char *name, enpu_arch *out, enpu_err *err);

/* Names of the presets, NULL-terminated. */
const char *const *enpu_arch_preset_names(void);

/* Parses an arch JSON text (n bytes, need not be NUL-terminated); `what`
 * names the source in errors.  Validates the result. */
int enpu_arch_from_json(const char *text, size_t n, const char *what, enpu_arch *out,
                        enpu_err *err);

/* Loads a preset (a spec with no '/' and not ending in ".json") or a JSON file
 * (at most ENPU_ARCH_JSON_MAX bytes), then validates.  Errors name the file
 * and the field. */
int enpu_arch_load(const char *spec, enpu_arch *out, enpu_err *err);

/* Checks every field's range and the cross-field rules, including that the
 * instruction layout derived from this arch fits the 512-bit instruction.
 * ENPU_E_INVALID naming the field, its value and the allowed range;
 * ENPU_E_LIMIT when the instruction fields do not fit; ENPU_E_UNSUPPORTED for
 * an engine that is not implemented. */
int enpu_arch_validate(const enpu_arch *a, enpu_err *err);

/* Canonical JSON (every key, table order, no "base": the parameters,
 * clock_mhz, then the cost figures): compact on one line when pretty == 0,
 * else indented with a trailing newline.  malloc'd, freed by the caller;
 * NULL only when out of memory. */
char *enpu_arch_to_json(const enpu_arch *a, int pretty);

/* The machine part of the canonical JSON, compact: every key but the cost
 * figures.  It is what a program's ARCH section holds and what the
 * fingerprint is computed over.  malloc'd; NULL only when out of memory. */
char *enpu_arch_machine_json(const enpu_arch *a);

/* CRC32 (zlib) of enpu_arch_machine_json: stamped into programs, so cost
 * figures never make a program incompatible. */
uint32_t enpu_arch_fingerprint(const enpu_arch *a);

/* The compact canonical JSON of program formats 3.0 and 3.1, which predate
 * the host CPU description: every key but the hostcpu_* ones (malloc'd;
 * NULL when out of memory).  Its CRC32 is the fingerprint of such files. */
char *enpu_arch_to_json_3_1(const enpu_arch *a);

/* "easynpu", "systolic", "rowstat"; enpu_engine_parse returns -1 if unknown. */
const char *enpu_engine_name(enpu_engine e);
int enpu_engine_parse(const char *s);

/* Human-readable table (parameter, value, unit, meaning) to f, the derived
 * figures, and what differs from preset easynpu (a note when the clock does,
 * since time figures then change at the same cycles). */
void enpu_arch_print(const enpu_arch *a, FILE *f);

/* Markdown table of the parameters (key, unit, range, easynpu, large,
 * meaning), as embedded in docs/arch.md.  malloc'd. */
char *enpu_arch_param_table_md(void);
/* Markdown table of the systolic engine's parameters (key, unit, range,
 * default, meaning) and of its presets, as embedded in docs/systolic.md.
 * malloc'd. */
char *enpu_arch_sya_table_md(void);

/* Markdown table of the cost figures (key, unit, range, default, source,
 * meaning), as embedded in docs/arch.md and docs/energy.md.  malloc'd. */
char *enpu_arch_cost_table_md(void);

/* Cost figure by key: its address in a (NULL if unknown); the sweep sets
 * fields by name.  enpu_arch_param_ref likewise for the integer parameters
 * (the systolic engine's sya_ ones included). */
double *enpu_arch_cost_ref(enpu_arch *a, const char *key);
int64_t *enpu_arch_param_ref(enpu_arch *a, const char *key);

/* Words of a memory in this arch (bytes / word bytes). */
static inline int64_t enpu_arch_words(const enpu_arch *a, int64_t bytes) {
    return bytes / enpu_arch_word_bytes(a);
}

#ifdef __cplusplus
}
#endif
#endif
