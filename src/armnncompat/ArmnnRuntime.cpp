// The Arm NN compatibility layer's IRuntime and IProfiler, over trellis::IRuntime.
#include "armnncompat/ArmnnInternal.hpp"

#include <armnn/IRuntime.hpp>
#include <armnn/Utils.hpp>

#include <algorithm>
#include <iomanip>
#include <map>
#include <mutex>
#include <ostream>

namespace armnn {

namespace detail {

struct RuntimeImpl {
    ~RuntimeImpl() {
        // Profilers handed out may outlive the runtime: they stop reaching it.
        for (auto& [id, profiler] : m_Profilers) Detach(*profiler);
    }
    static void Detach(IProfiler& profiler) {
        std::lock_guard<std::mutex> lock(profiler.GetImpl().m_Mutex);
        profiler.GetImpl().m_SetRecording = nullptr;
    }
    trellis::IRuntimePtr m_Runtime{nullptr, &trellis::IRuntime::Destroy};
    mutable std::mutex m_Mutex;
    std::map<NetworkId, std::shared_ptr<IProfiler>> m_Profilers;
};

namespace {
trellis::IRuntime::CreationOptions ToTrellis(const IRuntime::CreationOptions& options) {
    if (options.m_ProtectedMode)
        throw InvalidArgumentException("IRuntime::Create: m_ProtectedMode is not covered (Trellis has no protected-memory "
                                       "mode)");
    trellis::IRuntime::CreationOptions to;
    to.m_DynamicBackendsPath = options.m_DynamicBackendsPath;
    for (const BackendOptions& o : options.m_BackendOptions)
        for (size_t i = 0; i < o.GetOptionCount(); ++i)
            to.m_BackendOptions[o.GetBackendId()][o.GetOption(i).GetName()] = o.GetOption(i).GetValue().ToString();
    to.m_ProfilingOptions.m_EnableProfiling = options.m_ProfilingOptions.m_EnableProfiling;
    // Workload times are recorded per network while its IProfiler is enabled
    // (trellis::IRuntime::SetTimelineRecording), so a network nobody profiles pays nothing.
    to.m_ProfilingOptions.m_RecordTimeline = false;
    return to;
}
}  // namespace

}  // namespace detail

IRuntime::IRuntime(const CreationOptions& options) : pRuntimeImpl(std::make_unique<detail::RuntimeImpl>()) {
    pRuntimeImpl->m_Runtime = trellis::IRuntime::Create(detail::ToTrellis(options));
    for (const std::string& w : pRuntimeImpl->m_Runtime->GetDynamicBackendWarnings()) LogMessage(LogSeverity::Warning, w);
    for (const std::string& w : pRuntimeImpl->m_Runtime->GetBackendOptionWarnings()) LogMessage(LogSeverity::Warning, w);
}
IRuntime::~IRuntime() = default;
IRuntime* IRuntime::CreateRaw(const CreationOptions& options) { return new IRuntime(options); }
IRuntimePtr IRuntime::Create(const CreationOptions& options) { return IRuntimePtr(CreateRaw(options), &IRuntime::Destroy); }
void IRuntime::Destroy(IRuntime* runtime) { delete runtime; }
trellis::IRuntime& IRuntime::GetTrellisRuntime() { return *pRuntimeImpl->m_Runtime; }
const IDeviceSpec& IRuntime::GetDeviceSpec() const { return pRuntimeImpl->m_Runtime->GetDeviceSpec(); }

Status IRuntime::LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network) {
    std::string error;
    return LoadNetwork(networkIdOut, std::move(network), error);
}

Status IRuntime::LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage) {
    return LoadNetwork(networkIdOut, std::move(network), errorMessage,
                       INetworkProperties(false, MemorySource::Undefined, MemorySource::Undefined));
}

Status IRuntime::LoadNetwork(NetworkId& networkIdOut, IOptimizedNetworkPtr network, std::string& errorMessage,
                             const INetworkProperties& properties) {
    auto fail = [&](const std::string& message) {
        errorMessage = message;
        LogMessage(LogSeverity::Error, message);
        return Status::Failure;
    };
    if (!network) return fail("IRuntime::LoadNetwork: the network is null (did Optimize fail?)");
    for (auto [what, source] : {std::pair{"input", properties.m_InputSource}, std::pair{"output", properties.m_OutputSource}})
        if (source != MemorySource::Undefined && source != MemorySource::Malloc)
            return fail(std::string("IRuntime::LoadNetwork: INetworkProperties' ") + what + " memory source " +
                        std::to_string(static_cast<unsigned int>(source)) +
                        " is not covered (Undefined and Malloc are: Trellis uses the caller's buffers as they are)");
    trellis::IOptimizedNetworkPtr net{nullptr, &trellis::IOptimizedNetwork::Destroy};
    try {
        net = detail::NetworkAccess::Take(*network);
    } catch (const trellis::Exception& e) {
        return fail(e.what());
    }
    auto profiler = std::make_shared<IProfiler>();
    for (const auto& p : net->GetLayerPlacements())
        profiler->GetImpl().m_Layers.push_back({p.m_LayerName, trellis::GetLayerTypeName(p.m_Type), p.m_Backend.Get()});
    profiler->GetImpl().m_Enabled = properties.m_ProfilingEnabled;
    profiler->GetImpl().m_Details = properties.m_OutputNetworkDetailsMethod;
    std::string error;
    if (pRuntimeImpl->m_Runtime->LoadNetwork(networkIdOut, std::move(net), error) != Status::Success)
        return fail("IRuntime::LoadNetwork: " + error);
    trellis::IRuntime* runtime = pRuntimeImpl->m_Runtime.get();
    const NetworkId id = networkIdOut;
    profiler->GetImpl().m_SetRecording = [runtime, id](bool record) {
        try {
            runtime->SetTimelineRecording(id, record);
        } catch (const trellis::InvalidArgumentException&) {
            // Unloaded meanwhile (UnloadNetwork detaches the profiler right after): nothing to record.
        }
    };
    runtime->SetTimelineRecording(id, properties.m_ProfilingEnabled);
    std::lock_guard<std::mutex> lock(pRuntimeImpl->m_Mutex);
    pRuntimeImpl->m_Profilers[networkIdOut] = std::move(profiler);
    return Status::Success;
}

TensorInfo IRuntime::GetInputTensorInfo(NetworkId networkId, LayerBindingId layerId) const {
    return pRuntimeImpl->m_Runtime->GetInputTensorInfo(networkId, layerId);
}
TensorInfo IRuntime::GetOutputTensorInfo(NetworkId networkId, LayerBindingId layerId) const {
    return pRuntimeImpl->m_Runtime->GetOutputTensorInfo(networkId, layerId);
}

Status IRuntime::EnqueueWorkload(NetworkId networkId, const InputTensors& inputTensors,
                                 const OutputTensors& outputTensors, std::vector<ImportedInputId> preImportedInputIds,
                                 std::vector<ImportedOutputId> preImportedOutputIds) {
    if (!preImportedInputIds.empty() || !preImportedOutputIds.empty())
        throw UnimplementedException("IRuntime::EnqueueWorkload: pre-imported inputs and outputs are not covered "
                                     "(pass the tensors in inputTensors and outputTensors)");
    trellis::InputTensors inputs(inputTensors.begin(), inputTensors.end());
    trellis::IRuntime& runtime = *pRuntimeImpl->m_Runtime;
    Status status = Status::Failure;
    try {
        status = runtime.EnqueueWorkload(networkId, inputs, outputTensors);
    } catch (const InvalidArgumentException&) {
        throw;  // an unknown network or a bad binding: nothing ran
    } catch (...) {
        runtime.TakeTimeline(networkId);  // a failed run's events are not an inference
        throw;
    }
    // The events of this run (and, when runs overlap on other threads, of theirs).
    std::vector<trellis::TimelineEvent> events = runtime.TakeTimeline(networkId);
    std::shared_ptr<IProfiler> profiler = GetProfiler(networkId);
    if (profiler && !events.empty()) {
        detail::ProfilerImpl& p = profiler->GetImpl();
        std::lock_guard<std::mutex> lock(p.m_Mutex);
        if (p.m_Enabled) p.m_Inferences.push_back(std::move(events));
    }
    return status;
}

Status IRuntime::UnloadNetwork(NetworkId networkId) {
    const Status status = pRuntimeImpl->m_Runtime->UnloadNetwork(networkId);
    std::lock_guard<std::mutex> lock(pRuntimeImpl->m_Mutex);
    auto it = pRuntimeImpl->m_Profilers.find(networkId);
    if (it != pRuntimeImpl->m_Profilers.end()) {
        detail::RuntimeImpl::Detach(*it->second);
        pRuntimeImpl->m_Profilers.erase(it);
    }
    return status;
}

const std::shared_ptr<IProfiler> IRuntime::GetProfiler(NetworkId networkId) const {
    std::lock_guard<std::mutex> lock(pRuntimeImpl->m_Mutex);
    auto it = pRuntimeImpl->m_Profilers.find(networkId);
    return it == pRuntimeImpl->m_Profilers.end() ? nullptr : it->second;
}

// ---- IProfiler ----

IProfiler::IProfiler() : pProfilerImpl(std::make_unique<detail::ProfilerImpl>()) {}
IProfiler::~IProfiler() = default;

void IProfiler::EnableProfiling(bool enableProfiling) {
    std::lock_guard<std::mutex> lock(pProfilerImpl->m_Mutex);
    pProfilerImpl->m_Enabled = enableProfiling;
    if (pProfilerImpl->m_SetRecording) pProfilerImpl->m_SetRecording(enableProfiling);
}
bool IProfiler::IsProfilingEnabled() {
    std::lock_guard<std::mutex> lock(pProfilerImpl->m_Mutex);
    return pProfilerImpl->m_Enabled;
}
void IProfiler::EnableNetworkDetailsToStdOut(ProfilingDetailsMethod detailsMethod) {
    std::lock_guard<std::mutex> lock(pProfilerImpl->m_Mutex);
    pProfilerImpl->m_Details = detailsMethod;
}

namespace {
std::string JsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += ' ';
            continue;
        }
        out += c;
    }
    return out + "\"";
}
}  // namespace

void IProfiler::Print(std::ostream& out) const {
    std::lock_guard<std::mutex> lock(pProfilerImpl->m_Mutex);
    const detail::ProfilerImpl& p = *pProfilerImpl;
    out << "{\n  \"Trellis\": {\n";
    bool first = true;
    if (p.m_Details != ProfilingDetailsMethod::Undefined) {
        out << "    \"layers\": [";
        for (size_t i = 0; i < p.m_Layers.size(); ++i)
            out << (i ? ",\n" : "\n") << "      {\"name\": " << JsonString(p.m_Layers[i].m_Name)
                << ", \"type\": " << JsonString(p.m_Layers[i].m_Type)
                << ", \"backend\": " << JsonString(p.m_Layers[i].m_Backend) << "}";
        out << "\n    ]";
        first = false;
    }
    if (p.m_Details != ProfilingDetailsMethod::DetailsOnly) {
        out << (first ? "" : ",\n") << "    \"inferences\": [";
        for (size_t i = 0; i < p.m_Inferences.size(); ++i) {
            out << (i ? ",\n" : "\n") << "      [";
            const auto& events = p.m_Inferences[i];
            for (size_t k = 0; k < events.size(); ++k)
                out << (k ? ",\n" : "\n") << "        {\"name\": " << JsonString(events[k].m_Name)
                    << ", \"category\": " << JsonString(events[k].m_Category)
                    << ", \"backend\": " << JsonString(events[k].m_Backend.Get())
                    << ", \"parent\": " << JsonString(events[k].m_Parent)
                    << ", \"wall_clock_time_us\": " << static_cast<double>(events[k].m_DurationNs) / 1000.0 << "}";
            out << "\n      ]";
        }
        out << "\n    ]";
    }
    out << "\n  }\n}\n";
}

void IProfiler::AnalyzeEventsAndWriteResults(std::ostream& out) const {
    struct Total {
        std::string m_Category;
        std::string m_Backend;
        size_t m_Calls = 0;
        uint64_t m_Ns = 0;
    };
    std::map<std::string, Total> totals;
    size_t inferences = 0;
    {
        std::lock_guard<std::mutex> lock(pProfilerImpl->m_Mutex);
        inferences = pProfilerImpl->m_Inferences.size();
        for (const auto& events : pProfilerImpl->m_Inferences)
            for (const auto& e : events) {
                if (!e.m_Parent.empty()) continue;  // a backend's event inside a workload: counted in the workload
                Total& t = totals[e.m_Name];
                t.m_Category = e.m_Category;
                t.m_Backend = e.m_Backend.Get();
                ++t.m_Calls;
                t.m_Ns += e.m_DurationNs;
            }
    }
    std::vector<std::pair<std::string, Total>> rows(totals.begin(), totals.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.m_Ns > b.second.m_Ns; });
    out << "Inferences profiled: " << inferences << "\n";
    out << std::left << std::setw(40) << "Layer" << std::setw(16) << "Op" << std::setw(10) << "Backend" << std::right
        << std::setw(8) << "Calls" << std::setw(14) << "Total (us)" << std::setw(14) << "Mean (us)" << "\n";
    for (const auto& [name, t] : rows)
        out << std::left << std::setw(40) << name << std::setw(16) << t.m_Category << std::setw(10) << t.m_Backend
            << std::right << std::setw(8) << t.m_Calls << std::setw(14) << std::fixed << std::setprecision(1)
            << static_cast<double>(t.m_Ns) / 1000.0 << std::setw(14)
            << static_cast<double>(t.m_Ns) / 1000.0 / static_cast<double>(t.m_Calls) << "\n";
}

}  // namespace armnn
