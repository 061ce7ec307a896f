// IRuntime and LoadedNetwork: workloads, the memory plan, and thread-safe execution.
//
// A loaded network is immutable after LoadNetwork(): every EnqueueWorkload() call takes its own
// working-memory arena from a pool (allocating one only when all are in use), builds tensor
// handles that point into it or at the caller's buffers, and runs the workloads in order.
#include "MemoryPlanner.hpp"
#include "OptimizedNetwork.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/IRuntime.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace trellis::core {

namespace {

struct AlignedBuffer {
    explicit AlignedBuffer(std::size_t bytes) : m_Bytes(bytes) {
        const std::size_t n = (std::max<std::size_t>(bytes, 64) + 63) / 64 * 64;
        m_Data = static_cast<uint8_t*>(std::aligned_alloc(64, n));
        if (!m_Data) throw MemoryException("could not allocate " + std::to_string(n) + " bytes of working memory");
    }
    ~AlignedBuffer() { std::free(m_Data); }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    uint8_t* m_Data = nullptr;
    std::size_t m_Bytes = 0;
};

class DeviceSpec final : public IDeviceSpec {
public:
    const BackendIdVector& GetSupportedBackends() const override { return m_Backends; }
    BackendIdVector m_Backends;
};

}  // namespace

class LoadedNetwork {
public:
    enum class Kind { Arena, Input, Output, Constant };
    struct TensorRef {
        Kind m_Kind = Kind::Arena;
        TensorInfo m_Info;
        std::size_t m_Offset = 0;   // Arena
        LayerBindingId m_Binding = 0;  // Input / Output
        const void* m_Constant = nullptr;
    };
    struct Step {
        IWorkloadPtr m_Workload;
        std::vector<unsigned int> m_Inputs;
        std::vector<unsigned int> m_Outputs;
        std::size_t m_ScratchOffset = 0;
        std::string m_Name;
        BackendId m_Backend;
    };
    struct OutputCopy {
        LayerBindingId m_Binding;
        unsigned int m_Tensor;
    };

    LoadedNetwork(IOptimizedNetworkPtr network);
    ~LoadedNetwork();

    void Execute(const InputTensors& inputs, const OutputTensors& outputs);
    const TensorInfo& GetInputInfo(LayerBindingId id) const;
    const TensorInfo& GetOutputInfo(LayerBindingId id) const;
    std::size_t GetArenaBytes() const { return m_ArenaBytes; }
    std::size_t GetUnplannedBytes() const { return m_UnplannedBytes; }

private:
    std::unique_ptr<AlignedBuffer> AcquireArena();
    void ReleaseArena(std::unique_ptr<AlignedBuffer> a);

    IOptimizedNetworkPtr m_Network;
    std::vector<TensorRef> m_Tensors;
    std::vector<Step> m_Steps;
    std::map<LayerBindingId, TensorInfo> m_InputInfos;
    std::map<LayerBindingId, TensorInfo> m_OutputInfos;
    std::vector<OutputCopy> m_OutputCopies;
    std::vector<IMemoryManagerSharedPtr> m_MemoryManagers;
    std::size_t m_ArenaBytes = 0;
    std::size_t m_UnplannedBytes = 0;
    std::mutex m_PoolMutex;
    std::vector<std::unique_ptr<AlignedBuffer>> m_Pool;
};

LoadedNetwork::LoadedNetwork(IOptimizedNetworkPtr network) : m_Network(std::move(network)) {
    auto* net = dynamic_cast<OptimizedNetworkImpl*>(m_Network.get());
    if (!net) throw InvalidArgumentException("LoadNetwork: the network was not produced by Optimize()");
    const std::vector<Layer*>& order = net->GetOrder();

    // Workload factories, one per backend in use, each with its memory manager.
    std::map<BackendId, IWorkloadFactoryPtr> factories;
    for (Layer* l : order) {
        if (!IsComputeLayer(*l) || factories.count(l->GetBackendId())) continue;
        auto backendFactory = BackendRegistryInstance().GetFactory(l->GetBackendId());
        IBackendInternalUniquePtr backend = backendFactory();
        IMemoryManagerSharedPtr mm(backend->CreateMemoryManager());
        factories[l->GetBackendId()] = backend->CreateWorkloadFactory(mm);
        if (mm) m_MemoryManagers.push_back(mm);
        // `backend` is destroyed here: nothing may depend on it outliving its factory.
    }

    // Tensors: one per output slot.
    std::unordered_map<const OutputSlot*, unsigned int> tensorOf;
    std::map<LayerBindingId, unsigned int> outputSource;
    for (Layer* l : order) {
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            const OutputSlot& slot = l->Output(o);
            TensorRef t;
            t.m_Info = slot.GetTensorInfo();
            if (l->GetType() == LayerType::Input) {
                t.m_Kind = Kind::Input;
                t.m_Binding = l->Desc<BindingDescriptor>().m_BindingId;
                m_InputInfos[t.m_Binding] = t.m_Info;
            } else if (l->GetType() == LayerType::Constant) {
                t.m_Kind = Kind::Constant;
                t.m_Constant = l->Desc<ConstantDescriptor>().m_Tensor.GetMemoryArea();
            } else {
                // Written straight into the first output buffer that reads it, if any.
                t.m_Kind = Kind::Arena;
                for (InputSlot* in : slot.GetConnections()) {
                    if (in->GetOwningLayer().GetType() == LayerType::Output) {
                        t.m_Kind = Kind::Output;
                        t.m_Binding = in->GetOwningLayer().Desc<BindingDescriptor>().m_BindingId;
                        break;
                    }
                }
            }
            tensorOf[&slot] = static_cast<unsigned int>(m_Tensors.size());
            m_Tensors.push_back(t);
        }
        if (l->GetType() == LayerType::Output) {
            const OutputSlot* src = l->Input(0).GetConnectedOutputSlot();
            const unsigned int t = tensorOf.at(src);
            const LayerBindingId id = l->Desc<BindingDescriptor>().m_BindingId;
            m_OutputInfos[id] = src->GetTensorInfo();
            const TensorRef& ref = m_Tensors[t];
            if (ref.m_Kind != Kind::Output || ref.m_Binding != id) m_OutputCopies.push_back({id, t});
        }
    }

    // Workloads, in execution order.
    for (Layer* l : order) {
        if (!IsComputeLayer(*l)) continue;
        Step step;
        step.m_Name = l->Name();
        step.m_Backend = l->GetBackendId();
        const QueueDescriptor q = MakeQueueDescriptor(*l);
        const WorkloadInfo info = MakeWorkloadInfo(*l);
        try {
            step.m_Workload = factories.at(l->GetBackendId())->CreateWorkload(q, info);
        } catch (const Exception& e) {
            throw RuntimeException("LoadNetwork: creating the workload of " + Describe(*l) + " on " +
                                   l->GetBackendId().Get() + " failed: " + e.what());
        }
        if (!step.m_Workload) {
            throw RuntimeException("LoadNetwork: backend " + l->GetBackendId().Get() + " returned no workload for " +
                                   Describe(*l));
        }
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            step.m_Inputs.push_back(tensorOf.at(l->Input(i).GetConnectedOutputSlot()));
        }
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) step.m_Outputs.push_back(tensorOf.at(&l->Output(o)));
        m_Steps.push_back(std::move(step));
    }

    // Memory plan: arena tensors live from their producer's step to their last reader's step;
    // each step's scratch lives for that step only.
    std::vector<MemoryBlock> blocks;
    std::vector<std::pair<int, unsigned int>> owners;  // (tensor index or -1 for scratch, step)
    std::vector<int> firstStep(m_Tensors.size(), -1), lastStep(m_Tensors.size(), -1);
    for (unsigned int s = 0; s < m_Steps.size(); ++s) {
        for (unsigned int t : m_Steps[s].m_Outputs) {
            if (firstStep[t] < 0) firstStep[t] = static_cast<int>(s);
            lastStep[t] = std::max(lastStep[t], static_cast<int>(s));
        }
        for (unsigned int t : m_Steps[s].m_Inputs) lastStep[t] = std::max(lastStep[t], static_cast<int>(s));
    }
    for (unsigned int t = 0; t < m_Tensors.size(); ++t) {
        if (m_Tensors[t].m_Kind != Kind::Arena || firstStep[t] < 0) continue;
        blocks.push_back({m_Tensors[t].m_Info.GetNumBytes(), static_cast<unsigned int>(firstStep[t]),
                          static_cast<unsigned int>(lastStep[t]), 0});
        owners.emplace_back(static_cast<int>(t), 0);
    }
    for (unsigned int s = 0; s < m_Steps.size(); ++s) {
        const std::size_t scratch = m_Steps[s].m_Workload->GetScratchBytes();
        if (!scratch) continue;
        blocks.push_back({scratch, s, s, 0});
        owners.emplace_back(-1, s);
    }
    for (const MemoryBlock& b : blocks) m_UnplannedBytes += (b.m_Bytes + 63) / 64 * 64;
    m_ArenaBytes = PlanMemory(blocks);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (owners[i].first >= 0) m_Tensors[static_cast<unsigned int>(owners[i].first)].m_Offset = blocks[i].m_Offset;
        else m_Steps[owners[i].second].m_ScratchOffset = blocks[i].m_Offset;
    }

    for (auto& mm : m_MemoryManagers) mm->Acquire();
}

LoadedNetwork::~LoadedNetwork() {
    m_Steps.clear();
    for (auto& mm : m_MemoryManagers) mm->Release();
}

std::unique_ptr<AlignedBuffer> LoadedNetwork::AcquireArena() {
    {
        std::lock_guard<std::mutex> lock(m_PoolMutex);
        if (!m_Pool.empty()) {
            auto a = std::move(m_Pool.back());
            m_Pool.pop_back();
            return a;
        }
    }
    return std::make_unique<AlignedBuffer>(m_ArenaBytes);
}

void LoadedNetwork::ReleaseArena(std::unique_ptr<AlignedBuffer> a) {
    std::lock_guard<std::mutex> lock(m_PoolMutex);
    m_Pool.push_back(std::move(a));
}

const TensorInfo& LoadedNetwork::GetInputInfo(LayerBindingId id) const {
    auto it = m_InputInfos.find(id);
    if (it == m_InputInfos.end()) {
        throw InvalidArgumentException("the network has no input with binding id " + std::to_string(id));
    }
    return it->second;
}

const TensorInfo& LoadedNetwork::GetOutputInfo(LayerBindingId id) const {
    auto it = m_OutputInfos.find(id);
    if (it == m_OutputInfos.end()) {
        throw InvalidArgumentException("the network has no output with binding id " + std::to_string(id));
    }
    return it->second;
}

namespace {
template <typename TensorT>
std::map<LayerBindingId, void*> BindTensors(const std::vector<std::pair<LayerBindingId, TensorT>>& given,
                                            const std::map<LayerBindingId, TensorInfo>& expected, const char* what) {
    std::map<LayerBindingId, void*> bound;
    for (const auto& [id, tensor] : given) {
        auto it = expected.find(id);
        if (it == expected.end()) {
            throw InvalidArgumentException(std::string("EnqueueWorkload: the network has no ") + what +
                                           " with binding id " + std::to_string(id));
        }
        if (bound.count(id)) {
            throw InvalidArgumentException(std::string("EnqueueWorkload: ") + what + " " + std::to_string(id) +
                                           " is given twice");
        }
        const TensorInfo& e = it->second;
        if (tensor.GetShape() != e.GetShape() || tensor.GetDataType() != e.GetDataType()) {
            throw InvalidArgumentException(std::string("EnqueueWorkload: ") + what + " " + std::to_string(id) +
                                           " must be " + e.ToString() + ", got " + tensor.GetInfo().ToString());
        }
        if (!tensor.GetMemoryArea() && e.GetNumBytes() != 0) {
            throw InvalidArgumentException(std::string("EnqueueWorkload: ") + what + " " + std::to_string(id) +
                                           " has no memory");
        }
        bound[id] = const_cast<void*>(static_cast<const void*>(tensor.GetMemoryArea()));
    }
    for (const auto& [id, info] : expected) {
        if (!bound.count(id)) {
            throw InvalidArgumentException(std::string("EnqueueWorkload: ") + what + " " + std::to_string(id) + " (" +
                                           info.ToString() + ") was not given");
        }
    }
    return bound;
}
}  // namespace

void LoadedNetwork::Execute(const InputTensors& inputs, const OutputTensors& outputs) {
    const auto inPtrs = BindTensors(inputs, m_InputInfos, "input");
    const auto outPtrs = BindTensors(outputs, m_OutputInfos, "output");

    std::unique_ptr<AlignedBuffer> arena = AcquireArena();
    struct ArenaReturn {
        LoadedNetwork* self;
        std::unique_ptr<AlignedBuffer>& a;
        ~ArenaReturn() { self->ReleaseArena(std::move(a)); }
    } giveBack{this, arena};

    std::vector<PassthroughTensorHandle> handles(m_Tensors.size());
    for (std::size_t t = 0; t < m_Tensors.size(); ++t) {
        const TensorRef& ref = m_Tensors[t];
        void* p = nullptr;
        switch (ref.m_Kind) {
            case Kind::Arena: p = arena->m_Data + ref.m_Offset; break;
            case Kind::Input: p = inPtrs.at(ref.m_Binding); break;
            case Kind::Output: p = outPtrs.at(ref.m_Binding); break;
            case Kind::Constant: p = const_cast<void*>(ref.m_Constant); break;
        }
        handles[t].Reset(ref.m_Info, p);
    }

    std::vector<ITensorHandle*> ins, outs;
    for (const Step& step : m_Steps) {
        ins.clear();
        outs.clear();
        for (unsigned int t : step.m_Inputs) ins.push_back(&handles[t]);
        for (unsigned int t : step.m_Outputs) outs.push_back(&handles[t]);
        WorkloadIo io;
        io.m_Inputs = ins;
        io.m_Outputs = outs;
        io.m_Scratch = arena->m_Data + step.m_ScratchOffset;
        try {
            step.m_Workload->Execute(io);
        } catch (const Exception& e) {
            throw RuntimeException("EnqueueWorkload: layer '" + step.m_Name + "' on " + step.m_Backend.Get() +
                                   " failed: " + e.what());
        } catch (const std::exception& e) {
            throw RuntimeException("EnqueueWorkload: layer '" + step.m_Name + "' on " + step.m_Backend.Get() +
                                   " failed: " + e.what());
        }
    }
    for (const OutputCopy& c : m_OutputCopies) {
        if (m_Tensors[c.m_Tensor].m_Info.GetNumBytes() == 0) continue;
        std::memcpy(outPtrs.at(c.m_Binding), handles[c.m_Tensor].Map(), m_Tensors[c.m_Tensor].m_Info.GetNumBytes());
    }
}

// ---- the runtime -----------------------------------------------------------------------------

class RuntimeImpl final : public IRuntime {
public:
    explicit RuntimeImpl(const CreationOptions& options) : m_Options(options) {
        for (const BackendId& id : BackendRegistryInstance().GetBackendIds()) {
            m_DeviceSpec.m_Backends.push_back(id);
            IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
            if (!backend) continue;
            if (IBackendContextPtr ctx = backend->CreateBackendContext(options)) m_Contexts[id] = std::move(ctx);
        }
    }

    ~RuntimeImpl() override {
        std::vector<NetworkId> ids;
        {
            std::shared_lock lock(m_Mutex);
            for (const auto& [id, n] : m_Networks) ids.push_back(id);
        }
        for (NetworkId id : ids) UnloadNetwork(id);
    }

    Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network) override {
        std::string error;
        Status s = LoadNetwork(networkIdOut, std::move(network), error);
        if (s != Status::Success) throw RuntimeException(error);
        return s;
    }

    Status LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage) override {
        if (!network) {
            errorMessage = "LoadNetwork: the optimized network is null";
            return Status::Failure;
        }
        const NetworkId id = m_NextId++;
        for (auto& [backend, ctx] : m_Contexts) {
            if (!ctx->BeforeLoadNetwork(id)) {
                errorMessage = "LoadNetwork: backend " + backend.Get() + " refused to load the network";
                return Status::Failure;
            }
        }
        std::shared_ptr<LoadedNetwork> loaded;
        try {
            loaded = std::make_shared<LoadedNetwork>(std::move(network));
        } catch (const std::exception& e) {
            errorMessage = e.what();
            return Status::Failure;
        }
        {
            std::unique_lock lock(m_Mutex);
            m_Networks[id] = loaded;
        }
        for (auto& [backend, ctx] : m_Contexts) ctx->AfterLoadNetwork(id);
        networkIdOut = id;
        return Status::Success;
    }

    Status UnloadNetwork(NetworkId networkId) override {
        for (auto& [backend, ctx] : m_Contexts) ctx->BeforeUnloadNetwork(networkId);
        std::shared_ptr<LoadedNetwork> victim;
        {
            std::unique_lock lock(m_Mutex);
            auto it = m_Networks.find(networkId);
            if (it == m_Networks.end()) return Status::Failure;
            victim = std::move(it->second);
            m_Networks.erase(it);
        }
        victim.reset();  // runs now unless an EnqueueWorkload still holds it; then when it ends
        for (auto& [backend, ctx] : m_Contexts) ctx->AfterUnloadNetwork(networkId);
        return Status::Success;
    }

    TensorInfo GetInputTensorInfo(NetworkId networkId, LayerBindingId layerId) const override {
        return Get(networkId)->GetInputInfo(layerId);
    }
    TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId) const override {
        return Get(networkId)->GetOutputInfo(layerId);
    }

    Status EnqueueWorkload(NetworkId networkId, const InputTensors& inputTensors,
                           const OutputTensors& outputTensors) override {
        Get(networkId)->Execute(inputTensors, outputTensors);
        return Status::Success;
    }

    const IDeviceSpec& GetDeviceSpec() const override { return m_DeviceSpec; }

    std::size_t GetPeakWorkingMemoryBytes(NetworkId networkId) const override { return Get(networkId)->GetArenaBytes(); }
    std::size_t GetUnplannedWorkingMemoryBytes(NetworkId networkId) const override {
        return Get(networkId)->GetUnplannedBytes();
    }

private:
    std::shared_ptr<LoadedNetwork> Get(NetworkId id) const {
        std::shared_lock lock(m_Mutex);
        auto it = m_Networks.find(id);
        if (it == m_Networks.end()) throw InvalidArgumentException("no network with id " + std::to_string(id) + " is loaded");
        return it->second;
    }

    CreationOptions m_Options;
    DeviceSpec m_DeviceSpec;
    std::map<BackendId, IBackendContextPtr> m_Contexts;
    mutable std::shared_mutex m_Mutex;
    std::map<NetworkId, std::shared_ptr<LoadedNetwork>> m_Networks;
    std::atomic<NetworkId> m_NextId{1};
};

}  // namespace trellis::core

namespace trellis {

IRuntime* IRuntime::CreateRaw(const CreationOptions& options) { return new core::RuntimeImpl(options); }
IRuntimePtr IRuntime::Create(const CreationOptions& options) { return IRuntimePtr(CreateRaw(options), &IRuntime::Destroy); }
void IRuntime::Destroy(IRuntime* runtime) { delete runtime; }

}  // namespace trellis
