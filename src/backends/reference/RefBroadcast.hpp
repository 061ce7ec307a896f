// CpuRef: numpy broadcasting for the elementwise kernels (ElementwiseBinary, PRelu, Where): the
// kernel snippet kernels/Broadcast.hpp, planned from TensorShapes.
#pragma once

#include "kernels/Broadcast.hpp"

#include <trellis/Types.hpp>

namespace trellis::ref {

using kernels::BroadcastPlan;
using kernels::ForEachBroadcastRow;

inline std::vector<int64_t> DimsOf(const TensorShape& shape) {
    return std::vector<int64_t>(shape.GetDims().begin(), shape.GetDims().end());
}

/// Plan for broadcasting `inputs` (each numpy-broadcastable to `out`) to `out`.
template <std::size_t N>
BroadcastPlan<N> MakeBroadcastPlan(const TensorShape& out, const std::array<TensorShape, N>& inputs) {
    std::array<std::vector<int64_t>, N> dims;
    for (std::size_t k = 0; k < N; ++k) dims[k] = DimsOf(inputs[k]);
    return kernels::MakeBroadcastPlan<N>(DimsOf(out), dims);
}

}  // namespace trellis::ref
