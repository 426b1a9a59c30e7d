/* The multicast network of the note (docs/rowstat.md "The multicast
 * network"): the global buffer drives a bus down a column of row nodes, one
 * per PE row; each row node drives a bus along its row of column nodes, one
 * per PE.  Every node holds a configurable ID and passes a value only when
 * the tag the value carries equals it: a row node compares the row tag, a
 * column node the column tag.  One tag thus reaches a whole row, a diagonal,
 * or one PE, as the controller sets the IDs.  Each level is a register
 * stage: a value read from the global buffer in cycle t passes the row
 * nodes in cycle t + 1 and is in its PEs in cycle t + 2. */
#include <stdlib.h>
#include <string.h>

#include "sim/rowstat/rs_sim.h"

int rs_noc_init(rs_noc *n, int rows, int cols, int per_cycle, enpu_err *err) {
    memset(n, 0, sizeof *n);
    n->rows = rows, n->cols = cols, n->cap = per_cycle;
    n->row_id = malloc((size_t)rows * sizeof *n->row_id);
    n->col_id = malloc((size_t)rows * (size_t)cols * sizeof *n->col_id);
    n->stage[0] = malloc((size_t)per_cycle * sizeof *n->stage[0]);
    n->stage[1] = malloc((size_t)per_cycle * sizeof *n->stage[1]);
    n->row_pass = malloc((size_t)per_cycle * (size_t)rows * sizeof *n->row_pass);
    if (!n->row_id || !n->col_id || !n->stage[0] || !n->stage[1] || !n->row_pass) {
        rs_noc_free(n);
        return enpu_fail(err, ENPU_E_NOMEM, "simulator: out of memory for the network nodes");
    }
    rs_noc_clear(n);
    return 0;
}

void rs_noc_free(rs_noc *n) {
    free(n->row_id);
    free(n->col_id);
    free(n->stage[0]);
    free(n->stage[1]);
    free(n->row_pass);
    memset(n, 0, sizeof *n);
}

void rs_noc_clear(rs_noc *n) {
    for (int r = 0; r < n->rows; r++) n->row_id[r] = -1;
    for (int i = 0; i < n->rows * n->cols; i++) n->col_id[i] = -1;
    n->n_stage[0] = n->n_stage[1] = 0;
}

bool rs_noc_empty(const rs_noc *n) { return n->n_stage[0] == 0 && n->n_stage[1] == 0; }

void rs_noc_step(rs_noc *n, int64_t t, const rs_packet *sent, int n_sent,
                 void (*deliver)(void *ctx, int row, int col, int32_t value, int64_t at), void *ctx,
                 uint64_t *passed) {
    /* the column nodes of the rows a value passed */
    for (int i = 0; i < n->n_stage[1]; i++) {
        const rs_packet *pk = &n->stage[1][i];
        for (int r = 0; r < n->rows; r++) {
            if (!n->row_pass[i * n->rows + r]) continue;
            const int32_t *ids = n->col_id + r * n->cols;
            for (int c = 0; c < n->cols; c++)
                if (ids[c] == pk->col_tag) deliver(ctx, r, c, pk->value, t);
        }
    }
    /* the row nodes */
    for (int i = 0; i < n->n_stage[0]; i++) {
        n->stage[1][i] = n->stage[0][i];
        for (int r = 0; r < n->rows; r++) {
            bool pass = n->row_id[r] == n->stage[0][i].row_tag;
            n->row_pass[i * n->rows + r] = pass;
            *passed += pass;
        }
    }
    n->n_stage[1] = n->n_stage[0];
    /* the global buffer's bus */
    for (int i = 0; i < n_sent; i++) n->stage[0][i] = sent[i];
    n->n_stage[0] = n_sent;
}
