/* The row-stationary back end's driver: the quantized graph -> one rs_conv
 * per CONV-kind node, a host op (sync) per HOST node and per data movement
 * that is not a free view, every tensor in DRAM, then the mapping search,
 * the weight blocks, the program and its report (docs/rowstat.md "The
 * compiler").  A batch of N images (the graph's input batch) is stored
 * image after image in every tensor; a convolution of the batch becomes
 * N/n rs_conv of n images each, n chosen by the mapping search
 * (docs/rowstat.md "Batches"). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/rowstat/rs.h"
#include "isa/isa_internal.h"

unsigned enpu_rs_host_kinds(void) {
    return 1u << ENPU_Q_ADD | 1u << ENPU_Q_MUL | 1u << ENPU_Q_TABLE | 1u << ENPU_Q_MAXPOOL;
}

/* Where a graph tensor lives. */
typedef struct rt {
    int src;          /* the tensor whose storage holds it (itself when stored; an alias's source) */
    bool stored;      /* has DRAM words of its own */
    bool view;        /* a reshape only FC layers read: never stored (they read its source map) */
    bool host_float;  /* a float32 tensor of the host */
    int64_t addr;     /* DRAM word (of src) */
    int desc;         /* IO descriptor, -1 */
} rt;

typedef struct rlayer {
    int node;
    bool host;        /* a sync */
    enpu_instr ins;   /* rs_conv */
    int in, out;      /* graph tensors (in: the map it reads) */
    char *note;
    int64_t macs;
    int64_t batch;    /* rs_conv: images of the batch (N) */
} rlayer;

typedef struct rc_ctx {
    const enpu_graph *g;
    const enpu_arch *a;
    enpu_err *err;
    rt *t;
    rlayer *L;
    int nl;
    int64_t dram_words;   /* bump allocation */
    int es;
    enpu_search search;   /* the mapping search (opts) */
    int *ilayer;          /* per instruction emitted: its layer in L */
} rc_ctx;


static int oom(rc_ctx *c) { return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory"); }

static const enpu_tensor *T(const rc_ctx *c, int t) { return &c->g->tensors[t]; }

/* Images of tensor t: its first dimension (1 for a vector). */
static int64_t tensor_batch(const enpu_tensor *t) { return t->rank >= 2 && t->dims[0] > 0 ? t->dims[0] : 1; }

/* Words of tensor t stored [n][h][w][c] in DRAM words (docs/program.md, IO). */
static int64_t tensor_words(const rc_ctx *c, int t) {
    int64_t h, w, ch;
    cc_tensor_grid(T(c, t), &h, &w, &ch);
    return tensor_batch(T(c, t)) * h * w * enpu_ceil_div(ch * c->es, enpu_arch_word_bytes(c->a));
}

static int store(rc_ctx *c, int t) {
    if (c->t[t].stored || c->t[t].host_float) return 0;
    if (T(c, t)->dtype == ENPU_DT_FLOAT32) {
        c->t[t].host_float = true;
        return 0;
    }
    c->t[t].stored = true;
    c->t[t].src = t;
    c->t[t].addr = c->dram_words;
    c->dram_words += tensor_words(c, t);
    if (c->dram_words * enpu_arch_word_bytes(c->a) > c->a->dram_bytes)
        return enpu_fail(c->err, ENPU_E_NOFIT,
                         "tensor '%s': the model's tensors need %" PRId64 " bytes of DRAM, arch '%s' "
                         "has %" PRId64 " (raise dram_bytes)",
                         T(c, t)->name, c->dram_words * enpu_arch_word_bytes(c->a), c->a->name,
                         c->a->dram_bytes);
    return 0;
}

static rlayer *add_layer(rc_ctx *c, int node) {
    rlayer *nl = realloc(c->L, (size_t)(c->nl + 1) * sizeof *nl);
    if (!nl) return NULL;
    c->L = nl;
    rlayer *l = &c->L[c->nl++];
    memset(l, 0, sizeof *l);
    l->node = node;
    l->in = l->out = -1;
    return l;
}

/* The same [h][w][c] storage order. */
static bool same_grid(const enpu_tensor *x, const enpu_tensor *y) {
    int64_t a[3], b[3];
    cc_tensor_grid(x, &a[0], &a[1], &a[2]);
    cc_tensor_grid(y, &b[0], &b[1], &b[2]);
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static bool reshape_like(enpu_op op) {
    return op == ENPU_OP_RESHAPE || op == ENPU_OP_FLATTEN || op == ENPU_OP_SQUEEZE ||
           op == ENPU_OP_UNSQUEEZE || op == ENPU_OP_IDENTITY || op == ENPU_OP_DROPOUT;
}

/* Every reader of t is an FC layer (a CONV node from a Gemm), and t is no
 * graph output. */
static bool only_fc_reads(const rc_ctx *c, int t) {
    if (T(c, t)->flags & ENPU_T_OUTPUT) return false;
    int n = 0;
    for (int i = 0; i < c->g->n_nodes; i++) {
        const enpu_node *nd = &c->g->nodes[i];
        if (nd->dead) continue;
        for (int k = 0; k < nd->n_in; k++) {
            if (nd->in[k] != t) continue;
            if (!nd->q || nd->q->kind != ENPU_Q_CONV || nd->q->origin != ENPU_QO_FC || k != 0) return false;
            n++;
        }
    }
    return n > 0;
}

static int lower_host(rc_ctx *c, int ni, const char *why) {
    const enpu_node *n = &c->g->nodes[ni];
    for (int k = 0; k < n->n_in; k++) {
        int t = n->in[k];
        if (t < 0 || (T(c, t)->flags & ENPU_T_CONST)) continue;
        if (c->t[t].view)
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': input '%s' is not stored",
                             n->name, T(c, t)->name);
    }
    for (int k = 0; k < n->n_out; k++) {
        int rc = store(c, n->out[k]);
        if (rc) return rc;
    }
    rlayer *l = add_layer(c, ni);
    if (!l) return oom(c);
    l->host = true;
    l->in = n->in[0];
    l->out = n->out[0];
    l->macs = enpu_node_macs(c->g, n);
    l->note = cc_dupf("host op (%s)", why);
    return l->note ? 0 : oom(c);
}

static int lower_move(rc_ctx *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    int x = n->in[0], y = n->out[0];
    if (c->t[x].host_float) return lower_host(c, ni, "data movement of a host tensor");
    if (reshape_like(n->op)) {
        if (!c->t[x].view && same_grid(T(c, x), T(c, y))) {
            /* the same words in the same order: an alias */
            c->t[y].src = c->t[x].src;
            return 0;
        }
        int64_t mh, mw, mc;
        cc_tensor_grid(T(c, c->t[x].src), &mh, &mw, &mc);
        if (only_fc_reads(c, y) && mh <= 255 && mw <= 255) {
            /* the FC reads the map itself, its weights in the map's order
             * (its kernel is the map: hk, wk within their 8-bit fields) */
            c->t[y].view = true;
            c->t[y].src = c->t[x].src;
            return 0;
        }
        if (c->t[x].view)
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': reshape of an unstored view",
                             n->name);
        return lower_host(c, ni, "a reshape that changes the stored order: the host copies");
    }
    /* Transpose, Concat, Slice, Pad, Resize, Expand, Gather...: the engine
     * has no data-movement unit; the host copies the int8 codes */
    return lower_host(c, ni, "data movement: the host copies");
}

static int lower_conv(rc_ctx *c, int ni) {
    const enpu_node *n = &c->g->nodes[ni];
    const enpu_qnode *q = n->q;
    enpu_qconv_geom geo;
    int rc = enpu_qconv_geom_of(c->g, n, &geo, c->err);
    if (rc) return rc;
    if (geo.n < 1 || geo.n > 255)
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': batch %" PRId64 " (the engine runs 1 to 255 images)",
                         n->name, geo.n);
    if (geo.dh != 1 || geo.dw != 1)
        return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                         "node '%s': dilation %dx%d: the row-stationary engine's windows are dense",
                         n->name, geo.dh, geo.dw);
    int x = n->in[0], y = n->out[0];
    int src = c->t[x].src;
    enpu_instr *in;
    rlayer *l = add_layer(c, ni);
    if (!l) return oom(c);
    in = &l->ins;
    memset(in, 0, sizeof *in);
    in->opcode = ENPU_OPC_RS_CONV;
    in->rs_bits = c->es == 2;
    in->stride_h = geo.sh, in->stride_w = geo.sw, in->dil_h = in->dil_w = 1;
    in->pad_top = geo.pt, in->pad_left = geo.pl, in->pad_bottom = geo.pb, in->pad_right = geo.pr;
    in->groups = geo.group;
    in->co = geo.co;
    if (q->origin == ENPU_QO_FC) {
        /* a conv whose kernel is the whole map it reads (the map behind a
         * flatten; a vector is a 1x1 map of K channels) */
        int64_t h, w, ch;
        cc_tensor_grid(T(c, src), &h, &w, &ch);
        if (h * w * ch != geo.ci)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': FC of %" PRId64 " inputs reads '%s' of %" PRId64,
                             n->name, geo.ci, T(c, src)->name, h * w * ch);
        in->hi = in->hk = h, in->wi = in->wk = w, in->ci = ch;
        in->ho = in->wo = 1;
    } else {
        if (c->t[x].view || src != x) {
            if (!same_grid(T(c, src), T(c, x)))
                return enpu_fail(c->err, ENPU_E_UNSUPPORTED, "node '%s': input '%s' is not stored in its own order",
                                 n->name, T(c, x)->name);
        }
        in->hi = geo.h, in->wi = geo.w, in->ci = geo.ci;
        in->ho = geo.oh, in->wo = geo.ow;
        in->hk = geo.kh, in->wk = geo.kw;
        /* one output row or column: its stride does not matter; the smallest
         * that keeps it one fits the 4-bit field */
        if (in->ho == 1) in->stride_h = in->hi + in->pad_top + in->pad_bottom - in->hk + 1;
        if (in->wo == 1) in->stride_w = in->wi + in->pad_left + in->pad_right - in->wk + 1;
        if (in->stride_h > 15 || in->stride_w > 15 || in->hk > 255 || in->wk > 255)
            return enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                             "node '%s': a %" PRId64 "x%" PRId64 " window with strides %" PRId64 ",%" PRId64
                             " does not fit the instruction (kernel up to 255, stride up to 15)",
                             n->name, in->hk, in->wk, in->stride_h, in->stride_w);
    }
    if (!c->t[src].stored)
        return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': input '%s' is not in DRAM", n->name,
                         T(c, src)->name);
    if ((rc = store(c, y))) return rc;
    in->rs_ifmap_addr = c->t[src].addr;
    in->rs_ofmap_addr = c->t[y].addr;
    in->rs_zp_in = q->zp_in[0], in->rs_zp_out = q->zp_out;
    in->rs_lo = q->lo, in->rs_hi = q->hi;
    /* the batch, for the mapping search (which sets the images per pass) */
    in->rs_n = geo.n > 1 ? geo.n : 0;
    l->batch = geo.n;
    l->in = src;
    l->out = y;
    l->macs = enpu_node_macs(c->g, n);
    return 0;
}

static int lower(rc_ctx *c) {
    const enpu_graph *g = c->g;
    for (int t = 0; t < g->n_tensors; t++) c->t[t] = (rt){.src = t, .addr = -1, .desc = -1};
    int rc = 0;
    for (int i = 0; i < g->n_inputs && !rc; i++) rc = store(c, g->inputs[i]);
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (!n->q)
            return enpu_fail(c->err, ENPU_E_INVALID, "node '%s': not quantized (no q block)", n->name);
        switch (n->q->kind) {
        case ENPU_Q_CONV: rc = lower_conv(c, i); break;
        case ENPU_Q_MOVE: rc = lower_move(c, i); break;
        case ENPU_Q_HOST: rc = lower_host(c, i, "no kernel on the engine"); break;
        default:
            rc = enpu_fail(c->err, ENPU_E_UNSUPPORTED,
                           "node '%s': kind %s has no kernel on the row-stationary engine (quantize the "
                           "model for arch '%s': its host then runs it)",
                           n->name, enpu_qkind_name(n->q->kind), c->a->name);
        }
    }
    for (int k = 0; k < g->n_outputs && !rc; k++) {
        int t = g->outputs[k];
        const rt *r = &c->t[t];
        if (!r->host_float && !c->t[r->src].stored)
            rc = enpu_fail(c->err, ENPU_E_UNSUPPORTED, "graph output '%s' is not stored", T(c, t)->name);
    }
    return rc;
}

/* ---- emission ------------------------------------------------------------------ */

/* The IO descriptor of tensor t (created on first use). */
static int io_desc(rc_ctx *c, enpu_program *p, int t, enpu_io_dir dir) {
    rt *r = &c->t[t];
    if (r->desc >= 0) {
        /* a tensor both checked and exchanged keeps the stronger role */
        if (dir == ENPU_IO_HOST && p->io[r->desc].dir == ENPU_IO_PROBE) p->io[r->desc].dir = ENPU_IO_HOST;
        return r->desc;
    }
    const enpu_tensor *tt = T(c, t);
    enpu_io_desc d;
    memset(&d, 0, sizeof d);
    d.name = tt->name;
    d.dir = dir;
    d.rank = tt->rank;
    if (r->host_float) {
        d.dtype = ENPU_DT_FLOAT32;
        d.mem = ENPU_MEM_HOST;
        d.layout = ENPU_LAYOUT_ANY;
        for (int k = 0; k < tt->rank; k++) d.dims[k] = tt->dims[k];
    } else {
        d.dtype = tt->dtype;
        d.mem = ENPU_MEM_DRAM;
        d.addr = (uint32_t)c->t[r->src].addr;
        d.scale = tt->quant->scale[0];
        d.zero_point = tt->quant->zero_point[0];
        int64_t h, w, ch;
        cc_tensor_grid(tt, &h, &w, &ch);
        if (tt->rank >= 3) {
            d.layout = ENPU_LAYOUT_NHWC;
            d.dims[0] = tt->dims[0];
            for (int k = 2; k < tt->rank; k++) d.dims[k - 1] = tt->dims[k];
            d.dims[tt->rank - 1] = tt->dims[1];
        } else {
            d.layout = ENPU_LAYOUT_ANY;
            for (int k = 0; k < tt->rank; k++) d.dims[k] = tt->dims[k];
            if (enpu_io_row(&d) != ch) d.row = ch;
        }
    }
    int rc = enpu_program_add_io(p, &d, c->err);
    if (rc < 0) return rc;
    r->desc = rc;
    return rc;
}

typedef struct rs_operand_ctx {
    rc_ctx *c;
    enpu_program *p;
} rs_operand_ctx;

/* cc_operand_fn: a host op's operand as stored */
static int host_operand(void *ctx, int t, bool out) {
    rs_operand_ctx *o = ctx;
    return io_desc(o->c, o->p, t, out && (T(o->c, t)->flags & ENPU_T_OUTPUT) ? ENPU_IO_OUTPUT : ENPU_IO_HOST);
}

static void put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct lay_ctx {
    const enpu_qnode *q;
    uint8_t *base; /* rs_weight_addr's first byte in the image */
    int64_t es;
} lay_ctx;

static void lay_w(void *ctx, int64_t byte, int64_t idx) {
    lay_ctx *l = ctx;
    if (l->es == 2) put_le(l->base + byte, (uint16_t)l->q->w16[idx], 2);
    else l->base[byte] = (uint8_t)l->q->w[idx];
}

static void lay_p(void *ctx, int64_t byte, int64_t ch) {
    lay_ctx *l = ctx;
    uint8_t *o = l->base + byte;
    put_le(o, (uint64_t)(int64_t)l->q->bias[ch], 8);
    put_le(o + 8, l->q->M[ch], 4);
    put_le(o + 12, (uint32_t)(int32_t)l->q->S[ch], 4);
}

/* The weight block of an rs_conv in the DRAM image, as
 * enpu_rs_weight_layout orders it. */
void rs_lay_weights(const enpu_arch *a, const enpu_qnode *q, const enpu_instr *in, uint8_t *img) {
    enpu_rs_geom g;
    enpu_err e = {0};
    ENPU_ASSERT(enpu_rs_geom_of(a, in, &g, &e) == 0);
    lay_ctx l = {q, img + in->rs_weight_addr * g.wb, g.es};
    enpu_rs_weight_layout(&g, in, lay_w, lay_p, &l);
}

static int emit(rc_ctx *c, enpu_program *p) {
    const enpu_graph *g = c->g;
    int rc = 0;
    /* descriptors: inputs first, in graph order */
    for (int i = 0; i < g->n_inputs; i++) {
        int d = io_desc(c, p, g->inputs[i], ENPU_IO_INPUT);
        if (d < 0) return d;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        int d = io_desc(c, p, g->outputs[k], ENPU_IO_OUTPUT);
        if (d < 0) return d;
    }
    /* the weights after every tensor */
    int64_t wbase = c->dram_words;
    for (int i = 0; i < c->nl; i++) {
        rlayer *l = &c->L[i];
        if (l->host) continue;
        l->ins.rs_weight_addr = wbase;
        rs_map_info mi;
        rc = rs_map_layer(c->a, &l->ins, c->search, g->nodes[l->node].name, &mi, c->err);
        if (rc) return rc;
        enpu_rs_geom geo;
        if ((rc = enpu_rs_geom_of(c->a, &l->ins, &geo, c->err))) return rc;
        wbase += geo.weight_words;
        free(l->note);
        char alt[256] = "no other mapping fits";
        if (mi.alt_cycles >= 0) {
            enpu_rs_geom ga;
            enpu_err e2 = {0};
            enpu_rs_geom_of(c->a, &mi.alt, &ga, &e2);
            snprintf(alt, sizeof alt, "the best other: %s, %" PRId64 " cycles (+%.1f%%)",
                     rs_map_params(&ga, &mi.alt).s, mi.alt_cycles,
                     100.0 * (double)(mi.alt_cycles - mi.cycles) / (double)mi.cycles);
        }
        char batch[96] = "";
        if (l->batch > 1)
            snprintf(batch, sizeof batch, " (batch %" PRId64 ": %" PRId64 " instruction%s of %" PRId64 " images)",
                     l->batch, l->batch / geo.n, l->batch / geo.n > 1 ? "s" : "", geo.n);
        l->note = cc_dupf("%s%s: %" PRId64 " passes, global buffer %" PRId64 " of %" PRId64
                          " bytes; %" PRId64 " cycles modelled, %" PRId64 " mappings of %" PRId64
                          " PE-set shapes timed; %s",
                          rs_map_params(&geo, &l->ins).s, batch, geo.n_passes, geo.glb_used, c->a->rs_glb_bytes,
                          mi.cycles, mi.n_timed, mi.n_cand, alt);
        if (!l->note) return oom(c);
    }
    int64_t wb = enpu_arch_word_bytes(c->a);
    if (wbase * wb > c->a->dram_bytes)
        return enpu_fail(c->err, ENPU_E_NOFIT,
                         "program: tensors and weights need %" PRId64 " bytes of DRAM, arch '%s' has %" PRId64
                         " (raise dram_bytes)", wbase * wb, c->a->name, c->a->dram_bytes);
    size_t img_len = (size_t)(wbase * wb);
    uint8_t *img = calloc(img_len ? img_len : 1, 1);
    if (!img) return oom(c);
    for (int i = 0; i < c->nl; i++)
        if (!c->L[i].host) rs_lay_weights(c->a, g->nodes[c->L[i].node].q, &c->L[i].ins, img);
    rc = enpu_program_set_image(p, ENPU_SEC_DRAM_INIT, img, img_len, c->err);
    free(img);
    if (rc) return rc;
    for (int i = 0; i < c->nl && !rc; i++) {
        rlayer *l = &c->L[i];
        const enpu_node *n = &g->nodes[l->node];
        const char *src = n->name;
        if (l->host) {
            rs_operand_ctx oc = {c, p};
            int hi = cc_add_hostop(p, g, n, host_operand, &oc, c->err);
            if (hi < 0) return hi;
            enpu_instr in;
            memset(&in, 0, sizeof in);
            in.opcode = ENPU_OPC_SYNC;
            in.host_op = hi;
            if ((rc = enpu_program_add_instr(p, &in, n->name, 1, &src, c->err))) return rc;
        } else {
            /* N/n instructions of n images each, image after image */
            enpu_rs_geom geo;
            if ((rc = enpu_rs_geom_of(c->a, &l->ins, &geo, c->err))) return rc;
            const int64_t k = l->batch / geo.n;
            for (int64_t b = 0; b < k && !rc; b++) {
                enpu_instr in = l->ins;
                in.rs_ifmap_addr += b * geo.ifmap_words;
                in.rs_ofmap_addr += b * geo.ofmap_words;
                if ((rc = enpu_program_add_instr(p, &in, n->name, 1, &src, c->err))) return rc;
                c->ilayer[p->n_instr - 1] = i;
                p->layers[p->n_instr - 1].macs = l->macs / k;
                /* the layer's output is whole after its last instruction */
                if (b + 1 < k) rc = enpu_program_set_layer_output(p, p->n_instr - 1, "", -1, c->err);
            }
            if (rc) return rc;
        }
        c->ilayer[p->n_instr - 1] = i;
        int io = -1;
        if (l->out >= 0 && !c->t[l->out].host_float) {
            io = io_desc(c, p, l->out, (T(c, l->out)->flags & ENPU_T_OUTPUT) ? ENPU_IO_OUTPUT : ENPU_IO_PROBE);
            if (io < 0) return io;
        } else if (l->out >= 0) {
            io = c->t[l->out].desc;
        }
        if (l->host) p->layers[p->n_instr - 1].macs = l->macs; /* an rs_conv's: above */
        rc = enpu_program_set_layer_output(p, p->n_instr - 1, l->out >= 0 ? T(c, l->out)->name : "", io,
                                           c->err);
    }
    if (rc) return rc;
    enpu_instr end;
    memset(&end, 0, sizeof end);
    end.opcode = ENPU_OPC_END;
    return enpu_program_add_instr(p, &end, "end", 0, NULL, c->err);
}

/* ---- the report ------------------------------------------------------------------ */


static int report(rc_ctx *c, const enpu_program *p, enpu_compile_report *r) {
    const enpu_arch *a = c->a;
    memset(r, 0, sizeof *r);
    r->arch_name = cc_dups(a->name);
    r->engine = ENPU_ENGINE_ROWSTAT;
    /* pes x pe_rows is what the reports divide MACs by: the array */
    r->pes = (int)a->rs_cols, r->pe_rows = (int)a->rs_rows;
    rs_counts *cnt = calloc((size_t)p->n_instr, sizeof *cnt);
    r->layers = calloc((size_t)p->n_instr, sizeof *r->layers);
    r->hostops = calloc((size_t)p->n_hostops + 1, sizeof *r->hostops);
    if (!cnt || !r->layers || !r->hostops || !r->arch_name) {
        free(cnt);
        return oom(c);
    }
    r->total_modelled = rs_model_program(p, cnt);
    int64_t wb = enpu_arch_word_bytes(a), units = enpu_arch_mac_units(a);
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        for (int k = 0; k < ENPU_ACT_COUNT; k++) r->total_activity[k] += cnt[i].act[k];
        r->total_dram_read_bytes += cnt[i].reads[ENPU_MEM_OFFCHIP] * wb;
        r->total_dram_write_bytes += cnt[i].writes[ENPU_MEM_OFFCHIP] * wb;
        if (in->opcode == ENPU_OPC_END) continue;
        enpu_layer_report *L = &r->layers[r->n_layers];
        L->first_instr = i;
        L->n_instr = 1;
        L->chain_head = r->n_layers;
        r->n_layers++;
        L->name = cc_dups(p->layers[i].name);
        L->op = cc_dups(enpu_opcode_mnemonic(in->opcode));
        L->src = cc_dups(p->layers[i].n_src ? p->layers[i].src[0] : "");
        L->fused = cc_dups("");
        const rlayer *rl = c->ilayer[i] >= 0 ? &c->L[c->ilayer[i]] : NULL;
        L->note = cc_dups(rl && rl->note ? rl->note : "");
        if (!L->name || !L->op || !L->src || !L->fused || !L->note) {
            free(cnt);
            return oom(c);
        }
        bool rs = in->opcode == ENPU_OPC_RS_CONV;
        L->in[0] = in->hi, L->in[1] = in->wi, L->in[2] = in->ci;
        L->out[0] = in->ho, L->out[1] = in->wo, L->out[2] = in->co;
        L->kernel[0] = in->hk, L->kernel[1] = in->wk;
        L->stride[0] = in->stride_h, L->stride[1] = in->stride_w;
        L->mode = -1;
        L->ifmap_addr = rs ? in->rs_ifmap_addr : -1;
        L->ofmap_addr = rs ? in->rs_ofmap_addr : -1;
        L->op2_addr = L->skip_addr = -1, L->op2_mem = -1;
        L->weight_addr = rs ? in->rs_weight_addr : -1;
        if (rs) {
            enpu_rs_geom g;
            enpu_err e = {0};
            if (enpu_rs_geom_of(a, in, &g, &e) == 0) L->weight_words = g.weight_words;
        }
        L->strips = rs;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            L->activity[k] = cnt[i].act[k];
            L->modelled_cycles += cnt[i].act[k];
        }
        L->compute_cycles = L->activity[ENPU_ACT_COMPUTE];
        L->dram_read_bytes = cnt[i].reads[ENPU_MEM_OFFCHIP] * wb;
        L->dram_write_bytes = cnt[i].writes[ENPU_MEM_OFFCHIP] * wb;
        if (in->opcode == ENPU_OPC_SYNC) {
            r->host_macs += p->layers[i].macs;
        } else {
            L->macs = p->layers[i].macs;
            r->total_macs += L->macs;
        }
        L->ideal_cycles = (L->macs + units - 1) / units;
    }
    free(cnt);
    r->total_ideal = (r->total_macs + units - 1) / units;
    for (int i = 0; i < p->n_hostops; i++) {
        r->hostops[r->n_hostops] = cc_dupf("%s '%s'", p->hostops[i].kind, p->hostops[i].name);
        if (!r->hostops[r->n_hostops++]) return oom(c);
    }
    r->weight_used_bytes = (int64_t)p->dram_init_len;
    r->weight_bytes = a->dram_bytes;
    r->main_peak_bytes = c->dram_words * wb, r->main_bytes = a->dram_bytes;
    r->n_instr = p->n_instr, r->itcm_instr = (int)(a->itcm_bytes / ENPU_INSTR_BYTES);
    return 0;
}

/* ENPU_E_NOFIT when n_instr instructions do not fit the arch's ITCM. */
static int itcm_fit(const enpu_arch *arch, int n_instr, enpu_err *err) {
    if ((int64_t)n_instr * ENPU_INSTR_BYTES <= arch->itcm_bytes) return 0;
    char hint[160];
    cc_fit_hint(arch, "itcm_bytes", (int64_t)n_instr * ENPU_INSTR_BYTES, hint, sizeof hint);
    return enpu_fail(err, ENPU_E_NOFIT,
                     "program: %d instructions (%d bytes) do not fit the ITCM of arch '%s' (%" PRId64 " bytes); %s",
                     n_instr, n_instr * ENPU_INSTR_BYTES, arch->name, arch->itcm_bytes, hint);
}

int enpu_rs_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                    enpu_program *prog, enpu_compile_report *rep, enpu_err *err) {
    rc_ctx c;
    memset(&c, 0, sizeof c);
    c.g = qg, c.a = arch, c.err = err;
    c.search = o ? o->search : ENPU_SEARCH_FAST;
    c.es = enpu_qgraph_bits(qg) == 16 ? 2 : 1;
    c.t = calloc((size_t)(qg->n_tensors ? qg->n_tensors : 1), sizeof *c.t);
    int rc = c.t ? 0 : oom(&c);
    if (!rc) rc = lower(&c);
    /* the layers' instructions: one each at least, a batch's N/n once mapped */
    int64_t most = 1;
    for (int i = 0; !rc && i < c.nl; i++) most += c.L[i].host ? 1 : c.L[i].batch;
    if (!rc && !(c.ilayer = malloc((size_t)most * sizeof *c.ilayer))) rc = oom(&c);
    for (int64_t i = 0; !rc && i < most; i++) c.ilayer[i] = -1;
    if (!rc) rc = itcm_fit(arch, c.nl + 1, err);
    if (!rc) rc = emit(&c, prog);
    if (!rc) rc = itcm_fit(arch, prog->n_instr, err);
    if (!rc) {
        rc = enpu_program_validate(prog, err);
        if (rc) { /* the compiler's bug: exit 4 */
            enpu_err_prefix(err, "internal error: the compiled program does not validate");
            rc = ENPU_E_INTERNAL;
            if (err) err->code = ENPU_E_INTERNAL;
        }
    }
    if (!rc && rep) rc = report(&c, prog, rep);
    for (int i = 0; i < c.nl; i++) free(c.L[i].note);
    free(c.L);
    free(c.t);
    free(c.ilayer);
    if (rc && rep) enpu_compile_report_free(rep);
    return rc;
}
