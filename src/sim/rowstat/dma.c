/* The row-stationary engine's DMA engine (docs/rowstat.md "The
 * controller"): one in-order queue of the layer's commands, each moving
 * runs of bytes between DRAM and the global buffer in bursts on the DRAM
 * channel every engine shares (sim/dram.h).  A command starts when the pass
 * it waits for is done and the previous command's last burst was granted;
 * its bursts are granted back to back as the channel frees; it completes
 * dram_latency cycles after its last burst's service, when its data is in
 * place (the copy is made then, as nothing reads either side earlier). */
#include <stdlib.h>
#include <string.h>

#include "sim/rowstat/rs_sim.h"

int rs_dma_init(rs_dma *d, const enpu_arch *a, enpu_err *err) {
    memset(d, 0, sizeof *d);
    return sim_dram_init(&d->dram, a, 1, err);
}

void rs_dma_free(rs_dma *d) {
    sim_dram_free(&d->dram);
    free(d->runs);
    memset(d, 0, sizeof *d);
}

void rs_dma_start(rs_dma *d, const enpu_rs_cmd *cmd, int64_t ncmd, int64_t t, int64_t *done_at) {
    d->cmd = cmd;
    d->ncmd = ncmd;
    d->ci = 0;
    d->issuing = false;
    d->chan = t;
    d->done_at = done_at;
    d->bursts = 0;
    for (int64_t i = 0; i < ncmd; i++) done_at[i] = -1;
}

typedef struct run_buf {
    rs_dma *d;
    bool oom;
} run_buf;

static void keep_run(void *ctx, const enpu_rs_run *r) {
    run_buf *b = ctx;
    rs_dma *d = b->d;
    if (d->nruns == d->run_cap) {
        int64_t cap = d->run_cap ? d->run_cap * 2 : 64;
        enpu_rs_run *nr = realloc(d->runs, (size_t)cap * sizeof *nr);
        if (!nr) {
            b->oom = true;
            return;
        }
        d->runs = nr, d->run_cap = cap;
    }
    d->runs[d->nruns++] = *r;
}

/* The command's data moves (at its completion time t). */
static void copy_data(rs_dma *d, rs_eng *e, const enpu_rs_cmd *c, int64_t t) {
    sim_mem *m = &e->sim->mem;
    int64_t wb = m->wb;
    for (int64_t i = 0; i < d->nruns; i++) {
        const enpu_rs_run *r = &d->runs[i];
        if (c->kind == ENPU_RS_STORE) {
            memcpy(m->dram + r->dram, e->glb + r->glb, (size_t)r->bytes);
            if (m->dram_wc)
                for (int64_t w = r->dram / wb; w < (r->dram + r->bytes + wb - 1) / wb; w++)
                    m->dram_wc[w] = (uint64_t)t + 1;
            e->st.reads[ENPU_MEM_GLB] += (uint64_t)r->bytes;
        } else {
            memcpy(e->glb + r->glb, m->dram + r->dram, (size_t)r->bytes);
            e->st.writes[ENPU_MEM_GLB] += (uint64_t)r->bytes;
        }
    }
    if (c->kind == ENPU_RS_STORE) e->st.writes[ENPU_MEM_OFFCHIP] += (uint64_t)d->words;
    else e->st.reads[ENPU_MEM_OFFCHIP] += (uint64_t)d->words;
}

/* The pass a command waits for is done by cycle t. */
static bool dep_done(const rs_eng *e, const enpu_rs_cmd *c, int64_t t) {
    return c->dep < 0 || e->pass_done[c->dep] <= t;
}

int rs_dma_step(rs_dma *d, rs_eng *e, int64_t t, enpu_err *err) {
    for (;;) {
        if (!d->issuing) {
            if (d->ci == d->ncmd) return 0;
            const enpu_rs_cmd *c = &d->cmd[d->ci];
            if (t < d->chan || !dep_done(e, c, t)) return 0;
            d->nruns = d->ri = d->off = d->words = 0;
            run_buf b = {d, false};
            enpu_rs_cmd_runs(&e->g, e->in, c, keep_run, &b);
            if (b.oom) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for DMA runs");
            for (int64_t i = 0; i < d->nruns; i++) {
                const enpu_rs_run *r = &d->runs[i];
                d->words += (r->dram + r->bytes + e->g.wb - 1) / e->g.wb - r->dram / e->g.wb;
                if (r->dram < 0 || r->dram + r->bytes > e->sim->mem.dram_words * e->g.wb ||
                    r->glb < 0 || r->glb + r->bytes > e->a->rs_glb_bytes)
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "instruction %d: a DMA run [%lld, +%lld) leaves the DRAM or the "
                                     "global buffer", e->instr, (long long)r->dram, (long long)r->bytes);
            }
            if (d->nruns == 0) { /* nothing to move: done as it starts */
                d->done_at[d->ci++] = t;
                d->chan = t;
                continue;
            }
            d->issuing = true;
        }
        if (t < (int64_t)d->dram.free_at) return 0;
        const enpu_rs_run *r = &d->runs[d->ri];
        int64_t x = r->dram + d->off, b = sim_dram_burst(&d->dram, x, r->dram + r->bytes);
        uint64_t s = sim_dram_grant(&d->dram, 1, x, b, (uint64_t)t, NULL);
        if (e->fault.kind == RS_FAULT_DRAM_LATE && e->fault.instr == e->instr && e->fault.burst == d->bursts)
            d->dram.free_at++, s++; /* a planted fault (white-box tests) */
        d->bursts++;
        d->chan = t + (int64_t)s;
        d->off += b;
        if (d->off == r->bytes) d->ri++, d->off = 0;
        if (d->ri == d->nruns) {
            int64_t done = t + (int64_t)s + d->dram.latency;
            copy_data(d, e, &d->cmd[d->ci], done);
            d->done_at[d->ci++] = done;
            d->issuing = false;
        }
        return 0;
    }
}

int64_t rs_dma_next(const rs_dma *d, const rs_eng *e, int64_t t) {
    int64_t next = INT64_MAX;
    for (int64_t i = 0; i < d->ncmd; i++)
        if (d->done_at[i] > t && d->done_at[i] < next) next = d->done_at[i];
    if (d->issuing) {
        int64_t f = (int64_t)d->dram.free_at;
        return f > t ? (f < next ? f : next) : t + 1;
    }
    if (d->ci < d->ncmd) {
        const enpu_rs_cmd *c = &d->cmd[d->ci];
        int64_t dep = c->dep < 0 ? INT64_MIN : e->pass_done[c->dep];
        if (dep != INT64_MAX) {
            int64_t s = d->chan > dep ? d->chan : dep;
            if (s <= t) s = t + 1;
            if (s < next) next = s;
        }
    }
    return next;
}
