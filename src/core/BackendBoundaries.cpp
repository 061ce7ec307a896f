// Phase 7 of Optimize(): copies and zero-copy imports at backend boundaries.
#include "BackendBoundaries.hpp"

#include "DeviceSpec.hpp"
#include "OptimizedNetwork.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <map>

namespace trellis::core {

std::shared_ptr<ICustomAllocator> GetWorkingMemoryAllocator(const BackendId& backend, const IDeviceSpec* spec) {
    if (backend.IsEmpty()) return nullptr;
    if (const auto* ds = dynamic_cast<const DeviceSpec*>(spec)) {
        auto it = ds->m_CustomAllocators.find(backend);
        if (it != ds->m_CustomAllocators.end()) return it->second;
    }
    return BackendRegistryInstance().GetFactory(backend)()->GetDefaultAllocator();
}

MemorySource GetWorkingMemorySource(const BackendId& backend, const IDeviceSpec* spec) {
    auto allocator = GetWorkingMemoryAllocator(backend, spec);
    return allocator ? allocator->GetMemorySourceType() : MemorySource::Malloc;
}

BackendId GetOutputMemoryOwner(const Layer& layer) {
    switch (layer.GetType()) {
        case LayerType::Input:
        case LayerType::Output:
        case LayerType::Constant: return BackendId();
        case LayerType::MemCopy: return layer.Desc<MemCopyDescriptor>().m_Destination;
        default: return layer.GetBackendId();
    }
}

namespace {

struct BackendMemoryFacts {
    MemorySource m_Source = MemorySource::Malloc;  // where its outputs live
    MemorySourceFlags m_Import = ToFlags(MemorySource::Malloc);
    bool m_ConstantsAtLoad = false;  // IBackendInternal::ImportsConstantsAtLoad (API 1.2)
    ILayerSupportSharedPtr m_Support;
};

const char* SourceName(MemorySource s) {
    switch (s) {
        case MemorySource::Undefined: return "Undefined";
        case MemorySource::Malloc: return "Malloc";
        case MemorySource::DmaBuf: return "DmaBuf";
        case MemorySource::DmaBufProtected: return "DmaBufProtected";
        case MemorySource::Gralloc: return "Gralloc";
        case MemorySource::Backend: return "Backend";
    }
    return "Unknown";
}

std::string MemoryName(const BackendId& owner) { return owner.IsEmpty() ? std::string("host") : owner.Get(); }

}  // namespace

void InsertBackendBoundaryCopies(Graph& graph, const IDeviceSpec* spec, std::vector<std::string>& log) {
    std::map<BackendId, BackendMemoryFacts> facts;
    auto factsOf = [&](const BackendId& id) -> const BackendMemoryFacts& {
        auto it = facts.find(id);
        if (it != facts.end()) return it->second;
        BackendMemoryFacts f;
        if (!id.IsEmpty()) {
            IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
            f.m_Import = backend->GetImportFlags();
            f.m_ConstantsAtLoad = BackendRegistryInstance().GetApiVersion(id).AtLeast(BackendVersion{1, 3}) &&
                                  backend->ImportsConstantsAtLoad();
            f.m_Support = backend->GetLayerSupport();
            f.m_Source = GetWorkingMemorySource(id, spec);
        }
        return facts.emplace(id, f).first->second;
    };

    unsigned int copies = 0;
    std::map<BackendId, unsigned int> constantsTakenAtLoad;
    for (Layer* producer : graph.TopologicalOrder()) {
        const BackendId owner = GetOutputMemoryOwner(*producer);
        const MemorySource source = factsOf(owner).m_Source;
        for (unsigned int o = 0; o < producer->GetNumOutputSlots(); ++o) {
            OutputSlot& slot = producer->Output(o);
            // Consumers that cannot read the producer's memory, grouped by the memory they read.
            std::map<BackendId, std::vector<InputSlot*>> needCopy;
            std::map<BackendId, bool> imported;
            std::map<BackendId, bool> constantsAtLoad;
            for (InputSlot* in : slot.GetConnections()) {
                Layer& consumer = in->GetOwningLayer();
                const BackendId reader = consumer.GetType() == LayerType::Output ? BackendId() : consumer.GetBackendId();
                if (producer->GetType() == LayerType::Constant && !reader.IsEmpty() && factsOf(reader).m_ConstantsAtLoad) {
                    constantsAtLoad[reader] = true;
                } else if (factsOf(reader).m_Import & ToFlags(source)) {
                    if (reader != owner) imported[reader] = true;
                } else {
                    needCopy[reader].push_back(in);
                }
            }
            for (const auto& [reader, yes] : constantsAtLoad) ++constantsTakenAtLoad[reader];
            for (const auto& [reader, yes] : imported) {
                log.push_back("zero-copy import: " + MemoryName(reader) + " reads " + Describe(*producer) + " output " +
                              std::to_string(o) + " from " + MemoryName(owner) + " memory (" + SourceName(source) + ")");
            }
            for (const auto& [reader, inputs] : needCopy) {
                // The side that owns the non-host memory runs the copy.
                const BackendId runner = source != MemorySource::Malloc ? owner : reader;
                if (runner.IsEmpty()) {
                    throw BackendUnavailableException("cannot move " + Describe(*producer) + " output " +
                                                      std::to_string(o) + " from " + MemoryName(owner) + " to " +
                                                      MemoryName(reader) + " memory: no backend owns the copy");
                }
                MemCopyDescriptor d;
                d.m_Destination = reader;
                Layer* copy = graph.AddLayer(LayerType::MemCopy, d,
                                             graph.UniqueName(producer->Name() + "_copy_to_" + MemoryName(reader)), 1, 1);
                copy->Output(0).SetTensorInfo(slot.GetTensorInfo());
                copy->SetBackendId(runner);
                for (InputSlot* in : inputs) {
                    slot.Disconnect(*in);
                    copy->Output(0).Connect(*in);
                }
                slot.Connect(copy->Input(0));
                std::string reason;
                if (!factsOf(runner).m_Support->IsLayerSupported(MakeQueueDescriptor(*copy), MakeWorkloadInfo(*copy), &reason)) {
                    throw BackendUnavailableException(
                        "backend '" + runner.Get() + "' must copy " + Describe(*producer) + " output " + std::to_string(o) +
                        " from " + MemoryName(owner) + " to " + MemoryName(reader) +
                        " memory but does not support MemCopy layers: " + reason);
                }
                log.push_back("inserted MemCopy '" + copy->Name() + "': " + MemoryName(owner) + " memory (" +
                              SourceName(source) + ") -> " + MemoryName(reader) + " memory, run by " + runner.Get());
                ++copies;
            }
        }
    }
    for (const auto& [reader, n] : constantsTakenAtLoad) {
        log.push_back("constants imported at load: " + std::to_string(n) + " read by " + reader.Get() +
                      ", which takes them when its workloads are created (no MemCopy)");
    }
    if (copies) log.push_back("backend boundaries: " + std::to_string(copies) + " MemCopy layers inserted");
}

}  // namespace trellis::core
