/* Memory images as $readmemh files for an RTL testbench (docs/program.md
 * "Export"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "easynpu/file.h"
#include "easynpu/program.h"
#include "isa/isa_internal.h"

/* One line per word of wb bytes, most significant byte first; the image is
 * zero-filled to a whole word. */
static void hex_words(enpu_sb *b, const uint8_t *d, size_t n, size_t wb) {
    for (size_t off = 0; off < n; off += wb) {
        for (size_t i = wb; i-- > 0;) {
            size_t k = off + i;
            enpu_sb_printf(b, "%02x", k < n ? d[k] : 0);
        }
        enpu_sb_puts(b, "\n");
    }
}

static int write_out(const char *dir, const char *file, enpu_sb *b, const char *const *inputs,
                     int n_inputs, enpu_err *err) {
    size_t len = strlen(dir) + strlen(file) + 2;
    char *path = malloc(len);
    if (!path || b->oom) {
        free(path);
        return enpu_fail(err, ENPU_E_NOMEM, "out of memory exporting %s", file);
    }
    snprintf(path, len, "%s/%s", dir, file);
    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i] && (strcmp(inputs[i], path) == 0 || enpu_same_file(inputs[i], path))) {
            int rc = enpu_fail(err, ENPU_E_USAGE, "%s: is an input; refusing to overwrite it", path);
            free(path);
            return rc;
        }
    }
    int rc = enpu_file_write_atomic(path, b->s ? b->s : "", b->len, err);
    free(path);
    return rc;
}

const char *const enpu_hex_files[] = {"itcm.hex", "weights.hex", "dtcm.hex", "skip.hex", "dram.hex",
                                       "manifest.json", NULL};

int enpu_program_export_hex(const enpu_program *p, const char *dir, const char *const *inputs,
                            int n_inputs, enpu_err *err) {
    int rc = enpu_program_validate(p, err);
    if (rc) return rc;
    enpu_isa_layout l;
    rc = enpu_isa_layout_make(&p->arch, &l, err);
    if (rc) return rc;
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) return enpu_fail(err, ENPU_E_IO, "%s: exists and is not a directory", dir);
    } else if (mkdir(dir, 0777) != 0) {
        return enpu_fail(err, ENPU_E_IO, "%s: cannot create directory: %s", dir, strerror(errno));
    }
    const enpu_arch *a = &p->arch;
    size_t wb = (size_t)enpu_arch_word_bytes(a);
    uint32_t fp = enpu_arch_fingerprint(a);

    enpu_sb b = {0};
    enpu_sb_printf(&b, "// easynpu itcm: %d instructions x 4 lines of 128 bits, instruction bits "
                       "[127:0] first; arch %s 0x%08" PRIx32 "\n", p->n_instr, a->name, fp);
    for (int i = 0; i < p->n_instr; i++) {
        uint8_t w[ENPU_INSTR_BYTES];
        rc = enpu_instr_encode(&l, &p->instr[i], w, err);
        if (rc) {
            enpu_sb_free(&b);
            return enpu_err_prefix(err, "section INSTR: instruction %d", i);
        }
        hex_words(&b, w, sizeof w, 16);
    }
    rc = write_out(dir, enpu_hex_files[0], &b, inputs, n_inputs, err);
    enpu_sb_free(&b);
    if (rc) return rc;

    struct {
        const char *file, *mem;
        const uint8_t *d;
        size_t n;
        int64_t bytes;
    } img[] = {{enpu_hex_files[1], "weight memory", p->weights, p->weights_len, a->weight_mem_bytes},
               {enpu_hex_files[2], "main DTCM", p->dtcm_init, p->dtcm_init_len, a->main_dtcm_bytes},
               {enpu_hex_files[3], "skip DTCM", p->skip_init, p->skip_init_len, a->skip_dtcm_bytes},
               {enpu_hex_files[4], "DRAM", NULL, 0, a->dram_bytes}};
    /* DRAM: the image, with the instructions in front when the program is
     * fetched from DRAM (docs/program.md) */
    int64_t iw = enpu_program_dram_instr_words(p);
    size_t dn = p->dram_init_len > (size_t)iw * wb ? p->dram_init_len : (size_t)iw * wb;
    uint8_t *dram = dn ? calloc(dn, 1) : NULL;
    if (dn && !dram) return enpu_fail(err, ENPU_E_NOMEM, "out of memory");
    if (p->dram_init_len) memcpy(dram, p->dram_init, p->dram_init_len);
    for (int i = 0; iw > 0 && i < p->n_instr; i++) {
        rc = enpu_instr_encode(&l, &p->instr[i], dram + (size_t)i * ENPU_INSTR_BYTES, err);
        if (rc) {
            free(dram);
            return enpu_err_prefix(err, "section INSTR: instruction %d", i);
        }
    }
    img[3].d = dram, img[3].n = dn;
    for (size_t i = 0; i < sizeof img / sizeof img[0]; i++) {
        enpu_sb_printf(&b, "// easynpu %s: %zu of %" PRId64 " words of %zu bits, word 0 first, "
                           "most significant byte first; the rest of the memory is zero\n",
                       img[i].mem, (img[i].n + wb - 1) / wb, img[i].bytes / (int64_t)wb, wb * 8);
        hex_words(&b, img[i].d, img[i].n, wb);
        rc = write_out(dir, img[i].file, &b, inputs, n_inputs, err);
        enpu_sb_free(&b);
        if (rc) {
            free(dram);
            return rc;
        }
    }
    free(dram);

    enpu_sb_printf(&b, "{\n  \"format\": \"easynpu-hex-1\",\n  \"arch\": ");
    enpu_sb_quote(&b, a->name);
    enpu_sb_printf(&b, ",\n  \"arch_fingerprint\": \"0x%08" PRIx32 "\",\n  \"files\": [\n", fp);
    enpu_sb_printf(&b, "    {\"file\": \"%s\", \"memory\": \"itcm\", \"width_bits\": 128, "
                       "\"lines\": %d, \"depth\": %" PRId64 "},\n",
                   enpu_hex_files[0], p->n_instr * 4, a->itcm_bytes / 16);
    for (size_t i = 0; i < sizeof img / sizeof img[0]; i++)
        enpu_sb_printf(&b, "    {\"file\": \"%s\", \"memory\": \"%s\", \"width_bits\": %zu, "
                           "\"lines\": %zu, \"depth\": %" PRId64 "}%s\n",
                       img[i].file, img[i].mem, wb * 8, (img[i].n + wb - 1) / wb,
                       img[i].bytes / (int64_t)wb, i + 1 < sizeof img / sizeof img[0] ? "," : "");
    enpu_sb_puts(&b, "  ]\n}\n");
    rc = write_out(dir, enpu_hex_files[5], &b, inputs, n_inputs, err);
    enpu_sb_free(&b);
    return rc;
}
