/* The row-stationary engine's units on their own (docs/rowstat.md): the
 * multicast network's ID matching and latency, the PE's 1-D convolution
 * with its loop buffers (the window's "if trash" replacement, strides wider
 * than the kernel), the psum link, the 16-bit requantizer against 128-bit
 * arithmetic, the instruction's encoding and validation, and the contract's
 * DMA queue and buffer layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "easynpu/rowstat.h"
#include "sim/rowstat/rs_sim.h"
#include "testutil.h"

/* ---- the multicast network ------------------------------------------------------ */

typedef struct taken {
    int n;
    int row[64], col[64];
    int32_t v[64];
    int64_t at[64];
} taken;

static void take(void *ctx, int row, int col, int32_t value, int64_t at) {
    taken *g = ctx;
    g->row[g->n] = row, g->col[g->n] = col, g->v[g->n] = value, g->at[g->n] = at;
    g->n++;
}

static void test_noc_tags(void **state) {
    (void)state;
    enpu_err err = {0};
    rs_noc n;
    assert_int_equal(rs_noc_init(&n, 3, 4, 2, &err), 0);
    /* a diagonal: rows 0..2 share row ID 7, column IDs i + j (an ifmap row k
     * reaches the PEs with i + j == k) */
    for (int r = 0; r < 3; r++) {
        n.row_id[r] = 7;
        for (int c = 0; c < 4; c++) n.col_id[r * 4 + c] = r + c;
    }
    taken g = {0};
    uint64_t passed = 0; /* row buses driven: every row node whose ID matches */
    rs_packet pk[2] = {{42, 7, 2, 0}, {43, 5, 2, 0}}; /* the second: no row has ID 5 */
    rs_noc_step(&n, 10, pk, 2, take, &g, &passed);
    assert_int_equal(g.n, 0); /* row nodes next cycle, column nodes the one after */
    assert_int_equal((int)passed, 0);
    rs_noc_step(&n, 11, NULL, 0, take, &g, &passed);
    assert_int_equal(g.n, 0);
    assert_int_equal((int)passed, 3); /* 42 passes all three rows, 43 none */
    rs_noc_step(&n, 12, NULL, 0, take, &g, &passed);
    assert_int_equal(g.n, 3); /* (0,2), (1,1), (2,0) */
    assert_int_equal((int)passed, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(g.row[i] + g.col[i], 2);
        assert_int_equal(g.v[i], 42);
        assert_int_equal(g.at[i], 12);
    }
    assert_true(rs_noc_empty(&n));
    /* a row broadcast: row IDs differ, every column ID the same */
    rs_noc_clear(&n);
    for (int r = 0; r < 3; r++) {
        n.row_id[r] = r;
        for (int c = 0; c < 4; c++) n.col_id[r * 4 + c] = c < 2 ? 0 : 1;
    }
    g.n = 0;
    rs_packet f = {9, 1, 1, 0};
    passed = 0;
    rs_noc_step(&n, 0, &f, 1, take, &g, &passed);
    rs_noc_step(&n, 1, NULL, 0, take, &g, &passed);
    rs_noc_step(&n, 2, NULL, 0, take, &g, &passed);
    assert_int_equal((int)passed, 1); /* one row's bus, two PEs on it */
    assert_int_equal(g.n, 2);
    assert_int_equal(g.row[0], 1), assert_int_equal(g.col[0], 2);
    assert_int_equal(g.row[1], 1), assert_int_equal(g.col[1], 3);
    rs_noc_free(&n);
}

/* ---- the PE -------------------------------------------------------------------- */

/* One PE computing a 1-D convolution of a q-channel row with p filters, for
 * n images one after the other (rs_n): its psums equal the direct sum, MACs
 * back to back once the first window is in (each next image's window comes
 * in during the last unit of the image before). */
static int32_t pe_x(int64_t img, int64_t c, int64_t ch) { return (int32_t)((c * 7 + ch * 3 + img * 5) % 11) - 5; }

static void pe_case(int64_t q, int64_t p, int64_t wk, int64_t wo, int64_t sw, int64_t n) {
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("rowstat", &a, &err), 0);
    rs_pe pe;
    assert_int_equal(rs_pe_alloc(&pe, &a, &err), 0);
    rs_pe_config(&pe, true, q, p, wk, wo, n, sw, 2);
    int64_t ncols = sw <= wk ? (wo - 1) * sw + wk : wo * wk;
    int32_t w[8][16][8];
    for (int64_t m = 0; m < p; m++)
        for (int64_t s = 0; s < wk; s++)
            for (int64_t ch = 0; ch < q; ch++) w[m][s][ch] = (int32_t)((m * 5 + s * 2 + ch) % 7) - 3;
    /* filters in the loop buffer's order; the used columns into the FIFO */
    for (int64_t m = 0; m < p; m++)
        for (int64_t s = 0; s < wk; s++)
            for (int64_t ch = 0; ch < q; ch++) assert_true(rs_pe_push_filter(&pe, w[m][s][ch]));
    for (int64_t img = 0; img < n; img++)
        for (int64_t cx = 0; cx < ncols; cx++) {
            int64_t col = sw <= wk ? cx : (cx / wk) * sw + cx % wk;
            for (int64_t ch = 0; ch < q; ch++) assert_true(rs_pe_push_ifmap(&pe, pe_x(img, col, ch), 0));
        }
    rs_stats st = {0};
    int64_t t = 0, macs = 0, u = 0;
    for (; !pe.done && t < 100000; t++) {
        int s = rs_pe_step(&pe, t, NULL, true, &st);
        macs += s == 1;
        if (pe.out.full) { /* the psum of unit u: take it as the PE below would */
            int64_t xo = (u / p) % wo, img = u / p / wo, m = u % p, want = 0;
            for (int64_t k = 0; k < wk; k++)
                for (int64_t ch = 0; ch < q; ch++) want += (int64_t)pe_x(img, xo * sw + k, ch) * w[m][k][ch];
            assert_int_equal(pe.out.value, want);
            assert_int_equal(pe.out.unit, u);
            assert_int_equal(pe.out.ready, t + 2);
            pe.out.full = false;
            u++;
        }
    }
    assert_true(pe.done);
    assert_int_equal(u, n * wo * p);
    assert_int_equal(macs, n * wo * p * q * wk);
    /* the window takes q*wk cycles, then one MAC a cycle: no stall, the FIFO
     * holding every value */
    assert_int_equal(t, q * wk + n * wo * p * q * wk);
    assert_int_equal(st.reads[ENPU_MEM_PE_FIFO], n * ncols * q);
    assert_int_equal(st.reads[ENPU_MEM_IFMAP_LB], macs);
    /* the psum RAM between a unit's MACs (not the first's addend, not the
     * last's result: the output register's), the output register per unit;
     * a PE at the top of its chain takes no psum from a link */
    assert_int_equal(st.reads[ENPU_MEM_PSUM], macs - u);
    assert_int_equal(st.writes[ENPU_MEM_PSUM], macs - u);
    assert_int_equal(st.writes[ENPU_MEM_PSUM_LINK], u);
    assert_int_equal(st.reads[ENPU_MEM_PSUM_LINK], 0);
    rs_pe_free(&pe);
}

static void test_pe_conv1d(void **state) {
    (void)state;
    for (int64_t n = 1; n <= 3; n++) {
        pe_case(1, 1, 3, 5, 1, n);
        pe_case(3, 2, 3, 6, 1, n);
        pe_case(2, 3, 3, 5, 2, n); /* stride 2: the oldest 2 columns replaced */
        pe_case(2, 1, 2, 4, 3, n); /* a stride wider than the kernel: the whole window */
        pe_case(4, 4, 1, 7, 1, n);
        pe_case(1, 5, 5, 3, 5, n);
        pe_case(2, 2, 3, 1, 1, n); /* one column per image: every unit ends an image */
    }
}

/* A unit's first MAC waits for the psum from above; the last MAC waits
 * until the PE below took the previous one. */
static void test_pe_link(void **state) {
    (void)state;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("rowstat", &a, &err), 0);
    rs_pe pe;
    assert_int_equal(rs_pe_alloc(&pe, &a, &err), 0);
    rs_pe_config(&pe, true, 1, 2, 1, 1, 1, 1, 2); /* L = 1: every MAC is a unit */
    assert_true(rs_pe_push_filter(&pe, 3) && rs_pe_push_filter(&pe, 5));
    assert_true(rs_pe_push_ifmap(&pe, 7, 0));
    rs_stats st = {0};
    rs_link in = {0};
    assert_int_equal(rs_pe_step(&pe, 0, &in, true, &st), 0); /* the window */
    assert_int_equal(rs_pe_step(&pe, 1, &in, true, &st), 0); /* no psum from above */
    in = (rs_link){true, 0, 100, 3, 0};
    assert_int_equal(rs_pe_step(&pe, 2, &in, true, &st), 0); /* not ready before cycle 3 */
    assert_int_equal(rs_pe_step(&pe, 3, &in, true, &st), 1);
    assert_false(in.full);                                    /* taken */
    assert_true(pe.out.full && pe.out.value == 100 + 21 && pe.out.ready == 5);
    in = (rs_link){true, 1, 10, 3, 0};
    assert_int_equal(rs_pe_step(&pe, 4, &in, true, &st), -1); /* its output is still full */
    pe.out.full = false;
    assert_int_equal(rs_pe_step(&pe, 5, &in, true, &st), 1);
    assert_int_equal(pe.out.value, 10 + 35);
    assert_true(pe.done);
    /* single-MAC units: no psum RAM access, each psum taken from the link
     * above and written into the output register */
    assert_int_equal(st.reads[ENPU_MEM_PSUM] + st.writes[ENPU_MEM_PSUM], 0);
    assert_int_equal(st.reads[ENPU_MEM_PSUM_LINK], 2);
    assert_int_equal(st.writes[ENPU_MEM_PSUM_LINK], 2);
    rs_pe_free(&pe);
}

/* ---- 16-bit requantization ------------------------------------------------------- */

static void test_requant_wide(void **state) {
    (void)state;
    uint64_t s = 12345;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int64_t acc = (int64_t)(s ^ (s >> 17));
        if (i % 3 == 1) acc >>= (int)(s % 50);
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t M = (uint32_t)(s >> 33) & 0x7FFFFFFFu;
        int S = (int)((s >> 7) % 64);
        int32_t zp = (int32_t)((s >> 20) % 200) - 100, lo = -32768, hi = 32767;
        int32_t got = enpu_requant_wide(acc, M, S, zp, lo, hi);
#ifdef __SIZEOF_INT128__
        __int128 v = (__int128)acc * M;
        if (S > 0) v += (__int128)1 << (S - 1);
        v = v >> S; /* arithmetic on gcc and clang */
        v += zp;
        int32_t want = v < lo ? lo : v > hi ? hi : (int32_t)v;
        if (got != want) fail_msg("acc %lld M %u S %d: %d, want %d", (long long)acc, M, S, got, want);
#endif
        /* where enpu_requant is defined (acc in int32), the same result */
        if (acc >= INT32_MIN && acc <= INT32_MAX && M < (1u << 20))
            assert_int_equal(got, enpu_requant(acc, M, S, zp, lo, hi));
    }
}

/* The 16-bit scales and the accumulator proof (docs/numerics.md §12). */
static void test_scales16(void **state) {
    (void)state;
    enpu_err err = {0};
    float s = 0;
    assert_int_equal(enpu_choose_scale16(-1.0f, 0.5f, 0, &s, &err), 0);
    assert_true(s == (float)(1.0 / 32767));
    /* Q-format: rounded up to a power of two; 1/32767 is just above 2^-15 */
    assert_int_equal(enpu_choose_scale16(-1.0f, 0.5f, 1, &s, &err), 0);
    assert_true(s == ldexpf(1.0f, -14));
    assert_int_equal(enpu_choose_scale16(0.0f, 32767.0f / 1024, 1, &s, &err), 0);
    assert_true(s == ldexpf(1.0f, -10)); /* already a power of two: kept */
    assert_int_equal(enpu_choose_scale16(0.0f, 0.0f, 0, &s, &err), 0);
    assert_true(s == (float)(1.0 / 32767));
    assert_int_equal(enpu_choose_scale16(0.0f, INFINITY, 0, &s, &err), ENPU_E_INVALID);
    assert_true(enpu_weight_scale16(32767.0f / 4, 1) == 0.25f);
    assert_true(enpu_weight_scale16(1.0f, 1) == ldexpf(1.0f, -14));
    /* every partial sum at its extreme: bias 5 (first or last), 3*x then -2*x */
    const int16_t w[2] = {3, -2};
    int64_t lo, hi;
    enpu_acc_range16(w, 2, 1, -32768, 32767, 5, &lo, &hi);
    assert_int_equal(lo, -3 * 32768 - 2 * 32767);
    assert_int_equal(hi, 5 + 3 * 32767 + 2 * 32768);
    assert_int_equal(enpu_acc_check_wide("l", lo, hi, 18, &err), ENPU_E_NOFIT);
    assert_int_equal(enpu_acc_check_wide("l", lo, hi, 19, &err), 0);
    /* a bound past int64 saturates and is refused even at 64 bits */
    enpu_acc_range16(w, 2, 1, -32768, 32767, INT64_MAX - 10, &lo, &hi);
    assert_int_equal(hi, INT64_MAX);
    assert_int_equal(enpu_acc_check_wide("l", lo, hi, 64, &err), ENPU_E_NOFIT);
}

/* ---- the instruction ----------------------------------------------------------- */

static enpu_instr conv(void) {
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_RS_CONV;
    in.hi = 24, in.wi = 24, in.ci = 28, in.ho = 22, in.wo = 22, in.co = 24, in.hk = 3, in.wk = 3;
    in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.groups = 1;
    in.rs_e = 22, in.rs_p = 8, in.rs_q = 14, in.rs_r = 1, in.rs_t = 1, in.rs_hf = 3, in.rs_dbuf = 7;
    in.rs_ifmap_addr = 0, in.rs_ofmap_addr = 2000, in.rs_weight_addr = 4000;
    in.rs_lo = -128, in.rs_hi = 127;
    return in;
}

static void expect_invalid(const enpu_arch *a, const enpu_instr *in, const char *sub) {
    enpu_err err = {0};
    int rc = enpu_instr_validate(a, in, &err);
    if (rc != ENPU_E_INVALID || !strstr(err.msg, sub))
        fail_msg("want invalid '%s', got %d: %s", sub, rc, err.msg);
}

static void test_instr(void **state) {
    (void)state;
    enpu_arch a, e;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("rowstat", &a, &err), 0);
    assert_int_equal(enpu_arch_preset("easynpu", &e, &err), 0);
    enpu_instr in = conv(), out;
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    assert_int_equal(enpu_instr_macs(&in), 22 * 22 * 24 * 28 * 9);
    /* the table's encoding round-trips */
    enpu_isa_layout l;
    uint8_t b[ENPU_INSTR_BYTES];
    assert_int_equal(enpu_isa_layout_make(&a, &l, &err), 0);
    assert_int_equal(enpu_instr_encode(&l, &in, b, &err), 0);
    assert_int_equal(enpu_instr_decode(&l, b, &out, &err), 0);
    assert_memory_equal(&in, &out, sizeof in);
    char line[ENPU_INSTR_FMT_MAX];
    enpu_instr_format(&in, "c2", line, sizeof line);
    assert_non_null(strstr(line, "rs_conv name=\"c2\" hi=24"));
    assert_non_null(strstr(line, "rs_e=22 rs_p=8 rs_q=14"));
    /* each rule, naming the field */
    expect_invalid(&e, &in, "arch 'easynpu' has engine 'easynpu', not rowstat");
    enpu_instr x = in;
    x.rs_e = 25;
    expect_invalid(&a, &x, "field 'rs_e': rs_e=25 x rs_t=1 PE columns, over rs_cols=24");
    x = in, x.rs_q = 100;
    expect_invalid(&a, &x, "field 'rs_q': value 100 over the 28 input channels per group");
    x = in, x.co = 48, x.rs_p = 25, x.rs_q = 28;
    expect_invalid(&a, &x, "over rs_filter_lb_depth=2048");
    x = in, x.rs_r = 2;
    expect_invalid(&a, &x, "rs_r=2 x rs_hf=3 PE rows, over rs_rows=3");
    x = in, x.dil_w = 2;
    expect_invalid(&a, &x, "field 'dil_w': value 2 must be 1");
    x = in, x.ho = 21;
    expect_invalid(&a, &x, "field 'ho': value 21 but hi=24");
    x = in, x.rs_hi = 200;
    expect_invalid(&a, &x, "field 'rs_hi': value 200 out of range -128..127 for int8 data");
    x = in, x.rs_bits = 1, x.rs_hi = 200, x.rs_ofmap_addr = 3000, x.rs_weight_addr = 6000;
    assert_int_equal(enpu_instr_validate(&a, &x, &err), 0);
    x = in, x.rs_ofmap_addr = 10;
    expect_invalid(&a, &x, "field 'rs_ofmap_addr': ofmap block");
    x = in, x.push = 2;
    expect_invalid(&a, &x, "field 'push'");
    enpu_arch small = a;
    small.rs_glb_bytes = 8192;
    expect_invalid(&small, &in, "over rs_glb_bytes=8192");
    small = a, small.rs_fifo_depth = 64;
    expect_invalid(&small, &in, "over rs_fifo_depth=64");
    /* images per pass (rs_n): n images' DRAM maps and buffer regions, a
     * PE's FIFO receiving every image's columns */
    x = in, x.rs_n = 2, x.rs_dbuf = 0, x.rs_ofmap_addr = 100000, x.rs_weight_addr = 200000;
    if (enpu_instr_validate(&a, &x, &err)) fail_msg("%s", err.msg);
    assert_int_equal(enpu_instr_macs(&x), 2 * 22 * 22 * 24 * 28 * 9);
    enpu_rs_geom g1, g2;
    assert_int_equal(enpu_rs_geom_of(&a, &in, &g1, &err), 0);
    assert_int_equal(enpu_rs_geom_of(&a, &x, &g2, &err), 0);
    assert_int_equal(g1.n, 1);
    assert_int_equal(g2.nwo, 2 * 22);
    assert_int_equal(g2.ifmap_words, 2 * g1.ifmap_words);
    assert_int_equal(g2.ofmap_words, 2 * g1.ofmap_words);
    assert_int_equal(g2.ifmap_buf, 2 * g1.ifmap_buf);
    assert_int_equal(g2.out_buf, 2 * g1.out_buf);
    assert_int_equal(g2.n_passes, g1.n_passes); /* the filters serve both images in each pass */
    x.rs_n = 7;
    expect_invalid(&a, &x, "field 'rs_n': a PE receives rs_q=14 x 24 columns x rs_n=7 images = 2352 values per pass, "
                           "over rs_fifo_depth=2048");
}

/* The DMA queue: a command waits only for earlier passes than the first one
 * that needs it (no deadlock), loads come before the pass that needs them;
 * the global buffer's regions do not overlap. */
static void test_contract(void **state) {
    (void)state;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("eyeriss", &a, &err), 0);
    enpu_instr in = conv();
    in.ci = 64, in.co = 48, in.rs_e = 7, in.rs_p = 6, in.rs_q = 4, in.rs_r = 2, in.rs_t = 2, in.rs_hf = 2;
    in.hk = in.wk = 3;
    in.rs_weight_addr = 40000, in.rs_ofmap_addr = 20000;
    for (int dbuf = 0; dbuf < 8; dbuf++) {
        in.rs_dbuf = dbuf;
        assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
        enpu_rs_geom g;
        assert_int_equal(enpu_rs_geom_of(&a, &in, &g, &err), 0);
        assert_int_equal(g.n_fold, 2);
        assert_int_equal(g.n_passes, g.n_strips * g.n_fb * g.n_cb * 2);
        int64_t n;
        enpu_rs_cmd *c = enpu_rs_commands(&g, &in, &n, &err);
        assert_non_null(c);
        assert_int_equal(n, g.n_strips + g.n_passes + g.n_blocks);
        for (int64_t i = 0; i < n; i++) {
            assert_true(c[i].dep < c[i].need);
            if (i) assert_true(c[i - 1].need <= c[i].need);
        }
        free(c);
        /* regions: [off, off + size) of each buffer, pairwise apart */
        int64_t r[7][2] = {{g.ifmap_off[0], g.ifmap_buf}, {g.ifmap_off[1], g.ifmap_buf},
                           {g.filt_off[0], g.filt_buf},   {g.filt_off[1], g.filt_buf},
                           {g.psum_off, g.psum_buf},      {g.out_off[0], g.out_buf},
                           {g.out_off[1], g.out_buf}};
        for (int i = 0; i < 7; i++)
            for (int j = i + 1; j < 7; j++) {
                if (r[i][0] == r[j][0] && r[i][1] == r[j][1]) continue; /* single-buffered: the same */
                assert_true(r[i][0] + r[i][1] <= r[j][0] || r[j][0] + r[j][1] <= r[i][0]);
            }
        assert_true(g.glb_used <= a.rs_glb_bytes);
        /* the filter blocks follow each other */
        int64_t w = 0;
        for (int64_t b = 0; b < g.n_fblocks; b++) {
            assert_int_equal(enpu_rs_fblock_word(&g, &in, b), w);
            w += (enpu_rs_fblock_values(&g, &in, b) * g.es + g.wb - 1) / g.wb;
        }
        assert_int_equal(g.filt_words, w);
    }
}

/* Filter banks (docs/rowstat.md "Filter banks"): the arch's flag, and a
 * pass's filters (rs_p x rs_q x wk) filling at most half the filter loop
 * buffer -- at exactly half they do, one entry less and they do not. */
static void test_filter_banks(void **state) {
    (void)state;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("eyeriss", &a, &err), 0);
    assert_int_equal(a.rs_filter_banks, 1);
    enpu_instr in = conv();
    in.ci = 64, in.co = 48, in.rs_e = 7, in.rs_p = 6, in.rs_q = 4, in.rs_r = 2, in.rs_t = 2, in.rs_hf = 2;
    in.hk = in.wk = 3;
    in.rs_weight_addr = 40000, in.rs_ofmap_addr = 20000;
    enpu_rs_geom g;
    assert_int_equal(enpu_rs_geom_of(&a, &in, &g, &err), 0);
    assert_true(enpu_rs_filter_banked(&a, &in, &g)); /* 2 x 72 of 224 */
    a.rs_filter_lb_depth = 2 * 6 * 4 * 3;
    assert_true(enpu_rs_filter_banked(&a, &in, &g));
    a.rs_filter_lb_depth--;
    assert_false(enpu_rs_filter_banked(&a, &in, &g));
    a.rs_filter_lb_depth = 224, a.rs_filter_banks = 0;
    assert_false(enpu_rs_filter_banked(&a, &in, &g));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noc_tags),   cmocka_unit_test(test_pe_conv1d), cmocka_unit_test(test_pe_link),
        cmocka_unit_test(test_requant_wide), cmocka_unit_test(test_scales16), cmocka_unit_test(test_instr),  cmocka_unit_test(test_contract),
        cmocka_unit_test(test_filter_banks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
