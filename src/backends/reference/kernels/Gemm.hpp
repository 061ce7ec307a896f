// Kernel snippet: the GEMM every compute-heavy reference kernel shares (Convolution,
// ConvolutionTranspose, Gemm, MatMul, Einsum, Recurrent, ...).
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace trellis::kernels {

/// The type GemmAccumulate computes in: T itself for floats, the unsigned type for integers (whose
/// products and sums then wrap, two's complement, like the Signed32 accumulator of ONNX's integer
/// ops).
template <typename T, bool = std::is_integral_v<T>> struct WrappingType { using Type = T; };
template <typename T> struct WrappingType<T, true> { using Type = std::make_unsigned_t<T>; };

/// C[m x n] += alpha * A[m x k] * B[k x n]. A's element (i, p) is a[i * aRow + p * aCol], so a
/// transposed A is just swapped strides; B and C are row-major with leading dims ldb and ldc.
/// The loops run i-p-j over column blocks of C: the innermost loop is a contiguous axpy the
/// compiler vectorizes, and a block of B (k x 256) stays in L2 while i runs.
template <typename T>
void GemmAccumulate(std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a, std::size_t aRow,
                    std::size_t aCol, const T* b, std::size_t ldb, T* c, std::size_t ldc) {
    using Acc = typename WrappingType<T>::Type;
    constexpr std::size_t kBlock = 256;
    for (std::size_t j0 = 0; j0 < n; j0 += kBlock) {
        const std::size_t j1 = std::min(n, j0 + kBlock);
        for (std::size_t i = 0; i < m; ++i) {
            T* crow = c + i * ldc;
            for (std::size_t p = 0; p < k; ++p) {
                const Acc av = static_cast<Acc>(static_cast<Acc>(alpha) * static_cast<Acc>(a[i * aRow + p * aCol]));
                const T* brow = b + p * ldb;
                for (std::size_t j = j0; j < j1; ++j) {
                    crow[j] = static_cast<T>(static_cast<Acc>(crow[j]) + av * static_cast<Acc>(brow[j]));
                }
            }
        }
    }
}

}  // namespace trellis::kernels
