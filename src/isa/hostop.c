/* Host ops: the attributes a host op carries in its record (iparam/fparam),
 * written by the compiler and read back by the simulator's host, and the
 * time the host CPU the arch describes (hostcpu_*) takes to run one
 * (docs/microarch.md §13.11). */
#include <math.h>
#include <string.h>

#include "easynpu/program.h"

/* --- attributes ------------------------------------------------------------------- */

static void put_window(enpu_hostop *h, const enpu_window *w) {
    for (int k = 0; k < 2; k++) {
        h->iparam[k] = w->kernel[k];
        h->iparam[2 + k] = w->stride[k];
        h->iparam[4 + k] = w->dilation[k];
    }
    for (int k = 0; k < 4; k++) h->iparam[6 + k] = w->pads[k];
}

static void get_window(const enpu_hostop *h, enpu_window *w) {
    for (int k = 0; k < 2; k++) {
        w->kernel[k] = h->iparam[k];
        w->stride[k] = h->iparam[2 + k];
        w->dilation[k] = h->iparam[4 + k];
    }
    for (int k = 0; k < 4; k++) w->pads[k] = h->iparam[6 + k];
    w->auto_pad = ENPU_PAD_NOTSET;
}

/* A float attribute that may be infinite (Clip's bounds): fparam must be
 * finite, so +-inf is a flag bit in iparam[flags] and the value 0. */
static void put_bound(enpu_hostop *h, int f, int flags, int bit, float v) {
    if (isinf(v)) {
        h->iparam[flags] |= (v > 0 ? 2 : 1) << (2 * bit);
        v = 0;
    }
    h->fparam[f] = v == v ? v : 0;
}

static float get_bound(const enpu_hostop *h, int f, int flags, int bit) {
    int s = (h->iparam[flags] >> (2 * bit)) & 3;
    return s == 1 ? -INFINITY : s == 2 ? INFINITY : h->fparam[f];
}

static int32_t clamp32(int64_t v) {
    return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

int enpu_hostop_set_attrs(enpu_hostop *h, const enpu_node *n, enpu_err *err) {
    memset(h->iparam, 0, sizeof h->iparam);
    memset(h->fparam, 0, sizeof h->fparam);
    const enpu_attr *a = &n->attr;
    switch (n->op) {
    case ENPU_OP_SOFTMAX:
        h->iparam[0] = a->shape.axis;
        h->iparam[1] = a->shape.softmax_legacy;
        break;
    case ENPU_OP_FLATTEN:
    case ENPU_OP_CONCAT:
    case ENPU_OP_GATHER: h->iparam[0] = a->shape.axis; break;
    case ENPU_OP_TRANSPOSE:
        for (int k = 0; k < a->shape.n_axes && k < ENPU_MAX_RANK; k++) h->iparam[k] = a->shape.axes[k];
        h->iparam[ENPU_MAX_RANK] = a->shape.n_axes;
        break;
    case ENPU_OP_RELU:
    case ENPU_OP_LEAKY_RELU:
    case ENPU_OP_HARD_SIGMOID:
    case ENPU_OP_HARD_SWISH:
    case ENPU_OP_CLIP:
        put_bound(h, 0, 0, 0, a->act.alpha);
        put_bound(h, 1, 0, 1, a->act.beta);
        put_bound(h, 2, 0, 2, a->act.min);
        put_bound(h, 3, 0, 3, a->act.max);
        break;
    case ENPU_OP_GEMM:
        h->fparam[0] = a->gemm.alpha;
        h->fparam[1] = a->gemm.beta;
        h->iparam[0] = a->gemm.trans_a;
        h->iparam[1] = a->gemm.trans_b;
        break;
    case ENPU_OP_CONV:
    case ENPU_OP_CONV_TRANSPOSE:
        put_window(h, &a->conv.w);
        h->iparam[10] = a->conv.group;
        h->iparam[11] = a->conv.out_pad[0];
        h->iparam[12] = a->conv.out_pad[1];
        break;
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        put_window(h, &a->pool.w);
        h->iparam[10] = a->pool.ceil_mode;
        h->iparam[11] = a->pool.count_include_pad;
        break;
    case ENPU_OP_BATCHNORM: h->fparam[0] = a->bn.epsilon; break;
    case ENPU_OP_LAYER_NORM:
        h->iparam[0] = a->norm.axis;
        h->fparam[0] = a->norm.epsilon;
        break;
    case ENPU_OP_GELU: h->iparam[0] = a->misc.approximate; break;
    case ENPU_OP_SLICE:
        h->iparam[0] = a->slice.n;
        for (int k = 0; k < a->slice.n && k < ENPU_MAX_RANK; k++) {
            h->iparam[1 + k] = clamp32(a->slice.starts[k]);
            h->iparam[1 + ENPU_MAX_RANK + k] = clamp32(a->slice.steps[k]);
        }
        break;
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_MAX:
    case ENPU_OP_REDUCE_SUM:
    case ENPU_OP_ARGMAX:
    case ENPU_OP_ARGMIN:
        for (int k = 0; k < a->reduce.n_axes; k++) h->iparam[0] |= 1 << a->reduce.axes[k];
        h->iparam[1] = a->reduce.keepdims;
        h->iparam[2] = a->reduce.noop_with_empty_axes;
        h->iparam[3] = a->reduce.select_last;
        break;
    case ENPU_OP_PAD:
        if (a->pad.n_pads > 2 * ENPU_MAX_RANK) break;
        h->iparam[0] = a->pad.n_pads;
        for (int k = 0; k < a->pad.n_pads; k++) {
            if (a->pad.pads[k] < INT32_MIN || a->pad.pads[k] > INT32_MAX)
                return enpu_fail(err, ENPU_E_LIMIT, "host op '%s': pad %lld does not fit 32 bits",
                                 n->name, (long long)a->pad.pads[k]);
            h->iparam[1 + k] = (int32_t)a->pad.pads[k];
        }
        h->iparam[1 + 2 * ENPU_MAX_RANK] = a->pad.mode;
        h->fparam[0] = isfinite(a->pad.value) ? a->pad.value : 0;
        break;
    case ENPU_OP_RESIZE: {
        const enpu_resize_attr *r = &a->resize;
        h->iparam[0] = r->mode;
        h->iparam[1] = r->ctm;
        h->iparam[2] = r->nearest;
        h->iparam[3] = r->exclude_outside;
        h->iparam[4] = r->n_scales;
        h->iparam[5] = r->n_roi;
        h->fparam[0] = r->cubic_a;
        h->fparam[1] = r->extrapolation;
        for (int k = 0; k < r->n_scales && k < ENPU_MAX_RANK; k++) h->fparam[2 + k] = r->scales[k];
        for (int k = 0; k < r->n_roi && k < 2 * ENPU_MAX_RANK; k++)
            h->fparam[2 + ENPU_MAX_RANK + k] = r->roi[k];
        break;
    }
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN: {
        const enpu_rnn_attr *r = &a->rnn;
        h->iparam[0] = r->hidden, h->iparam[1] = r->direction, h->iparam[2] = r->layout;
        h->iparam[3] = r->input_forget, h->iparam[4] = r->linear_before_reset;
        h->fparam[0] = r->clip;
        for (int k = 0; k < 6; k++) {
            h->iparam[5 + k] = r->act[k];
            h->fparam[1 + k] = r->alpha[k], h->fparam[7 + k] = r->beta[k];
        }
        break;
    }
    default: break; /* no attributes, or all of them in the operands' shapes */
    }
    for (int k = 0; k < ENPU_HOSTOP_FPARAMS; k++)
        if (!isfinite(h->fparam[k]))
            return enpu_fail(err, ENPU_E_INVALID, "host op '%s': attribute value %g is not finite",
                             n->name, (double)h->fparam[k]);
    return 0;
}

void enpu_hostop_get_attrs(const enpu_hostop *h, enpu_node *n, int rank0) {
    enpu_attr *a = &n->attr;
    memset(a, 0, sizeof *a);
    switch (n->op) {
    case ENPU_OP_SOFTMAX:
    case ENPU_OP_FLATTEN:
    case ENPU_OP_CONCAT:
    case ENPU_OP_GATHER: {
        int ax = h->iparam[0];
        if (ax < 0) ax += rank0;
        a->shape.axis = ax;
        a->shape.softmax_legacy = n->op == ENPU_OP_SOFTMAX && h->iparam[1] != 0;
        break;
    }
    case ENPU_OP_TRANSPOSE:
        /* format 3.1 records hold no count: the perm has the input's rank */
        a->shape.n_axes = h->iparam[ENPU_MAX_RANK] ? h->iparam[ENPU_MAX_RANK] : rank0;
        if (a->shape.n_axes > ENPU_MAX_RANK) a->shape.n_axes = ENPU_MAX_RANK;
        for (int i = 0; i < a->shape.n_axes; i++) a->shape.axes[i] = h->iparam[i];
        break;
    case ENPU_OP_RELU:
    case ENPU_OP_LEAKY_RELU:
    case ENPU_OP_HARD_SIGMOID:
    case ENPU_OP_HARD_SWISH:
    case ENPU_OP_CLIP:
        a->act.alpha = get_bound(h, 0, 0, 0);
        a->act.beta = get_bound(h, 1, 0, 1);
        a->act.min = get_bound(h, 2, 0, 2);
        a->act.max = get_bound(h, 3, 0, 3);
        break;
    case ENPU_OP_GEMM:
        a->gemm.alpha = h->fparam[0];
        a->gemm.beta = h->fparam[1];
        a->gemm.trans_a = h->iparam[0] != 0;
        a->gemm.trans_b = h->iparam[1] != 0;
        break;
    case ENPU_OP_CONV:
    case ENPU_OP_CONV_TRANSPOSE:
        get_window(h, &a->conv.w);
        a->conv.group = h->iparam[10];
        a->conv.out_pad[0] = h->iparam[11];
        a->conv.out_pad[1] = h->iparam[12];
        break;
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        get_window(h, &a->pool.w);
        a->pool.ceil_mode = h->iparam[10] != 0;
        a->pool.count_include_pad = h->iparam[11] != 0;
        break;
    case ENPU_OP_BATCHNORM: a->bn.epsilon = h->fparam[0]; break;
    case ENPU_OP_LAYER_NORM:
        a->norm.axis = h->iparam[0];
        a->norm.epsilon = h->fparam[0];
        break;
    case ENPU_OP_GELU: a->misc.approximate = h->iparam[0]; break;
    case ENPU_OP_SLICE:
        a->slice.n = h->iparam[0] < 0 ? 0 : h->iparam[0] > ENPU_MAX_RANK ? ENPU_MAX_RANK : h->iparam[0];
        for (int k = 0; k < a->slice.n; k++) {
            a->slice.axes[k] = k;
            a->slice.starts[k] = h->iparam[1 + k];
            a->slice.steps[k] = h->iparam[1 + ENPU_MAX_RANK + k];
        }
        break;
    case ENPU_OP_REDUCE_MEAN:
    case ENPU_OP_REDUCE_MAX:
    case ENPU_OP_REDUCE_SUM:
    case ENPU_OP_ARGMAX:
    case ENPU_OP_ARGMIN:
        for (int k = 0; k < ENPU_MAX_RANK; k++)
            if ((h->iparam[0] >> k) & 1) a->reduce.axes[a->reduce.n_axes++] = k;
        a->reduce.keepdims = h->iparam[1] != 0;
        a->reduce.noop_with_empty_axes = h->iparam[2] != 0;
        a->reduce.select_last = h->iparam[3] != 0;
        break;
    case ENPU_OP_PAD:
        a->pad.n_pads = h->iparam[0] < 0 ? 0 : h->iparam[0] > 2 * ENPU_MAX_RANK ? 2 * ENPU_MAX_RANK : h->iparam[0];
        for (int k = 0; k < a->pad.n_pads; k++) a->pad.pads[k] = h->iparam[1 + k];
        a->pad.mode = h->iparam[1 + 2 * ENPU_MAX_RANK];
        a->pad.value = h->fparam[0];
        break;
    case ENPU_OP_RESIZE: {
        enpu_resize_attr *r = &a->resize;
        r->mode = h->iparam[0];
        r->ctm = h->iparam[1];
        r->nearest = h->iparam[2];
        r->exclude_outside = h->iparam[3] != 0;
        r->n_scales = h->iparam[4] < 0 ? 0 : h->iparam[4] > ENPU_MAX_RANK ? ENPU_MAX_RANK : h->iparam[4];
        r->n_roi = h->iparam[5] < 0 ? 0 : h->iparam[5] > 2 * ENPU_MAX_RANK ? 2 * ENPU_MAX_RANK : h->iparam[5];
        r->cubic_a = h->fparam[0];
        r->extrapolation = h->fparam[1];
        for (int k = 0; k < r->n_scales; k++) r->scales[k] = h->fparam[2 + k];
        for (int k = 0; k < r->n_roi; k++) r->roi[k] = h->fparam[2 + ENPU_MAX_RANK + k];
        break;
    }
    case ENPU_OP_LSTM:
    case ENPU_OP_GRU:
    case ENPU_OP_RNN: {
        enpu_rnn_attr *r = &a->rnn;
        r->hidden = h->iparam[0], r->direction = h->iparam[1], r->layout = h->iparam[2];
        r->input_forget = h->iparam[3] != 0, r->linear_before_reset = h->iparam[4] != 0;
        r->clip = h->fparam[0];
        for (int k = 0; k < 6; k++) {
            r->act[k] = h->iparam[5 + k];
            r->alpha[k] = h->fparam[1 + k], r->beta[k] = h->fparam[7 + k];
        }
        break;
    }
    default: break;
    }
}

/* Format 3.1 records: windows as two 16-bit values per parameter (kernel,
 * stride, dilation), the pads, then group or ceil_mode | count_include_pad
 * << 1; Pad's pads from iparam[0], its value in fparam[0].  The other ops
 * have the 3.2 layout already. */
void enpu_hostop_upgrade_3_1(enpu_hostop *h, int rank0) {
    enpu_node n;
    memset(&n, 0, sizeof n);
    n.name = h->name;
    n.op = enpu_op_from_name(h->kind);
    enpu_window *w = n.op == ENPU_OP_CONV ? &n.attr.conv.w : &n.attr.pool.w;
    switch (n.op) {
    case ENPU_OP_CONV:
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        for (int k = 0; k < 3; k++) {
            uint32_t u = (uint32_t)h->iparam[k];
            int *pair = k == 0 ? w->kernel : k == 1 ? w->stride : w->dilation;
            pair[0] = (int)(u & 0xFFFFu), pair[1] = (int)(u >> 16);
        }
        for (int k = 0; k < 4; k++) w->pads[k] = h->iparam[3 + k];
        if (n.op == ENPU_OP_CONV) {
            n.attr.conv.group = h->iparam[7];
        } else {
            n.attr.pool.ceil_mode = (h->iparam[7] & 1) != 0;
            n.attr.pool.count_include_pad = (h->iparam[7] & 2) != 0;
        }
        break;
    case ENPU_OP_PAD:
        n.attr.pad.n_pads = 2 * rank0 <= ENPU_HOSTOP_IPARAMS_3_1 ? 2 * rank0 : ENPU_HOSTOP_IPARAMS_3_1;
        for (int k = 0; k < n.attr.pad.n_pads; k++) n.attr.pad.pads[k] = h->iparam[k];
        n.attr.pad.value = h->fparam[0];
        break;
    default: return;
    }
    enpu_err err = {0};
    enpu_hostop_set_attrs(h, &n, &err); /* values of 3.1's fields always fit 3.2's */
}

/* --- the host CPU's time ------------------------------------------------------------ */

enpu_host_class enpu_host_op_class(enpu_op op) {
    switch (op) {
    case ENPU_OP_CONV: case ENPU_OP_CONV_TRANSPOSE: case ENPU_OP_GEMM: case ENPU_OP_MATMUL:
    case ENPU_OP_LSTM: case ENPU_OP_GRU: case ENPU_OP_RNN:
        return ENPU_HOST_MAC;
    case ENPU_OP_EXP: case ENPU_OP_LOG: case ENPU_OP_ERF: case ENPU_OP_POW: case ENPU_OP_SQRT:
    case ENPU_OP_SIGMOID: case ENPU_OP_TANH: case ENPU_OP_SILU: case ENPU_OP_GELU:
    case ENPU_OP_SOFTMAX: case ENPU_OP_LAYER_NORM:
        return ENPU_HOST_TRANSCENDENTAL;
    case ENPU_OP_RESHAPE: case ENPU_OP_FLATTEN: case ENPU_OP_SQUEEZE: case ENPU_OP_UNSQUEEZE:
    case ENPU_OP_TRANSPOSE: case ENPU_OP_CONCAT: case ENPU_OP_PAD: case ENPU_OP_SLICE:
    case ENPU_OP_SPLIT: case ENPU_OP_GATHER: case ENPU_OP_EXPAND: case ENPU_OP_IDENTITY:
    case ENPU_OP_DROPOUT: case ENPU_OP_CAST:
        return ENPU_HOST_MOVE;
    default:
        return ENPU_HOST_ARITH;
    }
}

int64_t enpu_host_op_cycles(const enpu_arch *a, enpu_op op, bool nearest, int64_t elems,
                            int64_t int8_elems, int64_t macs) {
    enpu_host_class c = enpu_host_op_class(op);
    if (op == ENPU_OP_RESIZE && nearest) c = ENPU_HOST_MOVE;
    int64_t per = c == ENPU_HOST_MOVE             ? a->hostcpu_move_cycles
                  : c == ENPU_HOST_TRANSCENDENTAL ? a->hostcpu_transc_cycles
                                                  : a->hostcpu_arith_cycles;
    /* in double: the operands are bounded (elements < 2^31 each, costs
     * < 2^30), so the sum is exact well below 2^53 */
    /* a move copies int8 codes as they are: no conversion */
    double cvt = c == ENPU_HOST_MOVE ? 0 : (double)a->hostcpu_cvt_cycles * (double)int8_elems;
    double host = (double)a->hostcpu_op_cycles + cvt + (double)per * (double)elems;
    if (c == ENPU_HOST_MAC) host += (double)a->hostcpu_mac_cycles * (double)macs;
    double npu = ceil(host * a->clock_mhz / (double)a->hostcpu_mhz);
    return npu > 9.0e18 ? INT64_MAX : (int64_t)npu;
}

static int64_t io_numel(const enpu_io_desc *d) {
    int64_t n = 1;
    for (int k = 0; k < d->rank; k++) n *= d->dims[k];
    return n;
}

int64_t enpu_sync_host_cycles(const enpu_program *p, int instr) {
    const enpu_instr *in = &p->instr[instr];
    if (in->opcode != ENPU_OPC_SYNC || in->host_op < 0 || in->host_op >= p->n_hostops) return 0;
    const enpu_hostop *h = &p->hostops[in->host_op];
    enpu_op op = enpu_op_from_name(h->kind);
    int64_t elems = 0, int8 = 0;
    for (int k = 0; k < h->n_in + h->n_out; k++) {
        if (h->io[k] < 0) continue;
        const enpu_io_desc *d = &p->io[h->io[k]];
        if (d->dir == ENPU_IO_CONST) continue;
        int64_t n = io_numel(d);
        if (n > elems) elems = n;
        if (d->mem != ENPU_MEM_HOST) int8 += n;
    }
    return enpu_host_op_cycles(&p->arch, op, op == ENPU_OP_RESIZE && h->iparam[0] == ENPU_RESIZE_NEAREST,
                               elems, int8, p->layers[instr].macs);
}

int64_t enpu_sync_cycles(const enpu_program *p, int instr) {
    int64_t h = enpu_sync_host_cycles(p, instr);
    return h > INT64_MAX - p->arch.host_sync_cycles ? INT64_MAX : p->arch.host_sync_cycles + h;
}
