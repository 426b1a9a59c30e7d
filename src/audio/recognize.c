/* Streaming recognition (audio.h): the smoothing of TFLite Micro's
 * micro_speech example (recognize_commands.cc), for any number of
 * classes and with the silence class given by index. */
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"

typedef struct result {
    int64_t time_ms;
    int8_t scores[ENPU_FRONTEND_MAX_LABELS];
} result;

struct enpu_recognizer {
    enpu_recognizer_opts o;
    int n_classes, silence;
    result *ring;       /* the results of the averaging window, oldest at `front` */
    int cap, front, size;
    int prev_top;       /* -1: none yet (micro_speech starts at silence) */
    int64_t prev_time;  /* INT64_MIN: never */
};

void enpu_recognizer_opts_default(enpu_recognizer_opts *o) {
    /* RecognizeCommands' defaults (recognize_commands.h) */
    o->average_ms = 1000;
    o->threshold = 200;
    o->suppression_ms = 1500;
    o->min_count = 3;
}

int enpu_recognizer_new(const enpu_recognizer_opts *o, int n_classes, int silence,
                        enpu_recognizer **out, enpu_err *err) {
    *out = NULL;
    if (o->average_ms < 1 || o->average_ms > 60000 || o->threshold < 0 || o->threshold > 255 ||
        o->suppression_ms < 0 || o->min_count < 1 || o->min_count > 100000)
        return enpu_fail(err, ENPU_E_USAGE, "recognizer: average %d ms (1..60000), threshold %d "
                         "(0..255), suppression %d ms (>= 0), minimum count %d (1..100000)",
                         o->average_ms, o->threshold, o->suppression_ms, o->min_count);
    if (n_classes < 1 || n_classes > ENPU_FRONTEND_MAX_LABELS || silence >= n_classes)
        return enpu_fail(err, ENPU_E_USAGE, "recognizer: %d classes (1..%d), silence %d", n_classes,
                         ENPU_FRONTEND_MAX_LABELS, silence);
    enpu_recognizer *r = calloc(1, sizeof *r);
    if (!r) return enpu_fail(err, ENPU_E_NOMEM, "recognizer: out of memory");
    r->o = *o;
    r->n_classes = n_classes;
    r->silence = silence;
    r->prev_top = silence;
    r->prev_time = INT64_MIN;
    r->cap = 16;
    r->ring = malloc((size_t)r->cap * sizeof *r->ring);
    if (!r->ring) {
        free(r);
        return enpu_fail(err, ENPU_E_NOMEM, "recognizer: out of memory");
    }
    *out = r;
    return 0;
}

void enpu_recognizer_free(enpu_recognizer *r) {
    if (!r) return;
    free(r->ring);
    free(r);
}

static result *at(enpu_recognizer *r, int i) { return &r->ring[(r->front + i) % r->cap]; }

int enpu_recognizer_push(enpu_recognizer *r, int64_t time_ms, const int8_t *scores,
                         enpu_recognition *out, enpu_err *err) {
    memset(out, 0, sizeof *out);
    out->top = -1;
    if (r->size > 0 && time_ms < at(r, r->size - 1)->time_ms)
        return enpu_fail(err, ENPU_E_USAGE, "recognizer: result at %lld ms before the previous one "
                         "at %lld ms", (long long)time_ms, (long long)at(r, r->size - 1)->time_ms);
    /* micro_speech keeps at most 50 results; here the ring grows with the
     * rate at which results come */
    if (r->size == r->cap) {
        result *n = malloc((size_t)r->cap * 2 * sizeof *n);
        if (!n) return enpu_fail(err, ENPU_E_NOMEM, "recognizer: out of memory");
        for (int i = 0; i < r->size; i++) n[i] = *at(r, i);
        free(r->ring);
        r->ring = n;
        r->front = 0;
        r->cap *= 2;
    }
    result *slot = at(r, r->size++);
    slot->time_ms = time_ms;
    memcpy(slot->scores, scores, (size_t)r->n_classes);
    int64_t limit = time_ms - r->o.average_ms;
    while (r->size > 0 && at(r, 0)->time_ms < limit) {
        r->front = (r->front + 1) % r->cap;
        r->size--;
    }
    if (r->size < r->o.min_count || time_ms - at(r, 0)->time_ms < r->o.average_ms / 4) {
        out->top = r->prev_top;
        return 0;
    }
    int32_t avg[ENPU_FRONTEND_MAX_LABELS] = {0};
    for (int i = 0; i < r->size; i++)
        for (int c = 0; c < r->n_classes; c++) avg[c] += at(r, i)->scores[c] + 128;
    int top = 0;
    int32_t best = 0;
    for (int c = 0; c < r->n_classes; c++) {
        avg[c] /= r->size;
        if (avg[c] > best) best = avg[c], top = c;
    }
    int64_t since = (r->prev_top == r->silence || r->prev_time == INT64_MIN) ? INT64_MAX
                                                                            : time_ms - r->prev_time;
    if (best > r->o.threshold && (top != r->prev_top || since > r->o.suppression_ms)) {
        r->prev_top = top;
        r->prev_time = time_ms;
        out->is_new = true;
    }
    out->top = top;
    out->score = best;
    return 0;
}
