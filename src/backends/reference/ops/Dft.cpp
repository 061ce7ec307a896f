// CpuRef Dft (ONNX DFT-17): Float32 and Float64. Each line along the axis is read into double
// (zero-padded or truncated to the DFT length), transformed with DftPlan and written as (re, im)
// pairs; onesided keeps bins 0 .. n / 2. onesided with inverse (numpy.fft.irfft, as ONNX 1.23's
// reference) reads the input as the first half of a Hermitian spectrum and writes the real signal.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Spectral.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>

namespace trellis::ref {

namespace {

template <typename T>
class DftWorkload final : public IWorkload {
public:
    explicit DftWorkload(kernels::DftParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::DftWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Dft<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<T*>(io.m_Outputs[0]->Map()), io.m_Scratch);
    }
private:
    const kernels::DftParams m_P;
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

kernels::DftParams DftRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<DftDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
    const unsigned int r = xs.GetNumDimensions();
    kernels::DftParams p;
    p.plan = kernels::MakeDftPlan(static_cast<std::size_t>(d.m_DftLength.value_or(xs[axis])), d.m_Inverse);
    p.outer = math::Volume(xs, 0, axis);
    p.inner = math::Volume(xs, axis + 1, r - 1);
    p.inLength = xs[axis];
    p.outLength = ys[axis];
    p.complex = xs[r - 1] == 2;
    p.halfSpectrum = d.m_Onesided && d.m_Inverse;
    if (p.halfSpectrum) p.plan = kernels::MakeDftPlan(ys[axis], true);
    return p;
}

IWorkloadPtr DftRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<DftWorkload<double>>(DftRefParams(layer, info));
    }
    return std::make_unique<DftWorkload<float>>(DftRefParams(layer, info));
}

}  // namespace trellis::ref
