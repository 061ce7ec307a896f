// Internal: what the files of the Arm NN compatibility layer (src/armnn/) share: the
// implementation objects behind the public armnn classes and the access to them.
#pragma once

#include <armnn/INetwork.hpp>
#include <armnn/IProfiler.hpp>
#include <armnn/Types.hpp>
#include <trellis/INetwork.hpp>
#include <trellis/IRuntime.hpp>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace armnn::detail {

/// One layer of an optimized network, as the profiler's details print it.
struct LayerDetail {
    std::string m_Name;
    std::string m_Type;
    std::string m_Backend;
};

struct OptimizedNetworkImpl {
    trellis::IOptimizedNetworkPtr m_Network{nullptr, &trellis::IOptimizedNetwork::Destroy};
    LayerGuid m_Guid = 0;
    size_t m_NumInputs = 0;
    size_t m_NumOutputs = 0;
};

struct ProfilerImpl {
    mutable std::mutex m_Mutex;
    bool m_Enabled = false;
    /// Switches the Trellis timeline of the profiled network on or off; empty once the network
    /// is unloaded or its runtime destroyed (the profiler may outlive both).
    std::function<void(bool)> m_SetRecording;
    ProfilingDetailsMethod m_Details = ProfilingDetailsMethod::Undefined;
    std::vector<LayerDetail> m_Layers;
    /// One entry per profiled EnqueueWorkload (the timeline events it recorded).
    std::vector<std::vector<trellis::TimelineEvent>> m_Inferences;
};

/// The compatibility layer's access to the classes' implementation objects.
struct NetworkAccess {
    /// An armnn network wrapping a Trellis network (the ONNX parser's).
    static INetworkPtr Wrap(trellis::INetworkPtr network);
    static IOptimizedNetworkPtr MakeOptimized(trellis::IOptimizedNetworkPtr network, size_t numInputs,
                                              size_t numOutputs);
    /// Takes the Trellis network out of `network` (LoadNetwork).
    static trellis::IOptimizedNetworkPtr Take(IOptimizedNetwork& network);
    static const NetworkImpl& Impl(const INetwork& network) { return *network.pNetworkImpl; }
    static NetworkImpl& Impl(INetwork& network) { return *network.pNetworkImpl; }
};

/// "Layer 'name' (Type)" or "Type layer #guid" for an unnamed layer.
std::string DescribeLayer(const IConnectableLayer& layer);

}  // namespace armnn::detail
