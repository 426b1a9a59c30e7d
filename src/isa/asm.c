/* Text listing -> program (docs/program.md "Listing").  Errors are
 * "FILE:LINE: ..." naming the offending token or field. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/program.h"
#include "isa/isa_internal.h"
#include "isa/listing.h"

typedef struct tok {
    char *key;
    char *val; /* NULL for a bare word */
} tok;

typedef struct asmst {
    const char *what;
    int line;
    enpu_err *err;
    enpu_program *p;
    const enpu_arch *dflt;
    int have_arch;
    enpu_isa_layout lay;
    int *instr_line;
    int cap_lines;
    int cur_image;    /* index into img, -1 before any .section */
    int seen_image[5];
    enpu_sb img[5];
    tok *toks;
    int n_toks, cap_toks;
} asmst;

static const char *const image_names[5] = {"weights", "dtcm_init", "skip_init", "dram_init",
                                           "host_init"};
static const int image_ids[5] = {ENPU_SEC_WEIGHTS, ENPU_SEC_DTCM_INIT, ENPU_SEC_SKIP_INIT,
                                 ENPU_SEC_DRAM_INIT, ENPU_SEC_HOST_INIT};

#define AFAIL(st, code, ...) \
    (enpu_fail((st)->err, code, __VA_ARGS__), enpu_err_prefix((st)->err, "%s:%d", (st)->what, (st)->line))
#define SYNTAX(st, ...) AFAIL(st, ENPU_E_FORMAT, __VA_ARGS__)
#define BAD(st, ...) AFAIL(st, ENPU_E_INVALID, __VA_ARGS__)

/* ---- tokenizer --------------------------------------------------------------- */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parses the quoted string at *pp (pointing at '"') in place into out
 * (which may alias), advancing *pp past the closing quote. */
static int unquote(asmst *st, char **pp, char *out) {
    char *p = *pp + 1;
    char *o = out;
    for (;;) {
        if (*p == 0) return SYNTAX(st, "unterminated string");
        if (*p == '"') break;
        if (*p == '\\') {
            p++;
            if (*p == '"' || *p == '\\') {
                *o++ = *p++;
            } else if (*p == 'x' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
                int v = hexval(p[1]) * 16 + hexval(p[2]);
                if (v == 0) return SYNTAX(st, "\\x00 in a string");
                *o++ = (char)v;
                p += 3;
            } else {
                return SYNTAX(st, "bad escape '\\%c' in a string (use \\\", \\\\ or \\xHH)", *p ? *p : ' ');
            }
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    *pp = p + 1;
    return 0;
}

static int push_tok(asmst *st, char *key, char *val) {
    if (st->n_toks == st->cap_toks) {
        int cap = st->cap_toks ? st->cap_toks * 2 : 32;
        tok *nt = realloc(st->toks, (size_t)cap * sizeof *nt);
        if (!nt) return enpu_fail(st->err, ENPU_E_NOMEM, "out of memory");
        st->toks = nt;
        st->cap_toks = cap;
    }
    st->toks[st->n_toks++] = (tok){key, val};
    return 0;
}

/* Splits a (mutable) line into bare words and key=value tokens, dropping a
 * ';' comment.  Values may be "quoted strings". */
static int is_sep(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static int tokenize(asmst *st, char *s) {
    st->n_toks = 0;
    for (;;) {
        while (is_sep(*s)) s++;
        if (*s == 0 || *s == ';') return 0;
        char *key = s;
        while (*s && !is_sep(*s) && *s != ';' && *s != '=' && *s != '"') s++;
        if (*s == '"') return SYNTAX(st, "unexpected '\"' after '%.*s'", (int)(s - key), key);
        char *val = NULL;
        if (*s == '=') {
            if (s == key) return SYNTAX(st, "'=' without a key");
            *s++ = 0;
            val = s;
            if (*s == '"') {
                char *q = s;
                int rc = unquote(st, &q, s); /* writes the unquoted text at s, NUL-terminated */
                if (rc) return rc;
                if (*q && !is_sep(*q) && *q != ';')
                    return SYNTAX(st, "text after the closing quote of '%s='", key);
                s = q;
                int rc2 = push_tok(st, key, val);
                if (rc2) return rc2;
                continue;
            }
            while (*s && !is_sep(*s) && *s != ';') s++;
        }
        char c = *s;
        *s = 0;
        int rc = push_tok(st, key, val);
        if (rc || c == 0 || c == ';') return rc;
        s++;
    }
}

/* ---- value parsers ------------------------------------------------------------ */

/* Decimal (optionally signed) or 0x hex; whole string. */
static int parse_i64(const char *s, int64_t *out) {
    if (!*s) return -1;
    const char *p = s;
    int neg = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) base = 16, p += 2;
    if (!*p || *p == '-' || *p == '+' || *p == ' ') return -1;
    errno = 0;
    char *end;
    unsigned long long u = strtoull(p, &end, base);
    if (errno || *end) return -1;
    if (neg) {
        if (u > (unsigned long long)INT64_MAX + 1) return -1;
        *out = u == (unsigned long long)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    } else {
        if (u > (unsigned long long)INT64_MAX) return -1;
        *out = (int64_t)u;
    }
    return 0;
}

static int want_int(asmst *st, const tok *t, int64_t lo, int64_t hi, int64_t *out) {
    if (!t->val) return SYNTAX(st, "'%s' needs a value (%s=N)", t->key, t->key);
    if (parse_i64(t->val, out) != 0) return SYNTAX(st, "%s: '%s' is not an integer", t->key, t->val);
    if (*out < lo || *out > hi)
        return BAD(st, "%s: value %" PRId64 " out of range %" PRId64 "..%" PRId64, t->key, *out, lo, hi);
    return 0;
}

static int want_float(asmst *st, const tok *t, float *out) {
    if (!t->val || !*t->val) return SYNTAX(st, "'%s' needs a value", t->key);
    errno = 0;
    char *end;
    *out = strtof(t->val, &end);
    /* ERANGE also flags a subnormal result, which is a float32 the
     * disassembler writes: refuse only an overflow. */
    if (*end || (errno == ERANGE && isinf(*out)))
        return SYNTAX(st, "%s: '%s' is not a float32 number", t->key, t->val);
    return 0;
}

static int want_str(asmst *st, const tok *t) {
    if (!t->val) return SYNTAX(st, "'%s' needs a value (%s=\"...\")", t->key, t->key);
    if (strlen(t->val) > ENPU_MAX_NAME)
        return AFAIL(st, ENPU_E_LIMIT, "%s: string longer than %d bytes", t->key, ENPU_MAX_NAME);
    return 0;
}

/* Comma-separated integers into out[max]; *n gets the count. */
static int want_list(asmst *st, const tok *t, int64_t lo, int64_t hi, int64_t *out, int max, int *n) {
    if (!t->val) return SYNTAX(st, "'%s' needs a value (%s=a,b,...)", t->key, t->key);
    *n = 0;
    if (!*t->val) return 0;
    char buf[512];
    if (strlen(t->val) >= sizeof buf) return SYNTAX(st, "%s: list too long", t->key);
    strcpy(buf, t->val);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (*n >= max) return BAD(st, "%s: more than %d values", t->key, max);
        int64_t v;
        if (parse_i64(it, &v) != 0) return SYNTAX(st, "%s: '%s' is not an integer", t->key, it);
        if (v < lo || v > hi)
            return BAD(st, "%s: value %" PRId64 " out of range %" PRId64 "..%" PRId64, t->key, v, lo, hi);
        out[(*n)++] = v;
    }
    return 0;
}

/* Index of the "a|b|c" spelling equal to s, -1 if none. */
static int64_t name_index(const char *names, const char *s) {
    if (!names) return -1;
    size_t len = strlen(s);
    int64_t i = 0;
    for (const char *p = names;; i++) {
        size_t k = strcspn(p, "|");
        if (k == len && strncmp(p, s, k) == 0) return i;
        if (!p[k]) return -1;
        p += k + 1;
    }
}

/* ---- directives ------------------------------------------------------------------ */

static int set_arch(asmst *st, const enpu_arch *a) {
    if (st->dflt && enpu_arch_fingerprint(st->dflt) != enpu_arch_fingerprint(a))
        return AFAIL(st, ENPU_E_INCOMPATIBLE,
                     ".arch: the listing's arch '%s' (fingerprint 0x%08" PRIx32 ") differs from the "
                     "selected arch '%s' (fingerprint 0x%08" PRIx32 ")",
                     a->name, enpu_arch_fingerprint(a), st->dflt->name, enpu_arch_fingerprint(st->dflt));
    st->p->arch = *a;
    st->have_arch = 1;
    int rc = enpu_isa_layout_make(a, &st->lay, st->err);
    if (rc) return enpu_err_prefix(st->err, "%s:%d", st->what, st->line);
    return 0;
}

static int ensure_arch(asmst *st) {
    if (st->have_arch) return 0;
    enpu_arch a;
    if (st->dflt) {
        a = *st->dflt;
    } else {
        int rc = enpu_arch_preset("easynpu", &a, st->err);
        if (rc) return rc;
    }
    return set_arch(st, &a);
}

/* `.arch` takes the rest of the line: a JSON object or a preset name. */
static int do_arch(asmst *st, char *rest) {
    if (st->have_arch) return BAD(st, ".arch: a second .arch (or .arch after the first instruction)");
    while (*rest == ' ' || *rest == '\t') rest++;
    size_t n = strlen(rest);
    while (n && (rest[n - 1] == ' ' || rest[n - 1] == '\t' || rest[n - 1] == '\r')) rest[--n] = 0;
    enpu_arch a;
    int rc;
    if (rest[0] == '{') {
        char what[64];
        snprintf(what, sizeof what, ".arch");
        rc = enpu_arch_from_canonical_json(rest, n, what, &a, st->err);
    } else {
        char *sc = strchr(rest, ';');
        if (sc) *sc = 0;
        n = strlen(rest);
        while (n && (rest[n - 1] == ' ' || rest[n - 1] == '\t')) rest[--n] = 0;
        if (!n) return SYNTAX(st, ".arch needs a JSON object or a preset name");
        rc = enpu_arch_preset(rest, &a, st->err);
    }
    if (rc) return enpu_err_prefix(st->err, "%s:%d", st->what, st->line);
    return set_arch(st, &a);
}

static int do_format(asmst *st) {
    if (st->n_toks != 2 || st->toks[1].val) return SYNTAX(st, ".format needs MAJOR.MINOR");
    unsigned maj, min;
    char extra;
    if (sscanf(st->toks[1].key, "%u.%u%c", &maj, &min, &extra) != 2)
        return SYNTAX(st, ".format: '%s' is not MAJOR.MINOR", st->toks[1].key);
    if (maj != ENPU_PROG_VERSION_MAJOR || min > ENPU_PROG_VERSION_MINOR)
        return AFAIL(st, ENPU_E_UNSUPPORTED, ".format %u.%u: this assembler writes %d.%d", maj, min,
                     ENPU_PROG_VERSION_MAJOR, ENPU_PROG_VERSION_MINOR);
    return 0;
}

static int dup_key(asmst *st, int i) {
    for (int j = 1; j < i; j++)
        if (strcmp(st->toks[j].key, st->toks[i].key) == 0)
            return BAD(st, "'%s' given twice", st->toks[i].key);
    return 0;
}

static int do_table(asmst *st) {
    enpu_table_desc t = {0};
    const char *name = NULL;
    int rc = 0;
    for (int i = 1; i < st->n_toks && !rc; i++) {
        tok *k = &st->toks[i];
        int64_t v;
        if ((rc = dup_key(st, i))) break;
        if (strcmp(k->key, "name") == 0) {
            if (!(rc = want_str(st, k))) name = k->val;
        } else if (strcmp(k->key, "addr") == 0) {
            if (!(rc = want_int(st, k, 0, UINT32_MAX, &v))) t.addr = (uint32_t)v;
        } else if (strcmp(k->key, "segments") == 0) {
            if (!(rc = want_int(st, k, 0, UINT32_MAX, &v))) t.segments = (uint32_t)v;
        } else if (strcmp(k->key, "max_err_lsb") == 0) {
            rc = want_float(st, k, &t.max_err_lsb);
        } else {
            rc = BAD(st, ".table: unknown key '%s' (name, addr, segments, max_err_lsb)", k->key);
        }
    }
    if (rc) return rc;
    t.name = (char *)(name ? name : "");
    rc = enpu_program_add_table(st->p, &t, st->err);
    return rc < 0 ? enpu_err_prefix(st->err, "%s:%d", st->what, st->line) : 0;
}

static int parse_dtype(const char *s) {
    for (int d = 1; d <= 16; d++) {
        if (enpu_dtype_size((enpu_dtype)d) == 0) continue;
        if (strcmp(enpu_dtype_name((enpu_dtype)d), s) == 0) return d;
    }
    return -1;
}

static int do_io(asmst *st) {
    enpu_io_desc d = {0};
    d.mem = ENPU_MEM_MAIN;
    if (st->n_toks < 2 || st->toks[1].val)
        return SYNTAX(st, ".io needs a direction: input, output, host, probe or const");
    int dir = -1;
    for (int k = 0; k <= ENPU_IO_CONST; k++)
        if (strcmp(st->toks[1].key, enpu_listing_dir_name(k)) == 0) dir = k;
    if (dir < 0)
        return BAD(st, ".io: direction '%s' is not input, output, host, probe or const",
                   st->toks[1].key);
    d.dir = (enpu_io_dir)dir;
    const char *name = NULL;
    int rc = 0, have_shape = 0, have_dtype = 0;
    for (int i = 2; i < st->n_toks && !rc; i++) {
        tok *k = &st->toks[i];
        int64_t v;
        if ((rc = dup_key(st, i))) break;
        if (strcmp(k->key, "name") == 0) {
            if (!(rc = want_str(st, k))) name = k->val;
        } else if (strcmp(k->key, "dtype") == 0) {
            int dt = k->val ? parse_dtype(k->val) : -1;
            if (dt < 0) rc = BAD(st, ".io: dtype '%s' is not known", k->val ? k->val : "");
            d.dtype = (enpu_dtype)dt;
            have_dtype = 1;
        } else if (strcmp(k->key, "layout") == 0) {
            int lay = -1;
            for (int x = 0; x <= ENPU_LAYOUT_NHWC; x++)
                if (k->val && strcmp(k->val, enpu_listing_layout_name(x)) == 0) lay = x;
            if (lay < 0) rc = BAD(st, ".io: layout '%s' is not any, nchw or nhwc", k->val ? k->val : "");
            d.layout = (enpu_layout)lay;
        } else if (strcmp(k->key, "shape") == 0) {
            have_shape = 1;
            if (!k->val || !*k->val) {
                rc = SYNTAX(st, ".io: shape needs AxBx... or scalar");
            } else if (strcmp(k->val, "scalar") != 0) {
                char buf[256];
                if (strlen(k->val) >= sizeof buf) {
                    rc = SYNTAX(st, ".io: shape too long");
                    break;
                }
                strcpy(buf, k->val);
                for (char *save = NULL, *it = strtok_r(buf, "x", &save); it && !rc;
                     it = strtok_r(NULL, "x", &save)) {
                    if (d.rank >= ENPU_MAX_RANK) rc = AFAIL(st, ENPU_E_LIMIT, ".io: shape has more than %d dims", ENPU_MAX_RANK);
                    else if (parse_i64(it, &v) != 0 || v < 1 || v > ENPU_MAX_DIM)
                        rc = BAD(st, ".io: shape dim '%s' is not in 1..%" PRId64, it, (int64_t)ENPU_MAX_DIM);
                    else
                        d.dims[d.rank++] = v;
                }
            }
        } else if (strcmp(k->key, "scale") == 0) {
            rc = want_float(st, k, &d.scale);
        } else if (strcmp(k->key, "zero_point") == 0) {
            if (!(rc = want_int(st, k, INT32_MIN, INT32_MAX, &v))) d.zero_point = (int32_t)v;
        } else if (strcmp(k->key, "mem") == 0) {
            int m = -1;
            static const int mems[] = {ENPU_MEM_MAIN, ENPU_MEM_SKIP, ENPU_MEM_HOST, ENPU_MEM_DRAM};
            for (int x = 0; x < 4; x++)
                if (k->val && strcmp(k->val, enpu_listing_mem_name(mems[x])) == 0) m = mems[x];
            if (m < 0) rc = BAD(st, ".io: mem '%s' is not main, skip, host or dram", k->val ? k->val : "");
            d.mem = m;
        } else if (strcmp(k->key, "addr") == 0) {
            if (!(rc = want_int(st, k, 0, UINT32_MAX, &v))) d.addr = (uint32_t)v;
        } else if (strcmp(k->key, "row") == 0) {
            if (!(rc = want_int(st, k, 1, ENPU_MAX_DIM, &v))) d.row = v;
        } else {
            rc = BAD(st, ".io: unknown key '%s' (name, dtype, layout, shape, row, scale, zero_point, mem, addr)",
                     k->key);
        }
    }
    if (rc) return rc;
    if (!name || !have_shape || !have_dtype) return BAD(st, ".io: name, dtype and shape are required");
    d.name = (char *)name;
    rc = enpu_program_add_io(st->p, &d, st->err);
    return rc < 0 ? enpu_err_prefix(st->err, "%s:%d", st->what, st->line) : 0;
}

static int do_hostop(asmst *st) {
    enpu_hostop h = {0};
    const char *kind = NULL, *name = NULL;
    int64_t in[ENPU_HOSTOP_MAX_IO], out[ENPU_HOSTOP_MAX_IO], ip[ENPU_HOSTOP_IPARAMS];
    int n_in = 0, n_out = 0, n_ip = 0, rc = 0;
    for (int i = 1; i < st->n_toks && !rc; i++) {
        tok *k = &st->toks[i];
        if ((rc = dup_key(st, i))) break;
        if (strcmp(k->key, "kind") == 0) {
            if (!(rc = want_str(st, k))) kind = k->val;
        } else if (strcmp(k->key, "name") == 0) {
            if (!(rc = want_str(st, k))) name = k->val;
        } else if (strcmp(k->key, "in") == 0) {
            rc = want_list(st, k, -1, ENPU_PROG_MAX_IO, in, ENPU_HOSTOP_MAX_IO, &n_in);
        } else if (strcmp(k->key, "out") == 0) {
            rc = want_list(st, k, -1, ENPU_PROG_MAX_IO, out, ENPU_HOSTOP_MAX_IO, &n_out);
        } else if (strcmp(k->key, "iparam") == 0) {
            rc = want_list(st, k, INT32_MIN, INT32_MAX, ip, ENPU_HOSTOP_IPARAMS, &n_ip);
        } else if (strcmp(k->key, "fparam") == 0) {
            if (!k->val) {
                rc = SYNTAX(st, "'fparam' needs a value");
                break;
            }
            char buf[512];
            if (strlen(k->val) >= sizeof buf) {
                rc = SYNTAX(st, "fparam: list too long");
                break;
            }
            strcpy(buf, k->val);
            int nf = 0;
            for (char *save = NULL, *it = strtok_r(buf, ",", &save); it && !rc;
                 it = strtok_r(NULL, ",", &save)) {
                tok one = {"fparam", it};
                if (nf >= ENPU_HOSTOP_FPARAMS) rc = BAD(st, "fparam: more than %d values", ENPU_HOSTOP_FPARAMS);
                else rc = want_float(st, &one, &h.fparam[nf++]);
            }
        } else {
            rc = BAD(st, ".hostop: unknown key '%s' (kind, name, in, out, iparam, fparam)", k->key);
        }
    }
    if (rc) return rc;
    if (!kind) return BAD(st, ".hostop: kind is required");
    if (n_in + n_out > ENPU_HOSTOP_MAX_IO)
        return BAD(st, ".hostop: %d operands, more than %d", n_in + n_out, ENPU_HOSTOP_MAX_IO);
    h.n_in = n_in;
    h.n_out = n_out;
    for (int i = 0; i < n_in; i++) h.io[i] = (int)in[i];
    for (int i = 0; i < n_out; i++) h.io[n_in + i] = (int)out[i];
    for (int i = 0; i < n_ip; i++) h.iparam[i] = (int32_t)ip[i];
    h.kind = (char *)kind;
    h.name = (char *)(name ? name : "");
    rc = enpu_program_add_hostop(st->p, &h, st->err);
    return rc < 0 ? enpu_err_prefix(st->err, "%s:%d", st->what, st->line) : 0;
}

static int do_section(asmst *st) {
    if (st->n_toks != 2 || st->toks[1].val)
        return SYNTAX(st, ".section needs a name: weights, dtcm_init, skip_init, dram_init or "
                          "host_init");
    for (int i = 0; i < 5; i++) {
        if (strcmp(st->toks[1].key, image_names[i]) != 0) continue;
        if (st->seen_image[i]) return BAD(st, ".section %s: given twice", image_names[i]);
        st->seen_image[i] = 1;
        st->cur_image = i;
        return 0;
    }
    return BAD(st, ".section: '%s' is not weights, dtcm_init, skip_init, dram_init or host_init",
               st->toks[1].key);
}

static int image_room(asmst *st, size_t add) {
    enpu_sb *b = &st->img[st->cur_image];
    if (add > (size_t)ENPU_ARCH_MEM_MAX || b->len > (size_t)ENPU_ARCH_MEM_MAX - add)
        return AFAIL(st, ENPU_E_LIMIT, ".section %s: more than 1 GiB", image_names[st->cur_image]);
    return 0;
}

static int do_hex(asmst *st) {
    if (st->cur_image < 0) return SYNTAX(st, ".hex before any .section");
    enpu_sb *b = &st->img[st->cur_image];
    for (int i = 1; i < st->n_toks; i++) {
        const char *h = st->toks[i].key;
        if (st->toks[i].val) return SYNTAX(st, ".hex: '%s=' is not hex data", h);
        size_t n = strlen(h);
        if (n % 2) return SYNTAX(st, ".hex: '%s' has an odd number of digits", h);
        int rc = image_room(st, n / 2);
        if (rc) return rc;
        for (size_t k = 0; k < n; k += 2) {
            int a = hexval(h[k]), c = hexval(h[k + 1]);
            if (a < 0 || c < 0) return SYNTAX(st, ".hex: '%s' is not hex", h);
            uint8_t byte = (uint8_t)(a * 16 + c);
            enpu_sb_put(b, &byte, 1);
        }
    }
    return 0;
}

static int do_zero(asmst *st) {
    if (st->cur_image < 0) return SYNTAX(st, ".zero before any .section");
    int64_t v;
    if (st->n_toks != 2 || st->toks[1].val || parse_i64(st->toks[1].key, &v) != 0 || v < 0)
        return SYNTAX(st, ".zero needs a byte count");
    int rc = image_room(st, (size_t)(v > ENPU_ARCH_MEM_MAX ? ENPU_ARCH_MEM_MAX + 1 : v));
    if (rc) return rc;
    enpu_sb_zero(&st->img[st->cur_image], (size_t)v);
    return 0;
}

/* ---- instructions ---------------------------------------------------------------------- */

static int do_instr(asmst *st) {
    const char *mn = st->toks[0].key;
    if (st->toks[0].val) return SYNTAX(st, "expected an instruction mnemonic, got '%s=%s'", mn, st->toks[0].val);
    int op = enpu_opcode_find(mn);
    if (op < 0) return SYNTAX(st, "unknown mnemonic '%s'", mn);
    int rc = ensure_arch(st);
    if (rc) return rc;
    if (st->cur_image >= 0) return SYNTAX(st, "instruction after a .section");
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = op;
    int seen[ENPU_F_COUNT] = {0};
    const char *name = NULL, *out = NULL;
    int64_t out_io = -1, group = -1, macs = -1;
    int seen_io = 0;
    int n_src = 0;
    const char **src = NULL;
    for (int i = 1; i < st->n_toks; i++) {
        tok *t = &st->toks[i];
        if (strcmp(t->key, "out") == 0) {
            if ((rc = want_str(st, t))) break;
            if (out) {
                rc = BAD(st, "'out' given twice");
                break;
            }
            out = t->val;
            continue;
        }
        if (strcmp(t->key, "out_io") == 0) {
            if (seen_io) {
                rc = BAD(st, "'out_io' given twice");
                break;
            }
            seen_io = 1;
            if (!t->val || parse_i64(t->val, &out_io) != 0 || out_io < -1 || out_io >= ENPU_PROG_MAX_IO) {
                rc = SYNTAX(st, "out_io: '%s' is not an IO index (-1..%d)", t->val ? t->val : "",
                            ENPU_PROG_MAX_IO - 1);
                break;
            }
            continue;
        }
        if (strcmp(t->key, "group") == 0) {
            if (group >= 0) {
                rc = BAD(st, "'group' given twice");
                break;
            }
            if (!t->val || parse_i64(t->val, &group) != 0 || group < 0 || group >= ENPU_PROG_MAX_INSTRS) {
                rc = SYNTAX(st, "group: '%s' is not an instruction index", t->val ? t->val : "");
                break;
            }
            continue;
        }
        if (strcmp(t->key, "macs") == 0) {
            if (macs >= 0) {
                rc = BAD(st, "'macs' given twice");
                break;
            }
            if ((rc = want_int(st, t, 0, INT64_MAX, &macs))) break;
            continue;
        }
        if (strcmp(t->key, "name") == 0 || strcmp(t->key, "src") == 0) {
            if ((rc = want_str(st, t))) break;
            if (t->key[0] == 'n') {
                if (name) {
                    rc = BAD(st, "'name' given twice");
                    break;
                }
                name = t->val;
            } else {
                const char **ns = realloc(src, (size_t)(n_src + 1) * sizeof *ns);
                if (!ns) {
                    rc = enpu_fail(st->err, ENPU_E_NOMEM, "out of memory");
                    break;
                }
                src = ns;
                src[n_src++] = t->val;
            }
            continue;
        }
        int f = enpu_field_find(t->key);
        if (f < 0 || f == ENPU_F_opcode) {
            rc = BAD(st, "%s: unknown field '%s'", mn, t->key);
            break;
        }
        if (seen[f]) {
            rc = BAD(st, "field '%s' given twice", t->key);
            break;
        }
        seen[f] = 1;
        if (!t->val) {
            rc = SYNTAX(st, "field '%s' needs a value (%s=N)", t->key, t->key);
            break;
        }
        int64_t v = name_index(enpu_field_get(f)->value_names, t->val);
        if (v < 0 && parse_i64(t->val, &v) != 0) {
            const char *vn = enpu_field_get(f)->value_names;
            rc = vn ? SYNTAX(st, "field '%s': '%s' is not a number or one of %s", t->key, t->val, vn)
                    : SYNTAX(st, "field '%s': '%s' is not a number", t->key, t->val);
            break;
        }
        int64_t lo, hi;
        enpu_field_range(&st->lay, f, &lo, &hi);
        if (v < lo || v > hi) {
            rc = BAD(st, "field '%s': value %" PRId64 " out of range %" PRId64 "..%" PRId64 " (%d bits)",
                     t->key, v, lo, hi, st->lay.width[f]);
            break;
        }
        *enpu_instr_field(&in, f) = v;
    }
    if (!rc) {
        int n = st->p->n_instr;
        int chained = n > 0 && st->p->instr[n - 1].fuse_next;
        rc = enpu_instr_validate_chained(&st->p->arch, &in, chained, st->err);
        if (rc) enpu_err_prefix(st->err, "%s:%d: %s", st->what, st->line, mn);
    }
    if (!rc && st->p->n_instr >= st->cap_lines) {
        int cap = st->cap_lines ? st->cap_lines * 2 : 64;
        int *nl = realloc(st->instr_line, (size_t)cap * sizeof *nl);
        if (!nl) rc = enpu_fail(st->err, ENPU_E_NOMEM, "out of memory");
        else st->instr_line = nl, st->cap_lines = cap;
    }
    if (!rc) {
        st->instr_line[st->p->n_instr] = st->line;
        rc = enpu_program_add_instr(st->p, &in, name, n_src, src, st->err);
        if (!rc && (out || out_io >= 0))
            rc = enpu_program_set_layer_output(st->p, st->p->n_instr - 1, out ? out : "", (int)out_io,
                                               st->err);
        if (!rc && group >= 0) rc = enpu_program_set_layer_group(st->p, st->p->n_instr - 1, (int)group, st->err);
        if (!rc && macs >= 0) st->p->layers[st->p->n_instr - 1].macs = macs;
        if (rc) enpu_err_prefix(st->err, "%s:%d", st->what, st->line);
    }
    free(src);
    return rc;
}

static int do_line(asmst *st, char *line) {
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (strncmp(s, ".arch", 5) == 0 && (s[5] == ' ' || s[5] == '\t' || s[5] == 0)) return do_arch(st, s + 5);
    int rc = tokenize(st, s);
    if (rc || st->n_toks == 0) return rc;
    const char *d = st->toks[0].key;
    if (d[0] != '.') return do_instr(st);
    if (strcmp(d, ".format") == 0) return do_format(st);
    if (strcmp(d, ".section") == 0) return do_section(st);
    if (strcmp(d, ".hex") == 0) return do_hex(st);
    if (strcmp(d, ".zero") == 0) return do_zero(st);
    if (st->cur_image >= 0) return SYNTAX(st, "%s after a .section (descriptors come first)", d);
    if ((rc = ensure_arch(st))) return rc;
    if (strcmp(d, ".table") == 0) return do_table(st);
    if (strcmp(d, ".io") == 0) return do_io(st);
    if (strcmp(d, ".hostop") == 0) return do_hostop(st);
    return SYNTAX(st, "unknown directive '%s'", d);
}

int enpu_program_asm(const char *text, size_t n, const char *what, const enpu_arch *dflt,
                     enpu_program *p, enpu_err *err) {
    memset(p, 0, sizeof *p);
    asmst st;
    memset(&st, 0, sizeof st);
    st.what = what;
    st.err = err;
    st.p = p;
    st.dflt = dflt;
    st.cur_image = -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    size_t pos = 0;
    while (pos < n && !rc) {
        const char *nl = memchr(text + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (text + pos)) : n - pos;
        st.line++;
        if (len + 1 > cap) {
            char *nb = realloc(line, len + 1);
            if (!nb) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            line = nb;
            cap = len + 1;
        }
        memcpy(line, text + pos, len);
        line[len] = 0;
        if (memchr(line, 0, len)) rc = SYNTAX(&st, "NUL byte in the listing");
        else rc = do_line(&st, line);
        pos += len + 1;
    }
    free(line);
    free(st.toks);
    if (!rc) rc = ensure_arch(&st);
    for (int i = 0; i < 5; i++) {
        if (!rc && st.img[i].len) {
            if (st.img[i].oom) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            } else {
                size_t ilen = st.img[i].len;
                char *data = enpu_sb_take(&st.img[i]);
                rc = data ? enpu_program_set_image(p, image_ids[i], data, ilen, err)
                          : enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                free(data);
            }
        }
        enpu_sb_free(&st.img[i]);
    }
    if (!rc) {
        rc = enpu_program_validate(p, err);
        if (rc) {
            int k;
            if (sscanf(err->msg, "section INSTR: instruction %d", &k) == 1 && k >= 0 && k < p->n_instr)
                enpu_err_prefix(err, "%s:%d", what, st.instr_line[k]);
            else
                enpu_err_prefix(err, "%s", what);
        }
    }
    free(st.instr_line);
    if (rc) enpu_program_free(p);
    return rc;
}
