// CpuAcc: compiling a region graph into oneDNN primitives, and running it (see CpuAccRegion.hpp).
#include "CpuAccRegion.hpp"

#include "CpuAccKernels.hpp"

#include <trellis/Exceptions.hpp>

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>
#include <sys/mman.h>
#if TRELLIS_CPUACC_HAVE_XNNPACK
#include <xnnpack.h>
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace trellis::cpuacc {

namespace {

using dnnl::memory;
using Dims = memory::dims;

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

memory::data_type DataTypeOf(DataType t) {
    switch (t) {
        case DataType::UInt8: return memory::data_type::u8;
        case DataType::Signed8: return memory::data_type::s8;
        case DataType::Signed32: return memory::data_type::s32;
        default: return memory::data_type::f32;
    }
}

memory::desc PlainMd(const Dims& dims, memory::data_type dt = memory::data_type::f32) {
    return memory::desc(dims, dt, StridesOf(dims));
}
memory::desc AnyMd(const Dims& dims, memory::data_type dt = memory::data_type::f32) {
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

/// The channel block of the CPU's vector width: 16 floats with AVX-512, 8 with AVX2.
memory::dim BlockSize() {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2 || isa == dnnl::cpu_isa::avx2_vnni ? 8 : 16;
}

/// The channel-blocked layout of a rank-`rank` NC<spatial> tensor, if there is one.
std::optional<memory::format_tag> BlockedTag(std::size_t rank) {
    const bool b16 = BlockSize() == 16;
    switch (rank) {
        case 3: return b16 ? memory::format_tag::nCw16c : memory::format_tag::nCw8c;
        case 4: return b16 ? memory::format_tag::nChw16c : memory::format_tag::nChw8c;
        case 5: return b16 ? memory::format_tag::nCdhw16c : memory::format_tag::nCdhw8c;
        default: return std::nullopt;
    }
}

/// The channel-blocked layout `md` has (its dims with BlockedTag), if it has it.
std::optional<memory::format_tag> BlockedTagOf(const memory::desc& md) {
    const Dims dims = md.dims();
    const std::optional<memory::format_tag> tag = BlockedTag(dims.size());
    if (tag && md == memory::desc(dims, md.data_type(), *tag)) return tag;
    return std::nullopt;
}

/// Sets the calling thread's OpenMP team size for a scope (oneDNN sizes its work from it, both
/// when a primitive is created and when it runs).
class ThreadScope {
public:
    explicit ThreadScope(int n) : m_Saved(omp_get_max_threads()) {
        if (n > 0) omp_set_num_threads(n);
    }
    ~ThreadScope() { omp_set_num_threads(m_Saved); }
private:
    int m_Saved;
};

struct AlignedFree {
    void operator()(void* p) const { std::free(p); }
};

/// Memory for packed weights (free with std::free). Buffers of 2 MiB and more start on a 2 MiB
/// boundary and are marked MADV_HUGEPAGE: every inference streams all of a network's weights
/// (100 MB for resnet50, 340 MB for the BERT encoder), and with 4 KiB pages that is one TLB miss
/// per 4 KiB read. Where transparent huge pages are off, the advice is ignored.
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

#if TRELLIS_CPUACC_HAVE_XNNPACK
/// Whether XNNPACK initialized on this CPU (once per process).
bool XnnpackReady() {
    static const bool ready = xnn_initialize(nullptr) == xnn_status_success;
    return ready;
}

/// A fully connected layer with one input row (y = x W + b, a matrix-vector product) on XNNPACK.
/// bench/cpu/kernels/conv_libs_bench.cpp measured XNNPACK 10-14% faster than oneDNN 2.6's matmul
/// for these at one thread (the classifier heads: 1x2048 -> 1000, 1x1280 -> 1000), and 1.6-2.2x
/// slower for the multi-row matmuls and mostly 1.2-4.5x slower for the convolutions of the
/// benchmark models (see docs/performance.md), so this is the only place CpuAcc uses it. The output columns are cut into one operator per OpenMP thread (XNNPACK then runs
/// each on the calling thread), so it shares oneDNN's thread team instead of starting a
/// pthreadpool that would compete with it.
class XnnGemv {
public:
    /// `weights`: [n][k] (output channel major); `bias`: n values or empty.
    XnnGemv(std::size_t k, std::size_t n, const std::vector<float>& weights, const std::vector<float>& bias,
            float outMin, float outMax, int threads) {
        const std::size_t chunks = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(threads),
                                                                                   (n + 15) / 16));
        const std::size_t per = (n + chunks - 1) / chunks;
        const std::size_t step = (per + 15) / 16 * 16;  // whole 16-column panels per operator
        for (std::size_t c0 = 0; c0 < n; c0 += step) {
            const std::size_t cols = std::min(step, n - c0);
            xnn_operator_t op = nullptr;
            const xnn_status st = xnn_create_fully_connected_nc_f32(
                k, cols, k, n, weights.data() + c0 * k, bias.empty() ? nullptr : bias.data() + c0, outMin, outMax, 0, &op);
            if (st != xnn_status_success) {
                throw RuntimeException("CpuAcc: XNNPACK cannot create a fully connected operator (" + std::to_string(k) +
                                       " -> " + std::to_string(cols) + "): status " + std::to_string(static_cast<int>(st)));
            }
            m_Ops.push_back(op);
            m_Column.push_back(c0);
        }
    }
    ~XnnGemv() {
        for (xnn_operator_t op : m_Ops) xnn_delete_operator(op);
    }
    XnnGemv(const XnnGemv&) = delete;
    XnnGemv& operator=(const XnnGemv&) = delete;

    void Run(const float* x, float* y, const std::string& name) {
        // An XNNPACK operator holds the pointers it was set up with: one call at a time.
        std::lock_guard<std::mutex> lock(m_Mutex);
        for (std::size_t i = 0; i < m_Ops.size(); ++i) {
            if (xnn_setup_fully_connected_nc_f32(m_Ops[i], 1, x, y + m_Column[i], nullptr) != xnn_status_success) {
                throw RuntimeException("CpuAcc: XNNPACK could not set up '" + name + "'");
            }
        }
        const long long count = static_cast<long long>(m_Ops.size());
        int failed = 0;
#pragma omp parallel for schedule(static, 1) reduction(+ : failed) if (count > 1)
        for (long long i = 0; i < count; ++i) {
            if (xnn_run_operator(m_Ops[static_cast<std::size_t>(i)], nullptr) != xnn_status_success) ++failed;
        }
        if (failed > 0) throw RuntimeException("CpuAcc: XNNPACK failed running '" + name + "'");
    }

private:
    std::vector<xnn_operator_t> m_Ops;
    std::vector<std::size_t> m_Column;  ///< first output column of each operator
    std::mutex m_Mutex;
};
#endif

}  // namespace

class CompiledRegion {
public:
    CompiledRegion(std::shared_ptr<const RegionGraph> graph, const std::vector<const ConstTensor*>& constants,
                   const RegionOptions& options, std::string name);
    void Execute(const WorkloadIo& io) const;
    std::size_t GetScratchBytes() const { return m_ScratchBytes; }
    /// Whether Execute() reads region input `index` (inputs packed at compile time are not read).
    bool ReadsInput(unsigned int index) const {
        for (const Storage& s : m_Storages) {
            if (s.m_Kind == Storage::Kind::Input && s.m_Index == static_cast<int>(index) && s.m_Last >= 0) return true;
        }
        return false;
    }

private:
    struct Storage {
        enum class Kind { Input, Output, Internal, Owned };
        Kind m_Kind = Kind::Internal;
        int m_Index = -1;  ///< region input/output index, or owned buffer index
        std::size_t m_Bytes = 0;
        std::size_t m_Offset = 0;  ///< Internal: offset in the scratch memory
        int m_First = INT_MAX, m_Last = -1;
    };
    struct Mem {
        int m_Storage = -1;
        memory::desc m_Md;
        std::size_t m_ByteOffset = 0;  ///< where in the storage the data starts
    };
    struct Step {
        std::string m_Name;
        std::string m_Category;  ///< oneDNN's primitive kind ("convolution") or "own kernel", for timelines
        dnnl::primitive m_Primitive;
        std::vector<std::pair<int, int>> m_Args;  ///< (DNNL_ARG_*, mem)
        std::function<void(const std::vector<void*>&)> m_Kernel;  ///< own kernel instead of a primitive
        std::vector<int> m_KernelMems;
        memory::desc m_Scratchpad;
        bool m_HasScratchpad = false;
    };
    struct Context {
        void* m_Scratch = nullptr;
        dnnl::stream m_Stream;
        std::vector<memory> m_Mems;
        std::vector<std::unordered_map<int, memory>> m_Args;
    };

    // Compilation.
    int AddStorage(Storage::Kind kind, int index, std::size_t bytes);
    int AddMem(int storage, const memory::desc& md);
    int NewInternal(const memory::desc& md) { return AddMem(AddStorage(Storage::Kind::Internal, -1, md.get_size()), md); }
    int MemOf(int value);
    void Bind(int value, int mem);
    int Ensure(int value, const memory::desc& want);
    int EnsurePlain(int value) { return Ensure(value, PlainMd(ValueDims(value), ValueType(value))); }
    /// oneDNN's type for value `v` (Float32, or the 8-bit types of quantized tensors).
    memory::data_type ValueType(int v) const { return DataTypeOf(m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetDataType()); }
    int Alias(int mem, const memory::desc& md);
    /// Whether the storage of `value` may be written by node `nodeIndex`: nothing reads it later,
    /// and (when `notInputOf` is given) that node does not read it as an input either.
    bool CanOverwrite(int value, int nodeIndex, const Node* notInputOf = nullptr) const;
    void AddReorder(int from, int to, const std::string& name);
    void AddPrimitive(const std::string& name, const dnnl::primitive& p, const dnnl::primitive_desc_base& pd,
                      std::vector<std::pair<int, int>> args);
    int PackConstant(const ConstTensor& t, const memory::desc& user, const memory::desc& packed, float scale);
    const ConstTensor& ConstantOf(int value, const Node& node, const char* what) const;
    Dims ValueDims(int v) const { return DimsOf(m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetShape()); }
    dnnl::primitive_attr Attr(bool mathOps) const;
    /// The type convolutions and matmuls with constant weights compute in: bf16 with FastMath.
    memory::data_type MathType() const {
        return m_Options.m_FastMathBf16 ? memory::data_type::bf16 : memory::data_type::f32;
    }

    void CompileNode(int index);
    void CompileConv(int index, const Node& n);
    void CompileMatMul(int index, const Node& n);
    /// A one-row matmul with constant weights on XNNPACK, when it qualifies; false if not.
    bool CompileGemv(const Node& n, int a, const ConstTensor& b, bool transB, float alpha, const ConstTensor* bias,
                     float beta, std::size_t k, std::size_t nCols);
    void CompilePool(const Node& n);
    void CompileEltwise(int index, const Node& n);
    void CompileErf(const Node& n);
    /// Runs CpuAcc's own swish kernel in place over memory `mem`.
    void AddSwish(const std::string& name, int mem);
    /// One of CpuAcc's own element-wise kernels (CpuAccKernels.hpp).
    using ElementKernel = void (*)(const float*, float*, std::size_t, KernelIsa);
    /// A step running `kernel` over `count` floats from memory `src` to memory `dst` (the same
    /// memory for in place), in blocks over the OpenMP team.
    void AddKernelStep(const std::string& name, int src, int dst, std::size_t count, ElementKernel kernel);
    void CompileBinary(int index, const Node& n);
    void CompileSoftmax(const Node& n);
    void CompileLayerNorm(const Node& n);
    void CompileConcat(int index, const Node& n);
    void CompileTranspose(const Node& n);
    void CompileReduce(const Node& n);
    void CompileSplitSlice(const Node& n);
    void CompileRecurrent(const Node& n);
    void CompileBatchNorm(const Node& n);
    void CompilePad(const Node& n);
    void CompileResize(const Node& n);
    void CompileAttention(const Node& n);
    void CompileExpand(const Node& n);
    void CompileRmsNorm(const Node& n);
    void CompileConvInt8(const Node& n);
    void CompileMatMulInt8(const Node& n);
    void CompileQuantize(const Node& n);
    void CompileQuantizedAdd(const Node& n);
    /// Packs 8-bit (or other) host data `data` described by `user` into the layout `packed`.
    int PackData(const void* data, const memory::desc& user, const memory::desc& packed);
    void CompileOutputs();
    void PlanMemory();

    Context* Acquire(void* scratch) const;
    void Release(Context* ctx) const;

    std::shared_ptr<const RegionGraph> m_Graph;
    std::vector<const ConstTensor*> m_Constants;
    RegionOptions m_Options;
    std::string m_Name;

    std::vector<Storage> m_Storages;
    std::vector<Mem> m_Mems;
    std::vector<Step> m_Steps;
    std::vector<std::unique_ptr<void, AlignedFree>> m_Owned;
    std::vector<int> m_ValueMem;
    std::vector<std::vector<int>> m_StorageValues;  ///< values whose data is in each storage
    std::vector<std::vector<std::pair<int, int>>> m_Converted;  ///< per value: (mem) conversions made
    std::vector<int> m_InputStorage;  ///< per region input: its storage (-1 until used)
    std::size_t m_ScratchpadOffset = 0;
    std::size_t m_ScratchBytes = 0;
    /// (mem, region input/output index) of the memory objects re-pointed at each call's tensors;
    /// inputs never read at run time (constants packed when compiling) are left out.
    std::vector<std::pair<std::size_t, std::size_t>> m_BoundInputs, m_BoundOutputs;

    /// In-place concatenation: convolutions write straight into their part of a channel Concat.
    struct ConcatTarget {
        int m_Storage = -1;        ///< the concatenation's buffer (created by its first writer)
        memory::desc m_Md;         ///< its blocked layout
        std::size_t m_Written = 0;  ///< inputs written in place so far
    };
    std::unordered_map<int, int> m_ConcatOf;  ///< value -> Concat node it may be written into
    std::unordered_map<int, ConcatTarget> m_ConcatTargets;  ///< Concat node -> its buffer
    void PlanInPlaceConcats();

    mutable std::mutex m_Mutex;
    mutable std::vector<std::unique_ptr<Context>> m_Free;
};

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

// ---- nodes -------------------------------------------------------------------------------------

void CompiledRegion::PlanInPlaceConcats() {
    const RegionGraph& g = *m_Graph;
    for (int c = 0; c < static_cast<int>(g.m_Nodes.size()); ++c) {
        const Node& n = g.m_Nodes[static_cast<std::size_t>(c)];
        if (n.m_Dead || n.m_Kind != NodeKind::Concat) continue;
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

bool IsReferenceImplementation(const dnnl::primitive_desc_base& pd) {
    const char* impl = pd.impl_info_str();
    return impl && std::string(impl).rfind("ref", 0) == 0;
}

/// Sets `pd` to `make()` and returns true when oneDNN can make it and its implementation is not one
/// of oneDNN's reference kernels; otherwise leaves `pd` alone and returns false, so the caller tries
/// the next layout.
template <typename Pd, typename Make>
bool MadeWithoutReference(Pd& pd, const Make& make) {
    try {
        Pd made = make();
        if (IsReferenceImplementation(made)) return false;
        pd = std::move(made);
        return true;
    } catch (const dnnl::error&) {
        return false;
    }
}

bool ConvolutionRunsFast(const ConvolutionDescriptor& d, const TensorShape& input, const TensorShape& weights,
                         const TensorShape& output, bool bias, std::string* implementation) {
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
        const dnnl::convolution_forward::primitive_desc pd(cd, Engine());
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
    dnnl::post_ops po;
    int sumValue = -1;
    // A trailing swish runs as CpuAcc's own kernel over the convolution's output (AddSwish):
    // oneDNN 2.6's fused swish divides (vdivps) per element; the own kernel does not, and
    // measured efficientnet_b0 (whose SiLUs are about 30% of its time) 8-14% faster overall.
    const bool ownSwish = m_Options.m_OwnSwish && MathType() == memory::data_type::f32 && !n.m_PostOps.empty() &&
                          n.m_PostOps.back().m_Kind == PostOp::Kind::Eltwise &&
                          n.m_PostOps.back().m_Eltwise.m_Algorithm == dnnl_eltwise_swish &&
                          n.m_PostOps.back().m_Eltwise.m_Alpha == 1.0f;
    for (std::size_t i = 0; i < n.m_PostOps.size() - (ownSwish ? 1 : 0); ++i) {
        const PostOp& p = n.m_PostOps[i];
        if (p.m_Kind == PostOp::Kind::Eltwise) {
            po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha,
                              p.m_Eltwise.m_Beta);
        } else {
            po.append_sum(1.0f);
            sumValue = p.m_Value;
        }
    }
    dnnl::primitive_attr attr = Attr(true);
    attr.set_post_ops(po);
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
    } else {
        dstMem = NewInternal(pd.dst_desc());
    }
    args.emplace_back(DNNL_ARG_DST, dstMem);
    AddPrimitive(n.m_Name, dnnl::convolution_forward(pd), pd, std::move(args));
    if (ownSwish) AddSwish(n.m_Name, dstMem);
    Bind(out, dstMem);
}

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

void CompiledRegion::CompileMatMul(int index, const Node& n) {
    (void)index;
    const bool gemm = n.m_LayerType == LayerType::Gemm;
    const GemmDescriptor gd = gemm ? std::get<GemmDescriptor>(n.m_Descriptor) : GemmDescriptor{};
    const int a = n.m_Inputs[0], b = n.m_Inputs[1];
    const int biasValue = n.m_Inputs.size() > 2 ? n.m_Inputs[2] : -1;
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    const Dims aDims = ValueDims(a), bDims = ValueDims(b);
    const Value& bv = m_Graph->m_Values[static_cast<std::size_t>(b)];
    const bool packB = bv.m_Constant && bDims.size() == 2 && bv.m_RegionInput >= 0 &&
                       m_Constants[static_cast<std::size_t>(bv.m_RegionInput)] != nullptr;

    if (packB) {
        // 2-D constant weights: the rows of A (all its leading dims) against packed B.
        const memory::dim k = aDims.back();
        const memory::dim m = Product(aDims, 0, aDims.size() - 1);
        const bool transB = gemm && gd.m_TransB;
        const memory::dim nCols = transB ? bDims[0] : bDims[1];
        if (m == 1 && CompileGemv(n, a, ConstantOf(b, n, "B"), transB, gemm ? gd.m_Alpha : 1.0f,
                                  biasValue >= 0 ? &ConstantOf(biasValue, n, "the bias") : nullptr,
                                  gemm ? gd.m_Beta : 1.0f, static_cast<std::size_t>(k), static_cast<std::size_t>(nCols))) {
            return;
        }
        const Dims src2 = {m, k}, dst2 = {m, nCols};
        // Post-op operands flattened the same way (full, or one row broadcast).
        dnnl::post_ops po2;
        std::vector<std::pair<int, int>> extra;
        for (std::size_t i = 0; i < n.m_PostOps.size(); ++i) {
            const PostOp& p = n.m_PostOps[i];
            if (p.m_Kind == PostOp::Kind::Eltwise) {
                po2.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha,
                                   p.m_Eltwise.m_Beta);
                continue;
            }
            const Dims od = ValueDims(p.m_Value);
            const memory::desc md = Product(od, 0, od.size()) == m * nCols ? PlainMd(dst2) : PlainMd({1, nCols});
            po2.append_binary(dnnl::algorithm::binary_add, md);
            extra.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                               Alias(EnsurePlain(p.m_Value), md));
        }
        dnnl::primitive_attr attr = Attr(true);
        attr.set_post_ops(po2);
        const memory::desc biasMd = PlainMd({1, nCols});
        const memory::data_type dt = MathType();
        const memory::desc srcMd = PlainMd(src2, dt), dstMd = PlainMd(dst2);
        const memory::desc weightsAny = AnyMd({k, nCols}, dt);
        dnnl::matmul::desc md = biasValue >= 0 ? dnnl::matmul::desc(srcMd, weightsAny, biasMd, dstMd)
                                               : dnnl::matmul::desc(srcMd, weightsAny, dstMd);
        dnnl::matmul::primitive_desc pd(md, attr, Engine());
        const ConstTensor& bt = ConstantOf(b, n, "B");
        const memory::desc user = transB ? memory::desc({k, nCols}, memory::data_type::f32, Dims{1, k})
                                         : PlainMd({k, nCols});
        const int weights = PackConstant(bt, user, pd.weights_desc(), gemm ? gd.m_Alpha : 1.0f);
        std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, Alias(Ensure(a, PlainMd(aDims, dt)), srcMd)},
                                                 {DNNL_ARG_WEIGHTS, weights}};
        if (biasValue >= 0) {
            const ConstTensor& c = ConstantOf(biasValue, n, "the bias");
            args.emplace_back(DNNL_ARG_BIAS, PackConstant(c, biasMd, pd.bias_desc(), gemm ? gd.m_Beta : 1.0f));
        }
        const int dst = NewInternal(dstMd);
        args.emplace_back(DNNL_ARG_DST, dst);
        args.insert(args.end(), extra.begin(), extra.end());
        AddPrimitive(n.m_Name, dnnl::matmul(pd), pd, std::move(args));
        Bind(out, Alias(dst, PlainMd(outDims)));
        return;
    }

    // General: batched, both operands at run time (attention), numpy batch broadcasting.
    if (gemm) throw LayerValidationException("CpuAcc: Gemm '" + n.m_Name + "' needs a constant 2-D B");
    const std::size_t rank = outDims.size();
    const memory::desc aMd = PlainMd(Prepend1s(aDims, rank)), bMd = PlainMd(Prepend1s(bDims, rank));
    const memory::desc dstMd = PlainMd(outDims);
    dnnl::post_ops po2;
    std::vector<std::pair<int, int>> extra;
    for (std::size_t i = 0; i < n.m_PostOps.size(); ++i) {
        const PostOp& p = n.m_PostOps[i];
        if (p.m_Kind == PostOp::Kind::Eltwise) {
            po2.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha,
                               p.m_Eltwise.m_Beta);
            continue;
        }
        const memory::desc md = PlainMd(Prepend1s(ValueDims(p.m_Value), rank));
        po2.append_binary(dnnl::algorithm::binary_add, md);
        extra.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                           Alias(EnsurePlain(p.m_Value), md));
    }
    dnnl::primitive_attr attr = Attr(true);
    attr.set_post_ops(po2);
    memory::desc biasMd;
    if (biasValue >= 0) biasMd = PlainMd(Prepend1s(ValueDims(biasValue), rank));
    // Operands that are strided views (a transposed head split, K^T) are read in place when
    // oneDNN has a real kernel for those strides; otherwise they are made plain first.
    const auto viewOf = [&](int v, const Dims& dims) -> std::optional<memory::desc> {
        const memory::desc& cur = m_Mems[static_cast<std::size_t>(MemOf(v))].m_Md;
        if (dims.size() != rank || cur.dims() != dims || cur == PlainMd(dims) || cur.data.format_kind != dnnl_blocked ||
            cur.data.format_desc.blocking.inner_nblks != 0) {
            return std::nullopt;
        }
        return cur;
    };
    const std::optional<memory::desc> aView = viewOf(a, aDims), bView = viewOf(b, bDims);
    dnnl::matmul::primitive_desc pd;
    bool strided = false;
    if (aView || bView) {
        try {
            const memory::desc as = aView ? *aView : aMd, bs = bView ? *bView : bMd;
            pd = dnnl::matmul::primitive_desc(biasValue >= 0 ? dnnl::matmul::desc(as, bs, biasMd, dstMd)
                                                             : dnnl::matmul::desc(as, bs, dstMd),
                                              attr, Engine());
            strided = !IsReferenceImplementation(pd);
        } catch (const dnnl::error&) {
        }
    }
    if (!strided) {
        pd = dnnl::matmul::primitive_desc(biasValue >= 0 ? dnnl::matmul::desc(aMd, bMd, biasMd, dstMd)
                                                         : dnnl::matmul::desc(aMd, bMd, dstMd),
                                          attr, Engine());
    }
    const int aMem = strided && aView ? MemOf(a) : Alias(EnsurePlain(a), aMd);
    const int bMem = strided && bView ? MemOf(b) : Alias(EnsurePlain(b), bMd);
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}};
    if (biasValue >= 0) args.emplace_back(DNNL_ARG_BIAS, Alias(EnsurePlain(biasValue), biasMd));
    const int dst = NewInternal(dstMd);
    args.emplace_back(DNNL_ARG_DST, dst);
    args.insert(args.end(), extra.begin(), extra.end());
    AddPrimitive(n.m_Name, dnnl::matmul(pd), pd, std::move(args));
    Bind(out, dst);
}

bool CompiledRegion::CompileGemv(const Node& n, int a, const ConstTensor& b, bool transB, float alpha,
                                 const ConstTensor* bias, float beta, std::size_t k, std::size_t nCols) {
#if TRELLIS_CPUACC_HAVE_XNNPACK
    if (!m_Options.m_Xnnpack || m_Options.m_FastMathBf16 || !XnnpackReady()) return false;
    // XNNPACK fuses a clamp only: no post-op, a ReLU, or a Clip.
    float outMin = -std::numeric_limits<float>::infinity(), outMax = std::numeric_limits<float>::infinity();
    for (const PostOp& p : n.m_PostOps) {
        if (p.m_Kind != PostOp::Kind::Eltwise) return false;
        const int alg = p.m_Eltwise.m_Algorithm;
        if (alg == dnnl_eltwise_relu && p.m_Eltwise.m_Alpha == 0.0f) {
            outMin = std::max(outMin, 0.0f);
        } else if (alg == dnnl_eltwise_clip_v2 || alg == dnnl_eltwise_clip) {
            outMin = std::max(outMin, p.m_Eltwise.m_Alpha);
            outMax = std::min(outMax, p.m_Eltwise.m_Beta);
        } else {
            return false;
        }
        if (n.m_PostOps.size() > 1) return false;  // one clamp, applied once
    }
    if (outMin > outMax) return false;
    std::vector<float> biasValues;
    if (bias) {
        if (bias->GetNumElements() != nCols) return false;  // CpuAccSupport admits n-element biases only
        const float* p = static_cast<const float*>(bias->GetMemoryArea());
        biasValues.resize(nCols);
        for (std::size_t j = 0; j < nCols; ++j) biasValues[j] = beta * p[j];
    }
    // XNNPACK wants [n][k]: B^T (Gemm transB) as it is, B [k][n] transposed; alpha folded in.
    std::vector<float> weights(k * nCols);
    const float* w = static_cast<const float*>(b.GetMemoryArea());
    for (std::size_t j = 0; j < nCols; ++j) {
        for (std::size_t i = 0; i < k; ++i) weights[j * k + i] = alpha * (transB ? w[j * k + i] : w[i * nCols + j]);
    }
    auto gemv = std::make_shared<XnnGemv>(k, nCols, weights, biasValues, outMin, outMax, omp_get_max_threads());
    const int src = Alias(EnsurePlain(a), PlainMd({1, static_cast<memory::dim>(k)}));
    const int dst = NewInternal(PlainMd({1, static_cast<memory::dim>(nCols)}));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "matmul (XNNPACK)";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [gemv, name = n.m_Name](const std::vector<void*>& p) {
        gemv->Run(static_cast<const float*>(p[0]), static_cast<float*>(p[1]), name);
    };
    m_Steps.push_back(std::move(step));
    Bind(n.m_Outputs[0], Alias(dst, PlainMd(ValueDims(n.m_Outputs[0]))));
    return true;
#else
    (void)n, (void)a, (void)b, (void)transB, (void)alpha, (void)bias, (void)beta, (void)k, (void)nCols;
    return false;
#endif
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
    // The input's layout as it is, unless oneDNN has only its reference kernel for it.
    dnnl::pooling_v2_forward::primitive_desc pd;
    const bool made = MadeWithoutReference(pd, [&] { return make(m_Mems[static_cast<std::size_t>(MemOf(x))].m_Md); });
    if (!made) pd = make(PlainMd(src));
    const int srcMem = Ensure(x, pd.src_desc());
    const int dstMem = NewInternal(pd.dst_desc());
    AddPrimitive(n.m_Name, dnnl::pooling_v2_forward(pd), pd, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_DST, dstMem}});
    Bind(out, dstMem);
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

void CompiledRegion::CompileConcat(int index, const Node& n) {
    const auto& d = std::get<ConcatDescriptor>(n.m_Descriptor);
    const int out = n.m_Outputs[0];
    if (auto t = m_ConcatTargets.find(index); t != m_ConcatTargets.end() && t->second.m_Written == n.m_Inputs.size()) {
        Bind(out, AddMem(t->second.m_Storage, t->second.m_Md));  // every part is already in place
        return;
    }
    const Dims outDims = ValueDims(out);
    const int rank = static_cast<int>(outDims.size());
    const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
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
    // The inputs' layouts as they are (blocked stays blocked); plain if oneDNN cannot concatenate them.
    try {
        build(false);
    } catch (const dnnl::error&) {
        build(true);
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
    const Dims inStrides = StridesOf(in);
    Dims permStrides(rank);
    for (std::size_t i = 0; i < rank; ++i) permStrides[i] = inStrides[perm[i]];
    Bind(out, Alias(EnsurePlain(x), memory::desc(outDims, memory::data_type::f32, permStrides)));
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
    const int src = EnsurePlain(x);
    if (reduced == in) {  // nothing to reduce: a view
        Bind(out, Alias(src, PlainMd(ValueDims(out))));
        return;
    }
    dnnl::algorithm alg = dnnl::algorithm::reduction_mean;
    switch (d.m_Operation) {
        case ReduceOperation::Mean: alg = dnnl::algorithm::reduction_mean; break;
        case ReduceOperation::Sum: alg = dnnl::algorithm::reduction_sum; break;
        case ReduceOperation::Max: alg = dnnl::algorithm::reduction_max; break;
        case ReduceOperation::Min: alg = dnnl::algorithm::reduction_min; break;
        default: throw LayerValidationException("CpuAcc: '" + n.m_Name + "': unsupported reduction");
    }
    const memory::desc dstMd = PlainMd(reduced);
    dnnl::reduction::desc rd(alg, PlainMd(in), dstMd, 0.0f, 0.0f);
    dnnl::reduction::primitive_desc pd(rd, Attr(false), Engine());
    const int dst = NewInternal(dstMd);
    AddPrimitive(n.m_Name, dnnl::reduction(pd), pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    Bind(out, Alias(dst, PlainMd(ValueDims(out))));
}

void CompiledRegion::CompileSplitSlice(const Node& n) {
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

// ONNX LSTM/GRU/RNN on oneDNN's RNN primitives (one layer, one or both directions). ONNX stores
// W [D, G*H, I] and R [D, G*H, H] gate-major (LSTM gates i, o, f, c; GRU z, r, h) with B = [Wb, Rb];
// oneDNN wants ldigo weights with gates i, f, c, o (GRU u=z, r, o=h) and one summed bias, except
// linear-before-reset GRU, whose fourth bias gate is Rb of the output gate. Peepholes: ONNX i, o,
// f; oneDNN i, f, o. Layout 0 (time first) is oneDNN's tnc, layout 1 (batch first) its ntc.
void CompiledRegion::CompileRecurrent(const Node& n) {
    const auto& d = std::get<RecurrentDescriptor>(n.m_Descriptor);
    const auto has = [&](std::size_t i) {
        return i < n.m_Inputs.size() && m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[i])].m_Info.GetNumElements() > 0;
    };
    const bool lstm = d.m_Mode == RecurrentMode::Lstm, gru = d.m_Mode == RecurrentMode::Gru;
    const bool lbr = gru && d.m_LinearBeforeReset;
    const Dims xd = ValueDims(n.m_Inputs[0]);
    const bool batchFirst = d.m_Layout == 1;
    const memory::dim T = batchFirst ? xd[1] : xd[0], N = batchFirst ? xd[0] : xd[1], I = xd[2];
    const memory::dim H = d.m_HiddenSize, D = d.m_Direction == RecurrentDirection::Bidirectional ? 2 : 1;
    const memory::dim G = lstm ? 4 : gru ? 3 : 1, BG = G + (lbr ? 1 : 0);
    const std::vector<memory::dim> gate = lstm ? std::vector<memory::dim>{0, 2, 3, 1} : gru ? std::vector<memory::dim>{0, 1, 2}
                                                                                           : std::vector<memory::dim>{0};
    const auto at = [](const ConstTensor& t) { return static_cast<const float*>(t.GetMemoryArea()); };
    const float* w = at(ConstantOf(n.m_Inputs[1], n, "W"));
    const float* r = at(ConstantOf(n.m_Inputs[2], n, "R"));
    const float* b = has(3) ? at(ConstantOf(n.m_Inputs[3], n, "B")) : nullptr;
    const float* peep = lstm && has(7) ? at(ConstantOf(n.m_Inputs[7], n, "P")) : nullptr;
    std::vector<float> wl(static_cast<std::size_t>(D * I * G * H)), wi(static_cast<std::size_t>(D * H * G * H));
    std::vector<float> bias(static_cast<std::size_t>(D * BG * H), 0.0f), wp(peep ? static_cast<std::size_t>(D * 3 * H) : 0);
    for (memory::dim dir = 0; dir < D; ++dir) {
        for (memory::dim g = 0; g < G; ++g) {
            for (memory::dim h = 0; h < H; ++h) {
                const memory::dim row = dir * G * H + gate[static_cast<std::size_t>(g)] * H + h;  // ONNX row
                for (memory::dim i = 0; i < I; ++i) wl[static_cast<std::size_t>(((dir * I + i) * G + g) * H + h)] = w[row * I + i];
                for (memory::dim i = 0; i < H; ++i) wi[static_cast<std::size_t>(((dir * H + i) * G + g) * H + h)] = r[row * H + i];
                if (b) {
                    const float wb = b[dir * 2 * G * H + gate[static_cast<std::size_t>(g)] * H + h];
                    const float rb = b[dir * 2 * G * H + G * H + gate[static_cast<std::size_t>(g)] * H + h];
                    const bool outputGate = lbr && g == 2;
                    bias[static_cast<std::size_t>((dir * BG + g) * H + h)] = outputGate ? wb : wb + rb;
                    if (outputGate) bias[static_cast<std::size_t>((dir * BG + 3) * H + h)] = rb;
                }
            }
        }
        if (peep) {
            const memory::dim order[3] = {0, 2, 1};  // oneDNN i, f, o <- ONNX i, o, f
            for (memory::dim g = 0; g < 3; ++g) {
                for (memory::dim h = 0; h < H; ++h) wp[static_cast<std::size_t>((dir * 3 + g) * H + h)] = peep[dir * 3 * H + order[g] * H + h];
            }
        }
    }
    using tag = memory::format_tag;
    const memory::desc srcLayer({T, N, I}, memory::data_type::f32, batchFirst ? tag::ntc : tag::tnc);
    const memory::desc dstLayer({T, N, D * H}, memory::data_type::f32, batchFirst ? tag::ntc : tag::tnc);
    const memory::desc iterMd({1, D, N, H}, memory::data_type::f32, tag::ldnc);
    const memory::desc none;
    const memory::desc wLayerAny = AnyMd({1, D, I, G, H}), wIterAny = AnyMd({1, D, H, G, H});
    const memory::desc biasMd({1, D, BG, H}, memory::data_type::f32, tag::ldgo);
    const memory::desc peepMd({1, D, 3, H}, memory::data_type::f32, tag::ldgo);
    const bool hasH0 = has(5), hasC0 = lstm && has(6);
    const auto direction = d.m_Direction == RecurrentDirection::Forward ? dnnl::rnn_direction::unidirectional_left2right
                           : d.m_Direction == RecurrentDirection::Reverse ? dnnl::rnn_direction::unidirectional_right2left
                                                                          : dnnl::rnn_direction::bidirectional_concat;
    const auto fwd = dnnl::prop_kind::forward_inference;
    dnnl::primitive primitive;
    // A copy of the handle: dnnl::primitive_desc_base has no virtual destructor, so the derived
    // descriptors must not be deleted through it.
    dnnl::primitive_desc_base pd;
    memory::desc weightsLayerMd, weightsIterMd, weightsPeepholeMd;
    if (lstm) {
        auto p = std::make_unique<dnnl::lstm_forward::primitive_desc>(
            dnnl::lstm_forward::desc(fwd, direction, srcLayer, hasH0 ? iterMd : none, hasC0 ? iterMd : none, wLayerAny,
                                     wIterAny, peep ? peepMd : none, biasMd, dstLayer, iterMd, iterMd),
            Attr(false), Engine());
        primitive = dnnl::lstm_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        if (peep) weightsPeepholeMd = p->weights_peephole_desc();
        pd = *p;
    } else if (lbr) {
        auto p = std::make_unique<dnnl::lbr_gru_forward::primitive_desc>(
            dnnl::lbr_gru_forward::desc(fwd, direction, srcLayer, hasH0 ? iterMd : none, wLayerAny, wIterAny, biasMd,
                                        dstLayer, iterMd),
            Attr(false), Engine());
        primitive = dnnl::lbr_gru_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        pd = *p;
    } else if (gru) {
        auto p = std::make_unique<dnnl::gru_forward::primitive_desc>(
            dnnl::gru_forward::desc(fwd, direction, srcLayer, hasH0 ? iterMd : none, wLayerAny, wIterAny, biasMd, dstLayer,
                                    iterMd),
            Attr(false), Engine());
        primitive = dnnl::gru_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        pd = *p;
    } else {
        const RecurrentActivationFunction f =
            d.m_Activations.empty() ? RecurrentActivationFunction::Tanh : d.m_Activations[0].m_Function;
        const dnnl::algorithm act = f == RecurrentActivationFunction::Relu      ? dnnl::algorithm::eltwise_relu
                                    : f == RecurrentActivationFunction::Sigmoid ? dnnl::algorithm::eltwise_logistic
                                                                                : dnnl::algorithm::eltwise_tanh;
        auto p = std::make_unique<dnnl::vanilla_rnn_forward::primitive_desc>(
            dnnl::vanilla_rnn_forward::desc(fwd, act, direction, srcLayer, hasH0 ? iterMd : none, wLayerAny, wIterAny,
                                            biasMd, dstLayer, iterMd),
            Attr(false), Engine());
        primitive = dnnl::vanilla_rnn_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        pd = *p;
    }
    const auto pack = [&](std::vector<float>& host, const Dims& dims, tag t, const memory::desc& packed) {
        const TensorInfo info(TensorShape(static_cast<unsigned int>(1), std::vector<unsigned int>{static_cast<unsigned int>(host.size())}.data()),
                              DataType::Float32);
        return PackConstant(ConstTensor(info, host.data()), memory::desc(dims, memory::data_type::f32, t), packed, 1.0f);
    };
    // The initial states, in ONNX's layout: [D, N, H] is ldnc; batch first [N, D, H] is a view with
    // other strides, reordered into ldnc.
    const auto state = [&](int value) {
        const int plain = EnsurePlain(value);
        if (!batchFirst) return Alias(plain, iterMd);
        const int to = NewInternal(iterMd);
        AddReorder(Alias(plain, memory::desc({1, D, N, H}, memory::data_type::f32, Dims{D * N * H, H, D * H, 1})), to,
                   n.m_Name + " (initial state)");
        return to;
    };
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC_LAYER, Alias(EnsurePlain(n.m_Inputs[0]), srcLayer)},
                                             {DNNL_ARG_WEIGHTS_LAYER, pack(wl, {1, D, I, G, H}, tag::ldigo, weightsLayerMd)},
                                             {DNNL_ARG_WEIGHTS_ITER, pack(wi, {1, D, H, G, H}, tag::ldigo, weightsIterMd)},
                                             {DNNL_ARG_BIAS, pack(bias, {1, D, BG, H}, tag::ldgo, biasMd)}};
    if (peep) args.emplace_back(DNNL_ARG_WEIGHTS_PEEPHOLE, pack(wp, {1, D, 3, H}, tag::ldgo, weightsPeepholeMd));
    if (hasH0) args.emplace_back(DNNL_ARG_SRC_ITER, state(n.m_Inputs[5]));
    if (hasC0) args.emplace_back(DNNL_ARG_SRC_ITER_C, state(n.m_Inputs[6]));
    const int y = NewInternal(dstLayer), yh = NewInternal(iterMd);
    args.emplace_back(DNNL_ARG_DST_LAYER, y);
    args.emplace_back(DNNL_ARG_DST_ITER, yh);
    const int yc = lstm ? NewInternal(iterMd) : -1;
    if (lstm) args.emplace_back(DNNL_ARG_DST_ITER_C, yc);
    AddPrimitive(n.m_Name, primitive, pd, std::move(args));

    // Y: [T, D, N, H] (layout 0) or [N, T, D, H] (layout 1). oneDNN's tnc with D*H channels is
    // [T, N, D, H]: the same bytes for one direction, a reorder for two.
    const Dims yDims = ValueDims(n.m_Outputs[0]);
    if (batchFirst || D == 1) {
        Bind(n.m_Outputs[0], Alias(y, PlainMd(yDims)));
    } else {
        const int to = NewInternal(PlainMd(yDims));
        AddReorder(Alias(y, memory::desc(yDims, memory::data_type::f32, Dims{N * D * H, H, D * H, 1})), to, n.m_Name + " (Y)");
        Bind(n.m_Outputs[0], to);
    }
    // Y_h, Y_c: [D, N, H] = ldnc (layout 0), or [N, D, H] (layout 1, a reorder).
    const auto finalState = [&](std::size_t output, int mem) {
        if (output >= n.m_Outputs.size()) return;
        const Dims dims = ValueDims(n.m_Outputs[output]);
        if (!batchFirst) {
            Bind(n.m_Outputs[output], Alias(mem, PlainMd(dims)));
            return;
        }
        const int to = NewInternal(PlainMd(dims));
        AddReorder(Alias(mem, memory::desc(dims, memory::data_type::f32, Dims{H, N * H, 1})), to, n.m_Name + " (final state)");
        Bind(n.m_Outputs[output], to);
    };
    finalState(1, yh);
    if (lstm) finalState(2, yc);
}

void CompiledRegion::CompileBatchNorm(const Node& n) {
    // A BatchNormalization the graph passes could not fold into a convolution (after a Concat, a
    // pooling, at a network input): oneDNN's inference batch normalization on the input's layout.
    const auto& d = std::get<BatchNormalizationDescriptor>(n.m_Descriptor);
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const auto flags = static_cast<dnnl::normalization_flags>(static_cast<unsigned>(dnnl::normalization_flags::use_global_stats) |
                                                               static_cast<unsigned>(dnnl::normalization_flags::use_scale) |
                                                               static_cast<unsigned>(dnnl::normalization_flags::use_shift));
    auto make = [&](const memory::desc& md) {
        return dnnl::batch_normalization_forward::primitive_desc(
            dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, d.m_Eps, flags), Attr(false),
            Engine());
    };
    int src = MemOf(x);
    dnnl::batch_normalization_forward::primitive_desc pd;
    const bool made = MadeWithoutReference(pd, [&] { return make(m_Mems[static_cast<std::size_t>(src)].m_Md); });
    if (!made) {
        src = EnsurePlain(x);
        pd = make(m_Mems[static_cast<std::size_t>(src)].m_Md);
    }
    const Dims c{ValueDims(x)[1]};
    const auto param = [&](std::size_t i) { return Alias(EnsurePlain(n.m_Inputs[i]), PlainMd(c)); };
    const int dst = NewInternal(pd.dst_desc());
    AddPrimitive(n.m_Name, dnnl::batch_normalization_forward(pd), pd,
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_SCALE, param(1)}, {DNNL_ARG_SHIFT, param(2)}, {DNNL_ARG_MEAN, param(3)},
                  {DNNL_ARG_VARIANCE, param(4)}, {DNNL_ARG_DST, dst}});
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

// ---- int8 ---------------------------------------------------------------------------------------

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
};

Int8Plan PlanInt8(const RegionGraph& g, const Node& n, const Int8Params& p, int src, int dst) {
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
    for (memory::dim c = 0; c < (wScales.size() > 1 ? channels : 1); ++c) {
        const float ws1 = wScales[static_cast<std::size_t>(c)];
        plan.m_OutputScales.push_back(p.m_SrcScale * ws1 / p.m_DstScale);
    }
    for (memory::dim c = 0; c < channels; ++c) {
        const float ws1 = wScales[wScales.size() > 1 ? static_cast<std::size_t>(c) : 0];
        plan.m_BiasScale.push_back(1.0f / (p.m_SrcScale * ws1));
    }
    plan.m_Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    plan.m_Attr.set_output_scales(plan.m_OutputScales.size() > 1 ? 1 << 1 : 0, plan.m_OutputScales);
    if (p.m_SrcZeroPoint != 0) plan.m_Attr.set_zero_points(DNNL_ARG_SRC, 0, {p.m_SrcZeroPoint});
    if (p.m_DstZeroPoint != 0) plan.m_Attr.set_zero_points(DNNL_ARG_DST, 0, {p.m_DstZeroPoint});
    dnnl::post_ops po;
    for (const PostOp& op : n.m_PostOps) {
        po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(op.m_Eltwise.m_Algorithm), op.m_Eltwise.m_Alpha, op.m_Eltwise.m_Beta);
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

/// Weights packed with scale_adjust (non-VNNI kernels halve them): not the values ONNX multiplies.
bool HasScaleAdjust(const memory::desc& md) {
    return (md.data.extra.flags & dnnl_memory_extra_flag_scale_adjust) != 0 && md.data.extra.scale_adjust != 1.0f;
}

}  // namespace

bool Int8NodeRunsFast(const RegionGraph& g, const Node& n, const Int8Params& p, int src, int dst, std::string* why) {
    try {
        const Int8Plan plan = PlanInt8(g, n, p, src, dst);
        const bool bias = n.m_Inputs.size() > 2;
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

void CompiledRegion::CompileConvInt8(const Node& n) {
    const Int8Params& p = *n.m_Int8;
    const int x = n.m_Inputs[0], out = n.m_Outputs[0];
    const Int8Plan plan = PlanInt8(*m_Graph, n, p, x, out);
    const bool bias = n.m_Inputs.size() > 2;
    const auto pd = MakeInt8ConvPd(plan, p, bias);
    if (IsReferenceImplementation(pd) || HasScaleAdjust(pd.weights_desc())) {
        throw LayerValidationException("CpuAcc: int8 convolution '" + n.m_Name + "' would run oneDNN's " +
                                       pd.impl_info_str() + " (the fusion's probe said otherwise)");
    }
    const Value& wv = m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, Ensure(x, pd.src_desc())},
                                             {DNNL_ARG_WEIGHTS, PackData(wv.m_Int8Values->data(), plan.m_UserWeights, pd.weights_desc())}};
    if (bias) {
        const ConstTensor& b = ConstantOf(n.m_Inputs[2], n, "the bias");
        std::vector<float> scaled(b.GetNumElements());
        const float* bp = static_cast<const float*>(b.GetMemoryArea());
        for (std::size_t c = 0; c < scaled.size(); ++c) scaled[c] = bp[c] * plan.m_BiasScale[c];
        args.emplace_back(DNNL_ARG_BIAS, PackData(scaled.data(), PlainMd({plan.m_Dst[1]}), pd.bias_desc()));
    }
    const int dstMem = NewInternal(pd.dst_desc());
    args.emplace_back(DNNL_ARG_DST, dstMem);
    AddPrimitive(n.m_Name, dnnl::convolution_forward(pd), pd, std::move(args));
    Bind(out, dstMem);
}

void CompiledRegion::CompileMatMulInt8(const Node& n) {
    const Int8Params& p = *n.m_Int8;
    const int a = n.m_Inputs[0], out = n.m_Outputs[0];
    const Int8Plan plan = PlanInt8(*m_Graph, n, p, a, out);
    const bool bias = n.m_Inputs.size() > 2;
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
        const ConstTensor& b = ConstantOf(n.m_Inputs[2], n, "the bias");
        std::vector<float> scaled(b.GetNumElements());
        const float* bp = static_cast<const float*>(b.GetMemoryArea());
        for (std::size_t c = 0; c < scaled.size(); ++c) scaled[c] = bp[c] * plan.m_BiasScale[c];
        args.emplace_back(DNNL_ARG_BIAS, PackData(scaled.data(), PlainMd({1, plan.m_Dst[1]}), pd.bias_desc()));
    }
    const int dst = NewInternal(pd.dst_desc());
    args.emplace_back(DNNL_ARG_DST, dst);
    AddPrimitive(n.m_Name, dnnl::matmul(pd), pd, std::move(args));
    Bind(out, Alias(dst, PlainMd(ValueDims(out), DataTypeOf(p.m_DstType))));
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
    // nhwc, a blocked nChw16c, padding included), and consumers reorder only if they need to.
    int src = MemOf(x);
    memory::desc srcMd = m_Mems[static_cast<std::size_t>(src)].m_Md;
    bool padded = false;  // oneDNN expects zeros in a blocked layout's padding; quantizing would write zp there
    for (int d = 0; d < srcMd.data.ndims; ++d) padded = padded || srcMd.data.padded_dims[d] != srcMd.data.dims[d];
    if (srcMd.data.format_kind != dnnl_blocked || srcMd.data.extra.flags != 0 || srcMd.data.offset0 != 0 || padded) {
        src = EnsurePlain(x);
        srcMd = m_Mems[static_cast<std::size_t>(src)].m_Md;
    }
    dnnl_memory_desc_t raw = srcMd.data;
    raw.data_type = static_cast<dnnl_data_type_t>(ValueType(out));
    const memory::desc dstMd(raw);
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

void CompiledRegion::CompileNode(int index) {
    const Node& n = m_Graph->m_Nodes[static_cast<std::size_t>(index)];
    if (n.m_Dead) return;
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
        case NodeKind::Reshape: Bind(n.m_Outputs[0], Alias(EnsurePlain(n.m_Inputs[0]), PlainMd(ValueDims(n.m_Outputs[0])))); break;
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
    }
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

// ---- execution ---------------------------------------------------------------------------------

CompiledRegion::Context* CompiledRegion::Acquire(void* scratch) const {
    {
        std::lock_guard<std::mutex> lock(m_Mutex);
        for (std::size_t i = 0; i < m_Free.size(); ++i) {
            if (m_Free[i]->m_Scratch == scratch) {
                Context* c = m_Free[i].release();
                m_Free.erase(m_Free.begin() + static_cast<std::ptrdiff_t>(i));
                return c;
            }
        }
    }
    auto ctx = std::make_unique<Context>();
    ctx->m_Scratch = scratch;
    ctx->m_Stream = dnnl::stream(Engine());
    char* base = static_cast<char*>(scratch);
    for (const Mem& m : m_Mems) {
        const Storage& s = m_Storages[static_cast<std::size_t>(m.m_Storage)];
        void* p = nullptr;
        if (s.m_Kind == Storage::Kind::Internal) p = base + s.m_Offset + m.m_ByteOffset;
        else if (s.m_Kind == Storage::Kind::Owned) p = m_Owned[static_cast<std::size_t>(s.m_Index)].get();
        ctx->m_Mems.emplace_back(m.m_Md, Engine(), p);
    }
    for (const Step& st : m_Steps) {
        std::unordered_map<int, memory> args;
        for (const auto& [arg, mem] : st.m_Args) args.emplace(arg, ctx->m_Mems[static_cast<std::size_t>(mem)]);
        if (st.m_HasScratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, memory(st.m_Scratchpad, Engine(), base + m_ScratchpadOffset));
        ctx->m_Args.push_back(std::move(args));
    }
    return ctx.release();
}

void CompiledRegion::Release(Context* ctx) const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    m_Free.emplace_back(ctx);
}

void CompiledRegion::Execute(const WorkloadIo& io) const {
    if (io.m_Inputs.size() != m_Graph->m_InputInfos.size() || io.m_Outputs.size() != m_Graph->m_OutputInfos.size()) {
        throw RuntimeException("CpuAcc region '" + m_Name + "': called with " + std::to_string(io.m_Inputs.size()) +
                               " inputs and " + std::to_string(io.m_Outputs.size()) + " outputs, compiled for " +
                               std::to_string(m_Graph->m_InputInfos.size()) + " and " +
                               std::to_string(m_Graph->m_OutputInfos.size()));
    }
    std::unique_ptr<Context, std::function<void(Context*)>> ctx(Acquire(io.m_Scratch),
                                                                [this](Context* c) { Release(c); });
    for (const auto& [mem, index] : m_BoundInputs) ctx->m_Mems[mem].set_data_handle(io.m_Inputs[index]->Map());
    for (const auto& [mem, index] : m_BoundOutputs) ctx->m_Mems[mem].set_data_handle(io.m_Outputs[index]->Map());
    ThreadScope threads(m_Options.m_NumThreads);
    std::vector<void*> ptrs;
    const auto now = [] {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
    };
    for (std::size_t i = 0; i < m_Steps.size(); ++i) {
        const Step& st = m_Steps[i];
        const uint64_t start = io.m_Profiling ? now() : 0;
        if (st.m_Kernel) {
            ptrs.clear();
            for (int mem : st.m_KernelMems) ptrs.push_back(ctx->m_Mems[static_cast<std::size_t>(mem)].get_data_handle());
            st.m_Kernel(ptrs);
        } else {
            st.m_Primitive.execute(ctx->m_Stream, ctx->m_Args[i]);
        }
        if (io.m_Profiling) {
            // oneDNN's CPU streams run a primitive on the calling thread's team and return when it is done.
            io.m_Profiling->ReportEvent(ProfilingEvent{st.m_Name, st.m_Category, start, now() - start});
        }
    }
    ctx->m_Stream.wait();
}

// ---- workload ----------------------------------------------------------------------------------

CpuAccRegionWorkload::CpuAccRegionWorkload(std::shared_ptr<const RegionGraph> graph,
                                           const std::vector<const ConstTensor*>& constants,
                                           const RegionOptions& options, const std::string& name)
    : m_Region(std::make_unique<CompiledRegion>(std::move(graph), constants, options, name)) {}

CpuAccRegionWorkload::~CpuAccRegionWorkload() = default;

void CpuAccRegionWorkload::Execute(const WorkloadIo& io) const {
    try {
        m_Region->Execute(io);
    } catch (const dnnl::error& e) {
        throw RuntimeException(std::string("CpuAcc: oneDNN failed while running a region: ") + e.what());
    }
}

std::size_t CpuAccRegionWorkload::GetScratchBytes() const { return m_Region->GetScratchBytes(); }

bool CpuAccRegionWorkload::ReadsConstantInput(unsigned int index) const { return m_Region->ReadsInput(index); }

}  // namespace trellis::cpuacc
