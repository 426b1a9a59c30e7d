/* Program -> text listing that enpu_program_asm turns back into the same
 * bytes (docs/program.md "Listing"). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "easynpu/program.h"
#include "isa/isa_internal.h"
#include "isa/listing.h"

const char *enpu_listing_mem_name(int mem) {
    switch (mem) {
    case ENPU_MEM_MAIN: return "main";
    case ENPU_MEM_SKIP: return "skip";
    case ENPU_MEM_HOST: return "host";
    case ENPU_MEM_DRAM: return "dram";
    }
    return NULL;
}

const char *enpu_listing_dir_name(int dir) {
    switch (dir) {
    case ENPU_IO_INPUT: return "input";
    case ENPU_IO_OUTPUT: return "output";
    case ENPU_IO_HOST: return "host";
    case ENPU_IO_PROBE: return "probe";
    case ENPU_IO_CONST: return "const";
    }
    return NULL;
}

const char *enpu_listing_layout_name(int layout) {
    switch (layout) {
    case ENPU_LAYOUT_ANY: return "any";
    case ENPU_LAYOUT_NCHW: return "nchw";
    case ENPU_LAYOUT_NHWC: return "nhwc";
    }
    return NULL;
}

static void put_float(enpu_sb *b, float f) {
    char buf[48];
    snprintf(buf, sizeof buf, "%.9g", (double)f);
    enpu_sb_puts(b, buf);
}

static void put_image(enpu_sb *b, const char *name, const uint8_t *d, size_t n, int64_t wb) {
    enpu_sb_printf(b, "\n.section %s\t; %zu bytes\n", name, n);
    size_t zeros = 0;
    for (size_t off = 0; off < n; off += 16) {
        size_t k = n - off < 16 ? n - off : 16;
        int allzero = k == 16;
        for (size_t i = 0; i < k && allzero; i++) allzero = d[off + i] == 0;
        if (allzero) {
            zeros += 16;
            continue;
        }
        if (zeros) {
            enpu_sb_printf(b, ".zero %zu\n", zeros);
            zeros = 0;
        }
        enpu_sb_puts(b, ".hex ");
        for (size_t i = 0; i < k; i++) enpu_sb_printf(b, "%02x", d[off + i]);
        if (off % (size_t)wb == 0)
            enpu_sb_printf(b, "%*s; word %zu", (int)(2 * (16 - k) + 1), "", off / (size_t)wb);
        enpu_sb_puts(b, "\n");
    }
    if (zeros) enpu_sb_printf(b, ".zero %zu\n", zeros);
}

static void put_list_i(enpu_sb *b, const char *key, const int32_t *v, int n) {
    while (n > 0 && v[n - 1] == 0) n--;
    if (!n) return;
    enpu_sb_printf(b, " %s=", key);
    for (int i = 0; i < n; i++) enpu_sb_printf(b, "%s%" PRId32, i ? "," : "", v[i]);
}

char *enpu_program_disasm(const enpu_program *p, enpu_err *err) {
    enpu_sb b = {0};
    enpu_sb_puts(&b, "; EasyNPU program listing: `easynpu asm THIS -o PROG.enpu` rebuilds the program\n");
    enpu_sb_printf(&b, ".format %d.%d\n", ENPU_PROG_VERSION_MAJOR, ENPU_PROG_VERSION_MINOR);
    char *aj = enpu_arch_machine_json(&p->arch);
    if (!aj) {
        enpu_sb_free(&b);
        enpu_fail(err, ENPU_E_NOMEM, "out of memory");
        return NULL;
    }
    enpu_sb_printf(&b, ".arch %s\n", aj);
    free(aj);
    enpu_sb_printf(&b, "\n; %d instructions\n", p->n_instr);
    for (int i = 0; i < p->n_instr; i++) {
        const enpu_layer_info *l = &p->layers[i];
        char line[ENPU_INSTR_FMT_MAX];
        int k = enpu_instr_format(&p->instr[i], l->name[0] ? l->name : NULL, line, sizeof line);
        if (k < 0 || (size_t)k >= sizeof line) {
            /* the name made it long: format into a growing buffer instead */
            char *big = malloc((size_t)(k < 0 ? 0 : k) + 1);
            if (!big) {
                enpu_sb_free(&b);
                enpu_fail(err, ENPU_E_NOMEM, "out of memory");
                return NULL;
            }
            enpu_instr_format(&p->instr[i], l->name[0] ? l->name : NULL, big, (size_t)k + 1);
            enpu_sb_puts(&b, big);
            free(big);
        } else {
            enpu_sb_puts(&b, line);
        }
        for (int s = 0; s < l->n_src; s++) {
            enpu_sb_puts(&b, " src=");
            enpu_sb_quote(&b, l->src[s]);
        }
        if (l->tensor && l->tensor[0]) {
            enpu_sb_puts(&b, " out=");
            enpu_sb_quote(&b, l->tensor);
        }
        if (l->io >= 0) enpu_sb_printf(&b, " out_io=%d", l->io);
        if (l->group != i) enpu_sb_printf(&b, " group=%d", l->group);
        if (l->macs != enpu_layer_default_macs(&p->instr[i])) enpu_sb_printf(&b, " macs=%" PRId64, l->macs);
        enpu_sb_printf(&b, "\t; %d\n", i);
    }
    if (p->n_tables) enpu_sb_puts(&b, "\n");
    for (int i = 0; i < p->n_tables; i++) {
        const enpu_table_desc *t = &p->tables[i];
        enpu_sb_puts(&b, ".table name=");
        enpu_sb_quote(&b, t->name);
        enpu_sb_printf(&b, " addr=%" PRIu32 " segments=%" PRIu32 " max_err_lsb=", t->addr, t->segments);
        put_float(&b, t->max_err_lsb);
        enpu_sb_printf(&b, "\t; table %d\n", i);
    }
    if (p->n_io) enpu_sb_puts(&b, "\n");
    for (int i = 0; i < p->n_io; i++) {
        const enpu_io_desc *d = &p->io[i];
        enpu_sb_printf(&b, ".io %s name=", enpu_listing_dir_name(d->dir));
        enpu_sb_quote(&b, d->name);
        enpu_sb_printf(&b, " dtype=%s layout=%s shape=", enpu_dtype_name(d->dtype),
                       enpu_listing_layout_name(d->layout));
        if (d->rank == 0) enpu_sb_puts(&b, "scalar");
        for (int k = 0; k < d->rank; k++) enpu_sb_printf(&b, "%s%" PRId64, k ? "x" : "", d->dims[k]);
        if (d->row) enpu_sb_printf(&b, " row=%" PRId64, d->row);
        enpu_sb_puts(&b, " scale=");
        put_float(&b, d->scale);
        enpu_sb_printf(&b, " zero_point=%" PRId32 " mem=%s addr=%" PRIu32 "\t; io %d\n", d->zero_point,
                       enpu_listing_mem_name(d->mem), d->addr, i);
    }
    if (p->n_hostops) enpu_sb_puts(&b, "\n");
    for (int i = 0; i < p->n_hostops; i++) {
        const enpu_hostop *h = &p->hostops[i];
        enpu_sb_puts(&b, ".hostop kind=");
        enpu_sb_quote(&b, h->kind);
        enpu_sb_puts(&b, " name=");
        enpu_sb_quote(&b, h->name);
        enpu_sb_puts(&b, " in=");
        for (int k = 0; k < h->n_in; k++) enpu_sb_printf(&b, "%s%d", k ? "," : "", h->io[k]);
        enpu_sb_puts(&b, " out=");
        for (int k = 0; k < h->n_out; k++) enpu_sb_printf(&b, "%s%d", k ? "," : "", h->io[h->n_in + k]);
        put_list_i(&b, "iparam", h->iparam, ENPU_HOSTOP_IPARAMS);
        int nf = ENPU_HOSTOP_FPARAMS;
        while (nf > 0 && h->fparam[nf - 1] == 0 && !signbit(h->fparam[nf - 1])) nf--;
        if (nf) {
            enpu_sb_puts(&b, " fparam=");
            for (int k = 0; k < nf; k++) {
                if (k) enpu_sb_puts(&b, ",");
                put_float(&b, h->fparam[k]);
            }
        }
        enpu_sb_printf(&b, "\t; hostop %d\n", i);
    }
    int64_t wb = enpu_arch_word_bytes(&p->arch);
    put_image(&b, "weights", p->weights, p->weights_len, wb);
    put_image(&b, "dtcm_init", p->dtcm_init, p->dtcm_init_len, wb);
    put_image(&b, "skip_init", p->skip_init, p->skip_init_len, wb);
    put_image(&b, "dram_init", p->dram_init, p->dram_init_len, wb);
    put_image(&b, "host_init", p->host_init, p->host_init_len, wb);
    char *s = enpu_sb_take(&b);
    if (!s) enpu_fail(err, ENPU_E_NOMEM, "out of memory writing the listing");
    return s;
}
