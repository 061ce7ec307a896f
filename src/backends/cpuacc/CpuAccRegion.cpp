// CpuAcc: compiling a region graph into oneDNN primitives (see CpuAccRegion.hpp). This file holds
// the oneDNN helpers every part of the compiler uses (trellis::cpuacc::detail, declared in
// CpuAccRegionInternal.hpp), the region's bookkeeping - storages, memory objects bound to values,
// layout conversions (Ensure), reorders, steps, packing constant weights into owned memory - the
// per-node dispatch (CompileNode) to the CpuAccRegion*.cpp file of each op family, the region's
// outputs, the lifetime-based plan of the scratch memory, and the constructor that runs it all.
#include "CpuAccRegionInternal.hpp"

#include <trellis/Exceptions.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace trellis::cpuacc {

namespace detail {

dnnl::engine& Engine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

Dims DimsOf(const TensorShape& s) {
    if (s.GetNumDimensions() == 0) return Dims{1};
    Dims d;
    for (unsigned int x : s.GetDims()) d.push_back(static_cast<memory::dim>(x));
    return d;
}

const char* PrimitiveKindName(dnnl::primitive::kind kind) {
    using K = dnnl::primitive::kind;
    switch (kind) {
        case K::reorder: return "reorder";
        case K::concat: return "concat";
        case K::sum: return "sum";
        case K::convolution: return "convolution";
        case K::deconvolution: return "deconvolution";
        case K::eltwise: return "eltwise";
        case K::softmax:
        case K::softmax_v2: return "softmax";
        case K::pooling:
        case K::pooling_v2: return "pooling";
        case K::layer_normalization: return "layer_normalization";
        case K::batch_normalization: return "batch_normalization";
        case K::inner_product: return "inner_product";
        case K::rnn: return "rnn";
        case K::binary: return "binary";
        case K::matmul: return "matmul";
        case K::resampling: return "resampling";
        case K::reduction: return "reduction";
        default: return "other";
    }
}

Dims StridesOf(const Dims& dims) {
    Dims strides(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<memory::dim>(dims[i], 1);
    return strides;
}

std::optional<Dims> ViewStrides(const memory::desc& md) {
    if (md.data.format_kind != dnnl_blocked || md.data.format_desc.blocking.inner_nblks != 0 || md.data.extra.flags != 0 ||
        md.data_type() != memory::data_type::f32) {
        return std::nullopt;
    }
    const int rank = md.data.ndims;
    return Dims(md.data.format_desc.blocking.strides, md.data.format_desc.blocking.strides + rank);
}

std::optional<Dims> ReshapedStrides(const Dims& in, const Dims& inStrides, const Dims& out) {
    // numpy's no-copy reshape: size-1 input dims dropped, then the input and output dims matched in
    // groups of equal products; each input group must be one contiguous run of its strides.
    Dims oldDims, oldStrides;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] == 0) return std::nullopt;
        if (in[i] != 1) {
            oldDims.push_back(in[i]);
            oldStrides.push_back(inStrides[i]);
        }
    }
    Dims strides(out.size(), 1);
    std::size_t oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < out.size() && oi < oldDims.size()) {
        memory::dim np = out[ni], op = oldDims[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= out.size()) return std::nullopt;
                np *= out[nj++];
            } else {
                if (oj >= oldDims.size()) return std::nullopt;
                op *= oldDims[oj++];
            }
        }
        for (std::size_t ok = oi; ok + 1 < oj; ++ok) {
            if (oldStrides[ok] != oldDims[ok + 1] * oldStrides[ok + 1]) return std::nullopt;
        }
        strides[nj - 1] = oldStrides[oj - 1];
        for (std::size_t nk = nj - 1; nk > ni; --nk) strides[nk - 1] = strides[nk] * out[nk];
        ni = nj++;
        oi = oj++;
    }
    if (oi < oldDims.size()) return std::nullopt;
    for (; ni < out.size(); ++ni) {
        if (out[ni] != 1) return std::nullopt;
    }
    return strides;
}

memory::data_type DataTypeOf(DataType t) {
    switch (t) {
        case DataType::UInt8: return memory::data_type::u8;
        case DataType::Signed8: return memory::data_type::s8;
        case DataType::Signed32: return memory::data_type::s32;
        default: return memory::data_type::f32;
    }
}

memory::desc PlainMd(const Dims& dims, memory::data_type dt) {
    return memory::desc(dims, dt, StridesOf(dims));
}
memory::desc AnyMd(const Dims& dims, memory::data_type dt) {
    return memory::desc(dims, dt, memory::format_tag::any);
}

Dims Prepend1s(const Dims& d, std::size_t rank) {
    Dims r(rank - d.size(), 1);
    r.insert(r.end(), d.begin(), d.end());
    return r;
}

memory::dim Product(const Dims& d, std::size_t from, std::size_t to) {
    memory::dim p = 1;
    for (std::size_t i = from; i < to; ++i) p *= d[i];
    return p;
}

memory::dim BlockSize() {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2 || isa == dnnl::cpu_isa::avx2_vnni ? 8 : 16;
}

std::optional<memory::format_tag> BlockedTag(std::size_t rank) {
    const bool b16 = BlockSize() == 16;
    switch (rank) {
        case 3: return b16 ? memory::format_tag::nCw16c : memory::format_tag::nCw8c;
        case 4: return b16 ? memory::format_tag::nChw16c : memory::format_tag::nChw8c;
        case 5: return b16 ? memory::format_tag::nCdhw16c : memory::format_tag::nCdhw8c;
        default: return std::nullopt;
    }
}

std::optional<memory::format_tag> BlockedTagOf(const memory::desc& md) {
    const Dims dims = md.dims();
    const std::optional<memory::format_tag> tag = BlockedTag(dims.size());
    if (tag && md == memory::desc(dims, md.data_type(), *tag)) return tag;
    return std::nullopt;
}

void* AllocateWeights(std::size_t bytes) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    void* p = nullptr;
    if (bytes >= kHuge) {
        if (posix_memalign(&p, kHuge, bytes) != 0) return nullptr;
        madvise(p, (bytes + 4095) / 4096 * 4096, MADV_HUGEPAGE);
        return p;
    }
    return std::aligned_alloc(64, std::max<std::size_t>((bytes + 63) / 64 * 64, 64));
}

}  // namespace detail

using namespace detail;

bool IsReferenceImplementation(const dnnl::primitive_desc_base& pd) {
    const char* impl = pd.impl_info_str();
    return impl && std::string(impl).rfind("ref", 0) == 0;
}

// ---- compilation helpers --------------------------------------------------------------------------

int CompiledRegion::AddStorage(Storage::Kind kind, int index, std::size_t bytes) {
    Storage s;
    s.m_Kind = kind;
    s.m_Index = index;
    s.m_Bytes = bytes;
    m_Storages.push_back(s);
    m_StorageValues.emplace_back();
    return static_cast<int>(m_Storages.size() - 1);
}

int CompiledRegion::AddMem(int storage, const memory::desc& md) {
    m_Mems.push_back(Mem{storage, md});
    return static_cast<int>(m_Mems.size() - 1);
}

void CompiledRegion::Bind(int value, int mem) {
    m_ValueMem[static_cast<std::size_t>(value)] = mem;
    m_StorageValues[static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(mem)].m_Storage)].push_back(value);
}

int CompiledRegion::MemOf(int value) {
    int& m = m_ValueMem[static_cast<std::size_t>(value)];
    if (m >= 0) return m;
    const Value& v = m_Graph->m_Values[static_cast<std::size_t>(value)];
    if (v.m_RegionInput < 0) {
        throw LayerValidationException("CpuAcc region '" + m_Name + "': a value is read before it is computed");
    }
    int& storage = m_InputStorage[static_cast<std::size_t>(v.m_RegionInput)];
    if (storage < 0) storage = AddStorage(Storage::Kind::Input, v.m_RegionInput, v.m_Info.GetNumBytes());
    const int mem = AddMem(storage, PlainMd(ValueDims(value), ValueType(value)));
    Bind(value, mem);
    return mem;
}

int CompiledRegion::Alias(int mem, const memory::desc& md) {
    const int alias = AddMem(m_Mems[static_cast<std::size_t>(mem)].m_Storage, md);
    m_Mems[static_cast<std::size_t>(alias)].m_ByteOffset = m_Mems[static_cast<std::size_t>(mem)].m_ByteOffset;
    return alias;
}

int CompiledRegion::Ensure(int value, const memory::desc& want) {
    const int m = MemOf(value);
    if (m_Mems[static_cast<std::size_t>(m)].m_Md == want) return m;
    for (const auto& [mem, unused] : m_Converted[static_cast<std::size_t>(value)]) {
        (void)unused;
        if (m_Mems[static_cast<std::size_t>(mem)].m_Md == want) return mem;
    }
    const int to = NewInternal(want);
    AddReorder(m, to, "reorder");
    m_Converted[static_cast<std::size_t>(value)].emplace_back(to, 0);
    return to;
}

bool CompiledRegion::CanOverwrite(int value, int nodeIndex, const Node* notInputOf) const {
    const int mem = m_ValueMem[static_cast<std::size_t>(value)];
    if (mem < 0) return false;
    const int storage = m_Mems[static_cast<std::size_t>(mem)].m_Storage;
    if (m_Storages[static_cast<std::size_t>(storage)].m_Kind != Storage::Kind::Internal) return false;
    for (int v : m_StorageValues[static_cast<std::size_t>(storage)]) {
        if (m_Graph->IsRegionOutput(v)) return false;
        for (int c : m_Graph->Consumers(v)) {
            if (c > nodeIndex) return false;
        }
        if (notInputOf && std::find(notInputOf->m_Inputs.begin(), notInputOf->m_Inputs.end(), v) != notInputOf->m_Inputs.end()) {
            return false;
        }
    }
    return true;
}

dnnl::primitive_attr CompiledRegion::Attr(bool mathOps) const {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    (void)mathOps;
    return attr;
}

void CompiledRegion::AddPrimitive(const std::string& name, const dnnl::primitive& p, const dnnl::primitive_desc_base& pd,
                                  std::vector<std::pair<int, int>> args) {
    Step step;
    step.m_Name = name;
    step.m_Category = PrimitiveKindName(pd.get_kind());
    step.m_Primitive = p;
    step.m_Args = std::move(args);
    const memory::desc sp = pd.scratchpad_desc();
    if (sp.get_size() > 0) {
        step.m_Scratchpad = sp;
        step.m_HasScratchpad = true;
    }
    m_Steps.push_back(std::move(step));
}

void CompiledRegion::AddReorder(int from, int to, const std::string& name) {
    const memory::desc& src = m_Mems[static_cast<std::size_t>(from)].m_Md;
    const memory::desc& dst = m_Mems[static_cast<std::size_t>(to)].m_Md;
    dnnl::reorder::primitive_desc pd(Engine(), src, Engine(), dst, Attr(false));
    AddPrimitive(name, dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

const ConstTensor& CompiledRegion::ConstantOf(int value, const Node& node, const char* what) const {
    const Value& v = m_Graph->m_Values[static_cast<std::size_t>(value)];
    const ConstTensor* c = v.m_RegionInput >= 0 ? m_Constants[static_cast<std::size_t>(v.m_RegionInput)] : nullptr;
    if (!c || !c->GetMemoryArea()) {
        throw LayerValidationException("CpuAcc: " + std::string(what) + " of '" + node.m_Name +
                                       "' must be a constant when the network is loaded");
    }
    return *c;
}

int CompiledRegion::PackConstant(const ConstTensor& t, const memory::desc& user, const memory::desc& packed, float scale) {
    std::vector<float> scaled;
    void* src = const_cast<void*>(t.GetMemoryArea());
    if (scale != 1.0f) {
        scaled.resize(t.GetNumElements());
        const float* p = static_cast<const float*>(t.GetMemoryArea());
        for (std::size_t i = 0; i < scaled.size(); ++i) scaled[i] = p[i] * scale;
        src = scaled.data();
    }
    const std::size_t bytes = (packed.get_size() + 63) / 64 * 64;
    void* buffer = AllocateWeights(bytes);
    if (!buffer) throw RuntimeException("CpuAcc: out of memory packing weights for '" + m_Name + "'");
    m_Owned.emplace_back(buffer);
    memory from(user, Engine(), src);
    memory to(packed, Engine(), buffer);
    dnnl::stream stream(Engine());
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
    const int storage = AddStorage(Storage::Kind::Owned, static_cast<int>(m_Owned.size() - 1), packed.get_size());
    return AddMem(storage, packed);
}

int CompiledRegion::PackData(const void* data, const memory::desc& user, const memory::desc& packed) {
    const std::size_t bytes = (packed.get_size() + 63) / 64 * 64;
    void* buffer = AllocateWeights(bytes);
    if (!buffer) throw RuntimeException("CpuAcc: out of memory packing weights for '" + m_Name + "'");
    m_Owned.emplace_back(buffer);
    memory from(user, Engine(), const_cast<void*>(data));
    memory to(packed, Engine(), buffer);
    dnnl::stream stream(Engine());
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
    const int storage = AddStorage(Storage::Kind::Owned, static_cast<int>(m_Owned.size() - 1), packed.get_size());
    return AddMem(storage, packed);
}

// ---- the region ----------------------------------------------------------------------------

void CompiledRegion::CompileNode(int index) {
    const Node& n = m_Graph->m_Nodes[static_cast<std::size_t>(index)];
    if (n.m_Dead) return;
    if (n.m_Kind == NodeKind::Cast || (!n.m_Int8 && m_Graph->TouchesSigned32(n))) {
        // OptimizeSubgraph returns such pieces as failed sub-graphs before a region is made.
        throw LayerValidationException("CpuAcc: layer '" + n.m_Name + "' is a piece of an integer product (Signed32) "
                                       "that was not fused into an int8 node; CpuAcc computes none alone");
    }
    switch (n.m_Kind) {
        case NodeKind::Conv: n.m_Int8 ? CompileConvInt8(n) : CompileConv(index, n); break;
        case NodeKind::MatMul: n.m_Int8 ? CompileMatMulInt8(n) : CompileMatMul(index, n); break;
        case NodeKind::Pool: CompilePool(n); break;
        case NodeKind::Eltwise: CompileEltwise(index, n); break;
        case NodeKind::Erf: CompileErf(n); break;
        case NodeKind::Binary: CompileBinary(index, n); break;
        case NodeKind::Softmax: CompileSoftmax(n); break;
        case NodeKind::LayerNorm: CompileLayerNorm(n); break;
        case NodeKind::Concat: CompileConcat(index, n); break;
        case NodeKind::Reshape: CompileReshape(n); break;
        case NodeKind::Transpose: CompileTranspose(n); break;
        case NodeKind::Reduce: CompileReduce(n); break;
        case NodeKind::Split:
        case NodeKind::Slice: CompileSplitSlice(n); break;
        case NodeKind::Recurrent: CompileRecurrent(n); break;
        case NodeKind::BatchNorm: CompileBatchNorm(n); break;
        case NodeKind::Pad: CompilePad(n); break;
        case NodeKind::Resize: CompileResize(n); break;
        case NodeKind::Attention: CompileAttention(n); break;
        case NodeKind::Expand: CompileExpand(n); break;
        case NodeKind::RmsNorm: CompileRmsNorm(n); break;
        case NodeKind::Quantize:
        case NodeKind::Dequantize: CompileQuantize(n); break;
        case NodeKind::QuantizedAdd: CompileQuantizedAdd(n); break;
        case NodeKind::ElementwiseChain: CompileElementwiseChain(n); break;
        case NodeKind::DynamicQuantize: CompileDynamicQuantize(n); break;
        case NodeKind::Where: CompileWhere(n); break;
        case NodeKind::Cast: break;  // refused above
    }
}

bool CompiledRegion::ReadOnlyByAttention(int value) const {
    if (m_Graph->IsRegionOutput(value)) return false;
    const std::vector<int> readers = m_Graph->Consumers(value);
    if (readers.empty()) return false;
    for (int c : readers) {
        const Node& n = m_Graph->m_Nodes[static_cast<std::size_t>(c)];
        if (n.m_Kind == NodeKind::Attention) {
            // Q, K, V only: a mask is made plain where the kernel reads it.
            for (std::size_t i = 3; i < n.m_Inputs.size(); ++i) {
                if (n.m_Inputs[i] == value) return false;
            }
            continue;
        }
        if ((n.m_Kind != NodeKind::Reshape && n.m_Kind != NodeKind::Transpose) || !ReadOnlyByAttention(n.m_Outputs[0])) return false;
    }
    return true;
}

void CompiledRegion::CompileReshape(const Node& n) {
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    // A strided view (a head split's slice or transpose, K^T) read only by attention kernels, which
    // take strides, stays a view when the new dims can be had by strides alone; anything else is plain.
    const memory::desc& md = m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md;
    if (md != PlainMd(ValueDims(x), ValueType(x)) && ReadOnlyByAttention(out)) {
        if (const std::optional<Dims> strides = ViewStrides(md)) {
            if (const std::optional<Dims> to = ReshapedStrides(ValueDims(x), *strides, outDims)) {
                memory::desc view(outDims, memory::data_type::f32, *to);
                view.data.offset0 = md.data.offset0;
                Bind(out, Alias(MemOf(x), view));
                return;
            }
        }
    }
    Bind(out, Alias(EnsurePlain(x), PlainMd(outDims, ValueType(x))));
}

void CompiledRegion::CompileOutputs() {
    std::vector<bool> retargeted(m_Storages.size(), false);
    for (std::size_t k = 0; k < m_Graph->m_OutputValues.size(); ++k) {
        const int v = m_Graph->m_OutputValues[k];
        const int mem = MemOf(v);
        const Dims dims = ValueDims(v);
        const memory::desc plain = PlainMd(dims, ValueType(v));
        Storage& s = m_Storages[static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(mem)].m_Storage)];
        const std::size_t bytes = m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetNumBytes();
        // Computed straight into the output buffer when the data is already plain and the storage
        // holds nothing else that leaves the region.
        const std::size_t sid = static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(mem)].m_Storage);
        if (s.m_Kind == Storage::Kind::Internal && m_Mems[static_cast<std::size_t>(mem)].m_Md == plain &&
            s.m_Bytes == bytes && !retargeted[sid]) {
            bool alone = true;
            for (int other : m_StorageValues[sid]) {
                if (other != v && m_Graph->IsRegionOutput(other)) alone = false;
            }
            if (alone) {
                s.m_Kind = Storage::Kind::Output;
                s.m_Index = static_cast<int>(k);
                retargeted[sid] = true;
                continue;
            }
        }
        const int outStorage = AddStorage(Storage::Kind::Output, static_cast<int>(k), bytes);
        retargeted.push_back(true);
        AddReorder(mem, AddMem(outStorage, plain), "output " + std::to_string(k));
    }
}

void CompiledRegion::PlanMemory() {
    for (std::size_t i = 0; i < m_Steps.size(); ++i) {
        auto touch = [&](int mem) {
            Storage& s = m_Storages[static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(mem)].m_Storage)];
            s.m_First = std::min(s.m_First, static_cast<int>(i));
            s.m_Last = std::max(s.m_Last, static_cast<int>(i));
        };
        for (const auto& [arg, mem] : m_Steps[i].m_Args) touch(mem);
        for (int mem : m_Steps[i].m_KernelMems) touch(mem);
    }
    // Greedy placement, largest first, at the lowest offset free over the storage's lifetime.
    std::vector<int> order;
    for (std::size_t i = 0; i < m_Storages.size(); ++i) {
        if (m_Storages[i].m_Kind == Storage::Kind::Internal && m_Storages[i].m_Last >= 0) order.push_back(static_cast<int>(i));
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return m_Storages[static_cast<std::size_t>(a)].m_Bytes > m_Storages[static_cast<std::size_t>(b)].m_Bytes;
    });
    std::vector<int> placed;
    std::size_t peak = 0;
    for (int id : order) {
        Storage& s = m_Storages[static_cast<std::size_t>(id)];
        const std::size_t size = (s.m_Bytes + 63) / 64 * 64;
        std::vector<std::pair<std::size_t, std::size_t>> busy;
        for (int p : placed) {
            const Storage& o = m_Storages[static_cast<std::size_t>(p)];
            if (o.m_First <= s.m_Last && s.m_First <= o.m_Last) busy.emplace_back(o.m_Offset, o.m_Offset + (o.m_Bytes + 63) / 64 * 64);
        }
        std::sort(busy.begin(), busy.end());
        std::size_t offset = 0;
        for (const auto& [b, e] : busy) {
            if (offset + size <= b) break;
            offset = std::max(offset, e);
        }
        s.m_Offset = offset;
        peak = std::max(peak, offset + size);
        placed.push_back(id);
    }
    std::size_t scratchpad = 0;
    for (const Step& st : m_Steps) {
        if (st.m_HasScratchpad) scratchpad = std::max(scratchpad, st.m_Scratchpad.get_size());
    }
    m_ScratchpadOffset = peak;
    m_ScratchBytes = peak + (scratchpad + 63) / 64 * 64;
    for (std::size_t i = 0; i < m_Mems.size(); ++i) {
        const Storage& st = m_Storages[static_cast<std::size_t>(m_Mems[i].m_Storage)];
        if (st.m_Kind == Storage::Kind::Input && st.m_Last >= 0) m_BoundInputs.emplace_back(i, static_cast<std::size_t>(st.m_Index));
        if (st.m_Kind == Storage::Kind::Output) m_BoundOutputs.emplace_back(i, static_cast<std::size_t>(st.m_Index));
    }
}

CompiledRegion::CompiledRegion(std::shared_ptr<const RegionGraph> graph, const std::vector<const ConstTensor*>& constants,
                               const RegionOptions& options, std::string name)
    : m_Graph(std::move(graph)), m_Constants(constants), m_Options(options), m_Name(std::move(name)) {
    const RegionGraph& g = *m_Graph;
    m_Constants.resize(g.m_InputInfos.size(), nullptr);
    m_ValueMem.assign(g.m_Values.size(), -1);
    m_Converted.assign(g.m_Values.size(), {});
    m_InputStorage.assign(g.m_InputInfos.size(), -1);
    ThreadScope threads(m_Options.m_NumThreads);
    PlanInPlaceConcats();
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        try {
            CompileNode(i);
        } catch (const dnnl::error& e) {
            const Node& n = g.m_Nodes[static_cast<std::size_t>(i)];
            throw LayerValidationException("CpuAcc: oneDNN cannot compile " + std::string(GetNodeKindName(n.m_Kind)) + " '" +
                                           n.m_Name + "': " + e.what());
        }
    }
    try {
        CompileOutputs();
    } catch (const dnnl::error& e) {
        throw LayerValidationException("CpuAcc: oneDNN cannot write the outputs of region '" + m_Name + "': " + e.what());
    }
    PlanMemory();
}

}  // namespace trellis::cpuacc
