/* The cost model's counts (docs/systolic.md "Statistics"): what one
 * instruction reads, writes and computes, in closed form from its fields and
 * unit sizes, for the energy model.  The simulator counts the same events
 * where they happen in its clock loop; the two are written apart, so that
 * their equality (tests/unit/test_systolic.c, enpu_test_assert_cost_exact)
 * checks both.  Nothing here depends on the timing: a unit reads and writes
 * the same words whatever the scheme and the waits. */
#include "compiler/systolic/sya_cc.h"

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* floor(a / b) for b > 0 */
static int64_t fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* How many outputs o in [0, n) read an input o * stride + off inside [0, in). */
static int64_t inside(int64_t n, int64_t stride, int64_t off, int64_t in) {
    int64_t lo = -fdiv(off, stride), hi = fdiv(in - 1 - off, stride);
    if (lo < 0) lo = 0;
    if (hi > n - 1) hi = n - 1;
    return hi >= lo ? hi - lo + 1 : 0;
}

/* The words c consecutive bytes from byte b of a word-folded row span. */
static int64_t span(int64_t b, int64_t c, int64_t wb) { return (b + c - 1) / wb - b / wb + 1; }

int64_t sc_itcm_words(const enpu_arch *a) { return cdiv(ENPU_INSTR_BITS, a->bus_bits); }

void sc_count_instr(const enpu_arch *a, const enpu_instr *in, int64_t *rd, int64_t *wr, int64_t *uops) {
    enpu_sya_shape s;
    enpu_sya_shape_of(in, &s);
    const int64_t wb = enpu_arch_word_bytes(a);
    /* the window positions that are not padding, over all points: a
     * position's rows and columns are independent */
    int64_t valid = 0;
    if (s.fc) {
        valid = in->hi * in->wi;
    } else {
        int64_t ys = 0, xs = 0;
        for (int64_t kh = 0; kh < in->hk; kh++) ys += inside(in->ho, in->stride_h, kh * in->dil_h - in->pad_top, in->hi);
        for (int64_t kw = 0; kw < in->wk; kw++) xs += inside(in->wo, in->stride_w, kw * in->dil_w - in->pad_left, in->wi);
        valid = ys * xs;
    }
    /* main DTCM reads: every unit reads its rows' windows, once per filter
     * tile, each position the words its product's channels lie in; writes:
     * every row of a unit the words its columns' channels lie in.  Weight
     * memory: per unit, per step the words its filter tile spans (each
     * step's row of filters starts at a word), a depthwise channel's
     * ceil(K / word) words; the bias and requantization blocks once. */
    int64_t chan_words = 0, out_words = 0, tile_words = 0;
    for (int64_t gi = 0; gi < s.G; gi++) chan_words += span(s.dw ? gi : gi * s.cpg, s.cpg, wb);
    for (int64_t f = 0; f < s.nt; f++) {
        const int64_t o0 = f * s.nf, cols = s.F - o0 < s.nf ? s.F - o0 : s.nf;
        tile_words += span(o0, cols, wb);
        for (int64_t gi = 0; gi < s.G; gi++) out_words += span(gi * s.F + o0, cols, wb);
    }
    const int64_t weights = s.dw ? s.G * s.ng * cdiv(s.K, wb) : s.G * s.ng * s.K * tile_words;
    rd[ENPU_MEM_MAIN_DTCM] += s.nt * valid * chan_words;
    rd[ENPU_MEM_WEIGHT_MEM] += weights + cdiv(in->co * 4, wb) + cdiv(in->co * 8, wb);
    wr[ENPU_MEM_MAIN_DTCM] += s.N * out_words;
    /* the array: every PE of a unit latches and multiplies K operand pairs
     * into its accumulator, read back K - 1 times and once to hand the
     * result on; every result passes its row's MUX and the requantizer and
     * is a byte of the re-shaping unit's buffer, read a word per SRAM write */
    const int64_t macs = s.G * s.N * s.F * s.K, res = s.G * s.N * s.F;
    uops[ENPU_UOP_MAC] += macs;
    rd[ENPU_MEM_PE_REG] += 2 * macs, wr[ENPU_MEM_PE_REG] += 2 * macs;
    rd[ENPU_MEM_ACC] += macs, wr[ENPU_MEM_ACC] += macs;
    rd[ENPU_MEM_MUX] += res, uops[ENPU_UOP_REQUANT] += res;
    wr[ENPU_MEM_SHAPE] += res, rd[ENPU_MEM_SHAPE] += s.N * out_words;
}
