/* The global buffer's read side (the design's GLB): the activation SRAM feeds
 * the array's west edge one element per row per cycle (GLBSYA_Act), the
 * weight SRAM its north edge one per column (GLBSYA_Wgt), each with its read
 * latency.  Row r of a unit entering at cycle T receives step k at T + r + k
 * and column c at T + c + k: the skew.  Padding positions read the input
 * zero point.  Traffic is counted per unit when it is issued (one read per
 * word of each row's window, the weight words of its filter tile). */
#include "sim/systolic/sya.h"

void sya_glb_step(sya_engine *e, int64_t t) {
    const enpu_program *p = e->sim->prog;
    const sim_mem *m = &e->sim->mem;
    const int64_t ea = t + e->La, ew = t + e->Lw;
    sya_tok *A = e->edge_a + (ea % (e->La + 1)) * (int64_t)e->R;
    sya_tok *W = e->edge_w + (ew % (e->Lw + 1)) * (int64_t)e->C;
    for (int r = 0; r < e->R; r++) A[r].seq = -1;
    for (int c = 0; c < e->C; c++) W[c].seq = -1;
    bool act = false, wgt = false;
    for (int n = 0; n < e->jobs_n; n++) {
        sya_job *j = &e->jobs[(e->jobs_head + n) % e->njobs_cap];
        const enpu_instr *in = &p->instr[j->instr];
        const enpu_sya_shape *s = &e->lay[j->instr].s;
        /* rows whose step k = ea - T - r lies in [0, K) */
        int64_t r0 = ea - j->T - j->K + 1, r1 = ea - j->T;
        if (r0 < 0) r0 = 0;
        if (r1 > j->u.rows - 1) r1 = j->u.rows - 1;
        for (int64_t r = r0; r <= r1; r++) {
            int64_t k = ea - j->T - r, word;
            int lane;
            enpu_sya_act_at(e->a, in, s, &j->u, r, k, &word, &lane);
            ENPU_ASSERT(A[r].seq < 0);
            A[r] = (sya_tok){j->seq, (int32_t)k, word < 0 ? (int8_t)in->zp_in : (int8_t)m->main[word * e->wb + lane],
                             (uint8_t)(k == j->K - 1)};
            act = true;
        }
        int64_t c0 = ew - j->T - j->K + 1, c1 = ew - j->T;
        if (c0 < 0) c0 = 0;
        if (c1 > j->u.cols - 1) c1 = j->u.cols - 1;
        for (int64_t c = c0; c <= c1; c++) {
            int64_t k = ew - j->T - c;
            ENPU_ASSERT(W[c].seq < 0);
            W[c] = (sya_tok){j->seq, (int32_t)k, (int8_t)m->wmem[enpu_sya_wgt_at(e->a, in, s, &j->u, k, c)],
                             (uint8_t)(k == j->K - 1)};
            wgt = true;
        }
    }
    if (act || wgt) e->last_inject = ea > ew ? ea : ew;
    e->sig[SIG_ACT_VLD] = act;
    e->sig[SIG_WGT_VLD] = wgt;
}
