/* ONNX attributes read and checked: one getter per attribute type, each
 * naming the node and the attribute in its errors, with the ONNX default
 * when the attribute is absent.  The importer's node converters
 * (onnx_ops.c) and control flow (onnx_control.c) read attributes only
 * through these. */
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

attr_type oi_attr_type_of(const Onnx__AttributeProto *a) {
    if (a->has_type) return a->type;
    /* IR version 1 models have no type discriminator: infer it. */
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

const char *oi_attr_type_name(attr_type t) {
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
    }
}

/* The attribute `name` of the node if present (*out NULL otherwise); a present
 * attribute of another type than `want` is ENPU_E_INVALID. */
int oi_get_attr(const nctx *c, const char *name, attr_type want,
                    const Onnx__AttributeProto **out) {
    *out = NULL;
    for (size_t i = 0; i < c->np->n_attribute; i++) {
        const Onnx__AttributeProto *a = c->np->attribute[i];
        if (!a || !a->name || strcmp(a->name, name) != 0) continue;
        attr_type t = oi_attr_type_of(a);
        if (t != want)
            return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' has type %s, expected %s", name,
                         oi_attr_type_name(t), oi_attr_type_name(want));
        *out = a;
        return 0;
    }
    return 0;
}

/* INT attribute in [lo, hi] (default `def` when absent). */
int oi_a_int(const nctx *c, const char *name, int64_t def, int64_t lo, int64_t hi,
                 int64_t *v) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a);
    if (rc) return rc;
    *v = a ? a->i : def;
    if (*v < lo || *v > hi)
        return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is %lld, expected %lld..%lld", name,
                     (long long)*v, (long long)lo, (long long)hi);
    return 0;
}

int oi_a_bool(const nctx *c, const char *name, bool *v) {
    int64_t i = 0;
    int rc = oi_a_int(c, name, 0, 0, 1, &i);
    *v = i != 0;
    return rc;
}

int oi_a_float(const nctx *c, const char *name, float def, float *v) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, &a);
    if (rc) return rc;
    *v = a ? a->f : def;
    if (isnan(*v)) return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is NaN", name);
    return 0;
}

/* INTS attribute of at most `max` values; *n = -1 when absent. */
int oi_a_ints(const nctx *c, const char *name, int max, int64_t *v, int *n) {
    const Onnx__AttributeProto *a;
    *n = -1;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a);
    if (rc || !a) return rc;
    if (a->n_ints > (size_t)max)
        return oi_nfail(c, ENPU_E_LIMIT, "attribute '%s' has %zu values, over the limit of %d",
                     name, a->n_ints, max);
    for (size_t i = 0; i < a->n_ints; i++) v[i] = a->ints[i];
    *n = (int)a->n_ints;
    return 0;
}

/* STRING attribute into buf (NUL-terminated; longer values are invalid). */
int oi_a_string(const nctx *c, const char *name, const char *def, char *buf, size_t n) {
    const Onnx__AttributeProto *a;
    int rc = oi_get_attr(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, &a);
    if (rc) return rc;
    if (!a) {
        snprintf(buf, n, "%s", def);
        return 0;
    }
    /* An empty string may come with no data at all (NULL). */
    if (a->s.len >= n || (a->s.len && memchr(a->s.data, 0, a->s.len)))
        return oi_nfail(c, ENPU_E_INVALID, "attribute '%s' is not a recognized value", name);
    if (a->s.len) memcpy(buf, a->s.data, a->s.len);
    buf[a->s.len] = 0;
    return 0;
}

/* --- constant inputs ----------------------------------------------------- */
