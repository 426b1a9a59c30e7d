/* The mapping search of the row-stationary back end (docs/rowstat.md "The
 * mapping search").  The space: every mapping enpu_rs_validate accepts --
 * the PE set's shape (rs_hf kernel rows x rs_e output rows), its
 * replication (rs_p filters and rs_q channels per PE, rs_r sets down the
 * columns, rs_t side by side, rs_gpar), the kernel's folds, the ifmap tiles
 * of the global buffer (rs_ict) and its double buffers (rs_dbuf).
 *
 * FAST (the default) is branch and bound: each candidate gets a lower bound
 * of its cycles (bound(): the passes' filter loads and the busiest PE's
 * MACs, one after the other; or the layer's DRAM bytes at the channel's
 * rate), the candidates are timed by the cost model (cost.c, equal to the
 * simulator) in the order of their bounds, and the search stops when the
 * next bound is past the time beyond which a mapping can be neither the
 * choice nor the best alternative (pool_pick's threshold): the choice and
 * the alternative are those of timing every candidate (EXHAUSTIVE does,
 * the yardstick).  The choice: cycles first, then traffic (the objective
 * below).
 * LEGACY is the previous search, kept for comparisons: whole-strip ifmaps
 * only, ranked by an estimate, the best 12 of it timed.
 *
 * A batch of N images (the instruction's rs_n on the way in) adds the
 * images per pass n, every divisor of N: the layer is then N/n
 * instructions of n images each, and every time, bound and traffic here
 * is the batch's (N/n times one instruction's), so mappings of different n
 * compare.  LEGACY takes n = 1. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/rowstat/rs.h"
#include "isa/isa_internal.h"

#define N_LEGACY 12 /* mappings LEGACY times */
#define N_VALS 64   /* candidate values per mapping field, at most */

typedef struct cand {
    enpu_instr in;
    int64_t mult;  /* instructions of the batch: N / n */
    int64_t dram;  /* the batch's DRAM words, at least (its bytes / word: each run touches
                      its bytes' words at least) */
    double key;   /* LEGACY: the estimate; else the lower bound */
    int64_t idx;  /* enumeration order: ties are broken by it, so every mode is deterministic */
} cand;

static int cand_cmp(const void *pa, const void *pb) {
    const cand *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* Distinct values ceil(n / k) for k = 1, 2, ... that are in [1, hi], largest
 * first: every way of cutting n into equal-ish blocks. */
static int block_sizes(int64_t n, int64_t hi, int64_t *out) {
    int cnt = 0;
    int64_t last = -1;
    for (int64_t k = 1; k <= n && cnt < N_VALS; k++) {
        int64_t v = enpu_ceil_div(n, k);
        if (v == last || v > hi) continue;
        out[cnt++] = last = v;
    }
    return cnt;
}

/* LEGACY's estimate: its passes (filters in, the first window, its MACs,
 * the chain's skew, the psums out), or its DRAM traffic when longer. */
static double estimate(const enpu_arch *a, const enpu_instr *in, const enpu_rs_geom *g) {
    int64_t L = g->q * in->wk, U = g->nwo * g->p, C = g->r * g->hf;
    int64_t nf = g->p * g->t * g->q * g->r * g->hf * in->wk;
    double pass = (double)nf / (double)a->rs_filter_net_values + (double)L + (double)(U * L) +
                  (double)((C - 1) * (L + a->rs_pe_pipeline)) +
                  (double)g->e * (double)g->t / (double)a->rs_psum_net_values + 8;
    int64_t bpc = a->dram_bytes_per_cycle < g->wb ? a->dram_bytes_per_cycle : g->wb;
    double dram = ((double)g->n_strips * (double)g->ifmap_buf + (double)g->n_passes * (double)g->filt_buf +
                   (double)g->ofmap_words * (double)g->wb) / (double)bpc;
    double t = pass * (double)g->n_passes;
    return t > dram ? t : dram;
}

/* A PE set's shape: the fields a pass's timing bound depends on. */
typedef struct shape {
    int64_t hf, e, p, q, r, t;
    int gp;
    int64_t n;   /* images per pass */
} shape;

/* The passes' part of the bound: passes run one after the other, and a
 * pass ends no earlier than each of
 * - its filters in (NF values, (NF-1)/filter_net_values + 2 cycles after
 *   its start: the network's two register stages), then the chain's skew
 *   (a PE's first MAC of a unit takes the psum the PE above passed down,
 *   rs_pe_pipeline cycles after that PE's L-th MAC, L = its channels x wk),
 *   then the bottom PE's MACs, one a cycle; and the busiest PE's MACs after
 *   the filters (n images: n * wo output columns);
 * - its ifmap stream's last value in its PE ((I-1)/ifmap_net_values + 2)
 *   and a MAC that uses it;
 * - its psums through the output network (rs_psum_net_values a cycle).
 * A pass's rows, filters, channels and kernel rows depend only on whether
 * its strip and block digits are the last of their dimension: the sum runs
 * over those classes.  From the shape alone (the contract's block
 * arithmetic written out), as the search calls it on every shape before
 * validating any.
 *
 * With filter banks (enpu_rs_filter_banked) a pass's filters may be in
 * before it starts, so its TF above is only the 2 cycles an ifmap value
 * takes to its PE -- except the first pass's, whose stream starts with it.
 * The filter network still carries every pass's filters one stream after
 * the other: a stream starts 3 cycles after the previous one's last value
 * at the earliest (it has left the network's two stages), and the last
 * pass ends its two stages after its own last value, plus its MACs.  So the passes take
 * at least the larger of the two sums (the streams' the tighter when the
 * filters outweigh the MACs: without it the search does not prune).
 * Also *f0: the first pass's filter values; *olast: the last pass's
 * outputs (ends_bound). */
static int64_t pass_bound(const enpu_arch *a, const enpu_instr *in, const shape *s, int64_t *f0, int64_t *olast) {
    const int64_t G = in->groups, cpg = in->ci / G, opg = in->co / G, wk = in->wk, wo = in->wo;
    const int64_t fbs = s->gp ? s->p : s->p * s->t, cbs = s->q * s->r, D = a->rs_pe_pipeline;
    const int64_t dg[5] = {enpu_ceil_div(in->ho, s->e), s->gp ? enpu_ceil_div(G, s->t) : G, enpu_ceil_div(opg, fbs),
                           enpu_ceil_div(cpg, cbs), enpu_ceil_div(in->hk, s->hf)};
    const int64_t ncols = in->stride_w <= wk ? (wo - 1) * in->stride_w + wk : wo * wk;
    const bool banked = enpu_rs_banks_fit(a, s->p, s->q, wk);
    int cls0 = 0; /* the first pass's class: the digits of one value are last */
    for (int d = 0; d < 5; d++) cls0 |= (dg[d] == 1) << d;
    int64_t sum = 0, streams = 0, after = INT64_MAX, first = 0;
    for (int cls = 0; cls < 32; cls++) {
        int64_t cnt = 1, idx[5];
        for (int d = 0; d < 5; d++) {
            bool last = (cls >> d) & 1;
            idx[d] = last ? dg[d] - 1 : 0;
            if (!last) cnt *= dg[d] - 1;
        }
        if (cnt <= 0) continue;
        int64_t ne = imin(s->e, in->ho - idx[0] * s->e), ng = s->gp ? imin(s->t, G - idx[1] * s->t) : 1;
        int64_t nf = imin(fbs, opg - idx[2] * fbs), nc = imin(cbs, cpg - idx[3] * cbs);
        int64_t nk = imin(s->hf, in->hk - idx[4] * s->hf);
        int64_t tu = s->gp ? ng : enpu_ceil_div(nf, s->p), ru = enpu_ceil_div(nc, s->q);
        int64_t P = s->gp ? ng * nf : nf, pmax = s->gp ? nf : imin(s->p, nf);
        int64_t qmax = imin(s->q, nc), qlast = nc - (ru - 1) * s->q;
        const int64_t TF = (P * nc * nk * wk - 1) / a->rs_filter_net_values + 2;
        /* the skew: every PE of the chain but the bottom one, set by set */
        int64_t skew = (ru - 1) * nk * (s->q * wk - 1 + D) + (nk - 1) * (qlast * wk - 1 + D);
        const int64_t nwo = s->n * wo;
        const int64_t macs = imax(nwo * pmax * qmax * wk, skew + nwo * pmax * qlast * wk);
        int64_t nK = in->stride_h <= nk ? (ne - 1) * in->stride_h + nk : ne * nk;
        int64_t I = s->n * ncols * (s->gp ? tu : 1) * nK * nc;
        int64_t rest = imax((I - 1) / a->rs_ifmap_net_values + 3, enpu_ceil_div(ne * nwo * P, a->rs_psum_net_values));
        int64_t t = imax((banked ? 2 : TF) + macs, rest);
        if (banked && cls == cls0) first = imax(TF + macs, rest) - t;
        if (cls == cls0) *f0 = P * nc * nk * wk;
        if (cls == 31) *olast = ne * nwo * P;
        sum += cnt * t;
        streams += cnt * (TF + 1); /* its values' cycles (TF - 2 + 1), the 3-cycle gap after */
        after = imin(after, macs);
    }
    /* the last stream's gap is the 2 stages to the filters in, then the MACs */
    return banked ? imax(sum + first, streams - 1 + after) : sum;
}

/* The DRAM's part: the DMA engine's bursts are served one after the
 * other, each at most min(dram_bytes_per_cycle, word) bytes a cycle, so
 * the bytes every command moves (the ifmap loads, the filter blocks and
 * their parameters once per strip, the outputs once; the ifmap and outputs
 * of each of the n images) take at least their bytes at that rate. */
static int64_t dram_bytes(const enpu_instr *in, const enpu_rs_geom *g) {
    int64_t ibytes = 0;
    for (int64_t s = 0; s < g->n_strips; s++) {
        int64_t r0, r1;
        enpu_rs_strip_rows(g, in, s, &r0, &r1);
        /* a tile's load per output block: each group's channels once per filter block */
        ibytes += (r1 - r0) * in->wi * (g->ict ? in->ci * g->es * g->n_fb : g->wpp_in * g->wb);
    }
    return g->n * ibytes + g->n_strips * g->weight_words * g->wb + g->n * in->ho * in->wo * in->co * g->es;
}

static int64_t dram_bound(const enpu_arch *a, const enpu_instr *in, const enpu_rs_geom *g) {
    return dram_bytes(in, g) / imin(a->dram_bytes_per_cycle, g->wb);
}

/* The DMA at the ends of an instruction: its first pass starts no earlier
 * than its first commands' data is in (its filters, f0 values, and the
 * first ifmap load, i0 bytes: one channel, bursts one after the other at
 * min(dram_bytes_per_cycle, word) bytes a cycle, then the DRAM's latency),
 * and the layer ends no earlier than the last pass's outputs (olast
 * values) are stored after it.  Where filter banks hide the filters, these
 * two are most of what the passes' bound misses (the 1 x 1 layers on 3 x 3
 * maps of docs/rowstat.md "Filter banks"). */
static int64_t ends_bound(const enpu_arch *a, const enpu_instr *in, int64_t f0, int64_t i0, int64_t olast) {
    const int64_t es = in->rs_bits ? 2 : 1, rate = imax(1, imin(a->dram_bytes_per_cycle, enpu_arch_word_bytes(a)));
    return 2 * a->dram_latency + enpu_ceil_div(f0 * es + i0, rate) + enpu_ceil_div(olast * es, rate);
}

/* The first ifmap load's bytes (strip 0: its rows of every image, every
 * channel word or, with tiles, the first tile's channels). */
static int64_t first_load_bytes(const enpu_instr *in, const enpu_rs_geom *g) {
    int64_t r0, r1;
    enpu_rs_strip_rows(g, in, 0, &r0, &r1);
    return g->n * (r1 - r0) * in->wi * (g->ict ? imin(g->tile_ch, g->cpg) * g->es : g->wpp_in * g->wb);
}

int64_t rs_map_bound(const enpu_arch *a, const enpu_instr *in) {
    enpu_rs_geom g;
    enpu_err e = {0};
    if (enpu_rs_geom_of(a, in, &g, &e) != 0) return -1;
    const shape s = {g.hf, g.e, g.p, g.q, g.r, g.t, g.gpar, g.n};
    const int64_t ctl = a->instr_fetch_cycles + a->decode_cycles + a->rs_config_cycles;
    int64_t f0 = 0, ol = 0;
    const int64_t pb = pass_bound(a, in, &s, &f0, &ol);
    return ctl + imax(pb + ends_bound(a, in, f0, first_load_bytes(in, &g), ol), dram_bound(a, in, &g));
}

rs_map_text rs_map_params(const enpu_rs_geom *g, const enpu_instr *in) {
    rs_map_text t;
    char tiles[48] = "whole strips";
    if (g->ict > 0) snprintf(tiles, sizeof tiles, "tiles of %" PRId64 " channels", g->tile_ch);
    snprintf(t.s, sizeof t.s,
             "n=%" PRId64 " m=%" PRId64 " e=%" PRId64 " p=%" PRId64 " q=%" PRId64 " r=%" PRId64 " t=%" PRId64
             "%s (sets %" PRId64 "x%" PRId64 ", %" PRId64 " fold%s, ifmap %s, dbuf=%" PRId64 ")",
             g->n, g->fb_size, g->e, g->p, g->q, g->r, g->t, g->gpar ? " on groups" : "", g->hf, g->e, g->n_fold,
             g->n_fold > 1 ? "s" : "", tiles, in->rs_dbuf);
    return t;
}

typedef struct base {
    shape s;
    int64_t lb, idx;  /* the batch's bound (N/n instructions, without the first ifmap load); enumeration order */
    int64_t pb, f0, olast; /* one instruction's pass_bound and its ends (ends_bound) */
} base;

static int base_cmp(const void *pa, const void *pb) {
    const base *a = pa, *b = pb;
    if (a->lb != b->lb) return a->lb < b->lb ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Every PE-set shape of `in` inside the array and the PE's buffers' field
 * ranges (the validator decides the rest): rs_hf the fewest folds and up
 * to 3 more, rs_e, rs_p, rs_q every way of cutting the output rows,
 * filters and channels into equal blocks, rs_t and rs_r every number of
 * sets that fits, on filters or (rs_gpar) on groups; each with n images
 * per pass for every divisor n of the batch N (LEGACY: n = 1).  NULL on no
 * memory. */
static base *shapes(const enpu_arch *a, const enpu_instr *in, int64_t N, enpu_search mode, size_t *n) {
    const int64_t G = in->groups, cpg = in->ci / G, opg = in->co / G;
    int64_t hfs[8], es_[N_VALS], ps[N_VALS], qs[N_VALS], ts[N_VALS], rs[N_VALS];
    int nhf = 0;
    size_t cap = 256;
    base *b = malloc(cap * sizeof *b);
    if (!b) return NULL;
    *n = 0;
    int64_t hf0 = in->hk < a->rs_rows ? in->hk : a->rs_rows;
    for (int64_t f = enpu_ceil_div(in->hk, hf0); f <= enpu_ceil_div(in->hk, hf0) + 3 && nhf < 8; f++) {
        int64_t v = enpu_ceil_div(in->hk, f);
        if (v <= a->rs_rows && (nhf == 0 || hfs[nhf - 1] != v)) hfs[nhf++] = v;
    }
    int ne = block_sizes(in->ho, a->rs_cols, es_);
    int np = block_sizes(opg, a->rs_psum_depth, ps);
    int nq = block_sizes(cpg, a->rs_ifmap_lb_depth / in->wk, qs);
    const int64_t nmax = mode == ENPU_SEARCH_LEGACY ? 1 : N; /* images per pass: the divisors of N */
    for (int64_t ni = 1; ni <= nmax; ni++) {
        if (N % ni != 0) continue;
        for (int gp = 0; gp < (G >= 2 ? 2 : 1); gp++)
            for (int ih = 0; ih < nhf; ih++)
                for (int ie = 0; ie < ne; ie++)
                    for (int ip = 0; ip < np; ip++)
                        for (int iq = 0; iq < nq; iq++) {
                            int64_t tmax = a->rs_cols / es_[ie], rmax = a->rs_rows / hfs[ih];
                            int nt = block_sizes(gp ? G : enpu_ceil_div(opg, ps[ip]), tmax, ts);
                            int nr = block_sizes(enpu_ceil_div(cpg, qs[iq]), rmax, rs);
                            for (int it = 0; it < nt; it++)
                                for (int ir = 0; ir < nr; ir++) {
                                    if (*n == cap) {
                                        base *nb = realloc(b, 2 * cap * sizeof *nb);
                                        if (!nb) {
                                            free(b);
                                            return NULL;
                                        }
                                        b = nb, cap *= 2;
                                    }
                                    shape sh = {hfs[ih], es_[ie], ps[ip], qs[iq], rs[ir], ts[it], gp, ni};
                                    int64_t f0 = 0, ol = 0, pb = pass_bound(a, in, &sh, &f0, &ol);
                                    b[*n] = (base){sh, N / ni * (pb + ends_bound(a, in, f0, 0, ol)), (int64_t)*n,
                                                   pb, f0, ol};
                                    (*n)++;
                                }
                        }
    }
    return b;
}

/* The valid mappings of shape s (LEGACY: whole strips only) into v[]: each
 * ifmap tiling (the whole strip, or ceil(n_cb / k) channel blocks for k =
 * 2, 3, ...: one group's, so not with rs_gpar) with the first rs_dbuf that
 * fits in the order below (the more regions double-buffered the better,
 * the filters first); key: the bound (LEGACY: its estimate). */
static int variants(const enpu_arch *a, const enpu_instr *in, int64_t N, const base *b, enpu_search mode, cand *v) {
    static const int dbufs[] = {7, 3, 6, 2, 5, 1, 4, 0};
    const shape *s = &b->s;
    const int64_t cpg = in->ci / in->groups, ncb = enpu_ceil_div(cpg, s->q * s->r);
    const int64_t ctl = a->instr_fetch_cycles + a->decode_cycles + a->rs_config_cycles;
    int64_t is[N_VALS + 1];
    int ni = 1, n = 0;
    is[0] = 0;
    if (mode != ENPU_SEARCH_LEGACY && !s->gp && ncb > 1) ni += block_sizes(ncb, ncb - 1, is + 1);
    for (int ii = 0; ii < ni; ii++) {
        enpu_instr c = *in;
        c.rs_e = s->e, c.rs_p = s->p, c.rs_q = s->q, c.rs_t = s->t, c.rs_r = s->r;
        c.rs_hf = s->hf, c.rs_gpar = s->gp, c.rs_ict = is[ii];
        c.rs_n = s->n > 1 ? s->n : 0; /* 0: one image, the field as before images */
        enpu_err e2 = {0};
        int k = 0;
        for (; k < 8; k++) {
            c.rs_dbuf = dbufs[k];
            if (enpu_rs_validate(a, &c, &e2) == 0) break;
        }
        if (k == 8) continue;
        enpu_rs_geom g;
        enpu_rs_geom_of(a, &c, &g, &e2);
        const int64_t mult = N / s->n;
        const int64_t ends = ends_bound(a, &c, b->f0, first_load_bytes(&c, &g), b->olast);
        double key = mode == ENPU_SEARCH_LEGACY ? estimate(a, &c, &g)
                                                : (double)(mult * (ctl + imax(b->pb + ends, dram_bound(a, &c, &g))));
        v[n] = (cand){c, mult, mult * enpu_ceil_div(dram_bytes(&c, &g), g.wb), key, b->idx * (N_VALS + 1) + ii};
        n++;
    }
    return n;
}

/* The objective: cycles first, then traffic.  Mappings whose modelled
 * cycles are within RS_SLACK_NUM / RS_SLACK_DEN of the fewest count as
 * equally fast -- but never slower than the previous search's choice (the
 * cap, asked of LEGACY only when the choice is slower than the fastest, as
 * LEGACY enumerates every shape: sweeps stay near their speed), so the
 * search stays never worse in cycles; among them the search
 * takes the one that moves the fewest DRAM words, then the fewest
 * global-buffer bytes, then the fewest cycles.  Why: the fastest mapping
 * is often an ifmap tiling that reloads the input for every filter block,
 * a percent faster for a third more energy (DRAM is half of the engine's
 * energy; docs/rowstat.md "The mapping's objective" has the measured
 * trade-off).  The compiler sits below the energy model, so traffic stands
 * in for energy. */
#define RS_SLACK_NUM 10 /* 1%: the VGG layer keeps its cycles (docs/rowstat.md) */
#define RS_SLACK_DEN 1000

/* A timed mapping: its cycles, its traffic and its enumeration index (the
 * last tie-break, the same in every mode, so FAST chooses what EXHAUSTIVE
 * does). */
typedef struct timed {
    int64_t t, dram, glb, idx;
    enpu_instr in;
} timed;

/* The mappings timed to their end so far (a growing array). */
typedef struct pool {
    timed *v;
    size_t n, cap;
} pool;

/* Whether x goes before y among the equally fast: traffic, then cycles. */
static bool less_traffic(const timed *x, const timed *y) {
    if (x->dram != y->dram) return x->dram < y->dram;
    if (x->glb != y->glb) return x->glb < y->glb;
    if (x->t != y->t) return x->t < y->t;
    return x->idx < y->idx;
}

/* Whether x goes before y by cycles, then traffic (the alternative outside
 * the slack). */
static bool fewer_cycles(const timed *x, const timed *y) {
    if (x->t != y->t) return x->t < y->t;
    return less_traffic(x, y);
}

/* The last cycle count within the slack of fewest-cycle count m. */
static int64_t slack_cut(int64_t m) {
    return m + m / RS_SLACK_DEN * RS_SLACK_NUM + m % RS_SLACK_DEN * RS_SLACK_NUM / RS_SLACK_DEN;
}

/* The end of the slack of a pool whose fastest takes m cycles, no further
 * than cap unless m is. */
static int64_t pool_cut(int64_t m, int64_t cap) { return imin(slack_cut(m), imax(m, cap)); }

/* The choice (*best) and the best alternative (*alt, NULL when there is
 * none) among the pool: the least traffic within the slack (no further
 * than cap cycles, unless the fastest is slower still), and after it the
 * next within the slack or else the fastest outside (*fastest: the fewest
 * cycles in it).  Returns the threshold: a mapping of more cycles changes
 * neither. */
static int64_t pool_pick(const pool *pl, int64_t cap, const timed **best, const timed **alt, int64_t *fastest) {
    *best = *alt = NULL;
    *fastest = INT64_MAX;
    if (pl->n == 0) return INT64_MAX;
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < pl->n; i++) m = imin(m, pl->v[i].t);
    *fastest = m;
    const int64_t cut = pool_cut(m, cap);
    const timed *out = NULL;
    for (size_t i = 0; i < pl->n; i++) {
        const timed *x = &pl->v[i];
        if (x->t > cut) {
            if (!out || fewer_cycles(x, out)) out = x;
        } else if (!*best || less_traffic(x, *best)) {
            *alt = *best, *best = x;
        } else if (!*alt || less_traffic(x, *alt)) {
            *alt = x;
        }
    }
    if (*alt) return cut; /* two within the slack: the alternative is one of them */
    *alt = out;
    return out ? imax(cut, out->t) : INT64_MAX;
}

/* Whether the pool's choice is slower than its fastest mapping. */
static bool pool_traded(const pool *pl, const timed *best) {
    for (size_t i = 0; i < pl->n; i++)
        if (pl->v[i].t < best->t) return true;
    return false;
}

/* Times candidate c into the pool (only if it may matter: FAST stops the
 * model at the threshold, EXHAUSTIVE times every mapping whole).  -1 on no
 * memory. */
static int consider(const enpu_arch *a, const cand *c, pool *pl, int64_t thr, enpu_search mode,
                    rs_map_info *info) {
    /* one instruction of the batch's N/n: past thr / mult, the batch is past thr */
    int64_t limit = mode != ENPU_SEARCH_EXHAUSTIVE && thr < INT64_MAX ? thr / c->mult + 1 : INT64_MAX;
    rs_counts cnt;
    int64_t t = rs_model_instr_limit(a, &c->in, limit, &cnt);
    info->n_timed++;
    if (t < 0 || t >= limit) return 0;
    const int64_t m = c->mult;
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? 2 * pl->cap : 64;
        timed *p = realloc(pl->v, cap * sizeof *p);
        if (!p) return -1;
        pl->v = p, pl->cap = cap;
    }
    pl->v[pl->n++] = (timed){m * t, m * (int64_t)(cnt.reads[ENPU_MEM_OFFCHIP] + cnt.writes[ENPU_MEM_OFFCHIP]),
                             m * (int64_t)(cnt.reads[ENPU_MEM_GLB] + cnt.writes[ENPU_MEM_GLB]), c->idx, c->in};
    return 0;
}

/* FAST's state between candidates: the pool and its pick, and the
 * candidates set aside untimed (can_defer). */
typedef struct search {
    const enpu_arch *a;
    enpu_search mode;
    rs_map_info *info;
    pool pl;
    int64_t cap, thr, fastest;
    const timed *best, *alt;
    cand *def;
    size_t ndef, defcap;
} search;

static void pick(search *S) { S->thr = pool_pick(&S->pl, S->cap, &S->best, &S->alt, &S->fastest); }

/* Whether candidate c needs no timing while the pool stays as it is: it
 * cannot be faster than the fastest timed (its bound), and with two
 * mappings within the slack, its DRAM words alone put it behind the
 * alternative (traffic decides among those, DRAM words first), so it is
 * neither the choice nor the alternative whatever its cycles.  Under
 * filter banks thousands of mappings come within the slack (the 1 x 1
 * layers on 3 x 3 maps of docs/rowstat.md "Filter banks"): timing each to
 * compare its traffic was most of a compile. */
static bool can_defer(const search *S, const cand *c) {
    return S->mode == ENPU_SEARCH_FAST && S->alt && S->alt->t <= pool_cut(S->fastest, S->cap) &&
           c->key >= (double)S->fastest && c->dram > S->alt->dram;
}

/* Times candidate c into the pool and picks again.  -1 on no memory. */
static int take(search *S, const cand *c) {
    if (consider(S->a, c, &S->pl, S->thr, S->mode, S->info)) return -1;
    pick(S);
    return 0;
}

/* Sets candidate c aside (can_defer), or times it. */
static int defer_or_take(search *S, const cand *c) {
    if (!can_defer(S, c)) return take(S, c);
    if (S->ndef == S->defcap) {
        size_t nc = S->defcap ? 2 * S->defcap : 256;
        cand *p = realloc(S->def, nc * sizeof *p);
        if (!p) return -1;
        S->def = p, S->defcap = nc;
    }
    S->def[S->ndef++] = *c;
    return 0;
}

/* Times every candidate set aside that the pool's changes have made
 * relevant again, until none is; drops those past the threshold (it never
 * rises).  So at the end the set-aside ones change neither the choice nor
 * the alternative: FAST still chooses what EXHAUSTIVE does.  -1 on no
 * memory. */
static int undefer(search *S) {
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < S->ndef;) {
            const cand c = S->def[i];
            if (c.key <= (double)S->thr && can_defer(S, &c)) {
                i++;
                continue;
            }
            S->def[i] = S->def[--S->ndef];
            if (c.key > (double)S->thr) continue;
            if (take(S, &c)) return -1;
            again = true;
        }
    }
    return 0;
}

int rs_map_layer(const enpu_arch *a, enpu_instr *in, enpu_search mode, const char *what,
                 rs_map_info *info, enpu_err *err) {
    size_t nb = 0;
    memset(info, 0, sizeof *info);
    /* LEGACY has no slack (cap 0); the others take the whole slack until
     * their choice turns out slower than the fastest (below) */
    search S = {a, mode, info, {NULL, 0, 0}, mode == ENPU_SEARCH_LEGACY ? 0 : INT64_MAX, INT64_MAX, INT64_MAX,
                NULL, NULL, NULL, 0, 0};
    const int64_t N = in->rs_n > 1 ? in->rs_n : 1;
    base *bs = shapes(a, in, N, mode, &nb);
    if (!bs) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    qsort(bs, nb, sizeof *bs, base_cmp);
    const enpu_instr orig = *in;
    const int64_t ctl = a->instr_fetch_cycles + a->decode_cycles + a->rs_config_cycles;
    int64_t nvalid = 0;
    cand v[N_VALS + 1];
    cand *leg = NULL;
    size_t nleg = 0, legcap = 0;
    int rc = 0;
    for (size_t i = 0; i < nb && !rc; i++) {
        /* every later shape's bound is at least this one's: no mapping of
         * them can be the choice or the alternative */
        if (mode == ENPU_SEARCH_FAST && ctl + bs[i].lb > S.thr) break;
        int nv = variants(a, &orig, N, &bs[i], mode, v);
        nvalid += nv;
        if (mode == ENPU_SEARCH_LEGACY) {
            /* LEGACY ranks every mapping by its estimate first */
            if (nleg + (size_t)nv > legcap) {
                size_t nc = legcap ? legcap * 2 : 1024;
                while (nc < nleg + (size_t)nv) nc *= 2;
                cand *p = realloc(leg, nc * sizeof *p);
                if (!p) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                else leg = p, legcap = nc;
            }
            for (int k = 0; k < nv && !rc; k++) leg[nleg++] = v[k];
            continue;
        }
        qsort(v, (size_t)nv, sizeof *v, cand_cmp);
        for (int k = 0; k < nv && !rc; k++) {
            if (mode == ENPU_SEARCH_FAST && v[k].key > (double)S.thr) break;
            const int64_t f = S.fastest;
            /* the alternative by its enumeration index: timing moves the pool */
            const int64_t al = S.alt ? S.alt->idx : -1;
            if (defer_or_take(&S, &v[k]) || ((S.fastest != f || (S.alt ? S.alt->idx : -1) != al) && undefer(&S)))
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        }
    }
    if (!rc && mode == ENPU_SEARCH_LEGACY && nleg > 0) {
        qsort(leg, nleg, sizeof *leg, cand_cmp);
        for (size_t k = 0; k < nleg && k < N_LEGACY && !rc; k++)
            if (take(&S, &leg[k])) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    free(leg);
    free(bs);
    info->n_cand = (int64_t)nb;
    pick(&S);
    if (!rc && S.best && mode != ENPU_SEARCH_LEGACY && pool_traded(&S.pl, S.best)) {
        /* the choice gave up cycles: no more than LEGACY's choice takes (the
         * search stays never worse in cycles), which may find nothing where
         * ifmap tiles fit.  Picking again from the same pool is exact: it
         * holds every mapping up to the threshold of the wider slack, which
         * covers the narrower one's choice and alternative -- but for those
         * set aside, which the narrower slack may make relevant (undefer). */
        rs_map_info li;
        enpu_instr l = orig;
        enpu_err e2 = {0};
        int lr = rs_map_layer(a, &l, ENPU_SEARCH_LEGACY, what, &li, &e2);
        if (lr && lr != ENPU_E_NOFIT) {
            *err = e2;
            rc = lr;
        } else if (!lr) {
            S.cap = li.cycles;
            pick(&S);
            if (undefer(&S)) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        }
    }
    free(S.def);
    if (rc) {
        free(S.pl.v);
        return rc;
    }
    if (nvalid == 0) {
        free(S.pl.v);
        /* the smallest mapping says what does not fit */
        enpu_instr c = orig;
        c.rs_e = c.rs_p = c.rs_q = c.rs_r = c.rs_t = 1;
        c.rs_hf = in->hk < a->rs_rows ? in->hk : a->rs_rows, c.rs_gpar = 0, c.rs_dbuf = 0, c.rs_ict = 0, c.rs_n = 0;
        enpu_err e2 = {0};
        enpu_rs_validate(a, &c, &e2);
        return enpu_fail(err, ENPU_E_NOFIT, "layer '%s': no mapping fits arch '%s' (the smallest: %s)",
                         what, a->name, e2.msg);
    }
    if (!S.best) {
        free(S.pl.v);
        return enpu_fail(err, ENPU_E_NOMEM, "layer '%s': out of memory timing its mappings", what);
    }
    *in = S.best->in;
    info->cycles = S.best->t;
    info->alt_cycles = S.alt ? S.alt->t : -1;
    if (S.alt) info->alt = S.alt->in;
    free(S.pl.v);
    return 0;
}
