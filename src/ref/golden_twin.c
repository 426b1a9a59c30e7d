/* Host nodes in the golden reference: a node the NPU does not run is
 * computed in float through a one-node twin graph on the float reference,
 * its int8 inputs dequantized and its outputs quantized with the graph's
 * own parameters, as the host runtime does; TFLite-requant graphs use the
 * host's integer kernels (tflite_host.c) instead. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "ref/qrules.h"
#include "ref/gfast.h"
#include "ref/golden_internal.h"

/* --- host nodes: a one-node float twin run by the float reference ---------------------- */


void gd_twin_free(host_twin *h) {
    enpu_fexec_free(h->ex);
    enpu_graph_free(h->g);
    if (h->bufs)
        for (int i = 0; i < h->n_in; i++) enpu_buf_free(&h->bufs[i]);
    free(h->bufs);
    free(h->src);
}

/* Dequantizes constant/int8 tensor data (per-tensor or per-axis) into dst. */
void gd_dequant(const enpu_tensor *t, const int8_t *v, float *dst) {
    int64_t n = enpu_tensor_numel(t);
    const enpu_quant *q = t->quant;
    if (!q || q->count == 1 || q->axis < 0 || q->axis >= t->rank) {
        float s = q ? q->scale[0] : 1.0f;
        int32_t z = q ? q->zero_point[0] : 0;
        for (int64_t i = 0; i < n; i++) dst[i] = enpu_dequantize(v[i], s, z);
        return;
    }
    int64_t inner = 1;
    for (int d = q->axis + 1; d < t->rank; d++) inner *= t->dims[d];
    int64_t ax = t->dims[q->axis];
    for (int64_t i = 0; i < n; i++) {
        int64_t c = (i / inner) % ax;
        dst[i] = enpu_dequantize(v[i], q->scale[c], q->zero_point[c]);
    }
}

int gd_build_twin(const enpu_graph *qg, const enpu_node *n, host_twin *h, enpu_err *err) {
    h->g = enpu_graph_new(n->name);
    h->src = calloc((size_t)(n->n_in ? n->n_in : 1), sizeof(int));
    h->bufs = calloc((size_t)(n->n_in ? n->n_in : 1), sizeof(enpu_buf));
    if (!h->g || !h->src || !h->bufs) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    h->g->opset = qg->opset;
    int ins[64], rc = 0;
    if (n->n_in > 64) return enpu_fail(err, ENPU_E_LIMIT, "node '%s': too many inputs", gd_name(n));
    for (int k = 0; k < n->n_in && !rc; k++) {
        ins[k] = -1;
        const enpu_tensor *t = enpu_node_input(qg, n, k);
        if (!t) continue;
        int have = enpu_graph_find_tensor(h->g, t->name);
        if (have >= 0) {
            ins[k] = have;
            continue;
        }
        bool act = gd_is_act(t);
        bool to_float = t->dtype == ENPU_DT_INT8 || t->dtype == ENPU_DT_FLOAT32 ||
                        (act && t->dtype == ENPU_DT_INT16);
        int idx = enpu_graph_add_tensor(h->g, t->name, to_float ? ENPU_DT_FLOAT32 : t->dtype,
                                        t->rank, t->dims, err);
        if (idx < 0) return idx;
        ins[k] = idx;
        if (act) {
            h->src[h->n_in] = n->in[k];
            if ((rc = enpu_buf_alloc(&h->bufs[h->n_in], ENPU_DT_FLOAT32, t->rank, t->dims, err)))
                return rc;
            h->n_in++;
            rc = enpu_graph_add_input(h->g, idx, err);
        } else {
            size_t nb = (size_t)enpu_tensor_numel(t) * (to_float ? sizeof(float) : enpu_dtype_size(t->dtype));
            void *data = malloc(nb ? nb : 1);
            if (!data) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            if (t->dtype == ENPU_DT_INT8)
                gd_dequant(t, t->data, data);
            else if (nb)
                memcpy(data, t->data, nb);
            enpu_tensor_set_data(&h->g->tensors[idx], data);
        }
    }
    if (rc) return rc;
    /* every output (a recurrent op's final states too) */
    if (n->n_out > (int)(sizeof h->out / sizeof h->out[0]))
        return enpu_fail(err, ENPU_E_LIMIT, "node '%s': %d outputs", gd_name(n), n->n_out);
    h->n_out = n->n_out;
    for (int k = 0; k < n->n_out; k++) {
        const enpu_tensor *y = enpu_node_output(qg, n, k);
        h->out[k] = -1;
        if (!y) continue;
        /* an unquantized integer result (indices) keeps its dtype, so the
         * float reference rounds it (enpu_int_value) */
        bool ints = y->dtype == ENPU_DT_INT64 || y->dtype == ENPU_DT_INT32;
        int o = enpu_graph_add_tensor(h->g, y->name, ints ? y->dtype : ENPU_DT_FLOAT32, y->rank, y->dims, err);
        if (o < 0) return o;
        h->out[k] = o;
    }
    int k = enpu_graph_add_node(h->g, n->name, n->op, n->n_in, ins, h->n_out, h->out, err);
    if (k < 0) return k;
    h->g->nodes[k].attr = n->attr;
    for (int j = 0; j < h->n_out; j++)
        if (h->out[j] >= 0 && (rc = enpu_graph_add_output(h->g, h->out[j], err))) return rc;
    rc = enpu_fexec_new(h->g, &h->ex, err);
    if (rc) enpu_err_prefix(err, "host node '%s'", gd_name(n));
    return rc;
}

/* What the float reference would refuse at run time is refused here. */
int gd_check_twin(const enpu_graph *qg, const enpu_node *n, enpu_err *err) {
    host_twin h;
    memset(&h, 0, sizeof h);
    int rc = gd_build_twin(qg, n, &h, err);
    gd_twin_free(&h);
    return rc;
}

void gd_dequant16(const enpu_tensor *t, const int16_t *v, float *dst) {
    int64_t n = enpu_tensor_numel(t);
    float s = t->quant ? t->quant->scale[0] : 1.0f;
    for (int64_t i = 0; i < n; i++) dst[i] = enpu_dequantize(v[i], s, 0);
}

int gd_run_host(enpu_gexec *ex, int node, enpu_err *err) {
    const enpu_graph *qg = ex->qg;
    const enpu_node *n = &qg->nodes[node];
    if (qg->requant == ENPU_REQUANT_TFLITE) {
        const enpu_tensor *x = &qg->tensors[n->in[0]], *y = &qg->tensors[n->out[0]];
        char what[ENPU_MAX_NAME + 16];
        snprintf(what, sizeof what, "host node '%s'", gd_name(n));
        return enpu_tfl_host_run(n->op, n->attr.shape.axis, x->rank, x->dims, ex->v8[n->in[0]],
                                 gd_scale(x), gd_zp(x), ex->v8[n->out[0]], gd_scale(y), gd_zp(y), what, err);
    }
    host_twin *h = &ex->host[node];
    for (int i = 0; i < h->n_in; i++) {
        int t = h->src[i];
        const enpu_tensor *tt = &qg->tensors[t];
        float *dst = h->bufs[i].data;
        int64_t cnt = enpu_tensor_numel(tt);
        if (tt->dtype == ENPU_DT_INT8)
            gd_dequant(tt, ex->v8[t], dst);
        else if (tt->dtype == ENPU_DT_INT16)
            gd_dequant16(tt, ex->v16[t], dst);
        else if (cnt)
            memcpy(dst, ex->vf[t], (size_t)cnt * sizeof(float));
    }
    int rc = enpu_fexec_run_n(h->ex, h->n_in, h->bufs, err);
    if (rc) return enpu_err_prefix(err, "host node '%s'", gd_name(n));
    for (int k = 0; k < h->n_out; k++) {
        if (h->out[k] < 0) continue;
        const float *v = enpu_fexec_value(h->ex, h->out[k]);
        int t = n->out[k];
        const enpu_tensor *ty = &qg->tensors[t];
        int64_t cnt = enpu_tensor_numel(ty);
        if (ty->dtype == ENPU_DT_INT8) {
            float s = gd_scale(ty);
            int32_t z = gd_zp(ty);
            for (int64_t i = 0; i < cnt; i++) ex->v8[t][i] = (int8_t)enpu_quantize(v[i], s, z, -128, 127);
        } else if (ty->dtype == ENPU_DT_INT16) {
            float s = gd_scale(ty);
            for (int64_t i = 0; i < cnt; i++)
                ex->v16[t][i] = (int16_t)enpu_quantize(v[i], s, 0, -ENPU_I16_QMAX - 1, ENPU_I16_QMAX);
        } else if (cnt) {
            memcpy(ex->vf[t], v, (size_t)cnt * sizeof(float));
        }
    }
    return 0;
}
