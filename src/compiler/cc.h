/* Private state of the compiler, shared by its phases (one file each):
 * lower.c -> fuse.c -> tile.c (+ cost.c) -> memplan.c -> emit.c, driven by
 * compile.c.  docs/compiler.md describes the phases. */
#ifndef ENPU_CC_H
#define ENPU_CC_H

#include <stdarg.h>
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
    int64_t dram_addr;    /* -1: no DRAM copy (graph inputs and outputs, tensors kept in DRAM) */
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

/* ---- items: what the program does, before it is ordered ----------------------
 * The memory plan (memplan.c for a model that fits on chip, offchip.c for
 * one that streams through DRAM) turns the chains and host ops into items:
 * a chain (head + members, one per row strip or output-channel block), a
 * host op, a DMA transfer, END.  Each item lists the memory regions it reads
 * and writes; sched.c derives the dependencies from them, orders the items
 * (list scheduling) and gives them dependency tokens; emit.c writes them. */

/* rows x len words from addr, row r at addr + r*stride, in one memory. */
typedef struct cc_region {
    int mem;                 /* ENPU_MEM_MAIN, _SKIP, _WEIGHT or _DRAM */
    int64_t addr, rows, len, stride;
} cc_region;

enum { CC_IT_CHAIN = 0, CC_IT_HOST, CC_IT_DMA, CC_IT_END };
#define CC_IT_REGIONS 16

typedef struct cc_item {
    int kind;
    int layer;               /* cc_layer it implements (chain head or host op), -1 */
    int n;                   /* instructions */
    enpu_instr ins[16];      /* chain: head and members; others: one */
    int lay[16];             /* the cc_layer of each instruction (names, sources) */
    int tensor;              /* graph tensor the item completes (checked after it), -1 */
    int tmem;                /* where that tensor then lies: ENPU_MEM_MAIN/_SKIP/_DRAM, -1 */
    int64_t taddr;
    bool tout;               /* the tensor is a graph output (its OUTPUT descriptor) */
    int group;               /* report row: an item index (the layer's first item) */
    int what;                /* dma: CC_DMA_* (what it moves, for reports) */
    bool holds;              /* chain with ps_hold: the next chain on the datapath is cont_of it */
    int cont_of;             /* chain with ps_cont: the item whose held sums it continues, -1 */
    cc_region rd[CC_IT_REGIONS], wr[CC_IT_REGIONS];
    int nrd, nwr;
    /* sched.c */
    int queue;               /* 0 compute, 1 + e DMA engine e */
    int64_t est;             /* estimated cycles */
    int *dep;                /* items it depends on (earlier in the natural order) */
    int ndep, capdep;
} cc_item;

enum { CC_DMA_INPUT = 1, CC_DMA_OUTPUT, CC_DMA_IFMAP, CC_DMA_OP2, CC_DMA_OFMAP, CC_DMA_WEIGHTS };

typedef struct cc {
    const enpu_graph *g;
    const enpu_arch *a;
    enpu_compile_opts o;
    enpu_compile_cache *cache; /* o.cache, or the compile's own */
    bool no_lanes;        /* no lane groups (a retry: their weights did not fit) */
    /* Host fallback (a retry, compile.c): nodes whose NPU form failed run
     * on the host; fail_node names the node a failure can fall back for
     * (set beside the error, -1 otherwise). */
    const bool *force_host;   /* per quantized node, or NULL */
    char *const *force_why;   /* per node: the NPU form's error, for the note */
    int fail_node;
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
    /* items (natural order), then the emitted order */
    cc_item *it;
    int nit, capit;
    int *sorder;          /* items in stream order (sched.c) */
    int64_t dram_words;   /* DRAM words allocated (after the instructions) */
    bool offchip;         /* the off-chip plan (offchip.c) was used */
    uint8_t *dram_img;    /* DRAM image (streamed weights), dram_img_len bytes from DRAM word 0 */
    size_t dram_img_len;
} cc;

/* lower.c */
int cc_lower(cc *c);
int cc_add_layer(cc *c, int opcode, int node, const char *name);
int cc_add_store(cc *c, int tensor, int64_t h, int64_t w, int64_t ch);
void cc_tensor_grid(const enpu_tensor *t, int64_t *h, int64_t *w, int64_t *ch);
/* (lower.c, shared with the systolic back end) Natural position (in the
 * [h][w][c] order of cc_tensor_grid) of element e of tensor t. */
int64_t cc_natural_pos(const enpu_tensor *t, int64_t e);
/* Whether element positions pos (NULL: natural) in a storage of store_c
 * channels are t's natural layout; whether they are the identity. */
bool cc_pos_natural(const enpu_tensor *t, const int64_t *pos, int64_t store_c);
bool cc_pos_identity(const enpu_tensor *t, const int64_t *pos);
/* For each element of a permuting move's output, the flat index of the
 * input element it takes; NULL for a plain reshape (identity), or with
 * *oom set when out of memory.  malloc'd. */
int64_t *cc_move_src(const enpu_graph *g, const enpu_node *n, bool *oom);
/* Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity, Dropout. */
bool cc_is_perm_move(enpu_op op);
/* A stride that does not fit its 4-bit field is harmless when the window
 * is applied once along that axis: *s becomes the smallest stride giving
 * that one output position (the output is the same). */
void cc_shrink_stride(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t d, int64_t out, int64_t *s);
int64_t cc_perm_rank(int perm, int64_t h, int64_t w, int64_t ch, int64_t H, int64_t W, int64_t C);
int cc_note(cc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* malloc'd strings for every back end's names and notes: the formatted text
 * (cc_vdupf reads ap once; the caller va_ends it), or a copy of s
 * ("" for NULL); NULL only when out of memory. */
char *cc_vdupf(const char *fmt, va_list ap);
char *cc_dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *cc_dups(const char *s);
/* fuse.c */
int cc_fuse(cc *c);
/* tile.c */
int cc_tile(cc *c);
/* What a tiling search found: the chosen tiling's cycles and the best
 * other's (-1: there is none), each as x, y, zs, band (0: the whole
 * kernel); the legal candidates and how many were costed. */
typedef struct cc_tile_info {
    int64_t cost, alt_cost;
    int64_t best[4], alt[4];
    int64_t candidates, costed;
} cc_tile_info;
/* enpu_tile_chain with the search mode, through the cache (NULL: none;
 * EXHAUSTIVE never uses it), and what it found into *info (may be NULL). */
int cc_tile_search(enpu_compile_cache *cache, const enpu_arch *a, enpu_instr *chain, int n, bool naive,
                   enpu_search mode, const char *what, cc_tile_info *info, enpu_err *err);
/* cost.c */
int64_t cc_param_words(const enpu_arch *a, const enpu_instr *in);
int64_t cc_cost_chain_limit(const enpu_arch *a, const enpu_instr *chain, int n, int64_t limit,
                            int64_t *act_rows);
/* The arch parameters the cost model reads (and nothing else: the walk
 * takes this, so a key made of it misses nothing). */
typedef struct cc_carch {
    int64_t pes, pe_rows, ifmap_pad_depth, weight_pad_depth, psum_depth;
    int64_t pe_pipeline_depth, requant_latency, dtcm_read_latency, weight_mem_latency;
} cc_carch;
void cc_carch_of(const enpu_arch *a, cc_carch *ca);
/* A lower bound of cc_cost_chain_limit's cycles in O(units), not O(words):
 * the same walk without bus conflicts and pass stalls (cost.c "relax").
 * With limit > 0 it may stop early with a value > limit. */
int64_t cc_cost_bound(const enpu_arch *a, const enpu_instr *chain, int n, int64_t limit);
/* A weaker lower bound in O(tile shapes): every compute cycle after the
 * first unit's load, and every loader word before the last unit's passes. */
int64_t cc_cost_bound0(const enpu_arch *a, const enpu_instr *chain, int n);
/* Cache keys (cache.c): CC_KEY_COST for a chain's cost, CC_KEY_TILE for its
 * tiling (the tile fields left out: they are the answer), then the tag's
 * own words.  cc_chain_key writes at most CC_CHAIN_KEY_WORDS words into
 * key and returns its length in bytes. */
enum { CC_KEY_COST = 1, CC_KEY_TILE };
#define CC_CHAIN_KEY_WORDS (16 + 16 * (sizeof(enpu_instr) / sizeof(int64_t)))
size_t cc_chain_key(const enpu_arch *a, const enpu_instr *chain, int n, int64_t tag, bool tiling,
                    int64_t *key);
/* cc_cost_chain_limit without a limit, through the cache (NULL: none). */
int64_t cc_cost_chain_cached(enpu_compile_cache *cache, const enpu_arch *a, const enpu_instr *chain,
                             int n, int64_t *act_rows);
/* cache.c: the value of key into val (at most vcap bytes); its length, 0
 * when absent. */
size_t cc_cache_get(enpu_compile_cache *c, const void *key, size_t klen, void *val, size_t vcap);
void cc_cache_put(enpu_compile_cache *c, const void *key, size_t klen, const void *val, size_t vlen);
/* memplan.c */
typedef struct iv {
    int64_t a, b; /* [a, b) words */
} iv;
typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
} wbuf;
/* The on-chip plan: main DTCM two-ended, skip DTCM, weight memory.
 * ENPU_E_NOFIT (message set) when the model does not fit on chip. */
int cc_memplan(cc *c, uint8_t **wimg, size_t *wlen, uint8_t **simg, size_t *slen);
/* Storage lifetimes in steps (def / last / last_op2; dstep: the writing step). */
void cc_lifetimes(cc *c, int *dstep);
/* The lowest (top: highest) address for `words` words in a memory of `cap`
 * words among the busy intervals (sorted in place); -1 if none. */
int64_t cc_place(iv *busy, int n, int64_t cap, int64_t words, bool top);
/* Lays out layer l's weights, biases, (M, S) pairs and table at word
 * boundaries at the end of b, setting its instruction's addresses (words of
 * b). */
int cc_layout_layer_params(cc *c, cc_layer *l, wbuf *b);
int cc_wb_reserve(cc *c, wbuf *b, size_t n);
int64_t cc_wb_block(cc *c, wbuf *b, const void *data, size_t n);
/* offchip.c: the plan of a model that does not fit on chip (DRAM). */
int cc_offchip(cc *c, uint8_t **wimg, size_t *wlen, uint8_t **simg, size_t *slen);
void cc_fit_hint(const enpu_arch *a, const char *param, int64_t need, char *buf, size_t n);
/* items.c: building items */
cc_item *cc_item_new(cc *c, int kind, int layer);
void cc_item_read(cc_item *it, int mem, int64_t addr, int64_t rows, int64_t len, int64_t stride);
void cc_item_write(cc_item *it, int mem, int64_t addr, int64_t rows, int64_t len, int64_t stride);
/* Tensor t of a host item, when only the host sees it (between two host
 * ops, no storage): adds its pseudo-word access in ENPU_MEM_HOST to it (a
 * write when `write`) and returns true; false for a tensor with storage. */
bool cc_item_host_tensor(const cc *c, cc_item *it, int t, bool write);
/* A chain item from instructions (head first): regions from the blocks of
 * every instruction (docs/isa.md "Memory blocks"). */
cc_item *cc_item_chain(cc *c, int layer, const enpu_instr *ins, int n);
/* A DMA item moving rows x len words between DRAM and memory `mem`. */
cc_item *cc_item_dma(cc *c, int layer, int what, int dir, int mem, int64_t sram, int64_t dram,
                     int64_t rows, int64_t len, int64_t sstride, int64_t dstride);
/* Input rows [a, b) that output rows [r0, r1) of window head h read, and
 * the padding rows above (pt) and below (pb) them. */
void cc_in_rows(const enpu_instr *h, int64_t r0, int64_t r1, int64_t *a, int64_t *b, int64_t *pt,
                int64_t *pb);
/* Words of one input row of window head h as it reads its input (a view
 * of a reshaped map has the view's rows, not the stored map's). */
int64_t cc_in_row_words(const cc *c, const enpu_instr *h);
/* Cuts the chain ins[0..n) (whole map) to output rows [r0, r1): the head's
 * input rows, padding and output height, the members' heights.  Addresses
 * are left to the caller. */
void cc_cut_rows(enpu_instr *ins, int n, int64_t r0, int64_t r1);
/* Can chain `head` be cut into row strips (a window or 1x1 head, no reshape
 * member, not fc)? */
bool cc_strip_ok(const cc *c, int head);
/* Does the host (a host op) read and write tensor t in DRAM rather than in
 * the main DTCM?  A graph input or output lives in DRAM (its descriptor is
 * the host's), and so does a tensor kept only there. */
bool cc_host_in_dram(const cc *c, int t);
/* The host CPU's time for host layer li (enpu_host_op_cycles of its node),
 * in NPU cycles: what the emitted sync will take besides host_sync_cycles. */
int64_t cc_host_cycles(const cc *c, int li);
/* Sets the fuse registers of chain `head` (its members' fuse_next, the
 * head's fused bn and activation) in c->L[..].ins. */
void cc_chain_bits(cc *c, int head);
/* DRAM words for n words (bump allocation after the instructions). */
int64_t cc_dram_alloc(cc *c, int64_t words);
/* Items of a plan that fits on chip (memplan done): the chains and host ops
 * in program order, with the graph inputs loaded from and the outputs stored
 * to DRAM when the arch has one. */
int cc_items_onchip(cc *c);
/* sched.c: dependencies, order and tokens of the items. */
int cc_schedule(cc *c);
/* hostop.c */
/* The IO descriptor of a host op's non-constant operand t (an output when
 * `out`), where the back end stores it; negative status on failure. */
typedef int (*cc_operand_fn)(void *ctx, int t, bool out);
/* Adds the host op record of node n of g to p (every back end's rule):
 * kind and attributes from n, every input in its place (a constant as an
 * ENPU_IO_CONST descriptor with its bytes in HOST_INIT, one per tensor;
 * an omitted optional operand as -1), then the outputs, each
 * non-constant operand's descriptor from desc.  Returns its index or a
 * negative status (ENPU_E_UNSUPPORTED naming the node for operands the
 * record cannot hold). */
int cc_add_hostop(enpu_program *p, const enpu_graph *g, const enpu_node *n, cc_operand_fn desc,
                  void *ctx, enpu_err *err);
/* emit.c */
int cc_emit(cc *c, enpu_program *p, const uint8_t *wimg, size_t wlen, const uint8_t *simg,
            size_t slen);
/* compile.c */
void cc_free(cc *c);

#endif
