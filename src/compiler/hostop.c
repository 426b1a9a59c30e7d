/* Host op records, one rule for every back end: which operands a host op
 * names, in which order, and where its constant operands live.  Each back
 * end says only where its own tensors are stored (the callback). */
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

/* The ENPU_IO_CONST descriptor of constant t (its bytes in HOST_INIT),
 * reused when an earlier host op named it. */
static int const_desc(enpu_program *p, const enpu_tensor *t, enpu_err *err) {
    for (int i = 0; i < p->n_io; i++)
        if (p->io[i].dir == ENPU_IO_CONST && strcmp(p->io[i].name, t->name) == 0) return i;
    size_t at;
    int rc = enpu_program_append_host_init(p, t->data, enpu_tensor_nbytes(t), t->name, &at, err);
    if (rc) return rc;
    enpu_io_desc d;
    memset(&d, 0, sizeof d);
    d.name = t->name;
    d.dir = ENPU_IO_CONST;
    d.dtype = t->dtype;
    d.layout = ENPU_LAYOUT_ANY;
    d.rank = t->rank;
    for (int k = 0; k < t->rank; k++) d.dims[k] = t->dims[k];
    d.mem = ENPU_MEM_HOST;
    d.addr = (uint32_t)at;
    return enpu_program_add_io(p, &d, err);
}

int cc_add_hostop(enpu_program *p, const enpu_graph *g, const enpu_node *n, cc_operand_fn desc,
                  void *ctx, enpu_err *err) {
    enpu_hostop h;
    memset(&h, 0, sizeof h);
    h.kind = (char *)enpu_op_name(n->op);
    h.name = n->name;
    if (n->n_in + n->n_out > ENPU_HOSTOP_MAX_IO)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "host op '%s': %d operands, more than %d", n->name,
                         n->n_in + n->n_out, ENPU_HOSTOP_MAX_IO);
    /* every input in its place: the host reads the operands in order (an
     * omitted optional one is -1, format 3.4; trailing ones are left out) */
    int n_in = n->n_in;
    while (n_in > 0 && n->in[n_in - 1] < 0) n_in--;
    for (int k = 0; k < n_in; k++) {
        int t = n->in[k];
        if (t < 0) {
            h.io[h.n_in++] = -1;
            continue;
        }
        int io = (g->tensors[t].flags & ENPU_T_CONST) ? const_desc(p, &g->tensors[t], err)
                                                       : desc(ctx, t, false);
        if (io < 0) return io;
        h.io[h.n_in++] = io;
    }
    for (int k = 0; k < n->n_out; k++) {
        if (n->out[k] < 0) {
            h.io[h.n_in + h.n_out++] = -1;
            continue;
        }
        int io = desc(ctx, n->out[k], true);
        if (io < 0) return io;
        h.io[h.n_in + h.n_out++] = io;
    }
    int rc = enpu_hostop_set_attrs(&h, n, err);
    return rc ? rc : enpu_program_add_hostop(p, &h, err);
}
