/* Memories of the EasyNPU core: the main DTCM (feature maps), the skip DTCM
 * (tensors kept for shortcut adds), the weight memory and, through the
 * program, the ITCM.  Word arrays of `bus_bits` bits.  Access counting is done
 * by the units that access them (they know whose row a cycle belongs to);
 * this file keeps the contents and, for mismatch reports, the cycle of the
 * last write of every feature-map word. */
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

void sim_mem_free(sim_mem *m) {
    free(m->main);
    free(m->skip);
    free(m->wmem);
    free(m->main_wc);
    free(m->skip_wc);
    memset(m, 0, sizeof *m);
}

static void load_image(uint8_t *dst, size_t cap, const uint8_t *img, size_t n) {
    memset(dst, 0, cap);
    if (img && n) memcpy(dst, img, n < cap ? n : cap);
}

void sim_mem_reset(sim_mem *m, const enpu_program *p) {
    size_t wb = (size_t)m->wb;
    load_image(m->main, (size_t)m->main_words * wb, p->dtcm_init, p->dtcm_init_len);
    load_image(m->skip, (size_t)m->skip_words * wb, p->skip_init, p->skip_init_len);
    load_image(m->wmem, (size_t)m->w_words * wb, p->weights, p->weights_len);
    if (m->main_wc) memset(m->main_wc, 0, (size_t)m->main_words * sizeof(uint64_t));
    if (m->skip_wc) memset(m->skip_wc, 0, (size_t)m->skip_words * sizeof(uint64_t));
}

void sim_mem_copy_fmaps(sim_mem *dst, const sim_mem *src) {
    memcpy(dst->main, src->main, (size_t)src->main_words * (size_t)src->wb);
    memcpy(dst->skip, src->skip, (size_t)src->skip_words * (size_t)src->wb);
}
