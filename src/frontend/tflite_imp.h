/* The TFLite importer's shared state (private to src/frontend/tflite_*.c):
 * the schema's field ids, a tensor as read from the file, the importer, an
 * operator being converted, and the helpers the files share.
 *
 *   tflite_import.c  reads the file and walks the subgraph: tensors, operator
 *                    codes, graph inputs and outputs, each operator through
 *                    the table (the public API)
 *   tflite_build.c   builds the IR: TFLite's layout in the IR's, tensors,
 *                    constants, activation parameters, nodes
 *   tflite_ops.c     one converter per TFLite operator, and the table */
#ifndef ENPU_FRONTEND_TFLITE_IMP_H
#define ENPU_FRONTEND_TFLITE_IMP_H

#include "easynpu/quant.h"
#include "easynpu/tflite.h"
#include "frontend/tflite_fb.h"

/* ---- schema: field ids (declaration order; a union takes two) ----------- */
enum { FB_MODEL_VERSION = 0, FB_MODEL_OPCODES = 1, FB_MODEL_SUBGRAPHS = 2, FB_MODEL_BUFFERS = 4 };
enum { FB_OPCODE_DEPRECATED = 0, FB_OPCODE_CUSTOM = 1, FB_OPCODE_BUILTIN = 3 };
enum { FB_SG_TENSORS = 0, FB_SG_INPUTS = 1, FB_SG_OUTPUTS = 2, FB_SG_OPERATORS = 3 };
enum {
    FB_TENSOR_SHAPE = 0, FB_TENSOR_TYPE = 1, FB_TENSOR_BUFFER = 2, FB_TENSOR_NAME = 3,
    FB_TENSOR_QUANT = 4, FB_TENSOR_VARIABLE = 5, FB_TENSOR_SPARSITY = 6
};
enum { FB_Q_SCALE = 2, FB_Q_ZP = 3, FB_Q_DETAILS_TYPE = 4, FB_Q_DIM = 6 };
enum {
    FB_OP_OPCODE = 0, FB_OP_INPUTS = 1, FB_OP_OUTPUTS = 2, FB_OP_OPTIONS_TYPE = 3,
    FB_OP_OPTIONS = 4, FB_OP_CUSTOM = 5, FB_OP_INTERMEDIATES = 8, FB_OP_OPTIONS2_TYPE = 11
};
enum { FB_BUF_DATA = 0, FB_BUF_OFFSET = 1, FB_BUF_SIZE = 2 };

/* TensorType */
enum { TT_FLOAT32 = 0, TT_INT32 = 2, TT_UINT8 = 3, TT_INT64 = 4, TT_INT8 = 9 };
/* BuiltinOperator */
enum {
    OP_ADD = 0, OP_AVERAGE_POOL_2D = 1, OP_CONCATENATION = 2, OP_CONV_2D = 3,
    OP_DEPTHWISE_CONV_2D = 4, OP_DEQUANTIZE = 6, OP_FULLY_CONNECTED = 9, OP_LOGISTIC = 14,
    OP_MAX_POOL_2D = 17, OP_MUL = 18, OP_RESHAPE = 22, OP_SOFTMAX = 25, OP_TANH = 28,
    OP_PAD = 34, OP_MEAN = 40, OP_SQUEEZE = 43, OP_PADV2 = 60, OP_QUANTIZE = 114,
    OP_HARD_SWISH = 117
};
/* BuiltinOptions union types */
enum {
    OPT_CONV = 1, OPT_DWCONV = 2, OPT_POOL = 5, OPT_FC = 8, OPT_SOFTMAX = 9, OPT_CONCAT = 10,
    OPT_ADD = 11, OPT_RESHAPE = 17, OPT_MUL = 21, OPT_PAD = 22, OPT_REDUCER = 27,
    OPT_SQUEEZE = 30, OPT_PADV2 = 42
};

#define MAX_OPCODES 10000
#define MAX_OP_IO 64

/* One TFLite tensor as read from the file. */
typedef struct tt {
    const char *name;
    int type;
    int rank;
    int64_t dims[ENPU_MAX_RANK];      /* TFLite order */
    uint32_t buffer;
    bool has_q;
    fb_vec scale, zp;
    int qdim;
    int ir;                           /* IR tensor, -1 until needed */
    int producer;                     /* TFLite operator, -1 */
    bool graph_in;                    /* a graph input (after QUANTIZE replacement) */
} tt;

typedef struct imp {
    fb_buf b;
    enpu_err *err;
    const char *file;
    enpu_graph *g;
    tt *t;
    uint32_t nt;
    fb_vec buffers;
    int32_t *codes;
    uint32_t n_codes;
    int cur;                          /* operator being imported */
    const char *cur_name;
    uint64_t const_bytes, const_limit;
    bool inputs_done;                 /* graph_io: inputs marked, now add them */
    char where[96];                   /* "op 3 (CONV_2D)" */
    char nname[64];
} imp;

#define FAIL(code, ...) enpu_fail(im->err, code, __VA_ARGS__)

/* An operator being converted: its code, operands and options. */
typedef struct opctx {
    int code;
    int n_in, n_out;
    int32_t in[MAX_OP_IO], out[MAX_OP_IO];
    fb_table opt;
    bool has_opt;
    int opt_type;
} opctx;

/* One operator the importer converts: its TFLite code and name, and the
 * converter (arg: which variant, e.g. depthwise or the host op). */
typedef struct tfl_op {
    int code;
    const char *name;
    int (*fn)(imp *im, const opctx *o, int arg);
    int arg;
} tfl_op;

/* The table's entry for a BuiltinOperator code, NULL when not converted. */
const tfl_op *tfl_op_find(int code);

void tfl_qnode_hook(struct enpu_qnode *q);
int tfl_opfail(imp *im, enpu_status code, const char *why);
/* IR axis of TFLite axis a of a rank-r tensor (channel-last -> channel-first). */
int tfl_ir_axis(int a, int r);
void tfl_ir_dims(int r, const int64_t *tfl, int64_t *ir);
/* A new IR tensor with IR dims. */
int tfl_new_tensor(imp *im, const char *base, enpu_dtype dt, int rank, const int64_t *dims,
                   int *out);
/* Tensor index k of the operator's input list, checked. */
int tfl_tensor_ref(imp *im, int32_t k, const char *role, tt **out);
/* Per-tensor int8 parameters of an activation. */
int tfl_act_params(imp *im, const tt *x, const char *role, float *s, int32_t *z);
/* Whether x has constant data (a buffer with bytes: TFLite's rule). */
int tfl_has_data(imp *im, const tt *x, bool *yes);
/* The IR tensor of an int8 activation (created on first use, IR dims). */
int tfl_act_ir(imp *im, tt *x, const char *role, int *ir);
/* The bytes of constant tensor x: exactly numel * esize, counted against
 * the amplification limit (each buffer may be read by several operators). */
int tfl_const_data(imp *im, const tt *x, size_t esize, const char *role, const uint8_t **out);
int32_t tfl_rd_i32(const uint8_t *p);
/* An IR constant of dtype dt, IR dims, holding a copy of bytes. */
int tfl_new_const(imp *im, const char *base, enpu_dtype dt, int rank, const int64_t *dims,
                  const void *bytes, size_t n, int *out);
/* Adds node `op` with q (ownership taken, also on failure). */
int tfl_add_node(imp *im, const char *suffix, enpu_op op, int n_in, const int *in, int out,
                 enpu_qnode *q, const enpu_attr *attr);
enpu_qnode *tfl_qnode(imp *im, enpu_qkind kind);
/* y (IR tensor with IR dims of TFLite dims yd, rank yr) = TFLite's row-major
 * reshape of x (IR tensor, TFLite dims xd, rank xr).  Transposes are added
 * where the two orders differ.  y_given: the output tensor, or -1 for new. */
int tfl_reshape_tfl(imp *im, int x, int xr, const int64_t *xd, int yr, const int64_t *yd,
                    int y_given, int *y);

#endif
