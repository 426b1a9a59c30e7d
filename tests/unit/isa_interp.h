/* An independent interpreter of the ISA as docs/isa.md defines it, for the
 * compiler tests: executes a program instruction by instruction on byte
 * arrays (weights in their documented layouts, padding with zp_in, the
 * activation-table header, fused chains passing their int8 tile on, concat
 * at store, store_skip; a DMA copies its rows between DRAM and an on-chip
 * memory; a SYNC writes the golden values of its host op's outputs) and,
 * after every instruction that names an output descriptor, compares that
 * tensor with the golden reference's, bit for bit.  Include after
 * testutil.h. */
#ifndef ENPU_ISA_INTERP_H
#define ENPU_ISA_INTERP_H

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "easynpu/program.h"
#include "easynpu/quant.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }


typedef struct mach {
    const enpu_program *p;
    int P;
    uint8_t *main, *skip, *wm, *dram;
} mach;

static int8_t *fm(mach *m, uint8_t *mem, int64_t base, int64_t W, int64_t C, int64_t h, int64_t w, int64_t c) {
    return (int8_t *)mem + (base + (h * W + w) * cdiv(C, m->P) + c / m->P) * m->P + c % m->P;
}
static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static int8_t wbyte(mach *m, int64_t word, int64_t lane) { return (int8_t)m->wm[word * m->P + lane]; }
static int32_t param32(mach *m, int64_t word, int64_t idx) { return (int32_t)rd32(m->wm + word * m->P + 4 * idx); }

/* Computes one instruction into out[ho][wo][co] (int8, dense), its input
 * being `src` (dense [hi][wi][ci]) for chain members, else the DTCM. */
static void exec1(mach *m, const enpu_instr *in, const int8_t *src, int8_t *out) {
    int64_t P = m->P;
    int64_t op = in->opcode;
#define X(h, w, c) (src ? src[((h) * in->wi + (w)) * in->ci + (c)] : *fm(m, m->main, in->ifmap_addr, in->wi, in->ci, h, w, c))
    if (op == ENPU_OPC_RESHAPE) {
        int64_t H = in->hi, W = in->wi, C = in->ci;
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t c = 0; c < C; c++) {
                    int64_t k;
                    switch (in->perm) {
                    case ENPU_PERM_HWC: k = (h * W + w) * C + c; break;
                    case ENPU_PERM_HCW: k = (h * C + c) * W + w; break;
                    case ENPU_PERM_WHC: k = (w * H + h) * C + c; break;
                    case ENPU_PERM_WCH: k = (w * C + c) * H + h; break;
                    case ENPU_PERM_CHW: k = (c * H + h) * W + w; break;
                    default: k = (c * W + w) * H + h;
                    }
                    out[k] = X(h, w, c); /* [ho][wo][co] flat = k */
                }
        return;
    }
    for (int64_t oh = 0; oh < in->ho; oh++)
        for (int64_t ow = 0; ow < in->wo; ow++)
            for (int64_t co = 0; co < in->co; co++) {
                int64_t acc = 0;
                int32_t y;
                uint32_t M = (uint32_t)param32(m, in->quant_addr, 2 * co);
                int S = param32(m, in->quant_addr, 2 * co + 1);
                int32_t bias = param32(m, in->bias_addr, co);
                if (op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU) {
                    int64_t G = in->groups, opg = in->co / G, cpg = in->ci / G, g = co / opg, oo = co % opg;
                    /* lane groups: words of L channels, one copy per group;
                     * the last group's copy (the simulator's functional mode
                     * reads the first) */
                    int64_t L = P >> in->lane_split, lane = (P / L - 1) * L + oo % L;
                    acc = bias;
                    for (int64_t ci = g * cpg; ci < (g + 1) * cpg; ci++)
                        for (int64_t kh = 0; kh < in->hk; kh++)
                            for (int64_t kw = 0; kw < in->wk; kw++) {
                                int64_t ih = oh * in->stride_h - in->pad_top + kh * in->dil_h;
                                int64_t iw = ow * in->stride_w - in->pad_left + kw * in->dil_w;
                                int64_t x = (ih < 0 || ih >= in->hi || iw < 0 || iw >= in->wi) ? in->zp_in : X(ih, iw, ci);
                                int64_t word = in->weight_addr + ((ci * in->hk + kh) * in->wk + kw) * cdiv(opg, L) + oo / L;
                                acc += x * wbyte(m, word, lane);
                            }
                    y = enpu_requant(acc, M, S, (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                } else if (op == ENPU_OPC_FC) {
                    acc = bias;
                    for (int64_t h = 0; h < in->hi; h++)
                        for (int64_t w = 0; w < in->wi; w++)
                            for (int64_t c = 0; c < in->ci; c++) {
                                int64_t row = (h * in->wi + w) * in->ci + c;
                                acc += X(h, w, c) * wbyte(m, in->weight_addr + row * cdiv(in->co, P) + co / P, co % P);
                            }
                    y = enpu_requant(acc, M, S, (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                } else if (op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL || op == ENPU_OPC_MAXPOOL) {
                    bool mx = op == ENPU_OPC_MAXPOOL, any = false;
                    acc = mx ? 0 : bias;
                    for (int64_t kh = 0; kh < in->hk; kh++)
                        for (int64_t kw = 0; kw < in->wk; kw++) {
                            int64_t ih = oh * in->stride_h - in->pad_top + kh * in->dil_h;
                            int64_t iw = ow * in->stride_w - in->pad_left + kw * in->dil_w;
                            bool pad = ih < 0 || ih >= in->hi || iw < 0 || iw >= in->wi;
                            if (mx) {
                                if (pad) continue;
                                int64_t v = X(ih, iw, co) - in->zp_in;
                                if (!any || v > acc) acc = v;
                                any = true;
                            } else {
                                int64_t x = pad ? in->zp_in : X(ih, iw, co);
                                acc += x * wbyte(m, in->weight_addr + (kh * in->wk + kw) * cdiv(in->co, P) + co / P, co % P);
                            }
                        }
                    if (mx)
                        y = enpu_requant(acc, (uint32_t)in->out_mult, (int)in->out_shift, (int32_t)in->zp_out,
                                         (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                    else
                        y = enpu_requant(acc, M, S, (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                } else if (op == ENPU_OPC_BN) {
                    acc = (int64_t)X(oh, ow, co) * wbyte(m, in->weight_addr + co / P, co % P) + bias;
                    y = enpu_requant(acc, M, S, (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                } else if (op == ENPU_OPC_RELU) {
                    y = enpu_requant(X(oh, ow, co) - in->zp_in, (uint32_t)in->out_mult, (int)in->out_shift,
                                     (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                } else if (op == ENPU_OPC_ACT) {
                    int64_t t = in->table_addr;
                    int32_t xb = param32(m, t, 0), sh = param32(m, t, 1), TM = param32(m, t, 2), TS = param32(m, t, 3);
                    int32_t zo = param32(m, t, 4), lo = param32(m, t, 5), hi = param32(m, t, 6), seg = param32(m, t, 7);
                    int64_t hdr = cdiv(ENPU_TABLE_HEADER_BYTES, P);
                    int64_t x = X(oh, ow, co);
                    int64_t i = x - xb < 0 ? 0 : (x - xb) >> sh;
                    if (i > seg - 1) i = seg - 1;
                    acc = (int64_t)param32(m, t + hdr, 2 * i) * x + param32(m, t + hdr, 2 * i + 1);
                    y = enpu_requant(acc, (uint32_t)TM, TS, zo, lo, hi);
                } else if (op == ENPU_OPC_ADD || op == ENPU_OPC_MUL) {
                    uint8_t *om = in->op2_mem ? m->skip : m->main;
                    int64_t x2 = *fm(m, om, in->op2_addr, in->wo, in->co, oh, ow, co) - in->zp_op2;
                    int64_t x1 = X(oh, ow, co) - in->zp_in;
                    acc = op == ENPU_OPC_ADD ? x1 * in->in1_mult + x2 * in->in2_mult : x1 * x2;
                    y = enpu_requant(acc, (uint32_t)in->out_mult, (int)in->out_shift, (int32_t)in->zp_out,
                                     (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                } else {
                    fail_msg("interpreter: opcode %s", enpu_opcode_mnemonic(op));
                    return;
                }
                out[(oh * in->wo + ow) * in->co + co] = (int8_t)y;
            }
#undef X
}

static void store(mach *m, const enpu_instr *in, const int8_t *v) {
    int64_t P = m->P, g = cdiv(in->co, P), wpp = in->ofmap_wpp ? in->ofmap_wpp : g;
    for (int64_t p = 0; p < in->ho * in->wo; p++)
        for (int64_t k = 0; k < g * P; k++) {
            int8_t val = k < in->co ? v[p * in->co + k] : 0;
            m->main[(in->ofmap_addr + p * wpp + in->ofmap_word + k / P) * P + k % P] = (uint8_t)val;
            if (in->store_skip) m->skip[(in->skip_addr + p * g + k / P) * P + k % P] = (uint8_t)val;
        }
}

/* Element e (graph row-major order) of descriptor d, as a pointer into memory. */
static int8_t *desc_elem(mach *m, const enpu_io_desc *d, int64_t e) {
    uint8_t *mem = d->mem == ENPU_MEM_SKIP ? m->skip : d->mem == ENPU_MEM_DRAM ? m->dram : m->main;
    int64_t P = m->P;
    if (d->layout == ENPU_LAYOUT_NHWC) { /* graph tensor [N,C,H,W] */
        int64_t H = d->dims[1], W = d->dims[2], C = d->dims[3];
        int64_t c = e / (H * W), h = (e / W) % H, w = e % W;
        return fm(m, mem, d->addr, W, C, h, w, c);
    }
    int64_t last = d->dims[d->rank - 1];
    return (int8_t *)mem + (d->addr + (e / last) * cdiv(last, P) + (e % last) / P) * P + (e % last) % P;
}

/* Runs the program; after every instruction with an output descriptor,
 * compares it with the golden tensor of that name.  Returns the number of
 * layers checked. */
static int run_check(const enpu_program *p, const enpu_graph *qg, enpu_gexec *ex) {
    mach m = {p, (int)p->arch.pes, NULL, NULL, NULL, NULL};
    /* DRAM: as far as the program's image, transfers and descriptors reach */
    int64_t dwords = (int64_t)p->dram_init_len / p->arch.pes + 1;
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        if (in->opcode != ENPU_OPC_DMA) continue;
        int64_t end = in->dram_addr + (in->dma_rows - 1) * in->dram_stride + in->dma_len;
        if (end > dwords) dwords = end;
    }
    for (int i = 0; i < p->n_io; i++)
        if (p->io[i].mem == ENPU_MEM_DRAM && p->io[i].addr + enpu_io_words(&p->arch, &p->io[i]) > dwords)
            dwords = p->io[i].addr + enpu_io_words(&p->arch, &p->io[i]);
    m.dram = calloc((size_t)(dwords * p->arch.pes), 1);
    if (p->dram_init_len) memcpy(m.dram, p->dram_init, p->dram_init_len);
    m.main = calloc((size_t)p->arch.main_dtcm_bytes, 1);
    m.skip = calloc((size_t)p->arch.skip_dtcm_bytes, 1);
    m.wm = calloc((size_t)p->arch.weight_mem_bytes, 1);
    if (p->weights_len) memcpy(m.wm, p->weights, p->weights_len);
    if (p->skip_init_len) memcpy(m.skip, p->skip_init, p->skip_init_len);
    for (int i = 0; i < p->n_io; i++) {
        const enpu_io_desc *d = &p->io[i];
        if (d->dir != ENPU_IO_INPUT) continue;
        int t = enpu_graph_find_tensor(qg, d->name);
        assert_true(t >= 0);
        const int8_t *v = enpu_gexec_value_i8(ex, t);
        for (int64_t e = 0; e < enpu_tensor_numel(&qg->tensors[t]); e++) *desc_elem(&m, d, e) = v[e];
    }
    int checked = 0;
    int8_t *prev = NULL;
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        bool chained = i > 0 && p->instr[i - 1].fuse_next;
        if (in->opcode == ENPU_OPC_END) break;
        if (in->opcode == ENPU_OPC_SYNC) { /* the host runs the op: golden values */
            const enpu_hostop *h = &p->hostops[in->host_op];
            for (int k = h->n_in; k < h->n_in + h->n_out; k++) {
                const enpu_io_desc *d = &p->io[h->io[k]];
                if (d->mem == ENPU_MEM_HOST) continue;
                int t = enpu_graph_find_tensor(qg, d->name);
                const int8_t *v = enpu_gexec_value_i8(ex, t);
                for (int64_t e = 0; e < enpu_tensor_numel(&qg->tensors[t]); e++) *desc_elem(&m, d, e) = v[e];
            }
            continue;
        }
        const enpu_layer_info *L = &p->layers[i];
        if (in->opcode == ENPU_OPC_DMA) {
            uint8_t *chip = in->dma_mem == ENPU_MEM_SKIP ? m.skip : in->dma_mem == ENPU_MEM_WEIGHT ? m.wm : m.main;
            size_t P = (size_t)m.P, len = (size_t)in->dma_len * P;
            for (int64_t r = 0; r < in->dma_rows; r++) {
                uint8_t *s = chip + (size_t)(in->sram_addr + r * in->sram_stride) * P;
                uint8_t *d = m.dram + (size_t)(in->dram_addr + r * in->dram_stride) * P;
                if (in->dma_dir == ENPU_DMA_LOAD) memcpy(s, d, len);
                else memcpy(d, s, len);
            }
            if (L->io < 0 || !L->tensor[0]) continue;
        } else {
            int8_t *out = calloc((size_t)(in->ho * in->wo * in->co) + 1, 1);
            exec1(&m, in, chained ? prev : NULL, out);
            free(prev);
            prev = out;
            if (!in->fuse_next) store(&m, in, out);
        }
        int t = enpu_graph_find_tensor(qg, L->tensor);
        if (t < 0) fail_msg("instruction %d (%s): tensor '%s' is not in the graph", i, L->name, L->tensor);
        const int8_t *gv = enpu_gexec_value_i8(ex, t);
        int64_t n = enpu_tensor_numel(&qg->tensors[t]);
        if (L->io >= 0) {
            const enpu_io_desc *d = &p->io[L->io];
            for (int64_t e = 0; e < n; e++)
                if (*desc_elem(&m, d, e) != gv[e])
                    fail_msg("instruction %d (%s) '%s': element %" PRId64 " is %d, golden %d", i, L->name,
                             L->tensor, e, *desc_elem(&m, d, e), gv[e]);
            checked++;
        } else if (in->fuse_next && n == in->ho * in->wo * in->co) {
            /* a fused stage's output (not stored): compare the tile values */
            const enpu_tensor *tt = &qg->tensors[t];
            int64_t H = tt->rank == 4 ? tt->dims[2] : 1, W = tt->rank == 4 ? tt->dims[3] : (tt->rank == 3 ? tt->dims[2] : 1);
            int64_t C = tt->rank >= 2 ? tt->dims[1] : n;
            for (int64_t e = 0; e < n; e++) {
                int64_t c = e / (H * W), h = (e / W) % H, w = e % W;
                if (prev[(h * W + w) * C + c] != gv[e])
                    fail_msg("instruction %d (%s) fused output '%s': element %" PRId64 " differs", i, L->name,
                             L->tensor, e);
            }
            checked++;
        }
    }
    free(prev);
    free(m.main), free(m.skip), free(m.wm), free(m.dram);
    return checked;
}

#endif
