// CpuRef NegativeLogLikelihoodLoss: Float32 and Float64. Each position (n, d...) of the target
// picks loss = -x[n, target, d...] * weight[target] (weight 1 without a weight input); a target
// equal to the ignore index contributes 0 and no weight. Reduction sum adds the losses, mean
// divides that sum by the sum of the weights picked (0/0 = NaN when every target is ignored, as
// ONNX's reference gives). Sums run in double and round once. A target outside [0, C) that is
// not the ignore index throws RuntimeException naming the layer, the value and its position.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <optional>

namespace trellis::ref {

namespace {

template <typename T>
class NegativeLogLikelihoodLossWorkload final : public IWorkload {
public:
    NegativeLogLikelihoodLossWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Layer(layer.m_LayerName), m_Desc(layer.Get<NegativeLogLikelihoodLossDescriptor>()),
          m_Target64(info.m_InputTensorInfos[1].GetDataType() == DataType::Signed64),
          m_HasWeight(info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0) {
        const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
        m_N = x[0];
        m_C = x[1];
        for (unsigned int i = 2; i < x.GetNumDimensions(); ++i) m_D *= x[i];
    }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        const void* target = io.m_Inputs[1]->Map();
        const T* weight = m_HasWeight ? static_cast<const T*>(io.m_Inputs[2]->Map()) : nullptr;
        T* out = static_cast<T*>(io.m_Outputs[0]->Map());
        double lossSum = 0.0, weightSum = 0.0;
        for (std::size_t n = 0; n < m_N; ++n) {
            for (std::size_t d = 0; d < m_D; ++d) {
                const std::size_t j = n * m_D + d;
                const int64_t t = m_Target64 ? static_cast<const int64_t*>(target)[j] : static_cast<const int32_t*>(target)[j];
                double loss = 0.0, w = 0.0;
                if (!(m_Desc.m_IgnoreIndex && t == *m_Desc.m_IgnoreIndex)) {
                    if (t < 0 || t >= static_cast<int64_t>(m_C)) {
                        throw RuntimeException("NegativeLogLikelihoodLoss '" + m_Layer + "': target " + std::to_string(t) +
                                               " (at position " + std::to_string(j) + ") is out of range [0, " +
                                               std::to_string(m_C) + ") and is not the ignore index");
                    }
                    const auto c = static_cast<std::size_t>(t);
                    w = weight ? static_cast<double>(weight[c]) : 1.0;
                    loss = -static_cast<double>(x[(n * m_C + c) * m_D + d]) * w;
                }
                if (m_Desc.m_Reduction == LossReduction::None) out[j] = static_cast<T>(loss);
                lossSum += loss;
                weightSum += w;
            }
        }
        if (m_Desc.m_Reduction == LossReduction::Sum) out[0] = static_cast<T>(lossSum);
        if (m_Desc.m_Reduction == LossReduction::Mean) out[0] = static_cast<T>(lossSum / weightSum);
    }

private:
    std::string m_Layer;
    NegativeLogLikelihoodLossDescriptor m_Desc;
    bool m_Target64;
    bool m_HasWeight;
    std::size_t m_N = 1, m_C = 1, m_D = 1;
};

}  // namespace

bool NegativeLogLikelihoodLossRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const char* op = "NegativeLogLikelihoodLoss";
    if (info.m_InputTensorInfos.size() != 2 && info.m_InputTensorInfos.size() != 3) {
        return Refuse(reason, std::string(op) + ": expects 2 or 3 inputs (x, target, optional weight), got " +
                                  std::to_string(info.m_InputTensorInfos.size()));
    }
    if (info.m_OutputTensorInfos.size() != 1) return Refuse(reason, std::string(op) + ": expects 1 output");
    const TensorInfo& x = info.m_InputTensorInfos[0];
    if (x.GetDataType() != DataType::Float32 && x.GetDataType() != DataType::Float64) {
        return Refuse(reason, std::string(op) + ": data type " + GetDataTypeName(x.GetDataType()) +
                                  " is not supported (CpuRef: Float32, Float64)");
    }
    const DataType t = info.m_InputTensorInfos[1].GetDataType();
    if (t != DataType::Signed32 && t != DataType::Signed64) {
        return Refuse(reason, std::string(op) + ": target type " + GetDataTypeName(t) + " is not Signed32 or Signed64");
    }
    if (info.m_InputTensorInfos.size() == 3 && info.m_InputTensorInfos[2].GetNumElements() != 0 &&
        !CheckType(op, "weight", info.m_InputTensorInfos[2], x.GetDataType(), reason)) {
        return false;
    }
    return CheckType(op, "output", info.m_OutputTensorInfos[0], x.GetDataType(), reason);
}

IWorkloadPtr NegativeLogLikelihoodLossRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<NegativeLogLikelihoodLossWorkload<double>>(layer, info);
    }
    return std::make_unique<NegativeLogLikelihoodLossWorkload<float>>(layer, info);
}

}  // namespace trellis::ref
