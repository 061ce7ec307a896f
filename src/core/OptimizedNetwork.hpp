// Internal: IOptimizedNetwork implementation — the optimized graph with every layer placed.
#pragma once

#include "Graph.hpp"

#include <trellis/INetwork.hpp>
#include <trellis/backends/IBackendInternal.hpp>
#include <trellis/backends/IWorkload.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>

namespace trellis::core {

/// What a dynamic optimized network keeps so that it can be optimized again for each run's input
/// shapes and parameter values (a specialization; Runtime.cpp caches them).
struct DynamicSource {
    std::unique_ptr<Graph> m_Graph;          ///< the validated source graph (inputs as declared)
    std::vector<BackendId> m_Preferences;
    OptimizerOptions m_Options;
    std::set<LayerBindingId> m_ValueInputs;  ///< inputs whose values a specialization needs
    std::string m_Reason;                    ///< why the network is dynamic
};

/// Thrown by phase 3 when a parameter (or an input whose values size an output) is not constant
/// but comes from graph inputs only: pinning those inputs' values makes it constant.
struct NeedsInputValues {
    std::set<LayerBindingId> m_Bindings;
    std::string m_Message;
};

class OptimizedNetworkImpl final : public IOptimizedNetwork {
public:
    /// `maxWorkingMemoryBytes`: OptimizerOptions::m_MaxWorkingMemoryBytes as given (0 = the
    /// machine's physical memory), checked by LoadNetwork against the memory plan.
    OptimizedNetworkImpl(std::unique_ptr<Graph> graph, std::vector<BackendId> backends, std::vector<std::string> log,
                         std::size_t maxWorkingMemoryBytes, std::shared_ptr<const DynamicSource> dynamic = nullptr);

    std::vector<LayerPlacement> GetLayerPlacements() const override;
    std::map<BackendId, unsigned int> GetBackendLayerCounts() const override;
    const std::vector<std::string>& GetOptimizationLog() const override { return m_Log; }
    std::string ToString() const override { return m_Graph->ToString(); }

    Graph& GetGraph() const { return *m_Graph; }
    /// Layers in execution order.
    const std::vector<Layer*>& GetOrder() const { return m_Order; }
    const std::vector<BackendId>& GetBackends() const { return m_Backends; }
    /// Set for a dynamic network: nothing was placed yet, LoadNetwork() specializes per run.
    const std::shared_ptr<const DynamicSource>& GetDynamic() const { return m_Dynamic; }
    std::size_t GetMaxWorkingMemoryBytes() const { return m_MaxWorkingMemoryBytes; }
private:
    // First, so destroyed last: the factories of the backends in m_Backends. Layers may hold
    // backend-owned objects (PreCompiled), whose code a dynamic backend's factory keeps loaded.
    std::vector<std::function<std::unique_ptr<IBackendInternal>()>> m_BackendFactories;
    std::unique_ptr<Graph> m_Graph;
    std::vector<Layer*> m_Order;
    std::vector<BackendId> m_Backends;
    std::vector<std::string> m_Log;
    std::shared_ptr<const DynamicSource> m_Dynamic;
    std::size_t m_MaxWorkingMemoryBytes = 0;
};

/// Optimizes `source` for one run: inputs in `valueInputs` become constants holding the given
/// values, the others take the given shapes; then phases 2-7 run. Throws NeedsInputValues when
/// more inputs' values are needed, or the optimizer's usual exceptions.
IOptimizedNetworkPtr OptimizeSpecialization(const DynamicSource& source,
                                            const std::map<LayerBindingId, ConstTensor>& inputs,
                                            const std::set<LayerBindingId>& valueInputs, const IDeviceSpec& deviceSpec,
                                            std::vector<std::string>& log);

/// True for layers that run as workloads (not Input, Output or Constant).
bool IsComputeLayer(const Layer& layer);

/// The QueueDescriptor and WorkloadInfo a backend is shown for `layer`.
QueueDescriptor MakeQueueDescriptor(const Layer& layer);
WorkloadInfo MakeWorkloadInfo(const Layer& layer);

}  // namespace trellis::core
