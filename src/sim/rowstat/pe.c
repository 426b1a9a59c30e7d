/* The row-stationary PE (docs/rowstat.md "A PE"): the note's three layers.
 * PE core: a 16-bit multiplier and a psum adder (rs_psum_bits) whose psum
 * comes from the psum RAM, or for a unit's first MAC from the PE above; a
 * unit's last MAC writes its psum into the output register (the link to the
 * PE below, or the output network's for the bottom PE), not the RAM.
 * PE: the filter loop buffer (its values circulate: every output column
 * reuses them) and the ifmap loop buffer, a circular window of wk columns x q
 * channels whose oldest stride_w columns are thrown away ("if trash") and
 * replaced from the FIFO while the last filter of an output column reads
 * them.  PE top: the input FIFO in front of the ifmap loop buffer.
 *
 * A unit is one output column's psum of one filter: L = q*wk MACs, in the
 * window's order (column, then channel).  Units run output column by output
 * column, the p filters of each in turn; with n images (rs_n) the columns
 * are the first image's, then the next's: the last unit of an image
 * replaces the whole window with the next image's first (all L values, in
 * the window's order, so the window's head stays). */
#include <stdlib.h>
#include <string.h>

#include "sim/rowstat/rs_sim.h"

int rs_pe_alloc(rs_pe *pe, const enpu_arch *a, enpu_err *err) {
    memset(pe, 0, sizeof *pe);
    pe->fifo_cap = a->rs_fifo_depth;
    pe->lb_cap = a->rs_ifmap_lb_depth;
    pe->flb_cap = a->rs_filter_lb_depth;
    pe->psum_cap = a->rs_psum_depth;
    pe->fifo = malloc((size_t)pe->fifo_cap * sizeof *pe->fifo);
    pe->fifo_at = malloc((size_t)pe->fifo_cap * sizeof *pe->fifo_at);
    pe->lb = malloc((size_t)pe->lb_cap * sizeof *pe->lb);
    pe->flb = malloc((size_t)pe->flb_cap * sizeof *pe->flb);
    pe->psum = malloc((size_t)pe->psum_cap * sizeof *pe->psum);
    if (!pe->fifo || !pe->fifo_at || !pe->lb || !pe->flb || !pe->psum) {
        rs_pe_free(pe);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the PE buffers");
    }
    return 0;
}

void rs_pe_free(rs_pe *pe) {
    free(pe->fifo);
    free(pe->fifo_at);
    free(pe->lb);
    free(pe->flb);
    free(pe->psum);
    memset(pe, 0, sizeof *pe);
}

void rs_pe_config(rs_pe *pe, bool used, int64_t q, int64_t p, int64_t wk, int64_t wo, int64_t n, int64_t sw,
                  int64_t D) {
    pe->used = used;
    pe->D = D;
    pe->q = q, pe->p = p, pe->wk = wk, pe->wo = wo;
    pe->L = q * wk;
    pe->n = n;
    pe->U = n * wo * p;
    pe->R = (sw < wk ? sw : wk) * q;
    pe->fh = pe->fn = 0;
    pe->lb_head = pe->lb_n = 0;
    pe->flb_n = 0;
    pe->filled = false;
    pe->u = pe->k = pe->xo = pe->m = 0;
    pe->done = !used;
    pe->first_mac = pe->last_mac = -1;
    pe->out.full = false;
}

bool rs_pe_push_ifmap(rs_pe *pe, int32_t v, int64_t at) {
    if (pe->fn == pe->fifo_cap) return false;
    int64_t i = (pe->fh + pe->fn) % pe->fifo_cap;
    pe->fifo[i] = v;
    pe->fifo_at[i] = at;
    pe->fn++;
    return true;
}

bool rs_pe_push_filter(rs_pe *pe, int32_t v) {
    if (pe->flb_n == pe->flb_cap) return false;
    pe->flb[pe->flb_n++] = v;
    return true;
}

/* The FIFO's head, if it can be popped in cycle t. */
static bool fifo_ready(const rs_pe *pe, int64_t t) { return pe->fn > 0 && pe->fifo_at[pe->fh] <= t; }

static int32_t fifo_pop(rs_pe *pe) {
    int32_t v = pe->fifo[pe->fh];
    pe->fh = (pe->fh + 1) % pe->fifo_cap;
    pe->fn--;
    return v;
}

int rs_pe_step(rs_pe *pe, int64_t t, rs_link *in, bool go, rs_stats *st) {
    if (pe->done) return 0;
    if (!pe->filled) {
        /* the first window: one value a cycle from the FIFO */
        if (!fifo_ready(pe, t)) return 0;
        pe->lb[pe->lb_n++] = fifo_pop(pe);
        st->reads[ENPU_MEM_PE_FIFO]++;
        st->writes[ENPU_MEM_IFMAP_LB]++;
        if (pe->lb_n == pe->L) pe->filled = true, pe->fill_at = t;
        return 0;
    }
    if (t <= pe->fill_at || !go) return 0;
    const int64_t xo = pe->xo, m = pe->m;
    /* the last filter of an output column replaces the window's oldest columns */
    const bool more = xo < pe->n * pe->wo - 1, image_end = xo % pe->wo == pe->wo - 1;
    const int64_t R = image_end ? pe->L : pe->R;
    const bool pull = m == pe->p - 1 && more && pe->k < R;
    const bool last = pe->k == pe->L - 1;
    if (pe->k == 0 && in && !(in->full && in->unit == pe->u && in->ready <= t)) return 0;
    if (pull && !fifo_ready(pe, t)) return 0;
    if (last && pe->out.full) return -1; /* the PE below has not taken the previous psum */
    int64_t slot = pe->lb_head + pe->k;
    if (slot >= pe->L) slot -= pe->L;
    int64_t x = pe->lb[slot], w = pe->flb[m * pe->L + pe->k];
    /* the psum the MAC adds to: a unit's first MAC takes the link from the
     * PE above (0 at the top of the chain), the others read the psum RAM */
    int64_t acc = pe->k == 0 ? (in ? in->value : 0) : pe->psum[m];
    if (pe->k == 0 && in) {
        in->full = false; /* taken: the PE above may write its next psum */
        st->reads[ENPU_MEM_PSUM_LINK]++;
    } else if (pe->k > 0) {
        st->reads[ENPU_MEM_PSUM]++;
    }
    acc += x * w;
    /* every MAC but a unit's last writes the psum RAM; the last writes the
     * output register instead (below) */
    if (!last) {
        pe->psum[m] = acc;
        st->writes[ENPU_MEM_PSUM]++;
    }
    st->reads[ENPU_MEM_IFMAP_LB]++;
    st->reads[ENPU_MEM_FILTER_LB]++;
    if (pull) {
        pe->lb[slot] = fifo_pop(pe);
        st->reads[ENPU_MEM_PE_FIFO]++;
        st->writes[ENPU_MEM_IFMAP_LB]++;
    }
    if (pe->first_mac < 0) pe->first_mac = t;
    pe->last_mac = t;
    if (++pe->k == pe->L) {
        st->writes[ENPU_MEM_PSUM_LINK]++;
        pe->out.full = true;
        pe->out.unit = pe->u;
        pe->out.value = acc;
        pe->out.ready = t + pe->D; /* through the MAC pipeline */
        if (m == pe->p - 1 && more) pe->lb_head = (pe->lb_head + R) % pe->L;
        pe->k = 0;
        if (++pe->m == pe->p) pe->m = 0, pe->xo++;
        if (++pe->u == pe->U) pe->done = true;
    }
    return 1;
}
