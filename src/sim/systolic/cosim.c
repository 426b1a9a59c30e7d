/* The systolic engine's state for co-simulation (include/easynpu/cosim.h):
 * copies of the units' registers after a cycle, read by an RTL testbench
 * through the cycle hook.  Nothing here changes the engine. */
#include "easynpu/cosim.h"
#include "sim/systolic/sya.h"

static enpu_cosim_sya_tok tok(const sya_tok *t) {
    return (enpu_cosim_sya_tok){t->seq, t->k, t->v, t->last != 0};
}

void enpu_cosim_sya_dims_of(const void *engine, enpu_cosim_sya_dims *out) {
    const sya_engine *e = engine;
    *out = (enpu_cosim_sya_dims){e->R, e->C, e->NR, e->NC, e->BR, e->BC, e->wb, e->La, e->Lw, e->L, e->rq,
                                 e->njobs_cap};
}

void enpu_cosim_sya_ctl_of(const void *engine, enpu_cosim_sya_ctl *out) {
    const sya_engine *e = engine;
    out->state = e->state, out->pc = e->pc, out->stall = (int)e->stall_sig;
    out->next_seq = e->next_seq;
    out->mux_free = e->mux_free;
    out->wait_k = e->state == SYA_S_WAIT ? e->lay[e->pc].s.K : 0;
    out->mux_out = e->mux_out, out->ofm_words = e->ofm_words;
}

void enpu_cosim_sya_pe_at(const void *engine, int r, int c, enpu_cosim_sya_pe *out) {
    const sya_engine *e = engine;
    const sya_pe *p = &e->pe[(int64_t)r * e->C + c];
    out->a = tok(&p->a), out->w = tok(&p->w), out->acc = p->acc;
}

void enpu_cosim_sya_edge_at(const void *engine, uint64_t t, bool west, int i, enpu_cosim_sya_tok *out) {
    const sya_engine *e = engine;
    if (west) *out = tok(&e->edge_a[(int64_t)(t % (uint64_t)(e->La + 1)) * e->R + i]);
    else *out = tok(&e->edge_w[(int64_t)(t % (uint64_t)(e->Lw + 1)) * e->C + i]);
}

static enpu_cosim_sya_res res(const sya_res *r) { return (enpu_cosim_sya_res){r->seq, r->r, r->c, r->acc, r->q}; }

bool enpu_cosim_sya_mux_at(const void *engine, int r, int bc, enpu_cosim_sya_res *out) {
    const sya_engine *e = engine;
    int64_t m = (int64_t)r * e->BC + bc;
    if (!e->mux_has[m]) return false;
    *out = res(&e->mux_pend[m]);
    return true;
}

bool enpu_cosim_sya_rq_at(const void *engine, uint64_t t, int j, int r, int bc, enpu_cosim_sya_res *out) {
    const sya_engine *e = engine;
    if (j < 1 || j > e->rq) return false;
    /* a result handed on in cycle t' sits in slot (t' + rq) % (rq + 1) until
     * the re-shaping unit takes it in cycle t' + rq */
    int64_t slot = (int64_t)((t + (uint64_t)e->rq - (uint64_t)j + 1) % (uint64_t)(e->rq + 1));
    int64_t cap = (int64_t)e->R * e->BC;
    for (int i = 0; i < e->pipe_n[slot]; i++) {
        const sya_res *q = &e->pipe[slot * cap + i];
        if (q->r == r && q->c / e->NC == bc) {
            *out = res(q);
            return true;
        }
    }
    return false;
}

bool enpu_cosim_sya_job_of(const void *engine, int32_t seq, enpu_cosim_sya_job *out) {
    const sya_engine *e = engine;
    const sya_job *j = &e->jobs[seq % e->njobs_cap];
    if (seq < 0 || seq >= e->next_seq || j->seq != seq || j->writes_left < 0) return false;
    *out = (enpu_cosim_sya_job){j->instr, j->seq, j->T, j->K, j->u};
    return true;
}

const enpu_sya_shape *enpu_cosim_sya_shape(const void *engine, int instr) {
    const sya_engine *e = engine;
    if (instr < 0 || instr >= e->sim->prog->n_instr ||
        enpu_opcode_class(e->sim->prog->instr[instr].opcode) != ENPU_CLASS_SYA)
        return NULL;
    return &e->lay[instr].s;
}

void enpu_cosim_sya_param(const void *engine, int instr, int64_t ch, int32_t *bias, uint32_t *M, int *S) {
    const sya_engine *e = engine;
    const sya_layer *L = &e->lay[instr];
    *bias = L->bias[ch], *M = L->M[ch], *S = L->S[ch];
}
