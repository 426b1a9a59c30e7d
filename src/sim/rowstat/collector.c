/* The output network and the requantizer (docs/rowstat.md "The output
 * network"): each cycle up to rs_psum_net_values psums leave the bottom
 * PEs' output registers, the oldest first (ties: the lower column), into
 * the global buffer: added to the psums kept there by the block's earlier
 * passes, or, on the pass that completes them, with the bias through the
 * requantizer (requant_latency cycles) into the output block. */
#include "isa/isa_internal.h"
#include "sim/rowstat/rs_sim.h"

void rs_collect_step(rs_eng *e, int64_t t) {
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    const enpu_rs_pass *ps = &e->ps;
    const int64_t ncol = ps->ne * ps->tu, bottom = e->chain - 1;
    const int64_t nch = enpu_rs_block_channels(g, ps);
    for (int64_t served = 0; served < e->a->rs_psum_net_values; served++) {
        rs_link *best = NULL;
        for (int64_t c = 0; c < ncol; c++) {
            rs_link *o = &rs_pe_at(e, bottom, c)->out;
            if (!o->full || o->ready > t) continue;
            if (!best || o->ready < best->ready || (o->ready == best->ready && o->col < best->col)) best = o;
        }
        if (!best) return;
        best->full = false;
        int64_t h = best->col / ps->ne, j = best->col % ps->ne;
        int64_t p = e->ph[h], xo = best->unit / p, m = best->unit % p;
        int64_t i = g->gpar ? h * ps->nf + m : h * g->p + m; /* the block's channel */
        /* the buffers' order: row, then the n images' columns */
        int64_t poff = g->psum_off + ((j * g->nwo + xo) * nch + i) * g->psum_bytes, v = best->value;
        e->st.reads[ENPU_MEM_PSUM_NET]++;
        e->st.writes[ENPU_MEM_PSUM_NET]++;
        if (!ps->first) {
            /* added to the psum the block's earlier passes kept: an adder
             * rs_psum_bits wide (counted as `alu`) */
            v += rs_glb_get(e->glb, poff, (int)g->psum_bytes);
            e->st.reads[ENPU_MEM_GLB] += (uint64_t)g->psum_bytes;
            e->st.uops[ENPU_UOP_ALU]++;
        }
        int64_t wt = t;
        if (!ps->final) {
            rs_glb_put(e->glb, poff, (int)g->psum_bytes, v);
            e->st.writes[ENPU_MEM_GLB] += (uint64_t)g->psum_bytes;
        } else {
            int fb = (in->rs_dbuf & 2) ? (int)(ps->index % 2) : 0;
            int64_t fw = enpu_ceil_div(enpu_rs_fblock_values(g, in, ps->fblock) * g->es, g->wb);
            int64_t par = g->filt_off[fb] + fw * g->wb + i * ENPU_RS_PARAM_BYTES;
            int64_t bias = rs_glb_get(e->glb, par, 8);
            uint32_t M = (uint32_t)rs_glb_get(e->glb, par + 8, 4);
            int S = (int)rs_glb_get(e->glb, par + 12, 4);
            int64_t acc = v + bias;
            int32_t y = rs_requant(in, g->es, acc, M, S);
            e->st.uops[ENPU_UOP_REQUANT]++;
            int ob = (in->rs_dbuf & 4) ? (int)(ps->block % 2) : 0;
            rs_glb_put(e->glb, g->out_off[ob] + ((j * g->nwo + xo) * nch + i) * g->es, (int)g->es, y);
            e->st.writes[ENPU_MEM_GLB] += (uint64_t)g->es;
            wt = t + e->a->requant_latency;
        }
        if (wt > e->last_write) e->last_write = wt;
        e->psums_left--;
    }
}
