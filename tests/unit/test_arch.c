/* Architecture description: presets, JSON in and out, validation naming the
 * field, the committed bad fixtures, and the table in docs/arch.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/arch.h"
#include "easynpu/file.h"
#include "testutil.h"

static void test_presets(void **state) {
    (void)state;
    enpu_arch a, b;
    enpu_err err = {0};
    for (const char *const *n = enpu_arch_preset_names(); *n; n++) {
        assert_int_equal(enpu_arch_preset(*n, &a, &err), 0);
        assert_int_equal(enpu_arch_validate(&a, &err), 0);
        assert_string_equal(a.name, *n);
        assert_int_equal(enpu_arch_load(*n, &b, &err), 0);
        assert_memory_equal(&a, &b, sizeof a);
    }
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    assert_int_equal(a.pes, 16);
    assert_int_equal(a.pe_rows, 1);
    assert_int_equal(a.ifmap_pad_depth, 64);
    assert_int_equal(a.weight_pad_depth, 16);
    assert_int_equal(a.psum_depth, 64);
    assert_int_equal(a.bus_bits, 128);
    assert_int_equal(a.main_dtcm_bytes, 64 * 1024);
    assert_int_equal(a.skip_dtcm_bytes, 16 * 1024);
    assert_int_equal(a.weight_mem_bytes, 64 * 1024);
    assert_int_equal(a.itcm_bytes, 4 * 1024);
    assert_int_equal(a.acc_bits, 32);
    assert_int_equal(a.mult_bits, 20);
    assert_int_equal(a.act_segments, 16);
    assert_int_equal(a.engine, ENPU_ENGINE_EASYNPU);
    assert_int_equal(enpu_arch_preset("large", &b, &err), 0);
    assert_int_equal(b.main_dtcm_bytes, 512 * 1024);
    assert_int_equal(b.skip_dtcm_bytes, 256 * 1024);
    assert_int_equal(b.weight_mem_bytes, 512 * 1024);
    assert_int_equal(b.itcm_bytes, 16 * 1024);
    assert_true(enpu_arch_fingerprint(&a) != enpu_arch_fingerprint(&b));
    /* the row-stationary presets: the design note's 3 x 24 array, and Eyeriss */
    assert_int_equal(enpu_arch_preset("rowstat", &b, &err), 0);
    assert_int_equal(b.engine, ENPU_ENGINE_ROWSTAT);
    assert_int_equal(b.rs_rows * b.rs_cols, 72);
    assert_int_equal(b.rs_ifmap_lb_depth, 256);
    assert_int_equal(b.rs_filter_lb_depth, 2048);
    assert_int_equal(b.rs_fifo_depth, 2048);
    assert_int_equal(b.rs_psum_bits, 64);
    assert_int_equal(enpu_arch_mac_units(&b), 72);
    assert_int_equal(enpu_arch_preset("eyeriss", &b, &err), 0);
    assert_int_equal(b.engine, ENPU_ENGINE_ROWSTAT);
    assert_int_equal(b.rs_rows, 12);
    assert_int_equal(b.rs_cols, 14);
    assert_int_equal(b.rs_glb_bytes, 108 * 1024);
    assert_int_equal(b.rs_ifmap_lb_depth, 12);
    assert_int_equal(b.rs_filter_lb_depth, 224);
    assert_int_equal(b.rs_psum_depth, 24);
    assert_true(b.clock_mhz == 200.0);
    /* an easynpu arch's canonical JSON leaves out the row-stationary
     * parameters at their defaults (its fingerprint predates them) ... */
    char *j = enpu_arch_to_json(&a, 0);
    assert_null(strstr(j, "rs_rows"));
    free(j);
    /* ... and keeps one that differs, so that it reads back */
    a.rs_cols = 7;
    j = enpu_arch_to_json(&a, 0);
    assert_non_null(strstr(j, "\"rs_cols\":7"));
    assert_int_equal(enpu_arch_from_json(j, strlen(j), "j", &b, &err), 0);
    assert_int_equal(b.rs_cols, 7);
    free(j);
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    assert_int_equal(enpu_arch_preset("tiny", &a, &err), ENPU_E_USAGE);
    assert_non_null(strstr(err.msg, "unknown arch preset 'tiny'"));
}

static void test_json_roundtrip(void **state) {
    (void)state;
    enpu_arch a, b;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("large", &a, &err), 0);
    a.clock_mhz = 433.3;
    a.pe_rows = 4;
    snprintf(a.name, sizeof a.name, "my-npu_v2.1");
    for (int pretty = 0; pretty < 2; pretty++) {
        char *j = enpu_arch_to_json(&a, pretty);
        assert_non_null(j);
        assert_int_equal(enpu_arch_from_json(j, strlen(j), "mem", &b, &err), 0);
        assert_memory_equal(&a, &b, sizeof a);
        free(j);
    }
    char *j = enpu_arch_to_json(&a, 0);
    assert_non_null(strstr(j, "\"clock_mhz\":433.3,\"tech_nm\":45,"));
    assert_non_null(strstr(j, ",\"ff_um2\":4.522}"));
    assert_null(strstr(j, "base"));
    assert_true(strncmp(j, "{\"name\":\"my-npu_v2.1\",\"engine\":\"easynpu\",\"pes\":16,", 50) == 0);
    free(j);
    /* base + overrides; the default base is easynpu */
    const char *t = "{\"base\": \"large\", \"name\": \"big\", \"psum_depth\": 128, \"clock_mhz\": 250}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "t", &b, &err), 0);
    assert_string_equal(b.name, "big");
    assert_int_equal(b.psum_depth, 128);
    assert_int_equal(b.main_dtcm_bytes, 512 * 1024);
    assert_true(b.clock_mhz == 250.0);
    t = "{\"itcm_bytes\": 8192}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "t", &b, &err), 0);
    assert_string_equal(b.name, "easynpu");
    assert_int_equal(b.main_dtcm_bytes, 64 * 1024);
    assert_int_equal(b.itcm_bytes, 8192);
    /* a file path loads JSON */
    char dir[] = "/tmp/enpu_arch_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.json", dir);
    assert_int_equal(enpu_file_write_atomic(path, t, strlen(t), &err), 0);
    assert_int_equal(enpu_arch_load(path, &a, &err), 0);
    assert_int_equal(a.itcm_bytes, 8192);
    remove(path);
    rmdir(dir);
    assert_int_equal(enpu_arch_load(path, &a, &err), ENPU_E_IO);
}

/* A file overriding a preset inherits every field of it, lane groups
 * included; the fields tied to pes follow it unless given; a file without a
 * name is named after itself; the machine part (a program's ARCH section)
 * still reads an absent lane_groups_max as 1, the full JSON says it. */
static void test_inheritance(void **state) {
    (void)state;
    enpu_arch a, e;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &e, &err), 0);
    const char *t = "{\"base\": \"easynpu\", \"pes\": 32}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "dir/pes32.json", &a, &err), 0);
    assert_string_equal(a.name, "pes32");
    assert_int_equal(a.lane_groups_max, 4);
    assert_int_equal(a.bus_bits, 256);
    assert_int_equal(a.ifmap_pads, 32);
    assert_int_equal(a.weight_pad_groups, 32);
    assert_int_equal(a.psum_depth, e.psum_depth);
    /* given ones stay */
    t = "{\"pes\": 8, \"bus_bits\": 64, \"ifmap_pads\": 8, \"weight_pad_groups\": 8, \"lane_groups_max\": 1}";
    assert_int_equal(enpu_arch_from_json(t, strlen(t), "mem", &a, &err), 0);
    assert_int_equal(a.lane_groups_max, 1);
    assert_string_equal(a.name, "easynpu");
    /* the presets built on easynpu keep theirs */
    assert_int_equal(enpu_arch_preset("rowstat", &a, &err), 0);
    assert_int_equal(a.lane_groups_max, 1);
    /* lane_groups_max 1: absent from the machine part, read back as 1 there;
     * said in the full JSON, read back as 1 from a file */
    char *m = enpu_arch_machine_json(&a), *full = enpu_arch_to_json(&a, 0);
    assert_null(strstr(m, "lane_groups_max"));
    assert_non_null(strstr(full, "\"lane_groups_max\":1,"));
    enpu_arch b;
    assert_int_equal(enpu_arch_from_json(full, strlen(full), "full", &b, &err), 0);
    assert_memory_equal(&a, &b, sizeof a);
    free(m);
    free(full);
}

static void expect(const char *json, enpu_status code, const char *sub) {
    enpu_arch a;
    enpu_err err = {0};
    int rc = enpu_arch_from_json(json, strlen(json), "x.json", &a, &err);
    if (rc != (int)code || !strstr(err.msg, sub) || strncmp(err.msg, "x.json: ", 8) != 0)
        fail_msg("%s: want %s '%s', got %s: %s", json, enpu_status_name(code), sub,
                 enpu_status_name((enpu_status)rc), err.msg);
}

static void test_validation(void **state) {
    (void)state;
    expect("{\"main_dtcm_bytes\": 0}", ENPU_E_INVALID,
           "field 'main_dtcm_bytes': value 0 out of range 1..1073741824 bytes");
    expect("{\"skip_dtcm_bytes\": 2147483648}", ENPU_E_INVALID,
           "field 'skip_dtcm_bytes': value 2147483648 out of range");
    expect("{\"weight_mem_bytes\": 100000000000000000000}", ENPU_E_INVALID, "weight_mem_bytes");
    expect("{\"itcm_bytes\": 100}", ENPU_E_INVALID, "field 'itcm_bytes': value 100 must be a multiple of the 64-byte");
    expect("{\"main_dtcm_bytes\": 1000}", ENPU_E_INVALID, "field 'main_dtcm_bytes': value 1000 must be a multiple of the 16-byte bus word");
    expect("{\"pes\": 0}", ENPU_E_INVALID, "field 'pes': value 0 out of range 1..256");
    expect("{\"pes\": 32, \"bus_bits\": 128}", ENPU_E_INVALID, "field 'pes': value 32 must equal bus_bits/8");
    expect("{\"pes\": 32, \"ifmap_pads\": 16}", ENPU_E_INVALID, "field 'ifmap_pads': value 16 must equal pes=32");
    expect("{\"pes\": 32, \"weight_pad_groups\": 16}", ENPU_E_INVALID, "field 'weight_pad_groups'");
    expect("{\"ifmap_pad_depth\": 4097}", ENPU_E_INVALID, "field 'ifmap_pad_depth': value 4097 out of range 1..4096");
    expect("{\"psum_depth\": 0}", ENPU_E_INVALID, "field 'psum_depth'");
    expect("{\"acc_bits\": 33}", ENPU_E_INVALID, "field 'acc_bits': value 33 out of range 16..32");
    expect("{\"mult_bits\": 32}", ENPU_E_INVALID, "field 'mult_bits': value 32 out of range 1..31");
    expect("{\"act_segments\": 3}", ENPU_E_INVALID, "field 'act_segments': value 3 must be a power of two");
    expect("{\"act_segments\": 512}", ENPU_E_INVALID, "field 'act_segments': value 512 out of range 1..256");
    expect("{\"clock_mhz\": -1}", ENPU_E_INVALID, "field 'clock_mhz'");
    expect("{\"clock_mhz\": \"fast\"}", ENPU_E_INVALID, "field 'clock_mhz': must be a number");
    expect("{\"pes\": 16.5}", ENPU_E_INVALID, "field 'pes': must be an integer");
    expect("{\"pes\": 16, \"frobnicate\": 1}", ENPU_E_INVALID,
           "unknown key 'frobnicate' (`easynpu arch` lists the keys)");
    /* a slip gets the key meant */
    expect("{\"psum_dept\": 32}", ENPU_E_INVALID, "unknown key 'psum_dept' (did you mean 'psum_depth'?)");
    expect("{\"pe\": 32}", ENPU_E_INVALID, "unknown key 'pe' (did you mean 'pes'?)");
    expect("{\"clock_mz\": 200}", ENPU_E_INVALID, "(did you mean 'clock_mhz'?)");
    expect("{\"sya_row\": 8}", ENPU_E_INVALID, "(did you mean 'sya_rows'?)");
    expect("{\"engine\": \"rowstat\", \"rs_rows\": 0}", ENPU_E_INVALID,
           "field 'rs_rows': value 0 out of range 1..64");
    expect("{\"base\": \"eyeriss\", \"rs_psum_bits\": 65}", ENPU_E_INVALID, "field 'rs_psum_bits'");
    expect("{\"engine\": \"gpu\"}", ENPU_E_INVALID, "field 'engine'");
    expect("{\"name\": \"\"}", ENPU_E_INVALID, "field 'name'");
    expect("{\"base\": 3}", ENPU_E_INVALID, "field 'base'");
    expect("{\"pes\": ", ENPU_E_FORMAT, "not valid JSON");
    expect("[1]", ENPU_E_FORMAT, "must be a JSON object");
    expect("42", ENPU_E_FORMAT, "not valid JSON");
    expect("{\"pe_rows\": 65}", ENPU_E_INVALID, "field 'pe_rows': value 65 out of range 1..64");
    expect("{\"dtcm_read_latency\": 0}", ENPU_E_INVALID, "field 'dtcm_read_latency'");
    /* too big to read */
    char *big = malloc(ENPU_ARCH_JSON_MAX + 2);
    assert_non_null(big);
    memset(big, ' ', ENPU_ARCH_JSON_MAX + 1);
    big[ENPU_ARCH_JSON_MAX + 1] = 0;
    expect(big, ENPU_E_LIMIT, "over the limit");
    free(big);
    /* validate() on a struct names the arch */
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    a.weight_pad_depth = 0;
    assert_int_equal(enpu_arch_validate(&a, &err), ENPU_E_INVALID);
    assert_non_null(strstr(err.msg, "arch 'easynpu': field 'weight_pad_depth': value 0"));
}

/* The committed fixtures: category and message for each. */
static void test_fixtures(void **state) {
    (void)state;
    struct {
        const char *file;
        enpu_status code;
        const char *sub;
    } cases[] = {
        {"unknown_key.json", ENPU_E_INVALID, "unknown key 'foo'"},
        {"zero_main_dtcm.json", ENPU_E_INVALID, "field 'main_dtcm_bytes': value 0"},
        {"huge_weight_mem.json", ENPU_E_INVALID, "field 'weight_mem_bytes': value 2147483648"},
        {"pes_bus_mismatch.json", ENPU_E_INVALID, "field 'pes': value 8 must equal bus_bits/8"},
        {"segments_not_pow2.json", ENPU_E_INVALID, "field 'act_segments': value 12"},
        {"mem_not_word_multiple.json", ENPU_E_INVALID, "field 'skip_dtcm_bytes': value 1000"},
        {"systolic_bank_rows.json", ENPU_E_INVALID, "field 'sya_bank_rows': value 3 must divide sya_banks=4"},
        {"sya_param_on_easynpu.json", ENPU_E_INVALID, "field 'sya_rows': a systolic-engine parameter"},
        {"systolic_dram.json", ENPU_E_INVALID, "field 'dram_bytes': value 1048576 but the systolic engine"},
        {"bad_json.json", ENPU_E_FORMAT, "not valid JSON"},
        {"not_object.json", ENPU_E_FORMAT, "must be a JSON object"},
        {"string_value.json", ENPU_E_INVALID, "field 'psum_depth': must be an integer"},
        {"zero_clock.json", ENPU_E_INVALID, "field 'clock_mhz': value 0"},
        {"bad_base.json", ENPU_E_INVALID, "field 'base'"},
        {"duplicate_key.json", ENPU_E_FORMAT, "duplicate object key"},
        {"bad_name.json", ENPU_E_INVALID, "field 'name'"},
        {"instr_too_wide.json", ENPU_E_LIMIT, "more than the 512-bit instruction"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/bad/arch/%s", cases[i].file);
        enpu_arch a;
        enpu_err err = {0};
        int rc = enpu_arch_load(path, &a, &err);
        if (rc != (int)cases[i].code || !strstr(err.msg, cases[i].sub) || !strstr(err.msg, path))
            fail_msg("%s: want %s '%s', got %s: %s", path, enpu_status_name(cases[i].code),
                     cases[i].sub, enpu_status_name((enpu_status)rc), err.msg);
    }
}

static void test_print_and_docs(void **state) {
    (void)state;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    enpu_arch_print(&a, f);
    fclose(f);
    assert_non_null(strstr(buf, "main_dtcm_bytes"));
    assert_non_null(strstr(buf, "65536  bytes"));
    assert_non_null(strstr(buf, "clock_mhz"));
    assert_non_null(strstr(buf, "474  bits used of 512 (channel-wise; conv 402, dma 131)"));
    free(buf);
    char *t = enpu_arch_param_table_md();
    assert_non_null(t);
    uint8_t *doc;
    assert_int_equal(enpu_file_read("docs/arch.md", 1 << 20, &doc, &n, &err), 0);
    if (!strstr((char *)doc, t))
        fail_msg("docs/arch.md does not contain the output of `easynpu arch --param-table`: regenerate it");
    free(doc);
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),  cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_inheritance),
        cmocka_unit_test(test_validation), cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_print_and_docs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
