/* .qjson: the saved form of a quantized graph (docs/quantization.md §7).
 *
 * One JSON object: format/version, the graph name and opset, every tensor
 * (name, dtype, dims, layout, quantization, constant data as base64 of the
 * little-endian bytes), the input and output names, and every node (name, op,
 * input/output names, host flag, the attributes of its op family, and its q
 * block).  The loader trusts nothing: each field is type- and range-checked
 * (unknown fields are errors, so a typo cannot be silently ignored), sizes
 * are checked before anything is allocated, and the result must pass
 * enpu_qgraph_check.  Messages name the file and the field, e.g.
 * "m.qjson: nodes[3] 'conv1': q.S[2]: 70 is outside 0..63". */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "easynpu/quant.h"
#include "quant/qinternal.h"

#define QJSON_FORMAT "easynpu-qgraph"
#define QJSON_VERSION 1

/* --- base64 ----------------------------------------------------------------------- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const uint8_t *d, size_t n) {
    size_t len = 4 * ((n + 2) / 3);
    char *s = malloc(len + 1), *o = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16;
        if (i + 1 < n) v |= (uint32_t)d[i + 1] << 8;
        if (i + 2 < n) v |= d[i + 2];
        *o++ = B64[(v >> 18) & 63];
        *o++ = B64[(v >> 12) & 63];
        *o++ = i + 1 < n ? B64[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? B64[v & 63] : '=';
    }
    *o = 0;
    return s;
}

static int b64_val(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes exactly `want` bytes into out (caller-allocated); false if s is not
 * the canonical base64 of `want` bytes. */
static bool b64_decode(const char *s, size_t slen, uint8_t *out, size_t want) {
    if (slen != 4 * ((want + 2) / 3)) return false;
    size_t o = 0;
    for (size_t i = 0; i < slen; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            v[k] = s[i + k] == '=' ? -2 : b64_val(s[i + k]);
            if (v[k] == -1) return false;
        }
        bool last = i + 4 == slen;
        if (v[0] < 0 || v[1] < 0 || (v[2] == -2 && v[3] != -2) || (!last && (v[2] < 0 || v[3] < 0)))
            return false;
        uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
                     (uint32_t)(v[2] < 0 ? 0 : v[2]) << 6 | (uint32_t)(v[3] < 0 ? 0 : v[3]);
        uint8_t b[3] = {(uint8_t)(x >> 16), (uint8_t)(x >> 8), (uint8_t)x};
        int nb = v[2] < 0 ? 1 : (v[3] < 0 ? 2 : 3);
        for (int k = 0; k < nb; k++) {
            if (o >= want) return false;
            out[o++] = b[k];
        }
    }
    return o == want;
}

/* --- names of enums ----------------------------------------------------------------- */

static const enpu_dtype k_dtypes[] = {ENPU_DT_FLOAT32, ENPU_DT_UINT8,  ENPU_DT_INT8,   ENPU_DT_UINT16,
                                      ENPU_DT_INT16,   ENPU_DT_INT32,  ENPU_DT_INT64,  ENPU_DT_BOOL,
                                      ENPU_DT_FLOAT64, ENPU_DT_UINT32, ENPU_DT_UINT64};

static const char *layout_name(enpu_layout l) {
    return l == ENPU_LAYOUT_NCHW ? "nchw" : l == ENPU_LAYOUT_NHWC ? "nhwc" : "any";
}

typedef enum fam {
    FAM_NONE, FAM_CONV, FAM_POOL, FAM_GEMM, FAM_ACT, FAM_BN, FAM_SHAPE, FAM_PAD,
    FAM_SLICE, FAM_RESIZE, FAM_REDUCE, FAM_NORM, FAM_GELU
} fam;

static fam family(enpu_op op) {
    switch (op) {
    case ENPU_OP_CONV: case ENPU_OP_CONV_TRANSPOSE: return FAM_CONV;
    case ENPU_OP_POW: return FAM_ACT; /* a table's constant exponent in alpha */
    case ENPU_OP_GATHER: case ENPU_OP_EXPAND: return FAM_SHAPE;
    case ENPU_OP_SLICE: return FAM_SLICE;
    case ENPU_OP_RESIZE: return FAM_RESIZE;
    case ENPU_OP_REDUCE_MEAN: case ENPU_OP_REDUCE_MAX: case ENPU_OP_REDUCE_SUM: return FAM_REDUCE;
    case ENPU_OP_LAYER_NORM: return FAM_NORM;
    case ENPU_OP_GELU: return FAM_GELU;
    case ENPU_OP_MAXPOOL: case ENPU_OP_AVGPOOL: return FAM_POOL;
    case ENPU_OP_GEMM: return FAM_GEMM;
    case ENPU_OP_RELU: case ENPU_OP_CLIP: case ENPU_OP_LEAKY_RELU: case ENPU_OP_PRELU:
    case ENPU_OP_SIGMOID: case ENPU_OP_TANH: case ENPU_OP_HARD_SIGMOID: case ENPU_OP_HARD_SWISH:
    case ENPU_OP_SILU:
        return FAM_ACT;
    case ENPU_OP_BATCHNORM: return FAM_BN;
    case ENPU_OP_RESHAPE: case ENPU_OP_FLATTEN: case ENPU_OP_SQUEEZE: case ENPU_OP_UNSQUEEZE:
    case ENPU_OP_TRANSPOSE: case ENPU_OP_CONCAT: case ENPU_OP_SOFTMAX:
        return FAM_SHAPE;
    case ENPU_OP_PAD: return FAM_PAD;
    default: return FAM_NONE;
    }
}

static enpu_op op_by_name(const char *s) {
    for (int i = 1; i < ENPU_OP_COUNT; i++)
        if (strcmp(enpu_op_name((enpu_op)i), s) == 0) return (enpu_op)i;
    return ENPU_OP_NONE;
}

/* --- saving ------------------------------------------------------------------------------ */

static json_t *jfloat(double v) {
    if (isnan(v)) return json_string("nan");
    if (isinf(v)) return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

static json_t *jints(const int *v, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *jbytes(const void *d, size_t n) {
    char *s = b64_encode(d, n);
    if (!s) return NULL;
    json_t *j = json_string(s);
    free(s);
    return j;
}

static json_t *save_window(const enpu_window *w) {
    json_t *o = json_object();
    json_object_set_new(o, "kernel", jints(w->kernel, 2));
    json_object_set_new(o, "stride", jints(w->stride, 2));
    json_object_set_new(o, "dilation", jints(w->dilation, 2));
    json_object_set_new(o, "pads", jints(w->pads, 4));
    return o;
}

static json_t *save_attr(const enpu_node *n) {
    const enpu_attr *a = &n->attr;
    json_t *o = NULL;
    switch (family(n->op)) {
    case FAM_CONV:
        o = save_window(&a->conv.w);
        json_object_set_new(o, "group", json_integer(a->conv.group));
        if (n->op == ENPU_OP_CONV_TRANSPOSE) json_object_set_new(o, "out_pad", jints(a->conv.out_pad, 2));
        break;
    case FAM_SLICE: {
        o = json_object();
        json_t *st = json_array(), *sp = json_array();
        for (int i = 0; i < a->slice.n && i < ENPU_MAX_RANK; i++) {
            json_array_append_new(st, json_integer(a->slice.starts[i]));
            json_array_append_new(sp, json_integer(a->slice.steps[i]));
        }
        json_object_set_new(o, "starts", st);
        json_object_set_new(o, "steps", sp);
        break;
    }
    case FAM_RESIZE: {
        const enpu_resize_attr *r = &a->resize;
        o = json_object();
        json_object_set_new(o, "mode", json_integer(r->mode));
        json_object_set_new(o, "coordinate_transform", json_integer(r->ctm));
        json_object_set_new(o, "nearest_mode", json_integer(r->nearest));
        json_object_set_new(o, "exclude_outside", json_boolean(r->exclude_outside));
        json_object_set_new(o, "cubic_a", jfloat(r->cubic_a));
        json_object_set_new(o, "extrapolation", jfloat(r->extrapolation));
        json_t *sc = json_array(), *roi = json_array();
        for (int i = 0; i < r->n_scales && i < ENPU_MAX_RANK; i++) json_array_append_new(sc, jfloat(r->scales[i]));
        for (int i = 0; i < r->n_roi && i < 2 * ENPU_MAX_RANK; i++) json_array_append_new(roi, jfloat(r->roi[i]));
        json_object_set_new(o, "scales", sc);
        json_object_set_new(o, "roi", roi);
        break;
    }
    case FAM_REDUCE:
        o = json_object();
        json_object_set_new(o, "axes", jints(a->reduce.axes, a->reduce.n_axes < 0 ? 0 : a->reduce.n_axes > ENPU_MAX_RANK ? ENPU_MAX_RANK : a->reduce.n_axes));
        json_object_set_new(o, "keepdims", json_boolean(a->reduce.keepdims));
        json_object_set_new(o, "noop_with_empty_axes", json_boolean(a->reduce.noop_with_empty_axes));
        break;
    case FAM_NORM:
        o = json_object();
        json_object_set_new(o, "axis", json_integer(a->norm.axis));
        json_object_set_new(o, "epsilon", jfloat(a->norm.epsilon));
        break;
    case FAM_GELU:
        o = json_object();
        json_object_set_new(o, "approximate", json_boolean(a->misc.approximate != 0));
        break;
    case FAM_POOL:
        o = save_window(&a->pool.w);
        json_object_set_new(o, "ceil_mode", json_boolean(a->pool.ceil_mode));
        json_object_set_new(o, "count_include_pad", json_boolean(a->pool.count_include_pad));
        break;
    case FAM_GEMM:
        o = json_object();
        json_object_set_new(o, "alpha", jfloat(a->gemm.alpha));
        json_object_set_new(o, "beta", jfloat(a->gemm.beta));
        json_object_set_new(o, "trans_a", json_boolean(a->gemm.trans_a));
        json_object_set_new(o, "trans_b", json_boolean(a->gemm.trans_b));
        break;
    case FAM_ACT:
        o = json_object();
        json_object_set_new(o, "min", jfloat(a->act.min));
        json_object_set_new(o, "max", jfloat(a->act.max));
        json_object_set_new(o, "alpha", jfloat(a->act.alpha));
        json_object_set_new(o, "beta", jfloat(a->act.beta));
        break;
    case FAM_BN:
        o = json_object();
        json_object_set_new(o, "epsilon", jfloat(a->bn.epsilon));
        break;
    case FAM_SHAPE: {
        o = json_object();
        json_object_set_new(o, "axis", json_integer(a->shape.axis));
        int n_axes = a->shape.n_axes < 0 ? 0 : (a->shape.n_axes > ENPU_MAX_RANK ? ENPU_MAX_RANK : a->shape.n_axes);
        json_object_set_new(o, "axes", jints(a->shape.axes, n_axes));
        json_object_set_new(o, "allowzero", json_boolean(a->shape.allowzero));
        json_object_set_new(o, "softmax_legacy", json_boolean(a->shape.softmax_legacy));
        if (a->shape.n_shape < 0) {
            json_object_set_new(o, "shape", json_null());
        } else {
            json_t *s = json_array();
            for (int i = 0; i < a->shape.n_shape && i < ENPU_MAX_RANK; i++)
                json_array_append_new(s, json_integer(a->shape.shape[i]));
            json_object_set_new(o, "shape", s);
        }
        break;
    }
    case FAM_PAD: {
        o = json_object();
        json_t *p = json_array();
        for (int i = 0; i < a->pad.n_pads && i < 2 * ENPU_MAX_RANK; i++)
            json_array_append_new(p, json_integer(a->pad.pads[i]));
        json_object_set_new(o, "pads", p);
        json_object_set_new(o, "value", jfloat(a->pad.value));
        if (a->pad.mode != ENPU_PADMODE_CONSTANT) json_object_set_new(o, "mode", json_integer(a->pad.mode));
        break;
    }
    case FAM_NONE: break;
    }
    return o;
}

static json_t *save_table(const enpu_pwl_table *t) {
    json_t *o = json_object(), *a = json_array(), *b = json_array();
    json_object_set_new(o, "segments", json_integer(t->segments));
    json_object_set_new(o, "x_base", json_integer(t->x_base));
    json_object_set_new(o, "seg_shift", json_integer(t->seg_shift));
    for (int i = 0; i < t->segments && i < ENPU_PWL_SEGMENTS_MAX; i++) {
        json_array_append_new(a, json_integer(t->a[i]));
        json_array_append_new(b, json_integer(t->b[i]));
    }
    json_object_set_new(o, "a", a);
    json_object_set_new(o, "b", b);
    json_object_set_new(o, "M", json_integer(t->M));
    json_object_set_new(o, "S", json_integer(t->S));
    json_object_set_new(o, "zp_out", json_integer(t->zp_out));
    json_object_set_new(o, "lo", json_integer(t->lo));
    json_object_set_new(o, "hi", json_integer(t->hi));
    json_object_set_new(o, "max_err_lsb", jfloat(t->max_err_lsb));
    json_object_set_new(o, "n_err", json_integer(t->n_err));
    json_object_set_new(o, "acc_min", json_integer(t->acc_min));
    json_object_set_new(o, "acc_max", json_integer(t->acc_max));
    return o;
}

/* Whether const input k of n holds exactly `bytes` (then q omits the copy). */
static bool input_holds(const enpu_graph *g, const enpu_node *n, int k, enpu_dtype dt,
                        const void *bytes, size_t nb) {
    const enpu_tensor *t = enpu_node_input(g, n, k);
    return t && t->dtype == dt && t->data && t->rank >= 0 && enpu_tensor_nbytes(t) == nb &&
           memcmp(t->data, bytes, nb) == 0;
}

static json_t *save_q(const enpu_graph *g, const enpu_node *n) {
    const enpu_qnode *q = n->q;
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(enpu_qkind_name(q->kind)));
    if (q->kind == ENPU_Q_CONV) json_object_set_new(o, "origin", json_string(enpu_qorigin_name(q->origin)));
    json_object_set_new(o, "n_ch", json_integer(q->n_ch));
    if (q->w && !input_holds(g, n, 1, ENPU_DT_INT8, q->w, (size_t)q->n_w))
        json_object_set_new(o, "w", jbytes(q->w, (size_t)q->n_w));
    if (q->w16 && !input_holds(g, n, 1, ENPU_DT_INT16, q->w16, (size_t)q->n_w * 2)) /* a 16-bit graph */
        json_object_set_new(o, "w16", jbytes((const uint8_t *)q->w16, (size_t)q->n_w * 2));
    if (q->bias && !input_holds(g, n, 2, ENPU_DT_INT32, q->bias, (size_t)q->n_ch * 4))
        json_object_set_new(o, "bias", jbytes(q->bias, (size_t)q->n_ch * 4));
    if (q->M && q->S) {
        json_t *m = json_array(), *s = json_array();
        for (int c = 0; c < q->n_ch; c++) {
            json_array_append_new(m, json_integer(q->M[c]));
            json_array_append_new(s, json_integer(q->S[c]));
        }
        json_object_set_new(o, "M", m);
        json_object_set_new(o, "S", s);
    }
    if (q->kind == ENPU_Q_ADD) {
        json_t *a = json_array();
        json_array_append_new(a, json_integer(q->A[0]));
        json_array_append_new(a, json_integer(q->A[1]));
        json_object_set_new(o, "A", a);
        if (q->SA[0] || q->SA[1]) {
            json_t *sa = json_array();
            json_array_append_new(sa, json_integer(q->SA[0]));
            json_array_append_new(sa, json_integer(q->SA[1]));
            json_object_set_new(o, "SA", sa);
        }
    }
    json_t *z = json_array();
    json_array_append_new(z, json_integer(q->zp_in[0]));
    json_array_append_new(z, json_integer(q->zp_in[1]));
    json_object_set_new(o, "zp_in", z);
    json_object_set_new(o, "zp_out", json_integer(q->zp_out));
    json_object_set_new(o, "lo", json_integer(q->lo));
    json_object_set_new(o, "hi", json_integer(q->hi));
    if (q->table) json_object_set_new(o, "table", save_table(q->table));
    if (q->fused) json_object_set_new(o, "fused", json_string(q->fused));
    return o;
}

static json_t *tname_or_null(const enpu_graph *g, int t) {
    return t >= 0 ? json_string(g->tensors[t].name) : json_null();
}

int enpu_qgraph_save(const char *path, const enpu_graph *qg, enpu_err *err) {
    if (!path || !qg) return enpu_fail(err, ENPU_E_USAGE, "enpu_qgraph_save: NULL argument");
    int rc = enpu_qgraph_check(qg, err);
    if (rc) return enpu_err_prefix(err, "%s: refusing to save", path);
    json_t *root = json_object(), *tensors = json_array(), *nodes = json_array();
    json_t *ins = json_array(), *outs = json_array();
    json_object_set_new(root, "format", json_string(QJSON_FORMAT));
    json_object_set_new(root, "version", json_integer(QJSON_VERSION));
    json_object_set_new(root, "name", json_string(qg->name ? qg->name : ""));
    json_object_set_new(root, "opset", json_integer(qg->opset));
    if (qg->requant != ENPU_REQUANT_EASYNPU)
        json_object_set_new(root, "requant", json_string(enpu_requant_name(qg->requant)));
    bool oom = false;
    for (int t = 0; t < qg->n_tensors; t++) {
        const enpu_tensor *x = &qg->tensors[t];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(x->name));
        json_object_set_new(o, "dtype", json_string(enpu_dtype_name(x->dtype)));
        json_t *d = json_array();
        for (int i = 0; i < x->rank; i++) json_array_append_new(d, json_integer(x->dims[i]));
        json_object_set_new(o, "dims", x->rank >= 0 ? d : json_null());
        if (x->rank < 0) json_decref(d);
        json_object_set_new(o, "layout", json_string(layout_name(x->layout)));
        if (x->quant) {
            json_t *qo = json_object(), *s = json_array(), *z = json_array();
            json_object_set_new(qo, "axis", json_integer(x->quant->axis));
            for (int i = 0; i < x->quant->count; i++) {
                json_array_append_new(s, jfloat(x->quant->scale[i]));
                json_array_append_new(z, json_integer(x->quant->zero_point[i]));
            }
            json_object_set_new(qo, "scale", s);
            json_object_set_new(qo, "zero_point", z);
            json_object_set_new(o, "quant", qo);
        }
        if ((x->flags & ENPU_T_CONST) && x->data && x->rank >= 0) {
            json_t *b = jbytes(x->data, enpu_tensor_nbytes(x));
            if (!b) oom = true;
            json_object_set_new(o, "data", b);
        }
        json_array_append_new(tensors, o);
    }
    for (int i = 0; i < qg->n_inputs; i++) json_array_append_new(ins, tname_or_null(qg, qg->inputs[i]));
    for (int i = 0; i < qg->n_outputs; i++)
        json_array_append_new(outs, tname_or_null(qg, qg->outputs[i]));
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        json_t *o = json_object(), *ni = json_array(), *no = json_array();
        json_object_set_new(o, "name", json_string(n->name));
        json_object_set_new(o, "op", json_string(enpu_op_name(n->op)));
        for (int k = 0; k < n->n_in; k++) json_array_append_new(ni, tname_or_null(qg, n->in[k]));
        for (int k = 0; k < n->n_out; k++) json_array_append_new(no, tname_or_null(qg, n->out[k]));
        json_object_set_new(o, "inputs", ni);
        json_object_set_new(o, "outputs", no);
        json_object_set_new(o, "host", json_boolean(n->host));
        json_t *a = save_attr(n);
        if (a) json_object_set_new(o, "attr", a);
        json_object_set_new(o, "q", save_q(qg, n));
        json_array_append_new(nodes, o);
    }
    json_object_set_new(root, "tensors", tensors);
    json_object_set_new(root, "inputs", ins);
    json_object_set_new(root, "outputs", outs);
    json_object_set_new(root, "nodes", nodes);
    char *text = oom ? NULL : json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory serializing", path);
    size_t len = strlen(text);
    rc = enpu_file_write_atomic(path, text, len, err);
    free(text);
    return rc;
}

/* --- loading ------------------------------------------------------------------------------ */

typedef struct ld {
    const char *file;
    enpu_err *err;
    char where[ENPU_MAX_NAME + 96]; /* "nodes[3] 'conv1'" */
} ld;

static int lfail(ld *l, enpu_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int lfail(ld *l, enpu_status code, const char *fmt, ...) {
    char msg[ENPU_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (l->where[0]) return enpu_fail(l->err, code, "%s: %s: %s", l->file, l->where, msg);
    return enpu_fail(l->err, code, "%s: %s", l->file, msg);
}

/* Every key of o is one of the NULL-terminated list. */
static int only_keys(ld *l, json_t *o, const char *pre, const char *const *keys) {
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (int i = 0; keys[i] && !ok; i++) ok = strcmp(keys[i], k) == 0;
        if (!ok) return lfail(l, ENPU_E_FORMAT, "%s%s: unknown field", pre, k);
    }
    return 0;
}

static int get(ld *l, json_t *o, const char *pre, const char *key, json_type want, bool required,
               json_t **out) {
    json_t *v = json_object_get(o, key);
    *out = v;
    if (!v) return required ? lfail(l, ENPU_E_FORMAT, "%s%s: missing", pre, key) : 0;
    if (json_typeof(v) != want &&
        !(want == JSON_TRUE && json_is_boolean(v)) && !(want == JSON_REAL && json_is_number(v)))
        return lfail(l, ENPU_E_FORMAT, "%s%s: wrong type", pre, key);
    return 0;
}

static int get_int(ld *l, json_t *o, const char *pre, const char *key, long long lo, long long hi,
                   bool required, long long dflt, long long *out) {
    json_t *v;
    int rc = get(l, o, pre, key, JSON_INTEGER, required, &v);
    if (rc) return rc;
    *out = dflt;
    if (!v) return 0;
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return lfail(l, ENPU_E_FORMAT, "%s%s: %lld is outside %lld..%lld", pre, key, x, lo, hi);
    *out = x;
    return 0;
}

static int int_elem(ld *l, json_t *a, size_t i, const char *pre, const char *key, long long lo,
                    long long hi, long long *out) {
    json_t *v = json_array_get(a, i);
    if (!json_is_integer(v))
        return lfail(l, ENPU_E_FORMAT, "%s%s[%zu]: not an integer", pre, key, i);
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return lfail(l, ENPU_E_FORMAT, "%s%s[%zu]: %lld is outside %lld..%lld", pre, key, i, x, lo,
                     hi);
    *out = x;
    return 0;
}

/* A float field: a number or "inf"/"-inf"/"nan". */
/* *out is written on every path (NAN on failure), so no caller reads an
 * unset value whatever the optimiser proves about lfail's result. */
static int num_value(ld *l, json_t *v, const char *pre, const char *key, double *out) {
    *out = NAN;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "inf")) *out = INFINITY;
        else if (!strcmp(s, "-inf")) *out = -INFINITY;
        else if (!strcmp(s, "nan")) *out = NAN;
        else return lfail(l, ENPU_E_FORMAT, "%s%s: '%s' is not a number", pre, key, s);
        return 0;
    }
    return lfail(l, ENPU_E_FORMAT, "%s%s: not a number", pre, key);
}

static int get_num(ld *l, json_t *o, const char *pre, const char *key, bool required, double dflt,
                   double *out) {
    json_t *v = json_object_get(o, key);
    *out = dflt;
    if (!v) return required ? lfail(l, ENPU_E_FORMAT, "%s%s: missing", pre, key) : 0;
    return num_value(l, v, pre, key, out);
}

static int get_bool(ld *l, json_t *o, const char *pre, const char *key, bool *out) {
    json_t *v;
    int rc = get(l, o, pre, key, JSON_TRUE, false, &v);
    if (!rc) *out = v ? json_is_true(v) : false;
    return rc;
}

/* Integer array of exactly n (n >= 0) or, with n < 0, at most -n entries. */
static int get_ints(ld *l, json_t *o, const char *pre, const char *key, int n, long long lo,
                    long long hi, bool required, long long *out, int *count) {
    json_t *a;
    int rc = get(l, o, pre, key, JSON_ARRAY, required, &a);
    if (rc || !a) {
        if (count) *count = 0;
        return rc;
    }
    size_t len = json_array_size(a);
    if ((n >= 0 && len != (size_t)n) || (n < 0 && len > (size_t)-n))
        return lfail(l, ENPU_E_FORMAT, "%s%s: %zu entries, %s%d expected", pre, key, len,
                     n < 0 ? "at most " : "", n < 0 ? -n : n);
    for (size_t i = 0; i < len; i++)
        if ((rc = int_elem(l, a, i, pre, key, lo, hi, &out[i]))) return rc;
    if (count) *count = (int)len;
    return 0;
}

/* Base64 field of exactly `bytes` bytes into a new buffer. */
static int get_b64(ld *l, json_t *v, const char *pre, const char *key, size_t bytes, void **out) {
    *out = NULL;
    if (!json_is_string(v)) return lfail(l, ENPU_E_FORMAT, "%s%s: not a base64 string", pre, key);
    size_t slen = json_string_length(v);
    if (slen != 4 * ((bytes + 2) / 3))
        return lfail(l, ENPU_E_FORMAT, "%s%s: %zu base64 characters for %zu bytes (%zu expected)",
                     pre, key, slen, bytes, 4 * ((bytes + 2) / 3));
    uint8_t *d = malloc(bytes ? bytes : 1);
    if (!d) return lfail(l, ENPU_E_NOMEM, "%s%s: out of memory", pre, key);
    if (!b64_decode(json_string_value(v), slen, d, bytes)) {
        free(d);
        return lfail(l, ENPU_E_FORMAT, "%s%s: not valid base64", pre, key);
    }
    *out = d;
    return 0;
}

static int load_tensor(ld *l, enpu_graph *g, json_t *o, size_t idx) {
    snprintf(l->where, sizeof l->where, "tensors[%zu]", idx);
    if (!json_is_object(o)) return lfail(l, ENPU_E_FORMAT, "not an object");
    static const char *const keys[] = {"name", "dtype", "dims", "layout", "quant", "data", NULL};
    json_t *jn, *jd, *jdims, *jl, *jq, *jdata;
    int rc = get(l, o, "", "name", JSON_STRING, true, &jn);
    if (rc) return rc;
    if (json_string_length(jn) <= ENPU_MAX_NAME && json_string_length(jn) > 0)
        snprintf(l->where, sizeof l->where, "tensors[%zu] '%s'", idx, json_string_value(jn));
    if ((rc = only_keys(l, o, "", keys)) ||
        (rc = get(l, o, "", "dtype", JSON_STRING, true, &jd)) ||
        (rc = get(l, o, "", "layout", JSON_STRING, false, &jl)) ||
        (rc = get(l, o, "", "quant", JSON_OBJECT, false, &jq)))
        return rc;
    const char *name = json_string_value(jn);
    if (!name[0] || json_string_length(jn) > ENPU_MAX_NAME || strlen(name) != json_string_length(jn))
        return lfail(l, ENPU_E_FORMAT, "name: empty, too long or holding NUL");
    snprintf(l->where, sizeof l->where, "tensors[%zu] '%s'", idx, name);
    enpu_dtype dt = ENPU_DT_UNDEFINED;
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (!strcmp(enpu_dtype_name(k_dtypes[i]), json_string_value(jd))) dt = k_dtypes[i];
    if (dt == ENPU_DT_UNDEFINED)
        return lfail(l, ENPU_E_FORMAT, "dtype: unknown '%s'", json_string_value(jd));
    jdims = json_object_get(o, "dims");
    int rank = -1;
    long long dims[ENPU_MAX_RANK];
    int64_t d64[ENPU_MAX_RANK];
    if (!jdims) return lfail(l, ENPU_E_FORMAT, "dims: missing");
    if (!json_is_null(jdims)) {
        if ((rc = get_ints(l, o, "", "dims", -ENPU_MAX_RANK, 0, ENPU_MAX_DIM, true, dims, &rank)))
            return rc;
        for (int i = 0; i < rank; i++) d64[i] = dims[i];
        int64_t numel;
        if ((rc = enpu_shape_numel(rank, d64, &numel, name, l->err))) return enpu_err_prefix(l->err, "%s", l->file);
    }
    int t = enpu_graph_add_tensor(g, name, dt, rank, d64, l->err);
    if (t < 0) return enpu_err_prefix(l->err, "%s: %s", l->file, l->where);
    enpu_tensor *x = &g->tensors[t];
    if (jl) {
        const char *s = json_string_value(jl);
        if (!strcmp(s, "nchw")) x->layout = ENPU_LAYOUT_NCHW;
        else if (!strcmp(s, "nhwc")) x->layout = ENPU_LAYOUT_NHWC;
        else if (strcmp(s, "any")) return lfail(l, ENPU_E_FORMAT, "layout: unknown '%s'", s);
    }
    if (jq) {
        static const char *const qkeys[] = {"axis", "scale", "zero_point", NULL};
        if ((rc = only_keys(l, jq, "quant.", qkeys))) return rc;
        long long axis;
        json_t *js, *jz;
        if ((rc = get_int(l, jq, "quant.", "axis", -1, ENPU_MAX_RANK - 1, true, -1, &axis)) ||
            (rc = get(l, jq, "quant.", "scale", JSON_ARRAY, true, &js)) ||
            (rc = get(l, jq, "quant.", "zero_point", JSON_ARRAY, true, &jz)))
            return rc;
        size_t count = json_array_size(js);
        size_t want = axis < 0 ? 1 : (rank > axis ? (size_t)x->dims[axis] : 0);
        if (axis >= 0 && rank <= axis) return lfail(l, ENPU_E_FORMAT, "quant.axis: %lld for rank %d", axis, rank);
        if (count != want || json_array_size(jz) != count || count < 1 || (axis >= 0 && count == 1 && want != 1))
            return lfail(l, ENPU_E_FORMAT, "quant.scale/zero_point: %zu/%zu entries, %zu expected",
                         count, json_array_size(jz), want);
        float *s = malloc(count * sizeof(float));
        int32_t *z = malloc(count * sizeof(int32_t));
        if (!s || !z) {
            free(s);
            free(z);
            return lfail(l, ENPU_E_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < count && !rc; i++) {
            double v;
            long long zz;
            char key[48];
            snprintf(key, sizeof key, "scale[%zu]", i);
            rc = num_value(l, json_array_get(js, i), "quant.", key, &v);
            if (!rc && !(v > 0 && v < 3.0e38))
                rc = lfail(l, ENPU_E_FORMAT, "quant.scale[%zu]: %g is not a positive finite float", i, v);
            if (!rc) rc = int_elem(l, jz, i, "quant.", "zero_point", INT32_MIN, INT32_MAX, &zz);
            if (rc) break;
            s[i] = (float)v;
            z[i] = (int32_t)zz;
        }
        if (!rc) rc = enpu_tensor_set_quant(x, (int)axis, (int)count, s, z, l->err);
        free(s);
        free(z);
        if (rc) return rc;
    }
    jdata = json_object_get(o, "data");
    if (jdata) {
        if (rank < 0) return lfail(l, ENPU_E_FORMAT, "data: a constant needs dims");
        void *d;
        if ((rc = get_b64(l, jdata, "", "data", enpu_tensor_nbytes(x), &d))) return rc;
        enpu_tensor_set_data(x, d);
    }
    return 0;
}

static int tensor_ref(ld *l, enpu_graph *g, json_t *v, const char *pre, size_t i, bool allow_null,
                      int *out) {
    *out = -1; /* on every path, as num_value */
    if (json_is_null(v) && allow_null) return 0;
    if (!json_is_string(v)) return lfail(l, ENPU_E_FORMAT, "%s[%zu]: not a tensor name", pre, i);
    int t = enpu_graph_find_tensor(g, json_string_value(v));
    if (t < 0)
        return lfail(l, ENPU_E_INVALID, "%s[%zu]: no tensor named '%s'", pre, i,
                     json_string_value(v));
    *out = t;
    return 0;
}

static int load_window(ld *l, json_t *a, enpu_window *w) {
    long long v[4];
    int rc;
    if ((rc = get_ints(l, a, "attr.", "kernel", 2, 1, 1 << 20, true, v, NULL))) return rc;
    w->kernel[0] = (int)v[0], w->kernel[1] = (int)v[1];
    if ((rc = get_ints(l, a, "attr.", "stride", 2, 1, 1 << 20, true, v, NULL))) return rc;
    w->stride[0] = (int)v[0], w->stride[1] = (int)v[1];
    if ((rc = get_ints(l, a, "attr.", "dilation", 2, 1, 1 << 20, true, v, NULL))) return rc;
    w->dilation[0] = (int)v[0], w->dilation[1] = (int)v[1];
    if ((rc = get_ints(l, a, "attr.", "pads", 4, 0, 1 << 20, true, v, NULL))) return rc;
    for (int i = 0; i < 4; i++) w->pads[i] = (int)v[i];
    w->auto_pad = ENPU_PAD_NOTSET;
    return 0;
}

static int load_attr(ld *l, json_t *a, enpu_op op, enpu_attr *at) {
    memset(at, 0, sizeof *at);
    fam f = family(op);
    if (!a) {
        if (f != FAM_NONE) return lfail(l, ENPU_E_FORMAT, "attr: missing for %s", enpu_op_name(op));
        return 0;
    }
    if (!json_is_object(a)) return lfail(l, ENPU_E_FORMAT, "attr: not an object");
    int rc = 0;
    long long v;
    double d;
    switch (f) {
    case FAM_NONE:
        return lfail(l, ENPU_E_FORMAT, "attr: %s takes no attributes", enpu_op_name(op));
    case FAM_CONV: {
        static const char *const k[] = {"kernel", "stride", "dilation", "pads", "group", "out_pad", NULL};
        if ((rc = only_keys(l, a, "attr.", k)) || (rc = load_window(l, a, &at->conv.w))) return rc;
        if ((rc = get_int(l, a, "attr.", "group", 1, INT32_MAX, true, 1, &v))) return rc;
        at->conv.group = (int)v;
        if (op == ENPU_OP_CONV_TRANSPOSE) {
            long long p[2];
            if ((rc = get_ints(l, a, "attr.", "out_pad", 2, 0, 65535, true, p, NULL))) return rc;
            at->conv.out_pad[0] = (int)p[0], at->conv.out_pad[1] = (int)p[1];
        } else if (json_object_get(a, "out_pad")) {
            return lfail(l, ENPU_E_FORMAT, "attr.out_pad: only for ConvTranspose");
        }
        return 0;
    }
    case FAM_SLICE: {
        static const char *const k[] = {"starts", "steps", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        long long st[ENPU_MAX_RANK], sp[ENPU_MAX_RANK];
        int ns, np;
        if ((rc = get_ints(l, a, "attr.", "starts", -ENPU_MAX_RANK, 0, ENPU_MAX_DIM, true, st, &ns)) ||
            (rc = get_ints(l, a, "attr.", "steps", -ENPU_MAX_RANK, -ENPU_MAX_DIM - 1, ENPU_MAX_DIM + 1, true, sp, &np)))
            return rc;
        if (ns != np) return lfail(l, ENPU_E_FORMAT, "attr: %d starts and %d steps", ns, np);
        at->slice.n = ns;
        for (int i = 0; i < ns; i++) {
            at->slice.axes[i] = i;
            at->slice.starts[i] = st[i];
            at->slice.steps[i] = sp[i];
        }
        return 0;
    }
    case FAM_RESIZE: {
        static const char *const k[] = {"mode", "coordinate_transform", "nearest_mode", "exclude_outside",
                                        "cubic_a", "extrapolation", "scales", "roi", NULL};
        enpu_resize_attr *r = &at->resize;
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        if ((rc = get_int(l, a, "attr.", "mode", 0, ENPU_RESIZE_CUBIC, true, 0, &v))) return rc;
        r->mode = (int)v;
        if ((rc = get_int(l, a, "attr.", "coordinate_transform", 0, ENPU_CTM_TF_CROP_AND_RESIZE, true, 0, &v)))
            return rc;
        r->ctm = (int)v;
        if ((rc = get_int(l, a, "attr.", "nearest_mode", 0, ENPU_NEAREST_CEIL, true, 0, &v))) return rc;
        r->nearest = (int)v;
        if ((rc = get_bool(l, a, "attr.", "exclude_outside", &r->exclude_outside))) return rc;
        double ca, ex;
        if ((rc = get_num(l, a, "attr.", "cubic_a", true, 0, &ca)) ||
            (rc = get_num(l, a, "attr.", "extrapolation", true, 0, &ex)))
            return rc;
        if (!isfinite(ca) || !isfinite(ex)) return lfail(l, ENPU_E_FORMAT, "attr: cubic_a/extrapolation not finite");
        r->cubic_a = (float)ca, r->extrapolation = (float)ex;
        for (int which = 0; which < 2; which++) {
            json_t *arr = json_object_get(a, which ? "roi" : "scales");
            size_t cap = which ? 2 * ENPU_MAX_RANK : ENPU_MAX_RANK;
            if (!json_is_array(arr) || json_array_size(arr) > cap)
                return lfail(l, ENPU_E_FORMAT, "attr.%s: not an array of at most %zu numbers",
                             which ? "roi" : "scales", cap);
            for (size_t i = 0; i < json_array_size(arr); i++) {
                json_t *e = json_array_get(arr, i);
                if (!json_is_number(e) || !isfinite(json_number_value(e)))
                    return lfail(l, ENPU_E_FORMAT, "attr.%s[%zu]: not a finite number", which ? "roi" : "scales", i);
                if (which) r->roi[i] = (float)json_number_value(e);
                else r->scales[i] = (float)json_number_value(e);
            }
            if (which) r->n_roi = (int)json_array_size(arr);
            else r->n_scales = (int)json_array_size(arr);
        }
        return 0;
    }
    case FAM_REDUCE: {
        static const char *const k[] = {"axes", "keepdims", "noop_with_empty_axes", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        long long ax[ENPU_MAX_RANK];
        int n;
        if ((rc = get_ints(l, a, "attr.", "axes", -ENPU_MAX_RANK, 0, ENPU_MAX_RANK - 1, true, ax, &n))) return rc;
        at->reduce.n_axes = n;
        for (int i = 0; i < n; i++) at->reduce.axes[i] = (int)ax[i];
        if ((rc = get_bool(l, a, "attr.", "keepdims", &at->reduce.keepdims))) return rc;
        return get_bool(l, a, "attr.", "noop_with_empty_axes", &at->reduce.noop_with_empty_axes);
    }
    case FAM_NORM: {
        static const char *const k[] = {"axis", "epsilon", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        if ((rc = get_int(l, a, "attr.", "axis", 0, ENPU_MAX_RANK - 1, true, 0, &v))) return rc;
        at->norm.axis = (int)v;
        if ((rc = get_num(l, a, "attr.", "epsilon", true, 0, &d))) return rc;
        if (!(d >= 0) || !isfinite(d)) return lfail(l, ENPU_E_FORMAT, "attr.epsilon: %g", d);
        at->norm.epsilon = (float)d;
        return 0;
    }
    case FAM_GELU: {
        static const char *const k[] = {"approximate", NULL};
        bool ap;
        if ((rc = only_keys(l, a, "attr.", k)) || (rc = get_bool(l, a, "attr.", "approximate", &ap))) return rc;
        at->misc.approximate = ap;
        return 0;
    }
    case FAM_POOL: {
        static const char *const k[] = {"kernel", "stride", "dilation", "pads", "ceil_mode",
                                        "count_include_pad", NULL};
        if ((rc = only_keys(l, a, "attr.", k)) || (rc = load_window(l, a, &at->pool.w)) ||
            (rc = get_bool(l, a, "attr.", "ceil_mode", &at->pool.ceil_mode)))
            return rc;
        return get_bool(l, a, "attr.", "count_include_pad", &at->pool.count_include_pad);
    }
    case FAM_GEMM: {
        static const char *const k[] = {"alpha", "beta", "trans_a", "trans_b", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        if ((rc = get_num(l, a, "attr.", "alpha", true, 1, &d))) return rc;
        at->gemm.alpha = (float)d;
        if ((rc = get_num(l, a, "attr.", "beta", true, 1, &d))) return rc;
        at->gemm.beta = (float)d;
        if ((rc = get_bool(l, a, "attr.", "trans_a", &at->gemm.trans_a))) return rc;
        return get_bool(l, a, "attr.", "trans_b", &at->gemm.trans_b);
    }
    case FAM_ACT: {
        static const char *const k[] = {"min", "max", "alpha", "beta", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        double mn, mx, al, be;
        if ((rc = get_num(l, a, "attr.", "min", true, 0, &mn)) ||
            (rc = get_num(l, a, "attr.", "max", true, 0, &mx)) ||
            (rc = get_num(l, a, "attr.", "alpha", true, 0, &al)) ||
            (rc = get_num(l, a, "attr.", "beta", true, 0, &be)))
            return rc;
        if (isnan(mn) || isnan(mx) || !isfinite(al) || !isfinite(be))
            return lfail(l, ENPU_E_FORMAT, "attr: min/max must not be NaN, alpha/beta finite");
        at->act.min = (float)mn, at->act.max = (float)mx, at->act.alpha = (float)al,
        at->act.beta = (float)be;
        return 0;
    }
    case FAM_BN: {
        static const char *const k[] = {"epsilon", NULL};
        if ((rc = only_keys(l, a, "attr.", k)) || (rc = get_num(l, a, "attr.", "epsilon", true, 0, &d)))
            return rc;
        if (!(d >= 0) || !isfinite(d)) return lfail(l, ENPU_E_FORMAT, "attr.epsilon: %g", d);
        at->bn.epsilon = (float)d;
        return 0;
    }
    case FAM_SHAPE: {
        static const char *const k[] = {"axis", "axes", "allowzero", "softmax_legacy", "shape", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        if ((rc = get_int(l, a, "attr.", "axis", -ENPU_MAX_RANK, ENPU_MAX_RANK, true, 0, &v))) return rc;
        at->shape.axis = (int)v;
        long long ax[ENPU_MAX_RANK];
        int n;
        if ((rc = get_ints(l, a, "attr.", "axes", -ENPU_MAX_RANK, -ENPU_MAX_RANK, ENPU_MAX_RANK, true,
                           ax, &n)))
            return rc;
        at->shape.n_axes = n;
        for (int i = 0; i < n; i++) at->shape.axes[i] = (int)ax[i];
        if ((rc = get_bool(l, a, "attr.", "allowzero", &at->shape.allowzero)) ||
            (rc = get_bool(l, a, "attr.", "softmax_legacy", &at->shape.softmax_legacy)))
            return rc;
        json_t *s = json_object_get(a, "shape");
        if (!s) return lfail(l, ENPU_E_FORMAT, "attr.shape: missing");
        if (json_is_null(s)) {
            at->shape.n_shape = -1;
            return 0;
        }
        long long sh[ENPU_MAX_RANK];
        if ((rc = get_ints(l, a, "attr.", "shape", -ENPU_MAX_RANK, -1, ENPU_MAX_DIM, true, sh, &n)))
            return rc;
        at->shape.n_shape = n;
        for (int i = 0; i < n; i++) at->shape.shape[i] = sh[i];
        return 0;
    }
    case FAM_PAD: {
        static const char *const k[] = {"pads", "value", "mode", NULL};
        if ((rc = only_keys(l, a, "attr.", k))) return rc;
        long long p[2 * ENPU_MAX_RANK];
        int n;
        if ((rc = get_ints(l, a, "attr.", "pads", -2 * ENPU_MAX_RANK, -ENPU_MAX_DIM, ENPU_MAX_DIM,
                           true, p, &n)))
            return rc;
        at->pad.n_pads = n;
        for (int i = 0; i < n; i++) at->pad.pads[i] = p[i];
        if ((rc = get_num(l, a, "attr.", "value", true, 0, &d))) return rc;
        if (!isfinite(d)) return lfail(l, ENPU_E_FORMAT, "attr.value: not finite");
        at->pad.value = (float)d;
        if ((rc = get_int(l, a, "attr.", "mode", 0, ENPU_PADMODE_REFLECT, false, 0, &v))) return rc;
        at->pad.mode = (int)v;
        return 0;
    }
    }
    return 0;
}

static int load_table(ld *l, json_t *o, enpu_pwl_table *t) {
    static const char *const k[] = {"segments", "x_base", "seg_shift", "a", "b", "M", "S", "zp_out",
                                    "lo", "hi", "max_err_lsb", "n_err", "acc_min", "acc_max", NULL};
    int rc = only_keys(l, o, "q.table.", k);
    if (rc) return rc;
    long long v, arr[ENPU_PWL_SEGMENTS_MAX];
    if ((rc = get_int(l, o, "q.table.", "segments", 1, ENPU_PWL_SEGMENTS_MAX, true, 0, &v))) return rc;
    t->segments = (int)v;
    if ((rc = get_int(l, o, "q.table.", "x_base", -128, 127, true, 0, &v))) return rc;
    t->x_base = (int)v;
    if ((rc = get_int(l, o, "q.table.", "seg_shift", 0, 8, true, 0, &v))) return rc;
    t->seg_shift = (int)v;
    if ((rc = get_ints(l, o, "q.table.", "a", t->segments, -128, 127, true, arr, NULL))) return rc;
    for (int i = 0; i < t->segments; i++) t->a[i] = (int8_t)arr[i];
    if ((rc = get_ints(l, o, "q.table.", "b", t->segments, INT32_MIN, INT32_MAX, true, arr, NULL)))
        return rc;
    for (int i = 0; i < t->segments; i++) t->b[i] = (int32_t)arr[i];
    if ((rc = get_int(l, o, "q.table.", "M", 0, INT32_MAX, true, 0, &v))) return rc;
    t->M = (uint32_t)v;
    if ((rc = get_int(l, o, "q.table.", "S", 0, ENPU_SHIFT_MAX, true, 0, &v))) return rc;
    t->S = (int)v;
    if ((rc = get_int(l, o, "q.table.", "zp_out", -128, 127, true, 0, &v))) return rc;
    t->zp_out = (int32_t)v;
    if ((rc = get_int(l, o, "q.table.", "lo", -128, 127, true, 0, &v))) return rc;
    t->lo = (int32_t)v;
    if ((rc = get_int(l, o, "q.table.", "hi", -128, 127, true, 0, &v))) return rc;
    t->hi = (int32_t)v;
    double d;
    if ((rc = get_num(l, o, "q.table.", "max_err_lsb", false, 0, &d))) return rc;
    t->max_err_lsb = d;
    if ((rc = get_int(l, o, "q.table.", "n_err", 0, 256, false, 0, &v))) return rc;
    t->n_err = (int)v;
    long long am, ax;
    if ((rc = get_int(l, o, "q.table.", "acc_min", INT64_MIN, INT64_MAX, false, 0, &am)) ||
        (rc = get_int(l, o, "q.table.", "acc_max", INT64_MIN, INT64_MAX, false, 0, &ax)))
        return rc;
    t->acc_min = am;
    t->acc_max = ax;
    return 0;
}

/* q.w16 (base64 of little-endian int16) or input 1's int16 weights. */
static int load_w16(ld *l, enpu_qnode *q, json_t *jw16, const enpu_tensor *wt) {
    if (jw16) {
        if (!json_is_string(jw16)) return lfail(l, ENPU_E_FORMAT, "q.w16: not a base64 string");
        size_t slen = json_string_length(jw16);
        const char *s = json_string_value(jw16);
        size_t bytes = slen / 4 * 3;
        if (slen % 4 || bytes > (size_t)ENPU_MAX_ELEMS * 2 + 3)
            return lfail(l, ENPU_E_FORMAT, "q.w16: bad base64 length %zu", slen);
        if (slen >= 1 && s[slen - 1] == '=') bytes--;
        if (slen >= 2 && s[slen - 2] == '=') bytes--;
        if (bytes % 2) return lfail(l, ENPU_E_FORMAT, "q.w16: %zu bytes, not whole int16 values", bytes);
        void *d;
        int rc = get_b64(l, jw16, "q.", "w16", bytes, &d);
        if (rc) return rc;
        q->w16 = d;
        q->n_w = (int64_t)(bytes / 2);
        return 0;
    }
    if (!wt->data || wt->rank < 0) return lfail(l, ENPU_E_FORMAT, "q.w16: missing (and input 1 has no data)");
    q->n_w = enpu_tensor_numel(wt);
    q->w16 = malloc((size_t)(q->n_w ? q->n_w : 1) * sizeof(int16_t));
    if (!q->w16) return lfail(l, ENPU_E_NOMEM, "out of memory");
    memcpy(q->w16, wt->data, (size_t)q->n_w * sizeof(int16_t));
    return 0;
}

static int load_q(ld *l, enpu_graph *g, enpu_node *n, json_t *o) {
    static const char *const k[] = {"kind", "origin", "n_ch", "w", "w16", "bias", "M", "S", "A", "SA",
                                    "zp_in", "zp_out", "lo", "hi", "table", "fused", NULL};
    int rc = only_keys(l, o, "q.", k);
    if (rc) return rc;
    json_t *jk, *jo, *jt, *jf;
    if ((rc = get(l, o, "q.", "kind", JSON_STRING, true, &jk)) ||
        (rc = get(l, o, "q.", "origin", JSON_STRING, false, &jo)) ||
        (rc = get(l, o, "q.", "table", JSON_OBJECT, false, &jt)) ||
        (rc = get(l, o, "q.", "fused", JSON_STRING, false, &jf)))
        return rc;
    enpu_qnode *q = calloc(1, sizeof *q);
    if (!q) return lfail(l, ENPU_E_NOMEM, "out of memory");
    n->q = q; /* owned by the graph from here on */
    int kind = 0;
    for (int i = ENPU_Q_CONV; i <= ENPU_Q_HOST; i++)
        if (!strcmp(json_string_value(jk), enpu_qkind_name((enpu_qkind)i))) kind = i;
    if (!kind) return lfail(l, ENPU_E_FORMAT, "q.kind: unknown '%s'", json_string_value(jk));
    q->kind = (enpu_qkind)kind;
    if (jo) {
        int org = -1;
        for (int i = ENPU_QO_CONV; i <= ENPU_QO_RESCALE; i++)
            if (!strcmp(json_string_value(jo), enpu_qorigin_name((enpu_qorigin)i))) org = i;
        if (org < 0) return lfail(l, ENPU_E_FORMAT, "q.origin: unknown '%s'", json_string_value(jo));
        q->origin = (enpu_qorigin)org;
    } else if (q->kind == ENPU_Q_CONV) {
        return lfail(l, ENPU_E_FORMAT, "q.origin: missing for kind conv");
    }
    long long v;
    if ((rc = get_int(l, o, "q.", "n_ch", 0, INT32_MAX, true, 0, &v))) return rc;
    q->n_ch = (int)v;
    /* Arrays of n_ch entries: bounded by the size of their JSON arrays below. */
    json_t *jm = json_object_get(o, "M"), *js = json_object_get(o, "S");
    if (q->n_ch > 0) {
        if (!json_is_array(jm) || json_array_size(jm) != (size_t)q->n_ch)
            return lfail(l, ENPU_E_FORMAT, "q.M: %d entries expected", q->n_ch);
        if (!json_is_array(js) || json_array_size(js) != (size_t)q->n_ch)
            return lfail(l, ENPU_E_FORMAT, "q.S: %d entries expected", q->n_ch);
        q->M = malloc((size_t)q->n_ch * sizeof(uint32_t));
        q->S = malloc((size_t)q->n_ch);
        if (!q->M || !q->S) return lfail(l, ENPU_E_NOMEM, "out of memory");
        for (int c = 0; c < q->n_ch; c++) {
            long long m, s;
            if ((rc = int_elem(l, jm, (size_t)c, "q.", "M", 0, INT32_MAX, &m)) ||
                (rc = int_elem(l, js, (size_t)c, "q.", "S", 0, ENPU_SHIFT_MAX, &s)))
                return rc;
            q->M[c] = (uint32_t)m;
            q->S[c] = (int8_t)s;
        }
    } else if (jm || js) {
        return lfail(l, ENPU_E_FORMAT, "q.M/q.S: given with n_ch 0");
    }
    long long arr[2];
    if (json_object_get(o, "A")) {
        if ((rc = get_ints(l, o, "q.", "A", 2, 0, INT32_MAX, true, arr, NULL))) return rc;
        q->A[0] = (uint32_t)arr[0];
        q->A[1] = (uint32_t)arr[1];
    } else if (q->kind == ENPU_Q_ADD) {
        return lfail(l, ENPU_E_FORMAT, "q.A: missing for kind add");
    }
    if (json_object_get(o, "SA")) {
        if (q->kind != ENPU_Q_ADD) return lfail(l, ENPU_E_FORMAT, "q.SA: only for kind add");
        if ((rc = get_ints(l, o, "q.", "SA", 2, 0, ENPU_SHIFT_MAX, true, arr, NULL))) return rc;
        q->SA[0] = (int8_t)arr[0];
        q->SA[1] = (int8_t)arr[1];
    }
    if ((rc = get_ints(l, o, "q.", "zp_in", 2, -128, 127, true, arr, NULL))) return rc;
    q->zp_in[0] = (int32_t)arr[0];
    q->zp_in[1] = (int32_t)arr[1];
    if ((rc = get_int(l, o, "q.", "zp_out", -128, 127, true, 0, &v))) return rc;
    q->zp_out = (int32_t)v;
    /* clamps of a 16-bit graph's int16 outputs (its inputs are read first) */
    const int64_t cl = enpu_qgraph_bits(g) == 16 ? -32768 : -128, ch = enpu_qgraph_bits(g) == 16 ? 32767 : 127;
    if ((rc = get_int(l, o, "q.", "lo", cl, ch, true, 0, &v))) return rc;
    q->lo = (int32_t)v;
    if ((rc = get_int(l, o, "q.", "hi", cl, ch, true, 0, &v))) return rc;
    q->hi = (int32_t)v;
    if (jf) {
        size_t len = json_string_length(jf);
        q->fused = malloc(len + 1);
        if (!q->fused) return lfail(l, ENPU_E_NOMEM, "out of memory");
        memcpy(q->fused, json_string_value(jf), len + 1);
    }
    if (jt) {
        if (q->kind != ENPU_Q_TABLE) return lfail(l, ENPU_E_FORMAT, "q.table: given for kind %s",
                                                  enpu_qkind_name(q->kind));
        q->table = calloc(1, sizeof *q->table);
        if (!q->table) return lfail(l, ENPU_E_NOMEM, "out of memory");
        if ((rc = load_table(l, jt, q->table))) return rc;
    } else if (q->kind == ENPU_Q_TABLE) {
        return lfail(l, ENPU_E_FORMAT, "q.table: missing for kind table");
    }
    json_t *jw = json_object_get(o, "w"), *jb = json_object_get(o, "bias"), *jw16 = json_object_get(o, "w16");
    if (q->kind != ENPU_Q_CONV) {
        if (jw || jb || jw16) return lfail(l, ENPU_E_FORMAT, "q.w/q.w16/q.bias: given for kind %s",
                                           enpu_qkind_name(q->kind));
        return 0;
    }
    /* Weights: given, or those of input 1 (Conv/Gemm); int16 ones in a
     * 16-bit graph. */
    const enpu_tensor *wt = enpu_node_input(g, n, 1), *bt = enpu_node_input(g, n, 2);
    if (jw && jw16) return lfail(l, ENPU_E_FORMAT, "q.w and q.w16: one of them");
    if (jw16 || (!jw && wt && wt->dtype == ENPU_DT_INT16)) {
        if ((rc = load_w16(l, q, jw16, wt))) return rc;
    } else if (jw) {
        if (!json_is_string(jw)) return lfail(l, ENPU_E_FORMAT, "q.w: not a base64 string");
        size_t slen = json_string_length(jw);
        size_t bytes = slen / 4 * 3;
        if (slen % 4 || bytes > (size_t)ENPU_MAX_ELEMS + 3)
            return lfail(l, ENPU_E_FORMAT, "q.w: bad base64 length %zu", slen);
        const char *s = json_string_value(jw);
        if (slen >= 1 && s[slen - 1] == '=') bytes--;
        if (slen >= 2 && s[slen - 2] == '=') bytes--;
        void *d;
        if ((rc = get_b64(l, jw, "q.", "w", bytes, &d))) return rc;
        q->w = d;
        q->n_w = (int64_t)bytes;
    } else {
        if (!wt || wt->dtype != ENPU_DT_INT8 || !wt->data || wt->rank < 0)
            return lfail(l, ENPU_E_FORMAT, "q.w: missing (and input 1 is not int8 weights)");
        q->n_w = enpu_tensor_numel(wt);
        q->w = malloc((size_t)(q->n_w ? q->n_w : 1));
        if (!q->w) return lfail(l, ENPU_E_NOMEM, "out of memory");
        memcpy(q->w, wt->data, (size_t)q->n_w);
    }
    size_t bb = (size_t)q->n_ch * 4;
    if (jb) {
        void *d;
        if ((rc = get_b64(l, jb, "q.", "bias", bb, &d))) return rc;
        q->bias = d;
    } else {
        if (!bt || bt->dtype != ENPU_DT_INT32 || !bt->data || bt->rank < 0 ||
            enpu_tensor_numel(bt) != q->n_ch)
            return lfail(l, ENPU_E_FORMAT, "q.bias: missing (and input 2 is not %d int32 values)",
                         q->n_ch);
        q->bias = malloc(bb ? bb : 1);
        if (!q->bias) return lfail(l, ENPU_E_NOMEM, "out of memory");
        memcpy(q->bias, bt->data, bb);
    }
    return 0;
}

static int load_node(ld *l, enpu_graph *g, json_t *o, size_t idx) {
    snprintf(l->where, sizeof l->where, "nodes[%zu]", idx);
    if (!json_is_object(o)) return lfail(l, ENPU_E_FORMAT, "not an object");
    static const char *const keys[] = {"name", "op", "inputs", "outputs", "host", "attr", "q", NULL};
    json_t *jn, *jop, *ji, *jo, *jq;
    int rc = get(l, o, "", "name", JSON_STRING, true, &jn);
    if (rc) return rc;
    if (json_string_length(jn) > ENPU_MAX_NAME || strlen(json_string_value(jn)) != json_string_length(jn))
        return lfail(l, ENPU_E_FORMAT, "name: too long or holding NUL");
    snprintf(l->where, sizeof l->where, "nodes[%zu] '%s'", idx, json_string_value(jn));
    if ((rc = only_keys(l, o, "", keys))) return rc;
    if ((rc = get(l, o, "", "op", JSON_STRING, true, &jop)) ||
        (rc = get(l, o, "", "inputs", JSON_ARRAY, true, &ji)) ||
        (rc = get(l, o, "", "outputs", JSON_ARRAY, true, &jo)) ||
        (rc = get(l, o, "", "q", JSON_OBJECT, true, &jq)))
        return rc;
    enpu_op op = op_by_name(json_string_value(jop));
    if (op == ENPU_OP_NONE) return lfail(l, ENPU_E_FORMAT, "op: unknown '%s'", json_string_value(jop));
    size_t ni = json_array_size(ji), no = json_array_size(jo);
    if (ni > 64 || no < 1 || no > 64)
        return lfail(l, ENPU_E_FORMAT, "inputs/outputs: %zu/%zu entries (0..64 / 1..64)", ni, no);
    int in[64], out[64];
    for (size_t i = 0; i < ni; i++)
        if ((rc = tensor_ref(l, g, json_array_get(ji, i), "inputs", i, true, &in[i]))) return rc;
    for (size_t i = 0; i < no; i++)
        if ((rc = tensor_ref(l, g, json_array_get(jo, i), "outputs", i, false, &out[i]))) return rc;
    enpu_attr attr;
    if ((rc = load_attr(l, json_object_get(o, "attr"), op, &attr))) return rc;
    int k = enpu_graph_add_node(g, json_string_value(jn), op, (int)ni, in, (int)no, out, l->err);
    if (k < 0) return enpu_err_prefix(l->err, "%s: %s", l->file, l->where);
    enpu_node *n = &g->nodes[k];
    n->attr = attr;
    if ((rc = get_bool(l, o, "", "host", &n->host))) return rc;
    return load_q(l, g, n, jq);
}

static void qnode_hook(struct enpu_qnode *q) { enpu_qnode_free(q); }

int enpu_qgraph_parse(const char *text, size_t len, const char *what, enpu_graph **out,
                      enpu_err *err) {
    if (!out) return enpu_fail(err, ENPU_E_USAGE, "enpu_qgraph_parse: NULL output");
    *out = NULL;
    ld l = {what ? what : "<memory>", err, ""};
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: line %d: not valid JSON: %s", l.file, je.line,
                         je.text);
    enpu_qnode_free_hook = qnode_hook;
    enpu_graph *g = NULL;
    int rc = 0;
    if (!json_is_object(root)) {
        rc = lfail(&l, ENPU_E_FORMAT, "not a JSON object");
        goto done;
    }
    static const char *const keys[] = {"format", "version", "name", "opset", "requant", "tensors",
                                       "inputs", "outputs", "nodes", NULL};
    json_t *jf, *jname, *jt, *ji, *jo, *jn;
    long long v;
    if ((rc = only_keys(&l, root, "", keys)) || (rc = get(&l, root, "", "format", JSON_STRING, true, &jf)))
        goto done;
    if (strcmp(json_string_value(jf), QJSON_FORMAT)) {
        rc = lfail(&l, ENPU_E_FORMAT, "format: '%s' is not '%s'", json_string_value(jf), QJSON_FORMAT);
        goto done;
    }
    if ((rc = get_int(&l, root, "", "version", QJSON_VERSION, QJSON_VERSION, true, 0, &v)) ||
        (rc = get(&l, root, "", "name", JSON_STRING, true, &jname)) ||
        (rc = get(&l, root, "", "tensors", JSON_ARRAY, true, &jt)) ||
        (rc = get(&l, root, "", "inputs", JSON_ARRAY, true, &ji)) ||
        (rc = get(&l, root, "", "outputs", JSON_ARRAY, true, &jo)) ||
        (rc = get(&l, root, "", "nodes", JSON_ARRAY, true, &jn)))
        goto done;
    if (json_array_size(jt) > ENPU_MAX_TENSORS || json_array_size(jn) > ENPU_MAX_NODES) {
        rc = lfail(&l, ENPU_E_LIMIT, "tensors/nodes: %zu/%zu, over the limits %d/%d",
                   json_array_size(jt), json_array_size(jn), ENPU_MAX_TENSORS, ENPU_MAX_NODES);
        goto done;
    }
    g = enpu_graph_new(json_string_value(jname));
    if (!g) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = get_int(&l, root, "", "opset", 0, 1000, true, 0, &v))) goto done;
    g->opset = (int)v;
    json_t *jr;
    if ((rc = get(&l, root, "", "requant", JSON_STRING, false, &jr))) goto done;
    if (jr && (g->requant = enpu_requant_parse(json_string_value(jr))) < 0) {
        rc = lfail(&l, ENPU_E_FORMAT, "requant: '%s' is not \"easynpu\" or \"tflite\"",
                   json_string_value(jr));
        goto done;
    }
    for (size_t i = 0; i < json_array_size(jt) && !rc; i++) rc = load_tensor(&l, g, json_array_get(jt, i), i);
    l.where[0] = 0;
    for (size_t i = 0; i < json_array_size(ji) && !rc; i++) {
        int t;
        rc = tensor_ref(&l, g, json_array_get(ji, i), "inputs", i, false, &t);
        if (!rc && (g->tensors[t].flags & ENPU_T_CONST))
            rc = lfail(&l, ENPU_E_INVALID, "inputs[%zu]: '%s' is a constant", i, g->tensors[t].name);
        if (!rc && (rc = enpu_graph_add_input(g, t, err))) enpu_err_prefix(err, "%s", l.file);
    }
    for (size_t i = 0; i < json_array_size(jn) && !rc; i++) rc = load_node(&l, g, json_array_get(jn, i), i);
    l.where[0] = 0;
    for (size_t i = 0; i < json_array_size(jo) && !rc; i++) {
        int t;
        rc = tensor_ref(&l, g, json_array_get(jo, i), "outputs", i, false, &t);
        if (!rc && (rc = enpu_graph_add_output(g, t, err))) enpu_err_prefix(err, "%s", l.file);
    }
    if (!rc && (rc = enpu_qgraph_check(g, err))) enpu_err_prefix(err, "%s", l.file);
done:
    json_decref(root);
    if (rc) {
        enpu_graph_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int enpu_qgraph_load(const char *path, enpu_graph **out, enpu_err *err) {
    if (!out) return enpu_fail(err, ENPU_E_USAGE, "enpu_qgraph_load: NULL output");
    *out = NULL;
    uint8_t *data;
    size_t n;
    int rc = enpu_file_read(path, ENPU_MAX_QJSON_BYTES, &data, &n, err);
    if (rc) return rc;
    rc = enpu_qgraph_parse((const char *)data, n, path, out, err);
    free(data);
    return rc;
}
