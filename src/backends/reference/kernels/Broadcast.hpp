// Kernel snippet: numpy broadcasting for the element-wise kernels (ElementwiseBinary, PRelu, Where).
//
// A BroadcastPlan is built once: the output's dims, merged where every input is contiguous (or
// broadcast) across them, and each input's element stride per merged dim (0 along dims it
// broadcasts over). Equal shapes merge into one row with stride 1 for every input; a scalar operand
// gets stride 0. ForEachBroadcastRow then hands the kernel one innermost row at a time, so the
// kernel's inner loop sees constant strides (0 or 1) and can take a fast path for them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trellis::kernels {

template <std::size_t N>
struct BroadcastPlan {
    std::vector<int64_t> dims;                   ///< merged output dims, at least one
    std::array<std::vector<int64_t>, N> strides; ///< per input, element stride per merged dim
    std::size_t numElements = 0;                 ///< of the output
    template <typename F> void Fields(F&& f) const { f(dims); f(strides); f(numElements); }
};

/// Plan for broadcasting `inputs` (each numpy-broadcastable to `out`) to `out`.
template <std::size_t N>
BroadcastPlan<N> MakeBroadcastPlan(const std::vector<int64_t>& out, const std::array<std::vector<int64_t>, N>& inputs) {
    BroadcastPlan<N> plan;
    std::size_t count = 1;
    for (int64_t d : out) count *= static_cast<std::size_t>(d);
    plan.numElements = count;
    const std::size_t rank = out.size();
    // Per input, the stride of each output dim: inputs align to the right; a missing or size-1
    // dim broadcasts (stride 0).
    std::array<std::vector<int64_t>, N> full;
    for (std::size_t k = 0; k < N; ++k) {
        const std::vector<int64_t>& in = inputs[k];
        full[k].assign(rank, 0);
        // Unsigned: an empty input (a dim of 0) may have other dims whose product overflows; its
        // strides are then never used, and wrapping is defined where signed overflow is not.
        uint64_t stride = 1;
        for (std::size_t j = in.size(); j-- > 0;) {
            const std::size_t d = rank - (in.size() - j);
            if (in[j] != 1) full[k][d] = static_cast<int64_t>(stride);
            stride *= static_cast<uint64_t>(in[j]);
        }
    }
    for (std::size_t d = 0; d < rank; ++d) {
        const int64_t n = out[d];
        if (n == 1) continue;  // never moves any pointer
        bool merge = !plan.dims.empty();
        for (std::size_t k = 0; k < N && merge; ++k) {
            merge = static_cast<uint64_t>(plan.strides[k].back()) == static_cast<uint64_t>(full[k][d]) * static_cast<uint64_t>(n);
        }
        if (merge) {
            plan.dims.back() = static_cast<int64_t>(static_cast<uint64_t>(plan.dims.back()) * static_cast<uint64_t>(n));
            for (std::size_t k = 0; k < N; ++k) plan.strides[k].back() = full[k][d];
        } else {
            plan.dims.push_back(n);
            for (std::size_t k = 0; k < N; ++k) plan.strides[k].push_back(full[k][d]);
        }
    }
    if (plan.dims.empty()) {  // one element
        plan.dims.push_back(1);
        for (std::size_t k = 0; k < N; ++k) plan.strides[k].push_back(0);
    }
    return plan;
}

template <std::size_t N, typename RowFn>
void BroadcastLevel(const BroadcastPlan<N>& plan, std::size_t level, std::array<int64_t, N> offsets, int64_t& outOffset,
                    const std::array<int64_t, N>& innerStrides, RowFn& row) {
    const int64_t n = plan.dims[level];
    if (level + 1 == plan.dims.size()) {
        row(offsets, outOffset, n, innerStrides);
        outOffset += n;
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        BroadcastLevel(plan, level + 1, offsets, outOffset, innerStrides, row);
        for (std::size_t k = 0; k < N; ++k) offsets[k] += plan.strides[k][level];
    }
}

/// Calls row(offsets, outOffset, n, strides) for every innermost row of the output: `offsets`
/// (std::array<int64_t, N>) are the element offsets of the row's first element in each input,
/// `outOffset` that in the dense output, `strides` each input's element stride along the row.
template <std::size_t N, typename RowFn>
void ForEachBroadcastRow(const BroadcastPlan<N>& plan, RowFn&& row) {
    if (plan.numElements == 0) return;
    std::array<int64_t, N> innerStrides{};
    for (std::size_t k = 0; k < N; ++k) innerStrides[k] = plan.strides[k].back();
    int64_t outOffset = 0;
    BroadcastLevel(plan, 0, std::array<int64_t, N>{}, outOffset, innerStrides, row);
}

}  // namespace trellis::kernels
