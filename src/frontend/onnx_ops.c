/* One ONNX node to one IR node: each operator's arity by opset, its
 * attributes normalized (ONNX defaults, old-opset spellings, windows) into
 * the IR's attribute union.  The walk over the graph (onnx_import.c) calls
 * oi_arity and oi_map_attrs for every node it adds. */
#include "easynpu/onnx.h"
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "easynpu/file.h"
#include "easynpu/numerics.h"
#include "frontend/onnx_fold.h"
#include "frontend/onnx_imp.h"
#include "tensor/onnx_tensor.h"
#include "onnx.pb-c.h"

/* --- windows (Conv, MaxPool, AveragePool) -------------------------------- */

static int window_values(const nctx *c, const char *name, const int64_t *v, int n, int64_t lo) {
    for (int i = 0; i < n; i++) {
        if (v[i] < lo)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' value %lld is below %lld", name,
                         (long long)v[i], (long long)lo);
        if (v[i] > INT_MAX / 2)
            return oi_nfail(c, ENPU_E_LIMIT, "attribute '%s' value %lld is over the limit of %d",
                         name, (long long)v[i], INT_MAX / 2);
    }
    return 0;
}

int oi_parse_window(const nctx *c, const int *in, enpu_window *w) {
    const enpu_graph *g = c->im->g;
    int64_t k[8], s[8], d[8], p[16];
    int nk, ns, nd, np, rc;
    if ((rc = oi_a_ints(c, "kernel_shape", 8, k, &nk))) return rc;
    bool from_weights = false; /* the kernel is the weights', known after inference */
    if (nk < 0) {
        const enpu_tensor *wt = c->np->n_input > 1 && in[1] >= 0 ? &g->tensors[in[1]] : NULL;
        if (strcmp(c->op_type, "Conv") != 0 && strcmp(c->op_type, "ConvTranspose") != 0 &&
            strcmp(c->op_type, "QLinearConv") != 0)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'kernel_shape' is absent and the weight's "
                         "shape is unknown");
        if (!wt || wt->rank < 0) {
            /* weights computed in the model (a DequantizeLinear of int8
             * ones): the other attributes say how many spatial axes */
            int64_t tmp[16];
            int n1, n2, n3;
            if ((rc = oi_a_ints(c, "strides", 8, tmp, &n1)) || (rc = oi_a_ints(c, "dilations", 8, tmp, &n2)) ||
                (rc = oi_a_ints(c, "pads", 16, tmp, &n3)))
                return rc;
            nk = n1 >= 0 ? n1 : n2 >= 0 ? n2 : n3 >= 0 ? n3 / 2 : 2;
            for (int i = 0; i < nk && i < 8; i++) k[i] = 1;
            from_weights = true;
        } else if (wt->rank < 3)
            return oi_nfail(c, ENPU_E_INVALID, "weight '%s' has rank %d, expected at least 3",
                         wt->name, wt->rank);
        else {
            nk = wt->rank - 2;
            for (int i = 0; i < nk; i++) k[i] = wt->dims[2 + i];
        }
    }
    if (nk == 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'kernel_shape' is empty");
    if (nk > 2)
        return oi_nfail(c, ENPU_E_UNSUPPORTED,
                     "%d-D windows are not supported (only 1-D and 2-D)", nk);
    if ((rc = oi_a_ints(c, "strides", 8, s, &ns))) return rc;
    if ((rc = oi_a_ints(c, "dilations", 8, d, &nd))) return rc;
    if ((rc = oi_a_ints(c, "pads", 16, p, &np))) return rc;
    if (ns >= 0 && ns != nk)
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'strides' has %d values, expected %d", ns, nk);
    if (nd >= 0 && nd != nk)
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'dilations' has %d values, expected %d", nd,
                     nk);
    if (np >= 0 && np != 2 * nk)
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'pads' has %d values, expected %d", np,
                     2 * nk);
    for (int i = 0; i < nk; i++) {
        if (ns < 0) s[i] = 1;
        if (nd < 0) d[i] = 1;
        if (np < 0) p[i] = p[nk + i] = 0;
    }
    if ((rc = window_values(c, "kernel_shape", k, nk, 1))) return rc;
    if ((rc = window_values(c, "strides", s, nk, 1))) return rc;
    if ((rc = window_values(c, "dilations", d, nk, 1))) return rc;
    if ((rc = window_values(c, "pads", p, 2 * nk, 0))) return rc;
    char ap[32];
    if ((rc = oi_a_string(c, "auto_pad", "NOTSET", ap, sizeof ap))) return rc;
    if (strcmp(ap, "NOTSET") == 0) w->auto_pad = ENPU_PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0) w->auto_pad = ENPU_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) w->auto_pad = ENPU_PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) w->auto_pad = ENPU_PAD_VALID;
    else
        return oi_nfail(c, ENPU_E_INVALID,
                     "attribute 'auto_pad' is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or "
                     "VALID",
                     ap);
    if (nk == 2) {
        for (int i = 0; i < 2; i++) {
            w->kernel[i] = (int)k[i];
            w->stride[i] = (int)s[i];
            w->dilation[i] = (int)d[i];
        }
        w->pads[0] = (int)p[0]; /* top */
        w->pads[1] = (int)p[1]; /* left */
        w->pads[2] = (int)p[2]; /* bottom */
        w->pads[3] = (int)p[3]; /* right */
    } else { /* 1-D: the single spatial axis is the window's W */
        w->kernel[0] = w->stride[0] = w->dilation[0] = 1;
        w->kernel[1] = (int)k[0];
        w->stride[1] = (int)s[0];
        w->dilation[1] = (int)d[0];
        w->pads[0] = w->pads[2] = 0;
        w->pads[1] = (int)p[0];
        w->pads[3] = (int)p[1];
    }
    if (from_weights) {
        w->kernel[1] = 0;
        w->kernel[0] = nk == 2 ? 0 : 1;
    }
    return 0;
}

/* --- per-op attribute mapping -------------------------------------------- */

/* ONNX oi_arity (before folding) of each op: min..max inputs, the first `min`
 * being required. */
void oi_arity(enpu_op op, int opset, int *lo, int *hi) {
    *lo = 1;
    *hi = 1;
    switch (op) {
    case ENPU_OP_CONV:
    case ENPU_OP_GEMM: *lo = 2; *hi = 3; break;
    case ENPU_OP_MATMUL:
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
    case ENPU_OP_PRELU: *lo = 2; *hi = 2; break;
    case ENPU_OP_RESHAPE: *lo = *hi = opset < 5 ? 1 : 2; break;
    case ENPU_OP_CLIP: *hi = opset < 11 ? 1 : 3; break;
    case ENPU_OP_BATCHNORM: *lo = 5; *hi = 5; break;
    case ENPU_OP_SQUEEZE: *hi = opset < 13 ? 1 : 2; break;
    case ENPU_OP_UNSQUEEZE: *lo = *hi = opset < 13 ? 1 : 2; break;
    case ENPU_OP_CONCAT: *hi = OI_MAX_NODE_IO; break;
    case ENPU_OP_PAD:
        if (opset >= 11) {
            *lo = 2;
            *hi = 4;
        }
        break;
    case ENPU_OP_DROPOUT: *hi = opset < 12 ? 1 : 3; break;
    case ENPU_OP_SLICE:
        if (opset >= 10) *lo = 3, *hi = 5;
        break;
    case ENPU_OP_SPLIT: *hi = 2; break;
    case ENPU_OP_RESIZE:
        if (opset < 11) *lo = *hi = 2;
        else *hi = 4;
        break;
    case ENPU_OP_CONV_TRANSPOSE: *lo = 2; *hi = 3; break;
    case ENPU_OP_REDUCE_SUM: *hi = opset < 13 ? 1 : 2; break;
    case ENPU_OP_MAX: case ENPU_OP_MIN: *hi = OI_MAX_NODE_IO; break;
    case ENPU_OP_POW: case ENPU_OP_GATHER: case ENPU_OP_EQUAL: case ENPU_OP_EXPAND:
        *lo = *hi = 2;
        break;
    case ENPU_OP_LAYER_NORM: *lo = 2; *hi = 3; break;
    case ENPU_OP_WHERE: case ENPU_OP_RANGE: *lo = *hi = 3; break;
    case ENPU_OP_QUANTIZE_LINEAR: case ENPU_OP_DEQUANTIZE_LINEAR: *lo = 2; *hi = 3; break;
    case ENPU_OP_QLINEAR_CONV: *lo = 8; *hi = 9; break;
    case ENPU_OP_QLINEAR_MATMUL: *lo = *hi = 8; break;
    case ENPU_OP_LSTM: *lo = 3; *hi = 8; break;
    case ENPU_OP_GRU: case ENPU_OP_RNN: *lo = 3; *hi = 6; break;
    case ENPU_OP_LOOP: *lo = 2; *hi = OI_MAX_NODE_IO; break;
    case ENPU_OP_SCAN: *lo = opset < 9 ? 0 : 1; *hi = OI_MAX_NODE_IO; break; /* opset 8: sequence_lens first, optional */
    default: break;
    }
}

/* Records a legacy broadcast of the node (opset < 7) for resolve_legacy. */
static int push_legacy(const nctx *c, legacy_bcast lb) {
    imp *im = c->im;
    if (im->n_legacy == im->cap_legacy) {
        int cap = im->cap_legacy ? 2 * im->cap_legacy : 16;
        legacy_bcast *nl = realloc(im->legacy, (size_t)cap * sizeof *nl);
        if (!nl) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
        im->legacy = nl;
        im->cap_legacy = cap;
    }
    lb.out = enpu_graph_find_tensor(im->g, c->np->output[0]);
    ENPU_ASSERT(lb.out >= 0);
    im->legacy[im->n_legacy++] = lb;
    return 0;
}

/* BatchNormalization and Dropout of opset < 7: is_test = 0 is training mode.
 * An absent is_test is taken as inference, as ONNX's own version converter
 * does when it drops the attribute (6 -> 7). */
static int refuse_training(const nctx *c) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, "is_test", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a);
    if (rc) return rc;
    if (a && a->i == 0)
        return oi_nfail(c, ENPU_E_UNSUPPORTED,
                     "attribute 'is_test' is 0 (training mode, opset %d); only inference is "
                     "supported",
                     c->im->opset);
    return 0;
}

/* Reshape of opset 1-4: the target is the `shape` attribute; it becomes a
 * constant input 1, the form of opset 5 and later. */
static int reshape_attr_to_input(const nctx *c, int *in, int *n_in) {
    imp *im = c->im;
    int64_t v[ENPU_MAX_RANK];
    int n, rc;
    if ((rc = oi_a_ints(c, "shape", ENPU_MAX_RANK, v, &n))) return rc;
    if (n < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'shape' is required (opset %d)", im->opset);
    char name[ENPU_MAX_NAME + 32];
    snprintf(name, sizeof name, "%s:shape", c->np->output[0]);
    for (int k = 2; enpu_graph_find_tensor(im->g, name) >= 0; k++)
        snprintf(name, sizeof name, "%s:shape%d", c->np->output[0], k);
    int64_t dim = n;
    int t = enpu_graph_add_tensor(im->g, name, ENPU_DT_INT64, 1, &dim, im->err);
    if (t < 0) return enpu_err_prefix(im->err, "%s", im->what);
    int64_t *data = malloc(n ? (size_t)n * sizeof *data : 1);
    if (!data) return oi_nfail(c, ENPU_E_NOMEM, "out of memory");
    if (n) memcpy(data, v, (size_t)n * sizeof *data);
    enpu_tensor_set_data(&im->g->tensors[t], data);
    in[1] = t;
    *n_in = 2;
    return 0;
}

/* Slice of opset 1-9: starts, ends and axes are attributes. */
static int slice_attrs(const nctx *c, enpu_slice_attr *a) {
    int64_t st[ENPU_MAX_RANK], en[ENPU_MAX_RANK], ax[ENPU_MAX_RANK];
    int ns, ne, na, rc;
    if ((rc = oi_a_ints(c, "starts", ENPU_MAX_RANK, st, &ns)) ||
        (rc = oi_a_ints(c, "ends", ENPU_MAX_RANK, en, &ne)) ||
        (rc = oi_a_ints(c, "axes", ENPU_MAX_RANK, ax, &na)))
        return rc;
    if (ns < 0 || ne < 0) return oi_nfail(c, ENPU_E_INVALID, "attributes 'starts' and 'ends' are required");
    if (ns != ne || (na >= 0 && na != ns))
        return oi_nfail(c, ENPU_E_INVALID, "'starts', 'ends' and 'axes' have %d, %d and %d values", ns,
                     ne, na);
    a->n = ns;
    for (int i = 0; i < ns; i++) {
        a->starts[i] = st[i], a->ends[i] = en[i], a->steps[i] = 1;
        a->axes[i] = na >= 0 ? (int)(ax[i] < -ENPU_MAX_RANK ? -ENPU_MAX_RANK - 1 : ax[i] > ENPU_MAX_RANK ? ENPU_MAX_RANK : ax[i]) : i;
    }
    return 0;
}

static int resize_attrs(const nctx *c, enpu_resize_attr *a) {
    char buf[40];
    int rc;
    int64_t v;
    memset(a, 0, sizeof *a);
    if ((rc = oi_a_string(c, "mode", "nearest", buf, sizeof buf))) return rc;
    if (!strcmp(buf, "nearest")) a->mode = ENPU_RESIZE_NEAREST;
    else if (!strcmp(buf, "linear")) a->mode = ENPU_RESIZE_LINEAR;
    else if (!strcmp(buf, "cubic") && c->im->opset >= 11) a->mode = ENPU_RESIZE_CUBIC;
    else return oi_nfail(c, ENPU_E_INVALID, "attribute 'mode' is '%s'", buf);
    if (c->im->opset < 11) {
        /* Resize-10: x_original = x_resized / scale, nearest rounds down */
        a->ctm = ENPU_CTM_ASYMMETRIC;
        a->nearest = ENPU_NEAREST_FLOOR;
        a->cubic_a = -0.75f;
        return 0;
    }
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if ((rc = oi_a_string(c, "coordinate_transformation_mode", "half_pixel", buf, sizeof buf))) return rc;
    a->ctm = -1;
    for (int i = 0; i < 6; i++)
        if (!strcmp(buf, ctms[i])) a->ctm = i;
    if (a->ctm < 0)
        return oi_nfail(c, ENPU_E_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported",
                     buf);
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    if ((rc = oi_a_string(c, "nearest_mode", "round_prefer_floor", buf, sizeof buf))) return rc;
    a->nearest = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(buf, nms[i])) a->nearest = i;
    if (a->nearest < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'nearest_mode' is '%s'", buf);
    if ((rc = oi_a_float(c, "cubic_coeff_a", -0.75f, &a->cubic_a))) return rc;
    if ((rc = oi_a_int(c, "exclude_outside", 0, 0, 1, &v))) return rc;
    a->exclude_outside = v != 0;
    return oi_a_float(c, "extrapolation_value", 0.0f, &a->extrapolation);
}

static int conv_transpose_attrs(const nctx *c, const int *in, enpu_conv_attr *a) {
    int rc;
    int64_t v, op[4], os[4];
    int nop, nos;
    memset(a, 0, sizeof *a);
    if ((rc = oi_parse_window(c, in, &a->w))) return rc;
    if ((rc = oi_a_int(c, "group", 1, 1, INT_MAX / 2, &v))) return rc;
    a->group = (int)v;
    if ((rc = oi_a_ints(c, "output_padding", 4, op, &nop)) || (rc = oi_a_ints(c, "output_shape", 4, os, &nos)))
        return rc;
    if (nop > 2 || nos > 2)
        return oi_nfail(c, ENPU_E_UNSUPPORTED, "3-D windows are not supported (only 1-D and 2-D)");
    for (int i = 0; i < nop; i++) {
        if (op[i] < 0 || op[i] > 65535)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'output_padding' value %lld", (long long)op[i]);
        a->out_pad[nop == 1 ? 1 : i] = (int)op[i];
    }
    if (nos > 0) {
        a->n_out_shape = nos;
        for (int i = 0; i < nos; i++) {
            if (os[i] < 0 || os[i] > ENPU_MAX_DIM)
                return oi_nfail(c, ENPU_E_INVALID, "attribute 'output_shape' value %lld", (long long)os[i]);
            a->out_shape[i] = os[i];
        }
    }
    return 0;
}

static int reduce_attrs(const nctx *c, enpu_op op, enpu_reduce_attr *a) {
    int rc;
    int64_t v, ax[ENPU_MAX_RANK];
    int n;
    memset(a, 0, sizeof *a);
    if ((rc = oi_a_int(c, "keepdims", 1, 0, 1, &v))) return rc;
    a->keepdims = v != 0;
    if (op == ENPU_OP_REDUCE_SUM && c->im->opset >= 13) {
        if ((rc = oi_a_int(c, "noop_with_empty_axes", 0, 0, 1, &v))) return rc;
        a->noop_with_empty_axes = v != 0;
        return 0; /* axes: input 1, folded later */
    }
    if ((rc = oi_a_ints(c, "axes", ENPU_MAX_RANK, ax, &n))) return rc;
    a->n_axes = n < 0 ? 0 : n;
    for (int i = 0; i < a->n_axes; i++) {
        if (ax[i] < -ENPU_MAX_RANK || ax[i] >= ENPU_MAX_RANK)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'axes' value %lld is outside -%d..%d",
                         (long long)ax[i], ENPU_MAX_RANK, ENPU_MAX_RANK - 1);
        a->axes[i] = (int)ax[i];
    }
    return 0;
}

/* ConstantOfShape's `value`: a one-element tensor (default float32 0). */
static int const_of_shape_attrs(const nctx *c, enpu_misc_attr *a) {
    const Onnx__AttributeProto *at;
    int rc = oi_get_attr(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, &at);
    if (rc) return rc;
    a->to = ENPU_DT_FLOAT32;
    a->value = 0;
    if (!at) return 0;
    if (!at->t) return oi_nfail(c, ENPU_E_INVALID, "attribute 'value' has type TENSOR but no tensor");
    enpu_pb_tensor t;
    if ((rc = enpu_onnx_decode_tensor(at->t, c->im->what, c->name, ENPU_E_INVALID, &t, c->im->err)))
        return rc;
    if (t.numel != 1) {
        free(t.data);
        return oi_nfail(c, ENPU_E_INVALID, "attribute 'value' has %lld elements, expected 1",
                     (long long)t.numel);
    }
    enpu_tensor tmp = {.dtype = t.dtype, .rank = 0, .data = t.data};
    a->to = t.dtype;
    a->value = t.dtype == ENPU_DT_INT64 ? (double)oi_const_i64_at(&tmp, 0) : oi_const_at(&tmp, 0);
    free(t.data);
    return 0;
}

int oi_map_attrs(const nctx *c, enpu_op op, int *in, int *n_in, enpu_attr *at) {
    imp *im = c->im;
    int opset = im->opset, rc = 0;
    int64_t v = 0;
    memset(at, 0, sizeof *at);
    switch (op) {
    case ENPU_OP_CONV:
        if ((rc = oi_parse_window(c, in, &at->conv.w))) return rc;
        if ((rc = oi_a_int(c, "group", 1, 1, INT_MAX / 2, &v))) return rc;
        at->conv.group = (int)v;
        return 0;
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        if (op == ENPU_OP_AVGPOOL && c->np->n_attribute) {
            const Onnx__AttributeProto *a;
            if ((rc = oi_get_attr(c, "dilations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a)))
                return rc;
            if (a)
                for (size_t i = 0; i < a->n_ints; i++)
                    if (a->ints[i] != 1)
                        return oi_nfail(c, ENPU_E_UNSUPPORTED,
                                     "attribute 'dilations' (opset 19) is not supported");
        }
        if ((rc = oi_parse_window(c, in, &at->pool.w))) return rc;
        if ((rc = oi_a_bool(c, "ceil_mode", &at->pool.ceil_mode))) return rc;
        if (op == ENPU_OP_AVGPOOL && (rc = oi_a_bool(c, "count_include_pad", &at->pool.count_include_pad)))
            return rc;
        /* MaxPool's storage_order only concerns the Indices output, refused. */
        return 0;
    case ENPU_OP_GEMM:
        if (opset < 7) {
            /* broadcast = 0: C has the output's shape, checked once known. */
            if ((rc = oi_a_int(c, "broadcast", 0, 0, 1, &v))) return rc;
            if (!v && *n_in > 2 && in[2] >= 0 &&
                (rc = push_legacy(c, (legacy_bcast){.gemm = true})))
                return rc;
        }
        if ((rc = oi_a_float(c, "alpha", 1.0f, &at->gemm.alpha))) return rc;
        if ((rc = oi_a_float(c, "beta", 1.0f, &at->gemm.beta))) return rc;
        if ((rc = oi_a_bool(c, "transA", &at->gemm.trans_a))) return rc;
        return oi_a_bool(c, "transB", &at->gemm.trans_b);
    case ENPU_OP_RELU:
        at->act.min = 0.0f;
        at->act.max = INFINITY;
        return 0;
    case ENPU_OP_CLIP:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        if (opset < 11) {
            if ((rc = oi_a_float(c, "min", -INFINITY, &at->act.min))) return rc;
            return oi_a_float(c, "max", INFINITY, &at->act.max);
        }
        return 0; /* min/max inputs are folded after the node is added */
    case ENPU_OP_LEAKY_RELU:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        return oi_a_float(c, "alpha", 0.01f, &at->act.alpha);
    case ENPU_OP_HARD_SIGMOID:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        if ((rc = oi_a_float(c, "alpha", 0.2f, &at->act.alpha))) return rc;
        return oi_a_float(c, "beta", 0.5f, &at->act.beta);
    case ENPU_OP_HARD_SWISH: /* y = x * clamp(alpha*x + beta, 0, 1), fixed by ONNX */
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        at->act.alpha = 1.0f / 6.0f;
        at->act.beta = 0.5f;
        return 0;
    case ENPU_OP_PRELU:
    case ENPU_OP_SIGMOID:
    case ENPU_OP_TANH:
        at->act.min = -INFINITY;
        at->act.max = INFINITY;
        if (op == ENPU_OP_PRELU && opset < 7)
            return push_legacy(c, (legacy_bcast){.prelu = true, .broadcast = true});
        return 0;
    case ENPU_OP_ADD:
    case ENPU_OP_SUB:
    case ENPU_OP_MUL:
    case ENPU_OP_DIV:
    case ENPU_OP_POW:
    case ENPU_OP_EQUAL: {
        if (opset >= 7) return 0;
        legacy_bcast lb = {0};
        if ((rc = oi_a_int(c, "broadcast", 0, 0, 1, &v))) return rc;
        lb.broadcast = v != 0;
        const Onnx__AttributeProto *a;
        if ((rc = oi_get_attr(c, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a))) return rc;
        if (a) {
            if ((rc = oi_a_int(c, "axis", 0, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
            lb.has_axis = true;
            lb.axis = (int)v;
        }
        return push_legacy(c, lb);
    }
    case ENPU_OP_BATCHNORM:
        if ((rc = oi_a_float(c, "epsilon", 1e-5f, &at->bn.epsilon))) return rc;
        if (at->bn.epsilon < 0)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'epsilon' is negative (%g)",
                         (double)at->bn.epsilon);
        if ((rc = oi_a_int(c, "training_mode", 0, 0, 1, &v))) return rc;
        if (v) return oi_nfail(c, ENPU_E_UNSUPPORTED, "training_mode=1 is not supported");
        if (opset < 7 && (rc = refuse_training(c))) return rc;
        if (opset < 9) {
            if ((rc = oi_a_int(c, "spatial", 1, 0, 1, &v))) return rc;
            if (!v) return oi_nfail(c, ENPU_E_UNSUPPORTED, "spatial=0 is not supported");
        }
        return 0;
    case ENPU_OP_RESHAPE:
        if (opset < 5) return reshape_attr_to_input(c, in, n_in);
        return oi_a_bool(c, "allowzero", &at->shape.allowzero);
    case ENPU_OP_FLATTEN:
        if ((rc = oi_a_int(c, "axis", 1, -ENPU_MAX_RANK, ENPU_MAX_RANK, &v))) return rc;
        at->shape.axis = (int)v;
        return 0;
    case ENPU_OP_CONCAT: {
        const Onnx__AttributeProto *a;
        if ((rc = oi_get_attr(c, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a))) return rc;
        if (!a && opset >= 4) return oi_nfail(c, ENPU_E_INVALID, "attribute 'axis' is required");
        /* Opset 1-3: the axis defaults to 1. */
        if ((rc = oi_a_int(c, "axis", 1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->shape.axis = (int)v;
        return 0;
    }
    case ENPU_OP_SOFTMAX:
        at->shape.softmax_legacy = opset < 13;
        if ((rc = oi_a_int(c, "axis", opset < 13 ? 1 : -1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v)))
            return rc;
        at->shape.axis = (int)v;
        return 0;
    case ENPU_OP_SQUEEZE:
    case ENPU_OP_UNSQUEEZE: {
        if (opset >= 13) return 0; /* axes input folded after the node is added */
        int n;
        int64_t ax[ENPU_MAX_RANK];
        if ((rc = oi_a_ints(c, "axes", ENPU_MAX_RANK, ax, &n))) return rc;
        if (n < 0 && op == ENPU_OP_UNSQUEEZE)
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'axes' is required");
        at->shape.n_axes = n < 0 ? 0 : n;
        for (int i = 0; i < at->shape.n_axes; i++) {
            if (ax[i] < -ENPU_MAX_RANK || ax[i] >= ENPU_MAX_RANK)
                return oi_nfail(c, ENPU_E_INVALID, "attribute 'axes' value %lld is outside -%d..%d",
                             (long long)ax[i], ENPU_MAX_RANK, ENPU_MAX_RANK - 1);
            at->shape.axes[i] = (int)ax[i];
        }
        return 0;
    }
    case ENPU_OP_TRANSPOSE: {
        int64_t p[ENPU_MAX_RANK];
        int n;
        if ((rc = oi_a_ints(c, "perm", ENPU_MAX_RANK, p, &n))) return rc;
        if (n < 0) {
            /* Default: reverse the axes.  Needs the input rank; when it is
             * not known yet n_axes stays 0 (= reverse) for shape inference. */
            const enpu_tensor *t = &im->g->tensors[in[0]];
            n = t->rank >= 0 ? t->rank : 0;
            for (int i = 0; i < n; i++) p[i] = n - 1 - i;
        }
        bool seen[ENPU_MAX_RANK] = {false};
        for (int i = 0; i < n; i++) {
            if (p[i] < 0 || p[i] >= n || seen[p[i]])
                return oi_nfail(c, ENPU_E_INVALID, "attribute 'perm' is not a permutation of 0..%d",
                             n - 1);
            seen[p[i]] = true;
            at->shape.axes[i] = (int)p[i];
        }
        at->shape.n_axes = n;
        return 0;
    }
    case ENPU_OP_PAD: {
        char mode[32];
        if ((rc = oi_a_string(c, "mode", "constant", mode, sizeof mode))) return rc;
        if (strcmp(mode, "constant") == 0) at->pad.mode = ENPU_PADMODE_CONSTANT;
        else if (strcmp(mode, "edge") == 0) at->pad.mode = ENPU_PADMODE_EDGE;
        else if (strcmp(mode, "reflect") == 0) at->pad.mode = ENPU_PADMODE_REFLECT;
        else
            return oi_nfail(c, ENPU_E_UNSUPPORTED,
                         "mode '%s' is not supported (constant, edge and reflect are)", mode);
        if (opset >= 11) return 0; /* pads/constant_value inputs folded later */
        int n;
        const char *pname = opset < 2 ? "paddings" : "pads"; /* renamed in opset 2 */
        if ((rc = oi_a_ints(c, pname, 2 * ENPU_MAX_RANK, at->pad.pads, &n))) return rc;
        if (n < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is required", pname);
        if (n % 2)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' has %d values, expected an even "
                         "count", pname, n);
        at->pad.n_pads = n;
        return oi_a_float(c, "value", 0.0f, &at->pad.value);
    }
    case ENPU_OP_DROPOUT:
        /* ratio and training_mode (opset 12) are folded after the node is
         * added; before, is_test (opset < 7) says training or inference. */
        return opset < 7 ? refuse_training(c) : 0;
    case ENPU_OP_SLICE:
        return opset < 10 ? slice_attrs(c, &at->slice) : 0; /* later: inputs, folded */
    case ENPU_OP_SPLIT:
    case ENPU_OP_GATHER:
        if ((rc = oi_a_int(c, "axis", 0, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->shape.axis = (int)v;
        return 0;
    case ENPU_OP_RESIZE:
        return resize_attrs(c, &at->resize);
    case ENPU_OP_CONV_TRANSPOSE:
        return conv_transpose_attrs(c, in, &at->conv);
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_MAX:
    case ENPU_OP_REDUCE_SUM:
        return reduce_attrs(c, op, &at->reduce);
    case ENPU_OP_ARGMAX:
    case ENPU_OP_ARGMIN:
        /* axis, keepdims (opset 1), select_last_index (opset 12) */
        memset(&at->reduce, 0, sizeof at->reduce);
        if ((rc = oi_a_int(c, "axis", 0, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->reduce.n_axes = 1;
        at->reduce.axes[0] = (int)v;
        if ((rc = oi_a_int(c, "keepdims", 1, 0, 1, &v))) return rc;
        at->reduce.keepdims = v != 0;
        if ((rc = oi_a_int(c, "select_last_index", 0, 0, 1, &v))) return rc;
        at->reduce.select_last = v != 0;
        return 0;
    case ENPU_OP_LAYER_NORM:
        if ((rc = oi_a_int(c, "axis", -1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->norm.axis = (int)v;
        if ((rc = oi_a_float(c, "epsilon", 1e-5f, &at->norm.epsilon))) return rc;
        if (!(at->norm.epsilon >= 0))
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'epsilon' is negative (%g)",
                         (double)at->norm.epsilon);
        if ((rc = oi_a_int(c, "stash_type", 1, INT64_MIN, INT64_MAX, &v))) return rc;
        if (v != 1)
            return oi_nfail(c, ENPU_E_UNSUPPORTED, "stash_type %lld is not supported (1: float)",
                         (long long)v);
        return 0;
    case ENPU_OP_SHAPE:
        if ((rc = oi_a_int(c, "start", 0, INT64_MIN, INT64_MAX, &at->misc.start))) return rc;
        return oi_a_int(c, "end", INT64_MAX, INT64_MIN, INT64_MAX, &at->misc.end);
    case ENPU_OP_CAST: {
        if ((rc = oi_a_int(c, "to", -1, 0, INT32_MAX, &v))) return rc;
        if (v < 0) return oi_nfail(c, ENPU_E_INVALID, "attribute 'to' is required");
        enpu_dtype dt = enpu_onnx_dtype(v);
        if (dt == ENPU_DT_UNDEFINED)
            return oi_nfail(c, ENPU_E_UNSUPPORTED, "Cast to %s is not supported",
                         enpu_onnx_dtype_name(v));
        at->misc.to = dt;
        return 0;
    }
    case ENPU_OP_CONSTANT_OF_SHAPE:
        return const_of_shape_attrs(c, &at->misc);
    case ENPU_OP_QUANTIZE_LINEAR:
    case ENPU_OP_DEQUANTIZE_LINEAR:
        if ((rc = oi_a_int(c, "axis", 1, -ENPU_MAX_RANK, ENPU_MAX_RANK - 1, &v))) return rc;
        at->misc.axis = (int)v;
        return 0;
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN:
        return oi_rnn_attrs(c, op, at);
    case ENPU_OP_GELU: {
        char ap[16];
        if ((rc = oi_a_string(c, "approximate", "none", ap, sizeof ap))) return rc;
        if (strcmp(ap, "none") && strcmp(ap, "tanh"))
            return oi_nfail(c, ENPU_E_INVALID, "attribute 'approximate' is '%s'", ap);
        at->misc.approximate = strcmp(ap, "tanh") == 0;
        return 0;
    }
    default:
        return 0;
    }
}

/* --- graph building ------------------------------------------------------ */
