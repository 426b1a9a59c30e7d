/* Float graph rewrites run before quantization (see passes.h).  Rewrites
 * never modify a constant in place (an initializer may be shared): folded
 * weights and biases are new constant tensors. */
#include "quant/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"

#define MAX_ROUNDS 64

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void enpu_qp_info_free(enpu_qp_info *info) {
    if (!info) return;
    for (int i = 0; i < info->n; i++) free(info->fused[i]);
    free(info->fused);
    info->fused = NULL;
    info->n = 0;
}

char *enpu_qp_unique_name(const enpu_graph *g, const char *base) {
    if (enpu_graph_find_tensor(g, base) < 0) return xstrdup(base);
    size_t len = strlen(base) + 24;
    char *s = malloc(len);
    if (!s) return NULL;
    for (long k = 1;; k++) {
        snprintf(s, len, "%s_%ld", base, k);
        if (enpu_graph_find_tensor(g, s) < 0) return s;
    }
}

/* --- clone ---------------------------------------------------------------- */

int enpu_qp_clone(const enpu_graph *g, enpu_graph **out, enpu_err *err) {
    *out = NULL;
    enpu_graph *c = enpu_graph_new(g->name);
    if (!c) return enpu_fail(err, ENPU_E_NOMEM, "out of memory copying the graph");
    c->opset = g->opset;
    int rc = 0;
    for (int t = 0; t < g->n_tensors && !rc; t++) {
        const enpu_tensor *s = &g->tensors[t];
        int idx = enpu_graph_add_tensor(c, s->name, s->dtype, s->rank, s->dims, err);
        if (idx < 0) {
            rc = idx;
            break;
        }
        enpu_tensor *d = &c->tensors[idx];
        d->layout = s->layout;
        if (s->quant)
            rc = enpu_tensor_set_quant(d, s->quant->axis, s->quant->count, s->quant->scale,
                                       s->quant->zero_point, err);
        if (!rc && (s->flags & ENPU_T_CONST) && s->data && s->rank >= 0) {
            size_t nb = enpu_tensor_nbytes(s);
            void *data = malloc(nb ? nb : 1);
            if (!data) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory copying '%s'", s->name);
                break;
            }
            if (nb) memcpy(data, s->data, nb);
            enpu_tensor_set_data(d, data);
        }
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        int k = enpu_graph_add_node(c, n->name, n->op, n->n_in, n->in, n->n_out, n->out, err);
        if (k < 0) {
            rc = k;
            break;
        }
        c->nodes[k].attr = n->attr;
        c->nodes[k].host = n->host;
    }
    for (int i = 0; i < g->n_inputs && !rc; i++) rc = enpu_graph_add_input(c, g->inputs[i], err);
    for (int i = 0; i < g->n_outputs && !rc; i++)
        rc = enpu_graph_add_output(c, g->outputs[i], err);
    if (rc) {
        enpu_graph_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* --- helpers -------------------------------------------------------------- */

typedef struct rw {
    enpu_graph *g;
    enpu_qp_info *info;
    int count;
    bool added; /* nodes were appended: the graph is sorted again at the end */
    enpu_err *err;
} rw;

static bool is_const_f32(const enpu_graph *g, int t) {
    if (t < 0 || t >= g->n_tensors) return false;
    const enpu_tensor *x = &g->tensors[t];
    return (x->flags & ENPU_T_CONST) && x->data && x->dtype == ENPU_DT_FLOAT32 && x->rank >= 0;
}

/* Used by exactly one node and not a graph output: safe to fold away. */
static bool single_use(const enpu_graph *g, int t) {
    if (t < 0 || (g->tensors[t].flags & ENPU_T_OUTPUT)) return false;
    int count = 0;
    enpu_graph_consumer(g, t, &count);
    return count == 1;
}

static bool same_dims(const enpu_tensor *a, const enpu_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static void kill(rw *r, int node) {
    enpu_node *n = &r->g->nodes[node];
    n->dead = true;
    r->count++;
}

static void rewire(enpu_graph *g, int from, int to) {
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == from) n->in[k] = to;
    }
}

/* Adds a float constant (takes `data`); returns its index or a negative status. */
static int add_const(rw *r, const char *base, int rank, const int64_t *dims, float *data) {
    char *name = enpu_qp_unique_name(r->g, base);
    if (!name) {
        free(data);
        return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    }
    int t = enpu_graph_add_tensor(r->g, name, ENPU_DT_FLOAT32, rank, dims, r->err);
    free(name);
    if (t < 0) {
        free(data);
        return t;
    }
    enpu_tensor_set_data(&r->g->tensors[t], data);
    return t;
}

static const char *names_of(const rw *r, int node) {
    return r->info->fused[node] ? r->info->fused[node] : r->g->nodes[node].name;
}

/* Records that node `src` was merged into node `dst`, src's names after dst's
 * (or before, for a producer merged into its consumer). */
static int merge_names(rw *r, int dst, int src, bool src_first) {
    const char *a = names_of(r, src_first ? src : dst), *b = names_of(r, src_first ? dst : src);
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (!s) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    snprintf(s, n, "%s+%s", a, b);
    free(r->info->fused[dst]);
    r->info->fused[dst] = s;
    return 0;
}

static int set_inputs(rw *r, enpu_node *n, int n_in) {
    if (n_in > n->n_in) {
        int *ni = realloc(n->in, (size_t)n_in * sizeof(int));
        if (!ni) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
        for (int k = n->n_in; k < n_in; k++) ni[k] = -1;
        n->in = ni;
    }
    n->n_in = n_in;
    return 0;
}

static float *falloc(rw *r, int64_t n) {
    float *p = calloc(n > 0 ? (size_t)n : 1, sizeof(float));
    if (!p) enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    return p;
}

/* Gives new weights dst (output channels along axis 0) the per-channel
 * scales a pre-quantized model gave src along src_axis: the quantizer keeps
 * them (a weight whose values were just transposed keeps its scales). */
static int move_channel_quant(rw *r, int src, int src_axis, int dst) {
    const enpu_quant *q = r->g->tensors[src].quant;
    if (!q || !(q->axis == src_axis || q->count == 1)) return 0;
    return enpu_tensor_set_quant(&r->g->tensors[dst], q->count > 1 ? 0 : -1, q->count, q->scale,
                                 q->zero_point, r->err);
}

/* --- constant folding ------------------------------------------------------ */

static int fold_constants(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || n->n_in == 0 || n->n_out < 1) continue;
        bool all_const = true;
        for (int k = 0; k < n->n_in && all_const; k++)
            if (n->in[k] >= 0 && !(g->tensors[n->in[k]].flags & ENPU_T_CONST)) all_const = false;
        if (!all_const) continue;
        int o = n->out[0];
        if (o < 0) continue;
        enpu_tensor *ot = &g->tensors[o];
        if (ot->dtype != ENPU_DT_FLOAT32 || ot->rank < 0 || (ot->flags & ENPU_T_OUTPUT))
            continue;
        bool others_used = false;
        for (int k = 1; k < n->n_out; k++) {
            int cnt = 0;
            if (n->out[k] >= 0) enpu_graph_consumer(g, n->out[k], &cnt);
            if (cnt || (n->out[k] >= 0 && (g->tensors[n->out[k]].flags & ENPU_T_OUTPUT)))
                others_used = true;
        }
        if (others_used) continue;
        const float *ins[64];
        for (int k = 0; k < n->n_in && k < 64; k++)
            ins[k] = n->in[k] >= 0 ? g->tensors[n->in[k]].data : NULL;
        if (n->n_in > 64) continue;
        float *data = falloc(r, enpu_tensor_numel(ot));
        if (!data) return ENPU_E_NOMEM;
        float *outs[64] = {data};
        enpu_err e = {0};
        if (enpu_fref_node(g, n, ins, outs, &e) != 0) {
            free(data); /* not foldable by the reference: left to run */
            continue;
        }
        enpu_tensor_set_data(ot, data);
        ot->producer = -1;
        kill(r, i);
    }
    return 0;
}

/* --- small local rewrites --------------------------------------------------- */

static int remove_identity(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || (n->op != ENPU_OP_IDENTITY && n->op != ENPU_OP_DROPOUT)) continue;
        if (n->n_in < 1 || n->in[0] < 0 || n->out[0] < 0) continue;
        int o = n->out[0];
        if (g->tensors[o].flags & ENPU_T_OUTPUT) continue; /* keeps the output's name */
        bool used = false;
        for (int k = 1; k < n->n_out; k++) {
            int cnt = 0;
            if (n->out[k] >= 0) enpu_graph_consumer(g, n->out[k], &cnt);
            if (cnt) used = true;
        }
        if (used) continue;
        rewire(g, o, n->in[0]);
        g->tensors[o].producer = -1;
        kill(r, i);
    }
    return 0;
}

static int simple_rewrites(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (n->op == ENPU_OP_PRELU && n->n_in == 2 && is_const_f32(g, n->in[1]) &&
            enpu_tensor_numel(&g->tensors[n->in[1]]) == 1) {
            /* One slope for every element: a LeakyRelu (same float values). */
            float slope = ((const float *)g->tensors[n->in[1]].data)[0];
            n->op = ENPU_OP_LEAKY_RELU;
            memset(&n->attr, 0, sizeof n->attr);
            n->attr.act.alpha = slope;
            n->n_in = 1;
            r->count++;
        } else if (n->op == ENPU_OP_MUL && n->n_in == 2 && n->in[0] >= 0 && n->in[1] >= 0) {
            /* x * Sigmoid(x) -> SiLU */
            for (int side = 0; side < 2; side++) {
                int s = n->in[side], x = n->in[1 - side];
                int p = g->tensors[s].producer;
                if (p < 0 || g->nodes[p].dead || g->nodes[p].op != ENPU_OP_SIGMOID) continue;
                if (g->nodes[p].in[0] != x || !single_use(g, s)) continue;
                if (!same_dims(&g->tensors[x], &g->tensors[n->out[0]])) continue;
                int rc = merge_names(r, i, p, true);
                if (rc) return rc;
                n->op = ENPU_OP_SILU;
                memset(&n->attr, 0, sizeof n->attr);
                n->in[0] = x;
                n->n_in = 1;
                g->tensors[s].producer = -1;
                kill(r, p);
                break;
            }
        } else if ((n->op == ENPU_OP_SUB || n->op == ENPU_OP_DIV) && n->n_in == 2 &&
                   n->in[0] >= 0 && !(g->tensors[n->in[0]].flags & ENPU_T_CONST) &&
                   is_const_f32(g, n->in[1])) {
            const enpu_tensor *c = &g->tensors[n->in[1]];
            int64_t cnt = enpu_tensor_numel(c);
            const float *cv = c->data;
            bool ok = true;
            if (n->op == ENPU_OP_DIV)
                for (int64_t k = 0; k < cnt; k++)
                    if (!(cv[k] != 0.0f) || !isfinite(1.0f / cv[k])) ok = false;
            if (!ok) continue;
            float *nv = falloc(r, cnt);
            if (!nv) return ENPU_E_NOMEM;
            for (int64_t k = 0; k < cnt; k++) nv[k] = n->op == ENPU_OP_SUB ? -cv[k] : 1.0f / cv[k];
            char base[ENPU_MAX_NAME + 16];
            snprintf(base, sizeof base, "%s_%s", c->name, n->op == ENPU_OP_SUB ? "neg" : "recip");
            int t = add_const(r, base, c->rank, c->dims, nv);
            if (t < 0) return t;
            n->in[1] = t;
            n->op = n->op == ENPU_OP_SUB ? ENPU_OP_ADD : ENPU_OP_MUL;
            r->count++;
        } else if (n->op == ENPU_OP_MATMUL && n->n_in == 2 && n->in[0] >= 0 &&
                   g->tensors[n->in[0]].rank == 2 && is_const_f32(g, n->in[1]) &&
                   g->tensors[n->in[1]].rank == 2) {
            n->op = ENPU_OP_GEMM;
            memset(&n->attr, 0, sizeof n->attr);
            n->attr.gemm.alpha = n->attr.gemm.beta = 1.0f;
            r->count++;
        }
    }
    return 0;
}

/* --- Gemm canonical form ------------------------------------------------------ */

/* C of a Gemm with output [M, N] that adds the same value to every row:
 * scalar, [1], [N], [1, 1] or [1, N]. */
static bool gemm_c_per_col(const enpu_tensor *c, int64_t nn) {
    if (c->rank == 0) return true;
    if (c->rank == 1) return c->dims[0] == 1 || c->dims[0] == nn;
    if (c->rank == 2) return c->dims[0] == 1 && (c->dims[1] == 1 || c->dims[1] == nn);
    return false;
}

bool enpu_qp_gemm_canonical(const enpu_graph *g, const enpu_node *n) {
    if (n->op != ENPU_OP_GEMM || n->n_in < 2) return false;
    const enpu_gemm_attr *a = &n->attr.gemm;
    if (a->trans_a || !a->trans_b || a->alpha != 1.0f || a->beta != 1.0f) return false;
    if (n->in[0] < 0 || g->tensors[n->in[0]].rank != 2 || !is_const_f32(g, n->in[1])) return false;
    const enpu_tensor *b = &g->tensors[n->in[1]];
    if (b->rank != 2) return false;
    if (n->n_in < 3 || n->in[2] < 0) return true;
    const enpu_tensor *c = &g->tensors[n->in[2]];
    return is_const_f32(g, n->in[2]) && c->rank == 1 && c->dims[0] == b->dims[0];
}

static int gemm_canonicalize(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || n->op != ENPU_OP_GEMM || n->n_in < 2) continue;
        if (enpu_qp_gemm_canonical(g, n)) continue;
        const enpu_gemm_attr *a = &n->attr.gemm;
        if (a->trans_a || n->in[0] < 0 || g->tensors[n->in[0]].rank != 2) continue;
        if (!is_const_f32(g, n->in[1]) || g->tensors[n->in[1]].rank != 2) continue;
        const enpu_tensor *b = &g->tensors[n->in[1]];
        int64_t k = b->dims[a->trans_b ? 1 : 0], nn = b->dims[a->trans_b ? 0 : 1];
        const enpu_tensor *c = (n->n_in > 2 && n->in[2] >= 0) ? &g->tensors[n->in[2]] : NULL;
        if (c && (!is_const_f32(g, n->in[2]) || !gemm_c_per_col(c, nn))) continue;
        float *w = falloc(r, nn * k), *bias = falloc(r, nn);
        if (!w || !bias) {
            free(w);
            free(bias);
            return ENPU_E_NOMEM;
        }
        const float *bv = b->data;
        for (int64_t j = 0; j < nn; j++)
            for (int64_t kk = 0; kk < k; kk++)
                w[j * k + kk] = a->alpha * (a->trans_b ? bv[j * k + kk] : bv[kk * nn + j]);
        if (c) {
            const float *cv = c->data;
            int64_t cn = enpu_tensor_numel(c);
            for (int64_t j = 0; j < nn; j++) bias[j] = a->beta * cv[cn == 1 ? 0 : j];
        }
        char base[ENPU_MAX_NAME + 16];
        int64_t wd[2] = {nn, k};
        snprintf(base, sizeof base, "%s_fc", b->name);
        int bt0 = n->in[1];
        int wt = add_const(r, base, 2, wd, w);
        if (wt < 0) {
            free(bias);
            return wt;
        }
        int qrc = a->alpha == 1.0f ? move_channel_quant(r, bt0, a->trans_b ? 0 : 1, wt) : 0;
        if (qrc) {
            free(bias);
            return qrc;
        }
        snprintf(base, sizeof base, "%s_bias", n->name);
        int bt = add_const(r, base, 1, &nn, bias);
        if (bt < 0) return bt;
        int rc = set_inputs(r, n, 3);
        if (rc) return rc;
        n->in[1] = wt;
        n->in[2] = bt;
        n->attr.gemm.alpha = n->attr.gemm.beta = 1.0f;
        n->attr.gemm.trans_b = true;
        r->count++;
    }
    return 0;
}

/* --- folds into a Conv / FC ------------------------------------------------- */

/* A Conv whose weights (and bias) are float constants, or a canonical Gemm:
 * a linear node whose output channel c has weight row c and bias c. */
static bool is_linear(const enpu_graph *g, const enpu_node *n) {
    if (n->dead) return false;
    if (n->op == ENPU_OP_GEMM) return enpu_qp_gemm_canonical(g, n);
    if (n->op != ENPU_OP_CONV || n->n_in < 2 || n->in[0] < 0 || !is_const_f32(g, n->in[1]))
        return false;
    if (n->n_in > 2 && n->in[2] >= 0 && !is_const_f32(g, n->in[2])) return false;
    const enpu_tensor *w = &g->tensors[n->in[1]];
    return w->rank >= 1 && w->dims[0] > 0;
}

/* Values of constant k as a per-channel vector along axis 1 of a tensor of
 * shape (orank, odims) (co = odims[1]): every dim of k except the one aligned
 * with axis 1 must be 1.  Fills v[co]. */
static bool per_channel(const enpu_tensor *k, int orank, const int64_t *odims, float *v) {
    if (orank < 2 || k->rank > orank) return false;
    int64_t co = odims[1], kc = 1;
    for (int j = 0; j < k->rank; j++) {
        int d = orank - k->rank + j;
        if (d == 1) {
            if (k->dims[j] != 1 && k->dims[j] != co) return false;
            kc = k->dims[j];
        } else if (k->dims[j] != 1) {
            return false;
        }
    }
    const float *kv = k->data;
    for (int64_t c = 0; c < co; c++) v[c] = kv[kc == 1 ? 0 : c];
    return true;
}

/* Replaces the weights/bias of linear node p by w (co * k values) and b. */
static int set_linear(rw *r, enpu_node *p, float *w, float *b) {
    enpu_graph *g = r->g;
    const enpu_tensor *wt = &g->tensors[p->in[1]];
    int64_t co = wt->dims[0];
    char base[ENPU_MAX_NAME + 16];
    snprintf(base, sizeof base, "%s_folded", wt->name);
    int nw = add_const(r, base, wt->rank, wt->dims, w);
    if (nw < 0) {
        free(b);
        return nw;
    }
    snprintf(base, sizeof base, "%s_bias_folded", p->name);
    int nb = add_const(r, base, 1, &co, b);
    if (nb < 0) return nb;
    int rc = set_inputs(r, p, 3);
    if (rc) return rc;
    p->in[1] = nw;
    p->in[2] = nb;
    return 0;
}

/* Copies of the weights and bias (zeros when absent) of linear node p. */
static int linear_params(rw *r, const enpu_node *p, float **w, float **b, int64_t *co,
                         int64_t *k) {
    const enpu_graph *g = r->g;
    const enpu_tensor *wt = &g->tensors[p->in[1]];
    *co = wt->dims[0];
    *k = enpu_tensor_numel(wt) / *co;
    *w = falloc(r, *co * *k);
    *b = falloc(r, *co);
    if (!*w || !*b) {
        free(*w);
        free(*b);
        return ENPU_E_NOMEM;
    }
    memcpy(*w, wt->data, (size_t)(*co * *k) * sizeof(float));
    if (p->n_in > 2 && p->in[2] >= 0) memcpy(*b, g->tensors[p->in[2]].data, (size_t)*co * sizeof(float));
    return 0;
}

/* Node `a` (consumer of p's output t) disappears: p writes a's output. */
static int absorb(rw *r, int p, int a, int t) {
    enpu_graph *g = r->g;
    int rc = merge_names(r, p, a, false);
    if (rc) return rc;
    int o = g->nodes[a].out[0];
    g->nodes[p].out[0] = o;
    g->tensors[o].producer = p;
    g->tensors[t].producer = -1;
    kill(r, a);
    return 0;
}

static int fold_into_linear(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *a = &g->nodes[i];
        if (a->dead) continue;
        bool elem = (a->op == ENPU_OP_ADD || a->op == ENPU_OP_MUL) && a->n_in == 2;
        bool bn = a->op == ENPU_OP_BATCHNORM && a->n_in == 5;
        if (!elem && !bn) continue;
        int t = -1, kc = -1;
        if (elem) {
            for (int side = 0; side < 2; side++)
                if (a->in[side] >= 0 && is_const_f32(g, a->in[1 - side]) &&
                    !(g->tensors[a->in[side]].flags & ENPU_T_CONST)) {
                    t = a->in[side];
                    kc = a->in[1 - side];
                }
        } else {
            t = a->in[0];
            for (int k = 1; k < 5; k++)
                if (!is_const_f32(g, a->in[k]) || g->tensors[a->in[k]].rank != 1) t = -1;
        }
        if (t < 0 || a->out[0] < 0) continue;
        int p = g->tensors[t].producer;
        if (p < 0 || !is_linear(g, &g->nodes[p]) || !single_use(g, t)) continue;
        const enpu_tensor *tt = &g->tensors[t];
        if (!same_dims(tt, &g->tensors[a->out[0]]) || tt->rank < 2) continue;
        int64_t co = tt->dims[1];
        if (g->tensors[g->nodes[p].in[1]].dims[0] != co) continue;
        float *v = falloc(r, co), *add = falloc(r, co);
        if (!v || !add) {
            free(v);
            free(add);
            return ENPU_E_NOMEM;
        }
        bool ok = true;
        if (elem) {
            ok = per_channel(&g->tensors[kc], tt->rank, tt->dims, a->op == ENPU_OP_ADD ? add : v);
            if (a->op == ENPU_OP_ADD)
                for (int64_t c = 0; c < co; c++) v[c] = 1.0f;
        } else {
            const float *sc = g->tensors[a->in[1]].data, *be = g->tensors[a->in[2]].data;
            const float *mu = g->tensors[a->in[3]].data, *var = g->tensors[a->in[4]].data;
            for (int k = 1; k < 5; k++)
                if (g->tensors[a->in[k]].dims[0] != co) ok = false;
            for (int64_t c = 0; ok && c < co; c++) {
                double m = sc[c] / sqrt((double)var[c] + a->attr.bn.epsilon);
                if (!isfinite(m)) ok = false;
                v[c] = (float)m;
                add[c] = (float)(be[c] - mu[c] * m);
            }
        }
        if (!ok) {
            free(v);
            free(add);
            continue;
        }
        float *w, *b;
        int64_t nco, k;
        int rc = linear_params(r, &g->nodes[p], &w, &b, &nco, &k);
        if (rc) {
            free(v);
            free(add);
            return rc;
        }
        for (int64_t c = 0; c < co; c++) {
            if (bn) {
                /* y = (conv(x) + b) * m + (beta - mean * m), in double */
                for (int64_t j = 0; j < k; j++) w[c * k + j] = (float)((double)w[c * k + j] * v[c]);
                b[c] = (float)((double)b[c] * v[c] + add[c]);
            } else if (a->op == ENPU_OP_MUL) {
                for (int64_t j = 0; j < k; j++) w[c * k + j] *= v[c];
                b[c] *= v[c];
            } else {
                b[c] += add[c];
            }
        }
        free(v);
        free(add);
        if ((rc = set_linear(r, &g->nodes[p], w, b))) return rc;
        if ((rc = absorb(r, p, i, t))) return rc;
    }
    return 0;
}

/* --- Max/Min of a scalar constant -> Clip ------------------------------------- */

static bool scalar_const(const enpu_graph *g, int t, float *v) {
    if (!is_const_f32(g, t) || enpu_tensor_numel(&g->tensors[t]) != 1) return false;
    *v = ((const float *)g->tensors[t].data)[0];
    return !isnan(*v);
}

static int max_min_to_clip(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || (n->op != ENPU_OP_MAX && n->op != ENPU_OP_MIN) || n->n_in != 2) continue;
        for (int side = 0; side < 2; side++) {
            int x = n->in[side];
            float c;
            if (x < 0 || (g->tensors[x].flags & ENPU_T_CONST) || !scalar_const(g, n->in[1 - side], &c))
                continue;
            if (!same_dims(&g->tensors[x], &g->tensors[n->out[0]])) continue;
            bool mx = n->op == ENPU_OP_MAX;
            n->op = ENPU_OP_CLIP;
            memset(&n->attr, 0, sizeof n->attr);
            n->attr.act.min = mx ? c : -INFINITY;
            n->attr.act.max = mx ? INFINITY : c;
            n->in[0] = x;
            n->n_in = 1;
            r->count++;
            break;
        }
    }
    return 0;
}

/* --- ReduceMax over the whole map -> MaxPool ---------------------------------- */

/* The reduced axes are the spatial ones (2..rank-1) of a rank-3/4 tensor. */
bool enpu_qp_reduces_map(const enpu_graph *g, const enpu_node *n) {
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    const enpu_reduce_attr *a = &n->attr.reduce;
    if (!x || (x->rank != 3 && x->rank != 4) || a->n_axes != x->rank - 2) return false;
    for (int k = 0; k < a->n_axes; k++)
        if (a->axes[k] != 2 + k) return false;
    return true;
}

static int reduce_max_to_pool(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || n->op != ENPU_OP_REDUCE_MAX || !n->attr.reduce.keepdims || !enpu_qp_reduces_map(g, n))
            continue;
        const enpu_tensor *x = &g->tensors[n->in[0]];
        int64_t h = x->rank == 4 ? x->dims[2] : 1, w = x->dims[x->rank - 1];
        if (h > 65535 || w > 65535) continue;
        n->op = ENPU_OP_MAXPOOL;
        memset(&n->attr, 0, sizeof n->attr);
        enpu_window *win = &n->attr.pool.w;
        win->kernel[0] = (int)h, win->kernel[1] = (int)w;
        win->stride[0] = win->stride[1] = win->dilation[0] = win->dilation[1] = 1;
        r->count++;
    }
    return 0;
}

/* --- decomposed activations -> one table op ------------------------------------ */

#define PW_MAX 16 /* nodes of one pointwise expression */

static bool pointwise_op(enpu_op op) {
    switch (op) {
    case ENPU_OP_ADD: case ENPU_OP_SUB: case ENPU_OP_MUL: case ENPU_OP_DIV: case ENPU_OP_POW:
    case ENPU_OP_MAX: case ENPU_OP_MIN: case ENPU_OP_RELU: case ENPU_OP_CLIP: case ENPU_OP_SIGMOID:
    case ENPU_OP_TANH: case ENPU_OP_ERF: case ENPU_OP_EXP: case ENPU_OP_HARD_SIGMOID:
    case ENPU_OP_NEG: case ENPU_OP_ABS: case ENPU_OP_SQRT: case ENPU_OP_RECIPROCAL:
        return true;
    default:
        return false;
    }
}

/* An expression of one activation x: the nodes (in graph order) computing
 * the root's output elementwise from x and scalar constants, every
 * intermediate read only inside it. */
typedef struct pw_expr {
    int nodes[PW_MAX];
    int n;
    int x;
} pw_expr;

static bool pw_collect(const enpu_graph *g, int root, pw_expr *e) {
    e->n = 0;
    e->x = -1;
    int stack[PW_MAX], sp = 0;
    stack[sp++] = root;
    while (sp) {
        int ni = stack[--sp];
        bool seen = false;
        for (int k = 0; k < e->n; k++) seen |= e->nodes[k] == ni;
        if (seen) continue;
        if (e->n == PW_MAX) return false;
        e->nodes[e->n++] = ni;
        const enpu_node *n = &g->nodes[ni];
        for (int k = 0; k < n->n_in; k++) {
            int t = n->in[k];
            float c;
            if (t < 0 || scalar_const(g, t, &c)) continue;
            if (g->tensors[t].flags & ENPU_T_CONST) return false;
            int p = g->tensors[t].producer;
            int cnt = 0;
            enpu_graph_consumer(g, t, &cnt);
            bool inner = p >= 0 && !g->nodes[p].dead && pointwise_op(g->nodes[p].op) &&
                         single_use(g, t) && t != e->x;
            if (inner) {
                if (sp == PW_MAX) return false;
                stack[sp++] = p;
            } else {
                if (e->x >= 0 && e->x != t) return false; /* a second activation */
                e->x = t;
            }
        }
    }
    if (e->x < 0 || e->n < 2) return false;
    /* graph order, so the expression can be evaluated in it */
    for (int a = 0; a < e->n; a++)
        for (int b = a + 1; b < e->n; b++)
            if (e->nodes[b] < e->nodes[a]) {
                int t = e->nodes[a];
                e->nodes[a] = e->nodes[b], e->nodes[b] = t;
            }
    const enpu_tensor *xt = &g->tensors[e->x];
    for (int k = 0; k < e->n; k++)
        if (!same_dims(&g->tensors[g->nodes[e->nodes[k]].out[0]], xt)) return false;
    return true;
}

/* The expression at x = v, in double. */
static double pw_eval(const enpu_graph *g, const pw_expr *e, double v) {
    double val[PW_MAX];
    for (int k = 0; k < e->n; k++) {
        const enpu_node *n = &g->nodes[e->nodes[k]];
        double in[2] = {0, 0};
        for (int j = 0; j < n->n_in && j < 2; j++) {
            int t = n->in[j];
            float c;
            if (t == e->x) in[j] = v;
            else if (scalar_const(g, t, &c)) in[j] = c;
            else
                for (int q = 0; q < k; q++)
                    if (g->nodes[e->nodes[q]].out[0] == t) in[j] = val[q];
        }
        double a = in[0], b = in[1], y;
        const enpu_act_attr *at = &n->attr.act;
        switch (n->op) {
        case ENPU_OP_ADD: y = a + b; break;
        case ENPU_OP_SUB: y = a - b; break;
        case ENPU_OP_MUL: y = a * b; break;
        case ENPU_OP_DIV: y = a / b; break;
        case ENPU_OP_POW: y = pow(a, b); break;
        case ENPU_OP_MAX: y = a > b ? a : b; break;
        case ENPU_OP_MIN: y = a < b ? a : b; break;
        case ENPU_OP_RELU: y = a > 0 ? a : 0; break;
        case ENPU_OP_CLIP: y = a < at->min ? at->min : a > at->max ? at->max : a; break;
        case ENPU_OP_SIGMOID: y = 1 / (1 + exp(-a)); break;
        case ENPU_OP_TANH: y = tanh(a); break;
        case ENPU_OP_ERF: y = erf(a); break;
        case ENPU_OP_EXP: y = exp(a); break;
        case ENPU_OP_HARD_SIGMOID: y = fmax(0, fmin(1, at->alpha * a + at->beta)); break;
        case ENPU_OP_NEG: y = -a; break;
        case ENPU_OP_ABS: y = fabs(a); break;
        case ENPU_OP_SQRT: y = sqrt(a); break;
        default: y = 1 / a; break; /* Reciprocal */
        }
        val[k] = y;
    }
    return val[e->n - 1];
}

static double f_hswish(double x) { return x * fmax(0, fmin(1, x / 6 + 0.5)); }
static double f_hsig(double x) { return fmax(0, fmin(1, x / 6 + 0.5)); }
static double f_silu(double x) { return x / (1 + exp(-x)); }
static double f_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double f_gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* Expressions exporters emit for one activation (HardSwish as x*relu6(x+3)/6
 * or x*HardSigmoid(x), SiLU, GELU in its Erf or tanh form) become that
 * activation: one table on the NPU.  Recognised by value, whatever the order
 * of the operations: the expression must equal the function within 1e-6
 * (relative) at 97 points over [-12, 12]. */
static int fuse_activations(rw *r) {
    enpu_graph *g = r->g;
    static const struct {
        double (*f)(double);
        enpu_op op;
        int approx;
        float alpha, beta;
    } cand[] = {
        {f_hswish, ENPU_OP_HARD_SWISH, 0, 1.0f / 6.0f, 0.5f},
        {f_silu, ENPU_OP_SILU, 0, 0, 0},
        {f_gelu, ENPU_OP_GELU, 0, 0, 0},
        {f_gelu_tanh, ENPU_OP_GELU, 1, 0, 0},
        {f_hsig, ENPU_OP_HARD_SIGMOID, 0, 1.0f / 6.0f, 0.5f},
    };
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || !pointwise_op(n->op) || n->n_out != 1) continue;
        /* the root: its output is not an input of a larger expression */
        int cons = enpu_graph_consumer(g, n->out[0], NULL);
        if (cons >= 0 && single_use(g, n->out[0]) && pointwise_op(g->nodes[cons].op)) continue;
        pw_expr e;
        if (!pw_collect(g, i, &e)) continue;
        int found = -1;
        for (size_t c = 0; c < sizeof cand / sizeof cand[0] && found < 0; c++) {
            bool ok = true;
            for (int k = 0; k <= 96 && ok; k++) {
                double v = -12.0 + 0.25 * k, a = pw_eval(g, &e, v), b = cand[c].f(v);
                ok = fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
            }
            if (ok) found = (int)c;
        }
        if (found < 0) continue;
        for (int k = 0; k < e.n; k++) {
            int ni = e.nodes[k];
            if (ni == i) continue;
            int rc = merge_names(r, i, ni, true);
            if (rc) return rc;
            g->tensors[g->nodes[ni].out[0]].producer = -1;
            kill(r, ni);
        }
        n = &g->nodes[i];
        n->op = cand[found].op;
        memset(&n->attr, 0, sizeof n->attr);
        n->attr.act.min = -INFINITY;
        n->attr.act.max = INFINITY;
        n->attr.act.alpha = cand[found].alpha;
        n->attr.act.beta = cand[found].beta;
        if (n->op == ENPU_OP_GELU) {
            memset(&n->attr, 0, sizeof n->attr);
            n->attr.misc.approximate = cand[found].approx;
        }
        n->in[0] = e.x;
        n->n_in = 1;
        r->count++;
    }
    return 0;
}

/* --- decomposed LayerNorm -> LayerNormalization -------------------------------- */

/* Node producing t if it is live, of op `op` and t is read once (by the
 * pattern); -1 otherwise. */
static int only_producer(const enpu_graph *g, int t, enpu_op op) {
    if (t < 0 || !single_use(g, t)) return -1;
    int p = g->tensors[t].producer;
    return p >= 0 && !g->nodes[p].dead && g->nodes[p].op == op ? p : -1;
}

/* ReduceMean keeping dims over the trailing axes [axis, rank) of its input. */
static int trailing_mean(const enpu_graph *g, int ni, int *axis) {
    if (ni < 0) return 0;
    const enpu_node *n = &g->nodes[ni];
    const enpu_tensor *x = enpu_node_input(g, n, 0);
    const enpu_reduce_attr *a = &n->attr.reduce;
    if (!x || !a->keepdims || a->n_axes < 1) return 0;
    for (int k = 0; k < a->n_axes; k++)
        if (a->axes[k] != x->rank - a->n_axes + k) return 0;
    *axis = x->rank - a->n_axes;
    return 1;
}

/* Constant t equals v everywhere, or shape-broadcasts over the normalized
 * dims: returns its data copied to the normalized shape (malloc'd), else NULL. */
static float *norm_param(rw *r, int t, const enpu_tensor *x, int axis) {
    const enpu_tensor *c = &r->g->tensors[t];
    int64_t len = 1;
    for (int d = axis; d < x->rank; d++) len *= x->dims[d];
    /* every dim of c before the normalized ones must be 1 */
    for (int d = 0; d < c->rank; d++) {
        int xd = d + x->rank - c->rank;
        if (xd < axis && c->dims[d] != 1) return NULL;
        if (xd >= axis && c->dims[d] != 1 && c->dims[d] != x->dims[xd]) return NULL;
    }
    float *v = falloc(r, len);
    if (!v) return NULL;
    const float *cv = c->data;
    for (int64_t i = 0; i < len; i++) {
        /* the index of element i of the normalized block in c */
        int64_t rem = i, off = 0, st = 1;
        for (int d = x->rank - 1; d >= axis; d--) {
            int64_t idx = rem % x->dims[d];
            rem /= x->dims[d];
            int cd = d - (x->rank - c->rank);
            if (cd >= 0) {
                if (c->dims[cd] != 1) off += idx * st;
                st *= c->dims[cd];
            }
        }
        v[i] = cv[off];
    }
    return v;
}

/* (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma] [+ beta], the
 * form of opsets < 17, becomes one LayerNormalization (a host op). */
static int fuse_layer_norm(rw *r) {
    enpu_graph *g = r->g;
    for (int i = 0; i < g->n_nodes; i++) {
        enpu_node *dn = &g->nodes[i];
        if (dn->dead || (dn->op != ENPU_OP_DIV && dn->op != ENPU_OP_MUL) || dn->n_in != 2) continue;
        /* Div(d, s) or Mul(d, Reciprocal(s)) */
        int d = dn->in[0], st = dn->in[1], rec = -1;
        if (dn->op == ENPU_OP_MUL) {
            rec = only_producer(g, st, ENPU_OP_RECIPROCAL);
            if (rec < 0) {
                d = dn->in[1], st = dn->in[0];
                rec = only_producer(g, st, ENPU_OP_RECIPROCAL);
            }
            if (rec < 0) continue;
            st = g->nodes[rec].in[0];
        }
        int sq = only_producer(g, st, ENPU_OP_SQRT);
        int ad = sq < 0 ? -1 : only_producer(g, g->nodes[sq].in[0], ENPU_OP_ADD);
        if (ad < 0) continue;
        float eps;
        int vt = g->nodes[ad].in[0];
        if (!scalar_const(g, g->nodes[ad].in[1], &eps)) {
            vt = g->nodes[ad].in[1];
            if (!scalar_const(g, g->nodes[ad].in[0], &eps)) continue;
        }
        int rv = only_producer(g, vt, ENPU_OP_REDUCE_MEAN), ax1, ax2;
        if (!trailing_mean(g, rv, &ax1)) continue;
        int pw = g->nodes[rv].in[0], pn = g->tensors[pw].producer;
        if (!single_use(g, pw) || pn < 0 || g->nodes[pn].dead) continue;
        float two;
        bool sqr = (g->nodes[pn].op == ENPU_OP_POW && g->nodes[pn].in[0] == d &&
                    scalar_const(g, g->nodes[pn].in[1], &two) && two == 2.0f) ||
                   (g->nodes[pn].op == ENPU_OP_MUL && g->nodes[pn].in[0] == d && g->nodes[pn].in[1] == d);
        if (!sqr) continue;
        int cnt = 0;
        enpu_graph_consumer(g, d, &cnt);
        int sb = g->tensors[d].producer;
        if (cnt != 2 || (g->tensors[d].flags & ENPU_T_OUTPUT) || sb < 0 || g->nodes[sb].dead ||
            g->nodes[sb].op != ENPU_OP_SUB)
            continue;
        int x = g->nodes[sb].in[0];
        int rm = only_producer(g, g->nodes[sb].in[1], ENPU_OP_REDUCE_MEAN);
        if (!trailing_mean(g, rm, &ax2) || ax2 != ax1 || g->nodes[rm].in[0] != x) continue;
        const enpu_tensor *xt = &g->tensors[x];
        if (g->nodes[rv].attr.reduce.n_axes != g->nodes[rm].attr.reduce.n_axes) continue;
        /* the affine tail: Mul by gamma, Add beta (constants) */
        int root = i, gam = -1, bet = -1;
        int c1 = enpu_graph_consumer(g, dn->out[0], NULL);
        if (c1 >= 0 && single_use(g, dn->out[0]) && g->nodes[c1].op == ENPU_OP_MUL) {
            const enpu_node *m = &g->nodes[c1];
            int k = m->in[0] == dn->out[0] ? 1 : 0;
            if (is_const_f32(g, m->in[k])) gam = m->in[k], root = c1;
        }
        int c2 = enpu_graph_consumer(g, g->nodes[root].out[0], NULL);
        if (c2 >= 0 && single_use(g, g->nodes[root].out[0]) && g->nodes[c2].op == ENPU_OP_ADD) {
            const enpu_node *a = &g->nodes[c2];
            int k = a->in[0] == g->nodes[root].out[0] ? 1 : 0;
            if (is_const_f32(g, a->in[k])) bet = a->in[k], root = c2;
        }
        int64_t len = 1, nd[ENPU_MAX_RANK];
        for (int q = ax1; q < xt->rank; q++) nd[q - ax1] = xt->dims[q], len *= xt->dims[q];
        float *gv = gam >= 0 ? norm_param(r, gam, xt, ax1) : falloc(r, len);
        float *bv = bet >= 0 ? norm_param(r, bet, xt, ax1) : falloc(r, len);
        if (!gv || !bv) {
            free(gv);
            free(bv);
            if (r->err->code) return r->err->code;
            continue;
        }
        if (gam < 0)
            for (int64_t q = 0; q < len; q++) gv[q] = 1.0f;
        char base[ENPU_MAX_NAME + 16];
        snprintf(base, sizeof base, "%s_scale", g->nodes[root].name);
        int tg = add_const(r, base, xt->rank - ax1, nd, gv);
        if (tg < 0) {
            free(bv);
            return tg;
        }
        snprintf(base, sizeof base, "%s_bias", g->nodes[root].name);
        int tb = add_const(r, base, xt->rank - ax1, nd, bv);
        if (tb < 0) return tb;
        int parts[] = {rm, sb, pn, rv, ad, sq, rec, i, gam >= 0 ? c1 : -1, bet >= 0 ? c2 : -1};
        int rc = 0;
        for (size_t k = 0; k < sizeof parts / sizeof parts[0] && !rc; k++) {
            int ni = parts[k];
            if (ni < 0 || ni == root) continue;
            rc = merge_names(r, root, ni, true);
            g->tensors[g->nodes[ni].out[0]].producer = -1;
            kill(r, ni);
        }
        if (rc) return rc;
        enpu_node *ln = &g->nodes[root];
        if ((rc = set_inputs(r, ln, 3))) return rc;
        ln->op = ENPU_OP_LAYER_NORM;
        memset(&ln->attr, 0, sizeof ln->attr);
        ln->attr.norm.axis = ax1;
        ln->attr.norm.epsilon = eps;
        ln->in[0] = x, ln->in[1] = tg, ln->in[2] = tb;
        r->count++;
    }
    return 0;
}

/* --- MatMul of rank 3 by a constant -> a 1x1 conv between transposes ------------ */

/* Appends a node (info grows with it; the graph is sorted again at the end). */
static int append_node(rw *r, const char *name, enpu_op op, int n_in, const int *in, int out,
                       const enpu_attr *at) {
    enpu_graph *g = r->g;
    char **nf = realloc(r->info->fused, (size_t)(g->n_nodes + 1) * sizeof *nf);
    if (!nf) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    r->info->fused = nf;
    nf[g->n_nodes] = NULL;
    r->info->n = g->n_nodes + 1;
    int k = enpu_graph_add_node(g, name, op, n_in, in, 1, &out, r->err);
    if (k < 0) return k;
    if (at) g->nodes[k].attr = *at;
    r->added = true;
    return k;
}

static int new_act(rw *r, const char *base, int rank, const int64_t *dims) {
    char *name = enpu_qp_unique_name(r->g, base);
    if (!name) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    int t = enpu_graph_add_tensor(r->g, name, ENPU_DT_FLOAT32, rank, dims, r->err);
    free(name);
    return t;
}

/* x [1, T, K] times constant W [K, N] (+ a constant bias [N]): the rows of
 * x are T positions of K channels, so the product is a 1x1 conv of the
 * transposed x [1, K, T]: Transpose, Conv, Transpose back.  The transposes
 * are address remappings or copies on the NPU; the conv is its MACs. */
static int matmul3_to_conv(rw *r) {
    enpu_graph *g = r->g;
    int n0 = g->n_nodes;
    for (int i = 0; i < n0; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || n->op != ENPU_OP_MATMUL || n->n_in != 2) continue;
        int x = n->in[0], w = n->in[1];
        const enpu_tensor *xt = &g->tensors[x], *wt = &g->tensors[w];
        if ((xt->flags & ENPU_T_CONST) || xt->rank != 3 || xt->dims[0] != 1 || !is_const_f32(g, w) ||
            wt->rank != 2)
            continue;
        int64_t T = xt->dims[1], K = xt->dims[2], N = wt->dims[1];
        int y = n->out[0], bias_node = -1, bt = -1;
        int c = enpu_graph_consumer(g, y, NULL);
        if (c >= 0 && single_use(g, y) && g->nodes[c].op == ENPU_OP_ADD) {
            const enpu_node *a = &g->nodes[c];
            int k = a->in[0] == y ? 1 : 0;
            const enpu_tensor *b = &g->tensors[a->in[k]];
            if (is_const_f32(g, a->in[k]) && b->rank >= 1 && b->dims[b->rank - 1] == N &&
                enpu_tensor_numel(b) == N && same_dims(&g->tensors[a->out[0]], &g->tensors[y]))
                bias_node = c, bt = a->in[k];
        }
        float *wv = falloc(r, N * K), *bv = falloc(r, N);
        if (!wv || !bv) {
            free(wv);
            free(bv);
            return ENPU_E_NOMEM;
        }
        const float *src = wt->data;
        for (int64_t o = 0; o < N; o++)
            for (int64_t k = 0; k < K; k++) wv[o * K + k] = src[k * N + o];
        if (bt >= 0) memcpy(bv, g->tensors[bt].data, (size_t)N * sizeof(float));
        char base[ENPU_MAX_NAME + 32];
        int64_t wd[3] = {N, K, 1};
        snprintf(base, sizeof base, "%s_conv_w", wt->name);
        int tw = add_const(r, base, 3, wd, wv);
        if (tw < 0) {
            free(bv);
            return tw;
        }
        int qrc = move_channel_quant(r, w, 1, tw);
        if (qrc) {
            free(bv);
            return qrc;
        }
        snprintf(base, sizeof base, "%s_conv_b", n->name);
        int tb = add_const(r, base, 1, &N, bv);
        if (tb < 0) return tb;
        int64_t d1[3] = {1, K, T}, d2[3] = {1, N, T};
        snprintf(base, sizeof base, "%s_in_t", n->name);
        int t1 = new_act(r, base, 3, d1);
        snprintf(base, sizeof base, "%s_conv", n->name);
        int t2 = t1 < 0 ? t1 : new_act(r, base, 3, d2);
        if (t2 < 0) return t2;
        char nm[ENPU_MAX_NAME + 32];
        enpu_attr tr;
        memset(&tr, 0, sizeof tr);
        tr.shape.n_axes = 3;
        tr.shape.axes[0] = 0, tr.shape.axes[1] = 2, tr.shape.axes[2] = 1;
        enpu_attr cv;
        memset(&cv, 0, sizeof cv);
        cv.conv.group = 1;
        for (int k = 0; k < 2; k++)
            cv.conv.w.kernel[k] = cv.conv.w.stride[k] = cv.conv.w.dilation[k] = 1;
        snprintf(nm, sizeof nm, "%s/transpose_in", g->nodes[i].name);
        int k1 = append_node(r, nm, ENPU_OP_TRANSPOSE, 1, &x, t1, &tr);
        if (k1 < 0) return k1;
        snprintf(nm, sizeof nm, "%s/conv", g->nodes[i].name);
        int ci[3] = {t1, tw, tb};
        int k2 = append_node(r, nm, ENPU_OP_CONV, 3, ci, t2, &cv);
        if (k2 < 0) return k2;
        /* the matmul node becomes the transpose back, writing the original
         * output (or the bias Add's) */
        n = &g->nodes[i];
        int rc = merge_names(r, k2, i, false);
        if (!rc && bias_node >= 0) rc = merge_names(r, k2, bias_node, false);
        if (rc) return rc;
        if (bias_node >= 0) {
            int yo = g->nodes[bias_node].out[0];
            g->tensors[yo].producer = i;
            g->tensors[y].producer = -1;
            n->out[0] = yo;
            kill(r, bias_node);
        }
        n->op = ENPU_OP_TRANSPOSE;
        n->attr = tr;
        n->in[0] = t2;
        n->n_in = 1;
        r->count++;
    }
    return 0;
}

/* Add/Mul of two computed tensors, one broadcast to the other (a
 * squeeze-excite gate [1,C,1,1] times its map [1,C,H,W]): the NPU's add and
 * mul read two operands of the output's shape, so the broadcast one is
 * expanded first (an exact int8 copy, on the host) and the product is the
 * NPU's. */
static int expand_broadcast(rw *r) {
    enpu_graph *g = r->g;
    int n0 = g->n_nodes;
    for (int i = 0; i < n0; i++) {
        enpu_node *n = &g->nodes[i];
        if (n->dead || (n->op != ENPU_OP_ADD && n->op != ENPU_OP_MUL) || n->n_in != 2) continue;
        int a = n->in[0], b = n->in[1], y = n->out[0];
        if (a < 0 || b < 0 || (g->tensors[a].flags & ENPU_T_CONST) || (g->tensors[b].flags & ENPU_T_CONST))
            continue;
        bool fa = same_dims(&g->tensors[a], &g->tensors[y]), fb = same_dims(&g->tensors[b], &g->tensors[y]);
        if (fa == fb) continue;
        int side = fa ? 1 : 0, s0 = n->in[side];
        const enpu_tensor *yt = &g->tensors[y];
        int rank = yt->rank;
        int64_t dims[ENPU_MAX_RANK];
        memcpy(dims, yt->dims, sizeof dims);
        char base[ENPU_MAX_NAME + 32];
        snprintf(base, sizeof base, "%s_expanded", g->tensors[s0].name);
        int e = new_act(r, base, rank, dims);
        if (e < 0) return e;
        char *nm = enpu_qp_unique_name(g, "shape");
        if (!nm) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
        snprintf(base, sizeof base, "%s_shape", g->tensors[s0].name);
        free(nm);
        nm = enpu_qp_unique_name(g, base);
        int64_t rk = rank;
        int st = nm ? enpu_graph_add_tensor(g, nm, ENPU_DT_INT64, 1, &rk, r->err) : ENPU_E_NOMEM;
        free(nm);
        if (st < 0) return st == ENPU_E_NOMEM ? enpu_fail(r->err, ENPU_E_NOMEM, "out of memory") : st;
        int64_t *sv = malloc((size_t)rank * sizeof *sv + 1);
        if (!sv) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
        memcpy(sv, dims, (size_t)rank * sizeof *sv);
        enpu_tensor_set_data(&g->tensors[st], sv);
        char nn[ENPU_MAX_NAME + 32];
        snprintf(nn, sizeof nn, "%s/expand", g->nodes[i].name);
        int ins[2] = {s0, st};
        enpu_attr at;
        memset(&at, 0, sizeof at);
        at.shape.n_shape = rank;
        for (int d = 0; d < rank; d++) at.shape.shape[d] = dims[d];
        int k = append_node(r, nn, ENPU_OP_EXPAND, 2, ins, e, &at);
        if (k < 0) return k;
        g->nodes[i].in[side] = e;
        r->count++;
    }
    return 0;
}

/* Sorts the graph again after nodes were appended, carrying info along
 * (each live node is found by its output 0, which only it writes). */
static int resort(rw *r) {
    enpu_graph *g = r->g;
    char **by_t = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof *by_t);
    if (!by_t) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead) {
            free(r->info->fused[i]);
            r->info->fused[i] = NULL;
            continue;
        }
        by_t[g->nodes[i].out[0]] = r->info->fused[i];
        r->info->fused[i] = NULL;
    }
    enpu_graph_compact(g);
    int rc = enpu_graph_toposort(g, r->err);
    r->info->n = g->n_nodes;
    for (int i = 0; i < g->n_nodes; i++) {
        r->info->fused[i] = by_t[g->nodes[i].out[0]];
        by_t[g->nodes[i].out[0]] = NULL;
    }
    for (int t = 0; t < g->n_tensors; t++) free(by_t[t]);
    free(by_t);
    r->added = false;
    return rc;
}

/* --- driver ------------------------------------------------------------------ */

int enpu_qp_rewrite(enpu_graph *fg, enpu_qp_info *info, int *n_rewrites, enpu_err *err) {
    info->fused = calloc(fg->n_nodes > 0 ? (size_t)fg->n_nodes : 1, sizeof(char *));
    if (!info->fused) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    info->n = fg->n_nodes;
    rw r = {fg, info, 0, false, err};
    int rc = 0;
    for (int round = 0; round < MAX_ROUNDS && !rc; round++) {
        int before = r.count;
        if ((rc = fold_constants(&r))) break;
        if ((rc = remove_identity(&r))) break;
        if ((rc = max_min_to_clip(&r))) break;
        if ((rc = reduce_max_to_pool(&r))) break;
        if ((rc = fuse_layer_norm(&r))) break;
        if ((rc = fuse_activations(&r))) break;
        if ((rc = simple_rewrites(&r))) break;
        if ((rc = matmul3_to_conv(&r))) break;
        if ((rc = expand_broadcast(&r))) break;
        if (r.added && (rc = resort(&r))) break;
        if ((rc = gemm_canonicalize(&r))) break;
        if ((rc = fold_into_linear(&r))) break;
        if (r.count == before) break;
    }
    if (rc) return rc;
    /* Drop dead nodes, keeping info aligned with the surviving ones. */
    int w = 0;
    for (int i = 0; i < fg->n_nodes; i++) {
        if (fg->nodes[i].dead) {
            free(info->fused[i]);
            continue;
        }
        info->fused[w++] = info->fused[i];
    }
    info->n = w;
    enpu_graph_compact(fg);
    if (n_rewrites) *n_rewrites = r.count;
    rc = enpu_graph_validate(fg, err);
    if (rc) enpu_err_prefix(err, "after the quantizer's rewrites");
    return rc;
}
