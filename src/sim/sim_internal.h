/* Private state of the simulator, shared by its units.
 *
 * The driver (driver.c) owns a `struct enpu_sim`: the program, the memories
 * (dtcm.c), host memory, per-instruction statistics and the checker.  The
 * top controller's decode (top_ctrl.c) turns a chain of fused instructions
 * into a `sim_chain`: the registers of the scheduler and PE controller plus
 * the parameter registers, shared by both modes.  Engines (engine.h) execute
 * chains: the cycle engine (core.h and the unit files) and the functional one
 * (functional.c). */
#ifndef ENPU_SIM_INTERNAL_H
#define ENPU_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "easynpu/pwl.h"
#include "easynpu/sim.h"

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

/* ---- decoded chains (top_ctrl.c) ----------------------------------------- */

typedef enum sim_kind {
    K_CONV = 0, /* conv, conv_relu: broadcast MAC */
    K_DW,       /* dwconv, avgpool: multicast MAC */
    K_MAX,      /* maxpool: compare */
    K_BN,       /* w[c]*x + bias[c], per-channel requant */
    K_RELU,     /* x - zp_in, per-tensor requant */
    K_ACT,      /* a[i]*x + b[i], table requant */
    K_ADD,      /* in1*(x-zp_in) + in2*(op2-zp_op2) */
    K_MUL,      /* (x-zp_in)*(op2-zp_op2) */
    K_MOVE      /* reshape: copy */
} sim_kind;

/* One computing stage of a chain. */
typedef struct sim_stage {
    int instr;                  /* instruction index */
    const enpu_instr *in;
    sim_kind kind;
    int64_t ho, wo, co;         /* this stage's output map */
    bool per_channel;           /* M[c], S[c] from the quant block */
    const int32_t *bias;        /* [co] (conv, dw, bn) */
    const uint32_t *M;          /* [co] */
    const int8_t *S;            /* [co] */
    const int8_t *bnw;          /* [co] bn multipliers */
    enpu_rq rq;                 /* per-tensor requant; zp/lo/hi for every kind */
    int32_t zp_in, zp_op2, in1, in2;
    int in1_s, in2_s;           /* add, requant tflite: shifts of in1/in2 */
    int rqmode;                 /* the arch's requant (enpu_requant_mode) */
    const enpu_pwl_table *tab;  /* act */
    bool w_main;                /* writes the ofmap (the last stage) */
    bool w_skip;                /* store_skip of this stage (own layout) */
    int64_t ofmap_addr, skip_addr;
    int64_t owpp, oword;        /* stored layout of the ofmap (§12.5) */
    bool op2;                   /* add/mul */
    int op2_mem;
    int64_t op2_addr;
} sim_stage;

/* The decoded chain: scheduler and PE-controller registers (§11.4, §12). */
typedef struct sim_chain {
    int P;                      /* pes */
    int first, n_instr;         /* instructions [first, first + n_instr) */
    int n_st;                   /* computing stages */
    sim_stage *st;
    const enpu_instr *h;        /* head */
    bool bcast;                 /* BasicConv (broadcast) head: conv, conv_relu, fc */
    bool fc;                    /* fc: units are the words of the whole map (§12.1) */
    bool move;                  /* standalone reshape */
    /* head geometry */
    int64_t hi, wi, ci, ho, wo, co, hk, wk, sh, sw, dh, dw, pt, pl;
    int64_t G, cpg, opg, taps;
    int64_t zs, z;               /* psum words per position of a full block, z = zs*P */
    int64_t nbk, nblk;           /* output-channel blocks per group, in all (§12.3) */
    int64_t zstride;             /* psum words of a block in the lane tables */
    int64_t wpg;                 /* weight words per [c][hk][wk] row (ceil(opg/P)) */
    int64_t bh, nb;              /* kernel rows per band, bands (§12.2) */
    int64_t tx, ty, txi, tyi;
    int64_t rows;                /* virtual rows: PE rows x lane groups (§16) */
    int64_t lg, L;               /* lane groups per PE row, lanes per group (P / lg) */
    int64_t n_tx, n_ty;          /* tile columns and rows */
    int64_t wpp_in;              /* ifmap words per pixel */
    int64_t ifmap_addr, weight_addr;
    int32_t pad_value;           /* zp_in of the head */
    bool dbuf;                   /* double-buffered pads */
    bool aligned;                /* psum word lanes == output word lanes */
    int64_t n_words;             /* psum words with lane tables */
    int32_t *chan;               /* [n_words][P] channel of each lane, -1 */
    int64_t n_par;               /* parameter words (§11.3) */
    bool has_op2;
    /* reshape at store (a reshape member, or the standalone reshape) */
    bool remap;
    int rs_instr;
    int64_t rs_hi, rs_wi, rs_ci, rs_ho, rs_wo, rs_co, rs_perm;
    int64_t rs_ofmap_addr, rs_skip_addr;
    int64_t rs_owpp, rs_oword;   /* stored layout of the reshape's ofmap (§12.5) */
    bool rs_w_skip;
    uint64_t n_units;
} sim_chain;

/* Parameter storage sized for the largest chain of the program. */
typedef struct sim_decoder {
    int max_stages;
    int64_t max_co;              /* per stage */
    int64_t max_lanes;           /* n_words * P */
    sim_stage *st;
    int32_t *bias;               /* [max_stages][max_co] */
    uint32_t *M;
    int8_t *S, *bnw;
    enpu_pwl_table *tab;         /* [max_stages] */
    int32_t *chan;
} sim_decoder;

int sim_decoder_init(sim_decoder *d, const enpu_program *p, enpu_err *err);
void sim_decoder_free(sim_decoder *d);
/* Number of instructions in the chain starting at `first` (1 + members). */
int sim_chain_len(const enpu_program *p, int first);
/* Decodes the chain at `first` into *c, reading the parameter blocks from
 * mem's weight memory.  ENPU_E_UNSUPPORTED / ENPU_E_INVALID name the layer. */
int sim_decode_chain(sim_decoder *d, const enpu_program *p, const sim_mem *mem, int first,
                     sim_chain *c, enpu_err *err);
/* MACs of one instruction (docs/microarch.md §11.10). */
/* Closed-form compute cycles of the chain's stages (§11.11), per stage
 * (out[k] for stage k). */
void sim_chain_compute_model(const sim_chain *c, uint64_t *out);

/* Output destination of the lanes of one word: the runs of lanes that land
 * in one memory word, for writes (group conv with unaligned groups, reshape
 * at store).  `base` is the first channel of the psum word's lane 0 (lanes
 * consecutive) at output position (oy, ox). */
typedef struct sim_run {
    int64_t addr;                /* word address */
    int src, dst, len;           /* lanes [src, src+len) -> [dst, dst+len) */
    int zfill;                   /* lanes [dst+len, P) are written 0 */
} sim_run;

/* Runs for the lanes [0, n) holding channels c0 + i of the stage output at
 * (oy, ox), written directly ([ho][wo][co] at base) or through the chain's
 * reshape remap.  Returns the run count (<= n). */
int sim_runs_direct(int P, int64_t base, int64_t wpp, int64_t wo, int64_t co, int64_t oy,
                    int64_t ox, int64_t c0, int n, sim_run *out);
int sim_runs_remap(const sim_chain *c, int P, int64_t base, int64_t wpp, int64_t oy, int64_t ox,
                   int64_t c0, int n, sim_run *out);
/* Rank of element (h, w, ch) of the reshape input in the chain's perm order. */
int64_t sim_perm_rank(const sim_chain *c, int64_t h, int64_t w, int64_t ch);

/* Requantization of one lane of stage s: channel c (only when per_channel). */
static inline int32_t sim_requant(const sim_stage *s, int64_t acc, int32_t c) {
    if (s->per_channel)
        return enpu_requant_as(s->rqmode, acc, s->M[c], s->S[c], s->rq.zp, s->rq.lo, s->rq.hi);
    return enpu_requant_as(s->rqmode, acc, s->rq.M, s->rq.S, s->rq.zp, s->rq.lo, s->rq.hi);
}

/* The single-input stage functions (bn, relu, act, add, mul, move):
 * accumulator from the int8 operand x (and op2). */
static inline int64_t sim_stage_acc(const sim_stage *s, int32_t c, int32_t x, int32_t op2) {
    switch (s->kind) {
    case K_BN: return (int64_t)s->bnw[c] * x + s->bias[c];
    case K_RELU: return (int64_t)x - s->zp_in;
    case K_ACT: {
        int i = enpu_pwl_segment(s->tab, (int8_t)x);
        return (int64_t)s->tab->a[i] * x + s->tab->b[i];
    }
    case K_ADD:
        if (s->rqmode == ENPU_REQUANT_TFLITE)
            return enpu_tfl_add_term(x - s->zp_in, (uint32_t)s->in1, s->in1_s) +
                   enpu_tfl_add_term(op2 - s->zp_op2, (uint32_t)s->in2, s->in2_s);
        return (int64_t)s->in1 * (x - s->zp_in) + (int64_t)s->in2 * (op2 - s->zp_op2);
    case K_MUL: return (int64_t)(x - s->zp_in) * (op2 - s->zp_op2);
    default: return x;
    }
}

/* Sentinel of an empty max-pool accumulator (only padding seen). */
#define SIM_MAX_EMPTY INT64_MIN

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
    sim_decoder dec;
    sim_decoder shadow_dec;
    float **host;                /* per IO descriptor: host memory (float), or NULL */
    enpu_layer_stats *rows;      /* [n_instr] */
    uint64_t cycle;              /* current cycle (cycle mode) */
    enpu_sim_mismatch mismatch;
    bool checked;
    struct sim_obs *obs;         /* trace / VCD record (observe.h), or NULL */
    /* white-box tests: called after every executed cycle of a chain with the
     * engine's own signal struct */
    void (*cycle_hook)(void *ctx, uint64_t t, const void *signals);
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
    bool dma_weights;            /* a dma loads into weight memory (the check's
                                    shadow then copies it per chain) */
    int8_t *fbuf[4];             /* functional execution: whole feature maps */
    int64_t fbuf_n;
    bool ran;
};

/* Driver services used by the engines. */
/* Runs the host op named by the sync instruction `instr`. */
int sim_host_op(enpu_sim *sim, int instr, enpu_err *err);
/* A chain is about to execute (cycle mode): snapshot for the check. */
void sim_chain_begin(enpu_sim *sim, const sim_chain *c);
/* A chain finished: statistics of its rows, check (cycle mode), callback. */
int sim_chain_done(enpu_sim *sim, const sim_chain *c, enpu_err *err);
/* Statistics of a decoded chain's rows (MACs, ideal, closed form, names). */
void sim_rows_of_chain(enpu_sim *sim, const sim_chain *c);
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
/* Functional execution of a decoded chain on memories m (functional.c). */
int sim_func_exec_chain(const enpu_sim *sim, const sim_chain *c, sim_mem *m, enpu_err *err);
/* Moves the words of dma instruction `in` at once (easynpu/dma.c): a load
 * from DRAM into its on-chip memory, a store the other way; the written
 * words' write cycle becomes t. */
void sim_dma_copy(sim_mem *m, const enpu_instr *in, uint64_t t);
/* A dma completed (both modes): its traffic on its row (DRAM reads for a
 * load, writes for a store, and the on-chip side), then the layer callback
 * when its LAYERS record names a tensor (which then lies in DRAM). */
int sim_dma_done(enpu_sim *sim, int instr, enpu_err *err);

#endif
