/* The row-stationary cycle engine's fast-forward (docs/rowstat.md
 * "Fast-forward"): a pass computed in one go instead of cycle by cycle, with
 * the same result in every observable -- the global buffer and so the DRAM,
 * every statistic of the instruction (cycles, activities, start and end, the
 * traffic of every memory and network), the trace -- as the per-cycle path
 * (ctrl.c pass_cycle), which stays the reference (opts.per_cycle).
 *
 * ctrl.c calls rs_ff_pass in the cycle a pass starts.  When it returns a
 * cycle, the pass is computed: its psums and outputs are in the global
 * buffer, its counts in the instruction's, the engine's pass state is the
 * one the per-cycle path ends the pass with; the controller then only steps
 * the DMA engine, in the cycles it can act in (rs_dma_next), up to that
 * cycle, where it finishes the pass as the per-cycle path does.
 *
 * Why that is exact:
 *
 * (1) A pass is alone.  Its inputs are its ifmap load's buffer, its filter
 *     buffer (with its output block's bias, M, S) and the block's psums; it
 *     writes the psums or the output block.  The one unit that runs beside
 *     it, the DMA engine, touches other regions: each command waits for the
 *     pass that frees its region (enpu_rs_commands), which dma_clear checks
 *     for every command that may run before the pass ends.  So the pass's
 *     data are a function of the buffer at its start, its timing a function
 *     of its shape (rs_ff_shape's key: the rows, channels, filters, groups
 *     and kernel rows it covers) and of the cycle its filters are all in
 *     (their stream may have started into the other bank before the pass:
 *     ctrl.c pass_start), and the DMA engine sees the pass only
 *     through pass_done[], set in the same cycle as on the per-cycle path.
 *
 * (2) Its schedule.  In a cycle the per-cycle path runs the output network,
 *     the two streams and networks, then every column's PEs from the bottom
 *     up.  A PE does one thing a cycle -- a window value from its FIFO while
 *     the window fills, then MACs -- and each waits for conditions that,
 *     once they hold, hold until the PE acts: its next value in the FIFO
 *     (only the PE pops it), the pass's filters all in, the psum of the PE
 *     above in the link (only this PE takes it, and the PE above cannot
 *     overwrite a full link), the link below emptied (only this PE fills
 *     it).  So each action happens in the first cycle after the PE's
 *     previous one at which all its conditions hold: the largest of that
 *     cycle and the first cycle of each condition -- value jj: the cycle
 *     the ifmap network delivers it (sent at stream index / ifmap values a
 *     cycle, RS_NET_LAT later); the filters: TF, after the filter stream's
 *     last value (which may be before the pass's start); the psum above:
 *     the PE above's last MAC + rs_pe_pipeline (>= 1, so the order of the PEs in a cycle does not matter); the link
 *     below: the first MAC of the PE below on the previous unit (the same
 *     cycle: that PE steps first), for the bottom PE the cycle the output
 *     network takes its psum (it runs first).  Only a unit's first MAC
 *     (psum above), the first R of the last filter of an output column (a
 *     value replaces the window's oldest) and its last MAC (link below) can
 *     wait; every other MAC is issued in the cycle after the previous one:
 *     these stretches cannot stall, and the schedule advances a PE over
 *     them by their length.  It is the cost model's recurrence
 *     (src/compiler/rowstat/cost.c), here with the checks of (3).
 *
 * (3) Errors.  The per-cycle path stops, rather than stalls, when a
 *     delivery finds an input FIFO or filter loop buffer full, or when the
 *     bottom PE's last MAC finds its output link still full (the output
 *     network fell behind).  The schedule checks each -- a FIFO's pop of
 *     value jj comes before the arrival of value jj + depth; p x L filter
 *     values fit; a bottom link's psum is taken no later than the next
 *     last MAC -- and a pass that would fail runs per cycle, which stops
 *     in the same cycle with the same message.  The bottom PEs are
 *     scheduled without the output network: when no check fails their link
 *     is always empty in time, so that schedule is theirs.  The output
 *     network takes the ready psums oldest first (ties: the lower column),
 *     rs_psum_net_values a cycle: the psums sorted by (ready, column), each
 *     taken at the later of its ready cycle and the previous one's, or the
 *     cycle after when that one is full.
 *
 * (4) Counts.  Every statistic of a pass counts events -- a value read from
 *     the global buffer, sent, delivered, popped; a MAC and its reads and
 *     writes; a psum through the output network -- each once, whatever its
 *     cycle; the pass adds the number of each, as the data computation
 *     sees them.  Activities, start and end follow from the schedule's
 *     first MAC, last MAC and last psum, which ctrl.c accounts as it does
 *     for a pass run per cycle.
 *
 * (5) Data.  A psum is the sum of its products, exact in the PEs (64-bit);
 *     here in 32 bits when no sum can leave them (8-bit data: |x*w| <=
 *     2^14, fewer than 2^17 terms), else 64: the same integers in any
 *     order.  Each psum is then written or requantized as the output
 *     network does (collector.c); its address is its own, so the order of
 *     the writes does not matter.
 *
 * The datapath: a column's chain is one dot product per psum -- its PEs'
 * windows end to end against the filter's rows end to end, padded with
 * zeros to a multiple of 8 -- tight loops over contiguous int16 arrays that
 * gcc and clang vectorise at -O2.  A PE's window for output column xo is
 * its values xo*R .. xo*R + L-1 in order: the loop buffer starts with
 * values 0 .. L-1, and the last filter of column xo replaces the slots of
 * values xo*R + k (k < R) with values L + xo*R + k as it reads them, then
 * moves the window's head R slots on (pe.c).  With n images (rs_n) each
 * image's values are such a row of their own: the last filter of an
 * image's last column replaces all L slots with the next image's first
 * window, in order, and the head stays. */
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"
#include "sim/rowstat/rs_sim.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

void rs_ff_free(rs_ff *f) {
    free(f->rd), free(f->srv), free(f->x), free(f->w), free(f->v), free(f->par);
    memset(f, 0, sizeof *f);
}

/* p grown to at least n elements of `size` bytes (the old one and *ok false
 * when out of memory: the pass then runs per cycle). */
static void *grow(void *p, size_t *cap, int64_t n, size_t size, bool *ok) {
    if (n <= 0 || (size_t)n <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < (size_t)n) c *= 2;
    void *q = realloc(p, c * size);
    if (!q) {
        *ok = false;
        return p;
    }
    *cap = c;
    return q;
}

/* ---- the schedule ------------------------------------------------------------------------ */

/* One PE of a column's chain, as the schedule follows it. */
typedef struct chain_pe {
    int64_t q, L, R, N;  /* channels, window, values replaced a column, values it receives */
    int64_t cap;         /* its FIFO's depth */
    int64_t base;        /* its first value's index in a column of the ifmap stream */
    int64_t fst;         /* the earliest first MAC: window filled, filters in */
    int64_t F, E;        /* the unit's first and last MAC */
    int64_t pj;          /* its next FIFO value */
} chain_pe;

typedef struct sched_ctx {
    int64_t cblk, ibw; /* ifmap stream values per input column, per cycle */
} sched_ctx;

/* The cycle (from the pass's start) value jj of PE pe can be popped: the
 * stream sends it ibw values a cycle from the start, the network delivers it
 * RS_NET_LAT later (rs_glb_ifmap_value's order: column, set, row, channel). */
static int64_t arrive(const sched_ctx *x, const chain_pe *pe, int64_t jj) {
    return ((jj / pe->q) * x->cblk + pe->base + jj % pe->q) / x->ibw + RS_NET_LAT;
}

/* Value jj popped in cycle t: no delivery found the FIFO full, i.e. value
 * jj + depth arrives after t (the network delivers before the PEs pop). */
static bool pop_ok(const sched_ctx *x, const chain_pe *pe, int64_t jj, int64_t t) {
    return jj + pe->cap >= pe->N || arrive(x, pe, jj + pe->cap) > t;
}

/* The first and last MAC of PE pe's next unit: lb the earliest first MAC
 * (previous MAC, psum above), link the cycle the link below is free, pulls
 * the MACs that replace window values.  False on a FIFO overflow. */
static bool unit_macs(const sched_ctx *x, chain_pe *pe, int64_t lb, int64_t link, int64_t pulls) {
    int64_t t = lb;
    if (pulls == 0) {
        if (pe->L == 1) t = max64(t, link);
        pe->F = t;
        pe->E = max64(t + pe->L - 1, link);
        return true;
    }
    for (int64_t k = 0; k < pulls; k++) {
        int64_t need = arrive(x, pe, pe->pj + k);
        if (k == pe->L - 1) need = max64(need, link);
        t = k == 0 ? max64(t, need) : max64(t + 1, need);
        if (k == 0) pe->F = t;
        if (!pop_ok(x, pe, pe->pj + k, t)) return false;
    }
    pe->pj += pulls;
    pe->E = pulls == pe->L ? t : max64(t + pe->L - pulls, link);
    return true;
}

/* The columns whose psums are left, as a binary min-heap by their next
 * psum's (ready cycle, column): the output network's order. */
typedef struct col_heap {
    const int64_t *rd;
    int64_t off[64], cur[64], end[64]; /* per column: first, next, end psum in rd */
    int64_t h[64], n;
} col_heap;

static bool before(const col_heap *q, int64_t a, int64_t b) {
    int64_t ta = q->rd[q->cur[a]], tb = q->rd[q->cur[b]];
    return ta < tb || (ta == tb && a < b);
}

/* Restores the heap below position i. */
static void sift(col_heap *q, int64_t i) {
    for (;;) {
        int64_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < q->n && before(q, q->h[l], q->h[m])) m = l;
        if (r < q->n && before(q, q->h[r], q->h[m])) m = r;
        if (m == i) return;
        int64_t x = q->h[i];
        q->h[i] = q->h[m], q->h[m] = x, i = m;
    }
}

/* The output network's cycle for every psum (f->srv, in f->rd's layout:
 * column by column, unit by unit), from their ready cycles; false when a
 * bottom PE's last MAC would find its link full. */
static bool drain(rs_eng *e, const int64_t *U, int64_t ncol, int64_t *ts) {
    rs_ff *f = &e->ff;
    const int64_t pbw = e->a->rs_psum_net_values, D = e->a->rs_pe_pipeline;
    col_heap q = {.rd = f->rd};
    int64_t n = 0, last = -1;
    for (int64_t c = 0; c < ncol; c++) q.off[c] = q.cur[c] = n, n += U[c], q.end[c] = n, q.h[q.n++] = c;
    if (pbw >= ncol) {
        /* a column has one psum waiting at most: each is taken when ready */
        memcpy(f->srv, f->rd, (size_t)n * sizeof *f->srv);
    } else {
        for (int64_t i = q.n / 2 - 1; i >= 0; i--) sift(&q, i);
        int64_t t = INT64_MIN, cnt = 0;
        while (q.n > 0) {
            const int64_t c = q.h[0], i = q.cur[c]++;
            if (f->rd[i] > t) t = f->rd[i], cnt = 0;
            if (cnt == pbw) t++, cnt = 0;
            cnt++;
            f->srv[i] = t;
            if (q.cur[c] == q.end[c]) q.h[0] = q.h[--q.n];
            sift(&q, 0);
        }
    }
    for (int64_t c = 0; c < ncol; c++)
        for (int64_t u = 0; u < U[c]; u++) {
            int64_t i = q.off[c] + u;
            if (u > 0 && f->srv[i - 1] > f->rd[i] - D) return false;
            if (f->srv[i] > last) last = f->srv[i];
        }
    *ts = last;
    return true;
}

/* The schedule of pass e->ps from its start (docs/rowstat.md "Fast-forward"):
 * s->ok and, when set, its first MAC, last MAC and last psum taken. */
static void schedule(rs_eng *e, rs_ff_shape *s) {
    const enpu_arch *a = e->a;
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    const enpu_rs_pass *ps = &e->ps;
    rs_ff *f = &e->ff;
    const int64_t ne = ps->ne, nk = ps->nk, C = e->chain, wo = in->wo, wk = in->wk;
    const int64_t D = a->rs_pe_pipeline, ncol = ne * ps->tu, npsum = e->psums_left;
    const int64_t nhs = g->gpar ? ps->tu : 1, rw = in->stride_w < wk ? in->stride_w : wk;
    const int64_t NF = e->fls.total, TF = s->tf;
    const sched_ctx x = {nhs * e->nK * e->qpre[ps->ru], a->rs_ifmap_net_values};
    s->ok = false;
    bool ok = NF > 0 && C <= 64 && ncol <= 64;
    f->rd = grow(f->rd, &f->rd_cap, npsum, sizeof *f->rd, &ok);
    f->srv = grow(f->srv, &f->srv_cap, npsum, sizeof *f->srv, &ok);
    if (!ok) return;
    chain_pe pe[64];
    int64_t U[64], tc = INT64_MAX, tl = -1, off = 0;
    for (int64_t h = 0; h < ps->tu; h++)
        for (int64_t j = 0; j < ne; j++) {
            const int64_t p = e->ph[h], c = h * ne + j;
            U[c] = g->nwo * p;
            for (int64_t r = 0; r < C; r++) {
                chain_pe *q = &pe[r];
                const int64_t v = r / nk, i = r % nk;
                q->q = e->qv[v], q->L = q->q * wk, q->R = rw * q->q, q->N = g->n * g->ncols * q->q;
                /* the filters fit, and the PE pops exactly the values it receives */
                const rs_pe *hw = rs_pe_at(e, r, c);
                q->cap = hw->fifo_cap;
                if (p * q->L > hw->flb_cap || g->ncols * q->q != q->L + (wo - 1) * q->R) return;
                q->base = nhs * e->nK * e->qpre[v] + ((g->gpar ? h : 0) * e->nK + e->kidx[j * in->stride_h + i]) * q->q;
                int64_t t = -1; /* the window fills a value a cycle, each once it is there */
                for (int64_t jj = 0; jj < q->L; jj++) {
                    t = max64(t + 1, arrive(&x, q, jj));
                    if (!pop_ok(&x, q, jj, t)) return;
                }
                q->fst = max64(t + 1, TF);
                q->pj = q->L;
            }
            for (int64_t u = 0; u < U[c]; u++) {
                /* the last filter of a column replaces R window values, of
                 * an image's last column (before the next image) all L */
                const bool trash = u % p == p - 1 && u / p < g->nwo - 1, image_end = u / p % wo == wo - 1;
                for (int64_t r = 0; r < C; r++) {
                    int64_t lb = u == 0 ? pe[r].fst : pe[r].E + 1;
                    if (r > 0) lb = max64(lb, pe[r - 1].E + D); /* pe[r-1].E is unit u's already */
                    int64_t link = u > 0 && r < C - 1 ? pe[r + 1].F : INT64_MIN; /* unit u-1's */
                    if (!unit_macs(&x, &pe[r], lb, link, trash ? (image_end ? pe[r].L : pe[r].R) : 0)) return;
                    if (u == 0 && pe[r].F < tc) tc = pe[r].F;
                    if (u == U[c] - 1 && pe[r].E > tl) tl = pe[r].E;
                }
                f->rd[off + u] = pe[C - 1].E + D;
            }
            off += U[c];
        }
    if (off != npsum || !drain(e, U, ncol, &s->ts)) return;
    s->tc = tc, s->tl = tl;
    s->ok = true;
}

/* ---- the DMA engine beside the pass ------------------------------------------------------- */

static bool overlap(int64_t a0, int64_t an, int64_t b0, int64_t bn) { return a0 < b0 + bn && b0 < a0 + an; }

/* No DMA command that may run before pass e->k ends touches a byte of the
 * global buffer the pass reads or writes.  The queue runs in order, so
 * those are the commands from its head up to the first that waits for
 * this pass or a later one. */
static bool dma_clear(const rs_eng *e) {
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    const enpu_rs_pass *ps = &e->ps;
    int64_t r0[4], rn[4], n = 0;
    r0[n] = g->ifmap_off[ps->ibuf], rn[n++] = g->ifmap_buf;
    r0[n] = g->filt_off[(in->rs_dbuf & 2) ? ps->index % 2 : 0], rn[n++] = g->filt_buf;
    r0[n] = g->psum_off, rn[n++] = g->psum_buf;
    if (ps->final) r0[n] = g->out_off[(in->rs_dbuf & 4) ? ps->block % 2 : 0], rn[n++] = g->out_buf;
    const rs_dma *d = &e->dma;
    for (int64_t i = d->ci; i < d->ncmd && d->cmd[i].dep < e->k; i++) {
        const enpu_rs_cmd *c = &d->cmd[i];
        int64_t c0 = c->kind == ENPU_RS_LOAD_IFMAP     ? g->ifmap_off[c->buf]
                     : c->kind == ENPU_RS_LOAD_FILTERS ? g->filt_off[c->buf]
                                                       : g->out_off[c->buf];
        int64_t cn = c->kind == ENPU_RS_LOAD_IFMAP ? g->ifmap_buf : c->kind == ENPU_RS_LOAD_FILTERS ? g->filt_buf : g->out_buf;
        for (int64_t k = 0; k < n; k++)
            if (overlap(c0, cn, r0[k], rn[k])) return false;
    }
    return true;
}

/* ---- the data ---------------------------------------------------------------------------- */

/* Dot products over n values, n a multiple of 8: eight independent sums
 * that the compilers turn into vector lanes.  dot32 when no partial sum
 * can leave 32 bits. */
static int64_t dot32(const int16_t *restrict a, const int16_t *restrict b, int64_t n) {
    int32_t s[8] = {0};
    for (int64_t k = 0; k < n; k += 8)
        for (int i = 0; i < 8; i++) s[i] += a[k + i] * b[k + i];
    int32_t t = 0;
    for (int i = 0; i < 8; i++) t += s[i];
    return t;
}

static int64_t dot64(const int16_t *restrict a, const int16_t *restrict b, int64_t n) {
    int64_t s[8] = {0};
    for (int64_t k = 0; k < n; k += 8)
        for (int i = 0; i < 8; i++) s[i] += (int32_t)a[k + i] * b[k + i];
    int64_t t = 0;
    for (int i = 0; i < 8; i++) t += s[i];
    return t;
}

/* Value `idx` of the global buffer's array at `off` (signed, es bytes
 * little-endian: rs_glb_get's, without its loop). */
static int16_t glb_value(const uint8_t *glb, int64_t off, int64_t es, int64_t idx) {
    const uint8_t *b = glb + off + idx * es;
    int32_t v = es == 1 ? b[0] : b[0] | (int32_t)b[1] << 8, sign = es == 1 ? 0x80 : 0x8000;
    return (int16_t)(v & sign ? v - 2 * sign : v);
}

/* Pass e->ps's data: every psum, written to the global buffer's psums or
 * through the requantizer into the output block, and every count of the
 * pass but the schedule's.  False (nothing written) when out of memory. */
static bool pass_data(rs_eng *e) {
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    const enpu_rs_pass *ps = &e->ps;
    rs_ff *f = &e->ff;
    const int64_t es = g->es, ne = ps->ne, nk = ps->nk, ru = ps->ru, tu = ps->tu, C = e->chain;
    const int64_t wo = in->wo, wk = in->wk, sh = in->stride_h, sw = in->stride_w, nK = e->nK;
    const int64_t nhs = g->gpar ? tu : 1, sumq = e->qpre[ru], K = nk * wk * sumq, Kp = (K + 7) / 8 * 8;
    const int64_t rowlen = g->ncols * g->q, nch = enpu_rs_block_channels(g, ps);
    const int64_t rw = sw < wk ? sw : wk;
    int64_t sum_p = 0, woff[65];
    for (int64_t h = 0; h < tu; h++) woff[h] = sum_p, sum_p += e->ph[h];
    bool ok = true;
    f->x = grow(f->x, &f->x_cap, nhs * ru * nK * rowlen, sizeof *f->x, &ok);
    f->w = grow(f->w, &f->w_cap, sum_p * Kp, sizeof *f->w, &ok);
    f->v = grow(f->v, &f->v_cap, wo * Kp, sizeof *f->v, &ok);
    f->par = grow(f->par, &f->par_cap, 3 * nch, sizeof *f->par, &ok);
    if (!ok) return false;
    /* the filters, per set h: filter m's rows of the chain end to end (the
     * filter stream's order: PE row, set, filter, column, channel) */
    const int fb = (in->rs_dbuf & 2) ? (int)(ps->index % 2) : 0;
    memset(f->w, 0, (size_t)(sum_p * Kp) * sizeof *f->w);
    int64_t idx = 0;
    for (int64_t v = 0; v < ru; v++)
        for (int64_t i = 0; i < nk; i++)
            for (int64_t h = 0; h < tu; h++) {
                const int64_t L = e->qv[v] * wk, at = nk * wk * e->qpre[v] + i * L;
                for (int64_t m = 0; m < e->ph[h]; m++)
                    for (int64_t k = 0; k < L; k++)
                        f->w[(woff[h] + m) * Kp + at + k] = glb_value(e->glb, g->filt_off[fb], es, idx++);
            }
    /* the output block's (bias, M, S), after the filter block */
    const int64_t fw = enpu_ceil_div(enpu_rs_fblock_values(g, in, ps->fblock) * es, g->wb);
    for (int64_t i = 0; ps->final && i < nch; i++) {
        int64_t par = g->filt_off[fb] + fw * g->wb + i * ENPU_RS_PARAM_BYTES;
        f->par[3 * i] = rs_glb_get(e->glb, par, 8);
        f->par[3 * i + 1] = rs_glb_get(e->glb, par + 8, 4);
        f->par[3 * i + 2] = rs_glb_get(e->glb, par + 12, 4);
    }
    const bool wide = es != 1 || f->portable || Kp >= ((int64_t)1 << 17);
    const int ob = (in->rs_dbuf & 4) ? (int)(ps->block % 2) : 0;
    memset(f->v, 0, (size_t)(wo * Kp) * sizeof *f->v); /* the padding stays 0 */
    int64_t nonpad = 0;
    for (int64_t img = 0; img < g->n; img++) {
        /* the ifmap stream, a row per (set, input row): column by column, q channels each */
        for (int64_t hh = 0; hh < nhs; hh++)
            for (int64_t v = 0; v < ru; v++)
                for (int64_t kk = 0; kk < nK; kk++) {
                    int16_t *row = f->x + ((hh * ru + v) * nK + kk) * rowlen;
                    const int64_t q = e->qv[v], ch0 = enpu_rs_in_channel(g, ps, hh, v, 0);
                    const int64_t y = ps->y0 * sh - in->pad_top + ps->k0 + e->klist[kk];
                    for (int64_t cx = 0; cx < g->ncols; cx++) {
                        int64_t col = (sw <= wk ? cx : (cx / wk) * sw + cx % wk) - in->pad_left;
                        int16_t *dst = row + cx * q;
                        if (y < 0 || y >= in->hi || col < 0 || col >= in->wi) {
                            for (int64_t c = 0; c < q; c++) dst[c] = (int16_t)in->rs_zp_in;
                            continue;
                        }
                        int64_t off = enpu_rs_ifmap_byte(g, in, ps, img, y, col, ch0);
                        for (int64_t c = 0; c < q; c++) dst[c] = glb_value(e->glb, off, es, c);
                        nonpad += q;
                    }
                }
        for (int64_t h = 0; h < tu; h++)
            for (int64_t j = 0; j < ne; j++) {
                const int64_t p = e->ph[h], hh = g->gpar ? h : 0;
                /* output column xo's windows: PE (v, i)'s MAC k reads its value xo*R + k */
                for (int64_t r = 0, at = 0; r < C; r++) {
                    const int64_t v = r / nk, i = r % nk, q = e->qv[v], L = q * wk, R = rw * q;
                    const int16_t *src = f->x + ((hh * ru + v) * nK + e->kidx[j * sh + i]) * rowlen;
                    for (int64_t xo = 0; xo < wo; xo++)
                        memcpy(f->v + xo * Kp + at, src + xo * R, (size_t)L * sizeof *f->v);
                    at += L;
                }
                for (int64_t xo = 0; xo < wo; xo++)
                    for (int64_t m = 0; m < p; m++) {
                        const int16_t *wv = f->w + (woff[h] + m) * Kp, *xv = f->v + xo * Kp;
                        int64_t s = wide ? dot64(xv, wv, Kp) : dot32(xv, wv, Kp);
                        /* the output network's write (collector.c) */
                        const int64_t ch = g->gpar ? h * ps->nf + m : h * g->p + m;
                        const int64_t slot = (j * g->nwo + img * wo + xo) * nch + ch, poff = g->psum_off + slot * g->psum_bytes;
                        if (!ps->first) s += rs_glb_get(e->glb, poff, (int)g->psum_bytes);
                        if (!ps->final) {
                            rs_glb_put(e->glb, poff, (int)g->psum_bytes, s);
                        } else {
                            const int64_t *pr = &f->par[3 * ch];
                            int32_t y = rs_requant(in, es, s + pr[0], (uint32_t)pr[1], (int)pr[2]);
                            rs_glb_put(e->glb, g->out_off[ob] + slot * es, (int)es, y);
                        }
                    }
            }
    }
    /* the counts (ctrl.c, pe.c, noc.c, collector.c count them one by one):
     * every PE of a column's chain computes one unit per psum, whose first
     * MAC takes the link from above (none at the top), whose last writes
     * the output register, and whose others read and write the psum RAM */
    const uint64_t npsum = (uint64_t)(ne * g->nwo * sum_p), macs = npsum * (uint64_t)K, units = npsum * (uint64_t)C;
    const uint64_t ideliv = (uint64_t)(ne * tu * nk * g->n * g->ncols * sumq), fdeliv = (uint64_t)(ne * idx);
    rs_stats *st = &e->st;
    st->reads[ENPU_MEM_GLB] += (uint64_t)((nonpad + idx) * es) + (ps->first ? 0 : npsum * (uint64_t)g->psum_bytes);
    st->writes[ENPU_MEM_GLB] += npsum * (uint64_t)(ps->final ? es : g->psum_bytes);
    /* an ifmap value passes the nk row nodes of its set, a filter value one */
    st->reads[ENPU_MEM_NOC] += (uint64_t)(e->ifs.total + idx);
    st->writes[ENPU_MEM_NOC] += (uint64_t)(e->ifs.total * nk + idx);
    st->reads[ENPU_MEM_PE_FIFO] += ideliv, st->writes[ENPU_MEM_PE_FIFO] += ideliv;
    st->reads[ENPU_MEM_IFMAP_LB] += macs, st->writes[ENPU_MEM_IFMAP_LB] += ideliv;
    st->reads[ENPU_MEM_FILTER_LB] += macs, st->writes[ENPU_MEM_FILTER_LB] += fdeliv;
    st->reads[ENPU_MEM_PSUM] += macs - units, st->writes[ENPU_MEM_PSUM] += macs - units;
    st->reads[ENPU_MEM_PSUM_LINK] += units - npsum, st->writes[ENPU_MEM_PSUM_LINK] += units;
    st->reads[ENPU_MEM_PSUM_NET] += npsum, st->writes[ENPU_MEM_PSUM_NET] += npsum;
    st->uops[es == 2 ? ENPU_UOP_MAC16 : ENPU_UOP_MAC] += macs;
    if (ps->final) st->uops[ENPU_UOP_REQUANT] += npsum;
    if (!ps->first) st->uops[ENPU_UOP_ALU] += npsum;
    e->busy_cycles += macs;
    return true;
}

/* ---- the pass ------------------------------------------------------------------------------- */

int64_t rs_ff_pass(rs_eng *e, int64_t t) {
    rs_ff *f = &e->ff;
    const enpu_rs_pass *ps = &e->ps;
    /* the windows and psums fit (the validator's; the per-cycle path assumes them) */
    if (ps->ru > 64 || ps->tu > 64 || e->g.q * e->in->wk > e->pe[0].lb_cap || e->g.p > e->pe[0].psum_cap) return -1;
    /* the filters all in (TF, from the pass's start): their stream may have
     * started before it, into the other bank ("Filter banks"); a PE's first
     * MAC follows its first window value, which the ifmap network delivers
     * RS_NET_LAT cycles after the start at the earliest, so a TF before
     * that is that */
    const int64_t filt_last = e->fl_start + (e->fls.total - 1) / e->a->rs_filter_net_values;
    const int64_t tf = max64(filt_last + RS_NET_LAT - t, RS_NET_LAT);
    rs_ff_shape *s = NULL, fresh = {ps->ne, ps->nc, ps->nf, ps->ng, ps->nk, tf, false, 0, 0, 0};
    for (int i = 0; i < f->nmemo && !s; i++) {
        rs_ff_shape *m = &f->memo[i];
        if (m->ne == ps->ne && m->nc == ps->nc && m->nf == ps->nf && m->ng == ps->ng && m->nk == ps->nk &&
            m->tf == tf)
            s = m;
    }
    if (!s) {
        schedule(e, &fresh);
        s = f->nmemo < RS_FF_MEMO ? &f->memo[f->nmemo++] : &fresh;
        *s = fresh;
    }
    if (!s->ok || !dma_clear(e) || !pass_data(e)) return -1;
    /* the state the per-cycle path ends the pass in */
    e->ifs.n = e->ifs.total;
    e->fls.n = e->fls.total;
    e->filt_last = filt_last;
    e->first_mac = t + s->tc;
    e->last_mac = t + s->tl;
    e->last_write = t + s->ts + (ps->final ? e->a->requant_latency : 0);
    e->psums_left = 0;
    for (int64_t i = 0; i < e->a->rs_rows * e->a->rs_cols; i++) {
        rs_pe *pe = &e->pe[i];
        if (!pe->used) continue;
        pe->fn = 0, pe->flb_n = pe->p * pe->L, pe->lb_n = pe->L;
        pe->filled = pe->done = true;
        pe->u = pe->U, pe->k = 0;
        pe->out.full = false;
    }
    e->ifmap_net.n_stage[0] = e->ifmap_net.n_stage[1] = 0;
    e->filter_net.n_stage[0] = e->filter_net.n_stage[1] = 0;
    e->sim->ff_cycles += (uint64_t)s->ts + 1;
    return t + s->ts;
}
