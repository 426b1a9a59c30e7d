/* Float graph rewrites run before quantization (private to src/quant/).
 *
 * Every rewrite keeps the graph a valid FLOAT graph with the same values on
 * every surviving tensor (up to float rounding of folded constants), so the
 * float reference can run it for calibration and every activation tensor of
 * the result also exists, with the same name and value, in the original
 * graph: the quantization report compares tensors by name.
 *
 * Rewrites (to a fixed point): constant folding (enpu_fref_node); Identity /
 * Dropout removal; PRelu with one constant slope -> LeakyRelu; x*Sigmoid(x)
 * -> SiLU; Sub of a constant -> Add of its negation; Div by a constant ->
 * Mul by its reciprocal; MatMul(x [M,K], constant W [K,N]) -> Gemm; Gemm with
 * constant B (and C) -> canonical FC form (B' = alpha*B as [N][K], transB = 1,
 * C' = beta*C as [N], alpha = beta = 1); Conv / canonical Gemm followed by an
 * Add, Sub or Mul of a constant broadcast per output channel -> bias /
 * weights; BatchNormalization folded into the preceding Conv / canonical
 * Gemm when it is that node's only consumer; Max/Min of a scalar constant ->
 * Clip; ReduceMax over the whole map (keepdims) -> a MaxPool of the map's
 * size; the elementwise expressions of one activation that exporters emit
 * for HardSwish, HardSigmoid, SiLU and GELU (Erf or tanh form) -> that op,
 * recognised by value; mean/variance LayerNorm expressions ->
 * LayerNormalization; MatMul([1,T,K], constant [K,N]) -> Transpose, 1x1
 * Conv, Transpose. */
#ifndef ENPU_QUANT_PASSES_H
#define ENPU_QUANT_PASSES_H

#include "easynpu/ir.h"

/* Per node of the rewritten graph: the "+"-joined names of the float nodes
 * merged into it (NULL: only its own). */
typedef struct enpu_qp_info {
    char **fused;
    int n;
} enpu_qp_info;

void enpu_qp_info_free(enpu_qp_info *info);

/* Deep copy of a float graph (tensors with data and quantization, live nodes
 * with attributes; q blocks are not copied). */
int enpu_qp_clone(const enpu_graph *g, enpu_graph **out, enpu_err *err);

/* Runs the rewrites on fg (shapes inferred, nodes in topological order),
 * compacts it and fills info for the surviving nodes.  *n_rewrites counts
 * what was done (may be NULL). */
int enpu_qp_rewrite(enpu_graph *fg, enpu_qp_info *info, int *n_rewrites, enpu_err *err);

/* True if Reduce node n reduces exactly the spatial axes (2..rank-1) of a
 * rank-3/4 tensor: a global pooling. */
bool enpu_qp_reduces_map(const enpu_graph *g, const enpu_node *n);

/* True if the Gemm node is in the canonical FC form the passes produce. */
bool enpu_qp_gemm_canonical(const enpu_graph *g, const enpu_node *n);

/* A fresh tensor name "base" or "base_N" not yet in g (malloc'd). */
char *enpu_qp_unique_name(const enpu_graph *g, const char *base);

#endif
