/* x86 microkernels of the golden reference's fast path (gfast.h), compiled
 * for AVX2 with a function attribute and chosen at run time, so the library
 * still runs on any x86-64 (and elsewhere gf_simd_best gives the portable
 * table).  int16 x int16 products summed pairwise into int32 lanes
 * (vpmaddwd) are exact: |x*w| <= 2^14, and every partial sum is a sub-sum of
 * the exact accumulator, which the graph check proves fits int32. */
#include "ref/gfast.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* The four sums of a, b, c, d (8 int32 lanes each), in that order. */
AVX2 static inline __m128i hsum4(__m256i a, __m256i b, __m256i c, __m256i d) {
    __m256i ab = _mm256_hadd_epi32(a, b), cd = _mm256_hadd_epi32(c, d);
    __m256i abcd = _mm256_hadd_epi32(ab, cd);
    return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}

#define LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define MAC(acc, a, b) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))

/* 4 channels x 3 pixels: 12 accumulators, 3 inputs and 1 weight register. */
AVX2 static void dot4x3(const int16_t *w, int64_t ws, const int16_t *x, const int64_t *base,
                        const int64_t *roff, int nr, int rp, int32_t *out) {
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
    __m256i a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    for (int r = 0; r < nr; r++) {
        const int16_t *x0 = x + base[0] + roff[r], *x1 = x + base[1] + roff[r];
        const int16_t *x2 = x + base[2] + roff[r], *wr = w + (int64_t)r * rp;
        for (int j = 0; j < rp; j += 16) {
            __m256i v0 = LD(x0 + j), v1 = LD(x1 + j), v2 = LD(x2 + j), k = LD(wr + j);
            MAC(a00, k, v0);
            MAC(a01, k, v1);
            MAC(a02, k, v2);
            k = LD(wr + ws + j);
            MAC(a10, k, v0);
            MAC(a11, k, v1);
            MAC(a12, k, v2);
            k = LD(wr + 2 * ws + j);
            MAC(a20, k, v0);
            MAC(a21, k, v1);
            MAC(a22, k, v2);
            k = LD(wr + 3 * ws + j);
            MAC(a30, k, v0);
            MAC(a31, k, v1);
            MAC(a32, k, v2);
        }
    }
    _mm_storeu_si128((__m128i *)(void *)out, hsum4(a00, a10, a20, a30));
    _mm_storeu_si128((__m128i *)(void *)(out + 4), hsum4(a01, a11, a21, a31));
    _mm_storeu_si128((__m128i *)(void *)(out + 8), hsum4(a02, a12, a22, a32));
}

/* 4 channels x 1 pixel. */
AVX2 static void dot4x1(const int16_t *w, int64_t ws, const int16_t *x, int64_t base,
                        const int64_t *roff, int nr, int rp, int32_t *out) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int r = 0; r < nr; r++) {
        const int16_t *x0 = x + base + roff[r], *wr = w + (int64_t)r * rp;
        for (int j = 0; j < rp; j += 16) {
            __m256i v = LD(x0 + j);
            MAC(a0, LD(wr + j), v);
            MAC(a1, LD(wr + ws + j), v);
            MAC(a2, LD(wr + 2 * ws + j), v);
            MAC(a3, LD(wr + 3 * ws + j), v);
        }
    }
    _mm_storeu_si128((__m128i *)(void *)out, hsum4(a0, a1, a2, a3));
}

AVX2 static void dot4_avx2(const int16_t *w, int64_t ws, const int16_t *x, const int64_t *base,
                           int np, const int64_t *roff, int nr, int rp, int32_t *out) {
    if (np == 3) {
        dot4x3(w, ws, x, base, roff, nr, rp, out);
        return;
    }
    for (int p = 0; p < np; p++) dot4x1(w, ws, x, base[p], roff, nr, rp, out + 4 * p);
}

AVX2 static void axpy_avx2(int32_t *acc, const int16_t *x, int32_t w, int64_t n) {
    /* pairs (x[i], 0) times (w, 0): one product per int32 lane, exact */
    const __m256i wv = _mm256_set1_epi32(w & 0xFFFF), zero = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i v = LD(x + i);
        /* lanes interleaved per 128-bit half: reorder so acc stays in order */
        v = _mm256_permute4x64_epi64(v, 0xD8);
        __m256i lo = _mm256_unpacklo_epi16(v, zero), hi = _mm256_unpackhi_epi16(v, zero);
        __m256i *p0 = (__m256i *)(void *)(acc + i), *p1 = (__m256i *)(void *)(acc + i + 8);
        _mm256_storeu_si256(p0, _mm256_add_epi32(_mm256_loadu_si256(p0), _mm256_madd_epi16(lo, wv)));
        _mm256_storeu_si256(p1, _mm256_add_epi32(_mm256_loadu_si256(p1), _mm256_madd_epi16(hi, wv)));
    }
    for (; i < n; i++) acc[i] += w * x[i];
}

static const gf_simd gf_simd_avx2 = {"avx2", dot4_avx2, axpy_avx2};

const gf_simd *gf_simd_best(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return &gf_simd_avx2;
    return &gf_simd_portable;
}

#else

const gf_simd *gf_simd_best(void) { return &gf_simd_portable; }

#endif
