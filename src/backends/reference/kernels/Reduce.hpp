// Kernel snippet: Reduce - Mean / Sum / Max / Min / L1 / L2 / Prod / LogSum / LogSumExp / SumSquare
// over any set of axes (none: a copy, the noop_with_empty_axes case). keepdims does not change the
// memory layout. float and double for every operation; int32/int64 for those with an integer result
// (Sum, Max, Min, L1, Prod, SumSquare); uint8 and Boolean (uint8 0/1, `boolean`) for Max and Min.
// Over an empty set (ONNX 18+) Max gives -inf (the type's lowest value for integers, false for
// Boolean) and Min +inf (the highest, true for Boolean).
//
// Each operation is a fold (the accumulator's start value and how an element joins it) and a
// finish (Mean divides, L2 takes the root, LogSum and LogSumExp the log). LogSumExp subtracts
// nothing: its sum of e^x is kept in double, which holds e^x for every float x below 709. One pass
// over the input: each element is folded into the output element it maps to (stride 0 along
// reduced dims). The accumulators (double for floats, int64 for integers) and the odometer live in
// the workspace.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace trellis::kernels {

/// In the order of trellis::ReduceOperation.
enum class ReduceOp { Mean, Sum, Max, Min, L1, L2, Prod, LogSum, LogSumExp, SumSquare };
inline const char* KernelEnumType(ReduceOp) { return "ReduceOp"; }
inline const char* KernelEnumName(ReduceOp v) {
    switch (v) {
        case ReduceOp::Mean: return "Mean";
        case ReduceOp::Sum: return "Sum";
        case ReduceOp::Max: return "Max";
        case ReduceOp::Min: return "Min";
        case ReduceOp::L1: return "L1";
        case ReduceOp::L2: return "L2";
        case ReduceOp::Prod: return "Prod";
        case ReduceOp::LogSum: return "LogSum";
        case ReduceOp::LogSumExp: return "LogSumExp";
        case ReduceOp::SumSquare: return "SumSquare";
    }
    return "";
}

struct ReduceParams {
    ReduceOp op = ReduceOp::Mean;
    std::vector<std::size_t> in;         ///< the input's dims
    std::size_t inCount = 0;
    std::vector<std::size_t> outStride;  ///< per input dim: its stride in the output (0: reduced)
    std::size_t outCount = 1, reducedCount = 1;
    bool copy = false;                   ///< no axes: the output is the input
    bool boolean = false;                ///< the elements are Boolean 0/1 bytes (T is uint8_t)
    template <typename F> void Fields(F&& f) const {
        f(op); f(in); f(inCount); f(outStride); f(outCount); f(reducedCount); f(copy); f(boolean);
    }
};

template <typename T> using ReduceAccumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T>
std::size_t ReduceWorkspaceBytes(const ReduceParams& p) {
    return p.outCount * sizeof(ReduceAccumulator<T>) + p.in.size() * sizeof(std::size_t);
}

template <typename T, typename Acc>
void ReduceCombine(ReduceOp op, Acc& a, T v) {
    switch (op) {
        case ReduceOp::Mean:
        case ReduceOp::Sum: a += static_cast<Acc>(v); break;
        case ReduceOp::Max: a = std::max(a, static_cast<Acc>(v)); break;
        case ReduceOp::Min: a = std::min(a, static_cast<Acc>(v)); break;
        case ReduceOp::L1:
            if constexpr (std::is_signed_v<T>) a += v < T(0) ? -static_cast<Acc>(v) : static_cast<Acc>(v);
            else a += static_cast<Acc>(v);
            break;
        case ReduceOp::L2:
        case ReduceOp::SumSquare: a += static_cast<Acc>(v) * static_cast<Acc>(v); break;
        case ReduceOp::Prod: a *= static_cast<Acc>(v); break;
        case ReduceOp::LogSum: a += static_cast<Acc>(v); break;
        case ReduceOp::LogSumExp:
            if constexpr (std::is_floating_point_v<Acc>) a += std::exp(static_cast<Acc>(v));
            break;
    }
}

template <typename Acc>
Acc ReduceFinish(const ReduceParams& p, Acc v) {
    if constexpr (std::is_floating_point_v<Acc>) {
        switch (p.op) {
            case ReduceOp::Mean: return v / static_cast<Acc>(p.reducedCount);
            case ReduceOp::L2: return std::sqrt(v);
            case ReduceOp::LogSum:
            case ReduceOp::LogSumExp: return std::log(v);
            default: return v;
        }
    }
    return v;  // integer operations need no finish (the others are refused for integers)
}

template <typename T>
void Reduce(const ReduceParams& p, const T* x, T* y, void* workspace) {
    using Acc = ReduceAccumulator<T>;
    if (p.copy) {
        std::memcpy(y, x, p.inCount * sizeof(T));
        return;
    }
    Acc* acc = static_cast<Acc*>(workspace);
    std::size_t* idx = reinterpret_cast<std::size_t*>(acc + p.outCount);
    Acc init = 0;
    constexpr bool kFloat = std::is_floating_point_v<Acc>;
    if (p.op == ReduceOp::Max) init = kFloat ? -std::numeric_limits<Acc>::infinity() : Acc(std::numeric_limits<T>::lowest());
    if (p.op == ReduceOp::Min) {
        init = kFloat ? std::numeric_limits<Acc>::infinity() : (p.boolean ? Acc(1) : Acc(std::numeric_limits<T>::max()));
    }
    if (p.op == ReduceOp::Prod) init = 1;
    std::fill_n(acc, p.outCount, init);
    const std::size_t rank = p.in.size();
    if (p.inCount != 0) {
        if (rank == 0) {  // a scalar reduced over no dims
            ReduceCombine(p.op, acc[0], x[0]);
        } else {
            const std::size_t inner = p.in[rank - 1], innerStride = p.outStride[rank - 1];
            std::fill_n(idx, rank, std::size_t{0});
            std::size_t out = 0;
            for (std::size_t base = 0; base < p.inCount; base += inner) {
                for (std::size_t i = 0; i < inner; ++i) ReduceCombine(p.op, acc[out + i * innerStride], x[base + i]);
                for (std::size_t d = rank - 1; d-- > 0;) {  // advance the odometer over dims [0, rank - 1)
                    out += p.outStride[d];
                    if (++idx[d] < p.in[d]) break;
                    out -= p.outStride[d] * p.in[d];
                    idx[d] = 0;
                }
            }
        }
    }
    for (std::size_t i = 0; i < p.outCount; ++i) y[i] = static_cast<T>(ReduceFinish(p, acc[i]));
}

}  // namespace trellis::kernels
