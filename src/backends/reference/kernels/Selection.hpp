// Kernel snippet: kernels that select elements - TopK, MaxUnpool, Compress.
//  - TopK: the k largest (smallest) elements along an axis, sorted, with their int64 indices;
//    equal values keep the lower index first; NaN counts as the largest. The candidate order
//    (one index per element of a line) is in the workspace.
//  - MaxUnpool: zeros, then each input element where its index points. Indices are flat offsets
//    into the unpooled shape (each spatial dim (in - 1) * stride + kernel - pads: the MaxPool input
//    the indices came from); when output_shape makes the output larger, the unpooled tensor sits in
//    the output's leading corner (ONNX's reading), so an offset is split into coordinates of the
//    unpooled shape and written at the same coordinates of the output. An index outside the
//    unpooled tensor throws std::out_of_range before anything is written.
//  - Compress: the slices along the axis (or the elements of the flattened input) whose condition
//    is true, in order.
#pragma once

#include "StridedCopy.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace trellis::kernels {

template <typename T>
bool TopKLess(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return false;
        if (std::isnan(b)) return true;
    }
    return a < b;
}

struct TopKParams {
    std::size_t k = 0;
    bool largest = true;
    std::size_t dim = 0, outer = 1, inner = 1;
    template <typename F> void Fields(F&& f) const { f(k); f(largest); f(dim); f(outer); f(inner); }
};

inline std::size_t TopKWorkspaceBytes(const TopKParams& p) { return p.dim * sizeof(std::size_t); }

template <typename T>
void TopK(const TopKParams& p, const T* x, T* values, int64_t* indices, void* workspace) {
    auto* order = static_cast<std::size_t*>(workspace);
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            const T* line = x + o * p.dim * p.inner + i;
            auto before = [&](std::size_t a, std::size_t b) {
                const T va = line[a * p.inner], vb = line[b * p.inner];
                if (p.largest ? TopKLess(vb, va) : TopKLess(va, vb)) return true;
                if (p.largest ? TopKLess(va, vb) : TopKLess(vb, va)) return false;
                return a < b;  // equal: the lower index first
            };
            std::iota(order, order + p.dim, std::size_t{0});
            std::partial_sort(order, order + p.k, order + p.dim, before);
            for (std::size_t k = 0; k < p.k; ++k) {
                const std::size_t out = (o * p.k + k) * p.inner + i;
                values[out] = line[order[k] * p.inner];
                indices[out] = static_cast<int64_t>(order[k]);
            }
        }
    }
}

struct MaxUnpoolParams {
    std::size_t elementSize = 0, inCount = 0, outCount = 0;
    std::size_t unpooledCount = 0;      ///< elements of the unpooled shape: the indices' range
    std::vector<std::size_t> unpooled;  ///< the unpooled shape (N, C, spatial dims)
    std::vector<std::size_t> out;       ///< the output's shape; empty when it is the unpooled shape
    template <typename F> void Fields(F&& f) const { f(elementSize); f(inCount); f(outCount); f(unpooledCount); f(unpooled); f(out); }
};

/// The output offset of the element at flat offset `index` of the unpooled shape.
inline std::size_t MaxUnpoolOutputOffset(const MaxUnpoolParams& p, std::size_t index) {
    if (p.out.empty()) return index;
    std::size_t offset = 0, outStride = 1;
    for (std::size_t d = p.unpooled.size(); d-- > 0;) {
        offset += (index % p.unpooled[d]) * outStride;
        index /= p.unpooled[d];
        outStride *= p.out[d];
    }
    return offset;
}

inline void MaxUnpool(const MaxUnpoolParams& p, const void* input, const int64_t* indices, void* output) {
    const auto* x = static_cast<const unsigned char*>(input);
    auto* y = static_cast<unsigned char*>(output);
    for (std::size_t i = 0; i < p.inCount; ++i) {
        if (indices[i] < 0 || static_cast<std::size_t>(indices[i]) >= p.unpooledCount) {
            std::string shape;
            for (std::size_t d : p.unpooled) {
                if (!shape.empty()) shape += 'x';
                shape += std::to_string(d);
            }
            throw std::out_of_range("index " + std::to_string(indices[i]) + " (at position " + std::to_string(i) +
                                    ") is outside the unpooled tensor's [0, " + std::to_string(p.unpooledCount) +
                                    ") elements (shape " + shape + ")");
        }
    }
    std::memset(y, 0, p.outCount * p.elementSize);
    for (std::size_t i = 0; i < p.inCount; ++i) {
        std::memcpy(y + MaxUnpoolOutputOffset(p, static_cast<std::size_t>(indices[i])) * p.elementSize,
                    x + i * p.elementSize, p.elementSize);
    }
}

struct CompressParams {
    std::size_t length = 0;  ///< of the condition
    std::size_t outer = 1, slices = 0, sliceBytes = 0;
    template <typename F> void Fields(F&& f) const { f(length); f(outer); f(slices); f(sliceBytes); }
};

inline void Compress(const CompressParams& p, const void* input, const uint8_t* condition, void* output) {
    const auto* x = static_cast<const uint8_t*>(input);
    auto* y = static_cast<uint8_t*>(output);
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t s = 0; s < p.slices && s < p.length; ++s) {
            if (!condition[s]) continue;
            CopyBytes(x + (o * p.slices + s) * p.sliceBytes, y, p.sliceBytes);
            y += p.sliceBytes;
        }
    }
}

}  // namespace trellis::kernels
