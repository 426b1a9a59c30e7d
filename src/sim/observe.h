/* Observation: what an engine records while it runs, for the reports.
 *
 * An engine writes spans (a named interval of cycles on a track, such as
 * "compute" on the PE array's track) and samples of the control signals it
 * declared; report/ turns the record into a Chrome trace and a VCD
 * (report/sim_trace.c).  Data flows one way: the engines write here, the
 * reports read here, and nothing in src/sim calls into report/.
 *
 * Recording costs nothing when it is off: the driver creates an observer
 * only when a trace or a VCD is asked for, and every call accepts NULL. */
#ifndef ENPU_SIM_OBSERVE_H
#define ENPU_SIM_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_OBS_MAX_TRACKS 32
#define SIM_OBS_MAX_SIGNALS 64
#define SIM_OBS_MAX_SPANS 2000000 /* more are dropped and the record says so */

typedef struct sim_span {
    uint64_t start, end;         /* [start, end) in cycles */
    int track;
    size_t name, key, val;       /* offsets into the string arena (key/val: 0 = none) */
} sim_span;

typedef struct sim_change {
    uint64_t t;                  /* cycle */
    int sig;
    int64_t val;
} sim_change;

typedef struct sim_obs {
    double clock_mhz;
    char engine[32];             /* process name in the trace */
    bool trace, vcd;
    bool oom;                    /* a record could not be stored */
    /* strings: NUL-terminated, offset 0 is "" */
    char *arena;
    size_t arena_len, arena_cap;
    /* trace */
    size_t track_name[SIM_OBS_MAX_TRACKS];  /* 0: unnamed */
    sim_span *spans;
    size_t n_spans, cap_spans;
    bool truncated;
    /* VCD */
    uint64_t from, to;           /* cycle window [from, to) */
    int n_sig;
    const char *sig_name[SIM_OBS_MAX_SIGNALS];  /* static strings of the engine */
    int sig_width[SIM_OBS_MAX_SIGNALS];
    char scope[32];
    int64_t last[SIM_OBS_MAX_SIGNALS];
    bool started;                /* the first sample (all values) is recorded */
    sim_change *ch;
    size_t n_ch, cap_ch;
} sim_obs;

/* A recorder for a trace and/or a VCD window [from, to); NULL when out of
 * memory. */
sim_obs *sim_obs_new(const char *engine, double clock_mhz, bool trace, bool vcd, uint64_t from,
                     uint64_t to);
void sim_obs_free(sim_obs *o);

/* Names track tid (0 < tid < SIM_OBS_MAX_TRACKS). */
void sim_obs_track(sim_obs *o, int tid, const char *name);
/* Records span [start, end) named `name` on track tid, with an optional
 * argument (key, val may be NULL).  Empty spans are ignored. */
void sim_obs_span(sim_obs *o, int tid, const char *name, uint64_t start, uint64_t end,
                  const char *key, const char *val);

/* Declares the engine's signals (names are static strings; widths in bits,
 * 1..63) under a VCD scope name.  Call once, before the first sample. */
void sim_obs_signals(sim_obs *o, const char *scope, int n, const char *const *names,
                     const int *widths);
/* The values of every declared signal in cycle t (ignored outside the
 * window); only changes are stored. */
void sim_obs_sample(sim_obs *o, uint64_t t, const int64_t *vals);

/* A string of the arena. */
static inline const char *sim_obs_str(const sim_obs *o, size_t off) { return o->arena + off; }

#endif
