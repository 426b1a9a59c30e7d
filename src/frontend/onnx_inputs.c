/* The graph's inputs: each becomes an IR input with its shape, or, when
 * the caller bound it (--bind, enpu_onnx_bind), a constant with the given
 * value; a binding that names no input, or a value of the wrong type or
 * shape, is refused naming the input and both shapes. */
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

static int find_bind(const imp *im, const char *name) {
    for (int i = 0; i < im->n_binds; i++)
        if (strcmp(im->binds[i].name, name) == 0) return i;
    return -1;
}

/* "WHAT: binding of input 'NAME' (SOURCE): message" */
int oi_bfail(const imp *im, int b, enpu_status code, const char *fmt, ...) {
    char msg[ENPU_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const enpu_onnx_bind *bd = &im->binds[b];
    return enpu_fail(im->err, code, "%s: binding of input '%s'%s%s%s: %s", im->what, bd->name,
                     bd->source ? " (" : "", bd->source ? bd->source : "", bd->source ? ")" : "",
                     msg);
}

static void dims_str(int rank, const int64_t *d, char *buf, size_t n) {
    enpu_tensor t = {.rank = rank};
    memcpy(t.dims, d, (size_t)rank * sizeof *d);
    enpu_shape_str(&t, buf, n);
}

/* Graph input vi, bound to binding b: a constant holding a copy of the
 * value, after checking it against the declared type and shape. */
static int bind_input(imp *im, const Onnx__ValueInfoProto *vi, int b) {
    const enpu_buf *v = im->binds[b].value;
    const Onnx__TypeProto *tp = vi->type;
    im->bound[b] = true;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return oi_bfail(im, b, ENPU_E_UNSUPPORTED, "the input is not a tensor");
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    enpu_dtype dt = enpu_onnx_dtype(tt->elem_type);
    if (dt == ENPU_DT_UNDEFINED)
        return oi_bfail(im, b, ENPU_E_UNSUPPORTED, "the input's data type %s (%d) is not supported",
                     enpu_onnx_dtype_name(tt->elem_type), (int)tt->elem_type);
    if (v->dtype != dt)
        return oi_bfail(im, b, ENPU_E_INVALID, "the value is %s, the input %s",
                     enpu_dtype_name(v->dtype), enpu_dtype_name(dt));
    if (v->rank < 0 || v->rank > ENPU_MAX_RANK)
        return oi_bfail(im, b, ENPU_E_LIMIT, "rank %d is outside 0..%d", v->rank, ENPU_MAX_RANK);
    char have[256], want[256];
    dims_str(v->rank, v->dims, have, sizeof have);
    if (tt->shape) {
        bool same = tt->shape->n_dim == (size_t)v->rank;
        for (size_t k = 0; same && k < tt->shape->n_dim; k++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
            /* A symbolic dimension takes the value's size. */
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                same = d->dim_value == v->dims[k];
        }
        if (!same) {
            size_t o = 0;
            want[0] = 0;
            for (size_t k = 0; k < tt->shape->n_dim && o < sizeof want - 24; k++) {
                const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
                int w = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                            ? snprintf(want + o, sizeof want - o, "%s%lld", k ? "x" : "",
                                       (long long)d->dim_value)
                            : snprintf(want + o, sizeof want - o, "%s?", k ? "x" : "");
                if (w > 0) o += (size_t)w;
            }
            if (tt->shape->n_dim == 0) snprintf(want, sizeof want, "scalar");
            return oi_bfail(im, b, ENPU_E_INVALID, "the value has shape %s, the input %s", have,
                         want);
        }
    }
    int64_t numel;
    enpu_err e = {0};
    if (enpu_shape_numel(v->rank, v->dims, &numel, vi->name, &e))
        return oi_bfail(im, b, e.code, "%s", e.msg);
    size_t nbytes = (size_t)numel * enpu_dtype_size(dt);
    void *data = malloc(nbytes ? nbytes : 1);
    if (!data) return oi_bfail(im, b, ENPU_E_NOMEM, "out of memory");
    if (nbytes) memcpy(data, v->data, nbytes);
    int idx = enpu_graph_add_tensor(im->g, vi->name, dt, v->rank, v->dims, im->err);
    if (idx < 0) {
        free(data);
        return enpu_err_prefix(im->err, "%s", im->what);
    }
    enpu_tensor_set_data(&im->g->tensors[idx], data);
    return 0;
}

/* Every binding must have met its graph input. */
int oi_check_binds(imp *im) {
    for (int b = 0; b < im->n_binds; b++) {
        if (im->bound[b]) continue;
        if (enpu_graph_find_tensor(im->g, im->binds[b].name) >= 0)
            return oi_bfail(im, b, ENPU_E_USAGE,
                         "'%s' is an initializer or a node output, not a graph input",
                         im->binds[b].name);
        char list[256];
        size_t o = 0;
        list[0] = 0;
        for (size_t i = 0; i < im->gp->n_input && o < sizeof list - 8; i++) {
            const char *nm = im->gp->input[i]->name;
            int t = nm ? enpu_graph_find_tensor(im->g, nm) : -1;
            if (t < 0 || (im->g->tensors[t].flags & ENPU_T_CONST && find_bind(im, nm) < 0))
                continue; /* initializers are not inputs to bind */
            int w = snprintf(list + o, sizeof list - o, "%s'%s'", o ? ", " : "", nm);
            if (w > 0) o += (size_t)w;
        }
        return oi_bfail(im, b, ENPU_E_USAGE, "the model has no graph input '%s' (its inputs: %s)",
                     im->binds[b].name, o ? list : "none");
    }
    return 0;
}

int oi_import_inputs(imp *im) {
    const Onnx__GraphProto *gp = im->gp;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = vi->name;
        if (!name || !name[0])
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: graph input %zu has no name", im->what,
                             i);
        if (strlen(name) > ENPU_MAX_NAME)
            return enpu_fail(im->err, ENPU_E_LIMIT,
                             "%s: graph input %zu: name of %zu bytes is over the limit of %d",
                             im->what, i, strlen(name), ENPU_MAX_NAME);
        int existing = enpu_graph_find_tensor(im->g, name);
        if (existing >= 0) {
            if (im->g->tensors[existing].flags & ENPU_T_CONST) continue; /* has an initializer */
            return enpu_fail(im->err, ENPU_E_INVALID, "%s: graph input '%s' is listed twice",
                             im->what, name);
        }
        const Onnx__TypeProto *tp = vi->type;
        int b = find_bind(im, name);
        if (b >= 0) {
            int rc = bind_input(im, vi, b);
            if (rc) return rc;
            continue;
        }
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
            return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                             "%s: graph input '%s' is not a tensor (sequences, maps, optionals "
                             "and sparse tensors are not supported)",
                             im->what, name);
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        enpu_dtype dt = enpu_onnx_dtype(tt->elem_type);
        if (dt == ENPU_DT_UNDEFINED)
            return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                             "%s: graph input '%s': data type %s (%d) is not supported", im->what,
                             name, enpu_onnx_dtype_name(tt->elem_type), (int)tt->elem_type);
        if (!tt->shape)
            return enpu_fail(im->err, ENPU_E_UNSUPPORTED,
                             "%s: graph input '%s' has no shape (unknown rank)", im->what, name);
        if (tt->shape->n_dim > ENPU_MAX_RANK)
            return enpu_fail(im->err, ENPU_E_LIMIT,
                             "%s: graph input '%s': rank %zu is over the limit of %d", im->what,
                             name, tt->shape->n_dim, ENPU_MAX_RANK);
        int64_t dims[ENPU_MAX_RANK];
        const enpu_onnx_input_shape *fix = NULL;
        for (int k = 0; k < im->n_shapes; k++)
            if (strcmp(im->shapes[k].name, name) == 0) {
                fix = &im->shapes[k];
                im->shaped[k] = true;
            }
        if (fix && (size_t)fix->rank != tt->shape->n_dim)
            return enpu_fail(im->err, ENPU_E_USAGE,
                             "%s: --input-shape %s: %d dimensions, the graph input has %zu",
                             im->what, name, fix->rank, tt->shape->n_dim);
        bool unresolved = false;
        char symb[256] = "";
        int n_sym = 0;
        for (size_t k = 0; k < tt->shape->n_dim; k++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
                if (d->dim_value < 0 || d->dim_value > ENPU_MAX_DIM)
                    return enpu_fail(im->err, ENPU_E_LIMIT,
                                     "%s: graph input '%s': dimension %zu is %lld, outside "
                                     "0..%lld",
                                     im->what, name, k, (long long)d->dim_value,
                                     (long long)ENPU_MAX_DIM);
                dims[k] = d->dim_value;
                /* the batch (dimension 0) may be changed: N images */
                if (fix && fix->dims[k] != d->dim_value && k != 0)
                    return enpu_fail(im->err, ENPU_E_USAGE,
                                     "%s: --input-shape %s: dimension %zu is %lld, the model fixes "
                                     "it to %lld",
                                     im->what, name, k, (long long)fix->dims[k],
                                     (long long)d->dim_value);
                if (fix) dims[k] = fix->dims[k];
                continue;
            }
            const char *sym =
                d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                        d->dim_param
                    ? d->dim_param
                    : "?";
            if (fix) {
                dims[k] = fix->dims[k];
                continue;
            }
            dims[k] = 1;
            if (k != 0) {
                /* one problem per input, naming every symbolic dimension */
                size_t o = strlen(symb);
                if (o < sizeof symb - 64)
                    snprintf(symb + o, sizeof symb - o, "%s%zu ('%.40s')", o ? ", " : "", k, sym);
                n_sym++;
                continue;
            }
            fprintf(stderr,
                    "easynpu: warning: %s: graph input '%s': dimension 0 is symbolic ('%s'); "
                    "taking 1 (--input-shape %s=... sets it)\n",
                    im->what, name, sym, name);
        }
        if (n_sym) {
            /* the option to give, the model's own dimensions filled in */
            char hint[512];
            size_t o = 0;
            for (size_t j = 0; j < tt->shape->n_dim && o < sizeof hint - 40; j++) {
                const Onnx__TensorShapeProto__Dimension *dj = tt->shape->dim[j];
                int w = dj->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                            ? snprintf(hint + o, sizeof hint - o, "%s%lld", j ? "x" : "",
                                       (long long)dj->dim_value)
                            : snprintf(hint + o, sizeof hint - o, "%s<%.20s>", j ? "x" : "",
                                       dj->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                                               dj->dim_param
                                           ? dj->dim_param
                                           : "?");
                if (w > 0) o += (size_t)w;
            }
            char msg[ENPU_MAX_NAME + 900];
            snprintf(msg, sizeof msg,
                     "graph input '%s': dimension%s %s %s symbolic; give its static shape with "
                     "--input-shape %s=%s",
                     name, n_sym > 1 ? "s" : "", symb, n_sym > 1 ? "are" : "is", name, hint);
            int rc = oi_add_problem(im, msg);
            if (rc) return rc;
            unresolved = true;
        }
        int idx = enpu_graph_add_tensor(im->g, name, dt, (int)tt->shape->n_dim, dims, im->err);
        if (idx < 0) return enpu_err_prefix(im->err, "%s", im->what);
        int rc = enpu_graph_add_input(im->g, idx, im->err);
        if (rc) return enpu_err_prefix(im->err, "%s", im->what);
        if (unresolved && (rc = oi_set_poison(im, idx))) return rc;
    }
    for (int k = 0; k < im->n_shapes; k++)
        if (!im->shaped[k])
            return enpu_fail(im->err, ENPU_E_USAGE,
                             "%s: --input-shape %s: the model has no graph input '%s'", im->what,
                             im->shapes[k].name, im->shapes[k].name);
    return 0;
}

/* Constant node -> constant tensor. */
