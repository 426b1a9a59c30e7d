/* Functional mode: executes each decoded chain directly on whole feature
 * maps, stage by stage, with no timing, and writes exactly the bytes the
 * cycle engine writes (every output word in full, lanes of channels >= co
 * zero).  It shares with the cycle engine only the decoded registers
 * (top_ctrl.c) and the numerics glue of chain.h, so the two are
 * independent computations of the same layer; the driver uses this one also
 * to check the cycle engine chain by chain.  A dma is an immediate copy in
 * program order; tokens are ignored (docs/microarch.md §13.8). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/easynpu/chain.h"
#include "sim/engine.h"

/* Reads [H][W][C] (C folded in words of P at addr, pixel p at addr +
 * p*stride) into buf. */
static void read_fmap(const sim_mem *m, int mem, int64_t addr, int64_t stride, int64_t H, int64_t W,
                      int64_t C, int8_t *buf) {
    for (int64_t pix = 0; pix < H * W; pix++) {
        const uint8_t *src = sim_mem_ptr(m, mem, addr + pix * stride);
        memcpy(buf + pix * C, src, (size_t)C);
    }
}

/* Writes buf [H][W][C] as whole words (zero lanes past C), pixel p at
 * addr + p*stride (stride 0: the packed ceil(C/P)). */
static void write_fmap(sim_mem *m, int mem, int64_t addr, int64_t stride, int64_t H, int64_t W,
                       int64_t C, const int8_t *buf) {
    const int64_t P = m->wb, wpp = (C + P - 1) / P;
    if (!stride) stride = wpp;
    for (int64_t pix = 0; pix < H * W; pix++) {
        uint8_t *dst = sim_mem_ptr(m, mem, addr + pix * stride);
        memcpy(dst, buf + pix * C, (size_t)C);
        memset(dst + C, 0, (size_t)(wpp * P - C));
    }
}

static int overflow(const enpu_sim *sim, const sim_stage *s, int64_t acc, int64_t oy, int64_t ox,
                    int64_t ch, enpu_err *err) {
    const enpu_program *p = sim->prog;
    const char *nm = p->layers && p->layers[s->instr].name ? p->layers[s->instr].name : "";
    return enpu_fail(err, ENPU_E_INVALID,
                     "instruction %d (%s): accumulator %lld at output (h=%lld, w=%lld, c=%d) "
                     "does not fit acc_bits=%lld",
                     s->instr, nm, (long long)acc, (long long)oy, (long long)ox, (int)ch,
                     (long long)sim->arch.acc_bits);
}

/* The start of output i's sum: the bias, or the held sum a continuing
 * chain adds to (ISA 8). */
static int64_t acc_start(const sim_enpu *e, const sim_chain *c, int64_t i, int32_t bias) {
    return c->ps_cont ? e->held[i] : bias;
}

/* The end of output i's sum: held for the next block (true), or requantized
 * by the caller. */
static bool acc_held(const sim_enpu *e, const sim_chain *c, int64_t i, int64_t acc) {
    if (c->ps_hold) e->held[i] = acc;
    return c->ps_hold;
}

/* Stage 0 of a window op (conv, dwconv/avgpool, maxpool) on input x. */
static int window_stage(const enpu_sim *sim, const sim_enpu *e, const sim_chain *c, const sim_mem *m,
                        const int8_t *x, int8_t *y, enpu_err *err) {
    const sim_stage *s = &c->st[0];
    const int64_t P = sim->P, wb = m->wb, wpp = c->wpp_in;
    const int acc_bits = (int)sim->arch.acc_bits;
    const uint8_t *wm = m->wmem;
    for (int64_t oy = 0; oy < c->ho; oy++)
        for (int64_t ox = 0; ox < c->wo; ox++)
            for (int64_t oc = 0; oc < c->co; oc++) {
                int64_t oi = (oy * c->wo + ox) * c->co + oc;
                int64_t acc = s->kind == K_MAX ? SIM_MAX_EMPTY : acc_start(e, c, oi, s->bias[oc]);
                int64_t g = oc / c->opg, ol = oc % c->opg;
                for (int64_t kh = 0; kh < c->hk; kh++) {
                    int64_t iy = oy * c->sh - c->pt + kh * c->dh;
                    bool row_in = iy >= 0 && iy < c->hi;
                    for (int64_t kw = 0; kw < c->wk; kw++) {
                        int64_t ix = ox * c->sw - c->pl + kw * c->dw;
                        bool in = row_in && ix >= 0 && ix < c->wi;
                        int64_t tap = kh * c->wk + kw;
                        if (s->kind == K_CONV) {
                            for (int64_t cl = 0; cl < c->cpg; cl++) {
                                int64_t ci = g * c->cpg + cl;
                                int32_t v = in ? x[(iy * c->wi + ix) * c->ci + ci] : c->pad_value;
                                int64_t word = c->weight_addr + g * c->cpg * c->taps * c->wpg +
                                               (cl * c->taps + tap) * c->wpg + ol / c->L;
                                /* lane group 0's copy of the weight (§16) */
                                acc += (int64_t)v * (int8_t)wm[word * wb + ol % c->L];
                            }
                        } else if (s->kind == K_DW) {
                            int32_t v = in ? x[(iy * c->wi + ix) * c->ci + oc] : c->pad_value;
                            int64_t word = c->weight_addr + tap * wpp + oc / P;
                            acc += (int64_t)v * (int8_t)wm[word * wb + oc % P];
                        } else if (in) {
                            int64_t v = (int64_t)x[(iy * c->wi + ix) * c->ci + oc] - s->zp_in;
                            if (acc == SIM_MAX_EMPTY || v > acc) acc = v;
                        }
                    }
                }
                if (s->kind == K_MAX && acc == SIM_MAX_EMPTY) acc = 0;
                if (acc_held(e, c, oi, acc)) continue;
                if (!enpu_acc_fits(acc, acc_bits)) return overflow(sim, s, acc, oy, ox, oc, err);
                y[(oy * c->wo + ox) * c->co + oc] = (int8_t)sim_requant(s, acc, (int32_t)oc);
            }
    return 0;
}

/* fc: y[oc] = rq(bias[oc] + sum over the whole map of x * w[h][w][c][oc]). */
static int fc_stage(const enpu_sim *sim, const sim_enpu *e, const sim_chain *c, const sim_mem *m,
                    const int8_t *x, int8_t *y, enpu_err *err) {
    const sim_stage *s = &c->st[0];
    const int64_t P = sim->P, wb = m->wb, rows = c->hi * c->wi * c->ci;
    for (int64_t oc = 0; oc < c->co; oc++) {
        int64_t acc = acc_start(e, c, oc, s->bias[oc]);
        const uint8_t *wcol = m->wmem + (c->weight_addr + oc / P) * wb + oc % P;
        for (int64_t r = 0; r < rows; r++) acc += (int64_t)x[r] * (int8_t)wcol[r * c->wpg * wb];
        if (acc_held(e, c, oc, acc)) continue;
        if (!enpu_acc_fits(acc, (int)sim->arch.acc_bits)) return overflow(sim, s, acc, 0, 0, oc, err);
        y[oc] = (int8_t)sim_requant(s, acc, (int32_t)oc);
    }
    return 0;
}

/* A 1x1 stage (bn, relu, act, add, mul) from x to y over ho x wo x co. */
static int pointwise_stage(const enpu_sim *sim, const sim_stage *s, const sim_mem *m,
                           const int8_t *x, int8_t *y, enpu_err *err) {
    const int64_t P = sim->P, wpp = (s->co + P - 1) / P;
    const int acc_bits = (int)sim->arch.acc_bits;
    for (int64_t pix = 0; pix < s->ho * s->wo; pix++) {
        const uint8_t *op2 = s->op2 ? sim_mem_ptr(m, s->op2_mem, s->op2_addr + pix * wpp) : NULL;
        for (int64_t ch = 0; ch < s->co; ch++) {
            int64_t i = pix * s->co + ch;
            int64_t acc = sim_stage_acc(s, (int32_t)ch, x[i], op2 ? (int8_t)op2[ch] : 0);
            if (!enpu_acc_fits(acc, acc_bits))
                return overflow(sim, s, acc, pix / s->wo, pix % s->wo, ch, err);
            y[i] = (int8_t)sim_requant(s, acc, (int32_t)ch);
        }
    }
    return 0;
}

/* The reshape remap of buf (the reshape's input [rs_hi][rs_wi][rs_ci]) into
 * out ([rs_ho][rs_wo][rs_co] flat). */
static void remap(const sim_chain *c, const int8_t *buf, int8_t *out) {
    for (int64_t h = 0; h < c->rs_hi; h++)
        for (int64_t w = 0; w < c->rs_wi; w++)
            for (int64_t ch = 0; ch < c->rs_ci; ch++)
                out[sim_perm_rank(c, h, w, ch)] = buf[(h * c->rs_wi + w) * c->rs_ci + ch];
}

int sim_func_exec_chain(const enpu_sim *sim, const sim_enpu *e, const sim_chain *c, sim_mem *m,
                        enpu_err *err) {
    int8_t *x = e->fbuf[0], *y = e->fbuf[1], *z = e->fbuf[2], *r = e->fbuf[3];
    read_fmap(m, ENPU_MEM_MAIN, c->ifmap_addr + c->iword, c->istride, c->hi, c->wi, c->ci, x);
    int rc = 0;
    int64_t nout = c->ho * c->wo * c->co;
    if (c->ps_cont && *e->held_len != nout) {
        const enpu_program *p = sim->prog;
        return enpu_fail(err, ENPU_E_INVALID,
                         "instruction %d (%s): ps_cont, but the chain before it did not hold %" PRId64
                         " sums (ps_hold with the same ho, wo, co)",
                         c->first, p->layers && p->layers[c->first].name ? p->layers[c->first].name : "",
                         nout);
    }
    *e->held_len = c->ps_hold ? nout : -1;
    for (int k = 0; k < c->n_st && !rc; k++) {
        const sim_stage *s = &c->st[k];
        if (k == 0) {
            switch (s->kind) {
            case K_CONV:
                rc = c->fc ? fc_stage(sim, e, c, m, x, y, err) : window_stage(sim, e, c, m, x, y, err);
                break;
            case K_DW:
            case K_MAX: rc = window_stage(sim, e, c, m, x, y, err); break;
            case K_MOVE: memcpy(y, x, (size_t)(c->hi * c->wi * c->ci)); break;
            default: rc = pointwise_stage(sim, s, m, x, y, err); break;
            }
        } else {
            rc = pointwise_stage(sim, s, m, y, z, err);
            int8_t *t = y;
            y = z;
            z = t;
        }
        if (rc) return rc;
        if (s->w_skip) write_fmap(m, ENPU_MEM_SKIP, s->skip_addr, 0, s->ho, s->wo, s->co, y);
    }
    const sim_stage *last = &c->st[c->n_st - 1];
    if (c->ps_hold) return 0; /* the sums stay held: nothing is written */
    if (c->remap) {
        remap(c, y, r);
        write_fmap(m, ENPU_MEM_MAIN, c->rs_ofmap_addr + c->rs_oword, c->rs_owpp, c->rs_ho, c->rs_wo,
                   c->rs_co, r);
        if (c->rs_w_skip)
            write_fmap(m, ENPU_MEM_SKIP, c->rs_skip_addr, 0, c->rs_ho, c->rs_wo, c->rs_co, r);
    } else {
        write_fmap(m, ENPU_MEM_MAIN, last->ofmap_addr + last->oword, last->owpp, last->ho, last->wo,
                   last->co, y);
    }
    return 0;
}

/* ---- the functional engine --------------------------------------------------------- */

typedef struct fn_state {
    sim_enpu x;
    sim_chain chain;
} fn_state;

static int fn_create(enpu_sim *sim, void **out, enpu_err *err) {
    fn_state *es = calloc(1, sizeof *es);
    if (!es) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    int rc = sim_enpu_init(&es->x, sim, err);
    if (rc) {
        free(es);
        return rc;
    }
    *out = es;
    return 0;
}

static void fn_destroy(void *state) {
    fn_state *es = state;
    sim_enpu_free(&es->x);
    free(es);
}

static int fn_run(void *state, enpu_sim *sim, enpu_err *err) {
    fn_state *es = state;
    const enpu_program *p = sim->prog;
    for (int pc = 0; pc < p->n_instr;) {
        int64_t op = p->instr[pc].opcode;
        if (op == ENPU_OPC_END) break;
        if (op == ENPU_OPC_SYNC) {
            int rc = sim_host_op(sim, pc, err);
            if (rc) return rc;
            pc++;
            continue;
        }
        if (op == ENPU_OPC_DMA) { /* an immediate copy in program order (§13.8) */
            sim_dma_copy(&sim->mem, &p->instr[pc], 0);
            int rc = sim_dma_done(sim, pc, err);
            if (rc) return rc;
            pc++;
            continue;
        }
        int rc = sim_decode_chain(&es->x.dec, p, &sim->mem, pc, &es->chain, err);
        if (rc) return rc;
        sim_rows_of_chain(sim, &es->chain);
        if ((rc = sim_func_exec_chain(sim, &es->x, &es->chain, &sim->mem, err))) return rc;
        if ((rc = sim_chain_done(sim, &es->x, &es->chain, err))) return rc;
        pc += es->chain.n_instr;
    }
    return 0;
}

const enpu_sim_engine sim_engine_easynpu_functional = {
    "easynpu", ENPU_ENGINE_EASYNPU, ENPU_SIM_FUNCTIONAL, fn_create, fn_destroy, fn_run,
};
