/* PE array: P PEs per row, `rows` rows.  Each PE has an 8x8 multiplier, a
 * 32-bit adder (modelled in 64 bits; the requantizer checks acc_bits), a
 * psum register file of psum_depth entries, a compare unit (maxpool_en) and
 * the requantizer output stage, whose int8 result is either written out or
 * fed back to the multiplier for the next fused stage (ps_back_en).
 * Control per pass comes from the PE controller (pe_ctrl.c): ps_addr (the
 * entry), ps_outer_en (the first pass adds the bias), maxpool_en,
 * byp_mul_en (max pool, relu, reshape: no multiply).  docs/microarch.md §7
 * and §11.8.  Values are computed when a cycle issues; their timing (final
 * at +D, requantized at +D+Rq) is enforced by the controller and the write
 * queues. */
#include <stdio.h>
#include <stdlib.h>

#include "sim/easynpu/core.h"

int sim_pe_init(pe_array *pe, const enpu_arch *a, int64_t max_lanes, enpu_err *err) {
    pe->P = (int)a->pes;
    pe->rows = (int)a->pe_rows;
    pe->depth = (int)a->psum_depth;
    size_t n = (size_t)pe->rows * (size_t)pe->depth * (size_t)pe->P;
    pe->psum = calloc(n, sizeof(int64_t));
    pe->sval = calloc(n, 1);
    pe->ready = calloc((size_t)pe->depth, sizeof(uint64_t));
    pe->bias = calloc((size_t)max_lanes, sizeof(int32_t));
    pe->nval = calloc((size_t)(max_lanes / pe->P + 1), sizeof(int));
    if (!pe->psum || !pe->sval || !pe->ready || !pe->bias || !pe->nval)
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the PE array");
    return 0;
}

void sim_pe_free(pe_array *pe) {
    free(pe->psum);
    free(pe->sval);
    free(pe->ready);
    free(pe->bias);
    free(pe->nval);
}

/* Runs of the words stage s writes into queue q for position (oy, ox) and
 * psum word wdx. */
static int gen_runs(const core *k, int q, int s, int64_t oy, int64_t ox, int64_t wdx,
                    sim_run *out) {
    const sim_chain *c = k->ch;
    const sim_stage *st = &c->st[s];
    const int P = k->P, n = k->pe.nval[wdx];
    const int64_t c0 = c->chan[wdx * P];
    const bool last = s == c->n_st - 1;
    int nr = 0;
    if (n == 0) return 0;
    if (q == 0) {
        if (!last) return 0;
        if (c->remap)
            return sim_runs_remap(c, P, c->rs_ofmap_addr + c->rs_oword, c->rs_owpp, oy, ox, c0, n, out);
        if (c->aligned) {
            out[0] = (sim_run){st->ofmap_addr + st->oword + (oy * st->wo + ox) * st->owpp + c0 / P,
                               0, 0, n, n < P};
            return 1;
        }
        return sim_runs_direct(P, st->ofmap_addr + st->oword, st->owpp, st->wo, st->co, oy, ox, c0,
                               n, out);
    }
    if (st->w_skip) {
        int64_t wpp = (st->co + P - 1) / P;
        if (c->aligned)
            out[nr++] = (sim_run){st->skip_addr + (oy * st->wo + ox) * wpp + c0 / P, 0, 0, n, n < P};
        else
            nr += sim_runs_direct(P, st->skip_addr, wpp, st->wo, st->co, oy, ox, c0, n, out);
    }
    if (last && c->rs_w_skip)
        nr += sim_runs_remap(c, P, c->rs_skip_addr, (c->rs_co + P - 1) / P, oy, ox, c0, n, out + nr);
    return nr;
}

int sim_pe_runs(const core *k, int q, int s, int64_t oy, int64_t ox, int64_t wdx, sim_run *out) {
    return gen_runs(k, q, s, oy, ox, wdx, out);
}

int sim_pe_count_writes(core *k, int q) {
    const pectl *pc = &k->pc;
    const unit_cur *u = &pc->u;
    const int64_t qq = u->q, j = pc->k % qq, ozi = pc->k / qq;
    const int64_t wdx = k->ch->bcast ? u->blk * k->ch->zstride + ozi : u->kz;
    int total = 0;
    for (int64_t r = 0; r < k->ch->rows; r++) {
        int64_t p = r * qq + j;
        if (p >= u->npos) break;
        total += gen_runs(k, q, pc->stage, u->oy0 + p / u->x, u->ox0 + p % u->x, wdx, k->runs);
    }
    return total;
}

static int overflow(const core *k, const sim_stage *s, int64_t acc, int64_t oy, int64_t ox,
                    int32_t ch, enpu_err *err) {
    const enpu_program *p = k->sim->prog;
    const char *nm = p->layers && p->layers[s->instr].name ? p->layers[s->instr].name : "";
    return enpu_fail(err, ENPU_E_INVALID,
                     "instruction %d (%s): accumulator %lld at output (h=%lld, w=%lld, c=%d) "
                     "does not fit acc_bits=%lld",
                     s->instr, nm, (long long)acc, (long long)oy, (long long)ox, (int)ch,
                     (long long)k->a->acc_bits);
}

int sim_pe_output(const core *k, const sim_stage *s, const int32_t *chan, int n,
                  const int64_t *acc, int64_t oy, int64_t ox, int8_t *out, enpu_err *err) {
    const int acc_bits = (int)k->a->acc_bits;
    const int64_t hi = ((int64_t)1 << (acc_bits - 1)) - 1;
    bool fits = true;
    /* the lanes are independent: checked together, the first one that does
     * not fit is the error */
    if (s->per_channel && s->kind != K_MAX) {
        for (int i = 0; i < n; i++) {
            int64_t a = acc[i];
            int32_t c = chan[i];
            bool f = a >= -hi - 1 && a <= hi;
            fits &= f;
            out[i] = (int8_t)enpu_requant_as(s->rqmode, f ? a : 0, s->M[c], s->S[c], s->rq.zp, s->rq.lo,
                                              s->rq.hi);
        }
    } else {
        for (int i = 0; i < n; i++) {
            int64_t a = acc[i];
            if (s->kind == K_MAX && a == SIM_MAX_EMPTY) a = 0;
            bool f = a >= -hi - 1 && a <= hi;
            fits &= f;
            out[i] = (int8_t)sim_requant(s, f ? a : 0, chan[i]);
        }
    }
    for (int i = 0; !fits && i < n; i++) {
        int64_t a = s->kind == K_MAX && acc[i] == SIM_MAX_EMPTY ? 0 : acc[i];
        if (!enpu_acc_fits(a, acc_bits)) return overflow(k, s, a, oy, ox, chan[i], err);
    }
    for (int i = n; i < k->P; i++) out[i] = 0;
    return 0;
}

int sim_pe_issue(core *k, enpu_err *err) {
    const sim_chain *c = k->ch;
    pectl *pc = &k->pc;
    pe_array *pe = &k->pe;
    const unit_cur *u = &pc->u;
    const int P = k->P;
    const int acc_bits = (int)k->a->acc_bits;
    const int64_t q = u->q, j = pc->k % q, ozi = pc->k / q, e = ozi * q + j;
    const int64_t wdx = c->bcast ? u->blk * c->zstride + ozi : u->kz;
    const int32_t *chan = c->chan + wdx * P;
    const int n = pe->nval[wdx];
    const sim_stage *s = &c->st[pc->stage];
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    const int32_t *bias = pe->bias + wdx * P;
    const int8_t *w = pc->weighted ? sim_wfifo_at(&k->wpad, 0) : NULL;
    const uint64_t ready = k->t + (uint64_t)(k->D + k->Rq);
    int8_t out[256];
    int active = 0;
    /* virtual row r: lane group r mod lg of PE row r / lg, lanes [off, off
     * + L) (§16; lg = 1: the PE row itself) */
    const int L = (int)c->L;
    for (int64_t r = 0; r < c->rows; r++) {
        int64_t p = r * q + j;
        if (p >= u->npos) break;
        const size_t prow = (size_t)(r / c->lg), off = (size_t)(r % c->lg) * (size_t)L;
        int64_t *ps = pe->psum + (prow * (size_t)pe->depth + (size_t)e) * (size_t)P + off;
        int8_t *sv = pe->sval + (prow * (size_t)pe->depth + (size_t)e) * (size_t)P + off;
        const int8_t *op2 = pc->op2 ? sim_wfifo_at(&k->op2, active) : NULL;
        int64_t oy = u->oy0 + p / u->x, ox = u->ox0 + p % u->x;
        active++;
        if (pc->stage == 0) {
            int64_t entry = pc->bank_base + pc->hw_base[p] + pc->tap_off;
            const int8_t *xw = k->pad.data + entry * P;
            switch (s->kind) {
            case K_CONV: {
                const int32_t x = xw[pc->lane];
                const int32_t *bo = bias + off;
                const int8_t *wo = w + off;
                if (pc->first)
                    for (int i = 0; i < L; i++) ps[i] = (int64_t)bo[i] + x * wo[i];
                else
                    for (int i = 0; i < L; i++) ps[i] += x * wo[i];
                st->reads[ENPU_MEM_IFMAP_PAD]++;
                st->uops[ENPU_UOP_MAC] += (uint64_t)L;
                break;
            }
            case K_DW:
                if (pc->first)
                    for (int i = 0; i < P; i++) ps[i] = (int64_t)bias[i] + xw[i] * w[i];
                else
                    for (int i = 0; i < P; i++) ps[i] += xw[i] * w[i];
                st->reads[ENPU_MEM_IFMAP_PAD] += (uint64_t)P;
                st->uops[ENPU_UOP_MAC] += (uint64_t)P;
                break;
            case K_MAX:
                if (k->pad.mark[entry]) {
                    if (pc->first)
                        for (int i = 0; i < P; i++) ps[i] = SIM_MAX_EMPTY;
                } else {
                    for (int i = 0; i < P; i++) {
                        int64_t v = (int64_t)xw[i] - s->zp_in;
                        if (pc->first || ps[i] == SIM_MAX_EMPTY || v > ps[i]) ps[i] = v;
                    }
                }
                st->reads[ENPU_MEM_IFMAP_PAD] += (uint64_t)P;
                st->uops[ENPU_UOP_ALU] += (uint64_t)P;
                break;
            case K_MOVE:
                for (int i = 0; i < P; i++) out[i] = i < n ? xw[i] : 0;
                st->reads[ENPU_MEM_IFMAP_PAD] += (uint64_t)P;
                break;
            default: /* 1x1 channel-wise head: one pass, operand from the pad */
                for (int i = 0; i < n; i++) {
                    int64_t acc = sim_stage_acc(s, chan[i], xw[i], op2 ? op2[i] : 0);
                    if (!enpu_acc_fits(acc, acc_bits)) return overflow(k, s, acc, oy, ox, chan[i], err);
                    out[i] = (int8_t)sim_requant(s, acc, chan[i]);
                }
                for (int i = n; i < P; i++) out[i] = 0;
                st->reads[ENPU_MEM_IFMAP_PAD] += (uint64_t)P;
                enpu_stage_uops(s->in->opcode, (uint64_t)P, st->uops);
                break;
            }
            if (s->kind == K_CONV || s->kind == K_DW || s->kind == K_MAX) {
                st->writes[ENPU_MEM_PSUM] += (uint64_t)L;
                if (!pc->first) st->reads[ENPU_MEM_PSUM] += (uint64_t)L;
                if (pc->final) {
                    st->uops[ENPU_UOP_REQUANT] += (uint64_t)L;
                    int rc = sim_pe_output(k, s, chan + off, n, ps, oy, ox, out, err);
                    if (rc) return rc;
                }
            }
        } else {
            /* fused stage: the previous stage's requantized value comes back
             * through ps_back_en */
            for (int i = 0; i < n; i++) {
                int64_t acc = sim_stage_acc(s, chan[i], sv[i], op2 ? op2[i] : 0);
                if (!enpu_acc_fits(acc, acc_bits)) return overflow(k, s, acc, oy, ox, chan[i], err);
                out[i] = (int8_t)sim_requant(s, acc, chan[i]);
            }
            for (int i = n; i < P; i++) out[i] = 0;
            st->reads[ENPU_MEM_PSUM] += (uint64_t)P;
            st->writes[ENPU_MEM_PSUM] += (uint64_t)P;
            enpu_stage_uops(s->in->opcode, (uint64_t)P, st->uops);
        }
        if (!pc->final) continue;
        memcpy(sv, out, (size_t)L);
        for (int q2 = 0; q2 < 2; q2++) {
            if (!(q2 ? pc->writes_skip : pc->writes_main)) continue;
            int nr = gen_runs(k, q2, pc->stage, oy, ox, wdx, k->runs);
            for (int i = 0; i < nr; i++) sim_wq_push(k, q2, &k->runs[i], out, ready);
        }
    }
    if (pc->final) pe->ready[e] = ready;
    if (pc->weighted) st->reads[ENPU_MEM_WEIGHT_PAD] += (uint64_t)P;
    if (pc->op2) {
        sim_wfifo_pop(&k->op2, active);
        k->op2_denied = 0;
    }
    /* control signals of row 0 */
    sim_signals *sg = &k->sig;
    sg->pe_valid = 1;
    sg->ps_addr = e;
    sg->stage = pc->stage;
    sg->if_hw_addr = pc->stage == 0 ? pc->bank_base + pc->hw_base[j] + pc->tap_off : sg->if_hw_addr;
    sg->if_ch_addr = c->bcast && pc->stage == 0 ? pc->lane : 0;
    sg->w_och_gcnt = k->wpad.head;
    sg->ps_outer_en = pc->first && (s->kind == K_CONV || s->kind == K_DW || s->kind == K_BN);
    sg->ps_back_en = pc->stage > 0;
    sg->maxpool_en = s->kind == K_MAX;
    sg->byp_mul_en = s->kind == K_MAX || s->kind == K_MOVE || s->kind == K_RELU;
    return 0;
}
