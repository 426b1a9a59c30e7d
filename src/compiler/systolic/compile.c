/* The systolic back end's driver: lower -> tile -> plan -> emit -> validate,
 * then the mapping report from the emitted program and the cost model. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/systolic/sya_cc.h"

static void sc_free(sc *c) {
    for (int i = 0; i < c->nl; i++) {
        sc_layer *l = &c->L[i];
        free(l->w), free(l->bias), free(l->M), free(l->S), free(l->note);
    }
    free(c->L);
    free(c->S);
    if (c->tv)
        for (int t = 0; t < c->g->n_tensors; t++) free(c->tv[t].pos);
    free(c->tv);
    for (int i = 0; i < c->nmv; i++) free(c->mv[i].name), free(c->mv[i].op), free(c->mv[i].how);
    free(c->mv);
    for (int i = 0; i < c->nnotes; i++) free(c->notes[i]);
    free(c->notes);
    free(c->wimg);
}

/* One report row per instruction (the program has no strips or blocks). */
static int report(sc *c, const enpu_program *p, enpu_compile_report *r) {
    const enpu_arch *a = &p->arch;
    memset(r, 0, sizeof *r);
    int n = p->n_instr;
    int64_t *act = calloc(((size_t)n + 1) * ENPU_ACT_COUNT, sizeof *act);
    r->layers = calloc((size_t)n + 1, sizeof *r->layers);
    r->arch_name = cc_dups(a->name);
    if (!act || !r->layers || !r->arch_name) {
        free(act);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    int64_t total = enpu_sya_model_program(p, act, NULL, NULL, NULL);
    if (total < 0) {
        free(act);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    r->engine = a->engine;
    r->pes = (int)enpu_arch_mac_units(a), r->pe_rows = 1;
    const int64_t units = enpu_arch_mac_units(a);
    for (int i = 0; i < n; i++) {
        const enpu_instr *in = &p->instr[i];
        bool end = in->opcode == ENPU_OPC_END;
        if (end) {
            for (int k = 0; k < ENPU_ACT_COUNT; k++) r->total_activity[k] += act[(size_t)i * ENPU_ACT_COUNT + k];
            continue;
        }
        enpu_layer_report *L = &r->layers[r->n_layers++];
        bool sya = enpu_opcode_class(in->opcode) == ENPU_CLASS_SYA;
        L->name = cc_dups(p->layers[i].name);
        L->op = cc_dups(enpu_opcode_mnemonic(in->opcode));
        L->src = cc_dups(p->layers[i].n_src ? p->layers[i].src[0] : "");
        L->fused = cc_dups("");
        L->chain_head = r->n_layers - 1;
        L->first_instr = i;
        L->n_instr = 1, L->strips = 1;
        L->mode = sya ? ENPU_CAST_BROADCAST : -1;
        L->ifmap_addr = L->ofmap_addr = L->op2_addr = L->skip_addr = L->weight_addr = -1;
        L->op2_mem = -1;
        char note[256] = "";
        if (sya) {
            enpu_sya_shape s;
            enpu_sya_shape_of(in, &s);
            L->in[0] = in->hi, L->in[1] = in->wi, L->in[2] = in->ci;
            L->out[0] = in->ho, L->out[1] = in->wo, L->out[2] = in->co;
            L->kernel[0] = in->hk, L->kernel[1] = in->wk;
            L->stride[0] = in->stride_h, L->stride[1] = in->stride_w;
            L->tile_x = in->sya_nip, L->tile_y = in->sya_nf;
            L->ifmap_addr = in->ifmap_addr, L->ofmap_addr = in->ofmap_addr, L->weight_addr = in->weight_addr;
            L->weight_words = enpu_sya_weight_words(a, in);
            L->param_words = (in->co * 4 + c->wb - 1) / c->wb + (in->co * 8 + c->wb - 1) / c->wb;
            snprintf(note, sizeof note, "%" PRId64 " units of %" PRId64 " points x %" PRId64 " filters, K %" PRId64
                     ", %s outer",
                     s.units, in->sya_nip, in->sya_nf, s.K, in->sya_loop ? "filter tiles" : "point groups");
        }
        const char *why = "";
        for (int k = 0; k < c->nl; k++)
            if (c->L[k].note && c->L[k].note[0] && strcmp(c->g->nodes[c->L[k].node].name, p->layers[i].name) == 0)
                why = c->L[k].note;
        char full[512];
        snprintf(full, sizeof full, "%s%s%s", note, note[0] && why[0] ? "; " : "", why);
        L->note = cc_dups(full);
        if (!L->name || !L->op || !L->src || !L->fused || !L->note) {
            free(act);
            return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        }
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            int64_t v = act[(size_t)i * ENPU_ACT_COUNT + k];
            L->activity[k] = v, L->modelled_cycles += v, r->total_activity[k] += v;
        }
        L->compute_cycles = L->activity[ENPU_ACT_COMPUTE];
        if (in->opcode == ENPU_OPC_SYNC) r->host_macs += p->layers[i].macs;
        else L->macs = p->layers[i].macs;
        L->ideal_cycles = (L->macs + units - 1) / units;
        r->total_macs += L->macs;
    }
    free(act);
    r->total_modelled = total;
    r->total_ideal = (r->total_macs + units - 1) / units;
    r->moves = calloc((size_t)c->nmv + 1, sizeof *r->moves);
    r->hostops = calloc((size_t)p->n_hostops + 1, sizeof *r->hostops);
    r->notes = calloc((size_t)c->nnotes + 1, sizeof *r->notes);
    if (!r->moves || !r->hostops || !r->notes) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int i = 0; i < c->nmv; i++) {
        r->moves[i] = (enpu_move_report){cc_dups(c->mv[i].name), cc_dups(c->mv[i].op), c->mv[i].kind, cc_dups(c->mv[i].how)};
        r->n_moves++;
    }
    for (int i = 0; i < p->n_hostops; i++) {
        char buf[ENPU_MAX_NAME + 64];
        snprintf(buf, sizeof buf, "%s '%s'", p->hostops[i].kind, p->hostops[i].name);
        r->hostops[r->n_hostops++] = cc_dups(buf);
    }
    for (int i = 0; i < c->nnotes; i++) r->notes[r->n_notes++] = cc_dups(c->notes[i]);
    r->main_peak_bytes = c->main_peak * c->wb, r->main_bytes = a->main_dtcm_bytes;
    r->skip_bytes = a->skip_dtcm_bytes;
    r->weight_used_bytes = (int64_t)p->weights_len, r->weight_bytes = a->weight_mem_bytes;
    r->n_instr = p->n_instr, r->itcm_instr = (int)(a->itcm_bytes / ENPU_INSTR_BYTES);
    return 0;
}

int sya_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                enpu_program *prog, enpu_compile_report *rep, enpu_err *err) {
    enpu_compile_opts dflt;
    enpu_compile_opts_default(&dflt);
    sc c;
    memset(&c, 0, sizeof c);
    c.g = qg, c.a = arch, c.o = o ? o : &dflt, c.err = err, c.wb = enpu_arch_word_bytes(arch);
    int rc = 0;
    c.tv = calloc((size_t)(qg->n_tensors > 0 ? qg->n_tensors : 1), sizeof *c.tv);
    if (!c.tv) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto out;
    }
    for (int t = 0; t < qg->n_tensors; t++) c.tv[t].store = -1;
    if ((rc = sc_lower(&c))) goto out;
    if (c.nl + 1 > arch->itcm_bytes / ENPU_INSTR_BYTES) {
        rc = enpu_fail(err, ENPU_E_NOFIT,
                       "program: %d instructions (%d bytes) do not fit the ITCM of arch '%s' (%" PRId64
                       " bytes, and the systolic engine has no DRAM to fetch from); use itcm_bytes >= %d",
                       c.nl + 1, (c.nl + 1) * ENPU_INSTR_BYTES, arch->name, arch->itcm_bytes,
                       (c.nl + 1) * ENPU_INSTR_BYTES);
        goto out;
    }
    if ((rc = sc_tile(&c))) goto out;
    if ((rc = sc_plan(&c))) goto out;
    if ((rc = sc_emit(&c, prog))) goto out;
    rc = enpu_program_validate(prog, err);
    if (rc) {
        enpu_err_prefix(err, "internal error: the compiled program does not validate");
        goto out;
    }
    if (rep && (rc = report(&c, prog, rep))) goto out;
out:
    sc_free(&c);
    if (rc && rep) enpu_compile_report_free(rep);
    return rc;
}
