/* The tiling search: for each systolic layer, the points per unit (one per
 * array row, sya_nip), the filters per unit (one per column, sya_nf) and the
 * loop order (sya_loop) that minimise the cost model's cycles.  Fewer points
 * or filters than the array has shorten the skewed block's tail and the
 * output MUX's turn; balanced groups leave no short last unit; the filter
 * tiles outer let the weight stream continue across point groups.  The SRAM
 * limits are the memory plan's (plan.c): every map and weight is on chip.
 * enpu_compile_opts.naive_tiling takes the design's fixed configuration
 * instead: whole units (as many points and filters as the array has rows
 * and columns), point groups outer. */
#include "compiler/systolic/sya_cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Candidate sizes for n items on `lanes` lanes: all of them at once, the
 * balanced size, and whole banks of `bank` lanes. */
static int candidates(int64_t n, int64_t lanes, int64_t bank, int64_t *out) {
    int k = 0;
    int64_t full = n < lanes ? n : lanes;
    out[k++] = full;
    int64_t bal = cdiv(n, cdiv(n, lanes));
    if (bal != full) out[k++] = bal;
    for (int64_t m = bank; m < full && k < 8; m += bank)
        if (m != bal) out[k++] = m;
    return k;
}

int sc_tile(sc *c) {
    const enpu_arch *a = c->a;
    const int64_t R = enpu_arch_sya_rows(a), C = enpu_arch_sya_cols(a);
    for (int i = 0; i < c->nl; i++) {
        sc_layer *l = &c->L[i];
        if (l->kind != SC_SYA) continue;
        enpu_instr *in = &l->ins;
        in->sya_nip = in->sya_nf = 1;
        enpu_sya_shape s;
        enpu_sya_shape_of(in, &s);
        int64_t nips[8], nfs[8];
        int nn = candidates(s.N, R, a->sya_rows, nips);
        int nm = s.dw ? 1 : candidates(s.F, C, a->sya_cols, nfs);
        if (s.dw) nfs[0] = 1;
        /* naive: the design's fixed configuration, whole units, point groups
         * outer (LopOrd 0) */
        if (c->o->naive_tiling) nn = nm = 1;
        int64_t best = -1;
        enpu_instr b = *in;
        for (int x = 0; x < nn; x++)
            for (int y = 0; y < nm; y++)
                for (int loop = 0; loop < (c->o->naive_tiling ? 1 : 2); loop++) {
                    enpu_instr t = *in;
                    t.sya_nip = nips[x], t.sya_nf = nfs[y], t.sya_loop = loop;
                    int64_t cy = sc_cost_layer(a, &t);
                    if (best < 0 || cy < best) best = cy, b = t;
                }
        *in = b;
    }
    return 0;
}
