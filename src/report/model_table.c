#include "report/model_table.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "easynpu/file.h"

const char *enpu_fit(const char *s, int width, char *buf, size_t len) {
    size_t n = strlen(s);
    if ((int)n <= width || width < 5) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    int head = (width - 2) / 2, tail = width - 2 - head;
    snprintf(buf, len, "%.*s..%s", head, s, s + n - tail);
    return buf;
}

static void window_str(const enpu_window *w, char *buf, size_t len) {
    snprintf(buf, len, "k%dx%d s%dx%d p%d,%d,%d,%d d%dx%d", w->kernel[0], w->kernel[1],
             w->stride[0], w->stride[1], w->pads[0], w->pads[1], w->pads[2], w->pads[3],
             w->dilation[0], w->dilation[1]);
}

void enpu_node_params_str(const enpu_node *n, char *buf, size_t len) {
    buf[0] = 0;
    char w[96];
    switch (n->op) {
    case ENPU_OP_CONV:
        window_str(&n->attr.conv.w, w, sizeof w);
        snprintf(buf, len, "%s g%d", w, n->attr.conv.group);
        break;
    case ENPU_OP_MAXPOOL:
    case ENPU_OP_AVGPOOL:
        window_str(&n->attr.pool.w, w, sizeof w);
        snprintf(buf, len, "%s%s%s", w, n->attr.pool.ceil_mode ? " ceil" : "",
                 n->op == ENPU_OP_AVGPOOL && n->attr.pool.count_include_pad ? " incl_pad" : "");
        break;
    case ENPU_OP_GEMM:
        snprintf(buf, len, "alpha=%g beta=%g%s%s", n->attr.gemm.alpha, n->attr.gemm.beta,
                 n->attr.gemm.trans_a ? " transA" : "", n->attr.gemm.trans_b ? " transB" : "");
        break;
    case ENPU_OP_CLIP:
        snprintf(buf, len, "min=%g max=%g", n->attr.act.min, n->attr.act.max);
        break;
    case ENPU_OP_LEAKY_RELU:
        snprintf(buf, len, "alpha=%g", n->attr.act.alpha);
        break;
    case ENPU_OP_HARD_SIGMOID:
        snprintf(buf, len, "alpha=%g beta=%g", n->attr.act.alpha, n->attr.act.beta);
        break;
    case ENPU_OP_BATCHNORM:
        snprintf(buf, len, "eps=%g", n->attr.bn.epsilon);
        break;
    case ENPU_OP_SOFTMAX:
    case ENPU_OP_CONCAT:
    case ENPU_OP_FLATTEN:
        snprintf(buf, len, "axis=%d", n->attr.shape.axis);
        break;
    case ENPU_OP_TRANSPOSE: {
        size_t pos = (size_t)snprintf(buf, len, "perm=");
        for (int i = 0; i < n->attr.shape.n_axes && pos < len; i++)
            pos += (size_t)snprintf(buf + pos, len - pos, i ? ",%d" : "%d", n->attr.shape.axes[i]);
        break;
    }
    default:
        break;
    }
}

/* Elements of constant inputs: the node's parameters. */
static int64_t node_params(const enpu_graph *g, const enpu_node *n) {
    int64_t p = 0;
    for (int i = 0; i < n->n_in; i++) {
        const enpu_tensor *t = enpu_node_input(g, n, i);
        if (t && (t->flags & ENPU_T_CONST) && t->dtype != ENPU_DT_INT64) p += enpu_tensor_numel(t);
    }
    return p;
}

static void input_shapes(const enpu_graph *g, const enpu_node *n, char *buf, size_t len) {
    size_t pos = 0;
    buf[0] = 0;
    for (int i = 0; i < n->n_in && pos < len; i++) {
        const enpu_tensor *t = enpu_node_input(g, n, i);
        if (!t || (t->flags & ENPU_T_CONST)) continue;
        char s[128];
        pos += (size_t)snprintf(buf + pos, len - pos, pos ? ",%s" : "%s", enpu_shape_str(t, s, sizeof s));
    }
}

void enpu_report_model_table(FILE *f, const enpu_graph *g) {
    int64_t total_macs = 0, total_params = 0;
    fprintf(f, "%-4s %-32s %-18s %-22s %-16s %10s %12s  %s\n", "#", "name", "op", "input",
            "output", "params", "MACs", "attributes");
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        char name[64], in[256], out[128], attrs[160], fin[64];
        int64_t macs = enpu_node_macs(g, n), params = node_params(g, n);
        total_macs += macs;
        total_params += params;
        input_shapes(g, n, in, sizeof in);
        enpu_shape_str(enpu_node_output(g, n, 0), out, sizeof out);
        enpu_node_params_str(n, attrs, sizeof attrs);
        fprintf(f, "%-4d %-32s %-18s %-22s %-16s %10lld %12lld  %s\n", i,
                enpu_fit(n->name, 32, name, sizeof name), enpu_op_name(n->op),
                enpu_fit(in, 22, fin, sizeof fin), out, (long long)params, (long long)macs, attrs);
    }
    fprintf(f, "total: %d nodes, %lld parameters, %lld MACs\n", g->n_nodes, (long long)total_params,
            (long long)total_macs);
    for (int i = 0; i < g->n_inputs; i++) {
        char s[128];
        const enpu_tensor *t = &g->tensors[g->inputs[i]];
        fprintf(f, "input  %s: %s %s%s\n", t->name, enpu_dtype_name(t->dtype), enpu_shape_str(t, s, sizeof s),
                t->layout == ENPU_LAYOUT_NHWC ? " (NHWC)" : t->layout == ENPU_LAYOUT_NCHW ? " (NCHW)" : "");
    }
    for (int i = 0; i < g->n_outputs; i++) {
        char s[128];
        const enpu_tensor *t = &g->tensors[g->outputs[i]];
        fprintf(f, "output %s: %s %s\n", t->name, enpu_dtype_name(t->dtype), enpu_shape_str(t, s, sizeof s));
    }
}

static json_t *dims_json(const enpu_tensor *t) {
    json_t *a = json_array();
    for (int i = 0; i < t->rank; i++) json_array_append_new(a, json_integer(t->dims[i]));
    return a;
}

int enpu_report_model_json(const char *path, const char *model, const enpu_graph *g, enpu_err *err) {
    json_t *root = json_object(), *layers = json_array();
    int64_t total_macs = 0, total_params = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const enpu_node *n = &g->nodes[i];
        if (n->dead) continue;
        json_t *l = json_object(), *ins = json_array();
        char attrs[160];
        int64_t macs = enpu_node_macs(g, n), params = node_params(g, n);
        total_macs += macs;
        total_params += params;
        for (int k = 0; k < n->n_in; k++) {
            const enpu_tensor *t = enpu_node_input(g, n, k);
            if (!t) continue;
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(t->name));
            json_object_set_new(o, "shape", dims_json(t));
            json_object_set_new(o, "constant", json_boolean(t->flags & ENPU_T_CONST));
            json_array_append_new(ins, o);
        }
        enpu_node_params_str(n, attrs, sizeof attrs);
        json_object_set_new(l, "name", json_string(n->name));
        json_object_set_new(l, "op", json_string(enpu_op_name(n->op)));
        json_object_set_new(l, "inputs", ins);
        json_object_set_new(l, "output_shape", dims_json(enpu_node_output(g, n, 0)));
        json_object_set_new(l, "params", json_integer(params));
        json_object_set_new(l, "macs", json_integer(macs));
        json_object_set_new(l, "attributes", json_string(attrs));
        json_array_append_new(layers, l);
    }
    json_object_set_new(root, "model", json_string(model));
    json_object_set_new(root, "layers", layers);
    json_object_set_new(root, "total_macs", json_integer(total_macs));
    json_object_set_new(root, "total_params", json_integer(total_params));
    char *text = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    if (!text) return enpu_fail(err, ENPU_E_NOMEM, "%s: out of memory formatting JSON", path);
    int rc = enpu_file_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}
