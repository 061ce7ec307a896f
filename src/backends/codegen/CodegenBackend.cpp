// Codegen: the backend object, its layer support, the PreCompiled artifacts and their workloads.
#include "CodegenBackend.hpp"

#include "CodegenArtifactLibrary.hpp"

#include <trellis/Codegen.hpp>
#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <mutex>
#include <set>

namespace trellis::codegenbackend {

namespace {

/// What a Codegen PreCompiled layer carries: the generated artifact of its sub-graph.
class ArtifactObject {
public:
    ArtifactObject(Artifact artifact, std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs)
        : m_Artifact(std::move(artifact)), m_InputInfos(std::move(inputs)), m_OutputInfos(std::move(outputs)) {
        std::lock_guard<std::mutex> lock(Mutex());
        Live().insert(this);
    }
    ~ArtifactObject() {
        std::lock_guard<std::mutex> lock(Mutex());
        Live().erase(this);
    }
    ArtifactObject(const ArtifactObject&) = delete;
    ArtifactObject& operator=(const ArtifactObject&) = delete;

    const Artifact& GetArtifact() const { return m_Artifact; }
    const std::vector<TensorInfo>& GetInputInfos() const { return m_InputInfos; }
    const std::vector<TensorInfo>& GetOutputInfos() const { return m_OutputInfos; }

    /// Whether `object` (a PreCompiledDescriptor's) is a live ArtifactObject of this backend.
    static bool IsArtifactObject(const void* object) {
        std::lock_guard<std::mutex> lock(Mutex());
        return object && Live().count(object) != 0;
    }

private:
    static std::mutex& Mutex() {
        static std::mutex m;
        return m;
    }
    static std::set<const void*>& Live() {
        static std::set<const void*> s;
        return s;
    }
    Artifact m_Artifact;
    std::vector<TensorInfo> m_InputInfos, m_OutputInfos;
};

class CodegenLayerSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) const override {
        if (layer.m_Type == LayerType::PreCompiled) {
            const auto* d = layer.m_Descriptor ? std::get_if<PreCompiledDescriptor>(layer.m_Descriptor) : nullptr;
            if (!d || !ArtifactObject::IsArtifactObject(d->m_PreCompiledObject.get())) {
                if (reason) *reason = "PreCompiled: the layer's object was not made by Codegen";
                return false;
            }
            const auto& object = *static_cast<const ArtifactObject*>(d->m_PreCompiledObject.get());
            if (info.m_InputTensorInfos != object.GetInputInfos() || info.m_OutputTensorInfos != object.GetOutputInfos()) {
                if (reason) *reason = "PreCompiled: the tensors differ from those the artifact was generated for";
                return false;
            }
            return true;
        }
        if (!layer.m_Descriptor) {
            if (reason) *reason = "the layer has no descriptor";
            return false;
        }
        std::string why;
        if (!IsLayerGeneratable("soft", layer, info, &why)) {
            if (reason) *reason = "Codegen generates what the code generator's soft target can: " + why;
            return false;
        }
        return true;
    }
};

/// Runs a compiled artifact: one instance per concurrent execution (each has its own arena), kept
/// for the next one.
class ArtifactWorkload final : public IWorkload {
public:
    ArtifactWorkload(std::shared_ptr<const ArtifactLibrary> library, const Artifact& artifact, std::size_t numSlots)
        : m_Library(std::move(library)), m_Name(artifact.m_Name) {
        // Per artifact input, the first sub-graph input slot feeding it; constant slots are not read.
        m_InputSlot.assign(artifact.m_Inputs.size(), 0);
        std::vector<bool> found(artifact.m_Inputs.size(), false);
        m_ReadsSlot.assign(numSlots, false);
        for (std::size_t slot = 0; slot < artifact.m_SubgraphInputs.size(); ++slot) {
            const int in = artifact.m_SubgraphInputs[slot];
            if (in < 0) continue;
            m_ReadsSlot[slot] = true;
            if (!found[static_cast<std::size_t>(in)]) {
                m_InputSlot[static_cast<std::size_t>(in)] = slot;
                found[static_cast<std::size_t>(in)] = true;
            }
        }
        m_NumOutputs = artifact.m_Outputs.size();
        // One instance now: a bad weights file or an artifact that cannot configure itself fails
        // the load, not the first run.
        m_Free.push_back(m_Library->Create());
    }
    ~ArtifactWorkload() override {
        for (void* instance : m_Free) m_Library->Destroy(instance);
    }

    void Execute(const WorkloadIo& io) const override {
        if (io.m_Outputs.size() != m_NumOutputs) {
            throw RuntimeException("Codegen: artifact " + m_Name + " called with " + std::to_string(io.m_Outputs.size()) +
                                   " outputs, generated for " + std::to_string(m_NumOutputs));
        }
        std::vector<const void*> inputs(m_InputSlot.size());
        std::vector<void*> outputs(m_NumOutputs);
        for (std::size_t i = 0; i < m_InputSlot.size(); ++i) inputs[i] = io.m_Inputs[m_InputSlot[i]]->Map();
        for (std::size_t o = 0; o < m_NumOutputs; ++o) outputs[o] = io.m_Outputs[o]->Map();
        void* instance = Acquire();
        try {
            m_Library->Run(instance, inputs.data(), outputs.data());
        } catch (...) {
            Release(instance);
            throw;
        }
        Release(instance);
    }

    bool ReadsConstantInput(unsigned int index) const override {
        return index < m_ReadsSlot.size() && m_ReadsSlot[index];
    }

private:
    void* Acquire() const {
        {
            std::lock_guard<std::mutex> lock(m_Mutex);
            if (!m_Free.empty()) {
                void* instance = m_Free.back();
                m_Free.pop_back();
                return instance;
            }
        }
        return m_Library->Create();
    }
    void Release(void* instance) const {
        std::lock_guard<std::mutex> lock(m_Mutex);
        m_Free.push_back(instance);
    }

    std::shared_ptr<const ArtifactLibrary> m_Library;
    std::string m_Name;
    std::vector<std::size_t> m_InputSlot;
    std::vector<bool> m_ReadsSlot;
    std::size_t m_NumOutputs = 0;
    mutable std::mutex m_Mutex;
    mutable std::vector<void*> m_Free;
};

class CodegenWorkloadFactory final : public IWorkloadFactory {
public:
    explicit CodegenWorkloadFactory(CompileOptions options) : m_Options(std::move(options)) {}
    const BackendId& GetBackendId() const override { return CodegenBackend::GetIdStatic(); }

    IWorkloadPtr CreateWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info) const override {
        if (descriptor.m_Type != LayerType::PreCompiled) {
            throw LayerValidationException("Codegen cannot create a workload for " +
                                           std::string(GetLayerTypeName(descriptor.m_Type)) + " '" + descriptor.m_LayerName +
                                           "': Codegen runs the PreCompiled layers its OptimizeSubgraph() makes");
        }
        std::string reason;
        if (!CodegenLayerSupport().IsLayerSupported(descriptor, info, &reason)) {
            throw LayerValidationException("Codegen cannot create a workload for PreCompiled '" + descriptor.m_LayerName +
                                           "': " + reason);
        }
        const auto& object = *static_cast<const ArtifactObject*>(descriptor.Get<PreCompiledDescriptor>().m_PreCompiledObject.get());
        auto library = std::make_shared<const ArtifactLibrary>(object.GetArtifact(), m_Options, descriptor.m_LayerName);
        return std::make_unique<ArtifactWorkload>(std::move(library), object.GetArtifact(), info.m_InputTensorInfos.size());
    }

private:
    CompileOptions m_Options;
};

}  // namespace

const BackendId& CodegenBackend::GetIdStatic() {
    static const BackendId s_Id{"Codegen"};
    return s_Id;
}

IBackendInternal::IWorkloadFactoryPtr CodegenBackend::CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const {
    return std::make_unique<CodegenWorkloadFactory>(ParseCompileOptions({}));
}

IBackendInternal::IWorkloadFactoryPtr CodegenBackend::CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr&,
                                                                                      const BackendOptions& options) const {
    return std::make_unique<CodegenWorkloadFactory>(ParseCompileOptions(options));
}

IBackendInternal::ILayerSupportSharedPtr CodegenBackend::GetLayerSupport() const {
    return std::make_shared<CodegenLayerSupport>();
}

OptimizationViews CodegenBackend::OptimizeSubgraph(const SubgraphView& subgraph) const {
    OptimizationViews views;
    const auto& layers = subgraph.GetLayers();
    if (layers.empty()) return views;
    ArtifactOptions options;
    options.m_Target = "soft";
    options.m_CEntryPoints = true;
    // The same name for every artifact, so that the same sub-graph makes the same sources (and
    // hits the cache) in any process; each library is loaded on its own (RTLD_LOCAL, -Bsymbolic).
    options.m_Name = "CodegenArtifact";
    Artifact artifact;
    try {
        artifact = GenerateArtifact(subgraph, options);
    } catch (const Exception&) {
        views.AddFailedSubgraph(SubgraphView(subgraph));
        return views;
    }
    std::vector<TensorInfo> inputs, outputs;
    for (const IInputSlot* slot : subgraph.GetInputSlots()) inputs.push_back(slot->GetConnection()->GetTensorInfo());
    for (const IOutputSlot* slot : subgraph.GetOutputSlots()) outputs.push_back(slot->GetTensorInfo());
    PreCompiledDescriptor descriptor;
    descriptor.m_Description = "Codegen artifact (soft target) of " + std::to_string(layers.size()) + " layer(s), " +
                               std::to_string(artifact.m_Params.size()) + " bytes of weights";
    descriptor.m_PreCompiledObject = std::make_shared<ArtifactObject>(std::move(artifact), inputs, outputs);
    const std::string name = layers.size() == 1 ? std::string(layers.front()->GetName())
                                                : std::string("Codegen[") + layers.front()->GetName() + " .. " +
                                                      layers.back()->GetName() + "]";
    const auto numInputs = static_cast<int>(inputs.size());
    const auto numOutputs = static_cast<int>(outputs.size());
    IConnectableLayer* region = views.GetINetwork()->AddLayer(LayerType::PreCompiled, descriptor, name.c_str(), numInputs, numOutputs);
    SubgraphView::InputSlots ins;
    SubgraphView::OutputSlots outs;
    for (int i = 0; i < numInputs; ++i) ins.push_back(&region->GetInputSlot(static_cast<unsigned int>(i)));
    for (int o = 0; o < numOutputs; ++o) {
        region->GetOutputSlot(static_cast<unsigned int>(o)).SetTensorInfo(outputs[static_cast<std::size_t>(o)]);
        outs.push_back(&region->GetOutputSlot(static_cast<unsigned int>(o)));
    }
    views.AddSubstitution({subgraph, SubgraphView({region}, std::move(ins), std::move(outs))});
    return views;
}

BackendCapabilities CodegenBackend::GetCapabilities() const { return {{"PreCompiledSubstitution", true}}; }

}  // namespace trellis::codegenbackend
