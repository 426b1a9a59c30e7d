/* The row-stationary engine from the command line (docs/rowstat.md): run
 * on arch rowstat in 8 and 16 bits, the comparison with EasyNPU by layer and
 * by memory level, quantize -> compile -> sim with a 16-bit .qjson, the
 * listing of a rowstat program assembling back to the same bytes, `sim
 * --per-cycle` printing and writing the same bytes as without it, the
 * refusals, and a batch as one program. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "testutil.h"

#define KWS "models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy"

static char dir[64];

static char *cli(const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", ENPU_CLI, args);
    char *out = NULL;
    *status = enpu_test_run(cmd, &out);
    assert_non_null(out);
    return out;
}

static void has(const char *out, const char *s) {
    if (!strstr(out, s)) fail_msg("no '%s' in:\n%s", s, out);
}

static void test_run_int8_int16(void **state) {
    (void)state;
    int st;
    char *out = cli("run " KWS " --arch rowstat", &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "on 72 MAC units");
    has(out, "mode cycle, arch rowstat: 99481 cycles");
    has(out, "bit-exact: yes (6 layer outputs and 1 model output(s) equal the golden int8 reference");
    has(out, "memory traffic (dram, itcm: words; glb: bytes");
    has(out, "float vs int8 (this input), output logits [1,12]: max |error| 0.02538, SQNR 42.5 dB");
    free(out);
    /* 16 bits: near-lossless against the float model */
    out = cli("run " KWS " --arch rowstat --bits 16", &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "mode cycle, arch rowstat: 102379 cycles");
    has(out, "bit-exact: yes (6 layer outputs and 1 model output(s) equal the golden int16 reference");
    has(out, "float vs int16 (this input), output logits [1,12]: max |error| 8.142e-05, SQNR 93.2 dB, "
             "top-1 agrees (float 1, int16 1)");
    free(out);
    out = cli("run " KWS " --arch rowstat --bits 16 --qformat", &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "SQNR 90.2 dB");
    free(out);
    out = cli("run " KWS " --arch rowstat --mode functional --bits 16", &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "golden int16 reference");
    free(out);
}

static void test_comparison(void **state) {
    (void)state;
    int st;
    char args[512], js[128], svg[128];
    snprintf(js, sizeof js, "%s/cmp.json", dir);
    snprintf(svg, sizeof svg, "%s/cmp.svg", dir);
    snprintf(args, sizeof args, "run " KWS " --arch easynpu --arch systolic --arch rowstat --arch eyeriss --json %s --svg %s",
             js, svg);
    char *out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    /* every row docs/rowstat.md "The default model on the engines" quotes */
    has(out, "/features/features.0/Conv            9994  90.8%   291.5K          743  19.1%   185.4K         5522  36.5%    40.8K         6912  12.5%    44.6K");
    has(out, "/features/features.3/Conv          182977 100.0%  1722.5K         4536  63.0%   277.5K        48818  83.3%    56.9K        28146  61.9%    59.0K");
    has(out, "/features/features.6/Conv           43218 100.0%   378.3K         1720  39.2%   109.9K        14382  66.8%    28.4K         7484  55.0%    21.7K");
    has(out, "/features/features.9/Conv            7796  99.7%   145.3K          508  23.9%    36.2K         3896  44.4%     9.2K         2046  36.2%     8.6K");
    has(out, "/fc1/Gemm                            1757  92.2%    28.5K          904   2.8%    29.7K        26368   1.4%    27.1K         6915   2.2%    27.5K");
    has(out, "/fc2/Gemm                              45  50.0%     0.7K           49   0.7%     1.2K          490   1.0%     0.6K          243   0.9%     0.6K");
    has(out, "total                              245819  99.5%  2566.8K         8461  45.2%   639.8K        99481  54.6%   163.1K        51751  45.0%   162.0K");
    has(out, "engine, MAC units                             easynpu, 16               systolic, 1024                  rowstat, 72                 rowstat, 168");
    has(out, "time at clock (us)                                2458.19                        84.61                       994.81                       258.75");
    has(out, "/features/features.0/Conv    |     19.9    271.6    191.2    455.6 |      0.0    185.4    290.3    580.6 |     40.8     57.0     13.1    511.1 |     44.6     68.6     20.2    532.2");
    has(out, "/features/features.3/Conv    |      0.0   1722.5   1740.3   9136.0 |      0.0    277.5   5854.5  11708.9 |     56.9   2441.4    221.8  11132.4 |     59.0    656.8    221.8  11132.4");
    has(out, "/features/features.6/Conv    |      0.0    378.3    384.0   2113.6 |      0.0    109.9   1382.4   2764.8 |     28.4    585.2     66.2   2664.0 |     21.7    143.4     66.2   2664.0");
    has(out, "/features/features.9/Conv    |      0.0    145.3    145.2    403.5 |      0.0     36.2    248.8    497.7 |      9.2     52.0     35.7    556.4 |      8.6     30.0     35.7    535.7");
    has(out, "/fc1/Gemm                    |      0.0     28.5     28.8     84.6 |      0.0     29.7     51.8    103.7 |     27.1     75.8     38.9    162.7 |     27.5     64.1     34.6    149.8");
    has(out, "/fc2/Gemm                    |      0.0      0.7      0.5      1.5 |      0.0      1.2      0.7      1.4 |      0.6      1.7      0.7      2.8 |      0.6      1.3      0.7      2.8");
    has(out, "total                        |     19.9   2546.9   2490.0  12194.8 |      0.0    639.8   7828.6  15657.1 |    163.1   3213.2    376.4  15029.3 |    162.0    964.3    379.2  15016.8");
    /* energy side by side, per layer and in total (docs/energy.md "Engines
     * side by side"): each column the figures of its arch's own energy lines */
    static const char *const energy[] = {
        "layer                               easynpu       systolic        rowstat        eyeriss\n",
        "/features/features.0/Conv             4.911          2.966          9.340          8.843\n",
        "/features/features.3/Conv            14.317          5.384         56.050         26.251\n",
        "/features/features.6/Conv             3.244          1.885         16.158          7.529\n",
        "/features/features.9/Conv             0.948          0.572          3.270          2.225\n",
        "/fc1/Gemm                             0.192          0.357          5.758          5.220\n",
        "/fc2/Gemm                             0.007          0.014          0.122          0.109\n",
        "total (uJ)                           23.619         11.177         90.700         50.178\n",
        "pJ/MAC                                6.034          2.855         23.171         12.819\n",
        "average power (mW)                    9.608        132.100         91.173        193.919\n",
        "EDP (J*s)                         5.806e-08      9.457e-10      9.023e-08      1.298e-08\n",
        "area (mm2)                            1.835         16.209          8.931          4.206\n",
        "datapath (uJ)                         1.242          1.156          1.732          1.703\n",
        "register file (uJ)                    7.315          0.856         26.668         13.090\n",
        "global buffer (uJ)                    9.222          8.328         16.452          4.536\n",
        "network (uJ)                          2.526          0.837         18.703          3.888\n",
        "dram (uJ)                             3.315          0.000         27.144         26.961\n",
    };
    for (size_t i = 0; i < sizeof energy / sizeof energy[0]; i++) has(out, energy[i]);
    free(out);
    /* the JSON: every engine's energy per layer, adding up to its total */
    static const struct {
        const char *name;
        double total_pj, area_mm2;
    } want[] = {{"easynpu", 23619239.988701984, 1.835274608},
                {"systolic", 11176964.04151722, 16.20873246},
                {"rowstat", 90699598.50089252, 8.931336384},
                {"eyeriss", 50177583.99785835, 4.206296648}};
    json_error_t je;
    json_t *root = json_load_file(js, 0, &je), *archs = json_object_get(root, "archs");
    assert_int_equal(json_array_size(archs), 4);
    for (size_t a = 0; a < 4; a++) {
        json_t *o = json_array_get(archs, a), *layers = json_object_get(o, "layers");
        double tot = json_real_value(json_object_get(json_object_get(o, "total"), "energy_pj")), sum = 0;
        for (size_t l = 0; l < json_array_size(layers); l++)
            sum += json_real_value(json_object_get(json_array_get(layers, l), "energy_pj"));
        assert_string_equal(json_string_value(json_object_get(o, "arch_name")), want[a].name);
        assert_int_equal(json_array_size(layers), 7);
        if (fabs(tot - want[a].total_pj) > 1e-3 || fabs(sum - tot) > 1e-9 * tot)
            fail_msg("%s: energy_pj %.9g, layers %.9g, want %.9g", want[a].name, tot, sum, want[a].total_pj);
        assert_true(fabs(json_real_value(json_object_get(json_object_get(o, "area"), "total_mm2")) - want[a].area_mm2) < 1e-9);
    }
    json_decref(root);
    /* the SVG: every engine's energy by level on one scale */
    uint8_t *text;
    size_t n;
    enpu_err err = {0};
    assert_int_equal(enpu_file_read(svg, 1 << 24, &text, &n, &err), 0);
    static const char *const bars[] = {"easynpu: dram 3.315 uJ", "systolic: global buffer 8.328 uJ",
                                       "rowstat: dram 27.144 uJ", "eyeriss: dram 26.961 uJ"};
    has((const char *)text, "Energy per inference by level, one scale");
    for (size_t i = 0; i < sizeof bars / sizeof bars[0]; i++) has((const char *)text, bars[i]);
    assert_null(strstr((const char *)text, "not counted"));
    free(text);
    unlink(js);
    unlink(svg);
    /* 16 bits: EasyNPU cannot run it; the row-stationary engines can */
    out = cli("run " KWS " --bits 16 --arch rowstat --arch easynpu", &st);
    assert_int_equal(st, 2);
    has(out, "the easynpu engine computes on int8 data; the model is quantized to 16 bits");
    has(out, "102379");
    free(out);
}

static void test_qjson_flow(void **state) {
    (void)state;
    char args[1024];
    int st;
    snprintf(args, sizeof args,
             "quantize models/kws_cnn.onnx --calib models/kws_cnn/calib --bits 16 --arch rowstat -o %s/k.qjson", dir);
    char *out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "16-bit data, accumulator 64 bits");
    has(out, "top-1 agreement 32/32");
    free(out);
    snprintf(args, sizeof args, "compile %s/k.qjson --arch rowstat -o %s/k.enpu", dir, dir);
    out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "modelled 102379 cycles");
    has(out, "note 1 /features/features.3/Conv: n=1 m=24 e=8 p=8 q=4 r=1 t=3 (sets 3x8, 1 fold, ifmap tiles of 8 channels, "
                  "dbuf=7): 21 passes");
    free(out);
    snprintf(args, sizeof args, "sim %s/k.enpu --input models/kws_cnn/sample_0.npy --golden %s/k.qjson", dir, dir);
    out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "6 layer outputs and 1 output(s) bit-exact with the golden reference");
    free(out);
    /* the listing assembles back to the same bytes */
    snprintf(args, sizeof args, "disasm %s/k.enpu -o %s/k.s", dir, dir);
    out = cli(args, &st);
    free(out);
    if (st) { /* disasm writes to stdout */
        snprintf(args, sizeof args, "disasm %s/k.enpu > %s/k.s", dir, dir);
        out = cli(args, &st);
        free(out);
    }
    assert_int_equal(st, 0);
    snprintf(args, sizeof args, "asm %s/k.s -o %s/k2.enpu && cmp %s/k.enpu %s/k2.enpu", dir, dir, dir, dir);
    out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    free(out);
    /* the 16-bit .qjson on EasyNPU: refused, saying why */
    snprintf(args, sizeof args, "compile %s/k.qjson --arch easynpu", dir);
    out = cli(args, &st);
    assert_int_equal(st, 2);
    has(out, "the easynpu engine computes on int8 data");
    free(out);
}

/* --per-cycle turns the fast-forward off (docs/rowstat.md "Fast-forward"):
 * the output, the JSON report and the trace are the same bytes. */
static void test_per_cycle(void **state) {
    (void)state;
    char args[1024];
    int st;
    snprintf(args, sizeof args, "compile models/kws_cnn.onnx --calib models/kws_cnn/calib --arch eyeriss -o %s/e.enpu",
             dir);
    char *out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    free(out);
    char *outs[2], *files[2][2];
    size_t lens[2][2];
    for (int pc = 0; pc < 2; pc++) {
        char json[128], trace[128];
        snprintf(json, sizeof json, "%s/pc.json", dir); /* the same names: they are printed */
        snprintf(trace, sizeof trace, "%s/pc.trace", dir);
        snprintf(args, sizeof args, "sim %s/e.enpu --input models/kws_cnn/sample_0.npy --json %s --trace %s%s", dir,
                 json, trace, pc ? " --per-cycle" : "");
        outs[pc] = cli(args, &st);
        if (st) fail_msg("exit %d:\n%s", st, outs[pc]);
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
    has(outs[0], "51751 cycles");
    for (int f = 0; f < 2; f++) {
        assert_int_equal(lens[0][f], lens[1][f]);
        assert_memory_equal(files[0][f], files[1][f], lens[0][f]);
        free(files[0][f]);
        free(files[1][f]);
    }
    free(outs[0]);
    free(outs[1]);
}

static void test_refusals(void **state) {
    (void)state;
    int st;
    char *out = cli("quantize models/kws_cnn.onnx --qformat -o /tmp/never.qjson", &st);
    assert_int_equal(st, 2);
    has(out, "--qformat needs --bits 16");
    free(out);
    out = cli("run " KWS " --bits 12", &st);
    assert_int_equal(st, 2);
    has(out, "--bits '12': 8 or 16 expected");
    free(out);
    out = cli("arch eyeriss", &st);
    assert_int_equal(st, 0);
    has(out, "arch eyeriss (engine rowstat");
    has(out, "MAC units                     168");
    free(out);
}

/* A batch on the row-stationary engine (docs/rowstat.md "Batches"): run
 * with --input-shape mfcc=2x... and the two images stacked compiles one
 * program of both (rs_conv of two images per pass), bit-exact with the
 * golden reference, its cycles per batch and per image in the text and the
 * JSON; each image's output equals that image run alone through the
 * one-image program; compile prints the images per pass.  A model that
 * mixes its images at batch N runs image by image. */
static void test_batch(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_buf img[2], stack = {0}, y = {0};
    for (int k = 0; k < 2; k++) {
        char p[64];
        snprintf(p, sizeof p, "models/kws_cnn/sample_%d.npy", k);
        assert_int_equal(enpu_tensor_read(p, &img[k], &err), 0);
        assert_int_equal(enpu_buf_to_f32(&img[k], &err), 0);
    }
    const int64_t per = enpu_buf_numel(&img[0]), sd[4] = {2, 1, 26, 49};
    assert_int_equal(per, 26 * 49);
    assert_int_equal(enpu_buf_alloc(&stack, ENPU_DT_FLOAT32, 4, sd, &err), 0);
    for (int k = 0; k < 2; k++) memcpy((float *)stack.data + k * per, img[k].data, (size_t)per * sizeof(float));
    char bpath[128], json[128], ypath[128], args[1024];
    snprintf(bpath, sizeof bpath, "%s/b.npy", dir);
    snprintf(json, sizeof json, "%s/b.json", dir);
    snprintf(ypath, sizeof ypath, "%s/by.npy", dir);
    assert_int_equal(enpu_tensor_write(bpath, &stack, &err), 0);
    snprintf(args, sizeof args,
             "run models/kws_cnn.onnx --calib models/kws_cnn/calib --input-shape mfcc=2x1x26x49 --input %s "
             "--arch eyeriss --json %s -o %s", bpath, json, ypath);
    int st;
    char *out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "mode cycle, arch eyeriss: 89061 cycles");
    has(out, "batch: 2 images in one program (rs_conv of several images per pass): 89061 cycles = 445.305 us at "
             "200 MHz (44530 per image)");
    has(out, "bit-exact: yes (6 layer outputs and 1 model output(s) equal the golden int8 reference");
    free(out);
    json_error_t je;
    json_t *root = json_load_file(json, 0, &je);
    assert_non_null(root);
    json_t *b = json_object_get(root, "batch");
    assert_int_equal(json_integer_value(json_object_get(b, "images")), 2);
    assert_int_equal(json_integer_value(json_object_get(b, "cycles")), 89061);
    assert_int_equal(json_integer_value(json_object_get(b, "cycles_per_image")), 44530);
    assert_true(json_is_true(json_object_get(b, "one_program")));
    assert_true(json_is_true(json_object_get(root, "bit_exact")));
    json_decref(root);
    assert_int_equal(enpu_tensor_read(ypath, &y, &err), 0);
    assert_int_equal(y.dims[0], 2);
    const int64_t no = enpu_buf_numel(&y) / 2;
    for (int k = 0; k < 2; k++) {
        char one[128];
        snprintf(one, sizeof one, "%s/y%d.npy", dir, k);
        snprintf(args, sizeof args, "run models/kws_cnn.onnx --calib models/kws_cnn/calib --input "
                 "models/kws_cnn/sample_%d.npy --arch eyeriss -o %s", k, one);
        out = cli(args, &st);
        if (st) fail_msg("exit %d:\n%s", st, out);
        has(out, "mode cycle, arch eyeriss: 51751 cycles");
        free(out);
        enpu_buf yk = {0};
        assert_int_equal(enpu_tensor_read(one, &yk, &err), 0);
        assert_int_equal(enpu_buf_numel(&yk), no);
        assert_memory_equal(yk.data, (const char *)y.data + (size_t)(k * no) * enpu_dtype_size(y.dtype),
                            (size_t)no * enpu_dtype_size(y.dtype));
        enpu_buf_free(&yk);
    }
    snprintf(args, sizeof args, "compile models/kws_cnn.onnx --calib models/kws_cnn/calib --input-shape "
             "mfcc=2x1x26x49 --arch eyeriss");
    out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "note: batch 2: one program of the 2 images (rs_conv of several images per pass)");
    has(out, "note 1 /features/features.3/Conv: n=2 m=24 e=2 p=4 q=4 r=4 t=6");
    has(out, "(batch 2: 1 instruction of 2 images)");
    free(out);
    for (int k = 0; k < 2; k++) enpu_buf_free(&img[k]);
    enpu_buf_free(&stack);
    enpu_buf_free(&y);
    /* a model whose Reshape to [1, ...] mixes the images at batch 2 (its
     * output keeps dimension 0 of 1): image by image, said in a note */
    enpu_buf d;
    assert_int_equal(enpu_tensor_read("models/import/dethead/calib/calib_00.npy", &d, &err), 0);
    assert_int_equal(enpu_buf_to_f32(&d, &err), 0);
    const int64_t dd[4] = {2, 3, 64, 64}, dn = enpu_buf_numel(&d);
    assert_int_equal(enpu_buf_alloc(&stack, ENPU_DT_FLOAT32, 4, dd, &err), 0);
    for (int k = 0; k < 2; k++) memcpy((float *)stack.data + k * dn, d.data, (size_t)dn * sizeof(float));
    assert_int_equal(enpu_tensor_write(bpath, &stack, &err), 0);
    snprintf(args, sizeof args, "run models/import/dethead.onnx --calib models/import/dethead/calib "
             "--input-shape x=2x3x64x64 --input %s --arch eyeriss", bpath);
    out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "note: batch 2: the model does not take the batch (models/import/dethead.onnx: output 'scores' has "
             "dimension 0 of 1, not the batch's 2); its images run through the one-image program one after the other");
    has(out, "batch: 2 images through the program one after the other");
    has(out, "bit-exact: yes");
    free(out);
    enpu_buf_free(&d);
    enpu_buf_free(&stack);
    /* host ops (layer norm, GELU, matrix products) on the batched tensors */
    assert_int_equal(enpu_tensor_read("models/import/lngelu/calib/calib_00.npy", &d, &err), 0);
    assert_int_equal(enpu_buf_to_f32(&d, &err), 0);
    const int64_t ld[3] = {2, 16, 32}, ln = enpu_buf_numel(&d);
    assert_int_equal(enpu_buf_alloc(&stack, ENPU_DT_FLOAT32, 3, ld, &err), 0);
    for (int k = 0; k < 2; k++) memcpy((float *)stack.data + k * ln, d.data, (size_t)ln * sizeof(float));
    assert_int_equal(enpu_tensor_write(bpath, &stack, &err), 0);
    snprintf(args, sizeof args, "run models/import/lngelu.onnx --calib models/import/lngelu/calib "
             "--input-shape x=2x16x32 --input %s --arch eyeriss", bpath);
    out = cli(args, &st);
    if (st) fail_msg("exit %d:\n%s", st, out);
    has(out, "batch: 2 images in one program");
    has(out, "bit-exact: yes");
    has(out, "host ops: 9, 244648 cycles on the host CPU");
    free(out);
    enpu_buf_free(&d);
    enpu_buf_free(&stack);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/enpu_rs_cli_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_int8_int16),
        cmocka_unit_test(test_comparison),
        cmocka_unit_test(test_qjson_flow),
        cmocka_unit_test(test_per_cycle),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
