/* The simulator driver: owns the program, the memories, host memory, the
 * per-instruction statistics and the checker, moves tensors between the
 * user and the simulated memories, runs host ops (SYNC) on the float
 * reference, and runs the engine chosen by the arch and the mode
 * (engine.h).  Public API: include/easynpu/sim.h. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/float_ref.h"
#include "easynpu/quant.h"
#include "sim/engine.h"
#include "sim/observe.h"

#define ROW_NEVER UINT64_MAX

/* ---- names ------------------------------------------------------------------- */

const char *enpu_activity_name(enpu_activity a) {
    static const char *const names[] = {
#define ENPU_X_ACT(id, name) name,
        ENPU_ACTIVITY_LIST(ENPU_X_ACT)
#undef ENPU_X_ACT
    };
    return (unsigned)a < ENPU_ACT_COUNT ? names[a] : "unknown";
}

const char *enpu_memory_name(enpu_memory m) {
    static const char *const names[] = {
#define ENPU_X_MEM(id, name, eng) name,
        ENPU_MEMORY_LIST(ENPU_X_MEM)
#undef ENPU_X_MEM
    };
    return (unsigned)m < ENPU_MEM_COUNT ? names[m] : "unknown";
}

bool enpu_memory_of_engine(enpu_memory m, enpu_engine e) {
    static const unsigned engines[] = {
#define ENPU_X_MEM(id, name, eng) eng,
        ENPU_MEMORY_LIST(ENPU_X_MEM)
#undef ENPU_X_MEM
    };
    return (unsigned)m < ENPU_MEM_COUNT && (engines[m] >> e & 1u);
}

const char *enpu_unit_op_name(enpu_unit_op o) {
    static const char *const names[] = {
#define ENPU_X_UOP(id, name) name,
        ENPU_UNIT_OP_LIST(ENPU_X_UOP)
#undef ENPU_X_UOP
    };
    return (unsigned)o < ENPU_UOP_COUNT ? names[o] : "unknown";
}

void enpu_stage_uops(int64_t op, uint64_t lanes, uint64_t *uops) {
    switch (op) {
    case ENPU_OPC_BN:
    case ENPU_OPC_MUL: uops[ENPU_UOP_MAC] += lanes; break;
    case ENPU_OPC_ADD: uops[ENPU_UOP_MAC] += 2 * lanes; break; /* both inputs are scaled */
    case ENPU_OPC_ACT:
        uops[ENPU_UOP_MAC] += lanes;
        uops[ENPU_UOP_LOOKUP] += lanes;
        break;
    case ENPU_OPC_RELU: uops[ENPU_UOP_ALU] += lanes; break;
    default: return;
    }
    uops[ENPU_UOP_REQUANT] += lanes;
}

const char *enpu_sim_mode_name(enpu_sim_mode m) {
    return m == ENPU_SIM_FUNCTIONAL ? "functional" : "cycle";
}

int enpu_sim_mode_parse(const char *s) {
    if (!s) return -1;
    if (strcmp(s, "cycle") == 0) return ENPU_SIM_CYCLE;
    if (strcmp(s, "functional") == 0) return ENPU_SIM_FUNCTIONAL;
    return -1;
}

/* ---- tensors between the user and the memories --------------------------------- */

/* Dims of d in user order (NHWC rank >= 3: channels second). */
static int64_t io_numel(const enpu_io_desc *d) {
    int64_t n = 1;
    for (int i = 0; i < d->rank; i++) n *= d->dims[i];
    return n;
}

/* Geometry of d in memory: rows of C elements (channels of an NHWC
 * descriptor); S = spatial size of one batch for the NHWC permutation (0: no
 * permutation: the user's elements in row-major order). */
static void io_geom(const enpu_io_desc *d, int64_t *rows, int64_t *C, int64_t *S) {
    int r = d->rank;
    *C = enpu_io_row(d);
    *rows = *C > 0 ? io_numel(d) / *C : 0;
    *S = 0;
    if (d->layout == ENPU_LAYOUT_NHWC && r >= 3) {
        *S = 1;
        for (int i = 1; i < r - 1; i++) *S *= d->dims[i];
    }
}

static int64_t user_index(int64_t row, int64_t c, int64_t C, int64_t S) {
    if (!S) return row * C + c;
    int64_t n = row / S, sp = row % S;
    return (n * C + c) * S + sp;
}

/* Bytes of one element in NPU memory: int8, or int16 (little-endian) of the
 * row-stationary engine's 16-bit data. */
static int64_t io_es(const enpu_io_desc *d) { return d->dtype == ENPU_DT_INT16 ? 2 : 1; }

/* Stores the values (int8 or int16 as the descriptor says) in rows folded
 * into words, the words' padding zero. */
static void io_store(sim_mem *m, const enpu_io_desc *d, const int32_t *src) {
    int64_t rows, C, S, wb = m->wb, es = io_es(d);
    io_geom(d, &rows, &C, &S);
    int64_t wpp = (C * es + wb - 1) / wb;
    for (int64_t row = 0; row < rows; row++) {
        uint8_t *dst = sim_mem_ptr(m, d->mem, d->addr + row * wpp);
        /* channel c of the row is user_index(row, c): stride S apart */
        const int32_t *s = src + user_index(row, 0, C, S);
        int64_t stride = S ? S : 1;
        for (int64_t c = 0; c < C; c++) {
            uint32_t v = (uint32_t)s[c * stride];
            for (int64_t b = 0; b < es; b++) dst[c * es + b] = (uint8_t)(v >> (8 * b));
        }
        memset(dst + C * es, 0, (size_t)(wpp * wb - C * es));
    }
}

static void io_load(const sim_mem *m, const enpu_io_desc *d, int32_t *dst) {
    int64_t rows, C, S, wb = m->wb, es = io_es(d);
    io_geom(d, &rows, &C, &S);
    int64_t wpp = (C * es + wb - 1) / wb;
    for (int64_t row = 0; row < rows; row++) {
        const uint8_t *src = sim_mem_ptr(m, d->mem, d->addr + row * wpp);
        for (int64_t c = 0; c < C; c++)
            dst[user_index(row, c, C, S)] =
                es == 2 ? (int16_t)(src[2 * c] | src[2 * c + 1] << 8) : (int8_t)src[c];
    }
}

/* In the NPU's memories (main or skip DTCM, or DRAM), int8, folded. */
static bool in_npu(const enpu_io_desc *d) {
    return d->mem == ENPU_MEM_MAIN || d->mem == ENPU_MEM_SKIP || d->mem == ENPU_MEM_DRAM;
}

int enpu_sim_read_tensor(const enpu_sim *sim, const enpu_io_desc *d, int8_t *dst, int64_t n,
                         enpu_err *err) {
    if (!sim || !d || !dst) return enpu_fail(err, ENPU_E_USAGE, "enpu_sim_read_tensor: NULL argument");
    if (!in_npu(d) || d->dtype != ENPU_DT_INT8)
        return enpu_fail(err, ENPU_E_USAGE, "tensor '%s': not an int8 tensor in the DTCM or DRAM",
                         d->name ? d->name : "");
    int32_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    int rc = enpu_sim_read_tensor_i32(sim, d, v, n, err);
    for (int64_t i = 0; !rc && i < n; i++) dst[i] = (int8_t)v[i];
    free(v);
    return rc;
}

int enpu_sim_read_tensor_i32(const enpu_sim *sim, const enpu_io_desc *d, int32_t *dst, int64_t n,
                             enpu_err *err) {
    if (!sim || !d || !dst) return enpu_fail(err, ENPU_E_USAGE, "enpu_sim_read_tensor: NULL argument");
    if (!in_npu(d) || (d->dtype != ENPU_DT_INT8 && d->dtype != ENPU_DT_INT16))
        return enpu_fail(err, ENPU_E_USAGE, "tensor '%s': not an int8 or int16 tensor in NPU memory",
                         d->name ? d->name : "");
    if (n != io_numel(d))
        return enpu_fail(err, ENPU_E_USAGE, "tensor '%s': %" PRId64 " elements, buffer of %" PRId64,
                         d->name ? d->name : "", io_numel(d), n);
    if (d->addr + enpu_io_words(&sim->arch, d) > sim_mem_words(&sim->mem, d->mem))
        return enpu_fail(err, ENPU_E_USAGE, "tensor '%s': past the end of its memory%s",
                         d->name ? d->name : "",
                         d->mem == ENPU_MEM_DRAM ? " (the DRAM the program touches)" : "");
    io_load(&sim->mem, d, dst);
    return 0;
}

uint64_t enpu_sim_write_cycle(const enpu_sim *sim, const enpu_io_desc *d, int64_t e) {
    if (!sim || !d || !in_npu(d)) return 0;
    int64_t rows, C, S, P = sim->mem.wb / io_es(d); /* elements per word */
    io_geom(d, &rows, &C, &S);
    if (e < 0 || e >= rows * C) return 0;
    int64_t row = e / C, c = e % C;
    if (S) { /* the user's [N, C, spatial] order */
        int64_t n = e / (C * S), r = e % (C * S);
        c = r / S;
        row = n * S + r % S;
    }
    int64_t word = d->addr + row * ((C + P - 1) / P) + c / P;
    const uint64_t *wc = sim_mem_wc(&sim->mem, d->mem);
    return wc && word < sim_mem_words(&sim->mem, d->mem) ? wc[word] : 0;
}

const uint8_t *enpu_sim_memory(const enpu_sim *sim, int mem, int64_t *bytes) {
    if (!sim) return NULL;
    int64_t wb = sim->mem.wb;
    switch (mem) {
    case ENPU_MEM_MAIN: if (bytes) *bytes = sim->mem.main_words * wb; return sim->mem.main;
    case ENPU_MEM_SKIP: if (bytes) *bytes = sim->mem.skip_words * wb; return sim->mem.skip;
    case ENPU_MEM_WEIGHT: if (bytes) *bytes = sim->mem.w_words * wb; return sim->mem.wmem;
    case ENPU_MEM_DRAM: if (bytes) *bytes = sim->mem.dram_words * wb; return sim->mem.dram;
    }
    return NULL;
}

const enpu_arch *enpu_sim_arch(const enpu_sim *sim) { return sim ? &sim->arch : NULL; }
const enpu_program *enpu_sim_program(const enpu_sim *sim) { return sim ? sim->prog : NULL; }

/* ---- creation ----------------------------------------------------------------- */

void enpu_sim_free(enpu_sim *sim) {
    if (!sim) return;
    if (sim->eng && sim->es) sim->eng->destroy(sim->es);
    sim_mem_free(&sim->mem);
    if (sim->have_shadow) sim_mem_free(&sim->shadow);
    if (sim->host) {
        for (int i = 0; i < sim->prog->n_io; i++) free(sim->host[i]);
        free(sim->host);
    }
    free(sim->rows);
    sim_tspan_free(&sim->owners);
    sim_tspan_free(&sim->dram_log);
    sim_obs_free(sim->obs);
    free(sim);
}

static const char *layer_name(const enpu_program *p, int i) {
    const char *n = p->layers ? p->layers[i].name : NULL;
    return n ? n : "";
}

int enpu_sim_new(const enpu_program *prog, const enpu_arch *arch, const enpu_sim_opts *opts,
                 enpu_sim **out, enpu_err *err) {
    if (!prog || !arch || !out) return enpu_fail(err, ENPU_E_USAGE, "enpu_sim_new: NULL argument");
    *out = NULL;
    uint32_t fa = enpu_arch_fingerprint(arch), fp = enpu_arch_fingerprint(&prog->arch);
    if (fa != fp)
        return enpu_fail(err, ENPU_E_INCOMPATIBLE,
                         "arch mismatch: the program was compiled for arch '%s' (fingerprint 0x%08x) but arch '%s' "
                         "(fingerprint 0x%08x) is selected",
                         prog->arch.name, fp, arch->name, fa);
    /* the engines rely on every rule of enpu_program_validate (tiles within
     * the pads and psum, blocks within the memories, chains well formed) */
    int vrc = enpu_program_validate(prog, err);
    if (vrc) return vrc;
    enpu_sim_opts o = {0};
    if (opts) o = *opts;
    const enpu_sim_engine *eng = sim_engine_find(arch->engine, o.mode);
    if (!eng)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "engine '%s' has no %s simulator",
                         enpu_engine_name(arch->engine), enpu_sim_mode_name(o.mode));
    enpu_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    sim->prog = prog;
    sim->arch = *arch;
    sim->opts = o;
    sim->P = (int)arch->pes;
    sim->eng = eng;
    int rc = sim_mem_init(&sim->mem, arch, o.mode == ENPU_SIM_CYCLE, err);
    if (!rc) rc = sim_mem_add_dram(&sim->mem, prog, err);
    if (!rc && o.mode == ENPU_SIM_CYCLE && o.check) {
        rc = sim_mem_init(&sim->shadow, arch, false, err);
        sim->have_shadow = rc == 0;
    }
    if (rc) {
        enpu_sim_free(sim);
        return rc;
    }
    sim->rows = calloc((size_t)prog->n_instr, sizeof *sim->rows);
    sim->host = calloc((size_t)(prog->n_io ? prog->n_io : 1), sizeof *sim->host);
    if (!sim->rows || !sim->host) {
        enpu_sim_free(sim);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < prog->n_io && !rc; i++) {
        const enpu_io_desc *d = &prog->io[i];
        if (d->mem != ENPU_MEM_HOST) continue;
        int64_t n;
        if ((rc = enpu_shape_numel(d->rank, d->dims, &n, d->name, err))) break;
        sim->host[i] = calloc((size_t)(n ? n : 1), sizeof(float));
        if (!sim->host[i]) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory for '%s'", d->name);
    }
    if (!rc) rc = eng->create(sim, &sim->es, err);
    if (!rc && sim_fault_hook) sim_fault_hook(sim);
    if (rc) {
        enpu_sim_free(sim);
        return rc;
    }
    *out = sim;
    return 0;
}

/* ---- rows, chains and checking ------------------------------------------------------ */

static void rows_reset(enpu_sim *sim) {
    const enpu_program *p = sim->prog;
    for (int i = 0; i < p->n_instr; i++) {
        enpu_layer_stats *st = &sim->rows[i];
        memset(st, 0, sizeof *st);
        snprintf(st->name, sizeof st->name, "%s", layer_name(p, i));
        const char *mn = enpu_opcode_mnemonic(p->instr[i].opcode);
        snprintf(st->op, sizeof st->op, "%s", mn ? mn : "?");
        st->instr = i;
        st->chain_head = i;
        st->start_cycle = ROW_NEVER;
        st->group = p->layers[i].group;
        st->chain_pos = 0;
        if (p->instr[i].opcode != ENPU_OPC_DMA)
            while (i - st->chain_pos > 0 && p->instr[i - st->chain_pos - 1].fuse_next) st->chain_pos++;
        st->n_instr = 1;
        st->n_dma = p->instr[i].opcode == ENPU_OPC_DMA;
    }
}

bool sim_compare_block(enpu_sim *sim, int mem, int64_t addr, int64_t stride, int64_t H,
                       int64_t W, int64_t C, int instr, const char *tensor) {
    const int64_t P = sim->P, wpp = (C + P - 1) / P;
    if (!stride) stride = wpp;
    for (int64_t pix = 0; pix < H * W; pix++) {
        const uint8_t *a = sim_mem_ptr(&sim->mem, mem, addr + pix * stride);
        const uint8_t *b = sim_mem_ptr(&sim->shadow, mem, addr + pix * stride);
        if (memcmp(a, b, (size_t)(wpp * P)) == 0) continue;
        for (int64_t i = 0; i < wpp * P; i++) {
            if (a[i] == b[i]) continue;
            enpu_sim_mismatch *m = &sim->mismatch;
            m->found = true;
            m->layer = instr;
            snprintf(m->layer_name, sizeof m->layer_name, "%s", layer_name(sim->prog, instr));
            snprintf(m->tensor, sizeof m->tensor, "%s", tensor);
            m->h = pix / W;
            m->w = pix % W;
            m->c = i;
            m->got = (int8_t)a[i];
            m->want = (int8_t)b[i];
            const uint64_t *wc = mem == ENPU_MEM_MAIN ? sim->mem.main_wc : sim->mem.skip_wc;
            m->cycle = wc ? wc[addr + pix * stride + i / P] : 0;
            return false;
        }
    }
    return true;
}

int sim_mismatch_fail(const enpu_sim *sim, enpu_err *err) {
    const enpu_sim_mismatch *m = &sim->mismatch;
    return enpu_fail(err, ENPU_E_MISMATCH,
                     "layer '%s' (instruction %d): %s (h=%" PRId64 ", w=%" PRId64 ", c=%" PRId64
                     "): cycle-accurate %d, functional reference %d, written at cycle %" PRIu64,
                     m->layer_name, m->layer, m->tensor, m->h, m->w, m->c, m->got, m->want, m->cycle);
}

int sim_layer_done(enpu_sim *sim, int instr, enpu_err *err) {
    enpu_layer_stats *st = &sim->rows[instr];
    uint64_t units = (uint64_t)enpu_arch_mac_units(&sim->arch);
    st->macs = (uint64_t)sim->prog->layers[instr].macs;
    st->ideal_cycles = (st->macs + units - 1) / units;
    if (!sim->opts.on_layer) return 0;
    return sim->opts.on_layer(sim->opts.cb_ctx, instr, st, sim, err);
}

/* ---- host ops ------------------------------------------------------------------------- */

/* A host op of an arch with requant tflite: TFLite's integer kernel on the
 * int8 values (quant.h), the golden reference's own call. */
static int tfl_host_op(enpu_sim *sim, int instr, const enpu_hostop *h, enpu_op op, enpu_err *err) {
    const enpu_program *p = sim->prog;
    if (h->n_in != 1 || h->n_out != 1)
        return enpu_fail(err, ENPU_E_INVALID, "host op '%s' (instruction %d): %s takes one input "
                         "and one output", h->name, instr, h->kind);
    const enpu_io_desc *dx = &p->io[h->io[0]], *dy = &p->io[h->io[1]];
    int64_t dims[ENPU_MAX_RANK], n = io_numel(dx);
    if (!in_npu(dx) || !in_npu(dy) || dx->dtype != ENPU_DT_INT8 || dy->dtype != ENPU_DT_INT8 ||
        n != io_numel(dy))
        return enpu_fail(err, ENPU_E_INVALID, "host op '%s' (instruction %d): requant tflite "
                         "runs %s on int8 tensors of one shape in the NPU's memories", h->name,
                         instr, h->kind);
    enpu_io_user_dims(dx, dims);
    /* the memories' values come and go as int32 (io_load/io_store serve
     * int16 tensors too); the kernel runs on int8 */
    int8_t *x = malloc((size_t)(n ? n : 1)), *y = malloc((size_t)(n ? n : 1));
    int32_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    int rc = 0;
    if (!x || !y || !v) rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (!rc) {
        char what[160];
        snprintf(what, sizeof what, "host op '%s' (instruction %d)", h->name, instr);
        int axis = h->iparam[0] < 0 ? h->iparam[0] + dx->rank : h->iparam[0];
        io_load(&sim->mem, dx, v);
        for (int64_t e = 0; e < n; e++) x[e] = (int8_t)v[e];
        rc = enpu_tfl_host_run(op, axis, dx->rank, dims, x, dx->scale, dx->zero_point, y,
                               dy->scale, dy->zero_point, what, err);
        for (int64_t e = 0; !rc && e < n; e++) v[e] = y[e];
        if (!rc) io_store(&sim->mem, dy, v);
    }
    free(x);
    free(y);
    free(v);
    if (!rc && sim->opts.on_layer)
        rc = sim->opts.on_layer(sim->opts.cb_ctx, instr, &sim->rows[instr], sim, err);
    return rc;
}

int sim_host_op(enpu_sim *sim, int instr, enpu_err *err) {
    const enpu_program *p = sim->prog;
    const enpu_hostop *h = &p->hostops[p->instr[instr].host_op];
    sim->rows[instr].host = true;
    enpu_op op = enpu_op_from_name(h->kind);
    if (op == ENPU_OP_NONE)
        return enpu_fail(err, ENPU_E_UNSUPPORTED, "host op '%s': unknown op kind '%s'", h->name,
                         h->kind);
    if (p->arch.requant == ENPU_REQUANT_TFLITE && enpu_tfl_kernel_of(op) >= 0)
        return tfl_host_op(sim, instr, h, op, err);
    int nio = h->n_in + h->n_out, rc = 0;
    float *val[ENPU_HOSTOP_MAX_IO] = {0};
    const float *cval[ENPU_HOSTOP_MAX_IO] = {0}; /* float32 constants: the graph's data */
    int ten[ENPU_HOSTOP_MAX_IO];
    int32_t *tmp = NULL;
    enpu_graph *g = enpu_graph_new(h->name);
    if (!g) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    g->opset = 17;
    for (int i = 0; i < nio && !rc; i++) {
        if (h->io[i] < 0) { /* an omitted optional operand */
            ten[i] = -1;
            continue;
        }
        const enpu_io_desc *d = &p->io[h->io[i]];
        int64_t dims[ENPU_MAX_RANK], n;
        enpu_io_user_dims(d, dims);
        char nm[64];
        snprintf(nm, sizeof nm, "t%d", i);
        if ((rc = enpu_shape_numel(d->rank, dims, &n, d->name, err))) break;
        bool cst = d->dir == ENPU_IO_CONST;
        /* host-memory indices (int64/int32) keep their dtype: carried as
         * float32 values, an op's integer results rounded (enpu_int_value) */
        bool ints = d->mem == ENPU_MEM_HOST && (d->dtype == ENPU_DT_INT64 || d->dtype == ENPU_DT_INT32);
        ten[i] = enpu_graph_add_tensor(g, nm, cst || ints ? d->dtype : ENPU_DT_FLOAT32, d->rank, dims, err);
        if (ten[i] < 0) {
            rc = ten[i];
            break;
        }
        if (cst) {
            /* a constant operand, in its own dtype, from HOST_INIT (the
             * validated descriptor lies inside it) */
            size_t nb = (size_t)n * enpu_dtype_size(d->dtype);
            void *data = malloc(nb ? nb : 1);
            if (!data) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            if (nb) memcpy(data, p->host_init + d->addr, nb);
            enpu_tensor_set_data(&g->tensors[ten[i]], data);
            if (d->dtype == ENPU_DT_FLOAT32) {
                val[i] = NULL, cval[i] = data;
            } else {
                /* an integer constant the op computes on (an LSTM's
                 * sequence_lens) is given as floats too, as the float
                 * reference carries integers */
                val[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
                if (!val[i]) {
                    rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                    break;
                }
                for (int64_t k = 0; k < n; k++) val[i][k] = (float)enpu_dtype_value_at(d->dtype, data, k);
            }
            continue;
        }
        val[i] = calloc((size_t)(n ? n : 1), sizeof(float));
        if (!val[i]) {
            rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            break;
        }
        if (i >= h->n_in) continue;
        if (in_npu(d)) {
            free(tmp);
            tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
            if (!tmp) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            io_load(&sim->mem, d, tmp);
            for (int64_t k = 0; k < n; k++) val[i][k] = enpu_dequantize(tmp[k], d->scale, d->zero_point);
        } else if (n) {
            memcpy(val[i], sim->host[h->io[i]], (size_t)n * sizeof(float));
        }
    }
    if (!rc) {
        int k = enpu_graph_add_node(g, h->name, op, h->n_in, ten, h->n_out, ten + h->n_in, err);
        if (k < 0) rc = k;
        else {
            enpu_hostop_get_attrs(h, &g->nodes[k], nio && h->io[0] >= 0 ? p->io[h->io[0]].rank : 0);
            const float *in[ENPU_HOSTOP_MAX_IO];
            for (int i = 0; i < h->n_in; i++) in[i] = cval[i] ? cval[i] : val[i];
            rc = enpu_fref_node(g, &g->nodes[k], in, val + h->n_in, err);
        }
        if (rc) enpu_err_prefix(err, "host op '%s' (instruction %d)", h->name, instr);
    }
    for (int i = h->n_in; i < nio && !rc; i++) {
        if (h->io[i] < 0) continue;
        const enpu_io_desc *d = &p->io[h->io[i]];
        int64_t n = io_numel(d);
        if (in_npu(d)) {
            free(tmp);
            tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
            if (!tmp) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            int32_t lo = io_es(d) == 2 ? -32768 : -128, hi = io_es(d) == 2 ? 32767 : 127;
            for (int64_t k = 0; k < n; k++) tmp[k] = enpu_quantize(val[i][k], d->scale, d->zero_point, lo, hi);
            io_store(&sim->mem, d, tmp);
        } else if (n) {
            memcpy(sim->host[h->io[i]], val[i], (size_t)n * sizeof(float));
        }
    }
    free(tmp);
    for (int i = 0; i < nio; i++) free(val[i]);
    enpu_graph_free(g);
    if (!rc && sim->opts.on_layer)
        rc = sim->opts.on_layer(sim->opts.cb_ctx, instr, &sim->rows[instr], sim, err);
    return rc;
}

/* ---- running --------------------------------------------------------------------------------- */

const enpu_layer_stats *enpu_sim_result_rows(const enpu_sim_result *r, int *n) {
    if (r->rows && r->n_rows > 0) {
        *n = r->n_rows;
        return r->rows;
    }
    *n = r->n_layers;
    return r->layers;
}

void enpu_sim_result_free(enpu_sim_result *r) {
    if (!r) return;
    free(r->layers);
    free(r->rows);
    for (int i = 0; i < r->n_outputs; i++) {
        if (r->outputs) enpu_buf_free(&r->outputs[i]);
        if (r->raw_outputs) enpu_buf_free(&r->raw_outputs[i]);
    }
    free(r->outputs);
    free(r->raw_outputs);
    memset(r, 0, sizeof *r);
}


static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The per-layer rows of a result: instructions with the same group and chain
 * position summed; named after the first compute instruction (a row of DMA
 * transfers only after its first); in the order of those instructions. */
static int group_rows(const enpu_program *p, enpu_sim_result *res, uint64_t units, enpu_err *err) {
    int n = p->n_instr;
    int *rep = malloc((size_t)n * 16 * sizeof *rep), *row_of = malloc((size_t)n * sizeof *row_of);
    res->rows = calloc((size_t)n, sizeof *res->rows);
    if (!rep || !row_of || !res->rows) {
        free(rep), free(row_of);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < n * 16; i++) rep[i] = -1;
    for (int i = 0; i < n; i++) {
        const enpu_layer_stats *st = &res->layers[i];
        int key = st->group * 16 + (st->chain_pos < 16 ? st->chain_pos : 15);
        if (rep[key] < 0 || (res->layers[rep[key]].n_dma && !st->n_dma)) rep[key] = i;
    }
    for (int i = 0; i < n; i++) {
        const enpu_layer_stats *st = &res->layers[i];
        int key = st->group * 16 + (st->chain_pos < 16 ? st->chain_pos : 15);
        row_of[i] = -1;
        if (rep[key] != i) continue;
        row_of[i] = res->n_rows;
        enpu_layer_stats *r = &res->rows[res->n_rows++];
        *r = *st;
        memset(r->activity, 0, sizeof r->activity);
        memset(r->reads, 0, sizeof r->reads), memset(r->writes, 0, sizeof r->writes);
        memset(r->uops, 0, sizeof r->uops);
        r->cycles = r->macs = r->compute_model = 0;
        r->dram_span_bytes = 0;
        r->n_instr = r->n_dma = 0;
        r->psum_peak = 0;
    }
    for (int i = 0; i < n; i++) {
        const enpu_layer_stats *st = &res->layers[i];
        int key = st->group * 16 + (st->chain_pos < 16 ? st->chain_pos : 15);
        enpu_layer_stats *r = &res->rows[row_of[rep[key]]];
        r->cycles += st->cycles, r->macs += st->macs;
        r->n_instr++, r->n_dma += st->n_dma;
        r->dram_span_bytes += st->dram_span_bytes;
        for (int a = 0; a < ENPU_ACT_COUNT; a++) r->activity[a] += st->activity[a];
        for (int m = 0; m < ENPU_MEM_COUNT; m++) r->reads[m] += st->reads[m], r->writes[m] += st->writes[m];
        for (int o = 0; o < ENPU_UOP_COUNT; o++) r->uops[o] += st->uops[o];
        if (st->psum_peak > r->psum_peak) r->psum_peak = st->psum_peak;
        if (st->start_cycle < r->start_cycle || r->n_instr == 1) r->start_cycle = st->start_cycle;
        if (st->end_cycle > r->end_cycle) r->end_cycle = st->end_cycle;
        r->compute_model += st->compute_model;
    }
    for (int i = 0; i < res->n_rows; i++) {
        enpu_layer_stats *r = &res->rows[i];
        r->ideal_cycles = (r->macs + units - 1) / units;
        /* the chain head's row names its chain */
        if (r->chain_pos > 0) {
            int key = r->group * 16;
            if (rep[key] >= 0) r->chain_head = row_of[rep[key]];
        } else {
            r->chain_head = i;
        }
    }
    free(rep), free(row_of);
    return 0;
}

static int collect(enpu_sim *sim, enpu_sim_result *res, bool complete, enpu_err *err) {
    const enpu_program *p = sim->prog;
    res->mode = sim->opts.mode;
    res->n_layers = p->n_instr;
    res->layers = malloc((size_t)p->n_instr * sizeof *res->layers);
    if (!res->layers) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    uint64_t units = (uint64_t)enpu_arch_mac_units(&sim->arch);
    /* the DRAM bytes moved in each instruction's own cycles, where the
     * engine said who owns them */
    bool spanned = false;
    if (sim->opts.mode == ENPU_SIM_CYCLE && sim->owners.n > 0) {
        double *by = calloc((size_t)p->n_instr + 1, sizeof *by);
        if (by && sim_tspan_spread(&sim->owners, &sim->dram_log, by, p->n_instr)) {
            spanned = true;
            for (int i = 0; i < p->n_instr; i++) sim->rows[i].dram_span_bytes = by[i];
        }
        free(by);
    }
    for (int i = 0; i < p->n_instr; i++) {
        enpu_layer_stats *st = &sim->rows[i];
        st->dram_spanned = spanned;
        if (st->start_cycle == ROW_NEVER) st->start_cycle = st->end_cycle = 0;
        res->layers[i] = *st;
        res->total_cycles += st->cycles;
        res->total_macs += st->macs;
        if (p->instr[i].opcode == ENPU_OPC_SYNC) res->host_macs += (uint64_t)p->layers[i].macs;
        for (int a = 0; a < ENPU_ACT_COUNT; a++) res->activity[a] += st->activity[a];
        for (int m = 0; m < ENPU_MEM_COUNT; m++) {
            res->reads[m] += st->reads[m];
            res->writes[m] += st->writes[m];
        }
        for (int o = 0; o < ENPU_UOP_COUNT; o++) res->uops[o] += st->uops[o];
    }
    if (complete && sim->opts.mode == ENPU_SIM_CYCLE) ENPU_ASSERT(res->total_cycles == sim->cycle);
    int rc0 = group_rows(p, res, units, err);
    if (rc0) return rc0;
    res->total_ideal_cycles = (res->total_macs + units - 1) / units;
    res->utilization = enpu_utilization(res->total_macs, units, res->total_cycles);
    res->time_us = (double)res->total_cycles / sim->arch.clock_mhz;
    res->checked = sim->checked;
    res->bit_exact = sim->checked && !sim->mismatch.found;
    res->mismatch = sim->mismatch;
    int no = 0;
    for (int i = 0; i < p->n_io; i++) no += p->io[i].dir == ENPU_IO_OUTPUT;
    res->outputs = calloc((size_t)(no ? no : 1), sizeof(enpu_buf));
    res->raw_outputs = calloc((size_t)(no ? no : 1), sizeof(enpu_buf));
    if (!res->outputs || !res->raw_outputs) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    res->n_outputs = no;
    int k = 0;
    for (int i = 0; i < p->n_io; i++) {
        const enpu_io_desc *d = &p->io[i];
        if (d->dir != ENPU_IO_OUTPUT) continue;
        int64_t dims[ENPU_MAX_RANK];
        enpu_io_user_dims(d, dims);
        enpu_buf *o = &res->outputs[k], *r = &res->raw_outputs[k];
        k++;
        int rc = enpu_buf_alloc(o, ENPU_DT_FLOAT32, d->rank, dims, err);
        if (rc) return rc;
        o->name = xstrdup(d->name);
        int64_t n = io_numel(d);
        float *f = o->data;
        if (in_npu(d)) {
            bool i16 = d->dtype == ENPU_DT_INT16;
            if ((rc = enpu_buf_alloc(r, i16 ? ENPU_DT_INT16 : ENPU_DT_INT8, d->rank, dims, err))) return rc;
            r->name = xstrdup(d->name);
            int32_t *q = malloc((size_t)(n ? n : 1) * sizeof *q);
            if (!q) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
            io_load(&sim->mem, d, q);
            for (int64_t e = 0; e < n; e++) {
                f[e] = enpu_dequantize(q[e], d->scale, d->zero_point);
                if (i16) ((int16_t *)r->data)[e] = (int16_t)q[e];
                else ((int8_t *)r->data)[e] = (int8_t)q[e];
            }
            free(q);
        } else {
            r->dtype = ENPU_DT_FLOAT32;
            r->rank = d->rank;
            memcpy(r->dims, dims, sizeof(int64_t) * (size_t)d->rank);
            r->name = xstrdup(d->name);
            if (n) memcpy(f, sim->host[i], (size_t)n * sizeof(float));
        }
        if (!o->name || !r->name) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    }
    return 0;
}

static int run_common(enpu_sim *sim, const enpu_buf *fin, const int8_t *const *qin, int n_inputs,
                      enpu_sim_result *res, enpu_err *err) {
    if (!sim || !res) return enpu_fail(err, ENPU_E_USAGE, "enpu_sim_run: NULL argument");
    memset(res, 0, sizeof *res);
    const enpu_program *p = sim->prog;
    int want = 0;
    for (int i = 0; i < p->n_io; i++) want += p->io[i].dir == ENPU_IO_INPUT;
    if (n_inputs != want || (want && !fin && !qin))
        return enpu_fail(err, ENPU_E_USAGE, "the program has %d input(s), %d given", want, n_inputs);
    sim_mem_reset(&sim->mem, p);
    if (sim->have_shadow) sim_mem_reset(&sim->shadow, p);
    for (int i = 0; i < p->n_io; i++)
        if (sim->host[i]) memset(sim->host[i], 0, (size_t)io_numel(&p->io[i]) * sizeof(float));
    rows_reset(sim);
    sim_tspan_clear(&sim->owners);
    sim_tspan_clear(&sim->dram_log);
    memset(&sim->mismatch, 0, sizeof sim->mismatch);
    sim->checked = false;
    sim->cycle = 0;
    int rc = 0, k = 0;
    int32_t *tmp = NULL;
    for (int i = 0; i < p->n_io && !rc; i++) {
        const enpu_io_desc *d = &p->io[i];
        if (d->dir != ENPU_IO_INPUT) continue;
        int64_t n = io_numel(d), dims[ENPU_MAX_RANK];
        enpu_io_user_dims(d, dims);
        const int32_t *q = NULL;
        bool mem_order = false;
        if (fin) {
            const enpu_buf *b = &fin[k];
            bool as_user = enpu_shape_fits(b->rank, b->dims, d->rank, dims);
            /* an NHWC input may also be given already transposed */
            mem_order = !as_user && d->layout == ENPU_LAYOUT_NHWC &&
                        enpu_shape_fits(b->rank, b->dims, d->rank, d->dims);
            if (!as_user && !mem_order) {
                rc = enpu_shape_error(err, NULL, d->name, b->rank, b->dims, d->rank, dims);
                break;
            }
            enpu_buf f = *b;
            f.name = NULL;
            f.data = NULL;
            if (b->dtype != ENPU_DT_FLOAT32) {
                size_t es = enpu_dtype_size(b->dtype);
                if (!es) {
                    rc = enpu_fail(err, ENPU_E_UNSUPPORTED, "input #%d '%s': dtype %s", k, d->name,
                                   enpu_dtype_name(b->dtype));
                    break;
                }
                f.data = malloc((size_t)(n ? n : 1) * es);
                if (!f.data) {
                    rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                    break;
                }
                memcpy(f.data, b->data, (size_t)n * es);
                if ((rc = enpu_buf_to_f32(&f, err))) {
                    free(f.data);
                    break;
                }
            }
            const float *v = f.data ? f.data : b->data;
            if (!in_npu(d)) {
                memcpy(sim->host[i], v, (size_t)n * sizeof(float));
                free(f.data);
                k++;
                continue;
            }
            free(tmp);
            tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
            if (!tmp) {
                free(f.data);
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            int32_t lo = io_es(d) == 2 ? -32768 : -128, hi = io_es(d) == 2 ? 32767 : 127;
            for (int64_t e = 0; e < n; e++) tmp[e] = enpu_quantize(v[e], d->scale, d->zero_point, lo, hi);
            free(f.data);
            q = tmp;
        } else {
            if (!in_npu(d) || d->dtype != ENPU_DT_INT8) {
                rc = enpu_fail(err, ENPU_E_USAGE, "input #%d '%s' is not an int8 tensor", k, d->name);
                break;
            }
            free(tmp);
            tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
            if (!tmp) {
                rc = enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                break;
            }
            for (int64_t e = 0; e < n; e++) tmp[e] = qin[k][e];
            q = tmp;
        }
        if (mem_order) {
            enpu_io_desc plain = *d;
            plain.layout = ENPU_LAYOUT_ANY;
            io_store(&sim->mem, &plain, q);
        } else {
            io_store(&sim->mem, d, q);
        }
        k++;
    }
    free(tmp);
    if (rc) return rc;
    if (sim->opts.mode == ENPU_SIM_CYCLE) {
        sim_obs_free(sim->obs);
        sim->obs = NULL;
        if (sim->opts.trace || sim->opts.vcd) {
            sim->obs = sim_obs_new(sim->eng->name, sim->arch.clock_mhz, sim->opts.trace,
                                   sim->opts.vcd, sim->opts.vcd_from, sim->opts.vcd_to);
            if (!sim->obs) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        }
    }
    rc = sim->eng->run(sim->es, sim, err);
    sim->ran = true;
    /* the statistics so far also when the run stopped (mismatch, overflow) */
    enpu_err err2 = {0};
    int rc2 = collect(sim, res, rc == 0, rc ? &err2 : err);
    if (!rc) rc = rc2;
    return rc;
}

int enpu_sim_run(enpu_sim *sim, const enpu_buf *inputs, int n_inputs, enpu_sim_result *res,
                 enpu_err *err) {
    return run_common(sim, inputs, NULL, n_inputs, res, err);
}

int enpu_sim_run_i8(enpu_sim *sim, const int8_t *const *inputs, int n_inputs,
                    enpu_sim_result *res, enpu_err *err) {
    return run_common(sim, NULL, inputs, n_inputs, res, err);
}

void enpu_sim_npu_share(const enpu_sim_result *r, enpu_npu_share *s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < r->n_layers; i++) s->host_ops += r->layers[i].host;
    s->host_cycles = r->activity[ENPU_ACT_HOST];
    uint64_t macs = r->total_macs + r->host_macs;
    s->npu_macs = macs ? (double)r->total_macs / (double)macs : 1.0;
    s->npu_time = r->total_cycles ? 1.0 - (double)s->host_cycles / (double)r->total_cycles : 1.0;
}
