// CpuRef: helpers shared by the compute-heavy reference kernels (Convolution,
// ConvolutionTranspose, Gemm, MatMul, Softmax, Pooling, BatchNormalization, LayerNormalization,
// Reduce, Resize). Header-only; everything here is stateless and thread-safe.
#pragma once

#include "kernels/Gemm.hpp"

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

using kernels::GemmAccumulate;
using kernels::WrappingType;

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
