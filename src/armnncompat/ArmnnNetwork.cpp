// The Arm NN compatibility layer's INetwork: the recorded Arm NN layers and their connections
// (this file), and their translation to a Trellis network (ArmnnLowering.cpp).
#include "armnncompat/ArmnnNetwork.hpp"

#include <armnn/Utils.hpp>

#include <atomic>
#include <cstring>
#include <iostream>
#include <sstream>

namespace armnn {
namespace detail {

namespace {
std::atomic<LayerGuid> g_NextGuid{1};
}  // namespace

LayerGuid NextGuid() { return g_NextGuid++; }

std::string DescribeLayer(const IConnectableLayer& layer) {
    std::string type = GetLayerTypeAsCString(layer.GetType());
    const char* name = layer.GetName();
    if (name && *name) return "layer '" + std::string(name) + "' (" + type + ")";
    return type + " layer #" + std::to_string(layer.GetGuid());
}

// ---- slots ----

const IOutputSlot* InputSlotImpl::GetConnection() const { return m_Connection; }
IOutputSlot* InputSlotImpl::GetConnection() { return m_Connection; }
const IConnectableLayer& InputSlotImpl::GetOwningIConnectableLayer() const { return *m_Owner; }
IConnectableLayer& InputSlotImpl::GetOwningIConnectableLayer() { return *m_Owner; }

const IInputSlot* OutputSlotImpl::GetConnection(unsigned int index) const {
    return index < m_Connections.size() ? m_Connections[index] : nullptr;
}
IInputSlot* OutputSlotImpl::GetConnection(unsigned int index) {
    return index < m_Connections.size() ? m_Connections[index] : nullptr;
}
void OutputSlotImpl::SetTensorInfo(const TensorInfo& info) { m_Info = info; }
const TensorInfo& OutputSlotImpl::GetTensorInfo() const {
    if (!m_Info)
        throw InvalidArgumentException(DescribeLayer(*m_Owner) + ": output slot " + std::to_string(m_Index) +
                                       " has no TensorInfo (call SetTensorInfo first)");
    return *m_Info;
}
int OutputSlotImpl::Connect(IInputSlot& destination) {
    auto* dst = dynamic_cast<InputSlotImpl*>(&destination);
    if (!dst)
        throw InvalidArgumentException(DescribeLayer(*m_Owner) + ": Connect() needs an input slot of an armnn::INetwork layer");
    if (dst->m_Owner->m_Network != m_Owner->m_Network)
        throw InvalidArgumentException(DescribeLayer(*m_Owner) + ": cannot connect to " +
                                       DescribeLayer(*dst->m_Owner) + " of another network");
    if (dst->m_Connection)
        throw InvalidArgumentException(DescribeLayer(*m_Owner) + ": cannot connect to input slot " +
                                       std::to_string(dst->m_Index) + " of " + DescribeLayer(*dst->m_Owner) +
                                       ": it is already connected to " +
                                       DescribeLayer(dst->m_Connection->GetOwningIConnectableLayer()));
    dst->m_Connection = this;
    m_Connections.push_back(dst);
    return 0;
}
void OutputSlotImpl::Disconnect(IInputSlot& slot) {
    for (auto it = m_Connections.begin(); it != m_Connections.end(); ++it) {
        if (*it == &slot) {
            (*it)->m_Connection = nullptr;
            m_Connections.erase(it);
            return;
        }
    }
    throw InvalidArgumentException(DescribeLayer(*m_Owner) + ": Disconnect(): output slot " + std::to_string(m_Index) +
                                   " is not connected to that input slot");
}
LayerGuid OutputSlotImpl::GetOwningLayerGuid() const { return m_Owner->m_Guid; }
const IConnectableLayer& OutputSlotImpl::GetOwningIConnectableLayer() const { return *m_Owner; }
IConnectableLayer& OutputSlotImpl::GetOwningIConnectableLayer() { return *m_Owner; }

// ---- layers ----

LayerImpl::LayerImpl(NetworkImpl* network, LayerType type, const char* name, unsigned int numInputs,
                     unsigned int numOutputs, std::unique_ptr<BaseDescriptor> descriptor)
    : m_Network(network), m_Type(type), m_Name(name ? name : ""), m_Guid(NextGuid()),
      m_Descriptor(descriptor ? std::move(descriptor) : std::make_unique<NullDescriptor>()) {
    for (unsigned int i = 0; i < numInputs; ++i) m_Inputs.push_back(std::make_unique<InputSlotImpl>(this, i));
    for (unsigned int i = 0; i < numOutputs; ++i) m_Outputs.push_back(std::make_unique<OutputSlotImpl>(this, i));
}

const IInputSlot& LayerImpl::GetInputSlot(unsigned int index) const { return *m_Inputs.at(CheckInput(index)); }
IInputSlot& LayerImpl::GetInputSlot(unsigned int index) { return *m_Inputs.at(CheckInput(index)); }
const IOutputSlot& LayerImpl::GetOutputSlot(unsigned int index) const { return *m_Outputs.at(CheckOutput(index)); }
IOutputSlot& LayerImpl::GetOutputSlot(unsigned int index) { return *m_Outputs.at(CheckOutput(index)); }

unsigned int LayerImpl::CheckInput(unsigned int index) const {
    if (index >= m_Inputs.size())
        throw InvalidArgumentException(DescribeLayer(*this) + ": no input slot " + std::to_string(index) + " (it has " +
                                       std::to_string(m_Inputs.size()) + ")");
    return index;
}
unsigned int LayerImpl::CheckOutput(unsigned int index) const {
    if (index >= m_Outputs.size())
        throw InvalidArgumentException(DescribeLayer(*this) + ": no output slot " + std::to_string(index) + " (it has " +
                                       std::to_string(m_Outputs.size()) + ")");
    return index;
}

OwnedTensor OwnedTensor::Copy(const ConstTensor& tensor, const std::string& what) {
    if (!tensor.GetMemoryArea() && tensor.GetNumElements() != 0)
        throw InvalidArgumentException(what + ": the tensor's memory is null");
    OwnedTensor t;
    t.m_Info = tensor.GetInfo();
    t.m_Info.SetConstant(true);
    t.m_Data = std::make_shared<std::vector<unsigned char>>(tensor.GetNumBytes());
    if (!t.m_Data->empty()) std::memcpy(t.m_Data->data(), tensor.GetMemoryArea(), t.m_Data->size());
    return t;
}

LayerImpl* NetworkImpl::Add(LayerType type, const char* name, unsigned int numInputs, unsigned int numOutputs,
                            std::unique_ptr<BaseDescriptor> descriptor) {
    if (m_Parsed)
        throw InvalidArgumentException(std::string("INetwork::Add") + GetLayerTypeAsCString(type) +
                                       "Layer: this network was made by the ONNX parser; the compatibility layer does "
                                       "not add layers to a parsed network");
    m_Layers.push_back(std::make_unique<LayerImpl>(this, type, name, numInputs, numOutputs, std::move(descriptor)));
    return m_Layers.back().get();
}

}  // namespace detail

using detail::LayerImpl;
using detail::OwnedTensor;

// ---- INetwork ----

INetwork::INetwork(const NetworkOptions& networkOptions) : pNetworkImpl(std::make_unique<detail::NetworkImpl>()) {
    pNetworkImpl->m_Options = networkOptions;
}
INetwork::~INetwork() = default;
INetwork* INetwork::CreateRaw(const NetworkOptions& networkOptions) { return new INetwork(networkOptions); }
INetworkPtr INetwork::Create(const NetworkOptions& networkOptions) {
    return INetworkPtr(CreateRaw(networkOptions), &INetwork::Destroy);
}
void INetwork::Destroy(INetwork* network) { delete network; }

namespace {
template <typename D>
std::unique_ptr<BaseDescriptor> Desc(const D& d) {
    return std::make_unique<D>(d);
}
}  // namespace

IConnectableLayer* INetwork::AddInputLayer(LayerBindingId id, const char* name) {
    LayerImpl* l = pNetworkImpl->Add(LayerType::Input, name, 0, 1);
    l->m_BindingId = id;
    return l;
}
IConnectableLayer* INetwork::AddOutputLayer(LayerBindingId id, const char* name) {
    LayerImpl* l = pNetworkImpl->Add(LayerType::Output, name, 1, 0);
    l->m_BindingId = id;
    return l;
}
IConnectableLayer* INetwork::AddConstantLayer(const ConstTensor& input, const char* name) {
    LayerImpl* l = pNetworkImpl->Add(LayerType::Constant, name, 0, 1);
    l->m_Constants.push_back(OwnedTensor::Copy(input, detail::DescribeLayer(*l)));
    l->m_Outputs[0]->m_Info = l->m_Constants[0].m_Info;
    return l;
}
IConnectableLayer* INetwork::AddFullyConnectedLayer(const FullyConnectedDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::FullyConnected, name, d.GetNumInputs(), 1, Desc(d));
}
IConnectableLayer* INetwork::AddConvolution2dLayer(const Convolution2dDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Convolution2d, name, d.GetNumInputs(), 1, Desc(d));
}
IConnectableLayer* INetwork::AddDepthwiseConvolution2dLayer(const DepthwiseConvolution2dDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::DepthwiseConvolution2d, name, d.GetNumInputs(), 1, Desc(d));
}
namespace {
// Arm NN 20.x's weights-as-tensors forms: the weights (slot 1) and biases (slot 2) become Constant
// layers of the network, named after the layer as Arm NN 22.x names them.
IConnectableLayer* ConnectWeightsAndBiases(INetwork& network, IConnectableLayer* layer, bool biasEnabled,
                                           const ConstTensor& weights, const Optional<ConstTensor>& biases,
                                           const char* name) {
    if (biasEnabled && !biases.has_value())
        throw InvalidArgumentException(detail::DescribeLayer(*layer) +
                                       ": the descriptor's m_BiasEnabled is true but no biases were given");
    const std::string base = name ? name : "";
    network.AddConstantLayer(weights, (base + "/weights").c_str())->GetOutputSlot(0).Connect(layer->GetInputSlot(1));
    if (biasEnabled)
        network.AddConstantLayer(biases.value(), (base + "/biases").c_str())
            ->GetOutputSlot(0)
            .Connect(layer->GetInputSlot(2));
    return layer;
}
}  // namespace

IConnectableLayer* INetwork::AddFullyConnectedLayer(const FullyConnectedDescriptor& d, const ConstTensor& weights,
                                                    const Optional<ConstTensor>& biases, const char* name) {
    FullyConnectedDescriptor constant = d;
    constant.m_ConstantWeights = true;
    return ConnectWeightsAndBiases(*this, AddFullyConnectedLayer(constant, name), d.m_BiasEnabled, weights, biases,
                                   name);
}
IConnectableLayer* INetwork::AddConvolution2dLayer(const Convolution2dDescriptor& d, const ConstTensor& weights,
                                                   const Optional<ConstTensor>& biases, const char* name) {
    return ConnectWeightsAndBiases(*this, AddConvolution2dLayer(d, name), d.m_BiasEnabled, weights, biases, name);
}
IConnectableLayer* INetwork::AddDepthwiseConvolution2dLayer(const DepthwiseConvolution2dDescriptor& d,
                                                            const ConstTensor& weights,
                                                            const Optional<ConstTensor>& biases, const char* name) {
    return ConnectWeightsAndBiases(*this, AddDepthwiseConvolution2dLayer(d, name), d.m_BiasEnabled, weights, biases,
                                   name);
}
IConnectableLayer* INetwork::AddPooling2dLayer(const Pooling2dDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Pooling2d, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddActivationLayer(const ActivationDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Activation, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddAdditionLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Addition, name, 2, 1);
}
IConnectableLayer* INetwork::AddSubtractionLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Subtraction, name, 2, 1);
}
IConnectableLayer* INetwork::AddMultiplicationLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Multiplication, name, 2, 1);
}
IConnectableLayer* INetwork::AddDivisionLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Division, name, 2, 1);
}
IConnectableLayer* INetwork::AddMaximumLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Maximum, name, 2, 1);
}
IConnectableLayer* INetwork::AddMinimumLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Minimum, name, 2, 1);
}
IConnectableLayer* INetwork::AddElementwiseBinaryLayer(const ElementwiseBinaryDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::ElementwiseBinary, name, 2, 1, Desc(d));
}
IConnectableLayer* INetwork::AddElementwiseUnaryLayer(const ElementwiseUnaryDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::ElementwiseUnary, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddFloorLayer(const char* name) {
    return pNetworkImpl->Add(LayerType::Floor, name, 1, 1);
}
IConnectableLayer* INetwork::AddSoftmaxLayer(const SoftmaxDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Softmax, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddReshapeLayer(const ReshapeDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Reshape, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddConcatLayer(const ConcatDescriptor& d, const char* name) {
    if (d.GetNumViews() == 0)
        throw InvalidArgumentException(std::string("AddConcatLayer '") + (name ? name : "") +
                                       "': the ConcatDescriptor has no views (OriginsDescriptor(numViews, numDimensions))");
    return pNetworkImpl->Add(LayerType::Concat, name, d.GetNumViews(), 1, Desc(d));
}
IConnectableLayer* INetwork::AddTransposeLayer(const TransposeDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Transpose, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddPermuteLayer(const PermuteDescriptor& d, const char* name) {
    return pNetworkImpl->Add(LayerType::Permute, name, 1, 1, Desc(d));
}
IConnectableLayer* INetwork::AddBatchNormalizationLayer(const BatchNormalizationDescriptor& d, const ConstTensor& mean,
                                                        const ConstTensor& variance, const ConstTensor& beta,
                                                        const ConstTensor& gamma, const char* name) {
    LayerImpl* l = pNetworkImpl->Add(LayerType::BatchNormalization, name, 1, 1, Desc(d));
    const std::string what = detail::DescribeLayer(*l);
    l->m_Constants.push_back(OwnedTensor::Copy(mean, what + ", mean"));
    l->m_Constants.push_back(OwnedTensor::Copy(variance, what + ", variance"));
    l->m_Constants.push_back(OwnedTensor::Copy(beta, what + ", beta"));
    l->m_Constants.push_back(OwnedTensor::Copy(gamma, what + ", gamma"));
    return l;
}

size_t INetwork::GetNumInputs() const {
    if (pNetworkImpl->m_Parsed) return pNetworkImpl->m_ParsedInputs;
    size_t n = 0;
    for (const auto& l : pNetworkImpl->m_Layers) n += l->m_Type == LayerType::Input;
    return n;
}
size_t INetwork::GetNumOutputs() const {
    if (pNetworkImpl->m_Parsed) return pNetworkImpl->m_ParsedOutputs;
    size_t n = 0;
    for (const auto& l : pNetworkImpl->m_Layers) n += l->m_Type == LayerType::Output;
    return n;
}
const NetworkOptions& INetwork::GetNetworkOptions() const { return pNetworkImpl->m_Options; }

Status INetwork::PrintGraph() {
    if (pNetworkImpl->m_Parsed) {
        std::cout << pNetworkImpl->m_Parsed->ToString();
        return Status::Success;
    }
    for (const auto& l : pNetworkImpl->m_Layers) {
        std::cout << detail::DescribeLayer(*l) << " #" << l->m_Guid << "\n";
        for (const auto& in : l->m_Inputs) {
            std::cout << "  input " << in->m_Index << " <- ";
            if (in->m_Connection)
                std::cout << detail::DescribeLayer(*in->m_Connection->m_Owner) << " output " << in->m_Connection->m_Index;
            else
                std::cout << "(not connected)";
            std::cout << "\n";
        }
        for (const auto& out : l->m_Outputs)
            std::cout << "  output " << out->m_Index << ": "
                      << (out->m_Info ? out->m_Info->ToString() : std::string("(no TensorInfo)")) << "\n";
    }
    return Status::Success;
}

}  // namespace armnn
