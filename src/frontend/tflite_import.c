/* TFLite importer (easynpu/tflite.h): the first subgraph of an int8 .tflite
 * model into a quantized graph with requant "tflite", every integer
 * parameter prepared exactly as TFLite Micro prepares it (numerics.h).
 * Schema field numbers (TFLite's schema.fbs, version 3) are the FB_* names
 * below; docs/tflite.md lists them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "easynpu/quant.h"
#include "easynpu/tflite.h"
#include "frontend/tflite_fb.h"

/* ---- schema: field ids (declaration order; a union takes two) ----------- */
enum { FB_MODEL_VERSION = 0, FB_MODEL_OPCODES = 1, FB_MODEL_SUBGRAPHS = 2, FB_MODEL_BUFFERS = 4 };
enum { FB_OPCODE_DEPRECATED = 0, FB_OPCODE_CUSTOM = 1, FB_OPCODE_BUILTIN = 3 };
enum { FB_SG_TENSORS = 0, FB_SG_INPUTS = 1, FB_SG_OUTPUTS = 2, FB_SG_OPERATORS = 3 };
enum {
    FB_TENSOR_SHAPE = 0, FB_TENSOR_TYPE = 1, FB_TENSOR_BUFFER = 2, FB_TENSOR_NAME = 3,
    FB_TENSOR_QUANT = 4, FB_TENSOR_VARIABLE = 5, FB_TENSOR_SPARSITY = 6
};
enum { FB_Q_SCALE = 2, FB_Q_ZP = 3, FB_Q_DETAILS_TYPE = 4, FB_Q_DIM = 6 };
enum {
    FB_OP_OPCODE = 0, FB_OP_INPUTS = 1, FB_OP_OUTPUTS = 2, FB_OP_OPTIONS_TYPE = 3,
    FB_OP_OPTIONS = 4, FB_OP_CUSTOM = 5, FB_OP_INTERMEDIATES = 8, FB_OP_OPTIONS2_TYPE = 11
};
enum { FB_BUF_DATA = 0, FB_BUF_OFFSET = 1, FB_BUF_SIZE = 2 };

/* TensorType */
enum { TT_FLOAT32 = 0, TT_INT32 = 2, TT_UINT8 = 3, TT_INT64 = 4, TT_INT8 = 9 };
/* BuiltinOperator */
enum {
    OP_ADD = 0, OP_AVERAGE_POOL_2D = 1, OP_CONCATENATION = 2, OP_CONV_2D = 3,
    OP_DEPTHWISE_CONV_2D = 4, OP_DEQUANTIZE = 6, OP_FULLY_CONNECTED = 9, OP_LOGISTIC = 14,
    OP_MAX_POOL_2D = 17, OP_MUL = 18, OP_RESHAPE = 22, OP_SOFTMAX = 25, OP_TANH = 28,
    OP_PAD = 34, OP_MEAN = 40, OP_SQUEEZE = 43, OP_PADV2 = 60, OP_QUANTIZE = 114,
    OP_HARD_SWISH = 117
};
/* BuiltinOptions union types */
enum {
    OPT_CONV = 1, OPT_DWCONV = 2, OPT_POOL = 5, OPT_FC = 8, OPT_SOFTMAX = 9, OPT_CONCAT = 10,
    OPT_ADD = 11, OPT_RESHAPE = 17, OPT_MUL = 21, OPT_PAD = 22, OPT_REDUCER = 27,
    OPT_SQUEEZE = 30, OPT_PADV2 = 42
};

#define MAX_OPCODES 10000
#define MAX_OP_IO 64

static const char *op_name(int code) {
    switch (code) {
    case OP_ADD: return "ADD";
    case OP_AVERAGE_POOL_2D: return "AVERAGE_POOL_2D";
    case OP_CONCATENATION: return "CONCATENATION";
    case OP_CONV_2D: return "CONV_2D";
    case OP_DEPTHWISE_CONV_2D: return "DEPTHWISE_CONV_2D";
    case OP_DEQUANTIZE: return "DEQUANTIZE";
    case OP_FULLY_CONNECTED: return "FULLY_CONNECTED";
    case OP_LOGISTIC: return "LOGISTIC";
    case OP_MAX_POOL_2D: return "MAX_POOL_2D";
    case OP_MUL: return "MUL";
    case OP_RESHAPE: return "RESHAPE";
    case OP_SOFTMAX: return "SOFTMAX";
    case OP_TANH: return "TANH";
    case OP_PAD: return "PAD";
    case OP_MEAN: return "MEAN";
    case OP_SQUEEZE: return "SQUEEZE";
    case OP_PADV2: return "PADV2";
    case OP_QUANTIZE: return "QUANTIZE";
    case OP_HARD_SWISH: return "HARD_SWISH";
    default: return NULL;
    }
}

/* One TFLite tensor as read from the file. */
typedef struct tt {
    const char *name;
    int type;
    int rank;
    int64_t dims[ENPU_MAX_RANK];      /* TFLite order */
    uint32_t buffer;
    bool has_q;
    fb_vec scale, zp;
    int qdim;
    int ir;                           /* IR tensor, -1 until needed */
    int producer;                     /* TFLite operator, -1 */
    bool graph_in;                    /* a graph input (after QUANTIZE replacement) */
} tt;

typedef struct imp {
    fb_buf b;
    enpu_err *err;
    const char *file;
    enpu_graph *g;
    tt *t;
    uint32_t nt;
    fb_vec buffers;
    int32_t *codes;
    uint32_t n_codes;
    int cur;                          /* operator being imported */
    const char *cur_name;
    uint64_t const_bytes, const_limit;
    bool inputs_done;                 /* graph_io: inputs marked, now add them */
    char where[96];                   /* "op 3 (CONV_2D)" */
    char nname[64];
} imp;

static void qnode_hook(struct enpu_qnode *q) { enpu_qnode_free(q); }

#define FAIL(code, ...) enpu_fail(im->err, code, __VA_ARGS__)

static int opfail(imp *im, enpu_status code, const char *why) {
    return enpu_fail(im->err, code, "%s: %s: %s", im->file, im->where, why);
}

/* ---- layout ----------------------------------------------------------------- */

/* IR axis of TFLite axis a of a rank-r tensor (channel-last -> channel-first). */
static int ir_axis(int a, int r) {
    if (r < 3 || a == 0) return a;
    return a == r - 1 ? 1 : a + 1;
}

static void ir_dims(int r, const int64_t *tfl, int64_t *ir) {
    for (int a = 0; a < r; a++) ir[ir_axis(a, r)] = tfl[a];
}

void enpu_tflite_dims(const enpu_tensor *t, int64_t *dims) {
    for (int a = 0; a < t->rank; a++) dims[a] = t->dims[ir_axis(a, t->rank)];
}

/* Element strides of the IR layout indexed by TFLite axis. */
static void tfl_strides_in_ir(int r, const int64_t *tfl, int64_t *st) {
    int64_t ird[ENPU_MAX_RANK], irs[ENPU_MAX_RANK], s = 1;
    ir_dims(r, tfl, ird);
    for (int d = r - 1; d >= 0; d--) {
        irs[d] = s;
        s *= ird[d];
    }
    for (int a = 0; a < r; a++) st[a] = irs[ir_axis(a, r)];
}

static void convert(const enpu_tensor *t, const int8_t *src, int8_t *dst, bool to_ir) {
    int r = t->rank;
    int64_t tfl[ENPU_MAX_RANK], st[ENPU_MAX_RANK], idx[ENPU_MAX_RANK] = {0};
    enpu_tflite_dims(t, tfl);
    tfl_strides_in_ir(r, tfl, st);
    int64_t n = enpu_tensor_numel(t), off = 0;
    for (int64_t i = 0; i < n; i++) {
        if (to_ir) dst[off] = src[i];
        else dst[i] = src[off];
        for (int d = r - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < tfl[d]) break;
            off -= st[d] * tfl[d];
            idx[d] = 0;
        }
    }
}

void enpu_tflite_to_ir(const enpu_tensor *t, const int8_t *tfl, int8_t *ir) { convert(t, tfl, ir, true); }
void enpu_tflite_from_ir(const enpu_tensor *t, const int8_t *ir, int8_t *tfl) { convert(t, ir, tfl, false); }

/* ---- reading the file ---------------------------------------------------------- */

static int read_tensor(imp *im, const fb_vec *tv, uint32_t i) {
    char path[64];
    snprintf(path, sizeof path, "subgraphs[0].tensors[%u]", i);
    fb_table t, q;
    bool present;
    tt *x = &im->t[i];
    memset(x, 0, sizeof *x);
    x->ir = -1;
    x->producer = -1;
    int rc = fb_vec_table(&im->b, tv, i, path, &t);
    uint32_t len;
    if (!rc) rc = fb_string_field(&im->b, &t, FB_TENSOR_NAME, path, &x->name, &len);
    if (rc) return rc;
    uint8_t type, var;
    fb_vec shape;
    fb_table sp;
    if ((rc = fb_u8(&im->b, &t, FB_TENSOR_TYPE, 0, path, &type)) ||
        (rc = fb_u32(&im->b, &t, FB_TENSOR_BUFFER, 0, path, &x->buffer)) ||
        (rc = fb_u8(&im->b, &t, FB_TENSOR_VARIABLE, 0, path, &var)) ||
        (rc = fb_vec_field(&im->b, &t, FB_TENSOR_SHAPE, 4, path, &shape, &present)) ||
        (rc = fb_table_field(&im->b, &t, FB_TENSOR_SPARSITY, path, &sp, &present)))
        return rc;
    x->type = type;
    if (present)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': sparse tensors are not supported",
                    im->file, i, x->name);
    if (var)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': variable tensors are not supported",
                    im->file, i, x->name);
    if (shape.len > ENPU_MAX_RANK)
        return FAIL(ENPU_E_LIMIT, "%s: tensor %u '%s': rank %u is over the limit of %d", im->file,
                    i, x->name, shape.len, ENPU_MAX_RANK);
    x->rank = (int)shape.len;
    for (int d = 0; d < x->rank; d++) {
        x->dims[d] = fb_vec_i32(&im->b, &shape, (uint32_t)d);
        if (x->dims[d] < 0)
            return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': dimension %d is %lld (dynamic "
                        "shapes are not supported)", im->file, i, x->name, d,
                        (long long)x->dims[d]);
    }
    if ((rc = enpu_shape_numel(x->rank, x->dims, NULL, x->name, im->err)))
        return enpu_err_prefix(im->err, "%s: tensor %u", im->file, i);
    if ((rc = fb_table_field(&im->b, &t, FB_TENSOR_QUANT, path, &q, &present))) return rc;
    if (!present) return 0;
    bool ps, pz;
    uint8_t details;
    int32_t qdim;
    if ((rc = fb_vec_field(&im->b, &q, FB_Q_SCALE, 4, path, &x->scale, &ps)) ||
        (rc = fb_vec_field(&im->b, &q, FB_Q_ZP, 8, path, &x->zp, &pz)) ||
        (rc = fb_u8(&im->b, &q, FB_Q_DETAILS_TYPE, 0, path, &details)) ||
        (rc = fb_i32(&im->b, &q, FB_Q_DIM, 0, path, &qdim)))
        return rc;
    if (details)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': custom quantization details are not "
                    "supported", im->file, i, x->name);
    if (x->scale.len == 0) return 0; /* no quantization parameters */
    if (x->zp.len != x->scale.len)
        return FAIL(ENPU_E_INVALID, "%s: tensor %u '%s': %u scales but %u zero points", im->file,
                    i, x->name, x->scale.len, x->zp.len);
    x->has_q = true;
    x->qdim = qdim;
    return 0;
}

static int read_opcodes(imp *im, const fb_table *model) {
    fb_vec v;
    bool present;
    int rc = fb_vec_field(&im->b, model, FB_MODEL_OPCODES, 4, "operator_codes", &v, &present);
    if (rc) return rc;
    if (v.len > MAX_OPCODES)
        return FAIL(ENPU_E_LIMIT, "%s: %u operator codes, over the limit of %d", im->file, v.len,
                    MAX_OPCODES);
    im->codes = calloc(v.len ? v.len : 1, sizeof *im->codes);
    if (!im->codes) return FAIL(ENPU_E_NOMEM, "out of memory");
    im->n_codes = v.len;
    for (uint32_t i = 0; i < v.len; i++) {
        char path[48];
        snprintf(path, sizeof path, "operator_codes[%u]", i);
        fb_table c;
        uint8_t dep;
        int32_t code;
        const char *custom;
        uint32_t len;
        if ((rc = fb_vec_table(&im->b, &v, i, path, &c)) ||
            (rc = fb_u8(&im->b, &c, FB_OPCODE_DEPRECATED, 0, path, &dep)) ||
            (rc = fb_i32(&im->b, &c, FB_OPCODE_BUILTIN, 0, path, &code)) ||
            (rc = fb_string_field(&im->b, &c, FB_OPCODE_CUSTOM, path, &custom, &len)))
            return rc;
        /* the builtin code is the larger of the two fields (schema 3a) */
        int32_t d = (int8_t)dep;
        im->codes[i] = code > d ? code : d;
        if (len) im->codes[i] = -1 - (int32_t)i; /* custom: remembered as negative */
    }
    return 0;
}

/* ---- building the IR --------------------------------------------------------- */

static int uniq_name(imp *im, const char *base, char *out, size_t n) {
    if (!base[0]) base = "t";
    snprintf(out, n, "%s", base);
    for (int k = 1; enpu_graph_find_tensor(im->g, out) >= 0; k++) {
        if (k > 1000000) return FAIL(ENPU_E_LIMIT, "%s: too many tensors named '%s'", im->file, base);
        snprintf(out, n, "%s#%d", base, k);
    }
    return 0;
}

/* A new IR tensor with IR dims. */
static int new_tensor(imp *im, const char *base, enpu_dtype dt, int rank, const int64_t *dims,
                      int *out) {
    char *name = malloc(ENPU_MAX_NAME + 16);
    if (!name) return FAIL(ENPU_E_NOMEM, "out of memory");
    int rc = uniq_name(im, base, name, ENPU_MAX_NAME + 16);
    if (!rc) {
        rc = enpu_graph_add_tensor(im->g, name, dt, rank, dims, im->err);
        if (rc >= 0) {
            *out = rc;
            rc = 0;
        } else {
            enpu_err_prefix(im->err, "%s", im->file);
        }
    }
    free(name);
    return rc;
}

static float scale0(imp *im, const tt *x) { return fb_vec_f32(&im->b, &x->scale, 0); }
static int64_t zp0(imp *im, const tt *x) { return fb_vec_i64(&im->b, &x->zp, 0); }

/* Tensor index k of the operator's input list, checked. */
static int tensor_ref(imp *im, int32_t k, const char *role, tt **out) {
    *out = NULL; /* defined on failure too: gcc -O3 cannot see that opfail is non-zero */
    if (k < 0 || (uint32_t)k >= im->nt) {
        char why[96];
        snprintf(why, sizeof why, "%s refers to tensor %d (the subgraph has %u)", role, (int)k,
                 im->nt);
        return opfail(im, ENPU_E_INVALID, why);
    }
    *out = &im->t[k];
    return 0;
}

/* Per-tensor int8 parameters of an activation. */
static int act_params(imp *im, const tt *x, const char *role, float *s, int32_t *z) {
    char why[ENPU_MAX_NAME + 128];
    if (x->type != TT_INT8) {
        snprintf(why, sizeof why, "%s '%s' is of TFLite type %d, not int8 (only int8 models are "
                 "imported)", role, x->name, x->type);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if (!x->has_q || x->scale.len != 1) {
        snprintf(why, sizeof why, "%s '%s' needs one scale and zero point (it has %u)", role,
                 x->name, x->has_q ? x->scale.len : 0);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    *s = scale0(im, x);
    int64_t zz = zp0(im, x);
    if (!(*s > 0) || isinf(*s) || zz < -128 || zz > 127) {
        snprintf(why, sizeof why, "%s '%s': scale %g or zero point %lld is out of range", role,
                 x->name, (double)*s, (long long)zz);
        return opfail(im, ENPU_E_INVALID, why);
    }
    *z = (int32_t)zz;
    return 0;
}

/* Whether x has constant data (a buffer with bytes: TFLite's rule). */
static int has_data(imp *im, const tt *x, bool *yes) {
    *yes = false;
    if (x->buffer == 0 || x->buffer >= im->buffers.len) return 0;
    char path[48];
    snprintf(path, sizeof path, "buffers[%u]", x->buffer);
    fb_table bt;
    fb_vec data;
    bool present;
    int rc = fb_vec_table(&im->b, &im->buffers, x->buffer, path, &bt);
    if (!rc) rc = fb_vec_field(&im->b, &bt, FB_BUF_DATA, 1, path, &data, &present);
    *yes = !rc && present && data.len > 0;
    return rc;
}

/* The IR tensor of an int8 activation (created on first use, IR dims). */
static int act_ir(imp *im, tt *x, const char *role, int *ir) {
    float s;
    int32_t z;
    int rc = act_params(im, x, role, &s, &z);
    if (rc) return rc;
    bool is_const;
    if ((rc = has_data(im, x, &is_const))) return rc;
    if (is_const) {
        char why[ENPU_MAX_NAME + 96];
        snprintf(why, sizeof why, "%s '%s' is a constant; the NPU reads it only as a weight or a "
                 "second operand", role, x->name);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if (x->ir < 0) {
        int64_t d[ENPU_MAX_RANK];
        ir_dims(x->rank, x->dims, d);
        rc = new_tensor(im, x->name, ENPU_DT_INT8, x->rank, d, &x->ir);
        if (rc) return rc;
        enpu_tensor *t = &im->g->tensors[x->ir];
        t->layout = x->rank == 4 ? ENPU_LAYOUT_NCHW : ENPU_LAYOUT_ANY;
        if ((rc = enpu_tensor_set_quant(t, -1, 1, &s, &z, im->err))) return rc;
    }
    *ir = x->ir;
    return 0;
}

/* The bytes of constant tensor x: exactly numel * esize, counted against
 * the amplification limit (each buffer may be read by several operators). */
static int const_data(imp *im, const tt *x, size_t esize, const char *role, const uint8_t **out) {
    char why[ENPU_MAX_NAME + 128];
    int64_t n;
    enpu_shape_numel(x->rank, x->dims, &n, x->name, NULL);
    if (x->buffer == 0 || x->buffer >= im->buffers.len) {
        snprintf(why, sizeof why, "%s '%s' must be a constant (buffer %u of %u)", role, x->name,
                 x->buffer, im->buffers.len);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    char path[48];
    snprintf(path, sizeof path, "buffers[%u]", x->buffer);
    fb_table bt;
    fb_vec data;
    bool present;
    uint64_t off, size;
    bool po, ps;
    int rc;
    if ((rc = fb_vec_table(&im->b, &im->buffers, x->buffer, path, &bt)) ||
        (rc = fb_vec_field(&im->b, &bt, FB_BUF_DATA, 1, path, &data, &present)) ||
        (rc = fb_scalar(&im->b, &bt, FB_BUF_OFFSET, 8, path, &off, &po)) ||
        (rc = fb_scalar(&im->b, &bt, FB_BUF_SIZE, 8, path, &size, &ps)))
        return rc;
    if (off > 1 || size > 0) {
        snprintf(why, sizeof why, "%s '%s': data outside the FlatBuffer (buffer offset/size) is "
                 "not supported", role, x->name);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if ((uint64_t)data.len != (uint64_t)n * esize) {
        snprintf(why, sizeof why, "%s '%s': buffer %u holds %u bytes, its shape needs %lld", role,
                 x->name, x->buffer, data.len, (long long)(n * (int64_t)esize));
        return opfail(im, ENPU_E_INVALID, why);
    }
    im->const_bytes += data.len;
    if (im->const_bytes > im->const_limit)
        return FAIL(ENPU_E_LIMIT, "%s: %s: constants would take more than %llu bytes (twice the "
                    "file and 1 MiB): a buffer read by too many operators", im->file, im->where,
                    (unsigned long long)im->const_limit);
    *out = fb_vec_bytes(&im->b, &data);
    return 0;
}

static int32_t rd_i32(const uint8_t *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

/* An IR constant of dtype dt, IR dims, holding a copy of bytes. */
static int new_const(imp *im, const char *base, enpu_dtype dt, int rank, const int64_t *dims,
                     const void *bytes, size_t n, int *out) {
    int rc = new_tensor(im, base, dt, rank, dims, out);
    if (rc) return rc;
    void *copy = malloc(n ? n : 1);
    if (!copy) return FAIL(ENPU_E_NOMEM, "out of memory");
    if (n) memcpy(copy, bytes, n);
    enpu_tensor *t = &im->g->tensors[*out];
    enpu_tensor_set_data(t, copy);
    t->flags |= ENPU_T_CONST;
    return 0;
}

static enpu_qnode *qnode(imp *im, enpu_qkind kind) {
    enpu_qnode *q = calloc(1, sizeof *q);
    if (!q) enpu_fail(im->err, ENPU_E_NOMEM, "out of memory");
    else q->kind = kind, q->lo = -128, q->hi = 127;
    return q;
}

/* Adds node `op` with q (ownership taken, also on failure). */
static int add_node(imp *im, const char *suffix, enpu_op op, int n_in, const int *in, int out,
                    enpu_qnode *q, const enpu_attr *attr) {
    if (!q) return ENPU_E_NOMEM;
    char name[96];
    snprintf(name, sizeof name, "%s%s", im->nname, suffix);
    int k = enpu_graph_add_node(im->g, name, op, n_in, in, 1, &out, im->err);
    if (k < 0) {
        enpu_qnode_free(q);
        return enpu_err_prefix(im->err, "%s: %s", im->file, im->where);
    }
    enpu_node *n = &im->g->nodes[k];
    n->q = q;
    if (attr) n->attr = *attr;
    n->host = q->kind == ENPU_Q_HOST;
    return 0;
}

/* A MOVE node y = op(x); its output tensor shares x's parameters. */
static int move_node(imp *im, const char *suffix, enpu_op op, int x, int rank, const int64_t *dims,
                     const enpu_attr *attr, int y_given, int *y) {
    const enpu_tensor *xt = &im->g->tensors[x];
    float s = xt->quant->scale[0];
    int32_t z = xt->quant->zero_point[0];
    int rc;
    if (y_given >= 0) {
        *y = y_given;
    } else {
        char base[ENPU_MAX_NAME + 16];
        snprintf(base, sizeof base, "%s%s", xt->name, suffix);
        if ((rc = new_tensor(im, base, ENPU_DT_INT8, rank, dims, y))) return rc;
        if ((rc = enpu_tensor_set_quant(&im->g->tensors[*y], -1, 1, &s, &z, im->err))) return rc;
    }
    enpu_qnode *q = qnode(im, ENPU_Q_MOVE);
    if (q) q->zp_in[0] = q->zp_out = z;
    int ins[2] = {x, -1};
    int n_in = 1;
    if (op == ENPU_OP_RESHAPE) {
        /* ONNX's Reshape reads its target from input 1: an int64 constant */
        int64_t sd = rank;
        if ((rc = new_const(im, "shape", ENPU_DT_INT64, 1, &sd, dims, (size_t)rank * 8, &ins[1]))) {
            enpu_qnode_free(q);
            return rc;
        }
        n_in = 2;
    }
    return add_node(im, suffix, op, n_in, ins, *y, q, attr);
}

/* Does permuting a tensor of TFLite dims d (rank r) between the two orders
 * leave its elements in place?  True when the non-unit dims keep their order. */
static bool layout_trivial(int r, const int64_t *d) {
    if (r < 3) return true;
    int64_t ir[ENPU_MAX_RANK];
    ir_dims(r, d, ir);
    int a = 0, b = 0;
    for (;;) {
        while (a < r && d[a] == 1) a++;
        while (b < r && ir[b] == 1) b++;
        if (a == r || b == r) return a == r && b == r;
        /* the next non-unit TFLite axis must be the next non-unit IR axis */
        if (ir_axis(a, r) != b) return false;
        a++, b++;
    }
}

/* y (IR tensor with IR dims of TFLite dims yd, rank yr) = TFLite's row-major
 * reshape of x (IR tensor, TFLite dims xd, rank xr).  Transposes are added
 * where the two orders differ.  y_given: the output tensor, or -1 for new. */
static int reshape_tfl(imp *im, int x, int xr, const int64_t *xd, int yr, const int64_t *yd,
                       int y_given, int *y) {
    int rc, cur = x;
    enpu_attr a;
    if (!layout_trivial(xr, xd)) { /* to TFLite order: IR axis of each TFLite axis */
        memset(&a, 0, sizeof a);
        a.shape.n_axes = xr;
        for (int k = 0; k < xr; k++) a.shape.axes[k] = ir_axis(k, xr);
        if ((rc = move_node(im, "/to_nhwc", ENPU_OP_TRANSPOSE, cur, xr, xd, &a, -1, &cur))) return rc;
    }
    bool back = !layout_trivial(yr, yd);
    int64_t yir[ENPU_MAX_RANK];
    ir_dims(yr, yd, yir);
    memset(&a, 0, sizeof a);
    a.shape.n_shape = yr;
    const int64_t *target = back ? yd : yir;
    for (int k = 0; k < yr; k++) a.shape.shape[k] = target[k];
    if ((rc = move_node(im, back ? "/reshape" : "", ENPU_OP_RESHAPE, cur, yr, target, &a,
                        back ? -1 : y_given, &cur)))
        return rc;
    if (back) { /* TFLite order to IR: the TFLite axis of each IR axis */
        memset(&a, 0, sizeof a);
        a.shape.n_axes = yr;
        for (int k = 0; k < yr; k++) a.shape.axes[ir_axis(k, yr)] = k;
        if ((rc = move_node(im, "/to_nchw", ENPU_OP_TRANSPOSE, cur, yr, yir, &a, y_given, &cur)))
            return rc;
    }
    *y = cur;
    return 0;
}

/* ---- operators ------------------------------------------------------------------- */

typedef struct opctx {
    int code;
    int n_in, n_out;
    int32_t in[MAX_OP_IO], out[MAX_OP_IO];
    fb_table opt;
    bool has_opt;
    int opt_type;
} opctx;

static int opt_i32(imp *im, const opctx *o, unsigned id, int32_t dflt, int32_t *v) {
    if (!o->has_opt) {
        *v = dflt;
        return 0;
    }
    return fb_i32(&im->b, &o->opt, id, dflt, im->where, v);
}

static int opt_u8(imp *im, const opctx *o, unsigned id, uint8_t dflt, uint8_t *v) {
    if (!o->has_opt) {
        *v = dflt;
        return 0;
    }
    return fb_u8(&im->b, &o->opt, id, dflt, im->where, v);
}

/* A fused ActivationFunctionType (a byte). */
static int opt_act(imp *im, const opctx *o, unsigned id, int32_t *act) {
    uint8_t v;
    int rc = opt_u8(im, o, id, 0, &v);
    *act = v;
    return rc;
}

static int need_io(imp *im, const opctx *o, int min_in, int max_in) {
    if (o->n_in < min_in || o->n_in > max_in || o->n_out != 1) {
        char why[96];
        snprintf(why, sizeof why, "has %d inputs and %d outputs (%d..%d and 1 expected)", o->n_in,
                 o->n_out, min_in, max_in);
        return opfail(im, ENPU_E_INVALID, why);
    }
    return 0;
}

static int need_opt(imp *im, const opctx *o, int type) {
    if (o->opt_type != 0 && o->opt_type != type) {
        char why[64];
        snprintf(why, sizeof why, "options of type %d, %d expected", o->opt_type, type);
        return opfail(im, ENPU_E_INVALID, why);
    }
    return 0;
}

/* SAME/VALID padding of one axis as TFLite computes it; out must match. */
static int tfl_pad(imp *im, int padding, int64_t in, int k, int s, int d, int64_t out, int *before,
                   int *after) {
    bool ok = padding <= 1 && s >= 1 && d >= 1 && k >= 1 && k <= ENPU_WIN_LIMIT &&
              s <= ENPU_WIN_LIMIT && d <= ENPU_WIN_LIMIT;
    int64_t ek = ok ? (int64_t)(k - 1) * d + 1 : 0;
    int64_t want = !ok ? -1 : padding == 0 ? (in + s - 1) / s : (in - ek + s) / s;
    if (!ok || want != out || out < 1) {
        char why[160];
        snprintf(why, sizeof why, "padding %d, kernel %d, stride %d, dilation %d on %lld give "
                 "%lld outputs, the output tensor has %lld", padding, k, s, d, (long long)in,
                 (long long)want, (long long)out);
        return opfail(im, ENPU_E_INVALID, why);
    }
    int64_t total = (out - 1) * s + ek - in;
    if (total < 0) total = 0;
    *before = (int)(total / 2);
    *after = (int)(total - total / 2);
    return 0;
}

/* Filter scale of channel c (per-tensor: the one scale). */
static int filter_scale(imp *im, const tt *w, int64_t co, int qdim, const char *role) {
    char why[ENPU_MAX_NAME + 128];
    if (w->type != TT_INT8 || !w->has_q) {
        snprintf(why, sizeof why, "%s '%s' must be int8 with scales", role, w->name);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if (w->scale.len != 1 && (w->scale.len != co || w->qdim != qdim)) {
        snprintf(why, sizeof why, "%s '%s': %u scales along axis %d; one, or %lld along axis %d, "
                 "expected", role, w->name, w->scale.len, w->qdim, (long long)co, qdim);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    for (uint32_t c = 0; c < w->scale.len; c++)
        if (fb_vec_i64(&im->b, &w->zp, c) != 0 || !(fb_vec_f32(&im->b, &w->scale, c) >= 0)) {
            snprintf(why, sizeof why, "%s '%s': channel %u has zero point %lld / scale %g "
                     "(TFLite's int8 weights are symmetric)", role, w->name, c,
                     (long long)fb_vec_i64(&im->b, &w->zp, c),
                     (double)fb_vec_f32(&im->b, &w->scale, c));
            return opfail(im, ENPU_E_UNSUPPORTED, why);
        }
    return 0;
}

/* Conv-like node: weights already in IR order [co][k] (k per channel). */
typedef struct convspec {
    enpu_op op;
    enpu_qorigin origin;
    int x, y;                 /* IR tensors */
    const tt *tw, *tb;        /* TFLite weight/bias tensors (NULL: avgpool/mean/rescale) */
    int8_t *w;                /* owned, co * k */
    int64_t co, k;
    int64_t w_dims[4];
    int w_rank;
    int32_t *bias;            /* owned, raw (before the zero-point fold); NULL: 0 */
    bool raw_sum;             /* TFLite's average pool: no zero-point fold, no output zp */
    float *sw;                /* owned: the weights' scales per channel (conv, fc), or NULL */
    int act;
    enpu_attr attr;
} convspec;

static int conv_node(imp *im, convspec *cs, const uint32_t *M, const int *S) {
    const enpu_tensor *xt = &im->g->tensors[cs->x], *yt = &im->g->tensors[cs->y];
    float s_out = yt->quant->scale[0];
    int32_t zin = xt->quant->zero_point[0], zout = yt->quant->zero_point[0];
    enpu_qnode *q = qnode(im, ENPU_Q_CONV);
    int rc = 0;
    if (!q) {
        free(cs->w), free(cs->bias);
        return ENPU_E_NOMEM;
    }
    if (cs->act >= 0 &&
        enpu_tfl_act_range(cs->act, s_out, zout, im->where, &q->lo, &q->hi, im->err))
        rc = enpu_err_prefix(im->err, "%s", im->file);
    q->origin = cs->origin;
    q->n_ch = (int)cs->co;
    q->w = cs->w;
    q->n_w = cs->co * cs->k;
    q->bias = malloc((size_t)cs->co * sizeof *q->bias);
    q->M = malloc((size_t)cs->co * sizeof *q->M);
    q->S = malloc((size_t)cs->co);
    q->zp_in[0] = zin;
    q->zp_out = cs->raw_sum ? 0 : zout;
    cs->w = NULL;
    if (!rc && (!q->bias || !q->M || !q->S)) rc = FAIL(ENPU_E_NOMEM, "out of memory");
    for (int64_t c = 0; c < cs->co && !rc; c++) {
        int64_t sw = 0;
        for (int64_t i = 0; i < cs->k; i++) sw += q->w[c * cs->k + i];
        /* the input zero point folded into the bias (docs/numerics.md §5) */
        int64_t b = (cs->bias ? cs->bias[c] : 0) - (cs->raw_sum ? 0 : (int64_t)zin * sw);
        if (b < INT32_MIN || b > INT32_MAX) {
            char why[128];
            snprintf(why, sizeof why, "channel %lld: bias - zero point * sum(weights) = %lld does "
                     "not fit int32", (long long)c, (long long)b);
            rc = opfail(im, ENPU_E_UNSUPPORTED, why);
        }
        q->bias[c] = (int32_t)b;
        q->M[c] = M[c];
        q->S[c] = (int8_t)S[c];
    }
    free(cs->bias);
    cs->bias = NULL;
    if (rc) {
        enpu_qnode_free(q);
        return rc;
    }
    int ins[3] = {cs->x, -1, -1}, n_in = 1;
    if (cs->op == ENPU_OP_CONV || cs->op == ENPU_OP_GEMM) {
        char base[ENPU_MAX_NAME + 16];
        snprintf(base, sizeof base, "%s", cs->tw->name);
        if ((rc = new_const(im, base, ENPU_DT_INT8, cs->w_rank, cs->w_dims, q->w, (size_t)q->n_w,
                            &ins[1])) ||
            (rc = new_const(im, cs->tb ? cs->tb->name : "bias", ENPU_DT_INT32, 1, &cs->co, q->bias,
                            (size_t)cs->co * 4, &ins[2]))) {
            enpu_qnode_free(q);
            return rc;
        }
        /* the weights keep their per-channel scales (quant.h), zero points 0 */
        int32_t *zeros = calloc((size_t)cs->co, sizeof *zeros);
        rc = zeros && cs->sw ? enpu_tensor_set_quant(&im->g->tensors[ins[1]], 0, (int)cs->co, cs->sw,
                                                     zeros, im->err)
                             : FAIL(ENPU_E_NOMEM, "out of memory");
        free(zeros);
        if (rc) {
            enpu_qnode_free(q);
            return rc;
        }
        n_in = 3;
    }
    return add_node(im, "", cs->op, n_in, ins, cs->y, q, &cs->attr);
}

/* Multipliers s_in * s_w[c] / s_out, as TFLite prepares them. */
static int conv_multipliers(imp *im, const tt *w, int64_t co, float s_in, float s_out, uint32_t *M,
                            int *S, float *scales) {
    for (int64_t c = 0; c < co; c++) {
        float sw = fb_vec_f32(&im->b, &w->scale, w->scale.len == 1 ? 0 : (uint32_t)c);
        scales[c] = sw;
        int rc = enpu_tfl_multiplier((double)s_in * (double)sw / (double)s_out, im->where, &M[c],
                                     &S[c], im->err);
        if (rc) return enpu_err_prefix(im->err, "%s", im->file);
    }
    return 0;
}

static int bias_raw(imp *im, const opctx *o, int idx, int64_t co, int32_t **out) {
    *out = NULL;
    if (o->n_in <= idx || o->in[idx] < 0) return 0;
    tt *b;
    const uint8_t *d;
    int rc = tensor_ref(im, o->in[idx], "bias", &b);
    if (rc) return rc;
    if (b->type != TT_INT32 || b->rank != 1 || b->dims[0] != co) {
        char why[ENPU_MAX_NAME + 96];
        snprintf(why, sizeof why, "bias '%s' must be int32 of %lld values", b->name, (long long)co);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if ((rc = const_data(im, b, 4, "bias", &d))) return rc;
    *out = malloc((size_t)co * 4 + 4);
    if (!*out) return FAIL(ENPU_E_NOMEM, "out of memory");
    for (int64_t c = 0; c < co; c++) (*out)[c] = rd_i32(d + 4 * c);
    return 0;
}

/* The end of a conv or fc whose weights cs->w are in IR order: the bias,
 * the per-channel multipliers, the node. */
static int weighted_node(imp *im, const opctx *o, convspec *cs, const tt *w, float s_in,
                         float s_out) {
    uint32_t *M = malloc((size_t)cs->co * sizeof *M);
    int *S = malloc((size_t)cs->co * sizeof *S);
    cs->sw = malloc((size_t)cs->co * sizeof *cs->sw);
    int rc = cs->w && M && S && cs->sw ? 0 : FAIL(ENPU_E_NOMEM, "out of memory");
    if (!rc) rc = bias_raw(im, o, 2, cs->co, &cs->bias);
    if (!rc && o->n_in > 2 && o->in[2] >= 0) cs->tb = &im->t[o->in[2]];
    if (!rc) rc = conv_multipliers(im, w, cs->co, s_in, s_out, M, S, cs->sw);
    if (!rc) rc = conv_node(im, cs, M, S);
    else free(cs->w), free(cs->bias);
    free(cs->sw);
    free(M);
    free(S);
    return rc;
}

/* A conv-kind node of weights 1 (average pool, mean, rescale) whose
 * channels share one (M, S). */
static int uniform_node(imp *im, convspec *cs, uint32_t M0, int S0) {
    uint32_t *M = malloc((size_t)cs->co * sizeof *M);
    int *S = malloc((size_t)cs->co * sizeof *S);
    cs->w = malloc((size_t)(cs->co * cs->k));
    int rc = M && S && cs->w ? 0 : FAIL(ENPU_E_NOMEM, "out of memory");
    if (!rc) {
        memset(cs->w, 1, (size_t)(cs->co * cs->k));
        for (int64_t c = 0; c < cs->co; c++) M[c] = M0, S[c] = S0;
        rc = conv_node(im, cs, M, S);
    } else {
        free(cs->w);
    }
    free(M);
    free(S);
    return rc;
}

static int imp_conv(imp *im, const opctx *o, bool depthwise) {
    int rc;
    if ((rc = need_io(im, o, 2, 3)) || (rc = need_opt(im, o, depthwise ? OPT_DWCONV : OPT_CONV)))
        return rc;
    tt *x, *w, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->in[1], "filter", &w)) ||
        (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    uint8_t padding;
    int32_t sw, sh, dw, dh, mult = 1, act;
    /* Conv2DOptions: padding 0, stride_w 1, stride_h 2, act 3, dilation_w 4, dilation_h 5;
     * DepthwiseConv2DOptions: padding 0, stride_w 1, stride_h 2, depth_multiplier 3, act 4,
     * dilation_w 5, dilation_h 6 */
    int sh_i = depthwise ? 1 : 0;
    if ((rc = opt_u8(im, o, 0, 0, &padding)) || (rc = opt_i32(im, o, 1, 1, &sw)) ||
        (rc = opt_i32(im, o, 2, 1, &sh)) ||
        (depthwise && (rc = opt_i32(im, o, 3, 1, &mult))) ||
        (rc = opt_act(im, o, 3 + (unsigned)sh_i, &act)) ||
        (rc = opt_i32(im, o, 4 + (unsigned)sh_i, 1, &dw)) || (rc = opt_i32(im, o, 5 + (unsigned)sh_i, 1, &dh)))
        return rc;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4)
        return opfail(im, ENPU_E_UNSUPPORTED, "input, filter and output must be 4-D (NHWC)");
    int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
    int64_t co = depthwise ? w->dims[3] : w->dims[0], kh = w->dims[1], kw = w->dims[2];
    int64_t cig = depthwise ? 1 : w->dims[3];
    int64_t group = depthwise ? C : (cig > 0 && C % cig == 0 ? C / cig : 0);
    if (co < 1 || cig < 1 || group < 1 || co % group || y->dims[0] != N || y->dims[3] != co ||
        (depthwise && (w->dims[0] != 1 || co != C * (mult > 0 ? mult : 0))) || group > INT32_MAX)
        return opfail(im, ENPU_E_INVALID, "filter, input and output channels do not agree");
    int pads[4];
    if ((rc = tfl_pad(im, padding, H, (int)(kh <= ENPU_WIN_LIMIT ? kh : -1), sh, dh, y->dims[1],
                      &pads[0], &pads[2])) ||
        (rc = tfl_pad(im, padding, W, (int)(kw <= ENPU_WIN_LIMIT ? kw : -1), sw, dw, y->dims[2],
                      &pads[1], &pads[3])))
        return rc;
    if ((rc = filter_scale(im, w, co, depthwise ? 3 : 0, "filter"))) return rc;
    float s_in, s_out;
    int32_t z;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    if ((rc = act_params(im, y, "output", &s_out, &z)) || (rc = act_ir(im, x, "input", &cs.x)) ||
        (rc = act_ir(im, y, "output", &cs.y)))
        return rc;
    s_in = im->g->tensors[cs.x].quant->scale[0];
    const uint8_t *wd;
    if ((rc = const_data(im, w, 1, "filter", &wd))) return rc;
    cs.op = ENPU_OP_CONV;
    cs.origin = ENPU_QO_CONV;
    cs.tw = w;
    cs.co = co;
    cs.k = cig * kh * kw;
    cs.act = act;
    cs.w_rank = 4;
    cs.w_dims[0] = co, cs.w_dims[1] = cig, cs.w_dims[2] = kh, cs.w_dims[3] = kw;
    cs.attr.conv.group = (int)group;
    cs.attr.conv.w.kernel[0] = (int)kh, cs.attr.conv.w.kernel[1] = (int)kw;
    cs.attr.conv.w.stride[0] = sh, cs.attr.conv.w.stride[1] = sw;
    cs.attr.conv.w.dilation[0] = dh, cs.attr.conv.w.dilation[1] = dw;
    for (int i = 0; i < 4; i++) cs.attr.conv.w.pads[i] = pads[i];
    cs.w = malloc((size_t)(co * cs.k));
    /* IR weights [co][ci/group][kh][kw] from TFLite's [co][kh][kw][ci] (conv)
     * or [1][kh][kw][co] (depthwise) */
    for (int64_t c = 0; c < co && cs.w; c++)
        for (int64_t i = 0; i < cig; i++)
            for (int64_t a = 0; a < kh; a++)
                for (int64_t b = 0; b < kw; b++)
                    cs.w[((c * cig + i) * kh + a) * kw + b] =
                        (int8_t)(depthwise ? wd[(a * kw + b) * co + c]
                                           : wd[((c * kh + a) * kw + b) * cig + i]);
    return weighted_node(im, o, &cs, w, s_in, s_out);
}

static int imp_fc(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 2, 3)) || (rc = need_opt(im, o, OPT_FC))) return rc;
    tt *x, *w, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->in[1], "weights", &w)) ||
        (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    int32_t act;
    uint8_t fmt;
    if ((rc = opt_act(im, o, 0, &act)) || (rc = opt_u8(im, o, 1, 0, &fmt))) return rc;
    if (fmt != 0) return opfail(im, ENPU_E_UNSUPPORTED, "shuffled weight formats are not supported");
    if (w->rank != 2) return opfail(im, ENPU_E_INVALID, "weights must be 2-D [outputs, inputs]");
    int64_t O = w->dims[0], K = w->dims[1], nx;
    enpu_shape_numel(x->rank, x->dims, &nx, x->name, NULL);
    if (K < 1 || O < 1 || nx % K || y->rank != 2 || y->dims[0] != nx / K || y->dims[1] != O)
        return opfail(im, ENPU_E_UNSUPPORTED,
                      "input, weights and output must be [N, K] x [O, K] -> [N, O]");
    if ((rc = filter_scale(im, w, O, 0, "weights"))) return rc;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    float s_out;
    int32_t z;
    int xi;
    if ((rc = act_params(im, y, "output", &s_out, &z)) || (rc = act_ir(im, x, "input", &xi)) ||
        (rc = act_ir(im, y, "output", &cs.y)))
        return rc;
    float s_in = im->g->tensors[xi].quant->scale[0];
    cs.x = xi;
    if (x->rank != 2) { /* TFLite flattens the input to [N, K] */
        int64_t d2[2] = {nx / K, K};
        if ((rc = reshape_tfl(im, xi, x->rank, x->dims, 2, d2, -1, &cs.x))) return rc;
    }
    const uint8_t *wd;
    if ((rc = const_data(im, w, 1, "weights", &wd))) return rc;
    cs.op = ENPU_OP_GEMM;
    cs.origin = ENPU_QO_FC;
    cs.tw = w;
    cs.co = O;
    cs.k = K;
    cs.act = act;
    cs.w_rank = 2;
    cs.w_dims[0] = O, cs.w_dims[1] = K;
    cs.attr.gemm.alpha = cs.attr.gemm.beta = 1.0f;
    cs.attr.gemm.trans_b = true;
    cs.w = malloc((size_t)(O * K));
    if (cs.w) memcpy(cs.w, wd, (size_t)(O * K));
    return weighted_node(im, o, &cs, w, s_in, s_out);
}

/* Output tensor with the input's parameters (pools, moves). */
static int same_params(imp *im, int x, int y, const char *what) {
    const enpu_quant *a = im->g->tensors[x].quant, *b = im->g->tensors[y].quant;
    if (a->scale[0] != b->scale[0] || a->zero_point[0] != b->zero_point[0]) {
        char why[192];
        snprintf(why, sizeof why, "%s: input and output must share scale and zero point (%g, %d "
                 "vs %g, %d)", what, (double)a->scale[0], (int)a->zero_point[0],
                 (double)b->scale[0], (int)b->zero_point[0]);
        return opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    return 0;
}

static int imp_pool(imp *im, const opctx *o, bool avg) {
    int rc;
    if ((rc = need_io(im, o, 1, 1)) || (rc = need_opt(im, o, OPT_POOL))) return rc;
    tt *x, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    uint8_t padding;
    int32_t sw, sh, fw, fh, act;
    /* Pool2DOptions: padding 0, stride_w 1, stride_h 2, filter_width 3, filter_height 4, act 5 */
    if ((rc = opt_u8(im, o, 0, 0, &padding)) || (rc = opt_i32(im, o, 1, 1, &sw)) ||
        (rc = opt_i32(im, o, 2, 1, &sh)) || (rc = opt_i32(im, o, 3, 1, &fw)) ||
        (rc = opt_i32(im, o, 4, 1, &fh)) || (rc = opt_act(im, o, 5, &act)))
        return rc;
    if (x->rank != 4 || y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[3] != x->dims[3])
        return opfail(im, ENPU_E_UNSUPPORTED, "input and output must be 4-D with the same N and C");
    int pads[4];
    if ((rc = tfl_pad(im, padding, x->dims[1], fh, sh, 1, y->dims[1], &pads[0], &pads[2])) ||
        (rc = tfl_pad(im, padding, x->dims[2], fw, sw, 1, y->dims[2], &pads[1], &pads[3])))
        return rc;
    int xi, yi;
    if ((rc = act_ir(im, x, "input", &xi)) || (rc = act_ir(im, y, "output", &yi)) ||
        (rc = same_params(im, xi, yi, avg ? "AVERAGE_POOL_2D" : "MAX_POOL_2D")))
        return rc;
    enpu_attr a;
    memset(&a, 0, sizeof a);
    a.pool.w.kernel[0] = fh, a.pool.w.kernel[1] = fw;
    a.pool.w.stride[0] = sh, a.pool.w.stride[1] = sw;
    a.pool.w.dilation[0] = a.pool.w.dilation[1] = 1;
    for (int i = 0; i < 4; i++) a.pool.w.pads[i] = pads[i];
    const enpu_tensor *yt = &im->g->tensors[yi];
    int32_t z = yt->quant->zero_point[0];
    if (!avg) {
        enpu_qnode *q = qnode(im, ENPU_Q_MAXPOOL);
        if (q) {
            q->zp_in[0] = q->zp_out = z;
            rc = enpu_tfl_act_range(act, yt->quant->scale[0], z, im->where, &q->lo, &q->hi, im->err);
            if (rc) {
                enpu_qnode_free(q);
                return enpu_err_prefix(im->err, "%s", im->file);
            }
        }
        return add_node(im, "", ENPU_OP_MAXPOOL, 1, &xi, yi, q, &a);
    }
    /* TFLite divides by the window's positions inside the input: one
     * divisor for every output only when no window reaches the padding */
    if (pads[0] || pads[1] || pads[2] || pads[3])
        return opfail(im, ENPU_E_UNSUPPORTED,
                      "AVERAGE_POOL_2D windows reaching SAME padding divide by a per-position count "
                      "(not supported on the NPU)");
    int64_t C = x->dims[3], n = (int64_t)fh * fw;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    cs.op = ENPU_OP_AVGPOOL;
    cs.origin = ENPU_QO_AVGPOOL;
    cs.x = xi, cs.y = yi, cs.co = C, cs.k = n, cs.act = act, cs.attr = a, cs.raw_sum = true;
    uint32_t M;
    int S;
    if ((rc = enpu_tfl_avgpool_multiplier(n, im->where, &M, &S, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    return uniform_node(im, &cs, M, S);
}

static int imp_mean(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 2, 2)) || (rc = need_opt(im, o, OPT_REDUCER))) return rc;
    tt *x, *ax, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->in[1], "axes", &ax)) ||
        (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    uint8_t keep;
    if ((rc = opt_u8(im, o, 0, 0, &keep))) return rc;
    if (ax->type != TT_INT32 || ax->rank > 1)
        return opfail(im, ENPU_E_UNSUPPORTED, "axes must be an int32 constant vector");
    const uint8_t *ad;
    if ((rc = const_data(im, ax, 4, "axes", &ad))) return rc;
    int64_t na;
    enpu_shape_numel(ax->rank, ax->dims, &na, ax->name, NULL);
    bool seen[4] = {false};
    for (int64_t i = 0; i < na && x->rank == 4; i++) {
        int32_t a = rd_i32(ad + 4 * i);
        if (a < 0) a += 4;
        if (a >= 0 && a < 4) seen[a] = true;
        else seen[0] = true;
    }
    if (x->rank != 4 || !seen[1] || !seen[2] || seen[0] || seen[3] || na != 2)
        return opfail(im, ENPU_E_UNSUPPORTED, "MEAN is supported over the two spatial axes of a 4-D "
                      "tensor (a global average)");
    int64_t N = x->dims[0], C = x->dims[3], n = x->dims[1] * x->dims[2];
    if ((keep && (y->rank != 4 || y->dims[0] != N || y->dims[1] != 1 || y->dims[2] != 1 ||
                  y->dims[3] != C)) ||
        (!keep && (y->rank != 2 || y->dims[0] != N || y->dims[1] != C)))
        return opfail(im, ENPU_E_INVALID, "output shape does not match the reduction");
    float s_in, s_out;
    int32_t zin, zout;
    int xi, yi;
    if ((rc = act_params(im, x, "input", &s_in, &zin)) || (rc = act_params(im, y, "output", &s_out, &zout)) ||
        (rc = act_ir(im, x, "input", &xi)) || (rc = act_ir(im, y, "output", &yi)))
        return rc;
    int gap = yi;
    if (!keep) { /* [N, C, 1, 1], then the reshape TFLite's output is */
        int64_t d[4] = {N, C, 1, 1};
        if ((rc = new_tensor(im, im->g->tensors[yi].name, ENPU_DT_INT8, 4, d, &gap)) ||
            (rc = enpu_tensor_set_quant(&im->g->tensors[gap], -1, 1, &s_out, &zout, im->err)))
            return rc;
    }
    convspec cs;
    memset(&cs, 0, sizeof cs);
    cs.op = ENPU_OP_GLOBAL_AVGPOOL;
    cs.origin = ENPU_QO_AVGPOOL;
    cs.x = xi, cs.y = gap, cs.co = C, cs.k = n, cs.act = -1;
    uint32_t M;
    int S;
    if ((rc = enpu_tfl_mean_multiplier(s_in, s_out, n, im->where, &M, &S, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    if ((rc = uniform_node(im, &cs, M, S)) || keep) return rc;
    int64_t d4[4] = {N, 1, 1, C}, d2[2] = {N, C};
    return reshape_tfl(im, gap, 4, d4, 2, d2, yi, &gap);
}

/* Operand i of ADD/MUL: an activation or an int8 constant, brought to the
 * output's rank (TFLite broadcasts align trailing dims) in IR order. */
static int eltwise_operand(imp *im, const opctx *o, int i, int rank, int *ir, float *s, int32_t *z) {
    tt *x;
    int rc = tensor_ref(im, o->in[i], "input", &x);
    if (rc) return rc;
    if ((rc = act_params(im, x, "input", s, z))) return rc;
    int64_t d[ENPU_MAX_RANK];
    int pre = rank - x->rank;
    if (pre < 0) return opfail(im, ENPU_E_INVALID, "an input has a higher rank than the output");
    for (int k = 0; k < rank; k++) d[k] = k < pre ? 1 : x->dims[k - pre];
    bool is_const;
    if ((rc = has_data(im, x, &is_const))) return rc;
    {
        const uint8_t *data = NULL;
        if (is_const) {
            if ((rc = const_data(im, x, 1, "operand", &data))) return rc;
            /* the constant in IR order: permute through a scratch tensor */
            int64_t ird[ENPU_MAX_RANK], n;
            ir_dims(rank, d, ird);
            enpu_shape_numel(rank, d, &n, x->name, NULL);
            int8_t *buf = malloc((size_t)(n ? n : 1));
            if (!buf) return FAIL(ENPU_E_NOMEM, "out of memory");
            enpu_tensor tmp;
            memset(&tmp, 0, sizeof tmp);
            tmp.rank = rank;
            memcpy(tmp.dims, ird, sizeof ird);
            enpu_tflite_to_ir(&tmp, (const int8_t *)data, buf);
            rc = new_const(im, x->name, ENPU_DT_INT8, rank, ird, buf, (size_t)n, ir);
            free(buf);
            if (!rc) rc = enpu_tensor_set_quant(&im->g->tensors[*ir], -1, 1, s, z, im->err);
            return rc;
        }
    }
    if ((rc = act_ir(im, x, "input", ir))) return rc;
    if (pre > 0) rc = reshape_tfl(im, *ir, x->rank, x->dims, rank, d, -1, ir);
    return rc;
}

static int imp_eltwise(imp *im, const opctx *o, bool add) {
    int rc;
    if ((rc = need_io(im, o, 2, 2)) || (rc = need_opt(im, o, add ? OPT_ADD : OPT_MUL))) return rc;
    tt *y;
    int32_t act;
    if ((rc = tensor_ref(im, o->out[0], "output", &y)) || (rc = opt_act(im, o, 0, &act))) return rc;
    float s[2], so;
    int32_t z[2], zo;
    int in[2], yi;
    if ((rc = act_params(im, y, "output", &so, &zo)) ||
        (rc = eltwise_operand(im, o, 0, y->rank, &in[0], &s[0], &z[0])) ||
        (rc = eltwise_operand(im, o, 1, y->rank, &in[1], &s[1], &z[1])) ||
        (rc = act_ir(im, y, "output", &yi)))
        return rc;
    enpu_qnode *q = qnode(im, add ? ENPU_Q_ADD : ENPU_Q_MUL);
    if (!q) return ENPU_E_NOMEM;
    q->n_ch = 1;
    q->M = malloc(sizeof *q->M);
    q->S = malloc(1);
    q->zp_in[0] = z[0], q->zp_in[1] = z[1], q->zp_out = zo;
    uint32_t M;
    int S, SA[2];
    if (!q->M || !q->S) rc = FAIL(ENPU_E_NOMEM, "out of memory");
    else if (add) rc = enpu_tfl_add_params(s[0], s[1], so, im->where, q->A, SA, &M, &S, im->err);
    else rc = enpu_tfl_multiplier((double)s[0] * (double)s[1] / (double)so, im->where, &M, &S, im->err);
    if (!rc) {
        q->M[0] = M, q->S[0] = (int8_t)S;
        if (add) q->SA[0] = (int8_t)SA[0], q->SA[1] = (int8_t)SA[1];
        rc = enpu_tfl_act_range(act, so, zo, im->where, &q->lo, &q->hi, im->err);
    }
    if (rc) {
        enpu_qnode_free(q);
        return rc == ENPU_E_NOMEM ? rc : enpu_err_prefix(im->err, "%s", im->file);
    }
    return add_node(im, "", add ? ENPU_OP_ADD : ENPU_OP_MUL, 2, in, yi, q, NULL);
}

static int imp_reshape(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 1, 2))) return rc;
    tt *x, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    int64_t nx, ny;
    enpu_shape_numel(x->rank, x->dims, &nx, x->name, NULL);
    enpu_shape_numel(y->rank, y->dims, &ny, y->name, NULL);
    if (nx != ny) return opfail(im, ENPU_E_INVALID, "input and output element counts differ");
    int xi, yi;
    if ((rc = act_ir(im, x, "input", &xi)) || (rc = act_ir(im, y, "output", &yi)) ||
        (rc = same_params(im, xi, yi, op_name(o->code))))
        return rc;
    return reshape_tfl(im, xi, x->rank, x->dims, y->rank, y->dims, yi, &yi);
}

static int imp_pad(imp *im, const opctx *o, bool v2) {
    int rc;
    if ((rc = need_io(im, o, 2, v2 ? 3 : 2))) return rc;
    tt *x, *p, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->in[1], "paddings", &p)) ||
        (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    if (p->type != TT_INT32 || p->rank != 2 || p->dims[0] != x->rank || p->dims[1] != 2 ||
        y->rank != x->rank)
        return opfail(im, ENPU_E_UNSUPPORTED, "paddings must be an int32 constant [rank, 2]");
    const uint8_t *pd;
    if ((rc = const_data(im, p, 4, "paddings", &pd))) return rc;
    int xi, yi;
    if ((rc = act_ir(im, x, "input", &xi)) || (rc = act_ir(im, y, "output", &yi)) ||
        (rc = same_params(im, xi, yi, op_name(o->code))))
        return rc;
    int32_t z = im->g->tensors[yi].quant->zero_point[0];
    if (v2 && o->n_in > 2 && o->in[2] >= 0) {
        tt *cv;
        const uint8_t *cd;
        if ((rc = tensor_ref(im, o->in[2], "constant value", &cv)) ||
            (rc = const_data(im, cv, 1, "constant value", &cd)))
            return rc;
        if (cv->type != TT_INT8 || (int8_t)cd[0] != z)
            return opfail(im, ENPU_E_UNSUPPORTED, "PADV2 is supported with the output zero point "
                          "as its value");
    }
    enpu_attr a;
    memset(&a, 0, sizeof a);
    int r = x->rank;
    a.pad.n_pads = 2 * r;
    for (int k = 0; k < r; k++) {
        int32_t b = rd_i32(pd + 8 * k), e = rd_i32(pd + 8 * k + 4);
        if (b < 0 || e < 0 || x->dims[k] + b + e != y->dims[k])
            return opfail(im, ENPU_E_INVALID, "paddings do not give the output shape");
        a.pad.pads[ir_axis(k, r)] = b;
        a.pad.pads[r + ir_axis(k, r)] = e;
    }
    enpu_qnode *q = qnode(im, ENPU_Q_MOVE);
    if (q) q->zp_in[0] = q->zp_out = z;
    return add_node(im, "", ENPU_OP_PAD, 1, &xi, yi, q, &a);
}

static int imp_concat(imp *im, const opctx *o) {
    int rc;
    if ((rc = need_io(im, o, 1, MAX_OP_IO)) || (rc = need_opt(im, o, OPT_CONCAT))) return rc;
    tt *y;
    int32_t axis, act;
    if ((rc = tensor_ref(im, o->out[0], "output", &y)) || (rc = opt_i32(im, o, 0, 0, &axis)) ||
        (rc = opt_act(im, o, 1, &act)))
        return rc;
    if (act != 0) return opfail(im, ENPU_E_UNSUPPORTED, "a fused activation on CONCATENATION");
    if (axis < 0) axis += y->rank;
    if (axis < 0 || axis >= y->rank) return opfail(im, ENPU_E_INVALID, "axis out of range");
    int in[MAX_OP_IO], yi;
    if ((rc = act_ir(im, y, "output", &yi))) return rc;
    for (int i = 0; i < o->n_in; i++) {
        tt *x;
        if ((rc = tensor_ref(im, o->in[i], "input", &x)) || (rc = act_ir(im, x, "input", &in[i])) ||
            (rc = same_params(im, in[i], yi, "CONCATENATION")))
            return rc;
        if (x->rank != y->rank) return opfail(im, ENPU_E_INVALID, "inputs of different ranks");
    }
    enpu_attr a;
    memset(&a, 0, sizeof a);
    a.shape.axis = ir_axis(axis, y->rank);
    enpu_qnode *q = qnode(im, ENPU_Q_MOVE);
    if (q) q->zp_in[0] = q->zp_out = im->g->tensors[yi].quant->zero_point[0];
    return add_node(im, "", ENPU_OP_CONCAT, o->n_in, in, yi, q, &a);
}

/* QUANTIZE int8 -> int8: TFLite's Requantize, a rescale node. */
static int imp_requantize(imp *im, tt *x, tt *y) {
    int rc, xi, yi;
    if ((rc = act_ir(im, x, "input", &xi)) || (rc = act_ir(im, y, "output", &yi))) return rc;
    const enpu_tensor *xt = &im->g->tensors[xi], *yt = &im->g->tensors[yi];
    /* before the per-channel parameters are allocated for the input's
     * channels (a fuzzed file's channel count is the output's business too) */
    bool same = xt->rank == yt->rank;
    for (int k = 0; same && k < xt->rank; k++) same = xt->dims[k] == yt->dims[k];
    if (!same) return opfail(im, ENPU_E_INVALID, "QUANTIZE's output must have its input's shape");
    int64_t C = xt->rank >= 2 ? xt->dims[1] : 1;
    convspec cs;
    memset(&cs, 0, sizeof cs);
    cs.op = ENPU_OP_IDENTITY;
    cs.origin = ENPU_QO_RESCALE;
    cs.x = xi, cs.y = yi, cs.co = C, cs.k = 1, cs.act = -1;
    uint32_t M;
    int S;
    if ((rc = enpu_tfl_multiplier((double)xt->quant->scale[0] /
                                      (double)im->g->tensors[yi].quant->scale[0],
                                  im->where, &M, &S, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    return uniform_node(im, &cs, M, S);
}

static int imp_host(imp *im, const opctx *o, enpu_op op) {
    int rc;
    if ((rc = need_io(im, o, 1, 1))) return rc;
    tt *x, *y;
    if ((rc = tensor_ref(im, o->in[0], "input", &x)) || (rc = tensor_ref(im, o->out[0], "output", &y)))
        return rc;
    enpu_attr a;
    memset(&a, 0, sizeof a);
    if (op == ENPU_OP_SOFTMAX) {
        float beta = 1.0f;
        if ((rc = need_opt(im, o, OPT_SOFTMAX))) return rc;
        if (o->has_opt && (rc = fb_f32(&im->b, &o->opt, 0, 0.0f, im->where, &beta))) return rc;
        if (beta != 1.0f) return opfail(im, ENPU_E_UNSUPPORTED, "SOFTMAX with beta other than 1");
        if (x->rank < 1) return opfail(im, ENPU_E_INVALID, "SOFTMAX of a scalar");
        a.shape.axis = ir_axis(x->rank - 1, x->rank);
    }
    if (y->rank != x->rank) return opfail(im, ENPU_E_INVALID, "input and output shapes differ");
    for (int d = 0; d < x->rank; d++)
        if (y->dims[d] != x->dims[d]) return opfail(im, ENPU_E_INVALID, "input and output shapes differ");
    int xi, yi;
    if ((rc = act_ir(im, x, "input", &xi)) || (rc = act_ir(im, y, "output", &yi))) return rc;
    enpu_qnode *q = qnode(im, ENPU_Q_HOST);
    if (q) q->zp_in[0] = im->g->tensors[xi].quant->zero_point[0],
           q->zp_out = im->g->tensors[yi].quant->zero_point[0];
    return add_node(im, "", op, 1, &xi, yi, q, &a);
}

static int read_op_io(imp *im, const fb_table *t, unsigned id, const char *what, int32_t *dst, int *n) {
    fb_vec v;
    bool present;
    int rc = fb_vec_field(&im->b, t, id, 4, im->where, &v, &present);
    if (rc) return rc;
    if (v.len > MAX_OP_IO)
        return FAIL(ENPU_E_LIMIT, "%s: %s: %u %s, over the limit of %d", im->file, im->where,
                    v.len, what, MAX_OP_IO);
    *n = (int)v.len;
    for (uint32_t i = 0; i < v.len; i++) dst[i] = fb_vec_i32(&im->b, &v, i);
    return 0;
}

static int import_op(imp *im, const fb_vec *ops, uint32_t k) {
    fb_table t;
    opctx o;
    memset(&o, 0, sizeof o);
    snprintf(im->where, sizeof im->where, "op %u", k);
    int rc = fb_vec_table(&im->b, ops, k, im->where, &t);
    uint32_t opcode;
    if (rc || (rc = fb_u32(&im->b, &t, FB_OP_OPCODE, 0, im->where, &opcode))) return rc;
    if (opcode >= im->n_codes)
        return FAIL(ENPU_E_INVALID, "%s: op %u: opcode index %u (the model has %u operator codes)",
                    im->file, k, opcode, im->n_codes);
    o.code = im->codes[opcode];
    if (o.code < 0)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: op %u: custom operators are not supported", im->file, k);
    const char *name = op_name(o.code);
    if (!name)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: op %u: builtin operator %d is not supported (docs/"
                    "tflite.md lists the supported ones)", im->file, k, (int)o.code);
    snprintf(im->where, sizeof im->where, "op %u (%s)", k, name);
    snprintf(im->nname, sizeof im->nname, "op%u_%s", k, name);
    for (char *c = im->nname; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    uint8_t ot, ot2;
    fb_vec cust;
    bool pc;
    if ((rc = read_op_io(im, &t, FB_OP_INPUTS, "inputs", o.in, &o.n_in)) ||
        (rc = read_op_io(im, &t, FB_OP_OUTPUTS, "outputs", o.out, &o.n_out)) ||
        (rc = fb_u8(&im->b, &t, FB_OP_OPTIONS_TYPE, 0, im->where, &ot)) ||
        (rc = fb_table_field(&im->b, &t, FB_OP_OPTIONS, im->where, &o.opt, &o.has_opt)) ||
        (rc = fb_u8(&im->b, &t, FB_OP_OPTIONS2_TYPE, 0, im->where, &ot2)) ||
        (rc = fb_vec_field(&im->b, &t, FB_OP_CUSTOM, 1, im->where, &cust, &pc)))
        return rc;
    o.opt_type = ot;
    if (ot2 || (pc && cust.len))
        return opfail(im, ENPU_E_UNSUPPORTED, "extended or custom options are not supported");
    /* TFLite runs the operators in file order: every input is computed by
     * an earlier operator (producers: set_producers) */
    for (int i = 0; i < o.n_in; i++) {
        if (o.in[i] < 0) continue; /* an omitted optional input */
        tt *x;
        if ((rc = tensor_ref(im, o.in[i], "input", &x))) return rc;
        if (x->producer >= (int)k) {
            char why[ENPU_MAX_NAME + 64];
            snprintf(why, sizeof why, "input '%s' is produced by a later operator", x->name);
            return opfail(im, ENPU_E_INVALID, why);
        }
    }
    switch (o.code) {
    case OP_CONV_2D: return imp_conv(im, &o, false);
    case OP_DEPTHWISE_CONV_2D: return imp_conv(im, &o, true);
    case OP_FULLY_CONNECTED: return imp_fc(im, &o);
    case OP_AVERAGE_POOL_2D: return imp_pool(im, &o, true);
    case OP_MAX_POOL_2D: return imp_pool(im, &o, false);
    case OP_ADD: return imp_eltwise(im, &o, true);
    case OP_MUL: return imp_eltwise(im, &o, false);
    case OP_MEAN: return imp_mean(im, &o);
    case OP_RESHAPE:
    case OP_SQUEEZE: return imp_reshape(im, &o);
    case OP_PAD: return imp_pad(im, &o, false);
    case OP_PADV2: return imp_pad(im, &o, true);
    case OP_CONCATENATION: return imp_concat(im, &o);
    case OP_SOFTMAX: return imp_host(im, &o, ENPU_OP_SOFTMAX);
    case OP_LOGISTIC: return imp_host(im, &o, ENPU_OP_SIGMOID);
    case OP_TANH: return imp_host(im, &o, ENPU_OP_TANH);
    case OP_HARD_SWISH: return imp_host(im, &o, ENPU_OP_HARD_SWISH);
    case OP_QUANTIZE:
    case OP_DEQUANTIZE: {
        if ((rc = need_io(im, &o, 1, 1))) return rc;
        tt *x, *y;
        if ((rc = tensor_ref(im, o.in[0], "input", &x)) || (rc = tensor_ref(im, o.out[0], "output", &y)))
            return rc;
        /* float at a graph input or output: the host's conversion (see import_graph) */
        if (o.code == OP_QUANTIZE && x->type == TT_FLOAT32 && y->graph_in) return 0;
        if (o.code == OP_DEQUANTIZE && x->type == TT_INT8 && y->type == TT_FLOAT32) return 0;
        if (o.code == OP_QUANTIZE && x->type == TT_INT8 && y->type == TT_INT8)
            return imp_requantize(im, x, y);
        return opfail(im, ENPU_E_UNSUPPORTED, "only int8 -> int8, a float graph input -> int8 and "
                      "int8 -> a float graph output are supported");
    }
    }
    return opfail(im, ENPU_E_UNSUPPORTED, "not supported");
}

/* Graph inputs and outputs: int8 tensors; a float input read only by a
 * QUANTIZE is replaced by that QUANTIZE's output, a float output written by
 * a DEQUANTIZE by its input (TFLite's conversions at the edges are the
 * host's; docs/tflite.md). */
static int graph_io(imp *im, const fb_table *sg, unsigned id, bool input, const fb_vec *ops) {
    fb_vec v;
    bool present;
    const char *what = input ? "inputs" : "outputs";
    int rc = fb_vec_field(&im->b, sg, id, 4, what, &v, &present);
    if (rc) return rc;
    if (v.len == 0 && !input) return FAIL(ENPU_E_INVALID, "%s: the subgraph has no outputs", im->file);
    if (v.len > MAX_OP_IO)
        return FAIL(ENPU_E_LIMIT, "%s: %u graph %s, over the limit of %d", im->file, v.len, what,
                    MAX_OP_IO);
    for (uint32_t i = 0; i < v.len; i++) {
        int32_t k = fb_vec_i32(&im->b, &v, i);
        snprintf(im->where, sizeof im->where, "graph %s[%u]", what, i);
        tt *x;
        if ((rc = tensor_ref(im, k, "entry", &x))) return rc;
        if (x->type == TT_FLOAT32) {
            /* find the QUANTIZE reading it (input) / DEQUANTIZE writing it (output) */
            int32_t repl = -1;
            for (uint32_t j = 0; j < ops->len && repl < 0; j++) {
                fb_table t;
                int32_t in[MAX_OP_IO], out[MAX_OP_IO];
                int ni, no;
                uint32_t opc;
                if ((rc = fb_vec_table(&im->b, ops, j, "operators", &t)) ||
                    (rc = fb_u32(&im->b, &t, FB_OP_OPCODE, 0, "operators", &opc)) ||
                    (rc = read_op_io(im, &t, FB_OP_INPUTS, "inputs", in, &ni)) ||
                    (rc = read_op_io(im, &t, FB_OP_OUTPUTS, "outputs", out, &no)))
                    return rc;
                if (opc >= im->n_codes || ni != 1 || no != 1) continue;
                if (input && im->codes[opc] == OP_QUANTIZE && in[0] == k) repl = out[0];
                if (!input && im->codes[opc] == OP_DEQUANTIZE && out[0] == k) repl = in[0];
            }
            snprintf(im->where, sizeof im->where, "graph %s[%u]", what, i);
            if (repl < 0 || (rc = tensor_ref(im, repl, "its conversion", &x))) {
                if (rc) return rc;
                return opfail(im, ENPU_E_UNSUPPORTED,
                              "a float tensor not converted by QUANTIZE/DEQUANTIZE (only int8 "
                              "models are imported)");
            }
        }
        int ir;
        if (input && !im->inputs_done) {
            x->graph_in = true;
        } else if (input) {
            if (x->ir >= 0 && enpu_graph_find_tensor(im->g, im->g->tensors[x->ir].name) >= 0 &&
                (im->g->tensors[x->ir].flags & ENPU_T_INPUT))
                continue; /* listed twice */
            if ((rc = act_ir(im, x, "tensor", &ir)) || (rc = enpu_graph_add_input(im->g, ir, im->err)))
                return rc;
        } else {
            if (x->ir < 0)
                return opfail(im, ENPU_E_INVALID, "no operator computes it");
            if ((rc = enpu_graph_add_output(im->g, x->ir, im->err))) return rc;
        }
    }
    return 0;
}

/* The producer of every tensor: each tensor is written by one operator at
 * most, and a graph input only by the QUANTIZE of a float input. */
static int set_producers(imp *im, const fb_vec *ops) {
    for (uint32_t k = 0; k < ops->len; k++) {
        fb_table t;
        opctx o;
        uint32_t opc;
        int rc;
        snprintf(im->where, sizeof im->where, "op %u", k);
        if ((rc = fb_vec_table(&im->b, ops, k, im->where, &t)) ||
            (rc = fb_u32(&im->b, &t, FB_OP_OPCODE, 0, im->where, &opc)) ||
            (rc = read_op_io(im, &t, FB_OP_INPUTS, "inputs", o.in, &o.n_in)) ||
            (rc = read_op_io(im, &t, FB_OP_OUTPUTS, "outputs", o.out, &o.n_out)))
            return rc;
        bool quantize_in = opc < im->n_codes && im->codes[opc] == OP_QUANTIZE && o.n_in == 1 &&
                           o.in[0] >= 0 && (uint32_t)o.in[0] < im->nt &&
                           im->t[o.in[0]].type == TT_FLOAT32;
        for (int i = 0; i < o.n_out; i++) {
            tt *y = NULL;
            if ((rc = tensor_ref(im, o.out[i], "output", &y))) return rc;
            if (y->producer >= 0 || (y->graph_in && !quantize_in)) {
                char why[ENPU_MAX_NAME + 64];
                snprintf(why, sizeof why, "output '%s' is already produced or is a graph input",
                         y->name);
                return opfail(im, ENPU_E_INVALID, why);
            }
            y->producer = (int)k;
        }
    }
    return 0;
}

static int import_model(imp *im) {
    fb_table model, sg;
    int rc = fb_root(&im->b, "TFL3", &model);
    if (rc) return rc;
    uint32_t version;
    if ((rc = fb_u32(&im->b, &model, FB_MODEL_VERSION, 0, "version", &version))) return rc;
    if (version != 3)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: schema version %u (3 is supported)", im->file, version);
    if ((rc = read_opcodes(im, &model))) return rc;
    fb_vec sgs, tensors, ops;
    bool present;
    if ((rc = fb_vec_field(&im->b, &model, FB_MODEL_SUBGRAPHS, 4, "subgraphs", &sgs, &present)) ||
        (rc = fb_vec_field(&im->b, &model, FB_MODEL_BUFFERS, 4, "buffers", &im->buffers, &present)))
        return rc;
    if (sgs.len == 0) return FAIL(ENPU_E_INVALID, "%s: the model has no subgraph", im->file);
    if (im->buffers.len > (uint32_t)ENPU_MAX_TENSORS + 1)
        return FAIL(ENPU_E_LIMIT, "%s: %u buffers, over the limit of %d", im->file, im->buffers.len,
                    ENPU_MAX_TENSORS + 1);
    if ((rc = fb_vec_table(&im->b, &sgs, 0, "subgraphs[0]", &sg)) ||
        (rc = fb_vec_field(&im->b, &sg, FB_SG_TENSORS, 4, "subgraphs[0].tensors", &tensors, &present)) ||
        (rc = fb_vec_field(&im->b, &sg, FB_SG_OPERATORS, 4, "subgraphs[0].operators", &ops, &present)))
        return rc;
    if (tensors.len > ENPU_MAX_TENSORS || ops.len > ENPU_MAX_NODES)
        return FAIL(ENPU_E_LIMIT, "%s: %u tensors / %u operators, over the limits %d / %d",
                    im->file, tensors.len, ops.len, ENPU_MAX_TENSORS, ENPU_MAX_NODES);
    im->nt = tensors.len;
    im->t = calloc(im->nt ? im->nt : 1, sizeof *im->t);
    if (!im->t) return FAIL(ENPU_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < im->nt; i++)
        if ((rc = read_tensor(im, &tensors, i))) return rc;
    if ((rc = graph_io(im, &sg, FB_SG_INPUTS, true, &ops)) || (rc = set_producers(im, &ops)))
        return rc;
    for (uint32_t k = 0; k < ops.len; k++)
        if ((rc = import_op(im, &ops, k))) return rc;
    im->inputs_done = true;
    if ((rc = graph_io(im, &sg, FB_SG_INPUTS, true, &ops)) ||
        (rc = graph_io(im, &sg, FB_SG_OUTPUTS, false, &ops)))
        return rc;
    im->g->requant = ENPU_REQUANT_TFLITE;
    im->g->opset = 17;
    if ((rc = enpu_graph_toposort(im->g, im->err)) || (rc = enpu_qgraph_check(im->g, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    return 0;
}

int enpu_tflite_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                      enpu_err *err) {
    if (!out) return enpu_fail(err, ENPU_E_USAGE, "enpu_tflite_parse: NULL argument");
    *out = NULL;
    if (!data && n) return enpu_fail(err, ENPU_E_USAGE, "enpu_tflite_parse: NULL data");
    if (n > ENPU_MAX_TFLITE_BYTES)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: %zu bytes, over the limit of %zu", what, n,
                         ENPU_MAX_TFLITE_BYTES);
    enpu_qnode_free_hook = qnode_hook;
    imp im;
    memset(&im, 0, sizeof im);
    im.b = (fb_buf){data, n, what, err};
    im.err = err;
    im.file = what;
    im.const_limit = 2 * (uint64_t)n + ((uint64_t)1 << 20);
    const char *base = strrchr(what, '/');
    im.g = enpu_graph_new(base ? base + 1 : what);
    int rc = im.g ? import_model(&im) : enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    free(im.t);
    free(im.codes);
    if (rc) {
        enpu_graph_free(im.g);
        return rc;
    }
    *out = im.g;
    return 0;
}

int enpu_tflite_load(const char *path, enpu_graph **out, enpu_err *err) {
    uint8_t *buf = NULL;
    size_t n = 0;
    if (out) *out = NULL;
    int rc = enpu_file_read(path, ENPU_MAX_TFLITE_BYTES, &buf, &n, err);
    if (rc) return rc;
    rc = enpu_tflite_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}
