/* What the SVG pictures share (svg_chart.c, svg_compare.c): a growing
 * string, escaped text, and axes with round tick values. */
#ifndef ENPU_REPORT_SVG_H
#define ENPU_REPORT_SVG_H

#include <stddef.h>

/* Growing string; on allocation failure it stays as it was and `failed`
 * is set, which the caller turns into a NULL result. */
typedef struct svg_buf {
    char *s;
    size_t n, cap;
    int failed;
} svg_buf;

void svg_printf(svg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* XML-escapes s, shortened to `max` characters (middle elided). */
void svg_text(svg_buf *b, const char *s, size_t max);

/* A round step (1, 2 or 5 times a power of ten) that cuts [0, max] into
 * about `ticks` intervals. */
double svg_nice_step(double max, int ticks);
/* v for an axis label: at most 3 significant digits, with k, M or G
 * ("1.5k", "250", "0.04"). */
void svg_fmt(char *buf, size_t n, double v);

#endif
