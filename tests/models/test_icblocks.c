/* Input-channel blocks end to end (docs/offchip.md "Input-channel blocks"):
 * an fc one of whose output-channel blocks (one channel per PE) with its
 * whole input does not fit the weight memory runs as several instructions
 * over parts of its input, the sums held in the psum file between them
 * (ps_hold / ps_cont, ISA 8).  Each run is bit-exact with the golden
 * reference layer by layer in cycle and functional mode, the cost model
 * equals the simulator (enpu_test_e2e), and the cycles, instructions and
 * DRAM words are the ones docs/offchip.md states.
 *
 * Repository part: the default model on weight memories of 6, 8 and 12 KB
 * (fc1, 8x9x12 inputs, cut into blocks of input rows), of 4 KB (its
 * convolutions too, in blocks of kernel rows, row strips of one psum tile
 * each: docs/offchip.md), of 1 and 2 KB (blocks of one kernel row x one
 * 16-channel word, ISA 9's ifmap_wpp; on 1 KB fc1 in blocks of pixels) and
 * models/offchip/mlp1m on 1 KB (1x1 inputs: blocks of input words).
 * Shared part: mnist-8 on 4 KB. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"

#define REPO(rel) ENPU_SOURCE_DIR "/" rel
#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void e2e(const char *name, const char *onnx, const char *calib, const char *input, int64_t wmem,
                int n_instr, uint64_t cycles, uint64_t dram_rd) {
    enpu_arch a = enpu_test_preset("easynpu");
    a.weight_mem_bytes = wmem;
    enpu_test_e2e_result r;
    enpu_test_e2e(name, onnx, calib, input, &a, NULL, &r);
    fprintf(stderr, "%s on weight_mem_bytes %lld: %llu cycles, DRAM words read %llu, written %llu, %d instructions\n",
            name, (long long)wmem, (unsigned long long)r.cycles, (unsigned long long)r.dram_read,
            (unsigned long long)r.dram_written, r.n_instr);
    assert_int_equal(r.n_instr, n_instr);
    assert_int_equal(r.cycles, cycles);
    assert_int_equal(r.dram_read, dram_rd);
    assert_int_equal(r.dram_written, 1);
}

#define NOTE(n, rows, wmem, most)                                                                                   \
    "cut into " n " input-channel blocks of " rows " input row(s): one block of 16 output channels with its whole "     \
    "input needs 14016 bytes of weights and parameters, over weight_mem_bytes " wmem "; a block needs at most " most   \
    " bytes, its sums held in the psum file from block to block"
#define NOTE6 NOTE("8", "1", "6144", "1920")
#define NOTE8 NOTE("4", "2", "8192", "3648")
#define NOTE12 NOTE("3", "3", "12288", "5376")

#define CNOTE(wmem)                                                                                                 \
    "cut into 3 input-channel blocks of 1 kernel row(s) (every input channel; strips of at most 2 output rows, each " \
    "one psum tile): one block of 16 output channels with its whole input needs 4224 bytes of weights and "          \
    "parameters, over weight_mem_bytes " wmem "; a block needs at most 1536 bytes, its sums held in the psum file "   \
    "from block to block"

#define WNOTE(wmem, rows, conv, most)                                                                             \
    "cut into 6 input-channel blocks of 1 kernel row(s) x 1 channel word(s) (the words read through ifmap_wpp; "     \
    "strips of at most " rows " output rows, each one psum tile): one block of 16 output channels with its whole "   \
    "input needs " conv " bytes of weights and parameters, over weight_mem_bytes " wmem "; a block needs at most "   \
    most " bytes, its sums held in the psum file from block to block"

/* A layer's row (fc1's, or conv2's with kernel-row blocks) and note in the compile report (docs/offchip.md's table). */
static void report_row(int64_t wmem, const char *row, const char *note) {
    char dir[] = "/tmp/enpu_icb_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024], path[256];
    snprintf(path, sizeof path, "%s/a.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"base\": \"easynpu\", \"name\": \"w%lld\", \"weight_mem_bytes\": %lld}\n", (long long)wmem,
            (long long)wmem);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s compile %s --calib %s --arch %s -o %s/x.enpu", ENPU_CLI, REPO("models/kws_cnn.onnx"),
             REPO("models/kws_cnn/calib"), path, dir);
    char *out = NULL;
    assert_int_equal(enpu_test_run(cmd, &out), 0);
    if (!strstr(out, row)) fail_msg("weight_mem_bytes %lld: no row '%s' in:\n%s", (long long)wmem, row, out);
    if (note && !strstr(out, note)) fail_msg("weight_mem_bytes %lld: no note '%s' in:\n%s", (long long)wmem, note, out);
    if (!note && strstr(out, "input-channel blocks")) fail_msg("weight_mem_bytes %lld: blocks in:\n%s", (long long)wmem, out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
}

static void test_kws(void **state) {
    (void)state;
    static const struct {
        int64_t wmem;
        int n_instr;
        uint64_t cycles, dram_rd;
        const char *row, *note;
    } c[] = {
        /* conv2 (features.3), one output-channel block over 4224 bytes: on
         * 1 and 2 KiB one kernel row with its 28 input channels (1536
         * bytes) is over half the memory: blocks of one kernel row x one
         * 16-channel word (960 bytes, ISA 9's ifmap_wpp), conv3 too, conv4
         * in blocks of one kernel row; on 1 KiB fc1's one input row (1920
         * bytes) is over the whole memory: blocks of one pixel */
        {1024, 703, 359894, 17844, "270540     182952  1.479   68%    264       121.7/0.0", WNOTE("1024", "2", "4224", "960")},
        {2048, 447, 326486, 15348, "250720     182952  1.370   73%    264       121.7/0.0", WNOTE("2048", "2", "4224", "960")},
        /* in blocks of one kernel row with every input channel */
        {4096, 175, 322732, 10483, "250522     182952  1.369   73%    132       104.2/0.0", CNOTE("4096")},
        {6144, 47, 316508, 4167, "3799       1620  2.345   43%     32        29.9/0.0", NOTE6},
        {8192, 31, 315869, 4075, "3499       1620  2.160   46%     16        28.4/0.0", NOTE8},
        {12288, 27, 252466, 4637, "3916       1620  2.417   41%     12        28.1/0.0", NOTE12},
        /* fc1 fits (the whole memory): no input-channel blocks */
        {16384, 17, 253578, 4591, "5383       1620  3.323   30%      4        27.4/0.0", NULL},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        e2e("kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), REPO("models/kws_cnn/sample_0.npy"),
            c[i].wmem, c[i].n_instr, c[i].cycles, c[i].dram_rd);
        report_row(c[i].wmem, c[i].row, c[i].note);
    }
}

/* Fast-forward (docs/microarch.md §15) through held sums: kws_cnn on 8 KiB
 * (fc1's) and 2 KiB (conv2-4's kernel-row blocks too) runs the same with
 * and without it, and it still carries the compute. */
static void kws_fastfwd(int64_t wmem, int want_held, uint64_t want_cycles) {
    enpu_arch a = enpu_test_preset("easynpu");
    a.weight_mem_bytes = wmem;
    enpu_err err = {0};
    enpu_graph *qg = enpu_test_quantize(REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), &a);
    enpu_program p;
    enpu_buf in;
    if (enpu_compile(qg, &a, NULL, &p, NULL, &err) || enpu_tensor_read(REPO("models/kws_cnn/sample_0.npy"), &in, &err) ||
        enpu_buf_to_f32(&in, &err))
        fail_msg("%s", err.msg);
    int held = 0;
    for (int i = 0; i < p.n_instr; i++) held += p.instr[i].ps_hold != 0;
    assert_int_equal(held, want_held);
    uint64_t ff = 0, compute = 0;
    uint64_t cycles = enpu_test_assert_ff_equal_once("kws_cnn", &p, &a, &in, NULL, 1, &ff, &compute);
    fprintf(stderr, "kws_cnn on %lld: %d holding, fast-forward %llu of %llu compute cycles\n", (long long)wmem,
            held, (unsigned long long)ff, (unsigned long long)compute);
    assert_int_equal(cycles, want_cycles);
    assert_true(ff * 10 > compute * 9);
    enpu_buf_free(&in);
    enpu_program_free(&p);
    enpu_graph_free(qg);
}

static void test_kws_fastfwd(void **state) {
    (void)state;
    kws_fastfwd(8192, 6, 315869); /* fc1: 2 output-channel blocks x 3 of its 4 input-channel blocks */
    /* conv2 11 strips x 2 output-channel blocks, conv3 10 x 1, each 5 of 6
     * blocks of one kernel row x one word; conv4 4 x 1, 2 of 3 kernel-row
     * blocks; fc1 2 x 7 of 8 (2 KiB) or 2 x 71 of 72 pixels (1 KiB) */
    kws_fastfwd(2048, 182, 326486);
    kws_fastfwd(1024, 310, 359894);
}

static void test_mlp1m(void **state) {
    (void)state;
    e2e("mlp1m", REPO("models/offchip/mlp1m.onnx"), REPO("models/offchip/mlp1m/calib"),
        REPO("models/offchip/mlp1m/sample_0.npy"), 1024, 8291, 315063, 149020);
}

static void test_mnist(void **state) {
    (void)state;
    e2e("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"), SM("mnist-8/test_data_set_1/input_0.pb"),
        4096, 17, 52465, 1315);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws),
        cmocka_unit_test(test_kws_fastfwd),
        cmocka_unit_test(test_mlp1m),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
