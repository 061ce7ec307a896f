// Kernel snippet: small index and shape kernels - OneHot, EyeLike, Size, ReverseSequence - over raw
// elements (every data type).
//  - OneHot: output (..., depth at axis, ...) of values[1] where the index (float indices truncated;
//    negative ones count from depth; NaN or beyond depth: none) equals the position, else values[0].
//  - EyeLike: a 2-D tensor of zeros with ones on diagonal k.
//  - Size: the input's element count, as one int64.
//  - ReverseSequence: reverses the first lens[b] steps along the time axis of batch entry b; a
//    length outside [0, time] throws std::out_of_range.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace trellis::kernels {

/// The element type of OneHot's indices.
enum class OneHotIndexType { Float32, Float64, Int32, UInt8, Int64 };
inline const char* KernelEnumType(OneHotIndexType) { return "OneHotIndexType"; }
inline const char* KernelEnumName(OneHotIndexType v) {
    switch (v) {
        case OneHotIndexType::Float32: return "Float32";
        case OneHotIndexType::Float64: return "Float64";
        case OneHotIndexType::Int32: return "Int32";
        case OneHotIndexType::UInt8: return "UInt8";
        case OneHotIndexType::Int64: return "Int64";
    }
    return "";
}

struct OneHotParams {
    int64_t depth = 0;
    OneHotIndexType indexType = OneHotIndexType::Int64;
    std::size_t elementSize = 0, outer = 1, inner = 1;
    template <typename F> void Fields(F&& f) const { f(depth); f(indexType); f(elementSize); f(outer); f(inner); }
};

/// NaN and values beyond the depth map to -depth-1 (out of range: all "off").
inline int64_t OneHotTruncate(const OneHotParams& p, double v) {
    if (!(std::fabs(v) <= static_cast<double>(p.depth))) return -p.depth - 1;
    return static_cast<int64_t>(std::trunc(v));
}

inline int64_t OneHotIndex(const OneHotParams& p, const void* indices, std::size_t j) {
    switch (p.indexType) {
        case OneHotIndexType::Float32: return OneHotTruncate(p, static_cast<const float*>(indices)[j]);
        case OneHotIndexType::Float64: return OneHotTruncate(p, static_cast<const double*>(indices)[j]);
        case OneHotIndexType::Int32: return static_cast<const int32_t*>(indices)[j];
        case OneHotIndexType::UInt8: return static_cast<const uint8_t*>(indices)[j];
        case OneHotIndexType::Int64: break;
    }
    return static_cast<const int64_t*>(indices)[j];
}

inline void OneHot(const OneHotParams& p, const void* indices, const void* valuesData, void* output) {
    const auto* values = static_cast<const unsigned char*>(valuesData);
    auto* y = static_cast<unsigned char*>(output);
    const std::size_t depth = static_cast<std::size_t>(p.depth);
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            int64_t v = OneHotIndex(p, indices, o * p.inner + i);
            if (v < 0) v += p.depth;
            for (std::size_t k = 0; k < depth; ++k) {
                const bool on = v >= 0 && static_cast<std::size_t>(v) == k;
                std::memcpy(y + ((o * depth + k) * p.inner + i) * p.elementSize, values + (on ? p.elementSize : 0), p.elementSize);
            }
        }
    }
}

struct EyeLikeParams {
    int64_t k = 0, rows = 0, cols = 0;
    std::size_t elementSize = 0;
    std::vector<uint8_t> one;  ///< the value 1 as one element
    template <typename F> void Fields(F&& f) const { f(k); f(rows); f(cols); f(elementSize); f(one); }
};

inline void EyeLike(const EyeLikeParams& p, void* output) {
    auto* y = static_cast<unsigned char*>(output);
    std::memset(y, 0, static_cast<std::size_t>(p.rows * p.cols) * p.elementSize);
    for (int64_t r = 0; r < p.rows; ++r) {
        const int64_t c = r + p.k;
        if (c >= 0 && c < p.cols) std::memcpy(y + static_cast<std::size_t>(r * p.cols + c) * p.elementSize, p.one.data(), p.elementSize);
    }
}

struct SizeParams {
    int64_t count = 0;
    template <typename F> void Fields(F&& f) const { f(count); }
};

inline void Size(const SizeParams& p, int64_t* output) { *output = p.count; }

struct ReverseSequenceParams {
    std::size_t elementSize = 0, batch = 0, time = 0, inner = 1, batchStride = 0, timeStride = 0;
    template <typename F> void Fields(F&& f) const { f(elementSize); f(batch); f(time); f(inner); f(batchStride); f(timeStride); }
};

inline void ReverseSequence(const ReverseSequenceParams& p, const void* input, const int64_t* lens, void* output) {
    const auto* x = static_cast<const unsigned char*>(input);
    auto* y = static_cast<unsigned char*>(output);
    for (std::size_t b = 0; b < p.batch; ++b) {
        if (lens[b] < 0 || static_cast<std::size_t>(lens[b]) > p.time) {
            throw std::out_of_range("sequence length " + std::to_string(lens[b]) + " of batch entry " + std::to_string(b) +
                                    " is outside [0, " + std::to_string(p.time) + "]");
        }
    }
    const std::size_t bytes = p.inner * p.elementSize;
    for (std::size_t b = 0; b < p.batch; ++b) {
        const std::size_t len = static_cast<std::size_t>(lens[b]);
        for (std::size_t t = 0; t < p.time; ++t) {
            const std::size_t src = t < len ? len - 1 - t : t;
            std::memcpy(y + (b * p.batchStride + t * p.timeStride) * p.elementSize,
                        x + (b * p.batchStride + src * p.timeStride) * p.elementSize, bytes);
        }
    }
}

}  // namespace trellis::kernels
