/* Tiling search (note 004's "find the tiling that minimises cycles under the
 * buffer limits"), per chain.
 *
 * The knobs of a chain's head: the output tile x by y, the output-channel
 * words per block zs (z = zs*pes channels; fewer than Co means output-channel
 * blocks), and the kernel row band (band_h).  The limits (docs/isa.md
 * "Tiling"): zs*x*y <= psum_depth, x'*y' <= ifmap_pad_depth, zs <=
 * weight_pad_depth.  The legal candidate the event model (cost.c) gives the
 * fewest cycles wins -- it also decides double buffering (x'*y' <= Dif/2);
 * ties go to z = Co (the note's preference), then to the whole kernel, then
 * to the bigger tile, then to the earlier candidate.
 *
 * Only tile widths that are the smallest for their number of tile columns,
 * x = ceil(wo/k), are tried (likewise y): any other x gives the same number
 * of tiles with a bigger input tile, which never helps.
 *
 * The search is a branch and bound (docs/compiler.md "The tiling search"):
 * candidates in the order of a cheap lower bound, a finer bound before the
 * walk, the walk stopped once it cannot beat the second best.  It chooses
 * what walking every candidate chooses (ENPU_SEARCH_EXHAUSTIVE, the
 * yardstick), and its answers go into the compile cache. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Distinct ceil(n/k), k = 1..n, that are <= cap, descending. */
static int sizes(int64_t n, int64_t cap, int64_t *out, int max) {
    int m = 0;
    int64_t prev = -1;
    for (int64_t k = 1; k <= n && m < max; k++) {
        int64_t v = cdiv(n, k);
        if (v == prev) continue;
        prev = v;
        if (v <= cap) out[m++] = v;
    }
    return m;
}

typedef struct cand {
    int64_t x, y, zs, band;
} cand;

/* Writes candidate k into the chain's tile fields (members take the head's
 * tile, docs/isa.md "Fused chains"). */
static void apply(enpu_instr *chain, int n, const cand *k) {
    enpu_instr *h = &chain[0];
    int64_t band = k->band ? k->band : h->hk;
    /* rows and lane_split are the caller's (cc_tile's mapping search) */
    if (h->rows < 1) h->rows = 1;
    h->tile_x = k->x, h->tile_y = k->y, h->zs = k->zs;
    h->band_h = (k->band && k->band < h->hk) ? k->band : 0;
    if (h->opcode == ENPU_OPC_FC) {
        h->tile_xi = h->tile_yi = 1;
    } else {
        h->tile_xi = h->stride_w * (k->x - 1) + h->dil_w * (h->wk - 1) + 1;
        h->tile_yi = h->stride_h * (k->y - 1) + h->dil_h * (band - 1) + 1;
    }
    for (int i = 1; i < n; i++) {
        enpu_instr *m = &chain[i];
        m->tile_x = h->tile_x, m->tile_y = h->tile_y, m->zs = h->zs, m->rows = h->rows;
        m->tile_xi = m->tile_x, m->tile_yi = m->tile_y; /* 1x1 members */
        m->band_h = 0;
    }
}

static bool legal(const enpu_arch *a, const enpu_instr *h, const cand *k) {
    int64_t band = k->band ? k->band : h->hk;
    if (k->zs < 1 || k->zs > a->weight_pad_depth) return false;
    /* psum entries: zs words for each position a virtual row (PE row x
     * lane group, docs/microarch.md §16) computes */
    int64_t vrows = (h->rows > 0 ? h->rows : 1) << h->lane_split;
    if (k->zs * cdiv(k->x * k->y, vrows) > a->psum_depth) return false;
    if (h->opcode == ENPU_OPC_FC) return k->x == 1 && k->y == 1;
    /* held or continued sums (ISA 8): the psum file holds one tile of one
     * output-channel block, so the output is that one tile */
    if ((h->ps_hold || h->ps_cont) &&
        (k->x < h->wo || k->y < h->ho || k->zs * (a->pes >> h->lane_split) < h->co))
        return false;
    int64_t xi = h->stride_w * (k->x - 1) + h->dil_w * (h->wk - 1) + 1;
    int64_t yi = h->stride_h * (k->y - 1) + h->dil_h * (band - 1) + 1;
    return xi * yi <= a->ifmap_pad_depth;
}

/* Full output-channel words of the head (z = Co). */
static int64_t zs_full(const enpu_arch *a, const enpu_instr *h) {
    enpu_opclass k = enpu_opcode_class(h->opcode);
    if (k != ENPU_CLASS_CONV) return 1;
    int64_t g = h->groups > 0 ? h->groups : 1;
    int64_t z = cdiv(h->co / g, a->pes >> h->lane_split);
    return z < a->weight_pad_depth ? z : a->weight_pad_depth;
}

static bool has_window(const enpu_instr *h) {
    int64_t op = h->opcode;
    return op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU || op == ENPU_OPC_DWCONV ||
           op == ENPU_OPC_MAXPOOL || op == ENPU_OPC_AVGPOOL;
}

/* Is candidate k preferred over b at equal cost? */
static bool better_tie(const cand *k, const cand *b, int64_t zfull) {
    if ((k->zs == zfull) != (b->zs == zfull)) return k->zs == zfull;
    if ((k->band == 0) != (b->band == 0)) return k->band == 0;
    if (k->x * k->y != b->x * b->y) return k->x * k->y > b->x * b->y;
    return k->x > b->x;
}

/* A legal candidate: its place in the exhaustive loop order (which breaks
 * the ties better_tie leaves), and its lower bound. */
typedef struct scand {
    cand k;
    int idx;
    int64_t lb;
} scand;

/* The order of the choice: fewer cycles, then better_tie, then the earlier
 * candidate.  A total order, so the fast search and the exhaustive one,
 * which meet the candidates in different orders, choose the same. */
static bool before(const scand *p, int64_t pc, const scand *q, int64_t qc, int64_t zfull) {
    if (pc != qc) return pc < qc;
    if (better_tie(&p->k, &q->k, zfull)) return true;
    if (better_tie(&q->k, &p->k, zfull)) return false;
    return p->idx < q->idx;
}

/* The best two candidates met so far, in the order of before(). */
typedef struct top2 {
    scand c[2];
    int64_t cost[2];
    int n;
} top2;

static void top2_add(top2 *t, const scand *k, int64_t cost, int64_t zfull) {
    if (t->n < 2 || before(k, cost, &t->c[1], t->cost[1], zfull)) {
        int at = t->n < 2 ? t->n : 1;
        t->c[at] = *k, t->cost[at] = cost;
        if (t->n < 2) t->n++;
        if (t->n == 2 && before(&t->c[1], t->cost[1], &t->c[0], t->cost[0], zfull)) {
            scand c = t->c[0];
            int64_t x = t->cost[0];
            t->c[0] = t->c[1], t->cost[0] = t->cost[1];
            t->c[1] = c, t->cost[1] = x;
        }
    }
}

/* Can a candidate whose cycles are at least lb still enter the best two? */
static bool may_enter(const top2 *t, const scand *k, int64_t lb, int64_t zfull) {
    return t->n < 2 || before(k, lb, &t->c[1], t->cost[1], zfull);
}

static int cmp_lb(const void *x, const void *y) {
    const scand *p = x, *q = y;
    if (p->lb != q->lb) return p->lb < q->lb ? -1 : 1;
    return p->idx - q->idx;
}

/* The value the cache keeps of a tiling: the tile fields of every chain
 * instruction and the search's figures. */
enum { TF_N = 7 };
typedef struct tval {
    cc_tile_info info;
    int64_t f[16][TF_N];
} tval;

static void tval_take(tval *v, const enpu_instr *chain, int n) {
    for (int i = 0; i < n; i++) {
        const enpu_instr *m = &chain[i];
        int64_t f[TF_N] = {m->tile_x, m->tile_y, m->tile_xi, m->tile_yi, m->zs, m->band_h, m->rows};
        memcpy(v->f[i], f, sizeof f);
    }
}

static void tval_give(const tval *v, enpu_instr *chain, int n) {
    for (int i = 0; i < n; i++) {
        enpu_instr *m = &chain[i];
        const int64_t *f = v->f[i];
        m->tile_x = f[0], m->tile_y = f[1], m->tile_xi = f[2], m->tile_yi = f[3];
        m->zs = f[4], m->band_h = f[5], m->rows = f[6];
    }
}

int cc_tile_search(enpu_compile_cache *cache, const enpu_arch *a, enpu_instr *chain, int n, bool naive,
                   enpu_search mode, const char *what, cc_tile_info *info, enpu_err *err) {
    enpu_instr *h = &chain[0];
    int64_t key[CC_CHAIN_KEY_WORDS + 1];
    size_t klen = 0;
    bool cached = cache && mode == ENPU_SEARCH_FAST && n <= 16;
    tval v;
    if (cached) {
        klen = cc_chain_key(a, chain, n, CC_KEY_TILE, true, key);
        key[klen / sizeof *key] = naive;
        klen += sizeof *key;
        if (cc_cache_get(cache, key, klen, &v, sizeof v) == sizeof v) {
            tval_give(&v, chain, n);
            if (info) *info = v.info;
            return 0;
        }
    }
    int64_t zfull = zs_full(a, h);
    bool reshape = h->opcode == ENPU_OPC_RESHAPE;
    int64_t W = reshape ? h->wi : h->wo, H = reshape ? h->hi : h->ho;
    if (h->opcode == ENPU_OPC_FC) W = H = 1;
    int64_t xs[256], ys[256];
    int nx = sizes(W, a->psum_depth, xs, 256), ny = sizes(H, a->psum_depth, ys, 256);
    int64_t hk = has_window(h) ? h->hk : 1;
    cc_tile_info in = {-1, -1, {0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0};
    top2 t = {0};
    if (naive) {
        /* x = y = 1, z = Co (capped by the weight pad), the whole kernel or
         * the most kernel rows that fit */
        for (int64_t b = hk; b >= 1; b--) {
            scand k = {{1, 1, zfull, b == hk ? 0 : b}, 0, 0};
            if (legal(a, h, &k.k)) {
                apply(chain, n, &k.k);
                top2_add(&t, &k, cc_cost_chain_limit(a, chain, n, 0, NULL), zfull);
                in.candidates = in.costed = 1;
                break;
            }
        }
    } else {
        /* every legal candidate: zs from z = Co down (fewer output channels
         * per block allow bigger tiles), bands from the whole kernel down */
        size_t cap = (size_t)zfull * (size_t)hk * (size_t)ny * (size_t)nx;
        scand *cs = malloc((cap ? cap : 1) * sizeof *cs);
        if (!cs) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        int m = 0;
        for (int64_t zs = zfull; zs >= 1; zs--)
            for (int64_t b = hk; b >= 1; b--)
                for (int iy = 0; iy < ny; iy++)
                    for (int ix = 0; ix < nx; ix++) {
                        scand k = {{xs[ix], ys[iy], zs, b == hk ? 0 : b}, m, 0};
                        if (legal(a, h, &k.k)) cs[m++] = k;
                    }
        in.candidates = m;
        if (mode == ENPU_SEARCH_EXHAUSTIVE) {
            /* every candidate costed in full, in loop order: no bound, no
             * limit, no cache -- what the fast search must equal */
            for (int i = 0; i < m; i++) {
                apply(chain, n, &cs[i].k);
                int64_t cost = cc_cost_chain_limit(a, chain, n, 0, NULL);
                in.costed++;
                if (cost >= 0) top2_add(&t, &cs[i], cost, zfull);
            }
        } else {
            /* branch and bound: candidates by their O(1) bound; one whose
             * bound cannot enter the best two is never walked, nor any
             * after it; the finer O(units) bound filters before the walk */
            for (int i = 0; i < m; i++) {
                apply(chain, n, &cs[i].k);
                cs[i].lb = cc_cost_bound0(a, chain, n);
            }
            qsort(cs, (size_t)m, sizeof *cs, cmp_lb);
            for (int i = 0; i < m; i++) {
                if (!may_enter(&t, &cs[i], cs[i].lb, zfull)) {
                    if (t.n == 2 && cs[i].lb > t.cost[1]) break;
                    continue;
                }
                apply(chain, n, &cs[i].k);
                int64_t lim = t.n == 2 ? t.cost[1] : 0;
                int64_t lb1 = cc_cost_bound(a, chain, n, lim);
                if (!may_enter(&t, &cs[i], lb1, zfull)) continue;
                int64_t cost = cc_cost_chain_limit(a, chain, n, lim, NULL);
                in.costed++;
                if (cost >= 0) top2_add(&t, &cs[i], cost, zfull);
            }
        }
        free(cs);
    }
    if (t.n == 0) {
        int64_t xi = h->dil_w * (h->wk - 1) + 1;
        return enpu_fail(err, ENPU_E_NOFIT,
                         "layer '%s': even a 1x1 output tile with one kernel row needs an input "
                         "tile of %" PRId64 " ifmap pad entries (kernel width %" PRId64
                         ", dilation %" PRId64 "); arch '%s' has ifmap_pad_depth %" PRId64
                         "; use ifmap_pad_depth >= %" PRId64,
                         what, xi, h->wk, h->dil_w, a->name, a->ifmap_pad_depth, xi);
    }
    in.cost = t.cost[0], in.best[0] = t.c[0].k.x, in.best[1] = t.c[0].k.y, in.best[2] = t.c[0].k.zs;
    in.best[3] = t.c[0].k.band;
    if (t.n == 2) {
        in.alt_cost = t.cost[1];
        in.alt[0] = t.c[1].k.x, in.alt[1] = t.c[1].k.y, in.alt[2] = t.c[1].k.zs, in.alt[3] = t.c[1].k.band;
    }
    apply(chain, n, &t.c[0].k);
    if (info) *info = in;
    if (cached) {
        memset(&v, 0, sizeof v);
        v.info = in;
        tval_take(&v, chain, n);
        cc_cache_put(cache, key, klen, &v, sizeof v);
    }
    return 0;
}

int enpu_tile_chain(const enpu_arch *a, enpu_instr *chain, int n, bool naive, const char *what,
                    enpu_err *err) {
    return cc_tile_search(NULL, a, chain, n, naive, ENPU_SEARCH_FAST, what, NULL, err);
}

/* The enhance-channel transform (note 004): a conv with a small Ci*Hk*Wk
 * (up to 4 bus words; note 004 says one) can fold its kernel taps into input channels -- a 1x1 conv on an im2col
 * map of Ci*Hk*Wk channels.  On this machine it changes no compute cycle (a
 * pass per valid input channel and tap either way) and only shrinks the
 * input tiles (x' = x), so it pays only when the direct mapping cannot hide
 * its ifmap loads; but the im2col map must be written by a copy that reads
 * the input and writes the enhanced map over the one DTCM bus.  The layer's
 * note says what the comparison gave.  (The ISA has no im2col copy, so the
 * transform is reported, never emitted: with kernel row bands every kernel
 * whose one row fits the ifmap pad has a direct mapping.) */
static void note_add(cc_layer *l, const char *buf);

static void enhance_note(cc *c, cc_layer *l, int64_t direct, const enpu_instr *chain, int n) {
    const enpu_arch *a = c->a;
    const enpu_instr *h = &chain[0];
    if (h->opcode != ENPU_OPC_CONV && h->opcode != ENPU_OPC_CONV_RELU) return;
    int64_t taps = h->hk * h->wk, k = h->ci / h->groups * taps;
    char buf[400];
    if (taps == 1) return;
    if (h->groups != 1 || k > 4 * a->pes) {
        snprintf(buf, sizeof buf, "enhance-channel not considered: Ci*Hk*Wk = %" PRId64 "%s",
                 k, h->groups != 1 ? " in a group conv" : " is more than 4 bus words");
    } else {
        enpu_instr e[16];
        memcpy(e, chain, (size_t)n * sizeof *e);
        e[0].hi = h->ho, e[0].wi = h->wo, e[0].ci = k;
        e[0].hk = e[0].wk = e[0].stride_h = e[0].stride_w = e[0].dil_h = e[0].dil_w = 1;
        e[0].pad_top = e[0].pad_bottom = e[0].pad_left = e[0].pad_right = 0;
        enpu_err err = {0};
        int64_t enh = -1;
        cc_tile_info ti;
        if (cc_tile_search(c->cache, a, e, n, false, c->o.search, l->name, &ti, &err) == 0) enh = ti.cost;
        /* the im2col copy: every input word read, every enhanced word written,
         * on the one bus */
        int64_t copy = h->hi * h->wi * cdiv(h->ci, a->pes) + h->ho * h->wo * cdiv(k, a->pes) + a->dtcm_read_latency +
                       a->pe_pipeline_depth + a->requant_latency + a->decode_cycles;
        if (enh >= 0 && enh + copy < direct)
            snprintf(buf, sizeof buf, "enhance-channel would save %" PRId64 " cycles (Ci*Hk*Wk = %" PRId64
                     ": %" PRId64 " + an im2col copy of %" PRId64 " vs %" PRId64 " direct) but the ISA has no "
                     "im2col copy: not applied", direct - enh - copy, k, enh, copy, direct);
        else
            snprintf(buf, sizeof buf, "enhance-channel not applied: Ci*Hk*Wk = %" PRId64 " is small, but "
                     "the enhanced conv (%" PRId64 " cycles) plus its im2col copy (%" PRId64 ") is not "
                     "cheaper than the direct mapping (%" PRId64 ")", k, enh, copy, direct);
    }
    note_add(l, buf);
}

/* Appends text to a layer's report note. */
static void note_add(cc_layer *l, const char *buf) {
    size_t ol = l->note ? strlen(l->note) : 0, nl = strlen(buf);
    char *nn = malloc(ol + nl + 3);
    if (!nn) return;
    snprintf(nn, ol + nl + 3, "%s%s%s", ol ? l->note : "", ol ? "; " : "", buf);
    free(l->note);
    l->note = nn;
}

/* May the chain use several PE rows / lane groups?  Rows: every chain the
 * cost model covers with rows > 1 (no add/mul, whose op2 words come one per
 * row, and no reshape).  Lane groups: a plain dense conv (docs/microarch.md
 * §16). */
static bool rows_ok(const enpu_instr *chain, int n) {
    for (int i = 0; i < n; i++) {
        int64_t op = chain[i].opcode;
        if (op == ENPU_OPC_ADD || op == ENPU_OPC_MUL || op == ENPU_OPC_RESHAPE) return false;
    }
    return true;
}

static bool lanes_ok(const enpu_instr *chain, int n) {
    const enpu_instr *h = &chain[0];
    return n == 1 && (h->opcode == ENPU_OPC_CONV || h->opcode == ENPU_OPC_CONV_RELU) && h->groups == 1 &&
           !h->fuse_next;
}

/* Weights of a lane-grouped conv: words of L = pes/g channels, each
 * replicated in the g lane groups (so the weight pad feeds every group the
 * same weight without a crossbar); from the [row][co folded in pes] layout
 * lower.c built. */
static int relayout_weights(cc *c, cc_layer *l, int64_t lsplit) {
    const int64_t P = c->P, L = P >> lsplit, lg = (int64_t)1 << lsplit, co = l->ins.co;
    const int64_t wpr = cdiv(co, P), nwpr = cdiv(co, L), nrows = l->w_bytes / (wpr * P);
    int8_t *w = calloc((size_t)(nrows * nwpr * P), 1);
    if (!w) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t o = 0; o < co; o++)
            for (int64_t gr = 0; gr < lg; gr++)
                w[(r * nwpr + o / L) * P + gr * L + o % L] = l->w[(r * wpr + o / P) * P + o % P];
    free(l->w);
    l->w = w;
    l->w_bytes = nrows * nwpr * P;
    return 0;
}

/* "4x1 zs 2" (and " band 2" for a kernel row band) of a tiling. */
static void tiling_name(const int64_t *k, char *buf, size_t n) {
    snprintf(buf, n, "%" PRId64 "x%" PRId64 " zs %" PRId64 "%s", k[0], k[1], k[2], k[3] ? " band" : "");
    if (k[3]) snprintf(buf + strlen(buf), n - strlen(buf), " %" PRId64, k[3]);
}

/* The tiling note: what the search chose, of how many, and what the best
 * other tiling would have cost (what the choice beat). */
static void tiling_note(cc_layer *hl, const cc_tile_info *ti) {
    char buf[300], b[64], o[64];
    tiling_name(ti->best, b, sizeof b);
    if (ti->alt_cost < 0) {
        snprintf(buf, sizeof buf, "tiling: %s (%" PRId64 " cycles), the only legal one", b, ti->cost);
    } else {
        tiling_name(ti->alt, o, sizeof o);
        snprintf(buf, sizeof buf,
                 "tiling: %s (%" PRId64 " cycles) of %" PRId64 " candidates, %" PRId64
                 " costed; the next best %s: %" PRId64, b, ti->cost, ti->candidates, ti->costed, o,
                 ti->alt_cost);
    }
    note_add(hl, buf);
}

/* The mapping of a chain: PE rows used and lane groups, each tiled and
 * costed; the cheapest wins (ties: fewer lane groups, then fewer rows: less
 * weight memory and fewer active ports).  The layer's note says what was
 * chosen and what one row of one lane group would have cost. */
static int map_chain(cc *c, cc_layer *hl, enpu_instr *chain, int n, int64_t *cycles) {
    const enpu_arch *a = c->a;
    int64_t rows_c[2] = {1, a->pe_rows};
    int nrc = a->pe_rows > 1 && rows_ok(chain, n) && !c->o.naive_tiling ? 2 : 1;
    int64_t max_split = 0;
    if (lanes_ok(chain, n) && !c->o.naive_tiling && !c->no_lanes)
        while (((int64_t)2 << max_split) <= a->lane_groups_max && a->pes % ((int64_t)2 << max_split) == 0)
            max_split++;
    enpu_instr best[16];
    int64_t best_cost = -1, base_cost = -1;
    cc_tile_info best_ti = {0};
    for (int ri = 0; ri < nrc; ri++)
        for (int64_t ls = 0; ls <= max_split; ls++) {
            enpu_instr t[16];
            memcpy(t, chain, (size_t)n * sizeof *t);
            t[0].rows = rows_c[ri];
            t[0].lane_split = ls;
            enpu_err e2 = {0};
            enpu_err *ep = (ri == 0 && ls == 0) ? c->err : &e2;
            cc_tile_info ti;
            int rc = cc_tile_search(c->cache, a, t, n, c->o.naive_tiling, c->o.search, hl->name, &ti, ep);
            if (rc) {
                if (ri == 0 && ls == 0) return rc;
                if (rc == ENPU_E_NOMEM) return enpu_fail(c->err, rc, "%s", e2.msg);
                continue;
            }
            int64_t cost = ti.cost;
            if (ri == 0 && ls == 0) base_cost = cost;
            if (cost >= 0 && (best_cost < 0 || cost < best_cost)) {
                best_cost = cost;
                best_ti = ti;
                memcpy(best, t, (size_t)n * sizeof *t);
            }
        }
    memcpy(chain, best, (size_t)n * sizeof *chain);
    *cycles = best_cost;
    if (best[0].lane_split || best[0].rows > 1) {
        char buf[300];
        int64_t lg = (int64_t)1 << best[0].lane_split;
        snprintf(buf, sizeof buf,
                 "mapping: %" PRId64 " PE row(s) x %" PRId64 " lane group(s) of %" PRId64
                 " PEs (%" PRId64 " output positions per cycle): %" PRId64
                 " cycles against %" PRId64 " on one row with one group",
                 best[0].rows, lg, a->pes / lg, best[0].rows * lg, best_cost, base_cost);
        note_add(hl, buf);
    }
    if (!c->o.naive_tiling) tiling_note(hl, &best_ti);
    if (best[0].lane_split) return relayout_weights(c, hl, best[0].lane_split);
    return 0;
}

/* Per chain of the program order, the tiling. */
int cc_tile(cc *c) {
    const enpu_arch *a = c->a;
    if (a->weight_mem_latency >= a->weight_pad_depth)
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                         "arch '%s': weight_mem_latency %" PRId64 " >= weight_pad_depth %" PRId64
                         ": the weight pad cannot hide the weight memory's latency, which the "
                         "cost model (docs/microarch.md 11.6) does not cover",
                         a->name, a->weight_mem_latency, a->weight_pad_depth);
    enpu_instr chain[16];
    for (int k = 0; k < c->norder; k++) {
        int h = c->order[k];
        cc_layer *hl = &c->L[h];
        if (hl->head != h || hl->opcode == CC_HOST) continue;
        int n = 0;
        for (int m = h; m >= 0 && n < 16; m = c->L[m].next) chain[n++] = c->L[m].ins;
        int64_t cycles = -1;
        int rc = map_chain(c, hl, chain, n, &cycles);
        if (rc) return rc;
        if (!c->o.no_enhance) enhance_note(c, hl, cycles, chain, n);
        n = 0;
        for (int m = h; m >= 0 && n < 16; m = c->L[m].next) c->L[m].ins = chain[n++];
    }
    return 0;
}
