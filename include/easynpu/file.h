/* Whole-file reading with a size limit, and atomic writing. */
#ifndef EASYNPU_FILE_H
#define EASYNPU_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "easynpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads all of `path` into a new buffer (*out, freed by the caller; one extra
 * NUL byte is appended so text can be parsed in place).  A file larger than
 * `limit` bytes is an ENPU_E_LIMIT error checked before reading.  Path "-"
 * is standard input: read once (up to ENPU_STDIN_MAX_BYTES), then every
 * read of "-" returns the same bytes (a caller may look at them before
 * parsing), or ENPU_E_LIMIT when they are more than `limit`. */
#define ENPU_STDIN_MAX_BYTES ((size_t)3 << 30)
int enpu_file_read(const char *path, size_t limit, uint8_t **out, size_t *n, enpu_err *err);

/* Writes n bytes to `path` through `path.tmp.<pid>` renamed into place, so a
 * failure never leaves a partial file.  Path "-" is standard output. */
int enpu_file_write_atomic(const char *path, const void *data, size_t n, enpu_err *err);

/* True if a and b name the same existing file (same device and inode): used to
 * refuse writing an output over an input. */
int enpu_same_file(const char *a, const char *b);

/* Extension of path including the dot (".npy"), or "" if none.  For "-"
 * (standard input) the kind its bytes start with: ".enpu", ".npy", ".qjson"
 * (a JSON object) or "" (protobuf: an ONNX model or tensor). */
const char *enpu_path_ext(const char *path);

/* What the first bytes of a file say it is, for the message of a file given
 * where another kind is expected: "an EasyNPU program (.enpu)", "a tensor
 * (.npy)", "an archive of tensors (.npz)", "a TFLite model", "a JSON file
 * (a .qjson or an arch description)", or NULL when they say nothing (an
 * ONNX model or a .pb tensor are protobuf, which has no magic). */
const char *enpu_file_kind(const uint8_t *d, size_t n);

#ifdef __cplusplus
}
#endif
#endif
