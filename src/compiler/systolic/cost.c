/* The systolic engine's cost model: the controller's rules (docs/systolic.md
 * "Timing") applied unit by unit in closed form, with the model's own hazard
 * scoreboard (hazard.c), and every count in closed form per instruction
 * (traffic.c).  enpu_sya_model_program must equal the cycle engine cycle for
 * cycle, activity by activity and count by count; it shares nothing with
 * it but the instruction's definition (include/easynpu/systolic.h), so that
 * the tests holding it to that (tests/unit/test_systolic.c,
 * enpu_test_assert_cost_exact) check both. */
#include <stdlib.h>
#include <string.h>

#include "compiler/systolic/sya_cc.h"

/* How the streams go on after a unit: the skewed block's tail in issue
 * cycles after its K steps, and the configuration cycles before the next
 * unit (the scheme, sya_scheme). */
static void after_unit(const enpu_arch *a, const enpu_sya_unit *u, int64_t K, bool has_next, bool same,
                       int64_t *tail, int64_t *cfg) {
    int64_t scheme = a->sya_scheme, rows = u->rows - 1, cols = u->cols - 1;
    bool merge_a, merge_w;
    switch (scheme) {
    case 0: merge_a = merge_w = false; break;
    case 1: merge_a = false, merge_w = has_next && same; break;
    case 3: merge_a = merge_w = true; break;
    default: merge_a = merge_w = has_next && same; break;
    }
    int64_t t = 0;
    if (!merge_a && rows > t) t = rows;
    if (!merge_w && cols > t) t = cols;
    if (scheme == 0) t = enpu_arch_sya_rows(a) + enpu_arch_sya_cols(a) - 2;
    (void)K;
    *tail = t;
    *cfg = scheme == 1 || (scheme == 4 && !same) ? a->sya_cfg_cycles : 0;
}

static int64_t cfg_first(const enpu_arch *a) {
    return a->sya_scheme == 1 || a->sya_scheme == 4 ? a->sya_cfg_cycles : 0;
}

static int64_t mux_of(const enpu_arch *a, const enpu_sya_unit *u) {
    return u->cols < a->sya_cols ? u->cols : a->sya_cols;
}

static int64_t lat(const enpu_arch *a) {
    return a->dtcm_read_latency > a->weight_mem_latency ? a->dtcm_read_latency : a->weight_mem_latency;
}

int64_t sc_cost_layer(const enpu_arch *a, const enpu_instr *in) {
    enpu_sya_shape s;
    enpu_sya_shape_of(in, &s);
    const int64_t L = lat(a), rq = a->requant_latency;
    int64_t t = cfg_first(a), mux_free = 0, last = 0;
    enpu_sya_unit u, nu;
    enpu_sya_unit_at(&s, 0, &u);
    for (int64_t k = 0; k < s.units; k++) {
        int64_t tau = t > mux_free - s.K ? t : mux_free - s.K;
        int64_t w = tau + L + s.K + u.rows - 1 + u.cols - 1 + rq;
        if (w > last) last = w;
        mux_free = tau + s.K + mux_of(a, &u);
        bool has_next = k + 1 < s.units, same = false;
        if (has_next) {
            enpu_sya_unit_at(&s, k + 1, &nu);
            same = enpu_sya_same_tile(&u, &nu);
        }
        int64_t tail, cfg;
        after_unit(a, &u, s.K, has_next, same, &tail, &cfg);
        t = tau + s.K + tail + (has_next ? cfg : 0);
        if (has_next) u = nu;
    }
    return last + 1 > t ? last + 1 : t;
}

/* ---- the whole program ---------------------------------------------------- */

typedef struct model {
    int64_t *act;
} model;

static void add(model *m, int row, int a, int64_t n) {
    if (n > 0) m->act[(size_t)row * ENPU_ACT_COUNT + (size_t)a] += n;
}

static bool is_sya(const enpu_program *p, int i) {
    return i >= 0 && i < p->n_instr && enpu_opcode_class(p->instr[i].opcode) == ENPU_CLASS_SYA;
}

/* Every instruction's counts: its fetch (every instruction is fetched once,
 * end and sync included) and a systolic one's units (traffic.c). */
static void counts(const enpu_program *p, int64_t *reads, int64_t *writes, int64_t *uops) {
    const size_t n = (size_t)p->n_instr;
    int64_t rd[ENPU_MEM_COUNT], wr[ENPU_MEM_COUNT], op[ENPU_UOP_COUNT];
    if (reads) memset(reads, 0, n * ENPU_MEM_COUNT * sizeof *reads);
    if (writes) memset(writes, 0, n * ENPU_MEM_COUNT * sizeof *writes);
    if (uops) memset(uops, 0, n * ENPU_UOP_COUNT * sizeof *uops);
    for (size_t i = 0; i < n; i++) {
        memset(rd, 0, sizeof rd), memset(wr, 0, sizeof wr), memset(op, 0, sizeof op);
        rd[ENPU_MEM_ITCM] = sc_itcm_words(&p->arch);
        if (is_sya(p, (int)i)) sc_count_instr(&p->arch, &p->instr[i], rd, wr, op);
        if (reads) memcpy(reads + i * ENPU_MEM_COUNT, rd, sizeof rd);
        if (writes) memcpy(writes + i * ENPU_MEM_COUNT, wr, sizeof wr);
        if (uops) memcpy(uops + i * ENPU_UOP_COUNT, op, sizeof op);
    }
}

int64_t enpu_sya_model_program(const enpu_program *p, int64_t *act, int64_t *reads, int64_t *writes,
                               int64_t *uops) {
    const enpu_arch *a = &p->arch;
    model m = {act};
    memset(act, 0, (size_t)p->n_instr * ENPU_ACT_COUNT * sizeof *act);
    counts(p, reads, writes, uops);
    sc_board b;
    enpu_sya_shape *sh = calloc((size_t)p->n_instr + 1, sizeof *sh);
    int64_t *last_w = malloc(((size_t)p->n_instr + 1) * sizeof *last_w);
    if (!sh || !last_w || sc_board_init(&b, enpu_arch_words(a, a->main_dtcm_bytes))) {
        free(sh), free(last_w);
        return -1;
    }
    for (int i = 0; i < p->n_instr; i++) {
        last_w[i] = -1;
        if (is_sya(p, i)) enpu_sya_shape_of(&p->instr[i], &sh[i]);
    }
    const int64_t L = lat(a);
    int64_t t = a->instr_fetch_cycles + a->decode_cycles, mux_free = 0, max_write = -1;
    int pc = 0, last_instr = -1;
    add(&m, 0, ENPU_ACT_CONTROLLER, t);
    for (;;) {
        const enpu_instr *in = &p->instr[pc];
        if (in->opcode == ENPU_OPC_END) break;
        if (in->opcode == ENPU_OPC_SYNC) {
            int64_t H = enpu_sync_cycles(p, pc), hc = enpu_sync_host_cycles(p, pc);
            add(&m, pc, ENPU_ACT_CONTROLLER, H - hc);
            add(&m, pc, ENPU_ACT_HOST, hc);
            pc++;
            add(&m, pc, ENPU_ACT_CONTROLLER, a->decode_cycles);
            t += H + a->decode_cycles;
            continue;
        }
        /* a run of systolic instructions, unit by unit */
        int64_t unit = 0, cfg = cfg_first(a);
        for (;;) {
            const enpu_instr *ci = &p->instr[pc];
            const enpu_sya_shape *s = &sh[pc];
            add(&m, pc, ENPU_ACT_CONTROLLER, cfg);
            t += cfg;
            enpu_sya_unit u;
            enpu_sya_unit_at(s, unit, &u);
            int64_t raw, war, ctx = -1;
            sc_board_ready(&b, a, ci, pc, s, &u, &raw, &war);
            if (is_sya(p, pc - 1) && is_sya(p, pc - 2)) ctx = last_w[pc - 2] + 1;
            int64_t tau = t, mux = mux_free - s->K; /* the MUXes through with the last unit */
            if (mux > tau) tau = mux;
            if (ctx > tau) tau = ctx;
            if (raw - L > tau) tau = raw - L;
            if (war - L > tau) tau = war - L;
            /* the wait: the MUXes first, then the hazards */
            int64_t odrain = (tau < mux ? tau : mux) - t;
            if (odrain > 0) add(&m, last_instr, ENPU_ACT_OFMAP_DRAIN, odrain);
            int64_t a0 = t > mux ? t : mux;
            if (tau > a0) {
                int64_t lo = a0 > ctx ? a0 : ctx, hi = tau < raw - L ? tau : raw - L;
                int64_t ifl = hi > lo ? hi - lo : 0;
                add(&m, pc, ENPU_ACT_IFMAP_LOAD, ifl);
                add(&m, pc, ENPU_ACT_BUS_CONFLICT, tau - a0 - ifl);
            }
            int64_t lw = sc_board_commit(&b, a, ci, pc, s, &u, tau + L);
            if (lw > last_w[pc]) last_w[pc] = lw;
            if (lw > max_write) max_write = lw;
            mux_free = tau + s->K + mux_of(a, &u);
            /* the next unit: of this instruction or the next systolic one */
            int npc = pc;
            int64_t nunit = unit + 1;
            bool has_next = true, same = false;
            if (nunit >= s->units) {
                npc = pc + 1, nunit = 0;
                has_next = is_sya(p, npc);
            } else {
                enpu_sya_unit nu;
                enpu_sya_unit_at(s, nunit, &nu);
                same = enpu_sya_same_tile(&u, &nu);
            }
            int64_t tail, ncfg;
            after_unit(a, &u, s->K, has_next, same, &tail, &ncfg);
            add(&m, pc, ENPU_ACT_COMPUTE, s->K);
            add(&m, pc, ENPU_ACT_PIPELINE_FILL, tail);
            t = tau + s->K + tail;
            last_instr = pc;
            if (has_next) {
                pc = npc, unit = nunit, cfg = ncfg;
                continue;
            }
            /* before a host op or the end: every result written */
            if (max_write + 1 > t) {
                add(&m, pc, ENPU_ACT_PIPELINE_DRAIN, max_write + 1 - t);
                t = max_write + 1;
            }
            pc++;
            add(&m, pc, ENPU_ACT_CONTROLLER, a->decode_cycles);
            t += a->decode_cycles;
            break;
        }
    }
    sc_board_free(&b);
    free(sh), free(last_w);
    return t;
}
