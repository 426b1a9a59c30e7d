/* Control flow: If, Loop and Scan, expanded into plain nodes at import.
 *
 * A program has static shapes and one instruction stream, so control flow
 * is resolved before anything is compiled (docs/onnx.md "Control flow"):
 *   If    whose condition is a constant once the graph before it is folded
 *         (a bound input, a shape computation): the branch it takes is
 *         inlined;
 *   Loop  with a constant trip count (and a condition constant in every
 *         iteration): unrolled, its scan outputs stacked (Unsqueeze +
 *         Concat);
 *   Scan  (opsets 8-17): unrolled over the scan axis, each step reading its
 *         slice through a Gather of a constant index.
 *
 * Pass B adds a placeholder node for each, with the outer values its
 * subgraphs read as extra inputs (so the topological order puts it after
 * them); shape inference expands it when it reaches it.  Subgraph names are
 * renamed into fresh ones ("<node>/<name>", "<node>/<iteration>/<name>")
 * through scopes, a chain of name maps: a name defined in a subgraph maps to
 * its fresh name, any other resolves in the enclosing scope (nested control
 * flow keeps its scope until it is expanded). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_imp.h"

#define OI_MAX_UNROLL 4096 /* iterations of one Loop or Scan */

typedef struct oi_scope {
    struct oi_scope *parent;
    char **from, **to;
    int n, cap;
} oi_scope;

typedef struct oi_ctl {
    int out;                    /* the placeholder's first output (survives the toposort) */
    int n_onnx;                 /* its ONNX inputs (the outer values follow) */
    const Onnx__NodeProto *np;  /* as the model gives it (subgraph names not renamed) */
    oi_scope *scope;            /* where its subgraphs' outer names resolve; NULL: top level */
} oi_ctl;

#define OOM(im) enpu_fail((im)->err, ENPU_E_NOMEM, "%s: out of memory", (im)->what)

bool oi_ctl_is(enpu_op op) { return op == ENPU_OP_IF || op == ENPU_OP_LOOP || op == ENPU_OP_SCAN; }

bool oi_ctl_reads(const enpu_graph *g, int t) {
    bool *seen = calloc((size_t)g->n_tensors + 1, 1);
    int *q = malloc(((size_t)g->n_tensors + 1) * sizeof *q);
    bool found = false;
    if (!seen || !q) {
        free(seen), free(q);
        return false;
    }
    int nq = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead || (n->op != ENPU_OP_IF && n->op != ENPU_OP_LOOP)) continue;
        for (int k = 0; k < (n->op == ENPU_OP_IF ? 1 : 2) && k < n->n_in; k++)
            if (n->in[k] >= 0 && !seen[n->in[k]]) seen[n->in[k]] = true, q[nq++] = n->in[k];
    }
    while (nq > 0 && !found) {
        int x = q[--nq];
        found = x == t;
        int p = g->tensors[x].producer;
        if (p < 0) continue;
        const enpu_node *n = &g->nodes[p];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && !seen[n->in[k]]) seen[n->in[k]] = true, q[nq++] = n->in[k];
    }
    free(seen), free(q);
    return found;
}

/* ---- scopes ---------------------------------------------------------------------- */

static oi_scope *scope_new(imp *im, oi_scope *parent) {
    oi_scope **ns = realloc(im->scopes, (size_t)(im->n_scopes + 1) * sizeof *ns);
    if (!ns) return NULL;
    im->scopes = ns;
    oi_scope *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->parent = parent;
    im->scopes[im->n_scopes++] = s;
    return s;
}

static int scope_put(imp *im, oi_scope *s, const char *from, const char *to) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **f = realloc(s->from, (size_t)cap * sizeof *f);
        if (f) s->from = f;
        char **t = f ? realloc(s->to, (size_t)cap * sizeof *t) : NULL;
        if (!t) return OOM(im);
        s->to = t, s->cap = cap;
    }
    s->from[s->n] = strdup(from);
    s->to[s->n] = strdup(to);
    if (!s->from[s->n] || !s->to[s->n]) {
        free(s->from[s->n]), free(s->to[s->n]);
        return OOM(im);
    }
    s->n++;
    return 0;
}

/* The graph's name for `name` as read in scope s (the innermost map that
 * has it; a top-level name is itself). */
static const char *resolve(const oi_scope *s, const char *name) {
    for (; s; s = s->parent)
        for (int i = s->n - 1; i >= 0; i--)
            if (strcmp(s->from[i], name) == 0) return s->to[i];
    return name;
}

void oi_ctl_free(imp *im) {
    for (int i = 0; i < im->n_scopes; i++) {
        oi_scope *s = im->scopes[i];
        for (int k = 0; k < s->n; k++) free(s->from[k]), free(s->to[k]);
        free(s->from), free(s->to), free(s);
    }
    free(im->scopes);
    free(im->ctl);
    im->scopes = NULL, im->ctl = NULL;
    im->n_scopes = im->n_ctl = im->cap_ctl = 0;
}

/* ---- the names a subgraph reads from outside ------------------------------------- */

typedef struct names {
    const char **v;
    int n, cap;
} names;

static bool has(const names *s, const char *x) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return true;
    return false;
}

static bool add(names *s, const char *x) {
    if (!x || !x[0] || has(s, x)) return true;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        const char **v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = x;
    return true;
}

/* Adds to *free the names graph gp reads that it does not define
 * (recursively through its own subgraphs). */
static bool free_names(const Onnx__GraphProto *gp, names *out) {
    names def = {0};
    bool ok = true;
    for (size_t i = 0; i < gp->n_input && ok; i++) ok = add(&def, gp->input[i]->name);
    for (size_t i = 0; i < gp->n_initializer && ok; i++) ok = add(&def, gp->initializer[i]->name);
    for (size_t i = 0; i < gp->n_node && ok; i++)
        for (size_t k = 0; k < gp->node[i]->n_output && ok; k++) ok = add(&def, gp->node[i]->output[k]);
    for (size_t i = 0; i < gp->n_node && ok; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_input && ok; k++)
            if (np->input[k] && np->input[k][0] && !has(&def, np->input[k])) ok = add(out, np->input[k]);
        for (size_t a = 0; a < np->n_attribute && ok; a++) {
            const Onnx__AttributeProto *at = np->attribute[a];
            names inner = {0};
            if (at->g) ok = free_names(at->g, &inner);
            for (size_t q = 0; q < at->n_graphs && ok; q++) ok = free_names(at->graphs[q], &inner);
            for (int q = 0; q < inner.n && ok; q++)
                if (!has(&def, inner.v[q])) ok = add(out, inner.v[q]);
            free(inner.v);
        }
    }
    for (size_t i = 0; i < gp->n_output && ok; i++)
        if (gp->output[i]->name && !has(&def, gp->output[i]->name)) ok = add(out, gp->output[i]->name);
    free(def.v);
    return ok;
}

/* The subgraph attribute `name` of np (NULL when absent or not a graph). */
static const Onnx__GraphProto *graph_attr(const Onnx__NodeProto *np, const char *name) {
    for (size_t a = 0; a < np->n_attribute; a++)
        if (np->attribute[a]->name && strcmp(np->attribute[a]->name, name) == 0) return np->attribute[a]->g;
    return NULL;
}

/* ---- the placeholder ------------------------------------------------------------- */

int oi_ctl_placeholder(imp *im, const nctx *c, enpu_op op, const int *in, int n_in) {
    const Onnx__NodeProto *np = im->cur_orig ? im->cur_orig : c->np;
    static const char *const attrs[3][2] = {{"then_branch", "else_branch"}, {"body", NULL}, {"body", NULL}};
    int which = op == ENPU_OP_IF ? 0 : op == ENPU_OP_LOOP ? 1 : 2;
    names fr = {0};
    for (int k = 0; k < 2; k++) {
        if (!attrs[which][k]) continue;
        const Onnx__GraphProto *gp = graph_attr(np, attrs[which][k]);
        if (!gp) return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' (a graph) is missing", attrs[which][k]);
        if (!free_names(gp, &fr)) {
            free(fr.v);
            return OOM(im);
        }
    }
    int ins[OI_MAX_NODE_IO], n = n_in;
    memcpy(ins, in, (size_t)n_in * sizeof *in);
    int rc = 0;
    for (int k = 0; k < fr.n && !rc; k++) {
        const char *g = resolve(im->cur_scope, fr.v[k]);
        int t = enpu_graph_find_tensor(im->g, g);
        if (t < 0)
            rc = oi_nfail(c, ENPU_E_INVALID, "a subgraph reads '%s', which is neither defined in it nor before it",
                          fr.v[k]);
        else if (n == OI_MAX_NODE_IO)
            rc = oi_nfail(c, ENPU_E_LIMIT, "its subgraphs read more than %d outer values", OI_MAX_NODE_IO - n_in);
        else
            ins[n++] = t;
    }
    free(fr.v);
    if (rc) return rc;
    int outs[OI_MAX_NODE_IO], n_out = (int)c->np->n_output;
    for (int k = 0; k < n_out; k++)
        outs[k] = c->np->output[k] && c->np->output[k][0] ? enpu_graph_find_tensor(im->g, c->np->output[k]) : -1;
    if (n_out == 0 || outs[0] < 0) return oi_nfail(c, ENPU_E_INVALID, "output 0 is missing");
    int ni = enpu_graph_add_node(im->g, c->name, op, n, ins, n_out, outs, im->err);
    if (ni < 0) return enpu_err_prefix(im->err, "%s", im->what);
    if (im->n_ctl == im->cap_ctl) {
        int cap = im->cap_ctl ? 2 * im->cap_ctl : 8;
        oi_ctl *nc = realloc(im->ctl, (size_t)cap * sizeof *nc);
        if (!nc) return OOM(im);
        im->ctl = nc, im->cap_ctl = cap;
    }
    im->ctl[im->n_ctl++] = (oi_ctl){outs[0], n_in, np, im->cur_scope};
    return 0;
}

/* ---- importing a body ------------------------------------------------------------ */

/* A fresh graph name "<prefix>/<name>" (numbered when taken). */
static int fresh(imp *im, const char *prefix, const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", prefix, name);
    for (int k = 2; enpu_graph_find_tensor(im->g, buf) >= 0; k++) snprintf(buf, n, "%s/%s#%d", prefix, name, k);
    if (strlen(buf) > ENPU_MAX_NAME)
        return enpu_fail(im->err, ENPU_E_LIMIT, "%s: name '%s' is over the limit of %d bytes", im->what, buf,
                         ENPU_MAX_NAME);
    return 0;
}

/* Infers nodes [from, to) as the main pass does: a node reading an
 * unresolved tensor is skipped, an unsupported form is a problem, control
 * flow is expanded. */
static int infer_range(imp *im, int from, int to) {
    int rc = 0;
    for (int i = from; i < to && !rc; i++) {
        const enpu_node *n0 = &im->g->nodes[i];
        if (n0->dead) continue;
        bool bad = false;
        for (int k = 0; k < n0->n_in; k++) bad |= oi_poisoned(im, n0->in[k]);
        if (bad) {
            rc = oi_poison_outputs(im, i);
            continue;
        }
        const legacy_bcast *lb = NULL;
        for (int k = 0; k < im->n_legacy && n0->n_out > 0; k++)
            if (im->legacy[k].out == n0->out[0]) lb = &im->legacy[k];
        enpu_err e = {0};
        enpu_err *saved = im->err;
        im->err = &e;
        bool added = false;
        rc = oi_ctl_is(n0->op) ? oi_ctl_expand(im, i) : oi_infer_one(im, i, lb, &added);
        im->err = saved;
        bool skipped;
        rc = oi_as_problem(im, rc, &e, &skipped);
        if (!rc && skipped) rc = oi_poison_outputs(im, i);
    }
    return rc;
}

/* Imports the nodes and initializers of body gp into the graph, its names
 * renamed into scope s (whose body inputs the caller has mapped), and
 * infers them. */
static int import_body(imp *im, const Onnx__GraphProto *gp, oi_scope *s, const char *prefix) {
    char buf[2 * ENPU_MAX_NAME + 64];
    int rc = 0;
    for (size_t i = 0; i < gp->n_initializer && !rc; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !tp->name[0])
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: subgraph initializer %zu has no name", im->what, i);
        if ((rc = fresh(im, prefix, tp->name, buf, sizeof buf))) return rc;
        enpu_pb_tensor t;
        if ((rc = enpu_onnx_decode_tensor(tp, im->what, tp->name, ENPU_E_INVALID, &t, im->err))) return rc;
        if ((rc = oi_add_const(im, buf, &t)) || (rc = scope_put(im, s, tp->name, buf))) return rc;
    }
    /* every output first: a node may read one defined later in the file */
    for (size_t i = 0; i < gp->n_node && !rc; i++)
        for (size_t k = 0; k < gp->node[i]->n_output && !rc; k++) {
            const char *o = gp->node[i]->output[k];
            if (!o || !o[0]) continue;
            if (!(rc = fresh(im, prefix, o, buf, sizeof buf))) rc = scope_put(im, s, o, buf);
        }
    if (rc) return rc;
    /* the nodes, renamed */
    size_t nn = gp->n_node;
    Onnx__NodeProto *cp = calloc(nn ? nn : 1, sizeof *cp);
    char ***ins = calloc(nn ? nn : 1, sizeof *ins), ***outs = calloc(nn ? nn : 1, sizeof *outs);
    char (*nm)[ENPU_MAX_NAME + 32] = calloc(nn ? nn : 1, sizeof *nm);
    if (!cp || !ins || !outs || !nm) rc = OOM(im);
    for (size_t i = 0; i < nn && !rc; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        cp[i] = *np;
        ins[i] = calloc(np->n_input + 1, sizeof **ins);
        outs[i] = calloc(np->n_output + 1, sizeof **outs);
        if (!ins[i] || !outs[i]) {
            rc = OOM(im);
            break;
        }
        for (size_t k = 0; k < np->n_input; k++)
            ins[i][k] = (char *)(np->input[k] && np->input[k][0] ? resolve(s, np->input[k]) : "");
        for (size_t k = 0; k < np->n_output; k++)
            outs[i][k] = (char *)(np->output[k] && np->output[k][0] ? resolve(s, np->output[k]) : "");
        cp[i].input = ins[i], cp[i].output = outs[i];
        char base[ENPU_MAX_NAME + 32];
        if (oi_node_name(np, i, base, sizeof base))
            rc = enpu_fail(im->err, ENPU_E_LIMIT, "%s: subgraph node %zu: name over the limit", im->what, i);
        else if (snprintf(nm[i], sizeof nm[i], "%s/%s", prefix, base) >= (int)sizeof nm[i] ||
                 strlen(nm[i]) > ENPU_MAX_NAME)
            rc = enpu_fail(im->err, ENPU_E_LIMIT, "%s: node name '%s/%s' is over the limit of %d bytes",
                           im->what, prefix, base, ENPU_MAX_NAME);
        cp[i].name = nm[i];
    }
    int first = im->g->n_nodes;
    const Onnx__NodeProto *saved_orig = im->cur_orig;
    struct oi_scope *saved_scope = im->cur_scope;
    im->cur_scope = s;
    /* pass A: constants and outputs; pass B: nodes (as import_nodes does) */
    for (size_t i = 0; i < nn && !rc; i++) {
        nctx c = {im, &cp[i], cp[i].name, cp[i].op_type ? cp[i].op_type : ""};
        if (!cp[i].op_type || !cp[i].op_type[0]) {
            rc = oi_nfail(&c, ENPU_E_INVALID, "no op_type");
            break;
        }
        if (strcmp(cp[i].op_type, "Constant") == 0) {
            rc = oi_import_constant(im, &c);
            continue;
        }
        enpu_op op = oi_is_default_domain(cp[i].domain) ? enpu_op_from_onnx(cp[i].op_type) : ENPU_OP_NONE;
        if (op == ENPU_OP_NONE || im->opset < oi_op_since(op)) {
            char msg[ENPU_MAX_NAME + 256];
            snprintf(msg, sizeof msg, "node '%s' (op '%s'): %s", cp[i].name, cp[i].op_type,
                     op == ENPU_OP_NONE ? "unsupported operator" : "the operator does not exist in this opset");
            if ((rc = oi_add_problem(im, msg))) break;
            op = ENPU_OP_NONE;
        }
        rc = oi_declare_outputs(im, &c, op);
    }
    for (size_t i = 0; i < nn && !rc; i++) {
        if (strcmp(cp[i].op_type, "Constant") == 0) continue;
        enpu_op op = oi_is_default_domain(cp[i].domain) ? enpu_op_from_onnx(cp[i].op_type) : ENPU_OP_NONE;
        if (op == ENPU_OP_NONE || im->opset < oi_op_since(op)) continue;
        nctx c = {im, &cp[i], cp[i].name, cp[i].op_type};
        enpu_err e = {0};
        enpu_err *saved = im->err;
        im->err = &e;
        im->cur_orig = gp->node[i];
        int r = oi_import_node(im, &c, op);
        im->cur_orig = NULL;
        im->err = saved;
        bool skipped;
        if ((rc = oi_as_problem(im, r, &e, &skipped))) break;
        if (!skipped) continue;
        for (size_t k = 0; k < cp[i].n_output && !rc; k++) {
            int t = cp[i].output[k][0] ? enpu_graph_find_tensor(im->g, cp[i].output[k]) : -1;
            if (t >= 0 && im->g->tensors[t].producer < 0) rc = oi_set_poison(im, t);
        }
    }
    im->cur_orig = saved_orig;
    im->cur_scope = saved_scope;
    for (size_t i = 0; ins && outs && i < nn; i++) free(ins[i]), free(outs[i]);
    free(cp), free(ins), free(outs), free(nm);
    if (rc) return rc;
    return infer_range(im, first, im->g->n_nodes);
}

/* ---- building blocks -------------------------------------------------------------- */

/* A node of op on in[0..n) writing a fresh tensor; its index, or < 0. */
static int infer_range(imp *im, int from, int to);

/* A node of op on in[0..n) writing a fresh tensor, inferred; the tensor,
 * or < 0. */
static int node1(imp *im, const char *base, const char *suffix, enpu_op op, int n, const int *in,
                 const enpu_attr *at) {
    int t = oi_new_tensor(im, base, suffix);
    if (t < 0) return t;
    int k = oi_new_node(im, base, suffix, op, n, in, t, at);
    if (k < 0) return k;
    int rc = infer_range(im, k, k + 1);
    return rc ? rc : t;
}

/* A scalar constant (int64 or bool). */
static int scalar(imp *im, const char *base, const char *suffix, enpu_dtype dt, int64_t v) {
    char buf[ENPU_MAX_NAME + 64];
    snprintf(buf, sizeof buf, "%s:%s", base, suffix);
    for (int k = 2; enpu_graph_find_tensor(im->g, buf) >= 0; k++) snprintf(buf, sizeof buf, "%s:%s%d", base, suffix, k);
    enpu_pb_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = 0;
    t.data = malloc(8);
    if (!t.data) return OOM(im);
    if (dt == ENPU_DT_BOOL) *(uint8_t *)t.data = v != 0;
    else *(int64_t *)t.data = v;
    int rc = oi_add_const(im, buf, &t);
    return rc ? rc : enpu_graph_find_tensor(im->g, buf);
}

/* Concat along `axis` of the Unsqueeze (at `axis`) of each of v[0..n). */
static int stack(imp *im, const char *base, const int *v, int n, int axis, bool reverse) {
    int *u = malloc((size_t)(n ? n : 1) * sizeof *u);
    if (!u) return OOM(im);
    int rc = 0;
    for (int k = 0; k < n && rc >= 0; k++) {
        enpu_attr at;
        memset(&at, 0, sizeof at);
        at.shape.n_axes = 1, at.shape.axes[0] = axis;
        char sfx[32];
        snprintf(sfx, sizeof sfx, "unsqueeze%d", k);
        rc = node1(im, base, sfx, ENPU_OP_UNSQUEEZE, 1, &v[reverse ? n - 1 - k : k], &at);
        u[k] = rc;
    }
    if (rc >= 0) {
        enpu_attr at;
        memset(&at, 0, sizeof at);
        at.shape.axis = axis;
        rc = n <= OI_MAX_NODE_IO ? node1(im, base, "concat", ENPU_OP_CONCAT, n, u, &at) : -1;
        if (n > OI_MAX_NODE_IO)
            rc = enpu_fail(im->err, ENPU_E_LIMIT, "%s: node '%s': %d values to stack, over the limit of %d",
                           im->what, base, n, OI_MAX_NODE_IO);
    }
    free(u);
    return rc;
}

/* Output `out` of the placeholder now written by an Identity of src. */
static int bind_out(imp *im, const char *base, int k, int out, int src) {
    if (out < 0) return 0;
    char sfx[32];
    snprintf(sfx, sizeof sfx, "output%d", k);
    int r = oi_new_node(im, base, sfx, ENPU_OP_IDENTITY, 1, &src, out, NULL);
    return r < 0 ? r : infer_range(im, r, r + 1);
}

/* A constant scalar input as an integer; false when it is not one. */
static bool const_scalar(const imp *im, int t, int64_t *v) {
    if (t < 0 || !oi_is_const(im->g, t)) return false;
    const enpu_tensor *x = &im->g->tensors[t];
    int64_t n = 1;
    for (int d = 0; d < x->rank; d++) n *= x->dims[d];
    if (n != 1) return false;
    *v = (int64_t)enpu_dtype_value_at(x->dtype, x->data, 0);
    return true;
}

static int tensor_of(imp *im, const oi_scope *s, const char *name) {
    return enpu_graph_find_tensor(im->g, resolve(s, name));
}

/* ---- expansion ------------------------------------------------------------------- */

typedef struct xctx {
    imp *im;
    const oi_ctl *rec;
    char name[ENPU_MAX_NAME + 1];
    int n_in, in[OI_MAX_NODE_IO];     /* the ONNX inputs */
    int n_out, out[OI_MAX_NODE_IO];
} xctx;

static int xfail(const xctx *x, enpu_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int xfail(const xctx *x, enpu_status code, const char *fmt, ...) {
    char msg[ENPU_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return enpu_fail(x->im->err, code, "%s: node '%s' (op '%s'): %s", x->im->what, x->name,
                     x->rec->np->op_type, msg);
}

static int expand_if(xctx *x) {
    imp *im = x->im;
    int64_t cond;
    if (!const_scalar(im, x->in[0], &cond))
        return xfail(x, ENPU_E_UNSUPPORTED,
                     "the condition '%s' is computed at run time; a program takes one branch: bind the "
                     "graph inputs it depends on (--bind NAME=FILE) so that it folds to a constant",
                     im->g->tensors[x->in[0]].name);
    const char *which = cond ? "then_branch" : "else_branch";
    const Onnx__GraphProto *gp = graph_attr(x->rec->np, which);
    if ((size_t)x->n_out != gp->n_output)
        return xfail(x, ENPU_E_INVALID, "%s has %zu outputs, the node %d", which, gp->n_output, x->n_out);
    oi_scope *s = scope_new(im, x->rec->scope);
    if (!s) return OOM(im);
    char prefix[ENPU_MAX_NAME + 32];
    snprintf(prefix, sizeof prefix, "%s/%s", x->name, cond ? "then" : "else");
    int rc = import_body(im, gp, s, prefix);
    for (int k = 0; k < x->n_out && !rc; k++) {
        int src = tensor_of(im, s, gp->output[k]->name);
        if (src < 0) return xfail(x, ENPU_E_INVALID, "%s output '%s' is not defined", which, gp->output[k]->name);
        rc = bind_out(im, x->name, k, x->out[k], src);
    }
    return rc;
}

static int expand_loop(xctx *x) {
    imp *im = x->im;
    const Onnx__GraphProto *gp = graph_attr(x->rec->np, "body");
    int64_t trip = INT64_MAX, cond = 1;
    if (x->in[0] >= 0 && !const_scalar(im, x->in[0], &trip))
        return xfail(x, ENPU_E_UNSUPPORTED, "the trip count '%s' is computed at run time; a Loop is unrolled: "
                     "bind the graph inputs it depends on (--bind NAME=FILE)", im->g->tensors[x->in[0]].name);
    if (x->n_in > 1 && x->in[1] >= 0 && !const_scalar(im, x->in[1], &cond))
        return xfail(x, ENPU_E_UNSUPPORTED, "the condition '%s' is computed at run time; a Loop is unrolled: "
                     "bind the graph inputs it depends on (--bind NAME=FILE)", im->g->tensors[x->in[1]].name);
    if (x->in[0] < 0 && (x->n_in < 2 || x->in[1] < 0))
        return xfail(x, ENPU_E_UNSUPPORTED, "neither a trip count nor a condition: an endless loop");
    int N = x->n_in - 2, K = x->n_out - N;
    if (N < 0 || K < 0 || gp->n_input != (size_t)(2 + N) || gp->n_output != (size_t)(1 + N + K))
        return xfail(x, ENPU_E_INVALID, "the body has %zu inputs and %zu outputs; with %d carried values and %d "
                     "scan outputs it needs %d and %d", gp->n_input, gp->n_output, N, K, 2 + N, 1 + N + K);
    int carried[OI_MAX_NODE_IO];
    for (int k = 0; k < N; k++) carried[k] = x->in[2 + k];
    int *scans = NULL, rc = 0;
    int64_t it = 0;
    for (; it < trip && cond && !rc; it++) {
        if (it >= OI_MAX_UNROLL) {
            rc = xfail(x, ENPU_E_LIMIT, "more than %d iterations to unroll", OI_MAX_UNROLL);
            break;
        }
        int *ns = realloc(scans, (size_t)((it + 1) * (K ? K : 1)) * sizeof *ns);
        if (!ns) {
            rc = OOM(im);
            break;
        }
        scans = ns;
        oi_scope *s = scope_new(im, x->rec->scope);
        if (!s) {
            rc = OOM(im);
            break;
        }
        char prefix[ENPU_MAX_NAME + 32], sfx[32];
        snprintf(prefix, sizeof prefix, "%s/%" PRId64, x->name, it);
        snprintf(sfx, sizeof sfx, "iter%" PRId64, it);
        int ti = scalar(im, x->name, sfx, ENPU_DT_INT64, it);
        snprintf(sfx, sizeof sfx, "cond%" PRId64, it);
        int tc = ti < 0 ? ti : scalar(im, x->name, sfx, ENPU_DT_BOOL, cond);
        if (tc < 0) {
            rc = tc;
            break;
        }
        if ((rc = scope_put(im, s, gp->input[0]->name, im->g->tensors[ti].name)) ||
            (rc = scope_put(im, s, gp->input[1]->name, im->g->tensors[tc].name)))
            break;
        for (int k = 0; k < N && !rc; k++) rc = scope_put(im, s, gp->input[2 + k]->name, im->g->tensors[carried[k]].name);
        if (rc || (rc = import_body(im, gp, s, prefix))) break;
        int co = tensor_of(im, s, gp->output[0]->name);
        if (co < 0 || !const_scalar(im, co, &cond)) {
            rc = xfail(x, ENPU_E_UNSUPPORTED, "the condition the body computes ('%s') is not a constant in "
                       "iteration %" PRId64 "; a Loop is unrolled", gp->output[0]->name, it);
            break;
        }
        for (int k = 0; k < N + K && !rc; k++) {
            int t = tensor_of(im, s, gp->output[1 + k]->name);
            if (t < 0 || oi_poisoned(im, t))
                rc = xfail(x, ENPU_E_UNSUPPORTED, "body output '%s' is not computed", gp->output[1 + k]->name);
            else if (k < N) carried[k] = t;
            else scans[it * K + (k - N)] = t;
        }
    }
    for (int k = 0; k < N && !rc; k++) rc = bind_out(im, x->name, k, x->out[k], carried[k]);
    if (!rc && K > 0 && it == 0)
        rc = xfail(x, ENPU_E_UNSUPPORTED, "no iteration runs, so its scan outputs have no shape");
    for (int k = 0; k < K && !rc && x->out[N + k] >= 0; k++) {
        int *col = malloc((size_t)it * sizeof *col);
        if (!col) {
            rc = OOM(im);
            break;
        }
        for (int64_t j = 0; j < it; j++) col[j] = scans[j * K + k];
        char base[ENPU_MAX_NAME + 32];
        snprintf(base, sizeof base, "%s/scan%d", x->name, k);
        int t = stack(im, base, col, (int)it, 0, false);
        free(col);
        rc = t < 0 ? t : bind_out(im, x->name, N + k, x->out[N + k], t);
    }
    free(scans);
    return rc;
}

/* An INTS attribute of the Scan with `n` values (default 0). */
static int scan_ints(xctx *x, const char *name, int n, int64_t *v) {
    for (int k = 0; k < n; k++) v[k] = 0;
    for (size_t a = 0; a < x->rec->np->n_attribute; a++) {
        const Onnx__AttributeProto *at = x->rec->np->attribute[a];
        if (!at->name || strcmp(at->name, name) != 0) continue;
        if (at->n_ints != (size_t)n)
            return xfail(x, ENPU_E_INVALID, "attribute '%s' has %zu values, expected %d", name, at->n_ints, n);
        for (int k = 0; k < n; k++) v[k] = at->ints[k];
    }
    return 0;
}

/* One run of the Scan body over states st[0..N) and the M scan inputs
 * sc[] (each already without the batch axis in opset 8), T steps; the
 * final states into st, the scan outputs (stacked) into so[0..K). */
static int scan_run(xctx *x, const Onnx__GraphProto *gp, int N, int M, int K, int *st, const int *sc,
                    const int64_t *in_ax, const int64_t *in_dir, const int64_t *out_ax,
                    const int64_t *out_dir, int64_t T, const char *tag, int *so) {
    imp *im = x->im;
    int *outs = malloc((size_t)((T ? T : 1) * (K ? K : 1)) * sizeof *outs);
    if (!outs) return OOM(im);
    int rc = 0;
    for (int64_t t = 0; t < T && !rc; t++) {
        oi_scope *s = scope_new(im, x->rec->scope);
        if (!s) {
            rc = OOM(im);
            break;
        }
        char prefix[ENPU_MAX_NAME + 48];
        snprintf(prefix, sizeof prefix, "%s/%s%" PRId64, x->name, tag, t);
        for (int k = 0; k < N && !rc; k++) rc = scope_put(im, s, gp->input[k]->name, im->g->tensors[st[k]].name);
        for (int j = 0; j < M && !rc; j++) {
            char sfx[48];
            snprintf(sfx, sizeof sfx, "%sidx%" PRId64 "_%d", tag, t, j);
            int ix = scalar(im, x->name, sfx, ENPU_DT_INT64, in_dir[j] ? T - 1 - t : t);
            if (ix < 0) {
                rc = ix;
                break;
            }
            enpu_attr at;
            memset(&at, 0, sizeof at);
            at.shape.axis = (int)in_ax[j];
            int gi[2] = {sc[j], ix};
            snprintf(sfx, sizeof sfx, "%sslice%" PRId64 "_%d", tag, t, j);
            int el = node1(im, x->name, sfx, ENPU_OP_GATHER, 2, gi, &at);
            if (el < 0) {
                rc = el;
                break;
            }
            rc = scope_put(im, s, gp->input[N + j]->name, im->g->tensors[el].name);
        }
        if (rc || (rc = import_body(im, gp, s, prefix))) break;
        for (int k = 0; k < N + K && !rc; k++) {
            int t2 = tensor_of(im, s, gp->output[k]->name);
            if (t2 < 0 || oi_poisoned(im, t2))
                rc = xfail(x, ENPU_E_UNSUPPORTED, "body output '%s' is not computed", gp->output[k]->name);
            else if (k < N) st[k] = t2;
            else outs[t * K + (k - N)] = t2;
        }
    }
    for (int k = 0; k < K && !rc; k++) {
        int *col = malloc((size_t)(T ? T : 1) * sizeof *col);
        if (!col) {
            rc = OOM(im);
            break;
        }
        for (int64_t t = 0; t < T; t++) col[t] = outs[t * K + k];
        const enpu_tensor *e = &im->g->tensors[col[0]];
        int ax = (int)out_ax[k];
        if (ax < 0) ax += e->rank + 1;
        char base[ENPU_MAX_NAME + 48];
        snprintf(base, sizeof base, "%s/%sscan%d", x->name, tag, k);
        so[k] = ax < 0 || ax > e->rank ? xfail(x, ENPU_E_INVALID, "scan output axis %d", (int)out_ax[k])
                                        : stack(im, base, col, (int)T, ax, out_dir[k] != 0);
        free(col);
        if (so[k] < 0) rc = so[k];
    }
    free(outs);
    return rc;
}

static int expand_scan(xctx *x) {
    imp *im = x->im;
    const Onnx__GraphProto *gp = graph_attr(x->rec->np, "body");
    bool v8 = im->opset < 9;
    int64_t M64 = -1;
    for (size_t a = 0; a < x->rec->np->n_attribute; a++)
        if (x->rec->np->attribute[a]->name && strcmp(x->rec->np->attribute[a]->name, "num_scan_inputs") == 0)
            M64 = x->rec->np->attribute[a]->i;
    int first = v8 ? 1 : 0; /* opset 8: sequence_lens first */
    int N = x->n_in - first - (int)M64, M = (int)M64, K;
    if (M64 < 1 || N < 0) return xfail(x, ENPU_E_INVALID, "attribute 'num_scan_inputs' is %" PRId64, M64);
    K = x->n_out - N;
    if (K < 0 || gp->n_input != (size_t)(N + M) || gp->n_output != (size_t)(N + K))
        return xfail(x, ENPU_E_INVALID, "the body has %zu inputs and %zu outputs, expected %d and %d", gp->n_input,
                     gp->n_output, N + M, N + K);
    int64_t in_ax[OI_MAX_NODE_IO] = {0}, in_dir[OI_MAX_NODE_IO] = {0}, out_ax[OI_MAX_NODE_IO] = {0},
            out_dir[OI_MAX_NODE_IO] = {0};
    int rc;
    if (v8) {
        if ((rc = scan_ints(x, "directions", M, in_dir))) return rc;
        for (int k = 0; k < M; k++) in_ax[k] = 0;
        for (int k = 0; k < K; k++) out_ax[k] = 0, out_dir[k] = 0;
    } else if ((rc = scan_ints(x, "scan_input_axes", M, in_ax)) || (rc = scan_ints(x, "scan_input_directions", M, in_dir)) ||
               (rc = scan_ints(x, "scan_output_axes", K, out_ax)) ||
               (rc = scan_ints(x, "scan_output_directions", K, out_dir))) {
        return rc;
    }
    int st[OI_MAX_NODE_IO] = {0}, sc[OI_MAX_NODE_IO] = {0}, so[OI_MAX_NODE_IO] = {0};
    for (int k = 0; k < N; k++) st[k] = x->in[first + k];
    for (int j = 0; j < M; j++) sc[j] = x->in[first + N + j];
    for (int j = 0; j < M; j++) {
        const enpu_tensor *t = &im->g->tensors[sc[j]];
        int r = t->rank - (v8 ? 1 : 0);
        if (in_ax[j] < 0) in_ax[j] += r;
        if (in_ax[j] < 0 || in_ax[j] >= r) return xfail(x, ENPU_E_INVALID, "scan input axis %d of a rank-%d input", (int)in_ax[j], r);
    }
    int64_t T = im->g->tensors[sc[0]].dims[in_ax[0] + (v8 ? 1 : 0)];
    for (int j = 1; j < M; j++)
        if (im->g->tensors[sc[j]].dims[in_ax[j] + (v8 ? 1 : 0)] != T)
            return xfail(x, ENPU_E_INVALID, "scan inputs of %" PRId64 " and %" PRId64 " steps", T,
                         im->g->tensors[sc[j]].dims[in_ax[j] + (v8 ? 1 : 0)]);
    if (T > OI_MAX_UNROLL) return xfail(x, ENPU_E_LIMIT, "%" PRId64 " steps, over the unroll limit of %d", T, OI_MAX_UNROLL);
    if (!v8) {
        if ((rc = scan_run(x, gp, N, M, K, st, sc, in_ax, in_dir, out_ax, out_dir, T, "", so))) return rc;
        for (int k = 0; k < N && !rc; k++) rc = bind_out(im, x->name, k, x->out[k], st[k]);
        for (int k = 0; k < K && !rc; k++) rc = bind_out(im, x->name, N + k, x->out[N + k], so[k]);
        return rc;
    }
    /* opset 8: batch axis 0 on every input and output; each batch row runs alone */
    int64_t lens;
    if (x->in[0] >= 0 && (!oi_is_const(im->g, x->in[0]) || (const_scalar(im, x->in[0], &lens) && lens != T)))
        return xfail(x, ENPU_E_UNSUPPORTED, "sequence_lens must be absent or a constant of the full length");
    int64_t B = im->g->tensors[N ? st[0] : sc[0]].dims[0];
    if (B > OI_MAX_NODE_IO) return xfail(x, ENPU_E_LIMIT, "batch %" PRId64 " over %d", B, OI_MAX_NODE_IO);
    int fin[OI_MAX_NODE_IO / 2][OI_MAX_NODE_IO], sco[OI_MAX_NODE_IO / 2][OI_MAX_NODE_IO];
    if (N > OI_MAX_NODE_IO / 2 || K > OI_MAX_NODE_IO / 2) return xfail(x, ENPU_E_LIMIT, "too many states or outputs");
    for (int64_t b = 0; b < B && !rc; b++) {
        int sb[OI_MAX_NODE_IO], cb[OI_MAX_NODE_IO], ob[OI_MAX_NODE_IO];
        char tag[32];
        snprintf(tag, sizeof tag, "b%" PRId64 "_", b);
        int ix = scalar(im, x->name, tag, ENPU_DT_INT64, b);
        if (ix < 0) return ix;
        for (int k = 0; k < N + M && !rc; k++) {
            enpu_attr at;
            memset(&at, 0, sizeof at);
            int gi[2] = {k < N ? st[k] : sc[k - N], ix};
            char sfx[48];
            snprintf(sfx, sizeof sfx, "%srow%d", tag, k);
            int r = node1(im, x->name, sfx, ENPU_OP_GATHER, 2, gi, &at);
            if (r < 0) return r;
            if (k < N) sb[k] = r;
            else cb[k - N] = r;
        }
        if ((rc = scan_run(x, gp, N, M, K, sb, cb, in_ax, in_dir, out_ax, out_dir, T, tag, ob))) return rc;
        for (int k = 0; k < N; k++) fin[k][b] = sb[k];
        for (int k = 0; k < K; k++) sco[k][b] = ob[k];
    }
    for (int k = 0; k < N + K && !rc; k++) {
        char base[ENPU_MAX_NAME + 32];
        snprintf(base, sizeof base, "%s/batch%d", x->name, k);
        int t = stack(im, base, k < N ? fin[k] : sco[k - N], (int)B, 0, false);
        rc = t < 0 ? t : bind_out(im, x->name, k, x->out[k], t);
    }
    return rc;
}

int oi_ctl_expand(imp *im, int ni) {
    const enpu_node *n = &im->g->nodes[ni];
    const oi_ctl *rec = NULL;
    for (int k = 0; k < im->n_ctl && !rec; k++)
        if (n->n_out > 0 && im->ctl[k].out == n->out[0]) rec = &im->ctl[k];
    ENPU_ASSERT(rec);
    enpu_op op = n->op;
    xctx x;
    memset(&x, 0, sizeof x);
    x.im = im, x.rec = rec;
    snprintf(x.name, sizeof x.name, "%s", n->name);
    x.n_in = rec->n_onnx;
    memcpy(x.in, n->in, (size_t)rec->n_onnx * sizeof *x.in);
    x.n_out = n->n_out;
    memcpy(x.out, n->out, (size_t)n->n_out * sizeof *x.out);
    for (int k = 0; k < x.n_in; k++)
        if (x.in[k] >= 0 && im->g->tensors[x.in[k]].rank < 0)
            return xfail(&x, ENPU_E_UNSUPPORTED, "the shape of input '%s' is unknown", im->g->tensors[x.in[k]].name);
    /* the placeholder goes: its outputs are written by what replaces it */
    enpu_node *pn = &im->g->nodes[ni];
    for (int k = 0; k < pn->n_out; k++)
        if (pn->out[k] >= 0) im->g->tensors[pn->out[k]].producer = -1;
    pn->dead = true;
    pn->n_out = 0;
    int rc;
    switch (op) {
    case ENPU_OP_IF: rc = expand_if(&x); break;
    case ENPU_OP_LOOP: rc = expand_loop(&x); break;
    default: rc = expand_scan(&x); break;
    }
    if (rc && im->err->code == ENPU_E_UNSUPPORTED) {
        /* a problem: its outputs stay unresolved */
        for (int k = 0; k < x.n_out; k++) {
            if (x.out[k] < 0 || im->g->tensors[x.out[k]].producer >= 0) continue;
            int r = oi_set_poison(im, x.out[k]);
            if (r) return r;
        }
    }
    return rc;
}
