/* Private state of the simulator's shared core, which knows no engine.
 *
 * The driver (driver.c) owns a `struct enpu_sim`: the program, the memories
 * (dtcm.c), host memory, per-instruction statistics and the checker's
 * shadow memories; it runs host ops and spreads DRAM bytes over the
 * instructions (span.h).  The engines (engine.h; each in its own folder:
 * easynpu/, systolic/, rowstat/) execute the program and call the services
 * declared at the end. */
#ifndef ENPU_SIM_INTERNAL_H
#define ENPU_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "easynpu/pwl.h"
#include "easynpu/sim.h"
#include "sim/span.h"

struct sim_obs;

/* ---- memories (dtcm.c) --------------------------------------------------- */

typedef struct sim_mem {
    int wb;                      /* bytes per word (= pes) */
    uint8_t *main, *skip, *wmem; /* byte arrays, words * wb */
    int64_t main_words, skip_words, w_words;
    uint64_t *main_wc, *skip_wc; /* cycle of the last write per word (+1), or NULL */
    /* DRAM (docs/microarch.md §13.8): only the words the program can touch
     * (sim_dram_footprint), not dram_bytes; NULL when it touches none */
    uint8_t *dram;
    int64_t dram_words;
    uint64_t *dram_wc;
} sim_mem;

/* DRAM words a program can touch: its DRAM_INIT image, the instructions
 * fetched from DRAM, every dma's DRAM rows and every IO descriptor in DRAM
 * (0 when none).  The simulator allocates this much, never dram_bytes. */
int64_t sim_dram_footprint(const enpu_program *p);
/* Largest DRAM footprint the simulator allocates (ENPU_E_LIMIT past it). */
#define SIM_DRAM_MAX_BYTES ((int64_t)1 << 30)

/* Allocates the on-chip memories of arch a (no DRAM). */
int sim_mem_init(sim_mem *m, const enpu_arch *a, bool track_writes, enpu_err *err);
/* Adds the DRAM, sized for prog (sim_dram_footprint; nothing when it is 0),
 * with write cycles when the on-chip memories track them.  ENPU_E_LIMIT for
 * a footprint over SIM_DRAM_MAX_BYTES. */
int sim_mem_add_dram(sim_mem *m, const enpu_program *prog, enpu_err *err);
void sim_mem_free(sim_mem *m);
/* Loads the program's images (rest zero; a program fetched from DRAM is
 * encoded into DRAM words [0, enpu_program_dram_instr_words)) and clears the
 * write cycles. */
void sim_mem_reset(sim_mem *m, const enpu_program *p);
/* Copies the feature-map memories (main, skip) of src into dst, and the
 * weight memory too when `weights` (a program whose DMA loads weights). */
void sim_mem_copy_fmaps(sim_mem *dst, const sim_mem *src, bool weights);

static inline uint8_t *sim_mem_ptr(const sim_mem *m, int mem, int64_t word) {
    switch (mem) {
    case ENPU_MEM_MAIN: return m->main + word * m->wb;
    case ENPU_MEM_SKIP: return m->skip + word * m->wb;
    case ENPU_MEM_DRAM: return m->dram + word * m->wb;
    default: return m->wmem + word * m->wb;
    }
}

/* Words of memory `mem` (ENPU_MEM_MAIN, _SKIP, _WEIGHT, _DRAM). */
static inline int64_t sim_mem_words(const sim_mem *m, int mem) {
    switch (mem) {
    case ENPU_MEM_MAIN: return m->main_words;
    case ENPU_MEM_SKIP: return m->skip_words;
    case ENPU_MEM_DRAM: return m->dram_words;
    case ENPU_MEM_WEIGHT: return m->w_words;
    default: return 0;
    }
}

/* Write-cycle table of memory `mem`, or NULL (weight memory, untracked). */
static inline uint64_t *sim_mem_wc(const sim_mem *m, int mem) {
    switch (mem) {
    case ENPU_MEM_MAIN: return m->main_wc;
    case ENPU_MEM_SKIP: return m->skip_wc;
    case ENPU_MEM_DRAM: return m->dram_wc;
    default: return NULL;
    }
}

/* ---- the simulator ------------------------------------------------------- */

typedef struct enpu_sim_engine enpu_sim_engine;

/* One count of one instruction off by delta (kind NONE: no fault); index
 * is an enpu_memory (READS, WRITES), an enpu_unit_op (UOPS) or an
 * enpu_activity (ACTIVITY: delta of its controller cycles given to it
 * instead, so that the cycles still add up). */
typedef enum { SIM_FAULT_NONE = 0, SIM_FAULT_READS, SIM_FAULT_WRITES, SIM_FAULT_UOPS, SIM_FAULT_ACTIVITY } sim_fault_kind;
typedef struct sim_fault {
    sim_fault_kind kind;
    int instr, index;
    int64_t delta;
} sim_fault;

struct enpu_sim {
    const enpu_program *prog;
    enpu_arch arch;
    enpu_sim_opts opts;
    int P;                       /* pes */
    const enpu_sim_engine *eng;
    void *es;                    /* the engine's state */
    sim_mem mem;                 /* the machine's memories */
    sim_mem shadow;              /* check: functional replay */
    bool have_shadow;
    float **host;                /* per IO descriptor: host memory (float), or NULL */
    enpu_layer_stats *rows;      /* [n_instr] */
    uint64_t cycle;              /* current cycle (cycle mode) */
    enpu_sim_mismatch mismatch;
    bool checked;
    struct sim_obs *obs;         /* trace / VCD record (observe.h), or NULL */
    /* white-box tests and co-simulation (include/easynpu/cosim.h): called
     * after every executed cycle of a chain (EasyNPU: its core, core.h),
     * a cycle (systolic: its engine) or a pass's cycle (row-stationary: its
     * engine) with the engine's own state */
    void (*cycle_hook)(void *ctx, uint64_t t, const void *engine);
    void *hook_ctx;
    /* white-box tests: evaluate every unit in every cycle, even where the
     * cycle engine knows that nothing can happen (it must not matter) */
    bool step_every_cycle;
    /* white-box tests: cycles the cycle engine fast-forwarded in the last
     * run (docs/microarch.md §15) */
    uint64_t ff_cycles;
    /* white-box tests: the fast-forward's portable datapath even where the
     * SSE2 one is compiled in */
    bool ff_portable;
    /* white-box tests: a miscount the engine applies to its statistics at
     * the end of a run (the systolic engine: cycle.c), to show that the
     * cost model's comparison catches it */
    sim_fault fault;
    /* the roofline's DRAM bytes per instruction (span.h): engines that time
     * DRAM add the owner of every cycle they attribute (sim_own) and set
     * their channel's log to dram_log */
    sim_tspan_log owners, dram_log;
    bool ran;
};

/* Driver services used by the engines. */
/* Cycles [start, start + n) belong to instruction instr (the roofline's
 * attribution of DRAM bytes, span.h). */
static inline void sim_own(enpu_sim *sim, int instr, uint64_t start, uint64_t n) {
    sim_tspan_add(&sim->owners, instr, start, n, true);
}
/* Runs the host op named by the sync instruction `instr`. */
int sim_host_op(enpu_sim *sim, int instr, enpu_err *err);
/* Compares the words stored for a [H][W][C] tensor (pixel p at addr +
 * p*stride; stride 0: packed) between the machine's memories and the
 * check's shadow; fills sim->mismatch on the first difference. */
bool sim_compare_block(enpu_sim *sim, int mem, int64_t addr, int64_t stride, int64_t H, int64_t W,
                       int64_t C, int instr, const char *tensor);
/* ENPU_E_MISMATCH describing sim->mismatch. */
int sim_mismatch_fail(const enpu_sim *sim, enpu_err *err);
/* An instruction of an engine without fused chains (the row-stationary
 * one) finished: its row's MACs and ideal cycles, then the layer callback. */
int sim_layer_done(enpu_sim *sim, int instr, enpu_err *err);

/* ---- the progress watchdog (watchdog.c) ---------------------------------- */

/* A run in which no unit makes progress (what counts is each engine's: a
 * MAC, a memory write, a handshake, a DRAM beat) for longer than the
 * longest wait the program can legally have is a simulator bug: the engine
 * stops it with ENPU_E_INTERNAL instead of spinning to max_cycles (2^40 by
 * default, hours).  The engine records its progress and checks the bound;
 * the core derives the bound and words the message, knowing no engine. */
typedef struct sim_wd {
    uint64_t bound;              /* cycles without progress that are a bug */
    uint64_t last;               /* the last cycle with progress */
} sim_wd;

/* Arms w at cycle 0 with the bound of sim's program for an engine whose
 * longest wait of its own (pipeline depths, handshakes, a unit's stream) is
 * `pipeline` cycles: watchdog.c states the derivation. */
void sim_wd_start(sim_wd *w, const enpu_sim *sim, uint64_t pipeline);
static inline void sim_wd_progress(sim_wd *w, uint64_t t) {
    if (t > w->last) w->last = t;
}
/* The first cycle at which the run has gone too long without progress:
 * stretches and skips stop there (they may not jump past a hang). */
static inline uint64_t sim_wd_deadline(const sim_wd *w) { return w->last + w->bound + 1; }
static inline bool sim_wd_expired(const sim_wd *w, uint64_t t) { return t >= sim_wd_deadline(w); }
/* ENPU_E_INTERNAL: "simulator internal error: the ENGINE engine made no
 * progress for N cycles (the program's longest legal wait: B) at cycle T, in
 * instruction I (layer 'L'); still busy: BUSY (a bug in src/sim)". */
int sim_wd_fail(const enpu_sim *sim, const sim_wd *w, uint64_t t, int instr, const char *busy,
                enpu_err *err);
/* Appends ", unit" (or "unit" first) to the busy list buf of size n. */
void sim_wd_busy(char *buf, size_t n, const char *unit);
/* White-box tests only (tests/unit/test_watchdog.c, the CLI built for
 * tests/cli/test_watchdog_cli.c): called with every simulator right after
 * its engine's state is created, to plant a fault in it (sim->es); NULL,
 * and so nothing, in every other program. */
extern void (*sim_fault_hook)(enpu_sim *sim);
#endif
