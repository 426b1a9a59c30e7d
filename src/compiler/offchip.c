/* The off-chip plan (note 004's tiling, DRAM allocation and buffer
 * allocation): a model whose feature maps, kept tensors or weights do not
 * fit the on-chip memories runs with its tensors and weights in DRAM,
 * streamed by the DMA engines (docs/compiler.md "Off-chip memory").
 *
 * Decisions, in order:
 * 1. Weights (offchip_weights.c).  All of them stay in the weight memory when they fit;
 *    otherwise every step's parameters (weights, biases, requantization
 *    pairs, tables of its chain) are a block of the DRAM image, loaded into
 *    one half of the weight memory before the step (the other half holds
 *    the previous step's: double buffering), the whole memory for a block
 *    over half, and output-channel blocks (each its own instruction, its
 *    own slice of the weights, its output words through ofmap_wpp /
 *    ofmap_word) for a block over the whole; an fc or conv one block of
 *    whose output channels is over the whole is cut into input-channel
 *    blocks (icblocks.c: parts of an fc's input, a conv's kernel rows),
 *    their sums held in the psum file.
 * 2. Residency (2-4: offchip_mem.c).  Every feature map starts resident in the main DTCM for its
 *    lifetime (kept tensors: in the skip DTCM); where they do not fit, the
 *    largest tensor live there moves to DRAM, until everything fits.  A
 *    tensor in DRAM is written by its producer strip by strip through a
 *    buffer and read by its consumers strip by strip into theirs.
 * 3. Strips.  A step that reads or writes a tensor in DRAM is cut into row
 *    strips: each strip is the chain's instructions on rows [r0, r1) of the
 *    output (the input rows they need, with the padding only at the map's
 *    edges); buffers are double when there are several strips.  The strip
 *    height is the largest whose buffers fit the step's share of the DTCM
 *    left by the resident tensors; a step whose buffers do not fit is given
 *    a smaller share (lower strips) before a tensor is moved.
 * 4. Memory: one first-fit allocation over time (a resident tensor from its
 *    writer's step to its last reader's; a step's input buffers from the
 *    step before (prefetch) to the step; its output buffers from the step to
 *    the one after (the last store drains)); DRAM by bump allocation.
 * 5. Items (offchip_items.c): per step the weight load, then per strip (and output-channel
 *    block) the loads of its input and second-operand rows, the chain, the
 *    store of its output rows; sched.c orders them and adds the tokens.
 *
 * This file is the entry point: it cuts the program into steps, runs the
 * phases in that order, places the DRAM image and the tensors in DRAM, and
 * writes the notes.  The phases share the plan through offchip.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/offchip.h"

/* ---- steps ------------------------------------------------------------------------- */

/* The steps of the plan, in program order: one per chain (its head and
 * members) or host op, with the storages it reads and writes and whether it
 * may be cut into row strips; one strip and no block each until planned. */
static void build_steps(plan *pl) {
    cc *c = pl->c;
    pl->nst = 0;
    for (int k = 0; k < c->norder; k++) {
        int li = c->order[k];
        cc_layer *l = &c->L[li];
        if (l->head != li) continue;
        ost *st = &pl->st[pl->nst];
        memset(st, 0, sizeof *st);
        st->head = li;
        st->host = l->opcode == CC_HOST;
        st->in_s = st->op2_s = st->out_s = st->skip_s = -1;
        for (int m = li; m >= 0 && st->n < 16; m = c->L[m].next) {
            st->lay[st->n++] = m;
            pl->step_of_layer[m] = pl->nst;
            const cc_layer *ml = &c->L[m];
            if (ml->op2_store >= 0) st->op2_s = ml->op2_store;
        }
        if (!st->host) {
            cc_chain_bits(c, li); /* the fuse loop's registers, as the on-chip plan sets them */
            st->in_s = l->in_store;
            const cc_layer *last = &c->L[st->lay[st->n - 1]];
            st->out_s = last->out_store;
            if (st->out_s >= 0 && (c->S[st->out_s].last_op2 >= 0)) st->skip_s = st->out_s;
            st->ho = l->ins.opcode == ENPU_OPC_RESHAPE ? l->ins.hi : l->ins.ho;
            st->strip_ok = cc_strip_ok(c, li);
        }
        st->ncob = st->nicb = 1;
        st->rows = st->ho;
        st->nstrip = 1;
        pl->nst++;
    }
}

/* Appends text to a layer's note ("; " between), or replaces it. */
static void add_note(cc_layer *l, const char *text, bool replace) {
    size_t ol = l->note && !replace ? strlen(l->note) : 0, nl = strlen(text);
    char *nn = malloc(ol + nl + 3);
    if (!nn) return; /* a note is lost, not the plan */
    snprintf(nn, ol + nl + 3, "%s%s%s", ol ? l->note : "", ol ? "; " : "", text);
    free(l->note);
    l->note = nn;
}

int cc_offchip(cc *c, uint8_t **wimg, size_t *wlen, uint8_t **simg, size_t *slen) {
    const enpu_graph *g = c->g;
    const enpu_arch *a = c->a;
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.c = c;
    c->offchip = true;
    int ns = c->ns;
    size_t nsz = (size_t)(ns > 0 ? ns : 1);
    pl.dstep = malloc(nsz * sizeof *pl.dstep);
    pl.res = calloc(nsz, sizeof *pl.res);
    pl.sres = calloc(nsz, sizeof *pl.sres);
    pl.moved = calloc(nsz, sizeof *pl.moved);
    pl.st = calloc((size_t)(c->norder > 0 ? c->norder : 1), sizeof *pl.st);
    pl.step_of_layer = malloc((size_t)(c->nl > 0 ? c->nl : 1) * sizeof *pl.step_of_layer);
    int rc = 0;
    if (!pl.dstep || !pl.res || !pl.sres || !pl.moved || !pl.st || !pl.step_of_layer) {
        rc = OOM();
        goto out;
    }
    cc_lifetimes(c, pl.dstep);
    build_steps(&pl);
    for (int s = 0; s < ns; s++) {
        cc_store *st = &c->S[s];
        st->main_addr = st->skip_addr = st->dram_addr = -1;
        pl.res[s] = st->into < 0 && pl.dstep[s] >= -1;
        pl.sres[s] = st->last_op2 >= 0 || st->def == -2;
    }
    /* the graph inputs and outputs live in DRAM */
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? g->n_outputs : g->n_inputs;
        for (int k = 0; k < n; k++) {
            int t = pass ? g->outputs[k] : g->inputs[k];
            if (g->tensors[t].dtype != ENPU_DT_INT8 || c->tv[t].store < 0) continue;
            c->S[target(c, c->tv[t].store)].dram_addr = 0; /* placed below */
        }
    }
    /* 1. weights */
    for (int k = 0; k < c->norder && !rc; k++) rc = cc_layout_layer_params(c, &c->L[c->order[k]], &pl.wimg);
    if (rc) goto out;
    pl.wstream = (int64_t)pl.wimg.len > a->weight_mem_bytes;
    cc_off_step_weights(&pl);
    if (pl.wstream) {
        if ((rc = cc_off_weight_buffers(&pl))) goto out;
        /* the DRAM image: the weight image, then the output-channel slices */
        if (cc_wb_reserve(c, &pl.dimg, pl.wimg.len)) {
            rc = c->err->code;
            goto out;
        }
        memcpy(pl.dimg.p, pl.wimg.p, pl.wimg.len);
        pl.dimg.len = pl.wimg.len;
        if ((rc = cc_off_cob_slices(&pl))) goto out;
    }
    if (pl.wstream)
        rc = cc_note(c, "weights: %zu bytes of weights and parameters exceed the %" PRId64 "-byte weight "
                        "memory: each layer's are loaded from DRAM before it, into the half of the weight "
                        "memory the previous layer does not use (output-channel blocks for a layer over "
                        "half)", pl.wimg.len, a->weight_mem_bytes);
    else
        rc = cc_note(c, "weights: all %zu bytes stay in the weight memory (%" PRId64 " bytes)", pl.wimg.len,
                     a->weight_mem_bytes);
    if (rc) goto out;
    /* 2-4. residency, strips, memory */
    if ((rc = cc_off_plan_memory(&pl))) goto out;
    for (int s = 0; s < ns && !rc; s++) {
        const cc_store *st = &c->S[s];
        if (!pl.moved[s]) continue;
        int64_t t0, t1;
        cc_off_live_range(&pl, s, &t0, &t1);
        char sh[64];
        enpu_shape_str(&g->tensors[st->tensor], sh, sizeof sh);
        if (pl.nst == 0)
            /* no NPU layer at all (the host runs every node): nothing to name */
            rc = cc_note(c, "tensor '%s' %s (%" PRId64 " bytes) kept in DRAM: it does not fit the %" PRId64
                            "-byte main DTCM, and only the host reads and writes it",
                         g->tensors[st->tensor].name, sh, st->words * enpu_arch_word_bytes(a), a->main_dtcm_bytes);
        else
            rc = cc_note(c, "tensor '%s' %s (%" PRId64 " bytes) kept in DRAM: with it in the main DTCM, the "
                            "tensors and buffers live around layer '%s' would not fit; its writer stores it and "
                            "its readers load it row strip by row strip",
                         g->tensors[st->tensor].name, sh, st->words * enpu_arch_word_bytes(a),
                         c->L[pl.st[t0 >= 0 && t0 < pl.nst ? t0 : 0].head].name);
    }
    for (int s = 0; s < ns && !rc; s++) {
        const cc_store *st = &c->S[s];
        if (st->last_op2 < 0 || pl.sres[s]) continue;
        rc = cc_note(c, "%s '%s' (second operand of a later add/mul) kept in DRAM, not in the skip DTCM "
                        "(%" PRId64 " bytes do not fit beside the others): the add loads its rows",
                     st->def == -2 ? "constant" : "tensor", g->tensors[st->tensor].name,
                     st->words * enpu_arch_word_bytes(a));
    }
    if (rc) goto out;
    /* the DRAM image: the streamed weights, then the constant second
     * operands kept in DRAM; it comes first in DRAM */
    for (int s = 0; s < ns && !rc; s++) {
        cc_store *st = &c->S[s];
        if (st->def != -2 || pl.sres[s]) continue;
        int64_t at = cc_wb_block(c, &pl.dimg, st->cdata, (size_t)(st->words * c->P));
        if (at < 0) rc = c->err->code;
        st->dram_addr = at; /* relative to the image, placed below */
    }
    if (rc) goto out;
    if (pl.dimg.len) {
        pl.wdram = cc_dram_alloc(c, cdiv((int64_t)pl.dimg.len, c->P));
        for (int s = 0; s < ns; s++)
            if (c->S[s].def == -2 && !pl.sres[s]) c->S[s].dram_addr += pl.wdram;
    }
    /* DRAM for the tensors that live there */
    for (int s = 0; s < ns; s++) {
        cc_store *st = &c->S[s];
        if (st->into >= 0 || pl.dstep[s] < -1) continue;
        bool need = st->dram_addr == 0 || !pl.res[s] || (st->last_op2 >= 0 && !pl.sres[s] && st->def != -2);
        st->dram_addr = need ? cc_dram_alloc(c, st->words) : -1;
        if (!pl.res[s]) st->main_addr = -1;
    }
    /* 5. items */
    bool *loaded = calloc(nsz, sizeof *loaded);
    if (!loaded) {
        rc = OOM();
        goto out;
    }
    for (int k = 0; k < pl.nst && !rc; k++) {
        const ost *st = &pl.st[k];
        /* resident graph inputs, loaded whole before their first reader */
        for (int j = 0; j < g->n_inputs && !rc; j++) {
            int t = g->inputs[j];
            if (c->tv[t].store < 0 || g->tensors[t].dtype != ENPU_DT_INT8) continue;
            int s = c->tv[t].store;
            if (loaded[s] || !pl.res[s]) continue;
            /* (a host op reads a graph input in DRAM) */
            bool reads = !st->host && (target(c, st->in_s) == s || st->op2_s == s);
            if (!reads) continue;
            loaded[s] = true;
            cc_item *d = cc_item_dma(c, st->head, CC_DMA_INPUT, ENPU_DMA_LOAD, ENPU_MEM_MAIN, c->S[s].main_addr,
                                     c->S[s].dram_addr, 1, c->S[s].words, 0, 0);
            if (!d) rc = c->err->code;
            else d->group = c->nit; /* reported with the step that reads it, next */
        }
        if (rc) break;
        int first = c->nit;
        rc = st->host ? cc_off_host_items(&pl, st) : cc_off_chain_items(&pl, k);
        if (rc || st->out_s < 0) continue;
        /* where the step's output is checked: the last item writing it */
        const cc_store *os = &c->S[st->out_s];
        int t = c->L[st->lay[st->n - 1]].out;
        if (os->ofmap_wpp > 0 || os->into >= 0 || t < 0) continue;
        for (int i = c->nit - 1; i >= first; i--) {
            cc_item *it = &c->it[i];
            bool dram = pl.res[st->out_s] ? false : true;
            if (it->kind == CC_IT_DMA && it->ins[0].dma_dir == ENPU_DMA_STORE && os->dram_addr >= 0 &&
                (dram || (g->tensors[t].flags & ENPU_T_OUTPUT))) {
                it->tensor = t, it->tmem = ENPU_MEM_DRAM, it->taddr = os->dram_addr;
                it->tout = (g->tensors[t].flags & ENPU_T_OUTPUT) != 0;
                break;
            }
            if (it->kind == CC_IT_CHAIN && !dram && !(g->tensors[t].flags & ENPU_T_OUTPUT)) {
                it->tensor = t, it->tmem = ENPU_MEM_MAIN, it->taddr = os->main_addr;
                break;
            }
        }
    }
    free(loaded);
    if (rc) goto out;
    {
        cc_item *e = cc_item_new(c, CC_IT_END, -1);
        if (!e) {
            rc = c->err->code;
            goto out;
        }
        e->n = 1;
        e->ins[0].opcode = ENPU_OPC_END;
    }
    /* images */
    if (!pl.wstream) {
        *wimg = pl.wimg.p, *wlen = pl.wimg.len;
        pl.wimg.p = NULL;
    }
    if (pl.dimg.len) {
        c->dram_img = pl.dimg.p, c->dram_img_len = pl.dimg.len;
        pl.dimg.p = NULL;
    }
    {
        wbuf sb = {0};
        for (int s = 0; s < ns && !rc; s++) {
            const cc_store *st = &c->S[s];
            if (st->def != -2 || st->skip_addr < 0) continue;
            size_t end = (size_t)((st->skip_addr + st->words) * c->P);
            if (sb.len < end) {
                if (cc_wb_reserve(c, &sb, end - sb.len)) {
                    rc = c->err->code;
                    break;
                }
                sb.len = end;
            }
            memcpy(sb.p + st->skip_addr * c->P, st->cdata, (size_t)(st->words * c->P));
        }
        *simg = sb.p, *slen = sb.len;
    }
    /* a second operand kept in DRAM: the lowering's note said skip DTCM */
    for (int k = 0; k < pl.nst; k++)
        for (int j = 0; j < pl.st[k].n; j++) {
            cc_layer *ml = &c->L[pl.st[k].lay[j]];
            int s = ml->op2_store;
            if (s < 0 || pl.sres[s]) continue;
            char buf[ENPU_MAX_NAME + 96];
            snprintf(buf, sizeof buf, "op2 '%s'%s from DRAM, its rows loaded strip by strip into a skip DTCM buffer",
                     g->tensors[c->S[s].tensor].name, c->S[s].def == -2 ? " (constant)" : "");
            add_note(ml, buf, true);
        }
    for (int k = 0; k < pl.nst; k++)
        if (pl.st[k].nstrip > 1 || pl.st[k].ncob > 1 || (pl.st[k].in_s >= 0 && !pl.res[target(c, pl.st[k].in_s)])) {
            const ost *st = &pl.st[k];
            char buf[256];
            snprintf(buf, sizeof buf, "off-chip: %d strip(s) of %" PRId64 " output row(s)%s%s%s", st->nstrip,
                     st->rows, st->ncob > 1 ? ", output-channel blocks" : "",
                     st->in_s >= 0 && !pl.res[target(c, st->in_s)] ? ", input from DRAM" : "",
                     st->out_s >= 0 && !pl.res[target(c, st->out_s)] ? ", output to DRAM" : "");
            add_note(&c->L[st->head], buf, false);
        }
    for (int k = 0; k < pl.nst; k++)
        if (pl.st[k].nicb > 1) {
            const ost *st = &pl.st[k];
            char buf[448], conv[128] = "", units[64];
            if (st->icu >= 3)
                snprintf(conv, sizeof conv, " (%s; strips of at most %" PRId64 " output rows, each one psum tile)",
                         st->icu == 3 ? "every input channel" : "the words read through ifmap_wpp", st->icrows);
            snprintf(buf, sizeof buf,
                     "cut into %d input-channel blocks of %s%s: one block of %" PRId64
                     " output channels with its whole input needs %" PRId64 " bytes of weights and parameters, "
                     "over weight_mem_bytes %" PRId64 "; a block needs at most %" PRId64
                     " bytes, its sums held in the psum file from block to block",
                     st->nicb, cc_icb_units(st, units, sizeof units), conv, st->cob, st->icfull, a->weight_mem_bytes,
                     st->icbytes);
            add_note(&c->L[st->head], buf, false);
        }
out:
    for (int k = 0; pl.st && k < pl.nst; k++)
        free(pl.st[k].blo), free(pl.st[k].bwords), free(pl.st[k].baddr), free(pl.st[k].cost);
    free(pl.dstep), free(pl.res), free(pl.sres), free(pl.moved), free(pl.st), free(pl.step_of_layer);
    free(pl.wimg.p), free(pl.dimg.p);
    return rc;
}
