#include "OneDnnOpGenerator.hpp"

#include "../../ArtifactTarget.hpp"

#include <CpuAccGraph.hpp>
#include <CpuAccRegion.hpp>
#include <CpuAccSupport.hpp>

#include <trellis/Exceptions.hpp>
#include <trellis/backends/SubgraphView.hpp>

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

namespace trellis::codegen::onednn {

namespace {

using dnnl::memory;
using Dims = memory::dims;
using cpuacc::Node;
using cpuacc::NodeKind;
using cpuacc::PostOp;
using cpuacc::RegionGraph;
using cpuacc::Value;
using F = ArtifactFactory;

// ---- oneDNN at generation time ------------------------------------------------------------------

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

Dims StridesOf(const Dims& dims) {
    Dims strides(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<memory::dim>(dims[i], 1);
    return strides;
}

memory::desc PlainMd(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, StridesOf(dims)); }
memory::desc AnyMd(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, memory::format_tag::any); }

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

/// The channel block of the generating CPU's vector width (16 floats with AVX-512, 8 with AVX2),
/// as CpuAcc chooses it; the artifact keeps it wherever it runs.
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

// ---- oneDNN objects as C++ expressions -----------------------------------------------------------

ArtifactExprPtr DimsExpr(const Dims& d) {
    std::vector<int64_t> v(d.begin(), d.end());
    return F::IntList(v, "dnnl::memory::dims");
}

ArtifactExprPtr DataTypeExpr(memory::data_type dt) {
    return F::Id(std::string("dnnl::memory::data_type::") + dnnl_dt2str(static_cast<dnnl_data_type_t>(dt)));
}

ArtifactExprPtr AlgorithmExpr(int algorithm) {
    return F::Id(std::string("dnnl::algorithm::") + dnnl_alg_kind2str(static_cast<dnnl_alg_kind_t>(algorithm)));
}
ArtifactExprPtr AlgorithmExpr(dnnl::algorithm algorithm) { return AlgorithmExpr(static_cast<int>(algorithm)); }

/// The format tag describing `md` exactly (conventional names first), if there is one.
std::optional<std::string> FormatTagOf(const memory::desc& md) {
    if (md.data.offset0 != 0 || md.data.format_kind != dnnl_blocked) return std::nullopt;
    const auto matches = [&](dnnl_format_tag_t tag) {
        dnnl_memory_desc_t candidate;
        return dnnl_memory_desc_init_by_tag(&candidate, md.data.ndims, md.data.dims, md.data.data_type, tag) == dnnl_success &&
               dnnl_memory_desc_equal(&candidate, &md.data) != 0;
    };
    static const std::pair<dnnl_format_tag_t, const char*> kConventional[] = {
        {dnnl_x, "x"},         {dnnl_nc, "nc"},           {dnnl_ncw, "ncw"},       {dnnl_nchw, "nchw"},
        {dnnl_ncdhw, "ncdhw"}, {dnnl_nChw16c, "nChw16c"}, {dnnl_nChw8c, "nChw8c"}, {dnnl_nCw16c, "nCw16c"},
        {dnnl_nCw8c, "nCw8c"}, {dnnl_nCdhw16c, "nCdhw16c"}, {dnnl_nCdhw8c, "nCdhw8c"}, {dnnl_nhwc, "nhwc"},
        {dnnl_nwc, "nwc"},     {dnnl_ndhwc, "ndhwc"},
    };
    for (const auto& [tag, name] : kConventional) {
        if (matches(tag)) return std::string(name);
    }
    for (int t = static_cast<int>(dnnl_format_tag_any) + 1; t < static_cast<int>(dnnl_format_tag_last); ++t) {
        if (matches(static_cast<dnnl_format_tag_t>(t))) return std::string(dnnl_fmt_tag2str(static_cast<dnnl_format_tag_t>(t)));
    }
    return std::nullopt;
}

/// `md` as a C++ expression the artifact evaluates to the same descriptor; throws if it has none.
ArtifactExprPtr DescExpr(const memory::desc& md, const std::string& what) {
    const Dims dims = md.dims();
    if (std::optional<std::string> tag = FormatTagOf(md)) {
        return F::Call("dnnl::memory::desc", {DimsExpr(dims), DataTypeExpr(md.data_type()),
                                              F::Id("dnnl::memory::format_tag::" + *tag)});
    }
    const dnnl_blocking_desc_t& b = md.data.format_desc.blocking;
    bool plain = md.data.format_kind == dnnl_blocked && b.inner_nblks == 0;
    for (int i = 0; plain && i < md.data.ndims; ++i) plain = md.data.padded_dims[i] == md.data.dims[i] && md.data.padded_offsets[i] == 0;
    if (plain) {
        const Dims strides(b.strides, b.strides + md.data.ndims);
        memory::desc rebuilt(dims, md.data_type(), strides);
        rebuilt.data.offset0 = md.data.offset0;
        if (rebuilt == md) {
            if (md.data.offset0 == 0) return F::Call("dnnl::memory::desc", {DimsExpr(dims), DataTypeExpr(md.data_type()), DimsExpr(strides)});
            return F::Call("trellis::artifact::StridedDesc", {DimsExpr(dims), DataTypeExpr(md.data_type()), DimsExpr(strides),
                                                              F::Int(md.data.offset0)});
        }
    }
    throw InvalidArgumentException("code generator (onednn): the layout oneDNN chose for " + what +
                                   " has no format tag and is not plain strided; it cannot be written into the artifact");
}

std::string ArgName(int arg) {
    switch (arg) {
        case DNNL_ARG_SRC: return "DNNL_ARG_SRC";
        case DNNL_ARG_SRC_1: return "DNNL_ARG_SRC_1";
        case DNNL_ARG_DST: return "DNNL_ARG_DST";
        case DNNL_ARG_WEIGHTS: return "DNNL_ARG_WEIGHTS";
        case DNNL_ARG_BIAS: return "DNNL_ARG_BIAS";
        case DNNL_ARG_SCALE: return "DNNL_ARG_SCALE";
        case DNNL_ARG_SHIFT: return "DNNL_ARG_SHIFT";
        default: break;
    }
    if (arg >= DNNL_ARG_MULTIPLE_SRC && arg < DNNL_ARG_MULTIPLE_DST) {
        return "DNNL_ARG_MULTIPLE_SRC + " + std::to_string(arg - DNNL_ARG_MULTIPLE_SRC);
    }
    for (int i = 0; i < 32; ++i) {
        if (arg == (DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1)) {
            return "DNNL_ARG_ATTR_MULTIPLE_POST_OP(" + std::to_string(i) + ") | DNNL_ARG_SRC_1";
        }
    }
    return std::to_string(arg);
}

/// A post-op as the artifact appends it.
struct PostOpCode {
    enum class Kind { Eltwise, Sum, BinaryAdd } m_Kind = Kind::Eltwise;
    cpuacc::EltwiseOp m_Eltwise;
    memory::desc m_Md;  ///< BinaryAdd: the operand's layout
};

}  // namespace

// ---- the compiler: CpuAcc's region compiler, writing the artifact ------------------------------------

class OneDnnCompiler {
public:
    OneDnnCompiler(OneDnnOpGenerator& generator) : m_Gen(generator) {}

    void Begin();
    void CompileNode(int index);
    void Finish();

private:
    struct Storage {
        enum class Kind { Input, Output, Internal, Packed };
        Kind m_Kind = Kind::Internal;
        int m_Index = -1;  ///< region input, artifact output, or packed weight
        std::size_t m_Bytes = 0;
        int m_First = INT_MAX, m_Last = -1;
        int m_Buffer = -1;  ///< Internal: the arena buffer
    };
    struct Mem {
        int m_Storage = -1;
        memory::desc m_Md;
        ArtifactExprPtr m_RuntimeMd;  ///< a layout queried when the artifact runs (packed weights)
        std::size_t m_ByteOffset = 0;
        std::string m_Member;  ///< "mem_<k>" once used
    };
    struct Arg {
        int m_Arg;
        int m_Mem;
    };
    struct Step {
        std::string m_Layer;
        int m_Pd = -1;  ///< the pd/prim/args members' number; -1 for an own kernel
        std::vector<Arg> m_Args;
        // Own kernel (erf): from m_Args[0] to m_Args[1], m_Count floats.
        std::size_t m_Count = 0;
    };
    struct Packed {
        int m_Tensor = -1;  ///< the constant's graph tensor
        ArtifactExprPtr m_UserMd;
        float m_Scale = 1.0f;
        int m_Mem = -1;
    };
    /// Per region input: the artifact input it is, or the constant tensor.
    struct RegionInput {
        int m_ArtifactInput = -1;
        int m_Constant = -1;
    };

    const RegionGraph& G() const { return *m_Region; }
    Dims ValueDims(int v) const { return DimsOf(G().m_Values[static_cast<std::size_t>(v)].m_Info.GetShape()); }

    int AddStorage(Storage::Kind kind, int index, std::size_t bytes);
    int AddMem(int storage, const memory::desc& md);
    int NewInternal(const memory::desc& md) { return AddMem(AddStorage(Storage::Kind::Internal, -1, md.get_size()), md); }
    int MemOf(int value);
    void Bind(int value, int mem);
    int Ensure(int value, const memory::desc& want);
    int EnsurePlain(int value) { return Ensure(value, PlainMd(ValueDims(value))); }
    int Alias(int mem, const memory::desc& md);
    bool CanOverwrite(int value, int nodeIndex, const Node* notInputOf = nullptr) const;
    /// The constant tensor of region value `value` (a weight), or throws naming the node.
    int ConstantTensorOf(int value, const Node& node, const char* what) const;
    /// A packed copy of constant `value` in the layout `pd.<query>()` of primitive `pd` (number),
    /// from `user` (the weights file's layout), times `scale`.
    int PackConstant(int value, const Node& node, const char* what, const memory::desc& user, int pd,
                     const std::string& query, const memory::desc& packed, float scale);

    /// A new primitive number (its members pd_<n>, prim_<n>, args_<n>).
    int NewPrimitive(const std::string& pdType);
    /// Configures primitive `pd`: `make(attr)` is the primitive descriptor's construction;
    /// `fallback`, if given, is tried when that throws (a kernel the running CPU may lack).
    void Configure(int pd, const std::string& layer, const std::string& primType, const std::vector<PostOpCode>& postOps,
                   const std::function<ArtifactExprPtr(ArtifactExprPtr attr)>& make,
                   const std::function<ArtifactExprPtr(ArtifactExprPtr attr)>& fallback = nullptr);
    void AddStep(const std::string& layer, int pd, std::vector<Arg> args);
    void AddReorder(int from, int to, const std::string& name);

    void CompileConv(int index, const Node& n);
    void CompileMatMul(const Node& n);
    void CompilePool(const Node& n);
    void CompileEltwise(int index, const Node& n);
    void CompileErf(const Node& n);
    void CompileBinary(int index, const Node& n);
    void CompileSoftmax(const Node& n);
    void CompileLayerNorm(const Node& n);
    void CompileConcat(int index, const Node& n);
    void CompileTranspose(const Node& n);
    void CompileReduce(const Node& n);
    void CompileSplitSlice(const Node& n);
    void PlanInPlaceConcats();
    void CompileOutputs();

    const std::string& MemberOf(int mem);
    ArtifactExprPtr MemRef(int mem) { return F::Id("l." + MemberOf(mem)); }

    OneDnnOpGenerator& m_Gen;
    std::shared_ptr<RegionGraph> m_Region;
    std::vector<RegionInput> m_RegionInputs;
    /// Artifact outputs the region does not compute (an input or a constant), copied in.
    std::vector<std::pair<int, int>> m_CopiedOutputs;  ///< (artifact output, graph tensor)
    std::vector<int> m_RegionOutputOf;  ///< per region output: the artifact output

    std::vector<Storage> m_Storages;
    std::vector<Mem> m_Mems;
    std::vector<Step> m_Steps;
    std::vector<Packed> m_Packed;
    std::vector<int> m_ValueMem;
    std::vector<std::vector<int>> m_StorageValues;
    std::vector<std::vector<int>> m_Converted;
    std::vector<int> m_InputStorage;
    int m_NumPrimitives = 0;
    int m_NumMems = 0;

    struct ConcatTarget {
        int m_Storage = -1;
        memory::desc m_Md;
        std::size_t m_Written = 0;
    };
    std::unordered_map<int, int> m_ConcatOf;
    std::unordered_map<int, ConcatTarget> m_ConcatTargets;
};

int OneDnnCompiler::AddStorage(Storage::Kind kind, int index, std::size_t bytes) {
    Storage s;
    s.m_Kind = kind;
    s.m_Index = index;
    s.m_Bytes = bytes;
    m_Storages.push_back(s);
    m_StorageValues.emplace_back();
    return static_cast<int>(m_Storages.size() - 1);
}

int OneDnnCompiler::AddMem(int storage, const memory::desc& md) {
    Mem m;
    m.m_Storage = storage;
    m.m_Md = md;
    m_Mems.push_back(std::move(m));
    return static_cast<int>(m_Mems.size() - 1);
}

void OneDnnCompiler::Bind(int value, int mem) {
    m_ValueMem[static_cast<std::size_t>(value)] = mem;
    m_StorageValues[static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(mem)].m_Storage)].push_back(value);
}

int OneDnnCompiler::MemOf(int value) {
    int& m = m_ValueMem[static_cast<std::size_t>(value)];
    if (m >= 0) return m;
    const Value& v = G().m_Values[static_cast<std::size_t>(value)];
    if (v.m_RegionInput < 0) throw InvalidArgumentException("code generator (onednn): a value is read before it is computed");
    int& storage = m_InputStorage[static_cast<std::size_t>(v.m_RegionInput)];
    if (storage < 0) storage = AddStorage(Storage::Kind::Input, v.m_RegionInput, v.m_Info.GetNumBytes());
    const int mem = AddMem(storage, PlainMd(ValueDims(value)));
    Bind(value, mem);
    return mem;
}

int OneDnnCompiler::Alias(int mem, const memory::desc& md) {
    const int alias = AddMem(m_Mems[static_cast<std::size_t>(mem)].m_Storage, md);
    m_Mems[static_cast<std::size_t>(alias)].m_ByteOffset = m_Mems[static_cast<std::size_t>(mem)].m_ByteOffset;
    return alias;
}

int OneDnnCompiler::Ensure(int value, const memory::desc& want) {
    const int m = MemOf(value);
    if (m_Mems[static_cast<std::size_t>(m)].m_Md == want) return m;
    for (int mem : m_Converted[static_cast<std::size_t>(value)]) {
        if (m_Mems[static_cast<std::size_t>(mem)].m_Md == want) return mem;
    }
    const int to = NewInternal(want);
    AddReorder(m, to, "reorder");
    m_Converted[static_cast<std::size_t>(value)].push_back(to);
    return to;
}

bool OneDnnCompiler::CanOverwrite(int value, int nodeIndex, const Node* notInputOf) const {
    const int mem = m_ValueMem[static_cast<std::size_t>(value)];
    if (mem < 0) return false;
    const int storage = m_Mems[static_cast<std::size_t>(mem)].m_Storage;
    if (m_Storages[static_cast<std::size_t>(storage)].m_Kind != Storage::Kind::Internal) return false;
    for (int v : m_StorageValues[static_cast<std::size_t>(storage)]) {
        if (G().IsRegionOutput(v)) return false;
        for (int c : G().Consumers(v)) {
            if (c > nodeIndex) return false;
        }
        if (notInputOf && std::find(notInputOf->m_Inputs.begin(), notInputOf->m_Inputs.end(), v) != notInputOf->m_Inputs.end()) {
            return false;
        }
    }
    return true;
}

int OneDnnCompiler::ConstantTensorOf(int value, const Node& node, const char* what) const {
    const Value& v = G().m_Values[static_cast<std::size_t>(value)];
    const int t = v.m_RegionInput >= 0 ? m_RegionInputs[static_cast<std::size_t>(v.m_RegionInput)].m_Constant : -1;
    if (t < 0) {
        throw InvalidArgumentException("code generator (onednn): " + std::string(what) + " of '" + node.m_Name +
                                       "' must be a constant");
    }
    return t;
}

int OneDnnCompiler::PackConstant(int value, const Node& node, const char* what, const memory::desc& user, int pd,
                                 const std::string& query, const memory::desc& packed, float scale) {
    Packed p;
    p.m_Tensor = ConstantTensorOf(value, node, what);
    p.m_UserMd = DescExpr(user, std::string(what) + " of '" + node.m_Name + "'");
    p.m_Scale = scale;
    const int storage = AddStorage(Storage::Kind::Packed, static_cast<int>(m_Packed.size()), packed.get_size());
    p.m_Mem = AddMem(storage, packed);
    m_Mems[static_cast<std::size_t>(p.m_Mem)].m_RuntimeMd =
        F::Call(query, {}, F::Id("l.pd_" + std::to_string(pd)), ArtifactCallType::Object);
    m_Packed.push_back(std::move(p));
    return m_Packed.back().m_Mem;
}

int OneDnnCompiler::NewPrimitive(const std::string& pdType) {
    const int pd = m_NumPrimitives++;
    m_Gen.AddLayerMember(pdType, "pd_" + std::to_string(pd));
    m_Gen.AddLayerMember("dnnl::primitive", "prim_" + std::to_string(pd));
    m_Gen.AddLayerMember("std::vector<dnnl_exec_arg_t>", "args_" + std::to_string(pd));
    m_Gen.AddLayerMember("dnnl::memory", "scratchpad_" + std::to_string(pd));
    return pd;
}

void OneDnnCompiler::Configure(int pd, const std::string& layer, const std::string& primType,
                               const std::vector<PostOpCode>& postOps,
                               const std::function<ArtifactExprPtr(ArtifactExprPtr)>& make,
                               const std::function<ArtifactExprPtr(ArtifactExprPtr)>& fallback) {
    const std::string n = std::to_string(pd);
    ArtifactBlock& configure = m_Gen.Configure();
    configure.AddComment(layer);
    auto block = configure.AddBlock();
    block->AddVariable("dnnl::primitive_attr", "attr");
    block->AddCall("set_scratchpad_mode", {F::Id("dnnl::scratchpad_mode::user")}, F::Id("attr"), ArtifactCallType::Object);
    if (!postOps.empty()) {
        block->AddVariable("dnnl::post_ops", "po");
        for (const PostOpCode& p : postOps) {
            switch (p.m_Kind) {
                case PostOpCode::Kind::Eltwise:
                    block->AddCall("append_eltwise", {F::Float(1.0f), AlgorithmExpr(p.m_Eltwise.m_Algorithm),
                                                      F::Float(p.m_Eltwise.m_Alpha), F::Float(p.m_Eltwise.m_Beta)},
                                   F::Id("po"), ArtifactCallType::Object);
                    break;
                case PostOpCode::Kind::Sum:
                    block->AddCall("append_sum", {F::Float(1.0f)}, F::Id("po"), ArtifactCallType::Object);
                    break;
                case PostOpCode::Kind::BinaryAdd:
                    block->AddCall("append_binary", {F::Id("dnnl::algorithm::binary_add"), DescExpr(p.m_Md, "a post-op operand of '" + layer + "'")},
                                   F::Id("po"), ArtifactCallType::Object);
                    break;
            }
        }
        block->AddCall("set_post_ops", {F::Id("po")}, F::Id("attr"), ArtifactCallType::Object);
    }
    const ArtifactExprPtr pdRef = F::Id("l.pd_" + n);
    if (fallback) {
        auto attempt = block->AddTryCatch("dnnl::error", "");
        attempt->GetTryBlock().AddAssign(pdRef, make(F::Id("attr")));
        attempt->GetCatchBlock().AddComment("no such kernel for this CPU");
        attempt->GetCatchBlock().AddAssign(pdRef, fallback(F::Id("attr")));
    } else {
        block->AddAssign(pdRef, make(F::Id("attr")));
    }
    block->AddAssign(F::Id("l.prim_" + n), F::Call(primType, {pdRef}));
    block->AddAssign(F::Id("scratchpad_bytes"),
                     F::Call("std::max", {F::Id("scratchpad_bytes"),
                                          F::Call("get_size", {}, F::Call("scratchpad_desc", {}, pdRef, ArtifactCallType::Object),
                                                  ArtifactCallType::Object)}));
}

void OneDnnCompiler::AddStep(const std::string& layer, int pd, std::vector<Arg> args) {
    Step s;
    s.m_Layer = layer;
    s.m_Pd = pd;
    s.m_Args = std::move(args);
    m_Steps.push_back(std::move(s));
}

void OneDnnCompiler::AddReorder(int from, int to, const std::string& name) {
    const memory::desc& src = m_Mems[static_cast<std::size_t>(from)].m_Md;
    const memory::desc& dst = m_Mems[static_cast<std::size_t>(to)].m_Md;
    dnnl::reorder::primitive_desc check(Engine(), src, Engine(), dst);  // throws if oneDNN cannot
    (void)check;
    const int pd = NewPrimitive("dnnl::reorder::primitive_desc");
    const ArtifactExprPtr srcExpr = DescExpr(src, "a reorder's source (" + name + ")");
    const ArtifactExprPtr dstExpr = DescExpr(dst, "a reorder's destination (" + name + ")");
    Configure(pd, name, "dnnl::reorder", {}, [&](ArtifactExprPtr attr) {
        return F::Call("dnnl::reorder::primitive_desc", {F::Id("l.engine"), srcExpr, F::Id("l.engine"), dstExpr, attr});
    });
    AddStep(name, pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

void OneDnnCompiler::PlanInPlaceConcats() {
    for (int c = 0; c < static_cast<int>(G().m_Nodes.size()); ++c) {
        const Node& n = G().m_Nodes[static_cast<std::size_t>(c)];
        if (n.m_Dead || n.m_Kind != NodeKind::Concat) continue;
        const Dims outDims = ValueDims(n.m_Outputs[0]);
        const int rank = static_cast<int>(outDims.size());
        const int axis = std::get<ConcatDescriptor>(n.m_Descriptor).m_Axis;
        if ((axis < 0 ? axis + rank : axis) != 1 || !BlockedTag(outDims.size())) continue;
        bool ok = true;
        for (std::size_t i = 0; i < n.m_Inputs.size() && ok; ++i) {
            const int v = n.m_Inputs[i];
            const int p = G().m_Values[static_cast<std::size_t>(v)].m_Producer;
            ok = p >= 0 && G().m_Nodes[static_cast<std::size_t>(p)].m_Kind == NodeKind::Conv &&
                 std::none_of(G().m_Nodes[static_cast<std::size_t>(p)].m_PostOps.begin(),
                              G().m_Nodes[static_cast<std::size_t>(p)].m_PostOps.end(),
                              [](const PostOp& po) { return po.m_Kind == PostOp::Kind::Add; }) &&
                 G().Consumers(v) == std::vector<int>{c} && !G().IsRegionOutput(v) && ValueDims(v)[1] % BlockSize() == 0 &&
                 std::count(n.m_Inputs.begin(), n.m_Inputs.end(), v) == 1;
        }
        if (!ok) continue;
        for (int v : n.m_Inputs) m_ConcatOf[v] = c;
        m_ConcatTargets[c].m_Md = memory::desc(outDims, memory::data_type::f32, *BlockedTag(outDims.size()));
    }
}

// ---- nodes ---------------------------------------------------------------------------------------

void OneDnnCompiler::CompileConv(int index, const Node& n) {
    const auto& d = std::get<ConvolutionDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0];
    const Dims ws = ValueDims(n.m_Inputs[1]);
    const std::size_t spatial = ws.size() - 2;
    const memory::dim groups = d.m_Groups;
    Dims wdims = groups > 1 ? Dims{groups, ws[0] / groups, ws[1]} : Dims{ws[0], ws[1]};
    wdims.insert(wdims.end(), ws.begin() + 2, ws.end());
    const Dims src = ValueDims(x);
    const int out = n.m_Outputs[0];
    const Dims dst = ValueDims(out);
    Dims strides, dil, padL, padR;
    for (std::size_t i = 0; i < spatial; ++i) {
        const memory::dim s = i < d.m_Strides.size() ? d.m_Strides[i] : 1;
        const memory::dim dl = i < d.m_Dilations.size() ? d.m_Dilations[i] : 1;
        const memory::dim pl = i < d.m_PadsBegin.size() ? d.m_PadsBegin[i] : 0;
        strides.push_back(s);
        dil.push_back(dl - 1);
        padL.push_back(pl);
        padR.push_back((dst[2 + i] - 1) * s + (ws[2 + i] - 1) * dl + 1 - src[2 + i] - pl);
    }
    std::vector<PostOpCode> postOps;
    dnnl::post_ops po;
    int sumValue = -1;
    for (const PostOp& p : n.m_PostOps) {
        if (p.m_Kind == PostOp::Kind::Eltwise) {
            po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha, p.m_Eltwise.m_Beta);
            postOps.push_back({PostOpCode::Kind::Eltwise, p.m_Eltwise, {}});
        } else {
            po.append_sum(1.0f);
            postOps.push_back({PostOpCode::Kind::Sum, {}, {}});
            sumValue = p.m_Value;
        }
    }
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_post_ops(po);
    const bool bias = n.m_Inputs.size() > 2;
    const memory::desc biasMd = PlainMd({ws[0]});
    auto make = [&](const memory::desc& srcMd, const memory::desc& dstMd, dnnl::algorithm alg) {
        dnnl::convolution_forward::desc cd =
            bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, srcMd, AnyMd(wdims), biasMd, dstMd,
                                                   strides, dil, padL, padR)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, srcMd, AnyMd(wdims), dstMd,
                                                   strides, dil, padL, padR);
        return dnnl::convolution_forward::primitive_desc(cd, attr, Engine());
    };
    // Layouts as CpuAcc chooses them (CpuAccRegionConv.cpp, CompileConv): channel-blocked in and out,
    // plain in for a first layer with few channels, Winograd for the shapes it wins on; oneDNN's
    // choice where it has no kernel for that.
    const memory::desc current = m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md;
    dnnl::convolution_forward::primitive_desc pd;
    bool made = false, winograd = false;
    if (const std::optional<memory::format_tag> blocked = BlockedTag(src.size())) {
        const memory::desc blockedSrc(src, memory::data_type::f32, *blocked);
        const memory::desc srcWant = current == PlainMd(src) && src[1] < BlockSize() ? PlainMd(src) : blockedSrc;
        const memory::desc dstWant(dst, memory::data_type::f32, *blocked);
        if (srcWant == blockedSrc && cpuacc::OneDnnHasWinograd() &&
            cpuacc::IsWinogradShape(d, G().m_Values[static_cast<std::size_t>(n.m_Inputs[1])].m_Info.GetShape(),
                                    G().m_Values[static_cast<std::size_t>(x)].m_Info.GetShape(),
                                    G().m_Values[static_cast<std::size_t>(out)].m_Info.GetShape())) {
            try {
                pd = make(srcWant, dstWant, dnnl::algorithm::convolution_winograd);
                made = winograd = true;
            } catch (const dnnl::error&) {
            }
        }
        if (!made) {
            try {
                pd = make(srcWant, dstWant, dnnl::algorithm::convolution_direct);
                made = true;
            } catch (const dnnl::error&) {
            }
        }
    }
    if (!made) pd = make(AnyMd(src), AnyMd(dst), dnnl::algorithm::convolution_direct);
    if (winograd) {
        // The direct kernel must take the same layouts (the artifact falls back to it where the
        // running CPU has no Winograd kernel).
        (void)make(pd.src_desc(), pd.dst_desc(), dnnl::algorithm::convolution_direct);
    }

    const int p = NewPrimitive("dnnl::convolution_forward::primitive_desc");
    const ArtifactExprPtr srcExpr = DescExpr(pd.src_desc(), "the input of '" + n.m_Name + "'");
    const ArtifactExprPtr dstExpr = DescExpr(pd.dst_desc(), "the output of '" + n.m_Name + "'");
    const auto emit = [&, srcExpr, dstExpr](dnnl::algorithm alg) {
        return [&, alg, srcExpr, dstExpr](ArtifactExprPtr a) {
            std::vector<ArtifactExprPtr> args = {F::Id("dnnl::prop_kind::forward_inference"), AlgorithmExpr(alg), srcExpr,
                                                 F::Call("dnnl::memory::desc", {DimsExpr(wdims), DataTypeExpr(memory::data_type::f32),
                                                                                F::Id("dnnl::memory::format_tag::any")})};
            if (bias) args.push_back(DescExpr(biasMd, "a bias"));
            args.insert(args.end(), {dstExpr, DimsExpr(strides), DimsExpr(dil), DimsExpr(padL), DimsExpr(padR)});
            return F::Call("dnnl::convolution_forward::primitive_desc",
                           {F::Call("dnnl::convolution_forward::desc", args), a, F::Id("l.engine")});
        };
    };
    if (winograd) {
        Configure(p, n.m_Name + " (Winograd where this CPU has it)", "dnnl::convolution_forward", postOps,
                  emit(dnnl::algorithm::convolution_winograd), emit(dnnl::algorithm::convolution_direct));
    } else {
        Configure(p, n.m_Name, "dnnl::convolution_forward", postOps, emit(dnnl::algorithm::convolution_direct));
    }

    const int srcMem = Ensure(x, pd.src_desc());
    const int weights = PackConstant(n.m_Inputs[1], n, "the weights", PlainMd(wdims), p, "weights_desc", pd.weights_desc(), 1.0f);
    std::vector<Arg> args = {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, weights}};
    if (bias) args.push_back({DNNL_ARG_BIAS, PackConstant(n.m_Inputs[2], n, "the bias", biasMd, p, "bias_desc", pd.bias_desc(), 1.0f)});
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
    } else if (auto c = m_ConcatOf.find(out); c != m_ConcatOf.end() && dst[0] == 1 && BlockedTag(dst.size()) &&
                                                 pd.dst_desc() == memory::desc(dst, memory::data_type::f32, *BlockedTag(dst.size()))) {
        // Written straight into its channels of the concatenation reading it.
        ConcatTarget& target = m_ConcatTargets[c->second];
        const Node& concat = G().m_Nodes[static_cast<std::size_t>(c->second)];
        memory::dim offset = 0;
        for (int v : concat.m_Inputs) {
            if (v == out) break;
            offset += ValueDims(v)[1];
        }
        if (target.m_Storage < 0) target.m_Storage = AddStorage(Storage::Kind::Internal, -1, target.m_Md.get_size());
        dstMem = AddMem(target.m_Storage, pd.dst_desc());
        m_Mems[static_cast<std::size_t>(dstMem)].m_ByteOffset = static_cast<std::size_t>(offset * Product(dst, 2, dst.size())) * sizeof(float);
        ++target.m_Written;
    } else {
        dstMem = NewInternal(pd.dst_desc());
    }
    args.push_back({DNNL_ARG_DST, dstMem});
    AddStep(n.m_Name, p, std::move(args));
    Bind(out, dstMem);
}

void OneDnnCompiler::CompileMatMul(const Node& n) {
    const bool gemm = n.m_LayerType == LayerType::Gemm;
    const GemmDescriptor gd = gemm ? std::get<GemmDescriptor>(n.m_Descriptor) : GemmDescriptor{};
    const int a = n.m_Inputs[0], b = n.m_Inputs[1];
    const int biasValue = n.m_Inputs.size() > 2 ? n.m_Inputs[2] : -1;
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out), aDims = ValueDims(a), bDims = ValueDims(b);
    const Value& bv = G().m_Values[static_cast<std::size_t>(b)];
    const bool packB = bv.m_Constant && bDims.size() == 2 && bv.m_RegionInput >= 0 &&
                       m_RegionInputs[static_cast<std::size_t>(bv.m_RegionInput)].m_Constant >= 0;
    std::vector<PostOpCode> postOps;
    dnnl::post_ops po;
    std::vector<Arg> extra;
    const auto postOpsFor = [&](const std::function<memory::desc(const Dims&)>& operandMd) {
        for (std::size_t i = 0; i < n.m_PostOps.size(); ++i) {
            const PostOp& p = n.m_PostOps[i];
            if (p.m_Kind == PostOp::Kind::Eltwise) {
                po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha, p.m_Eltwise.m_Beta);
                postOps.push_back({PostOpCode::Kind::Eltwise, p.m_Eltwise, {}});
                continue;
            }
            const memory::desc md = operandMd(ValueDims(p.m_Value));
            po.append_binary(dnnl::algorithm::binary_add, md);
            postOps.push_back({PostOpCode::Kind::BinaryAdd, {}, md});
            extra.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1, Alias(EnsurePlain(p.m_Value), md)});
        }
    };
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto matmulPd = [&](ArtifactExprPtr srcExpr, ArtifactExprPtr weightsExpr, ArtifactExprPtr biasExpr,
                              ArtifactExprPtr dstExpr) {
        return [=](ArtifactExprPtr at) {
            std::vector<ArtifactExprPtr> args = {srcExpr, weightsExpr};
            if (biasExpr) args.push_back(biasExpr);
            args.push_back(dstExpr);
            return F::Call("dnnl::matmul::primitive_desc", {F::Call("dnnl::matmul::desc", args), at, F::Id("l.engine")});
        };
    };

    if (packB) {
        // 2-D constant weights: the rows of A (all its leading dims) against packed B.
        const memory::dim k = aDims.back();
        const memory::dim m = Product(aDims, 0, aDims.size() - 1);
        const bool transB = gemm && gd.m_TransB;
        const memory::dim nCols = transB ? bDims[0] : bDims[1];
        const Dims src2 = {m, k}, dst2 = {m, nCols};
        postOpsFor([&](const Dims& od) { return Product(od, 0, od.size()) == m * nCols ? PlainMd(dst2) : PlainMd({1, nCols}); });
        attr.set_post_ops(po);
        const memory::desc biasMd = PlainMd({1, nCols});
        const memory::desc srcMd = PlainMd(src2), dstMd = PlainMd(dst2);
        dnnl::matmul::desc md = biasValue >= 0 ? dnnl::matmul::desc(srcMd, AnyMd({k, nCols}), biasMd, dstMd)
                                               : dnnl::matmul::desc(srcMd, AnyMd({k, nCols}), dstMd);
        dnnl::matmul::primitive_desc pd(md, attr, Engine());
        const int p = NewPrimitive("dnnl::matmul::primitive_desc");
        Configure(p, n.m_Name, "dnnl::matmul", postOps,
                  matmulPd(DescExpr(srcMd, "a matmul input"),
                           F::Call("dnnl::memory::desc", {DimsExpr({k, nCols}), DataTypeExpr(memory::data_type::f32),
                                                          F::Id("dnnl::memory::format_tag::any")}),
                           biasValue >= 0 ? DescExpr(biasMd, "a bias") : nullptr, DescExpr(dstMd, "a matmul output")));
        const memory::desc user = transB ? memory::desc({k, nCols}, memory::data_type::f32, Dims{1, k}) : PlainMd({k, nCols});
        const int weights = PackConstant(b, n, "B", user, p, "weights_desc", pd.weights_desc(), gemm ? gd.m_Alpha : 1.0f);
        std::vector<Arg> args = {{DNNL_ARG_SRC, Alias(EnsurePlain(a), srcMd)}, {DNNL_ARG_WEIGHTS, weights}};
        if (biasValue >= 0) {
            args.push_back({DNNL_ARG_BIAS, PackConstant(biasValue, n, "the bias", biasMd, p, "bias_desc", pd.bias_desc(),
                                                        gemm ? gd.m_Beta : 1.0f)});
        }
        const int dst = NewInternal(dstMd);
        args.push_back({DNNL_ARG_DST, dst});
        args.insert(args.end(), extra.begin(), extra.end());
        AddStep(n.m_Name, p, std::move(args));
        Bind(out, Alias(dst, PlainMd(outDims)));
        return;
    }

    // General: batched, both operands computed (attention), numpy batch broadcasting.
    if (gemm) throw InvalidArgumentException("code generator (onednn): Gemm '" + n.m_Name + "' needs a constant 2-D B");
    const std::size_t rank = outDims.size();
    const memory::desc aMd = PlainMd(Prepend1s(aDims, rank)), bMd = PlainMd(Prepend1s(bDims, rank));
    const memory::desc dstMd = PlainMd(outDims);
    postOpsFor([&](const Dims& od) { return PlainMd(Prepend1s(od, rank)); });
    attr.set_post_ops(po);
    memory::desc biasMd;
    if (biasValue >= 0) biasMd = PlainMd(Prepend1s(ValueDims(biasValue), rank));
    dnnl::matmul::desc md = biasValue >= 0 ? dnnl::matmul::desc(aMd, bMd, biasMd, dstMd) : dnnl::matmul::desc(aMd, bMd, dstMd);
    dnnl::matmul::primitive_desc pd(md, attr, Engine());
    (void)pd;
    const int p = NewPrimitive("dnnl::matmul::primitive_desc");
    Configure(p, n.m_Name, "dnnl::matmul", postOps,
              matmulPd(DescExpr(aMd, "a matmul input"), DescExpr(bMd, "a matmul input"),
                       biasValue >= 0 ? DescExpr(biasMd, "a bias") : nullptr, DescExpr(dstMd, "a matmul output")));
    std::vector<Arg> args = {{DNNL_ARG_SRC, Alias(EnsurePlain(a), aMd)}, {DNNL_ARG_WEIGHTS, Alias(EnsurePlain(b), bMd)}};
    if (biasValue >= 0) args.push_back({DNNL_ARG_BIAS, Alias(EnsurePlain(biasValue), biasMd)});
    const int dst = NewInternal(dstMd);
    args.push_back({DNNL_ARG_DST, dst});
    args.insert(args.end(), extra.begin(), extra.end());
    AddStep(n.m_Name, p, std::move(args));
    Bind(out, dst);
}

void OneDnnCompiler::CompilePool(const Node& n) {
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
        padR.push_back((dst[2 + i] - 1) * s + (k - 1) * dl + 1 - src[2 + i] - pl);
    }
    dnnl::algorithm alg = dnnl::algorithm::pooling_max;
    if (d.m_Algorithm == PoolingAlgorithm::Average) {
        alg = d.m_Global || d.m_CountIncludePad ? dnnl::algorithm::pooling_avg_include_padding
                                                : dnnl::algorithm::pooling_avg_exclude_padding;
    }
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make = [&](const memory::desc& srcMd) {
        dnnl::pooling_v2_forward::desc pdsc(dnnl::prop_kind::forward_inference, alg, srcMd, AnyMd(dst), strides, kernel, dil, padL, padR);
        return dnnl::pooling_v2_forward::primitive_desc(pdsc, attr, Engine());
    };
    dnnl::pooling_v2_forward::primitive_desc pd;
    try {
        pd = make(m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md);
    } catch (const dnnl::error&) {
        pd = make(PlainMd(src));
    }
    const int p = NewPrimitive("dnnl::pooling_v2_forward::primitive_desc");
    const ArtifactExprPtr srcExpr = DescExpr(pd.src_desc(), "the input of '" + n.m_Name + "'");
    const ArtifactExprPtr dstExpr = DescExpr(pd.dst_desc(), "the output of '" + n.m_Name + "'");
    Configure(p, n.m_Name, "dnnl::pooling_v2_forward", {}, [&](ArtifactExprPtr a) {
        return F::Call("dnnl::pooling_v2_forward::primitive_desc",
                       {F::Call("dnnl::pooling_v2_forward::desc",
                                {F::Id("dnnl::prop_kind::forward_inference"), AlgorithmExpr(alg), srcExpr, dstExpr, DimsExpr(strides),
                                 DimsExpr(kernel), DimsExpr(dil), DimsExpr(padL), DimsExpr(padR)}),
                        a, F::Id("l.engine")});
    });
    const int srcMem = Ensure(x, pd.src_desc());
    const int dstMem = NewInternal(pd.dst_desc());
    AddStep(n.m_Name, p, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_DST, dstMem}});
    Bind(out, dstMem);
}

void OneDnnCompiler::CompileEltwise(int index, const Node& n) {
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const int srcMem = MemOf(x);
    const memory::desc md = m_Mems[static_cast<std::size_t>(srcMem)].m_Md;
    const int dstMem = CanOverwrite(x, index) ? srcMem : NewInternal(md);
    int from = srcMem;
    const ArtifactExprPtr mdExpr = DescExpr(md, "the input of '" + n.m_Name + "'");
    for (const cpuacc::EltwiseOp& e : n.m_Eltwise) {
        dnnl::eltwise_forward::desc ed(dnnl::prop_kind::forward_inference, static_cast<dnnl::algorithm>(e.m_Algorithm), md,
                                       e.m_Alpha, e.m_Beta);
        dnnl::eltwise_forward::primitive_desc check(ed, Engine());
        (void)check;
        const int p = NewPrimitive("dnnl::eltwise_forward::primitive_desc");
        Configure(p, n.m_Name, "dnnl::eltwise_forward", {}, [&](ArtifactExprPtr a) {
            return F::Call("dnnl::eltwise_forward::primitive_desc",
                           {F::Call("dnnl::eltwise_forward::desc", {F::Id("dnnl::prop_kind::forward_inference"), AlgorithmExpr(e.m_Algorithm),
                                                                    mdExpr, F::Float(e.m_Alpha), F::Float(e.m_Beta)}),
                            a, F::Id("l.engine")});
        });
        AddStep(n.m_Name, p, {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, dstMem}});
        from = dstMem;
    }
    if (n.m_Eltwise.empty()) AddReorder(srcMem, dstMem, n.m_Name);
    Bind(out, dstMem);
}

void OneDnnCompiler::CompileErf(const Node& n) {
    const int src = EnsurePlain(n.m_Inputs[0]);
    const int out = n.m_Outputs[0];
    const int dst = NewInternal(PlainMd(ValueDims(out)));
    Step s;
    s.m_Layer = n.m_Name;
    s.m_Args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    s.m_Count = G().m_Values[static_cast<std::size_t>(out)].m_Info.GetNumElements();
    m_Steps.push_back(std::move(s));
    Bind(out, dst);
}

void OneDnnCompiler::CompileBinary(int index, const Node& n) {
    const auto op = std::get<ElementwiseBinaryDescriptor>(n.m_Descriptor).m_Operation;
    dnnl::algorithm alg = dnnl::algorithm::binary_add;
    switch (op) {
        case BinaryOperation::Add: alg = dnnl::algorithm::binary_add; break;
        case BinaryOperation::Sub: alg = dnnl::algorithm::binary_sub; break;
        case BinaryOperation::Mul: alg = dnnl::algorithm::binary_mul; break;
        case BinaryOperation::Div: alg = dnnl::algorithm::binary_div; break;
        case BinaryOperation::Maximum: alg = dnnl::algorithm::binary_max; break;
        case BinaryOperation::Minimum: alg = dnnl::algorithm::binary_min; break;
        default: throw InvalidArgumentException("code generator (onednn): '" + n.m_Name + "': unsupported binary operation");
    }
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    int a = n.m_Inputs[0], b = n.m_Inputs[1];
    if (ValueDims(a) != outDims) std::swap(a, b);  // commutative (checked by CpuAcc's layer support)
    const std::size_t rank = outDims.size();
    // First with the inputs' layouts as they are (blocked stays blocked), else plain - decided
    // before anything is added, so a failed attempt leaves no trace.
    const auto layouts = [&](bool plain) {
        const memory::desc src0 = plain ? PlainMd(ValueDims(a)) : m_Mems[static_cast<std::size_t>(MemOf(a))].m_Md;
        const Dims bDims = Prepend1s(ValueDims(b), rank);
        const std::optional<memory::format_tag> tag = plain ? std::nullopt : BlockedTagOf(src0);
        bool perChannel = tag.has_value();
        for (std::size_t i = 0; i < rank && perChannel; ++i) perChannel = i == 1 || bDims[i] == 1;
        memory::desc src1;
        int kind = 0;  // 0: b as a, 1: per-channel blocked, 2: plain broadcast
        if (ValueDims(b) == outDims) {
            src1 = src0;
        } else if (perChannel) {
            src1 = memory::desc(bDims, src0.data_type(), *tag);
            kind = 1;
        } else {
            src1 = PlainMd(bDims);
            kind = 2;
        }
        dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, src0, src1, src0), Engine());
        (void)pd;
        return std::make_tuple(src0, src1, kind);
    };
    bool plain = false;
    memory::desc src0, src1;
    int kind = 0;
    try {
        std::tie(src0, src1, kind) = layouts(false);
    } catch (const dnnl::error&) {
        plain = true;
        std::tie(src0, src1, kind) = layouts(true);
    }
    const int am = plain ? EnsurePlain(a) : MemOf(a);
    const int bm = kind == 2 ? Alias(EnsurePlain(b), src1) : Ensure(b, src1);
    const int p = NewPrimitive("dnnl::binary::primitive_desc");
    const ArtifactExprPtr src0Expr = DescExpr(src0, "the input of '" + n.m_Name + "'");
    const ArtifactExprPtr src1Expr = DescExpr(src1, "the input of '" + n.m_Name + "'");
    Configure(p, n.m_Name, "dnnl::binary", {}, [&](ArtifactExprPtr at) {
        return F::Call("dnnl::binary::primitive_desc",
                       {F::Call("dnnl::binary::desc", {AlgorithmExpr(alg), src0Expr, src1Expr, src0Expr}), at, F::Id("l.engine")});
    });
    const bool inPlace = CanOverwrite(a, index) && m_ValueMem[static_cast<std::size_t>(a)] == am &&
                         m_Mems[static_cast<std::size_t>(bm)].m_Storage != m_Mems[static_cast<std::size_t>(am)].m_Storage;
    const int dst = inPlace ? am : NewInternal(src0);
    AddStep(n.m_Name, p, {{DNNL_ARG_SRC_0, am}, {DNNL_ARG_SRC_1, bm}, {DNNL_ARG_DST, dst}});
    Bind(out, dst);
}

void OneDnnCompiler::CompileSoftmax(const Node& n) {
    const auto& d = std::get<SoftmaxDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims dims = ValueDims(x);
    const int rank = static_cast<int>(dims.size());
    const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
    const int src = EnsurePlain(x);
    const memory::desc md = PlainMd(dims);
    const int dst = NewInternal(md);
    const dnnl::algorithm alg = d.m_Log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    dnnl::softmax_v2_forward::primitive_desc check(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, md, md, axis), Engine());
    (void)check;
    const int p = NewPrimitive("dnnl::softmax_v2_forward::primitive_desc");
    const ArtifactExprPtr mdExpr = DescExpr(md, "a softmax tensor");
    Configure(p, n.m_Name, "dnnl::softmax_v2_forward", {}, [&](ArtifactExprPtr a) {
        return F::Call("dnnl::softmax_v2_forward::primitive_desc",
                       {F::Call("dnnl::softmax_v2_forward::desc",
                                {F::Id("dnnl::prop_kind::forward_inference"), AlgorithmExpr(alg), mdExpr, mdExpr, F::Int(axis)}),
                        a, F::Id("l.engine")});
    });
    AddStep(n.m_Name, p, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    Bind(out, dst);
}

void OneDnnCompiler::CompileLayerNorm(const Node& n) {
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
    dnnl::layer_normalization_forward::primitive_desc check(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md2, d.m_Eps,
                                                static_cast<dnnl::normalization_flags>(flags)),
        Engine());
    (void)check;
    const int p = NewPrimitive("dnnl::layer_normalization_forward::primitive_desc");
    const ArtifactExprPtr mdExpr = DescExpr(md2, "a layer normalization tensor");
    Configure(p, n.m_Name, "dnnl::layer_normalization_forward", {}, [&](ArtifactExprPtr a) {
        return F::Call("dnnl::layer_normalization_forward::primitive_desc",
                       {F::Call("dnnl::layer_normalization_forward::desc",
                                {F::Id("dnnl::prop_kind::forward_inference"), mdExpr, F::Float(d.m_Eps),
                                 F::Call("static_cast<dnnl::normalization_flags>", {F::Size(flags)})}),
                        a, F::Id("l.engine")});
    });
    const int dst = NewInternal(md2);
    std::vector<Arg> args = {{DNNL_ARG_SRC, Alias(EnsurePlain(x), md2)}, {DNNL_ARG_DST, dst}};
    if (gamma >= 0) args.push_back({DNNL_ARG_SCALE, Alias(EnsurePlain(gamma), PlainMd({inner}))});
    if (beta >= 0) args.push_back({DNNL_ARG_SHIFT, Alias(EnsurePlain(beta), PlainMd({inner}))});
    AddStep(n.m_Name, p, std::move(args));
    Bind(out, Alias(dst, PlainMd(ValueDims(out))));
}

void OneDnnCompiler::CompileConcat(int index, const Node& n) {
    const auto& d = std::get<ConcatDescriptor>(n.m_Descriptor);
    const int out = n.m_Outputs[0];
    if (auto t = m_ConcatTargets.find(index); t != m_ConcatTargets.end() && t->second.m_Written == n.m_Inputs.size()) {
        Bind(out, AddMem(t->second.m_Storage, t->second.m_Md));  // every part is already in place
        return;
    }
    const Dims outDims = ValueDims(out);
    const int rank = static_cast<int>(outDims.size());
    const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
    const auto layouts = [&](bool plain) {
        std::vector<memory::desc> mds;
        for (int v : n.m_Inputs) mds.push_back(plain ? PlainMd(ValueDims(v)) : m_Mems[static_cast<std::size_t>(MemOf(v))].m_Md);
        dnnl::concat::primitive_desc pd(plain ? PlainMd(outDims) : AnyMd(outDims), axis, mds, Engine());
        return std::make_pair(mds, pd.dst_desc());
    };
    bool plain = false;
    std::pair<std::vector<memory::desc>, memory::desc> chosen;
    try {
        chosen = layouts(false);
    } catch (const dnnl::error&) {
        plain = true;
        chosen = layouts(true);
    }
    std::vector<Arg> args;
    std::vector<ArtifactExprPtr> srcExprs;
    for (std::size_t i = 0; i < n.m_Inputs.size(); ++i) {
        const int v = n.m_Inputs[i];
        args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), plain ? EnsurePlain(v) : MemOf(v)});
        srcExprs.push_back(DescExpr(chosen.first[i], "an input of '" + n.m_Name + "'"));
    }
    const int p = NewPrimitive("dnnl::concat::primitive_desc");
    const ArtifactExprPtr dstExpr = DescExpr(chosen.second, "the output of '" + n.m_Name + "'");
    Configure(p, n.m_Name, "dnnl::concat", {}, [&](ArtifactExprPtr a) {
        return F::Call("dnnl::concat::primitive_desc",
                       {dstExpr, F::Int(axis), F::Braces(srcExprs, "std::vector<dnnl::memory::desc>"), F::Id("l.engine"), a});
    });
    const int dst = NewInternal(chosen.second);
    args.push_back({DNNL_ARG_DST, dst});
    AddStep(n.m_Name, p, std::move(args));
    Bind(out, dst);
}

void OneDnnCompiler::CompileTranspose(const Node& n) {
    const auto& d = std::get<TransposeDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Dims in = ValueDims(x), outDims = ValueDims(out);
    const std::size_t rank = in.size();
    std::vector<unsigned int> perm = d.m_Perm;
    if (perm.empty()) {
        for (std::size_t i = 0; i < rank; ++i) perm.push_back(static_cast<unsigned int>(rank - 1 - i));
    }
    std::vector<unsigned int> moved;
    for (unsigned int p : perm) {
        if (in[p] != 1) moved.push_back(p);
    }
    if (std::is_sorted(moved.begin(), moved.end())) {  // only size-1 dims move: a relabelling
        Bind(out, Alias(EnsurePlain(x), PlainMd(outDims)));
        return;
    }
    const Dims inStrides = StridesOf(in);
    Dims permStrides(rank);
    for (std::size_t i = 0; i < rank; ++i) permStrides[i] = inStrides[perm[i]];
    const int src = Alias(EnsurePlain(x), memory::desc(outDims, memory::data_type::f32, permStrides));
    const int dst = NewInternal(PlainMd(outDims));
    AddReorder(src, dst, n.m_Name);
    Bind(out, dst);
}

void OneDnnCompiler::CompileReduce(const Node& n) {
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
    const int src = EnsurePlain(x);
    if (reduced == in) {
        Bind(out, Alias(src, PlainMd(ValueDims(out))));
        return;
    }
    dnnl::algorithm alg = dnnl::algorithm::reduction_mean;
    switch (d.m_Operation) {
        case ReduceOperation::Mean: alg = dnnl::algorithm::reduction_mean; break;
        case ReduceOperation::Sum: alg = dnnl::algorithm::reduction_sum; break;
        case ReduceOperation::Max: alg = dnnl::algorithm::reduction_max; break;
        case ReduceOperation::Min: alg = dnnl::algorithm::reduction_min; break;
        default: throw InvalidArgumentException("code generator (onednn): '" + n.m_Name + "': unsupported reduction");
    }
    const memory::desc srcMd = PlainMd(in), dstMd = PlainMd(reduced);
    dnnl::reduction::primitive_desc check(dnnl::reduction::desc(alg, srcMd, dstMd, 0.0f, 0.0f), Engine());
    (void)check;
    const int p = NewPrimitive("dnnl::reduction::primitive_desc");
    const ArtifactExprPtr srcExpr = DescExpr(srcMd, "a reduction input"), dstExpr = DescExpr(dstMd, "a reduction output");
    Configure(p, n.m_Name, "dnnl::reduction", {}, [&](ArtifactExprPtr a) {
        return F::Call("dnnl::reduction::primitive_desc",
                       {F::Call("dnnl::reduction::desc", {AlgorithmExpr(alg), srcExpr, dstExpr, F::Float(0.0f), F::Float(0.0f)}), a,
                        F::Id("l.engine")});
    });
    const int dst = NewInternal(dstMd);
    AddStep(n.m_Name, p, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    Bind(out, Alias(dst, PlainMd(ValueDims(out))));
}

void OneDnnCompiler::CompileSplitSlice(const Node& n) {
    const int x = n.m_Inputs[0];
    const Dims in = ValueDims(x);
    const int rank = static_cast<int>(in.size());
    const int src = EnsurePlain(x);
    const memory::desc srcMd = m_Mems[static_cast<std::size_t>(src)].m_Md;
    std::vector<Dims> offsets;
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
        }
        offsets.push_back(off);
    }
    for (std::size_t k = 0; k < n.m_Outputs.size(); ++k) {
        const int out = n.m_Outputs[k];
        const Dims od = ValueDims(out);
        const int view = Alias(src, srcMd.submemory_desc(od, offsets[k]));
        const int dst = NewInternal(PlainMd(od));
        AddReorder(view, dst, n.m_Name);
        Bind(out, dst);
    }
}

void OneDnnCompiler::CompileNode(int index) {
    const Node& n = G().m_Nodes[static_cast<std::size_t>(index)];
    if (n.m_Dead) return;
    try {
        switch (n.m_Kind) {
            case NodeKind::Conv: CompileConv(index, n); break;
            case NodeKind::MatMul: CompileMatMul(n); break;
            case NodeKind::Pool: CompilePool(n); break;
            case NodeKind::Eltwise: CompileEltwise(index, n); break;
            case NodeKind::Erf: CompileErf(n); break;
            case NodeKind::Binary: CompileBinary(index, n); break;
            case NodeKind::Softmax: CompileSoftmax(n); break;
            case NodeKind::LayerNorm: CompileLayerNorm(n); break;
            case NodeKind::Concat: CompileConcat(index, n); break;
            case NodeKind::Reshape:
                Bind(n.m_Outputs[0], Alias(EnsurePlain(n.m_Inputs[0]), PlainMd(ValueDims(n.m_Outputs[0]))));
                break;
            case NodeKind::Transpose: CompileTranspose(n); break;
            case NodeKind::Reduce: CompileReduce(n); break;
            case NodeKind::Split:
            case NodeKind::Slice: CompileSplitSlice(n); break;
            // CpuAcc's newer node kinds: their layers are refused by the target's support check
            // (below); RmsNorm and QuantizedAdd are fusions CpuAcc makes of several layers, so
            // they can be met here.
            case NodeKind::Recurrent:
            case NodeKind::BatchNorm:
            case NodeKind::Pad:
            case NodeKind::Resize:
            case NodeKind::Expand:
            case NodeKind::RmsNorm:
            case NodeKind::Attention:
            case NodeKind::Quantize:
            case NodeKind::Dequantize:
            case NodeKind::QuantizedAdd:
            case NodeKind::ElementwiseChain:
            case NodeKind::Where:
            case NodeKind::DynamicQuantize:
            case NodeKind::Cast:
                throw InvalidArgumentException("the onednn target cannot generate layer '" + n.m_Name + "': CpuAcc runs it as a " +
                                               cpuacc::GetNodeKindName(n.m_Kind) +
                                               " node, which the onednn target has no generator for yet");
        }
    } catch (const dnnl::error& e) {
        throw InvalidArgumentException("code generator (onednn): oneDNN cannot compile " +
                                       std::string(cpuacc::GetNodeKindName(n.m_Kind)) + " '" + n.m_Name + "': " + e.what());
    }
}

void OneDnnCompiler::CompileOutputs() {
    std::vector<bool> retargeted(m_Storages.size(), false);
    for (std::size_t k = 0; k < G().m_OutputValues.size(); ++k) {
        const int v = G().m_OutputValues[k];
        const int artifactOutput = m_RegionOutputOf[k];
        const int mem = MemOf(v);
        const memory::desc plain = PlainMd(ValueDims(v));
        const std::size_t sid = static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(mem)].m_Storage);
        Storage& s = m_Storages[sid];
        const std::size_t bytes = G().m_Values[static_cast<std::size_t>(v)].m_Info.GetNumBytes();
        // Computed straight into the output tensor when plain and alone in its storage.
        if (s.m_Kind == Storage::Kind::Internal && m_Mems[static_cast<std::size_t>(mem)].m_Md == plain && s.m_Bytes == bytes &&
            m_Mems[static_cast<std::size_t>(mem)].m_ByteOffset == 0 && !retargeted[sid]) {
            bool alone = true;
            for (int other : m_StorageValues[sid]) {
                if (other != v && G().IsRegionOutput(other)) alone = false;
            }
            if (alone) {
                s.m_Kind = Storage::Kind::Output;
                s.m_Index = artifactOutput;
                retargeted[sid] = true;
                continue;
            }
        }
        const int outStorage = AddStorage(Storage::Kind::Output, artifactOutput, bytes);
        retargeted.push_back(true);
        AddReorder(mem, AddMem(outStorage, plain), "output '" + m_Gen.m_Graph.GetOutputs()[static_cast<std::size_t>(artifactOutput)].m_Name + "'");
    }
}

const std::string& OneDnnCompiler::MemberOf(int mem) {
    Mem& m = m_Mems[static_cast<std::size_t>(mem)];
    if (m.m_Member.empty()) {
        m.m_Member = "mem_" + std::to_string(m_NumMems++);
        m_Gen.AddLayerMember("dnnl::memory", m.m_Member);
    }
    return m.m_Member;
}

// ---- the artifact --------------------------------------------------------------------------------

void OneDnnCompiler::Begin() {
    const ArtifactGraph& graph = m_Gen.m_Graph;
    m_Gen.Module().AddSourceInclude("oneapi/dnnl/dnnl.hpp");
    m_Gen.Module().AddSourceInclude("algorithm");
    m_Gen.Module().AddSourceInclude("vector");
    m_Gen.UseSnippet("resources/OneDnnSupport.hpp");
    m_Gen.Layers().AddVariable(ArtifactVisibility::Public, "dnnl::engine", "engine", {F::Id("dnnl::engine::kind::cpu"), F::Int(0)});
    m_Gen.Layers().AddVariable(ArtifactVisibility::Public, "dnnl::stream", "stream", {F::Id("engine")});
    m_Gen.Configure().AddVariable("std::size_t", "scratchpad_bytes", {}, {F::Size(0)});

    // The whole graph as one region, the way CpuAcc's OptimizeSubgraph hands a sub-graph to its
    // region builder: the layers, the input slots fed from outside (network inputs, constants),
    // the output slots the network's outputs read.
    std::vector<IConnectableLayer*> layers;
    std::vector<IInputSlot*> inputSlots;
    std::vector<IOutputSlot*> outputSlots;
    for (const GraphLayer& l : graph.GetLayers()) {
        // The region builder reads the layers only (its signature takes them as the optimizer does).
        auto* layer = const_cast<IConnectableLayer*>(l.m_Layer);
        layers.push_back(layer);
        for (std::size_t i = 0; i < l.m_Inputs.size(); ++i) {
            const GraphTensor& t = graph.GetTensor(l.m_Inputs[i]);
            if (t.m_Producer >= 0) continue;
            inputSlots.push_back(&layer->GetInputSlot(static_cast<unsigned int>(i)));
            RegionInput r;
            if (t.m_Constant) r.m_Constant = l.m_Inputs[i];
            else r.m_ArtifactInput = t.m_Input;
            m_RegionInputs.push_back(r);
        }
    }
    for (std::size_t o = 0; o < graph.GetOutputs().size(); ++o) {
        const int t = graph.GetOutputs()[o].m_Tensor;
        if (graph.GetTensor(t).m_Producer < 0) {
            m_CopiedOutputs.emplace_back(static_cast<int>(o), t);
            continue;
        }
        outputSlots.push_back(const_cast<IOutputSlot*>(graph.GetTensor(t).m_Slot));
        m_RegionOutputOf.push_back(static_cast<int>(o));
    }
    try {
        // Attention stays as its matmul, softmax and matmul primitives: the artifact is oneDNN
        // primitives only, CpuAcc's own attention kernel is not part of it.
        cpuacc::FusionOptions fusions;
        fusions.m_Attention = false;
        m_Region = cpuacc::BuildRegionGraph(SubgraphView(layers, inputSlots, outputSlots), fusions);
    } catch (const Exception& e) {
        throw InvalidArgumentException(std::string("code generator (onednn): ") + e.what());
    }
    m_ValueMem.assign(G().m_Values.size(), -1);
    m_Converted.assign(G().m_Values.size(), {});
    m_InputStorage.assign(m_RegionInputs.size(), -1);
    PlanInPlaceConcats();
}

void OneDnnCompiler::Finish() {
    CompileOutputs();
    const ArtifactGraph& graph = m_Gen.m_Graph;

    // Lifetimes, then the static plan of the arena.
    for (std::size_t i = 0; i < m_Steps.size(); ++i) {
        for (const Arg& a : m_Steps[i].m_Args) {
            Storage& s = m_Storages[static_cast<std::size_t>(m_Mems[static_cast<std::size_t>(a.m_Mem)].m_Storage)];
            s.m_First = std::min(s.m_First, static_cast<int>(i));
            s.m_Last = std::max(s.m_Last, static_cast<int>(i));
        }
    }
    for (Storage& s : m_Storages) {
        if (s.m_Kind == Storage::Kind::Internal && s.m_Last >= 0) s.m_Buffer = m_Gen.Plan().AddBuffer(s.m_Bytes, s.m_First, s.m_Last);
    }
    const int end = static_cast<int>(m_Steps.size());

    ArtifactBlock& configure = m_Gen.Configure();
    ArtifactBlock& allocate = m_Gen.Allocate();
    ArtifactBlock& weights = m_Gen.ReadWeights();
    ArtifactBlock& run = m_Gen.Inference();

    // The packed weights: sized by the layouts oneDNN chose for this CPU.
    configure.AddComment("The scratchpad every primitive shares, and the packed weights after it.");
    configure.AddAssign(F::Id("scratchpad_bytes"),
                        F::Bin(ArtifactBinOp::Mult, F::Bin(ArtifactBinOp::Div, F::Bin(ArtifactBinOp::Plus, F::Id("scratchpad_bytes"), F::Size(63)), F::Size(64)),
                               F::Size(64)));
    configure.AddVariable("std::size_t", "packed_bytes", {}, {F::Size(0)});
    const auto rounded = [](ArtifactExprPtr bytes) {
        return F::Bin(ArtifactBinOp::Mult, F::Bin(ArtifactBinOp::Div, F::Bin(ArtifactBinOp::Plus, std::move(bytes), F::Size(63)), F::Size(64)),
                      F::Size(64));
    };
    for (const Packed& p : m_Packed) {
        const Mem& m = m_Mems[static_cast<std::size_t>(p.m_Mem)];
        configure.Add(F::Bin(ArtifactBinOp::PlusAssign, F::Id("packed_bytes"),
                             rounded(F::Call("get_size", {}, m.m_RuntimeMd, ArtifactCallType::Object))));
    }
    m_Gen.SetExtraArenaBytes(F::Bin(ArtifactBinOp::Plus, F::Id("scratchpad_bytes"), F::Id("packed_bytes")));

    // Allocate: the interface tensors' own buffers, then every memory object on the arena.
    const auto own = [&](const std::string& member, const TensorInfo& info) {
        const int buffer = m_Gen.Plan().AddBuffer(info.GetNumBytes(), 0, end);
        allocate.AddAssign(F::Id(member + ".data"), m_Gen.ArenaPointer(buffer, "void*"));
    };
    for (std::size_t i = 0; i < graph.GetInputs().size(); ++i) {
        own(m_Gen.InputMember(static_cast<int>(i)), graph.GetTensor(graph.GetInputs()[i]).m_Info);
    }
    for (std::size_t o = 0; o < graph.GetOutputs().size(); ++o) {
        own(m_Gen.OutputMember(static_cast<int>(o)), graph.GetTensor(graph.GetOutputs()[o].m_Tensor).m_Info);
    }
    const bool anyPrimitive = std::any_of(m_Steps.begin(), m_Steps.end(), [](const Step& s) { return s.m_Pd >= 0; });
    if (anyPrimitive) {
        allocate.AddVariable("unsigned char* const", "scratchpad", {}, {F::Bin(ArtifactBinOp::Plus, F::Id("l.arena"), m_Gen.ArenaSize())});
    }
    if (!m_Packed.empty()) {
        allocate.AddVariable("unsigned char*", "packed", {},
                             {F::Bin(ArtifactBinOp::Plus, F::Bin(ArtifactBinOp::Plus, F::Id("l.arena"), m_Gen.ArenaSize()),
                                     F::Id("scratchpad_bytes"))});
    }
    std::vector<int> rebound;  // memories on the interface tensors, re-pointed by Inference()
    std::vector<int> used;
    std::vector<bool> isUsed(m_Mems.size(), false);
    for (const Step& s : m_Steps) {
        for (const Arg& a : s.m_Args) {
            if (!isUsed[static_cast<std::size_t>(a.m_Mem)]) used.push_back(a.m_Mem);
            isUsed[static_cast<std::size_t>(a.m_Mem)] = true;
        }
    }
    std::sort(used.begin(), used.end());
    const auto create = [&](ArtifactBlock& block, int mem, ArtifactExprPtr md, ArtifactExprPtr pointer) {
        block.AddAssign(MemRef(mem), F::Call("dnnl::memory", {std::move(md), F::Id("l.engine"), std::move(pointer)}));
    };
    for (int mem : used) {
        const Mem& m = m_Mems[static_cast<std::size_t>(mem)];
        const Storage& s = m_Storages[static_cast<std::size_t>(m.m_Storage)];
        switch (s.m_Kind) {
            case Storage::Kind::Internal:
                create(allocate, mem, DescExpr(m.m_Md, "an intermediate tensor"), m_Gen.ArenaPointer(s.m_Buffer, "void*", m.m_ByteOffset));
                break;
            case Storage::Kind::Packed:
                create(allocate, mem, m.m_RuntimeMd, F::Id("packed"));
                allocate.Add(F::Bin(ArtifactBinOp::PlusAssign, F::Id("packed"),
                                    rounded(F::Call("get_size", {}, m.m_RuntimeMd, ArtifactCallType::Object))));
                break;
            case Storage::Kind::Output: {
                ArtifactExprPtr pointer = m_Gen.OutputPointer(s.m_Index, "unsigned char*");
                if (m.m_ByteOffset) pointer = F::Bin(ArtifactBinOp::Plus, pointer, F::Size(m.m_ByteOffset));
                create(allocate, mem, DescExpr(m.m_Md, "an output"), pointer);
                rebound.push_back(mem);
                break;
            }
            case Storage::Kind::Input: {
                const RegionInput& r = m_RegionInputs[static_cast<std::size_t>(s.m_Index)];
                if (r.m_Constant >= 0) {
                    // A constant read as it is (not packed): in place in the weights file, once it is open.
                    ArtifactExprPtr pointer = F::Call("const_cast<unsigned char*>", {m_Gen.WeightPointer(r.m_Constant, "const unsigned char*")});
                    if (m.m_ByteOffset) pointer = F::Bin(ArtifactBinOp::Plus, pointer, F::Size(m.m_ByteOffset));
                    create(weights, mem, DescExpr(m.m_Md, "a constant"), pointer);
                } else {
                    ArtifactExprPtr pointer = m_Gen.InputPointer(r.m_ArtifactInput, "unsigned char*");
                    if (m.m_ByteOffset) pointer = F::Bin(ArtifactBinOp::Plus, pointer, F::Size(m.m_ByteOffset));
                    create(allocate, mem, DescExpr(m.m_Md, "an input"), pointer);
                    rebound.push_back(mem);
                }
                break;
            }
        }
    }
    // Each primitive's scratchpad (where the running CPU's kernel wants one) and argument list.
    for (const Step& s : m_Steps) {
        if (s.m_Pd < 0) continue;
        const std::string n = std::to_string(s.m_Pd);
        const ArtifactExprPtr sp = F::Call("scratchpad_desc", {}, F::Id("l.pd_" + n), ArtifactCallType::Object);
        auto branch = weights.AddIf(F::Bin(ArtifactBinOp::Greater, F::Call("get_size", {}, sp, ArtifactCallType::Object), F::Size(0)));
        branch->GetBlock().AddAssign(F::Id("l.scratchpad_" + n), F::Call("dnnl::memory", {sp, F::Id("l.engine"), F::Id("scratchpad")}));
    }
    weights.AddComment("The weights, reordered into the layouts the primitives were configured with.");
    for (const Packed& p : m_Packed) {
        weights.AddCall("trellis::artifact::PackWeights",
                        {F::Id("l.engine"), F::Id("l.stream"), p.m_UserMd, m_Gen.WeightPointer(p.m_Tensor, "const void*"),
                         MemRef(p.m_Mem), F::Float(p.m_Scale)});
    }
    weights.AddComment("Each primitive's arguments.");
    for (const Step& s : m_Steps) {
        if (s.m_Pd < 0) continue;
        const std::string n = std::to_string(s.m_Pd);
        std::vector<ArtifactExprPtr> list;
        for (const Arg& a : s.m_Args) {
            list.push_back(F::Braces({F::Id(ArgName(a.m_Arg)), F::Call("get", {}, MemRef(a.m_Mem), ArtifactCallType::Object)}));
        }
        weights.AddAssign(F::Id("l.args_" + n), F::Braces(list));
        auto branch = weights.AddIf(F::Id("l.scratchpad_" + n));
        branch->GetBlock().AddCall("push_back",
                                   {F::Braces({F::Id("DNNL_ARG_SCRATCHPAD"),
                                               F::Call("get", {}, F::Id("l.scratchpad_" + n), ArtifactCallType::Object)},
                                              "dnnl_exec_arg_t")},
                                   F::Id("l.args_" + n), ArtifactCallType::Object);
    }

    // Inference(): the interface tensors where the caller points them, then the steps.
    run.AddComment("The memories on the input and output tensors follow their `data`.");
    for (int mem : rebound) {
        const Mem& m = m_Mems[static_cast<std::size_t>(mem)];
        const Storage& s = m_Storages[static_cast<std::size_t>(m.m_Storage)];
        ArtifactExprPtr pointer = s.m_Kind == Storage::Kind::Output
                                      ? m_Gen.OutputPointer(s.m_Index, "unsigned char*")
                                      : m_Gen.InputPointer(m_RegionInputs[static_cast<std::size_t>(s.m_Index)].m_ArtifactInput, "unsigned char*");
        if (m.m_ByteOffset) pointer = F::Bin(ArtifactBinOp::Plus, pointer, F::Size(m.m_ByteOffset));
        run.AddCall("set_data_handle", {pointer}, MemRef(mem), ArtifactCallType::Object);
    }
    for (const Step& s : m_Steps) {
        if (s.m_Pd >= 0) {
            const std::string n = std::to_string(s.m_Pd);
            run.AddCall("trellis::artifact::Execute", {F::Id("l.prim_" + n), F::Id("l.stream"), F::Id("l.args_" + n), F::String(s.m_Layer)});
        } else {
            run.AddCall("trellis::artifact::Erf",
                        {F::Call("static_cast<const float*>", {F::Call("get_data_handle", {}, MemRef(s.m_Args[0].m_Mem), ArtifactCallType::Object)}),
                         F::Call("static_cast<float*>", {F::Call("get_data_handle", {}, MemRef(s.m_Args[1].m_Mem), ArtifactCallType::Object)}),
                         F::Size(s.m_Count)});
        }
    }
    for (const auto& [o, t] : m_CopiedOutputs) {
        m_Gen.Module().AddSourceInclude("cstring");
        const GraphTensor& g = graph.GetTensor(t);
        run.AddComment("output '" + graph.GetOutputs()[static_cast<std::size_t>(o)].m_Name + "': a copy of " +
                       (g.m_Constant ? "a constant" : "an input"));
        run.AddCall("std::memcpy", {m_Gen.OutputPointer(o, "void*"),
                                    g.m_Constant ? m_Gen.WeightPointer(t, "const void*") : m_Gen.InputPointer(g.m_Input, "const void*"),
                                    F::Size(g.m_Info.GetNumBytes())});
    }
    run.AddCall("wait", {}, F::Id("l.stream"), ArtifactCallType::Object);
}

// ---- OneDnnOpGenerator ---------------------------------------------------------------------------

OneDnnOpGenerator::OneDnnOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options)
    : ArtifactOpGenerator(graph, options, "onednn"), m_Compiler(std::make_unique<OneDnnCompiler>(*this)) {}

OneDnnOpGenerator::~OneDnnOpGenerator() = default;

void OneDnnOpGenerator::Begin() { m_Compiler->Begin(); }

void OneDnnOpGenerator::VisitLayer(const GraphLayer& layer, int index) {
    // The region graph has one node per layer, in the same order; fused layers are dead nodes.
    m_Compiler->CompileNode(index);
    (void)layer;
}

void OneDnnOpGenerator::Finish() { m_Compiler->Finish(); }

// ---- the target ----------------------------------------------------------------------------------

namespace {

class OneDnnTarget final : public ArtifactTarget {
public:
    const char* GetName() const override { return "onednn"; }

    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) const override {
        for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
            for (const TensorInfo& t : *infos) {
                if (!t.GetShape().AreAllDimensionsSpecified()) {
                    if (reason) {
                        *reason = std::string(GetLayerTypeName(layer.m_Type)) + ": shape " + t.GetShape().ToString() +
                                  " is not static (pin the input dims with --shape)";
                    }
                    return false;
                }
            }
        }
        if (!layer.m_Descriptor) {
            if (reason) *reason = "the layer has no descriptor";
            return false;
        }
        std::vector<bool> constants;
        for (const ConstTensor* c : layer.m_ConstantInputs) constants.push_back(c != nullptr);
        std::string why;
        if (!cpuacc::IsSupportedLayer(layer.m_Type, *layer.m_Descriptor, info.m_InputTensorInfos, info.m_OutputTensorInfos,
                                      constants, &why)) {
            // CpuAcc's rules, which this target shares: say so instead of naming CpuAcc.
            if (reason) *reason = why + " (the onednn target generates what CpuAcc runs)";
            return false;
        }
        switch (layer.m_Type) {
            case LayerType::Recurrent:
            case LayerType::BatchNormalization:
            case LayerType::Pad:
            case LayerType::Resize:
            case LayerType::Expand:
            case LayerType::Attention:
            case LayerType::RmsNormalization:
            case LayerType::QuantizeLinear:
            case LayerType::DequantizeLinear:
            case LayerType::DynamicQuantizeLinear:
            case LayerType::Where:
                if (reason) {
                    *reason = std::string(GetLayerTypeName(layer.m_Type)) +
                              ": CpuAcc runs it, the onednn target has no generator for it yet";
                }
                return false;
            default: return true;
        }
    }

    std::unique_ptr<ArtifactOpGenerator> CreateOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options) const override {
        return std::make_unique<OneDnnOpGenerator>(graph, options);
    }

    std::string GetCMakeDependencies(const std::string& library) const override {
        return "find_package(dnnl CONFIG REQUIRED)\n"
               "find_package(OpenMP)\n"
               "target_link_libraries(" + library + " PUBLIC DNNL::dnnl)\n"
               "if(OpenMP_CXX_FOUND)\n"
               "  target_link_libraries(" + library + " PRIVATE OpenMP::OpenMP_CXX)\n"
               "endif()\n";
    }

    std::vector<std::string> GetCompilerArguments() const override { return {"-fopenmp", "-ldnnl"}; }
};

}  // namespace

}  // namespace trellis::codegen::onednn

namespace trellis::codegen {

const ArtifactTarget& GetOneDnnTarget() {
    static const onednn::OneDnnTarget target;
    return target;
}

}  // namespace trellis::codegen
