// CpuAcc: convolutions and pooling in a compiled region. Convolutions pick their layouts
// (channel-blocked where oneDNN has a jit kernel for them, else oneDNN's choice), take oneDNN's
// Winograd kernel for the 3x3 stride-1 shapes measured faster with it, pack their weights once,
// fuse post-ops (an in-place residual sum; a trailing swish as CpuAcc's own kernel), and write
// straight into their part of a channel Concat where they can (PlanInPlaceConcats). Also the
// probes CpuAccSupport asks before admitting a convolution (ConvolutionRunsFast, Winograd).
#include "CpuAccRegionInternal.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

void CompiledRegion::PlanConcatFamilies() {
    const RegionGraph& g = *m_Graph;
    // Channel Concats of batch-1, 4-D values with a blocked layout, longest input list first.
    std::vector<int> concats;
    for (int c = 0; c < static_cast<int>(g.m_Nodes.size()); ++c) {
        const Node& n = g.m_Nodes[static_cast<std::size_t>(c)];
        if (n.m_Dead || n.m_Kind != NodeKind::Concat || n.m_Inputs.empty()) continue;
        const Dims outDims = ValueDims(n.m_Outputs[0]);
        const int rank = static_cast<int>(outDims.size());
        const int axis = std::get<ConcatDescriptor>(n.m_Descriptor).m_Axis;
        if (rank != 4 || (axis < 0 ? axis + rank : axis) != 1 || outDims[0] != 1 || !BlockedTag(outDims.size()) ||
            g.IsRegionOutput(n.m_Outputs[0])) {
            continue;
        }
        concats.push_back(c);
    }
    std::stable_sort(concats.begin(), concats.end(), [&](int x, int y) {
        return g.m_Nodes[static_cast<std::size_t>(x)].m_Inputs.size() > g.m_Nodes[static_cast<std::size_t>(y)].m_Inputs.size();
    });
    std::unordered_map<int, std::vector<int>> members;  // longest -> the concats that are prefixes of it
    for (int c : concats) {
        const std::vector<int>& in = g.m_Nodes[static_cast<std::size_t>(c)].m_Inputs;
        int top = c;
        for (const auto& [t, list] : members) {
            const std::vector<int>& longest = g.m_Nodes[static_cast<std::size_t>(t)].m_Inputs;
            if (in.size() <= longest.size() && std::equal(in.begin(), in.end(), longest.begin())) {
                top = t;
                break;
            }
        }
        members[top].push_back(c);
    }
    for (const auto& [top, list] : members) {
        if (list.size() < 2) continue;
        const std::vector<int>& longest = g.m_Nodes[static_cast<std::size_t>(top)].m_Inputs;
        const Dims topDims = ValueDims(g.m_Nodes[static_cast<std::size_t>(top)].m_Outputs[0]);
        // Every input: whole channel blocks, once in the list, read by the family's Concats alone
        // (nothing else may see the shared buffer change), not a region output.
        bool ok = true;
        for (int v : longest) {
            const Dims vd = ValueDims(v);
            ok = ok && vd.size() == 4 && vd[0] == 1 && vd[2] == topDims[2] && vd[3] == topDims[3] && vd[1] % BlockSize() == 0 &&
                 std::count(longest.begin(), longest.end(), v) == 1 && !g.IsRegionOutput(v);
            for (int consumer : g.Consumers(v)) ok = ok && std::find(list.begin(), list.end(), consumer) != list.end();
        }
        if (!ok) continue;
        for (int c : list) m_ConcatFamily[c] = top;
        m_ConcatTargets[top].m_Md = memory::desc(topDims, memory::data_type::f32, *BlockedTag(topDims.size()));
        for (int v : longest) {
            const int p = g.m_Values[static_cast<std::size_t>(v)].m_Producer;
            const bool convWithoutSum =
                p >= 0 && g.m_Nodes[static_cast<std::size_t>(p)].m_Kind == NodeKind::Conv &&
                std::none_of(g.m_Nodes[static_cast<std::size_t>(p)].m_PostOps.begin(),
                             g.m_Nodes[static_cast<std::size_t>(p)].m_PostOps.end(),
                             [](const PostOp& po) { return po.m_Kind == PostOp::Kind::Add; });
            if (convWithoutSum) m_ConcatOf[v] = top;  // written in place; anything else is copied in once
        }
    }
}

void CompiledRegion::CompileFamilyConcat(int index, const Node& n) {
    const int top = m_ConcatFamily.at(index);
    ConcatTarget& target = m_ConcatTargets[top];
    if (target.m_Storage < 0) target.m_Storage = AddStorage(Storage::Kind::Internal, -1, target.m_Md.get_size());
    const std::vector<int>& longest = m_Graph->m_Nodes[static_cast<std::size_t>(top)].m_Inputs;
    memory::dim offset = 0;
    for (int v : longest) {
        const Dims vd = ValueDims(v);
        if (std::find(n.m_Inputs.begin(), n.m_Inputs.end(), v) == n.m_Inputs.end()) break;  // past this prefix
        if (!m_InFamilyBuffer.count(v)) {
            const int view = AddMem(target.m_Storage, memory::desc(vd, memory::data_type::f32, *BlockedTag(vd.size())));
            m_Mems[static_cast<std::size_t>(view)].m_ByteOffset = static_cast<std::size_t>(offset * vd[2] * vd[3]) * sizeof(float);
            AddReorder(MemOf(v), view, n.m_Name + " (copied into the dense block's buffer)");
            m_InFamilyBuffer.insert(v);
        }
        offset += vd[1];
    }
    const Dims outDims = ValueDims(n.m_Outputs[0]);
    Bind(n.m_Outputs[0], AddMem(target.m_Storage, memory::desc(outDims, memory::data_type::f32, *BlockedTag(outDims.size()))));
}

void CompiledRegion::PlanInPlaceConcats() {
    PlanConcatFamilies();
    const RegionGraph& g = *m_Graph;
    for (int c = 0; c < static_cast<int>(g.m_Nodes.size()); ++c) {
        const Node& n = g.m_Nodes[static_cast<std::size_t>(c)];
        if (n.m_Dead || n.m_Kind != NodeKind::Concat || m_ConcatFamily.count(c)) continue;
        const Dims outDims = ValueDims(n.m_Outputs[0]);
        const int rank = static_cast<int>(outDims.size());
        const int axis = std::get<ConcatDescriptor>(n.m_Descriptor).m_Axis;
        if ((axis < 0 ? axis + rank : axis) != 1 || !BlockedTag(outDims.size())) continue;
        bool ok = true;
        for (std::size_t i = 0; i < n.m_Inputs.size() && ok; ++i) {
            const int v = n.m_Inputs[i];
            const int p = g.m_Values[static_cast<std::size_t>(v)].m_Producer;
            ok = p >= 0 && g.m_Nodes[static_cast<std::size_t>(p)].m_Kind == NodeKind::Conv &&
                 g.m_Nodes[static_cast<std::size_t>(p)].m_PostOps.end() ==
                     std::find_if(g.m_Nodes[static_cast<std::size_t>(p)].m_PostOps.begin(),
                                  g.m_Nodes[static_cast<std::size_t>(p)].m_PostOps.end(),
                                  [](const PostOp& po) { return po.m_Kind == PostOp::Kind::Add; }) &&
                 g.Consumers(v) == std::vector<int>{c} && !g.IsRegionOutput(v) &&
                 ValueDims(v)[1] % BlockSize() == 0 &&
                 std::count(n.m_Inputs.begin(), n.m_Inputs.end(), v) == 1;
        }
        if (!ok) continue;
        for (int v : n.m_Inputs) m_ConcatOf[v] = c;
        m_ConcatTargets[c].m_Md = memory::desc(outDims, memory::data_type::f32, *BlockedTag(outDims.size()));
    }
}

namespace {

/// oneDNN post-ops for the first `count` of `ops`: eltwise ones as they are, a residual add as an
/// in-place sum (`sumValue`, when given, gets the value it adds).
dnnl::post_ops OneDnnPostOps(const std::vector<PostOp>& ops, std::size_t count, int* sumValue) {
    dnnl::post_ops po;
    for (std::size_t i = 0; i < count; ++i) {
        const PostOp& p = ops[i];
        if (p.m_Kind == PostOp::Kind::Eltwise) {
            po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha,
                              p.m_Eltwise.m_Beta);
        } else {
            po.append_sum(1.0f);
            if (sumValue) *sumValue = p.m_Value;
        }
    }
    return po;
}

}  // namespace

bool ConvolutionRunsFast(const ConvolutionDescriptor& d, const TensorShape& input, const TensorShape& weights,
                         const TensorShape& output, bool bias, std::string* implementation,
                         const std::vector<PostOp>& postOps) {
    const Dims src = DimsOf(input), ws = DimsOf(weights), dst = DimsOf(output);
    const std::size_t spatial = ws.size() - 2;
    const memory::dim groups = d.m_Groups;
    Dims wdims = groups > 1 ? Dims{groups, ws[0] / groups, ws[1]} : Dims{ws[0], ws[1]};
    wdims.insert(wdims.end(), ws.begin() + 2, ws.end());
    Dims strides, dil, padL, padR;
    for (std::size_t i = 0; i < spatial; ++i) {
        const memory::dim st = i < d.m_Strides.size() ? d.m_Strides[i] : 1;
        const memory::dim dl = i < d.m_Dilations.size() ? d.m_Dilations[i] : 1;
        const memory::dim pl = i < d.m_PadsBegin.size() ? d.m_PadsBegin[i] : 0;
        strides.push_back(st);
        dil.push_back(dl - 1);
        padL.push_back(pl);
        padR.push_back((dst[2 + i] - 1) * st + (ws[2 + i] - 1) * dl + 1 - src[2 + i] - pl);
    }
    const auto f32 = memory::data_type::f32;
    try {
        const dnnl::convolution_forward::desc cd =
            bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                   AnyMd(src, f32), AnyMd(wdims, f32), PlainMd({ws[0]}), AnyMd(dst, f32),
                                                   strides, dil, padL, padR)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                   AnyMd(src, f32), AnyMd(wdims, f32), AnyMd(dst, f32), strides, dil, padL,
                                                   padR);
        dnnl::primitive_attr attr;
        attr.set_post_ops(OneDnnPostOps(postOps, postOps.size(), nullptr));
        const dnnl::convolution_forward::primitive_desc pd(cd, attr, Engine());
        if (implementation) *implementation = pd.impl_info_str();
        return !IsReferenceImplementation(pd);
    } catch (const dnnl::error& e) {
        if (implementation) *implementation = std::string("none (") + e.what() + ")";
        return false;
    }
}

bool OneDnnHasWinograd() {
    static const bool has = [] {
        try {
            const memory::dims src{1, 32, 16, 16}, wei{32, 32, 3, 3}, dst{1, 32, 16, 16};
            const auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
            dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                                               any(src), any(wei), any(dst), {1, 1}, {1, 1}, {1, 1});
            dnnl::convolution_forward::primitive_desc pd(cd, Engine());
            return true;
        } catch (const dnnl::error&) {
            return false;
        }
    }();
    return has;
}

bool IsWinogradShape(const ConvolutionDescriptor& d, const TensorShape& weights, const TensorShape& input,
                     const TensorShape& output) {
    if (weights.GetNumDimensions() != 4 || input.GetNumDimensions() != 4 || output.GetNumDimensions() != 4) return false;
    const auto all = [](const std::vector<unsigned int>& v, unsigned int value) {
        return std::all_of(v.begin(), v.end(), [&](unsigned int x) { return x == value; });
    };
    return d.m_Groups == 1 && weights[2] == 3 && weights[3] == 3 && all(d.m_Strides, 1) && all(d.m_Dilations, 1) &&
           input[1] >= 32 && output[2] >= 13 && output[3] >= 13;
}

std::size_t CountWinogradShapes(const RegionGraph& g) {
    std::size_t count = 0;
    for (const Node& n : g.m_Nodes) {
        if (n.m_Dead || n.m_Kind != NodeKind::Conv || n.m_Inputs.size() < 2) continue;
        const auto shape = [&](int v) { return g.m_Values[static_cast<std::size_t>(v)].m_Info.GetShape(); };
        if (IsWinogradShape(std::get<ConvolutionDescriptor>(n.m_Descriptor), shape(n.m_Inputs[1]), shape(n.m_Inputs[0]),
                            shape(n.m_Outputs[0]))) {
            ++count;
        }
    }
    return count;
}

void CompiledRegion::CompileConv(int index, const Node& n) {
    const auto& d = std::get<ConvolutionDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0];
    const ConstTensor& w = ConstantOf(n.m_Inputs[1], n, "the weights");
    const Dims ws = DimsOf(w.GetShape());
    const std::size_t spatial = ws.size() - 2;
    const memory::dim groups = d.m_Groups;
    Dims wdims;
    if (groups > 1) {
        wdims = {groups, ws[0] / groups, ws[1]};
    } else {
        wdims = {ws[0], ws[1]};
    }
    wdims.insert(wdims.end(), ws.begin() + 2, ws.end());
    const Dims src = ValueDims(x);
    const int out = n.m_Outputs[0];
    const Dims dst = ValueDims(out);
    Dims strides, dil, padL, padR;
    for (std::size_t i = 0; i < spatial; ++i) {
        const memory::dim s = i < d.m_Strides.size() ? d.m_Strides[i] : 1;
        const memory::dim dl = i < d.m_Dilations.size() ? d.m_Dilations[i] : 1;
        const memory::dim pl = i < d.m_PadsBegin.size() ? d.m_PadsBegin[i] : 0;
        const memory::dim k = ws[2 + i];
        strides.push_back(s);
        dil.push_back(dl - 1);
        padL.push_back(pl);
        padR.push_back((dst[2 + i] - 1) * s + (k - 1) * dl + 1 - src[2 + i] - pl);
    }
    int sumValue = -1;
    // A trailing swish runs as CpuAcc's own kernel over the convolution's output (AddSwish):
    // oneDNN 2.6's fused swish divides (vdivps) per element; the own kernel does not, and
    // measured efficientnet_b0 (whose SiLUs are about 30% of its time) 8-14% faster overall.
    const bool ownSwish = m_Options.m_OwnSwish && MathType() == memory::data_type::f32 && !n.m_PostOps.empty() &&
                          n.m_PostOps.back().m_Kind == PostOp::Kind::Eltwise &&
                          n.m_PostOps.back().m_Eltwise.m_Algorithm == dnnl_eltwise_swish &&
                          n.m_PostOps.back().m_Eltwise.m_Alpha == 1.0f;
    dnnl::primitive_attr attr = Attr(true);
    attr.set_post_ops(OneDnnPostOps(n.m_PostOps, n.m_PostOps.size() - (ownSwish ? 1 : 0), &sumValue));
    const bool bias = n.m_Inputs.size() > 2;
    const memory::desc biasMd = PlainMd({ws[0]});
    const memory::data_type dt = MathType();
    auto make = [&](const memory::desc& srcMd, const memory::desc& dstMd,
                    dnnl::algorithm alg = dnnl::algorithm::convolution_direct) {
        dnnl::convolution_forward::desc cd =
            bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg,
                                                   srcMd, AnyMd(wdims, dt), biasMd, dstMd, strides, dil, padL, padR)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg,
                                                   srcMd, AnyMd(wdims, dt), dstMd, strides, dil, padL, padR);
        return dnnl::convolution_forward::primitive_desc(cd, attr, Engine());
    };
    // Layout: channel-blocked (nChw16c with AVX-512, nChw8c with AVX2) in and out, which oneDNN
    // 2.6 runs with its direct jit kernels; measured faster in f32 than letting it choose (it
    // picks nhwc brgemm kernels). A first layer with few channels reads plain data. If oneDNN
    // has no kernel for that, it chooses the layouts itself.
    const memory::desc current = m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md;
    dnnl::convolution_forward::primitive_desc pd;
    // (With bfloat16 oneDNN chooses: its AMX/BF16 kernels want nhwc.)
    const std::optional<memory::format_tag> blocked = dt == memory::data_type::f32 && m_Options.m_BlockedConvLayout
                                                          ? BlockedTag(src.size())
                                                          : std::optional<memory::format_tag>{};
    bool made = false;
    if (blocked) {
        const memory::desc blockedSrc(src, dt, *blocked);
        const memory::desc srcWant = current == PlainMd(src) && src[1] < BlockSize() ? PlainMd(src, dt) : blockedSrc;
        // Winograd F(2x2,3x3) for 3x3 stride-1 convolutions: 2.25x fewer multiplications, at
        // float32 accuracy (its transforms use only 0, +-1 and 1/2). Measured per layer on the
        // resnet50 and squeezenet1_1 shapes (cold weights, one and two AVX-512 cores): 1.1x to 1.6x
        // faster than the direct kernel from 13x13 outputs up with at least 32 input channels;
        // slower with 16 input channels (2.4x) and no better at 7x7, too few tiles to amortize
        // the transforms.
        const bool winograd = m_Options.m_Winograd && srcWant == blockedSrc && OneDnnHasWinograd() &&
                              IsWinogradShape(d, w.GetShape(), m_Graph->m_Values[static_cast<std::size_t>(x)].m_Info.GetShape(),
                                              m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info.GetShape());
        // Each attempt counts only when oneDNN has a real kernel for it: its reference
        // implementation (grouped convolutions with few channels per group in a blocked layout,
        // for one) is orders of magnitude slower, so the next layout is tried instead.
        if (winograd) {
            made = MadeWithoutReference(
                pd, [&] { return make(srcWant, memory::desc(dst, dt, *blocked), dnnl::algorithm::convolution_winograd); });
        }
        if (!made) {
            made = MadeWithoutReference(pd, [&] { return make(srcWant, memory::desc(dst, dt, *blocked)); });
        }
    }
    if (!made && dt != memory::data_type::f32 && current != PlainMd(src)) {
        const memory::format_tag tag =
            current.data.format_kind == dnnl_blocked ? memory::format_tag::nhwc : memory::format_tag::any;
        made = MadeWithoutReference(pd, [&] { return make(memory::desc(src, dt, tag), AnyMd(dst, dt)); });
    }
    // oneDNN chooses the layouts. CpuAccLayerSupport declined the convolutions for which even this
    // is oneDNN's reference implementation (ConvolutionRunsFast).
    if (!made) pd = make(AnyMd(src, dt), AnyMd(dst, dt));
    if (dt == memory::data_type::f32 && CompileOwnConv(n, pd, w, src, dst, strides, dil, padL)) return;
    const int srcMem = Ensure(x, pd.src_desc());
    const int weights = PackConstant(w, PlainMd(wdims), pd.weights_desc(), 1.0f);
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, weights}};
    if (bias) {
        const ConstTensor& b = ConstantOf(n.m_Inputs[2], n, "the bias");
        args.emplace_back(DNNL_ARG_BIAS, PackConstant(b, biasMd, pd.bias_desc(), 1.0f));
    }
    int dstMem = -1;
    if (sumValue >= 0) {
        // oneDNN's sum post-op adds what is in dst: the residual, in place when nobody reads it later.
        const int r = MemOf(sumValue);
        if (m_Mems[static_cast<std::size_t>(r)].m_Md == pd.dst_desc() && CanOverwrite(sumValue, index, &n)) {
            dstMem = r;
        } else {
            dstMem = NewInternal(pd.dst_desc());
            AddReorder(r, dstMem, n.m_Name + " (residual copy)");
        }
    } else if (auto c = m_ConcatOf.find(out); c != m_ConcatOf.end() && dst[0] == 1 &&
                                                 pd.dst_desc() == memory::desc(dst, memory::data_type::f32, *BlockedTag(dst.size()))) {
        // Written straight into its channels of the concatenation that reads it: with batch 1 and
        // channel blocks, those channels are one contiguous, dense part of the concatenation.
        ConcatTarget& target = m_ConcatTargets[c->second];
        const Node& concat = m_Graph->m_Nodes[static_cast<std::size_t>(c->second)];
        memory::dim offset = 0;
        for (int v : concat.m_Inputs) {
            if (v == out) break;
            offset += ValueDims(v)[1];
        }
        if (target.m_Storage < 0) target.m_Storage = AddStorage(Storage::Kind::Internal, -1, target.m_Md.get_size());
        dstMem = AddMem(target.m_Storage, pd.dst_desc());
        m_Mems[static_cast<std::size_t>(dstMem)].m_ByteOffset =
            static_cast<std::size_t>(offset * Product(dst, 2, dst.size())) * sizeof(float);
        ++target.m_Written;
        m_InFamilyBuffer.insert(out);
    } else {
        dstMem = NewInternal(pd.dst_desc());
    }
    args.emplace_back(DNNL_ARG_DST, dstMem);
    AddPrimitive(n.m_Name, dnnl::convolution_forward(pd), pd, std::move(args));
    if (ownSwish) AddSwish(n.m_Name, dstMem);
    Bind(out, dstMem);
}

bool CompiledRegion::CompileOwnConv(const Node& n, const dnnl::convolution_forward::primitive_desc& onednn,
                                    const ConstTensor& w, const Dims& src, const Dims& dst, const Dims& strides,
                                    const Dims& dil, const Dims& padL) {
    // Measured with both engines on AVX2: oneDNN 2.6's gemm:jit took 77.6 and 76.4 ms for
    // deeplabv3_resnet50's ASPP dilation-12 and -24 3x3 convolutions (2048 -> 256 on 28x28; ONNX
    // Runtime 46.3 and 19.6, skipping taps that read padding), and 3.7 ms for each of
    // resnext50_32x4d's first-stage grouped 3x3 convolutions (32 groups of 4 channels on 56x56;
    // oneDNN's jit:avx2 needs 8 channels per group).
    std::string impl = onednn.impl_info_str();  // "x64:gemm:jit"
    if (impl.rfind("x64:", 0) == 0) impl = impl.substr(4);
    if (impl.rfind("gemm", 0) != 0 || BestKernelIsa() == KernelIsa::Scalar) return false;
    if (src.size() != 4 || src[0] != 1 || w.GetDataType() != DataType::Float32) return false;
    const auto& d = std::get<ConvolutionDescriptor>(n.m_Descriptor);
    const Dims ws = DimsOf(w.GetShape());
    const bool group4 = d.m_Groups > 1 && ws[1] == 4 && ws[0] == 4 * static_cast<memory::dim>(d.m_Groups) &&
                        src[1] == ws[0] && ws[0] % 8 == 0;
    bool tap = d.m_Groups == 1 && strides[0] == 1 && strides[1] == 1;
    if (tap) tap = dil[0] > 0 || dil[1] > 0;
    if (!tap && !group4) return false;
    for (const PostOp& p : n.m_PostOps) {
        if (p.m_Kind != PostOp::Kind::Eltwise) return false;
    }
    const memory::desc dstMd(dst, memory::data_type::f32, memory::format_tag::nhwc);
    std::vector<dnnl::eltwise_forward::primitive_desc> post;
    for (const PostOp& p : n.m_PostOps) {
        dnnl::eltwise_forward::primitive_desc pd(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm),
                                        dstMd, p.m_Eltwise.m_Alpha, p.m_Eltwise.m_Beta),
            Attr(false), Engine());
        if (IsReferenceImplementation(pd)) return false;
        post.push_back(pd);
    }
    const auto size = [](memory::dim v) { return static_cast<std::size_t>(v); };
    std::vector<float> packed;
    std::size_t workspace = 1;  // floats (the grouped kernel needs none: one keeps the bias the fifth memory)
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    const int srcMem = Ensure(n.m_Inputs[0], memory::desc(src, memory::data_type::f32, memory::format_tag::nhwc));
    const int dstMem = NewInternal(dstMd);
    if (tap) {
        TapConvShape shape;
        shape.m_InC = size(src[1]), shape.m_InH = size(src[2]), shape.m_InW = size(src[3]);
        shape.m_OutC = size(dst[1]), shape.m_OutH = size(dst[2]), shape.m_OutW = size(dst[3]);
        shape.m_KernelH = size(ws[2]), shape.m_KernelW = size(ws[3]);
        shape.m_DilationH = size(dil[0] + 1), shape.m_DilationW = size(dil[1] + 1);
        shape.m_PadTop = size(padL[0]), shape.m_PadLeft = size(padL[1]);
        packed.resize(TapConvWeightsSize(shape));
        PackTapConvWeights(shape, static_cast<const float*>(w.GetMemoryArea()), packed.data());
        workspace = TapConvWorkspaceSize(shape);
        step.m_Kernel = [shape](const std::vector<void*>& p) {
            TapConvAvx2(shape, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]),
                        p.size() > 4 ? static_cast<const float*>(p[4]) : nullptr, static_cast<float*>(p[2]),
                        static_cast<float*>(p[3]));
        };
    } else {
        Group4ConvShape shape;
        shape.m_Channels = size(src[1]), shape.m_InH = size(src[2]), shape.m_InW = size(src[3]);
        shape.m_OutH = size(dst[2]), shape.m_OutW = size(dst[3]);
        shape.m_KernelH = size(ws[2]), shape.m_KernelW = size(ws[3]);
        shape.m_StrideH = size(strides[0]), shape.m_StrideW = size(strides[1]);
        shape.m_DilationH = size(dil[0] + 1), shape.m_DilationW = size(dil[1] + 1);
        shape.m_PadTop = size(padL[0]), shape.m_PadLeft = size(padL[1]);
        packed.resize(Group4WeightsSize(shape));
        PackGroup4Weights(shape, static_cast<const float*>(w.GetMemoryArea()), packed.data());
        step.m_Kernel = [shape](const std::vector<void*>& p) {
            Group4ConvAvx2(shape, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]),
                           p.size() > 4 ? static_cast<const float*>(p[4]) : nullptr, static_cast<float*>(p[2]));
        };
    }
    const memory::desc packedMd = PlainMd({static_cast<memory::dim>(packed.size())});
    step.m_KernelMems = {srcMem, PackData(packed.data(), packedMd, packedMd), dstMem};
    step.m_KernelMems.push_back(NewInternal(PlainMd({static_cast<memory::dim>(workspace)})));
    if (n.m_Inputs.size() > 2) {
        const ConstTensor& b = ConstantOf(n.m_Inputs[2], n, "the bias");
        const memory::desc biasMd = PlainMd({dst[1]});
        step.m_KernelMems.push_back(PackData(b.GetMemoryArea(), biasMd, biasMd));
    }
    m_Steps.push_back(std::move(step));
    for (const auto& pd : post) {
        AddPrimitive(n.m_Name + " (activation)", dnnl::eltwise_forward(pd), pd, {{DNNL_ARG_SRC, dstMem}, {DNNL_ARG_DST, dstMem}});
    }
    Bind(n.m_Outputs[0], dstMem);
    return true;
}

void CompiledRegion::CompilePool(const Node& n) {
    const auto& d = std::get<PoolingDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims src = ValueDims(x), dst = ValueDims(out);
    const std::size_t spatial = src.size() - 2;
    Dims kernel, strides, dil, padL, padR;
    for (std::size_t i = 0; i < spatial; ++i) {
        const memory::dim k = d.m_Global ? src[2 + i] : (i < d.m_KernelShape.size() ? d.m_KernelShape[i] : 1);
        const memory::dim s = d.m_Global ? 1 : (i < d.m_Strides.size() ? d.m_Strides[i] : 1);
        const memory::dim dl = d.m_Global ? 1 : (i < d.m_Dilations.size() ? d.m_Dilations[i] : 1);
        const memory::dim pl = d.m_Global ? 0 : (i < d.m_PadsBegin.size() ? d.m_PadsBegin[i] : 0);
        kernel.push_back(k);
        strides.push_back(s);
        dil.push_back(dl - 1);
        padL.push_back(pl);
        // Right padding that gives exactly the inferred output size (covers ceil_mode).
        padR.push_back((dst[2 + i] - 1) * s + (k - 1) * dl + 1 - src[2 + i] - pl);
    }
    if (d.m_Algorithm == PoolingAlgorithm::Max && CompileOwnMaxPool(n, kernel, strides, dil, padL)) return;
    dnnl::algorithm alg = dnnl::algorithm::pooling_max;
    if (d.m_Algorithm == PoolingAlgorithm::Average) {
        alg = d.m_Global || d.m_CountIncludePad ? dnnl::algorithm::pooling_avg_include_padding
                                                : dnnl::algorithm::pooling_avg_exclude_padding;
    }
    auto make = [&](const memory::desc& srcMd) {
        dnnl::pooling_v2_forward::desc pdsc(dnnl::prop_kind::forward_inference, alg, srcMd, AnyMd(dst, srcMd.data_type()), strides, kernel,
                                            dil, padL, padR);
        return dnnl::pooling_v2_forward::primitive_desc(pdsc, Attr(false), Engine());
    };
    // The input's layout as it is, unless oneDNN has only its reference kernel for it, or only its
    // plain-layout C++ loop (simple_nchw: 9.4 ms for Inception's 192x35x35 average pool on the
    // AVX2 EPYC, against 0.2 ms for ONNX Runtime): then channel blocks, which its jit kernels take.
    dnnl::pooling_v2_forward::primitive_desc pd;
    const bool made = MadeWithoutReference(pd, [&] { return make(m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md); });
    const auto simpleLoop = [](const dnnl::pooling_v2_forward::primitive_desc& p) {
        const char* impl = p.impl_info_str();
        return impl && std::string(impl).rfind("simple_nchw", 0) == 0;
    };
    if (!made || simpleLoop(pd)) {
        const std::optional<memory::format_tag> blocked = BlockedTag(src.size());
        const bool tookBlocked =
            blocked && MadeWithoutReference(pd, [&] { return make(memory::desc(src, ValueType(x), *blocked)); }) &&
            !simpleLoop(pd);
        if (!tookBlocked && !made) pd = make(PlainMd(src, ValueType(x)));
    }
    const int srcMem = Ensure(x, pd.src_desc());
    const int dstMem = NewInternal(pd.dst_desc());
    AddPrimitive(n.m_Name, dnnl::pooling_v2_forward(pd), pd, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_DST, dstMem}});
    Bind(out, dstMem);
}

bool CompiledRegion::CompileOwnMaxPool(const Node& n, const Dims& kernel, const Dims& strides, const Dims& dil,
                                       const Dims& padL) {
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims src = ValueDims(x), dst = ValueDims(out);
    const memory::data_type type = ValueType(x);
    const bool bytes = type == memory::data_type::u8 || type == memory::data_type::s8;
    if (!m_Options.m_OwnMaxPool || src.size() != 4 || (type != memory::data_type::f32 && !bytes) || src[2] < 1 || src[3] < 1) {
        return false;
    }
    for (std::size_t i = 0; i < 2; ++i) {
        // Dilated windows stay with oneDNN; so does a window that would lie wholly in the padding
        // (the kernel clips windows and needs a pixel in each).
        if (dil[i] != 0 || padL[i] >= kernel[i] || (dst[2 + i] - 1) * strides[i] - padL[i] >= src[2 + i]) return false;
    }
    if (bytes) return CompileOwnMaxPool8(n, kernel, strides, padL);
    // The input's layout as it is: channel blocks of 8 or 16 (what convolutions leave on AVX2 and
    // AVX-512), NHWC (one block of all channels), or plain NCHW (blocks of one channel; oneDNN
    // runs that layout in a C++ loop, simple_nchw: 3.5 ms for AlexNet's first pool, 0.46 ms here).
    using tag = memory::format_tag;
    const memory::desc& have = m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md;
    MaxPoolShape s;
    tag layout = tag::undef;
    for (const auto& [t, block] : {std::pair{tag::nChw8c, 8}, std::pair{tag::nChw16c, 16}, std::pair{tag::nhwc, 0},
                                   std::pair{tag::nchw, 1}}) {
        if (have == memory::desc(src, memory::data_type::f32, t)) {
            layout = t;
            s.m_Block = block ? static_cast<std::size_t>(block) : static_cast<std::size_t>(src[1]);
            s.m_Blocks = static_cast<std::size_t>(src[0]) *
                         (block ? static_cast<std::size_t>((src[1] + block - 1) / block) : 1u);
            break;
        }
    }
    if (layout == tag::undef) return false;
    s.m_InH = static_cast<std::size_t>(src[2]), s.m_InW = static_cast<std::size_t>(src[3]);
    s.m_OutH = static_cast<std::size_t>(dst[2]), s.m_OutW = static_cast<std::size_t>(dst[3]);
    s.m_KernelH = static_cast<std::size_t>(kernel[0]), s.m_KernelW = static_cast<std::size_t>(kernel[1]);
    s.m_StrideH = static_cast<std::size_t>(strides[0]), s.m_StrideW = static_cast<std::size_t>(strides[1]);
    s.m_PadTop = static_cast<std::size_t>(padL[0]), s.m_PadLeft = static_cast<std::size_t>(padL[1]);
    const int srcMem = MemOf(x);
    // The same layout out; padded channels of a partial last block come out as the max of the
    // input's zero padding, 0, as oneDNN's blocked layouts require.
    const int dstMem = NewInternal(memory::desc(dst, memory::data_type::f32, layout));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {srcMem, dstMem};
    const KernelIsa isa = BestKernelIsa();
    step.m_Kernel = [s, isa](const std::vector<void*>& p) {
        MaxPoolBlocked(s, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), isa);
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dstMem);
    return true;
}

bool CompiledRegion::CompileOwnMaxPool8(const Node& n, const Dims& kernel, const Dims& strides, const Dims& padL) {
    // 8-bit planes (a QDQ model's max pool between a DequantizeLinear and a QuantizeLinear on one
    // grid, FuseQuantizedMaxPool): plain NCHW, as the int8 convolutions write them; other layouts
    // and rows wider than the kernel's buffers stay with oneDNN.
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims src = ValueDims(x), dst = ValueDims(out);
    const memory::data_type type = ValueType(x);
    if (m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md != memory::desc(src, type, memory::format_tag::nchw)) return false;
    MaxPoolShape s;
    s.m_Block = 1;
    s.m_Blocks = static_cast<std::size_t>(src[0] * src[1]);
    s.m_InH = static_cast<std::size_t>(src[2]), s.m_InW = static_cast<std::size_t>(src[3]);
    s.m_OutH = static_cast<std::size_t>(dst[2]), s.m_OutW = static_cast<std::size_t>(dst[3]);
    s.m_KernelH = static_cast<std::size_t>(kernel[0]), s.m_KernelW = static_cast<std::size_t>(kernel[1]);
    s.m_StrideH = static_cast<std::size_t>(strides[0]), s.m_StrideW = static_cast<std::size_t>(strides[1]);
    s.m_PadTop = static_cast<std::size_t>(padL[0]), s.m_PadLeft = static_cast<std::size_t>(padL[1]);
    if (!MaxPoolPlainFits(s)) return false;
    const int srcMem = MemOf(x);
    const int dstMem = NewInternal(memory::desc(dst, type, memory::format_tag::nchw));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {srcMem, dstMem};
    const KernelIsa isa = BestKernelIsa();
    const bool s8 = type == memory::data_type::s8;
    step.m_Kernel = [s, isa, s8](const std::vector<void*>& p) { MaxPool8Plain(s, p[0], p[1], s8, isa); };
    m_Steps.push_back(std::move(step));
    Bind(out, dstMem);
    return true;
}

}  // namespace trellis::cpuacc
