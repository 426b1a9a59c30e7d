/* The tiling search and the cost model (src/compiler/tile.c, cost.c):
 *  - property test over random seeded layer shapes and archs: the chosen
 *    tiling never breaks a limit (psum, ifmap pad, weight pad; the
 *    instruction validates) and is never worse than a fixed naive tiling
 *    (x = y = 1) nor than the largest square tile that fits;
 *  - the cost model's bookkeeping: activities sum to the total, compute
 *    cycles follow the closed form of docs/microarch.md §11.11 / §12;
 *  - figures of the KWS layers (equal to the simulator's: test_sim_models);
 *  - a layer no tiling can fit is ENPU_E_NOFIT naming the pad limit;
 *  - the branch and bound: both lower bounds never exceed the cost, the
 *    limit stops a walk only above it, and the fast search chooses what the
 *    exhaustive one chooses, through a cache shared across archs or not. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "easynpu/compiler.h"
#include "testutil.h"

static uint64_t rs;
static uint64_t rnd(void) {
    uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int64_t rr(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static enpu_arch preset(const char *n) {
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset(n, &a, &err), 0);
    return a;
}

/* A random window layer (conv, dwconv, maxpool, avgpool), fc or 1x1 op. */
static enpu_instr random_layer(const enpu_arch *a, int kind) {
    enpu_instr in;
    memset(&in, 0, sizeof in);
    static const int ops[] = {ENPU_OPC_CONV, ENPU_OPC_DWCONV, ENPU_OPC_MAXPOOL, ENPU_OPC_AVGPOOL,
                              ENPU_OPC_FC,   ENPU_OPC_BN,     ENPU_OPC_ACT,     ENPU_OPC_CONV_RELU};
    in.opcode = ops[kind % 8];
    enpu_opclass k = enpu_opcode_class(in.opcode);
    in.cast_mode = k == ENPU_CLASS_CONV ? ENPU_CAST_BROADCAST : ENPU_CAST_MULTICAST;
    in.hk = in.wk = in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.groups = in.rows = 1;
    in.clamp_lo = -128, in.clamp_hi = 127;
    in.ci = rr(1, 80), in.hi = rr(1, 40), in.wi = rr(1, 40);
    if (in.opcode == ENPU_OPC_FC) {
        in.hi = rr(1, 6), in.wi = rr(1, 6);
        in.ho = in.wo = 1, in.co = rr(1, 300);
    } else if (in.opcode == ENPU_OPC_BN || in.opcode == ENPU_OPC_ACT) {
        in.ho = in.hi, in.wo = in.wi, in.co = in.ci;
    } else {
        in.hk = rr(1, 7), in.wk = rr(1, 7);
        in.stride_h = rr(1, 3), in.stride_w = rr(1, 3);
        in.dil_h = rr(1, 2), in.dil_w = rr(1, 2);
        in.pad_top = rr(0, 3), in.pad_bottom = rr(0, 3), in.pad_left = rr(0, 3), in.pad_right = rr(0, 3);
        int64_t sh = in.dil_h * (in.hk - 1) + 1, sw = in.dil_w * (in.wk - 1) + 1;
        if (sw > a->ifmap_pad_depth) in.wk = 1, sw = 1;
        if (in.hi + in.pad_top + in.pad_bottom < sh) in.hi = sh;
        if (in.wi + in.pad_left + in.pad_right < sw) in.wi = sw;
        in.ho = (in.hi + in.pad_top + in.pad_bottom - sh) / in.stride_h + 1;
        in.wo = (in.wi + in.pad_left + in.pad_right - sw) / in.stride_w + 1;
        in.co = in.ci;
        if (k == ENPU_CLASS_CONV) {
            in.co = rr(1, 300);
            if (rr(0, 3) == 0) { /* a group conv with word-aligned groups */
                in.groups = 2;
                in.ci = 2 * a->pes * rr(1, 2), in.co = 2 * a->pes * rr(1, 3);
            }
        }
    }
    /* addresses that fit: input at 0, output at the top; params anywhere */
    int64_t main_words = a->main_dtcm_bytes / (a->bus_bits / 8);
    in.ifmap_addr = 0;
    in.ofmap_addr = main_words - in.ho * in.wo * cdiv(in.co, a->pes);
    return in;
}

static bool fits_memory(const enpu_arch *a, const enpu_instr *in) {
    int64_t main_words = a->main_dtcm_bytes / (a->bus_bits / 8);
    int64_t iw = in->hi * in->wi * cdiv(in->ci, a->pes), ow = in->ho * in->wo * cdiv(in->co, a->pes);
    enpu_mem_block b[ENPU_MAX_BLOCKS];
    int n = enpu_instr_blocks(a, in, 0, b);
    int64_t ww = 0;
    for (int i = 0; i < n; i++)
        if (b[i].mem == ENPU_MEM_WEIGHT) ww += b[i].words;
    return iw + ow <= main_words && ww <= a->weight_mem_bytes / (a->bus_bits / 8);
}

/* Limits of docs/isa.md "Tiling", checked here independently. */
static void check_limits(const enpu_arch *a, const enpu_instr *in) {
    assert_true(in->zs >= 1 && in->zs <= a->weight_pad_depth);
    assert_true(in->tile_x >= 1 && in->tile_y >= 1);
    assert_true(in->zs * cdiv(in->tile_x * in->tile_y, in->rows) <= a->psum_depth);
    assert_true(in->tile_xi * in->tile_yi <= a->ifmap_pad_depth);
    int64_t band = in->band_h ? in->band_h : in->hk;
    if (in->opcode != ENPU_OPC_FC) {
        assert_int_equal(in->tile_xi, in->stride_w * (in->tile_x - 1) + in->dil_w * (in->wk - 1) + 1);
        assert_int_equal(in->tile_yi, in->stride_h * (in->tile_y - 1) + in->dil_h * (band - 1) + 1);
    }
    enpu_err err = {0};
    int rc = enpu_instr_validate(a, in, &err);
    if (rc) fail_msg("tiled instruction does not validate: %s", err.msg);
}

/* Cost of a fixed tiling (x, y) with z = Co and the most kernel rows that
 * fit; -1 when it does not fit at all. */
static int64_t fixed_cost(const enpu_arch *a, const enpu_instr *base, int64_t x, int64_t y) {
    enpu_instr in = *base;
    enpu_opclass k = enpu_opcode_class(in.opcode);
    int64_t g = in.groups;
    in.zs = k == ENPU_CLASS_CONV ? cdiv(in.co / g, a->pes) : 1;
    if (in.zs > a->weight_pad_depth) in.zs = a->weight_pad_depth;
    if (in.opcode == ENPU_OPC_FC) x = y = 1;
    if (x > in.wo) x = in.wo;
    if (y > in.ho) y = in.ho;
    in.tile_x = x, in.tile_y = y, in.rows = 1;
    if (in.zs * x * y > a->psum_depth) return -1;
    for (int64_t b = in.hk; b >= 1; b--) {
        in.band_h = b == in.hk ? 0 : b;
        in.tile_xi = in.stride_w * (x - 1) + in.dil_w * (in.wk - 1) + 1;
        in.tile_yi = in.stride_h * (y - 1) + in.dil_h * (b - 1) + 1;
        if (in.opcode == ENPU_OPC_FC) in.tile_xi = in.tile_yi = 1;
        if (in.tile_xi * in.tile_yi <= a->ifmap_pad_depth) return enpu_cost_chain(a, &in, 1, NULL);
    }
    return -1;
}

static void test_search_property(void **state) {
    (void)state;
    rs = 20240517;
    int checked = 0;
    for (int it = 0; it < 600; it++) {
        enpu_arch a = preset(it % 3 == 2 ? "large" : "easynpu");
        if (it % 5 == 4) { /* odd pads and psum files */
            a.ifmap_pad_depth = rr(16, 128);
            a.psum_depth = rr(8, 128);
            a.weight_pad_depth = rr(4, 32);
        }
        enpu_instr base = random_layer(&a, it);
        if (!fits_memory(&a, &base)) continue;
        enpu_instr in = base;
        enpu_err err = {0};
        int rc = enpu_tile_chain(&a, &in, 1, false, "t", &err);
        if (rc == ENPU_E_NOFIT) {
            /* only when not even one kernel row of a 1x1 tile fits */
            assert_true(in.dil_w * (in.wk - 1) + 1 > a.ifmap_pad_depth);
            continue;
        }
        if (rc) fail_msg("it %d: %s", it, err.msg);
        check_limits(&a, &in);
        int64_t best = enpu_cost_chain(&a, &in, 1, NULL);
        assert_true(best > 0);
        /* never worse than the naive tiling */
        enpu_instr nv = base;
        assert_int_equal(enpu_tile_chain(&a, &nv, 1, true, "t", &err), 0);
        check_limits(&a, &nv);
        int64_t naive = enpu_cost_chain(&a, &nv, 1, NULL);
        if (best > naive) fail_msg("it %d (%s): search %" PRId64 " > naive %" PRId64, it,
                                   enpu_opcode_mnemonic(in.opcode), best, naive);
        /* nor than the largest square tile that fits */
        for (int64_t s = 64; s >= 1; s--) {
            int64_t sq = fixed_cost(&a, &base, s, s);
            if (sq < 0) continue;
            if (best > sq) fail_msg("it %d: search %" PRId64 " > square %" PRId64 "x%" PRId64 " %" PRId64,
                                    it, best, s, s, sq);
            break;
        }
        checked++;
    }
    assert_true(checked > 300);
}

static enpu_instr kws_conv(int64_t hi, int64_t wi, int64_t ci, int64_t co, int64_t sh, int64_t sw) {
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = ENPU_OPC_CONV;
    in.hi = hi, in.wi = wi, in.ci = ci, in.co = co;
    in.hk = in.wk = 3, in.stride_h = sh, in.stride_w = sw, in.dil_h = in.dil_w = in.groups = 1;
    in.ho = (hi - 3) / sh + 1, in.wo = (wi - 3) / sw + 1;
    in.rows = 1, in.clamp_lo = -128, in.clamp_hi = 127;
    in.ofmap_addr = 4096 - in.ho * in.wo * cdiv(co, 16);
    return in;
}

/* Bookkeeping: activities add up; compute is the closed form. */
static void test_cost_accounting(void **state) {
    (void)state;
    enpu_arch a = preset("easynpu");
    rs = 7;
    for (int it = 0; it < 200; it++) {
        enpu_instr in = random_layer(&a, it);
        if (!fits_memory(&a, &in)) continue;
        enpu_err err = {0};
        if (enpu_tile_chain(&a, &in, 1, (it & 1) != 0, "t", &err)) continue;
        int64_t act[ENPU_ACT_COUNT];
        int64_t total = enpu_cost_chain(&a, &in, 1, act);
        int64_t sum = 0;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) sum += act[k];
        assert_int_equal(sum, total);
        assert_int_equal(act[ENPU_ACT_WEIGHT_LOAD], 0);
        assert_int_equal(act[ENPU_ACT_PIPELINE_DRAIN], a.pe_pipeline_depth + a.requant_latency);
        /* compute cycles (§11.11, §12.1, §12.3) */
        int64_t P = a.pes, want;
        if (in.opcode == ENPU_OPC_FC) {
            int64_t z = in.zs * P, nb = cdiv(in.co, z), c = 0;
            for (int64_t b = 0; b < nb; b++) {
                int64_t zk = in.co - b * z < z ? in.co - b * z : z;
                c += cdiv(zk, P) * in.hi * in.wi * in.ci;
            }
            want = c;
        } else if (enpu_opcode_class(in.opcode) == ENPU_CLASS_CONV) {
            int64_t g = in.groups, opg = in.co / g, z = in.zs * P, c = 0;
            if (z > opg) z = cdiv(opg, P) * P;
            for (int64_t b = 0; b * z < opg; b++) {
                int64_t zk = opg - b * z < z ? opg - b * z : z;
                c += cdiv(zk, P);
            }
            want = g * c * in.ho * in.wo * (in.ci / g) * in.hk * in.wk;
        } else {
            want = cdiv(in.ci, P) * in.ho * in.wo * in.hk * in.wk;
        }
        assert_int_equal(act[ENPU_ACT_COMPUTE], want);
    }
}

/* The KWS layers on the default arch: the cost model's figures, which
 * tests/models/test_sim_models.c holds equal to the simulator's, layer by
 * layer (plus the controller cycles of enpu_cost_controller). */
static void test_kws_figures(void **state) {
    (void)state;
    enpu_arch a = preset("easynpu");
    struct {
        enpu_instr in;
        int64_t x, y, zs, want;
    } cases[] = {
        {kws_conv(26, 49, 1, 28, 1, 2), 1, 5, 2, 10394},
        {kws_conv(24, 24, 28, 24, 1, 1), 4, 1, 2, 243959},
        {kws_conv(22, 22, 24, 16, 2, 1), 2, 1, 1, 43217},
        {kws_conv(10, 20, 16, 12, 1, 2), 1, 1, 1, 10382},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enpu_instr in = cases[i].in;
        in.tile_x = cases[i].x, in.tile_y = cases[i].y, in.zs = cases[i].zs;
        in.tile_xi = in.stride_w * (in.tile_x - 1) + 3, in.tile_yi = in.stride_h * (in.tile_y - 1) + 3;
        int64_t act[ENPU_ACT_COUNT];
        assert_int_equal(enpu_cost_chain(&a, &in, 1, act), cases[i].want);
        /* the search finds no worse */
        enpu_instr s = cases[i].in;
        enpu_err err = {0};
        assert_int_equal(enpu_tile_chain(&a, &s, 1, false, "kws", &err), 0);
        assert_true(enpu_cost_chain(&a, &s, 1, NULL) <= cases[i].want);
        /* compute is the seed's mapping; the rest is small */
        assert_true(cases[i].want - act[ENPU_ACT_COMPUTE] < 40);
    }
    /* controller cycles (§11.2): the first instruction also fetches */
    assert_int_equal(enpu_cost_controller(&a, 1, true), 5);
    assert_int_equal(enpu_cost_controller(&a, 1, false), 1);
    assert_int_equal(enpu_cost_controller(&a, 3, false), 1 + 2 * 4);
}

/* Output-channel blocks, kernel row bands and fc accounting. */
static void test_blocks_bands(void **state) {
    (void)state;
    enpu_arch a = preset("easynpu");
    enpu_instr in = kws_conv(12, 12, 32, 64, 1, 1);
    in.tile_x = 2, in.tile_y = 2, in.tile_xi = 4, in.tile_yi = 4;
    int64_t act[ENPU_ACT_COUNT];
    in.zs = 4; /* z = Co */
    enpu_cost_chain(&a, &in, 1, act);
    int64_t full = act[ENPU_ACT_COMPUTE];
    in.zs = 1; /* four blocks of 16 channels: same MACs, the input loaded four times */
    enpu_cost_chain(&a, &in, 1, act);
    assert_int_equal(act[ENPU_ACT_COMPUTE], full);
    enpu_err err = {0};
    assert_int_equal(enpu_instr_validate(&a, &in, &err), 0);
    /* a 24x5 average pool only fits in bands (x'*y' = 120 > 64) */
    enpu_instr ap;
    memset(&ap, 0, sizeof ap);
    ap.opcode = ENPU_OPC_AVGPOOL, ap.cast_mode = ENPU_CAST_MULTICAST;
    ap.hi = 24, ap.wi = 5, ap.ci = ap.co = 32, ap.ho = ap.wo = 1;
    ap.hk = 24, ap.wk = 5, ap.stride_h = ap.stride_w = 1, ap.dil_h = ap.dil_w = ap.groups = ap.rows = 1;
    ap.clamp_lo = -128, ap.clamp_hi = 127, ap.ofmap_addr = 4000;
    assert_int_equal(enpu_tile_chain(&a, &ap, 1, false, "pool", &err), 0);
    assert_true(ap.band_h > 0 && ap.band_h * 5 <= 64);
    check_limits(&a, &ap);
    enpu_cost_chain(&a, &ap, 1, act);
    assert_int_equal(act[ENPU_ACT_COMPUTE], 2 * 24 * 5);
    /* a kernel row that does not fit the pad at all */
    enpu_instr wide = ap;
    wide.hk = 1, wide.wk = 70, wide.hi = 1, wide.wi = 70, wide.band_h = 0;
    enpu_err_clear(&err);
    assert_int_equal(enpu_tile_chain(&a, &wide, 1, false, "wide", &err), ENPU_E_NOFIT);
    assert_non_null(strstr(err.msg, "layer 'wide'"));
    assert_non_null(strstr(err.msg, "use ifmap_pad_depth >= 70"));
    /* fc: compute = zs * hi * wi * ci */
    enpu_instr fc;
    memset(&fc, 0, sizeof fc);
    fc.opcode = ENPU_OPC_FC, fc.hi = 8, fc.wi = 9, fc.ci = 12, fc.ho = fc.wo = 1, fc.co = 30;
    fc.hk = fc.wk = fc.stride_h = fc.stride_w = fc.dil_h = fc.dil_w = fc.groups = fc.rows = 1;
    fc.clamp_lo = -128, fc.clamp_hi = 127, fc.ofmap_addr = 4000;
    assert_int_equal(enpu_tile_chain(&a, &fc, 1, false, "fc1", &err), 0);
    assert_int_equal(fc.zs, 2);
    enpu_cost_chain(&a, &fc, 1, act);
    assert_int_equal(act[ENPU_ACT_COMPUTE], 2 * 864);
}


/* A random arch around the presets: pads, psum files, latencies, PE rows
 * and lane groups (the fields the search and the cost model read). */
static enpu_arch random_arch(void) {
    enpu_arch a = preset(rr(0, 2) == 2 ? "large" : "easynpu");
    if (rr(0, 1)) {
        a.ifmap_pad_depth = rr(9, 128);
        a.psum_depth = rr(4, 128);
        a.weight_pad_depth = rr(4, 32);
    }
    a.pe_pipeline_depth = rr(1, 4), a.requant_latency = rr(0, 3);
    a.dtcm_read_latency = rr(1, 3), a.weight_mem_latency = rr(1, 3);
    if (a.weight_mem_latency >= a.weight_pad_depth) a.weight_mem_latency = 1;
    a.pe_rows = rr(0, 3) == 0 ? rr(2, 4) : 1;
    return a;
}

/* Both bounds are lower bounds, for every legal candidate (a sample of
 * them) of random layers on random archs, and the limit is honoured: a
 * walk stopped by it returns more than the limit, one that is not is
 * exact. */
static void test_bounds(void **state) {
    (void)state;
    rs = 31337;
    int checked = 0, exact = 0;
    for (int it = 0; it < 300; it++) {
        enpu_arch a = random_arch();
        enpu_instr base = random_layer(&a, it);
        if (!fits_memory(&a, &base)) continue;
        base.rows = a.pe_rows > 1 && rr(0, 1) ? a.pe_rows : 1;
        if ((base.opcode == ENPU_OPC_CONV || base.opcode == ENPU_OPC_CONV_RELU) && base.groups == 1)
            base.lane_split = rr(0, 2);
        for (int k = 0; k < 6; k++) {
            enpu_instr in = base;
            int64_t x = rr(1, 8), y = rr(1, 8), band = rr(1, in.hk);
            if (x > in.wo) x = in.wo;
            if (y > in.ho) y = in.ho;
            if (in.opcode == ENPU_OPC_FC) x = y = 1;
            in.tile_x = x, in.tile_y = y, in.zs = rr(1, a.weight_pad_depth < 4 ? a.weight_pad_depth : 4);
            in.band_h = band < in.hk ? band : 0;
            if (in.opcode == ENPU_OPC_FC) in.tile_xi = in.tile_yi = 1;
            else {
                in.tile_xi = in.stride_w * (x - 1) + in.dil_w * (in.wk - 1) + 1;
                in.tile_yi = in.stride_h * (y - 1) + in.dil_h * (band - 1) + 1;
            }
            int64_t cost = cc_cost_chain_limit(&a, &in, 1, 0, NULL);
            if (cost < 0) continue;
            int64_t b0 = cc_cost_bound0(&a, &in, 1), b1 = cc_cost_bound(&a, &in, 1, 0);
            if (!(b0 <= b1 && b1 <= cost))
                fail_msg("it %d (%s %" PRId64 "x%" PRId64 " zs %" PRId64 "): bound0 %" PRId64 ", bound %" PRId64
                         ", cost %" PRId64, it, enpu_opcode_mnemonic(in.opcode), x, y, in.zs, b0, b1, cost);
            exact += b1 == cost;
            /* the limit: below the cost the walk stops above it, at or above
             * it the walk is exact */
            int64_t lim = b1 + (cost - b1) / 2;
            if (lim > 0 && lim < cost) assert_true(cc_cost_chain_limit(&a, &in, 1, lim, NULL) > lim);
            assert_int_equal(cc_cost_chain_limit(&a, &in, 1, cost, NULL), cost);
            checked++;
        }
    }
    assert_true(checked > 800);
    /* where nothing stalls the finer bound is the cost itself */
    assert_true(exact > checked / 10);
}

/* The fast search (bounds, then walks with a limit) against the exhaustive
 * one (every candidate walked in full): the same tiling, the same cost, the
 * same runner-up, on random layers and archs; once without a cache and
 * once through one cache shared by every arch and layer of the test. */
static void test_fast_equals_exhaustive(void **state) {
    (void)state;
    rs = 4242;
    enpu_compile_cache *cache = enpu_compile_cache_new(0);
    assert_non_null(cache);
    int compared = 0, pruned = 0;
    for (int it = 0; it < 200; it++) {
        enpu_arch a = random_arch();
        enpu_instr base = random_layer(&a, it);
        if (!fits_memory(&a, &base)) continue;
        if ((base.opcode == ENPU_OPC_CONV || base.opcode == ENPU_OPC_CONV_RELU) && base.groups == 1)
            base.lane_split = rr(0, 2);
        base.rows = a.pe_rows > 1 && rr(0, 1) ? a.pe_rows : 1;
        enpu_instr e = base;
        cc_tile_info ei;
        enpu_err err = {0};
        int re = cc_tile_search(NULL, &a, &e, 1, false, ENPU_SEARCH_EXHAUSTIVE, "t", &ei, &err);
        /* without a cache, into the cache, from it */
        for (int pass = 0; pass < 3; pass++) {
            enpu_instr f = base;
            cc_tile_info fi;
            int rf = cc_tile_search(pass ? cache : NULL, &a, &f, 1, false, ENPU_SEARCH_FAST, "t", &fi, &err);
            assert_int_equal(rf, re);
            if (rf) continue;
            if (memcmp(&f, &e, sizeof f) != 0 || fi.cost != ei.cost || fi.alt_cost != ei.alt_cost ||
                memcmp(fi.best, ei.best, sizeof fi.best) || memcmp(fi.alt, ei.alt, sizeof fi.alt))
                fail_msg("it %d pass %d (%s): fast %" PRId64 "x%" PRId64 " zs %" PRId64 " (%" PRId64
                         ", next %" PRId64 ") vs exhaustive %" PRId64 "x%" PRId64 " zs %" PRId64 " (%" PRId64
                         ", next %" PRId64 ")", it, pass, enpu_opcode_mnemonic(base.opcode), f.tile_x,
                         f.tile_y, f.zs, fi.cost, fi.alt_cost, e.tile_x, e.tile_y, e.zs, ei.cost, ei.alt_cost);
            assert_int_equal(fi.candidates, ei.candidates);
            assert_int_equal(ei.costed, ei.candidates);
            if (pass == 0) pruned += fi.costed < fi.candidates;
            compared++;
        }
    }
    uint64_t hits = 0, misses = 0, entries = 0;
    enpu_compile_cache_stats(cache, &hits, &misses, &entries);
    enpu_compile_cache_free(cache);
    assert_true(compared > 300);
    assert_true(pruned > compared / 12); /* the bounds do prune */
    assert_true(entries > 0 && misses > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_fast_equals_exhaustive),
        cmocka_unit_test(test_search_property),
        cmocka_unit_test(test_cost_accounting),
        cmocka_unit_test(test_kws_figures),
        cmocka_unit_test(test_blocks_bands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
