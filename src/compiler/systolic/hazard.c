/* The cost model's hazard scoreboard (docs/systolic.md "Timing", step 4):
 * the controller's rule, restated from the instruction fields.  A unit may
 * enter the array once every word its rows' windows read has been written
 * (RAW) and every word its outputs go to is no longer read or written by an
 * earlier instruction (WAR, WAW).  Per main-DTCM word: the last cycle a
 * started unit reads it (all its reads are booked at its last read cycle),
 * the cycle a unit writes it, and the instruction.  The simulator's
 * controller keeps its own (src/sim/systolic/board.c): the two are written
 * apart so that the test of their equality checks both. */
#include <stdlib.h>
#include <string.h>

#include "compiler/systolic/sya_cc.h"

int sc_board_init(sc_board *b, int64_t words) {
    memset(b, 0, sizeof *b);
    size_t n = (size_t)(words > 0 ? words : 1);
    b->n = words;
    b->rd = malloc(n * sizeof *b->rd), b->wr = malloc(n * sizeof *b->wr);
    b->rd_by = malloc(n * sizeof *b->rd_by), b->wr_by = malloc(n * sizeof *b->wr_by);
    if (!b->rd || !b->wr || !b->rd_by || !b->wr_by) {
        sc_board_free(b);
        return -1;
    }
    for (int64_t i = 0; i < words; i++) b->rd[i] = b->wr[i] = -1, b->rd_by[i] = b->wr_by[i] = -1;
    return 0;
}

void sc_board_free(sc_board *b) {
    free(b->rd), free(b->wr), free(b->rd_by), free(b->wr_by);
    memset(b, 0, sizeof *b);
}

/* A unit's geometry in the main DTCM: where its rows read and write. */
typedef struct geo {
    const enpu_instr *in;
    int64_t wpp_in, wpp_out;     /* words per pixel of the ifmap and ofmap */
    int64_t w_lo, w_n;           /* a pixel's words the product's channels occupy: [w_lo, w_lo + w_n) */
    int64_t og0, o_lo, o_hi;     /* first output channel; its words [o_lo, o_hi] */
} geo;

static void geo_of(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s, const enpu_sya_unit *u,
                   geo *g) {
    const int64_t wb = enpu_arch_word_bytes(a);
    const int64_t ch0 = s->dw ? u->gi : u->gi * s->cpg;
    g->in = in;
    g->wpp_in = (in->ci + wb - 1) / wb, g->wpp_out = (in->co + wb - 1) / wb;
    g->w_lo = ch0 / wb, g->w_n = (ch0 + s->cpg - 1) / wb - ch0 / wb + 1;
    g->og0 = u->gi * s->F + u->o0;
    g->o_lo = g->og0 / wb, g->o_hi = (g->og0 + u->cols - 1) / wb;
}

/* Calls fn for every word point p's window reads (a padding position reads
 * none), word by word. */
static void window_words(const enpu_sya_shape *s, const geo *g, int64_t p, void (*fn)(void *, int64_t),
                         void *ctx) {
    const enpu_instr *in = g->in;
    if (s->fc) {
        for (int64_t pix = 0; pix < in->hi * in->wi; pix++)
            for (int64_t w = 0; w < g->w_n; w++) fn(ctx, in->ifmap_addr + pix * g->wpp_in + g->w_lo + w);
        return;
    }
    const int64_t oy = p / in->wo, ox = p % in->wo;
    for (int64_t kh = 0; kh < in->hk; kh++) {
        const int64_t iy = oy * in->stride_h - in->pad_top + kh * in->dil_h;
        if (iy < 0 || iy >= in->hi) continue;
        for (int64_t kw = 0; kw < in->wk; kw++) {
            const int64_t ix = ox * in->stride_w - in->pad_left + kw * in->dil_w;
            if (ix < 0 || ix >= in->wi) continue;
            const int64_t base = in->ifmap_addr + (iy * in->wi + ix) * g->wpp_in + g->w_lo;
            for (int64_t w = 0; w < g->w_n; w++) fn(ctx, base + w);
        }
    }
}

typedef struct visit {
    sc_board *b;
    const enpu_arch *a;
    int instr;
    int64_t v, K, T, rows;
} visit;

static bool inside(const sc_board *b, int64_t w) { return w >= 0 && w < b->n; }

static void raw_word(void *ctx, int64_t w) {
    visit *x = ctx;
    const sc_board *b = x->b;
    if (!inside(b, w) || b->wr[w] < 0 || b->wr_by[w] == x->instr) return;
    const int64_t t = b->wr[w] + x->a->dtcm_read_latency + 1;
    if (t > x->v) x->v = t;
}

static void book_read(void *ctx, int64_t w) {
    visit *x = ctx;
    sc_board *b = x->b;
    if (!inside(b, w)) return;
    const int64_t t = x->T + x->rows + x->K - 2 - x->a->dtcm_read_latency;
    if (t >= b->rd[w]) b->rd[w] = t, b->rd_by[w] = x->instr;
}

void sc_board_ready(const sc_board *b, const enpu_arch *a, const enpu_instr *in, int instr,
                    const enpu_sya_shape *s, const enpu_sya_unit *u, int64_t *raw, int64_t *war) {
    geo g;
    geo_of(a, in, s, u, &g);
    visit x = {(sc_board *)b, a, instr, -1, s->K, 0, u->rows};
    for (int64_t r = 0; r < u->rows; r++) window_words(s, &g, u->p0 + r, raw_word, &x);
    *raw = x.v;
    /* the first write of a unit comes K + requant_latency cycles after it
     * enters: it may enter that much before an earlier access ends */
    const int64_t lead = s->K + a->requant_latency;
    int64_t v = -1;
    for (int64_t r = 0; r < u->rows; r++)
        for (int64_t w = g.o_lo; w <= g.o_hi; w++) {
            const int64_t at = in->ofmap_addr + (u->p0 + r) * g.wpp_out + w;
            if (!inside(b, at)) continue;
            if (b->rd[at] >= 0 && b->rd_by[at] != instr && b->rd[at] - lead + 1 > v) v = b->rd[at] - lead + 1;
            if (b->wr[at] >= 0 && b->wr_by[at] != instr && b->wr[at] - lead + 1 > v) v = b->wr[at] - lead + 1;
        }
    *war = v;
}

int64_t sc_board_commit(sc_board *b, const enpu_arch *a, const enpu_instr *in, int instr,
                        const enpu_sya_shape *s, const enpu_sya_unit *u, int64_t T) {
    geo g;
    geo_of(a, in, s, u, &g);
    visit x = {b, a, instr, -1, s->K, T, u->rows};
    for (int64_t r = 0; r < u->rows; r++) window_words(s, &g, u->p0 + r, book_read, &x);
    /* row r's word is written when the result of its last channel arrives:
     * the unit's column c at T + K + r + c + requant_latency */
    const int64_t wb = enpu_arch_word_bytes(a), og1 = g.og0 + u->cols;
    int64_t last = -1;
    for (int64_t r = 0; r < u->rows; r++)
        for (int64_t w = g.o_lo; w <= g.o_hi; w++) {
            const int64_t end = (w + 1) * wb < og1 ? (w + 1) * wb : og1;
            const int64_t t = T + s->K + r + (end - 1 - g.og0) + a->requant_latency;
            const int64_t at = in->ofmap_addr + (u->p0 + r) * g.wpp_out + w;
            if (!inside(b, at)) continue;
            if (t >= b->wr[at]) b->wr[at] = t, b->wr_by[at] = instr;
            if (t > last) last = t;
        }
    return last;
}
