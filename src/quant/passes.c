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
        int wt = add_const(r, base, 2, wd, w);
        if (wt < 0) {
            free(bias);
            return wt;
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

/* --- driver ------------------------------------------------------------------ */

int enpu_qp_rewrite(enpu_graph *fg, enpu_qp_info *info, int *n_rewrites, enpu_err *err) {
    info->fused = calloc(fg->n_nodes > 0 ? (size_t)fg->n_nodes : 1, sizeof(char *));
    if (!info->fused) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    info->n = fg->n_nodes;
    rw r = {fg, info, 0, err};
    int rc = 0;
    for (int round = 0; round < MAX_ROUNDS && !rc; round++) {
        int before = r.count;
        if ((rc = fold_constants(&r))) break;
        if ((rc = remove_identity(&r))) break;
        if ((rc = simple_rewrites(&r))) break;
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
