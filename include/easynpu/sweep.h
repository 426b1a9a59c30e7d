/* Design-space sweeps (docs/energy.md "Sweeps"): a grid, or a seeded random
 * sample of it, over any fields of the architecture description, times a
 * set of models; for every point and model the cycles, utilization, energy
 * and area, or why the point does not fit; the Pareto front of latency,
 * energy and area.
 *
 * The space: parameters in order, each with its list of values; point i of
 * the grid takes, for the last parameter, value i mod n_last, and so on
 * (the first parameter varies slowest).  A point's identity is its grid
 * index, so a sample, a resumed run and a run split across processes all
 * name a point the same way.  Fields coupled by enpu_arch_validate follow
 * `pes` unless they are swept themselves: bus_bits = 8*pes, ifmap_pads =
 * weight_pad_groups = pes.
 *
 * Evaluation: the quantized graph of a model for the point's numeric widths
 * (mult_bits, acc_bits, act_segments; from a callback, cached), the
 * compiler, then either the schedule model and the analytic access counts
 * (energy.h enpu_estimate_program; the default, a few milliseconds) or the
 * cycle simulator (opts.simulate).  Points are spread over threads; the
 * engine is reentrant and has no global state. */
#ifndef EASYNPU_SWEEP_H
#define EASYNPU_SWEEP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/energy.h"
#include "easynpu/error.h"
#include "easynpu/ir.h"
#include "easynpu/tensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_SWEEP_MAX_PARAMS 32
#define ENPU_SWEEP_MAX_VALUES 4096       /* per parameter */
#define ENPU_SWEEP_MAX_POINTS 1000000    /* evaluated in one sweep */
#define ENPU_SWEEP_MAX_GRID ((uint64_t)1 << 53)
#define ENPU_SWEEP_MAX_MODELS 16
#define ENPU_SWEEP_REASON_MAX 400

typedef struct enpu_sweep_param {
    char key[32];       /* a field of the arch description */
    bool is_double;     /* clock_mhz or a cost figure */
    int n;
    double *values;     /* n values (integers exactly, for integer fields) */
} enpu_sweep_param;

typedef struct enpu_sweep_space {
    enpu_arch base;     /* every field a point does not set */
    int n_params;
    enpu_sweep_param params[ENPU_SWEEP_MAX_PARAMS];
    uint64_t n_grid;    /* product of the value counts */
    uint64_t n_points;  /* points evaluated: n_grid, or the sample's size */
    uint64_t *sample;   /* ascending grid indices of a random sample; NULL: the grid */
    uint64_t seed;
} enpu_sweep_space;

/* An empty space over `base` (one point: the base itself). */
void enpu_sweep_space_init(enpu_sweep_space *s, const enpu_arch *base);
void enpu_sweep_space_free(enpu_sweep_space *s);

/* Adds parameter `key` with the values of `spec`: a list "a,b,c", or a range
 * "lo:hi" (step 1), "lo:hi:+step" (arithmetic) or "lo:hi:xf" (geometric,
 * factor f > 1), hi included when reached.  Integer fields take integers.
 * ENPU_E_USAGE naming the key and what is wrong (unknown field, name or
 * engine, a repeated key, a bad number, too many values). */
int enpu_sweep_space_add(enpu_sweep_space *s, const char *key, const char *spec, enpu_err *err);

/* "KEY=SPEC" as enpu_sweep_space_add (the --param form). */
int enpu_sweep_space_add_arg(enpu_sweep_space *s, const char *arg, enpu_err *err);

/* A space from JSON text: {"params": {"key": [values] | "spec", ...},
 * "random": N, "seed": S} (params in the object's order; docs/energy.md).
 * `what` names the source in errors.  The base is s's (set it before). */
int enpu_sweep_space_from_json(enpu_sweep_space *s, const char *text, size_t n, const char *what,
                               enpu_err *err);

/* Evaluates a seeded random sample of n distinct grid points instead of
 * the whole grid (all of it when n >= n_grid).  Call after the last add. */
int enpu_sweep_space_sample(enpu_sweep_space *s, uint64_t n, uint64_t seed, enpu_err *err);

/* Grid index of the k-th point evaluated (k < n_points). */
uint64_t enpu_sweep_point_index(const enpu_sweep_space *s, uint64_t k);

/* The value of parameter p at grid point idx. */
double enpu_sweep_point_value(const enpu_sweep_space *s, uint64_t idx, int p);

/* The arch of grid point idx (not validated: the evaluation says why a
 * point is invalid).  Named "p<idx>". */
void enpu_sweep_point_arch(const enpu_sweep_space *s, uint64_t idx, enpu_arch *out);

/* The canonical text of the space (base arch JSON, parameters and values,
 * sample): what the sweep id is computed over. malloc'd. */
char *enpu_sweep_space_text(const enpu_sweep_space *s);

/* ---- evaluation ------------------------------------------------------------ */

typedef enum enpu_point_status {
    ENPU_PT_PENDING = 0, /* not evaluated (an interrupted sweep) */
    ENPU_PT_OK,          /* fits; figures filled */
    ENPU_PT_INVALID,     /* the arch is not valid (enpu_arch_validate) */
    ENPU_PT_UNSUPPORTED, /* the compiler does not map onto it (pe_rows > 1) */
    ENPU_PT_NOFIT,       /* the model does not fit (ENPU_E_NOFIT: tensor, need, have) */
    ENPU_PT_ERROR        /* anything else (the message says) */
} enpu_point_status;

/* "pending", "ok", "invalid", "unsupported", "nofit", "error"; parse: -1 if unknown. */
const char *enpu_point_status_name(enpu_point_status s);
int enpu_point_status_parse(const char *s);

/* One point on one model. */
typedef struct enpu_point_result {
    uint64_t point;                   /* grid index */
    int model;
    enpu_point_status status;
    char reason[ENPU_SWEEP_REASON_MAX]; /* status != ok: the one-line error */
    uint64_t cycles, macs;
    double time_us, utilization, energy_pj, power_mw, edp_js, area_um2;
    double part_pj[ENPU_EP_COUNT];
} enpu_point_result;

/* The quantized graph of model `model` for arch a (its mult_bits, acc_bits,
 * act_segments): *qg is owned by the engine afterwards.  Called at most once
 * per model and widths, never concurrently. */
typedef int (*enpu_sweep_quantize_fn)(void *ctx, int model, const enpu_arch *a, enpu_graph **qg,
                                      enpu_err *err);

typedef struct enpu_sweep_model {
    const char *name;            /* shown in the results */
    const enpu_buf *inputs;      /* simulate: float inputs in IO order (NULL: zeros, which time
                                    and count as any input: the machine's timing and accesses
                                    do not depend on the values) */
    int n_inputs;
} enpu_sweep_model;

typedef struct enpu_sweep_opts {
    bool simulate;               /* cycle simulator instead of the schedule model */
    int threads;                 /* 0: every online core */
    enpu_sweep_quantize_fn quantize;
    void *quantize_ctx;
    /* called after every point (under the engine's lock), may be NULL */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    volatile sig_atomic_t *stop; /* when it becomes non-zero, no further point starts */
} enpu_sweep_opts;

/* A sweep's engine state: the models and the cache of quantized graphs,
 * shared by successive enpu_sweep_eval calls. */
typedef struct enpu_sweeper enpu_sweeper;

int enpu_sweeper_new(const enpu_sweep_space *s, const enpu_sweep_model *models, int n_models,
                     const enpu_sweep_opts *o, enpu_sweeper **out, enpu_err *err);
void enpu_sweeper_free(enpu_sweeper *w);

/* Evaluates grid points points[0..n) on every model with the engine's
 * threads; out[k * n_models + m] gets point k on model m (status PENDING
 * when stopped before it).  A point that fails is a result, not an error:
 * the return is non-zero only for ENPU_E_NOMEM. */
int enpu_sweep_eval(enpu_sweeper *w, const uint64_t *points, uint64_t n, enpu_point_result *out,
                    enpu_err *err);

/* Threads the engine uses. */
int enpu_sweeper_threads(const enpu_sweeper *w);

/* ---- the front ------------------------------------------------------------- */

/* A configuration's figures over all models: latency = the sum of their
 * times, energy = the sum of their energies, area; ok only when every model
 * fits.  configs[k] for the k-th group of n_models results (results sorted
 * by point, then model). */
typedef struct enpu_sweep_config {
    uint64_t point;
    bool ok;
    double time_us, energy_pj, area_um2;
    bool pareto;      /* on the front: no other ok config is <= in all three and < in one */
} enpu_sweep_config;

/* Fills configs (n_results / n_models entries) from results sorted by
 * (point, model) and marks the Pareto front; returns the front's size. */
uint64_t enpu_sweep_pareto(const enpu_point_result *results, uint64_t n_results, int n_models,
                           enpu_sweep_config *configs);

#ifdef __cplusplus
}
#endif
#endif
