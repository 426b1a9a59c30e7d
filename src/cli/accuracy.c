#include "cli/accuracy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/numerics.h"

enpu_accuracy enpu_accuracy_of(const enpu_buf *f, const enpu_buf *q) {
    enpu_accuracy a;
    memset(&a, 0, sizeof a);
    a.name = q->name ? q->name : "";
    a.rank = q->rank;
    memcpy(a.dims, q->dims, sizeof a.dims);
    int64_t n = enpu_buf_numel(f);
    if (n != enpu_buf_numel(q) || n == 0) return a;
    const float *x = f->data, *y = q->data;
    double sig = 0, noise = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)y[i];
        sig += (double)x[i] * x[i];
        noise += d * d;
        if (fabs(d) > a.max_err) a.max_err = fabs(d);
    }
    a.have = true;
    a.sqnr_db = noise > 0 ? 10 * log10(sig / noise) : INFINITY;
    a.class_vector = enpu_is_class_vector(q->rank, q->dims);
    if (a.class_vector) {
        a.top1_float = enpu_top1(x, n, &a.n_top_float);
        a.top1_int8 = enpu_top1(y, n, &a.n_top_int8);
        a.top_int8 = y[a.top1_int8];
        int k = 0;
        for (int64_t i = 0; i < n && k < 8; i++)
            if (y[i] == a.top_int8) a.tied[k++] = i;
        a.agree = a.top1_float == a.top1_int8 && a.n_top_float == 1 && a.n_top_int8 == 1;
    }
    return a;
}

static void print_dims(FILE *out, int rank, const int64_t *dims) {
    fputc('[', out);
    for (int i = 0; i < rank; i++) fprintf(out, i ? ",%lld" : "%lld", (long long)dims[i]);
    fputc(']', out);
}

void enpu_accuracy_print(FILE *out, const enpu_accuracy *a) {
    fprintf(out, "float vs int%d (this input), output %s ", a->bits == 16 ? 16 : 8, a->name);
    print_dims(out, a->rank, a->dims);
    if (!a->have) {
        fputs(": not comparable (different sizes)\n", out);
        return;
    }
    fprintf(out, ": max |error| %.4g, SQNR %.1f dB", a->max_err, a->sqnr_db);
    if (a->class_vector) {
        if (a->n_top_int8 > 1) {
            fprintf(out, ", top-1 TIE: int%d classes ", a->bits == 16 ? 16 : 8);
            for (int64_t k = 0; k < a->n_top_int8 && k < 8; k++)
                fprintf(out, k ? ", %lld" : "%lld", (long long)a->tied[k]);
            fprintf(out, "%s share the top score %.4g (float top-1 %lld)", a->n_top_int8 > 8 ? ", ..." : "",
                    a->top_int8, (long long)a->top1_float);
        } else if (a->n_top_float > 1) {
            fprintf(out, ", top-1 TIE in the float model (int%d %lld)", a->bits == 16 ? 16 : 8,
                    (long long)a->top1_int8);
        } else {
            fprintf(out, ", top-1 %s (float %lld, int%d %lld)", a->agree ? "agrees" : "DIFFERS",
                    (long long)a->top1_float, a->bits == 16 ? 16 : 8, (long long)a->top1_int8);
        }
    }
    fputc('\n', out);
}

json_t *enpu_accuracy_json(const enpu_accuracy *a) {
    json_t *o = json_object();
    json_object_set_new(o, "output", json_string(a->name));
    if (!a->have) return o;
    json_object_set_new(o, "max_abs_error", json_real(a->max_err));
    json_object_set_new(o, "sqnr_db", isinf(a->sqnr_db) ? json_null() : json_real(a->sqnr_db));
    json_object_set_new(o, "class_vector", json_boolean(a->class_vector));
    if (a->class_vector) {
        json_object_set_new(o, "top1_float", json_integer(a->top1_float));
        json_object_set_new(o, "top1_int8", json_integer(a->top1_int8));
        json_object_set_new(o, "top1_agree", json_boolean(a->agree));
        json_object_set_new(o, "top1_tie", json_boolean(a->n_top_int8 > 1 || a->n_top_float > 1));
    }
    return o;
}

/* SQNR (dB) of quantizing graph input k of qg over the calibration set. */
static double input_sqnr(const enpu_graph *qg, int k, const enpu_buf *calib, int n_calib) {
    const enpu_tensor *t = &qg->tensors[qg->inputs[k]];
    if (!t->quant || t->quant->count < 1 || !calib || n_calib < 1) return NAN;
    float s = t->quant->scale[0];
    int32_t z = t->quant->zero_point[0];
    double sig = 0, noise = 0;
    for (int i = 0; i < n_calib; i++) {
        const enpu_buf *b = &calib[(size_t)i * qg->n_inputs + k];
        if (b->dtype != ENPU_DT_FLOAT32) return NAN;
        const float *v = b->data;
        for (int64_t e = 0; e < enpu_buf_numel(b); e++) {
            double d = v[e] - enpu_dequantize(enpu_quantize(v[e], s, z, -128, 127), s, z);
            sig += (double)v[e] * v[e];
            noise += d * d;
        }
    }
    return noise > 0 ? 10 * log10(sig / noise) : INFINITY;
}

/* SQNR of tensor t: its producer's over the calibration set, or a graph
 * input's quantization. */
static double tensor_sqnr(const enpu_graph *qg, int t, const enpu_qreport *rep, const enpu_buf *calib,
                          int n_calib) {
    const enpu_tensor *x = &qg->tensors[t];
    if (x->producer >= 0) return x->producer < rep->n_layers ? rep->layers[x->producer].sqnr_db : NAN;
    for (int k = 0; k < qg->n_inputs; k++)
        if (qg->inputs[k] == t) return input_sqnr(qg, k, calib, n_calib);
    return NAN;
}

/* Prints the layers feeding tensor `out` with the largest SQNR drop. */
static void print_weakest(FILE *f, const enpu_graph *qg, int out, const enpu_qreport *rep,
                          const enpu_buf *calib, int n_calib) {
    int nn = qg->n_nodes;
    bool *feeds = calloc((size_t)(nn ? nn : 1), 1);
    int *stack = malloc((size_t)(nn ? nn : 1) * sizeof *stack);
    double *drop = malloc((size_t)(nn ? nn : 1) * sizeof *drop);
    if (!feeds || !stack || !drop) {
        free(feeds), free(stack), free(drop);
        return;
    }
    int sp = 0;
    if (qg->tensors[out].producer >= 0) stack[sp++] = qg->tensors[out].producer;
    while (sp > 0) {
        int i = stack[--sp];
        if (feeds[i]) continue;
        feeds[i] = true;
        for (int k = 0; k < qg->nodes[i].n_in; k++) {
            int t = qg->nodes[i].in[k];
            if (t >= 0 && qg->tensors[t].producer >= 0 && !feeds[qg->tensors[t].producer])
                stack[sp++] = qg->tensors[t].producer;
        }
    }
    for (int i = 0; i < nn; i++) {
        drop[i] = NAN;
        double own = i < rep->n_layers ? rep->layers[i].sqnr_db : NAN;
        if (!feeds[i] || !isfinite(own)) continue;
        double ref = INFINITY;
        for (int k = 0; k < qg->nodes[i].n_in; k++) {
            int t = qg->nodes[i].in[k];
            if (t < 0 || (qg->tensors[t].flags & ENPU_T_CONST)) continue;
            double s = tensor_sqnr(qg, t, rep, calib, n_calib);
            if (!isnan(s) && s < ref) ref = s;
        }
        /* an exact input (a graph input that quantizes without error) loses
         * nothing: the layer's whole loss is its own */
        if (!isfinite(ref)) ref = 6.02 * 8 + 1.76; /* a full-scale int8 signal's SQNR */
        drop[i] = ref - own;
    }
    int named = 0;
    for (; named < ENPU_ACC_WEAKEST; named++) {
        int best = -1;
        for (int i = 0; i < nn; i++)
            if (!isnan(drop[i]) && (best < 0 || drop[i] > drop[best])) best = i;
        if (best < 0) break;
        fprintf(f, "%s%s %.1f dB (%+.1f)", named ? ", " : ": ", qg->nodes[best].name,
                rep->layers[best].sqnr_db, -drop[best]);
        drop[best] = NAN;
    }
    if (!named) fputs(": no per-layer figures", f);
    free(feeds), free(stack), free(drop);
}

void enpu_accuracy_warn(FILE *f, const enpu_accuracy *a, int n, const enpu_graph *qg,
                        const enpu_qreport *rep, const enpu_buf *calib, int n_calib) {
    /* the width the run was quantized to: a 16-bit run has int16 ranges */
    int bits = n > 0 && a[0].bits == 16 ? 16 : qg ? enpu_qgraph_bits(qg) : 8;
    if (n_calib > 0 && n_calib < ENPU_ACC_FEW_CALIB)
        fprintf(f, "warning: calibration used %d input(s), fewer than %d: the int%d ranges may not cover "
                   "other inputs (give more with --calib)\n", n_calib, ENPU_ACC_FEW_CALIB, bits);
    for (int i = 0; i < n; i++) {
        if (!a[i].have || !(a[i].sqnr_db < ENPU_ACC_LOW_SQNR_DB)) continue;
        fprintf(f, "warning: output %s: SQNR %.1f dB, below %.0f dB", a[i].name, a[i].sqnr_db,
                ENPU_ACC_LOW_SQNR_DB);
        int t = qg && rep && rep->n_layers == qg->n_nodes ? enpu_graph_find_tensor(qg, a[i].name) : -1;
        if (t >= 0) {
            fputs("; the layers that lose most (SQNR over the calibration set, drop from their input)", f);
            print_weakest(f, qg, t, rep, calib, n_calib);
        }
        fputc('\n', f);
    }
}

int enpu_accuracy_gate(const enpu_accuracy *a, int n, double min_sqnr_db, bool require_top1,
                       enpu_err *err) {
    bool classes = false;
    for (int i = 0; i < n; i++) classes |= a[i].have && a[i].class_vector;
    if (require_top1 && !classes)
        return enpu_fail(err, ENPU_E_USAGE, "--require-top1: no output of the model is a class vector "
                         "([N] or [1,N], N >= 2)");
    for (int i = 0; i < n; i++) {
        if (!a[i].have) continue;
        if (!isnan(min_sqnr_db) && !(a[i].sqnr_db >= min_sqnr_db))
            return enpu_fail(err, ENPU_E_ACCURACY, "output %s: SQNR %.1f dB (int%d vs float) is below "
                             "--min-sqnr %g", a[i].name, a[i].sqnr_db, a[i].bits == 16 ? 16 : 8, min_sqnr_db);
        if (require_top1 && a[i].class_vector && !a[i].agree) {
            if (a[i].n_top_int8 > 1 || a[i].n_top_float > 1)
                return enpu_fail(err, ENPU_E_ACCURACY, "output %s: --require-top1: the top score is "
                                 "shared by %lld classes in the %s result, so no class is chosen",
                                 a[i].name, (long long)(a[i].n_top_int8 > 1 ? a[i].n_top_int8 : a[i].n_top_float),
                                 a[i].n_top_int8 > 1 ? "int8" : "float");
            return enpu_fail(err, ENPU_E_ACCURACY, "output %s: --require-top1: int8 chooses class %lld, "
                             "float %lld", a[i].name, (long long)a[i].top1_int8, (long long)a[i].top1_float);
        }
    }
    return 0;
}
