// CpuRef Det (Float32, Float64): the determinant of each M x M matrix of the input, by LU
// decomposition with partial pivoting in double (the product of the pivots, negated once per
// row swap). An empty (0 x 0) matrix has determinant 1.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Det.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class DetWorkload final : public IWorkload {
public:
    explicit DetWorkload(kernels::DetParams p) : m_P(p) {}
    std::size_t GetScratchBytes() const override { return kernels::DetWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Det<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<T*>(io.m_Outputs[0]->Map()), io.m_Scratch);
    }
private:
    const kernels::DetParams m_P;
};

}  // namespace

bool DetRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64) {
        return math::Refuse(reason, std::string("Det: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64)");
    }
    return true;
}

kernels::DetParams DetRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const unsigned int r = xs.GetNumDimensions();
    return {xs[r - 1], math::Volume(xs, 0, r - 2)};
}

IWorkloadPtr DetRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) return std::make_unique<DetWorkload<double>>(DetRefParams(layer, info));
    return std::make_unique<DetWorkload<float>>(DetRefParams(layer, info));
}

}  // namespace trellis::ref
