/* The controller's hazard scoreboard (docs/systolic.md "Timing", step 4):
 * the CCU starts a unit only when the words it reads have been written
 * (RAW) and the words it writes are no longer read or written by an earlier
 * instruction's units (WAR, WAW).  It keeps per main-DTCM word the last cycle
 * a started unit reads it and the last cycle one writes it, with the
 * instruction.  The words are the ones the SRAM read side and the
 * re-shaping unit access: a row's window through the instruction's address
 * mapping (enpu_sya_act_at), a row's output channels' words.  The cost
 * model keeps a board of its own (src/compiler/systolic/hazard.c), written
 * apart, so that their equality checks both. */
#include <stdlib.h>
#include <string.h>

#include "sim/systolic/sya.h"

int sya_board_init(sya_board *b, int64_t words, enpu_err *err) {
    memset(b, 0, sizeof *b);
    size_t n = (size_t)(words > 0 ? words : 1);
    b->words = words;
    b->rd = malloc(n * sizeof *b->rd);
    b->wr = malloc(n * sizeof *b->wr);
    b->rd_by = malloc(n * sizeof *b->rd_by);
    b->wr_by = malloc(n * sizeof *b->wr_by);
    if (!b->rd || !b->wr || !b->rd_by || !b->wr_by) {
        sya_board_free(b);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory for the systolic controller's scoreboard");
    }
    sya_board_reset(b);
    return 0;
}

void sya_board_reset(sya_board *b) {
    for (int64_t i = 0; i < b->words; i++) b->rd[i] = b->wr[i] = -1, b->rd_by[i] = b->wr_by[i] = -1;
}

void sya_board_free(sya_board *b) {
    free(b->rd), free(b->wr), free(b->rd_by), free(b->wr_by);
    memset(b, 0, sizeof *b);
}

int64_t sya_out_words(const sya_engine *e, int instr, const enpu_sya_unit *u) {
    const int64_t og0 = enpu_sya_out_channel(&e->lay[instr].s, u, 0);
    return (og0 + u->cols - 1) / e->wb - og0 / e->wb + 1;
}

/* What one pass over a unit's words does with each. */
enum { RAW, WAR, COMMIT };

typedef struct pass {
    sya_board *b;
    int instr, mode;
    int64_t La, off;            /* dtcm_read_latency; K + requant_latency */
    int64_t rd_at;              /* COMMIT: the unit's last read cycle */
    int64_t T, K, rq;
    int64_t v;                  /* the running maximum */
} pass;

static void in_word(pass *p, int64_t w) {
    sya_board *b = p->b;
    if (w < 0 || w >= b->words) return;
    if (p->mode == RAW) {
        if (b->wr[w] >= 0 && b->wr_by[w] != p->instr && b->wr[w] + p->La + 1 > p->v) p->v = b->wr[w] + p->La + 1;
    } else if (p->rd_at >= b->rd[w]) {
        b->rd[w] = p->rd_at, b->rd_by[w] = p->instr;
    }
}

static void out_word(pass *p, int64_t w, int64_t r, int64_t c_last) {
    sya_board *b = p->b;
    if (w < 0 || w >= b->words) return;
    if (p->mode == WAR) {
        if (b->rd[w] >= 0 && b->rd_by[w] != p->instr && b->rd[w] - p->off + 1 > p->v) p->v = b->rd[w] - p->off + 1;
        if (b->wr[w] >= 0 && b->wr_by[w] != p->instr && b->wr[w] - p->off + 1 > p->v) p->v = b->wr[w] - p->off + 1;
        return;
    }
    int64_t t = p->T + p->K + r + c_last + p->rq;
    if (t >= b->wr[w]) b->wr[w] = t, b->wr_by[w] = p->instr;
    if (t > p->v) p->v = t;
}

/* Every word each row of u reads: per window position that is not padding,
 * the words its channels of the product lie in. */
static void in_words(const sya_engine *e, const enpu_sya_unit *u, pass *p) {
    const enpu_instr *in = &e->sim->prog->instr[p->instr];
    const enpu_sya_shape *s = &e->lay[p->instr].s;
    for (int64_t r = 0; r < u->rows; r++)
        for (int64_t tap = 0; tap < s->taps; tap++) {
            int64_t word;
            int lane;
            enpu_sya_act_at(e->a, in, s, u, r, tap * s->cpg, &word, &lane);
            if (word < 0) continue;
            for (int64_t w = word, n = (lane + s->cpg - 1) / e->wb + 1; w < word + n; w++) in_word(p, w);
        }
}

/* Every word each row of u writes, with the column whose result completes
 * it (sync_shape.c writes it then). */
static void out_words(const sya_engine *e, const enpu_sya_unit *u, pass *p) {
    const enpu_instr *in = &e->sim->prog->instr[p->instr];
    const int64_t wb = e->wb, wpp = (in->co + wb - 1) / wb;
    const int64_t og0 = enpu_sya_out_channel(&e->lay[p->instr].s, u, 0), og1 = og0 + u->cols;
    for (int64_t r = 0; r < u->rows; r++)
        for (int64_t w = og0 / wb; w <= (og1 - 1) / wb; w++) {
            int64_t hi = og1 < (w + 1) * wb ? og1 : (w + 1) * wb;
            out_word(p, in->ofmap_addr + (u->p0 + r) * wpp + w, r, hi - 1 - og0);
        }
}

void sya_board_ready(const sya_engine *e, int instr, const enpu_sya_unit *u, int64_t *raw, int64_t *war) {
    const int64_t K = e->lay[instr].s.K;
    pass p = {(sya_board *)&e->board, instr, RAW, e->La, K + e->rq, 0, 0, K, e->rq, -1};
    in_words(e, u, &p);
    *raw = p.v;
    p.mode = WAR, p.v = -1;
    out_words(e, u, &p);
    *war = p.v;
}

int64_t sya_board_commit(sya_engine *e, int instr, const enpu_sya_unit *u, int64_t T) {
    const int64_t K = e->lay[instr].s.K;
    pass p = {&e->board, instr, COMMIT, e->La, K + e->rq, T + u->rows + K - 2 - e->La, T, K, e->rq, -1};
    in_words(e, u, &p);
    out_words(e, u, &p);
    return p.v;
}
