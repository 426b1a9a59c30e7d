/* The compiler driver: lower -> fuse -> tile -> plan memory -> emit ->
 * validate, then the report (the mapping table, from the emitted program
 * and the cost model, so the figures are those of what was emitted). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

void enpu_compile_opts_default(enpu_compile_opts *o) { memset(o, 0, sizeof *o); }

void cc_free(cc *c) {
    for (int i = 0; i < c->nl; i++) {
        cc_layer *l = &c->L[i];
        free(l->name), free(l->src), free(l->w), free(l->bias), free(l->M), free(l->S);
        free(l->op2_const), free(l->note);
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
    free(c->order);
}

static char *dups(const char *s) {
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s ? s : "", n);
    return d;
}

void enpu_compile_report_free(enpu_compile_report *r) {
    if (!r) return;
    for (int i = 0; i < r->n_layers; i++) {
        enpu_layer_report *l = &r->layers[i];
        free(l->name), free(l->op), free(l->src), free(l->fused), free(l->note);
    }
    free(r->layers);
    for (int i = 0; i < r->n_moves; i++) free(r->moves[i].name), free(r->moves[i].op), free(r->moves[i].how);
    free(r->moves);
    for (int i = 0; i < r->n_hostops; i++) free(r->hostops[i]);
    free(r->hostops);
    for (int i = 0; i < r->n_notes; i++) free(r->notes[i]);
    free(r->notes);
    free(r->arch_name);
    memset(r, 0, sizeof *r);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Fills the report from the program (one row per instruction but END). */
static int build_report(cc *c, const enpu_program *p, enpu_compile_report *r) {
    const enpu_arch *a = &p->arch;
    memset(r, 0, sizeof *r);
    r->arch_name = dups(a->name);
    r->pes = (int)a->pes, r->pe_rows = (int)a->pe_rows;
    int n = p->n_instr;
    int64_t *cyc = calloc((size_t)n + 1, sizeof *cyc);
    int64_t *act = calloc(((size_t)n + 1) * ENPU_ACT_COUNT, sizeof *act);
    r->layers = calloc((size_t)n + 1, sizeof *r->layers);
    if (!cyc || !act || !r->layers || !r->arch_name) {
        free(cyc), free(act);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    enpu_cost_program(p, cyc, act);
    /* the layers in program order, to find notes */
    int li = 0;
    int head = 0;
    for (int i = 0; i < n; i++) {
        const enpu_instr *in = &p->instr[i];
        bool chained = i > 0 && p->instr[i - 1].fuse_next;
        if (!chained) head = i;
        if (in->opcode == ENPU_OPC_END) {
            /* END's decode cycle goes into the totals */
            r->total_modelled += cyc[i];
            for (int k = 0; k < ENPU_ACT_COUNT; k++) r->total_activity[k] += act[(size_t)i * ENPU_ACT_COUNT + k];
            continue;
        }
        enpu_layer_report *L = &r->layers[r->n_layers++];
        const cc_layer *cl = li < c->norder ? &c->L[c->order[li]] : NULL;
        li++;
        L->name = dups(p->layers[i].name);
        L->op = dups(enpu_opcode_mnemonic(in->opcode));
        L->src = dups(p->layers[i].n_src ? p->layers[i].src[0] : "");
        L->note = dups(cl && cl->note ? cl->note : "");
        L->chain_head = head;
        char fused[128] = "";
        if (!chained && in->fuse_next)
            for (int m = i + 1; m < n; m++) {
                size_t fl = strlen(fused);
                snprintf(fused + fl, sizeof fused - fl, "%s%s", fl ? "+" : "", enpu_opcode_mnemonic(p->instr[m].opcode));
                if (!p->instr[m].fuse_next) break;
            }
        L->fused = dups(fused);
        if (!L->name || !L->op || !L->src || !L->note || !L->fused) {
            free(cyc), free(act);
            return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        }
        L->in[0] = in->hi, L->in[1] = in->wi, L->in[2] = in->ci;
        L->out[0] = in->ho, L->out[1] = in->wo, L->out[2] = in->co;
        L->kernel[0] = in->hk, L->kernel[1] = in->wk;
        L->stride[0] = in->stride_h, L->stride[1] = in->stride_w;
        L->tile_x = in->tile_x, L->tile_y = in->tile_y, L->tile_xi = in->tile_xi, L->tile_yi = in->tile_yi;
        L->zs = in->zs, L->band_h = in->band_h;
        enpu_opclass k = enpu_opcode_class(in->opcode);
        int64_t g = in->groups > 0 ? in->groups : 1;
        L->z = k == ENPU_CLASS_CONV ? (in->zs * a->pes < in->co / g ? in->zs * a->pes : in->co / g) : 0;
        L->mode = k == ENPU_CLASS_CTRL ? -1 : (int)in->cast_mode;
        int64_t slots = in->opcode == ENPU_OPC_FC ? 1 : in->tile_xi * in->tile_yi;
        L->double_buffered = k != ENPU_CLASS_CTRL && slots <= a->ifmap_pad_depth / 2;
        L->ifmap_addr = (k == ENPU_CLASS_CTRL || chained) ? -1 : in->ifmap_addr;
        L->ofmap_addr = (k == ENPU_CLASS_CTRL || in->fuse_next) ? -1 : in->ofmap_addr;
        bool op2 = in->opcode == ENPU_OPC_ADD || in->opcode == ENPU_OPC_MUL;
        L->op2_addr = op2 ? in->op2_addr : -1;
        L->op2_mem = op2 ? (int)in->op2_mem : -1;
        L->skip_addr = in->store_skip ? in->skip_addr : -1;
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = enpu_instr_blocks(a, in, chained, b);
        L->weight_addr = -1;
        for (int q = 0; q < nb; q++) {
            if (strcmp(b[q].role, "weights") == 0) L->weight_addr = b[q].addr, L->weight_words = b[q].words;
            else if (b[q].mem == ENPU_MEM_WEIGHT) L->param_words += b[q].words;
        }
        L->macs = in->opcode == ENPU_OPC_SYNC ? 0 : p->layers[i].macs;
        if (in->opcode == ENPU_OPC_SYNC) r->host_macs += p->layers[i].macs;
        L->ideal_cycles = cdiv(L->macs, a->pes * a->pe_rows);
        L->modelled_cycles = cyc[i];
        for (int q = 0; q < ENPU_ACT_COUNT; q++) L->activity[q] = act[(size_t)i * ENPU_ACT_COUNT + q];
        L->compute_cycles = L->activity[ENPU_ACT_COMPUTE];
        r->total_macs += L->macs;
        r->total_modelled += L->modelled_cycles;
        for (int q = 0; q < ENPU_ACT_COUNT; q++) r->total_activity[q] += L->activity[q];
    }
    r->total_ideal = cdiv(r->total_macs, a->pes * a->pe_rows);
    free(cyc);
    free(act);
    /* moves, host ops, notes */
    r->moves = calloc((size_t)c->nmv + 1, sizeof *r->moves);
    r->hostops = calloc((size_t)p->n_hostops + 1, sizeof *r->hostops);
    r->notes = calloc((size_t)c->nnotes + 1, sizeof *r->notes);
    if (!r->moves || !r->hostops || !r->notes) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int i = 0; i < c->nmv; i++) {
        r->moves[i].name = dups(c->mv[i].name);
        r->moves[i].op = dups(c->mv[i].op);
        r->moves[i].how = dups(c->mv[i].how);
        r->moves[i].kind = c->mv[i].kind;
        r->n_moves++;
    }
    for (int i = 0; i < p->n_hostops; i++) {
        char buf[ENPU_MAX_NAME + 64];
        snprintf(buf, sizeof buf, "%s '%s'", p->hostops[i].kind, p->hostops[i].name);
        r->hostops[r->n_hostops++] = dups(buf);
    }
    for (int i = 0; i < c->nnotes; i++) r->notes[r->n_notes++] = dups(c->notes[i]);
    /* memory use */
    int64_t wb = enpu_arch_word_bytes(a);
    r->main_peak_bytes = c->main_peak * wb;
    r->skip_peak_bytes = c->skip_peak * wb;
    r->main_bytes = a->main_dtcm_bytes, r->skip_bytes = a->skip_dtcm_bytes;
    r->weight_used_bytes = (int64_t)p->weights_len, r->weight_bytes = a->weight_mem_bytes;
    r->n_instr = p->n_instr, r->itcm_instr = (int)(a->itcm_bytes / ENPU_INSTR_BYTES);
    return 0;
}

int enpu_compile_arch_check(const enpu_arch *arch, enpu_err *err) {
    int rc = enpu_arch_validate(arch, err);
    if (rc) return rc;
    /* Every phase (tiling, cost model, emission) maps a layer onto one row
     * of PEs; compiling for more would leave the other rows idle while the
     * reports counted them (half the utilization at the same cycles). */
    if (arch->pe_rows != 1)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "arch '%s': pe_rows = %" PRId64 ": the compiler maps onto one PE row only",
                         arch->name, arch->pe_rows);
    return 0;
}

int enpu_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                 enpu_program *prog, enpu_compile_report *rep, enpu_err *err) {
    enpu_program_init(prog, arch);
    if (rep) memset(rep, 0, sizeof *rep);
    int rc = enpu_compile_arch_check(arch, err);
    if (rc) return rc;
    rc = enpu_qgraph_check(qg, err);
    if (rc) return rc;
    cc c;
    memset(&c, 0, sizeof c);
    c.g = qg, c.a = arch, c.err = err, c.P = (int)arch->pes;
    if (o) c.o = *o;
    else enpu_compile_opts_default(&c.o);
    uint8_t *wimg = NULL, *simg = NULL;
    size_t wlen = 0, slen = 0;
    c.tv = calloc((size_t)(qg->n_tensors > 0 ? qg->n_tensors : 1), sizeof *c.tv);
    if (!c.tv) {
        rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        goto out;
    }
    for (int t = 0; t < qg->n_tensors; t++) c.tv[t].store = -1;
    if ((rc = cc_lower(&c))) goto out;
    if ((rc = cc_fuse(&c))) goto out;
    /* steps: chains and host ops in program order */
    c.nsteps = 0;
    for (int k = 0; k < c.norder; k++) {
        cc_layer *l = &c.L[c.order[k]];
        l->step = l->head == c.order[k] ? c.nsteps++ : c.L[l->head].step;
    }
    if (c.norder + 1 > arch->itcm_bytes / ENPU_INSTR_BYTES) {
        int64_t need = (int64_t)(c.norder + 1) * ENPU_INSTR_BYTES;
        char hint[160];
        cc_fit_hint(arch, "itcm_bytes", need, hint, sizeof hint);
        rc = enpu_fail(err, ENPU_E_NOFIT,
                       "program: %d instructions (%" PRId64 " bytes) do not fit the ITCM of arch '%s' "
                       "(%" PRId64 " bytes); %s",
                       c.norder + 1, need, arch->name, arch->itcm_bytes, hint);
        goto out;
    }
    if ((rc = cc_tile(&c))) goto out;
    if ((rc = cc_memplan(&c, &wimg, &wlen, &simg, &slen))) goto out;
    if ((rc = cc_emit(&c, prog, wimg, wlen, simg, slen))) goto out;
    rc = enpu_program_validate(prog, err);
    if (rc) {
        enpu_err_prefix(err, "internal error: the compiled program does not validate");
        goto out;
    }
    if (rep && (rc = build_report(&c, prog, rep))) goto out;
out:
    free(wimg);
    free(simg);
    cc_free(&c);
    if (rc && rep) enpu_compile_report_free(rep);
    return rc;
}
