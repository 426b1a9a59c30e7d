/* Calibration: loading input sets, the synthetic fallback, and the range
 * observers run on the float reference. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "easynpu/file.h"
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
    return e && (strcmp(e, ".npy") == 0 || strcmp(e, ".pb") == 0 || strcmp(e, ".npz") == 0);
}

/* The tensor files of a folder, sorted by name; only input_* ones when
 * there are some (the ONNX test_data_set layout also holds output_*.pb).
 * A folder with no tensor files but subfolders that have some (a model
 * folder of test_data_set_N) gives those subfolders' files, subfolders
 * sorted by name. */
static int list_dir(const char *dir, strlist *out, bool descend, enpu_err *err) {
    DIR *d = opendir(dir);
    if (!d) return enpu_fail(err, ENPU_E_IO, "%s: cannot open folder", dir);
    strlist names = {0}, subdirs = {0};
    bool have_input = false;
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (tensor_file(e->d_name)) {
            if (strncmp(e->d_name, "input_", 6) == 0) have_input = true;
            rc = sl_push(&names, e->d_name, err);
        } else if (descend) {
            rc = sl_push(&subdirs, e->d_name, err);
        }
    }
    closedir(d);
    if (!rc && names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    if (!rc && subdirs.n) qsort(subdirs.v, (size_t)subdirs.n, sizeof *subdirs.v, cmp_str);
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
    for (int i = 0; names.n == 0 && i < subdirs.n && !rc; i++) {
        size_t n = strlen(dir) + strlen(subdirs.v[i]) + 2;
        char *p = malloc(n);
        struct stat st;
        if (!p) {
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            break;
        }
        snprintf(p, n, "%s/%s", dir, subdirs.v[i]);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) rc = list_dir(p, out, false, err);
        free(p);
    }
    sl_free(&names);
    sl_free(&subdirs);
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
            int before = out->n;
            rc = list_dir(item, out, true, err);
            if (!rc && out->n == before)
                rc = enpu_fail(err, ENPU_E_USAGE, "%s: no .npy, .npz or .pb files", item);
        } else {
            rc = sl_push(out, item, err);
        }
    }
    free(copy);
    if (!rc && out->n == 0) rc = enpu_fail(err, ENPU_E_USAGE, "'%s' names no input files", spec);
    return rc;
}

/* --- loading --------------------------------------------------------------------- */


/* Same shape once leading 1-dims are dropped from both. */

void enpu_calib_free(enpu_buf *bufs, int n_bufs) {
    if (!bufs) return;
    for (int i = 0; i < n_bufs; i++) enpu_buf_free(&bufs[i]);
    free(bufs);
}

void enpu_dataset_free(enpu_dataset *ds) {
    if (!ds) return;
    enpu_calib_free(ds->bufs, ds->n_samples * ds->n_inputs);
    for (int i = 0; ds->names && i < ds->n_samples; i++) free(ds->names[i]);
    free(ds->names);
    memset(ds, 0, sizeof *ds);
}

/* One array read from a file, waiting for the rest of its input set. */
typedef struct pending {
    enpu_buf b;
    char *name; /* the file, or "file:member" for an .npz member */
} pending;

/* a, or "a:b" when b is given, or "a[i]" when i >= 0, in a new string. */
static char *sample_name(const char *a, const char *b, long long i) {
    int n = b ? snprintf(NULL, 0, "%s:%s", a, b)
              : (i >= 0 ? snprintf(NULL, 0, "%s[%lld]", a, i) : (int)strlen(a));
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) return NULL;
    if (b) snprintf(s, (size_t)n + 1, "%s:%s", a, b);
    else if (i >= 0) snprintf(s, (size_t)n + 1, "%s[%lld]", a, i);
    else memcpy(s, a, (size_t)n + 1);
    return s;
}

/* Turns one input set of arrays (one per graph input, each the input's shape
 * or a stack [N, ...] of it, the same N for all) into N samples. */
static int add_group(const enpu_graph *g, pending *grp, int limit, int max_samples,
                     enpu_dataset *ds, int *cap, enpu_err *err) {
    int ni = g->n_inputs;
    int64_t n_stack = -1;
    bool stacked = false;
    for (int k = 0; k < ni; k++) {
        const enpu_tensor *t = &g->tensors[g->inputs[k]];
        enpu_buf *b = &grp[k].b;
        int64_t nk;
        bool sk = false;
        if (enpu_shape_fits(b->rank, b->dims, t->rank, t->dims)) {
            nk = 1;
        } else if (b->rank >= 1 && enpu_shape_fits(b->rank - 1, b->dims + 1, t->rank, t->dims)) {
            nk = b->dims[0];
            sk = true;
        } else {
            enpu_shape_error(err, grp[k].name, t->name, b->rank, b->dims, t->rank, t->dims);
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof err->msg - l, ", nor a stack [N, ...] of it");
            return err->code;
        }
        if (k > 0 && (nk != n_stack || sk != stacked))
            return enpu_fail(err, ENPU_E_INVALID,
                             "%s: %lld input set(s), but %s has %lld for the graph's first input",
                             grp[k].name, (long long)nk, grp[0].name, (long long)n_stack);
        n_stack = nk;
        stacked = sk;
        int rc = enpu_buf_to_f32(b, err);
        if (rc) return enpu_err_prefix(err, "%s", grp[k].name);
    }
    for (int64_t i = 0; i < n_stack; i++) {
        if (limit > 0 && ds->n_samples >= limit) {
            ds->truncated = true;
            return 0;
        }
        if (ds->n_samples >= max_samples)
            return enpu_fail(err, ENPU_E_LIMIT, "more than %d input sets", max_samples);
        if (ds->n_samples == *cap) {
            int nc = *cap ? 2 * *cap : 64;
            if (nc > max_samples) nc = max_samples;
            enpu_buf *nb = realloc(ds->bufs, (size_t)nc * ni * sizeof *nb);
            if (nb) ds->bufs = nb;
            char **nn = nb ? realloc(ds->names, (size_t)nc * sizeof *nn) : NULL;
            if (nn) ds->names = nn;
            if (!nb || !nn) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            *cap = nc;
        }
        enpu_buf *dst = ds->bufs + (size_t)ds->n_samples * ni;
        memset(dst, 0, (size_t)ni * sizeof *dst);
        char *name = sample_name(grp[0].name, NULL, stacked ? (long long)i : -1);
        if (!name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        ds->names[ds->n_samples] = name;
        for (int k = 0; k < ni; k++) {
            const enpu_tensor *t = &g->tensors[g->inputs[k]];
            int rc = enpu_buf_alloc(&dst[k], ENPU_DT_FLOAT32, t->rank, t->dims, err);
            if (rc) {
                for (int q = 0; q < k; q++) enpu_buf_free(&dst[q]);
                free(name);
                return rc;
            }
            int64_t cnt = enpu_tensor_numel(t);
            if (cnt) memcpy(dst[k].data, (const float *)grp[k].b.data + i * cnt, (size_t)cnt * sizeof(float));
        }
        ds->n_samples++;
    }
    return 0;
}

/* Loads every input set of spec into ds (appending). */
static int load_sets(const enpu_graph *g, const char *spec, int limit, int max_samples,
                     enpu_dataset *ds, int *cap, enpu_err *err) {
    if (!g || !spec || !ds) return enpu_fail(err, ENPU_E_USAGE, "loading inputs: NULL argument");
    if (g->n_inputs < 1) return enpu_fail(err, ENPU_E_USAGE, "the graph has no inputs");
    strlist files = {0};
    int rc = expand_spec(spec, &files, err), ni = g->n_inputs, have = 0;
    pending *grp = calloc((size_t)ni, sizeof *grp);
    if (!rc && !grp) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    for (int f = 0; f < files.n && !rc; f++) {
        if (limit > 0 && ds->n_samples >= limit) {
            ds->truncated = true;
            break;
        }
        const char *path = files.v[f];
        enpu_buf *arr = NULL, one;
        int n_arr = 0;
        bool npz = strcmp(enpu_path_ext(path), ".npz") == 0;
        if (npz) {
            rc = enpu_npz_read(path, &arr, &n_arr, err);
        } else {
            rc = enpu_tensor_read(path, &one, err);
            if (!rc) {
                arr = &one;
                n_arr = 1;
            }
        }
        for (int a = 0; a < n_arr; a++) {
            if (rc) {
                enpu_buf_free(&arr[a]);
                continue;
            }
            grp[have].b = arr[a];
            memset(&arr[a], 0, sizeof arr[a]);
            grp[have].name = sample_name(path, npz ? (grp[have].b.name ? grp[have].b.name : "") : NULL, -1);
            if (!grp[have].name) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            have++;
            if (!rc && have == ni) rc = add_group(g, grp, limit, max_samples, ds, cap, err);
            if (have == ni || rc) {
                for (int k = 0; k < have; k++) {
                    enpu_buf_free(&grp[k].b);
                    free(grp[k].name);
                }
                memset(grp, 0, (size_t)ni * sizeof *grp);
                have = 0;
            }
        }
        if (npz) free(arr);
    }
    if (!rc && have)
        rc = enpu_fail(err, ENPU_E_USAGE, "%s: the arrays are not a multiple of the graph's %d inputs",
                       spec, ni);
    for (int k = 0; grp && k < have; k++) {
        enpu_buf_free(&grp[k].b);
        free(grp[k].name);
    }
    free(grp);
    sl_free(&files);
    return rc;
}

int enpu_dataset_load(const enpu_graph *g, const char *spec, int limit, enpu_dataset *ds,
                      enpu_err *err) {
    if (!ds) return enpu_fail(err, ENPU_E_USAGE, "enpu_dataset_load: NULL argument");
    memset(ds, 0, sizeof *ds);
    if (g) ds->n_inputs = g->n_inputs;
    int cap = 0;
    int rc = load_sets(g, spec, limit, ENPU_DATASET_MAX_SAMPLES, ds, &cap, err);
    if (rc) enpu_dataset_free(ds);
    return rc;
}

int enpu_calib_append(const enpu_graph *g, const char *spec, enpu_buf **bufs, int *n_samples,
                      enpu_err *err) {
    if (!g || !spec || !bufs || !n_samples)
        return enpu_fail(err, ENPU_E_USAGE, "enpu_calib_load: NULL argument");
    enpu_dataset ds = {0};
    ds.n_inputs = g->n_inputs;
    int cap = 0;
    int rc = load_sets(g, spec, 0, ENPU_CALIB_MAX_FILES - *n_samples, &ds, &cap, err);
    if (rc) {
        enpu_dataset_free(&ds);
        return rc;
    }
    int ni = g->n_inputs;
    enpu_buf *nb = realloc(*bufs, (size_t)(*n_samples + ds.n_samples) * (size_t)ni * sizeof *nb + 1);
    if (!nb) {
        enpu_dataset_free(&ds);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    *bufs = nb;
    if (ds.n_samples)
        memcpy(nb + (size_t)*n_samples * ni, ds.bufs, (size_t)ds.n_samples * ni * sizeof *nb);
    *n_samples += ds.n_samples;
    free(ds.bufs);
    ds.bufs = NULL;
    enpu_dataset_free(&ds);
    return 0;
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
