/* A small checked RIFF/WAVE reader and writer (audio.h).  Every size is
 * checked against the bytes that are there before anything is read or
 * allocated: a WAV is user input like any model (docs/hardening.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/audio.h"
#include "easynpu/file.h"

void enpu_audio_free(enpu_audio *a) {
    if (!a) return;
    free(a->x);
    memset(a, 0, sizeof *a);
}

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The PCM sub-format GUID of WAVE_FORMAT_EXTENSIBLE after its first two
 * bytes (the format tag, 0x0001): 00000001-0000-0010-8000-00aa00389b71. */
static const uint8_t PCM_GUID_TAIL[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                          0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71};

#define CONVERT_HINT "convert it with: sox IN.wav -b 16 -c 1 -e signed-integer OUT.wav"

typedef struct wav_fmt {
    int tag, channels, bits;
    uint32_t rate;
    int block_align;
} wav_fmt;

static int parse_fmt(const uint8_t *p, uint32_t size, const char *what, wav_fmt *f,
                     enpu_err *err) {
    if (size < 16)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: \"fmt \" chunk of %u bytes (at least 16)", what,
                         size);
    f->tag = rd16(p);
    f->channels = rd16(p + 2);
    f->rate = rd32(p + 4);
    f->block_align = rd16(p + 12);
    f->bits = rd16(p + 14);
    if (f->tag == 0xFFFE) {
        /* WAVE_FORMAT_EXTENSIBLE: cbSize 22, valid bits, channel mask, GUID */
        if (size < 40 || rd16(p + 16) < 22)
            return enpu_fail(err, ENPU_E_FORMAT, "%s: \"fmt \" chunk: WAVE_FORMAT_EXTENSIBLE "
                             "needs 40 bytes with cbSize 22, has %u", what, size);
        int sub = rd16(p + 24);
        if (memcmp(p + 26, PCM_GUID_TAIL, sizeof PCM_GUID_TAIL) != 0 || sub != 1)
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: WAVE_FORMAT_EXTENSIBLE with sub-format "
                             "%d, not PCM; " CONVERT_HINT, what, sub);
        f->tag = 1;
    }
    if (f->tag == 3)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: floating-point samples; 16-bit PCM "
                         "expected; " CONVERT_HINT, what);
    if (f->tag != 1)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: format tag %d is not PCM (1); "
                         CONVERT_HINT, what, f->tag);
    if (f->channels == 0)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: \"fmt \" chunk: 0 channels", what);
    if (f->channels != 1)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: %d channels; mono expected; convert it "
                         "with: sox IN.wav -c 1 OUT.wav", what, f->channels);
    if (f->bits != 16)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: %d-bit samples; 16-bit PCM expected; "
                         CONVERT_HINT, what, f->bits);
    if (f->block_align != 2)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: \"fmt \" chunk: block align %d for mono 16-bit "
                         "samples (2 expected)", what, f->block_align);
    if (f->rate < ENPU_WAV_MIN_RATE || f->rate > ENPU_WAV_MAX_RATE)
        return enpu_fail(err, ENPU_E_INVALID, "%s: sample rate %u Hz outside %d..%d", what,
                         f->rate, ENPU_WAV_MIN_RATE, ENPU_WAV_MAX_RATE);
    return 0;
}

int enpu_wav_parse(const uint8_t *data, size_t n, const char *what, enpu_audio *out,
                   enpu_err *err) {
    memset(out, 0, sizeof *out);
    if (n == 0) return enpu_fail(err, ENPU_E_FORMAT, "%s: empty file, not a WAV", what);
    if (n < 12 || memcmp(data, "RIFF", 4) != 0 || memcmp(data + 8, "WAVE", 4) != 0)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: not a WAV file (no RIFF/WAVE header)", what);
    /* The RIFF size is not trusted (streamed files leave it at 0 or 2^32-1):
     * the chunks are walked to the end of the bytes that are there. */
    size_t pos = 12;
    wav_fmt f = {0};
    bool have_fmt = false;
    while (pos + 8 <= n) {
        const uint8_t *h = data + pos;
        uint32_t size = rd32(h + 4);
        size_t body = pos + 8;
        if (memcmp(h, "fmt ", 4) == 0) {
            if (have_fmt)
                return enpu_fail(err, ENPU_E_FORMAT, "%s: a second \"fmt \" chunk at byte %zu", what,
                                 pos);
            if (size > n - body)
                return enpu_fail(err, ENPU_E_FORMAT, "%s: truncated: \"fmt \" chunk of %u bytes at "
                                 "byte %zu, the file ends %zu bytes later", what, size, pos,
                                 n - body);
            int rc = parse_fmt(data + body, size, what, &f, err);
            if (rc) return rc;
            have_fmt = true;
        } else if (memcmp(h, "data", 4) == 0) {
            if (!have_fmt)
                return enpu_fail(err, ENPU_E_FORMAT, "%s: \"data\" chunk before any \"fmt \" chunk",
                                 what);
            if (size > n - body)
                return enpu_fail(err, ENPU_E_FORMAT, "%s: truncated: the \"data\" chunk declares %u "
                                 "bytes, the file has %zu after its header", what, size, n - body);
            if (size % 2)
                return enpu_fail(err, ENPU_E_FORMAT, "%s: \"data\" chunk of %u bytes is not a whole "
                                 "number of 16-bit samples", what, size);
            if (size == 0)
                return enpu_fail(err, ENPU_E_INVALID, "%s: no samples (empty \"data\" chunk)", what);
            int64_t ns = size / 2;
            float *x = malloc((size_t)ns * sizeof *x);
            if (!x) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory for %lld samples", what,
                                     (long long)ns);
            for (int64_t i = 0; i < ns; i++) x[i] = (float)(int16_t)rd16(data + body + 2 * i);
            out->x = x;
            out->n = ns;
            out->rate = (int)f.rate;
            return 0; /* what follows the samples (LIST, id3, ...) is not read */
        }
        /* any other chunk: skipped, padded to an even size */
        if (size > n - body)
            return enpu_fail(err, ENPU_E_FORMAT, "%s: truncated: chunk \"%.4s\" of %u bytes at byte "
                             "%zu runs past the end", what, (const char *)h, size, pos);
        pos = body + size + (size & 1);
    }
    if (!have_fmt) return enpu_fail(err, ENPU_E_FORMAT, "%s: no \"fmt \" chunk", what);
    return enpu_fail(err, ENPU_E_FORMAT, "%s: truncated: no \"data\" chunk", what);
}

int enpu_wav_read(const char *path, enpu_audio *out, enpu_err *err) {
    memset(out, 0, sizeof *out);
    uint8_t *buf = NULL;
    size_t n = 0;
    int rc = enpu_file_read(path, ENPU_MAX_WAV_BYTES, &buf, &n, err);
    if (!rc) rc = enpu_wav_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}

static void wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void wr16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

int enpu_wav_write(const char *path, const float *x, int64_t n, int rate, enpu_err *err) {
    if (n < 0 || (uint64_t)n * 2 > ENPU_MAX_WAV_BYTES - 44)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: %lld samples is over the WAV limit", path,
                         (long long)n);
    if (rate < ENPU_WAV_MIN_RATE || rate > ENPU_WAV_MAX_RATE)
        return enpu_fail(err, ENPU_E_USAGE, "%s: sample rate %d Hz outside %d..%d", path, rate,
                         ENPU_WAV_MIN_RATE, ENPU_WAV_MAX_RATE);
    size_t bytes = 44 + (size_t)n * 2;
    uint8_t *b = malloc(bytes);
    if (!b) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory", path);
    memcpy(b, "RIFF", 4);
    wr32(b + 4, (uint32_t)(bytes - 8));
    memcpy(b + 8, "WAVEfmt ", 8);
    wr32(b + 16, 16);
    wr16(b + 20, 1);
    wr16(b + 22, 1);
    wr32(b + 24, (uint32_t)rate);
    wr32(b + 28, (uint32_t)rate * 2);
    wr16(b + 32, 2);
    wr16(b + 34, 16);
    memcpy(b + 36, "data", 4);
    wr32(b + 40, (uint32_t)(n * 2));
    for (int64_t i = 0; i < n; i++) {
        double v = x[i] != x[i] ? 0.0 : nearbyint(x[i]);
        v = v < -32768 ? -32768 : v > 32767 ? 32767 : v;
        wr16(b + 44 + 2 * i, (uint16_t)(int16_t)v);
    }
    int rc = enpu_file_write_atomic(path, b, bytes, err);
    free(b);
    return rc;
}
