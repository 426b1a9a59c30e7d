/* The compiler driver: lower -> fuse -> tile -> plan memory -> emit ->
 * validate, then the report (the mapping table, from the emitted program
 * and the cost model, so the figures are those of what was emitted). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/rowstat/rs.h"
#include "compiler/systolic/sya_cc.h"
#include "quant/qinternal.h"

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
    for (int i = 0; i < c->nit; i++) free(c->it[i].dep);
    free(c->it);
    free(c->sorder);
    free(c->dram_img);
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

/* The row key of instruction i: its group and its position in its chain
 * (a DMA folds into position 0, the head's). */
static int chain_pos(const enpu_program *p, int i) {
    if (p->instr[i].opcode == ENPU_OPC_DMA) return 0;
    int j = 0;
    while (i - j > 0 && p->instr[i - j - 1].fuse_next) j++;
    return j;
}

/* Fills the report from the program: one row per layer group and chain
 * position (docs/compiler.md "The mapping table"). */
static int build_report(cc *c, const enpu_program *p, enpu_compile_report *r) {
    const enpu_arch *a = &p->arch;
    memset(r, 0, sizeof *r);
    r->arch_name = cc_dups(a->name);
    r->engine = a->engine;
    r->pes = (int)a->pes, r->pe_rows = (int)a->pe_rows;
    int n = p->n_instr;
    int64_t *act = calloc(((size_t)n + 1) * ENPU_ACT_COUNT, sizeof *act);
    int64_t *rd = calloc((size_t)n + 1, sizeof *rd), *wr = calloc((size_t)n + 1, sizeof *wr);
    int *rep = malloc(((size_t)n + 1) * 16 * sizeof *rep); /* (group, pos) -> representative */
    int *row_of = malloc(((size_t)n + 1) * sizeof *row_of);
    r->layers = calloc((size_t)n + 1, sizeof *r->layers);
    if (!act || !rd || !wr || !rep || !row_of || !r->layers || !r->arch_name) {
        free(act), free(rd), free(wr), free(rep), free(row_of);
        return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    }
    int64_t total = enpu_model_program(p, act, rd, wr);
    int64_t wb = enpu_arch_word_bytes(a);
    /* the representative of each (group, position): its first compute
     * instruction, else its first instruction */
    for (int i = 0; i < n * 16; i++) rep[i] = -1;
    for (int i = 0; i < n; i++) {
        int key = p->layers[i].group * 16 + chain_pos(p, i);
        bool dma = p->instr[i].opcode == ENPU_OPC_DMA;
        if (rep[key] < 0 || (p->instr[rep[key]].opcode == ENPU_OPC_DMA && !dma)) rep[key] = i;
    }
    /* rows in the order of their representatives; END's cycles go into the totals */
    for (int i = 0; i < n; i++) row_of[i] = -1;
    for (int i = 0; i < n; i++) {
        const enpu_instr *in = &p->instr[i];
        int key = p->layers[i].group * 16 + chain_pos(p, i);
        if (rep[key] != i) continue;
        if (in->opcode == ENPU_OPC_END) continue;
        row_of[i] = r->n_layers;
        enpu_layer_report *L = &r->layers[r->n_layers++];
        bool chained = i > 0 && p->instr[i - 1].fuse_next && in->opcode != ENPU_OPC_DMA;
        int head = i;
        while (head > 0 && p->instr[head - 1].fuse_next) head--;
        L->first_instr = i;
        L->chain_head = chained ? row_of[head] : r->n_layers - 1;
        L->name = cc_dups(p->layers[i].name);
        L->op = cc_dups(enpu_opcode_mnemonic(in->opcode));
        L->src = cc_dups(p->layers[i].n_src ? p->layers[i].src[0] : "");
        /* the note of the cc layer the instruction comes from */
        const char *note = "";
        const cc_layer *whole = NULL; /* the layer before row strips and channel blocks */
        for (int k = 0; k < c->nit && !note[0]; k++) {
            const cc_item *it = &c->it[k];
            for (int j = 0; j < it->n; j++) {
                const cc_layer *cl = it->lay[j] >= 0 ? &c->L[it->lay[j]] : NULL;
                if (!cl || strcmp(cl->name, p->layers[i].name) != 0) continue;
                if (!whole && cl->ins.opcode == in->opcode) whole = cl;
                if (cl->note) note = cl->note;
            }
        }
        L->note = cc_dups(note);
        char fused[128] = "";
        if (!chained && in->fuse_next)
            for (int m = i + 1; m < n; m++) {
                size_t fl = strlen(fused);
                snprintf(fused + fl, sizeof fused - fl, "%s%s", fl ? "+" : "", enpu_opcode_mnemonic(p->instr[m].opcode));
                if (!p->instr[m].fuse_next) break;
            }
        L->fused = cc_dups(fused);
        if (!L->name || !L->op || !L->src || !L->note || !L->fused) {
            free(act), free(rd), free(wr), free(rep), free(row_of);
            return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
        }
        enpu_opclass k = enpu_opcode_class(in->opcode);
        bool ctl = k == ENPU_CLASS_CTRL || k == ENPU_CLASS_DMA;
        const enpu_instr *sh = whole ? &whole->ins : in;
        L->in[0] = sh->hi, L->in[1] = sh->wi, L->in[2] = sh->ci;
        L->out[0] = sh->ho, L->out[1] = sh->wo, L->out[2] = sh->co;
        L->kernel[0] = in->hk, L->kernel[1] = in->wk;
        L->stride[0] = in->stride_h, L->stride[1] = in->stride_w;
        L->tile_x = in->tile_x, L->tile_y = in->tile_y, L->tile_xi = in->tile_xi, L->tile_yi = in->tile_yi;
        L->zs = in->zs, L->band_h = in->band_h;
        int64_t g = in->groups > 0 ? in->groups : 1;
        L->z = k == ENPU_CLASS_CONV ? (in->zs * a->pes < in->co / g ? in->zs * a->pes : in->co / g) : 0;
        L->mode = ctl ? -1 : (int)in->cast_mode;
        int64_t slots = in->opcode == ENPU_OPC_FC ? 1 : in->tile_xi * in->tile_yi;
        L->double_buffered = !ctl && slots <= a->ifmap_pad_depth / 2;
        L->ifmap_addr = (ctl || chained) ? -1 : in->ifmap_addr;
        L->ofmap_addr = (ctl || in->fuse_next) ? -1 : in->ofmap_addr;
        bool op2 = in->opcode == ENPU_OPC_ADD || in->opcode == ENPU_OPC_MUL;
        L->op2_addr = op2 ? in->op2_addr : -1;
        L->op2_mem = op2 ? (int)in->op2_mem : -1;
        L->skip_addr = in->store_skip ? in->skip_addr : -1;
        enpu_mem_block b[ENPU_MAX_BLOCKS];
        int nb = ctl ? 0 : enpu_instr_blocks(a, in, chained, b);
        L->weight_addr = -1;
        for (int q = 0; q < nb; q++) {
            if (strcmp(b[q].role, "weights") == 0) L->weight_addr = b[q].addr, L->weight_words = b[q].words;
            else if (b[q].mem == ENPU_MEM_WEIGHT) L->param_words += b[q].words;
        }
    }
    /* sums over each row's instructions */
    for (int i = 0; i < n; i++) {
        int key = p->layers[i].group * 16 + chain_pos(p, i);
        int ri = rep[key] >= 0 ? row_of[rep[key]] : -1;
        const enpu_instr *in = &p->instr[i];
        if (in->opcode == ENPU_OPC_END || ri < 0) {
            for (int k = 0; k < ENPU_ACT_COUNT; k++) r->total_activity[k] += act[(size_t)i * ENPU_ACT_COUNT + k];
            r->total_dram_read_bytes += rd[i] * wb, r->total_dram_write_bytes += wr[i] * wb;
            continue;
        }
        enpu_layer_report *L = &r->layers[ri];
        L->n_instr++;
        if (in->opcode == ENPU_OPC_DMA) L->dmas++;
        else L->strips++;
        for (int k = 0; k < ENPU_ACT_COUNT; k++) {
            int64_t v = act[(size_t)i * ENPU_ACT_COUNT + k];
            L->activity[k] += v;
            L->modelled_cycles += v;
            r->total_activity[k] += v;
        }
        L->dram_read_bytes += rd[i] * wb, L->dram_write_bytes += wr[i] * wb;
        r->total_dram_read_bytes += rd[i] * wb, r->total_dram_write_bytes += wr[i] * wb;
        /* MACs as the layer records them (docs/microarch.md "MACs"); a host
         * op's are reported apart */
        if (in->opcode == ENPU_OPC_SYNC) r->host_macs += p->layers[i].macs;
        else L->macs += p->layers[i].macs;
    }
    for (int i = 0; i < r->n_layers; i++) {
        enpu_layer_report *L = &r->layers[i];
        L->ideal_cycles = cdiv(L->macs, a->pes * a->pe_rows);
        L->compute_cycles = L->activity[ENPU_ACT_COMPUTE];
        r->total_macs += L->macs;
    }
    r->total_modelled = total;
    free(act), free(rd), free(wr), free(rep), free(row_of);
    r->total_ideal = cdiv(r->total_macs, a->pes * a->pe_rows);
    r->offchip = c->offchip;
    /* moves, host ops, notes */
    r->moves = calloc((size_t)c->nmv + 1, sizeof *r->moves);
    r->hostops = calloc((size_t)p->n_hostops + 1, sizeof *r->hostops);
    r->notes = calloc((size_t)c->nnotes + 1, sizeof *r->notes);
    if (!r->moves || !r->hostops || !r->notes) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    for (int i = 0; i < c->nmv; i++) {
        r->moves[i].name = cc_dups(c->mv[i].name);
        r->moves[i].op = cc_dups(c->mv[i].op);
        r->moves[i].how = cc_dups(c->mv[i].how);
        r->moves[i].kind = c->mv[i].kind;
        r->n_moves++;
    }
    for (int i = 0; i < p->n_hostops; i++) {
        char buf[ENPU_MAX_NAME + 64];
        snprintf(buf, sizeof buf, "%s '%s'", p->hostops[i].kind, p->hostops[i].name);
        r->hostops[r->n_hostops++] = cc_dups(buf);
    }
    for (int i = 0; i < c->nnotes; i++) r->notes[r->n_notes++] = cc_dups(c->notes[i]);
    /* memory use */
    r->main_peak_bytes = c->main_peak * wb;
    r->skip_peak_bytes = c->skip_peak * wb;
    r->weight_used_bytes = (int64_t)p->weights_len;
    if (c->offchip) {
        /* the off-chip plan reuses buffers at fixed places: the highest
         * address any instruction touches in each memory */
        int64_t top[ENPU_MEM_WEIGHT + 1] = {0};
        for (int i = 0; i < p->n_instr; i++) {
            const enpu_instr *in = &p->instr[i];
            if (enpu_opcode_class(in->opcode) == ENPU_CLASS_CTRL) continue;
            enpu_mem_block b[ENPU_MAX_BLOCKS];
            int nb = enpu_instr_blocks(a, in, i > 0 && p->instr[i - 1].fuse_next, b);
            for (int q = 0; q < nb; q++)
                if (b[q].mem >= 0 && b[q].mem <= ENPU_MEM_WEIGHT && b[q].addr + b[q].words > top[b[q].mem])
                    top[b[q].mem] = b[q].addr + b[q].words;
        }
        r->main_peak_bytes = top[ENPU_MEM_MAIN] * wb, r->skip_peak_bytes = top[ENPU_MEM_SKIP] * wb;
        r->weight_used_bytes = top[ENPU_MEM_WEIGHT] * wb;
    }
    r->main_bytes = a->main_dtcm_bytes, r->skip_bytes = a->skip_dtcm_bytes;
    r->weight_bytes = a->weight_mem_bytes;
    r->n_instr = p->n_instr, r->itcm_instr = (int)(a->itcm_bytes / ENPU_INSTR_BYTES);
    return 0;
}

void enpu_compile_quant_opts(const enpu_arch *arch, enpu_quant_opts *o) {
    enpu_quant_opts_for_arch(o, arch);
    enpu_isa_layout lay;
    enpu_err e = {0};
    if (arch->engine == ENPU_ENGINE_EASYNPU && enpu_isa_layout_make(arch, &lay, &e) == 0) {
        /* the instruction's geometry fields (docs/isa.md) */
        int64_t lo;
        enpu_field_range(&lay, ENPU_F_wk, &lo, &o->npu_max.kernel);
        enpu_field_range(&lay, ENPU_F_stride_w, &lo, &o->npu_max.stride);
        enpu_field_range(&lay, ENPU_F_dil_w, &lo, &o->npu_max.dilation);
        enpu_field_range(&lay, ENPU_F_pad_left, &lo, &o->npu_max.pad);
        enpu_field_range(&lay, ENPU_F_wi, &lo, &o->npu_max.dim);
    }
    if (arch->engine == ENPU_ENGINE_ROWSTAT) {
        o->host_kinds = enpu_rs_host_kinds();
        o->wide_acc_bits = (int)arch->rs_psum_bits;
    } else if (arch->engine == ENPU_ENGINE_SYSTOLIC) {
        o->host_kinds = sya_host_kinds();
    }
}

int enpu_compile_arch_check(const enpu_arch *arch, enpu_err *err) {
    int rc = enpu_arch_validate(arch, err);
    if (rc) return rc;
    return 0;
}

/* The nodes a retry runs on the host, and why (compile.c's loop). */
typedef struct hostfb {
    bool *force;
    char **why;
} hostfb;

static int compile_easynpu(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                           enpu_program *prog, enpu_compile_report *rep, enpu_err *err, bool no_lanes,
                           const hostfb *fb, int *fail_node);

int enpu_compile(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                 enpu_program *prog, enpu_compile_report *rep, enpu_err *err) {
    enpu_program_init(prog, arch);
    if (rep) memset(rep, 0, sizeof *rep);
    int rc = enpu_compile_arch_check(arch, err);
    if (rc) return rc;
    rc = enpu_qgraph_check(qg, err);
    if (rc) return rc;
    if (qg->requant != (int)arch->requant)
        return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                         "the quantized graph's integer parameters are for requant \"%s\", arch "
                         "'%s' has requant \"%s\"",
                         enpu_requant_name(qg->requant), arch->name,
                         enpu_requant_name(arch->requant));
    /* one back end per engine */
    if (arch->engine == ENPU_ENGINE_ROWSTAT) return enpu_rs_compile(qg, arch, o, prog, rep, err);
    if (enpu_qgraph_bits(qg) != 8)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "arch '%s': the %s engine computes on int8 data; the model is quantized "
                         "to %d bits (the row-stationary engine runs 16-bit data: --arch rowstat)",
                         arch->name, enpu_engine_name(arch->engine), enpu_qgraph_bits(qg));
    if (arch->engine == ENPU_ENGINE_SYSTOLIC) return sya_compile(qg, arch, o, prog, rep, err);
    /* every accumulator fits acc_bits, proven over all int8 inputs (numerics.md
     * §4): the quantizer proves it for the widths it was given, but a .qjson
     * or a TFLite model (whose ADD scales each operand by 2^20) comes with
     * none, and an overflow would otherwise stop a run only on the data that
     * reaches it */
    for (int i = 0; i < qg->n_nodes; i++) {
        const enpu_node *n = &qg->nodes[i];
        if (n->dead) continue;
        int64_t lo, hi;
        enpu_q_acc_range(qg, n, &lo, &hi);
        char what[ENPU_MAX_NAME + 16];
        snprintf(what, sizeof what, "layer '%s'", n->name);
        if ((rc = enpu_acc_check(what, lo, hi, (int)arch->acc_bits, err)))
            return enpu_err_prefix(err, "arch '%s'", arch->name);
    }
    /* host fallback: a data movement whose NPU form fails (an element order
     * the NPU's reshape cannot copy) is compiled again as a host op, until
     * none fails; each retry forces one more node, so there are at most as
     * many as nodes.  A move is exact either way (int8 codes copied), so the
     * golden reference needs no change. */
    hostfb fb = {calloc((size_t)qg->n_nodes + 1, sizeof(bool)), calloc((size_t)qg->n_nodes + 1, sizeof(char *))};
    if (!fb.force || !fb.why) {
        free(fb.force), free(fb.why);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    bool no_lanes = false;
    for (;;) {
        int fail_node = -1;
        rc = compile_easynpu(qg, arch, o, prog, rep, err, no_lanes, &fb, &fail_node);
        bool retry = false;
        if (rc == ENPU_E_UNSUPPORTED && fail_node >= 0 && fail_node < qg->n_nodes && !fb.force[fail_node] &&
            qg->nodes[fail_node].q && qg->nodes[fail_node].q->kind == ENPU_Q_MOVE) {
            fb.force[fail_node] = true;
            if (!(fb.why[fail_node] = cc_dupf("the NPU cannot: %s", err->msg))) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            retry = true;
        } else if (rc == ENPU_E_NOFIT && arch->lane_groups_max > 1 && !no_lanes) {
            /* lane groups replicate weights (docs/microarch.md §16): a model
             * that fits without them is compiled without them */
            no_lanes = retry = true;
        }
        if (!retry) break;
        enpu_err_clear(err);
        enpu_program_free(prog);
        enpu_program_init(prog, arch);
        if (rep) memset(rep, 0, sizeof *rep);
    }
    for (int i = 0; i < qg->n_nodes; i++) free(fb.why[i]);
    free(fb.force), free(fb.why);
    return rc;
}

static int compile_easynpu(const enpu_graph *qg, const enpu_arch *arch, const enpu_compile_opts *o,
                           enpu_program *prog, enpu_compile_report *rep, enpu_err *err, bool no_lanes,
                           const hostfb *fb, int *fail_node) {
    int rc;
    cc c;
    memset(&c, 0, sizeof c);
    c.g = qg, c.a = arch, c.err = err, c.P = (int)arch->pes;
    c.no_lanes = no_lanes;
    c.force_host = fb->force, c.force_why = fb->why, c.fail_node = -1;
    if (o) c.o = *o;
    else enpu_compile_opts_default(&c.o);
    /* the compile's own cache when the caller shares none: row strips and
     * the program model meet the same chains again */
    enpu_compile_cache *own = NULL;
    c.cache = c.o.cache;
    if (!c.cache && c.o.search == ENPU_SEARCH_FAST && !(c.cache = own = enpu_compile_cache_new(0)))
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
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
    if (arch->dram_bytes == 0 && c.norder + 1 > arch->itcm_bytes / ENPU_INSTR_BYTES) {
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
    rc = cc_memplan(&c, &wimg, &wlen, &simg, &slen);
    if (rc == ENPU_E_NOFIT && arch->dram_bytes > 0) {
        /* it does not fit on chip: stream through DRAM */
        if ((rc = cc_note(&c, "off-chip plan: on chip alone, %s", err->msg))) goto out;
        enpu_err_clear(err);
        free(wimg), free(simg);
        wimg = simg = NULL, wlen = slen = 0;
        rc = cc_offchip(&c, &wimg, &wlen, &simg, &slen);
    } else if (!rc) {
        rc = cc_items_onchip(&c);
    }
    if (rc) goto out;
    if ((rc = cc_schedule(&c))) goto out;
    if ((rc = cc_emit(&c, prog, wimg, wlen, simg, slen))) goto out;
    rc = enpu_program_validate(prog, err);
    if (rc) {
        enpu_err_prefix(err, "internal error: the compiled program does not validate");
        goto out;
    }
    if (rep && (rc = build_report(&c, prog, rep))) goto out;
out:
    *fail_node = rc ? c.fail_node : -1;
    free(wimg);
    free(simg);
    cc_free(&c);
    enpu_compile_cache_free(own);
    if (rc && rep) enpu_compile_report_free(rep);
    return rc;
}
