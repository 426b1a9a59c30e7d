/* Step 5 of quantization (quantize.c): the int8 graph built node by node:
 * its tensors with their parameters, binaries (add/mul multipliers),
 * table ops (PWL tables), rescales and the plain kinds; conv-kind nodes in
 * qbuild_conv.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "quant/passes.h"
#include "quant/qinternal.h"
#include "quant/qctx.h"

/* --- 5. building the int8 graph ---------------------------------------------------- */

static int set_note(qctx *c, int qnode, char *note) {
    if (qnode >= c->cap_notes) {
        int cap = c->cap_notes ? c->cap_notes * 2 : 64;
        while (cap <= qnode) cap *= 2;
        char **nn = realloc(c->notes, (size_t)cap * sizeof *nn);
        if (!nn) {
            free(note);
            return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        }
        memset(nn + c->cap_notes, 0, (size_t)(cap - c->cap_notes) * sizeof *nn);
        c->notes = nn;
        c->cap_notes = cap;
    }
    free(c->notes[qnode]);
    c->notes[qnode] = note;
    return 0;
}

int qc_add_qtensor_named(qctx *c, const char *base, enpu_dtype dt, int rank,
                             const int64_t *dims) {
    char *name = enpu_qp_unique_name(c->qg, base);
    if (!name) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    int t = enpu_graph_add_tensor(c->qg, name, dt, rank, dims, c->err);
    free(name);
    return t;
}

/* The int8-graph tensor of float-graph tensor t (created on first use). */
int qc_qtensor(qctx *c, int t) {
    if (c->qt[t] >= 0) return c->qt[t];
    const enpu_tensor *ft = &c->fg->tensors[t];
    int rc;
    if (ft->flags & ENPU_T_CONST) {
        int q = qc_add_qtensor_named(c, ft->name, ft->dtype, ft->rank, ft->dims);
        if (q < 0) return q;
        size_t nb = enpu_tensor_nbytes(ft);
        void *data = malloc(nb ? nb : 1);
        if (!data) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        if (nb) memcpy(data, ft->data, nb);
        enpu_tensor_set_data(&c->qg->tensors[q], data);
        c->qg->tensors[q].layout = ft->layout;
        return c->qt[t] = q;
    }
    bool fl = c->is_float[t];
    if (!fl && !c->has[t])
        return enpu_fail(c->err, ENPU_E_INVALID, "internal: tensor '%s' has no parameters",
                         ft->name);
    enpu_dtype qdt = c->o->bits == 16 ? ENPU_DT_INT16 : ENPU_DT_INT8;
    /* a host result left unquantized keeps an integer dtype (indices):
     * carried as float32 values, rounded to it by enpu_int_value */
    enpu_dtype fdt = ft->dtype == ENPU_DT_FLOAT32 || ft->dtype == ENPU_DT_FLOAT64 ? ENPU_DT_FLOAT32 : ft->dtype;
    int q = enpu_graph_add_tensor(c->qg, ft->name, fl ? fdt : qdt, ft->rank, ft->dims, c->err);
    if (q < 0) return q;
    c->qg->tensors[q].layout = ft->layout;
    if (!fl && (rc = enpu_tensor_set_quant(&c->qg->tensors[q], -1, 1, &c->s[t], &c->z[t], c->err)))
        return rc;
    return c->qt[t] = q;
}

/* Adds a node to qg owning q (freed on failure); returns its index. */
static int add_qnode_n(qctx *c, const char *name, enpu_op op, int n_in, const int *in, int n_out,
                       const int *out, const enpu_attr *attr, enpu_qnode *q, char *note) {
    int k = enpu_graph_add_node(c->qg, name, op, n_in, in, n_out, out, c->err);
    if (k < 0) {
        enpu_qnode_free(q);
        free(note);
        return k;
    }
    if (attr) c->qg->nodes[k].attr = *attr;
    c->qg->nodes[k].q = q;
    c->qg->nodes[k].host = q->kind == ENPU_Q_HOST;
    int rc = set_note(c, k, note);
    return rc ? rc : k;
}

int qc_add_qnode(qctx *c, const char *name, enpu_op op, int n_in, const int *in, int out,
                     const enpu_attr *attr, enpu_qnode *q, char *note) {
    return add_qnode_n(c, name, op, n_in, in, 1, &out, attr, q, note);
}

static int binary_operand(qctx *c, int t, float *s, int32_t *z) {
    const enpu_graph *g = c->fg;
    if (qc_is_act(g, t)) {
        *s = c->s[t];
        *z = c->z[t];
        return qc_qtensor(c, t);
    }
    const enpu_tensor *ft = &g->tensors[t];
    int64_t n = enpu_tensor_numel(ft);
    const float *v = ft->data;
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "constant '%s' holds a non-finite value",
                             ft->name);
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    int rc = enpu_choose_qparams(lo, hi, -128, 127, s, z, c->err);
    if (rc) return rc;
    char base[ENPU_MAX_NAME + 8];
    snprintf(base, sizeof base, "%s_q", ft->name);
    int q = qc_add_qtensor_named(c, base, ENPU_DT_INT8, ft->rank, ft->dims);
    if (q < 0) return q;
    int8_t *d = malloc((size_t)(n ? n : 1));
    if (!d) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) d[i] = (int8_t)enpu_quantize(v[i], *s, *z, -128, 127);
    enpu_tensor_set_data(&c->qg->tensors[q], d);
    rc = enpu_tensor_set_quant(&c->qg->tensors[q], -1, 1, s, z, c->err);
    return rc ? rc : q;
}

static int build_binary_node(qctx *c, int i) {
    const enpu_node *n = &c->fg->nodes[i];
    const plan *p = &c->pl[i];
    float s[2];
    int32_t z[2];
    int ins[2], rc;
    for (int k = 0; k < 2; k++)
        if ((ins[k] = binary_operand(c, n->in[k], &s[k], &z[k])) < 0) return ins[k];
    int y = p->out;
    float so = c->s[y];
    int32_t zo = c->z[y];
    enpu_qnode *q = qc_qnode_new(p->kind);
    if (!q) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    q->n_ch = 1;
    q->M = malloc(sizeof(uint32_t));
    q->S = malloc(1);
    q->fused = qc_xstrdup(p->names);
    if (!q->M || !q->S || !q->fused) {
        enpu_qnode_free(q);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    q->zp_in[0] = z[0];
    q->zp_in[1] = z[1];
    q->zp_out = zo;
    qc_clamp_of(p->clip_lo, p->clip_hi, so, zo, &q->lo, &q->hi);
    char what[ENPU_MAX_NAME + 16];
    snprintf(what, sizeof what, "layer '%s'", n->name);
    const int acc_bits = c->o->acc_bits;
    if (p->kind == ENPU_Q_ADD) {
        /* The largest shift whose multipliers fit mult_bits and whose
         * accumulator fits acc_bits: the most precise A[i]/2^S = s_i/s_out. */
        double r0 = (double)s[0] / so, r1 = (double)s[1] / so;
        double lim = ldexp(1.0, c->o->mult_bits);
        int found = -1;
        for (int S = ENPU_SHIFT_MAX; S >= 0 && found < 0; S--) {
            double a0 = floor(ldexp(r0, S) + 0.5), a1 = floor(ldexp(r1, S) + 0.5);
            if (a0 >= lim || a1 >= lim) continue;
            int64_t A0 = (int64_t)a0, A1 = (int64_t)a1;
            int64_t lo = A0 * (-128 - z[0]) + A1 * (-128 - z[1]);
            int64_t hi = A0 * (127 - z[0]) + A1 * (127 - z[1]);
            if (!enpu_acc_fits(lo, acc_bits) || !enpu_acc_fits(hi, acc_bits)) continue;
            if (A0 == 0 && A1 == 0) break;
            q->A[0] = (uint32_t)A0;
            q->A[1] = (uint32_t)A1;
            found = S;
        }
        if (found < 0) {
            enpu_qnode_free(q);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "%s: no add multipliers fit %d bits with a %d-bit accumulator "
                             "(scales %g, %g -> %g)",
                             what, c->o->mult_bits, acc_bits, (double)s[0], (double)s[1],
                             (double)so);
        }
        q->M[0] = 1;
        q->S[0] = (int8_t)found;
    } else {
        uint32_t M;
        int S;
        rc = enpu_quantize_multiplier((double)s[0] * s[1] / so, c->o->mult_bits, &M, &S, NULL,
                                      c->err);
        if (rc) {
            enpu_qnode_free(q);
            return enpu_err_prefix(c->err, "%s", what);
        }
        q->M[0] = M;
        q->S[0] = (int8_t)S;
    }
    int out = qc_qtensor(c, y);
    if (out < 0) {
        enpu_qnode_free(q);
        return out;
    }
    rc = qc_add_qnode(c, n->name, n->op, 2, ins, out, &n->attr, q, NULL);
    if (rc < 0) return rc;
    int64_t lo, hi;
    enpu_q_acc_range(c->qg, &c->qg->nodes[rc], &lo, &hi);
    return enpu_acc_check(what, lo, hi, acc_bits, c->err);
}

static int build_table_node(qctx *c, int i) {
    const enpu_node *n = &c->fg->nodes[i];
    const plan *p = &c->pl[i];
    int x = n->in[0], y = p->out, rc;
    enpu_pwl_params par;
    const void *ctx;
    /* Pow: the table is x^e of its constant exponent, kept in the
     * attributes (the node keeps the constant as input 1) */
    enpu_node tn = *n;
    const bool pow_op = n->op == ENPU_OP_POW;
    if (pow_op) {
        memset(&tn.attr, 0, sizeof tn.attr);
        tn.attr.act.alpha = ((const float *)c->fg->tensors[n->in[1]].data)[0];
    }
    enpu_pwl_fn fn = enpu_q_table_fn(&tn, &par, &ctx);
    enpu_qnode *q = qc_qnode_new(ENPU_Q_TABLE);
    if (!q || !(q->table = calloc(1, sizeof *q->table)) || !(q->fused = qc_xstrdup(p->names))) {
        enpu_qnode_free(q);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    q->zp_in[0] = c->z[x];
    q->zp_out = c->z[y];
    char what[ENPU_MAX_NAME + 16];
    snprintf(what, sizeof what, "layer '%s'", n->name);
    /* EasyNPU's table unit has the windowed segment index (docs/numerics.md
     * §8.4): with 16 segments it keeps tanh/sigmoid/SiLU within 1 LSB where
     * uniform segments lose up to 5. */
    enpu_pwl_opts po = {.segments = c->o->act_segments, .mult_bits = c->o->mult_bits,
                        .window = 1, .acc_bits = c->o->acc_bits};
    rc = enpu_pwl_fit_opts(fn, ctx, c->s[x], c->z[x], c->s[y], c->z[y], &po, q->table, c->err);
    if (!rc) rc = enpu_pwl_check_acc(what, q->table, c->o->acc_bits, c->err);
    if (rc) {
        enpu_qnode_free(q);
        return rc == ENPU_E_NOFIT ? rc : enpu_err_prefix(c->err, "%s", what);
    }
    int ins[2] = {qc_qtensor(c, x), -1};
    if (pow_op && ins[0] >= 0) ins[1] = qc_qtensor(c, n->in[1]);
    int out = ins[0] < 0 ? ins[0] : ins[1] < -1 ? ins[1] : qc_qtensor(c, y);
    if (ins[0] < 0 || out < 0) {
        enpu_qnode_free(q);
        return ins[0] < 0 ? ins[0] : out;
    }
    rc = qc_add_qnode(c, n->name, n->op, pow_op ? 2 : 1, ins, out, &tn.attr, q, NULL);
    return rc < 0 ? rc : 0;
}

/* A RESCALE node bringing Concat input t to the Concat's parameters. */
static int build_rescale(qctx *c, int concat, int k, int t, int *out_t) {
    const enpu_node *n = &c->fg->nodes[concat];
    int y = c->pl[concat].out;
    convspec cs = {.div = 1.0, .s_in = c->s[t], .s_out = c->s[y], .z_in = c->z[t],
                   .z_out = c->z[y], .clip_lo = -INFINITY, .clip_hi = INFINITY, .k = 1};
    const enpu_tensor *ft = &c->fg->tensors[t];
    cs.co = ft->rank >= 2 ? ft->dims[1] : 1;
    enpu_qnode *q;
    float *sw;
    char *note;
    int rc = qc_build_conv_q(c, n->name, &cs, &q, &sw, &note);
    if (rc) return rc;
    free(sw);
    free(note);
    q->origin = ENPU_QO_RESCALE;
    char *nname = qc_xprintf("%s/rescale_%d", n->name, k);
    char *tname = qc_xprintf("%s_rescaled", ft->name);
    int in = qc_qtensor(c, t), o = -1;
    if (nname && tname && in >= 0) {
        o = qc_add_qtensor_named(c, tname, ENPU_DT_INT8, ft->rank, ft->dims);
        if (o >= 0) rc = enpu_tensor_set_quant(&c->qg->tensors[o], -1, 1, &c->s[y], &c->z[y], c->err);
        else rc = o;
    } else {
        rc = in < 0 ? in : enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    if (!rc) q->fused = qc_xstrdup(nname);
    if (rc) {
        enpu_qnode_free(q);
        free(nname);
        free(tname);
        return rc;
    }
    rc = qc_add_qnode(c, nname, ENPU_OP_IDENTITY, 1, &in, o, NULL, q,
                   qc_xprintf("inserted: Concat input '%s' has other parameters than the output",
                           ft->name));
    free(nname);
    free(tname);
    *out_t = o;
    return rc < 0 ? rc : 0;
}

static int build_plain_node(qctx *c, int i) {
    const enpu_node *n = &c->fg->nodes[i];
    const plan *p = &c->pl[i];
    int ins[64], rc = 0;
    if (n->n_in > 64)
        return enpu_fail(c->err, ENPU_E_LIMIT, "node '%s': more than 64 inputs", n->name);
    for (int k = 0; k < n->n_in && !rc; k++) {
        ins[k] = -1;
        if (n->in[k] < 0) continue;
        bool resc = false;
        for (int r = 0; r < c->n_rs; r++)
            if (c->rs[r].node == i && c->rs[r].input == k) resc = true;
        if (resc) rc = build_rescale(c, i, k, n->in[k], &ins[k]);
        else if ((ins[k] = qc_qtensor(c, n->in[k])) < 0) rc = ins[k];
    }
    if (rc) return rc;
    int out = qc_qtensor(c, p->out);
    if (out < 0) return out;
    enpu_qnode *q = qc_qnode_new(p->kind);
    if (!q || !(q->fused = qc_xstrdup(p->names))) {
        enpu_qnode_free(q);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    if (c->o->bits == 16) q->lo = -ENPU_I16_QMAX - 1, q->hi = ENPU_I16_QMAX;
    for (int k = 0, a = 0; k < n->n_in && a < 2; k++)
        if (ins[k] >= 0 && c->qg->tensors[ins[k]].dtype == ENPU_DT_INT8 &&
            c->qg->tensors[ins[k]].quant)
            q->zp_in[a++] = c->qg->tensors[ins[k]].quant->zero_point[0];
    if (c->qg->tensors[out].quant) q->zp_out = c->qg->tensors[out].quant->zero_point[0];
    /* a Relu/Clip folded into a MaxPool (classify) is its clamp */
    if (p->kind == ENPU_Q_MAXPOOL && c->qg->tensors[out].quant)
        qc_clamp_of(p->clip_lo, p->clip_hi, c->qg->tensors[out].quant->scale[0], q->zp_out, &q->lo,
                 &q->hi);
    char *note = p->note ? qc_xstrdup(p->note) : NULL;
    if (p->kind == ENPU_Q_HOST && p->note && !(q->why = qc_xstrdup(p->note))) {
        enpu_qnode_free(q);
        free(note);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    /* a host node writes every output of its float node */
    int outs[8] = {out}, n_out = 1;
    if (p->kind == ENPU_Q_HOST && n->n_out > 1 && n->n_out <= 8) {
        n_out = n->n_out;
        for (int k = 1; k < n_out; k++)
            if ((outs[k] = n->out[k] >= 0 ? qc_qtensor(c, n->out[k]) : -1) < -1) {
                enpu_qnode_free(q);
                free(note);
                return outs[k];
            }
    }
    rc = add_qnode_n(c, n->name, n->op, n->n_in, ins, n_out, outs, &n->attr, q, note);
    return rc < 0 ? rc : 0;
}

int qc_build_graph(qctx *c) {
    const enpu_graph *g = c->fg;
    int rc = 0;
    for (int i = 0; i < g->n_inputs && !rc; i++) {
        int q = qc_qtensor(c, g->inputs[i]);
        rc = q < 0 ? q : enpu_graph_add_input(c->qg, q, c->err);
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const plan *p = &c->pl[i];
        if (p->absorbed) continue;
        switch (p->kind) {
        case ENPU_Q_CONV: rc = qc_build_conv_node(c, i); break;
        case ENPU_Q_ADD:
        case ENPU_Q_MUL: rc = build_binary_node(c, i); break;
        case ENPU_Q_TABLE: rc = build_table_node(c, i); break;
        default: rc = build_plain_node(c, i); break;
        }
    }
    for (int i = 0; i < g->n_outputs && !rc; i++) {
        int t = g->outputs[i];
        if (c->qt[t] < 0 || (c->qg->tensors[c->qt[t]].producer < 0 &&
                             !(c->qg->tensors[c->qt[t]].flags & ENPU_T_INPUT)))
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "graph output '%s' is a constant; nothing to quantize", qc_fname(c, t));
        rc = enpu_graph_add_output(c->qg, c->qt[t], c->err);
    }
    return rc;
}
