// Kernel snippet: Trilu - keeps the upper (or lower) triangle of the last two dims, offset by the
// diagonal k, and zeroes the rest; raw elements (every data type). k is the parameters' or, when
// given, read from the k input (int32 or int64) at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace trellis::kernels {

struct TriluParams {
    bool upper = true;
    int64_t k = 0;
    int kInputBits = 0;  ///< 32 or 64 when k is a run-time input, else 0
    int64_t rows = 0, cols = 0;
    std::size_t batch = 0, elementSize = 0;
    template <typename F> void Fields(F&& f) const { f(upper); f(k); f(kInputBits); f(rows); f(cols); f(batch); f(elementSize); }
};

/// `kInput` may be null (k from the parameters).
inline void Trilu(const TriluParams& p, const void* input, const void* kInput, void* output) {
    const auto* x = static_cast<const unsigned char*>(input);
    auto* y = static_cast<unsigned char*>(output);
    int64_t k = p.k;
    if (p.kInputBits == 64) k = *static_cast<const int64_t*>(kInput);
    if (p.kInputBits == 32) k = *static_cast<const int32_t*>(kInput);
    for (std::size_t b = 0; b < p.batch; ++b) {
        for (int64_t i = 0; i < p.rows; ++i) {
            for (int64_t j = 0; j < p.cols; ++j) {
                const std::size_t off = ((b * static_cast<std::size_t>(p.rows) + static_cast<std::size_t>(i)) *
                                             static_cast<std::size_t>(p.cols) + static_cast<std::size_t>(j)) * p.elementSize;
                const bool keep = p.upper ? (j - i >= k) : (j - i <= k);
                if (keep) std::memcpy(y + off, x + off, p.elementSize);
                else std::memset(y + off, 0, p.elementSize);
            }
        }
    }
}

}  // namespace trellis::kernels
