// Kernel snippet: Pad - constant, reflect and edge modes over raw elements (every data type).
// Every output index of every dim has the input element offset it copies, or -1 for "the pad
// value"; the kernel walks the output once, filling whole blocks where a dim's index is -1.
// Negative pads (constant mode) crop.
#pragma once

#include "StridedCopy.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace trellis::kernels {

struct PadParams {
    std::vector<std::vector<int64_t>> srcOffsets;  ///< [dim][output index]: input element offset or -1
    std::vector<std::size_t> blockElements;        ///< output elements per index of each dim
    std::vector<uint8_t> fill;                     ///< one element holding the pad value
    std::size_t elementSize = 0;
    std::size_t numBytes = 0;                      ///< of the output
    template <typename F> void Fields(F&& f) const { f(srcOffsets); f(blockElements); f(fill); f(elementSize); f(numBytes); }
};

/// Output block of dim `k` at `dst` from the input block at `src`.
inline void PadLevel(const PadParams& p, std::size_t k, const unsigned char* src, unsigned char* dst) {
    const std::size_t blockBytes = p.blockElements[k] * p.elementSize;
    const bool last = k + 1 == p.srcOffsets.size();
    for (std::size_t o = 0; o < p.srcOffsets[k].size(); ++o, dst += blockBytes) {
        const int64_t offset = p.srcOffsets[k][o];
        if (offset < 0) {
            FillElements(dst, p.fill.data(), p.elementSize, p.blockElements[k]);
        } else if (last) {
            std::memcpy(dst, src + static_cast<std::size_t>(offset) * p.elementSize, p.elementSize);
        } else {
            PadLevel(p, k + 1, src + static_cast<std::size_t>(offset) * p.elementSize, dst);
        }
    }
}

inline void Pad(const PadParams& p, const void* input, void* output) {
    if (p.srcOffsets.empty()) {  // a scalar: nothing to pad
        CopyBytes(input, output, p.numBytes);
        return;
    }
    PadLevel(p, 0, static_cast<const unsigned char*>(input), static_cast<unsigned char*>(output));
}

}  // namespace trellis::kernels
