/* The PE array (the design's pe_array.v): NUM_BANK banks arranged
 * sya_bank_rows high (CfgMod), activations entering every row from the west,
 * weights every column from the north, one cycle of skew per row and per
 * column; the rows' MUX outputs go through the requantizer
 * ((psum + bias) * scale >> shift + zero point, enpu_requant) to the
 * re-shaping unit. */
#include "sim/systolic/sya.h"

void sya_mux_emit(sya_engine *e, const sya_res *r, int64_t t) {
    sya_job *j = sya_job_of(e, r->seq);
    const sya_layer *L = &e->lay[j->instr];
    const enpu_instr *in = &e->sim->prog->instr[j->instr];
    int64_t o = enpu_sya_out_channel(&L->s, &j->u, r->c);
    sya_res q = *r;
    q.q = (int8_t)enpu_requant(r->acc + L->bias[o], L->M[o], L->S[o], (int32_t)in->zp_out,
                               (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
    int64_t slot = (t + e->rq) % (e->rq + 1), cap = (int64_t)e->R * e->BC;
    ENPU_ASSERT(e->pipe_n[slot] < cap);
    e->pipe[slot * cap + e->pipe_n[slot]++] = q;
    e->mux_out++;
    /* the MUX passes one result, the requantizer scales it */
    e->sim->rows[j->instr].reads[ENPU_MEM_MUX]++;
    e->sim->rows[j->instr].uops[ENPU_UOP_REQUANT]++;
}

int sya_array_step(sya_engine *e, int64_t t) {
    e->t = t;
    /* an empty array (no token entered for R + C cycles, no result waiting)
     * does not change */
    bool pending = false;
    for (int64_t m = 0; m < (int64_t)e->R * e->BC && !pending; m++) pending = e->mux_has[m];
    if (!pending && t > e->last_inject + e->R + e->C + 1 && !e->sim->step_every_cycle) return 0;
    for (int br = e->BR - 1; br >= 0; br--)
        for (int bc = e->BC - 1; bc >= 0; bc--) {
            int rc = sya_bank_step(e, br, bc);
            if (rc) return rc;
        }
    /* the PEs' counts of this cycle, before the re-shaping unit's writes */
    sya_tally_flush(e, &e->tally);
    return 0;
}
