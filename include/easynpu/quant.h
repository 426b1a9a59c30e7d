/* Post-training int8 quantization and the golden int8 reference.
 *
 * The quantizer turns an imported float graph into the int8 graph the NPU
 * executes: the same IR (ir.h), after rewrites (constant folding, BN folded
 * into the preceding conv/FC, bias Adds folded, Relu/Clip folded into the
 * producer's clamp, MatMul+Add as FC, average pooling as a depthwise conv with
 * integer weights), with every activation tensor int8 and carrying per-tensor
 * (scale, zero point), and every NPU node carrying an `enpu_qnode` that holds
 * the integer parameters of exactly one requantization.
 *
 * The golden reference executes that graph with integer arithmetic only,
 * using numerics.h; it DEFINES what the NPU computes, bit for bit.  The
 * compiler fuses adjacent quantized nodes into one instruction (conv + table
 * activation, conv + tensor add, ...) but every fused stage still computes
 * exactly the node below, so fusion never changes a bit.
 *
 * Per-kind semantics (x = int8 input values as stored, no zero point
 * subtracted unless stated; rq(acc, c) = enpu_requant(acc, M[c], S[c],
 * zp_out, lo, hi); every accumulation is exact: the quantizer proves with
 * enpu_acc_range that it fits acc_bits, so summation order never matters):
 *
 *   CONV   y[c,p] = rq(bias[c] + sum_{k} x[k] * w[c,k], c)
 *          over the window (padding positions read zp_in[0], so the zero
 *          point correction -zp_in*sum(w) folded into bias is exact).  Covers
 *          conv, group and depthwise conv, FC (Gemm: a conv whose kernel
 *          covers the whole input; MatMul with a constant B becomes a Gemm),
 *          average pooling (weights 1, 1/N in M), standalone
 *          BatchNormalization (depthwise 1x1), a standalone Relu/Clip
 *          (depthwise 1x1, weight 1, clamp in lo/hi) and a requantizing copy
 *          (ENPU_QO_RESCALE, depthwise 1x1, weight 1).  The window, groups
 *          and channel counts of every one of them are given by
 *          enpu_qconv_geom_of() below.  w is [Co][Ci/group][kh][kw] (FC: [Co][K],
 *          K in the flattened input's ONNX order).  n_ch = Co.
 *   MAXPOOL y = clamp(max over window of x, lo, hi); scale and zero point
 *          of output equal the input's; padding never wins (positions outside
 *          the input are skipped; a window with no input position, possible
 *          only at a ceil-mode edge, gives zp_in[0] — the float reference's
 *          0).  n_ch = 0.
 *   ADD    acc = (x0 - zp_in[0]) * A[0] + (x1 - zp_in[1]) * A[1];
 *          y = enpu_requant(acc, 1, S[0], zp_out, lo, hi) (A[i] unsigned,
 *          < 2^mult_bits, A[i]/2^S = s_i/s_out; M[0] is stored as 1; the
 *          quantizer takes the largest S for which both A[i] fit mult_bits
 *          and acc fits acc_bits, so the ratio is exact to ~2^-19): the PE
 *          scales each operand with the requantizer's mult_bits-wide
 *          multiplier (docs/microarch.md), so the sum is correctly rounded.
 *          Inputs broadcast per numpy.  n_ch = 1.  (Sub of a constant is an
 *          ADD of the negated constant; a constant operand is an int8
 *          constant tensor with its own per-tensor scale and zero point.)
 *   MUL    acc = (x0 - zp_in[0]) * (x1 - zp_in[1]); y = rq(acc, 0).  Inputs
 *          broadcast per numpy.  n_ch = 1.
 *   TABLE  y = enpu_pwl_eval(table, x)   (piecewise-linear activation:
 *          Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, PRelu with one
 *          slope, SiLU).  n_ch = 0 (M, S, zp_out, lo, hi live in the table;
 *          table->zp_out == zp_out).
 *   MOVE   data movement on int8 values (Reshape, Flatten, Squeeze,
 *          Unsqueeze, Transpose, Concat, Pad, Identity, Dropout): output
 *          scale/zp equal the input's (every Concat input has the output's
 *          parameters: the quantizer forces them or inserts a RESCALE node);
 *          Pad (constant 0 only) fills with zp_out.  n_ch = 0.
 *   HOST   runs on the host in float: inputs dequantized, the float op of
 *          ir.h applied (enpu_fref_node), output quantized (enpu_quantize)
 *          if the output tensor is int8 or left float32 (when every consumer
 *          is a HOST node or none, e.g. a final Softmax).  n_ch = 0.
 *
 * Tensors of a quantized graph: activations are int8 with per-tensor
 * (scale, zero point), except HOST outputs left float32; Conv/Gemm nodes keep
 * their int8 weights (input 1, per-channel scale along axis 0, zero point 0)
 * and int32 bias (input 2, zero-point correction included) as constant
 * tensors holding exactly q->w and q->bias; other constant inputs (Reshape's
 * shape, BN's float parameters, a HOST op's float operands) are copied from
 * the float graph and are not used by NPU kinds.
 */
#ifndef EASYNPU_QUANT_H
#define EASYNPU_QUANT_H

#include <stdio.h>

#include "easynpu/arch.h"
#include "easynpu/ir.h"
#include "easynpu/numerics.h"
#include "easynpu/pwl.h"
#include "easynpu/tensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum enpu_qkind {
    ENPU_Q_CONV = 1,
    ENPU_Q_MAXPOOL,
    ENPU_Q_ADD,
    ENPU_Q_MUL,
    ENPU_Q_TABLE,
    ENPU_Q_MOVE,
    ENPU_Q_HOST
} enpu_qkind;

/* What a CONV node came from: the compiler chooses opcodes by it. */
typedef enum enpu_qorigin {
    ENPU_QO_CONV = 0,  /* Conv (incl. group/depthwise) */
    ENPU_QO_FC,        /* Gemm / MatMul */
    ENPU_QO_AVGPOOL,   /* AveragePool / GlobalAveragePool */
    ENPU_QO_BN,        /* standalone BatchNormalization */
    ENPU_QO_RELU,      /* standalone Relu/Clip with nothing to fold into */
    ENPU_QO_RESCALE    /* requantizing copy (an Identity node the quantizer
                          inserts before a Concat input whose parameters differ) */
} enpu_qorigin;

typedef struct enpu_qnode {
    enpu_qkind kind;
    enpu_qorigin origin;
    int n_ch;             /* requantization channels: Co for CONV, 1 for ADD/MUL, else 0 */
    int8_t *w;            /* CONV weights, n_w values, layout above (NULL in a 16-bit graph) */
    int16_t *w16;         /* CONV weights of a 16-bit graph (docs/numerics.md §12), else NULL */
    int64_t n_w;
    int32_t *bias;        /* CONV: [n_ch], zero-point correction included; else NULL */
    uint32_t *M;          /* [n_ch] (NULL when n_ch == 0) */
    int8_t *S;            /* [n_ch] */
    uint32_t A[2];        /* ADD input multipliers */
    int8_t SA[2];         /* ADD, requant tflite: the shift S of each A[i] (0 otherwise) */
    int32_t zp_in[2];     /* zero points of activation inputs 0 and 1 */
    int32_t zp_out;
    int32_t lo, hi;       /* output clamp (fused Relu/Clip, default -128..127) */
    enpu_pwl_table *table;
    char *fused;          /* names of the float nodes folded in, "+"-joined, or NULL */
    char *why;            /* HOST: the quantizer's reason, for the compile report (not
                             kept in a .qjson), or NULL */
} enpu_qnode;

void enpu_qnode_free(enpu_qnode *q);

/* "conv", "fc", "maxpool", "add", "table", "move", "host", ... for people and
 * for .qjson. */
const char *enpu_qkind_name(enpu_qkind k);
const char *enpu_qorigin_name(enpu_qorigin o);

/* Geometry of a CONV-kind node, whatever its op (Conv, Gemm, AveragePool,
 * GlobalAveragePool, BatchNormalization, Relu, Clip, Identity): input
 * [n][ci][h][w], output [n][co][oh][ow], window, groups.  1-D tensors
 * ([n][c][w]) have h = oh = kh = 1; FC has ci = K, h = w = kh = kw = 1 and
 * co = N; a depthwise 1x1 node (BN, Relu, rescale) on a tensor of rank r has
 * ci = co = dims[1] (1 for r < 2), h = dims[2] for r == 4 (else 1), w = the
 * product of the remaining dims.  k = (ci/group)*kh*kw weights per output
 * channel. ENPU_E_INVALID naming the node when the shapes do not agree. */
typedef struct enpu_qconv_geom {
    int64_t n, ci, h, w;
    int64_t co, oh, ow;
    int kh, kw, sh, sw, dh, dw;
    int pt, pl, pb, pr;  /* pads: top, left, bottom, right */
    int group;
    int64_t k;
} enpu_qconv_geom;

int enpu_qconv_geom_of(const enpu_graph *qg, const enpu_node *n, enpu_qconv_geom *geo,
                       enpu_err *err);

/* Checks everything the golden reference relies on in a quantized graph:
 * structure (enpu_graph_validate), a q block on every node whose kind fits
 * its op, int8 activations with per-tensor parameters (float32 only for HOST
 * outputs read by HOST nodes or nobody), zero points and clamps in int8,
 * array sizes (weights = co * k, n_ch), M < 2^31, S in 0..63, tables
 * (enpu_pwl_validate), MOVE/MAXPOOL outputs with their input's parameters,
 * shapes consistent with each op, and every CONV/ADD/MUL accumulator inside
 * 32 bits.  Errors name the node and field. */
int enpu_qgraph_check(const enpu_graph *qg, enpu_err *err);

typedef enum enpu_calib_method {
    ENPU_CALIB_MINMAX = 0,
    ENPU_CALIB_PERCENTILE
} enpu_calib_method;

/* The instruction limits of the target's window ops (enpu_quant_opts). */
typedef struct enpu_npu_max {
    int64_t kernel, stride, dilation, pad, dim;
} enpu_npu_max;

typedef struct enpu_quant_opts {
    enpu_calib_method method;
    double percentile;     /* e.g. 99.99, for ENPU_CALIB_PERCENTILE */
    int mult_bits;         /* architecture's multiplier width (20) */
    int acc_bits;          /* architecture's accumulator width (32) */
    int act_segments;      /* PWL segments (16) */
    bool quiet;            /* no warning on stderr (the report still says it) */
    /* 16-bit data (docs/numerics.md §12): bits 16 quantizes activations and
     * weights to int16 (symmetric; the host runs add, mul, table and
     * maxpool), pow2 gives them power-of-two scales (the note's Q-format),
     * wide_acc_bits is the accumulator the 16-bit proofs use. */
    int bits;              /* 8 (default) or 16 */
    bool pow2;
    int wide_acc_bits;     /* 64 */
    /* Kinds the target engine has no kernel for (bit 1 << enpu_qkind): such
     * nodes become HOST, so the golden reference computes them as the host
     * will (the row-stationary engine runs CONV and MOVE only). */
    unsigned host_kinds;
    /* The largest kernel, stride, dilation, pad and tensor dimension the
     * target's instructions hold (0: no limit): a window op beyond them
     * becomes HOST, computed in float by the host as the golden reference
     * then does too (enpu_compile_quant_opts sets them from the ISA). */
    enpu_npu_max npu_max;
} enpu_quant_opts;

/* 8 or 16: the activation width of a quantized graph (its inputs' dtype). */
int enpu_qgraph_bits(const enpu_graph *qg);

void enpu_quant_opts_default(enpu_quant_opts *o);
/* The defaults with the numerics of architecture a (its multiplier and
 * accumulator widths and activation-table segments), as every command
 * quantizes for the arch it compiles for. */
void enpu_quant_opts_for_arch(enpu_quant_opts *o, const enpu_arch *a);

/* The calibration fallback when no data is given (docs/quantization.md):
 * ENPU_CALIB_FALLBACK_SAMPLES inputs of independent N(0, 1) values from a
 * fixed seed, so the result is reproducible. */
#define ENPU_CALIB_FALLBACK_SAMPLES 8
#define ENPU_CALIB_FALLBACK_SEED 0x5EED5EEDu
/* Most calibration/test files loaded at once. */
#define ENPU_CALIB_MAX_FILES 10000

/* Per-layer figures of the quantization report. */
typedef struct enpu_qlayer {
    char *name;           /* quantized node name */
    const char *kind;     /* enpu_qkind_name of the node */
    const char *op;       /* CONV: origin ("conv", "dwconv", "fc", "avgpool", "bn", "relu",
                             "rescale"); others: the ONNX op ("Sigmoid", "Reshape", ...) */
    float in_scale, out_scale;
    int32_t in_zp, out_zp;
    double sqnr_db;       /* of the layer's output vs the float reference, over the set
                             (INFINITY when equal, NAN when not comparable) */
    double table_err_lsb; /* TABLE: worst-case error over all 256 inputs, else 0 */
    double max_abs_err;   /* largest |dequantized - float| of the output, over the set */
    bool host;            /* runs on the host */
    bool out_float;       /* output left float32 (HOST) */
    int64_t acc_lo, acc_hi; /* CONV/ADD/MUL: proven accumulator range (union over channels) */
    int64_t macs;         /* enpu_node_macs */
    char *note;           /* why a node is HOST, bias scale raised, ...; or NULL */
} enpu_qlayer;

typedef struct enpu_qreport {
    int n_layers;
    enpu_qlayer *layers;
    int64_t total_macs;     /* sum of the layers' (enpu_node_macs) */
    int n_samples;
    double max_abs_err;     /* end to end, dequantized output vs float */
    double top1_agree;      /* fraction of samples whose top-1 agrees (a tie never does);
                               NAN when the first output is not a class vector */
    double out_sqnr_db;     /* end to end SQNR of the (first) output */
    bool calib_fallback;    /* no calibration data was given */
    /* Settings and where the figures come from. */
    enpu_calib_method method;
    double percentile;
    int acc_bits, mult_bits, act_segments;
    int bits;               /* 8, or 16 (docs/numerics.md §12: then acc_bits is the wide one) */
    bool pow2;              /* 16-bit power-of-two (Q-format) scales */
    int n_calib;            /* calibration samples used */
    bool on_test_set;       /* end-to-end and SQNR figures over --test inputs */
    int n_host;             /* HOST nodes */
    int n_notes;            /* graph-level notes (rewrites done, ...) */
    char **notes;
} enpu_qreport;

void enpu_qreport_free(enpu_qreport *r);

/* Loads calibration inputs: `spec` is read as enpu_dataset_load reads it
 * (folders, files, stacked arrays, .npz), at most ENPU_CALIB_MAX_FILES sets;
 * every value is converted to float32.  *out is an array of n_samples *
 * g->n_inputs buffers (free with enpu_calib_free).  Errors name the file. */
int enpu_calib_load(const enpu_graph *g, const char *spec, enpu_buf **out, int *n_samples,
                    enpu_err *err);
/* Appends the samples of another spec to an array from enpu_calib_load. */
int enpu_calib_append(const enpu_graph *g, const char *spec, enpu_buf **bufs, int *n_samples,
                      enpu_err *err);
void enpu_calib_free(enpu_buf *bufs, int n_bufs);

/* A data set: named input sets, as `easynpu eval --data` reads them. */
#define ENPU_DATASET_MAX_SAMPLES (1 << 20)
typedef struct enpu_dataset {
    int n_samples;
    int n_inputs;
    enpu_buf *bufs;   /* n_samples * n_inputs float32 buffers, in the graph inputs' shapes */
    char **names;     /* per sample: its file, "file[i]" for the i-th of a stacked array,
                         "file.npz:member" (and "[i]") for an .npz member */
    bool truncated;   /* the limit left input sets out */
} enpu_dataset;

/* Loads the input sets of `spec` for graph g (float or quantized: only its
 * inputs are read), in order: a comma-separated list of files and folders,
 * a folder giving its .npy/.npz/.pb files sorted by name (only input_* ones
 * when some are so named) or, when it has none, those of its subfolders (a
 * model folder of ONNX test_data_set_N).  Every array (a file, or each
 * member of an .npz) is either one graph input (its shape, leading 1-dims
 * aside) or a stack [N, ...] of N of them; for a graph with several inputs,
 * consecutive arrays are taken one per input (stacks of the same N).
 * limit > 0 keeps the first `limit` sets.  Errors name the file.  Free with
 * enpu_dataset_free (also after a failure). */
int enpu_dataset_load(const enpu_graph *g, const char *spec, int limit, enpu_dataset *ds,
                      enpu_err *err);
void enpu_dataset_free(enpu_dataset *ds);

/* The fallback inputs (see ENPU_CALIB_FALLBACK_*), n_samples * n_inputs. */
int enpu_calib_synthetic(const enpu_graph *g, int n_samples, uint32_t seed, enpu_buf **out,
                         enpu_err *err);

/* Quantizes float graph `g` into a new graph *out using `n_samples` sets of
 * inputs (NULL/0: the documented fallback — synthetic inputs, warning
 * printed).  Fills *report when non-NULL (figures over the calibration
 * set).  A layer whose accumulator cannot be proven to fit opts->acc_bits is
 * ENPU_E_NOFIT naming it. */
int enpu_quantize_graph(const enpu_graph *g, const enpu_buf *calib, int n_samples,
                        const enpu_quant_opts *opts, enpu_graph **out, enpu_qreport *report,
                        enpu_err *err);

/* Quantization report --------------------------------------------------- */

/* Whether an output of this shape is a class vector, the scores of N >= 2
 * classes: rank 1 [N] or rank 2 [1, N].  Top-k and top-1 agreement are
 * reported for those only (docs/quantization.md "Accuracy"): an image, a
 * sequence or a feature map is compared by SQNR and max error alone. */
bool enpu_is_class_vector(int rank, const int64_t *dims);
/* Index of the largest of v[0..n) (the first of equals); *n_top (may be
 * NULL) gets how many elements share that value: more than one is a tie,
 * which never counts as top-1 agreement. */
int64_t enpu_top1(const float *v, int64_t n, int64_t *n_top);

/* (Re)computes the per-layer SQNR/max error and the end-to-end figures of r
 * for quantized graph qg against float graph g over `n_samples` input sets
 * (each tensor of qg is compared with the tensor of the same name in g).  If
 * r has no layers yet they are created from qg.  on_test_set is left as is. */
int enpu_qreport_eval(const enpu_graph *g, const enpu_graph *qg, const enpu_buf *inputs,
                      int n_samples, enpu_qreport *r, enpu_err *err);
/* The report as a table (one line per layer) and a summary. */
void enpu_qreport_print(FILE *f, const enpu_qreport *r);
/* The report as JSON (atomic write). */
int enpu_qreport_save_json(const char *path, const enpu_qreport *r, enpu_err *err);

/* Golden int8 reference. ------------------------------------------------- */

typedef struct enpu_gexec enpu_gexec;

/* Checks qg (enpu_qgraph_check) and prepares buffers for every tensor.  qg
 * must outlive the executor. */
int enpu_gexec_new(const enpu_graph *qg, enpu_gexec **out, enpu_err *err);
void enpu_gexec_free(enpu_gexec *ex);
/* Runs on float inputs (quantized with the graph inputs' parameters), one
 * buffer per graph input, any numeric dtype, shapes equal to the inputs'. */
int enpu_gexec_run(enpu_gexec *ex, const enpu_buf *inputs, enpu_err *err);
/* Runs on int8 inputs as stored (one array per graph input, its numel). */
int enpu_gexec_run_i8(enpu_gexec *ex, const int8_t *const *inputs, enpu_err *err);
/* int8 value of tensor t after a run (NULL for float tensors / not computed).
 * Constant int8 tensors (weights) are returned too. */
const int8_t *enpu_gexec_value_i8(const enpu_gexec *ex, int t);
/* The same for an int16 tensor of a 16-bit graph (NULL otherwise). */
const int16_t *enpu_gexec_value_i16(const enpu_gexec *ex, int t);
/* Float view of tensor t: dequantized int8, or the float value of a host op. */
int enpu_gexec_value_f32(const enpu_gexec *ex, int t, float *dst, enpu_err *err);
/* Graph output i as float32 (dequantized if int8). */
int enpu_gexec_output(const enpu_gexec *ex, int i, enpu_buf *out, enpu_err *err);

/* Host nodes of a graph with requant tflite: TFLite's integer kernels
 * (numerics.h) instead of the float reference.  enpu_tfl_kernel_of gives the
 * kernel of an op (Softmax, Sigmoid = LOGISTIC, Tanh, HardSwish) or -1.
 * enpu_tfl_host_run prepares it from the tensors' parameters and runs it on
 * x (an int8 tensor of `rank` dims, y the same shape); softmax normalizes
 * along `axis`.  Errors name `what`: ENPU_E_UNSUPPORTED for an op without
 * a TFLite integer kernel or parameters TFLite refuses. */
int enpu_tfl_kernel_of(enpu_op op);
int enpu_tfl_host_run(enpu_op op, int axis, int rank, const int64_t *dims, const int8_t *x,
                      float s_in, int32_t zp_in, int8_t *y, float s_out, int32_t zp_out,
                      const char *what, enpu_err *err);

/* Which kernels the executor runs.  The reference loops compute each output
 * element by itself, exactly as the semantics above are written; they define
 * the numerics.  The fast kernels (src/ref/gfast.h: packed layouts, int16
 * multiply-adds into int32, lookup tables, SIMD where the CPU has it) produce
 * the same int8 values bit for bit: the accumulators are exact (the graph
 * check proves every partial sum fits 32 bits, so the order of the sums does
 * not matter) and every output goes through the same requantization (the
 * graph's requant mode, as in the reference loops).  Nodes with no fast
 * kernel (MOVE, HOST, broadcasting ADD/MUL) run the reference loops either
 * way. */
typedef enum enpu_gexec_kernels {
    ENPU_GK_FAST = 0,   /* default: fast kernels, the best instruction set this CPU has */
    ENPU_GK_PORTABLE,   /* fast kernels in plain C (what a CPU without SIMD runs) */
    ENPU_GK_REFERENCE,  /* the reference loops */
    ENPU_GK_AVX2,       /* fast kernels, x86 AVX2 */
    ENPU_GK_VNNI256,    /* fast kernels, x86 vpdpwssd: int16 pairs on 256-bit registers
                           (needs AVX-512 VNNI and VL; not the 512-bit int8 vpdpbusd) */
    ENPU_GK_COUNT
} enpu_gexec_kernels;

/* Switches ex to kernels k (preparing packed weights and tables for the fast
 * ones; values of the previous run are kept).  ENPU_E_USAGE for an unknown
 * k and ENPU_E_UNSUPPORTED for an instruction set this CPU lacks (nothing
 * changes); ENPU_E_NOMEM (ex then runs the reference loops). */
int enpu_gexec_set_kernels(enpu_gexec *ex, enpu_gexec_kernels k, enpu_err *err);
/* "reference", "portable", or the instruction set of the fast kernels
 * ("avx2", "vnni256"). */
const char *enpu_gexec_kernels_name(const enpu_gexec *ex);
/* The name of kernels k ("fast", "portable", "reference", "avx2",
 * "vnni256"), NULL for an unknown k; enpu_gexec_kernels_parse gives k for
 * a name (also "avx512vnni", the old name of vnni256), -1 if unknown. */
const char *enpu_gexec_kernels_label(enpu_gexec_kernels k);
int enpu_gexec_kernels_parse(const char *name);

/* Runs checked graph qg on the same float inputs (as enpu_gexec_run) with
 * kernels a and with kernels b and compares every tensor element by element
 * (int8 values, and the float outputs of host nodes bit for bit): 0 when all
 * are equal; ENPU_E_MISMATCH naming the first node (in execution order) whose
 * output differs, the element index and both values.  The random-graph
 * fuzzer's entry point for fast-vs-reference. */
int enpu_gexec_compare_kernels(const enpu_graph *qg, const enpu_buf *inputs, enpu_gexec_kernels a,
                               enpu_gexec_kernels b, enpu_err *err);

/* Saving and loading a quantized graph (.qjson: JSON with base64 data,
 * docs/quantization.md §7).  The loader checks every field (types, sizes,
 * ranges, names) and then the whole graph (enpu_qgraph_check); errors name
 * the file and the field, e.g. "m.qjson: nodes[3] 'conv1': q.S[2]: 70 is
 * outside 0..63". */
#define ENPU_MAX_QJSON_BYTES ((size_t)1 << 30)
int enpu_qgraph_save(const char *path, const enpu_graph *qg, enpu_err *err);
int enpu_qgraph_load(const char *path, enpu_graph **out, enpu_err *err);
/* Same, on memory (the fuzzers' entry point); `what` names the source. */
int enpu_qgraph_parse(const char *text, size_t n, const char *what, enpu_graph **out,
                      enpu_err *err);

/* The op a quantized node computes, for people: CONV by origin ("conv",
 * "dwconv", "gconv", "fc", "avgpool", "bn", "relu", "rescale"), "maxpool",
 * "add", "mul", else the ONNX op ("Sigmoid", "Reshape", ...). */
const char *enpu_q_layer_op(const enpu_graph *qg, const enpu_node *n);
/* The float graph's tensor holding what quantized tensor qt approximates:
 * the one of the same name (for a RESCALE node's output, its input's name),
 * if float32 with as many elements; else -1. */
int enpu_q_float_twin(const enpu_graph *g, const enpu_graph *qg, int qt);

#ifdef __cplusplus
}
#endif
#endif
