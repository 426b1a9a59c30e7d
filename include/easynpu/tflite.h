/* TFLite importer: an int8 .tflite model (a FlatBuffer of TFLite's schema
 * version 3) straight into the quantized graph IR (quant.h) with requant
 * "tflite", the file's own scales and zero points, no recalibration.
 * docs/tflite.md lists the operators, the schema fields read and the rules.
 *
 * Layout: TFLite tensors are channel-last (NHWC); the IR, like ONNX, is
 * channel-first.  A tensor of rank r >= 3 with TFLite dims [d0, d1, ...,
 * d(r-1)] becomes [d0, d(r-1), d1, ..., d(r-2)] in the IR (weights are
 * rearranged to the IR's layouts), and a RESHAPE whose order differs gets
 * the transposes that keep TFLite's row-major meaning.  Ranks 1 and 2 are
 * unchanged.  Graph inputs and outputs keep their TFLite names. */
#ifndef EASYNPU_TFLITE_H
#define EASYNPU_TFLITE_H

#include <stddef.h>
#include <stdint.h>

#include "easynpu/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_MAX_TFLITE_BYTES ((size_t)1 << 30) /* 1 GiB (FlatBuffers stop at 2 GiB) */

/* Loads `path` and imports its first subgraph.  On success *out owns a
 * quantized graph that passed enpu_qgraph_check.  Errors name the file and
 * the operator ("op 3 (CONV_2D)") or tensor: ENPU_E_IO, ENPU_E_FORMAT (not
 * a TFLite FlatBuffer, truncated, an offset or vector outside the file),
 * ENPU_E_UNSUPPORTED (an operator, type, option or parameter this importer
 * does not take, a float model), ENPU_E_INVALID (inconsistent shapes or
 * references), ENPU_E_LIMIT (docs/limits.md). */
int enpu_tflite_load(const char *path, enpu_graph **out, enpu_err *err);
/* Same, from memory (`what` names the source in messages): the fuzzer's
 * entry point. */
int enpu_tflite_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                      enpu_err *err);

/* A tensor of an imported graph in TFLite's (channel-last) order: its dims,
 * and its elements converted between the two orders (n = numel). */
void enpu_tflite_dims(const enpu_tensor *t, int64_t *dims);
void enpu_tflite_to_ir(const enpu_tensor *t, const int8_t *tfl, int8_t *ir);
void enpu_tflite_from_ir(const enpu_tensor *t, const int8_t *ir, int8_t *tfl);

#ifdef __cplusplus
}
#endif
#endif
