/* The row-stationary engine's functional mode: each rs_conv computed
 * directly from DRAM to DRAM -- the ifmap, the filters and (bias, M, S) read
 * where the instruction's layout puts them (include/easynpu/rowstat.h) --
 * with the numerics of the golden reference; no time.  The cycle engine
 * must write the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/rowstat/rs_sim.h"

static int64_t get_le(const uint8_t *p, int bytes) { return rs_glb_get(p, 0, bytes); }

typedef struct rd_ctx {
    const uint8_t *base; /* rs_weight_addr's first byte */
    int64_t es;
    int64_t *w, *bias;
    uint32_t *M;
    int *S;
} rd_ctx;

static void rd_w(void *ctx, int64_t byte, int64_t idx) {
    rd_ctx *r = ctx;
    r->w[idx] = get_le(r->base + byte, (int)r->es);
}

static void rd_p(void *ctx, int64_t byte, int64_t ch) {
    rd_ctx *r = ctx;
    r->bias[ch] = get_le(r->base + byte, 8);
    r->M[ch] = (uint32_t)get_le(r->base + byte + 8, 4);
    r->S[ch] = (int)get_le(r->base + byte + 12, 4);
}

int rs_func_conv(const enpu_arch *a, const enpu_instr *in, uint8_t *dram, enpu_err *err) {
    enpu_rs_geom g;
    int rc = enpu_rs_geom_of(a, in, &g, err);
    if (rc) return rc;
    const int64_t wb = g.wb, es = g.es, K = g.cpg * in->hk * in->wk;
    int64_t *w = malloc((size_t)(in->co * K) * sizeof *w);
    int64_t *bias = malloc((size_t)in->co * sizeof *bias);
    uint32_t *M = malloc((size_t)in->co * sizeof *M);
    int *S = malloc((size_t)in->co * sizeof *S);
    if (!w || !bias || !M || !S) {
        free(w), free(bias), free(M), free(S);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    rd_ctx r = {dram + in->rs_weight_addr * wb, es, w, bias, M, S};
    enpu_rs_weight_layout(&g, in, rd_w, rd_p, &r);
    uint8_t *out = dram;
    for (int64_t img = 0; img < g.n; img++) {
        const int64_t ifmap = in->rs_ifmap_addr + img * g.ifmap_img_words, ofmap = in->rs_ofmap_addr + img * g.ofmap_img_words;
        for (int64_t co = 0; co < in->co; co++) {
            int64_t grp = co / g.opg;
            for (int64_t oy = 0; oy < in->ho; oy++)
                for (int64_t ox = 0; ox < in->wo; ox++) {
                    int64_t acc = bias[co];
                    for (int64_t c = 0; c < g.cpg; c++)
                        for (int64_t ky = 0; ky < in->hk; ky++)
                            for (int64_t kx = 0; kx < in->wk; kx++) {
                                int64_t iy = oy * in->stride_h - in->pad_top + ky, ix = ox * in->stride_w - in->pad_left + kx;
                                int64_t x = in->rs_zp_in;
                                if (iy >= 0 && iy < in->hi && ix >= 0 && ix < in->wi)
                                    x = get_le(dram + (ifmap + (iy * in->wi + ix) * g.wpp_in) * wb +
                                                   (grp * g.cpg + c) * es, (int)es);
                                acc += x * w[co * K + (c * in->hk + ky) * in->wk + kx];
                            }
                    int32_t y = es == 2 ? enpu_requant_wide(acc, M[co], S[co], (int32_t)in->rs_zp_out, (int32_t)in->rs_lo,
                                                            (int32_t)in->rs_hi)
                                        : enpu_requant(acc, M[co], S[co], (int32_t)in->rs_zp_out, (int32_t)in->rs_lo,
                                                       (int32_t)in->rs_hi);
                    rs_glb_put(out, (ofmap + (oy * in->wo + ox) * g.wpp_out) * wb + co * es, (int)es, y);
                }
        }
    }
    free(w), free(bias), free(M), free(S);
    return 0;
}

static int func_create(enpu_sim *sim, void **out, enpu_err *err) {
    (void)sim, (void)err;
    *out = NULL;
    return 0;
}

static void func_free(void *st) { (void)st; }

static int func_run(void *st, enpu_sim *sim, enpu_err *err) {
    (void)st;
    const enpu_program *p = sim->prog;
    int rc = 0;
    for (int i = 0; i < p->n_instr && !rc; i++) {
        const enpu_instr *in = &p->instr[i];
        if (in->opcode == ENPU_OPC_SYNC) rc = sim_host_op(sim, i, err);
        else if (in->opcode == ENPU_OPC_RS_CONV && !(rc = rs_func_conv(&sim->arch, in, sim->mem.dram, err)))
            rc = sim_layer_done(sim, i, err);
    }
    return rc;
}

const enpu_sim_engine sim_engine_rowstat_functional = {"rowstat", ENPU_ENGINE_ROWSTAT, ENPU_SIM_FUNCTIONAL,
                                                       func_create, func_free, func_run};
