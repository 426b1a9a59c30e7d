/* Evaluation of int8 against float over a data set (eval.h): labels files,
 * the worker threads, and the figures over the set. */
#include "easynpu/eval.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"

/* ---- labels ----------------------------------------------------------------------- */

typedef struct label_entry {
    char *name; /* NULL for the CLASS form */
    int cls;
    const char *file;
    int line;
} label_entry;

typedef struct label_list {
    label_entry *v;
    int n, cap;
} label_list;

static void ll_free(label_list *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i].name);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int ll_push(label_list *l, const char *name, size_t name_len, int cls, const char *file,
                   int line, enpu_err *err) {
    if (l->n >= ENPU_DATASET_MAX_SAMPLES)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: more than %d labels", file,
                         ENPU_DATASET_MAX_SAMPLES);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        label_entry *nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (!nv) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        l->v = nv;
        l->cap = cap;
    }
    label_entry *e = &l->v[l->n];
    memset(e, 0, sizeof *e);
    if (name) {
        e->name = malloc(name_len + 1);
        if (!e->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        memcpy(e->name, name, name_len);
        e->name[name_len] = 0;
    }
    e->cls = cls;
    e->file = file;
    e->line = line;
    l->n++;
    return 0;
}

/* Parses one labels file (text, NUL-terminated) into l. */
static int parse_labels(char *text, const char *file, label_list *l, enpu_err *err) {
    int line = 0, form = 0; /* 1: CLASS, 2: NAME CLASS */
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        char *hash = strchr(p, '#');
        if (hash) *hash = 0;
        char *b = p, *e = p + strlen(p);
        while (b < e && isspace((unsigned char)*b)) b++;
        while (e > b && isspace((unsigned char)e[-1])) e--;
        if (b < e) {
            /* the class is the last token; a name is whatever precedes it */
            char *c = e;
            while (c > b && !isspace((unsigned char)c[-1])) c--;
            char *name_end = c;
            while (name_end > b && isspace((unsigned char)name_end[-1])) name_end--;
            int f = name_end > b ? 2 : 1;
            char *end;
            errno = 0;
            long v = strtol(c, &end, 10);
            if (end == c || end != e || errno || v < 0 || v > INT32_MAX || !isdigit((unsigned char)*c))
                return enpu_fail(err, ENPU_E_FORMAT,
                                 "%s: line %d: '%.*s' is not a class index (a non-negative "
                                 "integer)",
                                 file, line, (int)(e - c > 40 ? 40 : e - c), c);
            if (form && f != form)
                return enpu_fail(err, ENPU_E_FORMAT,
                                 "%s: line %d: mixes 'CLASS' and 'NAME CLASS' lines", file, line);
            form = f;
            int rc = ll_push(l, f == 2 ? b : NULL, (size_t)(name_end - b), (int)v, file, line, err);
            if (rc) return rc;
        }
        if (!eol) break;
        p = eol + 1;
    }
    if (!form) return enpu_fail(err, ENPU_E_FORMAT, "%s: no labels", file);
    return 0;
}

static int cmp_entry(const void *a, const void *b) {
    const label_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static const label_entry *find_entry(const label_entry *v, int n, const char *key, size_t len) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strncmp(v[mid].name, key, len);
        if (c == 0 && v[mid].name[len]) c = 1;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < n && strncmp(v[lo].name, key, len) == 0 && !v[lo].name[len]) return &v[lo];
    return NULL;
}

/* Gives sample s the class of every entry naming it (sorted entries). */
static int label_of(const label_entry *v, int n, const char *sname, int *cls, enpu_err *err) {
    const label_entry *hit = NULL;
    size_t sl = strlen(sname);
    for (size_t i = 0; i <= sl; i++) {
        /* candidates: the whole name, every suffix after '/' or ':', every
         * prefix before '/' and every folder component */
        const label_entry *cands[3] = {NULL, NULL, NULL};
        if (i == 0) cands[0] = find_entry(v, n, sname, sl);
        if (i < sl && (sname[i] == '/' || sname[i] == ':')) {
            cands[1] = find_entry(v, n, sname + i + 1, sl - i - 1);
            if (sname[i] == '/') {
                size_t start = i;
                while (start > 0 && sname[start - 1] != '/') start--;
                cands[2] = find_entry(v, n, sname + start, i - start);
            }
        }
        for (int k = 0; k < 3; k++) {
            const label_entry *e = cands[k];
            if (!e) continue;
            /* every entry of that name must agree */
            for (const label_entry *q = e; q < v + n && strcmp(q->name, e->name) == 0; q++) {
                if (hit && hit->cls != q->cls) {
                    /* in the order of the files (parts of one buffer) and lines */
                    bool q_first = q->file < hit->file || (q->file == hit->file && q->line < hit->line);
                    const label_entry *a = q_first ? q : hit, *b = q_first ? hit : q;
                    return enpu_fail(err, ENPU_E_INVALID,
                                     "input set '%s' has two labels: %d (%s line %d) and %d (%s "
                                     "line %d)",
                                     sname, a->cls, a->file, a->line, b->cls, b->file, b->line);
                }
                hit = q;
            }
        }
    }
    *cls = hit ? hit->cls : -1;
    return 0;
}

int enpu_labels_load(const char *spec, const enpu_dataset *ds, int **labels, int *n_labelled,
                     enpu_err *err) {
    if (!spec || !ds || !labels || !n_labelled)
        return enpu_fail(err, ENPU_E_USAGE, "enpu_labels_load: NULL argument");
    *labels = NULL;
    *n_labelled = 0;
    size_t len = strlen(spec);
    char *copy = malloc(len + 1);
    if (!copy) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    memcpy(copy, spec, len + 1);
    label_list l = {0};
    int rc = 0, n_index = -1;
    char *save = NULL;
    bool named = false, indexed = false;
    const char *index_file = NULL;
    for (char *f = strtok_r(copy, ",", &save); f && !rc; f = strtok_r(NULL, ",", &save)) {
        if (!*f) continue;
        uint8_t *text = NULL;
        size_t n = 0;
        int before = l.n;
        rc = enpu_file_read(f, ENPU_MAX_LABELS_FILE_BYTES, &text, &n, err);
        if (!rc && memchr(text, 0, n)) rc = enpu_fail(err, ENPU_E_FORMAT, "%s: not a text file", f);
        if (!rc) rc = parse_labels((char *)text, f, &l, err);
        free(text);
        if (rc) break;
        if (l.v[before].name) named = true;
        else indexed = true, index_file = f;
        if (named && indexed)
            rc = enpu_fail(err, ENPU_E_FORMAT,
                           "%s: 'CLASS' lines and another file's 'NAME CLASS' lines cannot be "
                           "combined",
                           f);
    }
    int *out = rc ? NULL : malloc((size_t)(ds->n_samples ? ds->n_samples : 1) * sizeof *out);
    if (!rc && !out) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (!rc && indexed) {
        n_index = l.n;
        if (n_index < ds->n_samples || (n_index > ds->n_samples && !ds->truncated))
            rc = enpu_fail(err, ENPU_E_INVALID,
                           "%s: %d class index(es) for %d input set(s); give one per input set, "
                           "in order, or name them ('NAME CLASS')",
                           spec, n_index, ds->n_samples);
        for (int s = 0; s < ds->n_samples && !rc; s++) out[s] = l.v[s].cls;
        if (!rc) *n_labelled = ds->n_samples;
        (void)index_file;
    } else if (!rc) {
        qsort(l.v, (size_t)l.n, sizeof *l.v, cmp_entry);
        for (int s = 0; s < ds->n_samples && !rc; s++) {
            rc = label_of(l.v, l.n, ds->names[s], &out[s], err);
            if (!rc && out[s] >= 0) (*n_labelled)++;
        }
        if (!rc && *n_labelled == 0)
            rc = enpu_fail(err, ENPU_E_INVALID,
                           "%s: no entry names an input set of the data set (e.g. '%s')", spec,
                           ds->n_samples ? ds->names[0] : "");
    }
    ll_free(&l);
    free(copy);
    if (rc) {
        free(out);
        *n_labelled = 0;
        return rc;
    }
    *labels = out;
    return 0;
}

/* ---- the evaluation ------------------------------------------------------------------ */

void enpu_eval_opts_default(enpu_eval_opts *o) {
    memset(o, 0, sizeof *o);
    o->kernels = ENPU_GK_FAST;
}

void enpu_eval_result_free(enpu_eval_result *r) {
    if (!r) return;
    free(r->samples);
    free(r->layers);
    memset(r, 0, sizeof *r);
}

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of the calling thread: per-input figures that other work on the
 * machine does not inflate. */
static double cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

static double sqnr_db(double sig, double noise) {
    if (noise <= 0) return INFINITY;
    if (sig <= 0) return -INFINITY;
    return 10.0 * log10(sig / noise);
}

/* The k best indices of v (larger first, the lower index first on ties). */
static void top_k(const float *v, int64_t n, int64_t *top) {
    for (int j = 0; j < ENPU_EVAL_TOPK; j++) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++) {
            bool taken = false;
            for (int q = 0; q < j; q++) taken |= top[q] == i;
            if (!taken && (best < 0 || v[i] > v[best] || (isnan(v[best]) && !isnan(v[i]))))
                best = i;
        }
        top[j] = best;
    }
}

/* What the workers share. */
typedef struct eval_job {
    const enpu_graph *g, *qg;
    const enpu_dataset *ds;
    enpu_gexec_kernels kernels;
    int n_slots;        /* tensors compared per input set */
    int *slot_q;        /* [n_slots] quantized tensor */
    int *slot_f;        /* [n_slots] float twin */
    int64_t most;       /* largest compared tensor */
    double *slot_sig;   /* [n_samples][n_slots]: sum of float^2 */
    double *slot_noi;   /* [n_samples][n_slots]: sum of (int8 - float)^2 */
    enpu_eval_sample *samples;
    int64_t n_out;      /* elements of the first output */
    pthread_mutex_t lock;
    int next, done;     /* under lock */
    bool stop;          /* under lock */
    int err_sample;     /* first failing input set, under lock */
    enpu_err err;       /* its error */
    enpu_eval_progress progress;
    void *ctx;
    double float_s, int8_s; /* summed over workers, under lock */
    const char *kernels_name;
} eval_job;

typedef struct worker {
    eval_job *job;
    enpu_fexec *fx;
    enpu_gexec *gx;
    float *scratch, *out_q;
    int status;
} worker;

static void fail_sample(eval_job *j, int s, const enpu_err *e) {
    pthread_mutex_lock(&j->lock);
    if (j->err_sample < 0 || s < j->err_sample) {
        j->err_sample = s;
        j->err = *e;
    }
    j->stop = true;
    pthread_mutex_unlock(&j->lock);
}

/* One input set: both runs and every figure of it. */
static int eval_one(worker *w, int s, double *tf, double *ti, enpu_err *err) {
    eval_job *j = w->job;
    const enpu_buf *in = j->ds->bufs + (size_t)s * j->ds->n_inputs;
    double t0 = cpu_s();
    int rc = 0;
    if (j->g && (rc = enpu_fexec_run_n(w->fx, j->g->n_inputs, in, err))) return rc;
    double t1 = cpu_s();
    if ((rc = enpu_gexec_run(w->gx, in, err))) return rc;
    double t2 = cpu_s();
    *tf += t1 - t0;
    *ti += t2 - t1;
    double *sg = j->slot_sig + (size_t)s * j->n_slots, *ns = j->slot_noi + (size_t)s * j->n_slots;
    for (int k = 0; k < j->n_slots; k++) {
        const float *f = enpu_fexec_value(w->fx, j->slot_f[k]);
        int qt = j->slot_q[k];
        sg[k] = ns[k] = NAN;
        if (!f) continue;
        if ((rc = enpu_gexec_value_f32(w->gx, qt, w->scratch, err))) return rc;
        int64_t cnt = enpu_tensor_numel(&j->qg->tensors[qt]);
        double sig = 0, noi = 0;
        for (int64_t i = 0; i < cnt; i++) {
            double d = (double)w->scratch[i] - f[i];
            sig += (double)f[i] * f[i];
            noi += d * d;
        }
        sg[k] = sig;
        ns[k] = noi;
    }
    enpu_eval_sample *sm = &j->samples[s];
    int oq = j->qg->outputs[0];
    if ((rc = enpu_gexec_value_f32(w->gx, oq, w->out_q, err))) return rc;
    top_k(w->out_q, j->n_out, sm->top_int8);
    int64_t n_top = 0;
    enpu_top1(w->out_q, j->n_out, &n_top);
    sm->tie_int8 = n_top > 1;
    sm->tie_float = false;
    sm->sqnr_db = NAN;
    sm->max_abs_err = NAN;
    for (int q = 0; q < ENPU_EVAL_TOPK; q++) sm->top_float[q] = -1;
    if (j->g) {
        const float *f = enpu_fexec_value(w->fx, j->g->outputs[0]);
        double sig = 0, noi = 0, mx = 0;
        for (int64_t i = 0; i < j->n_out; i++) {
            double d = (double)w->out_q[i] - f[i];
            sig += (double)f[i] * f[i];
            noi += d * d;
            if (fabs(d) > mx) mx = fabs(d);
        }
        sm->sqnr_db = sqnr_db(sig, noi);
        sm->max_abs_err = mx;
        top_k(f, j->n_out, sm->top_float);
        enpu_top1(f, j->n_out, &n_top);
        sm->tie_float = n_top > 1;
    }
    return 0;
}

static void *work(void *arg) {
    worker *w = arg;
    eval_job *j = w->job;
    double tf = 0, ti = 0;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int s = j->stop || j->next >= j->ds->n_samples ? -1 : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (s < 0) break;
        enpu_err e = {0};
        if (eval_one(w, s, &tf, &ti, &e)) {
            enpu_err_prefix(&e, "input set %d (%s)", s, j->ds->names[s]);
            fail_sample(j, s, &e);
            break;
        }
        pthread_mutex_lock(&j->lock);
        j->done++;
        if (j->progress) j->progress(j->ctx, j->done, j->ds->n_samples);
        pthread_mutex_unlock(&j->lock);
    }
    pthread_mutex_lock(&j->lock);
    j->float_s += tf;
    j->int8_s += ti;
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

static int worker_init(worker *w, eval_job *j, enpu_err *err) {
    memset(w, 0, sizeof *w);
    w->job = j;
    int rc = 0;
    if (j->g) rc = enpu_fexec_new(j->g, &w->fx, err);
    if (!rc) rc = enpu_gexec_new(j->qg, &w->gx, err);
    if (!rc) rc = enpu_gexec_set_kernels(w->gx, j->kernels, err);
    w->scratch = malloc((size_t)j->most * sizeof(float));
    w->out_q = malloc((size_t)(j->n_out ? j->n_out : 1) * sizeof(float));
    if (!rc && (!w->scratch || !w->out_q)) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (!rc) j->kernels_name = enpu_gexec_kernels_name(w->gx);
    return rc;
}

static void worker_free(worker *w) {
    enpu_fexec_free(w->fx);
    enpu_gexec_free(w->gx);
    free(w->scratch);
    free(w->out_q);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Per-input-set SQNR statistics of slot k, and its pooled noise-to-signal
 * ratio (returned; NAN when never computed). */
static double slot_stats(const eval_job *j, int n_samples, int k, enpu_eval_layer *l) {
    double sum = 0, sig = 0, noi = 0;
    int n_fin = 0, n_seen = 0;
    l->worst_db = INFINITY;
    l->worst_sample = -1;
    l->n_exact = 0;
    for (int s = 0; s < n_samples; s++) {
        double sg = j->slot_sig[(size_t)s * j->n_slots + k], ns = j->slot_noi[(size_t)s * j->n_slots + k];
        if (isnan(sg)) continue;
        double v = sqnr_db(sg, ns);
        n_seen++;
        sig += sg;
        noi += ns;
        if (v == INFINITY) l->n_exact++;
        else if (isfinite(v)) sum += v, n_fin++;
        if (v < l->worst_db) l->worst_db = v, l->worst_sample = s;
    }
    l->mean_db = n_fin ? sum / n_fin : (l->n_exact ? INFINITY : NAN);
    l->pooled_db = n_seen ? sqnr_db(sig, noi) : NAN;
    if (!n_seen) l->worst_db = NAN;
    return !n_seen ? NAN : (noi <= 0 ? 0.0 : (sig <= 0 ? INFINITY : noi / sig));
}

static int cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > ENPU_EVAL_MAX_THREADS ? ENPU_EVAL_MAX_THREADS : (int)n);
}

/* The figures over the set, in input-set order (independent of threads). */
static void summarize(enpu_eval_result *r, const int *labels, const eval_job *j,
                      const int *row_slot, const int *slot_of_tensor) {
    const enpu_graph *qg = j->qg;
    int n = r->n_samples;
    double *sorted = malloc((size_t)n * sizeof *sorted);
    double sum = 0;
    int n_fin = 0, n_sorted = 0;
    r->sqnr_worst_db = r->have_float ? INFINITY : NAN;
    for (int s = 0; s < n; s++) {
        enpu_eval_sample *sm = &r->samples[s];
        sm->label = labels ? labels[s] : -1;
        if (r->classes) {
            r->ties_int8 += sm->tie_int8;
            r->ties_float += sm->tie_float;
        }
        /* a tie at the top is no decision: never agreement, never a right answer */
        if (r->classes && r->have_float && !sm->tie_float && !sm->tie_int8 &&
            sm->top_float[0] == sm->top_int8[0])
            r->agree++;
        if (sm->label >= 0) {
            r->n_labelled++;
            for (int q = 0; q < ENPU_EVAL_TOPK; q++) {
                if (sm->top_float[q] == sm->label) {
                    r->top5_float++;
                    if (q == 0 && !sm->tie_float) r->top1_float++;
                }
                if (sm->top_int8[q] == sm->label) {
                    r->top5_int8++;
                    if (q == 0 && !sm->tie_int8) r->top1_int8++;
                }
            }
        }
        double v = sm->sqnr_db;
        if (isnan(v)) continue;
        if (v == INFINITY) r->n_exact++;
        else if (isfinite(v)) sum += v, n_fin++;
        if (v < r->sqnr_worst_db) r->sqnr_worst_db = v;
        if (sorted) sorted[n_sorted++] = v;
    }
    r->sqnr_mean_db = n_fin ? sum / n_fin : (r->n_exact ? INFINITY : NAN);
    r->sqnr_median_db = NAN;
    if (sorted && n_sorted) {
        qsort(sorted, (size_t)n_sorted, sizeof *sorted, cmp_double);
        r->sqnr_median_db = sorted[(n_sorted - 1) / 2]; /* the lower middle: one input's value */
    }
    free(sorted);
    /* pooled noise-to-signal ratio per slot, then what each layer adds */
    double *nsr = malloc((size_t)(j->n_slots ? j->n_slots : 1) * sizeof *nsr);
    for (int i = 0; i < r->n_layers; i++) {
        if (row_slot[i] < 0) continue;
        double v = slot_stats(j, n, row_slot[i], &r->layers[i]);
        if (nsr) nsr[row_slot[i]] = v;
    }
    for (int i = 0; nsr && i < r->n_layers; i++) {
        enpu_eval_layer *l = &r->layers[i];
        if (row_slot[i] < 0) continue;
        double in = 0; /* a graph input's error is all its own */
        if (l->node >= 0) {
            const enpu_node *nd = &qg->nodes[l->node];
            for (int k = 0; k < nd->n_in; k++) {
                int t = nd->in[k];
                if (t >= 0 && slot_of_tensor[t] >= 0 && nsr[slot_of_tensor[t]] > in) in = nsr[slot_of_tensor[t]];
            }
        }
        double own = nsr[row_slot[i]];
        if (isnan(own) || isnan(in)) l->added_db = NAN;
        else if (own <= in) l->added_db = INFINITY;
        else l->added_db = -10.0 * log10(own - in);
    }
    free(nsr);
}

int enpu_eval_run(const enpu_graph *g, const enpu_graph *qg, const enpu_dataset *ds,
                  const int *labels, const enpu_eval_opts *opts, enpu_eval_result *r,
                  enpu_err *err) {
    if (!qg || !ds || !r) return enpu_fail(err, ENPU_E_USAGE, "enpu_eval_run: NULL argument");
    memset(r, 0, sizeof *r);
    enpu_eval_opts o;
    if (opts) o = *opts;
    else enpu_eval_opts_default(&o);
    if (o.threads < 0 || o.threads > ENPU_EVAL_MAX_THREADS)
        return enpu_fail(err, ENPU_E_USAGE, "threads %d: 0 (one per CPU) to %d", o.threads,
                         ENPU_EVAL_MAX_THREADS);
    if (ds->n_inputs != qg->n_inputs || qg->n_outputs < 1 || ds->n_samples < 1)
        return enpu_fail(err, ENPU_E_USAGE, "the data set has %d input set(s) of %d input(s); the "
                         "model has %d input(s)", ds->n_samples, ds->n_inputs, qg->n_inputs);
    if (g && (g->n_inputs != qg->n_inputs || g->n_outputs != qg->n_outputs))
        return enpu_fail(err, ENPU_E_INVALID,
                         "float and quantized graphs differ in their inputs or outputs");
    const enpu_tensor *out = &qg->tensors[qg->outputs[0]];
    int64_t n_out = enpu_tensor_numel(out);
    if (g && enpu_tensor_numel(&g->tensors[g->outputs[0]]) != n_out)
        return enpu_fail(err, ENPU_E_INVALID, "output '%s' has different sizes in the two graphs",
                         out->name);
    r->classes = enpu_is_class_vector(out->rank, out->dims);
    r->n_classes = r->classes ? n_out : 0;
    r->output = out->name;
    r->n_samples = ds->n_samples;
    r->have_float = g != NULL;
    for (int s = 0; labels && s < ds->n_samples; s++) {
        if (labels[s] < 0) continue;
        if (!r->classes)
            return enpu_fail(err, ENPU_E_INVALID,
                             "labels given, but output '%s' is not a class vector ([N] or "
                             "[1, N])",
                             out->name);
        if (labels[s] >= n_out)
            return enpu_fail(err, ENPU_E_INVALID,
                             "input set %d (%s): label %d is outside the %lld classes of output "
                             "'%s'",
                             s, ds->names[s], labels[s], (long long)n_out, out->name);
    }

    /* rows: graph inputs, then nodes; a slot per compared tensor */
    int n_rows = qg->n_inputs + qg->n_nodes;
    eval_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.qg = qg;
    j.ds = ds;
    j.kernels = o.kernels;
    j.n_out = n_out;
    j.err_sample = -1;
    j.progress = o.progress;
    j.ctx = o.ctx;
    j.most = 1;
    r->layers = calloc((size_t)n_rows, sizeof *r->layers);
    r->samples = calloc((size_t)ds->n_samples, sizeof *r->samples);
    int *row_slot = malloc((size_t)n_rows * sizeof *row_slot);
    j.slot_q = malloc((size_t)n_rows * sizeof *j.slot_q);
    j.slot_f = malloc((size_t)n_rows * sizeof *j.slot_f);
    int *slot_of_tensor = malloc((size_t)(qg->n_tensors ? qg->n_tensors : 1) * sizeof(int));
    if (!r->layers || !r->samples || !row_slot || !j.slot_q || !j.slot_f || !slot_of_tensor) {
        free(row_slot);
        free(j.slot_q);
        free(j.slot_f);
        free(slot_of_tensor);
        enpu_eval_result_free(r);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (int t = 0; t < qg->n_tensors; t++) slot_of_tensor[t] = -1;
    r->n_layers = n_rows;
    for (int i = 0; i < n_rows; i++) {
        enpu_eval_layer *l = &r->layers[i];
        int qt;
        if (i < qg->n_inputs) {
            qt = qg->inputs[i];
            l->name = qg->tensors[qt].name;
            l->op = "input";
            l->node = -1;
        } else {
            const enpu_node *n = &qg->nodes[i - qg->n_inputs];
            qt = n->out[0];
            l->name = n->name;
            l->op = enpu_q_layer_op(qg, n);
            l->node = i - qg->n_inputs;
        }
        int ft = g ? enpu_q_float_twin(g, qg, qt) : -1;
        row_slot[i] = -1;
        l->mean_db = l->worst_db = l->pooled_db = l->added_db = NAN;
        l->worst_sample = -1;
        if (ft < 0 || qg->tensors[qt].dtype != ENPU_DT_INT8) continue;
        l->compared = true;
        row_slot[i] = j.n_slots;
        slot_of_tensor[qt] = j.n_slots;
        j.slot_q[j.n_slots] = qt;
        j.slot_f[j.n_slots] = ft;
        if (enpu_tensor_numel(&qg->tensors[qt]) > j.most) j.most = enpu_tensor_numel(&qg->tensors[qt]);
        j.n_slots++;
    }
    j.samples = r->samples;
    size_t n_cells = (size_t)ds->n_samples * (size_t)(j.n_slots ? j.n_slots : 1);
    j.slot_sig = malloc(n_cells * sizeof(double));
    j.slot_noi = malloc(n_cells * sizeof(double));
    int threads = o.threads ? o.threads : cpus();
    if (threads > ds->n_samples) threads = ds->n_samples;
    worker *ws = calloc((size_t)threads, sizeof *ws);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int rc = 0, started = 0, inited = 0;
    if (!j.slot_sig || !j.slot_noi || !ws || !tid) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (!rc && pthread_mutex_init(&j.lock, NULL) != 0)
        rc = enpu_fail(err, ENPU_E_NOMEM, "cannot create a lock");
    bool have_lock = rc == 0;
    for (int t = 0; t < threads && !rc; t++, inited++) rc = worker_init(&ws[t], &j, err);
    double t0 = now_s();
    for (int t = 0; t < threads && !rc; t++) {
        if (pthread_create(&tid[t], NULL, work, &ws[t]) != 0) {
            /* the started ones finish the set */
            if (!started) rc = enpu_fail(err, ENPU_E_NOMEM, "cannot start a thread");
            break;
        }
        started++;
    }
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    r->seconds = now_s() - t0;
    if (!rc && j.err_sample >= 0) {
        rc = j.err.code ? j.err.code : ENPU_E_INVALID;
        if (err) *err = j.err;
    }
    for (int t = 0; t < inited; t++) worker_free(&ws[t]);
    if (have_lock) pthread_mutex_destroy(&j.lock);
    free(ws);
    free(tid);
    if (!rc) {
        r->threads = started;
        r->kernels = j.kernels_name;
        r->float_ms = g ? 1e3 * j.float_s / ds->n_samples : NAN;
        r->int8_ms = 1e3 * j.int8_s / ds->n_samples;
        summarize(r, labels, &j, row_slot, slot_of_tensor);
    }
    free(row_slot);
    free(j.slot_q);
    free(j.slot_f);
    free(slot_of_tensor);
    free(j.slot_sig);
    free(j.slot_noi);
    if (rc) enpu_eval_result_free(r);
    return rc;
}
