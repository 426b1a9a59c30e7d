/* The global buffer (docs/rowstat.md "The global buffer"): rs_glb_bytes of
 * SRAM holding a layer's ifmap strips (or tiles of them), the passes' filters with their
 * output blocks' (bias, M, S), the psums of the block being accumulated and
 * the output blocks, at the offsets include/easynpu/rowstat.h derives from
 * the instruction.  Its read ports feed the two multicast networks: the
 * ifmap stream sends each used input column's values (padding is generated,
 * not read) in the order the PEs consume them, the filter stream a pass's
 * filter block as it lies in the buffer. */
#include "sim/rowstat/rs_sim.h"

int64_t rs_glb_get(const uint8_t *glb, int64_t off, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)glb[off + i] << (8 * i);
    if (bytes < 8 && (v >> (8 * bytes - 1)) & 1) v |= ~(uint64_t)0 << (8 * bytes); /* sign */
    return (int64_t)v;
}

void rs_glb_put(uint8_t *glb, int64_t off, int bytes, int64_t v) {
    for (int i = 0; i < bytes; i++) glb[off + i] = (uint8_t)((uint64_t)v >> (8 * i));
}

void rs_glb_ifmap_value(const rs_eng *e, int64_t idx, rs_packet *pk, bool *pad) {
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    const enpu_rs_pass *ps = &e->ps;
    const int64_t nhs = g->gpar ? ps->tu : 1;
    const int64_t cblk = nhs * e->nK * e->qpre[ps->ru];
    int64_t cx = idx / cblk, r = idx % cblk, v = 0;
    const int64_t img = cx / g->ncols; /* the n images one after the other */
    cx %= g->ncols;
    while (r >= nhs * e->nK * e->qv[v]) r -= nhs * e->nK * e->qv[v], v++;
    const int64_t q = e->qv[v];
    int64_t hh = r / (e->nK * q);
    r %= e->nK * q;
    int64_t kk = r / q, c = r % q, k = e->klist[kk];
    /* the cx-th input column some window uses (padded coordinates) */
    int64_t xp = in->stride_w <= in->wk ? cx : (cx / in->wk) * in->stride_w + cx % in->wk;
    int64_t row = ps->y0 * in->stride_h - in->pad_top + ps->k0 + k, col = xp - in->pad_left;
    const int64_t kmax = (ps->ne - 1) * in->stride_h + ps->nk;
    pk->row_tag = (int32_t)v;
    pk->col_tag = (int32_t)(hh * kmax + k);
    *pad = row < 0 || row >= in->hi || col < 0 || col >= in->wi;
    if (*pad) {
        pk->value = (int32_t)in->rs_zp_in;
        return;
    }
    int64_t off = enpu_rs_ifmap_byte(g, in, ps, img, row, col, enpu_rs_in_channel(g, ps, hh, v, c));
    pk->value = (int32_t)rs_glb_get(e->glb, off, (int)g->es);
}

void rs_glb_filter_value(const rs_eng *e, int64_t idx, rs_packet *pk) {
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    const enpu_rs_pass *ps = &e->ps;
    int buf = (in->rs_dbuf & 2) ? (int)(ps->index % 2) : 0;
    pk->value = (int32_t)rs_glb_get(e->glb, g->filt_off[buf] + idx * g->es, (int)g->es);
    /* its PE row (v, i) and set h: blocks of p_h * q_v * wk values */
    int64_t r = idx;
    for (int64_t v = 0; v < ps->ru; v++)
        for (int64_t i = 0; i < ps->nk; i++)
            for (int64_t h = 0; h < ps->tu; h++) {
                int64_t n = e->ph[h] * e->qv[v] * in->wk;
                if (r < n) {
                    pk->row_tag = (int32_t)(v * ps->nk + i);
                    pk->col_tag = (int32_t)h;
                    return;
                }
                r -= n;
            }
}
