/* Shared between the quantizer's files (calib.c, quantize.c, qreport.c,
 * qgraph_io.c); not part of the public API.  The golden reference's rules
 * the quantizer also follows are in ref/qrules.h. */
#ifndef ENPU_QUANT_QINTERNAL_H
#define ENPU_QUANT_QINTERNAL_H

#include "easynpu/quant.h"
#include "ref/qrules.h"

/* Observed real range of one activation tensor. */
typedef struct enpu_qrange {
    float lo, hi;
    bool seen; /* computed on at least one sample (with a finite value) */
} enpu_qrange;

/* Runs float graph g on every sample and fills r[t] for every activation
 * tensor t (graph inputs and float node outputs): min/max, or the
 * percentile range of a 2048-bin histogram (a second pass) when
 * o->method == ENPU_CALIB_PERCENTILE.  r has g->n_tensors entries. */
int enpu_calib_ranges(const enpu_graph *g, const enpu_buf *inputs, int n_samples,
                      const enpu_quant_opts *o, enpu_qrange *r, enpu_err *err);

/* Creates r->layers from the nodes of qg (names, ops, scales, zero points,
 * table errors, accumulator ranges); SQNR and errors are NAN until
 * enpu_qreport_eval. */
int enpu_qreport_init_layers(const enpu_graph *qg, enpu_qreport *r, enpu_err *err);
/* Adds a graph-level note (printf-style). */
int enpu_qreport_add_note(enpu_qreport *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
