/* The systolic engine's fast-forward (docs/systolic.md "Fast-forward"): the
 * same run as the per-cycle path of cycle.c, every counter and record equal,
 * without stepping the PEs.  Two things replace the per-cycle work:
 *
 *  - the datapath: a unit's dot products are computed whole, as int8 dot
 *    products over contiguous arrays, in the cycle its SRAM reads start, and
 *    its words are written in the cycles the re-shaping unit writes them;
 *  - the controller's quiet stretches (a countdown, a tail, a wait whose end
 *    is known) are attributed in one go, the datapath's events inside them
 *    (a unit's reads starting, a word completing) processed at their cycle.
 *
 * Why this is the per-cycle run (the proof; sya.h has the timing names):
 *
 * 1. Nothing in the datapath can stall, so its timing is fixed at issue.  A
 *    unit issued in cycle t enters at T = t + L.  glb.c reads row r's
 *    activation of step k in cycle T + r + k - La and column c's weight in
 *    T + c + k - Lw; both move one PE per cycle, so PE (r, c) multiplies step
 *    k in T + r + c + k, completes in T + r + c + K - 1, its row's MUX hands
 *    the result on in T + K + r + c and the re-shaping unit gets it rq cycles
 *    later: the word of row r completed by column c_last is written in cycle
 *    T + K + r + c_last + rq (sync_shape.c asserts it).  No MUX ever holds
 *    two results: a unit v issued after u has t_v + K_v >= t_u + K_u +
 *    min(cols_u, NUM_COL) (the controller's WAIT rule), so v's first result
 *    in a MUX comes after u's last; the requantizer and the re-shaping unit
 *    take every result in the cycle it arrives.
 * 2. The values are the PEs'.  sya_ff_begin admits a run only when, for every
 *    output channel of every instruction, enpu_acc_range puts every partial
 *    sum of sum_k x_k w_k over int8 x (stored activations, and the padding
 *    value (int8_t)zp_in) inside the accumulator: the per-cycle path's range
 *    check cannot fail, and int32 sums taken in any order (the blocks of
 *    dot8) equal the PE's accumulator.  The words a unit reads hold the same
 *    values throughout its reads, cycles [T - La, T + rows + K - 2 - La]:
 *    every write committed before its issue lands by T - La - 1 (RAW: T >=
 *    w + La + 1); its own instruction writes none of them (ifmap and ofmap
 *    are disjoint, the validator); a later instruction's unit writes them
 *    only after the unit's last read (WAR, from the read cycle the board
 *    records); host ops run with nothing in flight; the weight memory is not
 *    written during a run.  So reading them all in cycle T - La, before that
 *    cycle's writes (reads precede writes in a cycle), reads what each PE
 *    would.  The requantizer is pe_array.c's call.
 * 3. The writes are the re-shaping unit's: the same words, lanes, cycle,
 *    write cycle (t + 1) and counts, and within a cycle the same order, the
 *    order in which the MUXes fill the requantizer's pipeline (banks from the
 *    south-east, rows from the south): units retire, and layers complete
 *    (check, callback, trace span), in the same cycle and order.
 * 4. The counters.  Activities are the controller's, and so are the
 *    configuration's and the ITCM's reads: code both paths share; in a
 *    stretch the controller is in a branch of sya_ccu_step that only
 *    attributes (sya_ccu_quiet says which and until when), and its inputs
 *    change only when a unit issues (an acting cycle, never inside a
 *    stretch) or retires (a stretch ends with the cycle of a retirement), so
 *    n cycles of it are sya_ccu_idle(n).  An event inside a stretch is
 *    processed after its cycle's attribution, as in the per-cycle loop, so a
 *    layer callback sees the same statistics.  What the datapath counts
 *    (SRAM reads as the rows and columns stream, operand registers, MACs,
 *    accumulators, MUXes, the requantizer, the re-shaping unit and its SRAM
 *    writes) happens, on the per-cycle path, in the cycles [T - L, the
 *    unit's last write]: every operand of the unit is latched and used by
 *    then (the PEs outside its rows and columns latch nothing, pe_row.c).
 *    So its instruction's counts are complete when its last unit retires,
 *    the only moment a layer callback looks at them, and the fast path adds
 *    each unit's counts whole, in closed form (ffcount.c), just before it
 *    retires.  A run that stops with units in flight (the cycle limit, an
 *    error) gets exactly the events the per-cycle path made by then
 *    (sya_ff_settle: ffcount.c's counts up to that cycle and pipeline key).
 * 5. Observers and limits.  The trace records at state changes and host ops
 *    (acting cycles, stepped) and at retirements (above); the VCD window is
 *    stepped cycle by cycle, its signals computed from the units' geometry,
 *    cfg_vld (the one signal that holds its value) set as the skipped CFG
 *    cycles would.  A stretch stops at max_cycles; it never starts where
 *    cycle.c's idle skip could apply (nothing in flight, FETCH/CFG/HOST, no
 *    observer) and the idle skip is tried after each stretch as after each
 *    cycle: both paths skip alike and stop at the limit alike.
 *
 * Left to the per-cycle steps (cycle.c): the cycles in which the controller
 * acts, the VCD window, and whole runs with opts.per_cycle, a cycle hook,
 * step_every_cycle, or an accumulator the weights could overflow. */
#include <stdlib.h>
#include <string.h>

#include "sim/observe.h"
#include "sim/systolic/sya.h"

/* A job slot's computed unit (slots as the controller's ring). */
typedef struct ff_unit {
    int32_t seq;                /* the job computed here, -1: none */
    int64_t B;                  /* T + K + rq: row r's word with last column c is written at B + r + c */
    int64_t rd_words;           /* the main-DTCM words its rows read (counted at its retirement) */
    int64_t og0, wbase;         /* first output channel, first channel of its word */
    int64_t qs;                 /* q's row stride */
    int8_t *q;                  /* [rows][qs]: requantized results, channel og at og - wbase */
    size_t qcap;
} ff_unit;

/* A word written in a cycle, with its place in the per-cycle path's order. */
typedef struct ff_write {
    int64_t key;
    sya_job *j;
    int64_t r, w;
} ff_write;

typedef struct sya_ff {
    ff_unit *unit;              /* [njobs_cap] */
    ff_write *wr;               /* [R * BC]: at most one result per MUX and cycle */
    int16_t *x, *wt;            /* a unit's activations [rows][Kp], weights [cols][Kp] (K
                                   padded with zeros to Kp, a multiple of 16) */
    size_t xcap, wtcap;         /* elements */
    int wt_instr;               /* whose weights wt holds (units of a filter tile share them), -1 */
    int64_t wt_gi, wt_o0, wt_cols;
    int proven;                 /* -1 unknown, else whether acc_proven holds for every instruction */
} sya_ff;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void sya_ff_free(sya_engine *e) {
    sya_ff *f = e->ff;
    if (!f) return;
    if (f->unit)
        for (int i = 0; i < e->njobs_cap; i++) free(f->unit[i].q);
    free(f->unit), free(f->wr), free(f->x), free(f->wt);
    free(f);
    e->ff = NULL;
}

/* p grown to n elements of `size` bytes (*cap: its elements); NULL, p
 * unchanged, when out of memory. */
static void *grow(void *p, size_t *cap, size_t n, size_t size) {
    if (n <= *cap) return p;
    void *q = realloc(p, n * size);
    if (q) *cap = n;
    return q;
}

/* Base address and stride of output channel o's K weights of product gi in
 * the weight memory (enpu_sya_wgt_at's layout). */
static const int8_t *wgt_col(const sya_engine *e, const enpu_instr *in, const enpu_sya_shape *s, int64_t gi,
                             int64_t o, int64_t *stride) {
    const int64_t wb = e->wb;
    const int8_t *base = (const int8_t *)e->sim->mem.wmem + in->weight_addr * wb;
    if (s->dw) {
        *stride = 1;
        return base + gi * cdiv(s->K, wb) * wb;
    }
    *stride = cdiv(s->F, wb) * wb;
    return base + gi * s->K * *stride + o;
}

/* Every partial sum of every output channel of instruction i, over any int8
 * activations and in any order, within the accumulator (proof, 2.). */
static bool acc_proven(const sya_engine *e, int i) {
    const enpu_instr *in = &e->sim->prog->instr[i];
    const enpu_sya_shape *s = &e->lay[i].s;
    for (int64_t gi = 0; gi < s->G; gi++)
        for (int64_t o = 0; o < s->F; o++) {
            int64_t stride, lo, hi;
            const int8_t *w = wgt_col(e, in, s, gi, o, &stride);
            enpu_acc_range(w, s->K, stride, -128, 127, 0, &lo, &hi);
            if (lo < e->acc_lo || hi > e->acc_hi) return false;
        }
    return true;
}

int sya_ff_begin(sya_engine *e, bool *on) {
    enpu_sim *sim = e->sim;
    const enpu_program *p = sim->prog;
    *on = false;
    if (sim->opts.per_cycle || sim->step_every_cycle || sim->cycle_hook) return 0;
    if (!e->ff) {
        sya_ff *f = calloc(1, sizeof *f);
        if (f) {
            e->ff = f;
            f->proven = -1;
            f->unit = calloc((size_t)e->njobs_cap, sizeof *f->unit);
            f->wr = malloc((size_t)e->R * (size_t)e->BC * sizeof *f->wr);
        }
        if (!f || !f->unit || !f->wr)
            return enpu_fail(e->err, ENPU_E_NOMEM, "simulator: out of memory for the systolic fast-forward");
    }
    sya_ff *f = e->ff;
    /* the weight memory is the program's image in every run */
    if (f->proven < 0) {
        f->proven = 1;
        for (int i = 0; i < p->n_instr && f->proven; i++)
            if (enpu_opcode_class(p->instr[i].opcode) == ENPU_CLASS_SYA && !acc_proven(e, i)) f->proven = 0;
    }
    if (!f->proven) return 0;
    for (int i = 0; i < e->njobs_cap; i++) f->unit[i].seq = -1;
    f->wt_instr = -1;
    *on = true;
    return 0;
}

/* sum_k x[k] w[k], n a multiple of 16, over int8 values widened to int16
 * (so that products pair up as in pmaddwd): blocks of 64, then of 16 (fixed
 * trip counts, which gcc vectorises at -O2 as well as -O3).  int32 is
 * exact: every partial sum, in any order, lies in the proven range. */
static int32_t dot16(const int16_t *restrict x, const int16_t *restrict w, int64_t n) {
    int32_t s = 0;
    int64_t k = 0;
    for (; k + 64 <= n; k += 64) {
        int32_t b = 0;
        for (int i = 0; i < 64; i++) b += x[k + i] * w[k + i];
        s += b;
    }
    for (; k < n; k += 16) {
        int32_t b = 0;
        for (int i = 0; i < 16; i++) b += x[k + i] * w[k + i];
        s += b;
    }
    return s;
}

/* Job j's unit whole, from the memories as they are in the cycle its reads
 * start (proof, 2.): the activations row by row and the weights column by
 * column into contiguous arrays, the dot products, the requantizer. */
static int unit_compute(sya_engine *e, sya_job *j) {
    sya_ff *f = e->ff;
    const enpu_instr *in = &e->sim->prog->instr[j->instr];
    const sya_layer *L = &e->lay[j->instr];
    const enpu_sya_shape *s = &L->s;
    const enpu_sya_unit *u = &j->u;
    const int64_t K = s->K, rows = u->rows, cols = u->cols, wb = e->wb;
    ff_unit *fu = &f->unit[j->seq % e->njobs_cap];
    fu->seq = j->seq;
    fu->B = j->T + K + e->rq;
    fu->og0 = enpu_sya_out_channel(s, u, 0);
    fu->wbase = fu->og0 / wb * wb;
    fu->qs = fu->og0 - fu->wbase + cols;
    const int64_t Kp = (K + 15) / 16 * 16;
    int8_t *q = grow(fu->q, &fu->qcap, (size_t)(rows * fu->qs), 1);
    if (q) fu->q = q;
    int16_t *x = q ? grow(f->x, &f->xcap, (size_t)(rows * Kp), sizeof *f->x) : NULL;
    if (x) f->x = x;
    int16_t *wt = x ? grow(f->wt, &f->wtcap, (size_t)(cols * Kp), sizeof *f->wt) : NULL;
    if (!wt) return enpu_fail(e->err, ENPU_E_NOMEM, "simulator: out of memory for the systolic fast-forward");
    f->wt = wt;
    /* the last cycle the SRAMs feed it, for cycle.c's idle skip (the per-cycle
     * path's last_inject once the unit is through) */
    int64_t inj = j->T + rows + K - 2 - e->La;
    if (j->T + cols + K - 2 - e->Lw > inj) inj = j->T + cols + K - 2 - e->Lw;
    if (inj + e->L > e->last_inject) e->last_inject = inj + e->L;
    /* weights [cols][Kp], unless the last unit's are these */
    if (f->wt_instr != j->instr || f->wt_gi != u->gi || f->wt_o0 != u->o0 || f->wt_cols != cols) {
        int64_t stride;
        const int8_t *wcol = wgt_col(e, in, s, u->gi, u->o0, &stride);
        for (int64_t c = 0; c < cols; c++) {
            int16_t *wc = f->wt + c * Kp;
            for (int64_t k = 0; k < K; k++) wc[k] = wcol[k * stride + c];
            for (int64_t k = K; k < Kp; k++) wc[k] = 0;
        }
        f->wt_instr = j->instr, f->wt_gi = u->gi, f->wt_o0 = u->o0, f->wt_cols = cols;
    }
    /* activations [rows][Kp]: a window position's cpg channels are
     * contiguous bytes of its pixel's words (and the words glb.c's streams
     * read, for the counts) */
    const int8_t *mem = (const int8_t *)e->sim->mem.main;
    fu->rd_words = 0;
    for (int64_t r = 0; r < rows; r++) {
        int16_t *xr = f->x + r * Kp;
        for (int64_t tap = 0; tap < s->taps; tap++) {
            int64_t word;
            int lane;
            enpu_sya_act_at(e->a, in, s, u, r, tap * s->cpg, &word, &lane);
            int16_t *xt = xr + tap * s->cpg;
            if (word < 0) {
                for (int64_t i = 0; i < s->cpg; i++) xt[i] = (int8_t)in->zp_in;
            } else {
                const int8_t *src = mem + word * wb + lane;
                for (int64_t i = 0; i < s->cpg; i++) xt[i] = src[i];
                fu->rd_words += (lane + s->cpg - 1) / wb + 1;
            }
        }
        for (int64_t k = K; k < Kp; k++) xr[k] = 0;
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t o = fu->og0 + c;
            int32_t acc = dot16(f->x + r * Kp, f->wt + c * Kp, Kp);
            fu->q[r * fu->qs + (o - fu->wbase)] =
                (int8_t)enpu_requant((int64_t)acc + L->bias[o], L->M[o], L->S[o], (int32_t)in->zp_out,
                                     (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
        }
    return 0;
}

/* The last column of job j's word index wi in a row (the one whose result
 * completes it): the unit's channels [og0, og0 + cols) cut at word borders. */
static int64_t word_last_col(const ff_unit *fu, const sya_job *j, int64_t wi, int64_t wb) {
    int64_t hi = fu->wbase + (wi + 1) * wb, og1 = fu->og0 + j->u.cols;
    return (hi < og1 ? hi : og1) - 1 - fu->og0;
}

static int64_t words_per_row(const ff_unit *fu, const sya_job *j, int64_t wb) {
    return (fu->og0 + j->u.cols - 1) / wb - fu->og0 / wb + 1;
}

static sya_job *ring(sya_engine *e, int n) { return &e->jobs[(e->jobs_head + n) % e->njobs_cap]; }

/* The first cycle >= c in which the datapath does anything the per-cycle
 * path would: a unit's reads start, or one of its words is written. */
static int64_t next_event(sya_engine *e, int64_t c) {
    int64_t best = INT64_MAX;
    for (int n = 0; n < e->jobs_n; n++) {
        sya_job *j = ring(e, n);
        if (j->writes_left < 0) continue;
        const ff_unit *fu = &e->ff->unit[j->seq % e->njobs_cap];
        if (fu->seq != j->seq) {
            ENPU_ASSERT(j->T - e->La >= c);
            if (j->T - e->La < best) best = j->T - e->La;
            continue;
        }
        /* row r's word wi is written at B + r + its last column */
        for (int64_t wi = 0, nw = words_per_row(fu, j, e->wb); wi < nw; wi++) {
            int64_t a = fu->B + word_last_col(fu, j, wi, e->wb), b = a + j->u.rows - 1;
            int64_t x = c <= a ? a : c <= b ? c : INT64_MAX;
            if (x < best) best = x;
        }
    }
    return best;
}

/* The planted bug's cycle (sya.h fault_long): one in which a word is
 * written and no unit's reads start, so that skipping it loses the write
 * (the unit never retires) rather than a unit's data. */
static bool lost_write(sya_engine *e, int64_t c) {
    for (int n = 0; n < e->jobs_n; n++) {
        const sya_job *j = ring(e, n);
        if (j->writes_left >= 0 && e->ff->unit[j->seq % e->njobs_cap].seq != j->seq && j->T - e->La == c) return false;
    }
    return next_event(e, c) == c;
}

/* The VCD's datapath signals of cycle c (glb.c's act_vld and wgt_vld, the
 * MUXes' count), from each unit's geometry. */
static void signals(sya_engine *e, int64_t c) {
    bool act = false, wgt = false;
    int64_t mux = 0;
    for (int n = 0; n < e->jobs_n; n++) {
        const sya_job *j = ring(e, n);
        int64_t da = c + e->La - j->T, dw = c + e->Lw - j->T, dm = c - j->T - j->K;
        act |= da >= 0 && da - (j->u.rows - 1) <= j->K - 1;
        wgt |= dw >= 0 && dw - (j->u.cols - 1) <= j->K - 1;
        /* results (r, col) with r + col = dm leave their MUXes now */
        int64_t lo = dm - (j->u.cols - 1) > 0 ? dm - (j->u.cols - 1) : 0, hi = dm < j->u.rows - 1 ? dm : j->u.rows - 1;
        if (dm >= 0 && hi >= lo) mux += hi - lo + 1;
    }
    e->sig[SIG_ACT_VLD] = act;
    e->sig[SIG_WGT_VLD] = wgt;
    e->mux_out = mux;
}

/* The datapath's part of cycle c: the units whose reads start, then (when
 * `sig`) the VCD's signals, then the words written, in the per-cycle path's
 * order; *retired when a unit retired. */
static int datapath(sya_engine *e, int64_t c, bool sig, bool *retired) {
    sya_ff *f = e->ff;
    const int64_t wb = e->wb;
    int rc;
    for (int n = 0; n < e->jobs_n; n++) {
        sya_job *j = ring(e, n);
        if (j->writes_left >= 0 && f->unit[j->seq % e->njobs_cap].seq != j->seq && j->T - e->La == c &&
            (rc = unit_compute(e, j)))
            return rc;
    }
    if (sig) signals(e, c);
    /* the words completed in c; the per-cycle path writes them in the order
     * its MUXes emitted their last results: bank rows, then bank columns,
     * then rows, each from the south-east */
    int nwr = 0;
    for (int n = 0; n < e->jobs_n; n++) {
        sya_job *j = ring(e, n);
        if (j->writes_left < 0) continue;
        const ff_unit *fu = &f->unit[j->seq % e->njobs_cap];
        if (fu->seq != j->seq) continue;
        for (int64_t wi = 0, nw = words_per_row(fu, j, wb); wi < nw; wi++) {
            int64_t cl = word_last_col(fu, j, wi, wb), r = c - fu->B - cl;
            if (r < 0 || r >= j->u.rows) continue;
            ff_write x = {sya_pipe_key(e, r, cl), j, r, fu->wbase / wb + wi};
            int i = nwr++;
            ENPU_ASSERT(nwr <= e->R * e->BC);
            for (; i > 0 && f->wr[i - 1].key < x.key; i--) f->wr[i] = f->wr[i - 1];
            f->wr[i] = x;
        }
    }
    for (int i = 0; i < nwr; i++) {
        sya_job *j = f->wr[i].j;
        const ff_unit *fu = &f->unit[j->seq % e->njobs_cap];
        const enpu_instr *in = &e->sim->prog->instr[j->instr];
        const int64_t r = f->wr[i].r, w = f->wr[i].w, og1 = fu->og0 + j->u.cols;
        const int64_t lo = fu->og0 > w * wb ? fu->og0 : w * wb, hi = og1 < (w + 1) * wb ? og1 : (w + 1) * wb;
        const int64_t addr = in->ofmap_addr + (j->u.p0 + r) * cdiv(in->co, wb) + w;
        memcpy(e->sim->mem.main + addr * wb + (lo - w * wb), fu->q + r * fu->qs + (lo - fu->wbase),
               (size_t)(hi - lo));
        if (e->sim->mem.main_wc) e->sim->mem.main_wc[addr] = (uint64_t)c + 1;
        e->ofm_words++;
        if (--j->writes_left == 0) {
            *retired = true;
            sya_ff_count(e, j, INT64_MAX, false, 0, fu->rd_words);
            if ((rc = sya_job_retire(e, j, c))) {
                /* the per-cycle path stopped at this word, the cycle's
                 * reads and array steps done */
                sya_ff_settle(e, c, true, f->wr[i].key);
                return rc;
            }
        }
    }
    return 0;
}

void sya_ff_settle(sya_engine *e, int64_t x, bool part, int64_t kstop) {
    for (int n = 0; n < e->jobs_n; n++) {
        sya_job *j = ring(e, n);
        if (j->writes_left >= 0) sya_ff_count(e, j, x, part, kstop, -1);
    }
}

int sya_ff_cycle(sya_engine *e, int64_t t) {
    bool retired = false;
    return datapath(e, t, e->sim->obs != NULL, &retired);
}

int sya_ff_stretch(sya_engine *e, int64_t t, int64_t max, int64_t *n) {
    const enpu_sim *sim = e->sim;
    *n = 0;
    /* cycle.c's idle skip takes these (proof, 5.) */
    if (!sim->obs && e->jobs_n == 0 &&
        (e->state == SYA_S_FETCH || e->state == SYA_S_CFG || e->state == SYA_S_HOST))
        return 0;
    int64_t end = max;
    const sim_obs *o = sim->obs;
    if (o && o->vcd && (uint64_t)t < o->to) {
        if ((uint64_t)t >= o->from) return 0;
        if ((int64_t)o->from < end) end = (int64_t)o->from;
    }
    sya_quiet q;
    sya_ccu_quiet(e, t, &q);
    if (q.end < end) end = q.end;
    int64_t c = t;
    int rc = 0;
    /* a stream's cycles are progress (MACs); other quiet stretches stop at
     * the watchdog's deadline unless a write moves it (cycle.c then stops) */
    const bool stream = e->state == SYA_S_STREAM;
    while (c < end) {
        int64_t stop = end, dl = (int64_t)sim_wd_deadline(&e->wd);
        if (!stream && dl < stop) stop = dl > c ? dl : c + 1;
        int64_t ev = next_event(e, c);
        if (ev >= stop) {
            sya_ccu_idle(e, &q, c, stop - c);
            c = stop;
            break;
        }
        /* the controller's part of cycle ev comes first, as in the loop */
        sya_ccu_idle(e, &q, c, ev + 1 - c);
        c = ev + 1;
        e->t = ev;
        bool retired = false;
        const int64_t w0 = e->ofm_words;
        rc = datapath(e, ev, false, &retired);
        if (e->ofm_words != w0) sim_wd_progress(&e->wd, (uint64_t)ev);
        if (rc || retired) break;
        if (e->fault_long && ev + 2 <= end && lost_write(e, ev + 1)) { /* the planted bug (sya.h) */
            e->fault_long = false;
            sya_ccu_idle(e, &q, c, 1);
            c++;
        }
    }
    if (stream && c > t) sim_wd_progress(&e->wd, (uint64_t)(c - 1));
    *n = c - t;
    return rc;
}
