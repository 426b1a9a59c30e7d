/* Observation hooks of the cycle engine: the Chrome trace-event writer and
 * the VCD writer live in src/report/sim_report.c; the engine calls them
 * through these declarations (NULL writers cost one test per call). */
#ifndef ENPU_SIM_REPORT_HOOKS_H
#define ENPU_SIM_REPORT_HOOKS_H

#include <stdint.h>

#include "easynpu/arch.h"
#include "easynpu/error.h"

struct sim_trace;
struct sim_vcd;
struct sim_signals;

/* Chrome trace-event JSON (Perfetto, chrome://tracing): complete events
 * ("ph":"X") on one track per unit, times in microseconds at clock_mhz. */
struct sim_trace *sim_trace_new(double clock_mhz);
void sim_trace_free(struct sim_trace *t);
/* A span [start, end) in cycles on track `tid` (names are copied). */
void sim_trace_span(struct sim_trace *t, int tid, const char *name, uint64_t start, uint64_t end,
                    const char *arg_key, const char *arg_val);
/* Names a track. */
void sim_trace_track(struct sim_trace *t, int tid, const char *name);
/* Writes the JSON atomically. */
int sim_trace_write(struct sim_trace *t, const char *path, enpu_err *err);

/* VCD of the control signals within cycles [from, to). */
struct sim_vcd *sim_vcd_new(const enpu_arch *a, uint64_t from, uint64_t to);
void sim_vcd_free(struct sim_vcd *v);
/* Samples the signals of cycle t (ignored outside the window). */
void sim_vcd_sample(struct sim_vcd *v, uint64_t t, const struct sim_signals *s);
int sim_vcd_write(struct sim_vcd *v, const char *path, enpu_err *err);

#endif
