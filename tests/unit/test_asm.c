/* Assembler: hand-written listings, errors with FILE:LINE and the offending
 * token, the committed bad listings, and the asm/disasm/export commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"
#include "easynpu/program.h"
#include "testutil.h"

static const char *RELU =
    "relu name=\"r\" cast_mode=multicast hi=4 wi=4 ci=16 ho=4 wo=4 co=16 hk=1 wk=1 stride_h=1 "
    "stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=1 rows=1 "
    "ofmap_addr=100 clamp_lo=-128 clamp_hi=127 out_mult=1";

static int assemble(const char *text, const enpu_arch *dflt, enpu_program *p, enpu_err *err) {
    return enpu_program_asm(text, strlen(text), "t.s", dflt, p, err);
}

static void test_hand_written(void **state) {
    (void)state;
    char text[4096];
    snprintf(text, sizeof text,
             "; a hand-written test program\n"
             "   .format 3.0   ; version\n"
             ".arch easynpu\n"
             "\n"
             "%s src=\"Relu_0\" ; the layer\n"
             "sync host_op=0x0\n"
             "end\n"
             ".table name=Tanh addr=0x40 segments=16 max_err_lsb=1.5\n"
             ".io input name=\"in put\" dtype=int8 layout=nhwc shape=1x4x4x16 scale=0.5 zero_point=-1 mem=main addr=0\n"
             ".io output name=out dtype=int8 layout=nhwc shape=1x4x4x16 scale=0.25 zero_point=2 mem=main addr=100\n"
             ".io host name=p dtype=float32 shape=scalar mem=host\n"
             ".hostop kind=\"ArgMax\" in=1 out=2 iparam=0,1\n"
             ".section weights\n"
             ".hex 0102 0304\n"
             ".zero 12\n"
             ".hex FFfe\n"
             ".section dtcm_init\n",
             RELU);
    enpu_program p, q;
    enpu_err err = {0};
    int rc = assemble(text, NULL, &p, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(p.n_instr, 3);
    assert_int_equal(p.instr[0].opcode, ENPU_OPC_RELU);
    assert_int_equal(p.instr[0].clamp_lo, -128);
    assert_int_equal(p.instr[0].cast_mode, ENPU_CAST_MULTICAST);
    assert_string_equal(p.layers[0].name, "r");
    assert_string_equal(p.layers[0].src[0], "Relu_0");
    assert_int_equal(p.weights_len, 18);
    assert_int_equal(p.weights[0], 1);
    assert_int_equal(p.weights[3], 4);
    assert_int_equal(p.weights[4], 0);
    assert_int_equal(p.weights[16], 0xff);
    assert_int_equal(p.weights[17], 0xfe);
    assert_int_equal(p.dtcm_init_len, 0);
    assert_int_equal(p.tables[0].addr, 0x40);
    assert_string_equal(p.io[0].name, "in put");
    assert_int_equal(p.io[0].zero_point, -1);
    assert_int_equal(p.io[2].rank, 0);
    assert_int_equal(p.hostops[0].iparam[1], 1);
    /* write -> disasm -> asm -> same bytes */
    uint8_t *b1, *b2;
    size_t n1, n2;
    assert_int_equal(enpu_program_serialize(&p, &b1, &n1, &err), 0);
    char *listing = enpu_program_disasm(&p, &err);
    assert_non_null(listing);
    rc = enpu_program_asm(listing, strlen(listing), "l.s", NULL, &q, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(enpu_program_serialize(&q, &b2, &n2, &err), 0);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    free(listing);
    free(b1);
    free(b2);
    enpu_program_free(&p);
    enpu_program_free(&q);

    /* no .arch: the default arch, or the caller's */
    enpu_arch large;
    assert_int_equal(enpu_arch_preset("large", &large, &err), 0);
    assert_int_equal(assemble("end\n", NULL, &p, &err), 0);
    assert_string_equal(p.arch.name, "easynpu");
    enpu_program_free(&p);
    assert_int_equal(assemble("end\n", &large, &p, &err), 0);
    assert_string_equal(p.arch.name, "large");
    enpu_program_free(&p);
    /* a listing for another arch than the selected one */
    assert_int_equal(assemble(".arch easynpu\nend\n", &large, &p, &err), ENPU_E_INCOMPATIBLE);
    assert_non_null(strstr(err.msg, "t.s:1: .arch: the listing's arch 'easynpu'"));
    assert_non_null(strstr(err.msg, "selected arch 'large'"));
    assert_null(p.instr);
}

static void expect_asm(const char *text, enpu_status code, const char *sub) {
    enpu_program p;
    enpu_err err = {0};
    int rc = assemble(text, NULL, &p, &err);
    if (rc != (int)code || !strstr(err.msg, sub))
        fail_msg("%s\nwant %s '%s', got %s: %s", text, enpu_status_name(code), sub,
                 enpu_status_name((enpu_status)rc), err.msg);
    assert_null(p.instr);
}

static void test_errors(void **state) {
    (void)state;
    expect_asm("end\nend x=1\n", ENPU_E_INVALID, "t.s:2: end: unknown field 'x'");
    expect_asm("end\n\nend opcode=3\n", ENPU_E_INVALID, "t.s:3: end: unknown field 'opcode'");
    expect_asm("sync host_op=4096\nend\n", ENPU_E_INVALID,
               "t.s:1: field 'host_op': value 4096 out of range 0..4095 (12 bits)");
    expect_asm("sync host_op=12x\nend\n", ENPU_E_FORMAT, "t.s:1: field 'host_op': '12x' is not a number");
    expect_asm("sync host_op\nend\n", ENPU_E_FORMAT, "t.s:1: field 'host_op' needs a value");
    expect_asm("relu cast_mode=sideways\n", ENPU_E_FORMAT,
               "t.s:1: field 'cast_mode': 'sideways' is not a number or one of broadcast|multicast");
    expect_asm("end name=\"a\" name=\"b\"\n", ENPU_E_INVALID, "t.s:1: 'name' given twice");
    expect_asm("end name=\"a\"x\n", ENPU_E_FORMAT, "t.s:1: text after the closing quote of 'name='");
    expect_asm("end name=\"a\\x00\"\n", ENPU_E_FORMAT, "t.s:1: \\x00 in a string");
    expect_asm("=3\n", ENPU_E_FORMAT, "t.s:1: '=' without a key");
    expect_asm("en\"d\n", ENPU_E_FORMAT, "t.s:1: unexpected '\"' after 'en'");
    expect_asm("end\n.section weights\nend\n", ENPU_E_FORMAT, "t.s:3: instruction after a .section");
    expect_asm("end\n.section weights\n.io input name=x dtype=int8 shape=1\n", ENPU_E_FORMAT,
               "t.s:3: .io after a .section");
    expect_asm("end\n.zero 5\n", ENPU_E_FORMAT, "t.s:2: .zero before any .section");
    expect_asm("end\n.section stack\n", ENPU_E_INVALID, "t.s:2: .section: 'stack' is not weights");
    expect_asm("end\n.io sideways name=x\n", ENPU_E_INVALID, "t.s:2: .io: direction 'sideways'");
    expect_asm("end\n.io input name=x dtype=int8 shape=1x0\n", ENPU_E_INVALID, "t.s:2: .io: shape dim '0'");
    expect_asm("end\n.io input name=x dtype=int7 shape=1\n", ENPU_E_INVALID, "t.s:2: .io: dtype 'int7'");
    expect_asm("end\n.io input name=x shape=1\n", ENPU_E_INVALID, "t.s:2: .io: name, dtype and shape are required");
    expect_asm("end\n.io input name=x dtype=int8 shape=1 scale=abc\n", ENPU_E_FORMAT,
               "t.s:2: scale: 'abc' is not a float32 number");
    expect_asm("end\n.hostop in=1\n", ENPU_E_INVALID, "t.s:2: .hostop: kind is required");
    expect_asm("end\n.hostop kind=A in=1,2,3,4,5,6,7,8,9 out=1,2,3,4,5,6,7,8\n", ENPU_E_INVALID,
               "t.s:2: .hostop: 17 operands");
    expect_asm("end\n.hostop kind=A iparam=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
               "26,27,28,29,30,31,32,33\n", ENPU_E_INVALID, "iparam: more than 32 values");
    expect_asm("end\n.table name=T addr=-1\n", ENPU_E_INVALID, "t.s:2: addr: value -1 out of range");
    expect_asm(".arch\nend\n", ENPU_E_FORMAT, "t.s:1: .arch needs a JSON object or a preset name");
    expect_asm(".arch tiny\nend\n", ENPU_E_USAGE, "t.s:1: unknown arch preset 'tiny'");
    expect_asm(".arch {\"pes\": 0}\nend\n", ENPU_E_INVALID, "t.s:1: .arch: arch 'easynpu': field 'pes': value 0");
    expect_asm(".format 1\nend\n", ENPU_E_FORMAT, "t.s:1: .format: '1' is not MAJOR.MINOR");
    /* program-level errors point at the instruction's line */
    char text[2048];
    snprintf(text, sizeof text, "\n\n%s fuse_next=1\nend\n", RELU);
    expect_asm(text, ENPU_E_INVALID, "t.s:3: section INSTR: instruction 0 (r): field 'fuse_next'");
    expect_asm("end\n.section weights\n.hex 00\n.io input\n", ENPU_E_FORMAT, "t.s:4: .io after a .section");
    expect_asm("end\n.io input name=x dtype=int8 shape=1 scale=1\n.io input name=x dtype=int8 shape=1 scale=1\n",
               ENPU_E_INVALID, "t.s: section IO: descriptor 1 ('x'): field 'name': same as descriptor 0");
}

/* Each committed bad listing fails with its category and FILE:LINE message. */
static void test_fixtures(void **state) {
    (void)state;
    struct {
        const char *file;
        enpu_status code;
        const char *sub;
    } cases[] = {
        {"unknown_mnemonic.s", ENPU_E_FORMAT, "unknown_mnemonic.s:3: unknown mnemonic 'relux'"},
        {"unknown_field.s", ENPU_E_INVALID, "unknown_field.s:3: relu: unknown field 'foo'"},
        {"field_out_of_range.s", ENPU_E_INVALID,
         "field_out_of_range.s:3: field 'tile_x': value 200 out of range 0..127 (7 bits)"},
        {"duplicate_field.s", ENPU_E_INVALID, "duplicate_field.s:3: field 'hi' given twice"},
        {"tile_mismatch.s", ENPU_E_INVALID,
         "tile_mismatch.s:3: relu: field 'tile_xi': value 5 but stride_w*(tile_x-1) + dil_w*(wk-1) + 1 = 4"},
        {"unterminated_string.s", ENPU_E_FORMAT, "unterminated_string.s:3: unterminated string"},
        {"bad_escape.s", ENPU_E_FORMAT, "bad_escape.s:3: bad escape '\\q'"},
        {"missing_end.s", ENPU_E_INVALID,
         "missing_end.s:4: section INSTR: instruction 0 (r): the last instruction must be 'end', not 'relu'"},
        {"arch_after_instr.s", ENPU_E_INVALID, "arch_after_instr.s:4: .arch: a second .arch"},
        {"future_format.s", ENPU_E_UNSUPPORTED, "future_format.s:1: .format 4.0: this assembler writes 3.8"},
        {"hex_before_section.s", ENPU_E_FORMAT, "hex_before_section.s:4: .hex before any .section"},
        {"bad_hex.s", ENPU_E_FORMAT, "bad_hex.s:6: .hex: '0g' is not hex"},
        {"odd_hex.s", ENPU_E_FORMAT, "odd_hex.s:5: .hex: '123' has an odd number of digits"},
        {"zero_too_big.s", ENPU_E_LIMIT, "zero_too_big.s:5: .section skip_init: more than 1 GiB"},
        {"section_twice.s", ENPU_E_INVALID, "section_twice.s:6: .section weights: given twice"},
        {"io_unknown_key.s", ENPU_E_INVALID, "io_unknown_key.s:4: .io: unknown key 'colour'"},
        {"sync_without_hostop.s", ENPU_E_INVALID,
         "sync_without_hostop.s:3: section INSTR: instruction 0: field 'host_op': value 0 but the program has 0 host ops"},
        {"weights_too_big.s", ENPU_E_NOFIT,
         "weights_too_big.s: section WEIGHTS: 65552 bytes do not fit the 65536-byte weight memory"},
        {"io_past_memory.s", ENPU_E_INVALID,
         "io_past_memory.s: section IO: descriptor 0 ('x'): field 'addr': [0, 8192)"},
        {"bad_arch_json.s", ENPU_E_INVALID, "bad_arch_json.s:2: .arch: arch 'easynpu': field 'pes': value 3 must equal bus_bits/8"},
        {"unknown_directive.s", ENPU_E_FORMAT, "unknown_directive.s:4: unknown directive '.frobnicate'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/bad/program/%s", cases[i].file);
        uint8_t *text;
        size_t n;
        enpu_err err = {0};
        assert_int_equal(enpu_file_read(path, 1 << 20, &text, &n, &err), 0);
        enpu_program p;
        int rc = enpu_program_asm((const char *)text, n, cases[i].file, NULL, &p, &err);
        free(text);
        if (rc != (int)cases[i].code || !strstr(err.msg, cases[i].sub))
            fail_msg("%s: want %s '%s', got %s: %s", cases[i].file, enpu_status_name(cases[i].code),
                     cases[i].sub, enpu_status_name((enpu_status)rc), err.msg);
    }
}

/* The commands end to end: asm, disasm (byte-identical round trip), export,
 * arch, and their refusals. */
static void test_cli(void **state) {
    (void)state;
    char dir[] = "/tmp/enpu_test_asm_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "%s/a.s", dir);
    char text[2048];
    snprintf(text, sizeof text, ".arch easynpu\n%s\nend\n.section weights\n.hex 0102030405060708090a0b0c0d0e0f10\n", RELU);
    enpu_err err = {0};
    assert_int_equal(enpu_file_write_atomic(path, text, strlen(text), &err), 0);
    char *out = NULL;
    snprintf(cmd, sizeof cmd, "cd %s && %s asm a.s -o a.enpu && %s disasm a.enpu -o b.s && %s asm b.s -o b.enpu "
             "&& cmp a.enpu b.enpu && %s export a.enpu --hex hex && %s disasm a.enpu --arch easynpu",
             dir, ENPU_CLI, ENPU_CLI, ENPU_CLI, ENPU_CLI, ENPU_CLI);
    int rc = enpu_test_run(cmd, &out);
    if (rc != 0) fail_msg("%s\n%s", cmd, out);
    assert_non_null(strstr(out, "relu name=\"r\""));
    free(out);
    snprintf(path, sizeof path, "%s/hex/weights.hex", dir);
    uint8_t *w;
    size_t n;
    assert_int_equal(enpu_file_read(path, 1 << 20, &w, &n, &err), 0);
    assert_non_null(strstr((char *)w, "\n100f0e0d0c0b0a090807060504030201\n"));
    free(w);
    /* refusals: wrong arch, output over input, bad listing: all bad input (2) */
    snprintf(cmd, sizeof cmd, "cd %s && %s disasm a.enpu --arch large", dir, ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, &out), 2);
    assert_non_null(strstr(out, "easynpu disasm: error [incompatible]: a.enpu: arch mismatch"));
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && %s asm a.s -o a.s", dir, ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, &out), 2);
    assert_non_null(strstr(out, "refusing to overwrite"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s asm tests/bad/program/unknown_field.s -o %s/c.enpu", ENPU_CLI, dir);
    assert_int_equal(enpu_test_run(cmd, &out), 2);
    assert_non_null(strstr(out, "tests/bad/program/unknown_field.s:3: relu: unknown field 'foo'"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s disasm tests/bad/program/bad_magic.enpu", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, &out), 2);
    assert_non_null(strstr(out, "bad magic"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s arch tests/bad/arch/unknown_key.json", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, &out), 2);
    assert_non_null(strstr(out, "unknown key 'foo'"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s arch large --json", ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, &out), 0);
    assert_non_null(strstr(out, "\"main_dtcm_bytes\": 524288"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s export --help && %s asm --help && %s disasm -h && %s arch --help",
             ENPU_CLI, ENPU_CLI, ENPU_CLI, ENPU_CLI);
    assert_int_equal(enpu_test_run(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(enpu_test_run(cmd, NULL), 0);
}

/* Random edits of a valid listing: the assembler refuses or accepts, never
 * crashes or leaks, and every refusal names the file and a line. */
static void test_fuzz_asm(void **state) {
    (void)state;
    char base[4096];
    snprintf(base, sizeof base,
             ".format 3.0\n.arch easynpu\n%s src=\"a b\"\nsync\nend\n.io input name=x dtype=int8 "
             "layout=nhwc shape=1x4x4x16 scale=0.5 zero_point=-1 mem=main addr=0\n.hostop kind=K in=0 "
             "out=0 iparam=3 fparam=1.5\n.section weights\n.hex 00112233\n.zero 32\n",
             RELU);
    size_t n = strlen(base);
    char *t = malloc(n + 1);
    assert_non_null(t);
    static const char alphabet[] = " =\";\\\n.x09azAZ-_,";
    uint64_t s = 0x13198A2E03707344ull;
    for (int it = 0; it < 3000; it++) {
        memcpy(t, base, n + 1);
        int k = 1 + (int)(s % 3);
        for (int j = 0; j < k; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(s >> 33) % n;
            t[at] = alphabet[(s >> 20) % (sizeof alphabet - 1)];
        }
        enpu_program p;
        enpu_err err = {0};
        if (enpu_program_asm(t, n, "f.s", NULL, &p, &err) == 0)
            enpu_program_free(&p);
        else
            assert_true(strncmp(err.msg, "f.s", 3) == 0);
    }
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_written),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_fuzz_asm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
