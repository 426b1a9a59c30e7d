/* The EasyNPU's DMA engines, dependency tokens, instruction prefetcher and
 * the race checks of docs/microarch.md §13 (dma.c).
 *
 *   engines     E in-order queues of at most dma_queue_depth commands,
 *               counted from their first decode cycle to their completion;
 *               a command starts when it is at the head of the unstarted
 *               ones, in the queue, its predecessor's bursts have all been
 *               granted and its pop tokens are there (§13.4); its rows are
 *               cut into bursts; it completes when its last burst's data is
 *               in place, and only then moves its words, pushes its tokens
 *               and frees its slot.
 *   prefetcher  for a program longer than the ITCM: requests each
 *               instruction's bursts in order into a ring of R slots
 *               (§13.5); port 0 of the DRAM channel (first at the channel).
 *   tokens      one counter per ordered pair of queues (§13.2).
 *   races       the words a starting party touches against every command in
 *               flight (and the executing chain), word by word.
 *
 * The cycle loop (cycle.c) calls these in the order of §13.6. */
#ifndef ENPU_SIM_DMA_H
#define ENPU_SIM_DMA_H

#include "sim/dram.h"
#include "sim/easynpu/chain.h"

/* ---- words a party touches (§13.4 "Races") -------------------------------- */

/* rows of len words, stride apart, from word base of memory mem. */
typedef struct sim_access {
    int mem;                     /* ENPU_MEM_MAIN / _SKIP / _WEIGHT / _DRAM */
    int64_t base, rows, len, stride;
    bool write;
} sim_access;

#define SIM_CHAIN_MAX_ACCESS (ENPU_MAX_BLOCKS * 16)

/* The accesses of a dma (on-chip side, then DRAM side). */
void sim_dma_accesses(const enpu_instr *in, sim_access out[2]);
/* The accesses of the chain of n instructions at `first` (word-exact: a
 * concat-at-store ofmap is ho*wo rows of ceil(co/P) words).  Returns the
 * count (<= SIM_CHAIN_MAX_ACCESS). */
int sim_chain_accesses(const enpu_program *p, int first, int n, sim_access *out);
/* The accesses of the host op of sync instruction `instr` (its IO tensors
 * in main, skip or DRAM).  Returns the count (<= ENPU_HOSTOP_MAX_IO). */
int sim_hostop_accesses(const enpu_program *p, int instr, sim_access *out);

/* The first words a and b both touch when one of them writes: true with the
 * overlap [*lo, *hi] (inclusive) inside one row of each. */
bool sim_access_race(const sim_access *a, const sim_access *b, int64_t *lo, int64_t *hi);

/* ---- dependency tokens (§13.2) ---------------------------------------------- */

typedef struct sim_tokens {
    int64_t n[ENPU_MAX_QUEUES][ENPU_MAX_QUEUES]; /* [from][to] */
} sim_tokens;

/* Every token of pop is available at queue q. */
static inline bool sim_tok_ready(const sim_tokens *k, int64_t pop, int q) {
    for (int s = 0; pop >> s; s++)
        if (((pop >> s) & 1) && k->n[s][q] <= 0) return false;
    return true;
}
static inline void sim_tok_take(sim_tokens *k, int64_t pop, int q) {
    for (int s = 0; pop >> s; s++)
        if ((pop >> s) & 1) k->n[s][q]--;
}
static inline void sim_tok_push(sim_tokens *k, int64_t push, int q) {
    for (int d = 0; push >> d; d++)
        if ((push >> d) & 1) k->n[q][d]++;
}

/* ---- engines, prefetcher, channel -------------------------------------------- */

#define SIM_NEVER UINT64_MAX

typedef struct dma_cmd {
    int instr;
    uint64_t t_in;               /* in its queue from (the cycle after its decode) */
    uint64_t t_start;            /* in flight from */
    int64_t row, pos, row_end;   /* next burst: row, its DRAM byte, end of that row */
    bool granted;                /* every burst granted */
    uint64_t last_grant;
    uint64_t done_at;            /* completion (SIM_NEVER until every burst is granted) */
    sim_access acc[2];           /* on-chip, DRAM */
} dma_cmd;

typedef struct dma_eng {
    dma_cmd *q;                  /* ring of dma_queue_depth */
    int head, count;             /* commands decoded, not completed */
    int started;                 /* in flight: q[head .. head + started) */
    uint64_t granted_at;         /* cycle of this engine's last grant (VCD ready) */
} dma_eng;

typedef struct sim_dma {
    enpu_sim *sim;
    const enpu_program *prog;
    int E, Bq;
    int64_t wb;
    dma_eng eng[4];
    sim_tokens tok;
    sim_dram ch;
    /* instruction prefetcher (§13.5) */
    bool pf;                     /* the program is fetched from DRAM */
    int ring;                    /* R */
    int pf_next;                 /* instruction whose bursts are requested next */
    int64_t pf_pos;              /* its next byte */
    uint64_t *itcm_ready;        /* [n_instr] in the ITCM from (SIM_NEVER: not yet) */
    uint64_t *fetch_end;         /* [n_instr] end of its fetch into the buffer (SIM_NEVER) */
    uint64_t pf_granted_at;
    /* observation */
    bool trace;
    int run_port, run_instr;     /* channel track: the current run of grants */
    uint64_t run_start, run_end;
    bool progress;               /* something happened in the last step */
} sim_dma;

int sim_dma_init(sim_dma *d, enpu_sim *sim, enpu_err *err);
void sim_dma_free(sim_dma *d);
/* Start of a run: empty queues, no tokens, channel reset. */
void sim_dma_reset(sim_dma *d);

/* Room in engine e's queue for one more command. */
static inline bool sim_dma_room(const sim_dma *d, int e) { return d->eng[e].count < d->Bq; }
/* The decoder takes dma `instr` (into engine e's queue from t_in). */
void sim_dma_enqueue(sim_dma *d, int instr, uint64_t t_in);
/* No command decoded and not completed, on any engine. */
bool sim_dma_idle(const sim_dma *d);

/* §13.6 step (1): the command completing at t (if any) moves its words,
 * pushes its tokens and frees its slot; calls the layer callback for a dma
 * that names a tensor.  Returns 0 or the callback's error. */
int sim_dma_complete(sim_dma *d, uint64_t t, enpu_err *err);
/* §13.6 step (3): engines start their next command (race-checked against
 * the commands in flight and the executing chain's accesses, n_chain of
 * them, chain_instr its head, chain_t0 its start). */
int sim_dma_start(sim_dma *d, uint64_t t, const sim_access *chain, int n_chain, int chain_instr,
                  uint64_t chain_t0, enpu_err *err);
/* §13.6 step (4): the channel grants one burst. */
void sim_dma_grant(sim_dma *d, uint64_t t);
/* The earliest cycle after t at which steps (1), (3) or (4) can change
 * anything by themselves (SIM_NEVER: only an outside event can). */
uint64_t sim_dma_wake(const sim_dma *d, uint64_t t);
/* The fetch of instruction i into the decoder's buffer ends at `end` (frees
 * its ring slot from then). */
static inline void sim_dma_fetched(sim_dma *d, int i, uint64_t end) {
    if (d->pf) d->fetch_end[i] = end;
}

/* Checks a party that starts at t (a chain, whose n accesses are acc, or a
 * host op) against every command in flight.  ENPU_E_INVALID "program race:
 * ..." naming both instructions, the memory, the words and the cycle. */
int sim_dma_race(const sim_dma *d, uint64_t t, int instr, const sim_access *acc, int n,
                 enpu_err *err);

/* Trace tracks and VCD signals of the engines (cycle.c declares them). */
#define SIM_DMA_TRK_DRAM 9
#define SIM_DMA_TRK_ENG0 10
void sim_dma_observe_start(sim_dma *d);
void sim_dma_observe_end(sim_dma *d);
/* Per engine busy (a command decoded, not completed), valid (a burst
 * requested), ready (granted in t), then the channel's busy: 3*E + 1 values. */
int sim_dma_signals(const sim_dma *d, uint64_t t, int64_t *out);

#endif
