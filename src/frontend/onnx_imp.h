/* Private to the ONNX importer (src/frontend/onnx_*.c): its state and the
 * steps the per-concern files share.  onnx_import.c reads the model and
 * imports nodes; onnx_rnn.c maps the recurrent ops' attributes;
 * onnx_control.c inlines If and unrolls Loop and Scan (docs/onnx.md
 * "Control flow"). */
#ifndef ENPU_ONNX_IMP_H
#define ENPU_ONNX_IMP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "easynpu/onnx.h"
#include "tensor/onnx_tensor.h"
#include "onnx.pb-c.h"

#define OI_MAX_NODE_IO 64 /* inputs/outputs of one node, as enpu_graph_add_node allows */

typedef Onnx__AttributeProto__AttributeType attr_type;

/* A node of opset < 7 whose broadcast follows the legacy rules, resolved
 * once the shapes of its inputs are known (resolve_legacy). */
typedef struct legacy_bcast {
    int out;        /* the node's output tensor: survives the toposort */
    int axis;       /* where B's dims start in A's (has_axis) */
    bool has_axis;
    bool broadcast; /* Add/Sub/Mul/Div/Gemm: false = B (Gemm: C) has A's (Y's) shape */
    bool prelu;     /* PRelu: a 1-D slope of C values runs along axis 1 */
    bool gemm;      /* Gemm: checked after inference */
} legacy_bcast;

typedef struct imp {
    const char *what; /* file name for messages */
    unsigned flags;
    const enpu_onnx_bind *binds;
    int n_binds;
    bool *bound; /* per binding: matched a graph input */
    const enpu_onnx_input_shape *shapes;
    int n_shapes;
    bool *shaped; /* per input shape: matched a graph input */
    int opset;
    const Onnx__GraphProto *gp;
    enpu_graph *g;
    legacy_bcast *legacy;
    int n_legacy, cap_legacy;
    /* Problems a user must fix (unsupported operators and forms, shapes that
     * stay unresolved), all reported at once. */
    char **problems;
    int n_problems;
    /* Tensors whose value or shape cannot be known (outputs of a node with a
     * problem, a graph input with a symbolic dimension): their consumers are
     * skipped without adding problems of their own. */
    bool *poison;
    int cap_poison;
    /* Control flow (onnx_control.c): the If/Loop/Scan placeholders and the
     * name scopes of the subgraphs inlined so far. */
    struct oi_ctl *ctl;
    int n_ctl, cap_ctl;
    struct oi_scope **scopes;
    int n_scopes;
    const Onnx__NodeProto *cur_orig; /* the node of a body being imported, as given */
    struct oi_scope *cur_scope;      /* the scope that body's names resolve in */
    enpu_err *err;
} imp;

/* One node being imported. */
typedef struct nctx {
    imp *im;
    const Onnx__NodeProto *np;
    const char *name;
    const char *op_type;
} nctx;

/* "WHAT: node 'NAME' (op 'OP'): message" into im->err. */
int oi_nfail(const nctx *c, enpu_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Attributes of c's node: the one named `name` (NULL when absent; another
 * type than `want` is ENPU_E_INVALID); an INT in [lo, hi] (def when
 * absent); a bool; a FLOAT (def when absent, NaN refused); INTS of at most
 * max values (*n = -1 when absent); a STRING into buf. */
attr_type oi_attr_type_of(const Onnx__AttributeProto *a);
const char *oi_attr_type_name(attr_type t);
int oi_get_attr(const nctx *c, const char *name, attr_type want, const Onnx__AttributeProto **out);
int oi_a_int(const nctx *c, const char *name, int64_t def, int64_t lo, int64_t hi, int64_t *v);
int oi_a_bool(const nctx *c, const char *name, bool *v);
int oi_a_float(const nctx *c, const char *name, float def, float *v);
int oi_a_ints(const nctx *c, const char *name, int max, int64_t *v, int *n);
int oi_a_string(const nctx *c, const char *name, const char *def, char *buf, size_t n);

/* Problems: recorded for the one error listing them all; tensors whose
 * value cannot be known (poisoned) skip their consumers.  oi_as_problem
 * turns an ENPU_E_UNSUPPORTED failure rc (error e) into a problem
 * (*skipped), any other failure is returned. */
int oi_add_problem(imp *im, const char *msg);
bool oi_poisoned(const imp *im, int t);
int oi_set_poison(imp *im, int t);
int oi_as_problem(imp *im, int rc, const enpu_err *e, bool *skipped);
int oi_poison_outputs(imp *im, int i);

/* Graph building: a node's name (NULL-safe, numbered when absent; -1 when
 * over the limit); the default domain; a constant tensor (takes t->data);
 * is t a constant with data; the first opset of op; a fresh tensor
 * "<base>:<suffix>"; a node "<node>/<suffix>" with attributes at. */
int oi_node_name(const Onnx__NodeProto *np, size_t idx, char *buf, size_t n);
bool oi_is_default_domain(const char *d);
int oi_add_const(imp *im, const char *name, enpu_pb_tensor *t);
bool oi_is_const(const enpu_graph *g, int t);
int oi_op_since(enpu_op op);
int oi_new_tensor(imp *im, const char *base, const char *suffix);
int oi_new_node(imp *im, const char *node, const char *suffix, enpu_op op, int n_in, const int *in,
                int out, const enpu_attr *at);

/* The node passes: a Constant node's tensor; a node's outputs declared
 * (pass A); the node with its attributes (pass B); the parameter inputs
 * folded into attributes (strict: a non-constant one is a problem); node i
 * inferred and folded once the nodes before it are. */
int oi_import_constant(imp *im, const nctx *c);
int oi_declare_outputs(imp *im, const nctx *c, enpu_op op);
int oi_import_node(imp *im, const nctx *c, enpu_op op);
int oi_fold_node(enpu_graph *g, int ni, const char *what, bool strict, enpu_err *err);
int oi_infer_one(imp *im, int i, const legacy_bcast *lb, bool *added);

/* onnx_import.c: "WHAT: node 'NAME' (op 'OP'): message" (without "WHAT: "
 * when what is NULL), the form of every node error. */
int oi_node_vfail(enpu_err *err, const char *what, const char *node, const char *op, enpu_status code,
                  const char *fmt, va_list ap);

/* onnx_params.c: element i of a constant tensor, as a double or an int64. */
double oi_const_at(const enpu_tensor *t, int64_t i);
int64_t oi_const_i64_at(const enpu_tensor *t, int64_t i);

/* onnx_ops.c: the inputs an operator takes at the model's opset (lo..hi);
 * a Conv's or pool's window attributes (kernel from the weights when
 * absent); every attribute of node c into at, parameter inputs moved or
 * added (in, n_in updated). */
void oi_arity(enpu_op op, int opset, int *lo, int *hi);
int oi_parse_window(const nctx *c, const int *in, enpu_window *w);
int oi_map_attrs(const nctx *c, enpu_op op, int *in, int *n_in, enpu_attr *at);

/* onnx_inputs.c: the graph inputs (bound ones become constants); every
 * binding names an input; a binding's error, "WHAT: binding of input
 * 'NAME' (SOURCE): message". */
int oi_import_inputs(imp *im);
int oi_check_binds(imp *im);
int oi_bfail(const imp *im, int b, enpu_status code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* onnx_infer.c: shapes inferred over the whole graph (legacy broadcasts and
 * Split sizes resolved, control flow expanded); Q/DQ pairs into scales. */
int oi_infer_shapes(imp *im);
int oi_resolve_qdq(imp *im);

/* onnx_rnn.c: LSTM, GRU, RNN attributes into at->rnn (ONNX defaults
 * filled, activation names mapped); their graph outputs all declared. */
int oi_rnn_attrs(const nctx *c, enpu_op op, enpu_attr *at);

/* onnx_control.c.  oi_ctl_placeholder adds the node of an If, Loop or Scan
 * (in[0..n_in) its ONNX inputs) with the outer values its subgraphs read
 * as further inputs, so that the graph's order puts it after them; it is
 * expanded when shape inference reaches it: oi_ctl_expand inlines the
 * branch an If's constant condition takes, unrolls a Loop of constant trip
 * count (and condition) or a Scan, infers the nodes it added and kills the
 * placeholder.  A condition or trip count computed at run time is a
 * problem naming the input to bind.  oi_ctl_free releases the scopes. */
int oi_ctl_placeholder(imp *im, const nctx *c, enpu_op op, const int *in, int n_in);
bool oi_ctl_is(enpu_op op);
/* Is tensor t among the values an If condition or a Loop trip count or
 * condition of g is computed from? */
bool oi_ctl_reads(const enpu_graph *g, int t);
int oi_ctl_expand(imp *im, int ni);
void oi_ctl_free(imp *im);

#endif
