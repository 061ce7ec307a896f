#include "support/BackendComparisonNetwork.hpp"

#include "support/TensorValues.hpp"

#include <trellis/TensorIO.hpp>

#include <cstddef>
#include <cstring>

namespace trellis::test {

IOutputSlot* BackendComparisonNetwork::Input(const TensorShape& shape, DataType type) {
    auto* l = m_Net->AddInputLayer(static_cast<LayerBindingId>(m_Inputs.size()));
    l->GetOutputSlot(0).SetTensorInfo(TensorInfo(shape, type));
    m_Inputs.push_back(TensorInfo(shape, type));
    return &l->GetOutputSlot(0);
}

IOutputSlot* BackendComparisonNetwork::Const(const TensorShape& shape, float scale, float offset) {
    TensorInfo info(shape, DataType::Float32, 0.0f, 0, true);
    std::vector<float> v(info.GetNumElements());
    for (float& x : v) x = offset + scale * m_Dist(m_Rng);
    return &m_Net->AddConstantLayer(ConstTensor(info, v.data()))->GetOutputSlot(0);
}

IOutputSlot* BackendComparisonNetwork::Ints(const TensorShape& shape, const std::vector<int64_t>& values) {
    TensorInfo info(shape, DataType::Signed64, 0.0f, 0, true);
    return &m_Net->AddConstantLayer(ConstTensor(info, values.data()))->GetOutputSlot(0);
}

IOutputSlot* BackendComparisonNetwork::Index(int64_t value) {
    TensorInfo info(TensorShape(), DataType::Signed64, 0.0f, 0, true);
    return &m_Net->AddConstantLayer(ConstTensor(info, &value))->GetOutputSlot(0);
}

IOutputSlot* BackendComparisonNetwork::ConstData(const TensorInfo& info, const void* data) {
    return &m_Net->AddConstantLayer(ConstTensor(info, data))->GetOutputSlot(0);
}

IOutputSlot* BackendComparisonNetwork::Scalar(float value) {
    TensorInfo info(TensorShape(), DataType::Float32, 0.0f, 0, true);
    return &m_Net->AddConstantLayer(ConstTensor(info, &value))->GetOutputSlot(0);
}

IConnectableLayer* BackendComparisonNetwork::Layer(LayerType type, const LayerDescriptor& d,
                                                   const std::vector<IOutputSlot*>& inputs, int numOutputs) {
    const std::string name = std::string(GetLayerTypeName(type)) + "_" + std::to_string(m_Count++);
    auto* l = m_Net->AddLayer(type, d, name.c_str(), static_cast<int>(inputs.size()), numOutputs);
    for (std::size_t i = 0; i < inputs.size(); ++i) inputs[i]->Connect(l->GetInputSlot(static_cast<unsigned int>(i)));
    return l;
}

IOutputSlot* BackendComparisonNetwork::Op(LayerType type, const LayerDescriptor& d,
                                          const std::vector<IOutputSlot*>& inputs) {
    return &Layer(type, d, inputs)->GetOutputSlot(0);
}

IOutputSlot* BackendComparisonNetwork::Unary(UnaryOperation op, IOutputSlot* x, float a, float b) {
    return Op(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{op, a, b}, {x});
}

IOutputSlot* BackendComparisonNetwork::Binary(BinaryOperation op, IOutputSlot* a, IOutputSlot* b) {
    return Op(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {a, b});
}

void BackendComparisonNetwork::Output(IOutputSlot* s) {
    auto* l = m_Net->AddOutputLayer(m_NumOutputs++);
    s->Connect(l->GetInputSlot(0));
}

BackendComparisonNetwork::Loaded BackendComparisonNetwork::Load(const std::vector<BackendId>& backends,
                                                                const IRuntime::CreationOptions& options,
                                                                const OptimizerOptions& optimizerOptions) {
    if (m_InputData.size() != m_Inputs.size()) MakeInputs();
    Loaded l;
    l.m_Runtime = IRuntime::Create(options);
    IOptimizedNetworkPtr opt = Optimize(*m_Net, backends, l.m_Runtime->GetDeviceSpec(), optimizerOptions);
    l.m_Counts = opt->GetBackendLayerCounts();
    l.m_Placements = opt->GetLayerPlacements();
    l.m_Optimized = opt->ToString();
    if (m_ReportOptimizationLog) {
        for (const std::string& line : opt->GetOptimizationLog()) l.m_Optimized += "\n" + line;
    }
    for (const LayerPlacement& p : l.m_Placements) {
        for (const auto& [backend, reason] : p.m_Declined) {
            l.m_Optimized += "\n" + p.m_LayerName + " declined by " + backend.Get() + ": " + reason;
        }
    }
    std::string error;
    if (l.m_Runtime->LoadNetwork(l.m_Id, std::move(opt), error) != Status::Success) throw RuntimeException(error);
    return l;
}

std::vector<std::vector<float>> BackendComparisonNetwork::Execute(const Loaded& l) const {
    InputTensors in;
    for (std::size_t i = 0; i < m_Inputs.size(); ++i) {
        TensorInfo info = m_Inputs[i];
        info.SetConstant(true);
        in.emplace_back(static_cast<LayerBindingId>(i), ConstTensor(info, m_InputData[i].data()));
    }
    std::vector<OwnedTensor> raw(static_cast<std::size_t>(m_NumOutputs));
    OutputTensors out;
    for (int o = 0; o < m_NumOutputs; ++o) {
        OwnedTensor& t = raw[static_cast<std::size_t>(o)];
        t.m_Info = l.m_Runtime->GetOutputTensorInfo(l.m_Id, o);
        t.m_Data.assign(t.m_Info.GetNumBytes(), 0xAB);
        if (t.m_Info.GetDataType() == DataType::Float32) {
            for (std::size_t i = 0; i < t.m_Info.GetNumElements(); ++i) {
                std::memcpy(t.m_Data.data() + i * sizeof(float), &m_FloatOutputPoison, sizeof(float));
            }
        }
        out.emplace_back(o, t.AsTensor());
    }
    if (l.m_Runtime->EnqueueWorkload(l.m_Id, in, out) != Status::Success) throw RuntimeException("EnqueueWorkload failed");
    std::vector<std::vector<float>> outputs(raw.size());
    for (std::size_t o = 0; o < raw.size(); ++o) {
        for (std::size_t i = 0; i < raw[o].m_Info.GetNumElements(); ++i) {
            outputs[o].push_back(static_cast<float>(ToDouble(raw[o], i)));
        }
    }
    return outputs;
}

void BackendComparisonNetwork::MakeInputs() {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    m_InputData.clear();
    for (const TensorInfo& info : m_Inputs) {
        std::vector<unsigned char> bytes(info.GetNumBytes());
        for (std::size_t i = 0; i < info.GetNumElements(); ++i) {
            switch (info.GetDataType()) {
                case DataType::Float32: reinterpret_cast<float*>(bytes.data())[i] = dist(rng); break;
                case DataType::Boolean: bytes[i] = dist(rng) > 0 ? 1 : 0; break;
                case DataType::Signed64:
                    reinterpret_cast<int64_t*>(bytes.data())[i] = static_cast<int64_t>(rng() % m_IndexRange);
                    break;
                case DataType::Signed32:
                    reinterpret_cast<int32_t*>(bytes.data())[i] = static_cast<int32_t>(rng() % m_IndexRange);
                    break;
                default: break;
            }
        }
        m_InputData.push_back(std::move(bytes));
    }
}

BackendComparisonNetwork::Result BackendComparisonNetwork::Run(const std::vector<BackendId>& backends,
                                                               const IRuntime::CreationOptions& options,
                                                               const OptimizerOptions& optimizerOptions) {
    Loaded l = Load(backends, options, optimizerOptions);
    return Result{Execute(l), l.m_Counts, l.m_Optimized};
}

}  // namespace trellis::test
