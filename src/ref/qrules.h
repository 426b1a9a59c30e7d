/* The golden reference's rules of a quantized graph that the quantizer
 * follows too (golden.c defines them): which ops are tables or moves, the
 * PWL function of a table op, and a node's proven accumulator range.  Here,
 * on the reference's floor, so that the quantizer above uses them and the
 * reference needs nothing of the quantizer. */
#ifndef ENPU_REF_QRULES_H
#define ENPU_REF_QRULES_H

#include "easynpu/quant.h"

/* Ops whose quantized kind is TABLE, and the PWL function and parameters of
 * one (ctx filled from the node's attributes). */
bool enpu_q_is_table_op(enpu_op op);
enpu_pwl_fn enpu_q_table_fn(const enpu_node *n, enpu_pwl_params *ctx, const void **ctx_out);
/* Ops that are MOVE when quantized. */
bool enpu_q_is_move_op(enpu_op op);

/* Proven accumulator range of a CONV / ADD / MUL node of a checked graph,
 * x over all of int8 (union over channels). */
void enpu_q_acc_range(const enpu_graph *qg, const enpu_node *n, int64_t *lo, int64_t *hi);

#endif
