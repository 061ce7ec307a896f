// ExampleAcc: a minimal Trellis dynamic backend, built against the installed Trellis package only.
//
// Vendor "Example", backend id "ExampleAcc". It runs one layer type, ElementwiseUnary Sigmoid on
// Float32 tensors, and declines everything else with a reason, so the optimizer places those
// layers on the next backend in the application's preference list.
//
// The whole backend is the three methods a minimal backend writes (GetId, GetLayerSupport,
// CreateWorkloadFactory), one layer-support class, one workload-factory class and one workload.
// Every other IBackendInternal method keeps its default: no memory manager, no context, no
// profiling, OptimizeSubgraph leaves sub-graphs untouched, working memory is ordinary host memory.
#include <trellis/Exceptions.hpp>
#include <trellis/backends/DynamicBackend.hpp>
#include <trellis/backends/IBackendInternal.hpp>

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>

namespace example {

using namespace trellis;

// The id GetBackendId() exports and GetId() returns; the loader checks that they agree.
constexpr const char* kExampleAccId = "ExampleAcc";

const BackendId& ExampleAccId() {
    static const BackendId s_Id{kExampleAccId};
    return s_Id;
}

bool Refuse(std::string* reason, const std::string& text) {
    if (reason) *reason = text;
    return false;
}

// One check used twice: by the optimizer (through ILayerSupport) and again by the workload
// factory, which must not trust that it is only ever asked for supported layers.
bool IsSigmoidSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (layer.m_Type != LayerType::ElementwiseUnary) {
        return Refuse(reason, std::string(GetLayerTypeName(layer.m_Type)) +
                                  ": ExampleAcc runs ElementwiseUnary Sigmoid only");
    }
    const UnaryOperation op = layer.Get<ElementwiseUnaryDescriptor>().m_Operation;
    if (op != UnaryOperation::Sigmoid) {
        return Refuse(reason, std::string("ElementwiseUnary ") + GetUnaryOperationName(op) +
                                  ": ExampleAcc runs Sigmoid only");
    }
    if (info.m_InputTensorInfos.size() != 1 || info.m_OutputTensorInfos.size() != 1) {
        return Refuse(reason, "ElementwiseUnary Sigmoid: ExampleAcc needs exactly 1 input and 1 output");
    }
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    if (in.GetDataType() != DataType::Float32 || out.GetDataType() != DataType::Float32) {
        return Refuse(reason, std::string("ElementwiseUnary Sigmoid: data type ") + GetDataTypeName(in.GetDataType()) +
                                  " -> " + GetDataTypeName(out.GetDataType()) +
                                  " is not supported (ExampleAcc: Float32 only)");
    }
    if (in.GetShape() != out.GetShape()) {
        return Refuse(reason, "ElementwiseUnary Sigmoid: output shape " + out.GetShape().ToString() +
                                  " differs from input shape " + in.GetShape().ToString());
    }
    return true;
}

// The workload: created once at LoadNetwork(), then executed by every EnqueueWorkload() call,
// possibly from several threads at once. Execute() is const and keeps no per-call state.
class ExampleSigmoidWorkload final : public IWorkload {
public:
    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const float*>(io.m_Inputs[0]->Map());
        auto* y = static_cast<float*>(io.m_Outputs[0]->Map());
        const std::size_t n = io.m_Outputs[0]->GetTensorInfo().GetNumElements();
        for (std::size_t i = 0; i < n; ++i) {
            // exp() of a non-positive number only, so it never overflows.
            if (x[i] >= 0.0f) {
                y[i] = 1.0f / (1.0f + std::exp(-x[i]));
            } else {
                const float e = std::exp(x[i]);
                y[i] = e / (1.0f + e);
            }
        }
        io.m_Inputs[0]->Unmap();
        io.m_Outputs[0]->Unmap();
    }
};

class ExampleAccLayerSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                          std::string* reasonIfUnsupported) const override {
        return IsSigmoidSupported(layer, info, reasonIfUnsupported);
    }
};

// Created per loaded network; it may outlive the backend object, so it holds nothing of it.
class ExampleAccWorkloadFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override { return ExampleAccId(); }
    IWorkloadPtr CreateWorkload(const QueueDescriptor& layer, const WorkloadInfo& info) const override {
        std::string reason;
        if (!IsSigmoidSupported(layer, info, &reason)) {
            throw LayerValidationException("ExampleAcc cannot create a workload for layer '" + layer.m_LayerName +
                                           "': " + reason);
        }
        return std::make_unique<ExampleSigmoidWorkload>();
    }
};

// The backend object is short-lived and stateless: the engine creates one whenever it needs one.
class ExampleAccBackend final : public IBackendInternal {
public:
    const BackendId& GetId() const override { return ExampleAccId(); }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<ExampleAccLayerSupport>(); }
    IWorkloadFactoryPtr CreateWorkloadFactory(
        const IMemoryManagerSharedPtr& /*memoryManager*/ = nullptr) const override {
        return std::make_unique<ExampleAccWorkloadFactory>();
    }
};

}  // namespace example

// extern "C" GetBackendId(), GetVersion() and BackendFactory(): what the runtime looks up when it
// loads Example_ExampleAcc_backend.so. GetVersion() reports the Backend API of the headers used.
TRELLIS_DYNAMIC_BACKEND(example::ExampleAccBackend, example::kExampleAccId)
