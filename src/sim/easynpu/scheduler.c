/* Scheduler: the outer loops (output-channel block, tile row, tile column,
 * input word = one load unit), the ifmap loader with padding and dilation,
 * the weight stream, the op2 stream (add/mul second operands), the ofmap and
 * skip write queues and the arbitration of the shared DTCM bus (writes win)
 * and of the skip port.  docs/microarch.md §11.4-11.8. */
#include <stdlib.h>
#include <string.h>

#include "sim/easynpu/core.h"

/* ---- unit cursor ----------------------------------------------------------- */

static void unit_fill(const sim_chain *c, unit_cur *u) {
    const int64_t P = c->P;
    /* called for every unit by three cursors: no division where the
     * common case needs none (one block per group, one PE row) */
    u->g = c->nbk == 1 ? u->blk : u->blk / c->nbk;
    u->k = c->nbk == 1 ? 0 : u->blk % c->nbk;
    if (c->bcast) {
        int64_t zk = c->opg - u->k * c->z;
        if (zk > c->z) zk = c->z;
        u->zse = (zk + c->L - 1) / c->L;
    } else {
        u->zse = 1;
    }
    u->kh0 = u->band * c->bh;
    u->nkh = c->hk - u->kh0 < c->bh ? c->hk - u->kh0 : c->bh;
    if (c->fc) {
        u->ox0 = u->oy0 = 0;
        u->x = u->y = u->xi = u->yi = 1;
        u->ix0 = u->iy0 = 0;
        u->c_lo = (u->kz % c->wpp_in) * P;
        u->c_hi = u->c_lo + P < c->ci ? u->c_lo + P : c->ci;
    } else {
        int64_t W = c->move ? c->wi : c->wo, H = c->move ? c->hi : c->ho;
        u->ox0 = u->tx * c->tx;
        u->oy0 = u->ty * c->ty;
        u->x = c->tx < W - u->ox0 ? c->tx : W - u->ox0;
        u->y = c->ty < H - u->oy0 ? c->ty : H - u->oy0;
        if (c->move) {
            u->xi = u->x, u->yi = u->y;
            u->ix0 = u->ox0, u->iy0 = u->oy0;
        } else {
            u->xi = (u->x - 1) * c->sw + (c->wk - 1) * c->dw + 1;
            u->yi = (u->y - 1) * c->sh + (u->nkh - 1) * c->dh + 1;
            u->ix0 = u->ox0 * c->sw - c->pl;
            u->iy0 = u->oy0 * c->sh - c->pt + u->kh0 * c->dh;
        }
        if (c->bcast) {
            int64_t lo = u->kz * P, hi = (u->kz + 1) * P;
            u->c_lo = lo > u->g * c->cpg ? lo : u->g * c->cpg;
            u->c_hi = hi < (u->g + 1) * c->cpg ? hi : (u->g + 1) * c->cpg;
        } else {
            u->c_lo = u->kz * P;
            u->c_hi = u->c_lo + P < c->ci ? u->c_lo + P : c->ci;
        }
    }
    u->npos = u->x * u->y;
    u->q = c->rows == 1 ? u->npos : (u->npos + c->rows - 1) / c->rows;
    if (c->bcast) {
        /* a continuing chain starts from the held sums, a holding one
         * neither requantizes nor runs fused stages (ISA 8) */
        u->tile_first = u->kz == u->kz_lo && u->band == 0 && !c->ps_cont;
        u->tile_last = u->kz == u->kz_hi && u->band == c->nb - 1 && !c->ps_hold;
    } else {
        u->tile_first = u->band == 0;
        u->tile_last = u->band == c->nb - 1;
    }
}

static void block_range(const sim_chain *c, unit_cur *u) {
    if (c->fc) {
        u->kz_lo = 0;
        u->kz_hi = c->hi * c->wi * c->wpp_in - 1;
    } else if (c->bcast) {
        int64_t g = u->blk / c->nbk;
        u->kz_lo = g * c->cpg / c->P;
        u->kz_hi = ((g + 1) * c->cpg - 1) / c->P;
    } else {
        u->kz_lo = 0;
        u->kz_hi = c->wpp_in - 1;
    }
}

void sim_unit_first(const sim_chain *c, unit_cur *u) {
    memset(u, 0, sizeof *u);
    block_range(c, u);
    u->kz = u->kz_lo;
    unit_fill(c, u);
}

/* Order (§11.4, §12): block, tile row, tile column, input word, band. */
void sim_unit_next(const sim_chain *c, unit_cur *u) {
    if (u->done) return;
    u->u++;
    if (++u->band < c->nb) goto fill;
    u->band = 0;
    if (++u->kz <= u->kz_hi) goto fill;
    if (++u->tx == c->n_tx) {
        u->tx = 0;
        if (++u->ty == c->n_ty) {
            u->ty = 0;
            if (++u->blk == c->nblk) {
                u->done = true;
                return;
            }
        }
    }
    block_range(c, u);
    u->kz = u->kz_lo;
fill:
    unit_fill(c, u);
}

int64_t sim_unit_passes(const sim_chain *c, const unit_cur *u) {
    int64_t taps = u->nkh * c->wk;
    return c->bcast ? (u->c_hi - u->c_lo) * taps : taps;
}

void sim_pass_info(const sim_chain *c, const unit_cur *u, int64_t p, pass_info *pi) {
    int64_t taps = u->nkh * c->wk, t = c->bcast ? p % taps : p;
    pi->kh = u->kh0 + t / c->wk;
    pi->kw = t % c->wk;
    if (c->fc) {
        pi->c = u->c_lo + p;
        pi->lane = pi->c % c->P;
        int64_t pix = u->kz / c->wpp_in;
        pi->wbase = c->weight_addr + (pix * c->ci + pi->c) * c->wpg + u->k * c->zs;
    } else if (c->bcast) {
        pi->c = u->c_lo + p / taps;
        pi->lane = pi->c - u->kz * c->P;
        int64_t cl = pi->c - u->g * c->cpg;
        pi->wbase = c->weight_addr + u->g * c->cpg * c->taps * c->wpg +
                    ((cl * c->hk + pi->kh) * c->wk + pi->kw) * c->wpg + u->k * c->zs;
    } else {
        pi->c = u->c_lo;
        pi->lane = 0;
        pi->wbase = c->weight_addr + (pi->kh * c->wk + pi->kw) * c->wpp_in + u->kz;
    }
}

/* ---- setup ------------------------------------------------------------------ */

int sim_sched_init(core *k, enpu_err *err) {
    const enpu_arch *a = k->a;
    /* one cycle pushes at most rows * (P + 2) words into a queue (§11.8);
     * a fast-forward window queues up to a final pass (psum_depth words per
     * lane group)
     * before it writes the words due (fastfwd.c) */
    int64_t vrows = a->pe_rows * a->lane_groups_max; /* virtual rows (§16) */
    int P = k->P, extra = (int)(2 * vrows * (P + 2) + 1 + a->psum_depth * a->lane_groups_max);
    for (int q = 0; q < 2; q++) {
        wqueue *w = &k->wq[q];
        w->mem = q ? ENPU_MEM_SKIP : ENPU_MEM_MAIN;
        w->cap = (int)a->psum_depth;
        w->ring = w->cap + extra;
        w->e = calloc((size_t)w->ring, sizeof *w->e);
        w->data = calloc((size_t)w->ring * (size_t)P, 1);
        if (!w->e || !w->data) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    }
    k->runs = calloc((size_t)(2 * vrows * P + 2), sizeof *k->runs);
    if (!k->runs) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    return 0;
}

void sim_sched_free(core *k) {
    for (int q = 0; q < 2; q++) {
        free(k->wq[q].e);
        free(k->wq[q].data);
    }
    free(k->runs);
}

/* First stage >= s with an op2 operand that runs in unit u, or n_st.  The
 * head runs in every unit; a fused stage only in the unit that completes its
 * tile (BasicConv: the last input word's last band; channel-wise: the last
 * band), exactly as the PE controller enters them (pe_ctrl.c enter_unit). */
static int op2_stage_from(const core *k, const unit_cur *u, int s) {
    const sim_chain *c = k->ch;
    for (; s < c->n_st; s++) {
        if (!c->st[s].op2) continue;
        if (s == 0 || u->tile_last) return s;
    }
    return c->n_st;
}

/* Moves the op2 cursor to its next word (or to the start when `init`). */
static void op2_settle(core *k) {
    const sim_chain *c = k->ch;
    for (;;) {
        if (k->os.done) {
            k->os_done = true;
            return;
        }
        if (k->os_stage >= c->n_st) {
            sim_unit_next(c, &k->os);
            k->os_stage = k->os.done ? c->n_st : op2_stage_from(k, &k->os, 0);
            k->os_k = k->os_r = 0;
            continue;
        }
        int64_t q = k->os.q, len = k->os.zse * q;
        if (k->os_k >= len) {
            k->os_stage = op2_stage_from(k, &k->os, k->os_stage + 1);
            k->os_k = k->os_r = 0;
            continue;
        }
        int64_t p = k->os_r * q + k->os_k % q;
        if (k->os_r >= c->rows || p >= k->os.npos) {
            k->os_r = 0;
            k->os_k++;
            continue;
        }
        return;
    }
}

void sim_sched_start(core *k) {
    const sim_chain *c = k->ch;
    /* loader */
    sim_unit_first(c, &k->ld);
    k->ld_busy = false;
    k->ld_j = 0;
    k->ld_prev_issued = 0;
    /* parameters and weights */
    k->par_left = c->n_par;
    k->par_ready = c->n_par > 0 ? k->t0 + (uint64_t)c->n_par - 1 + (uint64_t)k->Lw : k->t0;
    k->ws_on = c->st[0].kind == K_CONV || c->st[0].kind == K_DW;
    k->ws_done = !k->ws_on;
    if (k->ws_on) {
        sim_unit_first(c, &k->ws);
        k->ws_p = k->ws_o = 0;
        k->ws_np = sim_unit_passes(c, &k->ws);
        sim_pass_info(c, &k->ws, 0, &k->ws_pi);
    }
    sim_wfifo_reset(&k->wpad);
    /* op2 */
    sim_wfifo_reset(&k->op2);
    k->op2_denied = 0;
    k->os_done = !c->has_op2;
    if (c->has_op2) {
        sim_unit_first(c, &k->os);
        k->os_stage = op2_stage_from(k, &k->os, 0);
        k->os_k = k->os_r = 0;
        op2_settle(k);
    }
    /* write queues */
    for (int q = 0; q < 2; q++) k->wq[q].head = k->wq[q].count = 0;
}

/* ---- write queues and the writers -------------------------------------------- */

bool sim_wq_room(const core *k, int q, int n) {
    const wqueue *w = &k->wq[q];
    if (n == 0) return true;
    if (n > w->cap) return w->count == 0;
    return w->count + n <= w->cap;
}

void sim_wq_push(core *k, int q, const sim_run *r, const int8_t *vals, uint64_t ready) {
    wqueue *w = &k->wq[q];
    ENPU_ASSERT(w->count < w->ring);
    int s = (w->head + w->count) % w->ring;
    wq_entry *e = &w->e[s];
    int8_t *d = w->data + (size_t)s * (size_t)k->P;
    e->addr = r->addr;
    e->ready = ready;
    e->dst = r->dst;
    e->len = r->zfill ? k->P - r->dst : r->len;
    memcpy(d + r->dst, vals + r->src, (size_t)r->len);
    if (r->zfill) memset(d + r->dst + r->len, 0, (size_t)(k->P - r->dst - r->len));
    w->count++;
}

bool sim_sched_queues_empty(const core *k) { return k->wq[0].count == 0 && k->wq[1].count == 0; }

void sim_sched_writers(core *k) {
    k->main_busy = k->skip_busy = false;
    k->main_use = k->skip_use = BUS_IDLE;
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    for (int q = 0; q < 2; q++) {
        wqueue *w = &k->wq[q];
        bool ready = w->count > 0 && w->e[w->head].ready <= k->t;
        if (q == 0) k->sig.of_valid = k->sig.of_ready = ready;
        else k->sig.sk_valid = k->sig.sk_ready = ready;
        if (!ready) continue;
        wq_entry *e = &w->e[w->head];
        const int8_t *d = w->data + (size_t)w->head * (size_t)k->P;
        memcpy(sim_mem_ptr(k->mem, w->mem, e->addr) + e->dst, d + e->dst, (size_t)e->len);
        uint64_t *wc = q ? k->mem->skip_wc : k->mem->main_wc;
        if (wc) wc[e->addr] = k->t;
        if (q == 0) {
            st->writes[ENPU_MEM_MAIN_DTCM]++;
            k->main_busy = true;
            k->main_use = BUS_WRITE;
        } else {
            st->writes[ENPU_MEM_SKIP_DTCM]++;
            k->skip_busy = true;
            k->skip_use = BUS_WRITE;
        }
        w->head = (w->head + 1) % w->ring;
        w->count--;
        k->stall_guard = k->t;
    }
}

/* ---- op2 reader --------------------------------------------------------------- */

void sim_sched_op2(core *k) {
    k->sig.op2_valid = k->sig.op2_ready = 0;
    if (k->os_done || k->op2.count >= k->op2.depth) return;
    const sim_chain *c = k->ch;
    const sim_stage *s = &c->st[k->os_stage];
    bool *busy = s->op2_mem == ENPU_MEM_SKIP ? &k->skip_busy : &k->main_busy;
    k->sig.op2_valid = 1;
    if (*busy) {
        k->op2_denied++;
        return;
    }
    *busy = true;
    k->sig.op2_ready = 1;
    const unit_cur *u = &k->os;
    int64_t q = u->q, j = k->os_k % q, ozi = k->os_k / q, p = k->os_r * q + j;
    int64_t oy = u->oy0 + p / u->x, ox = u->ox0 + p % u->x;
    int64_t wpp = (s->co + k->P - 1) / k->P;
    int64_t grp = c->bcast ? c->chan[(u->blk * c->zstride + ozi) * k->P] / k->P : u->kz;
    int64_t addr = s->op2_addr + (oy * s->wo + ox) * wpp + grp;
    int8_t *dst = sim_wfifo_push(&k->op2, k->t + (uint64_t)k->Ld);
    memcpy(dst, sim_mem_ptr(k->mem, s->op2_mem, addr), (size_t)k->P);
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    st->reads[s->op2_mem == ENPU_MEM_SKIP ? ENPU_MEM_SKIP_DTCM : ENPU_MEM_MAIN_DTCM]++;
    if (s->op2_mem == ENPU_MEM_MAIN) k->main_use = BUS_OP2;
    else k->skip_use = BUS_OP2;
    k->os_r++;
    op2_settle(k);
    k->stall_guard = k->t;
}

/* ---- ifmap loader -------------------------------------------------------------- */

void sim_sched_loader(core *k) {
    unit_cur *u = &k->ld;
    k->sig.if_valid = k->sig.if_ready = 0;
    if (u->done) return;
    const sim_chain *c = k->ch;
    ifpad *pad = &k->pad;
    int b = sim_ifpad_bank_of(pad, u->u);
    pad_bank *bk = &pad->bank[b];
    if (!k->ld_busy) {
        bool ok = u->u == 0 ||
                  (k->ld_prev_issued < k->t && (bk->unit < 0 || bk->done_at < k->t));
        if (!ok) return;
        bk->unit = u->u;
        bk->loaded = false;
        bk->valid_at = NEVER;
        bk->done_at = NEVER;
        bk->denied = 0;
        bk->start = k->t;
        k->ld_busy = true;
        k->ld_j = 0;
        ENPU_ASSERT(u->xi * u->yi <= pad->bank_size);
    }
    int64_t j = k->ld_j, iy = u->iy0 + j / u->xi, ix = u->ix0 + j % u->xi;
    int64_t entry = (int64_t)b * pad->bank_size + j;
    int8_t *dst = pad->data + entry * k->P;
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    if (c->fc || (iy >= 0 && iy < c->hi && ix >= 0 && ix < c->wi)) {
        k->sig.if_valid = 1;
        if (k->main_busy) {
            bk->denied++;
            return;
        }
        k->main_busy = true;
        k->sig.if_ready = 1;
        int64_t addr = c->fc ? c->ifmap_addr + u->kz
                             : c->ifmap_addr + (iy * c->wi + ix) * c->istride + c->iword + u->kz;
        memcpy(dst, sim_mem_ptr(k->mem, ENPU_MEM_MAIN, addr), (size_t)k->P);
        pad->mark[entry] = 0;
        st->reads[ENPU_MEM_MAIN_DTCM]++;
        k->main_use = BUS_LOAD;
    } else {
        memset(dst, (int8_t)c->pad_value, (size_t)k->P);
        pad->mark[entry] = 1;
    }
    st->writes[ENPU_MEM_IFMAP_PAD] += (uint64_t)k->P;
    k->stall_guard = k->t;
    if (++k->ld_j == u->xi * u->yi) {
        bk->loaded = true;
        bk->valid_at = k->t + (uint64_t)k->Ld;
        k->ld_prev_issued = k->t;
        k->ld_busy = false;
        sim_core_emit(k, TRK_LOAD, -1, u->u, bk->start, k->t + 1);
        sim_unit_next(c, u);
    }
}

/* ---- weight reader ----------------------------------------------------------------- */

void sim_sched_weights(core *k) {
    k->sig.w_valid = 0;
    k->sig.w_ready = k->wpad.count < k->wpad.depth;
    enpu_layer_stats *st = &k->sim->rows[k->cur_row];
    if (k->par_left > 0) {
        k->par_left--;
        st->reads[ENPU_MEM_WEIGHT_MEM]++;
        k->sig.w_valid = 1;
        sim_core_track(k, TRK_WBUS, BUS_PARAM);
        k->stall_guard = k->t;
        return;
    }
    if (k->ws_done || k->wpad.count >= k->wpad.depth) {
        sim_core_track(k, TRK_WBUS, BUS_IDLE);
        return;
    }
    const sim_chain *c = k->ch;
    int64_t addr = k->ws_pi.wbase + k->ws_o;
    /* advance: words of the pass (zse: conv/fc; 1: dwconv), passes, units */
    if (++k->ws_o == (c->bcast ? k->ws.zse : 1)) {
        k->ws_o = 0;
        if (++k->ws_p == k->ws_np) {
            k->ws_p = 0;
            sim_unit_next(c, &k->ws);
            if (k->ws.done) k->ws_done = true;
            else k->ws_np = sim_unit_passes(c, &k->ws);
        }
        if (!k->ws_done) sim_pass_info(c, &k->ws, k->ws_p, &k->ws_pi);
    }
    int8_t *dst = sim_wfifo_push(&k->wpad, k->t + (uint64_t)k->Lw);
    memcpy(dst, sim_mem_ptr(k->mem, ENPU_MEM_WEIGHT, addr), (size_t)k->P);
    st->reads[ENPU_MEM_WEIGHT_MEM]++;
    st->writes[ENPU_MEM_WEIGHT_PAD] += (uint64_t)k->P;
    k->sig.w_valid = 1;
    sim_core_track(k, TRK_WBUS, BUS_WEIGHT);
    k->stall_guard = k->t;
}
