// Internal helpers shared by the inference functions of the elementwise and data-movement ops
// (src/core/ops/ElementwiseBinary.cpp ... Range.cpp).
//
// Contract: every helper reports a broken rule through ctx.Fail(), so messages carry the layer's
// op and name; none of them keeps state.
#pragma once

#include "core/InferContext.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace trellis::core {

/// "[2, -1, 3]"
inline std::string DimsToString(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(dims[i]);
    }
    return s + "]";
}

inline std::vector<int64_t> ShapeToDims(const TensorShape& shape) {
    return std::vector<int64_t>(shape.GetDims().begin(), shape.GetDims().end());
}

/// Turns resolved dims into a TensorShape; fails when a dim is negative or does not fit the
/// shape's 32-bit dims. `what` names the dims in the message ("output shape").
inline TensorShape DimsToShape(const InferContext& ctx, const std::vector<int64_t>& dims, const char* what) {
    std::vector<unsigned int> out;
    out.reserve(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 0 || dims[i] > std::numeric_limits<unsigned int>::max()) {
            ctx.Fail(std::string(what) + " " + DimsToString(dims) + ": entry " + std::to_string(i) +
                     " is " + std::to_string(dims[i]) + "; dims must lie in [0, 2^32)");
        }
        out.push_back(static_cast<unsigned int>(dims[i]));
    }
    return TensorShape(std::move(out));
}

/// An output that holds the same kind of elements as `like` (type and quantization) with a new
/// shape. Outputs are never marked constant here; constant folding decides that.
inline TensorInfo WithShape(const TensorInfo& like, const TensorShape& shape) {
    TensorInfo out = like;
    out.SetShape(shape);
    out.SetConstant(false);
    return out;
}

/// Reads optional parameter input `i` into `field` and marks the slot absorbed. A slot that is an
/// empty placeholder (an omitted ONNX input) is absorbed without changing `field`. When the
/// descriptor already holds a value, the input must agree with it: two sources that disagree
/// have no single meaning.
inline void ReadParamInts(InferContext& ctx, unsigned int i, std::vector<int64_t>& field, const char* what) {
    if (i >= ctx.GetNumInputs()) return;
    if (ctx.HasInput(i)) {
        std::vector<int64_t> values = ctx.GetParamInts(i, what);
        if (!field.empty() && field != values) {
            ctx.Fail(std::string(what) + " given twice: descriptor holds " + DimsToString(field) + ", input " +
                     std::to_string(i) + " holds " + DimsToString(values) + "; give one of them");
        }
        field = std::move(values);
    }
    ctx.AbsorbInput(i);
}

/// Product of `dims`, failing (naming `what`) on int64 overflow.
inline int64_t CheckedProduct(const InferContext& ctx, const std::vector<int64_t>& dims, const char* what) {
    int64_t p = 1;
    for (int64_t d : dims) {
        if (__builtin_mul_overflow(p, d, &p)) {
            ctx.Fail(std::string(what) + " " + DimsToString(dims) + " has more elements than int64 can count");
        }
    }
    return p;
}

}  // namespace trellis::core
