/* Batches as one program (cli/pipeline.h), for run and compile: on the row-stationary
 * engine a batch of N images compiles into one program whose rs_conv run n
 * images per pass (docs/rowstat.md "Batches"); the model is loaded again at
 * batch N and quantized with each calibration sample repeated N times along
 * dimension 0, so that its scales are those of the one-image model. */
#include <stdlib.h>
#include <string.h>

#include "cli/pipeline.h"
#include "easynpu/quant.h"

bool enpu_model_batched_arch(const enpu_arch *a, int64_t batch) { return batch > 1 && a->engine == ENPU_ENGINE_ROWSTAT; }

/* Sample buffer src repeated batch times along dimension 0 into *dst. */
static int repeat_sample(const enpu_buf *src, int64_t batch, enpu_buf *dst, enpu_err *err) {
    if (src->rank < 1 || src->dims[0] != 1)
        return enpu_fail(err, ENPU_E_INVALID, "calibration input '%s': a batch needs samples of one image "
                         "(dimension 0 of 1)", src->name ? src->name : "");
    int64_t dims[ENPU_MAX_RANK];
    memcpy(dims, src->dims, sizeof dims);
    dims[0] = batch;
    int rc = enpu_buf_alloc(dst, src->dtype, src->rank, dims, err);
    if (rc) return rc;
    size_t bytes = (size_t)enpu_buf_numel(src) * enpu_dtype_size(src->dtype);
    for (int64_t k = 0; k < batch; k++)
        if (bytes) memcpy((char *)dst->data + (size_t)k * bytes, src->data, bytes);
    return 0;
}

int enpu_model_load_batch(const enpu_model *m, const char *path, enpu_cli_binds *shapes, int64_t batch, enpu_model *out,
                    enpu_err *err) {
    memset(out, 0, sizeof *out);
    int rc = enpu_cli_onnx_load(path, shapes, &out->g, err);
    if (rc) return rc;
    /* every output image by image, as the one-image model's N runs give them
     * (a Reshape to [1, ...] would mix the images) */
    for (int k = 0; k < out->g->n_outputs; k++) {
        const enpu_tensor *t = &out->g->tensors[out->g->outputs[k]];
        if (t->rank < 1 || t->dims[0] != batch)
            return enpu_fail(err, ENPU_E_UNSUPPORTED, "%s: output '%s' has dimension 0 of %lld, not the batch's %lld",
                             path, t->name, t->rank < 1 ? 0LL : (long long)t->dims[0], (long long)batch);
    }
    out->path = m->path, out->bits = m->bits, out->pow2 = m->pow2;
    int nb = m->n_calib * m->g->n_inputs;
    out->calib = calloc((size_t)(nb ? nb : 1), sizeof *out->calib);
    if (!out->calib) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    out->n_calib = m->n_calib; /* the buffers not filled stay empty for enpu_model_free */
    for (int i = 0; i < nb && !rc; i++) rc = repeat_sample(&m->calib[i], batch, &out->calib[i], err);
    return rc;
}
