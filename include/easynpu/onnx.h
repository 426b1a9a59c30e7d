/* ONNX importer: an ONNX ModelProto file into an enpu_graph, shapes inferred
 * and validated.  Opsets 1-17 of the default domain.
 *
 * Attributes are normalized on import (see ir.h): ONNX defaults filled in,
 * 1-D windows mapped to 2-D with H = 1, and the constant "parameter" inputs of
 * Clip (min, max), Pad (pads, constant_value), Squeeze/Unsqueeze (axes) and
 * Dropout (ratio, training_mode) folded into the attribute struct and dropped
 * from the node, which then has input 0 only.  Reshape keeps its shape input
 * (input 1); a constant target is also copied into attr.shape.shape/n_shape
 * (n_shape = -1 when input 1 is not a constant).  Dropout keeps input 0 and
 * output 0 only.
 *
 * Opsets 1-6 are normalized to the same form: Reshape's `shape` attribute
 * (opset 1-4) becomes a constant input 1, Pad's `paddings` (opset 1) and
 * `pads` (2-10) attributes and Clip's `min`/`max` (1-10) the attribute
 * struct, Concat's axis defaults to 1 (opset 1-3), `consumed_inputs` is
 * ignored, BatchNormalization and Dropout with `is_test` = 0 (training mode)
 * are refused, and the legacy broadcast of Add/Sub/Mul/Div (`broadcast`,
 * `axis`) and of PRelu (a 1-D slope of C values along axis 1) becomes numpy
 * broadcasting, B unsqueezed where needed, during shape inference.  An op
 * that does not exist in the model's opset (HardSwish before 14) is refused.
 *
 * A graph input can be bound to a value at import (enpu_onnx_bind): it then
 * becomes a constant before attributes are normalized and shapes inferred,
 * as if the model held it as an initializer, and is no longer a graph input.
 * That is how a parameter input (Clip's min, Reshape's shape, ...) that a
 * model leaves to run time gets the fixed value an NPU program needs. */
#ifndef EASYNPU_ONNX_H
#define EASYNPU_ONNX_H

#include "easynpu/ir.h"
#include "easynpu/tensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_MAX_MODEL_BYTES ((size_t)1 << 30) /* 1 GiB */

/* Flags of enpu_onnx_load_ex / enpu_onnx_parse_ex / enpu_onnx_opts. */
/* Build the graph and sort it topologically, nothing more: no shape inference
 * and no validation, and a non-constant parameter input (Clip min/max, Pad
 * pads, Squeeze/Unsqueeze axes, Dropout training_mode) is left on its node
 * instead of being an error.  For introspection only (which inputs are there,
 * which are parameters: enpu_onnx_is_param_input), not for execution: legacy
 * broadcasts (opset < 7) are resolved only with shape inference.  The
 * conformance runner imports a test this way to learn which inputs to bind,
 * then imports it again with the bindings. */
#define ENPU_ONNX_NO_INFER 1u

/* A value for graph input `name`.  `value` (dtype, shape, data) is copied;
 * `source` (typically the file it was read from, may be NULL) is named in
 * errors. */
typedef struct enpu_onnx_bind {
    const char *name;
    const char *source;
    const enpu_buf *value;
} enpu_onnx_bind;

/* The static shape of graph input `name` (--input-shape NAME=D0xD1x...):
 * fixes its symbolic dimensions.  Its rank must be the declared one and
 * every dimension the model fixes must be equal, except dimension 0 (the
 * batch), which may be set to any size. */
typedef struct enpu_onnx_input_shape {
    const char *name;
    int rank;
    int64_t dims[ENPU_MAX_RANK];
} enpu_onnx_input_shape;

typedef struct enpu_onnx_opts {
    unsigned flags;              /* ENPU_ONNX_* */
    const enpu_onnx_bind *binds; /* n_binds values for graph inputs */
    int n_binds;
    const enpu_onnx_input_shape *shapes; /* n_shapes static input shapes */
    int n_shapes;
} enpu_onnx_opts;

/* Parses "NAME=D0xD1x..." (a scalar: "NAME=") into *out; out->name points
 * into spec.  ENPU_E_USAGE naming the spec when it is malformed, a
 * dimension is not a number in 0..ENPU_MAX_DIM or there are more than
 * ENPU_MAX_RANK. */
int enpu_onnx_parse_input_shape(char *spec, enpu_onnx_input_shape *out, enpu_err *err);

/* Loads `path`.  On success *out owns a graph that passed
 * enpu_graph_validate.  Tensors with external_data are rejected without
 * opening anything.  Errors name the file and the node/tensor/attribute. */
int enpu_onnx_load(const char *path, enpu_graph **out, enpu_err *err);
/* Same, from memory (`what` names the source in messages). */
int enpu_onnx_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                    enpu_err *err);

/* enpu_onnx_load / enpu_onnx_parse with options (NULL = none: build,
 * toposort, infer shapes, validate).  Every binding must name a graph input
 * that is not an initializer, once, and match its declared dtype and shape (a
 * symbolic dimension matches any size); the bound input becomes a constant
 * and leaves g->inputs.  Error categories: ENPU_E_IO (cannot read),
 * ENPU_E_FORMAT (empty, not protobuf, no graph), ENPU_E_UNSUPPORTED (opset
 * outside 1-17, an op absent from the model's opset, other domains, unknown
 * op, an attribute value or form we do not handle, training mode, external
 * data), ENPU_E_INVALID (dangling or duplicate names, wrong attribute type or
 * value, bad arity, a binding of the wrong dtype or shape), ENPU_E_USAGE (a
 * binding naming no graph input, an initializer, or an input bound twice),
 * ENPU_E_LIMIT (dims, rank, counts over ir.h's limits).  Binding errors name
 * the input and the binding's source.  On error *out is NULL and nothing is
 * leaked. */
int enpu_onnx_load_opts(const char *path, const enpu_onnx_opts *opts, enpu_graph **out,
                        enpu_err *err);
int enpu_onnx_parse_opts(const uint8_t *data, size_t n, const char *what,
                         const enpu_onnx_opts *opts, enpu_graph **out, enpu_err *err);

/* enpu_onnx_load_opts / enpu_onnx_parse_opts with flags only. */
int enpu_onnx_load_ex(const char *path, unsigned flags, enpu_graph **out, enpu_err *err);
int enpu_onnx_parse_ex(const uint8_t *data, size_t n, const char *what, unsigned flags,
                       enpu_graph **out, enpu_err *err);

/* True if tensor t is a parameter input (index >= 1) of a Clip, Pad, Squeeze,
 * Unsqueeze, Reshape or Dropout node of a graph imported with
 * ENPU_ONNX_NO_INFER: an input whose value shapes the computation, which an
 * NPU program needs fixed (bind it). */
bool enpu_onnx_is_param_input(const enpu_graph *g, int t);

#ifdef __cplusplus
}
#endif
#endif
