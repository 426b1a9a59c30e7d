/* The quantization report: per-layer parameters and errors against the float
 * reference, end-to-end figures, and its text and JSON forms. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "quant/qinternal.h"

void enpu_qreport_free(enpu_qreport *r) {
    if (!r) return;
    for (int i = 0; i < r->n_layers; i++) {
        free(r->layers[i].name);
        free(r->layers[i].note);
    }
    free(r->layers);
    for (int i = 0; i < r->n_notes; i++) free(r->notes[i]);
    free(r->notes);
    memset(r, 0, sizeof *r);
}

int enpu_qreport_add_note(enpu_qreport *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    char *s = malloc((size_t)n + 1);
    char **nv = realloc(r->notes, (size_t)(r->n_notes + 1) * sizeof *nv);
    if (!s || !nv) {
        free(s);
        if (nv) r->notes = nv;
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    r->notes = nv;
    r->notes[r->n_notes++] = s;
    return 0;
}

const char *enpu_q_layer_op(const enpu_graph *qg, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    switch (q->kind) {
    case ENPU_Q_CONV:
        if (q->origin == ENPU_QO_CONV && n->attr.conv.group > 1) {
            const enpu_tensor *x = enpu_node_input(qg, n, 0);
            if (x && x->rank >= 2 && x->dims[1] == n->attr.conv.group && q->n_ch == n->attr.conv.group)
                return "dwconv";
            return "gconv";
        }
        return enpu_qorigin_name(q->origin);
    case ENPU_Q_MAXPOOL: return "maxpool";
    case ENPU_Q_ADD: return "add";
    case ENPU_Q_MUL: return "mul";
    default: return enpu_op_name(n->op);
    }
}

static void tparams(const enpu_tensor *t, float *s, int32_t *z) {
    *s = 0.0f;
    *z = 0;
    if (t && t->quant && t->quant->count >= 1) {
        *s = t->quant->scale[0];
        *z = t->quant->zero_point[0];
    }
}

int enpu_qreport_init_layers(const enpu_graph *qg, enpu_qreport *r, enpu_err *err) {
    r->layers = calloc((size_t)(qg->n_nodes ? qg->n_nodes : 1), sizeof *r->layers);
    if (!r->layers) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    r->n_layers = qg->n_nodes;
    r->n_host = 0;
    r->total_macs = 0;
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        enpu_qlayer *l = &r->layers[i];
        size_t len = strlen(n->name) + 1;
        l->name = malloc(len);
        if (!l->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        memcpy(l->name, n->name, len);
        l->kind = enpu_qkind_name(n->q->kind);
        l->op = enpu_q_layer_op(qg, n);
        const enpu_tensor *x = NULL;
        for (int k = 0; k < n->n_in && !x; k++) {
            const enpu_tensor *t = enpu_node_input(qg, n, k);
            if (t && !(t->flags & ENPU_T_CONST)) x = t;
        }
        tparams(x, &l->in_scale, &l->in_zp);
        const enpu_tensor *y = enpu_node_output(qg, n, 0);
        tparams(y, &l->out_scale, &l->out_zp);
        l->out_float = y && y->dtype == ENPU_DT_FLOAT32;
        l->host = n->q->kind == ENPU_Q_HOST;
        if (l->host) r->n_host++;
        l->table_err_lsb = n->q->table ? n->q->table->max_err_lsb : 0.0;
        enpu_q_acc_range(qg, n, &l->acc_lo, &l->acc_hi);
        l->macs = enpu_node_macs(qg, n);
        r->total_macs += l->macs;
        l->sqnr_db = NAN;
        l->max_abs_err = NAN;
    }
    return 0;
}

int enpu_q_float_twin(const enpu_graph *g, const enpu_graph *qg, int qt) {
    const enpu_tensor *y = &qg->tensors[qt];
    const char *name = y->name;
    if (y->producer >= 0) {
        const enpu_node *n = &qg->nodes[y->producer];
        if (n->q && n->q->kind == ENPU_Q_CONV && n->q->origin == ENPU_QO_RESCALE)
            name = qg->tensors[n->in[0]].name; /* same value as its input */
    }
    int t = enpu_graph_find_tensor(g, name);
    if (t >= 0 && (g->tensors[t].dtype != ENPU_DT_FLOAT32 || g->tensors[t].rank < 0 ||
                   enpu_tensor_numel(&g->tensors[t]) != enpu_tensor_numel(y)))
        t = -1;
    return t;
}

static double sqnr_db(double sig, double noise) {
    if (noise <= 0) return INFINITY;
    return 10.0 * log10(sig / noise);
}

bool enpu_is_class_vector(int rank, const int64_t *dims) {
    if (rank == 1) return dims[0] >= 2;
    return rank == 2 && dims[0] == 1 && dims[1] >= 2;
}

int64_t enpu_top1(const float *v, int64_t n, int64_t *n_top) {
    int64_t b = 0, k = n > 0;
    for (int64_t i = 1; i < n; i++) {
        if (v[i] > v[b]) b = i, k = 1;
        else if (v[i] == v[b]) k++;
    }
    if (n_top) *n_top = k;
    return b;
}

/* Top-1 of the float and the int8 output agree: the same class, neither a tie. */
static bool top1_agrees(const float *f, const float *q, int64_t n) {
    int64_t kf, kq;
    int64_t a = enpu_top1(f, n, &kf), b = enpu_top1(q, n, &kq);
    return a == b && kf == 1 && kq == 1;
}

int enpu_qreport_eval(const enpu_graph *g, const enpu_graph *qg, const enpu_buf *inputs,
                      int n_samples, enpu_qreport *r, enpu_err *err) {
    if (!g || !qg || !r || (n_samples > 0 && !inputs))
        return enpu_fail(err, ENPU_E_USAGE, "enpu_qreport_eval: NULL argument");
    if (g->n_inputs != qg->n_inputs || g->n_outputs < 1 || qg->n_outputs != g->n_outputs)
        return enpu_fail(err, ENPU_E_INVALID,
                         "float and quantized graphs differ in their inputs or outputs");
    int rc;
    if (r->n_layers == 0 && (rc = enpu_qreport_init_layers(qg, r, err))) return rc;
    if (r->n_layers != qg->n_nodes)
        return enpu_fail(err, ENPU_E_USAGE, "report and graph have different layers");
    enpu_fexec *fx = NULL;
    enpu_gexec *gx = NULL;
    int nl = r->n_layers;
    int *gt = malloc((size_t)(nl ? nl : 1) * sizeof(int));
    double *sig = calloc((size_t)(nl ? nl : 1), sizeof(double));
    double *noi = calloc((size_t)(nl ? nl : 1), sizeof(double));
    double *mx = calloc((size_t)(nl ? nl : 1), sizeof(double));
    float *scratch = NULL;
    if (!gt || !sig || !noi || !mx) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = enpu_fexec_new(g, &fx, err)) || (rc = enpu_gexec_new(qg, &gx, err))) goto done;
    int64_t most = 1;
    for (int i = 0; i < nl; i++) {
        const enpu_node *n = &qg->nodes[i];
        const enpu_tensor *y = enpu_node_output(qg, n, 0);
        gt[i] = enpu_q_float_twin(g, qg, n->out[0]);
        if (enpu_tensor_numel(y) > most) most = enpu_tensor_numel(y);
    }
    const enpu_tensor *fo = &g->tensors[g->outputs[0]], *qo = &qg->tensors[qg->outputs[0]];
    int64_t n_out = enpu_tensor_numel(fo);
    if (n_out != enpu_tensor_numel(qo)) {
        rc = enpu_fail(err, ENPU_E_INVALID, "output '%s' has different sizes in the two graphs",
                       fo->name);
        goto done;
    }
    if (n_out > most) most = n_out;
    scratch = malloc((size_t)most * sizeof(float));
    if (!scratch) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    double esig = 0, enoi = 0, emax = 0;
    int agree = 0;
    for (int s = 0; s < n_samples; s++) {
        const enpu_buf *in = inputs + (size_t)s * g->n_inputs;
        if ((rc = enpu_fexec_run_n(fx, g->n_inputs, in, err)) || (rc = enpu_gexec_run(gx, in, err))) {
            enpu_err_prefix(err, "sample %d", s);
            goto done;
        }
        for (int i = 0; i < nl; i++) {
            if (gt[i] < 0) continue;
            const float *f = enpu_fexec_value(fx, gt[i]);
            int qt = qg->nodes[i].out[0];
            if (!f || enpu_gexec_value_f32(gx, qt, scratch, NULL)) continue;
            int64_t cnt = enpu_tensor_numel(&qg->tensors[qt]);
            for (int64_t k = 0; k < cnt; k++) {
                double d = (double)scratch[k] - f[k];
                sig[i] += (double)f[k] * f[k];
                noi[i] += d * d;
                if (fabs(d) > mx[i]) mx[i] = fabs(d);
            }
        }
        const float *f = enpu_fexec_value(fx, g->outputs[0]);
        if ((rc = enpu_gexec_value_f32(gx, qg->outputs[0], scratch, err))) goto done;
        for (int64_t k = 0; k < n_out; k++) {
            double d = (double)scratch[k] - f[k];
            esig += (double)f[k] * f[k];
            enoi += d * d;
            if (fabs(d) > emax) emax = fabs(d);
        }
        if (top1_agrees(f, scratch, n_out)) agree++;
    }
    for (int i = 0; i < nl; i++) {
        if (gt[i] < 0 || n_samples == 0) {
            r->layers[i].sqnr_db = NAN;
            r->layers[i].max_abs_err = NAN;
            continue;
        }
        r->layers[i].sqnr_db = sqnr_db(sig[i], noi[i]);
        r->layers[i].max_abs_err = mx[i];
    }
    r->n_samples = n_samples;
    r->max_abs_err = n_samples ? emax : NAN;
    r->out_sqnr_db = n_samples ? sqnr_db(esig, enoi) : NAN;
    r->top1_agree = n_samples && enpu_is_class_vector(fo->rank, fo->dims) ? (double)agree / n_samples : NAN;
done:
    free(gt);
    free(sig);
    free(noi);
    free(mx);
    free(scratch);
    enpu_fexec_free(fx);
    enpu_gexec_free(gx);
    return rc;
}

/* --- text ------------------------------------------------------------------------ */

static void fmt_db(char *buf, size_t n, double v) {
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, "%.1f", v);
}

void enpu_qreport_print(FILE *f, const enpu_qreport *r) {
    fprintf(f, "Quantization: %d layers (%d on the host), %lld MACs; calibration %s over %d "
               "sample(s)%s; %saccumulator %d bits, multiplier %d bits, %d table segments\n",
            r->n_layers, r->n_host, (long long)r->total_macs,
            r->method == ENPU_CALIB_PERCENTILE ? "percentile" : "min/max", r->n_calib,
            r->calib_fallback ? " (SYNTHETIC FALLBACK: no data given)" : "",
            r->bits == 16 ? (r->pow2 ? "16-bit Q-format data, " : "16-bit data, ") : "", r->acc_bits,
            r->mult_bits, r->act_segments);
    if (r->method == ENPU_CALIB_PERCENTILE) fprintf(f, "percentile: %g\n", r->percentile);
    fprintf(f, "%4s %-7s %-9s %-17s %-17s %8s %10s %6s  %s\n", "#", "kind", "op", "in scale/zp",
            "out scale/zp", "SQNR dB", "max err", "tbl LSB", "layer");
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_qlayer *l = &r->layers[i];
        char in[40], out[40], db[16], me[24], tb[16];
        snprintf(in, sizeof in, "%.4g/%d", (double)l->in_scale, (int)l->in_zp);
        if (l->out_float) snprintf(out, sizeof out, "float");
        else snprintf(out, sizeof out, "%.4g/%d", (double)l->out_scale, (int)l->out_zp);
        fmt_db(db, sizeof db, l->sqnr_db);
        if (isnan(l->max_abs_err)) snprintf(me, sizeof me, "-");
        else snprintf(me, sizeof me, "%.4g", l->max_abs_err);
        if (l->table_err_lsb > 0 || strcmp(l->kind, "table") == 0)
            snprintf(tb, sizeof tb, "%.0f", l->table_err_lsb);
        else
            snprintf(tb, sizeof tb, "-");
        fprintf(f, "%4d %-7s %-9s %-17s %-17s %8s %10s %6s  %s%s%s%s\n", i, l->kind, l->op, in,
                out, db, me, tb, l->name, l->note ? "  [" : "", l->note ? l->note : "",
                l->note ? "]" : "");
    }
    char db[16];
    fmt_db(db, sizeof db, r->out_sqnr_db);
    if (r->n_samples > 0)
    {
        char top[80] = "";
        if (!isnan(r->top1_agree))
            snprintf(top, sizeof top, ", top-1 agreement %.0f/%d (%.1f%%)", r->top1_agree * r->n_samples,
                     r->n_samples, 100.0 * r->top1_agree);
        fprintf(f, "End to end over %d %s sample(s), first output: SQNR %s dB, max |error| %.4g%s\n",
                r->n_samples, r->on_test_set ? "test" : "calibration", db, r->max_abs_err, top);
    }
    for (int i = 0; i < r->n_notes; i++) fprintf(f, "note: %s\n", r->notes[i]);
}

/* --- JSON -------------------------------------------------------------------------- */

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

int enpu_qreport_save_json(const char *path, const enpu_qreport *r, enpu_err *err) {
    json_t *root = json_object(), *layers = json_array(), *notes = json_array();
    if (!root || !layers || !notes) {
        json_decref(root);
        json_decref(layers);
        json_decref(notes);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    json_object_set_new(root, "format", json_string("easynpu-quant-report"));
    json_object_set_new(root, "version", json_integer(1));
    json_t *set = json_object();
    json_object_set_new(set, "calibration",
                        json_string(r->method == ENPU_CALIB_PERCENTILE ? "percentile" : "minmax"));
    if (r->method == ENPU_CALIB_PERCENTILE) json_object_set_new(set, "percentile", jnum(r->percentile));
    json_object_set_new(set, "calibration_samples", json_integer(r->n_calib));
    json_object_set_new(set, "calibration_fallback", json_boolean(r->calib_fallback));
    json_object_set_new(set, "acc_bits", json_integer(r->acc_bits));
    json_object_set_new(set, "bits", json_integer(r->bits == 16 ? 16 : 8));
    json_object_set_new(set, "pow2", json_boolean(r->pow2));
    json_object_set_new(set, "mult_bits", json_integer(r->mult_bits));
    json_object_set_new(set, "table_segments", json_integer(r->act_segments));
    json_object_set_new(root, "settings", set);
    for (int i = 0; i < r->n_layers; i++) {
        const enpu_qlayer *l = &r->layers[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(l->name));
        json_object_set_new(o, "kind", json_string(l->kind));
        json_object_set_new(o, "op", json_string(l->op));
        json_object_set_new(o, "host", json_boolean(l->host));
        json_object_set_new(o, "macs", json_integer(l->macs));
        json_object_set_new(o, "in_scale", jnum(l->in_scale));
        json_object_set_new(o, "in_zero_point", json_integer(l->in_zp));
        if (l->out_float) {
            json_object_set_new(o, "out_scale", json_null());
            json_object_set_new(o, "out_zero_point", json_null());
        } else {
            json_object_set_new(o, "out_scale", jnum(l->out_scale));
            json_object_set_new(o, "out_zero_point", json_integer(l->out_zp));
        }
        json_object_set_new(o, "sqnr_db", jnum(l->sqnr_db));
        if (isinf(l->sqnr_db) && l->sqnr_db > 0) json_object_set_new(o, "exact", json_true());
        json_object_set_new(o, "max_abs_err", jnum(l->max_abs_err));
        if (!strcmp(l->kind, "table")) json_object_set_new(o, "table_err_lsb", jnum(l->table_err_lsb));
        if (l->acc_lo || l->acc_hi) {
            json_object_set_new(o, "acc_min", json_integer(l->acc_lo));
            json_object_set_new(o, "acc_max", json_integer(l->acc_hi));
        }
        if (l->note) json_object_set_new(o, "note", json_string(l->note));
        json_array_append_new(layers, o);
    }
    json_object_set_new(root, "layers", layers);
    json_object_set_new(root, "total_macs", json_integer(r->total_macs));
    json_t *e2e = json_object();
    json_object_set_new(e2e, "samples", json_integer(r->n_samples));
    json_object_set_new(e2e, "set", json_string(r->on_test_set ? "test" : "calibration"));
    json_object_set_new(e2e, "sqnr_db", jnum(r->out_sqnr_db));
    json_object_set_new(e2e, "max_abs_err", jnum(r->max_abs_err));
    json_object_set_new(e2e, "top1_agreement", jnum(r->top1_agree));
    json_object_set_new(root, "end_to_end", e2e);
    for (int i = 0; i < r->n_notes; i++) json_array_append_new(notes, json_string(r->notes[i]));
    json_object_set_new(root, "notes", notes);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "out of memory writing %s", path);
    size_t n = strlen(text);
    text[n] = 0;
    int rc = enpu_file_write_atomic(path, text, n, err);
    free(text);
    return rc;
}
