#include "cli/pipeline.h"

#include "cli/cli.h"
#include "easynpu/compiler.h"

#include <string.h>

#include "easynpu/file.h"
#include "easynpu/onnx.h"
#include "easynpu/tflite.h"

int enpu_model_load(enpu_model *m, const char *path, const char *calib, enpu_cli_binds *binds,
                    enpu_err *err) {
    memset(m, 0, sizeof *m);
    m->path = path;
    m->is_qjson = strcmp(enpu_path_ext(path), ".qjson") == 0;
    m->is_tflite = strcmp(enpu_path_ext(path), ".tflite") == 0;
    if (m->is_tflite) {
        if (calib)
            return enpu_fail(err, ENPU_E_USAGE,
                             "--calib is for an .onnx model (%s carries its own int8 parameters)",
                             path);
        if (binds && binds->n)
            return enpu_fail(err, ENPU_E_USAGE, "--bind is for an .onnx model, not %s", path);
        return enpu_tflite_load(path, &m->tfl, err);
    }
    if (m->is_qjson) {
        if (calib)
            return enpu_fail(err, ENPU_E_USAGE,
                             "--calib is for an .onnx model (%s is already quantized)", path);
        if (binds && binds->n)
            return enpu_fail(err, ENPU_E_USAGE,
                             "--bind is for an .onnx model (%s is already quantized)", path);
        return 0;
    }
    enpu_cli_binds none = {0};
    int rc = enpu_cli_onnx_load(path, binds ? binds : &none, &m->g, err);
    if (!rc && calib) rc = enpu_calib_load(m->g, calib, &m->calib, &m->n_calib, err);
    return rc;
}

void enpu_model_free(enpu_model *m) {
    enpu_calib_free(m->calib, m->n_calib * (m->g ? m->g->n_inputs : 0));
    enpu_graph_free(m->g);
    enpu_graph_free(m->tfl);
    memset(m, 0, sizeof *m);
}

int enpu_model_quantize(const enpu_model *m, const enpu_arch *arch, bool quiet, enpu_graph **qg,
                        enpu_qreport *rep, enpu_err *err) {
    *qg = NULL;
    if (m->is_qjson) return enpu_qgraph_load(m->path, qg, err);
    if (m->is_tflite) return enpu_tflite_load(m->path, qg, err);
    enpu_quant_opts qo;
    enpu_compile_quant_opts(arch, &qo);
    qo.bits = m->bits ? m->bits : 8;
    qo.pow2 = m->pow2;
    qo.quiet = quiet;
    int rc = enpu_quantize_graph(m->g, m->calib, m->n_calib, &qo, qg, rep, err);
    return rc ? enpu_err_prefix(err, "%s", m->path) : 0;
}

int enpu_model_fit_requant(const enpu_graph *qg, enpu_arch *arch, FILE *note, enpu_err *err) {
    if (qg->requant == (int)arch->requant) return 0;
    if (qg->requant != ENPU_REQUANT_TFLITE)
        return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                         "arch '%s' has requant \"%s\"; the quantizer's parameters are for "
                         "requant \"%s\"",
                         arch->name, enpu_requant_name(arch->requant),
                         enpu_requant_name(qg->requant));
    arch->requant = ENPU_REQUANT_TFLITE;
    if (note)
        fprintf(note, "note: arch '%s' runs this model with requant \"tflite\" (TFLite's integer "
                "rules, docs/tflite.md)\n", arch->name);
    return 0;
}

int enpu_model_bits_arg(enpu_model *m, const char *cmd, const char *arg) {
    if (strcmp(arg, "8") == 0) m->bits = 8;
    else if (strcmp(arg, "16") == 0) m->bits = 16;
    else return enpu_cli_usage(cmd, "--bits '%s': 8 or 16 expected", arg);
    return 0;
}
