/* The quantizer's working state, shared by its steps: quantize.c (the
 * driver), qclassify.c (3. kinds), qparams.c (4. parameters), qbuild.c and
 * qbuild_conv.c (5. the int8 graph).  Private to src/quant/. */
#ifndef ENPU_QUANT_QCTX_H
#define ENPU_QUANT_QCTX_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/quant.h"
#include "quant/passes.h"
#include "quant/qinternal.h"

/* What step 3 decides for one float node. */
typedef struct plan {
    enpu_qkind kind;
    enpu_qorigin origin;
    bool absorbed;   /* a Relu/Clip folded into its producer */
    int out;         /* fg tensor the node writes in the int8 graph */
    double clip_lo, clip_hi;
    char *names;     /* float nodes merged into this one, "+"-joined */
    char *note;      /* why HOST, ... */
} plan;

typedef struct rescale {
    int node, input;
} rescale;

typedef struct qctx {
    const enpu_graph *fg;
    const enpu_qp_info *info;
    const enpu_quant_opts *o;
    enpu_err *err;
    enpu_qrange *rng;
    plan *pl;
    int *eff;        /* fg tensor -> fg node that writes it in the int8 graph */
    bool *npu_read;  /* read by an NPU (non-HOST) node */
    bool *is_float;  /* HOST output left float32 */
    bool *has;       /* params assigned */
    float *s;
    int32_t *z;
    rescale *rs;
    int n_rs;
    int n_forced;
    int n_given;     /* tensors with the model's own parameters */
    int n_given_w;   /* weight tensors with the model's own scales */
    enpu_graph *qg;
    int *qt;         /* fg tensor -> qg tensor */
    char **notes;    /* per qg node */
    int cap_notes;
} qctx;

/* A conv-kind node's float parameters, as qc_build_conv_q takes them. */
typedef struct convspec {
    const float *wf; /* co * k float weights, NULL: every weight is 1 */
    const float *sw; /* the model's own per-channel weight scales (co), or NULL */
    const float *bf; /* co float biases, NULL: 0 */
    int64_t co, k;
    double div;      /* average pooling's N (1 otherwise) */
    float s_in, s_out;
    int32_t z_in, z_out;
    double clip_lo, clip_hi;
} convspec;

static inline const char *qc_fname(const qctx *c, int t) { return c->fg->tensors[t].name; }
/* an activation: a tensor that is not a constant */
static inline bool qc_is_act(const enpu_graph *g, int t) { return t >= 0 && !(g->tensors[t].flags & ENPU_T_CONST); }

/* quantize.c: a node's quantization block with the int8 clamp; malloc'd
 * copies (NULL on no memory); tensor t read by exactly one node and not a
 * graph output; equal shapes; "+more" appended to p's merged names; p made
 * HOST with the reason `note` (owned). */
enpu_qnode *qc_qnode_new(enpu_qkind kind);
char *qc_xstrdup(const char *s);
char *qc_xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool qc_single_use(const enpu_graph *g, int t);
bool qc_same_shape_as(const enpu_graph *g, int a, int b);
int qc_append_names(qctx *c, plan *p, const char *more);
void qc_set_host(plan *p, char *note);

/* the steps */
int qc_classify(qctx *c);
int qc_assign_params(qctx *c);
int qc_build_graph(qctx *c);

/* qbuild.c: an int8 graph tensor (named base, or fg tensor t's); a node of
 * the int8 graph with its quantization block and note (both owned). */
int qc_add_qtensor_named(qctx *c, const char *base, enpu_dtype dt, int rank, const int64_t *dims);
int qc_qtensor(qctx *c, int t);
int qc_add_qnode(qctx *c, const char *name, enpu_op op, int n_in, const int *in, int out, const enpu_attr *attr,
                 enpu_qnode *q, char *note);

/* qbuild_conv.c: a clamp [lo, hi] in float as int8 codes of (s, z); a
 * conv-kind quantization block from cs (the weight scales returned); float
 * node i as a conv-kind node of the int8 graph. */
void qc_clamp_of(double lo, double hi, float s, int32_t z, int32_t *qlo, int32_t *qhi);
int qc_build_conv_q(qctx *c, const char *layer, const convspec *cs, enpu_qnode **out, float **sw_out, char **note);
int qc_build_conv_node(qctx *c, int i);

#endif
