// Trellis application API: the runtime that loads optimized networks and runs them.
//
// Ownership: the runtime owns every loaded network until UnloadNetwork() or its destruction.
// Thread-safety: all methods may be called from several threads at once. EnqueueWorkload() may
// run concurrently on the same NetworkId: each call gets its own working memory.
//
// Dynamic networks: a network whose inputs have unknown dims (kUnknownDim), or whose inputs feed
// a parameter the optimizer needs as a constant (a Reshape's shape, Slice starts, the values
// NonZero or Unique read to size their outputs, ...), is optimized again for each set of input
// shapes (and values of such parameter-feeding inputs) it is run with; each such specialization
// has its own workloads and memory plan and is kept in a bounded LRU cache
// (CreationOptions::m_MaxSpecializations). See docs/architecture.md.
#pragma once

#include <trellis/INetwork.hpp>
#include <trellis/backends/BackendVersion.hpp>
#include <trellis/backends/ICustomAllocator.hpp>
#include <trellis/Types.hpp>

#include <map>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trellis {

class IRuntime;
using IRuntimePtr = std::unique_ptr<IRuntime, void (*)(IRuntime*)>;

/// What happened to one file found while scanning the dynamic-backend paths.
struct DynamicBackendStatus {
    std::string m_Path;            ///< as found in the scanned directory
    std::string m_CanonicalPath;   ///< symlinks resolved ("" if it does not resolve)
    BackendId m_Id;                ///< from GetBackendId(), when it could be called
    BackendVersion m_Version;      ///< from GetVersion(), when it could be called
    bool m_Loaded = false;         ///< registered and usable
    std::string m_Reason;          ///< why it was skipped (empty when loaded)
};

/// One timed piece of an EnqueueWorkload() call (CreationOptions::ProfilingOptions::m_RecordTimeline).
struct TimelineEvent {
    std::string m_Name;      ///< the layer a workload runs, or what its backend reported inside it
    std::string m_Category;  ///< the layer's op ("Conv", "PreCompiled", ...) or the backend's category
    BackendId m_Backend;
    uint64_t m_StartNs = 0;  ///< std::chrono::steady_clock, nanoseconds since its epoch
    uint64_t m_DurationNs = 0;
    uint64_t m_Thread = 0;   ///< identifies the calling thread (a hash of its id)
    std::string m_Parent;    ///< empty for a workload; for a backend's event, the workload's layer
};

class IRuntime {
public:
    struct CreationOptions {
        /// One directory scanned for dynamic backends instead of the defaults (empty = the
        /// defaults: GetDefaultDynamicBackendPaths()).
        std::string m_DynamicBackendsPath;
        /// Free-form per-backend options: backend id -> (name -> value).
        std::map<BackendId, std::map<std::string, std::string>> m_BackendOptions;
        /// Allocators for backends' working memory; each backend must accept its allocator
        /// (IBackendInternal::UseCustomMemoryAllocator) or Create() throws naming it.
        std::map<BackendId, std::shared_ptr<ICustomAllocator>> m_CustomAllocatorMap;
        struct ProfilingOptions {
            /// Create backend profiling contexts and collect their counters.
            bool m_EnableProfiling = false;
            /// Time every workload of every EnqueueWorkload() (and what backends report inside
            /// their workloads) into a timeline per network; read it with TakeTimeline(). The
            /// initial state of every loaded network: SetTimelineRecording() switches one.
            bool m_RecordTimeline = false;
        };
        ProfilingOptions m_ProfilingOptions;
        /// Specializations of a dynamic network kept per network (least recently used goes
        /// first); at least 1.
        std::size_t m_MaxSpecializations = 8;
    };

    /// How a dynamic network's specialization cache is doing (all zero for a static network).
    struct SpecializationStats {
        std::size_t m_Cached = 0;   ///< specializations held now
        std::size_t m_Built = 0;    ///< specializations optimized and loaded so far
        std::size_t m_Evicted = 0;  ///< dropped from the cache to make room
    };

    /// The folders a runtime scans for dynamic backends when m_DynamicBackendsPath is empty, in
    /// order: the compile-time DYNAMIC_BACKEND_PATHS, then the installed default folder
    /// <folder of libtrellis.so>/trellis/backends (where `cmake --install` puts the backends it
    /// ships, e.g. /opt/trellis/lib/trellis/backends; skipped without a warning where it does not
    /// exist, as in a build tree).
    static std::vector<std::string> GetDefaultDynamicBackendPaths();

    static IRuntime* CreateRaw(const CreationOptions& options);
    static IRuntimePtr Create(const CreationOptions& options);
    static void Destroy(IRuntime* runtime);

    /// Takes the network; on success `networkIdOut` names it. On failure the first form throws
    /// RuntimeException with the reason; the second returns Failure and sets `errorMessage`.
    virtual Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network) = 0;
    virtual Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage) = 0;
    virtual Status UnloadNetwork(NetworkId networkId) = 0;

    /// Throws InvalidArgumentException for an unknown network or binding id. For a dynamic
    /// network, input dims decided at run time are kUnknownDim; its output infos depend on the
    /// inputs, so the two-argument GetOutputTensorInfo throws (naming the three-argument form).
    virtual TensorInfo GetInputTensorInfo(NetworkId networkId, LayerBindingId layerId) const = 0;
    virtual TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId) const = 0;
    /// The output's info when the network runs with `inputs` (every input binding, as for
    /// EnqueueWorkload; only their shapes, and the values of parameter-feeding inputs, are read).
    /// For a dynamic network this specializes it (or reuses the cached specialization).
    virtual TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId,
                                           const InputTensors& inputs) = 0;
    /// True when the network is specialized per run (see the top of this file).
    virtual bool IsDynamic(NetworkId networkId) const = 0;
    virtual SpecializationStats GetSpecializationStats(NetworkId networkId) const = 0;

    /// Runs the network. Every input and output binding must be given once, with the network's
    /// shape and type (throws InvalidArgumentException naming the binding otherwise); a dynamic
    /// network takes inputs of any shape that agrees with the dims it fixes, and its outputs
    /// must have the shapes of that specialization. Output buffers are written in place.
    /// Device memory: an input whose tensor says it is in a backend's memory
    /// (Tensor::SetMemoryBackend("GpuAcc"), a device pointer) is read in place by that backend:
    /// every layer reading it must be that backend's copy-in (MemCopy), which is then skipped
    /// (throws InvalidArgumentException naming the input and the reader otherwise). The caller
    /// makes sure the memory is written before the call (e.g. synchronizes its stream). An
    /// output in a backend's memory is passed to the copy out of that backend as it is (GpuAcc
    /// copies device to device).
    virtual Status EnqueueWorkload(NetworkId networkId, const InputTensors& inputTensors,
                                   const OutputTensors& outputTensors) = 0;

    virtual const IDeviceSpec& GetDeviceSpec() const = 0;

    /// Bytes of working memory one EnqueueWorkload() call of this network uses (intermediate
    /// tensors and scratch, after lifetime-based reuse), and what it would be without reuse.
    /// For a dynamic network: the largest of its cached specializations (0 before the first run).
    virtual std::size_t GetPeakWorkingMemoryBytes(NetworkId networkId) const = 0;
    virtual std::size_t GetUnplannedWorkingMemoryBytes(NetworkId networkId) const = 0;

    /// Every file found while scanning the dynamic-backend paths at creation, and the warnings
    /// (invalid paths) of that scan.
    virtual std::vector<DynamicBackendStatus> GetDynamicBackendStatus() const = 0;
    virtual std::vector<std::string> GetDynamicBackendWarnings() const = 0;
    /// Warnings the backends gave about CreationOptions::m_BackendOptions at creation (an option
    /// that cannot take effect on this machine, and why), each prefixed "<backend>: ".
    virtual std::vector<std::string> GetBackendOptionWarnings() const = 0;
    /// Counter values reported by backends' profiling contexts ("<backend>/<name>" -> value);
    /// empty unless profiling was enabled.
    virtual std::map<std::string, uint64_t> GetProfilingCounters() const = 0;
    /// The timeline events of `networkId` recorded since the last call (in recording order),
    /// which forgets them; empty unless m_RecordTimeline was set. Throws for an unknown network.
    virtual std::vector<TimelineEvent> TakeTimeline(NetworkId networkId) = 0;
    /// Switches the recording of `networkId`'s timeline on or off from its next
    /// EnqueueWorkload() on; a network starts as m_ProfilingOptions.m_RecordTimeline says. Events
    /// already recorded stay until TakeTimeline(). Throws for an unknown network.
    virtual void SetTimelineRecording(NetworkId networkId, bool record) = 0;
protected:
    virtual ~IRuntime() = default;
};

}  // namespace trellis
