// Internal: INetwork implementation.
#pragma once

#include "Graph.hpp"

#include <trellis/INetwork.hpp>

namespace trellis::core {

class NetworkImpl final : public INetwork {
public:
    IConnectableLayer* AddLayer(LayerType type, const LayerDescriptor& descriptor, const char* name, int numInputs,
                                int numOutputs) override;
    IConnectableLayer* AddInputLayer(LayerBindingId id, const char* name) override;
    IConnectableLayer* AddOutputLayer(LayerBindingId id, const char* name) override;
    IConnectableLayer* AddConstantLayer(const ConstTensor& input, const char* name) override;
    IConnectableLayer* AddAdditionLayer(const char* name) override;
    IConnectableLayer* AddMultiplicationLayer(const char* name) override;
    IConnectableLayer* AddElementwiseBinaryLayer(const ElementwiseBinaryDescriptor& d, const char* name) override;
    IConnectableLayer* AddElementwiseUnaryLayer(const ElementwiseUnaryDescriptor& d, const char* name) override;
    IConnectableLayer* AddConvolutionLayer(const ConvolutionDescriptor& d, bool biasEnabled, const char* name) override;
    IConnectableLayer* AddSoftmaxLayer(const SoftmaxDescriptor& d, const char* name) override;
    IConnectableLayer* AddReshapeLayer(const ReshapeDescriptor& d, const char* name) override;
    unsigned int GetNumLayers() const override { return static_cast<unsigned int>(m_Graph.Size()); }
    std::string ToString() const override { return m_Graph.ToString(); }

    const Graph& GetGraph() const { return m_Graph; }
    Graph& GetGraph() { return m_Graph; }
private:
    Graph m_Graph;
};

/// Makes a Constant descriptor that owns a copy of `tensor`'s bytes.
ConstantDescriptor MakeOwnedConstant(const ConstTensor& tensor);
ConstantDescriptor MakeOwnedConstant(const TensorInfo& info, std::vector<uint8_t> bytes);

}  // namespace trellis::core
