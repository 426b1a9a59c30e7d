/* Checking a simulation against the golden reference (int8, or int16 for a
 * 16-bit graph), layer by layer:
 * after each instruction chain, every layer output the program stores is read
 * back from the simulated memory and compared element by element with the
 * golden tensor of the same name (the program's LAYERS section names it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/quant.h"
#include "easynpu/sim.h"

static void fmt_dims(char *buf, size_t n, int rank, const int64_t *dims) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Equal shapes up to leading 1-dims. */
static bool same_shape(int ra, const int64_t *a, int rb, const int64_t *b) {
    while (ra > rb && a[0] == 1) a++, ra--;
    while (rb > ra && b[0] == 1) b++, rb--;
    if (ra != rb) return false;
    for (int i = 0; i < ra; i++)
        if (a[i] != b[i]) return false;
    return true;
}

int enpu_golden_check_match(const struct enpu_graph *qg, const enpu_program *p, enpu_err *err) {
    static const char *const dirs[] = {"input", "output", "host-op tensor", "layer output"};
    for (int i = 0; i < p->n_io; i++) {
        const enpu_io_desc *d = &p->io[i];
        int64_t dims[ENPU_MAX_RANK];
        enpu_io_user_dims(d, dims);
        char want[160], have[160];
        fmt_dims(want, sizeof want, d->rank, dims);
        int t = enpu_graph_find_tensor(qg, d->name);
        const enpu_tensor *tt = t >= 0 ? &qg->tensors[t] : NULL;
        if (!tt || tt->rank < 0)
            return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                             "the program's %s '%s' %s is not a tensor of this model (was the program "
                             "compiled from it?)",
                             dirs[d->dir <= ENPU_IO_PROBE ? d->dir : 0], d->name, want);
        if (!same_shape(tt->rank, tt->dims, d->rank, dims)) {
            fmt_dims(have, sizeof have, tt->rank, tt->dims);
            return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                             "tensor '%s' has shape %s in this model but %s in the program (was the "
                             "program compiled from it?)", d->name, have, want);
        }
        if (d->dtype != ENPU_DT_INT8 && d->dtype != ENPU_DT_INT16) continue;
        float s = tt->quant && tt->quant->count >= 1 ? tt->quant->scale[0] : 0.0f;
        int32_t z = tt->quant && tt->quant->count >= 1 ? tt->quant->zero_point[0] : 0;
        if (tt->dtype != d->dtype)
            return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                             "tensor '%s' is %s in this model but %s in the program (was the "
                             "program compiled from it?)", d->name, enpu_dtype_name(tt->dtype),
                             enpu_dtype_name(d->dtype));
        if (s != d->scale || z != d->zero_point)
            return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                             "tensor '%s' has scale %.9g zero point %d in this model but scale %.9g "
                             "zero point %d in the program (was the program compiled from it?)",
                             d->name, (double)s, (int)z, (double)d->scale, (int)d->zero_point);
    }
    return 0;
}

int enpu_golden_check_layer(void *ctx, int layer, const enpu_layer_stats *st, const enpu_sim *sim,
                            enpu_err *err) {
    (void)st;
    enpu_golden_check *g = ctx;
    const enpu_program *p = enpu_sim_program(sim);
    /* The callback names the chain head; its fused members run with it. */
    int n = enpu_opcode_class(p->instr[layer].opcode) != ENPU_CLASS_CTRL
                ? enpu_program_chain_len(p, layer)
                : 1;
    for (int i = layer; i < layer + n; i++) {
        const enpu_layer_info *li = &p->layers[i];
        if (li->io < 0 || !li->tensor || !li->tensor[0]) continue;
        const enpu_io_desc *d = &p->io[li->io];
        if (d->mem == ENPU_MEM_HOST || (d->dtype != ENPU_DT_INT8 && d->dtype != ENPU_DT_INT16)) continue;
        int t = enpu_graph_find_tensor(g->qg, li->tensor);
        /* int8, or int16 in a 16-bit graph */
        const int8_t *want8 = t >= 0 && d->dtype == ENPU_DT_INT8 ? enpu_gexec_value_i8(g->ex, t) : NULL;
        const int16_t *want16 = t >= 0 && d->dtype == ENPU_DT_INT16 ? enpu_gexec_value_i16(g->ex, t) : NULL;
        int64_t numel = 1;
        for (int k = 0; k < d->rank; k++) numel *= d->dims[k];
        if ((!want8 && !want16) || numel != enpu_tensor_numel(&g->qg->tensors[t]))
            return enpu_fail(err, ENPU_E_INVALID,
                             "layer %d: tensor '%s' is not an %s tensor of the golden graph with "
                             "the descriptor's %lld elements (the program was compiled from "
                             "another model?)",
                             i, li->tensor, enpu_dtype_name(d->dtype), (long long)numel);
        int32_t *got = malloc((size_t)(numel ? numel : 1) * sizeof *got);
        if (!got) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        int rc = enpu_sim_read_tensor_i32(sim, d, got, numel, err);
        for (int64_t e = 0; !rc && e < numel; e++) {
            int32_t want = want8 ? want8[e] : want16[e];
            if (got[e] == want) continue;
            const enpu_tensor *tt = &g->qg->tensors[t];
            int64_t W = tt->rank >= 4 ? tt->dims[3] : 1, H = tt->rank >= 4 ? tt->dims[2] : 1;
            int64_t C = tt->rank >= 2 ? tt->dims[1] : 1;
            int64_t w = tt->rank >= 4 ? e % W : e, h = tt->rank >= 4 ? (e / W) % H : 0;
            int64_t c = tt->rank >= 4 ? (e / (W * H)) % C : 0;
            rc = enpu_fail(err, ENPU_E_MISMATCH,
                           "layer %d '%s': tensor '%s' (c=%lld, h=%lld, w=%lld): simulator %d, "
                           "golden %d, written at cycle %llu",
                           i, li->name, li->tensor, (long long)c, (long long)h, (long long)w,
                           (int)got[e], (int)want,
                           (unsigned long long)enpu_sim_write_cycle(sim, d, e));
        }
        free(got);
        if (rc) return rc;
        g->compared++;
    }
    return 0;
}

int enpu_golden_check_outputs(const enpu_golden_check *g, const enpu_sim_result *res,
                              enpu_err *err) {
    for (int i = 0; i < res->n_outputs && i < g->qg->n_outputs; i++) {
        enpu_buf gb;
        int rc = enpu_gexec_output(g->ex, i, &gb, err);
        if (rc) return rc;
        int64_t n = enpu_buf_numel(&gb);
        bool same = n == enpu_buf_numel(&res->outputs[i]) &&
                    memcmp(gb.data, res->outputs[i].data, (size_t)n * sizeof(float)) == 0;
        enpu_buf_free(&gb);
        if (!same)
            return enpu_fail(err, ENPU_E_MISMATCH, "output %d '%s' differs from the golden reference's",
                             i, res->outputs[i].name ? res->outputs[i].name : "");
    }
    return 0;
}
