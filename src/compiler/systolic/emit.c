/* Emission for the systolic engine: one instruction per layer in program
 * order (sya_* for the array, sync for a host op), END; the weight image;
 * IO descriptors for the graph's inputs and outputs, the host ops' tensors
 * and a probe per layer output, so that every instruction names the tensor
 * it computes and where it lies (the golden check reads it back). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/systolic/sya_cc.h"

typedef struct emitter {
    sc *c;
    enpu_program *p;
    int *io_of;
} emitter;

/* The descriptor of tensor t as stored (reused when it exists): NHWC for a
 * natural view of rank >= 3, else its elements in row-major order in rows of
 * the storage's channels; host memory for a float tensor. */
static int io_desc(emitter *em, int t, enpu_io_dir dir) {
    sc *c = em->c;
    if (em->io_of[t] >= 0) return em->io_of[t];
    const enpu_tensor *tt = &c->g->tensors[t];
    const sc_view *v = &c->tv[t];
    enpu_io_desc d;
    memset(&d, 0, sizeof d);
    d.name = tt->name;
    d.dir = dir;
    d.dtype = tt->dtype;
    d.rank = tt->rank;
    d.layout = ENPU_LAYOUT_ANY;
    for (int k = 0; k < tt->rank; k++) d.dims[k] = tt->dims[k];
    if (tt->dtype == ENPU_DT_INT8 && tt->quant)
        d.scale = tt->quant->scale[0], d.zero_point = tt->quant->zero_point[0];
    if (v->store < 0 || tt->dtype != ENPU_DT_INT8) {
        d.mem = ENPU_MEM_HOST;
        if (tt->dtype == ENPU_DT_INT8 && !(d.scale > 0)) d.scale = 1;
    } else {
        const sc_store *st = &c->S[v->store];
        d.mem = ENPU_MEM_MAIN;
        d.addr = (uint32_t)st->addr;
        if (!tt->quant) d.scale = 1;
        if (!v->pos && tt->rank >= 3) {
            d.layout = ENPU_LAYOUT_NHWC;
            d.dims[0] = tt->dims[0];
            for (int k = 2; k < tt->rank; k++) d.dims[k - 1] = tt->dims[k];
            d.dims[tt->rank - 1] = tt->dims[1];
        } else if (enpu_io_row(&d) != st->c) {
            d.row = st->c;
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
    return io_desc(em, t, out && (em->c->g->tensors[t].flags & ENPU_T_OUTPUT) ? ENPU_IO_OUTPUT : ENPU_IO_HOST);
}

static int emit_host(emitter *em, const sc_layer *l) {
    sc *c = em->c;
    const enpu_node *n = &c->g->nodes[l->node];
    int hi = cc_add_hostop(em->p, c->g, n, host_operand, em, c->err);
    if (hi < 0) return hi;
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_SYNC;
    in.host_op = hi;
    const char *src = n->name;
    int rc = enpu_program_add_instr(em->p, &in, n->name, 1, &src, c->err);
    if (rc) return rc;
    em->p->layers[em->p->n_instr - 1].macs = l->macs;
    return enpu_program_set_layer_output(em->p, em->p->n_instr - 1, l->out >= 0 ? c->g->tensors[l->out].name : "",
                                         l->out >= 0 ? em->io_of[l->out] : -1, c->err);
}

int sc_emit(sc *c, enpu_program *p) {
    emitter em = {c, p, malloc((size_t)(c->g->n_tensors > 0 ? c->g->n_tensors : 1) * sizeof(int))};
    if (!em.io_of) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int t = 0; t < c->g->n_tensors; t++) em.io_of[t] = -1;
    int rc = 0;
    for (int k = 0; k < c->g->n_inputs && !rc; k++) {
        int t = c->g->inputs[k];
        if (c->tv[t].store < 0) continue; /* unused */
        if (io_desc(&em, t, ENPU_IO_INPUT) < 0) rc = c->err->code;
    }
    for (int k = 0; k < c->g->n_outputs && !rc; k++)
        if (io_desc(&em, c->g->outputs[k], ENPU_IO_OUTPUT) < 0) rc = c->err->code;
    for (int i = 0; i < c->nl && !rc; i++) {
        const sc_layer *l = &c->L[i];
        if (l->kind == SC_HOST) {
            rc = emit_host(&em, l);
            continue;
        }
        const enpu_node *n = &c->g->nodes[l->node];
        const char *src = n->name;
        if ((rc = enpu_program_add_instr(p, &l->ins, n->name, 1, &src, c->err))) break;
        p->layers[p->n_instr - 1].macs = l->macs;
        int io = io_desc(&em, l->out, ENPU_IO_PROBE);
        if (io < 0) rc = io;
        else rc = enpu_program_set_layer_output(p, p->n_instr - 1, c->g->tensors[l->out].name, io, c->err);
    }
    if (!rc) {
        enpu_instr end;
        memset(&end, 0, sizeof end);
        end.opcode = ENPU_OPC_END;
        rc = enpu_program_add_instr(p, &end, "end", 0, NULL, c->err);
    }
    if (!rc && c->wlen) rc = enpu_program_set_image(p, ENPU_SEC_WEIGHTS, c->wimg, c->wlen, c->err);
    free(em.io_of);
    return rc < 0 ? c->err->code : rc;
}
