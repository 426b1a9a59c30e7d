#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

int enpu_test_have_shared_models(void) {
    struct stat st;
    if (stat(ENPU_SHARED_MODELS, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
    fprintf(stderr, "SKIP: %s is absent; the real-model tests need ../shared/models\n",
            ENPU_SHARED_MODELS);
    return 0;
}

const char *enpu_test_shared_model(const char *rel) {
    static char buf[4096];
    if (!enpu_test_have_shared_models()) return NULL;
    snprintf(buf, sizeof buf, "%s/%s", ENPU_SHARED_MODELS, rel);
    return buf;
}

int enpu_test_run(const char *cmd, char **out) {
    char *full = malloc(strlen(cmd) + 8);
    if (!full) return -1;
    sprintf(full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int c;
    while (buf && (c = fgetc(p)) != EOF) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
        }
        buf[n++] = (char)c;
    }
    if (buf) buf[n] = 0;
    int st = pclose(p);
    if (out) *out = buf; else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
