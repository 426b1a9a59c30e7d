/* The progress watchdog's shared part (sim_internal.h): its bound, derived
 * from the program, and its message.  It knows no engine: the engine's name
 * comes from the table (sim->eng), its busy units and its own pipeline depth
 * from the engine. */
#include <inttypes.h>
#include <stdio.h>

#include "sim/engine.h"

void (*sim_fault_hook)(enpu_sim *sim);

static uint64_t cdiv(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : a; }

/* The longest legal wait, term by term:
 *   - the controller: an instruction's fetch and decode;
 *   - the host: the longest host op (handover + the host CPU's cycles),
 *     during which no unit of the engine moves;
 *   - DRAM: the longest transfer cannot move more than the program's whole
 *     DRAM footprint (sim_dram_footprint), at dram_bytes_per_cycle, after
 *     dram_latency, with a row miss per burst -- an upper bound even for an
 *     engine that counts a transfer, not its beats, as progress;
 *   - the engine's own pipeline (its argument: latencies, handshakes).
 * At worst these waits follow one another with nothing moving in between,
 * so their sum bounds a legal wait; the margin (x2 + 1024) keeps the
 * watchdog clear of a wait a derivation missed by a few cycles, while a
 * hang, which never ends, is still caught within a few times the longest
 * legal wait (thousands of cycles for a small program: milliseconds). */
void sim_wd_start(sim_wd *w, const enpu_sim *sim, uint64_t pipeline) {
    const enpu_arch *a = &sim->arch;
    const enpu_program *p = sim->prog;
    uint64_t host = 0;
    for (int i = 0; i < p->n_instr; i++)
        if (p->instr[i].opcode == ENPU_OPC_SYNC) {
            uint64_t h = (uint64_t)a->host_sync_cycles + (uint64_t)enpu_sync_host_cycles(p, i);
            if (h > host) host = h;
        }
    uint64_t bytes = (uint64_t)sim_dram_footprint(p) * (uint64_t)enpu_arch_word_bytes(a), dram = 0;
    if (bytes)
        dram = (uint64_t)a->dram_latency + cdiv(bytes, (uint64_t)a->dram_bytes_per_cycle) +
               cdiv(bytes, (uint64_t)a->dram_burst_bytes) * (uint64_t)a->dram_row_miss_cycles;
    uint64_t ctl = (uint64_t)a->instr_fetch_cycles + (uint64_t)a->decode_cycles;
    w->bound = 2 * (ctl + host + dram + pipeline) + 1024;
    w->last = 0;
}

void sim_wd_busy(char *buf, size_t n, const char *unit) {
    size_t len = strlen(buf);
    if (len + 1 >= n) return;
    snprintf(buf + len, n - len, "%s%s", len ? ", " : "", unit);
}

int sim_wd_fail(const enpu_sim *sim, const sim_wd *w, uint64_t t, int instr, const char *busy,
                enpu_err *err) {
    const enpu_program *p = sim->prog;
    if (instr < 0 || instr >= p->n_instr) instr = 0;
    const char *layer = sim->rows && sim->rows[instr].name[0] ? sim->rows[instr].name : "-";
    return enpu_fail(err, ENPU_E_INTERNAL,
                     "simulator internal error: the %s engine made no progress for %" PRIu64
                     " cycles (the program's longest legal wait: %" PRIu64 ") at cycle %" PRIu64
                     ", in instruction %d (layer '%s'); still busy: %s (a bug in src/sim)",
                     sim->eng->name, t - w->last, w->bound, t, instr, layer,
                     busy && busy[0] ? busy : "none");
}
