// CpuRef ReverseSequence: every data type (raw element copies). For batch entry b, time steps
// t < len[b] take step len[b] - 1 - t of the input; later steps are copied unchanged. A length
// outside [0, time dim] throws RuntimeException naming the layer before anything is written.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/IndexOps.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class ReverseSequenceWorkload final : public IWorkload {
public:
    ReverseSequenceWorkload(kernels::ReverseSequenceParams p, std::string layer) : m_P(p), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::ReverseSequence(m_P, io.m_Inputs[0]->Map(), static_cast<const int64_t*>(io.m_Inputs[1]->Map()),
                                     io.m_Outputs[0]->Map());
        } catch (const std::out_of_range& e) {
            throw RuntimeException("ReverseSequence '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::ReverseSequenceParams m_P;
    const std::string m_Layer;
};

}  // namespace

bool ReverseSequenceRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ReverseSequence", info, 2, 1, reason)) return false;
    if (!CheckType("ReverseSequence", "sequence_lens", info.m_InputTensorInfos[1], DataType::Signed64, reason)) {
        return false;
    }
    return CheckSameEncoding("ReverseSequence", "output", info.m_OutputTensorInfos[0], "input",
                             info.m_InputTensorInfos[0], reason);
}

kernels::ReverseSequenceParams ReverseSequenceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorInfo& x = info.m_InputTensorInfos[0];
    const auto& d = layer.Get<ReverseSequenceDescriptor>();
    const TensorShape& s = x.GetShape();
    kernels::ReverseSequenceParams p;
    p.elementSize = GetDataTypeSize(x.GetDataType());
    p.batch = s[static_cast<unsigned int>(d.m_BatchAxis)];
    p.time = s[static_cast<unsigned int>(d.m_TimeAxis)];
    for (unsigned int i = 2; i < s.GetNumDimensions(); ++i) p.inner *= s[i];
    // Element offset of (batch b, time t) is b * batchStride + t * timeStride.
    const std::size_t dim1 = s[1];
    p.batchStride = d.m_BatchAxis == 0 ? dim1 * p.inner : p.inner;
    p.timeStride = d.m_TimeAxis == 0 ? dim1 * p.inner : p.inner;
    return p;
}

IWorkloadPtr ReverseSequenceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ReverseSequenceWorkload>(ReverseSequenceRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
