/* Private state of the systolic engine (docs/systolic.md), one file per
 * hardware unit after the design's modules:
 *   pe.c         one processing element: multiply-accumulate, result register
 *   pe_row.c     a bank's row of PEs: activations east, the row's output MUX
 *   pe_bank.c    a bank of rows: weights south
 *   pe_array.c   the banks in their arrangement (CfgMod), the requantizer
 *   sync_shape.c the re-shaping unit: a point's channels into SRAM words
 *   glb.c        the SRAM read side: skewed activation and weight streams
 *   ccu.c        the controller: instructions, units, handshakes, hazards
 *   board.c      its hazard scoreboard
 *   cycle.c      the clock loop (the engine table's cycle engine)
 *   fastfwd.c    its fast-forward: units computed whole, quiet stretches in
 *                one go (docs/systolic.md "Fast-forward")
 *   ffcount.c    the fast-forward's counts: what the units count per cycle,
 *                in closed form per unit
 *   functional.c the functional engine (and the check's reference)
 * Timing is in cycles t; a unit enters the array at cycle T (row 0, step 0
 * at PE(0,0)) and is issued at t = T - L, when the SRAM reads for it start
 * (L = the larger of the two read latencies). */
#ifndef ENPU_SIM_SYA_H
#define ENPU_SIM_SYA_H

#include <inttypes.h>

#include "easynpu/systolic.h"
#include "sim/sim_internal.h"

/* A value travelling through the array: seq < 0 is a bubble. */
typedef struct sya_tok {
    int32_t seq;                /* the unit (job sequence number) */
    int32_t k;                  /* its step */
    int16_t span;               /* the PEs that latch it: an activation the unit's columns
                                   (0 .. span-1 of its row), a weight the unit's rows */
    int8_t v;
    uint8_t last;               /* k == K - 1 */
} sya_tok;

typedef struct sya_pe {
    sya_tok a, w;               /* operand registers */
    int64_t acc;
} sya_pe;

/* A finished dot product leaving a PE (the MUX takes it the next cycle). */
typedef struct sya_res {
    int32_t seq;
    int32_t r, c;               /* array row and column */
    int64_t acc;
    int8_t q;                   /* requantized */
} sya_res;

/* What the PEs count in one cycle for one unit (pe_row.c): added to its
 * instruction's row when another unit's value comes and when the array's
 * step ends (sya_tally_flush), in the cycle the events happen.  (A unit's
 * job stays until its last write, after its last value is used.) */
typedef struct sya_tally {
    int32_t seq;                /* the unit, -1: none */
    uint64_t reg_w;             /* operand values latched */
    uint64_t macs, firsts, results; /* MACs, those that began a dot product, those that ended one */
} sya_tally;

/* A decoded instruction: the CCU's configuration registers. */
typedef struct sya_layer {
    enpu_sya_shape s;
    int32_t *bias;              /* [co] */
    uint32_t *M;
    int8_t *S;
    int64_t sched_last;         /* last scheduled write of the units issued so far */
    int64_t units_issued;
    uint64_t first_issue;
    bool started, complete;
} sya_layer;

/* A unit in flight, from issue to its last write. */
typedef struct sya_job {
    int instr;
    int32_t seq;
    enpu_sya_unit u;
    int64_t T, K;
    int64_t writes_left;
    uint8_t *buf;               /* sync_shape: [rows][wb] word being assembled */
} sya_job;

/* The controller's hazard scoreboard (board.c; docs/systolic.md "Timing",
 * step 4): per main-DTCM word the last cycle a started unit reads it and the
 * last cycle one writes it, with the instruction. */
typedef struct sya_board {
    int64_t words;
    int64_t *rd, *wr;           /* last read / write cycle, -1: none */
    int32_t *rd_by, *wr_by;     /* the instruction of that read / write */
} sya_board;

/* Controller states (ccu.c). */
enum { SYA_S_FETCH, SYA_S_CFG, SYA_S_WAIT, SYA_S_STREAM, SYA_S_TAIL, SYA_S_DRAIN, SYA_S_HOST, SYA_S_DONE };

enum { SYA_TRK_CCU = 1, SYA_TRK_LAYERS, SYA_TRK_STALL, SYA_TRK_COUNT };

/* Signals sampled for the VCD, in this order. */
enum { SIG_STATE, SIG_PC, SIG_UNIT, SIG_CFG_VLD, SIG_ACT_VLD, SIG_WGT_VLD, SIG_MUX_OUT,
       SIG_OFM_WORDS, SIG_JOBS, SIG_STALL, SIG_COUNT };

typedef struct sya_engine {
    enpu_sim *sim;
    const enpu_arch *a;
    int R, C, NR, NC, BR, BC;   /* array rows/columns, bank rows/cols, bank grid */
    int wb, L, La, Lw, rq;      /* word bytes, read latencies, requantizer latency */
    int64_t acc_lo, acc_hi;     /* PE accumulator range */
    sya_layer *lay;             /* per instruction (SYA ones decoded) */
    sya_board board;
    /* the array */
    sya_pe *pe;                 /* [R][C] */
    sya_tok *edge_a, *edge_w;   /* [(La+1)][R], [(Lw+1)][C]: SRAM read pipelines */
    sya_res *mux_pend;          /* [R][BC]: a result waiting for its row's MUX */
    bool *mux_has;
    sya_res *pipe;              /* requantizer pipeline: [(rq+1)][R*BC] */
    int *pipe_n;
    int64_t last_inject;        /* last cycle a token entered the array */
    sya_tally tally;
    /* units in flight */
    sya_job *jobs;
    int njobs_cap, jobs_head, jobs_n;
    int32_t next_seq;
    int64_t t;
    int64_t stall_sig;
    int64_t sig[SIG_COUNT];
    int64_t mux_out, ofm_words;
    /* controller */
    int state, pc;
    int64_t unit, cnt;
    int64_t host_cnt;           /* S_HOST: the host CPU's cycles, the last of cnt */
    int64_t mux_free;           /* a unit issued at t with K steps may start when t + K >= mux_free
                                   (the output MUXes are through with the last one) */
    int last_instr;             /* instruction of the last unit issued, -1 */
    enpu_sya_unit last_u;
    int64_t last_tau;
    bool merge_a, merge_w;      /* the next unit continues the current streams */
    int64_t tail_until;         /* scheme 0: issue cycle the wait for the empty array ends */
    int64_t state_start;
    struct sya_ff *ff;          /* fastfwd.c's state; NULL until first used */
    enpu_err *err;
    int rc;
    /* the watchdog (sim_internal.h); progress: a controller state change (a
     * handshake), a stream cycle (the array's MACs), a word written */
    sim_wd wd;
    /* white-box tests only (test_watchdog.c): the fast-forward's next
     * stretch that can runs one cycle past a word write, which is lost -- a
     * planted bug the watchdog must catch; nothing else sets it */
    bool fault_long;
} sya_engine;

/* pe.c: one cycle of PE p with its new operand registers: SYA_PE_MAC when
 * it multiplied them into its accumulator, with SYA_PE_FIRST when that began
 * its dot product and SYA_PE_RESULT when it finished it (into *out); 0 for
 * an idle PE; a negative status when the operands disagree or the
 * accumulator leaves its range. */
enum { SYA_PE_MAC = 1, SYA_PE_FIRST = 2, SYA_PE_RESULT = 4 };
int sya_pe_step(sya_engine *e, sya_pe *p, int r, int c, sya_res *out);
/* pe_row.c: row r of bank column bc: operands move one PE east (act) and
 * south (wgt, from row r-1's old registers) and every PE steps; the row's
 * MUX first hands on the result the row produced last cycle. */
int sya_row_step(sya_engine *e, int r, int bc, const sya_tok *west);
/* pe_row.c: the tally's counts into its unit's instruction row. */
void sya_tally_flush(sya_engine *e, sya_tally *t);
/* pe_bank.c: bank (br, bc), its rows from south to north. */
int sya_bank_step(sya_engine *e, int br, int bc);
/* pe_array.c: the array for cycle t: the banks from south-east to
 * north-west with the edge streams of cycle t, the MUX outputs through the
 * requantizer. */
int sya_array_step(sya_engine *e, int64_t t);
void sya_mux_emit(sya_engine *e, const sya_res *r, int64_t t);
/* sync_shape.c: the requantized results arriving in cycle t, gathered into
 * words and written. */
int sya_shape_step(sya_engine *e, int64_t t);
/* glb.c: the SRAM reads of cycle t: activation and weight elements for the
 * units entering at t + La and t + Lw, into the read pipelines. */
void sya_glb_step(sya_engine *e, int64_t t);
/* board.c.  sya_board_ready: the earliest cycle unit u of instruction
 * instr may enter the array, *raw from the words it reads (their last write
 * by another instruction + dtcm_read_latency + 1), *war from the words it
 * writes (their last read or write by another instruction, less its first
 * write offset K + requant_latency, + 1), -1 when nothing constrains it.
 * sya_board_commit records u entering at cycle T: its reads (the last at
 * T + rows + K - 2 - dtcm_read_latency, for all its words) and its writes
 * (row r's word completed by column c at T + K + r + c + requant_latency);
 * returns the cycle of its last write. */
int sya_board_init(sya_board *b, int64_t words, enpu_err *err);
void sya_board_reset(sya_board *b);
void sya_board_free(sya_board *b);
void sya_board_ready(const sya_engine *e, int instr, const enpu_sya_unit *u, int64_t *raw, int64_t *war);
int64_t sya_board_commit(sya_engine *e, int instr, const enpu_sya_unit *u, int64_t T);
/* The main-DTCM words each row of unit u writes: those its output channels
 * touch (the re-shaping unit writes each once, its lanes of it). */
int64_t sya_out_words(const sya_engine *e, int instr, const enpu_sya_unit *u);
/* ccu.c */
int sya_ccu_step(sya_engine *e, int64_t t);
bool sya_ccu_done(const sya_engine *e);
/* What sya_ccu_step does from cycle t on while nothing but time changes (no
 * unit retires): until cycle `end` (> t; INT64_MAX: until a unit retires)
 * it only attributes one cycle to `row` as `act` per call; end == t when it
 * acts in cycle t (a state change, an issue).  The fast-forward's view of
 * the controller: sya_ccu_idle then advances it over such cycles. */
typedef struct sya_quiet {
    int64_t end;
    int row;
    enpu_activity act;
    int stall;                  /* SIG_STALL in those cycles */
} sya_quiet;
void sya_ccu_quiet(sya_engine *e, int64_t t, sya_quiet *q);
/* Cycles [t, t + n) of a quiet stretch q (t + n <= q->end): exactly what n
 * calls of sya_ccu_step would do (the row's cycles, activity and start, the
 * countdown, the sticky signals). */
void sya_ccu_idle(sya_engine *e, const sya_quiet *q, int64_t t, int64_t n);
/* Decodes every systolic instruction (bias, M, S from the weight memory). */
int sya_decode_all(sya_engine *e, enpu_err *err);
/* The job of sequence number seq. */
sya_job *sya_job_of(sya_engine *e, int32_t seq);
/* A job's last write happened: frees it; when it completes its instruction,
 * the check and the layer callback. */
int sya_job_retire(sya_engine *e, sya_job *j, int64_t t);

/* fastfwd.c (docs/systolic.md "Fast-forward").  sya_ff_begin decides, at
 * the start of a run, whether this run may take the fast path (not with
 * opts.per_cycle, a cycle hook or step_every_cycle, and only when no partial
 * sum of any instruction can leave the accumulator); a negative status when
 * out of memory.  On the fast path cycle.c calls sya_ff_stretch at the start
 * of each cycle t (it advances *n >= 0 cycles in one go, 0 when cycle t must
 * be stepped) and, in a stepped cycle, sya_ff_cycle in place of the SRAM
 * reads, the array and the re-shaping unit. */
int sya_ff_begin(sya_engine *e, bool *on);
int sya_ff_stretch(sya_engine *e, int64_t t, int64_t max, int64_t *n);
int sya_ff_cycle(sya_engine *e, int64_t t);
/* ENPU_E_INTERNAL: no progress up to cycle t (cycle.c; sim_wd_fail). */
int sya_wd_fail(const sya_engine *e, int64_t t, enpu_err *err);
void sya_ff_free(sya_engine *e);
/* A run on the fast path stopped (the cycle limit, an error) in cycle x:
 * the counts of the units still in flight that the per-cycle path has
 * made by then -- every event before cycle x, and when `part` those of
 * cycle x up to the re-shaping unit's result of pipeline key kstop
 * (exclusive: sya_ff_count). */
void sya_ff_settle(sya_engine *e, int64_t x, bool part, int64_t kstop);
/* ffcount.c: adds to job j's instruction row what its unit counts
 * (docs/systolic.md "Statistics") in the cycles before x (INT64_MAX: all of
 * it); when `part`, also its SRAM reads and array events of cycle x and
 * the re-shaping unit's events of cycle x whose pipeline key (sya_pipe_key)
 * is above kstop.  rd_words: the main-DTCM words its rows read in all (-1:
 * count them). */
void sya_ff_count(sya_engine *e, const sya_job *j, int64_t x, bool part, int64_t kstop, int64_t rd_words);
/* The position of row r's result of column c in the requantizer's pipeline
 * within a cycle: the MUXes emit in decreasing key order (banks from the
 * south-east, rows from the south), the re-shaping unit takes them so. */
static inline int64_t sya_pipe_key(const sya_engine *e, int64_t r, int64_t c) {
    return ((r / e->NR) * e->BC + c / e->NC) * e->NR + r % e->NR;
}

/* functional.c: executes systolic instruction i on memories m (reading its
 * parameters from e's decoded layers, or from m when lay is NULL). */
int sya_func_exec(const enpu_sim *sim, int i, const sya_layer *lay, sim_mem *m, enpu_err *err);
/* Decodes instruction i's parameter blocks from memory m into lay (arrays
 * malloc'd). */
int sya_decode_layer(const enpu_sim *sim, const sim_mem *m, int i, sya_layer *lay, enpu_err *err);
void sya_layer_free(sya_layer *lay);
/* The accumulator range error, shared by both modes. */
int sya_acc_error(const enpu_sim *sim, int i, int64_t point, int64_t ch, int64_t acc, enpu_err *err);


#endif
