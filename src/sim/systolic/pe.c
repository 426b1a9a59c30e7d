/* One processing element (the design's pe.v): an activation register fed from
 * the west, a weight register fed from the north, a signed accumulator of
 * sya_acc_bits.  Output stationary: the PE keeps its dot product until the
 * unit's last step, then hands it to its row's output MUX.  A MAC reads both
 * operand registers and writes the accumulator, which it reads too unless it
 * is the dot product's first; handing the result on reads it once more
 * (docs/systolic.md "Statistics"; its row tallies them, pe_row.c). */
#include "sim/systolic/sya.h"

int sya_pe_step(sya_engine *e, sya_pe *p, int r, int c, sya_res *out) {
    if (p->a.seq < 0 || p->w.seq < 0) return 0;
    /* the skew puts step k of the same unit on both operands, always */
    if (p->a.seq != p->w.seq || p->a.k != p->w.k)
        return enpu_fail(e->err, ENPU_E_INVALID,
                         "systolic array: PE (%d,%d) at cycle %" PRId64 " got activation step %d of unit %d "
                         "and weight step %d of unit %d (internal skew error)",
                         r, c, e->t, (int)p->a.k, (int)p->a.seq, (int)p->w.k, (int)p->w.seq);
    int64_t prod = (int64_t)p->a.v * p->w.v;
    p->acc = p->a.k == 0 ? prod : p->acc + prod;
    if (p->acc < e->acc_lo || p->acc > e->acc_hi) {
        sya_job *j = sya_job_of(e, p->a.seq);
        return sya_acc_error(e->sim, j->instr, j->u.p0 + r,
                             enpu_sya_out_channel(&e->lay[j->instr].s, &j->u, c), p->acc, e->err);
    }
    const int flags = SYA_PE_MAC | (p->a.k == 0 ? SYA_PE_FIRST : 0);
    if (!p->a.last) return flags;
    out->seq = p->a.seq, out->r = r, out->c = c, out->acc = p->acc;
    return flags | SYA_PE_RESULT;
}
