/* A row of one bank's PEs (the design's pe_row.v): the activations move one PE
 * east per cycle, the weights come from the row above, and the row's output
 * MUX hands on one finished dot product per cycle -- the one its PEs produced
 * the cycle before (the skew makes the PEs of a row finish one per cycle).
 *
 * Only the PEs of the unit's rows and columns latch its values: the
 * configuration (the unit's points and filters) enables their operand
 * registers, so an activation stops after the unit's last column and a
 * weight after its last row (span) instead of crossing idle PEs.  Each value
 * latched is one operand-register write, one hop from the neighbour (or the
 * array's edge): docs/systolic.md "Statistics". */
#include "sim/systolic/sya.h"

void sya_tally_flush(sya_engine *e, sya_tally *t) {
    if (t->seq >= 0) {
        enpu_layer_stats *st = &e->sim->rows[sya_job_of(e, t->seq)->instr];
        st->writes[ENPU_MEM_PE_REG] += t->reg_w;
        st->reads[ENPU_MEM_PE_REG] += 2 * t->macs;
        st->uops[ENPU_UOP_MAC] += t->macs;
        st->writes[ENPU_MEM_ACC] += t->macs;
        /* read by every MAC but a dot product's first, and to hand it on */
        st->reads[ENPU_MEM_ACC] += t->macs - t->firsts + t->results;
    }
    t->seq = -1;
    t->reg_w = t->macs = t->firsts = t->results = 0;
}

int sya_row_step(sya_engine *e, int r, int bc, const sya_tok *west) {
    const int c0 = bc * e->NC, C = e->C;
    sya_pe *row = e->pe + (int64_t)r * C, *above = r > 0 ? row - C : NULL;
    /* the MUX: last cycle's result leaves for the requantizer */
    int64_t m = (int64_t)r * e->BC + bc;
    if (e->mux_has[m]) {
        sya_mux_emit(e, &e->mux_pend[m], e->t);
        e->mux_has[m] = false;
    }
    sya_tally t = e->tally; /* a local copy: the loop keeps it in registers */
    for (int c = c0 + e->NC - 1; c >= c0; c--) {
        sya_pe *p = &row[c];
        p->a = c > c0 ? row[c - 1].a : *west;
        if (above) p->w = above[c].w;
        else p->w = e->edge_w[(e->t % (e->Lw + 1)) * (int64_t)C + c];
        /* a value past the unit's columns (rows) is not latched: a bubble */
        if (p->a.seq >= 0) {
            if (c >= p->a.span) p->a.seq = -1;
            else if (t.seq == p->a.seq) t.reg_w++;
            else sya_tally_flush(e, &t), t.seq = p->a.seq, t.reg_w = 1;
        }
        if (p->w.seq >= 0) {
            if (r >= p->w.span) p->w.seq = -1;
            else if (t.seq == p->w.seq) t.reg_w++;
            else sya_tally_flush(e, &t), t.seq = p->w.seq, t.reg_w = 1;
        }
        sya_res res;
        int rc = sya_pe_step(e, p, r, c, &res);
        if (rc < 0) {
            sya_tally_flush(e, &t);
            e->tally = t;
            return rc;
        }
        if (!rc) continue;
        t.macs++;
        if (rc & SYA_PE_FIRST) t.firsts++;
        if (rc & SYA_PE_RESULT) {
            t.results++;
            if (e->mux_has[m])
                return enpu_fail(e->err, ENPU_E_INVALID,
                                 "systolic array: two results in one cycle for the MUX of row %d, bank "
                                 "column %d at cycle %" PRId64 " (internal scheduling error)",
                                 r, bc, e->t);
            e->mux_pend[m] = res;
            e->mux_has[m] = true;
        }
    }
    e->tally = t;
    return 0;
}
