// CpuAcc: ops that copy, rearrange or resample data in a compiled region. Concat (memcpys of plain
// or strided-view inputs; oneDNN's concat on the inputs' layouts; or already in place when its convolutions wrote
// into it), Transpose (a strided view,
// not a copy), Split and Slice (reorders from sub-memory views, an own copy where a Slice has
// steps; the views themselves where only
// attention kernels read them), constant Pad (a fill, then the
// input copied into its sub-block), Resize (oneDNN's resampling) and Expand (a copy from a
// stride-0 view). Reshape is a view too; it is bound directly in CompileNode.
#include "CpuAccRegionInternal.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

void CompiledRegion::CompileConcat(int index, const Node& n) {
    const auto& d = std::get<ConcatDescriptor>(n.m_Descriptor);
    const int out = n.m_Outputs[0];
    if (m_ConcatFamily.count(index)) {
        CompileFamilyConcat(index, n);
        return;
    }
    if (auto t = m_ConcatTargets.find(index); t != m_ConcatTargets.end() && t->second.m_Written == n.m_Inputs.size()) {
        Bind(out, AddMem(t->second.m_Storage, t->second.m_Md));  // every part is already in place
        return;
    }
    const Dims outDims = ValueDims(out);
    const int rank = static_cast<int>(outDims.size());
    const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
    // Float32 inputs that are plain or strided views (Split's and Slice's outputs) whose dims from
    // the axis on are contiguous: each is one run per index of the dims before the axis, so the
    // concatenation is memcpys. oneDNN 2.6's concat of such tensors ("simple:any") is far slower:
    // ShuffleNet's 2 x 58 x 28 x 28 took 0.27 ms (1.3 GB/s) on an AVX2 EPYC, a quarter of the
    // network's time in its 15 Concats.
    struct Run {
        std::size_t m_Floats = 0, m_Offset = 0;
        Dims m_OuterStrides;
    };
    const Dims outerDims(outDims.begin(), outDims.begin() + axis);
    // The memcpy concatenation over the inputs' memories as they are (`makePlain`: the inputs
    // that are not such views are made plain first); false, with nothing added, if it does not apply.
    const auto copies = [&](bool makePlain) {
        if (ValueType(out) != memory::data_type::f32) return false;
        std::vector<Run> runs;
        std::vector<int> mems;
        for (int v : n.m_Inputs) {
            const Dims in = ValueDims(v);
            const auto runOf = [&](int mem) -> std::optional<Run> {
                const memory::desc& md = m_Mems[static_cast<std::size_t>(mem)].m_Md;
                const std::optional<Dims> strides = ViewStrides(md);
                if (!strides) return std::nullopt;
                memory::dim expect = 1;
                for (std::size_t i = in.size(); i-- > static_cast<std::size_t>(axis);) {
                    if (in[i] != 1 && (*strides)[i] != expect) return std::nullopt;
                    expect *= in[i];
                }
                return Run{static_cast<std::size_t>(expect), static_cast<std::size_t>(md.data.offset0),
                           Dims(strides->begin(), strides->begin() + axis)};
            };
            int mem = MemOf(v);
            std::optional<Run> run = runOf(mem);
            if (!run && makePlain) run = runOf(mem = EnsurePlain(v));
            if (!run) return false;
            runs.push_back(*run);
            mems.push_back(mem);
        }
        const std::size_t outer = static_cast<std::size_t>(Product(outDims, 0, static_cast<std::size_t>(axis)));
        Step step;
        step.m_Name = n.m_Name;
        step.m_Category = "own kernel";
        step.m_KernelMems = mems;
        const int dst = NewInternal(PlainMd(outDims));
        step.m_KernelMems.push_back(dst);
        step.m_Kernel = [outer, runs, outerDims](const std::vector<void*>& p) {
            std::size_t row = 0;
            for (const Run& r : runs) row += r.m_Floats;
            float* to = static_cast<float*>(p.back());
            const long long count = static_cast<long long>(outer * runs.size());
#pragma omp parallel for schedule(static) if (count > 1 && outer * row > (1u << 18))
            for (long long i = 0; i < count; ++i) {
                const std::size_t o = static_cast<std::size_t>(i) / runs.size(), in = static_cast<std::size_t>(i) % runs.size();
                const Run& r = runs[in];
                std::size_t at = o * row;
                for (std::size_t j = 0; j < in; ++j) at += runs[j].m_Floats;
                const std::size_t from = r.m_Offset + StridedOffset(o, outerDims, r.m_OuterStrides, outerDims.size());
                std::memcpy(to + at, static_cast<const float*>(p[in]) + from, r.m_Floats * sizeof(float));
            }
        };
        m_Steps.push_back(std::move(step));
        Bind(out, dst);
        return true;
    };
    if (copies(false)) return;
    auto build = [&](bool plain) {
        std::vector<memory::desc> mds;
        std::vector<int> mems;
        for (int v : n.m_Inputs) {
            mems.push_back(plain ? EnsurePlain(v) : MemOf(v));
            mds.push_back(m_Mems[static_cast<std::size_t>(mems.back())].m_Md);
        }
        dnnl::concat::primitive_desc pd(plain ? PlainMd(outDims) : AnyMd(outDims, mds.front().data_type()), axis, mds,
                                        Engine(), Attr(false));
        // Mixed or partly filled blocked inputs get oneDNN's reference concat: plain instead.
        if (!plain && IsReferenceImplementation(pd)) throw dnnl::error(dnnl_unimplemented, "reference concat only");
        const int dst = NewInternal(pd.dst_desc());
        std::vector<std::pair<int, int>> args;
        for (std::size_t i = 0; i < mems.size(); ++i) args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), mems[i]);
        args.emplace_back(DNNL_ARG_DST, dst);
        AddPrimitive(n.m_Name, dnnl::concat(pd), pd, std::move(args));
        Bind(out, dst);
    };
    // The inputs' layouts as they are (blocked stays blocked); plain if oneDNN cannot concatenate
    // them with a kernel other than its reference one (copies, then).
    try {
        build(false);
    } catch (const dnnl::error&) {
        if (!copies(true)) build(true);
    }
}

void CompiledRegion::CompileTranspose(const Node& n) {
    const auto& d = std::get<TransposeDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims in = ValueDims(x), outDims = ValueDims(out);
    const std::size_t rank = in.size();
    std::vector<unsigned int> perm = d.m_Perm;
    if (perm.empty()) {
        for (std::size_t i = 0; i < rank; ++i) perm.push_back(static_cast<unsigned int>(rank - 1 - i));
    }
    // A permutation that moves only size-1 dims (e.g. [1,128,768] -> [128,1,768]) keeps the
    // order of the data: the output is the input, re-labelled.
    std::vector<unsigned int> moved;
    for (unsigned int p : perm) {
        if (in[p] != 1) moved.push_back(p);
    }
    if (std::is_sorted(moved.begin(), moved.end())) {
        Bind(out, Alias(EnsurePlain(x), PlainMd(outDims)));
        return;
    }
    // Otherwise the output is a view of the input with permuted strides, not a copy: a batched
    // matmul reads it as it is (attention's head split and K^T), and any consumer that needs plain
    // data gets the copy where it reads it (Ensure/EnsurePlain).
    // An input that is itself a strided view (Y of the attention kernel written heads-interleaved,
    // a view of a view) is permuted again rather than copied first: the result may be plain.
    int src = MemOf(x);
    std::optional<Dims> inStrides = ViewStrides(m_Mems[static_cast<std::size_t>(src)].m_Md);
    if (!inStrides) {
        src = EnsurePlain(x);
        inStrides = StridesOf(in);
    }
    Dims permStrides(rank);
    for (std::size_t i = 0; i < rank; ++i) permStrides[i] = (*inStrides)[perm[i]];
    memory::desc view(outDims, memory::data_type::f32, permStrides);
    view.data.offset0 = m_Mems[static_cast<std::size_t>(src)].m_Md.data.offset0;
    Bind(out, Alias(src, view));
}

void CompiledRegion::CompileSplitSlice(const Node& n) {
    const int x = n.m_Inputs[0];
    const Dims in = ValueDims(x);
    const int rank = static_cast<int>(in.size());
    const int src = EnsurePlain(x);
    const memory::desc srcMd = m_Mems[static_cast<std::size_t>(src)].m_Md;
    std::vector<Dims> offsets;
    Dims steps(in.size(), 1);  // Slice's steps (positive; CpuAccLayerSupport declines the others)
    if (n.m_Kind == NodeKind::Split) {
        const auto& d = std::get<SplitDescriptor>(n.m_Descriptor);
        const std::size_t axis = static_cast<std::size_t>(d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis);
        memory::dim at = 0;
        for (int o : n.m_Outputs) {
            Dims off(in.size(), 0);
            off[axis] = at;
            at += ValueDims(o)[axis];
            offsets.push_back(off);
        }
    } else {
        const auto& d = std::get<SliceDescriptor>(n.m_Descriptor);
        Dims off(in.size(), 0);
        for (std::size_t i = 0; i < d.m_Starts.size(); ++i) {
            const int64_t a = d.m_Axes.empty() ? static_cast<int64_t>(i) : d.m_Axes[i];
            const std::size_t axis = static_cast<std::size_t>(a < 0 ? a + rank : a);
            int64_t s = d.m_Starts[i];
            if (s < 0) s += in[axis];
            off[axis] = std::clamp<int64_t>(s, 0, in[axis]);
            if (i < d.m_Steps.size()) steps[axis] = d.m_Steps[i];
        }
        offsets.push_back(off);
    }
    const bool stepped = std::any_of(steps.begin(), steps.end(), [](memory::dim s) { return s != 1; });
    for (std::size_t k = 0; k < n.m_Outputs.size(); ++k) {
        const int out = n.m_Outputs[k];
        const Dims od = ValueDims(out);
        if (stepped) {
            CompileSteppedSlice(n.m_Name, src, in, offsets[k], steps, out);
            continue;
        }
        const int view = Alias(src, srcMd.submemory_desc(od, offsets[k]));
        // Read only by attention kernels (a head split's Q, K or V): the view itself, no copy.
        if (srcMd.data_type() == memory::data_type::f32 && ReadOnlyByAttention(out)) {
            Bind(out, view);
            continue;
        }
        const int dst = NewInternal(PlainMd(od));
        AddReorder(view, dst, n.m_Name);
        Bind(out, dst);
    }
}

void CompiledRegion::CompileSteppedSlice(const std::string& name, int src, const Dims& in, const Dims& starts,
                                         const Dims& steps, int out) {
    // Every step-th element from the start (Swin's patch merging, x[:, 0::2, 1::2, :]) copied
    // from the plain input, one run per index of the outer dims: a memcpy where the last axis has
    // step 1 (Swin's channels), element by element otherwise. (oneDNN's memory descriptors cannot
    // describe such a view where the strides interleave, e.g. every 5th of 6 elements.)
    const Dims od = ValueDims(out);
    const std::size_t rank = od.size();
    const Dims plain = StridesOf(in);
    std::vector<std::size_t> stride(rank), dims(od.begin(), od.end());
    std::size_t base = static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(src)].m_Md.data.offset0);
    for (std::size_t i = 0; i < rank; ++i) {
        stride[i] = static_cast<std::size_t>(plain[i] * steps[i]);
        base += static_cast<std::size_t>(starts[i] * plain[i]);
    }
    const std::size_t bytes = memory::data_type_size(ValueType(out));
    const int dst = NewInternal(PlainMd(od, ValueType(out)));
    Step step;
    step.m_Name = name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [dims, stride, base, bytes](const std::vector<void*>& p) {
        const std::size_t rank = dims.size(), inner = dims.back();
        std::size_t outer = 1;
        for (std::size_t i = 0; i + 1 < rank; ++i) outer *= dims[i];
        const auto* from = static_cast<const unsigned char*>(p[0]);
        auto* to = static_cast<unsigned char*>(p[1]);
        const bool contiguous = stride.back() == 1;
#pragma omp parallel for schedule(static) if (outer * inner > (1u << 16))
        for (long long o = 0; o < static_cast<long long>(outer); ++o) {
            const std::size_t at = base + StridedOffset(static_cast<std::size_t>(o), dims, stride, rank - 1);  // the outer dims
            unsigned char* row = to + static_cast<std::size_t>(o) * inner * bytes;
            if (contiguous) {
                std::memcpy(row, from + at * bytes, inner * bytes);
            } else {
                for (std::size_t j = 0; j < inner; ++j) std::memcpy(row + j * bytes, from + (at + j * stride.back()) * bytes, bytes);
            }
        }
    };
    m_Steps.push_back(std::move(step));
    Bind(out, dst);
}

void CompiledRegion::CompilePad(const Node& n) {
    // Constant padding: the output is filled with the value, then the input is copied (a jit
    // reorder) into the sub-block of the output it occupies.
    const auto& d = std::get<PadDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims in = ValueDims(x), outDims = ValueDims(out);
    const int dst = NewInternal(PlainMd(outDims));
    Step fill;
    fill.m_Name = n.m_Name + " (fill)";
    fill.m_Category = "own kernel";
    fill.m_KernelMems = {dst};
    const std::size_t count = m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info.GetNumElements();
    fill.m_Kernel = [count, value = d.m_Value](const std::vector<void*>& p) {
        float* o = static_cast<float*>(p[0]);
        std::fill(o, o + count, value);
    };
    m_Steps.push_back(std::move(fill));
    Dims offsets(in.size(), 0);
    for (std::size_t i = 0; i < in.size() && i < d.m_Pads.size(); ++i) offsets[i] = d.m_Pads[i];
    const int into = Alias(dst, PlainMd(outDims).submemory_desc(in, offsets));
    AddReorder(EnsurePlain(x), into, n.m_Name);
    Bind(out, dst);
}

void CompiledRegion::CompileResize(const Node& n) {
    // oneDNN's resampling from the input's layout; CpuAccLayerSupport admitted only the modes
    // where it computes what ONNX defines (nearest with integer upscaling, linear half_pixel).
    const auto& d = std::get<ResizeDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const dnnl::algorithm alg =
        d.m_Mode == ResizeMode::Nearest ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear;
    auto make = [&](const memory::desc& md) {
        return dnnl::resampling_forward::primitive_desc(
            dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, alg, md, AnyMd(ValueDims(out))), Attr(false),
            Engine());
    };
    int src = MemOf(x);
    dnnl::resampling_forward::primitive_desc pd;
    const bool made = MadeWithoutReference(pd, [&] { return make(m_Mems[static_cast<std::size_t>(src)].m_Md); });
    if (!made) {
        src = EnsurePlain(x);
        pd = make(m_Mems[static_cast<std::size_t>(src)].m_Md);
    }
    const int dst = NewInternal(pd.dst_desc());
    AddPrimitive(n.m_Name, dnnl::resampling_forward(pd), pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    Bind(out, dst);
}

void CompiledRegion::CompileExpand(const Node& n) {
    // A copy from a view of the input with stride 0 along the broadcast dims. (Not left as a view,
    // as transposes are: several elements of a stride-0 view share one byte, so no consumer may
    // write through it or allocate its layout.)
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    const Dims in = Prepend1s(ValueDims(x), outDims.size());
    const Dims inStrides = StridesOf(in);
    Dims strides(outDims.size());
    for (std::size_t i = 0; i < outDims.size(); ++i) strides[i] = in[i] == outDims[i] ? inStrides[i] : 0;
    const int dst = NewInternal(PlainMd(outDims));
    AddReorder(Alias(EnsurePlain(x), memory::desc(outDims, memory::data_type::f32, strides)), dst, n.m_Name);
    Bind(out, dst);
}

}  // namespace trellis::cpuacc
