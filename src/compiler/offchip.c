/* The off-chip plan (note 004's tiling, DRAM allocation and buffer
 * allocation): a model whose feature maps, kept tensors or weights do not
 * fit the on-chip memories runs with its tensors and weights in DRAM,
 * streamed by the DMA engines (docs/compiler.md "Off-chip memory").
 *
 * Decisions, in order:
 * 1. Weights.  All of them stay in the weight memory when they fit;
 *    otherwise every step's parameters (weights, biases, requantization
 *    pairs, tables of its chain) are a block of the DRAM image, loaded into
 *    one half of the weight memory before the step (the other half holds
 *    the previous step's: double buffering), the whole memory for a block
 *    over half, and output-channel blocks (each its own instruction, its
 *    own slice of the weights, its output words through ofmap_wpp /
 *    ofmap_word) for a block over the whole; an fc or conv one block of
 *    whose output channels is over the whole is cut into input-channel
 *    blocks (icblocks.c: parts of an fc's input, a conv's kernel rows),
 *    their sums held in the psum file.
 * 2. Residency.  Every feature map starts resident in the main DTCM for its
 *    lifetime (kept tensors: in the skip DTCM); where they do not fit, the
 *    largest tensor live there moves to DRAM, until everything fits.  A
 *    tensor in DRAM is written by its producer strip by strip through a
 *    buffer and read by its consumers strip by strip into theirs.
 * 3. Strips.  A step that reads or writes a tensor in DRAM is cut into row
 *    strips: each strip is the chain's instructions on rows [r0, r1) of the
 *    output (the input rows they need, with the padding only at the map's
 *    edges); buffers are double when there are several strips.  The strip
 *    height is the largest whose buffers fit the step's share of the DTCM
 *    left by the resident tensors; a step whose buffers do not fit is given
 *    a smaller share (lower strips) before a tensor is moved.
 * 4. Memory: one first-fit allocation over time (a resident tensor from its
 *    writer's step to its last reader's; a step's input buffers from the
 *    step before (prefetch) to the step; its output buffers from the step to
 *    the one after (the last store drains)); DRAM by bump allocation.
 * 5. Items: per step the weight load, then per strip (and output-channel
 *    block) the loads of its input and second-operand rows, the chain, the
 *    store of its output rows; sched.c orders them and adds the tokens. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/offchip.h"

#define OOM() enpu_fail(c->err, ENPU_E_NOMEM, "out of memory")

/* ---- steps ------------------------------------------------------------------------- */

static int target(const cc *c, int s) { return s >= 0 && c->S[s].into >= 0 ? c->S[s].into : s; }

/* Storage s is read as a feature map (ifmap of a chain, operand of a host
 * op) or as an op2 in step k. */
static void build_steps(plan *pl) {
    cc *c = pl->c;
    pl->nst = 0;
    for (int k = 0; k < c->norder; k++) {
        int li = c->order[k];
        cc_layer *l = &c->L[li];
        if (l->head != li) continue;
        ost *st = &pl->st[pl->nst];
        memset(st, 0, sizeof *st);
        st->head = li;
        st->host = l->opcode == CC_HOST;
        st->in_s = st->op2_s = st->out_s = st->skip_s = -1;
        for (int m = li; m >= 0 && st->n < 16; m = c->L[m].next) {
            st->lay[st->n++] = m;
            pl->step_of_layer[m] = pl->nst;
            const cc_layer *ml = &c->L[m];
            if (ml->op2_store >= 0) st->op2_s = ml->op2_store;
        }
        if (!st->host) {
            cc_chain_bits(c, li); /* the fuse loop's registers, as the on-chip plan sets them */
            st->in_s = l->in_store;
            const cc_layer *last = &c->L[st->lay[st->n - 1]];
            st->out_s = last->out_store;
            if (st->out_s >= 0 && (c->S[st->out_s].last_op2 >= 0)) st->skip_s = st->out_s;
            st->ho = l->ins.opcode == ENPU_OPC_RESHAPE ? l->ins.hi : l->ins.ho;
            st->strip_ok = cc_strip_ok(c, li);
        }
        st->ncob = st->nicb = 1;
        st->rows = st->ho;
        st->nstrip = 1;
        pl->nst++;
    }
}


/* Words of the buffers of step st for output rows r (nb buffers each). */
static int64_t buffer_words(const plan *pl, const ost *st, int64_t r, int nb, int64_t *inw, int64_t *outw) {
    const cc *c = pl->c;
    const cc_layer *h = &c->L[st->head];
    *inw = *outw = 0;
    if (st->in_s >= 0 && !pl->res[target(c, st->in_s)]) {
        if (!st->strip_ok) {
            *inw = c->S[st->in_s].words;
        } else {
            /* the most input rows any strip of r output rows reads */
            int64_t rows = min64((r - 1) * h->ins.stride_h + (h->ins.hk - 1) * h->ins.dil_h + 1, h->ins.hi);
            *inw = rows * h->ins.wi * cdiv(h->ins.ci, c->P);
        }
    }
    if (st->out_s >= 0 && !pl->res[target(c, st->out_s)]) {
        const cc_store *o = &c->S[st->out_s];
        *outw = st->strip_ok ? r * o->w * cdiv(o->c, c->P) : o->words;
    }
    return nb * (*inw + *outw);
}

/* Words of one second-operand buffer of step st for r output rows (0: its
 * second operand is in the skip DTCM, or it has none). */
static int64_t op2_words(const plan *pl, const ost *st, int64_t r) {
    const cc *c = pl->c;
    if (st->op2_s < 0 || pl->sres[st->op2_s]) return 0;
    const cc_store *o = &c->S[st->op2_s];
    return st->strip_ok ? r * o->w * cdiv(o->c, c->P) : o->words;
}

/* Modelled cycles of one strip of r output rows of step st (an interior
 * strip when there are several: no top padding), by the tiler and the cost
 * model; memoised per height. */
static int64_t strip_cycles(plan *pl, ost *st, int64_t r) {
    cc *c = pl->c;
    if (!st->cost) {
        st->cost = calloc((size_t)st->ho + 1, sizeof *st->cost);
        if (!st->cost) return INT64_MAX / 4;
    }
    if (st->cost[r]) return st->cost[r];
    enpu_instr ins[16];
    for (int j = 0; j < st->n; j++) ins[j] = c->L[st->lay[j]].ins;
    int64_t r0 = st->ho >= 2 * r ? r : 0, r1 = min64(st->ho, r0 + r);
    if (r0 > 0 || r1 < st->ho) cc_cut_rows(ins, st->n, r0, r1);
    enpu_err e2 = {0};
    int64_t cyc = INT64_MAX / 4;
    cc_tile_info ti;
    if (cc_tile_search(c->cache, c->a, ins, st->n, c->o.naive_tiling, c->o.search, c->L[st->head].name,
                       &ti, &e2) == 0)
        cyc = ti.cost;
    if (cyc <= 0) cyc = INT64_MAX / 4;
    st->cost[r] = cyc;
    return cyc;
}

/* Modelled cycles of step st in strips of r rows: a two-stage pipeline in
 * which strip k computes while the DRAM channel loads strip k + 1's input
 * rows (its halo included) and stores strip k - 1's output.  The first load
 * and the last store overlap the steps before and after (the input buffers
 * are allocated from the step before), so they are not counted. */
static int64_t step_cycles(plan *pl, ost *st, int64_t r) {
    const enpu_arch *a = pl->c->a;
    int64_t wb = enpu_arch_word_bytes(a), bpc = min64(a->dram_bytes_per_cycle, wb);
    int64_t inw, outw, n = cdiv(st->ho, r);
    buffer_words(pl, st, r, 1, &inw, &outw);
    int64_t in = cdiv(inw * wb, bpc), out = cdiv(outw * wb, bpc), comp = strip_cycles(pl, st, r);
    int64_t per = max64(comp, in + out) + a->instr_fetch_cycles + a->decode_cycles;
    return n * per;
}

/* The strip height of step st for a share of `budget` words of main DTCM:
 * of the heights whose buffers fit (one strip needs one buffer of each,
 * several two; its second-operand buffers likewise fit `sbudget` words of
 * skip DTCM), the one of least modelled cycles (step_cycles): high strips
 * read fewer halo rows and pay fewer per-strip overheads, lower ones expose
 * less of the first load and the last store.  Candidates: the fewest strips
 * that fit, a few more, and twice and four times as many. */
/* Does every strip of r output rows of step st read at least one input row
 * (a window lying only in the padding, e.g. the last row of a ceil-mode
 * pool, makes an instruction without input rows)? */
static bool strips_read(const plan *pl, const ost *st, int64_t r) {
    const enpu_instr *h = &pl->c->L[st->head].ins;
    for (int64_t r0 = 0; r0 < st->ho; r0 += r) {
        int64_t a, b, pt, pb;
        cc_in_rows(h, r0, min64(st->ho, r0 + r), &a, &b, &pt, &pb);
        if (b <= a) return false;
        /* and each of a conv's kernel-row blocks does (they hold sums) */
        enpu_instr in = *h;
        if (st->nicb > 1 && st->icu >= 3) {
            if (r < st->ho) cc_cut_rows(&in, 1, r0, min64(st->ho, r0 + r));
            for (int ib = 0; ib < st->nicb; ib++)
                if (!cc_icb_reads(st, pl->c->P, ib, &in)) return false;
        }
    }
    return true;
}

static bool rows_fit(const plan *pl, const ost *st, int64_t r, int nb, int64_t budget, int64_t sbudget) {
    int64_t inw, outw;
    return buffer_words(pl, st, r, nb, &inw, &outw) <= budget && nb * op2_words(pl, st, r) <= sbudget;
}

static void choose_rows(plan *pl, ost *st, int64_t budget, int64_t sbudget) {
    int64_t inw, outw;
    st->rows = st->ho, st->nstrip = 1, st->nbuf = 1;
    int64_t need = buffer_words(pl, st, st->ho, 1, &inw, &outw) + op2_words(pl, st, st->ho);
    /* a conv in input-channel blocks: each instruction's output one tile */
    int64_t cap = st->icrows > 0 ? min64(st->icrows, st->ho) : st->ho;
    if ((need == 0 && cap == st->ho) || !st->strip_ok || st->ho <= 1) {
        st->inw = inw, st->outw = outw;
        return;
    }
    int64_t rmax = cap;
    if (cap < st->ho || !rows_fit(pl, st, st->ho, 1, budget, sbudget)) {
        int64_t lo = 1, hi = cap < st->ho ? cap : st->ho - 1;
        while (lo < hi) {
            int64_t mid = (lo + hi + 1) / 2;
            if (rows_fit(pl, st, mid, 2, budget, sbudget)) lo = mid;
            else hi = mid - 1;
        }
        rmax = lo;
    }
    int64_t nmin = cdiv(st->ho, rmax), best = rmax, best_t = -1;
    const int64_t cand[] = {nmin, nmin + 1, nmin + 2, nmin + 3, 2 * nmin, 4 * nmin};
    for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++) {
        int64_t r = cdiv(st->ho, cand[k]);
        if (r > rmax || r < 1) continue;
        if (cand[k] > 1 && (!rows_fit(pl, st, r, 2, budget, sbudget) || !strips_read(pl, st, r))) continue;
        int64_t t = step_cycles(pl, st, r);
        if (best_t < 0 || t < best_t) best = r, best_t = t;
    }
    /* no candidate reads rows in every strip: the highest fitting height that does */
    for (int64_t r = best; best_t < 0 && r >= 1; r--)
        if ((r == st->ho || rows_fit(pl, st, r, 2, budget, sbudget)) && strips_read(pl, st, r)) best = r, best_t = 0;
    st->rows = best;
    st->nstrip = (int)cdiv(st->ho, best);
    st->nbuf = st->nstrip > 1 ? 2 : 1;
    buffer_words(pl, st, best, st->nbuf, &st->inw, &st->outw);
}

/* ---- the allocation over time -------------------------------------------------------- */

typedef struct alloc {
    int64_t t0, t1, words, addr;
    int kind;                 /* 0 storage, 1 in buffer, 2 out buffer, 3 op2 buffer */
    int who;                  /* storage or step */
    int k;                    /* buffer index */
} alloc;

static int cmp_alloc(const void *x, const void *y) {
    const alloc *a = x, *b = y;
    if (a->t0 != b->t0) return a->t0 < b->t0 ? -1 : 1;
    if (a->words != b->words) return a->words > b->words ? -1 : 1;
    return a->who - b->who;
}

/* First fit over time; returns the index of the allocation that failed, or
 * -1 when all fit. */
static int fit(alloc *al, int n, int64_t cap, iv *busy) {
    qsort(al, (size_t)n, sizeof *al, cmp_alloc);
    for (int i = 0; i < n; i++) {
        int nb = 0;
        for (int j = 0; j < i; j++)
            if (al[j].t0 <= al[i].t1 && al[i].t0 <= al[j].t1)
                busy[nb++] = (iv){al[j].addr, al[j].addr + al[j].words};
        int64_t a = cc_place(busy, nb, cap, al[i].words, false);
        if (a < 0) return i;
        al[i].addr = a;
    }
    return -1;
}

/* The least capacity (words) in which fit() places the allocations live
 * during al[bad]'s steps: what the failed plan's smallest buffers need
 * there at least, for the error's hint. */
static int64_t fit_need(const alloc *al, int n, int bad, int64_t cap, iv *busy) {
    alloc *win = malloc((size_t)n * sizeof *win), *tmp = malloc((size_t)n * sizeof *tmp);
    if (!win || !tmp) {
        free(win), free(tmp);
        return cap + 1;
    }
    int m = 0;
    int64_t lo = cap + 1, hi = 0;
    for (int i = 0; i < n; i++)
        if (al[i].t0 <= al[bad].t1 && al[bad].t0 <= al[i].t1) win[m++] = al[i], hi += al[i].words;
    if (hi < lo) hi = lo;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        memcpy(tmp, win, (size_t)m * sizeof *tmp);
        if (fit(tmp, m, mid, busy) < 0) hi = mid;
        else lo = mid + 1;
    }
    free(win), free(tmp);
    return lo;
}

/* The name of the tensor storage s holds. */
static const char *g_name(const cc *c, int s) { return c->g->tensors[c->S[s].tensor].name; }

/* Does step k read storage s (as its ifmap, its second operand, or a host
 * op's operand)? */
static bool step_reads_s(const plan *pl, int k, int s) {
    const cc *c = pl->c;
    const ost *o = &pl->st[k];
    if (target(c, o->in_s) == s || o->op2_s == s) return true;
    for (int j = 0; j < o->n; j++)
        if (c->L[o->lay[j]].op2_store == s) return true;
    if (o->host) {
        const enpu_node *n = &c->g->nodes[c->L[o->head].node];
        for (int q = 0; q < n->n_in; q++)
            if (n->in[q] >= 0 && c->tv[n->in[q]].store >= 0 && target(c, c->tv[n->in[q]].store) == s) return true;
    }
    return false;
}

/* The live range in main DTCM of a resident storage s: from its writer's
 * step (a graph input: the step before its first reader, for its load) to
 * its last reader's (a graph output or a tensor also kept in DRAM: the step
 * after its writer, for the store). */
static void live_range(const plan *pl, int s, int64_t *a, int64_t *b) {
    const cc *c = pl->c;
    const cc_store *st = &c->S[s];
    int64_t first = pl->dstep[s], last = st->last;
    if (first < 0) {
        /* the first step reading it */
        first = pl->nst;
        for (int k = 0; k < pl->nst; k++) {
            const ost *o = &pl->st[k];
            if (target(c, o->in_s) == s) {
                first = k;
                break;
            }
        }
        first = first > 0 ? first - 1 : 0;
    }
    if (last >= pl->nst) {
        /* a graph output is kept to the end only in the on-chip plan: here it
         * is stored after its writer, and stays until its last reader */
        last = first;
        for (int k = first + 1; k < pl->nst; k++)
            if (step_reads_s(pl, k, s)) last = k;
    }
    if (st->dram_addr >= 0 || pl->moved[s]) last = max64(last, pl->dstep[s] + 1);
    if (last < first) last = first;
    *a = first, *b = last;
}

/* ---- the plan ------------------------------------------------------------------------ */

/* The step, other than the failed allocation's, owning the largest buffer
 * live with al[bad] that can still be cut into lower strips; -1 if none. */
static int shrinkable_neighbour(const plan *pl, const alloc *al, int n, int bad) {
    int best = -1;
    int64_t words = 0;
    int self = al[bad].kind ? al[bad].who : -1;
    for (int i = 0; i < n; i++) {
        if (!al[i].kind || al[i].who == self) continue;
        if (al[i].t0 > al[bad].t1 || al[bad].t0 > al[i].t1) continue;
        const ost *o = &pl->st[al[i].who];
        if (!o->strip_ok || o->rows <= 1 || al[i].words <= words) continue;
        best = al[i].who, words = al[i].words;
    }
    return best;
}

static int plan_memory(plan *pl) {
    cc *c = pl->c;
    const enpu_arch *a = c->a;
    int64_t cap = enpu_arch_words(a, a->main_dtcm_bytes);
    int64_t scap = enpu_arch_words(a, a->skip_dtcm_bytes);
    int ns = c->ns, nst = pl->nst;
    int maxal = ns + 6 * nst + 8;
    alloc *al = malloc((size_t)maxal * sizeof *al);
    iv *busy = malloc((size_t)maxal * sizeof *busy);
    int64_t *live = calloc((size_t)nst + 2, sizeof *live), *slive = calloc((size_t)nst + 2, sizeof *slive);
    if (!al || !busy || !live || !slive) {
        free(al), free(busy), free(live), free(slive);
        return OOM();
    }
    int rc = 0;
    for (int iter = 0;; iter++) {
        if (iter > 64 * (ns + nst) + 64) {
            rc = enpu_fail(c->err, ENPU_E_NOFIT, "off-chip plan: no allocation found (internal limit)");
            break;
        }
        /* resident words per step, and each step's share for its buffers */
        memset(live, 0, ((size_t)nst + 2) * sizeof *live);
        for (int s = 0; s < ns; s++) {
            if (c->S[s].into >= 0 || !pl->res[s] || pl->dstep[s] < -1) continue;
            int64_t t0, t1;
            live_range(pl, s, &t0, &t1);
            for (int64_t t = t0; t <= t1 && t < nst; t++) live[t] += c->S[s].words;
        }
        /* the skip DTCM's: constants always, kept second operands from their
         * writer to their last reader */
        int64_t kwords = 0;
        memset(slive, 0, ((size_t)nst + 2) * sizeof *slive);
        for (int s = 0; s < ns; s++) {
            const cc_store *so = &c->S[s];
            if (so->def == -2 && pl->sres[s]) kwords += so->words;
            else if (so->last_op2 >= 0 && pl->sres[s])
                for (int64_t t = max64(pl->dstep[s], 0); t <= so->last_op2 && t < nst; t++) slive[t] += so->words;
        }
        for (int k = 0; k < nst; k++) {
            ost *st = &pl->st[k];
            if (st->host) continue;
            int64_t most = 0, smost = 0;
            for (int64_t t = k - 1; t <= k + 1; t++)
                if (t >= 0 && t < nst) most = max64(most, live[t]), smost = max64(smost, slive[t]);
            int64_t share = (cap - most) / 2, sshare = (scap - kwords - smost) / 2;
            for (int h = 0; h < st->shrink; h++) share /= 2, sshare /= 2;
            choose_rows(pl, st, share, sshare);
        }
        /* main DTCM: resident tensors and buffers */
        int n = 0;
        for (int s = 0; s < ns; s++) {
            if (c->S[s].into >= 0 || !pl->res[s] || pl->dstep[s] < -1) continue;
            al[n] = (alloc){0, 0, c->S[s].words, -1, 0, s, 0};
            live_range(pl, s, &al[n].t0, &al[n].t1);
            n++;
        }
        for (int k = 0; k < nst; k++) {
            const ost *st = &pl->st[k];
            for (int b = 0; b < st->nbuf; b++) {
                if (st->inw) al[n++] = (alloc){k - 1, k, st->inw, -1, 1, k, b};
                if (st->outw) al[n++] = (alloc){k, k + 1, st->outw, -1, 2, k, b};
            }
        }
        int bad = fit(al, n, cap, busy);
        if (bad >= 0) {
            /* move the largest resident tensor live then to DRAM, or give the
             * step whose buffer failed a smaller share */
            int64_t t0 = al[bad].t0, t1 = al[bad].t1;
            int best = -1;
            for (int s = 0; s < ns; s++) {
                if (c->S[s].into >= 0 || !pl->res[s] || pl->dstep[s] < -1) continue;
                int64_t a0, a1;
                live_range(pl, s, &a0, &a1);
                if (a0 > t1 || t0 > a1) continue;
                if (best < 0 || c->S[s].words > c->S[best].words) best = s;
            }
            int who = al[bad].kind ? al[bad].who : -1;
            bool can_shrink = who >= 0 && pl->st[who].strip_ok && pl->st[who].rows > 1;
            /* a buffer over a quarter of the DTCM shrinks first: tensors stay on chip */
            if (can_shrink && (best < 0 || al[bad].words * 4 > cap)) {
                pl->st[who].shrink++;
                continue;
            }
            if (best >= 0) {
                pl->res[best] = false;
                pl->moved[best] = true;
                continue;
            }
            if (can_shrink) {
                pl->st[who].shrink++;
                continue;
            }
            /* the steps around it may hold the room with their own buffers
             * (each sized for its share alone): the largest of them that can
             * still shrink does */
            int other = shrinkable_neighbour(pl, al, n, bad);
            if (other >= 0) {
                pl->st[other].shrink++;
                continue;
            }
            const ost *st = &pl->st[who >= 0 ? who : 0];
            char hint[160];
            int64_t wb = enpu_arch_word_bytes(a);
            int64_t need = fit_need(al, n, bad, cap, busy) * wb;
            cc_fit_hint(a, "main_dtcm_bytes", need, hint, sizeof hint);
            /* a layer that is not cut into strips (cc_strip_ok) holds whole maps */
            bool whole = who >= 0 && !st->strip_ok;
            rc = enpu_fail(c->err, ENPU_E_NOFIT,
                           "layer '%s': even with its tensors in DRAM%s, "
                           "its %s buffer (%" PRId64 " bytes) does not fit beside the buffers and "
                           "tensors live with it: they need at least %" PRId64 " bytes of main DTCM; arch '%s' "
                           "has %" PRId64 "; %s",
                           nst > 0 ? c->L[st->head].name : "-",
                           whole ? " (it is not cut into row strips: its buffers hold whole maps)"
                                 : " and one output row per strip",
                           al[bad].kind == 1 ? "input" : al[bad].kind == 2 ? "output" : "tensor",
                           al[bad].words * wb, need, a->name, a->main_dtcm_bytes, hint);
            break;
        }
        for (int i = 0; i < n; i++) {
            const alloc *x = &al[i];
            if (x->kind == 0) c->S[x->who].main_addr = x->addr;
            else if (x->kind == 1) pl->st[x->who].inb[x->k] = x->addr;
            else pl->st[x->who].outb[x->k] = x->addr;
        }
        /* skip DTCM: constants (the image), kept tensors, op2 buffers */
        n = 0;
        for (int s = 0; s < ns; s++) {
            const cc_store *st = &c->S[s];
            bool konst = st->def == -2;
            if (!pl->sres[s] || (!konst && st->last_op2 < 0)) continue;
            al[n++] = (alloc){konst ? -1 : pl->dstep[s], st->last_op2, st->words, -1, 0, s, 0};
        }
        for (int k = 0; k < nst; k++) {
            ost *st = &pl->st[k];
            st->opw = op2_words(pl, st, st->rows);
            if (!st->opw) continue;
            for (int b = 0; b < st->nbuf; b++) al[n++] = (alloc){k - 1, k, st->opw, -1, 3, k, b};
        }
        bad = fit(al, n, scap, busy);
        if (bad >= 0) {
            int64_t t0 = al[bad].t0, t1 = al[bad].t1;
            /* the largest kept tensor live then goes to DRAM; failing one, the
             * largest constant (its image streams from DRAM like a kept tensor) */
            int best = -1;
            for (int pass = 0; pass < 2 && best < 0; pass++)
                for (int i = 0; i < n; i++) {
                    if (al[i].kind || (c->S[al[i].who].def == -2) != (pass == 1)) continue;
                    if (al[i].t0 > t1 || t0 > al[i].t1) continue;
                    if (best < 0 || al[i].words > c->S[best].words) best = al[i].who;
                }
            if (best >= 0) {
                pl->sres[best] = false;
                continue;
            }
            int who = al[bad].kind ? al[bad].who : -1;
            if (who >= 0 && pl->st[who].strip_ok && pl->st[who].rows > 1) {
                pl->st[who].shrink++;
                continue;
            }
            int64_t wb = enpu_arch_word_bytes(a), need = fit_need(al, n, bad, scap, busy) * wb;
            int sk = al[bad].kind ? al[bad].who : -1;
            bool whole = sk >= 0 && !pl->st[sk].strip_ok;
            rc = enpu_fail(c->err, ENPU_E_NOFIT,
                           "skip DTCM: %s%s%s (%" PRId64 " bytes) does not fit beside the constants, kept "
                           "tensors and second-operand buffers live with it, %s: they need at least %" PRId64 " bytes; arch '%s' has %" PRId64
                           "; use skip_dtcm_bytes >= %" PRId64,
                           sk >= 0 ? "the second-operand buffer of layer '" : "tensor '",
                           sk >= 0 ? c->L[pl->st[sk].head].name : g_name(c, al[bad].who),
                           "'", al[bad].words * wb,
                           whole ? "its layer not cut into row strips (a whole map)"
                                 : "even with one output row per strip",
                           need, a->name, a->skip_dtcm_bytes, need);
            break;
        }
        for (int i = 0; i < n; i++) {
            const alloc *x = &al[i];
            if (x->kind == 0) c->S[x->who].skip_addr = x->addr;
            else pl->st[x->who].opb[x->k] = x->addr;
        }
        break;
    }
    free(al), free(busy), free(live), free(slive);
    return rc;
}

/* ---- weights ------------------------------------------------------------------------- */

/* Parameter words [wlo, whi) of each step in the weight image. */
static void step_weights(plan *pl) {
    cc *c = pl->c;
    for (int k = 0; k < pl->nst; k++) {
        ost *st = &pl->st[k];
        st->wlo = INT64_MAX, st->whi = 0;
        if (st->host) continue;
        for (int j = 0; j < st->n; j++) {
            enpu_mem_block b[ENPU_MAX_BLOCKS];
            int nb = enpu_instr_blocks(c->a, &c->L[st->lay[j]].ins, j > 0, b);
            for (int q = 0; q < nb; q++) {
                if (b[q].mem != ENPU_MEM_WEIGHT) continue;
                st->wlo = min64(st->wlo, b[q].addr);
                st->whi = max64(st->whi, b[q].addr + b[q].words);
            }
        }
        if (st->wlo == INT64_MAX) st->wlo = st->whi = 0;
    }
}

/* Can step st's chain be cut in output-channel blocks (its own slice of the
 * weights each)? conv / fc heads with groups 1, members bn, relu, act. */
static bool cob_ok(const plan *pl, const ost *st) {
    const cc *c = pl->c;
    const enpu_instr *h = &c->L[st->head].ins;
    if (h->opcode != ENPU_OPC_CONV && h->opcode != ENPU_OPC_CONV_RELU && h->opcode != ENPU_OPC_FC) return false;
    if (h->groups != 1) return false;
    for (int j = 1; j < st->n; j++) {
        int op = c->L[st->lay[j]].opcode;
        if (op != ENPU_OPC_BN && op != ENPU_OPC_RELU && op != ENPU_OPC_ACT) return false;
    }
    return true;
}

/* Appends the parameters of step st for output channels [o0, o1) to the DRAM
 * image and sets the block's instruction addresses (relative to the block)
 * in ins[]. Returns the block's first word in the image, or -1. */
static int64_t block_params(plan *pl, const ost *st, int64_t o0, int64_t o1, int nj, int64_t r0,
                            int64_t r1, enpu_instr *ins, int64_t *words) {
    cc *c = pl->c;
    int P = c->P;
    wbuf b = {0};
    int64_t cb = o1 - o0;
    int rc = 0;
    for (int j = 0; j < nj && !rc; j++) {
        const cc_layer *src = &c->L[st->lay[j]];
        cc_layer tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.ins = ins[j];
        tmp.table = src->table;
        tmp.name = src->name;
        tmp.src = src->src;
        int8_t *w = NULL;
        int32_t *bias = NULL;
        uint32_t *M = NULL;
        int8_t *S = NULL;
        if (src->w_bytes > 0) {
            /* words of Lc channels: pes, or pes / lane groups (tile.c) */
            int64_t Lc = P >> src->ins.lane_split;
            int64_t wpr_old = cdiv(src->ins.co, Lc), wpr = cdiv(cb, Lc);
            int64_t rows = src->w_bytes / (wpr_old * P);
            if (src->opcode == ENPU_OPC_BN) rows = 1, wpr_old = cdiv(src->ins.co, P);
            /* an input-channel block: the head's weight rows of units [r0, r1) */
            bool icb = j == 0 && r1 >= 0;
            if (icb) rows = cc_icb_nrows(st, &src->ins, r0, r1);
            w = calloc((size_t)(rows * wpr * P), 1);
            if (!w) {
                rc = OOM();
                break;
            }
            for (int64_t r = 0; r < rows; r++)
                memcpy(w + r * wpr * P, src->w + ((icb ? cc_icb_row(st, &src->ins, r0, r1, r) : r) * wpr_old + o0 / Lc) * P,
                       (size_t)min64(wpr * P, (wpr_old - o0 / Lc) * P));
            tmp.w = w;
            tmp.w_bytes = rows * wpr * P;
        }
        if (src->bias) {
            bias = malloc((size_t)cb * sizeof *bias);
            M = malloc((size_t)cb * sizeof *M);
            S = malloc((size_t)cb);
            if (!bias || !M || !S) {
                free(w), free(bias), free(M), free(S);
                rc = OOM();
                break;
            }
            memcpy(bias, src->bias + o0, (size_t)cb * sizeof *bias);
            memcpy(M, src->M + o0, (size_t)cb * sizeof *M);
            memcpy(S, src->S + o0, (size_t)cb);
            tmp.bias = bias, tmp.M = M, tmp.S = S;
        }
        rc = cc_layout_layer_params(c, &tmp, &b);
        ins[j].weight_addr = tmp.ins.weight_addr, ins[j].bias_addr = tmp.ins.bias_addr;
        ins[j].quant_addr = tmp.ins.quant_addr, ins[j].table_addr = tmp.ins.table_addr;
        free(w), free(bias), free(M), free(S);
    }
    if (rc) {
        free(b.p);
        return -1;
    }
    /* append at a word boundary of the DRAM image */
    int64_t at = cc_wb_block(c, &pl->dimg, b.p, b.len);
    *words = cdiv((int64_t)b.len, P);
    free(b.p);
    return at;
}

/* ---- items --------------------------------------------------------------------------- */

typedef struct strip {
    int64_t r0, r1, a, b, pt, pb;
} strip;

/* The chain instructions of step st for output rows [r0, r1) (or the whole
 * map) and output channels [o0, o1); buffers k. */
static int strip_chain(plan *pl, const ost *st, const strip *sp, int64_t o0, int64_t o1, int k,
                       enpu_instr *ins) {
    cc *c = pl->c;
    int P = c->P;
    for (int j = 0; j < st->n; j++) ins[j] = c->L[st->lay[j]].ins;
    enpu_instr *h = &ins[0];
    int64_t nrow = sp->r1 - sp->r0;
    /* rows */
    /* a whole map is cut too when its input is in a buffer that holds only
     * the rows the layer reads (buffer_words: a stride that skips the last
     * rows), so that the instruction reads no row past the buffer */
    bool buffered = st->in_s >= 0 && !pl->res[target(c, st->in_s)];
    if (st->strip_ok && (sp->r0 > 0 || sp->r1 < st->ho || (buffered && sp->b < h->hi)))
        cc_cut_rows(ins, st->n, sp->r0, sp->r1);
    (void)nrow;
    /* input */
    if (st->in_s >= 0) {
        int s = target(c, st->in_s);
        if (pl->res[s]) h->ifmap_addr = c->S[st->in_s].main_addr + (st->strip_ok ? sp->a * cc_in_row_words(c, h) : 0);
        else h->ifmap_addr = st->inb[k];
    }
    /* output channels */
    bool cob = o0 > 0 || o1 < c->L[st->head].ins.co;
    if (cob) {
        h->co = o1 - o0;
        for (int j = 1; j < st->n; j++) ins[j].ci = ins[j].co = o1 - o0;
    }
    /* output */
    enpu_instr *l = &ins[st->n - 1];
    if (st->out_s >= 0) {
        const cc_store *os = &c->S[st->out_s];
        int s = target(c, st->out_s);
        int64_t owpp = os->ofmap_wpp ? os->ofmap_wpp : cdiv(os->c, P);
        int64_t oword = os->ofmap_word;
        if (pl->res[s]) {
            int64_t base = c->S[s].main_addr + (os->into >= 0 ? os->into_off : 0);
            l->ofmap_addr = base + (st->strip_ok ? sp->r0 * os->w * owpp : 0);
            if (os->into >= 0 && os->ofmap_wpp) l->ofmap_wpp = owpp, l->ofmap_word = oword;
        } else {
            l->ofmap_addr = st->outb[k];
            owpp = cdiv(os->c, P), oword = 0;
        }
        if (cob) {
            l->ofmap_wpp = owpp;
            l->ofmap_word = oword + o0 / P;
        }
    }
    /* second operand and skip copy */
    for (int j = 0; j < st->n; j++) {
        const cc_layer *ml = &c->L[st->lay[j]];
        if (ml->op2_store >= 0) {
            const cc_store *o2 = &c->S[ml->op2_store];
            ins[j].op2_mem = 1;
            if (pl->sres[ml->op2_store])
                ins[j].op2_addr = o2->skip_addr + (st->strip_ok ? sp->r0 * o2->w * cdiv(o2->c, P) : 0);
            else ins[j].op2_addr = st->opb[k];
        }
        ins[j].store_skip = 0, ins[j].skip_addr = 0;
    }
    if (st->skip_s >= 0 && pl->sres[st->skip_s]) {
        const cc_store *ss = &c->S[st->skip_s];
        l->store_skip = 1;
        l->skip_addr = ss->skip_addr + (st->strip_ok ? sp->r0 * ss->w * cdiv(ss->c, P) : 0);
    }
    int rc = cc_tile_search(c->cache, c->a, ins, st->n, c->o.naive_tiling, c->o.search,
                            c->L[st->head].name, NULL, c->err);
    return rc;
}

/* The DRAM rows [r0, r1) of storage s (whole: all its words). */
static void dram_rows(const cc *c, int s, bool whole, int64_t r0, int64_t r1, int64_t *addr, int64_t *len) {
    const cc_store *st = &c->S[s];
    int64_t rw = st->w * cdiv(st->c, c->P);
    int t = target(c, s);
    int64_t base = c->S[t].dram_addr + (st->into >= 0 && !st->ofmap_wpp ? st->into_off : 0);
    if (whole) *addr = base, *len = st->words;
    else *addr = base + r0 * rw, *len = (r1 - r0) * rw;
}

static int host_items(plan *pl, const ost *st) {
    cc *c = pl->c;
    cc_item *it = cc_item_new(c, CC_IT_HOST, st->head);
    if (!it) return c->err->code;
    it->n = 1;
    it->ins[0] = c->L[st->head].ins;
    const enpu_node *n = &c->g->nodes[c->L[st->head].node];
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? n->n_out : n->n_in;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? n->out[k] : n->in[k];
            if (t < 0 || cc_item_host_tensor(c, it, t, pass)) continue;
            int s = target(c, c->tv[t].store);
            const cc_store *ss = &c->S[c->tv[t].store];
            bool dram = cc_host_in_dram(c, t);
            int mem = dram ? ENPU_MEM_DRAM : ENPU_MEM_MAIN;
            int64_t addr = dram ? c->S[s].dram_addr : ss->main_addr;
            if (pass) cc_item_write(it, mem, addr, 1, ss->words, ss->words);
            else cc_item_read(it, mem, addr, 1, ss->words, ss->words);
        }
    }
    /* what the host wrote where the NPU or the host will not find it: a
     * DTCM copy also kept in DRAM is stored; a DRAM copy NPU layers read
     * from the DTCM is loaded */
    for (int k = 0; k < n->n_out; k++) {
        int t = n->out[k];
        if (t < 0 || c->tv[t].store < 0) continue;
        int s = c->tv[t].store;
        if (!pl->res[s] || c->S[s].dram_addr < 0) continue;
        bool host_dram = cc_host_in_dram(c, t);
        cc_item *d = cc_item_dma(c, st->head, host_dram ? CC_DMA_INPUT : CC_DMA_OUTPUT,
                                 host_dram ? ENPU_DMA_LOAD : ENPU_DMA_STORE, ENPU_MEM_MAIN, c->S[s].main_addr,
                                 c->S[s].dram_addr, 1, c->S[s].words, 0, 0);
        if (!d) return c->err->code;
    }
    return 0;
}

static int chain_items(plan *pl, int k) {
    cc *c = pl->c;
    const ost *st = &pl->st[k];
    const cc_layer *hl = &c->L[st->head];
    int group = c->nit;
    int P = c->P;
    /* strips */
    int ns = st->nstrip;
    strip *sp = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *sp);
    if (!sp) return OOM();
    int nsp = 0;
    for (int j = 0; j < ns; j++) {
        strip s;
        s.r0 = (int64_t)j * st->rows, s.r1 = min64(st->ho, s.r0 + st->rows);
        if (st->strip_ok) cc_in_rows(&hl->ins, s.r0, s.r1, &s.a, &s.b, &s.pt, &s.pb);
        else s.a = 0, s.b = hl->ins.hi, s.pt = hl->ins.pad_top, s.pb = hl->ins.pad_bottom;
        if (s.b <= s.a) {
            /* choose_rows found no height whose strips all read a row */
            free(sp);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': no strip height fits the main DTCM in which every strip reads "
                             "an input row (output rows %" PRId64 "..%" PRId64 " read only padding)",
                             hl->name, s.r0, s.r1 - 1);
        }
        sp[nsp++] = s;
    }
    /* output-channel blocks: each with its parameter slice in the DRAM image */
    int ncob = st->ncob;
    int64_t co = hl->ins.co;
    int rc = 0;
    bool res_out = st->out_s >= 0 && pl->res[target(c, st->out_s)];
    int nouter = res_out ? ncob : nsp, ninner = res_out ? nsp : ncob;
    int64_t wbase = 0;
    int kk = 0;
    int nicb = st->nicb, held = -1;
    bool blocks = ncob * nicb > 1;
    for (int oi = 0; oi < nouter && !rc; oi++) {
        for (int ii = 0; ii < ninner && !rc; ii++) {
          for (int ib = 0; ib < nicb && !rc; ib++) {
            int bI = res_out ? oi : ii, sI = res_out ? ii : oi;
            int pb = bI * nicb + ib; /* its parameter slice */
            int64_t o0 = (int64_t)bI * st->cob, o1 = ncob > 1 ? min64(co, o0 + st->cob) : co;
            if (ncob == 1) o0 = 0;
            const strip *s = &sp[sI];
            int kb = st->nbuf > 1 ? sI % 2 : 0;
            enpu_instr ins[16];
            if ((rc = strip_chain(pl, st, s, o0, o1, kb, ins))) break;
            int nch = st->n;
            if (nicb > 1) {
                /* the layer on its part of the input; every block but the
                 * last holds its sums, every block but the first continues
                 * them.  A conv block whose kernel rows fall only on padding
                 * would still add the padding's products (the bias counts
                 * them: the pads are zp_in), but an instruction reads at
                 * least one row: choose_rows avoids such strips */
                if (!cc_icb_reads(st, P, ib, &ins[0])) {
                    rc = enpu_fail(c->err, ENPU_E_NOFIT,
                                   "layer '%s': no strip height that fits the main DTCM and whose output is one psum tile lets every "
                                   "block of %" PRId64 " kernel row(s) read an input row (output rows %" PRId64
                                   "..%" PRId64 ", block %d: only padding)",
                                   hl->name, st->icper, s->r0, s->r1 - 1, ib);
                    break;
                }
                int64_t r0, r1, woff;
                cc_icb_cut(st, P, ib, &ins[0], &r0, &r1, &woff);
                ins[0].ifmap_addr += woff;
                ins[0].ps_cont = ib > 0;
                ins[0].ps_hold = ib < nicb - 1;
                if (ins[0].ps_hold) {
                    nch = 1;
                    ins[0].fuse_next = ins[0].fuse_bn = ins[0].fuse_act = ins[0].fuse_order = 0;
                    ins[0].store_skip = ins[0].skip_addr = 0;
                    ins[0].ofmap_wpp = ins[0].ofmap_word = 0;
                }
                /* a conv block's output is one tile (the psum file's) */
                if (st->icu >= 3 &&
                    (rc = cc_tile_search(c->cache, c->a, ins, nch, c->o.naive_tiling, c->o.search,
                                         hl->name, NULL, c->err)))
                    break;
            }
            if (blocks)
                for (int j = 0; j < nch; j++) {
                    const int64_t *ba = st->baddr[(size_t)pb * 16 + j];
                    ins[j].weight_addr = ba[0], ins[j].bias_addr = ba[1];
                    ins[j].quant_addr = ba[2], ins[j].table_addr = ba[3];
                }
            /* weights: the step's block (once), or this output-channel block's, in
             * the half of the weight memory the previous load did not use (the
             * whole memory for a block over half) */
            int64_t words = blocks ? st->bwords[pb] : st->whi - st->wlo;
            /* (a chain without parameters, a pool, loads nothing) */
            if (pl->wstream && words > 0 &&
                (blocks ? (nicb > 1 || (res_out ? ii == 0 : true)) : (oi == 0 && ii == 0))) {
                int64_t lo = blocks ? st->blo[pb] : st->wlo;
                int64_t half = enpu_arch_words(c->a, c->a->weight_mem_bytes) / 2;
                if (words <= half) {
                    wbase = pl->wflip ? half : 0;
                    pl->wflip ^= 1;
                } else {
                    wbase = 0;
                    pl->wflip = 1;
                }
                cc_item *w = cc_item_dma(c, st->head, CC_DMA_WEIGHTS, ENPU_DMA_LOAD, ENPU_MEM_WEIGHT, wbase,
                                         pl->wdram + lo, 1, words, 0, 0);
                if (!w) {
                    rc = c->err->code;
                    break;
                }
                w->group = group;
            }
            if (pl->wstream) {
                /* parameters at the buffer: the block's addresses are relative to
                 * its first word (the whole image's: to the step's) */
                int64_t shift = wbase - (blocks ? 0 : st->wlo);
                for (int j = 0; j < nch; j++) {
                    enpu_instr *in = &ins[j];
                    enpu_mem_block b[ENPU_MAX_BLOCKS];
                    int nb = enpu_instr_blocks(c->a, in, j > 0, b);
                    for (int q = 0; q < nb; q++) {
                        if (b[q].mem != ENPU_MEM_WEIGHT) continue;
                        if (!strcmp(b[q].role, "weights")) in->weight_addr += shift;
                        else if (!strcmp(b[q].role, "bias")) in->bias_addr += shift;
                        else if (!strcmp(b[q].role, "quant")) in->quant_addr += shift;
                        else if (!strcmp(b[q].role, "table")) in->table_addr += shift;
                    }
                }
            }
            /* input rows and second-operand rows from DRAM (once for the
             * input-channel blocks, which read parts of one buffer) */
            if (ib == 0 && st->in_s >= 0 && !pl->res[target(c, st->in_s)]) {
                int64_t addr, len;
                if (st->strip_ok) {
                    int64_t rw = cc_in_row_words(c, &c->L[st->head].ins);
                    dram_rows(c, st->in_s, false, 0, 0, &addr, &len);
                    addr += s->a * rw, len = (s->b - s->a) * rw;
                } else {
                    dram_rows(c, st->in_s, true, 0, 0, &addr, &len);
                }
                cc_item *l = cc_item_dma(c, st->head, CC_DMA_IFMAP, ENPU_DMA_LOAD, ENPU_MEM_MAIN, st->inb[kb], addr,
                                         1, len, 0, 0);
                if (!l) {
                    rc = c->err->code;
                    break;
                }
                l->group = group;
            }
            if (ib == 0 && st->op2_s >= 0 && !pl->sres[st->op2_s]) {
                int64_t addr, len;
                dram_rows(c, st->op2_s, !st->strip_ok, s->r0, s->r1, &addr, &len);
                cc_item *l = cc_item_dma(c, st->head, CC_DMA_OP2, ENPU_DMA_LOAD, ENPU_MEM_SKIP, st->opb[kb], addr, 1,
                                         len, 0, 0);
                if (!l) {
                    rc = c->err->code;
                    break;
                }
                l->group = group;
            }
            cc_item *it = cc_item_chain(c, st->head, ins, nch);
            if (!it) {
                rc = c->err->code;
                break;
            }
            for (int j = 0; j < nch; j++) it->lay[j] = st->lay[j];
            it->group = group;
            if (ins[0].ps_cont) it->cont_of = held;
            it->holds = ins[0].ps_hold != 0;
            held = it->holds ? (int)(it - c->it) : -1;
            kk++;
            /* the output rows to DRAM: from the buffer, or from the resident map
             * when the tensor is also kept in DRAM (after every block) */
            if (st->out_s < 0 || ib < nicb - 1) continue;
            int so = target(c, st->out_s);
            const cc_store *os = &c->S[st->out_s];
            bool last_block = res_out ? oi == ncob - 1 : ii == ninner - 1;
            bool to_dram = c->S[so].dram_addr >= 0;
            if (!to_dram || !last_block) continue;
            int64_t rw = os->w * cdiv(os->c, P);
            int64_t nrow = st->strip_ok ? s->r1 - s->r0 : os->h;
            int64_t r0 = st->strip_ok ? s->r0 : 0;
            int64_t owpp = os->ofmap_wpp ? os->ofmap_wpp : cdiv(os->c, P), wpart = cdiv(os->c, P);
            int64_t dbase = c->S[so].dram_addr;
            int64_t sram = pl->res[so] ? it->ins[st->n - 1].ofmap_addr : st->outb[kb];
            cc_item *d;
            if (os->into >= 0 && os->ofmap_wpp) {
                /* a channel-concat part: its words of every pixel */
                int64_t pix = nrow * os->w;
                if (pl->res[so]) sram = it->ins[st->n - 1].ofmap_addr + os->ofmap_word;
                d = cc_item_dma(c, st->head, CC_DMA_OFMAP, ENPU_DMA_STORE, ENPU_MEM_MAIN, sram,
                                dbase + r0 * os->w * owpp + os->ofmap_word, pix, wpart,
                                pl->res[so] ? owpp : wpart, owpp);
            } else {
                int64_t off = os->into >= 0 ? os->into_off : 0;
                d = cc_item_dma(c, st->head, CC_DMA_OFMAP, ENPU_DMA_STORE, ENPU_MEM_MAIN, sram,
                                dbase + off + r0 * rw, 1, nrow * rw, 0, 0);
            }
            if (!d) {
                rc = c->err->code;
                break;
            }
            d->group = group;
          }
        }
    }
    free(sp);
    return rc;
}

/* ---- output-channel blocks: their parameter slices, laid out in advance -------------- */

static int cob_slices(plan *pl) {
    cc *c = pl->c;
    for (int k = 0; k < pl->nst; k++) {
        ost *st = &pl->st[k];
        /* one slice per output-channel block and input-channel block */
        int nb = st->ncob * st->nicb;
        if (nb <= 1) continue;
        st->blo = malloc((size_t)nb * sizeof *st->blo);
        st->bwords = malloc((size_t)nb * sizeof *st->bwords);
        st->baddr = malloc((size_t)nb * 16 * sizeof *st->baddr);
        if (!st->blo || !st->bwords || !st->baddr) return OOM();
        int64_t co = c->L[st->head].ins.co;
        for (int b = 0; b < nb; b++) {
            int bo = b / st->nicb, ib = b % st->nicb;
            int64_t o0 = (int64_t)bo * st->cob, o1 = min64(co, o0 + st->cob);
            enpu_instr ins[16];
            for (int j = 0; j < st->n; j++) {
                ins[j] = c->L[st->lay[j]].ins;
                ins[j].co = o1 - o0;
                if (j > 0) ins[j].ci = o1 - o0;
            }
            int64_t r0 = 0, r1 = -1, woff;
            if (st->nicb > 1) cc_icb_cut(st, c->P, ib, &ins[0], &r0, &r1, &woff);
            int nj = st->nicb > 1 ? cc_icb_nj(st, ib) : st->n;
            st->blo[b] = block_params(pl, st, o0, o1, nj, r0, r1, ins, &st->bwords[b]);
            if (st->blo[b] < 0) return c->err->code;
            for (int j = 0; j < nj; j++) {
                int64_t *ba = st->baddr[(size_t)b * 16 + j];
                ba[0] = ins[j].weight_addr, ba[1] = ins[j].bias_addr;
                ba[2] = ins[j].quant_addr, ba[3] = ins[j].table_addr;
            }
        }
    }
    return 0;
}

/* Output-channel blocks for each step whose parameters exceed the weight
 * memory (streamed weights). Where each load goes (alternate halves, the
 * whole memory for a block over half) is decided as the loads are emitted. */
/* Weight-memory words of one output-channel block [0, o1) of step st's
 * chain (without lane groups: the head's weights not replicated). */
static int64_t cob_words(const plan *pl, const ost *st, int64_t o1, bool no_lanes) {
    const cc *c = pl->c;
    int64_t per = 0;
    for (int j = 0; j < st->n; j++) {
        enpu_instr in = c->L[st->lay[j]].ins;
        in.co = o1;
        if (j > 0) in.ci = o1;
        if (no_lanes) in.lane_split = 0;
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(c->a, &in, j > 0, b);
        for (int q = 0; q < nb; q++)
            if (b[q].mem == ENPU_MEM_WEIGHT) per += b[q].words;
    }
    return per;
}

static int weight_buffers(plan *pl) {
    cc *c = pl->c;
    const enpu_arch *a = c->a;
    int64_t W = enpu_arch_words(a, a->weight_mem_bytes), half = W / 2;
    for (int k = 0; k < pl->nst; k++) {
        ost *st = &pl->st[k];
        int64_t words = st->whi - st->wlo;
        if (st->host || words == 0) continue;
        if (words <= W) continue;
        const cc_layer *h = &c->L[st->head];
        if (!cob_ok(pl, st)) {
            char hint[160];
            cc_fit_hint(a, "weight_mem_bytes", words * enpu_arch_word_bytes(a), hint, sizeof hint);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': its weights and parameters (%" PRId64 " bytes) do not fit the "
                             "weight memory of arch '%s' (%" PRId64 " bytes), and it cannot be split in "
                             "output-channel blocks (only an ungrouped conv or fc, fused with nothing but "
                             "bn or activations, can); %s",
                             h->name, words * enpu_arch_word_bytes(a), a->name, a->weight_mem_bytes, hint);
        }
        /* channels per block: the most multiples of pes whose slice fits half
         * the memory (the next block loads into the other half meanwhile),
         * else one multiple in the whole memory (loads then wait) */
        int64_t co = h->ins.co, P = c->P;
        int64_t best = 0, first = 0;
        for (int64_t cb = P; cb < co + P; cb += P) {
            int64_t o1 = min64(co, cb);
            int64_t per = cob_words(pl, st, o1, false);
            if (cb == P) first = per;
            if (per <= half) best = o1;
            else break;
        }
        if (best == 0 && first <= W) best = min64(co, P);
        if (best == 0 && h->ins.lane_split && cob_words(pl, st, min64(co, P), true) <= W) {
            /* lane groups replicate weights (docs/microarch.md §16): the
             * compiler retries the model without them before cutting a
             * conv's kernel into blocks */
            int64_t need = first * enpu_arch_word_bytes(a);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': one block of %d output channels in %d lane groups needs %" PRId64
                             " bytes of weights and parameters; arch '%s' has weight_mem_bytes %" PRId64
                             "; it fits without lane groups",
                             h->name, (int)min64(co, P), 1 << h->ins.lane_split, need, a->name, a->weight_mem_bytes);
        }
        if (best == 0) {
            /* input-channel blocks: the sums held in the psum file (ISA 8) */
            int rc = cc_icb_plan(pl, st);
            if (rc) return rc;
            st->icfull = first * enpu_arch_word_bytes(a);
            if (st->skip_s >= 0) pl->sres[st->skip_s] = false;
            continue;
        }
        st->cob = best;
        st->ncob = (int)cdiv(co, best);
        /* a skip copy has no per-block word placement (ofmap_wpp is the
         * main DTCM write's): a later add reads its second operand from DRAM */
        if (st->ncob > 1 && st->skip_s >= 0) pl->sres[st->skip_s] = false;
    }
    return 0;
}

/* Appends text to a layer's note ("; " between), or replaces it. */
static void add_note(cc_layer *l, const char *text, bool replace) {
    size_t ol = l->note && !replace ? strlen(l->note) : 0, nl = strlen(text);
    char *nn = malloc(ol + nl + 3);
    if (!nn) return; /* a note is lost, not the plan */
    snprintf(nn, ol + nl + 3, "%s%s%s", ol ? l->note : "", ol ? "; " : "", text);
    free(l->note);
    l->note = nn;
}

int cc_offchip(cc *c, uint8_t **wimg, size_t *wlen, uint8_t **simg, size_t *slen) {
    const enpu_graph *g = c->g;
    const enpu_arch *a = c->a;
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.c = c;
    c->offchip = true;
    int ns = c->ns;
    size_t nsz = (size_t)(ns > 0 ? ns : 1);
    pl.dstep = malloc(nsz * sizeof *pl.dstep);
    pl.res = calloc(nsz, sizeof *pl.res);
    pl.sres = calloc(nsz, sizeof *pl.sres);
    pl.moved = calloc(nsz, sizeof *pl.moved);
    pl.st = calloc((size_t)(c->norder > 0 ? c->norder : 1), sizeof *pl.st);
    pl.step_of_layer = malloc((size_t)(c->nl > 0 ? c->nl : 1) * sizeof *pl.step_of_layer);
    int rc = 0;
    if (!pl.dstep || !pl.res || !pl.sres || !pl.moved || !pl.st || !pl.step_of_layer) {
        rc = OOM();
        goto out;
    }
    cc_lifetimes(c, pl.dstep);
    build_steps(&pl);
    for (int s = 0; s < ns; s++) {
        cc_store *st = &c->S[s];
        st->main_addr = st->skip_addr = st->dram_addr = -1;
        pl.res[s] = st->into < 0 && pl.dstep[s] >= -1;
        pl.sres[s] = st->last_op2 >= 0 || st->def == -2;
    }
    /* the graph inputs and outputs live in DRAM */
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? g->n_outputs : g->n_inputs;
        for (int k = 0; k < n; k++) {
            int t = pass ? g->outputs[k] : g->inputs[k];
            if (g->tensors[t].dtype != ENPU_DT_INT8 || c->tv[t].store < 0) continue;
            c->S[target(c, c->tv[t].store)].dram_addr = 0; /* placed below */
        }
    }
    /* 1. weights */
    for (int k = 0; k < c->norder && !rc; k++) rc = cc_layout_layer_params(c, &c->L[c->order[k]], &pl.wimg);
    if (rc) goto out;
    pl.wstream = (int64_t)pl.wimg.len > a->weight_mem_bytes;
    step_weights(&pl);
    if (pl.wstream) {
        if ((rc = weight_buffers(&pl))) goto out;
        /* the DRAM image: the weight image, then the output-channel slices */
        if (cc_wb_reserve(c, &pl.dimg, pl.wimg.len)) {
            rc = c->err->code;
            goto out;
        }
        memcpy(pl.dimg.p, pl.wimg.p, pl.wimg.len);
        pl.dimg.len = pl.wimg.len;
        if ((rc = cob_slices(&pl))) goto out;
    }
    if (pl.wstream)
        rc = cc_note(c, "weights: %zu bytes of weights and parameters exceed the %" PRId64 "-byte weight "
                        "memory: each layer's are loaded from DRAM before it, into the half of the weight "
                        "memory the previous layer does not use (output-channel blocks for a layer over "
                        "half)", pl.wimg.len, a->weight_mem_bytes);
    else
        rc = cc_note(c, "weights: all %zu bytes stay in the weight memory (%" PRId64 " bytes)", pl.wimg.len,
                     a->weight_mem_bytes);
    if (rc) goto out;
    /* 2-4. residency, strips, memory */
    if ((rc = plan_memory(&pl))) goto out;
    for (int s = 0; s < ns && !rc; s++) {
        const cc_store *st = &c->S[s];
        if (!pl.moved[s]) continue;
        int64_t t0, t1;
        live_range(&pl, s, &t0, &t1);
        char sh[64];
        enpu_shape_str(&g->tensors[st->tensor], sh, sizeof sh);
        if (pl.nst == 0)
            /* no NPU layer at all (the host runs every node): nothing to name */
            rc = cc_note(c, "tensor '%s' %s (%" PRId64 " bytes) kept in DRAM: it does not fit the %" PRId64
                            "-byte main DTCM, and only the host reads and writes it",
                         g->tensors[st->tensor].name, sh, st->words * enpu_arch_word_bytes(a), a->main_dtcm_bytes);
        else
            rc = cc_note(c, "tensor '%s' %s (%" PRId64 " bytes) kept in DRAM: with it in the main DTCM, the "
                            "tensors and buffers live around layer '%s' would not fit; its writer stores it and "
                            "its readers load it row strip by row strip",
                         g->tensors[st->tensor].name, sh, st->words * enpu_arch_word_bytes(a),
                         c->L[pl.st[t0 >= 0 && t0 < pl.nst ? t0 : 0].head].name);
    }
    for (int s = 0; s < ns && !rc; s++) {
        const cc_store *st = &c->S[s];
        if (st->last_op2 < 0 || pl.sres[s]) continue;
        rc = cc_note(c, "%s '%s' (second operand of a later add/mul) kept in DRAM, not in the skip DTCM "
                        "(%" PRId64 " bytes do not fit beside the others): the add loads its rows",
                     st->def == -2 ? "constant" : "tensor", g->tensors[st->tensor].name,
                     st->words * enpu_arch_word_bytes(a));
    }
    if (rc) goto out;
    /* the DRAM image: the streamed weights, then the constant second
     * operands kept in DRAM; it comes first in DRAM */
    for (int s = 0; s < ns && !rc; s++) {
        cc_store *st = &c->S[s];
        if (st->def != -2 || pl.sres[s]) continue;
        int64_t at = cc_wb_block(c, &pl.dimg, st->cdata, (size_t)(st->words * c->P));
        if (at < 0) rc = c->err->code;
        st->dram_addr = at; /* relative to the image, placed below */
    }
    if (rc) goto out;
    if (pl.dimg.len) {
        pl.wdram = cc_dram_alloc(c, cdiv((int64_t)pl.dimg.len, c->P));
        for (int s = 0; s < ns; s++)
            if (c->S[s].def == -2 && !pl.sres[s]) c->S[s].dram_addr += pl.wdram;
    }
    /* DRAM for the tensors that live there */
    for (int s = 0; s < ns; s++) {
        cc_store *st = &c->S[s];
        if (st->into >= 0 || pl.dstep[s] < -1) continue;
        bool need = st->dram_addr == 0 || !pl.res[s] || (st->last_op2 >= 0 && !pl.sres[s] && st->def != -2);
        st->dram_addr = need ? cc_dram_alloc(c, st->words) : -1;
        if (!pl.res[s]) st->main_addr = -1;
    }
    /* 5. items */
    bool *loaded = calloc(nsz, sizeof *loaded);
    if (!loaded) {
        rc = OOM();
        goto out;
    }
    for (int k = 0; k < pl.nst && !rc; k++) {
        const ost *st = &pl.st[k];
        /* resident graph inputs, loaded whole before their first reader */
        for (int j = 0; j < g->n_inputs && !rc; j++) {
            int t = g->inputs[j];
            if (c->tv[t].store < 0 || g->tensors[t].dtype != ENPU_DT_INT8) continue;
            int s = c->tv[t].store;
            if (loaded[s] || !pl.res[s]) continue;
            /* (a host op reads a graph input in DRAM) */
            bool reads = !st->host && (target(c, st->in_s) == s || st->op2_s == s);
            if (!reads) continue;
            loaded[s] = true;
            cc_item *d = cc_item_dma(c, st->head, CC_DMA_INPUT, ENPU_DMA_LOAD, ENPU_MEM_MAIN, c->S[s].main_addr,
                                     c->S[s].dram_addr, 1, c->S[s].words, 0, 0);
            if (!d) rc = c->err->code;
            else d->group = c->nit; /* reported with the step that reads it, next */
        }
        if (rc) break;
        int first = c->nit;
        rc = st->host ? host_items(&pl, st) : chain_items(&pl, k);
        if (rc || st->out_s < 0) continue;
        /* where the step's output is checked: the last item writing it */
        const cc_store *os = &c->S[st->out_s];
        int t = c->L[st->lay[st->n - 1]].out;
        if (os->ofmap_wpp > 0 || os->into >= 0 || t < 0) continue;
        for (int i = c->nit - 1; i >= first; i--) {
            cc_item *it = &c->it[i];
            bool dram = pl.res[st->out_s] ? false : true;
            if (it->kind == CC_IT_DMA && it->ins[0].dma_dir == ENPU_DMA_STORE && os->dram_addr >= 0 &&
                (dram || (g->tensors[t].flags & ENPU_T_OUTPUT))) {
                it->tensor = t, it->tmem = ENPU_MEM_DRAM, it->taddr = os->dram_addr;
                it->tout = (g->tensors[t].flags & ENPU_T_OUTPUT) != 0;
                break;
            }
            if (it->kind == CC_IT_CHAIN && !dram && !(g->tensors[t].flags & ENPU_T_OUTPUT)) {
                it->tensor = t, it->tmem = ENPU_MEM_MAIN, it->taddr = os->main_addr;
                break;
            }
        }
    }
    free(loaded);
    if (rc) goto out;
    {
        cc_item *e = cc_item_new(c, CC_IT_END, -1);
        if (!e) {
            rc = c->err->code;
            goto out;
        }
        e->n = 1;
        e->ins[0].opcode = ENPU_OPC_END;
    }
    /* images */
    if (!pl.wstream) {
        *wimg = pl.wimg.p, *wlen = pl.wimg.len;
        pl.wimg.p = NULL;
    }
    if (pl.dimg.len) {
        c->dram_img = pl.dimg.p, c->dram_img_len = pl.dimg.len;
        pl.dimg.p = NULL;
    }
    {
        wbuf sb = {0};
        for (int s = 0; s < ns && !rc; s++) {
            const cc_store *st = &c->S[s];
            if (st->def != -2 || st->skip_addr < 0) continue;
            size_t end = (size_t)((st->skip_addr + st->words) * c->P);
            if (sb.len < end) {
                if (cc_wb_reserve(c, &sb, end - sb.len)) {
                    rc = c->err->code;
                    break;
                }
                sb.len = end;
            }
            memcpy(sb.p + st->skip_addr * c->P, st->cdata, (size_t)(st->words * c->P));
        }
        *simg = sb.p, *slen = sb.len;
    }
    /* a second operand kept in DRAM: the lowering's note said skip DTCM */
    for (int k = 0; k < pl.nst; k++)
        for (int j = 0; j < pl.st[k].n; j++) {
            cc_layer *ml = &c->L[pl.st[k].lay[j]];
            int s = ml->op2_store;
            if (s < 0 || pl.sres[s]) continue;
            char buf[ENPU_MAX_NAME + 96];
            snprintf(buf, sizeof buf, "op2 '%s'%s from DRAM, its rows loaded strip by strip into a skip DTCM buffer",
                     g->tensors[c->S[s].tensor].name, c->S[s].def == -2 ? " (constant)" : "");
            add_note(ml, buf, true);
        }
    for (int k = 0; k < pl.nst; k++)
        if (pl.st[k].nstrip > 1 || pl.st[k].ncob > 1 || (pl.st[k].in_s >= 0 && !pl.res[target(c, pl.st[k].in_s)])) {
            const ost *st = &pl.st[k];
            char buf[256];
            snprintf(buf, sizeof buf, "off-chip: %d strip(s) of %" PRId64 " output row(s)%s%s%s", st->nstrip,
                     st->rows, st->ncob > 1 ? ", output-channel blocks" : "",
                     st->in_s >= 0 && !pl.res[target(c, st->in_s)] ? ", input from DRAM" : "",
                     st->out_s >= 0 && !pl.res[target(c, st->out_s)] ? ", output to DRAM" : "");
            add_note(&c->L[st->head], buf, false);
        }
    for (int k = 0; k < pl.nst; k++)
        if (pl.st[k].nicb > 1) {
            const ost *st = &pl.st[k];
            char buf[448], conv[128] = "", units[64];
            if (st->icu >= 3)
                snprintf(conv, sizeof conv, " (%s; strips of at most %" PRId64 " output rows, each one psum tile)",
                         st->icu == 3 ? "every input channel" : "the words read through ifmap_wpp", st->icrows);
            snprintf(buf, sizeof buf,
                     "cut into %d input-channel blocks of %s%s: one block of %" PRId64
                     " output channels with its whole input needs %" PRId64 " bytes of weights and parameters, "
                     "over weight_mem_bytes %" PRId64 "; a block needs at most %" PRId64
                     " bytes, its sums held in the psum file from block to block",
                     st->nicb, cc_icb_units(st, units, sizeof units), conv, st->cob, st->icfull, a->weight_mem_bytes,
                     st->icbytes);
            add_note(&c->L[st->head], buf, false);
        }
out:
    for (int k = 0; pl.st && k < pl.nst; k++)
        free(pl.st[k].blo), free(pl.st[k].bwords), free(pl.st[k].baddr), free(pl.st[k].cost);
    free(pl.dstep), free(pl.res), free(pl.sres), free(pl.moved), free(pl.st), free(pl.step_of_layer);
    free(pl.wimg.p), free(pl.dimg.p);
    return rc;
}
