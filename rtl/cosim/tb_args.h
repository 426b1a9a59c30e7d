// The command line both co-simulation testbenches take (sya_tb, enpu_tb):
//   NAME --arch ARCH.json [--model ONNX CALIB INPUT]... [--random N] [--seed S]
//        [--vcd-dir DIR] [--verbose]
#ifndef ENPU_RTL_TB_ARGS_H
#define ENPU_RTL_TB_ARGS_H

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

struct TbArgs {
    const char *arch_path = nullptr, *vcd_dir = nullptr;
    std::vector<std::array<const char *, 3>> models;
    int n_random = 0;
    uint64_t seed = 1;
    bool verbose = false;
};

// Fills *a from argv; on a bad or missing argument prints the usage of
// testbench `name` and returns false (the caller exits 2).
inline bool tb_parse_args(int argc, char **argv, const char *name, TbArgs *a) {
    bool ok = true;
    for (int i = 1; i < argc && ok; i++) {
        std::string s = argv[i];
        if (s == "--arch" && i + 1 < argc) a->arch_path = argv[++i];
        else if (s == "--model" && i + 3 < argc) {
            a->models.push_back({argv[i + 1], argv[i + 2], argv[i + 3]});
            i += 3;
        } else if (s == "--random" && i + 1 < argc) a->n_random = std::atoi(argv[++i]);
        else if (s == "--seed" && i + 1 < argc) a->seed = std::strtoull(argv[++i], nullptr, 0);
        else if (s == "--vcd-dir" && i + 1 < argc) a->vcd_dir = argv[++i];
        else if (s == "--verbose") a->verbose = true;
        else ok = false;
    }
    if (ok && a->arch_path) return true;
    std::fprintf(stderr,
                 "usage: %s --arch ARCH.json [--model ONNX CALIB INPUT]... [--random N] [--seed S]\n"
                 "       %*s [--vcd-dir DIR] [--verbose]\n",
                 name, (int)std::string(name).size(), "");
    return false;
}

#endif
