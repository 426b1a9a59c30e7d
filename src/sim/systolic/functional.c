/* The systolic engine's functional mode: each instruction's matrix products
 * computed directly (no time), writing the same bytes as the array; also the
 * reference the cycle engine's check replays. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/systolic/sya.h"

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const char *lname(const enpu_program *p, int i) {
    return p->layers && p->layers[i].name ? p->layers[i].name : "";
}

void sya_layer_free(sya_layer *lay) {
    free(lay->bias), free(lay->M), free(lay->S);
    memset(lay, 0, sizeof *lay);
}

int sya_decode_layer(const enpu_sim *sim, const sim_mem *m, int i, sya_layer *lay, enpu_err *err) {
    const enpu_program *p = sim->prog;
    const enpu_instr *in = &p->instr[i];
    memset(lay, 0, sizeof *lay);
    enpu_sya_shape_of(in, &lay->s);
    size_t co = (size_t)in->co;
    lay->bias = malloc(co * sizeof *lay->bias);
    lay->M = malloc(co * sizeof *lay->M);
    lay->S = malloc(co);
    if (!lay->bias || !lay->M || !lay->S) {
        sya_layer_free(lay);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for parameter registers");
    }
    const int64_t wb = m->wb;
    const uint8_t *bb = m->wmem + in->bias_addr * wb, *qb = m->wmem + in->quant_addr * wb;
    for (int64_t c = 0; c < in->co; c++) {
        uint32_t mm = rd32(qb + 8 * c), ss = rd32(qb + 8 * c + 4);
        if (mm >= ((uint32_t)1 << p->arch.mult_bits) || ss > ENPU_SHIFT_MAX) {
            int64_t q = in->quant_addr;
            sya_layer_free(lay);
            return enpu_fail(err, ENPU_E_INVALID,
                             "instruction %d (%s): quant block at word %" PRId64 ", channel %" PRId64
                             ": M=%" PRIu32 " S=%" PRIu32 " (M must be below 2^%" PRId64
                             ", S at most %d)",
                             i, lname(p, i), q, c, mm, ss, p->arch.mult_bits, ENPU_SHIFT_MAX);
        }
        lay->bias[c] = (int32_t)rd32(bb + 4 * c);
        lay->M[c] = mm;
        lay->S[c] = (int8_t)ss;
    }
    lay->sched_last = -1;
    return 0;
}

int sya_acc_error(const enpu_sim *sim, int i, int64_t point, int64_t ch, int64_t acc, enpu_err *err) {
    return enpu_fail(err, ENPU_E_INVALID,
                     "layer '%s' (instruction %d): the dot product of output point %" PRId64
                     ", channel %" PRId64 " reaches %" PRId64 ", outside the %" PRId64
                     "-bit PE accumulator (sya_acc_bits)",
                     lname(sim->prog, i), i, point, ch, acc, sim->arch.sya_acc_bits);
}

int sya_func_exec(const enpu_sim *sim, int i, const sya_layer *lay, sim_mem *m, enpu_err *err) {
    const enpu_arch *a = &sim->arch;
    const enpu_instr *in = &sim->prog->instr[i];
    sya_layer own;
    if (!lay) {
        int rc = sya_decode_layer(sim, m, i, &own, err);
        if (rc) return rc;
        lay = &own;
    }
    const enpu_sya_shape *s = &lay->s;
    const int64_t wb = m->wb, wpp = (in->co + wb - 1) / wb;
    const int64_t lo = -((int64_t)1 << (a->sya_acc_bits - 1)), hi = ((int64_t)1 << (a->sya_acc_bits - 1)) - 1;
    int rc = 0;
    /* unit by unit, as the array: its activations row by row, its weights
     * once */
    int32_t *x = malloc((size_t)s->K * sizeof *x), *w = malloc((size_t)(s->K * s->nf) * sizeof *w);
    if (!x || !w) rc = enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
    for (int64_t un = 0; un < s->units && !rc; un++) {
        enpu_sya_unit u;
        enpu_sya_unit_at(s, un, &u);
        for (int64_t k = 0; k < s->K; k++)
            for (int64_t c = 0; c < u.cols; c++)
                w[k * u.cols + c] = (int8_t)m->wmem[enpu_sya_wgt_at(a, in, s, &u, k, c)];
        for (int64_t r = 0; r < u.rows && !rc; r++) {
            for (int64_t k = 0; k < s->K; k++) {
                int64_t word;
                int lane;
                enpu_sya_act_at(a, in, s, &u, r, k, &word, &lane);
                x[k] = word < 0 ? (int32_t)in->zp_in : (int8_t)m->main[word * wb + lane];
            }
            for (int64_t c = 0; c < u.cols; c++) {
                /* every partial sum lives in the PE's accumulator */
                int64_t acc = 0, o = enpu_sya_out_channel(s, &u, c);
                for (int64_t k = 0; k < s->K && !rc; k++) {
                    acc += (int64_t)x[k] * w[k * u.cols + c];
                    if (acc < lo || acc > hi) rc = sya_acc_error(sim, i, u.p0 + r, o, acc, err);
                }
                if (rc) break;
                int32_t q = enpu_requant(acc + lay->bias[o], lay->M[o], lay->S[o], (int32_t)in->zp_out,
                                         (int32_t)in->clamp_lo, (int32_t)in->clamp_hi);
                m->main[(in->ofmap_addr + (u.p0 + r) * wpp + o / wb) * wb + o % wb] = (uint8_t)(int8_t)q;
            }
        }
    }
    free(x), free(w);
    if (lay == &own) sya_layer_free(&own);
    return rc;
}

/* ---- the functional engine ----------------------------------------------------- */

static int fn_create(enpu_sim *sim, void **out, enpu_err *err) {
    (void)sim;
    *out = calloc(1, 1);
    return *out ? 0 : enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory");
}

static void fn_destroy(void *es) { free(es); }

static int fn_run(void *state, enpu_sim *sim, enpu_err *err) {
    (void)state;
    const enpu_program *p = sim->prog;
    const uint64_t units = (uint64_t)enpu_arch_mac_units(&sim->arch);
    for (int pc = 0; pc < p->n_instr; pc++) {
        int64_t op = p->instr[pc].opcode;
        if (op == ENPU_OPC_END) break;
        int rc;
        if (op == ENPU_OPC_SYNC) {
            if ((rc = sim_host_op(sim, pc, err))) return rc;
            continue;
        }
        enpu_layer_stats *st = &sim->rows[pc];
        st->macs = (uint64_t)p->layers[pc].macs;
        st->ideal_cycles = (st->macs + units - 1) / units;
        if ((rc = sya_func_exec(sim, pc, NULL, &sim->mem, err))) return rc;
        if (sim->opts.on_layer && (rc = sim->opts.on_layer(sim->opts.cb_ctx, pc, st, sim, err))) return rc;
    }
    return 0;
}

const enpu_sim_engine sim_engine_systolic_functional = {
    "systolic", ENPU_ENGINE_SYSTOLIC, ENPU_SIM_FUNCTIONAL, fn_create, fn_destroy, fn_run,
};
