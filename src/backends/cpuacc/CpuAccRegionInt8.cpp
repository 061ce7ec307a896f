// CpuAcc: int8 in a compiled region. Fused DequantizeLinear -> Conv/MatMul/Gemm -> [Relu] ->
// QuantizeLinear nodes run as one oneDNN int8 primitive (s8 weights recovered from the folded
// constant, output scales and zero points as attributes, the bias divided by src_scale x
// w_scale), with the probes CpuAccFusion asks first (OneDnnInt8IsExact, Int8NodeRunsFast) so
// they are fused only where oneDNN computes ONNX's result. QuantizeLinear, DequantizeLinear,
// their fused pair, and the fused quantized residual addition run CpuAcc's own kernels on any
// layout the input has.
#include "CpuAccRegionInternal.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

bool OneDnnInt8IsExact(std::string* why) {
    switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::avx2_vnni:
        case dnnl::cpu_isa::avx512_core_vnni:
        case dnnl::cpu_isa::avx512_core_bf16:
        case dnnl::cpu_isa::avx512_core_amx:
            return true;
        default:
            if (why) {
                *why = "oneDNN's int8 kernels on this ISA (no VNNI, e.g. ONEDNN_MAX_CPU_ISA=AVX2) sum u8 x s8 pairs in "
                       "16 bits, which saturate, and halve convolution weights (scale_adjust 0.5): not ONNX's result";
            }
            return false;
    }
}

namespace {

/// What an int8 Conv/MatMul node needs from the graph: shapes, weights, per-channel multipliers.
struct Int8Plan {
    bool m_Conv = true;
    Dims m_Src, m_Dst, m_Weights;  ///< Conv: oneDNN's dims (groups split off); MatMul: [M,K], [M,N], [K,N]
    Dims m_Strides, m_Dilations, m_PadL, m_PadR;
    std::vector<float> m_OutputScales;  ///< src_scale * w_scale / dst_scale: one, or per output channel
    std::vector<float> m_BiasScale;     ///< per output channel: 1 / (src_scale * w_scale) (oneDNN 2.6 adds
                                        ///< the bias to the integer sum before scaling)
    memory::desc m_UserWeights;         ///< the recovered int8 weights as stored (ONNX layout)
    dnnl::primitive_attr m_Attr;
    /// The binary post-ops' operands: (post-op index, value id, descriptor as the primitive reads it).
    std::vector<std::tuple<int, int, memory::desc>> m_BinaryOperands;
};

/// Whether the int8 node has a bias input (a run-time product's input 2 is its scales).
bool HasInt8Bias(const Node& n, const Int8Params& p) { return n.m_Inputs.size() > 2 && p.m_RuntimeScales < 0; }

/// `multipliers`: for an integer product (Int8Params::m_Multipliers), the constant's values; null
/// while the fusion only probes (the output scales are then placeholders of the same count).
Int8Plan PlanInt8(const RegionGraph& g, const Node& n, const Int8Params& p, int src, int dst,
                  const float* multipliers = nullptr) {
    Int8Plan plan;
    const auto shape = [&](int v) { return DimsOf(g.m_Values[static_cast<std::size_t>(v)].m_Info.GetShape()); };
    const Value& w = g.m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    const Dims ws = shape(n.m_Inputs[1]);
    const std::vector<float>& wScales = w.m_Info.GetQuantizationScales();
    memory::dim channels = 0;
    plan.m_Conv = n.m_Kind == NodeKind::Conv;
    if (plan.m_Conv) {
        const auto& d = std::get<ConvolutionDescriptor>(n.m_Descriptor);
        const memory::dim groups = d.m_Groups;
        plan.m_Src = shape(src);
        plan.m_Dst = shape(dst);
        plan.m_Weights = groups > 1 ? Dims{groups, ws[0] / groups, ws[1]} : Dims{ws[0], ws[1]};
        plan.m_Weights.insert(plan.m_Weights.end(), ws.begin() + 2, ws.end());
        plan.m_UserWeights = PlainMd(plan.m_Weights, memory::data_type::s8);
        for (std::size_t i = 0; i + 2 < ws.size(); ++i) {
            const memory::dim st = i < d.m_Strides.size() ? d.m_Strides[i] : 1;
            const memory::dim dl = i < d.m_Dilations.size() ? d.m_Dilations[i] : 1;
            const memory::dim pl = i < d.m_PadsBegin.size() ? d.m_PadsBegin[i] : 0;
            plan.m_Strides.push_back(st);
            plan.m_Dilations.push_back(dl - 1);
            plan.m_PadL.push_back(pl);
            plan.m_PadR.push_back((plan.m_Dst[2 + i] - 1) * st + (ws[2 + i] - 1) * dl + 1 - plan.m_Src[2 + i] - pl);
        }
        channels = ws[0];
    } else {
        const bool transB = n.m_LayerType == LayerType::Gemm && std::get<GemmDescriptor>(n.m_Descriptor).m_TransB;
        const Dims a = shape(src);
        const memory::dim k = a.back(), m = Product(a, 0, a.size() - 1);
        channels = transB ? ws[0] : ws[1];
        plan.m_Src = {m, k};
        plan.m_Dst = {m, channels};
        plan.m_Weights = {k, channels};
        plan.m_UserWeights = transB ? memory::desc({k, channels}, memory::data_type::s8, Dims{1, k})
                                    : PlainMd({k, channels}, memory::data_type::s8);
    }
    if (p.m_RuntimeScales >= 0) {
        // x_scale * w_scale computed at run time (one, or one per output column): a binary
        // multiplication post-op (below) rather than run-time output scales, which oneDNN 2.6's
        // brgemm matmul does not take (it would run gemm:jit, repacking the weights every call).
    } else if (p.m_Multipliers >= 0) {
        // An integer product: the multiplier x_scale * w_scale / y_scale as the import computed it
        // (one, or one per output channel), and the Signed32 bias added to the sum as it is.
        const std::size_t count = g.m_Values[static_cast<std::size_t>(p.m_Multipliers)].m_Info.GetNumElements();
        for (std::size_t c = 0; c < count; ++c) plan.m_OutputScales.push_back(multipliers ? multipliers[c] : 1.0f);
        plan.m_BiasScale.assign(static_cast<std::size_t>(channels), 1.0f);
    } else {
        for (memory::dim c = 0; c < (wScales.size() > 1 ? channels : 1); ++c) {
            const float ws1 = wScales[static_cast<std::size_t>(c)];
            plan.m_OutputScales.push_back(p.m_SrcScale * ws1 / p.m_DstScale);
        }
        for (memory::dim c = 0; c < channels; ++c) {
            const float ws1 = wScales[wScales.size() > 1 ? static_cast<std::size_t>(c) : 0];
            plan.m_BiasScale.push_back(1.0f / (p.m_SrcScale * ws1));
        }
    }
    plan.m_Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (!plan.m_OutputScales.empty()) {
        plan.m_Attr.set_output_scales(plan.m_OutputScales.size() > 1 ? 1 << 1 : 0, plan.m_OutputScales);
    }
    if (p.m_RuntimeSrcZeroPoint >= 0) {
        plan.m_Attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    } else if (p.m_SrcZeroPoint != 0) {
        plan.m_Attr.set_zero_points(DNNL_ARG_SRC, 0, {p.m_SrcZeroPoint});
    }
    if (p.m_DstZeroPoint != 0) plan.m_Attr.set_zero_points(DNNL_ARG_DST, 0, {p.m_DstZeroPoint});
    dnnl::post_ops po;
    if (p.m_RuntimeScales >= 0) {
        // float(sum) * scales, rounded once as CpuRef's Cast and Mul do; one scale, or one per column.
        const memory::dim count =
            static_cast<memory::dim>(g.m_Values[static_cast<std::size_t>(p.m_RuntimeScales)].m_Info.GetNumElements());
        Dims dims(plan.m_Dst.size(), 1);  // [1, count] for a matmul, [1, count, 1, 1] for a convolution
        dims[1] = count;
        const memory::desc md = PlainMd(dims);
        po.append_binary(dnnl::algorithm::binary_mul, md);
        plan.m_BinaryOperands.emplace_back(0, p.m_RuntimeScales, md);
    }
    for (const PostOp& op : n.m_PostOps) {
        if (op.m_Kind == PostOp::Kind::Eltwise) {
            po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(op.m_Eltwise.m_Algorithm), op.m_Eltwise.m_Alpha,
                              op.m_Eltwise.m_Beta);
            continue;
        }
        // An addition (a bias or residual fused after a matmul with a Float32 result): the
        // operand is the whole result, or one row broadcast over it. (FusePostOps fuses none after
        // an int8 convolution.)
        if (plan.m_Conv || p.m_DstType != DataType::Float32) {
            throw LayerValidationException("CpuAcc: int8 node '" + n.m_Name + "' has an addition fused after it; only a "
                                           "matmul with a Float32 result takes one");
        }
        const Dims od = shape(op.m_Value);
        const memory::desc md = Product(od, 0, od.size()) == plan.m_Dst[0] * plan.m_Dst[1] ? PlainMd(plan.m_Dst)
                                                                                           : PlainMd({1, plan.m_Dst[1]});
        plan.m_BinaryOperands.emplace_back(po.len(), op.m_Value, md);
        po.append_binary(dnnl::algorithm::binary_add, md);
    }
    plan.m_Attr.set_post_ops(po);
    return plan;
}

dnnl::convolution_forward::primitive_desc MakeInt8ConvPd(const Int8Plan& plan, const Int8Params& p, bool bias) {
    const memory::desc srcMd = AnyMd(plan.m_Src, DataTypeOf(p.m_SrcType));
    const memory::desc wMd = AnyMd(plan.m_Weights, memory::data_type::s8);
    const memory::desc dstMd = AnyMd(plan.m_Dst, DataTypeOf(p.m_DstType));
    const auto fwd = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc cd =
        bias ? dnnl::convolution_forward::desc(fwd, alg, srcMd, wMd, PlainMd({plan.m_Dst[1]}), dstMd, plan.m_Strides,
                                               plan.m_Dilations, plan.m_PadL, plan.m_PadR)
             : dnnl::convolution_forward::desc(fwd, alg, srcMd, wMd, dstMd, plan.m_Strides, plan.m_Dilations, plan.m_PadL,
                                               plan.m_PadR);
    return dnnl::convolution_forward::primitive_desc(cd, plan.m_Attr, Engine());
}

dnnl::matmul::primitive_desc MakeInt8MatMulPd(const Int8Plan& plan, const Int8Params& p, bool bias) {
    const memory::desc srcMd = PlainMd(plan.m_Src, DataTypeOf(p.m_SrcType));
    const memory::desc wMd = AnyMd(plan.m_Weights, memory::data_type::s8);
    const memory::desc dstMd = PlainMd(plan.m_Dst, DataTypeOf(p.m_DstType));
    dnnl::matmul::desc md = bias ? dnnl::matmul::desc(srcMd, wMd, PlainMd({1, plan.m_Dst[1]}), dstMd)
                                 : dnnl::matmul::desc(srcMd, wMd, dstMd);
    return dnnl::matmul::primitive_desc(md, plan.m_Attr, Engine());
}

/// The bias as oneDNN adds it to the integer sum: a Float32 bias divided by src_scale x w_scale, or
/// an integer product's Signed32 bias as it is (exact below 2^24 in magnitude, as every bias of a
/// calibrated model is).
std::vector<float> Int8Bias(const ConstTensor& b, const Int8Plan& plan) {
    std::vector<float> scaled(b.GetNumElements());
    if (b.GetDataType() == DataType::Signed32) {
        const auto* bp = static_cast<const int32_t*>(b.GetMemoryArea());
        for (std::size_t c = 0; c < scaled.size(); ++c) scaled[c] = static_cast<float>(bp[c]);
    } else {
        const auto* bp = static_cast<const float*>(b.GetMemoryArea());
        for (std::size_t c = 0; c < scaled.size(); ++c) scaled[c] = bp[c] * plan.m_BiasScale[c];
    }
    return scaled;
}

/// Weights packed with scale_adjust (non-VNNI kernels halve them): not the values ONNX multiplies.
bool HasScaleAdjust(const memory::desc& md) {
    return (md.data.extra.flags & dnnl_memory_extra_flag_scale_adjust) != 0 && md.data.extra.scale_adjust != 1.0f;
}

}  // namespace

bool Int8NodeRunsFast(const RegionGraph& g, const Node& n, const Int8Params& p, int src, int dst, std::string* why) {
    try {
        const Int8Plan plan = PlanInt8(g, n, p, src, dst);
        const bool bias = HasInt8Bias(n, p);
        std::string impl;
        bool adjusted = false;
        if (plan.m_Conv) {
            const auto pd = MakeInt8ConvPd(plan, p, bias);
            impl = pd.impl_info_str();
            adjusted = HasScaleAdjust(pd.weights_desc());
        } else {
            const auto pd = MakeInt8MatMulPd(plan, p, bias);
            impl = pd.impl_info_str();
            adjusted = HasScaleAdjust(pd.weights_desc());
        }
        if (impl.rfind("ref", 0) == 0) {
            if (why) *why = "oneDNN has only its reference implementation (" + impl + ") for it in int8";
            return false;
        }
        if (adjusted) {
            if (why) *why = "oneDNN's int8 kernel " + impl + " halves the weights (scale_adjust): not ONNX's result";
            return false;
        }
        return true;
    } catch (const dnnl::error& e) {
        if (why) *why = std::string("oneDNN has no int8 primitive for it (") + e.what() + ")";
        return false;
    }
}

const float* CompiledRegion::Multipliers(const Node& n) const {
    const int v = n.m_Int8->m_Multipliers;
    if (v < 0) return nullptr;
    const ConstTensor& m = ConstantOf(v, n, "the requantization multiplier");
    if (m.GetDataType() != DataType::Float32) {
        throw LayerValidationException("CpuAcc: the requantization multiplier of '" + n.m_Name + "' is not Float32");
    }
    return static_cast<const float*>(m.GetMemoryArea());
}

void CompiledRegion::AddInt8RuntimeArgs(const Node& n, const std::vector<std::tuple<int, int, memory::desc>>& binary,
                                        std::vector<std::pair<int, int>>& args) {
    const Int8Params& p = *n.m_Int8;
    if (p.m_RuntimeSrcZeroPoint >= 0) {
        // oneDNN reads zero points as Signed32: the 8-bit scalar widened by a step before the product.
        const int zp8 = EnsurePlain(p.m_RuntimeSrcZeroPoint);
        const int zp32 = NewInternal(PlainMd({1}, memory::data_type::s32));
        const bool s8 = m_Graph->m_Values[static_cast<std::size_t>(p.m_RuntimeSrcZeroPoint)].m_Info.GetDataType() ==
                        DataType::Signed8;
        Step step;
        step.m_Name = n.m_Name + "/zero_point";
        step.m_Category = "own kernel";
        step.m_KernelMems = {zp8, zp32};
        step.m_Kernel = [s8](const std::vector<void*>& ptr) {
            *static_cast<int32_t*>(ptr[1]) = s8 ? static_cast<int32_t>(*static_cast<const int8_t*>(ptr[0]))
                                                : static_cast<int32_t>(*static_cast<const uint8_t*>(ptr[0]));
        };
        m_Steps.push_back(std::move(step));
        args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp32);
    }
    for (const auto& [index, value, md] : binary) {
        args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, Alias(EnsurePlain(value), md));
    }
}

void CompiledRegion::CompileConvInt8(const Node& n) {
    const Int8Params& p = *n.m_Int8;
    if (p.m_OwnKernel) {
        CompileIntegerProduct(n);
        return;
    }
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Int8Plan plan = PlanInt8(*m_Graph, n, p, x, out, Multipliers(n));
    const bool bias = HasInt8Bias(n, p);
    const auto pd = MakeInt8ConvPd(plan, p, bias);
    if (IsReferenceImplementation(pd) || HasScaleAdjust(pd.weights_desc())) {
        throw LayerValidationException("CpuAcc: int8 convolution '" + n.m_Name + "' would run oneDNN's " +
                                       pd.impl_info_str() + " (the fusion's probe said otherwise)");
    }
    const Value& wv = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, Ensure(x, pd.src_desc())},
                                             {DNNL_ARG_WEIGHTS, PackData(wv.m_Int8Values->data(), plan.m_UserWeights, pd.weights_desc())}};
    if (bias) {
        const std::vector<float> b = Int8Bias(ConstantOf(n.m_Inputs[2], n, "the bias"), plan);
        args.emplace_back(DNNL_ARG_BIAS, PackData(b.data(), PlainMd({plan.m_Dst[1]}), pd.bias_desc()));
    }
    AddInt8RuntimeArgs(n, plan.m_BinaryOperands, args);
    const int dstMem = NewInternal(pd.dst_desc());
    args.emplace_back(DNNL_ARG_DST, dstMem);
    AddPrimitive(n.m_Name, dnnl::convolution_forward(pd), pd, std::move(args));
    Bind(out, dstMem);
}

void CompiledRegion::CompileIntegerProduct(const Node& n) {
    const Int8Params& p = *n.m_Int8;
    const bool conv = n.m_Kind == NodeKind::Conv;
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Value& wv = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    const Dims xDims = ValueDims(x), wDims = ValueDims(n.m_Inputs[1]), outDims = ValueDims(out);
    const bool dynamic = p.m_RuntimeScales >= 0;
    const auto fail = [&](const std::string& why) {
        return LayerValidationException("CpuAcc: int8 " + std::string(GetNodeKindName(n.m_Kind)) + " '" + n.m_Name +
                                        "' does not fit the own integer GEMM: " + why);
    };
    const bool activationB = p.m_ActivationB;  // B computed: packed on every call, per batch
    // A QDQ MatMul / Gemm (DequantizeLinear -> MatMul -> [Relu] -> QuantizeLinear): the scales from
    // the DequantizeLinears, a Float32 bias added after them, Relu, then QuantizeLinear's scale.
    const bool qdq = !dynamic && p.m_Multipliers < 0;
    if (!activationB && !wv.m_Int8Values) throw fail("no int8 weights");
    // The product as GEMMs: a matmul's A [rows][depth] by B [depth][cols]; a convolution per image
    // and group, its weights [cols][depth] by the taps [depth][rows] (IntegerConvAvx2).
    std::size_t batch = 1, groups = 1, rows = 0, depth = 0, cols = 0;
    Im2ColShape shape{};
    if (conv) {
        const auto& d = std::get<ConvolutionDescriptor>(n.m_Descriptor);
        if (xDims.size() != 4 || wDims.size() != 4) throw fail("not a 2-D convolution");
        const auto at = [](const std::vector<unsigned int>& v, std::size_t i, unsigned int dflt) { return i < v.size() ? v[i] : dflt; };
        batch = static_cast<std::size_t>(xDims[0]);
        groups = d.m_Groups;
        shape.m_Channels = static_cast<std::size_t>(xDims[1]) / groups;
        shape.m_InH = static_cast<std::size_t>(xDims[2]);
        shape.m_InW = static_cast<std::size_t>(xDims[3]);
        shape.m_OutH = static_cast<std::size_t>(outDims[2]);
        shape.m_OutW = static_cast<std::size_t>(outDims[3]);
        shape.m_KernelH = static_cast<std::size_t>(wDims[2]);
        shape.m_KernelW = static_cast<std::size_t>(wDims[3]);
        shape.m_StrideH = at(d.m_Strides, 0, 1);
        shape.m_StrideW = at(d.m_Strides, 1, 1);
        shape.m_DilationH = at(d.m_Dilations, 0, 1);
        shape.m_DilationW = at(d.m_Dilations, 1, 1);
        shape.m_PadTop = at(d.m_PadsBegin, 0, 0);
        shape.m_PadLeft = at(d.m_PadsBegin, 1, 0);
        rows = shape.m_OutH * shape.m_OutW;
        depth = shape.m_Channels * shape.m_KernelH * shape.m_KernelW;
        cols = static_cast<std::size_t>(wDims[0]) / groups;
    } else if (activationB) {
        if (xDims.size() < 2 || wDims.size() != xDims.size() || wDims[wDims.size() - 2] != xDims.back()) {
            throw fail("operands are not [..., m, k] and [..., k, n]");
        }
        depth = static_cast<std::size_t>(xDims.back());
        rows = static_cast<std::size_t>(xDims[xDims.size() - 2]);
        cols = static_cast<std::size_t>(wDims.back());
        batch = static_cast<std::size_t>(Product(xDims, 0, xDims.size() - 2));
    } else {
        const bool transB = n.m_LayerType == LayerType::Gemm && std::get<GemmDescriptor>(n.m_Descriptor).m_TransB;
        if (wDims.size() != 2 || wDims[transB ? 1 : 0] != xDims.back()) throw fail("weights are not [k, n]");
        depth = static_cast<std::size_t>(xDims.back());
        rows = static_cast<std::size_t>(Product(xDims, 0, xDims.size() - 1));
        cols = static_cast<std::size_t>(wDims[transB ? 0 : 1]);
    }
    const std::size_t maxDepth = activationB ? kMaxActivationGemmDepth : kMaxIntegerGemmDepth;
    if (depth > maxDepth) throw fail("depth " + std::to_string(depth) + " above " + std::to_string(maxDepth));
    const std::size_t channels = groups * cols;
    // Weights: per group B[k][j] = w[group * cols + j][k] (ONNX's [M][C/group][kh][kw] for a
    // convolution; a matmul's [k][n] as it is), packed one group after the other.
    // (A convolution keeps its weights stationary: IntegerConvAvx2 reads them as rows.)
    const int8_t* w = activationB ? nullptr : wv.m_Int8Values->data();
    // A computed B: packed per call in 16 bits (IntegerGemmAvx2); constant weights: 8 bits
    // (IntegerConvAvx2, IntegerGemmBytesAvx2 with B^T as its weights).
    const std::size_t perGroup = activationB ? PackedIntegerWeightsSize(depth, cols) : 0;
    std::vector<int16_t> packed(1);
    // The weights: one blob of bytes per group (PackIntegerConvWeights), one after the other.
    // A convolution's plan: what its kernel works out from the shape alone, once.
    // Channel quads (aBcd4b) in where the producer wrote them (ChannelQuadOutput), else planes.
    const memory::desc quadsMd = conv ? memory::desc(xDims, DataTypeOf(p.m_SrcType), memory::format_tag::aBcd4b) : memory::desc();
    const bool quadsIn = conv && groups == 1 && IntegerConvTakesChannelQuads(shape) && m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md == quadsMd;
    const std::shared_ptr<const IntegerConvPlan> convPlan = conv ? PlanIntegerConv(shape, cols, quadsIn) : nullptr;
    // Channel quads out where every reader takes them (ChannelQuadOutput), from a layer that packs
    // its panels one by one, or that takes twin quads (blocks of a quad only). One that packs its
    // panels all first reads them from L2 for each block, and its blocks of a quad (4 channels, not
    // 5) read a quarter more of them - resnet50's 1x1 256->1024 @14 ran 4-7% slower so - unless the
    // twin quads pay that back: its layer3 convolutions ran 7-15% faster with them.
    const bool quadsOut = conv && !dynamic && (!IntegerConvPacksPanelsFirst(*convPlan) || IntegerConvTakesTwinQuads(*convPlan)) &&
                          ChannelQuadOutput(n, groups, cols);
    std::vector<uint8_t> convPacked;
    std::vector<std::size_t> groupAt;
    std::vector<int8_t> transposed;
    if (!conv && !activationB && n.m_LayerType == LayerType::Gemm && std::get<GemmDescriptor>(n.m_Descriptor).m_TransB) {
        transposed.resize(depth * cols);  // Gemm's transB weights [n][k] as [k][n]
        for (std::size_t j = 0; j < cols; ++j) {
            for (std::size_t q = 0; q < depth; ++q) transposed[q * cols + j] = w[j * depth + q];
        }
        w = transposed.data();
    }
    for (std::size_t g = 0; g < groups && !activationB; ++g) {
        if (conv) {
            const std::vector<int8_t> ordered = quadsIn ? ChannelQuadWeights(w + g * cols * depth, cols, shape) : std::vector<int8_t>{};
            const std::vector<uint8_t> blob = PackIntegerConvWeights(quadsIn ? ordered.data() : w + g * cols * depth, cols, depth,
                                                                     IntegerConvTakesPairings(*convPlan), quadsOut, true,
                                                                     IntegerConvTakesTwinQuads(*convPlan));
            groupAt.push_back(convPacked.size());
            convPacked.insert(convPacked.end(), blob.begin(), blob.end());
            convPacked.resize((convPacked.size() + 63) / 64 * 64);  // each group's blob 64-byte aligned
        } else {
            std::vector<int8_t> bT(depth * cols);  // B^T [n][k]: the kernel's weights are rows of depth
            for (std::size_t q = 0; q < depth; ++q) {
                for (std::size_t j = 0; j < cols; ++j) bT[j * depth + q] = w[q * cols + j];
            }
            groupAt.push_back(0);
            // A few rows of A (a classifier's one): the weights whole for the GEMV loop.
            convPacked = rows <= kIntegerGemvRows ? PackIntegerGemvWeights(bT.data(), cols, depth) : PackIntegerConvWeights(bT.data(), cols, depth);
        }
    }
    // Scales: x_scale * w_scale at run time, the constant multipliers x_scale * w_scale / y_scale,
    // or a QDQ node's x_scale * w_scale (one, or per output channel).
    // (A convolution quantizes in its tile with scale 1: its scales and bias are divided by y_scale,
    // as oneDNN's int8 output scales are; within a quantization step of the float layers.)
    std::vector<float> qdqScales;
    if (qdq) {
        for (const float ws1 : wv.m_Info.GetQuantizationScales()) {
            qdqScales.push_back(conv ? p.m_SrcScale * ws1 / p.m_DstScale : p.m_SrcScale * ws1);
        }
    }
    const int scaleValue = dynamic ? p.m_RuntimeScales : p.m_Multipliers;
    const std::size_t scaleCount =
        qdq ? qdqScales.size() : m_Graph->m_Values[static_cast<std::size_t>(scaleValue)].m_Info.GetNumElements();
    if (scaleCount != 1 && scaleCount != channels) throw fail("scales neither one nor one per output channel");
    int scaleMem = -1;
    if (dynamic) {
        scaleMem = Alias(EnsurePlain(scaleValue), PlainMd({static_cast<memory::dim>(scaleCount)}));
    } else {
        const memory::desc md = PlainMd({static_cast<memory::dim>(scaleCount)});
        scaleMem = PackData(qdq ? qdqScales.data() : Multipliers(n), md, md);
    }
    // A QDQ node's Float32 bias (added after the scales, as the float layers add it) and Relu.
    int floatBiasMem = -1;
    bool relu = false;
    if (qdq && n.m_Inputs.size() > 2) {
        const ConstTensor& bt = ConstantOf(n.m_Inputs[2], n, "the bias");
        if (bt.GetDataType() != DataType::Float32 || bt.GetNumElements() != channels) throw fail("bias is not Float32 per channel");
        const memory::desc md = PlainMd({static_cast<memory::dim>(channels)});
        std::vector<float> fb(channels);
        const auto* bp = static_cast<const float*>(bt.GetMemoryArea());
        for (std::size_t ch = 0; ch < channels; ++ch) fb[ch] = conv ? bp[ch] / p.m_DstScale : bp[ch];
        floatBiasMem = PackData(fb.data(), md, md);
    }
    // The Signed32 bias (a QLinearConv's), added to the integer sums; no sum may wrap.
    int biasMem = -1;
    if (!qdq && HasInt8Bias(n, p)) {
        const ConstTensor& bt = ConstantOf(n.m_Inputs[2], n, "the bias");
        if (bt.GetDataType() != DataType::Signed32 || bt.GetNumElements() != channels) throw fail("bias is not Signed32 per channel");
        const auto* bp = static_cast<const int32_t*>(bt.GetMemoryArea());
        int64_t largest = 0;
        for (std::size_t c = 0; c < channels; ++c) largest = std::max<int64_t>(largest, bp[c] < 0 ? -int64_t{bp[c]} : bp[c]);
        if (largest + static_cast<int64_t>(depth) * 255 * 128 >= (int64_t{1} << 31)) throw fail("the bias could make a sum wrap");
        const memory::desc md = PlainMd({static_cast<memory::dim>(channels)}, memory::data_type::s32);
        biasMem = PackData(bp, md, md);
    }
    // The post-ops (dynamic products: bias, activation) as oneDNN Float32 primitives in place after it.
    const memory::desc dstF32 = PlainMd(conv ? outDims : Dims{static_cast<memory::dim>(batch * rows), static_cast<memory::dim>(cols)});
    std::vector<InPlacePostOp> post;
    for (const PostOp& op : n.m_PostOps) {
        if (qdq && op.m_Kind == PostOp::Kind::Eltwise && op.m_Eltwise.m_Algorithm == dnnl_eltwise_relu &&
            op.m_Eltwise.m_Alpha == 0.0f) {
            relu = true;  // applied before the quantization
            continue;
        }
        if (!dynamic) throw fail("post-op after a quantized result");
        if (op.m_Kind != PostOp::Kind::Eltwise && conv) throw fail("an addition fused after a convolution");
        post.emplace_back();
        if (!MakeInPlacePostOp(op, dstF32, static_cast<memory::dim>(batch * rows), static_cast<memory::dim>(cols), post.back())) {
            throw fail("post-op '" + op.m_Name + "' would run oneDNN's reference implementation");
        }
    }
    const bool aSigned = p.m_SrcType == DataType::Signed8;
    const bool zpSigned = p.m_RuntimeSrcZeroPoint >= 0 ? m_Graph->m_Values[static_cast<std::size_t>(p.m_RuntimeSrcZeroPoint)]
                                                                .m_Info.GetDataType() == DataType::Signed8
                                                         : aSigned;
    const bool quantized = !dynamic;
    const bool outSigned = p.m_DstType == DataType::Signed8;
    // A requantization after it (conv only): the node's 8-bit output is the second quantization's.
    const std::optional<Int8Params::Requantize> requant = p.m_Requantize;
    if (requant && (!conv || !quantized)) throw fail("a requantization after a product that is not a quantized convolution");
    const DataType outType = requant ? requant->m_OutType : p.m_DstType;
    const int32_t constantZp = p.m_SrcZeroPoint, dstZp = p.m_DstZeroPoint;
    // A convolution's output description, its constant part: the type, zero point and
    // requantization, which multiplies by its output scale's reciprocal where that gives the
    // division's result for every value (IntegerRequantizeReciprocal checks all 256).
    IntegerConvOutput convOut;
    convOut.m_Signed = outSigned;
    convOut.m_ZeroPoint = dstZp;
    if (requant) {
        convOut.m_Requantize = true;
        convOut.m_RequantScale = requant->m_Scale;
        convOut.m_RequantRelu = requant->m_Relu;
        convOut.m_RequantOutScale = requant->m_OutScale;
        convOut.m_RequantOutZeroPoint = requant->m_OutZeroPoint;
        convOut.m_RequantOutSigned = requant->m_OutType == DataType::Signed8;
        if (BestKernelIsa() >= KernelIsa::Avx2) convOut.m_RequantReciprocal = IntegerRequantizeReciprocal(convOut);
    }
    const float dstScale = qdq && !conv ? p.m_DstScale : 1.0f;
    const std::size_t imageBytes = static_cast<std::size_t>(Product(xDims, 1, xDims.size()));
    const std::size_t outImage = channels * rows;
    const std::size_t packedBytes = activationB ? packed.size() * 2 : convPacked.size();
    const memory::desc bytesMd = PlainMd({static_cast<memory::dim>(packedBytes)}, memory::data_type::u8);
    const auto bufferOf = [&](std::size_t bytes) { return NewInternal(PlainMd({static_cast<memory::dim>(std::max<std::size_t>(bytes, 1))}, memory::data_type::u8)); };
    // Memories: src, packed weights, scales, dst, int16 workspace and C (a matmul's), [bias], [zero point].
    const memory::desc dstMd = quadsOut ? memory::desc(outDims, DataTypeOf(outType), memory::format_tag::aBcd4b)
                                        : quantized ? PlainMd(outDims, DataTypeOf(outType)) : dstF32;
    const int dst = NewInternal(dstMd);
    std::vector<int> mems = {Alias(quadsIn ? MemOf(x) : EnsurePlain(x), PlainMd({Product(xDims, 0, xDims.size())}, DataTypeOf(p.m_SrcType))),
                             PackData(activationB ? static_cast<const void*>(packed.data()) : convPacked.data(), bytesMd, bytesMd),
                             scaleMem, dst,
                             bufferOf(conv          ? IntegerConvWorkspaceSize(*convPlan)
                                      : activationB ? IntegerGemmWorkspaceSize(rows, depth) * 2
                                                    : IntegerGemmBytesWorkspaceSize(rows, depth, cols)),
                             bufferOf(activationB ? rows * cols * sizeof(float) : 0)};
    // A computed B: its 8-bit data, and room to pack one batch of it.
    const int bAt = activationB ? static_cast<int>(mems.size()) : -1;
    if (activationB) {
        mems.push_back(EnsurePlain(n.m_Inputs[1]));
        mems.push_back(bufferOf(perGroup * 2));
    }
    const bool bSigned = activationB && m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[1])].m_Info.GetDataType() ==
                                            DataType::Signed8;
    const int32_t constantBZp = p.m_BZeroPoint;
    const int bZpAt = p.m_RuntimeBZeroPoint >= 0 ? static_cast<int>(mems.size()) : -1;
    if (bZpAt >= 0) mems.push_back(EnsurePlain(p.m_RuntimeBZeroPoint));
    const bool bZpSigned = p.m_RuntimeBZeroPoint >= 0 &&
                           m_Graph->m_Values[static_cast<std::size_t>(p.m_RuntimeBZeroPoint)].m_Info.GetDataType() == DataType::Signed8;
    const int biasAt = biasMem >= 0 ? static_cast<int>(mems.size()) : -1;
    if (biasMem >= 0) mems.push_back(biasMem);
    const int zpAt = p.m_RuntimeSrcZeroPoint >= 0 ? static_cast<int>(mems.size()) : -1;
    if (zpAt >= 0) mems.push_back(EnsurePlain(p.m_RuntimeSrcZeroPoint));
    const int floatBiasAt = floatBiasMem >= 0 ? static_cast<int>(mems.size()) : -1;
    if (floatBiasMem >= 0) mems.push_back(floatBiasMem);
    const KernelIsa isa = BestKernelIsa();
    const bool convWorkspace = conv && IntegerConvWorkspaceSize(*convPlan) > 0;
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = mems;
    step.m_Kernel = [=](const std::vector<void*>& ptr) {
        int32_t zp = constantZp;
        if (zpAt >= 0) {
            zp = zpSigned ? int32_t{*static_cast<const int8_t*>(ptr[static_cast<std::size_t>(zpAt)])}
                          : int32_t{*static_cast<const uint8_t*>(ptr[static_cast<std::size_t>(zpAt)])};
        }
        const auto* src = static_cast<const uint8_t*>(ptr[0]);
        const auto* scales = static_cast<const float*>(ptr[2]);
        auto* ws = static_cast<int16_t*>(ptr[4]);
        auto* c = static_cast<float*>(ptr[5]);
        const auto* bias = biasAt >= 0 ? static_cast<const int32_t*>(ptr[static_cast<std::size_t>(biasAt)]) : nullptr;
        const bool perColumn = scaleCount > 1;
        const auto quantize = [&](const float* from, std::size_t count, std::size_t at) {
            Quantize(from, static_cast<uint8_t*>(ptr[3]) + at, outSigned, count, dstScale, dstZp, isa);
        };
        if (activationB) {
            // One product per batch: that batch's B packed (minus its zero point), then A by it.
            auto* bPacked = static_cast<int16_t*>(ptr[static_cast<std::size_t>(bAt) + 1]);
            const auto* b8 = static_cast<const uint8_t*>(ptr[static_cast<std::size_t>(bAt)]);
            int32_t bZp = constantBZp;
            if (bZpAt >= 0) {
                const void* z = ptr[static_cast<std::size_t>(bZpAt)];
                bZp = bZpSigned ? int32_t{*static_cast<const int8_t*>(z)} : int32_t{*static_cast<const uint8_t*>(z)};
            }
            for (std::size_t i = 0; i < batch; ++i) {
                PackIntegerOperand(b8 + i * depth * cols, bSigned, bZp, depth, cols, bPacked);
                if (dynamic) {
                    // Float32 out: float(sum) times the run-time scale, as the Cast and Mul compute it.
                    IntegerGemmAvx2(src + i * rows * depth, aSigned, zp, rows, depth, bPacked, cols, nullptr, scales, false,
                                    static_cast<float*>(ptr[3]) + i * rows * cols, ws);
                    continue;
                }
                IntegerGemmAvx2(src + i * rows * depth, aSigned, zp, rows, depth, bPacked, cols, nullptr, scales, false, c, ws);
                constexpr std::size_t kBlock = 16384;
                const std::size_t total = rows * cols;
#pragma omp parallel for schedule(static)
                for (std::size_t at = 0; at < total; at += kBlock) quantize(c + at, std::min(kBlock, total - at), i * total + at);
            }
            return;
        }
        if (!conv) {
            // A quantized result is quantized in the tiles: a QDQ matmul's float bias, Relu and
            // QuantizeLinear (x_scale * w_scale as the scales, the division by y_scale there), a
            // QLinearMatMul's multiplier as the scales and scale 1 - the same steps the separate
            // passes over C took (3-5% of BERT's time).
            IntegerConvOutput to;
            if (quantized) {
                to.m_Quantized = static_cast<uint8_t*>(ptr[3]);
                to.m_Signed = outSigned;
                to.m_ZeroPoint = dstZp;
                to.m_OutScale = dstScale;
                to.m_FloatBias = floatBiasAt >= 0 ? static_cast<const float*>(ptr[static_cast<std::size_t>(floatBiasAt)]) : nullptr;
                to.m_Relu = relu;
            } else {
                to.m_Float = static_cast<float*>(ptr[3]);
            }
            IntegerGemmBytesAvx2(src, aSigned, zp, rows, depth, static_cast<const uint8_t*>(ptr[1]), cols, bias, scales, perColumn,
                                 to, static_cast<uint8_t*>(ptr[4]));
            return;
        }
        for (std::size_t img = 0; img < batch; ++img) {
            for (std::size_t g = 0; g < groups; ++g) {
                const std::size_t at = img * outImage + g * cols * rows;
                IntegerConvOutput to = convOut;
                to.m_ChannelQuads = quadsOut;
                if (quantized) to.m_Quantized = static_cast<uint8_t*>(ptr[3]) + at;
                else to.m_Float = static_cast<float*>(ptr[3]) + at;
                to.m_FloatBias =
                    floatBiasAt >= 0 ? static_cast<const float*>(ptr[static_cast<std::size_t>(floatBiasAt)]) + g * cols : nullptr;
                to.m_Relu = relu;
                IntegerConvAvx2(src + img * imageBytes + g * shape.m_Channels * shape.m_InH * shape.m_InW, aSigned, zp, *convPlan,
                                static_cast<const uint8_t*>(ptr[1]) + groupAt[g], bias ? bias + g * cols : nullptr,
                                perColumn ? scales + g * cols : scales, perColumn, to,
                                convWorkspace ? static_cast<uint8_t*>(ptr[4]) : nullptr);
            }
        }
    };
    m_Steps.push_back(std::move(step));
    AddInPlacePostOps(n.m_Name, post, dst);
    Bind(out, quadsOut ? dst : Alias(dst, PlainMd(outDims, quantized ? DataTypeOf(outType) : memory::data_type::f32)));
}

bool CompiledRegion::ChannelQuadOutput(const Node& n, std::size_t groups, std::size_t channels) const {
    // Only where every reader takes them as they are: another own integer convolution of one group
    // (IntegerConvTakesChannelQuads: the same channels, a multiple of 4) reading it as its input, or
    // a quantized Add (element-wise: its output takes the layout). Any other reader - a pooling, a
    // region output - would reorder it back.
    const int out = n.m_Outputs[0];
    if (groups != 1 || channels % 4 != 0 || m_Graph->IsRegionOutput(out)) return false;
    const std::vector<int> readers = m_Graph->Consumers(out);
    if (readers.empty()) return false;
    for (const int r : readers) {
        const Node& c = m_Graph->m_Nodes[static_cast<std::size_t>(r)];
        if (c.m_Kind == NodeKind::QuantizedAdd) continue;
        bool conv = c.m_Kind == NodeKind::Conv && c.m_Int8 && c.m_Int8->m_OwnKernel && c.m_Int8->m_RuntimeScales < 0 &&
                    c.m_Inputs.size() > 1 && c.m_Inputs[0] == out && std::get<ConvolutionDescriptor>(c.m_Descriptor).m_Groups == 1;
        for (std::size_t i = 1; i < c.m_Inputs.size(); ++i) conv = conv && c.m_Inputs[i] != out;
        for (const PostOp& op : c.m_PostOps) conv = conv && op.m_Value != out;
        if (!conv) return false;
    }
    return true;
}

void CompiledRegion::CompileMatMulInt8(const Node& n) {
    const Int8Params& p = *n.m_Int8;
    if (p.m_OwnKernel) {
        CompileIntegerProduct(n);
        return;
    }
    const int a = n.m_Inputs[0], out = n.m_Outputs[0];
    const Int8Plan plan = PlanInt8(*m_Graph, n, p, a, out, Multipliers(n));
    const bool bias = HasInt8Bias(n, p);
    const auto pd = MakeInt8MatMulPd(plan, p, bias);
    if (IsReferenceImplementation(pd) || HasScaleAdjust(pd.weights_desc())) {
        throw LayerValidationException("CpuAcc: int8 matmul '" + n.m_Name + "' would run oneDNN's " + pd.impl_info_str() +
                                       " (the fusion's probe said otherwise)");
    }
    const Value& wv = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    const memory::desc srcMd = PlainMd(plan.m_Src, DataTypeOf(p.m_SrcType));
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, Alias(EnsurePlain(a), srcMd)},
                                             {DNNL_ARG_WEIGHTS, PackData(wv.m_Int8Values->data(), plan.m_UserWeights, pd.weights_desc())}};
    if (bias) {
        const std::vector<float> b = Int8Bias(ConstantOf(n.m_Inputs[2], n, "the bias"), plan);
        args.emplace_back(DNNL_ARG_BIAS, PackData(b.data(), PlainMd({1, plan.m_Dst[1]}), pd.bias_desc()));
    }
    AddInt8RuntimeArgs(n, plan.m_BinaryOperands, args);
    const int dst = NewInternal(pd.dst_desc());
    args.emplace_back(DNNL_ARG_DST, dst);
    AddPrimitive(n.m_Name, dnnl::matmul(pd), pd, std::move(args));
    Bind(out, Alias(dst, PlainMd(ValueDims(out), DataTypeOf(p.m_DstType))));
}

int CompiledRegion::ElementwiseSource(int x, bool plain) {
    // A dense layout as it is (plain, nhwc, channel blocks without padding); otherwise, or when the
    // caller needs the plain one, the plain copy. (oneDNN expects zeros in a blocked layout's
    // padding; an element-wise kernel such as quantization would write other values there.)
    const int mem = MemOf(x);
    const memory::desc& md = m_Mems[static_cast<std::size_t>(mem)].m_Md;
    bool padded = false;
    for (int d = 0; d < md.data.ndims; ++d) padded = padded || md.data.padded_dims[d] != md.data.dims[d];
    if (plain || md.data.format_kind != dnnl_blocked || md.data.extra.flags != 0 || md.data.offset0 != 0 || padded) {
        return EnsurePlain(x);
    }
    return mem;
}

static memory::desc WithDataType(const memory::desc& md, memory::data_type type) {
    dnnl_memory_desc_t raw = md.data;
    raw.data_type = static_cast<dnnl_data_type_t>(type);
    return memory::desc(raw);
}

void CompiledRegion::CompileQuantize(const Node& n) {
    const bool quantize = n.m_Kind == NodeKind::Quantize;
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Value& scaleValue = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    if (scaleValue.m_SmallConstant.size() != 1) {
        throw LayerValidationException("CpuAcc: " + n.m_Name + " needs a constant scalar Float32 scale");
    }
    const float scale = scaleValue.m_SmallConstant[0];
    float zp = 0.0f;
    if (n.m_Inputs.size() > 2) {
        const std::optional<int32_t>& z = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[2])].m_IntScalar;
        if (!z) throw LayerValidationException("CpuAcc: " + n.m_Name + " needs a constant 8-bit scalar zero point");
        zp = static_cast<float>(*z);
    }
    const bool fake = quantize && n.m_Int8.has_value();  // Quantize + Dequantize, Float32 out
    const bool s8 = fake ? n.m_Int8->m_SrcType == DataType::Signed8
                         : (quantize ? m_Graph->m_Values[static_cast<std::size_t>(out)] : m_Graph->m_Values[static_cast<std::size_t>(x)])
                                   .m_Info.GetDataType() == DataType::Signed8;
    const float dqScale = fake ? n.m_Int8->m_DstScale : 1.0f;
    const int32_t dqZp = fake ? n.m_Int8->m_DstZeroPoint : 0;
    // Element-wise, so any layout will do: the output keeps the input's (an int8 convolution's
    // nhwc, a blocked nChw16c), and consumers reorder only if they need to.
    const int src = ElementwiseSource(x, false);
    const memory::desc srcMd = m_Mems[static_cast<std::size_t>(src)].m_Md;
    const memory::desc dstMd = WithDataType(srcMd, ValueType(out));
    const std::size_t count = srcMd.get_size() / memory::data_type_size(srcMd.data_type());
    const int dst = NewInternal(dstMd);
    const int32_t zeroPoint = static_cast<int32_t>(zp);
    const KernelIsa isa = BestKernelIsa();
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [count, scale, zeroPoint, quantize, s8, isa, fake, dqScale, dqZp](const std::vector<void*>& p) {
        constexpr std::size_t kBlock = 16384;
        const long long blocks = static_cast<long long>((count + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static) if (blocks > 1)
        for (long long b = 0; b < blocks; ++b) {
            const std::size_t begin = static_cast<std::size_t>(b) * kBlock, len = std::min(kBlock, count - begin);
            if (fake) {
                QuantizeDequantize(static_cast<const float*>(p[0]) + begin, static_cast<float*>(p[1]) + begin, s8, len, scale,
                                   zeroPoint, dqScale, dqZp, isa);
            } else if (quantize) {
                Quantize(static_cast<const float*>(p[0]) + begin, static_cast<uint8_t*>(p[1]) + begin, s8, len, scale, zeroPoint, isa);
            } else {
                Dequantize(static_cast<const uint8_t*>(p[0]) + begin, s8, static_cast<float*>(p[1]) + begin, len, scale, zeroPoint, isa);
            }
        }
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

void CompiledRegion::CompileDynamicQuantize(const Node& n) {
    const int x = n.m_Inputs[0];
    const int src = EnsurePlain(x);
    const int y = NewInternal(PlainMd(ValueDims(n.m_Outputs[0]), memory::data_type::u8));
    const int scale = NewInternal(PlainMd({1}));
    const int zeroPoint = NewInternal(PlainMd({1}, memory::data_type::u8));
    const std::size_t count = m_Graph->m_Values[static_cast<std::size_t>(x)].m_Info.GetNumElements();
    const KernelIsa isa = BestKernelIsa();
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, y, scale, zeroPoint};
    step.m_Kernel = [count, isa](const std::vector<void*>& p) {
        const float* in = static_cast<const float*>(p[0]);
        constexpr std::size_t kBlock = 16384;
        const long long blocks = static_cast<long long>((count + kBlock - 1) / kBlock);
        // The range over blocks (each block's own, then combined in order: the same result for any
        // thread count), then the scale and zero point exactly as CpuRef computes them.
        std::vector<float> los(static_cast<std::size_t>(blocks)), his(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static) if (blocks > 1)
        for (long long b = 0; b < blocks; ++b) {
            const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
            ZeroBasedRange(in + begin, std::min(kBlock, count - begin), los[static_cast<std::size_t>(b)],
                           his[static_cast<std::size_t>(b)], isa);
        }
        float lo = 0.0f, hi = 0.0f;
        for (std::size_t b = 0; b < los.size(); ++b) {
            lo = std::min(lo, los[b]);
            hi = std::max(hi, his[b]);
        }
        const float s = (hi - lo) / 255.0f;
        int32_t zp = 0;
        if (s != 0.0f) {
            const float v = std::nearbyint(0.0f - lo / s);
            zp = std::isnan(v) ? 0 : static_cast<int32_t>(std::clamp(v, 0.0f, 255.0f));
        }
        *static_cast<float*>(p[2]) = s;
        *static_cast<uint8_t*>(p[3]) = static_cast<uint8_t>(zp);
        uint8_t* out = static_cast<uint8_t*>(p[1]);
        if (s == 0.0f) {  // all zeros: CpuRef's y is 0 (ONNX would divide 0 by 0)
            std::memset(out, 0, count);
            return;
        }
#pragma omp parallel for schedule(static) if (blocks > 1)
        for (long long b = 0; b < blocks; ++b) {
            const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
            Quantize(in + begin, out + begin, false, std::min(kBlock, count - begin), s, zp, isa);
        }
    };
    m_Steps.push_back(std::move(step));
    Bind(n.m_Outputs[0], y);
    Bind(n.m_Outputs[1], scale);
    Bind(n.m_Outputs[2], zeroPoint);
}

void CompiledRegion::CompileQuantizedAdd(const Node& n) {
    const Int8Params& q = *n.m_Int8;
    const int a = n.m_Inputs[0], b = n.m_Inputs[1], out = n.m_Outputs[0];
    // Element-wise: the output takes a's layout (as CompileQuantize), b is brought to it.
    int srcA = MemOf(a);
    memory::desc md = m_Mems[static_cast<std::size_t>(srcA)].m_Md;
    bool padded = false;
    for (int d = 0; d < md.data.ndims; ++d) padded = padded || md.data.padded_dims[d] != md.data.dims[d];
    if (md.data.format_kind != dnnl_blocked || md.data.extra.flags != 0 || md.data.offset0 != 0 || padded) {
        srcA = EnsurePlain(a);
        md = m_Mems[static_cast<std::size_t>(srcA)].m_Md;
    }
    const int srcB = Ensure(b, md);
    const int dst = NewInternal(md);
    const std::size_t count = md.get_size();
    QuantizedAddParams p;
    p.m_ScaleA = q.m_SrcScale;
    p.m_ZpA = q.m_SrcZeroPoint;
    p.m_ScaleB = q.m_Src2Scale;
    p.m_ZpB = q.m_Src2ZeroPoint;
    p.m_Scale = q.m_DstScale;
    p.m_Zp = q.m_DstZeroPoint;
    p.m_Relu = q.m_Relu;
    const bool s8 = q.m_SrcType == DataType::Signed8;
    const KernelIsa isa = BestKernelIsa();
    p.m_Reciprocal = QuantizedAddReciprocal(s8, p, isa);
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {srcA, srcB, dst};
    step.m_Kernel = [count, p, s8, isa](const std::vector<void*>& ptr) {
        constexpr std::size_t kBlock = 16384;
        const long long blocks = static_cast<long long>((count + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static) if (blocks > 1)
        for (long long blk = 0; blk < blocks; ++blk) {
            const std::size_t begin = static_cast<std::size_t>(blk) * kBlock, len = std::min(kBlock, count - begin);
            QuantizedAdd(static_cast<const uint8_t*>(ptr[0]) + begin, static_cast<const uint8_t*>(ptr[1]) + begin,
                         static_cast<uint8_t*>(ptr[2]) + begin, s8, len, p, isa);
        }
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

void CompiledRegion::CompileElementwiseChain(const Node& n) {
    // Every step on a block of at most kBlock elements while it is in L1: whole rows where rows
    // are short, else a run of columns of one row (the vector operands offset to its columns).
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const std::vector<ChainStep> steps = n.m_Chain;
    const Dims outDims = ValueDims(out);
    const std::size_t count = m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info.GetNumElements();
    bool vectors = false;  // a constant over the last dim needs the plain layout's columns
    for (const ChainStep& s : steps) vectors = vectors || s.m_Vector;
    // Without one, every step is per element: any dense layout will do, and the chain keeps its
    // input's (an int8 convolution's nhwc) as the quantize kernels do, so no reorder surrounds it.
    const int src = ElementwiseSource(x, vectors);
    const memory::desc srcMd = m_Mems[static_cast<std::size_t>(src)].m_Md;
    const auto typed = [&](memory::data_type t) { return WithDataType(srcMd, t); };
    const std::size_t columns = !vectors ? 1 : outDims.empty() ? 1 : static_cast<std::size_t>(outDims.back());
    if (steps.empty() || columns == 0 || count % columns != 0) {
        throw LayerValidationException("CpuAcc: element-wise chain '" + n.m_Name + "' has no rows to run over");
    }
    std::vector<int> mems = {src, NewInternal(typed(ValueType(out)))};
    for (std::size_t i = 1; i < n.m_Inputs.size(); ++i) {
        const bool tensor = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[i])].m_Info.GetNumElements() == count;
        // A tensor in the chain's layout: Float32, or the 8-bit bytes a step dequantizes as it reads them.
        mems.push_back(tensor ? Ensure(n.m_Inputs[i], typed(ValueType(n.m_Inputs[i])))
                              : Alias(EnsurePlain(n.m_Inputs[i]), PlainMd({static_cast<memory::dim>(columns)})));
    }
    const KernelIsa isa = BestKernelIsa();
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = mems;
    step.m_Kernel = [steps, count, columns, isa](const std::vector<void*>& p) {
        constexpr std::size_t kBlock = 1024;
        const bool rowBlocks = columns < kBlock;
        const std::size_t rowsPerBlock = rowBlocks ? kBlock / columns : 1;
        const std::size_t chunks = rowBlocks ? 1 : (columns + kBlock - 1) / kBlock;
        const std::size_t rows = count / columns;
        const std::size_t blocks = rowBlocks ? (rows + rowsPerBlock - 1) / rowsPerBlock : rows * chunks;
        const std::size_t last = steps.size() - 1;
#pragma omp parallel if (blocks > 1)
        {
            std::vector<float> values((steps.size() + 1) * kBlock);  // each step's block, then a dequantized operand's
#pragma omp for schedule(static)
            for (long long b = 0; b < static_cast<long long>(blocks); ++b) {
                std::size_t at = 0, len = 0, wAt = 0, period = 0;
                if (rowBlocks) {
                    const std::size_t row = static_cast<std::size_t>(b) * rowsPerBlock;
                    at = row * columns, len = std::min(rowsPerBlock, rows - row) * columns, period = columns;
                } else {
                    const std::size_t row = static_cast<std::size_t>(b) / chunks, chunk = static_cast<std::size_t>(b) % chunks;
                    wAt = chunk * kBlock, at = row * columns + wAt, len = std::min(kBlock, columns - wAt), period = len;
                }
                const float* in = static_cast<const float*>(p[0]) + at;  // a Float32 chain input
                const float* prev = in;
                for (std::size_t k = 0; k <= last; ++k) {
                    const ChainStep& s = steps[k];
                    float* to = k == last ? static_cast<float*>(p[1]) + at : values.data() + k * kBlock;
                    switch (s.m_Op) {
                        case ChainStep::Op::Dequantize:
                            Dequantize(static_cast<const uint8_t*>(p[0]) + at, s.m_Signed, to, len, s.m_Scale, s.m_Zp, isa);
                            break;
                        case ChainStep::Op::FakeQuant:
                            QuantizeDequantize(prev, to, s.m_Signed, len, s.m_Scale, s.m_Zp, s.m_Scale2, s.m_Zp2, isa);
                            break;
                        case ChainStep::Op::Quantize:
                            Quantize(prev, static_cast<uint8_t*>(p[1]) + at, s.m_Signed, len, s.m_Scale, s.m_Zp, isa);
                            break;
                        case ChainStep::Op::Erf: Erf(prev, to, len, isa); break;
                        case ChainStep::Op::Linear: ChainLinear(prev, s.m_Scale, s.m_Scale2, to, len, isa); break;
                        case ChainStep::Op::Relu: ChainRelu(prev, to, len, isa); break;
                        case ChainStep::Op::Binary: {
                            const float* w = s.m_Operand < 0 ? in : values.data() + static_cast<std::size_t>(s.m_Operand) * kBlock;
                            if (s.m_OperandBytes) {  // the node's input m_Operand, 8-bit: dequantized here
                                float* operand = values.data() + steps.size() * kBlock;
                                Dequantize(static_cast<const uint8_t*>(p[static_cast<std::size_t>(s.m_Operand) + 1]) + at, s.m_OperandSigned,
                                           operand, len, s.m_OperandScale, s.m_OperandZp, isa);
                                w = operand;
                            } else if (s.m_Vector || s.m_Tensor) {  // the node's input m_Operand
                                w = static_cast<const float*>(p[static_cast<std::size_t>(s.m_Operand) + 1]) + (s.m_Vector ? wAt : at);
                            }
                            ChainBinary(s.m_Binary, prev, w, s.m_Vector ? period : 0, s.m_Reversed, to, len, isa);
                            break;
                        }
                    }
                    prev = to;
                }
            }
        }
    };
    m_Steps.push_back(std::move(step));
    Bind(out, mems[1]);
}

}  // namespace trellis::cpuacc
