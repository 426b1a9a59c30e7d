/* Hardware fusion: links layers into chains (docs/isa.md "Fused chains").
 *
 * A chain is a head that computes in the PE array (conv, conv_relu, fc,
 * dwconv, avgpool, bn) followed by members that run in its fuse loop on the
 * output tile still in the psum file: at most one bn, one activation (act),
 * one tensor add or mul (its second operand read from the skip DTCM: a
 * shortcut spanning one layer added inside the PE), and last a copy layer
 * that keeps whole words (reshape at store: the final words are written at
 * remapped addresses).  A member is fused only
 * when it is the one consumer of the previous stage's output and that output
 * is not needed anywhere else (not a graph output, not read by a host op),
 * so the intermediate tensor never needs to be stored.  Every stage still
 * requantizes exactly as its quantized node does (numerics.h), so fusion
 * changes no bit: it saves the store and the reload of the intermediate map.
 *
 * Fusion also fixes the program order: a member moves to right after its
 * predecessor (legal because all its other inputs are computed earlier). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

static bool can_head(int op) {
    return op == ENPU_OPC_CONV || op == ENPU_OPC_CONV_RELU || op == ENPU_OPC_FC ||
           op == ENPU_OPC_DWCONV || op == ENPU_OPC_AVGPOOL || op == ENPU_OPC_BN;
}

/* The layer reading tensor t as its in1, if t has exactly one consumer in
 * the graph and that consumer became one layer; else -1. */
static int sole_reader(const cc *c, int t) {
    const enpu_tensor *tt = &c->g->tensors[t];
    if (tt->flags & ENPU_T_OUTPUT) return -1;
    int cnt = 0;
    enpu_graph_consumer(c->g, t, &cnt);
    if (cnt != 1) return -1;
    int found = -1;
    for (int i = 0; i < c->nl; i++) {
        const cc_layer *l = &c->L[i];
        if (l->in == t || l->in2 == t) {
            if (found >= 0) return -1;
            found = i;
        }
    }
    if (found < 0) return -1;
    const cc_layer *m = &c->L[found];
    if (m->in != t || m->in2 == t || m->opcode == CC_HOST) return -1;
    return found;
}

/* How many places read storage s: layers (ifmap or op2), host ops and
 * graph outputs through any view. */
static int store_readers(const cc *c, int s, int *only_layer) {
    int n = 0;
    *only_layer = -1;
    for (int i = 0; i < c->nl; i++) {
        const cc_layer *l = &c->L[i];
        if (l->opcode == CC_HOST) {
            const enpu_node *nd = &c->g->nodes[l->node];
            for (int k = 0; k < nd->n_in; k++)
                if (nd->in[k] >= 0 && c->tv[nd->in[k]].store == s) n++;
            continue;
        }
        if (l->in_store == s || l->op2_store == s) n++, *only_layer = i;
    }
    for (int k = 0; k < c->g->n_outputs; k++)
        if (c->tv[c->g->outputs[k]].store == s) n++;
    return n;
}

/* A copy layer reading cur's output storage (and nothing else does) that
 * keeps whole words -- the reshape-at-store member; else -1. */
static int copy_reader(const cc *c, const cc_layer *cur) {
    int only;
    if (cur->out_store < 0 || store_readers(c, cur->out_store, &only) != 1 || only < 0) return -1;
    const cc_layer *m = &c->L[only];
    if (m->opcode != ENPU_OPC_RESHAPE || m->in_store != cur->out_store || m->op2_store >= 0) return -1;
    const enpu_instr *in = &m->ins;
    if (in->ci != in->co || (in->perm != ENPU_PERM_HWC && in->perm != ENPU_PERM_WHC)) return -1;
    if (in->hi != cur->ins.ho || in->wi != cur->ins.wo || in->ci != cur->ins.co) return -1;
    return only;
}

/* Position of layer li in the program order. */
static int pos_of(const cc *c, int li) {
    for (int k = 0; k < c->norder; k++)
        if (c->order[k] == li) return k;
    return -1;
}

int cc_fuse(cc *c) {
    c->order = malloc((size_t)(c->nl > 0 ? c->nl : 1) * sizeof *c->order);
    if (!c->order) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
    c->norder = c->nl;
    for (int i = 0; i < c->nl; i++) c->order[i] = i;
    if (c->o.no_fuse) return 0;
    for (int k = 0; k < c->norder; k++) {
        int h = c->order[k];
        cc_layer *head = &c->L[h];
        if (head->head != h || !can_head(head->opcode)) continue;
        int nbn = head->opcode == ENPU_OPC_BN, nact = 0, nel = 0, len = 1;
        int cur = h;
        for (;;) {
            cc_layer *cl = &c->L[cur];
            if (cl->out < 0 || cl->out_store < 0 || c->S[cl->out_store].into >= 0) break;
            int m = sole_reader(c, cl->out);
            bool at_store = false;
            if (m < 0 || c->L[m].opcode == ENPU_OPC_RESHAPE) {
                m = copy_reader(c, cl);
                at_store = m >= 0;
            }
            if (m < 0) break;
            cc_layer *ml = &c->L[m];
            int op = ml->opcode;
            bool ok = false;
            if (at_store) ok = true; /* a reshape ends the chain */
            else if (op == ENPU_OPC_BN && !nbn) ok = true, nbn = 1;
            else if (op == ENPU_OPC_ACT && !nact) ok = true, nact = 1;
            else if ((op == ENPU_OPC_ADD || op == ENPU_OPC_MUL) && !nel) {
                /* its second operand must be computed before the chain */
                int s2 = ml->op2_store;
                int def = s2 >= 0 ? c->S[s2].def : -1;
                ok = def < 0 || pos_of(c, def) < pos_of(c, h);
                if (ok) nel = 1;
            }
            if (!ok || ml->ins.hi != cl->ins.ho || ml->ins.wi != cl->ins.wo || ml->ins.ci != cl->ins.co)
                break;
            /* link, and move m right after cur in the program order */
            int pm = pos_of(c, m), pc = pos_of(c, cur);
            if (pm < pc) break;
            memmove(&c->order[pc + 2], &c->order[pc + 1], (size_t)(pm - pc - 1) * sizeof *c->order);
            c->order[pc + 1] = m;
            cl->next = m;
            ml->head = h;
            /* the intermediate tensor is not stored */
            c->S[cl->out_store].def = -3;
            cl->out_store = -1;
            ml->in_store = -1;
            cur = m;
            if (at_store) {
                /* the copy became an address remapping at store */
                for (int k2 = 0; k2 < c->nmv; k2++) {
                    if (strcmp(c->mv[k2].name, ml->src) != 0) continue;
                    size_t n = strlen(head->name) + 96;
                    char *how = malloc(n);
                    if (!how) return enpu_fail(c->err, ENPU_E_NOMEM, "out of memory");
                    snprintf(how, n, "reshape at store: fused into the chain of '%s' (its words are "
                             "stored at remapped addresses)", head->name);
                    free(c->mv[k2].how);
                    c->mv[k2].how = how;
                    c->mv[k2].kind = ENPU_MOVE_REMAP;
                }
                size_t n = strlen(ml->note ? ml->note : "") + 40;
                char *nn = malloc(n);
                if (nn) {
                    snprintf(nn, n, "%s, fused as a reshape at store", ml->note ? ml->note : "");
                    free(ml->note);
                    ml->note = nn;
                }
                break;
            }
            if (++len >= 8) break;
        }
    }
    return 0;
}
