/* PE controller: the inner loops.  For the current load unit it walks the
 * passes (input channel of the word, kernel tap; then the fused stages) and
 * within a pass the cycles (psum word ozi, tile position j, one position per
 * PE row), drives ps_addr / if_hw_addr / if_ch_addr / w_och_gcnt, decides
 * each cycle whether the PE array can issue, and attributes every cycle of
 * the chain to one activity (docs/microarch.md §11.4, §11.8, §11.10).  It
 * tells the scheduler when a unit's pad bank is free (done_at). */
#include "sim/easynpu/core.h"

static void enter_pass(core *k) {
    const sim_chain *c = k->ch;
    pectl *pc = &k->pc;
    const unit_cur *u = &pc->u;
    const int64_t p = pc->pass;
    pc->k = 0;
    if (p < pc->n_conv) {
        pass_info pi;
        sim_pass_info(c, u, p, &pi);
        pc->stage = 0;
        pc->lane = pi.lane;
        pc->first = u->tile_first && p == 0;
        pc->len = u->zse * u->q;
        pc->tap_off = (pi.kh - u->kh0) * c->dh * u->xi + pi.kw * c->dw;
        pc->reads_pad = true;
        pc->weighted = c->st[0].kind == K_CONV || c->st[0].kind == K_DW;
        pc->final = p == pc->n_conv - 1 && u->tile_last;
    } else {
        pc->stage = (int)(1 + p - pc->n_conv);
        pc->lane = 0;
        pc->tap_off = 0;
        pc->first = true;
        pc->len = u->zse * u->q;
        pc->reads_pad = false;
        pc->weighted = false;
        pc->final = true;
    }
    const sim_stage *s = &c->st[pc->stage];
    bool last = pc->stage == c->n_st - 1;
    pc->op2 = s->op2;
    pc->writes_main = pc->final && last;
    pc->writes_skip = pc->final && (s->w_skip || (last && c->rs_w_skip));
    k->cur_row = s->instr;
}

void sim_pectl_peak(core *k, const unit_cur *u) {
    const sim_chain *c = k->ch;
    int peak = (int)(u->zse * u->q);
    for (int s = 0; s < c->n_st; s++) {
        enpu_layer_stats *st = &k->sim->rows[c->st[s].instr];
        if (peak > st->psum_peak) st->psum_peak = peak;
    }
}

/* The unit's registers, its pass `pass` entered. */
static void enter_unit_at(core *k, int64_t pass) {
    const sim_chain *c = k->ch;
    pectl *pc = &k->pc;
    const unit_cur *u = &pc->u;
    for (int64_t p = 0; p < u->npos; p++)
        pc->hw_base[p] = (p / u->x) * c->sh * u->xi + (p % u->x) * c->sw;
    pc->n_conv = sim_unit_passes(c, u);
    pc->n_pass = pc->n_conv + (u->tile_last ? c->n_st - 1 : 0);
    pc->bank_base = (int64_t)sim_ifpad_bank_of(&k->pad, u->u) * k->pad.bank_size;
    pc->pass = pass;
    sim_pectl_peak(k, u);
    enter_pass(k);
}

static void enter_unit(core *k) { enter_unit_at(k, 0); }

void sim_pectl_seek(core *k, int64_t pass, int64_t kk) {
    enter_unit_at(k, pass);
    k->pc.k = kk;
}

void sim_pectl_start(core *k) {
    const sim_chain *c = k->ch;
    pe_array *pe = &k->pe;
    const int P = k->P;
    const sim_stage *s0 = &c->st[0];
    for (int64_t wdx = 0; wdx < c->n_words; wdx++) {
        int n = 0;
        for (int i = 0; i < P; i++) {
            int32_t ch = c->chan[wdx * P + i];
            pe->bias[wdx * P + i] = ch >= 0 && s0->bias ? s0->bias[ch] : 0;
            if (ch >= 0 && i < c->L) n++; /* of one lane group (§16) */
        }
        pe->nval[wdx] = n;
    }
    for (int e = 0; e < pe->depth; e++) pe->ready[e] = 0;
    k->started = k->pe_done = false;
    k->wait_kind = WAIT_NONE;
    k->cur_row = c->first;
    sim_unit_first(c, &k->pc.u);
    enter_unit(k);
}

static bool unit_valid(const core *k) {
    const pad_bank *b = &k->pad.bank[sim_ifpad_bank_of(&k->pad, k->pc.u.u)];
    return b->unit == k->pc.u.u && b->loaded && b->valid_at <= k->t;
}

void sim_pectl_resolve_wait(core *k) {
    if (k->wait_kind == WAIT_NONE) return;
    int64_t d = k->wait_kind == WAIT_UNIT
                    ? k->pad.bank[sim_ifpad_bank_of(&k->pad, k->pc.u.u)].denied
                    : k->op2_denied;
    uint64_t W = (uint64_t)k->wait_W, b = d < 0 ? 0 : (uint64_t)d;
    if (b > W) b = W;
    if (W > b) sim_core_account(k, k->wait_row, ENPU_ACT_IFMAP_LOAD, W - b, k->wait_start);
    if (b) sim_core_account(k, k->wait_row, ENPU_ACT_BUS_CONFLICT, b, k->wait_start + (W - b));
    k->wait_kind = WAIT_NONE;
    k->wait_W = 0;
}

int sim_pectl_step(core *k, enpu_err *err) {
    const sim_chain *c = k->ch;
    pectl *pc = &k->pc;
    const uint64_t t = k->t;
    k->sig.pe_valid = 0;
    if (k->pe_done) {
        pc->why = PC_DONE;
        enpu_activity a = t - k->last_issue <= (uint64_t)(k->D + k->Rq) ? ENPU_ACT_PIPELINE_DRAIN
                                                                          : ENPU_ACT_OFMAP_DRAIN;
        sim_core_account(k, k->cur_row, a, 1, t);
        return 0;
    }
    const unit_cur *u = &pc->u;
    const int64_t q = u->q, j = pc->k % q, e = (pc->k / q) * q + j;
    int64_t active = (u->npos - j + q - 1) / q;
    if (active > c->rows) active = c->rows;
    int stall = -1, wait = WAIT_NONE, why = PC_ISSUE;
    if (!k->started && (t < k->par_ready || (pc->weighted && !sim_wfifo_ready(&k->wpad, 0, t))))
        stall = ENPU_ACT_PIPELINE_FILL, why = PC_FILL;
    else if (pc->reads_pad && !unit_valid(k))
        wait = WAIT_UNIT, why = PC_WAIT_UNIT;
    else if (pc->op2 && !sim_wfifo_ready(&k->op2, (int)active - 1, t))
        wait = WAIT_OP2, why = PC_WAIT_OP2;
    else if (pc->weighted && !sim_wfifo_ready(&k->wpad, 0, t))
        stall = ENPU_ACT_WEIGHT_LOAD, why = PC_WEIGHT;
    else if ((pc->writes_main && !sim_wq_room(k, 0, sim_pe_count_writes(k, 0))) ||
             (pc->writes_skip && !sim_wq_room(k, 1, sim_pe_count_writes(k, 1))))
        stall = ENPU_ACT_OFMAP_DRAIN, why = PC_OFMAP;
    else if (pc->stage > 0 && k->pe.ready[e] > t)
        stall = ENPU_ACT_PIPELINE_DRAIN, why = PC_PSUM;
    pc->why = why;
    if (k->wait_kind != WAIT_NONE && wait != k->wait_kind) sim_pectl_resolve_wait(k);
    if (wait != WAIT_NONE) {
        if (k->wait_kind == WAIT_NONE) {
            k->wait_kind = wait;
            k->wait_start = t;
            k->wait_W = 0;
            k->wait_row = k->cur_row;
            sim_core_track(k, TRK_PE, -1);
        }
        k->wait_W++;
        return 0;
    }
    if (stall >= 0) {
        sim_core_account(k, k->cur_row, (enpu_activity)stall, 1, t);
        return 0;
    }
    int rc = sim_pe_issue(k, err);
    if (rc) return rc;
    sim_core_account(k, k->cur_row, ENPU_ACT_COMPUTE, 1, t);
    k->started = true;
    k->last_issue = t;
    k->stall_guard = t;
    if (pc->weighted) {
        if (c->bcast ? (pc->k + 1) % q == 0 : pc->k + 1 == pc->len) sim_wfifo_pop(&k->wpad, 1);
    }
    if (++pc->k < pc->len) return 0;
    if (pc->pass == pc->n_conv - 1)
        k->pad.bank[sim_ifpad_bank_of(&k->pad, u->u)].done_at = t;
    if (++pc->pass < pc->n_pass) {
        enter_pass(k);
        return 0;
    }
    sim_unit_next(c, &pc->u);
    if (pc->u.done) k->pe_done = true;
    else enter_unit(k);
    return 0;
}
