#include "Common.hpp"

#include <trellis/backends/BackendRegistry.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>

namespace trellis::cli {

std::vector<OptionSpec> ModelOptionSpecs() {
    return {
        {"backends", true, false},
        {"shape", true, true},
        {"dynamic-backends-path", true, false},
        {"max-tensor-bytes", true, false},
        {"max-working-memory", true, false},
    };
}

std::vector<OptionSpec> BackendTuningOptionSpecs() {
    return {
        {"threads", true, false},
        {"backend-option", true, true},
    };
}

ModelOptions ReadModelOptions(const ParsedArgs& args, const std::string& command) {
    ModelOptions options;
    options.m_ModelPath = RequireModelPath(args, command);
    options.m_Backends = args.Get("backends") ? ParseBackendList(*args.Get("backends")) : DefaultBackends();
    options.m_InputShapes = ParseShapeOptions(args.GetAll("shape"));
    options.m_DynamicBackendsPath = ReadDynamicBackendsPath(args);
    options.m_MaxTensorBytes = ParseByteCount(args.Get("max-tensor-bytes").value_or("0"), "max-tensor-bytes");
    options.m_MaxWorkingMemoryBytes =
        ParseByteCount(args.Get("max-working-memory").value_or("0"), "max-working-memory");
    return options;
}

std::string ReadDynamicBackendsPath(const ParsedArgs& args) {
    auto dir = args.Get("dynamic-backends-path");
    if (dir && dir->empty()) {
        throw UsageError("option '--dynamic-backends-path' expects a directory, got ''");
    }
    return dir.value_or("");
}

IRuntimePtr CreateRuntime(const ParsedArgs& args) {
    IRuntime::CreationOptions creation;
    creation.m_DynamicBackendsPath = ReadDynamicBackendsPath(args);
    IRuntimePtr runtime = IRuntime::Create(creation);
    if (!runtime) {
        throw RuntimeException("could not create the runtime");
    }
    return runtime;
}

uint32_t ReadSeed(const ParsedArgs& args) {
    return static_cast<uint32_t>(ParseUnsigned(args.Get("seed").value_or("0"), "seed", 0, UINT32_MAX));
}

namespace {

unsigned int ReadThreads(const ParsedArgs& args) {
    return static_cast<unsigned int>(ParseUnsigned(args.Get("threads").value_or("0"), "threads", 0, 1024));
}

void ReadBackendOptions(const ParsedArgs& args, ModelOptions& options) {
    for (const std::string& text : args.GetAll("backend-option")) {
        const std::size_t colon = text.find(':');
        const std::size_t equals = colon == std::string::npos ? std::string::npos : text.find('=', colon + 1);
        if (colon == std::string::npos || colon == 0 || equals == std::string::npos || equals == colon + 1) {
            throw UsageError("--backend-option '" + text + "': expected BACKEND:NAME=VALUE (e.g. CpuAcc:FastMath=bf16)");
        }
        options.m_BackendOptions[BackendId(text.substr(0, colon))][text.substr(colon + 1, equals - colon - 1)] =
            text.substr(equals + 1);
    }
}

}  // namespace

void ReadBackendTuning(const ParsedArgs& args, ModelOptions& options) {
    options.m_NumThreads = ReadThreads(args);
    ReadBackendOptions(args, options);
}

BackendIdVector DefaultBackends() {
    // CpuAcc registers itself when libtrellis is built with it; its layer support declines every
    // layer on a CPU it cannot use, so CpuRef then runs everything.
    if (BackendRegistryInstance().IsBackendRegistered("CpuAcc")) return {"CpuAcc", "CpuRef"};
    return {"CpuRef"};
}

// An unknown backend may be a dynamic one that was skipped, or whose path was not usable: say so.
void CheckBackendsRegistered(const BackendIdVector& backends, const IRuntime& runtime) {
    const BackendRegistry& registry = BackendRegistryInstance();
    for (const BackendId& id : backends) {
        if (registry.IsBackendRegistered(id)) {
            continue;
        }
        std::string why;
        for (const DynamicBackendStatus& s : runtime.GetDynamicBackendStatus()) {
            if (!s.m_Loaded && s.m_Id == id) {
                why += "; dynamic backend file '" + s.m_Path + "' (id " + id.Get() + ") was skipped: " + s.m_Reason;
            }
        }
        for (const std::string& warning : runtime.GetDynamicBackendWarnings()) {
            why += "; " + warning;
        }
        throw UsageError("unknown backend '" + id.Get() + "' in --backends: registered backends are " +
                         registry.GetBackendIdsAsString() + why);
    }
}

namespace {

// The parser reports a missing file itself, but a directory or unreadable path would reach the
// protobuf reader and come back as a vaguer parse error; name the actual problem instead.
void CheckModelFile(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        throw FileNotFoundException("model file '" + path + "' does not exist");
    }
    if (std::filesystem::is_directory(status)) {
        throw ParseException("model file '" + path + "' is a directory, not an .onnx file");
    }
}

}  // namespace

PreparedModel PrepareModel(const ModelOptions& options) {
    PreparedModel model;
    model.m_Options = options;

    // The runtime comes first: creating it loads dynamic backends, which register themselves, so
    // only then can --backends be checked against the registry.
    IRuntime::CreationOptions creation;
    creation.m_DynamicBackendsPath = options.m_DynamicBackendsPath;
    if (options.m_NumThreads != 0) {
        for (const BackendId& id : options.m_Backends) {
            creation.m_BackendOptions[id]["NumThreads"] = std::to_string(options.m_NumThreads);
        }
    }
    for (const auto& [id, values] : options.m_BackendOptions) {
        for (const auto& [name, value] : values) creation.m_BackendOptions[id][name] = value;
    }
    creation.m_ProfilingOptions.m_RecordTimeline = options.m_RecordTimeline;
    model.m_Runtime = IRuntime::Create(creation);
    if (!model.m_Runtime) {
        throw RuntimeException("could not create the runtime");
    }
    CheckBackendsRegistered(options.m_Backends, *model.m_Runtime);

    CheckModelFile(options.m_ModelPath);
    IOnnxParserPtr parser = IOnnxParser::Create();
    IOnnxParser::Options parseOptions;
    parseOptions.m_InputShapes = options.m_InputShapes;
    const int64_t parseStart = NowNs();
    INetworkPtr network = parser->CreateNetworkFromBinaryFile(options.m_ModelPath, parseOptions);
    model.m_ParseMs = MsSince(parseStart);
    if (!network) {
        throw ParseException("model file '" + options.m_ModelPath + "' gave no network");
    }
    model.m_Inputs = parser->GetInputs();
    model.m_Outputs = parser->GetOutputs();
    model.m_Opset = parser->GetOpsetVersion();

    std::vector<std::string> messages;
    OptimizerOptions optimizerOptions;
    optimizerOptions.m_MaxTensorBytes = options.m_MaxTensorBytes;
    optimizerOptions.m_MaxWorkingMemoryBytes = options.m_MaxWorkingMemoryBytes;
    const int64_t optimizeStart = NowNs();
    model.m_Optimized = Optimize(*network, options.m_Backends, model.m_Runtime->GetDeviceSpec(), optimizerOptions,
                                 &messages);
    model.m_OptimizeMs = MsSince(optimizeStart);
    if (!model.m_Optimized) {
        std::string text = "optimizing '" + options.m_ModelPath + "' failed";
        for (const std::string& m : messages) {
            text += ": " + m;
        }
        throw Exception(text);
    }
    model.m_Warnings = model.m_Runtime->GetBackendOptionWarnings();
    model.m_Warnings.insert(model.m_Warnings.end(), messages.begin(), messages.end());
    model.m_LayerCounts = model.m_Optimized->GetBackendLayerCounts();
    model.m_Network = std::move(network);
    return model;
}

NetworkId LoadPrepared(PreparedModel& model, double& loadMs) {
    NetworkId id = 0;
    std::string error;
    const int64_t start = NowNs();
    const Status status = model.m_Runtime->LoadNetwork(id, std::move(model.m_Optimized), error);
    loadMs = MsSince(start);
    if (status != Status::Success) {
        throw RuntimeException("loading '" + model.m_Options.m_ModelPath + "' failed: " +
                               (error.empty() ? std::string("no reason given") : error));
    }
    return id;
}

std::string FormatLayerCounts(const std::map<BackendId, unsigned int>& counts, const BackendIdVector& order) {
    std::string text;
    std::set<BackendId> done;
    auto append = [&](const BackendId& id, unsigned int count) {
        text += (text.empty() ? "" : ", ") + std::to_string(count) + " on " + id.Get();
        done.insert(id);
    };
    for (const BackendId& id : order) {
        if (auto it = counts.find(id); it != counts.end() && it->second != 0) {
            append(id, it->second);
        }
    }
    for (const auto& [id, count] : counts) {
        if (!done.count(id) && count != 0) {
            append(id, count);
        }
    }
    return text.empty() ? "0" : text;
}

std::string FormatMs(double ms) {
    // Three decimals hide sub-microsecond runs (tiny models), so keep four significant digits there.
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), ms >= 1.0 ? "%.3f" : "%.4g", ms);
    return buffer;
}

int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double MsSince(int64_t startNs) {
    return static_cast<double>(NowNs() - startNs) / 1.0e6;
}

std::string JsonString(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buffer[8];
            std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
            out += buffer;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string JsonNumber(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.6f", value);
    return buffer;
}

std::string FoldLines(const std::string& message) {
    std::string line;
    bool atLineStart = false;
    for (char c : message) {
        if (c == '\n' || c == '\r') {
            atLineStart = true;
            continue;
        }
        if (atLineStart && (c == ' ' || c == '\t')) {
            continue;
        }
        if (atLineStart && !line.empty()) {
            while (!line.empty() && line.back() == ' ') {
                line.pop_back();
            }
            line += line.empty() || line.back() == ':' || line.back() == ';' ? " " : "; ";
        }
        atLineStart = false;
        line += c;
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == ';')) {
        line.pop_back();
    }
    return line;
}

std::string RegisteredBackendsLine() {
    return "Registered backends: " + BackendRegistryInstance().GetBackendIdsAsString() + "\n";
}

}  // namespace trellis::cli
