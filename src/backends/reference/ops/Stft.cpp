// CpuRef Stft (ONNX STFT-17): Float32 and Float64. Frame f of batch b is the frame_length
// samples from f * frame_step, multiplied by the window (all ones when there is none), then
// transformed with DftPlan; onesided keeps bins 0 .. frame_length / 2.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Spectral.hpp"
#include "ops/RefMathCommon.hpp"

namespace trellis::ref {

namespace {

template <typename T>
class StftWorkload final : public IWorkload {
public:
    StftWorkload(kernels::StftParams p, bool hasWindow) : m_P(std::move(p)), m_HasWindow(hasWindow) {}
    std::size_t GetScratchBytes() const override { return kernels::StftWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Stft<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()),
                         m_HasWindow ? static_cast<const T*>(io.m_Inputs[1]->Map()) : nullptr,
                         static_cast<T*>(io.m_Outputs[0]->Map()), io.m_Scratch);
    }
private:
    const kernels::StftParams m_P;
    const bool m_HasWindow;
};

}  // namespace

bool StftRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<StftDescriptor>();
    if (info.m_InputTensorInfos.size() > 2 || !d.m_FrameLength || d.m_FrameStep < 1) {
        return math::Refuse(reason, "Stft: frame_step/frame_length must be folded into the descriptor (got " +
                                        std::to_string(info.m_InputTensorInfos.size()) + " inputs)");
    }
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64) {
        return math::Refuse(reason, std::string("Stft: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64)");
    }
    if (info.m_InputTensorInfos.size() == 2 &&
        (info.m_InputTensorInfos[1].GetDataType() != t ||
         info.m_InputTensorInfos[1].GetNumElements() != static_cast<std::size_t>(*d.m_FrameLength))) {
        return math::Refuse(reason, "Stft: window " + info.m_InputTensorInfos[1].ToString() +
                                        " must hold frame_length values of the signal's type");
    }
    return true;
}

kernels::StftParams StftRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<StftDescriptor>();
    const TensorShape& ss = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    kernels::StftParams p;
    p.plan = kernels::MakeDftPlan(static_cast<std::size_t>(*d.m_FrameLength), false);
    p.step = static_cast<std::size_t>(d.m_FrameStep);
    p.batch = ss[0];
    p.length = ss[1];
    p.complex = ss[2] == 2;
    p.frames = ys[1];
    p.bins = ys[2];
    return p;
}

IWorkloadPtr StftRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const bool hasWindow = info.m_InputTensorInfos.size() > 1;
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<StftWorkload<double>>(StftRefParams(layer, info), hasWindow);
    }
    return std::make_unique<StftWorkload<float>>(StftRefParams(layer, info), hasWindow);
}

}  // namespace trellis::ref
