/* easynpu run: JSON report, SVG chart, comparison across architectures and
 * its errors. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"

#define KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy"

static char dir[64];

static char *run(const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s run %s", ENPU_CLI, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void test_json_and_svg(void **state) {
    (void)state;
    char args[1024], json[128], svg[128];
    snprintf(json, sizeof json, "%s/run.json", dir);
    snprintf(svg, sizeof svg, "%s/run.svg", dir);
    snprintf(args, sizeof args, KWS " --json %s --svg %s", json, svg);
    int st;
    char *out = run(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    json_error_t je;
    json_t *root = json_load_file(json, 0, &je);
    assert_non_null(root);
    assert_true(json_is_true(json_object_get(root, "bit_exact")));
    assert_true(json_is_true(json_object_get(root, "golden_checked")));
    json_t *total = json_object_get(root, "total");
    assert_int_equal(json_integer_value(json_object_get(total, "cycles")), 245819);
    assert_int_equal(json_integer_value(json_object_get(total, "ideal_cycles")), 244643);
    assert_int_equal(json_integer_value(json_object_get(total, "macs")), 3914280);
    json_t *layers = json_object_get(root, "layers");
    assert_int_equal(json_array_size(layers), 7); /* 4 conv, 2 fc, end */
    /* DRAM: the input (1274 words of 16 bytes) and the output (one word) */
    assert_int_equal(json_integer_value(json_object_get(total, "dram_read_bytes")), 20384);
    assert_int_equal(json_integer_value(json_object_get(total, "dram_write_bytes")), 16);
    json_t *l0 = json_array_get(layers, 0);
    assert_int_equal(json_integer_value(json_object_get(l0, "dram_read_bytes")), 20384);
    assert_int_equal(json_integer_value(json_object_get(l0, "dram_write_bytes")), 0);
    assert_int_equal(json_integer_value(json_object_get(l0, "instructions")), 12);
    assert_int_equal(json_integer_value(json_object_get(l0, "dma_transfers")), 6);
    /* 145152 MACs over 20384 bytes; above the balance point (2): compute-bound */
    assert_true(json_real_value(json_object_get(l0, "arith_intensity")) == 145152.0 / 20384.0);
    assert_string_equal(json_string_value(json_object_get(l0, "bound")), "compute");
    json_t *l1 = json_array_get(layers, 1);
    assert_int_equal(json_integer_value(json_object_get(l1, "cycles")), 182977);
    json_t *acts = json_object_get(l1, "activities");
    assert_int_equal(json_integer_value(json_object_get(acts, "compute")), 182952);
    /* energy (docs/energy.md): the layers' add up to the total, which is
     * the default model's 23.619 uJ per inference */
    double tot_e = json_real_value(json_object_get(total, "energy_pj")), sum_e = 0;
    for (size_t i = 0; i < json_array_size(layers); i++)
        sum_e += json_real_value(json_object_get(json_array_get(layers, i), "energy_pj"));
    assert_true(fabs(tot_e - 23619239.988701984) < 1e-3);
    assert_true(fabs(sum_e - tot_e) < 1e-6 * tot_e);
    assert_int_equal(json_object_size(json_object_get(total, "energy_parts_pj")), 13);
    assert_true(fabs(json_real_value(json_object_get(total, "energy_per_inference_uj")) - tot_e / 1e6) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(json_object_get(root, "area"), "total_mm2")) - 1.835274608) < 1e-9);
    json_t *fv = json_array_get(json_object_get(root, "float_vs_int8"), 0);
    assert_true(json_is_true(json_object_get(fv, "top1_agree")));
    assert_int_equal(json_integer_value(json_object_get(fv, "top1_float")), 1);
    json_decref(root);

    uint8_t *text = NULL;
    size_t n = 0;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(svg, 1 << 24, &text, &n, &err), 0);
    const char *s = (const char *)text;
    assert_non_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(s, "245819 cycles, 99.5% utilization"));
    assert_non_null(strstr(s, "/fc1/Gemm"));
    assert_non_null(strstr(s, "</svg>\n"));
    /* one green compute bar per layer that computes, the legend's swatch, and
     * in the roofline a green (compute-bound) point per layer that moved
     * DRAM bytes in its own cycles: the first convolution (the input); the
     * output is written during 'end', which has no MACs to plot */
    int bars = 0;
    for (const char *p = s; (p = strstr(p, "fill=\"#2ca02c\"/>")); p++) bars++;
    assert_int_equal(bars, 6 + 1 + 1);
    assert_non_null(strstr(s, "Roofline: MACs per cycle against MACs per DRAM byte (the roof: 16 MAC units, 8 DRAM bytes per cycle)"));
    free(text);
    unlink(json);
    unlink(svg);
}

/* --per-cycle (docs/microarch.md §15) steps every unit in every cycle: the
 * output, the JSON report and the trace are the same bytes as without it
 * (where the PE array provably computes, the run fast-forwards). */
static void test_per_cycle(void **state) {
    (void)state;
    char *outs[2], *files[2][2];
    size_t lens[2][2];
    for (int pc = 0; pc < 2; pc++) {
        char args[1024], json[128], trace[128];
        snprintf(json, sizeof json, "%s/pc.json", dir); /* the same names: they are printed */
        snprintf(trace, sizeof trace, "%s/pc.trace", dir);
        snprintf(args, sizeof args, KWS " --json %s --trace %s%s", json, trace, pc ? " --per-cycle" : "");
        int st;
        outs[pc] = run(args, &st);
        if (st != 0) fail_msg("exit %d:\n%s", st, outs[pc]);
        const char *paths[2] = {json, trace};
        for (int f = 0; f < 2; f++) {
            enpu_err err = {0};
            uint8_t *b = NULL;
            assert_int_equal(enpu_file_read(paths[f], 1 << 28, &b, &lens[pc][f], &err), 0);
            files[pc][f] = (char *)b;
            unlink(paths[f]);
        }
    }
    assert_string_equal(outs[0], outs[1]);
    assert_non_null(strstr(outs[0], "245819 cycles"));
    for (int f = 0; f < 2; f++) {
        assert_int_equal(lens[0][f], lens[1][f]);
        assert_memory_equal(files[0][f], files[1][f], lens[0][f]);
        free(files[0][f]);
        free(files[1][f]);
    }
    free(outs[0]);
    free(outs[1]);
}

static void test_compare_archs(void **state) {
    (void)state;
    int st;
    char *out = run(KWS " --arch easynpu --arch examples/easynpu32.json", &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "comparison across architectures"));
    assert_non_null(strstr(out, "easynpu32"));
    /* 32 PEs (with the lane groups the file inherits from its base) halve
     * the big convolution and nearly the totals: the sweep's 32-PE point */
    assert_non_null(strstr(out, "182977 100.0%  1722.5K        91498 100.0%  3133.6K"));
    assert_non_null(strstr(out, "245819  99.5%  2566.8K       129763  94.3%  4436.4K"));
    assert_non_null(strstr(out, "1.89x"));
    /* one definition of utilization: fc2 is 360 MACs in 45 cycles on 16 PEs,
     * 50.0% in the comparison as in the layer table */
    assert_non_null(strstr(out, "45  50.0%     0.7K"));
    free(out);
}

/* An arch file that sets pes alone is the 32-PE EasyNPU, lane groups and
 * bus included: its figure is the sweep's 32-PE point. */
static void test_arch_file_equals_sweep(void **state) {
    (void)state;
    char path[128], args[512], cmd[1024];
    snprintf(path, sizeof path, "%s/pes32.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"base\": \"easynpu\", \"pes\": 32}\n", f);
    fclose(f);
    int st;
    snprintf(args, sizeof args, KWS " --arch %s", path);
    char *out = run(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "mode cycle, arch pes32: 129763 cycles"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s sweep models/kws_cnn.onnx --calib models/kws_cnn/calib --param pes=32 -o %s/p.csv",
             ENPU_CLI, dir);
    out = NULL;
    st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/p.csv", dir);
    uint8_t *csv;
    size_t n;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(cmd, 1 << 20, &csv, &n, &err), 0);
    assert_non_null(strstr((char *)csv, ",ok,129763,"));
    free(csv);
    remove(cmd);
    remove(path);
}

/* The two engines side by side (docs/systolic.md "EasyNPU and the systolic
 * array"), and the SVG draws both. */
static void test_compare_engines(void **state) {
    (void)state;
    int st;
    char args[512], svg[128];
    snprintf(svg, sizeof svg, "%s/engines.svg", dir);
    snprintf(args, sizeof args, KWS " --arch easynpu --arch systolic --svg %s", svg);
    char *out = run(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    assert_non_null(strstr(out, "/features/features.3/Conv          182977 100.0%  1722.5K         4536  63.0%   277.5K"));
    assert_non_null(strstr(out, "/fc1/Gemm                            1757  92.2%    28.5K          904   2.8%    29.7K"));
    assert_non_null(strstr(out, "total                              245819  99.5%  2566.8K         8461  45.2%   639.8K"));
    assert_non_null(strstr(out, "engine, MAC units                             easynpu, 16               systolic, 1024"));
    assert_non_null(strstr(out, "29.05x"));
    /* by level: the systolic array's operand values latched (7.8 M: two
     * per MAC) and its PEs' register and accumulator accesses */
    assert_non_null(strstr(out, "total                        |     19.9   2546.9   2490.0  12194.8 |      0.0    639.8   "
                                "7828.6  15657.1"));
    free(out);
    uint8_t *text;
    size_t n;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(svg, 1 << 24, &text, &n, &err), 0);
    const char *s = (const char *)text;
    assert_non_null(strstr(s, ">models/kws_cnn.onnx on easynpu</text>"));
    assert_non_null(strstr(s, ">models/kws_cnn.onnx on systolic</text>"));
    assert_non_null(strstr(s, "8461 cycles, 45.2% utilization"));
    int groups = 0;
    for (const char *p = s; (p = strstr(p, "<g transform=\"translate(0 ")); p++) groups++;
    assert_int_equal(groups, 2);
    /* first both on one scale: cycles differ 30x, so a log scale, a bar per
     * layer and architecture (7 layers on easynpu, the 6 with a row on the
     * systolic engine and its end), then the energy panel */
    assert_non_null(strstr(s, "Cycles per layer, every architecture on one logarithmic scale"));
    assert_non_null(strstr(s, "<title>/features/features.3/Conv on easynpu: 182977 cycles</title>"));
    assert_non_null(strstr(s, "<title>/features/features.3/Conv on systolic: 4536 cycles</title>"));
    int bars = 0;
    for (const char *p = s; (p = strstr(p, " cycles</title><rect")); p++) bars++;
    assert_int_equal(bars, 7 + 7);
    assert_non_null(strstr(s, "Energy per inference by level, one scale"));
    assert_non_null(strstr(s, "<title>easynpu: network 2.526 uJ</title>"));
    assert_non_null(strstr(s, "Each architecture in detail, on its own scale"));
    free(text);
    unlink(svg);
}

/* The systolic engine's energy (docs/systolic.md "Energy"): the lines under
 * the table, the memory traffic in its units, and the JSON's energy per
 * layer (adding up to the total), its parts and the area: the default
 * model on preset systolic, 11.177 uJ, 2.855 pJ/MAC. */
static void test_systolic_energy(void **state) {
    (void)state;
    int st;
    char args[512], js[128];
    snprintf(js, sizeof js, "%s/sya.json", dir);
    snprintf(args, sizeof args, KWS " --arch systolic --json %s", js);
    char *out = run(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    static const char *const want[] = {
        "memory traffic (the SRAMs and itcm: words; pe_reg: operand values; acc: entries; mux: results; shape: "
        "words read, bytes written): main_dtcm 12061/1334 weight_mem 7080/0 itcm 14/0 pe_reg 7828560/7828560 "
        "acc 3914280/3914280 mux 31850/0 shape 1334/31850 (read/written)\n",
        "energy per inference 11.177 uJ (45 nm, 0.9 V; dynamic, counted actions), 2.855 pJ/MAC, average power "
        "132.100 mW at 100 MHz, EDP 9.457e-10 J*s, area 16.209 mm2\n",
        "energy by unit (uJ): mac 1.101 (9.8%) requant 0.055 (0.5%) pe_reg 0.216 (1.9%) acc 0.633 (5.7%) shape "
        "0.006 (0.1%) main_dtcm 6.062 (54.2%) weight_mem 2.266 (20.3%) itcm 0.001 (0.0%) bus 0.635 (5.7%) "
        "pe_link 0.183 (1.6%) mux 0.019 (0.2%)\n",
        "energy by level (uJ): datapath 1.156 (10.3%) register file 0.856 (7.7%) global buffer 8.328 (74.5%) "
        "network 0.837 (7.5%) dram 0.000 (0.0%)\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i])) fail_msg("missing:\n%s\nin:\n%s", want[i], out);
    assert_null(strstr(out, "not modelled"));
    free(out);
    json_error_t je;
    json_t *root = json_load_file(js, 0, &je);
    assert_non_null(root);
    json_t *total = json_object_get(root, "total"), *layers = json_object_get(root, "layers");
    double tot_e = json_real_value(json_object_get(total, "energy_pj")), sum_e = 0;
    for (size_t i = 0; i < json_array_size(layers); i++)
        sum_e += json_real_value(json_object_get(json_array_get(layers, i), "energy_pj"));
    assert_true(fabs(tot_e - 11176964.04151722) < 1e-3);
    assert_true(fabs(sum_e - tot_e) < 1e-6 * tot_e);
    /* features.3: 4356 window words read by its units' rows, 1.1 M MACs */
    json_t *l1 = json_array_get(layers, 1);
    assert_true(fabs(json_real_value(json_object_get(l1, "energy_pj")) - 5383630.338260934) < 1e-3);
    /* its eleven parts: mac, requant, pe_reg, acc, shape, the SRAMs, itcm,
     * bus, pe_link, mux */
    assert_int_equal(json_object_size(json_object_get(total, "energy_parts_pj")), 11);
    assert_true(fabs(json_real_value(json_object_get(total, "pj_per_mac")) - 2.855432938245915) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(json_object_get(root, "area"), "total_mm2")) - 16.20873246) < 1e-9);
    json_decref(root);
    unlink(js);
}

static void test_errors(void **state) {
    (void)state;
    int st;
    char *out = run("models/kws_cnn.onnx", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "needs 1 --input file(s), 0 given"));
    free(out);
    out = run(KWS " --mode functional --svg /tmp/x.svg", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "need --mode cycle"));
    free(out);
    out = run(KWS " --json models/kws_cnn/sample_0.npy", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "refusing to overwrite"));
    free(out);
    /* an output inside the --calib folder could replace a calibration input */
    uint8_t *before = NULL, *after = NULL;
    size_t nb = 0, na = 0;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read("models/kws_cnn/calib/calib_00.npy", 1 << 20, &before, &nb, &err), 0);
    out = run(KWS " --json models/kws_cnn/calib/calib_00.npy", &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "inside the input folder"));
    free(out);
    out = run(KWS " --json models/kws_cnn/calib/new.json", &st);
    assert_int_equal(st, 2);
    free(out);
    assert_int_equal(access("models/kws_cnn/calib/new.json", F_OK), -1);
    assert_int_equal(enpu_file_read("models/kws_cnn/calib/calib_00.npy", 1 << 20, &after, &na, &err), 0);
    assert_int_equal(na, nb);
    assert_memory_equal(after, before, nb);
    free(before);
    free(after);
}

/* A batch: --input-shape x=3x40x98 gives the audio model (its time axis is
 * symbolic) three images; run takes them stacked along dimension 0, runs
 * each through the one program bit-exact with the golden reference, reports
 * the batch's cycles (three times one image's: the timing does not depend
 * on the data) and writes the three outputs stacked, each equal to the
 * output of that image run alone.  eval takes --input-shape too, with a
 * batch of 1 (each input set is one image). */
#define AUDIO "models/import/audio1d.onnx --calib models/import/audio1d/calib"

static void expect(const char *out, const char *needle) {
    if (!strstr(out, needle)) fail_msg("'%s' not in:\n%s", needle, out);
}

static void test_batch(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_buf img[3], stack = {0};
    char path[3][128], bpath[128], json[128], outp[128], one[3][128], args[2048];
    for (int k = 0; k < 3; k++) {
        snprintf(path[k], sizeof path[k], "models/import/audio1d/calib/calib_%02d.npy", k);
        assert_int_equal(enpu_tensor_read(path[k], &img[k], &err), 0);
        assert_int_equal(enpu_buf_to_f32(&img[k], &err), 0);
    }
    int64_t sd[3] = {3, 40, 98};
    assert_int_equal(enpu_buf_alloc(&stack, ENPU_DT_FLOAT32, 3, sd, &err), 0);
    int64_t per = enpu_buf_numel(&img[0]);
    assert_int_equal(per, 40 * 98);
    for (int k = 0; k < 3; k++) memcpy((float *)stack.data + k * per, img[k].data, (size_t)per * sizeof(float));
    snprintf(bpath, sizeof bpath, "%s/batch.npy", dir);
    snprintf(json, sizeof json, "%s/batch.json", dir);
    snprintf(outp, sizeof outp, "%s/batch_y.npy", dir);
    assert_int_equal(enpu_tensor_write(bpath, &stack, &err), 0);
    snprintf(args, sizeof args, AUDIO " --input-shape x=3x40x98 --input %s --json %s -o %s --quiet", bpath,
             json, outp);
    int st;
    char *out = run(args, &st);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "batch: 3 images through the program one after the other: 168750 cycles");
    free(out);
    json_error_t je;
    json_t *root = json_load_file(json, 0, &je);
    assert_non_null(root);
    json_t *b = json_object_get(root, "batch");
    assert_int_equal(json_integer_value(json_object_get(b, "images")), 3);
    assert_int_equal(json_integer_value(json_object_get(b, "cycles")), 3 * 56250);
    assert_true(json_is_true(json_object_get(root, "bit_exact")));
    json_decref(root);
    enpu_buf y = {0};
    assert_int_equal(enpu_tensor_read(outp, &y, &err), 0);
    assert_int_equal(y.rank, 2);
    assert_int_equal(y.dims[0], 3);
    assert_int_equal(y.dims[1], 12);
    for (int k = 0; k < 3; k++) {
        snprintf(one[k], sizeof one[k], "%s/y%d.npy", dir, k);
        snprintf(args, sizeof args, AUDIO " --input-shape x=1x40x98 --input %s -o %s --quiet", path[k], one[k]);
        out = run(args, &st);
        if (st != 0) fail_msg("exit %d:\n%s", st, out);
        expect(out, "56250 cycles");
        free(out);
        enpu_buf yk = {0};
        assert_int_equal(enpu_tensor_read(one[k], &yk, &err), 0);
        assert_int_equal(enpu_buf_numel(&yk), 12);
        assert_memory_equal(yk.data, (const char *)y.data + (size_t)k * 12 * enpu_dtype_size(y.dtype),
                            12 * enpu_dtype_size(y.dtype));
        enpu_buf_free(&yk);
        unlink(one[k]);
    }
    enpu_buf_free(&y);
    /* compile builds the one-image program and says so */
    char prog[128];
    snprintf(prog, sizeof prog, "%s/a.enpu", dir);
    char cmd0[2400];
    snprintf(cmd0, sizeof cmd0, "%s compile " AUDIO " --input-shape x=3x40x98 -o %s --quiet", ENPU_CLI, prog);
    st = enpu_test_run(cmd0, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "note: batch 3: compiled for one image (`easynpu run` runs the 3 images through it one "
                "after the other)");
    free(out);
    unlink(prog);
    /* the batch must be in the file, and eval takes one image per input set */
    snprintf(args, sizeof args, AUDIO " --input-shape x=2x40x98 --input %s --quiet", bpath);
    out = run(args, &st);
    assert_int_equal(st, 2);
    expect(out, "a batch of 2 images needs dimension 0 of 2, the file has 3");
    free(out);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "%s eval " AUDIO " --input-shape x=1x40x98 --data %s --quiet", ENPU_CLI, bpath);
    st = enpu_test_run(cmd, &out);
    if (st != 0) fail_msg("exit %d:\n%s", st, out);
    expect(out, "on 3 input set(s) from");
    expect(out, "56250 per inference");
    free(out);
    snprintf(cmd, sizeof cmd, "%s eval " AUDIO " --input-shape x=3x40x98 --data %s --quiet", ENPU_CLI, bpath);
    st = enpu_test_run(cmd, &out);
    assert_int_equal(st, 2);
    expect(out, "--input-shape gives a batch of 3: eval runs one image per input set");
    free(out);
    unlink(bpath);
    unlink(json);
    unlink(outp);
    for (int k = 0; k < 3; k++) enpu_buf_free(&img[k]);
    enpu_buf_free(&stack);
}

/* A real model that needs DRAM: refused with what it needs when the arch's
 * DRAM is too small or absent. */
static void test_errors_vww(void **state) {
    (void)state;
    int st;
    const char *vww = enpu_test_shared_model("mlperf-vww-float/model.onnx");
    assert_non_null(vww);
    char args[2048];
    snprintf(args, sizeof args, "%s --input %s/mlperf-vww-float/test_data_set_0/input_0.pb --quiet",
             vww, ENPU_SHARED_MODELS);
    /* on the default preset it runs (off-chip); a DRAM too small for it, or
     * none, is refused with what it needs */
    enpu_err err = {0};
    char tiny[128], none[128], args2[2400];
    snprintf(tiny, sizeof tiny, "%s/tinydram.json", dir);
    snprintf(none, sizeof none, "%s/nodram.json", dir);
    static const char tiny_json[] = "{\"name\": \"tinydram\", \"base\": \"easynpu\", \"dram_bytes\": 131072}\n";
    static const char none_json[] = "{\"name\": \"nodram\", \"base\": \"easynpu\", \"dram_bytes\": 0}\n";
    assert_int_equal(enpu_file_write_atomic(tiny, tiny_json, strlen(tiny_json), &err), 0);
    assert_int_equal(enpu_file_write_atomic(none, none_json, strlen(none_json), &err), 0);
    snprintf(args2, sizeof args2, "%s --arch %s", args, tiny);
    char *out = run(args2, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "[nofit]"));
    assert_non_null(strstr(out, "DRAM: the program needs 551088 bytes of DRAM"));
    assert_non_null(strstr(out, "arch 'tinydram' has 131072; use dram_bytes >= 551088"));
    free(out);
    snprintf(args2, sizeof args2, "%s --arch %s", args, none);
    out = run(args2, &st);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "[nofit]"));
    assert_non_null(strstr(out, "graph input 'input_1' 1x3x96x96 needs 147456 bytes of main DTCM"));
    assert_non_null(strstr(out, "use --arch large"));
    free(out);
    unlink(tiny);
    unlink(none);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_run_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    return rmdir(dir);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_json_and_svg),
        cmocka_unit_test(test_compare_archs),
        cmocka_unit_test(test_arch_file_equals_sweep),
        cmocka_unit_test(test_compare_engines), cmocka_unit_test(test_systolic_energy),
        cmocka_unit_test(test_per_cycle),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_batch),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_errors_vww),
    };
    return enpu_test_main_parts(argc, argv, repo, sizeof repo / sizeof repo[0], shared,
                                sizeof shared / sizeof shared[0], setup, teardown);
}
