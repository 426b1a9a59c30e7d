/* Host nodes of a quantized graph with requant tflite: the op's TFLite
 * integer kernel (numerics.h) on int8 values, the same call for the golden
 * reference and the simulator's host ops. */
#include "easynpu/quant.h"

int enpu_tfl_kernel_of(enpu_op op) {
    switch (op) {
    case ENPU_OP_SOFTMAX: return ENPU_TFL_SOFTMAX;
    case ENPU_OP_SIGMOID: return ENPU_TFL_LOGISTIC;
    case ENPU_OP_TANH: return ENPU_TFL_TANH;
    case ENPU_OP_HARD_SWISH: return ENPU_TFL_HARD_SWISH;
    default: return -1;
    }
}

int enpu_tfl_host_run(enpu_op op, int axis, int rank, const int64_t *dims, const int8_t *x,
                      float s_in, int32_t zp_in, int8_t *y, float s_out, int32_t zp_out,
                      const char *what, enpu_err *err) {
    int k = enpu_tfl_kernel_of(op);
    if (k < 0)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "%s: %s has no TFLite integer kernel here (requant tflite)", what,
                         enpu_op_name(op));
    if (rank < 0 || rank > ENPU_MAX_RANK || (op == ENPU_OP_SOFTMAX && (axis < 0 || axis >= rank)))
        return enpu_fail(err, ENPU_E_INVALID, "%s: axis %d of a rank-%d tensor", what, axis, rank);
    enpu_tfl_kparams p;
    int rc = enpu_tfl_kernel_prepare((enpu_tfl_kernel)k, s_in, zp_in, s_out, zp_out, what, &p, err);
    if (rc) return rc;
    int64_t outer = 1, depth = 1, inner = 1;
    for (int d = 0; d < rank; d++) {
        if (op != ENPU_OP_SOFTMAX || d < axis) outer *= dims[d];
        else if (d == axis) depth = dims[d];
        else inner *= dims[d];
    }
    if (op != ENPU_OP_SOFTMAX) {
        for (int64_t i = 0; i < outer; i++) y[i] = enpu_tfl_kernel_eval(&p, x[i]);
        return 0;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * depth * inner + i;
            enpu_tfl_softmax(&p, x + base, y + base, depth, inner);
        }
    return 0;
}
