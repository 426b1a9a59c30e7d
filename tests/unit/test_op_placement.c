/* Where each operator runs (docs/ops.md "The operators"): the fixture
 * tests/bad/onnx/good_placement.onnx (scripts/make_bad_onnx.py) has one
 * branch per operator on one input, each node named npu_* (an NPU
 * instruction or a view) or host_* (a host op).  Compiled for the default
 * preset, every host_* node is a sync's host op and no npu_* node is; the
 * whole model runs bit-exact with the golden reference, the cost model equal
 * to the simulator, host ops included. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"

#define FIX ENPU_SOURCE_DIR "/tests/bad/onnx/"

/* Is node `name` in the sources of a sync instruction of p? */
static bool on_host(const enpu_program *p, const char *name) {
    for (int i = 0; i < p->n_instr; i++) {
        if (p->instr[i].opcode != ENPU_OPC_SYNC) continue;
        for (int k = 0; k < p->layers[i].n_src; k++)
            if (!strcmp(p->layers[i].src[k], name)) return true;
        if (p->instr[i].host_op >= 0 && !strcmp(p->hostops[p->instr[i].host_op].name, name)) return true;
    }
    return false;
}

static void test_placement(void **state) {
    (void)state;
    enpu_err err = {0};
    enpu_arch a;
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_graph *g = NULL;
    if (enpu_onnx_load(FIX "good_placement.onnx", &g, &err)) fail_msg("%s", err.msg);
    enpu_graph *qg = enpu_test_quantize(FIX "good_placement.onnx", NULL, &a);
    enpu_program p;
    enpu_compile_report rep;
    if (enpu_compile(qg, &a, NULL, &p, &rep, &err)) fail_msg("%s", err.msg);
    int n_npu = 0, n_host = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const char *nm = g->nodes[i].name;
        bool host = on_host(&p, nm);
        if (!strncmp(nm, "host_", 5)) {
            if (!host) fail_msg("node '%s' (%s) does not run on the host", nm, enpu_op_name(g->nodes[i].op));
            n_host++;
        } else {
            assert_true(!strncmp(nm, "npu_", 4));
            if (host) fail_msg("node '%s' (%s) runs on the host", nm, enpu_op_name(g->nodes[i].op));
            n_npu++;
        }
    }
    fprintf(stderr, "placement: %d nodes on the NPU (instructions or views), %d host ops\n", n_npu, n_host);
    assert_int_equal(n_host, 15);
    assert_int_equal(n_npu, 43);
    enpu_compile_report_free(&rep);
    enpu_program_free(&p);
    enpu_graph_free(qg);
    enpu_graph_free(g);

    enpu_test_e2e_result r;
    enpu_test_e2e("placement", FIX "good_placement.onnx", NULL, FIX "good_placement_in_x.npy", &a, NULL, &r);
    assert_int_equal(r.share.host_ops, 15);
    assert_int_equal(r.modelled, (int64_t)r.cycles);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
