/* The engine table: the compute engines the simulator knows, by the
 * architecture description's `engine` and the mode.  Each engine lives in
 * its own folder under src/sim/ (easynpu/: the EasyNPU core; systolic/: the
 * output-stationary systolic array; rowstat/: the row-stationary PE array). */
#include "sim/engine.h"

const enpu_sim_engine *sim_engine_find(enpu_engine e, enpu_sim_mode m) {
    static const enpu_sim_engine *const table[] = {&sim_engine_easynpu_cycle,
                                                   &sim_engine_easynpu_functional,
                                                   &sim_engine_systolic_cycle,
                                                   &sim_engine_systolic_functional,
                                                   &sim_engine_rowstat_cycle,
                                                   &sim_engine_rowstat_functional};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->engine == e && table[i]->mode == m) return table[i];
    return NULL;
}
