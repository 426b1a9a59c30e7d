/* easynpu: the command-line front of libeasynpu.  Each subcommand is a
 * function in cmd_<name>.c, listed once in commands.def. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "easynpu/file.h"

#define ENPU_VERSION "0.1.0"

typedef struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} command;

static const command commands[] = {
#define X(name, fn, summary) {name, fn, summary},
#include "cli/commands.def"
#undef X
};

int enpu_cli_fail(const char *cmd, const enpu_err *err) {
    fprintf(stderr, "easynpu %s: error [%s]: %s\n", cmd, enpu_status_name(err->code), err->msg);
    return enpu_exit_code(err->code);
}

int enpu_cli_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "easynpu %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; see 'easynpu %s --help'\n", cmd);
    va_end(ap);
    return 2;
}

bool enpu_cli_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return true;
    }
    return false;
}

static int check_output(const char *cmd, const char *out, const char *const *inputs, int n) {
    for (int i = 0; i < n; i++)
        if (inputs[i] && strcmp(out, "-") != 0 &&
            (strcmp(out, inputs[i]) == 0 || enpu_same_file(out, inputs[i]))) {
            fprintf(stderr, "easynpu %s: error [usage]: output '%s' is also an input; refusing to "
                    "overwrite it\n", cmd, out);
            return 2;
        }
    return 0;
}

const char *enpu_cli_arch_file(const char *arch) {
    if (!arch) return NULL;
    size_t n = strlen(arch);
    if (strchr(arch, '/') || (n >= 5 && strcmp(arch + n - 5, ".json") == 0)) return arch;
    return NULL;
}

/* The folder a path (which may not exist yet) lies in. */
static void parent_of(const char *path, char *parent, size_t n) {
    snprintf(parent, n, "%s", path);
    char *slash = strrchr(parent, '/');
    if (!slash) snprintf(parent, n, ".");
    else if (slash == parent) parent[1] = 0;
    else *slash = 0;
}

/* True if `path` (which may not exist yet) lies directly in directory `dir`. */
static bool in_directory(const char *path, const char *dir) {
    struct stat ds, ps;
    if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode)) return false;
    char parent[4096];
    parent_of(path, parent, sizeof parent);
    return stat(parent, &ps) == 0 && ps.st_dev == ds.st_dev && ps.st_ino == ds.st_ino;
}

static int check_output_list(const char *cmd, const char *out, const char *list) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        const char *one = it;
        if (check_output(cmd, out, &one, 1)) return 2;
        /* A folder of inputs (--calib DIR): an output inside it could replace
         * one of them, or join the set on the next run. */
        if (in_directory(out, it)) {
            fprintf(stderr, "easynpu %s: error [usage]: output '%s' is inside the input folder '%s'; "
                    "refusing to write there\n", cmd, out, it);
            return 2;
        }
    }
    return 0;
}

void enpu_cli_io_out(enpu_cli_io *io, const char *path) {
    if (path && io->n_out < ENPU_CLI_MAX_IO) io->out[io->n_out++] = path;
}
void enpu_cli_io_in(enpu_cli_io *io, const char *path) {
    if (path && io->n_in < ENPU_CLI_MAX_IO) io->in[io->n_in++] = path;
}
void enpu_cli_io_list(enpu_cli_io *io, const char *list) {
    if (list && io->n_lists < (int)(sizeof io->lists / sizeof io->lists[0])) io->lists[io->n_lists++] = list;
}

/* The folder an output goes into exists and can take a new file. */
static int check_writable(const char *cmd, const char *out) {
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "easynpu %s: error [io]: output '%s' is a directory\n", cmd, out);
        return 2;
    }
    char dir[4096];
    parent_of(out, dir, sizeof dir);
    /* the atomic write creates a temporary file beside the output */
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        int e = errno;
        if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) e = ENOTDIR;
        fprintf(stderr, "easynpu %s: error [io]: output '%s': cannot write in '%s': %s\n", cmd, out, dir,
                strerror(e));
        return 2;
    }
    return 0;
}

int enpu_cli_check_io(const char *cmd, const enpu_cli_io *io) {
    int stdin_uses = 0;
    for (int i = 0; i < io->n_in; i++) stdin_uses += strcmp(io->in[i], "-") == 0;
    for (int i = 0; i < io->n_lists; i++) stdin_uses += strcmp(io->lists[i], "-") == 0;
    if (stdin_uses > 1) return enpu_cli_usage(cmd, "'-' (stdin) is given for two inputs");
    for (int i = 0; i < io->n_out; i++) {
        const char *o = io->out[i];
        for (int k = 0; k < i; k++)
            if (strcmp(o, io->out[k]) == 0 || (strcmp(o, "-") != 0 && enpu_same_file(o, io->out[k])))
                return enpu_cli_usage(cmd, "output '%s'%s is given twice", o,
                                      strcmp(o, "-") == 0 ? " (stdout)" : "");
        if (strcmp(o, "-") == 0) continue;
        if (check_output(cmd, o, io->in, io->n_in)) return 2;
        for (int k = 0; k < io->n_lists; k++)
            if (check_output_list(cmd, o, io->lists[k])) return 2;
        if (check_writable(cmd, o)) return 2;
    }
    return 0;
}

FILE *enpu_cli_text(const enpu_cli_io *io) {
    for (int i = 0; i < io->n_out; i++)
        if (strcmp(io->out[i], "-") == 0) return stderr;
    return stdout;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: easynpu <command> [options]\n"
            "\n"
            "EasyNPU " ENPU_VERSION ": an int8 NPU toolchain: ONNX import, quantization, compilation,\n"
            "and a cycle-accurate simulator.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'easynpu <command> --help' describes each command.\n"
               "A file name '-' is stdout for an output (the report then goes to stderr) and\n"
               "stdin for an input.\n"
               "Exit codes: 0 success, 1 a check failed (e.g. a mismatch), 2 bad input or usage,\n"
               "3 an accuracy gate missed, 4 an internal error (a bug in EasyNPU: please report it).\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("easynpu " ENPU_VERSION "\n");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "easynpu: unknown command '%s'; see 'easynpu --help'\n", argv[1]);
    return 2;
}
