// CpuRef ArgMinMax (ONNX ArgMax / ArgMin): Float32, Signed32, Signed64 and UInt8 inputs, Signed64
// output. Ties go to the first index, or the last with m_SelectLastIndex. NaN counts as the
// extreme for both (like numpy's argmax/argmin): the first NaN wins (the last one with
// m_SelectLastIndex).
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/ArgMinMax.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace trellis::ref {

namespace {

template <typename T>
class ArgMinMaxWorkload final : public IWorkload {
public:
    explicit ArgMinMaxWorkload(kernels::ArgMinMaxParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::ArgMinMax<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<int64_t*>(io.m_Outputs[0]->Map()));
    }
private:
    const kernels::ArgMinMaxParams m_P;
};

}  // namespace

bool ArgMinMaxRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const char* name = layer.Get<ArgMinMaxDescriptor>().m_Function == ArgMinMaxFunction::Max ? "ArgMax" : "ArgMin";
    if (!CheckArity(name, info, 1, 1, reason)) return false;
    const TensorInfo& x = info.m_InputTensorInfos[0];
    const DataType t = x.GetDataType();
    if (t != DataType::Float32 && t != DataType::Signed32 && t != DataType::Signed64 && t != DataType::UInt8) {
        return Refuse(reason, std::string(name) + ": data type " + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Signed32, Signed64, UInt8)");
    }
    const int64_t axis = layer.Get<ArgMinMaxDescriptor>().m_Axis;
    if (axis < 0 || axis >= static_cast<int64_t>(x.GetNumDimensions())) {
        return Refuse(reason, std::string(name) + ": axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(x.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    return CheckType(name, "output", info.m_OutputTensorInfos[0], DataType::Signed64, reason);
}

kernels::ArgMinMaxParams ArgMinMaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ArgMinMaxDescriptor>();
    const TensorShape& in = info.m_InputTensorInfos[0].GetShape();
    kernels::ArgMinMaxParams p;
    p.max = d.m_Function == ArgMinMaxFunction::Max;
    p.selectLast = d.m_SelectLastIndex;
    const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
    for (unsigned int i = 0; i < axis; ++i) p.outer *= in[i];
    p.dim = in[axis];
    for (unsigned int i = axis + 1; i < in.GetNumDimensions(); ++i) p.inner *= in[i];
    return p;
}

IWorkloadPtr ArgMinMaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const kernels::ArgMinMaxParams p = ArgMinMaxRefParams(layer, info);
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ArgMinMaxWorkload<int32_t>>(p);
        case DataType::Signed64: return std::make_unique<ArgMinMaxWorkload<int64_t>>(p);
        case DataType::UInt8: return std::make_unique<ArgMinMaxWorkload<uint8_t>>(p);
        default: return std::make_unique<ArgMinMaxWorkload<float>>(p);
    }
}

}  // namespace trellis::ref
