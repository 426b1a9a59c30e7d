/* Access counts without simulating (docs/energy.md "Counting without
 * simulating"): the simulator's loops of docs/microarch.md §11-§12 walked
 * at the granularity of a load unit instead of a cycle.  Within a unit
 * every count is a product of the unit's geometry (its input tile, its
 * passes, the psum words and positions of a pass), so a layer costs one
 * step per load unit; only the writes through a reshape remap are counted
 * lane by lane, as the remap decides which lanes share a word.
 *
 * This file mirrors src/sim/easynpu/ (top_ctrl.c decodes the same fields,
 * scheduler.c walks the same units, pe.c counts the same actions);
 * tests/unit/test_sim_ops.c and the end-to-end runs of tests/testutil.c hold the
 * two to equal counts on every program they run. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/energy.h"
#include "easynpu/isa.h"
#include "energy/access_engines.h"
#include "isa/isa_internal.h"

typedef enum { S_CONV, S_DW, S_MAX, S_BN, S_RELU, S_ACT, S_ADD, S_MUL, S_MOVE } skind;

typedef struct stage {
    enpu_layer_stats *row;
    int64_t opcode;
    skind kind;
    bool w_skip;   /* store_skip in its own layout */
    int op2_mem;   /* ENPU_MEM_MAIN_DTCM / SKIP_DTCM for add and mul, else -1 */
} stage;

typedef struct chain {
    int64_t P;
    int64_t L;                   /* lanes per psum word: P, or P / lane groups (microarch §16) */
    const enpu_instr *h;
    enpu_layer_stats *head;
    bool bcast, fc, move;
    bool ps_cont, ps_hold;       /* input-channel blocks (ISA 8) */
    int64_t hi, wi, ci, ho, wo, hk, wk, sh, sw, dh, dw, pt, pl;
    int64_t G, cpg, opg, z, nbk, nblk, zstride, bh, nb, n_tx, n_ty, rows, wpp_in;
    bool aligned;
    int n_st;
    stage *st;
    /* reshape at store */
    bool remap, rs_w_skip;
    int64_t rs_hi, rs_wi, rs_ci, rs_co, rs_perm;
} chain;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t clamp_lanes(int64_t n, int64_t P) { return n < 0 ? 0 : n > P ? P : n; }

static skind kind_of(int64_t op) {
    switch (op) {
    case ENPU_OPC_CONV:
    case ENPU_OPC_CONV_RELU:
    case ENPU_OPC_FC: return S_CONV;
    case ENPU_OPC_DWCONV:
    case ENPU_OPC_AVGPOOL: return S_DW;
    case ENPU_OPC_MAXPOOL: return S_MAX;
    case ENPU_OPC_BN: return S_BN;
    case ENPU_OPC_RELU: return S_RELU;
    case ENPU_OPC_ACT: return S_ACT;
    case ENPU_OPC_ADD: return S_ADD;
    case ENPU_OPC_MUL: return S_MUL;
    default: return S_MOVE;
    }
}

static void decode(const enpu_program *p, int first, int n, enpu_layer_stats *rows, stage *st,
                   chain *c) {
    const enpu_arch *a = &p->arch;
    const enpu_instr *h = &p->instr[first];
    const int64_t P = a->pes;
    memset(c, 0, sizeof *c);
    c->P = P;
    c->h = h;
    c->head = &rows[first];
    enpu_opclass cls = enpu_opcode_class(h->opcode);
    c->bcast = cls == ENPU_CLASS_CONV;
    c->move = cls == ENPU_CLASS_MOVE;
    c->ps_cont = c->bcast && h->ps_cont, c->ps_hold = c->bcast && h->ps_hold;
    c->fc = h->opcode == ENPU_OPC_FC;
    c->hi = h->hi, c->wi = h->wi, c->ci = h->ci, c->ho = h->ho, c->wo = h->wo;
    c->hk = h->hk, c->wk = h->wk, c->sh = h->stride_h, c->sw = h->stride_w;
    c->dh = h->dil_h, c->dw = h->dil_w, c->pt = h->pad_top, c->pl = h->pad_left;
    c->G = c->bcast && !c->fc ? h->groups : 1;
    c->cpg = c->ci / c->G;
    c->opg = h->co / c->G;
    c->L = c->bcast && !c->fc ? P >> h->lane_split : P;
    if (c->bcast) {
        c->z = h->zs * c->L;
        c->nbk = enpu_ceil_div(c->opg, c->z);
        c->zstride = min64(h->zs, enpu_ceil_div(c->opg, c->L));
    } else {
        c->z = P;
        c->nbk = c->zstride = 1;
    }
    c->nblk = c->G * c->nbk;
    skind hk = kind_of(h->opcode);
    bool window = hk == S_CONV ? !c->fc : (hk == S_DW || hk == S_MAX);
    c->bh = window && h->band_h > 0 && h->band_h < c->hk ? h->band_h : c->hk;
    c->nb = enpu_ceil_div(c->hk, c->bh);
    c->rows = h->rows * (P / c->L); /* virtual rows: PE rows x lane groups */
    if (c->fc) {
        c->n_tx = c->n_ty = 1;
    } else {
        c->n_tx = enpu_ceil_div(c->move ? c->wi : c->wo, h->tile_x);
        c->n_ty = enpu_ceil_div(c->move ? c->hi : c->ho, h->tile_y);
    }
    c->wpp_in = enpu_ceil_div(c->ci, P);
    c->aligned = c->L == P && (!c->bcast || c->G == 1 || c->opg % P == 0);
    c->st = st;
    for (int k = 0; k < n; k++) {
        const enpu_instr *in = &p->instr[first + k];
        if (in->opcode == ENPU_OPC_RESHAPE) {
            c->remap = true;
            c->rs_hi = in->hi, c->rs_wi = in->wi, c->rs_ci = in->ci, c->rs_co = in->co;
            c->rs_perm = in->perm;
            c->rs_w_skip = in->store_skip != 0;
            if (k > 0) continue; /* reshape at store: an address remap, no pass */
        }
        stage *s = &st[c->n_st++];
        s->row = &rows[first + k];
        s->opcode = in->opcode;
        s->kind = kind_of(in->opcode);
        s->w_skip = in->store_skip != 0 && s->kind != S_MOVE;
        s->op2_mem = s->kind == S_ADD || s->kind == S_MUL
                         ? (in->op2_mem ? ENPU_MEM_SKIP_DTCM : ENPU_MEM_MAIN_DTCM)
                         : -1;
    }
}

/* Masked writes of lanes [0, n) (channels c0 ..) at (oy, ox) through the
 * remap: one per run of consecutive lanes landing in one word. */
static uint64_t remap_writes(const chain *c, int64_t oy, int64_t ox, int64_t c0, int64_t n) {
    uint64_t runs = 0;
    int64_t prev_pix = -1, prev_oc = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = enpu_perm_rank(c->rs_perm, c->rs_hi, c->rs_wi, c->rs_ci, oy, ox, c0 + i);
        int64_t oc = k % c->rs_co, pix = k / c->rs_co;
        if (!(i > 0 && pix == prev_pix && oc == prev_oc + 1 && oc % c->P != 0)) runs++;
        prev_pix = pix, prev_oc = oc;
    }
    return runs;
}

/* Words written directly for lanes [0, n) of channels c0 .. : one per word
 * the lanes span. */
static uint64_t direct_writes(const chain *c, int64_t c0, int64_t n) {
    return (uint64_t)((c0 + n - 1) / c->P - c0 / c->P + 1);
}

/* One load unit's geometry (§11.4, §12). */
typedef struct unit {
    int64_t blk, g, k, zse, kz, x, y, xi, yi, ix0, iy0, ox0, oy0, nkh, c_lo, c_hi, npos, q;
    bool tile_first, tile_last;
} unit;

/* Writes of stage s in the final pass of unit u into main (q = 0) or skip. */
static uint64_t unit_writes(const chain *c, const unit *u, int s, int q) {
    const bool last = s == c->n_st - 1;
    const int64_t P = c->P;
    uint64_t w = 0;
    if (q == 0 ? !last : !(c->st[s].w_skip || (last && c->rs_w_skip))) return 0;
    for (int64_t ozi = 0; ozi < u->zse; ozi++) {
        int64_t n, c0;
        if (c->bcast) {
            int64_t zk = min64(c->z, c->opg - u->k * c->z);
            n = clamp_lanes(zk - ozi * c->L, c->L);
            c0 = u->g * c->opg + u->k * c->z + ozi * c->L;
        } else {
            n = clamp_lanes(c->ci - u->kz * P, P);
            c0 = u->kz * P;
        }
        if (n == 0) continue;
        uint64_t own = c->aligned ? 1 : direct_writes(c, c0, n);
        for (int64_t p = 0; p < u->npos; p++) {
            int64_t oy = u->oy0 + p / u->x, ox = u->ox0 + p % u->x;
            if (q == 0) {
                w += c->remap ? remap_writes(c, oy, ox, c0, n) : own;
            } else {
                if (c->st[s].w_skip) w += own;
                if (last && c->rs_w_skip) w += remap_writes(c, oy, ox, c0, n);
            }
        }
    }
    return w;
}

/* Words of [lo, lo + n) inside [0, lim). */
static int64_t inside(int64_t lo, int64_t n, int64_t lim) {
    int64_t a = lo < 0 ? 0 : lo, b = lo + n > lim ? lim : lo + n;
    return b > a ? b - a : 0;
}

static void count_unit(const chain *c, const unit *u) {
    const int64_t P = c->P;
    const skind k0 = c->st[0].kind;
    enpu_layer_stats *hd = c->head, *s0 = c->st[0].row;
    /* loader (§11.5): one issue slot per input-tile word; padding words
     * take a slot but no DTCM read */
    hd->writes[ENPU_MEM_IFMAP_PAD] += (uint64_t)(P * u->xi * u->yi);
    hd->reads[ENPU_MEM_MAIN_DTCM] +=
        (uint64_t)(c->fc ? 1 : inside(u->iy0, u->yi, c->hi) * inside(u->ix0, u->xi, c->wi));
    /* pad-reading passes (§11.4): each pass is zse*q cycles; a cycle of a
     * row at a position is one psum word of P lanes */
    const int64_t n_conv = c->bcast ? (u->c_hi - u->c_lo) * u->nkh * c->wk : u->nkh * c->wk;
    const uint64_t L = (uint64_t)(u->zse * u->npos * c->L), passes = (uint64_t)n_conv;
    if (k0 == S_CONV) s0->reads[ENPU_MEM_IFMAP_PAD] += passes * (uint64_t)(u->zse * u->npos);
    else s0->reads[ENPU_MEM_IFMAP_PAD] += passes * L;
    if (k0 == S_CONV || k0 == S_DW || k0 == S_MAX) {
        s0->uops[k0 == S_MAX ? ENPU_UOP_ALU : ENPU_UOP_MAC] += passes * L;
        s0->writes[ENPU_MEM_PSUM] += passes * L;
        s0->reads[ENPU_MEM_PSUM] += passes * L - (u->tile_first && passes ? L : 0);
        if (u->tile_last) s0->uops[ENPU_UOP_REQUANT] += L;
    } else {
        enpu_stage_uops(c->st[0].opcode, passes * L, s0->uops);
    }
    if (k0 == S_CONV || k0 == S_DW) {
        /* weight stream (§11.6): a pass takes zse words (dwconv: one) */
        uint64_t words = passes * (uint64_t)(k0 == S_CONV ? u->zse : 1);
        s0->reads[ENPU_MEM_WEIGHT_PAD] += passes * (uint64_t)(P * u->zse * u->q);
        hd->reads[ENPU_MEM_WEIGHT_MEM] += words;
        hd->writes[ENPU_MEM_WEIGHT_PAD] += words * (uint64_t)P;
    }
    /* op2 words (§11.7): the head's in every unit, a fused stage's in the
     * unit that completes its tile */
    if (c->st[0].op2_mem >= 0) s0->reads[c->st[0].op2_mem] += (uint64_t)(u->zse * u->npos);
    if (!u->tile_last) return;
    for (int s = 0; s < c->n_st; s++) {
        enpu_layer_stats *r = c->st[s].row;
        if (s > 0) {
            r->reads[ENPU_MEM_PSUM] += L;
            r->writes[ENPU_MEM_PSUM] += L;
            enpu_stage_uops(c->st[s].opcode, L, r->uops);
            if (c->st[s].op2_mem >= 0) r->reads[c->st[s].op2_mem] += (uint64_t)(u->zse * u->npos);
        }
        r->writes[ENPU_MEM_MAIN_DTCM] += unit_writes(c, u, s, 0);
        r->writes[ENPU_MEM_SKIP_DTCM] += unit_writes(c, u, s, 1);
    }
}

/* Walks the units in the order of §11.4 and §12 (block, tile row, tile
 * column, input word, band); the order does not change a count. */
static void count_chain(const chain *c) {
    const int64_t P = c->P;
    for (int64_t blk = 0; blk < c->nblk; blk++) {
        unit u = {0};
        u.blk = blk;
        u.g = blk / c->nbk;
        u.k = blk % c->nbk;
        u.zse = c->bcast ? enpu_ceil_div(min64(c->z, c->opg - u.k * c->z), c->L) : 1;
        int64_t kz_lo, kz_hi;
        if (c->fc) kz_lo = 0, kz_hi = c->hi * c->wi * c->wpp_in - 1;
        else if (c->bcast) kz_lo = u.g * c->cpg / P, kz_hi = ((u.g + 1) * c->cpg - 1) / P;
        else kz_lo = 0, kz_hi = c->wpp_in - 1;
        for (int64_t ty = 0; ty < c->n_ty; ty++)
            for (int64_t tx = 0; tx < c->n_tx; tx++)
                for (u.kz = kz_lo; u.kz <= kz_hi; u.kz++)
                    for (int64_t band = 0; band < c->nb; band++) {
                        int64_t kh0 = band * c->bh;
                        u.nkh = min64(c->bh, c->hk - kh0);
                        if (c->fc) {
                            u.x = u.y = u.xi = u.yi = 1;
                            u.ox0 = u.oy0 = u.ix0 = u.iy0 = 0;
                            u.c_lo = (u.kz % c->wpp_in) * P;
                            u.c_hi = min64(u.c_lo + P, c->ci);
                        } else {
                            int64_t W = c->move ? c->wi : c->wo, H = c->move ? c->hi : c->ho;
                            u.ox0 = tx * c->h->tile_x;
                            u.oy0 = ty * c->h->tile_y;
                            u.x = min64(c->h->tile_x, W - u.ox0);
                            u.y = min64(c->h->tile_y, H - u.oy0);
                            if (c->move) {
                                u.xi = u.x, u.yi = u.y, u.ix0 = u.ox0, u.iy0 = u.oy0;
                            } else {
                                u.xi = (u.x - 1) * c->sw + (c->wk - 1) * c->dw + 1;
                                u.yi = (u.y - 1) * c->sh + (u.nkh - 1) * c->dh + 1;
                                u.ix0 = u.ox0 * c->sw - c->pl;
                                u.iy0 = u.oy0 * c->sh - c->pt + kh0 * c->dh;
                            }
                            if (c->bcast) {
                                u.c_lo = u.kz * P > u.g * c->cpg ? u.kz * P : u.g * c->cpg;
                                u.c_hi = min64((u.kz + 1) * P, (u.g + 1) * c->cpg);
                            } else {
                                u.c_lo = u.kz * P;
                                u.c_hi = min64(u.c_lo + P, c->ci);
                            }
                        }
                        u.npos = u.x * u.y;
                        u.q = enpu_ceil_div(u.npos, c->rows);
                        u.tile_first = (!c->bcast || u.kz == kz_lo) && band == 0 && !c->ps_cont;
                        u.tile_last = (!c->bcast || u.kz == kz_hi) && band == c->nb - 1 && !c->ps_hold;
                        count_unit(c, &u);
                    }
    }
}

int enpu_access_counts(const enpu_program *p, enpu_layer_stats *rows, enpu_err *err) {
    const enpu_arch *a = &p->arch;
    /* the other engines' counts are their cost models' (access_engines.h) */
    if (a->engine == ENPU_ENGINE_SYSTOLIC) return enpu_energy_sya_counts(p, rows, err);
    if (a->engine == ENPU_ENGINE_ROWSTAT) return enpu_rs_access_counts(p, rows, err);
    const uint64_t itcm_words = (uint64_t)enpu_ceil_div(ENPU_INSTR_BITS, a->bus_bits);
    /* a program longer than the ITCM is streamed into it from DRAM (§13.5) */
    const bool streamed = (int64_t)p->n_instr > a->itcm_bytes / ENPU_INSTR_BYTES;
    stage *st = malloc((size_t)(p->n_instr > 0 ? p->n_instr : 1) * sizeof *st);
    if (!st) return enpu_fail(err, ENPU_E_NOMEM, "out of memory counting accesses");
    for (int i = 0; i < p->n_instr; i++) {
        rows[i].reads[ENPU_MEM_ITCM] += itcm_words;
        if (streamed) rows[i].writes[ENPU_MEM_ITCM] += itcm_words;
    }
    for (int i = 0; i < p->n_instr;) {
        const enpu_instr *in = &p->instr[i];
        enpu_opclass cls = enpu_opcode_class(in->opcode);
        if (cls == ENPU_CLASS_DMA) {
            static const int mem[] = {ENPU_MEM_MAIN_DTCM, ENPU_MEM_SKIP_DTCM, ENPU_MEM_WEIGHT_MEM};
            uint64_t words = (uint64_t)(in->dma_rows * in->dma_len);
            if (in->dma_mem >= 0 && in->dma_mem <= 2) {
                if (in->dma_dir == ENPU_DMA_LOAD) rows[i].writes[mem[in->dma_mem]] += words;
                else rows[i].reads[mem[in->dma_mem]] += words;
            }
            i++;
            continue;
        }
        if (cls != ENPU_CLASS_CONV && cls != ENPU_CLASS_CW && cls != ENPU_CLASS_MOVE) {
            i++;
            continue;
        }
        int n = enpu_program_chain_len(p, i);
        chain c;
        decode(p, i, n, rows, st, &c);
        for (int k = 0; k < n; k++)
            c.head->reads[ENPU_MEM_WEIGHT_MEM] += (uint64_t)enpu_instr_param_words(a, &p->instr[i + k]);
        count_chain(&c);
        i += n;
    }
    free(st);
    return 0;
}

void enpu_energy_total_of(const enpu_layer_stats *rows, int n, uint64_t units, enpu_layer_stats *total) {
    memset(total, 0, sizeof *total);
    snprintf(total->name, sizeof total->name, "total");
    for (int i = 0; i < n; i++) {
        const enpu_layer_stats *r = &rows[i];
        total->cycles += r->cycles;
        total->macs += r->macs;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) total->activity[k] += r->activity[k];
        for (int m = 0; m < ENPU_MEM_COUNT; m++) {
            total->reads[m] += r->reads[m];
            total->writes[m] += r->writes[m];
        }
        for (int o = 0; o < ENPU_UOP_COUNT; o++) total->uops[o] += r->uops[o];
    }
    total->ideal_cycles = (total->macs + units - 1) / units;
}

int enpu_estimate_program(const enpu_program *p, enpu_layer_stats **rows_out,
                          enpu_layer_stats *total, enpu_err *err) {
    return enpu_estimate_program_cached(p, NULL, rows_out, total, err);
}

int enpu_estimate_program_cached(const enpu_program *p, enpu_compile_cache *cache,
                                 enpu_layer_stats **rows_out, enpu_layer_stats *total, enpu_err *err) {
    if (p->arch.engine == ENPU_ENGINE_ROWSTAT) return enpu_rs_estimate_program(p, rows_out, total, err);
    if (p->arch.engine == ENPU_ENGINE_SYSTOLIC) return enpu_energy_sya_estimate(p, rows_out, total, err);
    const int n = p->n_instr;
    const uint64_t units = (uint64_t)(p->arch.pes * p->arch.pe_rows);
    *rows_out = NULL;
    enpu_layer_stats *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    int64_t *act = calloc((size_t)(n > 0 ? n : 1) * ENPU_ACT_COUNT, sizeof *act);
    int64_t *drd = calloc((size_t)(n > 0 ? n : 1), sizeof *drd);
    int64_t *dwr = calloc((size_t)(n > 0 ? n : 1), sizeof *dwr);
    int rc = 0;
    if (!rows || !act || !drd || !dwr) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory estimating the program");
        goto done;
    }
    enpu_model_program_cached(p, cache, act, drd, dwr);
    for (int i = 0, head = 0; i < n; i++) {
        enpu_layer_stats *r = &rows[i];
        const enpu_layer_info *li = &p->layers[i];
        const char *mn = enpu_opcode_mnemonic(p->instr[i].opcode);
        snprintf(r->name, sizeof r->name, "%s", li->name && li->name[0] ? li->name : mn ? mn : "?");
        snprintf(r->op, sizeof r->op, "%s", mn ? mn : "?");
        r->instr = i;
        if (i == 0 || !p->instr[i - 1].fuse_next || enpu_opcode_class(p->instr[i].opcode) == ENPU_CLASS_CTRL)
            head = i;
        r->chain_head = head;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            r->activity[k] = (uint64_t)act[(size_t)i * ENPU_ACT_COUNT + k];
            r->cycles += r->activity[k];
        }
        r->host = p->instr[i].opcode == ENPU_OPC_SYNC;
        r->macs = r->host ? 0 : (uint64_t)li->macs;
        r->ideal_cycles = (r->macs + units - 1) / units;
        r->reads[ENPU_MEM_OFFCHIP] = (uint64_t)drd[i];
        r->writes[ENPU_MEM_OFFCHIP] = (uint64_t)dwr[i];
    }
    if ((rc = enpu_access_counts(p, rows, err))) goto done;
    enpu_energy_total_of(rows, n, units, total);
    *rows_out = rows;
    rows = NULL;
done:
    free(rows);
    free(act);
    free(drd);
    free(dwr);
    return rc;
}
