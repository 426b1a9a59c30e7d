/* End to end on real models: import -> quantize -> compile -> simulate in
 * both modes -> every layer output the program stores (its LAYERS probe)
 * compared with the golden int8 reference (enpu_gexec) right after the layer
 * ran, element by element; the outputs too.  And the compiler's modelled
 * cycles (enpu_cost_program) within 5% of the simulated cycles per layer
 * (a table of the layers that are not is printed).  Models: ../shared/models
 * mnist-8, alibaba-kws, mlperf-vww-float (arch large) and the default
 * models/kws_cnn.onnx.  Skips (77) when ../shared/models is absent. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

typedef struct mctx {
    const enpu_graph *qg;
    enpu_gexec *ex;
    int compared;
    const char *model;
} mctx;

/* Called after every chain and host op: compares the stored outputs of its
 * instructions with the golden tensors of the same names. */
static int check_layer(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim,
                       enpu_err *err) {
    (void)st;
    mctx *m = ctx;
    const enpu_program *p = enpu_sim_program(sim);
    int n = 1;
    if (enpu_opcode_class(p->instr[layer].opcode) != ENPU_CLASS_CTRL)
        while (p->instr[layer + n - 1].fuse_next) n++;
    for (int i = layer; i < layer + n; i++) {
        const enpu_layer_info *li = &p->layers[i];
        if (li->io < 0 || !li->tensor || !li->tensor[0]) continue;
        const enpu_io_desc *d = &p->io[li->io];
        if (d->mem == ENPU_MEM_HOST || d->dtype != ENPU_DT_INT8) continue;
        int t = enpu_graph_find_tensor(m->qg, li->tensor);
        if (t < 0)
            return enpu_fail(err, ENPU_E_INVALID, "%s: layer %d: tensor '%s' not in the graph",
                             m->model, i, li->tensor);
        const int8_t *want = enpu_gexec_value_i8(m->ex, t);
        int64_t numel = enpu_tensor_numel(&m->qg->tensors[t]);
        int64_t n_d = 1;
        for (int k = 0; k < d->rank; k++) n_d *= d->dims[k];
        if (!want || n_d != numel)
            return enpu_fail(err, ENPU_E_INVALID, "%s: layer %d: tensor '%s' has %lld elements, its "
                             "descriptor %lld", m->model, i, li->tensor, (long long)numel,
                             (long long)n_d);
        int8_t *got = malloc((size_t)numel);
        int rc = enpu_sim_read_tensor(sim, d, got, numel, err);
        for (int64_t e = 0; !rc && e < numel; e++) {
            if (got[e] == want[e]) continue;
            /* coordinate in the NCHW user order */
            const enpu_tensor *tt = &m->qg->tensors[t];
            int64_t W = tt->rank >= 4 ? tt->dims[3] : 1, H = tt->rank >= 4 ? tt->dims[2] : 1;
            int64_t C = tt->rank >= 2 ? tt->dims[1] : 1;
            int64_t w = tt->rank >= 4 ? e % W : e, h = tt->rank >= 4 ? (e / W) % H : 0;
            int64_t c = tt->rank >= 4 ? (e / (W * H)) % C : 0;
            rc = enpu_fail(err, ENPU_E_MISMATCH,
                           "%s: layer %d '%s' (%s): tensor '%s' element %lld (c=%lld, h=%lld, "
                           "w=%lld): simulator %d, golden %d, written at cycle %llu",
                           m->model, i, li->name, enpu_opcode_mnemonic(p->instr[i].opcode),
                           li->tensor, (long long)e, (long long)c, (long long)h, (long long)w,
                           got[e], want[e],
                           (unsigned long long)enpu_sim_write_cycle(sim, d, e));
        }
        free(got);
        if (rc) return rc;
        m->compared++;
    }
    return 0;
}

static void run_model(const char *name, const char *onnx, const char *calib, const char *input,
                      const char *arch_name) {
    enpu_err err = {0};
    enpu_graph *g = NULL, *qg = NULL;
    enpu_arch arch;
    assert_int_equal(enpu_arch_load(arch_name, &arch, &err), 0);
    if (enpu_onnx_load(onnx, &g, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        fail();
    }
    enpu_buf *cal = NULL;
    int n_cal = 0;
    if (enpu_calib_load(g, calib, &cal, &n_cal, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        fail();
    }
    enpu_quant_opts qo;
    enpu_quant_opts_default(&qo);
    qo.mult_bits = (int)arch.mult_bits;
    qo.acc_bits = (int)arch.acc_bits;
    qo.act_segments = (int)arch.act_segments;
    qo.quiet = true;
    if (enpu_quantize_graph(g, cal, n_cal, &qo, &qg, NULL, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        fail();
    }
    enpu_program prog;
    if (enpu_compile(qg, &arch, NULL, &prog, NULL, &err)) {
        fprintf(stderr, "%s: compile: %s\n", name, err.msg);
        fail();
    }
    enpu_buf in;
    assert_int_equal(enpu_tensor_read(input, &in, &err), 0);
    assert_int_equal(enpu_buf_to_f32(&in, &err), 0);
    /* the golden reference on the same input */
    mctx m = {qg, NULL, 0, name};
    assert_int_equal(enpu_gexec_new(qg, &m.ex, &err), 0);
    if (enpu_gexec_run(m.ex, &in, &err)) {
        fprintf(stderr, "%s: golden: %s\n", name, err.msg);
        fail();
    }
    int64_t *model_cycles = calloc((size_t)prog.n_instr, sizeof(int64_t));
    int64_t model_total = enpu_cost_program(&prog, model_cycles, NULL);
    uint64_t sim_cycles = 0;
    for (int mode = 0; mode < 2; mode++) {
        enpu_sim_opts o = {0};
        o.mode = mode ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        o.check = mode == 0;
        o.on_layer = check_layer;
        o.cb_ctx = &m;
        m.compared = 0;
        enpu_sim *sim = NULL;
        enpu_sim_result res;
        if (enpu_sim_new(&prog, &arch, &o, &sim, &err)) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            fail();
        }
        if (enpu_sim_run(sim, &in, 1, &res, &err)) {
            fprintf(stderr, "%s (%s mode): %s\n", name, enpu_sim_mode_name(o.mode), err.msg);
            fail();
        }
        assert_true(m.compared > 0);
        /* outputs equal the golden's, bit for bit (floats of a host op too) */
        assert_int_equal(res.n_outputs, qg->n_outputs);
        for (int i = 0; i < res.n_outputs; i++) {
            enpu_buf gold;
            assert_int_equal(enpu_gexec_output(m.ex, i, &gold, &err), 0);
            int64_t n = enpu_buf_numel(&gold);
            assert_int_equal(enpu_buf_numel(&res.outputs[i]), n);
            assert_memory_equal(gold.data, res.outputs[i].data, (size_t)n * sizeof(float));
            enpu_buf_free(&gold);
        }
        if (mode == 0) {
            assert_true(res.bit_exact);
            sim_cycles = res.total_cycles;
            fprintf(stderr, "%s on %s: %llu cycles (modelled %lld), utilization %.1f%%, %d layer "
                            "outputs bit-exact with the golden reference\n",
                    name, arch.name, (unsigned long long)res.total_cycles, (long long)model_total,
                    100.0 * res.utilization, m.compared);
            int bad = 0;
            for (int i = 0; i < res.n_layers; i++) {
                double s = (double)res.layers[i].cycles, c = (double)model_cycles[i];
                if (fabs(s - c) > 0.05 * s && fabs(s - c) > 0) {
                    if (!bad++)
                        fprintf(stderr, "  layers whose modelled cycles are not within 5%% of the "
                                        "simulated:\n  %4s %-28s %-8s %10s %10s\n",
                                "#", "layer", "op", "simulated", "modelled");
                    fprintf(stderr, "  %4d %-28.28s %-8s %10.0f %10.0f\n", i, res.layers[i].name,
                            res.layers[i].op, s, c);
                }
            }
            assert_int_equal(bad, 0);
        } else {
            assert_int_equal(res.total_cycles, 0);
        }
        enpu_sim_result_free(&res);
        enpu_sim_free(sim);
    }
    assert_true(sim_cycles > 0);
    free(model_cycles);
    enpu_gexec_free(m.ex);
    enpu_buf_free(&in);
    enpu_program_free(&prog);
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(qg);
    enpu_graph_free(g);
}

#define SM(rel) ENPU_SHARED_MODELS "/" rel

static void test_kws_cnn(void **state) {
    (void)state;
    run_model("kws_cnn", ENPU_SOURCE_DIR "/models/kws_cnn.onnx", ENPU_SOURCE_DIR "/models/kws_cnn/calib",
              ENPU_SOURCE_DIR "/models/kws_cnn/sample_0.npy", "easynpu");
}

static void test_mnist(void **state) {
    (void)state;
    run_model("mnist-8", SM("mnist-8/model.onnx"), SM("mnist-8/test_data_set_0"),
              SM("mnist-8/test_data_set_1/input_0.pb"), "easynpu");
}

static void test_alibaba_kws(void **state) {
    (void)state;
    run_model("alibaba-kws", SM("alibaba-kws/model.onnx"), SM("alibaba-kws/test_data_set_0"),
              SM("alibaba-kws/test_data_set_0/input_0.pb"), "easynpu");
}

static void test_vww(void **state) {
    (void)state;
    run_model("mlperf-vww-float", SM("mlperf-vww-float/model.onnx"),
              SM("mlperf-vww-float/test_data_set_0"), SM("mlperf-vww-float/test_data_set_1/input_0.pb"),
              "large");
}

int main(void) {
    if (!enpu_test_have_shared_models()) return ENPU_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kws_cnn),
        cmocka_unit_test(test_mnist),
        cmocka_unit_test(test_alibaba_kws),
        cmocka_unit_test(test_vww),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
