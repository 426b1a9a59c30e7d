/* The compiler on the real models: the default keyword-spotting CNN
 * (models/kws_cnn.onnx, calibrated on models/kws_cnn/calib) and, from
 * ../shared/models, mnist-8, alibaba-kws and mlperf-vww-float (on the
 * `large` preset: it does not fit `easynpu`, which must say so clearly).
 * For each: compile succeeds, the program passes the loader's validation
 * (write + enpu_program_read), every layer's output computed by the ISA
 * interpreter equals the golden reference bit for bit, and the modelled
 * cycles of every conv / dwconv / fc layer whose channel counts are
 * multiples of 16 are within 15% of its ideal (MACs / PEs) -- beyond the
 * layer's parameter load (bias and requantization words read before its
 * first MAC, docs/microarch.md §11.3), which is the one hardware limit that
 * keeps small layers with many channels above it (printed when it does).
 * For the KWS model the per-layer table is printed and the overall
 * utilization must be at least 75% (issue 8's target).  The real test
 * models run in the part test_compile_models:shared, skipped when their
 * folder is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/tensor_io.h"
#include "testutil.h"
#include "../unit/isa_interp.h"

static uint64_t rs = 99;
static double nrand(void) {
    uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = ((double)(z >> 11) + 0.5) / 9007199254740992.0;
    z = (rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    double v = (double)(z >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}


/* Compiles, checks validation round trip, bit-exactness and the 15% rule;
 * returns the overall utilization. */
static double check_model(const char *model, const char *calib, const char *arch) {
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_load(arch, &a, &err), 0);
    enpu_graph *qg = enpu_test_quantize(model, calib, &a);
    enpu_program p, q;
    enpu_compile_report rep;
    if (enpu_compile(qg, &a, NULL, &p, &rep, &err)) fail_msg("compile %s: %s", model, err.msg);
    char path[] = "/tmp/enpu_test_models_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(enpu_program_write(path, &p, &err), 0);
    if (enpu_program_read(path, &a, &q, &err)) fail_msg("read back %s: %s", model, err.msg);
    unlink(path);
    assert_int_equal(enpu_program_validate(&q, &err), 0);
    /* bit-exact against the golden reference */
    enpu_gexec *ex;
    if (enpu_gexec_new(qg, &ex, &err)) fail_msg("%s", err.msg);
    enpu_buf *in = calloc((size_t)qg->n_inputs, sizeof *in);
    for (int k = 0; k < qg->n_inputs; k++) {
        const enpu_tensor *t = &qg->tensors[qg->inputs[k]];
        assert_int_equal(enpu_buf_alloc(&in[k], ENPU_DT_FLOAT32, t->rank, t->dims, &err), 0);
        float *v = in[k].data;
        for (int64_t e = 0; e < enpu_buf_numel(&in[k]); e++) v[e] = (float)nrand();
    }
    if (enpu_gexec_run(ex, in, &err)) fail_msg("%s", err.msg);
    int checked = run_check(&q, qg, ex);
    int stored = 0;
    for (int i = 0; i < q.n_instr; i++) stored += q.layers[i].io >= 0 && q.instr[i].opcode != ENPU_OPC_SYNC;
    assert_int_equal(checked, stored);
    /* the 15% rule */
    printf("%s on %s: %d instructions, %d layer outputs checked bit-exact against the golden reference\n",
           model, arch, q.n_instr, checked);
    printf("  %-40s %-8s %10s %10s %10s %7s %6s\n", "layer", "op", "modelled", "ideal", "params", "ratio", "util");
    for (int i = 0; i < rep.n_layers; i++) {
        const enpu_layer_report *l = &rep.layers[i];
        double ratio = l->ideal_cycles ? (double)l->modelled_cycles / (double)l->ideal_cycles : 0;
        printf("  %-40.40s %-8s %10lld %10lld %10lld %7.3f %5.1f%%\n", l->name, l->op, (long long)l->modelled_cycles,
               (long long)l->ideal_cycles, (long long)l->param_words, ratio,
               l->modelled_cycles ? 100.0 * (double)l->macs / (double)(a.pes * l->modelled_cycles) : 0.0);
        bool convlike = !strcmp(l->op, "conv") || !strcmp(l->op, "conv_relu") || !strcmp(l->op, "dwconv") ||
                        !strcmp(l->op, "fc");
        if (!convlike || l->in[2] % a.pes || l->out[2] % a.pes || l->fused[0]) continue;
        int64_t limit = l->ideal_cycles + l->ideal_cycles * 15 / 100;
        if (l->modelled_cycles <= limit) continue;
        /* over 15%: only by the parameter load (§11.3: bias + quant words,
         * one per cycle, plus the weight memory latency, before the first MAC) */
        int64_t fill = l->param_words + a.weight_mem_latency + 1;
        printf("    ^ over 15%% of ideal by %lld cycles; its parameter load is %lld cycles\n",
               (long long)(l->modelled_cycles - l->ideal_cycles), (long long)fill);
        if (l->modelled_cycles - fill > limit)
            fail_msg("%s: layer '%s' (%s): modelled %lld cycles, ideal %lld, parameter load %lld: more than "
                     "15%% over ideal even without it",
                     model, l->name, l->op, (long long)l->modelled_cycles, (long long)l->ideal_cycles,
                     (long long)fill);
    }
    double util = (double)rep.total_macs / ((double)a.pes * (double)rep.total_modelled);
    printf("  total: %lld MACs, ideal %lld, modelled %lld cycles, utilization %.2f%%\n", (long long)rep.total_macs,
           (long long)rep.total_ideal, (long long)rep.total_modelled, 100 * util);
    for (int k = 0; k < qg->n_inputs; k++) enpu_buf_free(&in[k]);
    free(in);
    enpu_gexec_free(ex);
    enpu_program_free(&p);
    enpu_program_free(&q);
    enpu_compile_report_free(&rep);
    enpu_graph_free(qg);
    return util;
}

static void test_kws_default(void **state) {
    (void)state;
    double util = check_model("models/kws_cnn.onnx", "models/kws_cnn/calib", "easynpu");
    if (util < 0.75) fail_msg("KWS utilization %.2f%% below the 75%% target", 100 * util);
}

static void test_mnist(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model("mnist-8/model.onnx");
    check_model(m, NULL, "easynpu");
}

static void test_alibaba(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model("alibaba-kws/model.onnx");
    check_model(m, NULL, "easynpu");
}

static void test_vww(void **state) {
    (void)state;
    const char *m = enpu_test_shared_model("mlperf-vww-float/model.onnx");
    /* does not fit the default preset's on-chip memories: with its DRAM it
     * streams; without, a clear error */
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_graph *qg = enpu_test_quantize(m, NULL, &a);
    enpu_program p;
    enpu_compile_report rep;
    if (enpu_compile(qg, &a, NULL, &p, &rep, &err)) fail_msg("%s", err.msg);
    assert_true(rep.offchip);
    enpu_compile_report_free(&rep);
    enpu_program_free(&p);
    a.dram_bytes = 0;
    assert_int_equal(enpu_compile(qg, &a, NULL, &p, &rep, &err), ENPU_E_NOFIT);
    printf("mlperf-vww-float on easynpu: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "1x3x96x96"));
    assert_non_null(strstr(err.msg, "needs 147456 bytes of main DTCM"));
    assert_non_null(strstr(err.msg, "arch 'easynpu' has 65536"));
    assert_non_null(strstr(err.msg, "use --arch large (524288) or main_dtcm_bytes >= "));
    enpu_program_free(&p);
    enpu_graph_free(qg);
    check_model(m, NULL, "large");
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_kws_default),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba),
        cmocka_unit_test(test_vww),
    };
    return ENPU_TEST_MAIN_PARTS(argc, argv, repo, shared);
}
