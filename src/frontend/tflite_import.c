/* TFLite importer (easynpu/tflite.h): the first subgraph of an int8 .tflite
 * model into a quantized graph with requant "tflite", every integer
 * parameter prepared exactly as TFLite Micro prepares it (numerics.h).
 * This file reads the file and walks the subgraph; tflite_build.c builds
 * the IR, tflite_ops.c converts each operator (tflite_imp.h).  Schema field
 * numbers (TFLite's schema.fbs, version 3) are tflite_imp.h's FB_* names;
 * docs/tflite.md lists them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/file.h"
#include "frontend/tflite_imp.h"

/* ---- reading the file ---------------------------------------------------------- */

static int read_tensor(imp *im, const fb_vec *tv, uint32_t i) {
    char path[64];
    snprintf(path, sizeof path, "subgraphs[0].tensors[%u]", i);
    fb_table t, q;
    bool present;
    tt *x = &im->t[i];
    memset(x, 0, sizeof *x);
    x->ir = -1;
    x->producer = -1;
    int rc = fb_vec_table(&im->b, tv, i, path, &t);
    uint32_t len;
    if (!rc) rc = fb_string_field(&im->b, &t, FB_TENSOR_NAME, path, &x->name, &len);
    if (rc) return rc;
    uint8_t type, var;
    fb_vec shape;
    fb_table sp;
    if ((rc = fb_u8(&im->b, &t, FB_TENSOR_TYPE, 0, path, &type)) ||
        (rc = fb_u32(&im->b, &t, FB_TENSOR_BUFFER, 0, path, &x->buffer)) ||
        (rc = fb_u8(&im->b, &t, FB_TENSOR_VARIABLE, 0, path, &var)) ||
        (rc = fb_vec_field(&im->b, &t, FB_TENSOR_SHAPE, 4, path, &shape, &present)) ||
        (rc = fb_table_field(&im->b, &t, FB_TENSOR_SPARSITY, path, &sp, &present)))
        return rc;
    x->type = type;
    if (present)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': sparse tensors are not supported",
                    im->file, i, x->name);
    if (var)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': variable tensors are not supported",
                    im->file, i, x->name);
    if (shape.len > ENPU_MAX_RANK)
        return FAIL(ENPU_E_LIMIT, "%s: tensor %u '%s': rank %u is over the limit of %d", im->file,
                    i, x->name, shape.len, ENPU_MAX_RANK);
    x->rank = (int)shape.len;
    for (int d = 0; d < x->rank; d++) {
        x->dims[d] = fb_vec_i32(&im->b, &shape, (uint32_t)d);
        if (x->dims[d] < 0)
            return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': dimension %d is %lld (dynamic "
                        "shapes are not supported)", im->file, i, x->name, d,
                        (long long)x->dims[d]);
    }
    if ((rc = enpu_shape_numel(x->rank, x->dims, NULL, x->name, im->err)))
        return enpu_err_prefix(im->err, "%s: tensor %u", im->file, i);
    if ((rc = fb_table_field(&im->b, &t, FB_TENSOR_QUANT, path, &q, &present))) return rc;
    if (!present) return 0;
    bool ps, pz;
    uint8_t details;
    int32_t qdim;
    if ((rc = fb_vec_field(&im->b, &q, FB_Q_SCALE, 4, path, &x->scale, &ps)) ||
        (rc = fb_vec_field(&im->b, &q, FB_Q_ZP, 8, path, &x->zp, &pz)) ||
        (rc = fb_u8(&im->b, &q, FB_Q_DETAILS_TYPE, 0, path, &details)) ||
        (rc = fb_i32(&im->b, &q, FB_Q_DIM, 0, path, &qdim)))
        return rc;
    if (details)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: tensor %u '%s': custom quantization details are not "
                    "supported", im->file, i, x->name);
    if (x->scale.len == 0) return 0; /* no quantization parameters */
    if (x->zp.len != x->scale.len)
        return FAIL(ENPU_E_INVALID, "%s: tensor %u '%s': %u scales but %u zero points", im->file,
                    i, x->name, x->scale.len, x->zp.len);
    x->has_q = true;
    x->qdim = qdim;
    return 0;
}

static int read_opcodes(imp *im, const fb_table *model) {
    fb_vec v;
    bool present;
    int rc = fb_vec_field(&im->b, model, FB_MODEL_OPCODES, 4, "operator_codes", &v, &present);
    if (rc) return rc;
    if (v.len > MAX_OPCODES)
        return FAIL(ENPU_E_LIMIT, "%s: %u operator codes, over the limit of %d", im->file, v.len,
                    MAX_OPCODES);
    im->codes = calloc(v.len ? v.len : 1, sizeof *im->codes);
    if (!im->codes) return FAIL(ENPU_E_NOMEM, "out of memory");
    im->n_codes = v.len;
    for (uint32_t i = 0; i < v.len; i++) {
        char path[48];
        snprintf(path, sizeof path, "operator_codes[%u]", i);
        fb_table c;
        uint8_t dep;
        int32_t code;
        const char *custom;
        uint32_t len;
        if ((rc = fb_vec_table(&im->b, &v, i, path, &c)) ||
            (rc = fb_u8(&im->b, &c, FB_OPCODE_DEPRECATED, 0, path, &dep)) ||
            (rc = fb_i32(&im->b, &c, FB_OPCODE_BUILTIN, 0, path, &code)) ||
            (rc = fb_string_field(&im->b, &c, FB_OPCODE_CUSTOM, path, &custom, &len)))
            return rc;
        /* the builtin code is the larger of the two fields (schema 3a) */
        int32_t d = (int8_t)dep;
        im->codes[i] = code > d ? code : d;
        if (len) im->codes[i] = -1 - (int32_t)i; /* custom: remembered as negative */
    }
    return 0;
}

static int read_op_io(imp *im, const fb_table *t, unsigned id, const char *what, int32_t *dst, int *n) {
    fb_vec v;
    bool present;
    int rc = fb_vec_field(&im->b, t, id, 4, im->where, &v, &present);
    if (rc) return rc;
    if (v.len > MAX_OP_IO)
        return FAIL(ENPU_E_LIMIT, "%s: %s: %u %s, over the limit of %d", im->file, im->where,
                    v.len, what, MAX_OP_IO);
    *n = (int)v.len;
    for (uint32_t i = 0; i < v.len; i++) dst[i] = fb_vec_i32(&im->b, &v, i);
    return 0;
}

static int import_op(imp *im, const fb_vec *ops, uint32_t k) {
    fb_table t;
    opctx o;
    memset(&o, 0, sizeof o);
    snprintf(im->where, sizeof im->where, "op %u", k);
    int rc = fb_vec_table(&im->b, ops, k, im->where, &t);
    uint32_t opcode;
    if (rc || (rc = fb_u32(&im->b, &t, FB_OP_OPCODE, 0, im->where, &opcode))) return rc;
    if (opcode >= im->n_codes)
        return FAIL(ENPU_E_INVALID, "%s: op %u: opcode index %u (the model has %u operator codes)",
                    im->file, k, opcode, im->n_codes);
    o.code = im->codes[opcode];
    if (o.code < 0)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: op %u: custom operators are not supported", im->file, k);
    const tfl_op *op = tfl_op_find(o.code);
    if (!op)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: op %u: builtin operator %d is not supported (docs/"
                    "tflite.md lists the supported ones)", im->file, k, (int)o.code);
    snprintf(im->where, sizeof im->where, "op %u (%s)", k, op->name);
    snprintf(im->nname, sizeof im->nname, "op%u_%s", k, op->name);
    for (char *c = im->nname; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    uint8_t ot, ot2;
    fb_vec cust;
    bool pc;
    if ((rc = read_op_io(im, &t, FB_OP_INPUTS, "inputs", o.in, &o.n_in)) ||
        (rc = read_op_io(im, &t, FB_OP_OUTPUTS, "outputs", o.out, &o.n_out)) ||
        (rc = fb_u8(&im->b, &t, FB_OP_OPTIONS_TYPE, 0, im->where, &ot)) ||
        (rc = fb_table_field(&im->b, &t, FB_OP_OPTIONS, im->where, &o.opt, &o.has_opt)) ||
        (rc = fb_u8(&im->b, &t, FB_OP_OPTIONS2_TYPE, 0, im->where, &ot2)) ||
        (rc = fb_vec_field(&im->b, &t, FB_OP_CUSTOM, 1, im->where, &cust, &pc)))
        return rc;
    o.opt_type = ot;
    if (ot2 || (pc && cust.len))
        return tfl_opfail(im, ENPU_E_UNSUPPORTED, "extended or custom options are not supported");
    /* TFLite runs the operators in file order: every input is computed by
     * an earlier operator (producers: set_producers) */
    for (int i = 0; i < o.n_in; i++) {
        if (o.in[i] < 0) continue; /* an omitted optional input */
        tt *x;
        if ((rc = tfl_tensor_ref(im, o.in[i], "input", &x))) return rc;
        if (x->producer >= (int)k) {
            char why[ENPU_MAX_NAME + 64];
            snprintf(why, sizeof why, "input '%s' is produced by a later operator", x->name);
            return tfl_opfail(im, ENPU_E_INVALID, why);
        }
    }
    return op->fn(im, &o, op->arg);
}

/* Graph inputs and outputs: int8 tensors; a float input read only by a
 * QUANTIZE is replaced by that QUANTIZE's output, a float output written by
 * a DEQUANTIZE by its input (TFLite's conversions at the edges are the
 * host's; docs/tflite.md). */
static int graph_io(imp *im, const fb_table *sg, unsigned id, bool input, const fb_vec *ops) {
    fb_vec v;
    bool present;
    const char *what = input ? "inputs" : "outputs";
    int rc = fb_vec_field(&im->b, sg, id, 4, what, &v, &present);
    if (rc) return rc;
    if (v.len == 0 && !input) return FAIL(ENPU_E_INVALID, "%s: the subgraph has no outputs", im->file);
    if (v.len > MAX_OP_IO)
        return FAIL(ENPU_E_LIMIT, "%s: %u graph %s, over the limit of %d", im->file, v.len, what,
                    MAX_OP_IO);
    for (uint32_t i = 0; i < v.len; i++) {
        int32_t k = fb_vec_i32(&im->b, &v, i);
        snprintf(im->where, sizeof im->where, "graph %s[%u]", what, i);
        tt *x;
        if ((rc = tfl_tensor_ref(im, k, "entry", &x))) return rc;
        if (x->type == TT_FLOAT32) {
            /* find the QUANTIZE reading it (input) / DEQUANTIZE writing it (output) */
            int32_t repl = -1;
            for (uint32_t j = 0; j < ops->len && repl < 0; j++) {
                fb_table t;
                int32_t in[MAX_OP_IO], out[MAX_OP_IO];
                int ni, no;
                uint32_t opc;
                if ((rc = fb_vec_table(&im->b, ops, j, "operators", &t)) ||
                    (rc = fb_u32(&im->b, &t, FB_OP_OPCODE, 0, "operators", &opc)) ||
                    (rc = read_op_io(im, &t, FB_OP_INPUTS, "inputs", in, &ni)) ||
                    (rc = read_op_io(im, &t, FB_OP_OUTPUTS, "outputs", out, &no)))
                    return rc;
                if (opc >= im->n_codes || ni != 1 || no != 1) continue;
                if (input && im->codes[opc] == OP_QUANTIZE && in[0] == k) repl = out[0];
                if (!input && im->codes[opc] == OP_DEQUANTIZE && out[0] == k) repl = in[0];
            }
            snprintf(im->where, sizeof im->where, "graph %s[%u]", what, i);
            if (repl < 0 || (rc = tfl_tensor_ref(im, repl, "its conversion", &x))) {
                if (rc) return rc;
                return tfl_opfail(im, ENPU_E_UNSUPPORTED,
                                  "a float tensor not converted by QUANTIZE/DEQUANTIZE (only int8 "
                                  "models are imported)");
            }
        }
        int ir;
        if (input && !im->inputs_done) {
            x->graph_in = true;
        } else if (input) {
            if (x->ir >= 0 && enpu_graph_find_tensor(im->g, im->g->tensors[x->ir].name) >= 0 &&
                (im->g->tensors[x->ir].flags & ENPU_T_INPUT))
                continue; /* listed twice */
            if ((rc = tfl_act_ir(im, x, "tensor", &ir)) || (rc = enpu_graph_add_input(im->g, ir, im->err)))
                return rc;
        } else {
            if (x->ir < 0)
                return tfl_opfail(im, ENPU_E_INVALID, "no operator computes it");
            if ((rc = enpu_graph_add_output(im->g, x->ir, im->err))) return rc;
        }
    }
    return 0;
}

/* The producer of every tensor: each tensor is written by one operator at
 * most, and a graph input only by the QUANTIZE of a float input. */
static int set_producers(imp *im, const fb_vec *ops) {
    for (uint32_t k = 0; k < ops->len; k++) {
        fb_table t;
        opctx o;
        uint32_t opc;
        int rc;
        snprintf(im->where, sizeof im->where, "op %u", k);
        if ((rc = fb_vec_table(&im->b, ops, k, im->where, &t)) ||
            (rc = fb_u32(&im->b, &t, FB_OP_OPCODE, 0, im->where, &opc)) ||
            (rc = read_op_io(im, &t, FB_OP_INPUTS, "inputs", o.in, &o.n_in)) ||
            (rc = read_op_io(im, &t, FB_OP_OUTPUTS, "outputs", o.out, &o.n_out)))
            return rc;
        bool quantize_in = opc < im->n_codes && im->codes[opc] == OP_QUANTIZE && o.n_in == 1 &&
                           o.in[0] >= 0 && (uint32_t)o.in[0] < im->nt &&
                           im->t[o.in[0]].type == TT_FLOAT32;
        for (int i = 0; i < o.n_out; i++) {
            tt *y = NULL;
            if ((rc = tfl_tensor_ref(im, o.out[i], "output", &y))) return rc;
            if (y->producer >= 0 || (y->graph_in && !quantize_in)) {
                char why[ENPU_MAX_NAME + 64];
                snprintf(why, sizeof why, "output '%s' is already produced or is a graph input",
                         y->name);
                return tfl_opfail(im, ENPU_E_INVALID, why);
            }
            y->producer = (int)k;
        }
    }
    return 0;
}

static int import_model(imp *im) {
    fb_table model, sg;
    int rc = fb_root(&im->b, "TFL3", &model);
    if (rc) return rc;
    uint32_t version;
    if ((rc = fb_u32(&im->b, &model, FB_MODEL_VERSION, 0, "version", &version))) return rc;
    if (version != 3)
        return FAIL(ENPU_E_UNSUPPORTED, "%s: schema version %u (3 is supported)", im->file, version);
    if ((rc = read_opcodes(im, &model))) return rc;
    fb_vec sgs, tensors, ops;
    bool present;
    if ((rc = fb_vec_field(&im->b, &model, FB_MODEL_SUBGRAPHS, 4, "subgraphs", &sgs, &present)) ||
        (rc = fb_vec_field(&im->b, &model, FB_MODEL_BUFFERS, 4, "buffers", &im->buffers, &present)))
        return rc;
    if (sgs.len == 0) return FAIL(ENPU_E_INVALID, "%s: the model has no subgraph", im->file);
    if (im->buffers.len > (uint32_t)ENPU_MAX_TENSORS + 1)
        return FAIL(ENPU_E_LIMIT, "%s: %u buffers, over the limit of %d", im->file, im->buffers.len,
                    ENPU_MAX_TENSORS + 1);
    if ((rc = fb_vec_table(&im->b, &sgs, 0, "subgraphs[0]", &sg)) ||
        (rc = fb_vec_field(&im->b, &sg, FB_SG_TENSORS, 4, "subgraphs[0].tensors", &tensors, &present)) ||
        (rc = fb_vec_field(&im->b, &sg, FB_SG_OPERATORS, 4, "subgraphs[0].operators", &ops, &present)))
        return rc;
    if (tensors.len > ENPU_MAX_TENSORS || ops.len > ENPU_MAX_NODES)
        return FAIL(ENPU_E_LIMIT, "%s: %u tensors / %u operators, over the limits %d / %d",
                    im->file, tensors.len, ops.len, ENPU_MAX_TENSORS, ENPU_MAX_NODES);
    im->nt = tensors.len;
    im->t = calloc(im->nt ? im->nt : 1, sizeof *im->t);
    if (!im->t) return FAIL(ENPU_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < im->nt; i++)
        if ((rc = read_tensor(im, &tensors, i))) return rc;
    if ((rc = graph_io(im, &sg, FB_SG_INPUTS, true, &ops)) || (rc = set_producers(im, &ops)))
        return rc;
    for (uint32_t k = 0; k < ops.len; k++)
        if ((rc = import_op(im, &ops, k))) return rc;
    im->inputs_done = true;
    if ((rc = graph_io(im, &sg, FB_SG_INPUTS, true, &ops)) ||
        (rc = graph_io(im, &sg, FB_SG_OUTPUTS, false, &ops)))
        return rc;
    im->g->requant = ENPU_REQUANT_TFLITE;
    im->g->opset = 17;
    if ((rc = enpu_graph_toposort(im->g, im->err)) || (rc = enpu_qgraph_check(im->g, im->err)))
        return enpu_err_prefix(im->err, "%s", im->file);
    return 0;
}

int enpu_tflite_parse(const uint8_t *data, size_t n, const char *what, enpu_graph **out,
                      enpu_err *err) {
    if (!out) return enpu_fail(err, ENPU_E_USAGE, "enpu_tflite_parse: NULL argument");
    *out = NULL;
    if (!data && n) return enpu_fail(err, ENPU_E_USAGE, "enpu_tflite_parse: NULL data");
    if (n > ENPU_MAX_TFLITE_BYTES)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: %zu bytes, over the limit of %zu", what, n,
                         ENPU_MAX_TFLITE_BYTES);
    enpu_qnode_free_hook = tfl_qnode_hook;
    imp im;
    memset(&im, 0, sizeof im);
    im.b = (fb_buf){data, n, what, err};
    im.err = err;
    im.file = what;
    im.const_limit = 2 * (uint64_t)n + ((uint64_t)1 << 20);
    const char *base = strrchr(what, '/');
    im.g = enpu_graph_new(base ? base + 1 : what);
    int rc = im.g ? import_model(&im) : enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    free(im.t);
    free(im.codes);
    if (rc) {
        enpu_graph_free(im.g);
        return rc;
    }
    *out = im.g;
    return 0;
}

int enpu_tflite_load(const char *path, enpu_graph **out, enpu_err *err) {
    uint8_t *buf = NULL;
    size_t n = 0;
    if (out) *out = NULL;
    int rc = enpu_file_read(path, ENPU_MAX_TFLITE_BYTES, &buf, &n, err);
    if (rc) return rc;
    rc = enpu_tflite_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}
