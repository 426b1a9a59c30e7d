/* Private state of the compiler, shared by its phases (one file each):
 * lower.c -> fuse.c -> tile.c (+ cost.c) -> memplan.c -> emit.c, driven by
 * compile.c.  docs/compiler.md describes the phases. */
#ifndef ENPU_CC_H
#define ENPU_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/compiler.h"
#include "easynpu/isa.h"
#include "easynpu/quant.h"

/* ---- layers ---------------------------------------------------------------
 * One layer = one instruction.  A layer computes one quantized node (or is a
 * copy / host op the lowering added); fusion links layers into chains. */

enum { CC_HOST = -1 }; /* kind of a host-op layer (a SYNC instruction) */

/* Where a graph tensor's elements are in NPU memory: a storage (a feature map
 * [h][w][c folded] that some layer writes) and, per element, its position in
 * that storage's [h][w][c] order.  pos == NULL means the natural position
 * (the tensor is the storage's own NCHW tensor, stored transposed). */
typedef struct cc_view {
    int store;        /* storage index, -1: none yet / not in NPU memory */
    int64_t *pos;     /* owned, numel entries, or NULL */
} cc_view;

typedef struct cc_store {
    int64_t h, w, c;      /* grid */
    int64_t words;
    int tensor;           /* the graph tensor whose natural layout this is */
    int def;              /* step that writes it; -1 graph input, -2 constant */
    int last;             /* last step reading it from the main DTCM (-1: none) */
    int last_op2;         /* last step reading its skip copy (-1: none) */
    bool keep;            /* graph output: live to the end */
    int64_t main_addr;    /* -1: not in the main DTCM */
    int64_t skip_addr;    /* -1: no skip copy */
    bool host_written;    /* written by a host op */
    int64_t ofmap_wpp, ofmap_word; /* concat at store: written into another store */
    int into;             /* store it is part of (concat), -1 */
    int64_t into_off;     /* word offset inside `into` */
    const int8_t *cdata;  /* constant contents (skip image), NCHW int8 */
} cc_store;

typedef struct cc_layer {
    int opcode;           /* ENPU_OPC_* or CC_HOST */
    int node;             /* quantized node, -1 for added layers */
    char *name;           /* owned */
    char *src;            /* owned: quantized node name(s) */
    int in, in2, out;     /* graph tensors: ifmap, op2, output (-1 none) */
    int in_store;         /* storage read as ifmap (its view may be permuted: FC) */
    int op2_store;
    int out_store;        /* storage written, -1 when the output is not stored
                             (a fused stage that is not the last) */
    enpu_instr ins;       /* geometry and numerics; tiles and addresses later */
    /* weights in the NPU layout, built by lower.c */
    int8_t *w;            /* owned */
    int64_t w_bytes;      /* = weight block words * word bytes */
    int32_t *bias;        /* owned, co entries (conv-like) */
    uint32_t *M;          /* owned, co entries */
    int8_t *S;            /* owned */
    const enpu_pwl_table *table;
    int8_t *op2_const;    /* owned: expanded constant operand, [h][w][c] */
    /* fusion */
    int head;             /* chain head layer */
    int next;             /* next chain member, -1 */
    int step;             /* program step (chains and host ops in order) */
    bool store_skip;
    /* host op */
    int hostop;           /* index into the program's host ops, -1 */
    char *note;           /* owned: decisions for the report */
    int64_t macs;         /* the program's LAYERS macs; -1: the instruction's own */
} cc_layer;

typedef struct cc_move {
    char *name, *op, *how;
    enpu_move_kind kind;
} cc_move;

typedef struct cc {
    const enpu_graph *g;
    const enpu_arch *a;
    enpu_compile_opts o;
    enpu_err *err;
    int P;
    cc_layer *L;
    int nl, capl;
    int *order;           /* program order of layers */
    int norder;
    cc_store *S;
    int ns, caps;
    cc_view *tv;          /* per graph tensor */
    cc_move *mv;
    int nmv, capmv;
    char **notes;
    int nnotes;
    int nsteps;
    int64_t main_peak, skip_peak; /* most words live at once (memplan) */
} cc;

/* lower.c */
int cc_lower(cc *c);
int cc_add_layer(cc *c, int opcode, int node, const char *name);
int cc_add_store(cc *c, int tensor, int64_t h, int64_t w, int64_t ch);
void cc_tensor_grid(const enpu_tensor *t, int64_t *h, int64_t *w, int64_t *ch);
int cc_note(cc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fuse.c */
int cc_fuse(cc *c);
/* tile.c */
int cc_tile(cc *c);
/* cost.c */
int64_t cc_param_words(const enpu_arch *a, const enpu_instr *in);
int64_t cc_cost_chain_limit(const enpu_arch *a, const enpu_instr *chain, int n, int64_t limit,
                            int64_t *act_rows);
/* memplan.c */
int cc_memplan(cc *c, uint8_t **wimg, size_t *wlen, uint8_t **simg, size_t *slen);
void cc_fit_hint(const enpu_arch *a, const char *param, int64_t need, char *buf, size_t n);
/* emit.c */
int cc_emit(cc *c, enpu_program *p, const uint8_t *wimg, size_t wlen, const uint8_t *simg,
            size_t slen);
/* compile.c */
void cc_free(cc *c);

#endif
