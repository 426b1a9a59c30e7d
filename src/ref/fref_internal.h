/* Private to the float reference executor: the per-op kernels (fref_*.c) and
 * their shape checks, driven by float_ref.c.
 *
 * A kernel trusts its node's inferred shapes, so every kernel has a check
 * that proves the shapes consistent before it runs (an IR bug then shows as
 * an ENPU_E_INVALID error naming the node instead of an out-of-bounds read).
 * Checks run once per node in enpu_fexec_new and on every enpu_fref_node. */
#ifndef ENPU_FREF_INTERNAL_H
#define ENPU_FREF_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/ir.h"

/* Whether input i of n is a value the kernel computes on (float32), as
 * opposed to an operand already folded into the attributes by the importer
 * (Reshape's shape, Squeeze's axes, Pad's pads, Dropout's ratio). */
bool enpu_fref_value_input(const enpu_node *n, int i);
/* Whether input i must be present (others are optional). */
bool enpu_fref_required_input(const enpu_node *n, int i);
/* Whether output i is computed (Dropout's mask, BatchNormalization's
 * training statistics are not). */
bool enpu_fref_value_output(const enpu_node *n, int i);

/* "node 'name' (Op)" for messages. */
const char *enpu_fref_what(const enpu_node *n, char *buf, size_t size);

/* Geometry of a Conv/pool on a rank-4 [N,C,H,W] or rank-3 [N,C,W] tensor
 * (H = 1: 1-D ops use the W entries of the window). */
typedef struct enpu_fref_geom {
    int64_t n, c, h, w;   /* input */
    int64_t oc, oh, ow;   /* output */
    int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
} enpu_fref_geom;

/* Fills g from the node's input 0, output 0, the window and (for Conv) the
 * kernel size kh/kw given by the caller; checks ranks and non-negative,
 * non-degenerate window values. */
int enpu_fref_geom_init(const enpu_graph *g, const enpu_node *n, const enpu_window *win, int kh,
                        int kw, enpu_fref_geom *geo, enpu_err *err);

/* numpy multidirectional broadcast of two shapes; false if incompatible. */
bool enpu_fref_bcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *ro,
                           int64_t *o);
/* Element strides of a tensor of shape (rank, dims) read as broadcast to the
 * orank dims odims (right-aligned; 0 along broadcast dims), each multiplied by
 * `unit`. */
void enpu_fref_bcast_strides(int rank, const int64_t *dims, int orank, const int64_t *odims,
                             int64_t unit, int64_t *st);
/* Row-major walk over the index space `dims` that keeps the element offsets
 * of up to two operands read with their own (possibly broadcast) strides. */
typedef struct enpu_fref_iter {
    int rank;
    const int64_t *dims;
    int64_t idx[ENPU_MAX_RANK];
    int64_t st[2][ENPU_MAX_RANK]; /* zeros for an unused operand */
    int64_t off[2];
} enpu_fref_iter;

static inline void enpu_fref_iter_next(enpu_fref_iter *it) {
    for (int d = it->rank - 1; d >= 0; d--) {
        it->off[0] += it->st[0][d];
        it->off[1] += it->st[1][d];
        if (++it->idx[d] < it->dims[d]) return;
        it->off[0] -= it->st[0][d] * it->dims[d];
        it->off[1] -= it->st[1][d] * it->dims[d];
        it->idx[d] = 0;
    }
}

/* True if t's shape equals (rank, dims). */
bool enpu_fref_same_shape(const enpu_tensor *t, int rank, const int64_t *dims);
/* Error naming the node and the tensor whose shape is not the expected one. */
int enpu_fref_bad_shape(const enpu_node *n, const enpu_tensor *t, int rank, const int64_t *dims,
                        enpu_err *err);

/* Kernels: in[i] / out[i] hold input/output i of the node in its inferred
 * shape (NULL for omitted optional inputs and non-value operands).  They
 * cannot fail once their check has passed. */
typedef int (*enpu_fref_check_fn)(const enpu_graph *g, const enpu_node *n, enpu_err *err);
typedef void (*enpu_fref_kernel_fn)(const enpu_graph *g, const enpu_node *n,
                                    const float *const *in, float *const *out);

/* fref_rnn.c: LSTM, GRU, RNN */
int enpu_fref_check_rnn(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_rnn(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out);

/* fref_linear.c */
int enpu_fref_check_conv(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_conv(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out);
int enpu_fref_check_gemm(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_gemm(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out);
int enpu_fref_check_matmul(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_matmul(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);
int enpu_fref_check_conv_transpose(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_conv_transpose(const enpu_graph *g, const enpu_node *n, const float *const *in,
                              float *const *out);
int enpu_fref_check_batchnorm(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_batchnorm(const enpu_graph *g, const enpu_node *n, const float *const *in,
                         float *const *out);

/* fref_pool.c */
int enpu_fref_check_pool(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_pool(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out);
int enpu_fref_check_global_avgpool(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_global_avgpool(const enpu_graph *g, const enpu_node *n, const float *const *in,
                              float *const *out);

/* fref_elem.c */
int enpu_fref_check_binary(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_binary(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);
int enpu_fref_check_unary(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_unary(const enpu_graph *g, const enpu_node *n, const float *const *in,
                     float *const *out);
int enpu_fref_check_softmax(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_softmax(const enpu_graph *g, const enpu_node *n, const float *const *in,
                       float *const *out);
int enpu_fref_check_variadic(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_variadic(const enpu_graph *g, const enpu_node *n, const float *const *in,
                        float *const *out);
int enpu_fref_check_where(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_where(const enpu_graph *g, const enpu_node *n, const float *const *in,
                     float *const *out);
int enpu_fref_check_layer_norm(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_layer_norm(const enpu_graph *g, const enpu_node *n, const float *const *in,
                          float *const *out);
int enpu_fref_check_qdq(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_qdq(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out);
int enpu_fref_check_arg(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_arg(const enpu_graph *g, const enpu_node *n, const float *const *in, float *const *out);
/* Computed Gather indices (in ix, floats) inside the data's axis: checked
 * before each run, since the kernel itself cannot fail. */
int enpu_fref_check_gather_values(const enpu_graph *g, const enpu_node *n, const float *ix,
                                  enpu_err *err);
int enpu_fref_check_reduce(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_reduce(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);

/* fref_layout.c */
int enpu_fref_check_copy(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_copy(const enpu_graph *g, const enpu_node *n, const float *const *in,
                    float *const *out);
int enpu_fref_check_transpose(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_transpose(const enpu_graph *g, const enpu_node *n, const float *const *in,
                         float *const *out);
int enpu_fref_check_concat(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_concat(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);
int enpu_fref_check_pad(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_pad(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out);
int enpu_fref_check_slice(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_slice(const enpu_graph *g, const enpu_node *n, const float *const *in,
                     float *const *out);
int enpu_fref_check_gather(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_gather(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);
int enpu_fref_check_expand(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_expand(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);
int enpu_fref_check_resize(const enpu_graph *g, const enpu_node *n, enpu_err *err);
void enpu_fref_resize(const enpu_graph *g, const enpu_node *n, const float *const *in,
                      float *const *out);

#endif
