/* The re-shaping unit (the design's sync_shape.v): the array's rows output a
 * point's channels one per cycle; it gathers each point's channels into the
 * SRAM word they belong to and writes the word (its lanes of this unit only,
 * byte-enabled) in the cycle its last channel arrives, so that a point's
 * channels lie in one word as the next layer (or a pooling host op) reads
 * them.  Its word buffer counts a byte written per result and a word read
 * per SRAM write (docs/systolic.md "Statistics"). */
#include "sim/systolic/sya.h"

int sya_shape_step(sya_engine *e, int64_t t) {
    int64_t slot = t % (e->rq + 1), cap = (int64_t)e->R * e->BC;
    int n = e->pipe_n[slot];
    e->pipe_n[slot] = 0;
    const int wb = e->wb;
    for (int i = 0; i < n; i++) {
        const sya_res *q = &e->pipe[slot * cap + i];
        sya_job *j = sya_job_of(e, q->seq);
        const enpu_instr *in = &e->sim->prog->instr[j->instr];
        const enpu_sya_shape *s = &e->lay[j->instr].s;
        int64_t og0 = enpu_sya_out_channel(s, &j->u, 0), og = og0 + q->c, og1 = og0 + j->u.cols;
        int64_t w = og / wb, lo = og0 > w * wb ? og0 : w * wb;
        int64_t hi = og1 < (w + 1) * wb ? og1 : (w + 1) * wb;
        uint8_t *buf = j->buf + (int64_t)q->r * wb;
        buf[og % wb] = (uint8_t)q->q;
        enpu_layer_stats *st = &e->sim->rows[j->instr];
        st->writes[ENPU_MEM_SHAPE]++;
        if (og != hi - 1) continue;
        /* the word's last channel of this unit: write its lanes */
        int64_t addr = in->ofmap_addr + (j->u.p0 + q->r) * ((in->co + wb - 1) / wb) + w;
        memcpy(e->sim->mem.main + addr * wb + (lo - w * wb), buf + (lo - w * wb), (size_t)(hi - lo));
        if (e->sim->mem.main_wc) e->sim->mem.main_wc[addr] = (uint64_t)t + 1;
        /* the controller scheduled this write (its hazard board) for exactly now */
        ENPU_ASSERT(t == j->T + j->K + q->r + (hi - 1 - og0) + e->rq);
        st->reads[ENPU_MEM_SHAPE]++;
        st->writes[ENPU_MEM_MAIN_DTCM]++;
        e->ofm_words++;
        if (--j->writes_left == 0) {
            int rc = sya_job_retire(e, j, t);
            if (rc) return rc;
        }
    }
    return 0;
}
