// trellis CLI: the parse -> optimize -> load pipeline every command shares.
//
// Contract: PrepareModel() creates the runtime (which loads dynamic backends), checks every
// requested backend against the registry, parses the model and optimizes it. Every failure throws
// (trellis::Exception from the library, UsageError for bad options); nothing here prints except
// through the streams handed in. Uses only the public API.
#pragma once

#include "Args.hpp"

#include <trellis/OnnxParser.hpp>
#include <trellis/Trellis.hpp>

#include <map>
#include <string>
#include <vector>

/// The help of the options several commands share, one string-literal macro each so every
/// command's help stays one literal.
#define TRELLIS_CLI_BACKENDS_HELP \
    "  --backends LIST        Comma-separated backend ids in order of preference\n" \
    "                         (default: CpuAcc,CpuRef where CpuAcc is built in,\n" \
    "                         otherwise CpuRef).\n"
#define TRELLIS_CLI_SHAPE_HELP \
    "  --shape NAME=AxBxC     Pin the shape of graph input NAME (needed where the\n" \
    "                         model's dims are symbolic). Repeatable.\n"
#define TRELLIS_CLI_RESOURCE_LIMITS_HELP \
    "  --max-tensor-bytes N   Refuse the model if any tensor would hold more than N\n" \
    "                         bytes (K, M, G, T suffixes: powers of 1024; default\n" \
    "                         and 0: the machine's physical memory).\n" \
    "  --max-working-memory N Refuse the model if one run needs more than N bytes of\n" \
    "                         working memory (intermediate tensors and scratch;\n" \
    "                         suffixes and default as above).\n"
#define TRELLIS_CLI_THREADS_HELP \
    "  --threads N            Passed to every requested backend as backend option\n" \
    "                         NumThreads (default: 0, the backend's default: all\n" \
    "                         cores for CpuAcc). Single-threaded backends (CpuRef\n" \
    "                         is one) ignore it.\n"
#define TRELLIS_CLI_BACKEND_OPTION_HELP \
    "  --backend-option BACKEND:NAME=VALUE\n" \
    "                         Backend option for BACKEND (e.g.\n" \
    "                         CpuAcc:FastMath=bf16). Repeatable.\n"
#define TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP                                                   \
    "  --dynamic-backends-path DIR\n"                                                            \
    "                         Load dynamic backends from DIR instead of the default\n"            \
    "                         paths (DYNAMIC_BACKEND_PATHS, then the installed folder\n"          \
    "                         <libdir>/trellis/backends where it exists).\n"

namespace trellis::cli {

/// The backends run, bench and inspect use when --backends is not given: CpuAcc first where it is
/// built in and the CPU supports it (CpuRef runs what it declines), otherwise CpuRef alone.
BackendIdVector DefaultBackends();
/// onnx-test's default: conformance is measured on the reference backend.
inline constexpr const char* kConformanceBackends = "CpuRef";

/// Options --backends, --shape, --dynamic-backends-path, --max-tensor-bytes and
/// --max-working-memory (run, bench, inspect and compare take them).
std::vector<OptionSpec> ModelOptionSpecs();
/// Options --threads and --backend-option (run, bench and compare take them).
std::vector<OptionSpec> BackendTuningOptionSpecs();

struct ModelOptions {
    std::string m_ModelPath;
    BackendIdVector m_Backends;
    std::map<std::string, TensorShape> m_InputShapes;
    std::string m_DynamicBackendsPath;
    /// Passed as backend option NumThreads to every requested backend; 0 = do not pass it.
    unsigned int m_NumThreads = 0;
    /// --backend-option BACKEND:NAME=VALUE, repeatable (after NumThreads, so it can override it).
    std::map<BackendId, std::map<std::string, std::string>> m_BackendOptions;
    /// Record a timeline of every run (IRuntime ProfilingOptions::m_RecordTimeline).
    bool m_RecordTimeline = false;
    /// --max-tensor-bytes / --max-working-memory: OptimizerOptions' resource limits (0 = the
    /// library's default, the machine's physical memory).
    std::size_t m_MaxTensorBytes = 0;
    std::size_t m_MaxWorkingMemoryBytes = 0;
};

/// Reads the options named by ModelOptionSpecs() plus the MODEL positional.
ModelOptions ReadModelOptions(const ParsedArgs& args, const std::string& command);

/// --seed N: default 0, at most 2^32-1 (std::mt19937's seed range).
uint32_t ReadSeed(const ParsedArgs& args);
/// --dynamic-backends-path, validated ("" when not given).
std::string ReadDynamicBackendsPath(const ParsedArgs& args);
/// A runtime loading the dynamic backends --dynamic-backends-path names (the built-in paths
/// otherwise), for commands that need no model.
IRuntimePtr CreateRuntime(const ParsedArgs& args);
/// The options of BackendTuningOptionSpecs() into `options`: --threads N (default 0, the
/// backend's default: all cores for CpuAcc; at most 1024), then --backend-option
/// BACKEND:NAME=VALUE (repeatable; usage errors name the bad one).
void ReadBackendTuning(const ParsedArgs& args, ModelOptions& options);

/// UsageError naming the first id in `backends` that is not registered (call it after creating
/// the runtime, which registers the dynamic backends).
void CheckBackendsRegistered(const BackendIdVector& backends, const IRuntime& runtime);

struct PreparedModel {
    ModelOptions m_Options;
    IRuntimePtr m_Runtime{nullptr, &IRuntime::Destroy};
    /// The parsed network (kept for commands that optimize it again, such as compare).
    INetworkPtr m_Network{nullptr, &INetwork::Destroy};
    std::vector<BindingPointInfo> m_Inputs;   ///< graph order, from the parser
    std::vector<BindingPointInfo> m_Outputs;  ///< graph order; declared infos (may be incomplete)
    int64_t m_Opset = 0;
    /// Null once LoadPrepared() has handed it to the runtime.
    IOptimizedNetworkPtr m_Optimized{nullptr, &IOptimizedNetwork::Destroy};
    /// Backend option warnings of the runtime, then the optimizer's messages (warnings).
    std::vector<std::string> m_Warnings;
    /// Captured before loading, since LoadNetwork takes the optimized network.
    std::map<BackendId, unsigned int> m_LayerCounts;
    double m_ParseMs = 0.0;     ///< wall time of parsing the ONNX file into a network
    double m_OptimizeMs = 0.0;  ///< wall time of Optimize() (graph passes, folding, placement, sub-graphs)
};

PreparedModel PrepareModel(const ModelOptions& options);

/// Loads the optimized network into the runtime; `loadMs` gets the LoadNetwork() wall time.
NetworkId LoadPrepared(PreparedModel& model, double& loadMs);

/// "52 on CpuRef" / "40 on CpuAcc, 12 on CpuRef": requested backends first, in preference order.
std::string FormatLayerCounts(const std::map<BackendId, unsigned int>& counts, const BackendIdVector& order);

/// Milliseconds: "12.345" (three decimals) from 1 ms up, four significant digits below ("0.01265").
std::string FormatMs(double ms);

/// A steady_clock reading in nanoseconds, and the milliseconds elapsed since one.
int64_t NowNs();
double MsSince(int64_t startNs);

/// `text` as a JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonString(const std::string& text);
/// A JSON number with six decimals ("12.345000").
std::string JsonNumber(double value);

/// Library messages may span several lines (a list of unsupported layers, indented); reports are
/// one line each, so fold them: "a:\n  b\n  c" -> "a: b; c". Trailing spaces and ';' go.
std::string FoldLines(const std::string& message);

/// The text printed by `--help` after each command's own help: the backends registered now.
std::string RegisteredBackendsLine();

}  // namespace trellis::cli
