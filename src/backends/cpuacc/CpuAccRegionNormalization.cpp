// CpuAcc: softmax, normalizations and reductions in a compiled region. Softmax and
// LayerNormalization run oneDNN's primitives on plain data (layer normalization flattened to
// rows); a BatchNormalization that could not be folded into a convolution runs oneDNN's inference
// batch normalization on the input's layout; Reduce Mean/Sum/Max/Min runs oneDNN's reduction; RMS
// normalization (the fused LLaMA/T5 pattern or ONNX RMSNormalization) runs CpuAcc's own kernel.
#include "CpuAccRegionInternal.hpp"
#include <limits>
#include <cmath>

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

void CompiledRegion::CompileSoftmax(const Node& n) {
    const auto& d = std::get<SoftmaxDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims dims = ValueDims(x);
    const int rank = static_cast<int>(dims.size());
    const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
    const int src = EnsurePlain(x);
    const memory::desc md = PlainMd(dims);
    const int dst = NewInternal(md);
    dnnl::softmax_v2_forward::desc sd(dnnl::prop_kind::forward_inference,
                                      d.m_Log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, md, md,
                                      axis);
    dnnl::softmax_v2_forward::primitive_desc pd(sd, Attr(false), Engine());
    AddPrimitive(n.m_Name, dnnl::softmax_v2_forward(pd), pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    Bind(out, dst);
}

void CompiledRegion::CompileLayerNorm(const Node& n) {
    const auto& d = std::get<LayerNormalizationDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const int gamma = n.m_Inputs.size() > 1 ? n.m_Inputs[1] : -1;
    const int beta = n.m_Inputs.size() > 2 ? n.m_Inputs[2] : -1;
    const Dims dims = ValueDims(x);
    const int rank = static_cast<int>(dims.size());
    const std::size_t axis = static_cast<std::size_t>(d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis);
    const memory::dim outer = Product(dims, 0, axis), inner = Product(dims, axis, dims.size());
    const memory::desc md2 = PlainMd({outer, inner});
    unsigned flags = 0;
    if (gamma >= 0) flags |= static_cast<unsigned>(dnnl::normalization_flags::use_scale);
    if (beta >= 0) flags |= static_cast<unsigned>(dnnl::normalization_flags::use_shift);
    dnnl::layer_normalization_forward::desc ld(dnnl::prop_kind::forward_inference, md2, d.m_Eps,
                                               static_cast<dnnl::normalization_flags>(flags));
    dnnl::layer_normalization_forward::primitive_desc pd(ld, Attr(false), Engine());
    const int dst = NewInternal(md2);
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, Alias(EnsurePlain(x), md2)}, {DNNL_ARG_DST, dst}};
    if (gamma >= 0) args.emplace_back(DNNL_ARG_SCALE, Alias(EnsurePlain(gamma), PlainMd({inner})));
    if (beta >= 0) args.emplace_back(DNNL_ARG_SHIFT, Alias(EnsurePlain(beta), PlainMd({inner})));
    AddPrimitive(n.m_Name, dnnl::layer_normalization_forward(pd), pd, std::move(args));
    Bind(out, Alias(dst, PlainMd(ValueDims(out))));
}

void CompiledRegion::CompileReduce(const Node& n) {
    const auto& d = std::get<ReduceDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims in = ValueDims(x);
    const int rank = static_cast<int>(in.size());
    Dims reduced = in;
    if (d.m_Axes.empty()) {
        if (!d.m_NoopWithEmptyAxes) std::fill(reduced.begin(), reduced.end(), 1);
    } else {
        for (int64_t a : d.m_Axes) reduced[static_cast<std::size_t>(a < 0 ? a + rank : a)] = 1;
    }
    if (reduced == in) {  // nothing to reduce: a view
        Bind(out, Alias(EnsurePlain(x), PlainMd(ValueDims(out))));
        return;
    }
    if (CompileBlockedReduce(n, reduced)) return;
    const int src = EnsurePlain(x);
    const memory::desc dstMd = PlainMd(reduced);
    // The own kernel: for the Lp norms and the sum of squares always (oneDNN 2.6 has only its
    // reference kernel for them), for a sum or mean where oneDNN's is the reference one (a dim
    // that is not the innermost).
    std::optional<AxisReduction> own;
    dnnl::algorithm alg = dnnl::algorithm::reduction_mean;
    switch (d.m_Operation) {
        case ReduceOperation::Mean: alg = dnnl::algorithm::reduction_mean; break;
        case ReduceOperation::Sum: alg = dnnl::algorithm::reduction_sum; break;
        case ReduceOperation::Max: alg = dnnl::algorithm::reduction_max; break;
        case ReduceOperation::Min: alg = dnnl::algorithm::reduction_min; break;
        case ReduceOperation::L1: own = AxisReduction::L1; break;
        case ReduceOperation::L2: own = AxisReduction::L2; break;
        case ReduceOperation::SumSquare: own = AxisReduction::SumSquare; break;
        default: throw LayerValidationException("CpuAcc: '" + n.m_Name + "': unsupported reduction");
    }
    const auto make = [&] {
        return dnnl::reduction::primitive_desc(dnnl::reduction::desc(alg, PlainMd(in), dstMd, 0.0f, 0.0f), Attr(false), Engine());
    };
    dnnl::reduction::primitive_desc pd;
    const bool jit = !own && MadeWithoutReference(pd, make);
    if (!own && !jit) {
        if (alg == dnnl::algorithm::reduction_sum) own = AxisReduction::Sum;
        if (alg == dnnl::algorithm::reduction_mean) own = AxisReduction::Mean;
    }
    std::size_t outer = 0, r = 0, inner = 0;
    std::vector<std::size_t> dims(in.begin(), in.end());
    std::vector<bool> axes(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) axes[i] = reduced[i] != in[i];
    if (own && ValueType(x) == memory::data_type::f32 && AxisRunOf(dims, axes, outer, r, inner)) {
        const int dst = NewInternal(dstMd);
        Step step;
        step.m_Name = n.m_Name;
        step.m_Category = "own kernel";
        step.m_KernelMems = {src, dst};
        const KernelIsa isa = BestKernelIsa();
        const AxisReduction op = *own;
        step.m_Kernel = [outer, r, inner, op, isa](const std::vector<void*>& p) {
            ReduceAxis(static_cast<const float*>(p[0]), static_cast<float*>(p[1]), outer, r, inner, op, isa);
        };
        m_Steps.push_back(std::move(step));
        Bind(out, Alias(dst, PlainMd(ValueDims(out))));
        return;
    }
    if (d.m_Operation == ReduceOperation::L1 || d.m_Operation == ReduceOperation::L2 ||
        d.m_Operation == ReduceOperation::SumSquare) {
        // The layer support admitted the norms only as one run of adjacent Float32 dims.
        throw LayerValidationException("CpuAcc: '" + n.m_Name + "': the reduction is not over one run of adjacent dims");
    }
    // A max or min oneDNN has only its reference kernel for, or a sum or mean over dims that are not
    // adjacent: oneDNN's reference kernel (the profile names it).
    if (!jit) pd = make();
    const int dst = NewInternal(dstMd);
    AddPrimitive(n.m_Name, dnnl::reduction(pd), pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    if (alg == dnnl::algorithm::reduction_max || alg == dnnl::algorithm::reduction_min) {
        AddReduceInfinityFix(n.m_Name, src, dst, in, reduced, alg == dnnl::algorithm::reduction_max);
    }
    Bind(out, Alias(dst, PlainMd(ValueDims(out))));
}

bool CompiledRegion::CompileBlockedReduce(const Node& n, const Dims& reduced) {
    // A mean over all dims after the channels of an image (4-D or 5-D: a global average pool
    // written as ReduceMean over [2, 3], as MnasNet and ShuffleNet are exported, mostly reading a
    // convolution's channel blocks) is an average pooling whose window is the whole image, on
    // channel blocks. oneDNN 2.6 has only a reference reduction for blocked layouts, and its
    // reduction of the plain copy over the innermost dims ran 0.37 ms for MnasNet's 1280 x 7 x 7
    // on an AVX-512 Xeon (the pooling: 3 us; ONNX Runtime 15 us).
    const auto& d = std::get<ReduceDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims in = ValueDims(x);
    if (d.m_Operation != ReduceOperation::Mean || in.size() < 4 || in.size() > 5 || reduced[0] != in[0] ||
        reduced[1] != in[1] || ValueType(x) != memory::data_type::f32) {
        return false;
    }
    for (std::size_t i = 2; i < in.size(); ++i) {
        if (reduced[i] != 1) return false;
    }
    // The input's channel blocks; a plain input is reordered to them first (a jit reorder and the
    // pooling: 19 us against the reduction's 370).
    const std::optional<memory::format_tag> tag = BlockedTag(in.size());
    if (!tag) return false;
    const memory::desc md(in, memory::data_type::f32, *tag);
    const Dims window(in.begin() + 2, in.end()), ones(in.size() - 2, 1), zeros(in.size() - 2, 0);
    dnnl::pooling_forward::primitive_desc pd;
    if (!MadeWithoutReference(pd, [&] {
            return dnnl::pooling_forward::primitive_desc(
                dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_avg_include_padding,
                                            md, AnyMd(reduced), ones, window, zeros, zeros),
                Attr(false), Engine());
        })) {
        return false;
    }
    const int src = Ensure(x, md);  // only once the pooling exists: no reorder for a path not taken
    const int dst = NewInternal(pd.dst_desc());
    AddPrimitive(n.m_Name, dnnl::pooling_forward(pd), pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    if (ValueDims(out) == reduced) {
        Bind(out, dst);  // kept dims: the result in the pooling's layout, which a reader reorders as it needs
        return true;
    }
    const int plain = NewInternal(PlainMd(reduced));
    AddReorder(dst, plain, n.m_Name);
    Bind(out, Alias(plain, PlainMd(ValueDims(out))));
    return true;
}

void CompiledRegion::AddReduceInfinityFix(const std::string& name, int src, int dst, const Dims& in, const Dims& reduced,
                                          bool max) {
    // oneDNN 2.6 starts a max reduction at -FLT_MAX (a min at +FLT_MAX), so a slice of -inf
    // (+inf) values, as a fully masked attention row has, reduces to -FLT_MAX instead of -inf
    // (found by ONNX 1.23's fully-masked-row Attention cases). Each result equal to that start
    // value is computed again from its slice, exactly; any other result is right as it is.
    const std::size_t rank = in.size();
    std::vector<std::size_t> stride(rank, 1);
    for (std::size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * static_cast<std::size_t>(in[i]);
    std::vector<std::size_t> axes;  // the reduced dims
    for (std::size_t i = 0; i < rank; ++i) {
        if (reduced[i] != in[i]) axes.push_back(i);
    }
    const std::size_t outputs = static_cast<std::size_t>(Product(reduced, 0, rank));
    Step step;
    step.m_Name = name + " (infinite slices)";
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [in, reduced, stride, axes, outputs, max](const std::vector<void*>& ptr) {
        const auto* x = static_cast<const float*>(ptr[0]);
        auto* y = static_cast<float*>(ptr[1]);
        const float start = max ? -std::numeric_limits<float>::max() : std::numeric_limits<float>::max();
        for (std::size_t o = 0; o < outputs; ++o) {
            if (y[o] != start) continue;
            const std::size_t base = StridedOffset(o, reduced, stride, in.size());
            float best = max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
            std::vector<std::size_t> at(axes.size(), 0);
            for (;;) {
                std::size_t offset = base;
                for (std::size_t k = 0; k < axes.size(); ++k) offset += at[k] * stride[axes[k]];
                const float v = x[offset];
                if (std::isnan(v)) {
                    best = v;
                    break;
                }
                best = max ? std::max(best, v) : std::min(best, v);
                std::size_t k = axes.size();
                while (k > 0 && ++at[k - 1] == static_cast<std::size_t>(in[axes[k - 1]])) at[--k] = 0;
                if (k == 0) break;
            }
            y[o] = best;
        }
    };
    m_Steps.push_back(std::move(step));
}

void CompiledRegion::CompileBatchNorm(const Node& n) {
    // A BatchNormalization the graph passes could not fold into a convolution (after a Concat, a
    // pooling, at a network input): oneDNN's inference batch normalization on the input's layout,
    // with a Relu after it fused (FuseBatchNormRelu) through oneDNN's fuse_norm_relu flag.
    const auto& d = std::get<BatchNormalizationDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const bool relu = !n.m_PostOps.empty();
    const auto flagsWith = [](bool withRelu) {
        unsigned f = static_cast<unsigned>(dnnl::normalization_flags::use_global_stats) |
                     static_cast<unsigned>(dnnl::normalization_flags::use_scale) |
                     static_cast<unsigned>(dnnl::normalization_flags::use_shift);
        if (withRelu) f |= static_cast<unsigned>(dnnl::normalization_flags::fuse_norm_relu);
        return static_cast<dnnl::normalization_flags>(f);
    };
    auto make = [&](const memory::desc& md, bool withRelu) {
        return dnnl::batch_normalization_forward::primitive_desc(
            dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, d.m_Eps, flagsWith(withRelu)),
            Attr(false), Engine());
    };
    // The fused form on the input's layout, then on the plain layout; where oneDNN has only its
    // reference kernel for the fused form, the normalization and a Relu pass of its own.
    int src = MemOf(x);
    dnnl::batch_normalization_forward::primitive_desc pd;
    bool fused = relu, made = MadeWithoutReference(pd, [&] { return make(m_Mems[static_cast<std::size_t>(src)].m_Md, relu); });
    if (!made && relu) {
        // Probed on the plain descriptor; the reorder to it is added only when it is taken.
        made = MadeWithoutReference(pd, [&] { return make(PlainMd(ValueDims(x)), true); });
        if (made) src = EnsurePlain(x);
    }
    if (!made && relu) {
        fused = false;
        made = MadeWithoutReference(pd, [&] { return make(m_Mems[static_cast<std::size_t>(src)].m_Md, false); });
    }
    if (!made) {
        src = EnsurePlain(x);
        pd = make(m_Mems[static_cast<std::size_t>(src)].m_Md, fused);
    }
    const Dims c{ValueDims(x)[1]};
    const auto param = [&](std::size_t i) { return Alias(EnsurePlain(n.m_Inputs[i]), PlainMd(c)); };
    const int dst = NewInternal(pd.dst_desc());
    AddPrimitive(n.m_Name, dnnl::batch_normalization_forward(pd), pd,
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_SCALE, param(1)}, {DNNL_ARG_SHIFT, param(2)}, {DNNL_ARG_MEAN, param(3)},
                  {DNNL_ARG_VARIANCE, param(4)}, {DNNL_ARG_DST, dst}});
    if (relu && !fused) {
        const dnnl::eltwise_forward::primitive_desc epd(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_relu, pd.dst_desc(), 0.0f, 0.0f),
            Attr(false), Engine());
        AddPrimitive(n.m_PostOps.front().m_Name, dnnl::eltwise_forward(epd), epd, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}});
    }
    Bind(out, dst);
}

void CompiledRegion::CompileRmsNorm(const Node& n) {
    // A fused Pow/ReduceMean/... pattern (LayerNormalizationDescriptor) or an ONNX RMSNormalization
    // layer, whose scale the layer support admitted only as one value per normalized element.
    int axisAttr = 0;
    float eps = 0.0f;
    if (n.m_LayerType == LayerType::RmsNormalization) {
        const auto& r = std::get<RmsNormalizationDescriptor>(n.m_Descriptor);
        axisAttr = r.m_Axis, eps = r.m_Eps;
    } else {
        const auto& l = std::get<LayerNormalizationDescriptor>(n.m_Descriptor);
        axisAttr = l.m_Axis, eps = l.m_Eps;
    }
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims dims = ValueDims(x);
    const std::size_t axis = static_cast<std::size_t>(axisAttr < 0 ? axisAttr + static_cast<int>(dims.size()) : axisAttr);
    const auto rows = static_cast<std::size_t>(Product(dims, 0, axis)), inner = static_cast<std::size_t>(Product(dims, axis, dims.size()));
    const int src = EnsurePlain(x);
    const int dst = NewInternal(PlainMd(ValueDims(out)));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, dst};
    if (n.m_Inputs.size() > 1) step.m_KernelMems.push_back(Alias(EnsurePlain(n.m_Inputs[1]), PlainMd({static_cast<memory::dim>(inner)})));
    const KernelIsa isa = BestKernelIsa();
    step.m_Kernel = [rows, inner, eps, isa](const std::vector<void*>& p) {
        RmsNorm(static_cast<const float*>(p[0]), p.size() > 2 ? static_cast<const float*>(p[2]) : nullptr,
                static_cast<float*>(p[1]), rows, inner, eps, isa);
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

}  // namespace trellis::cpuacc
