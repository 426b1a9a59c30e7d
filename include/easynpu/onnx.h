/* ONNX importer: an ONNX ModelProto file into an enpu_graph, shapes inferred
 * and validated.  Opsets 7-17 of the default domain. */
#ifndef EASYNPU_ONNX_H
#define EASYNPU_ONNX_H

#include "easynpu/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_MAX_MODEL_BYTES ((size_t)1 << 30) /* 1 GiB */

/* Loads `path`.  On success *out owns a graph that passed
 * enpu_graph_validate.  Tensors with external_data are rejected without
 * opening anything.  Errors name the file and the node/tensor/attribute. */
int enpu_onnx_load(const char *path, enpu_graph **out, enpu_err *err);
/* Same, from memory (`what` names the source in messages). */
int enpu_onnx_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                    enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
