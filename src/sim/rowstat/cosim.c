/* The row-stationary engine's co-simulation accessors (include/easynpu/
 * cosim.h, docs/rtl.md): copies of the PE array's and the networks' state
 * for an RTL testbench; nothing here changes the engine. */
#include "easynpu/cosim.h"
#include "sim/rowstat/rs_sim.h"

void enpu_cosim_rs_dims_of(const void *engine, enpu_cosim_rs_dims *out) {
    const rs_eng *e = engine;
    const enpu_arch *a = e->a;
    out->rows = (int)a->rs_rows, out->cols = (int)a->rs_cols;
    out->nv[0] = (int)a->rs_ifmap_net_values, out->nv[1] = (int)a->rs_filter_net_values;
    out->fifo = (int)a->rs_fifo_depth, out->ifmap_lb = (int)a->rs_ifmap_lb_depth;
    out->filter_lb = (int)a->rs_filter_lb_depth, out->psum_depth = (int)a->rs_psum_depth;
    out->psum_bits = (int)a->rs_psum_bits;
    out->D = a->rs_pe_pipeline;
}

void enpu_cosim_rs_pass_of(const void *engine, uint64_t t, enpu_cosim_rs_pass *out) {
    const rs_eng *e = engine;
    out->active = e->active;
    out->instr = e->instr;
    out->k = e->k, out->t0 = e->t0;
    out->chain = e->chain, out->ncol = e->ps.ne * e->ps.tu;
    /* pass_cycle's rule */
    out->go = e->filt_last >= 0 && (int64_t)t >= e->filt_last + RS_NET_LAT;
}

void enpu_cosim_rs_pe_at(const void *engine, int r, int c, enpu_cosim_rs_pe *out) {
    const rs_eng *e = engine;
    const rs_pe *pe = &e->pe[(int64_t)r * e->a->rs_cols + c];
    out->used = pe->used;
    out->L = pe->L, out->p = pe->p, out->wo = pe->wo, out->R = pe->R, out->U = pe->U;
    out->fh = pe->fh, out->fn = pe->fn;
    out->lb_head = pe->lb_head, out->lb_n = pe->lb_n, out->flb_n = pe->flb_n;
    out->filled = pe->filled, out->done = pe->done;
    out->u = pe->u, out->k = pe->k, out->xo = pe->xo, out->m = pe->m;
    out->last_mac = pe->last_mac;
    out->out_full = pe->out.full;
    out->out_unit = pe->out.unit, out->out_value = pe->out.value, out->out_ready = pe->out.ready;
    out->fifo = pe->fifo, out->lb = pe->lb, out->flb = pe->flb, out->psum = pe->psum;
}

/* Network net of the engine: 0 ifmap, 1 filter. */
static const rs_noc *net_of(const void *engine, int net) {
    const rs_eng *e = engine;
    return net ? &e->filter_net : &e->ifmap_net;
}

int32_t enpu_cosim_rs_row_id(const void *engine, int net, int r) { return net_of(engine, net)->row_id[r]; }

int32_t enpu_cosim_rs_col_id(const void *engine, int net, int r, int c) {
    const rs_noc *n = net_of(engine, net);
    return n->col_id[r * n->cols + c];
}

int enpu_cosim_rs_stage(const void *engine, int net, int s, enpu_cosim_rs_pkt *out, bool *pass) {
    const rs_noc *n = net_of(engine, net);
    for (int i = 0; i < n->n_stage[s]; i++) {
        const rs_packet *pk = &n->stage[s][i];
        out[i] = (enpu_cosim_rs_pkt){pk->value, pk->row_tag, pk->col_tag};
        if (s == 1 && pass)
            for (int r = 0; r < n->rows; r++) pass[i * n->rows + r] = n->row_pass[i * n->rows + r];
    }
    return n->n_stage[s];
}
