// CpuAcc: scaled dot-product attention in a compiled region, as one step of CpuAcc's own fused
// kernel (CpuAccKernels.hpp: scores, mask, softmax and the weighted sum per batch and head). Two
// entries run it: the ONNX Attention layer (opset 23; with a KV cache, past_key/past_value in and
// present_key/present_value out), and MatMul -> [scale] -> [mask Add] ->
// Softmax -> MatMul of older exports, fused by CpuAccFusion.cpp (K then arrives as K^T). Q, K and
// V are read where they are - strided views (a head split's transpose, K^T) included - and Y is
// written in the layout its consumer wants when that is the heads-back-together transpose.
#include "CpuAccRegionInternal.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

int CompiledRegion::AttentionOperand(int value, Dims& strides, std::size_t& offset) {
    const int mem = MemOf(value);
    const memory::desc& md = m_Mems[static_cast<std::size_t>(mem)].m_Md;
    if (std::optional<Dims> s = ViewStrides(md)) {
        strides = *s;
        offset = static_cast<std::size_t>(md.data.offset0);
        return mem;
    }
    const int plain = EnsurePlain(value);
    strides = StridesOf(ValueDims(value));
    offset = 0;
    return plain;
}

void CompiledRegion::CompileAttention(const Node& n) {
    // Entry 1, ONNX Attention: the layer support admitted Y and the present outputs (no qk
    // output), past_key/past_value, no softcap or window, and a Boolean or Float32 mask; Q, K, V
    // are (batch, heads, sequence, size) or (batch, sequence, heads * size), the past and present
    // (batch, kv heads, sequence, size). Entry 2, the fused pattern (n.m_KeyTransposed): Q (.., queries, size), K^T
    // (.., size, keys), V (.., keys, v size) with the same leading dims - (batch, heads) or one
    // batch dim - and an additive mask broadcast to the scores.
    const auto& d = std::get<AttentionDescriptor>(n.m_Descriptor);
    const auto info = [&](int value) -> const TensorInfo& { return m_Graph->m_Values[static_cast<std::size_t>(value)].m_Info; };
    const TensorShape& q = info(n.m_Inputs[0]).GetShape();
    const TensorShape& k = info(n.m_Inputs[1]).GetShape();
    const TensorShape& v = info(n.m_Inputs[2]).GetShape();
    const int out = n.m_Outputs[0];
    const unsigned int rank = q.GetNumDimensions();
    const bool pattern = n.m_KeyTransposed;
    // (batch, heads, sequence, size) strides from a tensor's own: rank 4 as they are; rank 3 of
    // ONNX Attention splits the last dim into heads of `size`; rank 3 of the pattern has one head.
    const auto split = [&](const Dims& st, std::size_t size, std::size_t out4[4]) {
        if (rank == 4) {
            for (int i = 0; i < 4; ++i) out4[i] = static_cast<std::size_t>(st[static_cast<std::size_t>(i)]);
        } else if (pattern) {
            out4[0] = static_cast<std::size_t>(st[0]);
            out4[1] = 0;
            out4[2] = static_cast<std::size_t>(st[1]);
            out4[3] = static_cast<std::size_t>(st[2]);
        } else {
            out4[0] = static_cast<std::size_t>(st[0]);
            out4[1] = size * static_cast<std::size_t>(st[2]);
            out4[2] = static_cast<std::size_t>(st[1]);
            out4[3] = static_cast<std::size_t>(st[2]);
        }
    };
    AttentionShape s;
    s.m_Batch = q[0];
    s.m_QHeads = rank == 4 ? q[1] : (pattern ? 1 : d.m_QNumHeads);
    s.m_KvHeads = rank == 4 ? k[1] : (pattern ? 1 : d.m_KvNumHeads);
    s.m_QLen = q[rank - 2];
    s.m_KvLen = pattern ? k[rank - 1] : k[rank - 2];
    s.m_HeadSize = rank == 4 || pattern ? q[rank - 1] : q[2] / s.m_QHeads;
    s.m_VHeadSize = rank == 4 || pattern ? v[rank - 1] : v[2] / s.m_KvHeads;
    s.m_Scale = d.m_Scale ? *d.m_Scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.m_HeadSize)));
    s.m_Causal = d.m_IsCausal;
    s.m_CausalOffset = n.m_CausalOffset;
    s.m_CausalFill = n.m_CausalFill;
    s.m_AllMaskedIsNan = pattern;
    s.m_Isa = BestKernelIsa();
    Dims qSt, kSt, vSt;
    std::size_t offsets[3] = {0, 0, 0};
    std::vector<int> mems = {AttentionOperand(n.m_Inputs[0], qSt, offsets[0]), AttentionOperand(n.m_Inputs[1], kSt, offsets[1]),
                             AttentionOperand(n.m_Inputs[2], vSt, offsets[2])};
    if (pattern) std::swap(kSt[rank - 1], kSt[rank - 2]);  // K^T (.., size, keys) read as K (.., keys, size)
    split(qSt, s.m_HeadSize, s.m_QStrides);
    split(kSt, s.m_HeadSize, s.m_KStrides);
    split(vSt, s.m_VHeadSize, s.m_VStrides);
    // A KV cache (ONNX Attention's past_key/past_value inputs, present_key/present_value outputs):
    // present = past ++ new keys along the sequence, (batch, kv heads, total, size), written once
    // - the past and the new K (V) each reordered by oneDNN into its part of the present buffer,
    // the new one from whatever view it is (3-D inputs split into heads) - and the kernel then
    // reads K and V from the present buffers, which become the present outputs without a copy
    // (CompileOutputs retargets a plain internal buffer to the output). Causal masking with a past
    // is bottom-right aligned: query i sees keys up to past length + i.
    const bool hasPresent = !pattern && n.m_Outputs.size() > 1;
    if (!pattern && (d.m_HasPast || hasPresent)) {
        const std::size_t pastLen = d.m_HasPast ? static_cast<std::size_t>(info(n.m_Inputs[4]).GetShape()[2]) : 0;
        const std::size_t total = pastLen + s.m_KvLen;
        const auto cache = [&](int pastInput, int presentOutput, std::size_t size, std::size_t newStrides[4],
                               std::size_t newOffset, int newMem) {
            const Dims presentDims = {static_cast<memory::dim>(s.m_Batch), static_cast<memory::dim>(s.m_KvHeads),
                                      static_cast<memory::dim>(total), static_cast<memory::dim>(size)};
            const memory::desc plain = PlainMd(presentDims);
            const int present = NewInternal(plain);
            if (pastLen > 0) {
                Dims pastDims = presentDims;
                pastDims[2] = static_cast<memory::dim>(pastLen);
                AddReorder(EnsurePlain(n.m_Inputs[static_cast<std::size_t>(pastInput)]),
                           Alias(present, plain.submemory_desc(pastDims, {0, 0, 0, 0})), n.m_Name + " (past)");
            }
            Dims newDims = presentDims, viewStrides(4);
            newDims[2] = static_cast<memory::dim>(s.m_KvLen);
            for (std::size_t i = 0; i < 4; ++i) viewStrides[i] = static_cast<memory::dim>(newStrides[i]);
            memory::desc view(newDims, memory::data_type::f32, viewStrides);
            view.data.offset0 = static_cast<memory::dim>(newOffset);
            AddReorder(Alias(newMem, view),
                       Alias(present, plain.submemory_desc(newDims, {0, 0, static_cast<memory::dim>(pastLen), 0})),
                       n.m_Name + " (present)");
            const int out = n.m_Outputs.size() > static_cast<std::size_t>(presentOutput)
                                ? n.m_Outputs[static_cast<std::size_t>(presentOutput)]
                                : -1;
            if (out >= 0) Bind(out, present);
            DenseAttentionStrides(s.m_KvHeads, total, size, newStrides);
            return present;
        };
        mems[1] = cache(4, 1, s.m_HeadSize, s.m_KStrides, offsets[1], mems[1]);
        mems[2] = cache(5, 2, s.m_VHeadSize, s.m_VStrides, offsets[2], mems[2]);
        offsets[1] = offsets[2] = 0;
        s.m_KvLen = total;
        s.m_CausalOffset = pastLen;
    }
    if (d.m_HasMask) {
        const int mask = n.m_Inputs[3];
        const TensorShape& ms = info(mask).GetShape();
        const bool boolean = info(mask).GetDataType() == DataType::Boolean;
        s.m_Mask = boolean ? AttentionShape::Mask::Boolean : AttentionShape::Mask::Additive;
        // Right-aligned to (batch, q heads, queries, keys), or to the pattern's (batch, queries,
        // keys) scores of rank 3; a dim of 1 broadcasts. The last dim: ONNX Attention's mask may
        // be shorter than the keys (the rest are masked); the pattern's Add broadcasts a 1 there.
        const unsigned int mr = ms.GetNumDimensions();
        const unsigned int scoreRank = pattern ? rank : 4;
        std::size_t scoreStride[4] = {0, 0, 0, 0};
        std::size_t stride = 1;
        for (unsigned int i = mr; i-- > 0;) {
            scoreStride[scoreRank - mr + i] = ms[i] == 1 && (i + 1 < mr || pattern) ? 0 : stride;
            stride *= ms[i];
        }
        if (scoreRank == 3) {
            s.m_MaskStride[0] = scoreStride[0];
            s.m_MaskStride[1] = 0;
            s.m_MaskStride[2] = scoreStride[1];
            s.m_MaskStride[3] = scoreStride[2];
        } else {
            for (int i = 0; i < 4; ++i) s.m_MaskStride[i] = scoreStride[i];
        }
        s.m_MaskLen = pattern ? s.m_KvLen : ms[mr - 1];
        // A Boolean mask is always a region input (CpuAcc computes no Booleans): its bytes as they are.
        mems.push_back(boolean ? MemOf(mask) : EnsurePlain(mask));
    }
    // Y plain, or - when its only reader is a transpose that keeps the last dim last (the heads put
    // back together: (batch, heads, sequence, size) -> (batch, sequence, heads, size), or the
    // sequence-first (batch * heads, sequence, size) -> (sequence, batch * heads, size)) - in the
    // transposed order already, so the transpose is a plain view and no copy is made.
    const Dims outDims = ValueDims(out);
    Dims outStrides = StridesOf(outDims);
    const std::vector<int> readers = m_Graph->Consumers(out);
    if (!m_Graph->IsRegionOutput(out) && readers.size() == 1) {
        const Node& t = m_Graph->m_Nodes[static_cast<std::size_t>(readers[0])];
        if (t.m_Kind == NodeKind::Transpose) {
            const std::vector<unsigned int>& perm = std::get<TransposeDescriptor>(t.m_Descriptor).m_Perm;
            if (perm.size() == rank && perm.back() == rank - 1) {
                const Dims transposed = ValueDims(t.m_Outputs[0]);
                const Dims dense = StridesOf(transposed);
                for (std::size_t i = 0; i < rank; ++i) outStrides[perm[i]] = dense[i];
            }
        }
    }
    const int dst = NewInternal(memory::desc(outDims, memory::data_type::f32, outStrides));
    split(outStrides, s.m_VHeadSize, s.m_YStrides);
    mems.push_back(dst);
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = mems;
    step.m_Kernel = [s, qOff = offsets[0], kOff = offsets[1], vOff = offsets[2]](const std::vector<void*>& p) {
        Attention(s, static_cast<const float*>(p[0]) + qOff, static_cast<const float*>(p[1]) + kOff,
                  static_cast<const float*>(p[2]) + vOff, s.m_Mask == AttentionShape::Mask::None ? nullptr : p[3],
                  static_cast<float*>(p.back()));
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

}  // namespace trellis::cpuacc
