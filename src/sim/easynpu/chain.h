/* What both EasyNPU engines (the cycle engine, core.h and its unit files;
 * the functional one, functional.c) share: the decoded chain and the
 * services around it.
 *
 * The top controller's decode (top_ctrl.c) turns a chain of fused
 * instructions into a `sim_chain`: the registers of the scheduler and PE
 * controller plus the parameter registers, the same in both modes.  chain.c
 * holds the engine state both modes keep (`sim_enpu`: the decoder, the
 * functional datapath's buffers) and what happens around a chain (its rows'
 * statistics, the check's replay, the layer callback) and a dma. */
#ifndef ENPU_SIM_EASYNPU_CHAIN_H
#define ENPU_SIM_EASYNPU_CHAIN_H

#include "sim/sim_internal.h"

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
    bool ps_cont, ps_hold;       /* input-channel blocks (ISA 8): the first pass continues
                                    the held sums; the sums stay held, unrequantized */
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
    int64_t wpp_in;              /* ifmap words per pixel the chain reads (ceil(ci/P)) */
    int64_t istride, iword;      /* the ifmap's words per pixel and the first one read (ISA 9
                                  * ifmap_wpp / ifmap_word; else wpp_in, 0) */
    int64_t ifmap_span;          /* words from ifmap_addr to the last one read */
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

/* ---- the engines' shared state and services (chain.c) --------------------- */

typedef struct sim_enpu {
    sim_decoder dec;
    int8_t *fbuf[4];             /* functional execution: whole feature maps */
    int64_t fbuf_n;
    bool dma_weights;            /* a dma loads into weight memory (the check's
                                    shadow then copies it per chain) */
    int64_t *held;               /* functional execution: the sums a ps_hold chain
                                    left for the next (ps_cont) one, [ho][wo][co] */
    int64_t held_n;              /* capacity of held */
    int64_t *held_len;           /* (one element) sums held now; -1: none */
} sim_enpu;

/* Sets up x for sim's program and decodes every chain once, so that a
 * program the engines cannot run is refused before it runs (a dma moves its
 * words in program order first: a chain may take its parameters from a
 * load).  Leaves sim->mem as loaded; the run resets it. */
int sim_enpu_init(sim_enpu *x, enpu_sim *sim, enpu_err *err);
void sim_enpu_free(sim_enpu *x);
/* Statistics of a decoded chain's rows (MACs, ideal, closed form, names). */
void sim_rows_of_chain(enpu_sim *sim, const sim_chain *c);
/* A chain is about to execute (cycle mode): snapshot for the check. */
void sim_chain_begin(enpu_sim *sim, const sim_enpu *x, const sim_chain *c);
/* A chain finished: the check (cycle mode: the chain replayed functionally
 * on the shadow memories and compared), then the layer callback. */
int sim_chain_done(enpu_sim *sim, const sim_enpu *x, const sim_chain *c, enpu_err *err);
/* Functional execution of a decoded chain on memories m (functional.c). */
int sim_func_exec_chain(const enpu_sim *sim, const sim_enpu *x, const sim_chain *c, sim_mem *m,
                        enpu_err *err);
/* Moves the words of dma instruction `in` at once (dma.c): a load from DRAM
 * into its on-chip memory, a store the other way; the written words' write
 * cycle becomes t. */
void sim_dma_copy(sim_mem *m, const enpu_instr *in, uint64_t t);
/* A dma completed (both modes): its traffic on its row (DRAM reads for a
 * load, writes for a store, and the on-chip side), then the layer callback
 * when its LAYERS record names a tensor (which then lies in DRAM). */
int sim_dma_done(enpu_sim *sim, int instr, enpu_err *err);

#endif
