/* Ifmap scratch pads: `ifmap_pads` (= P) pads of `ifmap_pad_depth` 8-bit
 * entries, addressed together by if_hw_addr.  Entry j of every pad holds
 * lane j's channel of word j of a load unit, so the array is stored as
 * [entry][lane].  A padding word carries a mark bit (max pool: never wins).
 * Split into two banks of Dif/2 entries when the layer's input tile fits
 * one (double buffering, docs/microarch.md §11.5); each bank has a valid
 * bit (every word of its unit loaded) and a done bit (the PE array has read
 * it for the last time).  Broadcast reads pick pad if_ch_addr for every PE;
 * multicast reads give pad i to PE i: both are plain indexing of `data` by
 * the PE array (pe.c). */
#include <stdlib.h>

#include "sim/easynpu/core.h"

int sim_ifpad_init(ifpad *p, const enpu_arch *a, enpu_err *err) {
    p->P = (int)a->pes;
    p->depth = (int)a->ifmap_pad_depth;
    p->data = calloc((size_t)p->depth * (size_t)p->P, 1);
    p->mark = calloc((size_t)p->depth, 1);
    if (!p->data || !p->mark) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    sim_ifpad_reset(p, false);
    return 0;
}

void sim_ifpad_free(ifpad *p) {
    free(p->data);
    free(p->mark);
}

void sim_ifpad_reset(ifpad *p, bool dbuf) {
    p->nbanks = dbuf ? 2 : 1;
    p->bank_size = dbuf ? p->depth / 2 : p->depth;
    for (int b = 0; b < 2; b++)
        p->bank[b] = (pad_bank){.unit = -1, .valid_at = NEVER, .done_at = NEVER};
}
