/* ONNX importer: an ONNX ModelProto file into an enpu_graph, shapes inferred
 * and validated.  Opsets 7-17 of the default domain.
 *
 * Attributes are normalized on import (see ir.h): ONNX defaults filled in,
 * 1-D windows mapped to 2-D with H = 1, and the constant "parameter" inputs of
 * Clip (min, max), Pad (pads, constant_value) and Squeeze/Unsqueeze (axes)
 * folded into the attribute struct and dropped from the node, which then has
 * input 0 only.  Reshape keeps its shape input (input 1); a constant target is
 * also copied into attr.shape.shape/n_shape (n_shape = -1 when input 1 is not
 * a constant).  Dropout keeps input 0 and output 0 only. */
#ifndef EASYNPU_ONNX_H
#define EASYNPU_ONNX_H

#include "easynpu/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_MAX_MODEL_BYTES ((size_t)1 << 30) /* 1 GiB */

/* Flags of enpu_onnx_load_ex / enpu_onnx_parse_ex. */
/* Build the graph and sort it topologically, nothing more: no shape inference
 * and no validation, and a non-constant parameter input (Clip min/max, Pad
 * pads, Squeeze/Unsqueeze axes) is left on its node instead of being an
 * error.  For the conformance runner, which then pins such inputs with
 * enpu_graph_freeze_input, calls enpu_onnx_fold_inputs, and runs
 * enpu_graph_infer_shapes + enpu_graph_validate itself. */
#define ENPU_ONNX_NO_INFER 1u

/* Loads `path`.  On success *out owns a graph that passed
 * enpu_graph_validate.  Tensors with external_data are rejected without
 * opening anything.  Errors name the file and the node/tensor/attribute. */
int enpu_onnx_load(const char *path, enpu_graph **out, enpu_err *err);
/* Same, from memory (`what` names the source in messages). */
int enpu_onnx_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                    enpu_err *err);

/* enpu_onnx_load / enpu_onnx_parse with ENPU_ONNX_* flags (0 = the default
 * path: build, toposort, infer shapes, validate).  Error categories:
 * ENPU_E_IO (cannot read), ENPU_E_FORMAT (empty, not protobuf, no graph),
 * ENPU_E_UNSUPPORTED (opset outside 7-17, other domains, unknown op, an
 * attribute value or form we do not handle, external data), ENPU_E_INVALID
 * (dangling or duplicate names, wrong attribute type or value, bad arity),
 * ENPU_E_LIMIT (dims, rank, counts over ir.h's limits).  On error *out is
 * NULL and nothing is leaked. */
int enpu_onnx_load_ex(const char *path, unsigned flags, enpu_graph **out, enpu_err *err);
int enpu_onnx_parse_ex(const uint8_t *data, size_t n, const char *what, unsigned flags,
                       enpu_graph **out, enpu_err *err);

/* Folds constant parameter inputs into node attributes, as the default
 * import does; for graphs imported with ENPU_ONNX_NO_INFER after their
 * parameter inputs were frozen.  A parameter input still not constant is
 * ENPU_E_UNSUPPORTED naming the node.  Also refreshes Reshape's
 * attr.shape.shape from a now-constant input 1. */
int enpu_onnx_fold_inputs(enpu_graph *g, enpu_err *err);
/* True if tensor t is a parameter input (index >= 1) of a Clip, Pad, Squeeze,
 * Unsqueeze or Reshape node: a graph input the conformance runner must
 * freeze to constant data before shape inference. */
bool enpu_onnx_is_param_input(const enpu_graph *g, int t);

#ifdef __cplusplus
}
#endif
#endif
