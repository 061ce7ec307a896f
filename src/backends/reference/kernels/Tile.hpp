// Kernel snippet: Tile - every data type (raw elements): one output row (the last dim) at a time,
// the input row repeated out/in times. The odometer over the other dims is in the workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace trellis::kernels {

struct TileParams {
    std::vector<std::size_t> in, out;
    std::vector<int64_t> inStrides;
    std::size_t elementSize = 0, outCount = 0;
    template <typename F> void Fields(F&& f) const { f(in); f(out); f(inStrides); f(elementSize); f(outCount); }
};

inline std::size_t TileWorkspaceBytes(const TileParams& p) { return p.out.size() * sizeof(std::size_t); }

inline void Tile(const TileParams& p, const void* input, void* output, void* workspace) {
    if (p.outCount == 0) return;
    const auto* x = static_cast<const unsigned char*>(input);
    auto* y = static_cast<unsigned char*>(output);
    const std::size_t rank = p.out.size();
    if (rank == 0) {
        std::memcpy(y, x, p.elementSize);
        return;
    }
    const std::size_t inRow = p.in[rank - 1], outRow = p.out[rank - 1];
    auto* pos = static_cast<std::size_t*>(workspace);
    for (std::size_t d = 0; d + 1 < rank; ++d) pos[d] = 0;
    for (std::size_t done = 0; done < p.outCount; done += outRow) {
        std::size_t src = 0;
        for (std::size_t d = 0; d + 1 < rank; ++d) src += (pos[d] % p.in[d]) * static_cast<std::size_t>(p.inStrides[d]);
        for (std::size_t j = 0; j < outRow; j += inRow) std::memcpy(y + j * p.elementSize, x + src * p.elementSize, inRow * p.elementSize);
        y += outRow * p.elementSize;
        for (std::size_t d = rank - 1; d-- > 0;) {
            if (++pos[d] < p.out[d]) break;
            pos[d] = 0;
        }
    }
}

}  // namespace trellis::kernels
