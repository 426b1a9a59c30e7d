/* The simulator's off-chip side (docs/microarch.md §13): DRAM channel,
 * DMA engines, dependency tokens, instruction prefetch, cycle attribution,
 * races, data in DRAM.  Every program is assembled by hand; its cycles are
 * derived by hand from §13 in the comments and asserted exactly.  Each run
 * is also checked against the compiler's schedule model of the same program
 * (enpu_model_program: per instruction and activity, DRAM words), and
 * against a run that evaluates every unit in every cycle (the cycle engine
 * skips the cycles where it knows nothing can happen).
 *
 * Unless a test says otherwise the arch is `easynpu`: F = 4, Dc = 1, words
 * of 16 bytes, 8 DRAM bytes per cycle (so a burst of b bytes is served in
 * ceil(b/8) cycles), 64-byte bursts, latency 30, 8 banks of 2048-byte rows,
 * a row miss costs 4, 2 engines with queues of 4.  Relu on one word (a
 * chain of 6 cycles from t0: read at t0, MAC at t0+1, write at t0+5, as in
 * test_sim_cycles.c) is the compute instruction of most programs. */
#include "testutil.h"

#include <jansson.h>

#include "easynpu/compiler.h"
#include "report/sim_report.h"
#include "sim/engine.h"
#include "sim_prog.h"

enum { Q_COMPUTE = 1, Q_DMA0 = 2, Q_DMA1 = 4 }; /* token mask bits */

/* The host CPU's own time (hostcpu_*, docs/microarch.md §13.11) zeroed: the
 * cases below time the sync's handover and tokens to the cycle; the host
 * op's time is tested in test_sim_cycles.c and by test_random_vs_model. */
#define NO_HOST_TIME                                                                               \
    "\"hostcpu_op_cycles\":0,\"hostcpu_cvt_cycles\":0,\"hostcpu_move_cycles\":0,"                  \
    "\"hostcpu_arith_cycles\":0,\"hostcpu_transc_cycles\":0,\"hostcpu_mac_cycles\":0"
#define EASYNPU_NO_HOST_TIME "{\"base\":\"easynpu\"," NO_HOST_TIME "}"

static enpu_instr relu_word(int64_t in_addr, int64_t out_addr) {
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_RELU;
    in.hi = in.ho = in.wi = in.wo = 1, in.ci = in.co = 16;
    tp_defaults(&in);
    in.out_mult = 1;
    in.clamp_lo = 0;
    in.tile_x = in.tile_y = in.tile_xi = in.tile_yi = in.zs = in.rows = 1;
    in.ifmap_addr = in_addr;
    in.ofmap_addr = out_addr;
    return in;
}

/* ---- running, with the two cross-checks ------------------------------------------------ */

static int n_callbacks, cb_layer[16];

static int count_layers(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim,
                        enpu_err *err) {
    (void)ctx, (void)st, (void)sim, (void)err;
    if (n_callbacks < 16) cb_layer[n_callbacks] = layer;
    n_callbacks++;
    return 0;
}

static void same_rows(const enpu_sim_result *a, const enpu_sim_result *b) {
    assert_int_equal(a->total_cycles, b->total_cycles);
    for (int i = 0; i < a->n_layers; i++) {
        for (int k = 0; k < ENPU_ACT_COUNT; k++)
            assert_int_equal(a->layers[i].activity[k], b->layers[i].activity[k]);
        for (int m = 0; m < ENPU_MEM_COUNT; m++) {
            assert_int_equal(a->layers[i].reads[m], b->layers[i].reads[m]);
            assert_int_equal(a->layers[i].writes[m], b->layers[i].writes[m]);
        }
    }
}

/* The compiler's schedule model of the program equals the simulation, per
 * instruction and per activity, and in DRAM words. */
static void same_as_model(const enpu_program *p, const enpu_sim_result *r) {
    int n = p->n_instr;
    int64_t *act = calloc((size_t)n * ENPU_ACT_COUNT, sizeof *act);
    int64_t *rd = calloc((size_t)n, sizeof *rd), *wr = calloc((size_t)n, sizeof *wr);
    assert_non_null(act);
    int64_t total = enpu_model_program(p, act, rd, wr);
    bool same = total == (int64_t)r->total_cycles;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < ENPU_ACT_COUNT; k++)
            if (act[i * ENPU_ACT_COUNT + k] != (int64_t)r->layers[i].activity[k]) {
                fprintf(stderr, "model: instruction %d %s: model %lld, simulator %llu\n", i,
                        enpu_activity_name((enpu_activity)k), (long long)act[i * ENPU_ACT_COUNT + k],
                        (unsigned long long)r->layers[i].activity[k]);
                same = false;
            }
        if (rd[i] != (int64_t)r->layers[i].reads[ENPU_MEM_OFFCHIP] ||
            wr[i] != (int64_t)r->layers[i].writes[ENPU_MEM_OFFCHIP]) {
            fprintf(stderr, "model: instruction %d: DRAM words %lld/%lld, simulator %llu/%llu\n", i,
                    (long long)rd[i], (long long)wr[i],
                    (unsigned long long)r->layers[i].reads[ENPU_MEM_OFFCHIP],
                    (unsigned long long)r->layers[i].writes[ENPU_MEM_OFFCHIP]);
            same = false;
        }
    }
    if (total != (int64_t)r->total_cycles)
        fprintf(stderr, "model: %lld cycles, simulator %llu\n", (long long)total,
                (unsigned long long)r->total_cycles);
    free(act), free(rd), free(wr);
    if (!same) {
        char *l = enpu_program_disasm(p, &(enpu_err){0});
        fprintf(stderr, "program:\n%s\n", l ? l : "?");
        free(l);
    }
    assert_true(same);
}

/* Runs t in cycle mode (with the functional replay check and the layer
 * callback) on the int8 inputs, cross-checks, and leaves the result in res;
 * the output descriptor out_io is read into y (n elements) when y != NULL. */
static void run_cycle(tprog *t, const int8_t *const *ins, int n_in, enpu_sim_result *res, int out_io,
                      int8_t *y, int64_t n) {
    enpu_err err = {0};
    enpu_sim_result again;
    for (int pass = 0; pass < 2; pass++) {
        enpu_sim_opts o = {0};
        o.check = true;
        o.on_layer = count_layers;
        enpu_sim *sim = NULL;
        if (enpu_sim_new(&t->p, &t->arch, &o, &sim, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            fail();
        }
        sim->step_every_cycle = pass == 1;
        n_callbacks = 0;
        if (enpu_sim_run_i8(sim, ins, n_in, pass ? &again : res, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            fail();
        }
        if (pass == 0 && y) assert_int_equal(enpu_sim_read_tensor(sim, &t->p.io[out_io], y, n, &err), 0);
        enpu_sim_free(sim);
    }
    same_rows(res, &again);
    enpu_sim_result_free(&again);
    same_as_model(&t->p, res);
    uint64_t sum = 0;
    for (int i = 0; i < res->n_layers; i++) sum += res->layers[i].cycles;
    assert_int_equal(sum, res->total_cycles);
}

/* The same program in functional mode: the output descriptor's values. */
static void run_functional(tprog *t, const int8_t *const *ins, int n_in, int out_io, int8_t *y,
                           int64_t n) {
    enpu_err err = {0};
    enpu_sim_opts o = {0};
    o.mode = ENPU_SIM_FUNCTIONAL;
    o.on_layer = count_layers;
    enpu_sim *sim = NULL;
    enpu_sim_result res;
    assert_int_equal(enpu_sim_new(&t->p, &t->arch, &o, &sim, &err), 0);
    n_callbacks = 0;
    if (enpu_sim_run_i8(sim, ins, n_in, &res, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        fail();
    }
    assert_int_equal(enpu_sim_read_tensor(sim, &t->p.io[out_io], y, n, &err), 0);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
}

static void expect(const enpu_layer_stats *l, uint64_t ctrl, uint64_t wait, uint64_t other) {
    assert_int_equal(l->activity[ENPU_ACT_CONTROLLER], ctrl);
    assert_int_equal(l->activity[ENPU_ACT_DMA_WAIT], wait);
    assert_int_equal(l->cycles, ctrl + wait + other);
}

/* An int8 descriptor of n elements (rank 2, [1][n]) in memory mem at addr. */
static int flat_io(tprog *t, enpu_io_dir dir, const char *name, int64_t n, int mem, int64_t addr) {
    enpu_io_desc d = {0};
    d.name = (char *)name;
    d.dir = dir;
    d.dtype = ENPU_DT_INT8;
    d.layout = ENPU_LAYOUT_ANY;
    d.rank = 2;
    d.dims[0] = 1, d.dims[1] = n;
    d.scale = 0.5f;
    d.mem = mem;
    d.addr = (uint32_t)addr;
    return tp_add_io(t, &d);
}

/* ---- one load: bursts, bandwidth, latency, row misses, banks ----------------------------- */

/* A load of 8 words (128 bytes) from DRAM word 0 into main word 32:
 * dma fetched 0-3, decoded 4, in its queue from 5; it starts at 5 and its
 * first burst (bytes 0-63: bank 0, row 0, no row open: a miss) is served in
 * 5-16 (8 + 4 cycles); the second (bytes 64-127, the open row) in 17-24;
 * data in place at 25 + 30 = 55, the completion.  `end` (fetched 4-7,
 * decoded 8) waits 9-54 for the engine: 55 cycles. */
static void test_single_load(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 1);
    uint8_t img[128];
    for (int i = 0; i < 128; i++) img[i] = (uint8_t)(i * 3 + 1);
    tp_dram_put(&t, 0, img, 128);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 0, 32, 1, 8, 0, 0, 0, 0);
    tp_add(&t, &ld, "ld");
    int out = flat_io(&t, ENPU_IO_OUTPUT, "y", 128, ENPU_MEM_MAIN, 32);
    assert_int_equal(tp_finish(&t), 0);
    enpu_sim_result res;
    int8_t y[128];
    run_cycle(&t, NULL, 0, &res, out, y, 128);
    assert_int_equal(res.total_cycles, 55);
    expect(&res.layers[0], 5, 0, 0);
    expect(&res.layers[1], 4, 46, 0);
    assert_int_equal(res.layers[0].reads[ENPU_MEM_OFFCHIP], 8);
    assert_int_equal(res.layers[0].writes[ENPU_MEM_MAIN_DTCM], 8);
    for (int i = 0; i < 128; i++) assert_int_equal((uint8_t)y[i], img[i]);
    enpu_sim_result_free(&res);
    tp_free(&t);
}


/* Bursts are cut at multiples of 64 bytes of DRAM, the row of a bank is
 * per bank, and the service rate is min(bytes per cycle, word): arch with
 * 32 bytes per cycle (so 16, the word) and 1-cycle row misses.  Two rows of
 * 3 words (48 bytes): row 0 at DRAM word 2 (bytes 32-79: bursts 32-63 and
 * 64-79, bank 0, row 0), row 1 at word 1026 (bytes 16416-16463: bank 0 again
 * (16416 / 2048 mod 8 = 0) but DRAM row 1: bursts 16416-16447, 16448-16463).
 * Start 5: burst 32 B miss 2 + 1 = 3 (5-7), 16 B hit 1 (8), 32 B miss (other
 * row of bank 0) 3 (9-11), 16 B hit 1 (12): data in place 13 + 30 = 43. */
static void test_bursts_banks(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "{\"base\":\"easynpu\",\"dram_bytes_per_cycle\":32,\"dram_row_miss_cycles\":1}", 2);
    uint8_t img[48];
    for (int i = 0; i < 48; i++) img[i] = (uint8_t)(200 - i);
    tp_dram_put(&t, 2, img, 48);
    tp_dram_put(&t, 1026, img, 48);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_SKIP, 2, 7, 2, 3, 1024, 5, 0, 0);
    tp_add(&t, &ld, "ld");
    assert_int_equal(tp_finish(&t), 0);
    enpu_sim_result res;
    run_cycle(&t, NULL, 0, &res, 0, NULL, 0);
    assert_int_equal(res.total_cycles, 43);
    expect(&res.layers[1], 4, 34, 0);
    assert_int_equal(res.layers[0].reads[ENPU_MEM_OFFCHIP], 6);
    assert_int_equal(res.layers[0].writes[ENPU_MEM_SKIP_DTCM], 6);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* Two loads on two engines share the channel round-robin: A (engine 0,
 * DRAM bytes 0-127, bank 0) decoded at 4 starts at 5; B (engine 1, bytes
 * 2048-2175, bank 1) decoded at 8 starts at 9.  Grants: A0 at 5 (miss, 12:
 * 5-16), B0 at 17 (after engine 0: miss, 17-28), A1 at 29 (hit, 8: 29-36,
 * data at 67), B1 at 37 (hit, 37-44, data at 75).  `end` (fetched 8-11,
 * decoded 12) waits 13-74: 75 cycles. */
static void test_round_robin(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 3);
    enpu_instr a = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 0, 0, 1, 8, 0, 0, 0, 0);
    enpu_instr b = tp_dma(1, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 128, 8, 1, 8, 0, 0, 0, 0);
    tp_add(&t, &a, "a");
    tp_add(&t, &b, "b");
    assert_int_equal(tp_finish(&t), 0);
    enpu_sim_result res;
    run_cycle(&t, NULL, 0, &res, 0, NULL, 0);
    assert_int_equal(res.total_cycles, 75);
    expect(&res.layers[0], 5, 0, 0);
    expect(&res.layers[1], 4, 0, 0);
    expect(&res.layers[2], 4, 62, 0);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* One engine with a queue of one command: three one-burst loads.  A decoded
 * at 4 completes at 5 + 12 + 30 = 47; B, fetched by 8, waits 8-46 for the
 * slot (dma_wait of B), is decoded at 47, starts at 48 (open row: 8 cycles)
 * and completes at 86; C, fetched 48-50, waits 51-85 and is decoded at 86,
 * completes at 87 + 8 + 30 = 125; `end` (fetched 87-89, decoded 90) waits
 * 91-124: 125 cycles. */
static void test_queue_full(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "{\"base\":\"easynpu\",\"dma_engines\":1,\"dma_queue_depth\":1}", 4);
    for (int i = 0; i < 3; i++) {
        enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 4 * i, 4 * i, 1, 4, 0, 0, 0, 0);
        tp_add(&t, &ld, i == 0 ? "a" : i == 1 ? "b" : "c");
    }
    assert_int_equal(tp_finish(&t), 0);
    enpu_sim_result res;
    run_cycle(&t, NULL, 0, &res, 0, NULL, 0);
    assert_int_equal(res.total_cycles, 125);
    expect(&res.layers[0], 5, 0, 0);
    expect(&res.layers[1], 4, 39, 0);
    expect(&res.layers[2], 4, 35, 0);
    expect(&res.layers[3], 4, 34, 0);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* Load -> relu -> store with tokens, the input and the output in DRAM.
 * The load (1 word, 16 bytes: 2 + 4 cycles from 5, data at 41) pushes a
 * token to the compute queue; relu, decoded at 8, waits 9-40 (dma_wait)
 * and runs 41-46 (read 41, MAC 42, write 46); it completes at 47 and sends
 * a token to engine 0, where the store (decoded at 12 during relu's wait)
 * starts at 47 (bank 0's open row: 2 cycles, data at 79).  `end`, fetched
 * 12-15, is decoded at 47 (the datapath is free) and waits 48-78: 79
 * cycles. */
static int build_load_compute_store(tprog *t) {
    tp_init(t, "easynpu", 5);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 20, 0, 1, 1, 0, 0, Q_COMPUTE, 0);
    enpu_instr r = relu_word(0, 10);
    r.pop = Q_DMA0;
    r.push = Q_DMA0;
    enpu_instr st = tp_dma(0, ENPU_DMA_STORE, ENPU_MEM_MAIN, 100, 10, 1, 1, 0, 0, 0, Q_COMPUTE);
    tp_add(t, &ld, "ld");
    tp_add(t, &r, "relu");
    tp_add(t, &st, "st");
    flat_io(t, ENPU_IO_INPUT, "x", 16, ENPU_MEM_DRAM, 20);
    int out = flat_io(t, ENPU_IO_OUTPUT, "y", 16, ENPU_MEM_DRAM, 100);
    assert_int_equal(enpu_program_set_layer_output(&t->p, 2, "y", out, &(enpu_err){0}), 0);
    assert_int_equal(tp_finish(t), 0);
    return out;
}

static void test_load_compute_store(void **state) {
    (void)state;
    tprog t;
    int out = build_load_compute_store(&t);
    int8_t x[16], y[16], yf[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(i * 9 - 70);
    const int8_t *ins[1] = {x};
    enpu_sim_result res;
    run_cycle(&t, ins, 1, &res, out, y, 16);
    assert_int_equal(n_callbacks, 2); /* relu, then the store naming 'y' */
    assert_int_equal(cb_layer[0], 1);
    assert_int_equal(cb_layer[1], 2);
    assert_int_equal(res.total_cycles, 79);
    expect(&res.layers[0], 5, 0, 0);
    expect(&res.layers[1], 4, 32, 6);
    assert_int_equal(res.layers[1].activity[ENPU_ACT_COMPUTE], 1);
    expect(&res.layers[2], 0, 0, 0);
    expect(&res.layers[3], 1, 31, 0);
    assert_int_equal(res.layers[2].writes[ENPU_MEM_OFFCHIP], 1);
    assert_int_equal(res.layers[2].reads[ENPU_MEM_MAIN_DTCM], 1);
    for (int i = 0; i < 16; i++) assert_int_equal(y[i], x[i] > 0 ? x[i] : 0);
    assert_int_equal(res.n_outputs, 1);
    for (int i = 0; i < 16; i++) assert_int_equal(((int8_t *)res.raw_outputs[0].data)[i], y[i]);
    run_functional(&t, ins, 1, out, yf, 16);
    assert_int_equal(n_callbacks, 2);
    assert_memory_equal(y, yf, 16);
    /* the text table has a dma_wait column for a run that used the DRAM */
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    assert_non_null(f);
    enpu_report_sim_table(f, &t.arch, &res);
    fclose(f);
    assert_non_null(strstr(txt, "  dmawait"));
    assert_non_null(strstr(txt, " dram 1/1 "));
    free(txt);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* A program of 3 instructions on an ITCM of 2 is fetched from DRAM
 * (instruction i at bytes 64i..64i+63, one burst each).  The prefetcher:
 * instruction 0 granted at 0 (miss, 12 cycles: in the ITCM at 42), 1 at 12
 * (hit: at 50); 2 only once 0 has left the ITCM (its fetch 42-45): granted
 * at 46, in the ITCM at 84.  relu 1 is fetched 42-45, decoded 46, runs
 * 47-52; relu 2 fetched 50-53, decoded 54, runs 55-60; `end` fetched 84-87,
 * decoded 88: 89 cycles. */
static void test_long_program(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "{\"base\":\"easynpu\",\"itcm_bytes\":128}", 6);
    enpu_instr a = relu_word(0, 10), b = relu_word(10, 20);
    b.clamp_lo = -128;
    tp_add(&t, &a, "r1");
    tp_add(&t, &b, "r2");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
    int out = tp_io(&t, ENPU_IO_OUTPUT, "y", 1, 1, 16, 20, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    assert_int_equal(enpu_program_dram_instr_words(&t.p), 12);
    int8_t x[16], y[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(i * 9 - 70);
    const int8_t *ins[1] = {x};
    enpu_sim_result res;
    run_cycle(&t, ins, 1, &res, out, y, 16);
    assert_int_equal(res.total_cycles, 89);
    expect(&res.layers[0], 47, 0, 6);
    expect(&res.layers[1], 2, 0, 6);
    expect(&res.layers[2], 28, 0, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(res.layers[i].reads[ENPU_MEM_OFFCHIP], 4);
        assert_int_equal(res.layers[i].reads[ENPU_MEM_ITCM], 4);
    }
    for (int i = 0; i < 16; i++) assert_int_equal(y[i], x[i] > 0 ? x[i] : 0);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* A strided 2-D load and a store of the same words with other strides.
 * Load (engine 0): 3 rows of 2 words from DRAM word 1, stride 5 (bytes
 * 16-47, 96-127, 176-207) into main words 0, 3, 6 (stride 3).  Bursts: 16-47
 * (32 B, miss: 4 + 4, cycles 5-12), 96-127 (4: 13-16), 176-191 (2: 17-18),
 * 192-207 (cut at 192: 19-20); data at 21 + 30 = 51, a token to engine 1.
 * Store (engine 1, decoded at 8): the same words, 3 rows of 2 from main
 * stride 3, into DRAM word 200 stride 2 (bytes 3200-3295, bank 1: the
 * first burst misses); it starts at 51: 32 B bursts at 51-58, 59-62, 63-66,
 * data at 97.  `end` waits 13-96: 97 cycles. */
static void test_strided(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 7);
    uint8_t src[3][32];
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 32; i++) {
            src[r][i] = (uint8_t)(r * 50 + i * 7 + 3);
        }
    for (int r = 0; r < 3; r++) tp_dram_put(&t, 1 + 5 * r, src[r], 32);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 1, 0, 3, 2, 5, 3, Q_DMA1, 0);
    enpu_instr st = tp_dma(1, ENPU_DMA_STORE, ENPU_MEM_MAIN, 200, 0, 3, 2, 2, 3, 0, Q_DMA0);
    tp_add(&t, &ld, "ld");
    tp_add(&t, &st, "st");
    int out = flat_io(&t, ENPU_IO_OUTPUT, "y", 96, ENPU_MEM_DRAM, 200);
    assert_int_equal(tp_finish(&t), 0);
    enpu_sim_result res;
    int8_t y[96], yf[96];
    run_cycle(&t, NULL, 0, &res, out, y, 96);
    assert_int_equal(res.total_cycles, 97);
    expect(&res.layers[0], 5, 0, 0);
    expect(&res.layers[1], 4, 0, 0);
    expect(&res.layers[2], 4, 84, 0);
    assert_int_equal(res.layers[0].reads[ENPU_MEM_OFFCHIP], 6);
    assert_int_equal(res.layers[1].writes[ENPU_MEM_OFFCHIP], 6);
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 32; i++) assert_int_equal((uint8_t)y[r * 32 + i], src[r][i]);
    run_functional(&t, NULL, 0, out, yf, 96);
    assert_memory_equal(y, yf, 96);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* A conv whose weights, biases and requantization parameters arrive by DMA
 * into weight memory (the program's WEIGHTS image is zero there): 28 words
 * (448 bytes: 7 bursts) from DRAM word 64, bank 0: a miss (5-16) and six
 * hits of 8 (17-64), data at 95.  The conv, decoded at 8, waits 9-94 and
 * runs 95-127 (as test_sim_cycles.c: fill 13, compute 16, drain 4); `end`
 * (fetched 8-11) is decoded at 128: 129 cycles.  The functional replay
 * check (opts.check) sees the loaded weights too. */
static void test_weights_by_dma(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 8);
    enpu_instr c = {0};
    c.opcode = ENPU_OPC_CONV;
    c.hi = c.ho = c.wi = c.wo = 1, c.ci = c.co = 16;
    tp_defaults(&c);
    int8_t w[256];
    int32_t bias[16];
    uint32_t M[16];
    int8_t S[16];
    for (int i = 0; i < 256; i++) w[i] = (int8_t)(i % 13 - 6);
    for (int i = 0; i < 16; i++) bias[i] = i * 10 - 40, M[i] = 1 << 19, S[i] = 22;
    tp_conv_weights(&t, &c, w);
    tp_params(&t, &c, bias, M, S);
    assert_int_equal(t.wwords, 28);
    tp_dram_put(&t, 64, t.w, 28 * 16);
    memset(t.w, 0, 28 * 16);
    tp_tile(&t, &c, 0, 0);
    c.ofmap_addr = 10;
    c.pop = Q_DMA0;
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_WEIGHT, 64, 0, 1, 28, 0, 0, Q_COMPUTE, 0);
    tp_add(&t, &ld, "ld");
    tp_add(&t, &c, "conv");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
    int out = tp_io(&t, ENPU_IO_OUTPUT, "y", 1, 1, 16, 10, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[16], y[16], yf[16], want[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(5 * i - 40);
    ref_conv(&c, x, w, bias, M, S, want);
    const int8_t *ins[1] = {x};
    enpu_sim_result res;
    run_cycle(&t, ins, 1, &res, out, y, 16);
    assert_true(res.bit_exact);
    assert_int_equal(res.total_cycles, 129);
    expect(&res.layers[0], 5, 0, 0);
    expect(&res.layers[1], 4, 86, 33);
    assert_int_equal(res.layers[1].activity[ENPU_ACT_PIPELINE_FILL], 13);
    expect(&res.layers[2], 1, 0, 0);
    assert_int_equal(res.layers[0].writes[ENPU_MEM_WEIGHT_MEM], 28);
    assert_memory_equal(y, want, 16);
    run_functional(&t, ins, 1, out, yf, 16);
    assert_memory_equal(yf, want, 16);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* A host op reads its input from DRAM and writes its int8 output to DRAM;
 * a load then brings that output on chip.  sync decoded at 4 runs 5-20; its
 * host op (a float Relu) runs at 21 and sends a token to engine 0, where the
 * load (decoded at 8, during the sync: the sync's cycles) starts at 21: 16
 * bytes of bank 0 (miss, 6 cycles), data at 57; `end`, decoded at 21, waits
 * 22-56: 57 cycles. */
static void test_hostop_dram(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, EASYNPU_NO_HOST_TIME, 9);
    enpu_instr s = {0};
    s.opcode = ENPU_OPC_SYNC;
    s.push = Q_DMA0;
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 20, 0, 1, 1, 0, 0, 0, Q_COMPUTE);
    tp_add(&t, &s, "host");
    tp_add(&t, &ld, "ld");
    int in = flat_io(&t, ENPU_IO_INPUT, "x", 16, ENPU_MEM_DRAM, 10);
    int h = flat_io(&t, ENPU_IO_HOST, "h", 16, ENPU_MEM_DRAM, 20);
    int out = flat_io(&t, ENPU_IO_OUTPUT, "y", 16, ENPU_MEM_MAIN, 0);
    enpu_hostop op = {0};
    op.kind = "Relu";
    op.name = "relu_host";
    op.n_in = op.n_out = 1;
    op.io[0] = in, op.io[1] = h;
    enpu_err err = {0};
    assert_int_equal(enpu_program_add_hostop(&t.p, &op, &err), 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[16], y[16], yf[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(i * 13 - 100);
    const int8_t *ins[1] = {x};
    enpu_sim_result res;
    run_cycle(&t, ins, 1, &res, out, y, 16);
    assert_int_equal(res.total_cycles, 57);
    expect(&res.layers[0], 21, 0, 0);
    assert_true(res.layers[0].host);
    expect(&res.layers[1], 0, 0, 0);
    expect(&res.layers[2], 1, 35, 0);
    for (int i = 0; i < 16; i++) assert_int_equal(y[i], x[i] > 0 ? x[i] : 0);
    run_functional(&t, ins, 1, out, yf, 16);
    assert_memory_equal(y, yf, 16);
    /* the host's tensor, read from DRAM */
    enpu_sim *sim = NULL;
    assert_int_equal(enpu_sim_new(&t.p, &t.arch, NULL, &sim, &err), 0);
    enpu_sim_result r2;
    assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &r2, &err), 0);
    int8_t hv[16];
    assert_int_equal(enpu_sim_read_tensor(sim, &t.p.io[h], hv, 16, &err), 0);
    assert_memory_equal(hv, y, 16);
    int64_t bytes = 0;
    const uint8_t *dram = enpu_sim_memory(sim, ENPU_MEM_DRAM, &bytes);
    assert_non_null(dram);
    assert_int_equal(bytes, 21 * 16); /* the footprint: up to the tensor at word 20 */
    assert_memory_equal(dram + 10 * 16, x, 16);
    enpu_sim_result_free(&r2);
    enpu_sim_free(sim);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* ---- races (§13.4): each refused with both instructions, the memory, the
 * words and the cycle ------------------------------------------------------------------ */

static void expect_race(tprog *t, const char *want) {
    enpu_err err = {0};
    enpu_sim *sim = NULL;
    assert_int_equal(enpu_sim_new(&t->p, &t->arch, NULL, &sim, &err), 0);
    int8_t x[48] = {0};
    const int8_t *ins[1] = {x};
    int n_in = 0;
    for (int i = 0; i < t->p.n_io; i++) n_in += t->p.io[i].dir == ENPU_IO_INPUT;
    enpu_sim_result res;
    int rc = enpu_sim_run_i8(sim, ins, n_in, &res, &err);
    if (rc != ENPU_E_INVALID || strcmp(err.msg, want) != 0)
        fprintf(stderr, "got %d: %s\nwant: %s\n", rc, err.msg, want);
    assert_int_equal(rc, ENPU_E_INVALID);
    assert_string_equal(err.msg, want);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
}

/* A chain reads words a load in flight writes: the load (started at 5,
 * data at 41) pushes no token, relu (decoded at 8) starts at 9. */
static void test_race_chain_vs_load(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 10);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 0, 0, 1, 1, 0, 0, 0, 0);
    enpu_instr r = relu_word(0, 10);
    tp_add(&t, &ld, "ld");
    tp_add(&t, &r, "r");
    assert_int_equal(tp_finish(&t), 0);
    expect_race(&t, "program race: instruction 1 (relu 'r') reads main DTCM words 0..0 at cycle 9 "
                    "while instruction 0 (dma 'ld', in flight since cycle 5) writes them; the "
                    "dependency tokens must order the two");
    tp_free(&t);
}

/* A load starts (at 9) into the words the executing chain (5-10) writes. */
static void test_race_load_vs_chain(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 11);
    enpu_instr r = relu_word(0, 10);
    enpu_instr ld = tp_dma(1, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 0, 10, 1, 1, 0, 0, 0, 0);
    tp_add(&t, &r, "r");
    tp_add(&t, &ld, "ld");
    assert_int_equal(tp_finish(&t), 0);
    expect_race(&t, "program race: instruction 1 (dma 'ld') writes main DTCM words 10..10 at cycle 9 "
                    "while instruction 0 (relu 'r', executing since cycle 5) writes them; the "
                    "dependency tokens must order the two");
    tp_free(&t);
}

/* A chain (from 9) writes words a store in flight (5-40) still reads. */
static void test_race_chain_vs_store(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 17);
    enpu_instr st = tp_dma(0, ENPU_DMA_STORE, ENPU_MEM_MAIN, 100, 10, 1, 1, 0, 0, 0, 0);
    enpu_instr r = relu_word(0, 10);
    tp_add(&t, &st, "st");
    tp_add(&t, &r, "r");
    assert_int_equal(tp_finish(&t), 0);
    expect_race(&t, "program race: instruction 1 (relu 'r') writes main DTCM words 10..10 at cycle 9 "
                    "while instruction 0 (dma 'st', in flight since cycle 5) reads them; the "
                    "dependency tokens must order the two");
    /* reading them is no race: relu from word 10 to word 11 runs */
    t.p.instr[1].ifmap_addr = 10;
    t.p.instr[1].ofmap_addr = 11;
    enpu_sim_result res;
    run_cycle(&t, NULL, 0, &res, 0, NULL, 0);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* Two commands on DRAM: a load (engine 1, from 9) reads DRAM words a store
 * (engine 0, in flight from 5) writes. */
static void test_race_dram(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 12);
    enpu_instr st = tp_dma(0, ENPU_DMA_STORE, ENPU_MEM_MAIN, 100, 0, 1, 4, 0, 0, 0, 0);
    enpu_instr ld = tp_dma(1, ENPU_DMA_LOAD, ENPU_MEM_SKIP, 102, 0, 1, 4, 0, 0, 0, 0);
    tp_add(&t, &st, "st");
    tp_add(&t, &ld, "ld");
    assert_int_equal(tp_finish(&t), 0);
    expect_race(&t, "program race: instruction 1 (dma 'ld') reads DRAM words 102..103 at cycle 9 "
                    "while instruction 0 (dma 'st', in flight since cycle 5) writes them; the "
                    "dependency tokens must order the two");
    tp_free(&t);
}

/* Two commands on chip, on the same engine: a load (from 9: the store's one
 * burst was granted at 5) writes skip words the store still reads (in flight
 * 5-46) -- the case a token of the engine's own queue orders. */
static void test_race_same_engine(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 13);
    enpu_instr st = tp_dma(0, ENPU_DMA_STORE, ENPU_MEM_SKIP, 100, 4, 1, 4, 0, 0, 0, 0);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_SKIP, 200, 6, 1, 1, 0, 0, 0, 0);
    tp_add(&t, &st, "st");
    tp_add(&t, &ld, "ld");
    assert_int_equal(tp_finish(&t), 0);
    expect_race(&t, "program race: instruction 1 (dma 'ld') writes skip DTCM words 6..6 at cycle 9 "
                    "while instruction 0 (dma 'st', in flight since cycle 5) reads them; the "
                    "dependency tokens must order the two");
    /* ordered by a token of its own queue: the load waits for the store's
     * completion (5 + 12 + 30 = 47), then 16 bytes of bank 1 (miss, 6):
     * data at 83 */
    t.p.instr[0].push = Q_DMA0;
    t.p.instr[1].pop = Q_DMA0;
    enpu_err err = {0};
    assert_int_equal(enpu_program_validate(&t.p, &err), 0);
    enpu_sim_result res;
    run_cycle(&t, NULL, 0, &res, 0, NULL, 0);
    assert_int_equal(res.total_cycles, 83);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* A host op (at 25, after the sync's 16 cycles from 9) reads words a load in
 * flight (5-40) writes. */
static void test_race_hostop(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, EASYNPU_NO_HOST_TIME, 14);
    enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 0, 0, 1, 1, 0, 0, 0, 0);
    enpu_instr s = {0};
    s.opcode = ENPU_OPC_SYNC;
    tp_add(&t, &ld, "ld");
    tp_add(&t, &s, "host");
    int in = flat_io(&t, ENPU_IO_HOST, "h", 16, ENPU_MEM_MAIN, 0);
    int out = flat_io(&t, ENPU_IO_HOST, "g", 16, ENPU_MEM_MAIN, 4);
    enpu_hostop op = {0};
    op.kind = "Relu";
    op.name = "relu_host";
    op.n_in = op.n_out = 1;
    op.io[0] = in, op.io[1] = out;
    enpu_err err = {0};
    assert_int_equal(enpu_program_add_hostop(&t.p, &op, &err), 0);
    assert_int_equal(tp_finish(&t), 0);
    expect_race(&t, "program race: instruction 1 (sync 'host') reads main DTCM words 0..0 at cycle 25 "
                    "while instruction 0 (dma 'ld', in flight since cycle 5) writes them; the "
                    "dependency tokens must order the two");
    tp_free(&t);
}

/* Word by word: a strided load writes main words 40, 42, 44 while relu over
 * 3 pixels stores with concat at store (ofmap_wpp 2) into words 41, 43, 45:
 * the blocks overlap, the words do not, and the program runs; stored into
 * words 40, 42, 44 instead, it races on word 40. */
static void test_race_word_exact(void **state) {
    (void)state;
    for (int word = 1; word >= 0; word--) {
        tprog t;
        tp_init(&t, "easynpu", 15);
        uint8_t img[48];
        for (int i = 0; i < 48; i++) img[i] = (uint8_t)(i + 1);
        tp_dram_put(&t, 0, img, 48);
        enpu_instr ld = tp_dma(0, ENPU_DMA_LOAD, ENPU_MEM_MAIN, 0, 40, 3, 1, 1, 2, 0, 0);
        enpu_instr r = relu_word(0, 40);
        r.wi = r.wo = 3;
        tp_tile(&t, &r, 0, 0);
        r.ofmap_wpp = 2;
        r.ofmap_word = word;
        tp_add(&t, &ld, "ld");
        tp_add(&t, &r, "r");
        int in = tp_io(&t, ENPU_IO_INPUT, "x", 1, 3, 16, 0, ENPU_MEM_MAIN, 1, 0);
        (void)in;
        assert_int_equal(tp_finish(&t), 0);
        if (word == 0) {
            expect_race(&t, "program race: instruction 1 (relu 'r') writes main DTCM words 40..40 at "
                            "cycle 9 while instruction 0 (dma 'ld', in flight since cycle 5) writes "
                            "them; the dependency tokens must order the two");
        } else {
            int8_t x[48], xc[48];
            for (int i = 0; i < 48; i++) x[i] = (int8_t)(i * 5 - 100);
            tp_hwc_to_chw(x, xc, 1, 3, 16);
            const int8_t *ins[1] = {xc};
            enpu_sim_result res;
            run_cycle(&t, ins, 1, &res, 0, NULL, 0);
            enpu_sim *sim = NULL;
            enpu_err err = {0};
            assert_int_equal(enpu_sim_new(&t.p, &t.arch, NULL, &sim, &err), 0);
            enpu_sim_result r2;
            assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &r2, &err), 0);
            const uint8_t *m = enpu_sim_memory(sim, ENPU_MEM_MAIN, NULL);
            for (int p = 0; p < 3; p++)
                for (int c = 0; c < 16; c++) {
                    assert_int_equal(m[(40 + 2 * p) * 16 + c], img[p * 16 + c]);
                    int8_t v = x[p * 16 + c];
                    assert_int_equal((int8_t)m[(41 + 2 * p) * 16 + c], v > 0 ? v : 0);
                }
            enpu_sim_result_free(&r2);
            enpu_sim_free(sim);
            enpu_sim_result_free(&res);
        }
        tp_free(&t);
    }
}

/* ---- observation: DMA and DRAM tracks, DMA signals -------------------------------------- */

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    return b;
}

/* The trace has a track per DMA engine and one for the DRAM channel, with
 * the load's and the store's spans and the relu's wait for its token; the
 * VCD declares busy/valid/ready per engine and the channel's busy, and
 * dma0_busy rises in the load's decode cycle. */
static void test_observation(void **state) {
    (void)state;
    tprog t;
    build_load_compute_store(&t);
    char dir[] = "/tmp/enpu_dma_XXXXXX", tr[64], vcd[64];
    assert_non_null(mkdtemp(dir));
    snprintf(tr, sizeof tr, "%s/t.json", dir);
    snprintf(vcd, sizeof vcd, "%s/t.vcd", dir);
    enpu_sim_opts o = {0};
    o.trace = o.vcd = true;
    o.vcd_from = 0, o.vcd_to = 1000;
    enpu_sim *sim = NULL;
    enpu_err err = {0};
    assert_int_equal(enpu_sim_new(&t.p, &t.arch, &o, &sim, &err), 0);
    int8_t x[16] = {1, -2, 3};
    const int8_t *ins[1] = {x};
    enpu_sim_result res;
    assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &res, &err), 0);
    assert_int_equal(enpu_report_trace(sim, tr, &err), 0);
    assert_int_equal(enpu_report_vcd(sim, vcd, &err), 0);
    json_error_t je;
    json_t *r = json_load_file(tr, 0, &je);
    assert_non_null(r);
    json_t *ev = json_object_get(r, "traceEvents");
    int spans[16] = {0};
    bool named_dram = false, named_dma = false, load = false, store = false, wait = false;
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *nm = json_string_value(json_object_get(e, "name"));
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        if (strcmp(ph, "M") == 0 && strcmp(nm, "thread_name") == 0) {
            const char *tn = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            named_dram |= tid == 9 && strcmp(tn, "DRAM channel") == 0;
            named_dma |= tid == 10 && strcmp(tn, "DMA engine 0") == 0;
        }
        if (strcmp(ph, "X") != 0) continue;
        if (tid >= 0 && tid < 16) spans[tid]++;
        json_t *args = json_object_get(e, "args");
        json_int_t c0 = json_integer_value(json_object_get(args, "cycle"));
        json_int_t n = json_integer_value(json_object_get(args, "cycles"));
        /* load: requested 5 (its one burst granted at 5); store: at 47 */
        if (tid == 10 && strcmp(nm, "load") == 0) load = c0 == 5 && n == 1;
        if (tid == 10 && strcmp(nm, "store") == 0) store = c0 == 47 && n == 1;
        /* the relu's wait for its token, 9-40, on the top controller's track */
        if (tid == 1 && strcmp(nm, "wait for tokens") == 0 && c0 == 9 && n == 32) wait = true;
    }
    json_decref(r);
    assert_true(named_dram && named_dma && load && store && wait);
    assert_int_equal(spans[9], 2); /* the channel served the load, then the store */
    char *v = slurp(vcd);
    const char *sigs[] = {"dma0_busy", "dma0_valid", "dma0_ready", "dma1_busy", "dram_busy"};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char key[64];
        snprintf(key, sizeof key, " %s $end", sigs[i]);
        assert_non_null(strstr(v, key));
    }
    /* dma0_busy (the first of the DMA signals after the 20 of the core: 'U')
     * rises at 4 (the load's first decode cycle: 40000 ps at 100 MHz) */
    assert_non_null(strstr(v, " U dma0_busy $end"));
    assert_non_null(strstr(v, "#40000\n1U\n"));
    free(v);
    enpu_sim_result_free(&res);
    enpu_sim_free(sim);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    tp_free(&t);
}

/* ---- agreement with the compiler's schedule model on random programs ---------------------- */

static int rnd(uint32_t *s, int n) {
    *s = *s * 1103515245u + 12345u;
    return (int)((*s >> 16) % (uint32_t)n);
}

/* Random archs (fetch, decode, DRAM rates, bursts, banks, rows, latency,
 * engines, queue depths, ITCMs small enough to fetch from DRAM) and random
 * programs of loads, stores, relu chains and syncs with random legal tokens;
 * every transfer and chain has its own words, so no order is a race.  The
 * simulator, the simulator evaluating every cycle, and the compiler's model
 * agree on every row and activity. */
static void test_random_vs_model(void **state) {
    (void)state;
    uint32_t rng = 12345;
#define RND(n) rnd(&rng, (n))
    for (int iter = 0; iter < 2000; iter++) {
        static const int F[] = {1, 2, 4, 7}, Dc[] = {0, 1, 2}, bpc[] = {4, 8, 16, 64};
        static const int lat[] = {0, 3, 30}, burst[] = {16, 24, 64, 100}, banks[] = {1, 2, 8};
        static const int rowb[] = {64, 256, 2048}, miss[] = {0, 3}, Bq[] = {1, 2, 4}, H[] = {0, 1, 16};
        static const int itcm[] = {128, 256, 4096};
        int v[12];
        const int *tab[12] = {F, Dc, bpc, lat, burst, banks, rowb, miss, NULL, Bq, H, itcm};
        const int len[12] = {4, 3, 4, 3, 4, 3, 3, 2, 3, 3, 3, 3};
        for (int i = 0; i < 12; i++) {
            int r = RND(len[i]);
            v[i] = tab[i] ? tab[i][r] : 1 + r;
        }
        char js[512];
        snprintf(js, sizeof js,
                 "{\"base\":\"easynpu\",\"instr_fetch_cycles\":%d,\"decode_cycles\":%d,"
                 "\"dram_bytes_per_cycle\":%d,\"dram_latency\":%d,\"dram_burst_bytes\":%d,"
                 "\"dram_banks\":%d,\"dram_row_bytes\":%d,\"dram_row_miss_cycles\":%d,"
                 "\"dma_engines\":%d,\"dma_queue_depth\":%d,\"host_sync_cycles\":%d,\"itcm_bytes\":%d}",
                 v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]);
        tprog t;
        tp_init(&t, js, (uint32_t)iter);
        const int E = (int)t.arch.dma_engines;
        int64_t tok[5][5] = {{0}};
        int64_t dram_next = 64, main_next = 0, skip_next = 0, w_next = 0;
        int n = 3 + RND(10);
        bool has_sync = false;
        for (int k = 0; k < n; k++) {
            int kind = RND(5); /* 0-2 dma, 3 relu, 4 sync */
            enpu_instr in;
            int q;
            if (kind <= 2) {
                int e = RND(E), rows = 1 + RND(3), n_w = 1 + RND(5), mem = RND(3);
                int ds = n_w + RND(4), ss = n_w + RND(3), dir = RND(2), gap = RND(40);
                int64_t *nx = mem == ENPU_MEM_MAIN ? &main_next : mem == ENPU_MEM_SKIP ? &skip_next : &w_next;
                in = tp_dma(e, dir, mem, dram_next, *nx, rows, n_w, ds, ss, 0, 0);
                dram_next += rows * ds + gap;
                *nx += rows * ss + 1;
                q = 1 + e;
            } else if (kind == 3) {
                in = relu_word(main_next, main_next + 1);
                main_next += 2;
                q = 0;
            } else {
                in = (enpu_instr){0};
                in.opcode = ENPU_OPC_SYNC;
                has_sync = true;
                q = 0;
            }
            for (int s2 = 0; s2 <= E; s2++)
                if (tok[s2][q] > 0 && RND(2)) in.pop |= 1 << s2, tok[s2][q]--;
            for (int d = 0; d <= E; d++)
                if ((d != q || q > 0) && RND(3) == 0) in.push |= 1 << d, tok[q][d]++;
            char nm[16];
            snprintf(nm, sizeof nm, "i%d", k);
            tp_add(&t, &in, nm);
        }
        if (has_sync) {
            enpu_io_desc d = {0};
            d.name = "h", d.dir = ENPU_IO_HOST, d.dtype = ENPU_DT_FLOAT32, d.rank = 1, d.dims[0] = 4;
            d.mem = ENPU_MEM_HOST;
            enpu_err err = {0};
            int h = enpu_program_add_io(&t.p, &d, &err);
            d.name = "g";
            int g = enpu_program_add_io(&t.p, &d, &err);
            enpu_hostop op = {0};
            op.kind = "Relu", op.name = "r", op.n_in = op.n_out = 1, op.io[0] = h, op.io[1] = g;
            assert_int_equal(enpu_program_add_hostop(&t.p, &op, &err), 0);
        }
        if (tp_finish(&t)) {
            fprintf(stderr, "random program %d (arch %s) is invalid\n", iter, js);
            fail();
        }
        enpu_sim_result res;
        run_cycle(&t, NULL, 0, &res, 0, NULL, 0);
        enpu_sim_result_free(&res);
        tp_free(&t);
    }
#undef RND
}

/* ---- programs without DMA keep today's timing in the corners §13 refines ------------------- */

/* relu, sync, relu, end with host_sync_cycles = 0 and a 1-cycle fetch.
 * Dc = 1: relu 1 fetched 0, decoded 1, runs 2-7 (completes 8); the sync
 * (fetched 1) is decoded at 8, starts and completes at 9 -- its host op runs
 * there and the decoder takes relu 2 (fetched at 8) in that same cycle 9;
 * relu 2 runs 10-15; `end` (fetched 9) is decoded at 16: 17 cycles.
 * Dc = 0: relu 1 decoded at 1 runs 1-6; the sync is decoded, starts and
 * completes at 7 (relu 2's fetch starts there: the cycle is relu 2's); relu
 * 2 decoded at 8 runs 8-13; `end` (fetched 8) is decoded at 14, which ends
 * the run: 14 cycles. */
static void test_sync_corners(void **state) {
    (void)state;
    for (int dc = 1; dc >= 0; dc--) {
        char js[400];
        snprintf(js, sizeof js,
                 "{\"base\":\"easynpu\",\"instr_fetch_cycles\":1,\"decode_cycles\":%d,"
                 "\"host_sync_cycles\":0," NO_HOST_TIME "}", dc);
        tprog t;
        tp_init(&t, js, 16);
        enpu_instr a = relu_word(0, 10), b = relu_word(10, 20), sy = {0};
        sy.opcode = ENPU_OPC_SYNC;
        tp_add(&t, &a, "r1");
        tp_add(&t, &sy, "host");
        tp_add(&t, &b, "r2");
        tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
        int h = flat_io(&t, ENPU_IO_HOST, "h", 16, ENPU_MEM_MAIN, 10);
        int g = flat_io(&t, ENPU_IO_HOST, "g", 16, ENPU_MEM_MAIN, 10);
        enpu_hostop op = {0};
        op.kind = "Relu", op.name = "rh", op.n_in = op.n_out = 1, op.io[0] = h, op.io[1] = g;
        enpu_err err = {0};
        assert_int_equal(enpu_program_add_hostop(&t.p, &op, &err), 0);
        assert_int_equal(tp_finish(&t), 0);
        enpu_sim *sim = NULL;
        assert_int_equal(enpu_sim_new(&t.p, &t.arch, NULL, &sim, &err), 0);
        int8_t x[16] = {3, -3};
        const int8_t *ins[1] = {x};
        enpu_sim_result res;
        assert_int_equal(enpu_sim_run_i8(sim, ins, 1, &res, &err), 0);
        assert_int_equal(res.total_cycles, dc ? 17 : 14);
        expect(&res.layers[0], dc ? 2 : 1, 0, 6);
        expect(&res.layers[1], dc ? 1 : 0, 0, 0);
        expect(&res.layers[2], 1, 0, 6);
        expect(&res.layers[3], dc ? 1 : 0, 0, 0);
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
        tp_free(&t);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_load),   cmocka_unit_test(test_bursts_banks),
        cmocka_unit_test(test_round_robin),   cmocka_unit_test(test_queue_full),
        cmocka_unit_test(test_load_compute_store), cmocka_unit_test(test_long_program),
        cmocka_unit_test(test_strided),       cmocka_unit_test(test_weights_by_dma),
        cmocka_unit_test(test_hostop_dram),   cmocka_unit_test(test_race_chain_vs_load),
        cmocka_unit_test(test_race_load_vs_chain), cmocka_unit_test(test_race_chain_vs_store),
        cmocka_unit_test(test_race_dram),
        cmocka_unit_test(test_race_same_engine), cmocka_unit_test(test_race_hostop),
        cmocka_unit_test(test_race_word_exact), cmocka_unit_test(test_observation),
        cmocka_unit_test(test_random_vs_model), cmocka_unit_test(test_sync_corners),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
