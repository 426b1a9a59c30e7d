/* Float reference executor: runs an imported graph on the host in float32,
 * op by op.  It is the accuracy yardstick of the int8 path, so it favours
 * obvious code over speed (but is fast enough for calibration sets). */
#ifndef EASYNPU_FLOAT_REF_H
#define EASYNPU_FLOAT_REF_H

#include "easynpu/ir.h"
#include "easynpu/tensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct enpu_fexec enpu_fexec;

/* Prepares an executor for g (which must outlive it and not change while it
 * lives): g's shapes must be inferred and its nodes in topological order.
 * Checks every live node once: a value tensor of a type it does not carry
 * (float16, bfloat16, strings; shape-like operands such as Reshape's int64
 * shape are not values) is ENPU_E_UNSUPPORTED naming the node and tensor, as
 * is an op with no float kernel (3-D Conv/pool); shapes inconsistent with the
 * op are ENPU_E_INVALID.  Integer and bool tensors are carried as float32
 * values (exact up to 2^24 in magnitude) and rounded to their dtype after
 * each node (truncation toward zero, 8/16-bit wrap-around: uint8 200 + 100
 * is 44, int32 -7 / 2 is -3); float64 ones are rounded to float32.  Float32
 * constants are used in place, not copied; others are converted. */
int enpu_fexec_new(const enpu_graph *g, enpu_fexec **out, enpu_err *err);
void enpu_fexec_free(enpu_fexec *ex);

/* Runs the graph on g->n_inputs input buffers (any numeric dtype; converted
 * to float32; shapes must equal the graph inputs').  Every tensor's value is
 * kept until the next run. */
int enpu_fexec_run(enpu_fexec *ex, const enpu_buf *inputs, enpu_err *err);
/* Same, with the number of buffers given so that a wrong count is an
 * ENPU_E_USAGE error instead of a read past the array.  A shape that differs
 * from the graph input's is ENPU_E_INVALID naming the input. */
int enpu_fexec_run_n(enpu_fexec *ex, int n_inputs, const enpu_buf *inputs, enpu_err *err);

/* Value of tensor `t` after a run, as float32 in its inferred shape; NULL if
 * the tensor was not computed (e.g. an unused optional output). */
const float *enpu_fexec_value(const enpu_fexec *ex, int t);

/* Copies output `i` of the graph into a new float32 buffer (an integer
 * output's values are integers). */
int enpu_fexec_output(const enpu_fexec *ex, int i, enpu_buf *out, enpu_err *err);

/* Whether the float reference computes on tensors of dtype dt: float32,
 * float64 (rounded to float32) and the integer and bool types (carried as
 * float32 values); float16, bfloat16 and strings are refused. */
bool enpu_fref_carries(enpu_dtype dt);

/* Runs a single node of g whose inputs are given as float arrays in the
 * node's inferred input shapes, writing float outputs (caller-allocated, in
 * inferred output shapes).  in[] has n->n_in entries: NULL for omitted
 * optional inputs; entries of shape-like operands (Reshape's shape, Pad's
 * pads, Dropout's ratio) are ignored.  Clip's min/max and Pad's
 * constant_value, when present as inputs, are read from in[] (scalars).
 * Only out[0] is written (Dropout's mask is not computed).  The quantizer's
 * per-op tests use it. */
int enpu_fref_node(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
