// Backend SDK: the algorithms that decide the output shapes of NonZero, Compress, Unique and
// NonMaxSuppression from their inputs' values. The core's shape inference runs them on the
// (constant) inputs to size the outputs when the network is optimized; a backend's kernel must
// select exactly the same elements, boxes or slices, which it does by running this same code
// (CpuRef does). Header-only; plain functions of the inputs, safe from any thread.
#pragma once

#include <trellis/Types.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

namespace trellis::valuedep {

/// True when element i of `data` (of type `type`) is non-zero (a float -0.0 is zero, NaN is not).
inline bool IsNonZero(const void* data, DataType type, std::size_t i) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    switch (type) {
        case DataType::Float32: { float v; std::memcpy(&v, bytes + i * 4, 4); return v != 0.0f; }
        case DataType::Float64: { double v; std::memcpy(&v, bytes + i * 8, 8); return v != 0.0; }
        case DataType::Float16:
        case DataType::BFloat16: { uint16_t v; std::memcpy(&v, bytes + i * 2, 2); return (v & 0x7FFF) != 0; }
        default: {
            const std::size_t size = GetDataTypeSize(type);
            for (std::size_t b = 0; b < size; ++b) {
                if (bytes[i * size + b] != 0) return true;
            }
            return false;
        }
    }
}

inline std::size_t CountNonZero(const void* data, DataType type, std::size_t count) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i) n += IsNonZero(data, type, i) ? 1 : 0;
    return n;
}

/// The element of `data` as a double (the types Unique compares).
inline double ElementAsDouble(const void* data, DataType type, std::size_t i) {
    switch (type) {
        case DataType::Float32: return static_cast<const float*>(data)[i];
        case DataType::Float64: return static_cast<const double*>(data)[i];
        case DataType::Signed32: return static_cast<const int32_t*>(data)[i];
        case DataType::Signed64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
        case DataType::UInt8:
        case DataType::Boolean: return static_cast<const uint8_t*>(data)[i];
        case DataType::BFloat16: {  // the upper 16 bits of a float32
            const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(data)[i]) << 16;
            float v;
            std::memcpy(&v, &bits, sizeof v);
            return v;
        }
        case DataType::Float16: {  // IEEE half: 1 sign, 5 exponent, 10 mantissa bits
            const uint16_t h = static_cast<const uint16_t*>(data)[i];
            const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
            double v;
            if (exponent == 0) v = std::ldexp(static_cast<double>(mantissa), -24);
            else if (exponent == 31) v = mantissa ? std::nan("") : HUGE_VAL;
            else v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
            return (h >> 15) ? -v : v;
        }
        default: return 0.0;
    }
}

inline bool UniqueSupportsType(DataType type) {
    return type == DataType::Float32 || type == DataType::Float64 || type == DataType::Float16 ||
           type == DataType::BFloat16 || type == DataType::Signed32 || type == DataType::Signed64 ||
           type == DataType::UInt8 || type == DataType::Boolean;
}

/// ONNX Unique over `slices` slices of `sliceSize` elements each (the input viewed as
/// [outer, slices, inner] with slice s = every [o, s, i]). Slices compare lexicographically by
/// value (Signed64 exactly, others as doubles).
struct UniqueResult {
    std::vector<int64_t> m_First;    ///< per unique slice, in output order: its first occurrence
    std::vector<int64_t> m_Inverse;  ///< per input slice: its unique slice's output position
    std::vector<int64_t> m_Counts;   ///< per unique slice: how many input slices equal it
};

inline UniqueResult FindUnique(const void* data, DataType type, std::size_t outer, std::size_t slices,
                               std::size_t inner, bool sorted) {
    auto element = [&](std::size_t s, std::size_t k) {  // k-th element of slice s
        const std::size_t o = k / inner, i = k % inner;
        return (o * slices + s) * inner + i;
    };
    const std::size_t sliceSize = outer * inner;
    auto compare = [&](std::size_t a, std::size_t b) -> int {
        for (std::size_t k = 0; k < sliceSize; ++k) {
            const std::size_t ea = element(a, k), eb = element(b, k);
            if (type == DataType::Signed64) {
                const int64_t va = static_cast<const int64_t*>(data)[ea], vb = static_cast<const int64_t*>(data)[eb];
                if (va != vb) return va < vb ? -1 : 1;
            } else {
                const double va = ElementAsDouble(data, type, ea), vb = ElementAsDouble(data, type, eb);
                if (va != vb) return va < vb ? -1 : 1;
            }
        }
        return 0;
    };
    // Sort slice indices by value (stable: equal slices keep input order, so the first of each
    // run is the first occurrence), then group runs of equal slices.
    std::vector<std::size_t> order(slices);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return compare(a, b) < 0; });
    std::vector<int64_t> groupOf(slices);
    std::vector<int64_t> first, counts;
    for (std::size_t r = 0; r < order.size(); ++r) {
        if (r == 0 || compare(order[r - 1], order[r]) != 0) {
            first.push_back(static_cast<int64_t>(order[r]));
            counts.push_back(0);
        }
        groupOf[order[r]] = static_cast<int64_t>(first.size() - 1);
        ++counts.back();
    }
    std::vector<int64_t> position(first.size());  // group -> output position
    std::iota(position.begin(), position.end(), int64_t{0});
    if (!sorted) {
        // Output in order of first occurrence.
        std::vector<int64_t> groups(first.size());
        std::iota(groups.begin(), groups.end(), int64_t{0});
        std::sort(groups.begin(), groups.end(), [&](int64_t a, int64_t b) {
            return first[static_cast<std::size_t>(a)] < first[static_cast<std::size_t>(b)];
        });
        for (std::size_t p = 0; p < groups.size(); ++p) position[static_cast<std::size_t>(groups[p])] = static_cast<int64_t>(p);
    }
    UniqueResult result;
    result.m_First.resize(first.size());
    result.m_Counts.resize(first.size());
    for (std::size_t g = 0; g < first.size(); ++g) {
        result.m_First[static_cast<std::size_t>(position[g])] = first[g];
        result.m_Counts[static_cast<std::size_t>(position[g])] = counts[g];
    }
    result.m_Inverse.resize(slices);
    for (std::size_t s = 0; s < slices; ++s) result.m_Inverse[s] = position[static_cast<std::size_t>(groupOf[s])];
    return result;
}

/// ONNX NonMaxSuppression: boxes [batches, boxes, 4], scores [batches, classes, boxes]. Per
/// batch and class: boxes whose score exceeds the threshold, by descending score (ties: lower
/// index first), each kept unless its IoU with a kept box exceeds `iou`, at most `maxPerClass`.
/// Returns (batch, class, box) rows in that order.
inline std::vector<std::array<int64_t, 3>> SelectBoxes(const float* boxes, const float* scores, std::size_t batches,
                                                       std::size_t classes, std::size_t numBoxes, bool centerPointBox,
                                                       int64_t maxPerClass, float iou,
                                                       std::optional<float> scoreThreshold) {
    struct Corners {
        float y1, x1, y2, x2;
    };
    auto corners = [&](std::size_t b, std::size_t i) {
        const float* p = boxes + (b * numBoxes + i) * 4;
        if (centerPointBox) {  // [x_center, y_center, width, height]
            return Corners{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
        }
        return Corners{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
    };
    auto overlap = [](const Corners& a, const Corners& b) {
        const float h = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
        const float w = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
        const float inter = h * w;
        const float uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
        return uni > 0.0f ? inter / uni : 0.0f;
    };
    std::vector<std::array<int64_t, 3>> selected;
    if (maxPerClass <= 0) return selected;
    for (std::size_t b = 0; b < batches; ++b) {
        for (std::size_t c = 0; c < classes; ++c) {
            const float* s = scores + (b * classes + c) * numBoxes;
            std::vector<std::size_t> candidates;
            for (std::size_t i = 0; i < numBoxes; ++i) {
                if (!scoreThreshold || s[i] > *scoreThreshold) candidates.push_back(i);
            }
            std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t x, std::size_t y) { return s[x] > s[y]; });
            std::vector<Corners> kept;
            for (std::size_t i : candidates) {
                if (static_cast<int64_t>(kept.size()) >= maxPerClass) break;
                const Corners box = corners(b, i);
                bool suppressed = false;
                for (const Corners& k : kept) suppressed = suppressed || overlap(box, k) > iou;
                if (suppressed) continue;
                kept.push_back(box);
                selected.push_back({static_cast<int64_t>(b), static_cast<int64_t>(c), static_cast<int64_t>(i)});
            }
        }
    }
    return selected;
}

}  // namespace trellis::valuedep
