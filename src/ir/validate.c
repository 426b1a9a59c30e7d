/* Topological ordering and structural validation of a graph. */
#include <stdlib.h>
#include <string.h>

#include "easynpu/ir.h"

/* Binary min-heap of node indices: picking the lowest ready index keeps the
 * file's order wherever dependencies allow, so listings stay recognizable. */
typedef struct heap {
    int *v;
    int n;
} heap;

static void heap_push(heap *h, int x) {
    int i = h->n++;
    h->v[i] = x;
    while (i > 0 && h->v[(i - 1) / 2] > h->v[i]) {
        int p = (i - 1) / 2, t = h->v[p];
        h->v[p] = h->v[i];
        h->v[i] = t;
        i = p;
    }
}

static int heap_pop(heap *h) {
    int top = h->v[0];
    h->v[0] = h->v[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->v[l] < h->v[m]) m = l;
        if (r < h->n && h->v[r] < h->v[m]) m = r;
        if (m == i) break;
        int t = h->v[m];
        h->v[m] = h->v[i];
        h->v[i] = t;
        i = m;
    }
    return top;
}

int enpu_graph_toposort(enpu_graph *g, enpu_err *err) {
    int n = g->n_nodes;
    if (n == 0) return 0;
    int *pending = calloc((size_t)n, sizeof(int));   /* unresolved inputs per node */
    int *start = calloc((size_t)n + 1, sizeof(int)); /* CSR of consumer lists per node */
    int *order = malloc((size_t)n * sizeof(int));
    int n_edges = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0 && g->tensors[g->nodes[i].in[k]].producer >= 0) n_edges++;
    int *adj = malloc((size_t)(n_edges ? n_edges : 1) * sizeof(int));
    heap h = {malloc((size_t)n * sizeof(int)), 0};
    if (!pending || !start || !order || !adj || !h.v) {
        free(pending); free(start); free(order); free(adj); free(h.v);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory sorting %d nodes", n);
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            int t = g->nodes[i].in[k];
            if (t >= 0 && g->tensors[t].producer >= 0) {
                start[g->tensors[t].producer + 1]++;
                pending[i]++;
            }
        }
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    int *fill = calloc((size_t)n, sizeof(int));
    if (!fill) {
        free(pending); free(start); free(order); free(adj); free(h.v);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory sorting %d nodes", n);
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            int t = g->nodes[i].in[k];
            if (t >= 0 && g->tensors[t].producer >= 0) {
                int p = g->tensors[t].producer;
                adj[start[p] + fill[p]++] = i;
            }
        }
    for (int i = 0; i < n; i++)
        if (pending[i] == 0) heap_push(&h, i);
    int done = 0;
    while (h.n > 0) {
        int u = heap_pop(&h);
        order[done++] = u;
        for (int e = start[u]; e < start[u + 1]; e++)
            if (--pending[adj[e]] == 0) heap_push(&h, adj[e]);
    }
    int rc = 0;
    if (done != n) {
        int culprit = 0;
        while (culprit < n && pending[culprit] == 0) culprit++;
        rc = enpu_fail(err, ENPU_E_INVALID,
                       "graph has a cycle: node '%s' (%s) depends on its own output",
                       g->nodes[culprit].name, enpu_op_name(g->nodes[culprit].op));
    } else {
        enpu_node *sorted = malloc((size_t)n * sizeof *sorted);
        int *newpos = malloc((size_t)n * sizeof(int));
        if (!sorted || !newpos) {
            free(sorted);
            free(newpos);
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory sorting %d nodes", n);
        } else {
            for (int i = 0; i < n; i++) {
                sorted[i] = g->nodes[order[i]];
                newpos[order[i]] = i;
            }
            memcpy(g->nodes, sorted, (size_t)n * sizeof *sorted);
            for (int t = 0; t < g->n_tensors; t++)
                if (g->tensors[t].producer >= 0) g->tensors[t].producer = newpos[g->tensors[t].producer];
            free(sorted);
            free(newpos);
        }
    }
    free(pending); free(start); free(order); free(adj); free(h.v); free(fill);
    return rc;
}

/* Inputs an op needs (min) and accepts (max). */
static void op_arity(enpu_op op, int *min, int *max) {
    *min = 1;
    *max = 1;
    switch (op) {
    case ENPU_OP_CONV: *min = 2; *max = 3; break;
    case ENPU_OP_GEMM: *min = 2; *max = 3; break;
    case ENPU_OP_MATMUL: case ENPU_OP_ADD: case ENPU_OP_SUB: case ENPU_OP_MUL: case ENPU_OP_DIV:
    case ENPU_OP_PRELU:
        *min = *max = 2; break;
    case ENPU_OP_BATCHNORM: *min = *max = 5; break;
    case ENPU_OP_RESHAPE: *min = 1; *max = 2; break;
    case ENPU_OP_CONCAT: case ENPU_OP_MAX: case ENPU_OP_MIN: *min = 1; *max = 64; break;
    case ENPU_OP_POW: case ENPU_OP_GATHER: case ENPU_OP_EQUAL: case ENPU_OP_EXPAND:
        *min = *max = 2; break;
    case ENPU_OP_CONV_TRANSPOSE: case ENPU_OP_LAYER_NORM: *min = 2; *max = 3; break;
    case ENPU_OP_WHERE: case ENPU_OP_RANGE: *min = *max = 3; break;
    case ENPU_OP_QUANTIZE_LINEAR: case ENPU_OP_DEQUANTIZE_LINEAR: *min = 2; *max = 3; break;
    case ENPU_OP_SPLIT: case ENPU_OP_REDUCE_SUM: *min = 1; *max = 2; break;
    case ENPU_OP_SLICE: *min = 1; *max = 5; break;
    case ENPU_OP_RESIZE: *min = 1; *max = 4; break;
    /* bounds / value computed by the graph stay inputs (folded when constant) */
    case ENPU_OP_CLIP: case ENPU_OP_PAD: *min = 1; *max = 3; break;
    case ENPU_OP_LSTM: *min = 3; *max = 8; break;
    case ENPU_OP_GRU: case ENPU_OP_RNN: *min = 3; *max = 6; break;
    case ENPU_OP_QLINEAR_CONV: *min = 8; *max = 9; break;
    case ENPU_OP_QLINEAR_MATMUL: *min = *max = 8; break;
    default: break;
    }
}

int enpu_graph_validate(const enpu_graph *g, enpu_err *err) {
    if (g->n_outputs == 0) return enpu_fail(err, ENPU_E_INVALID, "graph has no outputs");
    char *avail = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), 1);
    if (!avail) return enpu_fail(err, ENPU_E_NOMEM, "out of memory validating the graph");
    int rc = 0;
    for (int t = 0; t < g->n_tensors && !rc; t++) {
        const enpu_tensor *tt = &g->tensors[t];
        if (tt->flags & ENPU_T_CONST) {
            if (!tt->data || tt->rank < 0)
                rc = enpu_fail(err, ENPU_E_INVALID, "constant '%s' has no data or shape", tt->name);
            avail[t] = 1;
        }
        if (tt->flags & ENPU_T_INPUT) {
            if (tt->rank < 0)
                rc = enpu_fail(err, ENPU_E_INVALID, "graph input '%s' has no shape", tt->name);
            avail[t] = 1;
        }
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        int mn, mx;
        op_arity(n->op, &mn, &mx);
        if (n->op <= ENPU_OP_NONE || n->op >= ENPU_OP_COUNT) {
            rc = enpu_fail(err, ENPU_E_INVALID, "node '%s': unknown op", n->name);
            break;
        }
        if (n->n_in < mn || n->n_in > mx) {
            rc = enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): has %d inputs, needs %d..%d",
                           n->name, enpu_op_name(n->op), n->n_in, mn, mx);
            break;
        }
        for (int k = 0; k < n->n_in && !rc; k++) {
            int t = n->in[k];
            if (t < 0) {
                if (k < mn)
                    rc = enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): required input %d is missing",
                                   n->name, enpu_op_name(n->op), k);
                continue;
            }
            if (!avail[t])
                rc = enpu_fail(err, ENPU_E_INVALID,
                               "node '%s' (%s): input '%s' is neither a graph input, a constant "
                               "nor the output of an earlier node",
                               n->name, enpu_op_name(n->op), g->tensors[t].name);
            else if (g->tensors[t].rank < 0)
                rc = enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): input '%s' has no shape",
                               n->name, enpu_op_name(n->op), g->tensors[t].name);
        }
        for (int k = 0; k < n->n_out && !rc; k++) {
            int t = n->out[k];
            if (t < 0) continue;
            if (g->tensors[t].producer != i)
                rc = enpu_fail(err, ENPU_E_INVALID, "node '%s': output '%s' has another producer",
                               n->name, g->tensors[t].name);
            else if (g->tensors[t].rank < 0)
                rc = enpu_fail(err, ENPU_E_INVALID, "node '%s' (%s): output '%s' has no shape",
                               n->name, enpu_op_name(n->op), g->tensors[t].name);
            avail[t] = 1;
        }
    }
    for (int i = 0; i < g->n_outputs && !rc; i++)
        if (!avail[g->outputs[i]])
            rc = enpu_fail(err, ENPU_E_INVALID, "graph output '%s' is not produced by any node",
                           g->tensors[g->outputs[i]].name);
    free(avail);
    return rc;
}
