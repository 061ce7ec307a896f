// Internal: the graph of layers behind INetwork and IOptimizedNetwork.
//
// Layers own their slots (heap-allocated so pointers stay valid as slots are added/removed).
// The graph owns its layers. Not thread-safe.
#pragma once

#include <trellis/INetwork.hpp>

#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace trellis::core {

class Layer;
class OutputSlot;

class InputSlot final : public IInputSlot {
public:
    InputSlot(Layer& owner, unsigned int index) : m_Owner(owner), m_Index(index) {}
    const IOutputSlot* GetConnection() const override;
    IOutputSlot* GetConnection() override;
    const IConnectableLayer& GetOwningIConnectableLayer() const override;
    unsigned int GetSlotIndex() const override { return m_Index; }

    OutputSlot* GetConnectedOutputSlot() const { return m_Connection; }
    Layer& GetOwningLayer() const { return m_Owner; }
    void SetConnection(OutputSlot* s) { m_Connection = s; }
    void SetIndex(unsigned int i) { m_Index = i; }
private:
    Layer& m_Owner;
    unsigned int m_Index;
    OutputSlot* m_Connection = nullptr;
};

class OutputSlot final : public IOutputSlot {
public:
    OutputSlot(Layer& owner, unsigned int index) : m_Owner(owner), m_Index(index) {}
    unsigned int GetNumConnections() const override { return static_cast<unsigned int>(m_Connections.size()); }
    const IInputSlot* GetConnection(unsigned int index) const override;
    IInputSlot* GetConnection(unsigned int index) override;
    int Connect(IInputSlot& destination) override;
    void Disconnect(IInputSlot& slot) override;
    void SetTensorInfo(const TensorInfo& tensorInfo) override { m_Info = tensorInfo; m_InfoSet = true; }
    const TensorInfo& GetTensorInfo() const override { return m_Info; }
    bool IsTensorInfoSet() const override { return m_InfoSet; }
    const IConnectableLayer& GetOwningIConnectableLayer() const override;
    unsigned int CalculateIndexOnOwner() const override { return m_Index; }

    Layer& GetOwningLayer() const { return m_Owner; }
    const std::vector<InputSlot*>& GetConnections() const { return m_Connections; }
    void Connect(InputSlot& destination);
    void Disconnect(InputSlot& destination);
    /// Moves every consumer of this slot to `other`.
    void MoveAllConnections(OutputSlot& other);
    void DisconnectAll();
    void ClearTensorInfo() { m_InfoSet = false; }
    /// The tensor of the network as built that this slot carries ("<layer>:<output>"): set where
    /// the optimizer makes a slot stand for another layer's output (a folded constant, a
    /// substituted region's output); this slot's own layer and index otherwise.
    std::string GetOrigin() const;
    void SetOrigin(std::string origin) { m_Origin = std::move(origin); }
    const std::string& GetOriginOverride() const { return m_Origin; }
private:
    Layer& m_Owner;
    unsigned int m_Index;
    std::vector<InputSlot*> m_Connections;
    TensorInfo m_Info;
    bool m_InfoSet = false;
    std::string m_Origin;
};

class Layer final : public IConnectableLayer {
public:
    Layer(LayerType type, LayerDescriptor descriptor, std::string name, unsigned int numInputs, unsigned int numOutputs);

    const char* GetName() const override { return m_Name.c_str(); }
    LayerType GetType() const override { return m_Type; }
    LayerGuid GetGuid() const override { return m_Guid; }
    unsigned int GetNumInputSlots() const override { return static_cast<unsigned int>(m_Inputs.size()); }
    unsigned int GetNumOutputSlots() const override { return static_cast<unsigned int>(m_Outputs.size()); }
    const IInputSlot& GetInputSlot(unsigned int index) const override { return Input(index); }
    IInputSlot& GetInputSlot(unsigned int index) override { return Input(index); }
    const IOutputSlot& GetOutputSlot(unsigned int index) const override { return Output(index); }
    IOutputSlot& GetOutputSlot(unsigned int index) override { return Output(index); }
    const LayerDescriptor& GetDescriptor() const override { return m_Descriptor; }
    const BackendId& GetBackendId() const override { return m_Backend; }

    InputSlot& Input(unsigned int i) const;
    OutputSlot& Output(unsigned int i) const;
    LayerDescriptor& MutableDescriptor() { return m_Descriptor; }
    template <typename T> const T& Desc() const { return std::get<T>(m_Descriptor); }
    const std::string& Name() const { return m_Name; }
    void SetBackendId(const BackendId& id) { m_Backend = id; }
    /// The layer producing input i (nullptr if unconnected).
    Layer* InputLayer(unsigned int i) const;
    /// Disconnects and removes input slots [first, end).
    void RemoveInputSlotsFrom(unsigned int first);
private:
    friend class Graph;  // renames go through Graph::RenameLayer, which keeps its name index
    void SetName(std::string name) { m_Name = std::move(name); }
public:
    /// Disconnects input slot i and removes it, renumbering the later ones.
    void RemoveInputSlot(unsigned int i);
    void DisconnectAll();
    /// Appends an unconnected input slot.
    InputSlot& AddInputSlot();

    /// Backends that declined this layer during assignment, with their reasons.
    std::vector<std::pair<BackendId, std::string>> m_Declined;
    /// Op detail for listings ("Add", "Relu", "MaxPool"); empty = the layer type.
    std::string OpDetail() const;
    /// Marks layers created by the optimizer (folded constants) for logs.
    bool m_Synthesized = false;
    /// For a layer a backend substituted for others (OptimizeSubgraph): their names.
    std::vector<std::string> m_SubstitutedLayers;
    /// For a constant the optimizer computed (folding): the backend that evaluated it.
    BackendId m_FoldedOn;
private:
    LayerType m_Type;
    LayerDescriptor m_Descriptor;
    std::string m_Name;
    std::vector<std::unique_ptr<InputSlot>> m_Inputs;
    std::vector<std::unique_ptr<OutputSlot>> m_Outputs;
    LayerGuid m_Guid;
    BackendId m_Backend;
};

class Graph {
public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    Layer* AddLayer(LayerType type, LayerDescriptor descriptor, const std::string& name, unsigned int numInputs,
                    unsigned int numOutputs);
    /// Disconnects and deletes the layer.
    void EraseLayer(Layer* layer);
    const std::list<std::unique_ptr<Layer>>& Layers() const { return m_Layers; }
    std::size_t Size() const { return m_Layers.size(); }

    /// Layers in a topological order (stable: ties keep insertion order). Throws
    /// GraphValidationException naming a layer on a cycle.
    std::vector<Layer*> TopologicalOrder() const;
    /// Deep copy (descriptors and tensor infos; constants share their storage).
    std::unique_ptr<Graph> Clone() const;
    /// Unique layer name derived from `base` (`base`, else `base_1`, `base_2`, ...).
    std::string UniqueName(const std::string& base) const;
    /// Renames a layer (keeping the index of names UniqueName reads).
    void RenameLayer(Layer* layer, std::string name);
    std::string ToString() const;
private:
    std::list<std::unique_ptr<Layer>> m_Layers;
    /// How many layers bear each name: UniqueName was a set of every name per call, quadratic in
    /// constant folding (47 s of swin_s's Optimize, 3500 folds over 10000 layers).
    std::unordered_map<std::string, std::size_t> m_NameCounts;
};

/// "Conv 'name'" style description of a layer for messages.
std::string Describe(const Layer& layer);

}  // namespace trellis::core
