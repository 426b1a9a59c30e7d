/* EasyNPU graph IR.
 *
 * The one representation every stage after the importer consumes: tensors
 * (name, dtype, shape, layout, optional quantization, optional constant data)
 * and nodes (op kind + typed, already-normalized attributes).  Tensors and
 * nodes are referred to by index into the graph's arrays; an index stays valid
 * for the life of the graph (tensors are never removed, nodes may be marked
 * dead and dropped by enpu_graph_compact()).
 *
 * Attributes are normalized by the importer: defaults filled in, opset
 * differences resolved (Clip's min/max, Squeeze's axes, Pad's pads all end up
 * in the attribute struct whether they came as attributes or constant inputs),
 * negative axes made positive once the input rank is known.  Consumers never
 * see ONNX spelling.
 *
 * Shapes are static: every dimension is known after enpu_graph_infer_shapes().
 * An NPU program is compiled for fixed shapes, so a dynamic dimension is an
 * error at import (a symbolic batch dimension is taken as 1, with a warning). */
#ifndef EASYNPU_IR_H
#define EASYNPU_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "easynpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Documented limits (docs/limits.md); checked before any allocation that
 * depends on input. */
#define ENPU_MAX_RANK 8
#define ENPU_MAX_DIM ((int64_t)1 << 31)        /* one dimension */
#define ENPU_MAX_ELEMS ((int64_t)1 << 31)      /* elements of one tensor */
#define ENPU_MAX_NODES 100000
#define ENPU_MAX_TENSORS 400000
#define ENPU_MAX_NAME 4096                     /* bytes of a tensor/node name */

/* Values match ONNX TensorProto.DataType so the importer maps them 1:1. */
typedef enum enpu_dtype {
    ENPU_DT_UNDEFINED = 0,
    ENPU_DT_FLOAT32 = 1,
    ENPU_DT_UINT8 = 2,
    ENPU_DT_INT8 = 3,
    ENPU_DT_UINT16 = 4,
    ENPU_DT_INT16 = 5,
    ENPU_DT_INT32 = 6,
    ENPU_DT_INT64 = 7,
    ENPU_DT_BOOL = 9,
    ENPU_DT_FLOAT64 = 11,
    ENPU_DT_UINT32 = 12,
    ENPU_DT_UINT64 = 13
} enpu_dtype;

typedef enum enpu_layout {
    ENPU_LAYOUT_ANY = 0, /* no spatial meaning (vectors, weights, shapes) */
    ENPU_LAYOUT_NCHW,
    ENPU_LAYOUT_NHWC
} enpu_layout;

/* X-macro of op kinds: name, ONNX op_type.  The quantizer adds no new kinds:
 * a quantized node is the same op whose tensors carry int8 quantization and
 * whose `q` block (below) holds the integer parameters. */
#define ENPU_OP_LIST(X)                         \
    X(CONV, "Conv")                             \
    X(GEMM, "Gemm")                             \
    X(MATMUL, "MatMul")                         \
    X(ADD, "Add")                               \
    X(SUB, "Sub")                               \
    X(MUL, "Mul")                               \
    X(DIV, "Div")                               \
    X(RELU, "Relu")                             \
    X(CLIP, "Clip")                             \
    X(LEAKY_RELU, "LeakyRelu")                  \
    X(PRELU, "PRelu")                           \
    X(SIGMOID, "Sigmoid")                       \
    X(TANH, "Tanh")                             \
    X(HARD_SIGMOID, "HardSigmoid")              \
    X(HARD_SWISH, "HardSwish")                  \
    X(SILU, "SiLU")                             \
    X(BATCHNORM, "BatchNormalization")          \
    X(MAXPOOL, "MaxPool")                       \
    X(AVGPOOL, "AveragePool")                   \
    X(GLOBAL_AVGPOOL, "GlobalAveragePool")      \
    X(RESHAPE, "Reshape")                       \
    X(FLATTEN, "Flatten")                       \
    X(SQUEEZE, "Squeeze")                       \
    X(UNSQUEEZE, "Unsqueeze")                   \
    X(TRANSPOSE, "Transpose")                   \
    X(CONCAT, "Concat")                         \
    X(PAD, "Pad")                               \
    X(SOFTMAX, "Softmax")                       \
    X(IDENTITY, "Identity")                     \
    X(DROPOUT, "Dropout")                       \
    X(SLICE, "Slice")                           \
    X(SPLIT, "Split")                           \
    X(RESIZE, "Resize")                         \
    X(CONV_TRANSPOSE, "ConvTranspose")          \
    X(REDUCE_MEAN, "ReduceMean")                \
    X(REDUCE_MAX, "ReduceMax")                  \
    X(REDUCE_SUM, "ReduceSum")                  \
    X(MAX, "Max")                               \
    X(MIN, "Min")                               \
    X(POW, "Pow")                               \
    X(SQRT, "Sqrt")                             \
    X(EXP, "Exp")                               \
    X(LOG, "Log")                               \
    X(ERF, "Erf")                               \
    X(NEG, "Neg")                               \
    X(ABS, "Abs")                               \
    X(RECIPROCAL, "Reciprocal")                 \
    X(FLOOR, "Floor")                           \
    X(CEIL, "Ceil")                             \
    X(GELU, "Gelu")                             \
    X(LAYER_NORM, "LayerNormalization")         \
    X(GATHER, "Gather")                         \
    X(WHERE, "Where")                           \
    X(EQUAL, "Equal")                           \
    X(EXPAND, "Expand")                         \
    X(SHAPE, "Shape")                           \
    X(SIZE, "Size")                             \
    X(CAST, "Cast")                             \
    X(RANGE, "Range")                           \
    X(CONSTANT_OF_SHAPE, "ConstantOfShape")     \
    X(QUANTIZE_LINEAR, "QuantizeLinear")        \
    X(DEQUANTIZE_LINEAR, "DequantizeLinear")    \
    X(QLINEAR_CONV, "QLinearConv")              \
    X(QLINEAR_MATMUL, "QLinearMatMul")          \
    X(LSTM, "LSTM")                             \
    X(GRU, "GRU")                               \
    X(RNN, "RNN")                               \
    X(IF, "If")                                 \
    X(LOOP, "Loop")                             \
    X(SCAN, "Scan")                             \
    X(ARGMAX, "ArgMax")                         \
    X(ARGMIN, "ArgMin")

typedef enum enpu_op {
    ENPU_OP_NONE = 0,
#define ENPU_X_ENUM(id, onnx) ENPU_OP_##id,
    ENPU_OP_LIST(ENPU_X_ENUM)
#undef ENPU_X_ENUM
    ENPU_OP_COUNT
} enpu_op;

typedef enum enpu_auto_pad {
    ENPU_PAD_NOTSET = 0,
    ENPU_PAD_SAME_UPPER,
    ENPU_PAD_SAME_LOWER,
    ENPU_PAD_VALID
} enpu_auto_pad;

/* 2-D window (Conv, pools).  1-D ONNX ops are imported as 2-D with H = 1.
 * After shape inference auto_pad is NOTSET and pads[] explicit. */
typedef struct enpu_window {
    int kernel[2];   /* kh, kw */
    int stride[2];   /* sh, sw */
    int dilation[2]; /* dh, dw (ONNX meaning: 1 = dense) */
    int pads[4];     /* top, left, bottom, right */
    enpu_auto_pad auto_pad;
} enpu_window;

/* Conv and ConvTranspose.  ConvTranspose only: output_padding (the extra
 * rows/columns at the bottom/right, H then W like the window) and, when the
 * model gives `output_shape`, its spatial sizes (n_out_shape > 0); shape
 * inference turns output_shape into explicit pads and output_padding. */
typedef struct enpu_conv_attr {
    enpu_window w;
    int group;
    int out_pad[2];
    int n_out_shape;
    int64_t out_shape[2];
} enpu_conv_attr;

typedef struct enpu_pool_attr {
    enpu_window w;
    bool ceil_mode;
    bool count_include_pad;
} enpu_pool_attr;

typedef struct enpu_gemm_attr {
    float alpha, beta;
    bool trans_a, trans_b;
} enpu_gemm_attr;

/* Clip, Relu (0, +inf), LeakyRelu (alpha), HardSigmoid (alpha, beta). */
typedef struct enpu_act_attr {
    float min, max;
    float alpha, beta;
} enpu_act_attr;

typedef struct enpu_bn_attr {
    float epsilon;
} enpu_bn_attr;

/* Reshape/Flatten/Squeeze/Unsqueeze/Transpose/Concat/Softmax/Gather (axis)/
 * Expand (shape, n_shape: the target as given). */
typedef struct enpu_shape_attr {
    int axis;                     /* Flatten, Concat, Softmax (non-negative after inference) */
    int n_axes;                   /* Squeeze/Unsqueeze axes, Transpose perm (n_axes = rank) */
    int axes[ENPU_MAX_RANK];
    bool allowzero;               /* Reshape */
    bool softmax_legacy;          /* Softmax opset < 13: coerce to 2-D at axis */
    int n_shape;                  /* Reshape target as given (0 and -1 resolved at inference) */
    int64_t shape[ENPU_MAX_RANK];
} enpu_shape_attr;

typedef enum enpu_pad_mode {
    ENPU_PADMODE_CONSTANT = 0,
    ENPU_PADMODE_EDGE,
    ENPU_PADMODE_REFLECT
} enpu_pad_mode;

typedef struct enpu_pad_attr {
    int n_pads;                       /* 2 * rank: begins then ends, as in ONNX */
    int64_t pads[2 * ENPU_MAX_RANK];
    float value;
    int mode;                         /* enpu_pad_mode */
} enpu_pad_attr;

/* Slice (Split is expanded into Slices at import).  As imported: n entries
 * of (axes, starts, ends, steps) as the model gives them (ONNX clamping
 * rules not yet applied).  After shape inference: n = rank, axes[d] = d, and
 * output index i along axis d reads input index starts[d] + i * steps[d]
 * (steps non-zero, starts inside the input whenever the output is not
 * empty); ends[d] is the clamped end. */
typedef struct enpu_slice_attr {
    int n;
    int axes[ENPU_MAX_RANK];
    int64_t starts[ENPU_MAX_RANK], ends[ENPU_MAX_RANK], steps[ENPU_MAX_RANK];
} enpu_slice_attr;

typedef enum enpu_resize_mode {
    ENPU_RESIZE_NEAREST = 0,
    ENPU_RESIZE_LINEAR,
    ENPU_RESIZE_CUBIC
} enpu_resize_mode;

/* Resize's coordinate_transformation_mode. */
typedef enum enpu_resize_ctm {
    ENPU_CTM_HALF_PIXEL = 0,
    ENPU_CTM_PYTORCH_HALF_PIXEL,
    ENPU_CTM_ALIGN_CORNERS,
    ENPU_CTM_ASYMMETRIC,
    ENPU_CTM_TF_HALF_PIXEL_FOR_NN,
    ENPU_CTM_TF_CROP_AND_RESIZE
} enpu_resize_ctm;

/* Resize's nearest_mode. */
typedef enum enpu_resize_nearest {
    ENPU_NEAREST_ROUND_PREFER_FLOOR = 0,
    ENPU_NEAREST_ROUND_PREFER_CEIL,
    ENPU_NEAREST_FLOOR,
    ENPU_NEAREST_CEIL
} enpu_resize_nearest;

/* Resize (opsets 10-17; Upsample is not imported).  scales: n_scales = rank
 * after inference (the scale of each axis used by the coordinate transform:
 * the given scale, or output/input size when sizes were given); roi:
 * 2*rank values (starts then ends) for tf_crop_and_resize, else n_roi 0. */
typedef struct enpu_resize_attr {
    int mode;    /* enpu_resize_mode */
    int ctm;     /* enpu_resize_ctm */
    int nearest; /* enpu_resize_nearest */
    bool exclude_outside;
    float cubic_a;
    float extrapolation;
    int n_scales;
    float scales[ENPU_MAX_RANK];
    int n_sizes;
    int64_t sizes[ENPU_MAX_RANK];
    int n_roi;
    float roi[2 * ENPU_MAX_RANK];
} enpu_resize_attr;

/* ReduceMean/ReduceMax/ReduceSum, and ArgMax/ArgMin (one axis, axes[0];
 * select_last_index picks the last of equal extremes).  After inference the axes are sorted,
 * non-negative and unique; n_axes = 0 means no axis is reduced (only with
 * noop_with_empty_axes; otherwise empty axes were expanded to all axes). */
typedef struct enpu_reduce_attr {
    int n_axes;
    int axes[ENPU_MAX_RANK];
    bool keepdims;
    bool noop_with_empty_axes;
    bool select_last;
} enpu_reduce_attr;

/* LayerNormalization: normalizes over axes [axis, rank). */
typedef struct enpu_norm_attr {
    int axis;
    float epsilon;
} enpu_norm_attr;

/* The few scalar attributes of ops that are folded at import or carry one
 * setting: Cast `to`; Shape `start`/`end` (end = INT64_MAX when absent);
 * ConstantOfShape's value (`to` its dtype); Gelu `approximate` (0 none, 1
 * tanh); QuantizeLinear/DequantizeLinear `axis`. */
typedef struct enpu_misc_attr {
    enpu_dtype to;
    int64_t start, end;
    double value;
    int approximate;
    int axis;
} enpu_misc_attr;

/* LSTM, GRU and RNN: one layer over a sequence, forward, reverse or both
 * ways.  act[] holds the gate functions per direction (LSTM f, g, h; GRU f,
 * g; RNN f; the second direction's follow the first's), each with its
 * alpha/beta (the ONNX defaults filled in at import). */
#define ENPU_RNN_MAX_HIDDEN 1024
typedef enum enpu_rnn_dir { ENPU_RNN_FORWARD = 0, ENPU_RNN_REVERSE, ENPU_RNN_BIDIRECTIONAL } enpu_rnn_dir;
typedef enum enpu_rnn_act {
    ENPU_RNN_SIGMOID = 0,
    ENPU_RNN_TANH,
    ENPU_RNN_RELU,
    ENPU_RNN_AFFINE,
    ENPU_RNN_LEAKY_RELU,
    ENPU_RNN_THRESHOLDED_RELU,
    ENPU_RNN_SCALED_TANH,
    ENPU_RNN_HARD_SIGMOID,
    ENPU_RNN_ELU,
    ENPU_RNN_SOFTSIGN,
    ENPU_RNN_SOFTPLUS,
    ENPU_RNN_ACT_COUNT
} enpu_rnn_act;
typedef struct enpu_rnn_attr {
    int hidden;               /* hidden_size */
    int direction;            /* enpu_rnn_dir */
    int layout;               /* 0: X [T, B, I]; 1: batch first, X [B, T, I] */
    int act[6];               /* enpu_rnn_act, per gate function and direction */
    float alpha[6], beta[6];
    float clip;               /* > 0: gate inputs clipped to [-clip, clip]; 0: none */
    bool input_forget;        /* LSTM: the forget gate is 1 - the input gate */
    bool linear_before_reset; /* GRU */
} enpu_rnn_attr;

/* The ONNX defaults of op (LSTM, GRU, RNN): forward, layout 0, no clip,
 * gate functions Sigmoid/Tanh/Tanh (LSTM), Sigmoid/Tanh (GRU), Tanh (RNN)
 * in both directions, each function's own default alpha and beta. */
void enpu_rnn_attr_default(enpu_op op, enpu_rnn_attr *a);
/* The default alpha and beta of gate function f (LeakyRelu 0.01, ...). */
void enpu_rnn_act_default(int f, float *alpha, float *beta);

typedef union enpu_attr {
    enpu_conv_attr conv;
    enpu_pool_attr pool;
    enpu_gemm_attr gemm;
    enpu_act_attr act;
    enpu_bn_attr bn;
    enpu_shape_attr shape;
    enpu_pad_attr pad;
    enpu_slice_attr slice;
    enpu_resize_attr resize;
    enpu_reduce_attr reduce;
    enpu_norm_attr norm;
    enpu_misc_attr misc;
    enpu_rnn_attr rnn;
} enpu_attr;

/* Quantization parameters of a tensor: per-tensor (axis < 0, count 1) or per
 * channel along `axis`.  Arrays are owned by the tensor. */
typedef struct enpu_quant {
    int axis;
    int count;
    float *scale;
    int32_t *zero_point;
} enpu_quant;

enum {
    ENPU_T_INPUT = 1u << 0,  /* graph input */
    ENPU_T_OUTPUT = 1u << 1, /* graph output */
    ENPU_T_CONST = 1u << 2   /* has constant data (initializer or folded Constant) */
};

typedef struct enpu_tensor {
    char *name;
    enpu_dtype dtype;
    int rank;                    /* -1 until shape inference has run */
    int64_t dims[ENPU_MAX_RANK];
    enpu_layout layout;
    enpu_quant *quant;           /* NULL for float tensors */
    void *data;                  /* constant contents in `dtype`, row-major; NULL otherwise */
    int producer;                /* producing node index, -1 for inputs and constants */
    unsigned flags;              /* ENPU_T_* */
} enpu_tensor;

/* Integer parameters of a quantized node, filled by the quantizer.
 * Opaque here so the IR does not depend on the quantizer. */
struct enpu_qnode;

typedef struct enpu_node {
    char *name;
    enpu_op op;
    int n_in, n_out;
    int *in;                 /* tensor indices; -1 = optional input omitted */
    int *out;
    enpu_attr attr;
    bool host;               /* partitioned to run on the host, not the NPU */
    bool dead;               /* removed by a rewrite; dropped by enpu_graph_compact() */
    struct enpu_qnode *q;    /* owned; freed with enpu_qnode_free hook below */
} enpu_node;

typedef struct enpu_graph {
    char *name;
    int opset;
    int requant;             /* quantized graph: the requantizer its integer parameters are
                                for (enpu_requant_mode of numerics.h; 0 = easynpu) */
    enpu_tensor *tensors;
    int n_tensors, cap_tensors;
    enpu_node *nodes;
    int n_nodes, cap_nodes;
    int *inputs;             /* non-constant graph inputs, in ONNX order */
    int n_inputs;
    int *outputs;
    int n_outputs;
    void *name_index;        /* private: tensor name hash */
} enpu_graph;

/* Set by the quantizer so enpu_graph_free can release node->q. */
extern void (*enpu_qnode_free_hook)(struct enpu_qnode *q);

/* --- dtypes and ops ------------------------------------------------------ */

/* Bytes per element, 0 for an unknown dtype. */
size_t enpu_dtype_size(enpu_dtype dt);
/* "float32", "int8", ... ; "dtype(N)" style for unknown values is not
 * returned: unknown gives "unknown". */
const char *enpu_dtype_name(enpu_dtype dt);
/* Element i of row-major data of dtype dt as a double (bool: 0 or 1; 0 for
 * an unknown dtype); 64-bit integers beyond 2^53 round. */
double enpu_dtype_value_at(enpu_dtype dt, const void *data, int64_t i);
/* ONNX op_type spelling of an op. */
const char *enpu_op_name(enpu_op op);
/* Op for an ONNX op_type, ENPU_OP_NONE if we do not know it. */
enpu_op enpu_op_from_onnx(const char *op_type);
/* Op for an enpu_op_name spelling, the ops the quantizer's fusions make
 * (SiLU, no ONNX op) included: what a host op record names.  ENPU_OP_NONE if
 * unknown. */
enpu_op enpu_op_from_name(const char *name);

/* Element count of a shape, checking every dim is in [0, ENPU_MAX_DIM] and the
 * product stays within ENPU_MAX_ELEMS.  `what` names the tensor in the error. */
int enpu_shape_numel(int rank, const int64_t *dims, int64_t *out, const char *what, enpu_err *err);
/* Element count of an inferred tensor (rank >= 0); asserts it was validated. */
int64_t enpu_tensor_numel(const enpu_tensor *t);
size_t enpu_tensor_nbytes(const enpu_tensor *t);
/* "1x3x96x96" into buf; returns buf. */
char *enpu_shape_str(const enpu_tensor *t, char *buf, size_t n);

/* --- building ------------------------------------------------------------ */

enpu_graph *enpu_graph_new(const char *name);
void enpu_graph_free(enpu_graph *g);

/* Adds a tensor (rank -1 if unknown).  Fails on a duplicate name.  Returns the
 * index or a negative status.  dims may point into g (another tensor's
 * dims): they are read before g->tensors moves, which it may. */
int enpu_graph_add_tensor(enpu_graph *g, const char *name, enpu_dtype dt, int rank,
                          const int64_t *dims, enpu_err *err);
/* Index of the tensor named `name`, or -1. */
int enpu_graph_find_tensor(const enpu_graph *g, const char *name);
/* Gives the tensor constant data (takes ownership of `data`, which must hold
 * numel * dtype_size bytes for the tensor's shape). */
void enpu_tensor_set_data(enpu_tensor *t, void *data);
/* Appends a node; in/out are copied.  Output tensors get producer set; a
 * tensor with two producers is an error naming both nodes. */
int enpu_graph_add_node(enpu_graph *g, const char *name, enpu_op op, int n_in, const int *in,
                        int n_out, const int *out, enpu_err *err);
int enpu_graph_add_input(enpu_graph *g, int tensor, enpu_err *err);
int enpu_graph_add_output(enpu_graph *g, int tensor, enpu_err *err);
/* Turns a graph input into a constant holding `data` (ownership taken).  Used
 * to pin shape-like inputs (a Reshape's target given at run time). */
int enpu_graph_freeze_input(enpu_graph *g, int tensor, void *data, enpu_err *err);
/* Sets (replacing) a tensor's quantization: per tensor when count == 1. */
int enpu_tensor_set_quant(enpu_tensor *t, int axis, int count, const float *scale,
                          const int32_t *zp, enpu_err *err);

/* --- analysis ------------------------------------------------------------ */

/* Reorders g->nodes topologically (stable: keeps file order where allowed).
 * A cycle is an ENPU_E_INVALID error naming a node on it. */
int enpu_graph_toposort(enpu_graph *g, enpu_err *err);
/* Infers every node's output shapes in topological order, resolving
 * auto_pad, negative axes and Reshape's 0/-1.  Errors name the node. */
int enpu_graph_infer_shapes(enpu_graph *g, enpu_err *err);
/* Infers the outputs of one node from its inputs' shapes (and constant data
 * where an input is shape-like). */
int enpu_infer_node(enpu_graph *g, int node, enpu_err *err);
/* Checks structure: every node input exists and is produced before use or is a
 * graph input/constant, arity per op, dtypes, shapes compatible, no dangling
 * outputs, constants sized to their shapes.  Errors name the node/tensor. */
int enpu_graph_validate(const enpu_graph *g, enpu_err *err);
/* Drops dead nodes and renumbers producers. */
void enpu_graph_compact(enpu_graph *g);
/* Index of the node consuming tensor t as input, -1 if none; *count gets how
 * many nodes consume it. */
int enpu_graph_consumer(const enpu_graph *g, int t, int *count);

/* A Conv/pool window normalized to 2-D: on a rank-3 (1-D) input H is the
 * trivial axis (kernel, stride, dilation 1, no pads). */
typedef struct enpu_win2d {
    int kh, kw, sh, sw, dh, dw;
    int pt, pl, pb, pr; /* pads: top, left, bottom, right */
} enpu_win2d;

#define ENPU_WIN_LIMIT (1 << 20)

/* Fills *out from a window whose shapes were inferred (auto_pad resolved),
 * for an input of rank 3 or 4 and kernel kh x kw (the caller gives them:
 * Conv takes them from its weights).  Every value must be in 1..ENPU_WIN_LIMIT
 * (pads 0..ENPU_WIN_LIMIT): ENPU_E_INVALID naming the node otherwise.  The one
 * place both executors take window geometry from. */
int enpu_window_2d(const enpu_node *n, const enpu_window *win, int rank, int kh, int kw,
                   enpu_win2d *out, enpu_err *err);

/* Multiply-accumulates of one node, EasyNPU's one definition of MACs
 * (docs/microarch.md "MACs"; enpu_instr_macs is the same per instruction):
 * the reductions over inputs -- Conv out*(Ci/group)*kernel, ConvTranspose
 * in*(Co/group)*kernel, Gemm and MatMul out*K, AveragePool out*kernel,
 * GlobalAveragePool, ReduceMean and ReduceSum numel(in); every other op 0
 * (BatchNormalization, LayerNormalization, activations, Add, Mul, MaxPool,
 * ReduceMax, Resize, data movement: the NPU folds them into requantization
 * or runs them without a multiply-accumulate reduction). */
int64_t enpu_node_macs(const enpu_graph *g, const enpu_node *n);

/* Input `i` of node n as a tensor pointer, NULL if omitted/out of range. */
static inline enpu_tensor *enpu_node_input(const enpu_graph *g, const enpu_node *n, int i) {
    return (i < n->n_in && n->in[i] >= 0) ? &g->tensors[n->in[i]] : NULL;
}
static inline enpu_tensor *enpu_node_output(const enpu_graph *g, const enpu_node *n, int i) {
    return (i < n->n_out && n->out[i] >= 0) ? &g->tensors[n->out[i]] : NULL;
}

#ifdef __cplusplus
}
#endif
#endif
