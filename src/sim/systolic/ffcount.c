/* The fast-forward's counts (docs/systolic.md "Statistics"): what one unit's
 * events add to its instruction's row on the per-cycle path, without
 * stepping it.  A unit entering the array at T, with rows x cols PEs and K
 * steps, makes these events (sya.h has the timing names):
 *
 *   glb.c        row r's activation word at T - La + r + k for the step k
 *                that first needs it (not for padding); the weight word
 *                of column c at T - Lw + c + k for the column and step that
 *                first need it
 *   pe_row.c     PE (r, c) latches step k's activation and weight at
 *                T + r + c + k (two operand-register writes)
 *   pe.c         and multiplies them in that cycle: a MAC, two register
 *                reads, an accumulator write, a read unless k = 0, and one
 *                more at k = K - 1 when the result is handed on
 *   pe_array.c   the row's MUX passes the result at T + K + r + c, the
 *                requantizer scales it
 *   sync_shape.c the re-shaping unit takes it at T + K + r + c + rq (a byte
 *                written) and writes a word when its last column's result
 *                arrives (a word read, a main-DTCM write)
 *
 * All of them lie in [T - L, T + K + rows + cols - 2 + rq], the unit's last
 * write: the fast path adds a unit whole, in closed form, when it retires.
 * A run that stops with the unit in flight needs the events of the cycles
 * before the stop, and of the stop's cycle those made before it (its SRAM
 * reads and array step, and the re-shaping unit's results up to the one at
 * which it stopped): they are enumerated per PE, row and column, which only
 * such a stop pays. */
#include "sim/systolic/sya.h"

/* How many of k = 0 .. n-1 have a + k < x. */
static int64_t below(int64_t a, int64_t n, int64_t x) {
    int64_t v = x - a;
    return v < 0 ? 0 : v > n ? n : v;
}

/* Whether an event of the re-shaping unit in cycle cyc, of pipeline key
 * key, came before the stop (x, part, kstop). */
static bool shaped(int64_t cyc, int64_t key, int64_t x, bool part, int64_t kstop) {
    return cyc < x || (part && cyc == x && key > kstop);
}

/* Row r's activation words of window position tap read before cycle xa
 * (all of them when xa is INT64_MAX); 0 for padding. */
static int64_t window_words(const sya_engine *e, const sya_job *j, int64_t r, int64_t tap, int64_t xa) {
    const enpu_instr *in = &e->sim->prog->instr[j->instr];
    const enpu_sya_shape *s = &e->lay[j->instr].s;
    int64_t word;
    int lane;
    enpu_sya_act_at(e->a, in, s, &j->u, r, tap * s->cpg, &word, &lane);
    if (word < 0) return 0;
    /* the steps that first need a word: the position's first channel, then
     * every channel at a word's first lane */
    const int64_t k0 = j->T - e->La + r + tap * s->cpg;
    int64_t n = k0 < xa;
    for (int64_t i = e->wb - lane; i < s->cpg; i += e->wb) n += k0 + i < xa;
    return n;
}

void sya_ff_count(sya_engine *e, const sya_job *j, int64_t x, bool part, int64_t kstop, int64_t rd_words) {
    const enpu_sya_shape *s = &e->lay[j->instr].s;
    const enpu_sya_unit *u = &j->u;
    enpu_layer_stats *st = &e->sim->rows[j->instr];
    const int64_t T = j->T, K = s->K, rows = u->rows, cols = u->cols, wb = e->wb, rq = e->rq;
    const int64_t og0 = enpu_sya_out_channel(s, u, 0), og1 = og0 + cols;
    const int64_t words = sya_out_words(e, j->instr, u);
    if (x > T + K + rows + cols - 2 + rq) {
        /* the whole unit */
        const uint64_t macs = (uint64_t)(rows * cols * K), res = (uint64_t)(rows * cols);
        if (rd_words < 0) {
            rd_words = 0;
            for (int64_t r = 0; r < rows; r++)
                for (int64_t tap = 0; tap < s->taps; tap++) rd_words += window_words(e, j, r, tap, INT64_MAX);
        }
        st->reads[ENPU_MEM_MAIN_DTCM] += (uint64_t)rd_words;
        st->reads[ENPU_MEM_WEIGHT_MEM] +=
            (uint64_t)(s->dw ? (K + wb - 1) / wb : K * ((u->o0 + cols - 1) / wb - u->o0 / wb + 1));
        st->uops[ENPU_UOP_MAC] += macs;
        st->writes[ENPU_MEM_PE_REG] += 2 * macs, st->reads[ENPU_MEM_PE_REG] += 2 * macs;
        st->writes[ENPU_MEM_ACC] += macs, st->reads[ENPU_MEM_ACC] += macs;
        st->reads[ENPU_MEM_MUX] += res, st->uops[ENPU_UOP_REQUANT] += res;
        st->writes[ENPU_MEM_SHAPE] += res;
        st->reads[ENPU_MEM_SHAPE] += (uint64_t)(rows * words), st->writes[ENPU_MEM_MAIN_DTCM] += (uint64_t)(rows * words);
        return;
    }
    /* the cycles before x, and when `part` cycle x's reads and array step */
    const int64_t xa = part ? x + 1 : x;
    int64_t rd = 0, wrd = 0, macs = 0, accr = 0, mux = 0, shw = 0, shr = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t tap = 0; tap < s->taps; tap++) rd += window_words(e, j, r, tap, xa);
        for (int64_t c = 0; c < cols; c++) {
            const int64_t b = T + r + c;
            macs += below(b, K, xa);
            accr += below(b + 1, K - 1, xa) + (b + K - 1 < xa);
            mux += T + K + r + c < xa;
            shw += shaped(T + K + r + c + rq, sya_pipe_key(e, r, c), x, part, kstop);
        }
        for (int64_t w = og0 / wb; w <= (og1 - 1) / wb; w++) {
            const int64_t cl = (og1 < (w + 1) * wb ? og1 : (w + 1) * wb) - 1 - og0;
            shr += shaped(T + K + r + cl + rq, sya_pipe_key(e, r, cl), x, part, kstop);
        }
    }
    if (s->dw) {
        for (int64_t k = 0; k < K; k += wb) wrd += T - e->Lw + k < xa;
    } else {
        for (int64_t c = 0; c < cols; c++)
            if (c == 0 || (u->o0 + c) % wb == 0) wrd += below(T - e->Lw + c, K, xa);
    }
    st->reads[ENPU_MEM_MAIN_DTCM] += (uint64_t)rd;
    st->reads[ENPU_MEM_WEIGHT_MEM] += (uint64_t)wrd;
    st->uops[ENPU_UOP_MAC] += (uint64_t)macs;
    st->writes[ENPU_MEM_PE_REG] += 2 * (uint64_t)macs, st->reads[ENPU_MEM_PE_REG] += 2 * (uint64_t)macs;
    st->writes[ENPU_MEM_ACC] += (uint64_t)macs, st->reads[ENPU_MEM_ACC] += (uint64_t)accr;
    st->reads[ENPU_MEM_MUX] += (uint64_t)mux, st->uops[ENPU_UOP_REQUANT] += (uint64_t)mux;
    st->writes[ENPU_MEM_SHAPE] += (uint64_t)shw;
    st->reads[ENPU_MEM_SHAPE] += (uint64_t)shr, st->writes[ENPU_MEM_MAIN_DTCM] += (uint64_t)shr;
}
