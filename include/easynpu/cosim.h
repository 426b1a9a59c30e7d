/* Co-simulation of the RTL against the cycle engines (docs/rtl.md): what a
 * testbench needs to drive a hardware model with the same program and
 * compare it with the C simulator every cycle.  The C simulator stays the
 * golden model: a testbench attaches a hook that the cycle engine calls
 * after every cycle with its own state (every unit evaluated every cycle,
 * never skipped), and reads that state through the accessors below, which
 * copy it into plain structs (the engines' own structs stay private).
 *
 * Systolic engine (docs/systolic.md): after cycle t the PE registers, the
 * output MUX registers, the requantizer pipeline, the controller's issue
 * decisions and the words the re-shaping unit wrote in cycle t (the main
 * DTCM's write-cycle table says which: word w was last written in cycle
 * wc[w] - 1). */
#ifndef EASYNPU_COSIM_H
#define EASYNPU_COSIM_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/sim.h"
#include "easynpu/systolic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called after each simulated cycle t with the engine's state (engine). */
typedef void (*enpu_cosim_hook)(void *ctx, uint64_t t, const void *engine);

/* Makes sim call hook(ctx, t, engine) after every cycle of its cycle engine
 * and evaluate every unit in every cycle (no skipped or fast-forwarded
 * cycles).  hook NULL detaches. */
void enpu_cosim_attach(enpu_sim *sim, enpu_cosim_hook hook, void *ctx);

/* The machine's memories as the simulator holds them (valid while sim
 * lives; the contents change as it runs). */
typedef struct enpu_cosim_mem {
    int wb;                     /* bytes per word */
    const uint8_t *main, *wmem; /* main DTCM, weight memory */
    int64_t main_words, w_words;
    const uint64_t *main_wc;    /* per main word: cycle of its last write + 1 (cycle mode) */
} enpu_cosim_mem;
void enpu_cosim_mem_of(const enpu_sim *sim, enpu_cosim_mem *out);

/* ---- the systolic engine -------------------------------------------------- */

typedef struct enpu_cosim_sya_dims {
    int R, C;                   /* array rows, columns */
    int NR, NC, BR, BC;         /* bank rows/columns, bank grid */
    int wb, La, Lw, L, rq;      /* word bytes, read latencies, L = max, requantizer latency */
    int njobs;                  /* units in flight at most */
} enpu_cosim_sya_dims;

/* A value in the array; seq < 0 is a bubble (the other fields are then
 * stale). */
typedef struct enpu_cosim_sya_tok {
    int32_t seq, k;             /* unit and step */
    int8_t v;
    bool last;                  /* k == K - 1 */
} enpu_cosim_sya_tok;

typedef struct enpu_cosim_sya_pe {
    enpu_cosim_sya_tok a, w;    /* operand registers */
    int64_t acc;
} enpu_cosim_sya_pe;

/* A finished dot product (MUX register) or a requantized one (pipeline). */
typedef struct enpu_cosim_sya_res {
    int32_t seq, r, c;          /* unit, array row and column */
    int64_t acc;
    int8_t q;                   /* requantized (pipeline only) */
} enpu_cosim_sya_res;

/* A unit from its issue to its last write. */
typedef struct enpu_cosim_sya_job {
    int instr;
    int32_t seq;
    int64_t T, K;               /* enters the array at T (issued at T - L), K steps */
    enpu_sya_unit u;
} enpu_cosim_sya_job;

/* The controller after cycle t. */
typedef struct enpu_cosim_sya_ctl {
    int state;                  /* 0 fetch, 1 configure, 2 wait, 3 stream, 4 tail, 5 drain, 6 host, 7 done */
    int pc;
    int stall;                  /* in wait: 1 the output MUXes, 2 an input not written, 3 a hazard */
    int32_t next_seq;           /* units issued so far */
    int64_t mux_free;           /* a unit of K steps may issue at t when t + K >= mux_free */
    int64_t wait_k;             /* K of the unit pc's instruction waits to issue (state wait) */
    int64_t mux_out, ofm_words; /* results the MUXes handed on, words written, in cycle t */
} enpu_cosim_sya_ctl;

void enpu_cosim_sya_dims_of(const void *engine, enpu_cosim_sya_dims *out);
void enpu_cosim_sya_ctl_of(const void *engine, enpu_cosim_sya_ctl *out);
void enpu_cosim_sya_pe_at(const void *engine, int r, int c, enpu_cosim_sya_pe *out);
/* The array's west edge in cycle t (row i: west true) or its north edge
 * (column i): the value the global buffer's read side delivers. */
void enpu_cosim_sya_edge_at(const void *engine, uint64_t t, bool west, int i, enpu_cosim_sya_tok *out);
/* The MUX register of row r, bank column bc: false when empty. */
bool enpu_cosim_sya_mux_at(const void *engine, int r, int bc, enpu_cosim_sya_res *out);
/* After cycle t, the requantizer's stage j (1..rq): the result MUX (r, bc)
 * handed on in cycle t - j + 1; false when none. */
bool enpu_cosim_sya_rq_at(const void *engine, uint64_t t, int j, int r, int bc, enpu_cosim_sya_res *out);
/* Unit seq while it is in flight (false otherwise). */
bool enpu_cosim_sya_job_of(const void *engine, int32_t seq, enpu_cosim_sya_job *out);
/* Instruction instr's shape (NULL for one that is not systolic). */
const enpu_sya_shape *enpu_cosim_sya_shape(const void *engine, int instr);
/* The parameter registers of instruction instr, output channel ch. */
void enpu_cosim_sya_param(const void *engine, int instr, int64_t ch, int32_t *bias, uint32_t *M, int *S);

/* ---- the EasyNPU engine (docs/microarch.md §11) --------------------------- *
 * The hook gets the engine's core after every cycle of a chain.  The PE
 * controller evaluates last in a cycle and reads only its own registers, the
 * pads and the weight pad's head: what it issues in cycle t is decided by
 * the state after cycle t - 1, which enpu_cosim_enpu_next reads. */

typedef struct enpu_cosim_enpu_dims {
    int P, rows, lg_max;        /* PEs per row, PE rows, most lane groups */
    int dif, dw, depth;         /* ifmap pad, weight pad, psum file entries */
    int acc_bits, rqmode;       /* accumulator width, the arch's requantizer */
    int64_t D, Rq, Lw, Ld;      /* PE pipeline, requantizer, weight and DTCM latencies */
} enpu_cosim_enpu_dims;

/* The most virtual rows (PE rows x lane groups). */
#define ENPU_COSIM_ENPU_MAX_VROWS 64

/* One cycle's issue of the PE array as the PE controller's registers give
 * it (valid false: the chain's last unit is done).  kind: the stage's
 * sim_kind (0 conv/fc: broadcast MAC, 1 dwconv/avgpool: multicast MAC, 2 and
 * up: the other stages).  Virtual row r (< nrows) reads pad entry[r]; it is
 * PE row r / lg, lanes [(r % lg) * L, + L). */
typedef struct enpu_cosim_enpu_issue {
    bool valid;
    int kind, stage, n_st;
    bool first, final, weighted, op2;
    int64_t e, lane, wdx;
    int nrows, lg, L;
    int64_t entry[ENPU_COSIM_ENPU_MAX_VROWS];
    int nval;                   /* lanes holding a channel (a prefix) */
    bool pops_weight;           /* the weight pad's head is freed after this cycle */
} enpu_cosim_enpu_issue;

/* The loader, the weight pad and the PE array's observable state after a
 * cycle. */
typedef struct enpu_cosim_enpu_state {
    int64_t ld_unit, ld_j;      /* the loader's unit and next word (ld_done: past the last) */
    bool ld_done, ld_busy;
    int64_t bank_size;          /* pad entries per bank */
    int ld_bank;
    int w_head, w_count;        /* weight pad: head slot, slots used (or in flight) */
    bool pe_valid;              /* the PE array issued in this cycle */
    int why;                    /* the PE controller's decision (ENPU_COSIM_WHY_*) */
    bool if_valid, if_ready;    /* the loader asked for the main bus, and got it, in this cycle */
    bool of_valid;              /* the main writer wrote its queue's head in this cycle */
    int64_t ps_addr;            /* ... at this psum entry */
    bool w_rd;                  /* the weight bus read in this cycle (a parameter or weight word) */
    int64_t w_par_left;         /* the weight reader: parameter words still to read */
    bool w_done;                /* ... past the chain's last weight word */
    int64_t w_addr;             /* ... the weight memory word it pushes next */
    const void *chain;          /* the executing chain's decode (reused by the next) */
    uint64_t chain_t0;          /* the cycle the executing chain started in: identifies it */
} enpu_cosim_enpu_state;

void enpu_cosim_enpu_dims_of(const void *engine, enpu_cosim_enpu_dims *out);
void enpu_cosim_enpu_state_of(const void *engine, enpu_cosim_enpu_state *out);
/* What the PE controller issues next, if it can issue. */
void enpu_cosim_enpu_next(const void *engine, enpu_cosim_enpu_issue *out);
/* The ifmap pads' entry (P lanes) and its padding mark. */
const int8_t *enpu_cosim_enpu_pad(const void *engine, int64_t entry, bool *mark);
/* The weight pad's slot s (P lanes); *ready: the cycle it is usable from. */
const int8_t *enpu_cosim_enpu_wslot(const void *engine, int s, uint64_t *ready);
/* Psum file of PE row row, entry e (P lanes) and the requantized values
 * fed back (sval). */
const int64_t *enpu_cosim_enpu_psum(const void *engine, int row, int64_t e, const int8_t **sval);
/* The cycle from which psum entry e's requantized output is ready. */
uint64_t enpu_cosim_enpu_ready(const void *engine, int64_t e);
/* Lane i of psum word wdx of stage `stage`: its bias (stage 0's), and the
 * requantizer's multiplier, shift, zero point and clamp. */
void enpu_cosim_enpu_lane(const void *engine, int stage, int64_t wdx, int i, int32_t *bias, uint32_t *M, int *S,
                          int32_t *zp, int32_t *lo, int32_t *hi);

/* The PE controller's decision in a cycle (enpu_cosim_enpu_state.why):
 * issued, or the first stall reason in the order the controller checks
 * them (docs/microarch.md §11.8, §11.10). */
enum {
    ENPU_COSIM_WHY_ISSUE = 0,
    ENPU_COSIM_WHY_FILL,        /* before the first issue: parameters or first weight word not usable */
    ENPU_COSIM_WHY_WAIT_UNIT,   /* the pass's load unit is not valid in the ifmap pad */
    ENPU_COSIM_WHY_WAIT_OP2,    /* an op2 word is not usable */
    ENPU_COSIM_WHY_WEIGHT,      /* the weight word is not usable */
    ENPU_COSIM_WHY_OFMAP,       /* the write queue has no room for the cycle's words */
    ENPU_COSIM_WHY_PSUM,        /* a fused stage's psum entry is not ready */
    ENPU_COSIM_WHY_DONE         /* every pass has issued */
};

/* The decoded chain's fields the PE controller and the writer are
 * configured with (the top controller's registers for the whole chain).
 * covered false: the chain has what the RTL has not (fused stages, op2,
 * skip writes, a reshape at store, a head other than conv/fc/dwconv/avgpool). */
typedef struct enpu_cosim_enpu_chain {
    bool covered, bcast;
    int64_t sh, sw, dh, dw, wk;  /* strides, dilations, kernel width */
    int rows, lg, L;            /* virtual rows, lane groups, lanes per group */
    int64_t n_par;              /* parameter words (§11.3) */
    int64_t bank_size;          /* ifmap pad entries per bank */
    int64_t wo, owpp, co;       /* the output map's width, words per pixel, channels */
    bool fc;                    /* the loader: units are words of the flattened map */
    int64_t hi, wi, wpp_in;     /* the input map's height, width, words per pixel read */
    int64_t istride, iword;     /* the map's words per pixel, the first read (ifmap_wpp /
                                   ifmap_word, ISA 9; else wpp_in, 0) */
    int64_t ifmap_addr;
    int32_t pad_value;          /* a padding word's lanes (zp_in) */
    int64_t w_tap, w_ch;        /* the weight reader: words from a tap to the next, from a
                                   channel's first tap to the next channel's */
} enpu_cosim_enpu_chain;

/* A load unit as the scheduler's outer loops (unit cursor) hand it to the PE
 * controller: its tile, its passes and where its outputs go.  `cur` is the
 * cursor's own state (opaque). */
typedef struct enpu_cosim_enpu_unit {
    bool done;                  /* past the chain's last unit */
    int64_t u;                  /* unit index */
    int bank;                   /* its ifmap pad bank */
    int64_t q, npos, x, xi;     /* cycles per psum word, positions, tile width, input tile width */
    int64_t qx, qr;             /* q / x, q % x: virtual row r + 1 starts q positions after r */
    int64_t zse, nch, lane0;    /* psum words, channels of its input word (1: dwconv), first lane */
    int64_t nkh;                /* kernel rows of its band */
    bool tile_first, tile_last;
    int64_t zk;                 /* channels of its output block (dwconv: of its word) */
    int64_t c0;                 /* channel of psum word 0's lane 0 */
    int64_t wdx0;               /* parameter-register word of psum word 0 */
    int64_t obase;              /* output word address of tile position 0 (channel 0) */
    int64_t yi, iy0, ix0, kz;   /* the loader: input tile height, origin (< 0: padding), input word */
    int64_t wb0;                /* the weight reader: weight memory word of its first pass */
    uint64_t cur[32];
} enpu_cosim_enpu_unit;

/* An ifmap pad bank: the unit it holds (-1: none), every word loaded,
 * usable from valid_at, read for the last time in done_at. */
typedef struct enpu_cosim_enpu_bank {
    int64_t unit;
    bool loaded;
    uint64_t valid_at, done_at;
} enpu_cosim_enpu_bank;

/* A write-queue entry: lanes [dst, dst + len) of data go to word addr,
 * written from cycle ready on. */
typedef struct enpu_cosim_enpu_wqe {
    int64_t addr;
    uint64_t ready;
    int dst, len;
    const int8_t *data;
} enpu_cosim_enpu_wqe;

void enpu_cosim_enpu_chain_of(const void *engine, enpu_cosim_enpu_chain *out);
/* The executing chain's first unit, and the one after *io. */
void enpu_cosim_enpu_unit_first(const void *engine, enpu_cosim_enpu_unit *out);
void enpu_cosim_enpu_unit_next(const void *engine, enpu_cosim_enpu_unit *io);
void enpu_cosim_enpu_bank_of(const void *engine, int b, enpu_cosim_enpu_bank *out);
/* Write queue q (0 main, 1 skip): its word count; entry i (from the head)
 * into *out when i < count. */
int enpu_cosim_enpu_wq(const void *engine, int q, int i, enpu_cosim_enpu_wqe *out);

/* ---- the row-stationary engine (docs/rowstat.md) --------------------------- *
 * The hook gets the engine after every cycle of a pass (the cycles between
 * passes, in which the array holds still, are not stepped: a pass's first
 * hook has t0 == t).  A pass's configuration (node IDs, PE registers) is
 * loaded at its start and read from the state after any of its cycles. */

typedef struct enpu_cosim_rs_dims {
    int rows, cols;             /* PE array */
    int nv[2];                  /* values per cycle: ifmap, filter network */
    int fifo, ifmap_lb, filter_lb, psum_depth, psum_bits;
    int64_t D;                  /* rs_pe_pipeline */
} enpu_cosim_rs_dims;

/* The pass running after cycle t. */
typedef struct enpu_cosim_rs_pass {
    bool active;
    int instr;
    int64_t k, t0;              /* pass index, its first cycle */
    int64_t chain, ncol;        /* PEs down a column, columns used */
    bool go;                    /* in cycle t the pass's filters were all in */
} enpu_cosim_rs_pass;

/* A PE after cycle t: its pass registers, cursors, and its buffers (the
 * engine's own arrays, valid while the engine lives). */
typedef struct enpu_cosim_rs_pe {
    bool used;
    int64_t L, p, wo, R, U;     /* window, filters, output columns, replaced values, units */
    int64_t fh, fn;             /* input FIFO: head, count */
    int64_t lb_head, lb_n, flb_n;
    bool filled, done;
    int64_t u, k, xo, m;        /* next MAC */
    int64_t last_mac;           /* cycle of its last MAC (-1: none in this pass) */
    bool out_full;              /* the psum link to the PE below */
    int64_t out_unit, out_value, out_ready;
    const int32_t *fifo, *lb, *flb;
    const int64_t *psum;
} enpu_cosim_rs_pe;

typedef struct enpu_cosim_rs_pkt {
    int32_t value, row_tag, col_tag;
} enpu_cosim_rs_pkt;

void enpu_cosim_rs_dims_of(const void *engine, enpu_cosim_rs_dims *out);
void enpu_cosim_rs_pass_of(const void *engine, uint64_t t, enpu_cosim_rs_pass *out);
void enpu_cosim_rs_pe_at(const void *engine, int r, int c, enpu_cosim_rs_pe *out);
/* Network net (0 ifmap, 1 filter): the ID of row node r, of column node
 * (r, c) (-1: takes nothing). */
int32_t enpu_cosim_rs_row_id(const void *engine, int net, int r);
int32_t enpu_cosim_rs_col_id(const void *engine, int net, int r, int c);
/* Network net's register stage s after cycle t (0: the packets the global
 * buffer sent in cycle t; 1: those that crossed the row nodes in cycle t,
 * with pass[i * rows + r]: packet i passed row node r): up to dims.nv[net]
 * packets into out; returns their count. */
int enpu_cosim_rs_stage(const void *engine, int net, int s, enpu_cosim_rs_pkt *out, bool *pass);

#ifdef __cplusplus
}
#endif
#endif
