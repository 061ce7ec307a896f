// IRuntime and LoadedNetwork: workloads, the memory plan, and thread-safe execution.
//
// A loaded network is immutable after LoadNetwork(): every EnqueueWorkload() call takes its own
// working-memory arena from a pool (allocating one only when all are in use), builds tensor
// handles that point into it or at the caller's buffers, and runs the workloads in order.
#include "BackendBoundaries.hpp"
#include "DeviceSpec.hpp"
#include "DynamicBackendLoader.hpp"
#include "MemoryPlanner.hpp"
#include "OptimizedNetwork.hpp"
#include "ResourceLimits.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/IRuntime.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace trellis::core {

namespace {

/// One per-call buffer of one memory domain, from the domain's allocator (or aligned host memory).
class DomainBuffer {
public:
    DomainBuffer(std::size_t bytes, std::shared_ptr<ICustomAllocator> allocator) : m_Allocator(std::move(allocator)) {
        const std::size_t n = (std::max<std::size_t>(bytes, 64) + 63) / 64 * 64;
        m_Raw = m_Allocator ? m_Allocator->allocate(n, 64) : std::aligned_alloc(64, n);
        if (!m_Raw) throw MemoryException("could not allocate " + std::to_string(n) + " bytes of working memory");
        m_Data = static_cast<uint8_t*>(m_Allocator ? m_Allocator->GetMemoryRegionAtOffset(m_Raw, 0, 64) : m_Raw);
    }
    ~DomainBuffer() {
        if (m_Allocator) m_Allocator->free(m_Raw);
        else std::free(m_Raw);
    }
    DomainBuffer(const DomainBuffer&) = delete;
    DomainBuffer& operator=(const DomainBuffer&) = delete;
    uint8_t* Data() const { return m_Data; }
private:
    std::shared_ptr<ICustomAllocator> m_Allocator;
    void* m_Raw = nullptr;
    uint8_t* m_Data = nullptr;
};

using ArenaSet = std::vector<std::unique_ptr<DomainBuffer>>;

}  // namespace

/// A network's recorded timeline (IRuntime::CreationOptions::m_ProfilingOptions.m_RecordTimeline):
/// events appended by concurrent calls, taken by TakeTimeline().
class Timeline {
public:
    void Add(TimelineEvent e) {
        std::lock_guard<std::mutex> lock(m_Mutex);
        m_Events.push_back(std::move(e));
    }
    std::vector<TimelineEvent> Take() {
        std::lock_guard<std::mutex> lock(m_Mutex);
        return std::exchange(m_Events, {});
    }
private:
    std::mutex m_Mutex;
    std::vector<TimelineEvent> m_Events;
};

/// What one workload's Execute() reports through WorkloadIo::m_Profiling: events attributed to it.
class StepProfiling final : public IBackendProfiling {
public:
    StepProfiling(Timeline& timeline, const std::string& parent, const BackendId& backend, uint64_t thread)
        : m_Timeline(timeline), m_Parent(parent), m_Backend(backend), m_Thread(thread) {}
    uint16_t RegisterCounter(const std::string&, const std::string&) override { return 0; }
    void ReportCounterValue(uint16_t, uint64_t) override {}
    void ReportEvent(const ProfilingEvent& e) override {
        m_Timeline.Add(TimelineEvent{e.m_Name, e.m_Category, m_Backend, e.m_StartNs, e.m_DurationNs, m_Thread, m_Parent});
    }
private:
    Timeline& m_Timeline;
    const std::string& m_Parent;
    const BackendId& m_Backend;
    uint64_t m_Thread;
};

uint64_t SteadyNowNs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

class LoadedNetwork {
public:
    enum class Kind { Arena, Input, Output, Constant };
    struct TensorRef {
        Kind m_Kind = Kind::Arena;
        TensorInfo m_Info;
        unsigned int m_Domain = 0;     // Arena
        std::size_t m_Offset = 0;      // Arena
        LayerBindingId m_Binding = 0;  // Input / Output
        const void* m_Constant = nullptr;
    };
    struct Step {
        IWorkloadPtr m_Workload;
        std::vector<unsigned int> m_Inputs;
        std::vector<unsigned int> m_Outputs;
        unsigned int m_ScratchDomain = 0;
        std::size_t m_ScratchOffset = 0;
        std::string m_Name;
        std::string m_Category;  ///< the layer's op, for timelines
        BackendId m_Backend;
    };
    struct OutputCopy {
        LayerBindingId m_Binding;
        unsigned int m_Tensor;
    };
    /// The working memory of one backend (domain 0: host memory of network-level tensors).
    struct Domain {
        BackendId m_Owner;
        std::shared_ptr<ICustomAllocator> m_Allocator;
        MemorySource m_Source = MemorySource::Malloc;
        std::size_t m_Bytes = 0;
    };

    LoadedNetwork(IOptimizedNetworkPtr network, const IDeviceSpec& spec,
                  const std::map<BackendId, std::map<std::string, std::string>>& backendOptions);
    ~LoadedNetwork();

    /// `note` is appended to binding errors (a specialization says which input shapes it is for).
    /// Runs the network; with a timeline, every workload's time (and what it reports) is added.
    void Execute(const InputTensors& inputs, const OutputTensors& outputs, const std::string& note = "",
                 Timeline* timeline = nullptr);
    const TensorInfo& GetInputInfo(LayerBindingId id) const;
    const TensorInfo& GetOutputInfo(LayerBindingId id) const;
    std::size_t GetArenaBytes() const;
    std::size_t GetUnplannedBytes() const { return m_UnplannedBytes; }

private:
    unsigned int DomainOf(const BackendId& owner, const IDeviceSpec& spec);
    ArenaSet AcquireArenas();
    void ReleaseArenas(ArenaSet a);

    // First, so destroyed last: the factories of the backends whose objects (workloads, memory
    // managers) live below; a dynamic backend's factory keeps its library open.
    std::vector<BackendRegistry::FactoryFunction> m_BackendFactories;
    IOptimizedNetworkPtr m_Network;
    std::vector<TensorRef> m_Tensors;
    std::vector<Step> m_Steps;
    std::vector<Domain> m_Domains;
    std::map<LayerBindingId, TensorInfo> m_InputInfos;
    std::map<LayerBindingId, TensorInfo> m_OutputInfos;
    std::vector<OutputCopy> m_OutputCopies;
    std::vector<IMemoryManagerSharedPtr> m_MemoryManagers;
    /// Per input binding: the steps reading it (a MemCopy into a backend's memory can be
    /// skipped when the caller gives the input in that memory).
    struct InputReader {
        unsigned int m_Step;
        BackendId m_CopyInto;  ///< empty unless the step is a MemCopy
    };
    std::map<LayerBindingId, std::vector<InputReader>> m_InputReaders;
    /// Per output binding written by a step: whether that step is a copy out of a backend's
    /// memory (its source memory), which can write into the caller's memory of that backend.
    std::map<LayerBindingId, BackendId> m_OutputCopiedFrom;
    std::size_t m_UnplannedBytes = 0;
    std::mutex m_PoolMutex;
    std::vector<ArenaSet> m_Pool;
};

unsigned int LoadedNetwork::DomainOf(const BackendId& owner, const IDeviceSpec& spec) {
    for (unsigned int d = 0; d < m_Domains.size(); ++d) {
        if (m_Domains[d].m_Owner == owner) return d;
    }
    Domain dom;
    dom.m_Owner = owner;
    dom.m_Allocator = GetWorkingMemoryAllocator(owner, &spec);
    dom.m_Source = dom.m_Allocator ? dom.m_Allocator->GetMemorySourceType() : MemorySource::Malloc;
    m_Domains.push_back(dom);
    return static_cast<unsigned int>(m_Domains.size() - 1);
}

std::size_t LoadedNetwork::GetArenaBytes() const {
    std::size_t total = 0;
    for (const Domain& d : m_Domains) total = SaturatingAdd(total, d.m_Bytes);
    return total;
}

LoadedNetwork::LoadedNetwork(IOptimizedNetworkPtr network, const IDeviceSpec& spec,
                             const std::map<BackendId, std::map<std::string, std::string>>& backendOptions)
    : m_Network(std::move(network)) {
    auto* net = dynamic_cast<OptimizedNetworkImpl*>(m_Network.get());
    if (!net) throw InvalidArgumentException("LoadNetwork: the network was not produced by Optimize()");
    const std::vector<Layer*>& order = net->GetOrder();
    m_Domains.push_back(Domain{});  // domain 0: host

    // Workload factories, one per backend in use, each with its memory manager.
    std::map<BackendId, IWorkloadFactoryPtr> factories;
    for (Layer* l : order) {
        if (!IsComputeLayer(*l) || factories.count(l->GetBackendId())) continue;
        auto backendFactory = BackendRegistryInstance().GetFactory(l->GetBackendId());
        IBackendInternalUniquePtr backend = backendFactory();
        IMemoryManagerSharedPtr mm(backend->CreateMemoryManager());
        m_BackendFactories.push_back(backendFactory);
        // Backends built against API 1.1 or later are given the application's options for them.
        const BackendId& id = l->GetBackendId();
        if (BackendRegistryInstance().GetApiVersion(id).AtLeast(BackendVersion{1, 1})) {
            auto opts = backendOptions.find(id);
            factories[id] = backend->CreateWorkloadFactoryWithOptions(
                mm, opts == backendOptions.end() ? IBackendInternal::BackendOptions{} : opts->second);
        } else {
            factories[id] = backend->CreateWorkloadFactory(mm);
        }
        if (!factories[id]) {
            throw BackendUnavailableException("backend '" + id.Get() + "' returned no workload factory");
        }
        if (mm) m_MemoryManagers.push_back(mm);
        // `backend` is destroyed here: nothing may depend on it outliving its factory.
    }

    // Tensors: one per output slot, in the working memory of the backend that owns it.
    std::unordered_map<const OutputSlot*, unsigned int> tensorOf;
    std::vector<std::pair<const Layer*, unsigned int>> producerOf;  // per tensor: (layer, output), for messages
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
                t.m_Kind = Kind::Arena;
                t.m_Domain = DomainOf(GetOutputMemoryOwner(*l), spec);
                // Written straight into the first output buffer that reads it, when that memory
                // is host memory (the optimizer put a copy in front of Outputs otherwise).
                if (m_Domains[t.m_Domain].m_Source == MemorySource::Malloc) {
                    for (InputSlot* in : slot.GetConnections()) {
                        if (in->GetOwningLayer().GetType() == LayerType::Output) {
                            t.m_Kind = Kind::Output;
                            t.m_Binding = in->GetOwningLayer().Desc<BindingDescriptor>().m_BindingId;
                            break;
                        }
                    }
                }
            }
            tensorOf[&slot] = static_cast<unsigned int>(m_Tensors.size());
            m_Tensors.push_back(t);
            producerOf.emplace_back(l, o);
        }
        if (l->GetType() == LayerType::Output) {
            const OutputSlot* src = l->Input(0).GetConnectedOutputSlot();
            const unsigned int t = tensorOf.at(src);
            const LayerBindingId id = l->Desc<BindingDescriptor>().m_BindingId;
            m_OutputInfos[id] = src->GetTensorInfo();
            const TensorRef& ref = m_Tensors[t];
            if (ref.m_Kind == Kind::Arena && m_Domains[ref.m_Domain].m_Source != MemorySource::Malloc) {
                throw RuntimeException("LoadNetwork: output " + std::to_string(id) + " would be read from " +
                                       m_Domains[ref.m_Domain].m_Owner.Get() + " memory, which is not host memory");
            }
            if (ref.m_Kind != Kind::Output || ref.m_Binding != id) m_OutputCopies.push_back({id, t});
        }
    }

    // Constants no workload reads at run time (their readers packed or copied them) are freed as
    // soon as the last reader exists, so weights are not held twice while later ones are packed.
    std::unordered_map<const Layer*, unsigned int> constantReadersLeft;
    std::unordered_map<const Layer*, bool> constantStillRead;
    for (Layer* l : order) {
        if (!IsComputeLayer(*l)) continue;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            const Layer* src = l->InputLayer(i);
            if (src && src->GetType() == LayerType::Constant) ++constantReadersLeft[src];
        }
    }
    for (Layer* l : order) {
        if (l->GetType() != LayerType::Constant) continue;
        for (InputSlot* in : l->Output(0).GetConnections()) {
            if (!IsComputeLayer(in->GetOwningLayer())) constantStillRead[l] = true;  // e.g. an Output
        }
    }
    auto releaseIfUnread = [&](Layer* constant) {
        if (constantStillRead[constant] || constantReadersLeft[constant] != 0) return;
        auto& d = std::get<ConstantDescriptor>(constant->MutableDescriptor());
        d.m_Tensor = ConstTensor(d.m_Tensor.GetInfo(), nullptr);
        d.m_Storage.reset();
        m_Tensors[tensorOf.at(&constant->Output(0))].m_Constant = nullptr;
    };

    // Workloads, in execution order.
    for (Layer* l : order) {
        if (!IsComputeLayer(*l)) continue;
        Step step;
        step.m_Name = l->Name();
        step.m_Category = l->GetType() == LayerType::PreCompiled ? std::string("PreCompiled") : l->OpDetail();
        step.m_Backend = l->GetBackendId();
        step.m_ScratchDomain = DomainOf(l->GetBackendId(), spec);
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
        const bool mayAsk = BackendRegistryInstance().GetApiVersion(l->GetBackendId()).AtLeast(BackendVersion{1, 1});
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            Layer* src = l->InputLayer(i);
            if (!src || src->GetType() != LayerType::Constant) continue;
            if (!mayAsk || step.m_Workload->ReadsConstantInput(i)) constantStillRead[src] = true;
            --constantReadersLeft[src];
            releaseIfUnread(src);
        }
        if (l->GetType() == LayerType::MemCopy && m_Tensors[step.m_Outputs[0]].m_Kind == Kind::Output) {
            m_OutputCopiedFrom[m_Tensors[step.m_Outputs[0]].m_Binding] = l->GetBackendId();
        }
        for (unsigned int t : step.m_Inputs) {
            if (m_Tensors[t].m_Kind != Kind::Input) continue;
            InputReader r{static_cast<unsigned int>(m_Steps.size()), BackendId()};
            if (l->GetType() == LayerType::MemCopy) r.m_CopyInto = l->Desc<MemCopyDescriptor>().m_Destination;
            m_InputReaders[m_Tensors[t].m_Binding].push_back(r);
        }
        m_Steps.push_back(std::move(step));
    }

    // Memory plan, per domain: arena tensors live from their producer's step to their last
    // reader's step; each step's scratch lives for that step only.
    std::vector<int> firstStep(m_Tensors.size(), -1), lastStep(m_Tensors.size(), -1);
    for (unsigned int s = 0; s < m_Steps.size(); ++s) {
        for (unsigned int t : m_Steps[s].m_Outputs) {
            if (firstStep[t] < 0) firstStep[t] = static_cast<int>(s);
            lastStep[t] = std::max(lastStep[t], static_cast<int>(s));
        }
        for (unsigned int t : m_Steps[s].m_Inputs) lastStep[t] = std::max(lastStep[t], static_cast<int>(s));
    }
    // The working-memory limit is checked on the plan, before any arena exists (AcquireArenas
    // allocates them on the first run): first each block, then the plan's total.
    const std::size_t limit = ResolveMemoryLimit(net->GetMaxWorkingMemoryBytes());
    const std::string raise = " (OptimizerOptions::m_MaxWorkingMemoryBytes, trellis --max-working-memory; default: "
                              "the machine's physical memory)";
    auto describeBlock = [&](int tensor, unsigned int step) {
        if (tensor < 0) return "the scratch memory of layer '" + m_Steps[step].m_Name + "'";
        const auto& [layer, output] = producerOf[static_cast<unsigned int>(tensor)];
        return "output " + std::to_string(output) + " of " + Describe(*layer) + " (" +
               m_Tensors[static_cast<unsigned int>(tensor)].m_Info.ToString() + ")";
    };
    struct Block {
        std::size_t m_Bytes;
        int m_Tensor;  // or -1 for a step's scratch
        unsigned int m_Step;
    };
    std::vector<Block> largest;  // the three largest blocks so far, for the message
    for (unsigned int d = 0; d < m_Domains.size(); ++d) {
        std::vector<MemoryBlock> blocks;
        std::vector<std::pair<int, unsigned int>> owners;  // (tensor index, or -1 for a step's scratch; step)
        for (unsigned int t = 0; t < m_Tensors.size(); ++t) {
            if (m_Tensors[t].m_Kind != Kind::Arena || m_Tensors[t].m_Domain != d || firstStep[t] < 0) continue;
            blocks.push_back({m_Tensors[t].m_Info.GetNumBytes(), static_cast<unsigned int>(firstStep[t]),
                              static_cast<unsigned int>(lastStep[t]), 0});
            owners.emplace_back(static_cast<int>(t), 0);
        }
        for (unsigned int s = 0; s < m_Steps.size(); ++s) {
            const std::size_t scratch = m_Steps[s].m_Workload->GetScratchBytes();
            if (!scratch || m_Steps[s].m_ScratchDomain != d) continue;
            blocks.push_back({scratch, s, s, 0});
            owners.emplace_back(-1, s);
        }
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            if (blocks[i].m_Bytes > limit) {
                throw ResourceLimitException("LoadNetwork: " + describeBlock(owners[i].first, owners[i].second) +
                                             " needs " + FormatBytes(blocks[i].m_Bytes) +
                                             " of working memory, more than the limit of " + FormatBytes(limit) +
                                             raise);
            }
            largest.push_back({blocks[i].m_Bytes, owners[i].first, owners[i].second});
            std::sort(largest.begin(), largest.end(),
                      [](const Block& a, const Block& b) { return a.m_Bytes > b.m_Bytes; });
            if (largest.size() > 3) largest.pop_back();
        }
        for (const MemoryBlock& b : blocks) {
            m_UnplannedBytes = SaturatingAdd(m_UnplannedBytes, SaturatingAdd(b.m_Bytes, 63) / 64 * 64);
        }
        m_Domains[d].m_Bytes = blocks.empty() ? 0 : PlanMemory(blocks);
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            if (owners[i].first >= 0) m_Tensors[static_cast<unsigned int>(owners[i].first)].m_Offset = blocks[i].m_Offset;
            else m_Steps[owners[i].second].m_ScratchOffset = blocks[i].m_Offset;
        }
    }

    if (GetArenaBytes() > limit) {
        std::string biggest;
        for (const Block& b : largest) {
            biggest += (biggest.empty() ? "" : ", ") + describeBlock(b.m_Tensor, b.m_Step) + ": " +
                       FormatBytes(b.m_Bytes);
        }
        throw ResourceLimitException("LoadNetwork: the network needs " + FormatBytes(GetArenaBytes()) +
                                     " of working memory per run (intermediate tensors and scratch, after reuse), "
                                     "more than the limit of " + FormatBytes(limit) + raise + "; the largest blocks: " +
                                     biggest);
    }

    for (auto& mm : m_MemoryManagers) mm->Acquire();
}

LoadedNetwork::~LoadedNetwork() {
    m_Pool.clear();
    m_Steps.clear();
    for (auto& mm : m_MemoryManagers) mm->Release();
}

ArenaSet LoadedNetwork::AcquireArenas() {
    {
        std::lock_guard<std::mutex> lock(m_PoolMutex);
        if (!m_Pool.empty()) {
            ArenaSet a = std::move(m_Pool.back());
            m_Pool.pop_back();
            return a;
        }
    }
    ArenaSet a;
    for (const Domain& d : m_Domains) {
        a.push_back(d.m_Bytes ? std::make_unique<DomainBuffer>(d.m_Bytes, d.m_Allocator) : nullptr);
    }
    return a;
}

void LoadedNetwork::ReleaseArenas(ArenaSet a) {
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
                                            const std::map<LayerBindingId, TensorInfo>& expected, const char* what,
                                            const std::string& note) {
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
                                           " must be " + e.ToString() + note + ", got " + tensor.GetInfo().ToString());
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

void LoadedNetwork::Execute(const InputTensors& inputs, const OutputTensors& outputs, const std::string& note,
                            Timeline* timeline) {
    const auto inPtrs = BindTensors(inputs, m_InputInfos, "input", note);
    const auto outPtrs = BindTensors(outputs, m_OutputInfos, "output", note);

    ArenaSet arenas = AcquireArenas();
    struct ArenaReturn {
        LoadedNetwork* self;
        ArenaSet& a;
        ~ArenaReturn() { self->ReleaseArenas(std::move(a)); }
    } giveBack{this, arenas};

    std::vector<PassthroughTensorHandle> handles(m_Tensors.size());
    for (std::size_t t = 0; t < m_Tensors.size(); ++t) {
        const TensorRef& ref = m_Tensors[t];
        void* p = nullptr;
        switch (ref.m_Kind) {
            case Kind::Arena: p = arenas[ref.m_Domain] ? arenas[ref.m_Domain]->Data() + ref.m_Offset : nullptr; break;
            case Kind::Input: p = inPtrs.at(ref.m_Binding); break;
            case Kind::Output: p = outPtrs.at(ref.m_Binding); break;
            case Kind::Constant: p = const_cast<void*>(ref.m_Constant); break;
        }
        handles[t].Reset(ref.m_Info, p);
    }

    // Inputs given in a backend's memory: that backend's copies of them are skipped and their
    // outputs are the caller's memory.
    std::vector<bool> skip;
    for (const auto& [id, tensor] : inputs) {
        const BackendId& memory = tensor.GetMemoryBackend();
        if (memory.IsEmpty()) continue;
        auto readers = m_InputReaders.find(id);
        if (readers == m_InputReaders.end()) continue;
        skip.resize(m_Steps.size(), false);
        for (const InputReader& r : readers->second) {
            const Step& step = m_Steps[r.m_Step];
            if (r.m_CopyInto != memory) {
                throw InvalidArgumentException("EnqueueWorkload: input " + std::to_string(id) + " is in " + memory.Get() +
                                               " memory, but layer '" + step.m_Name + "' on " + step.m_Backend.Get() +
                                               " reads it " +
                                               (r.m_CopyInto.IsEmpty() ? std::string("as host memory")
                                                                       : "into " + r.m_CopyInto.Get() + " memory"));
            }
            skip[r.m_Step] = true;
            handles[step.m_Outputs[0]].Reset(m_Tensors[step.m_Outputs[0]].m_Info,
                                             const_cast<void*>(tensor.GetMemoryArea()));
        }
    }

    // Outputs given in a backend's memory: only a copy out of that backend may write them.
    for (const auto& [id, tensor] : outputs) {
        const BackendId& memory = tensor.GetMemoryBackend();
        if (memory.IsEmpty()) continue;
        auto it = m_OutputCopiedFrom.find(id);
        if (it == m_OutputCopiedFrom.end() || it->second != memory) {
            throw InvalidArgumentException("EnqueueWorkload: output " + std::to_string(id) + " is in " + memory.Get() +
                                           " memory, but the network produces it " +
                                           (it == m_OutputCopiedFrom.end() ? std::string("in host memory")
                                                                           : "from " + it->second.Get() + " memory"));
        }
    }

    std::vector<ITensorHandle*> ins, outs;
    for (std::size_t s = 0; s < m_Steps.size(); ++s) {
        const Step& step = m_Steps[s];
        if (!skip.empty() && skip[s]) continue;
        ins.clear();
        outs.clear();
        for (unsigned int t : step.m_Inputs) ins.push_back(&handles[t]);
        for (unsigned int t : step.m_Outputs) outs.push_back(&handles[t]);
        WorkloadIo io;
        io.m_Inputs = ins;
        io.m_Outputs = outs;
        io.m_Scratch = arenas[step.m_ScratchDomain] ? arenas[step.m_ScratchDomain]->Data() + step.m_ScratchOffset : nullptr;
        try {
            if (timeline) {
                const uint64_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
                StepProfiling profiling(*timeline, step.m_Name, step.m_Backend, thread);
                io.m_Profiling = &profiling;
                const uint64_t start = SteadyNowNs();
                step.m_Workload->Execute(io);
                timeline->Add(TimelineEvent{step.m_Name, step.m_Category, step.m_Backend, start, SteadyNowNs() - start,
                                            thread, {}});
            } else {
                step.m_Workload->Execute(io);
            }
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


// ---- dynamic networks --------------------------------------------------------------------------

/// A network optimized again per run: each distinct set of input shapes (plus the values of the
/// inputs in m_ValueInputs) gets its own optimized network, workloads and memory plan, kept in a
/// bounded LRU list. The list is guarded by a mutex; a specialization is built outside it (two
/// threads missing the same key may both build; the second result is dropped), and entries are
/// shared_ptrs, so an evicted one lives on until the calls running on it end.
class DynamicNetwork {
public:
    DynamicNetwork(IOptimizedNetworkPtr network, std::shared_ptr<const DynamicSource> source, const DeviceSpec& spec,
                   std::map<BackendId, std::map<std::string, std::string>> backendOptions, std::size_t maxEntries)
        : m_Network(std::move(network)), m_Source(std::move(source)), m_Spec(spec),
          m_BackendOptions(std::move(backendOptions)), m_MaxEntries(std::max<std::size_t>(maxEntries, 1)),
          m_ValueInputs(m_Source->m_ValueInputs) {
        for (const auto& l : m_Source->m_Graph->Layers()) {
            if (l->GetType() != LayerType::Input) continue;
            const LayerBindingId id = l->Desc<BindingDescriptor>().m_BindingId;
            m_Inputs[id] = {l->Name(), l->Output(0).GetTensorInfo()};
        }
    }

    const TensorInfo& GetInputInfo(LayerBindingId id) const {
        auto it = m_Inputs.find(id);
        if (it == m_Inputs.end()) {
            throw InvalidArgumentException("the network has no input with binding id " + std::to_string(id));
        }
        return it->second.m_Info;
    }

    struct Specialization {
        std::string m_Key;
        std::shared_ptr<LoadedNetwork> m_Network;
        std::set<LayerBindingId> m_Pinned;  ///< inputs that became constants (not passed on)
        std::string m_Note;                 ///< " for inputs <shapes>", for errors
    };

    /// The specialization for `inputs` (checked against the declared inputs), built on a miss.
    std::shared_ptr<const Specialization> Get(const InputTensors& inputs) {
        std::map<LayerBindingId, ConstTensor> given = CheckInputs(inputs);
        for (int attempt = 0;; ++attempt) {
            std::set<LayerBindingId> values;
            {
                std::lock_guard<std::mutex> lock(m_Mutex);
                values = m_ValueInputs;
            }
            const std::string key = MakeKey(given, values);
            {
                std::lock_guard<std::mutex> lock(m_Mutex);
                for (auto it = m_Entries.begin(); it != m_Entries.end(); ++it) {
                    if ((*it)->m_Key != key) continue;
                    m_Entries.splice(m_Entries.begin(), m_Entries, it);  // most recently used first
                    return m_Entries.front();
                }
            }
            auto entry = std::make_shared<Specialization>();
            entry->m_Key = key;
            entry->m_Pinned = values;
            std::string shapes;
            for (const auto& [id, t] : given) {
                shapes += (shapes.empty() ? "" : ", ") + m_Inputs.at(id).m_Name + " " + t.GetShape().ToString();
            }
            entry->m_Note = " for this run's inputs (" + shapes + ")";
            try {
                std::vector<std::string> log;
                IOptimizedNetworkPtr optimized = OptimizeSpecialization(*m_Source, given, values, m_Spec, log);
                entry->m_Network = std::make_shared<LoadedNetwork>(std::move(optimized), m_Spec, m_BackendOptions);
            } catch (const NeedsInputValues& needs) {
                std::lock_guard<std::mutex> lock(m_Mutex);
                const std::size_t before = m_ValueInputs.size();
                m_ValueInputs.insert(needs.m_Bindings.begin(), needs.m_Bindings.end());
                // Nothing new to pin: the values are needed but cannot be had (cannot happen
                // when every binding found is pinned; kept as a guard against looping).
                if (m_ValueInputs.size() == before || attempt > static_cast<int>(m_Inputs.size())) {
                    throw LayerValidationException(needs.m_Message);
                }
                continue;
            } catch (const Exception& e) {
                RethrowWithContext(e, "specializing the network" + entry->m_Note + ": ");
            }
            std::lock_guard<std::mutex> lock(m_Mutex);
            for (auto it = m_Entries.begin(); it != m_Entries.end(); ++it) {
                if ((*it)->m_Key == key) return *it;  // another thread built it meanwhile
            }
            m_Entries.push_front(entry);
            ++m_Stats.m_Built;
            while (m_Entries.size() > m_MaxEntries) {
                m_Entries.pop_back();
                ++m_Stats.m_Evicted;
            }
            return entry;
        }
    }

    void Execute(const InputTensors& inputs, const OutputTensors& outputs, Timeline* timeline) {
        std::shared_ptr<const Specialization> s = Get(inputs);
        InputTensors passed;
        for (const auto& [id, t] : inputs) {
            if (!s->m_Pinned.count(id)) passed.emplace_back(id, t);
        }
        s->m_Network->Execute(passed, outputs, s->m_Note, timeline);
    }

    IRuntime::SpecializationStats GetStats() const {
        std::lock_guard<std::mutex> lock(m_Mutex);
        IRuntime::SpecializationStats stats = m_Stats;
        stats.m_Cached = m_Entries.size();
        return stats;
    }
    std::size_t GetArenaBytes() const {
        std::lock_guard<std::mutex> lock(m_Mutex);
        std::size_t most = 0;
        for (const auto& e : m_Entries) most = std::max(most, e->m_Network->GetArenaBytes());
        return most;
    }
    std::size_t GetUnplannedBytes() const {
        std::lock_guard<std::mutex> lock(m_Mutex);
        std::size_t most = 0;
        for (const auto& e : m_Entries) most = std::max(most, e->m_Network->GetUnplannedBytes());
        return most;
    }

private:
    struct DeclaredInput {
        std::string m_Name;
        TensorInfo m_Info;
    };

    [[noreturn]] static void RethrowWithContext(const Exception& e, const std::string& prefix) {
        const std::string msg = prefix + e.what();
        if (dynamic_cast<const BackendUnavailableException*>(&e)) throw BackendUnavailableException(msg);
        if (dynamic_cast<const LayerValidationException*>(&e)) throw LayerValidationException(msg);
        if (dynamic_cast<const InvalidArgumentException*>(&e)) throw InvalidArgumentException(msg);
        if (dynamic_cast<const MemoryException*>(&e)) throw MemoryException(msg);
        if (dynamic_cast<const ResourceLimitException*>(&e)) throw ResourceLimitException(msg);
        throw RuntimeException(msg);
    }

    /// Every declared input given once, with its type, its rank and the dims it fixes.
    std::map<LayerBindingId, ConstTensor> CheckInputs(const InputTensors& inputs) const {
        std::map<LayerBindingId, ConstTensor> given;
        for (const auto& [id, t] : inputs) {
            auto it = m_Inputs.find(id);
            if (it == m_Inputs.end()) {
                throw InvalidArgumentException("EnqueueWorkload: the network has no input with binding id " +
                                               std::to_string(id));
            }
            if (!given.emplace(id, t).second) {
                throw InvalidArgumentException("EnqueueWorkload: input " + std::to_string(id) + " is given twice");
            }
            const TensorInfo& want = it->second.m_Info;
            const TensorShape& ws = want.GetShape();
            const TensorShape& gs = t.GetShape();
            bool ok = t.GetDataType() == want.GetDataType() && gs.GetNumDimensions() == ws.GetNumDimensions() &&
                      gs.AreAllDimensionsSpecified();
            for (unsigned int d = 0; ok && d < ws.GetNumDimensions(); ++d) ok = ws[d] == kUnknownDim || ws[d] == gs[d];
            if (!ok) {
                throw InvalidArgumentException("EnqueueWorkload: input " + std::to_string(id) + " ('" +
                                               it->second.m_Name + "') must be " + want.ToString() +
                                               " ('?' dims may take any size), got " + t.GetInfo().ToString());
            }
            if (!t.GetMemoryArea() && t.GetNumBytes() != 0) {
                throw InvalidArgumentException("EnqueueWorkload: input " + std::to_string(id) + " has no memory");
            }
        }
        for (const auto& [id, declared] : m_Inputs) {
            if (!given.count(id)) {
                throw InvalidArgumentException("EnqueueWorkload: input " + std::to_string(id) + " ('" +
                                               declared.m_Name + "', " + declared.m_Info.ToString() +
                                               ") was not given");
            }
        }
        return given;
    }

    static std::string MakeKey(const std::map<LayerBindingId, ConstTensor>& given,
                               const std::set<LayerBindingId>& values) {
        std::string key;
        auto put = [&key](const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); };
        for (const auto& [id, t] : given) {
            put(&id, sizeof(id));
            const unsigned int rank = t.GetNumDimensions();
            put(&rank, sizeof(rank));
            put(t.GetShape().GetDims().data(), rank * sizeof(unsigned int));
            if (values.count(id) && t.GetNumBytes()) put(t.GetMemoryArea(), t.GetNumBytes());
        }
        return key;
    }

    IOptimizedNetworkPtr m_Network;  // keeps the backend factories its source's layers may need
    std::shared_ptr<const DynamicSource> m_Source;
    const DeviceSpec& m_Spec;
    const std::map<BackendId, std::map<std::string, std::string>> m_BackendOptions;
    const std::size_t m_MaxEntries;
    std::map<LayerBindingId, DeclaredInput> m_Inputs;
    mutable std::mutex m_Mutex;
    std::set<LayerBindingId> m_ValueInputs;
    std::list<std::shared_ptr<const Specialization>> m_Entries;
    IRuntime::SpecializationStats m_Stats;
};

/// What the runtime holds per NetworkId: a loaded network, or a dynamic one.
struct NetworkEntry {
    std::shared_ptr<LoadedNetwork> m_Static;
    std::unique_ptr<DynamicNetwork> m_Dynamic;
    Timeline m_Timeline;
    /// Whether EnqueueWorkload() records into m_Timeline (SetTimelineRecording).
    std::atomic<bool> m_RecordTimeline{false};
};

// ---- the runtime -----------------------------------------------------------------------------

/// The runtime's side of backend profiling: named counters, updated concurrently.
class BackendProfiling final : public IBackendProfiling {
public:
    explicit BackendProfiling(BackendId backend) : m_Backend(std::move(backend)) {}
    uint16_t RegisterCounter(const std::string& name, const std::string&) override {
        std::lock_guard<std::mutex> lock(m_Mutex);
        m_Names.push_back(m_Backend.Get() + "/" + name);
        m_Values.push_back(std::make_unique<std::atomic<uint64_t>>(0));
        return static_cast<uint16_t>(m_Names.size() - 1);
    }
    void ReportCounterValue(uint16_t counterId, uint64_t delta) override {
        std::lock_guard<std::mutex> lock(m_Mutex);
        if (counterId < m_Values.size()) *m_Values[counterId] += delta;
    }
    void Collect(std::map<std::string, uint64_t>& out) const {
        std::lock_guard<std::mutex> lock(m_Mutex);
        for (std::size_t i = 0; i < m_Names.size(); ++i) out[m_Names[i]] = m_Values[i]->load();
    }
private:
    BackendId m_Backend;
    mutable std::mutex m_Mutex;
    std::vector<std::string> m_Names;
    std::vector<std::unique_ptr<std::atomic<uint64_t>>> m_Values;
};

class RuntimeImpl final : public IRuntime {
public:
    explicit RuntimeImpl(const CreationOptions& options) : m_Options(options) {
        // Dynamic backends register first, so they take part in everything below.
        m_Dynamic = DynamicBackendSet::Load(options.m_DynamicBackendsPath);
        for (const auto& [id, allocator] : options.m_CustomAllocatorMap) {
            if (!BackendRegistryInstance().IsBackendRegistered(id)) {
                throw InvalidArgumentException("custom allocator given for backend '" + id.Get() +
                                               "', which is not registered (registered: " +
                                               BackendRegistryInstance().GetBackendIdsAsString() + ")");
            }
            std::string reason;
            IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
            if (!allocator || !backend->UseCustomMemoryAllocator(allocator, &reason)) {
                throw InvalidArgumentException("backend '" + id.Get() + "' does not accept the custom allocator: " +
                                               (allocator ? reason : std::string("the allocator is null")));
            }
            m_DeviceSpec.m_CustomAllocators[id] = allocator;
        }
        for (const BackendId& id : BackendRegistryInstance().GetBackendIds()) {
            m_DeviceSpec.m_Backends.push_back(id);
            m_BackendFactories.push_back(BackendRegistryInstance().GetFactory(id));
            IBackendInternalUniquePtr backend = m_BackendFactories.back()();
            if (!backend) continue;
            if (IBackendContextPtr ctx = backend->CreateBackendContext(options)) m_Contexts[id] = std::move(ctx);
            if (const auto o = options.m_BackendOptions.find(id);
                o != options.m_BackendOptions.end() && !o->second.empty() &&
                BackendRegistryInstance().GetApiVersion(id).AtLeast(BackendVersion{1, 2})) {
                for (const std::string& w : backend->GetOptionWarnings(o->second)) m_OptionWarnings.push_back(id.Get() + ": " + w);
            }
            if (options.m_ProfilingOptions.m_EnableProfiling) {
                auto profiling = std::make_unique<BackendProfiling>(id);
                if (IBackendProfilingContextPtr pctx = backend->CreateBackendProfilingContext(options, *profiling)) {
                    pctx->RegisterCounters();
                    pctx->EnableProfiling(true);
                    m_ProfilingContexts.emplace_back(std::move(pctx), std::move(profiling));
                }
            }
        }
    }

    ~RuntimeImpl() override {
        std::vector<NetworkId> ids;
        {
            std::shared_lock lock(m_Mutex);
            for (const auto& [id, n] : m_Networks) ids.push_back(id);
        }
        for (NetworkId id : ids) UnloadNetwork(id);
        // Objects created by dynamic backends go before their files are closed. A profiling
        // context goes before the counter sink it was given: a backend's device shared by several
        // runtimes may report to the context from another thread until the context is gone.
        for (auto& entry : m_ProfilingContexts) entry.first.reset();
        m_ProfilingContexts.clear();
        m_Contexts.clear();
        m_BackendFactories.clear();
        m_Dynamic.reset();
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
        auto loaded = std::make_shared<NetworkEntry>();
        loaded->m_RecordTimeline = m_Options.m_ProfilingOptions.m_RecordTimeline;
        try {
            auto* impl = dynamic_cast<OptimizedNetworkImpl*>(network.get());
            if (impl && impl->GetDynamic()) {
                // Planned per run (DynamicNetwork): nothing to create until the input shapes are known.
                std::shared_ptr<const DynamicSource> source = impl->GetDynamic();
                loaded->m_Dynamic = std::make_unique<DynamicNetwork>(std::move(network), std::move(source),
                                                                     m_DeviceSpec, m_Options.m_BackendOptions,
                                                                     m_Options.m_MaxSpecializations);
            } else {
                loaded->m_Static =
                    std::make_shared<LoadedNetwork>(std::move(network), m_DeviceSpec, m_Options.m_BackendOptions);
            }
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
        std::shared_ptr<NetworkEntry> victim;
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
        auto n = Get(networkId);
        return n->m_Dynamic ? n->m_Dynamic->GetInputInfo(layerId) : n->m_Static->GetInputInfo(layerId);
    }
    TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId) const override {
        auto n = Get(networkId);
        if (n->m_Dynamic) {
            throw InvalidArgumentException(
                "GetOutputTensorInfo: network " + std::to_string(networkId) +
                " is dynamic (its output shapes depend on its inputs); call GetOutputTensorInfo(networkId, " +
                std::to_string(layerId) + ", inputTensors)");
        }
        return n->m_Static->GetOutputInfo(layerId);
    }
    TensorInfo GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId, const InputTensors& inputs) override {
        auto n = Get(networkId);
        if (!n->m_Dynamic) return n->m_Static->GetOutputInfo(layerId);
        return n->m_Dynamic->Get(inputs)->m_Network->GetOutputInfo(layerId);
    }
    bool IsDynamic(NetworkId networkId) const override { return Get(networkId)->m_Dynamic != nullptr; }
    SpecializationStats GetSpecializationStats(NetworkId networkId) const override {
        auto n = Get(networkId);
        return n->m_Dynamic ? n->m_Dynamic->GetStats() : SpecializationStats{};
    }

    Status EnqueueWorkload(NetworkId networkId, const InputTensors& inputTensors,
                           const OutputTensors& outputTensors) override {
        auto n = Get(networkId);
        Timeline* timeline = n->m_RecordTimeline.load(std::memory_order_relaxed) ? &n->m_Timeline : nullptr;
        if (n->m_Dynamic) n->m_Dynamic->Execute(inputTensors, outputTensors, timeline);
        else n->m_Static->Execute(inputTensors, outputTensors, {}, timeline);
        return Status::Success;
    }

    const IDeviceSpec& GetDeviceSpec() const override { return m_DeviceSpec; }

    std::size_t GetPeakWorkingMemoryBytes(NetworkId networkId) const override {
        auto n = Get(networkId);
        return n->m_Dynamic ? n->m_Dynamic->GetArenaBytes() : n->m_Static->GetArenaBytes();
    }
    std::size_t GetUnplannedWorkingMemoryBytes(NetworkId networkId) const override {
        auto n = Get(networkId);
        return n->m_Dynamic ? n->m_Dynamic->GetUnplannedBytes() : n->m_Static->GetUnplannedBytes();
    }

    std::vector<DynamicBackendStatus> GetDynamicBackendStatus() const override { return m_Dynamic->GetStatus(); }
    std::vector<std::string> GetDynamicBackendWarnings() const override { return m_Dynamic->GetWarnings(); }
    std::vector<std::string> GetBackendOptionWarnings() const override { return m_OptionWarnings; }
    std::vector<TimelineEvent> TakeTimeline(NetworkId networkId) override { return Get(networkId)->m_Timeline.Take(); }
    void SetTimelineRecording(NetworkId networkId, bool record) override {
        Get(networkId)->m_RecordTimeline.store(record, std::memory_order_relaxed);
    }
    std::map<std::string, uint64_t> GetProfilingCounters() const override {
        std::map<std::string, uint64_t> out;
        for (const auto& [ctx, profiling] : m_ProfilingContexts) profiling->Collect(out);
        return out;
    }

private:
    std::shared_ptr<NetworkEntry> Get(NetworkId id) const {
        std::shared_lock lock(m_Mutex);
        auto it = m_Networks.find(id);
        if (it == m_Networks.end()) throw InvalidArgumentException("no network with id " + std::to_string(id) + " is loaded");
        return it->second;
    }

    CreationOptions m_Options;
    std::unique_ptr<DynamicBackendSet> m_Dynamic;
    // Destroyed after the contexts below: the factories of every backend they came from (a
    // dynamic backend's factory keeps its library open, even if another runtime loaded it).
    std::vector<BackendRegistry::FactoryFunction> m_BackendFactories;
    std::vector<std::pair<IBackendProfilingContextPtr, std::unique_ptr<BackendProfiling>>> m_ProfilingContexts;
    DeviceSpec m_DeviceSpec;
    std::map<BackendId, IBackendContextPtr> m_Contexts;
    std::vector<std::string> m_OptionWarnings;
    mutable std::shared_mutex m_Mutex;
    std::map<NetworkId, std::shared_ptr<NetworkEntry>> m_Networks;
    std::atomic<NetworkId> m_NextId{1};
};

}  // namespace trellis::core

namespace trellis {

std::vector<std::string> IRuntime::GetDefaultDynamicBackendPaths() { return core::GetDefaultDynamicBackendPaths(); }
IRuntime* IRuntime::CreateRaw(const CreationOptions& options) { return new core::RuntimeImpl(options); }
IRuntimePtr IRuntime::Create(const CreationOptions& options) { return IRuntimePtr(CreateRaw(options), &IRuntime::Destroy); }
void IRuntime::Destroy(IRuntime* runtime) { delete runtime; }

}  // namespace trellis
