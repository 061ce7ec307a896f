// GpuAcc: compiling a region graph into device steps, and running them (see GpuAccRegion.hpp).
#include "GpuAccRegion.hpp"

#include "GpuAccAttention.hpp"
#include "GpuAccConv.hpp"
#include "GpuAccConvCheck.hpp"
#include "GpuAccDevice.hpp"
#include "GpuAccMatMul.hpp"
#include "GpuAccSupport.hpp"

#include <trellis/Exceptions.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <tuple>

namespace trellis::gpuacc {

namespace {

constexpr std::size_t kAlign = 256;
std::size_t AlignUp(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// Where a step's buffer lives; Temp is resolved to Scratch once memory is planned.
enum class BufKind { Input, Output, Scratch, Const, Temp };
struct Buf {
    BufKind m_Kind = BufKind::Temp;
    int64_t m_Index = 0;   ///< input/output index, byte offset (Scratch, Const) or temp id
    int64_t m_Offset = 0;  ///< bytes added to the address (a view into the buffer)
};

/// A value as the device holds it: a buffer, a type, logical dims, and NHWC or plain layout - or,
/// for a view (a transpose, slice, broadcast or picked index of another tensor, which GpuAcc does
/// not copy unless a reader needs dense data), explicit element strides.
struct DevTensor {
    Buf m_Buf;
    DType m_Type = DType::F32;
    std::vector<int64_t> m_Dims;
    bool m_Nhwc = false;
    std::vector<int64_t> m_ViewStrides;  ///< set for views

    int64_t Count() const {
        int64_t n = 1;
        for (int64_t d : m_Dims) n *= d;
        return n;
    }
    std::size_t Bytes() const { return static_cast<std::size_t>(Count()) * DTypeSize(m_Type); }
    /// The strides of the dense layout (plain row-major, or NHWC).
    std::vector<int64_t> DenseStrides() const {
        const std::size_t r = m_Dims.size();
        std::vector<int64_t> s(r, 1);
        if (m_Nhwc && r == 4) {
            const int64_t c = m_Dims[1], h = m_Dims[2], w = m_Dims[3];
            return {h * w * c, 1, w * c, c};
        }
        for (std::size_t i = r; i-- > 1;) s[i - 1] = s[i] * m_Dims[i];
        return s;
    }
    /// Element strides per logical dim.
    std::vector<int64_t> Strides() const { return m_ViewStrides.empty() ? DenseStrides() : m_ViewStrides; }
    bool IsView() const { return !m_ViewStrides.empty(); }
    /// A view whose elements lie row-major and contiguous (size-1 dims aside), so it can be read
    /// as dense plain data at its address.
    bool IsContiguousPlain() const {
        if (!IsView()) return !m_Nhwc || PlainEquivalent();
        int64_t expect = 1;
        for (std::size_t i = m_Dims.size(); i-- > 0;) {
            if (m_Dims[i] == 1) continue;
            if (m_ViewStrides[i] != expect) return false;
            expect *= m_Dims[i];
        }
        return true;
    }
    /// NHWC that is the same bytes as plain (H = W = 1, or C = 1).
    bool PlainEquivalent() const {
        return !m_Nhwc || m_Dims.size() != 4 || (m_Dims[2] * m_Dims[3] == 1) || m_Dims[1] == 1;
    }
};

std::vector<int64_t> DimsOf(const TensorInfo& info) {
    std::vector<int64_t> d;
    for (unsigned int x : info.GetShape().GetDims()) d.push_back(x);
    return d;
}

/// Strides of `t` broadcast to `outDims` (numpy rules, right-aligned), per output dim.
std::vector<int64_t> BroadcastStrides(const DevTensor& t, const std::vector<int64_t>& outDims) {
    const std::vector<int64_t> s = t.Strides();
    std::vector<int64_t> r(outDims.size(), 0);
    const std::size_t off = outDims.size() - t.m_Dims.size();
    for (std::size_t i = 0; i < t.m_Dims.size(); ++i) {
        r[off + i] = t.m_Dims[i] == 1 && outDims[off + i] != 1 ? 0 : s[i];
    }
    return r;
}

// ---- host-side constant conversion ------------------------------------------------------------

std::vector<unsigned char> ToType(const float* src, std::size_t n, DType type) {
    std::vector<unsigned char> out(n * DTypeSize(type));
    for (std::size_t i = 0; i < n; ++i) {
        switch (type) {
            case DType::F16: reinterpret_cast<__half*>(out.data())[i] = __float2half_rn(src[i]); break;
            case DType::BF16: reinterpret_cast<__nv_bfloat16*>(out.data())[i] = __float2bfloat16_rn(src[i]); break;
            default: reinterpret_cast<float*>(out.data())[i] = src[i]; break;
        }
    }
    return out;
}

struct RunContext {
    cudaStream_t m_Stream = nullptr;
    cudnnHandle_t m_Cudnn = nullptr;
    void* m_Workspace = nullptr;
    int* m_ErrorFlag = nullptr;
    void* const* m_Ptrs = nullptr;  ///< this step's buffers, resolved
    void* Ptr(std::size_t i) const { return m_Ptrs[i]; }
};

struct Step {
    std::string m_What;  ///< "conv 'name': cuDNN conv+bias+relu"
    std::vector<Buf> m_Bufs;
    std::function<void(const RunContext&)> m_Run;
    /// Separated from the step before it by an empty kernel (StepBarrier=auto): cuDNN's TF32
    /// convolution engines, which on an H100 corrupted their first image when launched straight
    /// after the step before them (see RegionOptions::m_StepBarrier).
    bool m_FenceBefore = false;
};


/// How cuBLASLt reads one operand of a matmul from a (possibly strided) tensor: the matrix of its
/// last two dims (swapped for Gemm's trans flags) as stored row-major or transposed with a
/// leading dimension, and its batch dims as one stride.
struct MatOperand {
    bool m_Ok = false;
    bool m_Trans = false;
    int64_t m_Ld = 0;
    int64_t m_Rows = 0, m_Cols = 0;  ///< the logical matrix
    int64_t m_Batch = 1;             ///< product of its batch dims
    int64_t m_BatchStride = 0;
    std::vector<int64_t> m_BatchDims;
};

MatOperand AnalyzeOperand(const DevTensor& t, bool swapLast) {
    MatOperand o;
    const std::vector<int64_t> s = t.Strides();
    const std::size_t r = t.m_Dims.size();
    int64_t rows = t.m_Dims[r - 2], cols = t.m_Dims[r - 1], sr = s[r - 2], sc = s[r - 1];
    if (swapLast) {
        std::swap(rows, cols);
        std::swap(sr, sc);
    }
    o.m_Rows = rows;
    o.m_Cols = cols;
    if ((cols == 1 || sc == 1) && (rows == 1 || sr >= cols)) {
        o.m_Trans = false;
        o.m_Ld = rows == 1 ? std::max<int64_t>(cols, 1) : sr;
    } else if ((rows == 1 || sr == 1) && (cols == 1 || sc >= rows)) {
        o.m_Trans = true;
        o.m_Ld = cols == 1 ? std::max<int64_t>(rows, 1) : sc;
    } else {
        return o;
    }
    if (o.m_Ld <= 0) return o;
    // Batch dims: one stride across all of them (size-1 dims aside).
    int64_t expect = -1;
    for (std::size_t i = r - 2; i-- > 0;) {
        o.m_BatchDims.insert(o.m_BatchDims.begin(), t.m_Dims[i]);
        if (t.m_Dims[i] == 1) continue;
        if (expect < 0) {
            o.m_BatchStride = s[i];
        } else if (s[i] != expect) {
            return o;
        }
        expect = s[i] * t.m_Dims[i];
        o.m_Batch *= t.m_Dims[i];
    }
    if (o.m_Batch > 1 && o.m_BatchStride <= 0) return o;
    o.m_Ok = true;
    return o;
}

/// `batchDims` (right-aligned) equal the output's leading dims: one batch index for both.
bool SameBatch(const std::vector<int64_t>& batchDims, const std::vector<int64_t>& outBatch) {
    std::vector<int64_t> a, b;
    for (int64_t d : batchDims) if (d != 1) a.push_back(d);
    for (int64_t d : outBatch) if (d != 1) b.push_back(d);
    return a == b;
}

}  // namespace

// ---- the plan ---------------------------------------------------------------------------------

class CompiledRegion {
public:
    CompiledRegion(std::shared_ptr<const RegionGraph> graph, const std::vector<const ConstTensor*>& constants,
                   const RegionOptions& options, const std::string& name);
    ~CompiledRegion();
    void Execute(const WorkloadIo& io) const;
    /// The runtime aligns scratch memory to 64 bytes only (IWorkload.hpp); the region rounds the
    /// address up to kAlign itself, so it asks for kAlign bytes more: cuBLASLt wants its
    /// workspace 256-byte aligned (an algorithm that used workspace failed with
    /// CUBLAS_STATUS_INVALID_VALUE at run time in one H100 run, after running at load on
    /// cudaMalloc'd buffers), and every offset planned inside is a multiple of kAlign.
    std::size_t ScratchBytes() const { return m_ScratchBytes ? m_ScratchBytes + kAlign : 0; }
    bool IsConstantInput(unsigned int index) const {
        return index < m_ConstantInput.size() && m_ConstantInput[index];
    }
    std::vector<std::string> Describe() const;

private:
    // Planning.
    DevTensor Need(int v, std::optional<DType> type, std::optional<bool> nhwc, bool allowView = false);
    DevTensor UploadConstant(int v, std::optional<DType> type, bool nhwc);
    DevTensor NewOutput(int v, DType type, bool nhwc);
    Buf NewTemp(std::size_t bytes);
    int64_t AddConst(const void* data, std::size_t bytes);
    const float* ConstFloats(int v) const;
    const ConstTensor& Constant(int v) const;
    DType TypeFor(int v) const;
    void AddStep(std::string what, std::vector<Buf> bufs, std::function<void(const RunContext&)> run);
    void CopyInto(const DevTensor& src, const DevTensor& dst, const std::string& what);
    void EltwiseInto(const EltwiseProgram& program, const std::vector<DevTensor>& inputs, const DevTensor& out,
                     const std::string& what);

    // Pending views (see PendingView).
    void Resolve(int v);
    std::optional<std::vector<int64_t>> CollapsedStrides(int v, const std::vector<int64_t>& dims) const;
    /// Element strides of value `v` read as [d0 / heads, heads, d1, ...] (rank 3 split in two) or
    /// as it is (heads = 0): of `given` (what Need() gave for it), or where that is null of the
    /// pending value `v`; nullopt where the pending value is not one strided view so.
    std::optional<std::vector<int64_t>> OperandStrides(int v, int64_t heads, const DevTensor* given) const;

    void LowerNode(const Node& node);
    void LowerEltwise(const Node& node);
    void LowerConv(const Node& node);
    void AddConvCheck(const std::string& what, const ConvShape& s, const ConvEpilogue& done, const DevTensor& x,
                      const std::vector<float>& kcrs, const Buf& biasF32, const Buf& residual, const DevTensor& y,
                      double tolerance);
    void LowerMatMul(const Node& node);
    bool LowerRowPermutedMatMul(const Node& node, const DevTensor& a, const DevTensor& b, const MatOperand& ob,
                                const std::vector<int64_t>& outDims);
    void LowerPool(const Node& node);
    void LowerBatchNorm(const Node& node);
    void LowerSoftmax(const Node& node);
    void LowerAttention(const Node& node);
    void LowerRemap(const Node& node);
    void LowerArg(const Node& node);
    void LowerAttentionOp(const Node& node);
    void LowerConvTranspose(const Node& node);
    bool LowerFusedAttention(const Node& node, std::string& why);
    void LowerLayerNorm(const Node& node);
    void LowerReduce(const Node& node);
    void LowerCopy(const Node& node);
    void LowerConcat(const Node& node);
    void LowerSplit(const Node& node);
    void LowerGather(const Node& node);
    void LowerAlias(const Node& node);
    void PlanMemory();

    // Running.
    void RunSteps(const RunContext& base, const std::vector<void*>& ptrs) const;

    std::shared_ptr<const RegionGraph> m_Graph;
    std::vector<const ConstTensor*> m_Constants;
    RegionOptions m_Options;
    DType m_Compute = DType::F32;
    std::string m_Name;

    std::vector<std::optional<DevTensor>> m_Values;
    /// A value reached from a view by reshapes that strides cannot express (a reshape merging dims
    /// of a view whose strides do not merge), and transposes after them: kept as that view plus the
    /// index operations until a reader asks for it. Then it is one strided view where the
    /// composition is one (BERT's heads: the packed projection's [S, B, E] view reshaped to
    /// [S, B*H, D], transposed and split again into [B, H, S, D]), else the operations replay as
    /// before - a dense copy where a reshape needs one.
    struct PendingView {
        int m_From = -1;  ///< the value whose DevTensor the operations start from
        struct Op {
            bool m_Transpose = false;
            std::vector<int64_t> m_Dims;       ///< the dims after this op
            std::vector<unsigned int> m_Perm;  ///< Transpose
        };
        std::vector<Op> m_Ops;
    };
    std::map<int, PendingView> m_Pending;
    std::map<std::tuple<int, int, int>, DevTensor> m_Converted;  // (value, type or -1, nhwc or -1)
    std::vector<std::size_t> m_TempBytes;
    std::vector<unsigned char> m_ConstStaging;
    DeviceBuffer m_ConstBuffer;
    std::vector<Step> m_Steps;
    std::vector<std::unique_ptr<ConvPlan>> m_ConvPlans;
    std::vector<std::unique_ptr<MatMulPlan>> m_MatMulPlans;
    std::vector<std::unique_ptr<AttentionPlan>> m_AttentionPlans;
    std::vector<std::pair<MatMulPlan*, int64_t>> m_BiasToSet;  // plan, constant offset
    std::size_t m_Workspace = 0;
    bool m_RuntimeChecks = false;
    std::size_t m_FlagOffset = 0;
    std::size_t m_ScratchBytes = 0;
    std::vector<bool> m_ConstantInput;
    std::size_t m_NumPtrs = 0;

    // CUDA graphs, one per set of buffer addresses.
    struct GraphEntry {
        cudaGraphExec_t m_Exec = nullptr;  ///< null after the first (eager, warm-up) run
    };
    mutable std::mutex m_GraphMutex;
    mutable std::list<std::pair<std::vector<void*>, GraphEntry>> m_GraphCache;
    mutable bool m_CaptureFailed = false;
    mutable std::string m_CaptureError;

    // Per-step times (RegionOptions::m_StepTimesFile).
    mutable std::mutex m_TimesMutex;
    mutable std::vector<double> m_StepMs;
    mutable uint64_t m_TimedRuns = 0;
    void RunTimed(const RunContext& base, const std::vector<void*>& ptrs) const;
};

CompiledRegion::~CompiledRegion() {
    for (auto& [key, entry] : m_GraphCache) {
        if (entry.m_Exec) cudaGraphExecDestroy(entry.m_Exec);
    }
    if (!m_Options.m_StepTimesFile.empty() && m_TimedRuns > 0) {
        if (FILE* f = std::fopen(m_Options.m_StepTimesFile.c_str(), "a")) {
            std::fprintf(f, "# region '%s', precision %s, %llu timed runs (mean ms per step, then the step)\n",
                         m_Name.c_str(), PrecisionName(m_Options.m_Precision),
                         static_cast<unsigned long long>(m_TimedRuns));
            for (std::size_t i = 0; i < m_Steps.size(); ++i) {
                // One line per step: cuDNN's messages quoted in a description may span lines.
                std::string what = m_Steps[i].m_What;
                std::replace(what.begin(), what.end(), '\n', ' ');
                std::fprintf(f, "%.5f\t%s\n", m_StepMs[i] / static_cast<double>(m_TimedRuns), what.c_str());
            }
            std::fclose(f);
        }
    }
}

void CompiledRegion::RunTimed(const RunContext& base, const std::vector<void*>& ptrs) const {
    // The steps with an event between each two, captured into a CUDA graph and replayed, so the
    // times are the GPU's own (launched eagerly, the gaps the host takes to launch each step
    // would count as well). Eager if the capture fails.
    std::vector<cudaEvent_t> events(m_Steps.size() + 1);
    for (cudaEvent_t& e : events) CheckCuda(cudaEventCreate(&e), "creating a timing event");
    bool capturing = false;
    auto record = [&](cudaEvent_t e) {
        // Inside a capture an event must be "external" to be recorded when the graph runs.
        CheckCuda(capturing ? cudaEventRecordWithFlags(e, base.m_Stream, cudaEventRecordExternal)
                            : cudaEventRecord(e, base.m_Stream),
                  "timing");
    };
    auto enqueue = [&] {
        std::size_t at = 0;
        record(events[0]);
        for (std::size_t i = 0; i < m_Steps.size(); ++i) {
            RunContext c = base;
            c.m_Ptrs = ptrs.data() + at;
            at += m_Steps[i].m_Bufs.size();
            if (i > 0 && m_Steps[i].m_FenceBefore && m_Options.m_StepBarrier == RegionOptions::Barrier::Auto) {
                CheckCuda(LaunchStepBarrier(base.m_Stream), "step barrier");
            }
            m_Steps[i].m_Run(c);
            record(events[i + 1]);
        }
    };
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool captured = false;
    if (cudaStreamBeginCapture(base.m_Stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        bool ok = true;
        capturing = true;
        try {
            enqueue();
        } catch (const std::exception&) {
            ok = false;
        }
        capturing = false;
        ok = cudaStreamEndCapture(base.m_Stream, &graph) == cudaSuccess && ok;
        ok = ok && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
        captured = ok && cudaGraphLaunch(exec, base.m_Stream) == cudaSuccess;
        cudaGetLastError();
    }
    if (!captured) enqueue();
    CheckCuda(cudaEventSynchronize(events.back()), "timing");
    std::vector<double> ms(m_Steps.size());
    for (std::size_t i = 0; i < m_Steps.size(); ++i) {
        float t = 0.0f;
        cudaEventElapsedTime(&t, events[i], events[i + 1]);
        ms[i] = t;
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    std::lock_guard<std::mutex> lock(m_TimesMutex);
    if (m_StepMs.size() != ms.size()) m_StepMs.assign(ms.size(), 0.0);
    for (std::size_t i = 0; i < ms.size(); ++i) m_StepMs[i] += ms[i];
    ++m_TimedRuns;
}

const ConstTensor& CompiledRegion::Constant(int v) const {
    const Value& value = m_Graph->m_Values[static_cast<std::size_t>(v)];
    const ConstTensor* c = value.m_RegionInput >= 0 && static_cast<std::size_t>(value.m_RegionInput) < m_Constants.size()
                               ? m_Constants[static_cast<std::size_t>(value.m_RegionInput)]
                               : nullptr;
    if (!c || !c->GetMemoryArea()) {
        throw LayerValidationException("GpuAcc: region '" + m_Name + "': constant input " +
                                       std::to_string(value.m_RegionInput) + " was not given at load");
    }
    return *c;
}

const float* CompiledRegion::ConstFloats(int v) const {
    const ConstTensor& c = Constant(v);
    if (c.GetDataType() != DataType::Float32) {
        throw LayerValidationException("GpuAcc: region '" + m_Name + "': a Float32 constant was expected, got " +
                                       c.GetInfo().ToString());
    }
    return static_cast<const float*>(c.GetMemoryArea());
}

DType CompiledRegion::TypeFor(int v) const {
    const DataType t = m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetDataType();
    if (t == DataType::Float32) return m_Compute;
    return *DTypeOf(t);
}

Buf CompiledRegion::NewTemp(std::size_t bytes) {
    m_TempBytes.push_back(bytes);
    return Buf{BufKind::Temp, static_cast<int64_t>(m_TempBytes.size() - 1)};
}

int64_t CompiledRegion::AddConst(const void* data, std::size_t bytes) {
    const std::size_t at = AlignUp(m_ConstStaging.size());
    m_ConstStaging.resize(at + bytes);
    if (bytes) std::memcpy(m_ConstStaging.data() + at, data, bytes);
    return static_cast<int64_t>(at);
}

void CompiledRegion::AddStep(std::string what, std::vector<Buf> bufs, std::function<void(const RunContext&)> run) {
    m_NumPtrs += bufs.size();
    m_Steps.push_back(Step{std::move(what), std::move(bufs), std::move(run)});
}

DevTensor CompiledRegion::UploadConstant(int v, std::optional<DType> type, bool nhwc) {
    const ConstTensor& c = Constant(v);
    DevTensor t;
    t.m_Dims = DimsOf(c.GetInfo());
    const std::size_t n = c.GetNumElements();
    if (c.GetDataType() == DataType::Float32) {
        t.m_Type = type.value_or(DType::F32);
        std::vector<float> values(static_cast<const float*>(c.GetMemoryArea()),
                                  static_cast<const float*>(c.GetMemoryArea()) + n);
        if (nhwc && t.m_Dims.size() == 4) {
            const int64_t N = t.m_Dims[0], C = t.m_Dims[1], H = t.m_Dims[2], W = t.m_Dims[3];
            std::vector<float> packed(n);
            for (int64_t a = 0; a < N; ++a)
                for (int64_t b = 0; b < C; ++b)
                    for (int64_t h = 0; h < H; ++h)
                        for (int64_t w = 0; w < W; ++w)
                            packed[static_cast<std::size_t>(((a * H + h) * W + w) * C + b)] =
                                values[static_cast<std::size_t>(((a * C + b) * H + h) * W + w)];
            values.swap(packed);
            t.m_Nhwc = true;
        }
        const auto bytes = ToType(values.data(), n, t.m_Type);
        t.m_Buf = Buf{BufKind::Const, AddConst(bytes.data(), bytes.size())};
        return t;
    }
    // Other types are uploaded as they are (indices, masks); their layout is plain.
    t.m_Type = *DTypeOf(c.GetDataType());
    if (type && *type != t.m_Type) {
        throw LayerValidationException("GpuAcc: region '" + m_Name + "': constant of type " +
                                       GetDataTypeName(c.GetDataType()) + " cannot be converted on upload");
    }
    t.m_Buf = Buf{BufKind::Const, AddConst(c.GetMemoryArea(), c.GetNumBytes())};
    return t;
}

DevTensor CompiledRegion::Need(int v, std::optional<DType> type, std::optional<bool> nhwc, bool allowView) {
    const std::tuple<int, int, int> key{v, type ? static_cast<int>(*type) : -1, nhwc ? (*nhwc ? 1 : 0) : -1};
    const Value& value = m_Graph->m_Values[static_cast<std::size_t>(v)];
    if (value.m_Constant) {
        auto cached = m_Converted.find(key);
        if (cached != m_Converted.end()) return cached->second;
        DevTensor t = UploadConstant(v, type, nhwc.value_or(false));
        m_Converted[key] = t;
        return t;
    }
    if (m_Pending.count(v)) Resolve(v);
    if (!m_Values[static_cast<std::size_t>(v)]) {
        throw LayerValidationException("GpuAcc: region '" + m_Name + "': a value is read before it is produced");
    }
    const DevTensor& base = *m_Values[static_cast<std::size_t>(v)];
    const bool typeOk = !type || *type == base.m_Type;
    bool layoutOk = true;
    if (base.IsView()) {
        // A view is read as it is only by readers that take any strides (and want no particular
        // layout); a contiguous plain view is also dense plain data.
        const bool plainWanted = !nhwc || !*nhwc || base.m_Dims.size() != 4;
        layoutOk = plainWanted && (allowView || base.IsContiguousPlain());
    } else if (nhwc && base.m_Dims.size() == 4) {
        // NHWC and plain are the same bytes when H = W = 1 or C = 1.
        const bool same = base.m_Dims[2] * base.m_Dims[3] == 1 || base.m_Dims[1] == 1;
        layoutOk = base.m_Nhwc == *nhwc || same;
    }
    if (typeOk && layoutOk) {
        if (base.IsView() && !allowView) {
            DevTensor dense = base;  // contiguous plain: the same bytes as a dense tensor
            dense.m_ViewStrides.clear();
            dense.m_Nhwc = false;
            return dense;
        }
        return base;
    }
    auto cached = m_Converted.find(key);
    if (cached != m_Converted.end()) return cached->second;
    DevTensor t = base;
    t.m_ViewStrides.clear();
    t.m_Type = type.value_or(base.m_Type);
    t.m_Nhwc = nhwc.value_or(base.IsView() ? false : base.m_Nhwc) && base.m_Dims.size() == 4;
    t.m_Buf = NewTemp(t.Bytes());
    CopyInto(base, t, std::string("convert '") + "value " + std::to_string(v) + "' to " + DTypeName(t.m_Type) +
                          (t.m_Nhwc ? " NHWC" : " plain"));
    m_Converted[key] = t;
    return t;
}

DevTensor CompiledRegion::NewOutput(int v, DType type, bool nhwc) {
    const Value& value = m_Graph->m_Values[static_cast<std::size_t>(v)];
    DevTensor t;
    t.m_Type = type;
    t.m_Dims = DimsOf(value.m_Info);
    t.m_Nhwc = nhwc && t.m_Dims.size() == 4;
    // A region output produced in its final form is written straight into the output buffer.
    const auto& outs = m_Graph->m_OutputValues;
    auto it = std::find(outs.begin(), outs.end(), v);
    const std::optional<DType> netType = DTypeOf(value.m_Info.GetDataType());
    if (it != outs.end() && netType && *netType == type && t.PlainEquivalent()) {
        t.m_Buf = Buf{BufKind::Output, it - outs.begin()};
    } else {
        t.m_Buf = NewTemp(t.Bytes());
    }
    m_Values[static_cast<std::size_t>(v)] = t;
    return t;
}

void CompiledRegion::CopyInto(const DevTensor& src, const DevTensor& dst, const std::string& what) {
    CopyLaunch l;
    l.m_Rank = static_cast<int32_t>(dst.m_Dims.size());
    const auto si = BroadcastStrides(src, dst.m_Dims);
    const auto so = dst.Strides();
    for (std::size_t d = 0; d < dst.m_Dims.size(); ++d) {
        l.m_Dims[d] = dst.m_Dims[d];
        l.m_InStrides[d] = si[d];
        l.m_OutStrides[d] = so[d];
    }
    l.m_InType = src.m_Type;
    l.m_OutType = dst.m_Type;
    AddStep(what, {src.m_Buf, dst.m_Buf}, [l0 = l](const RunContext& c) {
        auto l = l0;  // a copy: steps may run on several threads at once
        l.m_In = c.Ptr(0);
        l.m_Out = c.Ptr(1);
        CheckCuda(LaunchCopy(l, c.m_Stream), "copy kernel");
    });
}

void CompiledRegion::EltwiseInto(const EltwiseProgram& program, const std::vector<DevTensor>& inputs,
                                 const DevTensor& out, const std::string& what) {
    EwLaunch l;
    // Iterate in the output's memory order: NHWC is (n, h, w, c).
    std::vector<std::size_t> order(out.m_Dims.size());
    std::iota(order.begin(), order.end(), 0);
    if (out.m_Nhwc && out.m_Dims.size() == 4) order = {0, 2, 3, 1};
    l.m_Rank = static_cast<int32_t>(order.size());
    for (std::size_t d = 0; d < order.size(); ++d) l.m_Dims[d] = out.m_Dims[order[d]];
    l.m_Count = out.Count();
    const auto outStrides = out.Strides();
    bool contiguous = true;
    std::vector<Buf> bufs;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const auto s = BroadcastStrides(inputs[k], out.m_Dims);
        for (std::size_t d = 0; d < order.size(); ++d) l.m_InputStrides[k][d] = s[order[d]];
        contiguous = contiguous && s == outStrides && inputs[k].m_Dims.size() == out.m_Dims.size();
        l.m_Program.m_InputTypes[k] = inputs[k].m_Type;
        bufs.push_back(inputs[k].m_Buf);
    }
    l.m_Contiguous = contiguous;
    bufs.push_back(out.m_Buf);
    // Registers, with loads of one-element constants turned into immediates.
    std::vector<int> regs;
    const int used = AllocateRegisters(program, regs);
    if (used > kEwMaxRegs || program.m_Nodes.size() > static_cast<std::size_t>(kEwMaxInstrs) ||
        inputs.size() > static_cast<std::size_t>(kEwMaxInputs)) {
        throw LayerValidationException("GpuAcc: element-wise program of '" + what + "' is too large");
    }
    l.m_Program.m_NumInputs = static_cast<int32_t>(inputs.size());
    l.m_Program.m_NumInstrs = static_cast<int32_t>(program.m_Nodes.size());
    for (std::size_t i = 0; i < program.m_Nodes.size(); ++i) {
        const EwNode& n = program.m_Nodes[i];
        EwInstr& in = l.m_Program.m_Instrs[i];
        in.m_Op = n.m_Op;
        in.m_Dst = static_cast<uint8_t>(regs[i]);
        in.m_F0 = n.m_F0;
        in.m_F1 = n.m_F1;
        if (n.m_Op == EwOp::Load) {
            in.m_A = static_cast<uint8_t>(n.m_A);
            // Program inputs that are graph values (not -1) and one-element constants load as
            // immediates.
            const int v = program.m_Inputs[static_cast<std::size_t>(n.m_A)];
            if (v >= 0) {
                const Value& value = m_Graph->m_Values[static_cast<std::size_t>(v)];
                if (value.m_Constant && value.m_SmallConstant.size() == 1) {
                    in.m_Op = EwOp::Imm;
                    in.m_F0 = value.m_SmallConstant[0];
                }
            }
            continue;
        }
        if (n.m_A >= 0) in.m_A = static_cast<uint8_t>(regs[static_cast<std::size_t>(n.m_A)]);
        if (n.m_B >= 0) in.m_B = static_cast<uint8_t>(regs[static_cast<std::size_t>(n.m_B)]);
        if (n.m_C >= 0) in.m_C = static_cast<uint8_t>(regs[static_cast<std::size_t>(n.m_C)]);
    }
    l.m_Program.m_ResultReg = regs[static_cast<std::size_t>(program.m_Result)];
    l.m_Program.m_OutputType = out.m_Type;
    const std::size_t numInputs = inputs.size();
    AddStep(what, bufs, [l0 = l, numInputs](const RunContext& c) {
        auto l = l0;  // a copy: steps may run on several threads at once
        for (std::size_t k = 0; k < numInputs; ++k) l.m_Inputs[k] = c.Ptr(k);
        l.m_Output = c.Ptr(numInputs);
        CheckCuda(LaunchEltwise(l, c.m_Stream), "element-wise kernel");
    });
}

// ---- lowering, node by node -------------------------------------------------------------------

void CompiledRegion::LowerEltwise(const Node& node) {
    const EltwiseProgram& p = node.m_Program;
    std::vector<DevTensor> ins;
    bool nhwcIn = false;
    const int out = node.m_Outputs[0];
    const std::vector<int64_t> outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    for (int v : p.m_Inputs) {
        const Value& value = m_Graph->m_Values[static_cast<std::size_t>(v)];
        // Small constants load as immediates; others are read as they are (any type, any layout).
        DevTensor t = value.m_Constant ? Need(v, std::nullopt, false) : Need(v, std::nullopt, std::nullopt, true);
        nhwcIn = nhwcIn || (t.m_Nhwc && !t.PlainEquivalent() && t.m_Dims == outDims);
        ins.push_back(t);
    }
    DevTensor o = NewOutput(out, TypeFor(out), nhwcIn);
    std::string what = "element-wise '" + node.m_Name + "'";
    if (!node.m_Fused.empty()) what += " (+" + std::to_string(node.m_Fused.size()) + " fused)";
    EltwiseInto(p, ins, o, what);
}

void CompiledRegion::LowerConv(const Node& node) {
    const auto& d = std::get<ConvolutionDescriptor>(node.m_Descriptor);
    // tf32 regions run their convolutions as fp32 ones unless ConvTf32=on (see GpuAccRegion.hpp).
    const Precision precision = m_Options.m_Precision == Precision::Tf32 && !m_Options.m_ConvTf32
                                    ? Precision::Fp32
                                    : m_Options.m_Precision;
    // NHWC for tensor cores; NCHW in fp32, where cuDNN's CUDA-core kernels run NHWC far slower
    // (resnet50 at batch 32: 145 ms against PyTorch's 12 ms).
    const bool channelsLast = precision != Precision::Fp32;
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, channelsLast);
    const int wv = node.m_Inputs[1];
    const TensorShape& ws = m_Graph->m_Values[static_cast<std::size_t>(wv)].m_Info.GetShape();
    ConvShape s;
    s.m_N = x.m_Dims[0];
    s.m_C = x.m_Dims[1];
    s.m_H = x.m_Dims[2];
    s.m_W = x.m_Dims[3];
    s.m_K = ws[0];
    s.m_R = ws[2];
    s.m_S = ws[3];
    s.m_Groups = d.m_Groups;
    s.m_PadTop = d.m_PadsBegin[0];
    s.m_PadLeft = d.m_PadsBegin[1];
    s.m_PadBottom = d.m_PadsEnd[0];
    s.m_PadRight = d.m_PadsEnd[1];
    s.m_StrideH = d.m_Strides[0];
    s.m_StrideW = d.m_Strides[1];
    s.m_DilationH = d.m_Dilations[0];
    s.m_DilationW = d.m_Dilations[1];
    s.m_ChannelsLast = channelsLast;
    const int out = node.m_Outputs[0];
    const auto outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    s.m_OH = outDims[2];
    s.m_OW = outDims[3];

    const float* w = ConstFloats(wv);
    const std::size_t wn = static_cast<std::size_t>(s.m_K * (s.m_C / s.m_Groups) * s.m_R * s.m_S);
    const bool hasBias = node.m_Inputs.size() > 2;
    std::vector<float> bias;
    if (hasBias) {
        const float* b = ConstFloats(node.m_Inputs[2]);
        bias.assign(b, b + s.m_K);
    }
    std::optional<DevTensor> residual;
    if (node.m_Residual >= 0) residual = Need(node.m_Residual, m_Compute, channelsLast);
    const DevTensor y = NewOutput(out, m_Compute, channelsLast);

    ConvEpilogue wanted;
    wanted.m_Bias = hasBias;
    wanted.m_Residual = residual.has_value();
    wanted.m_Activation = node.m_Activation;
    wanted.m_ClipLow = node.m_ClipLow;
    wanted.m_ClipHigh = node.m_ClipHigh;
    // KCRS -> KRSC for NHWC, in the compute type.
    const int64_t cg = s.m_C / s.m_Groups;
    const std::vector<float> kcrs(w, w + wn);
    std::vector<float> packed = kcrs;
    if (channelsLast) {
        for (int64_t k = 0; k < s.m_K; ++k)
            for (int64_t c = 0; c < cg; ++c)
                for (int64_t r = 0; r < s.m_R; ++r)
                    for (int64_t q = 0; q < s.m_S; ++q)
                        packed[static_cast<std::size_t>(((k * s.m_R + r) * s.m_S + q) * cg + c)] =
                            w[static_cast<std::size_t>(((k * cg + c) * s.m_R + r) * s.m_S + q)];
    }
    const Buf biasF32{BufKind::Const, hasBias ? AddConst(bias.data(), bias.size() * sizeof(float)) : 0};

    // Each candidate - cuDNN's plan, GpuAcc's depthwise kernel - is checked against the direct
    // kernel on pseudo-random data, every image of the batch, before it is trusted; a cuDNN
    // engine that disagrees is replaced by one without transforms (Winograd, FFT), then by the
    // heuristics' first such choice, then by the direct kernel (never silently wrong).
    cudnnHandle_t handle = CurrentThreadContext().m_Cudnn;
    cudaStream_t stream = nullptr;
    cudnnGetStream(handle, &stream);
    ConvTestData test(s, m_Compute, kcrs, bias, stream);
    const DeviceBuffer testW = ConvTestData::Upload(packed, m_Compute);
    const DeviceBuffer testB = ConvTestData::Upload(bias, m_Compute);
    const double tolerance = ConvTolerance(precision);
    const bool depthwise = s.m_Groups == s.m_C && s.m_K == s.m_C && s.m_C > 1 && s.m_DilationH == 1 &&
                           s.m_DilationW == 1 && !wanted.m_Residual && wanted.m_Activation != Activation::Gelu &&
                           DepthwiseConvSupports(static_cast<int32_t>(s.m_R), static_cast<int32_t>(s.m_S), m_Compute);
    const auto mode = m_Options.m_Depthwise;
    std::string why, rejected;
    std::unique_ptr<ConvPlan> plan;
    if (!(depthwise && mode == RegionOptions::Depthwise::Own)) {
        struct Attempt {
            bool m_Autotune;
            bool m_Exact;  // without transform-based (Winograd, FFT) engines
        };
        for (const Attempt a : {Attempt{m_Options.m_ConvAutotune, false}, Attempt{m_Options.m_ConvAutotune, true},
                                Attempt{false, true}}) {
            plan = ConvPlan::Build(s, m_Compute, precision, wanted, a.m_Autotune, a.m_Exact, handle, why);
            if (!plan) break;
            const ConvPlan* p = plan.get();
            const ConvCheckResult r = test.Check(
                [&](const void* tx, const void* tz, void* ty, void* tws) {
                    p->Run(handle, tx, testW.Get(), testB.Get(), tz, ty, tws);
                },
                p->Fused(), p->WorkspaceBytes());
            if (r.Passes(tolerance)) break;
            rejected += (rejected.empty() ? "" : "; ") + plan->Description() + " failed its check against the direct kernel: " +
                        r.ToString(s.m_N);
            plan.reset();
        }
        if (!plan && !rejected.empty()) why = rejected;
    }

    // GpuAcc's depthwise kernel (bias and activation fused): where it is asked for, where cuDNN
    // has no plan, or where it is faster than cuDNN's plan on this shape.
    DepthwiseConvLaunch dw;
    std::vector<float> dwWeights;  // NHWC: [R][S][C]; NCHW: [C][R][S] (KCRS as it is)
    std::string dwChoice;
    bool useDepthwise = false;
    if (depthwise && mode != RegionOptions::Depthwise::Cudnn) {
        dw.m_Type = m_Compute;
        dw.m_Nhwc = channelsLast;
        dw.m_N = s.m_N; dw.m_C = s.m_C; dw.m_H = s.m_H; dw.m_W_ = s.m_W; dw.m_OH = s.m_OH; dw.m_OW = s.m_OW;
        dw.m_R = static_cast<int32_t>(s.m_R); dw.m_S = static_cast<int32_t>(s.m_S);
        dw.m_SH = static_cast<int32_t>(s.m_StrideH); dw.m_SW = static_cast<int32_t>(s.m_StrideW);
        dw.m_PH = static_cast<int32_t>(s.m_PadTop); dw.m_PW = static_cast<int32_t>(s.m_PadLeft);
        dw.m_Act = ToConvAct(wanted.m_Activation);
        dw.m_ClipLow = wanted.m_ClipLow;
        dw.m_ClipHigh = wanted.m_ClipHigh;
        dwWeights = kcrs;
        if (channelsLast) {
            for (int64_t c = 0; c < s.m_C; ++c)
                for (int64_t rs = 0; rs < s.m_R * s.m_S; ++rs)
                    dwWeights[static_cast<std::size_t>(rs * s.m_C + c)] = kcrs[static_cast<std::size_t>(c * s.m_R * s.m_S + rs)];
        }
        const DeviceBuffer dwW = ConvTestData::Upload(dwWeights, m_Compute);
        auto runOwn = [&](const void* tx, const void*, void* ty, void*) {
            DepthwiseConvLaunch l = dw;
            l.m_X = tx;
            l.m_W = dwW.Get();
            l.m_Bias = hasBias ? test.FloatBias() : nullptr;
            l.m_Y = ty;
            CheckCuda(LaunchDepthwiseConv(l, stream), "depthwise convolution kernel");
        };
        ConvEpilogue own = wanted;
        const ConvCheckResult r = test.Check(runOwn, own, 0);
        if (!r.Passes(tolerance)) {
            rejected += std::string(rejected.empty() ? "" : "; ") + "depthwise kernel failed its check against the direct kernel: " +
                        r.ToString(s.m_N);
        } else if (!plan || mode == RegionOptions::Depthwise::Own) {
            useDepthwise = true;
            dwChoice = plan ? "" : " (cuDNN: " + why + ")";
        } else {
            const ConvPlan* p = plan.get();
            const float cudnnMs = test.TimeMs(
                [&](const void* tx, const void* tz, void* ty, void* tws) {
                    p->Run(handle, tx, testW.Get(), testB.Get(), tz, ty, tws);
                },
                p->WorkspaceBytes());
            const float ownMs = test.TimeMs(runOwn, 0);
            char times[96];
            std::snprintf(times, sizeof(times), "%.4f ms against %.4f ms for ", ownMs, cudnnMs);
            useDepthwise = ownMs < cudnnMs;
            dwChoice = std::string(" (") + times + plan->Description() + ")";
            if (!useDepthwise) {
                char kept[96];
                std::snprintf(kept, sizeof(kept), " (GpuAcc's depthwise kernel: %.4f ms against %.4f ms)", ownMs, cudnnMs);
                dwChoice = kept;
            }
        }
    }

    ConvEpilogue done;
    const std::string rejectedNote = rejected.empty() ? "" : " [" + rejected + "]";
    std::string description;
    if (useDepthwise) {
        const auto wBytes = ToType(dwWeights.data(), dwWeights.size(), m_Compute);
        const Buf wBuf{BufKind::Const, AddConst(wBytes.data(), wBytes.size())};
        done = wanted;
        description = std::string("GpuAcc depthwise kernel") + (hasBias ? "+bias" : "") +
                      (wanted.m_Activation != Activation::None ? std::string("+") + ActivationName(wanted.m_Activation) : "") +
                      dwChoice + rejectedNote;
        AddStep("conv '" + node.m_Name + "': " + description, {x.m_Buf, wBuf, biasF32, y.m_Buf},
                [dw, hasBias](const RunContext& c) {
                    DepthwiseConvLaunch l = dw;  // a copy: steps may run on several threads at once
                    l.m_X = c.Ptr(0);
                    l.m_W = c.Ptr(1);
                    l.m_Bias = hasBias ? static_cast<const float*>(c.Ptr(2)) : nullptr;
                    l.m_Y = c.Ptr(3);
                    CheckCuda(LaunchDepthwiseConv(l, c.m_Stream), "depthwise convolution kernel");
                });
    } else if (plan) {
        const auto wBytes = ToType(packed.data(), wn, m_Compute);
        const Buf wBuf{BufKind::Const, AddConst(wBytes.data(), wBytes.size())};
        Buf bBuf{BufKind::Const, 0};
        if (plan->Fused().m_Bias) {
            const auto bBytes = ToType(bias.data(), bias.size(), m_Compute);
            bBuf.m_Index = AddConst(bBytes.data(), bBytes.size());
        }
        done = plan->Fused();
        m_Workspace = std::max(m_Workspace, plan->WorkspaceBytes());
        const ConvPlan* p = plan.get();
        const bool useResidual = done.m_Residual;
        std::vector<Buf> bufs{x.m_Buf, wBuf, bBuf, useResidual ? residual->m_Buf : bBuf, y.m_Buf};
        description = p->Description() + dwChoice + rejectedNote;
        AddStep("conv '" + node.m_Name + "': " + description, bufs, [p](const RunContext& c) {
            p->Run(c.m_Cudnn, c.Ptr(0), c.Ptr(1), c.Ptr(2), c.Ptr(3), c.Ptr(4), c.m_Workspace);
        });
        m_Steps.back().m_FenceBefore = precision == Precision::Tf32;
        m_ConvPlans.push_back(std::move(plan));
    } else {
        // cuDNN has no engine for it: GpuAcc's direct kernel (bias included).
        const auto wBytes = ToType(w, wn, m_Compute);
        const Buf wBuf{BufKind::Const, AddConst(wBytes.data(), wBytes.size())};
        DirectConvLaunch l;
        l.m_Type = m_Compute;
        l.m_N = s.m_N; l.m_C = s.m_C; l.m_H = s.m_H; l.m_W_ = s.m_W; l.m_K = s.m_K; l.m_OH = s.m_OH; l.m_OW = s.m_OW;
        l.m_R = static_cast<int32_t>(s.m_R); l.m_S = static_cast<int32_t>(s.m_S);
        l.m_SH = static_cast<int32_t>(s.m_StrideH); l.m_SW = static_cast<int32_t>(s.m_StrideW);
        l.m_PH = static_cast<int32_t>(s.m_PadTop); l.m_PW = static_cast<int32_t>(s.m_PadLeft);
        l.m_DH = static_cast<int32_t>(s.m_DilationH); l.m_DW = static_cast<int32_t>(s.m_DilationW);
        l.m_Groups = static_cast<int32_t>(s.m_Groups);
        const auto xs = x.Strides(), ys = y.Strides();
        for (int i = 0; i < 4; ++i) {
            l.m_XStrides[i] = xs[static_cast<std::size_t>(i)];
            l.m_YStrides[i] = ys[static_cast<std::size_t>(i)];
        }
        done.m_Bias = hasBias;
        description = "direct kernel (cuDNN: " + why + ")";
        AddStep("conv '" + node.m_Name + "': " + description, {x.m_Buf, wBuf, biasF32, y.m_Buf},
                [l0 = l, hasBias](const RunContext& c) {
                    auto l = l0;  // a copy: steps may run on several threads at once
                    l.m_X = c.Ptr(0);
                    l.m_W = c.Ptr(1);
                    l.m_Bias = hasBias ? static_cast<const float*>(c.Ptr(2)) : nullptr;
                    l.m_Y = c.Ptr(3);
                    CheckCuda(LaunchDirectConv(l, c.m_Stream), "direct convolution kernel");
                });
    }
    if (m_Options.m_CheckConvs) AddConvCheck(node.m_Name + ": " + description, s, done, x, kcrs, biasF32,
                                             residual ? residual->m_Buf : x.m_Buf, y, tolerance);
    // What the convolution did not do: one element-wise pass over y, in place.
    const bool needResidual = residual && !done.m_Residual;
    const bool needActivation = node.m_Activation != Activation::None && done.m_Activation == Activation::None;
    if (!needResidual && !needActivation) return;
    EltwiseProgram p;
    std::vector<DevTensor> ins{y};
    p.m_Nodes.push_back(EwNode{EwOp::Load, 0});
    int last = 0;
    if (needResidual) {
        ins.push_back(*residual);
        p.m_Nodes.push_back(EwNode{EwOp::Load, 1});
        p.m_Nodes.push_back(EwNode{EwOp::Add, last, static_cast<int>(p.m_Nodes.size() - 1)});
        last = static_cast<int>(p.m_Nodes.size() - 1);
    }
    if (needActivation) {
        EwNode a;
        a.m_A = last;
        switch (node.m_Activation) {
            case Activation::Relu: a.m_Op = EwOp::Relu; break;
            case Activation::Clip: a.m_Op = EwOp::Clip; a.m_F0 = node.m_ClipLow; a.m_F1 = node.m_ClipHigh; break;
            case Activation::Sigmoid: a.m_Op = EwOp::Sigmoid; break;
            case Activation::Tanh: a.m_Op = EwOp::Tanh; break;
            case Activation::Swish: a.m_Op = EwOp::Swish; break;
            case Activation::Gelu: a.m_Op = EwOp::Gelu; break;
            case Activation::None: break;
        }
        p.m_Nodes.push_back(a);
        last = static_cast<int>(p.m_Nodes.size() - 1);
    }
    p.m_Result = last;
    p.m_Inputs.assign(ins.size(), -1);
    EltwiseInto(p, ins, y, "conv '" + node.m_Name + "' epilogue (not fused by cuDNN)");
}

void CompiledRegion::AddConvCheck(const std::string& what, const ConvShape& s, const ConvEpilogue& done,
                                  const DevTensor& x, const std::vector<float>& kcrs, const Buf& biasF32,
                                  const Buf& residual, const DevTensor& y, double tolerance) {
    // The direct kernel reads KCRS weights in the compute type; its F32 result and the per-image
    // sums live in scratch of their own.
    const auto wBytes = ToType(kcrs.data(), kcrs.size(), m_Compute);
    const Buf wBuf{BufKind::Const, AddConst(wBytes.data(), wBytes.size())};
    const Buf ref = NewTemp(static_cast<std::size_t>(y.Count()) * sizeof(float));
    const Buf sums = NewTemp(static_cast<std::size_t>(2 * std::max<int64_t>(s.m_N, 1)) * sizeof(double));
    const DType type = m_Compute;
    AddStep("check of conv " + what, {x.m_Buf, wBuf, biasF32, residual, y.m_Buf, ref, sums},
            [what, s, done, type, tolerance](const RunContext& c) {
                const ConvCheckResult r = CheckConvOutput(s, type, done, c.Ptr(0), c.Ptr(1), static_cast<const float*>(c.Ptr(2)),
                                                          c.Ptr(3), c.Ptr(4), static_cast<float*>(c.Ptr(5)),
                                                          static_cast<double*>(c.Ptr(6)), c.m_Stream);
                std::fprintf(stderr, "GpuAcc CheckConvs: %s %s: conv '%s'\n", r.m_Error <= tolerance ? "ok" : "DIFFERS",
                             r.ToString(s.m_N).c_str(), what.c_str());
            });
}

bool CompiledRegion::LowerRowPermutedMatMul(const Node& node, const DevTensor& a, const DevTensor& b,
                                            const MatOperand& ob, const std::vector<int64_t>& outDims) {
    const std::vector<int64_t> as = a.Strides();
    const std::size_t r = a.m_Dims.size();
    const int64_t k = a.m_Dims[r - 1];
    if (as[r - 1] != 1 || k <= 0) return false;
    // The row dims, fastest first, must tile memory densely in steps of K.
    std::vector<std::pair<int64_t, int64_t>> rows;  // (stride, dim)
    for (std::size_t i = 0; i + 1 < r; ++i) {
        if (a.m_Dims[i] != 1) rows.emplace_back(as[i], a.m_Dims[i]);
    }
    std::sort(rows.begin(), rows.end());
    int64_t expect = k, total = 1;
    for (const auto& [stride, dim] : rows) {
        if (stride != expect) return false;
        expect *= dim;
        total *= dim;
    }
    if (outDims.size() != r) return false;  // A's batch dims are the output's (B has none)
    const int64_t n = outDims[r - 1];
    MatMulSpec s;
    s.m_Type = m_Compute;
    s.m_Precision = m_Options.m_Precision;
    s.m_M = total;
    s.m_N = n;
    s.m_K = k;
    s.m_LdA = k;
    s.m_TransB = ob.m_Trans;
    s.m_LdB = ob.m_Ld;
    s.m_Alpha = node.m_Alpha;
    const int64_t es = static_cast<int64_t>(DTypeSize(m_Compute));
    int64_t g = 64;
    for (int64_t v : {a.m_Buf.m_Offset, b.m_Buf.m_Offset, s.m_LdA * es, s.m_LdB * es, n * es}) g = std::gcd(g, v);
    s.m_Alignment = static_cast<int>(std::min<int64_t>(g, 16));
    std::vector<float> bias;
    if (node.m_Bias >= 0) {
        const float* bsrc = ConstFloats(node.m_Bias);
        bias.assign(bsrc, bsrc + n);
        for (float& v : bias) v *= node.m_BiasScale;
        s.m_Bias = true;
    }
    bool geluAfter = false;
    if (node.m_Activation == Activation::Relu) s.m_Relu = true;
    if (node.m_Activation == Activation::Gelu) {
        if (GeluEpilogueError(m_Compute) <= GeluEpilogueTolerance(m_Compute)) s.m_Gelu = true;
        else geluAfter = true;
    }
    DevTensor d;
    d.m_Type = m_Compute;
    d.m_Dims = {total, n};
    d.m_Buf = NewTemp(d.Bytes());
    std::unique_ptr<MatMulPlan> plan = MatMulPlan::Build(s, "matmul '" + node.m_Name + "'");
    m_Workspace = std::max(m_Workspace, plan->WorkspaceBytes());
    if (s.m_Bias) {
        const auto bytes = ToType(bias.data(), bias.size(), m_Compute);
        m_BiasToSet.emplace_back(plan.get(), AddConst(bytes.data(), bytes.size()));
    }
    const MatMulPlan* p = plan.get();
    const std::string what = "matmul '" + node.m_Name + "': cuBLASLt " + std::to_string(total) + "x" + std::to_string(k) +
                             "x" + std::to_string(n) + (s.m_Bias ? "+bias" : "") + (s.m_Relu ? "+relu" : "") +
                             (s.m_Gelu ? "+gelu" : "") + " over A's rows in memory order (output a view), " +
                             plan->Choice();
    AddStep(what, {a.m_Buf, b.m_Buf, d.m_Buf, d.m_Buf},
            [p](const RunContext& c) { p->Run(c.m_Stream, c.Ptr(0), c.Ptr(1), c.Ptr(2), c.Ptr(3), c.m_Workspace); });
    m_MatMulPlans.push_back(std::move(plan));
    if (geluAfter) {
        EltwiseProgram gp;
        gp.m_Inputs = {-1};
        gp.m_Nodes = {EwNode{EwOp::Load, 0}, EwNode{EwOp::Gelu, 0}};
        gp.m_Result = 1;
        EltwiseInto(gp, {d}, d, "matmul '" + node.m_Name + "' GELU (erf)");
    }
    // The output: A's row dims with A's permutation, N contiguous.
    DevTensor y = d;
    y.m_Dims = outDims;
    y.m_ViewStrides.assign(r, 1);
    for (std::size_t i = 0; i + 1 < r; ++i) y.m_ViewStrides[i] = as[i] / k * n;
    m_Values[static_cast<std::size_t>(node.m_Outputs[0])] = y;
    return true;
}

void CompiledRegion::LowerMatMul(const Node& node) {
    const bool gemm = node.m_LayerType == LayerType::Gemm;
    GemmDescriptor gd;
    if (gemm) gd = std::get<GemmDescriptor>(node.m_Descriptor);
    const int av = node.m_Inputs[0], bv = node.m_Inputs[1], out = node.m_Outputs[0];
    const auto outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    const std::size_t ro = outDims.size(), nb = ro - 2;
    const std::vector<int64_t> outBatch(outDims.begin(), outDims.begin() + static_cast<std::ptrdiff_t>(nb));
    int64_t batch = 1;
    for (int64_t d : outBatch) batch *= d;

    // Operands as cuBLASLt can read them in place (transposed and strided views included), else
    // dense copies.
    DevTensor a = Need(av, m_Compute, false, true);
    DevTensor b = Need(bv, m_Compute, false, true);
    MatOperand oa = AnalyzeOperand(a, gemm && gd.m_TransA);
    MatOperand ob = AnalyzeOperand(b, gemm && gd.m_TransB);
    auto usable = [&](const MatOperand& o) { return o.m_Ok && (o.m_Batch == 1 || SameBatch(o.m_BatchDims, outBatch)); };
    // Shared weights and an A whose rows are a permutation of dense memory (a transposed view,
    // as [S, B, E] of a [B, S, E] tensor): one matrix over the rows in memory order, and the
    // output is the same permutation (a view) of that result - instead of one small matmul per
    // batch or a copy of A.
    if (!gemm && node.m_Residual < 0 && usable(ob) && ob.m_Batch == 1 && a.IsView() && !(oa.m_Ok && !oa.m_Trans &&
        (oa.m_Batch == 1 || oa.m_BatchStride == outDims[ro - 2] * oa.m_Ld))) {
        if (LowerRowPermutedMatMul(node, a, b, ob, outDims)) return;
    }
    if (!usable(oa)) {
        a = Need(av, m_Compute, false);
        oa = AnalyzeOperand(a, gemm && gd.m_TransA);
    }
    if (!usable(ob)) {
        b = Need(bv, m_Compute, false);
        ob = AnalyzeOperand(b, gemm && gd.m_TransB);
    }
    std::optional<DevTensor> residual;
    if (node.m_Residual >= 0) residual = Need(node.m_Residual, m_Compute, false);

    MatMulSpec s;
    s.m_Type = m_Compute;
    s.m_Precision = m_Options.m_Precision;
    s.m_M = outDims[ro - 2];
    s.m_N = outDims[ro - 1];
    s.m_K = oa.m_Cols;
    s.m_TransA = oa.m_Trans;
    s.m_TransB = ob.m_Trans;
    s.m_LdA = oa.m_Ld;
    s.m_LdB = ob.m_Ld;
    s.m_Alpha = node.m_Alpha * (gemm ? gd.m_Alpha : 1.0f);
    s.m_Residual = residual.has_value();
    s.m_Beta = node.m_ResidualScale;
    const int64_t matD = s.m_M * s.m_N;
    s.m_Calls.clear();
    if (usable(oa) && usable(ob)) {
        if (ob.m_Batch == 1 && !oa.m_Trans && oa.m_Batch > 1 && oa.m_BatchStride == s.m_M * oa.m_Ld) {
            // Weights shared by every batch and A's rows continuing across batches: one matrix
            // of batch * M rows (the usual case of a linear layer over [batch, seq, features]).
            s.m_M *= batch;
            s.m_Batch = 1;
        } else {
            s.m_Batch = batch;
            s.m_StrideA = oa.m_Batch == 1 ? 0 : oa.m_BatchStride;
            s.m_StrideB = ob.m_Batch == 1 ? 0 : ob.m_BatchStride;
            s.m_StrideD = matD;
        }
        s.m_Calls.push_back(MatMulSpec::Call{});
    } else {
        // Broadcast over some batch dims only: dense operands, one call per output matrix.
        s.m_Batch = 1;
        const int64_t matA = s.m_M * s.m_K, matB = s.m_K * s.m_N;
        std::vector<int64_t> idx(nb, 0);
        for (int64_t i = 0; i < batch; ++i) {
            int64_t rest = i;
            for (std::size_t d = nb; d-- > 0;) {
                idx[d] = rest % outBatch[d];
                rest /= outBatch[d];
            }
            auto offset = [&](const DevTensor& t, int64_t mat) {
                const std::size_t r = t.m_Dims.size() - 2, off = nb - r;
                int64_t o = 0, stride = mat;
                for (std::size_t d = r; d-- > 0;) {
                    if (t.m_Dims[d] != 1) o += idx[d + off] * stride;
                    stride *= t.m_Dims[d];
                }
                return o;
            };
            s.m_Calls.push_back(MatMulSpec::Call{offset(a, matA), offset(b, matB), i * matD});
        }
    }
    // Alignment of every operand pointer the calls form (arena tensors are 64-byte aligned).
    const int64_t es = static_cast<int64_t>(DTypeSize(m_Compute));
    int64_t g = 64;
    for (int64_t v : {s.m_StrideA * es, s.m_StrideB * es, s.m_StrideD * es, a.m_Buf.m_Offset, b.m_Buf.m_Offset,
                      s.m_LdA * es, s.m_LdB * es, s.m_N * es}) {
        g = std::gcd(g, v);
    }
    for (const auto& c : s.m_Calls) {
        for (int64_t v : {c.m_A * es, c.m_B * es, c.m_D * es}) g = std::gcd(g, v);
    }
    s.m_Alignment = static_cast<int>(std::min<int64_t>(g, 16));

    // Epilogue: bias (a constant row, Gemm's scaled by beta), relu or gelu.
    std::vector<float> bias;
    if (node.m_Bias >= 0) {
        const float* bsrc = ConstFloats(node.m_Bias);
        bias.assign(bsrc, bsrc + s.m_N);
        for (float& v : bias) v *= node.m_BiasScale;
        s.m_Bias = true;
    }
    bool geluAfter = false;
    if (node.m_Activation == Activation::Relu) s.m_Relu = true;
    if (node.m_Activation == Activation::Gelu) {
        if (GeluEpilogueError(m_Compute) <= GeluEpilogueTolerance(m_Compute)) s.m_Gelu = true;
        else geluAfter = true;
    }
    const DevTensor d = NewOutput(out, m_Compute, false);
    std::unique_ptr<MatMulPlan> plan = MatMulPlan::Build(s, "matmul '" + node.m_Name + "'");
    m_Workspace = std::max(m_Workspace, plan->WorkspaceBytes());
    if (s.m_Bias) {
        const auto bytes = ToType(bias.data(), bias.size(), m_Compute);
        m_BiasToSet.emplace_back(plan.get(), AddConst(bytes.data(), bytes.size()));
    }
    const MatMulPlan* p = plan.get();
    std::string what = "matmul '" + node.m_Name + "': cuBLASLt " + std::to_string(s.m_M) + "x" + std::to_string(s.m_K) +
                       "x" + std::to_string(s.m_N) + (s.m_Batch > 1 ? " x" + std::to_string(s.m_Batch) : "") +
                       (s.m_Calls.size() > 1 ? " in " + std::to_string(s.m_Calls.size()) + " calls" : "") +
                       (s.m_Bias ? "+bias" : "") + (s.m_Residual ? "+residual" : "") + (s.m_Relu ? "+relu" : "") +
                       (s.m_Gelu ? "+gelu" : "") + (s.m_TransA ? " (A transposed in place)" : "") +
                       (s.m_TransB ? " (B transposed in place)" : "") + ", " + plan->Choice();
    std::vector<Buf> bufs{a.m_Buf, b.m_Buf, residual ? residual->m_Buf : d.m_Buf, d.m_Buf};
    AddStep(what, bufs, [p](const RunContext& c) { p->Run(c.m_Stream, c.Ptr(0), c.Ptr(1), c.Ptr(2), c.Ptr(3), c.m_Workspace); });
    m_MatMulPlans.push_back(std::move(plan));
    if (geluAfter) {
        EltwiseProgram gp;
        gp.m_Inputs = {-1};
        gp.m_Nodes = {EwNode{EwOp::Load, 0}, EwNode{EwOp::Gelu, 0}};
        gp.m_Result = 1;
        EltwiseInto(gp, {d}, d, "matmul '" + node.m_Name + "' GELU (erf; cuBLASLt's epilogue differs by " +
                                     std::to_string(GeluEpilogueError(m_Compute)) + ")");
    }
}

void CompiledRegion::LowerPool(const Node& node) {
    const auto& d = std::get<PoolingDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, std::nullopt, true);
    const DevTensor y = NewOutput(node.m_Outputs[0], m_Compute, x.m_Nhwc && !x.IsView());
    PoolLaunch l;
    l.m_Type = m_Compute;
    l.m_Max = d.m_Algorithm == PoolingAlgorithm::Max;
    l.m_CountIncludePad = d.m_CountIncludePad;
    l.m_N = x.m_Dims[0]; l.m_C = x.m_Dims[1]; l.m_H = x.m_Dims[2]; l.m_W = x.m_Dims[3];
    l.m_OH = y.m_Dims[2]; l.m_OW = y.m_Dims[3];
    if (d.m_Global) {
        l.m_KH = static_cast<int32_t>(l.m_H);
        l.m_KW = static_cast<int32_t>(l.m_W);
    } else {
        l.m_KH = static_cast<int32_t>(d.m_KernelShape[0]); l.m_KW = static_cast<int32_t>(d.m_KernelShape[1]);
        l.m_SH = static_cast<int32_t>(d.m_Strides[0]); l.m_SW = static_cast<int32_t>(d.m_Strides[1]);
        l.m_PH = static_cast<int32_t>(d.m_PadsBegin[0]); l.m_PW = static_cast<int32_t>(d.m_PadsBegin[1]);
        l.m_PHEnd = static_cast<int32_t>(d.m_PadsEnd[0]); l.m_PWEnd = static_cast<int32_t>(d.m_PadsEnd[1]);
        if (!d.m_Dilations.empty()) {
            l.m_DH = static_cast<int32_t>(d.m_Dilations[0]);
            l.m_DW = static_cast<int32_t>(d.m_Dilations[1]);
        }
    }
    const auto xs = x.Strides(), ys = y.Strides();
    for (int i = 0; i < 4; ++i) {
        l.m_XStrides[i] = xs[static_cast<std::size_t>(i)];
        l.m_YStrides[i] = ys[static_cast<std::size_t>(i)];
    }
    AddStep("pool '" + node.m_Name + "'", {x.m_Buf, y.m_Buf}, [l0 = l](const RunContext& c) {
        auto l = l0;  // a copy: steps may run on several threads at once
        l.m_X = c.Ptr(0);
        l.m_Y = c.Ptr(1);
        CheckCuda(LaunchPool(l, c.m_Stream), "pooling kernel");
    });
}

void CompiledRegion::LowerBatchNorm(const Node& node) {
    const auto& d = std::get<BatchNormalizationDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], std::nullopt, std::nullopt, true);
    const int64_t c = x.m_Dims[1];
    const float* scale = ConstFloats(node.m_Inputs[1]);
    const float* bias = ConstFloats(node.m_Inputs[2]);
    const float* mean = ConstFloats(node.m_Inputs[3]);
    const float* var = ConstFloats(node.m_Inputs[4]);
    // y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a, folded here once.
    std::vector<float> a(static_cast<std::size_t>(c)), b(static_cast<std::size_t>(c));
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<float>(scale[i] / std::sqrt(static_cast<double>(var[i]) + d.m_Eps));
        b[i] = static_cast<float>(bias[i] - static_cast<double>(mean[i]) * a[i]);
    }
    DevTensor ta, tb;
    ta.m_Type = tb.m_Type = DType::F32;
    ta.m_Dims.assign(x.m_Dims.size(), 1);
    ta.m_Dims[1] = c;
    tb.m_Dims = ta.m_Dims;
    ta.m_Buf = Buf{BufKind::Const, AddConst(a.data(), a.size() * sizeof(float))};
    tb.m_Buf = Buf{BufKind::Const, AddConst(b.data(), b.size() * sizeof(float))};
    const DevTensor y = NewOutput(node.m_Outputs[0], TypeFor(node.m_Outputs[0]), x.m_Nhwc && !x.IsView());
    EltwiseProgram p;
    p.m_Inputs = {node.m_Inputs[0], -1, -1};  // the folded scale and shift are not graph values
    p.m_Nodes = {EwNode{EwOp::Load, 0}, EwNode{EwOp::Load, 1}, EwNode{EwOp::Mul, 0, 1}, EwNode{EwOp::Load, 2},
                 EwNode{EwOp::Add, 2, 3}};
    p.m_Result = 4;
    EltwiseInto(p, {x, ta, tb}, y, "batchnorm '" + node.m_Name + "' (folded scale and shift)");
}

namespace {

/// An attention's additive mask read as [b, h, sq, skv]: right-aligned, dims of 1 broadcast, with
/// the strides a dense tensor of those dims has there (as cuDNN wants them). With `rank3Operands`
/// a rank-3 mask is [b * h, sq, skv] like the operands: its first dim is b, or b and `heads` where
/// the operands' first dim was split so.
void SetAttentionMask(AttentionShape& s, const DevTensor& mask, bool rank3Operands, int64_t heads) {
    const auto ms = mask.Strides();
    const std::size_t mr = mask.m_Dims.size();
    std::array<int64_t, 4> md{1, 1, 1, 1}, mst{0, 0, 0, 0};
    for (std::size_t i = 0; i < mr; ++i) {
        md[4 - mr + i] = mask.m_Dims[i];
        mst[4 - mr + i] = ms[i];
    }
    if (rank3Operands && mr == 3) {
        if (heads > 0 && mask.m_Dims[0] != 1) {
            md = {mask.m_Dims[0] / heads, heads, mask.m_Dims[1], mask.m_Dims[2]};
            mst = {ms[0] * heads, ms[0], ms[1], ms[2]};
        } else {
            md = {mask.m_Dims[0], 1, mask.m_Dims[1], mask.m_Dims[2]};
            mst = {ms[0], 0, ms[1], ms[2]};
        }
    }
    int64_t dense = 1;
    for (std::size_t i = 4; i-- > 0;) {
        if (md[i] == 1) mst[i] = dense;
        dense *= md[i];
    }
    s.m_Mask = true;
    s.m_MaskDims = md;
    s.m_MaskStrides = mst;
}

/// ONNX Resize's source coordinate of output index x along one dim (coordinate_transformation_mode),
/// in double as the ONNX reference computes it; `resized` is scale * input length (the output
/// length where sizes were given).
double ResizeSource(CoordinateTransform mode, double x, double scale, double resized, double in) {
    switch (mode) {
        case CoordinateTransform::HalfPixel: return (x + 0.5) / scale - 0.5;
        case CoordinateTransform::PytorchHalfPixel: return resized == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
        case CoordinateTransform::AlignCorners: return resized == 1.0 ? 0.0 : x * (in - 1) / (resized - 1);
        case CoordinateTransform::Asymmetric: return x / scale;
        case CoordinateTransform::TfHalfPixelForNearest: return (x + 0.5) / scale;
        case CoordinateTransform::TfCropAndResize:
        case CoordinateTransform::HalfPixelSymmetric: break;  // declined in GpuAccSupport.cpp
    }
    return 0.0;
}

int64_t ResizeNearest(NearestMode mode, double v) {
    const double lo = std::floor(v);
    if (v == lo) return static_cast<int64_t>(lo);
    const double frac = v - lo;
    switch (mode) {
        case NearestMode::RoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? lo : lo + 1);
        case NearestMode::RoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? lo : lo + 1);
        case NearestMode::Floor: return static_cast<int64_t>(lo);
        case NearestMode::Ceil: return static_cast<int64_t>(lo + 1);
    }
    return static_cast<int64_t>(lo);
}

}  // namespace

void CompiledRegion::LowerRemap(const Node& node) {
    // Any layout in (the kernel reads strides); the output in the input's layout, so a Resize or
    // Pad between NHWC convolutions stays NHWC.
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, std::nullopt, true);
    const int out = node.m_Outputs[0];
    const std::vector<int64_t> outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    const bool nhwc = x.m_Nhwc && !x.IsView() && !x.PlainEquivalent() && outDims.size() == 4;
    const DevTensor y = NewOutput(out, m_Compute, nhwc);
    RemapLaunch l;
    l.m_Type = m_Compute;
    l.m_Rank = static_cast<int32_t>(x.m_Dims.size());
    const auto xs = x.Strides(), ys = y.Strides();
    for (std::size_t d = 0; d < x.m_Dims.size(); ++d) {
        l.m_InDims[d] = x.m_Dims[d];
        l.m_InStrides[d] = xs[d];
        l.m_OutDims[d] = y.m_Dims[d];
        l.m_OutStrides[d] = ys[d];
    }
    std::vector<Buf> bufs{x.m_Buf, y.m_Buf};
    std::string what;
    switch (node.m_LayerType) {
        case LayerType::Pad: {
            const auto& d = std::get<PadDescriptor>(node.m_Descriptor);
            l.m_Kind = RemapLaunch::Kind::Pad;
            for (std::size_t i = 0; i < x.m_Dims.size(); ++i) l.m_PadBegin[i] = d.m_Pads[i];
            l.m_PadMode = d.m_Mode == PadMode::Constant ? 0 : d.m_Mode == PadMode::Reflect ? 1 : 2;
            l.m_Value = d.m_Value;
            what = "pad '" + node.m_Name + "'";
            break;
        }
        case LayerType::Trilu: {
            const auto& d = std::get<TriluDescriptor>(node.m_Descriptor);
            l.m_Kind = RemapLaunch::Kind::Trilu;
            l.m_Upper = d.m_Upper;
            l.m_K = d.m_K;
            if (node.m_Inputs.size() > 1) {
                const ConstTensor& k = Constant(node.m_Inputs[1]);
                l.m_K = k.GetDataType() == DataType::Signed64 ? *static_cast<const int64_t*>(k.GetMemoryArea())
                                                              : *static_cast<const int32_t*>(k.GetMemoryArea());
            }
            what = "trilu '" + node.m_Name + "'";
            break;
        }
        default: {  // Resize: per resampled dim a table of taps, computed here in double
            const auto& d = std::get<ResizeDescriptor>(node.m_Descriptor);
            l.m_Kind = RemapLaunch::Kind::Resize;
            l.m_Taps = d.m_Mode == ResizeMode::Nearest ? 1 : d.m_Mode == ResizeMode::Linear ? 2 : 4;
            std::vector<RemapLaunch::Tap> table;
            for (std::size_t i = 0; i < x.m_Dims.size(); ++i) {
                const int64_t inLen = x.m_Dims[i], outLen = y.m_Dims[i];
                const bool bySizes = !d.m_Sizes.empty();
                const double scale = bySizes ? static_cast<double>(outLen) / static_cast<double>(inLen)
                                             : static_cast<double>(d.m_Scales[i]);
                const double resized = bySizes ? static_cast<double>(outLen) : scale * static_cast<double>(inLen);
                const std::size_t at = table.size();
                auto clamp = [&](int64_t k) { return static_cast<int32_t>(std::clamp<int64_t>(k, 0, inLen - 1)); };
                for (int64_t o = 0; o < outLen; ++o) {
                    const double src = ResizeSource(d.m_CoordinateTransform, static_cast<double>(o), scale, resized,
                                                    static_cast<double>(inLen));
                    const double lo = std::floor(src);
                    const int64_t f = static_cast<int64_t>(lo);
                    const double t = src - lo;
                    if (d.m_Mode == ResizeMode::Nearest) {
                        table.push_back({clamp(ResizeNearest(d.m_NearestMode, src)), 1.0f});
                    } else if (d.m_Mode == ResizeMode::Linear) {
                        table.push_back({clamp(f), static_cast<float>(1.0 - t)});
                        table.push_back({clamp(f + 1), static_cast<float>(t)});
                    } else {
                        // Keys' cubic convolution over the taps at floor - 1 .. floor + 2.
                        const double a = d.m_CubicCoeffA;
                        auto near = [a](double v) { return ((a + 2) * v - (a + 3)) * v * v + 1; };
                        auto far = [a](double v) { return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a; };
                        double w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
                        if (d.m_ExcludeOutside) {
                            double sum = 0.0;
                            for (int k = 0; k < 4; ++k) {
                                if (f - 1 + k < 0 || f - 1 + k > inLen - 1) w[k] = 0.0;
                                sum += w[k];
                            }
                            for (double& v : w) v /= sum;
                        }
                        for (int k = 0; k < 4; ++k) table.push_back({clamp(f - 1 + k), static_cast<float>(w[k])});
                    }
                }
                // A dim whose every output index reads its own index with weight 1 is not resampled
                // (scale 1 mostly; not with tf_half_pixel_for_nn, which shifts by half a pixel).
                bool identity = inLen == outLen;
                for (int64_t o = 0; identity && o < outLen; ++o) {
                    for (int k = 0; k < l.m_Taps; ++k) {
                        const RemapLaunch::Tap& t = table[at + static_cast<std::size_t>(o * l.m_Taps + k)];
                        identity = identity && (t.m_Weight == 0.0f || (t.m_Index == o && t.m_Weight == 1.0f));
                    }
                }
                if (identity) {
                    table.resize(at);
                    continue;
                }
                l.m_Resampled[i] = true;
                l.m_TableAt[i] = static_cast<int64_t>(at);
            }
            const Buf tableBuf{BufKind::Const, AddConst(table.data(), std::max<std::size_t>(table.size(), 1) * sizeof(RemapLaunch::Tap))};
            bufs.push_back(tableBuf);
            what = std::string("resize '") + node.m_Name + "' (" +
                   (l.m_Taps == 1 ? "nearest" : l.m_Taps == 2 ? "linear" : "cubic") + ")";
            break;
        }
    }
    const bool resize = l.m_Kind == RemapLaunch::Kind::Resize;
    AddStep(what, bufs, [l0 = l, resize](const RunContext& c) {
        RemapLaunch k = l0;  // a copy: steps may run on several threads at once
        k.m_X = c.Ptr(0);
        k.m_Y = c.Ptr(1);
        if (resize) k.m_Table = static_cast<const RemapLaunch::Tap*>(c.Ptr(2));
        CheckCuda(LaunchRemap(k, c.m_Stream), "remap kernel");
    });
}

void CompiledRegion::LowerArg(const Node& node) {
    const auto& d = std::get<ArgMinMaxDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, std::nullopt, true);
    const DevTensor y = NewOutput(node.m_Outputs[0], DType::I64, false);
    ArgLaunch l;
    l.m_Max = d.m_Function == ArgMinMaxFunction::Max;
    l.m_SelectLast = d.m_SelectLastIndex;
    l.m_Type = m_Compute;
    l.m_Rank = static_cast<int32_t>(x.m_Dims.size());
    const int64_t axis = d.m_Axis < 0 ? d.m_Axis + l.m_Rank : d.m_Axis;
    l.m_Axis = static_cast<int32_t>(axis);
    const auto xs = x.Strides();
    for (std::size_t i = 0; i < x.m_Dims.size(); ++i) {
        l.m_Dims[i] = x.m_Dims[i];
        l.m_Strides[i] = xs[i];
    }
    AddStep(std::string(l.m_Max ? "argmax '" : "argmin '") + node.m_Name + "'", {x.m_Buf, y.m_Buf},
            [l0 = l](const RunContext& c) {
                ArgLaunch k = l0;  // a copy: steps may run on several threads at once
                k.m_X = c.Ptr(0);
                k.m_Y = static_cast<int64_t*>(c.Ptr(1));
                CheckCuda(LaunchArg(k, c.m_Stream), "argmin/argmax kernel");
            });
}

void CompiledRegion::LowerConvTranspose(const Node& node) {
    // GpuAcc's own direct kernel (kernels/remap.cu), any input layout, output NCHW: correct for every
    // group, stride, dilation, pad and output_padding, not fast (cuDNN's data-gradient convolution
    // would be; not done).
    const auto& d = std::get<ConvolutionDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, std::nullopt, true);
    const int out = node.m_Outputs[0];
    const DevTensor y = NewOutput(out, m_Compute, false);
    const TensorShape& ws = m_Graph->m_Values[static_cast<std::size_t>(node.m_Inputs[1])].m_Info.GetShape();
    ConvTransposeLaunch l;
    l.m_Type = m_Compute;
    l.m_N = x.m_Dims[0]; l.m_C = x.m_Dims[1]; l.m_H = x.m_Dims[2]; l.m_W_ = x.m_Dims[3];
    l.m_M = y.m_Dims[1]; l.m_OH = y.m_Dims[2]; l.m_OW = y.m_Dims[3];
    l.m_R = static_cast<int32_t>(ws[2]);
    l.m_S = static_cast<int32_t>(ws[3]);
    l.m_SH = static_cast<int32_t>(d.m_Strides[0]); l.m_SW = static_cast<int32_t>(d.m_Strides[1]);
    l.m_DH = static_cast<int32_t>(d.m_Dilations[0]); l.m_DW = static_cast<int32_t>(d.m_Dilations[1]);
    l.m_PH = static_cast<int32_t>(d.m_PadsBegin[0]); l.m_PW = static_cast<int32_t>(d.m_PadsBegin[1]);
    l.m_Groups = static_cast<int32_t>(d.m_Groups);
    const auto xs = x.Strides();
    for (std::size_t i = 0; i < 4; ++i) l.m_XStrides[i] = xs[i];
    // Weights and bias: constants uploaded at load, or tensors computed in the network (read as
    // dense Float32).
    auto floats = [&](int v) {
        if (m_Graph->m_Values[static_cast<std::size_t>(v)].m_Constant) {
            return Buf{BufKind::Const, AddConst(ConstFloats(v), m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetNumElements() * sizeof(float))};
        }
        return Need(v, DType::F32, false).m_Buf;
    };
    const Buf wBuf = floats(node.m_Inputs[1]);
    const bool hasBias = node.m_Inputs.size() > 2;
    const Buf bBuf = hasBias ? floats(node.m_Inputs[2]) : wBuf;
    AddStep("convtranspose '" + node.m_Name + "': GpuAcc direct kernel", {x.m_Buf, wBuf, bBuf, y.m_Buf},
            [l0 = l, hasBias](const RunContext& c) {
                ConvTransposeLaunch k = l0;  // a copy: steps may run on several threads at once
                k.m_X = c.Ptr(0);
                k.m_W = static_cast<const float*>(c.Ptr(1));
                k.m_Bias = hasBias ? static_cast<const float*>(c.Ptr(2)) : nullptr;
                k.m_Y = c.Ptr(3);
                CheckCuda(LaunchConvTranspose(k, c.m_Stream), "transposed convolution kernel");
            });
}

void CompiledRegion::LowerAttentionOp(const Node& node) {
    // ONNX Attention: Q, K, V as [B, H, S, D] (4-D) or [B, S, H * D] (3-D, the heads from the
    // attributes), read in place with strides; the output written straight in its layout. cuDNN's
    // fused attention in fp16/bf16; the reference kernel (float) otherwise or where cuDNN declines.
    const auto& d = std::get<AttentionDescriptor>(node.m_Descriptor);
    const DevTensor q = Need(node.m_Inputs[0], m_Compute, false, true);
    const DevTensor k = Need(node.m_Inputs[1], m_Compute, false, true);
    const DevTensor v = Need(node.m_Inputs[2], m_Compute, false, true);
    const int out = node.m_Outputs[0];
    const std::vector<int64_t> outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    const bool four = q.m_Dims.size() == 4;
    AttentionShape s;
    s.m_B = q.m_Dims[0];
    s.m_H = four ? q.m_Dims[1] : d.m_QNumHeads;
    s.m_HKv = four ? k.m_Dims[1] : d.m_KvNumHeads;
    s.m_Sq = q.m_Dims[four ? 2 : 1];
    s.m_Skv = k.m_Dims[four ? 2 : 1];
    s.m_D = four ? q.m_Dims[3] : q.m_Dims[2] / s.m_H;
    s.m_Dv = four ? v.m_Dims[3] : v.m_Dims[2] / s.m_HKv;
    s.m_Causal = d.m_IsCausal;
    s.m_Scale = d.m_Scale ? *d.m_Scale : 1.0f / std::sqrt(static_cast<float>(s.m_D));
    auto bhsd = [&](const DevTensor& t, int64_t headDim) {
        const auto st = t.Strides();
        if (four) return std::array<int64_t, 4>{st[0], st[1], st[2], st[3]};
        return std::array<int64_t, 4>{st[0], headDim * st[2], st[1], st[2]};  // [B, S, H * D]
    };
    s.m_QStrides = bhsd(q, s.m_D);
    s.m_KStrides = bhsd(k, s.m_D);
    s.m_VStrides = bhsd(v, s.m_Dv);
    // The output in its own layout: [B, H, Sq, Dv], or [B, Sq, H * Dv].
    s.m_OStrides = four ? std::array<int64_t, 4>{s.m_H * s.m_Sq * s.m_Dv, s.m_Sq * s.m_Dv, s.m_Dv, 1}
                        : std::array<int64_t, 4>{s.m_Sq * s.m_H * s.m_Dv, s.m_Dv, s.m_H * s.m_Dv, 1};
    std::optional<DevTensor> mask;
    if (d.m_HasMask) {
        mask = Need(node.m_Inputs[3], m_Compute, false, true);
        SetAttentionMask(s, *mask, false, 0);
    }
    const DevTensor y = NewOutput(out, m_Compute, false);
    std::string why = "the region computes in " + std::string(DTypeName(m_Compute));
    std::unique_ptr<AttentionPlan> plan;
    if (m_Compute == DType::F16 || m_Compute == DType::BF16) plan = AttentionPlan::Build(s, m_Compute, CurrentThreadContext().m_Cudnn, why);
    std::vector<Buf> bufs{q.m_Buf, k.m_Buf, v.m_Buf, y.m_Buf};
    if (mask) bufs.push_back(mask->m_Buf);
    const bool hasMask = mask.has_value();
    if (plan) {
        m_Workspace = std::max(m_Workspace, plan->WorkspaceBytes());
        const AttentionPlan* p = plan.get();
        AddStep("attention '" + node.m_Name + "': " + p->Description(), bufs, [p, hasMask](const RunContext& c) {
            p->Run(c.m_Cudnn, c.Ptr(0), c.Ptr(1), c.Ptr(2), hasMask ? c.Ptr(4) : nullptr, c.Ptr(3), c.m_Workspace);
        });
        m_Steps.back().m_FenceBefore = true;  // see LowerFusedAttention
        m_AttentionPlans.push_back(std::move(plan));
        return;
    }
    // The reference kernel: float [B, H, Sq, Dv] into a temporary, then into y's layout and type.
    AttentionRefLaunch r;
    r.m_Type = m_Compute;
    r.m_B = s.m_B; r.m_H = s.m_H; r.m_HKv = s.m_HKv; r.m_Sq = s.m_Sq; r.m_Skv = s.m_Skv; r.m_D = s.m_D; r.m_Dv = s.m_Dv;
    r.m_Causal = s.m_Causal;
    r.m_Scale = s.m_Scale;
    for (std::size_t i = 0; i < 4; ++i) {
        r.m_QStrides[i] = s.m_QStrides[i];
        r.m_KStrides[i] = s.m_KStrides[i];
        r.m_VStrides[i] = s.m_VStrides[i];
        r.m_MaskStrides[i] = s.m_MaskDims[i] == 1 ? 0 : s.m_MaskStrides[i];
    }
    r.m_MaskType = m_Compute;
    DevTensor tmp;
    tmp.m_Type = DType::F32;
    tmp.m_Dims = {s.m_B, s.m_H, s.m_Sq, s.m_Dv};
    tmp.m_Buf = NewTemp(tmp.Bytes());
    AddStep("attention '" + node.m_Name + "': reference kernel (" + why + ")", {q.m_Buf, k.m_Buf, v.m_Buf, tmp.m_Buf, mask ? mask->m_Buf : tmp.m_Buf},
            [r0 = r, hasMask](const RunContext& c) {
                AttentionRefLaunch l = r0;  // a copy: steps may run on several threads at once
                l.m_Q = c.Ptr(0);
                l.m_K = c.Ptr(1);
                l.m_V = c.Ptr(2);
                l.m_Out = static_cast<float*>(c.Ptr(3));
                l.m_Mask = hasMask ? c.Ptr(4) : nullptr;
                CheckCuda(LaunchAttentionReference(l, c.m_Stream), "attention reference kernel");
            });
    // y viewed as [B, H, Sq, Dv].
    DevTensor yv = y;
    yv.m_Dims = tmp.m_Dims;
    yv.m_ViewStrides.assign(s.m_OStrides.begin(), s.m_OStrides.end());
    yv.m_Nhwc = false;
    CopyInto(tmp, yv, "attention '" + node.m_Name + "' output to " + DTypeName(m_Compute));
}

void CompiledRegion::LowerAttention(const Node& node) {
    std::string why;
    if (LowerFusedAttention(node, why)) return;
    // The three steps it replaced, and on the last one why they were not fused.
    for (const Node& part : node.m_Parts) LowerNode(part);
    m_Steps.back().m_What += " [not fused into attention: " + why + "]";
}

bool CompiledRegion::LowerFusedAttention(const Node& node, std::string& why) {
    if (m_Compute != DType::F16 && m_Compute != DType::BF16) {
        why = std::string("cuDNN's fused attention takes fp16 and bf16, this region computes in ") + DTypeName(m_Compute);
        return false;
    }
    // Q, K^T and V where they are, in the compute type: views (head splits and transposes), or
    // pending views that compose to one strided view - for rank 3 ([b * h, s, d], as PyTorch
    // exports its heads) possibly only once the first dim is split as [b, h] for some h, which is
    // just as good (every (b, h) pair is one independent attention).
    const int operands[3] = {node.m_Inputs[0], node.m_Inputs[1], node.m_Inputs[2]};
    std::optional<DevTensor> given[3];  // as Need() gives them (converted), where not pending
    for (int i = 0; i < 3; ++i) {
        auto it = m_Pending.find(operands[i]);
        if (it == m_Pending.end() || m_Values[static_cast<std::size_t>(it->second.m_From)]->m_Type != m_Compute) {
            given[i] = Need(operands[i], m_Compute, false, true);
        }
    }
    const std::vector<int64_t> qDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(operands[0])].m_Info);
    const std::size_t rank = qDims.size();
    int64_t heads = 0;
    std::vector<int64_t> st[3];
    auto tryHeads = [&](int64_t h) {
        for (int i = 0; i < 3; ++i) {
            auto r = OperandStrides(operands[i], h, given[i] ? &*given[i] : nullptr);
            if (!r) return false;
            st[i] = *r;
        }
        heads = h;
        return true;
    };
    bool found = tryHeads(0);
    for (int64_t h = 2; !found && rank == 3 && h <= qDims[0]; ++h) {
        if (qDims[0] % h == 0) found = tryHeads(h);
    }
    if (!found) {
        for (int i = 0; i < 3; ++i) given[i] = Need(operands[i], m_Compute, false, true);
        found = tryHeads(0);
    }
    // cuDNN reads Q, K and V with unit stride along the head dim: a tensor without it is copied.
    DevTensor t[3];
    for (int i = 0; i < 3; ++i) {
        const std::size_t last = st[i].size() - 1, dAxis = i == 1 ? last - 1 : last;  // K^T: d is second last
        if (st[i][dAxis] != 1) {
            DevTensor view = Need(operands[i], m_Compute, false, true);
            DevTensor dense = view;
            if (i == 1) {  // K^T -> K dense
                const std::size_t r = dense.m_Dims.size();
                std::swap(dense.m_Dims[r - 1], dense.m_Dims[r - 2]);
                std::vector<int64_t> vs = view.Strides();
                std::swap(vs[r - 1], vs[r - 2]);
                view.m_Dims = dense.m_Dims;
                view.m_ViewStrides = vs;
                view.m_Nhwc = false;
            }
            dense.m_ViewStrides.clear();
            dense.m_Nhwc = false;
            dense.m_Buf = NewTemp(dense.Bytes());
            CopyInto(view, dense, "copy of attention '" + node.m_Name + "' input " + std::to_string(i) +
                                      " with unit stride along d");
            std::vector<int64_t> ds = dense.DenseStrides();
            if (i == 1) std::swap(ds[ds.size() - 1], ds[ds.size() - 2]);  // back to K^T's strides
            if (heads > 0) ds.insert(ds.begin(), ds[0] * heads);
            st[i] = ds;
            t[i] = dense;
        } else if (given[i]) {
            t[i] = *given[i];
        } else {
            t[i] = *m_Values[static_cast<std::size_t>(m_Pending.at(operands[i]).m_From)];  // the buffer the view reads
        }
    }
    const DevTensor& q = t[0];
    const DevTensor& k = t[1];
    const DevTensor& v = t[2];
    const int out = node.m_Outputs[0];
    AttentionShape s;
    // [b, h, s, d] (rank 3 unsplit: [b, s, d] with one head, whose stride is never stepped).
    const bool four = rank == 4 || heads > 0;
    auto at4 = [&](const std::vector<int64_t>& x, std::size_t i) { return four ? x[i] : (i <= 1 ? x[0] : x[i - 1]); };
    const std::vector<int64_t> kTDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(operands[1])].m_Info);
    const std::vector<int64_t> vDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(operands[2])].m_Info);
    s.m_B = heads > 0 ? qDims[0] / heads : qDims[0];
    s.m_H = heads > 0 ? heads : (rank == 4 ? qDims[1] : 1);
    s.m_Sq = qDims[rank - 2];
    s.m_D = qDims[rank - 1];
    s.m_Skv = kTDims[rank - 1];
    s.m_Dv = vDims[rank - 1];
    for (std::size_t i = 0; i < 4; ++i) {
        s.m_QStrides[i] = at4(st[0], i);
        s.m_VStrides[i] = at4(st[2], i);
    }
    // K [b, h, skv, d] is K^T [b, h, d, skv] with its last two strides swapped.
    s.m_KStrides = {at4(st[1], 0), at4(st[1], 1), at4(st[1], 3), at4(st[1], 2)};
    // The output dense, or - where its one reader is a transpose (the head merge) - laid out so
    // that the transposed tensor is dense: the merge and the reshape after it are then views.
    const std::vector<int64_t> outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    std::vector<int64_t> outStrides;
    {
        DevTensor dense;
        dense.m_Dims = outDims;
        outStrides = dense.DenseStrides();
        const std::vector<int> readers = m_Graph->Consumers(out);
        if (!m_Graph->IsRegionOutput(out) && readers.size() == 1) {
            const Node& r = m_Graph->m_Nodes[static_cast<std::size_t>(readers[0])];
            if (r.m_Kind == NodeKind::Copy && r.m_LayerType == LayerType::Transpose) {
                std::vector<unsigned int> perm = std::get<TransposeDescriptor>(r.m_Descriptor).m_Perm;
                if (perm.empty()) {
                    for (std::size_t i = outDims.size(); i-- > 0;) perm.push_back(static_cast<unsigned int>(i));
                }
                DevTensor after;
                for (unsigned int i : perm) after.m_Dims.push_back(outDims[i]);
                const std::vector<int64_t> as = after.DenseStrides();
                for (std::size_t i = 0; i < perm.size(); ++i) outStrides[perm[i]] = as[i];
            }
        }
    }
    if (rank == 4) {
        s.m_OStrides = {outStrides[0], outStrides[1], outStrides[2], outStrides[3]};
    } else if (heads > 0) {
        s.m_OStrides = {outStrides[0] * heads, outStrides[0], outStrides[1], outStrides[2]};
    } else {
        s.m_OStrides = {outStrides[0], outStrides[0], outStrides[1], outStrides[2]};
    }
    DevTensor denseOut;
    denseOut.m_Dims = outDims;
    s.m_Scale = node.m_Scale;
    std::optional<DevTensor> mask;
    if (node.m_Mask >= 0) {
        mask = Need(node.m_Mask, m_Compute, false, true);
        if (mask->m_Dims.size() > 4) {
            why = "a mask of rank above 4";
            return false;
        }
        SetAttentionMask(s, *mask, rank == 3, heads);
    }
    auto plan = AttentionPlan::Build(s, m_Compute, CurrentThreadContext().m_Cudnn, why);
    if (!plan) return false;
    DevTensor o;
    if (outStrides == denseOut.DenseStrides()) {
        o = NewOutput(out, m_Compute, false);
    } else {
        o.m_Type = m_Compute;
        o.m_Dims = outDims;
        o.m_Buf = NewTemp(o.Bytes());
        o.m_ViewStrides = outStrides;
        m_Values[static_cast<std::size_t>(out)] = o;
    }
    m_Workspace = std::max(m_Workspace, plan->WorkspaceBytes());
    const AttentionPlan* p = plan.get();
    std::vector<Buf> bufs{q.m_Buf, k.m_Buf, v.m_Buf, o.m_Buf};
    if (mask) bufs.push_back(mask->m_Buf);
    const bool hasMask = mask.has_value();
    std::string what = "attention '" + node.m_Name + "': " + p->Description();
    char dims[96];
    std::snprintf(dims, sizeof(dims), " [%lld x %lld heads, %lld x %lld keys, d %lld]", static_cast<long long>(s.m_B),
                  static_cast<long long>(s.m_H), static_cast<long long>(s.m_Sq), static_cast<long long>(s.m_Skv),
                  static_cast<long long>(s.m_D));
    AddStep(what + dims, bufs, [p, hasMask](const RunContext& c) {
        p->Run(c.m_Cudnn, c.Ptr(0), c.Ptr(1), c.Ptr(2), hasMask ? c.Ptr(4) : nullptr, c.Ptr(3), c.m_Workspace);
    });
    // cuDNN's runtime-compiled attention engines, like its TF32 convolutions, may be launched as
    // programmatic dependents of the step before: an empty kernel in between (StepBarrier=auto).
    m_Steps.back().m_FenceBefore = true;
    m_AttentionPlans.push_back(std::move(plan));
    return true;
}

void CompiledRegion::LowerSoftmax(const Node& node) {
    const auto& d = std::get<SoftmaxDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, false);
    const DevTensor y = NewOutput(node.m_Outputs[0], m_Compute, false);
    const int rank = static_cast<int>(x.m_Dims.size());
    const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
    SoftmaxLaunch l;
    l.m_Type = m_Compute;
    l.m_Log = d.m_Log;
    l.m_Scale = node.m_Scale;
    int64_t outer = 1, cols = 1, inner = 1;
    for (int i = 0; i < rank; ++i) {
        const int64_t v = x.m_Dims[static_cast<std::size_t>(i)];
        if (i < axis) outer *= v;
        else if (i == axis || d.m_Coerce2d) cols *= v;
        else inner *= v;
    }
    l.m_Rows = outer * inner;
    l.m_Cols = cols;
    l.m_Inner = inner;
    std::vector<Buf> bufs{x.m_Buf, y.m_Buf};
    if (node.m_Mask >= 0) {
        const DevTensor m = Need(node.m_Mask, std::nullopt, false, true);
        const auto s = BroadcastStrides(m, x.m_Dims);
        l.m_MaskType = m.m_Type;
        l.m_MaskRank = rank - 1;
        for (int i = 0; i + 1 < rank; ++i) {
            l.m_MaskDims[i] = x.m_Dims[static_cast<std::size_t>(i)];
            l.m_MaskStrides[i] = s[static_cast<std::size_t>(i)];
        }
        l.m_MaskColStride = s[static_cast<std::size_t>(rank - 1)];
        bufs.push_back(m.m_Buf);
    }
    const bool mask = node.m_Mask >= 0;
    AddStep("softmax '" + node.m_Name + "'" + (mask ? " (+mask)" : "") + (node.m_Scale != 1.0f ? " (+scale)" : ""), bufs,
            [l0 = l, mask](const RunContext& c) {
                auto l = l0;  // a copy: steps may run on several threads at once
                l.m_X = c.Ptr(0);
                l.m_Y = c.Ptr(1);
                if (mask) l.m_Mask = c.Ptr(2);
                CheckCuda(LaunchSoftmax(l, c.m_Stream), "softmax kernel");
            });
}

void CompiledRegion::LowerLayerNorm(const Node& node) {
    // LayerNormalization, or RMSNormalization (no mean, no bias: the same kernel with rms set).
    const bool rms = node.m_LayerType == LayerType::RmsNormalization;
    const int descAxis = rms ? std::get<RmsNormalizationDescriptor>(node.m_Descriptor).m_Axis
                             : std::get<LayerNormalizationDescriptor>(node.m_Descriptor).m_Axis;
    const float eps = rms ? std::get<RmsNormalizationDescriptor>(node.m_Descriptor).m_Eps
                          : std::get<LayerNormalizationDescriptor>(node.m_Descriptor).m_Eps;
    const DevTensor x = Need(node.m_Inputs[0], m_Compute, false);
    std::optional<DevTensor> r;
    if (node.m_LnResidual >= 0) r = Need(node.m_LnResidual, m_Compute, false);
    const int rank = static_cast<int>(x.m_Dims.size());
    const int axis = descAxis < 0 ? descAxis + rank : descAxis;
    int64_t rows = 1, cols = 1;
    for (int i = 0; i < rank; ++i) (i < axis ? rows : cols) *= x.m_Dims[static_cast<std::size_t>(i)];
    const float* g = ConstFloats(node.m_Inputs[1]);
    const Buf gBuf{BufKind::Const, AddConst(g, static_cast<std::size_t>(cols) * sizeof(float))};
    Buf bBuf = gBuf;
    const bool hasBeta = node.m_Inputs.size() > 2 && node.m_Inputs[2] >= 0;
    if (hasBeta) bBuf.m_Index = AddConst(ConstFloats(node.m_Inputs[2]), static_cast<std::size_t>(cols) * sizeof(float));
    const DevTensor y = NewOutput(node.m_Outputs[0], m_Compute, false);
    std::optional<DevTensor> sum;
    if (node.m_LnSum >= 0) sum = NewOutput(node.m_LnSum, m_Compute, false);
    const DType type = m_Compute;
    const bool hasR = r.has_value(), hasSum = sum.has_value();
    std::vector<Buf> bufs{x.m_Buf, hasR ? r->m_Buf : x.m_Buf, gBuf, bBuf, y.m_Buf, hasSum ? sum->m_Buf : y.m_Buf};
    AddStep(std::string(rms ? "rmsnorm '" : "layernorm '") + node.m_Name + "'" + (hasR ? " (+residual)" : ""), bufs,
            [=](const RunContext& c) {
                CheckCuda(LaunchLayerNorm(c.Ptr(0), hasR ? c.Ptr(1) : nullptr, static_cast<const float*>(c.Ptr(2)),
                                          hasBeta ? static_cast<const float*>(c.Ptr(3)) : nullptr, c.Ptr(4),
                                          hasSum ? c.Ptr(5) : nullptr, type, rows, cols, eps, rms, c.m_Stream),
                          "layer normalization kernel");
            });
}

void CompiledRegion::LowerReduce(const Node& node) {
    const auto& d = std::get<ReduceDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], std::nullopt, false);
    const std::size_t rank = x.m_Dims.size();
    std::vector<bool> reduced(rank, d.m_Axes.empty());
    for (int64_t a : d.m_Axes) reduced[static_cast<std::size_t>(a)] = true;
    int first = -1, last = -1;
    for (std::size_t i = 0; i < rank; ++i) {
        if (reduced[i] && x.m_Dims[i] != 1) {
            if (first < 0) first = static_cast<int>(i);
            last = static_cast<int>(i);
        }
    }
    int64_t outer = 1, count = 1, inner = 1;
    if (first < 0) {
        outer = x.Count();  // only size-1 dims are reduced: each element on its own
    } else {
        for (std::size_t i = 0; i < rank; ++i) {
            const int64_t v = x.m_Dims[i];
            if (static_cast<int>(i) < first) outer *= v;
            else if (static_cast<int>(i) <= last) count *= v;
            else inner *= v;
        }
    }
    const DevTensor y = NewOutput(node.m_Outputs[0], x.m_Type, false);
    ReduceKind kind = ReduceKind::Sum;
    switch (d.m_Operation) {
        case ReduceOperation::Mean: kind = ReduceKind::Mean; break;
        case ReduceOperation::Sum: kind = ReduceKind::Sum; break;
        case ReduceOperation::Max: kind = ReduceKind::Max; break;
        case ReduceOperation::Min: kind = ReduceKind::Min; break;
        case ReduceOperation::L1: kind = ReduceKind::L1; break;
        case ReduceOperation::L2: kind = ReduceKind::L2; break;
        case ReduceOperation::Prod: kind = ReduceKind::Prod; break;
        case ReduceOperation::LogSum: kind = ReduceKind::LogSum; break;
        case ReduceOperation::LogSumExp: kind = ReduceKind::LogSumExp; break;
        case ReduceOperation::SumSquare: kind = ReduceKind::SumSquare; break;
    }
    const DType type = x.m_Type;
    AddStep("reduce '" + node.m_Name + "'", {x.m_Buf, y.m_Buf}, [=](const RunContext& c) {
        CheckCuda(LaunchReduce(c.Ptr(0), c.Ptr(1), type, kind, outer, count, inner, c.m_Stream), "reduction kernel");
    });
}

void CompiledRegion::LowerCopy(const Node& node) {
    const int out = node.m_Outputs[0];
    const std::vector<int64_t> outDims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
    if (auto it = m_Pending.find(node.m_Inputs[0]); it != m_Pending.end() && node.m_LayerType == LayerType::Transpose) {
        PendingView p = it->second;
        PendingView::Op t;
        t.m_Transpose = true;
        t.m_Dims = outDims;
        t.m_Perm = std::get<TransposeDescriptor>(node.m_Descriptor).m_Perm;
        if (t.m_Perm.empty()) {
            for (std::size_t i = outDims.size(); i-- > 0;) t.m_Perm.push_back(static_cast<unsigned int>(i));
        }
        p.m_Ops.push_back(t);
        m_Pending[out] = p;
        return;
    }
    const DevTensor x = Need(node.m_Inputs[0], std::nullopt, std::nullopt, true);
    const auto xs = x.Strides();
    const int64_t es = static_cast<int64_t>(DTypeSize(x.m_Type));
    if (node.m_LayerType == LayerType::Cast) {
        // Integer to integer: a copy that converts.
        DevTensor y = NewOutput(out, TypeFor(out), false);
        CopyInto(x, y, "Cast '" + node.m_Name + "'");
        return;
    }
    // Transpose, Slice and Expand move no data: a view with other strides (and an offset), read
    // by its consumers directly or made dense once where one needs it.
    DevTensor y = x;
    y.m_Dims = outDims;
    y.m_Nhwc = false;
    y.m_ViewStrides.assign(outDims.size(), 0);
    switch (node.m_LayerType) {
        case LayerType::Transpose: {
            const auto& d = std::get<TransposeDescriptor>(node.m_Descriptor);
            std::vector<unsigned int> perm = d.m_Perm;
            if (perm.empty()) {
                for (std::size_t i = x.m_Dims.size(); i-- > 0;) perm.push_back(static_cast<unsigned int>(i));
            }
            for (std::size_t i = 0; i < perm.size(); ++i) y.m_ViewStrides[i] = xs[perm[i]];
            break;
        }
        case LayerType::Slice: {
            const auto& d = std::get<SliceDescriptor>(node.m_Descriptor);
            for (std::size_t i = 0; i < x.m_Dims.size(); ++i) {
                const int64_t start = i < d.m_Starts.size() ? d.m_Starts[i] : 0;
                const int64_t step = i < d.m_Steps.size() ? d.m_Steps[i] : 1;
                y.m_Buf.m_Offset += start * xs[i] * es;
                y.m_ViewStrides[i] = step * xs[i];
            }
            break;
        }
        default:
            y.m_ViewStrides = BroadcastStrides(x, outDims);  // Expand
            break;
    }
    m_Values[static_cast<std::size_t>(out)] = y;
}

void CompiledRegion::LowerConcat(const Node& node) {
    const auto& d = std::get<ConcatDescriptor>(node.m_Descriptor);
    const int out = node.m_Outputs[0];
    const DevTensor y = NewOutput(out, TypeFor(out), false);
    const auto ys = y.Strides();
    int64_t at = 0;
    for (int v : node.m_Inputs) {
        const DevTensor x = Need(v, std::nullopt, std::nullopt, true);
        DevTensor part = y;
        part.m_Dims = x.m_Dims;
        CopyLaunch l;
        l.m_Rank = static_cast<int32_t>(x.m_Dims.size());
        const auto xs = x.Strides();
        for (std::size_t i = 0; i < x.m_Dims.size(); ++i) {
            l.m_Dims[i] = x.m_Dims[i];
            l.m_InStrides[i] = xs[i];
            l.m_OutStrides[i] = ys[i];
        }
        l.m_OutOffset = at * ys[static_cast<std::size_t>(d.m_Axis)];
        at += x.m_Dims[static_cast<std::size_t>(d.m_Axis)];
        l.m_InType = x.m_Type;
        l.m_OutType = y.m_Type;
        AddStep("concat '" + node.m_Name + "' part", {x.m_Buf, y.m_Buf}, [l0 = l](const RunContext& c) {
            auto l = l0;  // a copy: steps may run on several threads at once
            l.m_In = c.Ptr(0);
            l.m_Out = c.Ptr(1);
            CheckCuda(LaunchCopy(l, c.m_Stream), "copy kernel");
        });
    }
}

void CompiledRegion::LowerSplit(const Node& node) {
    const auto& d = std::get<SplitDescriptor>(node.m_Descriptor);
    const DevTensor x = Need(node.m_Inputs[0], std::nullopt, std::nullopt, true);
    const auto xs = x.Strides();
    const int64_t es = static_cast<int64_t>(DTypeSize(x.m_Type));
    int64_t at = 0;
    for (int out : node.m_Outputs) {
        // Each part is a view of the input.
        DevTensor y = x;
        y.m_Dims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(out)].m_Info);
        y.m_Nhwc = false;
        y.m_ViewStrides = xs;
        y.m_Buf.m_Offset += at * xs[static_cast<std::size_t>(d.m_Axis)] * es;
        at += y.m_Dims[static_cast<std::size_t>(d.m_Axis)];
        m_Values[static_cast<std::size_t>(out)] = y;
    }
}

void CompiledRegion::LowerGather(const Node& node) {
    const auto& d = std::get<GatherDescriptor>(node.m_Descriptor);
    const int dv = node.m_Inputs[0], iv = node.m_Inputs[1], out = node.m_Outputs[0];
    const Value& indexValue = m_Graph->m_Values[static_cast<std::size_t>(iv)];
    if (indexValue.m_Constant && indexValue.m_Info.GetNumDimensions() == 0) {
        // One constant index: the picked slice is a view of the data (what exporters emit to take
        // q, k and v out of a packed projection).
        const DevTensor x = Need(dv, std::nullopt, std::nullopt, true);
        const ConstTensor& c = Constant(iv);
        const std::size_t axis = static_cast<std::size_t>(d.m_Axis);
        int64_t k = c.GetDataType() == DataType::Signed64 ? *static_cast<const int64_t*>(c.GetMemoryArea())
                                                         : *static_cast<const int32_t*>(c.GetMemoryArea());
        if (k < 0) k += x.m_Dims[axis];
        if (k < 0 || k >= x.m_Dims[axis]) {
            throw LayerValidationException("GpuAcc: Gather '" + node.m_Name + "': index " + std::to_string(k) +
                                           " is out of range for axis " + std::to_string(d.m_Axis) + " of size " +
                                           std::to_string(x.m_Dims[axis]));
        }
        const auto xs = x.Strides();
        DevTensor y = x;
        y.m_Nhwc = false;
        y.m_Dims.erase(y.m_Dims.begin() + static_cast<std::ptrdiff_t>(axis));
        y.m_ViewStrides = xs;
        y.m_ViewStrides.erase(y.m_ViewStrides.begin() + static_cast<std::ptrdiff_t>(axis));
        y.m_Buf.m_Offset += k * xs[axis] * static_cast<int64_t>(DTypeSize(x.m_Type));
        m_Values[static_cast<std::size_t>(out)] = y;
        return;
    }
    const DevTensor data = Need(dv, TypeFor(dv), false);
    const DevTensor idx = Need(iv, std::nullopt, false);
    const auto& dd = data.m_Dims;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d.m_Axis; ++i) outer *= dd[static_cast<std::size_t>(i)];
    for (std::size_t i = static_cast<std::size_t>(d.m_Axis) + 1; i < dd.size(); ++i) inner *= dd[i];
    const int64_t axisDim = dd[static_cast<std::size_t>(d.m_Axis)];
    const int64_t numIndices = idx.Count();
    const Value& iValue = m_Graph->m_Values[static_cast<std::size_t>(iv)];
    if (iValue.m_Constant) {
        // Known now: checked once here instead of on every run.
        const ConstTensor& c = Constant(iv);
        for (int64_t i = 0; i < numIndices; ++i) {
            const int64_t k = c.GetDataType() == DataType::Signed64 ? static_cast<const int64_t*>(c.GetMemoryArea())[i]
                                                                    : static_cast<const int32_t*>(c.GetMemoryArea())[i];
            if (k < -axisDim || k >= axisDim) {
                throw LayerValidationException("GpuAcc: Gather '" + node.m_Name + "': index " + std::to_string(k) +
                                               " is out of range for axis " + std::to_string(d.m_Axis) + " of size " +
                                               std::to_string(axisDim));
            }
        }
    } else {
        m_RuntimeChecks = true;
    }
    DevTensor y = NewOutput(out, data.m_Type, false);
    const DType type = data.m_Type, indexType = idx.m_Type;
    const bool check = !iValue.m_Constant;
    AddStep("gather '" + node.m_Name + "'", {data.m_Buf, idx.m_Buf, y.m_Buf}, [=](const RunContext& c) {
        CheckCuda(LaunchGather(c.Ptr(0), c.Ptr(1), c.Ptr(2), type, indexType, outer, axisDim, inner, numIndices,
                               check ? c.m_ErrorFlag : nullptr, c.m_Stream),
                  "gather kernel");
    });
}

namespace {

/// Strides that read a tensor of `oldDims`/`oldStrides` as `newDims` without moving data, or
/// nullopt when the reshape splits or merges dims whose strides do not allow it (the rule of
/// PyTorch's view()).
std::optional<std::vector<int64_t>> ReshapeStrides(const std::vector<int64_t>& oldDims,
                                                   const std::vector<int64_t>& oldStrides,
                                                   const std::vector<int64_t>& newDims) {
    std::vector<int64_t> newStrides(newDims.size(), 1);
    if (oldDims.empty()) return newStrides;
    int64_t viewD = static_cast<int64_t>(newDims.size()) - 1;
    int64_t chunkBase = oldStrides.back();
    int64_t tensorNumel = 1, viewNumel = 1;
    for (int64_t d = static_cast<int64_t>(oldDims.size()) - 1; d >= 0; --d) {
        tensorNumel *= oldDims[static_cast<std::size_t>(d)];
        if (d == 0 || (oldDims[static_cast<std::size_t>(d - 1)] != 1 &&
                       oldStrides[static_cast<std::size_t>(d - 1)] != tensorNumel * chunkBase)) {
            while (viewD >= 0 && (viewNumel < tensorNumel || newDims[static_cast<std::size_t>(viewD)] == 1)) {
                newStrides[static_cast<std::size_t>(viewD)] = viewNumel * chunkBase;
                viewNumel *= newDims[static_cast<std::size_t>(viewD)];
                --viewD;
            }
            if (viewNumel != tensorNumel) return std::nullopt;
            if (d > 0) {
                chunkBase = oldStrides[static_cast<std::size_t>(d - 1)];
                tensorNumel = 1;
                viewNumel = 1;
            }
        }
    }
    if (viewD != -1) return std::nullopt;
    return newStrides;
}

}  // namespace

void CompiledRegion::LowerAlias(const Node& node) {
    const std::vector<int64_t> dims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(node.m_Outputs[0])].m_Info);
    PendingView::Op reshape;
    reshape.m_Dims = dims;
    if (auto it = m_Pending.find(node.m_Inputs[0]); it != m_Pending.end()) {
        PendingView p = it->second;
        p.m_Ops.push_back(reshape);
        m_Pending[node.m_Outputs[0]] = p;
        return;
    }
    const DevTensor v = Need(node.m_Inputs[0], std::nullopt, std::nullopt, true);
    // The same bytes read with other dims: a view where the strides allow, else a dense copy.
    if (v.IsView() || (v.m_Nhwc && !v.PlainEquivalent())) {
        if (auto strides = ReshapeStrides(v.m_Dims, v.Strides(), dims)) {
            DevTensor y = v;
            y.m_Dims = dims;
            y.m_Nhwc = false;
            y.m_ViewStrides = *strides;
            m_Values[static_cast<std::size_t>(node.m_Outputs[0])] = y;
            return;
        }
        if (v.IsView()) {  // not expressible with strides: pending until read
            PendingView p;
            p.m_From = node.m_Inputs[0];
            p.m_Ops.push_back(reshape);
            m_Pending[node.m_Outputs[0]] = p;
            return;
        }
    }
    const DevTensor x = Need(node.m_Inputs[0], std::nullopt, false);
    DevTensor y = x;
    y.m_Dims = dims;
    y.m_Nhwc = false;
    y.m_ViewStrides.clear();
    m_Values[static_cast<std::size_t>(node.m_Outputs[0])] = y;
}

std::optional<std::vector<int64_t>> CompiledRegion::CollapsedStrides(int v, const std::vector<int64_t>& dims) const {
    const PendingView& p = m_Pending.at(v);
    const DevTensor& base = *m_Values[static_cast<std::size_t>(p.m_From)];
    const std::vector<int64_t> baseStrides = base.Strides();
    const std::size_t rank = dims.size();
    // The element offset of an index of `dims` (a reshape of the last op's dims): walk the ops
    // back to an index of the base view.
    auto offsetOf = [&](std::vector<int64_t> idx) {
        auto relinearize = [](const std::vector<int64_t>& i, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
            int64_t linear = 0;
            for (std::size_t d = 0; d < from.size(); ++d) linear = linear * from[d] + i[d];
            std::vector<int64_t> r(to.size());
            for (std::size_t d = to.size(); d-- > 0;) {
                r[d] = linear % to[d];
                linear /= to[d];
            }
            return r;
        };
        std::vector<int64_t> cur = dims;
        for (std::size_t o = p.m_Ops.size(); o-- > 0;) {
            const PendingView::Op& op = p.m_Ops[o];
            if (cur != op.m_Dims) idx = relinearize(idx, cur, op.m_Dims);
            const std::vector<int64_t> before = o == 0 ? base.m_Dims : p.m_Ops[o - 1].m_Dims;
            if (op.m_Transpose) {
                std::vector<int64_t> in(before.size());
                for (std::size_t d = 0; d < op.m_Perm.size(); ++d) in[op.m_Perm[d]] = idx[d];
                idx = in;
            } else {
                idx = relinearize(idx, op.m_Dims, before);
            }
            cur = before;
        }
        int64_t off = 0;
        for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * baseStrides[d];
        return off;
    };
    std::vector<int64_t> strides(rank, 0);
    for (std::size_t d = 0; d < rank; ++d) {
        std::vector<int64_t> e(rank, 0);
        if (dims[d] > 1) {
            e[d] = 1;
            strides[d] = offsetOf(e);
        }
        // Every index along each dim...
        for (int64_t k = 0; k < dims[d]; ++k) {
            e[d] = k;
            if (offsetOf(e) != k * strides[d]) return std::nullopt;
        }
    }
    // ... and pseudo-random indices over all dims must be the strided offsets.
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int t = 0; t < 512; ++t) {
        std::vector<int64_t> idx(rank);
        int64_t want = 0;
        for (std::size_t d = 0; d < rank; ++d) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            idx[d] = static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(std::max<int64_t>(dims[d], 1)));
            want += idx[d] * strides[d];
        }
        if (offsetOf(idx) != want) return std::nullopt;
    }
    return strides;
}

void CompiledRegion::Resolve(int v) {
    const PendingView p = m_Pending.at(v);
    const std::vector<int64_t>& dims = p.m_Ops.back().m_Dims;
    DevTensor t = *m_Values[static_cast<std::size_t>(p.m_From)];
    if (auto strides = CollapsedStrides(v, dims)) {
        t.m_Dims = dims;
        t.m_Nhwc = false;
        t.m_ViewStrides = *strides;
    } else {
        // The operations one by one, as LowerAlias and LowerCopy would have done them.
        for (const PendingView::Op& op : p.m_Ops) {
            if (op.m_Transpose) {
                const std::vector<int64_t> st = t.Strides();
                std::vector<int64_t> ns(op.m_Perm.size());
                for (std::size_t d = 0; d < op.m_Perm.size(); ++d) ns[d] = st[op.m_Perm[d]];
                t.m_ViewStrides = ns;
            } else if (t.IsView() || (t.m_Nhwc && !t.PlainEquivalent())) {
                auto strides = ReshapeStrides(t.m_Dims, t.Strides(), op.m_Dims);
                if (!strides) {
                    DevTensor dense = t;
                    dense.m_ViewStrides.clear();
                    dense.m_Nhwc = false;
                    dense.m_Buf = NewTemp(dense.Bytes());
                    CopyInto(t, dense, "convert 'value " + std::to_string(v) + "' to " + DTypeName(t.m_Type) + " plain");
                    t = dense;
                } else {
                    t.m_ViewStrides = *strides;
                }
            } else {
                t.m_ViewStrides.clear();
            }
            t.m_Dims = op.m_Dims;
            t.m_Nhwc = false;
        }
    }
    m_Pending.erase(v);
    m_Values[static_cast<std::size_t>(v)] = t;
}

std::optional<std::vector<int64_t>> CompiledRegion::OperandStrides(int v, int64_t heads, const DevTensor* given) const {
    std::vector<int64_t> dims = DimsOf(m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info);
    if (heads > 0) {
        dims.insert(dims.begin() + 1, heads);
        dims[0] /= heads;
    }
    if (!given) return CollapsedStrides(v, dims);
    std::vector<int64_t> st = given->Strides();
    if (heads > 0) st.insert(st.begin(), st[0] * heads);
    return st;
}

void CompiledRegion::LowerNode(const Node& node) {
    switch (node.m_Kind) {
        case NodeKind::Conv: LowerConv(node); break;
        case NodeKind::MatMul: LowerMatMul(node); break;
        case NodeKind::Pool: LowerPool(node); break;
        case NodeKind::Eltwise: LowerEltwise(node); break;
        case NodeKind::BatchNorm: LowerBatchNorm(node); break;
        case NodeKind::Softmax: LowerSoftmax(node); break;
        case NodeKind::LayerNorm: LowerLayerNorm(node); break;
        case NodeKind::Reduce: LowerReduce(node); break;
        case NodeKind::Copy: LowerCopy(node); break;
        case NodeKind::Concat: LowerConcat(node); break;
        case NodeKind::Split: LowerSplit(node); break;
        case NodeKind::Gather: LowerGather(node); break;
        case NodeKind::Alias: LowerAlias(node); break;
        case NodeKind::Attention: LowerAttention(node); break;
        case NodeKind::Remap: LowerRemap(node); break;
        case NodeKind::Arg: LowerArg(node); break;
        case NodeKind::AttentionOp: LowerAttentionOp(node); break;
        case NodeKind::ConvTranspose: LowerConvTranspose(node); break;
    }
}

void CompiledRegion::PlanMemory() {
    // Scratch: [workspace][error flag][tensors placed by lifetime].
    std::size_t base = AlignUp(m_Workspace);
    if (m_RuntimeChecks) {
        m_FlagOffset = base;
        base += kAlign;
    }
    const std::size_t temps = m_TempBytes.size();
    std::vector<int> first(temps, -1), last(temps, -1);
    for (std::size_t s = 0; s < m_Steps.size(); ++s) {
        for (const Buf& b : m_Steps[s].m_Bufs) {
            if (b.m_Kind != BufKind::Temp) continue;
            const auto t = static_cast<std::size_t>(b.m_Index);
            if (first[t] < 0) first[t] = static_cast<int>(s);
            last[t] = static_cast<int>(s);
        }
    }
    // Greedy by size: each temp at the lowest offset free during its lifetime.
    std::vector<std::size_t> order(temps);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return m_TempBytes[a] > m_TempBytes[b]; });
    std::vector<std::size_t> offset(temps, 0);
    std::vector<std::size_t> placed;
    std::size_t end = 0;
    for (std::size_t t : order) {
        if (first[t] < 0) continue;
        const std::size_t size = AlignUp(std::max<std::size_t>(m_TempBytes[t], 1));
        std::vector<std::pair<std::size_t, std::size_t>> busy;
        for (std::size_t p : placed) {
            if (first[p] <= last[t] && first[t] <= last[p]) busy.emplace_back(offset[p], offset[p] + AlignUp(std::max<std::size_t>(m_TempBytes[p], 1)));
        }
        std::sort(busy.begin(), busy.end());
        std::size_t at = 0;
        for (const auto& [b, e] : busy) {
            if (at + size <= b) break;
            at = std::max(at, e);
        }
        offset[t] = at;
        end = std::max(end, at + size);
        placed.push_back(t);
    }
    for (Step& s : m_Steps) {
        for (Buf& b : s.m_Bufs) {
            if (b.m_Kind == BufKind::Temp) {
                b = Buf{BufKind::Scratch, static_cast<int64_t>(base + offset[static_cast<std::size_t>(b.m_Index)]), b.m_Offset};
            }
        }
    }
    m_ScratchBytes = base + end;
}

CompiledRegion::CompiledRegion(std::shared_ptr<const RegionGraph> graph, const std::vector<const ConstTensor*>& constants,
                               const RegionOptions& options, const std::string& name)
    : m_Graph(std::move(graph)), m_Constants(constants), m_Options(options), m_Compute(ComputeType(options.m_Precision)),
      m_Name(name) {
    std::string why;
    if (!IsGpuAvailable(&why)) throw LayerValidationException("GpuAcc is not available: " + why);
    m_Values.resize(m_Graph->m_Values.size());
    m_ConstantInput.assign(m_Graph->m_InputInfos.size(), false);
    for (std::size_t k = 0; k < m_Graph->m_InputValues.size(); ++k) {
        const int v = m_Graph->m_InputValues[k];
        const Value& value = m_Graph->m_Values[static_cast<std::size_t>(v)];
        if (value.m_Constant) {
            m_ConstantInput[k] = true;
            continue;
        }
        if (!m_Values[static_cast<std::size_t>(v)]) {
            DevTensor t;
            t.m_Buf = Buf{BufKind::Input, static_cast<int64_t>(k)};
            t.m_Type = *DTypeOf(value.m_Info.GetDataType());
            t.m_Dims = DimsOf(value.m_Info);
            m_Values[static_cast<std::size_t>(v)] = t;
        }
    }
    if (m_Options.m_Precision == Precision::Tf32 && m_Options.m_ConvTf32 &&
        (m_Options.m_StepBarrier == RegionOptions::Barrier::Off || m_Options.m_StepBarrier == RegionOptions::Barrier::Event) &&
        std::any_of(m_Graph->m_Nodes.begin(), m_Graph->m_Nodes.end(),
                    [](const Node& n) { return !n.m_Dead && n.m_Kind == NodeKind::Conv; })) {
        std::fprintf(stderr,
                     "GpuAcc warning: region '%s': TF32 convolutions without StepBarrier=auto|kernel|sync are not trusted "
                     "(resnet50 at batch 32 was 0.16 off PyTorch so on an H100)\n",
                     m_Name.c_str());
    }
    for (const Node& node : m_Graph->m_Nodes) {
        if (node.m_Dead) continue;
        try {
            LowerNode(node);
        } catch (const LayerValidationException&) {
            throw;
        } catch (const Exception& e) {
            throw LayerValidationException("GpuAcc: planning '" + node.m_Name + "' failed: " + e.what());
        }
    }
    // Region outputs not written in place: a copy (with layout and type change) into each.
    for (std::size_t k = 0; k < m_Graph->m_OutputValues.size(); ++k) {
        const int v = m_Graph->m_OutputValues[k];
        if (m_Pending.count(v)) Resolve(v);
        const DevTensor& t = *m_Values[static_cast<std::size_t>(v)];
        if (t.m_Buf.m_Kind == BufKind::Output && t.m_Buf.m_Index == static_cast<int64_t>(k) && t.m_Buf.m_Offset == 0 &&
            !t.IsView()) {
            continue;
        }
        DevTensor dst;
        dst.m_Buf = Buf{BufKind::Output, static_cast<int64_t>(k)};
        dst.m_Type = *DTypeOf(m_Graph->m_OutputInfos[k].GetDataType());
        dst.m_Dims = DimsOf(m_Graph->m_OutputInfos[k]);
        CopyInto(t, dst, "output " + std::to_string(k) + " to " + DTypeName(dst.m_Type) + " plain");
    }
    PlanMemory();
    m_ConstBuffer = DeviceBuffer(std::max<std::size_t>(m_ConstStaging.size(), 1));
    if (!m_ConstStaging.empty()) {
        CheckCuda(cudaMemcpy(m_ConstBuffer.Get(), m_ConstStaging.data(), m_ConstStaging.size(), cudaMemcpyHostToDevice),
                  "uploading the constants of region '" + m_Name + "'");
    }
    for (auto& [plan, offset] : m_BiasToSet) plan->SetBias(static_cast<char*>(m_ConstBuffer.Get()) + offset);
    m_ConstStaging.clear();
    m_ConstStaging.shrink_to_fit();
}

std::vector<std::string> CompiledRegion::Describe() const {
    std::vector<std::string> lines;
    for (const Step& s : m_Steps) lines.push_back(s.m_What);
    return lines;
}

void CompiledRegion::RunSteps(const RunContext& base, const std::vector<void*>& ptrs) const {
    std::size_t at = 0;
    const auto barrier = m_Options.m_StepBarrier;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (barrier == RegionOptions::Barrier::Event) CheckCuda(cudaStreamIsCapturing(base.m_Stream, &capturing), "step barrier");
    for (std::size_t i = 0; i < m_Steps.size(); ++i) {
        const Step& s = m_Steps[i];
        RunContext c = base;
        c.m_Ptrs = ptrs.data() + at;
        at += s.m_Bufs.size();
        if (i > 0 && s.m_FenceBefore && barrier == RegionOptions::Barrier::Auto) {
            CheckCuda(LaunchStepBarrier(base.m_Stream), "step barrier");
        }
        try {
            s.m_Run(c);
        } catch (const Exception& e) {
            throw RuntimeException("GpuAcc: " + s.m_What + ": " + e.what());
        }
        if (i + 1 == m_Steps.size()) break;
        switch (barrier) {
            case RegionOptions::Barrier::Off:
            case RegionOptions::Barrier::Auto: break;
            case RegionOptions::Barrier::Event:
                CheckCuda(cudaEventRecordWithFlags(CurrentThreadContext().m_StepEvent, base.m_Stream,
                                                   capturing == cudaStreamCaptureStatusActive ? cudaEventRecordExternal
                                                                                              : cudaEventRecordDefault),
                          "step barrier");
                break;
            case RegionOptions::Barrier::Kernel: CheckCuda(LaunchStepBarrier(base.m_Stream), "step barrier"); break;
            case RegionOptions::Barrier::Sync: CheckCuda(cudaStreamSynchronize(base.m_Stream), "step barrier"); break;
        }
    }
}

void CompiledRegion::Execute(const WorkloadIo& io) const {
    ThreadContext& tc = CurrentThreadContext();
    char* scratch = static_cast<char*>(io.m_Scratch);
    if (m_ScratchBytes && !scratch) throw RuntimeException("GpuAcc: region '" + m_Name + "' was given no scratch memory");
    if (scratch) scratch = reinterpret_cast<char*>(AlignUp(reinterpret_cast<uintptr_t>(scratch)));  // see ScratchBytes()
    // Every step's buffers, resolved for this call.
    std::vector<void*> ptrs;
    ptrs.reserve(m_NumPtrs);
    for (const Step& s : m_Steps) {
        for (const Buf& b : s.m_Bufs) {
            switch (b.m_Kind) {
                case BufKind::Input:
                    ptrs.push_back(static_cast<char*>(io.m_Inputs[static_cast<std::size_t>(b.m_Index)]->Map()) + b.m_Offset);
                    break;
                case BufKind::Output:
                    ptrs.push_back(static_cast<char*>(io.m_Outputs[static_cast<std::size_t>(b.m_Index)]->Map()) + b.m_Offset);
                    break;
                case BufKind::Scratch: ptrs.push_back(scratch + b.m_Index + b.m_Offset); break;
                case BufKind::Const: ptrs.push_back(static_cast<char*>(m_ConstBuffer.Get()) + b.m_Index + b.m_Offset); break;
                case BufKind::Temp: throw RuntimeException("GpuAcc: region '" + m_Name + "' has an unplanned buffer");
            }
        }
    }
    RunContext base;
    base.m_Stream = tc.m_Stream;
    base.m_Cudnn = tc.m_Cudnn;
    base.m_Workspace = scratch;
    base.m_ErrorFlag = m_RuntimeChecks ? reinterpret_cast<int*>(scratch + m_FlagOffset) : nullptr;

    auto runEager = [&] {
        if (m_RuntimeChecks) CheckCuda(cudaMemsetAsync(base.m_ErrorFlag, 0, sizeof(int), tc.m_Stream), "clearing the error flag");
        RunSteps(base, ptrs);
    };

    bool done = false;
    const bool hostSyncs = m_Options.m_CheckConvs || m_Options.m_StepBarrier == RegionOptions::Barrier::Sync;
    if (!m_Options.m_StepTimesFile.empty() && !hostSyncs) {
        if (m_RuntimeChecks) CheckCuda(cudaMemsetAsync(base.m_ErrorFlag, 0, sizeof(int), tc.m_Stream), "clearing the error flag");
        RunTimed(base, ptrs);
        Count(Counter::EagerRegionRuns);
        done = true;
    } else if (m_Options.m_CudaGraphs && !hostSyncs) {
        // The graph's key: the addresses this call's buffers have (constants never move).
        std::vector<void*> key;
        for (const auto* h : io.m_Inputs) key.push_back(h->Map());
        for (const auto* h : io.m_Outputs) key.push_back(h->Map());
        key.push_back(scratch);
        cudaGraphExec_t exec = nullptr;
        bool capture = false;
        {
            std::lock_guard<std::mutex> lock(m_GraphMutex);
            if (!m_CaptureFailed) {
                auto it = std::find_if(m_GraphCache.begin(), m_GraphCache.end(), [&](const auto& e) { return e.first == key; });
                if (it == m_GraphCache.end()) {
                    // First run with these addresses: eager (warm-up: modules load, handles settle).
                    m_GraphCache.emplace_front(key, GraphEntry{});
                    if (m_GraphCache.size() > 16) {
                        if (m_GraphCache.back().second.m_Exec) cudaGraphExecDestroy(m_GraphCache.back().second.m_Exec);
                        m_GraphCache.pop_back();
                    }
                } else {
                    m_GraphCache.splice(m_GraphCache.begin(), m_GraphCache, it);
                    exec = it->second.m_Exec;
                    capture = exec == nullptr;
                }
            }
        }
        if (exec) {
            CheckCuda(cudaGraphLaunch(exec, tc.m_Stream), "replaying the CUDA graph of region '" + m_Name + "'");
            Count(Counter::GraphLaunches);
            done = true;
        } else if (capture) {
            cudaGraph_t graph = nullptr;
            std::string error;
            if (cudaStreamBeginCapture(tc.m_Stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
                error = "cudaStreamBeginCapture failed";
            } else {
                try {
                    runEager();
                } catch (const std::exception& e) {
                    error = e.what();
                }
                const cudaError_t end = cudaStreamEndCapture(tc.m_Stream, &graph);
                if (error.empty() && end != cudaSuccess) error = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
            }
            cudaGraphExec_t made = nullptr;
            if (error.empty()) {
                const cudaError_t inst = cudaGraphInstantiate(&made, graph, 0);
                if (inst != cudaSuccess) error = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(inst);
            }
            if (graph) cudaGraphDestroy(graph);
            cudaGetLastError();
            std::lock_guard<std::mutex> lock(m_GraphMutex);
            if (!error.empty()) {
                // Run eagerly from now on (correct, slower); said once per region.
                m_CaptureFailed = true;
                m_CaptureError = error;
                std::fprintf(stderr, "GpuAcc warning: region '%s' runs without a CUDA graph: %s\n", m_Name.c_str(),
                             error.c_str());
            } else {
                auto it = std::find_if(m_GraphCache.begin(), m_GraphCache.end(), [&](const auto& e) { return e.first == key; });
                if (it != m_GraphCache.end() && !it->second.m_Exec) it->second.m_Exec = made;
                else cudaGraphExecDestroy(made), made = nullptr;
                exec = made;
            }
            if (exec) {
                Count(Counter::GraphCaptures);
                CheckCuda(cudaGraphLaunch(exec, tc.m_Stream), "launching the CUDA graph of region '" + m_Name + "'");
                Count(Counter::GraphLaunches);
                done = true;
            }
        }
    }
    if (!done) {
        runEager();
        Count(Counter::EagerRegionRuns);
    }
    if (m_RuntimeChecks) {
        CheckCuda(cudaMemcpyAsync(tc.m_Flag, base.m_ErrorFlag, sizeof(int), cudaMemcpyDeviceToHost, tc.m_Stream),
                  "reading the error flag");
        CheckCuda(cudaStreamSynchronize(tc.m_Stream), "region '" + m_Name + "'");
        if (*tc.m_Flag) {
            throw RuntimeException("GpuAcc: region '" + m_Name + "': a Gather index is out of range for its axis");
        }
    }
}

// ---- workloads --------------------------------------------------------------------------------

GpuAccRegionWorkload::GpuAccRegionWorkload(std::shared_ptr<const RegionGraph> graph,
                                           const std::vector<const ConstTensor*>& constants,
                                           const RegionOptions& options, const std::string& name)
    : m_Region(std::make_unique<CompiledRegion>(std::move(graph), constants, options, name)) {}

GpuAccRegionWorkload::~GpuAccRegionWorkload() = default;
void GpuAccRegionWorkload::Execute(const WorkloadIo& io) const { m_Region->Execute(io); }
std::size_t GpuAccRegionWorkload::GetScratchBytes() const { return m_Region->ScratchBytes(); }
bool GpuAccRegionWorkload::ReadsConstantInput(unsigned int index) const { return !m_Region->IsConstantInput(index); }
std::vector<std::string> GpuAccRegionWorkload::Describe() const { return m_Region->Describe(); }

namespace {
/// The caller gave device memory for the host side of a copy (Tensor::SetMemoryBackend).
bool IsDevicePointer(const void* p) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}
}  // namespace

void GpuAccMemCopyWorkload::Execute(const WorkloadIo& io) const {
    if (m_Bytes == 0) return;
    ThreadContext& tc = CurrentThreadContext();
    const void* src = io.m_Inputs[0]->Map();
    void* dst = io.m_Outputs[0]->Map();
    if (IsDevicePointer(m_ToDevice ? src : dst)) {
        // Device to device: no host round trip.
        CheckCuda(cudaMemcpyAsync(dst, src, m_Bytes, cudaMemcpyDeviceToDevice, tc.m_Stream),
                  "MemCopy '" + m_Name + "' within the device");
        if (!m_ToDevice) CheckCuda(cudaStreamSynchronize(tc.m_Stream), "MemCopy '" + m_Name + "'");
        return;
    }
    if (m_ToDevice) {
        void* staging = tc.StagingIn(m_Bytes);
        std::memcpy(staging, src, m_Bytes);
        CheckCuda(cudaMemcpyAsync(dst, staging, m_Bytes, cudaMemcpyHostToDevice, tc.m_Stream),
                  "MemCopy '" + m_Name + "' to the device");
        CheckCuda(cudaEventRecord(tc.m_InDone, tc.m_Stream), "MemCopy '" + m_Name + "'");
        Count(Counter::BytesToDevice, m_Bytes);
    } else {
        void* staging = tc.StagingOut(m_Bytes);
        CheckCuda(cudaMemcpyAsync(staging, src, m_Bytes, cudaMemcpyDeviceToHost, tc.m_Stream),
                  "MemCopy '" + m_Name + "' to the host");
        // Everything this call queued on the stream before it is done once this returns.
        CheckCuda(cudaStreamSynchronize(tc.m_Stream), "MemCopy '" + m_Name + "' to the host");
        std::memcpy(dst, staging, m_Bytes);
        Count(Counter::BytesToHost, m_Bytes);
    }
}

}  // namespace trellis::gpuacc
