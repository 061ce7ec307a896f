// Kernel snippet: DepthToSpace / SpaceToDepth on NCHW, raw elements (every data type). The DCR
// order puts the block offset first in the depth dim, CRD (both directions; SpaceToDepth since opset 28) the channel.
#pragma once

#include <cstddef>
#include <cstring>

namespace trellis::kernels {

struct SpaceDepthParams {
    bool toSpace = true;  ///< DepthToSpace (else SpaceToDepth)
    bool crd = false;
    std::size_t block = 1, elementSize = 0;
    std::size_t n = 0, c = 0, h = 0, w = 0;  ///< the spatial (large) side's dims
    template <typename F> void Fields(F&& f) const { f(toSpace); f(crd); f(block); f(elementSize); f(n); f(c); f(h); f(w); }
};

inline void SpaceDepth(const SpaceDepthParams& p, const void* input, void* output) {
    const auto* x = static_cast<const unsigned char*>(input);
    auto* y = static_cast<unsigned char*>(output);
    const std::size_t b = p.block, hs = p.h / b, ws = p.w / b, cd = p.c * b * b;
    for (std::size_t n = 0; n < p.n; ++n) {
        for (std::size_t c = 0; c < p.c; ++c) {
            for (std::size_t h = 0; h < p.h; ++h) {
                for (std::size_t w = 0; w < p.w; ++w) {
                    const std::size_t i = h % b, j = w % b;
                    const std::size_t dc = p.crd ? c * b * b + i * b + j : (i * b + j) * p.c + c;
                    const std::size_t spaceOff = ((n * p.c + c) * p.h + h) * p.w + w;
                    const std::size_t depthOff = ((n * cd + dc) * hs + h / b) * ws + w / b;
                    if (p.toSpace) std::memcpy(y + spaceOff * p.elementSize, x + depthOff * p.elementSize, p.elementSize);
                    else std::memcpy(y + depthOff * p.elementSize, x + spaceOff * p.elementSize, p.elementSize);
                }
            }
        }
    }
}

}  // namespace trellis::kernels
