// CpuAcc: ONNX Attention (opset 23) in a compiled region, as one step of CpuAcc's own fused kernel
// (CpuAccKernels.hpp: scores, mask, softmax and the weighted sum per batch and head) on plain Q, K
// and V, with an optional Boolean or additive Float32 mask broadcast to (batch, heads, queries,
// keys).
#include "CpuAccRegionInternal.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

void CompiledRegion::CompileAttention(const Node& n) {
    // CpuAcc's fused kernel (CpuAccKernels.hpp) on plain Q, K, V; the layer support admitted Y
    // only, no past, softcap or window, and a Boolean or Float32 mask.
    const auto& d = std::get<AttentionDescriptor>(n.m_Descriptor);
    const auto info = [&](int value) -> const TensorInfo& { return m_Graph->m_Values[static_cast<std::size_t>(value)].m_Info; };
    const TensorShape& q = info(n.m_Inputs[0]).GetShape();
    const TensorShape& k = info(n.m_Inputs[1]).GetShape();
    const TensorShape& v = info(n.m_Inputs[2]).GetShape();
    AttentionShape s;
    s.m_Rank3 = q.GetNumDimensions() == 3;
    s.m_Batch = q[0];
    s.m_QHeads = d.m_QNumHeads;
    s.m_KvHeads = d.m_KvNumHeads;
    s.m_QLen = s.m_Rank3 ? q[1] : q[2];
    s.m_KvLen = s.m_Rank3 ? k[1] : k[2];
    s.m_HeadSize = s.m_Rank3 ? q[2] / s.m_QHeads : q[3];
    s.m_VHeadSize = s.m_Rank3 ? v[2] / s.m_KvHeads : v[3];
    s.m_Scale = d.m_Scale ? *d.m_Scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.m_HeadSize)));
    s.m_Causal = d.m_IsCausal;
    s.m_Isa = BestKernelIsa();
    std::vector<int> mems = {EnsurePlain(n.m_Inputs[0]), EnsurePlain(n.m_Inputs[1]), EnsurePlain(n.m_Inputs[2])};
    if (d.m_HasMask) {
        const int mask = n.m_Inputs[3];
        const TensorShape& ms = info(mask).GetShape();
        const bool boolean = info(mask).GetDataType() == DataType::Boolean;
        s.m_Mask = boolean ? AttentionShape::Mask::Boolean : AttentionShape::Mask::Additive;
        // Right-aligned to (batch, q heads, queries, keys); a dim of 1 broadcasts (not the last:
        // a mask shorter than the keys masks the rest).
        const unsigned int mr = ms.GetNumDimensions();
        std::size_t stride = 1;
        for (unsigned int i = mr; i-- > 0;) {
            s.m_MaskStride[4 - mr + i] = ms[i] == 1 && i + 1 < mr ? 0 : stride;
            stride *= ms[i];
        }
        s.m_MaskLen = ms[mr - 1];
        // A Boolean mask is always a region input (CpuAcc computes no Booleans): its bytes as they are.
        mems.push_back(boolean ? MemOf(mask) : EnsurePlain(mask));
    }
    const int out = n.m_Outputs[0];
    const int dst = NewInternal(PlainMd(ValueDims(out)));
    mems.push_back(dst);
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = mems;
    step.m_Kernel = [s](const std::vector<void*>& p) {
        Attention(s, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]), static_cast<const float*>(p[2]),
                  s.m_Mask == AttentionShape::Mask::None ? nullptr : p[3], static_cast<float*>(p.back()));
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

}  // namespace trellis::cpuacc
