// Kernel snippet: the kernels that move elements without computing on them - Transpose, Expand,
// Slice, Concat, Split - each a strided copy (or one per input or output) of raw bytes, so they
// serve every data type.
#pragma once

#include "StridedCopy.hpp"

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace trellis::kernels {

/// A strided copy whose source (Slice, Split) or destination (Concat) starts `offset` bytes in.
struct OffsetCopy {
    StridedCopy copy;
    std::size_t offset = 0;
    template <typename F> void Fields(F&& f) const { f(copy); f(offset); }
};

/// One offset copy per input (Concat) or output (Split).
struct MultiCopy {
    std::vector<OffsetCopy> copies;
    template <typename F> void Fields(F&& f) const { f(copies); }
};

/// Transpose and Expand: one strided copy of the whole tensor.
inline void CopyTensor(const StridedCopy& p, const void* x, void* y) { p.Run(x, y); }

inline void Slice(const OffsetCopy& p, const void* x, void* y) {
    p.copy.Run(static_cast<const unsigned char*>(x) + p.offset, y);
}

/// Input i goes to its place in the output.
inline void Concat(const MultiCopy& p, const void* const* inputs, void* y) {
    for (std::size_t i = 0; i < p.copies.size(); ++i) {
        p.copies[i].copy.Run(inputs[i], static_cast<unsigned char*>(y) + p.copies[i].offset);
    }
}
inline void Concat(const MultiCopy& p, std::initializer_list<const void*> inputs, void* y) { Concat(p, inputs.begin(), y); }

/// Output i comes from its place in the input.
inline void Split(const MultiCopy& p, const void* x, void* const* outputs) {
    for (std::size_t i = 0; i < p.copies.size(); ++i) {
        p.copies[i].copy.Run(static_cast<const unsigned char*>(x) + p.copies[i].offset, outputs[i]);
    }
}
inline void Split(const MultiCopy& p, const void* x, std::initializer_list<void*> outputs) { Split(p, x, outputs.begin()); }

}  // namespace trellis::kernels
