/* Float reference executor: checks a graph once (dtypes, shapes consistent
 * with what each kernel reads, topological order), then runs it node by node
 * in float32 with one buffer per tensor.  The kernels live in fref_*.c, one
 * file per op family. */
#include "easynpu/float_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "ref/fref_internal.h"

struct enpu_fexec {
    const enpu_graph *g;
    float **val;       /* per tensor: its value, NULL if never computed */
    bool *owned;       /* val[t] allocated here; otherwise it aliases constant data */
    int *order;        /* live nodes in execution order */
    int n_order;
    const float **args_in; /* scratch for one node's kernel arguments */
    float **args_out;
};

/* --- shared helpers ------------------------------------------------------------ */

const char *enpu_fref_what(const enpu_node *n, char *buf, size_t size) {
    snprintf(buf, size, "node '%s' (%s)", n->name ? n->name : "", enpu_op_name(n->op));
    return buf;
}

static char *dims_str(int rank, const int64_t *dims, char *buf, size_t size) {
    size_t at = 0;
    buf[0] = '\0';
    if (rank == 0) snprintf(buf, size, "scalar");
    for (int d = 0; d < rank && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? "x" : "", (long long)dims[d]);
    return buf;
}

bool enpu_fref_same_shape(const enpu_tensor *t, int rank, const int64_t *dims) {
    if (t->rank != rank) return false;
    for (int d = 0; d < rank; d++)
        if (t->dims[d] != dims[d]) return false;
    return true;
}

int enpu_fref_bad_shape(const enpu_node *n, const enpu_tensor *t, int rank, const int64_t *dims,
                        enpu_err *err) {
    char what[ENPU_MAX_NAME + 64], have[160], want[160];
    return enpu_fail(err, ENPU_E_INVALID, "%s: '%s' has inferred shape %s, expected %s",
                     enpu_fref_what(n, what, sizeof what), t->name,
                     dims_str(t->rank, t->dims, have, sizeof have),
                     dims_str(rank, dims, want, sizeof want));
}

bool enpu_fref_bcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *ro,
                           int64_t *o) {
    int r = ra > rb ? ra : rb;
    for (int d = 0; d < r; d++) {
        int64_t da = d - (r - ra) >= 0 ? a[d - (r - ra)] : 1;
        int64_t db = d - (r - rb) >= 0 ? b[d - (r - rb)] : 1;
        if (da != db && da != 1 && db != 1) return false;
        o[d] = da == 1 ? db : da;
    }
    *ro = r;
    return true;
}

void enpu_fref_bcast_strides(int rank, const int64_t *dims, int orank, const int64_t *odims,
                             int64_t unit, int64_t *st) {
    int64_t s = unit;
    for (int d = orank - 1; d >= 0; d--) {
        int sd = d - (orank - rank);
        if (sd < 0) {
            st[d] = 0;
            continue;
        }
        st[d] = (dims[sd] == 1 && odims[d] != 1) ? 0 : s;
        s *= dims[sd];
    }
}

int enpu_fref_geom_init(const enpu_graph *g, const enpu_node *n, const enpu_window *win, int kh,
                        int kw, enpu_fref_geom *q, enpu_err *err) {
    const enpu_tensor *x = enpu_node_input(g, n, 0), *y = enpu_node_output(g, n, 0);
    char what[ENPU_MAX_NAME + 64];
    if (y->rank != x->rank)
        return enpu_fail(err, ENPU_E_INVALID, "%s: output '%s' has rank %d, input '%s' %d",
                         enpu_fref_what(n, what, sizeof what), y->name, y->rank, x->name,
                         x->rank);
    bool two_d = x->rank == 4;
    q->n = x->dims[0];
    q->c = x->dims[1];
    q->h = two_d ? x->dims[2] : 1;
    q->w = x->dims[x->rank - 1];
    q->oc = y->dims[1];
    q->oh = two_d ? y->dims[2] : 1;
    q->ow = y->dims[y->rank - 1];
    enpu_win2d w2;
    int rc = enpu_window_2d(n, win, x->rank, kh, kw, &w2, err);
    if (rc) return rc;
    q->kh = w2.kh;
    q->kw = w2.kw;
    q->sh = w2.sh;
    q->sw = w2.sw;
    q->dh = w2.dh;
    q->dw = w2.dw;
    q->pt = w2.pt;
    q->pl = w2.pl;
    q->pb = w2.pb;
    q->pr = w2.pr;
    return 0;
}

/* --- per-op tables -------------------------------------------------------------- */

bool enpu_fref_value_input(const enpu_node *n, int i) {
    switch (n->op) {
    case ENPU_OP_CONV:
    case ENPU_OP_GEMM:
    case ENPU_OP_CLIP: return i < 3;
    case ENPU_OP_MATMUL:
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
    case ENPU_OP_PRELU: return i < 2;
    case ENPU_OP_BATCHNORM: return i < 5;
    case ENPU_OP_CONCAT:
    case ENPU_OP_MAX:
    case ENPU_OP_MIN: return true;
    case ENPU_OP_PAD: return i == 0 || i == 2;
    case ENPU_OP_POW: return i < 2;
    case ENPU_OP_CONV_TRANSPOSE:
    case ENPU_OP_LAYER_NORM: return i < 3;
    case ENPU_OP_WHERE: return i == 1 || i == 2;
    case ENPU_OP_GATHER: return i < 2; /* the indices constant or computed */
    case ENPU_OP_LSTM: case ENPU_OP_GRU: case ENPU_OP_RNN: return true;
    default: return i == 0; /* Expand's shape: read from the constant */
    }
}

/* Inputs every node of the op must have (Concat: all of its inputs). */
static int min_inputs(enpu_op op) {
    switch (op) {
    case ENPU_OP_CONV:
    case ENPU_OP_GEMM:
    case ENPU_OP_MATMUL:
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
    case ENPU_OP_PRELU:
    case ENPU_OP_POW:
    case ENPU_OP_CONV_TRANSPOSE:
    case ENPU_OP_LAYER_NORM:
    case ENPU_OP_GATHER:
    case ENPU_OP_EXPAND: return 2;
    case ENPU_OP_WHERE:
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN: return 3;
    case ENPU_OP_BATCHNORM: return 5;
    default: return 1;
    }
}

bool enpu_fref_required_input(const enpu_node *n, int i) {
    return i < min_inputs(n->op) || n->op == ENPU_OP_CONCAT || n->op == ENPU_OP_MAX ||
           n->op == ENPU_OP_MIN;
}

bool enpu_fref_value_output(const enpu_node *n, int i) {
    /* LayerNormalization's Mean and InvStdDev are computed too */
    return i == 0 || (n->op == ENPU_OP_LAYER_NORM && i < 3) ||
           n->op == ENPU_OP_LSTM || n->op == ENPU_OP_GRU || n->op == ENPU_OP_RNN;
}

typedef struct op_impl {
    enpu_fref_check_fn check;
    enpu_fref_kernel_fn run;
} op_impl;

static const op_impl k_ops[ENPU_OP_COUNT] = {
    [ENPU_OP_CONV] = {enpu_fref_check_conv, enpu_fref_conv},
    [ENPU_OP_GEMM] = {enpu_fref_check_gemm, enpu_fref_gemm},
    [ENPU_OP_MATMUL] = {enpu_fref_check_matmul, enpu_fref_matmul},
    [ENPU_OP_ADD] = {enpu_fref_check_binary, enpu_fref_binary},
    [ENPU_OP_SUB] = {enpu_fref_check_binary, enpu_fref_binary},
    [ENPU_OP_MUL] = {enpu_fref_check_binary, enpu_fref_binary},
    [ENPU_OP_DIV] = {enpu_fref_check_binary, enpu_fref_binary},
    [ENPU_OP_PRELU] = {enpu_fref_check_binary, enpu_fref_binary},
    [ENPU_OP_RELU] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_CLIP] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_LEAKY_RELU] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_SIGMOID] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_TANH] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_HARD_SIGMOID] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_HARD_SWISH] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_SILU] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_BATCHNORM] = {enpu_fref_check_batchnorm, enpu_fref_batchnorm},
    [ENPU_OP_MAXPOOL] = {enpu_fref_check_pool, enpu_fref_pool},
    [ENPU_OP_AVGPOOL] = {enpu_fref_check_pool, enpu_fref_pool},
    [ENPU_OP_GLOBAL_AVGPOOL] = {enpu_fref_check_global_avgpool, enpu_fref_global_avgpool},
    [ENPU_OP_RESHAPE] = {enpu_fref_check_copy, enpu_fref_copy},
    [ENPU_OP_FLATTEN] = {enpu_fref_check_copy, enpu_fref_copy},
    [ENPU_OP_SQUEEZE] = {enpu_fref_check_copy, enpu_fref_copy},
    [ENPU_OP_UNSQUEEZE] = {enpu_fref_check_copy, enpu_fref_copy},
    [ENPU_OP_TRANSPOSE] = {enpu_fref_check_transpose, enpu_fref_transpose},
    [ENPU_OP_CONCAT] = {enpu_fref_check_concat, enpu_fref_concat},
    [ENPU_OP_PAD] = {enpu_fref_check_pad, enpu_fref_pad},
    [ENPU_OP_SOFTMAX] = {enpu_fref_check_softmax, enpu_fref_softmax},
    [ENPU_OP_IDENTITY] = {enpu_fref_check_copy, enpu_fref_copy},
    [ENPU_OP_DROPOUT] = {enpu_fref_check_copy, enpu_fref_copy},
    [ENPU_OP_CAST] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_SLICE] = {enpu_fref_check_slice, enpu_fref_slice},
    [ENPU_OP_RESIZE] = {enpu_fref_check_resize, enpu_fref_resize},
    [ENPU_OP_CONV_TRANSPOSE] = {enpu_fref_check_conv_transpose, enpu_fref_conv_transpose},
    [ENPU_OP_REDUCE_MEAN] = {enpu_fref_check_reduce, enpu_fref_reduce},
    [ENPU_OP_REDUCE_MAX] = {enpu_fref_check_reduce, enpu_fref_reduce},
    [ENPU_OP_REDUCE_SUM] = {enpu_fref_check_reduce, enpu_fref_reduce},
    [ENPU_OP_MAX] = {enpu_fref_check_variadic, enpu_fref_variadic},
    [ENPU_OP_MIN] = {enpu_fref_check_variadic, enpu_fref_variadic},
    [ENPU_OP_POW] = {enpu_fref_check_binary, enpu_fref_binary},
    [ENPU_OP_SQRT] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_EXP] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_LOG] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_ERF] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_NEG] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_ABS] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_RECIPROCAL] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_FLOOR] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_CEIL] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_GELU] = {enpu_fref_check_unary, enpu_fref_unary},
    [ENPU_OP_LAYER_NORM] = {enpu_fref_check_layer_norm, enpu_fref_layer_norm},
    [ENPU_OP_GATHER] = {enpu_fref_check_gather, enpu_fref_gather},
    [ENPU_OP_WHERE] = {enpu_fref_check_where, enpu_fref_where},
    [ENPU_OP_EXPAND] = {enpu_fref_check_expand, enpu_fref_expand},
    [ENPU_OP_QUANTIZE_LINEAR] = {enpu_fref_check_qdq, enpu_fref_qdq},
    [ENPU_OP_DEQUANTIZE_LINEAR] = {enpu_fref_check_qdq, enpu_fref_qdq},
    [ENPU_OP_LSTM] = {enpu_fref_check_rnn, enpu_fref_rnn},
    [ENPU_OP_GRU] = {enpu_fref_check_rnn, enpu_fref_rnn},
    [ENPU_OP_RNN] = {enpu_fref_check_rnn, enpu_fref_rnn},
    [ENPU_OP_ARGMAX] = {enpu_fref_check_arg, enpu_fref_arg},
    [ENPU_OP_ARGMIN] = {enpu_fref_check_arg, enpu_fref_arg},
};

static const op_impl *impl_of(const enpu_node *n) {
    if (n->op <= ENPU_OP_NONE || n->op >= ENPU_OP_COUNT || !k_ops[n->op].run) return NULL;
    return &k_ops[n->op];
}

/* Integer and bool tensors are carried as float32 values (exact up to 2^24
 * in magnitude), float64 ones rounded to float32; float16, bfloat16 and
 * strings are not computed on. */
bool enpu_fref_carries(enpu_dtype dt) {
    switch (dt) {
    case ENPU_DT_FLOAT32: case ENPU_DT_FLOAT64: case ENPU_DT_UINT8: case ENPU_DT_INT8: case ENPU_DT_UINT16:
    case ENPU_DT_INT16: case ENPU_DT_INT32: case ENPU_DT_INT64: case ENPU_DT_BOOL:
    case ENPU_DT_UINT32: case ENPU_DT_UINT64:
        return true;
    default:
        return false;
    }
}

/* A tensor the float reference computes on: float32 or an integer carried in
 * float32 (enpu_fref_carries), with an inferred, in-limit shape. */
static int check_value_tensor(const enpu_node *n, const enpu_tensor *t, const char *role,
                              enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    if (!enpu_fref_carries(t->dtype))
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: %s '%s' is %s; the float reference computes in float32 (float64 and "
                         "integers carried in it) only",
                         enpu_fref_what(n, what, sizeof what), role, t->name,
                         enpu_dtype_name(t->dtype));
    if (t->rank < 0 || t->rank > ENPU_MAX_RANK)
        return enpu_fail(err, ENPU_E_INVALID, "%s: %s '%s' has no inferred shape",
                         enpu_fref_what(n, what, sizeof what), role, t->name);
    int64_t numel;
    int rc = enpu_shape_numel(t->rank, t->dims, &numel, t->name, err);
    if (rc) {
        enpu_err_prefix(err, "%s", enpu_fref_what(n, what, sizeof what));
        return rc;
    }
    return 0;
}

/* Everything a kernel relies on, short of the values themselves. */
static int check_node(const enpu_graph *g, const enpu_node *n, enpu_err *err) {
    char what[ENPU_MAX_NAME + 64];
    const op_impl *impl = impl_of(n);
    if (!impl)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': op %s has no float reference",
                         n->name ? n->name : "", enpu_op_name(n->op));
    for (int i = 0; n->n_in >= 0 && n->n_out >= 0 && i < n->n_in + n->n_out; i++) {
        int t = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        if (t < -1 || t >= g->n_tensors)
            return enpu_fail(err, ENPU_E_INVALID, "%s: bad tensor index %d",
                             enpu_fref_what(n, what, sizeof what), t);
    }
    if (n->n_in < 0 || n->n_out < 1 || !enpu_node_output(g, n, 0))
        return enpu_fail(err, ENPU_E_INVALID, "%s: has no output",
                         enpu_fref_what(n, what, sizeof what));
    if (n->n_in < min_inputs(n->op))
        return enpu_fail(err, ENPU_E_INVALID, "%s: has %d inputs, needs at least %d",
                         enpu_fref_what(n, what, sizeof what), n->n_in, min_inputs(n->op));
    for (int i = 0; i < n->n_in; i++) {
        if (!enpu_fref_value_input(n, i)) continue;
        const enpu_tensor *t = enpu_node_input(g, n, i);
        if (!t) {
            if (enpu_fref_required_input(n, i))
                return enpu_fail(err, ENPU_E_INVALID, "%s: required input #%d is missing",
                                 enpu_fref_what(n, what, sizeof what), i);
            continue;
        }
        int rc = check_value_tensor(n, t, "input", err);
        if (rc) return rc;
    }
    for (int i = 0; i < n->n_out; i++) {
        const enpu_tensor *t = enpu_node_output(g, n, i);
        if (!t || !enpu_fref_value_output(n, i)) continue;
        int rc = check_value_tensor(n, t, "output", err);
        if (rc) return rc;
    }
    return impl->check(g, n, err);
}

/* Integer outputs of a node rounded to their dtype (enpu_int_value, the
 * numerics rule the golden reference's and the simulator's host ops share). */
static void to_int_outputs(const enpu_graph *g, const enpu_node *n, float *const *out) {
    for (int i = 0; i < n->n_out; i++) {
        const enpu_tensor *t = enpu_node_output(g, n, i);
        if (!t || !out[i] || t->dtype == ENPU_DT_FLOAT32 || t->dtype == ENPU_DT_FLOAT64 ||
            !enpu_fref_value_output(n, i))
            continue;
        int64_t numel = enpu_tensor_numel(t);
        for (int64_t k = 0; k < numel; k++) out[i][k] = enpu_int_value(t->dtype, out[i][k]);
    }
}

/* What only a run's values can break: computed Gather indices. */
static int check_values(const enpu_graph *g, const enpu_node *n, const float *const *in, enpu_err *err) {
    if (n->op != ENPU_OP_GATHER || !in[1] || (g->tensors[n->in[1]].flags & ENPU_T_CONST)) return 0;
    return enpu_fref_check_gather_values(g, n, in[1], err);
}

int enpu_fref_node(const enpu_graph *g, const enpu_node *n, const float *const *in,
                   float *const *out, enpu_err *err) {
    if (!g || !n || (n->n_in > 0 && !in) || !out)
        return enpu_fail(err, ENPU_E_USAGE, "enpu_fref_node: NULL argument");
    int rc = check_node(g, n, err);
    if (rc) return rc;
    char what[ENPU_MAX_NAME + 64];
    for (int i = 0; i < n->n_in; i++)
        if (enpu_fref_value_input(n, i) && n->in[i] >= 0 && !in[i])
            return enpu_fail(err, ENPU_E_USAGE, "%s: no value given for input #%d",
                             enpu_fref_what(n, what, sizeof what), i);
    if (!out[0])
        return enpu_fail(err, ENPU_E_USAGE, "%s: no buffer given for output #0",
                         enpu_fref_what(n, what, sizeof what));
    if ((rc = check_values(g, n, in, err))) return rc;
    impl_of(n)->run(g, n, in, out);
    to_int_outputs(g, n, out);
    return 0;
}

/* --- executor ------------------------------------------------------------------- */

void enpu_fexec_free(enpu_fexec *ex) {
    if (!ex) return;
    if (ex->val)
        for (int t = 0; t < ex->g->n_tensors; t++)
            if (ex->owned[t]) free(ex->val[t]);
    free(ex->val);
    free(ex->owned);
    free(ex->order);
    free(ex->args_in);
    free(ex->args_out);
    free(ex);
}

static int alloc_value(enpu_fexec *ex, int t, enpu_err *err) {
    int64_t numel = enpu_tensor_numel(&ex->g->tensors[t]);
    ex->val[t] = calloc(numel > 0 ? (size_t)numel : 1, sizeof(float));
    if (!ex->val[t])
        return enpu_fail(err, ENPU_E_NOMEM, "tensor '%s': cannot allocate %lld floats",
                         ex->g->tensors[t].name, (long long)numel);
    ex->owned[t] = true;
    return 0;
}

/* The value of a float32 constant aliases its data: the graph outlives the
 * executor and constants are never written.  An integer constant (checked
 * by the caller) is converted into a buffer of its own. */
static int bind_constant(enpu_fexec *ex, int t, const char *user, enpu_err *err) {
    const enpu_tensor *tt = &ex->g->tensors[t];
    if ((tt->flags & ENPU_T_CONST) && !tt->data && enpu_tensor_numel(tt) == 0)
        return alloc_value(ex, t, err); /* an empty constant may have no data */
    if (!(tt->flags & ENPU_T_CONST) || !tt->data)
        return enpu_fail(err, ENPU_E_INVALID,
                         "%s: tensor '%s' is neither a graph input, a constant nor computed "
                         "before it (graph not in topological order?)",
                         user, tt->name);
    if (tt->dtype == ENPU_DT_FLOAT32) {
        ex->val[t] = tt->data;
        return 0;
    }
    int rc = alloc_value(ex, t, err);
    if (rc) return rc;
    enpu_buf b = {.dtype = tt->dtype, .rank = tt->rank, .data = tt->data};
    memcpy(b.dims, tt->dims, sizeof b.dims);
    int64_t numel = enpu_tensor_numel(tt);
    size_t esz = enpu_dtype_size(tt->dtype);
    b.data = malloc((size_t)(numel ? numel : 1) * esz);
    if (!b.data) return enpu_fail(err, ENPU_E_NOMEM, "tensor '%s': out of memory", tt->name);
    memcpy(b.data, tt->data, (size_t)numel * esz);
    rc = enpu_buf_to_f32(&b, err);
    if (rc == 0) memcpy(ex->val[t], b.data, (size_t)numel * sizeof(float));
    free(b.data);
    return rc;
}

static int prepare(enpu_fexec *ex, enpu_err *err) {
    const enpu_graph *g = ex->g;
    int max_in = 1, max_out = 1, rc;
    for (int i = 0; i < g->n_inputs; i++) {
        int t = g->inputs[i];
        if (t < 0 || t >= g->n_tensors)
            return enpu_fail(err, ENPU_E_INVALID, "graph input #%d: bad tensor index", i);
        const enpu_tensor *tt = &g->tensors[t];
        if (!enpu_fref_carries(tt->dtype))
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "graph input '%s' is %s; the float reference computes in float32 "
                             "(float64 and integers carried in it) only",
                             tt->name, enpu_dtype_name(tt->dtype));
        if (tt->rank < 0)
            return enpu_fail(err, ENPU_E_INVALID, "graph input '%s' has no shape", tt->name);
        int64_t numel;
        if ((rc = enpu_shape_numel(tt->rank, tt->dims, &numel, tt->name, err))) return rc;
        if (!ex->val[t] && (rc = alloc_value(ex, t, err))) return rc;
    }
    char what[ENPU_MAX_NAME + 64];
    for (int k = 0; k < g->n_nodes; k++) {
        const enpu_node *n = &g->nodes[k];
        if (n->dead) continue;
        if ((rc = check_node(g, n, err))) return rc;
        enpu_fref_what(n, what, sizeof what);
        for (int i = 0; i < n->n_in; i++) {
            if (!enpu_fref_value_input(n, i) || n->in[i] < 0 || ex->val[n->in[i]]) continue;
            if ((rc = bind_constant(ex, n->in[i], what, err))) return rc;
        }
        for (int i = 0; i < n->n_out; i++) {
            int t = n->out[i];
            if (t < 0 || !enpu_fref_value_output(n, i)) continue;
            if (ex->val[t])
                return enpu_fail(err, ENPU_E_INVALID,
                                 "%s: output '%s' is already a graph input, a constant or the "
                                 "output of another node",
                                 what, g->tensors[t].name);
            if ((rc = alloc_value(ex, t, err))) return rc;
        }
        if (n->n_in > max_in) max_in = n->n_in;
        if (n->n_out > max_out) max_out = n->n_out;
        ex->order[ex->n_order++] = k;
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int t = g->outputs[i];
        if (t < 0 || t >= g->n_tensors)
            return enpu_fail(err, ENPU_E_INVALID, "graph output #%d: bad tensor index", i);
        if (ex->val[t]) continue;
        const enpu_tensor *tt = &g->tensors[t];
        if (tt->producer >= 0)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "graph output '%s' is an output the float reference does not "
                             "compute (a Dropout mask or training-mode statistic)",
                             tt->name);
        if (!enpu_fref_carries(tt->dtype) || tt->rank < 0)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "graph output '%s' is a %s constant; the float reference computes "
                             "in float32 (float64 and integers carried in it) only",
                             tt->name, enpu_dtype_name(tt->dtype));
        if ((rc = bind_constant(ex, t, "graph output", err))) return rc;
    }
    ex->args_in = calloc((size_t)max_in, sizeof *ex->args_in);
    ex->args_out = calloc((size_t)max_out, sizeof *ex->args_out);
    if (!ex->args_in || !ex->args_out) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    return 0;
}

int enpu_fexec_new(const enpu_graph *g, enpu_fexec **out, enpu_err *err) {
    if (!out) return enpu_fail(err, ENPU_E_USAGE, "enpu_fexec_new: NULL output pointer");
    *out = NULL;
    if (!g) return enpu_fail(err, ENPU_E_USAGE, "enpu_fexec_new: NULL graph");
    enpu_fexec *ex = calloc(1, sizeof *ex);
    if (!ex) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    ex->g = g;
    size_t nt = g->n_tensors > 0 ? (size_t)g->n_tensors : 1;
    ex->val = calloc(nt, sizeof *ex->val);
    ex->owned = calloc(nt, sizeof *ex->owned);
    ex->order = calloc(g->n_nodes > 0 ? (size_t)g->n_nodes : 1, sizeof *ex->order);
    int rc = (!ex->val || !ex->owned || !ex->order) ? enpu_fail(err, ENPU_E_NOMEM, "out of memory")
                                                    : prepare(ex, err);
    if (rc) {
        if (g->name && g->name[0]) enpu_err_prefix(err, "%s", g->name);
        enpu_fexec_free(ex);
        return rc;
    }
    *out = ex;
    return 0;
}

/* Converts input buffer b into the float32 value of graph input t. */
static int load_input(enpu_fexec *ex, int i, const enpu_buf *b, enpu_err *err) {
    int t = ex->g->inputs[i];
    const enpu_tensor *tt = &ex->g->tensors[t];
    char have[160], want[160];
    (void)have, (void)want;
    if (!enpu_shape_fits(b->rank, b->dims, tt->rank, tt->dims))
        return enpu_shape_error(err, NULL, tt->name, b->rank, b->dims, tt->rank, tt->dims);
    int64_t numel = enpu_tensor_numel(tt);
    size_t esz = enpu_dtype_size(b->dtype);
    if (esz == 0)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "input #%d '%s': dtype %s is not numeric", i,
                         tt->name, enpu_dtype_name(b->dtype));
    if (numel == 0) return 0;
    if (!b->data)
        return enpu_fail(err, ENPU_E_USAGE, "input #%d '%s': buffer has no data", i, tt->name);
    if (b->dtype == ENPU_DT_FLOAT32) {
        memcpy(ex->val[t], b->data, (size_t)numel * sizeof(float));
        return 0;
    }
    enpu_buf tmp = *b;
    tmp.name = NULL;
    tmp.data = malloc((size_t)numel * esz);
    if (!tmp.data) return enpu_fail(err, ENPU_E_NOMEM, "input '%s': out of memory", tt->name);
    memcpy(tmp.data, b->data, (size_t)numel * esz);
    int rc = enpu_buf_to_f32(&tmp, err);
    if (rc == 0) memcpy(ex->val[t], tmp.data, (size_t)numel * sizeof(float));
    else enpu_err_prefix(err, "input #%d '%s'", i, tt->name);
    enpu_buf_free(&tmp);
    return rc;
}

int enpu_fexec_run_n(enpu_fexec *ex, int n_inputs, const enpu_buf *inputs, enpu_err *err) {
    if (!ex) return enpu_fail(err, ENPU_E_USAGE, "enpu_fexec_run: NULL executor");
    const enpu_graph *g = ex->g;
    if (n_inputs != g->n_inputs || (n_inputs > 0 && !inputs))
        return enpu_fail(err, ENPU_E_USAGE, "%s: the graph has %d input%s%s%s, %d given",
                         g->name ? g->name : "graph", g->n_inputs, g->n_inputs == 1 ? "" : "s",
                         g->n_inputs > 0 ? " starting with " : "",
                         g->n_inputs > 0 ? g->tensors[g->inputs[0]].name : "",
                         inputs ? n_inputs : 0);
    for (int i = 0; i < n_inputs; i++) {
        int rc = load_input(ex, i, &inputs[i], err);
        if (rc) return rc;
    }
    for (int k = 0; k < ex->n_order; k++) {
        const enpu_node *n = &g->nodes[ex->order[k]];
        for (int i = 0; i < n->n_in; i++)
            ex->args_in[i] =
                (enpu_fref_value_input(n, i) && n->in[i] >= 0) ? ex->val[n->in[i]] : NULL;
        for (int i = 0; i < n->n_out; i++)
            ex->args_out[i] =
                (enpu_fref_value_output(n, i) && n->out[i] >= 0) ? ex->val[n->out[i]] : NULL;
        int rc = check_values(g, n, ex->args_in, err);
        if (rc) return rc;
        impl_of(n)->run(g, n, ex->args_in, ex->args_out);
        to_int_outputs(g, n, ex->args_out);
    }
    return 0;
}

int enpu_fexec_run(enpu_fexec *ex, const enpu_buf *inputs, enpu_err *err) {
    if (!ex) return enpu_fail(err, ENPU_E_USAGE, "enpu_fexec_run: NULL executor");
    return enpu_fexec_run_n(ex, ex->g->n_inputs, inputs, err);
}

const float *enpu_fexec_value(const enpu_fexec *ex, int t) {
    if (!ex || t < 0 || t >= ex->g->n_tensors) return NULL;
    return ex->val[t];
}

int enpu_fexec_output(const enpu_fexec *ex, int i, enpu_buf *out, enpu_err *err) {
    if (!ex || !out) return enpu_fail(err, ENPU_E_USAGE, "enpu_fexec_output: NULL argument");
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= ex->g->n_outputs)
        return enpu_fail(err, ENPU_E_USAGE, "output #%d does not exist (the graph has %d)", i,
                         ex->g->n_outputs);
    const enpu_tensor *t = &ex->g->tensors[ex->g->outputs[i]];
    int rc = enpu_buf_alloc(out, ENPU_DT_FLOAT32, t->rank, t->dims, err);
    if (rc) return rc;
    int64_t numel = enpu_tensor_numel(t);
    if (numel > 0) memcpy(out->data, ex->val[ex->g->outputs[i]], (size_t)numel * sizeof(float));
    out->name = strdup(t->name);
    if (!out->name) {
        enpu_buf_free(out);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    return 0;
}
