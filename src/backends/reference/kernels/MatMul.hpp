// Kernel snippet: MatMul with numpy.matmul semantics (1-D operands, batched, broadcast batch dims).
// T: float, or int32_t (wrapping; the accumulator of ONNX's integer matmuls).
//
// A 1-D A acts as [1, K] and a 1-D B as [K, 1]; both have the same memory layout as the 1-D tensor,
// so only the dims change. Each output matrix [M, N] is the shared i-p-j GEMM (Gemm.hpp) of the A
// and B matrices its batch index selects (stride 0 along broadcast batch dims).
#pragma once

#include "Gemm.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace trellis::kernels {

struct MatMulParams {
    std::size_t m = 0, k = 0, n = 0;
    std::vector<std::size_t> batch, aStride, bStride;  ///< per batch dim: size, each operand's matrix stride
    template <typename F> void Fields(F&& f) const { f(m); f(k); f(n); f(batch); f(aStride); f(bStride); }
};

template <typename T>
void MatMul(const MatMulParams& p, const T* a, const T* b, T* y) {
    // An empty result writes nothing: its batch count alone may be in the billions (a [huge, 0, k] A).
    if (p.m == 0 || p.n == 0) return;
    std::size_t count = 1;
    for (std::size_t d : p.batch) count *= d;
    for (std::size_t flat = 0; flat < count; ++flat) {
        std::size_t aOff = 0, bOff = 0, rest = flat;
        for (std::size_t i = p.batch.size(); i-- > 0;) {
            const std::size_t idx = rest % p.batch[i];
            rest /= p.batch[i];
            aOff += idx * p.aStride[i];
            bOff += idx * p.bStride[i];
        }
        T* yb = y + flat * p.m * p.n;
        std::fill_n(yb, p.m * p.n, T(0));
        GemmAccumulate<T>(p.m, p.n, p.k, T(1), a + aOff, p.k, 1, b + bOff, p.n, yb, p.n);
    }
}

}  // namespace trellis::kernels
