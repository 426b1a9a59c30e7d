/* The recurrent ops' attributes (LSTM, GRU, RNN, opsets 1-17): hidden_size
 * (required), direction, layout (opset 14), clip, input_forget (LSTM),
 * linear_before_reset (GRU), and the gate functions with their alpha and
 * beta, given per direction in the order the op applies them (LSTM f, g,
 * h; GRU f, g; RNN f).  Opset 1 LSTM/GRU/RNN's `output_sequence` only said
 * whether Y is computed: Y is always computed here. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "frontend/onnx_imp.h"

static const char *const act_names[ENPU_RNN_ACT_COUNT] = {
    "Sigmoid", "Tanh", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu",
    "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"};

/* Activation names are case-insensitive in ONNX's own reference. */
static int act_of(const char *s, size_t n) {
    for (int k = 0; k < ENPU_RNN_ACT_COUNT; k++)
        if (strlen(act_names[k]) == n && strncasecmp(act_names[k], s, n) == 0) return k;
    return -1;
}

int oi_rnn_attrs(const nctx *c, enpu_op op, enpu_attr *at) {
    enpu_rnn_attr *a = &at->rnn;
    enpu_rnn_attr_default(op, a);
    int64_t v;
    int rc;
    if ((rc = oi_a_int(c, "hidden_size", -1, -1, ENPU_RNN_MAX_HIDDEN, &v))) return rc;
    if (v < 1) return oi_nfail(c, ENPU_E_INVALID, "attribute 'hidden_size' is required (1..%d)", ENPU_RNN_MAX_HIDDEN);
    a->hidden = (int)v;
    char dir[32];
    if ((rc = oi_a_string(c, "direction", "forward", dir, sizeof dir))) return rc;
    if (strcmp(dir, "forward") == 0) a->direction = ENPU_RNN_FORWARD;
    else if (strcmp(dir, "reverse") == 0) a->direction = ENPU_RNN_REVERSE;
    else if (strcmp(dir, "bidirectional") == 0) a->direction = ENPU_RNN_BIDIRECTIONAL;
    else return oi_nfail(c, ENPU_E_INVALID, "attribute 'direction' is '%s' (forward, reverse or bidirectional)", dir);
    if ((rc = oi_a_int(c, "layout", 0, 0, 1, &v))) return rc;
    a->layout = (int)v;
    if ((rc = oi_a_float(c, "clip", 0.0f, &a->clip))) return rc;
    if (a->clip < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'clip' is %g, expected > 0", (double)a->clip);
    if (op == ENPU_OP_LSTM && (rc = oi_a_bool(c, "input_forget", &a->input_forget))) return rc;
    if (op == ENPU_OP_GRU && (rc = oi_a_bool(c, "linear_before_reset", &a->linear_before_reset))) return rc;
    int nf = op == ENPU_OP_LSTM ? 3 : op == ENPU_OP_GRU ? 2 : 1;
    int nd = a->direction == ENPU_RNN_BIDIRECTIONAL ? 2 : 1;
    const Onnx__AttributeProto *acts, *al, *be;
    if ((rc = oi_get_attr(c, "activations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS, &acts)) ||
        (rc = oi_get_attr(c, "activation_alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, &al)) ||
        (rc = oi_get_attr(c, "activation_beta", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, &be)))
        return rc;
    if (acts) {
        if (acts->n_strings != (size_t)(nf * nd))
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'activations' has %zu names, expected %d (%d per direction)",
                            acts->n_strings, nf * nd, nf);
        for (int k = 0; k < nf * nd; k++) {
            int f = act_of((const char *)acts->strings[k].data, acts->strings[k].len);
            if (f < 0)
                return oi_nfail(c, ENPU_E_UNSUPPORTED, "activation %d ('%.*s') is not one of ONNX's", k,
                                (int)(acts->strings[k].len > 64 ? 64 : acts->strings[k].len),
                                (const char *)acts->strings[k].data);
            a->act[k] = f;
            enpu_rnn_act_default(f, &a->alpha[k], &a->beta[k]);
        }
        /* one direction's functions serve both when only they are given */
        for (int k = nf * nd; k < 6; k++) {
            a->act[k] = a->act[k % nf];
            a->alpha[k] = a->alpha[k % nf], a->beta[k] = a->beta[k % nf];
        }
    }
    /* alpha and beta are consumed in the order of the functions, each by the
     * functions that take one (as onnxruntime reads them) */
    size_t ia = 0, ib = 0;
    for (int k = 0; k < nf * nd; k++) {
        int f = a->act[k];
        bool ta = f == ENPU_RNN_AFFINE || f == ENPU_RNN_LEAKY_RELU || f == ENPU_RNN_THRESHOLDED_RELU ||
                  f == ENPU_RNN_SCALED_TANH || f == ENPU_RNN_HARD_SIGMOID || f == ENPU_RNN_ELU;
        bool tb = f == ENPU_RNN_AFFINE || f == ENPU_RNN_SCALED_TANH || f == ENPU_RNN_HARD_SIGMOID;
        if (ta && al && ia < al->n_floats) a->alpha[k] = al->floats[ia++];
        if (tb && be && ib < be->n_floats) a->beta[k] = be->floats[ib++];
    }
    if (nd == 1)
        for (int k = nf; k < 6; k++) a->alpha[k] = a->alpha[k % nf], a->beta[k] = a->beta[k % nf];
    return 0;
}
