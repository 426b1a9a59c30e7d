/* Cycle counts of small programs derived by hand from docs/microarch.md §11
 * (fetch/decode, parameter fill, loads, weight stalls, pipeline drain, fused
 * chain control, sync), the report formats (JSON report, Chrome trace
 * events, VCD: parsed and checked), and the `easynpu sim` command (both
 * modes write identical output bytes, exit codes, no overwriting). */
#include "testutil.h"

#include <jansson.h>
#include <unistd.h>

#include "report/sim_report.h"
#include "sim_prog.h"

/* ---- exact cycles ---------------------------------------------------------------------- */

static void run_i8(tprog *t, const int8_t *x, enpu_sim_result *res) {
    enpu_sim_opts o = {0};
    o.check = true;
    enpu_sim *sim = NULL;
    enpu_err err = {0};
    assert_int_equal(enpu_sim_new(&t->p, &t->arch, &o, &sim, &err), 0);
    const int8_t *ins[1] = {x};
    if (enpu_sim_run_i8(sim, ins, 1, res, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        fail();
    }
    assert_true(res->bit_exact);
    enpu_sim_free(sim);
}

static void expect_acts(const enpu_layer_stats *l, uint64_t ctrl, uint64_t fill, uint64_t ifmap,
                        uint64_t compute, uint64_t wload, uint64_t pdrain) {
    assert_int_equal(l->activity[ENPU_ACT_CONTROLLER], ctrl);
    assert_int_equal(l->activity[ENPU_ACT_PIPELINE_FILL], fill);
    assert_int_equal(l->activity[ENPU_ACT_IFMAP_LOAD], ifmap);
    assert_int_equal(l->activity[ENPU_ACT_COMPUTE], compute);
    assert_int_equal(l->activity[ENPU_ACT_WEIGHT_LOAD], wload);
    assert_int_equal(l->activity[ENPU_ACT_PIPELINE_DRAIN], pdrain);
    assert_int_equal(l->activity[ENPU_ACT_BUS_CONFLICT], 0);
    assert_int_equal(l->activity[ENPU_ACT_OFMAP_DRAIN], 0);
    assert_int_equal(l->cycles, ctrl + fill + ifmap + compute + wload + pdrain);
}

static enpu_instr relu_1x1(int64_t c) {
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_RELU;
    in.hi = in.ho = in.wi = in.wo = 1, in.ci = in.co = c;
    tp_defaults(&in);
    in.out_mult = 1;
    in.clamp_lo = 0;
    in.tile_x = in.tile_y = in.tile_xi = in.tile_yi = in.zs = in.rows = 1;
    in.ofmap_addr = 10;
    return in;
}

/* relu on one word: fetch 0-3, decode 4, t0 = 5: the word is read at 5
 * (usable at 6, ifmap_load 1), the MAC issues at 6, its word is written at
 * 6 + D + Rq = 10 (pipeline_drain 7-10); `end` was fetched in 4-7 and is
 * decoded at 11: 12 cycles. */
static void test_cycles_relu(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 1);
    enpu_instr in = relu_1x1(16);
    tp_add(&t, &in, "relu");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[16] = {0};
    enpu_sim_result res;
    run_i8(&t, x, &res);
    assert_int_equal(res.total_cycles, 12);
    expect_acts(&res.layers[0], 5, 0, 1, 1, 0, 4);
    assert_int_equal(res.layers[1].activity[ENPU_ACT_CONTROLLER], 1);
    assert_int_equal(res.layers[0].start_cycle, 0);
    assert_int_equal(res.layers[1].start_cycle, 11);
    assert_int_equal(res.layers[0].reads[ENPU_MEM_ITCM], 4);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* 1x1 conv 16 -> 16 on one pixel: 12 parameter words (bias 4, quant 8) in
 * 5-16, usable at 17; the first weight word, read at 17, is usable at 18:
 * pipeline_fill 5-17 (13); 16 passes of one cycle 18-33 (weights stream one
 * per cycle, no stall); last write at 37; `end` decoded at 38. */
static void test_cycles_conv_fill(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 2);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_CONV;
    in.hi = in.ho = in.wi = in.wo = 1, in.ci = in.co = 16;
    tp_defaults(&in);
    int8_t w[256];
    int32_t bias[16];
    uint32_t M[16];
    int8_t S[16];
    for (int i = 0; i < 256; i++) w[i] = (int8_t)(i % 13 - 6);
    for (int i = 0; i < 16; i++) bias[i] = i * 10, M[i] = 1 << 19, S[i] = 22;
    tp_conv_weights(&t, &in, w);
    tp_params(&t, &in, bias, M, S);
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = 10;
    tp_add(&t, &in, "conv");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(5 * i - 40);
    enpu_sim_result res;
    run_i8(&t, x, &res);
    assert_int_equal(res.total_cycles, 39);
    expect_acts(&res.layers[0], 5, 13, 0, 16, 0, 4);
    assert_int_equal(res.layers[0].reads[ENPU_MEM_WEIGHT_MEM], 12 + 16);
    assert_int_equal(res.layers[0].macs, 256);
    assert_int_equal(res.layers[0].ideal_cycles, 16);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* fc over one word of 4 channels with a 1-entry weight pad and a 2-cycle
 * weight memory: parameters 5-16 usable at 18, weight 0 read at 17 usable
 * at 19 (fill 5-18: 14); each later word can only be read the cycle after
 * the previous one is consumed: MACs at 19, 22, 25, 28 with two
 * weight_load cycles before each of the last three; write at 32; `end` at
 * 33: 34 cycles. */
static void test_cycles_weight_stall(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "{\"base\":\"easynpu\",\"weight_pad_depth\":1,\"weight_mem_latency\":2}", 3);
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_FC;
    in.hi = in.wi = in.ho = in.wo = 1, in.ci = 4, in.co = 16;
    tp_defaults(&in);
    int8_t w[64];
    int32_t bias[16] = {0};
    uint32_t M[16];
    int8_t S[16];
    for (int i = 0; i < 64; i++) w[i] = (int8_t)(i - 30);
    for (int i = 0; i < 16; i++) M[i] = 1 << 19, S[i] = 20;
    tp_fc_weights(&t, &in, w);
    tp_params(&t, &in, bias, M, S);
    tp_tile(&t, &in, 0, 0);
    in.ofmap_addr = 10;
    tp_add(&t, &in, "fc");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 4, 0, ENPU_MEM_MAIN, 1, 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[4] = {1, -2, 3, -4};
    enpu_sim_result res;
    run_i8(&t, x, &res);
    assert_int_equal(res.total_cycles, 34);
    expect_acts(&res.layers[0], 5, 14, 0, 4, 6, 4);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* A fused chain: the member's fetch starts when the head's decode does, so
 * it costs max(F, Dc) = 4 controller cycles; its pass is its own row. */
static void test_cycles_chain_control(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 4);
    enpu_instr a = relu_1x1(16), b = relu_1x1(16);
    a.fuse_next = 1;
    a.fuse_act = 0;
    /* a chain member relu needs fuse_act on the head: use bn-free act=relu */
    a.fuse_act = ENPU_ACT_RELU;
    /* the head cannot be a relu when its member is one (one activation per
     * chain): make the head an add-free copy: reshape cannot head a chain,
     * so use bn */
    a.opcode = ENPU_OPC_BN;
    a.fuse_bn = 0;
    int8_t bw[16];
    int32_t bias[16];
    uint32_t M[16];
    int8_t S[16];
    for (int i = 0; i < 16; i++) bw[i] = (int8_t)(i + 1), bias[i] = -i, M[i] = 1 << 19, S[i] = 20;
    tp_bn_weights(&t, &a, bw);
    tp_params(&t, &a, bias, M, S);
    a.clamp_lo = -128;
    a.ofmap_addr = 0;
    tp_add(&t, &a, "bn");
    tp_add(&t, &b, "relu");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 1, 0);
    if (tp_finish(&t)) fail();
    int8_t x[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(i * 11 - 80);
    enpu_sim_result res;
    run_i8(&t, x, &res);
    /* head: fetch 0-3, decode 4; member: fetched 4-7, decoded 8; t0 = 9;
     * parameters: bias 4 + quant 8 + bn multipliers 1 = 13 words (9-21,
     * usable 22) while the unit is read at 9 (usable 10): fill 9-21;
     * head MAC 22, member MAC 22 + D + Rq = 26 (pipeline_drain 23-25), its
     * write at 30; `end` (fetched 8-11) decoded at 31. */
    assert_int_equal(res.layers[0].activity[ENPU_ACT_CONTROLLER], 5);
    assert_int_equal(res.layers[1].activity[ENPU_ACT_CONTROLLER], 4);
    expect_acts(&res.layers[0], 5, 13, 0, 1, 0, 0);
    expect_acts(&res.layers[1], 4, 0, 0, 1, 0, 3 + 4);
    assert_int_equal(res.total_cycles, 32);
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* sync: decode, then host_sync_cycles of handover (controller), then the
 * host op (a float Relu on the dequantized tensor) on the host CPU of the
 * preset (docs/microarch.md §13.11): 2000 cycles per op + 4 per element
 * dequantized (16) + 4 per element of an arithmetic op (16) = 2128 CPU
 * cycles at 400 MHz = 532 NPU cycles at 100 MHz (activity host). */
static void test_cycles_sync(void **state) {
    (void)state;
    tprog t;
    tp_init(&t, "easynpu", 5);
    enpu_instr in = relu_1x1(16);
    in.clamp_lo = -128;
    tp_add(&t, &in, "copy");
    enpu_instr s = {0};
    s.opcode = ENPU_OPC_SYNC;
    s.host_op = 0;
    tp_add(&t, &s, "host");
    tp_io(&t, ENPU_IO_INPUT, "x", 1, 1, 16, 0, ENPU_MEM_MAIN, 0.5f, 3);
    int hin = tp_io(&t, ENPU_IO_HOST, "y8", 1, 1, 16, 10, ENPU_MEM_MAIN, 0.5f, 3);
    enpu_io_desc d = {0};
    d.name = "yf";
    d.dir = ENPU_IO_OUTPUT;
    d.dtype = ENPU_DT_FLOAT32;
    d.rank = 2;
    d.dims[0] = 1, d.dims[1] = 16;
    d.mem = ENPU_MEM_HOST;
    enpu_err err = {0};
    int hout = enpu_program_add_io(&t.p, &d, &err);
    assert_true(hout >= 0);
    t.p.io[hin].rank = 2;
    t.p.io[hin].layout = ENPU_LAYOUT_ANY;
    t.p.io[hin].dims[0] = 1, t.p.io[hin].dims[1] = 16;
    enpu_hostop h = {0};
    h.kind = "Relu";
    h.name = "relu_host";
    h.n_in = 1, h.n_out = 1;
    h.io[0] = hin, h.io[1] = hout;
    assert_int_equal(enpu_program_add_hostop(&t.p, &h, &err), 0);
    assert_int_equal(tp_finish(&t), 0);
    int8_t x[16];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(i - 8);
    enpu_sim_result res;
    run_i8(&t, x, &res);
    /* copy: 11 cycles (as test_cycles_relu); sync: decode at 11 + 16 + 532;
     * end (fetched 11-14) decoded at 560 */
    assert_int_equal(res.layers[0].cycles, 11);
    assert_int_equal(enpu_sync_host_cycles(&t.p, 1), 532);
    assert_int_equal(res.layers[1].cycles, 17 + 532);
    assert_int_equal(res.layers[1].activity[ENPU_ACT_CONTROLLER], 17);
    assert_int_equal(res.layers[1].activity[ENPU_ACT_HOST], 532);
    assert_true(res.layers[1].host);
    assert_int_equal(res.total_cycles, 29 + 532);
    enpu_npu_share sh;
    enpu_sim_npu_share(&res, &sh);
    assert_int_equal(sh.host_ops, 1);
    assert_int_equal(sh.host_cycles, 532);
    assert_true(sh.npu_time == 1.0 - 532.0 / 561.0);
    assert_int_equal(res.n_outputs, 1);
    const float *y = res.outputs[0].data;
    for (int i = 0; i < 16; i++) {
        float v = (float)(x[i] - 3) * 0.5f;
        assert_true(y[i] == (v > 0 ? v : 0.0f));
    }
    enpu_sim_result_free(&res);
    tp_free(&t);
}

/* ---- report formats ------------------------------------------------------------------------ */

static char tmpdir[256];

static void path_in(char *buf, size_t n, const char *name) {
    if (snprintf(buf, n, "%s/%s", tmpdir, name) >= (int)n) abort();
}

static void make_kws_program(char *prog, size_t n) {
    path_in(prog, n, "kws.enpu");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s compile %s/models/kws_cnn.onnx --calib %s/models/kws_cnn/calib --quiet -o %s",
             ENPU_CLI, ENPU_SOURCE_DIR, ENPU_SOURCE_DIR, prog);
    char *out = NULL;
    int rc = enpu_test_run(cmd, &out);
    if (rc) fprintf(stderr, "%s\n", out ? out : "");
    free(out);
    assert_int_equal(rc, 0);
}

static void test_reports(void **state) {
    (void)state;
    char prog[512], js[512], tr[512], vcd[512], y1[512], y2[512], cmd[4096];
    make_kws_program(prog, sizeof prog);
    path_in(js, sizeof js, "r.json");
    path_in(tr, sizeof tr, "r.trace.json");
    path_in(vcd, sizeof vcd, "r.vcd");
    path_in(y1, sizeof y1, "y_cycle.npy");
    path_in(y2, sizeof y2, "y_func.npy");
    snprintf(cmd, sizeof cmd, "%s sim %s --input %s/models/kws_cnn/sample_1.npy --json %s --trace %s "
             "--vcd %s --window 10300:11300 --output %s", ENPU_CLI, prog, ENPU_SOURCE_DIR, js, tr, vcd, y1);
    char *out = NULL;
    int rc = enpu_test_run(cmd, &out);
    if (rc) fprintf(stderr, "%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "bit-exact"));
    free(out);
    /* JSON report */
    json_error_t je;
    json_t *r = json_load_file(js, 0, &je);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "bit_exact")));
    json_t *tot = json_object_get(r, "total");
    const char *keys[] = {"cycles", "ideal_cycles", "macs", "utilization"};
    for (int i = 0; i < 4; i++) assert_non_null(json_object_get(tot, keys[i]));
    assert_int_equal(json_integer_value(json_object_get(tot, "macs")), 3914280);
    assert_int_equal(json_integer_value(json_object_get(tot, "ideal_cycles")), 244643);
    json_t *layers = json_object_get(r, "layers");
    assert_true(json_array_size(layers) >= 6);
    json_int_t sum = 0;
    for (size_t i = 0; i < json_array_size(layers); i++) {
        json_t *l = json_array_get(layers, i);
        const char *lk[] = {"name", "op", "cycles", "ideal_cycles", "macs", "utilization", "activities"};
        for (int k = 0; k < 7; k++) assert_non_null(json_object_get(l, lk[k]));
        json_int_t a = 0;
        const char *nm;
        json_t *v;
        json_object_foreach(json_object_get(l, "activities"), nm, v) a += json_integer_value(v);
        assert_int_equal(a, json_integer_value(json_object_get(l, "cycles")));
        sum += a;
    }
    assert_int_equal(sum, json_integer_value(json_object_get(tot, "cycles")));
    json_decref(r);
    /* Chrome trace events */
    r = json_load_file(tr, 0, &je);
    assert_non_null(r);
    json_t *ev = json_object_get(r, "traceEvents");
    assert_true(json_is_array(ev));
    int complete = 0, tracks[16] = {0};
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        assert_non_null(ph);
        assert_non_null(json_object_get(e, "pid"));
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        if (strcmp(ph, "X") == 0) {
            complete++;
            assert_non_null(json_string_value(json_object_get(e, "name")));
            assert_true(json_is_number(json_object_get(e, "ts")));
            assert_true(json_number_value(json_object_get(e, "dur")) > 0);
            if (tid >= 0 && tid < 16) tracks[tid]++;
        } else {
            assert_string_equal(ph, "M");
        }
    }
    assert_true(complete > 10);
    assert_true(tracks[1] > 0 && tracks[2] > 0 && tracks[3] > 0 && tracks[4] > 0 && tracks[5] > 0 &&
                tracks[7] > 0);
    json_decref(r);
    /* VCD: header, the listed signals, and each of them changes */
    FILE *f = fopen(vcd, "r");
    assert_non_null(f);
    char line[512], ids[32][8], names[32][64];
    int nv = 0, defs_done = 0, changes[32] = {0};
    long first_t = -1;
    while (fgets(line, sizeof line, f)) {
        if (!defs_done) {
            char id[8], name[64];
            int width;
            if (sscanf(line, "$var wire %d %7s %63s $end", &width, id, name) == 3) {
                assert_true(width >= 1);
                snprintf(ids[nv], sizeof ids[nv], "%s", id);
                snprintf(names[nv], sizeof names[nv], "%s", name);
                nv++;
            }
            if (strncmp(line, "$enddefinitions", 15) == 0) defs_done = 1;
            if (strncmp(line, "$timescale", 10) == 0) assert_non_null(strstr(line, "ps"));
            continue;
        }
        if (line[0] == '#') {
            if (first_t < 0) first_t = atol(line + 1);
            continue;
        }
        char id[8] = {0};
        if (line[0] == 'b') sscanf(line, "b%*s %7s", id);
        else if (line[0] == '0' || line[0] == '1') snprintf(id, sizeof id, "%c", line[1]);
        else continue;
        for (int i = 0; i < nv; i++)
            if (strcmp(id, ids[i]) == 0) changes[i]++;
    }
    fclose(f);
    assert_true(defs_done);
    assert_int_equal(first_t, 10300 * 10000); /* cycle 10300 at 100 MHz, in ps */
    const char *want[] = {"pe_ps_addr", "if_hw_addr", "if_ch_addr", "w_och_gcnt", "pe_valid",
                          "if_bus_valid", "if_bus_ready", "of_bus_valid", "of_bus_ready",
                          "w_bus_valid"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int found = -1;
        for (int i = 0; i < nv; i++)
            if (strcmp(names[i], want[k]) == 0) found = i;
        if (found < 0 || changes[found] < 2) {
            fprintf(stderr, "VCD signal %s: %s\n", want[k], found < 0 ? "missing" : "never changes");
            fail();
        }
    }
    /* functional mode: the same output bytes */
    snprintf(cmd, sizeof cmd, "%s sim %s --input %s/models/kws_cnn/sample_1.npy --mode functional --output %s",
             ENPU_CLI, prog, ENPU_SOURCE_DIR, y2);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", y1, y2);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
}

static void test_cli_errors(void **state) {
    (void)state;
    char prog[512], cmd[4096];
    make_kws_program(prog, sizeof prog);
    const char *bad[] = {
        "%s sim %s",                                                        /* no input */
        "%s sim %s --input /nonexistent.npy",                              /* unreadable */
        "%s sim %s --input " ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy --mode fast",
        "%s sim %s --input " ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy --window 5:2 --vcd x.vcd",
        "%s sim %s --input " ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy --mode functional --trace t.json",
        "%s sim /nonexistent.enpu --input " ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, bad[i], ENPU_CLI, prog);
        char *out = NULL;
        int rc = enpu_test_run(cmd, &out);
        if (rc != 2) fprintf(stderr, "%s -> %d: %s\n", cmd, rc, out);
        assert_int_equal(rc, 2);
        free(out);
    }
    /* a program compiled for another arch: bad input (2), not a failed check */
    snprintf(cmd, sizeof cmd, "%s sim %s --input %s/models/kws_cnn/sample_0.npy --arch large", ENPU_CLI,
             prog, ENPU_SOURCE_DIR);
    assert_int_equal(enpu_test_run(cmd, NULL), 2);
    /* an output naming an input is refused and the input is untouched */
    char copy[300];
    path_in(copy, sizeof copy, "in.npy");
    snprintf(cmd, sizeof cmd, "cp %s/models/kws_cnn/sample_0.npy %s", ENPU_SOURCE_DIR, copy);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s sim %s --input %s --output %s", ENPU_CLI, prog, copy, copy);
    assert_int_equal(enpu_test_run(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "cmp -s %s/models/kws_cnn/sample_0.npy %s", ENPU_SOURCE_DIR, copy);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s sim %s --input %s --json %s", ENPU_CLI, prog, copy, prog);
    assert_int_equal(enpu_test_run(cmd, NULL), 2);
    /* help */
    snprintf(cmd, sizeof cmd, "%s sim --help", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
}

/* --golden: every stored layer output compared with the golden reference */
static void test_cli_golden(void **state) {
    (void)state;
    char q[512], prog[512], cmd[4096];
    path_in(q, sizeof q, "kws.qjson");
    path_in(prog, sizeof prog, "kws_q.enpu");
    snprintf(cmd, sizeof cmd, "%s quantize %s/models/kws_cnn.onnx --calib %s/models/kws_cnn/calib -o %s",
             ENPU_CLI, ENPU_SOURCE_DIR, ENPU_SOURCE_DIR, q);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s compile %s -o %s", ENPU_CLI, q, prog);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
    for (int m = 0; m < 2; m++) {
        snprintf(cmd, sizeof cmd, "%s sim %s --input %s/models/kws_cnn/sample_2.npy --golden %s%s",
                 ENPU_CLI, prog, ENPU_SOURCE_DIR, q, m ? " --mode functional" : "");
        char *out = NULL;
        int rc = enpu_test_run(cmd, &out);
        if (rc) fprintf(stderr, "%s\n", out);
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "6 layer outputs and 1 output(s) bit-exact with the golden"));
        free(out);
    }
}

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/enpu_sim_cycles_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return enpu_test_run(cmd, NULL) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cycles_relu),          cmocka_unit_test(test_cycles_conv_fill),
        cmocka_unit_test(test_cycles_weight_stall),  cmocka_unit_test(test_cycles_chain_control),
        cmocka_unit_test(test_cycles_sync),          cmocka_unit_test(test_reports),
        cmocka_unit_test(test_cli_errors),          cmocka_unit_test(test_cli_golden),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
