/* The sweep engine: a point on a model is quantize (cached) -> compile ->
 * schedule model and analytic counts (or the cycle simulator) -> energy and
 * area; points are spread over a pool of threads; the Pareto front of the
 * configurations (docs/energy.md "Sweeps"). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/compiler.h"
#include "easynpu/program.h"
#include "easynpu/sim.h"
#include "easynpu/sweep.h"

const char *enpu_point_status_name(enpu_point_status s) {
    static const char *const names[] = {"pending", "ok", "invalid", "unsupported", "nofit", "error"};
    return (unsigned)s <= ENPU_PT_ERROR ? names[s] : "unknown";
}

int enpu_point_status_parse(const char *s) {
    for (int i = 0; i <= ENPU_PT_ERROR; i++)
        if (strcmp(s, enpu_point_status_name((enpu_point_status)i)) == 0) return i;
    return -1;
}

/* One quantized graph per model and numeric widths (the quantizer's inputs
 * that come from the arch). */
typedef struct qentry {
    int model;
    int64_t mult_bits, acc_bits, act_segments;
    enpu_graph *qg;              /* NULL: quantization failed, msg says why */
    char msg[ENPU_SWEEP_REASON_MAX];
} qentry;

struct enpu_sweeper {
    const enpu_sweep_space *space;
    const enpu_sweep_model *models;
    int n_models;
    enpu_sweep_opts o;
    int threads;
    pthread_mutex_t lock;
    qentry *q;
    int nq, capq;
    enpu_compile_cache *cache;   /* shared by every point: a layer is mapped once per
                                    distinct set of the parameters it depends on */
    /* the current enpu_sweep_eval */
    const uint64_t *points;
    uint64_t n_items, next, done;
    enpu_point_result *out;
};

int enpu_sweeper_new(const enpu_sweep_space *s, const enpu_sweep_model *models, int n_models,
                     const enpu_sweep_opts *o, enpu_sweeper **out, enpu_err *err) {
    *out = NULL;
    if (n_models < 1 || n_models > ENPU_SWEEP_MAX_MODELS || !o->quantize)
        return enpu_fail(err, ENPU_E_USAGE, "sweep: 1..%d models and a quantizer are needed",
                         ENPU_SWEEP_MAX_MODELS);
    enpu_sweeper *w = calloc(1, sizeof *w);
    if (!w) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    w->space = s;
    w->models = models;
    w->n_models = n_models;
    w->o = *o;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    w->threads = o->threads > 0 ? o->threads : nc > 0 ? (int)nc : 1;
    if (w->threads > 1024) w->threads = 1024;
    if (!(w->cache = enpu_compile_cache_new(0))) {
        free(w);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&w->lock, NULL);
    *out = w;
    return 0;
}

void enpu_sweeper_free(enpu_sweeper *w) {
    if (!w) return;
    for (int i = 0; i < w->nq; i++) enpu_graph_free(w->q[i].qg);
    free(w->q);
    enpu_compile_cache_free(w->cache);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

int enpu_sweeper_threads(const enpu_sweeper *w) { return w->threads; }

/* Copies src into dst[n], cut to fit: a reason is one line of a table. */
static void copy_cut(char *dst, size_t n, const char *src) {
    size_t k = strlen(src);
    if (k >= n) k = n - 1;
    memcpy(dst, src, k);
    dst[k] = 0;
}

/* The cached quantized graph (quantizing under the lock the first time);
 * NULL with the reason when quantization failed. */
static const enpu_graph *qgraph(enpu_sweeper *w, int model, const enpu_arch *a, char *why) {
    const enpu_graph *g = NULL;
    pthread_mutex_lock(&w->lock);
    qentry *e = NULL;
    for (int i = 0; i < w->nq && !e; i++)
        if (w->q[i].model == model && w->q[i].mult_bits == a->mult_bits &&
            w->q[i].acc_bits == a->acc_bits && w->q[i].act_segments == a->act_segments)
            e = &w->q[i];
    if (!e && w->nq == w->capq) {
        int cap = w->capq ? 2 * w->capq : 8;
        qentry *nq = realloc(w->q, (size_t)cap * sizeof *nq);
        if (nq) w->q = nq, w->capq = cap;
    }
    if (!e && w->nq < w->capq) {
        e = &w->q[w->nq++];
        memset(e, 0, sizeof *e);
        e->model = model;
        e->mult_bits = a->mult_bits, e->acc_bits = a->acc_bits, e->act_segments = a->act_segments;
        enpu_err err = {0};
        if (w->o.quantize(w->o.quantize_ctx, model, a, &e->qg, &err)) {
            enpu_graph_free(e->qg);
            e->qg = NULL;
            enpu_err_prefix(&err, "quantize");
            copy_cut(e->msg, sizeof e->msg, err.msg);
        }
    }
    if (e) {
        g = e->qg;
        if (!g) copy_cut(why, ENPU_SWEEP_REASON_MAX, e->msg);
    } else {
        snprintf(why, ENPU_SWEEP_REASON_MAX, "out of memory");
    }
    pthread_mutex_unlock(&w->lock);
    return g;
}

static void fail_point(enpu_point_result *r, enpu_point_status st, const enpu_err *err) {
    r->status = st;
    copy_cut(r->reason, sizeof r->reason, err->msg);
}

/* The simulator on the model's inputs (zeros when it has none). */
static int simulate(const enpu_sweep_model *m, const enpu_program *prog, const enpu_arch *a,
                    enpu_sim_result *res, enpu_err *err) {
    enpu_sim *sim = NULL;
    int rc = enpu_sim_new(prog, a, NULL, &sim, err);
    if (rc) return rc;
    if (m->inputs) {
        rc = enpu_sim_run(sim, m->inputs, m->n_inputs, res, err);
    } else {
        int n = 0;
        enpu_buf *in = calloc((size_t)(prog->n_io > 0 ? prog->n_io : 1), sizeof *in);
        if (!in) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        for (int i = 0; i < prog->n_io && !rc; i++) {
            const enpu_io_desc *d = &prog->io[i];
            if (d->dir != ENPU_IO_INPUT) continue;
            int64_t dims[ENPU_MAX_RANK];
            enpu_io_user_dims(d, dims);
            rc = enpu_buf_alloc(&in[n++], ENPU_DT_FLOAT32, d->rank, dims, err);
        }
        if (!rc) rc = enpu_sim_run(sim, in, n, res, err);
        for (int i = 0; i < n; i++) enpu_buf_free(&in[i]);
        free(in);
    }
    enpu_sim_free(sim);
    return rc;
}

static void eval_point(enpu_sweeper *w, uint64_t idx, int model, enpu_point_result *r) {
    enpu_arch a;
    enpu_err err = {0};
    enpu_sweep_point_arch(w->space, idx, &a);
    if (enpu_arch_validate(&a, &err)) {
        fail_point(r, ENPU_PT_INVALID, &err);
        return;
    }
    int rc = enpu_compile_arch_check(&a, &err);
    if (rc) {
        fail_point(r, rc == ENPU_E_UNSUPPORTED ? ENPU_PT_UNSUPPORTED : ENPU_PT_INVALID, &err);
        return;
    }
    const enpu_graph *qg = qgraph(w, model, &a, r->reason);
    if (!qg) {
        r->status = ENPU_PT_ERROR;
        return;
    }
    enpu_program prog;
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    co.cache = w->cache;
    rc = enpu_compile(qg, &a, &co, &prog, NULL, &err);
    if (rc) {
        fail_point(r, rc == ENPU_E_NOFIT ? ENPU_PT_NOFIT
                      : rc == ENPU_E_UNSUPPORTED ? ENPU_PT_UNSUPPORTED : ENPU_PT_ERROR, &err);
        enpu_program_free(&prog);
        return;
    }
    /* the run's totals, from the simulator or from the estimate: the same
     * fields of one row */
    enpu_layer_stats tot;
    memset(&tot, 0, sizeof tot);
    if (w->o.simulate) {
        enpu_sim_result res;
        memset(&res, 0, sizeof res);
        rc = simulate(&w->models[model], &prog, &a, &res, &err);
        tot.cycles = res.total_cycles;
        tot.macs = res.total_macs;
        memcpy(tot.reads, res.reads, sizeof tot.reads);
        memcpy(tot.writes, res.writes, sizeof tot.writes);
        memcpy(tot.uops, res.uops, sizeof tot.uops);
        enpu_sim_result_free(&res);
    } else {
        enpu_layer_stats *rows = NULL;
        rc = enpu_estimate_program_cached(&prog, w->cache, &rows, &tot, &err);
        free(rows);
    }
    enpu_program_free(&prog);
    if (rc) {
        fail_point(r, ENPU_PT_ERROR, &err);
        return;
    }
    enpu_energy_costs c;
    enpu_energy e;
    enpu_energy_summary sum;
    enpu_area ar;
    enpu_energy_costs_of(&a, &c);
    r->cycles = tot.cycles;
    r->macs = tot.macs;
    enpu_energy_of(&c, tot.reads, tot.writes, tot.uops, &e);
    enpu_energy_summarize(&a, r->cycles, e.total_pj, &sum);
    enpu_area_of(&a, &ar);
    r->status = ENPU_PT_OK;
    r->time_us = sum.time_us;
    r->energy_pj = e.total_pj;
    r->power_mw = sum.power_mw;
    r->edp_js = sum.edp_js;
    r->area_um2 = ar.total_um2;
    memcpy(r->part_pj, e.part_pj, sizeof r->part_pj);
    r->utilization = enpu_utilization(r->macs, (uint64_t)enpu_arch_mac_units(&a), r->cycles);
}

static void *worker(void *arg) {
    enpu_sweeper *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        uint64_t j = w->next;
        bool stop = j >= w->n_items || (w->o.stop && *w->o.stop);
        if (!stop) w->next++;
        pthread_mutex_unlock(&w->lock);
        if (stop) break;
        enpu_point_result *r = &w->out[j];
        eval_point(w, r->point, r->model, r);
        pthread_mutex_lock(&w->lock);
        w->done++;
        if (w->o.progress) w->o.progress(w->o.progress_ctx, w->done, w->n_items);
        pthread_mutex_unlock(&w->lock);
    }
    return NULL;
}

int enpu_sweep_eval(enpu_sweeper *w, const uint64_t *points, uint64_t n, enpu_point_result *out,
                    enpu_err *err) {
    const uint64_t items = n * (uint64_t)w->n_models;
    for (uint64_t j = 0; j < items; j++) {
        memset(&out[j], 0, sizeof out[j]);
        out[j].point = points[j / (uint64_t)w->n_models];
        out[j].model = (int)(j % (uint64_t)w->n_models);
    }
    w->points = points;
    w->n_items = items;
    w->next = w->done = 0;
    w->out = out;
    int nt = w->threads;
    if ((uint64_t)nt > items) nt = items ? (int)items : 1;
    pthread_t *tid = calloc((size_t)nt, sizeof *tid);
    if (!tid) return enpu_fail(err, ENPU_E_NOMEM, "out of memory starting the sweep's threads");
    int started = 0;
    for (int t = 1; t < nt; t++) {
        if (pthread_create(&tid[t], NULL, worker, w) != 0) break;
        started++;
    }
    worker(w); /* this thread is one of them */
    for (int t = 1; t <= started; t++) pthread_join(tid[t], NULL);
    free(tid);
    return 0;
}

/* ---- Pareto front ------------------------------------------------------------ */

static int cmp_cfg(const void *pa, const void *pb) {
    const enpu_sweep_config *a = *(enpu_sweep_config *const *)pa, *b = *(enpu_sweep_config *const *)pb;
    if (a->time_us != b->time_us) return a->time_us < b->time_us ? -1 : 1;
    if (a->energy_pj != b->energy_pj) return a->energy_pj < b->energy_pj ? -1 : 1;
    if (a->area_um2 != b->area_um2) return a->area_um2 < b->area_um2 ? -1 : 1;
    return a->point < b->point ? -1 : a->point > b->point;
}

static bool dominates(const enpu_sweep_config *a, const enpu_sweep_config *b) {
    return a->time_us <= b->time_us && a->energy_pj <= b->energy_pj && a->area_um2 <= b->area_um2 &&
           (a->time_us < b->time_us || a->energy_pj < b->energy_pj || a->area_um2 < b->area_um2);
}

uint64_t enpu_sweep_pareto(const enpu_point_result *results, uint64_t n_results, int n_models,
                           enpu_sweep_config *configs) {
    uint64_t nc = n_results / (uint64_t)n_models, n_ok = 0, n_front = 0;
    for (uint64_t k = 0; k < nc; k++) {
        enpu_sweep_config *c = &configs[k];
        memset(c, 0, sizeof *c);
        c->point = results[k * (uint64_t)n_models].point;
        c->ok = true;
        for (int m = 0; m < n_models; m++) {
            const enpu_point_result *r = &results[k * (uint64_t)n_models + (uint64_t)m];
            if (r->status != ENPU_PT_OK) c->ok = false;
            c->time_us += r->time_us;
            c->energy_pj += r->energy_pj;
            c->area_um2 = r->area_um2;
        }
        n_ok += c->ok;
    }
    enpu_sweep_config **ord = malloc((size_t)(n_ok ? n_ok : 1) * sizeof *ord);
    enpu_sweep_config **front = malloc((size_t)(n_ok ? n_ok : 1) * sizeof *front);
    if (!ord || !front) {
        free(ord);
        free(front);
        return 0;
    }
    uint64_t k2 = 0;
    for (uint64_t k = 0; k < nc; k++)
        if (configs[k].ok) ord[k2++] = &configs[k];
    /* in (time, energy, area) order a dominator comes first, and a dominated
     * dominator's own dominator is already on the front */
    qsort(ord, (size_t)n_ok, sizeof *ord, cmp_cfg);
    for (uint64_t i = 0; i < n_ok; i++) {
        bool dom = false;
        for (uint64_t f = 0; f < n_front && !dom; f++) dom = dominates(front[f], ord[i]);
        if (!dom) {
            ord[i]->pareto = true;
            front[n_front++] = ord[i];
        }
    }
    free(ord);
    free(front);
    return n_front;
}
