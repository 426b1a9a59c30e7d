/* Scheduling (note 004's dependency analysis, latency and list scheduling):
 * the items of the memory plan (cc.h) become the program's instruction
 * stream.
 *
 * 1. Queues.  Chains, host ops and END run on the compute queue; a DMA runs
 *    on an engine chosen by what it moves (loads of feature maps on engine
 *    0, stores on engine 1, weights on engine 2, folded onto the engines the
 *    arch has), so a store waiting for its chain never holds up the next
 *    load.
 * 2. Dependencies.  Every pair of items touching the same words of a memory
 *    (DRAM included) with at least one writing them is ordered the way the
 *    natural order has them: read after write, write after read, write after
 *    write.  Accesses are kept per memory; a write that covers an earlier
 *    access supersedes it, so the lists stay short.
 * 3. List scheduling.  Each queue is a resource; items are started, by
 *    estimated time, as soon as their dependencies have completed and their
 *    queue is free, the lowest natural index first.  The stream is the items
 *    by estimated start: a topological order that lets every engine run
 *    ahead of the datapath as far as the buffers allow (double buffering
 *    falls out of the dependencies).  The serial schedule (compile option)
 *    makes every item wait for the one before it instead: the baseline the
 *    list schedule is measured against.
 * 4. Tokens.  In stream order, vector clocks record which items of each
 *    queue are known to have completed before an item starts (its queue
 *    predecessor's knowledge, plus the completion of the items it takes
 *    tokens from and theirs); an item takes a token from a queue only for a
 *    dependency not already known, from the latest such item, which sends
 *    it.  Tokens between two queues are then matched in order, as the
 *    hardware's counters require (docs/microarch.md §13.2). */
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

#define OOM() enpu_fail(c->err, ENPU_E_NOMEM, "out of memory")

static int engine_of(const cc *c, int what) {
    int E = (int)c->a->dma_engines;
    switch (what) {
    case CC_DMA_OUTPUT:
    case CC_DMA_OFMAP: return 1 % E;
    case CC_DMA_WEIGHTS: return 2 % E;
    default: return 0;
    }
}

static int add_dep(cc *c, cc_item *it, int d) {
    for (int k = 0; k < it->ndep; k++)
        if (it->dep[k] == d) return 0;
    if (it->ndep == it->capdep) {
        int cap = it->capdep ? 2 * it->capdep : 8;
        int *n = realloc(it->dep, (size_t)cap * sizeof *n);
        if (!n) return OOM();
        it->dep = n, it->capdep = cap;
    }
    it->dep[it->ndep++] = d;
    return 0;
}

/* ---- word-exact overlap of strided regions --------------------------------------- */

static bool overlap(const cc_region *a, const cc_region *b) {
    if (a->mem != b->mem) return false;
    int64_t ea = a->addr + (a->rows - 1) * a->stride + a->len;
    int64_t eb = b->addr + (b->rows - 1) * b->stride + b->len;
    if (a->addr >= eb || b->addr >= ea) return false;
    if ((a->rows == 1 || a->stride == a->len) && (b->rows == 1 || b->stride == b->len)) return true;
    /* rows of the one with fewer rows against the other */
    const cc_region *x = a->rows <= b->rows ? a : b, *y = x == a ? b : a;
    for (int64_t r = 0; r < x->rows; r++) {
        int64_t s = x->addr + r * x->stride, e = s + x->len;
        if (y->rows == 1 || y->stride == y->len) {
            if (s < eb && y->addr < e) return true;
            continue;
        }
        /* rows of y that may meet [s, e) */
        int64_t r0 = s - y->addr - y->len + 1;
        r0 = r0 <= 0 ? 0 : cdiv(r0, y->stride);
        for (int64_t q = r0; q < y->rows; q++) {
            int64_t ys = y->addr + q * y->stride;
            if (ys >= e) break;
            if (ys + y->len > s) return true;
        }
    }
    return false;
}

/* Does write region w cover region r entirely? (conservative: contiguous w) */
static bool covers(const cc_region *w, const cc_region *r) {
    if (w->mem != r->mem || !(w->rows == 1 || w->stride == w->len)) return false;
    int64_t we = w->addr + (w->rows - 1) * w->stride + w->len;
    int64_t re = r->addr + (r->rows - 1) * r->stride + r->len;
    return w->addr <= r->addr && re <= we;
}

typedef struct access {
    cc_region r;
    int item;
    bool write;
} access;

typedef struct alist {
    access *a;
    int n, cap;
} alist;

static int deps(cc *c) {
    enum { NMEM = 5 };
    alist L[NMEM] = {{0}};
    int rc = 0;
    for (int i = 0; i < c->nit && !rc; i++) {
        cc_item *it = &c->it[i];
        for (int pass = 0; pass < 2 && !rc; pass++) {
            int n = pass ? it->nwr : it->nrd;
            for (int k = 0; k < n && !rc; k++) {
                const cc_region *r = pass ? &it->wr[k] : &it->rd[k];
                alist *l = &L[r->mem];
                bool w = pass == 1;
                for (int j = 0; j < l->n && !rc; j++) {
                    access *x = &l->a[j];
                    if (x->item == i || (!w && !x->write)) continue;
                    if (overlap(&x->r, r)) rc = add_dep(c, it, x->item);
                }
                if (rc) break;
                if (w) { /* superseded accesses */
                    for (int j = 0; j < l->n;) {
                        if (l->a[j].item != i && covers(r, &l->a[j].r)) l->a[j] = l->a[--l->n];
                        else j++;
                    }
                }
                if (l->n == l->cap) {
                    int cap = l->cap ? 2 * l->cap : 64;
                    access *na = realloc(l->a, (size_t)cap * sizeof *na);
                    if (!na) {
                        rc = OOM();
                        break;
                    }
                    l->a = na, l->cap = cap;
                }
                l->a[l->n++] = (access){*r, i, w};
            }
        }
    }
    for (int m = 0; m < NMEM; m++) free(L[m].a);
    return rc;
}

/* ---- estimates and the list schedule ----------------------------------------------- */

static int64_t estimate(const cc *c, const cc_item *it, int64_t *xfer) {
    const enpu_arch *a = c->a;
    *xfer = 0;
    switch (it->kind) {
    case CC_IT_CHAIN: {
        int64_t r = cc_cost_chain_cached(c->cache, a, it->ins, it->n, NULL);
        return (r > 0 ? r : 1) + a->decode_cycles;
    }
    case CC_IT_HOST: return a->host_sync_cycles + cc_host_cycles(c, it->layer) + a->decode_cycles + 1;
    case CC_IT_DMA: {
        int64_t wb = enpu_arch_word_bytes(a);
        int64_t bpc = a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb;
        *xfer = cdiv(it->ins[0].dma_rows * it->ins[0].dma_len * wb, bpc);
        return *xfer + a->dram_latency;
    }
    default: return 1;
    }
}

typedef struct sk {
    int64_t start;
    int idx;
} sk;

static int cmp_sk(const void *x, const void *y) {
    const sk *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->idx - b->idx;
}

static int list_schedule(cc *c, bool serial) {
    int n = c->nit;
    int64_t *done = malloc((size_t)(n > 0 ? n : 1) * sizeof *done);
    int64_t *xfer = malloc((size_t)(n > 0 ? n : 1) * sizeof *xfer);
    sk *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    c->sorder = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->sorder);
    if (!done || !xfer || !s || !c->sorder) {
        free(done), free(xfer), free(s);
        return OOM();
    }
    for (int i = 0; i < n; i++) c->it[i].est = estimate(c, &c->it[i], &xfer[i]);
    if (serial) {
        for (int i = 0; i < n; i++) c->sorder[i] = i;
        free(done), free(xfer), free(s);
        return 0;
    }
    /* Items become ready when their dependencies complete; each queue takes
     * its ready items lowest natural index first.  Processing the items in
     * natural order per queue with "free" times is this schedule when each
     * queue's items are taken in natural order, which the readiness rule
     * keeps (a later item of a queue is never ready before an earlier one
     * that it does not depend on, except for independent transfers, which
     * then simply go first: they only gain). */
    int64_t qfree[ENPU_MAX_QUEUES] = {0};
    bool *sched = calloc((size_t)(n > 0 ? n : 1), sizeof *sched);
    if (!sched) {
        free(done), free(xfer), free(s);
        return OOM();
    }
    int left = n;
    int64_t now = 0;
    /* input-channel blocks: while a scheduled chain holds sums (held), the
     * datapath takes only the chain continuing them, for the psum file is
     * not saved.  The first chain of such a run starts only when every
     * compute item before it in the natural order is placed (first_open:
     * the first one not yet), so the run never waits for an item it has
     * not placed: every item its members depend on comes before them. */
    int held = -1, first_open = 0;
    while (left > 0) {
        /* the earliest start over all unscheduled items whose deps are scheduled */
        int best = -1;
        int64_t bstart = 0;
        for (int i = 0; i < n; i++) {
            if (sched[i]) continue;
            const cc_item *it = &c->it[i];
            if (held >= 0 && it->queue == ENPU_QUEUE_COMPUTE && it->cont_of != held) continue;
            if (it->holds && it->cont_of < 0 && first_open < i) continue;
            bool ready = true;
            int64_t t = qfree[it->queue];
            for (int k = 0; k < it->ndep && ready; k++) {
                if (!sched[it->dep[k]]) ready = false;
                else t = max64(t, done[it->dep[k]]);
            }
            /* an item is never started before an unscheduled earlier item of
             * its queue that could start no later */
            if (!ready) continue;
            if (best < 0 || t < bstart) best = i, bstart = t;
        }
        ENPU_ASSERT(best >= 0);
        const cc_item *it = &c->it[best];
        sched[best] = true;
        left--;
        if (it->queue == ENPU_QUEUE_COMPUTE) held = it->holds ? best : -1;
        while (first_open < n && (sched[first_open] || c->it[first_open].queue != ENPU_QUEUE_COMPUTE)) first_open++;
        s[best] = (sk){bstart, best};
        done[best] = bstart + it->est;
        qfree[it->queue] = it->kind == CC_IT_DMA ? bstart + xfer[best] : done[best];
        now = bstart;
    }
    (void)now;
    qsort(s, (size_t)n, sizeof *s, cmp_sk);
    for (int i = 0; i < n; i++) c->sorder[i] = s[i].idx;
    free(sched), free(done), free(xfer), free(s);
    return 0;
}

/* ---- tokens -------------------------------------------------------------------------- */

static int tokens(cc *c) {
    int n = c->nit;
    int64_t (*vc)[ENPU_MAX_QUEUES] = calloc((size_t)(n > 0 ? n : 1), sizeof *vc);
    int *qpos = malloc((size_t)(n > 0 ? n : 1) * sizeof *qpos);
    if (!vc || !qpos) {
        free(vc), free(qpos);
        return OOM();
    }
    int last[ENPU_MAX_QUEUES];
    int cnt[ENPU_MAX_QUEUES] = {0};
    for (int q = 0; q < ENPU_MAX_QUEUES; q++) last[q] = -1;
    for (int k = 0; k < n; k++) {
        int b = c->sorder[k];
        cc_item *it = &c->it[b];
        int q = it->queue;
        qpos[b] = cnt[q]++;
        int64_t *v = vc[b];
        if (last[q] >= 0) {
            memcpy(v, vc[last[q]], sizeof vc[0]);
            /* compute instructions complete before the next one starts */
            if (q == ENPU_QUEUE_COMPUTE) v[q] = max64(v[q], qpos[last[q]] + 1);
        }
        /* per source queue, the latest dependency not known complete */
        int need[ENPU_MAX_QUEUES];
        for (int r = 0; r < ENPU_MAX_QUEUES; r++) need[r] = -1;
        for (int d = 0; d < it->ndep; d++) {
            int a = it->dep[d], r = c->it[a].queue;
            if (v[r] >= qpos[a] + 1) continue;
            if (need[r] < 0 || qpos[a] > qpos[need[r]]) need[r] = a;
        }
        /* a token whose item another token already implies is dropped (the
         * other's sender completed after it) */
        for (int r = 0; r < ENPU_MAX_QUEUES; r++) {
            int a = need[r];
            if (a < 0) continue;
            for (int r2 = 0; r2 < ENPU_MAX_QUEUES; r2++) {
                int b2 = need[r2];
                if (r2 == r || b2 < 0) continue;
                if (vc[b2][r] >= qpos[a] + 1) {
                    need[r] = -1;
                    break;
                }
            }
        }
        for (int r = 0; r < ENPU_MAX_QUEUES; r++) {
            int a = need[r];
            if (a < 0) continue;
            it->ins[0].pop |= (int64_t)1 << r;
            c->it[a].ins[0].push |= (int64_t)1 << q;
            for (int x = 0; x < ENPU_MAX_QUEUES; x++) v[x] = max64(v[x], vc[a][x]);
            v[r] = max64(v[r], qpos[a] + 1);
        }
        last[q] = b;
    }
    free(vc), free(qpos);
    return 0;
}

int cc_schedule(cc *c) {
    bool serial = c->o.serial_schedule;
    for (int i = 0; i < c->nit; i++) {
        cc_item *it = &c->it[i];
        if (it->kind == CC_IT_DMA) {
            it->ins[0].dma_engine = engine_of(c, it->what);
            it->queue = 1 + (int)it->ins[0].dma_engine;
        } else {
            it->queue = ENPU_QUEUE_COMPUTE;
        }
        it->ins[0].push = it->ins[0].pop = 0;
    }
    int rc = deps(c);
    if (rc) return rc;
    /* input-channel blocks (ISA 8): a chain continuing held sums follows
     * the chain that held them (and nothing else on the datapath between
     * them: list_schedule) */
    for (int i = 0; i < c->nit && !rc; i++)
        if (c->it[i].cont_of >= 0) rc = add_dep(c, &c->it[i], c->it[i].cont_of);
    if (rc) return rc;
    /* END comes last: after every other item (it also waits for the DMA
     * engines to drain, docs/microarch.md §13.3) */
    for (int i = 0; i < c->nit; i++)
        if (c->it[i].kind == CC_IT_END)
            for (int j = 0; j < c->nit; j++)
                if (j != i && c->it[j].queue == ENPU_QUEUE_COMPUTE && (rc = add_dep(c, &c->it[i], j))) return rc;
    if (serial)
        for (int i = 1; i < c->nit; i++)
            if ((rc = add_dep(c, &c->it[i], i - 1))) return rc;
    if ((rc = list_schedule(c, serial))) return rc;
    /* a tensor is checked after the item that completes it: of the items of
     * its layer that do the same (its strips' stores, or its strips), the
     * last in the stream, which the list may have reordered */
    int *pos = malloc((size_t)(c->nit > 0 ? c->nit : 1) * sizeof *pos);
    if (!pos) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int k = 0; k < c->nit; k++) pos[c->sorder[k]] = k;
    for (int m = 0; m < c->nit; m++) {
        cc_item *it = &c->it[m];
        if (it->tensor < 0) continue;
        int best = m;
        for (int j = 0; j < c->nit; j++) {
            const cc_item *o = &c->it[j];
            if (o->group != it->group || o->kind != it->kind || pos[j] <= pos[best]) continue;
            if (o->kind == CC_IT_DMA && (o->what != it->what || o->ins[0].dma_dir != it->ins[0].dma_dir)) continue;
            best = j;
        }
        if (best == m) continue;
        cc_item *b = &c->it[best];
        b->tensor = it->tensor, b->tmem = it->tmem, b->tout = it->tout;
        it->tensor = -1, it->tmem = -1, it->tout = false;
    }
    free(pos);
    /* and last in the stream: a transfer the list placed after it (a store
     * estimated to start later) moves before it, which delays nothing (END
     * waits for the engines anyway) */
    for (int k = 0; k + 1 < c->nit; k++)
        if (c->it[c->sorder[k]].kind == CC_IT_END) {
            int e = c->sorder[k];
            memmove(&c->sorder[k], &c->sorder[k + 1], (size_t)(c->nit - 1 - k) * sizeof *c->sorder);
            c->sorder[c->nit - 1] = e;
            break;
        }
    return tokens(c);
}
