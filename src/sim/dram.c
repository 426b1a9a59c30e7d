/* The DRAM channel of docs/microarch.md §13.4 (dram.h). */
#include "sim/dram.h"

#include <stdlib.h>
#include <string.h>

int sim_dram_init(sim_dram *d, const enpu_arch *a, int n_rr, enpu_err *err) {
    memset(d, 0, sizeof *d);
    int64_t wb = enpu_arch_word_bytes(a);
    d->burst = a->dram_burst_bytes > 0 ? a->dram_burst_bytes : 1;
    d->rate = a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb;
    if (d->rate < 1) d->rate = 1;
    d->latency = a->dram_latency;
    d->row_bytes = a->dram_row_bytes > 0 ? a->dram_row_bytes : 1;
    d->banks = a->dram_banks > 0 ? a->dram_banks : 1;
    d->miss_cycles = a->dram_row_miss_cycles;
    d->n_ports = 1 + (n_rr < SIM_DRAM_MAX_PORTS ? n_rr : SIM_DRAM_MAX_PORTS - 1);
    d->open_row = malloc((size_t)d->banks * sizeof *d->open_row);
    if (!d->open_row) return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the DRAM banks");
    sim_dram_reset(d);
    return 0;
}

void sim_dram_free(sim_dram *d) {
    free(d->open_row);
    memset(d, 0, sizeof *d);
}

void sim_dram_reset(sim_dram *d) {
    for (int64_t b = 0; b < d->banks; b++) d->open_row[b] = -1;
    d->free_at = 0;
    /* "after the port granted last": before any grant, port 1 comes first */
    d->last_rr = d->n_ports - 1;
}

int sim_dram_pick(const sim_dram *d, uint64_t t, bool prio, uint32_t rr_mask) {
    if (t < d->free_at) return -1;
    if (prio) return 0;
    int n = d->n_ports - 1;
    for (int i = 1; i <= n; i++) {
        int p = 1 + (d->last_rr - 1 + i) % n;
        if (rr_mask & (1u << p)) return p;
    }
    return -1;
}

uint64_t sim_dram_grant(sim_dram *d, int port, int64_t x, int64_t b, uint64_t t, bool *row_miss) {
    int64_t bank = (x / d->row_bytes) % d->banks, row = x / (d->row_bytes * d->banks);
    bool miss = d->open_row[bank] != row;
    d->open_row[bank] = row;
    uint64_t s = (uint64_t)((b + d->rate - 1) / d->rate) + (miss ? (uint64_t)d->miss_cycles : 0);
    d->free_at = t + s;
    if (d->log) sim_tspan_add(d->log, b, t, s, false);
    if (port > 0) d->last_rr = port;
    if (row_miss) *row_miss = miss;
    return s;
}
