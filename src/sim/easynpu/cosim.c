/* Co-simulation accessors of the EasyNPU engine (include/easynpu/cosim.h):
 * they copy the core's registers into the plain structs a testbench reads
 * and change nothing.  The issue a cycle would make is computed from the PE
 * controller's registers exactly as sim_pe_issue (pe.c) addresses the pads,
 * the psum file and the lane tables. */
#include <string.h>

#include "easynpu/cosim.h"
#include "sim/easynpu/core.h"

void enpu_cosim_enpu_dims_of(const void *engine, enpu_cosim_enpu_dims *out) {
    const core *k = engine;
    out->P = k->P;
    out->rows = k->pe.rows;
    out->lg_max = (int)k->a->lane_groups_max;
    out->dif = k->pad.depth;
    out->dw = k->wpad.depth;
    out->depth = k->pe.depth;
    out->acc_bits = (int)k->a->acc_bits;
    out->rqmode = k->ch && k->ch->n_st ? k->ch->st[0].rqmode : 0;
    out->D = k->D, out->Rq = k->Rq, out->Lw = k->Lw, out->Ld = k->Ld;
}

void enpu_cosim_enpu_state_of(const void *engine, enpu_cosim_enpu_state *out) {
    const core *k = engine;
    out->ld_unit = k->ld.u;
    out->ld_j = k->ld_j;
    out->ld_done = k->ld.done;
    out->ld_busy = k->ld_busy;
    out->bank_size = k->pad.bank_size;
    out->ld_bank = sim_ifpad_bank_of(&k->pad, k->ld.u);
    out->w_head = k->wpad.head;
    out->w_count = k->wpad.count;
    out->pe_valid = k->sig.pe_valid != 0;
    out->why = k->pc.why;
    out->if_valid = k->sig.if_valid != 0, out->if_ready = k->sig.if_ready != 0;
    out->of_valid = k->sig.of_valid != 0;
    out->ps_addr = k->sig.ps_addr;
    out->w_rd = k->sig.w_valid != 0;
    out->w_par_left = k->par_left;
    out->w_done = k->ws_done;
    out->w_addr = k->ws_done ? -1 : k->ws_pi.wbase + k->ws_o;
    out->chain = k->ch;
    out->chain_t0 = k->t0;
}

void enpu_cosim_enpu_next(const void *engine, enpu_cosim_enpu_issue *out) {
    const core *k = engine;
    const sim_chain *c = k->ch;
    const pectl *pc = &k->pc;
    const unit_cur *u = &pc->u;
    *out = (enpu_cosim_enpu_issue){0};
    if (k->pe_done || !c) return;
    const int64_t q = u->q, j = pc->k % q, ozi = pc->k / q;
    out->valid = true;
    out->kind = (int)c->st[pc->stage].kind;
    out->stage = pc->stage;
    out->n_st = c->n_st;
    out->first = pc->first, out->final = pc->final;
    out->weighted = pc->weighted, out->op2 = pc->op2;
    out->e = ozi * q + j;
    out->lane = pc->lane;
    out->wdx = c->bcast ? u->blk * c->zstride + ozi : u->kz;
    out->lg = (int)c->lg, out->L = (int)c->L;
    out->nval = k->pe.nval[out->wdx];
    for (int64_t r = 0; r < c->rows && r < ENPU_COSIM_ENPU_MAX_VROWS; r++) {
        int64_t p = r * q + j;
        if (p >= u->npos) break;
        out->entry[r] = pc->stage == 0 ? pc->bank_base + pc->hw_base[p] + pc->tap_off : -1;
        out->nrows++;
    }
    out->pops_weight = pc->weighted && (c->bcast ? (pc->k + 1) % q == 0 : pc->k + 1 == pc->len);
}

const int8_t *enpu_cosim_enpu_pad(const void *engine, int64_t entry, bool *mark) {
    const core *k = engine;
    *mark = k->pad.mark[entry] != 0;
    return k->pad.data + entry * k->P;
}

const int8_t *enpu_cosim_enpu_wslot(const void *engine, int s, uint64_t *ready) {
    const core *k = engine;
    *ready = k->wpad.ready[s];
    return k->wpad.data + (size_t)s * (size_t)k->P;
}

const int64_t *enpu_cosim_enpu_psum(const void *engine, int row, int64_t e, const int8_t **sval) {
    const core *k = engine;
    size_t at = ((size_t)row * (size_t)k->pe.depth + (size_t)e) * (size_t)k->P;
    *sval = k->pe.sval + at;
    return k->pe.psum + at;
}

uint64_t enpu_cosim_enpu_ready(const void *engine, int64_t e) {
    const core *k = engine;
    return k->pe.ready[e];
}

void enpu_cosim_enpu_lane(const void *engine, int stage, int64_t wdx, int i, int32_t *bias, uint32_t *M, int *S,
                          int32_t *zp, int32_t *lo, int32_t *hi) {
    const core *k = engine;
    const sim_stage *s = &k->ch->st[stage];
    int32_t ch = k->ch->chan[wdx * k->P + i];
    *bias = k->pe.bias[wdx * k->P + i];
    *M = s->per_channel && ch >= 0 ? s->M[ch] : s->rq.M;
    *S = s->per_channel && ch >= 0 ? s->S[ch] : s->rq.S;
    *zp = s->rq.zp, *lo = s->rq.lo, *hi = s->rq.hi;
}

_Static_assert((int)PC_ISSUE == (int)ENPU_COSIM_WHY_ISSUE && (int)PC_FILL == (int)ENPU_COSIM_WHY_FILL &&
                   (int)PC_WAIT_UNIT == (int)ENPU_COSIM_WHY_WAIT_UNIT &&
                   (int)PC_WAIT_OP2 == (int)ENPU_COSIM_WHY_WAIT_OP2 && (int)PC_WEIGHT == (int)ENPU_COSIM_WHY_WEIGHT &&
                   (int)PC_OFMAP == (int)ENPU_COSIM_WHY_OFMAP && (int)PC_PSUM == (int)ENPU_COSIM_WHY_PSUM &&
                   (int)PC_DONE == (int)ENPU_COSIM_WHY_DONE,
               "the PE controller's decisions are numbered as cosim.h says");
_Static_assert(sizeof(unit_cur) <= sizeof(((enpu_cosim_enpu_unit *)0)->cur), "the unit cursor fits");

void enpu_cosim_enpu_chain_of(const void *engine, enpu_cosim_enpu_chain *out) {
    const core *k = engine;
    const sim_chain *c = k->ch;
    const sim_stage *s = &c->st[0];
    *out = (enpu_cosim_enpu_chain){0};
    out->covered = c->n_st == 1 && (s->kind == K_CONV || s->kind == K_DW) && !c->remap && !c->rs_w_skip &&
                   !s->w_skip && !c->has_op2;
    out->bcast = c->bcast;
    out->sh = c->sh, out->sw = c->sw, out->dh = c->dh, out->dw = c->dw, out->wk = c->wk;
    out->rows = (int)c->rows, out->lg = (int)c->lg, out->L = (int)c->L;
    out->n_par = c->n_par;
    out->bank_size = k->pad.bank_size;
    out->wo = s->wo, out->owpp = s->owpp, out->co = s->co;
    out->fc = c->fc;
    out->hi = c->hi, out->wi = c->wi, out->wpp_in = c->wpp_in;
    out->istride = c->istride, out->iword = c->iword;
    out->ifmap_addr = c->ifmap_addr;
    out->pad_value = c->pad_value;
    /* sim_pass_info: a band's taps are consecutive, wpg (broadcast) or
     * wpp_in (multicast) words apart; a channel's words hk * wk taps (fc:
     * one) */
    out->w_tap = c->bcast ? c->wpg : c->wpp_in;
    out->w_ch = c->fc ? c->wpg : c->hk * c->wk * c->wpg;
}

/* The descriptor of the cursor's unit (the scheduler's unit_fill and
 * sim_pass_info give every field). */
static void unit_desc(const core *k, const unit_cur *u, enpu_cosim_enpu_unit *o) {
    const sim_chain *c = k->ch;
    const sim_stage *s = &c->st[0];
    memcpy(o->cur, u, sizeof *u);
    o->done = u->done;
    if (u->done) return;
    pass_info pi;
    sim_pass_info(c, u, 0, &pi);
    o->u = u->u;
    o->bank = sim_ifpad_bank_of(&k->pad, u->u);
    o->q = u->q, o->npos = u->npos, o->x = u->x, o->xi = u->xi;
    o->qx = u->q / u->x, o->qr = u->q % u->x;
    o->zse = u->zse;
    o->nch = c->bcast ? u->c_hi - u->c_lo : 1;
    o->lane0 = pi.lane;
    o->nkh = u->nkh;
    o->tile_first = u->tile_first, o->tile_last = u->tile_last;
    if (c->bcast) {
        int64_t zk = c->opg - u->k * c->z;
        o->zk = zk < c->z ? zk : c->z;
    } else {
        o->zk = c->ci - u->kz * k->P < k->P ? c->ci - u->kz * k->P : k->P;
    }
    o->wdx0 = c->bcast ? u->blk * c->zstride : u->kz;
    o->c0 = c->chan[o->wdx0 * k->P];
    o->obase = s->ofmap_addr + s->oword + (u->oy0 * s->wo + u->ox0) * s->owpp;
    o->yi = u->yi, o->iy0 = u->iy0, o->ix0 = u->ix0, o->kz = u->kz;
    o->wb0 = pi.wbase;
}

void enpu_cosim_enpu_unit_first(const void *engine, enpu_cosim_enpu_unit *out) {
    const core *k = engine;
    unit_cur u;
    *out = (enpu_cosim_enpu_unit){0};
    sim_unit_first(k->ch, &u);
    unit_desc(k, &u, out);
}

void enpu_cosim_enpu_unit_next(const void *engine, enpu_cosim_enpu_unit *io) {
    const core *k = engine;
    unit_cur u;
    memcpy(&u, io->cur, sizeof u);
    sim_unit_next(k->ch, &u);
    unit_desc(k, &u, io);
}

void enpu_cosim_enpu_bank_of(const void *engine, int b, enpu_cosim_enpu_bank *out) {
    const core *k = engine;
    const pad_bank *pb = &k->pad.bank[b];
    out->unit = pb->unit, out->loaded = pb->loaded;
    out->valid_at = pb->valid_at, out->done_at = pb->done_at;
}

int enpu_cosim_enpu_wq(const void *engine, int q, int i, enpu_cosim_enpu_wqe *out) {
    const core *k = engine;
    const wqueue *w = &k->wq[q];
    if (i < w->count) {
        int s = (w->head + i) % w->ring;
        const wq_entry *e = &w->e[s];
        out->addr = e->addr, out->ready = e->ready, out->dst = e->dst, out->len = e->len;
        out->data = w->data + (size_t)s * (size_t)k->P;
    }
    return w->count;
}
