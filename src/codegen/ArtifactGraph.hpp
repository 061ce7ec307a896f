// Code generator: the graph an artifact computes, read from an optimized network or from a
// backend's sub-graph through the public API only (IConnectableLayer, slots, descriptors, tensor
// infos). Tensors are the layers' output slots; every compute layer comes with the QueueDescriptor
// and WorkloadInfo a backend's layer support would be shown for it.
//
// Ownership: a graph points into the network or sub-graph it was read from (layers, descriptors,
// constants), which must outlive it. Not thread-safe; read-only once built.
#pragma once

#include <trellis/Codegen.hpp>
#include <trellis/backends/IWorkload.hpp>

#include <map>
#include <string>
#include <vector>

namespace trellis::codegen {

struct GraphTensor {
    const IOutputSlot* m_Slot = nullptr;
    TensorInfo m_Info;
    /// The tensor's name: the binding's for inputs, else "<layer>" or "<layer>:<k>".
    std::string m_Name;
    /// The value of a tensor produced by a Constant layer, else nullptr.
    const ConstTensor* m_Constant = nullptr;
    int m_Input = -1;                ///< index in ArtifactGraph::GetInputs(), or -1
    std::vector<int> m_Outputs;      ///< indices in ArtifactGraph::GetOutputs() it is
    int m_Producer = -1;             ///< index of the compute layer producing it, -1 for inputs and constants
    int m_LastUse = -1;              ///< index of the last compute layer reading it, -1 if none
};

struct GraphLayer {
    const IConnectableLayer* m_Layer = nullptr;
    QueueDescriptor m_Queue;
    WorkloadInfo m_Info;
    std::vector<int> m_Inputs;   ///< tensor ids, per input slot
    std::vector<int> m_Outputs;  ///< tensor ids, per output slot
    /// "Conv 'name'" for messages and comments.
    std::string Describe() const;
};

struct GraphOutput {
    std::string m_Name;
    int m_Tensor = -1;
};

class ArtifactGraph {
public:
    /// Every compute layer of a static optimized network. Throws InvalidArgumentException for a
    /// dynamic network.
    static ArtifactGraph FromNetwork(const IOptimizedNetwork& network);
    /// The layers of a sub-graph; inputs are the producers of its input slots (constants aside).
    static ArtifactGraph FromSubgraph(const SubgraphView& subgraph);

    const std::vector<GraphLayer>& GetLayers() const { return m_Layers; }
    const std::vector<GraphTensor>& GetTensors() const { return m_Tensors; }
    const GraphTensor& GetTensor(int id) const { return m_Tensors[static_cast<std::size_t>(id)]; }
    /// Tensor ids of the artifact's inputs, in order.
    const std::vector<int>& GetInputs() const { return m_Inputs; }
    const std::vector<GraphOutput>& GetOutputs() const { return m_Outputs; }
    /// For a sub-graph: per input slot, its artifact input or -1 (a constant).
    const std::vector<int>& GetSubgraphInputs() const { return m_SubgraphInputs; }
    /// A text describing the graph's structure (layers, ops, shapes, connections) for the model hash.
    std::string DescribeStructure() const;

private:
    int TensorOf(const IOutputSlot* slot);
    void AddLayer(const IConnectableLayer* layer);
    void Finish();

    std::vector<GraphLayer> m_Layers;
    std::vector<GraphTensor> m_Tensors;
    std::map<const IOutputSlot*, int> m_TensorIds;
    std::vector<int> m_Inputs;
    std::vector<GraphOutput> m_Outputs;
    std::vector<int> m_SubgraphInputs;
};

}  // namespace trellis::codegen
