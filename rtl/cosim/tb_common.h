// What the co-simulation testbenches share (sya_tb, enpu_tb, rs_tb): the
// Verilated model with its VCD window, a case's first difference and the
// check that records it, the rerun that dumps the window, the --model
// cases.
#ifndef ENPU_RTL_TB_COMMON_H
#define ENPU_RTL_TB_COMMON_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "sya_gen.h"
#include "tb_args.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

// A testbench's model of type V and its case's first difference (a
// testbench's state derives from it).
template <typename V> struct TbModel {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<V> top;
#if VM_TRACE
    std::unique_ptr<VerilatedVcdC> vcd;
#endif
    uint64_t vcd_from = 0, vcd_to = 0;
    bool failed = false;
    uint64_t fail_cycle = 0;
    std::string msg;
    uint64_t checks = 0;

    // A new model; with vcd_path (a build with --trace), a VCD of cycles
    // [from, to] written there.
    void open(const char *vcd_path, uint64_t from, uint64_t to) {
        ctx.reset(new VerilatedContext);
        top.reset(new V(ctx.get()));
#if VM_TRACE
        if (vcd_path) {
            ctx->traceEverOn(true);
            vcd.reset(new VerilatedVcdC);
            top->trace(vcd.get(), 99);
            vcd->open(vcd_path);
            vcd_from = from, vcd_to = to;
        }
#else
        (void)vcd_path, (void)from, (void)to;
#endif
    }
    // The VCD's time: two steps per simulated cycle (the window's cycles only).
    void dump(uint64_t time) {
#if VM_TRACE
        if (vcd && time / 2 >= vcd_from && time / 2 <= vcd_to) vcd->dump(time);
#else
        (void)time;
#endif
    }
    void close() {
#if VM_TRACE
        if (vcd) vcd->close();
#endif
        top->final();
    }
};

// Records the case's first difference, in cycle t.
template <typename T, typename... A> void fail(T &tb, uint64_t t, const char *fmt, A... args) {
    if (tb.failed) return;
    char b[512];
    std::snprintf(b, sizeof b, fmt, args...);
    tb.failed = true;
    tb.fail_cycle = t;
    tb.msg = "cycle " + std::to_string(t) + ": " + b;
}

// One comparison of signal sig of unit unit (strings or C strings, built
// only on a difference): the first difference returns from the caller.
#define EXPECT(tb, t, cond, unit, sig, rtl, cv)                                                               \
    do {                                                                                                      \
        (tb).checks++;                                                                                        \
        if (!(cond)) {                                                                                        \
            fail(tb, t, "unit %s, signal %s: rtl %" PRId64 ", C %" PRId64, std::string(unit).c_str(),         \
                 std::string(sig).c_str(), (int64_t)(rtl), (int64_t)(cv));                                    \
            return;                                                                                           \
        }                                                                                                     \
    } while (0)

// A difference in case n of configuration cfg (cycle fail_cycle): the case
// run again by rerun(path, from, to) with a VCD of cycles fail_cycle - 20 ..
// fail_cycle + 2 in vcd_dir (a traced build's), said in a line `tag cfg:`.
template <typename F>
void tb_vcd_window(const char *tag, const char *cfg, const char *vcd_dir, int n, uint64_t fail_cycle, F rerun) {
    if (!vcd_dir || !fail_cycle) return;
    std::string path = std::string(vcd_dir) + "/" + cfg + "-" + std::to_string(n) + ".vcd";
    uint64_t from = fail_cycle > 20 ? fail_cycle - 20 : 0;
    rerun(path.c_str(), from, fail_cycle + 2);
    std::printf("%s %s: VCD of cycles %" PRIu64 "..%" PRIu64 " in %s\n", tag, cfg, from, fail_cycle + 2,
                path.c_str());
}

// Each --model compiled for base (sya_gen_model) and handed to
// run(name, prog, x); one that does not compile is said in a line `tag cfg:`.
// Returns how many did not compile (cases that differ).
template <typename F> int tb_each_model(const TbArgs &args, const enpu_arch *base, const char *tag, F run) {
    int bad = 0;
    for (auto &m : args.models) {
        enpu_program prog{};
        enpu_buf x{};
        std::string e;
        if (sya_gen_model(m[0], m[1], m[2], base, &prog, &x, e)) {
            std::printf("%s %s: %s: cannot compile: %s\n", tag, base->name, m[0], e.c_str());
            bad++;
            continue;
        }
        run(m[0], &prog, &x);
        enpu_buf_free(&x);
        enpu_program_free(&prog);
    }
    return bad;
}

#endif
