// CpuAcc: what the files that compile and run a region share - internal to src/backends/cpuacc.
//
// CompiledRegion (the region compiled into steps, each a oneDNN primitive or one of CpuAcc's own
// kernels, over memory objects placed in storages; see CpuAccRegion.hpp for the design) is
// declared here and defined across the CpuAccRegion*.cpp files, one concern each:
// CpuAccRegion.cpp (the shared helpers below, storages and memory objects, reorders, weight
// packing, the per-node dispatch, the region's outputs and the scratch memory plan),
// CpuAccRegionConv.cpp (convolution, Winograd, in-place Concat, pooling), CpuAccRegionMatMul.cpp
// (matmul, Gemm, one-row matmuls on XNNPACK), CpuAccRegionElementwise.cpp (eltwise, Erf, swish,
// binary), CpuAccRegionNormalization.cpp (softmax, layer/batch/RMS normalization, reductions),
// CpuAccRegionDataMovement.cpp (Concat, Transpose, Split/Slice, Pad, Resize, Expand),
// CpuAccRegionRecurrent.cpp (LSTM/GRU/RNN), CpuAccRegionAttention.cpp (attention: ONNX Attention
// and the fused MatMul-Softmax-MatMul pattern),
// CpuAccRegionInt8.cpp (int8 convolution/matmul, QuantizeLinear/DequantizeLinear, QuantizedAdd)
// and CpuAccRegionExecute.cpp (running the steps; the IWorkload). The oneDNN helpers they all
// use live in trellis::cpuacc::detail. Nothing outside this folder includes this header.
#pragma once

#include "CpuAccGraph.hpp"
#include "CpuAccKernels.hpp"
#include "CpuAccRegion.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <tuple>
#include <vector>

namespace trellis::cpuacc {

namespace detail {

using dnnl::memory;
using Dims = memory::dims;

/// The process's oneDNN CPU engine.
dnnl::engine& Engine();
/// oneDNN's dims of a tensor shape (a scalar is {1}).
Dims DimsOf(const TensorShape& s);
/// The name of a primitive kind ("convolution"), for timelines.
const char* PrimitiveKindName(dnnl::primitive::kind kind);
/// Row-major strides of `dims`.
Dims StridesOf(const Dims& dims);
/// The offset (in elements) of row-major flat index `index` over the first `count` dims of
/// `dims`, with per-dim `strides`: the gather position of an element of a strided view.
template <typename D, typename S>
inline std::size_t StridedOffset(std::size_t index, const D& dims, const S& strides, std::size_t count) {
    std::size_t offset = 0;
    for (std::size_t d = count; d-- > 0;) {
        offset += (index % static_cast<std::size_t>(dims[d])) * static_cast<std::size_t>(strides[d]);
        index /= static_cast<std::size_t>(dims[d]);
    }
    return offset;
}
/// The strides of `md` when it is an unblocked strided Float32 layout (plain or a view), else nothing.
std::optional<Dims> ViewStrides(const memory::desc& md);
/// The strides under which `out` dims view the same elements as `in` dims with `inStrides`
/// (numpy's reshape without a copy), or nothing when only a copy gives them.
std::optional<Dims> ReshapedStrides(const Dims& in, const Dims& inStrides, const Dims& out);
/// oneDNN's type for a tensor type: u8, s8, s32, otherwise f32.
memory::data_type DataTypeOf(DataType t);
/// A plain row-major descriptor.
memory::desc PlainMd(const Dims& dims, memory::data_type dt = memory::data_type::f32);
/// A descriptor whose layout the primitive chooses (format_tag::any).
memory::desc AnyMd(const Dims& dims, memory::data_type dt = memory::data_type::f32);
/// `d` with leading 1s up to `rank` dims (numpy broadcasting).
Dims Prepend1s(const Dims& d, std::size_t rank);
/// The product of d[from, to).
memory::dim Product(const Dims& d, std::size_t from, std::size_t to);
/// The channel block of the CPU's vector width: 16 floats with AVX-512, 8 with AVX2.
memory::dim BlockSize();
/// The channel-blocked layout of a rank-`rank` NC<spatial> tensor, if there is one.
std::optional<memory::format_tag> BlockedTag(std::size_t rank);
/// The channel-blocked layout `md` has (its dims with BlockedTag), if it has it.
std::optional<memory::format_tag> BlockedTagOf(const memory::desc& md);
/// Memory for packed weights (free with std::free). Buffers of 2 MiB and more start on a 2 MiB
/// boundary and are marked MADV_HUGEPAGE: every inference streams all of a network's weights
/// (100 MB for resnet50, 340 MB for the BERT encoder), and with 4 KiB pages that is one TLB miss
/// per 4 KiB read. Where transparent huge pages are off, the advice is ignored.
void* AllocateWeights(std::size_t bytes);

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

/// A matmul of `src` [m, k] by constant weights [k, n] of type `dt` (packed by the caller into
/// the primitive's weights_desc()), with an optional bias: the weights' layout is oneDNN's choice,
/// except that a plain [k, n] choice is replaced by [n, k] storage, which its GEMM-based kernel
/// runs faster (CpuAccRegionMatMul.cpp).
dnnl::matmul::primitive_desc MatMulWithConstantWeights(const memory::desc& src, memory::dim k, memory::dim n,
                                                       memory::data_type dt, const memory::desc* bias,
                                                       const memory::desc& dst, const dnnl::primitive_attr& attr);

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

/// The deleter of packed weights (AllocateWeights).
struct AlignedFree {
    void operator()(void* p) const { std::free(p); }
};

}  // namespace detail

/// A region graph compiled into steps over planned memory; Execute() is const and thread-safe.
class CompiledRegion {
public:
    using memory = dnnl::memory;
    using Dims = detail::Dims;

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
    int EnsurePlain(int value) { return Ensure(value, detail::PlainMd(ValueDims(value), ValueType(value))); }
    /// oneDNN's type for value `v` (Float32, or the 8-bit types of quantized tensors).
    memory::data_type ValueType(int v) const { return detail::DataTypeOf(m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetDataType()); }
    int Alias(int mem, const memory::desc& md);
    /// Whether the storage of `value` may be written by node `nodeIndex`: nothing reads it later,
    /// and (when `notInputOf` is given) that node does not read it as an input either.
    bool CanOverwrite(int value, int nodeIndex, const Node* notInputOf = nullptr) const;
    void AddReorder(int from, int to, const std::string& name);
    void AddPrimitive(const std::string& name, const dnnl::primitive& p, const dnnl::primitive_desc_base& pd,
                      std::vector<std::pair<int, int>> args);
    int PackConstant(const ConstTensor& t, const memory::desc& user, const memory::desc& packed, float scale);
    const ConstTensor& ConstantOf(int value, const Node& node, const char* what) const;
    /// An integer product's requantization multipliers (Int8Params::m_Multipliers), else null.
    const float* Multipliers(const Node& n) const;
    Dims ValueDims(int v) const { return detail::DimsOf(m_Graph->m_Values[static_cast<std::size_t>(v)].m_Info.GetShape()); }
    dnnl::primitive_attr Attr(bool mathOps) const;
    /// The type convolutions and matmuls with constant weights compute in: bf16 with FastMath.
    memory::data_type MathType() const {
        return m_Options.m_FastMathBf16 ? memory::data_type::bf16 : memory::data_type::f32;
    }

    void CompileNode(int index);
    void CompileConv(int index, const Node& n);
    /// A convolution that oneDNN would run on its GEMM-based kernel (on AVX2: im2col over every tap,
    /// padding included, weights packed again per call) as one of CpuAcc's own AVX2 kernels in
    /// NHWC, its element-wise post-ops after it: a dilated stride-1 one tap by tap (TapConvAvx2), a
    /// grouped one with 4 channels per group (Group4ConvAvx2). False (nothing added) otherwise.
    bool CompileOwnConv(const Node& n, const dnnl::convolution_forward::primitive_desc& onednn, const ConstTensor& w,
                        const Dims& src, const Dims& dst, const Dims& strides, const Dims& dil, const Dims& padL);
    void CompileMatMul(int index, const Node& n);
    /// A matmul against constant 2-D weights on CpuAcc's own GEMM (GemmAvx2), its post-ops as
    /// oneDNN primitives in place after it; false, with nothing added, where a post-op has only
    /// oneDNN's reference kernel.
    bool CompileOwnGemm(const Node& n, int a, const ConstTensor& b, bool transB, float alpha, const ConstTensor* bias,
                        float beta, memory::dim m, memory::dim k, memory::dim nCols);
    /// A post-op run after an own kernel as a oneDNN Float32 primitive, in place on its result.
    struct InPlacePostOp {
        dnnl::primitive m_Primitive;
        dnnl::primitive_desc_base m_Pd;
        int m_Operand = -1;  ///< the value added (binary), -1 for an eltwise
        memory::desc m_OperandMd;
    };
    /// `op` on a result `dstMd` of `rows` x `cols` (an addition's operand the whole result or one
    /// row broadcast); false, `out` untouched, where oneDNN has only its reference kernel for it.
    bool MakeInPlacePostOp(const PostOp& op, const memory::desc& dstMd, memory::dim rows, memory::dim cols,
                           InPlacePostOp& out) const;
    /// The steps running `post` in place on memory `dst`, named after `name`.
    void AddInPlacePostOps(const std::string& name, const std::vector<InPlacePostOp>& post, int dst);
    /// A one-row matmul with constant weights on XNNPACK, when it qualifies; false if not.
    bool CompileGemv(const Node& n, int a, const ConstTensor& b, bool transB, float alpha, const ConstTensor* bias,
                     float beta, std::size_t k, std::size_t nCols);
    void CompilePool(const Node& n);
    /// A 2-D max pooling over a channel-blocked, NHWC or plain float32 input on CpuAcc's own kernel
    /// (MaxPoolBlocked, in the input's layout); false, with nothing added, where it does not apply.
    /// `dil` as oneDNN counts it (0: none).
    bool CompileOwnMaxPool(const Node& n, const Dims& kernel, const Dims& strides, const Dims& dil, const Dims& padL);
    /// The same for 8-bit planes in plain NCHW (MaxPool8Plain); false where it does not apply.
    bool CompileOwnMaxPool8(const Node& n, const Dims& kernel, const Dims& strides, const Dims& padL);
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
    /// Where with a constant Boolean condition and a constant scalar: a masked fill (own step).
    void CompileWhere(const Node& n);
    /// A binary op whose broadcast oneDNN runs only in its reference kernel: CpuAcc's own loop.
    void CompileBroadcastBinary(int index, const Node& n, int a, int b);
    void CompileSoftmax(const Node& n);
    void CompileLayerNorm(const Node& n);
    void CompileConcat(int index, const Node& n);
    void CompileTranspose(const Node& n);
    /// Reshape: a plain alias of its input; a strided view where only attention kernels read it.
    void CompileReshape(const Node& n);
    /// Whether only attention kernels read `value` (as Q, K or V), directly or through Reshapes and
    /// Transposes: then it may stay any strided view (Slice, Split and Reshape keep views for it).
    bool ReadOnlyByAttention(int value) const;
    void CompileReduce(const Node& n);
    /// A Float32 Mean over all dims after the channels, as a whole-image average pooling on channel
    /// blocks; false (nothing added) where it does not apply.
    bool CompileBlockedReduce(const Node& n, const Dims& reduced);
    /// After oneDNN's max (min) reduction from memory `src` (dims `in`) to `dst` (dims `reduced`):
    /// results equal to its start value recomputed exactly (a slice of -inf gives -inf).
    void AddReduceInfinityFix(const std::string& name, int src, int dst, const Dims& in, const Dims& reduced, bool max);
    void CompileSplitSlice(const Node& n);
    /// A Slice with steps: an own copy from the plain input `src` ([in], from `starts`, every `steps`).
    void CompileSteppedSlice(const std::string& name, int src, const Dims& in, const Dims& starts, const Dims& steps, int out);
    void CompileRecurrent(const Node& n);
    /// LSTM and linear-before-reset GRU on CpuAcc's own recurrence kernel; false where it does not
    /// apply (nothing added then).
    bool CompileOwnRecurrence(const Node& n);
    void CompileBatchNorm(const Node& n);
    void CompilePad(const Node& n);
    void CompileResize(const Node& n);
    void CompileAttention(const Node& n);
    /// The memory of value `value` as the attention kernel reads it: its own layout when that is an
    /// unblocked strided Float32 view (a transposed head split, K^T), else a plain copy; `strides`
    /// gets the strides and `offset` the view's first element (oneDNN's offset0), in floats.
    int AttentionOperand(int value, Dims& strides, std::size_t& offset);
    void CompileExpand(const Node& n);
    void CompileRmsNorm(const Node& n);
    void CompileConvInt8(const Node& n);
    void CompileMatMulInt8(const Node& n);
    /// An int8 matmul or 2-D convolution (per image and group) on CpuAcc's own exact integer
    /// GEMM (Int8Params::m_OwnKernel): a Float32 result times run-time scales, its post-ops as oneDNN
    /// Float32 primitives in place after it, or a QLinear product requantized by the quantize kernel.
    void CompileIntegerProduct(const Node& n);
    /// Whether an own integer convolution writes its 8-bit output in channel quads (aBcd4b) for
    /// its readers (IntegerConvOutput::m_ChannelQuads).
    bool ChannelQuadOutput(const Node& n, std::size_t groups, std::size_t channels) const;
    /// For an int8 node with parameters known at run time (Int8Params::m_RuntimeScales,
    /// m_RuntimeSrcZeroPoint): a step widening the zero point to the Signed32 oneDNN reads, and the
    /// primitive's arguments for it and for the binary post-ops' operands (post-op index, value, md).
    void AddInt8RuntimeArgs(const Node& n, const std::vector<std::tuple<int, int, memory::desc>>& binary,
                            std::vector<std::pair<int, int>>& args);
    void CompileQuantize(const Node& n);
    void CompileQuantizedAdd(const Node& n);
    void CompileElementwiseChain(const Node& n);
    /// The memory an element-wise own kernel reads `x` from: its dense layout as it is, or (`plain`,
    /// or a layout with padding, offset or extra flags) the plain copy.
    int ElementwiseSource(int x, bool plain);
    /// DynamicQuantizeLinear: the range, scale and zero point, then the quantization (own kernels).
    void CompileDynamicQuantize(const Node& n);
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
    std::vector<std::unique_ptr<void, detail::AlignedFree>> m_Owned;
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
    /// A DenseNet block: Concats whose input lists are prefixes of one longest list share that
    /// one's buffer (each a prefix view of it: channel blocks are contiguous at batch 1), and each
    /// input is written (by its convolution) or copied into it once. Concat node -> the longest.
    std::unordered_map<int, int> m_ConcatFamily;
    std::unordered_set<int> m_InFamilyBuffer;  ///< values already in their family's buffer
    void PlanInPlaceConcats();
    void PlanConcatFamilies();
    /// Concat node `index` of a family: its inputs copied into the shared buffer where they are
    /// not there yet, its output a prefix view.
    void CompileFamilyConcat(int index, const Node& n);

    mutable std::mutex m_Mutex;
    mutable std::vector<std::unique_ptr<Context>> m_Free;
};

}  // namespace trellis::cpuacc
