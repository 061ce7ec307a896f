// Kernel snippet: CumSum (or CumProd, `product`) along an axis, inclusive or exclusive, forward or
// reversed. Sums and products run in double for floats and wrap (the unsigned type) for integers. The axis is the parameters' or,
// when given, read from the axis input (int32 or int64) at run time; an axis outside
// [-rank, rank) then throws std::out_of_range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace trellis::kernels {

/// The accumulator: double for floats, the unsigned type (wrapping sums) for integers.
template <typename T, bool = std::is_floating_point_v<T>> struct CumSumAcc { using Type = double; };
template <typename T> struct CumSumAcc<T, false> { using Type = std::make_unsigned_t<T>; };

struct CumSumParams {
    bool exclusive = false, reverse = false;
    bool product = false;           ///< running products (CumProd) instead of sums
    int64_t axis = 0;
    int axisInputBits = 0;          ///< 32 or 64 when the axis is a run-time input, else 0
    std::vector<std::size_t> shape;
    template <typename F> void Fields(F&& f) const { f(exclusive); f(reverse); f(product); f(axis); f(axisInputBits); f(shape); }
};

/// `axisInput` may be null (the axis from the parameters).
template <typename T>
void CumSum(const CumSumParams& p, const T* x, const void* axisInput, T* y) {
    using Acc = typename CumSumAcc<T>::Type;
    int64_t axis = p.axis;
    if (p.axisInputBits != 0) {
        axis = p.axisInputBits == 64 ? *static_cast<const int64_t*>(axisInput) : *static_cast<const int32_t*>(axisInput);
        const int64_t rank = static_cast<int64_t>(p.shape.size());
        if (axis < -rank || axis >= rank) {
            throw std::out_of_range("axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
                                    std::to_string(rank) + ")");
        }
        if (axis < 0) axis += rank;
    }
    std::size_t outer = 1, inner = 1;
    const std::size_t dim = p.shape[static_cast<std::size_t>(axis)];
    for (std::size_t i = 0; i < static_cast<std::size_t>(axis); ++i) outer *= p.shape[i];
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < p.shape.size(); ++i) inner *= p.shape[i];
    for (std::size_t o = 0; o < outer; ++o) {
        for (std::size_t i = 0; i < inner; ++i) {
            const std::size_t base = o * dim * inner + i;
            Acc acc = p.product ? Acc(1) : Acc(0);
            for (std::size_t k = 0; k < dim; ++k) {
                const std::size_t at = base + (p.reverse ? dim - 1 - k : k) * inner;
                const Acc v = static_cast<Acc>(x[at]);
                if (p.exclusive) {
                    y[at] = static_cast<T>(acc);
                    acc = p.product ? Acc(acc * v) : Acc(acc + v);
                } else {
                    acc = p.product ? Acc(acc * v) : Acc(acc + v);
                    y[at] = static_cast<T>(acc);
                }
            }
        }
    }
}

}  // namespace trellis::kernels
