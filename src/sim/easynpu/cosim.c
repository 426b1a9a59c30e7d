/* Co-simulation accessors of the EasyNPU engine (include/easynpu/cosim.h):
 * they copy the core's registers into the plain structs a testbench reads
 * and change nothing.  The issue a cycle would make is computed from the PE
 * controller's registers exactly as sim_pe_issue (pe.c) addresses the pads,
 * the psum file and the lane tables. */
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
    out->ps_addr = k->sig.ps_addr;
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
