#include "sim/span.h"

#include <stdlib.h>

void sim_tspan_add(sim_tspan_log *l, int64_t who, uint64_t start, uint64_t n, bool merge) {
    if (n == 0 || l->failed) return;
    if (merge && l->n > 0) {
        sim_tspan *p = &l->v[l->n - 1];
        if (p->who == who && p->end == start) {
            p->end = start + n;
            return;
        }
    }
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 256;
        sim_tspan *nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            l->failed = true;
            return;
        }
        l->v = nv, l->cap = cap;
    }
    l->v[l->n++] = (sim_tspan){start, start + n, who};
}

void sim_tspan_clear(sim_tspan_log *l) { l->n = 0, l->failed = false; }

void sim_tspan_free(sim_tspan_log *l) {
    free(l->v);
    *l = (sim_tspan_log){0};
}

static int by_start(const void *a, const void *b) {
    const sim_tspan *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

bool sim_tspan_spread(sim_tspan_log *owners, sim_tspan_log *bursts, double *bytes, int n_owner) {
    if (owners->failed || bursts->failed) return false;
    /* owners come in time order from one engine, but not always: sort */
    if (owners->n > 1) qsort(owners->v, (size_t)owners->n, sizeof *owners->v, by_start);
    if (bursts->n > 1) qsort(bursts->v, (size_t)bursts->n, sizeof *bursts->v, by_start);
    int64_t o = 0;
    for (int64_t k = 0; k < bursts->n; k++) {
        const sim_tspan *b = &bursts->v[k];
        uint64_t B = (uint64_t)b->who, D = b->end - b->start;
        while (o < owners->n && owners->v[o].end <= b->start) o++;
        for (int64_t j = o; j < owners->n && owners->v[j].start < b->end; j++) {
            const sim_tspan *w = &owners->v[j];
            uint64_t s = w->start > b->start ? w->start : b->start, e = w->end < b->end ? w->end : b->end;
            /* whole bytes, by cumulative shares: a burst's owners' shares add up to it */
            if (e > s && w->who >= 0 && w->who < n_owner)
                bytes[w->who] += (double)(B * (e - b->start) / D - B * (s - b->start) / D);
        }
    }
    return true;
}
