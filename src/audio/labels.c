/* Class names from a labels file (audio.h): the names `run --wav` and
 * `listen` print for a model's classes. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"
#include "easynpu/file.h"

#define NAME_MAX_BYTES 63

int enpu_labels_read(const char *path, char ***names, int *n, enpu_err *err) {
    *names = NULL;
    *n = 0;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = enpu_file_read(path, 1 << 20, &buf, &len, err);
    if (rc) return rc;
    /* one block: the pointers, then the names, NUL-terminated */
    size_t cap = ENPU_FRONTEND_MAX_LABELS * (sizeof(char *) + NAME_MAX_BYTES + 1);
    char **v = calloc(1, cap);
    if (!v) {
        free(buf);
        return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    }
    char *store = (char *)(v + ENPU_FRONTEND_MAX_LABELS);
    int count = 0, line = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        size_t end = pos;
        while (end < len && buf[end] != '\n') end++;
        line++;
        size_t a = pos, b = end;
        while (a < b && isspace(buf[a])) a++;
        while (b > a && isspace(buf[b - 1])) b--;
        pos = end + 1;
        if (a == b || buf[a] == '#') continue;
        for (size_t i = a; i < b && !rc; i++)
            if (buf[i] < 0x20 || buf[i] == 0x7f)
                rc = enpu_fail(err, ENPU_E_FORMAT, "%s: line %d: a control character in a class name",
                               path, line);
        if (!rc && count >= ENPU_FRONTEND_MAX_LABELS)
            rc = enpu_fail(err, ENPU_E_LIMIT, "%s: line %d: more than %d class names", path, line,
                           ENPU_FRONTEND_MAX_LABELS);
        if (!rc && b - a > NAME_MAX_BYTES)
            rc = enpu_fail(err, ENPU_E_LIMIT, "%s: line %d: a class name of %zu bytes (at most %d)",
                           path, line, b - a, NAME_MAX_BYTES);
        if (rc) break;
        char *dst = store + (size_t)count * (NAME_MAX_BYTES + 1);
        memcpy(dst, buf + a, b - a);
        dst[b - a] = '\0';
        v[count++] = dst;
    }
    free(buf);
    if (!rc && count == 0) rc = enpu_fail(err, ENPU_E_INVALID, "%s: no class names", path);
    if (rc) {
        free(v);
        return rc;
    }
    *names = v;
    *n = count;
    return 0;
}
