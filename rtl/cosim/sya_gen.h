// The programs the systolic co-simulation runs: a model compiled as every
// command compiles it, and random layers after tests/unit/test_systolic.c's
// generator (convolutions with groups, strides, padding, dilation and a
// fused Relu; depthwise convolutions; average pooling; fully connected
// layers; chains of them), each on the RTL's arch with its controller
// parameters (scheme, handshake, fetch and decode cycles) drawn anew.
#ifndef ENPU_RTL_SYA_GEN_H
#define ENPU_RTL_SYA_GEN_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "easynpu/compiler.h"
#include "easynpu/ir.h"
#include "easynpu/onnx.h"
#include "easynpu/quant.h"
#include "easynpu/tensor_io.h"

struct sya_rng {
    uint64_t s;
    explicit sya_rng(uint64_t seed) : s(seed) {}
    uint64_t next() { // splitmix64, as the tests
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    int rr(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }
    double nrand() {
        double u = ((double)(next() >> 11) + 1) / 9007199254740993.0, v = (double)(next() >> 11) / 9007199254740992.0;
        return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
    }
};

// Quantizes g (calibrated on cal, or on no data) with `bits`-bit data (8,
// or 16 for the row-stationary engine) and compiles it for a.
static inline int sya_gen_compile(enpu_graph *g, const enpu_buf *cal, int n_cal, const enpu_arch *a,
                                  enpu_program *prog, std::string &e, int bits = 8) {
    enpu_err err{};
    enpu_quant_opts qo;
    enpu_compile_quant_opts(a, &qo);
    qo.quiet = true;
    qo.bits = bits;
    enpu_graph *qg = nullptr;
    int rc = enpu_quantize_graph(g, cal, n_cal, &qo, &qg, nullptr, &err);
    if (!rc) rc = enpu_compile(qg, a, nullptr, prog, nullptr, &err);
    if (rc) e = err.msg;
    enpu_graph_free(qg);
    return rc;
}

static inline int sya_gen_model(const char *onnx, const char *calib, const char *input, const enpu_arch *a,
                                enpu_program *prog, enpu_buf *x, std::string &e) {
    enpu_err err{};
    enpu_graph *g = nullptr;
    if (enpu_onnx_load(onnx, &g, &err)) {
        e = err.msg;
        return -1;
    }
    enpu_buf *cal = nullptr;
    int n_cal = 0, rc = enpu_calib_load(g, calib, &cal, &n_cal, &err);
    if (rc) e = err.msg;
    if (!rc) rc = sya_gen_compile(g, cal, n_cal, a, prog, e);
    if (!rc && (rc = enpu_tensor_read(input, x, &err))) e = err.msg;
    enpu_calib_free(cal, n_cal * g->n_inputs);
    enpu_graph_free(g);
    return rc;
}

// The controller's parameters drawn anew (the RTL's structure stays).
static inline enpu_arch sya_gen_vary(sya_rng &r, const enpu_arch &base) {
    enpu_arch a = base;
    static const int schemes[] = {0, 1, 3, 4};
    a.sya_scheme = schemes[r.rr(0, 3)];
    a.sya_cfg_cycles = r.rr(0, 2);
    a.instr_fetch_cycles = r.rr(1, 4), a.decode_cycles = r.rr(0, 2);
    a.host_sync_cycles = r.rr(0, 20), a.hostcpu_op_cycles = r.rr(0, 400);
    return a;
}

namespace sya_gen_detail {

static inline int tensor(enpu_graph *g, const char *name, int rank, const int64_t *dims) {
    enpu_err err{};
    return enpu_graph_add_tensor(g, name, ENPU_DT_FLOAT32, rank, dims, &err);
}
static inline int rconst(sya_rng &r, enpu_graph *g, const char *name, int rank, const int64_t *dims, double sd) {
    int t = tensor(g, name, rank, dims);
    int64_t n = enpu_tensor_numel(&g->tensors[t]);
    float *v = (float *)std::malloc((size_t)n * sizeof(float) + 4);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(sd * r.nrand());
    enpu_tensor_set_data(&g->tensors[t], v);
    return t;
}
static inline int node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in) {
    enpu_err err{};
    char o[64];
    std::snprintf(o, sizeof o, "%s_out", name);
    int out = tensor(g, o, -1, nullptr);
    enpu_graph_add_node(g, name, op, n_in, in, 1, &out, &err);
    return out;
}
static inline void window(enpu_window *w, int k, int s, int p, int d) {
    w->kernel[0] = w->kernel[1] = k, w->stride[0] = w->stride[1] = s;
    w->dilation[0] = w->dilation[1] = d;
    for (int i = 0; i < 4; i++) w->pads[i] = p;
}
static inline int conv(sya_rng &r, enpu_graph *g, const char *name, int x, int ci, int co, int k, int s, int p, int d,
                       int group) {
    int64_t wd[4] = {co, ci / group, k, k}, bd[1] = {co};
    char wn[64], bn[64];
    std::snprintf(wn, sizeof wn, "%s_w", name), std::snprintf(bn, sizeof bn, "%s_b", name);
    int in[3] = {x, rconst(r, g, wn, 4, wd, 0.3), rconst(r, g, bn, 1, bd, 0.1)};
    int y = node(g, name, ENPU_OP_CONV, 3, in);
    window(&g->nodes[g->n_nodes - 1].attr.conv.w, k, s, p, d);
    g->nodes[g->n_nodes - 1].attr.conv.group = group;
    return y;
}
static inline int64_t extent(int64_t in, int k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

} // namespace sya_gen_detail

// A random chain of 1..3 array layers on a random input, `bits`-bit data;
// name describes it.
static inline int sya_gen_random(sya_rng &r, const enpu_arch *a, enpu_program *prog, enpu_buf *x, std::string &name,
                                 std::string &e, int bits = 8) {
    using namespace sya_gen_detail;
    enpu_graph *g = enpu_graph_new("rand");
    int64_t C = r.rr(1, 24), H = r.rr(1, 9), W = r.rr(1, 9);
    int64_t d[4] = {1, C, H, W};
    enpu_err err{};
    int t = tensor(g, "x", 4, d);
    enpu_graph_add_input(g, t, &err);
    char desc[64];
    std::snprintf(desc, sizeof desc, "%dx%dx%d:", (int)C, (int)H, (int)W);
    name = desc;
    int n = r.rr(1, 3);
    bool flat = false;
    for (int i = 0; i < n && !flat; i++) {
        char nm[32];
        std::snprintf(nm, sizeof nm, "l%d", i);
        int kind = r.rr(0, 6);
        int k = r.rr(1, 3), s = r.rr(1, 2), dl = r.rr(1, 2), p = r.rr(0, k - 1);
        if (H + 2 * p < dl * (k - 1) + 1 || W + 2 * p < dl * (k - 1) + 1) k = 1, dl = 1, p = 0;
        if (kind <= 2) {
            int co = r.rr(1, 80), grp = (C % 2 == 0 && co % 2 == 0 && r.rr(0, 2) == 0) ? 2 : 1;
            t = conv(r, g, nm, t, (int)C, co, k, s, p, dl, grp);
            std::snprintf(desc, sizeof desc, " conv%dx%d/%d p%d d%d g%d ->%d", k, k, s, p, dl, grp, co);
            if (r.rr(0, 1)) {
                char rn[32];
                std::snprintf(rn, sizeof rn, "r%d", i);
                int in1[1] = {t};
                t = node(g, rn, ENPU_OP_RELU, 1, in1);
                g->nodes[g->n_nodes - 1].attr.act.min = 0, g->nodes[g->n_nodes - 1].attr.act.max = INFINITY;
                std::strcat(desc, "+relu");
            }
            C = co;
        } else if (kind == 3) {
            t = conv(r, g, nm, t, (int)C, (int)C, k, s, p, dl, (int)C);
            std::snprintf(desc, sizeof desc, " dw%dx%d/%d p%d d%d", k, k, s, p, dl);
        } else if (kind == 4) {
            if (H + 2 * p < k || W + 2 * p < k) k = 1, p = 0;
            int in1[1] = {t};
            t = node(g, nm, ENPU_OP_AVGPOOL, 1, in1);
            window(&g->nodes[g->n_nodes - 1].attr.pool.w, k, s, p, 1);
            g->nodes[g->n_nodes - 1].attr.pool.count_include_pad = true;
            dl = 1;
            std::snprintf(desc, sizeof desc, " avgpool%dx%d/%d p%d", k, k, s, p);
        } else {
            // Flatten + Gemm: the fully connected layer over the stored map
            int in1[1] = {t};
            t = node(g, "flat", ENPU_OP_FLATTEN, 1, in1);
            g->nodes[g->n_nodes - 1].attr.shape.axis = 1;
            int nout = r.rr(1, 80);
            int64_t wd[2] = {nout, C * H * W}, bd[1] = {nout};
            int in3[3] = {t, rconst(r, g, "fc_w", 2, wd, 0.1), rconst(r, g, "fc_b", 1, bd, 0.1)};
            t = node(g, "fc", ENPU_OP_GEMM, 3, in3);
            enpu_gemm_attr *ga = &g->nodes[g->n_nodes - 1].attr.gemm;
            ga->alpha = ga->beta = 1, ga->trans_b = true;
            std::snprintf(desc, sizeof desc, " fc ->%d", nout);
            flat = true;
        }
        name += desc;
        if (!flat) H = extent(H, k, s, p, dl), W = extent(W, k, s, p, dl);
    }
    int rc = enpu_graph_add_output(g, t, &err);
    if (!rc) rc = enpu_graph_toposort(g, &err);
    if (!rc) rc = enpu_graph_infer_shapes(g, &err);
    if (!rc) rc = enpu_graph_validate(g, &err);
    if (rc) e = err.msg;
    if (!rc) rc = sya_gen_compile(g, nullptr, 0, a, prog, e, bits);
    if (!rc) {
        const enpu_tensor *xt = &g->tensors[g->inputs[0]];
        if ((rc = enpu_buf_alloc(x, ENPU_DT_FLOAT32, xt->rank, xt->dims, &err))) e = err.msg;
        else
            for (int64_t i = 0; i < enpu_buf_numel(x); i++) ((float *)x->data)[i] = (float)r.nrand();
    }
    enpu_graph_free(g);
    return rc;
}

#endif
