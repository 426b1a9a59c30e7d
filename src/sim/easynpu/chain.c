/* The EasyNPU engines' life around a chain: what both modes set up once
 * (the decoder, the functional datapath's buffers, a decode of every chain
 * that refuses a program they cannot run), the statistics of a chain's rows
 * and of a dma, and the check that replays each chain functionally on the
 * shadow memories (chain.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "sim/easynpu/chain.h"

int sim_enpu_init(sim_enpu *x, enpu_sim *sim, enpu_err *err) {
    const enpu_program *p = sim->prog;
    memset(x, 0, sizeof *x);
    int rc = sim_decoder_init(&x->dec, p, err);
    for (int i = 0; i < p->n_instr; i++)
        x->dma_weights |= p->instr[i].opcode == ENPU_OPC_DMA && p->instr[i].dma_dir == ENPU_DMA_LOAD &&
                          p->instr[i].dma_mem == ENPU_MEM_WEIGHT;
    /* the functional datapath's buffers: the largest feature map of any
     * instruction */
    int64_t big = 1;
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        int64_t a = in->hi * in->wi * in->ci, b = in->ho * in->wo * in->co;
        if (a > big) big = a;
        if (b > big) big = b;
    }
    x->fbuf_n = big;
    for (int i = 0; i < 4 && !rc; i++)
        if (!(x->fbuf[i] = malloc((size_t)big)))
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    /* the held sums of input-channel blocks: one tile of one block (the
     * validator's), so at most the largest such instruction's outputs */
    x->held_n = 1;
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_instr *in = &p->instr[i];
        int64_t n = in->ho * in->wo * in->co;
        if ((in->ps_hold || in->ps_cont) && n > x->held_n) x->held_n = n;
    }
    if (!rc && (!(x->held = malloc((size_t)x->held_n * sizeof *x->held)) ||
                !(x->held_len = malloc(sizeof *x->held_len))))
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (!rc) *x->held_len = -1;
    if (!rc) {
        sim_mem_reset(&sim->mem, p);
        sim_chain c;
        for (int i = 0; i < p->n_instr && !rc;) {
            enpu_opclass k = enpu_opcode_class(p->instr[i].opcode);
            if (k == ENPU_CLASS_DMA) {
                sim_dma_copy(&sim->mem, &p->instr[i++], 0);
                continue;
            }
            if (k == ENPU_CLASS_CTRL) {
                int64_t h = p->instr[i].host_op;
                if (p->instr[i].opcode == ENPU_OPC_SYNC && (h < 0 || h >= p->n_hostops))
                    rc = enpu_fail(err, ENPU_E_INVALID, "instruction %d: host_op %" PRId64
                                   " out of range", i, h);
                i++;
                continue;
            }
            rc = sim_decode_chain(&x->dec, p, &sim->mem, i, &c, err);
            i += sim_chain_len(p, i);
        }
    }
    if (rc) sim_enpu_free(x);
    return rc;
}

void sim_enpu_free(sim_enpu *x) {
    sim_decoder_free(&x->dec);
    for (int i = 0; i < 4; i++) free(x->fbuf[i]);
    free(x->held);
    free(x->held_len);
    memset(x, 0, sizeof *x);
}

void sim_rows_of_chain(enpu_sim *sim, const sim_chain *c) {
    uint64_t model[64] = {0};
    uint64_t mac_units = (uint64_t)enpu_arch_mac_units(&sim->arch);
    if (c->n_st <= 64) sim_chain_compute_model(c, model);
    for (int k = 0; k < c->n_instr; k++) {
        enpu_layer_stats *st = &sim->rows[c->first + k];
        st->chain_head = c->first;
        st->macs = (uint64_t)sim->prog->layers[c->first + k].macs; /* the model's (program.h) */
        st->ideal_cycles = (st->macs + mac_units - 1) / mac_units;
    }
    for (int s = 0; s < c->n_st && s < 64; s++) sim->rows[c->st[s].instr].compute_model = model[s];
}

void sim_chain_begin(enpu_sim *sim, const sim_enpu *x, const sim_chain *c) {
    (void)c;
    if (sim->have_shadow) sim_mem_copy_fmaps(&sim->shadow, &sim->mem, x->dma_weights);
}

int sim_dma_done(enpu_sim *sim, int instr, enpu_err *err) {
    const enpu_instr *in = &sim->prog->instr[instr];
    enpu_layer_stats *st = &sim->rows[instr];
    static const enpu_memory onchip[] = {ENPU_MEM_MAIN_DTCM, ENPU_MEM_SKIP_DTCM, ENPU_MEM_WEIGHT_MEM};
    uint64_t words = (uint64_t)(in->dma_rows * in->dma_len);
    enpu_memory m = onchip[in->dma_mem <= ENPU_MEM_WEIGHT ? in->dma_mem : ENPU_MEM_MAIN];
    if (in->dma_dir == ENPU_DMA_LOAD) {
        st->reads[ENPU_MEM_OFFCHIP] += words;
        st->writes[m] += words;
    } else {
        st->reads[m] += words;
        st->writes[ENPU_MEM_OFFCHIP] += words;
    }
    const enpu_layer_info *li = &sim->prog->layers[instr];
    if (!sim->opts.on_layer || !li->tensor || !li->tensor[0]) return 0;
    return sim->opts.on_layer(sim->opts.cb_ctx, instr, st, sim, err);
}

int sim_chain_done(enpu_sim *sim, const sim_enpu *x, const sim_chain *c, enpu_err *err) {
    int rc;
    if (sim->have_shadow) {
        sim->checked = true;
        if ((rc = sim_func_exec_chain(sim, x, c, &sim->shadow, err))) return rc;
        bool ok = true;
        for (int k = 0; k < c->n_st && ok; k++) {
            const sim_stage *s = &c->st[k];
            if (s->w_skip)
                ok = sim_compare_block(sim, ENPU_MEM_SKIP, s->skip_addr, 0, s->ho, s->wo, s->co,
                                   s->instr, "skip");
        }
        const sim_stage *last = &c->st[c->n_st - 1];
        if (ok && c->remap) {
            ok = sim_compare_block(sim, ENPU_MEM_MAIN, c->rs_ofmap_addr + c->rs_oword, c->rs_owpp,
                               c->rs_ho, c->rs_wo, c->rs_co, c->rs_instr, "ofmap");
            if (ok && c->rs_w_skip)
                ok = sim_compare_block(sim, ENPU_MEM_SKIP, c->rs_skip_addr, 0, c->rs_ho, c->rs_wo,
                                   c->rs_co, c->rs_instr, "skip");
        } else if (ok && !c->ps_hold) { /* a holding chain writes nothing */
            ok = sim_compare_block(sim, ENPU_MEM_MAIN, last->ofmap_addr + last->oword, last->owpp,
                               last->ho, last->wo, last->co, last->instr, "ofmap");
        }
        if (!ok) return sim_mismatch_fail(sim, err);
    }
    if (sim->opts.on_layer) {
        rc = sim->opts.on_layer(sim->opts.cb_ctx, c->first, &sim->rows[c->first], sim, err);
        if (rc) return rc;
    }
    return 0;
}

