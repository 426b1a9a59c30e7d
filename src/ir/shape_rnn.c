/* Shapes of the recurrent ops (LSTM, GRU, RNN; ONNX opsets 7-14, layout
 * from 14).  Inputs: X [T, B, I] (layout 1: [B, T, I]); W [D, G*H, I]; R
 * [D, G*H, H]; B [D, 2*G*H]; sequence_lens [B]; initial_h (LSTM also
 * initial_c) [D, B, H] (layout 1: [B, D, H]); LSTM's P [D, 3*H]; G the
 * gates of the op, D 2 when bidirectional. */
#include "ir/shape_rnn.h"

#include <stdio.h>
#include <string.h>

int enpu_rnn_gates(enpu_op op) { return op == ENPU_OP_LSTM ? 4 : op == ENPU_OP_GRU ? 3 : 1; }

/* Is input i of n present with exactly dims (rank r)? */
static int want(const enpu_graph *g, const enpu_node *n, int i, const char *role, int r,
                const int64_t *d, bool required, enpu_err *err) {
    const enpu_tensor *t = enpu_node_input(g, n, i);
    if (!t) {
        if (!required) return 0;
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): input '%s' is missing", n->name,
                         enpu_op_name(n->op), role);
    }
    if (t->rank < 0)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): shape of input '%s' ('%s') is unknown",
                         n->name, enpu_op_name(n->op), role, t->name);
    bool ok = t->rank == r;
    for (int k = 0; ok && k < r; k++) ok = t->dims[k] == d[k];
    if (ok) return 0;
    char have[128], exp[128];
    enpu_shape_str(t, have, sizeof have);
    enpu_tensor tmp = {.rank = r};
    memcpy(tmp.dims, d, (size_t)r * sizeof *d);
    enpu_shape_str(&tmp, exp, sizeof exp);
    return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): input '%s' ('%s') has shape %s, expected %s",
                     n->name, enpu_op_name(n->op), role, t->name, have, exp);
}

static int set(enpu_graph *g, enpu_node *n, int i, int r, const int64_t *d, enpu_dtype dt, enpu_err *err) {
    enpu_tensor *t = enpu_node_output(g, n, i);
    if (!t) return 0;
    int rc = enpu_shape_numel(r, d, NULL, t->name, err);
    if (rc) return enpu_err_prefix(err, "node '%s' (%s)", n->name, enpu_op_name(n->op));
    t->rank = r;
    memset(t->dims, 0, sizeof t->dims);
    memcpy(t->dims, d, (size_t)r * sizeof *d);
    if (t->dtype == ENPU_DT_UNDEFINED) t->dtype = dt;
    return 0;
}

int enpu_rnn_shapes(const enpu_graph *g, const enpu_node *n, int64_t y[4], int64_t st[3],
                    enpu_err *err) {
    const enpu_rnn_attr *a = &n->attr.rnn;
    const char *op = enpu_op_name(n->op);
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    if (!x || x->rank < 0)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): shape of input 'X' is unknown", n->name, op);
    if (x->rank != 3)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): input 'X' ('%s') has rank %d, expected 3",
                         n->name, op, x->name, x->rank);
    if (a->hidden < 1 || a->hidden > ENPU_RNN_MAX_HIDDEN)
        return enpu_fail(err, a->hidden < 1 ? ENPU_E_INVALID : ENPU_E_LIMIT,
                         "node '%s' (%s): hidden_size %d is outside 1..%d", n->name, op, a->hidden,
                         ENPU_RNN_MAX_HIDDEN);
    if (a->layout != 0 && a->layout != 1)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): layout %d (0 or 1)", n->name, op, a->layout);
    if (a->direction < ENPU_RNN_FORWARD || a->direction > ENPU_RNN_BIDIRECTIONAL)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): direction %d", n->name, op, a->direction);
    int64_t T = a->layout ? x->dims[1] : x->dims[0], B = a->layout ? x->dims[0] : x->dims[1];
    int64_t I = x->dims[2], H = a->hidden, D = a->direction == ENPU_RNN_BIDIRECTIONAL ? 2 : 1;
    int64_t G = enpu_rnn_gates(n->op);
    int rc;
    if ((rc = want(g, n, 1, "W", 3, (int64_t[]){D, G * H, I}, true, err))) return rc;
    if ((rc = want(g, n, 2, "R", 3, (int64_t[]){D, G * H, H}, true, err))) return rc;
    if ((rc = want(g, n, 3, "B", 2, (int64_t[]){D, 2 * G * H}, false, err))) return rc;
    if ((rc = want(g, n, 4, "sequence_lens", 1, (int64_t[]){B}, false, err))) return rc;
    st[0] = D, st[1] = B, st[2] = H;
    if (a->layout) st[0] = B, st[1] = D;
    if ((rc = want(g, n, 5, "initial_h", 3, st, false, err))) return rc;
    if (n->op == ENPU_OP_LSTM) {
        if ((rc = want(g, n, 6, "initial_c", 3, st, false, err))) return rc;
        if ((rc = want(g, n, 7, "P", 2, (int64_t[]){D, 3 * H}, false, err))) return rc;
    } else if (n->n_in > 6) {
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): %d inputs, at most 6", n->name, op, n->n_in);
    }
    if (n->n_out > (n->op == ENPU_OP_LSTM ? 3 : 2))
        return enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): %d outputs, at most %d", n->name, op,
                         n->n_out, n->op == ENPU_OP_LSTM ? 3 : 2);
    y[0] = T, y[1] = D, y[2] = B, y[3] = H;
    if (a->layout) y[0] = B, y[1] = T, y[2] = D;
    return 0;
}

int enpu_infer_rnn(enpu_graph *g, enpu_node *n, enpu_err *err) {
    int64_t y[4], st[3];
    int rc = enpu_rnn_shapes(g, n, y, st, err);
    if (rc) return rc;
    enpu_dtype dt = enpu_node_input(g, n, 0)->dtype;
    if ((rc = set(g, n, 0, 4, y, dt, err))) return rc;
    for (int k = 1; k < n->n_out; k++)
        if ((rc = set(g, n, k, 3, st, dt, err))) return rc;
    return 0;
}

int64_t enpu_rnn_macs(const enpu_graph *g, const enpu_node *n) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    if (!x || x->rank != 3) return 0;
    int64_t H = n->attr.rnn.hidden, G = enpu_rnn_gates(n->op);
    int64_t D = n->attr.rnn.direction == ENPU_RNN_BIDIRECTIONAL ? 2 : 1;
    int64_t steps = x->dims[0] * x->dims[1]; /* T * B */
    return D * steps * G * H * (x->dims[2] + H);
}

void enpu_rnn_act_default(int f, float *alpha, float *beta) {
    *alpha = *beta = 0.0f;
    switch (f) {
    case ENPU_RNN_AFFINE: *alpha = 1.0f; break;
    case ENPU_RNN_LEAKY_RELU: *alpha = 0.01f; break;
    case ENPU_RNN_THRESHOLDED_RELU: *alpha = 1.0f; break;
    case ENPU_RNN_SCALED_TANH: *alpha = *beta = 1.0f; break;
    case ENPU_RNN_HARD_SIGMOID: *alpha = 0.2f, *beta = 0.5f; break;
    case ENPU_RNN_ELU: *alpha = 1.0f; break;
    default: break;
    }
}

void enpu_rnn_attr_default(enpu_op op, enpu_rnn_attr *a) {
    memset(a, 0, sizeof *a);
    static const int lstm[3] = {ENPU_RNN_SIGMOID, ENPU_RNN_TANH, ENPU_RNN_TANH};
    int nf = op == ENPU_OP_LSTM ? 3 : op == ENPU_OP_GRU ? 2 : 1;
    for (int k = 0; k < 6; k++) {
        int j = k % nf;
        a->act[k] = op == ENPU_OP_RNN ? ENPU_RNN_TANH : lstm[j];
        enpu_rnn_act_default(a->act[k], &a->alpha[k], &a->beta[k]);
    }
}
