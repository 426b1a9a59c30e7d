/* Co-simulation hooks (include/easynpu/cosim.h): the engine-independent
 * part; each engine's state accessors live in its own folder. */
#include "easynpu/cosim.h"
#include "sim/sim_internal.h"

void enpu_cosim_attach(enpu_sim *sim, enpu_cosim_hook hook, void *ctx) {
    sim->cycle_hook = hook;
    sim->hook_ctx = ctx;
    sim->step_every_cycle = hook != NULL;
}

void enpu_cosim_mem_of(const enpu_sim *sim, enpu_cosim_mem *out) {
    out->wb = sim->mem.wb;
    out->main = sim->mem.main, out->wmem = sim->mem.wmem;
    out->main_words = sim->mem.main_words, out->w_words = sim->mem.w_words;
    out->main_wc = sim->mem.main_wc;
}
