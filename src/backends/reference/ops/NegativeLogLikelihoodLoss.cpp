// CpuRef NegativeLogLikelihoodLoss: Float32 and Float64. Each position (n, d...) of the target
// picks loss = -x[n, target, d...] * weight[target] (weight 1 without a weight input); a target
// equal to the ignore index contributes 0 and no weight. Reduction sum adds the losses, mean
// divides that sum by the sum of the weights picked (0/0 = NaN when every target is ignored, as
// ONNX's reference gives). Sums run in double and round once. A target outside [0, C) that is
// not the ignore index throws RuntimeException naming the layer, the value and its position.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/NegativeLogLikelihoodLoss.hpp"

#include <trellis/Exceptions.hpp>

#include <optional>

namespace trellis::ref {

namespace {

template <typename T>
class NegativeLogLikelihoodLossWorkload final : public IWorkload {
public:
    NegativeLogLikelihoodLossWorkload(kernels::NllLossParams p, bool hasWeight, std::string layer)
        : m_P(p), m_HasWeight(hasWeight), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::NegativeLogLikelihoodLoss<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), io.m_Inputs[1]->Map(),
                                                  m_HasWeight ? static_cast<const T*>(io.m_Inputs[2]->Map()) : nullptr,
                                                  static_cast<T*>(io.m_Outputs[0]->Map()));
        } catch (const std::out_of_range& e) {
            throw RuntimeException("NegativeLogLikelihoodLoss '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::NllLossParams m_P;
    const bool m_HasWeight;
    const std::string m_Layer;
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

kernels::NllLossParams NegativeLogLikelihoodLossRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<NegativeLogLikelihoodLossDescriptor>();
    kernels::NllLossParams p;
    p.reduction = static_cast<kernels::LossReduction>(d.m_Reduction);
    p.hasIgnoreIndex = d.m_IgnoreIndex.has_value();
    p.ignoreIndex = d.m_IgnoreIndex.value_or(0);
    p.target64 = info.m_InputTensorInfos[1].GetDataType() == DataType::Signed64;
    const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
    p.n = x[0];
    p.c = x[1];
    for (unsigned int i = 2; i < x.GetNumDimensions(); ++i) p.d *= x[i];
    return p;
}

IWorkloadPtr NegativeLogLikelihoodLossRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const bool hasWeight = info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0;
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<NegativeLogLikelihoodLossWorkload<double>>(NegativeLogLikelihoodLossRefParams(layer, info),
                                                                           hasWeight, layer.m_LayerName);
    }
    return std::make_unique<NegativeLogLikelihoodLossWorkload<float>>(NegativeLogLikelihoodLossRefParams(layer, info),
                                                                      hasWeight, layer.m_LayerName);
}

}  // namespace trellis::ref
