// Bit-field access to Verilator ports of any width (CData .. QData scalars,
// VlWide<N> arrays of 32-bit words), for the testbenches.
#ifndef ENPU_RTL_BITS_H
#define ENPU_RTL_BITS_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "verilated.h"

namespace bits {

static inline uint64_t getw(const uint32_t *w, int lsb, int n) {
    uint64_t v = 0;
    for (int got = 0; got < n;) {
        int wi = (lsb + got) >> 5, bi = (lsb + got) & 31, take = 32 - bi < n - got ? 32 - bi : n - got;
        uint64_t part = (uint64_t)(w[wi] >> bi) & (take == 32 ? 0xffffffffull : ((1ull << take) - 1));
        v |= part << got;
        got += take;
    }
    return v;
}

static inline void putw(uint32_t *w, int lsb, int n, uint64_t v) {
    for (int done = 0; done < n;) {
        int wi = (lsb + done) >> 5, bi = (lsb + done) & 31, take = 32 - bi < n - done ? 32 - bi : n - done;
        uint32_t mask = (take == 32 ? 0xffffffffu : ((1u << take) - 1)) << bi;
        w[wi] = (w[wi] & ~mask) | ((uint32_t)(v >> done) << bi & mask);
        done += take;
    }
}

template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
static inline uint64_t get(const T &p, int lsb, int n) {
    uint64_t v = (uint64_t)p >> lsb;
    return n >= 64 ? v : v & ((1ull << n) - 1);
}
template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
static inline void put(T &p, int lsb, int n, uint64_t v) {
    uint64_t mask = (n >= 64 ? ~0ull : ((1ull << n) - 1)) << lsb;
    p = (T)(((uint64_t)p & ~mask) | (v << lsb & mask));
}
template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
static inline void clear(T &p) { p = 0; }

template <std::size_t N> static inline uint64_t get(const VlWide<N> &p, int lsb, int n) {
    return getw(p.data(), lsb, n);
}
template <std::size_t N> static inline void put(VlWide<N> &p, int lsb, int n, uint64_t v) {
    putw(p.data(), lsb, n, v);
}
template <std::size_t N> static inline void clear(VlWide<N> &p) { std::memset(p.data(), 0, sizeof(uint32_t) * N); }

static inline int64_t sext(uint64_t v, int n) {
    return n >= 64 ? (int64_t)v : (int64_t)(v << (64 - n)) >> (64 - n);
}

} // namespace bits

#endif
