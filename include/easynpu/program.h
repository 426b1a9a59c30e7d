/* EasyNPU program file (.enpu): a compiled network, ready for the simulator
 * or an RTL testbench.  Layout and limits are in docs/program.md.
 *
 * Little-endian.  A 32-byte header (magic "ENPU", format version, the arch
 * fingerprint, the section count, the file size, a CRC32 over header and
 * section table), a section table (id, crc32, offset, length per section),
 * then the sections, each starting at a 16-byte boundary.  The reader checks
 * every length, offset, count, index and CRC before it uses it and refuses a
 * bad file with a message naming the section and the field.
 *
 * In memory a program is the arch, the decoded instructions with their layer
 * names, the three memory images and the descriptor tables; strings are
 * plain C strings (the STRINGS section exists only in the file). */
#ifndef EASYNPU_PROGRAM_H
#define EASYNPU_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "easynpu/ir.h"
#include "easynpu/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENPU_PROG_MAGIC "ENPU"
#define ENPU_PROG_VERSION_MAJOR 3
#define ENPU_PROG_VERSION_MINOR 8
#define ENPU_PROG_HEADER_BYTES 32
#define ENPU_PROG_ENTRY_BYTES 24
#define ENPU_PROG_ALIGN 16

/* Limits, enforced before any allocation they size (docs/program.md). */
#define ENPU_PROG_MAX_BYTES ((size_t)3 << 30)       /* whole file */
#define ENPU_PROG_MAX_SECTIONS 32
#define ENPU_PROG_MAX_INSTRS (1 << 20)
#define ENPU_PROG_MAX_IO 4096
#define ENPU_PROG_MAX_HOSTOPS 4096
#define ENPU_PROG_MAX_TABLES 4096
#define ENPU_PROG_MAX_SOURCES (1 << 22)              /* ONNX node names over all layers */
#define ENPU_PROG_MAX_STRINGS_BYTES ((size_t)64 << 20)
#define ENPU_PROG_MAX_ARCH_BYTES ((size_t)64 << 10)
#define ENPU_HOSTOP_MAX_IO 16 /* format 3.4; 8 before */
#define ENPU_HOSTOP_MAX_IO_3_3 8
#define ENPU_HOSTOP_IPARAMS 32 /* format 3.2; 8 in 3.0/3.1 */
#define ENPU_HOSTOP_FPARAMS 32 /* format 3.2; 4 in 3.0/3.1 */
#define ENPU_HOSTOP_IPARAMS_3_1 8
#define ENPU_HOSTOP_FPARAMS_3_1 4
#define ENPU_PROG_MAX_HOST_INIT ((size_t)1 << 30) /* bytes of host constants */

/* Record sizes in the file. */
#define ENPU_PROG_LAYER_BYTES 32
#define ENPU_PROG_LAYER_BYTES_3_0 24 /* format 3.0: no field macs */
#define ENPU_PROG_TABLE_BYTES 16
#define ENPU_PROG_IO_BYTES 96
#define ENPU_PROG_IO_BYTES_3_0 88  /* format 3.0: no field row */
#define ENPU_PROG_HOSTOP_BYTES 336
#define ENPU_PROG_HOSTOP_BYTES_3_3 304 /* formats 3.2 and 3.3: 8 operands */
#define ENPU_PROG_HOSTOP_BYTES_3_1 96 /* formats 3.0 and 3.1: 8 iparams, 4 fparams */

/* X(ID, id, spelling in listings) in file order. */
#define ENPU_SECTIONS(X)          \
    X(ARCH, 1, "arch")            \
    X(STRINGS, 10, "strings")     \
    X(INSTR, 2, "instr")          \
    X(LAYERS, 9, "layers")        \
    X(WEIGHTS, 3, "weights")      \
    X(DTCM_INIT, 4, "dtcm_init")  \
    X(SKIP_INIT, 5, "skip_init")  \
    X(TABLES, 6, "tables")        \
    X(IO, 7, "io")                \
    X(HOSTOPS, 8, "hostops")      \
    X(DRAM_INIT, 11, "dram_init") \
    X(HOST_INIT, 12, "host_init")

typedef enum enpu_section_id {
#define ENPU_X_SEC(ID, id, sp) ENPU_SEC_##ID = id,
    ENPU_SECTIONS(ENPU_X_SEC)
#undef ENPU_X_SEC
} enpu_section_id;

/* "INSTR" etc., NULL for an unknown id. */
const char *enpu_section_name(int id);

typedef enum enpu_io_dir {
    ENPU_IO_INPUT = 0,  /* written into the NPU memory by the host before the run */
    ENPU_IO_OUTPUT = 1, /* read back by the host after the run */
    ENPU_IO_HOST = 2,   /* exchanged with a host op (SYNC) */
    ENPU_IO_PROBE = 3,  /* a layer's output, readable after that layer for checking
                           (not exchanged; later layers may overwrite it) */
    ENPU_IO_CONST = 4   /* a constant operand of a host op (format 3.2): in host memory,
                           its bytes at offset `addr` of the HOST_INIT image, in its
                           dtype, row-major */
} enpu_io_dir;

/* A tensor the host exchanges with the program.  dims are the graph
 * tensor's own shape (layout NHWC: [N, spatial..., C] of an [N, C,
 * spatial...] tensor).  In main or skip DTCM or in DRAM it is int8 stored
 * from word `addr` in rows of enpu_io_row(d) elements, each row folded into
 * pes-lane words (enpu_io_words); in host memory (mem ENPU_MEM_HOST) addr
 * is 0. */
typedef struct enpu_io_desc {
    char *name;          /* owned */
    enpu_io_dir dir;
    enpu_dtype dtype;
    enpu_layout layout;  /* what the dims mean (NHWC for feature maps) */
    int rank;
    int64_t dims[ENPU_MAX_RANK];
    float scale;         /* real = (q - zero_point) * scale; 0 for float tensors */
    int32_t zero_point;
    int mem;             /* ENPU_MEM_MAIN, _SKIP, _DRAM or _HOST */
    uint32_t addr;       /* first word */
    int64_t row;         /* layout any/nchw in NPU memory: elements per stored row, when
                            it is not dims[rank-1] (a tensor that is a view of a
                            feature map with another grid); 0: dims[rank-1] */
} enpu_io_desc;

/* An op the host runs when a SYNC instruction names it. */
typedef struct enpu_hostop {
    char *kind;          /* owned; ONNX op type, e.g. "Softmax" */
    char *name;          /* owned; ONNX node name (may be "") */
    int n_in, n_out;     /* n_in + n_out <= ENPU_HOSTOP_MAX_IO */
    int io[ENPU_HOSTOP_MAX_IO]; /* IO descriptor indices: inputs, then outputs; -1 an
                                   omitted optional operand (format 3.4) */
    int32_t iparam[ENPU_HOSTOP_IPARAMS]; /* e.g. Softmax axis in iparam[0] */
    float fparam[ENPU_HOSTOP_FPARAMS];
} enpu_hostop;

/* An activation table in weight memory (metadata: the bits are in WEIGHTS). */
typedef struct enpu_table_desc {
    char *name;          /* owned; function, e.g. "Sigmoid" */
    uint32_t addr;       /* first word in weight memory */
    uint32_t segments;   /* == arch act_segments */
    float max_err_lsb;   /* fit error against the exact quantized function */
} enpu_table_desc;

/* Where an instruction came from, and where its output can be checked. */
typedef struct enpu_layer_info {
    char *name;          /* owned; layer name ("" if none) */
    int n_src;
    char **src;          /* owned; ONNX node names */
    char *tensor;        /* owned; quantized-graph tensor the instruction computes
                            ("" for none: end, sync) */
    int io;              /* IO descriptor where that tensor lives right after the
                            instruction, -1 when it is not stored (a fused chain
                            member other than the last, end, sync) */
    int group;           /* report row: the instructions of one layer (its row
                            strips, output-channel blocks and DMA transfers) share
                            one group, an instruction index (default: its own) */
    int64_t macs;        /* MACs of the model layer it computes (docs/microarch.md
                            "MACs"): enpu_instr_macs, fewer when some of the
                            instruction's are not the model's (a group conv run
                            dense: zero weights between groups); a sync: its host
                            op's, computed by the host */
} enpu_layer_info;

typedef struct enpu_program {
    enpu_arch arch;
    int n_instr, cap_instr;
    enpu_instr *instr;
    enpu_layer_info *layers;  /* n_instr entries */
    uint8_t *weights;         /* weight-memory image from word 0 (rest zero) */
    size_t weights_len;
    uint8_t *dtcm_init;       /* main DTCM initial contents from word 0 */
    size_t dtcm_init_len;
    uint8_t *skip_init;       /* skip DTCM initial contents from word 0 */
    size_t skip_init_len;
    uint8_t *dram_init;       /* DRAM initial contents from word 0 (streamed weights); a
                                 program longer than the ITCM occupies DRAM words [0,
                                 enpu_program_dram_instr_words), zero in this image */
    size_t dram_init_len;
    int n_tables;
    enpu_table_desc *tables;
    int n_io;
    enpu_io_desc *io;
    int n_hostops;
    enpu_hostop *hostops;
    uint8_t *host_init;       /* the host ops' constant operands (ENPU_IO_CONST) */
    size_t host_init_len;
} enpu_program;

/* Empty program for arch (copied). */
void enpu_program_init(enpu_program *p, const enpu_arch *arch);
/* Frees everything the program owns and zeroes it. */
void enpu_program_free(enpu_program *p);

/* Appends an instruction with its layer name (may be NULL) and the n_src ONNX
 * node names it came from (copied).  No validation here.  ENPU_E_LIMIT past
 * ENPU_PROG_MAX_INSTRS. */
int enpu_program_add_instr(enpu_program *p, const enpu_instr *in, const char *name, int n_src,
                           const char *const *src, enpu_err *err);
/* Instructions in the fused chain that starts at `first`: 1 + the members
 * its fuse_next bits pull in (docs/isa.md "Fused chains"). */
int enpu_program_chain_len(const enpu_program *p, int first);
/* The default of enpu_layer_info.macs for an instruction: enpu_instr_macs,
 * 0 for sync and end. */
int64_t enpu_layer_default_macs(const enpu_instr *in);
/* Sets the checked output of instruction i (tensor name copied; io may be -1). */
int enpu_program_set_layer_output(enpu_program *p, int i, const char *tensor, int io,
                                  enpu_err *err);
/* Reports instruction i under the row of instruction `group` (any index of
 * the program, checked by enpu_program_validate; the default is i itself). */
int enpu_program_set_layer_group(enpu_program *p, int i, int group, enpu_err *err);
/* Appends copies (strings duplicated); returns the new index or a negative
 * status. */
int enpu_program_add_io(enpu_program *p, const enpu_io_desc *d, enpu_err *err);
int enpu_program_add_hostop(enpu_program *p, const enpu_hostop *h, enpu_err *err);
int enpu_program_add_table(enpu_program *p, const enpu_table_desc *t, enpu_err *err);
/* Replaces a memory image (ENPU_SEC_WEIGHTS, _DTCM_INIT, _SKIP_INIT or
 * _DRAM_INIT) with a copy of data[0..n). */
int enpu_program_set_image(enpu_program *p, int section, const void *data, size_t n,
                           enpu_err *err);
/* Appends data[0..n) to the HOST_INIT image at the next multiple of 8
 * bytes (zeros between) and sets *at to its byte offset; ENPU_E_LIMIT when
 * the image would exceed ENPU_PROG_MAX_HOST_INIT (`what` names the data). */
int enpu_program_append_host_init(enpu_program *p, const void *data, size_t n, const char *what,
                                  size_t *at, enpu_err *err);

/* ---- host ops (src/isa/hostop.c) ---------------------------------------- */

/* The attributes a host op needs, in its record's parameters: the one
 * encoding the compiler writes and the simulator's host reads (one layout
 * per op, docs/program.md "HOSTOPS record"; +-inf bounds as flags, since
 * fparam is finite).  enpu_hostop_set_attrs packs the attributes of node n
 * (its op) into h's iparam/fparam; ENPU_E_LIMIT / ENPU_E_INVALID naming the
 * node when a value does not fit.  enpu_hostop_get_attrs is the inverse: it
 * fills n->attr (n->op set by the caller); rank0 is the rank of the first
 * operand (negative axes, a Transpose without a count). */
int enpu_hostop_set_attrs(enpu_hostop *h, const enpu_node *n, enpu_err *err);
void enpu_hostop_get_attrs(const enpu_hostop *h, enpu_node *n, int rank0);
/* A record read from a format 3.0/3.1 file (8 iparam, 4 fparam, windows as
 * 16-bit pairs, Pad's pads from iparam[0]) rewritten in place in the 3.2
 * layout; rank0 as above. */
void enpu_hostop_upgrade_3_1(enpu_hostop *h, int rank0);

/* How the host CPU's time for an op is counted (arch hostcpu_*). */
typedef enum enpu_host_class {
    ENPU_HOST_MOVE = 0,      /* data movement: hostcpu_move_cycles per element */
    ENPU_HOST_ARITH,         /* arithmetic, comparisons, reductions: hostcpu_arith_cycles */
    ENPU_HOST_TRANSCENDENTAL, /* exp/log/erf/sqrt per element: hostcpu_transc_cycles */
    ENPU_HOST_MAC            /* Conv, ConvTranspose, Gemm, MatMul: per element and per MAC */
} enpu_host_class;

enpu_host_class enpu_host_op_class(enpu_op op);

/* NPU cycles the host CPU of arch a takes for one host op (docs/microarch.md
 * §13.11): ceil((hostcpu_op_cycles + hostcpu_cvt_cycles * int8_elems +
 * per-element cycles of its class * elems [+ hostcpu_mac_cycles * macs]) *
 * clock_mhz / hostcpu_mhz).  elems: elements of its largest operand (inputs
 * and outputs, constants aside); int8_elems: elements it dequantizes or
 * quantizes (operands in NPU memory; a data movement copies the int8 codes
 * and converts none); nearest: a Resize in nearest mode is data movement.
 * The compiler's model and the simulator both call it. */
int64_t enpu_host_op_cycles(const enpu_arch *a, enpu_op op, bool nearest, int64_t elems,
                            int64_t int8_elems, int64_t macs);
/* enpu_host_op_cycles of the host op sync instruction `instr` of p names (its
 * operands' descriptors, its layer's MACs); 0 for any other instruction. */
int64_t enpu_sync_host_cycles(const enpu_program *p, int instr);
/* All the cycles a sync takes: host_sync_cycles + enpu_sync_host_cycles. */
int64_t enpu_sync_cycles(const enpu_program *p, int instr);

/* The graph tensor's shape of descriptor d (d->rank dims into dims): the
 * dims themselves, or for layout NHWC [N, d2.., C] -> [N, C, d2..]. */
void enpu_io_user_dims(const enpu_io_desc *d, int64_t *dims);
/* Elements per stored row of a DTCM descriptor: d->row, or dims[rank-1]
 * when it is 0 (1 for a scalar). */
int64_t enpu_io_row(const enpu_io_desc *d);
/* Words an IO descriptor occupies in its memory (0 for host tensors). */
int64_t enpu_io_words(const enpu_arch *arch, const enpu_io_desc *d);

/* Whether the program is fetched from DRAM (it does not fit the ITCM), and
 * the DRAM words its instructions occupy from word 0 (0 when it fits). */
int64_t enpu_program_dram_instr_words(const enpu_program *p);

/* Checks the whole program against its arch (docs/program.md
 * "Validation"): every instruction (enpu_instr_validate_chained), fused
 * chains, END last and only last, SYNC host_op indices, memory images and
 * instruction count within the memories (ENPU_E_NOFIT; a program longer than
 * the ITCM is fetched from DRAM, where it occupies the first words and no
 * DMA may touch it), dependency tokens (every token an instruction takes
 * was sent by an earlier instruction of the program order, so the program
 * cannot deadlock), table, IO and host op descriptors.  Messages name the
 * section, the index and the field. */
int enpu_program_validate(const enpu_program *p, enpu_err *err);

/* Reads and validates a program from n bytes of memory; `what` names it in
 * messages.  When `expect` is non-NULL the program's arch fingerprint must
 * equal expect's (ENPU_E_INCOMPATIBLE naming both archs and fingerprints).  On failure *p is
 * left empty (nothing to free). */
int enpu_program_read_mem(const uint8_t *data, size_t n, const char *what,
                          const enpu_arch *expect, enpu_program *p, enpu_err *err);
/* enpu_program_read_mem on the contents of path (at most ENPU_PROG_MAX_BYTES). */
int enpu_program_read(const char *path, const enpu_arch *expect, enpu_program *p, enpu_err *err);

/* Validates, then serializes into a new buffer (*out, freed by the caller).
 * The bytes depend only on the program's contents. */
int enpu_program_serialize(const enpu_program *p, uint8_t **out, size_t *n, enpu_err *err);
/* Serializes and writes atomically (enpu_file_write_atomic). */
int enpu_program_write(const char *path, const enpu_program *p, enpu_err *err);

/* ---- listings (docs/program.md "Listing") -------------------------------- */

/* Writes the text listing of p: `.format`, `.arch {json}`, one line per
 * instruction, descriptor directives, then the memory images as `.section`
 * with `.hex` lines of 16 bytes (`.zero N` for runs of zero lines).
 * malloc'd NUL-terminated text; NULL on error. */
char *enpu_program_disasm(const enpu_program *p, enpu_err *err);

/* Assembles a listing (n bytes of text; `what` is its file name, used as
 * "what:LINE:" in errors) into *p.  If the listing has no `.arch`, `dflt`
 * (may be NULL: preset "easynpu") is used; if both are given they must
 * agree.  Validates the result.  On failure *p is left empty. */
int enpu_program_asm(const char *text, size_t n, const char *what, const enpu_arch *dflt,
                     enpu_program *p, enpu_err *err);

/* ---- export for RTL testbenches ------------------------------------------ */

/* Writes $readmemh images into directory dir (created if absent): itcm.hex
 * (4 lines of 128 bits per instruction, bits [127:0] first), weights.hex,
 * dtcm.hex, skip.hex, dram.hex (one bus word per line, word 0 first, each
 * line the word's bytes most significant first) and manifest.json: the
 * files of enpu_hex_files.  Refuses to overwrite any path in `inputs`
 * (n_inputs entries). */
extern const char *const enpu_hex_files[]; /* the files it writes, in order, NULL-terminated */
int enpu_program_export_hex(const enpu_program *p, const char *dir, const char *const *inputs,
                            int n_inputs, enpu_err *err);

#ifdef __cplusplus
}
#endif
#endif
