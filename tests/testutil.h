/* Helpers shared by the test programs. */
#ifndef ENPU_TESTUTIL_H
#define ENPU_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the three includes above first. */
#include <cmocka.h>

#include "easynpu/compiler.h"
#include "easynpu/program.h"
#include "easynpu/sim.h"

struct enpu_onnx_opts;

#define ENPU_SKIP 77

/* main() of a test program whose cases split by where their inputs are:
 * `repo` (in the repository: always run, never skipped) and `shared` (the
 * real models of ENPU_SHARED_MODELS, ../shared/models by default).  A
 * program whose source calls this is registered by tests/CMakeLists.txt as
 * two CTest tests: <kind>/<name> runs `repo` (argument "repo") and
 * <kind>/<name>:shared runs `shared` (argument "shared"), or exits 77 --
 * skipped, saying why -- when the folder is absent.  Without an argument
 * (by hand) it runs both.  setup/teardown are cmocka group fixtures of both
 * parts (may be NULL). */
int enpu_test_main_parts(int argc, char **argv, const struct CMUnitTest *repo, size_t n_repo,
                         const struct CMUnitTest *shared, size_t n_shared,
                         CMFixtureFunction setup, CMFixtureFunction teardown);
#define ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared)                                         \
    enpu_test_main_parts(argc, argv, repo, sizeof repo / sizeof repo[0], shared,              \
                         sizeof shared / sizeof shared[0], NULL, NULL)

/* The same with a second tier: cases too long for `make test` (the
 * README's command, which must stay within minutes on two cores) go to
 * `make test-long`, which CI runs too.  A program whose source calls
 * ENPU_TEST_MAIN_TIERS is registered by tests/CMakeLists.txt with a CTest
 * test for each list it names (ENPU_NO_TESTS: none): <kind>/<name> (repo),
 * <name>:shared, <name>:long and <name>:long-shared, the last two labelled
 * `long` (make test leaves them out, make test-long runs only them); the
 * shared ones skip as above.  The part arguments are "repo", "shared",
 * "long", "long-shared"; none runs every list. */
int enpu_test_main_tiers(int argc, char **argv, const struct CMUnitTest *repo, size_t n_repo,
                         const struct CMUnitTest *shared, size_t n_shared,
                         const struct CMUnitTest *long_repo, size_t n_long_repo,
                         const struct CMUnitTest *long_shared, size_t n_long_shared);
extern const struct CMUnitTest enpu_no_tests[1]; /* a marker, never run */
#define ENPU_NO_TESTS enpu_no_tests
#define ENPU_TEST_COUNT(list) (sizeof(list) / sizeof((list)[0]))
#define ENPU_TEST_MAIN_TIERS(argc, argv, repo, shared, long_repo, long_shared)                  \
    enpu_test_main_tiers(argc, argv, repo, ENPU_TEST_COUNT(repo), shared, ENPU_TEST_COUNT(shared), \
                         long_repo, ENPU_TEST_COUNT(long_repo), long_shared,                     \
                         ENPU_TEST_COUNT(long_shared))

/* Path of a file under ../shared/models, or NULL when the folder is absent
 * (the caller then skips, having printed why). */
const char *enpu_test_shared_model(const char *rel);
/* True if ../shared/models exists; prints the skip message when it does not. */
int enpu_test_have_shared_models(void);
/* Runs a shell command, returns its exit status (-1 if it did not exit);
 * stdout+stderr go to *out (malloc'd, NUL-terminated) when out is non-NULL. */
int enpu_test_run(const char *cmd, char **out);
/* The whole file at path (up to 16 MiB), NUL-terminated, malloc'd; fails
 * the test naming the file when it cannot be read. */
char *enpu_test_slurp(const char *path);

/* The compiler's cost model equals the simulator exactly (docs/microarch.md
 * §14; for a systolic arch enpu_sya_model_program's row of every
 * instruction, its cycles, activities, reads and writes of every memory and
 * datapath operations, and the total, docs/systolic.md; for a
 * row-stationary arch every figure of every instruction,
 * enpu_rs_model_diff, docs/rowstat.md): enpu_cost_program's row of every instruction of p, activity by
 * activity, against res, the statistics of a cycle-mode run of p, for every
 * chain enpu_cost_exact says the model covers, and the DRAM words each
 * instruction moves (enpu_model_program) for all.  On any difference prints
 * the differing rows (prefixed with `what`) and fails the test.  Returns the
 * number of instructions outside the model (not compared). */
int enpu_test_assert_cost_exact(const char *what, const enpu_program *p, const enpu_sim_result *res);
/* The systolic part of it, without failing: compares enpu_sya_model_program
 * with res (a cycle-mode run of p on a systolic arch) -- per instruction
 * its cycles, every activity, the reads and writes of every memory and
 * every datapath operation, and the total cycles --, prints every
 * difference (prefixed with `what`) and returns their number; `first`
 * (first_n bytes, may be NULL) gets the first, naming the instruction and
 * the figure ("instr 3 '/fc1/Gemm' (sya_fc) pe_reg writes: simulated ...").
 * The mutation test shows with it that a miscount is caught. */
int enpu_test_sya_cost_diff(const char *what, const enpu_program *p, const enpu_sim_result *res,
                            char *first, size_t first_n);

/* No layer of a cycle-mode run lies above its roofline's roof (the MACs
 * per cycle it achieved against min(MAC units, its MACs per DRAM byte x the
 * DRAM's bytes per cycle), docs/offchip.md "The roofline"); fails naming
 * the layer otherwise.  enpu_test_e2e checks it on every run. */
void enpu_test_assert_under_roof(const char *what, const enpu_arch *a, const enpu_sim_result *res);

/* Preset `name` (fails the test if there is none). */
enpu_arch enpu_test_preset(const char *name);

/* The quantized graph of an ONNX model, calibrated on calib (a folder or
 * files as `--calib` takes them; NULL: the fallback inputs) with the
 * numerics of arch a; fails the test on any error. */
enpu_graph *enpu_test_quantize(const char *onnx, const char *calib, const enpu_arch *a);
/* A one-layer program for preset `arch`: a k x k convolution (stride s) of
 * ci channels into co over an h x w input, weights and bias from a fixed
 * pattern, quantized without calibration data and compiled; *in gets its
 * input (a fixed pattern too).  Fails the test on any error. */
void enpu_test_conv_program(const char *arch, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t k,
                            int64_t s, enpu_program *p, enpu_buf *in);
/* The same with importer options (--input-shape, --bind); io may be NULL. */
enpu_graph *enpu_test_quantize_opts(const char *onnx, const struct enpu_onnx_opts *io,
                                    const char *calib, const enpu_arch *a);
/* The same with activations and weights of `bits` (8 or 16) bits. */
enpu_graph *enpu_test_quantize_bits(const char *onnx, const char *calib, const enpu_arch *a, int bits);
/* Both: importer options (io may be NULL) and bits. */
enpu_graph *enpu_test_quantize_full(const char *onnx, const struct enpu_onnx_opts *io,
                                    const char *calib, const enpu_arch *a, int bits);

/* What enpu_test_e2e measured. */
#define ENPU_TEST_E2E_OUTPUTS 4
#define ENPU_TEST_E2E_OUTPUT_MAX 4096
typedef struct enpu_test_e2e_result {
    uint64_t cycles;                 /* simulated (cycle mode) */
    int64_t modelled;                /* the compiler's model of the program */
    int compared;                    /* layer outputs compared with the golden reference */
    uint64_t dram_read, dram_written; /* DRAM words */
    bool offchip;                    /* the compiler streamed through DRAM */
    int n_instr;
    /* the int8 outputs (first ENPU_TEST_E2E_OUTPUTS, up to _MAX elements), user order */
    int8_t out8[ENPU_TEST_E2E_OUTPUTS][ENPU_TEST_E2E_OUTPUT_MAX];
    int64_t n_out8[ENPU_TEST_E2E_OUTPUTS];
    enpu_npu_share share;            /* the NPU's share of MACs and time, the host ops */
    uint64_t npu_macs, host_macs;
    /* the energy of the simulator's counts and of the estimate's
     * (enpu_estimate_program: the engine's cost model), pJ */
    double energy_pj, estimate_pj;
} enpu_test_e2e_result;

/* End to end on a model, failing the test on any difference: import onnx,
 * quantize on calib (the arch's numerics), compile for arch (co may be
 * NULL), run on input in cycle mode (with the simulator's own check) and in
 * functional mode, comparing every layer output the program stores with the
 * golden int8 reference right after the layer ran, element by element, and
 * the outputs bit for bit; the cost model with the simulator
 * (enpu_test_assert_cost_exact); and the energy model's analytic access
 * counts with the simulator's (energy_check.h).  Returns the simulated cycles; fills *out
 * when given. */
uint64_t enpu_test_e2e(const char *name, const char *onnx, const char *calib, const char *input,
                       const enpu_arch *arch, const enpu_compile_opts *co, enpu_test_e2e_result *out);
/* The same from a quantized graph (e.g. an imported .tflite) on int8
 * inputs, one per graph input in the IR's order (the arch must have the
 * graph's requant); out->out8 gets the int8 outputs. */
uint64_t enpu_test_e2e_q(const char *name, const enpu_graph *qg, const int8_t *const *inputs,
                         const enpu_arch *arch, const enpu_compile_opts *co,
                         enpu_test_e2e_result *out);
/* The same, the model imported with options (--input-shape, --bind). */
uint64_t enpu_test_e2e_opts(const char *name, const char *onnx, const struct enpu_onnx_opts *io,
                            const char *calib, const char *input, const enpu_arch *arch,
                            const enpu_compile_opts *co, enpu_test_e2e_result *out);
/* The same with the model quantized to `bits` (8 or 16) bits. */
uint64_t enpu_test_e2e_bits(const char *name, const char *onnx, const char *calib, const char *input,
                            const enpu_arch *arch, const enpu_compile_opts *co, int bits,
                            enpu_test_e2e_result *out);
/* All the options at once: importer options (io may be NULL) and bits;
 * `input` names one file per graph input, comma-separated. */
uint64_t enpu_test_e2e_full(const char *name, const char *onnx, const struct enpu_onnx_opts *io,
                            const char *calib, const char *input, const enpu_arch *arch,
                            const enpu_compile_opts *co, int bits, enpu_test_e2e_result *out);

/* Fast-forward (docs/microarch.md §15) changes nothing: runs p on arch a
 * (float inputs in_f32, or int8 ones in_i8 when in_f32 is NULL) with
 * opts.per_cycle and without it, five times each (no record, no record with
 * the fast path's portable datapath, a trace when `trace`, a VCD window at
 * the start and one in the middle), and fails the test on
 * any difference: status and message, cycles, every statistic of every
 * instruction and row, the outputs, every memory and its write cycles,
 * the trace and VCD files byte for byte.  Returns the cycles; *ff_cycles
 * and *compute_cycles (when not NULL) get how many of them the fast path
 * took in one piece, and how many were compute cycles. */
uint64_t enpu_test_assert_ff_equal(const char *what, const enpu_program *p, const enpu_arch *a,
                                   const enpu_buf *in_f32, const int8_t *const *in_i8, int n_in,
                                   bool trace, uint64_t *ff_cycles, uint64_t *compute_cycles);
/* The same with one run each way, without a record: for programs whose
 * per-cycle path is too slow to run five times. */
uint64_t enpu_test_assert_ff_equal_once(const char *what, const enpu_program *p, const enpu_arch *a,
                                        const enpu_buf *in_f32, const int8_t *const *in_i8, int n_in,
                                        uint64_t *ff_cycles, uint64_t *compute_cycles);

/* Runs that stop early, with and without fast-forward: p on arch a (float
 * inputs) stopped by each cycle limit of limits[] and by a layer callback
 * failing at each of its calls; fails the test unless both paths stop with
 * the same status and message, after the same cycles, with the same
 * statistics of every instruction (what the per-cycle path counted by
 * then).  Returns the runs that stopped. */
int enpu_test_assert_ff_stops(const char *what, const enpu_program *p, const enpu_arch *a, const enpu_buf *in,
                              int n_in, const uint64_t *limits, int n_limits);

/* Runs p (compiled from qg) on arch a in cycle mode with the float input
 * in, every layer's output compared with the golden int8 reference right
 * after it ran (enpu_golden_check_layer) and the outputs bit for bit; fails
 * the test on any difference.  *res gets the run (enpu_sim_result_free);
 * returns the layers compared. */
int enpu_test_run_golden(const char *what, const enpu_program *p, const enpu_arch *a, const enpu_graph *qg,
                         const enpu_buf *in, enpu_sim_result *res);

#endif
