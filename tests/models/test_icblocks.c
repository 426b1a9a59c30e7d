/* Input-channel blocks end to end (docs/offchip.md "Input-channel blocks"):
 * an fc one of whose output-channel blocks (one channel per PE) with its
 * whole input does not fit the weight memory runs as several instructions
 * over parts of its input, the sums held in the psum file between them
 * (ps_hold / ps_cont, ISA 7).  Each run is bit-exact with the golden
 * reference layer by layer in cycle and functional mode, the cost model
 * equals the simulator (enpu_test_e2e), and the cycles, instructions and
 * DRAM words are the ones docs/offchip.md states.
 *
 * Repository part: the default model on weight memories of 6, 8 and 12 KB
 * (fc1, 8x9x12 inputs, cut into blocks of input rows) and
 * models/offchip/mlp1m on 1 KB (1x1 inputs: blocks of input words).
 * Shared part: mnist-8 on 4 KB. */
#include "testutil.h"

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

static void test_kws(void **state) {
    (void)state;
    static const struct {
        int64_t wmem;
        int n_instr;
        uint64_t cycles, dram_rd;
    } c[] = {
        {6144, 47, 316508, 4167},
        {8192, 31, 315869, 4075},
        {12288, 27, 252466, 4637},
        {16384, 17, 253578, 4591}, /* fc1 fits: no input-channel blocks */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        e2e("kws_cnn", REPO("models/kws_cnn.onnx"), REPO("models/kws_cnn/calib"), REPO("models/kws_cnn/sample_0.npy"),
            c[i].wmem, c[i].n_instr, c[i].cycles, c[i].dram_rd);
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
        cmocka_unit_test(test_mlp1m),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
