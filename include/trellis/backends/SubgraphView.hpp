// Backend SDK: a view of part of the optimized graph, as handed to IBackendInternal::OptimizeSubgraph().
//
// Ownership: a view does not own its layers; they belong to the graph being optimized (or, for a
// replacement sub-graph, to the network returned by OptimizationViews::GetINetwork()). Valid for
// the duration of the OptimizeSubgraph() call. Not thread-safe.
#pragma once

#include <trellis/INetwork.hpp>

#include <vector>

namespace trellis {

class SubgraphView {
public:
    using Layers = std::vector<IConnectableLayer*>;
    using InputSlots = std::vector<IInputSlot*>;
    using OutputSlots = std::vector<IOutputSlot*>;

    SubgraphView() = default;
    /// `inputs`: slots of the view's layers fed from outside the view; `outputs`: slots of the
    /// view's layers read from outside it. Layers are in execution order.
    SubgraphView(Layers layers, InputSlots inputs, OutputSlots outputs)
        : m_Layers(std::move(layers)), m_Inputs(std::move(inputs)), m_Outputs(std::move(outputs)) {}
    /// A view of one layer: all its input and output slots are the boundary.
    explicit SubgraphView(IConnectableLayer* layer);

    const Layers& GetLayers() const { return m_Layers; }
    const InputSlots& GetInputSlots() const { return m_Inputs; }
    const OutputSlots& GetOutputSlots() const { return m_Outputs; }
    unsigned int GetNumLayers() const { return static_cast<unsigned int>(m_Layers.size()); }
private:
    Layers m_Layers;
    InputSlots m_Inputs;
    OutputSlots m_Outputs;
};

}  // namespace trellis
