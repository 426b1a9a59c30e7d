/* Residency, strips and memory of the off-chip plan (decisions 2-4 in
 * offchip.c): which tensors stay in the main and skip DTCM and which move to
 * DRAM, the row-strip height of each step that streams (choose_rows), and
 * every DTCM address, by first fit over time.  One phase because the three
 * decide each other: a strip height depends on the room the resident
 * tensors leave, and a failed fit either moves a tensor to DRAM or lowers a
 * step's strips, then everything is decided again (cc_off_plan_memory's
 * loop).  Its input is the steps and, when weights stream, their blocks
 * (offchip_weights.c); its output the addresses offchip_items.c emits. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/offchip.h"

/* ---- strips ----------------------------------------------------------------------- */

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

/* Do the buffers of step st for strips of r output rows (nb of each kind)
 * fit `budget` words of main DTCM and `sbudget` words of skip DTCM? */
static bool rows_fit(const plan *pl, const ost *st, int64_t r, int nb, int64_t budget, int64_t sbudget) {
    int64_t inw, outw;
    return buffer_words(pl, st, r, nb, &inw, &outw) <= budget && nb * op2_words(pl, st, r) <= sbudget;
}

/* The strip height of step st for a share of `budget` words of main DTCM:
 * of the heights whose buffers fit (one strip needs one buffer of each,
 * several two; its second-operand buffers likewise fit `sbudget` words of
 * skip DTCM), the one of least modelled cycles (step_cycles): high strips
 * read fewer halo rows and pay fewer per-strip overheads, lower ones expose
 * less of the first load and the last store.  Candidates: the fewest strips
 * that fit, a few more, and twice and four times as many. */
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
void cc_off_live_range(const plan *pl, int s, int64_t *a, int64_t *b) {
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

/* Decisions 2-4: every storage starts resident (main DTCM; a kept second
 * operand or a constant in the skip DTCM), each step's strips are chosen for
 * its share of what they leave, and everything is placed by first fit over
 * time; when a placement fails, the largest tensor live then moves to DRAM
 * or a step gets a smaller share (lower strips), and the loop decides again.
 * Sets c->S[].main_addr / skip_addr, pl->res / sres / moved and each step's
 * rows, buffers and their addresses.  Nofit naming the layer or tensor and
 * the least DTCM bytes that would do when even one output row per strip
 * does not fit. */
int cc_off_plan_memory(plan *pl) {
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
            cc_off_live_range(pl, s, &t0, &t1);
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
            cc_off_live_range(pl, s, &al[n].t0, &al[n].t1);
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
                cc_off_live_range(pl, s, &a0, &a1);
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
