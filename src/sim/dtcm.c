/* Memories of the EasyNPU core: the main DTCM (feature maps), the skip DTCM
 * (tensors kept for shortcut adds), the weight memory, the off-chip DRAM
 * (only the words the program can touch) and, through the program, the
 * ITCM.  Word arrays of `bus_bits` bits.  Access counting is done
 * by the units that access them (they know whose row a cycle belongs to);
 * this file keeps the contents and, for mismatch reports, the cycle of the
 * last write of every feature-map word. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

int sim_mem_init(sim_mem *m, const enpu_arch *a, bool track_writes, enpu_err *err) {
    memset(m, 0, sizeof *m);
    m->wb = (int)enpu_arch_word_bytes(a);
    m->main_words = enpu_arch_words(a, a->main_dtcm_bytes);
    m->skip_words = enpu_arch_words(a, a->skip_dtcm_bytes);
    m->w_words = enpu_arch_words(a, a->weight_mem_bytes);
    m->main = calloc((size_t)a->main_dtcm_bytes, 1);
    m->skip = calloc((size_t)a->skip_dtcm_bytes, 1);
    m->wmem = calloc((size_t)a->weight_mem_bytes, 1);
    if (track_writes) {
        m->main_wc = calloc((size_t)m->main_words, sizeof(uint64_t));
        m->skip_wc = calloc((size_t)m->skip_words, sizeof(uint64_t));
    }
    if (!m->main || !m->skip || !m->wmem || (track_writes && (!m->main_wc || !m->skip_wc))) {
        sim_mem_free(m);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: cannot allocate the memories of arch '%s'",
                         a->name);
    }
    return 0;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t sim_dram_footprint(const enpu_program *p) {
    const enpu_arch *a = &p->arch;
    if (a->dram_bytes <= 0) return 0;
    int64_t wb = enpu_arch_word_bytes(a);
    int64_t end = max64(enpu_program_dram_instr_words(p), ((int64_t)p->dram_init_len + wb - 1) / wb);
    for (int i = 0; i < p->n_instr; i++) {
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int n = enpu_instr_blocks(a, &p->instr[i], 0, b);
        for (int k = 0; k < n; k++)
            if (b[k].mem == ENPU_MEM_DRAM) end = max64(end, b[k].addr + b[k].words);
    }
    for (int i = 0; i < p->n_io; i++)
        if (p->io[i].mem == ENPU_MEM_DRAM)
            end = max64(end, (int64_t)p->io[i].addr + enpu_io_words(a, &p->io[i]));
    return end;
}

int sim_mem_add_dram(sim_mem *m, const enpu_program *prog, enpu_err *err) {
    int64_t words = sim_dram_footprint(prog);
    if (words == 0) return 0;
    if (words > SIM_DRAM_MAX_BYTES / m->wb)
        return enpu_fail(err, ENPU_E_LIMIT,
                         "simulator: the program touches DRAM up to byte %" PRId64
                         ", over the simulator's limit of %" PRId64 " bytes",
                         words * m->wb, SIM_DRAM_MAX_BYTES);
    m->dram_words = words;
    m->dram = calloc((size_t)(words * m->wb), 1);
    if (m->dram && m->main_wc) m->dram_wc = calloc((size_t)words, sizeof(uint64_t));
    if (!m->dram || (m->main_wc && !m->dram_wc))
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: cannot allocate %" PRId64 " bytes of DRAM",
                         words * m->wb);
    return 0;
}

void sim_mem_free(sim_mem *m) {
    free(m->main);
    free(m->skip);
    free(m->wmem);
    free(m->main_wc);
    free(m->skip_wc);
    free(m->dram);
    free(m->dram_wc);
    memset(m, 0, sizeof *m);
}

static void load_image(uint8_t *dst, size_t cap, const uint8_t *img, size_t n) {
    if (!img) n = 0;
    if (n > cap) n = cap;
    if (n) memcpy(dst, img, n);
    memset(dst + n, 0, cap - n);
}

void sim_mem_reset(sim_mem *m, const enpu_program *p) {
    size_t wb = (size_t)m->wb;
    load_image(m->main, (size_t)m->main_words * wb, p->dtcm_init, p->dtcm_init_len);
    load_image(m->skip, (size_t)m->skip_words * wb, p->skip_init, p->skip_init_len);
    load_image(m->wmem, (size_t)m->w_words * wb, p->weights, p->weights_len);
    if (m->main_wc) memset(m->main_wc, 0, (size_t)m->main_words * sizeof(uint64_t));
    if (m->skip_wc) memset(m->skip_wc, 0, (size_t)m->skip_words * sizeof(uint64_t));
    if (!m->dram) return;
    load_image(m->dram, (size_t)m->dram_words * wb, p->dram_init, p->dram_init_len);
    if (m->dram_wc) memset(m->dram_wc, 0, (size_t)m->dram_words * sizeof(uint64_t));
    /* a program longer than the ITCM lies in DRAM from word 0 (§13.5) */
    if (enpu_program_dram_instr_words(p) > 0) {
        enpu_isa_layout l;
        enpu_err e = {0};
        int rc = enpu_isa_layout_make(&p->arch, &l, &e);
        for (int i = 0; i < p->n_instr && !rc; i++)
            rc = enpu_instr_encode(&l, &p->instr[i], m->dram + (size_t)i * ENPU_INSTR_BYTES, &e);
        ENPU_ASSERT(rc == 0); /* the program was validated */
    }
}

void sim_mem_copy_fmaps(sim_mem *dst, const sim_mem *src, bool weights) {
    memcpy(dst->main, src->main, (size_t)src->main_words * (size_t)src->wb);
    memcpy(dst->skip, src->skip, (size_t)src->skip_words * (size_t)src->wb);
    if (weights) memcpy(dst->wmem, src->wmem, (size_t)src->w_words * (size_t)src->wb);
}
