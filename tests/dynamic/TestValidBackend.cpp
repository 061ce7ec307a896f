// Test dynamic backend "TestValid": the smallest useful dynamic backend, written against the
// public SDK headers only. It runs ElementwiseUnary Relu on Float32 (and nothing else) with a real
// workload, advertises two capabilities, and exports the extern "C" trio through
// TRELLIS_DYNAMIC_BACKEND. Built as a shared object by tests/dynamic/CMakeLists.txt.
#include <trellis/Exceptions.hpp>
#include <trellis/backends/DynamicBackend.hpp>
#include <trellis/backends/IBackendInternal.hpp>

#include <string>

namespace {

// TEST_API_1_0: the same backend as built against Backend API 1.0 ("TestValid10"): it reports
// version 1.0, so the engine must create its factory with CreateWorkloadFactory() and never call
// the 1.1 additions (which here fail loudly if called).
//
// TEST_UNAVAILABLE: the same backend as one whose device is missing ("TestUnavailable", API 1.2):
// IsAvailable() says no with kUnavailableReason, so the optimizer must place its layers elsewhere.
#if defined(TEST_API_1_0)
#define TEST_VALID_ID "TestValid10"
#elif defined(TEST_UNAVAILABLE)
#define TEST_VALID_ID "TestUnavailable"
#else
#define TEST_VALID_ID "TestValid"
#endif

const trellis::BackendId& TestValidId() {
    static const trellis::BackendId s_Id{TEST_VALID_ID};
    return s_Id;
}

bool IsReluFloat32(const trellis::QueueDescriptor& layer, const trellis::WorkloadInfo& info, std::string* reason) {
    using namespace trellis;
    auto no = [&](const std::string& why) {
        if (reason) *reason = why;
        return false;
    };
    if (layer.m_Type != LayerType::ElementwiseUnary) {
        return no(std::string(GetLayerTypeName(layer.m_Type)) + ": TestValid runs only ElementwiseUnary Relu");
    }
    const UnaryOperation op = layer.Get<ElementwiseUnaryDescriptor>().m_Operation;
    if (op != UnaryOperation::Relu) {
        return no(std::string("ElementwiseUnary: operation ") + GetUnaryOperationName(op) +
                  " is not supported by TestValid (only Relu)");
    }
    if (info.m_InputTensorInfos.size() != 1 || info.m_OutputTensorInfos.size() != 1) {
        return no("ElementwiseUnary Relu: TestValid needs exactly one input and one output");
    }
    for (const TensorInfo* t : {&info.m_InputTensorInfos[0], &info.m_OutputTensorInfos[0]}) {
        if (t->GetDataType() != DataType::Float32) {
            return no(std::string("ElementwiseUnary Relu: data type ") + GetDataTypeName(t->GetDataType()) +
                      " is not supported by TestValid (only Float32)");
        }
    }
    return true;
}

class TestValidLayerSupport final : public trellis::ILayerSupport {
public:
    bool IsLayerSupported(const trellis::QueueDescriptor& layer, const trellis::WorkloadInfo& info,
                          std::string* reasonIfUnsupported) const override {
        return IsReluFloat32(layer, info, reasonIfUnsupported);
    }
};

class TestValidReluWorkload final : public trellis::IWorkload {
public:
    explicit TestValidReluWorkload(std::size_t count) : m_Count(count) {}
    void Execute(const trellis::WorkloadIo& io) const override {
        const float* in = static_cast<const float*>(io.m_Inputs[0]->Map());
        float* out = static_cast<float*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_Count; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
        io.m_Inputs[0]->Unmap();
        io.m_Outputs[0]->Unmap();
    }
#ifdef TEST_API_1_0
    bool ReadsConstantInput(unsigned int) const override {
        throw trellis::RuntimeException("TestValid10: ReadsConstantInput (API 1.1) called on a 1.0 backend");
    }
#endif
private:
    std::size_t m_Count;
};

class TestValidWorkloadFactory final : public trellis::IWorkloadFactory {
public:
    const trellis::BackendId& GetBackendId() const override { return TestValidId(); }
    trellis::IWorkloadPtr CreateWorkload(const trellis::QueueDescriptor& layer,
                                         const trellis::WorkloadInfo& info) const override {
        std::string reason;
        if (!IsReluFloat32(layer, info, &reason)) {
            throw trellis::LayerValidationException("TestValid cannot create a workload for layer '" +
                                                    layer.m_LayerName + "': " + reason);
        }
        return std::make_unique<TestValidReluWorkload>(info.m_InputTensorInfos[0].GetNumElements());
    }
};

class TestValidBackend final : public trellis::IBackendInternal {
public:
    const trellis::BackendId& GetId() const override { return TestValidId(); }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<TestValidWorkloadFactory>();
    }
#ifdef TEST_API_1_0
    IWorkloadFactoryPtr CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr&, const BackendOptions&) const override {
        throw trellis::RuntimeException("TestValid10: CreateWorkloadFactoryWithOptions (API 1.1) called on a 1.0 backend");
    }
    std::vector<std::string> GetOptionWarnings(const BackendOptions&) const override {
        throw trellis::RuntimeException("TestValid10: GetOptionWarnings (API 1.2) called on a 1.0 backend");
    }
    bool IsAvailable(std::string*) const override {
        throw trellis::RuntimeException("TestValid10: IsAvailable (API 1.3) called on a 1.0 backend");
    }
    bool ImportsConstantsAtLoad() const override {
        throw trellis::RuntimeException("TestValid10: ImportsConstantsAtLoad (API 1.3) called on a 1.0 backend");
    }
#endif
#ifdef TEST_UNAVAILABLE
    bool IsAvailable(std::string* reason) const override {
        if (reason) *reason = "no TestUnavailable device found (test backend)";
        return false;
    }
#endif
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<TestValidLayerSupport>(); }
    trellis::BackendCapabilities GetCapabilities() const override {
        return {{"TestValidRelu", true}, {"NonConstWeights", false}};
    }
};

}  // namespace

#ifdef TEST_API_1_0
extern "C" __attribute__((visibility("default"))) const char* GetBackendId() { return TEST_VALID_ID; }
extern "C" __attribute__((visibility("default"))) void GetVersion(uint32_t* outMajor, uint32_t* outMinor) {
    if (outMajor) *outMajor = 1;
    if (outMinor) *outMinor = 0;
}
extern "C" __attribute__((visibility("default"))) void* BackendFactory() {
    try {
        return static_cast<trellis::IBackendInternal*>(new TestValidBackend());
    } catch (...) {
        return nullptr;
    }
}
#else
TRELLIS_DYNAMIC_BACKEND(TestValidBackend, TEST_VALID_ID)
#endif
