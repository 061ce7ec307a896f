// CpuRef Trilu: every data type (elements are copied or zeroed as raw bytes; all-zero bytes are
// zero in every type Trellis has). Upper keeps (i, j) with j - i >= k, lower with j - i <= k, over
// the last two dims; every other element becomes zero. k is m_K, or read from input 1 (one
// Signed32/Signed64 value) when the core left that input in place.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Trilu.hpp"

#include <cstring>
#include <optional>

namespace trellis::ref {

namespace {

class TriluWorkload final : public IWorkload {
public:
    explicit TriluWorkload(kernels::TriluParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::Trilu(m_P, io.m_Inputs[0]->Map(), m_P.kInputBits != 0 ? io.m_Inputs[1]->Map() : nullptr, io.m_Outputs[0]->Map());
    }
private:
    const kernels::TriluParams m_P;
};

}  // namespace

bool TriluRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() == 2) {
        const TensorInfo& k = info.m_InputTensorInfos[1];
        if ((k.GetDataType() != DataType::Signed32 && k.GetDataType() != DataType::Signed64) || k.GetNumElements() != 1) {
            return Refuse(reason, "Trilu: input 1 (k) must be one Signed32/Signed64 value, is " + k.ToString());
        }
    } else if (!CheckArity("Trilu", info, 1, 1, reason)) {
        return false;
    }
    if (info.m_InputTensorInfos[0].GetNumDimensions() < 2) {
        return Refuse(reason, "Trilu: input " + info.m_InputTensorInfos[0].GetShape().ToString() + " has rank below 2");
    }
    return CheckSameEncoding("Trilu", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

kernels::TriluParams TriluRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<TriluDescriptor>();
    const TensorInfo& x = info.m_InputTensorInfos[0];
    kernels::TriluParams p;
    p.upper = d.m_Upper;
    p.k = d.m_K;
    if (info.m_InputTensorInfos.size() > 1) {
        p.kInputBits = info.m_InputTensorInfos[1].GetDataType() == DataType::Signed64 ? 64 : 32;
    }
    const TensorShape& s = x.GetShape();
    const unsigned int r = s.GetNumDimensions();
    p.rows = s[r - 2];
    p.cols = s[r - 1];
    p.batch = p.rows * p.cols == 0 ? 0 : x.GetNumElements() / static_cast<std::size_t>(p.rows * p.cols);
    p.elementSize = GetDataTypeSize(x.GetDataType());
    return p;
}

IWorkloadPtr TriluRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<TriluWorkload>(TriluRefParams(layer, info));
}

}  // namespace trellis::ref
