// CpuRef DepthToSpace and SpaceToDepth on NCHW: every data type (raw element copies).
// DepthToSpace, DCR: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j)*C' + c, h, w] (C' = C / b^2);
//               CRD: out[n, c, h*b + i, w*b + j] = in[n, c*b^2 + i*b + j, h, w].
// SpaceToDepth:      out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/SpaceDepth.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

class SpaceDepthWorkload final : public IWorkload {
public:
    explicit SpaceDepthWorkload(kernels::SpaceDepthParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override { kernels::SpaceDepth(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    const kernels::SpaceDepthParams m_P;
};

// The dims of the spatial (large) side: N, C, H, W.
kernels::SpaceDepthParams MakeParams(bool toSpace, const SpaceDepthDescriptor& d, const TensorInfo& space) {
    const TensorShape& s = space.GetShape();
    return {toSpace, d.m_ColumnRowCrd, d.m_BlockSize, GetDataTypeSize(space.GetDataType()), s[0], s[1], s[2], s[3]};
}

bool Support(const char* op, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity(op, info, 1, 1, reason)) return false;
    if (info.m_InputTensorInfos[0].GetNumDimensions() != 4 || info.m_OutputTensorInfos[0].GetNumDimensions() != 4) {
        return Refuse(reason, std::string(op) + ": input and output must be NCHW (rank 4)");
    }
    return CheckSameEncoding(op, "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

}  // namespace

bool DepthToSpaceRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return Support("DepthToSpace", info, reason);
}

kernels::SpaceDepthParams DepthToSpaceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return MakeParams(true, layer.Get<SpaceDepthDescriptor>(), info.m_OutputTensorInfos[0]);
}

IWorkloadPtr DepthToSpaceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SpaceDepthWorkload>(DepthToSpaceRefParams(layer, info));
}

bool SpaceToDepthRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return Support("SpaceToDepth", info, reason);
}

kernels::SpaceDepthParams SpaceToDepthRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return MakeParams(false, layer.Get<SpaceDepthDescriptor>(), info.m_InputTensorInfos[0]);
}

IWorkloadPtr SpaceToDepthRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SpaceDepthWorkload>(SpaceToDepthRefParams(layer, info));
}

}  // namespace trellis::ref
