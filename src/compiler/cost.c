/* The cost model: cycles of a chain (a head instruction and its fused
 * members) on the machine of docs/microarch.md, by the cycle rules of §11
 * (the simulator's) and §12 (fc, kernel row bands, output-channel blocks).
 *
 * It is an event model, not a formula: it walks the load units of the chain
 * in the scheduler's order and, per unit, computes exactly when each ifmap
 * word is issued (a DTCM read yields to the ofmap writes, which always win
 * the bus; a padding word takes its issue slot without the bus), when the
 * unit becomes valid, when its first pass issues (after the previous unit's
 * passes, the parameters and the first weight word), when its passes end,
 * and -- for a unit that completes an output tile -- when the fused stages
 * run and in which cycles their words are written.  Passes that neither
 * write nor read a second operand run back to back (weights are prefetched
 * in time when weight_mem_latency < weight_pad_depth, which the compiler
 * requires).  The final pass of a tile and the fused stages are walked
 * cycle by cycle, as the PE controller decides (run_pass): an op2 word
 * comes through the op2 FIFO from the skip port, which the chain's own skip
 * writes take first; a writing cycle needs room in its write queue
 * (psum_depth words, counting words in flight), and a reshape moving lanes
 * writes one masked word per run of lanes landing in one output word.  So
 * the cost per unit is O(its ifmap words + its output words).
 *
 * What it does not model (the compiler never emits it): PE rows > 1 with
 * an add/mul or a reshape in the chain, op2 in the main DTCM, the split writes of a group conv whose output channels per
 * group are not a multiple of pes (the compiler runs such a conv as a dense
 * one), and weight streams slower than the weight pad (weight_mem_latency >=
 * weight_pad_depth, an arch the compiler refuses); enpu_cost_exact says
 * which chains are inside the model. */
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

bool enpu_cost_exact(const enpu_arch *a, const enpu_instr *chain, int n) {
    if (a->engine == ENPU_ENGINE_ROWSTAT) return true; /* docs/rowstat.md "Timing" */
    if (a->weight_mem_latency >= a->weight_pad_depth) return false;
    for (int i = 0; i < n; i++) {
        const enpu_instr *in = &chain[i];
        /* several PE rows: modelled for chains without op2 words (one per
         * active row and cycle) and without a reshape's masked writes */
        if (chain[0].rows > 1 && (in->opcode == ENPU_OPC_ADD || in->opcode == ENPU_OPC_MUL ||
                                  in->opcode == ENPU_OPC_RESHAPE))
            return false;
        if ((in->opcode == ENPU_OPC_ADD || in->opcode == ENPU_OPC_MUL) && in->op2_mem == ENPU_MEM_MAIN)
            return false;
        /* a reshape keeps whole words only when channels stay innermost and
         * their count is unchanged: each input word is then one output word */
        if (in->opcode == ENPU_OPC_RESHAPE &&
            !((in->perm == ENPU_PERM_HWC || in->perm == ENPU_PERM_WHC) && in->co == in->ci))
            return false;
        if (enpu_opcode_class(in->opcode) == ENPU_CLASS_CONV && in->groups > 1 &&
            (in->co / in->groups) % a->pes != 0)
            return false;
    }
    return true;
}

/* Parameter words an instruction reads at chain start (§11.3, §12.4). */
int64_t cc_param_words(const enpu_arch *a, const enpu_instr *in) {
    int64_t wb = enpu_arch_word_bytes(a);
    switch (in->opcode) {
    case ENPU_OPC_CONV:
    case ENPU_OPC_CONV_RELU:
    case ENPU_OPC_FC:
    case ENPU_OPC_DWCONV:
    case ENPU_OPC_AVGPOOL: return cdiv(4 * in->co, wb) + cdiv(8 * in->co, wb);
    case ENPU_OPC_BN: return cdiv(4 * in->co, wb) + cdiv(8 * in->co, wb) + cdiv(in->ci, a->pes);
    case ENPU_OPC_ACT: return enpu_table_words(a);
    default: return cdiv(8 * enpu_quant_records(a, in), wb); /* add/mul, requant tflite */
    }
}

/* ---- write intervals: the cycles the main DTCM bus is taken by writes ---- */

typedef struct wlist {
    int64_t *s, *e; /* [s, e] inclusive, in increasing order */
    int n, cap, head;
} wlist;

static void wl_add(wlist *w, int64_t s, int64_t e) {
    if (e < s) return;
    if (w->n > w->head && w->e[w->n - 1] + 1 >= s) { /* contiguous: merge */
        if (e > w->e[w->n - 1]) w->e[w->n - 1] = e;
        return;
    }
    if (w->head > 0 && w->head == w->n) w->head = w->n = 0;
    if (w->n == w->cap) {
        if (w->head > 0) { /* compact */
            memmove(w->s, w->s + w->head, (size_t)(w->n - w->head) * sizeof *w->s);
            memmove(w->e, w->e + w->head, (size_t)(w->n - w->head) * sizeof *w->e);
            w->n -= w->head, w->head = 0;
        }
        if (w->n == w->cap) {
            int cap = w->cap ? 2 * w->cap : 64;
            int64_t *ns = realloc(w->s, (size_t)cap * sizeof *ns);
            ENPU_ASSERT(ns);
            w->s = ns;
            int64_t *ne = realloc(w->e, (size_t)cap * sizeof *ne);
            ENPU_ASSERT(ne);
            w->e = ne;
            w->cap = cap;
        }
    }
    w->s[w->n] = s, w->e[w->n] = e, w->n++;
}

/* First cycle >= t not taken by a write; *denied grows by the cycles skipped.
 * Calls come with non-decreasing t, so intervals before t are dropped. */
static int64_t wl_free(wlist *w, int64_t t, int64_t *denied) {
    while (w->head < w->n && w->e[w->head] < t) w->head++;
    if (w->head < w->n && w->s[w->head] <= t) {
        *denied += w->e[w->head] + 1 - t;
        t = w->e[w->head] + 1;
        w->head++;
    }
    return t;
}

/* ---- write queues, the op2 reader: the passes that write or read op2 ------ */

/* A write queue and its port (§11.7-11.8): every word pushed, in push order,
 * with the cycle it is written (writes own their port: a word is written in
 * the first cycle >= its ready cycle after the previous word's). */
typedef struct wqueue {
    int64_t *serve;
    int64_t n, cap;
    int64_t head; /* words written by the last room check */
    int64_t rd;   /* the op2 reader's position (skip port) */
    int64_t last; /* last write cycle */
} wqueue;

static void wq_push(wqueue *q, int64_t ready, int64_t k, wlist *bus) {
    for (int64_t i = 0; i < k; i++) {
        if (q->n == q->cap) {
            int64_t cap = q->cap ? 2 * q->cap : 256;
            int64_t *ns = realloc(q->serve, (size_t)cap * sizeof *ns);
            ENPU_ASSERT(ns);
            q->serve = ns, q->cap = cap;
        }
        int64_t s = max64(ready, q->last + 1);
        q->serve[q->n++] = s;
        q->last = s;
        if (bus) wl_add(bus, s, s);
    }
}

/* Room for k more words at cycle t (after the write of cycle t, counting
 * words in flight; k > cap: an empty queue), §11.12. */
static bool wq_room(wqueue *q, int64_t t, int64_t k, int64_t cap) {
    if (k == 0) return true;
    while (q->head < q->n && q->serve[q->head] <= t) q->head++;
    int64_t cnt = q->n - q->head;
    return k > cap ? cnt == 0 : cnt + k <= cap;
}

/* Is the port written in cycle t (calls with nondecreasing t)? */
static bool wq_busy(wqueue *q, int64_t t) {
    while (q->rd < q->n && q->serve[q->rd] < t) q->rd++;
    return q->rd < q->n && q->serve[q->rd] == t;
}

/* The op2 reader (§11.7): from the chain's first cycle it reads the next
 * word in consumption order whenever its FIFO (weight_pad_depth words,
 * counting reads in flight) has room and the skip port is not written;
 * a word read in cycle t is usable from t + Ld. */
typedef struct op2r {
    int64_t depth, Ld;
    int64_t tr;       /* next cycle the reader decides */
    int64_t total;    /* words of the chain: the reader stops after the last */
    int64_t issued, popped;
    int64_t *ready;   /* [depth] ring: usable cycle of word i */
    int64_t *pop_t;   /* [depth] ring: cycle word i was consumed */
    int64_t denied;   /* reads denied the port since the last consumption */
} op2r;

/* Runs the reader through cycle t (the PE's consumptions before t known). */
static void op2_advance(op2r *o, wqueue *skip, int64_t t) {
    while (o->tr <= t) {
        if (o->issued >= o->total) { /* done: it neither reads nor is denied */
            o->tr = t + 1;
            break;
        }
        int64_t m = o->issued - o->depth; /* the word that must be gone for room */
        if (m >= 0) {
            if (m >= o->popped) { /* full until the PE consumes it, in cycle >= t */
                o->tr = t + 1;
                break;
            }
            int64_t pt = o->pop_t[m % o->depth];
            if (pt >= o->tr) {
                o->tr = pt + 1;
                continue;
            }
        }
        if (wq_busy(skip, o->tr)) {
            o->denied++;
        } else {
            o->ready[o->issued % o->depth] = o->tr + o->Ld;
            o->issued++;
        }
        o->tr++;
    }
}

/* Masked writes (§11.8-9) of output position (oy, ox), channels c0..c0+n-1
 * through reshape rs: one per run of lanes landing consecutively in one
 * output word. */
static int64_t remap_runs(const enpu_instr *rs, int64_t P, int64_t oy, int64_t ox, int64_t c0,
                          int64_t n) {
    int64_t runs = 0, pw = -1, pp = -1, poc = -2;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = cc_perm_rank((int)rs->perm, oy, ox, c0 + i, rs->hi, rs->wi, rs->ci);
        int64_t oc = k % rs->co, pix = k / rs->co, wd = oc / P;
        if (!(i > 0 && pix == pp && wd == pw && oc == poc + 1)) runs++;
        pp = pix, pw = wd, poc = oc;
    }
    return runs;
}

/* What the cycle-by-cycle passes of a chain share. */
typedef struct pcyc {
    const enpu_instr *c;
    const int *stage;
    int ns;
    int64_t P, D, Rq, Dps;
    wqueue mq, sq;          /* main and skip write queues */
    wlist *wl;              /* main-bus write cycles, for the loader */
    op2r o;
    bool has_op2;
    const enpu_instr *rs;   /* the chain's reshape (head or member), or NULL */
    int64_t *act;
    int64_t *buf[2];        /* issue cycle per pass cycle (entry), this and the previous stage */
} pcyc;

/* Where the cycles of a tile-completing unit's passes land: cycle (ozi, j)
 * computes positions v*Q + j < npos of the V virtual rows (PE rows x lane
 * groups, §16), L channels each. */
typedef struct ppos {
    int64_t oy0, ox0, xt, Q, npos, V, L;
    bool bcast;
    int64_t c0_word0, n_ch; /* bcast: first channel of psum word 0 and channels of the block;
                               else the word's first channel and the channels left */
} ppos;

/* One pass of stage si (len cycles, entry k issued in cycle k's order),
 * from cycle t, cycle by cycle as the PE controller decides (§11.8, the
 * order of pe_ctrl's checks): op2 word usable, write-queue room, the
 * previous stage's entry (prev[k] + D + Rq).  Fills out[k]; returns the
 * last issue cycle. */
static int64_t run_pass(pcyc *pc, int si, int64_t t, int64_t len, const int64_t *prev,
                        int64_t *out, const ppos *pp) {
#define PACT(i, k) pc->act[(size_t)(i) * ENPU_ACT_COUNT + (k)]
    int row = pc->stage[si];
    const enpu_instr *in = &pc->c[row];
    bool op2 = in->opcode == ENPU_OPC_ADD || in->opcode == ENPU_OPC_MUL;
    bool last = si == pc->ns - 1;
    bool w_skip = in->store_skip && in->opcode != ENPU_OPC_RESHAPE;
    bool rs_skip = last && pc->rs && pc->rs->store_skip;
    int64_t wait = 0;
    for (int64_t k = 0; k < len; k++) {
        int64_t j = k % pp->Q, ozi = k / pp->Q;
        int64_t oy = pp->oy0 + j / pp->xt, ox = pp->ox0 + j % pp->xt;
        int64_t c0 = pp->bcast ? pp->c0_word0 + ozi * pp->L : pp->c0_word0;
        int64_t nch = pp->bcast ? min64(pp->L, pp->n_ch - ozi * pp->L) : min64(pc->P, pp->n_ch);
        int64_t nm = 0, nsk = 0;
        /* one word per active virtual row (a lane group's word is one run:
         * L divides P) */
        int64_t nact = min64(pp->V, cdiv(pp->npos - j, pp->Q));
        if (nch > 0) {
            if (last) nm = pc->rs ? remap_runs(pc->rs, pc->P, oy, ox, c0, nch) : nact;
            if (w_skip) nsk += nact;
            if (rs_skip) nsk += remap_runs(pc->rs, pc->P, oy, ox, c0, nch);
        }
        for (;; t++) {
            if (pc->has_op2) op2_advance(&pc->o, &pc->sq, t);
            if (op2 && !(pc->o.popped < pc->o.issued &&
                         pc->o.ready[pc->o.popped % pc->o.depth] <= t)) {
                wait++;
                continue;
            }
            if (wait) { /* §11.10 rule 2: the last d cycles of the wait are bus_conflict */
                int64_t bc = min64(wait, pc->o.denied);
                PACT(row, ENPU_ACT_BUS_CONFLICT) += bc;
                PACT(row, ENPU_ACT_IFMAP_LOAD) += wait - bc;
                wait = 0;
            }
            if (!wq_room(&pc->mq, t, nm, pc->Dps) || !wq_room(&pc->sq, t, nsk, pc->Dps)) {
                PACT(row, ENPU_ACT_OFMAP_DRAIN)++;
                continue;
            }
            if (prev && prev[k] + pc->D + pc->Rq > t) {
                PACT(row, ENPU_ACT_PIPELINE_DRAIN)++;
                continue;
            }
            break;
        }
        PACT(row, ENPU_ACT_COMPUTE)++;
        out[k] = t;
        wq_push(&pc->mq, t + pc->D + pc->Rq, nm, pc->wl);
        wq_push(&pc->sq, t + pc->D + pc->Rq, nsk, NULL);
        if (op2) {
            pc->o.pop_t[pc->o.popped % pc->o.depth] = t;
            pc->o.popped++;
            pc->o.denied = 0;
        }
        t++;
    }
    return t - 1;
#undef PACT
}

/* ---- the unit walk -------------------------------------------------------- */

typedef struct geom {
    const enpu_instr *h;  /* head */
    int64_t P, Dif;
    int cls;              /* 0 BasicConv, 1 fc, 2 channel-wise window, 3 channel-wise 1x1 / copy */
    int64_t G, opg, cpg;  /* groups, outputs / inputs per group */
    int64_t z, nbk;       /* channels per block, blocks per group */
    int64_t lg, L, V;     /* lane groups, lanes per group, virtual rows (rows x lg), §16 */
    int64_t band, nband;  /* kernel rows per band, bands */
    int64_t tx, ty;       /* tile sizes (fields) */
    int64_t ntx, nty;     /* tiles */
    int64_t oh, ow;       /* tiled extent (output, or input for reshape) */
    bool weighted;
    bool dbuf;
} geom;

static void geom_make(const cc_carch *a, const enpu_instr *h, geom *g) {
    memset(g, 0, sizeof *g);
    g->h = h, g->P = a->pes, g->Dif = a->ifmap_pad_depth;
    int64_t op = h->opcode;
    if (op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU) g->cls = 0;
    else if (op == ENPU_OPC_FC) g->cls = 1;
    else if (op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL || op == ENPU_OPC_MAXPOOL) g->cls = 2;
    else g->cls = 3;
    g->G = (g->cls == 0 && h->groups > 0) ? h->groups : 1;
    g->opg = h->co / g->G, g->cpg = h->ci / g->G;
    int64_t zs = h->zs > 0 ? h->zs : 1;
    g->lg = g->cls == 0 ? (int64_t)1 << h->lane_split : 1;
    g->L = g->P / g->lg;
    g->V = (h->rows > 0 ? h->rows : 1) * g->lg;
    g->z = zs * g->L;
    if (g->cls <= 1) {
        if (g->z > g->opg) g->z = cdiv(g->opg, g->L) * g->L;
        g->nbk = cdiv(g->opg, g->z);
    } else {
        g->nbk = 1;
    }
    g->band = (g->cls == 0 || g->cls == 2) && h->band_h > 0 ? h->band_h : h->hk;
    g->nband = (g->cls == 0 || g->cls == 2) ? cdiv(h->hk, g->band) : 1;
    g->tx = h->tile_x > 0 ? h->tile_x : 1, g->ty = h->tile_y > 0 ? h->tile_y : 1;
    if (op == ENPU_OPC_RESHAPE) g->oh = h->hi, g->ow = h->wi;
    else g->oh = h->ho, g->ow = h->wo;
    if (g->cls == 1) g->oh = g->ow = 1, g->tx = g->ty = 1;
    g->ntx = cdiv(g->ow, g->tx), g->nty = cdiv(g->oh, g->ty);
    g->weighted = g->cls <= 1 || op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL;
    int64_t slots = g->cls == 1 ? 1 : h->tile_xi * h->tile_yi;
    if (g->cls == 3) slots = g->tx * g->ty;
    g->dbuf = slots <= g->Dif / 2;
}

/* Chain stages that compute (a reshape member has no pass). */
static int chain_stages(const enpu_instr *c, int n, int *idx) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || c[i].opcode != ENPU_OPC_RESHAPE) idx[k++] = i;
    return k;
}

#define MAXCHAIN 16

/* A bound in O(shapes): the chain's compute cycles and loader words summed
 * over its units (the walk's loops with the tiles folded into their at most
 * two widths and two heights).  Every issue cycle is distinct and comes
 * after the first unit is loaded and the parameters are in, so the last
 * issue is at least (that start + every compute cycle - 1); and the loader
 * issues one word per cycle, so the last unit starts at least (every word
 * + Ld - 1).  The chain ends D + Rq after its last issue. */
typedef struct totals {
    int64_t compute, words, first_words, last_comp;
} totals;

static void chain_totals(const geom *gp, const enpu_instr *c, int n, totals *tt) {
    const geom g = *gp;
    const enpu_instr *h = &c[0];
    int stage[MAXCHAIN];
    int ns = chain_stages(c, n, stage);
    /* tile widths in loop order: ntx-1 full ones, then the last */
    int64_t xs[2] = {g.tx, g.ow - (g.ntx - 1) * g.tx}, xn[2] = {g.ntx - 1, 1};
    int64_t ys[2] = {g.ty, g.oh - (g.nty - 1) * g.ty}, yn[2] = {g.nty - 1, 1};
    int64_t wpp_in = cdiv(h->ci, g.P);
    int64_t compute = 0, words = 0, first_words = -1, last_comp = 0;
    for (int64_t gi = 0; gi < g.G; gi++) {
        int64_t kz_lo, kz_hi;
        if (g.cls == 0) kz_lo = gi * g.cpg / g.P, kz_hi = ((gi + 1) * g.cpg - 1) / g.P;
        else if (g.cls == 1) kz_lo = 0, kz_hi = h->hi * h->wi * wpp_in - 1;
        else kz_lo = 0, kz_hi = wpp_in - 1;
        for (int64_t bk = 0; bk < g.nbk; bk++) {
            int64_t zk = g.cls <= 1 ? min64(g.z, g.opg - bk * g.z) : g.P;
            int64_t zse = g.cls <= 1 ? cdiv(zk, g.L) : 1;
            for (int iy = 0; iy < 2; iy++) {
                if (yn[iy] == 0) continue;
                int64_t yt = ys[iy];
                for (int ix = 0; ix < 2; ix++) {
                    if (xn[ix] == 0) continue;
                    int64_t xt = xs[ix], mult = yn[iy] * xn[ix];
                    int64_t Q = cdiv(xt * yt, g.V);
                    int64_t xi = g.cls == 3 ? xt : g.cls == 1 ? 1 : (xt - 1) * h->stride_w + (h->wk - 1) * h->dil_w + 1;
                    int64_t pl = g.cls == 1 ? zse : zse * Q;
                    /* per kz the words and passes differ only by cig: sum them */
                    for (int64_t kz = kz_lo; kz <= kz_hi; kz++) {
                        int64_t cig;
                        if (g.cls == 0) cig = min64((gi + 1) * g.cpg, (kz + 1) * g.P) - max64(gi * g.cpg, kz * g.P);
                        else if (g.cls == 1) cig = (kz % wpp_in == wpp_in - 1) ? h->ci - (wpp_in - 1) * g.P : g.P;
                        else cig = 1;
                        for (int64_t b = 0; b < g.nband; b++) {
                            int64_t rows = g.cls == 0 || g.cls == 2 ? min64(g.band, h->hk - b * g.band) : 1;
                            int64_t yi = g.cls == 3 ? yt : g.cls == 1 ? 1 : (yt - 1) * h->stride_h + (rows - 1) * h->dil_h + 1;
                            int64_t npass, plen;
                            if (g.cls == 0) npass = cig * rows * h->wk, plen = zse * Q;
                            else if (g.cls == 1) npass = cig, plen = zse;
                            else if (g.cls == 2) npass = rows * h->wk, plen = Q;
                            else npass = 1, plen = Q;
                            /* a holding chain (ISA 8) has no final pass */
                            bool ends = !h->ps_hold && ((g.cls == 0) ? (kz == kz_hi && b == g.nband - 1)
                                                        : (g.cls == 1) ? (kz == kz_hi)
                                                                       : (b == g.nband - 1));
                            int64_t uc = npass * plen + (ends ? (ns - 1) * pl : 0);
                            compute += mult * uc;
                            words += mult * xi * yi;
                            if (first_words < 0) first_words = xi * yi;
                            last_comp = uc;
                        }
                    }
                }
            }
        }
    }
    tt->compute = compute, tt->words = words, tt->first_words = first_words, tt->last_comp = last_comp;
}

static int64_t bound0(const cc_carch *a, int64_t npar, const enpu_instr *c, int n) {
    geom g;
    geom_make(a, &c[0], &g);
    totals tt;
    chain_totals(&g, c, n, &tt);
    int64_t D = a->pe_pipeline_depth, Rq = a->requant_latency, Ld = a->dtcm_read_latency;
    int64_t Lw = a->weight_mem_latency;
    int64_t par_ok = npar > 0 ? npar - 1 + Lw : 0, w0_ok = g.weighted ? npar + Lw : 0;
    if (tt.first_words < 0) return 0;
    int64_t first_start = max64(max64(par_ok, w0_ok), tt.first_words - 1 + Ld);
    int64_t tail = c[0].ps_hold ? D : D + Rq; /* a holding chain ends with its last sum */
    return max64(first_start + tt.compute + tail, tt.words + Ld + tt.last_comp + tail - 1);
}

/* The walk.  limit > 0: give up (return a value > limit) once the chain is
 * known to take longer.  act: per chain instruction, ENPU_ACT_COUNT each.
 *
 * relax: a lower bound instead, by the same recurrences without what can
 * only delay -- the loader never yields the bus to a write, the final pass
 * and the fused stages issue without a stall (each entry only after its
 * previous stage's, D + Rq later), the write queues never end the chain
 * late.  Every rule of the walk is a max or a sum of such times, so each
 * relaxed time is at most the real one: the bound is exact when nothing
 * stalls, and costs O(units) instead of O(words). */
static int64_t walk(const cc_carch *a, int64_t npar, const enpu_instr *c, int n, int64_t limit,
                    int64_t *act, bool relax) {
    geom g;
    const enpu_instr *h = &c[0];
    geom_make(a, h, &g);
    int stage[MAXCHAIN];
    int ns = chain_stages(c, n, stage);
    int64_t D = a->pe_pipeline_depth, Rq = a->requant_latency, Ld = a->dtcm_read_latency;
    int64_t Lw = a->weight_mem_latency;
    /* the chain ends D + Rq after its last issue, a holding one (ISA 8) D
     * after: its last sum is in the psum file and nothing is written */
    int64_t tail = h->ps_hold ? D : D + Rq;
    int64_t t0 = 0;
    int64_t par_ok = npar > 0 ? t0 + npar - 1 + Lw : t0;
    int64_t w0_ok = g.weighted ? t0 + npar + Lw : t0;
    int64_t fill_until = max64(par_ok, w0_ok);
#define ACT(i, k) act[(size_t)(i) * ENPU_ACT_COUNT + (k)]
    wlist wl = {0};
    int64_t load_free = t0;   /* next cycle the loader may issue */
    int64_t lastread[2] = {t0 - 1, t0 - 1}; /* last pad-reading cycle of units u-1, u-2 */
    int64_t pe_free = t0;     /* next cycle the PE array may issue */
    int64_t last_issue = t0 - 1;
    int last_stage_instr = stage[ns - 1];
    bool first = true;
    int64_t u = 0;
    int64_t wpp_in = cdiv(h->ci, g.P);
    int64_t kz_lo, kz_hi;
    int64_t result = -1;
    /* with a limit: every compute cycle still to come issues after pe_free,
     * so the chain ends no earlier than pe_free + those + D + Rq; a
     * candidate stops as soon as its stalls have used up the slack */
    int64_t todo = 0;
    if (limit > 0) {
        totals tt;
        chain_totals(&g, c, n, &tt);
        todo = tt.compute;
    }
    /* the passes of tile-completing units, cycle by cycle */
    pcyc pc;
    memset(&pc, 0, sizeof pc);
    pc.c = c, pc.stage = stage, pc.ns = ns, pc.P = g.P, pc.D = D, pc.Rq = Rq;
    pc.Dps = a->psum_depth, pc.wl = &wl, pc.act = act;
    pc.mq.last = pc.sq.last = t0 - 1;
    for (int i = 0; i < n; i++) {
        if (c[i].opcode == ENPU_OPC_RESHAPE) pc.rs = &c[i];
        if (c[i].opcode == ENPU_OPC_ADD || c[i].opcode == ENPU_OPC_MUL) pc.has_op2 = true;
    }
    int64_t maxlen = max64(g.z, g.P) / g.L * max64(g.tx * g.ty, 1) + 1;
    pc.buf[0] = malloc((size_t)maxlen * sizeof(int64_t));
    pc.buf[1] = malloc((size_t)maxlen * sizeof(int64_t));
    /* §11.12: the op2 FIFO holds max(Dw, pe_rows) words */
    pc.o.depth = max64(max64(a->weight_pad_depth, a->pe_rows), 1), pc.o.Ld = Ld, pc.o.tr = t0;
    /* op2 words: per op2 stage, one per cycle of its passes, which run in
     * every tile-completing unit: Σ over blocks of zse (conv, fc) or the
     * input words (channel-wise), times the tile positions */
    int64_t per_pos = 0;
    if (g.cls <= 1)
        for (int64_t bk = 0; bk < g.nbk; bk++) per_pos += g.G * cdiv(min64(g.z, g.opg - bk * g.z), g.L);
    else
        per_pos = cdiv(h->ci, g.P);
    for (int si = 0; si < ns; si++)
        if (c[stage[si]].opcode == ENPU_OPC_ADD || c[stage[si]].opcode == ENPU_OPC_MUL)
            pc.o.total += per_pos * (g.cls == 1 ? 1 : g.oh * g.ow);
    pc.o.ready = malloc((size_t)pc.o.depth * sizeof(int64_t));
    pc.o.pop_t = malloc((size_t)pc.o.depth * sizeof(int64_t));
    ENPU_ASSERT(pc.buf[0] && pc.buf[1] && pc.o.ready && pc.o.pop_t);

    for (int64_t gi = 0; gi < g.G; gi++) {
        if (g.cls == 0) {
            kz_lo = gi * g.cpg / g.P;
            kz_hi = ((gi + 1) * g.cpg - 1) / g.P;
        } else if (g.cls == 1) {
            kz_lo = 0, kz_hi = h->hi * h->wi * wpp_in - 1;
        } else {
            kz_lo = 0, kz_hi = wpp_in - 1;
        }
        for (int64_t bk = 0; bk < g.nbk; bk++) {
            int64_t zk = g.cls <= 1 ? min64(g.z, g.opg - bk * g.z) : g.P;
            int64_t zse = g.cls <= 1 ? cdiv(zk, g.L) : 1;
            for (int64_t ty = 0; ty < g.nty; ty++) {
                int64_t yt = min64(g.ty, g.oh - ty * g.ty);
                for (int64_t tx = 0; tx < g.ntx; tx++) {
                    int64_t xt = min64(g.tx, g.ow - tx * g.tx);
                    int64_t Q = cdiv(xt * yt, g.V);
                    int64_t xi = (xt - 1) * h->stride_w + (h->wk - 1) * h->dil_w + 1;
                    if (g.cls == 3) xi = xt;
                    if (g.cls == 1) xi = 1;
                    int64_t row0 = ty * g.ty * h->stride_h - h->pad_top;
                    int64_t col0 = tx * g.tx * h->stride_w - h->pad_left;
                    if (g.cls == 3) row0 = ty * g.ty, col0 = tx * g.tx;
                    for (int64_t kz = kz_lo; kz <= kz_hi; kz++) {
                        int64_t cig;
                        if (g.cls == 0) {
                            int64_t lo = max64(gi * g.cpg, kz * g.P);
                            int64_t hi = min64((gi + 1) * g.cpg, (kz + 1) * g.P);
                            cig = hi - lo;
                        } else if (g.cls == 1) {
                            cig = (kz % wpp_in == wpp_in - 1) ? h->ci - (wpp_in - 1) * g.P : g.P;
                        } else {
                            cig = 1;
                        }
                        for (int64_t b = 0; b < g.nband; b++) {
                            int64_t rows = g.cls == 0 || g.cls == 2 ? min64(g.band, h->hk - b * g.band) : 1;
                            int64_t yi = (yt - 1) * h->stride_h + (rows - 1) * h->dil_h + 1;
                            if (g.cls == 3) yi = yt;
                            if (g.cls == 1) yi = 1;
                            int64_t brow = row0 + b * g.band * h->dil_h;
                            /* ---- load: issue the unit's words ---- */
                            int64_t bank_free = (g.dbuf ? lastread[1] : lastread[0]) + 1;
                            int64_t t = max64(load_free, bank_free);
                            int64_t denied = 0;
                            int64_t nw = xi * yi;
                            if (relax) t += nw;
                            else for (int64_t j = 0; j < nw; j++) {
                                bool pad = false;
                                if (g.cls == 0 || g.cls == 2) {
                                    int64_t r = brow + j / xi, col = col0 + j % xi;
                                    pad = r < 0 || r >= h->hi || col < 0 || col >= h->wi;
                                }
                                if (!pad) t = wl_free(&wl, t, &denied);
                                t++;
                            }
                            load_free = t;
                            int64_t valid = t - 1 + Ld;
                            /* ---- compute ---- */
                            int64_t npass, plen;
                            if (g.cls == 0) npass = cig * rows * h->wk, plen = zse * Q;
                            else if (g.cls == 1) npass = cig, plen = zse;
                            else if (g.cls == 2) npass = rows * h->wk, plen = Q;
                            else npass = 1, plen = Q;
                            int64_t start = max64(pe_free, valid);
                            if (first) {
                                start = max64(start, max64(par_ok, w0_ok));
                                int64_t fill = min64(start, fill_until) - t0;
                                if (fill < 0) fill = 0;
                                ACT(0, ENPU_ACT_PIPELINE_FILL) += fill;
                                ACT(0, ENPU_ACT_IFMAP_LOAD) += start - t0 - fill;
                                first = false;
                            } else if (start > pe_free) {
                                int64_t w = start - pe_free, bc = min64(w, denied);
                                ACT(0, ENPU_ACT_BUS_CONFLICT) += bc;
                                ACT(0, ENPU_ACT_IFMAP_LOAD) += w - bc;
                            }
                            /* a holding chain (ISA 8) has no final pass */
                            bool ends = !h->ps_hold && ((g.cls == 0) ? (kz == kz_hi && b == g.nband - 1)
                                                        : (g.cls == 1) ? (kz == kz_hi)
                                                                       : (b == g.nband - 1));
                            /* passes before the final one run back to back (they
                             * neither write nor read op2); the final pass and the
                             * fused stages go cycle by cycle */
                            int64_t nblk = ends ? npass - 1 : npass;
                            int64_t cend = start + nblk * plen; /* first cycle after */
                            ACT(0, ENPU_ACT_COMPUTE) += nblk * plen;
                            lastread[1] = lastread[0];
                            lastread[0] = cend - 1;
                            pe_free = cend;
                            last_issue = cend - 1;
                            if (ends && relax) {
                                /* stage 0 back to back; stage si's entry k
                                 * after stage si-1's entry k + D + Rq */
                                int64_t first_k = cend, tl = cend + plen - 1;
                                int64_t pl = g.cls == 1 ? zse : zse * Q;
                                ACT(0, ENPU_ACT_COMPUTE) += plen;
                                lastread[0] = tl;
                                for (int si = 1; si < ns; si++) {
                                    int64_t s0 = max64(tl + 1, first_k + D + Rq);
                                    tl = max64(s0 + pl - 1, tl + D + Rq);
                                    first_k = s0;
                                }
                                /* the last stage's words (one per position and
                                 * output word) leave through the one write port
                                 * in order, each D + Rq after its issue */
                                if (!pc.rs) {
                                    int64_t npos = g.cls == 1 ? 1 : xt * yt;
                                    int64_t words = g.cls <= 1 ? zse * npos : npos;
                                    pc.mq.last = max64(max64(pc.mq.last + words, first_k + D + Rq + words - 1),
                                                       tl + D + Rq);
                                }
                                pe_free = tl + 1;
                                last_issue = tl;
                            } else if (ends) {
                                ppos pp = {ty * g.ty, tx * g.tx, xt, Q, xt * yt, g.V, g.L, g.cls <= 1, 0, 0};
                                if (g.cls == 1) pp.oy0 = pp.ox0 = 0, pp.xt = pp.Q = pp.npos = 1;
                                if (g.cls <= 1) pp.c0_word0 = gi * g.opg + bk * g.z, pp.n_ch = zk;
                                else pp.c0_word0 = kz * g.P, pp.n_ch = h->ci - kz * g.P;
                                int64_t pl = g.cls == 1 ? zse : zse * Q;
                                int64_t tl = run_pass(&pc, 0, cend, plen, NULL, pc.buf[0], &pp);
                                lastread[0] = tl;
                                for (int si = 1; si < ns; si++)
                                    tl = run_pass(&pc, si, tl + 1, pl, pc.buf[(si - 1) & 1],
                                                  pc.buf[si & 1], &pp);
                                pe_free = tl + 1;
                                last_issue = tl;
                            }
                            u++;
                            if (limit > 0) {
                                todo -= nblk * plen + (ends ? (ns - 1) * (g.cls == 1 ? zse : zse * Q) + plen : 0);
                                if (pe_free + todo + tail > limit) {
                                    result = pe_free + todo + tail;
                                    goto done;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    {
        /* the chain ends with its last write; after the last issue the
         * first D + Rq cycles are pipeline_drain, the rest ofmap_drain */
        int64_t end = max64(last_issue + tail, max64(pc.mq.last, pc.sq.last));
        ACT(last_stage_instr, ENPU_ACT_PIPELINE_DRAIN) += min64(end - last_issue, D + Rq);
        ACT(last_stage_instr, ENPU_ACT_OFMAP_DRAIN) += end - last_issue - min64(end - last_issue, D + Rq);
        result = end - t0 + 1;
    }
done:
    free(wl.s);
    free(wl.e);
    free(pc.mq.serve);
    free(pc.sq.serve);
    free(pc.buf[0]);
    free(pc.buf[1]);
    free(pc.o.ready);
    free(pc.o.pop_t);
#undef ACT
    return result;
}

static bool is_compute(int64_t op) {
    enpu_opclass k = enpu_opcode_class(op);
    return k == ENPU_CLASS_CONV || k == ENPU_CLASS_CW || k == ENPU_CLASS_MOVE;
}

void cc_carch_of(const enpu_arch *a, cc_carch *ca) {
    memset(ca, 0, sizeof *ca);
    ca->pes = a->pes, ca->pe_rows = a->pe_rows, ca->ifmap_pad_depth = a->ifmap_pad_depth;
    ca->weight_pad_depth = a->weight_pad_depth, ca->psum_depth = a->psum_depth;
    ca->pe_pipeline_depth = a->pe_pipeline_depth, ca->requant_latency = a->requant_latency;
    ca->dtcm_read_latency = a->dtcm_read_latency, ca->weight_mem_latency = a->weight_mem_latency;
}

static int64_t chain_params(const enpu_arch *a, const enpu_instr *c, int n) {
    int64_t npar = 0;
    for (int i = 0; i < n; i++) npar += cc_param_words(a, &c[i]);
    return npar;
}

int64_t cc_cost_chain_limit(const enpu_arch *a, const enpu_instr *c, int n, int64_t limit,
                            int64_t *act_rows) {
    if (n < 1 || n > MAXCHAIN || !is_compute(c[0].opcode)) return -1;
    int64_t local[MAXCHAIN * ENPU_ACT_COUNT];
    memset(local, 0, sizeof local);
    cc_carch ca;
    cc_carch_of(a, &ca);
    int64_t r = walk(&ca, chain_params(a, c, n), c, n, limit, local, false);
    if (act_rows) memcpy(act_rows, local, (size_t)n * ENPU_ACT_COUNT * sizeof *local);
    return r;
}

/* Fields no rule of the walk reads: addresses, numerics, DMA and the other
 * engines' fields.  A key leaves them out, so that equal chains at other
 * addresses (row strips, another arch's memory plan) share an entry. */
static const int unread[] = {
    ENPU_F_ifmap_addr, ENPU_F_ofmap_addr, ENPU_F_op2_addr,  ENPU_F_skip_addr, ENPU_F_weight_addr,
    ENPU_F_bias_addr,  ENPU_F_quant_addr, ENPU_F_table_addr, ENPU_F_zp_in,    ENPU_F_zp_out,
    ENPU_F_zp_op2,     ENPU_F_clamp_lo,   ENPU_F_clamp_hi,  ENPU_F_in1_mult,  ENPU_F_in2_mult,
    ENPU_F_out_mult,   ENPU_F_out_shift,  ENPU_F_dram_addr, ENPU_F_sram_addr, ENPU_F_push,
    ENPU_F_pop,        ENPU_F_ofmap_wpp,  ENPU_F_ofmap_word, ENPU_F_ifmap_wpp, ENPU_F_ifmap_word};

/* What tile.c chooses (not part of a tiling key: it is the answer). */
static const int tile_out[] = {ENPU_F_tile_x,  ENPU_F_tile_y, ENPU_F_tile_xi,
                               ENPU_F_tile_yi, ENPU_F_zs,     ENPU_F_band_h};

size_t cc_chain_key(const enpu_arch *a, const enpu_instr *c, int n, int64_t tag, bool tiling,
                    int64_t *key) {
    ENPU_ASSERT(n >= 1 && n <= MAXCHAIN);
    cc_carch ca;
    cc_carch_of(a, &ca);
    size_t k = 0;
    key[k++] = tag;
    memcpy(&key[k], &ca, sizeof ca);
    k += sizeof ca / sizeof(int64_t);
    key[k++] = chain_params(a, c, n);
    key[k++] = n;
    for (int i = 0; i < n; i++) {
        enpu_instr in = c[i];
        for (size_t f = 0; f < sizeof unread / sizeof unread[0]; f++) *enpu_instr_field(&in, unread[f]) = 0;
        if (tiling) {
            for (size_t f = 0; f < sizeof tile_out / sizeof tile_out[0]; f++)
                *enpu_instr_field(&in, tile_out[f]) = 0;
            if (i > 0) in.rows = 0; /* members take the head's */
        }
        memcpy(&key[k], &in, sizeof in);
        k += sizeof in / sizeof(int64_t);
    }
    return k * sizeof(int64_t);
}

int64_t cc_cost_chain_cached(enpu_compile_cache *cache, const enpu_arch *a, const enpu_instr *c, int n,
                             int64_t *act_rows) {
    if (n < 1 || n > MAXCHAIN || !is_compute(c[0].opcode)) return -1;
    if (!cache) return cc_cost_chain_limit(a, c, n, 0, act_rows);
    int64_t key[CC_CHAIN_KEY_WORDS];
    size_t klen = cc_chain_key(a, c, n, CC_KEY_COST, false, key);
    int64_t val[1 + MAXCHAIN * ENPU_ACT_COUNT];
    size_t vlen = (1 + (size_t)n * ENPU_ACT_COUNT) * sizeof *val;
    if (cc_cache_get(cache, key, klen, val, sizeof val) == vlen) {
        if (act_rows) memcpy(act_rows, val + 1, vlen - sizeof *val);
        return val[0];
    }
    val[0] = cc_cost_chain_limit(a, c, n, 0, val + 1);
    cc_cache_put(cache, key, klen, val, vlen);
    if (act_rows) memcpy(act_rows, val + 1, vlen - sizeof *val);
    return val[0];
}

int64_t cc_cost_bound0(const enpu_arch *a, const enpu_instr *c, int n) {
    if (n < 1 || n > MAXCHAIN || !is_compute(c[0].opcode)) return -1;
    cc_carch ca;
    cc_carch_of(a, &ca);
    return bound0(&ca, chain_params(a, c, n), c, n);
}

int64_t cc_cost_bound(const enpu_arch *a, const enpu_instr *c, int n, int64_t limit) {
    if (n < 1 || n > MAXCHAIN || !is_compute(c[0].opcode)) return -1;
    int64_t local[MAXCHAIN * ENPU_ACT_COUNT];
    cc_carch ca;
    cc_carch_of(a, &ca);
    return walk(&ca, chain_params(a, c, n), c, n, limit, local, true);
}

int64_t enpu_cost_chain(const enpu_arch *a, const enpu_instr *chain, int n,
                        int64_t act[ENPU_ACT_COUNT]) {
    int64_t rows[MAXCHAIN * ENPU_ACT_COUNT];
    int64_t r = cc_cost_chain_limit(a, chain, n, 0, rows);
    if (r < 0) return r;
    if (act) {
        memset(act, 0, ENPU_ACT_COUNT * sizeof *act);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < ENPU_ACT_COUNT; k++) act[k] += rows[i * ENPU_ACT_COUNT + k];
    }
    return r;
}

int64_t enpu_cost_controller(const enpu_arch *a, int n, bool first) {
    int64_t F = a->instr_fetch_cycles, Dc = a->decode_cycles;
    return (first ? F : 0) + Dc + (int64_t)(n - 1) * max64(F, Dc);
}

int64_t enpu_cost_program(const enpu_program *p, int64_t *cycles, int64_t *act) {
    size_t n = (size_t)p->n_instr;
    int64_t *a = calloc(n * ENPU_ACT_COUNT + 1, sizeof *a), *rd = calloc(n + 1, sizeof *rd),
            *wr = calloc(n + 1, sizeof *wr);
    ENPU_ASSERT(a && rd && wr);
    int64_t total = enpu_model_program(p, a, rd, wr);
    for (size_t i = 0; i < n; i++) {
        int64_t sum = 0;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) sum += a[i * ENPU_ACT_COUNT + k];
        if (cycles) cycles[i] = sum;
    }
    if (act) memcpy(act, a, n * ENPU_ACT_COUNT * sizeof *a);
    free(a), free(rd), free(wr);
    return total;
}
