/* The model layer table printed by `easynpu inspect`: one row per node with
 * shapes, parameters and MACs, as text or JSON. */
#ifndef ENPU_MODEL_TABLE_H
#define ENPU_MODEL_TABLE_H

#include <stdio.h>

#include "easynpu/ir.h"

/* Writes the table for g to f. */
void enpu_report_model_table(FILE *f, const enpu_graph *g);
/* Writes the table as JSON to path (atomically): {"model", "layers": [...],
 * "total_macs", "total_params"}. */
int enpu_report_model_json(const char *path, const char *model, const enpu_graph *g, enpu_err *err);
/* A short "k3x3 s1x2 p1,1,1,1 d1x1 g1" description of a node's attributes. */
void enpu_node_params_str(const enpu_node *n, char *buf, size_t len);
/* Middle-truncates s into buf so it fits `width` columns. */
const char *enpu_fit(const char *s, int width, char *buf, size_t len);

#endif
