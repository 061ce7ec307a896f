// `trellis bench`: latency of repeated EnqueueWorkload() calls on seeded random inputs.
#include "Commands.hpp"
#include "Common.hpp"
#include "Tensors.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

namespace trellis::cli {

std::string BenchHelp() {
    return std::string() +
           "Usage: trellis bench MODEL [options]\n"
           "\n"
           "Load a model once, run it W times to warm up, then time K runs of\n"
           "EnqueueWorkload on seeded random inputs and report the latency.\n"
           "\n"
           "Options:\n"
           TRELLIS_CLI_BACKENDS_HELP
           TRELLIS_CLI_THREADS_HELP
           TRELLIS_CLI_BACKEND_OPTION_HELP
           "  --warmup W             Untimed runs before timing (default: 5; 0 allowed).\n"
           "  --iterations K         Timed runs (default: 50; at least 1).\n"
           TRELLIS_CLI_SHAPE_HELP
           "  --seed N               Seed of the random input data (default: 0).\n"
           "  --json                 Print exactly one JSON object on stdout and nothing\n"
           "                         else (optimizer warnings go to stderr).\n"
           "  --profile FILE         Record every timed run's per-layer times (and the\n"
           "                         steps backends report inside fused regions) and\n"
           "                         write them to FILE as a Chrome trace (JSON, for\n"
           "                         chrome://tracing or ui.perfetto.dev); print the time\n"
           "                         per run by op and backend, and the slowest layers.\n"
           "                         Timing each layer adds a little to the latency.\n"
           TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP
           TRELLIS_CLI_RESOURCE_LIMITS_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "Reports min, median, p90 (nearest rank) and mean latency in ms over the K timed\n"
           "runs, the parse, Optimize and LoadNetwork times, the peak working memory of one\n"
           "run in bytes and the layers per backend. JSON keys: model, backends, threads,\n"
           "warmup, iterations, min_ms, median_ms, p90_ms, mean_ms, parse_ms, optimize_ms,\n"
           "load_ms, peak_working_memory_bytes, layers_per_backend (and profile_file with\n"
           "--profile).\n";
}

namespace {

// Bounds the sample vector (8 bytes a run) as well as the wait.
constexpr uint64_t kMaxRuns = 1000000;

std::vector<OptionSpec> BenchOptionSpecs() {
    std::vector<OptionSpec> specs = ModelOptionSpecs();
    for (const OptionSpec& spec : BackendTuningOptionSpecs()) specs.push_back(spec);
    specs.push_back({"warmup", true, false});
    specs.push_back({"iterations", true, false});
    specs.push_back({"seed", true, false});
    specs.push_back({"json", false, false});
    specs.push_back({"profile", true, false});
    return specs;
}

struct LatencyStats {
    double m_Min = 0.0;
    double m_Median = 0.0;
    double m_P90 = 0.0;
    double m_Mean = 0.0;
};

/// Writes `events` as a Chrome trace (trace event format, complete "X" events; microseconds from
/// the first event; one track per calling thread; a backend's events nest inside their workload's).
void WriteChromeTrace(const std::string& path, const std::vector<TimelineEvent>& events) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw RuntimeException("cannot write the profile '" + path + "' (--profile)");
    uint64_t origin = UINT64_MAX;
    for (const TimelineEvent& e : events) origin = std::min(origin, e.m_StartNs);
    std::map<uint64_t, int> tids;
    std::string text = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
    for (std::size_t i = 0; i < events.size(); ++i) {
        const TimelineEvent& e = events[i];
        const int tid = tids.emplace(e.m_Thread, static_cast<int>(tids.size())).first->second;
        char times[96];
        std::snprintf(times, sizeof(times), "\"ts\": %.3f, \"dur\": %.3f", static_cast<double>(e.m_StartNs - origin) / 1e3,
                      static_cast<double>(e.m_DurationNs) / 1e3);
        text += "{\"name\": " + JsonString(e.m_Name) + ", \"cat\": " + JsonString(e.m_Category) + ", \"ph\": \"X\", " + times +
                ", \"pid\": 1, \"tid\": " + std::to_string(tid) + ", \"args\": {\"backend\": " +
                JsonString(e.m_Backend.Get()) +
                (e.m_Parent.empty() ? std::string() : ", \"layer\": " + JsonString(e.m_Parent)) + "}}" +
                (i + 1 < events.size() ? ",\n" : "\n");
    }
    text += "]}\n";
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) throw RuntimeException("writing the profile '" + path + "' failed (--profile)");
}

/// Per run: time by (op, backend) over the leaf events (a workload whose backend reported steps
/// inside it counts as those steps), and the slowest leaves.
std::string SummariseProfile(const std::vector<TimelineEvent>& events, uint64_t runs) {
    std::set<std::string> parents;
    for (const TimelineEvent& e : events) {
        if (!e.m_Parent.empty()) parents.insert(e.m_Parent);
    }
    std::map<std::pair<std::string, std::string>, std::pair<double, uint64_t>> byOp;  // (op, backend) -> (ns, count)
    std::map<std::pair<std::string, std::string>, double> byLeaf;                    // (name, op) -> ns
    double total = 0.0;
    for (const TimelineEvent& e : events) {
        if (e.m_Parent.empty() && parents.count(e.m_Name)) continue;
        auto& [ns, count] = byOp[{e.m_Category, e.m_Backend.Get()}];
        ns += static_cast<double>(e.m_DurationNs);
        ++count;
        byLeaf[{e.m_Name, e.m_Category}] += static_cast<double>(e.m_DurationNs);
        total += static_cast<double>(e.m_DurationNs);
    }
    const double perRun = static_cast<double>(runs);
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [key, value] : byOp) {
        char line[256];
        std::snprintf(line, sizeof(line), "  %-28s %-8s %10.3f ms %6.1f%% %8.1f\n", key.first.c_str(), key.second.c_str(),
                      value.first / 1e6 / perRun, total > 0 ? 100.0 * value.first / total : 0.0,
                      static_cast<double>(value.second) / perRun);
        rows.emplace_back(value.first, line);
    }
    std::sort(rows.rbegin(), rows.rend());
    std::string text = "profile: time per run by op and backend (" + std::to_string(runs) + " runs)\n";
    text += "  op                           backend        time    share    count\n";
    for (const auto& r : rows) text += r.second;
    std::vector<std::pair<double, std::string>> leaves;
    for (const auto& [key, ns] : byLeaf) leaves.emplace_back(ns, key.first + " (" + key.second + ")");
    std::sort(leaves.rbegin(), leaves.rend());
    text += "profile: slowest layers and steps, per run\n";
    for (std::size_t i = 0; i < leaves.size() && i < 10; ++i) {
        char line[64];
        std::snprintf(line, sizeof(line), "  %10.3f ms  ", leaves[i].first / 1e6 / perRun);
        text += line + leaves[i].second + "\n";
    }
    return text;
}

LatencyStats ComputeStats(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    LatencyStats stats;
    stats.m_Min = samples.front();
    stats.m_Median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
    // Nearest rank: the smallest sample with at least 90% of the samples at or below it.
    const std::size_t rank = (9 * n + 9) / 10;  // ceil(0.9 * n), n >= 1
    stats.m_P90 = samples[rank - 1];
    stats.m_Mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
    return stats;
}

}  // namespace

int BenchCommand(const std::vector<std::string>& args) {
    const ParsedArgs parsed = ParseArgs(args, BenchOptionSpecs(), "bench");
    if (parsed.m_Help) {
        std::cout << BenchHelp() << RegisteredBackendsLine();
        return 0;
    }
    ModelOptions options = ReadModelOptions(parsed, "bench");
    ReadBackendTuning(parsed, options);
    const uint32_t seed = ReadSeed(parsed);
    const uint64_t warmup = ParseUnsigned(parsed.Get("warmup").value_or("5"), "warmup", 0, kMaxRuns);
    const uint64_t iterations = ParseUnsigned(parsed.Get("iterations").value_or("50"), "iterations", 1, kMaxRuns);
    const bool json = parsed.Has("json");
    const std::string profile = parsed.Get("profile").value_or("");
    if (parsed.Has("profile") && profile.empty()) throw UsageError("option '--profile' expects a file name, got ''");
    options.m_RecordTimeline = !profile.empty();

    PreparedModel model = PrepareModel(options);
    std::ostream& warningStream = json ? std::cerr : std::cout;
    for (const std::string& warning : model.m_Warnings) {
        warningStream << "warning: " << warning << "\n";
    }
    double loadMs = 0.0;
    const NetworkId id = LoadPrepared(model, loadMs);
    IRuntime& runtime = *model.m_Runtime;

    const std::vector<OwnedTensor> inputs = MakeRandomInputs(runtime, id, model.m_Inputs, seed);
    const InputTensors boundInputs = BindInputs(model.m_Inputs, inputs);
    std::vector<OwnedTensor> outputs = MakeOutputBuffers(runtime, id, model.m_Outputs, boundInputs);
    const OutputTensors boundOutputs = BindOutputs(model.m_Outputs, outputs);

    std::vector<double> samples;
    samples.reserve(iterations);
    for (uint64_t i = 0; i < warmup + iterations; ++i) {
        const int64_t start = NowNs();
        const Status status = runtime.EnqueueWorkload(id, boundInputs, boundOutputs);
        const double ms = MsSince(start);
        if (status != Status::Success) {
            throw RuntimeException("running '" + options.m_ModelPath + "' failed on run " + std::to_string(i + 1) +
                                   " (EnqueueWorkload returned Failure)");
        }
        if (i >= warmup) {
            samples.push_back(ms);
        } else if (i + 1 == warmup && options.m_RecordTimeline) {
            (void)runtime.TakeTimeline(id);  // the profile holds the timed runs only
        }
    }
    std::string profileSummary;
    if (options.m_RecordTimeline) {
        const std::vector<TimelineEvent> events = runtime.TakeTimeline(id);
        WriteChromeTrace(profile, events);
        profileSummary = SummariseProfile(events, iterations);
    }
    const LatencyStats stats = ComputeStats(samples);
    const std::size_t peakBytes = runtime.GetPeakWorkingMemoryBytes(id);

    if (json) {
        std::string backends;
        for (const BackendId& b : options.m_Backends) {
            backends += (backends.empty() ? "" : ", ") + JsonString(b.Get());
        }
        std::string layers;
        for (const auto& [backend, count] : model.m_LayerCounts) {
            layers += (layers.empty() ? "" : ", ") + JsonString(backend.Get()) + ": " + std::to_string(count);
        }
        std::cout << "{\"model\": " << JsonString(options.m_ModelPath) << ", \"backends\": [" << backends
                  << "], \"threads\": " << options.m_NumThreads << ", \"warmup\": " << warmup
                  << ", \"iterations\": " << iterations << ", \"min_ms\": " << JsonNumber(stats.m_Min)
                  << ", \"median_ms\": " << JsonNumber(stats.m_Median) << ", \"p90_ms\": " << JsonNumber(stats.m_P90)
                  << ", \"mean_ms\": " << JsonNumber(stats.m_Mean) << ", \"parse_ms\": " << JsonNumber(model.m_ParseMs)
                  << ", \"optimize_ms\": " << JsonNumber(model.m_OptimizeMs) << ", \"load_ms\": " << JsonNumber(loadMs)
                  << ", \"peak_working_memory_bytes\": " << peakBytes << ", \"layers_per_backend\": {" << layers << "}"
                  << (profile.empty() ? std::string() : ", \"profile_file\": " + JsonString(profile)) << "}\n";
        return 0;
    }
    std::string backendList;
    for (const BackendId& b : options.m_Backends) {
        backendList += (backendList.empty() ? "" : ",") + b.Get();
    }
    std::cout << "model: " << options.m_ModelPath << "\n"
              << "backends: " << backendList << " (threads " << options.m_NumThreads << ")\n"
              << "layers: "
              << (runtime.IsDynamic(id) ? std::string("placed per input shape (dynamic network)")
                                        : FormatLayerCounts(model.m_LayerCounts, options.m_Backends))
              << "\n"
              << "inputs: random (seed " << seed << "): " << DescribeInputs(inputs) << "\n"
              << "parse: " << FormatMs(model.m_ParseMs) << " ms, optimize: " << FormatMs(model.m_OptimizeMs)
              << " ms, load: " << FormatMs(loadMs) << " ms\n"
              << "latency over " << iterations << " runs after " << warmup << " warm-up: min "
              << FormatMs(stats.m_Min) << " ms, median " << FormatMs(stats.m_Median) << " ms, p90 "
              << FormatMs(stats.m_P90) << " ms, mean " << FormatMs(stats.m_Mean) << " ms\n"
              << "peak working memory: " << peakBytes << " bytes\n"
              << profileSummary << (profile.empty() ? std::string() : "profile written to " + profile + "\n");
    return 0;
}

}  // namespace trellis::cli
