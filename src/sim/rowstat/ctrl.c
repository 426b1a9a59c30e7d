/* The row-stationary engine's controller and cycle loop (docs/rowstat.md
 * "Timing"): it fetches and decodes each instruction, configures the array
 * for a layer, runs the layer's passes one after the other -- each pass's
 * node IDs and PE registers, its ifmap and filter streams, the PEs, the
 * output network -- while the DMA engine works through the layer's command
 * queue, and attributes every cycle to one activity of the instruction.
 * A pass is computed in one go when fastfwd.c can prove it runs without an
 * error (docs/rowstat.md "Fast-forward"); the controller then steps only the
 * DMA engine until the pass's end.  opts.per_cycle keeps every pass on
 * pass_cycle, the reference. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"
#include "sim/engine.h"
#include "sim/observe.h"
#include "sim/rowstat/rs_sim.h"

static void engine_free(void *st) {
    rs_eng *e = st;
    if (!e) return;
    if (e->pe)
        for (int64_t i = 0; i < e->a->rs_rows * e->a->rs_cols; i++) rs_pe_free(&e->pe[i]);
    free(e->pe);
    free(e->glb);
    free(e->shadow);
    rs_noc_free(&e->ifmap_net);
    rs_noc_free(&e->filter_net);
    rs_dma_free(&e->dma);
    rs_ff_free(&e->ff);
    free(e);
}

static int engine_create(enpu_sim *sim, void **out, enpu_err *err) {
    rs_eng *e = calloc(1, sizeof *e);
    if (!e) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    e->sim = sim;
    e->a = &sim->arch;
    const enpu_arch *a = e->a;
    int64_t n = a->rs_rows * a->rs_cols;
    e->pe = calloc((size_t)n, sizeof *e->pe);
    e->glb = calloc((size_t)a->rs_glb_bytes, 1);
    int rc = e->pe && e->glb ? 0 : enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the array");
    for (int64_t i = 0; i < n && !rc; i++) rc = rs_pe_alloc(&e->pe[i], a, err);
    if (!rc) rc = rs_noc_init(&e->ifmap_net, (int)a->rs_rows, (int)a->rs_cols, (int)a->rs_ifmap_net_values, err);
    if (!rc) rc = rs_noc_init(&e->filter_net, (int)a->rs_rows, (int)a->rs_cols, (int)a->rs_filter_net_values, err);
    if (!rc) rc = rs_dma_init(&e->dma, a, err);
    if (!rc) e->dma.dram.log = &sim->dram_log; /* bursts, for the roofline's per-layer bytes */
    if (!rc && sim->opts.check && sim->mem.dram_words > 0) {
        e->shadow = malloc((size_t)(sim->mem.dram_words * sim->mem.wb));
        if (!e->shadow) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory for the check's DRAM copy");
    }
    if (rc) {
        engine_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* ---- statistics ----------------------------------------------------------------------- */

static void account(enpu_sim *sim, int instr, enpu_activity a, int64_t start, int64_t n) {
    if (n <= 0) return;
    enpu_layer_stats *st = &sim->rows[instr];
    st->activity[a] += (uint64_t)n;
    st->cycles += (uint64_t)n;
    if (st->start_cycle == UINT64_MAX || (uint64_t)start < st->start_cycle) st->start_cycle = (uint64_t)start;
    if ((uint64_t)(start + n) > st->end_cycle) st->end_cycle = (uint64_t)(start + n);
    sim_own(sim, instr, (uint64_t)start, (uint64_t)n);
}

/* ---- a pass ------------------------------------------------------------------------------ */

static void deliver_ifmap(void *ctx, int row, int col, int32_t v, int64_t at) {
    rs_eng *e = ctx;
    rs_pe *pe = rs_pe_at(e, row, col);
    if (!rs_pe_push_ifmap(pe, v, at)) e->overflow = row * (int)e->a->rs_cols + col + 1;
    e->st.writes[ENPU_MEM_PE_FIFO]++;
}

static void deliver_filter(void *ctx, int row, int col, int32_t v, int64_t at) {
    (void)at;
    rs_eng *e = ctx;
    if (!rs_pe_push_filter(rs_pe_at(e, row, col), v)) e->overflow = row * (int)e->a->rs_cols + col + 1;
    e->st.writes[ENPU_MEM_FILTER_LB]++;
}

/* Loads pass k's node IDs and PE registers (the controller's configuration). */
static void pass_start(rs_eng *e, int64_t k, int64_t t) {
    const enpu_instr *in = e->in;
    const enpu_rs_geom *g = &e->g;
    enpu_rs_pass *ps = &e->ps;
    enpu_rs_pass_of(g, in, k, ps);
    e->k = k;
    e->active = true;
    e->t0 = t;
    e->chain = ps->ru * ps->nk;
    int64_t sum_p = 0;
    e->qpre[0] = 0;
    for (int64_t v = 0; v < ps->ru; v++) e->qv[v] = enpu_rs_set_channels(g, ps, v), e->qpre[v + 1] = e->qpre[v] + e->qv[v];
    for (int64_t h = 0; h < ps->tu; h++) e->ph[h] = enpu_rs_set_filters(g, ps, h), sum_p += e->ph[h];
    /* the strip's ifmap rows the PEs take: k = j*sh + i */
    const int64_t kmax = (ps->ne - 1) * in->stride_h + ps->nk;
    for (int64_t kk = 0; kk < kmax; kk++) e->kidx[kk] = -1;
    for (int64_t j = 0; j < ps->ne; j++)
        for (int64_t i = 0; i < ps->nk; i++) e->kidx[j * in->stride_h + i] = 0;
    e->nK = 0;
    for (int64_t kk = 0; kk < kmax; kk++)
        if (e->kidx[kk] >= 0) e->klist[e->nK] = kk, e->kidx[kk] = e->nK++;
    /* node IDs: an ifmap value tagged (set v, row k) reaches the PEs of set v
     * on that diagonal; a filter value tagged (PE row, set h) the PEs of that
     * row in set h */
    rs_noc_clear(&e->ifmap_net);
    rs_noc_clear(&e->filter_net);
    const int64_t rows = e->a->rs_rows, cols = e->a->rs_cols;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) rs_pe_config(rs_pe_at(e, r, c), false, 1, 1, 1, 1, 1, 1, 1);
    for (int64_t v = 0; v < ps->ru; v++)
        for (int64_t i = 0; i < ps->nk; i++) {
            int64_t r = v * ps->nk + i;
            e->ifmap_net.row_id[r] = (int32_t)v;
            e->filter_net.row_id[r] = (int32_t)r;
            for (int64_t h = 0; h < ps->tu; h++)
                for (int64_t j = 0; j < ps->ne; j++) {
                    int64_t c = h * ps->ne + j;
                    const int64_t sh = e->fault.kind == RS_FAULT_MCAST_STRIDE && e->fault.instr == e->instr
                                           ? 1 : in->stride_h; /* the planted bug (rs_sim.h) */
                    e->ifmap_net.col_id[r * cols + c] = (int32_t)((g->gpar ? h : 0) * kmax + j * sh + i);
                    e->filter_net.col_id[r * cols + c] = (int32_t)h;
                    rs_pe *pe = rs_pe_at(e, r, c);
                    rs_pe_config(pe, true, e->qv[v], e->ph[h], in->wk, in->wo, g->n, in->stride_w, e->a->rs_pe_pipeline);
                    pe->out.col = c;
                }
        }
    const int64_t nhs = g->gpar ? ps->tu : 1;
    e->ifs = (rs_stream){0, g->n * g->ncols * nhs * e->nK * e->qpre[ps->ru], e->a->rs_ifmap_net_values};
    e->fls = (rs_stream){0, sum_p * e->qpre[ps->ru] * ps->nk * in->wk, e->a->rs_filter_net_values};
    /* where its filter stream starts (docs/rowstat.md "Filter banks"): at
     * its start, or with two banks as soon as the other bank is free (pass
     * k - 2 done), its filter block is in the buffer and the previous
     * pass's stream has left the network (its IDs then change) */
    e->prev_filt_last = e->filt_last;
    e->fl_start = t;
    if (e->banked && k > 0) {
        int64_t s = e->prev_filt_last + RS_NET_LAT + 1;
        if (k >= 2 && e->pass_done[k - 2] > s) s = e->pass_done[k - 2];
        if (e->fload[k] >= 0 && e->cmd_done[e->fload[k]] > s) s = e->cmd_done[e->fload[k]];
        if (s < t) e->fl_start = s;
    }
    e->filt_last = -1;
    e->psums_left = ps->ne * g->nwo * sum_p;
    e->last_write = -1;
    e->first_mac = INT64_MAX;
    e->last_mac = -1;
}

/* Cycle t of the pass's filter stream: up to rs_filter_net_values values of
 * its filter block onto the filter network, which moves the earlier ones on
 * (deliver_filter); sets filt_last when the last value is sent. */
static void filter_cycle(rs_eng *e, int64_t t) {
    rs_packet sent[64];
    int ns = 0;
    for (; ns < e->fls.per_cycle && e->fls.n < e->fls.total; ns++, e->fls.n++) {
        rs_glb_filter_value(e, e->fls.n, &sent[ns]);
        e->st.reads[ENPU_MEM_GLB] += (uint64_t)e->g.es;
        e->st.reads[ENPU_MEM_NOC]++;
        if (e->fls.n == e->fls.total - 1) e->filt_last = t;
    }
    rs_noc_step(&e->filter_net, t, sent, ns, deliver_filter, e, &e->st.writes[ENPU_MEM_NOC]);
}

/* The error of a delivery that found a PE's FIFO or filter loop buffer full
 * in cycle t (e->overflow names the PE). */
static int overflow_fail(const rs_eng *e, int64_t t, enpu_err *err) {
    return enpu_fail(err, ENPU_E_INVALID,
                     "instruction %d: PE (%d, %d): input FIFO or filter loop buffer overflow in cycle %" PRId64
                     " (the mapping exceeds the PE's buffers)",
                     e->instr, (e->overflow - 1) / (int)e->a->rs_cols, (e->overflow - 1) % (int)e->a->rs_cols, t);
}

/* A pass whose filter stream started before it (fl_start < t0, into the
 * other bank while the previous pass ran), on the per-cycle path: the
 * stream's and the filter network's cycles fl_start .. t0 - 1, which no
 * other unit touches (the previous pass's filters had left the network and
 * its PEs read the other bank), run now, in their own cycles; the rest
 * goes on in pass_cycle. */
static int filters_ahead(rs_eng *e, enpu_err *err) {
    e->overflow = 0;
    for (int64_t t = e->fl_start; t < e->t0 && !(e->fls.n == e->fls.total && rs_noc_empty(&e->filter_net)); t++) {
        filter_cycle(e, t);
        if (e->overflow) return overflow_fail(e, t, err);
    }
    return 0;
}

/* One cycle of the pass; sets *done when its last psum is in the buffer. */
static int pass_cycle(rs_eng *e, int64_t t, bool *done, enpu_err *err) {
    enpu_sim *sim = e->sim;
    /* the output network first: a register it empties is free for the PE this cycle */
    rs_collect_step(e, t);
    /* the global buffer's reads onto the networks */
    rs_packet sent[64];
    int ns = 0;
    for (; ns < e->ifs.per_cycle && e->ifs.n < e->ifs.total; ns++, e->ifs.n++) {
        bool pad;
        rs_glb_ifmap_value(e, e->ifs.n, &sent[ns], &pad);
        if (!pad) e->st.reads[ENPU_MEM_GLB] += (uint64_t)e->g.es;
        e->st.reads[ENPU_MEM_NOC]++;
    }
    e->overflow = 0;
    rs_noc_step(&e->ifmap_net, t, sent, ns, deliver_ifmap, e, &e->st.writes[ENPU_MEM_NOC]);
    filter_cycle(e, t);
    if (e->overflow) return overflow_fail(e, t, err);
    const bool go = e->filt_last >= 0 && t >= e->filt_last + RS_NET_LAT;
    /* the PEs, each column from the bottom up: a psum the PE below takes
     * this cycle frees its link for the PE above in the same cycle */
    const int64_t ncol = e->ps.ne * e->ps.tu;
    for (int64_t c = 0; c < ncol; c++)
        for (int64_t r = e->chain - 1; r >= 0; r--) {
            rs_pe *pe = rs_pe_at(e, r, c);
            int s = rs_pe_step(pe, t, r > 0 ? &rs_pe_at(e, r - 1, c)->out : NULL, go, &e->st);
            if (s > 0) {
                e->st.uops[e->g.es == 2 ? ENPU_UOP_MAC16 : ENPU_UOP_MAC]++;
                if (t < e->first_mac) e->first_mac = t;
                e->last_mac = t;
                e->busy_cycles++;
            } else if (s < 0 && r == e->chain - 1) {
                return enpu_fail(err, ENPU_E_INVALID,
                                 "instruction %d: the output network fell behind PE column %" PRId64
                                 " in cycle %" PRId64 " (the mapping's columns outrun rs_psum_net_values)",
                                 e->instr, c, t);
            }
        }
    *done = e->psums_left == 0;
    (void)sim;
    return 0;
}

/* ---- a layer ------------------------------------------------------------------------------ */

/* A planted miscount (rs_fault, white-box tests only): one more of the
 * chosen count in the chosen instruction. */
static void rs_fault_count(rs_eng *e) {
    const rs_fault *f = &e->fault;
    if (f->kind == RS_FAULT_NONE || f->instr != e->instr) return;
    if (f->kind == RS_FAULT_READ) e->st.reads[f->what]++;
    else if (f->kind == RS_FAULT_WRITE) e->st.writes[f->what]++;
    else if (f->kind == RS_FAULT_UOP) e->st.uops[f->what]++;
}

/* What has moved in the instruction so far: every value written anywhere
 * (a FIFO, a filter buffer, a psum link, the global buffer, a network) and
 * every operation; it grows in every cycle with progress. */
static uint64_t moved(const rs_eng *e) {
    uint64_t n = e->dma.bursts + (uint64_t)e->dma.ci;
    for (int m = 0; m < ENPU_MEM_COUNT; m++) n += e->st.writes[m] + e->st.reads[m];
    for (int o = 0; o < ENPU_UOP_COUNT; o++) n += e->st.uops[o];
    return n;
}

/* ENPU_E_INTERNAL: no progress up to cycle t (sim_wd_fail), naming what
 * still has work. */
static int wd_fail(const rs_eng *e, int64_t t, enpu_err *err) {
    char busy[256] = "", what[96];
    if (e->dma.ci < e->ncmd || e->dma.issuing) {
        snprintf(what, sizeof what, "DMA engine (command %" PRId64 " of %" PRId64 ")", e->dma.ci, e->ncmd);
        sim_wd_busy(busy, sizeof busy, what);
    }
    if (e->active) {
        snprintf(what, sizeof what, "PE array (pass %" PRId64 ")", e->k);
        sim_wd_busy(busy, sizeof busy, what);
        if (e->ifs.n < e->ifs.total) sim_wd_busy(busy, sizeof busy, "ifmap network");
        if (e->fls.n < e->fls.total) sim_wd_busy(busy, sizeof busy, "filter network");
        snprintf(what, sizeof what, "output network (%" PRId64 " psums left)", e->psums_left);
        if (e->psums_left) sim_wd_busy(busy, sizeof busy, what);
    }
    return sim_wd_fail(e->sim, &e->wd, (uint64_t)t, e->instr, busy, err);
}

/* Runs rs_conv `instr` from cycle B; *end gets the first cycle after it. */
static int run_layer(rs_eng *e, int instr, int64_t B, int64_t *end, enpu_err *err) {
    enpu_sim *sim = e->sim;
    e->instr = instr;
    e->in = &sim->prog->instr[instr];
    memset(&e->st, 0, sizeof e->st);
    int rc = enpu_rs_geom_of(e->a, e->in, &e->g, err);
    if (rc) return rc;
    e->cmd = enpu_rs_commands(&e->g, e->in, &e->ncmd, err);
    e->cmd_done = malloc((size_t)(e->ncmd ? e->ncmd : 1) * sizeof *e->cmd_done);
    e->pass_done = malloc((size_t)e->g.n_passes * sizeof *e->pass_done);
    e->fload = malloc((size_t)e->g.n_passes * sizeof *e->fload);
    if (!e->cmd || !e->cmd_done || !e->pass_done || !e->fload) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto out;
    }
    for (int64_t k = 0; k < e->g.n_passes; k++) e->pass_done[k] = INT64_MAX, e->fload[k] = -1;
    for (int64_t ci = 0; ci < e->ncmd; ci++)
        if (e->cmd[ci].kind == ENPU_RS_LOAD_FILTERS) e->fload[e->cmd[ci].what] = ci;
    e->banked = enpu_rs_filter_banked(e->a, e->in, &e->g);
    rs_dma_start(&e->dma, e->cmd, e->ncmd, B, e->cmd_done);
    e->ff.nmemo = 0; /* pass shapes are the instruction's */
    e->ff.done_at = -1;
    int64_t next = 0, prev = B, t = B, ci_need = 0;
    e->active = false;
    sim_wd_progress(&e->wd, (uint64_t)B);
    uint64_t mv = moved(e);
    for (;;) {
        if ((rc = rs_dma_step(&e->dma, e, t, err))) goto out;
        if (!e->active) {
            /* the commands the next pass needs are done */
            bool ready = t >= prev;
            int64_t ci = ci_need;
            for (; ci < e->ncmd && e->cmd[ci].need <= next; ci++)
                if (e->cmd_done[ci] < 0 || e->cmd_done[ci] > t) ready = false;
            if (next == e->g.n_passes) {
                if (ready && e->dma.ci == e->ncmd) {
                    account(sim, instr, ENPU_ACT_DMA_WAIT, prev, t - prev);
                    *end = t;
                    break;
                }
            } else if (ready) {
                ci_need = ci;
                account(sim, instr, ENPU_ACT_DMA_WAIT, prev, t - prev);
                pass_start(e, next, t);
                sim_wd_progress(&e->wd, (uint64_t)t);
                e->ff.done_at = e->ff.on ? rs_ff_pass(e, t) : -1;
                if (e->ff.done_at < 0 && (rc = filters_ahead(e, err))) goto out;
            }
        }
        if (e->active) {
            bool done = false;
            if (e->ff.done_at >= 0) {
                done = t == e->ff.done_at; /* fast-forwarded: its end */
                sim_wd_progress(&e->wd, (uint64_t)t);
            } else {
                if ((rc = pass_cycle(e, t, &done, err))) goto out;
                /* co-simulation (include/easynpu/cosim.h): the array after
                 * cycle t; the hook turned the fast-forward off */
                if (sim->cycle_hook) sim->cycle_hook(sim->hook_ctx, (uint64_t)t, e);
                const uint64_t mv1 = moved(e);
                if (mv1 != mv) sim_wd_progress(&e->wd, (uint64_t)t), mv = mv1;
                else if (sim_wd_expired(&e->wd, (uint64_t)t)) {
                    rc = wd_fail(e, t, err);
                    goto out;
                }
            }
            if (done) {
                int64_t pd = e->last_write + 1;
                e->pass_done[e->k] = pd;
                account(sim, instr, ENPU_ACT_PIPELINE_FILL, e->t0, e->first_mac - e->t0);
                account(sim, instr, ENPU_ACT_COMPUTE, e->first_mac, e->last_mac - e->first_mac + 1);
                account(sim, instr, ENPU_ACT_OFMAP_DRAIN, e->last_mac + 1, pd - e->last_mac - 1);
                sim_obs_span(sim->obs, 1, "pass", (uint64_t)e->t0, (uint64_t)pd, "layer", sim->rows[instr].name);
                if (e->ps.final)
                    e->st.reads[ENPU_MEM_GLB] += (uint64_t)(enpu_rs_block_channels(&e->g, &e->ps) * ENPU_RS_PARAM_BYTES);
                e->active = false;
                e->ff.done_at = -1;
                prev = pd;
                next++;
            } else if (e->ff.done_at >= 0) {
                /* a fast-forwarded pass: only the DMA engine acts until its end */
                int64_t n = rs_dma_next(&e->dma, e, t);
                t = n < e->ff.done_at ? n : e->ff.done_at;
                continue;
            }
            t++;
            continue;
        }
        /* nothing runs: on to the next event */
        int64_t n = rs_dma_next(&e->dma, e, t);
        if (prev > t && prev < n) n = prev;
        if (n == INT64_MAX || n <= t) {
            /* a pass may start now that nothing else will change */
            if (n == INT64_MAX) {
                /* a validated program cannot deadlock the engine: the
                 * simulator's bug, as the watchdog reports one (exit 4) */
                rc = enpu_fail(err, ENPU_E_INTERNAL,
                               "simulator internal error: the row-stationary engine deadlocked at cycle %" PRId64
                               ", in instruction %d (layer '%s'): nothing is left to happen and the layer is not "
                               "done (a bug in src/sim)",
                               t, instr, sim->rows[instr].name[0] ? sim->rows[instr].name : "-");
                goto out;
            }
            n = t + 1;
        }
        const uint64_t mv1 = moved(e);
        if (mv1 != mv) sim_wd_progress(&e->wd, (uint64_t)t), mv = mv1;
        if ((uint64_t)n >= sim_wd_deadline(&e->wd)) { /* a wait longer than any legal one */
            rc = wd_fail(e, (int64_t)sim_wd_deadline(&e->wd), err);
            goto out;
        }
        if ((uint64_t)n > (sim->opts.max_cycles ? sim->opts.max_cycles : (uint64_t)1 << 40)) {
            rc = enpu_fail(err, ENPU_E_LIMIT, "instruction %d: past the cycle limit", instr);
            goto out;
        }
        t = n;
    }
    rs_fault_count(e);
    for (int m = 0; m < ENPU_MEM_COUNT; m++) {
        sim->rows[instr].reads[m] += e->st.reads[m];
        sim->rows[instr].writes[m] += e->st.writes[m];
    }
    for (int o = 0; o < ENPU_UOP_COUNT; o++) sim->rows[instr].uops[o] += e->st.uops[o];
out:
    free(e->cmd), free(e->cmd_done), free(e->pass_done), free(e->fload);
    e->cmd = NULL, e->cmd_done = e->pass_done = e->fload = NULL;
    return rc;
}

/* opts.check: the layer replayed functionally on a copy of the DRAM must
 * have written the same ofmap (the first difference is the mismatch). */
static int check_layer(rs_eng *e, int instr, enpu_err *err) {
    enpu_sim *sim = e->sim;
    const enpu_instr *in = &sim->prog->instr[instr];
    int rc = rs_func_conv(e->a, in, e->shadow, err);
    if (rc) return rc;
    sim->checked = true;
    const int64_t wb = sim->mem.wb, es = in->rs_bits ? 2 : 1, wpp = enpu_ceil_div(in->co * es, wb);
    /* the n images' pixels one after the other */
    for (int64_t pix = 0; pix < e->g.n * in->ho * in->wo; pix++)
        for (int64_t c = 0; c < in->co; c++) {
            int64_t off = (in->rs_ofmap_addr + pix * wpp) * wb + c * es;
            int64_t got = rs_glb_get(sim->mem.dram, off, (int)es), want = rs_glb_get(e->shadow, off, (int)es);
            if (got == want) continue;
            enpu_sim_mismatch *m = &sim->mismatch;
            m->found = true;
            m->layer = instr;
            snprintf(m->layer_name, sizeof m->layer_name, "%s", sim->rows[instr].name);
            snprintf(m->tensor, sizeof m->tensor, "ofmap");
            m->h = pix % (in->ho * in->wo) / in->wo, m->w = pix % in->wo, m->c = c;
            m->got = (int)got, m->want = (int)want;
            m->cycle = sim->mem.dram_wc ? sim->mem.dram_wc[off / wb] : 0;
            char img[32] = "";
            if (e->g.n > 1) snprintf(img, sizeof img, "image %" PRId64 ", ", pix / (in->ho * in->wo));
            return enpu_fail(err, ENPU_E_MISMATCH,
                             "layer '%s' (instruction %d): ofmap (%sh=%" PRId64 ", w=%" PRId64 ", c=%" PRId64
                             "): cycle-accurate %d, functional reference %d, written at cycle %" PRIu64,
                             m->layer_name, instr, img, m->h, m->w, m->c, m->got, m->want, m->cycle);
        }
    return 0;
}

/* ---- the program ------------------------------------------------------------------------- */

static int engine_run(void *st, enpu_sim *sim, enpu_err *err) {
    rs_eng *e = st;
    const enpu_program *p = sim->prog;
    const enpu_arch *a = e->a;
    sim_dram_reset(&e->dma.dram);
    memset(e->glb, 0, (size_t)a->rs_glb_bytes);
    /* fast-forward (fastfwd.c) unless the run asks for every cycle */
    e->ff.on = !sim->opts.per_cycle && !sim->step_every_cycle && !sim->cycle_hook;
    e->ff.portable = sim->ff_portable;
    sim->ff_cycles = 0;
    /* the engine's own longest wait: a pass's configuration, a value
     * through both network stages (RS_NET_LAT) and a psum down a PE column
     * (rs_pe_pipeline a PE) and through the output network */
    sim_wd_start(&e->wd, sim,
                 (uint64_t)(a->rs_config_cycles + RS_NET_LAT + a->rs_pe_pipeline * a->rs_rows + a->rs_cols));
    if (sim->obs) {
        sim_obs_track(sim->obs, 1, "controller");
    }
    int64_t t = 0;
    int rc = 0;
    for (int i = 0; i < p->n_instr && !rc; i++) {
        const enpu_instr *in = &p->instr[i];
        int64_t ctl = a->instr_fetch_cycles + a->decode_cycles;
        if (in->opcode == ENPU_OPC_SYNC) ctl += a->host_sync_cycles;
        if (in->opcode == ENPU_OPC_RS_CONV) ctl += a->rs_config_cycles;
        account(sim, i, ENPU_ACT_CONTROLLER, t, ctl);
        /* the instruction's bus words out of the ITCM, as EasyNPU's fetch */
        sim->rows[i].reads[ENPU_MEM_ITCM] += (uint64_t)enpu_ceil_div(ENPU_INSTR_BITS, a->bus_bits);
        t += ctl;
        if (in->opcode == ENPU_OPC_SYNC) {
            /* the host CPU's time for the op (enpu_sync_host_cycles: every
             * engine's host) after the handover */
            int64_t h = enpu_sync_host_cycles(p, i);
            account(sim, i, ENPU_ACT_HOST, t, h);
            t += h;
            rc = sim_host_op(sim, i, err);
        } else if (in->opcode == ENPU_OPC_RS_CONV) {
            int64_t end = t;
            if (e->shadow) memcpy(e->shadow, sim->mem.dram, (size_t)(sim->mem.dram_words * sim->mem.wb));
            if (!(rc = run_layer(e, i, t, &end, err))) {
                t = end;
                if (e->shadow) rc = check_layer(e, i, err);
                if (!rc) rc = sim_layer_done(sim, i, err);
            }
        }
    }
    sim->cycle = (uint64_t)t;
    return rc;
}

const enpu_sim_engine sim_engine_rowstat_cycle = {"rowstat", ENPU_ENGINE_ROWSTAT, ENPU_SIM_CYCLE,
                                                  engine_create, engine_free, engine_run};
