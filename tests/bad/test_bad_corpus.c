/* The bad-input corpus (tests/bad/MANIFEST) through the real easynpu binary,
 * a mutation sweep of the real files through the library readers, and the
 * output-safety rules of the CLI (an output never overwrites an input; a
 * failed command leaves no partial output and no temporary file).
 *
 * Every refusal must be exactly one line on stderr,
 *   easynpu CMD: error [CATEGORY]: FILE...
 * with the exit code of its category (2, or 1 for a mismatch) and no
 * sanitizer report: in the ASan+UBSan build (make test SANITIZE=1) a
 * sanitizer finding in the CLI prints a report and changes the exit code. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "easynpu/arch.h"
#include "easynpu/file.h"
#include "easynpu/isa.h"
#include "easynpu/onnx.h"
#include "easynpu/program.h"
#include "easynpu/tensor_io.h"
#include "easynpu/tflite.h"
#include "testutil.h"
/* shared with the program fuzzer */
#include "../../fuzz/prog_fixup.h"

static char TMP[256];

/* ---- small file helpers --------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *n) {
    uint8_t *d = NULL;
    enpu_err err = {0};
    if (enpu_file_read(path, (size_t)1 << 30, &d, n, &err)) fail_msg("%s", err.msg);
    return d;
}

static void spit(const char *path, const void *d, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("%s: %s", path, strerror(errno));
    if (n && fwrite(d, 1, n, f) != n) fail_msg("%s: short write", path);
    fclose(f);
}

static char *tmp_path(const char *name) {
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", TMP, name);
    return b;
}

/* A file of `size` bytes that takes no space (for the file-size limits). */
static void sparse(const char *name, uint64_t size) {
    int fd = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) fail_msg("%s: %s", name, strerror(errno));
    close(fd);
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Names in TMP containing ".tmp." (left-over temporaries of an atomic write). */
static int count_temporaries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) {
            fprintf(stderr, "left-over temporary %s/%s\n", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

/* ---- program files derived at run time ----------------------------------- */

/* Recomputes file size, fingerprint, every section CRC and the header CRC. */
static void fix_crcs(uint8_t *d, size_t n) { fx_fix_checksums(d, n); }

/* Table entry of section `id`. */
static uint8_t *entry(uint8_t *d, size_t n, int id) {
    uint8_t *e = fx_entry(d, n, id);
    assert_non_null(e);
    return e;
}

static uint8_t *assemble(const char *text, size_t len, const char *what, size_t *n) {
    enpu_program p;
    enpu_err err = {0};
    if (enpu_program_asm(text, len, what, NULL, &p, &err)) fail_msg("%s", err.msg);
    uint8_t *b = NULL;
    if (enpu_program_serialize(&p, &b, n, &err)) fail_msg("%s", err.msg);
    enpu_program_free(&p);
    return b;
}

static void save_patched(const char *name, const uint8_t *good, size_t n, size_t at, uint8_t xor_mask,
                         int fix) {
    uint8_t *c = malloc(n);
    assert_non_null(c);
    memcpy(c, good, n);
    c[at] ^= xor_mask;
    if (fix) fix_crcs(c, n);
    spit(tmp_path(name), c, n);
    free(c);
}

static void make_programs(void) {
    size_t ln, n;
    uint8_t *listing = slurp("fuzz/corpus/asm/hand_written.s", &ln);
    uint8_t *good = assemble((const char *)listing, ln, "hand_written.s", &n);
    free(listing);
    spit(tmp_path("good.enpu"), good, n);
    spit(tmp_path("truncated_half.enpu"), good, n / 2);
    spit(tmp_path("truncated_last_byte.enpu"), good, n - 1);
    uint8_t *ie = entry(good, n, ENPU_SEC_INSTR);
    assert_non_null(ie);
    size_t ioff = (size_t)fx_rd64(ie + 8);
    save_patched("bitflip_instr.enpu", good, n, ioff + 20, 0x10, 0);
    save_patched("bitflip_header.enpu", good, n, 30, 0x01, 0);

    /* instruction 0 (relu 4x4x16) writing its 16-word output from word 4090
     * of the 4096-word main DTCM */
    enpu_isa_layout l;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    assert_int_equal(enpu_isa_layout_make(&a, &l, &err), 0);
    uint8_t *c = malloc(n);
    assert_non_null(c);
    memcpy(c, good, n);
    enpu_instr in;
    assert_int_equal(enpu_instr_decode(&l, c + ioff, &in, &err), 0);
    in.ofmap_addr = 4090;
    assert_int_equal(enpu_instr_encode(&l, &in, c + ioff, &err), 0);
    fix_crcs(c, n);
    spit(tmp_path("instr_past_memory.enpu"), c, n);
    /* a reserved bit of instruction 0 */
    memcpy(c, good, n);
    assert_true(l.used_bits[ENPU_FMT_CW] < ENPU_INSTR_BITS);
    c[ioff + ENPU_INSTR_BYTES - 1] |= 0x80;
    fix_crcs(c, n);
    spit(tmp_path("instr_reserved_bit.enpu"), c, n);
    /* 33 sections: refused on the count, before the table is read */
    memcpy(c, good, n);
    fx_wr32(c + 12, ENPU_PROG_MAX_SECTIONS + 1);
    spit(tmp_path("too_many_sections.enpu"), c, n);
    /* the WEIGHTS section's length far past the end of the file */
    memcpy(c, good, n);
    fx_wr64(entry(c, n, ENPU_SEC_WEIGHTS) + 16, (uint64_t)1 << 62);
    fx_fix_header_crc(c);
    spit(tmp_path("section_past_end.enpu"), c, n);
    /* IO descriptor 0 with rank 9 */
    memcpy(c, good, n);
    uint8_t *io = entry(c, n, ENPU_SEC_IO);
    assert_non_null(io);
    c[fx_rd64(io + 8) + 7] = 9;
    fix_crcs(c, n);
    spit(tmp_path("io_rank9.enpu"), c, n);
    free(c);
    free(good);

    /* WEIGHTS grown past the 64 KiB weight memory: the section moved to the
     * end of the file, everything else intact */
    static const char small[] = ".arch easynpu\nend\n.section weights\n.hex 01\n";
    good = assemble(small, strlen(small), "small.s", &n);
    size_t wlen = 65536 + 16, start = (n + 15) / 16 * 16, total = start + wlen;
    c = calloc(total, 1);
    assert_non_null(c);
    memcpy(c, good, n);
    for (size_t i = 0; i < wlen; i++) c[start + i] = (uint8_t)(i * 7);
    uint8_t *we = entry(c, total, ENPU_SEC_WEIGHTS);
    fx_wr64(we + 8, start);
    fx_wr64(we + 16, wlen);
    fix_crcs(c, total);
    spit(tmp_path("weights_past_memory.enpu"), c, total);
    free(c);
    free(good);
}

static int setup(void **state) {
    (void)state;
    snprintf(TMP, sizeof TMP, "/tmp/enpu_bad_XXXXXX");
    if (!mkdtemp(TMP)) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    return system(cmd) == 0 ? 0 : -1;
}

static void make_tmp_files(void) {
    make_programs();
    size_t n;
    uint8_t *m = slurp("models/kws_cnn.onnx", &n);
    spit(tmp_path("kws_cnn_truncated.onnx"), m, n / 2);
    free(m);
    sparse("huge_model.onnx", ENPU_MAX_MODEL_BYTES + 1);
    sparse("huge_tensor.npy", (uint64_t)ENPU_MAX_TENSOR_FILE_BYTES + 1);
    sparse("huge_program.enpu", (uint64_t)ENPU_PROG_MAX_BYTES + 1);
    sparse("arch_too_big.json", ENPU_ARCH_JSON_MAX + 1);
    spit(tmp_path("input.txt"), "1 2 3\n", 6);
    spit(tmp_path("nul_byte.s"), "end\n\0\n", 6);
    mkdir(tmp_path("folder.npy"), 0777);
}

/* ---- running the CLI -------------------------------------------------------- */

typedef struct run_result {
    int status;     /* exit code, or 128 + signal */
    char err[8192]; /* stderr, truncated */
    size_t err_len;
} run_result;

/* Folder the CLI runs in (NULL: this one). */
static const char *cli_cwd;

static void run_cli(char *const *argv, run_result *r) {
    char errpath[600];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", TMP);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int nul = open("/dev/null", O_RDWR);
        if (e < 0 || nul < 0 || (cli_cwd && chdir(cli_cwd) != 0)) _exit(127);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(e, 2);
        execv(ENPU_CLI, argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    FILE *f = fopen(errpath, "rb");
    r->err_len = f ? fread(r->err, 1, sizeof r->err - 1, f) : 0;
    r->err[r->err_len] = 0;
    if (f) fclose(f);
    unlink(errpath);
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ---- the manifest ------------------------------------------------------------ */

#define MAX_ARGS 32

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

/* Replaces @TMP@ (and @OUT@, with a fresh path per case) in one argument. */
static char *expand(const char *arg, const char *out) {
    char buf[1024];
    if (strcmp(arg, "@OUT@") == 0) snprintf(buf, sizeof buf, "%s", out);
    else if (strncmp(arg, "@TMP@", 5) == 0) snprintf(buf, sizeof buf, "%s%s", TMP, arg + 5);
    else snprintf(buf, sizeof buf, "%s", arg);
    return strdup(buf);
}

/* Checks one case; returns 0 if it passed, else prints why and returns 1. */
static int run_case(int lineno, const char *category, char *cmdline, const char *substring) {
    char out[600];
    snprintf(out, sizeof out, "%s/out_%d", TMP, lineno);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = strdup("easynpu");
    const char *bad = NULL; /* the file the message must name */
    int uses_out = 0;
    for (char *tok = strtok(cmdline, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (argc > MAX_ARGS) fail_msg("MANIFEST:%d: too many arguments", lineno);
        argv[argc] = expand(tok, out);
        if (strcmp(tok, "@OUT@") == 0) uses_out = 1;
        else if (strncmp(tok, "tests/bad/", 10) == 0 || strncmp(tok, "@TMP@", 5) == 0) bad = argv[argc];
        argc++;
    }
    argv[argc] = NULL;
    run_result r;
    run_cli(argv, &r);
    int want_status = strcmp(category, "mismatch") == 0 ? 1 : 2;
    char head[128];
    snprintf(head, sizeof head, "easynpu %s: error [%s]: ", argv[1], category);
    const char *why = NULL;
    if (r.status != want_status) why = "wrong exit code";
    else if (count_lines(r.err) != 1 || r.err[r.err_len - 1] != '\n') why = "stderr is not exactly one line";
    else if (strncmp(r.err, head, strlen(head)) != 0) why = "wrong command or category";
    else if (!strstr(r.err, substring)) why = "message lacks the expected text";
    else if (bad && !strstr(r.err, bad)) why = "message does not name the file";
    else if (strstr(r.err, "Sanitizer") || strstr(r.err, "runtime error")) why = "sanitizer report";
    else if (uses_out && exists(out)) why = "a failed command left its output";
    else if (count_temporaries(TMP)) why = "a temporary file was left behind";
    if (why) {
        fprintf(stderr, "MANIFEST:%d: %s: %s\n  want exit %d, \"%s...%s\"\n  got exit %d, stderr:\n%s\n",
                lineno, argv[1], why, want_status, head, substring, r.status, r.err);
    }
    for (int i = 0; i < argc; i++) free(argv[i]);
    if (uses_out) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
        if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", out);
    }
    return why != NULL;
}

static void test_manifest(void **state) {
    (void)state;
    make_tmp_files();
    FILE *f = fopen("tests/bad/MANIFEST", "r");
    assert_non_null(f);
    char line[2048];
    int lineno = 0, cases = 0, failed = 0;
    static const char *const cats[] = {"io", "format", "unsupported", "invalid", "limit",
                                       "usage", "mismatch", "nofit", "incompatible", NULL};
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        char *bar1 = strchr(s, '|');
        char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
        if (!bar2) fail_msg("MANIFEST:%d: expected CATEGORY | ARGS | SUBSTRING", lineno);
        *bar1 = *bar2 = 0;
        char *cat = trim(s), *args = trim(bar1 + 1), *sub = trim(bar2 + 1);
        int known = 0;
        for (int i = 0; cats[i]; i++) known |= strcmp(cats[i], cat) == 0;
        if (!known || !*sub) fail_msg("MANIFEST:%d: bad category '%s' or empty substring", lineno, cat);
        cases++;
        failed += run_case(lineno, cat, args, sub);
    }
    fclose(f);
    fprintf(stderr, "bad corpus: %d cases, %d failed\n", cases, failed);
    assert_true(cases >= 150);
    assert_int_equal(failed, 0);
}

/* Every file under tests/bad/<kind>/ is listed in the MANIFEST (or is a
 * good_* fixture), so nothing added there goes unchecked. */
static void test_manifest_complete(void **state) {
    (void)state;
    size_t n;
    uint8_t *m = slurp("tests/bad/MANIFEST", &n);
    static const char *const dirs[] = {"tests/bad/onnx", "tests/bad/npy", "tests/bad/pb",
                                       "tests/bad/arch", "tests/bad/program", "tests/bad/limits",
                                       "tests/bad/bind", "tests/bad/npz", "tests/bad/labels", "tests/bad/tflite",
                                       NULL};
    int missing = 0;
    for (int i = 0; dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.' || strncmp(e->d_name, "good_", 5) == 0) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            if (!strstr((const char *)m, path)) {
                fprintf(stderr, "%s is not in tests/bad/MANIFEST\n", path);
                missing++;
            }
        }
        closedir(d);
    }
    free(m);
    assert_int_equal(missing, 0);
}

/* ---- regressions: every file the fuzzers found is refused cleanly --------- */

typedef int (*reader_fn)(const uint8_t *d, size_t n, enpu_err *err);

static int read_onnx(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_graph *g = (enpu_graph *)(uintptr_t)1;
    int rc = enpu_onnx_parse(d, n, "mutant.onnx", &g, err);
    if (rc) assert_null(g);
    enpu_graph_free(rc ? NULL : g);
    return rc;
}
static int read_tflite(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_graph *g = (enpu_graph *)(uintptr_t)1;
    int rc = enpu_tflite_parse(d, n, "mutant.tflite", &g, err);
    if (rc) assert_null(g);
    enpu_graph_free(rc ? NULL : g);
    return rc;
}
static int read_npy(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_buf b;
    int rc = enpu_npy_parse(d, n, &b, err);
    if (rc) assert_null(b.data);
    enpu_buf_free(&b);
    return rc;
}
static int read_pb(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_buf b;
    int rc = enpu_pb_parse(d, n, &b, err);
    if (rc) assert_null(b.data);
    enpu_buf_free(&b);
    return rc;
}
static int read_npz(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_buf *b = NULL;
    int k = 0;
    int rc = enpu_npz_parse(d, n, &b, &k, err);
    if (rc) assert_null(b);
    for (int i = 0; i < k; i++) enpu_buf_free(&b[i]);
    free(b);
    return rc;
}
static int read_program(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_program p;
    int rc = enpu_program_read_mem(d, n, "mutant.enpu", NULL, &p, err);
    if (rc) assert_null(p.instr);
    enpu_program_free(&p);
    return rc;
}
/* The program with its checksums recomputed first, so that mutations reach
 * the section decoders behind the CRCs (entries out of bounds are left). */
static int read_program_fixed(const uint8_t *d, size_t n, enpu_err *err) {
    uint8_t *c = malloc(n ? n : 1);
    assert_non_null(c);
    memcpy(c, d, n);
    fx_fix_checksums(c, n);
    int rc = read_program(c, n, err);
    free(c);
    return rc;
}

static int read_listing(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_program p;
    int rc = enpu_program_asm((const char *)d, n, "mutant.s", NULL, &p, err);
    if (rc) assert_null(p.instr);
    enpu_program_free(&p);
    return rc;
}
static int read_arch(const uint8_t *d, size_t n, enpu_err *err) {
    enpu_arch a;
    return enpu_arch_from_json((const char *)d, n, "mutant.json", &a, err);
}

/* A reader's answer is clean: success, or a known category and one
 * non-empty line. */
static void check_clean(int rc, const enpu_err *err, const char *what) {
    if (rc == 0) return;
    if (rc != err->code || rc < ENPU_E_INCOMPATIBLE || rc > ENPU_E_IO || rc == ENPU_E_NOMEM || !err->msg[0] ||
        strchr(err->msg, '\n'))
        fail_msg("%s: unclean error %d (%s): '%s'", what, rc, enpu_status_name(err->code), err->msg);
}

static reader_fn reader_for(const char *name) {
    const char *ext = enpu_path_ext(name);
    if (strcmp(ext, ".onnx") == 0) return read_onnx;
    if (strcmp(ext, ".tflite") == 0) return read_tflite;
    if (strcmp(ext, ".npy") == 0) return read_npy;
    if (strcmp(ext, ".pb") == 0) return read_pb;
    if (strcmp(ext, ".npz") == 0) return read_npz;
    if (strcmp(ext, ".enpu") == 0) return read_program;
    if (strcmp(ext, ".s") == 0) return read_listing;
    if (strcmp(ext, ".json") == 0) return read_arch;
    return NULL;
}

/* What an accepted program or listing must also do, as the fuzzers check:
 * a program disassembles and its listing reassembles to the same bytes; a
 * listing's program reads back. */
static void check_round_trip(const char *path, const uint8_t *data, size_t n) {
    const char *ext = enpu_path_ext(path);
    enpu_err err = {0};
    enpu_program p, q;
    if (strcmp(ext, ".enpu") == 0) {
        assert_int_equal(enpu_program_read_mem(data, n, path, NULL, &p, &err), 0);
    } else if (strcmp(ext, ".s") == 0) {
        assert_int_equal(enpu_program_asm((const char *)data, n, path, NULL, &p, &err), 0);
    } else {
        return;
    }
    uint8_t *b1, *b2;
    size_t n1, n2;
    if (enpu_program_serialize(&p, &b1, &n1, &err)) fail_msg("%s: serialize: %s", path, err.msg);
    char *listing = enpu_program_disasm(&p, &err);
    assert_non_null(listing);
    if (enpu_program_asm(listing, strlen(listing), "disasm.s", NULL, &q, &err))
        fail_msg("%s: its listing does not reassemble: %s", path, err.msg);
    if (enpu_program_serialize(&q, &b2, &n2, &err)) fail_msg("%s: serialize: %s", path, err.msg);
    if (n1 != n2 || memcmp(b1, b2, n1) != 0) fail_msg("%s: disasm -> asm changes the program", path);
    free(b1);
    free(b2);
    free(listing);
    enpu_program_free(&p);
    enpu_program_free(&q);
}

static void test_regressions(void **state) {
    (void)state;
    DIR *d = opendir("tests/bad/regress");
    assert_non_null(d);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
        reader_fn fn = reader_for(e->d_name);
        if (!fn) fail_msg("tests/bad/regress/%s: unknown extension", e->d_name);
        char path[512];
        snprintf(path, sizeof path, "tests/bad/regress/%s", e->d_name);
        size_t n;
        uint8_t *data = slurp(path, &n);
        enpu_err err = {0};
        int rc = fn(data, n, &err);
        check_clean(rc, &err, path);
        if (rc == 0) check_round_trip(path, data, n);
        free(data);
        count++;
    }
    closedir(d);
    assert_true(count > 0);
}

/* ---- mutation sweep: the real files, truncated and bit-flipped ------------ */

static uint32_t rng = 0x12345678u;
static uint32_t next_rand(void) {
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

static char sweep_failure[ENPU_ERR_MSG_MAX + 1024];

/* Truncations at `cuts` offsets spread over the file and `flips` random bit
 * flips; each mutant must be accepted or refused cleanly.  With
 * must_fail_truncated, every truncation must be refused.  The first failure
 * is left in sweep_failure (the caller fails after restoring stderr). */
static void sweep(const char *what, const uint8_t *data, size_t n, reader_fn fn, int cuts, int flips,
                  int must_fail_truncated) {
    uint8_t *m = malloc(n ? n : 1);
    assert_non_null(m);
    int refused = 0;
    for (int i = 0; i < cuts + flips && !sweep_failure[0]; i++) {
        char label[256];
        size_t len = n;
        memcpy(m, data, n);
        if (i < cuts) {
            len = (size_t)((uint64_t)n * (uint64_t)i / (uint64_t)cuts);
            snprintf(label, sizeof label, "%s truncated to %zu bytes", what, len);
        } else {
            size_t at = next_rand() % n;
            int bit = (int)(next_rand() % 8);
            m[at] ^= (uint8_t)(1u << bit);
            snprintf(label, sizeof label, "%s with bit %d of byte %zu flipped", what, bit, at);
        }
        enpu_err err = {0};
        int rc = fn(m, len, &err);
        if (rc != 0 && (rc != err.code || rc < ENPU_E_INCOMPATIBLE || rc > ENPU_E_IO || rc == ENPU_E_NOMEM ||
                        !err.msg[0] || strchr(err.msg, '\n')))
            snprintf(sweep_failure, sizeof sweep_failure, "%s: unclean error %d (%s): '%s'", label, rc,
                     enpu_status_name(err.code), err.msg);
        else if (rc == 0 && i < cuts && must_fail_truncated)
            snprintf(sweep_failure, sizeof sweep_failure, "%s: accepted", label);
        refused += rc != 0;
    }
    printf("sweep %s: %d mutants, %d refused\n", what, cuts + flips, refused);
    free(m);
}

static void sweep_file(const char *path, int cuts, int flips, int must_fail_truncated) {
    size_t n;
    uint8_t *d = slurp(path, &n);
    /* The importer warns on stderr about symbolic batch dimensions, which
     * mutants of good_opset7.onnx keep: hush it while sweeping. */
    fflush(stderr);
    int saved = dup(2), nul = open("/dev/null", O_WRONLY);
    if (saved >= 0 && nul >= 0) dup2(nul, 2);
    sweep(path, d, n, reader_for(path), cuts, flips, must_fail_truncated);
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    if (nul >= 0) close(nul);
    free(d);
    if (sweep_failure[0]) fail_msg("%s", sweep_failure);
}

static void test_mutation_sweep(void **state) {
    (void)state;
    sweep_file("models/kws_cnn.onnx", 64, 192, 1);
    sweep_file("tests/bad/onnx/good_opset13.onnx", 64, 256, 0);
    sweep_file("tests/bad/onnx/good_opset7.onnx", 64, 256, 0);
    sweep_file("tests/bad/onnx/good_opset1.onnx", 64, 256, 0);
    sweep_file("models/kws_cnn/sample_0.npy", 64, 256, 1);
    /* a FlatBuffer has no length field: cutting only trailing padding leaves
     * a valid model, so truncations may be accepted */
    sweep_file("tests/bad/tflite/good_conv.tflite", 64, 512, 0);
    sweep_file("tests/tflite/pad_concat_reshape.tflite", 64, 512, 0);
    sweep_file("tests/tflite/add_ties.tflite", 64, 512, 0);
    sweep_file("tests/data/npz/kws_stored.npz", 64, 256, 1);
    sweep_file("tests/data/npz/kws_deflated.npz", 64, 256, 1);
    sweep_file("fuzz/corpus/asm/hand_written.s", 64, 256, 0);
    sweep_file("fuzz/corpus/asm/kws_shaped.s", 64, 256, 0);
    size_t ln, n;
    uint8_t *listing = slurp("fuzz/corpus/asm/kws_shaped.s", &ln);
    uint8_t *prog = assemble((const char *)listing, ln, "kws_shaped.s", &n);
    free(listing);
    sweep("kws_shaped.enpu", prog, n, read_program, 64, 256, 1);
    sweep("kws_shaped.enpu (checksums fixed)", prog, n, read_program_fixed, 0, 512, 0);
    free(prog);
    if (sweep_failure[0]) fail_msg("%s", sweep_failure);
    char *js = NULL;
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("large", &a, &err), 0);
    js = enpu_arch_to_json(&a, 1);
    assert_non_null(js);
    sweep("large.json", (const uint8_t *)js, strlen(js), read_arch, 64, 256, 0);
    free(js);
    if (sweep_failure[0]) fail_msg("%s", sweep_failure);
}

/* The same on a real model's ONNX TensorProto input. */
static void test_mutation_sweep_pb(void **state) {
    (void)state;
    const char *pb = enpu_test_shared_model("mnist-8/test_data_set_0/input_0.pb");
    assert_non_null(pb);
    sweep_file(pb, 64, 256, 1);
    /* the MLPerf Tiny int8 models, truncated and bit-flipped */
    static const char *const tfl[] = {"mlperf-tiny-int8/kws_ref_model.tflite",
                                      "mlperf-tiny-int8/pretrainedResnet_quant.tflite"};
    for (size_t i = 0; i < sizeof tfl / sizeof tfl[0]; i++) {
        const char *path = enpu_test_shared_model(tfl[i]);
        assert_non_null(path);
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", path);
        sweep_file(copy, 48, 256, 0);
    }
}

/* ---- output safety ---------------------------------------------------------- */

static void copy(const char *from, const char *to) {
    size_t n;
    uint8_t *d = slurp(from, &n);
    spit(to, d, n);
    free(d);
}

static int same_bytes(const char *a, const char *b) {
    size_t na, nb;
    uint8_t *da = slurp(a, &na), *db = slurp(b, &nb);
    int same = na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

/* Runs argv (NULL-terminated, argv[0] ignored) and checks a one-line error
 * of `category` containing `sub` with the exit code of the category. */
static void expect_refusal(const char *const *args, const char *category, const char *sub) {
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"easynpu";
    for (int i = 0; args[i]; i++) argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    run_result r;
    run_cli(argv, &r);
    char head[128];
    snprintf(head, sizeof head, "easynpu %s: error [%s]: ", args[0], category);
    if (r.status != 2 || count_lines(r.err) != 1 || strncmp(r.err, head, strlen(head)) != 0 ||
        !strstr(r.err, sub))
        fail_msg("easynpu %s ...: want exit 2 and '%s...%s', got exit %d: %s", args[0], head, sub,
                 r.status, r.err);
    assert_int_equal(count_temporaries(TMP), 0);
}

static void test_output_is_input(void **state) {
    (void)state;
    char *in = tmp_path("in.npy"), *model = tmp_path("model.onnx"), *keep = tmp_path("keep.npy");
    char *sym = tmp_path("link.npy"), *hard = tmp_path("hard.npy");
    copy("models/kws_cnn/sample_0.npy", in);
    copy("models/kws_cnn/sample_0.npy", keep);
    copy("models/kws_cnn.onnx", model);
    unlink(sym);
    unlink(hard);
    assert_int_equal(symlink(in, sym), 0);
    assert_int_equal(link(in, hard), 0);

    /* run-float: an output that is the input, the model, a symlink or a hard
     * link to the input, or given twice */
    const char *a1[] = {"run-float", model, "--input", in, "--output", in, NULL};
    expect_refusal(a1, "usage", "is also an input");
    const char *a2[] = {"run-float", model, "--input", in, "--output", model, NULL};
    expect_refusal(a2, "usage", "is also an input");
    const char *a3[] = {"run-float", model, "--input", in, "--output", sym, NULL};
    expect_refusal(a3, "usage", "is also an input");
    const char *a4[] = {"run-float", model, "--input", in, "--output", hard, NULL};
    expect_refusal(a4, "usage", "is also an input");
    assert_true(same_bytes(in, keep));
    assert_true(same_bytes(model, "models/kws_cnn.onnx"));

    /* inspect --json onto the model */
    const char *b1[] = {"inspect", model, "--json", model, NULL};
    expect_refusal(b1, "usage", "is also an input");
    assert_true(same_bytes(model, "models/kws_cnn.onnx"));

    /* asm -o onto the listing or the --arch file; disasm -o onto the program
     * or the --arch file; export into the program's own name */
    char *s = tmp_path("l.s"), *arch = tmp_path("arch.json"), *prog = tmp_path("p.enpu");
    copy("fuzz/corpus/asm/minimal.s", s);
    enpu_arch a;
    enpu_err err = {0};
    assert_int_equal(enpu_arch_preset("easynpu", &a, &err), 0);
    char *js = enpu_arch_to_json(&a, 1);
    spit(arch, js, strlen(js));
    free(js);
    char *arch_keep = strdup(tmp_path("arch_keep.json")), *s_keep = strdup(tmp_path("l_keep.s"));
    copy(arch, arch_keep);
    copy(s, s_keep);
    const char *c1[] = {"asm", s, "-o", s, NULL};
    expect_refusal(c1, "usage", "is also an input");
    const char *c2[] = {"asm", s, "-o", arch, "--arch", arch, NULL};
    expect_refusal(c2, "usage", "is also an input");
    assert_true(same_bytes(s, s_keep));
    assert_true(same_bytes(arch, arch_keep));
    const char *args_ok[] = {"easynpu", "asm", s, "-o", prog, NULL};
    run_result r;
    run_cli((char *const *)args_ok, &r);
    assert_int_equal(r.status, 0);
    char *prog_keep = strdup(tmp_path("p_keep.enpu"));
    copy(prog, prog_keep);
    const char *d1[] = {"disasm", prog, "-o", prog, NULL};
    expect_refusal(d1, "usage", "is also an input");
    const char *d2[] = {"disasm", prog, "-o", arch, "--arch", arch, NULL};
    expect_refusal(d2, "usage", "is also an input");
    assert_true(same_bytes(prog, prog_keep));
    assert_true(same_bytes(arch, arch_keep));
    /* export --hex DIR where DIR/itcm.hex is the program itself */
    char *dir = strdup(tmp_path("hexdir"));
    mkdir(dir, 0777);
    char itcm[600];
    snprintf(itcm, sizeof itcm, "%s/itcm.hex", dir);
    copy(prog, itcm);
    const char *e1[] = {"export", itcm, "--hex", dir, NULL};
    expect_refusal(e1, "usage", "refusing to overwrite");
    assert_true(same_bytes(itcm, prog_keep));
    /* compile and sim: an output onto the --arch file, also when that is a
     * bare "name.json" in the current folder */
    const char *f1[] = {"compile", model, "--arch", arch, "-o", arch, NULL};
    expect_refusal(f1, "usage", "is also an input");
    const char *f2[] = {"sim", prog, "--input", in, "--arch", arch, "--json", arch, NULL};
    expect_refusal(f2, "usage", "is also an input");
    cli_cwd = TMP;
    const char *f3[] = {"compile", model, "--arch", "arch.json", "-o", "arch.json", NULL};
    expect_refusal(f3, "usage", "is also an input");
    const char *f4[] = {"sim", prog, "--input", in, "--arch", "arch.json", "--json", "arch.json", NULL};
    expect_refusal(f4, "usage", "is also an input");
    const char *f5[] = {"disasm", prog, "--arch", "arch.json", "-o", "arch.json", NULL};
    expect_refusal(f5, "usage", "is also an input");
    cli_cwd = NULL;
    assert_true(same_bytes(arch, arch_keep));
    free(arch_keep);
    free(s_keep);
    free(prog_keep);
    free(dir);
}

/* A failed command leaves no output and no temporary file, and leaves an
 * existing output file as it was. */
static void test_failed_run_leaves_nothing(void **state) {
    (void)state;
    char *out = tmp_path("fail_out.npy");
    unlink(out);
    const char *a1[] = {"run-float", "models/kws_cnn.onnx", "--input", "tests/bad/npy/truncated_data.npy",
                        "--output", out, NULL};
    expect_refusal(a1, "format", "truncated .npy data");
    assert_false(exists(out));
    /* an existing output survives a failed run byte for byte */
    spit(out, "previous contents", 17);
    expect_refusal(a1, "format", "truncated .npy data");
    size_t n;
    uint8_t *d = slurp(out, &n);
    assert_int_equal(n, 17);
    assert_memory_equal(d, "previous contents", 17);
    free(d);
    unlink(out);
    /* an output that cannot be written (its folder does not exist; it is a
     * folder) is refused before the run and leaves no temporary behind */
    char *nodir = tmp_path("no/such/dir/out.npy");
    const char *a2[] = {"run-float", "models/kws_cnn.onnx", "--input", "models/kws_cnn/sample_0.npy",
                        "--output", nodir, NULL};
    expect_refusal(a2, "io", "cannot write in");
    char *dir = tmp_path("outdir.npy");
    mkdir(dir, 0777);
    const char *a3[] = {"run-float", "models/kws_cnn.onnx", "--input", "models/kws_cnn/sample_0.npy",
                        "--output", dir, NULL};
    expect_refusal(a3, "io", "is a directory");
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* a symlink planted under the temporary name is not written through */
    char *json = tmp_path("t.json");
    char planted[700], target[700];
    snprintf(target, sizeof target, "%s/victim.txt", TMP);
    spit(target, "victim", 6);
    /* the temporary name depends on the CLI's pid, unknown here: plant the
     * check at the library level instead */
    snprintf(planted, sizeof planted, "%s.tmp.%ld", json, (long)getpid());
    unlink(planted);
    assert_int_equal(symlink(target, planted), 0);
    enpu_err err = {0};
    assert_int_equal(enpu_file_write_atomic(json, "{}", 2, &err), ENPU_E_IO);
    assert_non_null(strstr(err.msg, "cannot create"));
    d = slurp(target, &n);
    assert_int_equal(n, 6);
    assert_memory_equal(d, "victim", 6);
    free(d);
    unlink(planted);
    assert_false(exists(json));
}

/* Successful commands write complete files and nothing else. */
static void test_outputs_complete(void **state) {
    (void)state;
    char *out = tmp_path("ok_out.npy"), *json = tmp_path("ok.json");
    const char *a1[] = {"easynpu", "run-float", "models/kws_cnn.onnx", "--input",
                        "models/kws_cnn/sample_0.npy", "--output", out, NULL};
    run_result r;
    run_cli((char *const *)a1, &r);
    assert_int_equal(r.status, 0);
    enpu_buf b;
    enpu_err err = {0};
    assert_int_equal(enpu_tensor_read(out, &b, &err), 0);
    assert_int_equal(enpu_buf_numel(&b), 12);
    enpu_buf_free(&b);
    const char *a2[] = {"easynpu", "inspect", "models/kws_cnn.onnx", "--json", json, NULL};
    run_cli((char *const *)a2, &r);
    assert_int_equal(r.status, 0);
    assert_true(exists(json));
    assert_int_equal(count_temporaries(TMP), 0);
}

int main(int argc, char **argv) {
    const struct CMUnitTest repo[] = {
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_manifest_complete),
        cmocka_unit_test(test_regressions),
        cmocka_unit_test(test_mutation_sweep),
        cmocka_unit_test(test_output_is_input),
        cmocka_unit_test(test_failed_run_leaves_nothing),
        cmocka_unit_test(test_outputs_complete),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mutation_sweep_pb),
    };
    return enpu_test_main_parts(argc, argv, repo, sizeof repo / sizeof repo[0], shared,
                                sizeof shared / sizeof shared[0], setup, teardown);
}
