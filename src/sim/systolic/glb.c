/* The global buffer's read side (the design's GLB): the activation SRAM feeds
 * the array's west edge one element per row per cycle (GLBSYA_Act), the
 * weight SRAM its north edge one per column (GLBSYA_Wgt), each with its read
 * latency.  Row r of a unit entering at cycle T receives step k at T + r + k
 * and column c at T + c + k: the skew.  Padding positions read the input
 * zero point.  Reads are counted as the streams need them (docs/systolic.md
 * "Statistics"): a row's stream reads an activation word at the step that
 * first needs it -- the window position's first channel of the product, or
 * the first channel of the next word -- so each row reads every word of its
 * window once (padding reads none); a weight word is read at the step and
 * by the column that first needs it (a filter tile's row of weights is held
 * for the skewed columns): the words the tile spans per step, a depthwise
 * channel's ceil(K / word) words. */
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
    const int64_t wb = e->wb;
    for (int n = 0; n < e->jobs_n; n++) {
        sya_job *j = &e->jobs[(e->jobs_head + n) % e->njobs_cap];
        const enpu_instr *in = &p->instr[j->instr];
        const enpu_sya_shape *s = &e->lay[j->instr].s;
        enpu_layer_stats *st = &e->sim->rows[j->instr];
        /* rows whose step k = ea - T - r lies in [0, K) */
        int64_t r0 = ea - j->T - j->K + 1, r1 = ea - j->T;
        if (r0 < 0) r0 = 0;
        if (r1 > j->u.rows - 1) r1 = j->u.rows - 1;
        for (int64_t r = r0; r <= r1; r++) {
            int64_t k = ea - j->T - r, word;
            int lane;
            enpu_sya_act_at(e->a, in, s, &j->u, r, k, &word, &lane);
            ENPU_ASSERT(A[r].seq < 0);
            A[r] = (sya_tok){j->seq, (int32_t)k, (int16_t)j->u.cols,
                             word < 0 ? (int8_t)in->zp_in : (int8_t)m->main[word * wb + lane], (uint8_t)(k == j->K - 1)};
            if (word >= 0 && (k % s->cpg == 0 || lane == 0)) st->reads[ENPU_MEM_MAIN_DTCM]++;
            act = true;
        }
        int64_t c0 = ew - j->T - j->K + 1, c1 = ew - j->T;
        if (c0 < 0) c0 = 0;
        if (c1 > j->u.cols - 1) c1 = j->u.cols - 1;
        for (int64_t c = c0; c <= c1; c++) {
            int64_t k = ew - j->T - c, at = enpu_sya_wgt_at(e->a, in, s, &j->u, k, c);
            ENPU_ASSERT(W[c].seq < 0);
            W[c] = (sya_tok){j->seq, (int32_t)k, (int16_t)j->u.rows, (int8_t)m->wmem[at],
                             (uint8_t)(k == j->K - 1)};
            if (at % wb == 0 || (c == 0 && !s->dw)) st->reads[ENPU_MEM_WEIGHT_MEM]++;
            wgt = true;
        }
    }
    if (act || wgt) e->last_inject = ea > ew ? ea : ew;
    e->sig[SIG_ACT_VLD] = act;
    e->sig[SIG_WGT_VLD] = wgt;
}
