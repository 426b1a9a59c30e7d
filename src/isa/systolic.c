/* The systolic engine's instructions: shapes, units, addressing, validation
 * and blocks (include/easynpu/systolic.h, docs/systolic.md).  What a unit
 * reads and writes, when and how often, is not here: the simulator counts it
 * where it happens (src/sim/systolic/) and the cost model computes it by its
 * own rules (src/compiler/systolic/), so that their equality checks both. */
#include "easynpu/systolic.h"

#include <inttypes.h>
#include <string.h>

#include "isa/isa_internal.h"

static int64_t cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }
static int64_t wbytes(const enpu_arch *a) { return enpu_arch_word_bytes(a); }

void enpu_sya_shape_of(const enpu_instr *in, enpu_sya_shape *s) {
    memset(s, 0, sizeof *s);
    if (in->opcode == ENPU_OPC_SYA_FC) {
        s->fc = true;
        s->G = 1, s->N = 1, s->F = in->co, s->cpg = in->ci;
        s->taps = in->hi * in->wi;
    } else if (in->opcode == ENPU_OPC_SYA_DWCONV) {
        s->dw = true;
        s->G = in->ci, s->N = in->ho * in->wo, s->F = 1, s->cpg = 1;
        s->taps = in->hk * in->wk;
    } else {
        int64_t g = in->groups > 0 ? in->groups : 1;
        s->G = g, s->N = in->ho * in->wo, s->F = in->co / g, s->cpg = in->ci / g;
        s->taps = in->hk * in->wk;
    }
    s->K = s->cpg * s->taps;
    s->nip = in->sya_nip > 0 ? in->sya_nip : 1;
    s->nf = in->sya_nf > 0 ? in->sya_nf : 1;
    s->ng = cdiv(s->N, s->nip);
    s->nt = cdiv(s->F, s->nf);
    s->units = s->G * s->ng * s->nt;
    s->loop = (int)in->sya_loop;
}

void enpu_sya_unit_at(const enpu_sya_shape *s, int64_t u, enpu_sya_unit *out) {
    int64_t per = s->ng * s->nt, r = u % per;
    out->gi = u / per;
    if (s->loop == 0) {
        out->g = r / s->nt, out->f = r % s->nt;
    } else {
        out->f = r / s->ng, out->g = r % s->ng;
    }
    out->p0 = out->g * s->nip;
    out->rows = s->N - out->p0 < s->nip ? s->N - out->p0 : s->nip;
    out->o0 = out->f * s->nf;
    out->cols = s->F - out->o0 < s->nf ? s->F - out->o0 : s->nf;
}

/* The input pixel of window position t for output point p, -1 if it is
 * padding. */
static int64_t in_pixel(const enpu_instr *in, const enpu_sya_shape *s, int64_t p, int64_t t) {
    if (s->fc) return t;
    int64_t oy = p / in->wo, ox = p % in->wo, kh = t / in->wk, kw = t % in->wk;
    int64_t iy = oy * in->stride_h - in->pad_top + kh * in->dil_h;
    int64_t ix = ox * in->stride_w - in->pad_left + kw * in->dil_w;
    if (iy < 0 || iy >= in->hi || ix < 0 || ix >= in->wi) return -1;
    return iy * in->wi + ix;
}

void enpu_sya_act_at(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                     const enpu_sya_unit *u, int64_t r, int64_t k, int64_t *word, int *lane) {
    int64_t wb = wbytes(a), wpp = cdiv(in->ci, wb);
    int64_t t = k / s->cpg, c = k % s->cpg;
    int64_t pix = in_pixel(in, s, u->p0 + r, t);
    int64_t ch = s->dw ? u->gi : u->gi * s->cpg + c;
    if (pix < 0) {
        *word = -1, *lane = 0;
        return;
    }
    *word = in->ifmap_addr + pix * wpp + ch / wb;
    *lane = (int)(ch % wb);
}

int64_t enpu_sya_wgt_at(const enpu_arch *a, const enpu_instr *in, const enpu_sya_shape *s,
                        const enpu_sya_unit *u, int64_t k, int64_t c) {
    int64_t wb = wbytes(a);
    if (s->dw) return in->weight_addr * wb + u->gi * cdiv(s->K, wb) * wb + k;
    return in->weight_addr * wb + (u->gi * s->K + k) * cdiv(s->F, wb) * wb + u->o0 + c;
}

int64_t enpu_sya_weight_words(const enpu_arch *a, const enpu_instr *in) {
    enpu_sya_shape s;
    enpu_sya_shape_of(in, &s);
    int64_t wb = wbytes(a);
    if (s.dw) return in->ci * cdiv(s.K, wb);
    return s.G * s.K * cdiv(s.F, wb);
}

int64_t enpu_sya_instr_macs(const enpu_instr *in) {
    enpu_sya_shape s;
    enpu_sya_shape_of(in, &s);
    int64_t m = s.G;
    const int64_t f[3] = {s.N, s.F, s.K};
    for (int i = 0; i < 3; i++) { /* saturating: fields may be anything before validation */
        if (m <= 0 || f[i] <= 0) return 0;
        m = m > INT64_MAX / f[i] ? INT64_MAX : m * f[i];
    }
    return m;
}

int enpu_sya_instr_blocks(const enpu_arch *a, const enpu_instr *in, enpu_mem_block *out) {
    int64_t wb = wbytes(a);
    int n = 0;
    out[n++] = (enpu_mem_block){"ifmap", ENPU_MEM_MAIN, in->ifmap_addr, in->hi * in->wi * cdiv(in->ci, wb), 0};
    out[n++] = (enpu_mem_block){"ofmap", ENPU_MEM_MAIN, in->ofmap_addr, in->ho * in->wo * cdiv(in->co, wb), 1};
    out[n++] = (enpu_mem_block){"weights", ENPU_MEM_WEIGHT, in->weight_addr, enpu_sya_weight_words(a, in), 0};
    out[n++] = (enpu_mem_block){"bias", ENPU_MEM_WEIGHT, in->bias_addr, cdiv(in->co * 4, wb), 0};
    out[n++] = (enpu_mem_block){"quant", ENPU_MEM_WEIGHT, in->quant_addr, cdiv(in->co * 8, wb), 0};
    return n;
}

#define FAIL(...) return enpu_fail(err, ENPU_E_INVALID, __VA_ARGS__)

static int64_t extent(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t d, int64_t s) {
    int64_t span = in + pa + pb - d * (k - 1) - 1;
    return span < 0 ? 0 : span / s + 1;
}

int enpu_sya_instr_validate(const enpu_arch *a, const enpu_instr *in, enpu_err *err) {
    const char *mn = enpu_opcode_mnemonic(in->opcode);
    if (a->engine != ENPU_ENGINE_SYSTOLIC)
        FAIL("%s: arch '%s' has engine '%s' (systolic instructions need engine 'systolic')", mn,
             a->name, enpu_engine_name(a->engine));
    static const int pos[] = {ENPU_F_hi, ENPU_F_wi, ENPU_F_ci, ENPU_F_ho, ENPU_F_wo, ENPU_F_co,
                              ENPU_F_hk, ENPU_F_wk, ENPU_F_stride_h, ENPU_F_stride_w,
                              ENPU_F_dil_h, ENPU_F_dil_w, ENPU_F_groups, ENPU_F_sya_nip, ENPU_F_sya_nf};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (enpu_instr_get(in, pos[i]) < 1)
            FAIL("field '%s': value %" PRId64 " must be at least 1", enpu_field_get(pos[i])->name,
                 enpu_instr_get(in, pos[i]));
    if (in->opcode == ENPU_OPC_SYA_FC) {
        if (in->ho != 1 || in->wo != 1 || in->hk != 1 || in->wk != 1 || in->stride_h != 1 ||
            in->stride_w != 1 || in->dil_h != 1 || in->dil_w != 1 || in->groups != 1 || in->pad_top ||
            in->pad_bottom || in->pad_left || in->pad_right)
            FAIL("sya_fc: fields ho, wo, hk, wk, strides, dilations and groups must be 1 and the pads 0 "
                 "(it reads the whole hi x wi x ci map)");
    } else {
        if (in->pad_top >= in->dil_h * (in->hk - 1) + 1 || in->pad_bottom >= in->dil_h * (in->hk - 1) + 1 ||
            in->pad_left >= in->dil_w * (in->wk - 1) + 1 || in->pad_right >= in->dil_w * (in->wk - 1) + 1)
            FAIL("field 'pad_top': pads %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                 " must be smaller than the window (%" PRId64 "x%" PRId64 ", dilation %" PRId64 "x%" PRId64 ")",
                 in->pad_top, in->pad_left, in->pad_bottom, in->pad_right, in->hk, in->wk, in->dil_h,
                 in->dil_w);
        int64_t ho = extent(in->hi, in->pad_top, in->pad_bottom, in->hk, in->dil_h, in->stride_h);
        int64_t wo = extent(in->wi, in->pad_left, in->pad_right, in->wk, in->dil_w, in->stride_w);
        if (in->ho != ho || in->wo != wo)
            FAIL("field 'ho': output %" PRId64 "x%" PRId64 " but the window gives %" PRId64 "x%" PRId64,
                 in->ho, in->wo, ho, wo);
    }
    if (in->opcode == ENPU_OPC_SYA_DWCONV) {
        if (in->co != in->ci || in->groups != 1)
            FAIL("sya_dwconv: field 'co': value %" PRId64 " must equal ci=%" PRId64
                 " and groups must be 1 (one channel per unit)",
                 in->co, in->ci);
        if (in->sya_nf != 1)
            FAIL("field 'sya_nf': value %" PRId64 " must be 1 for sya_dwconv (one filter per channel)",
                 in->sya_nf);
    }
    if (in->opcode == ENPU_OPC_SYA_CONV && (in->ci % in->groups || in->co % in->groups))
        FAIL("field 'groups': value %" PRId64 " must divide ci=%" PRId64 " and co=%" PRId64, in->groups,
             in->ci, in->co);
    if (in->sya_nip > enpu_arch_sya_rows(a))
        FAIL("field 'sya_nip': value %" PRId64 " out of range 1..%" PRId64 " (the array's rows)",
             in->sya_nip, enpu_arch_sya_rows(a));
    if (in->sya_nf > enpu_arch_sya_cols(a))
        FAIL("field 'sya_nf': value %" PRId64 " out of range 1..%" PRId64 " (the array's columns)",
             in->sya_nf, enpu_arch_sya_cols(a));
    if (in->clamp_lo > in->clamp_hi)
        FAIL("field 'clamp_lo': value %" PRId64 " above clamp_hi=%" PRId64, in->clamp_lo, in->clamp_hi);
    enpu_mem_block b[ENPU_MAX_BLOCKS] = {0}; /* gcc -O3 cannot bound n */
    int n = enpu_sya_instr_blocks(a, in, b);
    for (int i = 0; i < n; i++) {
        int64_t cap = b[i].mem == ENPU_MEM_MAIN ? enpu_arch_words(a, a->main_dtcm_bytes)
                                                : enpu_arch_words(a, a->weight_mem_bytes);
        if (b[i].addr + b[i].words > cap)
            FAIL("%s block [%" PRId64 ", %" PRId64 ") ends past the %s (%" PRId64 " words)", b[i].role,
                 b[i].addr, b[i].addr + b[i].words, b[i].mem == ENPU_MEM_MAIN ? "main DTCM" : "weight memory",
                 cap);
    }
    if (b[0].addr < b[1].addr + b[1].words && b[1].addr < b[0].addr + b[0].words)
        FAIL("field 'ofmap_addr': ofmap block [%" PRId64 ", %" PRId64 ") overlaps the ifmap block [%" PRId64
             ", %" PRId64 ") in the main DTCM",
             b[1].addr, b[1].addr + b[1].words, b[0].addr, b[0].addr + b[0].words);
    return 0;
}
