// Trellis application API: the runtime that loads optimized networks and runs them.
//
// Ownership: the runtime owns every loaded network until UnloadNetwork() or its destruction.
// Thread-safety: all methods may be called from several threads at once. EnqueueWorkload() may
// run concurrently on the same NetworkId: each call gets its own working memory.
#pragma once

#include <trellis/INetwork.hpp>
#include <trellis/Types.hpp>

#include <map>
#include <memory>
#include <string>

namespace trellis {

class IRuntime;
using IRuntimePtr = std::unique_ptr<IRuntime, void (*)(IRuntime*)>;

class IRuntime {
public:
    struct CreationOptions {
        /// Overrides the compile-time DYNAMIC_BACKEND_PATHS with one directory (empty = use those).
        std::string m_DynamicBackendsPath;
        /// Free-form per-backend options: backend id -> (name -> value).
        std::map<BackendId, std::map<std::string, std::string>> m_BackendOptions;
    };

    static IRuntime* CreateRaw(const CreationOptions& options);
    static IRuntimePtr Create(const CreationOptions& options);
    static void Destroy(IRuntime* runtime);

    /// Takes the network; on success `networkIdOut` names it. On failure returns Failure and, when
    /// given, sets `errorMessage`.
    virtual Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network) = 0;
    virtual Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage) = 0;
    virtual Status UnloadNetwork(NetworkId networkId) = 0;

    /// Throws InvalidArgumentException for an unknown network or binding id.
    virtual TensorInfo GetInputTensorInfo(NetworkId networkId, LayerBindingId layerId) const = 0;
    virtual TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId) const = 0;

    /// Runs the network. Every input and output binding must be given once, with the network's
    /// shape and type (throws InvalidArgumentException naming the binding otherwise). Output
    /// buffers are written in place.
    virtual Status EnqueueWorkload(NetworkId networkId, const InputTensors& inputTensors,
                                   const OutputTensors& outputTensors) = 0;

    virtual const IDeviceSpec& GetDeviceSpec() const = 0;

    /// Bytes of working memory one EnqueueWorkload() call of this network uses (intermediate
    /// tensors and scratch, after lifetime-based reuse), and what it would be without reuse.
    virtual std::size_t GetPeakWorkingMemoryBytes(NetworkId networkId) const = 0;
    virtual std::size_t GetUnplannedWorkingMemoryBytes(NetworkId networkId) const = 0;
protected:
    virtual ~IRuntime() = default;
};

}  // namespace trellis
