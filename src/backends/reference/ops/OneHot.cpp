// CpuRef OneHot: indices Float32, Float64, Signed32, Signed64 or UInt8 (floats truncated toward
// zero), values of every data type (raw element copies). A negative index counts from depth; one
// outside [-depth, depth) gives a row of "off" values (ONNX).
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/IndexOps.hpp"

#include <cmath>
#include <cstring>

namespace trellis::ref {

namespace {

class OneHotWorkload final : public IWorkload {
public:
    explicit OneHotWorkload(kernels::OneHotParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::OneHot(m_P, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map());
    }
private:
    const kernels::OneHotParams m_P;
};

}  // namespace

bool OneHotRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("OneHot", info, 2, 1, reason)) return false;
    const DataType it = info.m_InputTensorInfos[0].GetDataType();
    if (it != DataType::Float32 && it != DataType::Float64 && it != DataType::Signed32 && it != DataType::Signed64 &&
        it != DataType::UInt8) {
        return Refuse(reason, std::string("OneHot: indices are ") + GetDataTypeName(it) +
                                  "; CpuRef takes Float32, Float64, Signed32, Signed64 or UInt8");
    }
    const auto& d = layer.Get<OneHotDescriptor>();
    const unsigned int rank = info.m_InputTensorInfos[0].GetNumDimensions();
    if (d.m_Axis < 0 || d.m_Axis > static_cast<int64_t>(rank) || d.m_Depth < 1) {
        return Refuse(reason, "OneHot: axis " + std::to_string(d.m_Axis) + " / depth " + std::to_string(d.m_Depth) +
                                  " are not resolved (axis in [0, rank], depth >= 1) as Optimize() leaves them");
    }
    if (info.m_InputTensorInfos[1].GetNumElements() != 2) return Refuse(reason, "OneHot: values must hold 2 elements");
    return CheckSameEncoding("OneHot", "output", info.m_OutputTensorInfos[0], "values", info.m_InputTensorInfos[1], reason);
}

kernels::OneHotParams OneHotRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<OneHotDescriptor>();
    kernels::OneHotParams p;
    p.depth = d.m_Depth;
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Float32: p.indexType = kernels::OneHotIndexType::Float32; break;
        case DataType::Float64: p.indexType = kernels::OneHotIndexType::Float64; break;
        case DataType::Signed32: p.indexType = kernels::OneHotIndexType::Int32; break;
        case DataType::UInt8: p.indexType = kernels::OneHotIndexType::UInt8; break;
        default: p.indexType = kernels::OneHotIndexType::Int64; break;
    }
    p.elementSize = GetDataTypeSize(info.m_InputTensorInfos[1].GetDataType());
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
    for (unsigned int i = 0; i < axis; ++i) p.outer *= s[i];
    for (unsigned int i = axis; i < s.GetNumDimensions(); ++i) p.inner *= s[i];
    return p;
}

IWorkloadPtr OneHotRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<OneHotWorkload>(OneHotRefParams(layer, info));
}

}  // namespace trellis::ref
