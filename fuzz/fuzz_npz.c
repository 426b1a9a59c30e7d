/* libFuzzer target: NumPy .npz archives (enpu_npz_parse: the zip reader,
 * inflate, every member's .npy), then the conversion eval applies. */
#include "easynpu/tensor_io.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enpu_err err = {0};
    enpu_buf *arr = (enpu_buf *)(uintptr_t)0xa5;
    int n = -1;
    int rc = enpu_npz_parse(data, size, &arr, &n, &err);
    if (rc) {
        fuzz_check_error(rc, &err);
        FUZZ_CHECK(arr == NULL && n == 0);
        return 0;
    }
    FUZZ_CHECK(n >= 1 && n <= ENPU_MAX_NPZ_ARRAYS && arr != NULL);
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(arr[i].name != NULL);
        FUZZ_CHECK(arr[i].rank >= 0 && arr[i].rank <= ENPU_MAX_RANK);
        int64_t k = enpu_buf_numel(&arr[i]);
        FUZZ_CHECK(k >= 0 && k <= ENPU_MAX_ELEMS);
        enpu_err e = {0};
        rc = enpu_buf_to_f32(&arr[i], &e);
        if (rc) fuzz_check_error(rc, &e);
        enpu_buf_free(&arr[i]);
    }
    free(arr);
    return 0;
}
