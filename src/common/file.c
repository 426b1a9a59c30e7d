#include "easynpu/file.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Standard input, read once: a command reads "-" for one input at most,
 * maybe twice (to see what kind of file it is, then to parse it). */
static uint8_t *stdin_data;
static size_t stdin_len;
static bool stdin_read;

static int read_stdin(enpu_err *err) {
    const size_t limit = ENPU_STDIN_MAX_BYTES;
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap + 1);
    if (!buf) return enpu_fail(err, ENPU_E_NOMEM, "-: out of memory reading standard input");
    for (;;) {
        if (len == cap) {
            if (cap > limit) {
                free(buf);
                return enpu_fail(err, ENPU_E_LIMIT, "-: standard input is over the limit of %zu bytes",
                                 limit);
            }
            uint8_t *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                return enpu_fail(err, ENPU_E_NOMEM, "-: out of memory reading standard input");
            }
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, stdin);
        len += got;
        if (got == 0) break;
    }
    if (ferror(stdin)) {
        free(buf);
        return enpu_fail(err, ENPU_E_IO, "-: read error on standard input");
    }
    stdin_data = buf, stdin_len = len, stdin_read = true;
    return 0;
}

int enpu_file_read(const char *path, size_t limit, uint8_t **out, size_t *n, enpu_err *err) {
    *out = NULL;
    *n = 0;
    if (strcmp(path, "-") == 0) {
        if (!stdin_read) {
            int rc = read_stdin(err);
            if (rc) return rc;
        }
        if (stdin_len > limit)
            return enpu_fail(err, ENPU_E_LIMIT, "-: standard input is %zu bytes, over the limit of %zu",
                             stdin_len, limit);
        uint8_t *copy = malloc(stdin_len + 1);
        if (!copy) return enpu_fail(err, ENPU_E_NOMEM, "-: out of memory");
        memcpy(copy, stdin_data, stdin_len);
        copy[stdin_len] = 0;
        *out = copy;
        *n = stdin_len;
        return 0;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return enpu_fail(err, ENPU_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return enpu_fail(err, ENPU_E_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > limit) {
        fclose(f);
        return enpu_fail(err, ENPU_E_LIMIT, "%s: file is %lld bytes, over the limit of %zu",
                         path, (long long)st.st_size, limit);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size + 1);
    if (!buf) {
        fclose(f);
        return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory reading %zu bytes", path, size);
    }
    size_t got = size ? fread(buf, 1, size, f) : 0;
    int rd_err = ferror(f);
    fclose(f);
    if (got != size || rd_err) {
        free(buf);
        return enpu_fail(err, ENPU_E_IO, "%s: read error", path);
    }
    buf[size] = 0;
    *out = buf;
    *n = size;
    return 0;
}

int enpu_file_write_atomic(const char *path, const void *data, size_t n, enpu_err *err) {
    if (strcmp(path, "-") == 0) {
        if ((n && fwrite(data, 1, n, stdout) != n) || fflush(stdout) != 0)
            return enpu_fail(err, ENPU_E_IO, "-: cannot write to standard output: %s", strerror(errno));
        return 0;
    }
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    /* O_EXCL|O_NOFOLLOW: never write through a file or symlink someone left
     * under the temporary name. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int rc = enpu_fail(err, ENPU_E_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            remove(tmp);
        }
        free(tmp);
        return rc;
    }
    int ok = (n == 0 || fwrite(data, 1, n, f) == n);
    ok = (fflush(f) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        free(tmp);
        return enpu_fail(err, ENPU_E_IO, "%s: cannot write: %s", path, strerror(e));
    }
    free(tmp);
    return 0;
}

int enpu_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

const char *enpu_path_ext(const char *path) {
    if (strcmp(path, "-") == 0) {
        uint8_t *d;
        size_t n;
        enpu_err e = {0};
        if (enpu_file_read(path, ENPU_STDIN_MAX_BYTES, &d, &n, &e)) return "";
        size_t i = 0;
        while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
        const char *k = n >= 4 && memcmp(d, "ENPU", 4) == 0   ? ".enpu"
                        : n >= 6 && memcmp(d, "\x93NUMPY", 6) == 0 ? ".npy"
                        : i < n && d[i] == '{'                 ? ".qjson"
                                                               : "";
        free(d);
        return k;
    }
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return "";
    return dot;
}

const char *enpu_file_kind(const uint8_t *d, size_t n) {
    size_t i = 0;
    while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
    if (n >= 4 && memcmp(d, "ENPU", 4) == 0) return "an EasyNPU program (.enpu)";
    if (n >= 6 && memcmp(d, "\x93NUMPY", 6) == 0) return "a tensor (.npy)";
    if (n >= 4 && memcmp(d, "PK\x03\x04", 4) == 0) return "an archive of tensors (.npz)";
    if (n >= 8 && memcmp(d + 4, "TFL3", 4) == 0) return "a TFLite model";
    if (i < n && d[i] == '{') return "a JSON file (a .qjson or an arch description)";
    return NULL;
}
