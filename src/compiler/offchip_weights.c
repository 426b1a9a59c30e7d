/* Weights of the off-chip plan (decision 1 in offchip.c): each step's
 * parameters in the weight image, and, for a step whose parameters are over
 * the weight memory, its output-channel blocks (or its input-channel blocks,
 * icblocks.c), each with its own slice of the parameters laid out in the
 * DRAM image.  Separate because it needs only the chains, not where the
 * tensors live, and runs before the memory plan (offchip_mem.c), which must
 * know the skip copies a cut step drops; where each load goes is decided as
 * the loads are emitted (offchip_items.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/offchip.h"

/* ---- weights ------------------------------------------------------------------------- */

/* Parameter words [wlo, whi) of each step in the weight image. */
void cc_off_step_weights(plan *pl) {
    cc *c = pl->c;
    for (int k = 0; k < pl->nst; k++) {
        ost *st = &pl->st[k];
        st->wlo = INT64_MAX, st->whi = 0;
        if (st->host) continue;
        for (int j = 0; j < st->n; j++) {
            enpu_mem_block b[ENPU_MAX_BLOCKS];
            int nb = enpu_instr_blocks(c->a, &c->L[st->lay[j]].ins, j > 0, b);
            for (int q = 0; q < nb; q++) {
                if (b[q].mem != ENPU_MEM_WEIGHT) continue;
                st->wlo = min64(st->wlo, b[q].addr);
                st->whi = max64(st->whi, b[q].addr + b[q].words);
            }
        }
        if (st->wlo == INT64_MAX) st->wlo = st->whi = 0;
    }
}

/* Can step st's chain be cut in output-channel blocks (its own slice of the
 * weights each)? conv / fc heads with groups 1, members bn, relu, act. */
static bool cob_ok(const plan *pl, const ost *st) {
    const cc *c = pl->c;
    const enpu_instr *h = &c->L[st->head].ins;
    if (h->opcode != ENPU_OPC_CONV && h->opcode != ENPU_OPC_CONV_RELU && h->opcode != ENPU_OPC_FC) return false;
    if (h->groups != 1) return false;
    for (int j = 1; j < st->n; j++) {
        int op = c->L[st->lay[j]].opcode;
        if (op != ENPU_OPC_BN && op != ENPU_OPC_RELU && op != ENPU_OPC_ACT) return false;
    }
    return true;
}

/* Weight-memory words of one output-channel block [0, o1) of step st's
 * chain (without lane groups: the head's weights not replicated). */
static int64_t cob_words(const plan *pl, const ost *st, int64_t o1, bool no_lanes) {
    const cc *c = pl->c;
    int64_t per = 0;
    for (int j = 0; j < st->n; j++) {
        enpu_instr in = c->L[st->lay[j]].ins;
        in.co = o1;
        if (j > 0) in.ci = o1;
        if (no_lanes) in.lane_split = 0;
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(c->a, &in, j > 0, b);
        for (int q = 0; q < nb; q++)
            if (b[q].mem == ENPU_MEM_WEIGHT) per += b[q].words;
    }
    return per;
}

/* Output-channel blocks for each step whose parameters exceed the weight
 * memory (streamed weights). Where each load goes (alternate halves, the
 * whole memory for a block over half) is decided as the loads are emitted. */
int cc_off_weight_buffers(plan *pl) {
    cc *c = pl->c;
    const enpu_arch *a = c->a;
    int64_t W = enpu_arch_words(a, a->weight_mem_bytes), half = W / 2;
    for (int k = 0; k < pl->nst; k++) {
        ost *st = &pl->st[k];
        int64_t words = st->whi - st->wlo;
        if (st->host || words == 0) continue;
        if (words <= W) continue;
        const cc_layer *h = &c->L[st->head];
        if (!cob_ok(pl, st)) {
            char hint[160];
            cc_fit_hint(a, "weight_mem_bytes", words * enpu_arch_word_bytes(a), hint, sizeof hint);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': its weights and parameters (%" PRId64 " bytes) do not fit the "
                             "weight memory of arch '%s' (%" PRId64 " bytes), and it cannot be split in "
                             "output-channel blocks (only an ungrouped conv or fc, fused with nothing but "
                             "bn or activations, can); %s",
                             h->name, words * enpu_arch_word_bytes(a), a->name, a->weight_mem_bytes, hint);
        }
        /* channels per block: the most multiples of pes whose slice fits half
         * the memory (the next block loads into the other half meanwhile),
         * else one multiple in the whole memory (loads then wait) */
        int64_t co = h->ins.co, P = c->P;
        int64_t best = 0, first = 0;
        for (int64_t cb = P; cb < co + P; cb += P) {
            int64_t o1 = min64(co, cb);
            int64_t per = cob_words(pl, st, o1, false);
            if (cb == P) first = per;
            if (per <= half) best = o1;
            else break;
        }
        if (best == 0 && first <= W) best = min64(co, P);
        if (best == 0 && h->ins.lane_split && cob_words(pl, st, min64(co, P), true) <= W) {
            /* lane groups replicate weights (docs/microarch.md §16): the
             * compiler retries the model without them before cutting a
             * conv's kernel into blocks */
            int64_t need = first * enpu_arch_word_bytes(a);
            return enpu_fail(c->err, ENPU_E_NOFIT,
                             "layer '%s': one block of %d output channels in %d lane groups needs %" PRId64
                             " bytes of weights and parameters; arch '%s' has weight_mem_bytes %" PRId64
                             "; it fits without lane groups",
                             h->name, (int)min64(co, P), 1 << h->ins.lane_split, need, a->name, a->weight_mem_bytes);
        }
        if (best == 0) {
            /* input-channel blocks: the sums held in the psum file (ISA 8) */
            int rc = cc_icb_plan(pl, st);
            if (rc) return rc;
            st->icfull = first * enpu_arch_word_bytes(a);
            if (st->skip_s >= 0) pl->sres[st->skip_s] = false;
            continue;
        }
        st->cob = best;
        st->ncob = (int)cdiv(co, best);
        /* a skip copy has no per-block word placement (ofmap_wpp is the
         * main DTCM write's): a later add reads its second operand from DRAM */
        if (st->ncob > 1 && st->skip_s >= 0) pl->sres[st->skip_s] = false;
    }
    return 0;
}

/* ---- output-channel blocks: their parameter slices, laid out in advance -------------- */

/* Appends the parameters of step st for output channels [o0, o1) to the DRAM
 * image and sets the block's instruction addresses (relative to the block)
 * in ins[]. Returns the block's first word in the image, or -1. */
static int64_t block_params(plan *pl, const ost *st, int64_t o0, int64_t o1, int nj, int64_t r0,
                            int64_t r1, enpu_instr *ins, int64_t *words) {
    cc *c = pl->c;
    int P = c->P;
    wbuf b = {0};
    int64_t cb = o1 - o0;
    int rc = 0;
    for (int j = 0; j < nj && !rc; j++) {
        const cc_layer *src = &c->L[st->lay[j]];
        cc_layer tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.ins = ins[j];
        tmp.table = src->table;
        tmp.name = src->name;
        tmp.src = src->src;
        int8_t *w = NULL;
        int32_t *bias = NULL;
        uint32_t *M = NULL;
        int8_t *S = NULL;
        if (src->w_bytes > 0) {
            /* words of Lc channels: pes, or pes / lane groups (tile.c) */
            int64_t Lc = P >> src->ins.lane_split;
            int64_t wpr_old = cdiv(src->ins.co, Lc), wpr = cdiv(cb, Lc);
            int64_t rows = src->w_bytes / (wpr_old * P);
            if (src->opcode == ENPU_OPC_BN) rows = 1, wpr_old = cdiv(src->ins.co, P);
            /* an input-channel block: the head's weight rows of units [r0, r1) */
            bool icb = j == 0 && r1 >= 0;
            if (icb) rows = cc_icb_nrows(st, &src->ins, r0, r1);
            w = calloc((size_t)(rows * wpr * P), 1);
            if (!w) {
                rc = OOM();
                break;
            }
            for (int64_t r = 0; r < rows; r++)
                memcpy(w + r * wpr * P, src->w + ((icb ? cc_icb_row(st, &src->ins, r0, r1, r) : r) * wpr_old + o0 / Lc) * P,
                       (size_t)min64(wpr * P, (wpr_old - o0 / Lc) * P));
            tmp.w = w;
            tmp.w_bytes = rows * wpr * P;
        }
        if (src->bias) {
            bias = malloc((size_t)cb * sizeof *bias);
            M = malloc((size_t)cb * sizeof *M);
            S = malloc((size_t)cb);
            if (!bias || !M || !S) {
                free(w), free(bias), free(M), free(S);
                rc = OOM();
                break;
            }
            memcpy(bias, src->bias + o0, (size_t)cb * sizeof *bias);
            memcpy(M, src->M + o0, (size_t)cb * sizeof *M);
            memcpy(S, src->S + o0, (size_t)cb);
            tmp.bias = bias, tmp.M = M, tmp.S = S;
        }
        rc = cc_layout_layer_params(c, &tmp, &b);
        ins[j].weight_addr = tmp.ins.weight_addr, ins[j].bias_addr = tmp.ins.bias_addr;
        ins[j].quant_addr = tmp.ins.quant_addr, ins[j].table_addr = tmp.ins.table_addr;
        free(w), free(bias), free(M), free(S);
    }
    if (rc) {
        free(b.p);
        return -1;
    }
    /* append at a word boundary of the DRAM image */
    int64_t at = cc_wb_block(c, &pl->dimg, b.p, b.len);
    *words = cdiv((int64_t)b.len, P);
    free(b.p);
    return at;
}

/* Lays out in the DRAM image the parameter slice of every block (output-
 * channel block, times input-channel block) of each step that weight
 * buffers cut, with the block's instruction addresses relative to its first
 * word: st->blo, st->bwords, st->baddr. */
int cc_off_cob_slices(plan *pl) {
    cc *c = pl->c;
    for (int k = 0; k < pl->nst; k++) {
        ost *st = &pl->st[k];
        /* one slice per output-channel block and input-channel block */
        int nb = st->ncob * st->nicb;
        if (nb <= 1) continue;
        st->blo = malloc((size_t)nb * sizeof *st->blo);
        st->bwords = malloc((size_t)nb * sizeof *st->bwords);
        st->baddr = malloc((size_t)nb * 16 * sizeof *st->baddr);
        if (!st->blo || !st->bwords || !st->baddr) return OOM();
        int64_t co = c->L[st->head].ins.co;
        for (int b = 0; b < nb; b++) {
            int bo = b / st->nicb, ib = b % st->nicb;
            int64_t o0 = (int64_t)bo * st->cob, o1 = min64(co, o0 + st->cob);
            enpu_instr ins[16];
            for (int j = 0; j < st->n; j++) {
                ins[j] = c->L[st->lay[j]].ins;
                ins[j].co = o1 - o0;
                if (j > 0) ins[j].ci = o1 - o0;
            }
            int64_t r0 = 0, r1 = -1, woff;
            if (st->nicb > 1) cc_icb_cut(st, c->P, ib, &ins[0], &r0, &r1, &woff);
            int nj = st->nicb > 1 ? cc_icb_nj(st, ib) : st->n;
            st->blo[b] = block_params(pl, st, o0, o1, nj, r0, r1, ins, &st->bwords[b]);
            if (st->blo[b] < 0) return c->err->code;
            for (int j = 0; j < nj; j++) {
                int64_t *ba = st->baddr[(size_t)b * 16 + j];
                ba[0] = ins[j].weight_addr, ba[1] = ins[j].bias_addr;
                ba[2] = ins[j].quant_addr, ba[3] = ins[j].table_addr;
            }
        }
    }
    return 0;
}
