/* Graph construction and ownership.  Tensor names are indexed by an
 * open-addressing hash so that large (or hostile) models do not make lookups
 * quadratic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/ir.h"

void (*enpu_qnode_free_hook)(struct enpu_qnode *q) = NULL;

/* --- dtypes and ops ------------------------------------------------------ */

size_t enpu_dtype_size(enpu_dtype dt) {
    switch (dt) {
    case ENPU_DT_FLOAT32: case ENPU_DT_INT32: case ENPU_DT_UINT32: return 4;
    case ENPU_DT_UINT8: case ENPU_DT_INT8: case ENPU_DT_BOOL: return 1;
    case ENPU_DT_UINT16: case ENPU_DT_INT16: return 2;
    case ENPU_DT_INT64: case ENPU_DT_FLOAT64: case ENPU_DT_UINT64: return 8;
    case ENPU_DT_UNDEFINED: break;
    }
    return 0;
}

double enpu_dtype_value_at(enpu_dtype dt, const void *d, int64_t i) {
    switch (dt) {
    case ENPU_DT_FLOAT32: return ((const float *)d)[i];
    case ENPU_DT_FLOAT64: return ((const double *)d)[i];
    case ENPU_DT_UINT8: return ((const uint8_t *)d)[i];
    case ENPU_DT_INT8: return ((const int8_t *)d)[i];
    case ENPU_DT_UINT16: return ((const uint16_t *)d)[i];
    case ENPU_DT_INT16: return ((const int16_t *)d)[i];
    case ENPU_DT_INT32: return ((const int32_t *)d)[i];
    case ENPU_DT_INT64: return (double)((const int64_t *)d)[i];
    case ENPU_DT_BOOL: return ((const uint8_t *)d)[i] != 0;
    case ENPU_DT_UINT32: return ((const uint32_t *)d)[i];
    case ENPU_DT_UINT64: return (double)((const uint64_t *)d)[i];
    case ENPU_DT_UNDEFINED: break;
    }
    return 0;
}

const char *enpu_dtype_name(enpu_dtype dt) {
    switch (dt) {
    case ENPU_DT_FLOAT32: return "float32";
    case ENPU_DT_UINT8: return "uint8";
    case ENPU_DT_INT8: return "int8";
    case ENPU_DT_UINT16: return "uint16";
    case ENPU_DT_INT16: return "int16";
    case ENPU_DT_INT32: return "int32";
    case ENPU_DT_INT64: return "int64";
    case ENPU_DT_BOOL: return "bool";
    case ENPU_DT_FLOAT64: return "float64";
    case ENPU_DT_UINT32: return "uint32";
    case ENPU_DT_UINT64: return "uint64";
    case ENPU_DT_UNDEFINED: break;
    }
    return "unknown";
}

static const char *const op_names[ENPU_OP_COUNT] = {
    [ENPU_OP_NONE] = "None",
#define ENPU_X_NAME(id, onnx) [ENPU_OP_##id] = onnx,
    ENPU_OP_LIST(ENPU_X_NAME)
#undef ENPU_X_NAME
};

const char *enpu_op_name(enpu_op op) {
    return (op > ENPU_OP_NONE && op < ENPU_OP_COUNT) ? op_names[op] : "None";
}

enpu_op enpu_op_from_name(const char *name) {
    for (int i = 1; i < ENPU_OP_COUNT; i++)
        if (strcmp(op_names[i], name) == 0) return (enpu_op)i;
    return ENPU_OP_NONE;
}

enpu_op enpu_op_from_onnx(const char *op_type) {
    enpu_op op = enpu_op_from_name(op_type);
    return op == ENPU_OP_SILU ? ENPU_OP_NONE : op; /* a fusion's op, not ONNX's */
}

/* --- shapes -------------------------------------------------------------- */

int enpu_shape_numel(int rank, const int64_t *dims, int64_t *out, const char *what, enpu_err *err) {
    if (rank < 0 || rank > ENPU_MAX_RANK)
        return enpu_fail(err, ENPU_E_LIMIT, "tensor '%s': rank %d is outside 0..%d", what, rank,
                         ENPU_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return enpu_fail(err, ENPU_E_INVALID, "tensor '%s': dimension %d is negative (%lld)",
                             what, i, (long long)dims[i]);
        if (dims[i] > ENPU_MAX_DIM)
            return enpu_fail(err, ENPU_E_LIMIT,
                             "tensor '%s': dimension %d is %lld, over the limit of %lld", what, i,
                             (long long)dims[i], (long long)ENPU_MAX_DIM);
        if (dims[i] != 0 && n > ENPU_MAX_ELEMS / dims[i]) {
            /* Keep scanning for a zero dim would not make the count smaller than
             * the partial product overflowing the limit; refuse now. */
            return enpu_fail(err, ENPU_E_LIMIT,
                             "tensor '%s': element count overflows the limit of %lld elements",
                             what, (long long)ENPU_MAX_ELEMS);
        }
        n *= dims[i];
    }
    if (out) *out = n;
    return 0;
}

int64_t enpu_tensor_numel(const enpu_tensor *t) {
    ENPU_ASSERT(t->rank >= 0);
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

size_t enpu_tensor_nbytes(const enpu_tensor *t) {
    return (size_t)enpu_tensor_numel(t) * enpu_dtype_size(t->dtype);
}

char *enpu_shape_str(const enpu_tensor *t, char *buf, size_t n) {
    size_t pos = 0;
    buf[0] = 0;
    if (t->rank < 0) {
        snprintf(buf, n, "?");
        return buf;
    }
    if (t->rank == 0) {
        snprintf(buf, n, "scalar");
        return buf;
    }
    for (int i = 0; i < t->rank && pos < n; i++)
        pos += (size_t)snprintf(buf + pos, n - pos, i ? "x%lld" : "%lld", (long long)t->dims[i]);
    return buf;
}

/* --- name index ---------------------------------------------------------- */

typedef struct name_index {
    int cap;  /* power of two */
    int *slot; /* tensor index or -1 */
} name_index;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int index_rebuild(enpu_graph *g, int cap) {
    name_index *ix = g->name_index;
    int *slot = malloc((size_t)cap * sizeof *slot);
    if (!slot) return -1;
    for (int i = 0; i < cap; i++) slot[i] = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        uint64_t h = hash_str(g->tensors[t].name) & (uint64_t)(cap - 1);
        while (slot[h] >= 0) h = (h + 1) & (uint64_t)(cap - 1);
        slot[h] = t;
    }
    free(ix->slot);
    ix->slot = slot;
    ix->cap = cap;
    return 0;
}

int enpu_graph_find_tensor(const enpu_graph *g, const char *name) {
    const name_index *ix = g->name_index;
    if (!ix || ix->cap == 0) return -1;
    uint64_t h = hash_str(name) & (uint64_t)(ix->cap - 1);
    while (ix->slot[h] >= 0) {
        if (strcmp(g->tensors[ix->slot[h]].name, name) == 0) return ix->slot[h];
        h = (h + 1) & (uint64_t)(ix->cap - 1);
    }
    return -1;
}

/* --- building ------------------------------------------------------------ */

static char *dupstr(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

enpu_graph *enpu_graph_new(const char *name) {
    enpu_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = dupstr(name ? name : "");
    g->name_index = calloc(1, sizeof(name_index));
    if (!g->name || !g->name_index) {
        free(g->name);
        free(g->name_index);
        free(g);
        return NULL;
    }
    return g;
}

static void quant_free(enpu_quant *q) {
    if (!q) return;
    free(q->scale);
    free(q->zero_point);
    free(q);
}

void enpu_graph_free(enpu_graph *g) {
    if (!g) return;
    for (int i = 0; i < g->n_tensors; i++) {
        free(g->tensors[i].name);
        free(g->tensors[i].data);
        quant_free(g->tensors[i].quant);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i].name);
        free(g->nodes[i].in);
        free(g->nodes[i].out);
        if (g->nodes[i].q && enpu_qnode_free_hook) enpu_qnode_free_hook(g->nodes[i].q);
    }
    name_index *ix = g->name_index;
    if (ix) free(ix->slot);
    free(ix);
    free(g->tensors);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->name);
    free(g);
}

int enpu_graph_add_tensor(enpu_graph *g, const char *name, enpu_dtype dt, int rank,
                          const int64_t *dims, enpu_err *err) {
    if (strlen(name) > ENPU_MAX_NAME)
        return enpu_fail(err, ENPU_E_LIMIT, "tensor name of %zu bytes is over the limit of %d",
                         strlen(name), ENPU_MAX_NAME);
    if (enpu_graph_find_tensor(g, name) >= 0)
        return enpu_fail(err, ENPU_E_INVALID, "tensor '%s' is defined twice", name);
    if (rank > ENPU_MAX_RANK)
        return enpu_fail(err, ENPU_E_LIMIT, "tensor '%s': rank %d is over the limit of %d", name,
                         rank, ENPU_MAX_RANK);
    if (rank >= 0) {
        int rc = enpu_shape_numel(rank, dims, NULL, name, err);
        if (rc) return rc;
    }
    /* dims may be another tensor's (a rewrite copying a shape): read them
     * before the array moves */
    int64_t d[ENPU_MAX_RANK];
    for (int i = 0; i < rank; i++) d[i] = dims[i];
    if (g->n_tensors >= ENPU_MAX_TENSORS)
        return enpu_fail(err, ENPU_E_LIMIT, "model has more than %d tensors", ENPU_MAX_TENSORS);
    if (g->n_tensors == g->cap_tensors) {
        int cap = g->cap_tensors ? 2 * g->cap_tensors : 64;
        enpu_tensor *nt = realloc(g->tensors, (size_t)cap * sizeof *nt);
        if (!nt) return enpu_fail(err, ENPU_E_NOMEM, "out of memory adding tensor '%s'", name);
        g->tensors = nt;
        g->cap_tensors = cap;
    }
    enpu_tensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = dupstr(name);
    if (!t->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory adding tensor '%s'", name);
    t->dtype = dt;
    t->rank = rank < 0 ? -1 : rank;
    for (int i = 0; i < rank; i++) t->dims[i] = d[i];
    t->producer = -1;
    g->n_tensors++;
    name_index *ix = g->name_index;
    if ((int64_t)g->n_tensors * 2 > ix->cap) {
        if (index_rebuild(g, ix->cap ? ix->cap * 2 : 256) != 0) {
            g->n_tensors--;
            free(t->name);
            return enpu_fail(err, ENPU_E_NOMEM, "out of memory indexing tensor '%s'", name);
        }
    } else {
        uint64_t h = hash_str(name) & (uint64_t)(ix->cap - 1);
        while (ix->slot[h] >= 0) h = (h + 1) & (uint64_t)(ix->cap - 1);
        ix->slot[h] = g->n_tensors - 1;
    }
    return g->n_tensors - 1;
}

void enpu_tensor_set_data(enpu_tensor *t, void *data) {
    free(t->data);
    t->data = data;
    t->flags |= ENPU_T_CONST;
}

int enpu_graph_add_node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in,
                        int n_out, const int *out, enpu_err *err) {
    if (g->n_nodes >= ENPU_MAX_NODES)
        return enpu_fail(err, ENPU_E_LIMIT, "model has more than %d nodes", ENPU_MAX_NODES);
    if (n_in < 0 || n_out < 1 || n_in > 64 || n_out > 64)
        return enpu_fail(err, ENPU_E_INVALID, "node '%s': %d inputs and %d outputs", name, n_in,
                         n_out);
    for (int i = 0; i < n_in; i++)
        if (in[i] < -1 || in[i] >= g->n_tensors)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': input %d is not a tensor", name, i);
    for (int i = 0; i < n_out; i++) {
        if (i > 0 && out[i] == -1) continue; /* an optional output left out */
        if (out[i] < 0 || out[i] >= g->n_tensors)
            return enpu_fail(err, ENPU_E_INVALID, "node '%s': output %d is not a tensor", name, i);
        const enpu_tensor *t = &g->tensors[out[i]];
        if (t->producer >= 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "tensor '%s' is produced by both node '%s' and node '%s'", t->name,
                             g->nodes[t->producer].name, name);
        if (t->flags & (ENPU_T_CONST | ENPU_T_INPUT))
            return enpu_fail(err, ENPU_E_INVALID,
                             "node '%s' writes tensor '%s', which is a graph input or constant",
                             name, t->name);
    }
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 32;
        enpu_node *nn = realloc(g->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return enpu_fail(err, ENPU_E_NOMEM, "out of memory adding node '%s'", name);
        g->nodes = nn;
        g->cap_nodes = cap;
    }
    enpu_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = dupstr(name);
    n->in = malloc((size_t)(n_in ? n_in : 1) * sizeof(int));
    n->out = malloc((size_t)n_out * sizeof(int));
    if (!n->name || !n->in || !n->out) {
        free(n->name);
        free(n->in);
        free(n->out);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory adding node '%s'", name);
    }
    n->op = op;
    n->n_in = n_in;
    n->n_out = n_out;
    if (n_in) memcpy(n->in, in, (size_t)n_in * sizeof(int));
    memcpy(n->out, out, (size_t)n_out * sizeof(int));
    for (int i = 0; i < n_out; i++)
        if (out[i] >= 0) g->tensors[out[i]].producer = g->n_nodes;
    /* Neutral defaults so a hand-built node is usable without setting every field. */
    switch (op) {
    case ENPU_OP_CONV:
        n->attr.conv.group = 1;
        /* fallthrough */
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        for (int k = 0; k < 2; k++) {
            n->attr.conv.w.stride[k] = 1;
            n->attr.conv.w.dilation[k] = 1;
        }
        break;
    case ENPU_OP_GEMM:
        n->attr.gemm.alpha = n->attr.gemm.beta = 1.0f;
        break;
    case ENPU_OP_RELU:
    case ENPU_OP_CLIP:
        n->attr.act.min = op == ENPU_OP_RELU ? 0.0f : -INFINITY;
        n->attr.act.max = INFINITY;
        break;
    case ENPU_OP_LEAKY_RELU:
        n->attr.act.alpha = 0.01f;
        break;
    case ENPU_OP_HARD_SIGMOID:
        n->attr.act.alpha = 0.2f;
        n->attr.act.beta = 0.5f;
        break;
    case ENPU_OP_BATCHNORM:
        n->attr.bn.epsilon = 1e-5f;
        break;
    case ENPU_OP_FLATTEN:
        n->attr.shape.axis = 1;
        break;
    case ENPU_OP_SOFTMAX:
        n->attr.shape.axis = -1;
        break;
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN:
        enpu_rnn_attr_default(op, &n->attr.rnn);
        break;
    default:
        break;
    }
    return g->n_nodes++;
}

static int append_idx(int **arr, int *n, int v, enpu_err *err) {
    int *na = realloc(*arr, (size_t)(*n + 1) * sizeof(int));
    if (!na) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    na[(*n)++] = v;
    *arr = na;
    return 0;
}

int enpu_graph_add_input(enpu_graph *g, int tensor, enpu_err *err) {
    if (tensor < 0 || tensor >= g->n_tensors)
        return enpu_fail(err, ENPU_E_INVALID, "graph input is not a tensor");
    enpu_tensor *t = &g->tensors[tensor];
    if (t->flags & ENPU_T_INPUT)
        return enpu_fail(err, ENPU_E_INVALID, "graph input '%s' is listed twice", t->name);
    t->flags |= ENPU_T_INPUT;
    return append_idx(&g->inputs, &g->n_inputs, tensor, err);
}

int enpu_graph_add_output(enpu_graph *g, int tensor, enpu_err *err) {
    if (tensor < 0 || tensor >= g->n_tensors)
        return enpu_fail(err, ENPU_E_INVALID, "graph output is not a tensor");
    enpu_tensor *t = &g->tensors[tensor];
    if (t->flags & ENPU_T_OUTPUT)
        return enpu_fail(err, ENPU_E_INVALID, "graph output '%s' is listed twice", t->name);
    t->flags |= ENPU_T_OUTPUT;
    return append_idx(&g->outputs, &g->n_outputs, tensor, err);
}

int enpu_graph_freeze_input(enpu_graph *g, int tensor, void *data, enpu_err *err) {
    int pos = -1;
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == tensor) pos = i;
    if (pos < 0) {
        free(data);
        return enpu_fail(err, ENPU_E_USAGE, "tensor %d is not a graph input", tensor);
    }
    memmove(&g->inputs[pos], &g->inputs[pos + 1], (size_t)(g->n_inputs - pos - 1) * sizeof(int));
    g->n_inputs--;
    enpu_tensor *t = &g->tensors[tensor];
    t->flags &= ~(unsigned)ENPU_T_INPUT;
    enpu_tensor_set_data(t, data);
    return 0;
}

int enpu_tensor_set_quant(enpu_tensor *t, int axis, int count, const float *scale,
                          const int32_t *zp, enpu_err *err) {
    if (count < 1 || (count > 1 && axis < 0))
        return enpu_fail(err, ENPU_E_INVALID, "tensor '%s': bad quantization (axis %d, count %d)",
                         t->name, axis, count);
    enpu_quant *q = calloc(1, sizeof *q);
    if (q) {
        q->scale = malloc((size_t)count * sizeof(float));
        q->zero_point = malloc((size_t)count * sizeof(int32_t));
    }
    if (!q || !q->scale || !q->zero_point) {
        quant_free(q);
        return enpu_fail(err, ENPU_E_NOMEM, "tensor '%s': out of memory", t->name);
    }
    q->axis = count > 1 ? axis : -1;
    q->count = count;
    memcpy(q->scale, scale, (size_t)count * sizeof(float));
    if (zp)
        memcpy(q->zero_point, zp, (size_t)count * sizeof(int32_t));
    else
        memset(q->zero_point, 0, (size_t)count * sizeof(int32_t));
    quant_free(t->quant);
    t->quant = q;
    return 0;
}

void enpu_graph_compact(enpu_graph *g) {
    int *map = malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof(int));
    ENPU_ASSERT(map);
    int w = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead) {
            map[i] = -1;
            free(g->nodes[i].name);
            free(g->nodes[i].in);
            free(g->nodes[i].out);
            if (g->nodes[i].q && enpu_qnode_free_hook) enpu_qnode_free_hook(g->nodes[i].q);
            continue;
        }
        map[i] = w;
        g->nodes[w++] = g->nodes[i];
    }
    g->n_nodes = w;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].producer >= 0) g->tensors[t].producer = map[g->tensors[t].producer];
    free(map);
}

int enpu_graph_consumer(const enpu_graph *g, int t, int *count) {
    int first = -1, c = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == t) {
                if (first < 0) first = i;
                c++;
                break;
            }
    }
    if (count) *count = c;
    return first;
}
