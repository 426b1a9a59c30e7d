/* Emission: the program (program.h) from the planned layers -- one
 * instruction per layer in program order, SYNC for host ops, END; the
 * weight and skip images; IO descriptors for the graph inputs and outputs,
 * the tensors exchanged with host ops, and a probe per stored layer output
 * (so every instruction names the tensor it computes and where it lies). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

typedef struct emitter {
    cc *c;
    enpu_program *p;
    int *io_of;        /* per graph tensor: its IO descriptor, -1 */
    int64_t dram_base; /* DRAM words the instructions take in front of the data */
} emitter;

/* Descriptor of tensor t as stored: in DRAM when it has a DRAM copy and
 * `dram` is asked for (graph inputs and outputs, tensors kept in DRAM), else
 * in the main DTCM, or in host memory when it has no storage (a float
 * host-op output).  Reuses an existing one.  The dims are always t's own
 * shape, so the host (a host op, the user's inputs and outputs) sees the
 * graph's tensors whatever storage they are views of. */
static int io_desc(emitter *em, int t, enpu_io_dir dir, bool dram) {
    cc *c = em->c;
    if (em->io_of[t] >= 0) return em->io_of[t];
    const enpu_tensor *tt = &c->g->tensors[t];
    enpu_io_desc d;
    memset(&d, 0, sizeof d);
    d.name = tt->name;
    d.dir = dir;
    d.dtype = tt->dtype;
    const cc_view *v = &c->tv[t];
    if (v->store < 0 || tt->dtype != ENPU_DT_INT8) {
        d.layout = ENPU_LAYOUT_ANY;
        d.rank = tt->rank;
        for (int k = 0; k < tt->rank; k++) d.dims[k] = tt->dims[k];
        d.mem = ENPU_MEM_HOST;
        d.addr = 0;
        d.scale = 0;
        if (tt->dtype == ENPU_DT_INT8 && tt->quant) d.scale = tt->quant->scale[0], d.zero_point = tt->quant->zero_point[0];
        if (tt->dtype == ENPU_DT_INT8 && !(d.scale > 0)) d.scale = 1;
    } else {
        const cc_store *st = &c->S[v->store];
        /* a storage with no main-DTCM home (kept in DRAM by the off-chip
         * plan) is seen where it lives, whoever asks */
        if ((dram || st->main_addr < 0) && st->dram_addr >= 0) {
            d.mem = ENPU_MEM_DRAM;
            d.addr = (uint32_t)(st->dram_addr + em->dram_base);
        } else {
            d.mem = ENPU_MEM_MAIN;
            d.addr = (uint32_t)st->main_addr;
        }
        d.scale = tt->quant ? tt->quant->scale[0] : 1.0f;
        d.zero_point = tt->quant ? tt->quant->zero_point[0] : 0;
        /* natural view of a rank >= 3 tensor: NHWC ([N,C,d2..] -> [N,d2..,C],
         * rows of C channels); otherwise (rank < 3, or an identity view:
         * element e at position e of the storage) 'any': the elements in
         * row-major order, in rows of the storage's channel count */
        d.rank = tt->rank;
        if (!v->pos && tt->rank >= 3) {
            d.layout = ENPU_LAYOUT_NHWC;
            d.dims[0] = tt->dims[0];
            for (int k = 2; k < tt->rank; k++) d.dims[k - 1] = tt->dims[k];
            d.dims[tt->rank - 1] = tt->dims[1];
        } else {
            d.layout = ENPU_LAYOUT_ANY;
            for (int k = 0; k < tt->rank; k++) d.dims[k] = tt->dims[k];
            if (enpu_io_row(&d) != st->c) d.row = st->c;
        }
    }
    int rc = enpu_program_add_io(em->p, &d, c->err);
    if (rc < 0) return rc;
    em->io_of[t] = rc;
    return rc;
}

/* cc_operand_fn: a host op's operand as stored */
static int host_operand(void *ctx, int t, bool out) {
    emitter *em = ctx;
    enpu_io_dir dir = out && (em->c->g->tensors[t].flags & ENPU_T_OUTPUT) ? ENPU_IO_OUTPUT : ENPU_IO_HOST;
    return io_desc(em, t, dir, cc_host_in_dram(em->c, t));
}

static int emit_host(emitter *em, cc_layer *l, const enpu_instr *tok) {
    cc *c = em->c;
    const enpu_node *n = &c->g->nodes[l->node];
    int hi = cc_add_hostop(em->p, c->g, n, host_operand, em, c->err);
    if (hi < 0) return hi;
    l->hostop = hi;
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_SYNC;
    in.host_op = hi;
    in.push = tok->push, in.pop = tok->pop;
    const char *src = n->name;
    int rc = enpu_program_add_instr(em->p, &in, l->name, 1, &src, c->err);
    if (rc) return rc;
    em->p->layers[em->p->n_instr - 1].macs = l->macs;
    return enpu_program_set_layer_output(em->p, em->p->n_instr - 1,
                                         l->out >= 0 ? c->g->tensors[l->out].name : "",
                                         l->out >= 0 ? em->io_of[l->out] : -1, c->err);
}

int cc_emit(cc *c, enpu_program *p, const uint8_t *wimg, size_t wlen, const uint8_t *simg,
            size_t slen) {
    emitter em = {c, p, NULL, 0};
    em.io_of = malloc((size_t)(c->g->n_tensors > 0 ? c->g->n_tensors : 1) * sizeof *em.io_of);
    int *first = malloc((size_t)(c->nit > 0 ? c->nit : 1) * sizeof *first);
    /* per layer: the weight-memory word of its table as its first emitted
     * instruction reads it (streamed weights load it elsewhere than the
     * image's place) */
    int64_t *tab = malloc((size_t)(c->nl > 0 ? c->nl : 1) * sizeof *tab);
    for (int k = 0; tab && k < c->nl; k++) tab[k] = -1;
    if (!em.io_of || !first) {
        free(em.io_of), free(first);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    for (int t = 0; t < c->g->n_tensors; t++) em.io_of[t] = -1;
    /* a program longer than the ITCM is fetched from DRAM, where it comes
     * first: the DRAM data follows it */
    int n_instr = 0;
    for (int i = 0; i < c->nit; i++) n_instr += c->it[i].n;
    const enpu_arch *a = c->a;
    if ((int64_t)n_instr * ENPU_INSTR_BYTES > a->itcm_bytes && a->dram_bytes > 0)
        em.dram_base = ((int64_t)n_instr * ENPU_INSTR_BYTES + enpu_arch_word_bytes(a) - 1) /
                       enpu_arch_word_bytes(a);
    int rc = 0;
    /* graph inputs and outputs first */
    for (int k = 0; k < c->g->n_inputs && !rc; k++) {
        int t = c->g->inputs[k];
        if (c->tv[t].store < 0) continue; /* unused input */
        rc = io_desc(&em, t, ENPU_IO_INPUT, true) < 0;
    }
    for (int k = 0; k < c->g->n_outputs && !rc; k++)
        rc = io_desc(&em, c->g->outputs[k], ENPU_IO_OUTPUT, true) < 0;
    if (rc) goto out;
    for (int k = 0; k < c->nit; k++) {
        int ii = c->sorder[k];
        cc_item *it = &c->it[ii];
        first[ii] = p->n_instr;
        if (it->kind == CC_IT_HOST) {
            if ((rc = emit_host(&em, &c->L[it->layer], &it->ins[0]))) goto out;
            continue;
        }
        for (int j = 0; j < it->n; j++) {
            enpu_instr in = it->ins[j];
            /* an item is one unit of the schedule: its tokens are its first
             * instruction's, which holds only for a fused chain */
            ENPU_ASSERT(in.fuse_next == (j + 1 < it->n));
            if (in.opcode == ENPU_OPC_DMA) in.dram_addr += em.dram_base;
            const cc_layer *l = it->lay[j] >= 0 ? &c->L[it->lay[j]] : NULL;
            if (l && l->table && tab && tab[it->lay[j]] < 0) tab[it->lay[j]] = in.table_addr;
            const char *name = it->kind == CC_IT_END ? "end" : l ? l->name : "";
            const char *src = l ? l->src : "";
            if ((rc = enpu_program_add_instr(p, &in, name, src[0] ? 1 : 0, &src, c->err))) goto out;
            /* a layer whose instruction does more MACs than the model (a group
             * conv run dense): its share for this row strip or channel block */
            if (l && l->macs >= 0 && in.opcode != ENPU_OPC_DMA) {
                int64_t whole = enpu_instr_macs(&l->ins), part = enpu_instr_macs(&in);
                p->layers[p->n_instr - 1].macs = whole > 0 ? l->macs * part / whole : 0;
            }
            /* every instruction names the tensor it computes; the item's last
             * one, where that tensor can be checked */
            int t = it->kind == CC_IT_CHAIN && l ? l->out : -1;
            int io = -1;
            if (j == it->n - 1 && it->tensor >= 0) {
                t = it->tensor;
                if (it->tmem >= 0) {
                    io = io_desc(&em, t, it->tout ? ENPU_IO_OUTPUT : ENPU_IO_PROBE, it->tmem == ENPU_MEM_DRAM);
                    if (io < 0) {
                        rc = io;
                        goto out;
                    }
                }
            }
            if (t >= 0 && (rc = enpu_program_set_layer_output(p, p->n_instr - 1, c->g->tensors[t].name, io,
                                                              c->err)))
                goto out;
        }
    }
    for (int k = 0; k < c->nit; k++) {
        int ii = c->sorder[k];
        const cc_item *it = &c->it[ii];
        if (it->group == ii) continue;
        for (int j = 0; j < it->n; j++)
            if ((rc = enpu_program_set_layer_group(p, first[ii] + j, first[it->group], c->err))) goto out;
    }
    if (wlen && (rc = enpu_program_set_image(p, ENPU_SEC_WEIGHTS, wimg, wlen, c->err))) goto out;
    if (slen && (rc = enpu_program_set_image(p, ENPU_SEC_SKIP_INIT, simg, slen, c->err))) goto out;
    if (c->dram_img_len) {
        /* the image from DRAM word 0: zeros where the instructions go */
        size_t off = (size_t)em.dram_base * (size_t)enpu_arch_word_bytes(a);
        uint8_t *img = calloc(off + c->dram_img_len, 1);
        if (!img) {
            rc = enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
            goto out;
        }
        memcpy(img + off, c->dram_img, c->dram_img_len);
        rc = enpu_program_set_image(p, ENPU_SEC_DRAM_INIT, img, off + c->dram_img_len, c->err);
        free(img);
        if (rc) goto out;
    }
    int64_t need = (em.dram_base + c->dram_words) * enpu_arch_word_bytes(a);
    if (need > a->dram_bytes && a->dram_bytes > 0) {
        rc = enpu_fail(c->err, ENPU_E_NOFIT,
                       "DRAM: the program needs %" PRId64 " bytes of DRAM (instructions, weights, "
                       "inputs, outputs and the tensors kept there); arch '%s' has %" PRId64
                       "; use dram_bytes >= %" PRId64,
                       need, a->name, a->dram_bytes, need);
        goto out;
    }
    for (int k = 0; k < c->norder; k++) {
        const cc_layer *l = &c->L[c->order[k]];
        if (!l->table) continue;
        int64_t at = tab && tab[c->order[k]] >= 0 ? tab[c->order[k]] : l->ins.table_addr;
        enpu_table_desc td = {(char *)enpu_op_name(c->g->nodes[l->node].op), (uint32_t)at,
                              (uint32_t)c->a->act_segments, (float)l->table->max_err_lsb};
        if ((rc = enpu_program_add_table(p, &td, c->err)) < 0) goto out;
        rc = 0;
    }
out:
    free(em.io_of);
    free(first);
    free(tab);
    return rc < 0 ? rc : (rc ? c->err->code : 0);
}
