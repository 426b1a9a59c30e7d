#include "report/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void svg_printf(svg_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int need = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (need < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->n + (size_t)need < b->cap) {
            b->n += (size_t)need;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->n + (size_t)need) cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->failed = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
}

void svg_text(svg_buf *b, const char *s, size_t max) {
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++) {
        if (len > max && i == max / 2) {
            svg_printf(b, "..");
            i = len - (max - max / 2);
        }
        switch (s[i]) {
        case '<': svg_printf(b, "&lt;"); break;
        case '>': svg_printf(b, "&gt;"); break;
        case '&': svg_printf(b, "&amp;"); break;
        case '"': svg_printf(b, "&quot;"); break;
        default:
            if ((unsigned char)s[i] >= 0x20) svg_printf(b, "%c", s[i]);
        }
    }
}

double svg_nice_step(double max, int ticks) {
    if (!(max > 0) || ticks < 1) return 1;
    double raw = max / ticks, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

void svg_fmt(char *buf, size_t n, double v) {
    static const char *const suf[] = {"", "k", "M", "G", "T"};
    int k = 0;
    double a = fabs(v);
    while (a >= 1000 && k < 4) a /= 1000, v /= 1000, k++;
    if (a == 0) snprintf(buf, n, "0");
    else if (a >= 100 || a == floor(a)) snprintf(buf, n, "%.0f%s", v, suf[k]);
    else if (a >= 10) snprintf(buf, n, "%.1f%s", v, suf[k]);
    else snprintf(buf, n, "%.3g%s", v, suf[k]);
}
