/* Hand-assembled EasyNPU programs for the simulator tests: builders that lay
 * out weights, biases, requantization blocks and tables per docs/isa.md,
 * pick legal tiles, and direct reference computations of every op with the
 * quant.h semantics (numerics.h / pwl.h), on [h][w][c] int8 tensors. */
#ifndef ENPU_TEST_SIM_PROG_H
#define ENPU_TEST_SIM_PROG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/numerics.h"
#include "easynpu/program.h"
#include "easynpu/pwl.h"
#include "easynpu/sim.h"

typedef struct tprog {
    enpu_arch arch;
    enpu_program p;
    uint8_t *w;        /* weight image */
    int64_t wwords;    /* words used */
    int64_t P;
    uint32_t rng;
    uint8_t *img[2];   /* initial main / skip DTCM images */
    int64_t img_words[2];
    uint8_t *dram;     /* DRAM_INIT image (tp_dram_put), NULL: none */
    int64_t dram_words;
} tprog;

static inline uint32_t tp_rand(tprog *t) {
    t->rng = t->rng * 1664525u + 1013904223u;
    return t->rng >> 8;
}
/* Uniform integer in [lo, hi]. */
static inline int tp_rint(tprog *t, int lo, int hi) {
    return lo + (int)(tp_rand(t) % (uint32_t)(hi - lo + 1));
}

static inline void tp_init_arch(tprog *t, const enpu_arch *a, uint32_t seed) {
    memset(t, 0, sizeof *t);
    t->arch = *a;
    t->P = a->pes;
    t->rng = seed;
    enpu_program_init(&t->p, a);
    t->w = calloc((size_t)a->weight_mem_bytes, 1);
}

/* preset name, or an arch JSON text starting with '{' */
static inline void tp_init(tprog *t, const char *preset, uint32_t seed) {
    enpu_arch a;
    enpu_err err = {0};
    int rc = preset[0] == '{' ? enpu_arch_from_json(preset, strlen(preset), "test arch", &a, &err)
                              : enpu_arch_load(preset, &a, &err);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    tp_init_arch(t, &a, seed);
}

static inline void tp_free(tprog *t) {
    enpu_program_free(&t->p);
    free(t->w);
    free(t->img[0]);
    free(t->img[1]);
    free(t->dram);
}

/* Puts n bytes at DRAM word `word` of the DRAM_INIT image (grown as needed). */
static inline void tp_dram_put(tprog *t, int64_t word, const void *src, int64_t n) {
    int64_t end = word + (n + t->P - 1) / t->P;
    if (end > t->dram_words) {
        uint8_t *d = realloc(t->dram, (size_t)(end * t->P));
        if (!d) abort();
        memset(d + t->dram_words * t->P, 0, (size_t)((end - t->dram_words) * t->P));
        t->dram = d;
        t->dram_words = end;
    }
    memcpy(t->dram + word * t->P, src, (size_t)n);
}

/* A dma: rows x len words, DRAM word dram (stride ds) <-> on-chip word sram
 * (stride ss) of memory mem, on engine e, with its token masks. */
static inline enpu_instr tp_dma(int e, int dir, int mem, int64_t dram, int64_t sram, int64_t rows,
                                int64_t len, int64_t ds, int64_t ss, int push, int pop) {
    enpu_instr in = {0};
    in.opcode = ENPU_OPC_DMA;
    in.dma_engine = e;
    in.dma_dir = dir;
    in.dma_mem = mem;
    in.dram_addr = dram;
    in.sram_addr = sram;
    in.dma_rows = rows;
    in.dma_len = len;
    in.dram_stride = rows > 1 ? ds : 0;
    in.sram_stride = rows > 1 ? ss : 0;
    in.push = push;
    in.pop = pop;
    return in;
}

/* Puts a [h][w][c] tensor into the initial image of main (0) or skip (1)
 * DTCM at word addr, folded, zero lanes past c. */
static inline void tp_init_tensor(tprog *t, int which, int64_t addr, const int8_t *v, int64_t h,
                                  int64_t w, int64_t c) {
    int64_t bytes = which ? t->arch.skip_dtcm_bytes : t->arch.main_dtcm_bytes;
    if (!t->img[which]) t->img[which] = calloc((size_t)bytes, 1);
    int64_t wpp = (c + t->P - 1) / t->P;
    for (int64_t pix = 0; pix < h * w; pix++)
        for (int64_t ch = 0; ch < wpp * t->P; ch++)
            t->img[which][(addr + pix * wpp) * t->P + ch] = ch < c ? (uint8_t)v[pix * c + ch] : 0;
    int64_t end = addr + h * w * wpp;
    if (end > t->img_words[which]) t->img_words[which] = end;
}

/* Allocates `words` words of weight memory (zero), returns the address. */
static inline int64_t tp_walloc(tprog *t, int64_t words) {
    int64_t a = t->wwords;
    t->wwords += words;
    if (t->wwords * t->P > t->arch.weight_mem_bytes) {
        fprintf(stderr, "test program: weight memory full\n");
        abort();
    }
    return a;
}
static inline uint8_t *tp_wptr(tprog *t, int64_t word) { return t->w + word * t->P; }
static inline void tp_put32(uint8_t *b, uint32_t v) {
    b[0] = (uint8_t)v, b[1] = (uint8_t)(v >> 8), b[2] = (uint8_t)(v >> 16), b[3] = (uint8_t)(v >> 24);
}

static inline int64_t tp_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Bias and quant blocks for co channels; sets bias_addr, quant_addr. */
static inline void tp_params(tprog *t, enpu_instr *in, const int32_t *bias, const uint32_t *M,
                             const int8_t *S) {
    int64_t co = in->co;
    in->bias_addr = tp_walloc(t, tp_cdiv(4 * co, t->P));
    in->quant_addr = tp_walloc(t, tp_cdiv(8 * co, t->P));
    for (int64_t c = 0; c < co; c++) {
        tp_put32(tp_wptr(t, in->bias_addr) + 4 * c, (uint32_t)bias[c]);
        tp_put32(tp_wptr(t, in->quant_addr) + 8 * c, M[c]);
        tp_put32(tp_wptr(t, in->quant_addr) + 8 * c + 4, (uint32_t)S[c]);
    }
}

/* conv weights w[co][ci/g][hk][wk] (ONNX order) in the
 * [group][ci/g][hk][wk][co/g folded] layout. */
static inline void tp_conv_weights(tprog *t, enpu_instr *in, const int8_t *w) {
    /* lane groups (docs/microarch.md §16): words of L channels, one copy
     * per group */
    const int64_t L = t->P >> in->lane_split;
    int64_t G = in->groups, cpg = in->ci / G, opg = in->co / G, wpg = tp_cdiv(opg, L);
    int64_t taps = in->hk * in->wk;
    in->weight_addr = tp_walloc(t, in->ci * taps * wpg);
    for (int64_t oc = 0; oc < in->co; oc++) {
        int64_t g = oc / opg, ol = oc % opg;
        for (int64_t cl = 0; cl < cpg; cl++)
            for (int64_t tap = 0; tap < taps; tap++) {
                int64_t word = in->weight_addr + g * cpg * taps * wpg + (cl * taps + tap) * wpg + ol / L;
                for (int64_t gr = 0; gr < t->P / L; gr++)
                    tp_wptr(t, word)[gr * L + ol % L] = (uint8_t)w[(oc * cpg + cl) * taps + tap];
            }
    }
}

/* depthwise / avgpool weights w[c][hk][wk] in the [hk][wk][c folded] layout. */
static inline void tp_dw_weights(tprog *t, enpu_instr *in, const int8_t *w) {
    int64_t taps = in->hk * in->wk, wpp = tp_cdiv(in->ci, t->P);
    in->weight_addr = tp_walloc(t, taps * wpp);
    for (int64_t c = 0; c < in->ci; c++)
        for (int64_t tap = 0; tap < taps; tap++)
            tp_wptr(t, in->weight_addr + tap * wpp + c / t->P)[c % t->P] = (uint8_t)w[c * taps + tap];
}

static inline void tp_bn_weights(tprog *t, enpu_instr *in, const int8_t *w) {
    in->weight_addr = tp_walloc(t, tp_cdiv(in->ci, t->P));
    for (int64_t c = 0; c < in->ci; c++) tp_wptr(t, in->weight_addr)[c] = (uint8_t)w[c];
}

/* Table block (ISA 2): 32-byte header, then (a, b) per segment. */
static inline void tp_table(tprog *t, enpu_instr *in, const enpu_pwl_table *tab) {
    in->table_addr = tp_walloc(t, enpu_table_words(&t->arch));
    uint8_t *h = tp_wptr(t, in->table_addr);
    int32_t hd[8] = {tab->x_base, tab->seg_shift, (int32_t)tab->M, tab->S,
                     tab->zp_out, tab->lo,     tab->hi,            tab->segments};
    for (int i = 0; i < 8; i++) tp_put32(h + 4 * i, (uint32_t)hd[i]);
    uint8_t *e = tp_wptr(t, in->table_addr + tp_cdiv(ENPU_TABLE_HEADER_BYTES, t->P));
    for (int i = 0; i < tab->segments; i++) {
        tp_put32(e + 8 * i, (uint32_t)(int32_t)tab->a[i]);
        tp_put32(e + 8 * i + 4, (uint32_t)tab->b[i]);
    }
    in->out_mult = 0;
    in->out_shift = 0;
    in->zp_out = tab->zp_out;
    in->clamp_lo = tab->lo;
    in->clamp_hi = tab->hi;
}

/* fc weights w[co][hi*wi*ci] (rows in [h][w][c] order) as [h][w][c][co folded]. */
static inline void tp_fc_weights(tprog *t, enpu_instr *in, const int8_t *w) {
    int64_t rows = in->hi * in->wi * in->ci, wpg = tp_cdiv(in->co, t->P);
    in->weight_addr = tp_walloc(t, rows * wpg);
    for (int64_t oc = 0; oc < in->co; oc++)
        for (int64_t r = 0; r < rows; r++)
            tp_wptr(t, in->weight_addr + r * wpg + oc / t->P)[oc % t->P] = (uint8_t)w[oc * rows + r];
}

/* Largest legal tile (x, y) no bigger than (mx, my) (0: any); zs and
 * band_h as already set (0: all output channels, whole kernel). */
static inline void tp_tile(const tprog *t, enpu_instr *in, int64_t mx, int64_t my) {
    int reshape = in->opcode == ENPU_OPC_RESHAPE;
    int64_t W = reshape ? in->wi : in->wo, H = reshape ? in->hi : in->ho;
    int conv = enpu_opcode_class(in->opcode) == ENPU_CLASS_CONV;
    int64_t G = in->opcode == ENPU_OPC_FC ? 1 : in->groups;
    if (!in->zs) in->zs = conv ? tp_cdiv(in->co / G, t->P >> in->lane_split) : 1;
    if (!in->rows) in->rows = t->arch.pe_rows;
    const int64_t vrows = in->rows << in->lane_split; /* PE rows x lane groups */
    int64_t kh = in->band_h ? in->band_h : in->hk;
    if (in->opcode == ENPU_OPC_FC) {
        in->tile_x = in->tile_y = in->tile_xi = in->tile_yi = 1;
        return;
    }
    int64_t best = -1, bx = 1, by = 1;
    for (int64_t y = 1; y <= H && (!my || y <= my); y++)
        for (int64_t x = 1; x <= W && (!mx || x <= mx); x++) {
            int64_t xi = in->stride_w * (x - 1) + in->dil_w * (in->wk - 1) + 1;
            int64_t yi = in->stride_h * (y - 1) + in->dil_h * (kh - 1) + 1;
            if (xi * yi > t->arch.ifmap_pad_depth) continue;
            if (tp_cdiv(x * y, vrows) * in->zs > t->arch.psum_depth) continue;
            if (x * y > best) best = x * y, bx = x, by = y;
        }
    in->tile_x = bx;
    in->tile_y = by;
    in->tile_xi = in->stride_w * (bx - 1) + in->dil_w * (in->wk - 1) + 1;
    in->tile_yi = in->stride_h * (by - 1) + in->dil_h * (kh - 1) + 1;
}

/* Defaults every compute instruction needs. */
static inline void tp_defaults(enpu_instr *in) {
    if (!in->hk) in->hk = 1;
    if (!in->wk) in->wk = 1;
    if (!in->stride_h) in->stride_h = 1;
    if (!in->stride_w) in->stride_w = 1;
    if (!in->dil_h) in->dil_h = 1;
    if (!in->dil_w) in->dil_w = 1;
    if (!in->groups) in->groups = 1;
    if (!in->clamp_lo && !in->clamp_hi) in->clamp_lo = -128, in->clamp_hi = 127;
    in->cast_mode = enpu_opcode_class(in->opcode) == ENPU_CLASS_CONV ? ENPU_CAST_BROADCAST
                                                                      : ENPU_CAST_MULTICAST;
}

static inline int64_t tp_out_extent(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t s,
                                    int64_t d) {
    return (in + pa + pb - d * (k - 1) - 1) / s + 1;
}

static inline void tp_add(tprog *t, const enpu_instr *in, const char *name) {
    enpu_err err = {0};
    if (enpu_program_add_instr(&t->p, in, name, 0, NULL, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
}

/* Appends IO descriptor d, returns its index (aborts on error: a test bug). */
static inline int tp_add_io(tprog *t, const enpu_io_desc *d) {
    enpu_err err = {0};
    int rc = enpu_program_add_io(&t->p, d, &err);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    return rc;
}

/* Adds an int8 NHWC IO descriptor [1][h][w][c] in main DTCM. */
static inline int tp_io(tprog *t, enpu_io_dir dir, const char *name, int64_t h, int64_t w,
                        int64_t c, int64_t addr, int mem, float scale, int zp) {
    enpu_io_desc d = {0};
    d.name = (char *)name;
    d.dir = dir;
    d.dtype = ENPU_DT_INT8;
    d.layout = ENPU_LAYOUT_NHWC;
    d.rank = 4;
    d.dims[0] = 1, d.dims[1] = h, d.dims[2] = w, d.dims[3] = c;
    d.scale = scale;
    d.zero_point = zp;
    d.mem = mem;
    d.addr = (uint32_t)addr;
    return tp_add_io(t, &d);
}

/* Adds END, installs the weight image and validates. Returns 0 or prints. */
static inline int tp_finish(tprog *t) {
    enpu_instr end = {0};
    end.opcode = ENPU_OPC_END;
    tp_add(t, &end, "end");
    enpu_err err = {0};
    int rc = enpu_program_set_image(&t->p, ENPU_SEC_WEIGHTS, t->w, (size_t)(t->wwords * t->P), &err);
    if (!rc && t->img[0])
        rc = enpu_program_set_image(&t->p, ENPU_SEC_DTCM_INIT, t->img[0],
                                    (size_t)(t->img_words[0] * t->P), &err);
    if (!rc && t->img[1])
        rc = enpu_program_set_image(&t->p, ENPU_SEC_SKIP_INIT, t->img[1],
                                    (size_t)(t->img_words[1] * t->P), &err);
    if (!rc && t->dram)
        rc = enpu_program_set_image(&t->p, ENPU_SEC_DRAM_INIT, t->dram, (size_t)(t->dram_words * t->P),
                                    &err);
    if (!rc) rc = enpu_program_validate(&t->p, &err);
    if (rc) fprintf(stderr, "test program invalid: %s\n", err.msg);
    return rc;
}

/* Runs the program in `mode` on one int8 input (user order = NCHW of the
 * input descriptor, here [h][w][c] is converted by the caller) and reads the
 * output descriptor `out_io` into y ([c][h][w] user order).  Returns the
 * status; *res is filled (caller frees). */
static inline int tp_run(tprog *t, enpu_sim_mode mode, bool check, const int8_t *x_nchw,
                         int out_io, int8_t *y_nchw, int64_t ny, enpu_sim_result *res,
                         enpu_err *err) {
    enpu_sim_opts o = {0};
    o.mode = mode;
    o.check = check;
    enpu_sim *sim = NULL;
    int rc = enpu_sim_new(&t->p, &t->arch, &o, &sim, err);
    if (rc) return rc;
    const int8_t *ins[1] = {x_nchw};
    rc = enpu_sim_run_i8(sim, ins, 1, res, err);
    if (!rc && y_nchw) rc = enpu_sim_read_tensor(sim, &t->p.io[out_io], y_nchw, ny, err);
    enpu_sim_free(sim);
    return rc;
}

/* [h][w][c] <-> [c][h][w] */
static inline void tp_hwc_to_chw(const int8_t *a, int8_t *b, int64_t H, int64_t W, int64_t C) {
    for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++)
            for (int64_t c = 0; c < C; c++) b[(c * H + h) * W + w] = a[(h * W + w) * C + c];
}
static inline void tp_chw_to_hwc(const int8_t *a, int8_t *b, int64_t H, int64_t W, int64_t C) {
    for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++)
            for (int64_t c = 0; c < C; c++) b[(h * W + w) * C + c] = a[(c * H + h) * W + w];
}

/* ---- reference computations (quant.h semantics) on [h][w][c] ------------------- */

/* conv / group conv / FC: y = rq(bias + sum x*w), padding reads zp_in. */
static inline void ref_conv(const enpu_instr *in, const int8_t *x, const int8_t *w,
                            const int32_t *bias, const uint32_t *M, const int8_t *S, int8_t *y) {
    if (in->opcode == ENPU_OPC_FC) { /* w[co][hi*wi*ci] */
        int64_t rows = in->hi * in->wi * in->ci;
        for (int64_t oc = 0; oc < in->co; oc++) {
            int64_t acc = bias[oc];
            for (int64_t r = 0; r < rows; r++) acc += (int64_t)x[r] * w[oc * rows + r];
            y[oc] = (int8_t)enpu_requant(acc, M[oc], S[oc], (int32_t)in->zp_out,
                                         (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
        }
        return;
    }
    int64_t G = in->groups, cpg = in->ci / G, opg = in->co / G;
    for (int64_t oy = 0; oy < in->ho; oy++)
        for (int64_t ox = 0; ox < in->wo; ox++)
            for (int64_t oc = 0; oc < in->co; oc++) {
                int64_t acc = bias[oc], g = oc / opg;
                for (int64_t cl = 0; cl < cpg; cl++)
                    for (int64_t kh = 0; kh < in->hk; kh++)
                        for (int64_t kw = 0; kw < in->wk; kw++) {
                            int64_t iy = oy * in->stride_h - in->pad_top + kh * in->dil_h;
                            int64_t ix = ox * in->stride_w - in->pad_left + kw * in->dil_w;
                            int32_t v = (iy >= 0 && iy < in->hi && ix >= 0 && ix < in->wi)
                                            ? x[(iy * in->wi + ix) * in->ci + g * cpg + cl]
                                            : (int32_t)in->zp_in;
                            acc += (int64_t)v * w[((oc * cpg + cl) * in->hk + kh) * in->wk + kw];
                        }
                y[(oy * in->wo + ox) * in->co + oc] = (int8_t)enpu_requant(
                    acc, M[oc], S[oc], (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
            }
}

/* depthwise (w[c][hk][wk]) */
static inline void ref_dw(const enpu_instr *in, const int8_t *x, const int8_t *w,
                          const int32_t *bias, const uint32_t *M, const int8_t *S, int8_t *y) {
    enpu_instr g = *in;
    g.groups = in->ci;
    ref_conv(&g, x, w, bias, M, S, y);
}

/* max pool: y = rq(max(x - zp_in)) per tensor; padding never wins. */
static inline void ref_maxpool(const enpu_instr *in, const int8_t *x, int8_t *y) {
    for (int64_t oy = 0; oy < in->ho; oy++)
        for (int64_t ox = 0; ox < in->wo; ox++)
            for (int64_t c = 0; c < in->co; c++) {
                int64_t best = INT64_MIN;
                for (int64_t kh = 0; kh < in->hk; kh++)
                    for (int64_t kw = 0; kw < in->wk; kw++) {
                        int64_t iy = oy * in->stride_h - in->pad_top + kh * in->dil_h;
                        int64_t ix = ox * in->stride_w - in->pad_left + kw * in->dil_w;
                        if (iy < 0 || iy >= in->hi || ix < 0 || ix >= in->wi) continue;
                        int64_t v = x[(iy * in->wi + ix) * in->ci + c] - in->zp_in;
                        if (v > best) best = v;
                    }
                if (best == INT64_MIN) best = 0;
                y[(oy * in->wo + ox) * in->co + c] =
                    (int8_t)enpu_requant(best, (uint32_t)in->out_mult, (int)in->out_shift,
                                         (int32_t)in->zp_out, (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
            }
}

/* One 1x1 stage on [h][w][c] (bn, relu, act, add, mul) with the ISA
 * semantics: bnw/bias/M/S per channel (bn), tab (act), op2 (add, mul). */
static inline void ref_pointwise(const enpu_instr *in, const int8_t *x, const int8_t *op2,
                                 const int8_t *bnw, const int32_t *bias, const uint32_t *M,
                                 const int8_t *S, const enpu_pwl_table *tab, int8_t *y) {
    int64_t n = in->ho * in->wo * in->co;
    enpu_rq rq = {(uint32_t)in->out_mult, (int)in->out_shift, (int32_t)in->zp_out,
                  (int32_t)in->clamp_lo, (int32_t)in->clamp_hi};
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i % in->co, acc;
        switch (in->opcode) {
        case ENPU_OPC_BN:
            acc = (int64_t)bnw[c] * x[i] + bias[c];
            y[i] = (int8_t)enpu_requant(acc, M[c], S[c], rq.zp, rq.lo, rq.hi);
            continue;
        case ENPU_OPC_ACT: y[i] = enpu_pwl_eval(tab, x[i]); continue;
        case ENPU_OPC_RELU: acc = x[i] - in->zp_in; break;
        case ENPU_OPC_ADD:
            acc = in->in1_mult * (x[i] - in->zp_in) + in->in2_mult * (op2[i] - in->zp_op2);
            break;
        default: acc = (int64_t)(x[i] - in->zp_in) * (op2[i] - in->zp_op2); break;
        }
        y[i] = (int8_t)enpu_requant_rq(acc, &rq);
    }
}

/* Reshape: output element k (flat [ho][wo][co]) = input element of rank k in
 * the perm order. */
static inline void ref_reshape(const enpu_instr *in, const int8_t *x, int8_t *y) {
    int64_t H = in->hi, W = in->wi, C = in->ci;
    for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++)
            for (int64_t c = 0; c < C; c++) {
                int64_t k;
                switch (in->perm) {
                case ENPU_PERM_HCW: k = (h * C + c) * W + w; break;
                case ENPU_PERM_WHC: k = (w * H + h) * C + c; break;
                case ENPU_PERM_WCH: k = (w * C + c) * H + h; break;
                case ENPU_PERM_CHW: k = (c * H + h) * W + w; break;
                case ENPU_PERM_CWH: k = (c * W + w) * H + h; break;
                default: k = (h * W + w) * C + c; break;
                }
                y[k] = x[(h * W + w) * C + c];
            }
}

#endif
