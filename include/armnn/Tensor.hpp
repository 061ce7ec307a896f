// Arm NN compatibility layer: tensors. TensorShape, TensorInfo and Tensor are Trellis's types;
// ConstTensor is Trellis's ConstTensor whose info is always marked constant. (Arm NN 22.05 and
// later throw when a ConstTensor's info is not marked constant with TensorInfo::SetConstant();
// older Arm NN did not ask. The compatibility layer marks it instead, so programs written for
// either run.)
//
// Ownership: Tensor and ConstTensor do not own the memory they point at; the caller keeps it
// alive while the tensor is used (as in Arm NN). Value types.
#pragma once

#include <armnn/Exceptions.hpp>
#include <armnn/Types.hpp>
#include <trellis/Types.hpp>

#include <utility>
#include <vector>

namespace armnn {

using trellis::kUnknownDim;
using TensorShape = trellis::TensorShape;
using TensorInfo = trellis::TensorInfo;
using Tensor = trellis::Tensor;

/// Read-only view of memory the caller owns; GetInfo().IsConstant() is true.
class ConstTensor : public trellis::ConstTensor {
public:
    ConstTensor() = default;
    template <typename MemoryType>
    ConstTensor(const TensorInfo& info, MemoryType* memoryArea)
        : trellis::ConstTensor(info, static_cast<const void*>(memoryArea)) {
        m_Info.SetConstant(true);
    }
    template <typename T>
    ConstTensor(const TensorInfo& info, const std::vector<T>& memory) : ConstTensor(info, memory.data()) {}
    /// A writable tensor viewed read-only (no constness check, as in Arm NN).
    ConstTensor(const Tensor& tensor) : trellis::ConstTensor(tensor) {}  // NOLINT: implicit as in Arm NN
    ConstTensor(const trellis::ConstTensor& tensor) : trellis::ConstTensor(tensor) {}  // NOLINT
};

using InputTensors = std::vector<std::pair<LayerBindingId, ConstTensor>>;
using OutputTensors = std::vector<std::pair<LayerBindingId, Tensor>>;

/// A network input's or output's binding id and tensor info (what the parsers return).
using BindingPointInfo = std::pair<LayerBindingId, TensorInfo>;

}  // namespace armnn
