/* Items: the chains, host ops and DMA transfers of the program before they
 * are ordered (cc.h).  This file has the builders and the items of a plan
 * that fits on chip: every chain reads and writes whole maps at the
 * addresses memplan.c chose; with a DRAM, the graph inputs are loaded from
 * it before their first reader and the graph outputs stored to it after
 * their producer (docs/compiler.md "Off-chip memory"). */
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

cc_item *cc_item_new(cc *c, int kind, int layer) {
    if (c->nit == c->capit) {
        int cap = c->capit ? 2 * c->capit : 64;
        cc_item *n = realloc(c->it, (size_t)cap * sizeof *n);
        if (!n) {
            enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
            return NULL;
        }
        c->it = n, c->capit = cap;
    }
    cc_item *it = &c->it[c->nit];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->layer = layer;
    it->tensor = -1;
    it->tmem = -1;
    it->cont_of = -1;
    it->group = c->nit;
    for (int k = 0; k < 16; k++) it->lay[k] = layer;
    c->nit++;
    return it;
}

static void region(cc_region *r, int *n, int mem, int64_t addr, int64_t rows, int64_t len,
                   int64_t stride) {
    if (rows < 1 || len < 1) return;
    ENPU_ASSERT(*n < CC_IT_REGIONS);
    r[(*n)++] = (cc_region){mem, addr, rows, len, stride};
}

void cc_item_read(cc_item *it, int mem, int64_t addr, int64_t rows, int64_t len, int64_t stride) {
    region(it->rd, &it->nrd, mem, addr, rows, len, stride);
}

void cc_item_write(cc_item *it, int mem, int64_t addr, int64_t rows, int64_t len, int64_t stride) {
    region(it->wr, &it->nwr, mem, addr, rows, len, stride);
}

bool cc_item_host_tensor(const cc *c, cc_item *it, int t, bool write) {
    if (c->tv[t].store >= 0) return false;
    /* in host memory, one pseudo-word per tensor, so that its reader stays
     * after its writer (the list schedule would otherwise run a host op
     * before the host op that produces its input) */
    if (write) cc_item_write(it, ENPU_MEM_HOST, t, 1, 1, 1);
    else cc_item_read(it, ENPU_MEM_HOST, t, 1, 1, 1);
    return true;
}

cc_item *cc_item_chain(cc *c, int layer, const enpu_instr *ins, int n) {
    cc_item *it = cc_item_new(c, CC_IT_CHAIN, layer);
    if (!it) return NULL;
    ENPU_ASSERT(n >= 1 && n <= 16);
    it->n = n;
    memcpy(it->ins, ins, (size_t)n * sizeof *ins);
    for (int i = 0; i < n; i++) {
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(c->a, &ins[i], i > 0, b);
        for (int k = 0; k < nb; k++) {
            if (b[k].write) cc_item_write(it, b[k].mem, b[k].addr, 1, b[k].words, b[k].words);
            else cc_item_read(it, b[k].mem, b[k].addr, 1, b[k].words, b[k].words);
        }
    }
    return it;
}

cc_item *cc_item_dma(cc *c, int layer, int what, int dir, int mem, int64_t sram, int64_t dram,
                     int64_t rows, int64_t len, int64_t sstride, int64_t dstride) {
    cc_item *it = cc_item_new(c, CC_IT_DMA, layer);
    if (!it) return NULL;
    it->n = 1;
    it->what = what;
    enpu_instr *in = &it->ins[0];
    in->opcode = ENPU_OPC_DMA;
    in->dma_dir = dir, in->dma_mem = mem;
    in->sram_addr = sram, in->dram_addr = dram;
    in->dma_rows = rows, in->dma_len = len;
    in->sram_stride = rows > 1 ? sstride : 0;
    in->dram_stride = rows > 1 ? dstride : 0;
    if (dir == ENPU_DMA_LOAD) {
        cc_item_read(it, ENPU_MEM_DRAM, dram, rows, len, dstride);
        cc_item_write(it, mem, sram, rows, len, sstride);
    } else {
        cc_item_read(it, mem, sram, rows, len, sstride);
        cc_item_write(it, ENPU_MEM_DRAM, dram, rows, len, dstride);
    }
    return it;
}

int64_t cc_dram_alloc(cc *c, int64_t words) {
    int64_t at = c->dram_words;
    c->dram_words += words;
    return at;
}

void cc_in_rows(const enpu_instr *h, int64_t r0, int64_t r1, int64_t *a, int64_t *b, int64_t *pt,
                int64_t *pb) {
    int64_t lo = r0 * h->stride_h - h->pad_top;
    int64_t hi = (r1 - 1) * h->stride_h - h->pad_top + (h->hk - 1) * h->dil_h + 1;
    *a = lo > 0 ? lo : 0;
    *b = hi < h->hi ? hi : h->hi;
    *pt = *a - lo;
    *pb = hi - *b;
}

int64_t cc_in_row_words(const cc *c, const enpu_instr *h) { return h->wi * cdiv(h->ci, c->P); }

void cc_cut_rows(enpu_instr *ins, int n, int64_t r0, int64_t r1) {
    enpu_instr *h = &ins[0];
    int64_t a, b, pt, pb;
    cc_in_rows(h, r0, r1, &a, &b, &pt, &pb);
    h->hi = b - a;
    h->pad_top = pt, h->pad_bottom = pb;
    h->ho = r1 - r0;
    for (int j = 1; j < n; j++) ins[j].hi = ins[j].ho = r1 - r0;
}

int64_t cc_host_cycles(const cc *c, int li) {
    const cc_layer *l = &c->L[li];
    if (l->node < 0) return 0;
    const enpu_node *n = &c->g->nodes[l->node];
    int64_t elems = 0, int8 = 0;
    for (int k = 0; k < n->n_in + n->n_out; k++) {
        int t = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
        if (t < 0 || (c->g->tensors[t].flags & ENPU_T_CONST)) continue;
        int64_t e = enpu_tensor_numel(&c->g->tensors[t]);
        if (e > elems) elems = e;
        if (c->g->tensors[t].dtype == ENPU_DT_INT8) int8 += e; /* in NPU memory */
    }
    return enpu_host_op_cycles(c->a, n->op, n->op == ENPU_OP_RESIZE && n->attr.resize.mode == ENPU_RESIZE_NEAREST,
                               elems, int8, l->macs > 0 ? l->macs : 0);
}

bool cc_host_in_dram(const cc *c, int t) {
    int s = c->tv[t].store;
    if (s < 0 || c->S[s].dram_addr < 0) return false;
    if (c->S[s].main_addr < 0) return true;
    /* a graph input or output, or a tensor whose storage one is (a view:
     * the output of a reshape or transpose remapped onto it) */
    for (int u = 0; u < c->g->n_tensors; u++)
        if (c->tv[u].store == s && (c->g->tensors[u].flags & (ENPU_T_INPUT | ENPU_T_OUTPUT))) return true;
    return false;
}

bool cc_strip_ok(const cc *c, int head) {
    int op = c->L[head].opcode;
    if (op == CC_HOST || op == ENPU_OPC_FC || op == ENPU_OPC_RESHAPE) return false;
    for (int m = head; m >= 0; m = c->L[m].next) {
        const cc_layer *l = &c->L[m];
        if (m != head && l->opcode == ENPU_OPC_RESHAPE) return false;
        /* a strip's rows are the layer's: a second operand stored with
         * another row length (a reshape that moves no data between them)
         * has no rows of its own to cut */
        if (l->op2_store >= 0) {
            const cc_store *o = &c->S[l->op2_store];
            if (o->w != l->ins.wo || cdiv(o->c, c->P) != cdiv(l->ins.co, c->P)) return false;
        }
    }
    return true;
}

/* Chain-head registers of the fuse loop (docs/isa.md "Fused chains"). */
static void fuse_bits(cc *c, cc_layer *head) {
    bool bn = false;
    int act = ENPU_ACT_NONE;
    bool act_first = false;
    for (int m = head->next; m >= 0; m = c->L[m].next) {
        int op = c->L[m].opcode;
        if (op == ENPU_OPC_BN) bn = true;
        if (op == ENPU_OPC_ACT || op == ENPU_OPC_RELU) {
            act = op == ENPU_OPC_ACT ? ENPU_ACT_TABLE : ENPU_ACT_RELU;
            act_first = !bn;
        }
    }
    head->ins.fuse_bn = bn;
    head->ins.fuse_act = act;
    head->ins.fuse_order = (bn && act && act_first) ? ENPU_ORDER_ACT_BN : ENPU_ORDER_BN_ACT;
}

void cc_chain_bits(cc *c, int head) {
    fuse_bits(c, &c->L[head]);
    for (int m = head; m >= 0; m = c->L[m].next) c->L[m].ins.fuse_next = c->L[m].next >= 0;
}

/* ---- a plan that fits on chip ---------------------------------------------------- */

/* The addresses of a layer's instruction in the on-chip plan. */
static void place_layer(cc *c, cc_layer *l, bool member) {
    enpu_instr *in = &l->ins;
    if (!member && l->in_store >= 0) in->ifmap_addr = c->S[l->in_store].main_addr;
    else in->ifmap_addr = 0;
    in->fuse_next = l->next >= 0;
    if (!member) fuse_bits(c, l);
    if (l->next < 0 && l->out_store >= 0) {
        const cc_store *st = &c->S[l->out_store];
        in->ofmap_addr = st->main_addr;
        if (st->into >= 0 && st->ofmap_wpp) {
            in->ofmap_wpp = st->ofmap_wpp;
            in->ofmap_word = st->ofmap_word;
        }
    }
    if (l->op2_store >= 0) {
        in->op2_mem = 1;
        in->op2_addr = c->S[l->op2_store].skip_addr;
    }
}

/* Is storage s read as an ifmap or an op2 by a chain of step `step`? */
static bool step_reads_npu(const cc *c, int step, int s) {
    for (int i = 0; i < c->nl; i++) {
        const cc_layer *l = &c->L[i];
        if (l->step == step && l->opcode != CC_HOST && ((l->head == i && l->in_store == s) || l->op2_store == s))
            return true;
    }
    return false;
}

/* The graph input / output storages: tensor t's storage when t is an int8
 * graph input (output) stored in the NPU memory. */
static int io_store(const cc *c, int t) {
    if (c->g->tensors[t].dtype != ENPU_DT_INT8) return -1;
    return c->tv[t].store;
}

/* The step after which storage s is complete: its writer's, or for a concat
 * target the last of its parts' writers (-1: before the program). */
static int done_step(const cc *c, int s) {
    int step = c->S[s].def >= 0 ? c->L[c->S[s].def].step : -1;
    for (int o = 0; o < c->ns; o++)
        if (c->S[o].into == s && c->S[o].def >= 0 && c->L[c->S[o].def].step > step)
            step = c->L[c->S[o].def].step;
    return step;
}

/* The chain of head li (instructions placed for the whole map) cut to
 * output rows [r0, r1), reading and writing the resident maps at the rows'
 * offsets, tiled. */
static int strip_of(cc *c, const enpu_instr *whole, int n, int64_t r0, int64_t r1, const int *lay, enpu_instr *ins) {
    int P = c->P;
    memcpy(ins, whole, (size_t)n * sizeof *ins);
    cc_cut_rows(ins, n, r0, r1);
    int64_t a, b, pt, pb;
    cc_in_rows(&whole[0], r0, r1, &a, &b, &pt, &pb);
    const cc_layer *hl = &c->L[lay[0]];
    ins[0].ifmap_addr += a * cc_in_row_words(c, &whole[0]);
    for (int j = 0; j < n; j++) {
        const cc_layer *l = &c->L[lay[j]];
        int64_t W = whole[j].wo;
        if (l->op2_store >= 0) ins[j].op2_addr += r0 * W * cdiv(c->S[l->op2_store].c, P);
        if (ins[j].store_skip) ins[j].skip_addr += r0 * W * cdiv(whole[j].co, P);
        if (j == n - 1 && l->out_store >= 0) {
            const cc_store *os = &c->S[l->out_store];
            int64_t owpp = os->ofmap_wpp ? os->ofmap_wpp : cdiv(os->c, P);
            ins[j].ofmap_addr += r0 * os->w * owpp;
        }
    }
    return cc_tile_search(c->cache, c->a, ins, n, c->o.naive_tiling, c->o.search, hl->name, NULL, c->err);
}

/* The first reader of a graph input need not wait for the whole input: its
 * chain is cut into row strips, each waiting only for the input rows it
 * reads, loaded in that order; the strip count minimises a two-stage
 * pipeline estimate (load at the DRAM bandwidth, compute by the cost
 * model).  Returns the strip count chosen (1: no gain). */
static int input_strips(cc *c, const enpu_instr *whole, int n, const int *lay) {
    const enpu_arch *a = c->a;
    int64_t ho = whole[0].ho, wb = enpu_arch_word_bytes(a);
    int64_t bpc = a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb;
    int64_t rw = cc_in_row_words(c, &whole[0]);
    static const int cand[] = {1, 2, 3, 4, 6, 8, 12, 16};
    int best = 1;
    int64_t best_t = -1;
    enpu_instr ins[16];
    for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++) {
        int ns = cand[k];
        if (ns > ho) break;
        int64_t rows = cdiv(ho, ns), end = 0, loaded = 0, words = 0;
        for (int64_t r0 = 0; r0 < ho; r0 += rows) {
            int64_t r1 = r0 + rows < ho ? r0 + rows : ho, ia, ib, pt, pb;
            cc_in_rows(&whole[0], r0, r1, &ia, &ib, &pt, &pb);
            if (ib <= ia) {
                /* a strip whose window lies only in the padding: not this count */
                end = -1;
                break;
            }
            if (ib > loaded) words += (ib - loaded) * rw, loaded = ib;
            enpu_err e2 = {0};
            enpu_err *keep = c->err;
            c->err = &e2;
            int rc = strip_of(c, whole, n, r0, r1, lay, ins);
            c->err = keep;
            if (rc) return best;
            int64_t dur = cc_cost_chain_cached(c->cache, a, ins, n, NULL);
            int64_t ready = cdiv(words * wb, bpc) + a->dram_latency;
            int64_t start = end > ready ? end : ready;
            end = start + dur + a->instr_fetch_cycles + a->decode_cycles;
        }
        if (end >= 0 && (best_t < 0 || end < best_t)) best = ns, best_t = end;
    }
    return best;
}

static int host_item(cc *c, int li) {
    cc_layer *l = &c->L[li];
    cc_item *it = cc_item_new(c, CC_IT_HOST, li);
    if (!it) return c->err->code;
    it->n = 1;
    it->ins[0] = l->ins;
    const enpu_node *n = &c->g->nodes[l->node];
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? n->n_out : n->n_in;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? n->out[k] : n->in[k];
            if (t < 0) continue;
            if (cc_item_host_tensor(c, it, t, pass)) continue;
            const cc_store *st = &c->S[c->tv[t].store];
            bool dram = cc_host_in_dram(c, t);
            int mem = dram ? ENPU_MEM_DRAM : ENPU_MEM_MAIN;
            int64_t addr = dram ? st->dram_addr : st->main_addr;
            if (pass) cc_item_write(it, mem, addr, 1, st->words, st->words);
            else cc_item_read(it, mem, addr, 1, st->words, st->words);
        }
    }
    /* a graph output the host wrote into DRAM that NPU layers read later:
     * loaded into its DTCM place */
    for (int k = 0; k < n->n_out; k++) {
        int t = n->out[k];
        if (t < 0 || c->tv[t].store < 0 || !cc_host_in_dram(c, t)) continue;
        int s = c->tv[t].store;
        const cc_store *st = &c->S[s];
        if (st->main_addr < 0) continue;
        /* (a graph output is kept to the end: look for an NPU reader) */
        bool later = false;
        for (int step = l->step + 1; step < c->nsteps && !later; step++) later = step_reads_npu(c, step, s);
        if (!later) continue;
        if (!cc_item_dma(c, li, CC_DMA_INPUT, ENPU_DMA_LOAD, ENPU_MEM_MAIN, st->main_addr, st->dram_addr, 1,
                         st->words, 0, 0))
            return c->err->code;
    }
    return 0;
}

int cc_items_onchip(cc *c) {
    const enpu_graph *g = c->g;
    bool dram = c->a->dram_bytes > 0;
    /* graph inputs and outputs in DRAM */
    if (dram) {
        for (int k = 0; k < g->n_inputs; k++) {
            int s = io_store(c, g->inputs[k]);
            if (s >= 0 && c->S[s].dram_addr < 0) c->S[s].dram_addr = cc_dram_alloc(c, c->S[s].words);
        }
        for (int k = 0; k < g->n_outputs; k++) {
            int s = io_store(c, g->outputs[k]);
            if (s >= 0 && c->S[s].dram_addr < 0) c->S[s].dram_addr = cc_dram_alloc(c, c->S[s].words);
        }
    }
    bool *loaded = calloc((size_t)(c->ns > 0 ? c->ns : 1), sizeof *loaded);
    if (!loaded) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    int rc = 0;
    for (int k = 0; k < c->norder && !rc; k++) {
        int li = c->order[k];
        cc_layer *l = &c->L[li];
        if (l->head != li) continue;
        /* the graph inputs this step reads, loaded before it (reported with it) */
        int loads = c->nit;
        for (int j = 0; dram && j < g->n_inputs; j++) {
            int t = g->inputs[j], s = io_store(c, t);
            if (s < 0 || loaded[s] || !step_reads_npu(c, l->step, s)) continue; /* a host op reads it in DRAM */
            loaded[s] = true;
            const cc_store *st = &c->S[s];
            cc_item *d = cc_item_dma(c, li, CC_DMA_INPUT, ENPU_DMA_LOAD, ENPU_MEM_MAIN, st->main_addr,
                                     st->dram_addr, 1, st->words, 0, 0);
            if (!d) {
                rc = c->err->code;
                break;
            }
        }
        if (rc) break;
        int first = c->nit;
        for (int d = loads; d < first; d++) c->it[d].group = first;
        /* a chain whose input is a graph input loaded just now: in row strips */
        bool piped = false;
        if (loads + 1 == first && l->opcode != CC_HOST && cc_strip_ok(c, li) && l->in_store >= 0 &&
            c->it[loads].what == CC_DMA_INPUT && c->it[loads].ins[0].sram_addr == c->S[l->in_store].main_addr) {
            enpu_instr whole[16];
            int lay[16], n = 0;
            for (int m = li; m >= 0 && n < 16; m = c->L[m].next) {
                place_layer(c, &c->L[m], m != li);
                lay[n] = m;
                whole[n++] = c->L[m].ins;
            }
            bool op2_in = false;
            for (int j = 0; j < n; j++) op2_in |= c->L[lay[j]].op2_store == l->in_store;
            int ns = op2_in ? 1 : input_strips(c, whole, n, lay);
            if (ns > 1) {
                /* the whole load is replaced by one load per strip of the rows it adds */
                cc_item dl = c->it[loads];
                c->nit = loads;
                int64_t rw = cc_in_row_words(c, &whole[0]), ho = whole[0].ho, rows = cdiv(ho, ns), have = 0;
                int grp = c->nit;
                for (int64_t r0 = 0; r0 < ho && !rc; r0 += rows) {
                    int64_t r1 = r0 + rows < ho ? r0 + rows : ho, ia, ib, pt, pb;
                    cc_in_rows(&whole[0], r0, r1, &ia, &ib, &pt, &pb);
                    if (ib > have) {
                        cc_item *d = cc_item_dma(c, li, CC_DMA_INPUT, ENPU_DMA_LOAD, ENPU_MEM_MAIN,
                                                 dl.ins[0].sram_addr + have * rw, dl.ins[0].dram_addr + have * rw,
                                                 1, (ib - have) * rw, 0, 0);
                        if (!d) {
                            rc = c->err->code;
                            break;
                        }
                        d->group = grp;
                        have = ib;
                    }
                    enpu_instr ins[16];
                    if ((rc = strip_of(c, whole, n, r0, r1, lay, ins))) break;
                    cc_item *it = cc_item_chain(c, li, ins, n);
                    if (!it) {
                        rc = c->err->code;
                        break;
                    }
                    memcpy(it->lay, lay, (size_t)n * sizeof *lay);
                    it->group = grp;
                    first = c->nit - 1;
                }
                /* rows no strip reads (under a stride, or past the last window)
                 * may have other readers: the whole input is loaded */
                int64_t rest = dl.ins[0].dma_len - have * rw;
                if (!rc && rest > 0) {
                    cc_item *d = cc_item_dma(c, li, CC_DMA_INPUT, ENPU_DMA_LOAD, ENPU_MEM_MAIN,
                                             dl.ins[0].sram_addr + have * rw, dl.ins[0].dram_addr + have * rw, 1,
                                             rest, 0, 0);
                    if (!d) rc = c->err->code;
                    else d->group = grp;
                }
                if (rc) break;
                /* the first item of the group names the row: the first strip */
                for (int d = grp; d < c->nit; d++)
                    if (c->it[d].kind == CC_IT_CHAIN) {
                        for (int e = grp; e < c->nit; e++) c->it[e].group = d;
                        break;
                    }
                piped = true;
            }
        }
        if (piped) {
            /* checked after its last strip */
        } else if (l->opcode == CC_HOST) {
            if ((rc = host_item(c, li))) break;
        } else {
            enpu_instr ins[16];
            int n = 0;
            for (int m = li; m >= 0 && n < 16; m = c->L[m].next) {
                place_layer(c, &c->L[m], m != li);
                ins[n++] = c->L[m].ins;
            }
            cc_item *it = cc_item_chain(c, li, ins, n);
            if (!it) {
                rc = c->err->code;
                break;
            }
            n = 0;
            for (int m = li; m >= 0 && n < 16; m = c->L[m].next) it->lay[n++] = m;
        }
        /* the last layer of the step: its stored output is checked after it
         * (a part of a channel concat is not: no descriptor can describe it
         * alone; its readers check the concat) */
        cc_item *it = &c->it[first];
        int last = it->lay[it->n - 1];
        const cc_layer *ll = &c->L[last];
        if (ll->out >= 0 && ll->out_store >= 0 && c->tv[ll->out].store >= 0 &&
            c->S[ll->out_store].ofmap_wpp == 0) {
            it->tensor = ll->out;
            it->tmem = ENPU_MEM_MAIN;
            it->taddr = c->S[ll->out_store].main_addr;
        }
        /* graph outputs it completes, stored to DRAM after it */
        for (int j = 0; dram && j < g->n_outputs; j++) {
            int t = g->outputs[j], s = io_store(c, t);
            if (s < 0 || done_step(c, s) != l->step) continue;
            if (l->opcode == CC_HOST) continue; /* the host wrote it into DRAM */
            const cc_store *st = &c->S[s];
            cc_item *d = cc_item_dma(c, li, CC_DMA_OUTPUT, ENPU_DMA_STORE, ENPU_MEM_MAIN,
                                     st->main_addr, st->dram_addr, 1, st->words, 0, 0);
            if (!d) {
                rc = c->err->code;
                break;
            }
            d->tensor = t, d->tmem = ENPU_MEM_DRAM, d->taddr = st->dram_addr, d->tout = true;
            d->group = first;
            /* the output is checked where the host reads it */
            if (c->it[first].tensor == t) c->it[first].tmem = -1;
        }
    }
    free(loaded);
    if (rc) return rc;
    cc_item *e = cc_item_new(c, CC_IT_END, -1);
    if (!e) return c->err->code;
    e->n = 1;
    e->ins[0].opcode = ENPU_OPC_END;
    (void)cdiv;
    return 0;
}
