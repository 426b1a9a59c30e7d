/* Instruction set: layout, encode/decode round trips of every opcode with
 * random legal fields, every field at its limits, the semantic validator,
 * the listing line, and that docs/isa.md carries the generated table. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "easynpu/isa.h"
#include "testutil.h"

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64*: deterministic across platforms */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static int64_t rr(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static enpu_arch arch_of(const char *name) {
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset(name, &a, &err), 0);
    return a;
}

static int is_window(int64_t op) {
    return op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU || op == ENPU_OPC_DWCONV ||
           op == ENPU_OPC_MAXPOOL || op == ENPU_OPC_AVGPOOL;
}

/* A random instruction of opcode op that the validator must accept. */
static enpu_instr random_legal(const enpu_arch *a, int64_t op) {
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = op;
    enpu_opclass k = enpu_opcode_class(op);
    /* dependency tokens: any other queue (bit 0 compute, 1 + e DMA engine e) */
    int64_t queues = ((int64_t)1 << (1 + a->dma_engines)) - 1;
    if (k == ENPU_CLASS_DMA) in.dma_engine = rr(0, a->dma_engines - 1);
    int64_t own = k == ENPU_CLASS_DMA ? 0 : 1; /* DMA engines may wait for themselves */
    in.push = rr(0, queues) & ~own;
    in.pop = rr(0, queues) & ~own;
    if (k == ENPU_CLASS_CTRL) {
        if (op == ENPU_OPC_SYNC) in.host_op = rr(0, 4095);
        return in;
    }
    if (k == ENPU_CLASS_SYA) { /* the systolic engine's (include/easynpu/systolic.h) */
        in.ci = rr(1, 40), in.hi = rr(1, 14), in.wi = rr(1, 14);
        in.hk = in.wk = in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.groups = 1;
        in.ho = in.wo = 1;
        if (op == ENPU_OPC_SYA_FC) {
            in.co = rr(1, 40);
        } else {
            in.hk = rr(1, 3), in.wk = rr(1, 3), in.stride_h = rr(1, 3), in.stride_w = rr(1, 3);
            in.dil_h = rr(1, 2), in.dil_w = rr(1, 2);
            int64_t sh = in.dil_h * (in.hk - 1) + 1, sw = in.dil_w * (in.wk - 1) + 1;
            in.pad_top = rr(0, sh - 1), in.pad_bottom = rr(0, sh - 1);
            in.pad_left = rr(0, sw - 1), in.pad_right = rr(0, sw - 1);
            if (in.hi + in.pad_top + in.pad_bottom < sh) in.hi = sh;
            if (in.wi + in.pad_left + in.pad_right < sw) in.wi = sw;
            in.ho = (in.hi + in.pad_top + in.pad_bottom - sh) / in.stride_h + 1;
            in.wo = (in.wi + in.pad_left + in.pad_right - sw) / in.stride_w + 1;
            in.co = in.ci;
            if (op == ENPU_OPC_SYA_CONV) {
                in.groups = in.ci % 2 == 0 && rr(0, 1) ? 2 : 1;
                in.co = in.groups * rr(1, 24);
            }
        }
        in.sya_nip = rr(1, enpu_arch_sya_rows(a));
        in.sya_nf = op == ENPU_OPC_SYA_DWCONV ? 1 : rr(1, enpu_arch_sya_cols(a));
        in.sya_loop = rr(0, 1);
        int64_t words = a->main_dtcm_bytes / (a->bus_bits / 8);
        in.ifmap_addr = rr(0, 8);
        in.ofmap_addr = words - in.ho * in.wo * ((in.co + a->pes - 1) / a->pes) - rr(0, 8);
        in.weight_addr = rr(0, 100), in.bias_addr = rr(2000, 2100), in.quant_addr = rr(2200, 2300);
        in.zp_in = rr(-128, 127), in.zp_out = rr(-128, 127);
        in.clamp_lo = rr(-128, 0), in.clamp_hi = rr(0, 127);
        return in;
    }
    if (k == ENPU_CLASS_DMA) {
        in.dma_dir = rr(0, 1);
        in.dma_mem = rr(0, 2);
        in.dma_rows = rr(1, 8);
        in.dma_len = rr(1, 40);
        in.sram_stride = in.dma_rows > 1 ? in.dma_len + rr(0, 20) : rr(0, 50);
        in.dram_stride = in.dma_rows > 1 ? in.dma_len + rr(0, 500) : rr(0, 50);
        in.sram_addr = rr(0, 600);
        in.dram_addr = rr(0, 1 << 20);
        return in;
    }
    in.cast_mode = k == ENPU_CLASS_CONV ? ENPU_CAST_BROADCAST : ENPU_CAST_MULTICAST;
    in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.hk = in.wk = in.groups = 1;
    in.ci = rr(1, 40);
    in.hi = rr(1, 14);
    in.wi = rr(1, 14);
    if (is_window(op)) {
        in.hk = rr(1, 3), in.wk = rr(1, 3);
        in.stride_h = rr(1, 3), in.stride_w = rr(1, 3);
        in.dil_h = rr(1, 2), in.dil_w = rr(1, 2);
        in.pad_top = rr(0, 2), in.pad_bottom = rr(0, 2), in.pad_left = rr(0, 2), in.pad_right = rr(0, 2);
        int64_t sh = in.dil_h * (in.hk - 1) + 1, sw = in.dil_w * (in.wk - 1) + 1;
        if (in.hi + in.pad_top + in.pad_bottom < sh) in.hi = sh;
        if (in.wi + in.pad_left + in.pad_right < sw) in.wi = sw;
        in.ho = (in.hi + in.pad_top + in.pad_bottom - sh) / in.stride_h + 1;
        in.wo = (in.wi + in.pad_left + in.pad_right - sw) / in.stride_w + 1;
        in.co = in.ci;
        if (k == ENPU_CLASS_CONV) {
            in.groups = rr(0, 1) ? 1 : (in.ci % 2 == 0 ? 2 : 1);
            in.co = in.groups * rr(1, 24);
        }
    } else if (op == ENPU_OPC_RESHAPE) {
        in.ho = 1, in.wo = in.hi, in.co = in.wi * in.ci;
        in.perm = rr(0, ENPU_PERM_COUNT - 1);
    } else if (op == ENPU_OPC_FC) {
        in.hi = rr(1, 4), in.wi = rr(1, 4);
        in.ho = in.wo = 1, in.co = rr(1, 40);
    } else {
        in.ho = in.hi, in.wo = in.wi, in.co = in.ci;
    }
    in.rows = rr(1, a->pe_rows);
    in.zs = k == ENPU_CLASS_CONV ? rr(1, (in.co / in.groups + a->pes - 1) / a->pes) : rr(1, 2);
    if (is_window(op) && rr(0, 1)) in.band_h = rr(1, in.hk);
    int64_t band = in.band_h ? in.band_h : in.hk;
    int64_t tw = op == ENPU_OPC_RESHAPE ? in.wi : in.wo, th = op == ENPU_OPC_RESHAPE ? in.hi : in.ho;
    in.tile_x = rr(1, tw), in.tile_y = rr(1, th);
    for (;;) { /* shrink until the tile fits the pads and the psum file */
        in.tile_xi = in.stride_w * (in.tile_x - 1) + in.dil_w * (in.wk - 1) + 1;
        in.tile_yi = in.stride_h * (in.tile_y - 1) + in.dil_h * (band - 1) + 1;
        if (op == ENPU_OPC_FC) in.tile_xi = in.tile_yi = 1;
        int64_t per_row = (in.tile_x * in.tile_y + in.rows - 1) / in.rows;
        if (in.tile_xi * in.tile_yi <= a->ifmap_pad_depth && per_row * in.zs <= a->psum_depth) break;
        if (in.tile_x >= in.tile_y && in.tile_x > 1) in.tile_x--;
        else if (in.tile_y > 1) in.tile_y--;
        else in.zs = 1;
    }
    int64_t words = a->main_dtcm_bytes / (a->bus_bits / 8);
    int64_t ow = in.ho * in.wo * ((in.co + a->pes - 1) / a->pes);
    in.ifmap_addr = rr(0, 8);
    in.ofmap_addr = words - ow - rr(0, 8);
    if (op != ENPU_OPC_ADD && op != ENPU_OPC_MUL && rr(0, 1)) {
        in.store_skip = 1;
        in.skip_addr = rr(0, 16);
    }
    if (op == ENPU_OPC_ADD || op == ENPU_OPC_MUL) {
        in.op2_mem = rr(0, 1);
        in.op2_addr = in.op2_mem ? rr(0, 16) : words / 2 - ow;
        if (op == ENPU_OPC_ADD)
            in.in1_mult = rr(0, ((int64_t)1 << a->mult_bits) - 1),
            in.in2_mult = rr(0, ((int64_t)1 << a->mult_bits) - 1);
        in.zp_op2 = rr(-128, 127);
    }
    in.weight_addr = rr(0, 100);
    in.bias_addr = rr(2000, 2100);
    in.quant_addr = rr(2200, 2300);
    in.table_addr = rr(2400, 4000);
    in.zp_in = rr(-128, 127), in.zp_out = rr(-128, 127);
    in.clamp_lo = rr(-128, 0), in.clamp_hi = rr(0, 127);
    in.out_mult = rr(0, ((int64_t)1 << a->mult_bits) - 1);
    in.out_shift = rr(0, 63);
    /* the opcode's format holds only some fields: the others are zero */
    int fm = 1 << enpu_opcode_format(op);
    for (int f = 0; f < ENPU_F_COUNT; f++)
        if (!(enpu_field_get(f)->formats & fm)) *enpu_instr_field(&in, f) = 0;
    return in;
}

static void test_layout(void **state) {
    (void)state;
    enpu_arch a = arch_of("easynpu");
    enpu_isa_layout l;
    enpu_err err = {0};
    assert_int_equal(enpu_isa_layout_make(&a, &l, &err), 0);
    for (int fm = 0; fm < ENPU_FMT_COUNT; fm++) assert_int_equal(l.pos[fm][ENPU_F_opcode], 0);
    assert_int_equal(l.width[ENPU_F_opcode], 8);
    assert_int_equal(l.pos[ENPU_FMT_CONV][ENPU_F_fuse_next], 8);
    assert_int_equal(l.pos[ENPU_FMT_CW][ENPU_F_fuse_next], 8);
    assert_int_equal(l.pos[ENPU_FMT_DMA][ENPU_F_fuse_next], -1);
    assert_int_equal(l.pos[ENPU_FMT_CW][ENPU_F_dram_addr], -1);
    assert_int_equal(l.pos[ENPU_FMT_CONV][ENPU_F_op2_addr], -1);
    assert_int_equal(l.pos[ENPU_FMT_CW][ENPU_F_host_op], -1);
    assert_int_equal(l.pos[ENPU_FMT_CTRL][ENPU_F_host_op], 8);
    assert_int_equal(l.pos[ENPU_FMT_DMA][ENPU_F_dma_engine], 8);
    assert_int_equal(l.width[ENPU_F_dram_addr], 22);   /* 64 MiB of 16-byte words */
    assert_int_equal(l.width[ENPU_F_sram_addr], 12);   /* the largest on-chip memory */
    assert_int_equal(l.width[ENPU_F_ifmap_addr], 12);  /* 4096 words */
    assert_int_equal(l.width[ENPU_F_skip_addr], 10);   /* 1024 words */
    assert_int_equal(l.width[ENPU_F_op2_addr], 12);
    assert_int_equal(l.width[ENPU_F_tile_x], 7);       /* 0..64 */
    assert_int_equal(l.width[ENPU_F_rows], 1);
    assert_int_equal(l.width[ENPU_F_out_mult], 20);
    assert_int_equal(l.width[ENPU_F_in1_mult], 20);   /* mult_bits (ISA 2) */
    /* ISA 2's 481 bits (host_op 12 bits, ofmap_word 12 since ISA 3) and the two 5-bit token
     * masks; conv has no op2/table/per-tensor requant/host_op fields, channel-wise no groups */
    assert_int_equal(l.used_bits[ENPU_FMT_CW], 481 - 16 - 1 + 10);
    /* conv: no host_op, op2_mem, perm, op2_addr, table_addr, zp_op2, the three multipliers, out_shift */
    /* ... and, since ISA 4, lane_split (3 bits) */
    /* ... and, since ISA 8, ps_cont and ps_hold (1 bit each); since ISA 9, ifmap_wpp (13) and ifmap_word (12) */
    assert_int_equal(l.used_bits[ENPU_FMT_CONV], 481 - 16 - 1 - 1 - 3 - 12 - 12 - 8 - 3 * 20 - 6 + 10 + 3 + 2 + 13 + 12);
    assert_int_equal(l.used_bits[ENPU_FMT_CTRL], 8 + 12 + 10);
    /* opcode, engine 2, dir 1, mem 2, dram 22, sram 12, rows 16, len 24, strides 22 + 12, tokens 10 */
    assert_int_equal(l.used_bits[ENPU_FMT_DMA], 8 + 2 + 1 + 2 + 22 + 12 + 16 + 24 + 22 + 12 + 10);
    for (int fm = 0; fm < ENPU_FMT_COUNT; fm++) {
        int prev = -1;
        for (int f = 0; f < ENPU_F_COUNT; f++) {
            if (l.pos[fm][f] < 0) continue;
            assert_int_equal(l.pos[fm][f], prev < 0 ? 0 : l.pos[fm][prev] + l.width[prev]);
            prev = f;
        }
    }
    a = arch_of("large");
    assert_int_equal(enpu_isa_layout_make(&a, &l, &err), 0);
    assert_int_equal(l.width[ENPU_F_weight_addr], 15);
    for (int fm = 0; fm < ENPU_FMT_COUNT; fm++) assert_true(l.used_bits[fm] <= ENPU_INSTR_BITS);
    /* an arch whose fields cannot fit 512 bits */
    a = arch_of("easynpu");
    a.bus_bits = 8, a.pes = a.ifmap_pads = a.weight_pad_groups = 1;
    a.main_dtcm_bytes = a.skip_dtcm_bytes = a.weight_mem_bytes = (int64_t)1 << 30;
    assert_int_equal(enpu_isa_layout_make(&a, &l, &err), ENPU_E_LIMIT);
    assert_non_null(strstr(err.msg, "more than the 512-bit instruction"));
    enpu_err_clear(&err);
    assert_int_equal(enpu_arch_validate(&a, &err), ENPU_E_LIMIT);
}

static void test_field_table(void **state) {
    (void)state;
    assert_int_equal(enpu_field_find("tile_x"), ENPU_F_tile_x);
    assert_int_equal(enpu_field_find("nope"), -1);
    assert_string_equal(enpu_field_get(ENPU_F_zp_in)->name, "zp_in");
    assert_true(enpu_field_get(ENPU_F_zp_in)->is_signed);
    assert_false(enpu_field_get(ENPU_F_hi)->is_signed);
    int n;
    const int *ops = enpu_opcode_list(&n);
    assert_int_equal(n, 19);
    for (int i = 0; i < n; i++) {
        const char *mn = enpu_opcode_mnemonic(ops[i]);
        assert_non_null(mn);
        assert_int_equal(enpu_opcode_find(mn), ops[i]);
        /* EasyNPU's bits 5/6 are fuse_next/store_skip; the systolic engine's
         * opcodes are the ones with bit 6 set */
        if (enpu_opcode_class(ops[i]) == ENPU_CLASS_SYA) assert_int_equal(ops[i] & 0xE0, 0x40);
        else assert_int_equal(ops[i] & 0x60, 0);
    }
    /* the note's encodings */
    assert_int_equal(ENPU_OPC_CONV, 0x00);
    assert_int_equal(ENPU_OPC_CONV_RELU, 0x04);
    assert_int_equal(ENPU_OPC_DWCONV, 0x01);
    assert_int_equal(ENPU_OPC_BN, 0x02);
    assert_int_equal(ENPU_OPC_MAXPOOL, 0x0E);
    assert_int_equal(ENPU_OPC_MUL, 0x1A);
    assert_int_equal(ENPU_OPC_RESHAPE, 0x80);
    assert_int_equal(ENPU_OPC_FC, 0x08);
    assert_int_equal(enpu_opcode_class(ENPU_OPC_FC), ENPU_CLASS_CONV);
    assert_int_equal(enpu_opcode_class(0x05), ENPU_CLASS_NONE);
    assert_int_equal(enpu_opcode_class(ENPU_OPC_RS_CONV), ENPU_CLASS_RS);
    assert_int_equal(enpu_opcode_format(ENPU_OPC_RS_CONV), ENPU_FMT_RS);
}

/* Encode -> decode of every opcode with random legal fields, on both presets
 * and a 4-row arch; every instruction also passes the validator. */
static void test_roundtrip_random(void **state) {
    (void)state;
    static const char *const archs[] = {"easynpu", "large", "rows4", "systolic-4x1"};
    rng_state = 0x9E3779B97F4A7C15ull;
    for (int ai = 0; ai < 4; ai++) {
        enpu_arch a = arch_of(ai == 1 ? "large" : ai == 3 ? "systolic-4x1" : "easynpu");
        if (ai == 2) {
            a.pe_rows = 4;
            snprintf(a.name, sizeof a.name, "%s", archs[2]);
        }
        enpu_isa_layout l;
        enpu_err err = {0};
        assert_int_equal(enpu_isa_layout_make(&a, &l, &err), 0);
        int n;
        const int *ops = enpu_opcode_list(&n);
        for (int i = 0; i < n; i++) {
            /* rs_conv needs a rowstat arch: tests/unit/test_rowstat_isa.c */
            if (enpu_opcode_class(ops[i]) == ENPU_CLASS_RS) continue;
            /* an engine runs its own instructions (and sync, end) */
            enpu_opclass k = enpu_opcode_class(ops[i]);
            bool sya = a.engine == ENPU_ENGINE_SYSTOLIC;
            if (k != ENPU_CLASS_CTRL && (k == ENPU_CLASS_SYA) != sya) {
                enpu_instr in = random_legal(&a, ops[i]);
                assert_int_equal(enpu_instr_validate(&a, &in, &err), ENPU_E_INVALID);
                if (!strstr(err.msg, sya ? "need engine 'easynpu'" : "need engine 'systolic'"))
                    fail_msg("%s on %s: %s", enpu_opcode_mnemonic(ops[i]), archs[ai], err.msg);
                continue;
            }
            for (int rep = 0; rep < 200; rep++) {
                enpu_instr in = random_legal(&a, ops[i]), out;
                int rc = enpu_instr_validate(&a, &in, &err);
                if (rc) fail_msg("%s %s rep %d: %s", archs[ai], enpu_opcode_mnemonic(ops[i]), rep, err.msg);
                uint8_t w[ENPU_INSTR_BYTES], w2[ENPU_INSTR_BYTES];
                assert_int_equal(enpu_instr_encode(&l, &in, w, &err), 0);
                assert_int_equal(enpu_instr_decode(&l, w, &out, &err), 0);
                assert_memory_equal(&in, &out, sizeof in);
                assert_int_equal(enpu_instr_encode(&l, &out, w2, &err), 0);
                assert_memory_equal(w, w2, sizeof w);
                assert_int_equal(w[0], ops[i]); /* opcode byte first */
            }
        }
        /* raw random values within every field's width also round-trip */
        for (int rep = 0; rep < 2000; rep++) {
            enpu_instr in, out;
            memset(&in, 0, sizeof in);
            for (int f = 0; f < ENPU_F_COUNT; f++) {
                int64_t lo, hi;
                enpu_field_range(&l, f, &lo, &hi);
                *enpu_instr_field(&in, f) = rep == 0 ? lo : rep == 1 ? hi : rr(lo, hi);
            }
            if (rep % 3 == 2) in.opcode = ENPU_OPC_DMA;
            /* fields outside the opcode's format are zero */
            int fm = enpu_opcode_format(in.opcode);
            for (int f = 0; f < ENPU_F_COUNT; f++)
                if (l.pos[fm][f] < 0) *enpu_instr_field(&in, f) = 0;
            uint8_t w[ENPU_INSTR_BYTES];
            assert_int_equal(enpu_instr_encode(&l, &in, w, &err), 0);
            assert_int_equal(enpu_instr_decode(&l, w, &out, &err), 0);
            assert_memory_equal(&in, &out, sizeof in);
        }
    }
}

/* Every field at its maximum legal value encodes, one past it is refused by
 * the encoder and the validator, naming the field. */
static void test_field_limits(void **state) {
    (void)state;
    enpu_arch a = arch_of("easynpu");
    enpu_isa_layout l;
    enpu_err err = {0};
    assert_int_equal(enpu_isa_layout_make(&a, &l, &err), 0);
    for (int f = 0; f < ENPU_F_COUNT; f++) {
        const char *name = enpu_field_get(f)->name;
        int64_t lo, hi;
        enpu_field_range(&l, f, &lo, &hi);
        assert_int_equal(hi - lo + 1, (int64_t)1 << l.width[f]);
        enpu_instr in, out;
        memset(&in, 0, sizeof in);
        int fms = enpu_field_get(f)->formats;
        in.opcode = fms & ENPU_FM_CTRL ? ENPU_OPC_END : fms & ENPU_FM_CW ? ENPU_OPC_RELU
                  : fms & ENPU_FM_CONV ? ENPU_OPC_CONV : fms & ENPU_FM_DMA ? ENPU_OPC_DMA
                  : fms & ENPU_FM_SYA ? ENPU_OPC_SYA_CONV : ENPU_OPC_RS_CONV;
        *enpu_instr_field(&in, f) = hi;
        uint8_t w[ENPU_INSTR_BYTES];
        enpu_err_clear(&err);
        assert_int_equal(enpu_instr_encode(&l, &in, w, &err), 0);
        assert_int_equal(enpu_instr_decode(&l, w, &out, &err), 0);
        assert_int_equal(enpu_instr_get(&out, f), hi);
        for (int side = 0; side < 2; side++) {
            *enpu_instr_field(&in, f) = side ? hi + 1 : lo - 1;
            char want[64];
            snprintf(want, sizeof want, "field '%s': value %" PRId64, name, enpu_instr_get(&in, f));
            enpu_err_clear(&err);
            assert_int_equal(enpu_instr_encode(&l, &in, w, &err), ENPU_E_INVALID);
            if (!strstr(err.msg, want)) fail_msg("encode: want '%s' in '%s'", want, err.msg);
            enpu_err_clear(&err);
            assert_int_equal(enpu_instr_validate(&a, &in, &err), ENPU_E_INVALID);
            if (f == ENPU_F_opcode) snprintf(want, sizeof want, "field 'opcode': value 0x");
            if (!strstr(err.msg, want)) fail_msg("validate: want '%s' in '%s'", want, err.msg);
        }
    }
    /* reserved bits */
    uint8_t w[ENPU_INSTR_BYTES] = {0};
    w[ENPU_INSTR_BYTES - 1] = 0x80;
    enpu_instr out;
    enpu_err_clear(&err);
    assert_int_equal(enpu_instr_decode(&l, w, &out, &err), ENPU_E_FORMAT);
    assert_non_null(strstr(err.msg, "reserved bit 511"));
    w[ENPU_INSTR_BYTES - 1] = 0;
    w[l.used_bits[ENPU_FMT_CW] / 8] = (uint8_t)(1u << (l.used_bits[ENPU_FMT_CW] % 8));
    enpu_err_clear(&err);
    assert_int_equal(enpu_instr_decode(&l, w, &out, &err), ENPU_E_FORMAT);
    /* signed fields decode negative values */
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.zp_in = -128, in.clamp_lo = -1;
    assert_int_equal(enpu_instr_encode(&l, &in, w, &err), 0);
    assert_int_equal(enpu_instr_decode(&l, w, &out, &err), 0);
    assert_int_equal(out.zp_in, -128);
    assert_int_equal(out.clamp_lo, -1);
}

static enpu_instr kws_conv1(void) {
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_CONV;
    in.hi = 26, in.wi = 49, in.ci = 1, in.ho = 24, in.wo = 24, in.co = 28;
    in.hk = in.wk = 3, in.stride_h = 1, in.stride_w = 2, in.dil_h = in.dil_w = 1, in.groups = 1;
    in.tile_x = 4, in.tile_y = 4, in.tile_xi = 9, in.tile_yi = 6, in.zs = 2, in.rows = 1;
    in.ofmap_addr = 4096 - 24 * 24 * 2, in.bias_addr = 100, in.quant_addr = 200;
    in.clamp_lo = -128, in.clamp_hi = 127;
    return in;
}

static void expect_invalid(const enpu_arch *a, const enpu_instr *in, const char *sub) {
    enpu_err err = {0};
    int rc = enpu_instr_validate(a, in, &err);
    if (rc != ENPU_E_INVALID || !strstr(err.msg, sub))
        fail_msg("want invalid '%s', got %s: %s", sub, enpu_status_name((enpu_status)rc), err.msg);
}

static void test_validator(void **state) {
    (void)state;
    enpu_arch a = arch_of("easynpu");
    enpu_err err = {0};
    enpu_instr ok = kws_conv1(), in;
    assert_int_equal(enpu_instr_validate(&a, &ok, &err), 0);
    in = ok, in.ho = 23;
    expect_invalid(&a, &in, "field 'ho': value 23 but hi=26");
    in = ok, in.wo = 25;
    expect_invalid(&a, &in, "field 'wo': value 25");
    in = ok, in.tile_xi = 8;
    expect_invalid(&a, &in, "field 'tile_xi': value 8 but stride_w*(tile_x-1) + dil_w*(wk-1) + 1 = 9");
    in = ok, in.tile_x = 9, in.tile_xi = 19;
    expect_invalid(&a, &in, "needs 72 psum entries, over psum_depth=64");
    in = ok, in.zs = 1; /* output-channel blocks of 16 (ISA 2) */
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    in = ok, in.band_h = 2, in.tile_yi = 5;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    in = ok, in.band_h = 2;
    expect_invalid(&a, &in, "field 'tile_yi': value 6 but stride_h*(tile_y-1) + dil_h*(band_h-1) + 1 = 5");
    in = ok, in.band_h = 4;
    expect_invalid(&a, &in, "field 'band_h': value 4 over hk=3");
    in = ok, in.ofmap_wpp = 3, in.ofmap_word = 1, in.ofmap_addr = 4096 - 24 * 24 * 3;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    in.ofmap_word = 2;
    expect_invalid(&a, &in, "field 'ofmap_wpp': value 3 but ofmap_word=2 + ceil(co/pes)=2");
    in = ok, in.ofmap_word = 1;
    expect_invalid(&a, &in, "field 'ofmap_word': value 1 needs ofmap_wpp");
    /* ifmap_wpp / ifmap_word (ISA 9): conv1's one-word pixels read from a
     * map of 2 words a pixel, word 1; the ifmap block then spans
     * (26*49-1)*2 + 1 + 1 words */
    in = ok, in.ifmap_wpp = 2, in.ifmap_word = 1, in.ofmap_addr = 2 * 26 * 49;
    if (enpu_instr_validate(&a, &in, &err)) fail_msg("%s", err.msg);
    assert_int_equal(enpu_ifmap_span(&a, &in), 26 * 49 * 2);
    in.ifmap_word = 2;
    expect_invalid(&a, &in, "field 'ifmap_wpp': value 2 but ifmap_word=2 + ceil(ci/pes)=1 words per pixel are read");
    in = ok, in.ifmap_word = 1;
    expect_invalid(&a, &in, "field 'ifmap_word': value 1 needs ifmap_wpp");
    in = ok, in.ifmap_wpp = 2, in.ofmap_addr = 2 * 26 * 49, in.groups = 1, in.lane_split = 1;
    expect_invalid(&a, &in, "needs groups=1 and lane_split=0 (have 1, 1)");
    /* word 0 of 2: the block ends after the last pixel's first word */
    in = ok, in.ifmap_wpp = 2, in.ofmap_addr = 2 * 26 * 49 - 2;
    expect_invalid(&a, &in, "overlaps the ifmap block [0, 2547)");
    in = ok, in.in1_mult = 5;
    expect_invalid(&a, &in, "field 'in1_mult': value 5 but conv has no such field");
    /* fc: the KWS FC1 over its 8x9x12 input map */
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_FC;
    in.hi = 8, in.wi = 9, in.ci = 12, in.ho = in.wo = 1, in.co = 30;
    in.hk = in.wk = in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.groups = 1;
    in.tile_x = in.tile_y = in.tile_xi = in.tile_yi = 1, in.zs = 2, in.rows = 1;
    in.ofmap_addr = 4000, in.bias_addr = 3000, in.quant_addr = 3010;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    {
        enpu_mem_block fb[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(&a, &in, 0, fb);
        assert_int_equal(nb, 5);
        assert_int_equal(fb[0].words, 72);          /* 8x9 pixels, one word each */
        assert_int_equal(fb[2].words, 864 * 2);     /* [h][w][c][co folded] */
    }
    in.ifmap_wpp = 1;
    expect_invalid(&a, &in, "field 'ifmap_wpp': must be 0 for fc (its input words are read flat)");
    in.ifmap_wpp = 0;
    in.ho = 2;
    expect_invalid(&a, &in, "field 'ho': value 2 must be 1 for fc");
    in = ok, in.tile_x = 7, in.tile_xi = 15, in.tile_y = 4, in.tile_yi = 6;
    expect_invalid(&a, &in, "over ifmap_pad_depth=64");
    in = ok, in.tile_x = 25;
    expect_invalid(&a, &in, "field 'tile_x': value 25 out of range 1..wo=24");
    in = ok, in.cast_mode = ENPU_CAST_MULTICAST;
    expect_invalid(&a, &in, "field 'cast_mode': multicast for conv, which needs broadcast");
    in = ok, in.stride_h = 0;
    expect_invalid(&a, &in, "field 'stride_h': value 0 must be at least 1");
    in = ok, in.groups = 3;
    expect_invalid(&a, &in, "field 'groups': value 3 does not divide");
    in = ok, in.ofmap_addr = 4096 - 1000;
    expect_invalid(&a, &in, "field 'ofmap_addr': ofmap block [3096, 4248) of 1152 words ends past the main DTCM (4096 words)");
    in = ok, in.ofmap_addr = 1000;
    expect_invalid(&a, &in, "field 'ofmap_addr': ofmap block [1000, 2152) overlaps the ifmap block [0, 1274)");
    in = ok, in.quant_addr = 4090;
    expect_invalid(&a, &in, "field 'quant_addr': quant block [4090, 4104)");
    in = ok, in.clamp_lo = 5, in.clamp_hi = 4;
    expect_invalid(&a, &in, "field 'clamp_lo': value 5 above clamp_hi=4");
    in = ok, in.fuse_bn = 1;
    expect_invalid(&a, &in, "field 'fuse_bn': set without fuse_next");
    in = ok, in.perm = 2;
    expect_invalid(&a, &in, "field 'perm': value 2 but conv has no such field");
    in = ok, in.host_op = 2;
    expect_invalid(&a, &in, "field 'host_op'");
    in = ok, in.rows = 2;
    expect_invalid(&a, &in, "field 'rows': value 2 out of range 0..1"); /* 1-bit field */
    in = ok, in.opcode = 0x05;
    expect_invalid(&a, &in, "field 'opcode': value 0x05 is not a known opcode");
    /* channel-wise and control ops */
    in = ok, in.opcode = ENPU_OPC_RELU;
    expect_invalid(&a, &in, "field 'hk': value 3 must be 1 for relu");
    in = ok, in.opcode = ENPU_OPC_DWCONV, in.cast_mode = 1;
    expect_invalid(&a, &in, "field 'co': value 28 must equal ci=1 for dwconv");
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_END;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    in.hi = 1;
    expect_invalid(&a, &in, "field 'hi': value 1 but end has no such field");
    in.hi = 0, in.opcode = ENPU_OPC_SYNC, in.host_op = 7;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    /* in-place is allowed for 1x1 channel-wise ops only */
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_RELU, in.cast_mode = 1;
    in.hi = in.ho = 4, in.wi = in.wo = 4, in.ci = in.co = 16;
    in.hk = in.wk = in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.groups = 1;
    in.tile_x = in.tile_y = in.tile_xi = in.tile_yi = 4, in.zs = 1, in.rows = 1;
    in.ifmap_addr = in.ofmap_addr = 100;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    in.ofmap_addr = 101;
    expect_invalid(&a, &in, "overlaps the ifmap block");
    /* a chained instruction reads no ifmap */
    in.ifmap_addr = 4095;
    expect_invalid(&a, &in, "field 'ifmap_addr'");
    assert_int_equal(enpu_instr_validate_chained(&a, &in, 1, &err), 0);
    enpu_mem_block b[ENPU_MAX_BLOCKS];
    assert_int_equal(enpu_instr_blocks(&a, &in, 1, b), 1);
    assert_string_equal(b[0].role, "ofmap");
}

static void test_blocks(void **state) {
    (void)state;
    enpu_arch a = arch_of("easynpu");
    enpu_instr in = kws_conv1();
    enpu_mem_block b[ENPU_MAX_BLOCKS];
    int n = enpu_instr_blocks(&a, &in, 0, b);
    assert_int_equal(n, 5);
    assert_string_equal(b[0].role, "ifmap");
    assert_int_equal(b[0].words, 26 * 49 * 1);
    assert_string_equal(b[1].role, "ofmap");
    assert_int_equal(b[1].words, 24 * 24 * 2);
    assert_int_equal(b[1].write, 1);
    assert_string_equal(b[2].role, "weights");
    assert_int_equal(b[2].words, 1 * 3 * 3 * 2); /* [Ci][Hk][Wk][Co/16] */
    assert_string_equal(b[3].role, "bias");
    assert_int_equal(b[3].words, 7); /* 28 int32 */
    assert_string_equal(b[4].role, "quant");
    assert_int_equal(b[4].words, 14); /* 28 x (u32 M, u32 S) */
    assert_int_equal(enpu_fmap_words(&a, 10, 20, 17), 10 * 20 * 2);
}

static void test_format(void **state) {
    (void)state;
    enpu_instr in = kws_conv1();
    in.zp_in = -3;
    char buf[ENPU_INSTR_FMT_MAX];
    int n = enpu_instr_format(&in, "conv \"1\"", buf, sizeof buf);
    assert_int_equal((size_t)n, strlen(buf));
    assert_non_null(strstr(buf, "conv name=\"conv \\\"1\\\"\" hi=26 wi=49 ci=1 ho=24"));
    assert_non_null(strstr(buf, " zp_in=-3 "));
    assert_null(strstr(buf, "pad_top")); /* zero fields are left out */
    in.cast_mode = 1;
    in.fuse_act = 2;
    enpu_instr_format(&in, NULL, buf, sizeof buf);
    assert_true(strncmp(buf, "conv cast_mode=multicast fuse_act=table", 39) == 0);
    /* truncation follows snprintf */
    char small[8];
    n = enpu_instr_format(&in, NULL, small, sizeof small);
    assert_true(n > 7);
    assert_string_equal(small, "conv ca");
}

/* docs/isa.md embeds the generated table for the default preset verbatim. */
static void test_docs_table(void **state) {
    (void)state;
    enpu_arch a = arch_of("easynpu");
    enpu_err err = {0};
    char *t = enpu_isa_table_md(&a, &err);
    assert_non_null(t);
    uint8_t *doc;
    size_t n;
    assert_int_equal(enpu_file_read("docs/isa.md", 1 << 20, &doc, &n, &err), 0);
    if (!strstr((char *)doc, t))
        fail_msg("docs/isa.md does not contain the output of `easynpu arch --isa-table`: regenerate it");
    free(doc);
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),     cmocka_unit_test(test_field_table),
        cmocka_unit_test(test_roundtrip_random), cmocka_unit_test(test_field_limits),
        cmocka_unit_test(test_validator),  cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_format),     cmocka_unit_test(test_docs_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
