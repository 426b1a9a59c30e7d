/* Private to src/frontend: decoding an ONNX TensorProto (initializers,
 * Constant values, .pb tensor files) into a dtype, a shape and a row-major
 * buffer, shared by the importer and tensor_io so both accept exactly the same
 * encodings. */
#ifndef ENPU_FRONTEND_ONNX_TENSOR_H
#define ENPU_FRONTEND_ONNX_TENSOR_H

#include "easynpu/ir.h"
#include "onnx.pb-c.h"

typedef struct enpu_pb_tensor {
    enpu_dtype dtype;
    int rank;
    int64_t dims[ENPU_MAX_RANK];
    int64_t numel;
    size_t nbytes;  /* numel * dtype size */
    void *data;     /* malloc'd, at least 1 byte even when nbytes is 0; caller frees */
} enpu_pb_tensor;

/* Our dtype for an ONNX TensorProto.DataType, ENPU_DT_UNDEFINED for one we do
 * not handle (string, float16, bfloat16, complex, unknown values). */
enpu_dtype enpu_onnx_dtype(int64_t onnx_type);
/* ONNX spelling of a data type for messages ("float16", "string", ...). */
const char *enpu_onnx_dtype_name(int64_t onnx_type);

/* Decodes `tp`.  `what` (the file) and `tname` (the tensor) prefix every
 * message as "WHAT: tensor 'TNAME': ...".  The data is taken from raw_data or
 * the typed field that matches the dtype; its element count must equal the
 * shape's, else `size_code` (ENPU_E_INVALID for a model's initializer,
 * ENPU_E_FORMAT for a tensor file).  External data and segments are
 * ENPU_E_UNSUPPORTED (nothing is opened); dims are checked against the limits
 * before anything is allocated; a NULL tp (a TENSOR attribute without its
 * tensor) is ENPU_E_INVALID.  On error nothing is left allocated. */
int enpu_onnx_decode_tensor(const Onnx__TensorProto *tp, const char *what, const char *tname,
                            enpu_status size_code, enpu_pb_tensor *out, enpu_err *err);

/* Checks one dimension list against the limits (negative or > ENPU_MAX_DIM:
 * ENPU_E_LIMIT; rank > ENPU_MAX_RANK: ENPU_E_LIMIT) and the element count
 * (enpu_shape_numel).  Messages: "WHAT: tensor 'TNAME': ...". */
int enpu_onnx_check_dims(size_t rank, const int64_t *dims, const char *what, const char *tname,
                         int64_t *numel, enpu_err *err);

#endif
