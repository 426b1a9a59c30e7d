/* Weight scratch pads: `weight_pad_groups` (= P) lanes of `weight_pad_depth`
 * 8-bit entries, filled one 128-bit weight-bus word at a time (lane i of the
 * word to the pad of PE i) and used as a circular buffer: the head slot is
 * the w_och_gcnt group the PEs read, freed when its cycles are done
 * (docs/microarch.md §11.6).  The same circular word buffer, with the DTCM
 * read latency, is the op2 FIFO at the PEs' bias port (§11.7). */
#include <stdlib.h>

#include "sim/easynpu/core.h"

int sim_wfifo_init(wfifo *f, int depth, int P, enpu_err *err) {
    f->depth = depth;
    f->P = P;
    f->head = f->count = 0;
    f->data = calloc((size_t)depth * (size_t)P, 1);
    f->ready = calloc((size_t)depth, sizeof(uint64_t));
    if (!f->data || !f->ready) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    return 0;
}

void sim_wfifo_free(wfifo *f) {
    free(f->data);
    free(f->ready);
}
