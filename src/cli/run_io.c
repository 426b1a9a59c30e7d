/* easynpu run's TFLite inputs and outputs, and batches (cli/run.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run.h"
#include "easynpu/file.h"
#include "easynpu/tflite.h"

/* Input i of a .tflite model from `path` into IR order (*out malloc'd):
 * .raw holds the int8 values in TFLite's (NHWC) order; a .npy/.pb has
 * TFLite's shape, int8 values as they are, float ones quantized with
 * TFLite's rule (enpu_tfl_quantize). */
int run_tflite_input(const enpu_graph *qg, int i, const char *path, int8_t **out,
                        enpu_err *err) {
    const enpu_tensor *t = &qg->tensors[qg->inputs[i]];
    int64_t n = enpu_tensor_numel(t), dims[ENPU_MAX_RANK];
    enpu_tflite_dims(t, dims);
    int8_t *tfl = malloc((size_t)(n ? n : 1));
    *out = malloc((size_t)(n ? n : 1));
    int rc = 0;
    if (!tfl || !*out) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (!rc && strcmp(enpu_path_ext(path), ".raw") == 0) {
        uint8_t *buf = NULL;
        size_t len = 0;
        rc = enpu_file_read(path, (size_t)n + 1, &buf, &len, err);
        if (!rc && len != (size_t)n)
            rc = enpu_fail(err, ENPU_E_INVALID,
                           "%s: %zu bytes, input '%s' takes %lld int8 values", path, len, t->name,
                           (long long)n);
        if (!rc) memcpy(tfl, buf, (size_t)n);
        free(buf);
    } else if (!rc) {
        enpu_buf b;
        rc = enpu_tensor_read(path, &b, err);
        bool same = !rc && b.rank == t->rank;
        for (int d = 0; same && d < t->rank; d++) same = b.dims[d] == dims[d];
        if (!rc && !same) {
            char want[160];
            int k = 0;
            for (int d = 0; d < t->rank && k < (int)sizeof want - 24; d++)
                k += snprintf(want + k, sizeof want - (size_t)k, d ? "x%lld" : "%lld", (long long)dims[d]);
            rc = enpu_fail(err, ENPU_E_INVALID, "%s: input '%s' has TFLite shape %s", path,
                           t->name, t->rank ? want : "[]");
        }
        if (!rc && b.dtype == ENPU_DT_INT8) {
            memcpy(tfl, b.data, (size_t)n);
        } else if (!rc) {
            rc = enpu_buf_to_f32(&b, err);
            const float *v = b.data;
            for (int64_t e = 0; e < n && !rc; e++)
                tfl[e] = (int8_t)enpu_tfl_quantize(v[e], t->quant->scale[0], t->quant->zero_point[0]);
        }
        enpu_buf_free(&b);
    }
    if (!rc) enpu_tflite_to_ir(t, tfl, *out);
    free(tfl);
    return rc;
}

/* Output i of a .tflite run: int8 in TFLite's order, printed and written
 * (.raw: the bytes; else .npy/.pb with TFLite's shape). */
int run_tflite_output(FILE *text, const enpu_graph *qg, int i, const enpu_buf *raw,
                         const char *path, enpu_err *err) {
    const enpu_tensor *t = &qg->tensors[qg->outputs[i]];
    int64_t n = enpu_tensor_numel(t);
    if (!raw || !raw->data || enpu_buf_numel(raw) != n) return 0;
    enpu_buf b;
    int64_t dims[ENPU_MAX_RANK];
    enpu_tflite_dims(t, dims);
    int rc = enpu_buf_alloc(&b, ENPU_DT_INT8, t->rank, dims, err);
    if (rc) return rc;
    enpu_tflite_from_ir(t, raw->data, b.data);
    if (!path) {
        const int8_t *v = b.data;
        fprintf(text, "output %s int8 (TFLite order):", t->name);
        for (int64_t e = 0; e < n && e < 32; e++) fprintf(text, " %d", v[e]);
        fprintf(text, n > 32 ? " ...\n" : "\n");
    } else if (strcmp(enpu_path_ext(path), ".raw") == 0) {
        rc = enpu_file_write_atomic(path, b.data, (size_t)n, err);
    } else {
        rc = enpu_tensor_write(path, &b, err);
    }
    enpu_buf_free(&b);
    return rc;
}

/* b (float32 or any numeric dtype) grows by the images of `more` along
 * dimension 0. */
int run_append_buf(enpu_buf *b, const enpu_buf *more, enpu_err *err) {
    if (b->dtype != more->dtype || b->rank < 1 || b->rank != more->rank)
        return enpu_fail(err, ENPU_E_INVALID, "output '%s': images of different shapes",
                         b->name ? b->name : "");
    size_t es = enpu_dtype_size(b->dtype);
    int64_t n0 = enpu_buf_numel(b), n1 = enpu_buf_numel(more);
    void *d = realloc(b->data, (size_t)(n0 + n1) * es);
    if (!d) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    memcpy((char *)d + (size_t)n0 * es, more->data, (size_t)n1 * es);
    b->data = d;
    b->dims[0] += more->dims[0];
    return 0;
}

/* A batch of N images: each input file holds N along dimension 0; *out gets
 * N * n_in buffers, image k's inputs from k * n_in, each of batch 1. */
int run_split_batch(const enpu_buf *files, int n_in, int64_t batch, const char *const *names,
                       enpu_buf **out, enpu_err *err) {
    enpu_buf *v = calloc((size_t)(batch * n_in), sizeof *v);
    if (!v) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    *out = v;
    for (int i = 0; i < n_in; i++) {
        const enpu_buf *f = &files[i];
        if (f->rank < 1 || f->dims[0] != batch)
            return enpu_fail(err, ENPU_E_INVALID, "%s: a batch of %lld images needs dimension 0 of "
                             "%lld, the file has %lld", names[i], (long long)batch, (long long)batch,
                             f->rank < 1 ? 0LL : (long long)f->dims[0]);
        int64_t dims[ENPU_MAX_RANK];
        memcpy(dims, f->dims, sizeof dims);
        dims[0] = 1;
        size_t bytes = (size_t)(enpu_buf_numel(f) / batch) * enpu_dtype_size(f->dtype);
        for (int64_t k = 0; k < batch; k++) {
            int rc = enpu_buf_alloc(&v[k * n_in + i], f->dtype, f->rank, dims, err);
            if (rc) return rc;
            if (bytes) memcpy(v[k * n_in + i].data, (const char *)f->data + (size_t)k * bytes, bytes);
        }
    }
    return 0;
}

