/* Post-training quantization: float graph -> int8 graph (quant.h).
 *
 * 1. A copy of the float graph is rewritten (passes.c).
 * 2. Activation ranges are observed on the float reference (calib.c).
 * 3. Every node gets a kind (qclassify.c): NPU kinds where the semantics of
 *    quant.h can express the op, HOST otherwise (with the reason); a
 *    Relu/Clip whose producer requantizes and has no other reader is folded
 *    into the producer's clamp.
 * 4. Every int8 tensor gets (scale, zero point) (qparams.c): from its
 *    observed range, or its input's for MaxPool and data movement; Concat
 *    inputs are forced onto the output's parameters when their producer can
 *    requantize to them, otherwise a RESCALE node is inserted.
 * 5. The int8 graph is built node by node (qbuild.c, qbuild_conv.c) with the integer parameters of
 *    each (weights, biases with the zero-point correction, M/S, add
 *    multipliers, PWL tables), proving every accumulator fits acc_bits. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "quant/passes.h"
#include "quant/qinternal.h"
#include "quant/qctx.h"

void enpu_quant_opts_default(enpu_quant_opts *o) {
    memset(o, 0, sizeof *o);
    o->method = ENPU_CALIB_MINMAX;
    o->percentile = 99.99;
    o->mult_bits = ENPU_MULT_BITS_DEFAULT;
    o->acc_bits = ENPU_ACC_BITS_DEFAULT;
    o->act_segments = ENPU_PWL_SEGMENTS_DEFAULT;
    o->quiet = false;
    o->bits = 8;
    o->wide_acc_bits = ENPU_ACC_BITS_WIDE_MAX;
}

void enpu_quant_opts_for_arch(enpu_quant_opts *o, const enpu_arch *a) {
    enpu_quant_opts_default(o);
    o->mult_bits = (int)a->mult_bits;
    o->acc_bits = (int)a->acc_bits;
    o->act_segments = (int)a->act_segments;
}

void enpu_qnode_free(enpu_qnode *q) {
    if (!q) return;
    free(q->w);
    free(q->w16);
    free(q->bias);
    free(q->M);
    free(q->S);
    free(q->table);
    free(q->fused);
    free(q->why);
    free(q);
}

static void qnode_free_hook(struct enpu_qnode *q) { enpu_qnode_free(q); }

enpu_qnode *qc_qnode_new(enpu_qkind kind) {
    enpu_qnode *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->kind = kind;
    q->lo = -128;
    q->hi = 127;
    return q;
}

char *qc_xstrdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char *qc_xprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}


bool qc_single_use(const enpu_graph *g, int t) {
    if (t < 0 || (g->tensors[t].flags & ENPU_T_OUTPUT)) return false;
    int cnt = 0;
    enpu_graph_consumer(g, t, &cnt);
    return cnt == 1;
}

bool qc_same_shape_as(const enpu_graph *g, int a, int b) {
    const enpu_tensor *x = &g->tensors[a], *y = &g->tensors[b];
    if (x->rank != y->rank) return false;
    for (int d = 0; d < x->rank; d++)
        if (x->dims[d] != y->dims[d]) return false;
    return true;
}

int qc_append_names(qctx *c, plan *p, const char *more) {
    char *s = qc_xprintf("%s+%s", p->names, more);
    if (!s) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    free(p->names);
    p->names = s;
    return 0;
}

void qc_set_host(plan *p, char *note) {
    p->kind = ENPU_Q_HOST;
    free(p->note);
    p->note = note;
}

/* --- driver ------------------------------------------------------------------------ */

static int check_opts(const enpu_quant_opts *o, enpu_err *err) {
    if (o->mult_bits < 2 || o->mult_bits > ENPU_MULT_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "multiplier width %d bits is outside 2..%d",
                         o->mult_bits, ENPU_MULT_BITS_MAX);
    if (o->acc_bits < ENPU_ACC_BITS_MIN || o->acc_bits > ENPU_ACC_BITS_MAX)
        return enpu_fail(err, ENPU_E_USAGE, "accumulator width %d bits is outside %d..%d",
                         o->acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_MAX);
    int s = o->act_segments;
    if (s < 1 || s > ENPU_PWL_SEGMENTS_MAX || (s & (s - 1)))
        return enpu_fail(err, ENPU_E_USAGE, "%d table segments: a power of two in 1..%d needed",
                         s, ENPU_PWL_SEGMENTS_MAX);
    if (o->method == ENPU_CALIB_PERCENTILE && !(o->percentile > 50.0 && o->percentile <= 100.0))
        return enpu_fail(err, ENPU_E_USAGE, "percentile %g is outside (50, 100]", o->percentile);
    if (o->method != ENPU_CALIB_MINMAX && o->method != ENPU_CALIB_PERCENTILE)
        return enpu_fail(err, ENPU_E_USAGE, "unknown calibration method %d", (int)o->method);
    if (o->bits != 8 && o->bits != 16)
        return enpu_fail(err, ENPU_E_USAGE, "%d-bit quantization: 8 or 16 bits", o->bits);
    if (o->pow2 && o->bits != 16)
        return enpu_fail(err, ENPU_E_USAGE, "power-of-two (Q-format) scales are for 16-bit data");
    if (o->bits == 16 && (o->wide_acc_bits < ENPU_ACC_BITS_MIN || o->wide_acc_bits > ENPU_ACC_BITS_WIDE_MAX))
        return enpu_fail(err, ENPU_E_USAGE, "accumulator width %d bits is outside %d..%d",
                         o->wide_acc_bits, ENPU_ACC_BITS_MIN, ENPU_ACC_BITS_WIDE_MAX);
    return 0;
}

static void ctx_free(qctx *c) {
    if (c->pl)
        for (int i = 0; i < c->fg->n_nodes; i++) {
            free(c->pl[i].names);
            free(c->pl[i].note);
        }
    free(c->pl);
    free(c->rng);
    free(c->eff);
    free(c->npu_read);
    free(c->is_float);
    free(c->has);
    free(c->s);
    free(c->z);
    free(c->rs);
    free(c->qt);
    if (c->notes)
        for (int i = 0; i < c->cap_notes; i++) free(c->notes[i]);
    free(c->notes);
}

/* The int8 path computes on float tensors, and carries int64/int32 ones
 * computed inside the graph (indices: ArgMax's, a Cast's) unquantized
 * between host ops.  A graph input or output of an integer dtype, or another
 * integer dtype (which the float reference carries, e.g. for the ONNX
 * conformance tests), is refused, naming it. */
static int check_float_values(const enpu_graph *g, enpu_err *err) {
    for (int t = 0; t < g->n_tensors; t++) {
        const enpu_tensor *x = &g->tensors[t];
        if (x->dtype == ENPU_DT_FLOAT32 || x->dtype == ENPU_DT_UNDEFINED) continue;
        int p = x->producer;
        bool input = (x->flags & ENPU_T_INPUT) != 0;
        if (!input && (p < 0 || g->nodes[p].dead)) continue; /* a constant, or unused */
        if (!input && !(x->flags & ENPU_T_OUTPUT) &&
            (x->dtype == ENPU_DT_INT64 || x->dtype == ENPU_DT_INT32))
            continue;
        if (input)
            return enpu_fail(err, ENPU_E_UNSUPPORTED,
                             "graph input '%s' is %s; the int8 compiler takes float32 inputs "
                             "(run-float computes it)",
                             x->name, enpu_dtype_name(x->dtype));
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "node '%s' (%s): output '%s' is %s; the int8 compiler computes on "
                         "float32 tensors only (run-float computes it)",
                         g->nodes[p].name, enpu_op_name(g->nodes[p].op), x->name,
                         enpu_dtype_name(x->dtype));
    }
    return 0;
}

int enpu_quantize_graph(const enpu_graph *g, const enpu_buf *calib, int n_samples,
                        const enpu_quant_opts *opts, enpu_graph **out, enpu_qreport *report,
                        enpu_err *err) {
    if (!g || !out) return enpu_fail(err, ENPU_E_USAGE, "enpu_quantize_graph: NULL argument");
    *out = NULL;
    if (report) memset(report, 0, sizeof *report);
    enpu_quant_opts def;
    if (!opts) {
        enpu_quant_opts_default(&def);
        opts = &def;
    }
    int rc = check_opts(opts, err);
    if (!rc) rc = check_float_values(g, err);
    if (rc) return rc;
    enpu_qnode_free_hook = qnode_free_hook;
    enpu_graph *fg = NULL;
    enpu_qp_info info = {0};
    enpu_buf *synth = NULL;
    int n_rewrites = 0;
    qctx c = {0};
    if ((rc = enpu_qp_clone(g, &fg, err))) return rc;
    if ((rc = enpu_qp_rewrite(fg, &info, &n_rewrites, err))) goto done;
    bool fallback = !calib || n_samples <= 0;
    if (fallback) {
        n_samples = ENPU_CALIB_FALLBACK_SAMPLES;
        if ((rc = enpu_calib_synthetic(fg, n_samples, ENPU_CALIB_FALLBACK_SEED, &synth, err)))
            goto done;
        calib = synth;
        if (!opts->quiet)
            fprintf(stderr,
                    "easynpu: warning: %s: no calibration data; using %d synthetic N(0,1) "
                    "inputs (seed 0x%X): scales will not match real data, give --calib\n",
                    g->name && g->name[0] ? g->name : "model", n_samples,
                    (unsigned)ENPU_CALIB_FALLBACK_SEED);
    }
    c.fg = fg;
    c.info = &info;
    c.o = opts;
    c.err = err;
    size_t nt = (size_t)(fg->n_tensors ? fg->n_tensors : 1);
    size_t nn = (size_t)(fg->n_nodes ? fg->n_nodes : 1);
    c.rng = calloc(nt, sizeof *c.rng);
    c.pl = calloc(nn, sizeof *c.pl);
    c.eff = malloc(nt * sizeof *c.eff);
    c.npu_read = calloc(nt, sizeof *c.npu_read);
    c.is_float = calloc(nt, sizeof *c.is_float);
    c.has = calloc(nt, sizeof *c.has);
    c.s = calloc(nt, sizeof *c.s);
    c.z = calloc(nt, sizeof *c.z);
    c.qt = malloc(nt * sizeof *c.qt);
    if (!c.rng || !c.pl || !c.eff || !c.npu_read || !c.is_float || !c.has || !c.s || !c.z || !c.qt) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    for (int t = 0; t < fg->n_tensors; t++) {
        c.eff[t] = fg->tensors[t].producer;
        c.qt[t] = -1;
    }
    if ((rc = enpu_calib_ranges(fg, calib, n_samples, opts, c.rng, err))) goto done;
    if ((rc = qc_classify(&c)) || (rc = qc_assign_params(&c))) goto done;
    c.qg = enpu_graph_new(g->name);
    if (!c.qg) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    c.qg->opset = g->opset;
    if ((rc = qc_build_graph(&c))) goto done;
    if ((rc = enpu_qgraph_check(c.qg, err))) {
        enpu_err_prefix(err, "internal: the quantized graph does not check");
        goto done;
    }
    if (report) {
        enpu_qreport *r = report;
        r->method = opts->method;
        r->percentile = opts->percentile;
        r->acc_bits = opts->bits == 16 ? opts->wide_acc_bits : opts->acc_bits;
        r->bits = opts->bits;
        r->pow2 = opts->pow2;
        r->mult_bits = opts->mult_bits;
        r->act_segments = opts->act_segments;
        r->n_calib = n_samples;
        r->calib_fallback = fallback;
        if ((rc = enpu_qreport_init_layers(c.qg, r, err))) goto done;
        for (int i = 0; i < r->n_layers && i < c.cap_notes; i++) {
            r->layers[i].note = c.notes[i];
            c.notes[i] = NULL;
        }
        if (fallback)
            enpu_qreport_add_note(r, "no calibration data: %d synthetic N(0,1) inputs (seed "
                                  "0x%X); scales are not representative",
                                  n_samples, (unsigned)ENPU_CALIB_FALLBACK_SEED);
        enpu_qreport_add_note(r, "%d float rewrite(s) before quantization (constant folding, "
                              "bias/BN folding, MatMul/Gemm to FC, ...)",
                              n_rewrites);
        if (c.n_forced)
            enpu_qreport_add_note(r, "%d Concat input(s) requantized by their producer to the "
                                  "Concat's parameters",
                                  c.n_forced);
        if (c.n_given || c.n_given_w)
            enpu_qreport_add_note(r, "pre-quantized model: %d tensor(s) and the weights of %d "
                                  "layer(s) keep the model's own int8 parameters (not calibrated)",
                                  c.n_given, c.n_given_w);
        if (c.n_rs)
            enpu_qreport_add_note(r, "%d RESCALE node(s) inserted before Concat inputs", c.n_rs);
        if ((rc = enpu_qreport_eval(g, c.qg, calib, n_samples, r, err))) goto done;
    }
    *out = c.qg;
    c.qg = NULL;
done:
    if (rc && report) enpu_qreport_free(report);
    enpu_graph_free(c.qg);
    ctx_free(&c);
    if (synth) enpu_calib_free(synth, ENPU_CALIB_FALLBACK_SAMPLES * fg->n_inputs);
    enpu_qp_info_free(&info);
    enpu_graph_free(fg);
    return rc;
}
