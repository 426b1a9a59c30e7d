/* Items of the off-chip plan (decision 5 in offchip.c): per step the weight
 * load, then per strip (and output-channel or input-channel block) the loads
 * of its input and second-operand rows, the chain cut to the strip at the
 * addresses the memory plan chose (offchip_mem.c), and the store of its
 * output rows; a host op with the transfers around it.  Separate because it
 * decides nothing: it writes down what the earlier phases decided, and
 * sched.c orders the items and adds the tokens. */

/* ---- items --------------------------------------------------------------------------- */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/offchip.h"

typedef struct strip {
    int64_t r0, r1, a, b, pt, pb;
} strip;

/* The chain instructions of step st for output rows [r0, r1) (or the whole
 * map) and output channels [o0, o1); buffers k. */
static int strip_chain(plan *pl, const ost *st, const strip *sp, int64_t o0, int64_t o1, int k,
                       enpu_instr *ins) {
    cc *c = pl->c;
    int P = c->P;
    for (int j = 0; j < st->n; j++) ins[j] = c->L[st->lay[j]].ins;
    enpu_instr *h = &ins[0];
    int64_t nrow = sp->r1 - sp->r0;
    /* rows */
    /* a whole map is cut too when its input is in a buffer that holds only
     * the rows the layer reads (buffer_words: a stride that skips the last
     * rows), so that the instruction reads no row past the buffer */
    bool buffered = st->in_s >= 0 && !pl->res[target(c, st->in_s)];
    if (st->strip_ok && (sp->r0 > 0 || sp->r1 < st->ho || (buffered && sp->b < h->hi)))
        cc_cut_rows(ins, st->n, sp->r0, sp->r1);
    (void)nrow;
    /* input */
    if (st->in_s >= 0) {
        int s = target(c, st->in_s);
        if (pl->res[s]) h->ifmap_addr = c->S[st->in_s].main_addr + (st->strip_ok ? sp->a * cc_in_row_words(c, h) : 0);
        else h->ifmap_addr = st->inb[k];
    }
    /* output channels */
    bool cob = o0 > 0 || o1 < c->L[st->head].ins.co;
    if (cob) {
        h->co = o1 - o0;
        for (int j = 1; j < st->n; j++) ins[j].ci = ins[j].co = o1 - o0;
    }
    /* output */
    enpu_instr *l = &ins[st->n - 1];
    if (st->out_s >= 0) {
        const cc_store *os = &c->S[st->out_s];
        int s = target(c, st->out_s);
        int64_t owpp = os->ofmap_wpp ? os->ofmap_wpp : cdiv(os->c, P);
        int64_t oword = os->ofmap_word;
        if (pl->res[s]) {
            int64_t base = c->S[s].main_addr + (os->into >= 0 ? os->into_off : 0);
            l->ofmap_addr = base + (st->strip_ok ? sp->r0 * os->w * owpp : 0);
            if (os->into >= 0 && os->ofmap_wpp) l->ofmap_wpp = owpp, l->ofmap_word = oword;
        } else {
            l->ofmap_addr = st->outb[k];
            owpp = cdiv(os->c, P), oword = 0;
        }
        if (cob) {
            l->ofmap_wpp = owpp;
            l->ofmap_word = oword + o0 / P;
        }
    }
    /* second operand and skip copy */
    for (int j = 0; j < st->n; j++) {
        const cc_layer *ml = &c->L[st->lay[j]];
        if (ml->op2_store >= 0) {
            const cc_store *o2 = &c->S[ml->op2_store];
            ins[j].op2_mem = 1;
            if (pl->sres[ml->op2_store])
                ins[j].op2_addr = o2->skip_addr + (st->strip_ok ? sp->r0 * o2->w * cdiv(o2->c, P) : 0);
            else ins[j].op2_addr = st->opb[k];
        }
        ins[j].store_skip = 0, ins[j].skip_addr = 0;
    }
    if (st->skip_s >= 0 && pl->sres[st->skip_s]) {
        const cc_store *ss = &c->S[st->skip_s];
        l->store_skip = 1;
        l->skip_addr = ss->skip_addr + (st->strip_ok ? sp->r0 * ss->w * cdiv(ss->c, P) : 0);
    }
    int rc = cc_tile_search(c->cache, c->a, ins, st->n, c->o.naive_tiling, c->o.search,
                            c->L[st->head].name, NULL, c->err);
    return rc;
}

/* The DRAM rows [r0, r1) of storage s (whole: all its words). */
static void dram_rows(const cc *c, int s, bool whole, int64_t r0, int64_t r1, int64_t *addr, int64_t *len) {
    const cc_store *st = &c->S[s];
    int64_t rw = st->w * cdiv(st->c, c->P);
    int t = target(c, s);
    int64_t base = c->S[t].dram_addr + (st->into >= 0 && !st->ofmap_wpp ? st->into_off : 0);
    if (whole) *addr = base, *len = st->words;
    else *addr = base + r0 * rw, *len = (r1 - r0) * rw;
}

/* The items of host step st: the host op, reading and writing its tensors
 * where they are (DRAM or main DTCM), then what puts its results where later
 * readers look for them. */
int cc_off_host_items(plan *pl, const ost *st) {
    cc *c = pl->c;
    cc_item *it = cc_item_new(c, CC_IT_HOST, st->head);
    if (!it) return c->err->code;
    it->n = 1;
    it->ins[0] = c->L[st->head].ins;
    const enpu_node *n = &c->g->nodes[c->L[st->head].node];
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? n->n_out : n->n_in;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? n->out[k] : n->in[k];
            if (t < 0 || cc_item_host_tensor(c, it, t, pass)) continue;
            int s = target(c, c->tv[t].store);
            const cc_store *ss = &c->S[c->tv[t].store];
            bool dram = cc_host_in_dram(c, t);
            int mem = dram ? ENPU_MEM_DRAM : ENPU_MEM_MAIN;
            int64_t addr = dram ? c->S[s].dram_addr : ss->main_addr;
            if (pass) cc_item_write(it, mem, addr, 1, ss->words, ss->words);
            else cc_item_read(it, mem, addr, 1, ss->words, ss->words);
        }
    }
    /* what the host wrote where the NPU or the host will not find it: a
     * DTCM copy also kept in DRAM is stored; a DRAM copy NPU layers read
     * from the DTCM is loaded */
    for (int k = 0; k < n->n_out; k++) {
        int t = n->out[k];
        if (t < 0 || c->tv[t].store < 0) continue;
        int s = c->tv[t].store;
        if (!pl->res[s] || c->S[s].dram_addr < 0) continue;
        bool host_dram = cc_host_in_dram(c, t);
        cc_item *d = cc_item_dma(c, st->head, host_dram ? CC_DMA_INPUT : CC_DMA_OUTPUT,
                                 host_dram ? ENPU_DMA_LOAD : ENPU_DMA_STORE, ENPU_MEM_MAIN, c->S[s].main_addr,
                                 c->S[s].dram_addr, 1, c->S[s].words, 0, 0);
        if (!d) return c->err->code;
    }
    return 0;
}

/* The items of NPU step k, in one report group: per strip and block the
 * weight load (streamed weights), the loads of its input and second-operand
 * rows, the chain, the store of its output rows.  Nofit when a strip or a
 * kernel-row block would read only padding. */
int cc_off_chain_items(plan *pl, int k) {
    cc *c = pl->c;
    const ost *st = &pl->st[k];
    const cc_layer *hl = &c->L[st->head];
    int group = c->nit;
    int P = c->P;
    /* strips */
    int ns = st->nstrip;
    strip *sp = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *sp);
    if (!sp) return OOM();
    int nsp = 0;
    for (int j = 0; j < ns; j++) {
        strip s;
        s.r0 = (int64_t)j * st->rows, s.r1 = min64(st->ho, s.r0 + st->rows);
        if (st->strip_ok) cc_in_rows(&hl->ins, s.r0, s.r1, &s.a, &s.b, &s.pt, &s.pb);
        else s.a = 0, s.b = hl->ins.hi, s.pt = hl->ins.pad_top, s.pb = hl->ins.pad_bottom;
        if (s.b <= s.a) {
            /* choose_rows found no height whose strips all read a row */
            free(sp);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': no strip height fits the main DTCM in which every strip reads "
                             "an input row (output rows %" PRId64 "..%" PRId64 " read only padding)",
                             hl->name, s.r0, s.r1 - 1);
        }
        sp[nsp++] = s;
    }
    /* output-channel blocks: each with its parameter slice in the DRAM image */
    int ncob = st->ncob;
    int64_t co = hl->ins.co;
    int rc = 0;
    bool res_out = st->out_s >= 0 && pl->res[target(c, st->out_s)];
    int nouter = res_out ? ncob : nsp, ninner = res_out ? nsp : ncob;
    int64_t wbase = 0;
    int kk = 0;
    int nicb = st->nicb, held = -1;
    bool blocks = ncob * nicb > 1;
    for (int oi = 0; oi < nouter && !rc; oi++) {
        for (int ii = 0; ii < ninner && !rc; ii++) {
          for (int ib = 0; ib < nicb && !rc; ib++) {
            int bI = res_out ? oi : ii, sI = res_out ? ii : oi;
            int pb = bI * nicb + ib; /* its parameter slice */
            int64_t o0 = (int64_t)bI * st->cob, o1 = ncob > 1 ? min64(co, o0 + st->cob) : co;
            if (ncob == 1) o0 = 0;
            const strip *s = &sp[sI];
            int kb = st->nbuf > 1 ? sI % 2 : 0;
            enpu_instr ins[16];
            if ((rc = strip_chain(pl, st, s, o0, o1, kb, ins))) break;
            int nch = st->n;
            if (nicb > 1) {
                /* the layer on its part of the input; every block but the
                 * last holds its sums, every block but the first continues
                 * them.  A conv block whose kernel rows fall only on padding
                 * would still add the padding's products (the bias counts
                 * them: the pads are zp_in), but an instruction reads at
                 * least one row: choose_rows avoids such strips */
                if (!cc_icb_reads(st, P, ib, &ins[0])) {
                    rc = enpu_fail(c->err, ENPU_E_NOFIT,
                                   "layer '%s': no strip height that fits the main DTCM and whose output is one psum tile lets every "
                                   "block of %" PRId64 " kernel row(s) read an input row (output rows %" PRId64
                                   "..%" PRId64 ", block %d: only padding)",
                                   hl->name, st->icper, s->r0, s->r1 - 1, ib);
                    break;
                }
                int64_t r0, r1, woff;
                cc_icb_cut(st, P, ib, &ins[0], &r0, &r1, &woff);
                ins[0].ifmap_addr += woff;
                ins[0].ps_cont = ib > 0;
                ins[0].ps_hold = ib < nicb - 1;
                if (ins[0].ps_hold) {
                    nch = 1;
                    ins[0].fuse_next = ins[0].fuse_bn = ins[0].fuse_act = ins[0].fuse_order = 0;
                    ins[0].store_skip = ins[0].skip_addr = 0;
                    ins[0].ofmap_wpp = ins[0].ofmap_word = 0;
                }
                /* a conv block's output is one tile (the psum file's) */
                if (st->icu >= 3 &&
                    (rc = cc_tile_search(c->cache, c->a, ins, nch, c->o.naive_tiling, c->o.search,
                                         hl->name, NULL, c->err)))
                    break;
            }
            if (blocks)
                for (int j = 0; j < nch; j++) {
                    const int64_t *ba = st->baddr[(size_t)pb * 16 + j];
                    ins[j].weight_addr = ba[0], ins[j].bias_addr = ba[1];
                    ins[j].quant_addr = ba[2], ins[j].table_addr = ba[3];
                }
            /* weights: the step's block (once), or this output-channel block's, in
             * the half of the weight memory the previous load did not use (the
             * whole memory for a block over half) */
            int64_t words = blocks ? st->bwords[pb] : st->whi - st->wlo;
            /* (a chain without parameters, a pool, loads nothing) */
            if (pl->wstream && words > 0 &&
                (blocks ? (nicb > 1 || (res_out ? ii == 0 : true)) : (oi == 0 && ii == 0))) {
                int64_t lo = blocks ? st->blo[pb] : st->wlo;
                int64_t half = enpu_arch_words(c->a, c->a->weight_mem_bytes) / 2;
                if (words <= half) {
                    wbase = pl->wflip ? half : 0;
                    pl->wflip ^= 1;
                } else {
                    wbase = 0;
                    pl->wflip = 1;
                }
                cc_item *w = cc_item_dma(c, st->head, CC_DMA_WEIGHTS, ENPU_DMA_LOAD, ENPU_MEM_WEIGHT, wbase,
                                         pl->wdram + lo, 1, words, 0, 0);
                if (!w) {
                    rc = c->err->code;
                    break;
                }
                w->group = group;
            }
            if (pl->wstream) {
                /* parameters at the buffer: the block's addresses are relative to
                 * its first word (the whole image's: to the step's) */
                int64_t shift = wbase - (blocks ? 0 : st->wlo);
                for (int j = 0; j < nch; j++) {
                    enpu_instr *in = &ins[j];
                    enpu_mem_block b[ENPU_MAX_BLOCKS];
                    int nb = enpu_instr_blocks(c->a, in, j > 0, b);
                    for (int q = 0; q < nb; q++) {
                        if (b[q].mem != ENPU_MEM_WEIGHT) continue;
                        if (!strcmp(b[q].role, "weights")) in->weight_addr += shift;
                        else if (!strcmp(b[q].role, "bias")) in->bias_addr += shift;
                        else if (!strcmp(b[q].role, "quant")) in->quant_addr += shift;
                        else if (!strcmp(b[q].role, "table")) in->table_addr += shift;
                    }
                }
            }
            /* input rows and second-operand rows from DRAM (once for the
             * input-channel blocks, which read parts of one buffer) */
            if (ib == 0 && st->in_s >= 0 && !pl->res[target(c, st->in_s)]) {
                int64_t addr, len;
                if (st->strip_ok) {
                    int64_t rw = cc_in_row_words(c, &c->L[st->head].ins);
                    dram_rows(c, st->in_s, false, 0, 0, &addr, &len);
                    addr += s->a * rw, len = (s->b - s->a) * rw;
                } else {
                    dram_rows(c, st->in_s, true, 0, 0, &addr, &len);
                }
                cc_item *l = cc_item_dma(c, st->head, CC_DMA_IFMAP, ENPU_DMA_LOAD, ENPU_MEM_MAIN, st->inb[kb], addr,
                                         1, len, 0, 0);
                if (!l) {
                    rc = c->err->code;
                    break;
                }
                l->group = group;
            }
            if (ib == 0 && st->op2_s >= 0 && !pl->sres[st->op2_s]) {
                int64_t addr, len;
                dram_rows(c, st->op2_s, !st->strip_ok, s->r0, s->r1, &addr, &len);
                cc_item *l = cc_item_dma(c, st->head, CC_DMA_OP2, ENPU_DMA_LOAD, ENPU_MEM_SKIP, st->opb[kb], addr, 1,
                                         len, 0, 0);
                if (!l) {
                    rc = c->err->code;
                    break;
                }
                l->group = group;
            }
            cc_item *it = cc_item_chain(c, st->head, ins, nch);
            if (!it) {
                rc = c->err->code;
                break;
            }
            for (int j = 0; j < nch; j++) it->lay[j] = st->lay[j];
            it->group = group;
            if (ins[0].ps_cont) it->cont_of = held;
            it->holds = ins[0].ps_hold != 0;
            held = it->holds ? (int)(it - c->it) : -1;
            kk++;
            /* the output rows to DRAM: from the buffer, or from the resident map
             * when the tensor is also kept in DRAM (after every block) */
            if (st->out_s < 0 || ib < nicb - 1) continue;
            int so = target(c, st->out_s);
            const cc_store *os = &c->S[st->out_s];
            bool last_block = res_out ? oi == ncob - 1 : ii == ninner - 1;
            bool to_dram = c->S[so].dram_addr >= 0;
            if (!to_dram || !last_block) continue;
            int64_t rw = os->w * cdiv(os->c, P);
            int64_t nrow = st->strip_ok ? s->r1 - s->r0 : os->h;
            int64_t r0 = st->strip_ok ? s->r0 : 0;
            int64_t owpp = os->ofmap_wpp ? os->ofmap_wpp : cdiv(os->c, P), wpart = cdiv(os->c, P);
            int64_t dbase = c->S[so].dram_addr;
            int64_t sram = pl->res[so] ? it->ins[st->n - 1].ofmap_addr : st->outb[kb];
            cc_item *d;
            if (os->into >= 0 && os->ofmap_wpp) {
                /* a channel-concat part: its words of every pixel */
                int64_t pix = nrow * os->w;
                if (pl->res[so]) sram = it->ins[st->n - 1].ofmap_addr + os->ofmap_word;
                d = cc_item_dma(c, st->head, CC_DMA_OFMAP, ENPU_DMA_STORE, ENPU_MEM_MAIN, sram,
                                dbase + r0 * os->w * owpp + os->ofmap_word, pix, wpart,
                                pl->res[so] ? owpp : wpart, owpp);
            } else {
                int64_t off = os->into >= 0 ? os->into_off : 0;
                d = cc_item_dma(c, st->head, CC_DMA_OFMAP, ENPU_DMA_STORE, ENPU_MEM_MAIN, sram,
                                dbase + off + r0 * rw, 1, nrow * rw, 0, 0);
            }
            if (!d) {
                rc = c->err->code;
                break;
            }
            d->group = group;
          }
        }
    }
    free(sp);
    return rc;
}
