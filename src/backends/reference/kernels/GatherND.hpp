// Kernel snippet: GatherND and ScatterND. Indices are int64 tuples (the last dim); each addresses a
// slice of data: the tuple's k leading dims (after GatherND's batch dims) fixed, the rest whole. A
// negative index counts from the end of its dim; one outside [-dim, dim) throws std::out_of_range
// before anything is written. GatherND copies raw slices (every data type). ScatterND copies the
// data, then writes each update slice (reduction none: raw; a repeated tuple keeps the last) or
// combines it (add, mul, max, min: on T, float, int32 or int64). The tuples' offsets are in the workspace.
#pragma once

#include "GatherElements.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace trellis::kernels {

struct TupleParams {
    std::size_t k = 0, batches = 1, tuplesPerBatch = 1, slice = 1, batchStride = 0;
    std::vector<std::size_t> dims, strides;  ///< the k addressed dims and their element strides
    std::size_t elementSize = 0, dataCount = 0;
    ScatterReduction reduction = ScatterReduction::None;
    template <typename F> void Fields(F&& f) const {
        f(k); f(batches); f(tuplesPerBatch); f(slice); f(batchStride); f(dims); f(strides); f(elementSize); f(dataCount); f(reduction);
    }
};

inline std::size_t TupleWorkspaceBytes(const TupleParams& p) { return p.batches * p.tuplesPerBatch * sizeof(std::size_t); }

/// Element offsets into data of every tuple, batch by batch, into `offsets`; throws on an index out
/// of range.
inline void TupleOffsets(const TupleParams& p, const int64_t* indices, std::size_t* offsets) {
    for (std::size_t b = 0; b < p.batches; ++b) {
        for (std::size_t t = 0; t < p.tuplesPerBatch; ++t) {
            const std::size_t tuple = b * p.tuplesPerBatch + t;
            std::size_t off = b * p.batchStride;
            for (std::size_t j = 0; j < p.k; ++j) {
                int64_t v = indices[tuple * p.k + j];
                const int64_t dim = static_cast<int64_t>(p.dims[j]);
                if (v < -dim || v >= dim) {
                    throw std::out_of_range("index " + std::to_string(v) + " (tuple " + std::to_string(tuple) + ", entry " +
                                            std::to_string(j) + ") is out of range [" + std::to_string(-dim) + ", " +
                                            std::to_string(dim) + ")");
                }
                if (v < 0) v += dim;
                off += static_cast<std::size_t>(v) * p.strides[j];
            }
            offsets[tuple] = off;
        }
    }
}

inline void GatherND(const TupleParams& p, const void* data, const int64_t* indices, void* output, void* workspace) {
    auto* offsets = static_cast<std::size_t*>(workspace);
    TupleOffsets(p, indices, offsets);
    const auto* in = static_cast<const unsigned char*>(data);
    auto* y = static_cast<unsigned char*>(output);
    const std::size_t bytes = p.slice * p.elementSize;
    for (std::size_t t = 0; t < p.batches * p.tuplesPerBatch; ++t) std::memcpy(y + t * bytes, in + offsets[t] * p.elementSize, bytes);
}

/// T: the element type add, mul, max and min compute in (unused for reduction none).
template <typename T>
void ScatterND(const TupleParams& p, const void* data, const int64_t* indices, const void* updates, void* output,
               void* workspace) {
    auto* offsets = static_cast<std::size_t*>(workspace);
    TupleOffsets(p, indices, offsets);  // checks before writing
    if (data != output && p.dataCount > 0) std::memcpy(output, data, p.dataCount * p.elementSize);
    const std::size_t tuples = p.batches * p.tuplesPerBatch;
    if (p.reduction == ScatterReduction::None) {
        const auto* u = static_cast<const unsigned char*>(updates);
        auto* y = static_cast<unsigned char*>(output);
        const std::size_t bytes = p.slice * p.elementSize;
        for (std::size_t t = 0; t < tuples; ++t) std::memcpy(y + offsets[t] * p.elementSize, u + t * bytes, bytes);
        return;
    }
    const T* u = static_cast<const T*>(updates);
    T* y = static_cast<T*>(output);
    for (std::size_t t = 0; t < tuples; ++t) {
        T* dst = y + offsets[t];
        const T* src = u + t * p.slice;
        for (std::size_t i = 0; i < p.slice; ++i) {
            switch (p.reduction) {
                case ScatterReduction::Add: dst[i] = static_cast<T>(dst[i] + src[i]); break;
                case ScatterReduction::Mul: dst[i] = static_cast<T>(dst[i] * src[i]); break;
                case ScatterReduction::Max: dst[i] = src[i] > dst[i] ? src[i] : dst[i]; break;
                case ScatterReduction::Min: dst[i] = src[i] < dst[i] ? src[i] : dst[i]; break;
                case ScatterReduction::None: dst[i] = src[i]; break;
            }
        }
    }
}

}  // namespace trellis::kernels
