/* One bank of NUM_ROW x NUM_COL PEs (the design's pe_bank.v).  Its rows step
 * from south to north so that each takes the weights its northern
 * neighbour held in the previous cycle; the activations of its west column
 * come from the bank to the west (its east column's previous values) or
 * from the array's west edge. */
#include "sim/systolic/sya.h"

int sya_bank_step(sya_engine *e, int br, int bc) {
    const int C = e->C;
    for (int r = br * e->NR + e->NR - 1; r >= br * e->NR; r--) {
        const sya_tok *west = bc > 0 ? &e->pe[(int64_t)r * C + bc * e->NC - 1].a
                                     : &e->edge_a[(e->t % (e->La + 1)) * (int64_t)e->R + r];
        sya_tok w = *west; /* the west bank's register before it steps */
        int rc = sya_row_step(e, r, bc, &w);
        if (rc) return rc;
    }
    return 0;
}
