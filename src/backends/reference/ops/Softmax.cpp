// CpuRef Softmax / LogSoftmax along one axis, or (m_Coerce2d, opset < 13) over all dims from the
// axis to the end flattened together. Float32 and Float64 in their own type; Float16 and BFloat16
// widened exactly to double, Softmax with the ONNX reference's roundings to the type at each step
// (see ReferenceRounded), LogSoftmax rounded once. The kernel is the snippet kernels/Softmax.hpp.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Softmax.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace trellis::ref {

namespace {

class SoftmaxWorkload final : public IWorkload {
public:
    SoftmaxWorkload(kernels::SoftmaxParams p, DataType type) : m_P(p), m_Type(type) {}
    void Execute(const WorkloadIo& io) const override {
        if (m_Type == DataType::Float32) return kernels::Softmax(m_P, math::InputF32(io, 0), math::OutputF32(io, 0));
        if (m_Type == DataType::Float64) {
            return kernels::Softmax(m_P, static_cast<const double*>(io.m_Inputs[0]->Map()),
                                    static_cast<double*>(io.m_Outputs[0]->Map()));
        }
        const std::size_t n = m_P.outer * m_P.extent * m_P.inner;
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), n);
        std::vector<double> y(n);
        if (m_P.log) {
            kernels::Softmax(m_P, x.data(), y.data());
        } else {
            ReferenceRounded(x, y);
        }
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    // Softmax on a 16-bit type as the ONNX reference computes it on tensors of that type:
    // exp(x - max) with x - max and the exponential each rounded to the type, their sum (a
    // Float16 sum accumulates in float32, numpy's half reduction; a BFloat16 one in BFloat16)
    // rounded to the type, and each quotient rounded.
    void ReferenceRounded(const std::vector<double>& x, std::vector<double>& y) const {
        const DataType sumType = m_Type == DataType::Float16 ? DataType::Float32 : m_Type;
        for (std::size_t o = 0; o < m_P.outer; ++o) {
            for (std::size_t i = 0; i < m_P.inner; ++i) {
                const std::size_t base = o * m_P.extent * m_P.inner + i;
                double maxValue = -std::numeric_limits<double>::infinity();
                for (std::size_t e = 0; e < m_P.extent; ++e) maxValue = std::max(maxValue, x[base + e * m_P.inner]);
                double sum = 0.0;
                for (std::size_t e = 0; e < m_P.extent; ++e) {
                    const std::size_t at = base + e * m_P.inner;
                    y[at] = floatio::Round(m_Type, std::exp(floatio::Round(m_Type, x[at] - maxValue)));
                    sum = floatio::Round(sumType, sum + y[at]);
                }
                sum = floatio::Round(m_Type, sum);
                for (std::size_t e = 0; e < m_P.extent; ++e) {
                    const std::size_t at = base + e * m_P.inner;
                    y[at] = floatio::Round(m_Type, y[at] / sum);
                }
            }
        }
    }

    const kernels::SoftmaxParams m_P;
    const DataType m_Type;
};

}  // namespace

bool SoftmaxRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!math::RequireAllOfType("Softmax", info, floatio::IsFloatType(t) ? t : DataType::Float32,
                                "Float32, Float64, Float16, BFloat16", reason)) {
        return false;
    }
    const auto& d = layer.Get<SoftmaxDescriptor>();
    const unsigned int rank = info.m_InputTensorInfos[0].GetNumDimensions();
    if (d.m_Axis < 0 || static_cast<unsigned int>(d.m_Axis) >= rank) {
        return math::Refuse(reason, "Softmax: axis " + std::to_string(d.m_Axis) + " is not normalized to [0, " +
                                        std::to_string(rank) + ")");
    }
    return true;
}

kernels::SoftmaxParams SoftmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<SoftmaxDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = s.GetNumDimensions(), axis = static_cast<unsigned int>(d.m_Axis);
    const std::size_t outer = math::Volume(s, 0, axis);
    if (d.m_Coerce2d) return {outer, math::Volume(s, axis, rank), 1, d.m_Log};
    return {outer, s[axis], math::Volume(s, axis + 1, rank), d.m_Log};
}

IWorkloadPtr SoftmaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SoftmaxWorkload>(SoftmaxRefParams(layer, info), info.m_InputTensorInfos[0].GetDataType());
}

}  // namespace trellis::ref
