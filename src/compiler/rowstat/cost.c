/* The row-stationary engine's cost model (docs/rowstat.md "Timing"): the
 * rules the simulator (src/sim/rowstat/) implements cycle by cycle, here
 * event by event.  A pass is a set of max-plus recurrences over each PE
 * column's chain; a layer is its DMA queue on the DRAM channel and its
 * passes; a program is its instructions one after the other.  Every time
 * below is a cycle number; "rel" ones count from the pass's start T0.
 *
 * Nothing here calls the simulator: the DRAM channel's rules are written
 * again (chan_*), and every count of docs/rowstat.md "Statistics" is the
 * product of a pass's shape (pass_counts), so that "the model equals the
 * simulator" (enpu_rs_model_diff) checks both.  What they share is the
 * instruction's contract (include/easynpu/rowstat.h: passes, buffer
 * regions, DMA commands and their runs). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/rowstat/rs.h"
#include "isa/isa_internal.h"

#define NET_LAT 2 /* a global-buffer read in cycle t is in the PE in cycle t + 2 (row node, column node) */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* What a pass takes, relative to its start, by its shape. */
typedef struct pass_time {
    int64_t ne, nc, nf, ng, nk;   /* the shape (the key) */
    int64_t tf;                   /* and the cycle its filters are all in (rel; the key) */
    int64_t tc, tl, s_last;       /* first MAC, last MAC, last psum served */
} pass_time;

/* The output network serving psums that are ready at times t[0..n) (any
 * order), pbw a cycle, the oldest first: the cycle it serves the last.
 * Which column goes first among those ready together does not change that
 * cycle, so the times are counted rather than sorted (the mapping search
 * runs this for every pass shape it times).  INT64_MIN on no memory. */
static int64_t psum_drain(const int64_t *t, int64_t n, int64_t pbw) {
    if (n == 0) return INT64_MIN;
    int64_t lo = t[0], hi = t[0];
    for (int64_t k = 1; k < n; k++) lo = t[k] < lo ? t[k] : lo, hi = t[k] > hi ? t[k] : hi;
    int64_t *cnt = calloc((size_t)(hi - lo + 1), sizeof *cnt);
    if (!cnt) return INT64_MIN;
    for (int64_t k = 0; k < n; k++) cnt[t[k] - lo]++;
    /* cur: the cycle being filled, used: psums served in it so far */
    int64_t cur = INT64_MIN, used = 0;
    for (int64_t x = 0; x <= hi - lo; x++) {
        int64_t c = cnt[x];
        if (c == 0) continue;
        if (lo + x > cur) cur = lo + x, used = 0;
        /* c more psums, pbw a cycle, after the used ones */
        used += c;
        cur += (used - 1) / pbw;
        used = (used - 1) % pbw + 1;
    }
    free(cnt);
    return cur;
}

/* Pass ps's filters (*sum_p, over its horizontal sets) and channels
 * (*sumq, over its vertical sets). */
static void pass_sums(const enpu_rs_geom *g, const enpu_rs_pass *ps, int64_t *sum_p, int64_t *sumq) {
    *sum_p = *sumq = 0;
    for (int64_t h = 0; h < ps->tu; h++) *sum_p += enpu_rs_set_filters(g, ps, h);
    for (int64_t v = 0; v < ps->ru; v++) *sumq += enpu_rs_set_channels(g, ps, v);
}

/* The filter values of pass ps's stream: its filters' rows of its channels. */
static int64_t pass_nf(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_pass *ps) {
    int64_t sum_p, sumq;
    pass_sums(g, ps, &sum_p, &sumq);
    return sum_p * sumq * ps->nk * in->wk;
}

/* The timing of pass ps (docs/rowstat.md "A pass") whose filters are all in
 * TF cycles after its start: -1 when out of memory. */
static int pass_model(const enpu_arch *a, const enpu_rs_geom *g, const enpu_instr *in,
                      const enpu_rs_pass *ps, int64_t TF, pass_time *out) {
    const int64_t sh = in->stride_h, wk = in->wk, wo = in->wo;
    const int64_t D = a->rs_pe_pipeline, ibw = a->rs_ifmap_net_values;
    const int64_t pbw = a->rs_psum_net_values;
    const int64_t ne = ps->ne, nk = ps->nk, tu = ps->tu, ru = ps->ru, C = ru * nk;
    const int64_t R0 = in->stride_w < wk ? in->stride_w : wk;
    /* the ifmap rows of the strip the pass's PEs take: k = j*sh + i */
    const int64_t kmax = (ne - 1) * sh + nk;
    int64_t *kidx = malloc((size_t)kmax * sizeof *kidx);
    int64_t qv[64], qpre[65], ph[64];
    int64_t sum_p = 0, nK = 0;
    if (!kidx || ru > 64 || tu > 64) {
        free(kidx);
        return -1;
    }
    for (int64_t k = 0; k < kmax; k++) kidx[k] = -1;
    for (int64_t j = 0; j < ne; j++)
        for (int64_t i = 0; i < nk; i++) kidx[j * sh + i] = 0;
    for (int64_t k = 0; k < kmax; k++)
        if (kidx[k] >= 0) kidx[k] = nK++;
    qpre[0] = 0;
    for (int64_t v = 0; v < ru; v++) qv[v] = enpu_rs_set_channels(g, ps, v), qpre[v + 1] = qpre[v] + qv[v];
    for (int64_t h = 0; h < tu; h++) ph[h] = enpu_rs_set_filters(g, ps, h), sum_p += ph[h];
    const int64_t nhs = g->gpar ? tu : 1, sumq = qpre[ru];
    const int64_t cblk = nhs * nK * sumq; /* values per used input column */
    int64_t *F = malloc((size_t)C * sizeof *F), *E = malloc((size_t)C * sizeof *E);
    int64_t *pj = malloc((size_t)C * sizeof *pj), *base = malloc((size_t)C * sizeof *base);
    int64_t np = ne * g->nwo * sum_p;
    int64_t *pr = malloc((size_t)(np ? np : 1) * sizeof *pr);
    if (!F || !E || !pj || !base || !pr) {
        free(kidx), free(F), free(E), free(pj), free(base), free(pr);
        return -1;
    }
    int64_t tc = INT64_MAX, tl = 0, npr = 0;
    for (int64_t h = 0; h < tu; h++)
        for (int64_t j = 0; j < ne; j++) {
            const int64_t U = g->nwo * ph[h];
            /* value jj of PE rho arrives (poppable) in cycle A(rho, jj) */
            for (int64_t v = 0; v < ru; v++)
                for (int64_t i = 0; i < nk; i++)
                    base[v * nk + i] = nhs * nK * qpre[v] + ((g->gpar ? h : 0) * nK + kidx[j * sh + i]) * qv[v];
#define ARRIVE(rho, jj) \
    ((((jj) / qv[(rho) / nk]) * cblk + base[rho] + (jj) % qv[(rho) / nk]) / ibw + NET_LAT)
            /* the window fill: one value a cycle, each once it is there */
            for (int64_t r = 0; r < C; r++) {
                const int64_t L = qv[r / nk] * wk;
                int64_t P = -1;
                for (int64_t jj = 0; jj < L; jj++) P = max64(P + 1, ARRIVE(r, jj));
                F[r] = max64(P + 1, TF); /* the earliest first MAC of unit 0 */
                pj[r] = L;
            }
            for (int64_t u = 0; u < U; u++) {
                const int64_t m = u % ph[h], xo = u / ph[h];
                /* the last filter of a column replaces R0 columns of the
                 * window, of an image's last column the whole window */
                const bool trash = m == ph[h] - 1 && xo < g->nwo - 1, image_end = xo % wo == wo - 1;
                for (int64_t r = 0; r < C; r++) {
                    const int64_t q = qv[r / nk], L = q * wk, R = trash ? (image_end ? L : R0 * q) : 0;
                    int64_t lb = u == 0 ? F[r] : E[r] + 1;
                    if (r > 0) lb = max64(lb, E[r - 1] + D); /* E[r-1] is already unit u's */
                    /* the last MAC writes the link below, which holds unit u-1's psum
                     * until the PE below takes it with its first MAC */
                    int64_t link = (r < C - 1 && u > 0) ? F[r + 1] : INT64_MIN;
                    int64_t first = lb, last;
                    if (R > 0) first = max64(first, ARRIVE(r, pj[r]));
                    int64_t prev = first;
                    for (int64_t k = 1; k < R; k++) prev = max64(prev + 1, ARRIVE(r, pj[r] + k));
                    pj[r] += R;
                    prev += L - (R > 0 ? R : 1);
                    last = max64(prev, link);
                    if (L == 1) first = last;
                    F[r] = first;
                    E[r] = last;
                    if (u == 0 && first < tc) tc = first;
                    if (u == U - 1 && last > tl) tl = last;
                }
                pr[npr++] = E[C - 1] + D;
            }
#undef ARRIVE
        }
    /* the output network: the oldest psums first, pbw a cycle */
    const int64_t cur = psum_drain(pr, npr, pbw);
    if (npr > 0 && cur == INT64_MIN) {
        free(kidx), free(F), free(E), free(pj), free(base), free(pr);
        return -1;
    }
    out->tc = tc, out->tl = tl, out->s_last = cur;
    free(kidx), free(F), free(E), free(pj), free(base), free(pr);
    return 0;
}

/* ---- a layer ------------------------------------------------------------------------ */

/* The DRAM channel (docs/microarch.md §13.4, docs/offchip.md): one burst
 * in service at a time.  A burst of b bytes at DRAM byte x granted in cycle
 * t holds the channel for S = ceil(b / rate) cycles, rate = min(the
 * channel's bytes a cycle, the word's bytes), plus the row-miss cycles when
 * its bank, (x / row bytes) mod banks, has another row than x / (row bytes
 * x banks) open (it then opens it; a bank starts with none open); its data
 * is in place S + latency cycles after t.  A request is cut into bursts at
 * every multiple of the burst size of the DRAM's byte addresses.  The
 * engine's DMA is the channel's only requester, so there is no arbitration. */
typedef struct dram_chan {
    int64_t burst, rate, lat, rowb, banks, miss;
    /* log2 of burst, rate, rowb, banks when all four are powers of two, so
     * that the divisions below are shifts (-1: divide); the mapping search
     * times thousands of bursts per ifmap tile */
    int lb, lr, lrow, lbank;
    int64_t free_at;  /* the first cycle the channel may grant again */
    int64_t *open;    /* per bank: its open row, -1 */
} dram_chan;

static int chan_init(dram_chan *c, const enpu_arch *a) {
    const int64_t wb = enpu_arch_word_bytes(a);
    c->burst = a->dram_burst_bytes > 0 ? a->dram_burst_bytes : 1;
    c->rate = a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb;
    if (c->rate < 1) c->rate = 1;
    c->lat = a->dram_latency;
    c->rowb = a->dram_row_bytes > 0 ? a->dram_row_bytes : 1;
    c->banks = a->dram_banks > 0 ? a->dram_banks : 1;
    c->miss = a->dram_row_miss_cycles;
    c->free_at = 0;
    const int64_t v[4] = {c->burst, c->rate, c->rowb, c->banks};
    int l[4];
    bool pow2 = true;
    for (int i = 0; i < 4; i++) {
        l[i] = 0;
        while (((int64_t)1 << l[i]) < v[i] && l[i] < 62) l[i]++;
        if (((int64_t)1 << l[i]) != v[i]) pow2 = false;
    }
    c->lb = pow2 ? l[0] : -1, c->lr = l[1], c->lrow = l[2], c->lbank = l[3];
    c->open = malloc((size_t)c->banks * sizeof *c->open);
    if (!c->open) return -1;
    for (int64_t b = 0; b < c->banks; b++) c->open[b] = -1;
    return 0;
}

/* The burst granted at t for bytes [x, x + b): its service cycles. */
static int64_t chan_grant(dram_chan *c, int64_t x, int64_t b, int64_t t) {
    int64_t bank, row, s;
    if (c->lb >= 0) {
        bank = (x >> c->lrow) & (c->banks - 1), row = x >> (c->lrow + c->lbank);
        s = (b + c->rate - 1) >> c->lr;
    } else {
        bank = (x / c->rowb) % c->banks, row = x / (c->rowb * c->banks);
        s = (b + c->rate - 1) / c->rate;
    }
    if (c->open[bank] != row) s += c->miss, c->open[bank] = row;
    c->free_at = t + s;
    return s;
}

/* A DMA command's runs on the channel: its bursts back to back from cycle
 * t, each as soon as the channel is free (the engine grants one burst a
 * cycle, in the cycle the previous one's service ends). */
typedef struct dma_acc {
    dram_chan *ch;
    int64_t t;        /* the next burst's earliest grant */
    int64_t done;     /* the last burst's data in place */
    int64_t words;    /* DRAM words the runs touch (a word per run that touches it) */
    int64_t bytes;    /* bytes moved (the global buffer's side) */
    int64_t wb;
} dma_acc;

static void dma_run(void *ctx, const enpu_rs_run *r) {
    dma_acc *a = ctx;
    dram_chan *ch = a->ch;
    for (int64_t x = r->dram, end = r->dram + r->bytes; x < end;) {
        const int64_t lim = ch->lb >= 0 ? ((x >> ch->lb) + 1) << ch->lb : (x / ch->burst + 1) * ch->burst;
        const int64_t b = (lim < end ? lim : end) - x;
        const int64_t g = max64(a->t, ch->free_at);
        a->t = g + chan_grant(ch, x, b, g);
        a->done = a->t + ch->lat;
        x += b;
    }
    a->words += (r->dram + r->bytes + a->wb - 1) / a->wb - r->dram / a->wb;
    a->bytes += r->bytes;
}

/* Per-pass counts (docs/rowstat.md "Statistics"), from the pass's shape:
 * ne PE columns in each of tu horizontal sets (set h: ph filters), each
 * column a chain of ru vertical sets (set v: qv channels) of nk PEs. */
static void pass_counts(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_pass *ps,
                        rs_counts *c) {
    int64_t sum_p, sumq;
    pass_sums(g, ps, &sum_p, &sumq);
    const int64_t ne = ps->ne, nk = ps->nk, wk = in->wk, wo = in->wo, es = g->es;
    const int64_t chain = ps->ru * nk;
    /* a psum per output column and filter of each PE column; every PE of
     * the chain computes its share of it, a unit of q*wk MACs (its set's
     * channels by the kernel row's columns) */
    const int64_t npsum = ne * g->nwo * sum_p, units = npsum * chain;
    const int64_t macs = npsum * nk * sumq * wk;
    c->uops[es == 2 ? ENPU_UOP_MAC16 : ENPU_UOP_MAC] += macs;
    /* a unit's first MAC adds the psum from the link above (0 at the top),
     * its last puts the result in the PE's output register: the others
     * read and write the psum RAM */
    c->reads[ENPU_MEM_PSUM] += macs - units, c->writes[ENPU_MEM_PSUM] += macs - units;
    c->writes[ENPU_MEM_PSUM_LINK] += units;
    c->reads[ENPU_MEM_PSUM_LINK] += npsum * (chain - 1);
    /* the bottom PE's psums leave on the output network, once each */
    c->reads[ENPU_MEM_PSUM_NET] += npsum, c->writes[ENPU_MEM_PSUM_NET] += npsum;
    if (ps->final) c->uops[ENPU_UOP_REQUANT] += npsum;
    /* after a block's first pass the collector adds each psum to the kept one */
    if (!ps->first) c->uops[ENPU_UOP_ALU] += npsum;
    /* every MAC reads one value of each loop buffer; a PE of set v takes
     * each used input column's qv values of its input row (the window, then
     * the replacements) through its FIFO into its ifmap loop buffer, and its
     * set's filters' rows into its filter loop buffer */
    const int64_t ideliv = ne * ps->tu * nk * g->n * g->ncols * sumq, fdeliv = ne * nk * wk * sum_p * sumq;
    c->reads[ENPU_MEM_IFMAP_LB] += macs, c->writes[ENPU_MEM_IFMAP_LB] += ideliv;
    c->reads[ENPU_MEM_FILTER_LB] += macs, c->writes[ENPU_MEM_FILTER_LB] += fdeliv;
    c->reads[ENPU_MEM_PE_FIFO] += ideliv, c->writes[ENPU_MEM_PE_FIFO] += ideliv;
    /* the networks: the ifmap stream sends each used input column of each
     * used input row (padding included) to each vertical set and, with
     * gpar, each horizontal set; the filter stream the block */
    int64_t nK = 0, kok = 0;
    for (int64_t k = 0; k < (ne - 1) * in->stride_h + nk; k++) {
        bool used = false;
        for (int64_t j = 0; j < ne && !used; j++) used = k - j * in->stride_h >= 0 && k - j * in->stride_h < nk;
        if (!used) continue;
        nK++;
        int64_t row = ps->y0 * in->stride_h - in->pad_top + ps->k0 + k;
        kok += row >= 0 && row < in->hi;
    }
    const int64_t nhs = g->gpar ? ps->tu : 1;
    int64_t cok = 0; /* used columns inside the input */
    for (int64_t xo = 0, x = -1; xo < wo; xo++)
        for (int64_t s = 0; s < wk; s++) {
            int64_t col = xo * in->stride_w + s;
            if (col <= x) continue;
            x = col;
            cok += col >= in->pad_left && col < in->pad_left + in->wi;
        }
    const int64_t ni = g->n * g->ncols * nhs * nK * sumq, nf = sum_p * sumq * nk * wk;
    /* sent once by the global buffer (read); an ifmap value passes the row
     * nodes of its vertical set's nk rows, a filter value its PE row's
     * (written: that row's bus is driven) */
    c->reads[ENPU_MEM_NOC] += ni + nf;
    c->writes[ENPU_MEM_NOC] += ni * nk + nf;
    /* the global buffer: the ifmap values inside the input, the filters,
     * the psums of the earlier passes, and on the last pass the block's
     * (bias, M, S) and its outputs */
    c->reads[ENPU_MEM_GLB] += (g->n * cok * nhs * kok * sumq + nf) * es;
    if (!ps->first) c->reads[ENPU_MEM_GLB] += npsum * g->psum_bytes;
    if (ps->final) {
        c->reads[ENPU_MEM_GLB] += enpu_rs_block_channels(g, ps) * ENPU_RS_PARAM_BYTES;
        c->writes[ENPU_MEM_GLB] += npsum * es;
    } else {
        c->writes[ENPU_MEM_GLB] += npsum * g->psum_bytes;
    }
}

/* The body of rs_conv `in` from cycle B (after its configuration) on DRAM
 * channel d: returns the first cycle after it; adds its counts to c. */
/* The timing of pass ps by its shape and the cycle its filters are all in,
 * through the memo (up to 512 keys: two values of each of the five shape
 * keys, times the cycles the filters come in at, which filter banks vary
 * from pass to pass); -1 when out of memory.  fl_start: the
 * cycle its filter stream starts, relative to its start (0, or before it
 * with filter banks).  A PE's first MAC follows its first window value,
 * which the ifmap network delivers NET_LAT cycles after the start at the
 * earliest, so filters in before that count as in then. */
static const pass_time *pass_lookup(const enpu_arch *a, const enpu_rs_geom *g, const enpu_instr *in,
                                    const enpu_rs_pass *ps, int64_t fl_start, pass_time *memo, int *nmemo,
                                    pass_time *fresh) {
    const int64_t tf = max64(fl_start + (pass_nf(g, in, ps) - 1) / a->rs_filter_net_values + NET_LAT, NET_LAT);
    for (int i = 0; i < *nmemo; i++)
        if (memo[i].ne == ps->ne && memo[i].nc == ps->nc && memo[i].nf == ps->nf && memo[i].ng == ps->ng &&
            memo[i].nk == ps->nk && memo[i].tf == tf)
            return &memo[i];
    *fresh = (pass_time){ps->ne, ps->nc, ps->nf, ps->ng, ps->nk, tf, 0, 0, 0};
    if (pass_model(a, g, in, ps, tf, fresh) != 0) return NULL;
    if (*nmemo < 512) {
        memo[(*nmemo)++] = *fresh;
        return &memo[*nmemo - 1];
    }
    return fresh;
}

/* A pass's cycles from its start to its done (its last psum in the buffer). */
static int64_t pass_span(const enpu_arch *a, const enpu_rs_pass *ps, const pass_time *pt) {
    return pt->s_last + 1 + (ps->final ? a->requant_latency : 0);
}

static int64_t layer_model(const enpu_arch *a, const enpu_instr *in, dram_chan *d, int64_t B,
                           int64_t limit, rs_counts *c) {
    enpu_rs_geom g;
    enpu_err e = {0};
    if (enpu_rs_geom_of(a, in, &g, &e) != 0) return -1;
    int64_t ncmd;
    enpu_rs_cmd *cmd = enpu_rs_commands(&g, in, &ncmd, &e);
    int64_t *pd = malloc((size_t)g.n_passes * sizeof *pd), *fdone = malloc((size_t)g.n_passes * sizeof *fdone);
    /* with a limit: each pass's bound (its span, its filter stream), kept for the pass loop */
    int64_t *lbs = limit < INT64_MAX ? malloc((size_t)g.n_passes * 2 * sizeof *lbs) : NULL;
    pass_time memo[512];
    int nmemo = 0;
    if (!cmd || !pd || !fdone || (limit < INT64_MAX && !lbs)) {
        free(cmd), free(pd), free(fdone), free(lbs);
        return -1;
    }
    const bool banked = enpu_rs_filter_banked(a, in, &g);
    for (int64_t k = 0; k < g.n_passes; k++) fdone[k] = B;
    /* With a limit (the mapping search's branch and bound): the passes run
     * one after the other, each at least its span, so the layer ends no
     * earlier than the cycle a pass ends plus the spans of the passes after
     * it (with filter banks, the spans of passes whose filters are in
     * before they start, but the first's; and no earlier than the filter
     * network's streams one after the other, each NET_LAT + 1 cycles after
     * the previous one's last value, the last pass's last psum at least
     * NET_LAT + 1 after its own: docs/rowstat.md "Filter banks"); once that
     * reaches the limit, the limit is the answer. */
    int64_t rest = 0, streams = 0;
    for (int64_t k = 0; limit < INT64_MAX && k < g.n_passes; k++) {
        enpu_rs_pass ps;
        pass_time fresh;
        enpu_rs_pass_of(&g, in, k, &ps);
        const int64_t nf = pass_nf(&g, in, &ps);
        const pass_time *pt = pass_lookup(a, &g, in, &ps, banked && k > 0 ? -nf : 0, memo, &nmemo, &fresh);
        if (!pt) {
            free(cmd), free(pd), free(fdone), free(lbs);
            return -1;
        }
        lbs[2 * k] = pass_span(a, &ps, pt);
        lbs[2 * k + 1] = (nf - 1) / a->rs_filter_net_values + NET_LAT + 1;
        rest += lbs[2 * k], streams += lbs[2 * k + 1];
    }
    if (limit < INT64_MAX && B + max64(rest, banked ? streams : 0) >= limit) {
        free(cmd), free(pd), free(fdone), free(lbs);
        return limit;
    }
    dma_acc da = {d, B, B, 0, 0, g.wb};
    int64_t ci = 0, prev = B, end = B, chan = B; /* chan: the DMA engine may issue from here */
    int64_t flast = B;                           /* the previous pass's last filter value sent */
    for (int64_t k = 0; k <= g.n_passes; k++) {
        /* the commands the pass needs (after the last pass: the stores left) */
        int64_t ready = prev;
        for (; ci < ncmd && cmd[ci].need <= k; ci++) {
            const enpu_rs_cmd *cc = &cmd[ci];
            da.t = max64(chan, cc->dep >= 0 ? pd[cc->dep] : B);
            da.words = da.bytes = 0;
            da.done = da.t;
            enpu_rs_cmd_runs(&g, in, cc, dma_run, &da);
            chan = da.t;
            ready = max64(ready, da.done);
            end = max64(end, da.done);
            if (cc->kind == ENPU_RS_LOAD_FILTERS) fdone[cc->what] = da.done;
            /* a store reads its bytes from the global buffer and writes the
             * DRAM's words; a load the other way round */
            if (cc->kind == ENPU_RS_STORE) {
                c->writes[ENPU_MEM_OFFCHIP] += da.words;
                c->reads[ENPU_MEM_GLB] += da.bytes;
            } else {
                c->reads[ENPU_MEM_OFFCHIP] += da.words;
                c->writes[ENPU_MEM_GLB] += da.bytes;
            }
        }
        if (k == g.n_passes) {
            c->act[ENPU_ACT_DMA_WAIT] += max64(end, prev) - prev;
            end = max64(end, prev);
            break;
        }
        int64_t T0 = ready;
        /* its filter stream starts at T0, or with filter banks as soon as
         * the other bank is free (pass k - 2 done), its filter block is in
         * the buffer and the previous pass's stream has left the network
         * (docs/rowstat.md "Filter banks") */
        int64_t S = T0;
        if (banked && k > 0) {
            int64_t s = max64(max64(flast + NET_LAT + 1, k >= 2 ? pd[k - 2] : B), fdone[k]);
            if (s < T0) S = s;
        }
        enpu_rs_pass ps;
        pass_time fresh;
        enpu_rs_pass_of(&g, in, k, &ps);
        const int64_t nf = pass_nf(&g, in, &ps);
        const pass_time *pt = pass_lookup(a, &g, in, &ps, S - T0, memo, &nmemo, &fresh);
        if (!pt) {
            free(cmd), free(pd), free(fdone), free(lbs);
            return -1;
        }
        flast = S + (nf - 1) / a->rs_filter_net_values;
        int64_t PD = T0 + pass_span(a, &ps, pt);
        if (limit < INT64_MAX) {
            /* the bounds of the passes after this one */
            rest -= lbs[2 * k], streams -= lbs[2 * k + 1];
            if (max64(PD + rest, flast + streams + NET_LAT + 1) >= limit) {
                free(cmd), free(pd), free(fdone), free(lbs);
                return limit;
            }
        }
        c->act[ENPU_ACT_DMA_WAIT] += T0 - prev;
        c->act[ENPU_ACT_PIPELINE_FILL] += pt->tc;
        c->act[ENPU_ACT_COMPUTE] += pt->tl - pt->tc + 1;
        c->act[ENPU_ACT_OFMAP_DRAIN] += PD - (T0 + pt->tl + 1);
        pass_counts(&g, in, &ps, c);
        pd[k] = PD;
        prev = PD;
    }
    free(cmd), free(pd), free(fdone), free(lbs);
    return end;
}

/* ---- instructions and programs ---------------------------------------------------------- */

/* Instruction `in` from cycle t (its fetch), a sync's host op taking `host`
 * host CPU cycles (enpu_sync_host_cycles); returns the cycle after it. */
static int64_t instr_model(const enpu_arch *a, const enpu_instr *in, int64_t host, dram_chan *d, int64_t t,
                           int64_t limit, rs_counts *c) {
    int64_t ctl = a->instr_fetch_cycles + a->decode_cycles;
    /* the fetch reads the instruction's bus words out of the ITCM */
    c->reads[ENPU_MEM_ITCM] += (ENPU_INSTR_BITS + a->bus_bits - 1) / a->bus_bits;
    if (in->opcode == ENPU_OPC_SYNC) ctl += a->host_sync_cycles;
    if (in->opcode == ENPU_OPC_RS_CONV) ctl += a->rs_config_cycles;
    c->act[ENPU_ACT_CONTROLLER] += ctl;
    if (in->opcode == ENPU_OPC_SYNC) {
        c->act[ENPU_ACT_HOST] += host;
        return t + ctl + host;
    }
    if (in->opcode != ENPU_OPC_RS_CONV) return t + ctl;
    return layer_model(a, in, d, t + ctl, limit, c);
}

int64_t rs_model_program(const enpu_program *p, rs_counts *cnt) {
    dram_chan d;
    if (chan_init(&d, &p->arch) != 0) return -1;
    int64_t t = 0;
    for (int i = 0; i < p->n_instr && t >= 0; i++) {
        rs_counts c;
        memset(&c, 0, sizeof c);
        t = instr_model(&p->arch, &p->instr[i], enpu_sync_host_cycles(p, i), &d, t, INT64_MAX, &c);
        if (cnt) cnt[i] = c;
    }
    free(d.open);
    return t;
}

int64_t rs_model_instr(const enpu_arch *a, const enpu_instr *in, rs_counts *c) {
    return rs_model_instr_limit(a, in, INT64_MAX, c);
}

int64_t rs_model_instr_limit(const enpu_arch *a, const enpu_instr *in, int64_t limit, rs_counts *c) {
    enpu_err e = {0};
    if (enpu_rs_validate(a, in, &e) != 0) return -1;
    dram_chan d;
    if (chan_init(&d, a) != 0) return -1;
    rs_counts tmp;
    memset(&tmp, 0, sizeof tmp);
    int64_t t = instr_model(a, in, 0, &d, 0, limit, &tmp);
    free(d.open);
    if (c) *c = tmp;
    return t;
}

int64_t enpu_rs_model_program(const enpu_program *p, int64_t *act, int64_t *rd, int64_t *wr) {
    rs_counts *c = calloc((size_t)(p->n_instr ? p->n_instr : 1), sizeof *c);
    if (!c) return -1;
    int64_t t = rs_model_program(p, c);
    for (int i = 0; i < p->n_instr; i++) {
        for (int k = 0; k < ENPU_ACT_COUNT; k++)
            if (act) act[(size_t)i * ENPU_ACT_COUNT + (size_t)k] = c[i].act[k];
        for (int m = 0; m < ENPU_MEM_COUNT; m++) {
            if (rd) rd[(size_t)i * ENPU_MEM_COUNT + (size_t)m] = c[i].reads[m];
            if (wr) wr[(size_t)i * ENPU_MEM_COUNT + (size_t)m] = c[i].writes[m];
        }
    }
    free(c);
    return t;
}

int64_t enpu_rs_model_stats(const enpu_program *p, enpu_layer_stats *rows) {
    rs_counts *c = calloc((size_t)(p->n_instr ? p->n_instr : 1), sizeof *c);
    if (!c) return -1;
    int64_t t = rs_model_program(p, c);
    for (int i = 0; i < p->n_instr && t >= 0; i++) {
        enpu_layer_stats *r = &rows[i];
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            r->activity[k] += (uint64_t)c[i].act[k];
            r->cycles += (uint64_t)c[i].act[k];
        }
        for (int m = 0; m < ENPU_MEM_COUNT; m++) {
            r->reads[m] += (uint64_t)c[i].reads[m];
            r->writes[m] += (uint64_t)c[i].writes[m];
        }
        for (int o = 0; o < ENPU_UOP_COUNT; o++) r->uops[o] += (uint64_t)c[i].uops[o];
    }
    free(c);
    return t;
}

/* ---- the model against a run ------------------------------------------------------------- */

typedef struct diff_ctx {
    int n;          /* figures that differ */
    char *msg;
    size_t cap;
} diff_ctx;

static void differ(diff_ctx *d, const enpu_program *p, int i, const enpu_layer_stats *s, const char *what,
                   uint64_t sim, uint64_t model) {
    if (sim == model) return;
    if (d->n++ == 0 && d->msg && d->cap)
        snprintf(d->msg, d->cap, "instruction %d '%s' (%s): %s: simulated %" PRIu64 ", modelled %" PRIu64, i,
                 p->layers && p->layers[i].name ? p->layers[i].name : s->name, s->op, what, sim, model);
}

int enpu_rs_model_diff(const enpu_program *p, const enpu_layer_stats *sim, uint64_t sim_cycles, char *msg,
                       size_t n) {
    diff_ctx d = {0, msg, n};
    if (msg && n) msg[0] = 0;
    enpu_layer_stats *m = calloc((size_t)(p->n_instr ? p->n_instr : 1), sizeof *m);
    if (!m) {
        if (msg && n) snprintf(msg, n, "out of memory");
        return -1;
    }
    int64_t t = enpu_rs_model_stats(p, m);
    char what[64];
    for (int i = 0; i < p->n_instr && t >= 0; i++) {
        const enpu_layer_stats *s = &sim[i], *e = &m[i];
        /* the activities first: a time that differs is named by its activity */
        for (int k = 0; k < ENPU_ACT_COUNT; k++)
            differ(&d, p, i, s, enpu_activity_name((enpu_activity)k), s->activity[k], e->activity[k]);
        differ(&d, p, i, s, "cycles", s->cycles, e->cycles);
        for (int k = 0; k < ENPU_MEM_COUNT; k++) {
            snprintf(what, sizeof what, "%s reads", enpu_memory_name((enpu_memory)k));
            differ(&d, p, i, s, what, s->reads[k], e->reads[k]);
            snprintf(what, sizeof what, "%s writes", enpu_memory_name((enpu_memory)k));
            differ(&d, p, i, s, what, s->writes[k], e->writes[k]);
        }
        for (int o = 0; o < ENPU_UOP_COUNT; o++)
            differ(&d, p, i, s, enpu_unit_op_name((enpu_unit_op)o), s->uops[o], e->uops[o]);
    }
    free(m);
    if (t < 0) {
        if (msg && n) snprintf(msg, n, "out of memory");
        return -1;
    }
    if (d.n == 0 && sim_cycles != (uint64_t)t && msg && n)
        snprintf(msg, n, "total: simulated %" PRIu64 " cycles, modelled %" PRId64, sim_cycles, t);
    d.n += sim_cycles != (uint64_t)t;
    return d.n;
}
