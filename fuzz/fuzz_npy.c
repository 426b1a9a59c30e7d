/* libFuzzer target: NumPy .npy tensor files (enpu_npy_parse), then the
 * conversion run-float applies to inputs. */
#include "easynpu/tensor_io.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_tensor_file(enpu_npy_parse, data, size);
}
