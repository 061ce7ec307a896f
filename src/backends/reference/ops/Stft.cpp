// CpuRef Stft (ONNX STFT-17): Float32 and Float64. Frame f of batch b is the frame_length
// samples from f * frame_step, multiplied by the window (all ones when there is none), then
// transformed with DftPlan; onesided keeps bins 0 .. frame_length / 2.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"
#include "ops/RefSpectral.hpp"

namespace trellis::ref {

namespace {

template <typename T>
class StftWorkload final : public IWorkload {
public:
    StftWorkload(const StftDescriptor& d, const WorkloadInfo& info)
        : m_Plan(static_cast<std::size_t>(*d.m_FrameLength), false),
          m_Step(static_cast<std::size_t>(d.m_FrameStep)),
          m_HasWindow(info.m_InputTensorInfos.size() > 1) {
        const TensorShape& ss = info.m_InputTensorInfos[0].GetShape();
        const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
        m_Batch = ss[0];
        m_Length = ss[1];
        m_Complex = ss[2] == 2;
        m_Frames = ys[1];
        m_Bins = ys[2];
    }

    void Execute(const WorkloadIo& io) const override {
        const T* s = static_cast<const T*>(io.m_Inputs[0]->Map());
        const T* w = m_HasWindow ? static_cast<const T*>(io.m_Inputs[1]->Map()) : nullptr;
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        const std::size_t n = m_Plan.Length();
        const std::size_t comps = m_Complex ? 2 : 1;
        std::vector<double> re(n), im(n, 0.0);
        for (std::size_t b = 0; b < m_Batch; ++b) {
            for (std::size_t f = 0; f < m_Frames; ++f) {
                for (std::size_t j = 0; j < n; ++j) {
                    const std::size_t at = (b * m_Length + f * m_Step + j) * comps;
                    const double win = w ? static_cast<double>(w[j]) : 1.0;
                    re[j] = static_cast<double>(s[at]) * win;
                    if (m_Complex) im[j] = static_cast<double>(s[at + 1]) * win;
                }
                for (std::size_t k = 0; k < m_Bins; ++k) {
                    double vr = 0.0, vi = 0.0;
                    m_Plan.Bin(re.data(), im.data(), n, k, vr, vi);
                    const std::size_t at = ((b * m_Frames + f) * m_Bins + k) * 2;
                    y[at] = static_cast<T>(vr);
                    y[at + 1] = static_cast<T>(vi);
                }
            }
        }
    }

private:
    DftPlan m_Plan;
    std::size_t m_Step;
    bool m_HasWindow;
    std::size_t m_Batch = 0, m_Length = 0, m_Frames = 0, m_Bins = 0;
    bool m_Complex = false;
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

IWorkloadPtr StftRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<StftDescriptor>();
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<StftWorkload<double>>(d, info);
    }
    return std::make_unique<StftWorkload<float>>(d, info);
}

}  // namespace trellis::ref
