// The Arm NN compatibility layer's Optimize() and IOptimizedNetwork.
#include "armnncompat/ArmnnNetwork.hpp"

#include <armnn/Utils.hpp>
#include <trellis/IRuntime.hpp>

#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>

namespace armnn {

namespace detail {

INetworkPtr NetworkAccess::Wrap(trellis::INetworkPtr network) {
    INetworkPtr net = INetwork::Create();
    net->pNetworkImpl->m_Parsed = std::move(network);
    return net;
}

IOptimizedNetworkPtr NetworkAccess::MakeOptimized(trellis::IOptimizedNetworkPtr network, size_t numInputs,
                                                  size_t numOutputs) {
    IOptimizedNetworkPtr opt(new IOptimizedNetwork(), &IOptimizedNetwork::Destroy);
    opt->pOptimizedNetworkImpl->m_Network = std::move(network);
    opt->pOptimizedNetworkImpl->m_Guid = NextGuid();
    opt->pOptimizedNetworkImpl->m_NumInputs = numInputs;
    opt->pOptimizedNetworkImpl->m_NumOutputs = numOutputs;
    return opt;
}

trellis::IOptimizedNetworkPtr NetworkAccess::Take(IOptimizedNetwork& network) {
    if (!network.pOptimizedNetworkImpl->m_Network)
        throw InvalidArgumentException("IOptimizedNetwork: this network was already loaded into a runtime");
    return std::move(network.pOptimizedNetworkImpl->m_Network);
}

namespace {

/// Optimizer option Debug: one line per tensor each time a Debug layer runs.
void PrintDebugTensor(const trellis::DebugTensorEvent& event) {
    static std::mutex mutex;
    std::ostringstream line;
    const trellis::ConstTensor& t = event.m_Value;
    line << "{ \"layerName\": \"" << event.m_Source.m_LayerName << "\", \"outputSlot\": " << event.m_Source.m_OutputIndex
         << ", \"backend\": \"" << event.m_Source.m_Backend.Get() << "\", \"shape\": \"" << t.GetShape().ToString()
         << "\", \"type\": \"" << trellis::GetDataTypeName(t.GetDataType()) << "\", \"data\": [";
    const size_t n = t.GetNumElements();
    for (size_t i = 0; i < n; ++i) line << (i ? ", " : "") << trellis::GetElementAsDouble(t, i);
    line << "] }\n";
    std::lock_guard<std::mutex> lock(mutex);
    std::cout << line.str() << std::flush;
}

}  // namespace

}  // namespace detail

// ---- OptimizerOptionsOpaque ----

OptimizerOptionsOpaque::OptimizerOptionsOpaque(bool reduceFp32ToFp16, bool debug, bool reduceFp32ToBf16,
                                               bool importEnabled, ModelOptions modelOptions, bool exportEnabled,
                                               bool debugToFile) {
    m_Options.m_ReduceFp32ToFp16 = reduceFp32ToFp16;
    m_Options.m_Debug = debug;
    m_Options.m_ReduceFp32ToBf16 = reduceFp32ToBf16;
    m_Options.m_ImportEnabled = importEnabled;
    m_Options.m_ModelOptions = std::move(modelOptions);
    m_Options.m_ExportEnabled = exportEnabled;
    m_Options.m_DebugToFile = debugToFile;
}

std::string OptimizerOptionsOpaque::ToString() const {
    std::ostringstream s;
    s << "OptimizerOptions:\n"
      << "  ReduceFp32ToFp16: " << m_Options.m_ReduceFp32ToFp16 << "\n"
      << "  ReduceFp32ToBf16: " << m_Options.m_ReduceFp32ToBf16 << "\n"
      << "  Debug: " << m_Options.m_Debug << "\n"
      << "  DebugToFile: " << m_Options.m_DebugToFile << "\n"
      << "  ShapeInferenceMethod: "
      << (m_Options.m_shapeInferenceMethod == ShapeInferenceMethod::ValidateOnly ? "ValidateOnly" : "InferAndValidate")
      << "\n"
      << "  ImportEnabled: " << m_Options.m_ImportEnabled << "\n"
      << "  ExportEnabled: " << m_Options.m_ExportEnabled << "\n"
      << "  ProfilingEnabled: " << m_Options.m_ProfilingEnabled << "\n"
      << "  AllowExpandedDims: " << m_Options.m_AllowExpandedDims << "\n"
      << "  ModelOptions:\n";
    for (const auto& o : m_Options.m_ModelOptions)
        for (size_t i = 0; i < o.GetOptionCount(); ++i)
            s << "    " << o.GetBackendId().Get() << ": " << o.GetOption(i).GetName() << " = "
              << o.GetOption(i).GetValue().ToString() << "\n";
    return s.str();
}

// ---- Optimize ----

IOptimizedNetworkPtr Optimize(const INetwork& network, const std::vector<BackendId>& backendPreferences,
                              const IDeviceSpec& deviceSpec, const OptimizerOptionsOpaque& options,
                              Optional<std::vector<std::string>&> messages) {
    auto report = [&](LogSeverity severity, const std::string& text) {
        LogMessage(severity, text);
        if (messages) messages.value().push_back(text);
    };
    const detail::NetworkImpl& impl = detail::NetworkAccess::Impl(network);
    bool reported = false;
    try {
        if (options.GetReduceFp32ToBf16())
            throw UnimplementedException("Optimize: ReduceFp32ToBf16 is not covered; CpuAcc's bfloat16 fast math is its "
                                         "runtime backend option \"FastMathEnabled\" (IRuntime::CreationOptions::"
                                         "m_BackendOptions)");
        trellis::OptimizerOptions to;
        to.m_ReduceFp32ToFp16 = options.GetReduceFp32ToFp16();
        if (options.GetDebugToFileEnabled()) {
            to.m_Debug = true;
            std::filesystem::path folder = std::filesystem::temp_directory_path() / "ArmNNIntermediateLayerOutputs";
            std::filesystem::create_directories(folder);
            to.m_DebugToFolder = folder.string();
        } else if (options.GetDebugEnabled()) {
            to.m_Debug = true;
            to.m_DebugCallback = &detail::PrintDebugTensor;
        }
        for (const BackendOptions& o : options.GetModelOptions())
            for (size_t i = 0; i < o.GetOptionCount(); ++i)
                report(LogSeverity::Warning,
                       "Optimize: model option \"" + o.GetOption(i).GetName() + "\" of backend " + o.GetBackendId().Get() +
                           " is not applied (Trellis's Optimize takes no backend options); pass it as "
                           "IRuntime::CreationOptions::m_BackendOptions");

        const std::vector<trellis::BackendId> prefs(backendPreferences.begin(), backendPreferences.end());
        trellis::INetworkPtr lowered{nullptr, &trellis::INetwork::Destroy};
        const trellis::INetwork* source = impl.m_Parsed.get();
        if (!source) {
            lowered = impl.Lower();
            source = lowered.get();
        }
        std::vector<std::string> trellisMessages;
        trellis::IOptimizedNetworkPtr optimized{nullptr, &trellis::IOptimizedNetwork::Destroy};
        try {
            optimized = trellis::Optimize(*source, prefs, deviceSpec, to, &trellisMessages);
        } catch (const trellis::Exception&) {
            // trellis::Optimize put the error's text into trellisMessages: report it once, below.
            for (const auto& m : trellisMessages) report(LogSeverity::Error, m);
            reported = true;
            throw;
        }
        for (const auto& m : trellisMessages) report(LogSeverity::Warning, m);
        return detail::NetworkAccess::MakeOptimized(std::move(optimized), network.GetNumInputs(), network.GetNumOutputs());
    } catch (const trellis::Exception& e) {
        // Errors raised here (not by trellis::Optimize, which reported its own above).
        if (!reported) report(LogSeverity::Error, e.what());
        throw;
    }
}

// ---- IOptimizedNetwork ----

IOptimizedNetwork::IOptimizedNetwork() : pOptimizedNetworkImpl(std::make_unique<detail::OptimizedNetworkImpl>()) {}
IOptimizedNetwork::~IOptimizedNetwork() = default;
void IOptimizedNetwork::Destroy(IOptimizedNetwork* network) { delete network; }
LayerGuid IOptimizedNetwork::GetGuid() const { return pOptimizedNetworkImpl->m_Guid; }
size_t IOptimizedNetwork::GetNumInputs() const { return pOptimizedNetworkImpl->m_NumInputs; }
size_t IOptimizedNetwork::GetNumOutputs() const { return pOptimizedNetworkImpl->m_NumOutputs; }

const trellis::IOptimizedNetwork& IOptimizedNetwork::GetTrellisNetwork() const {
    if (!pOptimizedNetworkImpl->m_Network)
        throw InvalidArgumentException("IOptimizedNetwork: this network was already loaded into a runtime");
    return *pOptimizedNetworkImpl->m_Network;
}

Status IOptimizedNetwork::PrintGraph() {
    std::cout << GetTrellisNetwork().ToString();
    return Status::Success;
}

namespace {
/// Escapes what Graphviz's record labels treat specially.
std::string DotEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '{' || c == '}' || c == '|' || c == '<' || c == '>' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}
}  // namespace

Status IOptimizedNetwork::SerializeToDot(std::ostream& stream) const {
    const trellis::IOptimizedNetwork& net = GetTrellisNetwork();
    stream << "digraph Optimized {\n"
           << "    node [shape=\"record\"];\n"
           << "    edge [fontsize=8 fontcolor=\"blue\" fontname=\"arial-bold\"];\n";
    const auto layers = net.GetLayers();
    for (const trellis::IConnectableLayer* l : layers) {
        stream << "    " << l->GetGuid() << " [label=\"{" << DotEscape(l->GetName()) << "|"
               << DotEscape(trellis::GetLayerTypeName(l->GetType())) << "|"
               << DotEscape(l->GetBackendId().IsEmpty() ? std::string("-") : l->GetBackendId().Get()) << "}\"];\n";
    }
    for (const trellis::IConnectableLayer* l : layers) {
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            const trellis::IOutputSlot* src = l->GetInputSlot(i).GetConnection();
            if (!src) continue;
            stream << "    " << src->GetOwningIConnectableLayer().GetGuid() << " -> " << l->GetGuid() << " [label=\"< "
                   << DotEscape(src->GetTensorInfo().ToString()) << " >\"];\n";
        }
    }
    stream << "}\n";
    return stream ? Status::Success : Status::Failure;
}

}  // namespace armnn
