// Backend SDK: workloads, and what a backend is told about a layer.
//
// A workload executes one layer (or one pre-compiled sub-graph). It is created once at
// LoadNetwork() and then executed by every EnqueueWorkload() call, possibly from several threads
// at once: Execute() is const and must keep no per-call state in the workload object. Per-call
// temporary memory is requested through GetScratchBytes() and handed to Execute() by the runtime,
// planned together with the network's intermediate tensors.
#pragma once

#include <trellis/Descriptors.hpp>
#include <trellis/backends/IBackendProfiling.hpp>
#include <trellis/backends/ITensorHandle.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace trellis {

/// The tensors of one layer.
struct WorkloadInfo {
    std::vector<TensorInfo> m_InputTensorInfos;
    std::vector<TensorInfo> m_OutputTensorInfos;
};

/// What the layer is. Pointers point into the optimized network, which outlives every workload
/// created from it; copy what you need anyway if you want to be independent of it.
struct QueueDescriptor {
    LayerType m_Type = LayerType::Input;
    const LayerDescriptor* m_Descriptor = nullptr;
    /// One entry per input: the constant value when that input is produced by a Constant layer
    /// (weights, biases), nullptr otherwise. Lets a backend pack weights once at load.
    std::vector<const ConstTensor*> m_ConstantInputs;
    std::string m_LayerName;

    template <typename T> const T& Get() const { return std::get<T>(*m_Descriptor); }
};

/// The memory of one execution of one workload.
struct WorkloadIo {
    std::span<ITensorHandle* const> m_Inputs;
    std::span<ITensorHandle* const> m_Outputs;
    void* m_Scratch = nullptr;  ///< GetScratchBytes() bytes, 64-byte aligned, uninitialized
    /// (Backend API 1.2) Non-null while the application records a timeline
    /// (IRuntime::CreationOptions::m_ProfilingOptions.m_RecordTimeline): the runtime times the whole
    /// Execute() itself; a workload that runs several steps (a fused region) may report each with
    /// ReportEvent() so the timeline shows what is inside it. Valid for this call only.
    IBackendProfiling* m_Profiling = nullptr;
};

class IWorkload {
public:
    virtual ~IWorkload() = default;
    /// Runs the layer. May be called concurrently from several threads with different `io`.
    virtual void Execute(const WorkloadIo& io) const = 0;
    /// Per-call temporary memory this workload needs (default none).
    virtual std::size_t GetScratchBytes() const { return 0; }
    /// Optional (Backend API 1.1): false when Execute() never reads input `index`, a constant
    /// (QueueDescriptor::m_ConstantInputs[index]) the workload copied or packed when it was
    /// created. Once every reader of a constant says so, LoadNetwork frees the constant's memory
    /// (weights are then held once, in the backend's packed form) and hands such inputs to
    /// Execute() as handles whose Map() is nullptr. Default: true (read at run time).
    virtual bool ReadsConstantInput(unsigned int index) const {
        (void)index;
        return true;
    }
};
using IWorkloadPtr = std::unique_ptr<IWorkload>;

}  // namespace trellis
