/* Which instruction owns each cycle of a run and when the DRAM channel
 * moved its bytes, matched at the end: the DRAM bytes moved during each
 * instruction's own cycles, which the roofline needs (docs/offchip.md
 * "The roofline").  A layer whose transfers were prefetched during the
 * layers before it did not move those bytes in its own time: counting them
 * there would put it above the roof.  The shared core's service: an engine
 * says which instruction owns the cycles it attributes
 * (sim_own), the DRAM channel logs its bursts (sim_dram's log), and
 * the driver spreads the bytes (sim_tspan_spread). */
#ifndef ENPU_SIM_SPAN_H
#define ENPU_SIM_SPAN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sim_tspan {
    uint64_t start, end; /* [start, end) cycles */
    int64_t who;         /* the owner's instruction, or a burst's bytes */
} sim_tspan;

typedef struct sim_tspan_log {
    sim_tspan *v;
    int64_t n, cap;
    bool failed;         /* out of memory: the spread is not made */
} sim_tspan_log;

/* Appends [start, start + n) for `who`; with `merge`, into the last span
 * when it continues it for the same `who` (an owner's cycles: not a
 * burst's, whose `who` is its bytes). */
void sim_tspan_add(sim_tspan_log *l, int64_t who, uint64_t start, uint64_t n, bool merge);
void sim_tspan_clear(sim_tspan_log *l);
void sim_tspan_free(sim_tspan_log *l);

/* Spreads every burst of `bursts` (who = its bytes) over the cycles of
 * `owners`, evenly over its service cycles in whole bytes (the shares of
 * a burst whose every cycle has an owner add up to it), adding each share
 * to bytes[owner].  False when a log failed (the caller then has no figure). */
bool sim_tspan_spread(sim_tspan_log *owners, sim_tspan_log *bursts, double *bytes, int n_owner);

#endif
