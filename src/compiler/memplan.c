/* Memory planning.
 *
 * Main DTCM (feature maps): the note's two-ended allocation.  Steps are the
 * chains and host ops in program order.  A storage lives from the step that
 * writes it (graph inputs: from the start) to the last step that reads it
 * from the main DTCM (graph outputs: to the end).  Storages are placed in
 * the order they are written, each at the end of the memory opposite to the
 * input of the step writing it: a layer's input at the bottom (from address
 * 0 up, where the graph inputs start) gets its output at the top (from the
 * last word down), and the next layer, whose input is now at the top, writes
 * at the bottom.  A storage that must live longer (read again later) simply
 * stays where it is and the others are placed around it.
 *
 * Skip DTCM: storages read later as the second operand of an add/mul (the
 * producer writes a copy with store_skip), and constant operands (the
 * SKIP_INIT image), first fit by lifetime.
 *
 * Weight memory: per layer in program order its weights ([Ci][Hk][Wk][Co]
 * with Co folded into words; dwconv/avgpool [Hk][Wk][C]; fc [h][w][c][Co];
 * bn the multipliers), int32 biases, the per-channel (u32 M, u32 S) pairs
 * and activation tables (32-byte header, then (i32 a, i32 b) per segment),
 * each block from a word boundary. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

#define OOM() enpu_fail(c->err, ENPU_E_NOMEM, "out of memory")

/* Step of the layer that writes storage s (-1: before the first step). */
static int def_step(const cc *c, int s) {
    int d = c->S[s].def;
    return d >= 0 ? c->L[d].step : -1;
}

/* Lifetimes: def / last / last_op2 of every storage in steps. */
void cc_lifetimes(cc *c, int *dstep) {
    int end = c->nsteps;
    for (int s = 0; s < c->ns; s++) {
        cc_store *st = &c->S[s];
        dstep[s] = st->def == -3 ? -3 : st->def == -2 ? -2 : def_step(c, s);
        st->last = st->def == -2 ? -1 : dstep[s];
        st->last_op2 = -1;
        st->keep = false;
    }
    for (int i = 0; i < c->nl; i++) {
        const cc_layer *l = &c->L[i];
        if (l->head == i && l->in_store >= 0) {
            cc_store *st = &c->S[l->in_store];
            if (l->step > st->last) st->last = l->step;
        }
        if (l->op2_store >= 0) {
            cc_store *st = &c->S[l->op2_store];
            if (l->step > st->last_op2) st->last_op2 = l->step;
        }
        if (l->opcode == CC_HOST && l->node >= 0) {
            const enpu_node *n = &c->g->nodes[l->node];
            for (int k = 0; k < n->n_in; k++) {
                int t = n->in[k];
                if (t < 0 || c->tv[t].store < 0) continue;
                cc_store *st = &c->S[c->tv[t].store];
                if (l->step > st->last) st->last = l->step;
            }
        }
    }
    for (int k = 0; k < c->g->n_outputs; k++) {
        int t = c->g->outputs[k];
        if (c->tv[t].store >= 0) {
            c->S[c->tv[t].store].last = end;
            c->S[c->tv[t].store].keep = true;
        }
    }
    /* a concat's parts live in their storage: it lives from the first part */
    for (int s = 0; s < c->ns; s++) {
        int into = c->S[s].into;
        if (into < 0) continue;
        if (dstep[s] < dstep[into] || dstep[into] < -1) dstep[into] = dstep[s];
        if (c->S[s].last > c->S[into].last) c->S[into].last = c->S[s].last;
    }
}

static int cmp_iv(const void *x, const void *y) {
    const iv *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Address for `words` words in a memory of `cap` words among the busy
 * intervals (n of them): the lowest gap (top = false) or the highest. */
int64_t cc_place(iv *busy, int n, int64_t cap, int64_t words, bool top) {
    qsort(busy, (size_t)n, sizeof *busy, cmp_iv);
    int64_t best = -1, cur = 0;
    for (int i = 0; i <= n; i++) {
        int64_t gap_end = i < n ? busy[i].a : cap;
        if (gap_end - cur >= words) {
            if (!top) return cur;
            best = gap_end - words;
        }
        if (i < n && busy[i].b > cur) cur = busy[i].b;
    }
    return best;
}

/* Main DTCM plan with capacity cap words; on failure *fail_s is the storage
 * that did not fit.  Returns 0 / -1. */
static int plan_main(cc *c, const int *dstep, int64_t cap, int *fail_s, iv *busy) {
    int ns = c->ns;
    for (int s = 0; s < ns; s++) c->S[s].main_addr = -1;
    /* storages in the order they are written */
    for (int step = -1; step < c->nsteps; step++) {
        for (int s = 0; s < ns; s++) {
            cc_store *st = &c->S[s];
            if (dstep[s] != step || st->into >= 0) continue;
            /* which end: opposite to the input of the step that writes it */
            bool top = false;
            if (step >= 0) {
                for (int i = 0; i < c->nl; i++) {
                    const cc_layer *l = &c->L[i];
                    if (l->step != step || l->head != i || l->in_store < 0) continue;
                    const cc_store *in = &c->S[l->in_store];
                    int64_t ia = in->into >= 0 ? c->S[in->into].main_addr : in->main_addr;
                    if (ia >= 0) top = ia + in->words / 2 < cap / 2;
                    break;
                }
            }
            int nb = 0;
            for (int o = 0; o < ns; o++) {
                const cc_store *so = &c->S[o];
                if (o == s || so->main_addr < 0 || so->into >= 0) continue;
                /* live at this step: written before or now, read now or later */
                if (so->last >= step || dstep[o] == step) busy[nb++] = (iv){so->main_addr, so->main_addr + so->words};
            }
            int64_t a = cc_place(busy, nb, cap, st->words, top);
            if (a < 0) {
                *fail_s = s;
                return -1;
            }
            st->main_addr = a;
        }
    }
    for (int s = 0; s < ns; s++) {
        cc_store *st = &c->S[s];
        if (st->into >= 0) st->main_addr = c->S[st->into].main_addr + st->into_off;
    }
    return 0;
}

/* "use --arch large (N) or PARAM >= NEED" when the large preset has room
 * (and is not the arch in use), else "use PARAM >= NEED". */
void cc_fit_hint(const enpu_arch *a, const char *param, int64_t need, char *buf, size_t n) {
    enpu_arch large;
    enpu_err e2 = {0};
    int64_t have = -1;
    if (enpu_arch_preset("large", &large, &e2) == 0 && strcmp(a->name, "large") != 0) {
        if (strcmp(param, "main_dtcm_bytes") == 0) have = large.main_dtcm_bytes;
        else if (strcmp(param, "skip_dtcm_bytes") == 0) have = large.skip_dtcm_bytes;
        else if (strcmp(param, "weight_mem_bytes") == 0) have = large.weight_mem_bytes;
        else if (strcmp(param, "itcm_bytes") == 0) have = large.itcm_bytes;
    }
    if (have >= need)
        snprintf(buf, n, "use --arch large (%" PRId64 ") or %s >= %" PRId64, have, param, need);
    else
        snprintf(buf, n, "use %s >= %" PRId64, param, need);
}

static void shape_str(const cc *c, int t, char *buf, size_t n) {
    enpu_shape_str(&c->g->tensors[t], buf, n);
}

/* The smallest main DTCM (words) the plan fits, by bisection. */
static int64_t min_main(cc *c, const int *dstep, iv *busy) {
    int64_t lo = 0, hi = 0;
    for (int s = 0; s < c->ns; s++)
        if (c->S[s].into < 0 && dstep[s] >= -1) hi += c->S[s].words;
    int dummy;
    if (hi == 0) return 0;
    while (lo + 1 < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (plan_main(c, dstep, mid, &dummy, busy) == 0) hi = mid;
        else lo = mid;
    }
    return hi;
}

static int nofit_main(cc *c, const int *dstep, int s, iv *busy) {
    const enpu_arch *a = c->a;
    int64_t wb = enpu_arch_word_bytes(a);
    const cc_store *st = &c->S[s];
    int step = dstep[s];
    /* who writes it, what it is read with */
    const char *layer = "graph input";
    const cc_store *in = NULL;
    for (int i = 0; i < c->nl && step >= 0; i++) {
        const cc_layer *l = &c->L[i];
        if (l->step == step && l->head == i) {
            layer = l->name;
            if (l->in_store >= 0) in = &c->S[l->in_store];
            break;
        }
    }
    int64_t live = st->words, others = 0;
    (void)layer;
    int nothers = 0;
    for (int o = 0; o < c->ns; o++) {
        const cc_store *so = &c->S[o];
        if (o == s || so->into >= 0 || dstep[o] < -1 || dstep[o] > step) continue;
        if (so->last >= step || dstep[o] == step) {
            live += so->words;
            if (so != in) others += so->words, nothers++;
        }
    }
    int64_t need = min_main(c, dstep, busy) * wb;
    char os[128], is[128] = "";
    shape_str(c, st->tensor, os, sizeof os);
    if (in) shape_str(c, in->tensor, is, sizeof is);
    char extra[160] = "";
    if (nothers)
        snprintf(extra, sizeof extra, " and %d other live tensor(s) (%" PRId64 " bytes)", nothers, others * wb);
    char hint[160];
    cc_fit_hint(a, "main_dtcm_bytes", need, hint, sizeof hint);
    if (step < 0)
        return enpu_fail(c->err, ENPU_E_NOFIT,
                         "graph input '%s' %s needs %" PRId64 " bytes of main DTCM%s (%" PRId64
                         " bytes in all); arch '%s' has %" PRId64 "; %s",
                         c->g->tensors[st->tensor].name, os, st->words * wb, extra, live * wb, a->name,
                         a->main_dtcm_bytes, hint);
    char ins[200] = "";
    if (in)
        snprintf(ins, sizeof ins, " with its input %s (%" PRId64 " bytes)", is, in->words * wb);
    return enpu_fail(c->err, ENPU_E_NOFIT,
                     "layer '%s': output '%s' %s needs %" PRId64 " bytes of main DTCM%s%s (%" PRId64
                     " bytes in all); arch '%s' has %" PRId64 "; %s",
                     layer, c->g->tensors[st->tensor].name, os, st->words * wb, ins, extra, live * wb,
                     a->name, a->main_dtcm_bytes, hint);
}

/* ---- weight memory -------------------------------------------------------------- */

int cc_wb_reserve(cc *c, wbuf *b, size_t n) {
    if (b->len + n <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) return OOM();
    memset(np + b->cap, 0, cap - b->cap);
    b->p = np, b->cap = cap;
    return 0;
}

/* Appends n bytes (NULL: zeros) at a word boundary; returns the word address. */
int64_t cc_wb_block(cc *c, wbuf *b, const void *data, size_t n) {
    size_t wbytes = (size_t)c->P;
    size_t at = (b->len + wbytes - 1) / wbytes * wbytes;
    if (cc_wb_reserve(c, b, at - b->len + n + wbytes)) return -1;
    if (data) memcpy(b->p + at, data, n);
    b->len = at + n;
    return (int64_t)(at / wbytes);
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

int cc_layout_layer_params(cc *c, cc_layer *l, wbuf *b) {
    const enpu_arch *a = c->a;
    {
        enpu_instr *in = &l->ins;
        if (l->w_bytes > 0) {
            int64_t at = cc_wb_block(c, b, l->w, (size_t)l->w_bytes);
            if (at < 0) return c->err->code;
            in->weight_addr = at;
        }
        if (l->bias) {
            size_t n = (size_t)in->co * 4;
            uint8_t *tmp = malloc(n * 2 + 8);
            if (!tmp) return OOM();
            for (int64_t i = 0; i < in->co; i++) put32(tmp + 4 * i, (uint32_t)l->bias[i]);
            int64_t at = cc_wb_block(c, b, tmp, n);
            for (int64_t i = 0; i < in->co; i++) {
                put32(tmp + 8 * i, l->M[i]);
                put32(tmp + 8 * i + 4, (uint32_t)(int32_t)l->S[i]);
            }
            int64_t aq = at >= 0 ? cc_wb_block(c, b, tmp, n * 2) : -1;
            free(tmp);
            if (at < 0 || aq < 0) return c->err->code;
            in->bias_addr = at, in->quant_addr = aq;
        } else if (l->M && enpu_quant_records(a, in) > 0) { /* add/mul, requant tflite */
            int64_t nq = enpu_quant_records(a, in);
            uint8_t tmp[3 * 8];
            for (int64_t i = 0; i < nq && i < 3; i++) {
                put32(tmp + 8 * i, l->M[i]);
                put32(tmp + 8 * i + 4, (uint32_t)(int32_t)l->S[i]);
            }
            int64_t aq = cc_wb_block(c, b, tmp, (size_t)(nq < 3 ? nq : 3) * 8);
            if (aq < 0) return c->err->code;
            in->quant_addr = aq;
        }
        if (l->table) {
            const enpu_pwl_table *t = l->table;
            int64_t seg = a->act_segments;
            if (t->segments != seg)
                return enpu_fail(c->err, ENPU_E_INVALID,
                                 "node '%s': activation table of %d segments, arch '%s' has %" PRId64,
                                 l->src, t->segments, a->name, seg);
            size_t hb = (size_t)cdiv(ENPU_TABLE_HEADER_BYTES, c->P) * (size_t)c->P;
            size_t n = hb + (size_t)seg * 8;
            uint8_t *tmp = calloc(n, 1);
            if (!tmp) return OOM();
            int32_t hdr[8] = {t->x_base, t->seg_shift, (int32_t)t->M, t->S, t->zp_out, t->lo, t->hi,
                              t->segments};
            for (int i = 0; i < 8; i++) put32(tmp + 4 * i, (uint32_t)hdr[i]);
            for (int64_t i = 0; i < seg; i++) {
                put32(tmp + hb + 8 * i, (uint32_t)(int32_t)t->a[i]);
                put32(tmp + hb + 8 * i + 4, (uint32_t)t->b[i]);
            }
            int64_t at = cc_wb_block(c, b, tmp, n);
            free(tmp);
            if (at < 0) return c->err->code;
            in->table_addr = at;
        }
    }
    return 0;
}

static int plan_weights(cc *c, wbuf *b) {
    const enpu_arch *a = c->a;
    for (int k = 0; k < c->norder; k++) {
        int rc = cc_layout_layer_params(c, &c->L[c->order[k]], b);
        if (rc) return rc;
    }
    int64_t cap = a->weight_mem_bytes;
    if ((int64_t)b->len > cap) {
        /* name the biggest consumer */
        const char *big = "";
        int64_t bigb = 0;
        for (int i = 0; i < c->nl; i++)
            if (c->L[i].w_bytes > bigb) bigb = c->L[i].w_bytes, big = c->L[i].name;
        char hint[160];
        int64_t need = (int64_t)cdiv((int64_t)b->len, c->P) * c->P;
        cc_fit_hint(a, "weight_mem_bytes", need, hint, sizeof hint);
        return enpu_fail(c->err, ENPU_E_NOFIT,
                         "weights: %zu bytes of weights, biases, requantization parameters and "
                         "tables (largest: layer '%s', %" PRId64 " bytes of weights) do not fit the "
                         "weight memory of arch '%s' (%" PRId64 " bytes); %s",
                         b->len, big, bigb, a->name, cap, hint);
    }
    return 0;
}

/* ---- skip DTCM ---------------------------------------------------------------------- */

static int plan_skip(cc *c, const int *dstep, wbuf *img, iv *busy) {
    const enpu_arch *a = c->a;
    int64_t cap = enpu_arch_words(a, a->skip_dtcm_bytes);
    int64_t peak = 0;
    for (int s = 0; s < c->ns; s++) {
        cc_store *st = &c->S[s];
        st->skip_addr = -1;
        bool konst = st->def == -2;
        if (!konst && st->last_op2 < 0) continue;
        int first = konst ? -1 : dstep[s];
        int nb = 0;
        for (int o = 0; o < c->ns; o++) {
            const cc_store *so = &c->S[o];
            if (o == s || so->skip_addr < 0) continue;
            int of = so->def == -2 ? -1 : dstep[o];
            if (of <= st->last_op2 && so->last_op2 >= first) busy[nb++] = (iv){so->skip_addr, so->skip_addr + so->words};
        }
        int64_t at = cc_place(busy, nb, cap, st->words, false);
        if (at < 0) {
            int64_t wb = enpu_arch_word_bytes(a);
            char os[128];
            shape_str(c, st->tensor, os, sizeof os);
            char hint[160];
            int64_t need = 0;
            for (int o = 0; o < c->ns; o++)
                if (c->S[o].def == -2 || c->S[o].last_op2 >= 0) need += c->S[o].words;
            need *= wb;
            cc_fit_hint(a, "skip_dtcm_bytes", need, hint, sizeof hint);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "tensor '%s' %s kept for a later add/mul needs %" PRId64
                             " bytes of skip DTCM beside the other kept tensors; arch '%s' has %" PRId64 "; %s",
                             c->g->tensors[st->tensor].name, os, st->words * wb, a->name,
                             a->skip_dtcm_bytes, hint);
        }
        st->skip_addr = at;
        if (at + st->words > peak) peak = at + st->words;
        if (konst) {
            size_t end = (size_t)((at + st->words) * c->P);
            if (img->len < end) {
                if (cc_wb_reserve(c, img, end - img->len)) return c->err->code;
                img->len = end;
            }
            memcpy(img->p + at * c->P, st->cdata, (size_t)(st->words * c->P));
        }
    }
    return 0;
}

int cc_memplan(cc *c, uint8_t **wimg, size_t *wlen, uint8_t **simg, size_t *slen) {
    int rc = 0;
    int *dstep = malloc((size_t)(c->ns > 0 ? c->ns : 1) * sizeof *dstep);
    iv *busy = malloc((size_t)(c->ns + 1) * sizeof *busy);
    wbuf wb = {0}, sb = {0};
    if (!dstep || !busy) {
        rc = OOM();
        goto out;
    }
    cc_lifetimes(c, dstep);
    int fail_s = -1;
    if (plan_main(c, dstep, enpu_arch_words(c->a, c->a->main_dtcm_bytes), &fail_s, busy) != 0) {
        rc = nofit_main(c, dstep, fail_s, busy);
        goto out;
    }
    if ((rc = plan_skip(c, dstep, &sb, busy))) goto out;
    if ((rc = plan_weights(c, &wb))) goto out;
    /* store_skip on the layer writing each storage kept in the skip DTCM */
    for (int i = 0; i < c->nl; i++) {
        cc_layer *l = &c->L[i];
        if (l->opcode == CC_HOST || l->out_store < 0) continue;
        const cc_store *st = &c->S[l->out_store];
        if (st->def != i) continue;
        if (st->skip_addr >= 0 && st->def != -2) {
            l->store_skip = true;
            l->ins.store_skip = 1;
            l->ins.skip_addr = st->skip_addr;
        }
    }
    /* peak use: most words live at one step */
    for (int step = -1; step <= c->nsteps; step++) {
        int64_t m = 0, k = 0;
        for (int s = 0; s < c->ns; s++) {
            const cc_store *st = &c->S[s];
            if (st->into >= 0) continue;
            if (st->main_addr >= 0 && dstep[s] <= step && (st->last >= step || dstep[s] == step))
                m += st->words;
            if (st->skip_addr >= 0 && (st->def == -2 || dstep[s] <= step) && st->last_op2 >= step)
                k += st->words;
        }
        if (m > c->main_peak) c->main_peak = m;
        if (k > c->skip_peak) c->skip_peak = k;
    }
    *wimg = wb.p, *wlen = wb.len;
    *simg = sb.p, *slen = sb.len;
    wb.p = sb.p = NULL;
out:
    free(wb.p);
    free(sb.p);
    free(dstep);
    free(busy);
    return rc;
}
