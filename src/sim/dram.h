/* The off-chip DRAM channel (docs/microarch.md §13.4), shared by every
 * engine of the simulator: one burst in service at a time, per-bank open
 * rows, a fixed latency from the end of a burst's service to its data, and
 * the arbitration between the requesters.
 *
 * Requesters are ports: port 0 is the priority port (the EasyNPU's
 * instruction prefetcher, §13.5), ports 1..n are served round-robin after
 * the port granted last (the DMA engines).  The channel only times bursts;
 * the requesters move the data when the time comes.  A burst of b bytes at
 * DRAM byte x granted in cycle t occupies the channel in [t, t+S),
 * S = ceil(b / min(dram_bytes_per_cycle, word bytes)) + (dram_row_miss_cycles
 * when its bank's open row is another row), and its data is in place from
 * t + S + dram_latency.  Bursts are cut at every multiple of
 * dram_burst_bytes of the DRAM byte address space (sim_dram_burst). */
#ifndef ENPU_SIM_DRAM_H
#define ENPU_SIM_DRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"
#include "sim/span.h"

#define SIM_DRAM_MAX_PORTS 32

typedef struct sim_dram {
    int64_t burst;               /* dram_burst_bytes */
    int64_t rate;                /* bytes per service cycle: min(bytes_per_cycle, word bytes) */
    int64_t latency;             /* dram_latency */
    int64_t row_bytes, banks, miss_cycles;
    int64_t *open_row;           /* [banks]; -1: no row open */
    int n_ports;                 /* 1 + round-robin ports */
    int last_rr;                 /* round-robin port granted last */
    uint64_t free_at;            /* first cycle the channel may grant again */
    sim_tspan_log *log;           /* when set, every burst's service cycles and bytes (span.h) */
} sim_dram;

/* A channel for arch a with the priority port and n_rr round-robin ports
 * (n_rr < SIM_DRAM_MAX_PORTS).  ENPU_E_NOMEM if the bank table cannot be
 * allocated. */
int sim_dram_init(sim_dram *d, const enpu_arch *a, int n_rr, enpu_err *err);
void sim_dram_free(sim_dram *d);
/* No row open, the channel free, round robin starting at port 1. */
void sim_dram_reset(sim_dram *d);

/* Bytes of the burst that starts at byte x of a request ending at byte end
 * (x < end): up to the next multiple of the burst size. */
static inline int64_t sim_dram_burst(const sim_dram *d, int64_t x, int64_t end) {
    int64_t lim = (x / d->burst + 1) * d->burst;
    return (lim < end ? lim : end) - x;
}

/* The port granted in cycle t, or -1 (the channel is in service, or nobody
 * requests): port 0 when prio is set, else the first port of rr_mask (bit p
 * for port p >= 1) after the round-robin port granted last.  Does not
 * grant: call sim_dram_grant for the port chosen. */
int sim_dram_pick(const sim_dram *d, uint64_t t, bool prio, uint32_t rr_mask);

/* Grants port's burst of b bytes at DRAM byte x in cycle t: the channel is
 * busy until t + S, the bank's open row becomes the burst's.  Returns S;
 * *row_miss tells whether it paid the row miss (may be NULL). */
uint64_t sim_dram_grant(sim_dram *d, int port, int64_t x, int64_t b, uint64_t t, bool *row_miss);

#endif
