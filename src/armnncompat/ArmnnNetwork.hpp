// Internal: the recorded Arm NN graph behind armnn::INetwork (layers, slots, connections, the
// tensor infos set on outputs, copies of constant data), and its translation to Trellis.
#pragma once

#include "armnncompat/ArmnnInternal.hpp"

#include <armnn/INetwork.hpp>
#include <trellis/INetwork.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace armnn::detail {

struct LayerImpl;
struct NetworkImpl;

LayerGuid NextGuid();

struct OutputSlotImpl;

struct InputSlotImpl final : IInputSlot {
    InputSlotImpl(LayerImpl* owner, unsigned int index) : m_Owner(owner), m_Index(index) {}
    const IOutputSlot* GetConnection() const override;
    IOutputSlot* GetConnection() override;
    const IConnectableLayer& GetOwningIConnectableLayer() const override;
    IConnectableLayer& GetOwningIConnectableLayer() override;
    unsigned int GetSlotIndex() const override { return m_Index; }

    LayerImpl* m_Owner;
    unsigned int m_Index;
    OutputSlotImpl* m_Connection = nullptr;
};

struct OutputSlotImpl final : IOutputSlot {
    OutputSlotImpl(LayerImpl* owner, unsigned int index) : m_Owner(owner), m_Index(index) {}
    unsigned int GetNumConnections() const override { return static_cast<unsigned int>(m_Connections.size()); }
    const IInputSlot* GetConnection(unsigned int index) const override;
    IInputSlot* GetConnection(unsigned int index) override;
    void SetTensorInfo(const TensorInfo& tensorInfo) override;
    const TensorInfo& GetTensorInfo() const override;
    bool IsTensorInfoSet() const override { return m_Info.has_value(); }
    int Connect(IInputSlot& destination) override;
    void Disconnect(IInputSlot& slot) override;
    unsigned int CalculateIndexOnOwner() const override { return m_Index; }
    LayerGuid GetOwningLayerGuid() const override;
    const IConnectableLayer& GetOwningIConnectableLayer() const override;
    IConnectableLayer& GetOwningIConnectableLayer() override;

    LayerImpl* m_Owner;
    unsigned int m_Index;
    std::vector<InputSlotImpl*> m_Connections;
    std::optional<TensorInfo> m_Info;
};

/// A copy of a constant tensor's data (Arm NN copies constants when they are added).
struct OwnedTensor {
    TensorInfo m_Info;
    std::shared_ptr<std::vector<unsigned char>> m_Data;
    trellis::ConstTensor View() const { return trellis::ConstTensor(m_Info, m_Data->data()); }
    static OwnedTensor Copy(const ConstTensor& tensor, const std::string& what);
};

struct LayerImpl final : IConnectableLayer {
    LayerImpl(NetworkImpl* network, LayerType type, const char* name, unsigned int numInputs,
              unsigned int numOutputs, std::unique_ptr<BaseDescriptor> descriptor);
    const char* GetName() const override { return m_Name.c_str(); }
    unsigned int GetNumInputSlots() const override { return static_cast<unsigned int>(m_Inputs.size()); }
    unsigned int GetNumOutputSlots() const override { return static_cast<unsigned int>(m_Outputs.size()); }
    const IInputSlot& GetInputSlot(unsigned int index) const override;
    IInputSlot& GetInputSlot(unsigned int index) override;
    const IOutputSlot& GetOutputSlot(unsigned int index) const override;
    IOutputSlot& GetOutputSlot(unsigned int index) override;
    LayerGuid GetGuid() const override { return m_Guid; }
    LayerType GetType() const override { return m_Type; }
    const BaseDescriptor& GetParameters() const override { return *m_Descriptor; }

    unsigned int CheckInput(unsigned int index) const;
    unsigned int CheckOutput(unsigned int index) const;
    template <typename D>
    const D& Descriptor() const { return static_cast<const D&>(*m_Descriptor); }

    NetworkImpl* m_Network;
    LayerType m_Type;
    std::string m_Name;
    LayerGuid m_Guid;
    std::unique_ptr<BaseDescriptor> m_Descriptor;
    std::vector<std::unique_ptr<InputSlotImpl>> m_Inputs;
    std::vector<std::unique_ptr<OutputSlotImpl>> m_Outputs;
    LayerBindingId m_BindingId = 0;          ///< Input and Output layers
    std::vector<OwnedTensor> m_Constants;    ///< Constant: the value; BatchNormalization: mean, variance, beta, gamma
};

struct NetworkImpl {
    LayerImpl* Add(LayerType type, const char* name, unsigned int numInputs, unsigned int numOutputs,
                   std::unique_ptr<BaseDescriptor> descriptor = nullptr);
    /// The recorded layers as a new Trellis network (ArmnnLowering.cpp). Throws an armnn
    /// exception naming the layer for an unconnected input, a missing tensor info that the
    /// translation needs, or a descriptor Trellis cannot express.
    trellis::INetworkPtr Lower() const;

    NetworkOptions m_Options;
    std::vector<std::unique_ptr<LayerImpl>> m_Layers;
    /// Set for a network made by the ONNX parser: the Trellis network it built.
    trellis::INetworkPtr m_Parsed{nullptr, &trellis::INetwork::Destroy};
    size_t m_ParsedInputs = 0;
    size_t m_ParsedOutputs = 0;
};

}  // namespace armnn::detail
