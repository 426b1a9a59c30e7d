/* Reading and writing tensor files: NumPy `.npy` and ONNX `TensorProto` `.pb`
 * (the ONNX backend-test format), chosen by file extension. */
#ifndef EASYNPU_TENSOR_IO_H
#define EASYNPU_TENSOR_IO_H

#include "easynpu/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest tensor file read: the biggest tensor allowed (ENPU_MAX_ELEMS
 * 8-byte elements) plus room for headers. */
#define ENPU_MAX_TENSOR_FILE_BYTES ((size_t)ENPU_MAX_ELEMS * 8 + ((size_t)1 << 20))

/* A free-standing tensor value: dtype, shape and row-major data it owns. */
typedef struct enpu_buf {
    char *name;         /* from a .pb's name field, may be NULL */
    enpu_dtype dtype;
    int rank;
    int64_t dims[ENPU_MAX_RANK];
    void *data;
} enpu_buf;

int64_t enpu_buf_numel(const enpu_buf *b);
void enpu_buf_free(enpu_buf *b);               /* frees contents, not b */
/* Allocates zeroed data for the given shape (validated with enpu_shape_numel). */
int enpu_buf_alloc(enpu_buf *b, enpu_dtype dt, int rank, const int64_t *dims, enpu_err *err);
/* Converts b in place to float32 (from any numeric dtype). */
int enpu_buf_to_f32(enpu_buf *b, enpu_err *err);

/* Reads `path` (.npy or .pb, by extension; anything else is ENPU_E_USAGE).
 * .npy: format 1.0/2.0/3.0, C order, little-endian f4 f8 i1 u1 i2 u2 i4 u4 i8
 * u8 b1.  .pb: an ONNX TensorProto (raw_data or typed fields; external data
 * is ENPU_E_UNSUPPORTED).  A bad magic, a truncated or oversized data block or
 * a malformed header is ENPU_E_FORMAT; dims over the limits ENPU_E_LIMIT.
 * On success *out owns its contents (enpu_buf_free); on error *out is empty.
 * Errors start with the file path. */
int enpu_tensor_read(const char *path, enpu_buf *out, enpu_err *err);

/* Whether an array of shape a can be given for a model input of shape b:
 * the same dimensions but for leading 1s on either side ([26,49] for
 * [1,1,26,49]).  The one rule `run --input`, `sim --input`, `--calib` and
 * `eval --data` apply, and the references and the simulator accept. */
bool enpu_shape_fits(int ra, const int64_t *a, int rb, const int64_t *b);
/* The error of an input that does not fit: ENPU_E_INVALID, "FILE: input
 * 'NAME': shape AxB does not match the model's CxD" (file may be NULL). */
int enpu_shape_error(enpu_err *err, const char *file, const char *input, int ra, const int64_t *a, int rb,
                     const int64_t *b);
/* Writes `b` to `path` (.npy format 1.0, or .pb with raw_data and b->name)
 * through a temporary file renamed into place, so a failed write leaves no
 * partial file. */
int enpu_tensor_write(const char *path, const enpu_buf *b, enpu_err *err);

/* Format-specific entry points on memory (used by the fuzzers); messages
 * name the source as "<memory>". */
int enpu_npy_parse(const uint8_t *data, size_t n, enpu_buf *out, enpu_err *err);
int enpu_pb_parse(const uint8_t *data, size_t n, enpu_buf *out, enpu_err *err);

/* Largest .npz archive read, and most arrays in one. */
#define ENPU_MAX_NPZ_FILE_BYTES ((size_t)1 << 32)
#define ENPU_MAX_NPZ_ARRAYS 100000

/* Reads a NumPy .npz archive (a zip of .npy members, stored or deflated, as
 * numpy.savez and savez_compressed write them, zip64 included): *out gets
 * *n_out buffers (free each with enpu_buf_free, then the array), one per
 * member in archive order, named after the member without ".npy".  A member
 * that is not a .npy, a bad CRC-32, corrupt deflate data or a truncated
 * archive is ENPU_E_FORMAT; encryption and other compression methods
 * ENPU_E_UNSUPPORTED.  Errors start with the path and name the member. */
int enpu_npz_read(const char *path, enpu_buf **out, int *n_out, enpu_err *err);
int enpu_npz_parse(const uint8_t *data, size_t n, enpu_buf **out, int *n_out, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
