/* The command line with a planted simulator bug, for test_watchdog_cli.c
 * only (tests/CMakeLists.txt builds it as easynpu_wdfault): src/cli's main,
 * renamed enpu_cli_main at compile time, behind this one, which first sets
 * the simulator's white-box fault hook (sim_internal.h) to plant the
 * systolic fast-forward's stretch one cycle too long (sya.h fault_long) in
 * every systolic cycle-mode run.  The release binary has no such hook set. */
#undef main

#include "sim/engine.h"
#include "sim/systolic/sya.h"

int enpu_cli_main(int argc, char **argv);

static void plant(enpu_sim *sim) {
    if (sim->eng->engine == ENPU_ENGINE_SYSTOLIC && sim->eng->mode == ENPU_SIM_CYCLE)
        ((sya_engine *)sim->es)->fault_long = true;
}

int main(int argc, char **argv) {
    sim_fault_hook = plant;
    return enpu_cli_main(argc, argv);
}
