/* A one-line progress bar on stderr, drawn only when stderr is a terminal
 * (quiet in pipes, logs and CI). */
#ifndef ENPU_PROGRESS_H
#define ENPU_PROGRESS_H

#include <stdbool.h>

typedef struct enpu_progress {
    bool tty;
    int total;
    int last_width;
} enpu_progress;

void enpu_progress_start(enpu_progress *p, int total);
/* Shows step `done` of total with a short label (layer name). */
void enpu_progress_step(enpu_progress *p, int done, const char *label);
/* Erases the bar. */
void enpu_progress_end(enpu_progress *p);

#endif
