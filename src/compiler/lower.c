/* Lowering: quantized nodes -> layers (one instruction each).
 *
 * Walks the quantized graph in its (topological) order.  Every NPU node
 * becomes one layer with its opcode, geometry, numerics and weights in the
 * NPU's memory layout; a data-movement node becomes an address remapping
 * when that is possible (the consumer reads the producer's storage), a copy
 * layer (`reshape`) when a copy in the NPU can realise it, or a host op;
 * nodes the NPU cannot run (Softmax, ...) become host ops (SYNC).
 *
 * Tensors and storages.  A feature map the NPU writes is a *storage*:
 * [h][w][c] with c folded into pes-lane words.  The *natural* layout of a
 * tensor [1, C, H, W] is the storage (H, W, C) read in NHWC order.  A move
 * that only permutes elements (Reshape, Flatten, Squeeze, Unsqueeze,
 * Transpose, Identity, Dropout) gives its output a *view* of the input's
 * storage: the position of each output element in it.  A consumer that
 * needs the natural layout (every op but FC) gets it for free when the view
 * is natural; an FC takes any view and stores its weights in the storage's
 * [h][w][c] order instead (so a Flatten before an FC costs nothing). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

#define OOM() enpu_fail(c->err, ENPU_E_NOMEM, "out of memory")

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

char *cc_vdupf(const char *fmt, va_list ap) {
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *cc_dupf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = cc_vdupf(fmt, ap);
    va_end(ap);
    return s;
}

char *cc_dups(const char *s) { return cc_dupf("%s", s ? s : ""); }

int cc_note(cc *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = cc_vdupf(fmt, ap);
    va_end(ap);
    if (!s) return OOM();
    char **nn = realloc(c->notes, (size_t)(c->nnotes + 1) * sizeof *nn);
    if (!nn) {
        free(s);
        return OOM();
    }
    c->notes = nn;
    c->notes[c->nnotes++] = s;
    return 0;
}

static int add_move(cc *c, const enpu_node *n, enpu_move_kind k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_move(cc *c, const enpu_node *n, enpu_move_kind k, const char *fmt, ...) {
    if (c->nmv == c->capmv) {
        int cap = c->capmv ? 2 * c->capmv : 16;
        cc_move *m = realloc(c->mv, (size_t)cap * sizeof *m);
        if (!m) return OOM();
        c->mv = m, c->capmv = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *how = cc_vdupf(fmt, ap);
    va_end(ap);
    if (!how) return OOM();
    cc_move *m = &c->mv[c->nmv];
    m->name = cc_dupf("%s", n->name);
    m->op = cc_dupf("%s", enpu_op_name(n->op));
    m->how = how;
    m->kind = k;
    if (!m->name || !m->op) {
        free(m->name), free(m->op), free(how);
        return OOM();
    }
    c->nmv++;
    return 0;
}

/* ---- grids and views -------------------------------------------------------- */

/* The storage grid of a tensor's natural layout (golden.c's geometry:
 * rank 4 [1,C,H,W] -> (H, W, C); rank 3 [1,C,L] -> (1, L, C); rank >= 5
 * -> (1, prod dims[2..], C); rank 2 [1,K] -> (1, 1, K); rank < 2 -> (1, n, 1)). */
void cc_tensor_grid(const enpu_tensor *t, int64_t *h, int64_t *w, int64_t *ch) {
    if (t->rank == 4) {
        *h = t->dims[2], *w = t->dims[3], *ch = t->dims[1];
    } else if (t->rank >= 3) {
        *h = 1, *ch = t->dims[1], *w = 1;
        for (int d = 2; d < t->rank; d++) *w *= t->dims[d];
    } else if (t->rank == 2) {
        *h = 1, *w = 1, *ch = t->dims[1];
    } else {
        *h = 1, *w = enpu_tensor_numel(t), *ch = 1;
    }
}

int64_t cc_natural_pos(const enpu_tensor *t, int64_t e) {
    int64_t h, w, ch;
    cc_tensor_grid(t, &h, &w, &ch);
    if (t->rank < 2) return e;
    int64_t hw = h * w;
    int64_t cc_ = e / hw, r = e % hw;
    return r * ch + cc_;
}

static bool batch_ok(const enpu_tensor *t) { return t->rank < 2 || t->dims[0] == 1; }

int cc_add_store(cc *c, int tensor, int64_t h, int64_t w, int64_t ch) {
    if (c->ns == c->caps) {
        int cap = c->caps ? 2 * c->caps : 32;
        cc_store *s = realloc(c->S, (size_t)cap * sizeof *s);
        if (!s) return OOM();
        c->S = s, c->caps = cap;
    }
    cc_store *s = &c->S[c->ns];
    memset(s, 0, sizeof *s);
    s->h = h, s->w = w, s->c = ch;
    s->words = h * w * cdiv(ch, c->P);
    s->tensor = tensor;
    s->def = -1, s->last = -1, s->last_op2 = -1;
    s->main_addr = -1, s->skip_addr = -1, s->dram_addr = -1;
    s->into = -1;
    return c->ns++;
}

/* Gives tensor t its own natural storage. */
static int store_natural(cc *c, int t) {
    int64_t h, w, ch;
    cc_tensor_grid(&c->g->tensors[t], &h, &w, &ch);
    int s = cc_add_store(c, t, h, w, ch);
    if (s < 0) return s;
    free(c->tv[t].pos);
    c->tv[t].pos = NULL;
    c->tv[t].store = s;
    return s;
}

bool cc_pos_natural(const enpu_tensor *t, const int64_t *pos, int64_t store_c) {
    int64_t h, w, ch;
    cc_tensor_grid(t, &h, &w, &ch);
    if (!pos) return true;
    if (store_c != ch) return false;
    int64_t n = enpu_tensor_numel(t);
    for (int64_t e = 0; e < n; e++)
        if (pos[e] != cc_natural_pos(t, e)) return false;
    return true;
}

bool cc_pos_identity(const enpu_tensor *t, const int64_t *pos) {
    int64_t n = enpu_tensor_numel(t);
    for (int64_t e = 0; e < n; e++)
        if ((pos ? pos[e] : cc_natural_pos(t, e)) != e) return false;
    return true;
}

/* Is the view of t natural, i.e. its words are exactly those of t's own
 * natural storage? */
static bool view_natural(const cc *c, int t) {
    const cc_view *v = &c->tv[t];
    return v->store >= 0 && cc_pos_natural(&c->g->tensors[t], v->pos, c->S[v->store].c);
}

/* Is the view of t the identity (element e at position e of the storage)? */
static bool view_identity(const cc *c, int t) {
    return c->tv[t].store >= 0 && cc_pos_identity(&c->g->tensors[t], c->tv[t].pos);
}

/* Position of element e of t in its storage. */
static int64_t view_pos(const cc *c, int t, int64_t e) {
    const cc_view *v = &c->tv[t];
    return v->pos ? v->pos[e] : cc_natural_pos(&c->g->tensors[t], e);
}

/* ---- layers -------------------------------------------------------------------- */

int cc_add_layer(cc *c, int opcode, int node, const char *name) {
    if (c->nl == c->capl) {
        int cap = c->capl ? 2 * c->capl : 32;
        cc_layer *l = realloc(c->L, (size_t)cap * sizeof *l);
        if (!l) return OOM();
        c->L = l, c->capl = cap;
    }
    cc_layer *l = &c->L[c->nl];
    memset(l, 0, sizeof *l);
    l->opcode = opcode;
    l->node = node;
    l->name = cc_dupf("%s", name);
    l->src = cc_dupf("%s", node >= 0 ? c->g->nodes[node].name : "");
    if (!l->name || !l->src) {
        free(l->name), free(l->src);
        return OOM();
    }
    l->in = l->in2 = l->out = -1;
    l->in_store = l->op2_store = l->out_store = -1;
    l->head = c->nl;
    l->next = -1;
    l->hostop = -1;
    l->macs = -1;
    l->ins.stride_h = l->ins.stride_w = l->ins.dil_h = l->ins.dil_w = 1;
    l->ins.hk = l->ins.wk = l->ins.groups = 1;
    l->ins.rows = 1, l->ins.zs = 1;
    l->ins.clamp_lo = -128, l->ins.clamp_hi = 127;
    return c->nl++;
}

static const enpu_tensor *T(const cc *c, int t) { return &c->g->tensors[t]; }
static int32_t zp_of(const cc *c, int t) {
    const enpu_tensor *x = T(c, t);
    return x->quant ? x->quant->zero_point[0] : 0;
}

void cc_shrink_stride(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t d, int64_t out, int64_t *s) {
    int64_t span = in + pa + pb - (d * (k - 1) + 1);
    if (out == 1 && span >= 0 && span + 1 < *s) *s = span + 1;
}

/* Every geometry field of layer li's instruction within its ISA width, or
 * ENPU_E_UNSUPPORTED naming the node and the field. */
static int check_fields(cc *c, int li) {
    cc_layer *l = &c->L[li];
    enpu_instr *in = &l->ins;
    cc_shrink_stride(in->hi, in->pad_top, in->pad_bottom, in->hk, in->dil_h, in->ho, &in->stride_h);
    cc_shrink_stride(in->wi, in->pad_left, in->pad_right, in->wk, in->dil_w, in->wo, &in->stride_w);
    enpu_isa_layout lay;
    int rc = enpu_isa_layout_make(c->a, &lay, c->err);
    if (rc) return rc;
    static const int geo[] = {ENPU_F_hi, ENPU_F_wi, ENPU_F_ci, ENPU_F_ho, ENPU_F_wo, ENPU_F_co,
                              ENPU_F_hk, ENPU_F_wk, ENPU_F_stride_h, ENPU_F_stride_w, ENPU_F_pad_top,
                              ENPU_F_pad_bottom, ENPU_F_pad_left, ENPU_F_pad_right, ENPU_F_dil_h,
                              ENPU_F_dil_w, ENPU_F_groups, ENPU_F_in1_mult, ENPU_F_in2_mult,
                              ENPU_F_out_mult, ENPU_F_out_shift};
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) {
        int64_t lo, hi, v = enpu_instr_get(in, geo[i]);
        enpu_field_range(&lay, geo[i], &lo, &hi);
        if (v < lo || v > hi) {
            c->fail_node = l->node;
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s': %s %" PRId64 " does not fit the instruction's field '%s' "
                             "(%" PRId64 "..%" PRId64 ")",
                             l->src, enpu_field_get(geo[i])->name, v, enpu_field_get(geo[i])->name, lo, hi);
        }
    }
    return 0;
}

/* Sets the output of layer li to tensor t with a fresh natural storage. */
static int layer_output(cc *c, int li, int t) {
    int rc = check_fields(c, li);
    if (rc) return rc;
    int s = store_natural(c, t);
    if (s < 0) return s;
    c->L[li].out = t;
    c->L[li].out_store = s;
    c->S[s].def = li; /* layer index for now; memplan turns it into a step */
    return 0;
}

static int copy_layer(cc *c, int t, const enpu_node *why, int *out_store);

/* The index of node n in the graph, -1 for a stand-in (a graph output). */
static int consumer_index(const cc *c, const enpu_node *n) {
    ptrdiff_t i = n - c->g->nodes;
    return i >= 0 && i < c->g->n_nodes ? (int)i : -1;
}

/* Makes sure tensor t is stored in its natural layout and returns its
 * storage: a graph input gets its storage here; a permuted view gets a copy
 * layer. */
static int need_natural(cc *c, int t, const enpu_node *consumer) {
    cc_view *v = &c->tv[t];
    if (v->store < 0) {
        const enpu_tensor *x = T(c, t);
        if (x->flags & ENPU_T_CONST) {
            c->fail_node = consumer_index(c, consumer);
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s': constant input '%s' as a feature map is not supported on "
                             "the NPU",
                             consumer->name, x->name);
        }
        if (!(x->flags & ENPU_T_INPUT) && x->producer >= 0)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': input '%s' is not computed before it",
                             consumer->name, x->name);
        int s = store_natural(c, t);
        if (s < 0) return s;
        c->S[s].def = -1;
        return s;
    }
    if (view_natural(c, t)) return v->store;
    int s;
    int rc = copy_layer(c, t, consumer, &s);
    return rc ? rc : s;
}

/* ---- weights in the NPU layout -------------------------------------------------- */

static int params_conv_like(cc *c, cc_layer *l, const enpu_qnode *q, int64_t co) {
    l->bias = malloc((size_t)co * sizeof *l->bias);
    l->M = malloc((size_t)co * sizeof *l->M);
    l->S = malloc((size_t)co * sizeof *l->S);
    if (!l->bias || !l->M || !l->S) return OOM();
    for (int64_t i = 0; i < co; i++) {
        l->bias[i] = q->bias ? q->bias[i] : 0;
        l->M[i] = q->M[q->n_ch == 1 ? 0 : i];
        l->S[i] = q->S[q->n_ch == 1 ? 0 : i];
    }
    l->ins.zp_out = q->zp_out;
    l->ins.clamp_lo = q->lo, l->ins.clamp_hi = q->hi;
    l->ins.zp_in = q->zp_in[0];
    return 0;
}

static int alloc_w(cc *c, cc_layer *l, int64_t words) {
    l->w_bytes = words * c->P;
    l->w = calloc((size_t)(l->w_bytes > 0 ? l->w_bytes : 1), 1);
    return l->w ? 0 : OOM();
}

/* ---- per kind ---------------------------------------------------------------------- */

/* Is Pad node p one a window op can take as padding: a constant-mode MOVE
 * (filling with the zero point; edge/reflect padding is not it) of a rank-4
 * tensor that pads only H and W, by >= 0? */
static bool pad_hw_only(const cc *c, const enpu_node *p) {
    if (p->op != ENPU_OP_PAD || !p->q || p->q->kind != ENPU_Q_MOVE ||
        p->attr.pad.mode != ENPU_PADMODE_CONSTANT)
        return false;
    if (T(c, p->in[0])->rank != 4 || p->attr.pad.n_pads != 8) return false;
    const int64_t *pd = p->attr.pad.pads;
    if (pd[0] || pd[1] || pd[4] || pd[5]) return false;
    for (int i = 0; i < 8; i++)
        if (pd[i] < 0) return false;
    return true;
}

/* Looks through such a Pad: returns its input and adds its pads. */
static int through_pad(const cc *c, int t, int pads[4]) {
    const enpu_tensor *x = T(c, t);
    if (x->producer < 0) return t;
    const enpu_node *p = &c->g->nodes[x->producer];
    if (!pad_hw_only(c, p)) return t;
    const int64_t *pd = p->attr.pad.pads;
    pads[0] += (int)pd[2], pads[1] += (int)pd[3], pads[2] += (int)pd[6], pads[3] += (int)pd[7];
    return p->in[0];
}

/* Is Pad output t one every consumer (a CONV-kind node) can fold? */
static bool pad_foldable(const cc *c, int t) {
    const enpu_graph *g = c->g;
    if (T(c, t)->flags & ENPU_T_OUTPUT) return false;
    if (T(c, t)->producer < 0 || !pad_hw_only(c, &g->nodes[T(c, t)->producer])) return false;
    int found = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++) {
            if (n->in[k] != t) continue;
            found++;
            if (k != 0 || n->host || !n->q || n->q->kind != ENPU_Q_CONV) return false;
            if (n->q->origin != ENPU_QO_CONV && n->q->origin != ENPU_QO_AVGPOOL) return false;
            if (n->op != ENPU_OP_CONV && n->op != ENPU_OP_AVGPOOL) return false;
            if (T(c, n->in[0])->rank != 4) return false;
        }
    }
    return found > 0;
}

static int lower_conv(cc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    const enpu_qnode *q = n->q;
    enpu_qconv_geom geo;
    int rc = enpu_qconv_geom_of(c->g, n, &geo, c->err);
    if (rc) return rc;
    int x = n->in[0], y = n->out[0];
    if (!batch_ok(T(c, x)) || geo.n > 1) {
        c->fail_node = ni;
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': batch %" PRId64 " (the NPU runs batch 1)",
                         n->name, geo.n);
    }
    int P = c->P;
    if (q->origin == ENPU_QO_FC) {
        /* FC over whatever storage its input is a view of. */
        if (c->tv[x].store < 0) {
            int s = need_natural(c, x, n);
            if (s < 0) return s;
        }
        int li = cc_add_layer(c, ENPU_OPC_FC, ni, n->name);
        if (li < 0) return li;
        cc_layer *l = &c->L[li];
        const cc_store *st = &c->S[c->tv[x].store];
        l->in = x, l->in_store = c->tv[x].store;
        enpu_instr *in = &l->ins;
        in->opcode = ENPU_OPC_FC, in->cast_mode = ENPU_CAST_BROADCAST;
        in->hi = st->h, in->wi = st->w, in->ci = st->c;
        in->ho = in->wo = 1, in->co = geo.co;
        int64_t K = geo.ci, rows = st->h * st->w * st->c;
        if (rows != K)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': FC of %" PRId64 " inputs reads a %" PRId64
                             "x%" PRId64 "x%" PRId64 " map", n->name, K, st->h, st->w, st->c);
        int64_t wpr = cdiv(geo.co, P); /* words per weight row */
        if ((rc = alloc_w(c, l, rows * wpr))) return rc;
        bool perm = false;
        for (int64_t k = 0; k < K; k++) {
            int64_t p = view_pos(c, x, k);
            if (p != k) perm = true;
            for (int64_t o = 0; o < geo.co; o++)
                l->w[(p * wpr + o / P) * P + o % P] = q->w[o * K + k];
        }
        if ((rc = params_conv_like(c, l, q, geo.co))) return rc;
        l->note = cc_dupf("%s", perm ? "weights permuted to the stored map's [h][w][c] order" : "");
        return layer_output(c, li, y);
    }
    int pads[4] = {geo.pt, geo.pl, geo.pb, geo.pr};
    int xs = x;
    if (q->origin == ENPU_QO_CONV || q->origin == ENPU_QO_AVGPOOL) xs = through_pad(c, x, pads);
    int s = need_natural(c, xs, n);
    if (s < 0) return s;
    const enpu_tensor *xt = T(c, xs);
    int64_t h, w, ch;
    cc_tensor_grid(xt, &h, &w, &ch);
    int op;
    bool dense = false; /* group conv expanded to a dense one */
    int G = geo.group;
    int64_t opg = geo.co / G, cpg = geo.ci / G;
    switch (q->origin) {
    case ENPU_QO_BN:
    case ENPU_QO_RELU:
    case ENPU_QO_RESCALE: op = ENPU_OPC_BN; break;
    case ENPU_QO_AVGPOOL: op = ENPU_OPC_AVGPOOL; break;
    default:
        if (G == 1) op = ENPU_OPC_CONV;
        else if (G == geo.ci && G == geo.co) op = ENPU_OPC_DWCONV;
        else {
            op = ENPU_OPC_CONV;
            if (opg % P != 0) dense = true;
        }
        if (op == ENPU_OPC_CONV && q->lo > -128 && q->lo >= q->zp_out) op = ENPU_OPC_CONV_RELU;
    }
    int li = cc_add_layer(c, op, ni, n->name);
    if (li < 0) return li;
    cc_layer *l = &c->L[li];
    l->in = xs, l->in_store = s;
    enpu_instr *in = &l->ins;
    in->opcode = op;
    in->cast_mode = (op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU) ? ENPU_CAST_BROADCAST
                                                                       : ENPU_CAST_MULTICAST;
    in->hi = h, in->wi = w, in->ci = ch;
    if (op == ENPU_OPC_BN) {
        in->ho = h, in->wo = w, in->co = ch;
    } else {
        in->hk = geo.kh, in->wk = geo.kw, in->stride_h = geo.sh, in->stride_w = geo.sw;
        in->dil_h = geo.dh, in->dil_w = geo.dw;
        in->pad_top = pads[0], in->pad_left = pads[1], in->pad_bottom = pads[2], in->pad_right = pads[3];
        in->co = geo.co;
        in->ho = (h + pads[0] + pads[2] - (int64_t)geo.dh * (geo.kh - 1) - 1) / geo.sh + 1;
        in->wo = (w + pads[1] + pads[3] - (int64_t)geo.dw * (geo.kw - 1) - 1) / geo.sw + 1;
        if (in->ho != geo.oh || in->wo != geo.ow)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': output %" PRId64 "x%" PRId64
                             " but the window gives %" PRId64 "x%" PRId64, n->name, geo.oh, geo.ow,
                             in->ho, in->wo);
    }
    int64_t kk = (int64_t)geo.kh * geo.kw;
    if (op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU) {
        int64_t Gi = dense ? 1 : G;
        int64_t o_g = geo.co / Gi;
        in->groups = Gi;
        int64_t wpr = cdiv(o_g, P);
        if ((rc = alloc_w(c, l, geo.ci * kk * wpr))) return rc;
        for (int64_t o = 0; o < geo.co; o++) {
            int64_t g = o / opg; /* the node's group */
            for (int64_t ci = 0; ci < cpg; ci++)
                for (int64_t t = 0; t < kk; t++) {
                    /* rows [g][ci/g][hk][wk] of the instruction's groups are the
                     * input channels in order: row = cin*kk + t */
                    int64_t cin = g * cpg + ci, oo = o % o_g;
                    int64_t row = cin * kk + t;
                    l->w[(row * wpr + oo / P) * P + oo % P] = q->w[(o * cpg + ci) * kk + t];
                }
        }
        if (dense) l->macs = enpu_node_macs(c->g, n); /* the zero weights are not the model's */
        if (dense)
            l->note = cc_dupf("group conv (%d groups of %" PRId64 " outputs, not a multiple of %d) run as "
                           "a dense conv with zero weights between groups", G, opg, P);
    } else if (op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL) {
        int64_t wpc = cdiv(geo.co, P);
        if ((rc = alloc_w(c, l, kk * wpc))) return rc;
        for (int64_t o = 0; o < geo.co; o++)
            for (int64_t t = 0; t < kk; t++) l->w[(t * wpc + o / P) * P + o % P] = q->w[o * kk + t];
    } else { /* bn: [c folded] multipliers */
        if ((rc = alloc_w(c, l, cdiv(ch, P)))) return rc;
        for (int64_t o = 0; o < ch; o++) l->w[o] = q->w[o];
    }
    if ((rc = params_conv_like(c, l, q, geo.co))) return rc;
    if (!l->note) l->note = cc_dupf("%s", "");
    return layer_output(c, li, y);
}

static int lower_maxpool(cc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    const enpu_qnode *q = n->q;
    int x = n->in[0], y = n->out[0];
    const enpu_tensor *xt = T(c, x), *yt = T(c, y);
    if (xt->rank != 4 && xt->rank != 3) {
        c->fail_node = ni;
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': MaxPool of rank %d", n->name, xt->rank);
    }
    if (!batch_ok(xt)) {
        c->fail_node = ni;
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': batch > 1", n->name);
    }
    int s = need_natural(c, x, n);
    if (s < 0) return s;
    int li = cc_add_layer(c, ENPU_OPC_MAXPOOL, ni, n->name);
    if (li < 0) return li;
    cc_layer *l = &c->L[li];
    l->in = x, l->in_store = s;
    enpu_instr *in = &l->ins;
    const enpu_window *win = &n->attr.pool.w;
    bool two = xt->rank == 4;
    int64_t h, w, ch, oh, ow, och;
    cc_tensor_grid(xt, &h, &w, &ch);
    cc_tensor_grid(yt, &oh, &ow, &och);
    in->opcode = ENPU_OPC_MAXPOOL, in->cast_mode = ENPU_CAST_MULTICAST;
    in->hi = h, in->wi = w, in->ci = ch, in->ho = oh, in->wo = ow, in->co = och;
    in->hk = two ? win->kernel[0] : 1, in->wk = win->kernel[1];
    in->stride_h = two ? win->stride[0] : 1, in->stride_w = win->stride[1];
    in->dil_h = two ? win->dilation[0] : 1, in->dil_w = win->dilation[1];
    in->pad_top = two ? win->pads[0] : 0, in->pad_bottom = two ? win->pads[2] : 0;
    in->pad_left = win->pads[1], in->pad_right = win->pads[3];
    /* ceil mode: pad the far edges so the floor formula gives the output */
    for (int it = 0; it < 64; it++) {
        int64_t eh = (h + in->pad_top + in->pad_bottom - in->dil_h * (in->hk - 1) - 1) / in->stride_h + 1;
        int64_t ew = (w + in->pad_left + in->pad_right - in->dil_w * (in->wk - 1) - 1) / in->stride_w + 1;
        if (eh == oh && ew == ow) break;
        if (eh < oh) in->pad_bottom++;
        if (ew < ow) in->pad_right++;
        if (eh > oh || ew > ow)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': output %" PRId64 "x%" PRId64
                             " does not match its window", n->name, oh, ow);
    }
    in->zp_in = zp_of(c, x), in->zp_out = zp_of(c, x);
    in->out_mult = 1, in->out_shift = 0;
    in->clamp_lo = q->lo, in->clamp_hi = q->hi;
    l->note = cc_dupf("%s", "");
    return layer_output(c, li, y);
}

static int lower_table(cc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    const enpu_qnode *q = n->q;
    int x = n->in[0], y = n->out[0];
    int s = need_natural(c, x, n);
    if (s < 0) return s;
    int li = cc_add_layer(c, ENPU_OPC_ACT, ni, n->name);
    if (li < 0) return li;
    cc_layer *l = &c->L[li];
    l->in = x, l->in_store = s;
    int64_t h, w, ch;
    cc_tensor_grid(T(c, x), &h, &w, &ch);
    enpu_instr *in = &l->ins;
    in->opcode = ENPU_OPC_ACT, in->cast_mode = ENPU_CAST_MULTICAST;
    in->hi = in->ho = h, in->wi = in->wo = w, in->ci = in->co = ch;
    l->table = q->table;
    in->zp_in = zp_of(c, x);
    in->zp_out = q->table->zp_out, in->clamp_lo = q->table->lo, in->clamp_hi = q->table->hi;
    l->note = cc_dupf("table: %d segments, max error %.3g LSB", q->table->segments, q->table->max_err_lsb);
    return layer_output(c, li, y);
}

static bool same_shape(const enpu_tensor *a, const enpu_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static int lower_host(cc *c, int ni, const char *why);

/* Expands a (possibly broadcast) int8 constant to tensor y's shape, in the
 * natural [h][w][c] order of y. */
static int8_t *expand_const(cc *c, const enpu_tensor *k, const enpu_tensor *y) {
    int64_t n = enpu_tensor_numel(y);
    int64_t h, w, ch;
    cc_tensor_grid(y, &h, &w, &ch);
    int64_t wpc = cdiv(ch, c->P);
    int8_t *out = calloc((size_t)(h * w * wpc * c->P), 1);
    if (!out) return NULL;
    int64_t ys[ENPU_MAX_RANK], ks[ENPU_MAX_RANK];
    int r = y->rank;
    int64_t acc = 1;
    for (int d = r - 1; d >= 0; d--) ys[d] = acc, acc *= y->dims[d];
    acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        int kd = d - (r - k->rank);
        int64_t dim = kd >= 0 ? k->dims[kd] : 1;
        ks[d] = dim == 1 ? 0 : acc;
        acc *= dim;
    }
    const int8_t *kv = k->data;
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0, rem = e;
        for (int d = 0; d < r; d++) {
            int64_t i = rem / ys[d];
            rem %= ys[d];
            off += i * ks[d];
        }
        int64_t p = cc_natural_pos(y, e);
        out[(p / ch) * wpc * c->P + p % ch] = kv[off];
    }
    return out;
}

static int ensure_skip(cc *c, int t, const enpu_node *consumer, int *store);

static int lower_eltwise(cc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    const enpu_qnode *q = n->q;
    int y = n->out[0];
    const enpu_tensor *yt = T(c, y);
    int a = n->in[0], b = n->in[1];
    bool ka = T(c, a)->flags & ENPU_T_CONST, kb = T(c, b)->flags & ENPU_T_CONST;
    if (!batch_ok(yt)) {
        c->fail_node = ni;
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': batch > 1", n->name);
    }
    /* in1 (the ifmap / fused psum path) must have the output's shape and not
     * be a constant; prefer the later-produced input as in1 (it is the one a
     * fused chain feeds). */
    int i1 = 0;
    if (ka || !same_shape(T(c, a), yt)) i1 = 1;
    else if (!kb && same_shape(T(c, b), yt) && T(c, b)->producer > T(c, a)->producer) i1 = 1;
    int x1 = n->in[i1], x2 = n->in[1 - i1];
    bool k2 = T(c, x2)->flags & ENPU_T_CONST;
    if ((T(c, x1)->flags & ENPU_T_CONST) || !same_shape(T(c, x1), yt) ||
        (!k2 && !same_shape(T(c, x2), yt))) {
        if (c->g->requant == ENPU_REQUANT_TFLITE) /* the host's float Add is not TFLite's */
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s': a broadcast of a computed operand has no NPU kernel "
                             "(and no TFLite integer host kernel)",
                             n->name);
        return lower_host(c, ni, "a broadcast of a computed operand has no NPU kernel");
    }
    int s1 = need_natural(c, x1, n);
    if (s1 < 0) return s1;
    int op = q->kind == ENPU_Q_ADD ? ENPU_OPC_ADD : ENPU_OPC_MUL;
    int s2 = -1;
    int8_t *kexp = NULL;
    if (k2) {
        kexp = expand_const(c, T(c, x2), yt);
        if (!kexp) return OOM();
        int64_t h, w, ch;
        cc_tensor_grid(yt, &h, &w, &ch);
        s2 = cc_add_store(c, x2, h, w, ch);
        if (s2 < 0) {
            free(kexp);
            return s2;
        }
        c->S[s2].def = -2;
        c->S[s2].cdata = kexp;
    } else {
        int rc = ensure_skip(c, x2, n, &s2);
        if (rc) return rc;
    }
    int li = cc_add_layer(c, op, ni, n->name);
    if (li < 0) {
        free(kexp);
        return li;
    }
    cc_layer *l = &c->L[li];
    l->op2_const = kexp;
    if (k2) c->S[s2].cdata = kexp;
    l->in = x1, l->in_store = s1, l->in2 = x2, l->op2_store = s2;
    int64_t h, w, ch;
    cc_tensor_grid(yt, &h, &w, &ch);
    enpu_instr *in = &l->ins;
    in->opcode = op, in->cast_mode = ENPU_CAST_MULTICAST;
    in->hi = in->ho = h, in->wi = in->wo = w, in->ci = in->co = ch;
    in->op2_mem = 1; /* skip */
    in->zp_in = q->zp_in[i1], in->zp_op2 = q->zp_in[1 - i1];
    in->zp_out = q->zp_out, in->clamp_lo = q->lo, in->clamp_hi = q->hi;
    if (c->g->requant == ENPU_REQUANT_TFLITE) {
        /* TFLite's Q31 multipliers: records of a quant block (enpu_quant_records) */
        int nq = op == ENPU_OPC_ADD ? 3 : 1;
        l->M = malloc((size_t)nq * sizeof *l->M);
        l->S = malloc((size_t)nq);
        if (!l->M || !l->S) return OOM();
        l->M[0] = q->M[0], l->S[0] = q->S[0];
        if (op == ENPU_OPC_ADD) {
            l->M[1] = q->A[i1], l->S[1] = q->SA[i1];
            l->M[2] = q->A[1 - i1], l->S[2] = q->SA[1 - i1];
        }
    } else if (op == ENPU_OPC_ADD) {
        in->in1_mult = q->A[i1], in->in2_mult = q->A[1 - i1];
        in->out_mult = q->M ? q->M[0] : 1, in->out_shift = q->S ? q->S[0] : 0;
    } else {
        in->out_mult = q->M[0], in->out_shift = q->S[0];
    }
    l->note = cc_dupf("op2 '%s' %s", T(c, x2)->name, k2 ? "(constant, skip DTCM image)" : "from the skip DTCM");
    return layer_output(c, li, y);
}

/* Host op for node ni (its inputs and outputs become IO descriptors). */
static int lower_host(cc *c, int ni, const char *why) {
    const enpu_node *n = &c->g->nodes[ni];
    for (int k = 0; k < n->n_in; k++) {
        int t = n->in[k];
        /* a constant operand travels in the program (HOST_INIT, IO direction const) */
        if (t < 0 || (T(c, t)->flags & ENPU_T_CONST)) continue;
        if (T(c, t)->dtype != ENPU_DT_INT8) continue; /* a host op's float output: host memory */
        if (c->tv[t].store < 0 || (!view_natural(c, t) && !view_identity(c, t))) {
            int s = need_natural(c, t, n);
            if (s < 0) return s;
        }
    }
    int li = cc_add_layer(c, CC_HOST, ni, n->name);
    if (li < 0) return li;
    cc_layer *l = &c->L[li];
    l->ins.opcode = ENPU_OPC_SYNC;
    l->in = n->in[0];
    l->in_store = n->in[0] >= 0 ? c->tv[n->in[0]].store : -1;
    l->note = cc_dupf("host op (%s)", why);
    l->macs = enpu_node_macs(c->g, n);
    for (int k = 0; k < n->n_out; k++) {
        int t = n->out[k];
        if (T(c, t)->dtype != ENPU_DT_INT8) continue; /* float: host memory */
        int s = store_natural(c, t);
        if (s < 0) return s;
        c->S[s].def = li;
        c->S[s].host_written = true;
        if (k == 0) l->out = t, l->out_store = s;
    }
    if (l->out < 0 && n->n_out > 0) l->out = n->out[0];
    return 0;
}

/* ---- moves ------------------------------------------------------------------------ */

int64_t *cc_move_src(const enpu_graph *g, const enpu_node *n, bool *oom) {
    *oom = false;
    if (n->op != ENPU_OP_TRANSPOSE) return NULL;
    const enpu_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
    int64_t cnt = enpu_tensor_numel(y);
    int64_t *src = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *src);
    if (!src) {
        *oom = true;
        return NULL;
    }
    int r = y->rank;
    int64_t xs[ENPU_MAX_RANK], acc = 1;
    for (int d = r - 1; d >= 0; d--) xs[d] = acc, acc *= x->dims[d];
    int64_t idx[ENPU_MAX_RANK] = {0};
    for (int64_t e = 0; e < cnt; e++) {
        int64_t off = 0;
        for (int d = 0; d < r; d++) off += idx[d] * xs[n->attr.shape.axes[d]];
        src[e] = off;
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
    return src;
}

bool cc_is_perm_move(enpu_op op) {
    switch (op) {
    case ENPU_OP_RESHAPE: case ENPU_OP_FLATTEN: case ENPU_OP_SQUEEZE: case ENPU_OP_UNSQUEEZE:
    case ENPU_OP_TRANSPOSE: case ENPU_OP_IDENTITY: case ENPU_OP_DROPOUT: case ENPU_OP_CAST:
        return true;
    default: return false;
    }
}

/* A Slice or Expand whose output is its input (every element taken, in
 * order): an identity view. */
static bool identity_move(const cc *c, const enpu_node *n) {
    const enpu_tensor *x = T(c, n->in[0]), *y = T(c, n->out[0]);
    if (x->rank != y->rank) return false;
    for (int d = 0; d < x->rank; d++)
        if (x->dims[d] != y->dims[d]) return false;
    if (n->op == ENPU_OP_EXPAND || n->op == ENPU_OP_CAST) return true;
    if (n->op != ENPU_OP_SLICE || n->attr.slice.n != x->rank) return false;
    for (int d = 0; d < x->rank; d++)
        if (n->attr.slice.starts[d] != 0 || (n->attr.slice.steps[d] != 1 && x->dims[d] > 1)) return false;
    return true;
}

/* Rank in the reshape instruction's perm order of element (h, w, c) of an
 * (H, W, C) grid (docs/microarch.md 11.9). */
int64_t cc_perm_rank(int perm, int64_t h, int64_t w, int64_t ch, int64_t H, int64_t W, int64_t C) {
    switch (perm) {
    case ENPU_PERM_HWC: return (h * W + w) * C + ch;
    case ENPU_PERM_HCW: return (h * C + ch) * W + w;
    case ENPU_PERM_WHC: return (w * H + h) * C + ch;
    case ENPU_PERM_WCH: return (w * C + ch) * H + h;
    case ENPU_PERM_CHW: return (ch * H + h) * W + w;
    default: return (ch * W + w) * H + h; /* CWH */
    }
}

/* Copy layer: stores tensor t (a permuted view) in its natural layout with a
 * reshape instruction when one of its perms realises the permutation, else a
 * host op copies it. */
static int copy_layer(cc *c, int t, const enpu_node *why, int *out_store) {
    const enpu_tensor *tt = T(c, t);
    const cc_view *v = &c->tv[t];
    const cc_store *src = &c->S[v->store];
    int64_t h, w, ch;
    cc_tensor_grid(tt, &h, &w, &ch);
    int64_t n = enpu_tensor_numel(tt);
    int found = -1;
    for (int perm = 0; perm < ENPU_PERM_COUNT && found < 0; perm++) {
        bool ok = true;
        for (int64_t e = 0; e < n && ok; e++) {
            int64_t p = view_pos(c, t, e);
            int64_t sh = p / (src->w * src->c), sw = (p / src->c) % src->w, sc = p % src->c;
            ok = cc_perm_rank(perm, sh, sw, sc, src->h, src->w, src->c) == cc_natural_pos(tt, e);
        }
        if (ok) found = perm;
    }
    const char *mover = tt->producer >= 0 ? c->g->nodes[tt->producer].name : tt->name;
    /* a host op lowered earlier reads t as this view, in its stored order
     * (lower_host): the copy, placed after it, would become where it reads t
     * before the copy is written, so the move runs on the host instead */
    for (int li = 0; li < c->nl; li++) {
        if (c->L[li].opcode != CC_HOST || c->L[li].node < 0) continue;
        const enpu_node *hn = &c->g->nodes[c->L[li].node];
        for (int k = 0; k < hn->n_in; k++)
            if (hn->in[k] == t) {
                c->fail_node = tt->producer;
                return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                                 "tensor '%s' (from '%s') is read in its stored order by host op '%s' and in "
                                 "another layout by '%s': a copy layer would come after the host op",
                                 tt->name, mover, hn->name, why->name);
            }
    }
    if (found < 0) {
        /* the move that made the view runs on the host instead (a retry) */
        c->fail_node = tt->producer;
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                         "tensor '%s' (from '%s'), read by '%s': its element order is not one the "
                         "NPU's reshape can copy (a permutation of h, w, c)",
                         tt->name, mover, why->name);
    }
    char nm[ENPU_MAX_NAME + 16];
    snprintf(nm, sizeof nm, "%s copy", mover);
    int li = cc_add_layer(c, ENPU_OPC_RESHAPE, tt->producer, nm);
    if (li < 0) return li;
    cc_layer *l = &c->L[li];
    l->in = t, l->in_store = v->store;
    enpu_instr *in = &l->ins;
    in->opcode = ENPU_OPC_RESHAPE, in->cast_mode = ENPU_CAST_MULTICAST;
    in->hi = src->h, in->wi = src->w, in->ci = src->c;
    in->ho = h, in->wo = w, in->co = ch;
    in->perm = found;
    in->zp_in = in->zp_out = zp_of(c, t);
    l->note = cc_dupf("copy layer for '%s' (perm %s)", mover,
                   (const char *[]){"hwc", "hcw", "whc", "wch", "chw", "cwh"}[found]);
    int rc = layer_output(c, li, t);
    if (rc) return rc;
    *out_store = c->L[li].out_store;
    /* the move's record: realised by this copy */
    for (int k = 0; k < c->nmv; k++)
        if (tt->producer >= 0 && strcmp(c->mv[k].name, c->g->nodes[tt->producer].name) == 0) {
            char *how = cc_dupf("copy layer '%s' (reshape, perm %s): '%s' reads it in another layout", nm,
                             (const char *[]){"hwc", "hcw", "whc", "wch", "chw", "cwh"}[found], why->name);
            if (!how) return OOM();
            free(c->mv[k].how);
            c->mv[k].how = how;
            c->mv[k].kind = ENPU_MOVE_COPY;
        }
    return 0;
}

/* Is storage s a concat at store (other storages are parts of it)? */
static bool store_has_parts(const cc *c, int s) {
    for (int o = 0; o < c->ns; o++)
        if (c->S[o].into == s) return true;
    return false;
}

/* A second operand must be in the skip DTCM: its producer keeps a copy there
 * (store_skip), or a copy layer writes one. */
static int ensure_skip(cc *c, int t, const enpu_node *consumer, int *store) {
    int s = need_natural(c, t, consumer);
    if (s < 0) return s;
    cc_store *st = &c->S[s];
    bool producer_npu = st->def >= 0 && c->L[st->def].opcode != CC_HOST;
    /* a concat at store has one producer per part, and store_skip writes
     * only the producer's own output: it needs the copy too */
    if (store_has_parts(c, s)) producer_npu = false;
    if (!producer_npu) {
        /* a graph input, a host op's output or a concat at store: copy it
         * into both memories */
        char nm[ENPU_MAX_NAME + 16];
        snprintf(nm, sizeof nm, "%s skip copy", T(c, t)->name);
        int li = cc_add_layer(c, ENPU_OPC_RESHAPE, -1, nm);
        if (li < 0) return li;
        cc_layer *l = &c->L[li];
        l->in = t, l->in_store = s;
        enpu_instr *in = &l->ins;
        in->opcode = ENPU_OPC_RESHAPE, in->cast_mode = ENPU_CAST_MULTICAST;
        in->hi = in->ho = st->h, in->wi = in->wo = st->w, in->ci = in->co = st->c;
        in->zp_in = in->zp_out = zp_of(c, t);
        l->note = cc_dupf("copy of '%s' into the skip DTCM for a second operand", T(c, t)->name);
        /* the copy's output is a new storage of the same tensor */
        int ns = cc_add_store(c, t, st->h, st->w, st->c);
        if (ns < 0) return ns;
        c->L[li].out = t, c->L[li].out_store = ns;
        c->S[ns].def = li;
        s = ns;
    }
    *store = s;
    return 0;
}

static int lower_move(cc *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    int x = n->in[0], y = n->out[0];
    const enpu_tensor *yt = T(c, y);
    if (n->op == ENPU_OP_PAD) {
        if (pad_foldable(c, y)) {
            c->tv[y].store = -1;
            return add_move(c, n, ENPU_MOVE_REMAP, "folded into its consumers' padding (pads read zp_in)");
        }
        int rc = add_move(c, n, ENPU_MOVE_HOST, n->attr.pad.mode != ENPU_PADMODE_CONSTANT
                                                    ? "Pad of mode edge/reflect: copied by the host"
                                                    : "Pad read by a non-conv consumer: copied by the host");
        return rc ? rc : lower_host(c, ni, "Pad");
    }
    if (n->op == ENPU_OP_CONCAT) {
        /* concat at store: producers write into one storage, along H (rank-4
         * axis 2: contiguous rows) or C (axis 1, word-aligned offsets). */
        int ax = n->attr.shape.axis;
        int64_t h, w, ch;
        cc_tensor_grid(yt, &h, &w, &ch);
        bool ok = (yt->rank == 4 && (ax == 1 || ax == 2)) || (yt->rank == 2 && ax == 1) ||
                  (yt->rank == 3 && ax == 1);
        int64_t off = 0;
        for (int k = 0; k < n->n_in && ok; k++) {
            int t = n->in[k];
            const enpu_tensor *tk = T(c, t);
            int cnt = 0;
            enpu_graph_consumer(c->g, t, &cnt);
            const cc_view *v = &c->tv[t];
            ok = v->store >= 0 && !v->pos && cnt == 1 && !(tk->flags & (ENPU_T_OUTPUT | ENPU_T_INPUT)) &&
                 c->S[v->store].def >= 0 && c->L[c->S[v->store].def].opcode != CC_HOST &&
                 c->S[v->store].into < 0 && !store_has_parts(c, v->store);
            if (ok && ax == 1) ok = off % c->P == 0;
            off += tk->dims[ax];
        }
        if (!ok) {
            int rc = add_move(c, n, ENPU_MOVE_HOST, "concat not at word-aligned channel offsets or "
                                                    "along rows, an input used elsewhere or itself a "
                                                    "concat at store: the host copies");
            return rc ? rc : lower_host(c, ni, "Concat");
        }
        int s = store_natural(c, y);
        if (s < 0) return s;
        off = 0;
        int64_t wpp = cdiv(ch, c->P);
        for (int k = 0; k < n->n_in; k++) {
            int t = n->in[k];
            cc_store *sk = &c->S[c->tv[t].store];
            sk->into = s;
            if (ax == 1) {
                sk->ofmap_wpp = wpp, sk->ofmap_word = off / c->P;
                sk->into_off = 0;
            } else {
                sk->into_off = off * w * wpp; /* rows before it */
            }
            off += T(c, t)->dims[ax];
        }
        c->S[s].def = c->S[c->tv[n->in[0]].store].def;
        return add_move(c, n, ENPU_MOVE_REMAP, "concat at store: each input's producer writes into "
                                                "the output (%s)", ax == 1 ? "ofmap_wpp/ofmap_word" : "row offset");
    }
    if (!cc_is_perm_move(n->op) && !identity_move(c, n)) {
        int rc = add_move(c, n, ENPU_MOVE_HOST, "%s: the host copies (the NPU's reshape copies "
                                                 "whole maps only)", enpu_op_name(n->op));
        return rc ? rc : lower_host(c, ni, "data movement the NPU cannot do");
    }
    /* a permutation of the elements: the output is a view of the input's storage */
    bool oom;
    int64_t *src = cc_move_src(c->g, n, &oom);
    if (oom) return OOM();
    int64_t cnt = enpu_tensor_numel(yt);
    int cons = 0;
    enpu_graph_consumer(c->g, x, &cons);
    const enpu_tensor *xt = T(c, x);
    if (c->tv[x].store < 0 && (xt->flags & ENPU_T_INPUT) && cons == 1) {
        /* a graph input read only through this move: the host can write it
         * directly in the order the output needs when that order is the
         * input's own row-major order (an 'any' descriptor) */
        bool direct = true;
        for (int64_t e = 0; e < cnt && direct; e++)
            direct = cc_natural_pos(yt, e) == (src ? src[e] : e);
        if (direct) {
            int s = store_natural(c, y);
            if (s < 0) {
                free(src);
                return s;
            }
            c->S[s].def = -1;
            c->S[s].tensor = y;
            int64_t *pos = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *pos);
            if (!pos) {
                free(src);
                return OOM();
            }
            for (int64_t e = 0; e < cnt; e++) pos[e] = e;
            c->tv[x].store = s;
            c->tv[x].pos = pos;
            free(src);
            return add_move(c, n, ENPU_MOVE_REMAP, "the host writes input '%s' directly in the "
                                                    "layout '%s' needs", xt->name, yt->name);
        }
    }
    if (c->tv[x].store < 0) {
        int s = need_natural(c, x, n);
        if (s < 0) {
            free(src);
            return s;
        }
    }
    int64_t *pos = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *pos);
    if (!pos) {
        free(src);
        return OOM();
    }
    for (int64_t e = 0; e < cnt; e++) pos[e] = view_pos(c, x, src ? src[e] : e);
    free(src);
    c->tv[y].store = c->tv[x].store;
    free(c->tv[y].pos);
    c->tv[y].pos = pos;
    if (view_natural(c, y)) {
        free(c->tv[y].pos);
        c->tv[y].pos = NULL;
        /* natural on the same storage: the storage's grid may differ */
    }
    return add_move(c, n, ENPU_MOVE_REMAP, "address remapping: '%s' is a view of the stored map "
                                            "(a consumer that needs another layout gets a copy layer)",
                    yt->name);
}

/* ---- the walk ---------------------------------------------------------------------- */

int cc_lower(cc *c) {
    const enpu_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (!n->q)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': not quantized (no q block)", n->name);
        int rc;
        if (c->force_host && c->force_host[i]) {
            /* its NPU form failed in an earlier try: the host runs it */
            if (n->q->kind == ENPU_Q_MOVE &&
                (rc = add_move(c, n, ENPU_MOVE_HOST, "the host copies: %s", c->force_why[i])))
                return rc;
            if ((rc = lower_host(c, i, c->force_why[i]))) return rc;
            continue;
        }
        switch (n->q->kind) {
        case ENPU_Q_CONV: rc = lower_conv(c, i); break;
        case ENPU_Q_MAXPOOL: rc = lower_maxpool(c, i); break;
        case ENPU_Q_ADD:
        case ENPU_Q_MUL: rc = lower_eltwise(c, i); break;
        case ENPU_Q_TABLE: rc = lower_table(c, i); break;
        case ENPU_Q_MOVE: rc = lower_move(c, i); break;
        case ENPU_Q_HOST: rc = lower_host(c, i, n->q->why ? n->q->why : "no NPU kernel"); break;
        default: rc = enpu_fail(c->err, ENPU_E_INVALID, "node '%s': unknown kind", n->name);
        }
        if (rc) return rc;
    }
    /* graph outputs must be readable by the host: natural or identity views */
    for (int k = 0; k < g->n_outputs; k++) {
        int t = g->outputs[k];
        if (T(c, t)->dtype != ENPU_DT_INT8) continue;
        if (c->tv[t].store >= 0 && (view_natural(c, t) || view_identity(c, t))) continue;
        const enpu_node fake = {.name = (char *)"graph output"};
        int s = need_natural(c, t, &fake);
        if (s < 0) return s;
    }
    return 0;
}
