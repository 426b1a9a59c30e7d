#include "easynpu/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int enpu_file_read(const char *path, size_t limit, uint8_t **out, size_t *n, enpu_err *err) {
    *out = NULL;
    *n = 0;
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
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return "";
    return dot;
}
