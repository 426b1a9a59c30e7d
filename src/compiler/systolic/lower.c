/* Lowering for the systolic engine: quantized nodes -> layers.
 *
 * A convolution becomes sya_conv (its im2col rows stream through the array,
 * groups as separate products), a depthwise convolution, an average pooling
 * and a standalone BatchNormalization / Relu / requantizing copy (depthwise
 * 1x1) become sya_dwconv (one channel per unit), a Gemm sya_fc over the
 * stored map it reads.  The array only multiplies and accumulates: max
 * pooling and data movement the host does (timed), exactly; element-wise Add
 * and Mul and table activations the host runs too (timed): the model is
 * quantized for the engine (sya_host_kinds), which makes them host nodes of
 * the quantized graph, so the golden reference computes them as the host
 * does.  A graph quantized for another engine (its Add an int8 kernel the
 * host's float op would not reproduce bit for bit) is refused.
 *
 * Tensors live in storages [h][w][c] (the natural layout of [1, C, H, W]).
 * A data-movement node that only permutes elements gives its output a view
 * of its input's storage; a view is free when its elements are in the
 * natural order, and a Gemm reads any view by storing its weights in the
 * storage's order; any other consumer of a permuted view makes the host do
 * the move. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/systolic/sya_cc.h"

#define OOM() enpu_fail(c->err, ENPU_E_NOMEM, "out of memory")

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static const enpu_tensor *T(const sc *c, int t) { return &c->g->tensors[t]; }

int sc_note(sc *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = cc_vdupf(fmt, ap);
    va_end(ap);
    char **nn = s ? realloc(c->notes, (size_t)(c->nnotes + 1) * sizeof *nn) : NULL;
    if (!nn) {
        free(s);
        return OOM();
    }
    c->notes = nn;
    c->notes[c->nnotes++] = s;
    return 0;
}

static int add_move(sc *c, const enpu_node *n, enpu_move_kind k, const char *how) {
    if (c->nmv == c->capmv) {
        int cap = c->capmv ? 2 * c->capmv : 16;
        enpu_move_report *m = realloc(c->mv, (size_t)cap * sizeof *m);
        if (!m) return OOM();
        c->mv = m, c->capmv = cap;
    }
    enpu_move_report *m = &c->mv[c->nmv];
    m->name = cc_dupf("%s", n->name);
    m->op = cc_dupf("%s", enpu_op_name(n->op));
    m->how = cc_dupf("%s", how);
    m->kind = k;
    c->nmv++;
    return m->name && m->op && m->how ? 0 : OOM();
}

/* ---- storages and views ---------------------------------------------------- */

static int add_store(sc *c, int tensor, int def) {
    if (c->ns == c->caps) {
        int cap = c->caps ? 2 * c->caps : 32;
        sc_store *s = realloc(c->S, (size_t)cap * sizeof *s);
        if (!s) return OOM();
        c->S = s, c->caps = cap;
    }
    sc_store *s = &c->S[c->ns];
    memset(s, 0, sizeof *s);
    cc_tensor_grid(T(c, tensor), &s->h, &s->w, &s->c);
    s->words = s->h * s->w * cdiv(s->c, c->wb);
    s->tensor = tensor;
    s->def = def, s->last = def;
    s->addr = -1;
    return c->ns++;
}

/* Tensor t gets its own natural storage, written by layer `def`. */
static int store_natural(sc *c, int t, int def) {
    int s = add_store(c, t, def);
    if (s < 0) return s;
    free(c->tv[t].pos);
    c->tv[t].pos = NULL;
    c->tv[t].store = s;
    return s;
}

static int64_t view_pos(const sc *c, int t, int64_t e) {
    return c->tv[t].pos ? c->tv[t].pos[e] : cc_natural_pos(T(c, t), e);
}

static bool view_natural(const sc *c, int t) {
    const sc_view *v = &c->tv[t];
    return v->store >= 0 && cc_pos_natural(T(c, t), v->pos, c->S[v->store].c);
}

static bool view_identity(const sc *c, int t) {
    return c->tv[t].store >= 0 && cc_pos_identity(T(c, t), c->tv[t].pos);
}

/* The storage of tensor t read in its natural layout by layer `li` (a graph
 * input gets its storage here). */
static int natural_input(sc *c, int t, int li, const enpu_node *consumer) {
    sc_view *v = &c->tv[t];
    if (v->store < 0) {
        if (T(c, t)->flags & ENPU_T_CONST)
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s': constant input '%s' as a feature map is not supported on the "
                             "systolic engine",
                             consumer->name, T(c, t)->name);
        if (!(T(c, t)->flags & ENPU_T_INPUT))
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': input '%s' is not computed before it",
                             consumer->name, T(c, t)->name);
        int s = store_natural(c, t, -1);
        if (s < 0) return s;
    } else if (!view_natural(c, t)) {
        return enpu_fail(c->err, ENPU_E_INVALID,
                         "node '%s': input '%s' is a permuted view (internal: its move should run on "
                         "the host)",
                         consumer->name, T(c, t)->name);
    }
    if (li > c->S[v->store].last) c->S[v->store].last = li;
    return v->store;
}

/* ---- layers -------------------------------------------------------------------- */

static int add_layer(sc *c, int kind, int node) {
    if (c->nl == c->capl) {
        int cap = c->capl ? 2 * c->capl : 32;
        sc_layer *l = realloc(c->L, (size_t)cap * sizeof *l);
        if (!l) return OOM();
        c->L = l, c->capl = cap;
    }
    sc_layer *l = &c->L[c->nl];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->node = node;
    l->in_store = l->out_store = l->out = -1;
    l->macs = enpu_node_macs(c->g, &c->g->nodes[node]);
    l->ins.stride_h = l->ins.stride_w = l->ins.dil_h = l->ins.dil_w = 1;
    l->ins.hk = l->ins.wk = l->ins.groups = 1;
    l->ins.clamp_lo = -128, l->ins.clamp_hi = 127;
    return c->nl++;
}

/* Every field of the instruction within its width, or ENPU_E_UNSUPPORTED
 * naming the node and the field. */
static int check_fields(sc *c, sc_layer *l) {
    enpu_instr *in = &l->ins;
    cc_shrink_stride(in->hi, in->pad_top, in->pad_bottom, in->hk, in->dil_h, in->ho, &in->stride_h);
    cc_shrink_stride(in->wi, in->pad_left, in->pad_right, in->wk, in->dil_w, in->wo, &in->stride_w);
    enpu_isa_layout lay;
    int rc = enpu_isa_layout_make(c->a, &lay, c->err);
    if (rc) return rc;
    for (int f = 0; f < ENPU_F_COUNT; f++) {
        int64_t lo, hi, v = enpu_instr_get(in, f);
        if (lay.pos[ENPU_FMT_SYA][f] < 0) continue;
        enpu_field_range(&lay, f, &lo, &hi);
        if (v < lo || v > hi)
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s': %s %" PRId64 " does not fit the systolic instruction's field "
                             "(%" PRId64 "..%" PRId64 ")",
                             c->g->nodes[l->node].name, enpu_field_get(f)->name, v, lo, hi);
    }
    return 0;
}

static int params(sc *c, sc_layer *l, const enpu_qnode *q, int64_t co) {
    l->bias = malloc((size_t)co * sizeof *l->bias);
    l->M = malloc((size_t)co * sizeof *l->M);
    l->S = malloc((size_t)co);
    if (!l->bias || !l->M || !l->S) return OOM();
    for (int64_t i = 0; i < co; i++) {
        l->bias[i] = q->bias ? q->bias[i] : 0;
        l->M[i] = q->M[q->n_ch == 1 ? 0 : i];
        l->S[i] = q->S[q->n_ch == 1 ? 0 : i];
    }
    l->ins.zp_in = q->zp_in[0], l->ins.zp_out = q->zp_out;
    l->ins.clamp_lo = q->lo, l->ins.clamp_hi = q->hi;
    return 0;
}

/* The PE accumulator holds sum x*w over int8 x (the bias is added after the
 * array): proven per output channel from the weights, or the layer does not
 * fit the arch. */
static int check_acc(sc *c, const enpu_node *n, const int8_t *w, int64_t co, int64_t k) {
    int bits = (int)c->a->sya_acc_bits;
    for (int64_t o = 0; o < co; o++) {
        int64_t lo, hi;
        enpu_acc_range(w + o * k, k, 1, -128, 127, 0, &lo, &hi);
        if (!enpu_acc_fits(lo, bits) || !enpu_acc_fits(hi, bits)) {
            int need = bits;
            while (need < 63 && (!enpu_acc_fits(lo, need) || !enpu_acc_fits(hi, need))) need++;
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "node '%s': output channel %" PRId64 ": the dot product over int8 inputs may "
                             "reach [%" PRId64 ", %" PRId64 "], beyond the %d-bit PE accumulator of arch "
                             "'%s'; use sya_acc_bits >= %d",
                             n->name, o, lo, hi, bits, c->a->name, need);
        }
    }
    return 0;
}

static int out_store(sc *c, int li, int y) {
    sc_layer *l = &c->L[li];
    int rc = check_fields(c, l);
    if (rc) return rc;
    int s = store_natural(c, y, li);
    if (s < 0) return s;
    l->out = y, l->out_store = s;
    return 0;
}

static int lower_conv(sc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    const enpu_qnode *q = n->q;
    enpu_qconv_geom geo;
    int rc = enpu_qconv_geom_of(c->g, n, &geo, c->err);
    if (rc) return rc;
    int x = n->in[0], y = n->out[0];
    if (geo.n > 1)
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': batch %" PRId64 " (the engine runs batch 1)",
                         n->name, geo.n);
    int li = add_layer(c, SC_SYA, ni);
    if (li < 0) return li;
    const int64_t wb = c->wb;
    if (q->origin == ENPU_QO_FC) {
        if (c->tv[x].store < 0 && (rc = natural_input(c, x, li, n)) < 0) return rc;
        sc_layer *l = &c->L[li];
        sc_store *st = &c->S[c->tv[x].store];
        if (li > st->last) st->last = li;
        l->in_store = c->tv[x].store;
        int64_t K = geo.ci, rows = st->h * st->w * st->c;
        if (rows != K)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': FC of %" PRId64 " inputs reads a %" PRId64
                             "x%" PRId64 "x%" PRId64 " map", n->name, K, st->h, st->w, st->c);
        enpu_instr *in = &l->ins;
        in->opcode = ENPU_OPC_SYA_FC;
        in->hi = st->h, in->wi = st->w, in->ci = st->c;
        in->ho = in->wo = 1, in->co = geo.co;
        int64_t wpr = cdiv(geo.co, wb);
        l->w_bytes = K * wpr * wb;
        if (!(l->w = calloc((size_t)l->w_bytes, 1))) return OOM();
        bool perm = false;
        for (int64_t k = 0; k < K; k++) {
            int64_t p = view_pos(c, x, k);
            perm |= p != k;
            for (int64_t o = 0; o < geo.co; o++) l->w[p * wpr * wb + o] = q->w[o * K + k];
        }
        if ((rc = params(c, l, q, geo.co)) || (rc = check_acc(c, n, q->w, geo.co, K))) return rc;
        l->note = cc_dupf("%s", perm ? "weights permuted to the stored map's [h][w][c] order" : "");
        return out_store(c, li, y);
    }
    int s = natural_input(c, x, li, n);
    if (s < 0) return s;
    sc_layer *l = &c->L[li];
    l->in_store = s;
    const sc_store *st = &c->S[s];
    enpu_instr *in = &l->ins;
    in->hi = st->h, in->wi = st->w, in->ci = st->c;
    in->hk = geo.kh, in->wk = geo.kw, in->stride_h = geo.sh, in->stride_w = geo.sw;
    in->dil_h = geo.dh, in->dil_w = geo.dw;
    in->pad_top = geo.pt, in->pad_left = geo.pl, in->pad_bottom = geo.pb, in->pad_right = geo.pr;
    in->ho = geo.oh, in->wo = geo.ow, in->co = geo.co;
    if ((in->hi != geo.h || in->wi != geo.w) && in->hi * in->wi == geo.h * geo.w && in->ci == geo.ci)
        in->hi = geo.h, in->wi = geo.w; /* a reshape that keeps the pixels' order and channels (16x19 ->
                                           19x16): the same words, read in the window's shape */
    if (in->hi != geo.h || in->wi != geo.w)
        return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': a %" PRId64 "x%" PRId64 " window input stored as %"
                         PRId64 "x%" PRId64, n->name, geo.h, geo.w, in->hi, in->wi);
    int64_t kk = (int64_t)geo.kh * geo.kw;
    bool dw = geo.group == geo.ci && geo.group == geo.co;
    if (dw) {
        /* one channel per unit: [ci][K], each channel's taps from a word boundary */
        in->opcode = ENPU_OPC_SYA_DWCONV;
        int64_t wpc = cdiv(kk, wb);
        l->w_bytes = geo.ci * wpc * wb;
        if (!(l->w = calloc((size_t)l->w_bytes, 1))) return OOM();
        for (int64_t ch = 0; ch < geo.ci; ch++)
            for (int64_t t = 0; t < kk; t++) l->w[ch * wpc * wb + t] = q->w[ch * kk + t];
        if (q->origin != ENPU_QO_CONV)
            l->note = cc_dupf("%s as a depthwise convolution (one channel per unit)",
                                 enpu_qorigin_name(q->origin));
    } else {
        /* [G][K][F], K = taps x channels, channels innermost */
        in->opcode = ENPU_OPC_SYA_CONV;
        in->groups = geo.group;
        int64_t G = geo.group, F = geo.co / G, cpg = geo.ci / G, K = cpg * kk, wpr = cdiv(F, wb);
        l->w_bytes = G * K * wpr * wb;
        if (!(l->w = calloc((size_t)l->w_bytes, 1))) return OOM();
        for (int64_t o = 0; o < geo.co; o++) {
            int64_t gi = o / F, f = o % F;
            for (int64_t ci = 0; ci < cpg; ci++)
                for (int64_t t = 0; t < kk; t++)
                    l->w[((gi * K + t * cpg + ci) * wpr) * wb + f] = q->w[(o * cpg + ci) * kk + t];
        }
    }
    if ((rc = params(c, l, q, geo.co)) || (rc = check_acc(c, n, q->w, geo.co, geo.k))) return rc;
    return out_store(c, li, y);
}

/* A host op for node ni: its int8 inputs stored naturally (or, for a graph
 * input, as an identity view), its int8 outputs given storages. */
static int lower_host(sc *c, int ni, const char *why) {
    const enpu_node *n = &c->g->nodes[ni];
    int li = add_layer(c, SC_HOST, ni);
    if (li < 0) return li;
    for (int k = 0; k < n->n_in; k++) {
        int t = n->in[k];
        if (t < 0 || (T(c, t)->flags & ENPU_T_CONST)) continue;
        if (T(c, t)->dtype != ENPU_DT_INT8) continue; /* a float host tensor */
        if (c->tv[t].store < 0 || !view_identity(c, t)) {
            int rc = natural_input(c, t, li, n);
            if (rc < 0) return rc;
        } else if (li > c->S[c->tv[t].store].last) {
            c->S[c->tv[t].store].last = li;
        }
    }
    sc_layer *l = &c->L[li];
    l->note = cc_dupf("host op (%s)", why);
    for (int k = 0; k < n->n_out; k++) {
        int t = n->out[k];
        if (T(c, t)->dtype != ENPU_DT_INT8) continue;
        int s = store_natural(c, t, li);
        if (s < 0) return s;
        if (l->out < 0) l->out = t, l->out_store = s;
    }
    if (l->out < 0 && n->n_out > 0) l->out = n->out[0];
    return l->note ? 0 : OOM();
}

/* Whether every reader of t can take it as a permuted view: a Gemm (its
 * weights follow the storage), or a permuting move whose output is read so
 * too; never a graph output. */
static bool view_ok(const sc *c, int t, int depth) {
    if (depth > 16 || (T(c, t)->flags & ENPU_T_OUTPUT)) return false;
    const enpu_graph *g = c->g;
    int readers = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++) {
            if (n->in[k] != t) continue;
            readers++;
            if (k == 0 && n->q && n->q->kind == ENPU_Q_CONV && n->q->origin == ENPU_QO_FC) continue;
            if (k == 0 && n->q && n->q->kind == ENPU_Q_MOVE && cc_is_perm_move(n->op) && view_ok(c, n->out[0], depth + 1))
                continue;
            return false;
        }
    }
    return readers > 0;
}

static int lower_move(sc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    if (!cc_is_perm_move(n->op)) {
        int rc = add_move(c, n, ENPU_MOVE_HOST, "not a permutation of the elements: the host copies it");
        return rc ? rc : lower_host(c, ni, enpu_op_name(n->op));
    }
    int x = n->in[0], y = n->out[0];
    const enpu_tensor *yt = T(c, y), *xt = T(c, x);
    bool oom;
    int64_t *src = cc_move_src(c->g, n, &oom);
    if (oom) return OOM();
    int64_t cnt = enpu_tensor_numel(yt);
    int readers = 0;
    enpu_graph_consumer(c->g, x, &readers);
    if (c->tv[x].store < 0 && (xt->flags & ENPU_T_INPUT) && readers == 1) {
        /* a graph input read only through this move: the host writes it in
         * the order the output's natural layout needs, when that is the
         * input's row-major order */
        bool direct = true;
        for (int64_t e = 0; e < cnt && direct; e++) direct = cc_natural_pos(yt, e) == (src ? src[e] : e);
        if (direct) {
            free(src);
            int s = store_natural(c, y, -1);
            if (s < 0) return s;
            int64_t *pos = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *pos);
            if (!pos) return OOM();
            for (int64_t e = 0; e < cnt; e++) pos[e] = e;
            c->tv[x].store = s, c->tv[x].pos = pos;
            return add_move(c, n, ENPU_MOVE_REMAP, "the host writes the graph input directly in the layout "
                                                   "its reader needs");
        }
    }
    if (c->tv[x].store < 0 && (xt->flags & ENPU_T_INPUT) && store_natural(c, x, -1) < 0) {
        free(src);
        return OOM();
    }
    if (c->tv[x].store < 0) {
        free(src);
        return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': input '%s' is not computed before it", n->name,
                         xt->name);
    }
    int64_t *pos = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *pos);
    if (!pos) {
        free(src);
        return OOM();
    }
    for (int64_t e = 0; e < cnt; e++) pos[e] = view_pos(c, x, src ? src[e] : e);
    free(src);
    free(c->tv[y].pos);
    c->tv[y].store = c->tv[x].store, c->tv[y].pos = pos;
    if (view_natural(c, y)) {
        free(c->tv[y].pos);
        c->tv[y].pos = NULL;
        return add_move(c, n, ENPU_MOVE_REMAP, "address remapping: the output is the stored map in its "
                                               "natural order");
    }
    if (view_ok(c, y, 0))
        return add_move(c, n, ENPU_MOVE_REMAP, "address remapping: read as a permuted view by a Gemm, "
                                               "whose weights follow the stored order");
    /* a reader needs it in its own layout: the host moves it */
    free(c->tv[y].pos);
    c->tv[y].pos = NULL;
    c->tv[y].store = -1;
    int rc = add_move(c, n, ENPU_MOVE_HOST, "a reader needs the permuted elements stored: the host moves them");
    return rc ? rc : lower_host(c, ni, enpu_op_name(n->op));
}

unsigned sya_host_kinds(void) {
    return 1u << ENPU_Q_ADD | 1u << ENPU_Q_MUL | 1u << ENPU_Q_TABLE | 1u << ENPU_Q_MAXPOOL;
}

int sc_lower(sc *c) {
    const enpu_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (!n->q) return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': not quantized (no q block)", n->name);
        int rc;
        switch (n->q->kind) {
        case ENPU_Q_CONV: rc = lower_conv(c, i); break;
        case ENPU_Q_MAXPOOL:
            /* a graph quantized for another engine: the host's float max is
             * the int8 max when no clamp is fused */
            if (n->q->lo != -128 || n->q->hi != 127)
                return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                                 "node '%s' (%s): the systolic engine has no max-pooling unit, and the "
                                 "host's float max pool does not apply this graph's fused clamp; quantize the "
                                 "model for arch '%s' (its host then runs it, the clamp after it)",
                                 n->name, enpu_op_name(n->op), c->a->name);
            rc = lower_host(c, i, "max pooling");
            break;
        case ENPU_Q_ADD:
        case ENPU_Q_MUL:
        case ENPU_Q_TABLE:
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s' (%s): kind %s has no kernel on the systolic engine, and the "
                             "host's float op would not reproduce this graph's int8 %s bit for bit; "
                             "quantize the model for arch '%s' (its host then runs it) or use arch "
                             "easynpu",
                             n->name, enpu_op_name(n->op), enpu_qkind_name(n->q->kind),
                             enpu_qkind_name(n->q->kind), c->a->name);
        case ENPU_Q_MOVE: rc = lower_move(c, i); break;
        case ENPU_Q_HOST: rc = lower_host(c, i, "no kernel on the engine"); break;
        default: rc = enpu_fail(c->err, ENPU_E_INVALID, "node '%s': unknown kind", n->name);
        }
        if (rc) return rc;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        int t = g->outputs[k];
        if (T(c, t)->dtype != ENPU_DT_INT8) continue;
        if (c->tv[t].store < 0 || (!view_natural(c, t) && !view_identity(c, t)))
            return enpu_fail(c->err, ENPU_E_INVALID, "graph output '%s' is not stored (internal)", T(c, t)->name);
        c->S[c->tv[t].store].keep = true;
    }
    return 0;
}
