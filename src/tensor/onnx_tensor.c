/* TensorProto decoding shared by the ONNX importer and the .pb reader. */
#include "tensor/onnx_tensor.h"

#include <stdlib.h>
#include <string.h>

enpu_dtype enpu_onnx_dtype(int64_t t) {
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return ENPU_DT_FLOAT32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return ENPU_DT_UINT8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return ENPU_DT_INT8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return ENPU_DT_UINT16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return ENPU_DT_INT16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return ENPU_DT_INT32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return ENPU_DT_INT64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return ENPU_DT_BOOL;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return ENPU_DT_FLOAT64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return ENPU_DT_UINT32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return ENPU_DT_UINT64;
    default: return ENPU_DT_UNDEFINED;
    }
}

const char *enpu_onnx_dtype_name(int64_t t) {
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED: return "undefined";
    case ONNX__TENSOR_PROTO__DATA_TYPE__STRING: return "string";
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return "float16";
    case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64: return "complex64";
    case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128: return "complex128";
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return "bfloat16";
    default: break;
    }
    enpu_dtype dt = enpu_onnx_dtype(t);
    return dt == ENPU_DT_UNDEFINED ? "unknown" : enpu_dtype_name(dt);
}

int enpu_onnx_check_dims(size_t rank, const int64_t *dims, const char *what, const char *tname,
                         int64_t *numel, enpu_err *err) {
    if (rank > ENPU_MAX_RANK)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: tensor '%s': rank %zu is over the limit of %d",
                         what, tname, rank, ENPU_MAX_RANK);
    for (size_t i = 0; i < rank; i++)
        if (dims[i] < 0 || dims[i] > ENPU_MAX_DIM)
            return enpu_fail(err, ENPU_E_LIMIT,
                             "%s: tensor '%s': dimension %zu is %lld, outside 0..%lld", what,
                             tname, i, (long long)dims[i], (long long)ENPU_MAX_DIM);
    int rc = enpu_shape_numel((int)rank, dims, numel, tname, err);
    if (rc && err) enpu_err_prefix(err, "%s", what);
    return rc;
}

static const char *external_location(const Onnx__TensorProto *tp) {
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (e && e->key && strcmp(e->key, "location") == 0 && e->value) return e->value;
    }
    return "?";
}

/* Count of values in the typed field that carries `dt`, and that field's name. */
static size_t typed_count(const Onnx__TensorProto *tp, enpu_dtype dt, const char **field) {
    switch (dt) {
    case ENPU_DT_FLOAT32: *field = "float_data"; return tp->n_float_data;
    case ENPU_DT_INT64: *field = "int64_data"; return tp->n_int64_data;
    case ENPU_DT_FLOAT64: *field = "double_data"; return tp->n_double_data;
    case ENPU_DT_UINT32:
    case ENPU_DT_UINT64: *field = "uint64_data"; return tp->n_uint64_data;
    default: *field = "int32_data"; return tp->n_int32_data;
    }
}

static void convert_typed(const Onnx__TensorProto *tp, enpu_dtype dt, int64_t n, void *dst) {
    if (n == 0) return; /* the typed field is then NULL */
    switch (dt) {
    case ENPU_DT_FLOAT32: memcpy(dst, tp->float_data, (size_t)n * sizeof(float)); break;
    case ENPU_DT_INT64: memcpy(dst, tp->int64_data, (size_t)n * sizeof(int64_t)); break;
    case ENPU_DT_FLOAT64: memcpy(dst, tp->double_data, (size_t)n * sizeof(double)); break;
    case ENPU_DT_UINT64: memcpy(dst, tp->uint64_data, (size_t)n * sizeof(uint64_t)); break;
    case ENPU_DT_UINT32:
        for (int64_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
        break;
    case ENPU_DT_INT32: memcpy(dst, tp->int32_data, (size_t)n * sizeof(int32_t)); break;
    case ENPU_DT_INT16:
        for (int64_t i = 0; i < n; i++) ((int16_t *)dst)[i] = (int16_t)tp->int32_data[i];
        break;
    case ENPU_DT_UINT16:
        for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
        break;
    case ENPU_DT_INT8:
        for (int64_t i = 0; i < n; i++) ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
        break;
    case ENPU_DT_UINT8:
        for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
        break;
    case ENPU_DT_BOOL:
        for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
        break;
    case ENPU_DT_UNDEFINED: break;
    }
}

int enpu_onnx_decode_tensor(const Onnx__TensorProto *tp, const char *what, const char *tname,
                            enpu_status size_code, enpu_pb_tensor *out, enpu_err *err) {
    memset(out, 0, sizeof *out);
    if (!tp) /* an attribute of type TENSOR without its tensor */
        return enpu_fail(err, ENPU_E_INVALID, "%s: tensor '%s' is missing (a TENSOR attribute with no t)",
                         what, tname);
    if ((tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
        tp->n_external_data > 0)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: tensor '%s' is stored as external_data (file '%s'); only "
                         "self-contained models are supported",
                         what, tname, external_location(tp));
    if (tp->segment)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: tensor '%s' is stored in segments, which are not supported", what,
                         tname);
    if (!tp->has_data_type)
        return enpu_fail(err, size_code, "%s: tensor '%s' has no data_type", what, tname);
    enpu_dtype dt = enpu_onnx_dtype(tp->data_type);
    if (dt == ENPU_DT_UNDEFINED)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: tensor '%s': data type %s (%d) is not supported", what, tname,
                         enpu_onnx_dtype_name(tp->data_type), (int)tp->data_type);
    int64_t numel = 0;
    int rc = enpu_onnx_check_dims(tp->n_dims, tp->dims, what, tname, &numel, err);
    if (rc) return rc;
    size_t esize = enpu_dtype_size(dt);
    size_t nbytes = (size_t)numel * esize;
    const char *field = "raw_data";
    if (tp->has_raw_data) {
        if (tp->raw_data.len != nbytes)
            return enpu_fail(err, size_code,
                             "%s: tensor '%s': raw_data holds %zu bytes, but shape and dtype %s "
                             "need %zu",
                             what, tname, tp->raw_data.len, enpu_dtype_name(dt), nbytes);
    } else {
        size_t have = typed_count(tp, dt, &field);
        if (have != (size_t)numel)
            return enpu_fail(err, size_code,
                             "%s: tensor '%s': %s holds %zu values, but the shape needs %lld",
                             what, tname, field, have, (long long)numel);
    }
    void *data = malloc(nbytes ? nbytes : 1);
    if (!data)
        return enpu_fail(err, ENPU_E_NOMEM, "%s: tensor '%s': out of memory for %zu bytes", what,
                         tname, nbytes);
    if (tp->has_raw_data) {
        if (nbytes) memcpy(data, tp->raw_data.data, nbytes);
        if (dt == ENPU_DT_BOOL)
            for (size_t i = 0; i < nbytes; i++) ((uint8_t *)data)[i] = ((uint8_t *)data)[i] != 0;
    } else {
        convert_typed(tp, dt, numel, data);
    }
    out->dtype = dt;
    out->rank = (int)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) out->dims[i] = tp->dims[i];
    out->numel = numel;
    out->nbytes = nbytes;
    out->data = data;
    return 0;
}
