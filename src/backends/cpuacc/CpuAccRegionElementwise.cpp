// CpuAcc: element-wise ops in a compiled region. Unary activations (a fused chain of oneDNN
// eltwise primitives, in place when nothing reads the input later), binary ops (oneDNN's binary
// primitive on the inputs' layouts, a per-channel operand in the same blocked layout), and the
// steps that run CpuAcc's own vectorized element-wise kernels over the OpenMP team: a lone Erf,
// and the swish run in place right after a convolution; Where with a constant condition (a masked
// fill).
#include "CpuAccRegionInternal.hpp"

#include <cmath>

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

void CompiledRegion::AddSwish(const std::string& name, int mem) {
    // In place over the whole buffer, channel padding of blocked layouts included (swish(0) = 0).
    AddKernelStep(name + " (swish)", mem, mem, m_Mems[static_cast<std::size_t>(mem)].m_Md.get_size() / sizeof(float),
                  &Swish);
}

void CompiledRegion::AddKernelStep(const std::string& name, int src, int dst, std::size_t count, ElementKernel kernel) {
    const KernelIsa isa = BestKernelIsa();
    Step step;
    step.m_Name = name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [count, isa, kernel](const std::vector<void*>& p) {
        const float* in = static_cast<const float*>(p[0]);
        float* out = static_cast<float*>(p[1]);
        // Blocks of 4096 floats (16 KiB) over the OpenMP team, each vectorized (CpuAccKernels.cpp).
        constexpr std::size_t kBlock = 4096;
        const long long blocks = static_cast<long long>((count + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static) if (blocks > 1)
        for (long long b = 0; b < blocks; ++b) {
            const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
            kernel(in + begin, out + begin, std::min(kBlock, count - begin), isa);
        }
    };
    m_Steps.push_back(std::move(step));
}

void CompiledRegion::CompileEltwise(int index, const Node& n) {
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    int srcMem = MemOf(x);
    // A blocked layout whose channels do not fill the last block has only oneDNN's reference
    // eltwise kernel: such an input is made plain first (the reorder is a jit kernel).
    for (const EltwiseOp& e : n.m_Eltwise) {
        dnnl::eltwise_forward::desc ed(dnnl::prop_kind::forward_inference, static_cast<dnnl::algorithm>(e.m_Algorithm),
                                       m_Mems[static_cast<std::size_t>(srcMem)].m_Md, e.m_Alpha, e.m_Beta);
        if (IsReferenceImplementation(dnnl::eltwise_forward::primitive_desc(ed, Attr(false), Engine()))) {
            srcMem = EnsurePlain(x);
            break;
        }
    }
    const memory::desc md = m_Mems[static_cast<std::size_t>(srcMem)].m_Md;
    // In place when nobody reads x afterwards.
    const int dstMem = CanOverwrite(x, index) ? srcMem : NewInternal(md);
    int from = srcMem;
    for (const EltwiseOp& e : n.m_Eltwise) {
        dnnl::eltwise_forward::desc ed(dnnl::prop_kind::forward_inference, static_cast<dnnl::algorithm>(e.m_Algorithm), md,
                                       e.m_Alpha, e.m_Beta);
        dnnl::eltwise_forward::primitive_desc pd(ed, Attr(false), Engine());
        AddPrimitive(n.m_Name, dnnl::eltwise_forward(pd), pd, {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, dstMem}});
        from = dstMem;
    }
    if (n.m_Eltwise.empty()) AddReorder(srcMem, dstMem, n.m_Name);
    Bind(out, dstMem);
}

void CompiledRegion::CompileErf(const Node& n) {
    // oneDNN has no erf eltwise; GELU's erf is fused away (CpuAccFusion.cpp), a lone Erf runs on
    // CpuAcc's own vectorized kernel.
    const int src = EnsurePlain(n.m_Inputs[0]);
    const int out = n.m_Outputs[0];
    const int dst = NewInternal(PlainMd(ValueDims(out)));
    AddKernelStep(n.m_Name, src, dst, m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info.GetNumElements(), &Erf);
    Bind(out, dst);
}

void CompiledRegion::CompileWhere(const Node& n) {
    // out = condition ? x : fill, the constant condition broadcast to the output once here (one
    // byte per element), so the step is a plain select loop the compiler vectorizes. Where the
    // condition is causal and the output feeds attention scores, the fusion took it into the
    // attention kernel instead; this is the stand-alone form.
    const Value& cond = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[0])];
    const Value& fillValue = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[2])];
    if (!cond.m_BooleanConstant || fillValue.m_SmallConstant.size() != 1) {
        throw LayerValidationException("CpuAcc: Where '" + n.m_Name +
                                       "' needs a constant Boolean condition and a constant scalar when the network is loaded");
    }
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    const Dims condDims = Prepend1s(DimsOf(cond.m_Info.GetShape()), outDims.size());
    const Dims condStrides = StridesOf(condDims);
    const std::size_t count = m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info.GetNumElements();
    auto keep = std::make_shared<std::vector<uint8_t>>(count);
    std::vector<memory::dim> index(outDims.size(), 0);
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t at = 0;
        for (std::size_t d = 0; d < outDims.size(); ++d) {
            if (condDims[d] != 1) at += static_cast<std::size_t>(index[d] * condStrides[d]);
        }
        (*keep)[i] = (*cond.m_BooleanConstant)[at];
        for (std::size_t d = outDims.size(); d-- > 0;) {
            if (++index[d] < outDims[d]) break;
            index[d] = 0;
        }
    }
    const int src = EnsurePlain(n.m_Inputs[1]);
    const int dst = NewInternal(PlainMd(outDims));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [keep, count, fill = fillValue.m_SmallConstant[0]](const std::vector<void*>& p) {
        const float* x = static_cast<const float*>(p[0]);
        float* y = static_cast<float*>(p[1]);
        const uint8_t* k = keep->data();
        for (std::size_t i = 0; i < count; ++i) y[i] = k[i] ? x[i] : fill;
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

void CompiledRegion::CompileBinary(int index, const Node& n) {
    const auto op = std::get<ElementwiseBinaryDescriptor>(n.m_Descriptor).m_Operation;
    dnnl::algorithm alg = dnnl::algorithm::binary_add;
    switch (op) {
        case BinaryOperation::Add: alg = dnnl::algorithm::binary_add; break;
        case BinaryOperation::Sub: alg = dnnl::algorithm::binary_sub; break;
        case BinaryOperation::Mul: alg = dnnl::algorithm::binary_mul; break;
        case BinaryOperation::Div: alg = dnnl::algorithm::binary_div; break;
        case BinaryOperation::Maximum: alg = dnnl::algorithm::binary_max; break;
        case BinaryOperation::Minimum: alg = dnnl::algorithm::binary_min; break;
        default: throw LayerValidationException("CpuAcc: '" + n.m_Name + "': unsupported binary operation");
    }
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    int a = n.m_Inputs[0], b = n.m_Inputs[1];
    if (ValueDims(a) != outDims) std::swap(a, b);  // commutative (checked by the layer support)
    const std::size_t rank = outDims.size();
    // The layouts as they are (a per-channel operand in a's blocked layout), or plain when oneDNN
    // has no kernel, or only its reference one, for those. The descriptors are settled before any
    // reorder is added.
    auto descsFor = [&](bool plain) {
        const memory::desc src0 = plain ? PlainMd(outDims) : m_Mems[static_cast<std::size_t>(MemOf(a))].m_Md;
        const Dims bDims = Prepend1s(ValueDims(b), rank);
        const std::optional<memory::format_tag> tag = plain ? std::nullopt : BlockedTagOf(src0);
        bool perChannel = tag.has_value();
        for (std::size_t i = 0; i < rank && perChannel; ++i) perChannel = i == 1 || bDims[i] == 1;
        // A per-channel operand (SE gates, biases) in the same blocked layout: oneDNN's jit binary
        // kernel broadcasts it; a plain one would send it to the reference kernel.
        const memory::desc src1 = ValueDims(b) == outDims ? src0
                                  : perChannel            ? memory::desc(bDims, src0.data_type(), *tag)
                                                          : PlainMd(bDims);
        return std::make_pair(src0, src1);
    };
    bool plain = false;
    std::pair<memory::desc, memory::desc> descs = descsFor(false);
    dnnl::binary::primitive_desc pd;
    try {
        pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, descs.first, descs.second, descs.first), Attr(false), Engine());
        plain = IsReferenceImplementation(pd);
    } catch (const dnnl::error&) {
        plain = true;
    }
    if (plain) {
        descs = descsFor(true);
        pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, descs.first, descs.second, descs.first), Attr(false), Engine());
        if (IsReferenceImplementation(pd)) {
            CompileBroadcastBinary(index, n, a, b);
            return;
        }
    }
    const int am = plain ? EnsurePlain(a) : MemOf(a);
    const int bm = ValueDims(b) == outDims || descs.second != PlainMd(Prepend1s(ValueDims(b), rank))
                       ? Ensure(b, descs.second)
                       : Alias(EnsurePlain(b), descs.second);
    const bool inPlace = CanOverwrite(a, index) && m_ValueMem[static_cast<std::size_t>(a)] == am &&
                         m_Mems[static_cast<std::size_t>(bm)].m_Storage != m_Mems[static_cast<std::size_t>(am)].m_Storage;
    const int dst = inPlace ? am : NewInternal(descs.first);
    AddPrimitive(n.m_Name, dnnl::binary(pd), pd, {{DNNL_ARG_SRC_0, am}, {DNNL_ARG_SRC_1, bm}, {DNNL_ARG_DST, dst}});
    Bind(out, dst);
}

namespace {

template <typename Op>
void BroadcastRows(const float* a, const float* b, float* dst, const std::vector<std::size_t>& bOffsets, std::size_t inner,
                   bool bScalar, Op op) {
    const long long rows = static_cast<long long>(bOffsets.size());
#pragma omp parallel for schedule(static) if (rows * static_cast<long long>(inner) > 32768)
    for (long long r = 0; r < rows; ++r) {
        const float* x = a + static_cast<std::size_t>(r) * inner;
        float* y = dst + static_cast<std::size_t>(r) * inner;
        const float* z = b + bOffsets[static_cast<std::size_t>(r)];
        if (bScalar) {
            const float s = *z;
            for (std::size_t j = 0; j < inner; ++j) y[j] = op(x[j], s);
        } else {
            for (std::size_t j = 0; j < inner; ++j) y[j] = op(x[j], z[j]);
        }
    }
}

}  // namespace

void CompiledRegion::CompileBroadcastBinary(int index, const Node& n, int a, int b) {
    // oneDNN 2.6's jit binary kernels broadcast scalars, per-channel and whole-tensor operands;
    // any other broadcast (Swin's shifted-window mask, 1x64x3x49x49 + 1x64x1x49x49) is its
    // reference loop, 50 ms on that shape. CpuAcc's own loop instead, on plain layouts: the
    // trailing dims where b varies as the output does (or where b is constant) are one contiguous
    // row the compiler vectorizes; each row's start in b comes from b's strides (0 where b
    // broadcasts), computed here once.
    const auto op = std::get<ElementwiseBinaryDescriptor>(n.m_Descriptor).m_Operation;
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    const std::size_t rank = outDims.size();
    const Dims bDims = Prepend1s(ValueDims(b), rank);
    std::size_t split = rank;
    while (split > 0 && bDims[split - 1] == outDims[split - 1]) --split;
    bool bScalar = false;
    if (split == rank) {  // the last dim broadcasts: rows over which b is one value
        bScalar = true;
        while (split > 0 && bDims[split - 1] == 1) --split;
    }
    const std::size_t inner = static_cast<std::size_t>(Product(outDims, split, rank));
    const std::size_t rows = static_cast<std::size_t>(Product(outDims, 0, split));
    std::vector<std::size_t> bStride(rank, 0);
    std::size_t stride = 1;
    for (std::size_t i = rank; i-- > 0;) {
        bStride[i] = bDims[i] == 1 ? 0 : stride;
        stride *= static_cast<std::size_t>(bDims[i]);
    }
    std::vector<std::size_t> bOffsets(rows);
    for (std::size_t r = 0; r < rows; ++r) bOffsets[r] = StridedOffset(r, outDims, bStride, split);
    const int am = EnsurePlain(a);
    const int bm = EnsurePlain(b);
    const bool inPlace = CanOverwrite(a, index) && m_ValueMem[static_cast<std::size_t>(a)] == am &&
                         m_Mems[static_cast<std::size_t>(bm)].m_Storage != m_Mems[static_cast<std::size_t>(am)].m_Storage;
    const int dst = inPlace ? am : NewInternal(PlainMd(outDims));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {am, bm, dst};
    step.m_Kernel = [op, bOffsets = std::move(bOffsets), inner, bScalar](const std::vector<void*>& ptr) {
        const auto* x = static_cast<const float*>(ptr[0]);
        const auto* z = static_cast<const float*>(ptr[1]);
        auto* y = static_cast<float*>(ptr[2]);
        switch (op) {
            case BinaryOperation::Add: BroadcastRows(x, z, y, bOffsets, inner, bScalar, [](float u, float v) { return u + v; }); break;
            case BinaryOperation::Sub: BroadcastRows(x, z, y, bOffsets, inner, bScalar, [](float u, float v) { return u - v; }); break;
            case BinaryOperation::Mul: BroadcastRows(x, z, y, bOffsets, inner, bScalar, [](float u, float v) { return u * v; }); break;
            case BinaryOperation::Div: BroadcastRows(x, z, y, bOffsets, inner, bScalar, [](float u, float v) { return u / v; }); break;
            case BinaryOperation::Maximum:
                BroadcastRows(x, z, y, bOffsets, inner, bScalar, [](float u, float v) { return std::isnan(u) || u > v ? u : v; });
                break;
            default:  // Minimum (CompileBinary admits no other operation)
                BroadcastRows(x, z, y, bOffsets, inner, bScalar, [](float u, float v) { return std::isnan(u) || u < v ? u : v; });
                break;
        }
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

}  // namespace trellis::cpuacc
