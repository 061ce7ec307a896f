// Kernel snippet: Where, out = cond ? X : Y, all three broadcast together (Broadcast.hpp). Moves
// raw elements of 1, 2, 4 or 8 bytes, so it serves every data type.
#pragma once

#include "Broadcast.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace trellis::kernels {

struct WhereParams {
    BroadcastPlan<3> plan;
    std::size_t elementSize = 4;
    template <typename F> void Fields(F&& f) const { f(plan); f(elementSize); }
};

template <std::size_t ES>
void WhereRows(const BroadcastPlan<3>& plan, const uint8_t* cond, const unsigned char* x, const unsigned char* y,
               unsigned char* out) {
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 3>& off, int64_t o, int64_t n, const std::array<int64_t, 3>& s) {
        for (int64_t i = 0; i < n; ++i) {
            const unsigned char* src = cond[off[0] + i * s[0]] ? x + (off[1] + i * s[1]) * static_cast<int64_t>(ES)
                                                                : y + (off[2] + i * s[2]) * static_cast<int64_t>(ES);
            std::memcpy(out + (o + i) * static_cast<int64_t>(ES), src, ES);
        }
    });
}

inline void Where(const WhereParams& p, const void* condition, const void* xData, const void* yData, void* outData) {
    const auto* cond = static_cast<const uint8_t*>(condition);
    const auto* x = static_cast<const unsigned char*>(xData);
    const auto* y = static_cast<const unsigned char*>(yData);
    auto* out = static_cast<unsigned char*>(outData);
    switch (p.elementSize) {
        case 1: return WhereRows<1>(p.plan, cond, x, y, out);
        case 2: return WhereRows<2>(p.plan, cond, x, y, out);
        case 4: return WhereRows<4>(p.plan, cond, x, y, out);
        case 8: return WhereRows<8>(p.plan, cond, x, y, out);
        default: return;  // other sizes are refused when the layer is configured
    }
}

}  // namespace trellis::kernels
