/* The row-stationary engine's cost model (docs/rowstat.md "Timing"): the
 * rules the simulator (src/sim/rowstat/) implements cycle by cycle, here
 * event by event.  A pass is a set of max-plus recurrences over each PE
 * column's chain; a layer is its DMA queue on the shared DRAM channel and
 * its passes; a program is its instructions one after the other.  Every
 * time below is a cycle number; "rel" ones count from the pass's start T0. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/rowstat/rs.h"
#include "isa/isa_internal.h"
#include "sim/dram.h"

#define NET_LAT 2 /* a global-buffer read in cycle t is in the PE in cycle t + 2 (row node, column node) */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* What a pass takes, relative to its start, by its shape. */
typedef struct pass_time {
    int64_t ne, nc, nf, ng, nk;   /* the shape (the key) */
    int64_t tc, tl, s_last;       /* first MAC, last MAC, last psum served */
} pass_time;

typedef struct prod {
    int64_t t;
    int col;
} prod;

static int prod_cmp(const void *pa, const void *pb) {
    const prod *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->col - b->col;
}

/* The timing of pass ps (docs/rowstat.md "A pass"): -1 when out of memory. */
static int pass_model(const enpu_arch *a, const enpu_rs_geom *g, const enpu_instr *in,
                      const enpu_rs_pass *ps, pass_time *out) {
    const int64_t sh = in->stride_h, wk = in->wk, wo = in->wo;
    const int64_t D = a->rs_pe_pipeline, ibw = a->rs_ifmap_net_values, fbw = a->rs_filter_net_values;
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
    const int64_t NF = sum_p * sumq * nk * wk, TF = (NF - 1) / fbw + NET_LAT;
    int64_t *F = malloc((size_t)C * sizeof *F), *E = malloc((size_t)C * sizeof *E);
    int64_t *pj = malloc((size_t)C * sizeof *pj), *base = malloc((size_t)C * sizeof *base);
    int64_t np = ne * wo * sum_p;
    prod *pr = malloc((size_t)(np ? np : 1) * sizeof *pr);
    if (!F || !E || !pj || !base || !pr) {
        free(kidx), free(F), free(E), free(pj), free(base), free(pr);
        return -1;
    }
    int64_t tc = INT64_MAX, tl = 0, npr = 0;
    for (int64_t h = 0; h < tu; h++)
        for (int64_t j = 0; j < ne; j++) {
            const int64_t U = wo * ph[h];
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
                const bool trash = m == ph[h] - 1 && xo < wo - 1;
                for (int64_t r = 0; r < C; r++) {
                    const int64_t q = qv[r / nk], L = q * wk, R = trash ? R0 * q : 0;
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
                pr[npr++] = (prod){E[C - 1] + D, (int)(h * ne + j)};
            }
#undef ARRIVE
        }
    /* the output network: the oldest psums first (then by column), pbw a cycle */
    qsort(pr, (size_t)npr, sizeof *pr, prod_cmp);
    int64_t cur = INT64_MIN, cnt = 0;
    for (int64_t k = 0; k < npr; k++) {
        if (pr[k].t > cur) cur = pr[k].t, cnt = 0;
        if (cnt == pbw) cur++, cnt = 0;
        cnt++;
    }
    out->tc = tc, out->tl = tl, out->s_last = cur;
    free(kidx), free(F), free(E), free(pj), free(base), free(pr);
    return 0;
}

/* ---- a layer ------------------------------------------------------------------------ */

typedef struct dma_acc {
    sim_dram *d;
    int64_t t;        /* the next burst's earliest grant */
    int64_t done;     /* completion of the last burst */
    int64_t words;    /* DRAM words touched */
    int64_t wb;
} dma_acc;

static void dma_run(void *ctx, const enpu_rs_run *r) {
    dma_acc *a = ctx;
    for (int64_t x = r->dram, end = r->dram + r->bytes; x < end;) {
        int64_t b = sim_dram_burst(a->d, x, end);
        int64_t g = max64(a->t, (int64_t)a->d->free_at);
        uint64_t s = sim_dram_grant(a->d, 1, x, b, (uint64_t)g, NULL);
        a->t = g + (int64_t)s;
        a->done = a->t + a->d->latency;
        x += b;
    }
    a->words += (r->dram + r->bytes + a->wb - 1) / a->wb - r->dram / a->wb;
}

/* Per-pass counts (docs/rowstat.md "Statistics"). */
static void pass_counts(const enpu_rs_geom *g, const enpu_instr *in, const enpu_rs_pass *ps,
                        rs_counts *c) {
    int64_t sum_p = 0, sumq = 0;
    for (int64_t h = 0; h < ps->tu; h++) sum_p += enpu_rs_set_filters(g, ps, h);
    for (int64_t v = 0; v < ps->ru; v++) sumq += enpu_rs_set_channels(g, ps, v);
    const int64_t ne = ps->ne, nk = ps->nk, wk = in->wk, wo = in->wo, es = g->es;
    const int64_t pes = ne * nk; /* per horizontal set */
    int64_t macs = pes * wo * wk * sum_p * sumq;
    int64_t deliv = pes * ps->tu * g->ncols * sumq;
    int64_t fvals = pes * wk * sum_p * sumq;
    c->reads[ENPU_MEM_PSUM] += macs, c->writes[ENPU_MEM_PSUM] += macs;
    c->reads[ENPU_MEM_IFMAP_LB] += macs, c->writes[ENPU_MEM_IFMAP_LB] += deliv;
    c->reads[ENPU_MEM_FILTER_LB] += macs, c->writes[ENPU_MEM_FILTER_LB] += fvals;
    c->reads[ENPU_MEM_PE_FIFO] += deliv, c->writes[ENPU_MEM_PE_FIFO] += deliv;
    /* the networks: the ifmap stream (padding included), the filters, the psums out */
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
    int64_t ni = g->ncols * nhs * nK * sumq, nf = sum_p * sumq * nk * wk, npsum = ne * wo * sum_p;
    /* sent once by the global buffer (read), taken by every PE the tags
     * match (written): the multicast's reuse is their ratio */
    c->reads[ENPU_MEM_NOC] += ni + nf + npsum;
    c->writes[ENPU_MEM_NOC] += deliv + fvals + npsum;
    c->reads[ENPU_MEM_GLB] += (cok * nhs * kok * sumq + nf) * es;
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
static int64_t layer_model(const enpu_arch *a, const enpu_instr *in, sim_dram *d, int64_t B,
                           rs_counts *c) {
    enpu_rs_geom g;
    enpu_err e = {0};
    if (enpu_rs_geom_of(a, in, &g, &e) != 0) return -1;
    int64_t ncmd;
    enpu_rs_cmd *cmd = enpu_rs_commands(&g, in, &ncmd, &e);
    int64_t *pd = malloc((size_t)g.n_passes * sizeof *pd);
    pass_time memo[32];
    int nmemo = 0;
    if (!cmd || !pd) {
        free(cmd), free(pd);
        return -1;
    }
    dma_acc da = {d, B, B, 0, g.wb};
    int64_t ci = 0, prev = B, end = B, chan = B; /* chan: the DMA engine may issue from here */
    for (int64_t k = 0; k <= g.n_passes; k++) {
        /* the commands the pass needs (after the last pass: the stores left) */
        int64_t ready = prev;
        for (; ci < ncmd && cmd[ci].need <= k; ci++) {
            const enpu_rs_cmd *cc = &cmd[ci];
            da.t = max64(chan, cc->dep >= 0 ? pd[cc->dep] : B);
            da.words = 0;
            da.done = da.t;
            enpu_rs_cmd_runs(&g, in, cc, dma_run, &da);
            chan = da.t;
            ready = max64(ready, da.done);
            end = max64(end, da.done);
            if (cc->kind == ENPU_RS_STORE) {
                c->writes[ENPU_MEM_OFFCHIP] += da.words;
            } else {
                c->reads[ENPU_MEM_OFFCHIP] += da.words;
                c->writes[ENPU_MEM_GLB] += da.words * g.wb;
            }
        }
        if (k == g.n_passes) {
            c->act[ENPU_ACT_DMA_WAIT] += max64(end, prev) - prev;
            end = max64(end, prev);
            break;
        }
        enpu_rs_pass ps;
        enpu_rs_pass_of(&g, in, k, &ps);
        const pass_time *pt = NULL;
        for (int i = 0; i < nmemo && !pt; i++)
            if (memo[i].ne == ps.ne && memo[i].nc == ps.nc && memo[i].nf == ps.nf && memo[i].ng == ps.ng &&
                memo[i].nk == ps.nk)
                pt = &memo[i];
        pass_time fresh = {ps.ne, ps.nc, ps.nf, ps.ng, ps.nk, 0, 0, 0};
        if (!pt) {
            if (pass_model(a, &g, in, &ps, &fresh) != 0) {
                free(cmd), free(pd);
                return -1;
            }
            if (nmemo < 32) memo[nmemo++] = fresh;
            pt = &fresh;
        }
        int64_t T0 = ready;
        int64_t PD = T0 + pt->s_last + 1 + (ps.final ? a->requant_latency : 0);
        c->act[ENPU_ACT_DMA_WAIT] += T0 - prev;
        c->act[ENPU_ACT_PIPELINE_FILL] += pt->tc;
        c->act[ENPU_ACT_COMPUTE] += pt->tl - pt->tc + 1;
        c->act[ENPU_ACT_OFMAP_DRAIN] += PD - (T0 + pt->tl + 1);
        pass_counts(&g, in, &ps, c);
        pd[k] = PD;
        prev = PD;
    }
    /* the stores' global-buffer reads: the bytes of the output blocks */
    c->reads[ENPU_MEM_GLB] += in->ho * in->wo * in->co * g.es;
    free(cmd), free(pd);
    return end;
}

/* ---- instructions and programs ---------------------------------------------------------- */

/* Instruction `in` from cycle t (its fetch), a sync's host op taking `host`
 * host CPU cycles (enpu_sync_host_cycles); returns the cycle after it. */
static int64_t instr_model(const enpu_arch *a, const enpu_instr *in, int64_t host, sim_dram *d, int64_t t,
                           rs_counts *c) {
    int64_t ctl = a->instr_fetch_cycles + a->decode_cycles;
    c->reads[ENPU_MEM_ITCM] += ENPU_INSTR_BYTES / 16;
    if (in->opcode == ENPU_OPC_SYNC) ctl += a->host_sync_cycles;
    if (in->opcode == ENPU_OPC_RS_CONV) ctl += a->rs_config_cycles;
    c->act[ENPU_ACT_CONTROLLER] += ctl;
    if (in->opcode == ENPU_OPC_SYNC) {
        c->act[ENPU_ACT_HOST] += host;
        return t + ctl + host;
    }
    if (in->opcode != ENPU_OPC_RS_CONV) return t + ctl;
    return layer_model(a, in, d, t + ctl, c);
}

int64_t rs_model_program(const enpu_program *p, rs_counts *cnt) {
    sim_dram d;
    enpu_err e = {0};
    if (sim_dram_init(&d, &p->arch, 1, &e) != 0) return -1;
    int64_t t = 0;
    for (int i = 0; i < p->n_instr && t >= 0; i++) {
        rs_counts c;
        memset(&c, 0, sizeof c);
        t = instr_model(&p->arch, &p->instr[i], enpu_sync_host_cycles(p, i), &d, t, &c);
        if (cnt) cnt[i] = c;
    }
    sim_dram_free(&d);
    return t;
}

int64_t rs_model_instr(const enpu_arch *a, const enpu_instr *in, rs_counts *c) {
    enpu_err e = {0};
    if (enpu_rs_validate(a, in, &e) != 0) return -1;
    sim_dram d;
    if (sim_dram_init(&d, a, 1, &e) != 0) return -1;
    rs_counts tmp;
    memset(&tmp, 0, sizeof tmp);
    int64_t t = instr_model(a, in, 0, &d, 0, &tmp);
    sim_dram_free(&d);
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
