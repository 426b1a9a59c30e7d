/* Fast-forward of the cycle engine (docs/microarch.md §15): while the state
 * proves that the PE array issues in every cycle of a stretch, the stretch
 * is simulated in one go instead of cycle by cycle, with the same result in
 * every observable: memories, pads, psums, write queues, statistics of
 * every row (activities, traffic, psum peak), trace records and control
 * signals.  cycle.c calls sim_ff_span at the start of a cycle of the
 * executing chain; what it cannot prove it leaves to the per-cycle steps.
 *
 * A span is a sequence of windows, one per load unit (or its part): in a
 * window the PE array computes its passes (32-bit partial sums, a pass at a
 * time over whole words), then the weight reader, the loader and the
 * writers, which depend on the PE array but not it on them inside the
 * window, are advanced over the same cycles:
 *
 *   weight reader  its pushes in closed form from the PE array's pops
 *                  (every q cycles) and the pad's free entries; the pad's
 *                  entries are rebuilt when the span ends
 *   writers        each queued word is written in the cycle max(ready,
 *                  previous write + 1, push + 1): writes win their port
 *   loader         word by word, its DTCM reads denied in the cycles of a
 *                  main write, interleaved with the writes in cycle order
 *
 * The proof obligations (§15) are checked at the start of each span and
 * window: the chain's head reads the pads without an op2 operand and with
 * one PE row, each output word is one full write, the partial sums fit 32
 * bits; parameters are in, the PE array has started and waits for nothing;
 * the op2 reader is idle; the weight pad holds its words in time
 * (count >= Lw and word i usable by t + i, Lw < Dw); each final cycle has
 * room in its write queue; the next unit is valid when the PE array reaches
 * it.  A span stops before a fused stage's pass, at the end of the chain's
 * passes, at `end` (a VCD window, max_cycles) or where an obligation
 * fails; in the cycles where the top controller or the DMA side may act it
 * has cycle.c run them first, as the per-cycle loop does. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/easynpu/core.h"

#define EMPTY32 INT32_MIN /* a max pool's empty accumulator (SIM_MAX_EMPTY) */
/* A shorter stretch (the top controller or a DMA acts again sooner) is
 * left to the per-cycle steps: setting a span up and down costs more. */
#define FF_MIN_SPAN 32

enum { LB_BUS = 0, LB_WBUS, LB_SKIP };
static const int lbl_track[3] = {TRK_BUS, TRK_WBUS, TRK_SKIP};

int sim_ff_init(core *k, int64_t max_taps, enpu_err *err) {
    ffstate *f = &k->ff;
    const enpu_arch *a = k->a;
    if (max_taps < 1) max_taps = 1;
    f->max_taps = max_taps;
    const size_t npos = (size_t)(a->psum_depth * a->lane_groups_max); /* tile positions, at most */
    f->ps = calloc((size_t)(a->psum_depth * k->P), sizeof(int32_t));
    f->hw = calloc(npos, sizeof(int64_t));
    f->hwb = calloc(npos, sizeof(int64_t));
    f->toff = calloc((size_t)max_taps, sizeof(int64_t));
    f->wtap = calloc((size_t)max_taps, sizeof(int64_t));
    f->max_pairs = (k->P * max_taps + 1) / 2 + 1;
    f->x2 = calloc(npos * (size_t)(f->max_pairs * 2), sizeof(int16_t));
    if (!f->ps || !f->hw || !f->hwb || !f->toff || !f->wtap || !f->x2)
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    return 0;
}

void sim_ff_free(core *k) {
    ffstate *f = &k->ff;
    free(f->ps);
    free(f->hw);
    free(f->hwb);
    free(f->toff);
    free(f->wtap);
    free(f->x2);
    free(f->w2);
    free(f->w2_at);
    free(f->rec);
    memset(f, 0, sizeof *f);
}

/* The chain-wide obligations: its head is a window op that reads the pads
 * (conv, fc, dwconv, avgpool, maxpool), one PE row, full-word writes (no
 * masked group-conv or remapped words), the weight pad deep enough for the
 * memory latency, and no partial sum outside 32 bits or acc_bits: each is a
 * sum of a bias and at most `terms` products of two int8 values (|x*w| <=
 * 2^14), or a max pool's operand (x - zp_in). */
void sim_ff_chain(core *k) {
    const sim_chain *c = k->ch;
    ffstate *f = &k->ff;
    const sim_stage *s0 = &c->st[0];
    f->chain_ok = false;
    /* one PE row (its lane groups, §16, are virtual rows of it) */
    if (!f->on || c->rows != c->lg || c->remap || (!c->aligned && c->lg == 1) || k->P > 256) return;
    if (s0->kind != K_CONV && s0->kind != K_DW && s0->kind != K_MAX) return;
    if (c->hk * c->wk > f->max_taps) return;
    if (s0->kind != K_MAX && k->Lw >= k->wpad.depth) return;
    int64_t terms = c->fc ? c->hi * c->wi * c->ci : s0->kind == K_CONV ? c->cpg * c->taps : c->taps;
    int64_t bmax = 0;
    for (int64_t i = 0; i < c->n_words * k->P; i++) {
        int64_t b = llabs((long long)k->pe.bias[i]);
        if (b > bmax) bmax = b;
    }
    if (c->ps_cont) {
        /* the sums start from the held ones (row 0: one PE row here) */
        bmax = 0;
        for (int64_t i = 0; i < (int64_t)k->pe.depth * k->P; i++) {
            int64_t v = k->pe.psum[i];
            if (v == SIM_MAX_EMPTY || v > ((int64_t)1 << 40) || v < -((int64_t)1 << 40)) return;
            if (llabs((long long)v) > bmax) bmax = llabs((long long)v);
        }
    }
    int64_t bound = s0->kind == K_MAX ? 128 + llabs((long long)s0->zp_in)
                                      : bmax + (terms > ((int64_t)1 << 40) ? ((int64_t)1 << 40) : terms) *
                                                   16384;
    /* and inside acc_bits: no requantization in a span can fail (the run
     * would have to stop in the middle of the span's bookkeeping) */
    if (bound >= INT32_MAX || bound >= ((int64_t)1 << (k->a->acc_bits - 1))) return;
    /* the repacked weights of the chain, built as units first need them */
    f->w2_n = 0;
    f->w2_keys = c->fc ? 0 : c->nblk * c->wpp_in * c->nb;
    if (f->w2_keys > f->w2_keys_cap) {
        int64_t *at = realloc(f->w2_at, (size_t)f->w2_keys * sizeof *at);
        if (!at) return;
        f->w2_at = at;
        f->w2_keys_cap = f->w2_keys;
    }
    for (int64_t i = 0; i < f->w2_keys; i++) f->w2_at[i] = -1;
    f->geo_ok = false;
    f->chain_ok = true;
}

/* ---- geometry of a unit's pad-reading passes --------------------------------- */

/* Pass p = ci * ntaps + t of a unit (ci: the channel of the word, broadcast;
 * t: the tap of the band) reads pad lane lane0 + ci at entries bank + hw[j] +
 * toff[t] and weight word wb0 + ci * cstride + wtap[t] (+ ozi, broadcast);
 * sim_pass_info without a division. */
typedef struct ffu {
    int64_t q, zse, len, n_conv, ntaps;
    int64_t lg, L, npos;         /* lane groups (§16), lanes per group, tile positions */
    int64_t lane0, wb0, cstride, bank;
    int64_t wdx0;                /* lane-table word of ozi = 0 */
    bool first, last;            /* tile_first, tile_last */
} ffu;

static void ffu_make(core *k, const unit_cur *u, ffu *g) {
    const sim_chain *c = k->ch;
    ffstate *f = &k->ff;
    const int64_t P = k->P;
    g->q = u->q;
    g->zse = u->zse;
    g->lg = c->lg;
    g->L = c->L;
    g->npos = u->npos;
    g->len = u->zse * u->q;
    g->n_conv = sim_unit_passes(c, u);
    g->ntaps = u->nkh * c->wk;
    g->bank = (int64_t)sim_ifpad_bank_of(&k->pad, u->u) * k->pad.bank_size;
    g->first = u->tile_first;
    g->last = u->tile_last;
    g->wdx0 = c->bcast ? u->blk * c->zstride : u->kz;
    if (c->fc) {
        int64_t pix = u->kz / c->wpp_in;
        g->lane0 = 0;
        g->cstride = c->wpg;
        g->wb0 = c->weight_addr + (pix * c->ci + u->c_lo) * c->wpg + u->k * c->zs;
    } else if (c->bcast) {
        g->lane0 = u->c_lo - u->kz * P;
        g->cstride = c->taps * c->wpg;
        g->wb0 = c->weight_addr + u->g * c->cpg * c->taps * c->wpg +
                 (u->c_lo - u->g * c->cpg) * c->taps * c->wpg + u->k * c->zs;
    } else {
        g->lane0 = 0;
        g->cstride = 0;
        g->wb0 = c->weight_addr + u->kz;
    }
    /* the tap and position tables depend on the tile's shape and the band */
    if (f->geo_ok && f->geo[0] == u->x && f->geo[1] == u->xi && f->geo[2] == u->npos &&
        f->geo[3] == u->kh0 && f->geo[4] == u->nkh)
        return;
    f->geo_ok = true;
    f->geo[0] = u->x, f->geo[1] = u->xi, f->geo[2] = u->npos, f->geo[3] = u->kh0, f->geo[4] = u->nkh;
    int64_t t = 0;
    for (int64_t kh = 0; kh < u->nkh; kh++)
        for (int64_t kw = 0; kw < c->wk; kw++, t++) {
            int64_t tap = (u->kh0 + kh) * c->wk + kw;
            f->toff[t] = kh * c->dh * u->xi + kw * c->dw;
            f->wtap[t] = c->fc ? 0 : c->bcast ? tap * c->wpg : tap * c->wpp_in;
        }
    int64_t x = 0, y = 0;
    for (int64_t j = 0; j < u->npos; j++) {
        f->hw[j] = y * c->sh * u->xi + x * c->sw;
        f->hwb[j] = f->hw[j] * P;
        if (++x == u->x) x = 0, y++;
    }
}

/* ---- the PE array ---------------------------------------------------------------- */

/* One step of a pass for every lane, on 32-bit partial sums: broadcast
 * (conv, fc: one operand x for all lanes), multicast (dwconv, avgpool) and
 * max pool.  The pass at a window's edges goes through these; whole passes
 * through the pair kernels below. */
static inline void mac_bc(int32_t *restrict ps, int32_t x, const int8_t *restrict w,
                          const int32_t *restrict bias, bool first, int P) {
    if (first)
        for (int i = 0; i < P; i++) ps[i] = bias[i] + x * w[i];
    else
        for (int i = 0; i < P; i++) ps[i] += x * w[i];
}

static inline void mac_dw(int32_t *restrict ps, const int8_t *restrict x, const int8_t *restrict w,
                          const int32_t *restrict bias, bool first, int P) {
    if (first)
        for (int i = 0; i < P; i++) ps[i] = bias[i] + x[i] * w[i];
    else
        for (int i = 0; i < P; i++) ps[i] += x[i] * w[i];
}

static inline void max_step(int32_t *restrict ps, const int8_t *restrict x, bool mark, int32_t zp,
                            bool first, int P) {
    if (mark) {
        if (first)
            for (int i = 0; i < P; i++) ps[i] = EMPTY32;
        return;
    }
    for (int i = 0; i < P; i++) {
        int32_t v = x[i] - zp;
        if (first || ps[i] == EMPTY32 || v > ps[i]) ps[i] = v;
    }
}

/* The registers of pass p of unit g (sim_pass_info, enter_pass). */
typedef struct passreg {
    int64_t lane, off, wb;
    bool first;
} passreg;

static void pass_regs(const core *k, const ffu *g, int64_t p, passreg *r) {
    const ffstate *f = &k->ff;
    const int64_t ci = p / g->ntaps, t = p - ci * g->ntaps;
    r->lane = g->lane0 + ci;
    r->off = g->bank + f->toff[t];
    r->wb = g->wb0 + ci * g->cstride + f->wtap[t];
    r->first = g->first && p == 0;
}

/* Cycles (ozi m, positions [j0, j1)) of a pass with registers r. */
static void pass_mac(core *k, const ffu *g, const passreg *r, int64_t m, int64_t j0, int64_t j1) {
    const sim_stage *s = &k->ch->st[0];
    const ffstate *f = &k->ff;
    const int P = k->P;
    const int8_t *pad = k->pad.data;
    const int8_t *wm = (const int8_t *)k->mem->wmem;
    const int64_t *hwb = f->hwb;
    const int32_t *bias = k->pe.bias + (g->wdx0 + m) * P;
    int32_t *pe = f->ps + m * g->q * P;
    if (s->kind == K_CONV && g->lg > 1) {
        /* lane group gr computes position gr*q + j from its own pad port;
         * a group past the tile's positions computes nothing that is ever
         * written (its lanes are overwritten by the next tile's first pass) */
        const int8_t *w = wm + (r->wb + m) * P, *x = pad + r->off * P + r->lane;
        const int L = (int)g->L;
        for (int64_t j = j0; j < j1; j++)
            for (int64_t gr = 0; gr < g->lg; gr++) {
                int64_t p = gr * g->q + j;
                int32_t xv = p < g->npos ? x[hwb[p]] : 0;
                mac_bc(pe + j * P + gr * L, xv, w + gr * L, bias + gr * L, r->first, L);
            }
    } else if (s->kind == K_CONV) {
        const int8_t *w = wm + (r->wb + m) * P, *x = pad + r->off * P + r->lane;
        for (int64_t j = j0; j < j1; j++) mac_bc(pe + j * P, x[hwb[j]], w, bias, r->first, P);
    } else if (s->kind == K_DW) {
        const int8_t *w = wm + r->wb * P, *x = pad + r->off * P;
        for (int64_t j = j0; j < j1; j++) mac_dw(pe + j * P, x + hwb[j], w, bias, r->first, P);
    } else {
        for (int64_t j = j0; j < j1; j++) {
            int64_t e = r->off + f->hw[j];
            max_step(pe + j * P, pad + e * P, k->pad.mark[e] != 0, s->zp_in, r->first, P);
        }
    }
}

/* Cycles [r0, r1) of pass p of unit g. */
static void pass_range(core *k, const ffu *g, int64_t p, int64_t r0, int64_t r1) {
    passreg pr;
    pass_regs(k, g, p, &pr);
    const int64_t q = g->q;
    for (int64_t m = r0 / q; m * q < r1; m++)
        pass_mac(k, g, &pr, m, m * q < r0 ? r0 - m * q : 0, (m + 1) * q > r1 ? r1 - m * q : q);
}

static const int8_t zero_word[256];

#if defined(__SSE2__)
/* Lanes 0..15 of two int8 words as int16 pairs (a[l], b[l]), 4 lanes per
 * register: the operands of pmaddwd. */
static inline void pairs16(__m128i x[4], const int8_t *a, const int8_t *b) {
    __m128i va = _mm_loadu_si128((const __m128i *)a), vb = _mm_loadu_si128((const __m128i *)b);
    __m128i il = _mm_unpacklo_epi8(va, vb), ih = _mm_unpackhi_epi8(va, vb);
    x[0] = _mm_srai_epi16(_mm_unpacklo_epi8(il, il), 8);
    x[1] = _mm_srai_epi16(_mm_unpackhi_epi8(il, il), 8);
    x[2] = _mm_srai_epi16(_mm_unpacklo_epi8(ih, ih), 8);
    x[3] = _mm_srai_epi16(_mm_unpackhi_epi8(ih, ih), 8);
}
#endif

/* The unit's weights repacked for whole passes (the "dense layout": built
 * once per chain for each weight set -- block, input word, band -- that
 * the chain's units share, or per unit for fc whose units share none):
 * [pass pair][ozi][lane][2] int16, the weights of passes 2i and 2i + 1 of
 * lane l side by side (0 past the last pass).  NULL when out of memory (the
 * caller then goes pass by pass). */
static const int16_t *unit_w2(core *k, const unit_cur *u, const ffu *g) {
    ffstate *f = &k->ff;
    const sim_chain *c = k->ch;
    const int P = k->P;
    const int64_t key = c->fc ? -1 : (u->blk * c->wpp_in + u->kz) * c->nb + u->band;
    if (key >= 0 && f->w2_at[key] >= 0) return f->w2 + f->w2_at[key];
    const int64_t npairs = (g->n_conv + 1) / 2, zse = g->zse;
    const size_t need = (size_t)(npairs * zse * P * 2);
    if (f->w2_n + need > f->w2_cap) {
        size_t cap = f->w2_cap ? f->w2_cap : 4096;
        while (cap < f->w2_n + need) cap *= 2;
        int16_t *w = realloc(f->w2, cap * sizeof *w);
        if (!w) return NULL;
        f->w2 = w;
        f->w2_cap = cap;
    }
    int16_t *d = f->w2 + f->w2_n;
    const int8_t *wm = (const int8_t *)k->mem->wmem;
    int64_t ci = 0, t = 0;
    for (int64_t pp = 0; pp < npairs; pp++) {
        int64_t wb[2] = {-1, -1};
        for (int h = 0; h < 2 && 2 * pp + h < g->n_conv; h++) {
            wb[h] = g->wb0 + ci * g->cstride + f->wtap[t];
            if (++t == g->ntaps) t = 0, ci++;
        }
        for (int64_t m = 0; m < zse; m++, d += 2 * P) {
            const int8_t *w0 = wb[0] >= 0 ? wm + (wb[0] + m) * P : zero_word;
            const int8_t *w1 = wb[1] >= 0 ? wm + (wb[1] + m) * P : zero_word;
#if defined(__SSE2__)
            if (P == 16 && !f->portable) {
                __m128i x[4];
                pairs16(x, w0, w1);
                for (int i = 0; i < 4; i++) _mm_storeu_si128((__m128i *)(d + 8 * i), x[i]);
                continue;
            }
#endif
            for (int l = 0; l < P; l++) d[2 * l] = w0[l], d[2 * l + 1] = w1[l];
        }
    }
    if (key < 0) return f->w2 + f->w2_n; /* scratch: not kept */
    f->w2_at[key] = (int64_t)f->w2_n;
    f->w2_n += need;
    return f->w2 + f->w2_at[key];
}

#if defined(__SSE2__)
/* acc[0..3] (16 lanes) += lane-wise x0*w0 + x1*w1 over interleaved int16
 * pairs: pmaddwd. */
static inline void madd16(__m128i acc[4], __m128i x0, __m128i x1, __m128i x2, __m128i x3,
                          const int16_t *w) {
    acc[0] = _mm_add_epi32(acc[0], _mm_madd_epi16(x0, _mm_loadu_si128((const __m128i *)w)));
    acc[1] = _mm_add_epi32(acc[1], _mm_madd_epi16(x1, _mm_loadu_si128((const __m128i *)(w + 8))));
    acc[2] = _mm_add_epi32(acc[2], _mm_madd_epi16(x2, _mm_loadu_si128((const __m128i *)(w + 16))));
    acc[3] = _mm_add_epi32(acc[3], _mm_madd_epi16(x3, _mm_loadu_si128((const __m128i *)(w + 24))));
}
#endif

/* Whole passes [pf, pl) of a broadcast unit: every psum entry e = (ozi, j)
 * adds, pair by pair of passes, x(2i, j)*w(2i, ozi) + x(2i+1, j)*w(2i+1,
 * ozi) on each lane (the operands of passes outside [pf, pl) are 0). */
static void bulk_bc(core *k, const ffu *g, const int16_t *w2, int64_t pf, int64_t pl) {
    ffstate *f = &k->ff;
    const int P = k->P;
    const int64_t q = g->q, pp0 = pf / 2, np = (pl + 1) / 2 - pp0, wstep = g->zse * P * 2;
    const int64_t lg = g->lg, L = g->L;
    /* operands [j][lane group][pass pair][2]: group gr of entry j is tile
     * position gr*q + j (0 past the tile's positions) */
    int16_t *x2 = f->x2;
    memset(x2, 0, (size_t)(q * lg * np * 2) * sizeof *x2);
    const int8_t *pad = k->pad.data;
    int64_t ci = pf / g->ntaps, t = pf - ci * g->ntaps;
    for (int64_t p = pf; p < pl; p++) {
        const int8_t *xp = pad + (g->bank + f->toff[t]) * P + g->lane0 + ci;
        int16_t *xc = x2 + (p / 2 - pp0) * 2 + (p & 1);
        const int64_t *hwb = f->hwb;
        if (lg == 1)
            for (int64_t j = 0; j < q; j++, xc += np * 2) *xc = xp[hwb[j]];
        else
            for (int64_t j = 0; j < q; j++)
                for (int64_t gr = 0; gr < lg; gr++, xc += np * 2)
                    if (gr * q + j < g->npos) *xc = xp[hwb[gr * q + j]];
        if (++t == g->ntaps) t = 0, ci++;
    }
    const bool init = g->first && pf == 0;
    for (int64_t m = 0; m < g->zse; m++) {
        const int32_t *bias = k->pe.bias + (g->wdx0 + m) * P;
        const int16_t *wm = w2 + (pp0 * g->zse + m) * P * 2;
        for (int64_t j = 0; j < q; j++) {
            int32_t *e = f->ps + (m * q + j) * P;
            const int16_t *xj = x2 + j * lg * np * 2;
#if defined(__SSE2__)
            if (P == 16 && !f->portable && L >= 4) {
                const int32_t *from = init ? bias : e;
                __m128i acc[4];
                for (int i = 0; i < 4; i++) acc[i] = _mm_loadu_si128((const __m128i *)(from + 4 * i));
                if (lg == 1) {
                    for (int64_t pp = 0; pp < np; pp++) {
                        int32_t v;
                        memcpy(&v, xj + 2 * pp, sizeof v);
                        __m128i xv = _mm_set1_epi32(v);
                        madd16(acc, xv, xv, xv, xv, wm + pp * wstep);
                    }
                } else {
                    /* register r holds lanes 4r..4r+3: lane group 4r / L */
                    const int16_t *xg[4];
                    for (int r = 0; r < 4; r++) xg[r] = xj + (4 * r / L) * np * 2;
                    for (int64_t pp = 0; pp < np; pp++) {
                        __m128i xv[4];
                        for (int r = 0; r < 4; r++) {
                            int32_t v;
                            memcpy(&v, xg[r] + 2 * pp, sizeof v);
                            xv[r] = _mm_set1_epi32(v);
                        }
                        madd16(acc, xv[0], xv[1], xv[2], xv[3], wm + pp * wstep);
                    }
                }
                for (int i = 0; i < 4; i++) _mm_storeu_si128((__m128i *)(e + 4 * i), acc[i]);
                continue;
            }
#endif
            for (int l = 0; l < P; l++) {
                int32_t acc = init ? bias[l] : e[l];
                const int16_t *xl = xj + (l / L) * np * 2;
                for (int64_t pp = 0; pp < np; pp++) {
                    const int16_t *w = wm + pp * wstep + 2 * l;
                    acc += xl[2 * pp] * w[0] + xl[2 * pp + 1] * w[1];
                }
                e[l] = acc;
            }
        }
    }
}

/* Whole passes [pf, pl) of a multicast unit (dwconv, avgpool): lane l of
 * entry j adds x_l(2i, j)*w_l(2i) + x_l(2i+1, j)*w_l(2i+1). */
static void bulk_dw(core *k, const ffu *g, const int16_t *w2, int64_t pf, int64_t pl) {
    ffstate *f = &k->ff;
    const int P = k->P;
    const int8_t *pad = k->pad.data;
    const bool init = g->first && pf == 0;
    const int32_t *bias = k->pe.bias + g->wdx0 * P;
    for (int64_t j = 0; j < g->q; j++) {
        int32_t *e = f->ps + j * P;
        const int64_t base = g->bank + f->hw[j];
#if defined(__SSE2__)
        if (P == 16 && !f->portable) {
            const int32_t *from = init ? bias : e;
            __m128i acc[4];
            for (int i = 0; i < 4; i++) acc[i] = _mm_loadu_si128((const __m128i *)(from + 4 * i));
            for (int64_t pp = pf / 2; 2 * pp < pl; pp++) {
                const int8_t *ra = 2 * pp >= pf ? pad + (base + f->toff[2 * pp]) * 16 : zero_word;
                const int8_t *rb = 2 * pp + 1 < pl ? pad + (base + f->toff[2 * pp + 1]) * 16 : zero_word;
                __m128i x[4];
                pairs16(x, ra, rb);
                madd16(acc, x[0], x[1], x[2], x[3], w2 + pp * 32);
            }
            for (int i = 0; i < 4; i++) _mm_storeu_si128((__m128i *)(e + 4 * i), acc[i]);
            continue;
        }
#endif
        for (int l = 0; l < P; l++) {
            int32_t acc = init ? bias[l] : e[l];
            for (int64_t pp = pf / 2; 2 * pp < pl; pp++) {
                int32_t xa = 2 * pp >= pf ? pad[(base + f->toff[2 * pp]) * P + l] : 0;
                int32_t xb = 2 * pp + 1 < pl ? pad[(base + f->toff[2 * pp + 1]) * P + l] : 0;
                acc += xa * w2[pp * 2 * P + 2 * l] + xb * w2[pp * 2 * P + 2 * l + 1];
            }
            e[l] = acc;
        }
    }
}

/* Unit cycles [i0, i1) (i = pass * len + cycle of the pass) of unit u (g):
 * the passes cut by the window's edges cycle by cycle, the whole ones at
 * once. */
static void unit_cycles(core *k, const unit_cur *u, const ffu *g, int64_t i0, int64_t i1) {
    const sim_kind kind = k->ch->st[0].kind;
    int64_t p0 = i0 / g->len, r0 = i0 - p0 * g->len, p1 = i1 / g->len, r1 = i1 - p1 * g->len;
    if (p0 == p1) {
        pass_range(k, g, p0, r0, r1);
        return;
    }
    int64_t pf = p0;
    if (r0) pass_range(k, g, pf++, r0, g->len);
    const int16_t *w2 = pf < p1 && kind != K_MAX ? unit_w2(k, u, g) : NULL;
    if (w2 && kind == K_CONV) bulk_bc(k, g, w2, pf, p1);
    else if (w2) bulk_dw(k, g, w2, pf, p1);
    else
        for (int64_t p = pf; p < p1; p++) pass_range(k, g, p, 0, g->len);
    if (r1) pass_range(k, g, p1, 0, r1);
}

/* Words in queue q not yet written when its writer has run in cycle x. */
static int wq_after(const core *k, int q, uint64_t x) {
    const wqueue *w = &k->wq[q];
    int n = 0;
    int i = w->head + w->count - 1; /* the tail, walked back; < 2 * ring */
    if (i >= w->ring) i -= w->ring;
    while (n < w->count && w->e[i].wt > x) {
        n++;
        if (--i < 0) i += w->ring;
    }
    return n;
}

static bool wq_room_at(const core *k, int q, int n, uint64_t x) {
    if (n == 0) return true;
    int cnt = wq_after(k, q, x);
    return n > k->wq[q].cap ? cnt == 0 : cnt + n <= k->wq[q].cap;
}

/* A final cycle: its psum entry, output position (of lane group 0; group
 * gr, §16, is at tile position gr*q + j) and write runs (every active
 * group's, their lanes src counted in the whole PE row's word). */
typedef struct fcyc {
    int64_t e, m, j, wdx, oy, ox;
    int64_t ng;                  /* active lane groups */
    int nr[2];
    sim_run *runs[2];
} fcyc;

/* The final pass's cycle r (of the pass): what it writes where. */
static void final_prep(core *k, const ffu *g, int64_t r, bool wmain, bool wskip, fcyc *fc) {
    const unit_cur *u = &k->pc.u;
    int64_t m = r / g->q, j = r - m * g->q;
    fc->e = r;
    fc->m = m;
    fc->j = j;
    fc->wdx = k->ch->bcast ? g->wdx0 + m : g->wdx0;
    fc->oy = u->oy0 + j / u->x;
    fc->ox = u->ox0 + j % u->x;
    fc->runs[0] = k->runs;
    fc->runs[1] = k->runs + g->lg * k->P + 1;
    fc->ng = 0;
    for (int64_t gr = 0; gr < g->lg && gr * g->q + j < g->npos; gr++) fc->ng++;
    for (int q = 0; q < 2; q++) {
        fc->nr[q] = 0;
        if (!(q ? wskip : wmain)) continue;
        for (int64_t gr = 0; gr < fc->ng; gr++) {
            int64_t p = gr * g->q + j;
            sim_run *rr = fc->runs[q] + fc->nr[q];
            int n = sim_pe_runs(k, q, 0, u->oy0 + p / u->x, u->ox0 + p % u->x, fc->wdx, rr);
            for (int i = 0; i < n; i++) rr[i].src += (int)(gr * g->L);
            fc->nr[q] += n;
        }
    }
}

/* The final cycle fc issued in cycle x (its MAC done): requantize, feed
 * back, queue the writes, each with the cycle its writer will write it
 * (§11.8: ready, or the cycle after the previous write or the push). */
static int final_cycle(core *k, const fcyc *fc, uint64_t x, enpu_err *err) {
    const sim_chain *c = k->ch;
    const sim_stage *s = &c->st[0];
    const int P = k->P;
    int64_t acc[256];
    int8_t out[512]; /* a lane group's zero fill may run past the row's word */
    const int32_t *ps = k->ff.ps + fc->e * P;
    if (s->kind == K_MAX)
        for (int i = 0; i < P; i++) acc[i] = ps[i] == EMPTY32 ? SIM_MAX_EMPTY : ps[i];
    else
        for (int i = 0; i < P; i++) acc[i] = ps[i];
    uint64_t ready = x + (uint64_t)(k->D + k->Rq);
    if (c->lg == 1) {
        int rc = sim_pe_output(k, s, c->chan + fc->wdx * P, k->pe.nval[fc->wdx], acc, fc->oy, fc->ox, out, err);
        if (rc) return rc;
        if (P == 16) memcpy(k->pe.sval + fc->e * 16, out, 16);
        else memcpy(k->pe.sval + fc->e * P, out, (size_t)P);
    } else {
        const int64_t L = c->L, q = k->pc.u.q;
        for (int64_t gr = 0; gr < fc->ng; gr++) {
            int64_t p = gr * q + fc->j;
            int rc = sim_pe_output(k, s, c->chan + fc->wdx * P + gr * L, k->pe.nval[fc->wdx], acc + gr * L,
                                   k->pc.u.oy0 + p / k->pc.u.x, k->pc.u.ox0 + p % k->pc.u.x, out + gr * L,
                                   err);
            if (rc) return rc;
            memcpy(k->pe.sval + fc->e * P + gr * L, out + gr * L, (size_t)L);
        }
    }
    for (int q = 0; q < 2; q++) {
        wqueue *w = &k->wq[q];
        for (int i = 0; i < fc->nr[q]; i++) {
            sim_wq_push(k, q, &fc->runs[q][i], out, ready);
            uint64_t wt = ready > x + 1 ? ready : x + 1;
            if (wt <= k->ff.last_wt[q]) wt = k->ff.last_wt[q] + 1;
            int tail = w->head + w->count - 1;
            w->e[tail >= w->ring ? tail - w->ring : tail].wt = wt;
            k->ff.last_wt[q] = wt;
        }
    }
    k->pe.ready[fc->e] = ready;
    return 0;
}

/* Lane groups active over unit cycles [i0, i1): n cycles of one group
 * each without lane groups; with them, cycle (m, j) of a pass has the groups
 * gr with gr*q + j < npos. */
static uint64_t active_sum(const ffu *g, int64_t i0, int64_t i1) {
    if (g->lg == 1) return (uint64_t)(i1 - i0);
    uint64_t s = 0;
    int64_t i = i0;
    for (; i < i1 && i % g->len; i++) {
        int64_t j = (i % g->len) % g->q, a = (g->npos - j + g->q - 1) / g->q;
        s += (uint64_t)(a < g->lg ? a : g->lg);
    }
    /* a whole pass: each psum word covers the tile's positions once */
    int64_t whole = (i1 - i) / g->len;
    s += (uint64_t)(whole * g->zse * g->npos);
    for (i += whole * g->len; i < i1; i++) {
        int64_t j = (i % g->len) % g->q, a = (g->npos - j + g->q - 1) / g->q;
        s += (uint64_t)(a < g->lg ? a : g->lg);
    }
    return s;
}

/* The PE array from cycle a (unit cycle i0 of the current unit) while the
 * cycle is before `end`: *b gets the cycle after its last issue in the
 * unit (it stops before a final cycle without room). */
static int pe_window(core *k, const ffu *g, uint64_t a, uint64_t end, int64_t i0, uint64_t *b,
                     enpu_err *err) {
    const sim_chain *c = k->ch;
    const sim_stage *s = &c->st[0];
    const int64_t iend = g->n_conv * g->len;
    const int64_t nf = g->last ? (g->n_conv - 1) * g->len : iend;
    int64_t i1 = iend - i0 < (int64_t)(end - a) ? iend : i0 + (int64_t)(end - a);
    int64_t m1 = i1 < nf ? i1 : nf;
    if (i0 < m1) unit_cycles(k, &k->pc.u, g, i0, m1);
    if (i1 > nf) {
        bool last_st = c->n_st == 1;
        bool wmain = last_st, wskip = s->w_skip || (last_st && c->rs_w_skip);
        passreg pr;
        pass_regs(k, g, g->n_conv - 1, &pr);
        int64_t f0 = i0 > nf ? i0 : nf;
        /* room for every word of these cycles even if none is written
         * meanwhile: no cycle can wait (at most one word per queue and
         * cycle, full-word writes), so the pass is computed at once */
        bool room = (!wmain || k->wq[0].count + (i1 - f0) * g->lg <= k->wq[0].cap) &&
                    (!wskip || k->wq[1].count + (i1 - f0) * g->lg <= k->wq[1].cap);
        if (room) {
            pass_range(k, g, g->n_conv - 1, f0 - nf, i1 - nf);
            for (int64_t i = f0; i < i1; i++) {
                fcyc fc;
                final_prep(k, g, i - nf, wmain, wskip, &fc);
                int rc = final_cycle(k, &fc, a + (uint64_t)(i - i0), err);
                if (rc) return rc;
            }
            f0 = i1;
        }
        for (int64_t i = f0; i < i1; i++) {
            uint64_t x = a + (uint64_t)(i - i0);
            fcyc fc;
            final_prep(k, g, i - nf, wmain, wskip, &fc);
            if (!wq_room_at(k, 0, fc.nr[0], x) || !wq_room_at(k, 1, fc.nr[1], x)) {
                i1 = i;
                break;
            }
            pass_mac(k, g, &pr, fc.m, fc.j, fc.j + 1);
            int rc = final_cycle(k, &fc, x, err);
            if (rc) return rc;
        }
    }
    /* counters of the issued cycles (sim_pe_issue, sim_pectl_step) */
    uint64_t n = (uint64_t)(i1 - i0), P = (uint64_t)k->P;
    if (n) {
        enpu_layer_stats *st = &k->sim->rows[k->cur_row];
        uint64_t first = 0;
        if (g->first && i0 < g->len) first = (uint64_t)((i1 < g->len ? i1 : g->len) - i0);
        /* per active lane group: a pad read and L psum lanes (sim_pe_issue) */
        uint64_t na = active_sum(g, i0, i1), nfa = first ? active_sum(g, i0, i0 + (int64_t)first) : 0;
        uint64_t L = (uint64_t)g->L;
        st->reads[ENPU_MEM_IFMAP_PAD] += s->kind == K_CONV ? na : n * P;
        st->writes[ENPU_MEM_PSUM] += na * L;
        st->reads[ENPU_MEM_PSUM] += (na - nfa) * L;
        if (s->kind != K_MAX) st->reads[ENPU_MEM_WEIGHT_PAD] += n * P;
        st->uops[s->kind == K_MAX ? ENPU_UOP_ALU : ENPU_UOP_MAC] += na * L;
        if (i1 > nf) st->uops[ENPU_UOP_REQUANT] += active_sum(g, i0 > nf ? i0 : nf, i1) * L;
        sim_core_count(k, k->cur_row, ENPU_ACT_COMPUTE, n, a);
    }
    *b = a + n;
    return 0;
}

/* ---- the weight reader -------------------------------------------------------------- */

/* Advances the weight stream by up to n words (sim_sched_weights' cursor,
 * but for ws_pi, which the span sets when it ends); returns how many there
 * were. */
static int64_t ws_take(core *k, int64_t n) {
    const sim_chain *c = k->ch;
    int64_t taken = 0;
    while (n > 0 && !k->ws_done) {
        int64_t wpp = c->bcast ? k->ws.zse : 1;
        int64_t left = (k->ws_np - k->ws_p) * wpp - k->ws_o;
        if (n < left) {
            int64_t o = k->ws_o + n;
            k->ws_p += o / wpp;
            k->ws_o = o % wpp;
            return taken + n;
        }
        n -= left;
        taken += left;
        k->ws_p = k->ws_o = 0;
        sim_unit_next(c, &k->ws);
        if (k->ws.done) {
            k->ws_done = true;
            break;
        }
        k->ws_np = sim_unit_passes(c, &k->ws);
    }
    return taken;
}

/* The label of a bus track in cycle x; the cycles between two labelled
 * cycles are idle. */
static void lbl_at(core *k, int which, int label, uint64_t x) {
    ffstate *f = &k->ff;
    if (!k->trace) return;
    if (x > f->bus_last[which] + 1 && f->bus_lbl[which] != BUS_IDLE) {
        sim_core_track_at(k, lbl_track[which], BUS_IDLE, f->bus_last[which] + 1);
        f->bus_lbl[which] = BUS_IDLE;
    }
    sim_core_track_at(k, lbl_track[which], label, x);
    f->bus_lbl[which] = label;
    f->bus_last[which] = x;
}

/* The last labelled cycle of a track was before b - 1: idle from the next. */
static void lbl_close(core *k, int which, uint64_t b) {
    ffstate *f = &k->ff;
    if (!k->trace || f->bus_last[which] + 1 >= b) return;
    lbl_at(k, which, BUS_IDLE, f->bus_last[which] + 1);
}

/* The weight reader in [a, b) while the PE array pops a word at each unit
 * cycle i = m*q - 1 (from unit cycle i0 at a).  With d = the pad's free
 * entries at the start of a cycle it pushes when d > 0 (§11.6), and d
 * evolves as d - [d > 0] + pop: while d >= 2 it pushes every cycle (and d
 * falls by one in each cycle without a pop; with a pop every cycle, q = 1,
 * it stays); from d <= 1 on it pushes in cycle y + 1 exactly when the PE
 * array popped in cycle y. */
static void weights_window(core *k, const ffu *g, uint64_t a, uint64_t b, int64_t i0) {
    if (!k->ws_on) return;
    wfifo *f = &k->wpad;
    const int64_t q = g->q, n = (int64_t)(b - a), depth = f->depth;
    const int64_t pops = (i0 + n) / q - i0 / q;
    int64_t d = depth - f->count, d1 = 0, m0 = 0, n_sched;
    uint64_t x = a; /* pushes in every cycle of [a, x), then from d <= 1 on */
    if (d >= 2 && q == 1) {
        x = b;
    } else {
        for (int64_t i = i0; x < b && d >= 2; x++, i++) d += (i + 1) % q == 0 ? 0 : -1;
    }
    int64_t n1 = (int64_t)(x - a);
    n_sched = n1;
    if (x < b) {
        /* pops in [x, b - 1): unit cycles m*q - 1 in [ix, ib) */
        int64_t ix = i0 + n1, ib = i0 + n - 1;
        d1 = d == 1;
        m0 = ix / q + 1;
        n_sched += d1 + ib / q - ix / q;
    }
    int64_t taken = ws_take(k, n_sched);
    /* pad slots take pushes in order from head + count: the last `depth`
     * pushes of the window give the ready cycles of the slots they fill */
    int64_t lo = taken > depth && !k->trace ? taken - depth : 0;
    int64_t slot = (f->head + f->count + lo) % depth;
    for (int64_t idx = lo; idx < taken; idx++) {
        uint64_t cyc;
        if (idx < n1) cyc = a + (uint64_t)idx;
        else if (idx == n1 && d1) cyc = x;
        else cyc = a + (uint64_t)((m0 + (idx - n1 - d1)) * q - i0);
        f->ready[slot] = cyc + (uint64_t)k->Lw;
        if (++slot == depth) slot = 0;
        lbl_at(k, LB_WBUS, BUS_WEIGHT, cyc);
    }
    lbl_close(k, LB_WBUS, b);
    f->count += (int)(taken - pops);
    f->head = (int)((f->head + pops) % depth);
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    st->reads[ENPU_MEM_WEIGHT_MEM] += (uint64_t)taken;
    st->writes[ENPU_MEM_WEIGHT_PAD] += (uint64_t)(taken * k->P);
}

/* ---- writers and loader -------------------------------------------------------------- */

/* Writes the head of queue q (in its cycle wt). */
static void write_head(core *k, int q) {
    wqueue *w = &k->wq[q];
    wq_entry *e = &w->e[w->head];
    const int8_t *d = w->data + (size_t)w->head * (size_t)k->P;
    memcpy(sim_mem_ptr(k->mem, w->mem, e->addr) + e->dst, d + e->dst, (size_t)e->len);
    uint64_t *wc = q ? k->mem->skip_wc : k->mem->main_wc;
    if (wc) wc[e->addr] = e->wt;
    k->sim->rows[k->cur_row].writes[q ? ENPU_MEM_SKIP_DTCM : ENPU_MEM_MAIN_DTCM]++;
    lbl_at(k, q ? LB_SKIP : LB_BUS, BUS_WRITE, e->wt);
    w->head = (w->head + 1) % w->ring;
    w->count--;
}

/* Writes queue q's words due by cycle x; whether one was written in x. */
static bool write_upto(core *k, int q, uint64_t x) {
    wqueue *w = &k->wq[q];
    bool at = false;
    while (w->count > 0 && w->e[w->head].wt <= x) {
        at = w->e[w->head].wt == x;
        write_head(k, q);
    }
    return at;
}

/* The loader (sim_sched_loader) in [a, b), with the main writes of those
 * cycles done in cycle order (a write wins the bus). */
static void loader_window(core *k, uint64_t a, uint64_t b) {
    const sim_chain *c = k->ch;
    unit_cur *u = &k->ld;
    ifpad *pad = &k->pad;
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    const int P = k->P;
    uint64_t x = a;
    while (x < b && !u->done) {
        int bi = sim_ifpad_bank_of(pad, u->u);
        pad_bank *bk = &pad->bank[bi];
        if (!k->ld_busy) {
            uint64_t s = x;
            if (u->u != 0) {
                if (k->ld_prev_issued + 1 > s) s = k->ld_prev_issued + 1;
                if (bk->unit >= 0) {
                    if (bk->done_at == NEVER) break;
                    if (bk->done_at + 1 > s) s = bk->done_at + 1;
                }
            }
            if (s >= b) break;
            x = s;
            bk->unit = u->u;
            bk->loaded = false;
            bk->valid_at = NEVER;
            bk->done_at = NEVER;
            bk->denied = 0;
            bk->start = x;
            k->ld_busy = true;
            k->ld_j = 0;
            ENPU_ASSERT(u->xi * u->yi <= pad->bank_size);
        }
        const int64_t nw = u->xi * u->yi;
        int64_t j = k->ld_j, ry = j / u->xi, rx = j - ry * u->xi;
        while (j < nw && x < b) {
            int64_t iy = u->iy0 + ry, ix = u->ix0 + rx;
            int64_t entry = (int64_t)bi * pad->bank_size + j;
            int8_t *dst = pad->data + entry * P;
            if (c->fc || (iy >= 0 && iy < c->hi && ix >= 0 && ix < c->wi)) {
                if (write_upto(k, 0, x)) {
                    bk->denied++;
                    x++;
                    continue;
                }
                int64_t addr = c->fc ? c->ifmap_addr + u->kz
                                     : c->ifmap_addr + (iy * c->wi + ix) * c->istride + c->iword + u->kz;
                memcpy(dst, sim_mem_ptr(k->mem, ENPU_MEM_MAIN, addr), (size_t)P);
                pad->mark[entry] = 0;
                st->reads[ENPU_MEM_MAIN_DTCM]++;
                lbl_at(k, LB_BUS, BUS_LOAD, x);
            } else {
                memset(dst, (int8_t)c->pad_value, (size_t)P);
                pad->mark[entry] = 1;
            }
            st->writes[ENPU_MEM_IFMAP_PAD] += (uint64_t)P;
            j++, x++;
            if (++rx == u->xi) rx = 0, ry++;
        }
        k->ld_j = j;
        if (j < nw) break;
        bk->loaded = true;
        bk->valid_at = x - 1 + (uint64_t)k->Ld;
        k->ld_prev_issued = x - 1;
        k->ld_busy = false;
        sim_core_emit(k, TRK_LOAD, -1, u->u, bk->start, x);
        sim_unit_next(c, u);
    }
    if (b > a) write_upto(k, 0, b - 1);
    lbl_close(k, LB_BUS, b);
    if (b > a) write_upto(k, 1, b - 1);
    lbl_close(k, LB_SKIP, b);
}

/* ---- a span ------------------------------------------------------------------------- */

static int rec_cmp(const void *x, const void *y) {
    const ff_rec *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The weight pad's words after a span: the next `count` words of the
 * stream from the word the PE array consumes next (its ready cycles were
 * set as the span pushed them). */
static void wpad_refill(core *k) {
    const sim_chain *c = k->ch;
    wfifo *f = &k->wpad;
    const pectl *pc = &k->pc;
    if (!k->ws_on || f->count == 0) return;
    unit_cur u = pc->u;
    int64_t p = pc->pass, m = 0, np = sim_unit_passes(c, &u);
    if (p < np) {
        if (c->bcast) m = pc->k / u.q;
    } else {
        sim_unit_next(c, &u);
        p = 0;
        np = u.done ? 0 : sim_unit_passes(c, &u);
    }
    for (int idx = 0; idx < f->count && !u.done;) {
        pass_info pi;
        sim_pass_info(c, &u, p, &pi);
        int64_t words = c->bcast ? u.zse : 1;
        for (; m < words && idx < f->count; m++, idx++)
            memcpy(f->data + (size_t)((f->head + idx) % f->depth) * (size_t)f->P,
                   sim_mem_ptr(k->mem, ENPU_MEM_WEIGHT, pi.wbase + m), (size_t)f->P);
        m = 0;
        if (++p == np) {
            sim_unit_next(c, &u);
            p = 0;
            np = u.done ? 0 : sim_unit_passes(c, &u);
        }
    }
}

/* The control signals of unit cycle i of unit g (sim_pe_issue), whead the
 * weight pad's head in that cycle. */
static void issue_signals(core *k, const ffu *g, int64_t i, int whead) {
    const sim_chain *c = k->ch;
    const sim_stage *s = &c->st[0];
    int64_t p = i / g->len, r = i - p * g->len, m = r / g->q, j = r - m * g->q;
    int64_t ci = p / g->ntaps, t = p - ci * g->ntaps;
    sim_signals *sg = &k->sig;
    bool first = g->first && p == 0;
    sg->pe_valid = 1;
    sg->ps_addr = m * g->q + j;
    sg->stage = 0;
    sg->if_hw_addr = g->bank + k->ff.hw[j] + k->ff.toff[t];
    sg->if_ch_addr = c->bcast ? g->lane0 + ci : 0;
    sg->w_och_gcnt = whead;
    sg->ps_outer_en = first && (s->kind == K_CONV || s->kind == K_DW);
    sg->ps_back_en = 0;
    sg->maxpool_en = s->kind == K_MAX;
    sg->byp_mul_en = s->kind == K_MAX;
}

static bool unit_valid_at(const core *k, const unit_cur *u, uint64_t t) {
    const pad_bank *b = &k->pad.bank[sim_ifpad_bank_of(&k->pad, u->u)];
    return b->unit == u->u && b->loaded && b->valid_at <= t;
}

/* Whether the span may start in cycle t (the obligations of the state). */
static bool may_start(const core *k, uint64_t t) {
    const pectl *pc = &k->pc;
    if (!k->ff.chain_ok || k->pe_done || !k->started || k->wait_kind != WAIT_NONE || pc->stage != 0 ||
        k->par_left > 0)
        return false;
    if (!unit_valid_at(k, &pc->u, t)) return false;
    if (!k->os_done && k->op2.count < k->op2.depth) return false;
    if (k->ws_on) {
        const wfifo *f = &k->wpad;
        if (!k->ws_done && f->count < k->Lw) return false;
        for (int i = 0; i < f->count; i++)
            if (f->ready[sim_wfifo_slot(f, i)] > t + (uint64_t)i) return false;
    }
    return true;
}

/* Records the span's held-back trace records, in the per-cycle order. */
static void flush_recs(core *k) {
    ffstate *f = &k->ff;
    if (!f->n_rec) return;
    f->buffering = false;
    qsort(f->rec, f->n_rec, sizeof *f->rec, rec_cmp);
    for (size_t i = 0; i < f->n_rec; i++) {
        const ff_rec *r = &f->rec[i];
        sim_core_emit(k, r->track, r->label, r->unit, r->start, r->end);
    }
    f->n_rec = 0;
    f->buffering = k->trace;
}

int sim_ff_span(core *k, uint64_t end, uint64_t *wake, sim_ff_top top, void *ctx, uint64_t *adv,
                enpu_err *err) {
    const sim_chain *c = k->ch;
    ffstate *f = &k->ff;
    pectl *pc = &k->pc;
    const uint64_t t0 = k->t;
    const int P = k->P;
    *adv = 0;
    if (end < t0 + FF_MIN_SPAN || *wake <= t0 || !may_start(k, t0)) return 0;
    /* 32-bit partial sums (sim_ff_chain bounds them): the entries of the
     * current tile; a later tile's first pass writes each entry it uses */
    int64_t n_in = pc->u.zse * pc->u.q * P, n_out = n_in;
    for (int64_t i = 0; i < n_in; i++) {
        int64_t v = k->pe.psum[i];
        f->ps[i] = v == SIM_MAX_EMPTY ? EMPTY32 : (int32_t)v;
    }
    /* the write cycles of the words already queued */
    for (int q = 0; q < 2; q++) {
        wqueue *w = &k->wq[q];
        uint64_t prev = t0 - 1;
        for (int i = 0; i < w->count; i++) {
            wq_entry *e = &w->e[(w->head + i) % w->ring];
            e->wt = e->ready > prev + 1 ? e->ready : prev + 1;
            prev = e->wt;
        }
        f->last_wt[q] = prev;
    }
    f->buffering = k->trace;
    f->n_rec = 0;
    for (int i = 0; i < 3; i++) {
        f->bus_last[i] = t0 - 1;
        f->bus_lbl[i] = k->trk[lbl_track[i]].label;
    }
    uint64_t a = t0, b = t0;
    int rc = 0;
    for (;;) {
        /* the top controller and the DMA side act first in a cycle (§13.6);
         * they touch nothing of the executing chain's (its words are
         * race-checked), so only their trace records' order ties them to
         * the span's */
        if (a > t0 && a == *wake) {
            flush_recs(k);
            if ((rc = top(ctx, a, wake, err))) break;
        }
        if (a >= end) break;
        const unit_cur *u = &pc->u;
        ffu g;
        ffu_make(k, u, &g);
        int64_t i0 = pc->pass * g.len + pc->k;
        int head0 = k->wpad.head;
        if (g.len * P > n_out) n_out = g.len * P;
        if ((rc = pe_window(k, &g, a, end < *wake ? end : *wake, i0, &b, err)) || b == a) break;
        if (a == t0) sim_core_track_at(k, TRK_PE, ENPU_ACT_COMPUTE, t0);
        int64_t i1 = i0 + (int64_t)(b - a);
        bool unit_end = i1 == g.n_conv * g.len;
        if (unit_end) k->pad.bank[sim_ifpad_bank_of(&k->pad, u->u)].done_at = b - 1;
        weights_window(k, &g, a, b, i0);
        loader_window(k, a, b);
        /* the weight pad's head in the last cycle, before that cycle's pop */
        int64_t pops = k->ws_on ? (i1 - 1) / g.q - i0 / g.q : 0;
        issue_signals(k, &g, i1 - 1, (int)((head0 + pops) % k->wpad.depth));
        a = b;
        if (!unit_end) {
            pc->pass = i1 / g.len;
            pc->k = i1 - pc->pass * g.len;
            if (b == *wake) continue; /* else a final cycle without room, or `end` */
            break;
        }
        if (g.last && c->n_st > 1) {
            pc->pass = g.n_conv;
            pc->k = 0;
            break;
        }
        sim_unit_next(c, &pc->u);
        pc->pass = pc->k = 0;
        if (pc->u.done) {
            k->pe_done = true;
            break;
        }
        sim_pectl_peak(k, &pc->u);
        if (!unit_valid_at(k, &pc->u, b)) break;
    }
    if (b > t0) {
        if (!k->pe_done) sim_pectl_seek(k, pc->pass, pc->k);
        if (!k->ws_done) sim_pass_info(c, &k->ws, k->ws_p, &k->ws_pi);
        wpad_refill(k);
        k->started = true;
        k->last_issue = b - 1;
        k->stall_guard = b - 1;
    }
    for (int64_t i = 0; i < n_out; i++) k->pe.psum[i] = f->ps[i] == EMPTY32 ? SIM_MAX_EMPTY : f->ps[i];
    flush_recs(k);
    f->buffering = false;
    k->t = b > t0 ? b - 1 : t0;
    *adv = b - t0;
    return rc;
}
