/* The .enpu binary format: serializer and the checking reader
 * (docs/program.md has the byte layout). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "easynpu/file.h"
#include "easynpu/program.h"
#include "isa/isa_internal.h"

#define N_SECTIONS 12

static const int section_order[N_SECTIONS] = {
#define ENPU_X_SEC(ID, id, sp) ENPU_SEC_##ID,
    ENPU_SECTIONS(ENPU_X_SEC)
#undef ENPU_X_SEC
};

/* ---- little-endian helpers --------------------------------------------------- */

static void put_u8(enpu_sb *b, unsigned v) {
    uint8_t c = (uint8_t)v;
    enpu_sb_put(b, &c, 1);
}
static void put_u16(enpu_sb *b, uint32_t v) {
    uint8_t c[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    enpu_sb_put(b, c, 2);
}
static void put_u32(enpu_sb *b, uint32_t v) {
    uint8_t c[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    enpu_sb_put(b, c, 4);
}
static void put_u64(enpu_sb *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}
static void put_f32(enpu_sb *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(b, u);
}
static uint32_t get_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) { return get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }
static float get_f32(const uint8_t *p) {
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void set_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static uint32_t crc(const uint8_t *p, size_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) { /* zlib takes uInt lengths */
        uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

/* ---- string interning for the writer ------------------------------------------ */

typedef struct strtab {
    enpu_sb data;      /* "\0" then NUL-terminated strings */
    uint32_t *slots;   /* offset + 1, 0 = empty */
    size_t cap, count;
    int oom;
} strtab;

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int strtab_grow(strtab *t) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    uint32_t *ns = calloc(cap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i]) continue;
        size_t j = fnv(t->data.s + t->slots[i] - 1) & (cap - 1);
        while (ns[j]) j = (j + 1) & (cap - 1);
        ns[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = ns;
    t->cap = cap;
    return 0;
}

static uint32_t intern(strtab *t, const char *s) {
    if (!s || !*s || t->oom) return 0;
    if ((t->count + 1) * 2 > t->cap && strtab_grow(t) != 0) {
        t->oom = 1;
        return 0;
    }
    size_t j = fnv(s) & (t->cap - 1);
    while (t->slots[j]) {
        if (strcmp(t->data.s + t->slots[j] - 1, s) == 0) return t->slots[j] - 1;
        j = (j + 1) & (t->cap - 1);
    }
    size_t off = t->data.len;
    if (off >= UINT32_MAX - 1) {
        t->oom = 1;
        return 0;
    }
    enpu_sb_put(&t->data, s, strlen(s) + 1);
    if (t->data.oom) {
        t->oom = 1;
        return 0;
    }
    t->slots[j] = (uint32_t)off + 1;
    t->count++;
    return (uint32_t)off;
}

/* ---- serializer ------------------------------------------------------------------ */

int enpu_program_serialize(const enpu_program *p, uint8_t **out, size_t *n, enpu_err *err) {
    *out = NULL;
    *n = 0;
    int rc = enpu_program_validate(p, err);
    if (rc) return rc;
    enpu_isa_layout l;
    rc = enpu_isa_layout_make(&p->arch, &l, err);
    if (rc) return rc;

    enpu_sb sec[N_SECTIONS + 1];
    memset(sec, 0, sizeof sec);
    strtab st = {0};
    enpu_sb_put(&st.data, "", 1);
#define SEC(id) (&sec[id])
    /* ARCH */
    char *aj = enpu_arch_machine_json(&p->arch);
    if (aj) enpu_sb_puts(SEC(ENPU_SEC_ARCH), aj);
    else st.oom = 1;
    free(aj);
    /* INSTR */
    for (int i = 0; i < p->n_instr; i++) {
        uint8_t w[ENPU_INSTR_BYTES];
        rc = enpu_instr_encode(&l, &p->instr[i], w, err);
        if (rc) {
            enpu_err_prefix(err, "section INSTR: instruction %d", i);
            goto done;
        }
        enpu_sb_put(SEC(ENPU_SEC_INSTR), w, sizeof w);
    }
    /* LAYERS */
    {
        enpu_sb *b = SEC(ENPU_SEC_LAYERS);
        uint32_t refs = 0;
        for (int i = 0; i < p->n_instr; i++) refs += (uint32_t)p->layers[i].n_src;
        put_u32(b, (uint32_t)p->n_instr);
        put_u32(b, refs);
        uint32_t first = 0;
        for (int i = 0; i < p->n_instr; i++) {
            put_u32(b, intern(&st, p->layers[i].name));
            put_u32(b, first);
            put_u32(b, (uint32_t)p->layers[i].n_src);
            put_u32(b, intern(&st, p->layers[i].tensor ? p->layers[i].tensor : ""));
            put_u32(b, (uint32_t)(int32_t)p->layers[i].io);
            put_u32(b, (uint32_t)(int32_t)p->layers[i].group);
            put_u64(b, (uint64_t)p->layers[i].macs);
            first += (uint32_t)p->layers[i].n_src;
        }
        for (int i = 0; i < p->n_instr; i++)
            for (int k = 0; k < p->layers[i].n_src; k++) put_u32(b, intern(&st, p->layers[i].src[k]));
    }
    enpu_sb_put(SEC(ENPU_SEC_WEIGHTS), p->weights, p->weights_len);
    enpu_sb_put(SEC(ENPU_SEC_DTCM_INIT), p->dtcm_init, p->dtcm_init_len);
    enpu_sb_put(SEC(ENPU_SEC_SKIP_INIT), p->skip_init, p->skip_init_len);
    enpu_sb_put(SEC(ENPU_SEC_DRAM_INIT), p->dram_init, p->dram_init_len);
    enpu_sb_put(SEC(ENPU_SEC_HOST_INIT), p->host_init, p->host_init_len);
    for (int i = 0; i < p->n_tables; i++) {
        const enpu_table_desc *t = &p->tables[i];
        enpu_sb *b = SEC(ENPU_SEC_TABLES);
        put_u32(b, intern(&st, t->name));
        put_u32(b, t->addr);
        put_u32(b, t->segments);
        put_f32(b, t->max_err_lsb);
    }
    for (int i = 0; i < p->n_io; i++) {
        const enpu_io_desc *d = &p->io[i];
        enpu_sb *b = SEC(ENPU_SEC_IO);
        put_u32(b, intern(&st, d->name));
        put_u8(b, (unsigned)d->dir);
        put_u8(b, (unsigned)d->dtype);
        put_u8(b, (unsigned)d->layout);
        put_u8(b, (unsigned)d->rank);
        put_u8(b, (unsigned)d->mem);
        enpu_sb_zero(b, 3);
        put_u32(b, d->addr);
        put_f32(b, d->scale);
        put_u32(b, (uint32_t)d->zero_point);
        for (int k = 0; k < ENPU_MAX_RANK; k++) put_u64(b, k < d->rank ? (uint64_t)d->dims[k] : 0);
        put_u64(b, (uint64_t)d->row);
    }
    for (int i = 0; i < p->n_hostops; i++) {
        const enpu_hostop *h = &p->hostops[i];
        enpu_sb *b = SEC(ENPU_SEC_HOSTOPS);
        put_u32(b, intern(&st, h->kind));
        put_u32(b, intern(&st, h->name));
        put_u32(b, (uint32_t)h->n_in);
        put_u32(b, (uint32_t)h->n_out);
        for (int k = 0; k < ENPU_HOSTOP_MAX_IO; k++)
            put_u32(b, k < h->n_in + h->n_out ? (h->io[k] < 0 ? UINT32_MAX : (uint32_t)h->io[k]) : 0);
        for (int k = 0; k < ENPU_HOSTOP_IPARAMS; k++) put_u32(b, (uint32_t)h->iparam[k]);
        for (int k = 0; k < ENPU_HOSTOP_FPARAMS; k++) put_f32(b, h->fparam[k]);
    }
    if (st.data.len > ENPU_PROG_MAX_STRINGS_BYTES) {
        rc = enpu_fail(err, ENPU_E_LIMIT, "section STRINGS: %zu bytes, over the limit of %zu",
                       st.data.len, ENPU_PROG_MAX_STRINGS_BYTES);
        goto done;
    }
    if (st.data.len > 1) enpu_sb_put(SEC(ENPU_SEC_STRINGS), st.data.s, st.data.len);

    /* Assemble: header, table, sections at 16-byte boundaries. */
    {
        enpu_sb f = {0};
        size_t table_end = ENPU_PROG_HEADER_BYTES + N_SECTIONS * ENPU_PROG_ENTRY_BYTES;
        uint64_t offs[N_SECTIONS];
        uint64_t pos = (table_end + ENPU_PROG_ALIGN - 1) / ENPU_PROG_ALIGN * ENPU_PROG_ALIGN;
        for (int i = 0; i < N_SECTIONS; i++) {
            offs[i] = pos;
            pos += sec[section_order[i]].len;
            pos = (pos + ENPU_PROG_ALIGN - 1) / ENPU_PROG_ALIGN * ENPU_PROG_ALIGN;
        }
        /* the last section ends the file: no trailing padding */
        uint64_t total = offs[N_SECTIONS - 1] + sec[section_order[N_SECTIONS - 1]].len;
        enpu_sb_put(&f, ENPU_PROG_MAGIC, 4);
        put_u16(&f, ENPU_PROG_VERSION_MAJOR);
        put_u16(&f, ENPU_PROG_VERSION_MINOR);
        put_u32(&f, enpu_arch_fingerprint(&p->arch));
        put_u32(&f, N_SECTIONS);
        put_u64(&f, total);
        put_u32(&f, 0); /* header crc, patched below */
        put_u32(&f, 0);
        for (int i = 0; i < N_SECTIONS; i++) {
            const enpu_sb *s = &sec[section_order[i]];
            put_u32(&f, (uint32_t)section_order[i]);
            put_u32(&f, crc((const uint8_t *)s->s, s->len));
            put_u64(&f, offs[i]);
            put_u64(&f, s->len);
        }
        for (int i = 0; i < N_SECTIONS; i++) {
            enpu_sb_zero(&f, (size_t)offs[i] - f.len);
            const enpu_sb *s = &sec[section_order[i]];
            enpu_sb_put(&f, s->s, s->len);
        }
        if (f.oom || st.oom || st.data.oom) {
            enpu_sb_free(&f);
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory serializing the program");
            goto done;
        }
        ENPU_ASSERT(f.len == total);
        uint8_t *buf = (uint8_t *)f.s;
        enpu_sb hc = {0};
        enpu_sb_put(&hc, buf, 24);
        enpu_sb_put(&hc, buf + 28, table_end - 28);
        if (hc.oom) {
            enpu_sb_free(&f);
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory serializing the program");
            goto done;
        }
        set_u32(buf + 24, crc((const uint8_t *)hc.s, hc.len));
        enpu_sb_free(&hc);
        *out = buf;
        *n = f.len;
    }
done:
    for (int i = 0; i <= N_SECTIONS; i++) enpu_sb_free(&sec[i]);
    enpu_sb_free(&st.data);
    free(st.slots);
    return rc;
}

int enpu_program_write(const char *path, const enpu_program *p, enpu_err *err) {
    uint8_t *buf;
    size_t n;
    int rc = enpu_program_serialize(p, &buf, &n, err);
    if (rc) return enpu_err_prefix(err, "%s", path);
    rc = enpu_file_write_atomic(path, buf, n, err);
    free(buf);
    return rc;
}

/* ---- reader -------------------------------------------------------------------------- */

typedef struct span {
    const uint8_t *p;
    uint64_t len;
    int present;
} span;

typedef struct reader {
    span sec[N_SECTIONS + 1]; /* by id */
    const uint8_t *strings;
    uint64_t strings_len;
    uint32_t minor;        /* format minor version: 0 has 88-byte IO records, 0 and 1
                              96-byte HOSTOPS records, 2 and 3 304-byte ones (8 operands) */
    enpu_err *err;
} reader;

#define FMT(...) enpu_fail(r->err, ENPU_E_FORMAT, __VA_ARGS__)

/* String at offset off of STRINGS; NULL after recording an error naming
 * the section and field that referred to it. */
static const char *get_str(reader *r, uint32_t off, const char *sec, const char *field) {
    if (off == 0) return "";
    if (off >= r->strings_len) {
        FMT("section %s: %s: string offset %" PRIu32 " past the end of STRINGS (%" PRIu64 " bytes)",
            sec, field, off, r->strings_len);
        return NULL;
    }
    if (r->strings[off - 1] != 0) {
        FMT("section %s: %s: string offset %" PRIu32 " is not the start of a string", sec, field, off);
        return NULL;
    }
    const char *s = (const char *)r->strings + off;
    if (strlen(s) > ENPU_MAX_NAME) {
        FMT("section %s: %s: string at %" PRIu32 " is longer than %d bytes", sec, field, off,
            ENPU_MAX_NAME);
        return NULL;
    }
    return s;
}

static char *dup_n(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int parse_layers(reader *r, enpu_program *p) {
    span s = r->sec[ENPU_SEC_LAYERS];
    enpu_err *err = r->err;
    p->layers = calloc((size_t)(p->n_instr > 0 ? p->n_instr : 1), sizeof *p->layers);
    if (!p->layers) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    for (int i = 0; i < p->n_instr; i++) {
        p->layers[i].name = dup_n("");
        p->layers[i].tensor = dup_n("");
        p->layers[i].io = -1;
        p->layers[i].group = i;
        p->layers[i].macs = enpu_layer_default_macs(&p->instr[i]);
        if (!p->layers[i].name || !p->layers[i].tensor)
            return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    if (!s.present || s.len == 0) return 0;
    if (s.len < 8) return FMT("section LAYERS: length %" PRIu64 " is shorter than its 8-byte count header", s.len);
    uint32_t nl = get_u32(s.p), nr = get_u32(s.p + 4);
    if (nl != (uint32_t)p->n_instr)
        return FMT("section LAYERS: field 'n_layers': %" PRIu32 " but INSTR has %d instructions", nl,
                   p->n_instr);
    if (nr > ENPU_PROG_MAX_SOURCES)
        return enpu_fail(err, ENPU_E_LIMIT, "section LAYERS: field 'n_refs': %" PRIu32 " over the limit of %d",
                         nr, ENPU_PROG_MAX_SOURCES);
    const uint64_t lb = r->minor == 0 ? ENPU_PROG_LAYER_BYTES_3_0 : ENPU_PROG_LAYER_BYTES;
    uint64_t want = 8 + (uint64_t)nl * lb + (uint64_t)nr * 4;
    if (s.len != want)
        return FMT("section LAYERS: length %" PRIu64 " but %" PRIu32 " layers and %" PRIu32
                   " source references need %" PRIu64 " bytes", s.len, nl, nr, want);
    const uint8_t *refs = s.p + 8 + (uint64_t)nl * lb;
    uint64_t next = 0;
    for (uint32_t i = 0; i < nl; i++) {
        const uint8_t *rec = s.p + 8 + (uint64_t)i * lb;
        uint32_t first = get_u32(rec + 4), cnt = get_u32(rec + 8);
        if (first != next || (uint64_t)first + cnt > nr)
            return FMT("section LAYERS: layer %" PRIu32 ": field 'first_ref' %" PRIu32 " / 'n_refs' %"
                       PRIu32 " do not follow the previous layer's (expected first %" PRIu64
                       ", total %" PRIu32 ")", i, first, cnt, next, nr);
        next = (uint64_t)first + cnt;
        const char *nm = get_str(r, get_u32(rec), "LAYERS", "field 'name'");
        if (!nm) return err->code;
        enpu_layer_info *L = &p->layers[i];
        free(L->name);
        L->name = dup_n(nm);
        if (!L->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        const char *tn = get_str(r, get_u32(rec + 12), "LAYERS", "field 'tensor'");
        if (!tn) return err->code;
        free(L->tensor);
        L->tensor = dup_n(tn);
        if (!L->tensor) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        int32_t io = (int32_t)get_u32(rec + 16);
        if (io < -1 || io >= ENPU_PROG_MAX_IO)
            return FMT("section LAYERS: layer %" PRIu32 ": field 'io': value %" PRId32
                       " out of range -1..%d", i, io, ENPU_PROG_MAX_IO - 1);
        L->io = io;
        int32_t grp = (int32_t)get_u32(rec + 20);
        if (grp < 0 || (uint32_t)grp >= nl)
            return FMT("section LAYERS: layer %" PRIu32 ": field 'group': value %" PRId32 " out of range 0..%" PRIu32,
                       i, grp, nl - 1);
        L->group = grp;
        if (lb > ENPU_PROG_LAYER_BYTES_3_0) {
            uint64_t m = get_u64(rec + ENPU_PROG_LAYER_BYTES_3_0);
            if (m > (uint64_t)INT64_MAX)
                return FMT("section LAYERS: layer %" PRIu32 ": field 'macs': %" PRIu64 " out of range", i, m);
            L->macs = (int64_t)m; /* checked against the instruction by enpu_program_validate */
        }
        if (cnt) {
            L->src = calloc(cnt, sizeof *L->src);
            if (!L->src) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            for (uint32_t k = 0; k < cnt; k++) {
                const char *sn = get_str(r, get_u32(refs + 4 * ((uint64_t)first + k)), "LAYERS",
                                         "source reference");
                if (!sn) return err->code;
                L->src[k] = dup_n(sn);
                if (!L->src[k]) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                L->n_src++;
            }
        }
    }
    if (next != nr)
        return FMT("section LAYERS: field 'n_refs': %" PRIu32 " but the layers use %" PRIu64, nr, next);
    return 0;
}

static int records(reader *r, int id, uint64_t rec, uint64_t max, uint64_t *count) {
    span s = r->sec[id];
    *count = 0;
    if (!s.present) return 0;
    if (s.len % rec != 0)
        return FMT("section %s: length %" PRIu64 " is not a multiple of the %" PRIu64 "-byte record",
                   enpu_section_name(id), s.len, rec);
    if (s.len / rec > max)
        return enpu_fail(r->err, ENPU_E_LIMIT, "section %s: %" PRIu64 " records, over the limit of %" PRIu64,
                         enpu_section_name(id), s.len / rec, max);
    *count = s.len / rec;
    return 0;
}

static int parse_tables_io_hostops(reader *r, enpu_program *p) {
    enpu_err *err = r->err;
    uint64_t n;
    int rc = records(r, ENPU_SEC_TABLES, ENPU_PROG_TABLE_BYTES, ENPU_PROG_MAX_TABLES, &n);
    if (rc) return rc;
    if (n) {
        p->tables = calloc(n, sizeof *p->tables);
        if (!p->tables) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *q = r->sec[ENPU_SEC_TABLES].p + i * ENPU_PROG_TABLE_BYTES;
        const char *nm = get_str(r, get_u32(q), "TABLES", "field 'name'");
        if (!nm) return err->code;
        enpu_table_desc *t = &p->tables[p->n_tables];
        t->name = dup_n(nm);
        if (!t->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        p->n_tables++;
        t->addr = get_u32(q + 4);
        t->segments = get_u32(q + 8);
        t->max_err_lsb = get_f32(q + 12);
    }
    const uint64_t io_bytes = r->minor == 0 ? ENPU_PROG_IO_BYTES_3_0 : ENPU_PROG_IO_BYTES;
    rc = records(r, ENPU_SEC_IO, io_bytes, ENPU_PROG_MAX_IO, &n);
    if (rc) return rc;
    if (n) {
        p->io = calloc(n, sizeof *p->io);
        if (!p->io) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *q = r->sec[ENPU_SEC_IO].p + i * io_bytes;
        const char *nm = get_str(r, get_u32(q), "IO", "field 'name'");
        if (!nm) return err->code;
        enpu_io_desc *d = &p->io[p->n_io];
        d->name = dup_n(nm);
        if (!d->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        p->n_io++;
        d->dir = (enpu_io_dir)q[4];
        d->dtype = (enpu_dtype)q[5];
        d->layout = (enpu_layout)q[6];
        d->rank = q[7];
        d->mem = q[8];
        if (q[9] || q[10] || q[11])
            return FMT("section IO: descriptor %" PRIu64 ": reserved bytes 9..11 are not zero", i);
        d->addr = get_u32(q + 12);
        d->scale = get_f32(q + 16);
        d->zero_point = (int32_t)get_u32(q + 20);
        if (d->rank > ENPU_MAX_RANK)
            return FMT("section IO: descriptor %" PRIu64 ": field 'rank': %d over %d", i, d->rank, ENPU_MAX_RANK);
        for (int k = 0; k < ENPU_MAX_RANK; k++) {
            uint64_t v = get_u64(q + 24 + 8 * k);
            if (k >= d->rank && v != 0)
                return FMT("section IO: descriptor %" PRIu64 ": field 'dims[%d]': non-zero beyond rank %d", i, k, d->rank);
            if (v > (uint64_t)ENPU_MAX_DIM)
                return enpu_fail(r->err, ENPU_E_LIMIT, "section IO: descriptor %" PRIu64 ": field 'dims[%d]': %" PRIu64
                                 " over the limit of %" PRId64, i, k, v, (int64_t)ENPU_MAX_DIM);
            d->dims[k] = (int64_t)v;
        }
        uint64_t row = io_bytes > ENPU_PROG_IO_BYTES_3_0 ? get_u64(q + ENPU_PROG_IO_BYTES_3_0) : 0;
        if (row > (uint64_t)ENPU_MAX_DIM)
            return enpu_fail(r->err, ENPU_E_LIMIT, "section IO: descriptor %" PRIu64 ": field 'row': %" PRIu64
                             " over the limit of %" PRId64, i, row, (int64_t)ENPU_MAX_DIM);
        d->row = (int64_t)row;
    }
    const bool wide = r->minor >= 2, io16 = r->minor >= 4;
    const int nio = io16 ? ENPU_HOSTOP_MAX_IO : ENPU_HOSTOP_MAX_IO_3_3;
    const uint64_t hb = io16 ? ENPU_PROG_HOSTOP_BYTES : wide ? ENPU_PROG_HOSTOP_BYTES_3_3 : ENPU_PROG_HOSTOP_BYTES_3_1;
    const int nip = wide ? ENPU_HOSTOP_IPARAMS : ENPU_HOSTOP_IPARAMS_3_1;
    const int nfp = wide ? ENPU_HOSTOP_FPARAMS : ENPU_HOSTOP_FPARAMS_3_1;
    rc = records(r, ENPU_SEC_HOSTOPS, hb, ENPU_PROG_MAX_HOSTOPS, &n);
    if (rc) return rc;
    if (n) {
        p->hostops = calloc(n, sizeof *p->hostops);
        if (!p->hostops) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *q = r->sec[ENPU_SEC_HOSTOPS].p + i * hb;
        const char *kind = get_str(r, get_u32(q), "HOSTOPS", "field 'kind'");
        const char *nm = kind ? get_str(r, get_u32(q + 4), "HOSTOPS", "field 'name'") : NULL;
        if (!nm) return err->code;
        enpu_hostop *h = &p->hostops[p->n_hostops];
        h->kind = dup_n(kind);
        h->name = dup_n(nm);
        p->n_hostops++;
        if (!h->kind || !h->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        uint32_t ni = get_u32(q + 8), no = get_u32(q + 12);
        if (ni > (uint32_t)nio || no > (uint32_t)nio || ni + no > (uint32_t)nio)
            return FMT("section HOSTOPS: host op %" PRIu64 ": fields n_in=%" PRIu32 ", n_out=%" PRIu32
                       ": more than %d operands", i, ni, no, nio);
        h->n_in = (int)ni;
        h->n_out = (int)no;
        for (int k = 0; k < nio; k++) {
            uint32_t v = get_u32(q + 16 + 4 * k);
            if ((uint32_t)k >= ni + no && v != 0)
                return FMT("section HOSTOPS: host op %" PRIu64 ": field 'io[%d]': unused slot is not zero", i, k);
            /* format 3.4: an omitted optional operand */
            if (io16 && v == UINT32_MAX && (uint32_t)k < ni + no) {
                h->io[k] = -1;
                continue;
            }
            if (v > INT32_MAX)
                return FMT("section HOSTOPS: host op %" PRIu64 ": field 'io[%d]': %" PRIu32 " out of range", i, k, v);
            h->io[k] = (int)v;
        }
        const uint8_t *pq = q + 16 + 4 * nio;
        for (int k = 0; k < nip; k++) h->iparam[k] = (int32_t)get_u32(pq + 4 * k);
        for (int k = 0; k < nfp; k++) h->fparam[k] = get_f32(pq + 4 * nip + 4 * k);
        if (!wide) {
            int io0 = ni + no > 0 ? h->io[0] : -1;
            enpu_hostop_upgrade_3_1(h, io0 >= 0 && (uint64_t)io0 < (uint64_t)p->n_io ? p->io[io0].rank : 0);
        }
    }
    return 0;
}

static int copy_image(reader *r, int id, uint8_t **dst, size_t *len) {
    span s = r->sec[id];
    if (!s.present || s.len == 0) return 0;
    uint64_t lim = id == ENPU_SEC_DRAM_INIT   ? (uint64_t)ENPU_PROG_MAX_BYTES
                   : id == ENPU_SEC_HOST_INIT ? (uint64_t)ENPU_PROG_MAX_HOST_INIT
                                              : (uint64_t)ENPU_ARCH_MEM_MAX;
    if (s.len > lim)
        return enpu_fail(r->err, ENPU_E_LIMIT, "section %s: %" PRIu64 " bytes, over the limit of %" PRIu64,
                         enpu_section_name(id), s.len, lim);
    *dst = malloc((size_t)s.len);
    if (!*dst) return enpu_fail(r->err, ENPU_E_NOMEM, "out of memory");
    memcpy(*dst, s.p, (size_t)s.len);
    *len = (size_t)s.len;
    return 0;
}

typedef struct entry {
    int id;
    uint64_t off, len;
} entry;

static int cmp_entry(const void *a, const void *b) {
    const entry *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : (x->len < y->len ? -1 : x->len > y->len);
}

static int read_inner(const uint8_t *d, size_t n, const enpu_arch *expect, enpu_program *p,
                      reader *r) {
    enpu_err *err = r->err;
    if (n < ENPU_PROG_HEADER_BYTES)
        return FMT("header: file is %zu bytes, shorter than the %d-byte header", n, ENPU_PROG_HEADER_BYTES);
    if (memcmp(d, ENPU_PROG_MAGIC, 4) != 0) {
        /* say what it is when its bytes tell (a protobuf says nothing: most
         * often an ONNX model) */
        const char *k = enpu_file_kind(d, n);
        return FMT("header: bad magic %02x %02x %02x %02x (expected \"ENPU\"): not an EasyNPU program but %s; "
                   "`easynpu run` takes a model, `easynpu compile MODEL -o PROG.enpu` makes a program",
                   d[0], d[1], d[2], d[3], k ? k : "another file (an ONNX model?)");
    }
    uint32_t major = get_u16(d + 4), minor = get_u16(d + 6);
    r->minor = minor;
    if (major != ENPU_PROG_VERSION_MAJOR || minor > ENPU_PROG_VERSION_MINOR)
        return FMT("header: format version %" PRIu32 ".%" PRIu32 ", this reader supports %d.0 to %d.%d",
                   major, minor, ENPU_PROG_VERSION_MAJOR, ENPU_PROG_VERSION_MAJOR, ENPU_PROG_VERSION_MINOR);
    uint32_t fp = get_u32(d + 8), nsec = get_u32(d + 12);
    uint64_t fsize = get_u64(d + 16);
    if (nsec > ENPU_PROG_MAX_SECTIONS)
        return enpu_fail(err, ENPU_E_LIMIT, "header: field 'n_sections': %" PRIu32 " over the limit of %d",
                         nsec, ENPU_PROG_MAX_SECTIONS);
    uint64_t table_end = ENPU_PROG_HEADER_BYTES + (uint64_t)nsec * ENPU_PROG_ENTRY_BYTES;
    if (table_end > n)
        return FMT("header: the section table (%" PRIu32 " entries, to byte %" PRIu64
                   ") runs past the end of the file (%zu bytes)", nsec, table_end, n);
    {
        uLong c = crc32(0L, Z_NULL, 0);
        c = crc32(c, d, 24);
        c = crc32(c, d + 28, (uInt)(table_end - 28));
        uint32_t stored = get_u32(d + 24);
        if ((uint32_t)c != stored)
            return FMT("header: crc32 mismatch over header and section table (stored 0x%08" PRIx32
                       ", computed 0x%08" PRIx32 ")", stored, (uint32_t)c);
    }
    if (get_u32(d + 28) != 0) return FMT("header: reserved field at byte 28 is not zero");
    entry ents[ENPU_PROG_MAX_SECTIONS];
    for (uint32_t i = 0; i < nsec; i++) {
        const uint8_t *e = d + ENPU_PROG_HEADER_BYTES + (uint64_t)i * ENPU_PROG_ENTRY_BYTES;
        uint32_t id = get_u32(e);
        const char *nm = enpu_section_name((int)id);
        if (!nm) return FMT("section table entry %" PRIu32 ": unknown section id %" PRIu32, i, id);
        if (r->sec[id].present) return FMT("section %s: appears twice in the section table", nm);
        uint64_t off = get_u64(e + 8), len = get_u64(e + 16);
        if (off < table_end)
            return FMT("section %s: offset %" PRIu64 " inside the header/section table (ends at %" PRIu64 ")",
                       nm, off, table_end);
        if (off > n || len > n - off)
            return FMT("section %s: offset %" PRIu64 " + length %" PRIu64
                       " runs past the end of the file (%zu bytes): truncated?", nm, off, len, n);
        uint32_t stored = get_u32(e + 4), computed = crc(d + off, (size_t)len);
        r->sec[id] = (span){d + off, len, 1};
        ents[i] = (entry){(int)id, off, len};
        if (stored != computed)
            return FMT("section %s: crc32 mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                       nm, stored, computed);
    }
    qsort(ents, nsec, sizeof ents[0], cmp_entry);
    uint64_t end = 0;
    int end_id = 0;
    for (uint32_t i = 0; i < nsec; i++) {
        if (ents[i].len && ents[i].off < end)
            return FMT("section %s: overlaps section %s", enpu_section_name(ents[i].id),
                       enpu_section_name(end_id));
        if (ents[i].off + ents[i].len > end) end = ents[i].off + ents[i].len, end_id = ents[i].id;
    }
    if (fsize != n)
        return FMT("header: field 'file_size' says %" PRIu64 " bytes, the file has %zu", fsize, n);
    if (!r->sec[ENPU_SEC_ARCH].present) return FMT("section ARCH: missing");
    if (!r->sec[ENPU_SEC_INSTR].present) return FMT("section INSTR: missing");

    /* ARCH */
    span as = r->sec[ENPU_SEC_ARCH];
    if (as.len > ENPU_PROG_MAX_ARCH_BYTES)
        return enpu_fail(err, ENPU_E_LIMIT, "section ARCH: %" PRIu64 " bytes, over the limit of %zu",
                         as.len, ENPU_PROG_MAX_ARCH_BYTES);
    int rc = enpu_arch_from_canonical_json((const char *)as.p, (size_t)as.len, "section ARCH", &p->arch, err);
    if (rc) return rc;
    /* formats 3.0 and 3.1 predate the host CPU parameters: their canonical
     * JSON and fingerprint have every key but those, which take the selected
     * arch's values (or the defaults) */
    const bool v31 = minor < 2;
    char *canon = v31 ? enpu_arch_to_json_3_1(&p->arch) : enpu_arch_machine_json(&p->arch);
    if (!canon) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    int same = strlen(canon) == as.len && memcmp(canon, as.p, (size_t)as.len) == 0;
    free(canon);
    if (!same) return FMT("section ARCH: the arch JSON is not in canonical form");
    uint32_t afp = v31 ? (uint32_t)crc32(0L, as.p, (uInt)as.len) : enpu_arch_fingerprint(&p->arch);
    if (afp != fp)
        return FMT("header: field 'arch_fingerprint' 0x%08" PRIx32 " does not match the ARCH section's "
                   "arch '%s' (0x%08" PRIx32 ")", fp, p->arch.name, afp);
    if (expect) {
        uint32_t efp = enpu_arch_fingerprint(expect);
        if (v31) {
            char *e31 = enpu_arch_to_json_3_1(expect);
            if (!e31) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            efp = (uint32_t)crc32(0L, (const Bytef *)e31, (uInt)strlen(e31));
            free(e31);
            if (efp == afp) p->arch = *expect;
        }
        if (efp != afp)
            return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                             "arch mismatch: the program was compiled for arch '%s' (fingerprint 0x%08"
                             PRIx32 ") but arch '%s' (fingerprint 0x%08" PRIx32 ") is selected",
                             p->arch.name, afp, expect->name, efp);
    }
    /* STRINGS */
    span ss = r->sec[ENPU_SEC_STRINGS];
    if (ss.present && ss.len > 0) {
        if (ss.len > ENPU_PROG_MAX_STRINGS_BYTES)
            return enpu_fail(err, ENPU_E_LIMIT, "section STRINGS: %" PRIu64 " bytes, over the limit of %zu",
                             ss.len, ENPU_PROG_MAX_STRINGS_BYTES);
        if (ss.p[0] != 0 || ss.p[ss.len - 1] != 0)
            return FMT("section STRINGS: must start and end with a NUL byte");
        r->strings = ss.p;
        r->strings_len = ss.len;
    }
    /* INSTR */
    span is = r->sec[ENPU_SEC_INSTR];
    if (is.len % ENPU_INSTR_BYTES != 0)
        return FMT("section INSTR: length %" PRIu64 " is not a multiple of the %d-byte instruction",
                   is.len, ENPU_INSTR_BYTES);
    if (is.len / ENPU_INSTR_BYTES > ENPU_PROG_MAX_INSTRS)
        return enpu_fail(err, ENPU_E_LIMIT, "section INSTR: %" PRIu64 " instructions, over the limit of %d",
                         is.len / ENPU_INSTR_BYTES, ENPU_PROG_MAX_INSTRS);
    enpu_isa_layout l;
    rc = enpu_isa_layout_make(&p->arch, &l, err);
    if (rc) return rc;
    int ni = (int)(is.len / ENPU_INSTR_BYTES);
    if (ni) {
        p->instr = calloc((size_t)ni, sizeof *p->instr);
        if (!p->instr) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        p->cap_instr = ni;
    }
    for (int i = 0; i < ni; i++) {
        rc = enpu_instr_decode(&l, is.p + (size_t)i * ENPU_INSTR_BYTES, &p->instr[i], err);
        if (rc) return enpu_err_prefix(err, "section INSTR: instruction %d", i);
    }
    p->n_instr = ni;
    rc = parse_layers(r, p);
    if (rc) return rc;
    rc = copy_image(r, ENPU_SEC_WEIGHTS, &p->weights, &p->weights_len);
    if (!rc) rc = copy_image(r, ENPU_SEC_DTCM_INIT, &p->dtcm_init, &p->dtcm_init_len);
    if (!rc) rc = copy_image(r, ENPU_SEC_SKIP_INIT, &p->skip_init, &p->skip_init_len);
    if (!rc) rc = copy_image(r, ENPU_SEC_DRAM_INIT, &p->dram_init, &p->dram_init_len);
    if (!rc) rc = copy_image(r, ENPU_SEC_HOST_INIT, &p->host_init, &p->host_init_len);
    if (!rc) rc = parse_tables_io_hostops(r, p);
    if (!rc) rc = enpu_program_validate(p, err);
    return rc;
}

int enpu_program_read_mem(const uint8_t *data, size_t n, const char *what,
                          const enpu_arch *expect, enpu_program *p, enpu_err *err) {
    memset(p, 0, sizeof *p);
    reader r;
    memset(&r, 0, sizeof r);
    r.err = err;
    int rc = read_inner(data, n, expect, p, &r);
    if (rc) {
        /* layers may be partly built: make n_instr consistent with them */
        if (!p->layers) p->n_instr = 0;
        enpu_program_free(p);
        return enpu_err_prefix(err, "%s", what);
    }
    return 0;
}

int enpu_program_read(const char *path, const enpu_arch *expect, enpu_program *p, enpu_err *err) {
    memset(p, 0, sizeof *p);
    uint8_t *buf;
    size_t n;
    int rc = enpu_file_read(path, ENPU_PROG_MAX_BYTES, &buf, &n, err);
    if (rc) return rc;
    rc = enpu_program_read_mem(buf, n, path, expect, p, err);
    free(buf);
    return rc;
}
