/* Private to src/frontend: constant (shape) folding at import and the
 * quantization parameters a pre-quantized (QDQ) model gives its tensors. */
#ifndef ENPU_FRONTEND_ONNX_FOLD_H
#define ENPU_FRONTEND_ONNX_FOLD_H

#include <stdbool.h>

#include "easynpu/ir.h"

/* Folds node `node` of g when it can be computed at import: every input a
 * constant (Shape and Size: the input's shape known).  Its output 0 becomes
 * a constant holding the result and the node is marked dead (*folded).  A
 * node it cannot compute is left as it is (*folded false, no error).
 * Errors: ENPU_E_INVALID for a value the op refuses (a Gather index out of
 * range), ENPU_E_NOMEM. */
int enpu_onnx_fold_node(enpu_graph *g, int node, bool *folded, enpu_err *err);

/* Gives float tensor t the int8 parameters of QuantizeLinear or
 * DequantizeLinear node n (scale, zero point, axis; a uint8 zero point
 * becomes the int8 one, zp - 128): the quantizer then uses them instead of
 * calibrated ones.  Only int8/uint8 parameters are recorded (an int32
 * bias's are not needed: it is requantized exactly).  ENPU_E_INVALID for a
 * scale that is not positive and finite or a zero point outside its
 * dtype. */
int enpu_onnx_qdq_annotate(enpu_graph *g, const enpu_node *n, enpu_tensor *t, enpu_err *err);

#endif
