/* Architecture description: presets, JSON reading and writing, validation,
 * fingerprint.  Everything per-parameter is generated from ENPU_ARCH_PARAMS. */
#include "easynpu/arch.h"

#include <ctype.h>
#include <stdbool.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "easynpu/file.h"
#include "easynpu/isa.h"
#include "isa/isa_internal.h"

typedef struct param_info {
    const char *key;
    const char *unit;
    int64_t lo, hi;
    int64_t preset[2]; /* easynpu, large */
    const char *meaning;
    size_t offset;
} param_info;

static const param_info params[] = {
#define ENPU_X_INFO(key, unit, lo, hi, d0, d1, doc) \
    {#key, unit, lo, hi, {d0, d1}, doc, offsetof(enpu_arch, key)},
    ENPU_ARCH_PARAMS(ENPU_X_INFO)
#undef ENPU_X_INFO
};
#define N_PARAMS ((int)(sizeof params / sizeof params[0]))
/* The row-stationary parameters are the table's last rows. */
#define ENPU_X_ONE(key, unit, lo, hi, d0, d1, doc) +1
enum { N_RS_PARAMS = 0 ENPU_ARCH_PARAMS_ROWSTAT(ENPU_X_ONE) };
#undef ENPU_X_ONE

typedef struct sya_param_info {
    const char *key;
    const char *unit;
    int64_t lo, hi, dflt;
    const char *meaning;
    size_t offset;
} sya_param_info;

static const sya_param_info sya_params[] = {
#define ENPU_X_SYA_INFO(key, unit, lo, hi, d, doc) {#key, unit, lo, hi, d, doc, offsetof(enpu_arch, key)},
    ENPU_ARCH_SYA_PARAMS(ENPU_X_SYA_INFO)
#undef ENPU_X_SYA_INFO
};
#define N_SYA ((int)(sizeof sya_params / sizeof sya_params[0]))

static const char *const preset_names[] = {"easynpu", "large", "systolic", "systolic-1x4",
                                           "systolic-4x1", "rowstat", "eyeriss", NULL};
static const double preset_clock[] = {100.0, 200.0, 100.0, 100.0, 100.0};
/* The systolic presets: preset easynpu's shared parameters but for these
 * (a 256-bit SRAM word, the note's SRAM_WIDTH; feature maps and weights on
 * chip, no DRAM), and the three bank arrangements of the note's CfgMod. */
static const struct {
    const char *key;
    int64_t v;
} sya_shared[] = {{"pes", 32},
                  {"ifmap_pads", 32},
                  {"weight_pad_groups", 32},
                  {"bus_bits", 256},
                  {"main_dtcm_bytes", (int64_t)1 << 20},
                  {"skip_dtcm_bytes", 1024},
                  {"weight_mem_bytes", (int64_t)512 << 10},
                  {"itcm_bytes", 16384},
                  {"dram_bytes", 0}};
static const int64_t sya_preset_bank_rows[] = {2, 1, 4}; /* systolic, -1x4, -4x1 */
#define N_PRESETS ((int)(sizeof preset_clock / sizeof preset_clock[0]))
#define FIRST_SYA_PRESET 2
/* Presets past those: JSON applied on a base preset.  "rowstat" is the
 * design note's row-stationary engine (a 3 x 24 array: the table's rs_
 * defaults); "eyeriss" the engine at the size of the Eyeriss chip (Chen et
 * al., JSSC 2017): 12 x 14 PEs, a 108 KB global buffer, 12 / 224 / 24-entry
 * ifmap, filter and psum scratch pads, 64-bit (four 16-bit values) networks
 * and DRAM word, 200 MHz.  Both split the filter loop buffer into two banks
 * when a pass's filters fit half of it (rs_filter_banks: the same storage,
 * docs/rowstat.md "Filter banks"). */
static const char *const preset_json[] = {
    NULL, NULL, NULL, NULL, NULL, "{\"base\": \"easynpu\", \"name\": \"rowstat\", \"engine\": \"rowstat\", \"lane_groups_max\": 1, "
    "\"rs_filter_banks\": 1}",
    "{\"base\": \"easynpu\", \"name\": \"eyeriss\", \"engine\": \"rowstat\", \"lane_groups_max\": 1, \"pes\": 8, "
    "\"ifmap_pads\": 8, \"weight_pad_groups\": 8, \"bus_bits\": 64, \"rs_rows\": 12, "
    "\"rs_cols\": 14, \"rs_ifmap_lb_depth\": 12, \"rs_filter_lb_depth\": 224, "
    "\"rs_psum_depth\": 24, \"rs_fifo_depth\": 256, \"rs_glb_bytes\": 110592, "
    "\"rs_ifmap_net_values\": 4, \"rs_filter_net_values\": 4, \"rs_psum_net_values\": 4, "
    "\"rs_filter_banks\": 1, \"clock_mhz\": 200}"};

typedef struct cost_info {
    const char *key;
    const char *unit;
    double lo, hi, dflt;
    const char *source;
    const char *meaning;
    size_t offset;
} cost_info;

static const cost_info costs[] = {
#define ENPU_X_COST_INFO(key, unit, lo, hi, dflt, src, doc) \
    {#key, unit, lo, hi, dflt, src, doc, offsetof(enpu_arch, key)},
    ENPU_ARCH_COSTS(ENPU_X_COST_INFO)
#undef ENPU_X_COST_INFO
};
#define N_COSTS ((int)(sizeof costs / sizeof costs[0]))

static int64_t *param_ref(enpu_arch *a, int i) { return (int64_t *)((char *)a + params[i].offset); }
static int64_t param_get(const enpu_arch *a, int i) {
    return *(const int64_t *)((const char *)a + params[i].offset);
}
static int64_t *sya_ref(enpu_arch *a, int i) { return (int64_t *)((char *)a + sya_params[i].offset); }
static int64_t sya_get(const enpu_arch *a, int i) {
    return *(const int64_t *)((const char *)a + sya_params[i].offset);
}
static double *cost_ref(enpu_arch *a, int i) { return (double *)((char *)a + costs[i].offset); }
static double cost_get(const enpu_arch *a, int i) {
    return *(const double *)((const char *)a + costs[i].offset);
}

double *enpu_arch_cost_ref(enpu_arch *a, const char *key) {
    for (int i = 0; i < N_COSTS; i++)
        if (strcmp(costs[i].key, key) == 0) return cost_ref(a, i);
    return NULL;
}

int64_t *enpu_arch_param_ref(enpu_arch *a, const char *key) {
    for (int i = 0; i < N_PARAMS; i++)
        if (strcmp(params[i].key, key) == 0) return param_ref(a, i);
    /* the systolic engine's too: a sweep over its arrays and schemes */
    for (int i = 0; i < N_SYA; i++)
        if (strcmp(sya_params[i].key, key) == 0) return sya_ref(a, i);
    return NULL;
}

const char *const *enpu_arch_preset_names(void) { return preset_names; }

const char *enpu_engine_name(enpu_engine e) {
    switch (e) {
    case ENPU_ENGINE_EASYNPU: return "easynpu";
    case ENPU_ENGINE_SYSTOLIC: return "systolic";
    case ENPU_ENGINE_ROWSTAT: return "rowstat";
    }
    return "unknown";
}

int enpu_engine_parse(const char *s) {
    for (int e = ENPU_ENGINE_EASYNPU; e <= ENPU_ENGINE_ROWSTAT; e++)
        if (strcmp(s, enpu_engine_name((enpu_engine)e)) == 0) return e;
    return -1;
}

static int preset_index(const char *name) {
    for (int i = 0; preset_names[i]; i++)
        if (strcmp(preset_names[i], name) == 0) return i;
    return -1;
}

static int apply_json(json_t *root, const char *what, enpu_arch *out, enpu_err *err, bool canonical);
static int find_param(const char *key);

static void fill_preset(int p, enpu_arch *out) {
    if (preset_json[p]) {
        json_t *root = json_loads(preset_json[p], 0, NULL);
        enpu_err e = {0};
        ENPU_ASSERT(root && apply_json(root, preset_names[p], out, &e, false) == 0);
        json_decref(root);
        return;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", preset_names[p]);
    out->engine = ENPU_ENGINE_EASYNPU;
    for (int i = 0; i < N_PARAMS; i++) *param_ref(out, i) = params[i].preset[p < 2 ? p : 0];
    for (int i = 0; i < N_SYA; i++) *sya_ref(out, i) = sya_params[i].dflt;
    if (p >= FIRST_SYA_PRESET) {
        out->engine = ENPU_ENGINE_SYSTOLIC;
        for (size_t k = 0; k < sizeof sya_shared / sizeof sya_shared[0]; k++)
            *param_ref(out, find_param(sya_shared[k].key)) = sya_shared[k].v;
        out->sya_bank_rows = sya_preset_bank_rows[p - FIRST_SYA_PRESET];
        out->lane_groups_max = 1; /* EasyNPU's lane groups (docs/microarch.md §16) */
    }
    out->clock_mhz = preset_clock[p];
    for (int i = 0; i < N_COSTS; i++) *cost_ref(out, i) = costs[i].dflt;
}

int enpu_arch_preset(const char *name, enpu_arch *out, enpu_err *err) {
    int p = preset_index(name);
    if (p < 0)
        return enpu_fail(err, ENPU_E_USAGE,
                         "unknown arch preset '%s' (known: easynpu, large, systolic, systolic-1x4, "
                         "systolic-4x1, rowstat, eyeriss)",
                         name);
    fill_preset(p, out);
    return 0;
}

static int valid_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n >= ENPU_ARCH_NAME_MAX) return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_.+-", *p)) return 0;
    return 1;
}

int enpu_arch_validate(const enpu_arch *a, enpu_err *err) {
    const char *nm = a->name;
    if (!valid_name(a->name))
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch: field 'name': must be 1..%d characters of [A-Za-z0-9_.+-]",
                         ENPU_ARCH_NAME_MAX - 1);
    if ((int)a->engine < 0 || (int)a->engine > (int)ENPU_ENGINE_ROWSTAT)
        return enpu_fail(err, ENPU_E_INVALID, "arch '%s': field 'engine': unknown value %d", nm,
                         (int)a->engine);
    if ((int)a->requant < 0 || (int)a->requant >= ENPU_REQUANT_COUNT)
        return enpu_fail(err, ENPU_E_INVALID, "arch '%s': field 'requant': unknown value %d", nm,
                         (int)a->requant);
    if (a->engine != ENPU_ENGINE_EASYNPU && a->requant != ENPU_REQUANT_EASYNPU)
        return enpu_fail(err, ENPU_E_UNSUPPORTED,
                         "arch '%s': field 'requant': \"%s\" runs on the easynpu engine only",
                         nm, enpu_requant_name(a->requant));
    for (int i = 0; i < N_PARAMS; i++) {
        int64_t v = param_get(a, i);
        if (v < params[i].lo || v > params[i].hi)
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field '%s': value %" PRId64 " out of range %" PRId64
                             "..%" PRId64 " %s",
                             nm, params[i].key, v, params[i].lo, params[i].hi, params[i].unit);
    }
    if (!(a->clock_mhz > 0) || !isfinite(a->clock_mhz) || a->clock_mhz > 1e6)
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'clock_mhz': value %g out of range (0, 1000000] MHz", nm,
                         a->clock_mhz);
    for (int i = 0; i < N_COSTS; i++) {
        double v = cost_get(a, i);
        if (!(v >= costs[i].lo && v <= costs[i].hi))
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field '%s': value %g out of range %g..%g %s", nm,
                             costs[i].key, v, costs[i].lo, costs[i].hi, costs[i].unit);
    }
    if (a->bus_bits % 8 != 0 || a->pes != a->bus_bits / 8)
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'pes': value %" PRId64 " must equal bus_bits/8 (bus_bits=%"
                         PRId64 ", one int8 lane per PE)",
                         nm, a->pes, a->bus_bits);
    if (a->ifmap_pads != a->pes)
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'ifmap_pads': value %" PRId64 " must equal pes=%" PRId64
                         " (multicast feeds pad i to PE i)",
                         nm, a->ifmap_pads, a->pes);
    if (a->weight_pad_groups != a->pes)
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'weight_pad_groups': value %" PRId64
                         " must equal pes=%" PRId64 " (one group per PE)",
                         nm, a->weight_pad_groups, a->pes);
    if (a->lane_groups_max & (a->lane_groups_max - 1))
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'lane_groups_max': value %" PRId64 " must be a power of two",
                         nm, a->lane_groups_max);
    if (a->act_segments & (a->act_segments - 1))
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'act_segments': value %" PRId64
                         " must be a power of two in 1..256",
                         nm, a->act_segments);
    for (int i = 0; i < N_SYA; i++) {
        int64_t v = sya_get(a, i);
        if (v < sya_params[i].lo || v > sya_params[i].hi)
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field '%s': value %" PRId64 " out of range %" PRId64
                             "..%" PRId64 " %s",
                             nm, sya_params[i].key, v, sya_params[i].lo, sya_params[i].hi,
                             sya_params[i].unit);
    }
    if (a->engine == ENPU_ENGINE_SYSTOLIC) {
        if (a->sya_banks % a->sya_bank_rows != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field 'sya_bank_rows': value %" PRId64
                             " must divide sya_banks=%" PRId64 " (the banks form a grid)",
                             nm, a->sya_bank_rows, a->sya_banks);
        if (a->sya_scheme == 2)
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field 'sya_scheme': value 2 (the note's unskewed storage "
                             "with a re-shaping delay unit) is not modelled; use 0, 1, 3 or 4",
                             nm);
        if (a->dram_bytes != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field 'dram_bytes': value %" PRId64
                             " but the systolic engine has no DMA (everything on chip): use 0",
                             nm, a->dram_bytes);
    }
    int64_t wb = a->bus_bits / 8;
    static const char *const mems[] = {"main_dtcm_bytes", "skip_dtcm_bytes", "weight_mem_bytes"};
    const int64_t vals[] = {a->main_dtcm_bytes, a->skip_dtcm_bytes, a->weight_mem_bytes};
    for (int i = 0; i < 3; i++)
        if (vals[i] % wb != 0)
            return enpu_fail(err, ENPU_E_INVALID,
                             "arch '%s': field '%s': value %" PRId64
                             " must be a multiple of the %" PRId64 "-byte bus word",
                             nm, mems[i], vals[i], wb);
    if (a->itcm_bytes % ENPU_INSTR_BYTES != 0)
        return enpu_fail(err, ENPU_E_INVALID,
                         "arch '%s': field 'itcm_bytes': value %" PRId64
                         " must be a multiple of the %d-byte instruction",
                         nm, a->itcm_bytes, ENPU_INSTR_BYTES);
    enpu_isa_layout l;
    return enpu_isa_layout_make(a, &l, err);
}

/* ---- JSON ----------------------------------------------------------------- */

/* The canonical JSON; with_costs adds the cost figures (not part of the
 * fingerprint), host_cpu the hostcpu_ parameters (absent before format 3.2). */
static char *to_json(const enpu_arch *a, int pretty, int with_costs, bool host_cpu) {
    enpu_sb b = {0};
    const char *sep = pretty ? ",\n  " : ",";
    const char *colon = pretty ? ": " : ":";
    enpu_sb_puts(&b, pretty ? "{\n  " : "{");
    enpu_sb_printf(&b, "\"name\"%s", colon);
    enpu_sb_quote(&b, a->name);
    enpu_sb_printf(&b, "%s\"engine\"%s\"%s\"", sep, colon, enpu_engine_name(a->engine));
    if (a->requant != ENPU_REQUANT_EASYNPU)
        enpu_sb_printf(&b, "%s\"requant\"%s\"%s\"", sep, colon, enpu_requant_name(a->requant));
    for (int i = 0; i < N_PARAMS; i++) {
        if (!host_cpu && strncmp(params[i].key, "hostcpu_", 8) == 0) continue;
        /* An arch of another engine leaves the row-stationary parameters
         * out while they have their defaults: its canonical JSON, and so its
         * fingerprint, are those from before they existed (programs compiled
         * then still load). */
        if (i >= N_PARAMS - N_RS_PARAMS && a->engine != ENPU_ENGINE_ROWSTAT &&
            param_get(a, i) == params[i].preset[0])
            continue;
        /* lane_groups_max = 1 (no lane groups) is the absent key of the
         * machine part: the arch of every program written before lane
         * groups keeps its canonical form and fingerprint.  The full JSON a
         * user saves says it, since a file inherits an absent key from its
         * base (4 for easynpu). */
        if (param_get(a, i) == 1 && !with_costs && strcmp(params[i].key, "lane_groups_max") == 0) continue;
        /* likewise rs_filter_banks = 0, the engine before filter banks:
         * a row-stationary program compiled then keeps its fingerprint */
        if (param_get(a, i) == 0 && !with_costs && strcmp(params[i].key, "rs_filter_banks") == 0) continue;
        enpu_sb_printf(&b, "%s\"%s\"%s%" PRId64, sep, params[i].key, colon, param_get(a, i));
    }
    if (a->engine == ENPU_ENGINE_SYSTOLIC)
        for (int i = 0; i < N_SYA; i++)
            enpu_sb_printf(&b, "%s\"%s\"%s%" PRId64, sep, sya_params[i].key, colon, sya_get(a, i));
    char d[40];
    enpu_fmt_double(d, sizeof d, a->clock_mhz);
    enpu_sb_printf(&b, "%s\"clock_mhz\"%s%s", sep, colon, d);
    for (int i = 0; with_costs && i < N_COSTS; i++) {
        enpu_fmt_double(d, sizeof d, cost_get(a, i));
        enpu_sb_printf(&b, "%s\"%s\"%s%s", sep, costs[i].key, colon, d);
    }
    enpu_sb_puts(&b, pretty ? "\n}\n" : "}");
    return enpu_sb_take(&b);
}

char *enpu_arch_to_json(const enpu_arch *a, int pretty) { return to_json(a, pretty, 1, true); }

char *enpu_arch_machine_json(const enpu_arch *a) { return to_json(a, 0, 0, true); }

char *enpu_arch_to_json_3_1(const enpu_arch *a) { return to_json(a, 0, 0, false); }

uint32_t enpu_arch_fingerprint(const enpu_arch *a) {
    char *s = enpu_arch_machine_json(a);
    ENPU_ASSERT(s != NULL);
    uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)s, (uInt)strlen(s));
    free(s);
    return crc;
}

static int find_param(const char *key) {
    for (int i = 0; i < N_PARAMS; i++)
        if (strcmp(params[i].key, key) == 0) return i;
    return -1;
}

static int find_sya(const char *key) {
    for (int i = 0; i < N_SYA; i++)
        if (strcmp(sya_params[i].key, key) == 0) return i;
    return -1;
}

static int find_cost(const char *key) {
    for (int i = 0; i < N_COSTS; i++)
        if (strcmp(costs[i].key, key) == 0) return i;
    return -1;
}

static int from_json(const char *text, size_t n, const char *what, enpu_arch *out, enpu_err *err,
                     bool canonical);

int enpu_arch_from_json(const char *text, size_t n, const char *what, enpu_arch *out,
                        enpu_err *err) {
    return from_json(text, n, what, out, err, false);
}

int enpu_arch_from_canonical_json(const char *text, size_t n, const char *what, enpu_arch *out,
                                  enpu_err *err) {
    return from_json(text, n, what, out, err, true);
}

static int from_json(const char *text, size_t n, const char *what, enpu_arch *out, enpu_err *err,
                     bool canonical) {
    if (n > ENPU_ARCH_JSON_MAX)
        return enpu_fail(err, ENPU_E_LIMIT, "%s: arch JSON is %zu bytes, over the limit of %zu", what,
                         n, ENPU_ARCH_JSON_MAX);
    json_error_t je;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    if (!root && strstr(je.text, "too big integer")) {
        /* name the field: re-read with integers as reals to find it */
        json_t *r2 = json_loadb(text, n, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, NULL);
        const char *key;
        json_t *v;
        if (r2 && json_is_object(r2)) {
            json_object_foreach(r2, key, v) {
                if (json_is_real(v) && fabs(json_real_value(v)) >= 9.2e18) {
                    int rc = enpu_fail(err, ENPU_E_INVALID, "%s: field '%s': value %.17g out of range",
                                       what, key, json_real_value(v));
                    json_decref(r2);
                    return rc;
                }
            }
        }
        json_decref(r2);
    }
    if (!root)
        return enpu_fail(err, ENPU_E_FORMAT, "%s: line %d: not valid JSON: %s", what, je.line,
                         je.text);
    int rc = 0;
    if (!json_is_object(root)) {
        rc = enpu_fail(err, ENPU_E_FORMAT, "%s: an arch description must be a JSON object", what);
        goto done;
    }
    if ((rc = apply_json(root, what, out, err, canonical))) goto done;
    rc = enpu_arch_validate(out, err);
    if (rc) enpu_err_prefix(err, "%s", what);
done:
    json_decref(root);
    return rc;
}

/* Edit distance of a and b (both short keys), for "did you mean". */
static int edit_distance(const char *a, const char *b) {
    int n = (int)strlen(a), m = (int)strlen(b);
    if (n > 63 || m > 63) return 99;
    int d[64][64];
    for (int i = 0; i <= n; i++) d[i][0] = i;
    for (int j = 0; j <= m; j++) d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[n][m];
}

/* The known key nearest to `key` (NULL when none is within a third of its
 * length, or one edit of a short key): what an unknown key's message
 * suggests. */
static const char *nearest_key(const char *key) {
    static const char *const top[] = {"name", "engine", "requant", "base", "clock_mhz"};
    const char *best = NULL;
    int bd = (int)strlen(key) / 3 + 2; /* within a third of its length, and one edit always */
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        if (edit_distance(key, top[i]) < bd) bd = edit_distance(key, top[i]), best = top[i];
    for (int i = 0; i < N_PARAMS; i++)
        if (edit_distance(key, params[i].key) < bd) bd = edit_distance(key, params[i].key), best = params[i].key;
    for (int i = 0; i < N_SYA; i++)
        if (edit_distance(key, sya_params[i].key) < bd) bd = edit_distance(key, sya_params[i].key), best = sya_params[i].key;
    for (int i = 0; i < N_COSTS; i++)
        if (edit_distance(key, costs[i].key) < bd) bd = edit_distance(key, costs[i].key), best = costs[i].key;
    return best;
}

/* Fills *out from a JSON object: its base preset, then its keys.  A user's
 * file inherits every field of its base; `canonical` (a program's ARCH
 * section, enpu_arch_to_json's form) has every key but lane_groups_max 1,
 * which it leaves out (so programs from before lane groups keep their
 * fingerprint). */
static int apply_json(json_t *root, const char *what, enpu_arch *out, enpu_err *err, bool canonical) {
    int rc = 0;
    int base = 0;
    json_t *jb = json_object_get(root, "base"), *je2 = json_object_get(root, "engine");
    if (jb) {
        if (!json_is_string(jb) || (base = preset_index(json_string_value(jb))) < 0) {
            rc = enpu_fail(err, ENPU_E_INVALID,
                           "%s: field 'base': must be a preset name (easynpu, large, systolic, "
                           "systolic-1x4, systolic-4x1, rowstat, eyeriss)",
                           what);
            goto done;
        }
    } else if (je2 && json_is_string(je2) && strcmp(json_string_value(je2), "systolic") == 0) {
        base = FIRST_SYA_PRESET;
    }
    fill_preset(base, out);
    if (canonical) out->lane_groups_max = 1; /* absent: no lane groups (enpu_arch_to_json) */
    const char *key;
    json_t *v;
    const char *sya_key = NULL; /* a systolic parameter named: the engine must be systolic */
    json_object_foreach(root, key, v) {
        if (strcmp(key, "base") == 0) continue;
        if (strcmp(key, "name") == 0) {
            if (!json_is_string(v) || !valid_name(json_string_value(v))) {
                rc = enpu_fail(err, ENPU_E_INVALID,
                               "%s: field 'name': must be a string of 1..%d characters of "
                               "[A-Za-z0-9_.+-]",
                               what, ENPU_ARCH_NAME_MAX - 1);
                goto done;
            }
            snprintf(out->name, sizeof out->name, "%s", json_string_value(v));
        } else if (strcmp(key, "engine") == 0) {
            int e = json_is_string(v) ? enpu_engine_parse(json_string_value(v)) : -1;
            if (e < 0) {
                rc = enpu_fail(err, ENPU_E_INVALID,
                               "%s: field 'engine': must be \"easynpu\", \"systolic\" or \"rowstat\"",
                               what);
                goto done;
            }
            out->engine = (enpu_engine)e;
        } else if (strcmp(key, "requant") == 0) {
            int r = json_is_string(v) ? enpu_requant_parse(json_string_value(v)) : -1;
            if (r < 0) {
                rc = enpu_fail(err, ENPU_E_INVALID,
                               "%s: field 'requant': must be \"easynpu\" or \"tflite\"", what);
                goto done;
            }
            out->requant = (enpu_requant_mode)r;
        } else if (strcmp(key, "clock_mhz") == 0) {
            if (!json_is_number(v)) {
                rc = enpu_fail(err, ENPU_E_INVALID, "%s: field 'clock_mhz': must be a number", what);
                goto done;
            }
            out->clock_mhz = json_number_value(v);
        } else if (find_cost(key) >= 0) {
            int i = find_cost(key);
            if (!json_is_number(v)) {
                rc = enpu_fail(err, ENPU_E_INVALID, "%s: field '%s': must be a number (%s)", what,
                               key, costs[i].unit);
                goto done;
            }
            *cost_ref(out, i) = json_number_value(v);
        } else {
            int i = find_param(key), k = i < 0 ? find_sya(key) : -1;
            if (i < 0 && k < 0) {
                const char *near = nearest_key(key);
                rc = near ? enpu_fail(err, ENPU_E_INVALID, "%s: unknown key '%s' (did you mean '%s'?)", what,
                                      key, near)
                          : enpu_fail(err, ENPU_E_INVALID, "%s: unknown key '%s' (`easynpu arch` lists the "
                                      "keys)", what, key);
                goto done;
            }
            if (!json_is_integer(v)) {
                rc = enpu_fail(err, ENPU_E_INVALID, "%s: field '%s': must be an integer (%s)", what,
                               key, i >= 0 ? params[i].unit : sya_params[k].unit);
                goto done;
            }
            if (i >= 0) {
                *param_ref(out, i) = (int64_t)json_integer_value(v);
            } else {
                *sya_ref(out, k) = (int64_t)json_integer_value(v);
                sya_key = sya_params[k].key;
            }
        }
    }
    if (!sya_key && out->engine != ENPU_ENGINE_SYSTOLIC)
        for (int i = 0; i < N_SYA; i++) *sya_ref(out, i) = sya_params[i].dflt;
    /* a file without a name is named after itself, not after its base: the
     * reports then say which arch ran */
    if (!canonical && !json_object_get(root, "name")) {
        const char *b = strrchr(what, '/');
        b = b ? b + 1 : what;
        size_t n = strlen(b);
        if (n > 5 && strcmp(b + n - 5, ".json") == 0 && n - 5 < sizeof out->name) {
            char nm[ENPU_ARCH_NAME_MAX];
            snprintf(nm, sizeof nm, "%.*s", (int)(n - 5), b);
            if (valid_name(nm)) snprintf(out->name, sizeof out->name, "%s", nm);
        }
    }
    /* the fields enpu_arch_validate ties to pes follow it unless given, as
     * in a sweep: {"base": "easynpu", "pes": 32} is a 32-PE EasyNPU */
    if (!canonical && json_object_get(root, "pes")) {
        if (!json_object_get(root, "bus_bits")) out->bus_bits = 8 * out->pes;
        if (!json_object_get(root, "ifmap_pads")) out->ifmap_pads = out->pes;
        if (!json_object_get(root, "weight_pad_groups")) out->weight_pad_groups = out->pes;
    }
    if (sya_key && out->engine != ENPU_ENGINE_SYSTOLIC) {
        rc = enpu_fail(err, ENPU_E_INVALID,
                       "%s: field '%s': a systolic-engine parameter, but the engine is '%s'", what,
                       sya_key, enpu_engine_name(out->engine));
        goto done;
    }
done:
    return rc;
}

static int is_file_spec(const char *spec) {
    size_t n = strlen(spec);
    return strchr(spec, '/') != NULL || (n >= 5 && strcmp(spec + n - 5, ".json") == 0);
}

int enpu_arch_load(const char *spec, enpu_arch *out, enpu_err *err) {
    if (!is_file_spec(spec)) return enpu_arch_preset(spec, out, err);
    uint8_t *buf;
    size_t n;
    int rc = enpu_file_read(spec, ENPU_ARCH_JSON_MAX, &buf, &n, err);
    if (rc) return rc;
    rc = enpu_arch_from_json((const char *)buf, n, spec, out, err);
    free(buf);
    return rc;
}

/* ---- human and markdown tables --------------------------------------------- */

void enpu_arch_print(const enpu_arch *a, FILE *f) {
    fprintf(f, "arch %s (engine %s, requant %s, fingerprint 0x%08" PRIx32 ")\n", a->name,
            enpu_engine_name(a->engine), enpu_requant_name(a->requant), enpu_arch_fingerprint(a));
    fprintf(f, "  %-20s %12s  %-9s %s\n", "parameter", "value", "unit", "meaning");
    for (int i = 0; i < N_PARAMS; i++)
        fprintf(f, "  %-20s %12" PRId64 "  %-9s %s\n", params[i].key, param_get(a, i), params[i].unit,
                params[i].meaning);
    const bool sya = a->engine == ENPU_ENGINE_SYSTOLIC;
    if (sya)
        for (int i = 0; i < N_SYA; i++)
            fprintf(f, "  %-20s %12" PRId64 "  %-9s %s\n", sya_params[i].key, sya_get(a, i),
                    sya_params[i].unit, sya_params[i].meaning);
    char d[40];
    enpu_fmt_double(d, sizeof d, a->clock_mhz);
    fprintf(f, "  %-20s %12s  %-9s %s\n", "clock_mhz", d, "MHz", "clock for time figures");
    fprintf(f, "cost figures (energy and area per action and unit; docs/energy.md):\n");
    for (int i = 0; i < N_COSTS; i++) {
        enpu_fmt_double(d, sizeof d, cost_get(a, i));
        fprintf(f, "  %-20s %12s  %-9s %s\n", costs[i].key, d, costs[i].unit, costs[i].meaning);
    }
    enpu_fmt_double(d, sizeof d, a->clock_mhz);
    int64_t wb = enpu_arch_word_bytes(a);
    int64_t units = enpu_arch_mac_units(a);
    double peak = 2.0 * (double)units * a->clock_mhz / 1000.0;
    fprintf(f, "derived:\n");
    if (sya)
        fprintf(f, "  PE array             %5" PRId64 " x %-5" PRId64 " rows x columns (%" PRId64 " x %" PRId64
                   " banks of %" PRId64 " x %" PRId64 ")\n",
                enpu_arch_sya_rows(a), enpu_arch_sya_cols(a), a->sya_bank_rows,
                a->sya_banks / a->sya_bank_rows, a->sya_rows, a->sya_cols);
    fprintf(f, "  MAC units            %12" PRId64 "%s\n", units,
            a->engine == ENPU_ENGINE_ROWSTAT ? "  (the row-stationary PE array, rs_rows x rs_cols)" : "");
    fprintf(f, "  peak                 %12.3f  GOPS (2 ops per MAC)\n", peak);
    fprintf(f, "  bus word             %12" PRId64 "  bytes\n", wb);
    if (a->engine == ENPU_ENGINE_ROWSTAT) {
        /* the row-stationary engine uses no DTCM or weight memory: its own */
        char dims[32];
        snprintf(dims, sizeof dims, "%" PRId64 " x %" PRId64, a->rs_rows, a->rs_cols);
        fprintf(f, "  PE array             %12s  rows x columns\n", dims);
        fprintf(f, "  global buffer        %12" PRId64 "  bytes\n", a->rs_glb_bytes);
        fprintf(f, "  PE buffers           %12" PRId64 "  entries (ifmap loop buffer %" PRId64 ", filter loop buffer %" PRId64
                   ", input FIFO %" PRId64 ", psum RAM %" PRId64 ")\n",
                a->rs_ifmap_lb_depth + a->rs_filter_lb_depth + a->rs_fifo_depth + a->rs_psum_depth,
                a->rs_ifmap_lb_depth, a->rs_filter_lb_depth, a->rs_fifo_depth, a->rs_psum_depth);
    } else {
        fprintf(f, "  main DTCM            %12" PRId64 "  words\n", enpu_arch_words(a, a->main_dtcm_bytes));
        fprintf(f, "  skip DTCM            %12" PRId64 "  words\n", enpu_arch_words(a, a->skip_dtcm_bytes));
        fprintf(f, "  weight memory        %12" PRId64 "  words\n", enpu_arch_words(a, a->weight_mem_bytes));
    }
    fprintf(f, "  ITCM                 %12" PRId64 "  instructions\n", a->itcm_bytes / ENPU_INSTR_BYTES);
    if (a->dram_bytes > 0) {
        int64_t bpc = a->dram_bytes_per_cycle < wb ? a->dram_bytes_per_cycle : wb;
        fprintf(f, "  DRAM                 %12" PRId64 "  words\n", enpu_arch_words(a, a->dram_bytes));
        fprintf(f, "  DRAM bandwidth       %12.1f  MB/s (%" PRId64 " bytes per cycle reach a DMA)\n",
                (double)bpc * a->clock_mhz, bpc);
        fprintf(f, "  balance point        %12.1f  MACs per DRAM byte (compute-bound above)\n",
                (double)units / (double)bpc);
    } else {
        fprintf(f, "  DRAM                 %12s  (everything on chip)\n", "none");
    }
    enpu_isa_layout l;
    enpu_err e = {0};
    int have_layout = enpu_isa_layout_make(a, &l, &e) == 0;
    if (have_layout && a->engine == ENPU_ENGINE_ROWSTAT)
        fprintf(f, "  instruction          %12d  bits used of %d (rs_conv)\n", l.used_bits[ENPU_FMT_RS],
                ENPU_INSTR_BITS);
    else if (have_layout && sya)
        fprintf(f, "  instruction          %12d  bits used of %d (systolic format)\n", l.used_bits[ENPU_FMT_SYA],
                ENPU_INSTR_BITS);
    else if (have_layout)
        fprintf(f, "  instruction          %12d  bits used of %d (channel-wise; conv %d, dma %d)\n",
                l.used_bits[ENPU_FMT_CW], ENPU_INSTR_BITS, l.used_bits[ENPU_FMT_CONV],
                l.used_bits[ENPU_FMT_DMA]);
    /* What differs from the default preset, the clock above all: a preset
     * that is also faster changes every time figure at the same cycles. */
    enpu_arch base;
    const char *bn = sya ? "systolic" : "easynpu";
    if (enpu_arch_preset(bn, &base, &e) != 0) return;
    int n = 0;
    for (int i = 0; i < N_PARAMS; i++) {
        if (param_get(a, i) == param_get(&base, i)) continue;
        fprintf(f, "%s%s %" PRId64 " (%s %" PRId64 ")", n++ ? ", " : sya ? "vs preset 'systolic': " : "vs preset 'easynpu': ",
                params[i].key, param_get(a, i), bn, param_get(&base, i));
    }
    for (int i = 0; i < N_SYA && sya; i++) {
        if (sya_get(a, i) == sya_get(&base, i)) continue;
        fprintf(f, "%s%s %" PRId64 " (%s %" PRId64 ")", n++ ? ", " : "vs preset 'systolic': ",
                sya_params[i].key, sya_get(a, i), bn, sya_get(&base, i));
    }
    char bc[40];
    enpu_fmt_double(bc, sizeof bc, base.clock_mhz);
    if (a->clock_mhz != base.clock_mhz)
        fprintf(f, "%sclock_mhz %s (%s %s)", n++ ? ", " : sya ? "vs preset 'systolic': " : "vs preset 'easynpu': ", d, bn, bc);
    for (int i = 0; i < N_COSTS; i++) {
        if (cost_get(a, i) == cost_get(&base, i)) continue;
        fprintf(f, "%s%s %g (%s %g)", n++ ? ", " : sya ? "vs preset 'systolic': " : "vs preset 'easynpu': ",
                costs[i].key, cost_get(a, i), bn, cost_get(&base, i));
    }
    if (n) fprintf(f, "\n");
    if (a->clock_mhz != base.clock_mhz) {
        char r[40], t[40];
        enpu_fmt_double(r, sizeof r, a->clock_mhz / base.clock_mhz);
        enpu_fmt_double(t, sizeof t, base.clock_mhz / a->clock_mhz);
        fprintf(f, "note: clock_mhz %s is %sx %s's %s: the same cycles take %sx the time\n", d, r, bn, bc, t);
    }
}

char *enpu_arch_param_table_md(void) {
    enpu_sb b = {0};
    enpu_sb_puts(&b, "| key | unit | range | easynpu | large | meaning |\n|---|---|---|---|---|---|\n");
    enpu_sb_puts(&b, "| `name` | | 1..63 chars [A-Za-z0-9_.+-] | easynpu | large | name shown in reports |\n");
    enpu_sb_puts(&b, "| `engine` | | easynpu, systolic, rowstat | easynpu | easynpu | compute engine |\n");
    enpu_sb_puts(&b, "| `requant` | | easynpu, tflite | easynpu | easynpu | the requantizer's integer rules "
                     "(docs/numerics.md; tflite: TFLite's, its Q31 multipliers in the weight memory; "
                     "easynpu engine only) |\n");
    for (int i = 0; i < N_PARAMS; i++)
        enpu_sb_printf(&b, "| `%s` | %s | %" PRId64 "..%" PRId64 " | %" PRId64 " | %" PRId64 " | %s |\n",
                       params[i].key, params[i].unit, params[i].lo, params[i].hi, params[i].preset[0],
                       params[i].preset[1], params[i].meaning);
    enpu_sb_printf(&b, "| `clock_mhz` | MHz | (0, 1000000] | %g | %g | clock for time figures |\n",
                   preset_clock[0], preset_clock[1]);
    return enpu_sb_take(&b);
}

char *enpu_arch_sya_table_md(void) {
    enpu_sb b = {0};
    enpu_sb_puts(&b, "| key | unit | range | default | meaning |\n|---|---|---|---|---|\n");
    for (int i = 0; i < N_SYA; i++)
        enpu_sb_printf(&b, "| `%s` | %s | %" PRId64 "..%" PRId64 " | %" PRId64 " | %s |\n", sya_params[i].key,
                       sya_params[i].unit, sya_params[i].lo, sya_params[i].hi, sya_params[i].dflt,
                       sya_params[i].meaning);
    enpu_sb_puts(&b, "\nPresets (the shared parameters are preset easynpu's but for ");
    for (size_t k = 0; k < sizeof sya_shared / sizeof sya_shared[0]; k++)
        enpu_sb_printf(&b, "%s`%s` %" PRId64, k ? ", " : "", sya_shared[k].key, sya_shared[k].v);
    enpu_sb_puts(&b, "):\n\n| preset | `sya_bank_rows` | array (rows x columns) |\n|---|---|---|\n");
    for (int p = FIRST_SYA_PRESET; p < N_PRESETS; p++) {
        enpu_arch a;
        fill_preset(p, &a);
        enpu_sb_printf(&b, "| `%s` | %" PRId64 " | %" PRId64 " x %" PRId64 " |\n", preset_names[p],
                       a.sya_bank_rows, enpu_arch_sya_rows(&a), enpu_arch_sya_cols(&a));
    }
    return enpu_sb_take(&b);
}

char *enpu_arch_cost_table_md(void) {
    enpu_sb b = {0};
    enpu_sb_puts(&b, "| key | unit | range | default | source | meaning |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < N_COSTS; i++)
        enpu_sb_printf(&b, "| `%s` | %s | %.10g..%.10g | %.10g | %s | %s |\n", costs[i].key, costs[i].unit,
                       costs[i].lo, costs[i].hi, costs[i].dflt, costs[i].source, costs[i].meaning);
    return enpu_sb_take(&b);
}
