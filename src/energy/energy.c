/* The energy and area model: per-action energies and per-unit areas derived
 * from the arch's cost figures (arch.h ENPU_ARCH_COSTS) by the rules of
 * docs/energy.md, technology scaling, and counts times costs. */
#include "easynpu/energy.h"

#include <math.h>
#include <string.h>

const char *enpu_energy_part_name(enpu_energy_part p) {
    static const char *const names[] = {
#define ENPU_X_EP(id, name, level, eng) name,
        ENPU_ENERGY_PART_LIST(ENPU_X_EP)
#undef ENPU_X_EP
    };
    return (unsigned)p < ENPU_EP_COUNT ? names[p] : "unknown";
}

const char *enpu_energy_part_level(enpu_energy_part p) {
    static const char *const levels[] = {
#define ENPU_X_EP(id, name, level, eng) level,
        ENPU_ENERGY_PART_LIST(ENPU_X_EP)
#undef ENPU_X_EP
    };
    return (unsigned)p < ENPU_EP_COUNT ? levels[p] : "unknown";
}

const char *const enpu_energy_levels[] = {"datapath", "register file", "global buffer", "network", "dram", NULL};

bool enpu_energy_part_of_engine(enpu_energy_part p, enpu_engine e) {
    static const unsigned engines[] = {
#define ENPU_X_EP(id, name, level, eng) eng,
        ENPU_ENERGY_PART_LIST(ENPU_X_EP)
#undef ENPU_X_EP
    };
    return (unsigned)p < ENPU_EP_COUNT && (engines[p] >> e & 1u);
}

const char *enpu_area_part_name(enpu_area_part p) {
    static const char *const names[] = {
#define ENPU_X_AP(id, name, eng) name,
        ENPU_AREA_PART_LIST(ENPU_X_AP)
#undef ENPU_X_AP
    };
    return (unsigned)p < ENPU_AP_COUNT ? names[p] : "unknown";
}

bool enpu_area_part_of_engine(enpu_area_part p, enpu_engine e) {
    static const unsigned engines[] = {
#define ENPU_X_AP(id, name, eng) eng,
        ENPU_AREA_PART_LIST(ENPU_X_AP)
#undef ENPU_X_AP
    };
    return (unsigned)p < ENPU_AP_COUNT && (engines[p] >> e & 1u);
}

/* ---- technology scaling ---------------------------------------------------- */

/* Stillmaker and Baas, "Scaling equations for the accurate prediction of
 * CMOS device performance from 180 nm to 7 nm", Integration 58 (2017), as
 * tabulated by Accelergy's hwcomponents (scaling/techscaling.py): per node,
 * the area relative to 45 nm and the energy polynomial a*V^2 + b*V + c.
 * Between two nodes both are interpolated linearly in nm. */
static const struct {
    double nm, area, a, b, c;
} nodes[] = {
    {130, 6.4, 7.171, -6.709, 2.904},    {90, 2.8, 4.762, -4.781, 2.092},
    {65, 1.5, 3.755, -4.398, 1.975},     {45, 1.0, 1.103, -0.362, 0.2767},
    {32, 0.46, 0.9559, -0.7823, 0.471},  {20, 0.21, 0.373, -0.1582, 0.04104},
    {16, 0.19, 0.2958, -0.1241, 0.03024}, {14, 0.17, 0.2363, -0.09675, 0.02239},
    {10, 0.1, 0.2068, -0.09311, 0.02375}, {7, 0.059, 0.1776, -0.09097, 0.02447},
};
#define N_NODES ((int)(sizeof nodes / sizeof nodes[0]))
#define REF_NM 45.0
#define REF_VDD 0.9

/* Node i and weight t: the figure at nm is (1-t)*f[i] + t*f[i+1]. */
static void bracket(double nm, int *i, double *t) {
    if (nm >= nodes[0].nm) {
        *i = 0, *t = 0;
        return;
    }
    for (int k = 0; k + 1 < N_NODES; k++)
        if (nm <= nodes[k].nm && nm >= nodes[k + 1].nm) {
            *i = k;
            *t = (nodes[k].nm - nm) / (nodes[k].nm - nodes[k + 1].nm);
            return;
        }
    *i = N_NODES - 2, *t = 1;
}

static double energy_poly(double nm, double v) {
    int i;
    double t;
    bracket(nm, &i, &t);
    double e0 = (nodes[i].a * v + nodes[i].b) * v + nodes[i].c;
    double e1 = (nodes[i + 1].a * v + nodes[i + 1].b) * v + nodes[i + 1].c;
    return (1 - t) * e0 + t * e1;
}

static double area_factor(double nm) {
    int i;
    double t;
    bracket(nm, &i, &t);
    return (1 - t) * nodes[i].area + t * nodes[i + 1].area;
}

/* ---- per-action energies --------------------------------------------------- */

/* One access of w bits to a memory of `bytes` bytes, unscaled: Horowitz's
 * 64-bit access of an 8 KB SRAM, linear in the width and in the square root
 * of the capacity (the bit and word lines grow with the side of the array;
 * it gives his 32 KB figure, 20 pJ, exactly and 113 pJ for his 1 MB 100 pJ). */
static double storage_pj(const enpu_arch *a, double bytes, double bits) {
    return a->sram_pj * (bits / 64.0) * sqrt(bytes / 8192.0);
}

/* The accumulator width of the engine's PEs: acc_bits (EasyNPU),
 * sya_acc_bits (systolic), rs_psum_bits (row-stationary). */
static double acc_width(const enpu_arch *a) {
    if (a->engine == ENPU_ENGINE_SYSTOLIC) return (double)a->sya_acc_bits;
    if (a->engine == ENPU_ENGINE_ROWSTAT) return (double)a->rs_psum_bits;
    return (double)a->acc_bits;
}

/* A multiplier of b1 x b2 bits, relative to the 32 x 32 one: an array
 * multiplier's energy and area grow with the product of the operand widths
 * (it gives Horowitz's 8-bit figure from his 32-bit one within 3 %; the
 * 8-bit figures are used as they are). */
static double mult_frac(double b1, double b2) { return b1 * b2 / (32.0 * 32.0); }

/* The requantizer's multiply: the accumulator by the mult_bits multiplier. */
static double rq_mult_frac(const enpu_arch *a) { return mult_frac(acc_width(a), (double)a->mult_bits); }

/* The row-stationary PE's data: 16 bits wide (the engine runs --bits 16;
 * an 8-bit run uses the same scratchpads). */
#define RS_DATA_BITS 16.0

/* ---- row-stationary: scratchpad area --------------------------------------- */

/* Area of a row-stationary scratchpad of `entries` entries of `bits` bits
 * (um2 per PE, 45 nm).  Up to RS_FF_ENTRIES entries it is a register file
 * of flip-flops, as EasyNPU's pads; deeper, an SRAM macro (sram_um2 per
 * bit).  Eyeriss builds its 12-entry ifmap and 24-entry psum pads from
 * registers and its 224-entry filter pad in SRAM (Chen et al., JSSC 2017);
 * a 2048-entry FIFO of flip-flops would make the `rowstat` preset's PE
 * 0.33 mm2 and its side, which every network wire crosses, 0.58 mm. */
#define RS_FF_ENTRIES 64
static double rs_spad_um2(const enpu_arch *a, int64_t entries, double bits) {
    return (double)entries * bits * (entries <= RS_FF_ENTRIES ? a->ff_um2 : a->sram_um2);
}

/* Area of one PE of the systolic array (um2, 45 nm): its MAC, its two
 * operand registers and its accumulator. */
static double sya_pe_um2(const enpu_arch *a) {
    const double acc = acc_width(a);
    return a->mult8_um2 + a->add32_um2 * acc / 32.0 + (16.0 + acc) * a->ff_um2;
}

/* Area of one row-stationary PE (um2, 45 nm): its 16-bit MAC and its
 * scratchpads (the FIFO, the ifmap and filter loop buffers of 16-bit
 * entries, the psum RAM; rs_spad_um2). */
static double rs_pe_um2(const enpu_arch *a) {
    const double acc = acc_width(a);
    double spad = rs_spad_um2(a, a->rs_fifo_depth, RS_DATA_BITS) + rs_spad_um2(a, a->rs_ifmap_lb_depth, RS_DATA_BITS) +
                  rs_spad_um2(a, a->rs_filter_lb_depth, RS_DATA_BITS) + rs_spad_um2(a, a->rs_psum_depth, acc);
    return a->mult32_um2 * mult_frac(RS_DATA_BITS, RS_DATA_BITS) + a->add32_um2 * acc / 32.0 + spad;
}

void enpu_energy_costs_of(const enpu_arch *a, enpu_energy_costs *c) {
    memset(c, 0, sizeof *c);
    c->engine = a->engine;
    const double es = energy_poly(a->tech_nm, a->vdd_v) / energy_poly(REF_NM, REF_VDD);
    const double acc = acc_width(a), wbits = (double)a->bus_bits;
    c->energy_scale = es;
    c->wire_scale = (a->vdd_v / REF_VDD) * (a->vdd_v / REF_VDD);
    c->area_scale = area_factor(a->tech_nm);
    /* the adders scale linearly with width between Horowitz's 8 and 32 bits */
    const double add_acc = a->add32_pj * acc / 32.0;
    c->uop_pj[ENPU_UOP_MAC] = (a->mult8_pj + add_acc) * es;
    c->uop_pj[ENPU_UOP_MAC16] = (a->mult32_pj * mult_frac(16, 16) + add_acc) * es;
    c->uop_pj[ENPU_UOP_ALU] = a->add8_pj * es;
    c->uop_pj[ENPU_UOP_REQUANT] = (a->mult32_pj * rq_mult_frac(a) + a->add32_pj + 2 * a->add8_pj) * es;
    /* segment index (an 8-bit subtract and shift) and the read of its slope
     * and offset (8 + acc bits) from the act_segments-entry table */
    c->uop_pj[ENPU_UOP_LOOKUP] =
        (a->add8_pj + storage_pj(a, (double)a->act_segments * (8 + acc) / 8, 8 + acc)) * es;
    double mem[ENPU_MEM_COUNT] = {
        [ENPU_MEM_MAIN_DTCM] = storage_pj(a, (double)a->main_dtcm_bytes, wbits),
        [ENPU_MEM_SKIP_DTCM] = storage_pj(a, (double)a->skip_dtcm_bytes, wbits),
        [ENPU_MEM_WEIGHT_MEM] = storage_pj(a, (double)a->weight_mem_bytes, wbits),
        [ENPU_MEM_ITCM] = storage_pj(a, (double)a->itcm_bytes, wbits),
        [ENPU_MEM_IFMAP_PAD] = storage_pj(a, (double)a->ifmap_pad_depth, 8),
        [ENPU_MEM_WEIGHT_PAD] = storage_pj(a, (double)a->weight_pad_depth, 8),
        [ENPU_MEM_PSUM] = storage_pj(a, (double)a->psum_depth * acc / 8, acc),
    };
    double pe_um2 = 0;
    if (a->engine == ENPU_ENGINE_SYSTOLIC) {
        /* an operand register is one byte; the accumulator one entry; the
         * re-shaping buffer a word per array row, written a byte at a time
         * and read a word at a time (below).  Each row assembles its own
         * word from its own MUX's results and writes it on its own
         * (sync_shape.c), so an access touches that row's word register,
         * not the buffer of all rows: priced as a register file of one word
         * (was the whole rows x word buffer, sqrt(rows) = 5.7 times dearer
         * on the presets) */
        mem[ENPU_MEM_PE_REG] = storage_pj(a, 1, 8);
        mem[ENPU_MEM_ACC] = storage_pj(a, acc / 8, acc);
        mem[ENPU_MEM_SHAPE] = storage_pj(a, wbits / 8, 8);
        pe_um2 = sya_pe_um2(a);
    } else if (a->engine == ENPU_ENGINE_ROWSTAT) {
        mem[ENPU_MEM_PSUM] = storage_pj(a, (double)a->rs_psum_depth * acc / 8, acc);
        mem[ENPU_MEM_PE_FIFO] = storage_pj(a, (double)a->rs_fifo_depth * RS_DATA_BITS / 8, RS_DATA_BITS);
        mem[ENPU_MEM_IFMAP_LB] = storage_pj(a, (double)a->rs_ifmap_lb_depth * RS_DATA_BITS / 8, RS_DATA_BITS);
        mem[ENPU_MEM_FILTER_LB] = storage_pj(a, (double)a->rs_filter_lb_depth * RS_DATA_BITS / 8, RS_DATA_BITS);
        /* the global buffer counts bytes, read and written in bus words */
        mem[ENPU_MEM_GLB] = storage_pj(a, (double)a->rs_glb_bytes, wbits) / (wbits / 8);
        /* alu: the collector's add of a psum to the one the block's earlier
         * passes kept in the global buffer, acc bits wide */
        c->uop_pj[ENPU_UOP_ALU] = add_acc * es;
        pe_um2 = rs_pe_um2(a);
    }
    for (int m = 0; m < ENPU_MEM_COUNT; m++) c->read_pj[m] = c->write_pj[m] = mem[m] * es;
    /* wires: the side of a PE from its area (scaled to the node) */
    c->pe_pitch_mm = sqrt(pe_um2 * c->area_scale) / 1000.0;
    const double wire = a->wire_pj * c->wire_scale; /* pJ per bit and mm */
    if (a->engine == ENPU_ENGINE_SYSTOLIC) {
        /* the re-shaping buffer's word read (one row's word, above); a
         * result travels from its PE to the row's MUX at the bank's edge
         * (counted once, as a read): column c of the bank's NUM_COL is c
         * pitches away, half a bank row on average (was the whole row, twice
         * the mean); an operand value one PE */
        c->read_pj[ENPU_MEM_SHAPE] = storage_pj(a, wbits / 8, wbits) * es;
        c->read_pj[ENPU_MEM_MUX] = wire * (double)a->sya_cols / 2 * c->pe_pitch_mm * acc;
        c->write_pj[ENPU_MEM_MUX] = 0;
        c->hop_pj = wire * c->pe_pitch_mm * 8;
    } else if (a->engine == ENPU_ENGINE_ROWSTAT) {
        /* ---- row-stationary: the networks (docs/rowstat.md "Statistics") ----
         * A value the global buffer sends (a noc read) drives the network's
         * bus down the column of row nodes (rows PEs); each row node that
         * passes it (a noc write) latches it (one 16-bit register write) and
         * drives its row's bus along the columns (columns PEs).  Counting
         * the row buses, not one per value, prices a value multicast to a
         * diagonal across nk rows nk times: the rows it crosses.  The PE that
         * takes it writes its FIFO or filter loop buffer (counted there). */
        c->read_pj[ENPU_MEM_NOC] = wire * (double)a->rs_rows * c->pe_pitch_mm * RS_DATA_BITS;
        c->write_pj[ENPU_MEM_NOC] = wire * (double)a->rs_cols * c->pe_pitch_mm * RS_DATA_BITS +
                                    storage_pj(a, RS_DATA_BITS / 8, RS_DATA_BITS) * es;
        /* a psum (acc bits) latched into a PE's output register (a write)
         * and taken by the PE below, one PE away (a read) */
        c->write_pj[ENPU_MEM_PSUM_LINK] = storage_pj(a, acc / 8, acc) * es;
        c->read_pj[ENPU_MEM_PSUM_LINK] = wire * c->pe_pitch_mm * acc;
        /* the output network: a psum from a column's bottom PE driven along
         * the bottom row and up to the collector (columns + rows PEs, as a
         * multicast value's buses; a read), latched there (a write) */
        c->read_pj[ENPU_MEM_PSUM_NET] = wire * (double)(a->rs_rows + a->rs_cols) * c->pe_pitch_mm * acc;
        c->write_pj[ENPU_MEM_PSUM_NET] = storage_pj(a, acc / 8, acc) * es;
    }
    /* DRAM is another chip: its energy per byte is not scaled with tech_nm */
    c->read_pj[ENPU_MEM_OFFCHIP] = c->write_pj[ENPU_MEM_OFFCHIP] = a->dram_pj * wbits / 8;
    c->bus_word_pj = a->wire_pj * a->bus_mm * wbits * c->wire_scale;
}

void enpu_energy_of(const enpu_energy_costs *c, const uint64_t reads[ENPU_MEM_COUNT],
                    const uint64_t writes[ENPU_MEM_COUNT], const uint64_t uops[ENPU_UOP_COUNT],
                    enpu_energy *out) {
    static const int part_of_mem[ENPU_MEM_COUNT] = {
        [ENPU_MEM_MAIN_DTCM] = ENPU_EP_MAIN_DTCM,   [ENPU_MEM_SKIP_DTCM] = ENPU_EP_SKIP_DTCM,
        [ENPU_MEM_WEIGHT_MEM] = ENPU_EP_WEIGHT_MEM, [ENPU_MEM_ITCM] = ENPU_EP_ITCM,
        [ENPU_MEM_IFMAP_PAD] = ENPU_EP_IFMAP_PAD,   [ENPU_MEM_WEIGHT_PAD] = ENPU_EP_WEIGHT_PAD,
        [ENPU_MEM_PSUM] = ENPU_EP_PSUM,             [ENPU_MEM_OFFCHIP] = ENPU_EP_DRAM,
        [ENPU_MEM_GLB] = ENPU_EP_GLB,               [ENPU_MEM_NOC] = ENPU_EP_NOC,
        [ENPU_MEM_PE_FIFO] = ENPU_EP_PE_FIFO,       [ENPU_MEM_IFMAP_LB] = ENPU_EP_IFMAP_LB,
        [ENPU_MEM_FILTER_LB] = ENPU_EP_FILTER_LB,   [ENPU_MEM_PE_REG] = ENPU_EP_PE_REG,
        [ENPU_MEM_ACC] = ENPU_EP_ACC,               [ENPU_MEM_MUX] = ENPU_EP_MUX,
        [ENPU_MEM_SHAPE] = ENPU_EP_SHAPE,
        [ENPU_MEM_PSUM_LINK] = ENPU_EP_PSUM_LINK,   [ENPU_MEM_PSUM_NET] = ENPU_EP_PSUM_NET,
    };
    static const int part_of_uop[ENPU_UOP_COUNT] = {
        [ENPU_UOP_MAC] = ENPU_EP_MAC, [ENPU_UOP_ALU] = ENPU_EP_ALU,
        [ENPU_UOP_REQUANT] = ENPU_EP_REQUANT, [ENPU_UOP_LOOKUP] = ENPU_EP_LOOKUP,
        [ENPU_UOP_MAC16] = ENPU_EP_MAC,
    };
    memset(out, 0, sizeof *out);
    for (int o = 0; o < ENPU_UOP_COUNT; o++) out->part_pj[part_of_uop[o]] += (double)uops[o] * c->uop_pj[o];
    uint64_t bus = 0;
    for (int m = 0; m < ENPU_MEM_COUNT; m++) {
        out->part_pj[part_of_mem[m]] +=
            (double)reads[m] * c->read_pj[m] + (double)writes[m] * c->write_pj[m];
        if (m == ENPU_MEM_MAIN_DTCM || m == ENPU_MEM_SKIP_DTCM || m == ENPU_MEM_WEIGHT_MEM ||
            m == ENPU_MEM_ITCM)
            bus += reads[m] + writes[m];
    }
    out->part_pj[ENPU_EP_BUS] = (double)bus * c->bus_word_pj;
    out->part_pj[ENPU_EP_PE_LINK] = (double)writes[ENPU_MEM_PE_REG] * c->hop_pj;
    for (int p = 0; p < ENPU_EP_COUNT; p++) out->total_pj += out->part_pj[p];
}

/* ---- area ------------------------------------------------------------------- */

void enpu_area_of(const enpu_arch *a, enpu_area *out) {
    memset(out, 0, sizeof *out);
    const double s = area_factor(a->tech_nm), acc = acc_width(a);
    const double ff = a->ff_um2, sram = a->sram_um2 * 8;
    const double rq = a->mult32_um2 * rq_mult_frac(a) + a->add32_um2 + 2 * a->add8_um2;
    out->part_um2[ENPU_AP_ITCM] = (double)a->itcm_bytes * sram;
    if (a->engine == ENPU_ENGINE_SYSTOLIC) {
        const double pes = (double)enpu_arch_mac_units(a), rows = (double)enpu_arch_sya_rows(a);
        const double bank_cols = (double)(a->sya_banks / a->sya_bank_rows);
        out->part_um2[ENPU_AP_MAC] = pes * (a->mult8_um2 + a->add32_um2 * acc / 32.0);
        out->part_um2[ENPU_AP_PE_REG] = pes * 16 * ff;
        out->part_um2[ENPU_AP_ACC] = pes * acc * ff;
        /* one requantizer behind each row's MUX of each bank column */
        out->part_um2[ENPU_AP_REQUANT] = rows * bank_cols * rq;
        out->part_um2[ENPU_AP_SHAPE] = rows * (double)a->bus_bits * ff;
        out->part_um2[ENPU_AP_MAIN_DTCM] = (double)a->main_dtcm_bytes * sram;
        out->part_um2[ENPU_AP_WEIGHT_MEM] = (double)a->weight_mem_bytes * sram;
    } else if (a->engine == ENPU_ENGINE_ROWSTAT) {
        const double pes = (double)enpu_arch_mac_units(a);
        out->part_um2[ENPU_AP_MAC] =
            pes * (a->mult32_um2 * mult_frac(RS_DATA_BITS, RS_DATA_BITS) + a->add32_um2 * acc / 32.0);
        out->part_um2[ENPU_AP_PE_FIFO] = pes * rs_spad_um2(a, a->rs_fifo_depth, RS_DATA_BITS);
        out->part_um2[ENPU_AP_IFMAP_LB] = pes * rs_spad_um2(a, a->rs_ifmap_lb_depth, RS_DATA_BITS);
        out->part_um2[ENPU_AP_FILTER_LB] = pes * rs_spad_um2(a, a->rs_filter_lb_depth, RS_DATA_BITS);
        out->part_um2[ENPU_AP_PSUM] = pes * rs_spad_um2(a, a->rs_psum_depth, acc);
        /* the collector requantizes the psums leaving the array, as many a
         * cycle as the psum network carries */
        out->part_um2[ENPU_AP_REQUANT] = (double)a->rs_psum_net_values * rq;
        out->part_um2[ENPU_AP_GLB] = (double)a->rs_glb_bytes * sram;
    } else {
        const double units = (double)(a->pes * a->pe_rows);
        out->part_um2[ENPU_AP_MAC] = units * (a->mult8_um2 + a->add32_um2 * acc / 32.0);
        out->part_um2[ENPU_AP_REQUANT] = units * rq;
        out->part_um2[ENPU_AP_PSUM] = units * (double)a->psum_depth * acc * ff;
        out->part_um2[ENPU_AP_IFMAP_PAD] = (double)(a->ifmap_pads * a->ifmap_pad_depth) * 8 * ff;
        out->part_um2[ENPU_AP_WEIGHT_PAD] = (double)(a->weight_pad_groups * a->weight_pad_depth) * 8 * ff;
        /* per PE column: bias, M, S (6 bits) and bn multiplier of each of the
         * weight_pad_depth psum words a tile may hold (zs <= Dw), and the
         * activation table's slopes and offsets */
        double per_pe = (double)a->weight_pad_depth * (acc + (double)a->mult_bits + 6 + 8) +
                        (double)a->act_segments * (8 + acc);
        out->part_um2[ENPU_AP_PARAM_REGS] = (double)a->pes * per_pe * ff;
        out->part_um2[ENPU_AP_MAIN_DTCM] = (double)a->main_dtcm_bytes * sram;
        out->part_um2[ENPU_AP_SKIP_DTCM] = (double)a->skip_dtcm_bytes * sram;
        out->part_um2[ENPU_AP_WEIGHT_MEM] = (double)a->weight_mem_bytes * sram;
    }
    for (int p = 0; p < ENPU_AP_COUNT; p++) {
        out->part_um2[p] *= s;
        out->total_um2 += out->part_um2[p];
    }
}

void enpu_energy_summarize(const enpu_arch *a, uint64_t cycles, double pj, enpu_energy_summary *out) {
    out->energy_pj = pj;
    out->time_us = (double)cycles / a->clock_mhz;
    /* pJ / us = uW */
    out->power_mw = out->time_us > 0 ? pj / out->time_us / 1000.0 : 0.0;
    out->edp_js = pj * 1e-12 * out->time_us * 1e-6;
}
