// CpuRef Hardmax: Float32. 1 at the first maximum along the axis (with m_Coerce2d: over all dims
// from the axis on, flattened), 0 elsewhere. NaN never counts as a maximum; a row of NaN marks
// its first element.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

namespace trellis::ref {

namespace {

class HardmaxWorkload final : public IWorkload {
public:
    HardmaxWorkload(const SoftmaxDescriptor& d, const TensorShape& s) {
        const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
        for (unsigned int i = 0; i < axis; ++i) m_Outer *= s[i];
        if (d.m_Coerce2d) {
            for (unsigned int i = axis; i < s.GetNumDimensions(); ++i) m_Dim *= s[i];
        } else {
            m_Dim = s[axis];
            for (unsigned int i = axis + 1; i < s.GetNumDimensions(); ++i) m_Inner *= s[i];
        }
    }
    void Execute(const WorkloadIo& io) const override {
        const float* x = static_cast<const float*>(io.m_Inputs[0]->Map());
        float* y = static_cast<float*>(io.m_Outputs[0]->Map());
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t i = 0; i < m_Inner; ++i) {
                const std::size_t base = o * m_Dim * m_Inner + i;
                std::size_t best = 0;
                for (std::size_t k = 1; k < m_Dim; ++k) {
                    if (x[base + k * m_Inner] > x[base + best * m_Inner] ||
                        (x[base + best * m_Inner] != x[base + best * m_Inner] && x[base + k * m_Inner] == x[base + k * m_Inner])) {
                        best = k;
                    }
                }
                for (std::size_t k = 0; k < m_Dim; ++k) y[base + k * m_Inner] = k == best ? 1.0f : 0.0f;
            }
        }
    }
private:
    std::size_t m_Outer = 1, m_Dim = 1, m_Inner = 1;
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

IWorkloadPtr HardmaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<HardmaxWorkload>(layer.Get<SoftmaxDescriptor>(), info.m_InputTensorInfos[0].GetShape());
}

}  // namespace trellis::ref
