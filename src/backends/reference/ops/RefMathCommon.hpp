// CpuRef: helpers shared by the compute-heavy reference kernels (Convolution,
// ConvolutionTranspose, Gemm, MatMul, Softmax, Pooling, BatchNormalization, LayerNormalization,
// Reduce, Resize). Header-only; everything here is stateless and thread-safe.
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace trellis::ref::math {

/// Sets `*reason` (when given) and returns false, for support checks.
inline bool Refuse(std::string* reason, const std::string& why) {
    if (reason) *reason = why;
    return false;
}

/// True when every input and output of the layer is Float32; otherwise refuses naming the first
/// tensor that is not ("Convolution: data type Float16 not supported by CpuRef (Float32 only)").
inline bool RequireAllFloat32(const char* op, const WorkloadInfo& info, std::string* reason) {
    for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
        for (const TensorInfo& t : *infos) {
            if (t.GetDataType() != DataType::Float32) {
                return Refuse(reason, std::string(op) + ": data type " + GetDataTypeName(t.GetDataType()) +
                                          " not supported by CpuRef (Float32 only)");
            }
        }
    }
    return true;
}

/// True when the layer has input `i` and it is not an empty placeholder for an omitted optional
/// input (the core normally drops those; a kernel must not read one as data).
inline bool HasInput(const WorkloadInfo& info, std::size_t i) {
    return i < info.m_InputTensorInfos.size() && info.m_InputTensorInfos[i].GetNumElements() != 0;
}

inline const float* InputF32(const WorkloadIo& io, std::size_t i) {
    return static_cast<const float*>(io.m_Inputs[i]->Map());
}
inline float* OutputF32(const WorkloadIo& io, std::size_t i) { return static_cast<float*>(io.m_Outputs[i]->Map()); }

/// Row-major element strides of `shape` (the last dim has stride 1).
inline std::vector<std::size_t> Strides(const TensorShape& shape) {
    std::vector<std::size_t> s(shape.GetNumDimensions(), 1);
    for (std::size_t i = s.size(); i-- > 1;) s[i - 1] = s[i] * shape[static_cast<unsigned int>(i)];
    return s;
}

/// Product of dims [begin, end) of `shape`.
inline std::size_t Volume(const TensorShape& shape, unsigned int begin, unsigned int end) {
    std::size_t v = 1;
    for (unsigned int i = begin; i < end; ++i) v *= shape[i];
    return v;
}

/// C[m x n] += alpha * A[m x k] * B[k x n]. A's element (i, p) is a[i * aRow + p * aCol], so a
/// transposed A is just swapped strides; B and C are row-major with leading dims ldb and ldc.
/// The loops run i-p-j over column blocks of C: the innermost loop is a contiguous axpy the
/// compiler vectorizes, and a block of B (k x 256) stays in L2 while i runs.
/// T is float, or an integer type whose products and sums wrap (two's complement, computed in the
/// unsigned type) like the Signed32 accumulator of ONNX's integer ops.
/// The type GemmAccumulate computes in: T itself for floats, the unsigned type for integers.
template <typename T, bool = std::is_integral_v<T>> struct WrappingType { using Type = T; };
template <typename T> struct WrappingType<T, true> { using Type = std::make_unsigned_t<T>; };

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

/// True when every input and output of the layer has type `type`; otherwise refuses naming the
/// first tensor that has not ("MatMul: data type Float16 not supported by CpuRef (Float32, Signed32)";
/// `supported` is the parenthesis).
inline bool RequireAllOfType(const char* op, const WorkloadInfo& info, DataType type, const char* supported,
                             std::string* reason) {
    for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
        for (const TensorInfo& t : *infos) {
            if (t.GetDataType() != type && t.GetNumElements() != 0) {
                return Refuse(reason, std::string(op) + ": data type " + GetDataTypeName(t.GetDataType()) +
                                          " not supported by CpuRef (" + supported + "; all inputs and outputs alike)");
            }
        }
    }
    return true;
}

}  // namespace trellis::ref::math
