/* Unit tests of the simulator's hardware units (white box: src/sim/easynpu/core.h):
 * the weight pad / op2 circular buffer, the ifmap pad banks, the
 * scheduler's outer-loop cursor (groups, output-channel blocks, kernel row
 * bands, fc), pass registers and weight addresses, the store address runs
 * (masked writes, zero fill, reshape remap), the DTCM bus arbitration
 * (writes win) and the PE -> requantizer -> write pipeline latency, the
 * last two observed cycle by cycle through the engine's test hook. */
#include "testutil.h"

#include "sim/easynpu/core.h"
#include "sim/engine.h"
#include "sim_prog.h"

/* ---- weight pad (circular buffer) --------------------------------------------------- */

static void test_weight_pad_fifo(void **state) {
    (void)state;
    wfifo f;
    enpu_err err = {0};
    assert_int_equal(sim_wfifo_init(&f, 3, 4, &err), 0);
    /* three words in flight, usable at 5, 6, 7 */
    for (int i = 0; i < 3; i++) {
        int8_t *d = sim_wfifo_push(&f, 5 + (uint64_t)i);
        for (int l = 0; l < 4; l++) d[l] = (int8_t)(10 * i + l);
    }
    assert_int_equal(f.count, 3);
    assert_false(sim_wfifo_ready(&f, 0, 4));
    assert_true(sim_wfifo_ready(&f, 0, 5));
    assert_false(sim_wfifo_ready(&f, 1, 5));
    assert_true(sim_wfifo_ready(&f, 2, 7));
    assert_false(sim_wfifo_ready(&f, 3, 100)); /* nothing there */
    /* the head is the group the PEs read (w_och_gcnt); lane i to PE i */
    assert_int_equal(sim_wfifo_at(&f, 0)[2], 2);
    assert_int_equal(sim_wfifo_slot(&f, 0), 0);
    sim_wfifo_pop(&f, 1);
    assert_int_equal(sim_wfifo_slot(&f, 0), 1);
    assert_int_equal(sim_wfifo_at(&f, 0)[3], 13);
    /* the freed slot is refilled at the tail: circular */
    int8_t *d = sim_wfifo_push(&f, 9);
    d[0] = 99;
    assert_int_equal(sim_wfifo_slot(&f, 2), 0);
    sim_wfifo_pop(&f, 2);
    assert_int_equal(sim_wfifo_at(&f, 0)[0], 99);
    assert_true(sim_wfifo_ready(&f, 0, 9));
    sim_wfifo_free(&f);
}

/* ---- ifmap pads ------------------------------------------------------------------------ */

static void test_ifmap_pad_banks(void **state) {
    (void)state;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    ifpad p;
    assert_int_equal(sim_ifpad_init(&p, &a, &err), 0);
    assert_int_equal(p.depth, 64);
    sim_ifpad_reset(&p, true);
    assert_int_equal(p.nbanks, 2);
    assert_int_equal(p.bank_size, 32);
    assert_int_equal(sim_ifpad_bank_of(&p, 0), 0);
    assert_int_equal(sim_ifpad_bank_of(&p, 1), 1);
    assert_int_equal(sim_ifpad_bank_of(&p, 6), 0);
    assert_int_equal(p.bank[1].unit, -1);
    assert_true(p.bank[0].done_at == NEVER);
    sim_ifpad_reset(&p, false);
    assert_int_equal(p.nbanks, 1);
    assert_int_equal(p.bank_size, 64);
    assert_int_equal(sim_ifpad_bank_of(&p, 7), 0);
    sim_ifpad_free(&p);
}

/* ---- decoding a chain and walking its units -------------------------------------------- */

typedef struct decoded {
    tprog t;
    sim_decoder dec;
    sim_mem mem;
    sim_chain c;
} decoded;

static void decode_one(decoded *d, enpu_instr *in) {
    if (!in->tile_x) tp_tile(&d->t, in, 0, 0);
    in->ofmap_addr = enpu_arch_words(&d->t.arch, d->t.arch.main_dtcm_bytes) -
                     enpu_fmap_words(&d->t.arch, in->ho, in->wo, in->co);
    tp_add(&d->t, in, "layer");
    assert_int_equal(tp_finish(&d->t), 0);
    enpu_err err = {0};
    assert_int_equal(sim_decoder_init(&d->dec, &d->t.p, &err), 0);
    assert_int_equal(sim_mem_init(&d->mem, &d->t.arch, false, &err), 0);
    sim_mem_reset(&d->mem, &d->t.p);
    if (sim_decode_chain(&d->dec, &d->t.p, &d->mem, 0, &d->c, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        fail();
    }
}

static void decoded_free(decoded *d) {
    sim_decoder_free(&d->dec);
    sim_mem_free(&d->mem);
    tp_free(&d->t);
}

static void conv_geometry(enpu_instr *in, int64_t op, int64_t hi, int64_t wi, int64_t ci,
                          int64_t co, int64_t k, int64_t pad, int64_t groups) {
    memset(in, 0, sizeof *in);
    in->opcode = op;
    in->hi = hi, in->wi = wi, in->ci = ci, in->co = co, in->hk = in->wk = k, in->groups = groups;
    in->pad_top = in->pad_bottom = in->pad_left = in->pad_right = pad;
    tp_defaults(in);
    in->ho = tp_out_extent(hi, pad, pad, k, 1, 1);
    in->wo = tp_out_extent(wi, pad, pad, k, 1, 1);
    if (op == ENPU_OPC_FC) in->ho = in->wo = 1;
}

static void test_unit_cursor_groups(void **state) {
    (void)state;
    decoded d;
    tp_init(&d.t, "easynpu", 1);
    enpu_instr in;
    /* 2 groups of 20 input channels: group 0 needs words 0-1, group 1
     * words 1-2 (word 1 is loaded once per group) */
    conv_geometry(&in, ENPU_OPC_CONV, 4, 4, 40, 32, 3, 1, 2);
    in.tile_x = 4, in.tile_y = 4;
    in.tile_xi = in.tile_yi = 6;
    in.zs = 1;
    in.rows = 1;
    in.weight_addr = 0;
    decode_one(&d, &in);
    const sim_chain *c = &d.c;
    assert_int_equal(c->G, 2);
    assert_int_equal(c->nblk, 2);
    unit_cur u;
    int64_t want_kz[] = {0, 1, 1, 2}, want_g[] = {0, 0, 1, 1};
    int n = 0;
    for (sim_unit_first(c, &u); !u.done; sim_unit_next(c, &u), n++) {
        assert_true(n < 4);
        assert_int_equal(u.kz, want_kz[n]);
        assert_int_equal(u.g, want_g[n]);
        assert_int_equal(u.tile_first, n % 2 == 0);
        assert_int_equal(u.tile_last, n % 2 == 1);
        /* channels of the word inside the group */
        assert_int_equal(u.c_hi - u.c_lo, n == 0 ? 16 : n == 1 ? 4 : n == 2 ? 12 : 8);
        assert_int_equal(sim_unit_passes(c, &u), (u.c_hi - u.c_lo) * 9);
    }
    assert_int_equal(n, 4);
    assert_int_equal((uint64_t)n, c->n_units);
    decoded_free(&d);
}

static void test_unit_cursor_bands_blocks(void **state) {
    (void)state;
    decoded d;
    tp_init(&d.t, "easynpu", 2);
    enpu_instr in;
    /* 5x3 kernel in bands of 2 rows (2, 2, 1), 40 output channels in blocks
     * of 16 (16, 16, 8) */
    conv_geometry(&in, ENPU_OPC_CONV, 6, 6, 8, 40, 5, 2, 1);
    in.wk = 3;
    in.pad_left = in.pad_right = 1;
    in.band_h = 2;
    in.zs = 1;
    in.tile_x = 6, in.tile_y = 2;
    in.rows = 1;
    in.tile_xi = 8, in.tile_yi = 3;
    decode_one(&d, &in);
    const sim_chain *c = &d.c;
    assert_int_equal(c->nb, 3);
    assert_int_equal(c->nbk, 3);
    unit_cur u;
    int n = 0;
    for (sim_unit_first(c, &u); !u.done; sim_unit_next(c, &u), n++) {
        /* bands innermost */
        assert_int_equal(u.band, n % 3);
        assert_int_equal(u.kh0, 2 * (n % 3));
        assert_int_equal(u.nkh, n % 3 == 2 ? 1 : 2);
        assert_int_equal(u.yi, (u.y - 1) + u.nkh);
        assert_int_equal(u.iy0, u.oy0 - 2 + u.kh0);
        assert_int_equal(u.tile_first, n % 3 == 0);
        assert_int_equal(u.tile_last, n % 3 == 2);
        assert_int_equal(u.k, u.blk);
        assert_int_equal(u.zse, 1);
        /* blocks outermost: 3 tiles x 3 bands per block */
        assert_int_equal(u.blk, n / 9);
        /* weight words of pass 0: row (c, kh0, 0), block offset k*zs */
        pass_info pi;
        sim_pass_info(c, &u, 0, &pi);
        assert_int_equal(pi.kh, u.kh0);
        assert_int_equal(pi.kw, 0);
        assert_int_equal(pi.wbase, c->weight_addr + (u.c_lo * 15 + u.kh0 * 3) * 3 + u.k);
    }
    /* 3 blocks x 3 tiles x 1 word x 3 bands */
    assert_int_equal(n, 27);
    assert_int_equal((uint64_t)n, c->n_units);
    decoded_free(&d);
}

static void test_unit_cursor_fc(void **state) {
    (void)state;
    decoded d;
    tp_init(&d.t, "easynpu", 3);
    enpu_instr in;
    conv_geometry(&in, ENPU_OPC_FC, 2, 3, 20, 30, 1, 0, 1);
    in.weight_addr = 5;
    decode_one(&d, &in);
    const sim_chain *c = &d.c;
    assert_true(c->fc);
    assert_true(c->dbuf);
    unit_cur u;
    int n = 0;
    for (sim_unit_first(c, &u); !u.done; sim_unit_next(c, &u), n++) {
        assert_int_equal(u.kz, n);
        /* words of a 20-channel pixel hold 16 and 4 channels */
        assert_int_equal(sim_unit_passes(c, &u), n % 2 ? 4 : 16);
        pass_info pi;
        sim_pass_info(c, &u, 1, &pi);
        int64_t pix = n / 2, ch = (n % 2) * 16 + 1;
        assert_int_equal(pi.c, ch);
        assert_int_equal(pi.lane, ch % 16);
        assert_int_equal(pi.wbase, 5 + (pix * 20 + ch) * 2);
    }
    assert_int_equal(n, 12);
    decoded_free(&d);
}

/* ---- store address runs ------------------------------------------------------------------ */

static void test_store_runs(void **state) {
    (void)state;
    sim_run r[16];
    /* 12 channels from channel 6 of a 20-channel map: lanes 0-9 to word 0
     * lanes 6-15, lanes 10-11 to word 1 lanes 0-1, zero fill after channel 19?
     * (no: 6+12 = 18 < 20) */
    int n = sim_runs_direct(16, 100, 2, 5, 20, 1, 2, 6, 12, r);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].addr, 100 + (1 * 5 + 2) * 2);
    assert_int_equal(r[0].src, 0);
    assert_int_equal(r[0].dst, 6);
    assert_int_equal(r[0].len, 10);
    assert_int_equal(r[0].zfill, 0);
    assert_int_equal(r[1].addr, 100 + (1 * 5 + 2) * 2 + 1);
    assert_int_equal(r[1].dst, 0);
    assert_int_equal(r[1].len, 2);
    assert_int_equal(r[1].zfill, 0);
    /* the last channel of a partial word zero-fills the rest of it */
    n = sim_runs_direct(16, 0, 2, 1, 20, 0, 0, 16, 4, r);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].zfill, 1);
    /* concat at store: a stride of 5 words per pixel, word offset in base */
    n = sim_runs_direct(16, 10 + 3, 5, 4, 16, 1, 1, 0, 16, r);
    assert_int_equal(r[0].addr, 13 + 5 * 5);
    /* reshape remap chw of a 2x3x4 map into 1x1x24: lane i of pixel (h,w)
     * lands at element (c*2 + h)*3 + w: four separate runs */
    decoded d;
    tp_init(&d.t, "easynpu", 4);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_RESHAPE;
    in.hi = 2, in.wi = 3, in.ci = 4, in.ho = in.wo = 1, in.co = 24, in.perm = ENPU_PERM_CHW;
    tp_defaults(&in);
    decode_one(&d, &in);
    n = sim_runs_remap(&d.c, 16, 0, 2, 1, 2, 0, 4, r);
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        int64_t k = (i * 2 + 1) * 3 + 2;
        assert_int_equal(r[i].addr, k / 16);
        assert_int_equal(r[i].dst, k % 16);
        assert_int_equal(r[i].len, 1);
        assert_int_equal(r[i].zfill, k == 23);
    }
    /* hwc of the same map: the 4 lanes are consecutive elements */
    d.c.rs_perm = ENPU_PERM_HWC;
    n = sim_runs_remap(&d.c, 16, 0, 2, 0, 1, 0, 4, r);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].dst, 4);
    assert_int_equal(r[0].len, 4);
    decoded_free(&d);
}

/* ---- cycle-level observation through the engine's test hook ------------------------------ */

typedef struct obs {
    uint64_t cycles, writes, conflicts, first_issue, first_write, op2_reads, loads;
    int violations;
} obs;

static void hook(void *ctx, uint64_t t, const void *engine) {
    const sim_signals *s = &((const core *)engine)->sig;
    obs *o = ctx;
    o->cycles++;
    int used = s->of_ready + s->if_ready + s->op2_ready;
    if (used > 1) o->violations++;                         /* one access per cycle */
    if (s->of_valid && !s->of_ready) o->violations++;      /* a ready write always goes */
    if (s->of_valid && (s->if_ready || s->op2_ready)) o->violations++; /* writes win */
    if (s->if_valid && !s->of_valid && !s->op2_ready && !s->if_ready) o->violations++;
    if (s->op2_valid && !s->of_valid && !s->op2_ready) o->violations++;
    if (s->of_ready) o->writes++;
    if (s->if_valid && !s->if_ready) o->conflicts++;
    if (s->op2_ready) o->op2_reads++;
    if (s->if_ready) o->loads++;
    if (s->pe_valid && !o->first_issue) o->first_issue = t;
    if (s->of_ready && !o->first_write) o->first_write = t;
}

static int run_observed(tprog *t, obs *o, const int8_t *x, enpu_sim_result *res) {
    enpu_sim_opts op = {0};
    op.check = true;
    enpu_sim *sim = NULL;
    enpu_err err = {0};
    int rc = enpu_sim_new(&t->p, &t->arch, &op, &sim, &err);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return rc;
    }
    memset(o, 0, sizeof *o);
    sim->cycle_hook = hook;
    sim->hook_ctx = o;
    const int8_t *ins[1] = {x};
    rc = enpu_sim_run_i8(sim, ins, 1, res, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    enpu_sim_free(sim);
    return rc;
}

/* A standalone add with its second operand in the main DTCM: ofmap writes,
 * op2 reads and ifmap loads all want the one bus. */
static void test_bus_arbitration(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 5);
    int64_t H = 8, W = 8, C = 32, words = H * W * 2;
    int8_t *x = malloc((size_t)(H * W * C)), *op2 = malloc((size_t)(H * W * C));
    for (int64_t i = 0; i < H * W * C; i++) x[i] = (int8_t)(i * 7), op2[i] = (int8_t)(i * 3);
    tp_init_tensor(&t, 0, words + 4, op2, H, W, C);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_ADD;
    in.hi = in.ho = H, in.wi = in.wo = W, in.ci = in.co = C;
    tp_defaults(&in);
    in.in1_mult = 3, in.in2_mult = 5, in.out_mult = 1, in.out_shift = 3;
    in.op2_addr = words + 4;
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = enpu_arch_words(&t.arch, t.arch.main_dtcm_bytes) - words;
    tp_add(&t, &in, "add");
    tp_io(&t, ENPU_IO_INPUT, "x", H, W, C, 0, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    obs o;
    enpu_sim_result res;
    int8_t *xc = malloc((size_t)(H * W * C));
    tp_hwc_to_chw(x, xc, H, W, C);
    assert_int_equal(run_observed(&t, &o, xc, &res), 0);
    assert_true(res.bit_exact);
    assert_int_equal(o.violations, 0);
    /* every word went over the bus exactly once */
    assert_int_equal(o.writes, (uint64_t)words);
    assert_int_equal(o.op2_reads, (uint64_t)words);
    assert_int_equal(o.loads, (uint64_t)words);
    assert_int_equal(res.layers[0].reads[ENPU_MEM_MAIN_DTCM], (uint64_t)(2 * words));
    assert_int_equal(res.layers[0].writes[ENPU_MEM_MAIN_DTCM], (uint64_t)words);
    /* loads lost cycles to writes and op2 reads, and some of them made the
     * PE array wait: bus_conflict */
    assert_true(o.conflicts > 0);
    assert_true(res.layers[0].activity[ENPU_ACT_BUS_CONFLICT] > 0);
    /* the bus is the bottleneck: 3 words per output word */
    assert_true(res.layers[0].cycles >= (uint64_t)(3 * words));
    enpu_sim_result_free(&res);
    free(x), free(op2), free(xc);
    tp_free(&t);
}

/* The requantized word of a final pass reaches the bus D + Rq cycles after
 * the MAC issues (docs/microarch.md §11.8). */
static void run_pipeline(const char *arch, int D, int Rq) {
    tprog t;
    tp_init(&t, arch, 6);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_RELU;
    in.hi = in.ho = in.wi = in.wo = 1, in.ci = in.co = 16;
    tp_defaults(&in);
    in.out_mult = 1;
    in.clamp_lo = 0;
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = 10;
    tp_add(&t, &in, "relu");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(i * 9 - 70);
    obs o;
    enpu_sim_result res;
    assert_int_equal(run_observed(&t, &o, x, &res), 0);
    assert_true(o.first_issue > 0);
    assert_int_equal(o.first_write - o.first_issue, (uint64_t)(D + Rq));
    assert_int_equal(res.layers[0].activity[ENPU_ACT_PIPELINE_DRAIN], (uint64_t)(D + Rq));
    assert_int_equal(res.layers[0].activity[ENPU_ACT_COMPUTE], 1);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

static void test_psum_requant_pipeline(void **state) {
    (void)state;
    run_pipeline("easynpu", 2, 2);
    run_pipeline("{\"base\":\"easynpu\",\"pe_pipeline_depth\":5,\"requant_latency\":0}", 5, 0);
    run_pipeline("{\"base\":\"easynpu\",\"pe_pipeline_depth\":1,\"requant_latency\":7}", 1, 7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weight_pad_fifo),
        cmocka_unit_test(test_ifmap_pad_banks),
        cmocka_unit_test(test_unit_cursor_groups),
        cmocka_unit_test(test_unit_cursor_bands_blocks),
        cmocka_unit_test(test_unit_cursor_fc),
        cmocka_unit_test(test_store_runs),
        cmocka_unit_test(test_bus_arbitration),
        cmocka_unit_test(test_psum_requant_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
