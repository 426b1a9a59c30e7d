/* Random legal graphs and architectures, and the differential check of the
 * whole pipeline on them (graphgen.h). */
#include "graphgen.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/compiler.h"
#include "easynpu/file.h"
#include "easynpu/float_ref.h"
#include "easynpu/onnx.h"
#include "easynpu/program.h"
#include "easynpu/quant.h"
#include "easynpu/sim.h"

/* ---- random numbers (splitmix64: the same stream on every machine) ---------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double runif(rng *r) { return (double)(rnext(r) >> 11) / 9007199254740992.0; }
/* Uniform in lo..hi inclusive. */
static int rint_in(rng *r, int lo, int hi) { return lo + (int)(rnext(r) % (uint64_t)(hi - lo + 1)); }
static bool rchance(rng *r, double p) { return runif(r) < p; }
static double rnorm(rng *r) {
    double u = runif(r) + 1e-12, v = runif(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}
#define PICK(r, arr) ((arr)[rint_in((r), 0, (int)(sizeof(arr) / sizeof((arr)[0])) - 1)])

/* Index drawn by integer weights. */
static int rweighted(rng *r, const int *w, int n) {
    int tot = 0;
    for (int i = 0; i < n; i++) tot += w[i];
    int x = rint_in(r, 0, tot - 1);
    for (int i = 0; i < n; i++) {
        if (x < w[i]) return i;
        x -= w[i];
    }
    return n - 1;
}

/* Channel counts: many that are not multiples of 8, 16 or 32. */
static const int CHANNELS[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 20, 24, 31, 32, 33, 40, 48};

/* ---- the builder ---------------------------------------------------------------------- */

/* An activation value: rank 4 [1,c,h,w], rank 3 [1,c,w] (h = 1) or rank 2 [1,c]. */
typedef struct val {
    int t;
    int rank;
    int64_t c, h, w;
} val;

#define POOL_MAX 64

typedef struct gb {
    enpu_graph *g;
    rng r;
    enpu_err *err;
    int rc;                 /* first failure: nothing is added after it */
    int seq;                /* name counter */
    val pool[POOL_MAX];     /* every activation made so far (residual and concat partners) */
    int npool;
    char *desc;
    size_t dlen, dcap;
    int64_t macs, macs_budget;
    int64_t params;         /* weight values, for the weight-memory estimate */
    int64_t max_c;
    bool tfl;               /* requant tflite: only what TFLite's integer kernels compute */
} gb;

static void say(gb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(gb *b, const char *fmt, ...) {
    if (b->dlen + 1 >= b->dcap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->desc + b->dlen, b->dcap - b->dlen, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    b->dlen += (size_t)n;
    if (b->dlen >= b->dcap) { /* truncated: mark it */
        b->dlen = b->dcap - 1;
        memcpy(b->desc + b->dcap - 4, "...", 4);
    }
}

static val none(void) { return (val){-1, 0, 0, 0, 0}; }

static int ftensor(gb *b, const char *what, enpu_dtype dt, int rank, const int64_t *dims) {
    if (b->rc) return -1;
    char name[64];
    snprintf(name, sizeof name, "%s%d", what, b->seq++);
    int t = enpu_graph_add_tensor(b->g, name, dt, rank, dims, b->err);
    if (t < 0) b->rc = t;
    return t;
}

/* A float32 constant of N(mean, sd) values. */
static int rconst(gb *b, const char *what, int rank, const int64_t *dims, double sd, double mean) {
    int t = ftensor(b, what, ENPU_DT_FLOAT32, rank, dims);
    if (t < 0) return -1;
    int64_t n = enpu_tensor_numel(&b->g->tensors[t]);
    float *v = malloc((size_t)n * sizeof *v + sizeof *v);
    if (!v) {
        b->rc = enpu_fail(b->err, ENPU_E_NOMEM, "generator: out of memory");
        return -1;
    }
    for (int64_t i = 0; i < n; i++) v[i] = (float)(mean + sd * rnorm(&b->r));
    enpu_tensor_set_data(&b->g->tensors[t], v);
    b->params += n;
    return t;
}

/* A float32 constant of U(lo, hi) values. */
static int uconst(gb *b, const char *what, int rank, const int64_t *dims, double lo, double hi) {
    int t = rconst(b, what, rank, dims, 0, 0);
    if (t < 0) return -1;
    float *v = b->g->tensors[t].data;
    int64_t n = enpu_tensor_numel(&b->g->tensors[t]);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(lo + (hi - lo) * runif(&b->r));
    return t;
}

static int iconst(gb *b, const char *what, int n, const int64_t *vals) {
    int64_t d = n;
    int t = ftensor(b, what, ENPU_DT_INT64, 1, &d);
    if (t < 0) return -1;
    int64_t *v = malloc((size_t)n * sizeof *v + sizeof *v);
    if (!v) {
        b->rc = enpu_fail(b->err, ENPU_E_NOMEM, "generator: out of memory");
        return -1;
    }
    memcpy(v, vals, (size_t)n * sizeof *v);
    enpu_tensor_set_data(&b->g->tensors[t], v);
    return t;
}

/* Appends a node with one fresh output; the caller sets its attributes on
 * the returned node (valid until the next node is added), then calls fin. */
static enpu_node *add(gb *b, enpu_op op, int n_in, const int *in) {
    if (b->rc) return NULL;
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0) return NULL;
    int out = ftensor(b, "t", ENPU_DT_FLOAT32, -1, NULL);
    if (out < 0) return NULL;
    char name[64];
    snprintf(name, sizeof name, "%s_%d", enpu_op_name(op), b->seq++);
    int k = enpu_graph_add_node(b->g, name, op, n_in, in, 1, &out, b->err);
    if (k < 0) {
        b->rc = k;
        return NULL;
    }
    return &b->g->nodes[k];
}

static val val_of(const enpu_graph *g, int t) {
    const enpu_tensor *x = &g->tensors[t];
    val v = {t, x->rank, 1, 1, 1};
    if (x->rank >= 2) v.c = x->dims[1];
    if (x->rank == 4) v.h = x->dims[2], v.w = x->dims[3];
    if (x->rank == 3) v.w = x->dims[2];
    return v;
}

/* Infers the last node's output shape; the value joins the pool. */
static val fin(gb *b) {
    if (b->rc) return none();
    int k = b->g->n_nodes - 1;
    int rc = enpu_infer_node(b->g, k, b->err);
    if (rc) {
        b->rc = rc;
        return none();
    }
    val v = val_of(b->g, b->g->nodes[k].out[0]);
    if (b->npool < POOL_MAX) b->pool[b->npool++] = v;
    return v;
}

static void set_window(enpu_window *w, int kh, int kw, int sh, int sw, int dh, int dw, const int *p) {
    w->kernel[0] = kh, w->kernel[1] = kw;
    w->stride[0] = sh, w->stride[1] = sw;
    w->dilation[0] = dh, w->dilation[1] = dw;
    for (int i = 0; i < 4; i++) w->pads[i] = p[i];
    w->auto_pad = ENPU_PAD_NOTSET;
}

/* ---- window geometry ------------------------------------------------------------------ */

typedef struct win {
    int kh, kw, sh, sw, dh, dw;
    int p[4]; /* top, left, bottom, right */
} win;

static int64_t win_out(int64_t x, int k, int s, int d, int p0, int p1) {
    int64_t span = x + p0 + p1 - ((int64_t)(k - 1) * d + 1);
    return span < 0 ? 0 : span / s + 1;
}

/* Pads of one axis: none, "same" (total eff-1, split either way) or random
 * below the extent (or below the kernel for pools). */
static void rand_pads(rng *r, int eff, int kmax, int *p0, int *p1) {
    int hi = kmax - 1;
    switch (rint_in(r, 0, 3)) {
    case 0: *p0 = *p1 = 0; break;
    case 1:
    case 2: {
        int tot = eff - 1;
        *p0 = rchance(r, 0.5) ? tot / 2 : tot - tot / 2;
        *p1 = tot - *p0;
        if (*p0 > hi) *p0 = hi;
        if (*p1 > hi) *p1 = hi;
        break;
    }
    default: *p0 = rint_in(r, 0, hi), *p1 = rint_in(r, 0, hi); break;
    }
}

/* A random window over an h x w map (h = 1 for 1-D: the H axis is trivial);
 * `pool`: pads below the kernel and small kernels; `same`: stride 1 and
 * output size equal to the input's.  Shrinks the kernel until the output is
 * at least 1 x 1. */
static win rand_window(rng *r, int64_t h, int64_t w, bool one_d, bool pool, bool same) {
    win v;
    int kmax = pool ? 3 : 5;
    v.kw = rint_in(r, 1, kmax);
    v.kh = one_d ? 1 : (rchance(r, 0.5) ? v.kw : rint_in(r, 1, kmax));
    if (pool && rchance(r, 0.5)) v.kh = v.kw = one_d ? 1 : 2, v.kw = 2;
    v.sh = v.sw = 1;
    if (!same) {
        static const int S[] = {1, 1, 1, 2, 2, 3};
        v.sw = PICK(r, S);
        v.sh = one_d ? 1 : (rchance(r, 0.7) ? v.sw : PICK(r, S));
        if (pool && rchance(r, 0.4)) v.sh = v.kh, v.sw = v.kw;
    }
    v.dh = v.dw = 1;
    if (rchance(r, 0.15)) v.dw = rint_in(r, 2, 3);
    if (!one_d && rchance(r, 0.15)) v.dh = rint_in(r, 2, 3);
    if (pool && !same) v.dh = v.dw = 1;
    for (;;) {
        int effh = (v.kh - 1) * v.dh + 1, effw = (v.kw - 1) * v.dw + 1;
        if (same) {
            int th = effh - 1, tw = effw - 1;
            v.p[0] = rchance(r, 0.5) ? th / 2 : th - th / 2, v.p[2] = th - v.p[0];
            v.p[1] = rchance(r, 0.5) ? tw / 2 : tw - tw / 2, v.p[3] = tw - v.p[1];
        } else {
            rand_pads(r, effh, pool ? v.kh : effh, &v.p[0], &v.p[2]);
            rand_pads(r, effw, pool ? v.kw : effw, &v.p[1], &v.p[3]);
        }
        if (one_d) v.p[0] = v.p[2] = 0;
        bool okh = win_out(h, v.kh, v.sh, v.dh, v.p[0], v.p[2]) >= 1;
        bool okw = win_out(w, v.kw, v.sw, v.dw, v.p[1], v.p[3]) >= 1;
        if (okh && okw) return v;
        if (!okh) {
            if (v.dh > 1) v.dh--;
            else if (v.kh > 1) v.kh--;
        }
        if (!okw) {
            if (v.dw > 1) v.dw--;
            else if (v.kw > 1) v.kw--;
        }
    }
}

/* ---- ops -------------------------------------------------------------------------------- */

static const char *const ACT_NAMES[] = {"relu", "clip", "leaky", "sigmoid", "tanh",
                                        "hsigmoid", "hswish", "silu", "prelu"};

static val op_act(gb *b, val x, int kind) {
    if (kind < 0) kind = rint_in(&b->r, 0, 8);
    /* TFLite has integer kernels for these only (LOGISTIC, TANH, HARD_SWISH
     * on the host; RELU/RELU6/clamps fused): the others map onto them */
    static const int TFL_KIND[] = {0, 1, 0, 3, 4, 3, 6, 4, 1};
    if (b->tfl) kind = TFL_KIND[kind];
    static const enpu_op OPS[] = {ENPU_OP_RELU,         ENPU_OP_CLIP,       ENPU_OP_LEAKY_RELU,
                                  ENPU_OP_SIGMOID,      ENPU_OP_TANH,       ENPU_OP_HARD_SIGMOID,
                                  ENPU_OP_HARD_SWISH,   ENPU_OP_SILU,       ENPU_OP_PRELU};
    int in[2] = {x.t, -1};
    int n_in = 1;
    float slope = 0;
    if (kind == 8) {
        int64_t one = 1;
        int64_t d3[3] = {1, 1, 1};
        slope = (float)(0.05 + 0.4 * runif(&b->r));
        in[1] = x.rank < 3 || rchance(&b->r, 0.5) ? rconst(b, "slope", 1, &one, 0, slope)
                                                  : rconst(b, "slope", 3, d3, 0, slope);
        n_in = 2;
    }
    enpu_node *n = add(b, OPS[kind], n_in, in);
    if (!n) return none();
    enpu_act_attr *a = &n->attr.act;
    a->min = -INFINITY, a->max = INFINITY;
    switch (kind) {
    case 0: a->min = 0; say(b, " relu"); break;
    case 1: {
        static const float LO[] = {0, 0, -1, -0.5f, -INFINITY}, HI[] = {6, 1, 1, 2, 0.75f};
        int i = rint_in(&b->r, 0, 4);
        a->min = LO[i], a->max = HI[i];
        say(b, " clip(%g,%g)", (double)a->min, (double)a->max);
        break;
    }
    case 2:
        a->alpha = (float)(0.01 + 0.3 * runif(&b->r));
        say(b, " leaky(%.3g)", (double)a->alpha);
        break;
    case 5:
        a->alpha = rchance(&b->r, 0.5) ? 0.2f : (float)(0.1 + 0.3 * runif(&b->r));
        a->beta = rchance(&b->r, 0.5) ? 0.5f : (float)(0.3 + 0.4 * runif(&b->r));
        say(b, " hsigmoid(%.3g,%.3g)", (double)a->alpha, (double)a->beta);
        break;
    case 6:
        a->alpha = 1.0f / 6.0f, a->beta = 0.5f;
        say(b, " hswish");
        break;
    case 8: say(b, " prelu(%.3g)", (double)slope); break;
    default: say(b, " %s", ACT_NAMES[kind]); break;
    }
    return fin(b);
}

static val op_bn(gb *b, val x) {
    int64_t d = x.c;
    int in[5] = {x.t, rconst(b, "bn_s", 1, &d, 0.3, 1.0), rconst(b, "bn_b", 1, &d, 0.3, 0),
                 rconst(b, "bn_m", 1, &d, 0.3, 0), uconst(b, "bn_v", 1, &d, 0.3, 2.0)};
    enpu_node *n = add(b, ENPU_OP_BATCHNORM, 5, in);
    if (!n) return none();
    n->attr.bn.epsilon = rchance(&b->r, 0.5) ? 1e-5f : 1e-3f;
    say(b, " bn");
    return fin(b);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Conv: mode 0 plain, 1 depthwise (multiplier 1 or 2), 2 group conv;
 * co <= 0: random.  `same`: stride 1, output size = input size. */
static val op_conv(gb *b, val x, int mode, int64_t co, bool same) {
    rng *r = &b->r;
    bool one_d = x.rank == 3;
    int64_t ci = x.c;
    if (mode < 0) mode = rweighted(r, (const int[]){6, 3, 2}, 3);
    int64_t group = 1;
    if (mode == 1) {
        group = ci;
        if (co <= 0) co = ci * (rchance(r, 0.2) ? 2 : 1);
        if (co % ci) group = 1, mode = 0;
    } else if (mode == 2) {
        int64_t divs[16];
        int nd = 0;
        for (int64_t d = 2; d < ci && nd < 16; d++)
            if (ci % d == 0 && (co <= 0 || co % d == 0)) divs[nd++] = d;
        if (nd == 0) {
            mode = 0;
        } else {
            group = divs[rint_in(r, 0, nd - 1)];
            if (co <= 0) co = group * rint_in(r, 1, (int)(b->max_c / group > 1 ? b->max_c / group : 1));
        }
    }
    bool co_fixed = co > 0; /* a residual body or a concat branch needs exactly co */
    if (co <= 0) co = PICK(r, CHANNELS);
    if (!co_fixed && co > b->max_c) co = b->max_c;
    if (co % group) group = 1, mode = 0;
    win v = rand_window(r, x.h, x.w, one_d, false, same);
    /* stay within the MAC budget: a cheaper kernel, then fewer channels */
    for (int tries = 0;; tries++) {
        int64_t oh = win_out(x.h, v.kh, v.sh, v.dh, v.p[0], v.p[2]);
        int64_t ow = win_out(x.w, v.kw, v.sw, v.dw, v.p[1], v.p[3]);
        int64_t macs = oh * ow * co * (ci / group) * v.kh * v.kw;
        if (b->macs + macs <= b->macs_budget || tries > 8) {
            b->macs += macs;
            break;
        }
        if (v.kh * v.kw > 1 && !same) v = (win){1, 1, v.sh, v.sw, 1, 1, {0, 0, 0, 0}};
        else if (mode == 0 && co > 4 && !co_fixed) co = co / 2;
        else break;
    }
    int64_t wd[4] = {co, ci / group, v.kh, v.kw}, bd[1] = {co};
    int64_t wd3[3] = {co, ci / group, v.kw};
    double sd = sqrt(2.0 / (double)((ci / group) * v.kh * v.kw)) * (0.5 + runif(r));
    int in[3] = {x.t, one_d ? rconst(b, "w", 3, wd3, sd, 0) : rconst(b, "w", 4, wd, sd, 0), -1};
    int n_in = 2;
    if (rchance(r, 0.8)) in[2] = rconst(b, "b", 1, bd, 0.2, 0), n_in = 3;
    enpu_node *n = add(b, ENPU_OP_CONV, n_in, in);
    if (!n) return none();
    set_window(&n->attr.conv.w, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, v.p);
    n->attr.conv.group = (int)group;
    say(b, " %s(%lld,k%dx%d,s%dx%d,d%dx%d,p%d%d%d%d%s)", mode == 1 ? "dw" : mode == 2 ? "gconv" : "conv",
        (long long)co, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, v.p[0], v.p[1], v.p[2], v.p[3],
        n_in == 2 ? ",nobias" : "");
    if (group > 1 && mode == 2) say(b, "g%lld", (long long)group);
    return fin(b);
}

static val op_pool(gb *b, val x, bool maxpool) {
    rng *r = &b->r;
    bool one_d = x.rank == 3;
    win v = rand_window(r, x.h, x.w, one_d, true, false);
    if (maxpool && rchance(r, 0.15)) {
        v.dw = 2;
        if (!one_d) v.dh = rchance(r, 0.5) ? 2 : 1;
        if (win_out(x.h, v.kh, v.sh, v.dh, v.p[0], v.p[2]) < 1 ||
            win_out(x.w, v.kw, v.sw, v.dw, v.p[1], v.p[3]) < 1)
            v.dh = v.dw = 1;
    }
    bool ceil_mode = rchance(r, 0.15);
    bool cip = rchance(r, 0.5);
    /* TFLite's AVERAGE_POOL_2D has one divisor: no window may count fewer
     * positions (a padded one reads the zero point, as count_include_pad) */
    if (b->tfl && !maxpool) ceil_mode = false, cip = true;
    enpu_node *n = add(b, maxpool ? ENPU_OP_MAXPOOL : ENPU_OP_AVGPOOL, 1, &x.t);
    if (!n) return none();
    set_window(&n->attr.pool.w, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, v.p);
    n->attr.pool.ceil_mode = ceil_mode;
    n->attr.pool.count_include_pad = !maxpool && cip;
    say(b, " %s(k%dx%d,s%dx%d,d%dx%d,p%d%d%d%d%s%s)", maxpool ? "maxpool" : "avgpool", v.kh, v.kw,
        v.sh, v.sw, v.dh, v.dw, v.p[0], v.p[1], v.p[2], v.p[3], ceil_mode ? ",ceil" : "",
        !maxpool && cip ? ",cip" : "");
    return fin(b);
}

static val op_gap(gb *b, val x) {
    if (!add(b, ENPU_OP_GLOBAL_AVGPOOL, 1, &x.t)) return none();
    say(b, " gap");
    return fin(b);
}

static val op_axis1(gb *b, val x, enpu_op op, const char *label);

/* The map of the largest mean picked by Gather: ArgMax of the flattened
 * channel means gives int64 indices the graph computes (the Gather then
 * runs on the host with each run's index); the indices stay out of the
 * pool, as no float op may take them as a partner. */
static val op_argmax_gather(gb *b, val x) {
    val f = op_axis1(b, op_gap(b, x), ENPU_OP_FLATTEN, "flatten");
    enpu_node *n = add(b, ENPU_OP_ARGMAX, 1, &f.t);
    if (!n) return none();
    n->attr.reduce = (enpu_reduce_attr){.n_axes = 1, .axes = {1}, .select_last = rchance(&b->r, 0.5)};
    int k = b->g->n_nodes - 1, rc = enpu_infer_node(b->g, k, b->err);
    if (rc) {
        b->rc = rc;
        return none();
    }
    int in[2] = {x.t, b->g->nodes[k].out[0]};
    n = add(b, ENPU_OP_GATHER, 2, in);
    if (!n) return none();
    n->attr.shape.axis = 1;
    say(b, " argmax(c)->gather");
    return fin(b);
}

/* Add / Mul of two activations of one shape (operand order as given). */
static val op_binary(gb *b, enpu_op op, val x, val y, int back) {
    int in[2] = {x.t, y.t};
    if (!add(b, op, 2, in)) return none();
    say(b, " %s(@-%d)", op == ENPU_OP_ADD ? "add" : "mul", back);
    return fin(b);
}

/* Add / Sub / Mul by a constant: of the value's shape, per channel [c,1,1],
 * or a scalar. */
static val op_const_binary(gb *b, val x) {
    rng *r = &b->r;
    static const enpu_op OPS[] = {ENPU_OP_ADD, ENPU_OP_SUB, ENPU_OP_MUL};
    enpu_op op = PICK(r, OPS);
    int form = rint_in(r, 0, 2);
    int64_t dims[4] = {1, x.c, x.h, x.w}, pc[3] = {x.c, 1, 1}, one = 1;
    if (x.rank == 3) dims[2] = x.w, pc[1] = 1;
    double mean = op == ENPU_OP_MUL ? 1.0 : 0.0;
    int k;
    if (form == 0) k = rconst(b, "k", x.rank, dims, 0.3, mean);
    else if (form == 1) k = rconst(b, "k", x.rank - 1, pc, 0.3, mean);
    else k = rconst(b, "k", 1, &one, 0.3, mean);
    int in[2] = {x.t, k};
    if (op != ENPU_OP_SUB && rchance(r, 0.3)) in[0] = k, in[1] = x.t;
    if (!add(b, op, 2, in)) return none();
    static const char *const FORMS[] = {"full", "per-channel", "scalar"};
    say(b, " %s-const(%s)", op == ENPU_OP_ADD ? "add" : op == ENPU_OP_SUB ? "sub" : "mul", FORMS[form]);
    return fin(b);
}

static val op_concat(gb *b, const val *xs, int n, int axis) {
    int in[4];
    for (int i = 0; i < n; i++) in[i] = xs[i].t;
    enpu_node *nd = add(b, ENPU_OP_CONCAT, n, in);
    if (!nd) return none();
    nd->attr.shape.axis = axis;
    say(b, " concat%d%s", n, axis == 1 ? "" : "(h)");
    return fin(b);
}

/* Pad (constant mode) of a spatial value: on H/W (a following conv or
 * average pool folds it into its padding), sometimes on C, sometimes with a
 * value that is not 0 (a host op). */
static val op_pad(gb *b, val x) {
    rng *r = &b->r;
    enpu_node *n = add(b, ENPU_OP_PAD, 1, &x.t);
    if (!n) return none();
    enpu_pad_attr *a = &n->attr.pad;
    a->n_pads = 2 * x.rank;
    for (int i = 2; i < x.rank; i++) a->pads[i] = rint_in(r, 0, 2), a->pads[x.rank + i] = rint_in(r, 0, 2);
    if (rchance(r, 0.15)) a->pads[1] = rint_in(r, 0, 2), a->pads[x.rank + 1] = rint_in(r, 1, 2);
    a->value = rchance(r, 0.2) && !b->tfl ? 0.5f : 0.0f;
    say(b, " pad(");
    for (int i = 0; i < a->n_pads; i++) say(b, "%lld", (long long)a->pads[i]);
    say(b, a->value != 0 ? ",v0.5)" : ")");
    return fin(b);
}

static val op_transpose(gb *b, val x, const int *perm) {
    enpu_node *n = add(b, ENPU_OP_TRANSPOSE, 1, &x.t);
    if (!n) return none();
    n->attr.shape.n_axes = x.rank;
    for (int i = 0; i < x.rank; i++) n->attr.shape.axes[i] = perm[i];
    say(b, " transpose(");
    for (int i = 0; i < x.rank; i++) say(b, "%d", perm[i]);
    say(b, ")");
    return fin(b);
}

static val op_reshape(gb *b, val x, int rank, const int64_t *dims) {
    int in[2] = {x.t, iconst(b, "shape", rank, dims)};
    enpu_node *n = add(b, ENPU_OP_RESHAPE, 2, in);
    if (!n) return none();
    n->attr.shape.n_shape = rank;
    for (int i = 0; i < rank; i++) n->attr.shape.shape[i] = dims[i];
    say(b, " reshape(");
    for (int i = 0; i < rank; i++) say(b, i ? "x%lld" : "%lld", (long long)dims[i]);
    say(b, ")");
    return fin(b);
}

/* Flatten, Softmax: one input, axis 1. */
static val op_axis1(gb *b, val x, enpu_op op, const char *label) {
    enpu_node *n = add(b, op, 1, &x.t);
    if (!n) return none();
    n->attr.shape.axis = 1;
    say(b, " %s", label);
    return fin(b);
}

/* FC on a [1,k] value: Gemm (transB either way, alpha/beta, bias or not) or
 * MatMul (with a bias Add or not). */
static val op_fc(gb *b, val x, int64_t nout) {
    rng *r = &b->r;
    int64_t k = x.c;
    double sd = sqrt(2.0 / (double)k) * (0.5 + runif(r));
    b->macs += k * nout;
    if (rchance(r, 0.3)) {
        int64_t wd[2] = {k, nout}, bd[1] = {nout};
        int in[2] = {x.t, rconst(b, "mw", 2, wd, sd, 0)};
        if (!add(b, ENPU_OP_MATMUL, 2, in)) return none();
        say(b, " matmul(%lld)", (long long)nout);
        val y = fin(b);
        if (rchance(r, 0.6)) {
            int in2[2] = {y.t, rconst(b, "mb", 1, bd, 0.2, 0)};
            if (!add(b, ENPU_OP_ADD, 2, in2)) return none();
            say(b, "+bias");
            y = fin(b);
        }
        return y;
    }
    bool tb = rchance(r, 0.7);
    int64_t wd[2] = {tb ? nout : k, tb ? k : nout}, bd[2] = {1, nout};
    int in[3] = {x.t, rconst(b, "gw", 2, wd, sd, 0), -1};
    int n_in = 2;
    if (rchance(r, 0.8)) { /* C of shape [n] or [1,n] */
        bool r2 = rchance(r, 0.2);
        in[2] = rconst(b, "gb", r2 ? 2 : 1, r2 ? bd : &bd[1], 0.2, 0);
        n_in = 3;
    }
    enpu_node *n = add(b, ENPU_OP_GEMM, n_in, in);
    if (!n) return none();
    n->attr.gemm.alpha = rchance(r, 0.8) ? 1.0f : 0.5f;
    n->attr.gemm.beta = rchance(r, 0.8) ? 1.0f : 2.0f;
    n->attr.gemm.trans_b = tb;
    say(b, " gemm(%lld%s%s,a%g,b%g)", (long long)nout, tb ? ",tB" : "", n_in == 2 ? ",nobias" : "",
        (double)n->attr.gemm.alpha, (double)n->attr.gemm.beta);
    return fin(b);
}

/* ---- the network ------------------------------------------------------------------- */

static bool same_shape(val a, val b) {
    return a.rank == b.rank && a.c == b.c && a.h == b.h && a.w == b.w;
}

/* An earlier value of x's shape (not x), or -1; *back = how many values ago. */
static int pool_partner(gb *b, val x, bool same_hw_only, int *back) {
    int idx[POOL_MAX], n = 0;
    for (int i = 0; i < b->npool; i++) {
        val p = b->pool[i];
        if (p.t == x.t) continue;
        bool ok = same_hw_only ? (p.rank == x.rank && p.h == x.h && p.w == x.w &&
                                  p.c + x.c <= 2 * b->max_c)
                               : same_shape(p, x);
        if (ok) idx[n++] = i;
    }
    if (!n) return -1;
    int i = idx[rint_in(&b->r, 0, n - 1)];
    *back = b->npool - i;
    return i;
}

/* A shape-preserving layer (for residual bodies). */
static val same_layer(gb *b, val x) {
    switch (rweighted(&b->r, (const int[]){4, 3, 1, 2}, 4)) {
    case 0: return op_conv(b, x, 0, x.c, true);
    case 1: return op_conv(b, x, 1, x.c, true);
    case 2: return op_bn(b, x);
    default: return op_act(b, x, -1);
    }
}

/* One step of the body on a spatial value (rank 3 or 4). */
static val body_step(gb *b, val x) {
    rng *r = &b->r;
    enum { CONV, BN, ACT, POOL, RESID, CONCAT, CONSTB, SILU, TRANSPOSE, RESHAPE, PAD, HOSTISH, NSTEP };
    static const int W[NSTEP] = {30, 5, 8, 10, 14, 8, 5, 3, 3, 4, 3, 3};
    switch (rweighted(r, W, NSTEP)) {
    case CONV: {
        val y = op_conv(b, x, -1, 0, rchance(r, 0.3));
        if (rchance(r, 0.5)) y = op_bn(b, y);
        if (rchance(r, 0.7)) y = op_act(b, y, -1);
        return y;
    }
    case BN: return op_bn(b, x);
    case ACT: return op_act(b, x, -1);
    case POOL: return op_pool(b, x, rchance(r, 0.55));
    case RESID: {
        int back = 0;
        int i = rchance(r, 0.4) ? pool_partner(b, x, false, &back) : -1;
        val other, y;
        if (i >= 0) {
            other = b->pool[i];
            y = x;
        } else { /* a block: 1-3 shape-preserving layers, then the shortcut */
            int start = b->npool;
            other = x;
            y = x;
            int n = rint_in(r, 1, 3);
            for (int k = 0; k < n && !b->rc; k++) y = same_layer(b, y);
            back = b->npool - start + 1;
        }
        enpu_op op = rchance(r, 0.8) ? ENPU_OP_ADD : ENPU_OP_MUL;
        val z = rchance(r, 0.5) ? op_binary(b, op, y, other, back) : op_binary(b, op, other, y, back);
        if (rchance(r, 0.3)) z = op_act(b, z, rchance(r, 0.5) ? 0 : -1);
        return z;
    }
    case PAD: {
        val y = op_pad(b, x);
        if (rchance(r, 0.6)) y = rchance(r, 0.7) ? op_conv(b, y, -1, 0, false) : op_pool(b, y, false);
        return y;
    }
    case HOSTISH: /* ops that run on the host: the SYNC path in mid-network */
        switch (b->tfl ? 0 : rint_in(r, 0, 3)) {
        case 0: return op_axis1(b, x, ENPU_OP_SOFTMAX, "softmax(c)");
        case 1: { /* Sub of two activations (x - Sigmoid(x): x - Tanh(x) cancels to
                     x^3/3 for small x, below any int8 scale, a false float alarm) */
            val y = op_act(b, x, 3);
            int in[2] = {x.t, y.t};
            if (!add(b, ENPU_OP_SUB, 2, in)) return none();
            say(b, " sub(@-2)");
            return fin(b);
        }
        case 3: return op_argmax_gather(b, x);
        default: { /* Concat with a constant input */
            int64_t d[4] = {1, rint_in(r, 1, 4), x.h, x.w}, d3[3] = {1, d[1], x.w};
            val k = {rconst(b, "kc", x.rank, x.rank == 4 ? d : d3, 0.5, 0), x.rank, d[1], x.h, x.w};
            return op_concat(b, (val[]){x, k}, 2, 1);
        }
        }
    case CONCAT: {
        val xs[3];
        int n = 0, back = 0;
        if (x.rank == 4 && rchance(r, 0.15)) { /* along H: rows of two branches */
            val y = op_conv(b, x, 0, x.c, rchance(r, 0.5));
            if (y.c == x.c && y.w == x.w) return op_concat(b, (val[]){x, y}, 2, 2);
            return y;
        }
        int i = rchance(r, 0.4) ? pool_partner(b, x, true, &back) : -1;
        if (i >= 0) {
            xs[n++] = x;
            xs[n++] = b->pool[i];
            if (rchance(r, 0.5)) xs[0] = b->pool[i], xs[1] = x;
        } else {
            int nb = rint_in(r, 2, 3);
            for (int k = 0; k < nb && !b->rc; k++) {
                if (k == 0 && rchance(r, 0.3)) xs[n++] = x;
                else {
                    int64_t co = PICK(r, CHANNELS);
                    if (co > b->max_c / nb) co = b->max_c / nb > 0 ? b->max_c / nb : 1;
                    val y = op_conv(b, x, 0, co, true);
                    if (rchance(r, 0.5)) y = op_act(b, y, -1);
                    xs[n++] = y;
                }
            }
        }
        return op_concat(b, xs, n, 1);
    }
    case CONSTB: return op_const_binary(b, x);
    case SILU: { /* x * Sigmoid(x): the quantizer rewrites it to SiLU */
        if (b->tfl) return op_act(b, x, 6); /* no SiLU kernel in TFLite: HARD_SWISH */
        int in[1] = {x.t};
        if (!add(b, ENPU_OP_SIGMOID, 1, in)) return none();
        b->g->nodes[b->g->n_nodes - 1].attr.act = (enpu_act_attr){-INFINITY, INFINITY, 0, 0};
        val s = fin(b);
        int in2[2] = {x.t, s.t};
        if (rchance(r, 0.5)) in2[0] = s.t, in2[1] = x.t;
        if (!add(b, ENPU_OP_MUL, 2, in2)) return none();
        say(b, " x*sigmoid(x)");
        return fin(b);
    }
    case TRANSPOSE: {
        if (x.rank == 3) return op_transpose(b, x, (const int[]){0, 1, 2});
        static const int P[][4] = {{0, 1, 3, 2}, {0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 2, 1}};
        int k = rint_in(r, 0, 3);
        val y = op_transpose(b, x, P[k]);
        if (y.c > b->max_c) y = op_conv(b, y, 0, 8, false); /* back to a small channel count */
        return y;
    }
    default: { /* reshape: to 1-D, between 1-D and 2-D, or a new H x W split */
        if (x.rank == 3) {
            for (int64_t h = 2; h <= x.w / 2; h++)
                if (x.w % h == 0 && rchance(r, 0.5)) {
                    int64_t d[4] = {1, x.c, h, x.w / h};
                    return op_reshape(b, x, 4, d);
                }
            int64_t d[4] = {1, x.c, 1, x.w};
            return op_reshape(b, x, 4, d);
        }
        if (rchance(r, 0.4)) {
            int64_t d[3] = {1, x.c, x.h * x.w};
            return op_reshape(b, x, 3, d);
        }
        int64_t hw = x.h * x.w, h = 1;
        for (int64_t k = 2; k <= hw; k++)
            if (hw % k == 0 && rchance(r, 0.35)) {
                h = k;
                break;
            }
        if (rchance(r, 0.3) && x.c % 2 == 0) { /* moves channels into space */
            int64_t d[4] = {1, x.c / 2, h, 2 * hw / h};
            return op_reshape(b, x, 4, d);
        }
        int64_t d[4] = {1, x.c, h, hw / h};
        return op_reshape(b, x, 4, d);
    }
    }
}

/* ---- the architecture ----------------------------------------------------------------- */

static int64_t pow2_at_least(int64_t v, int64_t floor_) {
    int64_t p = floor_;
    while (p < v && p < ((int64_t)1 << 30)) p <<= 1;
    return p;
}

/* A random legal architecture for a network needing about fm_bytes of
 * feature maps (largest adjacent pair, rounded to words), w_bytes of
 * weights and n_nodes instructions. */
static int gen_arch(rng *r, int64_t fm_bytes, int64_t w_bytes, int n_nodes, enpu_arch *a,
                    enpu_err *err) {
    int kind = rweighted(r, (const int[]){1, 1, 8}, 3);
    int rc = enpu_arch_preset(kind == 1 ? "large" : "easynpu", a, err);
    if (rc || kind < 2) return rc;
    snprintf(a->name, sizeof a->name, "fuzz");
    static const int PES[] = {8, 16, 32};
    a->pes = PICK(r, PES);
    a->bus_bits = 8 * a->pes;
    a->ifmap_pads = a->weight_pad_groups = a->pes;
    static const int DIF[] = {8, 16, 32, 64, 64, 128, 256, 1024};
    static const int DW[] = {2, 4, 8, 16, 16, 32, 64};
    static const int DPS[] = {4, 8, 16, 32, 64, 64, 128, 512};
    a->ifmap_pad_depth = PICK(r, DIF);
    a->weight_pad_depth = rchance(r, 0.03) ? 1 : PICK(r, DW);
    a->psum_depth = PICK(r, DPS);
    static const int LD[] = {1, 1, 1, 2, 3, 5}, LW[] = {1, 1, 1, 2, 3, 7};
    static const int F[] = {1, 2, 4, 4, 4, 8}, DC[] = {0, 1, 1, 1, 2, 3};
    static const int D[] = {1, 2, 2, 3, 4}, RQ[] = {0, 1, 2, 2, 3, 5};
    a->dtcm_read_latency = PICK(r, LD);
    a->weight_mem_latency = PICK(r, LW);
    /* the compiler refuses weight_mem_latency >= weight_pad_depth: keep that rare */
    if (a->weight_mem_latency >= a->weight_pad_depth && rchance(r, 0.8))
        a->weight_mem_latency = a->weight_pad_depth > 1 ? a->weight_pad_depth - 1 : 1;
    a->instr_fetch_cycles = PICK(r, F);
    a->decode_cycles = PICK(r, DC);
    a->pe_pipeline_depth = PICK(r, D);
    a->requant_latency = PICK(r, RQ);
    static const int HS[] = {0, 5, 16};
    a->host_sync_cycles = PICK(r, HS);
    static const int MB[] = {16, 18, 20, 20, 24};
    a->mult_bits = PICK(r, MB);
    a->acc_bits = rchance(r, 0.9) ? 32 : 24;
    static const int AS[] = {4, 8, 16, 16, 32, 64};
    a->act_segments = PICK(r, AS);
    /* memories: mostly ample for the network, sometimes tight, sometimes
     * deliberately too small (the compiler must refuse cleanly) */
    double sc[4];
    for (int i = 0; i < 4; i++) {
        static const double BIG[] = {1, 2, 2, 4, 8};
        sc[i] = rchance(r, 0.05) ? 0.05 : rchance(r, 0.1) ? 0.5 : PICK(r, BIG);
    }
    int64_t wb = a->pes;
    a->main_dtcm_bytes = pow2_at_least((int64_t)(sc[0] * 2.0 * (double)fm_bytes), 4 * wb);
    a->skip_dtcm_bytes = pow2_at_least((int64_t)(sc[1] * (double)fm_bytes), 4 * wb);
    a->weight_mem_bytes = pow2_at_least((int64_t)(sc[2] * (double)w_bytes), 4 * wb);
    a->itcm_bytes = pow2_at_least((int64_t)(sc[3] * 64.0 * (n_nodes + 4)), 64);
    /* off-chip memory: mostly the preset's DRAM with random timing and DMA
     * engines (the tight memories above then stream through it), sometimes
     * none (everything must fit on chip) */
    if (rchance(r, 0.1)) {
        a->dram_bytes = 0;
    } else {
        static const int BPC[] = {1, 2, 4, 8, 8, 16, 64}, LAT[] = {0, 3, 30, 30, 100};
        static const int BURST[] = {16, 32, 64, 64, 128}, BANKS[] = {1, 2, 8}, ROW[] = {256, 2048};
        static const int MISS[] = {0, 4, 6}, ENG[] = {1, 2, 2, 3, 4}, QD[] = {1, 2, 4, 4, 8};
        a->dram_bytes_per_cycle = PICK(r, BPC);
        a->dram_latency = PICK(r, LAT);
        a->dram_burst_bytes = PICK(r, BURST);
        a->dram_banks = PICK(r, BANKS);
        a->dram_row_bytes = PICK(r, ROW);
        a->dram_row_miss_cycles = PICK(r, MISS);
        a->dma_engines = PICK(r, ENG);
        a->dma_queue_depth = PICK(r, QD);
    }
    /* drawn last, so the draws above stay those of the fixed seed set:
     * lane groups (the compiler uses those that divide pes) and PE rows */
    static const int LG[] = {1, 2, 4, 4, 8}, ROWS[] = {1, 1, 1, 2, 4};
    a->lane_groups_max = PICK(r, LG);
    a->pe_rows = PICK(r, ROWS);
    /* the instruction must hold the address fields: shrink the largest
     * memory until it does (a 1 GiB DTCM on an 8-bit bus does not fit) */
    for (int tries = 0; tries < 64; tries++) {
        enpu_err e = {0};
        rc = enpu_arch_validate(a, &e);
        if (rc != ENPU_E_LIMIT) {
            if (rc) *err = e;
            return rc;
        }
        int64_t *m[3] = {&a->main_dtcm_bytes, &a->skip_dtcm_bytes, &a->weight_mem_bytes};
        int big = 0;
        for (int i = 1; i < 3; i++)
            if (*m[i] > *m[big]) big = i;
        *m[big] /= 2;
    }
    return enpu_fail(err, ENPU_E_INVALID, "generator: no legal memory sizes for arch");
}

/* ---- cases -------------------------------------------------------------------------------- */

void gg_case_free(gg_case *c) {
    if (c->g) {
        enpu_calib_free(c->calib, c->n_calib * c->g->n_inputs);
        enpu_calib_free(c->input, c->g->n_inputs);
    }
    enpu_graph_free(c->g);
    memset(c, 0, sizeof *c);
}

/* Inputs of N(mu, sd) per graph input (mu, sd drawn per input). */
static int gen_inputs(rng *r, const enpu_graph *g, int n_samples, enpu_buf **out, enpu_err *err) {
    int ni = g->n_inputs;
    enpu_buf *bufs = calloc((size_t)(n_samples * ni), sizeof *bufs);
    if (!bufs) return enpu_fail(err, ENPU_E_NOMEM, "generator: out of memory");
    double mu[2] = {0, 0}, sd[2] = {1, 1};
    for (int k = 0; k < ni && k < 2; k++) mu[k] = runif(r) - 0.5, sd[k] = 0.5 + 1.5 * runif(r);
    for (int i = 0; i < n_samples * ni; i++) {
        const enpu_tensor *t = &g->tensors[g->inputs[i % ni]];
        int rc = enpu_buf_alloc(&bufs[i], ENPU_DT_FLOAT32, t->rank, t->dims, err);
        if (rc) {
            enpu_calib_free(bufs, i);
            return rc;
        }
        int k = i % ni < 2 ? i % ni : 1;
        float *v = bufs[i].data;
        for (int64_t e = 0; e < enpu_buf_numel(&bufs[i]); e++) v[e] = (float)(mu[k] + sd[k] * rnorm(r));
    }
    *out = bufs;
    return 0;
}

/* Calibration and test inputs of c->g from seed: one draw for both, so the
 * test input follows the calibration's distribution. */
static int case_inputs(gg_case *c, uint64_t seed, enpu_err *err) {
    rng ri = {seed};
    c->n_calib = rint_in(&ri, 2, 4);
    int ni = c->g->n_inputs;
    int rc = gen_inputs(&ri, c->g, c->n_calib + 1, &c->calib, err);
    if (rc) return rc;
    c->input = calloc((size_t)ni, sizeof *c->input);
    if (!c->input) return enpu_fail(err, ENPU_E_NOMEM, "generator: out of memory");
    memcpy(c->input, c->calib + (size_t)c->n_calib * ni, (size_t)ni * sizeof *c->input);
    memset(c->calib + (size_t)c->n_calib * ni, 0, (size_t)ni * sizeof *c->input);
    return 0;
}

/* Feature-map bytes of a value for word bytes wb. */
static int64_t val_bytes(val v, int64_t wb) { return v.h * v.w * cdiv(v.c, wb) * wb; }

/* A random systolic or row-stationary architecture (docs/systolic.md,
 * docs/rowstat.md) for a network of about fm_bytes of feature maps and
 * w_bytes of weights: array shape, banks and scheme or PE array, buffers,
 * networks and DRAM, latencies, and the host CPU's figures (host ops carry
 * much of such a network), mostly ample memories, sometimes tight. */
static int gen_engine_arch(rng *r, int64_t fm_bytes, int64_t w_bytes, enpu_arch *a, enpu_err *err) {
    static const double BIG[] = {0.05, 0.5, 1, 2, 4, 8, 8};
    if (rchance(r, 0.5)) {
        static const char *const P[] = {"systolic", "systolic-1x4", "systolic-4x1"};
        int rc = enpu_arch_preset(PICK(r, P), a, err);
        if (rc) return rc;
        static const int BANKS[] = {1, 2, 4, 6}, SCH[] = {0, 1, 3, 4}, BUS[] = {4, 8, 16, 32};
        a->sya_rows = rint_in(r, 1, 8), a->sya_cols = rint_in(r, 1, 8);
        a->sya_banks = PICK(r, BANKS);
        do a->sya_bank_rows = rint_in(r, 1, (int)a->sya_banks);
        while (a->sya_banks % a->sya_bank_rows);
        a->sya_scheme = PICK(r, SCH);
        a->sya_cfg_cycles = rint_in(r, 0, 2);
        a->dtcm_read_latency = rint_in(r, 1, 2), a->weight_mem_latency = rint_in(r, 1, 2);
        a->requant_latency = rint_in(r, 0, 3);
        a->bus_bits = 8 * PICK(r, BUS);
        a->pes = a->ifmap_pads = a->weight_pad_groups = a->bus_bits / 8;
        int64_t wb = a->pes;
        a->main_dtcm_bytes = pow2_at_least((int64_t)(PICK(r, BIG) * 2.0 * (double)fm_bytes), 4 * wb);
        a->weight_mem_bytes = pow2_at_least((int64_t)(PICK(r, BIG) * 2.0 * (double)w_bytes), 4 * wb);
    } else {
        int rc = enpu_arch_preset(rchance(r, 0.5) ? "rowstat" : "eyeriss", a, err);
        if (rc) return rc;
        a->rs_rows = rint_in(r, 1, 8);
        a->rs_cols = rint_in(r, 1, 16);
        a->rs_ifmap_lb_depth = rint_in(r, 5, 64);
        a->rs_filter_lb_depth = rint_in(r, 25, 512);
        a->rs_psum_depth = rint_in(r, 1, 32);
        a->rs_fifo_depth = rint_in(r, 64, 512);
        a->rs_psum_bits = rchance(r, 0.5) ? 64 : 48;
        a->rs_glb_bytes = 1024 * rint_in(r, 16, 128);
        a->rs_ifmap_net_values = rint_in(r, 1, 4);
        a->rs_filter_net_values = rint_in(r, 1, 4);
        a->rs_psum_net_values = rint_in(r, 1, 8);
        a->rs_pe_pipeline = rint_in(r, 1, 3);
        a->rs_config_cycles = rint_in(r, 0, 40);
        a->requant_latency = rint_in(r, 0, 3);
        a->dram_bytes_per_cycle = rint_in(r, 1, 16);
        a->dram_latency = rint_in(r, 0, 50);
        a->dram_burst_bytes = 8 << rint_in(r, 0, 4);
        a->dram_row_miss_cycles = rint_in(r, 0, 8);
    }
    a->instr_fetch_cycles = rint_in(r, 1, 4), a->decode_cycles = rint_in(r, 0, 2);
    static const int HS[] = {0, 5, 16}, HOP[] = {0, 20, 2000}, HE[] = {0, 1, 4};
    a->host_sync_cycles = PICK(r, HS);
    a->hostcpu_op_cycles = PICK(r, HOP);
    a->hostcpu_cvt_cycles = PICK(r, HE), a->hostcpu_move_cycles = PICK(r, HE);
    a->hostcpu_arith_cycles = PICK(r, HE), a->hostcpu_mac_cycles = PICK(r, HE);
    snprintf(a->name, sizeof a->name, "fuzz-%s", a->engine == ENPU_ENGINE_SYSTOLIC ? "sya" : "rs");
    return enpu_arch_validate(a, err);
}

/* The constant is one for which no seed named as a regression case
 * (docs/hardening.md, test_offchip_findings) turns into a tflite case: they
 * keep the graphs in which they were found. */
bool gg_seed_tflite(uint64_t seed) {
    rng r = {seed ^ 0x7F1E7F1E7F1E0030ull};
    return rnext(&r) % GG_TFLITE_ONE_IN == 0;
}

/* The constant is one for which no seed named as a regression case keeps
 * its EasyNPU graph (checked by test_graph_fuzz's test_engine_seeds). */
bool gg_seed_engine(uint64_t seed) {
    if (gg_seed_tflite(seed)) return false;
    rng r = {seed ^ GG_ENGINE_SALT};
    return rnext(&r) % GG_ENGINE_ONE_IN == 0;
}

int gg_generate(uint64_t seed, gg_case *c, enpu_err *err) {
    memset(c, 0, sizeof *c);
    c->seed = seed;
    gb b;
    memset(&b, 0, sizeof b);
    b.tfl = gg_seed_tflite(seed);
    b.r.s = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
    b.err = err;
    b.desc = c->desc;
    b.dcap = sizeof c->desc;
    rng *r = &b.r;
    b.g = enpu_graph_new("fuzz");
    if (!b.g) return enpu_fail(err, ENPU_E_NOMEM, "generator: out of memory");
    b.g->opset = 13;
    c->g = b.g;
    /* one rng draw decides the size class, so most graphs stay small */
    static const int64_t BUDGET[] = {20000, 60000, 150000, 400000};
    b.macs_budget = PICK(r, BUDGET);
    b.max_c = rchance(r, 0.7) ? 48 : 64;

    /* inputs */
    static const int C0[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 24, 33};
    int64_t c0 = PICK(r, C0);
    bool one_d = rchance(r, 0.1);
    int64_t h0 = one_d ? 1 : rint_in(r, 1, 20), w0 = rint_in(r, 1, one_d ? 48 : 20);
    if (rchance(r, 0.1)) h0 = 1;
    int64_t dims[4] = {1, c0, h0, w0}, d3[3] = {1, c0, w0};
    int n_inputs = rchance(r, 0.08) ? 2 : 1;
    val x = none();
    int ins[2];
    for (int i = 0; i < n_inputs; i++) {
        ins[i] = ftensor(&b, "x", ENPU_DT_FLOAT32, one_d ? 3 : 4, one_d ? d3 : dims);
        if (ins[i] >= 0) {
            int rc = enpu_graph_add_input(b.g, ins[i], err);
            if (rc) b.rc = rc;
            b.g->tensors[ins[i]].layout = ENPU_LAYOUT_NCHW;
        }
    }
    if (b.rc) return b.rc;
    say(&b, "in %s%lldx%lldx%lld%s |", one_d ? "1d " : "", (long long)c0, (long long)h0,
        (long long)w0, n_inputs > 1 ? " x2" : "");
    x = val_of(b.g, ins[0]);
    b.pool[b.npool++] = x;
    if (n_inputs == 2) {
        val x2 = val_of(b.g, ins[1]);
        b.pool[b.npool++] = x2;
        x = rchance(r, 0.5) ? op_binary(&b, ENPU_OP_ADD, x, x2, 1) : op_concat(&b, (val[]){x, x2}, 2, 1);
    }

    /* body */
    int steps = rint_in(r, 1, 7);
    for (int s = 0; s < steps && !b.rc; s++) {
        val y = body_step(&b, x);
        if (!b.rc) x = y;
    }
    /* tail: the classifier, or end on the map */
    val out = x;
    int tail = b.rc ? -1 : rweighted(r, (const int[]){4, 3, 3}, 3);
    if (tail >= 1 && !b.rc) {
        val f = x;
        if (tail == 1 || f.c * f.h * f.w > 3000) f = op_gap(&b, f);
        if (rchance(r, 0.7)) f = op_axis1(&b, f, ENPU_OP_FLATTEN, "flatten");
        else {
            int64_t d[2] = {1, f.c * f.h * f.w};
            f = op_reshape(&b, f, 2, d);
        }
        int nfc = rint_in(r, 1, 2);
        for (int k = 0; k < nfc && !b.rc; k++) {
            f = op_fc(&b, f, PICK(r, CHANNELS));
            if (k + 1 < nfc || rchance(r, 0.3)) f = op_act(&b, f, -1);
        }
        if (rchance(r, 0.15)) f = op_axis1(&b, f, ENPU_OP_SOFTMAX, "softmax");
        out = f;
    }
    if (b.rc) return b.rc;
    int rc = enpu_graph_add_output(b.g, out.t, err);
    /* sometimes an intermediate value is an output too */
    if (!rc && rchance(r, 0.08) && b.npool > 2) {
        val extra = b.pool[rint_in(r, 1, b.npool - 2)];
        if (extra.t != out.t && !(b.g->tensors[extra.t].flags & (ENPU_T_OUTPUT | ENPU_T_INPUT))) {
            rc = enpu_graph_add_output(b.g, extra.t, err);
            say(&b, " +output %s", b.g->tensors[extra.t].name);
        }
    }
    if (rc) return rc;
    if ((rc = enpu_graph_toposort(b.g, err)) || (rc = enpu_graph_infer_shapes(b.g, err)) ||
        (rc = enpu_graph_validate(b.g, err)))
        return enpu_err_prefix(err, "generator: seed %llu", (unsigned long long)seed);

    /* the architecture, sized from the network */
    int64_t fm = 0;
    for (int i = 0; i < b.npool; i++) {
        int64_t v = val_bytes(b.pool[i], 32);
        if (v > fm) fm = v;
    }
    int64_t wbytes = b.params * 3 / 2 + 64 * b.g->n_nodes + 4096;
    rng ra = {rnext(r)};
    if ((rc = gen_arch(&ra, 2 * fm, wbytes, b.g->n_nodes, &c->arch, err))) return rc;
    if (b.tfl) c->arch.requant = ENPU_REQUANT_TFLITE;
    char head[GG_DESC_MAX];
    const enpu_arch *a = &c->arch;
    if (gg_seed_engine(seed)) {
        /* the same graph on another engine (its own draws: the main stream
         * is the fixed seed set's) */
        rng re = {seed ^ GG_ENGINE_SALT ^ 0xA5A5A5A5A5A5A5A5ull};
        if ((rc = gen_engine_arch(&re, 2 * fm, wbytes, &c->arch, err))) return rc;
        if (a->engine == ENPU_ENGINE_SYSTOLIC)
            snprintf(head, sizeof head,
                     "arch %s %lldx%lld b%lld/%lld s%lld cfg%lld bus%lld mem %lld/%lld L%lld/%lld Rq%lld F%lld Dc%lld "
                     "H%lld/%lld | ",
                     a->name, (long long)a->sya_rows, (long long)a->sya_cols, (long long)a->sya_banks,
                     (long long)a->sya_bank_rows, (long long)a->sya_scheme, (long long)a->sya_cfg_cycles,
                     (long long)a->bus_bits, (long long)a->main_dtcm_bytes, (long long)a->weight_mem_bytes,
                     (long long)a->dtcm_read_latency, (long long)a->weight_mem_latency,
                     (long long)a->requant_latency, (long long)a->instr_fetch_cycles, (long long)a->decode_cycles,
                     (long long)a->host_sync_cycles, (long long)a->hostcpu_op_cycles);
        else
            snprintf(head, sizeof head,
                     "arch %s %lldx%lld lb %lld/%lld/%lld fifo%lld psum%lld glb%lld net %lld/%lld/%lld pipe%lld "
                     "cfg%lld Rq%lld dram B/c%lld L%lld burst%lld miss%lld H%lld/%lld | ",
                     a->name, (long long)a->rs_rows, (long long)a->rs_cols, (long long)a->rs_ifmap_lb_depth,
                     (long long)a->rs_filter_lb_depth, (long long)a->rs_psum_depth, (long long)a->rs_fifo_depth,
                     (long long)a->rs_psum_bits, (long long)a->rs_glb_bytes, (long long)a->rs_ifmap_net_values,
                     (long long)a->rs_filter_net_values, (long long)a->rs_psum_net_values,
                     (long long)a->rs_pe_pipeline, (long long)a->rs_config_cycles, (long long)a->requant_latency,
                     (long long)a->dram_bytes_per_cycle, (long long)a->dram_latency,
                     (long long)a->dram_burst_bytes, (long long)a->dram_row_miss_cycles,
                     (long long)a->host_sync_cycles, (long long)a->hostcpu_op_cycles);
    } else
    snprintf(head, sizeof head,
             "arch %s rq %s P%lld Dif%lld Dw%lld Dps%lld mem %lld/%lld/%lld/%lld Ld%lld Lw%lld F%lld Dc%lld "
             "D%lld Rq%lld mult%lld acc%lld seg%lld dram %lld B/c%lld L%lld E%lld Q%lld LG%lld R%lld | ",
             a->name, enpu_requant_name(a->requant), (long long)a->pes, (long long)a->ifmap_pad_depth,
             (long long)a->weight_pad_depth,
             (long long)a->psum_depth, (long long)a->main_dtcm_bytes, (long long)a->skip_dtcm_bytes,
             (long long)a->weight_mem_bytes, (long long)a->itcm_bytes, (long long)a->dtcm_read_latency,
             (long long)a->weight_mem_latency, (long long)a->instr_fetch_cycles,
             (long long)a->decode_cycles, (long long)a->pe_pipeline_depth,
             (long long)a->requant_latency, (long long)a->mult_bits, (long long)a->acc_bits,
             (long long)a->act_segments, (long long)a->dram_bytes, (long long)a->dram_bytes_per_cycle,
             (long long)a->dram_latency, (long long)a->dma_engines, (long long)a->dma_queue_depth,
             (long long)a->lane_groups_max, (long long)a->pe_rows);
    size_t hl = strlen(head);
    if (hl < sizeof c->desc) {
        memmove(c->desc + hl, c->desc, sizeof c->desc - hl);
        memcpy(c->desc, head, hl);
        c->desc[sizeof c->desc - 1] = 0;
    }

    return case_inputs(c, rnext(r), err);
}

int gg_case_from_graph(enpu_graph *g, const enpu_arch *arch, uint64_t seed, gg_case *c,
                       enpu_err *err) {
    memset(c, 0, sizeof *c);
    c->seed = seed;
    c->g = g;
    c->arch = *arch;
    snprintf(c->desc, sizeof c->desc, "graph '%s' on %s", g->name, arch->name);
    return case_inputs(c, seed, err);
}

int gg_case_from_files(const char *onnx, const char *calib, const char *input,
                       const char *arch_spec, gg_case *c, enpu_err *err) {
    memset(c, 0, sizeof *c);
    int rc = enpu_arch_load(arch_spec, &c->arch, err);
    if (!rc) rc = enpu_onnx_load(onnx, &c->g, err);
    if (rc) return rc;
    if ((rc = enpu_calib_load(c->g, calib, &c->calib, &c->n_calib, err))) return rc;
    if (c->g->n_inputs != 1)
        return enpu_fail(err, ENPU_E_USAGE, "%s: %d inputs; one input file given", onnx,
                         c->g->n_inputs);
    c->input = calloc(1, sizeof *c->input);
    if (!c->input) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if ((rc = enpu_tensor_read(input, c->input, err)) || (rc = enpu_buf_to_f32(c->input, err)))
        return rc;
    snprintf(c->desc, sizeof c->desc, "%s on %s", onnx, c->arch.name);
    return 0;
}

/* ---- the check -------------------------------------------------------------------------- */

static void outcome(gg_outcome *o, gg_verdict v, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void outcome(gg_outcome *o, gg_verdict v, const char *stage, const char *fmt, ...) {
    o->verdict = v;
    o->stage = stage;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->msg, sizeof o->msg, fmt, ap);
    va_end(ap);
}

/* A refusal is clean when it is NOFIT or UNSUPPORTED with one line that names
 * what does not fit or is not supported (a quoted name) and was not cut. */
static void refusal(gg_outcome *o, const char *stage, int rc, const enpu_err *err) {
    const char *m = err->msg;
    size_t len = strlen(m);
    bool one_line = len > 0 && len < ENPU_ERR_MSG_MAX - 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)m[i] < 0x20) one_line = false;
    if ((rc != ENPU_E_NOFIT && rc != ENPU_E_UNSUPPORTED) || err->code != rc) {
        outcome(o, GG_FAIL, stage, "error [%s] (status %d): %s", enpu_status_name(err->code), rc, m);
        return;
    }
    if (!one_line || !strchr(m, '\'')) {
        outcome(o, GG_FAIL, stage, "unclear refusal [%s]: '%s'", enpu_status_name(err->code), m);
        return;
    }
    outcome(o, GG_REFUSED, stage, "[%s] %s", enpu_status_name(err->code), m);
    static const char *const KEYS[][2] = {
        {"weight_mem_latency", "weight_mem_latency >= weight_pad_depth"},
        {"element order", "reshape order"}, {"reads constant", "host op with a constant operand"},
        {"instruction's field", "instruction field"}, {"main DTCM", "main DTCM"},
        {"skip DTCM", "skip DTCM"},         {"weight memory", "weight memory"},
        {"ITCM", "ITCM"},                   {"ifmap pad", "ifmap pad"},
        {"psum", "psum"},                   {"weight pad", "weight pad"},
        {"accumulator", "accumulator"},     {"acc_bits", "accumulator"},
        {"TFLite", "no TFLite form"},       {"requant tflite", "no TFLite form"}};
    const char *cat = "other";
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        if (strstr(m, KEYS[i][0])) {
            cat = KEYS[i][1];
            break;
        }
    snprintf(o->why, sizeof o->why, "%s %s: %s", stage, enpu_status_name(err->code), cat);
}

/* The program survives serialization and a listing round trip unchanged. */
static int program_roundtrip(const enpu_program *p, const enpu_arch *arch, char *msg, size_t n) {
    enpu_err err = {0};
    uint8_t *bytes = NULL, *bytes2 = NULL;
    size_t nb = 0, nb2 = 0;
    char *listing = NULL;
    enpu_program q, q2;
    memset(&q, 0, sizeof q);
    memset(&q2, 0, sizeof q2);
    int rc = enpu_program_validate(p, &err);
    if (!rc) rc = enpu_program_serialize(p, &bytes, &nb, &err);
    if (!rc) rc = enpu_program_read_mem(bytes, nb, "program", arch, &q, &err);
    if (!rc && !(listing = enpu_program_disasm(&q, &err)))
        rc = err.code ? err.code : enpu_fail(&err, ENPU_E_NOMEM, "disasm: out of memory");
    if (!rc) rc = enpu_program_asm(listing, strlen(listing), "listing", arch, &q2, &err);
    if (!rc) rc = enpu_program_serialize(&q2, &bytes2, &nb2, &err);
    if (rc) snprintf(msg, n, "%s", err.msg);
    else if (nb != nb2 || memcmp(bytes, bytes2, nb) != 0) {
        rc = ENPU_E_MISMATCH;
        snprintf(msg, n, "the listing does not reassemble to the same %zu bytes", nb);
    }
    free(bytes);
    free(bytes2);
    free(listing);
    enpu_program_free(&q);
    enpu_program_free(&q2);
    return rc;
}

/* One simulation with the golden check after every chain and at the end. */
static int simulate(const gg_case *c, const enpu_program *prog, const enpu_graph *qg,
                    enpu_gexec *ex, enpu_sim_mode mode, bool per_cycle, uint64_t max_cycles,
                    enpu_sim_result *res, int *compared, enpu_err *err) {
    enpu_golden_check gc = {qg, ex, 0};
    enpu_sim_opts o = {0};
    o.mode = mode;
    o.per_cycle = per_cycle;
    o.check = mode == ENPU_SIM_CYCLE; /* the simulator's own replay too */
    o.max_cycles = max_cycles;
    o.on_layer = enpu_golden_check_layer;
    o.cb_ctx = &gc;
    enpu_sim *sim = NULL;
    int rc = enpu_sim_new(prog, &c->arch, &o, &sim, err);
    if (!rc) rc = enpu_sim_run(sim, c->input, c->g->n_inputs, res, err);
    if (!rc) rc = enpu_golden_check_outputs(&gc, res, err);
    /* outputs come back in the graph's shapes */
    for (int i = 0; !rc && i < res->n_outputs && i < qg->n_outputs; i++) {
        const enpu_tensor *t = &qg->tensors[qg->outputs[i]];
        const enpu_buf *ob = &res->outputs[i];
        bool same = ob->rank == t->rank;
        for (int k = 0; same && k < t->rank; k++) same = ob->dims[k] == t->dims[k];
        if (!same) {
            char want[96];
            rc = enpu_fail(err, ENPU_E_MISMATCH, "output %d '%s' has rank %d (dim 1: %lld), the graph's %s",
                           i, t->name, ob->rank, ob->rank > 1 ? (long long)ob->dims[1] : -1LL,
                           enpu_shape_str(t, want, sizeof want));
        }
    }
    if (!rc && res->n_outputs != qg->n_outputs)
        rc = enpu_fail(err, ENPU_E_MISMATCH, "%d outputs, the graph has %d", res->n_outputs,
                       qg->n_outputs);
    if (!rc && mode == ENPU_SIM_CYCLE && res->checked && !res->bit_exact)
        rc = enpu_fail(err, ENPU_E_MISMATCH, "the replay check did not report bit-exact");
    *compared = gc.compared;
    enpu_sim_free(sim);
    return rc;
}

/* The run on the per-cycle path (b) against the fast-forwarded one (a):
 * cycles, every activity and traffic figure of every instruction, the
 * outputs bit for bit (docs/microarch.md §15). */
static int compare_paths(const enpu_sim_result *a, const enpu_sim_result *b, char *msg, size_t n) {
    if (a->total_cycles != b->total_cycles || a->n_layers != b->n_layers || a->n_outputs != b->n_outputs) {
        snprintf(msg, n, "%llu cycles, %llu on the per-cycle path", (unsigned long long)a->total_cycles,
                 (unsigned long long)b->total_cycles);
        return ENPU_E_MISMATCH;
    }
    for (int i = 0; i < a->n_layers; i++) {
        const enpu_layer_stats *x = &a->layers[i], *y = &b->layers[i];
        if (x->cycles != y->cycles || x->start_cycle != y->start_cycle || x->end_cycle != y->end_cycle ||
            x->psum_peak != y->psum_peak || memcmp(x->activity, y->activity, sizeof x->activity) ||
            memcmp(x->reads, y->reads, sizeof x->reads) || memcmp(x->writes, y->writes, sizeof x->writes)) {
            snprintf(msg, n, "instr %d '%s' (%s): its statistics differ on the per-cycle path (%llu "
                     "cycles, %llu there)", i, x->name, x->op, (unsigned long long)x->cycles,
                     (unsigned long long)y->cycles);
            return ENPU_E_MISMATCH;
        }
    }
    for (int i = 0; i < a->n_outputs; i++) {
        int64_t e = enpu_buf_numel(&a->outputs[i]);
        if (e != enpu_buf_numel(&b->outputs[i]) ||
            memcmp(a->outputs[i].data, b->outputs[i].data, (size_t)e * sizeof(float))) {
            snprintf(msg, n, "output %d differs on the per-cycle path", i);
            return ENPU_E_MISMATCH;
        }
    }
    return 0;
}

/* The systolic engine's counts per instruction (every memory's reads and
 * writes, the datapath operations) against its cost model's
 * (enpu_sya_model_program, docs/systolic.md "Statistics"). */
static int compare_sya_counts(const enpu_program *p, const enpu_sim_result *res, char *msg, size_t n) {
    size_t ni = (size_t)p->n_instr;
    int64_t *act = calloc(ni * ENPU_ACT_COUNT + 1, sizeof *act);
    int64_t *rd = calloc(ni * ENPU_MEM_COUNT + 1, sizeof *rd), *wr = calloc(ni * ENPU_MEM_COUNT + 1, sizeof *wr);
    int64_t *op = calloc(ni * ENPU_UOP_COUNT + 1, sizeof *op);
    int rc = 0;
    if (!act || !rd || !wr || !op || enpu_sya_model_program(p, act, rd, wr, op) < 0) {
        snprintf(msg, n, "out of memory");
        rc = ENPU_E_NOMEM;
    }
    for (size_t i = 0; i < ni && i < (size_t)res->n_layers && !rc; i++) {
        const enpu_layer_stats *l = &res->layers[i];
        for (int k = 0; k < ENPU_MEM_COUNT && !rc; k++) {
            int64_t mr = rd[i * ENPU_MEM_COUNT + (size_t)k], mw = wr[i * ENPU_MEM_COUNT + (size_t)k];
            if ((uint64_t)mr != l->reads[k] || (uint64_t)mw != l->writes[k]) {
                rc = ENPU_E_MISMATCH;
                snprintf(msg, n, "instr %zu '%s' (%s) %s: simulated %llu read, %llu written; modelled %lld, %lld", i,
                         l->name, l->op, enpu_memory_name((enpu_memory)k), (unsigned long long)l->reads[k],
                         (unsigned long long)l->writes[k], (long long)mr, (long long)mw);
            }
        }
        for (int k = 0; k < ENPU_UOP_COUNT && !rc; k++) {
            int64_t m = op[i * ENPU_UOP_COUNT + (size_t)k];
            if ((uint64_t)m != l->uops[k]) {
                rc = ENPU_E_MISMATCH;
                snprintf(msg, n, "instr %zu '%s' (%s) %s operations: simulated %llu, modelled %lld", i, l->name, l->op,
                         enpu_unit_op_name((enpu_unit_op)k), (unsigned long long)l->uops[k], (long long)m);
            }
        }
    }
    free(act), free(rd), free(wr), free(op);
    return rc;
}

/* Simulated cycles per instruction and activity against the cost model
 * (on a systolic arch also every count, compare_sya_counts; on a
 * row-stationary arch every figure, enpu_rs_model_diff). */
static int compare_cost(const enpu_program *p, const enpu_sim_result *res, char *msg, size_t n) {
    int ni = p->n_instr;
    int64_t *cyc = calloc((size_t)ni, sizeof *cyc);
    int64_t *act = calloc((size_t)ni * ENPU_ACT_COUNT, sizeof *act);
    if (!cyc || !act) {
        free(cyc), free(act);
        snprintf(msg, n, "out of memory");
        return ENPU_E_NOMEM;
    }
    int64_t total = enpu_cost_program(p, cyc, act);
    int rc = 0;
    for (int i = 0; i < ni && i < res->n_layers && !rc; i++) {
        const enpu_layer_stats *l = &res->layers[i];
        bool same = (int64_t)l->cycles == cyc[i];
        for (int k = 0; k < ENPU_ACT_COUNT; k++)
            same = same && (int64_t)l->activity[k] == act[(size_t)i * ENPU_ACT_COUNT + k];
        if (same) continue;
        rc = ENPU_E_MISMATCH;
        int len = snprintf(msg, n, "instr %d '%s' (%s, chain head %d): simulated %llu, modelled %lld cycles",
                           i, l->name, l->op, l->chain_head, (unsigned long long)l->cycles,
                           (long long)cyc[i]);
        for (int k = 0; k < ENPU_ACT_COUNT && len > 0 && (size_t)len < n; k++) {
            int64_t m = act[(size_t)i * ENPU_ACT_COUNT + k];
            if ((int64_t)l->activity[k] != m)
                len += snprintf(msg + len, n - (size_t)len, "; %s %llu vs %lld",
                                enpu_activity_name((enpu_activity)k),
                                (unsigned long long)l->activity[k], (long long)m);
        }
    }
    if (!rc && res->n_layers != ni) {
        rc = ENPU_E_MISMATCH;
        snprintf(msg, n, "%d simulated rows for %d instructions", res->n_layers, ni);
    }
    if (!rc && (uint64_t)total != res->total_cycles) {
        rc = ENPU_E_MISMATCH;
        snprintf(msg, n, "total: simulated %llu, modelled %lld cycles",
                 (unsigned long long)res->total_cycles, (long long)total);
    }
    if (!rc && p->arch.engine == ENPU_ENGINE_SYSTOLIC) rc = compare_sya_counts(p, res, msg, n);
    /* the row-stationary model also predicts every memory count and
     * datapath operation of every instruction */
    if (!rc && p->arch.engine == ENPU_ENGINE_ROWSTAT && enpu_rs_model_diff(p, res->layers, res->total_cycles, msg, n))
        rc = ENPU_E_MISMATCH;
    free(cyc);
    free(act);
    return rc;
}

/* Output 0 of the golden int8 reference against the float reference, on
 * the first calibration sample (inside the calibrated ranges, so the
 * clipping of an unseen input does not count): SQNR and the largest error
 * as a fraction of the output's int8 range (of its largest magnitude for a
 * float host output); *n gets the output's element count (0: not compared). */
static void float_check(const gg_case *c, const enpu_graph *qg, double *sqnr, double *frac,
                        int64_t *n) {
    enpu_fexec *fx = NULL;
    enpu_gexec *gx = NULL;
    enpu_buf f, q;
    enpu_err err = {0};
    *sqnr = NAN, *frac = NAN, *n = 0;
    memset(&f, 0, sizeof f);
    memset(&q, 0, sizeof q);
    if (!enpu_fexec_new(c->g, &fx, &err) && !enpu_fexec_run(fx, c->calib, &err) &&
        !enpu_fexec_output(fx, 0, &f, &err) && !enpu_gexec_new(qg, &gx, &err) &&
        !enpu_gexec_run(gx, c->calib, &err) && !enpu_gexec_output(gx, 0, &q, &err) &&
        enpu_buf_numel(&f) == enpu_buf_numel(&q)) {
        const enpu_tensor *ot = &qg->tensors[qg->outputs[0]];
        double range = ot->dtype == ENPU_DT_INT8 && ot->quant ? 255.0 * ot->quant->scale[0] : 0;
        double worst = 0, sig = 0, noise = 0;
        *n = enpu_buf_numel(&f);
        for (int64_t i = 0; i < *n; i++) {
            double x = ((const float *)f.data)[i], y = ((const float *)q.data)[i];
            worst = fmax(worst, fabs(x - y));
            sig += x * x, noise += (x - y) * (x - y);
            if (ot->dtype != ENPU_DT_INT8) range = fmax(range, fabs(x));
        }
        *sqnr = noise > 0 ? 10 * log10(sig / noise) : INFINITY;
        *frac = range > 0 ? worst / range : 0;
    }
    enpu_buf_free(&f);
    enpu_buf_free(&q);
    enpu_fexec_free(fx);
    enpu_gexec_free(gx);
}

/* ---- requant tflite: TFLite's integer parameters on a quantized graph ---------------- */

static float tq_scale(const enpu_graph *g, int t) { return g->tensors[t].quant->scale[0]; }
static int32_t tq_zp(const enpu_graph *g, int t) { return g->tensors[t].quant->zero_point[0]; }

/* (M, S) of a real multiplier as TFLite's QuantizeMultiplier gives it. */
static int tq_mult(const enpu_node *n, double real, uint32_t *M, int8_t *S, enpu_err *err) {
    char what[ENPU_MAX_NAME + 16];
    snprintf(what, sizeof what, "node '%s'", n->name);
    int s;
    int rc = enpu_tfl_multiplier(real, what, M, &s, err);
    if (!rc) *S = (int8_t)s;
    return rc;
}

/* Node k writes its output with (s, z), the parameters TFLite's kernel
 * requires, and a requantizing copy (TFLite's QUANTIZE int8 -> int8, as the
 * importer makes it) brings it to the tensor's own parameters with the
 * node's clamp, so that nothing downstream changes.  A float host output
 * (read by host nodes or nobody) just becomes int8 with (s, z). */
static int tq_retarget(enpu_graph *qg, int k, float s, int32_t z, enpu_err *err) {
    int y = qg->nodes[k].out[0];
    enpu_tensor *yt = &qg->tensors[y];
    if (yt->dtype == ENPU_DT_FLOAT32) {
        yt->dtype = ENPU_DT_INT8;
        return enpu_tensor_set_quant(yt, -1, 1, &s, &z, err);
    }
    enpu_qnode *q0 = qg->nodes[k].q;
    /* a host kernel has no clamp: a folded Relu/Clip moves to the copy */
    bool clamp = q0->kind == ENPU_Q_HOST && (q0->lo > -128 || q0->hi < 127);
    if (tq_scale(qg, y) == s && tq_zp(qg, y) == z && !clamp) return 0;
    char name[ENPU_MAX_NAME + 16];
    int64_t dims[ENPU_MAX_RANK];
    int rank = yt->rank;
    memcpy(dims, yt->dims, sizeof dims);
    enpu_layout layout = yt->layout;
    float s_y = yt->quant->scale[0];
    int32_t z_y = yt->quant->zero_point[0];
    snprintf(name, sizeof name, "%s_tfl", yt->name);
    int t = enpu_graph_add_tensor(qg, name, ENPU_DT_INT8, rank, dims, err);
    if (t < 0) return t;
    int rc = enpu_tensor_set_quant(&qg->tensors[t], -1, 1, &s, &z, err);
    if (rc) return rc;
    qg->tensors[t].layout = layout;
    qg->tensors[t].producer = k;
    qg->nodes[k].out[0] = t;
    qg->tensors[y].producer = -1;
    snprintf(name, sizeof name, "%s_rescale", qg->nodes[k].name);
    int nk = enpu_graph_add_node(qg, name, ENPU_OP_IDENTITY, 1, &t, 1, &y, err);
    if (nk < 0) return nk;
    int64_t C = rank >= 2 ? dims[1] : 1;
    enpu_qnode *q = calloc(1, sizeof *q);
    if (!q) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    qg->nodes[nk].q = q;
    q->kind = ENPU_Q_CONV;
    q->origin = ENPU_QO_RESCALE;
    q->n_ch = (int)C;
    q->n_w = C;
    q->w = malloc((size_t)C);
    q->bias = malloc((size_t)C * sizeof *q->bias);
    q->M = malloc((size_t)C * sizeof *q->M);
    q->S = malloc((size_t)C);
    if (!q->w || !q->bias || !q->M || !q->S) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    q->zp_in[0] = z, q->zp_out = z_y;
    q->lo = q0->lo, q->hi = q0->hi; /* the clamp was on the tensor's parameters */
    q0->lo = -128, q0->hi = 127;
    if ((rc = tq_mult(&qg->nodes[nk], (double)s / s_y, &q->M[0], &q->S[0], err))) return rc;
    for (int64_t c = 0; c < C; c++) q->w[c] = 1, q->bias[c] = -z, q->M[c] = q->M[0], q->S[c] = q->S[0];
    return 0;
}

/* Rewrites an easynpu-quantized graph into one with requant tflite: every
 * requantization takes TFLite's parameters as the TFLite importer prepares
 * them (src/frontend/tflite_import.c, with the same numerics.h helpers):
 * conv and fc multipliers from s_in * s_w[c] / s_out, ADD's three (M, S),
 * MUL's s0 * s1 / s_out, MEAN's and AVERAGE_POOL_2D's own rules (the pool
 * averaging in its input's parameters), rescales s_in / s_out; table
 * activations become TFLite's host kernels (LOGISTIC, TANH, HARD_SWISH)
 * writing the parameters those require.  Weights, biases, scales and zero
 * points stay the quantizer's.  A graph TFLite cannot express (another
 * host op or table, a left shift leaving int32) is ENPU_E_UNSUPPORTED
 * naming the node. */
static int to_tflite(enpu_graph *qg, enpu_err *err) {
    int n0 = qg->n_nodes, rc = 0;
    for (int i = 0; i < n0 && !rc; i++) {
        enpu_node *n = &qg->nodes[i];
        enpu_qnode *q = n->q;
        if (n->dead || !q) continue;
        int x = n->in[0], y = n->out[0];
        switch (q->kind) {
        case ENPU_Q_CONV: {
            float s_in = tq_scale(qg, x), s_out = tq_scale(qg, y);
            int32_t z_in = tq_zp(qg, x);
            int64_t k = q->n_w / q->n_ch;
            if (q->origin == ENPU_QO_AVGPOOL && n->op == ENPU_OP_AVGPOOL) {
                /* TFLite's AVERAGE_POOL_2D: the raw sum / k in the input's parameters */
                char what[ENPU_MAX_NAME + 16];
                snprintf(what, sizeof what, "node '%s'", n->name);
                uint32_t M;
                int S;
                if ((rc = enpu_tfl_avgpool_multiplier(k, what, &M, &S, err))) break;
                for (int c = 0; c < q->n_ch; c++) q->M[c] = M, q->S[c] = (int8_t)S, q->bias[c] = 0;
                q->zp_out = 0;
                rc = tq_retarget(qg, i, s_in, z_in, err);
                break;
            }
            if (q->origin == ENPU_QO_AVGPOOL) { /* MEAN: 1/k folded into the multiplier */
                char what[ENPU_MAX_NAME + 16];
                snprintf(what, sizeof what, "node '%s'", n->name);
                uint32_t M;
                int S;
                if ((rc = enpu_tfl_mean_multiplier(s_in, s_out, k, what, &M, &S, err))) break;
                for (int c = 0; c < q->n_ch; c++)
                    q->M[c] = M, q->S[c] = (int8_t)S, q->bias[c] = (int32_t)(-z_in * k);
                break;
            }
            const enpu_tensor *wt = n->n_in > 1 && n->in[1] >= 0 ? &qg->tensors[n->in[1]] : NULL;
            for (int c = 0; c < q->n_ch && !rc; c++) {
                double real;
                if (q->origin == ENPU_QO_CONV || q->origin == ENPU_QO_FC)
                    real = (double)s_in * wt->quant->scale[wt->quant->count > 1 ? c : 0] / s_out;
                else if (q->origin == ENPU_QO_BN) /* per-channel weights of no stored scale */
                    real = ldexp((double)q->M[c], -q->S[c]);
                else
                    real = (double)s_in / s_out;
                rc = tq_mult(n, real, &q->M[c], &q->S[c], err);
            }
            break;
        }
        case ENPU_Q_ADD: {
            char what[ENPU_MAX_NAME + 16];
            snprintf(what, sizeof what, "node '%s'", n->name);
            uint32_t M;
            int S, SA[2];
            rc = enpu_tfl_add_params(tq_scale(qg, x), tq_scale(qg, n->in[1]), tq_scale(qg, y), what,
                                     q->A, SA, &M, &S, err);
            if (!rc) q->M[0] = M, q->S[0] = (int8_t)S, q->SA[0] = (int8_t)SA[0], q->SA[1] = (int8_t)SA[1];
            break;
        }
        case ENPU_Q_MUL:
            rc = tq_mult(n, (double)tq_scale(qg, x) * tq_scale(qg, n->in[1]) / tq_scale(qg, y), &q->M[0],
                         &q->S[0], err);
            break;
        case ENPU_Q_TABLE:
        case ENPU_Q_HOST: {
            if (enpu_tfl_kernel_of(n->op) < 0)
                return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': %s has no TFLite integer kernel",
                                 n->name, enpu_op_name(n->op));
            free(q->table);
            q->table = NULL;
            q->kind = ENPU_Q_HOST;
            /* the output parameters TFLite's kernels write (HARD_SWISH: any) */
            float s = n->op == ENPU_OP_TANH ? 1.0f / 128 : 1.0f / 256;
            int32_t z = n->op == ENPU_OP_TANH ? 0 : -128;
            const enpu_tensor *yt = &qg->tensors[y];
            if (n->op == ENPU_OP_HARD_SWISH) {
                if (!yt->quant)
                    return enpu_fail(err, ENPU_E_UNSUPPORTED, "node '%s': a float HardSwish output",
                                     n->name);
                s = tq_scale(qg, y), z = tq_zp(qg, y);
            }
            q->zp_in[0] = qg->tensors[x].quant ? tq_zp(qg, x) : 0;
            q->zp_out = z;
            rc = tq_retarget(qg, i, s, z, err);
            break;
        }
        default: break; /* MAXPOOL, MOVE: no requantization */
        }
    }
    if (rc) return rc;
    qg->requant = ENPU_REQUANT_TFLITE;
    if ((rc = enpu_graph_toposort(qg, err))) return rc;
    rc = enpu_qgraph_check(qg, err);
    /* TFLite's left shift is an int32 multiply: a multiplier above 1 on a
     * wide accumulator has no TFLite form */
    if (rc == ENPU_E_INVALID && strstr(err->msg, "leaves int32 (requant tflite)"))
        rc = enpu_fail(err, ENPU_E_UNSUPPORTED, "%s", err->msg);
    return rc;
}

/* Quantizes c's graph for its arch (widths and table segments), as the
 * CLI's pipeline does. */
static int quantize(const gg_case *c, enpu_graph **qg, enpu_err *err) {
    enpu_quant_opts qo;
    enpu_compile_quant_opts(&c->arch, &qo);
    qo.quiet = true;
    int rc = enpu_quantize_graph(c->g, c->calib, c->n_calib, &qo, qg, NULL, err);
    if (!rc && c->arch.requant == ENPU_REQUANT_TFLITE) rc = to_tflite(*qg, err);
    return rc;
}

/* The compile cache every graph of a run shares: graphs and archs differ,
 * so an entry whose key missed something the cost model or the tiling
 * reads would give one graph another's answer, and the comparison with
 * the exhaustive search below would fail.  Reachable to the end. */
static enpu_compile_cache *shared_cache(void) {
    static enpu_compile_cache *cache;
    if (!cache) cache = enpu_compile_cache_new((size_t)64 << 20);
    return cache;
}

/* The fast tiling search (branch and bound, through the shared cache)
 * chose exactly what the exhaustive one chooses: the same instructions. */
static int search_check(const enpu_graph *qg, const gg_case *c, const enpu_program *fast, char *msg,
                        size_t n) {
    if (c->arch.engine != ENPU_ENGINE_EASYNPU) return 0;
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    co.search = ENPU_SEARCH_EXHAUSTIVE;
    enpu_program ex;
    enpu_err err = {0};
    int rc = enpu_compile(qg, &c->arch, &co, &ex, NULL, &err);
    if (rc) {
        snprintf(msg, n, "the exhaustive search failed where the fast one compiled: %s", err.msg);
    } else if (ex.n_instr != fast->n_instr) {
        snprintf(msg, n, "fast search: %d instructions, exhaustive: %d", fast->n_instr, ex.n_instr);
        rc = 1;
    } else {
        for (int i = 0; i < ex.n_instr && !rc; i++)
            if (memcmp(&ex.instr[i], &fast->instr[i], sizeof ex.instr[i]) != 0) {
                snprintf(msg, n, "instruction %d ('%s') differs between the fast and the exhaustive search "
                         "(tile %" PRId64 "x%" PRId64 " zs %" PRId64 " vs %" PRId64 "x%" PRId64 " zs %" PRId64 ")",
                         i, ex.layers[i].name, fast->instr[i].tile_x, fast->instr[i].tile_y, fast->instr[i].zs,
                         ex.instr[i].tile_x, ex.instr[i].tile_y, ex.instr[i].zs);
                rc = 1;
            }
    }
    enpu_program_free(&ex);
    return rc;
}

void gg_check(const gg_case *c, gg_outcome *o) {
    memset(o, 0, sizeof *o);
    o->stage = "";
    enpu_err err = {0};
    enpu_graph *qg = NULL;
    enpu_gexec *ex = NULL;
    enpu_program prog;
    enpu_program_init(&prog, &c->arch);
    enpu_sim_result res[2];
    memset(res, 0, sizeof res);
    char msg[ENPU_ERR_MSG_MAX + 128];

    int rc = quantize(c, &qg, &err);
    if (rc) {
        refusal(o, "quantize", rc, &err);
        goto done;
    }
    enpu_compile_opts co;
    enpu_compile_opts_default(&co);
    co.cache = shared_cache();
    rc = enpu_compile(qg, &c->arch, &co, &prog, NULL, &err);
    if (rc) {
        refusal(o, "compile", rc, &err);
        goto done;
    }
    if (search_check(qg, c, &prog, msg, sizeof msg)) {
        outcome(o, GG_FAIL, "search", "%s", msg);
        goto done;
    }
    o->n_instr = prog.n_instr;
    for (int i = 0; i < prog.n_instr; i++) {
        o->opcodes[prog.instr[i].opcode & 0xFF] = 1;
        if (prog.instr[i].fuse_next) o->opcodes[255] = 1;
        o->held += prog.instr[i].ps_hold != 0;
        o->held_conv += prog.instr[i].ps_hold && prog.instr[i].opcode != ENPU_OPC_FC;
        o->word_cut += prog.instr[i].ifmap_wpp != 0;
    }
    if (program_roundtrip(&prog, &c->arch, msg, sizeof msg)) {
        outcome(o, GG_FAIL, "program", "%s", msg);
        goto done;
    }
    if ((rc = enpu_gexec_new(qg, &ex, &err)) || (rc = enpu_gexec_run(ex, c->input, &err))) {
        outcome(o, GG_FAIL, "golden", "%s", err.msg);
        goto done;
    }
    /* the golden reference's fast kernels (the best this CPU has, and plain
     * C) equal its reference loops on every tensor */
    for (int k = 0; k < 2; k++) {
        enpu_gexec_kernels fk = k ? ENPU_GK_PORTABLE : ENPU_GK_FAST;
        if (enpu_gexec_compare_kernels(qg, c->input, ENPU_GK_REFERENCE, fk, &err)) {
            outcome(o, GG_FAIL, "kernels", "%s kernels: %s", enpu_gexec_kernels_label(fk), err.msg);
            goto done;
        }
    }
    /* the cost model bounds the run: ten times its figure is a hang */
    int64_t model = enpu_cost_program(&prog, NULL, NULL);
    uint64_t max_cycles = model > 0 ? 10 * (uint64_t)model + 100000 : 100000000;
    for (int m = 0; m < 2; m++) {
        enpu_sim_mode mode = m ? ENPU_SIM_FUNCTIONAL : ENPU_SIM_CYCLE;
        int compared = 0;
        if (simulate(c, &prog, qg, ex, mode, false, max_cycles, &res[m], &compared, &err)) {
            outcome(o, GG_FAIL, m ? "functional" : "cycle", "%s", err.msg);
            goto done;
        }
        if (m == 0) o->compared = compared, o->cycles = res[0].total_cycles;
        else if (compared != o->compared) {
            outcome(o, GG_FAIL, "functional", "%d layer outputs compared, %d in cycle mode",
                    compared, o->compared);
            goto done;
        }
    }
    int64_t nout;
    float_check(c, qg, &o->sqnr_db, &o->err_frac, &nout);
    double table_err = 0; /* the documented error of the activation tables, in LSB */
    for (int i = 0; i < qg->n_nodes; i++)
        if (qg->nodes[i].q && qg->nodes[i].q->table)
            table_err = fmax(table_err, qg->nodes[i].q->table->max_err_lsb);
    if (nout >= GG_FLOAT_MIN_ELEMS && table_err <= GG_FLOAT_MAX_TABLE_LSB &&
        !(o->sqnr_db >= GG_FLOAT_MIN_SQNR_DB) && !(o->err_frac <= GG_FLOAT_MAX_ERR)) {
        outcome(o, GG_FAIL, "float", "output 0: golden int8 vs float on a calibration sample: SQNR "
                "%.1f dB (< %d), largest error %.3g of the output range (> %g)", o->sqnr_db,
                GG_FLOAT_MIN_SQNR_DB, o->err_frac, GG_FLOAT_MAX_ERR);
        goto done;
    }
    if (compare_cost(&prog, &res[0], msg, sizeof msg)) {
        outcome(o, GG_FAIL, "cost", "%s", msg);
        goto done;
    }
    /* cycle mode fast-forwards where it can prove nothing changes: the
     * per-cycle path must give the same run */
    enpu_sim_result pc;
    int pc_compared = 0;
    memset(&pc, 0, sizeof pc);
    rc = simulate(c, &prog, qg, ex, ENPU_SIM_CYCLE, true, max_cycles, &pc, &pc_compared, &err);
    if (rc) snprintf(msg, sizeof msg, "%s", err.msg);
    else rc = compare_paths(&res[0], &pc, msg, sizeof msg);
    enpu_sim_result_free(&pc);
    if (rc) {
        outcome(o, GG_FAIL, "per-cycle", "%s", msg);
        goto done;
    }
    outcome(o, GG_PASS, "", "%d instructions, %llu cycles, %d layer outputs bit-exact", prog.n_instr,
            (unsigned long long)res[0].total_cycles, o->compared);
done:
    enpu_sim_result_free(&res[0]);
    enpu_sim_result_free(&res[1]);
    enpu_gexec_free(ex);
    enpu_program_free(&prog);
    enpu_graph_free(qg);
}

int gg_dump(const gg_case *c, const char *prefix, enpu_err *err) {
    char path[4096];
    enpu_graph *qg = NULL;
    int rc = quantize(c, &qg, err);
    if (!rc) {
        snprintf(path, sizeof path, "%s.qjson", prefix);
        rc = enpu_qgraph_save(path, qg, err);
    }
    enpu_graph_free(qg);
    char *json = enpu_arch_to_json(&c->arch, 1);
    if (!rc && json) {
        snprintf(path, sizeof path, "%s.arch.json", prefix);
        rc = enpu_file_write_atomic(path, json, strlen(json), err);
    }
    free(json);
    for (int i = 0; !rc && i < c->g->n_inputs; i++) {
        snprintf(path, sizeof path, "%s.input%d.npy", prefix, i);
        rc = enpu_tensor_write(path, &c->input[i], err);
    }
    return rc;
}

void gg_run_seed(uint64_t seed, gg_outcome *o, char *desc, size_t n) {
    gg_case c;
    enpu_err err = {0};
    if (gg_generate(seed, &c, &err)) {
        memset(o, 0, sizeof *o);
        outcome(o, GG_FAIL, "generate", "%s", err.msg);
    } else {
        gg_check(&c, o);
    }
    if (desc && n) snprintf(desc, n, "%s", c.desc);
    gg_case_free(&c);
}
