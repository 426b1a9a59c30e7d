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
    int *io_of;   /* per graph tensor: its IO descriptor, -1 */
} emitter;

/* Descriptor of tensor t as stored (main DTCM), or in host memory when it
 * has no storage (a float host-op output).  Reuses an existing one.  The
 * dims are always t's own shape, so the host (a host op, the user's inputs
 * and outputs) sees the graph's tensors whatever storage they are views of. */
static int io_desc(emitter *em, int t, enpu_io_dir dir) {
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
        d.mem = ENPU_MEM_MAIN;
        d.addr = (uint32_t)st->main_addr;
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

static int emit_host(emitter *em, cc_layer *l) {
    cc *c = em->c;
    const enpu_node *n = &c->g->nodes[l->node];
    enpu_hostop h;
    memset(&h, 0, sizeof h);
    h.kind = (char *)enpu_op_name(n->op);
    h.name = n->name;
    for (int k = 0; k < n->n_in && h.n_in + h.n_out < ENPU_HOSTOP_MAX_IO; k++) {
        int t = n->in[k];
        if (t < 0 || (c->g->tensors[t].flags & ENPU_T_CONST)) continue;
        int io = io_desc(em, t, ENPU_IO_HOST);
        if (io < 0) return io;
        h.io[h.n_in++] = io;
    }
    for (int k = 0; k < n->n_out && h.n_in + h.n_out < ENPU_HOSTOP_MAX_IO; k++) {
        int t = n->out[k];
        int io = io_desc(em, t, (c->g->tensors[t].flags & ENPU_T_OUTPUT) ? ENPU_IO_OUTPUT : ENPU_IO_HOST);
        if (io < 0) return io;
        h.io[h.n_in + h.n_out++] = io;
    }
    switch (n->op) {
    case ENPU_OP_SOFTMAX:
        h.iparam[0] = n->attr.shape.axis;
        h.iparam[1] = n->attr.shape.softmax_legacy;
        break;
    case ENPU_OP_FLATTEN:
    case ENPU_OP_CONCAT: h.iparam[0] = n->attr.shape.axis; break;
    case ENPU_OP_TRANSPOSE:
        for (int k = 0; k < n->attr.shape.n_axes && k < ENPU_HOSTOP_IPARAMS; k++)
            h.iparam[k] = n->attr.shape.axes[k];
        break;
    case ENPU_OP_LEAKY_RELU:
    case ENPU_OP_HARD_SIGMOID:
    case ENPU_OP_CLIP:
        h.fparam[0] = n->attr.act.alpha, h.fparam[1] = n->attr.act.beta;
        h.fparam[2] = n->attr.act.min, h.fparam[3] = n->attr.act.max;
        for (int k = 0; k < 4; k++)
            if (!(h.fparam[k] > -3e38f && h.fparam[k] < 3e38f)) h.fparam[k] = 0;
        break;
    default: break;
    }
    int hi = enpu_program_add_hostop(em->p, &h, c->err);
    if (hi < 0) return hi;
    l->hostop = hi;
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_SYNC;
    in.host_op = hi;
    const char *src = n->name;
    int rc = enpu_program_add_instr(em->p, &in, l->name, 1, &src, c->err);
    if (rc) return rc;
    em->p->layers[em->p->n_instr - 1].macs = l->macs;
    return enpu_program_set_layer_output(em->p, em->p->n_instr - 1,
                                         l->out >= 0 ? c->g->tensors[l->out].name : "",
                                         l->out >= 0 ? em->io_of[l->out] : -1, c->err);
}

/* Chain-head registers of the note's fuse loop. */
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

int cc_emit(cc *c, enpu_program *p, const uint8_t *wimg, size_t wlen, const uint8_t *simg,
            size_t slen) {
    emitter em = {c, p, NULL};
    em.io_of = malloc((size_t)(c->g->n_tensors > 0 ? c->g->n_tensors : 1) * sizeof *em.io_of);
    if (!em.io_of) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int t = 0; t < c->g->n_tensors; t++) em.io_of[t] = -1;
    int rc = 0;
    /* graph inputs and outputs first */
    for (int k = 0; k < c->g->n_inputs && !rc; k++) {
        int t = c->g->inputs[k];
        if (c->tv[t].store < 0) continue; /* unused input */
        rc = io_desc(&em, t, ENPU_IO_INPUT) < 0;
    }
    for (int k = 0; k < c->g->n_outputs && !rc; k++) rc = io_desc(&em, c->g->outputs[k], ENPU_IO_OUTPUT) < 0;
    if (rc) goto out;
    for (int k = 0; k < c->norder; k++) {
        cc_layer *l = &c->L[c->order[k]];
        if (l->opcode == CC_HOST) {
            if ((rc = emit_host(&em, l))) goto out;
            continue;
        }
        enpu_instr *in = &l->ins;
        bool member = l->head != c->order[k];
        if (!member && l->in_store >= 0) {
            const cc_store *st = &c->S[l->in_store];
            in->ifmap_addr = st->main_addr;
        } else {
            in->ifmap_addr = 0;
        }
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
        const char *src = l->src;
        if ((rc = enpu_program_add_instr(p, in, l->name, src[0] ? 1 : 0, &src, c->err))) goto out;
        if (l->macs >= 0) p->layers[p->n_instr - 1].macs = l->macs;
        int io = -1;
        /* a part of a channel concat is interleaved with the other parts: no
         * descriptor can describe it alone (the concat's output is checked
         * through its readers) */
        bool part = l->out_store >= 0 && c->S[l->out_store].ofmap_wpp > 0;
        if (l->out >= 0 && l->out_store >= 0 && c->tv[l->out].store >= 0 && !part) {
            io = io_desc(&em, l->out, ENPU_IO_PROBE);
            if (io < 0) {
                rc = io;
                goto out;
            }
        }
        if ((rc = enpu_program_set_layer_output(p, p->n_instr - 1,
                                                l->out >= 0 ? c->g->tensors[l->out].name : "", io, c->err)))
            goto out;
    }
    {
        enpu_instr end;
        memset(&end, 0, sizeof end);
        end.opcode = ENPU_OPC_END;
        if ((rc = enpu_program_add_instr(p, &end, "end", 0, NULL, c->err))) goto out;
    }
    if (wlen && (rc = enpu_program_set_image(p, ENPU_SEC_WEIGHTS, wimg, wlen, c->err))) goto out;
    if (slen && (rc = enpu_program_set_image(p, ENPU_SEC_SKIP_INIT, simg, slen, c->err))) goto out;
    for (int k = 0; k < c->norder; k++) {
        const cc_layer *l = &c->L[c->order[k]];
        if (!l->table) continue;
        enpu_table_desc td = {(char *)enpu_op_name(c->g->nodes[l->node].op), (uint32_t)l->ins.table_addr,
                              (uint32_t)c->a->act_segments, (float)l->table->max_err_lsb};
        if ((rc = enpu_program_add_table(p, &td, c->err)) < 0) goto out;
        rc = 0;
    }
out:
    free(em.io_of);
    return rc < 0 ? rc : (rc ? c->err->code : 0);
}
