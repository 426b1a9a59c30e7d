/* The repository stands on its own: what a user reads (README.md,
 * DEVELOPERS.md and every file under docs/) points at nothing outside it.
 * No mention of the folder beside the repository ("../shared"), of the
 * design notes ("seeds/", "note 00x") or of the product brief ("SPEC.md",
 * "SPEC §"); and every relative Markdown link, [text](target), names a file
 * that exists inside the repository.  Failures name the file and line. */
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "easynpu/file.h"

static const char *const forbidden[] = {"../shared", "seeds/", "note 00", "SPEC.md", "SPEC §"};

static int line_of(const char *text, const char *at) {
    int n = 1;
    for (const char *p = text; p < at; p++) n += *p == '\n';
    return n;
}

/* Problems of one file, printed; returns their number. */
static int check_file(const char *path) {
    uint8_t *data = NULL;
    size_t n = 0;
    enpu_err err = {0};
    if (enpu_file_read(path, 1 << 22, &data, &n, &err)) fail_msg("%s", err.msg);
    char *text = malloc(n + 1);
    assert_non_null(text);
    memcpy(text, data, n);
    text[n] = 0;
    free(data);
    int bad = 0;
    for (size_t k = 0; k < sizeof forbidden / sizeof forbidden[0]; k++)
        for (const char *p = text; (p = strstr(p, forbidden[k])); p++, bad++)
            fprintf(stderr, "%s:%d: mentions '%s', outside the repository\n", path, line_of(text, p),
                    forbidden[k]);
    /* relative links resolve inside the repository: the file exists, and
     * no ".." climbs above the repository's root (depth 0) */
    int depth0 = 0;
    for (const char *c = path; *c; c++) depth0 += *c == '/';
    for (const char *p = text; (p = strstr(p, "](")); p++) {
        const char *s = p + 2, *e = strpbrk(s, ")# \n");
        if (!e || e == s || !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8) ||
            !strncmp(s, "mailto:", 7))
            continue;
        int len = (int)(e - s), depth = depth0;
        for (const char *c = s; c < e && depth >= 0;) {
            const char *slash = memchr(c, '/', (size_t)(e - c));
            const char *end = slash ? slash : e;
            if (end - c == 2 && c[0] == '.' && c[1] == '.') depth--;
            else if (!(end - c == 1 && c[0] == '.') && end > c && slash) depth++;
            c = slash ? slash + 1 : e;
        }
        char target[PATH_MAX];
        const char *dir_end = strrchr(path, '/');
        int dl = dir_end ? (int)(dir_end - path) + 1 : 0;
        bool ok = s[0] != '/' && depth >= 0 && len < PATH_MAX - dl - 1;
        if (ok) {
            snprintf(target, sizeof target, "%.*s%.*s", dl, path, len, s);
            ok = access(target, F_OK) == 0;
        }
        if (!ok) {
            fprintf(stderr, "%s:%d: link '%.*s' does not name a file inside the repository\n", path,
                    line_of(text, p), len, s);
            bad++;
        }
    }
    free(text);
    return bad;
}

static void test_docs_stand_alone(void **state) {
    (void)state;
    /* CTest runs us from the source tree */
    int bad = check_file("README.md") + check_file("DEVELOPERS.md"), files = 2;
    DIR *d = opendir("docs");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "docs/%s", e->d_name);
        bad += check_file(path);
        files++;
    }
    closedir(d);
    printf("%d files checked\n", files);
    assert_true(files >= 10);
    if (bad) fail_msg("%d pointer(s) outside the repository in the user documentation", bad);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_docs_stand_alone)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
