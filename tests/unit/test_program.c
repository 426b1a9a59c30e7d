/* Program file: write/read round trips, disasm -> asm byte identity, and every
 * kind of corruption the reader must refuse with the right category and a
 * message naming the section and field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "easynpu/file.h"
#include "easynpu/program.h"
#include "testutil.h"

/* ---- a small program using every section --------------------------------- */

static enpu_instr base(int64_t op, int64_t hi, int64_t wi, int64_t ci, int64_t ho, int64_t wo,
                       int64_t co) {
    enpu_instr in;
    memset(&in, 0, sizeof in);
    in.opcode = op;
    in.hi = hi, in.wi = wi, in.ci = ci, in.ho = ho, in.wo = wo, in.co = co;
    in.hk = in.wk = in.stride_h = in.stride_w = in.dil_h = in.dil_w = in.groups = 1;
    in.rows = 1;
    in.zs = 1;
    in.clamp_lo = -128;
    in.clamp_hi = 127;
    in.cast_mode = enpu_opcode_class(op) == ENPU_CLASS_CONV ? ENPU_CAST_BROADCAST : ENPU_CAST_MULTICAST;
    return in;
}

static void tile(enpu_instr *in, int64_t x, int64_t y) {
    in->tile_x = x;
    in->tile_y = y;
    in->tile_xi = in->stride_w * (x - 1) + in->dil_w * (in->wk - 1) + 1;
    in->tile_yi = in->stride_h * (y - 1) + in->dil_h * (in->hk - 1) + 1;
}

static void add(enpu_program *p, const enpu_instr *in, const char *name, const char *src1,
                const char *src2) {
    const char *src[2] = {src1, src2};
    enpu_err err = {0};
    int n = src2 ? 2 : src1 ? 1 : 0;
    assert_int_equal(enpu_program_add_instr(p, in, name, n, src, &err), 0);
}

/* A keyword-spotting-shaped program: conv(+fused table act), maxpool stored
 * to the skip DTCM, add with the skip copy, reshape (flatten), FC, SYNC for a
 * host Softmax, END. */
static void build(enpu_program *p) {
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_program_init(p, &a);

    enpu_instr c1 = base(ENPU_OPC_CONV, 26, 49, 1, 24, 24, 28);
    c1.hk = c1.wk = 3;
    c1.stride_w = 2;
    c1.zs = 2;
    tile(&c1, 4, 4);
    c1.fuse_next = 1;
    c1.fuse_act = ENPU_ACT_TABLE;
    c1.weight_addr = 0, c1.bias_addr = 18, c1.quant_addr = 25;
    c1.zp_in = -3, c1.zp_out = 5;
    add(p, &c1, "conv1", "Conv_0", "BatchNormalization_1");

    enpu_instr act = base(ENPU_OPC_ACT, 24, 24, 28, 24, 24, 28);
    act.zs = 2;
    tile(&act, 4, 4);
    act.table_addr = 39;
    act.ofmap_addr = 4096 - 1152;
    act.zp_in = 5, act.zp_out = -128, act.out_mult = 777777, act.out_shift = 27;
    add(p, &act, "conv1 \"sigmoid\"\tact", "Sigmoid_2", NULL);

    enpu_instr mp = base(ENPU_OPC_MAXPOOL, 24, 24, 28, 8, 8, 28);
    mp.hk = mp.wk = 3;
    mp.stride_h = mp.stride_w = 3;
    tile(&mp, 2, 2);
    mp.ifmap_addr = 4096 - 1152, mp.ofmap_addr = 0;
    mp.store_skip = 1, mp.skip_addr = 0;
    mp.zp_in = -128, mp.zp_out = -128, mp.out_mult = 1;
    add(p, &mp, "pool1", "MaxPool_3", NULL);

    enpu_instr ad = base(ENPU_OPC_ADD, 8, 8, 28, 8, 8, 28);
    tile(&ad, 8, 8);
    ad.ifmap_addr = 0, ad.ofmap_addr = 4096 - 128;
    ad.op2_mem = ENPU_MEM_SKIP, ad.op2_addr = 0;
    ad.in1_mult = 127, ad.in2_mult = 64, ad.out_mult = (1 << 20) - 1, ad.out_shift = 63;
    ad.zp_in = -128, ad.zp_op2 = -128, ad.zp_out = -7;
    add(p, &ad, "add1", "Add_4", NULL);

    enpu_instr rs = base(ENPU_OPC_RESHAPE, 8, 8, 28, 1, 1, 1792);
    tile(&rs, 4, 4);
    rs.perm = ENPU_PERM_CHW;
    rs.ifmap_addr = 4096 - 128, rs.ofmap_addr = 0;
    add(p, &rs, "flatten", "Flatten_5", NULL);

    enpu_instr fc = base(ENPU_OPC_CONV, 1, 1, 1792, 1, 1, 12);
    tile(&fc, 1, 1);
    fc.ifmap_addr = 0, fc.ofmap_addr = 4095;
    fc.weight_addr = 47, fc.bias_addr = 1839, fc.quant_addr = 1842;
    fc.zp_in = -7, fc.zp_out = 3;
    add(p, &fc, "fc1", "Gemm_6", NULL);

    enpu_instr sy;
    memset(&sy, 0, sizeof sy);
    sy.opcode = ENPU_OPC_SYNC;
    sy.host_op = 0;
    add(p, &sy, "softmax", "Softmax_7", NULL);
    enpu_instr end;
    memset(&end, 0, sizeof end);
    end.opcode = ENPU_OPC_END;
    add(p, &end, NULL, NULL, NULL);

    size_t wl = 1848 * 16;
    uint8_t *w = calloc(wl, 1);
    assert_non_null(w);
    uint32_t s = 12345;
    for (size_t i = 0; i < 47 * 16; i++) w[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
    for (size_t i = 1839 * 16; i < wl; i++) w[i] = (uint8_t)(i * 7);
    assert_int_equal(enpu_program_set_image(p, ENPU_SEC_WEIGHTS, w, wl, &err), 0);
    free(w);
    uint8_t d[70];
    for (int i = 0; i < 70; i++) d[i] = (uint8_t)(255 - i);
    assert_int_equal(enpu_program_set_image(p, ENPU_SEC_DTCM_INIT, d, sizeof d, &err), 0);
    assert_int_equal(enpu_program_set_image(p, ENPU_SEC_SKIP_INIT, d, 32, &err), 0);

    enpu_table_desc t = {"Sigmoid", 39, 16, 0.75f};
    assert_int_equal(enpu_program_add_table(p, &t, &err), 0);
    /* a rank-3 input stored as one row of 26*49 elements (a view of a
     * flattened feature map) */
    enpu_io_desc in = {"mfcc", ENPU_IO_INPUT, ENPU_DT_INT8, ENPU_LAYOUT_ANY, 3, {1, 26, 49},
                       0.0478f, -3, ENPU_MEM_MAIN, 0, 26 * 49};
    assert_int_equal(enpu_program_add_io(p, &in, &err), 0);
    enpu_io_desc lo = {"logits", ENPU_IO_HOST, ENPU_DT_INT8, ENPU_LAYOUT_ANY, 2, {1, 12},
                       0.125f, 3, ENPU_MEM_MAIN, 4095};
    assert_int_equal(enpu_program_add_io(p, &lo, &err), 1);
    enpu_io_desc pr = {"probs", ENPU_IO_OUTPUT, ENPU_DT_FLOAT32, ENPU_LAYOUT_ANY, 2, {1, 12},
                       0.0f, 0, ENPU_MEM_HOST, 0};
    assert_int_equal(enpu_program_add_io(p, &pr, &err), 2);
    enpu_hostop h = {"Softmax", "Softmax_7", 1, 1, {1, 2}, {1}, {0.5f, -1.25f}};
    assert_int_equal(enpu_program_add_hostop(p, &h, &err), 0);
    /* per-layer outputs for checking (format 2): fc1 writes "logits" (IO 1),
     * pool1 a probe descriptor */
    enpu_io_desc pb = {"pool_out", ENPU_IO_PROBE, ENPU_DT_INT8, ENPU_LAYOUT_NHWC, 4, {1, 8, 8, 28},
                       0.5f, -128, ENPU_MEM_MAIN, 0};
    assert_int_equal(enpu_program_add_io(p, &pb, &err), 3);
    assert_int_equal(enpu_program_set_layer_output(p, 5, "logits", 1, &err), 0);
    assert_int_equal(enpu_program_set_layer_output(p, 2, "pool_out", 3, &err), 0);
    assert_int_equal(enpu_program_set_layer_output(p, 0, "conv1_pre", -1, &err), 0);
    /* conv1 does 145152 MACs; say a third are the model's (a group conv run
     * dense), and the host's Softmax none */
    assert_int_equal(p->layers[0].macs, 24 * 24 * 28 * 9);
    p->layers[0].macs = 48384;
    int rc = enpu_program_validate(p, &err);
    if (rc) fprintf(stderr, "build: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void serialize(const enpu_program *p, uint8_t **buf, size_t *n) {
    enpu_err err = {0};
    int rc = enpu_program_serialize(p, buf, n, &err);
    if (rc) fprintf(stderr, "serialize: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* ---- byte patching helpers ----------------------------------------------------- */

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr64(uint8_t *p, uint64_t v) {
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

/* Section table entry of section id. */
static uint8_t *entry(uint8_t *f, int id) {
    uint32_t n = rd32(f + 12);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = f + ENPU_PROG_HEADER_BYTES + i * ENPU_PROG_ENTRY_BYTES;
        if ((int)rd32(e) == id) return e;
    }
    fail_msg("no section %d", id);
    return NULL;
}

static void fix_header_crc(uint8_t *f) {
    uint32_t n = rd32(f + 12);
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, f, 24);
    c = crc32(c, f + 28, (uInt)(ENPU_PROG_HEADER_BYTES + n * ENPU_PROG_ENTRY_BYTES - 28));
    wr32(f + 24, (uint32_t)c);
}

static void fix_section_crc(uint8_t *f, int id) {
    uint8_t *e = entry(f, id);
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, f + rd64(e + 8), (uInt)rd64(e + 16));
    wr32(e + 4, (uint32_t)c);
    fix_header_crc(f);
}

/* Reads buf and expects failure with `code` and every substring in `subs`. */
static void expect_fail(const uint8_t *buf, size_t n, const enpu_arch *expect, enpu_status code,
                        const char *sub1, const char *sub2) {
    enpu_program p;
    enpu_err err = {0};
    int rc = enpu_program_read_mem(buf, n, "prog.enpu", expect, &p, &err);
    if (rc != (int)code || !strstr(err.msg, "prog.enpu: ") || (sub1 && !strstr(err.msg, sub1)) ||
        (sub2 && !strstr(err.msg, sub2)))
        fail_msg("expected %s with '%s' '%s', got %s: %s", enpu_status_name(code), sub1 ? sub1 : "",
                 sub2 ? sub2 : "", enpu_status_name((enpu_status)rc), err.msg);
    /* nothing to free on failure: p is empty */
    assert_int_equal(p.n_instr, 0);
    assert_null(p.instr);
}

static uint8_t *dup_buf(const uint8_t *b, size_t n) {
    uint8_t *d = malloc(n ? n : 1);
    assert_non_null(d);
    memcpy(d, b, n);
    return d;
}

/* ---- tests --------------------------------------------------------------------- */

static void test_roundtrip(void **state) {
    (void)state;
    enpu_program p, q;
    build(&p);
    uint8_t *b1, *b2;
    size_t n1, n2;
    serialize(&p, &b1, &n1);
    assert_memory_equal(b1, "ENPU", 4);
    assert_int_equal(rd64(b1 + 16), n1);
    enpu_err err = {0};
    assert_int_equal(enpu_program_read_mem(b1, n1, "mem", &p.arch, &q, &err), 0);
    assert_int_equal(q.n_instr, p.n_instr);
    for (int i = 0; i < p.n_instr; i++) {
        assert_memory_equal(&q.instr[i], &p.instr[i], sizeof(enpu_instr));
        assert_string_equal(q.layers[i].name, p.layers[i].name);
        assert_int_equal(q.layers[i].n_src, p.layers[i].n_src);
        assert_string_equal(q.layers[i].tensor, p.layers[i].tensor);
        assert_int_equal(q.layers[i].io, p.layers[i].io);
    }
    assert_string_equal(q.layers[5].tensor, "logits");
    assert_int_equal(q.layers[2].io, 3);
    assert_int_equal(q.layers[0].io, -1);
    assert_int_equal(q.layers[1].io, -1);
    {
        /* a layer naming the wrong descriptor is refused */
        enpu_program r;
        assert_int_equal(enpu_program_read_mem(b1, n1, "mem", NULL, &r, &err), 0);
        assert_int_equal(enpu_program_set_layer_output(&r, 5, "logitz", 1, &err), 0);
        assert_int_equal(enpu_program_validate(&r, &err), ENPU_E_INVALID);
        assert_non_null(strstr(err.msg, "output tensor 'logitz' but IO descriptor 1 is 'logits'"));
        enpu_program_free(&r);
    }
    assert_string_equal(q.layers[1].name, "conv1 \"sigmoid\"\tact");
    assert_string_equal(q.layers[0].src[1], "BatchNormalization_1");
    assert_int_equal(q.weights_len, p.weights_len);
    assert_memory_equal(q.weights, p.weights, p.weights_len);
    assert_int_equal(q.io[0].dims[2], 49);
    assert_int_equal(q.io[0].row, 26 * 49);
    assert_int_equal(q.layers[0].macs, 48384);
    assert_int_equal(q.layers[1].macs, 0);            /* act: no reduction */
    assert_int_equal(q.layers[5].macs, 1792 * 12);    /* fc1 (a 1x1 conv): the default */
    assert_int_equal(q.layers[6].macs, 0);            /* sync */
    assert_int_equal(enpu_io_words(&q.arch, &q.io[0]), 80); /* ceil(1274 / 16) */
    assert_int_equal(q.io[1].row, 0);
    assert_int_equal(enpu_io_row(&q.io[1]), 12);
    assert_true(q.io[0].scale == 0.0478f);
    assert_int_equal(q.hostops[0].io[1], 2);
    assert_true(q.hostops[0].fparam[1] == -1.25f);
    assert_string_equal(q.tables[0].name, "Sigmoid");
    serialize(&q, &b2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);

    /* through a file */
    char path[] = "/tmp/enpu_test_prog_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(enpu_program_write(path, &p, &err), 0);
    enpu_program r;
    assert_int_equal(enpu_program_read(path, NULL, &r, &err), 0);
    assert_int_equal(r.n_instr, 8);
    enpu_program_free(&r);
    remove(path);
    assert_int_equal(enpu_program_read(path, NULL, &r, &err), ENPU_E_IO);

    free(b1);
    free(b2);
    enpu_program_free(&p);
    enpu_program_free(&q);
}

static void test_disasm_asm_identity(void **state) {
    (void)state;
    enpu_program p, q;
    build(&p);
    enpu_err err = {0};
    char *text = enpu_program_disasm(&p, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, ".arch {\"name\":\"easynpu\""));
    assert_non_null(strstr(text, "conv name=\"conv1\""));
    assert_non_null(strstr(text, "name=\"conv1 \\\"sigmoid\\\"\\x09act\""));
    assert_non_null(strstr(text, "perm=chw"));
    assert_non_null(strstr(text, "out=\"conv1_pre\" macs=48384\t; 0\n"));
    assert_null(strstr(strstr(text, " macs=") + 1, " macs=")); /* the defaults are not written */
    assert_non_null(strstr(text, ".io input name=\"mfcc\" dtype=int8 layout=any shape=1x26x49 row=1274 scale="));
    assert_non_null(strstr(text, "op2_mem=skip"));
    assert_non_null(strstr(text, ".section weights"));
    assert_non_null(strstr(text, ".zero "));
    int rc = enpu_program_asm(text, strlen(text), "listing.s", NULL, &q, &err);
    if (rc) fprintf(stderr, "asm: %s\n", err.msg);
    assert_int_equal(rc, 0);
    uint8_t *b1, *b2;
    size_t n1, n2;
    serialize(&p, &b1, &n1);
    serialize(&q, &b2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    /* and the listing of the rebuilt program is the same text */
    char *text2 = enpu_program_disasm(&q, &err);
    assert_string_equal(text, text2);
    free(text);
    free(text2);
    free(b1);
    free(b2);
    enpu_program_free(&p);
    enpu_program_free(&q);
}

/* A format 3.0 file (88-byte IO records, no field row) still reads: its
 * descriptors store rows of dims[rank-1] elements.  The fixture was written
 * by the 3.0 compiler from tests/models/defects/autoencoder.onnx (its
 * descriptors still had the storage grid 1x1x1x64 for the [1,1,8,8] input). */
static void test_format_3_0(void **state) {
    (void)state;
    enpu_program p;
    enpu_err err = {0};
    const char *path = "tests/models/defects/autoencoder_format_3_0.enpu";
    uint8_t *raw = NULL;
    size_t n = 0;
    assert_int_equal(enpu_file_read(path, 1 << 20, &raw, &n, &err), 0);
    assert_int_equal(raw[4] | raw[5] << 8, 3);
    assert_int_equal(raw[6] | raw[7] << 8, 0);
    free(raw);
    int rc = enpu_program_read(path, NULL, &p, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(p.n_io, 4);
    assert_string_equal(p.io[1].name, "y");
    assert_int_equal(p.io[1].rank, 4);
    assert_int_equal(p.io[1].dims[3], 64);
    for (int i = 0; i < 4; i++) assert_int_equal(p.io[i].row, 0);
    assert_int_equal(enpu_io_words(&p.arch, &p.io[1]), 4);
    /* 24-byte LAYERS records: each layer's MACs are its instruction's */
    assert_int_equal(p.layers[0].macs, 64 * 8); /* fc 64 -> 8 */
    assert_int_equal(p.layers[2].macs, 0);      /* the Sigmoid table */
    enpu_program_free(&p);
}

/* A format 3.0/3.1 host-op record (windows as 16-bit pairs, Pad's pads from
 * iparam[0]) read into the 3.2 layout: the attributes come back the same. */
static void test_hostop_3_1(void **state) {
    (void)state;
    enpu_hostop h;
    enpu_node n;
    memset(&h, 0, sizeof h);
    h.kind = (char *)"Conv";
    h.name = (char *)"c";
    h.iparam[0] = 3 | 5 << 16; /* kernel 3x5 */
    h.iparam[1] = 1 | 2 << 16; /* strides 1, 2 */
    h.iparam[2] = 2 | 1 << 16; /* dilations 2, 1 */
    h.iparam[3] = 1, h.iparam[4] = 2, h.iparam[5] = 3, h.iparam[6] = 4;
    h.iparam[7] = 4; /* group */
    enpu_hostop_upgrade_3_1(&h, 4);
    memset(&n, 0, sizeof n);
    n.op = ENPU_OP_CONV;
    enpu_hostop_get_attrs(&h, &n, 4);
    const enpu_window *w = &n.attr.conv.w;
    assert_int_equal(w->kernel[0], 3);
    assert_int_equal(w->kernel[1], 5);
    assert_int_equal(w->stride[1], 2);
    assert_int_equal(w->dilation[0], 2);
    assert_int_equal(w->pads[0], 1);
    assert_int_equal(w->pads[3], 4);
    assert_int_equal(n.attr.conv.group, 4);

    memset(&h, 0, sizeof h);
    h.kind = (char *)"MaxPool";
    h.iparam[0] = 2 | 2 << 16, h.iparam[1] = 2 | 2 << 16, h.iparam[2] = 1 | 1 << 16;
    h.iparam[7] = 1; /* ceil_mode */
    enpu_hostop_upgrade_3_1(&h, 4);
    memset(&n, 0, sizeof n);
    n.op = ENPU_OP_MAXPOOL;
    enpu_hostop_get_attrs(&h, &n, 4);
    assert_int_equal(n.attr.pool.w.kernel[1], 2);
    assert_true(n.attr.pool.ceil_mode);
    assert_false(n.attr.pool.count_include_pad);

    memset(&h, 0, sizeof h);
    h.kind = (char *)"Pad";
    for (int k = 0; k < 6; k++) h.iparam[k] = k + 1; /* rank 3 */
    h.fparam[0] = -2.5f;
    enpu_hostop_upgrade_3_1(&h, 3);
    memset(&n, 0, sizeof n);
    n.op = ENPU_OP_PAD;
    enpu_hostop_get_attrs(&h, &n, 3);
    assert_int_equal(n.attr.pad.n_pads, 6);
    for (int k = 0; k < 6; k++) assert_int_equal(n.attr.pad.pads[k], k + 1);
    assert_int_equal(n.attr.pad.mode, ENPU_PADMODE_CONSTANT);
    assert_true(n.attr.pad.value == -2.5f);

    memset(&h, 0, sizeof h); /* Softmax: the same layout in both */
    h.kind = (char *)"Softmax";
    h.iparam[0] = -1, h.iparam[1] = 1;
    enpu_hostop_upgrade_3_1(&h, 2);
    assert_int_equal(h.iparam[0], -1);
    assert_int_equal(h.iparam[1], 1);
}

static void test_header_errors(void **state) {
    (void)state;
    enpu_program p;
    build(&p);
    uint8_t *b;
    size_t n;
    serialize(&p, &b, &n);

    expect_fail(b, 20, NULL, ENPU_E_FORMAT, "header: file is 20 bytes", NULL);
    uint8_t *c = dup_buf(b, n);
    c[3] = 'X';
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "bad magic", NULL);
    memcpy(c, b, n);
    c[4] = 4; /* major 4 */
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "format version 4.8", NULL);
    memcpy(c, b, n);
    c[6] = 9; /* minor 9: newer than this reader */
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "format version 3.9", NULL);
    memcpy(c, b, n);
    wr32(c + 8, rd32(c + 8) ^ 1); /* arch fingerprint, header crc made consistent */
    fix_header_crc(c);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "arch_fingerprint", "ARCH");
    memcpy(c, b, n);
    c[ENPU_PROG_HEADER_BYTES + 9] ^= 0x10; /* a bit of the section table */
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "header: crc32 mismatch", NULL);
    memcpy(c, b, n);
    wr32(c + 12, 1000);
    fix_header_crc(c);
    expect_fail(c, n, NULL, ENPU_E_LIMIT, "n_sections", NULL);
    memcpy(c, b, n);
    wr64(c + 16, n + 5);
    fix_header_crc(c);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "file_size", NULL);
    memcpy(c, b, n);
    wr32(entry(c, ENPU_SEC_TABLES), 99);
    fix_header_crc(c);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "unknown section id 99", NULL);
    memcpy(c, b, n);
    wr32(entry(c, ENPU_SEC_TABLES), ENPU_SEC_IO);
    fix_header_crc(c);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section IO: appears twice", NULL);
    memcpy(c, b, n);
    /* INSTR moved onto LAYERS' bytes: overlap */
    wr64(entry(c, ENPU_SEC_LAYERS) + 8, rd64(entry(c, ENPU_SEC_INSTR) + 8) + 64);
    wr64(entry(c, ENPU_SEC_LAYERS) + 16, 16);
    fix_section_crc(c, ENPU_SEC_LAYERS);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "overlaps section", NULL);

    /* the arch the user selected differs */
    enpu_arch large;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("large", &large, &err), 0);
    expect_fail(b, n, &large, ENPU_E_INCOMPATIBLE, "compiled for arch 'easynpu'", "arch 'large'");
    free(c);
    free(b);
    enpu_program_free(&p);
}

/* Every section: truncated file, flipped bit, length past the end. */
static void test_section_corruption(void **state) {
    (void)state;
    enpu_program p;
    build(&p);
    uint8_t *b;
    size_t n;
    serialize(&p, &b, &n);
    static const int ids[] = {ENPU_SEC_ARCH,      ENPU_SEC_STRINGS,   ENPU_SEC_INSTR,
                              ENPU_SEC_LAYERS,    ENPU_SEC_WEIGHTS,   ENPU_SEC_DTCM_INIT,
                              ENPU_SEC_SKIP_INIT, ENPU_SEC_TABLES,    ENPU_SEC_IO,
                              ENPU_SEC_HOSTOPS};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        int id = ids[k];
        char want[64];
        snprintf(want, sizeof want, "section %s: ", enpu_section_name(id));
        uint8_t *e = entry(b, id);
        uint64_t off = rd64(e + 8), len = rd64(e + 16);
        assert_true(len > 0);
        /* file cut in the middle of the section */
        expect_fail(b, (size_t)(off + len / 2), NULL, ENPU_E_FORMAT, want, "past the end of the file");
        /* one flipped bit */
        uint8_t *c = dup_buf(b, n);
        c[off + len / 3] ^= 0x04;
        expect_fail(c, n, NULL, ENPU_E_FORMAT, want, "crc32 mismatch");
        /* a length pointing past the end, header consistent */
        memcpy(c, b, n);
        wr64(entry(c, id) + 16, (uint64_t)n);
        fix_header_crc(c);
        expect_fail(c, n, NULL, ENPU_E_FORMAT, want, "past the end of the file");
        /* an offset that wraps around */
        memcpy(c, b, n);
        wr64(entry(c, id) + 8, UINT64_MAX - 3);
        fix_header_crc(c);
        expect_fail(c, n, NULL, ENPU_E_FORMAT, want, "past the end of the file");
        free(c);
    }
    free(b);
    enpu_program_free(&p);
}

/* Sections shortened by one byte with consistent CRCs: the structure check
 * of each record section names it. */
static void test_section_structure(void **state) {
    (void)state;
    enpu_program p;
    build(&p);
    uint8_t *b;
    size_t n;
    serialize(&p, &b, &n);
    struct {
        int id;
        enpu_status code;
        const char *sub;
    } cases[] = {
        {ENPU_SEC_ARCH, ENPU_E_FORMAT, "section ARCH: line 1: not valid JSON"},
        {ENPU_SEC_STRINGS, ENPU_E_FORMAT, "section STRINGS: must start and end with a NUL"},
        {ENPU_SEC_INSTR, ENPU_E_FORMAT, "section INSTR: length 511 is not a multiple of the 64-byte"},
        {ENPU_SEC_LAYERS, ENPU_E_FORMAT, "section LAYERS: length"},
        {ENPU_SEC_TABLES, ENPU_E_FORMAT, "section TABLES: length 15 is not a multiple"},
        {ENPU_SEC_IO, ENPU_E_FORMAT, "section IO: length 383 is not a multiple of the 96-byte"},
        {ENPU_SEC_HOSTOPS, ENPU_E_FORMAT, "section HOSTOPS: length 335 is not a multiple of the 336-byte"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t *c = dup_buf(b, n);
        uint8_t *e = entry(c, cases[k].id);
        wr64(e + 16, rd64(e + 16) - 1);
        fix_section_crc(c, cases[k].id);
        expect_fail(c, n, NULL, cases[k].code, cases[k].sub, NULL);
        free(c);
    }
    free(b);
    enpu_program_free(&p);
}

/* Patches a field inside a section and fixes the CRCs. */
static uint8_t *patched(const uint8_t *b, size_t n, int id, size_t at, uint32_t v) {
    uint8_t *c = dup_buf(b, n);
    wr32(c + rd64(entry(c, id) + 8) + at, v);
    fix_section_crc(c, id);
    return c;
}

static void test_semantic_errors(void **state) {
    (void)state;
    enpu_program p;
    build(&p);
    uint8_t *b;
    size_t n;
    serialize(&p, &b, &n);
    enpu_err err = {0};
    enpu_isa_layout l;
    assert_int_equal(enpu_isa_layout_make(&p.arch, &l, &err), 0);

    /* an instruction whose tile no longer fits the psum file */
    enpu_instr in = p.instr[0];
    in.tile_x = 24;
    in.tile_xi = 2 * 23 + 3;
    uint8_t w[64];
    assert_int_equal(enpu_instr_encode(&l, &in, w, &err), 0);
    uint8_t *c = dup_buf(b, n);
    memcpy(c + rd64(entry(c, ENPU_SEC_INSTR) + 8), w, 64);
    fix_section_crc(c, ENPU_SEC_INSTR);
    expect_fail(c, n, NULL, ENPU_E_INVALID, "section INSTR: instruction 0 (conv1): field 'zs'",
                "psum_depth=64");
    free(c);
    /* a reserved bit */
    c = dup_buf(b, n);
    c[rd64(entry(c, ENPU_SEC_INSTR) + 8) + 63] |= 0x80;
    fix_section_crc(c, ENPU_SEC_INSTR);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section INSTR: instruction 0: reserved bit 511", NULL);
    free(c);
    /* string offsets */
    c = patched(b, n, ENPU_SEC_LAYERS, 8, 1u << 30);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section LAYERS: field 'name': string offset", "past the end");
    free(c);
    c = patched(b, n, ENPU_SEC_IO, 0, 2); /* inside "conv1" */
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section IO: field 'name'", "not the start of a string");
    free(c);
    /* count * size overflow and limits */
    c = patched(b, n, ENPU_SEC_LAYERS, 4, UINT32_MAX);
    expect_fail(c, n, NULL, ENPU_E_LIMIT, "section LAYERS: field 'n_refs'", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_LAYERS, 0, 7);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section LAYERS: field 'n_layers': 7 but INSTR has 8", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_LAYERS, 8 + 4, 5);
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section LAYERS: layer 0: field 'first_ref'", NULL);
    free(c);
    /* IO descriptor out of memory, bad rank */
    c = patched(b, n, ENPU_SEC_IO, ENPU_PROG_IO_BYTES + 12, 4096);
    expect_fail(c, n, NULL, ENPU_E_INVALID, "section IO: descriptor 1 ('logits'): field 'addr'", "main DTCM");
    free(c);
    c = patched(b, n, ENPU_SEC_LAYERS, 8 + 24, 145153); /* conv1's macs: over what it does */
    expect_fail(c, n, NULL, ENPU_E_INVALID, "instruction 0 (conv1): section LAYERS: field 'macs': value 145153 out of range 0..145152", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_IO, 88, 1000); /* row: does not divide 26*49 */
    expect_fail(c, n, NULL, ENPU_E_INVALID, "section IO: descriptor 0 ('mfcc'): field 'row': 1000 elements per row do not divide the 1274", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_IO, 3 * ENPU_PROG_IO_BYTES + 88, 28); /* row on an nhwc probe */
    expect_fail(c, n, NULL, ENPU_E_INVALID, "section IO: descriptor 3 ('pool_out'): field 'row': value 28 must be 0 for an nhwc tensor", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_IO, 4, 0x09030002u); /* bytes 4..7: dir 2, dtype 0, layout 3, rank 9 */
    expect_fail(c, n, NULL, ENPU_E_FORMAT, "section IO: descriptor 0: field 'rank'", NULL);
    free(c);
    /* host op naming a missing IO descriptor; table past memory */
    c = patched(b, n, ENPU_SEC_HOSTOPS, 16, 4);
    expect_fail(c, n, NULL, ENPU_E_INVALID, "section HOSTOPS: host op 0 ('Softmax'): field 'io[0]'", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_TABLES, 4, 4090);
    expect_fail(c, n, NULL, ENPU_E_INVALID, "section TABLES: table 0 ('Sigmoid'): field 'addr'", NULL);
    free(c);
    c = patched(b, n, ENPU_SEC_TABLES, 8, 8);
    expect_fail(c, n, NULL, ENPU_E_INVALID, "field 'segments': value 8", NULL);
    free(c);
    free(b);
    enpu_program_free(&p);
}

static void test_program_rules(void **state) {
    (void)state;
    enpu_program p;
    enpu_err err = {0};
    uint8_t *b;
    size_t n;

    build(&p);
    p.instr[6].host_op = 1; /* only one host op */
    assert_int_equal(enpu_program_serialize(&p, &b, &n, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "section INSTR: instruction 6 (softmax): field 'host_op': value 1"));
    enpu_program_free(&p);

    build(&p);
    enpu_err_clear(&err);
    p.instr[0].fuse_act = ENPU_ACT_RELU;
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "instruction 0 (conv1): field 'fuse_act': value 1"));
    enpu_program_free(&p);

    build(&p);
    enpu_err_clear(&err);
    p.instr[1].zs = 1; /* chain member with another tile */
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "instruction 1"));
    assert_non_null(strstr(err.msg, "tile_x/tile_y/zs/rows"));
    enpu_program_free(&p);

    build(&p);
    enpu_err_clear(&err);
    p.instr[7].opcode = ENPU_OPC_SYNC; /* no END */
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "the last instruction must be 'end'"));
    p.instr[7].opcode = ENPU_OPC_END;
    p.instr[6].opcode = ENPU_OPC_END;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "instruction 6 (softmax): 'end' before the last"));
    enpu_program_free(&p);

    /* does not fit: weights image, ITCM */
    build(&p);
    enpu_err_clear(&err);
    uint8_t *big = calloc(65536 + 16, 1);
    assert_non_null(big);
    assert_int_equal(enpu_program_set_image(&p, ENPU_SEC_WEIGHTS, big, 65536 + 16, &err), 0);
    free(big);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_NOFIT);
    assert_non_null(strstr(err.msg, "section WEIGHTS: 65552 bytes do not fit the 65536-byte weight memory"));
    enpu_program_free(&p);
    build(&p);
    enpu_err_clear(&err);
    enpu_instr end = p.instr[7];
    while (p.n_instr < 65) assert_int_equal(enpu_program_add_instr(&p, &end, "x", 0, NULL, &err), 0);
    /* longer than the 64-instruction ITCM: fetched from DRAM, where it takes
     * the first 65 * 4 words; without DRAM it does not fit */
    assert_int_equal(enpu_program_dram_instr_words(&p), 65 * 4);
    p.instr[7].opcode = ENPU_OPC_SYNC, p.instr[7].host_op = 0; /* no 'end' before the last */
    for (int i = 8; i < 64; i++) p.instr[i] = p.instr[7];
    if (enpu_program_validate(&p, &err)) fail_msg("%s", err.msg);
    uint8_t img[65 * 64 + 16];
    memset(img, 0, sizeof img);
    img[65 * 64 - 1] = 1; /* a byte among the instructions' DRAM words */
    assert_int_equal(enpu_program_set_image(&p, ENPU_SEC_DRAM_INIT, img, sizeof img, &err), 0);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "section DRAM_INIT: byte 4159 is not zero"));
    img[65 * 64 - 1] = 0, img[65 * 64] = 1; /* just after them: data */
    assert_int_equal(enpu_program_set_image(&p, ENPU_SEC_DRAM_INIT, img, sizeof img, &err), 0);
    enpu_err_clear(&err);
    if (enpu_program_validate(&p, &err)) fail_msg("%s", err.msg);
    p.arch.dram_bytes = 0;
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_NOFIT);
    enpu_program_free(&p);
    build(&p);
    enpu_err_clear(&err);
    p.arch.dram_bytes = 0;
    while (p.n_instr < 65) assert_int_equal(enpu_program_add_instr(&p, &end, "x", 0, NULL, &err), 0);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_NOFIT);
    assert_non_null(strstr(err.msg, "65 instructions"));
    assert_non_null(strstr(err.msg, "which has no DRAM to fetch them from"));
    enpu_program_free(&p);

    /* IO rules */
    build(&p);
    enpu_err_clear(&err);
    p.io[0].dtype = ENPU_DT_FLOAT32;
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "section IO: descriptor 0 ('mfcc'): field 'dtype': float32"));
    p.io[0].dtype = ENPU_DT_INT8;
    p.io[0].scale = 0;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'scale'"));
    p.io[0].scale = 1;
    free(p.io[1].name);
    p.io[1].name = strdup("mfcc");
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "same as descriptor 0"));
    enpu_program_free(&p);
}

/* Committed fixtures: each must fail with its category and message. */
static void test_fixtures(void **state) {
    (void)state;
    struct {
        const char *file;
        enpu_status code;
        const char *sub;
    } cases[] = {
        {"tests/bad/program/bad_magic.enpu", ENPU_E_FORMAT, "bad magic"},
        {"tests/bad/program/truncated_header.enpu", ENPU_E_FORMAT, "shorter than the 32-byte header"},
        {"tests/bad/program/future_version.enpu", ENPU_E_FORMAT, "format version 9.0"},
        {"tests/bad/program/empty.enpu", ENPU_E_FORMAT, "file is 0 bytes"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        enpu_program p;
        enpu_err err = {0};
        int rc = enpu_program_read(cases[k].file, NULL, &p, &err);
        if (rc != (int)cases[k].code || !strstr(err.msg, cases[k].sub) || !strstr(err.msg, cases[k].file))
            fail_msg("%s: got %s: %s", cases[k].file, enpu_status_name((enpu_status)rc), err.msg);
    }
}

static void test_export(void **state) {
    (void)state;
    enpu_program p;
    build(&p);
    char dir[] = "/tmp/enpu_test_export_XXXXXX";
    assert_non_null(mkdtemp(dir));
    enpu_err err = {0};
    char prog[256];
    snprintf(prog, sizeof prog, "%s/itcm.hex", dir);
    /* an input file named like an output is refused */
    assert_int_equal(enpu_file_write_atomic(prog, "x", 1, &err), 0);
    const char *inputs[1] = {prog};
    assert_int_equal(enpu_program_export_hex(&p, dir, inputs, 1, &err), ENPU_E_USAGE);
    assert_non_null(strstr(err.msg, "refusing to overwrite"));
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_export_hex(&p, dir, NULL, 0, &err), 0);
    uint8_t *t;
    size_t n;
    assert_int_equal(enpu_file_read(prog, 1 << 20, &t, &n, &err), 0);
    /* comment line, then 4 lines of 32 hex digits per instruction */
    char *line2 = strchr((char *)t, '\n') + 1;
    assert_int_equal(strlen(line2), (size_t)8 * 4 * 33);
    /* instruction 0, word 0: bits [127:0], most significant byte first */
    enpu_isa_layout l;
    uint8_t w[64];
    assert_int_equal(enpu_isa_layout_make(&p.arch, &l, &err), 0);
    assert_int_equal(enpu_instr_encode(&l, &p.instr[0], w, &err), 0);
    char want[33];
    for (int i = 0; i < 16; i++) snprintf(want + 2 * i, 3, "%02x", w[15 - i]);
    assert_memory_equal(line2, want, 32);
    free(t);
    snprintf(prog, sizeof prog, "%s/dtcm.hex", dir);
    assert_int_equal(enpu_file_read(prog, 1 << 20, &t, &n, &err), 0);
    line2 = strchr((char *)t, '\n') + 1;
    assert_memory_equal(line2, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff\n", 33);
    /* 70 bytes: 5 words, the last zero-filled */
    assert_int_equal(strlen(line2), (size_t)5 * 33);
    assert_memory_equal(line2 + 4 * 33, "00000000000000000000babbbcbdbebf\n", 33);
    free(t);
    static const char *const files[] = {"itcm.hex", "weights.hex", "dtcm.hex", "skip.hex", "dram.hex",
                                        "manifest.json"};
    for (size_t i = 0; i < 6; i++) {
        snprintf(prog, sizeof prog, "%s/%s", dir, files[i]);
        assert_int_equal(remove(prog), 0);
    }
    assert_int_equal(rmdir(dir), 0);
    enpu_program_free(&p);
}

/* Random damage, with the CRCs made consistent so the parsing behind them is
 * reached: the reader must refuse or accept, never crash or leak (run under
 * ASan/UBSan by `make test SANITIZE=1`). */
/* A program with off-chip memory: the input loaded from DRAM by engine 0, a
 * relu waiting for it (tokens), its output stored by engine 1, `end` waiting
 * for the store; DRAM image and layer groups.  Binary and listing round
 * trips, then the token and DRAM rules. */
static void dma_program(enpu_program *p) {
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    enpu_program_init(p, &a);
    enpu_instr ld, r, sd, end;
    memset(&ld, 0, sizeof ld);
    ld.opcode = ENPU_OPC_DMA, ld.dma_engine = 0, ld.dma_dir = ENPU_DMA_LOAD, ld.dma_mem = ENPU_MEM_MAIN;
    ld.dram_addr = 100, ld.sram_addr = 0, ld.dma_rows = 4, ld.dma_len = 4, ld.dram_stride = 8, ld.sram_stride = 4;
    ld.push = 1 << ENPU_QUEUE_COMPUTE;
    assert_int_equal(enpu_program_add_instr(p, &ld, "relu", 0, NULL, &err), 0);
    memset(&r, 0, sizeof r);
    r.opcode = ENPU_OPC_RELU, r.cast_mode = ENPU_CAST_MULTICAST;
    r.hi = r.ho = 4, r.wi = r.wo = 4, r.ci = r.co = 16;
    r.hk = r.wk = r.stride_h = r.stride_w = r.dil_h = r.dil_w = r.groups = 1;
    r.tile_x = r.tile_y = r.tile_xi = r.tile_yi = 4, r.zs = r.rows = 1;
    r.ifmap_addr = 0, r.ofmap_addr = 100, r.out_mult = 1, r.clamp_lo = -128, r.clamp_hi = 127;
    r.pop = 1 << 1, r.push = 1 << 2;
    assert_int_equal(enpu_program_add_instr(p, &r, "relu", 0, NULL, &err), 0);
    memset(&sd, 0, sizeof sd);
    sd.opcode = ENPU_OPC_DMA, sd.dma_engine = 1, sd.dma_dir = ENPU_DMA_STORE, sd.dma_mem = ENPU_MEM_MAIN;
    sd.dram_addr = 200, sd.sram_addr = 100, sd.dma_rows = 1, sd.dma_len = 16;
    sd.pop = 1 << ENPU_QUEUE_COMPUTE, sd.push = 1 << ENPU_QUEUE_COMPUTE;
    assert_int_equal(enpu_program_add_instr(p, &sd, "relu", 0, NULL, &err), 0);
    memset(&end, 0, sizeof end);
    end.opcode = ENPU_OPC_END, end.pop = 1 << 2;
    assert_int_equal(enpu_program_add_instr(p, &end, "end", 0, NULL, &err), 0);
    assert_int_equal(enpu_program_set_layer_group(p, 1, 0, &err), 0);
    assert_int_equal(enpu_program_set_layer_group(p, 2, 0, &err), 0);
    uint8_t img[16 * 132];
    for (size_t i = 0; i < sizeof img; i++) img[i] = (uint8_t)(i * 13 + 1);
    assert_int_equal(enpu_program_set_image(p, ENPU_SEC_DRAM_INIT, img, sizeof img, &err), 0);
    enpu_io_desc in = {"x", ENPU_IO_INPUT, ENPU_DT_INT8, ENPU_LAYOUT_NHWC, 4, {1, 4, 4, 16},
                       0.5f, 0, ENPU_MEM_DRAM, 100};
    assert_int_equal(enpu_program_add_io(p, &in, &err), 0);
    enpu_io_desc out = {"y", ENPU_IO_OUTPUT, ENPU_DT_INT8, ENPU_LAYOUT_NHWC, 4, {1, 4, 4, 16},
                        0.5f, 0, ENPU_MEM_DRAM, 200};
    assert_int_equal(enpu_program_add_io(p, &out, &err), 1);
    assert_int_equal(enpu_program_set_layer_output(p, 2, "y", 1, &err), 0);
    int rc = enpu_program_validate(p, &err);
    if (rc) fail_msg("%s", err.msg);
}

static void test_offchip(void **state) {
    (void)state;
    enpu_program p, q;
    enpu_err err = {0};
    dma_program(&p);
    uint8_t *buf;
    size_t n;
    serialize(&p, &buf, &n);
    assert_int_equal(enpu_program_read_mem(buf, n, "dma.enpu", NULL, &q, &err), 0);
    assert_int_equal(q.n_instr, 4);
    assert_memory_equal(&p.instr[0], &q.instr[0], sizeof p.instr[0]);
    assert_memory_equal(&p.instr[2], &q.instr[2], sizeof p.instr[2]);
    assert_int_equal(q.instr[1].pop, 2);
    assert_int_equal(q.layers[2].group, 0);
    assert_int_equal(q.layers[3].group, 3);
    assert_int_equal(q.dram_init_len, 16 * 132);
    assert_int_equal(q.io[1].mem, ENPU_MEM_DRAM);
    /* disasm -> asm gives back the same bytes */
    char *text = enpu_program_disasm(&q, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "dma name=\"relu\" dma_dir=store dram_addr=200 sram_addr=100 dma_rows=1 "
                                 "dma_len=16 push=1 pop=1 dma_engine=1") ||
                    strstr(text, "dma name=\"relu\" dma_engine=1 dma_dir=store dram_addr=200"));
    assert_non_null(strstr(text, " group=0"));
    assert_non_null(strstr(text, ".section dram_init"));
    enpu_program r;
    if (enpu_program_asm(text, strlen(text), "dma.s", NULL, &r, &err)) fail_msg("%s\n%s", err.msg, text);
    uint8_t *buf2;
    size_t n2;
    serialize(&r, &buf2, &n2);
    assert_int_equal(n, n2);
    assert_memory_equal(buf, buf2, n);
    free(text), free(buf), free(buf2);
    enpu_program_free(&q);
    enpu_program_free(&r);

    /* a token taken before any instruction sent it: the program would deadlock */
    p.instr[1].pop = 1 << 2;
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "instruction 1 (relu): field 'pop': takes a token from queue 2 that no "
                                    "earlier instruction sent (the program would deadlock)"));
    p.instr[1].pop = 1 << 1;
    /* a compute instruction may not send to or take from its own queue */
    p.instr[1].push = 1 | 4;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'push': mask 0x5 names the compute queue, the instruction's own"));
    p.instr[1].push = 4;
    /* queues that do not exist (2 DMA engines: bits 0..2) */
    p.instr[0].push = 1 << 3;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'push': mask 0x8 names a queue the arch does not have"));
    p.instr[0].push = 1;
    p.instr[0].dma_engine = 2;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'dma_engine': value 2 but arch 'easynpu' has 2 DMA engine(s)"));
    p.instr[0].dma_engine = 0;
    /* rows that overlap; a transfer past the on-chip memory or DRAM */
    p.instr[0].sram_stride = 3;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'sram_stride': value 3 is less than dma_len=4"));
    p.instr[0].sram_stride = 4, p.instr[0].sram_addr = 4096 - 15;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'sram_addr': dma block [4081, 4097) of 16 words ends past the main DTCM"));
    p.instr[0].sram_addr = 0, p.instr[0].dram_addr = ((int64_t)64 << 20) / 16 - 20;
    enpu_err_clear(&err);
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "field 'dram_addr': dram block"));
    p.instr[0].dram_addr = 100;
    enpu_err_clear(&err);
    if (enpu_program_validate(&p, &err)) fail_msg("%s", err.msg);
    /* no DRAM: no dma */
    assert_int_equal(enpu_program_set_image(&p, ENPU_SEC_DRAM_INIT, NULL, 0, &err), 0);
    p.arch.dram_bytes = 0;
    assert_int_equal(enpu_program_validate(&p, &err), ENPU_E_INVALID);
    if (!strstr(err.msg, "dma: arch 'easynpu' has no DRAM")) fail_msg("%s", err.msg);
    enpu_program_free(&p);
}

static void test_fuzz_reader(void **state) {
    (void)state;
    enpu_program p;
    build(&p);
    uint8_t *b;
    size_t n;
    serialize(&p, &b, &n);
    uint8_t *c = dup_buf(b, n);
    uint64_t s = 0x243F6A8885A308D3ull;
    int accepted = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(c, b, n);
        int k = 1 + (int)(s % 4);
        for (int j = 0; j < k; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(s >> 33) % (it % 2 ? n : 1400); /* half the time near the front */
            c[at] = (uint8_t)(s >> 17);
        }
        if (it % 3) {
            for (int id = 1; id <= 10; id++) {
                uint32_t cnt = rd32(c + 12);
                int found = 0;
                for (uint32_t e = 0; e < cnt && e < ENPU_PROG_MAX_SECTIONS; e++) {
                    uint8_t *en = c + ENPU_PROG_HEADER_BYTES + e * ENPU_PROG_ENTRY_BYTES;
                    if ((int)rd32(en) == id && rd64(en + 8) <= n && rd64(en + 16) <= n - rd64(en + 8)) found = 1;
                }
                if (found && cnt <= ENPU_PROG_MAX_SECTIONS &&
                    ENPU_PROG_HEADER_BYTES + cnt * ENPU_PROG_ENTRY_BYTES <= n)
                    fix_section_crc(c, id);
            }
        }
        enpu_program q;
        enpu_err err = {0};
        size_t len = it % 7 == 0 ? (size_t)(s >> 40) % n : n;
        if (enpu_program_read_mem(c, len, "f", NULL, &q, &err) == 0) {
            accepted++;
            enpu_program_free(&q);
        } else {
            assert_true(err.code != ENPU_OK);
            assert_non_null(strstr(err.msg, "f: "));
        }
    }
    assert_true(accepted < 3000);
    free(c);
    free(b);
    enpu_program_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),         cmocka_unit_test(test_disasm_asm_identity),
        cmocka_unit_test(test_format_3_0),        cmocka_unit_test(test_hostop_3_1),
        cmocka_unit_test(test_header_errors),     cmocka_unit_test(test_section_corruption),
        cmocka_unit_test(test_section_structure), cmocka_unit_test(test_semantic_errors),
        cmocka_unit_test(test_program_rules),     cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_export),            cmocka_unit_test(test_fuzz_reader),
        cmocka_unit_test(test_offchip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
