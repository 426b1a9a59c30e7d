/* The engine table: how the shared core's driver runs a program on a
 * compute engine, without knowing any.
 *
 * An engine executes the program from instruction 0 to `end`: it models its
 * own controller, calls sim_host_op() at a `sync`, and attributes every
 * cycle to a row of sim->rows (and its owner, sim_own, when it times DRAM).
 * Each engine lives in its own folder with a cycle engine and a functional
 * one: easynpu/ (cycle.c with the unit files; functional.c; chain.c what
 * both do around a chain), systolic/, rowstat/.  Adding an engine adds a
 * folder and a line to the table in engine.c, nothing in the core
 * (tests/docs/test_layering.c holds the core to that). */
#ifndef ENPU_SIM_ENGINE_H
#define ENPU_SIM_ENGINE_H

#include "sim/sim_internal.h"

struct enpu_sim_engine {
    const char *name;            /* "easynpu" */
    enpu_engine engine;
    enpu_sim_mode mode;
    /* Allocates the engine's state for sim (sized by the program). */
    int (*create)(enpu_sim *sim, void **out, enpu_err *err);
    void (*destroy)(void *st);
    /* Runs the whole program on the memories already loaded. */
    int (*run)(void *st, enpu_sim *sim, enpu_err *err);
};

/* The engine for (engine, mode), NULL if none. */
const enpu_sim_engine *sim_engine_find(enpu_engine e, enpu_sim_mode m);

/* The functional engine's table (functional.c) and the cycle engine's
 * (engine.c). */
extern const enpu_sim_engine sim_engine_easynpu_functional;
extern const enpu_sim_engine sim_engine_easynpu_cycle;
extern const enpu_sim_engine sim_engine_systolic_cycle;
extern const enpu_sim_engine sim_engine_systolic_functional;
/* The row-stationary engine's (src/sim/rowstat/). */
extern const enpu_sim_engine sim_engine_rowstat_cycle;
extern const enpu_sim_engine sim_engine_rowstat_functional;

#endif
