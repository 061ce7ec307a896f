// Internal: IOptimizedNetwork implementation — the optimized graph with every layer placed.
#pragma once

#include "Graph.hpp"

#include <trellis/INetwork.hpp>
#include <trellis/backends/IBackendInternal.hpp>
#include <trellis/backends/IWorkload.hpp>

#include <functional>
#include <memory>

namespace trellis::core {

class OptimizedNetworkImpl final : public IOptimizedNetwork {
public:
    OptimizedNetworkImpl(std::unique_ptr<Graph> graph, std::vector<BackendId> backends, std::vector<std::string> log);

    std::vector<LayerPlacement> GetLayerPlacements() const override;
    std::map<BackendId, unsigned int> GetBackendLayerCounts() const override;
    const std::vector<std::string>& GetOptimizationLog() const override { return m_Log; }
    std::string ToString() const override { return m_Graph->ToString(); }

    Graph& GetGraph() const { return *m_Graph; }
    /// Layers in execution order.
    const std::vector<Layer*>& GetOrder() const { return m_Order; }
    const std::vector<BackendId>& GetBackends() const { return m_Backends; }
private:
    // First, so destroyed last: the factories of the backends in m_Backends. Layers may hold
    // backend-owned objects (PreCompiled), whose code a dynamic backend's factory keeps loaded.
    std::vector<std::function<std::unique_ptr<IBackendInternal>()>> m_BackendFactories;
    std::unique_ptr<Graph> m_Graph;
    std::vector<Layer*> m_Order;
    std::vector<BackendId> m_Backends;
    std::vector<std::string> m_Log;
};

/// True for layers that run as workloads (not Input, Output or Constant).
bool IsComputeLayer(const Layer& layer);

/// The QueueDescriptor and WorkloadInfo a backend is shown for `layer`.
QueueDescriptor MakeQueueDescriptor(const Layer& layer);
WorkloadInfo MakeWorkloadInfo(const Layer& layer);

}  // namespace trellis::core
