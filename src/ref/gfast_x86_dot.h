/* The dot-product microkernels of gfast_x86.c, written once and compiled
 * once per instruction set: the includer defines GF_TARGET (the function
 * attribute), GF_NAME(f) (the names) and MAC(acc, a, b) (acc += the pairwise
 * int16 products of a and b, summed into int32 lanes), and LD. */

/* The four sums of a, b, c, d (8 int32 lanes each), in that order. */
GF_TARGET static inline __m128i GF_NAME(hsum4)(__m256i a, __m256i b, __m256i c, __m256i d) {
    __m256i ab = _mm256_hadd_epi32(a, b), cd = _mm256_hadd_epi32(c, d);
    __m256i abcd = _mm256_hadd_epi32(ab, cd);
    return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}


/* 4 channels x 3 pixels: 12 accumulators, 3 inputs and 1 weight register. */
GF_TARGET static void GF_NAME(dot4x3)(const int16_t *w, int64_t ws, const int16_t *x, const int64_t *base,
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
    _mm_storeu_si128((__m128i *)(void *)out, GF_NAME(hsum4)(a00, a10, a20, a30));
    _mm_storeu_si128((__m128i *)(void *)(out + 4), GF_NAME(hsum4)(a01, a11, a21, a31));
    _mm_storeu_si128((__m128i *)(void *)(out + 8), GF_NAME(hsum4)(a02, a12, a22, a32));
}

/* 4 channels x 1 pixel. */
GF_TARGET static void GF_NAME(dot4x1)(const int16_t *w, int64_t ws, const int16_t *x, int64_t base,
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
    _mm_storeu_si128((__m128i *)(void *)out, GF_NAME(hsum4)(a0, a1, a2, a3));
}

GF_TARGET static void GF_NAME(dot4)(const int16_t *w, int64_t ws, const int16_t *x, const int64_t *base,
                           int np, const int64_t *roff, int nr, int rp, int32_t *out) {
    if (np == 3) {
        GF_NAME(dot4x3)(w, ws, x, base, roff, nr, rp, out);
        return;
    }
    for (int p = 0; p < np; p++) GF_NAME(dot4x1)(w, ws, x, base[p], roff, nr, rp, out + 4 * p);
}
