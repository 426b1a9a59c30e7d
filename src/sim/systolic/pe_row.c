/* A row of one bank's PEs (the design's pe_row.v): the activations move one PE
 * east per cycle, the weights come from the row above, and the row's output
 * MUX hands on one finished dot product per cycle -- the one its PEs produced
 * the cycle before (the skew makes the PEs of a row finish one per cycle). */
#include "sim/systolic/sya.h"

int sya_row_step(sya_engine *e, int r, int bc, const sya_tok *west) {
    const int c0 = bc * e->NC, C = e->C;
    sya_pe *row = e->pe + (int64_t)r * C, *above = r > 0 ? row - C : NULL;
    /* the MUX: last cycle's result leaves for the requantizer */
    int64_t m = (int64_t)r * e->BC + bc;
    if (e->mux_has[m]) {
        sya_mux_emit(e, &e->mux_pend[m], e->t);
        e->mux_has[m] = false;
    }
    for (int c = c0 + e->NC - 1; c >= c0; c--) {
        sya_pe *p = &row[c];
        p->a = c > c0 ? row[c - 1].a : *west;
        if (above) p->w = above[c].w;
        else p->w = e->edge_w[(e->t % (e->Lw + 1)) * (int64_t)C + c];
        sya_res res;
        int rc = sya_pe_step(e, p, r, c, &res);
        if (rc < 0) return rc;
        if (rc == 1) {
            if (e->mux_has[m])
                return enpu_fail(e->err, ENPU_E_INVALID,
                                 "systolic array: two results in one cycle for the MUX of row %d, bank "
                                 "column %d at cycle %" PRId64 " (internal scheduling error)",
                                 r, bc, e->t);
            e->mux_pend[m] = res;
            e->mux_has[m] = true;
        }
    }
    return 0;
}
