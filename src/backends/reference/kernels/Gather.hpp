// Kernel snippet: Gather - every data type for the data (raw elements are moved), int32 or int64
// indices. Negative indices count from the back of the axis; an index outside [-dim, dim) throws
// std::out_of_range naming it before anything is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace trellis::kernels {

struct GatherParams {
    std::size_t axis = 0;
    bool indices64 = true;
    std::size_t numIndices = 0;
    int64_t axisDim = 0;
    std::size_t outer = 1;       ///< product of the dims before the axis
    std::size_t sliceBytes = 0;  ///< bytes of the dims after the axis
    template <typename F> void Fields(F&& f) const { f(axis); f(indices64); f(numIndices); f(axisDim); f(outer); f(sliceBytes); }
};

inline int64_t GatherIndex(const GatherParams& p, const void* indices, std::size_t j) {
    return p.indices64 ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
}

inline void Gather(const GatherParams& p, const void* data, const void* indices, void* output) {
    // Check every index first so a bad one never leaves a half-written output behind.
    for (std::size_t j = 0; j < p.numIndices; ++j) {
        const int64_t v = GatherIndex(p, indices, j);
        if (v < -p.axisDim || v >= p.axisDim) {
            throw std::out_of_range("index " + std::to_string(v) + " (at position " + std::to_string(j) +
                                    ") is out of range [" + std::to_string(-p.axisDim) + ", " + std::to_string(p.axisDim) +
                                    ") along axis " + std::to_string(p.axis));
        }
    }
    const auto* in = static_cast<const unsigned char*>(data);
    auto* out = static_cast<unsigned char*>(output);
    for (std::size_t o = 0; o < p.outer; ++o) {
        const unsigned char* block = in + o * static_cast<std::size_t>(p.axisDim) * p.sliceBytes;
        for (std::size_t j = 0; j < p.numIndices; ++j) {
            int64_t v = GatherIndex(p, indices, j);
            if (v < 0) v += p.axisDim;
            std::memcpy(out, block + static_cast<std::size_t>(v) * p.sliceBytes, p.sliceBytes);
            out += p.sliceBytes;
        }
    }
}

}  // namespace trellis::kernels
