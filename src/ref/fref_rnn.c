/* The recurrent ops, LSTM, GRU and RNN, as the ONNX operators define them
 * (opsets 7-14): gates in the order i, o, f, c (LSTM) and z, r, h (GRU),
 * biases Wb then Rb, peepholes i, o, f; sequence_lens end each batch row's
 * sequence early (its Y rows beyond are zero, its final state is that of
 * its last step); a reverse direction reads the sequence from its last
 * valid step back.  Sums in double, one step of one batch row at a time. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/shape_rnn.h"
#include "ref/fref_internal.h"

int enpu_fref_check_rnn(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    int64_t y[4], st[3];
    int rc = enpu_rnn_shapes(g, n, y, st, err);
    if (rc) return rc;
    for (int k = 0; k < n->n_out; k++) {
        const enpu_tensor *t = enpu_node_output(g, n, k);
        if (t && !enpu_fref_same_shape(t, k ? 3 : 4, k ? st : y))
            return enpu_fref_bad_shape(n, t, k ? 3 : 4, k ? st : y, err);
    }
    for (int k = 0; k < 6; k++)
        if (n->attr.rnn.act[k] < 0 || n->attr.rnn.act[k] >= ENPU_RNN_ACT_COUNT) {
            char what[ENPU_MAX_NAME + 64];
            return enpu_fail(err, ENPU_E_INVALID, "%s: activation %d is unknown",
                             enpu_fref_what(n, what, sizeof what), n->attr.rnn.act[k]);
        }
    return 0;
}

static double act(int f, double x, double a, double b) {
    switch (f) {
    case ENPU_RNN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case ENPU_RNN_TANH: return tanh(x);
    case ENPU_RNN_RELU: return x > 0 ? x : 0;
    case ENPU_RNN_AFFINE: return a * x + b;
    case ENPU_RNN_LEAKY_RELU: return x < 0 ? a * x : x;
    case ENPU_RNN_THRESHOLDED_RELU: return x > a ? x : 0;
    case ENPU_RNN_SCALED_TANH: return a * tanh(b * x);
    case ENPU_RNN_HARD_SIGMOID: {
        double h = a * x + b;
        return h < 0 ? 0 : h > 1 ? 1 : h;
    }
    case ENPU_RNN_ELU: return x < 0 ? a * (exp(x) - 1) : x;
    case ENPU_RNN_SOFTSIGN: return x / (1 + fabs(x));
    default: return log1p(exp(x)); /* Softplus */
    }
}

/* Gate function k of direction d: the attribute's, through clip. */
static double gate(const enpu_rnn_attr *a, int nf, int d, int k, double x) {
    if (a->clip > 0) x = x < -a->clip ? -a->clip : x > a->clip ? a->clip : x;
    int j = d * nf + k;
    return act(a->act[j], x, a->alpha[j], a->beta[j]);
}

/* sum_k v[k] * m[row * len + k] */
static double dot(const float *m, int64_t row, const double *v, int64_t len) {
    double s = 0;
    const float *r = m + row * len;
    for (int64_t k = 0; k < len; k++) s += (double)r[k] * v[k];
    return s;
}

void enpu_fref_rnn(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out) {
    const enpu_rnn_attr *a = &n->attr.rnn;
    const enpu_tensor *xt = enpu_node_input(g, n, 0);
    bool bf = a->layout == 1, lstm = n->op == ENPU_OP_LSTM, gru = n->op == ENPU_OP_GRU;
    int64_t T = bf ? xt->dims[1] : xt->dims[0], B = bf ? xt->dims[0] : xt->dims[1];
    int64_t I = xt->dims[2], H = a->hidden, G = enpu_rnn_gates(n->op);
    int D = a->direction == ENPU_RNN_BIDIRECTIONAL ? 2 : 1;
    int nf = lstm ? 3 : gru ? 2 : 1; /* gate functions per direction */
    const float *X = in[0], *W = in[1], *R = in[2];
    const float *Bv = n->n_in > 3 ? in[3] : NULL, *SL = n->n_in > 4 ? in[4] : NULL;
    const float *H0 = n->n_in > 5 ? in[5] : NULL, *C0 = lstm && n->n_in > 6 ? in[6] : NULL;
    const float *P = lstm && n->n_in > 7 ? in[7] : NULL;
    float *Y = out[0], *YH = n->n_out > 1 ? out[1] : NULL, *YC = lstm && n->n_out > 2 ? out[2] : NULL;
    /* (the check bounds H: these fit the stack) */
    double h[ENPU_RNN_MAX_HIDDEN], c[ENPU_RNN_MAX_HIDDEN], nh[ENPU_RNN_MAX_HIDDEN];
    double xv[ENPU_RNN_MAX_HIDDEN], gs[4 * ENPU_RNN_MAX_HIDDEN], rh[ENPU_RNN_MAX_HIDDEN];
    if (Y) memset(Y, 0, (size_t)(T * D * B * H) * sizeof(float));
    for (int d = 0; d < D; d++) {
        bool rev = a->direction == ENPU_RNN_REVERSE || d == 1;
        const float *Wd = W + (int64_t)d * G * H * I, *Rd = R + (int64_t)d * G * H * H;
        const float *Wb = Bv ? Bv + (int64_t)d * 2 * G * H : NULL, *Rb = Wb ? Wb + G * H : NULL;
        const float *Pd = P ? P + (int64_t)d * 3 * H : NULL;
        for (int64_t b = 0; b < B; b++) {
            int64_t len = T;
            if (SL) {
                len = (int64_t)SL[b];
                if (len < 0) len = 0;
                if (len > T) len = T;
            }
            /* states: [D, B, H], batch first [B, D, H] */
            int64_t so = bf ? (b * D + d) * H : ((int64_t)d * B + b) * H;
            for (int64_t k = 0; k < H; k++) {
                h[k] = H0 ? H0[so + k] : 0.0;
                c[k] = C0 ? C0[so + k] : 0.0;
            }
            for (int64_t s = 0; s < len; s++) {
                int64_t t = rev ? len - 1 - s : s;
                const float *xr = X + (bf ? (b * T + t) * I : (t * B + b) * I);
                if (I > ENPU_RNN_MAX_HIDDEN) {
                    /* a wide input: the input projection straight from X */
                    for (int64_t r = 0; r < G * H; r++) {
                        double sum = 0;
                        for (int64_t k = 0; k < I; k++) sum += (double)Wd[r * I + k] * xr[k];
                        gs[r] = sum;
                    }
                } else {
                    for (int64_t k = 0; k < I; k++) xv[k] = xr[k];
                    for (int64_t r = 0; r < G * H; r++) gs[r] = dot(Wd, r, xv, I);
                }
                if (Wb)
                    for (int64_t r = 0; r < G * H; r++) gs[r] += (double)Wb[r];
                if (lstm) {
                    for (int64_t r = 0; r < G * H; r++) gs[r] += dot(Rd, r, h, H) + (Rb ? Rb[r] : 0.0);
                    for (int64_t k = 0; k < H; k++) {
                        double ii = gs[k] + (Pd ? Pd[k] * c[k] : 0.0);
                        double ff = gs[2 * H + k] + (Pd ? Pd[2 * H + k] * c[k] : 0.0);
                        double it = gate(a, nf, d, 0, ii);
                        double ft = a->input_forget ? 1.0 - it : gate(a, nf, d, 0, ff);
                        double ct = gate(a, nf, d, 1, gs[3 * H + k]);
                        c[k] = ft * c[k] + it * ct;
                        double oo = gs[H + k] + (Pd ? Pd[H + k] * c[k] : 0.0);
                        nh[k] = gate(a, nf, d, 0, oo) * gate(a, nf, d, 2, c[k]);
                    }
                } else if (gru) {
                    /* z, r from the state; h from r (.) state, or r (.) (R h) */
                    for (int64_t r = 0; r < 2 * H; r++) gs[r] += dot(Rd, r, h, H) + (Rb ? Rb[r] : 0.0);
                    for (int64_t k = 0; k < H; k++) gs[k] = gate(a, nf, d, 0, gs[k]);
                    for (int64_t k = 0; k < H; k++) gs[H + k] = gate(a, nf, d, 0, gs[H + k]);
                    for (int64_t q = 0; q < H; q++) rh[q] = gs[H + q] * h[q];
                    for (int64_t k = 0; k < H; k++) {
                        double rr = gs[H + k], hh;
                        if (a->linear_before_reset)
                            hh = gs[2 * H + k] + rr * (dot(Rd, 2 * H + k, h, H) + (Rb ? Rb[2 * H + k] : 0.0));
                        else
                            hh = gs[2 * H + k] + dot(Rd, 2 * H + k, rh, H) + (Rb ? Rb[2 * H + k] : 0.0);
                        hh = gate(a, nf, d, 1, hh);
                        double z = gs[k];
                        nh[k] = (1.0 - z) * hh + z * h[k];
                    }
                } else {
                    for (int64_t k = 0; k < H; k++)
                        nh[k] = gate(a, nf, d, 0, gs[k] + dot(Rd, k, h, H) + (Rb ? Rb[k] : 0.0));
                }
                memcpy(h, nh, (size_t)H * sizeof *h);
                if (Y) {
                    /* Y: [T, D, B, H], batch first [B, T, D, H] */
                    int64_t yo = bf ? ((b * T + t) * D + d) * H : ((t * D + d) * B + b) * H;
                    for (int64_t k = 0; k < H; k++) Y[yo + k] = (float)h[k];
                }
            }
            for (int64_t k = 0; k < H; k++) {
                if (YH) YH[so + k] = (float)h[k];
                if (YC) YC[so + k] = (float)c[k];
            }
        }
    }
}
