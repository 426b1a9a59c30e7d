/* Private to src/ir: the recurrent ops' shape rule and MACs (shape_rnn.c),
 * called from shape.c's per-op switch and enpu_node_macs. */
#ifndef ENPU_SHAPE_RNN_H
#define ENPU_SHAPE_RNN_H

#include "easynpu/ir.h"

/* LSTM, GRU, RNN: checks X, W, R, B, sequence_lens, the initial states and
 * the peepholes against hidden_size and the direction, and sets Y
 * ([T, D, B, H], batch first [B, T, D, H]) and the final states ([D, B,
 * H], batch first [B, D, H]).  Errors name the node and the input. */
int enpu_infer_rnn(enpu_graph *g, enpu_node *n, enpu_err *err);
/* The same checks, and the shapes Y and the final states must have, without
 * writing them (the float reference's check). */
int enpu_rnn_shapes(const enpu_graph *g, const enpu_node *n, int64_t y[4], int64_t st[3],
                    enpu_err *err);
/* Gates of one time step of each op (LSTM 4, GRU 3, RNN 1). */
int enpu_rnn_gates(enpu_op op);
/* MACs of a recurrent node: every step of every direction multiplies the
 * input by W and the state by R (docs/microarch.md "MACs"). */
int64_t enpu_rnn_macs(const enpu_graph *g, const enpu_node *n);

#endif
