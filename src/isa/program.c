/* In-memory programs: building, freeing and whole-program validation. */
#include "easynpu/program.h"

#include <stdbool.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"

const char *enpu_section_name(int id) {
#define ENPU_X_SEC(ID, num, sp) \
    if (id == num) return #ID;
    ENPU_SECTIONS(ENPU_X_SEC)
#undef ENPU_X_SEC
    return NULL;
}

void enpu_program_init(enpu_program *p, const enpu_arch *arch) {
    memset(p, 0, sizeof *p);
    p->arch = *arch;
}

static void free_layer(enpu_layer_info *l) {
    free(l->name);
    free(l->tensor);
    for (int i = 0; i < l->n_src; i++) free(l->src[i]);
    free(l->src);
}

void enpu_program_free(enpu_program *p) {
    if (!p) return;
    for (int i = 0; i < p->n_instr; i++) free_layer(&p->layers[i]);
    free(p->layers);
    free(p->instr);
    free(p->weights);
    free(p->dtcm_init);
    free(p->skip_init);
    free(p->dram_init);
    free(p->host_init);
    for (int i = 0; i < p->n_tables; i++) free(p->tables[i].name);
    free(p->tables);
    for (int i = 0; i < p->n_io; i++) free(p->io[i].name);
    free(p->io);
    for (int i = 0; i < p->n_hostops; i++) {
        free(p->hostops[i].kind);
        free(p->hostops[i].name);
    }
    free(p->hostops);
    memset(p, 0, sizeof *p);
}

static char *dup_str(const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

#define NOMEM() enpu_fail(err, ENPU_E_NOMEM, "out of memory building the program")

int enpu_program_add_instr(enpu_program *p, const enpu_instr *in, const char *name, int n_src,
                           const char *const *src, enpu_err *err) {
    if (p->n_instr >= ENPU_PROG_MAX_INSTRS)
        return enpu_fail(err, ENPU_E_LIMIT, "more than %d instructions", ENPU_PROG_MAX_INSTRS);
    if (n_src < 0 || n_src > ENPU_PROG_MAX_SOURCES)
        return enpu_fail(err, ENPU_E_LIMIT, "layer '%s': %d source nodes", name ? name : "", n_src);
    if (p->n_instr == p->cap_instr) {
        int cap = p->cap_instr ? p->cap_instr * 2 : 16;
        enpu_instr *ni = realloc(p->instr, (size_t)cap * sizeof *ni);
        if (!ni) return NOMEM();
        p->instr = ni;
        enpu_layer_info *nl = realloc(p->layers, (size_t)cap * sizeof *nl);
        if (!nl) return NOMEM();
        p->layers = nl;
        p->cap_instr = cap;
    }
    enpu_layer_info l = {dup_str(name), 0, NULL, dup_str(""), -1, p->n_instr, enpu_layer_default_macs(in)};
    if (!l.name || !l.tensor) {
        free_layer(&l);
        return NOMEM();
    }
    if (n_src > 0) {
        l.src = calloc((size_t)n_src, sizeof *l.src);
        if (!l.src) {
            free_layer(&l);
            return NOMEM();
        }
        for (; l.n_src < n_src; l.n_src++) {
            l.src[l.n_src] = dup_str(src[l.n_src]);
            if (!l.src[l.n_src]) {
                free_layer(&l);
                return NOMEM();
            }
        }
    }
    p->instr[p->n_instr] = *in;
    p->layers[p->n_instr] = l;
    p->n_instr++;
    return 0;
}

int enpu_program_chain_len(const enpu_program *p, int first) {
    int n = 1;
    while (first + n - 1 < p->n_instr - 1 && p->instr[first + n - 1].fuse_next) n++;
    return n;
}

int64_t enpu_layer_default_macs(const enpu_instr *in) {
    return in->opcode == ENPU_OPC_SYNC ? 0 : enpu_instr_macs(in);
}

int enpu_program_set_layer_output(enpu_program *p, int i, const char *tensor, int io,
                                  enpu_err *err) {
    if (i < 0 || i >= p->n_instr)
        return enpu_fail(err, ENPU_E_USAGE, "layer output: instruction %d of %d", i, p->n_instr);
    char *t = dup_str(tensor);
    if (!t) return NOMEM();
    free(p->layers[i].tensor);
    p->layers[i].tensor = t;
    p->layers[i].io = io;
    return 0;
}

int enpu_program_set_layer_group(enpu_program *p, int i, int group, enpu_err *err) {
    if (i < 0 || i >= p->n_instr || group < 0 || group >= ENPU_PROG_MAX_INSTRS)
        return enpu_fail(err, ENPU_E_USAGE, "layer group: instruction %d of %d, group %d", i, p->n_instr,
                         group);
    p->layers[i].group = group;
    return 0;
}

/* Grows *arr (of *n elements of size sz) by one; returns the new slot. */
static void *grow(void **arr, int *n, size_t sz, int max) {
    if (*n >= max) return NULL;
    void *na = realloc(*arr, (size_t)(*n + 1) * sz);
    if (!na) return NULL;
    *arr = na;
    return (char *)na + (size_t)(*n) * sz;
}

int enpu_program_add_io(enpu_program *p, const enpu_io_desc *d, enpu_err *err) {
    if (p->n_io >= ENPU_PROG_MAX_IO)
        return enpu_fail(err, ENPU_E_LIMIT, "more than %d IO descriptors", ENPU_PROG_MAX_IO);
    enpu_io_desc *slot = grow((void **)&p->io, &p->n_io, sizeof *slot, ENPU_PROG_MAX_IO);
    if (!slot) return NOMEM();
    *slot = *d;
    slot->name = dup_str(d->name);
    if (!slot->name) return NOMEM();
    return p->n_io++;
}

int enpu_program_add_hostop(enpu_program *p, const enpu_hostop *h, enpu_err *err) {
    if (p->n_hostops >= ENPU_PROG_MAX_HOSTOPS)
        return enpu_fail(err, ENPU_E_LIMIT, "more than %d host ops", ENPU_PROG_MAX_HOSTOPS);
    enpu_hostop *slot = grow((void **)&p->hostops, &p->n_hostops, sizeof *slot,
                             ENPU_PROG_MAX_HOSTOPS);
    if (!slot) return NOMEM();
    *slot = *h;
    slot->kind = dup_str(h->kind);
    slot->name = dup_str(h->name);
    if (!slot->kind || !slot->name) {
        free(slot->kind);
        free(slot->name);
        return NOMEM();
    }
    return p->n_hostops++;
}

int enpu_program_add_table(enpu_program *p, const enpu_table_desc *t, enpu_err *err) {
    if (p->n_tables >= ENPU_PROG_MAX_TABLES)
        return enpu_fail(err, ENPU_E_LIMIT, "more than %d tables", ENPU_PROG_MAX_TABLES);
    enpu_table_desc *slot = grow((void **)&p->tables, &p->n_tables, sizeof *slot,
                                 ENPU_PROG_MAX_TABLES);
    if (!slot) return NOMEM();
    *slot = *t;
    slot->name = dup_str(t->name);
    if (!slot->name) return NOMEM();
    return p->n_tables++;
}

int enpu_program_set_image(enpu_program *p, int section, const void *data, size_t n,
                           enpu_err *err) {
    uint8_t **dst;
    size_t *len;
    switch (section) {
    case ENPU_SEC_WEIGHTS: dst = &p->weights, len = &p->weights_len; break;
    case ENPU_SEC_DTCM_INIT: dst = &p->dtcm_init, len = &p->dtcm_init_len; break;
    case ENPU_SEC_SKIP_INIT: dst = &p->skip_init, len = &p->skip_init_len; break;
    case ENPU_SEC_DRAM_INIT: dst = &p->dram_init, len = &p->dram_init_len; break;
    case ENPU_SEC_HOST_INIT: dst = &p->host_init, len = &p->host_init_len; break;
    default: return enpu_fail(err, ENPU_E_USAGE, "section %d is not a memory image", section);
    }
    size_t lim = section == ENPU_SEC_DRAM_INIT   ? (size_t)ENPU_PROG_MAX_BYTES
                 : section == ENPU_SEC_HOST_INIT ? ENPU_PROG_MAX_HOST_INIT
                                                 : (size_t)ENPU_ARCH_MEM_MAX;
    if (n > lim)
        return enpu_fail(err, ENPU_E_LIMIT, "section %s: %zu bytes, over the limit of %zu",
                         enpu_section_name(section), n, lim);
    uint8_t *copy = NULL;
    if (n) {
        copy = malloc(n);
        if (!copy) return NOMEM();
        memcpy(copy, data, n);
    }
    free(*dst);
    *dst = copy;
    *len = n;
    return 0;
}

int enpu_program_append_host_init(enpu_program *p, const void *data, size_t n, const char *what,
                                  size_t *at, enpu_err *err) {
    size_t off = (p->host_init_len + 7) & ~(size_t)7;
    if (off + n > ENPU_PROG_MAX_HOST_INIT || off + n > UINT32_MAX)
        return enpu_fail(err, ENPU_E_LIMIT, "host op constant '%s': the host constants exceed %zu bytes",
                         what, (size_t)ENPU_PROG_MAX_HOST_INIT);
    uint8_t *grown = realloc(p->host_init, off + n ? off + n : 1);
    if (!grown) return NOMEM();
    memset(grown + p->host_init_len, 0, off - p->host_init_len);
    if (n) memcpy(grown + off, data, n);
    p->host_init = grown;
    p->host_init_len = off + n;
    *at = off;
    return 0;
}

void enpu_io_user_dims(const enpu_io_desc *d, int64_t *out) {
    int r = d->rank;
    if (d->layout == ENPU_LAYOUT_NHWC && r >= 3) {
        out[0] = d->dims[0];
        out[1] = d->dims[r - 1];
        for (int i = 1; i < r - 1; i++) out[i + 1] = d->dims[i];
    } else {
        for (int i = 0; i < r; i++) out[i] = d->dims[i];
    }
}

int64_t enpu_io_row(const enpu_io_desc *d) {
    if (d->row > 0) return d->row;
    return d->rank > 0 ? d->dims[d->rank - 1] : 1;
}

int64_t enpu_io_words(const enpu_arch *arch, const enpu_io_desc *d) {
    if (d->mem == ENPU_MEM_HOST) return 0;
    int64_t n = 1, row = enpu_io_row(d);
    for (int i = 0; i < d->rank; i++) n *= d->dims[i];
    /* rows of int8 or int16 elements folded into bus words */
    int64_t es = d->dtype == ENPU_DT_INT16 ? 2 : 1;
    return row > 0 ? n / row * enpu_ceil_div(row * es, enpu_arch_word_bytes(arch)) : 0;
}

int64_t enpu_program_dram_instr_words(const enpu_program *p) {
    const enpu_arch *a = &p->arch;
    if ((int64_t)p->n_instr * ENPU_INSTR_BYTES <= a->itcm_bytes) return 0;
    return enpu_ceil_div((int64_t)p->n_instr * ENPU_INSTR_BYTES, enpu_arch_word_bytes(a));
}

/* ---- validation ------------------------------------------------------------ */

static int instr_fail(enpu_err *err, const enpu_program *p, int i) {
    const char *nm = p->layers[i].name;
    return enpu_err_prefix(err, "section INSTR: instruction %d%s%s%s", i, nm[0] ? " (" : "", nm,
                           nm[0] ? ")" : "");
}

#define IFAIL(i, ...) (enpu_fail(err, ENPU_E_INVALID, __VA_ARGS__), instr_fail(err, p, i))

static int validate_chains(const enpu_program *p, enpu_err *err) {
    for (int h = 0; h < p->n_instr; h++) {
        const enpu_instr *head = &p->instr[h];
        int chained = h > 0 && p->instr[h - 1].fuse_next;
        if (chained) {
            if (head->fuse_bn || head->fuse_act || head->fuse_order)
                return IFAIL(h, "fields fuse_bn/fuse_act/fuse_order: set on a member of a fused "
                                "chain (only the chain's head carries them)");
            if (head->push || head->pop)
                return IFAIL(h, "fields push/pop: set on a member of a fused chain (the chain "
                                "starts and completes as one: its head carries the tokens)");
            continue;
        }
        if (!head->fuse_next) continue;
        int has_bn = 0, act = ENPU_ACT_NONE, act_first = 0;
        int i = h;
        while (p->instr[i].fuse_next) {
            const enpu_instr *cur = &p->instr[i];
            if (i + 1 >= p->n_instr) return IFAIL(i, "field 'fuse_next': set on the last instruction");
            const enpu_instr *nx = &p->instr[i + 1];
            int64_t op = nx->opcode;
            const char *mn = enpu_opcode_mnemonic(op);
            if (op != ENPU_OPC_BN && op != ENPU_OPC_RELU && op != ENPU_OPC_ACT &&
                op != ENPU_OPC_ADD && op != ENPU_OPC_MUL && op != ENPU_OPC_RESHAPE)
                return IFAIL(i, "field 'fuse_next': the next instruction is '%s', which cannot "
                                "be fused (bn, relu, act, add, mul, reshape can)",
                             mn ? mn : "?");
            if (nx->hi != cur->ho || nx->wi != cur->wo || nx->ci != cur->co)
                return IFAIL(i + 1, "fused chain: input %" PRId64 "x%" PRId64 "x%" PRId64
                                    " differs from the previous instruction's output %" PRId64
                                    "x%" PRId64 "x%" PRId64,
                             nx->hi, nx->wi, nx->ci, cur->ho, cur->wo, cur->co);
            if (nx->tile_x != head->tile_x || nx->tile_y != head->tile_y || nx->zs != head->zs ||
                nx->rows != head->rows)
                return IFAIL(i + 1, "fused chain: tile_x/tile_y/zs/rows must equal the chain "
                                    "head's (%" PRId64 "/%" PRId64 "/%" PRId64 "/%" PRId64 ")",
                             head->tile_x, head->tile_y, head->zs, head->rows);
            if (op == ENPU_OPC_RESHAPE && nx->fuse_next)
                return IFAIL(i + 1, "field 'fuse_next': a reshape must end its fused chain");

            if (op == ENPU_OPC_BN) {
                if (has_bn) return IFAIL(i + 1, "fused chain: a second bn (at most one per chain)");
                has_bn = 1;
            }
            if (op == ENPU_OPC_RELU || op == ENPU_OPC_ACT) {
                if (act) return IFAIL(i + 1, "fused chain: a second activation (at most one)");
                act = op == ENPU_OPC_RELU ? ENPU_ACT_RELU : ENPU_ACT_TABLE;
                act_first = !has_bn;
            }
            i++;
        }
        int order = has_bn && act && act_first ? ENPU_ORDER_ACT_BN : ENPU_ORDER_BN_ACT;
        if (head->fuse_bn != has_bn)
            return IFAIL(h, "field 'fuse_bn': value %" PRId64 " but the fused chain %s a bn",
                         head->fuse_bn, has_bn ? "has" : "has no");
        if (head->fuse_act != act)
            return IFAIL(h, "field 'fuse_act': value %" PRId64 " but the fused chain's activation "
                            "gives %d (0 none, 1 relu, 2 table)",
                         head->fuse_act, act);
        if (head->fuse_order != order)
            return IFAIL(h, "field 'fuse_order': value %" PRId64 " but the fused chain gives %d "
                            "(0 bn then act, 1 act then bn)",
                         head->fuse_order, order);
    }
    return 0;
}

static int valid_dtype(enpu_dtype dt) { return dt != ENPU_DT_UNDEFINED && enpu_dtype_size(dt) > 0; }

static int validate_io(const enpu_program *p, enpu_err *err) {
    const enpu_arch *a = &p->arch;
    for (int i = 0; i < p->n_io; i++) {
        const enpu_io_desc *d = &p->io[i];
#define DFAIL(code, ...) \
    return (enpu_fail(err, code, __VA_ARGS__), enpu_err_prefix(err, "section IO: descriptor %d ('%s')", i, d->name))
        if (!d->name[0]) DFAIL(ENPU_E_INVALID, "field 'name': empty");
        for (int j = 0; j < i; j++)
            if (strcmp(p->io[j].name, d->name) == 0)
                DFAIL(ENPU_E_INVALID, "field 'name': same as descriptor %d", j);
        if ((int)d->dir < 0 || d->dir > ENPU_IO_CONST)
            DFAIL(ENPU_E_INVALID, "field 'dir': value %d out of range 0..4", (int)d->dir);
        if (!valid_dtype(d->dtype)) DFAIL(ENPU_E_INVALID, "field 'dtype': unknown value %d", (int)d->dtype);
        if ((int)d->layout < 0 || d->layout > ENPU_LAYOUT_NHWC)
            DFAIL(ENPU_E_INVALID, "field 'layout': value %d out of range 0..2", (int)d->layout);
        if (d->rank < 0 || d->rank > ENPU_MAX_RANK)
            DFAIL(ENPU_E_INVALID, "field 'rank': value %d out of range 0..%d", d->rank, ENPU_MAX_RANK);
        int64_t numel;
        enpu_err e2 = {0};
        if (enpu_shape_numel(d->rank, d->dims, &numel, "shape", &e2) != 0 ||
            (d->rank > 0 && numel == 0))
            DFAIL(ENPU_E_INVALID, "field 'dims': %s", e2.code ? e2.msg : "a dimension is 0");
        if (!isfinite(d->scale) || d->scale < 0)
            DFAIL(ENPU_E_INVALID, "field 'scale': value %g must be finite and >= 0", (double)d->scale);
        if (d->mem != ENPU_MEM_MAIN && d->mem != ENPU_MEM_SKIP && d->mem != ENPU_MEM_HOST &&
            d->mem != ENPU_MEM_DRAM)
            DFAIL(ENPU_E_INVALID, "field 'mem': value %d is not main (0), skip (1), host (3) or dram (4)",
                  d->mem);
        if (d->row < 0 || (d->row > 0 && (d->mem == ENPU_MEM_HOST || d->layout == ENPU_LAYOUT_NHWC)))
            DFAIL(ENPU_E_INVALID, "field 'row': value %" PRId64 " must be 0 for a%s tensor", d->row,
                  d->mem == ENPU_MEM_HOST ? " host" : "n nhwc");
        if (d->row > ENPU_MAX_DIM || (d->row > 0 && numel % d->row != 0))
            DFAIL(ENPU_E_INVALID, "field 'row': %" PRId64 " elements per row do not divide the %" PRId64
                  " elements of the shape", d->row, numel);
        if (d->dir == ENPU_IO_CONST) {
            /* a host op's constant: its bytes in HOST_INIT */
            if (d->mem != ENPU_MEM_HOST)
                DFAIL(ENPU_E_INVALID, "field 'mem': a constant is in host memory (3), not %d", d->mem);
            uint64_t nb = (uint64_t)numel * enpu_dtype_size(d->dtype);
            if ((uint64_t)d->addr + nb > p->host_init_len)
                DFAIL(ENPU_E_INVALID, "field 'addr': bytes [%" PRIu32 ", %" PRIu64 ") end past the "
                      "HOST_INIT image (%zu bytes)", d->addr, (uint64_t)d->addr + nb, p->host_init_len);
            continue;
        }
        if (d->mem == ENPU_MEM_HOST) {
            if (d->addr != 0) DFAIL(ENPU_E_INVALID, "field 'addr': value %" PRIu32 " must be 0 for a host tensor", d->addr);
            continue;
        }
        /* int16 tensors are the row-stationary engine's 16-bit data, in DRAM */
        bool i16 = d->dtype == ENPU_DT_INT16 && d->mem == ENPU_MEM_DRAM && a->engine == ENPU_ENGINE_ROWSTAT;
        if (d->dtype != ENPU_DT_INT8 && !i16)
            DFAIL(ENPU_E_INVALID, "field 'dtype': %s, but NPU memory holds int8 tensors%s",
                  enpu_dtype_name(d->dtype),
                  d->dtype == ENPU_DT_INT16 ? " (int16 only in the DRAM of a rowstat arch)" : "");
        if (!(d->scale > 0))
            DFAIL(ENPU_E_INVALID, "field 'scale': value %g must be > 0 for %s", (double)d->scale,
                  enpu_dtype_name(d->dtype));
        int32_t zlo = i16 ? -32768 : -128, zhi = i16 ? 32767 : 127;
        if (d->zero_point < zlo || d->zero_point > zhi)
            DFAIL(ENPU_E_INVALID, "field 'zero_point': value %" PRId32 " out of range %d..%d",
                  d->zero_point, (int)zlo, (int)zhi);
        int64_t cap = enpu_arch_words(a, d->mem == ENPU_MEM_MAIN   ? a->main_dtcm_bytes
                                         : d->mem == ENPU_MEM_SKIP ? a->skip_dtcm_bytes
                                                                   : a->dram_bytes);
        int64_t words = enpu_io_words(a, d);
        const char *mname = d->mem == ENPU_MEM_MAIN ? "main DTCM" : d->mem == ENPU_MEM_SKIP ? "skip DTCM" : "DRAM";
        if ((int64_t)d->addr + words > cap)
            DFAIL(ENPU_E_INVALID, "field 'addr': [%" PRIu32 ", %" PRId64 ") (%" PRId64
                  " words) ends past the %s (%" PRId64 " words)",
                  d->addr, (int64_t)d->addr + words, words, mname, cap);
        if (d->mem == ENPU_MEM_DRAM && (int64_t)d->addr < enpu_program_dram_instr_words(p))
            DFAIL(ENPU_E_INVALID, "field 'addr': %" PRIu32 " is inside the program's instructions, which "
                  "occupy DRAM words [0, %" PRId64 ")", d->addr, enpu_program_dram_instr_words(p));
#undef DFAIL
    }
    return 0;
}

static int validate_hostops(const enpu_program *p, enpu_err *err) {
    for (int i = 0; i < p->n_hostops; i++) {
        const enpu_hostop *h = &p->hostops[i];
#define HFAIL(...) \
    return (enpu_fail(err, ENPU_E_INVALID, __VA_ARGS__), enpu_err_prefix(err, "section HOSTOPS: host op %d ('%s')", i, h->kind))
        if (!h->kind[0]) HFAIL("field 'kind': empty");
        if (h->n_in < 0 || h->n_out < 0 || h->n_in + h->n_out > ENPU_HOSTOP_MAX_IO)
            HFAIL("fields n_in=%d, n_out=%d: must be >= 0 with n_in + n_out <= %d", h->n_in, h->n_out,
                  ENPU_HOSTOP_MAX_IO);
        if (h->n_out > 0 && h->io[h->n_in] < 0) HFAIL("field 'io[%d]': output 0 is omitted", h->n_in);
        for (int k = 0; k < h->n_in + h->n_out; k++) {
            if (h->io[k] == -1) continue; /* an omitted optional operand */
            if (h->io[k] < 0 || h->io[k] >= p->n_io)
                HFAIL("field 'io[%d]': value %d but there are %d IO descriptors", k, h->io[k], p->n_io);
            if (k >= h->n_in && p->io[h->io[k]].dir == ENPU_IO_CONST)
                HFAIL("field 'io[%d]': output to constant descriptor %d", k, h->io[k]);
        }
        for (int k = 0; k < ENPU_HOSTOP_FPARAMS; k++)
            if (!isfinite(h->fparam[k])) HFAIL("field 'fparam[%d]': not finite", k);
#undef HFAIL
    }
    return 0;
}

static int validate_tables(const enpu_program *p, enpu_err *err) {
    const enpu_arch *a = &p->arch;
    int64_t cap = enpu_arch_words(a, a->weight_mem_bytes);
    for (int i = 0; i < p->n_tables; i++) {
        const enpu_table_desc *t = &p->tables[i];
#define TFAIL(...) \
    return (enpu_fail(err, ENPU_E_INVALID, __VA_ARGS__), enpu_err_prefix(err, "section TABLES: table %d ('%s')", i, t->name))
        if (t->segments != (uint32_t)a->act_segments)
            TFAIL("field 'segments': value %" PRIu32 " but the arch's act_segments is %" PRId64,
                  t->segments, a->act_segments);
        int64_t words = enpu_table_words(a);
        if ((int64_t)t->addr + words > cap)
            TFAIL("field 'addr': [%" PRIu32 ", %" PRId64 ") ends past the weight memory (%" PRId64
                  " words)", t->addr, (int64_t)t->addr + words, cap);
        if (!isfinite(t->max_err_lsb) || t->max_err_lsb < 0)
            TFAIL("field 'max_err_lsb': value %g must be finite and >= 0", (double)t->max_err_lsb);
#undef TFAIL
    }
    return 0;
}

/* Every token an instruction takes was sent by an earlier instruction of the
 * program order, so executing the program in that order never waits for a
 * token that cannot come: with in-order queues the program cannot deadlock
 * (docs/isa.md "Dependency tokens"). */
static int validate_tokens(const enpu_program *p, enpu_err *err) {
    int64_t tok[ENPU_MAX_QUEUES][ENPU_MAX_QUEUES];
    memset(tok, 0, sizeof tok);
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        int q = enpu_instr_queue(in);
        for (int s = 0; s < ENPU_MAX_QUEUES; s++) {
            if (!((in->pop >> s) & 1)) continue;
            if (tok[s][q] == 0)
                return IFAIL(i, "field 'pop': takes a token from queue %d that no earlier instruction "
                                "sent (the program would deadlock)", s);
            tok[s][q]--;
        }
        for (int d = 0; d < ENPU_MAX_QUEUES; d++)
            if ((in->push >> d) & 1) tok[q][d]++;
    }
    return 0;
}

int enpu_program_validate(const enpu_program *p, enpu_err *err) {
    const enpu_arch *a = &p->arch;
    int rc = enpu_arch_validate(a, err);
    if (rc) return enpu_err_prefix(err, "section ARCH");
    if (p->n_instr < 1)
        return enpu_fail(err, ENPU_E_INVALID, "section INSTR: no instructions (a program ends with 'end')");
    int64_t cap = a->itcm_bytes / ENPU_INSTR_BYTES;
    int64_t iwords = enpu_program_dram_instr_words(p);
    if (p->n_instr > cap && a->dram_bytes == 0)
        return enpu_fail(err, ENPU_E_NOFIT,
                         "section INSTR: %d instructions (%d bytes) do not fit the %" PRId64
                         "-byte ITCM of arch '%s' (%" PRId64 " instructions), which has no DRAM to "
                         "fetch them from",
                         p->n_instr, p->n_instr * ENPU_INSTR_BYTES, a->itcm_bytes, a->name, cap);
    if (iwords > enpu_arch_words(a, a->dram_bytes))
        return enpu_fail(err, ENPU_E_NOFIT,
                         "section INSTR: %d instructions (%d bytes) do not fit the DRAM of arch '%s' "
                         "(%" PRId64 " bytes)",
                         p->n_instr, p->n_instr * ENPU_INSTR_BYTES, a->name, a->dram_bytes);
    for (size_t k = 0; k < p->dram_init_len && (int64_t)k < iwords * enpu_arch_word_bytes(a); k++)
        if (p->dram_init[k])
            return enpu_fail(err, ENPU_E_INVALID,
                             "section DRAM_INIT: byte %zu is not zero, but the %d instructions are "
                             "fetched from DRAM words [0, %" PRId64 "), where the loader puts them",
                             k, p->n_instr, iwords);
    struct { const char *sec; size_t len; int64_t cap; const char *mem; } img[] = {
        {"WEIGHTS", p->weights_len, a->weight_mem_bytes, "weight memory"},
        {"DTCM_INIT", p->dtcm_init_len, a->main_dtcm_bytes, "main DTCM"},
        {"SKIP_INIT", p->skip_init_len, a->skip_dtcm_bytes, "skip DTCM"},
        {"DRAM_INIT", p->dram_init_len, a->dram_bytes, "DRAM"}};
    for (size_t i = 0; i < sizeof img / sizeof img[0]; i++)
        if ((int64_t)img[i].len > img[i].cap)
            return enpu_fail(err, ENPU_E_NOFIT,
                             "section %s: %zu bytes do not fit the %" PRId64 "-byte %s of arch '%s'",
                             img[i].sec, img[i].len, img[i].cap, img[i].mem, a->name);
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        int chained = i > 0 && p->instr[i - 1].fuse_next;
        rc = enpu_instr_validate_chained(a, in, chained, err);
        if (rc) return instr_fail(err, p, i);
        int last = i == p->n_instr - 1;
        if (in->opcode == ENPU_OPC_END && !last)
            return IFAIL(i, "'end' before the last instruction");
        if (last && in->opcode != ENPU_OPC_END)
            return IFAIL(i, "the last instruction must be 'end', not '%s'",
                         enpu_opcode_mnemonic(in->opcode));
        if (in->opcode == ENPU_OPC_SYNC && in->host_op >= p->n_hostops)
            return IFAIL(i, "field 'host_op': value %" PRId64 " but the program has %d host ops",
                         in->host_op, p->n_hostops);
        if (in->opcode == ENPU_OPC_DMA && in->dram_addr < iwords)
            return IFAIL(i, "field 'dram_addr': %" PRId64 " is inside the program's instructions, "
                            "which occupy DRAM words [0, %" PRId64 ")", in->dram_addr, iwords);
    }
    rc = validate_chains(p, err);
    if (rc) return rc;
    rc = validate_tokens(p, err);
    if (rc) return rc;
    rc = validate_tables(p, err);
    if (rc) return rc;
    rc = validate_io(p, err);
    if (rc) return rc;
    for (int i = 0; i < p->n_instr; i++) {
        /* a sync's are the host op's; an instruction's at most those it does */
        int64_t most = p->instr[i].opcode == ENPU_OPC_SYNC ? INT64_MAX : enpu_instr_macs(&p->instr[i]);
        if (p->layers[i].macs < 0 || p->layers[i].macs > most)
            return IFAIL(i, "section LAYERS: field 'macs': value %" PRId64 " out of range 0..%" PRId64,
                         p->layers[i].macs, most);
        int io = p->layers[i].io;
        if (p->layers[i].group < 0 || p->layers[i].group >= p->n_instr)
            return IFAIL(i, "section LAYERS: field 'group': value %d out of range 0..%d", p->layers[i].group,
                         p->n_instr - 1);
        if (io < -1 || io >= p->n_io)
            return IFAIL(i, "section LAYERS: field 'io': value %d but there are %d IO descriptors", io,
                         p->n_io);
        if (io >= 0 && strcmp(p->io[io].name, p->layers[i].tensor) != 0)
            return IFAIL(i, "section LAYERS: output tensor '%s' but IO descriptor %d is '%s'",
                         p->layers[i].tensor, io, p->io[io].name);
    }
    return validate_hostops(p, err);
}
