#include "cli/audio_in.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/quant.h"
#include "easynpu/tflite.h"

int enpu_cli_audio_open(enpu_cli_audio *a, const char *wav, const char *features,
                        const char *labels, FILE *text, enpu_err *err) {
    memset(a, 0, sizeof *a);
    a->path = wav;
    a->fe = features ? enpu_frontend_find(features) : enpu_frontend_default();
    if (!a->fe)
        return enpu_fail(err, ENPU_E_USAGE, "--features '%s': no such front end (there are: %s)",
                         features, enpu_frontend_names());
    enpu_audio raw;
    int rc = enpu_wav_read(wav, &raw, err);
    if (rc) return rc;
    a->file_rate = raw.rate;
    a->file_samples = raw.n;
    if (raw.rate != a->fe->sample_rate) {
        rc = enpu_audio_resample(&raw, a->fe->sample_rate, &a->audio, err);
        enpu_audio_free(&raw);
        if (rc) return enpu_err_prefix(err, "%s", wav);
        if (text)
            fprintf(text, "note: %s is %d Hz; resampled to the front end's %d Hz (libsamplerate, "
                    "best sinc)\n", wav, a->file_rate, a->fe->sample_rate);
    } else {
        a->audio = raw;
    }
    if (labels && (rc = enpu_labels_read(labels, &a->names, &a->n_names, err))) return rc;
    return enpu_frontend_new(a->fe, &a->f, err);
}

void enpu_cli_audio_close(enpu_cli_audio *a) {
    enpu_audio_free(&a->audio);
    enpu_frontend_free(a->f);
    free(a->names);
    free(a->feat);
    memset(a, 0, sizeof *a);
}

static void shape_str(const int64_t *dims, int rank, char *buf, size_t n) {
    int k = 0;
    buf[0] = 0;
    for (int d = 0; d < rank && k < (int)n - 24; d++)
        k += snprintf(buf + k, n - (size_t)k, d ? "x%lld" : "%lld", (long long)dims[d]);
}

int enpu_cli_audio_fits(const enpu_cli_audio *a, const char *model, const enpu_graph *tfl,
                        const enpu_graph *g, enpu_err *err) {
    const enpu_graph *m = tfl ? tfl : g;
    if (!m)
        return enpu_fail(err, ENPU_E_USAGE, "--wav takes a .tflite or .onnx model, not %s", model);
    if (m->n_inputs != 1)
        return enpu_fail(err, ENPU_E_INCOMPATIBLE, "%s: --wav feeds one input, the model has %d",
                         model, m->n_inputs);
    const enpu_tensor *t = &m->tensors[m->inputs[0]];
    int64_t dims[ENPU_MAX_RANK];
    if (tfl) enpu_tflite_dims(t, dims);
    else memcpy(dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    /* the dimensions other than 1, in order: frames, then coefficients */
    int64_t big[ENPU_MAX_RANK];
    int nb = 0;
    for (int d = 0; d < t->rank; d++)
        if (dims[d] != 1) big[nb++] = dims[d];
    bool ok = nb == 2 && big[0] == a->fe->n_frames && big[1] == a->fe->n_coeffs;
    if (ok && tfl && t->dtype != ENPU_DT_INT8) ok = false;
    if (!ok) {
        char s[160];
        shape_str(dims, t->rank, s, sizeof s);
        return enpu_fail(err, ENPU_E_INCOMPATIBLE, "%s: input '%s' (%s%s) does not take front end "
                         "'%s''s %d frames x %d coefficients", model, t->name, s,
                         tfl ? ", TFLite order" : "", a->fe->name, a->fe->n_frames,
                         a->fe->n_coeffs);
    }
    return 0;
}

int enpu_cli_audio_input_i8(const enpu_graph *tfl, const double *feat, int8_t **q,
                            int64_t *clamped, enpu_err *err) {
    const enpu_tensor *t = &tfl->tensors[tfl->inputs[0]];
    int64_t n = enpu_tensor_numel(t);
    int8_t *tmp = malloc((size_t)n);
    *q = malloc((size_t)n);
    if (!tmp || !*q) {
        free(tmp);
        free(*q);
        *q = NULL;
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    *clamped = enpu_features_quantize(feat, n, t->quant->scale[0], t->quant->zero_point[0], tmp);
    enpu_tflite_to_ir(t, tmp, *q);
    free(tmp);
    return 0;
}

const char *enpu_cli_audio_label(const enpu_cli_audio *a, int i, int n, char buf[16]) {
    if (a->names && i < a->n_names) return a->names[i];
    if (!a->names && n == a->fe->n_labels && i < n) return a->fe->labels[i];
    snprintf(buf, 16, "class %d", i);
    return buf;
}

void enpu_cli_audio_print_top(FILE *text, const enpu_cli_audio *a, const enpu_buf *out) {
    if (!enpu_is_class_vector(out->rank, out->dims) || out->dtype != ENPU_DT_FLOAT32) return;
    int n = (int)enpu_buf_numel(out);
    const float *v = out->data;
    int order[ENPU_FRONTEND_MAX_LABELS] = {0};
    int k = n < ENPU_FRONTEND_MAX_LABELS ? n : ENPU_FRONTEND_MAX_LABELS;
    if (k < 1) return;
    for (int i = 0; i < k; i++) order[i] = i;
    /* stable: equal scores keep the class order */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && v[order[j]] > v[order[j - 1]]; j--) {
            int s = order[j];
            order[j] = order[j - 1];
            order[j - 1] = s;
        }
    char b[16];
    bool tie = k > 1 && v[order[0]] == v[order[1]];
    fprintf(text, "heard: %s %.4f%s", enpu_cli_audio_label(a, order[0], n, b), v[order[0]],
            tie ? " (a tie)" : "");
    for (int i = 1; i < k && i < 4; i++)
        fprintf(text, "%s%s %.4f", i == 1 ? " (then: " : ", ", enpu_cli_audio_label(a, order[i], n, b),
                v[order[i]]);
    fprintf(text, k > 1 ? ")\n" : "\n");
}

int enpu_cli_audio_model_input(enpu_cli_audio *a, const char *model, const enpu_graph *tfl,
                               const enpu_graph *g, int8_t **q, enpu_buf *buf, FILE *text,
                               enpu_err *err) {
    int rc = enpu_cli_audio_fits(a, model, tfl, g, err);
    if (rc) return rc;
    const enpu_frontend_desc *fe = a->fe;
    int64_t nf = (int64_t)fe->n_frames * fe->n_coeffs;
    a->feat = malloc((size_t)nf * sizeof(double));
    if (!a->feat) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    enpu_frontend_features(a->f, a->audio.x, a->audio.n, a->feat);
    double secs = (double)a->audio.n / fe->sample_rate, clip = (double)fe->clip_samples / fe->sample_rate;
    if (text && a->audio.n > fe->clip_samples)
        fprintf(text, "note: %s is %.3f s; its first %.3f s are the model's input ('easynpu listen' "
                "scans all of it)\n", a->path, secs, clip);
    else if (text && a->audio.n < fe->clip_samples)
        fprintf(text, "note: %s is %.3f s; zero-padded to %.3f s as the front end pads\n", a->path,
                secs, clip);
    if (tfl) {
        rc = enpu_cli_audio_input_i8(tfl, a->feat, q, &a->clamped, err);
        if (!rc && text && a->clamped)
            fprintf(text, "note: %lld of the %lld int8 features were clamped to -128..127\n",
                    (long long)a->clamped, (long long)nf);
        return rc;
    }
    const enpu_tensor *t = &g->tensors[g->inputs[0]];
    rc = enpu_buf_alloc(buf, ENPU_DT_FLOAT32, t->rank, t->dims, err);
    if (rc) return rc;
    float *v = buf->data;
    for (int64_t i = 0; i < nf; i++) v[i] = (float)a->feat[i];
    return 0;
}

static void frontend_cost(const enpu_cli_audio *a, const enpu_arch *arch, enpu_frontend_cost *c) {
    /* one clip: every frame, one normalization, the peak over the clip */
    int64_t have = a->audio.n < a->fe->clip_samples ? a->audio.n : a->fe->clip_samples;
    enpu_frontend_host_cost(a->fe, arch, a->fe->n_frames, 1, have, c);
}

void enpu_cli_audio_report(FILE *text, const enpu_cli_audio *a, const enpu_arch *arch,
                           const enpu_sim_result *res) {
    if (res->n_outputs > 0) enpu_cli_audio_print_top(text, a, &res->outputs[0]);
    enpu_frontend_cost c;
    frontend_cost(a, arch, &c);
    uint64_t total = res->total_cycles + c.npu_cycles;
    fprintf(text, "front end '%s' on the host CPU (%lld MHz): %llu host cycles = %.1f us = %llu NPU "
            "cycles\n", a->fe->name, (long long)arch->hostcpu_mhz, (unsigned long long)c.host_cycles,
            c.time_us, (unsigned long long)c.npu_cycles);
    fprintf(text, "with the front end: %llu cycles = %.3f us at %g MHz (front end %.1f%%, NPU run "
            "%.1f%%)\n", (unsigned long long)total, (double)total / arch->clock_mhz, arch->clock_mhz,
            total ? 100.0 * (double)c.npu_cycles / (double)total : 0.0,
            total ? 100.0 * (double)res->total_cycles / (double)total : 0.0);
}

json_t *enpu_cli_audio_json(const enpu_cli_audio *a, const enpu_arch *arch,
                            const enpu_sim_result *res) {
    enpu_frontend_cost c;
    frontend_cost(a, arch, &c);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(a->fe->name));
    json_object_set_new(o, "wav", json_string(a->path));
    json_object_set_new(o, "wav_rate", json_integer(a->file_rate));
    json_object_set_new(o, "host_cycles", json_integer((json_int_t)c.host_cycles));
    json_object_set_new(o, "npu_cycles", json_integer((json_int_t)c.npu_cycles));
    json_object_set_new(o, "total_cycles_with_frontend",
                        json_integer((json_int_t)(res->total_cycles + c.npu_cycles)));
    json_object_set_new(o, "clamped", json_integer((json_int_t)a->clamped));
    if (res->n_outputs > 0 && enpu_is_class_vector(res->outputs[0].rank, res->outputs[0].dims)) {
        const enpu_buf *b = &res->outputs[0];
        const float *v = b->data;
        int n = (int)enpu_buf_numel(b), best = 0;
        for (int i = 1; i < n; i++)
            if (v[i] > v[best]) best = i;
        char buf[16];
        json_object_set_new(o, "top_class", json_integer(best));
        json_object_set_new(o, "top_label", json_string(enpu_cli_audio_label(a, best, n, buf)));
        json_object_set_new(o, "top_score", json_real(v[best]));
    }
    return o;
}
