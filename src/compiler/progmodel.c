/* The schedule model: the cycles of a whole program -- chains, host syncs,
 * DMA transfers, the DRAM channel, the instruction fetch -- by the rules of
 * docs/microarch.md §11.2 and §13, which the simulator implements cycle by
 * cycle.  A chain's own cycles come from the event model of cost.c (a chain's
 * timing does not depend on the DMA traffic beside it, §13.1); this file
 * places the chains, syncs and transfers in time and attributes every cycle
 * of the run to one instruction and one activity (§13.7).
 *
 * It is a discrete-event replay: the state changes only at known times (a
 * fetch or decode ends, a chain or command completes, the DRAM channel frees,
 * a burst's data arrives), so after a cycle in which nothing changed it jumps
 * to the next such time and attributes the cycles in between at once.  Each
 * visited cycle runs the steps of §13.6 in order on the state at its start. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

#define NONE INT64_MAX

typedef struct burst_cur {
    int64_t row, off;      /* next burst: row, byte offset inside the row */
} burst_cur;

typedef struct mcmd {
    int instr;
    int64_t done;          /* completion cycle, NONE until the last burst is granted */
} mcmd;

typedef struct engine {
    int *q;                /* dispatched commands not started (instruction indices), FIFO */
    int qh, qn;
    int occ;               /* commands from their first decode cycle to completion */
    int active;            /* issuing command, -1 */
    burst_cur bc;
    int64_t granted_all;   /* cycle the previous command's last burst was granted (-1) */
    int64_t last_done;     /* completion of the active command's bursts so far */
} engine;

typedef struct model {
    const enpu_program *p;
    const enpu_arch *a;
    int n, E;
    int64_t F, Dc, wb, B, bpc_eff, Lm, Rb, Nb, Mr, Bq, R;
    /* chains: duration and activities per instruction (head: the chain's) */
    int64_t *dur;          /* per head */
    int64_t *cact;         /* per instruction x ACT */
    /* fetch and decode */
    int next_fetch;        /* next instruction to fetch */
    int64_t fetch_end;     /* the buffer is full from this cycle (NONE: not fetching) */
    int buf;               /* instruction in the buffer (-1) */
    int dec;               /* instruction being decoded (-1) */
    int64_t dec_end;
    bool collecting;       /* the last decoded instruction has fuse_next */
    int64_t *fetched_at;   /* per instruction: end of its fetch out of the ITCM */
    /* prefetcher (programs longer than the ITCM) */
    bool stream;
    int pf_next;           /* next instruction to request */
    burst_cur pf_bc;
    int64_t *present;      /* per instruction: in the ITCM from (NONE: not yet) */
    /* datapath */
    int held;              /* decoded head / sync / end waiting to start (-1) */
    int run;               /* executing chain head or sync (-1) */
    int64_t run_end;       /* its completion cycle */
    int64_t dp_free;       /* datapath idle from (last completion) */
    bool ended;
    int64_t total;
    /* DMA and DRAM */
    engine *eng;
    mcmd *pend;            /* started commands with their completion, unordered */
    int npend, cappend;
    int64_t chan_free;
    int rr;                /* engine granted last */
    int64_t *open_row;     /* per bank, -1 */
    int64_t tok[ENPU_MAX_QUEUES][ENPU_MAX_QUEUES];
    /* results */
    int64_t *act;          /* n x ACT */
    int64_t *dram_rd, *dram_wr;
    bool changed;
} model;

#define ACTM(m, i, k) (m)->act[(size_t)(i) * ENPU_ACT_COUNT + (k)]

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static bool is_dma(const model *m, int i) { return m->p->instr[i].opcode == ENPU_OPC_DMA; }

/* ---- DRAM bursts (§13.4) ------------------------------------------------- */

/* The next burst of a transfer of `rows` rows starting at DRAM words
 * base + r*stride, len words each: its byte address and size; advances the
 * cursor.  false when none is left. */
static bool next_burst(const model *m, burst_cur *c, int64_t rows, int64_t base, int64_t stride,
                       int64_t len, int64_t *addr, int64_t *bytes) {
    if (c->row >= rows) return false;
    int64_t start = (base + c->row * stride) * m->wb, end = start + len * m->wb;
    int64_t x = start + c->off;
    int64_t lim = (x / m->B + 1) * m->B;
    if (lim > end) lim = end;
    *addr = x, *bytes = lim - x;
    c->off += lim - x;
    if (start + c->off >= end) c->row++, c->off = 0;
    return true;
}

/* Grants a burst at cycle t: its service time updates the channel; returns
 * the cycle its data is in place. */
static int64_t grant(model *m, int64_t t, int64_t addr, int64_t bytes) {
    int64_t bank = (addr / m->Rb) % m->Nb, row = addr / (m->Rb * m->Nb);
    int64_t s = cdiv(bytes, m->bpc_eff);
    if (m->open_row[bank] != row) s += m->Mr, m->open_row[bank] = row;
    m->chan_free = t + s;
    return t + s + m->Lm;
}

/* ---- tokens ------------------------------------------------------------------ */

static bool tokens_ready(const model *m, int i) {
    const enpu_instr *in = &m->p->instr[i];
    int q = enpu_instr_queue(in);
    for (int s = 0; s < ENPU_MAX_QUEUES; s++)
        if (((in->pop >> s) & 1) && m->tok[s][q] <= 0) return false;
    return true;
}

static void take_tokens(model *m, int i) {
    const enpu_instr *in = &m->p->instr[i];
    int q = enpu_instr_queue(in);
    for (int s = 0; s < ENPU_MAX_QUEUES; s++)
        if ((in->pop >> s) & 1) m->tok[s][q]--;
}

static void push_tokens(model *m, int i) {
    const enpu_instr *in = &m->p->instr[i];
    int q = enpu_instr_queue(in);
    for (int d = 0; d < ENPU_MAX_QUEUES; d++)
        if ((in->push >> d) & 1) m->tok[q][d]++;
}

/* ---- one cycle (§13.6) --------------------------------------------------------- */

static void completions(model *m, int64_t t) {
    for (int k = 0; k < m->npend;) {
        if (m->pend[k].done > t) {
            k++;
            continue;
        }
        int i = m->pend[k].instr;
        push_tokens(m, i);
        m->eng[m->p->instr[i].dma_engine].occ--;
        m->pend[k] = m->pend[--m->npend];
        m->changed = true;
    }
    if (m->run >= 0 && m->run_end <= t) {
        push_tokens(m, m->run);
        m->run = -1;
        m->dp_free = t;
        m->changed = true;
    }
}

/* Can the decoder take instruction i at cycle t? */
static bool can_decode(const model *m, int i, int64_t t) {
    if (is_dma(m, i)) return m->eng[m->p->instr[i].dma_engine].occ < m->Bq;
    if (m->collecting) return true;
    return m->held < 0 && m->run < 0 && m->dp_free <= t;
}

/* A decode that ended: the instruction goes to its engine's queue, or is
 * held for the datapath (a chain's head once its last stage is decoded). */
static void dispatch(model *m, int64_t t) {
    const enpu_program *p = m->p;
    if (m->dec >= 0 && m->dec_end <= t) {
        int i = m->dec;
        m->dec = -1;
        m->changed = true;
        if (is_dma(m, i)) {
            engine *e = &m->eng[p->instr[i].dma_engine];
            e->q[(e->qh + e->qn++) % m->n] = i;
        } else {
            m->collecting = p->instr[i].fuse_next != 0;
            if (!m->collecting) {
                /* the chain's head (or a sync / end) waits for its start */
                int h = i;
                while (h > 0 && p->instr[h - 1].fuse_next) h--;
                m->held = h;
            }
        }
    }
}

static void fetch_decode(model *m, int64_t t) {
    const enpu_program *p = m->p;
    /* the decoder takes the buffered instruction */
    if (m->dec < 0 && m->buf >= 0 && m->fetch_end <= t && can_decode(m, m->buf, t)) {
        int i = m->buf;
        m->buf = -1;
        m->fetch_end = NONE;
        m->dec = i;
        m->dec_end = t + m->Dc;
        if (is_dma(m, i)) m->eng[p->instr[i].dma_engine].occ++;
        m->changed = true;
        if (m->Dc == 0) {
            /* zero-cycle decode: dispatched now */
            dispatch(m, t);
            fetch_decode(m, t);
            return;
        }
    }
    /* the fetch unit: the buffer is free (not holding, not being filled) */
    if (m->buf < 0 && m->next_fetch < m->n && m->present[m->next_fetch] <= t) {
        int i = m->next_fetch++;
        m->buf = i;
        m->fetch_end = t + m->F;
        m->fetched_at[i] = m->fetch_end;
        m->changed = true;
    }
}

static void engines_start(model *m, int64_t t) {
    const enpu_program *p = m->p;
    for (int e = 0; e < m->E; e++) {
        engine *en = &m->eng[e];
        if (en->qn == 0) continue;
        if (en->active >= 0 || en->granted_all >= t) continue;
        int i = en->q[en->qh];
        if (!tokens_ready(m, i)) continue;
        take_tokens(m, i);
        en->qh = (en->qh + 1) % m->n, en->qn--;
        en->active = i;
        en->bc = (burst_cur){0, 0};
        (void)p;
        m->changed = true;
    }
}

static void channel(model *m, int64_t t) {
    const enpu_program *p = m->p;
    if (m->chan_free > t) return;
    /* the prefetcher first */
    if (m->stream && m->pf_next < m->n &&
        (m->pf_next < m->R || m->fetched_at[m->pf_next - m->R] <= t)) {
        int64_t addr, bytes;
        int64_t base = (int64_t)m->pf_next * ENPU_INSTR_BYTES;
        int64_t x = base + m->pf_bc.off;
        int64_t lim = (x / m->B + 1) * m->B;
        if (lim > base + ENPU_INSTR_BYTES) lim = base + ENPU_INSTR_BYTES;
        addr = x, bytes = lim - x;
        int64_t done = grant(m, t, addr, bytes);
        m->pf_bc.off += bytes;
        if (m->pf_bc.off >= ENPU_INSTR_BYTES) {
            m->present[m->pf_next] = done;
            m->pf_next++;
            m->pf_bc.off = 0;
        }
        m->changed = true;
        return;
    }
    for (int k = 1; k <= m->E; k++) {
        int e = (m->rr + k) % m->E;
        engine *en = &m->eng[e];
        if (en->active < 0) continue;
        const enpu_instr *in = &p->instr[en->active];
        int64_t addr, bytes;
        if (!next_burst(m, &en->bc, in->dma_rows, in->dram_addr, in->dram_stride, in->dma_len, &addr,
                        &bytes))
            continue;
        int64_t done = grant(m, t, addr, bytes);
        m->rr = e;
        en->last_done = done;
        if (en->bc.row >= in->dma_rows) {
            /* last burst: the command's completion is known */
            if (m->npend == m->cappend) {
                int cap = m->cappend ? 2 * m->cappend : 16;
                mcmd *np = realloc(m->pend, (size_t)cap * sizeof *np);
                ENPU_ASSERT(np);
                m->pend = np, m->cappend = cap;
            }
            m->pend[m->npend++] = (mcmd){en->active, done};
            en->active = -1;
            en->granted_all = t;
        }
        m->changed = true;
        return;
    }
}

static bool engines_idle(const model *m) {
    for (int e = 0; e < m->E; e++)
        if (m->eng[e].occ > 0) return false;
    return true;
}

/* Starts the held instruction if it can.  ctrl_only: right after step (1),
 * where only a sync or end may start (§13.10: their start reads only what
 * step (1) changes); a chain starts in step (5). */
static void datapath(model *m, int64_t t, bool ctrl_only) {
    const enpu_program *p = m->p;
    if (m->held < 0 || m->run >= 0) return;
    int h = m->held;
    int64_t op = p->instr[h].opcode;
    if (ctrl_only && op != ENPU_OPC_SYNC && op != ENPU_OPC_END) return;
    if (!tokens_ready(m, h)) return;
    if (op == ENPU_OPC_END && !engines_idle(m)) return;
    take_tokens(m, h);
    m->held = -1;
    m->changed = true;
    if (op == ENPU_OPC_END) {
        m->ended = true;
        m->total = t;
        return;
    }
    m->run = h;
    if (op == ENPU_OPC_SYNC) {
        /* the handover, then the host op itself on the host CPU (§13.11) */
        int64_t hh = enpu_sync_host_cycles(p, h);
        m->run_end = t + p->arch.host_sync_cycles + hh;
        ACTM(m, h, ENPU_ACT_CONTROLLER) += p->arch.host_sync_cycles;
        ACTM(m, h, ENPU_ACT_HOST) += hh;
        if (p->arch.host_sync_cycles + hh == 0) {
            /* completes in the cycle it starts: its tokens are pushed and the
             * decoder may take the next instruction in this cycle */
            push_tokens(m, h);
            m->run = -1;
            m->dp_free = t;
        }
    } else {
        m->run_end = t + m->dur[h];
        int k = 0;
        do {
            for (int a = 0; a < ENPU_ACT_COUNT; a++)
                ACTM(m, h + k, a) += m->cact[(size_t)(h + k) * ENPU_ACT_COUNT + a];
        } while (p->instr[h + k++].fuse_next);
    }
}

/* The row and activity of an idle-datapath cycle (§13.7 rules 2-5), or -1
 * when a chain or sync accounts for it. */
static int attribute(const model *m, int64_t t, int *actv) {
    if (m->run >= 0) return -1;
    if (m->held >= 0) {
        *actv = ENPU_ACT_DMA_WAIT;
        return m->held;
    }
    if (m->dec >= 0) {
        *actv = ENPU_ACT_CONTROLLER;
        return m->dec;
    }
    if (m->buf >= 0) {
        /* being fetched, or fetched: a dma waiting for room in its queue */
        bool full = is_dma(m, m->buf) && m->fetch_end <= t &&
                    m->eng[m->p->instr[m->buf].dma_engine].occ >= m->Bq;
        *actv = full ? ENPU_ACT_DMA_WAIT : ENPU_ACT_CONTROLLER;
        return m->buf;
    }
    *actv = ENPU_ACT_CONTROLLER;
    return m->next_fetch < m->n ? m->next_fetch : m->n - 1;
}

/* The next cycle after t at which anything can change. */
static int64_t next_event(const model *m, int64_t t) {
    int64_t nx = NONE;
    if (m->fetch_end != NONE && m->fetch_end > t) nx = min64(nx, m->fetch_end);
    if (m->dec >= 0 && m->dec_end > t) nx = min64(nx, m->dec_end);
    if (m->run >= 0) nx = min64(nx, m->run_end);
    for (int k = 0; k < m->npend; k++) nx = min64(nx, m->pend[k].done);
    bool want = false;
    for (int e = 0; e < m->E; e++) want |= m->eng[e].active >= 0;
    if (m->stream && m->pf_next < m->n) {
        want = true;
        if (m->pf_next >= m->R && m->fetched_at[m->pf_next - m->R] != NONE &&
            m->fetched_at[m->pf_next - m->R] > t)
            nx = min64(nx, m->fetched_at[m->pf_next - m->R]);
    }
    if (want && m->chan_free > t) nx = min64(nx, m->chan_free);
    if (m->next_fetch < m->n && m->present[m->next_fetch] != NONE && m->present[m->next_fetch] > t)
        nx = min64(nx, m->present[m->next_fetch]);
    for (int e = 0; e < m->E; e++)
        if (m->eng[e].granted_all >= t) nx = min64(nx, m->eng[e].granted_all + 1);
    return nx == NONE ? t + 1 : nx;
}

static void model_free(model *m) {
    if (m->eng)
        for (int e = 0; e < m->E; e++) free(m->eng[e].q);
    free(m->eng), free(m->pend), free(m->open_row), free(m->dur), free(m->cact);
    free(m->fetched_at), free(m->present);
}

/* The row-stationary engine's programs have their own model. */
static int64_t rowstat_model(const enpu_program *p, int64_t *act, int64_t *dram_rd, int64_t *dram_wr) {
    size_t n = (size_t)p->n_instr;
    int64_t *rd = calloc(n * ENPU_MEM_COUNT + 1, sizeof *rd), *wr = calloc(n * ENPU_MEM_COUNT + 1, sizeof *wr);
    ENPU_ASSERT(rd && wr);
    int64_t t = enpu_rs_model_program(p, act, rd, wr);
    for (size_t i = 0; i < n; i++) {
        if (dram_rd) dram_rd[i] = rd[i * ENPU_MEM_COUNT + ENPU_MEM_OFFCHIP];
        if (dram_wr) dram_wr[i] = wr[i * ENPU_MEM_COUNT + ENPU_MEM_OFFCHIP];
    }
    free(rd), free(wr);
    return t;
}

int64_t enpu_model_program(const enpu_program *p, int64_t *act, int64_t *dram_rd, int64_t *dram_wr) {
    return enpu_model_program_cached(p, NULL, act, dram_rd, dram_wr);
}

int64_t enpu_model_program_cached(const enpu_program *p, enpu_compile_cache *cache, int64_t *act,
                                  int64_t *dram_rd, int64_t *dram_wr) {
    if (p->arch.engine == ENPU_ENGINE_ROWSTAT) return rowstat_model(p, act, dram_rd, dram_wr);
    if (p->arch.engine == ENPU_ENGINE_SYSTOLIC) {
        /* no DRAM: every map and weight is on chip */
        size_t n = (size_t)p->n_instr;
        if (dram_rd) memset(dram_rd, 0, n * sizeof *dram_rd);
        if (dram_wr) memset(dram_wr, 0, n * sizeof *dram_wr);
        int64_t *a = act ? act : calloc(n * ENPU_ACT_COUNT + 1, sizeof *a);
        int64_t t = a ? enpu_sya_model_program(p, a, NULL, NULL, NULL) : -1;
        if (!act) free(a);
        return t;
    }
    model m;
    memset(&m, 0, sizeof m);
    m.p = p, m.a = &p->arch, m.n = p->n_instr;
    const enpu_arch *a = m.a;
    m.E = (int)a->dma_engines;
    m.F = a->instr_fetch_cycles, m.Dc = a->decode_cycles, m.wb = enpu_arch_word_bytes(a);
    m.B = a->dram_burst_bytes, m.Lm = a->dram_latency, m.Rb = a->dram_row_bytes;
    m.Nb = a->dram_banks, m.Mr = a->dram_row_miss_cycles, m.Bq = a->dma_queue_depth;
    m.bpc_eff = min64(a->dram_bytes_per_cycle, m.wb);
    m.R = a->itcm_bytes / ENPU_INSTR_BYTES;
    m.stream = enpu_program_dram_instr_words(p) > 0;
    int n = m.n;
    m.act = act;
    m.dram_rd = dram_rd, m.dram_wr = dram_wr;
    memset(act, 0, (size_t)n * ENPU_ACT_COUNT * sizeof *act);
    memset(dram_rd, 0, (size_t)n * sizeof *dram_rd);
    memset(dram_wr, 0, (size_t)n * sizeof *dram_wr);
    m.dur = calloc((size_t)n, sizeof *m.dur);
    m.cact = calloc((size_t)n * ENPU_ACT_COUNT, sizeof *m.cact);
    m.fetched_at = malloc((size_t)n * sizeof *m.fetched_at);
    m.present = malloc((size_t)n * sizeof *m.present);
    m.eng = calloc((size_t)m.E, sizeof *m.eng);
    m.open_row = malloc((size_t)m.Nb * sizeof *m.open_row);
    ENPU_ASSERT(m.dur && m.cact && m.fetched_at && m.present && m.eng && m.open_row);
    for (int64_t b = 0; b < m.Nb; b++) m.open_row[b] = -1;
    for (int e = 0; e < m.E; e++) {
        m.eng[e].q = malloc((size_t)n * sizeof *m.eng[e].q);
        ENPU_ASSERT(m.eng[e].q);
        m.eng[e].active = -1;
        m.eng[e].granted_all = -1;
    }
    for (int i = 0; i < n; i++) {
        m.fetched_at[i] = NONE;
        m.present[i] = m.stream ? NONE : 0;
    }
    /* chains: their own cycles (cost.c), per head */
    for (int i = 0; i < n;) {
        const enpu_instr *in = &p->instr[i];
        enpu_opclass k = enpu_opcode_class(in->opcode);
        if (k != ENPU_CLASS_CONV && k != ENPU_CLASS_CW && k != ENPU_CLASS_MOVE) {
            i++;
            continue;
        }
        int len = 1;
        while (i + len - 1 < n && p->instr[i + len - 1].fuse_next) len++;
        int64_t r = cc_cost_chain_cached(cache, a, &p->instr[i], len, &m.cact[(size_t)i * ENPU_ACT_COUNT]);
        m.dur[i] = r < 0 ? 0 : r;
        i += len;
    }
    /* DRAM traffic per instruction */
    for (int i = 0; i < n; i++) {
        const enpu_instr *in = &p->instr[i];
        if (in->opcode == ENPU_OPC_DMA) {
            int64_t w = in->dma_rows * in->dma_len;
            if (in->dma_dir == ENPU_DMA_LOAD) dram_rd[i] += w;
            else dram_wr[i] += w;
        }
        if (m.stream) dram_rd[i] += cdiv(ENPU_INSTR_BYTES, m.wb);
    }
    m.next_fetch = 0, m.fetch_end = NONE, m.buf = -1, m.dec = -1, m.held = -1, m.run = -1;
    m.rr = m.E - 1;
    m.dp_free = 0;
    int64_t t = 0;
    for (;;) {
        m.changed = false;
        completions(&m, t);
        dispatch(&m, t);
        datapath(&m, t, true);
        fetch_decode(&m, t);
        engines_start(&m, t);
        channel(&m, t);
        datapath(&m, t, false);
        if (m.ended) break;
        int64_t nx = m.changed ? t + 1 : next_event(&m, t);
        int av = 0;
        int row = attribute(&m, t, &av);
        if (row >= 0) ACTM(&m, row, av) += nx - t;
        ENPU_ASSERT(nx < ((int64_t)1 << 52)); /* a valid program cannot deadlock */
        t = nx;
    }
    int64_t total = m.total;
    model_free(&m);
    return total;
}
