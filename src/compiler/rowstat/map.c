/* The mapping search of the row-stationary back end (docs/rowstat.md "The
 * mapping search"): every mapping of a convolution onto the PE array that
 * enpu_rs_validate accepts (array, loop buffers, psum RAM, input FIFO, output
 * network, global buffer) is ranked by a quick estimate, and the best few by
 * the estimate are timed by the cost model (cost.c, equal to the simulator):
 * the fewest modelled cycles win. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/rowstat/rs.h"
#include "isa/isa_internal.h"

#define N_EXACT 12 /* mappings timed by the cost model */
#define N_VALS 64  /* candidate values per mapping field, at most */

typedef struct cand {
    enpu_instr in;
    double est;
} cand;

static int cand_cmp(const void *pa, const void *pb) {
    const cand *a = pa, *b = pb;
    return a->est < b->est ? -1 : a->est > b->est;
}

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

/* The cycles a mapping roughly takes: its passes (filters in, the first
 * window, its MACs, the chain's skew, the psums out), or its DRAM traffic
 * when that is longer. */
static double estimate(const enpu_arch *a, const enpu_instr *in, const enpu_rs_geom *g) {
    int64_t L = g->q * in->wk, U = in->wo * g->p, C = g->r * g->hf;
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

int rs_map_layer(const enpu_arch *a, enpu_instr *in, const char *what, int64_t *cycles,
                 enpu_err *err) {
    const int64_t G = in->groups, cpg = in->ci / G, opg = in->co / G;
    int64_t hfs[8], es_[N_VALS], ps[N_VALS], qs[N_VALS], ts[N_VALS], rs[N_VALS];
    int nhf = 0;
    int64_t hf0 = in->hk < a->rs_rows ? in->hk : a->rs_rows;
    for (int64_t f = enpu_ceil_div(in->hk, hf0); f <= enpu_ceil_div(in->hk, hf0) + 3 && nhf < 8; f++) {
        int64_t v = enpu_ceil_div(in->hk, f);
        if (v <= a->rs_rows && (nhf == 0 || hfs[nhf - 1] != v)) hfs[nhf++] = v;
    }
    int ne = block_sizes(in->ho, a->rs_cols, es_);
    int np = block_sizes(opg, a->rs_psum_depth, ps);
    int nq = block_sizes(cpg, a->rs_ifmap_lb_depth / in->wk, qs);
    static const int dbufs[] = {7, 3, 6, 2, 5, 1, 4, 0};
    cand *cs = NULL;
    size_t n = 0, cap = 0;
    for (int gp = 0; gp < (G >= 2 ? 2 : 1); gp++)
        for (int ih = 0; ih < nhf; ih++)
            for (int ie = 0; ie < ne; ie++)
                for (int ip = 0; ip < np; ip++)
                    for (int iq = 0; iq < nq; iq++) {
                        int64_t hf = hfs[ih], e = es_[ie], p = ps[ip], q = qs[iq];
                        int64_t tmax = a->rs_cols / e, rmax = a->rs_rows / hf;
                        int nt = block_sizes(gp ? G : enpu_ceil_div(opg, p), tmax, ts);
                        int nr = block_sizes(enpu_ceil_div(cpg, q), rmax, rs);
                        for (int it = 0; it < nt; it++)
                            for (int ir = 0; ir < nr; ir++) {
                                enpu_instr c = *in;
                                c.rs_e = e, c.rs_p = p, c.rs_q = q, c.rs_t = ts[it], c.rs_r = rs[ir];
                                c.rs_hf = hf, c.rs_gpar = gp;
                                enpu_err e2 = {0};
                                int k = 0;
                                for (; k < 8; k++) {
                                    c.rs_dbuf = dbufs[k];
                                    if (enpu_rs_validate(a, &c, &e2) == 0) break;
                                }
                                if (k == 8) continue;
                                enpu_rs_geom g;
                                enpu_rs_geom_of(a, &c, &g, &e2);
                                if (n == cap) {
                                    cap = cap ? cap * 2 : 256;
                                    cand *nc = realloc(cs, cap * sizeof *nc);
                                    if (!nc) {
                                        free(cs);
                                        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                                    }
                                    cs = nc;
                                }
                                cs[n++] = (cand){c, estimate(a, &c, &g)};
                            }
                    }
    if (n == 0) {
        /* the smallest mapping says what does not fit */
        enpu_instr c = *in;
        c.rs_e = c.rs_p = c.rs_q = c.rs_r = c.rs_t = 1;
        c.rs_hf = hf0, c.rs_gpar = 0, c.rs_dbuf = 0;
        enpu_err e2 = {0};
        enpu_rs_validate(a, &c, &e2);
        free(cs);
        return enpu_fail(err, ENPU_E_NOFIT, "layer '%s': no mapping fits arch '%s' (the smallest: %s)",
                         what, a->name, e2.msg);
    }
    qsort(cs, n, sizeof *cs, cand_cmp);
    int64_t best = -1;
    for (size_t i = 0; i < n && i < N_EXACT; i++) {
        int64_t t = rs_model_instr(a, &cs[i].in, NULL);
        if (t < 0) continue;
        if (best < 0 || t < best) {
            best = t;
            *in = cs[i].in;
        }
    }
    free(cs);
    if (best < 0) return enpu_fail(err, ENPU_E_NOMEM, "layer '%s': out of memory timing its mappings", what);
    *cycles = best;
    return 0;
}
