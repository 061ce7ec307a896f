// CpuRef Dft (ONNX DFT-17): Float32 and Float64. Each line along the axis is read into double
// (zero-padded or truncated to the DFT length), transformed with DftPlan and written as (re, im)
// pairs; onesided keeps bins 0 .. n / 2.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"
#include "ops/RefSpectral.hpp"

#include <algorithm>

namespace trellis::ref {

namespace {

template <typename T>
class DftWorkload final : public IWorkload {
public:
    DftWorkload(const DftDescriptor& d, const TensorShape& xs, const TensorShape& ys)
        : m_Plan(static_cast<std::size_t>(d.m_DftLength.value_or(xs[static_cast<unsigned int>(d.m_Axis)])), d.m_Inverse) {
        const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
        const unsigned int r = xs.GetNumDimensions();
        m_Outer = math::Volume(xs, 0, axis);
        m_Inner = math::Volume(xs, axis + 1, r - 1);
        m_InLength = xs[axis];
        m_OutLength = ys[axis];
        m_Complex = xs[r - 1] == 2;
    }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        const std::size_t count = std::min(m_InLength, m_Plan.Length());
        const std::size_t comps = m_Complex ? 2 : 1;
        std::vector<double> re(count), im(count, 0.0);
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t i = 0; i < m_Inner; ++i) {
                for (std::size_t j = 0; j < count; ++j) {
                    const std::size_t at = ((o * m_InLength + j) * m_Inner + i) * comps;
                    re[j] = static_cast<double>(x[at]);
                    if (m_Complex) im[j] = static_cast<double>(x[at + 1]);
                }
                for (std::size_t k = 0; k < m_OutLength; ++k) {
                    double vr = 0.0, vi = 0.0;
                    m_Plan.Bin(re.data(), im.data(), count, k, vr, vi);
                    const std::size_t at = ((o * m_OutLength + k) * m_Inner + i) * 2;
                    y[at] = static_cast<T>(vr);
                    y[at + 1] = static_cast<T>(vi);
                }
            }
        }
    }

private:
    DftPlan m_Plan;
    std::size_t m_Outer = 0, m_Inner = 0, m_InLength = 0, m_OutLength = 0;
    bool m_Complex = false;
};

}  // namespace

bool DftRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() != 1) {
        return math::Refuse(reason, "Dft: dft_length must be folded into the descriptor (got " +
                                        std::to_string(info.m_InputTensorInfos.size()) + " inputs)");
    }
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64) {
        return math::Refuse(reason, std::string("Dft: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64)");
    }
    const auto& d = layer.Get<DftDescriptor>();
    if (d.m_Axis < 1 || d.m_Axis + 1 >= static_cast<int64_t>(info.m_InputTensorInfos[0].GetNumDimensions())) {
        return math::Refuse(reason, "Dft: descriptor is not resolved (axis " + std::to_string(d.m_Axis) + ")");
    }
    return true;
}

IWorkloadPtr DftRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<DftDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<DftWorkload<double>>(d, xs, ys);
    }
    return std::make_unique<DftWorkload<float>>(d, xs, ys);
}

}  // namespace trellis::ref
