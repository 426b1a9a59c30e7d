/* Top controller, decode side: turns a chain of fused instructions (a head
 * and the members its fuse_next bits pull in, docs/isa.md "Fused chains")
 * into the registers of the scheduler and the PE controller, and loads the
 * parameter registers (biases, requantization, bn multipliers, the PWL
 * table) from weight memory.  Both modes execute these registers, so what a
 * layer means is decided once, here.  The fetch/decode timing of the cycle
 * engine is in engine.c (it is a few lines of bookkeeping per instruction).
 *
 * Also: the closed-form compute cycles and MAC counts of docs/microarch.md
 * §11.10-11, and the output address runs of masked writes (§11.8-9). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"
#include "sim/easynpu/chain.h"

static const char *lname(const enpu_program *p, int i) {
    const char *n = p->layers ? p->layers[i].name : NULL;
    return n && *n ? n : enpu_opcode_mnemonic(p->instr[i].opcode);
}

int sim_chain_len(const enpu_program *p, int first) { return enpu_program_chain_len(p, first); }

static bool is_cw_1x1(int64_t op) {
    return op == ENPU_OPC_BN || op == ENPU_OPC_RELU || op == ENPU_OPC_ACT || op == ENPU_OPC_ADD ||
           op == ENPU_OPC_MUL;
}


int sim_decoder_init(sim_decoder *d, const enpu_program *p, enpu_err *err) {
    memset(d, 0, sizeof *d);
    int64_t P = p->arch.pes;
    d->max_stages = 1;
    d->max_co = 1;
    d->max_lanes = P;
    for (int i = 0; i < p->n_instr;) {
        int n = sim_chain_len(p, i);
        if (n > d->max_stages) d->max_stages = n;
        for (int k = 0; k < n; k++) {
            const enpu_instr *in = &p->instr[i + k];
            int64_t co = in->co > in->ci ? in->co : in->ci;
            if (co > d->max_co) d->max_co = co;
        }
        const enpu_instr *h = &p->instr[i];
        int64_t lanes = enpu_ceil_div(h->ci, P) * P;
        if (enpu_opcode_class(h->opcode) == ENPU_CLASS_CONV && h->zs > 0) {
            int64_t G = h->opcode == ENPU_OPC_FC || h->groups < 1 ? 1 : h->groups;
            int64_t L = P >> (h->lane_split < 8 ? h->lane_split : 8);
            if (L < 1) L = 1;
            int64_t opg = h->co / G, wpg = enpu_ceil_div(opg, L);
            int64_t zstr = h->zs < wpg ? h->zs : wpg;
            int64_t l2 = G * enpu_ceil_div(opg, h->zs * L) * zstr * P;
            if (l2 > lanes) lanes = l2;
        }
        if (lanes > d->max_lanes) d->max_lanes = lanes;
        i += n;
    }
    size_t S = (size_t)d->max_stages, C = (size_t)d->max_co;
    d->st = calloc(S, sizeof *d->st);
    d->bias = calloc(S * C, sizeof(int32_t));
    d->M = calloc(S * C, sizeof(uint32_t));
    d->S = calloc(S * C, 1);
    d->bnw = calloc(S * C, 1);
    d->tab = calloc(S, sizeof *d->tab);
    d->chan = calloc((size_t)d->max_lanes, sizeof(int32_t));
    if (!d->st || !d->bias || !d->M || !d->S || !d->bnw || !d->tab || !d->chan) {
        sim_decoder_free(d);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for parameter registers");
    }
    return 0;
}

void sim_decoder_free(sim_decoder *d) {
    free(d->st);
    free(d->bias);
    free(d->M);
    free(d->S);
    free(d->bnw);
    free(d->tab);
    free(d->chan);
    memset(d, 0, sizeof *d);
}

static uint32_t rd32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Bits of a requantization multiplier: TFLite's are Q31 words. */
static int mult_width(const enpu_arch *a) {
    return a->requant == ENPU_REQUANT_TFLITE ? 31 : (int)a->mult_bits;
}

/* requant tflite: an add's or mul's (M, S) records from its quant block
 * (enpu_quant_records): the output's, then for an add in1's and in2's. */
static int load_tfl_records(const enpu_program *p, const sim_mem *m, int idx, sim_stage *s,
                            enpu_err *err) {
    const enpu_instr *in = s->in;
    const uint8_t *qb = m->wmem + in->quant_addr * m->wb;
    int64_t n = enpu_quant_records(&p->arch, in);
    uint32_t mm[3] = {0}, ss[3] = {0};
    for (int64_t r = 0; r < n && r < 3; r++) {
        mm[r] = rd32(qb + 8 * r), ss[r] = rd32(qb + 8 * r + 4);
        if (mm[r] > (uint32_t)INT32_MAX || ss[r] > ENPU_SHIFT_MAX)
            return enpu_fail(err, ENPU_E_INVALID,
                             "instruction %d (%s): quant block at word %" PRId64 ": record %" PRId64
                             ": M=%u S=%u outside M < 2^31, S <= %d",
                             idx, lname(p, idx), in->quant_addr, r, mm[r], ss[r], ENPU_SHIFT_MAX);
    }
    s->rq.M = mm[0], s->rq.S = (int)ss[0];
    if (n == 3) s->in1 = (int32_t)mm[1], s->in1_s = (int)ss[1], s->in2 = (int32_t)mm[2], s->in2_s = (int)ss[2];
    return 0;
}

/* Per-channel bias and requantization of a stage from weight memory. */
static int load_params(const enpu_program *p, const sim_mem *m, int idx, sim_stage *s,
                       int32_t *bias, uint32_t *M, int8_t *S, enpu_err *err) {
    const enpu_instr *in = s->in;
    int64_t wb = m->wb;
    const uint8_t *bb = m->wmem + in->bias_addr * wb, *qb = m->wmem + in->quant_addr * wb;
    for (int64_t c = 0; c < in->co; c++) {
        bias[c] = (int32_t)rd32(bb + 4 * c);
        uint32_t mm = rd32(qb + 8 * c), ss = rd32(qb + 8 * c + 4);
        if (mm >= ((uint32_t)1 << mult_width(&p->arch)) || ss > ENPU_SHIFT_MAX)
            return enpu_fail(err, ENPU_E_INVALID,
                             "instruction %d (%s): quant block at word %" PRId64
                             ": channel %" PRId64 ": M=%u S=%u outside M < 2^%" PRId64
                             ", S <= %d",
                             idx, lname(p, idx), in->quant_addr, c, mm, ss,
                             (int64_t)mult_width(&p->arch), ENPU_SHIFT_MAX);
        M[c] = mm;
        S[c] = (int8_t)ss;
    }
    s->bias = bias;
    s->M = M;
    s->S = S;
    s->per_channel = true;
    return 0;
}

static int load_table(const enpu_program *p, const sim_mem *m, int idx, sim_stage *s,
                      enpu_pwl_table *t, enpu_err *err) {
    const enpu_instr *in = s->in;
    memset(t, 0, sizeof *t);
    /* header (docs/isa.md, ISA 2): x_base, seg_shift, M, S, zp_out, lo, hi, segments */
    const uint8_t *hb = m->wmem + in->table_addr * m->wb;
    int32_t hd[8];
    for (int i = 0; i < 8; i++) hd[i] = (int32_t)rd32(hb + 4 * i);
    if (hd[7] != (int32_t)p->arch.act_segments)
        return enpu_fail(err, ENPU_E_INVALID,
                         "instruction %d (%s): table at word %" PRId64
                         ": header says %d segments, the arch has %" PRId64,
                         idx, lname(p, idx), in->table_addr, (int)hd[7], p->arch.act_segments);
    t->x_base = hd[0];
    t->seg_shift = hd[1];
    t->M = (uint32_t)hd[2];
    t->S = hd[3];
    t->zp_out = hd[4];
    t->lo = hd[5];
    t->hi = hd[6];
    t->segments = hd[7];
    if (hd[1] < 0 || hd[1] > 8 || hd[2] < 0 || hd[3] < 0 || hd[3] > ENPU_SHIFT_MAX)
        return enpu_fail(err, ENPU_E_INVALID,
                         "instruction %d (%s): table at word %" PRId64
                         ": header seg_shift=%d M=%d S=%d out of range",
                         idx, lname(p, idx), in->table_addr, (int)hd[1], (int)hd[2], (int)hd[3]);
    const uint8_t *tb = hb + enpu_ceil_div(ENPU_TABLE_HEADER_BYTES, m->wb) * m->wb;
    for (int i = 0; i < t->segments; i++) {
        int32_t a = (int32_t)rd32(tb + 8 * i), b = (int32_t)rd32(tb + 8 * i + 4);
        if (a < -128 || a > 127)
            return enpu_fail(err, ENPU_E_INVALID,
                             "instruction %d (%s): table at word %" PRId64
                             ": segment %d: slope %d is not an int8 value",
                             idx, lname(p, idx), in->table_addr, i, (int)a);
        t->a[i] = (int8_t)a;
        t->b[i] = b;
    }
    char what[160];
    snprintf(what, sizeof what, "instruction %d (%s): table", idx, lname(p, idx));
    int rc = enpu_pwl_validate(what, t, (int)p->arch.mult_bits, 1, err);
    if (rc) return rc;
    s->tab = t;
    s->rq = (enpu_rq){t->M, t->S, t->zp_out, t->lo, t->hi};
    return 0;
}

/* Blocks [a, a+n) and [b, b+m) of the same memory overlap. */
static bool overlap(int ma, int64_t a, int64_t n, int mb, int64_t b, int64_t m) {
    return ma == mb && a < b + m && b < a + n;
}

typedef struct blk {
    int mem;
    int64_t addr, words;
    int stage;     /* writer/reader stage */
    const char *role;
} blk;

/* Hazards inside a chain that per-instruction validation cannot see: a
 * chain writes its output tile by tile while it still reads, so a written
 * block may overlap a read block only exactly in place where the hardware
 * reads each tile before writing it (docs/microarch.md §11.4). */
static int check_chain_hazards(const enpu_program *p, const sim_chain *c, enpu_err *err) {
    const enpu_arch *a = &p->arch;
    blk w[ENPU_MAX_BLOCKS * 4], r[ENPU_MAX_BLOCKS * 4];
    int nw = 0, nr = 0;
    const int cap = ENPU_MAX_BLOCKS * 4;
    if (c->n_instr == 1) return 0; /* enpu_instr_validate covered it */
    r[nr++] = (blk){ENPU_MEM_MAIN, c->ifmap_addr, c->ifmap_span, 0,
                    "ifmap"};
    for (int k = 0; k < c->n_st && nw < cap - 2 && nr < cap - 1; k++) {
        const sim_stage *s = &c->st[k];
        int64_t words = enpu_fmap_words(a, s->ho, s->wo, s->co);
        if (s->op2) r[nr++] = (blk){s->op2_mem, s->op2_addr, words, k, "op2"};
        if (s->w_skip) w[nw++] = (blk){ENPU_MEM_SKIP, s->skip_addr, words, k, "skip"};
        if (s->w_main && !c->remap)
            w[nw++] = (blk){ENPU_MEM_MAIN, s->ofmap_addr, enpu_ofmap_span(a, s->in), k, "ofmap"};
    }
    if (c->remap) {
        int64_t words = enpu_fmap_words(a, c->rs_ho, c->rs_wo, c->rs_co);
        w[nw++] = (blk){ENPU_MEM_MAIN, c->rs_ofmap_addr, enpu_ofmap_span(a, &p->instr[c->rs_instr]),
                        c->n_st - 1, "ofmap"};
        if (c->rs_w_skip) w[nw++] = (blk){ENPU_MEM_SKIP, c->rs_skip_addr, words, c->n_st - 1, "skip"};
    }
    for (int i = 0; i < nw; i++)
        for (int j = 0; j < nr; j++) {
            if (!overlap(w[i].mem, w[i].addr, w[i].words, r[j].mem, r[j].addr, r[j].words)) continue;
            bool exact = w[i].addr == r[j].addr && w[i].words == r[j].words;
            bool ok = false;
            if (exact && r[j].stage == 0 && strcmp(r[j].role, "ifmap") == 0)
                ok = is_cw_1x1(c->h->opcode) && !c->remap;
            else if (exact && strcmp(r[j].role, "op2") == 0)
                ok = w[i].stage >= r[j].stage;
            if (!ok)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "chain at instruction %d (%s): the %s block [%" PRId64 ", %" PRId64
                                 ") written by instruction %d overlaps the %s block [%" PRId64
                                 ", %" PRId64 ") read by instruction %d; a fused chain writes tile "
                                 "by tile while it reads, so only an exact in-place 1x1 update "
                                 "is allowed",
                                 c->first, lname(p, c->first), w[i].role, w[i].addr,
                                 w[i].addr + w[i].words, c->st[w[i].stage].instr, r[j].role,
                                 r[j].addr, r[j].addr + r[j].words, c->st[r[j].stage].instr);
        }
    return 0;
}

int sim_decode_chain(sim_decoder *d, const enpu_program *p, const sim_mem *m, int first,
                     sim_chain *c, enpu_err *err) {
    const enpu_arch *a = &p->arch;
    const int64_t P = a->pes;
    memset(c, 0, sizeof *c);
    c->P = (int)P;
    int n = sim_chain_len(p, first);
    const enpu_instr *h = &p->instr[first];
    enpu_opclass cls = enpu_opcode_class(h->opcode);
    if (cls != ENPU_CLASS_CONV && cls != ENPU_CLASS_CW && cls != ENPU_CLASS_MOVE)
        return enpu_fail(err, ENPU_E_INVALID, "instruction %d (%s): %s is not a layer", first,
                         lname(p, first), enpu_opcode_mnemonic(h->opcode));
    c->first = first;
    c->n_instr = n;
    c->h = h;
    c->bcast = cls == ENPU_CLASS_CONV;
    c->move = cls == ENPU_CLASS_MOVE;
    c->hi = h->hi, c->wi = h->wi, c->ci = h->ci, c->ho = h->ho, c->wo = h->wo, c->co = h->co;
    c->hk = h->hk, c->wk = h->wk, c->sh = h->stride_h, c->sw = h->stride_w;
    c->dh = h->dil_h, c->dw = h->dil_w, c->pt = h->pad_top, c->pl = h->pad_left;
    c->fc = h->opcode == ENPU_OPC_FC;
    c->ps_cont = c->bcast && h->ps_cont;
    c->ps_hold = c->bcast && h->ps_hold;
    c->G = c->bcast && !c->fc ? h->groups : 1;
    c->cpg = c->ci / c->G;
    c->opg = c->co / c->G;
    c->taps = c->hk * c->wk;
    c->lg = c->bcast && !c->fc ? (int64_t)1 << h->lane_split : 1;
    c->L = P / c->lg;
    if (c->bcast) {
        /* output-channel blocks of z = zs*L channels (§12.3; L = P without
         * lane groups, §16) */
        c->zs = h->zs;
        c->z = c->zs * c->L;
        c->nbk = enpu_ceil_div(c->opg, c->z);
        c->wpg = enpu_ceil_div(c->opg, c->L);
        c->zstride = c->zs < c->wpg ? c->zs : c->wpg;
    } else {
        c->zs = c->zstride = c->nbk = c->wpg = 1;
        c->z = P;
    }
    c->nblk = c->G * c->nbk;
    bool window = h->opcode == ENPU_OPC_CONV || h->opcode == ENPU_OPC_CONV_RELU ||
                  h->opcode == ENPU_OPC_DWCONV || h->opcode == ENPU_OPC_AVGPOOL ||
                  h->opcode == ENPU_OPC_MAXPOOL;
    c->bh = window && h->band_h > 0 && h->band_h < c->hk ? h->band_h : c->hk;
    c->nb = enpu_ceil_div(c->hk, c->bh);
    c->tx = h->tile_x, c->ty = h->tile_y, c->txi = h->tile_xi, c->tyi = h->tile_yi;
    c->rows = h->rows * c->lg;
    if (c->fc) {
        c->n_tx = c->n_ty = 1;
    } else if (c->move) {
        c->n_tx = enpu_ceil_div(c->wi, c->tx);
        c->n_ty = enpu_ceil_div(c->hi, c->ty);
    } else {
        c->n_tx = enpu_ceil_div(c->wo, c->tx);
        c->n_ty = enpu_ceil_div(c->ho, c->ty);
    }
    c->wpp_in = enpu_ceil_div(c->ci, P);
    c->istride = h->ifmap_wpp ? h->ifmap_wpp : c->wpp_in;
    c->iword = h->ifmap_word;
    c->ifmap_span = enpu_ifmap_span(a, h);
    c->ifmap_addr = h->ifmap_addr;
    c->weight_addr = h->weight_addr;
    c->pad_value = (int32_t)h->zp_in;
    c->dbuf = c->fc || c->txi * c->tyi <= a->ifmap_pad_depth / 2;
    c->aligned = c->lg == 1 && (!c->bcast || c->G == 1 || c->opg % P == 0);
    if (c->fc) {
        c->n_units = (uint64_t)(c->nblk * c->hi * c->wi * c->wpp_in);
    } else if (c->bcast) {
        int64_t kz_per_tile = 0;
        for (int64_t g = 0; g < c->G; g++)
            kz_per_tile += (((g + 1) * c->cpg - 1) / P) - (g * c->cpg / P) + 1;
        c->n_units = (uint64_t)(c->n_tx * c->n_ty * c->nbk * c->nb) * (uint64_t)kz_per_tile;
    } else {
        c->n_units = (uint64_t)(c->n_tx * c->n_ty * c->wpp_in * c->nb);
    }
    /* lane tables: psum word ozi of block b = g*nbk + k */
    c->n_words = c->bcast ? c->nblk * c->zstride : c->wpp_in;
    c->chan = d->chan;
    for (int64_t wd = 0; wd < c->n_words; wd++)
        for (int64_t i = 0; i < P; i++) {
            int64_t ch = -1;
            if (c->bcast) {
                int64_t b = wd / c->zstride, ozi = wd % c->zstride;
                int64_t g = b / c->nbk, k = b % c->nbk, zk = c->opg - k * c->z;
                if (zk > c->z) zk = c->z;
                /* lane group i / L holds the same channels as group 0 */
                int64_t li = i % c->L;
                if (ozi * c->L + li < zk) ch = g * c->opg + k * c->z + ozi * c->L + li;
            } else if (wd * P + i < c->ci) {
                ch = wd * P + i;
            }
            c->chan[wd * P + i] = (int32_t)ch;
        }
    /* stages */
    c->st = d->st;
    int ns = 0;
    for (int k = 0; k < n; k++) {
        int idx = first + k;
        const enpu_instr *in = &p->instr[idx];
        c->n_par += enpu_instr_param_words(a, in);
        if (in->opcode == ENPU_OPC_RESHAPE) {
            c->remap = true;
            c->rs_instr = idx;
            c->rs_hi = in->hi, c->rs_wi = in->wi, c->rs_ci = in->ci;
            c->rs_ho = in->ho, c->rs_wo = in->wo, c->rs_co = in->co;
            c->rs_perm = in->perm;
            c->rs_ofmap_addr = in->ofmap_addr;
            c->rs_owpp = in->ofmap_wpp ? in->ofmap_wpp : enpu_ceil_div(in->co, P);
            c->rs_oword = in->ofmap_word;
            c->rs_skip_addr = in->skip_addr;
            c->rs_w_skip = in->store_skip != 0;
            if (k > 0) continue; /* reshape at store: no pass */
        }
        sim_stage *s = &c->st[ns];
        memset(s, 0, sizeof *s);
        s->instr = idx;
        s->in = in;
        s->ho = in->ho, s->wo = in->wo, s->co = in->co;
        s->zp_in = (int32_t)in->zp_in;
        s->zp_op2 = (int32_t)in->zp_op2;
        s->in1 = (int32_t)in->in1_mult;
        s->in2 = (int32_t)in->in2_mult;
        s->rqmode = (int)a->requant;
        s->rq = (enpu_rq){(uint32_t)in->out_mult, (int)in->out_shift, (int32_t)in->zp_out,
                          (int32_t)in->clamp_lo, (int32_t)in->clamp_hi};
        s->w_skip = in->store_skip != 0;
        s->skip_addr = in->skip_addr;
        s->ofmap_addr = in->ofmap_addr;
        int32_t *bias = d->bias + (size_t)ns * (size_t)d->max_co;
        uint32_t *M = d->M + (size_t)ns * (size_t)d->max_co;
        int8_t *S = d->S + (size_t)ns * (size_t)d->max_co;
        int rc = 0;
        s->owpp = in->ofmap_wpp ? in->ofmap_wpp : enpu_ceil_div(in->co, P);
        s->oword = in->ofmap_word;
        switch (in->opcode) {
        case ENPU_OPC_CONV:
        case ENPU_OPC_CONV_RELU:
        case ENPU_OPC_FC:
            s->kind = K_CONV;
            rc = load_params(p, m, idx, s, bias, M, S, err);
            break;
        case ENPU_OPC_DWCONV:
        case ENPU_OPC_AVGPOOL:
            s->kind = K_DW;
            rc = load_params(p, m, idx, s, bias, M, S, err);
            break;
        case ENPU_OPC_BN: {
            s->kind = K_BN;
            rc = load_params(p, m, idx, s, bias, M, S, err);
            int8_t *w = d->bnw + (size_t)ns * (size_t)d->max_co;
            memcpy(w, m->wmem + in->weight_addr * m->wb, (size_t)in->ci);
            s->bnw = w;
            break;
        }
        case ENPU_OPC_MAXPOOL: s->kind = K_MAX; break;
        case ENPU_OPC_RELU: s->kind = K_RELU; break;
        case ENPU_OPC_ACT:
            s->kind = K_ACT;
            rc = load_table(p, m, idx, s, &d->tab[ns], err);
            break;
        case ENPU_OPC_ADD:
        case ENPU_OPC_MUL:
            s->kind = in->opcode == ENPU_OPC_ADD ? K_ADD : K_MUL;
            s->op2 = true;
            s->op2_mem = in->op2_mem ? ENPU_MEM_SKIP : ENPU_MEM_MAIN;
            s->op2_addr = in->op2_addr;
            c->has_op2 = true;
            if (a->requant == ENPU_REQUANT_TFLITE) rc = load_tfl_records(p, m, idx, s, err);
            break;
        case ENPU_OPC_RESHAPE:
            s->kind = K_MOVE;
            s->co = in->ci; /* the pass carries the input's channels */
            s->ho = in->hi, s->wo = in->wi;
            s->w_skip = false; /* a reshape's store_skip is remapped (rs_w_skip) */
            break;
        default:
            return enpu_fail(err, ENPU_E_INVALID,
                             "instruction %d (%s): %s cannot be a member of a fused chain", idx,
                             lname(p, idx), enpu_opcode_mnemonic(in->opcode));
        }
        if (rc) return rc;
        if (!s->per_channel && s->kind != K_MOVE && s->kind != K_ACT) {
            char what[160];
            snprintf(what, sizeof what, "instruction %d (%s)", idx, lname(p, idx));
            if ((rc = enpu_rq_check(what, &s->rq, mult_width(a), err))) return rc;
        }
        if (s->op2 && c->bcast && !c->aligned)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "instruction %d (%s): %s fused after a group conv whose %" PRId64
                             " channels per group are not a multiple of %" PRId64
                             " is not modelled (its second operand would need a lane rotator; "
                             "docs/microarch.md §11.7)",
                             idx, lname(p, idx), enpu_opcode_mnemonic(in->opcode), c->opg, P);
        ns++;
    }
    c->n_st = ns;
    c->st[ns - 1].w_main = true;
    if (c->remap) {
        c->st[ns - 1].ofmap_addr = c->rs_ofmap_addr;
        c->st[ns - 1].owpp = c->rs_owpp;
        c->st[ns - 1].oword = c->rs_oword;
    }
    return check_chain_hazards(p, c, err);
}

/* Σ_t ceil(x_t*y_t / rows) over the tiles. */
static uint64_t sum_q(const sim_chain *c) {
    int64_t W = c->move ? c->wi : c->wo, H = c->move ? c->hi : c->ho;
    int64_t xs[2] = {c->tx, W - (c->n_tx - 1) * c->tx}, ys[2] = {c->ty, H - (c->n_ty - 1) * c->ty};
    int64_t nx[2] = {c->n_tx - 1, 1}, ny[2] = {c->n_ty - 1, 1};
    uint64_t s = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            s += (uint64_t)(nx[i] * ny[j]) * (uint64_t)enpu_ceil_div(xs[i] * ys[j], c->rows);
    return s;
}

void sim_chain_compute_model(const sim_chain *c, uint64_t *out) {
    uint64_t q = c->fc ? 1 : sum_q(c);
    uint64_t zsum = 0; /* Σ over blocks of zse_k */
    for (int64_t b = 0; b < c->nblk; b++) {
        int64_t k = b % c->nbk, zk = c->opg - k * c->z;
        if (zk > c->z) zk = c->z;
        zsum += (uint64_t)enpu_ceil_div(zk, c->L);
    }
    for (int k = 0; k < c->n_st; k++) {
        if (c->fc)
            out[k] = zsum * (k == 0 ? (uint64_t)(c->hi * c->wi * c->ci) : 1);
        else if (c->bcast)
            out[k] = zsum * q * (k == 0 ? (uint64_t)(c->cpg * c->taps) : 1);
        else
            out[k] = (uint64_t)c->wpp_in * q * (k == 0 ? (uint64_t)c->taps : 1);
    }
}

int sim_runs_direct(int P, int64_t base, int64_t wpp, int64_t wo, int64_t co, int64_t oy,
                    int64_t ox, int64_t c0, int n, sim_run *out) {
    int64_t pix = base + (oy * wo + ox) * wpp;
    int nr = 0;
    for (int i = 0; i < n;) {
        int64_t ch = c0 + i;
        int dst = (int)(ch % P);
        int len = P - dst;
        if (len > n - i) len = n - i;
        sim_run *r = &out[nr++];
        r->addr = pix + ch / P;
        r->src = i;
        r->dst = dst;
        r->len = len;
        r->zfill = (ch + len == co && co % P != 0);
        i += len;
    }
    return nr;
}

/* Rank of input element (h, w, ch) in the perm order (§11.9). */
int64_t sim_perm_rank(const sim_chain *c, int64_t h, int64_t w, int64_t ch) {
    return enpu_perm_rank(c->rs_perm, c->rs_hi, c->rs_wi, c->rs_ci, h, w, ch);
}

int sim_runs_remap(const sim_chain *c, int P, int64_t base, int64_t wpp, int64_t oy, int64_t ox,
                   int64_t c0, int n, sim_run *out) {
    int64_t co = c->rs_co;
    int nr = 0;
    for (int i = 0; i < n; i++) {
        int64_t k = sim_perm_rank(c, oy, ox, c0 + i);
        int64_t oc = k % co, pix = k / co;
        int64_t addr = base + pix * wpp + oc / P;
        int dst = (int)(oc % P);
        if (nr > 0) {
            sim_run *r = &out[nr - 1];
            if (r->addr == addr && r->dst + r->len == dst && r->src + r->len == i) {
                r->len++;
                r->zfill = (oc == co - 1 && co % P != 0);
                continue;
            }
        }
        out[nr++] = (sim_run){addr, i, dst, 1, oc == co - 1 && co % P != 0};
    }
    return nr;
}
