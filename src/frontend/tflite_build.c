/* The TFLite importer, building the IR (tflite_imp.h): TFLite's
 * channel-last layout in the IR's channel-first one, tensors and constants
 * read from the file's buffers, activation parameters, nodes with their
 * quantization records. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/tflite_imp.h"

void tfl_qnode_hook(struct enpu_qnode *q) { enpu_qnode_free(q); }

#define FAIL(code, ...) enpu_fail(im->err, code, __VA_ARGS__)

int tfl_opfail(imp *im, enpu_status code, const char *why) {
    return enpu_fail(im->err, code, "%s: %s: %s", im->file, im->where, why);
}

/* ---- layout ----------------------------------------------------------------- */

/* IR axis of TFLite axis a of a rank-r tensor (channel-last -> channel-first). */
int tfl_ir_axis(int a, int r) {
    if (r < 3 || a == 0) return a;
    return a == r - 1 ? 1 : a + 1;
}

void tfl_ir_dims(int r, const int64_t *tfl, int64_t *ir) {
    for (int a = 0; a < r; a++) ir[tfl_ir_axis(a, r)] = tfl[a];
}

void enpu_tflite_dims(const enpu_tensor *t, int64_t *dims) {
    for (int a = 0; a < t->rank; a++) dims[a] = t->dims[tfl_ir_axis(a, t->rank)];
}

/* Element strides of the IR layout indexed by TFLite axis. */
static void tfl_strides_in_ir(int r, const int64_t *tfl, int64_t *st) {
    int64_t ird[ENPU_MAX_RANK], irs[ENPU_MAX_RANK], s = 1;
    tfl_ir_dims(r, tfl, ird);
    for (int d = r - 1; d >= 0; d--) {
        irs[d] = s;
        s *= ird[d];
    }
    for (int a = 0; a < r; a++) st[a] = irs[tfl_ir_axis(a, r)];
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
int tfl_new_tensor(imp *im, const char *base, enpu_dtype dt, int rank, const int64_t *dims,
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
int tfl_tensor_ref(imp *im, int32_t k, const char *role, tt **out) {
    *out = NULL; /* defined on failure too: gcc -O3 cannot see that opfail is non-zero */
    if (k < 0 || (uint32_t)k >= im->nt) {
        char why[96];
        snprintf(why, sizeof why, "%s refers to tensor %d (the subgraph has %u)", role, (int)k,
                 im->nt);
        return tfl_opfail(im, ENPU_E_INVALID, why);
    }
    *out = &im->t[k];
    return 0;
}

/* Per-tensor int8 parameters of an activation. */
int tfl_act_params(imp *im, const tt *x, const char *role, float *s, int32_t *z) {
    char why[ENPU_MAX_NAME + 128];
    if (x->type != TT_INT8) {
        snprintf(why, sizeof why, "%s '%s' is of TFLite type %d, not int8 (only int8 models are "
                 "imported)", role, x->name, x->type);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if (!x->has_q || x->scale.len != 1) {
        snprintf(why, sizeof why, "%s '%s' needs one scale and zero point (it has %u)", role,
                 x->name, x->has_q ? x->scale.len : 0);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    *s = scale0(im, x);
    int64_t zz = zp0(im, x);
    if (!(*s > 0) || isinf(*s) || zz < -128 || zz > 127) {
        snprintf(why, sizeof why, "%s '%s': scale %g or zero point %lld is out of range", role,
                 x->name, (double)*s, (long long)zz);
        return tfl_opfail(im, ENPU_E_INVALID, why);
    }
    *z = (int32_t)zz;
    return 0;
}

/* Whether x has constant data (a buffer with bytes: TFLite's rule). */
int tfl_has_data(imp *im, const tt *x, bool *yes) {
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
int tfl_act_ir(imp *im, tt *x, const char *role, int *ir) {
    float s;
    int32_t z;
    int rc = tfl_act_params(im, x, role, &s, &z);
    if (rc) return rc;
    bool is_const;
    if ((rc = tfl_has_data(im, x, &is_const))) return rc;
    if (is_const) {
        char why[ENPU_MAX_NAME + 96];
        snprintf(why, sizeof why, "%s '%s' is a constant; the NPU reads it only as a weight or a "
                 "second operand", role, x->name);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if (x->ir < 0) {
        int64_t d[ENPU_MAX_RANK];
        tfl_ir_dims(x->rank, x->dims, d);
        rc = tfl_new_tensor(im, x->name, ENPU_DT_INT8, x->rank, d, &x->ir);
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
int tfl_const_data(imp *im, const tt *x, size_t esize, const char *role, const uint8_t **out) {
    char why[ENPU_MAX_NAME + 128];
    int64_t n;
    enpu_shape_numel(x->rank, x->dims, &n, x->name, NULL);
    if (x->buffer == 0 || x->buffer >= im->buffers.len) {
        snprintf(why, sizeof why, "%s '%s' must be a constant (buffer %u of %u)", role, x->name,
                 x->buffer, im->buffers.len);
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
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
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, why);
    }
    if ((uint64_t)data.len != (uint64_t)n * esize) {
        snprintf(why, sizeof why, "%s '%s': buffer %u holds %u bytes, its shape needs %lld", role,
                 x->name, x->buffer, data.len, (long long)(n * (int64_t)esize));
        return tfl_opfail(im, ENPU_E_INVALID, why);
    }
    im->const_bytes += data.len;
    if (im->const_bytes > im->const_limit)
        return FAIL(ENPU_E_LIMIT, "%s: %s: constants would take more than %llu bytes (twice the "
                    "file and 1 MiB): a buffer read by too many operators", im->file, im->where,
                    (unsigned long long)im->const_limit);
    *out = fb_vec_bytes(&im->b, &data);
    return 0;
}

int32_t tfl_rd_i32(const uint8_t *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

/* An IR constant of dtype dt, IR dims, holding a copy of bytes. */
int tfl_new_const(imp *im, const char *base, enpu_dtype dt, int rank, const int64_t *dims,
                  const void *bytes, size_t n, int *out) {
    int rc = tfl_new_tensor(im, base, dt, rank, dims, out);
    if (rc) return rc;
    void *copy = malloc(n ? n : 1);
    if (!copy) return FAIL(ENPU_E_NOMEM, "out of memory");
    if (n) memcpy(copy, bytes, n);
    enpu_tensor *t = &im->g->tensors[*out];
    enpu_tensor_set_data(t, copy);
    t->flags |= ENPU_T_CONST;
    return 0;
}

enpu_qnode *tfl_qnode(imp *im, enpu_qkind kind) {
    enpu_qnode *q = calloc(1, sizeof *q);
    if (!q) enpu_fail(im->err, ENPU_E_NOMEM, "out of memory");
    else q->kind = kind, q->lo = -128, q->hi = 127;
    return q;
}

/* Adds node `op` with q (ownership taken, also on failure). */
int tfl_add_node(imp *im, const char *suffix, enpu_op op, int n_in, const int *in, int out,
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
        if ((rc = tfl_new_tensor(im, base, ENPU_DT_INT8, rank, dims, y))) return rc;
        if ((rc = enpu_tensor_set_quant(&im->g->tensors[*y], -1, 1, &s, &z, im->err))) return rc;
    }
    enpu_qnode *q = tfl_qnode(im, ENPU_Q_MOVE);
    if (q) q->zp_in[0] = q->zp_out = z;
    int ins[2] = {x, -1};
    int n_in = 1;
    if (op == ENPU_OP_RESHAPE) {
        /* ONNX's Reshape reads its target from input 1: an int64 constant */
        int64_t sd = rank;
        if ((rc = tfl_new_const(im, "shape", ENPU_DT_INT64, 1, &sd, dims, (size_t)rank * 8, &ins[1]))) {
            enpu_qnode_free(q);
            return rc;
        }
        n_in = 2;
    }
    return tfl_add_node(im, suffix, op, n_in, ins, *y, q, attr);
}

/* Does permuting a tensor of TFLite dims d (rank r) between the two orders
 * leave its elements in place?  True when the non-unit dims keep their order. */
static bool layout_trivial(int r, const int64_t *d) {
    if (r < 3) return true;
    int64_t ir[ENPU_MAX_RANK];
    tfl_ir_dims(r, d, ir);
    int a = 0, b = 0;
    for (;;) {
        while (a < r && d[a] == 1) a++;
        while (b < r && ir[b] == 1) b++;
        if (a == r || b == r) return a == r && b == r;
        /* the next non-unit TFLite axis must be the next non-unit IR axis */
        if (tfl_ir_axis(a, r) != b) return false;
        a++, b++;
    }
}

/* y (IR tensor with IR dims of TFLite dims yd, rank yr) = TFLite's row-major
 * reshape of x (IR tensor, TFLite dims xd, rank xr).  Transposes are added
 * where the two orders differ.  y_given: the output tensor, or -1 for new. */
int tfl_reshape_tfl(imp *im, int x, int xr, const int64_t *xd, int yr, const int64_t *yd,
                    int y_given, int *y) {
    int rc, cur = x;
    enpu_attr a;
    if (!layout_trivial(xr, xd)) { /* to TFLite order: IR axis of each TFLite axis */
        memset(&a, 0, sizeof a);
        a.shape.n_axes = xr;
        for (int k = 0; k < xr; k++) a.shape.axes[k] = tfl_ir_axis(k, xr);
        if ((rc = move_node(im, "/to_nhwc", ENPU_OP_TRANSPOSE, cur, xr, xd, &a, -1, &cur))) return rc;
    }
    bool back = !layout_trivial(yr, yd);
    int64_t yir[ENPU_MAX_RANK];
    tfl_ir_dims(yr, yd, yir);
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
        for (int k = 0; k < yr; k++) a.shape.axes[tfl_ir_axis(k, yr)] = k;
        if ((rc = move_node(im, "/to_nchw", ENPU_OP_TRANSPOSE, cur, yr, yir, &a, y_given, &cur)))
            return rc;
    }
    *y = cur;
    return 0;
}
