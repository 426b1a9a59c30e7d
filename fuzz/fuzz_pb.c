/* libFuzzer target: ONNX TensorProto .pb tensor files (enpu_pb_parse), then
 * the conversion run-float applies to inputs. */
#include "easynpu/tensor_io.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_tensor_file(enpu_pb_parse, data, size);
}
