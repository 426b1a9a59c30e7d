/* The instruction table: field metadata, layout, encoder and decoder, all
 * generated from isa_fields.def. */
#include "easynpu/isa.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_internal.h"

#define U 0
#define S 1
#define FIXED ENPU_W_FIXED
#define MAIN ENPU_W_MAIN
#define SKIP ENPU_W_SKIP
#define DTCM ENPU_W_DTCM
#define WMEM ENPU_W_WMEM
#define PSUM ENPU_W_PSUM
#define IFPAD ENPU_W_IFPAD
#define ROWS ENPU_W_ROWS
#define MULT ENPU_W_MULT
#define DRAM ENPU_W_DRAM
#define SRAM ENPU_W_SRAM
#define F_ALL ENPU_FM_ALL
#define F_LAYER ENPU_FM_LAYER
#define F_CONV ENPU_FM_CONV
#define F_CW ENPU_FM_CW
#define F_CTRL ENPU_FM_CTRL
#define F_DMA ENPU_FM_DMA
#define F_RS ENPU_FM_RS
#define F_GEOM ENPU_FM_GEOM
#define F_SYA ENPU_FM_SYA

static const enpu_field_info fields[ENPU_F_COUNT] = {
#define ENPU_FIELD(nm, sign, rule, bits, names, fmt, meaning) \
    {#nm, sign, rule, bits, names, fmt, meaning, offsetof(enpu_instr, nm)},
#include "isa/isa_fields.def"
};

#define CONV ENPU_CLASS_CONV
#define CW ENPU_CLASS_CW
#define MOVE ENPU_CLASS_MOVE
#define CTRL ENPU_CLASS_CTRL
#define DMA ENPU_CLASS_DMA
#define RS ENPU_CLASS_RS
#define SYA ENPU_CLASS_SYA

typedef struct opinfo {
    int code;
    const char *mnemonic;
    enpu_opclass klass;
    const char *meaning;
} opinfo;

static const opinfo opcodes[] = {
#define ENPU_OPCODE(id, code, mnemonic, klass, meaning) {code, mnemonic, klass, meaning},
#include "isa/isa_fields.def"
};
#define N_OPCODES ((int)(sizeof opcodes / sizeof opcodes[0]))

const enpu_field_info *enpu_field_get(int f) {
    ENPU_ASSERT(f >= 0 && f < ENPU_F_COUNT);
    return &fields[f];
}

int enpu_field_find(const char *name) {
    for (int f = 0; f < ENPU_F_COUNT; f++)
        if (strcmp(fields[f].name, name) == 0) return f;
    return -1;
}

static const opinfo *op_lookup(int64_t code) {
    for (int i = 0; i < N_OPCODES; i++)
        if (opcodes[i].code == code) return &opcodes[i];
    return NULL;
}

enpu_opclass enpu_opcode_class(int64_t opcode) {
    const opinfo *o = op_lookup(opcode);
    return o ? o->klass : ENPU_CLASS_NONE;
}

enpu_format enpu_opcode_format(int64_t opcode) {
    switch (enpu_opcode_class(opcode)) {
    case ENPU_CLASS_CONV: return ENPU_FMT_CONV;
    case ENPU_CLASS_DMA: return ENPU_FMT_DMA;
    case ENPU_CLASS_CTRL: return ENPU_FMT_CTRL;
    case ENPU_CLASS_RS: return ENPU_FMT_RS;
    case ENPU_CLASS_SYA: return ENPU_FMT_SYA;
    default: return ENPU_FMT_CW;
    }
}

int enpu_instr_queue(const enpu_instr *in) {
    return enpu_opcode_format(in->opcode) == ENPU_FMT_DMA ? 1 + (int)in->dma_engine
                                                           : ENPU_QUEUE_COMPUTE;
}

const char *enpu_opcode_mnemonic(int64_t opcode) {
    const opinfo *o = op_lookup(opcode);
    return o ? o->mnemonic : NULL;
}

const char *enpu_opcode_meaning(int64_t opcode) {
    const opinfo *o = op_lookup(opcode);
    return o ? o->meaning : NULL;
}

int enpu_opcode_find(const char *mnemonic) {
    for (int i = 0; i < N_OPCODES; i++)
        if (strcmp(opcodes[i].mnemonic, mnemonic) == 0) return opcodes[i].code;
    return -1;
}

static const int opcode_codes[] = {
#define ENPU_OPCODE(id, code, mnemonic, klass, meaning) code,
#include "isa/isa_fields.def"
};

const int *enpu_opcode_list(int *n) {
    *n = N_OPCODES;
    return opcode_codes;
}

/* Address width: enough bits for word addresses 0..words-1 (at least 1). */
static int addr_bits(const enpu_arch *a, int64_t bytes) {
    int64_t words = enpu_arch_words(a, bytes);
    int b = enpu_bitlen(words > 1 ? (uint64_t)(words - 1) : 1);
    return b < 1 ? 1 : b;
}

static int rule_width(const enpu_arch *a, const enpu_field_info *fi) {
    switch (fi->rule) {
    case ENPU_W_FIXED: return fi->fixed_bits;
    case ENPU_W_MAIN: return addr_bits(a, a->main_dtcm_bytes);
    case ENPU_W_SKIP: return addr_bits(a, a->skip_dtcm_bytes);
    case ENPU_W_DTCM: {
        int m = addr_bits(a, a->main_dtcm_bytes), s = addr_bits(a, a->skip_dtcm_bytes);
        return m > s ? m : s;
    }
    case ENPU_W_WMEM: return addr_bits(a, a->weight_mem_bytes);
    case ENPU_W_PSUM: return enpu_bitlen((uint64_t)a->psum_depth);
    case ENPU_W_IFPAD: return enpu_bitlen((uint64_t)a->ifmap_pad_depth);
    case ENPU_W_ROWS: return enpu_bitlen((uint64_t)a->pe_rows);
    case ENPU_W_MULT: return (int)a->mult_bits;
    case ENPU_W_DRAM: return addr_bits(a, a->dram_bytes);
    case ENPU_W_SRAM: {
        int m = addr_bits(a, a->main_dtcm_bytes), s = addr_bits(a, a->skip_dtcm_bytes);
        int w = addr_bits(a, a->weight_mem_bytes);
        return m > s ? (m > w ? m : w) : (s > w ? s : w);
    }
    }
    return 0;
}

static const char *const fmt_names[ENPU_FMT_COUNT] = {"conv", "channel-wise", "control", "dma",
                                                      "systolic", "row-stationary"};

int enpu_isa_layout_make(const enpu_arch *arch, enpu_isa_layout *out, enpu_err *err) {
    /* Guard the derived rules against an unvalidated arch so widths stay sane. */
    if (arch->bus_bits < 8 || arch->bus_bits % 8 != 0 || arch->psum_depth < 1 ||
        arch->ifmap_pad_depth < 1 || arch->pe_rows < 1 || arch->mult_bits < 1 ||
        arch->mult_bits > 31 || arch->main_dtcm_bytes < 1 || arch->skip_dtcm_bytes < 1 ||
        arch->weight_mem_bytes < 1 || arch->dram_bytes < 0 || arch->psum_depth > ((int64_t)1 << 40) ||
        arch->ifmap_pad_depth > ((int64_t)1 << 40) || arch->pe_rows > ((int64_t)1 << 40))
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': parameters out of range for an instruction layout "
                         "(validate the arch first)", arch->name);
    for (int f = 0; f < ENPU_F_COUNT; f++) out->width[f] = rule_width(arch, &fields[f]);
    for (int fm = 0; fm < ENPU_FMT_COUNT; fm++) {
        int pos = 0;
        for (int f = 0; f < ENPU_F_COUNT; f++) {
            if (!(fields[f].formats & (1 << fm))) {
                out->pos[fm][f] = -1;
                continue;
            }
            out->pos[fm][f] = pos;
            pos += out->width[f];
        }
        out->used_bits[fm] = pos;
        if (pos > ENPU_INSTR_BITS) {
            int wmain = addr_bits(arch, arch->main_dtcm_bytes);
            int wwm = addr_bits(arch, arch->weight_mem_bytes);
            return enpu_fail(err, ENPU_E_LIMIT,
                             "arch '%s': the %s instruction's fields need %d bits, more than the "
                             "%d-bit instruction (main DTCM addresses are %d bits, weight-memory "
                             "addresses %d bits, DRAM addresses %d bits, psum tiles %d bits): "
                             "reduce the on-chip memory sizes or the pad/psum depths",
                             arch->name, fmt_names[fm], pos, ENPU_INSTR_BITS, wmain, wwm,
                             addr_bits(arch, arch->dram_bytes), enpu_bitlen((uint64_t)arch->psum_depth));
        }
    }
    return 0;
}

void enpu_field_range(const enpu_isa_layout *l, int f, int64_t *lo, int64_t *hi) {
    int w = l->width[f];
    if (fields[f].is_signed) {
        *lo = w ? -((int64_t)1 << (w - 1)) : 0;
        *hi = w ? ((int64_t)1 << (w - 1)) - 1 : 0;
    } else {
        *lo = 0;
        *hi = w >= 63 ? INT64_MAX : ((int64_t)1 << w) - 1;
    }
}

int enpu_instr_encode(const enpu_isa_layout *l, const enpu_instr *in,
                      uint8_t out[ENPU_INSTR_BYTES], enpu_err *err) {
    memset(out, 0, ENPU_INSTR_BYTES);
    const int fm = enpu_opcode_format(in->opcode);
    for (int f = 0; f < ENPU_F_COUNT; f++) {
        int64_t v = enpu_instr_get(in, f), lo, hi;
        if (l->pos[fm][f] < 0) {
            if (v != 0)
                return enpu_fail(err, ENPU_E_INVALID,
                                 "field '%s': value %" PRId64 " in a %s instruction, which has no "
                                 "such field", fields[f].name, v, fmt_names[fm]);
            continue;
        }
        enpu_field_range(l, f, &lo, &hi);
        if (v < lo || v > hi)
            return enpu_fail(err, ENPU_E_INVALID,
                             "field '%s': value %" PRId64 " does not fit %d bits (range %" PRId64
                             "..%" PRId64 ")",
                             fields[f].name, v, l->width[f], lo, hi);
        uint64_t u = (uint64_t)v;
        for (int b = 0; b < l->width[f]; b++) {
            if ((u >> b) & 1u) {
                int bit = l->pos[fm][f] + b;
                out[bit / 8] |= (uint8_t)(1u << (bit % 8));
            }
        }
    }
    return 0;
}

int enpu_instr_decode(const enpu_isa_layout *l, const uint8_t in[ENPU_INSTR_BYTES],
                      enpu_instr *out, enpu_err *err) {
    memset(out, 0, sizeof *out);
    /* the opcode is the first field of every format */
    const int fm = enpu_opcode_format(in[0]);
    for (int bit = l->used_bits[fm]; bit < ENPU_INSTR_BITS; bit++)
        if ((in[bit / 8] >> (bit % 8)) & 1u)
            return enpu_fail(err, ENPU_E_FORMAT,
                             "reserved bit %d is set (the %s instruction's fields end at bit %d)",
                             bit, fmt_names[fm], l->used_bits[fm] - 1);
    for (int f = 0; f < ENPU_F_COUNT; f++) {
        if (l->pos[fm][f] < 0) continue;
        uint64_t u = 0;
        int w = l->width[f];
        for (int b = 0; b < w; b++) {
            int bit = l->pos[fm][f] + b;
            if ((in[bit / 8] >> (bit % 8)) & 1u) u |= (uint64_t)1 << b;
        }
        int64_t v = (int64_t)u;
        if (fields[f].is_signed && w > 0 && ((u >> (w - 1)) & 1u)) v = (int64_t)u - ((int64_t)1 << w);
        *enpu_instr_field(out, f) = v;
    }
    return 0;
}

/* Spelling of value v of a field with value_names, NULL if none. */
static const char *value_name(const enpu_field_info *fi, int64_t v, char *buf, size_t n) {
    if (!fi->value_names || v < 0) return NULL;
    const char *p = fi->value_names;
    for (int64_t i = 0; i < v; i++) {
        p = strchr(p, '|');
        if (!p) return NULL;
        p++;
    }
    size_t len = strcspn(p, "|");
    if (len + 1 > n) return NULL;
    memcpy(buf, p, len);
    buf[len] = 0;
    return buf;
}

int enpu_instr_format(const enpu_instr *in, const char *layer_name, char *buf, size_t n) {
    enpu_sb b = {0};
    const char *mn = enpu_opcode_mnemonic(in->opcode);
    if (mn)
        enpu_sb_puts(&b, mn);
    else
        enpu_sb_printf(&b, "op_0x%02" PRIx64, (uint64_t)in->opcode);
    if (layer_name) {
        enpu_sb_puts(&b, " name=");
        enpu_sb_quote(&b, layer_name);
    }
    for (int f = 1; f < ENPU_F_COUNT; f++) { /* field 0 is the opcode: the mnemonic */
        int64_t v = enpu_instr_get(in, f);
        if (v == 0) continue;
        char nb[32];
        const char *vn = value_name(&fields[f], v, nb, sizeof nb);
        if (vn)
            enpu_sb_printf(&b, " %s=%s", fields[f].name, vn);
        else
            enpu_sb_printf(&b, " %s=%" PRId64, fields[f].name, v);
    }
    int len = b.oom ? -1 : (int)b.len;
    if (n > 0) {
        if (b.oom || !b.s) {
            buf[0] = 0;
        } else {
            size_t k = b.len < n - 1 ? b.len : n - 1;
            memcpy(buf, b.s, k);
            buf[k] = 0;
        }
    }
    enpu_sb_free(&b);
    return len;
}

static const char *rule_text(enpu_wrule r) {
    switch (r) {
    case ENPU_W_FIXED: return "fixed";
    case ENPU_W_MAIN: return "main DTCM address";
    case ENPU_W_SKIP: return "skip DTCM address";
    case ENPU_W_DTCM: return "main/skip DTCM address";
    case ENPU_W_WMEM: return "weight-memory address";
    case ENPU_W_PSUM: return "bitlen(psum_depth)";
    case ENPU_W_IFPAD: return "bitlen(ifmap_pad_depth)";
    case ENPU_W_ROWS: return "bitlen(pe_rows)";
    case ENPU_W_MULT: return "mult_bits";
    case ENPU_W_DRAM: return "DRAM address";
    case ENPU_W_SRAM: return "on-chip address";
    }
    return "?";
}

static const char *class_text(enpu_opclass c) {
    switch (c) {
    case ENPU_CLASS_CONV: return "BasicConv (broadcast)";
    case ENPU_CLASS_CW: return "ChannelWise (multicast)";
    case ENPU_CLASS_MOVE: return "Reshape";
    case ENPU_CLASS_CTRL: return "control";
    case ENPU_CLASS_DMA: return "DMA";
    case ENPU_CLASS_RS: return "row-stationary";
    case ENPU_CLASS_SYA: return "systolic";
    case ENPU_CLASS_NONE: break;
    }
    return "?";
}

char *enpu_isa_table_md(const enpu_arch *arch, enpu_err *err) {
    enpu_isa_layout l;
    if (enpu_isa_layout_make(arch, &l, err) != 0) return NULL;
    enpu_sb b = {0};
    enpu_sb_printf(&b, "Opcodes (bits[1:0] class, bits[4:2] sub-operation, bit 7 reshape):\n\n");
    enpu_sb_puts(&b, "| opcode | binary | mnemonic | class | meaning |\n|---|---|---|---|---|\n");
    for (int i = 0; i < N_OPCODES; i++) {
        int c = opcodes[i].code;
        enpu_sb_printf(&b, "| 0x%02x | %d%d%d_%d%d%d_%d%d | `%s` | %s | %s |\n", c, (c >> 7) & 1,
                       (c >> 6) & 1, (c >> 5) & 1, (c >> 4) & 1, (c >> 3) & 1, (c >> 2) & 1,
                       (c >> 1) & 1, c & 1, opcodes[i].mnemonic, class_text(opcodes[i].klass),
                       opcodes[i].meaning);
    }
    for (int fm = 0; fm < ENPU_FMT_COUNT; fm++) {
    enpu_sb_printf(&b, "\nFields of the %s format for arch '%s' (%d of %d bits used; bits %d..%d "
                       "reserved, zero):\n\n",
                   fmt_names[fm], arch->name, l.used_bits[fm], ENPU_INSTR_BITS, l.used_bits[fm],
                   ENPU_INSTR_BITS - 1);
    enpu_sb_puts(&b, "| field | bits | width | width rule | signed | values | meaning |\n"
                     "|---|---|---|---|---|---|---|\n");
    for (int f = 0; f < ENPU_F_COUNT; f++) {
        if (l.pos[fm][f] < 0) continue;
        int lo = l.pos[fm][f], hi = l.pos[fm][f] + l.width[f] - 1;
        char bits[32];
        if (lo == hi)
            snprintf(bits, sizeof bits, "[%d]", lo);
        else
            snprintf(bits, sizeof bits, "[%d:%d]", hi, lo);
        char vals[128] = "";
        if (fields[f].value_names) { /* '|' would split the markdown cell */
            snprintf(vals, sizeof vals, "%s", fields[f].value_names);
            for (char *p = vals; *p; p++)
                if (*p == '|') *p = '/';
        }
        enpu_sb_printf(&b, "| `%s` | %s | %d | %s | %s | %s | %s |\n", fields[f].name, bits,
                       l.width[f], rule_text(fields[f].rule), fields[f].is_signed ? "yes" : "no",
                       vals, fields[f].meaning);
    }
    }
    char *s = enpu_sb_take(&b);
    if (!s) enpu_fail(err, ENPU_E_NOMEM, "out of memory formatting the ISA table");
    return s;
}
