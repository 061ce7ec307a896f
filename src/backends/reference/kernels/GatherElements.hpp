// Kernel snippet: GatherElements and ScatterElements. Both walk every position of the indices
// tensor, with the offset of the data element it addresses (the position itself, with the index in
// place of its coordinate along the axis). Indices are int32 or int64; negative ones count from
// the back; one outside [-dim, dim) throws std::out_of_range before anything is written.
// ScatterElements copies the data, then writes (or, with a reduction, combines) each update.
// Raw elements (every data type), except that reductions compute on float, int32 or int64.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace trellis::kernels {

/// In the order of trellis::ScatterReduction.
enum class ScatterReduction { None, Add, Mul, Max, Min };
inline const char* KernelEnumType(ScatterReduction) { return "ScatterReduction"; }
inline const char* KernelEnumName(ScatterReduction v) {
    switch (v) {
        case ScatterReduction::None: return "None";
        case ScatterReduction::Add: return "Add";
        case ScatterReduction::Mul: return "Mul";
        case ScatterReduction::Max: return "Max";
        case ScatterReduction::Min: return "Min";
    }
    return "";
}

struct ElementsParams {
    std::size_t axis = 0;
    std::vector<std::size_t> indexDims;
    std::vector<int64_t> dataStrides;
    bool indices64 = true;
    std::size_t count = 0;             ///< indices
    int64_t axisDim = 0;
    std::size_t elementSize = 0, dataCount = 0;
    ScatterReduction reduction = ScatterReduction::None;
    template <typename F> void Fields(F&& f) const {
        f(axis); f(indexDims); f(dataStrides); f(indices64); f(count); f(axisDim); f(elementSize); f(dataCount); f(reduction);
    }
};

inline std::size_t ElementsWorkspaceBytes(const ElementsParams& p) { return p.indexDims.size() * sizeof(std::size_t); }

/// Calls f(position, data offset) for every position of the indices.
template <typename F>
void ForEachElementIndex(const ElementsParams& p, const void* indices, void* workspace, F f) {
    auto index = [&](std::size_t j) -> int64_t {
        return p.indices64 ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
    };
    for (std::size_t j = 0; j < p.count; ++j) {
        const int64_t v = index(j);
        if (v < -p.axisDim || v >= p.axisDim) {
            throw std::out_of_range("index " + std::to_string(v) + " (at position " + std::to_string(j) +
                                    ") is out of range [" + std::to_string(-p.axisDim) + ", " + std::to_string(p.axisDim) +
                                    ") along axis " + std::to_string(p.axis));
        }
    }
    const std::size_t rank = p.indexDims.size();
    auto* pos = static_cast<std::size_t*>(workspace);
    for (std::size_t d = 0; d < rank; ++d) pos[d] = 0;
    for (std::size_t j = 0; j < p.count; ++j) {
        int64_t v = index(j);
        if (v < 0) v += p.axisDim;
        std::size_t off = 0;
        for (std::size_t d = 0; d < rank; ++d) {
            off += (d == p.axis ? static_cast<std::size_t>(v) : pos[d]) * static_cast<std::size_t>(p.dataStrides[d]);
        }
        f(j, off);
        for (std::size_t d = rank; d-- > 0;) {  // odometer over the indices' dims
            if (++pos[d] < p.indexDims[d]) break;
            pos[d] = 0;
        }
    }
}

inline void GatherElements(const ElementsParams& p, const void* data, const void* indices, void* output, void* workspace) {
    const auto* in = static_cast<const unsigned char*>(data);
    auto* out = static_cast<unsigned char*>(output);
    ForEachElementIndex(p, indices, workspace, [&](std::size_t j, std::size_t off) {
        std::memcpy(out + j * p.elementSize, in + off * p.elementSize, p.elementSize);
    });
}

template <typename T> T ScatterCombine(ScatterReduction r, T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        if (r == ScatterReduction::Add) return T(U(a) + U(b));
        if (r == ScatterReduction::Mul) return T(U(a) * U(b));
    } else {
        if (r == ScatterReduction::Add) return a + b;
        if (r == ScatterReduction::Mul) return a * b;
    }
    if (r == ScatterReduction::Max) return std::max(a, b);
    if (r == ScatterReduction::Min) return std::min(a, b);
    return b;
}

/// T: the element type the reduction computes in (unused for ScatterReduction::None).
template <typename T>
void ScatterElements(const ElementsParams& p, const void* data, const void* indices, const void* updates, void* output,
                     void* workspace) {
    if (data != output && p.dataCount > 0) std::memcpy(output, data, p.dataCount * p.elementSize);
    if (p.reduction == ScatterReduction::None) {
        auto* o = static_cast<unsigned char*>(output);
        const auto* u = static_cast<const unsigned char*>(updates);
        ForEachElementIndex(p, indices, workspace, [&](std::size_t j, std::size_t off) {
            std::memcpy(o + off * p.elementSize, u + j * p.elementSize, p.elementSize);
        });
        return;
    }
    T* o = static_cast<T*>(output);
    const T* u = static_cast<const T*>(updates);
    ForEachElementIndex(p, indices, workspace, [&](std::size_t j, std::size_t off) { o[off] = ScatterCombine(p.reduction, o[off], u[j]); });
}

}  // namespace trellis::kernels
