// CpuRef DepthToSpace and SpaceToDepth on NCHW: every data type (raw element copies).
// DepthToSpace, DCR: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j)*C' + c, h, w] (C' = C / b^2);
//               CRD: out[n, c, h*b + i, w*b + j] = in[n, c*b^2 + i*b + j, h, w].
// SpaceToDepth:      out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

class SpaceDepthWorkload final : public IWorkload {
public:
    SpaceDepthWorkload(bool toSpace, const SpaceDepthDescriptor& d, const TensorInfo& space)
        : m_ToSpace(toSpace), m_Crd(d.m_ColumnRowCrd), m_B(d.m_BlockSize), m_Elem(GetDataTypeSize(space.GetDataType())) {
        // Dims of the spatial (large) side: N, C, H, W.
        const TensorShape& s = space.GetShape();
        m_N = s[0];
        m_C = s[1];
        m_H = s[2];
        m_W = s[3];
    }
    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        const std::size_t b = m_B, hs = m_H / b, ws = m_W / b, cd = m_C * b * b;
        for (std::size_t n = 0; n < m_N; ++n) {
            for (std::size_t c = 0; c < m_C; ++c) {
                for (std::size_t h = 0; h < m_H; ++h) {
                    for (std::size_t w = 0; w < m_W; ++w) {
                        const std::size_t i = h % b, j = w % b;
                        const std::size_t dc = m_Crd ? c * b * b + i * b + j : (i * b + j) * m_C + c;
                        const std::size_t spaceOff = ((n * m_C + c) * m_H + h) * m_W + w;
                        const std::size_t depthOff = ((n * cd + dc) * hs + h / b) * ws + w / b;
                        if (m_ToSpace) std::memcpy(y + spaceOff * m_Elem, x + depthOff * m_Elem, m_Elem);
                        else std::memcpy(y + depthOff * m_Elem, x + spaceOff * m_Elem, m_Elem);
                    }
                }
            }
        }
    }
private:
    bool m_ToSpace, m_Crd;
    std::size_t m_B, m_Elem;
    std::size_t m_N = 0, m_C = 0, m_H = 0, m_W = 0;
};

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

IWorkloadPtr DepthToSpaceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SpaceDepthWorkload>(true, layer.Get<SpaceDepthDescriptor>(), info.m_OutputTensorInfos[0]);
}

bool SpaceToDepthRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return Support("SpaceToDepth", info, reason);
}

IWorkloadPtr SpaceToDepthRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SpaceDepthWorkload>(false, layer.Get<SpaceDepthDescriptor>(), info.m_InputTensorInfos[0]);
}

}  // namespace trellis::ref
