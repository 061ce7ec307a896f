// Kernel snippet: the element copier of the kernels that move elements without computing on them
// (Concat, Split, Slice, Transpose, Expand, Tile, Pad, SpaceToDepth, ...).
//
// It works on raw bytes by element size, so one implementation serves every data type. It copies
// the box `dims`: element (i_0, ..., i_n) goes from src + sum(i_k * srcStrides[k]) to
// dst + sum(i_k * dstStrides[k]). Built once (MakeStridedCopy): dims that are contiguous on both
// sides are merged, so a dense copy becomes one memcpy. Strides may be 0 (broadcast) or negative
// (a reversed slice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace trellis::kernels {

/// One innermost row of n elements of ES bytes. Loads go through memcpy: tensors need not be
/// aligned to their element size (user buffers), and fixed-size memcpy compiles to plain moves.
template <std::size_t ES>
void CopyRow(const unsigned char* src, unsigned char* dst, int64_t n, int64_t srcStride, int64_t dstStride) {
    if (srcStride == static_cast<int64_t>(ES) && dstStride == static_cast<int64_t>(ES)) {
        std::memcpy(dst, src, static_cast<std::size_t>(n) * ES);
        return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dstStride, src + i * srcStride, ES);
}

inline void CopyRowAny(const unsigned char* src, unsigned char* dst, int64_t n, int64_t srcStride, int64_t dstStride,
                       std::size_t es) {
    switch (es) {
        case 1: CopyRow<1>(src, dst, n, srcStride, dstStride); return;
        case 2: CopyRow<2>(src, dst, n, srcStride, dstStride); return;
        case 4: CopyRow<4>(src, dst, n, srcStride, dstStride); return;
        case 8: CopyRow<8>(src, dst, n, srcStride, dstStride); return;
        default:
            for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dstStride, src + i * srcStride, es);
    }
}

struct StridedCopy {
    std::vector<int64_t> dims;        ///< merged; empty when the box has no elements
    std::vector<int64_t> srcStrides;  ///< in bytes
    std::vector<int64_t> dstStrides;  ///< in bytes
    std::size_t elementSize = 0;
    template <typename F> void Fields(F&& f) const { f(dims); f(srcStrides); f(dstStrides); f(elementSize); }

    /// `src` and `dst` point at the box's first element on each side.
    void Run(const void* src, void* dst) const {
        if (dims.empty()) return;
        Level(0, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
    }

    void Level(std::size_t level, const unsigned char* src, unsigned char* dst) const {
        const int64_t n = dims[level];
        if (level + 1 == dims.size()) {
            CopyRowAny(src, dst, n, srcStrides[level], dstStrides[level], elementSize);
            return;
        }
        for (int64_t i = 0; i < n; ++i) Level(level + 1, src + i * srcStrides[level], dst + i * dstStrides[level]);
    }
};

/// The copy of box `dims` with element strides `srcStrides` and `dstStrides`.
inline StridedCopy MakeStridedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& srcStrides,
                                   const std::vector<int64_t>& dstStrides, std::size_t elementSize) {
    StridedCopy c;
    c.elementSize = elementSize;
    for (int64_t d : dims) {
        if (d == 0) return c;  // nothing to copy: dims stay empty
    }
    // Size-1 dims never move the pointer, so they drop out; then neighbours that are contiguous
    // on both sides merge (a 0 stride merges with a 0 stride: broadcasting stays broadcasting).
    const int64_t es = static_cast<int64_t>(elementSize);
    for (std::size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 1) continue;
        const int64_t s = srcStrides[k] * es, t = dstStrides[k] * es;
        if (!c.dims.empty() && c.srcStrides.back() == s * dims[k] && c.dstStrides.back() == t * dims[k]) {
            c.dims.back() *= dims[k];
            c.srcStrides.back() = s;
            c.dstStrides.back() = t;
        } else {
            c.dims.push_back(dims[k]);
            c.srcStrides.push_back(s);
            c.dstStrides.push_back(t);
        }
    }
    if (c.dims.empty()) {  // a single element (scalar or all dims 1)
        c.dims.push_back(1);
        c.srcStrides.push_back(es);
        c.dstStrides.push_back(es);
    }
    return c;
}

/// Row-major strides (in elements) of a dense tensor of `dims`.
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size());
    int64_t s = 1;
    for (std::size_t k = dims.size(); k-- > 0;) {
        strides[k] = s;
        s *= dims[k];
    }
    return strides;
}

/// Fills `count` elements at `dst` with copies of the `elementSize`-byte element at `value`.
inline void FillElements(void* dst, const void* value, std::size_t elementSize, std::size_t count) {
    auto* out = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(out + i * elementSize, value, elementSize);
}

/// Copies `bytes` bytes; nothing when the two pointers are the same buffer (in-place layers).
inline void CopyBytes(const void* src, void* dst, std::size_t bytes) {
    if (src != dst && bytes > 0) std::memcpy(dst, src, bytes);
}

}  // namespace trellis::kernels
