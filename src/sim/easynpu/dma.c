/* DMA engines, dependency tokens, the instruction prefetcher and the race
 * checks (docs/microarch.md §13.2, §13.4, §13.5; dma.h). */
#include "sim/easynpu/dma.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/observe.h"

/* ---- moving the words (both modes) ------------------------------------------- */

void sim_dma_copy(sim_mem *m, const enpu_instr *in, uint64_t t) {
    const int load = in->dma_dir == ENPU_DMA_LOAD;
    const int on = (int)in->dma_mem;
    const size_t n = (size_t)(in->dma_len * m->wb);
    uint64_t *wc = sim_mem_wc(m, load ? on : ENPU_MEM_DRAM);
    for (int64_t r = 0; r < in->dma_rows; r++) {
        int64_t dw = in->dram_addr + r * in->dram_stride, sw = in->sram_addr + r * in->sram_stride;
        uint8_t *dram = sim_mem_ptr(m, ENPU_MEM_DRAM, dw), *sram = sim_mem_ptr(m, on, sw);
        memmove(load ? sram : dram, load ? dram : sram, n);
        if (wc)
            for (int64_t k = 0; k < in->dma_len; k++) wc[(load ? sw : dw) + k] = t;
    }
}

/* ---- accesses and races --------------------------------------------------------- */

static sim_access acc_block(int mem, int64_t base, int64_t words, bool write) {
    return (sim_access){mem, base, 1, words, words, write};
}

void sim_dma_accesses(const enpu_instr *in, sim_access out[2]) {
    bool load = in->dma_dir == ENPU_DMA_LOAD;
    int64_t rows = in->dma_rows, len = in->dma_len;
    out[0] = (sim_access){(int)in->dma_mem, in->sram_addr, rows, len,
                          rows > 1 ? in->sram_stride : len, load};
    out[1] = (sim_access){ENPU_MEM_DRAM, in->dram_addr, rows, len, rows > 1 ? in->dram_stride : len,
                          !load};
}

int sim_chain_accesses(const enpu_program *p, int first, int n, sim_access *out) {
    const enpu_arch *a = &p->arch;
    int k = 0;
    for (int i = first; i < first + n; i++) {
        const enpu_instr *in = &p->instr[i];
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(a, in, i > first, b);
        for (int j = 0; j < nb && k < SIM_CHAIN_MAX_ACCESS; j++) {
            if (strcmp(b[j].role, "ifmap") == 0 && in->ifmap_wpp) {
                /* some channel words of each pixel (ISA 9) */
                int64_t g = (in->ci + a->pes - 1) / a->pes;
                out[k++] = (sim_access){ENPU_MEM_MAIN, in->ifmap_addr + in->ifmap_word,
                                        in->hi * in->wi, g, in->ifmap_wpp, false};
            } else if (strcmp(b[j].role, "ofmap") == 0 && in->ofmap_wpp) {
                /* concat at store: only the words of this output (§12.5) */
                int64_t g = (in->co + a->pes - 1) / a->pes;
                out[k++] = (sim_access){ENPU_MEM_MAIN, in->ofmap_addr + in->ofmap_word,
                                        in->ho * in->wo, g, in->ofmap_wpp, true};
            } else {
                out[k++] = acc_block(b[j].mem, b[j].addr, b[j].words, b[j].write != 0);
            }
        }
    }
    return k;
}

int sim_hostop_accesses(const enpu_program *p, int instr, sim_access *out) {
    const enpu_hostop *h = &p->hostops[p->instr[instr].host_op];
    int k = 0;
    for (int i = 0; i < h->n_in + h->n_out; i++) {
        if (h->io[i] < 0) continue; /* an omitted operand */
        const enpu_io_desc *d = &p->io[h->io[i]];
        if (d->mem == ENPU_MEM_HOST) continue;
        out[k++] = acc_block(d->mem, d->addr, enpu_io_words(&p->arch, d), i >= h->n_in);
    }
    return k;
}

/* First row of b ending after word x, or b->rows. */
static int64_t first_row_after(const sim_access *b, int64_t x) {
    int64_t d = x - b->base - b->len; /* row r ends after x iff r*stride > d */
    if (d < 0) return 0;
    if (b->rows <= 1 || b->stride <= 0) return b->rows;
    return d / b->stride + 1;
}

bool sim_access_race(const sim_access *a, const sim_access *b, int64_t *lo, int64_t *hi) {
    if (a->mem != b->mem || !(a->write || b->write) || a->len <= 0 || b->len <= 0) return false;
    if (a->rows > b->rows) {
        const sim_access *t = a;
        a = b;
        b = t;
    }
    for (int64_t r = 0; r < a->rows; r++) {
        int64_t x = a->base + r * a->stride, e = x + a->len;
        int64_t s = first_row_after(b, x);
        if (s >= b->rows) continue;
        int64_t y = b->base + s * b->stride, f = y + b->len;
        if (y >= e) continue;
        *lo = x > y ? x : y;
        *hi = (e < f ? e : f) - 1;
        return true;
    }
    return false;
}

static const char *mem_label(int mem) {
    switch (mem) {
    case ENPU_MEM_MAIN: return "main DTCM";
    case ENPU_MEM_SKIP: return "skip DTCM";
    case ENPU_MEM_WEIGHT: return "weight memory";
    case ENPU_MEM_DRAM: return "DRAM";
    }
    return "memory";
}

static const char *lname(const enpu_program *p, int i) {
    return p->layers && p->layers[i].name ? p->layers[i].name : "";
}

/* The party starting at t (instruction i, accesses a[na]) against one that is
 * in flight (instruction j since `t_j`, accesses b[nb]). */
static int race_pair(const enpu_program *p, uint64_t t, int i, const sim_access *a, int na, int j,
                     const sim_access *b, int nb, const char *since, uint64_t t_j, enpu_err *err) {
    for (int x = 0; x < na; x++)
        for (int y = 0; y < nb; y++) {
            int64_t lo, hi;
            if (!sim_access_race(&a[x], &b[y], &lo, &hi)) continue;
            return enpu_fail(err, ENPU_E_INVALID,
                             "program race: instruction %d (%s '%s') %s %s words %" PRId64 "..%" PRId64
                             " at cycle %" PRIu64 " while instruction %d (%s '%s', %s since cycle %" PRIu64
                             ") %s them; the dependency tokens must order the two",
                             i, enpu_opcode_mnemonic(p->instr[i].opcode), lname(p, i),
                             a[x].write ? "writes" : "reads", mem_label(a[x].mem), lo, hi, t, j,
                             enpu_opcode_mnemonic(p->instr[j].opcode), lname(p, j), since, t_j,
                             b[y].write ? "writes" : "reads");
        }
    return 0;
}

int sim_dma_race(const sim_dma *d, uint64_t t, int instr, const sim_access *acc, int n,
                 enpu_err *err) {
    for (int e = 0; e < d->E; e++) {
        const dma_eng *g = &d->eng[e];
        for (int k = 0; k < g->started; k++) {
            const dma_cmd *c = &g->q[(g->head + k) % d->Bq];
            int rc = race_pair(d->prog, t, instr, acc, n, c->instr, c->acc, 2, "in flight",
                               c->t_start, err);
            if (rc) return rc;
        }
    }
    return 0;
}

/* ---- engines -------------------------------------------------------------------------- */

int sim_dma_init(sim_dma *d, enpu_sim *sim, enpu_err *err) {
    memset(d, 0, sizeof *d);
    const enpu_arch *a = &sim->arch;
    const enpu_program *p = sim->prog;
    d->sim = sim;
    d->prog = p;
    d->E = (int)(a->dma_engines < 4 ? a->dma_engines : 4);
    d->Bq = (int)a->dma_queue_depth;
    d->wb = enpu_arch_word_bytes(a);
    d->pf = enpu_program_dram_instr_words(p) > 0;
    d->ring = (int)(a->itcm_bytes / ENPU_INSTR_BYTES);
    int rc = sim_dram_init(&d->ch, a, d->E, err);
    d->ch.log = &sim->dram_log; /* the roofline's bytes in time (span.h) */
    for (int e = 0; e < d->E && !rc; e++)
        if (!(d->eng[e].q = calloc((size_t)d->Bq, sizeof(dma_cmd))))
            rc = enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the DMA queues");
    if (!rc && d->pf) {
        d->itcm_ready = malloc((size_t)p->n_instr * sizeof(uint64_t));
        d->fetch_end = malloc((size_t)p->n_instr * sizeof(uint64_t));
        if (!d->itcm_ready || !d->fetch_end)
            rc = enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the instruction prefetcher");
    }
    if (rc) sim_dma_free(d);
    return rc;
}

void sim_dma_free(sim_dma *d) {
    for (int e = 0; e < 4; e++) free(d->eng[e].q);
    free(d->itcm_ready);
    free(d->fetch_end);
    sim_dram_free(&d->ch);
    memset(d, 0, sizeof *d);
}

void sim_dma_reset(sim_dma *d) {
    for (int e = 0; e < d->E; e++) {
        d->eng[e].head = d->eng[e].count = d->eng[e].started = 0;
        d->eng[e].granted_at = SIM_NEVER;
    }
    memset(&d->tok, 0, sizeof d->tok);
    sim_dram_reset(&d->ch);
    d->pf_next = 0;
    d->pf_pos = 0;
    d->pf_granted_at = SIM_NEVER;
    if (d->pf)
        for (int i = 0; i < d->prog->n_instr; i++) d->itcm_ready[i] = d->fetch_end[i] = SIM_NEVER;
    d->run_port = -1;
}

void sim_dma_enqueue(sim_dma *d, int instr, uint64_t t_in) {
    const enpu_instr *in = &d->prog->instr[instr];
    dma_eng *g = &d->eng[in->dma_engine];
    ENPU_ASSERT(g->count < d->Bq);
    dma_cmd *c = &g->q[(g->head + g->count) % d->Bq];
    memset(c, 0, sizeof *c);
    c->instr = instr;
    c->t_in = t_in;
    c->t_start = c->done_at = SIM_NEVER;
    sim_dma_accesses(in, c->acc);
    g->count++;
}

bool sim_dma_idle(const sim_dma *d) {
    for (int e = 0; e < d->E; e++)
        if (d->eng[e].count) return false;
    return true;
}

static dma_cmd *last_started(const sim_dma *d, int e) {
    const dma_eng *g = &d->eng[e];
    return g->started ? &g->q[(g->head + g->started - 1) % d->Bq] : NULL;
}

/* Engine e requests a burst: its newest command in flight has bursts left. */
static bool eng_requests(const sim_dma *d, int e) {
    const dma_cmd *c = last_started(d, e);
    return c && !c->granted;
}

static bool pf_requests(const sim_dma *d, uint64_t t) {
    if (!d->pf || d->pf_next >= d->prog->n_instr) return false;
    int j = d->pf_next - d->ring;
    return j < 0 || d->fetch_end[j] <= t;
}

static void set_row(sim_dma *d, dma_cmd *c) {
    const enpu_instr *in = &d->prog->instr[c->instr];
    c->pos = (in->dram_addr + c->row * in->dram_stride) * d->wb;
    c->row_end = c->pos + in->dma_len * d->wb;
}

int sim_dma_complete(sim_dma *d, uint64_t t, enpu_err *err) {
    for (int e = 0; e < d->E; e++) {
        dma_eng *g = &d->eng[e];
        if (!g->started) continue;
        dma_cmd *c = &g->q[g->head];
        if (c->done_at != t) continue;
        const enpu_instr *in = &d->prog->instr[c->instr];
        enpu_sim *sim = d->sim;
        sim_dma_copy(&sim->mem, in, t);
        sim_tok_push(&d->tok, in->push, 1 + e);
        int instr = c->instr;
        g->head = (g->head + 1) % d->Bq;
        g->count--;
        g->started--;
        d->progress = true;
        sim->cycle = t;
        int rc = sim_dma_done(sim, instr, err);
        if (rc) return rc;
    }
    return 0;
}

int sim_dma_start(sim_dma *d, uint64_t t, const sim_access *chain, int n_chain, int chain_instr,
                  uint64_t chain_t0, enpu_err *err) {
    for (int e = 0; e < d->E; e++) {
        dma_eng *g = &d->eng[e];
        if (g->count <= g->started) continue;
        dma_cmd *c = &g->q[(g->head + g->started) % d->Bq];
        if (c->t_in > t) continue;
        const dma_cmd *prev = last_started(d, e);
        if (prev && (!prev->granted || prev->last_grant >= t)) continue;
        const enpu_instr *in = &d->prog->instr[c->instr];
        if (!sim_tok_ready(&d->tok, in->pop, 1 + e)) continue;
        int rc = sim_dma_race(d, t, c->instr, c->acc, 2, err);
        if (!rc && n_chain)
            rc = race_pair(d->prog, t, c->instr, c->acc, 2, chain_instr, chain, n_chain, "executing",
                           chain_t0, err);
        if (rc) return rc;
        sim_tok_take(&d->tok, in->pop, 1 + e);
        c->t_start = t;
        c->row = 0;
        set_row(d, c);
        g->started++;
        d->progress = true;
    }
    return 0;
}

static void channel_span(sim_dma *d, int port, int instr, uint64_t t, uint64_t s) {
    if (!d->trace) return;
    if (d->run_port == port && d->run_instr == instr && d->run_end == t) {
        d->run_end = t + s;
        return;
    }
    sim_dma_observe_end(d);
    d->run_port = port;
    d->run_instr = instr;
    d->run_start = t;
    d->run_end = t + s;
}

void sim_dma_grant(sim_dma *d, uint64_t t) {
    bool pf = pf_requests(d, t);
    uint32_t mask = 0;
    for (int e = 0; e < d->E; e++)
        if (eng_requests(d, e)) mask |= 1u << (1 + e);
    int port = sim_dram_pick(&d->ch, t, pf, mask);
    if (port < 0) return;
    enpu_sim *sim = d->sim;
    d->progress = true;
    if (port == 0) {
        int i = d->pf_next;
        int64_t x = (int64_t)i * ENPU_INSTR_BYTES + d->pf_pos, end = (int64_t)(i + 1) * ENPU_INSTR_BYTES;
        int64_t b = sim_dram_burst(&d->ch, x, end);
        uint64_t s = sim_dram_grant(&d->ch, 0, x, b, t, NULL);
        channel_span(d, 0, i, t, s);
        d->pf_granted_at = t;
        d->pf_pos += b;
        if (x + b == end) {
            d->itcm_ready[i] = t + s + (uint64_t)d->ch.latency;
            uint64_t words = (uint64_t)((ENPU_INSTR_BYTES + d->wb - 1) / d->wb);
            sim->rows[i].reads[ENPU_MEM_OFFCHIP] += words;
            sim->rows[i].writes[ENPU_MEM_ITCM] += words;
            d->pf_next++;
            d->pf_pos = 0;
        }
        return;
    }
    int e = port - 1;
    dma_cmd *c = last_started(d, e);
    const enpu_instr *in = &d->prog->instr[c->instr];
    int64_t b = sim_dram_burst(&d->ch, c->pos, c->row_end);
    uint64_t s = sim_dram_grant(&d->ch, port, c->pos, b, t, NULL);
    channel_span(d, port, c->instr, t, s);
    d->eng[e].granted_at = t;
    c->last_grant = t;
    c->pos += b;
    if (c->pos < c->row_end) return;
    if (++c->row < in->dma_rows) {
        set_row(d, c);
        return;
    }
    c->granted = true;
    c->done_at = t + s + (uint64_t)d->ch.latency;
    if (d->trace)
        sim_obs_span(sim->obs, SIM_DMA_TRK_ENG0 + e, in->dma_dir == ENPU_DMA_LOAD ? "load" : "store",
                     c->t_start, t + 1, "layer", sim->rows[c->instr].name);
}

static uint64_t min64u(uint64_t a, uint64_t b) { return a < b ? a : b; }

uint64_t sim_dma_wake(const sim_dma *d, uint64_t t) {
    uint64_t w = SIM_NEVER;
    bool req = pf_requests(d, t);
    if (d->pf && !req && d->pf_next < d->prog->n_instr) {
        uint64_t f = d->fetch_end[d->pf_next - d->ring];
        if (f != SIM_NEVER) w = min64u(w, f);
    }
    for (int e = 0; e < d->E; e++) {
        const dma_eng *g = &d->eng[e];
        req = req || eng_requests(d, e);
        if (g->started && g->q[g->head].granted) w = min64u(w, g->q[g->head].done_at);
        if (g->count > g->started) {
            const dma_cmd *c = &g->q[(g->head + g->started) % d->Bq];
            const dma_cmd *prev = last_started(d, e);
            if (c->t_in > t) w = min64u(w, c->t_in);
            else if (prev && prev->granted && prev->last_grant >= t) w = min64u(w, t + 1);
        }
    }
    if (req) w = min64u(w, d->ch.free_at > t ? d->ch.free_at : t + 1);
    return w;
}

/* ---- observation ------------------------------------------------------------------------ */

void sim_dma_observe_start(sim_dma *d) {
    sim_obs *o = d->sim->obs;
    d->trace = o && o->trace;
    d->run_port = -1;
    if (!d->trace) return;
    sim_obs_track(o, SIM_DMA_TRK_DRAM, "DRAM channel");
    static const char *const names[] = {"DMA engine 0", "DMA engine 1", "DMA engine 2", "DMA engine 3"};
    for (int e = 0; e < d->E; e++) sim_obs_track(o, SIM_DMA_TRK_ENG0 + e, names[e]);
}

void sim_dma_observe_end(sim_dma *d) {
    if (!d->trace || d->run_port < 0) return;
    static const char *const names[] = {"instruction fetch", "DMA 0", "DMA 1", "DMA 2", "DMA 3"};
    enpu_sim *sim = d->sim;
    sim_obs_span(sim->obs, SIM_DMA_TRK_DRAM, names[d->run_port], d->run_start, d->run_end, "layer",
                 sim->rows[d->run_instr].name);
    d->run_port = -1;
}

int sim_dma_signals(const sim_dma *d, uint64_t t, int64_t *out) {
    int n = 0;
    for (int e = 0; e < d->E; e++) {
        const dma_eng *g = &d->eng[e];
        out[n++] = g->count > 0;
        out[n++] = g->granted_at == t || eng_requests(d, e);
        out[n++] = g->granted_at == t;
    }
    out[n++] = t < d->ch.free_at;
    if (d->pf) {
        out[n++] = d->pf_granted_at == t || pf_requests(d, t);
        out[n++] = d->pf_granted_at == t;
    }
    return n;
}
