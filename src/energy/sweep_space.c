/* The space of a sweep: parameters and their values, points by grid index,
 * a seeded random sample (docs/energy.md "Sweeps"). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/sweep.h"
#include "isa/isa_internal.h"

void enpu_sweep_space_init(enpu_sweep_space *s, const enpu_arch *base) {
    memset(s, 0, sizeof *s);
    s->base = *base;
    s->n_grid = s->n_points = 1;
}

void enpu_sweep_space_free(enpu_sweep_space *s) {
    for (int i = 0; i < s->n_params; i++) free(s->params[i].values);
    free(s->sample);
    memset(s, 0, sizeof *s);
}

/* Whether key names a double field (clock_mhz or a cost figure), an integer
 * one, or none (-1). */
static int field_kind(const char *key) {
    enpu_arch a;
    memset(&a, 0, sizeof a);
    if (strcmp(key, "clock_mhz") == 0 || enpu_arch_cost_ref(&a, key)) return 1;
    if (enpu_arch_param_ref(&a, key)) return 0;
    return -1;
}

/* A whole number (strtod, all of the text). */
static bool parse_num(const char *t, double *v) {
    char *end;
    errno = 0;
    while (*t == ' ') t++;
    *v = strtod(t, &end);
    while (*end == ' ') end++;
    return end != t && *end == 0 && errno == 0 && isfinite(*v);
}

static int add_value(enpu_sweep_param *p, double v, const char *key, enpu_err *err) {
    if (p->n >= ENPU_SWEEP_MAX_VALUES)
        return enpu_fail(err, ENPU_E_USAGE, "--param %s: more than %d values", key,
                         ENPU_SWEEP_MAX_VALUES);
    if (!p->is_double && (v != floor(v) || fabs(v) > 9.0e15))
        return enpu_fail(err, ENPU_E_USAGE, "--param %s: value %.17g is not an integer (the field is one)",
                         key, v);
    for (int i = 0; i < p->n; i++)
        if (p->values[i] == v)
            return enpu_fail(err, ENPU_E_USAGE, "--param %s: value %.17g given twice", key, v);
    p->values[p->n++] = v;
    return 0;
}

/* lo:hi, lo:hi:+step, lo:hi:step, lo:hi:xfactor */
static int parse_range(enpu_sweep_param *p, char *spec, const char *key, enpu_err *err) {
    char *parts[3] = {spec, NULL, NULL};
    int np = 1;
    for (char *c = spec; *c && np < 3; c++)
        if (*c == ':') *c = 0, parts[np++] = c + 1;
    if (np < 2 || strchr(parts[np - 1], ':'))
        return enpu_fail(err, ENPU_E_USAGE, "--param %s: a range is lo:hi, lo:hi:+step or lo:hi:xfactor",
                         key);
    double lo, hi, step = 1;
    bool geo = false;
    if (!parse_num(parts[0], &lo) || !parse_num(parts[1], &hi))
        return enpu_fail(err, ENPU_E_USAGE, "--param %s: range bounds '%s' and '%s' must be numbers",
                         key, parts[0], parts[1]);
    if (np == 3) {
        const char *st = parts[2];
        if (*st == 'x' || *st == '*') geo = true, st++;
        else if (*st == '+') st++;
        if (!parse_num(st, &step) || step <= 0 || (geo && step <= 1))
            return enpu_fail(err, ENPU_E_USAGE,
                             "--param %s: step '%s' must be a positive number (+step) or a factor "
                             "above 1 (xfactor)",
                             key, parts[2]);
    }
    if (hi < lo) return enpu_fail(err, ENPU_E_USAGE, "--param %s: range %g:%g is empty", key, lo, hi);
    if (geo && lo <= 0)
        return enpu_fail(err, ENPU_E_USAGE, "--param %s: a geometric range starts above 0", key);
    double v = lo;
    for (int k = 0;; k++) {
        /* computed from lo each time, so a long range does not drift */
        v = geo ? lo * pow(step, k) : lo + step * k;
        if (!p->is_double) v = round(v);
        if (v > hi * (1 + 1e-12) + 1e-12) break;
        int rc = add_value(p, v > hi ? hi : v, key, err);
        if (rc) return rc;
    }
    return 0;
}

int enpu_sweep_space_add(enpu_sweep_space *s, const char *key, const char *spec, enpu_err *err) {
    if (s->sample) return enpu_fail(err, ENPU_E_USAGE, "--param %s: after the sample was drawn", key);
    int kind = field_kind(key);
    if (kind < 0) {
        if (strcmp(key, "name") == 0 || strcmp(key, "engine") == 0)
            return enpu_fail(err, ENPU_E_USAGE, "--param %s: not a numeric field (docs/arch.md)", key);
        return enpu_fail(err, ENPU_E_USAGE,
                         "--param %s: not a field of the architecture description (easynpu arch "
                         "lists them)",
                         key);
    }
    for (int i = 0; i < s->n_params; i++)
        if (strcmp(s->params[i].key, key) == 0)
            return enpu_fail(err, ENPU_E_USAGE, "--param %s: given twice", key);
    if (s->n_params >= ENPU_SWEEP_MAX_PARAMS)
        return enpu_fail(err, ENPU_E_USAGE, "--param %s: more than %d parameters", key,
                         ENPU_SWEEP_MAX_PARAMS);
    enpu_sweep_param *p = &s->params[s->n_params];
    memset(p, 0, sizeof *p);
    snprintf(p->key, sizeof p->key, "%s", key);
    p->is_double = kind == 1;
    p->values = malloc(ENPU_SWEEP_MAX_VALUES * sizeof *p->values);
    char *t = strdup(spec);
    if (!p->values || !t) {
        free(p->values);
        free(t);
        p->values = NULL;
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    int rc = 0;
    if (strchr(t, ':')) {
        rc = parse_range(p, t, key, err);
    } else {
        char *save = NULL;
        for (char *tok = strtok_r(t, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
            double v;
            if (!parse_num(tok, &v)) rc = enpu_fail(err, ENPU_E_USAGE, "--param %s: '%s' is not a number", key, tok);
            else rc = add_value(p, v, key, err);
        }
    }
    free(t);
    if (!rc && p->n == 0) rc = enpu_fail(err, ENPU_E_USAGE, "--param %s: no values", key);
    if (!rc && (double)s->n_grid * p->n > (double)ENPU_SWEEP_MAX_GRID)
        rc = enpu_fail(err, ENPU_E_USAGE, "--param %s: the grid would have more than 2^53 points", key);
    if (rc) {
        free(p->values);
        p->values = NULL;
        return rc;
    }
    s->n_grid *= (uint64_t)p->n;
    s->n_points = s->n_grid;
    s->n_params++;
    return 0;
}

int enpu_sweep_space_add_arg(enpu_sweep_space *s, const char *arg, enpu_err *err) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return enpu_fail(err, ENPU_E_USAGE, "--param '%s': expected KEY=VALUES (a,b,c or lo:hi:+step or lo:hi:xfactor)", arg);
    char key[64];
    size_t n = (size_t)(eq - arg);
    if (n >= sizeof key) return enpu_fail(err, ENPU_E_USAGE, "--param '%s': key too long", arg);
    memcpy(key, arg, n);
    key[n] = 0;
    return enpu_sweep_space_add(s, key, eq + 1, err);
}

int enpu_sweep_space_from_json(enpu_sweep_space *s, const char *text, size_t n, const char *what,
                               enpu_err *err) {
    json_error_t je;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) return enpu_fail(err, ENPU_E_FORMAT, "%s: line %d: not valid JSON: %s", what, je.line, je.text);
    int rc = 0;
    json_t *params = json_object_get(root, "params");
    const char *key;
    json_t *v;
    if (!json_is_object(root) || !json_is_object(params)) {
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s: a sweep space is an object with an object \"params\"", what);
        goto done;
    }
    json_object_foreach(root, key, v) {
        if (strcmp(key, "params") && strcmp(key, "random") && strcmp(key, "seed")) {
            rc = enpu_fail(err, ENPU_E_FORMAT, "%s: unknown key '%s' (params, random, seed)", what, key);
            goto done;
        }
    }
    json_object_foreach(params, key, v) {
        enpu_sb b = {0};
        if (json_is_string(v)) {
            enpu_sb_puts(&b, json_string_value(v));
        } else if (json_is_array(v) && json_array_size(v) > 0) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                if (!json_is_number(e)) {
                    enpu_sb_free(&b);
                    rc = enpu_fail(err, ENPU_E_FORMAT, "%s: params '%s': values must be numbers", what, key);
                    goto done;
                }
                char d[40];
                enpu_fmt_double(d, sizeof d, json_number_value(e));
                enpu_sb_printf(&b, "%s%s", i ? "," : "", d);
            }
        } else {
            rc = enpu_fail(err, ENPU_E_FORMAT,
                           "%s: params '%s': a list of numbers or a range string \"lo:hi:+step\"", what, key);
            goto done;
        }
        char *spec = enpu_sb_take(&b);
        if (!spec) {
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            goto done;
        }
        rc = enpu_sweep_space_add(s, key, spec, err);
        free(spec);
        if (rc) {
            enpu_err_prefix(err, "%s", what);
            goto done;
        }
    }
    json_t *r = json_object_get(root, "random"), *sd = json_object_get(root, "seed");
    if ((r && (!json_is_integer(r) || json_integer_value(r) < 1)) ||
        (sd && (!json_is_integer(sd) || json_integer_value(sd) < 0))) {
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s: 'random' must be a positive integer, 'seed' a non-negative one", what);
        goto done;
    }
    if (r) rc = enpu_sweep_space_sample(s, (uint64_t)json_integer_value(r),
                                        sd ? (uint64_t)json_integer_value(sd) : 1, err);
done:
    json_decref(root);
    return rc;
}

/* ---- sampling ---------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, m), without modulo bias. */
static uint64_t uniform(uint64_t *st, uint64_t m) {
    uint64_t lim = (0 - m) % m, r;
    do r = splitmix64(st);
    while (r < lim);
    return r % m;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int enpu_sweep_space_sample(enpu_sweep_space *s, uint64_t n, uint64_t seed, enpu_err *err) {
    free(s->sample);
    s->sample = NULL;
    s->seed = seed;
    s->n_points = s->n_grid;
    if (n >= s->n_grid) return 0;
    if (n > ENPU_SWEEP_MAX_POINTS)
        return enpu_fail(err, ENPU_E_USAGE, "--random %" PRIu64 ": more than %d points", n,
                         ENPU_SWEEP_MAX_POINTS);
    /* Floyd's algorithm: n distinct indices, membership by an open-addressed
     * set of twice the size */
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    uint64_t *set = malloc(cap * sizeof *set), *out = malloc((size_t)n * sizeof *out);
    if (!set || !out) {
        free(set);
        free(out);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory drawing the sample");
    }
    for (size_t i = 0; i < cap; i++) set[i] = UINT64_MAX;
    uint64_t st = seed, k = 0;
    for (uint64_t j = s->n_grid - n; j < s->n_grid; j++) {
        uint64_t t = uniform(&st, j + 1);
        for (int pass = 0; pass < 2; pass++) {
            size_t h = (size_t)((t * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
            bool found = false;
            while (set[h] != UINT64_MAX) {
                if (set[h] == t) {
                    found = true;
                    break;
                }
                h = (h + 1) & (cap - 1);
            }
            if (!found) {
                set[h] = t;
                out[k++] = t;
                break;
            }
            t = j; /* t was taken: take j, which no earlier step could */
        }
    }
    free(set);
    qsort(out, (size_t)n, sizeof *out, cmp_u64);
    s->sample = out;
    s->n_points = n;
    return 0;
}

uint64_t enpu_sweep_point_index(const enpu_sweep_space *s, uint64_t k) {
    return s->sample ? s->sample[k] : k;
}

double enpu_sweep_point_value(const enpu_sweep_space *s, uint64_t idx, int p) {
    for (int q = s->n_params - 1; q > p; q--) idx /= (uint64_t)s->params[q].n;
    return s->params[p].values[idx % (uint64_t)s->params[p].n];
}

static bool swept(const enpu_sweep_space *s, const char *key) {
    for (int i = 0; i < s->n_params; i++)
        if (strcmp(s->params[i].key, key) == 0) return true;
    return false;
}

void enpu_sweep_point_arch(const enpu_sweep_space *s, uint64_t idx, enpu_arch *out) {
    *out = s->base;
    snprintf(out->name, sizeof out->name, "p%" PRIu64, idx);
    for (int i = 0; i < s->n_params; i++) {
        double v = enpu_sweep_point_value(s, idx, i);
        const char *key = s->params[i].key;
        if (strcmp(key, "clock_mhz") == 0) out->clock_mhz = v;
        else if (s->params[i].is_double) *enpu_arch_cost_ref(out, key) = v;
        else *enpu_arch_param_ref(out, key) = (int64_t)v;
    }
    /* the fields enpu_arch_validate ties to pes follow it */
    if (swept(s, "pes")) {
        if (!swept(s, "bus_bits")) out->bus_bits = 8 * out->pes;
        if (!swept(s, "ifmap_pads")) out->ifmap_pads = out->pes;
        if (!swept(s, "weight_pad_groups")) out->weight_pad_groups = out->pes;
    }
}

char *enpu_sweep_space_text(const enpu_sweep_space *s) {
    enpu_sb b = {0};
    char *a = enpu_arch_to_json(&s->base, 0);
    if (!a) return NULL;
    enpu_sb_printf(&b, "base %s\n", a);
    free(a);
    for (int i = 0; i < s->n_params; i++) {
        enpu_sb_printf(&b, "param %s", s->params[i].key);
        for (int k = 0; k < s->params[i].n; k++) {
            char d[40];
            enpu_fmt_double(d, sizeof d, s->params[i].values[k]);
            enpu_sb_printf(&b, "%s%s", k ? "," : " ", d);
        }
        enpu_sb_puts(&b, "\n");
    }
    if (s->sample) enpu_sb_printf(&b, "sample %" PRIu64 " seed %" PRIu64 "\n", s->n_points, s->seed);
    return enpu_sb_take(&b);
}
