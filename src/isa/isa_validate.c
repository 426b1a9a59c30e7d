/* Semantic checks of one instruction against an arch, and the memory blocks
 * each opcode reads and writes (the compiler/simulator contract of
 * docs/isa.md "Memory blocks"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "easynpu/isa.h"
#include "easynpu/rowstat.h"
#include "easynpu/systolic.h"
#include "isa/isa_internal.h"

/* Product of non-negative factors, saturated at INT64_MAX: a program file's
 * LAYERS defaults are computed before its fields are validated, so the
 * fields may be anything their widths hold (fuzz finding,
 * tests/bad/regress/program_macs_overflow.enpu). */
static int64_t sat_mul(int64_t a, int64_t b) {
    if (a <= 0 || b <= 0) return 0;
    return a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t enpu_instr_macs(const enpu_instr *in) {
    int64_t out = sat_mul(sat_mul(in->ho, in->wo), in->co);
    switch (in->opcode) {
    case ENPU_OPC_CONV:
    case ENPU_OPC_CONV_RELU:
        return sat_mul(sat_mul(sat_mul(out, in->ci / (in->groups > 0 ? in->groups : 1)), in->hk), in->wk);
    case ENPU_OPC_FC: return sat_mul(sat_mul(sat_mul(in->hi, in->wi), in->ci), in->co);
    case ENPU_OPC_DWCONV:
    case ENPU_OPC_AVGPOOL: return sat_mul(sat_mul(out, in->hk), in->wk);
    case ENPU_OPC_RS_CONV: return enpu_rs_macs(in);
    case ENPU_OPC_SYA_CONV:
    case ENPU_OPC_SYA_DWCONV:
    case ENPU_OPC_SYA_FC: return enpu_sya_instr_macs(in);
    default: return 0;
    }
}

int64_t enpu_fmap_words(const enpu_arch *arch, int64_t h, int64_t w, int64_t c) {
    return h * w * enpu_ceil_div(c, arch->pes);
}

static int is_1x1_cw(int64_t op) {
    return op == ENPU_OPC_BN || op == ENPU_OPC_RELU || op == ENPU_OPC_ACT ||
           op == ENPU_OPC_ADD || op == ENPU_OPC_MUL;
}

static int uses_params(int64_t op) { /* weights-side bias + per-channel quant */
    return op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU || op == ENPU_OPC_FC ||
           op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL || op == ENPU_OPC_BN;
}

static int is_window(int64_t op) { /* ops whose kernel window may be split into row bands */
    return op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU || op == ENPU_OPC_DWCONV ||
           op == ENPU_OPC_MAXPOOL || op == ENPU_OPC_AVGPOOL;
}

int64_t enpu_quant_records(const enpu_arch *arch, const enpu_instr *in) {
    if (uses_params(in->opcode)) return in->co;
    if (arch->requant != ENPU_REQUANT_TFLITE) return 0;
    return in->opcode == ENPU_OPC_ADD ? 3 : in->opcode == ENPU_OPC_MUL ? 1 : 0;
}

int64_t enpu_table_words(const enpu_arch *arch) {
    int64_t wb = enpu_arch_word_bytes(arch);
    return enpu_ceil_div(ENPU_TABLE_HEADER_BYTES, wb) + enpu_ceil_div(arch->act_segments * 8, wb);
}

int64_t enpu_instr_param_words(const enpu_arch *arch, const enpu_instr *in) {
    int64_t wb = enpu_arch_word_bytes(arch), n = 0;
    if (uses_params(in->opcode)) n += enpu_ceil_div(4 * in->co, wb) + enpu_ceil_div(8 * in->co, wb);
    if (in->opcode == ENPU_OPC_BN) n += enpu_ceil_div(in->ci, arch->pes);
    if (in->opcode == ENPU_OPC_ACT) n += enpu_table_words(arch);
    /* requant tflite: an add's or mul's Q31 records (enpu_quant_records) */
    if (!uses_params(in->opcode)) n += enpu_ceil_div(8 * enpu_quant_records(arch, in), wb);
    return n;
}

int64_t enpu_perm_rank(int64_t perm, int64_t H, int64_t W, int64_t C, int64_t h, int64_t w,
                       int64_t c) {
    switch (perm) {
    case ENPU_PERM_HCW: return (h * C + c) * W + w;
    case ENPU_PERM_WHC: return (w * H + h) * C + c;
    case ENPU_PERM_WCH: return (w * C + c) * H + h;
    case ENPU_PERM_CHW: return (c * H + h) * W + w;
    case ENPU_PERM_CWH: return (c * W + w) * H + h;
    default: return (h * W + w) * C + c;
    }
}

int64_t enpu_ofmap_span(const enpu_arch *arch, const enpu_instr *in) {
    int64_t g = enpu_ceil_div(in->co, arch->pes);
    int64_t wpp = in->ofmap_wpp ? in->ofmap_wpp : g;
    int64_t pix = in->ho * in->wo;
    if (pix < 1) return 0;
    return (pix - 1) * wpp + in->ofmap_word + g;
}

int64_t enpu_ifmap_span(const enpu_arch *arch, const enpu_instr *in) {
    if (!in->ifmap_wpp) return enpu_fmap_words(arch, in->hi, in->wi, in->ci);
    int64_t pix = in->hi * in->wi;
    if (pix < 1) return 0;
    return (pix - 1) * in->ifmap_wpp + in->ifmap_word + enpu_ceil_div(in->ci, arch->pes);
}

/* Words from the first word of row 0 to the end of the last row. */
static int64_t dma_span(int64_t rows, int64_t len, int64_t stride) {
    return rows < 1 || len < 1 ? 0 : (rows - 1) * stride + len;
}

int enpu_instr_blocks(const enpu_arch *arch, const enpu_instr *in, int chained,
                      enpu_mem_block *out) {
    int n = 0;
    int64_t op = in->opcode;
    enpu_opclass k = enpu_opcode_class(op);
    if (k == ENPU_CLASS_NONE || k == ENPU_CLASS_CTRL) return 0;
    if (k == ENPU_CLASS_SYA) return enpu_sya_instr_blocks(arch, in, out);
    if (k == ENPU_CLASS_DMA) {
        int load = in->dma_dir == ENPU_DMA_LOAD;
        out[n++] = (enpu_mem_block){"dma", (int)in->dma_mem, in->sram_addr,
                                    dma_span(in->dma_rows, in->dma_len, in->sram_stride), load};
        out[n++] = (enpu_mem_block){"dram", ENPU_MEM_DRAM, in->dram_addr,
                                    dma_span(in->dma_rows, in->dma_len, in->dram_stride), !load};
        return n;
    }
    if (k == ENPU_CLASS_RS) {
        enpu_rs_geom g;
        enpu_err e = {0};
        if (enpu_rs_geom_of(arch, in, &g, &e) != 0) return 0;
        out[n++] = (enpu_mem_block){"ifmap", ENPU_MEM_DRAM, in->rs_ifmap_addr, g.ifmap_words, 0};
        out[n++] = (enpu_mem_block){"ofmap", ENPU_MEM_DRAM, in->rs_ofmap_addr, g.ofmap_words, 1};
        out[n++] = (enpu_mem_block){"weights", ENPU_MEM_DRAM, in->rs_weight_addr, g.weight_words, 0};
        return n;
    }
    int64_t wb = enpu_arch_word_bytes(arch);
    int64_t owords = enpu_fmap_words(arch, in->ho, in->wo, in->co);
    if (!chained)
        out[n++] = (enpu_mem_block){"ifmap", ENPU_MEM_MAIN, in->ifmap_addr, enpu_ifmap_span(arch, in), 0};
    if (!in->fuse_next && !in->ps_hold) /* a holding instruction writes nothing (ISA 8) */
        out[n++] = (enpu_mem_block){"ofmap", ENPU_MEM_MAIN, in->ofmap_addr,
                                    enpu_ofmap_span(arch, in), 1};
    if (op == ENPU_OPC_ADD || op == ENPU_OPC_MUL)
        out[n++] = (enpu_mem_block){"op2", in->op2_mem ? ENPU_MEM_SKIP : ENPU_MEM_MAIN,
                                    in->op2_addr, owords, 0};
    if (in->store_skip)
        out[n++] = (enpu_mem_block){"skip", ENPU_MEM_SKIP, in->skip_addr, owords, 1};
    int64_t wwords = 0;
    if (op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU) {
        int64_t g = in->groups > 0 ? in->groups : 1;
        /* lane groups: words of pes >> lane_split channels (§16) */
        int64_t L = arch->pes >> (in->lane_split < 8 ? in->lane_split : 8);
        wwords = in->ci * in->hk * in->wk * enpu_ceil_div(in->co / g, L > 0 ? L : 1);
    } else if (op == ENPU_OPC_FC) {
        wwords = in->hi * in->wi * in->ci * enpu_ceil_div(in->co, arch->pes);
    } else if (op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL) {
        wwords = in->hk * in->wk * enpu_ceil_div(in->ci, arch->pes);
    } else if (op == ENPU_OPC_BN) {
        wwords = enpu_ceil_div(in->ci, arch->pes);
    }
    if (wwords > 0)
        out[n++] = (enpu_mem_block){"weights", ENPU_MEM_WEIGHT, in->weight_addr, wwords, 0};
    if (uses_params(op))
        out[n++] = (enpu_mem_block){"bias", ENPU_MEM_WEIGHT, in->bias_addr,
                                    enpu_ceil_div(in->co * 4, wb), 0};
    int64_t nq = enpu_quant_records(arch, in);
    if (nq > 0)
        out[n++] = (enpu_mem_block){"quant", ENPU_MEM_WEIGHT, in->quant_addr,
                                    enpu_ceil_div(nq * 8, wb), 0};
    if (op == ENPU_OPC_ACT)
        out[n++] = (enpu_mem_block){"table", ENPU_MEM_WEIGHT, in->table_addr,
                                    enpu_table_words(arch), 0};
    ENPU_ASSERT(n <= ENPU_MAX_BLOCKS);
    return n;
}

static const char *mem_name(int mem) {
    switch (mem) {
    case ENPU_MEM_MAIN: return "main DTCM";
    case ENPU_MEM_SKIP: return "skip DTCM";
    case ENPU_MEM_WEIGHT: return "weight memory";
    case ENPU_MEM_DRAM: return "DRAM";
    }
    return "host";
}

static const char *addr_field(const char *role, int rs_role) {
    static const char *const map[][2] = {
        {"ifmap", "ifmap_addr"}, {"ofmap", "ofmap_addr"},   {"op2", "op2_addr"},
        {"skip", "skip_addr"},   {"weights", "weight_addr"}, {"bias", "bias_addr"},
        {"quant", "quant_addr"}, {"table", "table_addr"},   {"dma", "sram_addr"},
        {"dram", "dram_addr"}};
    static const char *const rs[][2] = {
        {"ifmap", "rs_ifmap_addr"}, {"ofmap", "rs_ofmap_addr"}, {"weights", "rs_weight_addr"}};
    if (rs_role)
        for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
            if (strcmp(rs[i][0], role) == 0) return rs[i][1];
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], role) == 0) return map[i][1];
    return role;
}

static int64_t mem_words(const enpu_arch *a, int mem) {
    switch (mem) {
    case ENPU_MEM_MAIN: return enpu_arch_words(a, a->main_dtcm_bytes);
    case ENPU_MEM_SKIP: return enpu_arch_words(a, a->skip_dtcm_bytes);
    case ENPU_MEM_WEIGHT: return enpu_arch_words(a, a->weight_mem_bytes);
    case ENPU_MEM_DRAM: return enpu_arch_words(a, a->dram_bytes);
    }
    return 0;
}

#define FAIL(...) return enpu_fail(err, ENPU_E_INVALID, __VA_ARGS__)

/* Output extent of a window op along one axis; -1 if the window does not fit. */
static int64_t out_extent(int64_t in, int64_t pad, int64_t k, int64_t dil, int64_t stride) {
    int64_t span = dil * (k - 1) + 1;
    if (in + pad < span) return -1;
    return (in + pad - span) / stride + 1;
}

static int check_geometry(const enpu_instr *in, enpu_err *err) {
    int64_t op = in->opcode;
    static const int positive[] = {ENPU_F_hi, ENPU_F_wi, ENPU_F_ci, ENPU_F_ho, ENPU_F_wo,
                                   ENPU_F_co, ENPU_F_hk, ENPU_F_wk, ENPU_F_stride_h,
                                   ENPU_F_stride_w, ENPU_F_dil_h, ENPU_F_dil_w, ENPU_F_groups};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        if (enpu_instr_get(in, positive[i]) < 1)
            FAIL("field '%s': value %" PRId64 " must be at least 1", enpu_field_get(positive[i])->name,
                 enpu_instr_get(in, positive[i]));
    if (op != ENPU_OPC_CONV && op != ENPU_OPC_CONV_RELU && in->groups != 1)
        FAIL("field 'groups': value %" PRId64 " must be 1 for %s (groups are for conv)", in->groups,
             enpu_opcode_mnemonic(op));
    if (is_1x1_cw(op) || op == ENPU_OPC_RESHAPE) {
        static const int one[] = {ENPU_F_hk, ENPU_F_wk, ENPU_F_stride_h, ENPU_F_stride_w,
                                  ENPU_F_dil_h, ENPU_F_dil_w};
        for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
            if (enpu_instr_get(in, one[i]) != 1)
                FAIL("field '%s': value %" PRId64 " must be 1 for %s", enpu_field_get(one[i])->name,
                     enpu_instr_get(in, one[i]), enpu_opcode_mnemonic(op));
        static const int zero[] = {ENPU_F_pad_top, ENPU_F_pad_bottom, ENPU_F_pad_left,
                                   ENPU_F_pad_right};
        for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
            if (enpu_instr_get(in, zero[i]) != 0)
                FAIL("field '%s': value %" PRId64 " must be 0 for %s", enpu_field_get(zero[i])->name,
                     enpu_instr_get(in, zero[i]), enpu_opcode_mnemonic(op));
    }
    if (op == ENPU_OPC_RESHAPE) {
        if (in->ho * in->wo * in->co != in->hi * in->wi * in->ci)
            FAIL("reshape: output %" PRId64 "x%" PRId64 "x%" PRId64 " has a different element count "
                 "from input %" PRId64 "x%" PRId64 "x%" PRId64,
                 in->ho, in->wo, in->co, in->hi, in->wi, in->ci);
        if (in->perm >= ENPU_PERM_COUNT)
            FAIL("field 'perm': value %" PRId64 " out of range 0..%d", in->perm, ENPU_PERM_COUNT - 1);
        return 0;
    }
    if (in->perm != 0)
        FAIL("field 'perm': value %" PRId64 " must be 0 for %s (perm is for reshape)", in->perm,
             enpu_opcode_mnemonic(op));
    if (op == ENPU_OPC_FC) {
        static const int one[] = {ENPU_F_ho,       ENPU_F_wo,       ENPU_F_hk,    ENPU_F_wk,
                                  ENPU_F_stride_h, ENPU_F_stride_w, ENPU_F_dil_h, ENPU_F_dil_w};
        for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
            if (enpu_instr_get(in, one[i]) != 1)
                FAIL("field '%s': value %" PRId64 " must be 1 for fc (a 1x1 output over the whole map)",
                     enpu_field_get(one[i])->name, enpu_instr_get(in, one[i]));
        if (in->pad_top || in->pad_bottom || in->pad_left || in->pad_right)
            FAIL("fields pad_*: must be 0 for fc");
        return 0;
    }
    if (is_1x1_cw(op)) {
        if (in->ho != in->hi || in->wo != in->wi || in->co != in->ci)
            FAIL("%s: output %" PRId64 "x%" PRId64 "x%" PRId64 " must equal input %" PRId64 "x%" PRId64
                 "x%" PRId64 " (fields ho, wo, co)",
                 enpu_opcode_mnemonic(op), in->ho, in->wo, in->co, in->hi, in->wi, in->ci);
        return 0;
    }
    /* window ops: conv, conv_relu, dwconv, maxpool, avgpool */
    int64_t eh = out_extent(in->hi, in->pad_top + in->pad_bottom, in->hk, in->dil_h, in->stride_h);
    int64_t ew = out_extent(in->wi, in->pad_left + in->pad_right, in->wk, in->dil_w, in->stride_w);
    if (eh != in->ho)
        FAIL("field 'ho': value %" PRId64 " but hi=%" PRId64 ", pad_top+pad_bottom=%" PRId64
             ", hk=%" PRId64 ", dil_h=%" PRId64 ", stride_h=%" PRId64 " give %" PRId64,
             in->ho, in->hi, in->pad_top + in->pad_bottom, in->hk, in->dil_h, in->stride_h, eh);
    if (ew != in->wo)
        FAIL("field 'wo': value %" PRId64 " but wi=%" PRId64 ", pad_left+pad_right=%" PRId64
             ", wk=%" PRId64 ", dil_w=%" PRId64 ", stride_w=%" PRId64 " give %" PRId64,
             in->wo, in->wi, in->pad_left + in->pad_right, in->wk, in->dil_w, in->stride_w, ew);
    if (op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU) {
        if (in->ci % in->groups != 0 || in->co % in->groups != 0)
            FAIL("field 'groups': value %" PRId64 " does not divide ci=%" PRId64 " and co=%" PRId64,
                 in->groups, in->ci, in->co);
    } else if (in->co != in->ci) {
        FAIL("field 'co': value %" PRId64 " must equal ci=%" PRId64 " for %s", in->co, in->ci,
             enpu_opcode_mnemonic(op));
    }
    return 0;
}

static int check_tiles(const enpu_arch *a, const enpu_instr *in, enpu_err *err) {
    /* A reshape tiles its input (the tile is stored through the address
     * remap); every other op tiles its output. */
    int reshape = in->opcode == ENPU_OPC_RESHAPE;
    int64_t w = reshape ? in->wi : in->wo, h = reshape ? in->hi : in->ho;
    if (in->tile_x < 1 || in->tile_x > w)
        FAIL("field 'tile_x': value %" PRId64 " out of range 1..%s=%" PRId64, in->tile_x,
             reshape ? "wi" : "wo", w);
    if (in->tile_y < 1 || in->tile_y > h)
        FAIL("field 'tile_y': value %" PRId64 " out of range 1..%s=%" PRId64, in->tile_y,
             reshape ? "hi" : "ho", h);
    if (in->zs < 1) FAIL("field 'zs': value %" PRId64 " must be at least 1", in->zs);
    if (in->rows < 1 || in->rows > a->pe_rows)
        FAIL("field 'rows': value %" PRId64 " out of range 1..pe_rows=%" PRId64, in->rows, a->pe_rows);
    int64_t lg = (int64_t)1 << (in->lane_split < 9 ? in->lane_split : 9);
    if (in->lane_split) {
        /* lane groups (docs/microarch.md §16): a plain dense conv whose
         * output words are written by the writer's lane shifter */
        if (lg > a->lane_groups_max)
            FAIL("field 'lane_split': value %" PRId64 " gives %" PRId64
                 " lane groups, over lane_groups_max=%" PRId64, in->lane_split, lg, a->lane_groups_max);
        if (in->opcode != ENPU_OPC_CONV && in->opcode != ENPU_OPC_CONV_RELU)
            FAIL("field 'lane_split': value %" PRId64 " must be 0 for %s (lane groups are for conv)",
                 in->lane_split, enpu_opcode_mnemonic(in->opcode));
        if (a->pes % lg != 0)
            FAIL("field 'lane_split': value %" PRId64 " gives %" PRId64 " lane groups, which do not divide pes=%" PRId64,
                 in->lane_split, lg, a->pes);
        if (in->groups != 1 || in->fuse_next)
            FAIL("field 'lane_split': value %" PRId64 " needs groups=1 and fuse_next=0 (have %" PRId64
                 ", %" PRId64 ")", in->lane_split, in->groups, in->fuse_next);
    }
    int64_t per_row = enpu_ceil_div(in->tile_x * in->tile_y, in->rows * lg);
    if (per_row * in->zs > a->psum_depth)
        FAIL("field 'zs': tile x*y=%" PRId64 "x%" PRId64 " over %" PRId64 " row(s) of %" PRId64
             " lane group(s) times zs=%" PRId64 " needs %" PRId64 " psum entries, over psum_depth=%" PRId64,
             in->tile_x, in->tile_y, in->rows, lg, in->zs, per_row * in->zs, a->psum_depth);
    if (in->ps_cont || in->ps_hold) {
        /* the psum file holds one tile of one output-channel block: an
         * instruction that continues or holds sums is that one tile */
        const char *f = in->ps_hold ? "ps_hold" : "ps_cont";
        if (in->tile_x < in->wo || in->tile_y < in->ho)
            FAIL("field '%s': the output %" PRId64 "x%" PRId64 " must be one tile (tile %" PRId64 "x%" PRId64
                 "): the psum file holds one tile's sums", f, in->ho, in->wo, in->tile_y, in->tile_x);
        if (in->co > in->zs * (a->pes >> (in->lane_split < 8 ? in->lane_split : 8)))
            FAIL("field '%s': co=%" PRId64 " over one output-channel block of zs=%" PRId64
                 " words: the psum file holds one block's sums", f, in->co, in->zs);
        if (in->groups != 1) FAIL("field '%s': needs groups=1 (have %" PRId64 ")", f, in->groups);
        if (in->ps_hold && (in->fuse_next || in->store_skip || in->ofmap_wpp || in->ofmap_word))
            FAIL("field 'ps_hold': set with fuse_next, store_skip or ofmap_wpp (a held sum is not "
                 "requantized or written)");
    }
    if (in->band_h && !is_window(in->opcode))
        FAIL("field 'band_h': value %" PRId64 " must be 0 for %s (bands are for window ops)", in->band_h,
             enpu_opcode_mnemonic(in->opcode));
    if (in->band_h > in->hk)
        FAIL("field 'band_h': value %" PRId64 " over hk=%" PRId64, in->band_h, in->hk);
    int64_t band = in->band_h ? in->band_h : in->hk;
    int64_t xi = in->stride_w * (in->tile_x - 1) + in->dil_w * (in->wk - 1) + 1;
    int64_t yi = in->stride_h * (in->tile_y - 1) + in->dil_h * (band - 1) + 1;
    if (in->opcode == ENPU_OPC_FC) xi = yi = 1;
    if (in->tile_xi != xi)
        FAIL("field 'tile_xi': value %" PRId64 " but stride_w*(tile_x-1) + dil_w*(wk-1) + 1 = %" PRId64,
             in->tile_xi, xi);
    if (in->tile_yi != yi)
        FAIL("field 'tile_yi': value %" PRId64 " but stride_h*(tile_y-1) + dil_h*(%s-1) + 1 = %" PRId64,
             in->tile_yi, in->band_h ? "band_h" : "hk", yi);
    if (xi * yi > a->ifmap_pad_depth)
        FAIL("field 'tile_xi': input tile x'*y'=%" PRId64 "x%" PRId64 " = %" PRId64
             " entries, over ifmap_pad_depth=%" PRId64,
             xi, yi, xi * yi, a->ifmap_pad_depth);
    enpu_opclass k = enpu_opcode_class(in->opcode);
    if (k == ENPU_CLASS_CONV) {
        /* z = zs*pes output channels per block; fewer than co/groups means
         * output-channel blocks (docs/microarch.md 12.3). */
        if (in->zs > a->weight_pad_depth)
            FAIL("field 'zs': value %" PRId64 " over weight_pad_depth=%" PRId64, in->zs,
                 a->weight_pad_depth);
    }
    if (in->ofmap_word && !in->ofmap_wpp)
        FAIL("field 'ofmap_word': value %" PRId64 " needs ofmap_wpp", in->ofmap_word);
    if (in->ofmap_wpp && in->ofmap_word + enpu_ceil_div(in->co, a->pes) > in->ofmap_wpp)
        FAIL("field 'ofmap_wpp': value %" PRId64 " but ofmap_word=%" PRId64 " + ceil(co/pes)=%" PRId64
             " words per pixel are written",
             in->ofmap_wpp, in->ofmap_word, enpu_ceil_div(in->co, a->pes));
    if (in->ifmap_wpp || in->ifmap_word) {
        /* some channel words of each pixel (a conv's input-channel blocks):
         * the loader's pixel stride; fc reads its map flat, lane groups and
         * groups index channels across words */
        if (in->opcode == ENPU_OPC_FC)
            FAIL("field 'ifmap_wpp': must be 0 for fc (its input words are read flat)");
        if (in->groups != 1 || in->lane_split)
            FAIL("field 'ifmap_wpp': needs groups=1 and lane_split=0 (have %" PRId64 ", %" PRId64 ")",
                 in->groups, in->lane_split);
        if (!in->ifmap_wpp) FAIL("field 'ifmap_word': value %" PRId64 " needs ifmap_wpp", in->ifmap_word);
        if (in->ifmap_word + enpu_ceil_div(in->ci, a->pes) > in->ifmap_wpp)
            FAIL("field 'ifmap_wpp': value %" PRId64 " but ifmap_word=%" PRId64 " + ceil(ci/pes)=%" PRId64
                 " words per pixel are read",
                 in->ifmap_wpp, in->ifmap_word, enpu_ceil_div(in->ci, a->pes));
    }
    return 0;
}

static int overlaps(const enpu_mem_block *x, const enpu_mem_block *y) {
    return x->mem == y->mem && x->addr < y->addr + y->words && y->addr < x->addr + x->words;
}

static int check_blocks(const enpu_arch *a, const enpu_instr *in, int chained, enpu_err *err) {
    enpu_mem_block b[ENPU_MAX_BLOCKS];
    int n = enpu_instr_blocks(a, in, chained, b);
    for (int i = 0; i < n; i++) {
        int64_t cap = mem_words(a, b[i].mem);
        if (b[i].addr + b[i].words > cap)
            FAIL("field '%s': %s block [%" PRId64 ", %" PRId64 ") of %" PRId64
                 " words ends past the %s (%" PRId64 " words)",
                 addr_field(b[i].role, enpu_opcode_class(in->opcode) == ENPU_CLASS_RS), b[i].role, b[i].addr, b[i].addr + b[i].words, b[i].words,
                 mem_name(b[i].mem), cap);
    }
    /* A write may not clobber what the same instruction still reads, except
     * exactly in place for 1x1 channel-wise ops (each tile is read before
     * its results are written). */
    for (int i = 0; i < n; i++) {
        if (!b[i].write) continue;
        for (int j = 0; j < n; j++) {
            if (b[j].write || !overlaps(&b[i], &b[j])) continue;
            if (is_1x1_cw(in->opcode) && b[i].addr == b[j].addr) continue;
            FAIL("field '%s': %s block [%" PRId64 ", %" PRId64 ") overlaps the %s block [%" PRId64
                 ", %" PRId64 ") in the %s",
                 addr_field(b[i].role, enpu_opcode_class(in->opcode) == ENPU_CLASS_RS), b[i].role, b[i].addr, b[i].addr + b[i].words, b[j].role,
                 b[j].addr, b[j].addr + b[j].words, mem_name(b[i].mem));
        }
    }
    return 0;
}

int enpu_instr_validate_chained(const enpu_arch *arch, const enpu_instr *in, int chained,
                                enpu_err *err) {
    enpu_isa_layout l;
    int rc = enpu_isa_layout_make(arch, &l, err);
    if (rc) return rc;
    enpu_opclass k = enpu_opcode_class(in->opcode);
    if (k == ENPU_CLASS_NONE)
        FAIL("field 'opcode': value 0x%02" PRIx64 " is not a known opcode", (uint64_t)in->opcode);
    if (k == ENPU_CLASS_DMA && arch->dram_bytes == 0)
        FAIL("dma: arch '%s' has no DRAM (dram_bytes = 0)", arch->name);
    if (arch->engine == ENPU_ENGINE_ROWSTAT && k != ENPU_CLASS_RS && k != ENPU_CLASS_CTRL)
        FAIL("%s: arch '%s' has the row-stationary engine, which runs rs_conv, sync and end",
             enpu_opcode_mnemonic(in->opcode), arch->name);
    const int fm = enpu_opcode_format(in->opcode);
    for (int f = 0; f < ENPU_F_COUNT; f++) {
        int64_t v = enpu_instr_get(in, f), lo, hi;
        if (l.pos[fm][f] < 0) {
            if (v != 0)
                FAIL("field '%s': value %" PRId64 " but %s has no such field", enpu_field_get(f)->name, v,
                     enpu_opcode_mnemonic(in->opcode));
            continue;
        }
        enpu_field_range(&l, f, &lo, &hi);
        if (v < lo || v > hi)
            FAIL("field '%s': value %" PRId64 " out of range %" PRId64 "..%" PRId64 " (%d bits)",
                 enpu_field_get(f)->name, v, lo, hi, l.width[f]);
    }
    /* dependency tokens: queues that exist, never the instruction's own */
    int64_t queues = ((int64_t)1 << (1 + arch->dma_engines)) - 1;
    int own = enpu_instr_queue(in);
    for (int t = 0; t < 2; t++) {
        int64_t m = t ? in->pop : in->push;
        const char *nm = t ? "pop" : "push";
        if (m & ~queues)
            FAIL("field '%s': mask 0x%" PRIx64 " names a queue the arch does not have (queues: bit 0 "
                 "compute, bits 1..%" PRId64 " the %" PRId64 " DMA engine(s))",
                 nm, (uint64_t)m, arch->dma_engines, arch->dma_engines);
        /* a compute instruction completes before the next one starts; a DMA
         * command only has its bursts granted, so a later command of the same
         * engine that must wait for it takes a token of its own queue */
        if (own == ENPU_QUEUE_COMPUTE && (m & 1))
            FAIL("field '%s': mask 0x%" PRIx64 " names the compute queue, the instruction's own "
                 "(compute instructions complete in order)", nm, (uint64_t)m);
    }
    if (k == ENPU_CLASS_DMA) {
        if (in->dma_engine >= arch->dma_engines)
            FAIL("field 'dma_engine': value %" PRId64 " but arch '%s' has %" PRId64 " DMA engine(s)",
                 in->dma_engine, arch->name, arch->dma_engines);
        if (in->dma_mem > ENPU_MEM_WEIGHT)
            FAIL("field 'dma_mem': value %" PRId64 " out of range 0..2 (main, skip, weight)", in->dma_mem);
        if (in->dma_rows < 1 || in->dma_len < 1)
            FAIL("field '%s': value %" PRId64 " must be at least 1", in->dma_rows < 1 ? "dma_rows" : "dma_len",
                 in->dma_rows < 1 ? in->dma_rows : in->dma_len);
        if (in->dma_rows > 1 && (in->sram_stride < in->dma_len || in->dram_stride < in->dma_len))
            FAIL("field '%s': value %" PRId64 " is less than dma_len=%" PRId64 " (rows would overlap)",
                 in->sram_stride < in->dma_len ? "sram_stride" : "dram_stride",
                 in->sram_stride < in->dma_len ? in->sram_stride : in->dram_stride, in->dma_len);
        return check_blocks(arch, in, 0, err);
    }
    if (k == ENPU_CLASS_RS) {
        rc = enpu_rs_validate(arch, in, err);
        return rc ? rc : check_blocks(arch, in, 0, err);
    }
    if (k == ENPU_CLASS_CTRL) {
        if (in->opcode == ENPU_OPC_END && in->host_op != 0)
            FAIL("field 'host_op': value %" PRId64 " must be 0 for end (host_op is for sync)", in->host_op);
        return 0;
    }
    if (k == ENPU_CLASS_SYA) return enpu_sya_instr_validate(arch, in, err);
    if (arch->engine != ENPU_ENGINE_EASYNPU)
        FAIL("%s: arch '%s' has engine '%s' (EasyNPU instructions need engine 'easynpu')",
             enpu_opcode_mnemonic(in->opcode), arch->name, enpu_engine_name(arch->engine));
    rc = check_geometry(in, err);
    if (rc) return rc;

    int64_t want_cast = k == ENPU_CLASS_CONV ? ENPU_CAST_BROADCAST : ENPU_CAST_MULTICAST;
    if (in->cast_mode != want_cast)
        FAIL("field 'cast_mode': %s for %s, which needs %s", in->cast_mode ? "multicast" : "broadcast",
             enpu_opcode_mnemonic(in->opcode), want_cast ? "multicast" : "broadcast");
    if (in->fuse_act > ENPU_ACT_TABLE)
        FAIL("field 'fuse_act': value %" PRId64 " out of range 0..2 (none, relu, table)", in->fuse_act);
    if ((in->fuse_bn || in->fuse_act) && !in->fuse_next)
        FAIL("field '%s': set without fuse_next (the fused ops are the following instructions)",
             in->fuse_bn ? "fuse_bn" : "fuse_act");
    if (in->fuse_order && !(in->fuse_bn && in->fuse_act))
        FAIL("field 'fuse_order': act_bn needs both fuse_bn and fuse_act");
    if (in->clamp_lo > in->clamp_hi)
        FAIL("field 'clamp_lo': value %" PRId64 " above clamp_hi=%" PRId64, in->clamp_lo, in->clamp_hi);
    if ((in->in1_mult || in->in2_mult) && in->opcode != ENPU_OPC_ADD)
        FAIL("field '%s': set for %s (the input multipliers are for add)",
             in->in1_mult ? "in1_mult" : "in2_mult", enpu_opcode_mnemonic(in->opcode));
    if ((in->ofmap_wpp || in->ofmap_word) && in->fuse_next)
        FAIL("field 'ofmap_wpp': set with fuse_next (the chain's last instruction stores)");
    if (in->op2_mem && in->opcode != ENPU_OPC_ADD && in->opcode != ENPU_OPC_MUL)
        FAIL("field 'op2_mem': set for %s, which has no second operand", enpu_opcode_mnemonic(in->opcode));
    rc = check_tiles(arch, in, err);
    if (rc) return rc;
    return check_blocks(arch, in, chained, err);
}

int enpu_instr_validate(const enpu_arch *arch, const enpu_instr *in, enpu_err *err) {
    return enpu_instr_validate_chained(arch, in, 0, err);
}
