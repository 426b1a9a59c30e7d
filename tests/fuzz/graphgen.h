/* Differential fuzzing of the whole pipeline on random graphs (docs/hardening.md,
 * "Random graphs").
 *
 * gg_generate builds, from one 64-bit seed, a random LEGAL float network with
 * the IR API (every op the compiler maps, random shapes, channel counts,
 * windows, weights and BatchNormalization statistics), a random legal
 * architecture (pes 8/16/32, pad, psum and weight-pad depths, memory sizes,
 * latencies), calibration inputs and a test input.  gg_check takes one such
 * case through quantize -> compile -> program file and listing round trips
 * -> simulate (cycle mode with the simulator's replay check, and functional
 * mode), compares every stored layer output and every model output (values
 * and shapes) with the golden int8 reference element by element, the golden
 * output with the float reference (a net for gross quantizer errors, below),
 * and the simulated cycles of every instruction and activity with the
 * compiler's cost model (enpu_cost_program), which docs/microarch.md says
 * are equal; and runs cycle mode again on its per-cycle path
 * (opts.per_cycle), which must give the same cycles, statistics and outputs
 * as the fast-forwarded run (docs/microarch.md §15; on a systolic arch,
 * docs/systolic.md "Fast-forward").
 *
 * The same seed always gives the same case (the generator uses its own
 * generator, no clock, no global state), so a failure is replayed from its
 * seed: `fuzz_graphs --replay SEED`.
 *
 * Shared by tests/fuzz/test_graph_fuzz.c (a fixed seed set in `make test`)
 * and tests/fuzz/fuzz_graphs.c (new seeds for a time budget, CI). */
#ifndef ENPU_GRAPHGEN_H
#define ENPU_GRAPHGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/ir.h"
#include "easynpu/tensor_io.h"

#define GG_DESC_MAX 1024

typedef struct gg_case {
    uint64_t seed;
    enpu_graph *g;      /* float graph: shapes inferred, validated */
    enpu_arch arch;
    int n_calib;        /* calibration samples */
    enpu_buf *calib;    /* n_calib * g->n_inputs float32 buffers */
    enpu_buf *input;    /* g->n_inputs: the input of the checked run */
    char desc[GG_DESC_MAX]; /* one line: the arch and the network */
} gg_case;

typedef enum gg_verdict {
    GG_PASS = 0, /* bit-exact in both modes, cycles equal to the cost model */
    GG_REFUSED,  /* the quantizer or compiler refused it cleanly (NOFIT, UNSUPPORTED) */
    GG_FAIL      /* anything else: a mismatch, an unclear error, a wrong cycle count */
} gg_verdict;

/* The int8 model against the float one (a net for the quantizer and the
 * golden reference, which the simulator check cannot see): an output of at
 * least GG_FLOAT_MIN_ELEMS elements whose SQNR on a calibration sample is
 * below GG_FLOAT_MIN_SQNR_DB while its largest error exceeds
 * GG_FLOAT_MAX_ERR of the output's range fails ("float").  Quantization
 * noise of the random networks is mostly above 16 dB (median 39 dB over
 * ~4,000 graphs); a dropped clamp measured 0 dB with errors of 9% of the
 * range.  A single scalar is not judged (its SQNR is that of one number, 3
 * dB seen legitimately), nor an output whose signal on that sample is small
 * against its range (-1 dB with errors of 0.2% of the range, 5 dB with 3.6%
 * after a one-unit bottleneck seen legitimately), nor a graph with an
 * activation table fitted worse than GG_FLOAT_MAX_TABLE_LSB (a 4-segment
 * HardSwish is 5 LSB off by design, and 0 dB downstream was seen). */
#define GG_FLOAT_MIN_ELEMS 4
#define GG_FLOAT_MIN_SQNR_DB 3
#define GG_FLOAT_MAX_ERR 0.05
#define GG_FLOAT_MAX_TABLE_LSB 2

typedef struct gg_outcome {
    gg_verdict verdict;
    const char *stage;  /* where it stopped: "generate", "quantize", "compile", "program",
                           "golden", "kernels", "cycle", "functional", "float", "cost", or "" */
    char why[64];       /* a refusal's category, e.g. "compile nofit: main DTCM" */
    char msg[ENPU_ERR_MSG_MAX + 160];
    int n_instr;        /* instructions of the program */
    uint8_t opcodes[256]; /* opcodes the program uses (1 each); [255]: a fused chain */
    int held;           /* instructions holding their sums (input-channel blocks, ps_hold) */
    int held_conv;      /* of them convolutions (kernel-row blocks) */
    int word_cut;       /* instructions reading some channel words of each pixel (ifmap_wpp) */
    int compared;       /* layer outputs compared with the golden reference (cycle mode) */
    uint64_t cycles;    /* simulated cycles (cycle mode) */
    double sqnr_db;     /* output 0, golden int8 vs the float reference on the first
                           calibration sample (INFINITY when equal, NAN when not compared) */
    double err_frac;    /* its largest error as a fraction of the output's range */
} gg_outcome;

/* One seed in GG_TFLITE_ONE_IN (gg_seed_tflite, a hash of the seed) is a
 * case with requant "tflite": the generator keeps to what TFLite's integer
 * kernels compute (table activations are LOGISTIC, TANH or HARD_SWISH, the
 * only host op a SOFTMAX, average pools of one divisor), the arch runs
 * TFLite's requantizer, and gg_check rewrites the quantizer's graph into
 * TFLite's integer parameters (as the TFLite importer prepares them) before
 * the same checks. */
#define GG_TFLITE_ONE_IN 4
bool gg_seed_tflite(uint64_t seed);

/* One seed in GG_ENGINE_ONE_IN of the others (gg_seed_engine, a hash of the
 * seed) runs its graph on a random systolic or row-stationary architecture
 * instead (gen_engine_arch): the model quantized for that engine, its
 * back end, its cycle engine against its cost model, the same checks. */
#define GG_ENGINE_ONE_IN 6
#define GG_ENGINE_SALT 0x5E5E0E0E1234AB01ull
bool gg_seed_engine(uint64_t seed);

/* Builds the case of `seed` into *c (zeroed first; free with gg_case_free,
 * also on failure).  Returns 0, or a negative status with err naming what
 * the generator could not build (a generator bug: counted as a failure). */
int gg_generate(uint64_t seed, gg_case *c, enpu_err *err);
void gg_case_free(gg_case *c);

/* Fills *c for a hand-made float graph g (ownership taken, also on failure;
 * shapes inferred and validated by the caller) on arch, with calibration
 * and test inputs drawn from `seed` as gg_generate draws them. */
int gg_case_from_graph(enpu_graph *g, const enpu_arch *arch, uint64_t seed, gg_case *c,
                       enpu_err *err);

/* Fills *c from an ONNX model, a calibration spec (folder or files, as
 * `easynpu run --calib`) and one input file per graph input, for arch
 * `arch_spec` (a preset or JSON file), so that a case found elsewhere is
 * checked by the same harness. */
int gg_case_from_files(const char *onnx, const char *calib, const char *input,
                       const char *arch_spec, gg_case *c, enpu_err *err);

/* The differential check of one case (see the top of this file).  Never
 * aborts on a refusal or a mismatch: the outcome says what happened. */
void gg_check(const gg_case *c, gg_outcome *o);

/* Writes what a failure is debugged with: PREFIX.qjson (the quantized
 * graph), PREFIX.arch.json and PREFIX.inputN.npy, for `easynpu run
 * PREFIX.qjson --arch PREFIX.arch.json --input PREFIX.input0.npy`. */
int gg_dump(const gg_case *c, const char *prefix, enpu_err *err);

/* gg_generate then gg_check; desc (n bytes) gets the case's description. */
void gg_run_seed(uint64_t seed, gg_outcome *o, char *desc, size_t n);

#endif
