/* Calibration: loading input sets, the synthetic fallback, and the range
 * observers run on the float reference. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "quant/qinternal.h"

#define HIST_BINS 2048

/* --- file lists -------------------------------------------------------------- */

typedef struct strlist {
    char **v;
    int n, cap;
} strlist;

static void sl_free(strlist *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static int sl_push(strlist *l, const char *s, enpu_err *err) {
    if (l->n >= ENPU_CALIB_MAX_FILES)
        return enpu_fail(err, ENPU_E_LIMIT, "more than %d input files", ENPU_CALIB_MAX_FILES);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (!nv) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        l->v = nv;
        l->cap = cap;
    }
    size_t n = strlen(s) + 1;
    l->v[l->n] = malloc(n);
    if (!l->v[l->n]) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    memcpy(l->v[l->n++], s, n);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool tensor_file(const char *name) {
    const char *e = strrchr(name, '.');
    return e && (strcmp(e, ".npy") == 0 || strcmp(e, ".pb") == 0);
}

/* The tensor files of a folder, sorted by name; only input_* ones when
 * there are some (the ONNX test_data_set layout also holds output_*.pb). */
static int list_dir(const char *dir, strlist *out, enpu_err *err) {
    DIR *d = opendir(dir);
    if (!d) return enpu_fail(err, ENPU_E_IO, "%s: cannot open folder", dir);
    strlist names = {0};
    bool have_input = false;
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !tensor_file(e->d_name)) continue;
        if (strncmp(e->d_name, "input_", 6) == 0) have_input = true;
        rc = sl_push(&names, e->d_name, err);
    }
    closedir(d);
    if (!rc) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    for (int i = 0; i < names.n && !rc; i++) {
        if (have_input && strncmp(names.v[i], "input_", 6) != 0) continue;
        size_t n = strlen(dir) + strlen(names.v[i]) + 2;
        char *p = malloc(n);
        if (!p) {
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            break;
        }
        snprintf(p, n, "%s/%s", dir, names.v[i]);
        rc = sl_push(out, p, err);
        free(p);
    }
    sl_free(&names);
    if (!rc && out->n == 0) rc = enpu_fail(err, ENPU_E_USAGE, "%s: no .npy or .pb files", dir);
    return rc;
}

static int expand_spec(const char *spec, strlist *out, enpu_err *err) {
    size_t len = strlen(spec);
    char *copy = malloc(len + 1);
    if (!copy) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    memcpy(copy, spec, len + 1);
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
        if (!*item) continue;
        struct stat st;
        if (stat(item, &st) != 0) {
            rc = enpu_fail(err, ENPU_E_IO, "%s: no such file or folder", item);
        } else if (S_ISDIR(st.st_mode)) {
            rc = list_dir(item, out, err);
        } else {
            rc = sl_push(out, item, err);
        }
    }
    free(copy);
    if (!rc && out->n == 0) rc = enpu_fail(err, ENPU_E_USAGE, "'%s' names no input files", spec);
    return rc;
}

/* --- loading --------------------------------------------------------------------- */

static void dims_str(int rank, const int64_t *dims, char *buf, size_t size) {
    size_t at = 0;
    buf[0] = 0;
    if (rank == 0) snprintf(buf, size, "scalar");
    for (int d = 0; d < rank && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? "x" : "", (long long)dims[d]);
}

/* Same shape once leading 1-dims are dropped from both. */
static bool compatible(int ra, const int64_t *a, int rb, const int64_t *b) {
    int ia = 0, ib = 0;
    while (ia < ra && a[ia] == 1) ia++;
    while (ib < rb && b[ib] == 1) ib++;
    if (ra - ia != rb - ib) return false;
    for (; ia < ra; ia++, ib++)
        if (a[ia] != b[ib]) return false;
    return true;
}

void enpu_calib_free(enpu_buf *bufs, int n_bufs) {
    if (!bufs) return;
    for (int i = 0; i < n_bufs; i++) enpu_buf_free(&bufs[i]);
    free(bufs);
}

int enpu_calib_append(const enpu_graph *g, const char *spec, enpu_buf **bufs, int *n_samples,
                      enpu_err *err) {
    if (!g || !spec || !bufs || !n_samples)
        return enpu_fail(err, ENPU_E_USAGE, "enpu_calib_load: NULL argument");
    if (g->n_inputs < 1) return enpu_fail(err, ENPU_E_USAGE, "the graph has no inputs");
    strlist files = {0};
    int rc = expand_spec(spec, &files, err);
    if (rc) {
        sl_free(&files);
        return rc;
    }
    int ni = g->n_inputs;
    if (files.n % ni != 0) {
        rc = enpu_fail(err, ENPU_E_USAGE,
                       "%s: %d file(s) is not a multiple of the graph's %d inputs", spec,
                       files.n, ni);
        sl_free(&files);
        return rc;
    }
    int have = *n_samples, add = files.n / ni;
    if (have + add > ENPU_CALIB_MAX_FILES) {
        sl_free(&files);
        return enpu_fail(err, ENPU_E_LIMIT, "more than %d input sets", ENPU_CALIB_MAX_FILES);
    }
    enpu_buf *nb = realloc(*bufs, (size_t)(have + add) * (size_t)ni * sizeof *nb);
    if (!nb) {
        sl_free(&files);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    *bufs = nb;
    memset(nb + (size_t)have * ni, 0, (size_t)add * ni * sizeof *nb);
    int done = 0;
    for (; done < files.n && !rc; done++) {
        enpu_buf *b = &nb[(size_t)have * ni + done];
        const enpu_tensor *t = &g->tensors[g->inputs[done % ni]];
        rc = enpu_tensor_read(files.v[done], b, err);
        if (!rc) {
            rc = enpu_buf_to_f32(b, err);
            if (rc) enpu_err_prefix(err, "%s", files.v[done]);
        }
        if (!rc && !compatible(b->rank, b->dims, t->rank, t->dims)) {
            char have_s[200], want_s[200];
            dims_str(b->rank, b->dims, have_s, sizeof have_s);
            dims_str(t->rank, t->dims, want_s, sizeof want_s);
            rc = enpu_fail(err, ENPU_E_INVALID,
                           "%s: shape %s does not match graph input '%s' (%s)", files.v[done],
                           have_s, t->name, want_s);
        }
        if (!rc) {
            b->rank = t->rank;
            memcpy(b->dims, t->dims, sizeof b->dims);
        }
    }
    if (rc) {
        for (int i = 0; i < done; i++) enpu_buf_free(&nb[(size_t)have * ni + i]);
    } else {
        *n_samples = have + add;
    }
    sl_free(&files);
    return rc;
}

int enpu_calib_load(const enpu_graph *g, const char *spec, enpu_buf **out, int *n_samples,
                    enpu_err *err) {
    if (!out || !n_samples) return enpu_fail(err, ENPU_E_USAGE, "enpu_calib_load: NULL argument");
    *out = NULL;
    *n_samples = 0;
    int rc = enpu_calib_append(g, spec, out, n_samples, err);
    if (rc) {
        free(*out);
        *out = NULL;
        *n_samples = 0;
    }
    return rc;
}

/* --- synthetic fallback ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double unif(uint64_t *s) { return ((double)(splitmix64(s) >> 11) + 1.0) / 9007199254740992.0; }

int enpu_calib_synthetic(const enpu_graph *g, int n_samples, uint32_t seed, enpu_buf **out,
                         enpu_err *err) {
    *out = NULL;
    if (n_samples < 1 || g->n_inputs < 1)
        return enpu_fail(err, ENPU_E_USAGE, "synthetic calibration: nothing to generate");
    int ni = g->n_inputs;
    enpu_buf *b = calloc((size_t)n_samples * ni, sizeof *b);
    if (!b) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    uint64_t st = seed;
    for (int i = 0; i < n_samples * ni; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i % ni]];
        int rc = enpu_buf_alloc(&b[i], ENPU_DT_FLOAT32, t->rank, t->dims, err);
        if (rc) {
            enpu_calib_free(b, i);
            return rc;
        }
        float *v = b[i].data;
        int64_t n = enpu_buf_numel(&b[i]);
        for (int64_t k = 0; k < n; k += 2) {
            /* Box-Muller: two independent N(0, 1) values per pair of uniforms */
            double r = sqrt(-2.0 * log(unif(&st))), a = 6.283185307179586 * unif(&st);
            v[k] = (float)(r * cos(a));
            if (k + 1 < n) v[k + 1] = (float)(r * sin(a));
        }
    }
    *out = b;
    return 0;
}

/* --- observers ----------------------------------------------------------------------- */

static bool is_activation(const enpu_graph *g, int t) {
    const enpu_tensor *x = &g->tensors[t];
    if (x->dtype != ENPU_DT_FLOAT32 || (x->flags & ENPU_T_CONST) || x->rank < 0) return false;
    return (x->flags & ENPU_T_INPUT) || x->producer >= 0;
}

int enpu_calib_ranges(const enpu_graph *g, const enpu_buf *inputs, int n_samples,
                      const enpu_quant_opts *o, enpu_qrange *r, enpu_err *err) {
    for (int t = 0; t < g->n_tensors; t++) r[t] = (enpu_qrange){0.0f, 0.0f, false};
    enpu_fexec *ex = NULL;
    int rc = enpu_fexec_new(g, &ex, err);
    if (rc) return rc;
    for (int s = 0; s < n_samples && !rc; s++) {
        rc = enpu_fexec_run_n(ex, g->n_inputs, inputs + (size_t)s * g->n_inputs, err);
        if (rc) {
            enpu_err_prefix(err, "calibration sample %d", s);
            break;
        }
        for (int t = 0; t < g->n_tensors; t++) {
            if (!is_activation(g, t)) continue;
            const float *v = enpu_fexec_value(ex, t);
            if (!v) continue;
            int64_t n = enpu_tensor_numel(&g->tensors[t]);
            for (int64_t i = 0; i < n; i++) {
                float x = v[i];
                if (!isfinite(x)) continue;
                if (!r[t].seen) {
                    r[t].lo = r[t].hi = x;
                    r[t].seen = true;
                } else if (x < r[t].lo) {
                    r[t].lo = x;
                } else if (x > r[t].hi) {
                    r[t].hi = x;
                }
            }
        }
    }
    bool pct = o->method == ENPU_CALIB_PERCENTILE && o->percentile < 100.0;
    if (rc || !pct) {
        enpu_fexec_free(ex);
        return rc;
    }
    /* Second pass: histograms over the observed ranges, then the tails. */
    uint64_t *hist = calloc((size_t)g->n_tensors * HIST_BINS, sizeof *hist);
    if (!hist) {
        enpu_fexec_free(ex);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory for calibration histograms");
    }
    for (int s = 0; s < n_samples && !rc; s++) {
        rc = enpu_fexec_run_n(ex, g->n_inputs, inputs + (size_t)s * g->n_inputs, err);
        for (int t = 0; t < g->n_tensors && !rc; t++) {
            if (!is_activation(g, t) || !r[t].seen || !(r[t].hi > r[t].lo)) continue;
            const float *v = enpu_fexec_value(ex, t);
            if (!v) continue;
            uint64_t *h = hist + (size_t)t * HIST_BINS;
            double lo = r[t].lo, w = ((double)r[t].hi - lo) / HIST_BINS;
            int64_t n = enpu_tensor_numel(&g->tensors[t]);
            for (int64_t i = 0; i < n; i++) {
                if (!isfinite(v[i])) continue;
                int64_t b = (int64_t)(((double)v[i] - lo) / w);
                h[b < 0 ? 0 : (b >= HIST_BINS ? HIST_BINS - 1 : b)]++;
            }
        }
    }
    double keep = o->percentile / 100.0;
    for (int t = 0; t < g->n_tensors && !rc; t++) {
        if (!r[t].seen || !(r[t].hi > r[t].lo)) continue;
        const uint64_t *h = hist + (size_t)t * HIST_BINS;
        uint64_t total = 0;
        for (int b = 0; b < HIST_BINS; b++) total += h[b];
        if (!total) continue;
        double need = keep * (double)total, lo = r[t].lo;
        double w = ((double)r[t].hi - lo) / HIST_BINS;
        uint64_t cum = 0;
        int bh = HIST_BINS - 1, bl = 0;
        for (int b = 0; b < HIST_BINS; b++) {
            cum += h[b];
            if ((double)cum >= need) {
                bh = b;
                break;
            }
        }
        cum = 0;
        for (int b = HIST_BINS - 1; b >= 0; b--) {
            cum += h[b];
            if ((double)cum >= need) {
                bl = b;
                break;
            }
        }
        float nhi = (float)(lo + (bh + 1) * w), nlo = (float)(lo + bl * w);
        if (nhi < r[t].hi) r[t].hi = nhi;
        if (nlo > r[t].lo) r[t].lo = nlo;
    }
    free(hist);
    enpu_fexec_free(ex);
    return rc;
}
