// CpuAcc: a compiled region - oneDNN primitives for a RegionGraph, and its execution.
//
// Compiling (once, at LoadNetwork): each node becomes one oneDNN primitive (or one of CpuAcc's own
// kernels) with its fused post-ops. Convolutions choose their layouts (blocked nChw16c on AVX-512);
// a tensor is reordered only where a consumer needs another layout, so blocked layouts stay
// between layers and plain row-major data is produced at the region's outputs only. Weights are
// packed once into the layout the primitive wants. Every intermediate tensor and every primitive's
// scratchpad lives in the workload's scratch memory, which the runtime plans together with the
// network's other tensors (IWorkload::GetScratchBytes); tensors whose lifetimes do not overlap
// share bytes.
//
// Executing: Execute() is const and thread-safe. oneDNN memory objects are bound per scratch
// buffer (the runtime hands each concurrent execution its own) and cached for the next call with
// the same buffer. The primitives run on an OpenMP team of the configured thread count.
#pragma once

#include "CpuAccGraph.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <vector>

namespace trellis::cpuacc {

/// The backend options CpuAcc understands (IRuntime::CreationOptions::m_BackendOptions["CpuAcc"]).
struct RegionOptions {
    int m_NumThreads = 0;         ///< "NumThreads": OpenMP threads per execution; 0 = all cores
    /// "FastMath" = "bf16": convolutions and matmuls with constant weights take bfloat16 inputs and
    /// weights (float32 accumulation); the activations between them are kept in bfloat16.
    bool m_FastMathBf16 = false;
    /// "ConvLayout": "blocked" (default): convolutions keep channel-blocked layouts; "auto": oneDNN
    /// chooses each convolution's layouts (its brgemm kernels take nhwc).
    bool m_BlockedConvLayout = true;
    /// "Winograd": "on" (default): float32 3x3 stride-1 convolutions with at least 32 input
    /// channels and outputs of at least 13x13 use oneDNN's Winograd F(2x2,3x3) kernel where it
    /// has one; "off": direct kernels only.
    bool m_Winograd = true;
    /// "Xnnpack": "on" (default where CpuAcc was built with XNNPACK): float32 matmuls of one row
    /// against constant weights (classifier heads) run on XNNPACK; "off": on oneDNN.
    bool m_Xnnpack = true;
    /// "Swish": "own" (default): a swish (SiLU) fused after a float32 convolution runs as CpuAcc's
    /// own vectorized kernel right after it; "onednn": as oneDNN's fused post-op.
    bool m_OwnSwish = true;
    /// "Recurrent": "own" (default): LSTM and GRU (linear_before_reset = 1) run as one oneDNN
    /// matmul for the input projection of the whole sequence and CpuAcc's own recurrence kernel
    /// per direction; "onednn": as oneDNN's RNN primitives (other GRUs and RNN always are).
    bool m_OwnRecurrence = true;
    /// "MatMul": "own" (default): matmuls against constant 2-D weights that oneDNN would run on
    /// its GEMM-based kernel (CPUs without AVX-512, or ONEDNN_MAX_CPU_ISA=AVX2) run on CpuAcc's
    /// own AVX2 GEMM with the weights packed once; "onednn": on oneDNN's matmul everywhere.
    bool m_OwnGemm = true;
    /// "MaxPool": "own" (default): 2-D max pooling over a channel-blocked (nChw8c/nChw16c), NHWC or
    /// plain NCHW float32 input runs as CpuAcc's own kernel (MaxPoolBlocked); "onednn": as
    /// oneDNN's pooling.
    bool m_OwnMaxPool = true;
};

/// Whether CpuAcc's own GEMM (RegionOptions::m_OwnGemm) takes matmuls against constant weights on
/// this CPU under the current ISA caps: CpuAcc's kernels are capped at AVX2 (TRELLIS_MAX_CPU_ISA,
/// or no AVX-512) and oneDNN runs such matmuls on its GEMM-based kernel (ONEDNN_MAX_CPU_ISA, or no
/// AVX-512).
bool OwnGemmRunsHere();

/// True when oneDNN's implementation of `pd` is its reference one (impl_info_str() "ref:..."):
/// scalar C++ loops, one to three orders of magnitude slower than its jit kernels. CpuAcc never
/// runs one: it picks another layout, or its layer support declines the layer (CpuRef is then as
/// fast, and exact).
bool IsReferenceImplementation(const dnnl::primitive_desc_base& pd);
/// Whether oneDNN has a kernel other than its reference one for this float32 convolution on this
/// CPU (layouts of its choice) with these fused post-ops (none: the bare convolution);
/// `implementation` gets the implementation's name. oneDNN 2.6's AVX2 kernels, for one, take a
/// swish followed by a residual sum only in its reference implementation.
bool ConvolutionRunsFast(const ConvolutionDescriptor& d, const TensorShape& input, const TensorShape& weights,
                         const TensorShape& output, bool bias, std::string* implementation,
                         const std::vector<PostOp>& postOps = {});

/// True when this oneDNN on this CPU (as capped by ONEDNN_MAX_CPU_ISA) has a float32 Winograd
/// convolution kernel. oneDNN 2.6 has one for AVX-512 only. Probed once per process.
bool OneDnnHasWinograd();
/// Whether a convolution of these shapes is one CpuAcc runs with Winograd where oneDNN has it:
/// 2-D, 3x3, stride 1, no dilation, one group, at least 32 input channels, at least 13x13 outputs.
bool IsWinogradShape(const ConvolutionDescriptor& d, const TensorShape& weights, const TensorShape& input,
                     const TensorShape& output);
/// The Winograd-shaped convolutions of a region (see IsWinogradShape).
std::size_t CountWinogradShapes(const RegionGraph& graph);

/// Whether oneDNN's int8 convolutions and matmuls compute ONNX's integer products exactly on this
/// CPU (as capped by ONEDNN_MAX_CPU_ISA): they need VNNI or AMX. Without it oneDNN 2.6 multiplies
/// u8 x s8 pairs with vpmaddubsw, whose 16-bit sums saturate, and halves convolution weights
/// (scale_adjust 0.5) to avoid that - not what ONNX defines. `why` says which ISA is missing.
bool OneDnnInt8IsExact(std::string* why);
/// Whether oneDNN has a kernel other than its reference one for int8 node `n` (Conv or MatMul with
/// constant int8-recoverable weights) reading value `src` and writing value `dst` with params
/// `p`; `why` names the implementation when not.
bool Int8NodeRunsFast(const RegionGraph& g, const Node& n, const Int8Params& p, int src, int dst, std::string* why);

class CompiledRegion;

class CpuAccRegionWorkload final : public IWorkload {
public:
    /// `constants`: per region input, its constant value or nullptr (QueueDescriptor::m_ConstantInputs).
    CpuAccRegionWorkload(std::shared_ptr<const RegionGraph> graph, const std::vector<const ConstTensor*>& constants,
                         const RegionOptions& options, const std::string& name);
    ~CpuAccRegionWorkload() override;
    void Execute(const WorkloadIo& io) const override;
    std::size_t GetScratchBytes() const override;
    bool ReadsConstantInput(unsigned int index) const override;
private:
    std::unique_ptr<CompiledRegion> m_Region;
};

}  // namespace trellis::cpuacc
