// Kernel snippet: PRelu, y = x < 0 ? slope * x : x, the slope broadcast onto X (Broadcast.hpp).
// Integer products wrap, like numpy.
#pragma once

#include "Broadcast.hpp"

#include <array>
#include <cstdint>
#include <type_traits>

namespace trellis::kernels {

template <typename T>
T PReluScale(T slope, T x) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return T(U(slope) * U(x));
    } else {
        return slope * x;
    }
}

template <typename T>
void PRelu(const BroadcastPlan<2>& plan, const void* xData, const void* slopeData, void* outData) {
    const T* x = static_cast<const T*>(xData);
    const T* slope = static_cast<const T*>(slopeData);
    T* out = static_cast<T*>(outData);
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n, const std::array<int64_t, 2>& s) {
        const T* px = x + off[0];
        const T* ps = slope + off[1];
        for (int64_t i = 0; i < n; ++i) {
            const T v = px[i * s[0]];
            out[o + i] = v < 0 ? PReluScale(ps[i * s[1]], v) : v;
        }
    });
}

}  // namespace trellis::kernels
