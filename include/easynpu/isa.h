/* EasyNPU instruction set: one 512-bit instruction per layer.
 *
 * Every field, its width rule, signedness and meaning is a row of
 * src/isa/isa_fields.def; this header generates the instruction struct and
 * the field enum from it.  Widths that depend on the architecture (addresses,
 * tile sizes, the multiplier) are resolved by enpu_isa_layout for a given
 * arch, and bit positions follow in table order, LSB first.  docs/isa.md has
 * the semantics of every opcode and the layout for the default preset.
 * (The table is included by a path relative to this header, so the one
 * table serves the library and this interface alike.) */
#ifndef EASYNPU_ISA_H
#define EASYNPU_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_ISA_VERSION 9
#define ENPU_INSTR_BITS 512
#define ENPU_INSTR_BYTES 64
/* Longest line enpu_instr_format writes, without the layer name part. */
#define ENPU_INSTR_FMT_MAX 2048

typedef enum enpu_field {
#define ENPU_FIELD(name, sign, rule, bits, names, fmt, meaning) ENPU_F_##name,
#include "../../src/isa/isa_fields.def"
    ENPU_F_COUNT
} enpu_field;

/* Opcodes: ENPU_OPC_CONV, ENPU_OPC_DWCONV, ... (values from the table). */
typedef enum enpu_opcode {
#define ENPU_OPCODE(id, code, mnemonic, klass, meaning) ENPU_OPC_##id = code,
#include "../../src/isa/isa_fields.def"
} enpu_opcode;

/* Operation classes (how the top controller drives the datapath). */
typedef enum enpu_opclass {
    ENPU_CLASS_NONE = 0, /* unknown opcode */
    ENPU_CLASS_CONV,     /* broadcast, accumulates over input channels */
    ENPU_CLASS_CW,       /* multicast, channel-wise */
    ENPU_CLASS_MOVE,     /* data movement (reshape) */
    ENPU_CLASS_CTRL,     /* end, sync */
    ENPU_CLASS_DMA,      /* a DMA transfer (format DMA) */
    ENPU_CLASS_SYA,      /* the systolic engine's (format SYA, docs/systolic.md) */
    ENPU_CLASS_RS        /* the row-stationary engine (format RS, docs/rowstat.md) */
} enpu_opclass;

/* Instruction formats: which fields an instruction holds (isa_fields.def):
 * conv (class CONV), channel-wise (CW and MOVE), control (CTRL), dma, the
 * systolic engine's (SYA) and the row-stationary engine's (RS). */
typedef enum enpu_format {
    ENPU_FMT_CONV = 0, ENPU_FMT_CW, ENPU_FMT_CTRL, ENPU_FMT_DMA, ENPU_FMT_SYA, ENPU_FMT_RS, ENPU_FMT_COUNT
} enpu_format;
/* Field format masks: bit f set when the field is in format f. */
enum { ENPU_FM_CONV = 1 << ENPU_FMT_CONV, ENPU_FM_CW = 1 << ENPU_FMT_CW,
       ENPU_FM_CTRL = 1 << ENPU_FMT_CTRL, ENPU_FM_DMA = 1 << ENPU_FMT_DMA,
       ENPU_FM_SYA = 1 << ENPU_FMT_SYA,
       ENPU_FM_RS = 1 << ENPU_FMT_RS,
       ENPU_FM_LAYER = ENPU_FM_CONV | ENPU_FM_CW,
       ENPU_FM_GEOM = ENPU_FM_LAYER | ENPU_FM_SYA | ENPU_FM_RS,
       ENPU_FM_ALL = ENPU_FM_LAYER | ENPU_FM_CTRL | ENPU_FM_DMA | ENPU_FM_SYA | ENPU_FM_RS };

/* Command queues (the dependency tokens' push/pop masks): queue 0 is the
 * compute datapath (every LAYER-format instruction), queue 1 + e is DMA
 * engine e. */
#define ENPU_QUEUE_COMPUTE 0
#define ENPU_MAX_QUEUES 5

/* Enumerated field values (the spellings in isa_fields.def). */
enum { ENPU_CAST_BROADCAST = 0, ENPU_CAST_MULTICAST = 1 };
enum { ENPU_ACT_NONE = 0, ENPU_ACT_RELU = 1, ENPU_ACT_TABLE = 2 };
enum { ENPU_ORDER_BN_ACT = 0, ENPU_ORDER_ACT_BN = 1 };
enum { ENPU_MEM_MAIN = 0, ENPU_MEM_SKIP = 1, ENPU_MEM_WEIGHT = 2, ENPU_MEM_HOST = 3,
       ENPU_MEM_DRAM = 4 };
enum { ENPU_DMA_LOAD = 0, ENPU_DMA_STORE = 1 };
enum { ENPU_PERM_HWC = 0, ENPU_PERM_HCW, ENPU_PERM_WHC, ENPU_PERM_WCH, ENPU_PERM_CHW,
       ENPU_PERM_CWH, ENPU_PERM_COUNT };

/* One decoded instruction: one member per table row, signed fields holding
 * negative values as such.  Zero-initialise, then set what the op uses. */
typedef struct enpu_instr {
#define ENPU_FIELD(name, sign, rule, bits, names, fmt, meaning) int64_t name;
#include "../../src/isa/isa_fields.def"
} enpu_instr;

/* Width rules of the table. */
typedef enum enpu_wrule {
    ENPU_W_FIXED = 0,
    ENPU_W_MAIN,
    ENPU_W_SKIP,
    ENPU_W_DTCM,
    ENPU_W_WMEM,
    ENPU_W_PSUM,
    ENPU_W_IFPAD,
    ENPU_W_ROWS,
    ENPU_W_MULT,
    ENPU_W_DRAM,
    ENPU_W_SRAM
} enpu_wrule;

typedef struct enpu_field_info {
    const char *name;
    int is_signed;
    enpu_wrule rule;
    int fixed_bits;          /* for ENPU_W_FIXED */
    const char *value_names; /* "a|b|c" or NULL */
    int formats;             /* ENPU_FM_* mask */
    const char *meaning;
    size_t offset;           /* offsetof(enpu_instr, name) */
} enpu_field_info;

/* Resolved widths and positions for one arch. */
typedef struct enpu_isa_layout {
    int width[ENPU_F_COUNT];
    int pos[ENPU_FMT_COUNT][ENPU_F_COUNT]; /* LSB position per format, -1: not in it */
    int used_bits[ENPU_FMT_COUNT];         /* bits [used_bits, 512) are reserved, zero */
} enpu_isa_layout;

/* The format of an opcode (ENPU_FMT_CW for an unknown one). */
enpu_format enpu_opcode_format(int64_t opcode);
/* The queue an instruction executes on (ENPU_QUEUE_COMPUTE or 1 + engine). */
int enpu_instr_queue(const enpu_instr *in);

/* The table row of field f (0 <= f < ENPU_F_COUNT). */
const enpu_field_info *enpu_field_get(int f);
/* Field index by name, -1 if unknown. */
int enpu_field_find(const char *name);
/* Value of field f in an instruction (by reference for writing). */
static inline int64_t *enpu_instr_field(enpu_instr *in, int f) {
    return (int64_t *)((char *)in + enpu_field_get(f)->offset);
}
static inline int64_t enpu_instr_get(const enpu_instr *in, int f) {
    return *(const int64_t *)((const char *)in + enpu_field_get(f)->offset);
}

/* Opcode properties: class ENPU_CLASS_NONE and mnemonic NULL if unknown. */
enpu_opclass enpu_opcode_class(int64_t opcode);
const char *enpu_opcode_mnemonic(int64_t opcode);
const char *enpu_opcode_meaning(int64_t opcode);
/* Opcode for a mnemonic, -1 if unknown. */
int enpu_opcode_find(const char *mnemonic);
/* All opcodes in table order (n gets the count). */
const int *enpu_opcode_list(int *n);

/* Widths and positions of every field for `arch`, per format.  ENPU_E_LIMIT
 * (naming the format, the width needed and the widest fields) when a
 * format needs more than 512 bits.  Does not validate the rest of the
 * arch. */
int enpu_isa_layout_make(const enpu_arch *arch, enpu_isa_layout *out, enpu_err *err);

/* Legal range of field f under a layout (from its width and sign). */
void enpu_field_range(const enpu_isa_layout *l, int f, int64_t *lo, int64_t *hi);

/* Packs in into 64 bytes, little-endian bit order (bit i of the instruction
 * is bit i%8 of byte i/8), in the format of its opcode.  ENPU_E_INVALID
 * naming the field, its value and range when a value does not fit its
 * width, or when a field outside the format is not zero.  No semantic
 * checks. */
int enpu_instr_encode(const enpu_isa_layout *l, const enpu_instr *in,
                      uint8_t out[ENPU_INSTR_BYTES], enpu_err *err);

/* Unpacks 64 bytes: the opcode (bits [7:0]) chooses the format.
 * ENPU_E_FORMAT if a reserved bit of that format is set, naming the bit.  No
 * semantic checks (see enpu_instr_validate). */
int enpu_instr_decode(const enpu_isa_layout *l, const uint8_t in[ENPU_INSTR_BYTES],
                      enpu_instr *out, enpu_err *err);

/* Semantic checks of one instruction against the arch (docs/isa.md
 * "Validation"): known opcode, every field within its width, geometry
 * consistent with the op (output size from input, kernel, stride, padding,
 * dilation), tiles within the ifmap pad and psum file, every memory block
 * (enpu_instr_blocks) inside its memory, no ifmap/ofmap overlap.
 * ENPU_E_INVALID with a message naming the field. */
int enpu_instr_validate(const enpu_arch *arch, const enpu_instr *in, enpu_err *err);

/* As enpu_instr_validate for an instruction that is (chained != 0) or is not
 * a member of a fused chain, i.e. whose predecessor has fuse_next set: such
 * an instruction takes its input from the PE tile, so its ifmap block is not
 * read (and not checked). */
int enpu_instr_validate_chained(const enpu_arch *arch, const enpu_instr *in, int chained,
                                enpu_err *err);

/* One memory block an instruction reads or writes. */
typedef struct enpu_mem_block {
    const char *role; /* "ifmap", "ofmap", "op2", "skip", "weights", "bias", "quant", "table" */
    int mem;          /* ENPU_MEM_MAIN / SKIP / WEIGHT */
    int64_t addr;     /* first word */
    int64_t words;    /* length in words */
    int write;        /* 1 if written */
} enpu_mem_block;
#define ENPU_MAX_BLOCKS 8

/* The memory blocks an instruction uses, with sizes from docs/isa.md
 * "Memory blocks" (the contract between compiler and simulator).  A chained
 * instruction (see enpu_instr_validate_chained) reads no ifmap block; one
 * with fuse_next writes no ofmap block.  Returns
 * the count (0..ENPU_MAX_BLOCKS).  Geometry must have been validated (sizes
 * are computed in int64 without overflow for 16-bit dims). */
int enpu_instr_blocks(const enpu_arch *arch, const enpu_instr *in, int chained,
                      enpu_mem_block *out);

/* Multiply-accumulates of one instruction, EasyNPU's one definition of MACs
 * (docs/microarch.md "MACs"; enpu_node_macs is the same over a graph):
 * conv ho*wo*co*(ci/groups)*hk*wk, fc hi*wi*ci*co, dwconv and avgpool
 * ho*wo*co*hk*wk; every other opcode 0 (bn, act, add, mul, maxpool, relu,
 * reshape, sync, end: no reduction over inputs). */
int64_t enpu_instr_macs(const enpu_instr *in);

/* Parameter words an instruction reads at its chain's start
 * (docs/microarch.md §11.3, §12.4): bias and requantization blocks for
 * conv, conv_relu, fc, dwconv, avgpool, bn (bn also its multipliers), the
 * table block for act, none otherwise. */
int64_t enpu_instr_param_words(const enpu_arch *arch, const enpu_instr *in);

/* Rank of element (h, w, c) of an H x W x C map in the reading order of
 * reshape permutation `perm` (ENPU_PERM_*; docs/microarch.md §11.9). */
int64_t enpu_perm_rank(int64_t perm, int64_t H, int64_t W, int64_t C, int64_t h, int64_t w,
                       int64_t c);

/* Words of a feature map [h][w][c] with c folded into pes-channel words. */
int64_t enpu_fmap_words(const enpu_arch *arch, int64_t h, int64_t w, int64_t c);

/* Activation table block in weight memory (docs/isa.md "Activation table
 * block"): a header of ENPU_TABLE_HEADER_BYTES (8 little-endian i32: x_base,
 * seg_shift, M, S, zp_out, lo, hi, segments) from a word boundary, then
 * act_segments records of (i32 a, i32 b) from the next word boundary. */
#define ENPU_TABLE_HEADER_BYTES 32
int64_t enpu_table_words(const enpu_arch *arch);

/* (M, S) records (two little-endian i32 each) of an instruction's quant
 * block in weight memory (docs/isa.md "Memory blocks"): one per output
 * channel for conv, conv_relu, fc, dwconv, avgpool and bn; with requant
 * "tflite" (whose Q31 multipliers do not fit the instruction's
 * mult_bits-wide fields) also add, 3 records (the output's (M, S), then
 * in1's and in2's (A, SA)), and mul, 1 (the output's); 0 otherwise. */
int64_t enpu_quant_records(const enpu_arch *arch, const enpu_instr *in);

/* Words from ofmap_addr to the end of the last word an instruction stores
 * (ofmap_wpp / ofmap_word make gaps for a concat at store). */
int64_t enpu_ofmap_span(const enpu_arch *arch, const enpu_instr *in);
/* Words from ifmap_addr to the end of the last word an instruction reads
 * (ifmap_wpp / ifmap_word: some channel words of each pixel, ISA 9). */
int64_t enpu_ifmap_span(const enpu_arch *arch, const enpu_instr *in);

/* Writes one listing line for `in`: the mnemonic, then name="layer" when
 * layer_name is non-NULL, then key=value for every non-zero field (numbers
 * in decimal, enumerated fields by name).  Quoted strings escape '"', '\\'
 * and bytes outside printable ASCII as \xHH.  Returns the length written
 * (truncated to n-1 like snprintf's, same return convention). */
int enpu_instr_format(const enpu_instr *in, const char *layer_name, char *buf, size_t n);

/* Markdown tables of the opcodes and of the fields with their widths and bit
 * ranges for arch, as embedded in docs/isa.md.  malloc'd; NULL on error. */
char *enpu_isa_table_md(const enpu_arch *arch, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
