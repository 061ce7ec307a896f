// Arm NN compatibility layer: IRuntime, over trellis::IRuntime.
//
// Ownership: the runtime owns every loaded network until UnloadNetwork() or its destruction.
// Thread-safety: as trellis::IRuntime: every method may be called from several threads;
// EnqueueWorkload() may run concurrently on one network.
// What maps to what (docs/armnn-compat.md): m_DynamicBackendsPath is Trellis's (empty: the
// installed default folder and the compile-time paths); m_BackendOptions become Trellis's
// per-backend options as text; m_ProfilingOptions.m_EnableProfiling is Trellis's backend
// profiling. Pre-imported inputs and outputs, working-memory handles and the GpuAcc tuned
// parameters object are not covered.
#pragma once

#include <armnn/BackendOptions.hpp>
#include <armnn/INetwork.hpp>
#include <armnn/IProfiler.hpp>
#include <armnn/Tensor.hpp>
#include <armnn/Types.hpp>
#include <trellis/IRuntime.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace armnn {

class IRuntime;
using IRuntimePtr = std::unique_ptr<IRuntime, void (*)(IRuntime*)>;
using ImportedInputId = unsigned int;
using ImportedOutputId = unsigned int;

/// Per-network load options. Import/export of memory: only MemorySource::Undefined and Malloc
/// (Trellis reads inputs and writes outputs in the caller's buffers as they are); asynchronous
/// execution: Trellis's EnqueueWorkload is thread-safe on one network, so asyncEnabled is
/// accepted and needs nothing else. profilingEnabled switches the network's IProfiler on.
struct INetworkProperties {
    INetworkProperties(bool asyncEnabled, MemorySource inputSource, MemorySource outputSource,
                       bool profilingEnabled = false,
                       ProfilingDetailsMethod detailsMethod = ProfilingDetailsMethod::Undefined,
                       bool externalMemoryManagementEnabled = false)
        : m_ImportEnabled(inputSource != MemorySource::Undefined),
          m_ExportEnabled(outputSource != MemorySource::Undefined),
          m_AsyncEnabled(asyncEnabled),
          m_ProfilingEnabled(profilingEnabled),
          m_OutputNetworkDetailsMethod(detailsMethod),
          m_InputSource(inputSource),
          m_OutputSource(outputSource),
          m_ExternalMemoryManagementEnabled(externalMemoryManagementEnabled) {}
    const bool m_ImportEnabled;
    const bool m_ExportEnabled;
    const bool m_AsyncEnabled;
    const bool m_ProfilingEnabled;
    const ProfilingDetailsMethod m_OutputNetworkDetailsMethod;
    const MemorySource m_InputSource;
    const MemorySource m_OutputSource;
    const bool m_ExternalMemoryManagementEnabled;
};

namespace detail {
struct RuntimeImpl;
}  // namespace detail

class IRuntime {
public:
    struct CreationOptions {
        /// One folder scanned for dynamic backends instead of the defaults (empty: the defaults).
        std::string m_DynamicBackendsPath;
        bool m_EnableGpuProfiling = false;
        /// Refused by Create() when true: Trellis has no protected-memory mode.
        bool m_ProtectedMode = false;
        struct ExternalProfilingOptions {
            /// Trellis's backend profiling counters (trellis::IRuntime::GetProfilingCounters()).
            bool m_EnableProfiling = false;
            bool m_TimelineEnabled = false;
        };
        ExternalProfilingOptions m_ProfilingOptions;
        /// Per-backend options, given to Trellis's backends as text (BackendOptions::Var::ToString).
        std::vector<BackendOptions> m_BackendOptions;
    };

    static IRuntime* CreateRaw(const CreationOptions& options);
    static IRuntimePtr Create(const CreationOptions& options);
    static void Destroy(IRuntime* runtime);

    /// Takes the network; on success `networkIdOut` names it. On failure every form returns
    /// Failure and logs the reason at Error (ConfigureLogging); the others also set `errorMessage`.
    Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network);
    Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage);
    Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage,
                       const INetworkProperties& networkProperties);

    TensorInfo GetInputTensorInfo(NetworkId networkId, LayerBindingId layerId) const;
    TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId) const;

    /// Runs the network. Pre-imported ids are not covered: non-empty vectors throw
    /// UnimplementedException.
    Status EnqueueWorkload(NetworkId networkId, const InputTensors& inputTensors,
                           const OutputTensors& outputTensors,
                           std::vector<ImportedInputId> preImportedInputIds = {},
                           std::vector<ImportedOutputId> preImportedOutputIds = {});

    Status UnloadNetwork(NetworkId networkId);
    const IDeviceSpec& GetDeviceSpec() const;
    /// The network's profiler, or nullptr for an unknown network.
    const std::shared_ptr<IProfiler> GetProfiler(NetworkId networkId) const;

    /// The Trellis runtime underneath (dynamic-backend status, working memory, timeline...).
    trellis::IRuntime& GetTrellisRuntime();

    ~IRuntime();
    IRuntime(const IRuntime&) = delete;
    IRuntime& operator=(const IRuntime&) = delete;

protected:
    explicit IRuntime(const CreationOptions& options);
    std::unique_ptr<detail::RuntimeImpl> pRuntimeImpl;
};

}  // namespace armnn
