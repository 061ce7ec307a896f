// GpuAcc: a compiled region - the device plan of a RegionGraph, and its execution.
//
// Plan once (at LoadNetwork, in the workload's constructor), as XNNPACK's create/setup and ggml's
// CUDA backend do:
//   - every node becomes steps: a cuDNN graph (convolutions with their epilogue), a cuBLASLt matmul
//     (with bias/residual/activation epilogues), or one of GpuAcc's kernels; a layout change or a
//     type conversion is a step of its own, made once per tensor and kept for every reader;
//   - constants are converted to the precision's types, packed (convolution weights KCRS -> KRSC
//     for NHWC), BatchNorm folded into a scale and shift, and uploaded into one device buffer;
//   - intermediate tensors get offsets in the workload's scratch memory by lifetime (the runtime
//     plans that scratch with the network's other tensors, in GpuAcc's device arena), next to one
//     workspace shared by the cuDNN and cuBLASLt steps.
// Run many (Execute): the steps are launched on the calling thread's stream against the handles'
// device pointers; after one eager run for a set of buffer addresses, the launches are captured
// into a CUDA graph keyed by those addresses and replayed from then on (a new set of addresses,
// e.g. another concurrent call's arena, gets its own graph, as ggml re-captures when the
// addresses it recorded change).
#pragma once

#include "GpuAccGraph.hpp"
#include "GpuAccPrecision.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <memory>
#include <string>
#include <vector>

namespace trellis::gpuacc {

/// The backend options GpuAcc understands (IRuntime::CreationOptions::m_BackendOptions["GpuAcc"]).
struct RegionOptions {
    Precision m_Precision = Precision::Fp32;  ///< "Precision": fp32 | tf32 | fp16 | bf16
    bool m_CudaGraphs = true;                 ///< "CudaGraph": on | off (replay captured launches)
    /// "ConvAutotune": on | off - time cuDNN's first engines for each convolution at load and keep
    /// the fastest (on), or take its heuristics' first choice (off; faster loading).
    bool m_ConvAutotune = true;
    /// "StepTimesFile": a path; when set, every run captures the region with a CUDA event between
    /// each two steps into a graph, replays it, and the region appends each step's mean GPU time
    /// to this file when it is destroyed (a per-layer profile; slower than normal runs).
    std::string m_StepTimesFile;
    /// "ConvTf32": on | off - in Precision=tf32, convolutions on TF32 tensor cores in NHWC (on, the
    /// default), or as in fp32 (off: NCHW, no TF32; matrix products keep TF32).
    bool m_ConvTf32 = true;
    /// "DepthwiseConv": auto | own | cudnn - depthwise convolutions on GpuAcc's own kernel or
    /// cuDNN's plan: the faster of the two at load (auto), or always the one named.
    enum class Depthwise { Auto, Own, Cudnn } m_Depthwise = Depthwise::Auto;
    /// "CheckConvs": on | off - a debugging aid: every run re-computes each convolution with the
    /// direct kernel on its real inputs and prints each one's worst per-image relative error to
    /// stderr (runs eagerly: no CUDA graphs; far slower).
    bool m_CheckConvs = false;
    /// "StepBarrier": auto | off | event | kernel | sync - what separates a region's consecutive
    /// steps on the stream: an empty kernel before each step that needs one (auto, the default),
    /// nothing (off), an event record (event), an empty kernel between every two steps (kernel),
    /// or a host synchronization (sync: eager, no CUDA graphs). The steps that need one are cuDNN's
    /// TF32 convolutions: on an H100 (cuDNN 9.19) resnet50 at batch 32 came out 0.12-0.17 off
    /// PyTorch, its first image corrupted, when they ran straight after the step before them; an
    /// empty kernel or a host synchronization before them fixes it (2.2e-3, as at batch 1) and an
    /// event record does not - consistent with a TF32 engine launched as a programmatic dependent
    /// (Hopper's early launch) reading its input before the step before it has finished. Each
    /// convolution was right on its own (checked at load on every image), so only whole networks
    /// show it (docs/performance.md).
    enum class Barrier { Auto, Off, Event, Kernel, Sync } m_StepBarrier = Barrier::Auto;
};

class CompiledRegion;

class GpuAccRegionWorkload final : public IWorkload {
public:
    /// `constants`: per region input, its constant value or nullptr (QueueDescriptor::m_ConstantInputs).
    GpuAccRegionWorkload(std::shared_ptr<const RegionGraph> graph, const std::vector<const ConstTensor*>& constants,
                         const RegionOptions& options, const std::string& name);
    ~GpuAccRegionWorkload() override;
    void Execute(const WorkloadIo& io) const override;
    std::size_t GetScratchBytes() const override;
    bool ReadsConstantInput(unsigned int index) const override;
    /// The plan in words: one line per step ("conv 'x': cuDNN conv+bias+relu", ...).
    std::vector<std::string> Describe() const;
private:
    std::unique_ptr<CompiledRegion> m_Region;
};

/// MemCopy between host memory and GpuAcc's device memory, through pinned staging buffers, on
/// the calling thread's stream. The copy to the host synchronizes that stream.
class GpuAccMemCopyWorkload final : public IWorkload {
public:
    GpuAccMemCopyWorkload(bool toDevice, std::size_t bytes, std::string name)
        : m_ToDevice(toDevice), m_Bytes(bytes), m_Name(std::move(name)) {}
    void Execute(const WorkloadIo& io) const override;
private:
    bool m_ToDevice;
    std::size_t m_Bytes;
    std::string m_Name;
};

}  // namespace trellis::gpuacc
