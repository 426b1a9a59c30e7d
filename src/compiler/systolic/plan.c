/* The memory plan of the systolic back end: every feature map in the main
 * DTCM (the activation/output SRAM) for its lifetime, placed first-fit by
 * lifetime (the controller's scoreboard orders the accesses of layers that
 * overlap in time), and every layer's weights, biases and requantization
 * parameters in the weight memory.  Nothing goes to DRAM: the engine has
 * none. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/systolic/sya_cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* Appends n bytes at a word boundary; returns the word address, -1 when out
 * of memory. */
static int64_t block(sc *c, const uint8_t *data, size_t n, size_t *cap) {
    size_t at = c->wlen, need = at + (size_t)cdiv((int64_t)n, c->wb) * (size_t)c->wb;
    if (need > *cap) {
        size_t nc = *cap ? *cap : 4096;
        while (nc < need) nc *= 2;
        uint8_t *p = realloc(c->wimg, nc);
        if (!p) return -1;
        c->wimg = p, *cap = nc;
    }
    memset(c->wimg + at, 0, need - at);
    memcpy(c->wimg + at, data, n);
    c->wlen = need;
    return (int64_t)at / c->wb;
}

static int weights(sc *c) {
    size_t cap = 0;
    const char *big = "";
    int64_t bigb = 0;
    for (int i = 0; i < c->nl; i++) {
        sc_layer *l = &c->L[i];
        if (l->kind != SC_SYA) continue;
        enpu_instr *in = &l->ins;
        size_t n = (size_t)in->co * 8;
        uint8_t *tmp = calloc(n, 1);
        if (!tmp) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        int64_t w = block(c, (const uint8_t *)l->w, (size_t)l->w_bytes, &cap);
        for (int64_t k = 0; k < in->co; k++) put32(tmp + 4 * k, (uint32_t)l->bias[k]);
        int64_t bb = w >= 0 ? block(c, tmp, (size_t)in->co * 4, &cap) : -1;
        for (int64_t k = 0; k < in->co; k++) put32(tmp + 8 * k, l->M[k]), put32(tmp + 8 * k + 4, (uint32_t)(int32_t)l->S[k]);
        int64_t q = bb >= 0 ? block(c, tmp, n, &cap) : -1;
        free(tmp);
        if (q < 0) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        in->weight_addr = w, in->bias_addr = bb, in->quant_addr = q;
        if (l->w_bytes > bigb) bigb = l->w_bytes, big = c->g->nodes[l->node].name;
    }
    if ((int64_t)c->wlen > c->a->weight_mem_bytes)
        return enpu_fail(c->err, ENPU_E_NOFIT,
                         "weights: %zu bytes of weights, biases and requantization parameters (largest: "
                         "layer '%s', %" PRId64 " bytes of weights) do not fit the weight memory of arch "
                         "'%s' (%" PRId64 " bytes); use weight_mem_bytes >= %zu",
                         c->wlen, big, bigb, c->a->name, c->a->weight_mem_bytes, c->wlen);
    return 0;
}

static bool live_overlap(const sc_store *x, const sc_store *y) {
    return x->def <= y->last && y->def <= x->last;
}

int sc_plan(sc *c) {
    int rc = weights(c);
    if (rc) return rc;
    const int64_t cap = enpu_arch_words(c->a, c->a->main_dtcm_bytes);
    for (int s = 0; s < c->ns; s++)
        if (c->S[s].keep) c->S[s].last = c->nl;
    /* storages in the order they are written; each at the lowest address
     * free during its whole lifetime */
    int *order = malloc((size_t)(c->ns > 0 ? c->ns : 1) * sizeof *order);
    if (!order) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int s = 0; s < c->ns; s++) order[s] = s;
    for (int i = 1; i < c->ns; i++)
        for (int j = i; j > 0 && c->S[order[j]].def < c->S[order[j - 1]].def; j--) {
            int tmp = order[j];
            order[j] = order[j - 1], order[j - 1] = tmp;
        }
    c->main_peak = 0;
    for (int i = 0; i < c->ns && !rc; i++) {
        sc_store *st = &c->S[order[i]];
        int64_t at = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < i; j++) {
                const sc_store *o = &c->S[order[j]];
                if (!live_overlap(st, o) || at >= o->addr + o->words || o->addr >= at + st->words) continue;
                at = o->addr + o->words;
                moved = true;
            }
        }
        st->addr = at;
        if (at + st->words > c->main_peak) c->main_peak = at + st->words;
        if (at + st->words > cap) {
            char shape[64];
            enpu_shape_str(&c->g->tensors[st->tensor], shape, sizeof shape);
            rc = enpu_fail(c->err, ENPU_E_NOFIT,
                           "tensor '%s' %s needs %" PRId64 " bytes of main DTCM at word %" PRId64
                           " (with the maps live at the same time); arch '%s' has %" PRId64
                           " bytes; use main_dtcm_bytes >= %" PRId64,
                           c->g->tensors[st->tensor].name, shape, st->words * c->wb, at, c->a->name,
                           c->a->main_dtcm_bytes, (at + st->words) * c->wb);
        }
    }
    free(order);
    if (rc) return rc;
    for (int i = 0; i < c->nl; i++) {
        sc_layer *l = &c->L[i];
        if (l->kind != SC_SYA) continue;
        l->ins.ifmap_addr = c->S[l->in_store].addr;
        l->ins.ofmap_addr = c->S[l->out_store].addr;
    }
    return 0;
}
