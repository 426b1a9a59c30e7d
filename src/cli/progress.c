#include "cli/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void enpu_progress_start(enpu_progress *p, int total) {
    p->tty = isatty(STDERR_FILENO) == 1;
    p->total = total > 0 ? total : 1;
    p->last_width = 0;
}

void enpu_progress_step(enpu_progress *p, int done, const char *label) {
    if (!p->tty) return;
    enum { BAR = 30 };
    int fill = done * BAR / p->total;
    char bar[BAR + 1];
    for (int i = 0; i < BAR; i++) bar[i] = i < fill ? '#' : '.';
    bar[BAR] = 0;
    char line[160];
    int n = snprintf(line, sizeof line, "[%s] %d/%d %.40s", bar, done, p->total, label ? label : "");
    if (n < 0) return;
    /* Pad with spaces to erase a longer previous line. */
    fprintf(stderr, "\r%s%*s", line, p->last_width > n ? p->last_width - n : 0, "");
    fflush(stderr);
    p->last_width = n;
}

void enpu_progress_end(enpu_progress *p) {
    if (!p->tty || !p->last_width) return;
    fprintf(stderr, "\r%*s\r", p->last_width, "");
    fflush(stderr);
    p->last_width = 0;
}
