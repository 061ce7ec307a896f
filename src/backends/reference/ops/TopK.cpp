// CpuRef TopK: Float32, Float64, Signed32, Signed64, UInt8, UInt64. For every line along the axis, the indices
// 0..dim-1 are partially sorted by value (descending for largest, ascending otherwise; equal
// values keep the lower index first, as ONNX asks) and the first K written out with their values.
// NaN sorts as larger than every number (numpy's order), so largest puts it first.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Selection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class TopKWorkload final : public IWorkload {
public:
    explicit TopKWorkload(kernels::TopKParams p) : m_P(p) {}
    std::size_t GetScratchBytes() const override { return kernels::TopKWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::TopK<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<T*>(io.m_Outputs[0]->Map()),
                         static_cast<int64_t*>(io.m_Outputs[1]->Map()), io.m_Scratch);
    }
private:
    const kernels::TopKParams m_P;
};

}  // namespace

bool TopKRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("TopK", info, 1, 2, reason)) return false;
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64 && t != DataType::Signed32 && t != DataType::Signed64 &&
        t != DataType::UInt8 && t != DataType::UInt64) {
        return Refuse(reason, std::string("TopK: data type ") + GetDataTypeName(t) +
                                  " not supported by CpuRef (Float32, Float64, Signed32, Signed64, UInt8, UInt64)");
    }
    return true;
}

kernels::TopKParams TopKRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<TopKDescriptor>();
    const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
    kernels::TopKParams p;
    p.k = static_cast<std::size_t>(d.m_K);
    p.largest = d.m_Largest;
    const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
    p.dim = x[axis];
    for (unsigned int i = 0; i < axis; ++i) p.outer *= x[i];
    for (unsigned int i = axis + 1; i < x.GetNumDimensions(); ++i) p.inner *= x[i];
    return p;
}

IWorkloadPtr TopKRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const kernels::TopKParams p = TopKRefParams(layer, info);
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Float64: return std::make_unique<TopKWorkload<double>>(p);
        case DataType::Signed32: return std::make_unique<TopKWorkload<int32_t>>(p);
        case DataType::Signed64: return std::make_unique<TopKWorkload<int64_t>>(p);
        case DataType::UInt8: return std::make_unique<TopKWorkload<uint8_t>>(p);
        case DataType::UInt64: return std::make_unique<TopKWorkload<uint64_t>>(p);
        default: return std::make_unique<TopKWorkload<float>>(p);
    }
}

}  // namespace trellis::ref
