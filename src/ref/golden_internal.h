/* What the golden reference's files share (golden.c: geometry and the
 * executor; golden_check.c: the checker; golden_kernels.c: the per-kind
 * integer kernels; golden_twin.c: host nodes).  Private to src/ref/. */
#ifndef ENPU_REF_GOLDEN_INTERNAL_H
#define ENPU_REF_GOLDEN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "ref/gfast.h"

/* A host node's one-node float twin (golden_twin.c). */
typedef struct host_twin {
    enpu_graph *g;
    enpu_fexec *ex;
    int n_in;
    int *src;         /* qg tensor of each twin input */
    enpu_buf *bufs;   /* float inputs */
    int n_out;
    int out[8];       /* twin tensor of each node output (-1: omitted) */
} host_twin;

struct enpu_gexec {
    const enpu_graph *qg;
    int8_t **v8;
    float **vf;
    bool *own8, *ownf;
    host_twin *host; /* per node */
    int16_t **v16;   /* a 16-bit graph's int16 tensors */
    bool *own16;
    enpu_gexec_kernels kernels;
    const gf_simd *simd; /* NULL: the reference loops */
    gf_node **fast;      /* per node, NULL where the reference loops run */
};

/* an activation: a tensor that is not a constant */
static inline bool gd_is_act(const enpu_tensor *t) { return !(t->flags & ENPU_T_CONST); }
/* A host node's unquantized tensor, carried as float32 values: a float
 * result, or int64/int32 indices (ArgMax's, a Cast's). */
static inline bool gd_unquantized(const enpu_tensor *t) {
    return t->dtype == ENPU_DT_FLOAT32 || ((t->dtype == ENPU_DT_INT64 || t->dtype == ENPU_DT_INT32) && !t->quant);
}
static inline const char *gd_name(const enpu_node *n) { return n->name ? n->name : ""; }
/* per-tensor scale and zero point of a checked tensor */
static inline float gd_scale(const enpu_tensor *t) { return t->quant->scale[0]; }
static inline int32_t gd_zp(const enpu_tensor *t) { return t->quant->zero_point[0]; }

/* golden.c: "node 'N': output 'Y' why" as an invalid-graph error; the
 * geometry of a MaxPool as a conv-kind window. */
int gd_bad_out(const enpu_node *n, const enpu_tensor *y, const char *why, enpu_err *err);
int gd_maxpool_geom(const enpu_graph *qg, const enpu_node *n, enpu_qconv_geom *q, enpu_err *err);

/* golden_check.c: is node n a move the golden runs through a float twin
 * (exact: one input element per output element)? */
bool gd_move_by_twin(const enpu_node *n);

/* golden_twin.c: a host node's twin built (and checked), released; int8
 * or int16 values dequantized with t's parameters; node `node` run. */
int gd_build_twin(const enpu_graph *qg, const enpu_node *n, host_twin *h, enpu_err *err);
int gd_check_twin(const enpu_graph *qg, const enpu_node *n, enpu_err *err);
void gd_twin_free(host_twin *h);
void gd_dequant(const enpu_tensor *t, const int8_t *v, float *dst);
void gd_dequant16(const enpu_tensor *t, const int16_t *v, float *dst);
int gd_run_host(enpu_gexec *ex, int node, enpu_err *err);

/* golden_kernels.c: node n's output values from its inputs' (ex->v8/v16). */
void gd_run_conv(enpu_gexec *ex, const enpu_node *n);
void gd_run_conv16(enpu_gexec *ex, const enpu_node *n);
void gd_run_maxpool(enpu_gexec *ex, const enpu_node *n);
void gd_run_binary(enpu_gexec *ex, const enpu_node *n);
void gd_run_table(enpu_gexec *ex, const enpu_node *n);
void gd_run_move(enpu_gexec *ex, const enpu_node *n);

#endif
