/* x86 microkernels of the golden reference's fast path (gfast.h), compiled
 * for AVX2 and for AVX-512 VNNI with function attributes and chosen at run
 * time, so the library still runs on any x86-64 (and elsewhere on the
 * portable table).  int16 x int16 products summed pairwise into int32 lanes
 * (vpmaddwd) are exact: |x*w| <= 2^14, and every partial sum is a sub-sum of
 * the exact accumulator, which the graph check proves fits int32. */
#include "ref/gfast.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* AVX2: vpmaddwd then vpaddd. */
#define GF_TARGET __attribute__((target("avx2")))
#define GF_NAME(f) f##_avx2
#define MAC(acc, a, b) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
#include "ref/gfast_x86_dot.h"
#undef GF_TARGET
#undef GF_NAME
#undef MAC

/* vnni256: AVX-512 VNNI's vpdpwssd on 256-bit registers does both in one
 * instruction (the same exact products and sums; it does not saturate) --
 * int16 pairs, 16 MACs an instruction, as AVX2's vpmaddwd + vpaddd. */
#define GF_TARGET __attribute__((target("avx2,avx512f,avx512vl,avx512vnni")))
#define GF_NAME(f) f##_vnni
#define MAC(acc, a, b) acc = _mm256_dpwssd_epi32(acc, a, b)
#include "ref/gfast_x86_dot.h"
#undef GF_TARGET
#undef GF_NAME
#undef MAC

#define AVX2 __attribute__((target("avx2")))

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
static const gf_simd gf_simd_vnni = {"vnni256", dot4_vnni, axpy_avx2};

const gf_simd *gf_simd_avx2_table(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? &gf_simd_avx2 : NULL;
}

const gf_simd *gf_simd_vnni_table(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni")
               ? &gf_simd_vnni
               : NULL;
}

#else

const gf_simd *gf_simd_avx2_table(void) { return NULL; }
const gf_simd *gf_simd_vnni_table(void) { return NULL; }

#endif
