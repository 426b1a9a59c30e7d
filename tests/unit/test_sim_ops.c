/* Per-op bit-exact tests of the simulator on hand-assembled programs: every
 * op the ISA has, in both modes (cycle-accurate with the layer-by-layer
 * functional check, and functional), against a direct computation with the
 * quant.h semantics; geometry corner cases (strides, paddings, dilations,
 * groups, channel counts not multiples of 16, tiles at the limits); fused
 * chains.  Also the cycle sanity rules: cycles >= MACs / PEs and compute
 * cycles equal to the closed form of docs/microarch.md §10/§11.11, and the
 * compiler's cost model equal to the simulated cycles, instruction by
 * instruction and activity by activity, on every chain it models
 * (enpu_cost_exact; §14 lists what it does not). */
#include "testutil.h"

#include <math.h>

#include "energy_check.h"
#include "sim_prog.h"

/* ---- helpers ----------------------------------------------------------------------- */

typedef struct layer_io {
    int64_t h, w, c;
} layer_io;

static void rand_i8(tprog *t, int8_t *v, int64_t n, int lo, int hi) {
    for (int64_t i = 0; i < n; i++) v[i] = (int8_t)tp_rint(t, lo, hi);
}

/* Per-channel requantization for an accumulator of k terms. */
static void rand_rq(tprog *t, int64_t co, int64_t k, uint32_t *M, int8_t *S, int32_t *bias) {
    for (int64_t c = 0; c < co; c++) {
        double real = (0.01 + 0.03 * (tp_rand(t) % 1000) / 1000.0) / sqrt((double)k);
        int s;
        uint32_t m;
        enpu_err err = {0};
        if (enpu_quantize_multiplier(real, 20, &m, &s, NULL, &err)) abort();
        M[c] = m;
        S[c] = (int8_t)s;
        if (bias) bias[c] = tp_rint(t, -3000, 3000);
    }
}

/* Compares got with want ([c][h][w] order, the user order) element by element. */
static void expect_same(const char *what, const int8_t *got, const int8_t *want, int64_t H,
                        int64_t W, int64_t C) {
    for (int64_t c = 0; c < C; c++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) {
                int64_t i = (c * H + h) * W + w;
                if (got[i] != want[i]) {
                    fprintf(stderr, "%s: output (c=%lld, h=%lld, w=%lld): got %d, want %d\n", what,
                            (long long)c, (long long)h, (long long)w, got[i], want[i]);
                    fail();
                }
            }
}

/* Runs t (input x [h][w][c] of io 0, output io `oio` of shape o) in both
 * modes and compares with `want` ([h][w][c]).  Returns the cycle result
 * (caller frees). */
static int n_cost_compared, n_cost_outside;
static uint64_t n_ff_cycles, n_all_cycles; /* fast-forwarded, simulated (random cases) */

static void run_both(const char *name, tprog *t, const int8_t *x, layer_io xi, int oio, layer_io o,
                     const int8_t *want, enpu_sim_result *cyc) {
    int64_t nx = xi.h * xi.w * xi.c, ny = o.h * o.w * o.c;
    int8_t *xc = malloc((size_t)nx), *wc = malloc((size_t)ny), *y = malloc((size_t)ny);
    tp_hwc_to_chw(x, xc, xi.h, xi.w, xi.c);
    tp_hwc_to_chw(want, wc, o.h, o.w, o.c);
    enpu_err err = {0};
    for (int m = 0; m < 2; m++) {
        enpu_sim_result res;
        memset(y, 0x55, (size_t)ny);
        int rc = tp_run(t, m ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE, m == 0, xc, oio, y, ny, &res, &err);
        if (rc) {
            fprintf(stderr, "%s (%s): %s\n", name, m ? "functional" : "cycle", err.msg);
            fail();
        }
        char what[200];
        snprintf(what, sizeof what, "%s (%s mode)", name, m ? "functional" : "cycle");
        expect_same(what, y, wc, o.h, o.w, o.c);
        if (m == 0) {
            assert_true(res.checked);
            assert_true(res.bit_exact);
            /* every cycle in exactly one activity, rows sum to the total */
            uint64_t sum = 0;
            for (int i = 0; i < res.n_layers; i++) {
                uint64_t a = 0;
                for (int k = 0; k < ENPU_ACT_COUNT; k++) a += res.layers[i].activity[k];
                assert_int_equal(a, res.layers[i].cycles);
                sum += res.layers[i].cycles;
                /* a layer never takes fewer cycles than MACs / MAC units */
                assert_true(res.layers[i].cycles >= res.layers[i].ideal_cycles);
                assert_true(res.layers[i].activity[ENPU_ACT_COMPUTE] >= res.layers[i].ideal_cycles);
                /* compute cycles equal the closed form */
                assert_int_equal(res.layers[i].activity[ENPU_ACT_COMPUTE], res.layers[i].compute_model);
            }
            assert_int_equal(sum, res.total_cycles);
            /* the energy model's analytic access counts equal the simulator's */
            enpu_layer_stats *est = NULL, tot;
            assert_int_equal(enpu_estimate_program(&t->p, &est, &tot, &err), 0);
            enpu_check_counts(name, &t->p, &res, est, &tot, false);
            free(est);
            /* the compiler's cost model predicts these cycles exactly, where
             * it models the program (enpu_cost_exact) */
            int outside = enpu_test_assert_cost_exact(name, &t->p, &res);
            n_cost_compared += t->p.n_instr - outside;
            n_cost_outside += outside;
            /* and the fast-forward changes nothing (docs/microarch.md §15) */
            const int8_t *ins[1] = {xc};
            uint64_t ff = 0;
            assert_int_equal(enpu_test_assert_ff_equal(name, &t->p, &t->arch, NULL, ins, 1, true, &ff, NULL),
                             res.total_cycles);
            n_ff_cycles += ff;
            n_all_cycles += res.total_cycles;
            *cyc = res;
        } else {
            assert_int_equal(res.total_cycles, 0);
            enpu_sim_result_free(&res);
        }
    }
    free(xc);
    free(wc);
    free(y);
}

/* ---- conv family -------------------------------------------------------------------- */

typedef struct conv_case {
    const char *name;
    int64_t op, hi, wi, ci, co, hk, wk, sh, sw, pt, pb, pl, pr, dh, dw, groups;
    int64_t tx, ty; /* max tile (0: largest legal) */
    int relu;
    const char *arch;
    int64_t zs, band_h; /* 0: all output channels, whole kernel */
    int64_t lane_split; /* log2 of the lane groups (docs/microarch.md §16) */
} conv_case;

static void run_conv_case(const conv_case *cc, uint32_t seed) {
    tprog t;
    tp_init(&t, cc->arch ? cc->arch : "easynpu", seed);
    enpu_instr in = {0};
    in.opcode = cc->op;
    in.hi = cc->hi, in.wi = cc->wi, in.ci = cc->ci, in.co = cc->co;
    in.hk = cc->hk, in.wk = cc->wk, in.stride_h = cc->sh, in.stride_w = cc->sw;
    in.pad_top = cc->pt, in.pad_bottom = cc->pb, in.pad_left = cc->pl, in.pad_right = cc->pr;
    in.dil_h = cc->dh, in.dil_w = cc->dw, in.groups = cc->groups;
    in.zs = cc->zs, in.band_h = cc->band_h, in.lane_split = cc->lane_split;
    tp_defaults(&in);
    in.ho = tp_out_extent(in.hi, in.pad_top, in.pad_bottom, in.hk, in.stride_h, in.dil_h);
    in.wo = tp_out_extent(in.wi, in.pad_left, in.pad_right, in.wk, in.stride_w, in.dil_w);
    if (in.opcode == ENPU_OPC_FC) in.ho = in.wo = in.hk = in.wk = 1;
    in.zp_in = tp_rint(&t, -20, 20);
    in.zp_out = tp_rint(&t, -10, 10);
    if (cc->relu) {
        in.clamp_lo = in.zp_out;
        in.clamp_hi = 100;
    }
    int64_t cpg = in.ci / in.groups, k = cpg * in.hk * in.wk;
    if (in.opcode == ENPU_OPC_FC) k = in.hi * in.wi * in.ci;
    int64_t nw = in.co * k, nx = in.hi * in.wi * in.ci, ny = in.ho * in.wo * in.co;
    int8_t *w = malloc((size_t)nw), *x = malloc((size_t)nx), *want = malloc((size_t)ny);
    int32_t *bias = malloc((size_t)in.co * 4);
    uint32_t *M = malloc((size_t)in.co * 4);
    int8_t *S = malloc((size_t)in.co);
    rand_i8(&t, w, nw, -127, 127);
    rand_i8(&t, x, nx, -128, 127);
    rand_rq(&t, in.co, k, M, S, bias);
    if (in.opcode == ENPU_OPC_FC) tp_fc_weights(&t, &in, w);
    else if (in.opcode == ENPU_OPC_CONV || in.opcode == ENPU_OPC_CONV_RELU) tp_conv_weights(&t, &in, w);
    else tp_dw_weights(&t, &in, w);
    tp_params(&t, &in, bias, M, S);
    tp_tile(&t, &in, cc->tx, cc->ty);
    int64_t mw = enpu_arch_words(&t.arch, t.arch.main_dtcm_bytes);
    in.ifmap_addr = 0;
    in.ofmap_addr = mw - enpu_fmap_words(&t.arch, in.ho, in.wo, in.co);
    tp_add(&t, &in, cc->name);
    tp_io(&t, ENPU_IO_INPUT, "x", in.hi, in.wi, in.ci, in.ifmap_addr, ENPU_MEM_MAIN, 0.1f, (int)in.zp_in);
    int oio = tp_io(&t, ENPU_IO_OUTPUT, "y", in.ho, in.wo, in.co, in.ofmap_addr, ENPU_MEM_MAIN, 0.1f,
                    (int)in.zp_out);
    assert_int_equal(tp_finish(&t), 0);
    if (enpu_opcode_class(in.opcode) == ENPU_CLASS_CONV) ref_conv(&in, x, w, bias, M, S, want);
    else ref_dw(&in, x, w, bias, M, S, want);
    enpu_sim_result res;
    run_both(cc->name, &t, x, (layer_io){in.hi, in.wi, in.ci}, oio, (layer_io){in.ho, in.wo, in.co},
             want, &res);
    if (getenv("SIM_DEBUG")) {
        const enpu_layer_stats *l = &res.layers[0];
        fprintf(stderr, "%-20s cycles %6llu ideal %6llu compute %6llu ctrl %llu fill %llu ifmap %llu bus %llu w %llu od %llu pd %llu tile %lldx%lld\n",
                cc->name, (unsigned long long)l->cycles, (unsigned long long)l->ideal_cycles,
                (unsigned long long)l->activity[ENPU_ACT_COMPUTE], (unsigned long long)l->activity[ENPU_ACT_CONTROLLER],
                (unsigned long long)l->activity[ENPU_ACT_PIPELINE_FILL], (unsigned long long)l->activity[ENPU_ACT_IFMAP_LOAD],
                (unsigned long long)l->activity[ENPU_ACT_BUS_CONFLICT], (unsigned long long)l->activity[ENPU_ACT_WEIGHT_LOAD],
                (unsigned long long)l->activity[ENPU_ACT_OFMAP_DRAIN], (unsigned long long)l->activity[ENPU_ACT_PIPELINE_DRAIN],
                (long long)in.tile_x, (long long)in.tile_y);
    }
    /* §10: compute = zse * Ho * Wo * Ci * Hk * Wk (zse per group); with
     * output-channel blocks (§12.3) the sum over blocks of their zse; fc:
     * over the whole map (§12.1) */
    const int64_t L = t.P >> in.lane_split, vrows = in.rows << in.lane_split;
    int64_t opg = in.co / in.groups, z = in.zs * L, zsum = 0, sq = 0;
    for (int64_t k0 = 0; k0 < opg; k0 += z) zsum += tp_cdiv(opg - k0 < z ? opg - k0 : z, L);
    /* Σ over tiles of ceil(x_t*y_t / virtual rows) (= ho*wo with one PE
     * row without lane groups) */
    for (int64_t oy = 0; oy < in.ho; oy += in.tile_y)
        for (int64_t ox = 0; ox < in.wo; ox += in.tile_x) {
            int64_t tw = in.wo - ox < in.tile_x ? in.wo - ox : in.tile_x;
            int64_t th = in.ho - oy < in.tile_y ? in.ho - oy : in.tile_y;
            sq += tp_cdiv(tw * th, vrows);
        }
    if (vrows == 1) assert_int_equal(sq, in.ho * in.wo);
    if (in.opcode == ENPU_OPC_FC)
        assert_int_equal(res.layers[0].activity[ENPU_ACT_COMPUTE], (uint64_t)(zsum * in.hi * in.wi * in.ci));
    else if (enpu_opcode_class(in.opcode) == ENPU_CLASS_CONV)
        assert_int_equal(res.layers[0].activity[ENPU_ACT_COMPUTE],
                         (uint64_t)(zsum * sq * in.ci * in.hk * in.wk));
    else
        assert_int_equal(res.layers[0].activity[ENPU_ACT_COMPUTE],
                         (uint64_t)(tp_cdiv(in.ci, t.P) * sq * in.hk * in.wk));
    enpu_sim_result_free(&res);
    free(w), free(x), free(want), free(bias), free(M), free(S);
    tp_free(&t);
}

static const conv_case conv_cases[] = {
    {"conv3x3", ENPU_OPC_CONV, 10, 10, 3, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NULL},
    {"conv_strided_pads", ENPU_OPC_CONV, 13, 11, 20, 20, 3, 3, 2, 1, 0, 2, 1, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"conv_dilated_zs3", ENPU_OPC_CONV, 12, 12, 16, 33, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, NULL},
    {"conv_dil_stride_5x3", ENPU_OPC_CONV, 15, 17, 5, 7, 5, 3, 2, 3, 1, 2, 0, 1, 2, 1, 1, 0, 0, 0, NULL},
    {"conv_relu", ENPU_OPC_CONV_RELU, 9, 9, 17, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, NULL},
    {"group_aligned", ENPU_OPC_CONV, 8, 8, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, NULL},
    {"group_unaligned", ENPU_OPC_CONV, 8, 7, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, NULL},
    {"group_straddle", ENPU_OPC_CONV, 6, 6, 36, 36, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 3, 0, 0, 0, NULL},
    {"fc", ENPU_OPC_CONV, 1, 1, 100, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"fc_wide", ENPU_OPC_CONV, 1, 1, 864, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"pointwise", ENPU_OPC_CONV, 12, 12, 40, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"kws_conv1", ENPU_OPC_CONV, 26, 49, 1, 28, 3, 3, 1, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"tile_limit_pad", ENPU_OPC_CONV, 16, 16, 4, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 0, NULL},
    {"tile_limit_psum", ENPU_OPC_CONV, 16, 16, 16, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 8, 8, 0, NULL},
    {"tile_1x1", ENPU_OPC_CONV, 5, 4, 18, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, NULL},
    {"dwconv", ENPU_OPC_DWCONV, 11, 10, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NULL},
    {"dwconv_s2", ENPU_OPC_DWCONV, 12, 12, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NULL},
    {"dwconv_dil", ENPU_OPC_DWCONV, 12, 13, 33, 33, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, NULL},
    {"avgpool", ENPU_OPC_AVGPOOL, 8, 8, 24, 24, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"large_conv", ENPU_OPC_CONV, 24, 24, 24, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, "large"},
    /* ISA 2 (docs/microarch.md §12) */
    {"fc_op_map", ENPU_OPC_FC, 8, 9, 12, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL},
    {"fc_op_blocks", ENPU_OPC_FC, 3, 3, 20, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL, 1},
    {"conv_blocks", ENPU_OPC_CONV, 7, 7, 20, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NULL, 2},
    {"group_blocks", ENPU_OPC_CONV, 6, 6, 8, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, NULL, 1},
    {"conv_bands", ENPU_OPC_CONV, 12, 10, 6, 20, 5, 3, 1, 1, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, NULL, 0, 2},
    {"conv_bands_dil", ENPU_OPC_CONV, 14, 9, 17, 9, 4, 2, 2, 1, 1, 0, 0, 1, 2, 1, 1, 0, 0, 0, NULL, 0, 3},
    {"dw_bands", ENPU_OPC_DWCONV, 12, 12, 20, 20, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0, 0, 0, NULL, 0, 1},
    {"avgpool_bands", ENPU_OPC_AVGPOOL, 24, 5, 16, 16, 24, 5, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL, 0, 2},
};

static void test_conv_family(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++)
        run_conv_case(&conv_cases[i], 1234u + (uint32_t)i);
}

/* ---- max pool ----------------------------------------------------------------------- */

static void run_maxpool(const char *name, int64_t hi, int64_t wi, int64_t c, int64_t k, int64_t st,
                        int64_t pt, int64_t pb, int64_t pl, int64_t pr, uint32_t seed) {
    tprog t;
    tp_init(&t, "easynpu", seed);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_MAXPOOL;
    in.hi = hi, in.wi = wi, in.ci = in.co = c, in.hk = in.wk = k, in.stride_h = in.stride_w = st;
    in.pad_top = pt, in.pad_bottom = pb, in.pad_left = pl, in.pad_right = pr;
    tp_defaults(&in);
    in.ho = tp_out_extent(hi, pt, pb, k, st, 1);
    in.wo = tp_out_extent(wi, pl, pr, k, st, 1);
    in.zp_in = in.zp_out = tp_rint(&t, -30, 30);
    in.out_mult = 1;
    in.out_shift = 0;
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = enpu_arch_words(&t.arch, t.arch.main_dtcm_bytes) -
                    enpu_fmap_words(&t.arch, in.ho, in.wo, in.co);
    tp_add(&t, &in, name);
    tp_io(&t, ENPU_IO_INPUT, "x", hi, wi, c, 0, ENPU_MEM_MAIN, 0.1f, (int)in.zp_in);
    int oio = tp_io(&t, ENPU_IO_OUTPUT, "y", in.ho, in.wo, c, in.ofmap_addr, ENPU_MEM_MAIN, 0.1f, (int)in.zp_out);
    assert_int_equal(tp_finish(&t), 0);
    int8_t *x = malloc((size_t)(hi * wi * c)), *want = malloc((size_t)(in.ho * in.wo * c));
    rand_i8(&t, x, hi * wi * c, -128, 127);
    ref_maxpool(&in, x, want);
    enpu_sim_result res;
    run_both(name, &t, x, (layer_io){hi, wi, c}, oio, (layer_io){in.ho, in.wo, c}, want, &res);
    assert_int_equal(res.layers[0].macs, 0);
    enpu_sim_result_free(&res);
    free(x), free(want);
    tp_free(&t);
}

static void test_maxpool(void **state) {
    (void)state;
    run_maxpool("maxpool3x3s2p1", 9, 9, 20, 3, 2, 1, 1, 1, 1, 11);
    run_maxpool("maxpool2x2s2", 8, 8, 16, 2, 2, 0, 0, 0, 0, 12);
    /* windows entirely in the padding give requant(0) = zp_out */
    run_maxpool("maxpool_all_pad", 4, 5, 3, 3, 1, 3, 0, 0, 3, 13);
}

/* ---- 1x1 channel-wise ops and fused chains ------------------------------------------- */

typedef struct built {
    enpu_instr in;
    int8_t *bnw, *S, *op2;
    int32_t *bias;
    uint32_t *M;
    enpu_pwl_table tab;
} built;

static void built_free(built *b) {
    free(b->bnw), free(b->S), free(b->op2), free(b->bias), free(b->M);
    memset(b, 0, sizeof *b);
}

/* A 1x1 op on an h x w x c map with random parameters laid out in t; op2
 * (add, mul) is put in the initial image of op2_mem at op2_addr. */
static void build_1x1(tprog *t, built *b, int64_t op, int64_t h, int64_t w, int64_t c, int op2_mem,
                      int64_t op2_addr, int32_t zp_in) {
    memset(b, 0, sizeof *b);
    enpu_instr *in = &b->in;
    in->opcode = op;
    in->hi = in->ho = h, in->wi = in->wo = w, in->ci = in->co = c;
    tp_defaults(in);
    in->zp_in = zp_in;
    in->zp_out = tp_rint(t, -20, 20);
    b->bias = calloc((size_t)c, 4);
    b->M = calloc((size_t)c, 4);
    b->S = calloc((size_t)c, 1);
    b->bnw = calloc((size_t)c, 1);
    double real = 0.3 + 0.5 * (tp_rand(t) % 100) / 100.0;
    uint32_t m;
    int sh;
    enpu_err err = {0};
    switch (op) {
    case ENPU_OPC_BN:
        rand_i8(t, b->bnw, c, -127, 127);
        rand_rq(t, c, 64, b->M, b->S, b->bias);
        tp_bn_weights(t, in, b->bnw);
        tp_params(t, in, b->bias, b->M, b->S);
        break;
    case ENPU_OPC_RELU:
        enpu_quantize_multiplier(real, 20, &m, &sh, NULL, &err);
        in->out_mult = m, in->out_shift = sh;
        in->clamp_lo = in->zp_out;
        break;
    case ENPU_OPC_ACT: {
        int rc = enpu_pwl_fit(enpu_pwl_sigmoid, NULL, 0.05f, zp_in, 1.0f / 256, -128, 16, 20, &b->tab, &err);
        if (rc) {
            fprintf(stderr, "%s\n", err.msg);
            abort();
        }
        tp_table(t, in, &b->tab);
        break;
    }
    case ENPU_OPC_ADD:
    case ENPU_OPC_MUL:
        in->op2_mem = op2_mem;
        in->op2_addr = op2_addr;
        in->zp_op2 = tp_rint(t, -20, 20);
        if (op == ENPU_OPC_ADD) {
            in->in1_mult = tp_rint(t, 1, 127), in->in2_mult = tp_rint(t, 1, 127);
            enpu_quantize_multiplier(real / 128, 20, &m, &sh, NULL, &err);
        } else {
            enpu_quantize_multiplier(real / 128, 20, &m, &sh, NULL, &err);
        }
        in->out_mult = m, in->out_shift = sh;
        b->op2 = malloc((size_t)(h * w * c));
        rand_i8(t, b->op2, h * w * c, -128, 127);
        tp_init_tensor(t, op2_mem == ENPU_MEM_SKIP, op2_addr, b->op2, h, w, c);
        break;
    }
}

static void ref_built(const built *b, const int8_t *x, int8_t *y) {
    ref_pointwise(&b->in, x, b->op2, b->bnw, b->bias, b->M, b->S, &b->tab, y);
}

static void run_pointwise(const char *name, int64_t op, int64_t h, int64_t w, int64_t c, int op2_mem,
                          bool in_place, uint32_t seed) {
    tprog t;
    tp_init(&t, "easynpu", seed);
    int64_t words = enpu_fmap_words(&t.arch, h, w, c);
    int64_t mw = enpu_arch_words(&t.arch, t.arch.main_dtcm_bytes);
    built b;
    int32_t zp_in = tp_rint(&t, -20, 20);
    build_1x1(&t, &b, op, h, w, c, op2_mem, op2_mem == ENPU_MEM_SKIP ? 3 : words + 5, zp_in);
    b.in.ifmap_addr = 0;
    b.in.ofmap_addr = in_place ? 0 : mw - words;
    tp_tile(&t, &b.in, 0, 0);
    tp_add(&t, &b.in, name);
    tp_io(&t, ENPU_IO_INPUT, "x", h, w, c, 0, ENPU_MEM_MAIN, 0.1f, zp_in);
    int oio = tp_io(&t, ENPU_IO_OUTPUT, "y", h, w, c, b.in.ofmap_addr, ENPU_MEM_MAIN, 0.1f, (int)b.in.zp_out);
    assert_int_equal(tp_finish(&t), 0);
    int8_t *x = malloc((size_t)(h * w * c)), *want = malloc((size_t)(h * w * c));
    rand_i8(&t, x, h * w * c, -128, 127);
    ref_built(&b, x, want);
    enpu_sim_result res;
    run_both(name, &t, x, (layer_io){h, w, c}, oio, (layer_io){h, w, c}, want, &res);
    enpu_sim_result_free(&res);
    free(x), free(want);
    built_free(&b);
    tp_free(&t);
}

static void test_pointwise(void **state) {
    (void)state;
    run_pointwise("bn", ENPU_OPC_BN, 5, 7, 20, 0, false, 21);
    run_pointwise("bn_in_place", ENPU_OPC_BN, 6, 6, 16, 0, true, 22);
    run_pointwise("relu", ENPU_OPC_RELU, 4, 9, 33, 0, false, 23);
    run_pointwise("act_sigmoid", ENPU_OPC_ACT, 7, 5, 12, 0, false, 24);
    run_pointwise("add_main", ENPU_OPC_ADD, 6, 5, 24, ENPU_MEM_MAIN, false, 25);
    run_pointwise("add_skip_in_place", ENPU_OPC_ADD, 6, 5, 24, ENPU_MEM_SKIP, true, 26);
    run_pointwise("mul_main", ENPU_OPC_MUL, 3, 8, 17, ENPU_MEM_MAIN, false, 27);
    run_pointwise("mul_skip", ENPU_OPC_MUL, 8, 8, 40, ENPU_MEM_SKIP, false, 28);
}

/* ---- reshape ---------------------------------------------------------------------------- */

static void run_reshape(const char *name, int64_t hi, int64_t wi, int64_t ci, int64_t ho, int64_t wo,
                        int64_t co, int64_t perm, uint32_t seed) {
    tprog t;
    tp_init(&t, "easynpu", seed);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_RESHAPE;
    in.hi = hi, in.wi = wi, in.ci = ci, in.ho = ho, in.wo = wo, in.co = co, in.perm = perm;
    tp_defaults(&in);
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = enpu_arch_words(&t.arch, t.arch.main_dtcm_bytes) - enpu_fmap_words(&t.arch, ho, wo, co);
    tp_add(&t, &in, name);
    tp_io(&t, ENPU_IO_INPUT, "x", hi, wi, ci, 0, ENPU_MEM_MAIN, 0.1f, 0);
    int oio = tp_io(&t, ENPU_IO_OUTPUT, "y", ho, wo, co, in.ofmap_addr, ENPU_MEM_MAIN, 0.1f, 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t *x = malloc((size_t)(hi * wi * ci)), *want = malloc((size_t)(ho * wo * co));
    rand_i8(&t, x, hi * wi * ci, -128, 127);
    ref_reshape(&in, x, want);
    enpu_sim_result res;
    run_both(name, &t, x, (layer_io){hi, wi, ci}, oio, (layer_io){ho, wo, co}, want, &res);
    enpu_sim_result_free(&res);
    free(x), free(want);
    tp_free(&t);
}

static void test_reshape(void **state) {
    (void)state;
    run_reshape("reshape_hwc", 4, 6, 12, 1, 1, 288, ENPU_PERM_HWC, 31);
    run_reshape("reshape_chw_flatten", 4, 5, 20, 1, 1, 400, ENPU_PERM_CHW, 32);
    run_reshape("reshape_hcw", 3, 4, 5, 6, 2, 5, ENPU_PERM_HCW, 33);
    run_reshape("reshape_whc", 3, 4, 17, 4, 3, 17, ENPU_PERM_WHC, 34);
    run_reshape("reshape_wch", 2, 7, 3, 7, 1, 6, ENPU_PERM_WCH, 35);
    run_reshape("reshape_cwh", 5, 3, 16, 16, 3, 5, ENPU_PERM_CWH, 36);
}

/* ---- fused chains ------------------------------------------------------------------------ */

typedef struct member_spec {
    int64_t op;
    int op2_mem;
    bool store_skip;
    int64_t perm, rh, rw, rc; /* reshape target */
} member_spec;

/* Builds the head window op of cc into *b (weights, params), no addresses. */
static void build_window(tprog *t, const conv_case *cc, built *b, int8_t **wout) {
    memset(b, 0, sizeof *b);
    enpu_instr *in = &b->in;
    in->opcode = cc->op;
    in->hi = cc->hi, in->wi = cc->wi, in->ci = cc->ci, in->co = cc->co;
    in->hk = cc->hk, in->wk = cc->wk, in->stride_h = cc->sh, in->stride_w = cc->sw;
    in->pad_top = cc->pt, in->pad_bottom = cc->pb, in->pad_left = cc->pl, in->pad_right = cc->pr;
    in->dil_h = cc->dh, in->dil_w = cc->dw, in->groups = cc->groups;
    in->zs = cc->zs, in->band_h = cc->band_h;
    tp_defaults(in);
    in->ho = tp_out_extent(in->hi, in->pad_top, in->pad_bottom, in->hk, in->stride_h, in->dil_h);
    in->wo = tp_out_extent(in->wi, in->pad_left, in->pad_right, in->wk, in->stride_w, in->dil_w);
    in->zp_in = tp_rint(t, -20, 20);
    in->zp_out = tp_rint(t, -10, 10);
    *wout = NULL;
    if (cc->op == ENPU_OPC_MAXPOOL) {
        in->out_mult = 1, in->out_shift = 0, in->zp_out = in->zp_in;
        return;
    }
    int64_t k = (in->ci / in->groups) * in->hk * in->wk, nw = in->co * k;
    int8_t *w = malloc((size_t)nw);
    b->bias = malloc((size_t)in->co * 4);
    b->M = malloc((size_t)in->co * 4);
    b->S = malloc((size_t)in->co);
    rand_i8(t, w, nw, -127, 127);
    rand_rq(t, in->co, k, b->M, b->S, b->bias);
    if (enpu_opcode_class(cc->op) == ENPU_CLASS_CONV) tp_conv_weights(t, in, w);
    else tp_dw_weights(t, in, w);
    tp_params(t, in, b->bias, b->M, b->S);
    *wout = w;
}

static void ref_window(const built *b, const int8_t *w, const int8_t *x, int8_t *y) {
    if (b->in.opcode == ENPU_OPC_MAXPOOL) ref_maxpool(&b->in, x, y);
    else if (enpu_opcode_class(b->in.opcode) == ENPU_CLASS_CONV) ref_conv(&b->in, x, w, b->bias, b->M, b->S, y);
    else ref_dw(&b->in, x, w, b->bias, b->M, b->S, y);
}

/* Runs head cc fused with members ms; expect_rc != 0: enpu_sim_new must fail
 * with that status. */
static void run_chain(const char *name, const conv_case *cc, const member_spec *ms, int nm,
                      uint32_t seed, int expect_rc) {
    tprog t;
    tp_init(&t, cc->arch ? cc->arch : "easynpu", seed);
    built st[8];
    int8_t *hw = NULL;
    build_window(&t, cc, &st[0], &hw);
    enpu_instr *h = &st[0].in;
    tp_tile(&t, h, cc->tx, cc->ty);
    int64_t in_words = enpu_fmap_words(&t.arch, h->hi, h->wi, h->ci);
    int64_t mw = enpu_arch_words(&t.arch, t.arch.main_dtcm_bytes);
    int64_t skip_next = 0, op2_next = in_words + 8;
    int64_t H = h->ho, W = h->wo, C = h->co;
    int has_bn = 0, act = 0, act_first = 0;
    int64_t skip_addr[8] = {0};
    for (int m = 0; m < nm; m++) {
        built *b = &st[m + 1];
        if (ms[m].op == ENPU_OPC_RESHAPE) {
            memset(b, 0, sizeof *b);
            b->in.opcode = ENPU_OPC_RESHAPE;
            b->in.hi = H, b->in.wi = W, b->in.ci = C;
            b->in.ho = ms[m].rh, b->in.wo = ms[m].rw, b->in.co = ms[m].rc, b->in.perm = ms[m].perm;
            tp_defaults(&b->in);
            b->in.zp_in = b->in.zp_out = st[m].in.zp_out;
        } else {
            int64_t words = enpu_fmap_words(&t.arch, H, W, C);
            int64_t a = ms[m].op2_mem == ENPU_MEM_SKIP ? skip_next : op2_next;
            build_1x1(&t, b, ms[m].op, H, W, C, ms[m].op2_mem, a, (int32_t)st[m].in.zp_out);
            if (ms[m].op == ENPU_OPC_ADD || ms[m].op == ENPU_OPC_MUL) {
                if (ms[m].op2_mem == ENPU_MEM_SKIP) skip_next += words;
                else op2_next += words;
            }
            if (ms[m].op == ENPU_OPC_BN) has_bn = 1;
            if (ms[m].op == ENPU_OPC_RELU || ms[m].op == ENPU_OPC_ACT) {
                act = ms[m].op == ENPU_OPC_RELU ? ENPU_ACT_RELU : ENPU_ACT_TABLE;
                act_first = !has_bn;
            }
        }
        enpu_instr *in = &b->in;
        in->tile_x = h->tile_x, in->tile_y = h->tile_y, in->zs = h->zs, in->rows = h->rows;
        in->tile_xi = in->tile_x, in->tile_yi = in->tile_y;
        H = in->ho, W = in->wo, C = in->co;
    }
    h->fuse_bn = has_bn;
    h->fuse_act = act;
    h->fuse_order = has_bn && act && act_first;
    /* store_skip: of the head (ms index -1 encoded by cc->relu == 2) or members */
    for (int s = 0; s <= nm; s++) {
        bool want_skip = s == 0 ? cc->relu == 2 : ms[s - 1].store_skip;
        if (!want_skip) continue;
        st[s].in.store_skip = 1;
        st[s].in.skip_addr = skip_addr[s] = skip_next;
        skip_next += enpu_fmap_words(&t.arch, st[s].in.ho, st[s].in.wo, st[s].in.co);
    }
    for (int s = 0; s <= nm; s++) {
        st[s].in.fuse_next = s < nm;
        st[s].in.ifmap_addr = 0;
        if (s == nm) st[s].in.ofmap_addr = mw - enpu_fmap_words(&t.arch, H, W, C);
        char nmb[64];
        snprintf(nmb, sizeof nmb, "%s.%d", name, s);
        tp_add(&t, &st[s].in, nmb);
    }
    tp_io(&t, ENPU_IO_INPUT, "x", h->hi, h->wi, h->ci, 0, ENPU_MEM_MAIN, 0.1f, (int)h->zp_in);
    int oio = tp_io(&t, ENPU_IO_OUTPUT, "y", H, W, C, st[nm].in.ofmap_addr, ENPU_MEM_MAIN, 0.1f,
                    (int)st[nm].in.zp_out);
    assert_int_equal(tp_finish(&t), 0);
    if (expect_rc) {
        enpu_sim *sim = NULL;
        enpu_err err = {0};
        enpu_sim_opts o = {0};
        assert_int_equal(enpu_sim_new(&t.p, &t.arch, &o, &sim, &err), expect_rc);
        fprintf(stderr, "%s: refused as expected: %s\n", name, err.msg);
    } else {
        /* reference, stage by stage */
        int64_t big = 1 << 16;
        int8_t *x = malloc((size_t)(h->hi * h->wi * h->ci)), *a = malloc((size_t)big), *bb = malloc((size_t)big);
        int8_t *stage_out[8];
        rand_i8(&t, x, h->hi * h->wi * h->ci, -128, 127);
        ref_window(&st[0], hw, x, a);
        stage_out[0] = malloc((size_t)big);
        memcpy(stage_out[0], a, (size_t)big);
        for (int s = 1; s <= nm; s++) {
            if (st[s].in.opcode == ENPU_OPC_RESHAPE) ref_reshape(&st[s].in, a, bb);
            else ref_built(&st[s], a, bb);
            int8_t *tmp = a;
            a = bb;
            bb = tmp;
            stage_out[s] = malloc((size_t)big);
            memcpy(stage_out[s], a, (size_t)big);
        }
        enpu_sim_result res;
        run_both(name, &t, x, (layer_io){h->hi, h->wi, h->ci}, oio, (layer_io){H, W, C}, a, &res);
        /* fused stages cost one pass each: rows of members carry them */
        for (int s = 1; s <= nm; s++) {
            const enpu_layer_stats *l = &res.layers[s];
            assert_int_equal(l->chain_head, 0);
            if (st[s].in.opcode == ENPU_OPC_RESHAPE) assert_int_equal(l->activity[ENPU_ACT_COMPUTE], 0);
            else assert_true(l->activity[ENPU_ACT_COMPUTE] > 0);
        }
        /* skip copies hold the stage outputs */
        for (int s = 0; s <= nm; s++) {
            if (!st[s].in.store_skip) continue;
            enpu_io_desc d = {0};
            d.name = "skip";
            d.dtype = ENPU_DT_INT8;
            d.layout = ENPU_LAYOUT_ANY;
            d.rank = 3;
            d.dims[0] = st[s].in.ho, d.dims[1] = st[s].in.wo, d.dims[2] = st[s].in.co;
            d.mem = ENPU_MEM_SKIP;
            d.addr = (uint32_t)skip_addr[s];
            for (int m = 0; m < 2; m++) {
                enpu_sim_opts o = {0};
                o.mode = m ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
                enpu_sim *sim = NULL;
                enpu_err err = {0};
                enpu_sim_result r2;
                int8_t *xc = malloc((size_t)(h->hi * h->wi * h->ci));
                tp_hwc_to_chw(x, xc, h->hi, h->wi, h->ci);
                const int8_t *ins[1] = {xc};
                int64_t n = d.dims[0] * d.dims[1] * d.dims[2];
                int8_t *got = malloc((size_t)n);
                assert_int_equal(enpu_sim_new(&t.p, &t.arch, &o, &sim, &err), 0);
                assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &r2, &err), 0);
                assert_int_equal(enpu_sim_read_tensor(sim, &d, got, n, &err), 0);
                for (int64_t i = 0; i < n; i++)
                    if (got[i] != stage_out[s][i]) {
                        fprintf(stderr, "%s: skip copy of stage %d, element %lld: %d != %d\n", name,
                                s, (long long)i, got[i], stage_out[s][i]);
                        fail();
                    }
                enpu_sim_result_free(&r2);
                enpu_sim_free(sim);
                free(got);
                free(xc);
            }
        }
        enpu_sim_result_free(&res);
        for (int s = 0; s <= nm; s++) free(stage_out[s]);
        free(x), free(a), free(bb);
    }
    free(hw);
    for (int s = 0; s <= nm; s++) built_free(&st[s]);
    tp_free(&t);
}

static void test_chains(void **state) {
    (void)state;
    const conv_case conv = {"c", ENPU_OPC_CONV, 9, 10, 5, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NULL};
    const conv_case conv_skip = {"c", ENPU_OPC_CONV, 9, 10, 5, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2, NULL};
    const conv_case conv_small = {"c", ENPU_OPC_CONV, 6, 6, 4, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, NULL};
    const conv_case dw = {"d", ENPU_OPC_DWCONV, 10, 10, 24, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NULL};
    const conv_case mp = {"m", ENPU_OPC_MAXPOOL, 8, 8, 20, 20, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, NULL};
    const conv_case grp = {"g", ENPU_OPC_CONV, 7, 7, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, NULL};
    const member_spec bn = {ENPU_OPC_BN, 0, false, 0, 0, 0, 0};
    const member_spec bn_skip = {ENPU_OPC_BN, 0, true, 0, 0, 0, 0};
    const member_spec act = {ENPU_OPC_ACT, 0, false, 0, 0, 0, 0};
    const member_spec relu = {ENPU_OPC_RELU, 0, false, 0, 0, 0, 0};
    const member_spec add_skip = {ENPU_OPC_ADD, ENPU_MEM_SKIP, false, 0, 0, 0, 0};
    const member_spec add_main = {ENPU_OPC_ADD, ENPU_MEM_MAIN, false, 0, 0, 0, 0};
    const member_spec mul_main = {ENPU_OPC_MUL, ENPU_MEM_MAIN, true, 0, 0, 0, 0};
    member_spec flat = {ENPU_OPC_RESHAPE, 0, false, ENPU_PERM_CHW, 1, 1, 9 * 10 * 20};
    member_spec flat_hwc = {ENPU_OPC_RESHAPE, 0, true, ENPU_PERM_HWC, 1, 1, 9 * 10 * 20};

    run_chain("conv_bn_act", &conv, (member_spec[]){bn, act}, 2, 41, 0);
    run_chain("conv_act_bn", &conv, (member_spec[]){act, bn}, 2, 42, 0);
    run_chain("conv_skip_add", &conv_skip, (member_spec[]){add_main}, 1, 43, 0);
    run_chain("conv_add_skip_op2", &conv, (member_spec[]){add_skip, relu}, 2, 44, 0);
    run_chain("conv_1x1tile_bn_mul", &conv_small, (member_spec[]){bn, mul_main}, 2, 45, 0);
    run_chain("dw_relu", &dw, (member_spec[]){relu}, 1, 46, 0);
    run_chain("dw_bn_add", &dw, (member_spec[]){bn, add_main}, 2, 47, 0);
    run_chain("maxpool_act", &mp, (member_spec[]){act}, 1, 48, 0);
    run_chain("conv_flatten_chw", &conv, (member_spec[]){flat}, 1, 49, 0);
    run_chain("conv_bn_skip_flatten", &conv, (member_spec[]){bn_skip, flat_hwc}, 2, 50, 0);
    run_chain("group_unaligned_bn", &grp, (member_spec[]){bn, act}, 2, 51, 0);
    run_chain("group_unaligned_add", &grp, (member_spec[]){add_main}, 1, 52, ENPU_E_UNSUPPORTED);
}

/* ---- other architectures: PE rows, latencies, a narrower core ------------------------- */

static const char *const variants[] = {
    /* two PE rows sharing each tile (note 000 TODO), twice the psum file */
    "{\"base\":\"easynpu\",\"name\":\"rows2\",\"pe_rows\":2,\"psum_depth\":128}",
    /* slower memories, a deeper PE, no requant latency, free decode */
    "{\"base\":\"easynpu\",\"name\":\"slow\",\"dtcm_read_latency\":3,\"weight_mem_latency\":4,"
    "\"pe_pipeline_depth\":3,\"requant_latency\":0,\"decode_cycles\":0,\"instr_fetch_cycles\":7,"
    "\"weight_pad_depth\":4}",
    /* 8 PEs on a 64-bit bus, small pads */
    "{\"base\":\"easynpu\",\"name\":\"p8\",\"pes\":8,\"ifmap_pads\":8,\"weight_pad_groups\":8,"
    "\"bus_bits\":64,\"ifmap_pad_depth\":32,\"psum_depth\":32}",
    /* four PE rows, 24 PE lanes of a 192-bit bus */
    "{\"base\":\"large\",\"name\":\"r4p24\",\"pes\":24,\"ifmap_pads\":24,\"weight_pad_groups\":24,"
    "\"bus_bits\":192,\"pe_rows\":4,\"psum_depth\":96,\"main_dtcm_bytes\":98304,"
    "\"skip_dtcm_bytes\":49152,\"weight_mem_bytes\":98304}",
};

static void test_arch_variants(void **state) {
    (void)state;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        const char *a = variants[v];
        conv_case cases[] = {
            {"v_conv", ENPU_OPC_CONV, 11, 9, 20, 20, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, a},
            {"v_group", ENPU_OPC_CONV, 6, 6, 12, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 0, 0, a},
            {"v_fc", ENPU_OPC_FC, 3, 4, 10, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, a},
            {"v_dw", ENPU_OPC_DWCONV, 9, 10, 20, 20, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, a},
            {"v_bands", ENPU_OPC_CONV, 9, 8, 5, 9, 4, 3, 1, 1, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0, a, 0, 2},
            {"v_blocks", ENPU_OPC_CONV, 6, 5, 9, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, a, 1},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            run_conv_case(&cases[i], 700u + (uint32_t)(v * 16 + i));
        conv_case head = {"h", ENPU_OPC_CONV, 7, 8, 5, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2, a};
        const member_spec bn = {ENPU_OPC_BN, 0, false, 0, 0, 0, 0};
        const member_spec act = {ENPU_OPC_ACT, 0, false, 0, 0, 0, 0};
        const member_spec add = {ENPU_OPC_ADD, ENPU_MEM_MAIN, true, 0, 0, 0, 0};
        member_spec flat = {ENPU_OPC_RESHAPE, 0, false, ENPU_PERM_CHW, 1, 1, 7 * 8 * 20};
        run_chain("v_chain", &head, (member_spec[]){bn, act, add, flat}, 4, 800u + (uint32_t)v, 0);
        conv_case dwh = {"d", ENPU_OPC_DWCONV, 8, 9, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, a};
        const member_spec mul = {ENPU_OPC_MUL, ENPU_MEM_SKIP, false, 0, 0, 0, 0};
        run_chain("v_dw_chain", &dwh, (member_spec[]){act, mul}, 2, 900u + (uint32_t)v, 0);
    }
}

/* An accumulator outside acc_bits stops the run with the layer, the output
 * coordinate and the value (in both modes); the statistics so far remain. */
static void test_acc_overflow(void **state) {
    (void)state;
    for (int m = 0; m < 2; m++) {
        tprog t;
        tp_init(&t, "{\"base\":\"easynpu\",\"acc_bits\":16}", 61);
        enpu_instr in = {0};
        in.opcode = ENPU_OPC_CONV;
        in.hi = in.wi = 4, in.ci = 32, in.co = 16, in.hk = in.wk = 3;
        tp_defaults(&in);
        in.ho = in.wo = 2;
        int8_t *w = malloc(16 * 32 * 9);
        memset(w, 127, 16 * 32 * 9);
        int32_t bias[16] = {0};
        uint32_t M[16];
        int8_t S[16];
        for (int i = 0; i < 16; i++) M[i] = 1, S[i] = 20;
        tp_conv_weights(&t, &in, w);
        tp_params(&t, &in, bias, M, S);
        tp_tile(&t, &in, 0, 0);
        in.ofmap_addr = 100;
        tp_add(&t, &in, "big");
        tp_io(&t, ENPU_IO_INPUT, "x", 4, 4, 32, 0, ENPU_MEM_MAIN, 1, 0);
        assert_int_equal(tp_finish(&t), 0);
        int8_t x[4 * 4 * 32];
        memset(x, 127, sizeof x);
        enpu_sim_result res;
        enpu_err err = {0};
        int rc = tp_run(&t, m ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE, m == 0, x, 0, NULL, 0, &res, &err);
        assert_int_equal(rc, ENPU_E_INVALID);
        assert_non_null(strstr(err.msg, "accumulator"));
        assert_non_null(strstr(err.msg, "acc_bits=16"));
        assert_int_equal(res.n_layers, 2);
        enpu_sim_result_free(&res);
        free(w);
        tp_free(&t);
    }
}

/* Runs last: how much of the above the cost model covered (measured; a
 * change in enpu_cost_exact or in the cases shows here). */
static void test_cost_coverage(void **state) {
    (void)state;
    printf("cost model: %d instructions equal to the simulator's cycles, %d outside the model\n",
           n_cost_compared, n_cost_outside);
    assert_int_equal(n_cost_compared, 146);
    assert_int_equal(n_cost_outside, 72);
}

/* ---- random layers: the fast-forward against the per-cycle path ------------------------ */

/* Random window layers (conv, group conv, fc, dwconv, avgpool, maxpool with
 * random shapes, strides, dilations, pads, tiles, output-channel blocks and
 * bands), alone and fused with random members, on random archs (latencies,
 * pad and psum depths, 8 or 16 lanes, one or two PE rows, lane groups for
 * plain convs up to lane_groups_max 1, 2 or 4): each through
 * run_conv_case / run_chain, so checked against the reference, the cost
 * model where it covers the chain and, in run_both, the per-cycle path.
 * Runs after test_cost_coverage (its figures are of the cases above). */
static void test_random_layers(void **state) {
    (void)state;
    tprog r;
    tp_init(&r, "easynpu", 20260520);
    n_ff_cycles = n_all_cycles = 0;
    static const int64_t ops[] = {ENPU_OPC_CONV, ENPU_OPC_CONV, ENPU_OPC_CONV_RELU, ENPU_OPC_FC,
                                  ENPU_OPC_DWCONV, ENPU_OPC_AVGPOOL, ENPU_OPC_MAXPOOL};
    for (int it = 0; it < 120; it++) {
        char arch[512], name[32];
        int P = tp_rint(&r, 0, 3) ? 16 : 8, rows = tp_rint(&r, 0, 4) ? 1 : 2;
        int lgm = 1 << tp_rint(&r, 0, 2); /* lane_groups_max 1, 2, 4 */
        int dif = 16 << tp_rint(&r, 1, 3), dps = 16 << tp_rint(&r, 0, 2), dw = 4 << tp_rint(&r, 0, 2);
        int lw = tp_rint(&r, 1, tp_rint(&r, 0, 5) ? 3 : 5);
        int ld = tp_rint(&r, 1, 3), D = tp_rint(&r, 1, 3), rq = tp_rint(&r, 0, 3); /* in this order */
        snprintf(arch, sizeof arch,
                 "{\"base\":\"easynpu\",\"name\":\"r%d\",\"pes\":%d,\"ifmap_pads\":%d,"
                 "\"weight_pad_groups\":%d,\"bus_bits\":%d,\"pe_rows\":%d,\"ifmap_pad_depth\":%d,"
                 "\"psum_depth\":%d,\"weight_pad_depth\":%d,\"weight_mem_latency\":%d,"
                 "\"dtcm_read_latency\":%d,\"pe_pipeline_depth\":%d,\"requant_latency\":%d,"
                 "\"lane_groups_max\":%d}",
                 it, P, P, P, 8 * P, rows, dif, dps, dw, lw, ld, D, rq, lgm);
        conv_case cc = {0};
        snprintf(name, sizeof name, "random%d", it);
        cc.name = name;
        cc.arch = arch;
        cc.op = ops[tp_rint(&r, 0, 6)];
        bool fc = cc.op == ENPU_OPC_FC, conv = enpu_opcode_class(cc.op) == ENPU_CLASS_CONV;
        for (;;) {
            cc.hk = fc ? 1 : tp_rint(&r, 1, 4), cc.wk = fc ? 1 : tp_rint(&r, 1, 4);
            cc.dh = fc || tp_rint(&r, 0, 3) ? 1 : 2, cc.dw = fc || tp_rint(&r, 0, 3) ? 1 : 2;
            cc.sh = fc ? 1 : tp_rint(&r, 1, 2), cc.sw = fc ? 1 : tp_rint(&r, 1, 2);
            cc.pt = fc ? 0 : tp_rint(&r, 0, cc.hk - 1), cc.pb = fc ? 0 : tp_rint(&r, 0, cc.hk - 1);
            cc.pl = fc ? 0 : tp_rint(&r, 0, cc.wk - 1), cc.pr = fc ? 0 : tp_rint(&r, 0, cc.wk - 1);
            cc.hi = tp_rint(&r, 1, fc ? 4 : 14), cc.wi = tp_rint(&r, 1, fc ? 4 : 14);
            cc.ci = tp_rint(&r, 1, fc ? 40 : 48);
            cc.co = conv ? tp_rint(&r, 1, 48) : cc.ci;
            cc.groups = 1;
            if (cc.op == ENPU_OPC_CONV && tp_rint(&r, 0, 3) == 0) {
                int g = tp_rint(&r, 2, 4);
                cc.ci = g * tp_rint(&r, 1, 12), cc.co = g * tp_rint(&r, 1, 12), cc.groups = g;
            }
            int64_t ekh = cc.dh * (cc.hk - 1) + 1, ekw = cc.dw * (cc.wk - 1) + 1;
            if (cc.hi + cc.pt + cc.pb < ekh || cc.wi + cc.pl + cc.pr < ekw) continue;
            if (ekh * ekw > dif / 2 && ekh * ekw > dif) continue;
            if (ekh * ekw > dif) continue;
            break;
        }
        /* lane groups for a plain conv (alone: never fused) */
        if ((cc.op == ENPU_OPC_CONV || cc.op == ENPU_OPC_CONV_RELU) && cc.groups == 1 && lgm > 1)
            cc.lane_split = tp_rint(&r, 0, lgm == 4 ? 2 : 1);
        int64_t opg = cc.co / cc.groups, wpg = (opg + (P >> cc.lane_split) - 1) / (P >> cc.lane_split);
        if (conv && wpg > 1 && tp_rint(&r, 0, 2) == 0) cc.zs = tp_rint(&r, 1, (int)wpg);
        if (conv && wpg > dw) cc.zs = tp_rint(&r, 1, dw); /* zs <= weight_pad_depth */
        if (!fc && cc.op != ENPU_OPC_MAXPOOL && cc.hk > 1 && tp_rint(&r, 0, 3) == 0)
            cc.band_h = tp_rint(&r, 1, (int)cc.hk - 1);
        if (!fc && tp_rint(&r, 0, 2) == 0) cc.tx = tp_rint(&r, 1, 4), cc.ty = tp_rint(&r, 1, 4);
        /* a layer alone (run_conv_case has no max pool: it goes in a chain) */
        if (cc.lane_split ||
            (cc.op != ENPU_OPC_MAXPOOL && ((cc.groups > 1 && tp_rint(&r, 0, 1)) || fc || tp_rint(&r, 0, 2)))) {
            run_conv_case(&cc, 5000u + (uint32_t)it);
            continue;
        }
        /* a chain: the head and one or two members (at most one
         * activation; an add or mul needs whole words per group) */
        const member_spec bn = {ENPU_OPC_BN, 0, false, 0, 0, 0, 0};
        const member_spec relu = {ENPU_OPC_RELU, 0, false, 0, 0, 0, 0};
        const member_spec act = {ENPU_OPC_ACT, 0, true, 0, 0, 0, 0};
        const member_spec add = {ENPU_OPC_ADD, ENPU_MEM_SKIP, false, 0, 0, 0, 0};
        const member_spec mul = {ENPU_OPC_MUL, ENPU_MEM_MAIN, false, 0, 0, 0, 0};
        const member_spec combos[][2] = {{bn, act}, {act, bn}, {relu, bn}, {bn, relu}, {add, relu},
                                         {bn, mul}, {bn, add}, {act, add}};
        bool unaligned = cc.groups > 1 && (cc.co / cc.groups) % P;
        int pick = tp_rint(&r, 0, unaligned ? 3 : 7), nm = tp_rint(&r, 1, 2);
        member_spec ms[2] = {combos[pick][0], combos[pick][1]};
        run_chain(name, &cc, ms, nm, 6000u + (uint32_t)it, 0);
    }
    tp_free(&r);
    fprintf(stderr, "random layers: %llu cycles, %llu of them fast-forwarded\n",
            (unsigned long long)n_all_cycles, (unsigned long long)n_ff_cycles);
    assert_true(n_ff_cycles * 2 > n_all_cycles);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_family),
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_pointwise),
        cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_chains),
        cmocka_unit_test(test_arch_variants),
        cmocka_unit_test(test_acc_overflow),
        cmocka_unit_test(test_cost_coverage),
        cmocka_unit_test(test_random_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
