// INetwork: building a network through the application API.
#include "Network.hpp"

#include "InferContext.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::core {

ConstantDescriptor MakeOwnedConstant(const TensorInfo& info, std::vector<uint8_t> bytes) {
    auto storage = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    TensorInfo constInfo = info;
    constInfo.SetConstant(true);
    ConstantDescriptor d;
    d.m_Tensor = ConstTensor(constInfo, storage->data());
    d.m_Storage = std::shared_ptr<const void>(storage, storage->data());
    return d;
}

ConstantDescriptor MakeOwnedConstant(const ConstTensor& tensor) {
    const auto* p = static_cast<const uint8_t*>(tensor.GetMemoryArea());
    if (!p && tensor.GetNumBytes() != 0) {
        throw InvalidArgumentException("AddConstantLayer: the tensor (" + tensor.GetInfo().ToString() + ") has no data");
    }
    return MakeOwnedConstant(tensor.GetInfo(), std::vector<uint8_t>(p, p + tensor.GetNumBytes()));
}

IConnectableLayer* NetworkImpl::AddLayer(LayerType type, const LayerDescriptor& descriptor, const char* name,
                                         int numInputs, int numOutputs) {
    const OpInfo& op = GetOpInfo(type);
    const std::string layerName = name && *name ? std::string(name) : m_Graph.UniqueName(op.m_Name);
    if (!DescriptorMatches(type, descriptor)) {
        throw InvalidArgumentException(std::string("AddLayer: layer '") + layerName + "' of type " + op.m_Name +
                                       " was given a descriptor of another op");
    }
    const unsigned int nIn = numInputs < 0 ? op.m_MinInputs : static_cast<unsigned int>(numInputs);
    if (nIn < op.m_MinInputs || nIn > op.m_MaxInputs) {
        throw InvalidArgumentException(std::string("AddLayer: layer '") + layerName + "' of type " + op.m_Name +
                                       " takes " + std::to_string(op.m_MinInputs) + ".." +
                                       std::to_string(op.m_MaxInputs) + " inputs, not " + std::to_string(nIn));
    }
    unsigned int nOut;
    if (op.m_NumOutputs >= 0) {
        if (numOutputs >= 0 && numOutputs != op.m_NumOutputs) {
            throw InvalidArgumentException(std::string("AddLayer: layer '") + layerName + "' of type " + op.m_Name +
                                           " has exactly " + std::to_string(op.m_NumOutputs) + " outputs");
        }
        nOut = static_cast<unsigned int>(op.m_NumOutputs);
    } else if (op.m_NumOutputs < -1) {
        // 1 to N outputs (Ops.def: NumOutputs = -N), 1 unless the caller asks for more.
        const int most = -op.m_NumOutputs;
        if (numOutputs == 0 || numOutputs > most) {
            throw InvalidArgumentException(std::string("AddLayer: layer '") + layerName + "' of type " + op.m_Name +
                                           " has 1 to " + std::to_string(most) + " outputs, not " +
                                           std::to_string(numOutputs));
        }
        nOut = numOutputs < 0 ? 1u : static_cast<unsigned int>(numOutputs);
    } else {
        if (numOutputs < 1) {
            throw InvalidArgumentException(std::string("AddLayer: layer '") + layerName + "' of type " + op.m_Name +
                                           " needs its number of outputs (>= 1)");
        }
        nOut = static_cast<unsigned int>(numOutputs);
    }
    LayerDescriptor d = descriptor;
    if (type == LayerType::Constant) {
        // Shared storage given: keep it (no copy). Otherwise the network takes a copy.
        const auto& cd = std::get<ConstantDescriptor>(descriptor);
        if (!cd.m_Storage) d = MakeOwnedConstant(cd.m_Tensor);
    }
    Layer* layer = m_Graph.AddLayer(type, std::move(d), layerName, nIn, nOut);
    if (type == LayerType::Constant) {
        layer->Output(0).SetTensorInfo(layer->Desc<ConstantDescriptor>().m_Tensor.GetInfo());
    }
    return layer;
}

IConnectableLayer* NetworkImpl::AddInputLayer(LayerBindingId id, const char* name) {
    for (const auto& l : m_Graph.Layers()) {
        if (l->GetType() == LayerType::Input && l->Desc<BindingDescriptor>().m_BindingId == id) {
            throw InvalidArgumentException("AddInputLayer: binding id " + std::to_string(id) +
                                           " is already used by input layer '" + l->Name() + "'");
        }
    }
    const std::string n = name && *name ? name : m_Graph.UniqueName("input" + std::to_string(id));
    return AddLayer(LayerType::Input, BindingDescriptor{id}, n.c_str(), -1, -1);
}

IConnectableLayer* NetworkImpl::AddOutputLayer(LayerBindingId id, const char* name) {
    for (const auto& l : m_Graph.Layers()) {
        if (l->GetType() == LayerType::Output && l->Desc<BindingDescriptor>().m_BindingId == id) {
            throw InvalidArgumentException("AddOutputLayer: binding id " + std::to_string(id) +
                                           " is already used by output layer '" + l->Name() + "'");
        }
    }
    const std::string n = name && *name ? name : m_Graph.UniqueName("output" + std::to_string(id));
    return AddLayer(LayerType::Output, BindingDescriptor{id}, n.c_str(), -1, -1);
}

IConnectableLayer* NetworkImpl::AddConstantLayer(const ConstTensor& input, const char* name) {
    ConstantDescriptor d;
    d.m_Tensor = input;
    return AddLayer(LayerType::Constant, d, name, -1, -1);
}

IConnectableLayer* NetworkImpl::AddAdditionLayer(const char* name) {
    return AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, name, -1, -1);
}

IConnectableLayer* NetworkImpl::AddMultiplicationLayer(const char* name) {
    return AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul}, name, -1, -1);
}

IConnectableLayer* NetworkImpl::AddElementwiseBinaryLayer(const ElementwiseBinaryDescriptor& d, const char* name) {
    return AddLayer(LayerType::ElementwiseBinary, d, name, -1, -1);
}

IConnectableLayer* NetworkImpl::AddElementwiseUnaryLayer(const ElementwiseUnaryDescriptor& d, const char* name) {
    return AddLayer(LayerType::ElementwiseUnary, d, name, -1, -1);
}

IConnectableLayer* NetworkImpl::AddConvolutionLayer(const ConvolutionDescriptor& d, bool biasEnabled, const char* name) {
    return AddLayer(LayerType::Convolution, d, name, biasEnabled ? 3 : 2, -1);
}

IConnectableLayer* NetworkImpl::AddSoftmaxLayer(const SoftmaxDescriptor& d, const char* name) {
    return AddLayer(LayerType::Softmax, d, name, -1, -1);
}

IConnectableLayer* NetworkImpl::AddReshapeLayer(const ReshapeDescriptor& d, const char* name) {
    return AddLayer(LayerType::Reshape, d, name, -1, -1);
}

}  // namespace trellis::core

namespace trellis {

INetwork* INetwork::CreateRaw(const NetworkOptions&) { return new core::NetworkImpl(); }
INetworkPtr INetwork::Create(const NetworkOptions& options) { return INetworkPtr(CreateRaw(options), &INetwork::Destroy); }
void INetwork::Destroy(INetwork* network) { delete network; }

}  // namespace trellis
