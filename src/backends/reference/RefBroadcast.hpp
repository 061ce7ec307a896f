// CpuRef: numpy broadcasting for the elementwise kernels (ElementwiseBinary, PRelu, Where).
//
// A BroadcastPlan is built once at workload creation: the output's dims, merged where every
// input is contiguous (or broadcast) across them, and each input's element stride per merged
// dim (0 along dims it broadcasts over). Equal shapes merge into one row with stride 1 for every
// input; a scalar operand gets stride 0. ForEachBroadcastRow then hands the kernel one innermost
// row at a time, so the kernel's inner loop sees constant strides (0 or 1) and can take a fast
// path for them. The plan is immutable; concurrent use is safe.
#pragma once

#include <trellis/Types.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trellis::ref {

template <std::size_t N>
struct BroadcastPlan {
    std::vector<int64_t> m_Dims;                       ///< merged output dims, at least one
    std::array<std::vector<int64_t>, N> m_Strides;     ///< per input, element stride per merged dim
    std::size_t m_NumElements = 0;                     ///< of the output
};

/// Plan for broadcasting `inputs` (each numpy-broadcastable to `out`) to `out`.
template <std::size_t N>
BroadcastPlan<N> MakeBroadcastPlan(const TensorShape& out, const std::array<TensorShape, N>& inputs) {
    BroadcastPlan<N> plan;
    plan.m_NumElements = out.GetNumElements();
    const unsigned int rank = out.GetNumDimensions();
    // Per input, the stride of each output dim: inputs align to the right; a missing or size-1
    // dim broadcasts (stride 0).
    std::array<std::vector<int64_t>, N> full;
    for (std::size_t k = 0; k < N; ++k) {
        const TensorShape& in = inputs[k];
        full[k].assign(rank, 0);
        int64_t stride = 1;
        for (unsigned int j = in.GetNumDimensions(); j-- > 0;) {
            const unsigned int d = rank - (in.GetNumDimensions() - j);
            if (in[j] != 1) full[k][d] = stride;
            stride *= in[j];
        }
    }
    for (unsigned int d = 0; d < rank; ++d) {
        const int64_t n = out[d];
        if (n == 1) continue;  // never moves any pointer
        bool merge = !plan.m_Dims.empty();
        for (std::size_t k = 0; k < N && merge; ++k) merge = plan.m_Strides[k].back() == full[k][d] * n;
        if (merge) {
            plan.m_Dims.back() *= n;
            for (std::size_t k = 0; k < N; ++k) plan.m_Strides[k].back() = full[k][d];
        } else {
            plan.m_Dims.push_back(n);
            for (std::size_t k = 0; k < N; ++k) plan.m_Strides[k].push_back(full[k][d]);
        }
    }
    if (plan.m_Dims.empty()) {  // one element
        plan.m_Dims.push_back(1);
        for (std::size_t k = 0; k < N; ++k) plan.m_Strides[k].push_back(0);
    }
    return plan;
}

/// Calls row(offsets, outOffset, n, strides) for every innermost row of the output: `offsets`
/// (std::array<int64_t, N>) are the element offsets of the row's first element in each input,
/// `outOffset` that in the dense output, `strides` each input's element stride along the row.
template <std::size_t N, typename RowFn>
void ForEachBroadcastRow(const BroadcastPlan<N>& plan, RowFn&& row) {
    if (plan.m_NumElements == 0) return;
    const std::size_t outer = plan.m_Dims.size() - 1;
    const int64_t inner = plan.m_Dims.back();
    std::array<int64_t, N> innerStrides;
    for (std::size_t k = 0; k < N; ++k) innerStrides[k] = plan.m_Strides[k].back();
    std::vector<int64_t> index(outer, 0);  // odometer over the outer dims
    std::array<int64_t, N> offsets{};
    for (int64_t outOffset = 0; outOffset < static_cast<int64_t>(plan.m_NumElements); outOffset += inner) {
        row(offsets, outOffset, inner, innerStrides);
        for (std::size_t d = outer; d-- > 0;) {
            if (++index[d] < plan.m_Dims[d]) {
                for (std::size_t k = 0; k < N; ++k) offsets[k] += plan.m_Strides[k][d];
                break;
            }
            index[d] = 0;
            for (std::size_t k = 0; k < N; ++k) offsets[k] -= plan.m_Strides[k][d] * (plan.m_Dims[d] - 1);
        }
    }
}

}  // namespace trellis::ref
