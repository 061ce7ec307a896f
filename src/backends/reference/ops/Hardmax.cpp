// CpuRef Hardmax: Float32. 1 at the first maximum along the axis (with m_Coerce2d: over all dims
// from the axis on, flattened), 0 elsewhere. NaN never counts as a maximum; a row of NaN marks
// its first element.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Hardmax.hpp"

namespace trellis::ref {

namespace {

class HardmaxWorkload final : public IWorkload {
public:
    explicit HardmaxWorkload(kernels::HardmaxParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::Hardmax(m_P, static_cast<const float*>(io.m_Inputs[0]->Map()), static_cast<float*>(io.m_Outputs[0]->Map()));
    }
private:
    const kernels::HardmaxParams m_P;
};

}  // namespace

bool HardmaxRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Hardmax", info, 1, 1, reason)) return false;
    const TensorInfo& x = info.m_InputTensorInfos[0];
    if (x.GetDataType() != DataType::Float32) {
        return Refuse(reason, std::string("Hardmax: data type ") + GetDataTypeName(x.GetDataType()) +
                                  " is not supported (CpuRef: Float32 only)");
    }
    const int axis = layer.Get<SoftmaxDescriptor>().m_Axis;
    if (axis < 0 || axis >= static_cast<int>(x.GetNumDimensions())) {
        return Refuse(reason, "Hardmax: axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(x.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    return CheckSameEncoding("Hardmax", "output", info.m_OutputTensorInfos[0], "input", x, reason);
}

kernels::HardmaxParams HardmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<SoftmaxDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    kernels::HardmaxParams p;
    const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
    for (unsigned int i = 0; i < axis; ++i) p.outer *= s[i];
    if (d.m_Coerce2d) {
        for (unsigned int i = axis; i < s.GetNumDimensions(); ++i) p.dim *= s[i];
    } else {
        p.dim = s[axis];
        for (unsigned int i = axis + 1; i < s.GetNumDimensions(); ++i) p.inner *= s[i];
    }
    return p;
}

IWorkloadPtr HardmaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<HardmaxWorkload>(HardmaxRefParams(layer, info));
}

}  // namespace trellis::ref
